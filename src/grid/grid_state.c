/*
 * grid_state.c
 *	  Shared state of grid indexes: a registry (one entry per index slot)
 *	  pointing at each index's GridShared in the DSA area, its creation from
 *	  the AM blob of the last checkpoint, the blob written at checkpoints,
 *	  logical page allocation, the root directory, and redo.
 *
 * Durability (see log/redo_log.c).  Every insert and delete is a logical
 * redo record.  A checkpoint writes every dirty buffer page (copy-on-write:
 * the previous checkpoint's versions stay intact until the map file is
 * replaced) and then the blob: root directory, free page ids, special
 * chains, counters and the store's own state (LB-Grid: BTT and log-bucket
 * table).  After a crash the index is rebuilt from map file + blob and the
 * log is replayed through grid_redo.  The state remembers the log position
 * it reflects (applied_lsn); a replay that meets an older record knows the
 * state was left by a replay that failed half-way and restarts from the
 * blob.
 */
#include "postgres.h"

#include "access/xact.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/shmem.h"
#include "utils/memutils.h"

#include "cache/page_cache.h"
#include "payload/payload.h"
#include "grid/grid.h"
#include "storage/storage.h"
#include "log/redo_log.h"

typedef struct GridSlot
{
	bool		valid;
	uint32		generation;
	dsa_pointer gs;
} GridSlot;

typedef struct GridRegistry
{
	int			nslots;
	uint64		next_epoch;		/* GridShared.epoch of the next state */
	GridSlot	slots[FLEXIBLE_ARRAY_MEMBER];
} GridRegistry;

typedef struct GridBlobHdr
{
	uint32		magic;
	uint32		version;
	int32		mode;
	int32		capacity;
	uint32		page_size;
	uint32		nulls;
	uint32		odd;
	uint32		root_len;
	uint32		nfree;
	uint32		ext_len;
	GridCounters cnt;
} GridBlobHdr;

#define GRID_BLOB_MAGIC		0x47424C42	/* "GBLB" */
#define GRID_BLOB_VERSION	1

static GridRegistry *registry = NULL;
static LWLock *registry_lock = NULL;
static bool shmem_hooked = false;
static shmem_request_hook_type prev_request = NULL;
static shmem_startup_hook_type prev_startup = NULL;

static const GridStoreOps *stores[GRID_NUM_MODES];
static GridSettingsFn settings_fns[8];
static GridAccessFn access_fns[8];
static GridAmExtFreeFn am_free_fns[8];
static GridPageFreedFn freed_fns[8];

static Size
registry_size(void)
{
	return add_size(offsetof(GridRegistry, slots),
					mul_size(sizeof(GridSlot), hi_registry_slots()));
}

static void
grid_shmem_request(void)
{
	if (prev_request)
		prev_request();
	RequestAddinShmemSpace(registry_size());
	RequestNamedLWLockTranche("hybrid_index_grid", 1);
}

static void
grid_shmem_startup(void)
{
	bool		found;

	if (prev_startup)
		prev_startup();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	registry = ShmemInitStruct("hybrid_index grid registry", registry_size(), &found);
	if (!found)
	{
		memset(registry, 0, registry_size());
		registry->nslots = hi_registry_slots();
	}
	registry_lock = &(GetNamedLWLockTranche("hybrid_index_grid"))->lock;
	LWLockRelease(AddinShmemInitLock);
}

static void
grid_xact_callback(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT)
		gbuf_release_pins();
}

static void
grid_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
					  SubTransactionId parentSubid, void *arg)
{
	if (event == SUBXACT_EVENT_ABORT_SUB)
		gbuf_release_pins();
}

/* From _PG_init of every grid AM; the first call installs the hooks */
void
grid_shmem_init(void)
{
	if (shmem_hooked)
		return;
	shmem_hooked = true;
	prev_request = shmem_request_hook;
	shmem_request_hook = grid_shmem_request;
	prev_startup = shmem_startup_hook;
	shmem_startup_hook = grid_shmem_startup;
	RegisterXactCallback(grid_xact_callback, NULL);
	RegisterSubXactCallback(grid_subxact_callback, NULL);
	grid_register_store(GRID_MODE_GFFM, &grid_chain_ops);
}

void
grid_register_store(int mode, const GridStoreOps *ops)
{
	Assert(mode >= 0 && mode < GRID_NUM_MODES);
	stores[mode] = ops;
}

void
grid_register_am(HiAmKind kind, GridSettingsFn settings, GridAccessFn access,
				 GridAmExtFreeFn free_ext, GridPageFreedFn freed)
{
	Assert(kind < lengthof(settings_fns));
	settings_fns[kind] = settings;
	access_fns[kind] = access;
	am_free_fns[kind] = free_ext;
	freed_fns[kind] = freed;
}

/* Pages a buffer handed out, for the AM's access statistics (if any) */
void
grid_note_access(Grid *g, int which, const uint32 *pagenos, const int *frames, int n)
{
	uint32		kind = g->sh->meta.am;

	if (kind < lengthof(access_fns) && access_fns[kind] != NULL)
		access_fns[kind] (g, which, pagenos, frames, n);
}

static GridSettingsFn
settings_of(HiIndex *idx)
{
	uint32		kind = idx->sh->meta.am;

	if (kind >= lengthof(settings_fns) || settings_fns[kind] == NULL)
		elog(ERROR, "index \"%s\" is not a grid index", hi_index_name(idx));
	return settings_fns[kind];
}

char *
grid_data_ptr(dsa_pointer p)
{
	return (char *) dsa_get_address(hi_dsa(), p);
}

/* GridShared of a slot if it is still the given generation, else NULL */
GridShared *
grid_lookup_shared(int slotno, uint32 generation)
{
	GridShared *gs = NULL;

	if (registry == NULL || slotno < 0 || slotno >= registry->nslots)
		return NULL;
	LWLockAcquire(registry_lock, LW_SHARED);
	if (registry->slots[slotno].valid && registry->slots[slotno].generation == generation)
		gs = (GridShared *) grid_data_ptr(registry->slots[slotno].gs);
	LWLockRelease(registry_lock);
	return gs;
}

/*
 * fn on the state of (slotno, generation) if there is one, with
 * registry_lock held shared: nobody frees it meanwhile.
 */
void
grid_with_state(int slotno, uint32 generation, void (*fn) (GridShared *gs, void *arg),
				void *arg)
{
	if (registry == NULL || slotno < 0 || slotno >= registry->nslots)
		return;
	LWLockAcquire(registry_lock, LW_SHARED);
	if (registry->slots[slotno].valid && registry->slots[slotno].generation == generation)
		fn((GridShared *) grid_data_ptr(registry->slots[slotno].gs), arg);
	LWLockRelease(registry_lock);
}

static void
free_state(GridShared *gs, dsa_pointer p)
{
	dsa_area   *area = hi_dsa();

	if (stores[gs->mode] && stores[gs->mode]->free_ext)
		stores[gs->mode]->free_ext(gs);
	if (DsaPointerIsValid(gs->am_ext) && gs->am_kind < lengthof(am_free_fns) &&
		am_free_fns[gs->am_kind] != NULL)
		am_free_fns[gs->am_kind] (gs->am_ext);
	gbuf_free(gs, GRID_BUF_DIR);
	gbuf_free(gs, GRID_BUF_BUCKET);
	if (DsaPointerIsValid(gs->root))
		dsa_free(area, gs->root);
	if (DsaPointerIsValid(gs->free_pages))
		dsa_free(area, gs->free_pages);
	dsa_free(area, p);
}

/* HiAmOps.discard: the relfilenode of a slot is gone or rebuilt */
void
grid_discard(int slotno, uint32 generation)
{
	GridSlot   *s;

	if (registry == NULL)
		return;
	LWLockAcquire(registry_lock, LW_EXCLUSIVE);
	s = &registry->slots[slotno];
	if (s->valid && s->generation == generation)
	{
		free_state((GridShared *) grid_data_ptr(s->gs), s->gs);
		s->valid = false;
	}
	LWLockRelease(registry_lock);
}

static Grid *
make_handle(HiIndex *idx, GridShared *gs, const GridSettings *set)
{
	Grid	   *g = palloc0(sizeof(Grid));

	g->idx = idx;
	g->sh = idx->sh;
	g->gs = gs;
	g->store = stores[gs->mode];
	g->merge_pct = set->merge_pct;
	g->batch_pages = set->batch_pages;
	g->knn_prefetch = set->knn_prefetch;
	g->compact_pct = set->compact_pct;
	g->max_list = set->max_list;
	if (g->store == NULL)
		elog(ERROR, "grid storage mode %d is not available", gs->mode);
	return g;
}

/*
 * A fresh GridShared with empty buffers sized by the settings.  npages: the
 * pages of an index being loaded, 0 for a build.  An index without a
 * buffer_size of its own has no buffers: it pins the shared page cache's
 * frames directly (grid_buffer_cache.c), and the sizes (at most twice its
 * pages, 64 at least) only bound its batches.  With buffer_size (the
 * thesis' memory model) the buffers are allocated and sized exactly.
 */
static dsa_pointer
new_state(HiIndex *idx, const GridSettings *set, int mode, int capacity,
		  uint32 npages, Grid **gp)
{
	dsa_pointer p = dsa_allocate0(hi_dsa(), sizeof(GridShared));
	GridShared *gs = (GridShared *) grid_data_ptr(p);
	uint32		psize = idx->sh->meta.page_size;
	int			total = (int) Max(16, (int64) set->buffer_kb * 1024 / psize);
	int			dir_hot;
	int			bucket_hot;
	Grid	   *g;

	if (npages > 0 && idx->sh->budget_frames == 0)
		total = (int) Min((int64) total, Max(64, (int64) npages * 2));
	dir_hot = Max(8, total * set->dir_pct / 100);
	bucket_hot = Max(8, total - dir_hot);

	gs->magic = GRID_SHARED_MAGIC;
	gs->epoch = ++registry->next_epoch;	/* registry_lock is held */
	gs->mode = mode;
	gs->page_size = psize;
	gs->capacity = capacity;
	gs->root = InvalidDsaPointer;
	gs->free_pages = InvalidDsaPointer;
	gs->ext = InvalidDsaPointer;
	gs->am_kind = idx->sh->meta.am;
	gs->am_ext = InvalidDsaPointer;
	gs->nulls = gs->odd = HI_INVALID_PAGE;
	gs->applied_lsn = idx->sh->meta.ckpt_lsn;
	LWLockInitialize(&gs->buf_lock, hi_shared->tranche_id);
	gs->direct = idx->sh->budget_frames == 0;
	g = make_handle(idx, gs, set);
	gbuf_init(g, GRID_BUF_DIR, dir_hot, set->cold_pages);
	gbuf_init(g, GRID_BUF_BUCKET, bucket_hot, set->cold_pages);
	*gp = g;
	return p;
}

/* Rebuild the state of an index from the blob of its last checkpoint */
static void
load_blob(Grid *g)
{
	HiIndexShared *sh = g->sh;
	GridShared *gs = g->gs;
	uint32		len;
	char	   *blob = hi_am_blob_get(sh, &len);
	GridBlobHdr *h = (GridBlobHdr *) blob;
	char	   *p;

	if (blob == NULL || len < sizeof(GridBlobHdr) || h->magic != GRID_BLOB_MAGIC ||
		h->version != GRID_BLOB_VERSION ||
		len != sizeof(GridBlobHdr) + h->root_len + sizeof(uint32) * h->nfree + h->ext_len)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("grid state of index \"%s\" is missing or corrupted",
						hi_index_name(g->idx)),
				 errhint("REINDEX the index.")));
	p = blob + sizeof(GridBlobHdr);
	gs->root = dsa_allocate_extended(hi_dsa(), h->root_len, DSA_ALLOC_HUGE);
	gs->root_len = h->root_len;
	memcpy(grid_data_ptr(gs->root), p, h->root_len);
	p += h->root_len;
	gs->free_cap = Max(h->nfree, 64);
	gs->free_pages = dsa_allocate_extended(hi_dsa(), sizeof(uint32) * gs->free_cap, DSA_ALLOC_HUGE);
	gs->nfree = h->nfree;
	memcpy(grid_data_ptr(gs->free_pages), p, sizeof(uint32) * h->nfree);
	p += sizeof(uint32) * h->nfree;
	gs->nulls = h->nulls;
	gs->odd = h->odd;
	gs->cnt = h->cnt;
	if (g->store->load_ext)
		g->store->load_ext(g, p, h->ext_len);
	pfree(blob);
}

/*
 * The index's grid for this operation.  The caller holds tree_lock (the
 * blob may only be read while no checkpoint replaces it).
 */
Grid *
grid_open(HiIndex *idx)
{
	GridSettings set;
	GridSlot   *s;
	Grid	   *g;
	dsa_pointer p;
	uint32		len;
	char	   *blob;

	settings_of(idx) (idx->rel, &set);
	LWLockAcquire(registry_lock, LW_SHARED);
	s = &registry->slots[idx->slotno];
	if (s->valid && s->generation == idx->generation)
	{
		g = make_handle(idx, (GridShared *) grid_data_ptr(s->gs), &set);
		LWLockRelease(registry_lock);
		return g;
	}
	LWLockRelease(registry_lock);

	LWLockAcquire(registry_lock, LW_EXCLUSIVE);
	PG_TRY();
	{
		s = &registry->slots[idx->slotno];
		if (s->valid && s->generation == idx->generation)
			g = make_handle(idx, (GridShared *) grid_data_ptr(s->gs), &set);
		else
		{
			GridBlobHdr *h;

			if (s->valid)
				free_state((GridShared *) grid_data_ptr(s->gs), s->gs);
			s->valid = false;
			blob = hi_am_blob_get(idx->sh, &len);
			if (blob == NULL || len < sizeof(GridBlobHdr))
				ereport(ERROR,
						(errcode(ERRCODE_INDEX_CORRUPTED),
						 errmsg("grid state of index \"%s\" is missing",
								hi_index_name(idx)),
						 errhint("REINDEX the index.")));
			h = (GridBlobHdr *) blob;
			p = new_state(idx, &set, h->mode, h->capacity, idx->sh->meta.npages, &g);
			pfree(blob);
			HI_TRY_INNER();
			{
				load_blob(g);
			}
			HI_CATCH_INNER();
			{
				free_state(g->gs, p);
				PG_RE_THROW();
			}
			HI_END_TRY_INNER();
			s->gs = p;
			s->generation = idx->generation;
			s->valid = true;
		}
	}
	PG_FINALLY();
	{
		hi_lwlock_release_cleanup(registry_lock);
	}
	PG_END_TRY();
	return g;
}

/* ambuild: a new, empty state for the index (the build fills it) */
Grid *
grid_create(HiIndex *idx)
{
	GridSettings set;
	GridSlot   *s;
	Grid	   *g;
	dsa_pointer p;
	int			cap;

	settings_of(idx) (idx->rel, &set);
	/* a bucket never holds more than one page of entries (records) */
	cap = stores[set.mode]->capacity(idx->sh->meta.page_size);
	if (set.capacity > 0)
		cap = Min(cap, set.capacity);
	LWLockAcquire(registry_lock, LW_EXCLUSIVE);
	s = &registry->slots[idx->slotno];
	if (s->valid)
		free_state((GridShared *) grid_data_ptr(s->gs), s->gs);
	s->valid = false;
	PG_TRY();
	{
		p = new_state(idx, &set, set.mode, Max(cap, 2), 0, &g);
		g->gs->free_cap = 64;
		g->gs->free_pages = dsa_allocate(hi_dsa(), sizeof(uint32) * g->gs->free_cap);
		if (g->store->init_ext)
			g->store->init_ext(g);
		s->gs = p;
		s->generation = idx->generation;
		s->valid = true;
	}
	PG_FINALLY();
	{
		hi_lwlock_release_cleanup(registry_lock);
	}
	PG_END_TRY();
	return g;
}

/* The state as a blob for the map file (caller holds tree_lock exclusively) */
static void
save_blob(Grid *g)
{
	GridShared *gs = g->gs;
	StringInfoData ext;
	StringInfoData out;
	GridBlobHdr h;

	initStringInfo(&ext);
	if (g->store->save_ext)
		g->store->save_ext(g, &ext);
	memset(&h, 0, sizeof(h));
	h.magic = GRID_BLOB_MAGIC;
	h.version = GRID_BLOB_VERSION;
	h.mode = gs->mode;
	h.capacity = gs->capacity;
	h.page_size = gs->page_size;
	h.nulls = gs->nulls;
	h.odd = gs->odd;
	h.root_len = gs->root_len;
	h.nfree = gs->nfree;
	h.ext_len = ext.len;
	h.cnt = gs->cnt;
	initStringInfo(&out);
	appendBinaryStringInfo(&out, (char *) &h, sizeof(h));
	appendBinaryStringInfo(&out, grid_data_ptr(gs->root), gs->root_len);
	if (gs->nfree > 0)
		appendBinaryStringInfo(&out, grid_data_ptr(gs->free_pages), sizeof(uint32) * gs->nfree);
	appendBinaryStringInfo(&out, ext.data, ext.len);
	hi_am_blob_set(g->sh, out.data, out.len);
	pfree(out.data);
	pfree(ext.data);
}

/*
 * Redo of one log record (HiAmOps.redo), tree_lock held exclusively.  A
 * record older than what the state reflects means an earlier replay
 * failed part-way: start again from the checkpoint's blob.
 */
void
grid_redo(HiIndex *idx, const HiLogRecord *rec)
{
	Grid	   *g = grid_open(idx);
	GridEntry	e;

	if (rec->lsn < g->gs->applied_lsn)
	{
		grid_discard(idx->slotno, idx->generation);
		g = grid_open(idx);
	}
	g->gs->applied_lsn = rec->lsn + sizeof(HiLogRecord);
	if (pl_redo(idx, rec))
		return;
	memset(&e, 0, sizeof(e));
	e.key = rec->key;
	e.flags = rec->flags;
	e.tid = rec->tid;
	e.kind = rec->iskey;
	if (rec->type == HI_LOG_INSERT)
		grid_insert(g, &e);
	else if (rec->type == HI_LOG_DELETE)
	{
		if (grid_delete(g, &e) && e.kind == HI_KEY_BOX)
		{
			double		c[2];
			float4		r[2];

			if (grid_ent_center(&e, c, r))
				grid_try_merge(g, c[GRID_X], c[GRID_Y]);
		}
	}
	grid_after_change(g);
}

/* After a logged change: the state reflects the log up to its end */
void
grid_note_applied(Grid *g)
{
	LWLockAcquire(&g->sh->log_lock, LW_SHARED);
	g->gs->applied_lsn = g->sh->log_insert;
	LWLockRelease(&g->sh->log_lock);
}

/* Deferred work of the store after a change (tree_lock exclusive) */
void
grid_after_change(Grid *g)
{
	if (g->store->after_change)
		(void) g->store->after_change(g);
}

/* ---- pages ---- */

uint32
grid_page_alloc(Grid *g)
{
	GridShared *gs = g->gs;

	if (gs->nfree > 0)
		return ((uint32 *) grid_data_ptr(gs->free_pages))[--gs->nfree];
	return g->sh->meta.npages++;
}

/*
 * A page is no longer used: it leaves the buffer unwritten, its storage
 * slot is released at the next checkpoint (the last checkpoint may still
 * reference it), and its id is reused.
 */
void
grid_page_free(Grid *g, int which, uint32 pageno)
{
	GridShared *gs = g->gs;
	uint32		kind = g->sh->meta.am;

	gbuf_drop(g, which, pageno);
	hi_pt_remap(g->sh, pageno, 0);
	if (kind < lengthof(freed_fns) && freed_fns[kind] != NULL)
		freed_fns[kind] (g, pageno);
	if (gs->nfree == gs->free_cap)
	{
		dsa_pointer np = dsa_allocate_extended(hi_dsa(), sizeof(uint32) * gs->free_cap * 2,
											   DSA_ALLOC_HUGE);

		memcpy(grid_data_ptr(np), grid_data_ptr(gs->free_pages), sizeof(uint32) * gs->nfree);
		dsa_free(hi_dsa(), gs->free_pages);
		gs->free_pages = np;
		gs->free_cap *= 2;
	}
	((uint32 *) grid_data_ptr(gs->free_pages))[gs->nfree++] = pageno;
}

void
grid_root(Grid *g, GridDirView *v)
{
	gdv_init(v, grid_data_ptr(g->gs->root));
}

void
grid_root_set(Grid *g, const GridDir *d)
{
	Size		len = gd_size(d);
	dsa_pointer p = dsa_allocate_extended(hi_dsa(), len, DSA_ALLOC_HUGE);

	gd_encode(d, grid_data_ptr(p));
	if (DsaPointerIsValid(g->gs->root))
		dsa_free(hi_dsa(), g->gs->root);
	g->gs->root = p;
	g->gs->root_len = len;
}

/* Entries moved between buckets: kNN scans and VACUUM must start over */
void
grid_bump(Grid *g)
{
	pg_atomic_fetch_add_u64(&g->sh->split_count, 1);
}

/* ---- HiPageSource over the bucket buffer ---- */

static void
src_read_batch(HiIndex *idx, const uint32 *pagenos, int n, HiFrame *frames)
{
	gbuf_pin(grid_open(idx), GRID_BUF_BUCKET, pagenos, n, frames);
}

static HiFrame
src_new_page(HiIndex *idx, uint32 pageno)
{
	return gbuf_new(grid_open(idx), GRID_BUF_BUCKET, pageno, 0, 0);
}

static char *
src_data(HiIndex *idx, HiFrame f)
{
	return gbuf_page(grid_open(idx), GRID_BUF_BUCKET, f);
}

static void
src_begin_write(HiIndex *idx, HiFrame f)
{
}

static void
src_mark_dirty(HiIndex *idx, HiFrame f)
{
	gbuf_dirty(grid_open(idx), GRID_BUF_BUCKET, f);
}

static void
src_release(HiIndex *idx, HiFrame f)
{
	gbuf_unpin(grid_open(idx), GRID_BUF_BUCKET, f);
}

static int
src_batch_limit(HiIndex *idx)
{
	return gbuf_batch_limit(grid_open(idx), GRID_BUF_BUCKET);
}

/*
 * Checkpoint: dirty pages of both buffers, then those they handed to the
 * shared page cache, then the blob
 */
static void
src_flush_all(HiIndex *idx)
{
	Grid	   *g;

	/* an index whose build failed before its first state has nothing */
	if (idx->sh->building && grid_lookup_shared(idx->slotno, idx->generation) == NULL)
		return;
	g = grid_open(idx);
	gbuf_flush_all(g);
	/* the INCLUDE rows' pages live in the shared cache whatever the buffers */
	if (gbuf_shares_cache(g) || pl_enabled(idx))
		hi_cache_flush_index(idx->sh, idx->slotno);
	save_blob(g);
}

const HiPageSource grid_page_source = {
	.read_batch = src_read_batch,
	.new_page = src_new_page,
	.data = src_data,
	.begin_write = src_begin_write,
	.mark_dirty = src_mark_dirty,
	.release = src_release,
	.batch_limit = src_batch_limit,
	.flush_all = src_flush_all,
	.ahead_limit = NULL,		/* grids read no NULL-list pages ahead */
	.read_ahead = NULL
};
