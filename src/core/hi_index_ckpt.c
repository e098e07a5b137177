/*
 * hi_index_ckpt.c
 *	  Index checkpoints: every dirty page written, the tier files synced,
 *	  the pages written since the previous one and the new map file in WAL,
 *	  the map file replaced, the log emptied, the free tails cut off; and
 *	  a build's deferred sync, the detached checkpoints of the log sync
 *	  worker (shutdown) and of a slot given back.
 */
#include "postgres.h"

#include "access/xlog.h"
#include "access/xlog_internal.h"
#include "miscadmin.h"
#include "storage/fd.h"
#include "utils/memutils.h"
#include "utils/wait_event.h"

#include "base/hi_base.h"
#include "core/hi_core.h"
#include "cache/page_cache.h"
#include "log/redo_log.h"
#include "storage/storage.h"

/*
 * Flush all WAL inserted so far.  GetXLogInsertRecPtr() points past the
 * page header when the insert position sits at a page boundary, and
 * XLogFlush() cannot flush a page nobody has begun: step back to the
 * boundary, which is where the last record ended.
 */
static void
flush_all_wal(void)
{
	XLogRecPtr	upto = GetXLogInsertRecPtr();

	if (XLogSegmentOffset(upto, wal_segment_size) == SizeOfXLogLongPHD)
		upto -= SizeOfXLogLongPHD;
	else if (upto % XLOG_BLCKSZ == SizeOfXLogShortPHD)
		upto -= SizeOfXLogShortPHD;
	XLogFlush(upto);
}

/*
 * A checkpoint's pages go to WAL before its map file (hi_wal.c, PAGES):
 * those written since the previous checkpoint, read back from the tier
 * files now that they are durable.  Copies (standbys, restored backups)
 * then get every page the map file references.
 */
static void
log_fresh_pages(HiIndex *idx)
{
	HiIndexShared *sh = idx->sh;
	Size		n;
	uint32	   *pagenos;
	int			chunk = 64;
	char	   *mem;
	char	  **bufs;
	uint32	   *ptes;
	Size		off;
	int			i;

	if (!sh->wal_pages || !sh->wal_logged)
		return;
	pagenos = hi_pt_fresh_pages(sh, &n);
	mem = palloc((Size) chunk * sh->meta.page_size + HI_IO_ALIGN);
	bufs = palloc(sizeof(char *) * chunk);
	ptes = palloc(sizeof(uint32) * chunk);
	for (i = 0; i < chunk; i++)
		bufs[i] = (char *) TYPEALIGN(HI_IO_ALIGN, mem) + (Size) i * sh->meta.page_size;
	for (off = 0; off < n; off += chunk)
	{
		int			k = (int) Min((Size) chunk, n - off);

		hi_store_read_pages(sh, hi_index_name(idx), pagenos + off, k, bufs, ptes);
		hi_wal_log_pages(sh, ptes, bufs, k);
		CHECK_FOR_INTERRUPTS();
	}
	pfree(ptes);
	pfree(bufs);
	pfree(mem);
	pfree(pagenos);
}

/*
 * The durable part of an index checkpoint (ckpt_lock held exclusively, no
 * page dirty): fsync the tier files, log the pages written since the last
 * one and the new map to WAL, replace the map file, empty the log, free
 * the superseded slots and cut the free tail of each tier file.
 */
static void
write_checkpoint(HiIndex *idx)
{
	HiIndexShared *sh = idx->sh;
	int			t;

	/* a build's files may wait for the next checkpoint (hi_index_built_sync) */
	for (t = 0; t < HI_NUM_TIERS && !sh->build_sync_deferred; t++)
	{
		int			rc;
		int			fd = hi_file_open_existing(sh, t);

		if (fd < 0)
			continue;			/* a fast tier that received no page yet */
		pgstat_report_wait_start(WAIT_EVENT_DATA_FILE_SYNC);
		rc = pg_fdatasync(fd);
		pgstat_report_wait_end();
		if (rc != 0)
			ereport(data_sync_elevel(ERROR),
					(errcode_for_file_access(),
					 errmsg("could not fsync tier %s of index \"%s\": %m",
							hi_tier_suffix(t), hi_index_name(idx))));
	}

	log_fresh_pages(idx);
	LWLockAcquire(&sh->log_lock, LW_SHARED);
	sh->meta.ckpt_lsn = sh->log_insert;
	LWLockRelease(&sh->log_lock);
	hi_pt_settle(sh);
	{
		Size		len;
		char	   *image = hi_map_image(sh, &len);

		/* copies get the map from WAL before the file here changes */
		hi_wal_log_map(sh, image, len, sh->meta.ckpt_lsn);
		hi_map_write_image(sh, image, len, !sh->build_sync_deferred);
		pfree(image);
	}
	hi_log_reset(sh, sh->meta.ckpt_lsn);
	hi_pt_release_pending(sh);
	/* give the free tail of each tier file back to the file system */
	for (t = 0; t < HI_NUM_TIERS; t++)
		hi_file_truncate(sh, t, hi_pt_trim(sh, t));
	hi_files_report_size(sh, false);
}

/*
 * Checkpoint: make the index's current state its on-disk base and empty
 * its log.  Caller holds tree_lock exclusively.
 */
static void
checkpoint(HiIndex *idx, bool built)
{
	HiIndexShared *sh = idx->sh;
	int			t;

	/*
	 * Heap tuples our entries point at must be durable before our pages.
	 * Not for the end of a build: its relfilenode exists only once its
	 * transaction commits, and the commit flushes WAL.
	 */
	if (!RecoveryInProgress() && !built)
		flush_all_wal();

	idx->pages->flush_all(idx);

	/*
	 * No page is dirty now and none can be dirtied (tree_lock), but clean
	 * pages may still move between tiers (evictions that migrate, reclaim).
	 * ckpt_lock waits for those and holds new ones off until the map file
	 * is written, so it never points at a slot that is not yet durable,
	 * and no slot the map file references is freed while being read.
	 */
	LWLockAcquire(&sh->ckpt_lock, LW_EXCLUSIVE);
	PG_TRY();
	{
		write_checkpoint(idx);

		/*
		 * Copy-on-write leaves current pages wherever free slots were, so
		 * after most pages were rewritten the live ones sit at the end of
		 * a file up to twice their size, above the slots this checkpoint
		 * just freed.  A second round moves them down into those slots
		 * and writes the map again, so that the end of the file is cut
		 * off now (a primary's files; copies follow the maps in WAL).
		 */
		if (!RecoveryInProgress() && hi_pt_compaction_wanted(sh))
		{
			int			moved = 0;

			for (t = 0; t < HI_NUM_TIERS; t++)
				moved += hi_tier_compact(sh, t);
			if (moved > 0)
				write_checkpoint(idx);
		}
	}
	PG_FINALLY();
	{
		hi_lwlock_release_cleanup(&sh->ckpt_lock);
	}
	PG_END_TRY();
	pg_atomic_fetch_add_u64(&sh->checkpoints, 1);
}

void
hi_index_checkpoint(HiIndex *idx)
{
	checkpoint(idx, false);
}

/*
 * The checkpoint that ends ambuild (tree_lock held exclusively).  With
 * defer_sync (the build goes to WAL as an image and the log sync worker
 * runs) its files are written but not synced: hi_index_built_sync follows
 * once the image is in WAL.
 */
void
hi_index_checkpoint_built(HiIndex *idx, bool defer_sync)
{
	idx->sh->build_sync_deferred = defer_sync && hi_log_sync_active();
	checkpoint(idx, true);
}

/*
 * A build's files whose sync its checkpoint left out, once its image is in
 * WAL (image_start: the insert position before its first record): until
 * a checkpoint's redo pointer passes image_start, crash recovery writes
 * them from WAL, so they only need to be durable before such a checkpoint
 * completes, and the log sync worker syncs the listed sets when one
 * begins (storage/tier_defer.c).  If one began since image_start, the
 * worker may have passed the list already: sync here.  A checkpoint
 * beginning later sees the set listed (listed before the check).
 */
void
hi_index_built_sync(HiIndex *idx, XLogRecPtr image_start)
{
	HiIndexShared *sh = idx->sh;

	if (!sh->build_sync_deferred)
		return;
	sh->build_sync_deferred = false;
	if (!hi_files_defer_sync(sh) || !hi_log_sync_active() ||
		GetRedoRecPtr() > image_start)
	{
		pgstat_report_wait_start(WAIT_EVENT_DATA_FILE_SYNC);
		hi_files_sync_built(sh);
		pgstat_report_wait_end();
	}
}

/*
 * At shutdown (the log sync worker, after the backends were told to go and
 * before PostgreSQL's shutdown checkpoint): checkpoint every loaded index
 * whose log holds records, so that the next start loads each from its map
 * file with nothing to replay.  The worker has no database, so the handle
 * has no relation: messages name the index by OID and the access methods
 * read the server's settings instead of reloptions (only placement
 * parameters of the pages written here can differ).  An index that fails
 * is reported and left to replay its log at its next use.
 */
/*
 * Checkpoint an index through a handle without a relation (tree_lock held
 * exclusively): the log sync worker's at shutdown, and a slot given back
 * to make room (core/hi_slots.c).  False if its access method is unknown.
 */
bool
hi_index_checkpoint_detached(HiIndexShared *sh)
{
	HiIndex		idx;
	const HiAmOps *ops = hi_am_ops_by_kind(sh->meta.am);

	if (ops == NULL)
		return false;
	memset(&idx, 0, sizeof(idx));
	idx.sh = sh;
	idx.slotno = sh - hi_shared->indexes;
	idx.generation = sh->generation;
	idx.page_size = sh->meta.page_size;
	idx.pages = ops->source;
	hi_index_checkpoint(&idx);
	return true;
}

int
hi_index_checkpoint_all(void)
{
	int			i;
	int			done = 0;
	MemoryContext cxt = CurrentMemoryContext;

	for (i = 0; i < hi_shared->max_indexes; i++)
	{
		HiIndexShared *sh = &hi_shared->indexes[i];
		uint32		gen;

		LWLockAcquire(&hi_shared->registry_lock, LW_SHARED);
		if (!sh->in_use || sh->evicting || !sh->loaded || sh->building ||
			sh->loaded_in_recovery || hi_log_size(sh) == 0)
		{
			LWLockRelease(&hi_shared->registry_lock);
			continue;
		}
		gen = sh->generation;
		LWLockRelease(&hi_shared->registry_lock);

		PG_TRY();
		{
			LWLockAcquire(&sh->tree_lock, LW_EXCLUSIVE);
			/* still the same relfilenode, loaded (a drop waits for tree_lock) */
			if (sh->in_use && sh->loaded && !sh->building &&
				sh->generation == gen && hi_index_checkpoint_detached(sh))
				done++;
			LWLockRelease(&sh->tree_lock);
		}
		PG_CATCH();
		{
			/* no transaction here: release what the failed checkpoint held */
			LWLockReleaseAll();
			MemoryContextSwitchTo(cxt);
			EmitErrorReport();
			FlushErrorState();
		}
		PG_END_TRY();
	}
	return done;
}

/* After a logged change (tree_lock held): checkpoint if the log is long */
void
hi_index_after_change(HiIndex *idx)
{
	int			kb = idx->sh->checkpoint_log_kb > 0 ? idx->sh->checkpoint_log_kb :
		hi_checkpoint_log_kb;

	/* the checkpoint empties the log: no other change may run beside it */
	Assert(LWLockHeldByMeInMode(&idx->sh->tree_lock, LW_EXCLUSIVE));

	if (hi_log_size(idx->sh) >= (uint64) kb * 1024)
		hi_index_checkpoint(idx);
}
