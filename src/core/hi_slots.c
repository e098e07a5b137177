/*
 * hi_slots.c
 *	  The registry of index slots: the shared state of an index in use,
 *	  found by relfilenode, pinned by each transaction that uses it, and
 *	  given back once nobody does and the room is needed.
 *
 * Slots are a cache, not a registry (ARCHITECTURE.md): a slot nobody has
 * pinned is written out as a checkpoint would (only if its log holds
 * records: otherwise its files already are its state), forgotten by every
 * layer, and its index is loaded again from its files at its next use, as
 * after a restart.  So the number of indexes opened since the start does
 * not matter, only how many are in use at one moment, and that is bounded
 * by the lock table (hi_registry_slots), as PostgreSQL's own relations are.
 *
 * A pin lasts until the end of the transaction (hi_slots_unpin_all from
 * the transaction callback), as the relation lock that comes with every
 * use of an index does.  Pins are taken with registry_lock held, and a
 * victim is chosen with it held exclusively, so no pin can appear between
 * the choice and the mark (evicting) that makes new users wait.
 */
#include "postgres.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "miscadmin.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "base/hi_base.h"
#include "core/hi_core.h"
#include "log/redo_log.h"
#include "storage/storage.h"

/* slots this backend's transaction pinned: a flag per slot and a list */
static bool *pinned = NULL;
static int *pin_list = NULL;
static int	npins = 0;

/* The slot of a relfilenode, or NULL (registry_lock held) */
static HiIndexShared *
find_slot(Oid dboid, Oid relnumber)
{
	int			i = hi_slot_hash_find(dboid, relnumber);

	return i < 0 ? NULL : &hi_shared->indexes[i];
}

/*
 * Pin a slot for the rest of this transaction (registry_lock held, the
 * slot in use and not being given back).  Outside a transaction (the log
 * sync worker, WAL replay) nothing is pinned: those hold the slot's locks
 * while they use it and check its generation.
 */
void
hi_slot_pin(HiIndexShared *sh)
{
	int			slotno = sh - hi_shared->indexes;

	if (!IsTransactionState())
		return;
	if (pinned == NULL)
	{
		pinned = MemoryContextAllocZero(TopMemoryContext,
										sizeof(bool) * hi_shared->max_indexes);
		pin_list = MemoryContextAlloc(TopMemoryContext,
									  sizeof(int) * hi_shared->max_indexes);
	}
	sh->referenced = true;
	if (pinned[slotno])
		return;
	pg_atomic_fetch_add_u32(&sh->pins, 1);
	pinned[slotno] = true;
	pin_list[npins++] = slotno;
}

/*
 * A backend's handle from an earlier use: pin its slot if it still holds
 * the same relfilenode (true), else the caller claims the slot again.
 */
bool
hi_slot_pin_current(HiIndexShared *sh, uint32 generation)
{
	bool		ok;

	if (pinned && pinned[sh - hi_shared->indexes] && sh->generation == generation)
		return true;
	LWLockAcquire(&hi_shared->registry_lock, LW_SHARED);
	ok = sh->in_use && !sh->evicting && sh->generation == generation;
	if (ok)
		hi_slot_pin(sh);
	LWLockRelease(&hi_shared->registry_lock);
	return ok;
}

/* The transaction ends (commit, abort, prepare): its slots may go */
void
hi_slots_unpin_all(void)
{
	int			i;

	for (i = 0; i < npins; i++)
	{
		pg_atomic_fetch_sub_u32(&hi_shared->indexes[pin_list[i]].pins, 1);
		pinned[pin_list[i]] = false;
	}
	npins = 0;
}

/*
 * A slot being given back: wait until it is gone (its writer holds
 * load_lock while it writes it out).  Not interruptible where the caller
 * must not fail (a drop's removal of files after the commit record).
 */
static void
wait_for_eviction(HiIndexShared *sh, bool interruptible)
{
	LWLockAcquire(&sh->load_lock, LW_SHARED);
	LWLockRelease(&sh->load_lock);
	pg_usleep(100L);
	if (interruptible)
		CHECK_FOR_INTERRUPTS();
}

/*
 * The slot of a relfilenode in use, pinned, or NULL.  For the SQL
 * functions and the planner, which read what a loaded index holds.
 */
HiIndexShared *
hi_slot_lookup(Oid dboid, Oid relnumber)
{
	HiIndexShared *sh;

	for (;;)
	{
		LWLockAcquire(&hi_shared->registry_lock, LW_SHARED);
		sh = find_slot(dboid, relnumber);
		if (sh && !sh->evicting)
			hi_slot_pin(sh);
		LWLockRelease(&hi_shared->registry_lock);
		if (sh == NULL || !sh->evicting)
			return sh;
		wait_for_eviction(sh, true);
	}
}

/*
 * The entry format (HiMeta.version) of an index: from its loaded state, or
 * else from its map file's header, without loading it (the planner asks
 * every index of a table).  0 if it has no readable map file.
 */
uint32
hi_index_format(Relation index)
{
	HiIndexShared *sh = hi_slot_lookup(MyDatabaseId, HI_REL_NUMBER(index));
	uint32		v = 0;
	char	   *path;

	if (sh != NULL && sh->loaded)
		v = sh->meta.version;
	if (v != 0)
		return v;
	path = hi_file_path(HI_REL_SPC(index), MyDatabaseId, HI_REL_SPC(index),
						HI_REL_NUMBER(index), "map");
	v = hi_map_meta_version(path);
	pfree(path);
	return v;
}

void
hi_slot_reset_state(HiIndexShared *sh)
{
	sh->loaded = false;
	sh->loaded_in_recovery = false;
	sh->needs_reload = false;
	sh->reload_live = false;
	sh->changing = 0;
	sh->building = false;
	sh->image_open = false;
	sh->image_foreign = false;
	sh->build_sync_deferred = false;
	sh->wal_pages = false;
	sh->checkpoint_log_kb = 0;
	memset(&sh->meta, 0, sizeof(sh->meta));
	sh->log_base = sh->log_insert = sh->log_flushed = 0;
	sh->confirm_redo = sh->synced_upto = 0;
	sh->log_fresh = false;
	sh->log_missing = false;
	pg_atomic_write_u64(&sh->split_count, 0);
	pg_atomic_write_u64(&sh->checkpoints, 0);
	hi_stats_reset(sh);
}

/* Zero the I/O, cache and log counters (hybrid_index_reset_stats) */
void
hi_stats_reset(HiIndexShared *sh)
{
	int			t;

	for (t = 0; t < HI_NUM_TIERS; t++)
	{
		HiTierCounters *c = &sh->tiers[t];

		pg_atomic_write_u64(&c->reads, 0);
		pg_atomic_write_u64(&c->writes, 0);
		pg_atomic_write_u64(&c->read_batches, 0);
		pg_atomic_write_u64(&c->write_batches, 0);
		pg_atomic_write_u64(&c->bytes_read, 0);
		pg_atomic_write_u64(&c->bytes_written, 0);
		pg_atomic_write_u64(&c->io_time_us, 0);
	}
	pg_atomic_write_u64(&sh->cache_hits, 0);
	pg_atomic_write_u64(&sh->cache_misses, 0);
	pg_atomic_write_u64(&sh->log_bytes, 0);
}

/* A slot leaves the registry (registry_lock held exclusively) */
static void
free_slot(HiIndexShared *sh)
{
	hi_pt_free(sh);
	hi_slot_hash_set(sh->dboid, sh->relnumber, -1);
	sh->in_use = false;
	sh->evicting = false;
	sh->free_next = hi_shared->free_head;
	hi_shared->free_head = sh - hi_shared->indexes;
}

/*
 * A slot nobody has pinned, by the clock (second chance for slots pinned
 * since the hand last passed), or NULL if every slot is pinned or busy
 * (registry_lock held exclusively).
 */
static HiIndexShared *
choose_victim(void)
{
	int			n = hi_shared->max_indexes;
	int			step;

	for (step = 0; step < 2 * n; step++)
	{
		HiIndexShared *sh = &hi_shared->indexes[hi_shared->clock_hand];

		hi_shared->clock_hand = (hi_shared->clock_hand + 1) % n;
		/* unpinned: no change can be under way (a change needs a pin) */
		if (!sh->in_use || sh->evicting || sh->building ||
			pg_atomic_read_u32(&sh->pins) != 0)
			continue;
		if (sh->referenced)
		{
			sh->referenced = false;
			continue;
		}
		return sh;
	}
	return NULL;
}

/*
 * Give an idle slot back (marked evicting): write out what its log holds
 * not yet in its files (a primary's index; a copy's files are WAL
 * replay's), forget it in every layer, free it.  On an error (a full disk
 * met by the checkpoint) the slot stays as it was.
 */
static void
evict_slot(HiIndexShared *sh)
{
	int			slotno = sh - hi_shared->indexes;
	uint32		gen = sh->generation;

	PG_TRY();
	{
		/*
		 * The checkpoint under tree_lock alone, as the log sync worker's:
		 * load_lock held exclusively means a load to the access methods
		 * (eFIND starts its buffers afresh then).
		 */
		LWLockAcquire(&sh->tree_lock, LW_EXCLUSIVE);
		if (sh->loaded && !sh->needs_reload && !sh->loaded_in_recovery &&
			!RecoveryInProgress() && hi_log_size(sh) > 0)
			(void) hi_index_checkpoint_detached(sh);
		LWLockRelease(&sh->tree_lock);
		LWLockAcquire(&sh->load_lock, LW_EXCLUSIVE);
		LWLockAcquire(&sh->tree_lock, LW_EXCLUSIVE);
		/*
		 * Forgotten as after a crash: what a change that failed half-way
		 * (needs_reload) left in memory is not written, its log is
		 * replayed from the files at the next load.
		 */
		hi_slot_forget(slotno, gen);
		sh->needs_reload = false;
		sh->changing = 0;
		sh->loaded = false;
		sh->loaded_in_recovery = false;
		LWLockRelease(&sh->tree_lock);
		LWLockRelease(&sh->load_lock);
	}
	PG_CATCH();
	{
		/*
		 * Both released before registry_lock is taken: WAL replay takes
		 * registry_lock first, then load_lock (hi_copy_exclusive)
		 */
		if (LWLockHeldByMe(&sh->tree_lock))
			hi_lwlock_release_cleanup(&sh->tree_lock);
		if (LWLockHeldByMe(&sh->load_lock))
			hi_lwlock_release_cleanup(&sh->load_lock);
		LWLockAcquire(&hi_shared->registry_lock, LW_EXCLUSIVE);
		sh->evicting = false;
		LWLockRelease(&hi_shared->registry_lock);
		PG_RE_THROW();
	}
	PG_END_TRY();
	hi_files_forget(sh);
	LWLockAcquire(&hi_shared->registry_lock, LW_EXCLUSIVE);
	sh->generation++;			/* handles and frames of it stop matching */
	free_slot(sh);
	LWLockRelease(&hi_shared->registry_lock);
}

/* Find the slot of an index's current relfilenode, or claim one; pinned */
HiIndexShared *
hi_slot_claim(Relation index)
{
	Oid			dboid = MyDatabaseId;
	Oid			relnumber = HI_REL_NUMBER(index);
	HiIndexShared *sh;

	for (;;)
	{
		HiIndexShared *victim;

		sh = hi_slot_lookup(dboid, relnumber);
		if (sh)
			return sh;

		LWLockAcquire(&hi_shared->registry_lock, LW_EXCLUSIVE);
		sh = find_slot(dboid, relnumber);
		if (sh)
		{
			/* claimed meanwhile: look again (or wait for its eviction) */
			LWLockRelease(&hi_shared->registry_lock);
			continue;
		}
		if (hi_shared->free_head >= 0)
		{
			sh = &hi_shared->indexes[hi_shared->free_head];
			hi_shared->free_head = sh->free_next;
			sh->free_next = -1;
			hi_slot_reset_state(sh);
			sh->generation++;
			sh->dboid = dboid;
			sh->relnumber = relnumber;
			sh->indexoid = RelationGetRelid(index);
			sh->wal_logged = index->rd_rel->relpersistence == RELPERSISTENCE_PERMANENT;
			sh->spcoid[HI_TIER_FLASH] = HI_REL_SPC(index);
			sh->spcoid[HI_TIER_OPTANE] = hi_index_optane_spc(index, false);
			sh->budget_frames = 0;
			pg_atomic_write_u32(&sh->nframes, 0);
			sh->evicting = false;
			sh->in_use = true;
			hi_slot_hash_set(dboid, relnumber, sh - hi_shared->indexes);
			hi_slot_pin(sh);
			LWLockRelease(&hi_shared->registry_lock);
			return sh;
		}
		victim = choose_victim();
		if (victim == NULL)
		{
			int			n = hi_shared->max_indexes;
			int			npinned = 0;
			int			i;

			for (i = 0; i < n; i++)
				if (pg_atomic_read_u32(&hi_shared->indexes[i].pins) != 0)
					npinned++;
			LWLockRelease(&hi_shared->registry_lock);
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_RESOURCES),
					 errmsg("cannot open index \"%s\": all %d hybrid_index slots are used by running transactions",
							RelationGetRelationName(index), n),
					 errdetail("%d slots are pinned, the others are being written out or built; a slot holds an index from its first use in a transaction to the end of that transaction.", npinned),
					 errhint("Raise hybrid_index.max_indexes (or max_locks_per_transaction, which sizes it by default) and restart the server, or use fewer indexes in one transaction.")));
		}
		victim->evicting = true;
		LWLockRelease(&hi_shared->registry_lock);
		evict_slot(victim);
	}
}

/*
 * WAL redo of an index checkpoint rewrites a copy's files (log/wal_redo.c)
 * in the startup process: nobody may load or read them meanwhile.  A hot
 * standby's loaded state is forgotten (its readers load the index again at
 * their next use, as after a RESTART record), and registry_lock held
 * shared keeps a slot from being claimed for the relfilenode meanwhile.
 * A slot being given back holds nothing loaded when load_lock is free.
 * fn never raises an ERROR (redo must not).
 */
void
hi_copy_exclusive(Oid dboid, Oid relnumber, hi_copy_fn fn, void *arg)
{
	HiIndexShared *sh;

	LWLockAcquire(&hi_shared->registry_lock, LW_SHARED);
	sh = find_slot(dboid, relnumber);
	if (sh)
	{
		LWLockAcquire(&sh->load_lock, LW_EXCLUSIVE);
		LWLockAcquire(&sh->tree_lock, LW_EXCLUSIVE);
		if (sh->loaded)
			hi_index_unload(sh);
	}
	fn(arg);
	if (sh)
	{
		LWLockRelease(&sh->tree_lock);
		LWLockRelease(&sh->load_lock);
	}
	LWLockRelease(&hi_shared->registry_lock);
}

/*
 * The relfilenode's files are about to go (drop, replacement, aborted
 * build): forget its slot.  A slot being given back is waited for, so that
 * nothing writes the files after they are gone.
 */
void
hi_slot_release(Oid dboid, Oid relnumber)
{
	HiIndexShared *sh;
	uint32		gen;

	if (hi_shared == NULL)
		return;
	for (;;)
	{
		LWLockAcquire(&hi_shared->registry_lock, LW_EXCLUSIVE);
		sh = find_slot(dboid, relnumber);
		if (sh == NULL)
		{
			LWLockRelease(&hi_shared->registry_lock);
			return;
		}
		if (!sh->evicting)
			break;
		LWLockRelease(&hi_shared->registry_lock);
		wait_for_eviction(sh, false);
	}
	gen = sh->generation;
	sh->loaded = false;
	sh->evicting = true;		/* nobody pins or gives it back meanwhile */
	sh->generation++;			/* stale handles and frames stop matching */
	LWLockRelease(&hi_shared->registry_lock);

	hi_slot_forget(sh - hi_shared->indexes, gen);
	hi_files_forget(sh);
	LWLockAcquire(&hi_shared->registry_lock, LW_EXCLUSIVE);
	free_slot(sh);
	LWLockRelease(&hi_shared->registry_lock);
}
