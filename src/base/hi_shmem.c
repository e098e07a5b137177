/*
 * hi_shmem.c
 *	  Shared memory of hybrid_index: the index registry (one slot of shared
 *	  state per index in use, found through a hash table by relfilenode),
 *	  the page cache, and a DSA area for the variable-sized page tables and
 *	  slot maps.
 */
#include "postgres.h"

#include "access/twophase.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lock.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/dsa.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "base/hi_base.h"

#define HI_DSA_INITIAL_SIZE		(4 * 1024 * 1024)

HiSharedRoot *hi_shared = NULL;
static char *hi_dsa_place = NULL;
static dsa_area *hi_dsa_area = NULL;

/* the registry's hash table: relfilenode -> slot */
typedef struct HiSlotKey
{
	Oid			dboid;
	Oid			relnumber;
} HiSlotKey;

typedef struct HiSlotEntry
{
	HiSlotKey	key;
	int			slotno;
} HiSlotEntry;

static HTAB *slot_hash = NULL;

/*
 * Slots in the registry.  By default as many as the lock table has
 * entries: an index in use is locked, with its table, by the transaction
 * using it (slots are pinned for a transaction, core/hi_slots.c), so no
 * statement the lock table lets run finds every slot pinned.  Computed
 * once MaxBackends is known (the shared memory request) and the same in
 * every process.
 */
int
hi_registry_slots(void)
{
	if (hi_max_indexes > 0)
		return hi_max_indexes;
	return Max(256, max_locks_per_xact * (MaxBackends + max_prepared_xacts));
}

static Size
hi_root_size(void)
{
	return add_size(offsetof(HiSharedRoot, indexes),
					mul_size(sizeof(HiIndexShared), hi_registry_slots()));
}

void
hi_shmem_request(void)
{
	RequestAddinShmemSpace(hi_root_size());
	RequestAddinShmemSpace(hash_estimate_size(hi_registry_slots(), sizeof(HiSlotEntry)));
	RequestAddinShmemSpace(HI_DSA_INITIAL_SIZE);
	/* the other layers request their own (hybrid_index.c) */
	RequestNamedLWLockTranche("hybrid_index", 1);
}

/*
 * The shared root and the DSA area; returns whether they existed already.
 * The caller holds AddinShmemInitLock and sets up the other layers' shared
 * memory after this (hybrid_index.c).
 */
bool
hi_shmem_startup(void)
{
	bool		found;

	int			nslots = hi_registry_slots();
	HASHCTL		info;

	hi_shared = ShmemInitStruct("hybrid_index root", hi_root_size(), &found);
	memset(&info, 0, sizeof(info));
	info.keysize = sizeof(HiSlotKey);
	info.entrysize = sizeof(HiSlotEntry);
	slot_hash = hi_shmem_init_hash("hybrid_index slots", nslots, &info, HASH_ELEM | HASH_BLOBS);
	hi_dsa_place = ShmemInitStruct("hybrid_index dsa", HI_DSA_INITIAL_SIZE, &found);
	if (!found)
	{
		int			i;

		memset(hi_shared, 0, hi_root_size());
		hi_shared->tranche_id = hi_lwlock_new_tranche("hybrid_index");
		hi_shared->max_indexes = nslots;
		LWLockInitialize(&hi_shared->registry_lock, hi_shared->tranche_id);
		hi_shared->clock_hand = 0;
		hi_shared->free_head = 0;
		pg_atomic_init_u32(&hi_shared->sync_pid, 0);
		pg_atomic_init_u32(&hi_shared->pending_sweep, 0);
		for (i = 0; i < nslots; i++)
		{
			HiIndexShared *sh = &hi_shared->indexes[i];
			int			t;

			LWLockInitialize(&sh->tree_lock, hi_shared->tranche_id);
			LWLockInitialize(&sh->map_lock, hi_shared->tranche_id);
			LWLockInitialize(&sh->log_lock, hi_shared->tranche_id);
			LWLockInitialize(&sh->flush_lock, hi_shared->tranche_id);
			LWLockInitialize(&sh->load_lock, hi_shared->tranche_id);
			LWLockInitialize(&sh->ckpt_lock, hi_shared->tranche_id);
			pg_atomic_init_u32(&sh->nframes, 0);
			pg_atomic_init_u32(&sh->pins, 0);
			sh->free_next = i + 1 < nslots ? i + 1 : -1;
			pg_atomic_init_u32(&sh->slot_reads, 0);
			pg_atomic_init_u32(&sh->reload_requests, 0);
			pg_atomic_init_u64(&sh->split_count, 0);
			pg_atomic_init_u64(&sh->cache_hits, 0);
			pg_atomic_init_u64(&sh->cache_misses, 0);
			pg_atomic_init_u64(&sh->log_bytes, 0);
			pg_atomic_init_u64(&sh->checkpoints, 0);
			for (t = 0; t < HI_NUM_TIERS; t++)
			{
				HiTierCounters *c = &sh->tiers[t];

				pg_atomic_init_u64(&c->reads, 0);
				pg_atomic_init_u64(&c->writes, 0);
				pg_atomic_init_u64(&c->read_batches, 0);
				pg_atomic_init_u64(&c->write_batches, 0);
				pg_atomic_init_u64(&c->bytes_read, 0);
				pg_atomic_init_u64(&c->bytes_written, 0);
				pg_atomic_init_u64(&c->io_time_us, 0);
			}
			sh->pt = InvalidDsaPointer;
			sh->am_blob = InvalidDsaPointer;
			for (t = 0; t < HI_NUM_TIERS; t++)
				sh->slotmap[t] = InvalidDsaPointer;
		}

		/*
		 * The creating process (the postmaster) keeps its reference for
		 * good, so segments the area grows into are never freed while the
		 * server runs.
		 */
		(void) dsa_create_in_place(hi_dsa_place, HI_DSA_INITIAL_SIZE,
								   hi_shared->tranche_id, NULL);
	}
	return found;
}

/* The slot of a relfilenode, or -1 (registry_lock held) */
int
hi_slot_hash_find(Oid dboid, Oid relnumber)
{
	HiSlotKey	key = {dboid, relnumber};
	HiSlotEntry *e = hash_search(slot_hash, &key, HASH_FIND, NULL);

	return e ? e->slotno : -1;
}

/* Enter or remove a relfilenode's slot (registry_lock held exclusively) */
void
hi_slot_hash_set(Oid dboid, Oid relnumber, int slotno)
{
	HiSlotKey	key = {dboid, relnumber};

	if (slotno < 0)
		(void) hash_search(slot_hash, &key, HASH_REMOVE, NULL);
	else
	{
		HiSlotEntry *e = hash_search(slot_hash, &key, HASH_ENTER_NULL, NULL);

		/* sized for every slot: cannot be full while a slot is free */
		if (e == NULL)
			elog(ERROR, "hybrid_index: the registry's hash table is full");
		e->slotno = slotno;
	}
}

/*
 * The DSA area, attached on first use by each backend and kept for the
 * backend's lifetime.
 */
dsa_area *
hi_dsa(void)
{
	if (hi_dsa_area == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

		hi_lwlock_name_tranche(hi_shared->tranche_id, "hybrid_index");
		hi_dsa_area = dsa_attach_in_place(hi_dsa_place, NULL);
		dsa_pin_mapping(hi_dsa_area);
		MemoryContextSwitchTo(old);
	}
	return hi_dsa_area;
}

/*
 * Called at the top of every entry point: the library may have been loaded
 * into this backend some other way than shared_preload_libraries (for
 * instance by a server started without the preload line, where _PG_init's
 * error is the user's first sight of the problem); shared state then does
 * not exist.
 */
/*
 * The name of an index for messages.  A handle without a relation (the
 * log sync worker's checkpoint at shutdown, which has no database) names
 * the index by its OID.
 */
const char *
hi_index_name(const HiIndex *idx)
{
	static char anon[64];

	if (idx->rel != NULL)
		return RelationGetRelationName(idx->rel);
	snprintf(anon, sizeof(anon), "oid %u", idx->sh->indexoid);
	return anon;
}

void
hi_check_preloaded(void)
{
	if (hi_shared == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("hybrid_index must be loaded via shared_preload_libraries"),
				 errhint("Add 'hybrid_index' to shared_preload_libraries in postgresql.conf and restart the server.")));
	hi_lwlock_name_tranche(hi_shared->tranche_id, "hybrid_index");
}
