/*
 * efind_state.c
 *	  The shared state of each efind index: a directory in fixed shared
 *	  memory with one slot per registry slot of the foundation (locks,
 *	  counters, and a pointer to the index's EfindState in the DSA area),
 *	  creation of the state at first use, and its release when the
 *	  relfilenode goes away.
 *
 * The state belongs to one generation of a registry slot: a dropped or
 * rebuilt index gets a new generation, and efind_discard() frees what the
 * old one held.  Backends remember the state they attached per slot,
 * generation and serial number, so the hot path takes no directory lock.
 *
 * Loading an index (core/hi_index.c) starts from its last checkpoint and
 * replays the log, which rebuilds the write buffer; whatever the buffer
 * held before belongs to an earlier attempt that failed half-way (the
 * slot stays unloaded then, with the same generation).  So the first call
 * of each load -- recognised by load_lock being held by this backend, in a
 * (sub)transaction that has not started this load yet -- starts from a
 * fresh state.
 *
 * Locks: wb_lock protects the Write Buffer Table and the write queue WQ,
 * rb_lock the Read Buffer Table and the read queue RQ.  Every caller also
 * holds the index's tree_lock (shared to read pages, exclusive to change
 * them), so the write buffer only changes while no one reads pages; the
 * read buffer changes under concurrent scans and is what rb_lock is for.
 * Order: tree_lock, then wb_lock, then rb_lock; neither is held across I/O.
 */
#include "postgres.h"

#include "access/xact.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "utils/memutils.h"

#include "efind/efind.h"
#include "storage/storage.h"

typedef struct EfindDir
{
	int			tranche_id;
	int			nslots;
	LWLock		lock;			/* creation and discard of states */
	EfindSlot	slots[FLEXIBLE_ARRAY_MEMBER];
} EfindDir;

static EfindDir *dir = NULL;
static shmem_request_hook_type prev_request_hook = NULL;
static shmem_startup_hook_type prev_startup_hook = NULL;

/* per backend: the state last attached for each slot */
typedef struct EfLocal
{
	uint32		generation;
	bool		valid;
	uint64		serial;
	dsa_pointer state;
} EfLocal;

static EfLocal *local = NULL;

/* the load this backend is running: slot, generation, (sub)transaction */
static struct
{
	int			slotno;
	uint32		generation;
	LocalTransactionId lxid;
	SubTransactionId subxid;
} this_load = {-1, 0, InvalidLocalTransactionId, InvalidSubTransactionId};

static Size
dir_size(void)
{
	return add_size(offsetof(EfindDir, slots), mul_size(sizeof(EfindSlot), hi_registry_slots()));
}

static void
ef_shmem_request(void)
{
	if (prev_request_hook)
		prev_request_hook();
	RequestAddinShmemSpace(dir_size());
}

static void
reset_counters(EfCounters *c)
{
	pg_atomic_uint64 *p = (pg_atomic_uint64 *) c;
	Size		i;

	for (i = 0; i < sizeof(EfCounters) / sizeof(pg_atomic_uint64); i++)
		pg_atomic_init_u64(&p[i], 0);
}

static void
ef_shmem_startup(void)
{
	bool		found;

	if (prev_startup_hook)
		prev_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	dir = ShmemInitStruct("hybrid_index efind", dir_size(), &found);
	if (!found)
	{
		int			i;

		dir->tranche_id = hi_lwlock_new_tranche("hybrid_index efind");
		dir->nslots = hi_registry_slots();
		LWLockInitialize(&dir->lock, dir->tranche_id);
		for (i = 0; i < dir->nslots; i++)
		{
			EfindSlot  *s = &dir->slots[i];

			LWLockInitialize(&s->wb_lock, dir->tranche_id);
			LWLockInitialize(&s->rb_lock, dir->tranche_id);
			s->generation = 0;
			s->valid = false;
			s->state = InvalidDsaPointer;
			pg_atomic_init_u64(&s->serial, 0);
			reset_counters(&s->c);
		}
	}
	LWLockRelease(AddinShmemInitLock);
}

/* Called from _PG_init (through efind_init) */
void
efind_shmem_init(void)
{
	prev_request_hook = shmem_request_hook;
	shmem_request_hook = ef_shmem_request;
	prev_startup_hook = shmem_startup_hook;
	shmem_startup_hook = ef_shmem_startup;
}

/*
 * The parameters of an index: those fixed at its build (the AM blob), or,
 * for an index being built, resolved now and fixed.
 */
static void
load_config(HiIndex *idx, EfindConfig *cfg)
{
	uint32		len;
	char	   *blob = hi_am_blob_get(idx->sh, &len);

	if (blob != NULL && len == sizeof(EfindConfig))
	{
		memcpy(cfg, blob, sizeof(EfindConfig));
		pfree(blob);
		if (cfg->magic == EF_CONFIG_MAGIC && cfg->version == EF_CONFIG_VERSION)
			return;
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("efind parameters of index \"%s\" are unreadable",
						hi_index_name(idx)),
				 errhint("REINDEX the index.")));
	}
	if (blob != NULL)
		pfree(blob);
	ef_config_resolve(idx->rel, cfg);
	hi_am_blob_set(idx->sh, (const char *) cfg, sizeof(EfindConfig));
}

/* Build the state of a slot generation (directory lock held exclusively) */
static dsa_pointer
create_state(HiIndex *idx, EfindSlot *slot)
{
	dsa_area   *area = hi_dsa();
	dsa_pointer p = dsa_allocate0(area, sizeof(EfindState));
	EfindState *st = (EfindState *) dsa_get_address(area, p);
	Ef			ef;
	uint64		total;

	PG_TRY();
	{
		load_config(idx, &st->cfg);
		st->page_size = idx->page_size;
		total = (uint64) st->cfg.buffer_kb * 1024;
		st->rb_frames = (uint32) (total * st->cfg.read_share / 100 / st->page_size);
		st->write_budget = total - (uint64) st->rb_frames * st->page_size;
		st->wq.ids = st->rq.ids = st->a1out.ids = InvalidDsaPointer;
		st->wb.slots = st->rbh.slots = InvalidDsaPointer;
		st->frames = InvalidDsaPointer;
		memset(st->chunks, 0, sizeof(st->chunks));	/* InvalidDsaPointer */

		ef.idx = idx;
		ef.sh = idx->sh;
		ef.slot = slot;
		ef.st = st;
		ef.area = area;
		efh_init(area, &st->wb, 64);
		/* WQ: the pages of the last few flushing units (Alg. 4 compares with them) */
		ef_ring_init(area, &st->wq, Max(8, 4 * st->cfg.flush_unit));
		ef_rb_init(&ef);
	}
	PG_CATCH();
	{
		ef.area = area;
		ef.st = st;
		ef_rb_free(&ef);
		if (DsaPointerIsValid(st->wb.slots))
			efh_free(area, &st->wb);
		ef_ring_free(area, &st->wq);
		dsa_free(area, p);
		PG_RE_THROW();
	}
	PG_END_TRY();

	reset_counters(&slot->c);
	return p;
}

/* Free the state of a slot (directory lock held exclusively) */
static void
free_state_locked(int slotno)
{
	EfindSlot  *slot = &dir->slots[slotno];
	Ef			ef;

	ef.area = hi_dsa();
	ef.st = (EfindState *) dsa_get_address(ef.area, slot->state);
	ef.slot = slot;
	ef.idx = NULL;
	ef.sh = &hi_shared->indexes[slotno];
	ef_wb_free_all(&ef);
	efh_free(ef.area, &ef.st->wb);
	ef_ring_free(ef.area, &ef.st->wq);
	ef_rb_free(&ef);
	dsa_free(ef.area, slot->state);
	slot->state = InvalidDsaPointer;
	slot->valid = false;
}

/* Is this the first call of a load (log replay) this backend is running? */
static bool
starts_load(HiIndex *idx)
{
	if (!LWLockHeldByMeInMode(&idx->sh->load_lock, LW_EXCLUSIVE))
		return false;
	if (this_load.slotno == idx->slotno && this_load.generation == idx->generation &&
		this_load.lxid == HI_PROC_LXID(MyProc) && this_load.subxid == GetCurrentSubTransactionId())
		return false;
	this_load.slotno = idx->slotno;
	this_load.generation = idx->generation;
	this_load.lxid = HI_PROC_LXID(MyProc);
	this_load.subxid = GetCurrentSubTransactionId();
	return true;
}

/* Attach to the efind state of an open index, creating it at first use */
void
ef_get(HiIndex *idx, Ef *ef)
{
	EfindSlot  *slot;
	EfLocal    *l;
	bool		fresh;

	if (dir == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("hybrid_index must be loaded via shared_preload_libraries")));
	if (local == NULL)
		local = MemoryContextAllocZero(TopMemoryContext, sizeof(EfLocal) * dir->nslots);

	slot = &dir->slots[idx->slotno];
	l = &local[idx->slotno];
	ef->idx = idx;
	ef->sh = idx->sh;
	ef->slot = slot;
	ef->area = hi_dsa();
	fresh = starts_load(idx);
	if (fresh || !(l->valid && l->generation == idx->generation &&
				   l->serial == pg_atomic_read_u64(&slot->serial)))
	{
		hi_lwlock_name_tranche(dir->tranche_id, "hybrid_index efind");
		LWLockAcquire(&dir->lock, LW_EXCLUSIVE);
		PG_TRY();
		{
			if (fresh || !(slot->valid && slot->generation == idx->generation))
			{
				if (slot->valid)
					free_state_locked(idx->slotno);
				slot->state = create_state(idx, slot);
				slot->generation = idx->generation;
				slot->valid = true;
				pg_atomic_fetch_add_u64(&slot->serial, 1);
			}
		}
		PG_FINALLY();
		{
			hi_lwlock_release_cleanup(&dir->lock);
		}
		PG_END_TRY();
		l->state = slot->state;
		l->generation = idx->generation;
		l->serial = pg_atomic_read_u64(&slot->serial);
		l->valid = true;
		ef->st = (EfindState *) dsa_get_address(ef->area, l->state);
		/* the compaction threshold of eFIND's log (section 4.6) */
		idx->sh->checkpoint_log_kb = ef->st->cfg.log_kb;
		return;
	}
	ef->st = (EfindState *) dsa_get_address(ef->area, l->state);
}

/*
 * The relfilenode of a slot generation is gone (dropped, rebuilt): free
 * its write buffer, read buffer and queues without writing anything.
 */
void
efind_discard(int slotno, uint32 generation)
{
	EfindSlot  *slot;

	if (dir == NULL || slotno < 0 || slotno >= dir->nslots)
		return;
	slot = &dir->slots[slotno];
	hi_lwlock_name_tranche(dir->tranche_id, "hybrid_index efind");
	LWLockAcquire(&dir->lock, LW_EXCLUSIVE);
	if (slot->valid && slot->generation == generation)
		free_state_locked(slotno);
	LWLockRelease(&dir->lock);
	if (local != NULL && local[slotno].generation == generation)
		local[slotno].valid = false;
}
