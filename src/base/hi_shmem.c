/*
 * hi_shmem.c
 *	  Shared memory of hybrid_index: the index registry (one slot of shared
 *	  state per open index), the page cache, and a DSA area for the
 *	  variable-sized page tables and slot maps.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/ipc.h"
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

static Size
hi_root_size(void)
{
	return add_size(offsetof(HiSharedRoot, indexes),
					mul_size(sizeof(HiIndexShared), hi_max_indexes));
}

void
hi_shmem_request(void)
{
	RequestAddinShmemSpace(hi_root_size());
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

	hi_shared = ShmemInitStruct("hybrid_index root", hi_root_size(), &found);
	hi_dsa_place = ShmemInitStruct("hybrid_index dsa", HI_DSA_INITIAL_SIZE, &found);
	if (!found)
	{
		int			i;

		memset(hi_shared, 0, hi_root_size());
		hi_shared->tranche_id = hi_lwlock_new_tranche("hybrid_index");
		hi_shared->max_indexes = hi_max_indexes;
		LWLockInitialize(&hi_shared->registry_lock, hi_shared->tranche_id);
		pg_atomic_init_u32(&hi_shared->clock_hand, 0);
		pg_atomic_init_u32(&hi_shared->sync_pid, 0);
		for (i = 0; i < hi_max_indexes; i++)
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
