/*
 * hi_index.c
 *	  Opening an index: its slot in the shared registry, loading and crash
 *	  recovery at first use, following a primary on a hot standby, and the
 *	  locks of readers and changes (checkpoints: hi_index_ckpt.c).
 *
 * A registry slot holds the shared state of one relfilenode.  The first
 * backend to use an index after server start loads the map file of its
 * last checkpoint and replays the redo log; every later user finds it
 * loaded.  A checkpoint (log too long, end of a build, explicit call)
 * writes every dirty page, then the map file, then empties the log.
 */
#include "postgres.h"

#include "utils/builtins.h"

#include "access/xlog.h"
#include "catalog/pg_tablespace_d.h"
#include "commands/tablespace.h"
#include "miscadmin.h"
#include "storage/fd.h"
#include "utils/acl.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "base/hi_base.h"
#include "core/hi_core.h"
#include "cache/page_cache.h"
#include "log/redo_log.h"
#include "storage/storage.h"

/* Building or checkpointing writes what only WAL replay may write here */
void
hi_error_if_recovery(Relation index)
{
	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("index \"%s\" cannot be changed during recovery",
						RelationGetRelationName(index)),
				 errdetail("On a standby its files follow the primary's through WAL replay."),
				 errhint("Run this on the primary.")));
}

HiIndexOptions *
hi_index_options(Relation index)
{
	return (HiIndexOptions *) index->rd_options;
}

Oid
hi_index_optane_spc(Relation index, bool creating)
{
	HiIndexOptions *opts = hi_index_options(index);

	if (opts && opts->optane_tablespace != 0)
	{
		const char *name = (const char *) opts + opts->optane_tablespace;

		if (name[0] != '\0')
		{
			Oid			spc = get_tablespace_oid(name, false);

			if (!creating)
				return spc;
			if (spc == HI_REL_SPC(index))
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("optane_tablespace of index \"%s\" is its own tablespace \"%s\"",
								RelationGetRelationName(index), name),
						 errdetail("The fast tier must be a different tablespace than the flash tier."),
						 errhint("Omit optane_tablespace to keep both tier files in the index's tablespace.")));
			if (hi_tablespace_aclcheck(spc, GetUserId(), ACL_CREATE) != ACLCHECK_OK)
				ereport(ERROR,
						(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
						 errmsg("permission denied for tablespace %s", name)));
			return spc;
		}
	}
	/* no fast tier named: its file lives beside the flash tier's */
	return HI_REL_SPC(index);
}

static void
set_budget(HiIndexShared *sh, Relation index, uint32 page_size)
{
	HiIndexOptions *opts = hi_index_options(index);

	sh->budget_frames = 0;
	if (opts && opts->buffer_size > 0)
		sh->budget_frames = Max(4, (int) ((int64) opts->buffer_size * 1024 / page_size));
}

static HiIndex *
make_handle(Relation index, HiIndexShared *sh)
{
	HiIndex    *idx;

	if (index->rd_amcache == NULL)
		index->rd_amcache = MemoryContextAllocZero(index->rd_indexcxt, sizeof(HiIndex));
	idx = (HiIndex *) index->rd_amcache;
	idx->rel = index;
	idx->sh = sh;
	idx->slotno = sh - hi_shared->indexes;
	idx->generation = sh->generation;
	idx->page_size = sh->meta.page_size;
	idx->maintenance = false;
	return idx;
}

/*
 * Pages a standby's replay parked in a copy's pending file: no map has
 * them once recovery ended.  The first load of a primary removes those of
 * the whole server (hi_files_sweep_pending); until that is done, a load
 * removes its own, as every load did before.  Nothing makes pending files
 * on a primary: only replay does, and a server replays after a restart,
 * which starts the flag over.
 */
static void
forget_parked_pages(HiIndexShared *sh)
{
	uint32		expected = 0;
	char	   *pending;

	if (pg_atomic_read_u32(&hi_shared->pending_sweep) == 2)
		return;
	if (pg_atomic_compare_exchange_u32(&hi_shared->pending_sweep, &expected, 1))
	{
		bool		ok = hi_files_sweep_pending();

		pg_atomic_write_u32(&hi_shared->pending_sweep, ok ? 2 : 0);
		if (ok)
			return;
	}
	pending = hi_file_path(sh->spcoid[HI_TIER_FLASH], sh->dboid,
						   sh->spcoid[HI_TIER_FLASH], sh->relnumber, "pending");
	(void) unlink(pending);
	pfree(pending);
}

/*
 * Load the map file and replay the log into a slot nobody uses (first use,
 * or a reload: caller holds load_lock and tree_lock exclusively).  On a
 * primary a replayed log is checkpointed away and WAL says where the log
 * continues; on a hot standby the files stay as WAL replay writes them and
 * the index follows the log from here (hi_index_follow).
 */
static HiIndex *
load_slot(Relation index, HiIndexShared *sh, hi_log_apply_fn apply,
		  const HiPageSource *pages)
{
	uint64		replayed;
	char	   *stale = hi_files_stale(sh);
	HiIndex    *idx;
	bool		standby = RecoveryInProgress();
	bool		live;
	bool		empty;

	/* WAL replayed here said its files lack committed changes */
	if (stale)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("index \"%s\" is out of date on this server",
						RelationGetRelationName(index)),
				 errdetail("Its files here lack changes that WAL records as committed (they are a copy made earlier, a standby's or a restored backup's, or its redo log was damaged): %s",
						   stale),
				 errhint("REINDEX INDEX %s%s.",
						 quote_identifier(RelationGetRelationName(index)),
						 standby ? " on the primary" : "")));
	if (!hi_map_read(sh, RelationGetRelationName(index)))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_FILE),
				 errmsg("files of index \"%s\" are missing",
						RelationGetRelationName(index)),
				 errdetail("The map file \"%s\" does not exist.",
						   hi_file_path(sh->spcoid[HI_TIER_FLASH], sh->dboid,
										sh->spcoid[HI_TIER_FLASH], sh->relnumber, "map")),
				 errhint("REINDEX the index.  After pg_upgrade, bring every index's files over from the old cluster instead: SELECT hybrid_index_upgrade_files('<old data directory>');")));
	set_budget(sh, index, sh->meta.page_size);
	hi_slot_configure(sh, index);
	/* a restored copy of the main fork holds zeros: sparse again */
	hi_files_report_size_at_load(sh);
	sh->log_base = sh->meta.ckpt_lsn;
	sh->log_insert = sh->log_flushed = sh->log_base;
	idx = make_handle(index, sh);
	idx->pages = pages;
	sh->loaded = true;			/* frames may be used from here on */
	sh->loaded_in_recovery = standby;
	/* a primary's page writes go to WAL from here on (replay's too) */
	sh->wal_pages = !standby;
	sh->reload_seen = pg_atomic_read_u32(&sh->reload_requests);
	live = sh->reload_live && !standby;
	hi_replaying = true;
	PG_TRY();
	{
		replayed = hi_log_replay(idx, apply, live);
	}
	PG_FINALLY();
	{
		hi_replaying = false;
	}
	PG_END_TRY();
	if (standby)
		return idx;
	if (live)
	{
		/*
		 * Loaded again after a failed change (hi_change_failed): the log
		 * and the files are this server's own, as they were; no checkpoint
		 * (the disk may still be full), nothing new for the copies.
		 */
		sh->reload_live = false;
		ereport(LOG,
				(errmsg("hybrid_index: index \"%s\" loaded again after a failed change, %llu log records replayed",
						RelationGetRelationName(index),
						(unsigned long long) replayed)));
		return idx;
	}
	forget_parked_pages(sh);
	empty = sh->log_insert == sh->log_base;
	if (replayed > 0)
	{
		ereport(LOG,
				(errmsg("hybrid_index: replayed %llu log records of index \"%s\"",
						(unsigned long long) replayed,
						RelationGetRelationName(index))));
		hi_index_checkpoint(idx);
	}
	if (empty)
	{
		/*
		 * Nothing beyond the map's checkpoint (a clean shutdown, a slot
		 * given back): the files are the whole state, as they are on every
		 * copy, and no log holds records WAL could have lost.  Nothing is
		 * logged; the first append confirms where the log ends
		 * (append_records), so loading 1,000 partitions costs no WAL flush.
		 */
		LWLockAcquire(&sh->log_lock, LW_EXCLUSIVE);
		sh->confirm_redo = 0;
		sh->synced_upto = sh->log_insert;
		LWLockRelease(&sh->log_lock);
		return idx;
	}

	/*
	 * The log held records (a crash): copies of the log (standbys)
	 * continue where this one does, cut what it lost and load again;
	 * durable at once, so that crash recovery always meets a record of the
	 * loaded index after its redo pointer (hi_wal.c)
	 */
	LWLockAcquire(&sh->log_lock, LW_EXCLUSIVE);
	sh->confirm_redo = GetRedoRecPtr();
	sh->synced_upto = sh->log_insert;
	LWLockRelease(&sh->log_lock);
	hi_wal_log_restart(sh, sh->log_insert, true);
	return idx;
}

/*
 * Forget what a loaded slot holds in memory, so that load_slot() can load
 * it again from its files (caller holds load_lock and tree_lock
 * exclusively).  The generation stays: open handles remain valid, and kNN
 * scans between two calls start over from the root (split_count).
 */
void
hi_index_unload(HiIndexShared *sh)
{
	hi_slot_forget(sh - hi_shared->indexes, sh->generation);
	sh->loaded = false;
	sh->loaded_in_recovery = false;
	memset(&sh->meta, 0, sizeof(sh->meta));
	sh->log_base = sh->log_insert = sh->log_flushed = 0;
	sh->confirm_redo = sh->synced_upto = 0;
	sh->log_fresh = false;
	sh->log_missing = false;
	pg_atomic_fetch_add_u64(&sh->split_count, 1);
}

/* This backend is replaying an index's log while it loads it */
bool		hi_replaying = false;

/*
 * A change failed half-way in another backend (hi_change_failed): forget
 * the loaded state, so that it is loaded again.  That backend's abort has
 * released tree_lock, so its pins are gone or going (the cache's discard
 * waits for them; the grid ignores pins of a state it forgot).
 */
static void
forget_failed_change(HiIndexShared *sh)
{
	LWLockAcquire(&sh->load_lock, LW_EXCLUSIVE);
	LWLockAcquire(&sh->tree_lock, LW_EXCLUSIVE);
	if (sh->needs_reload)
	{
		if (sh->loaded)
			hi_index_unload(sh);
		sh->needs_reload = false;
		sh->reload_live = true;
	}
	LWLockRelease(&sh->tree_lock);
	LWLockRelease(&sh->load_lock);
}

/*
 * Open an index for use, loading and recovering it at first use.  The
 * caller passes the AM's redo function for log replay.
 */
HiIndex *
hi_index_open_for(Relation index, hi_log_apply_fn apply, const HiPageSource *pages)
{
	HiIndex    *idx = (HiIndex *) index->rd_amcache;
	HiIndexShared *sh;

	hi_check_preloaded();

	if (idx && idx->sh && idx->sh->in_use && idx->sh->generation == idx->generation &&
		idx->sh->relnumber == HI_REL_NUMBER(index) &&
		idx->sh->dboid == MyDatabaseId && idx->sh->loaded && !idx->sh->needs_reload &&
		hi_slot_pin_current(idx->sh, idx->generation))
	{
		idx->rel = index;
		idx->pages = pages;
		idx->maintenance = false;
		if (!idx->sh->loaded_in_recovery)
			return idx;
		hi_index_follow(idx, apply);
		if (idx->sh->loaded)
			return idx;
	}

	sh = hi_slot_claim(index);
	if (sh->needs_reload)
		forget_failed_change(sh);
	if (!sh->loaded)
	{
		LWLockAcquire(&sh->load_lock, LW_EXCLUSIVE);
		if (!sh->loaded)
		{
			PG_TRY();
			{
				LWLockAcquire(&sh->tree_lock, LW_EXCLUSIVE);
				(void) load_slot(index, sh, apply, pages);
				LWLockRelease(&sh->tree_lock);
			}
			PG_CATCH();
			{
				/*
				 * Leave the slot unloaded, with nothing of the failed
				 * attempt left behind; the next user starts over.
				 */
				sh->loaded = false;
				hi_slot_forget(sh - hi_shared->indexes, sh->generation);
				PG_RE_THROW();
			}
			PG_END_TRY();
		}
		LWLockRelease(&sh->load_lock);
	}
	idx = make_handle(index, sh);
	idx->pages = pages;
	if (sh->loaded_in_recovery)
		hi_index_follow(idx, apply);
	return idx;
}

/*
 * The first use after promotion of an index a hot standby's readers had
 * loaded, and no replay since asked them to load it again (caller holds
 * load_lock and tree_lock exclusively).  Its loaded state is the files WAL
 * replay wrote plus every log record its readers applied, the primary's
 * live state as WAL carried it: this server takes it over as it is,
 * instead of loading the files again and replaying the whole log since
 * the last index checkpoint (a stall of seconds after many inserts, paid
 * once per index by the first query on the new primary).  What replay
 * appended since the readers' last scan is applied first.  Entries of
 * transactions the promotion cut off stay, as the old primary's aborted
 * ones do, until VACUUM removes them; a later crash replays the log with
 * the judgement of a primary.  Nothing is logged: every record of the log
 * is in WAL already (recovery's end cut what was not), and the first
 * append confirms where the log ends (log/redo_log.c).
 */
static void
take_over_after_promotion(HiIndex *idx, hi_log_apply_fn apply)
{
	HiIndexShared *sh = idx->sh;
	uint64		applied;

	applied = hi_log_follow(idx, apply);
	hi_log_take_over(sh);
	sh->loaded_in_recovery = false;
	sh->wal_pages = true;		/* page writes go to WAL from here on */
	ereport(DEBUG1,
			(errmsg_internal("hybrid_index: index \"%s\" taken over after promotion, %llu log records applied",
							 hi_index_name(idx), (unsigned long long) applied)));
}

/*
 * An index loaded during recovery (a hot standby), opened again: apply what
 * WAL replay appended to its log since; load it again after replay cut the
 * log (the primary restarted) or rebuilt its files; and after promotion
 * load it as a primary does, so that it is writable and its log its own.
 */
void
hi_index_follow(HiIndex *idx, hi_log_apply_fn apply)
{
	HiIndexShared *sh = idx->sh;
	volatile bool reload;
	bool		take_over;

	if (RecoveryInProgress() &&
		pg_atomic_read_u32(&sh->reload_requests) == sh->reload_seen)
	{
		if (!hi_log_has_more(sh))
			return;
		/* as an insertion on a primary: tree_lock alone */
		LWLockAcquire(&sh->tree_lock, LW_EXCLUSIVE);
		if (sh->loaded && sh->loaded_in_recovery && RecoveryInProgress() &&
			pg_atomic_read_u32(&sh->reload_requests) == sh->reload_seen)
		{
			PG_TRY();
			{
				(void) hi_log_follow(idx, apply);
			}
			PG_CATCH();
			{
				/* records applied but not counted: start over next time */
				pg_atomic_fetch_add_u32(&sh->reload_requests, 1);
				PG_RE_THROW();
			}
			PG_END_TRY();
			LWLockRelease(&sh->tree_lock);
			return;
		}
		LWLockRelease(&sh->tree_lock);
	}

	LWLockAcquire(&sh->load_lock, LW_EXCLUSIVE);
	LWLockAcquire(&sh->tree_lock, LW_EXCLUSIVE);
	reload = sh->loaded && sh->loaded_in_recovery &&
		(!RecoveryInProgress() ||
		 pg_atomic_read_u32(&sh->reload_requests) != sh->reload_seen);
	take_over = reload && !RecoveryInProgress() && !sh->needs_reload &&
		pg_atomic_read_u32(&sh->reload_requests) == sh->reload_seen;
	PG_TRY();
	{
		if (take_over)
			take_over_after_promotion(idx, apply);
		else if (reload)
		{
			Relation	index = idx->rel;
			const HiPageSource *pages = idx->pages;

			hi_index_unload(sh);
			(void) load_slot(index, sh, apply, pages);
		}
	}
	PG_CATCH();
	{
		/* a failed reload leaves the slot for the next user to load */
		if (reload)
		{
			sh->loaded = false;
			sh->loaded_in_recovery = false;
			hi_slot_forget(sh - hi_shared->indexes, sh->generation);
		}
		PG_RE_THROW();
	}
	PG_END_TRY();
	LWLockRelease(&sh->tree_lock);
	LWLockRelease(&sh->load_lock);
}

/*
 * A fresh, empty index for ambuild: a new relfilenode (or the same one
 * truncated), new files, and removal of the index's previous files at
 * commit.
 */
HiIndex *
hi_index_create(Relation index, HiAmKind am, const HiPageSource *pages)
{
	HiIndexShared *sh;
	HiIndexOptions *opts = hi_index_options(index);
	int			page_size = opts ? opts->page_size : HI_PAGE_SIZE_DEFAULT;
	HiIndex    *idx;
	Oid			fastspc;

	hi_check_preloaded();
	hi_error_if_recovery(index);
	fastspc = hi_index_optane_spc(index, true);
	if (page_size > hi_max_page_size)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("page_size %d of index \"%s\" exceeds hybrid_index.max_page_size (%d)",
						page_size, RelationGetRelationName(index), hi_max_page_size),
				 errhint("Raise hybrid_index.max_page_size (requires a restart) or choose a smaller page_size.")));

	sh = hi_slot_claim(index);
	LWLockAcquire(&sh->tree_lock, LW_EXCLUSIVE);
	/* the same relfilenode rebuilt (TRUNCATE in the creating transaction) */
	hi_slot_forget(sh - hi_shared->indexes, sh->generation);
	LWLockAcquire(&hi_shared->registry_lock, LW_EXCLUSIVE);
	sh->generation++;
	LWLockRelease(&hi_shared->registry_lock);
	hi_files_forget(sh);
	hi_slot_reset_state(sh);
	sh->spcoid[HI_TIER_OPTANE] = fastspc;
	sh->indexoid = RelationGetRelid(index);
	sh->wal_logged = index->rd_rel->relpersistence == RELPERSISTENCE_PERMANENT;
	sh->meta.magic = HI_META_MAGIC;
	sh->meta.version = HI_META_VERSION;
	sh->meta.am = am;
	sh->meta.page_size = page_size;
	sh->meta.placement = opts ? opts->placement :
		hi_am_ops_by_kind(am)->default_placement;
	sh->meta.root = HI_INVALID_PAGE;
	sh->meta.null_head = HI_INVALID_PAGE;
	sh->meta.null_tail = HI_INVALID_PAGE;
	sh->meta.payload_root = HI_INVALID_PAGE;
	sh->meta.payload_keys = 0;
	hi_pt_init(sh, 64);
	set_budget(sh, index, page_size);
	hi_slot_configure(sh, index);
	sh->building = true;
	sh->wal_pages = false;		/* the build's files go to WAL as an image */
	sh->loaded = true;
	LWLockRelease(&sh->tree_lock);

	index->rd_amcache = NULL;
	idx = make_handle(index, sh);
	idx->pages = pages;
	hi_files_create(sh);
	hi_files_schedule_old_removal(RelationGetRelid(index), sh->spcoid[HI_TIER_FLASH],
								  sh->relnumber,
								  index->rd_createSubid != InvalidSubTransactionId);
	return idx;
}

/*
 * tree_lock in shared mode, for a scan.  On a hot standby, WAL replay of an
 * index checkpoint may have forgotten the loaded state between the scan's
 * open and here (hi_copy_exclusive): the statement is cancelled, as
 * PostgreSQL cancels statements that conflict with recovery, instead of
 * reading files that changed under it.
 */
void
hi_lock_for_read(HiIndex *idx)
{
	HiIndexShared *sh = idx->sh;

	LWLockAcquire(&sh->tree_lock, LW_SHARED);
	if (!sh->loaded || sh->generation != idx->generation || sh->needs_reload)
	{
		LWLockRelease(&sh->tree_lock);
		if (RecoveryInProgress())
			ereport(ERROR,
					(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
					 errmsg("canceling statement due to conflict with recovery"),
					 errdetail("WAL replay checkpointed index \"%s\" while the statement was reading it.",
							   hi_index_name(idx))));
		ereport(ERROR,
				(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
				 errmsg("could not continue reading index \"%s\": a change to it failed half-way",
						hi_index_name(idx)),
				 errdetail("Its state is loaded again from its files (see the server log)."),
				 errhint("Retry the statement.")));
	}
}

/*
 * tree_lock in the given mode, for an operation that has read nothing of
 * the index yet: if a failed change unloaded it since the handle was
 * opened, load it again first.
 */
void
hi_lock_loaded(HiIndex *idx, LWLockMode mode)
{
	for (;;)
	{
		HiIndexShared *sh = idx->sh;
		HiIndex    *again;

		LWLockAcquire(&sh->tree_lock, mode);
		if (sh->loaded && sh->generation == idx->generation && !sh->needs_reload)
		{
			if (mode == LW_EXCLUSIVE)
				sh->changing = 0;
			return;
		}
		LWLockRelease(&sh->tree_lock);
		again = hi_am_open(idx->rel);
		/* a scan's copy of the handle (am_beginscan) follows the reload */
		if (again != idx)
		{
			bool		maintenance = idx->maintenance;

			*idx = *again;
			idx->maintenance = maintenance;
		}
	}
}

/* tree_lock exclusively, for a change */
void
hi_lock_for_change(HiIndex *idx)
{
	hi_lock_loaded(idx, LW_EXCLUSIVE);
}

/*
 * An error cut a change short (called in PG_CATCH, tree_lock still held
 * exclusively).  If the change had modified the loaded state
 * (hi_change_touched), that state is half done: it is marked so that
 * nobody uses it, and the next opener forgets it once this backend's abort
 * has released its locks and pins (forget_failed_change), loading the
 * index again from its files and replaying its log, as after a crash but
 * counting the running transactions' entries.  Readers between two batches
 * get a retryable error (hi_lock_for_read).  A change that failed before
 * modifying anything (the usual case: a full disk met while pinning its
 * pages) leaves the state as it is.
 */
void
hi_change_failed(HiIndex *idx)
{
	HiIndexShared *sh = idx->sh;

	if (!LWLockHeldByMeInMode(&sh->tree_lock, LW_EXCLUSIVE) || sh->changing == 0 ||
		!sh->loaded || RecoveryInProgress())
		return;
	sh->changing = 0;
	sh->needs_reload = true;
	ereport(LOG,
			(errmsg("hybrid_index: a change to index \"%s\" failed half-way; it will be loaded again from its files",
					hi_index_name(idx))));
}

