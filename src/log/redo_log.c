/*
 * redo_log.c
 *	  Per-index redo log: durability of index changes without PostgreSQL's
 *	  WAL (the eFIND paper's log manager, Goal 5, generalised).
 *
 * Every change made to an index in memory is appended as a fixed-size
 * record (CRC, LSN, top-level xid, entry) while the change is made, under
 * the index's tree_lock, so log order is the order changes were applied.
 * A transaction that changed an index fsyncs the log up to its last record
 * before it commits; whoever fsyncs covers everybody's earlier records, so
 * concurrent committers share one fsync (group commit).
 *
 * After a crash the index is loaded from its last checkpoint (map file +
 * pages, see page_table.c) and the log is replayed: insertions of
 * transactions that did not commit (clog says so) are skipped, so they can
 * never come back as duplicates or wrong rows; VACUUM's deletions carry no
 * xid and are always applied.  A record is valid only if its CRC matches
 * and its LSN equals its position, which also rejects a stale log left by a
 * crash between writing the map file and truncating the log.
 */
#include "postgres.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "access/transam.h"
#include "access/xlog.h"
#include "miscadmin.h"
#include "port/pg_crc32c.h"
#include "storage/fd.h"
#include "storage/procarray.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/wait_event.h"

#include "base/hi_base.h"
#include "log/redo_log.h"
#include "log/wal_records.h"
#include "storage/storage.h"

/* indexes this transaction logged changes to, and up to where */
typedef struct HiTouched
{
	int			slotno;
	uint32		generation;
	uint64		upto;
} HiTouched;

static HiTouched *touched = NULL;
static int	ntouched = 0;
static int	maxtouched = 0;

static pg_crc32c
rec_crc(const HiLogRecord *rec)
{
	pg_crc32c	crc;

	INIT_CRC32C(crc);
	COMP_CRC32C(crc, (const char *) rec + sizeof(uint32),
				sizeof(HiLogRecord) - sizeof(uint32));
	FIN_CRC32C(crc);
	return crc;
}

static void
remember(HiIndex *idx, uint64 upto)
{
	int			i;

	for (i = 0; i < ntouched; i++)
		if (touched[i].slotno == idx->slotno &&
			touched[i].generation == idx->generation)
		{
			touched[i].upto = Max(touched[i].upto, upto);
			return;
		}
	if (ntouched == maxtouched)
	{
		maxtouched = Max(8, maxtouched * 2);
		touched = touched == NULL ?
			MemoryContextAlloc(TopMemoryContext, sizeof(HiTouched) * maxtouched) :
			repalloc(touched, sizeof(HiTouched) * maxtouched);
	}
	touched[ntouched].slotno = idx->slotno;
	touched[ntouched].generation = idx->generation;
	touched[ntouched].upto = upto;
	ntouched++;
}

/*
 * Write n records at the end of the log, with one write call.  name is the
 * index's name for error messages.  Returns the LSN after the last.
 */
static uint64
append_records(HiIndexShared *sh, HiLogRecord *recs, int n, const char *name)
{
	int			fd = hi_log_fd(sh);
	Size		len = sizeof(HiLogRecord) * n;
	uint64		start;
	uint64		end;
	ssize_t		w;
	int			i;
	XLogRecPtr	redo;
	uint64		walend = 0;

	LWLockAcquire(&sh->log_lock, LW_EXCLUSIVE);
	start = sh->log_insert;
	sh->log_fresh = false;
	redo = hi_wal_logged(sh) ? GetRedoRecPtr() : InvalidXLogRecPtr;
	for (i = 0; i < n; i++)
	{
		recs[i].lsn = start + sizeof(HiLogRecord) * i;
		recs[i].crc = rec_crc(&recs[i]);
		/* WAL first (in log order), so that the log never has what WAL lacks */
		walend = hi_wal_log_record(sh, &recs[i]);
	}

	/*
	 * The first append since WAL's redo pointer moved, when nothing in WAL
	 * after that pointer says yet where this log ends (no SYNCED record of
	 * the log sync worker, no earlier append, no RESTART): its records are
	 * made durable in WAL before the log file gets them.  Crash recovery
	 * then meets them and cuts off what the file holds beyond what WAL
	 * holds (hi_wal.c), records whose transactions never committed and
	 * whose xids may be handed out again.  One WAL flush per index and
	 * checkpoint cycle, paid by a writer; loading an index writes nothing.
	 */
	if (walend != 0 && sh->confirm_redo != redo)
	{
		XLogFlush(walend);
		sh->confirm_redo = redo;
	}
	pgstat_report_wait_start(WAIT_EVENT_DATA_FILE_WRITE);
	w = pwrite(fd, recs, len, (off_t) (start - sh->log_base));
	pgstat_report_wait_end();
	if (w != (ssize_t) len)
	{
		/* a short write sets no errno: the file system is full */
		int			save_errno = w >= 0 ? ENOSPC : errno;

		/*
		 * A partial write is overwritten by the next append; copies of the
		 * log drop what WAL has from start on (hi_wal.c, RESTART).
		 */
		hi_wal_log_restart(sh, start, false);
		LWLockRelease(&sh->log_lock);
		errno = save_errno;
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not append to the redo log of index \"%s\": %m", name),
				 w >= 0 ? errdetail("Only %zd of %zu bytes were written.", w, len) : 0,
				 save_errno == ENOSPC ? errhint("Check free space on the index's tablespace.") : 0));
	}
	sh->log_insert = start + len;
	end = sh->log_insert;
	LWLockRelease(&sh->log_lock);
	pg_atomic_fetch_add_u64(&sh->log_bytes, len);
	return end;
}

/*
 * Append n records the caller filled (type, iskey, flags, xid, key, tid),
 * at most HI_LOG_WRITE_MAX; as hi_log_append otherwise.
 */
void
hi_log_append_records(HiIndex *idx, TransactionId xid, HiLogRecord *recs, int n)
{
	uint64		end;

	Assert(n > 0 && n <= HI_LOG_WRITE_MAX);
	end = append_records(idx->sh, recs, n, hi_index_name(idx));
	if (TransactionIdIsValid(xid))
		remember(idx, end);
}

/*
 * Append one record.  The caller holds tree_lock exclusively and has not
 * yet applied the change: if the write fails, nothing changed.
 */
void
hi_log_append(HiIndex *idx, uint8 type, TransactionId xid, HiKeyKind kind,
			  const HiBox *key, uint8 flags, ItemPointer tid)
{
	HiLogRecord rec;
	uint64		end;

	memset(&rec, 0, sizeof(rec));
	rec.type = type;
	rec.iskey = (uint8) kind;
	rec.xid = xid;
	if (key)
	{
		rec.key = *key;
		rec.flags = flags;
	}
	rec.tid = *tid;
	end = append_records(idx->sh, &rec, 1, hi_index_name(idx));
	if (TransactionIdIsValid(xid))
		remember(idx, end);
}

/*
 * Append the insertions of n entries (at most HI_LOG_WRITE_MAX), in their
 * order, with one write instead of one each (a batch's chunk: a write call
 * per row was a sixth of an insertion's time).  Each record still goes to
 * WAL first.  As for hi_log_append, the caller holds tree_lock exclusively
 * and has applied none of them yet: if the write fails, none is in the log.
 */
void
hi_log_append_inserts(HiIndex *idx, TransactionId xid, const HiKeyItem *items, int n)
{
	HiLogRecord recs[HI_LOG_WRITE_MAX];
	uint64		end;
	int			i;

	Assert(n > 0 && n <= HI_LOG_WRITE_MAX);
	memset(recs, 0, sizeof(HiLogRecord) * n);
	for (i = 0; i < n; i++)
	{
		recs[i].type = HI_LOG_INSERT;
		recs[i].iskey = items[i].kind;
		recs[i].xid = xid;
		if (items[i].kind == HI_KEY_BOX)
		{
			recs[i].key = items[i].key;
			recs[i].flags = items[i].flags;
		}
		recs[i].tid = items[i].tid;
	}
	end = append_records(idx->sh, recs, n, hi_index_name(idx));
	if (TransactionIdIsValid(xid))
		remember(idx, end);
}

/* Make the log durable up to upto (group commit) */
void
hi_log_flush(HiIndexShared *sh, uint64 upto)
{
	uint64		target;

	if (sh->log_flushed >= upto)
		return;
	LWLockAcquire(&sh->flush_lock, LW_EXCLUSIVE);
	if (sh->log_flushed < upto)
	{
		int			rc;

		LWLockAcquire(&sh->log_lock, LW_SHARED);
		target = sh->log_insert;
		LWLockRelease(&sh->log_lock);
		pgstat_report_wait_start(WAIT_EVENT_DATA_FILE_SYNC);
		rc = pg_fdatasync(hi_log_fd(sh));
		pgstat_report_wait_end();
		if (rc != 0)
		{
			LWLockRelease(&sh->flush_lock);
			ereport(data_sync_elevel(ERROR),
					(errcode_for_file_access(),
					 errmsg("could not fsync the redo log of index %u: %m",
							sh->indexoid)));
		}
		sh->log_flushed = target;
	}
	LWLockRelease(&sh->flush_lock);
}

/*
 * VACUUM's deletions are logged: say so in WAL, and make them durable here
 * unless the log sync worker does it before the next checkpoint (WAL holds
 * them before the heap records that free their rows' line pointers).
 */
void
hi_log_flush_inserted(HiIndexShared *sh)
{
	uint64		upto;

	LWLockAcquire(&sh->log_lock, LW_SHARED);
	upto = sh->log_insert;
	LWLockRelease(&sh->log_lock);
	if (!hi_log_sync_active())
		hi_log_flush(sh, upto);
	hi_wal_log_durable(sh, upto);
}

/*
 * The log sync worker, at a checkpoint: every record appended so far (an
 * append holds log_lock from its WAL insert to its write) becomes durable;
 * with log_synced, WAL says up to where (recovery trusts the log that far).
 */
void
hi_log_sync(HiIndexShared *sh, bool log_synced, uint64 redo)
{
	uint64		upto;
	bool		changed;

	LWLockAcquire(&sh->log_lock, LW_SHARED);
	upto = sh->log_insert;
	changed = upto != sh->synced_upto;
	LWLockRelease(&sh->log_lock);
	hi_log_flush(sh, upto);

	/*
	 * A log that did not change since its last SYNCED record needs none:
	 * it holds nothing WAL could have lost, and its next append confirms
	 * its end itself (append_records).  So a checkpoint logs one record
	 * per index written to, not one per index loaded.
	 */
	if (log_synced && changed)
	{
		hi_wal_log_synced(sh, upto);
		LWLockAcquire(&sh->log_lock, LW_EXCLUSIVE);
		sh->synced_upto = upto;
		sh->confirm_redo = Max(sh->confirm_redo, redo);
		LWLockRelease(&sh->log_lock);
	}
}

uint64
hi_log_size(HiIndexShared *sh)
{
	return sh->log_insert - sh->log_base;
}

/*
 * After a checkpoint that took the log below base into its pages: the log
 * restarts at base.  Records appended since the checkpoint read base can
 * only be COMMIT records (the checkpointer holds tree_lock; committers do
 * not take it): they are kept, at the front, so that positions stay those
 * WAL gave them and copies of the log (which have them) agree.
 */
void
hi_log_reset(HiIndexShared *sh, uint64 base)
{
	int			fd;
	Size		tail;
	char	   *buf = NULL;
	bool		ok;

	LWLockAcquire(&sh->flush_lock, LW_EXCLUSIVE);
	LWLockAcquire(&sh->log_lock, LW_EXCLUSIVE);
	Assert(sh->log_insert >= base && base >= sh->log_base);
	tail = (Size) (sh->log_insert - base);
	if ((sh->log_fresh || sh->log_missing) && sh->log_insert == sh->log_base)
	{
		/* a build's new, empty log, or none: nothing to cut or sync */
		sh->log_base = sh->log_insert = sh->log_flushed = base;
		LWLockRelease(&sh->log_lock);
		LWLockRelease(&sh->flush_lock);
		return;
	}
	LWLockRelease(&sh->log_lock);
	LWLockRelease(&sh->flush_lock);
	fd = hi_log_fd(sh);
	LWLockAcquire(&sh->flush_lock, LW_EXCLUSIVE);
	LWLockAcquire(&sh->log_lock, LW_EXCLUSIVE);
	Assert(sh->log_insert >= base && base >= sh->log_base);
	tail = (Size) (sh->log_insert - base);
	if (tail > 0)
	{
		buf = palloc(tail);
		ok = pg_pread(fd, buf, tail, (off_t) (base - sh->log_base)) == (ssize_t) tail;
	}
	else
		ok = true;
	ok = ok && ftruncate(fd, 0) == 0 &&
		(tail == 0 || pg_pwrite(fd, buf, tail, 0) == (ssize_t) tail) &&
		pg_fdatasync(fd) == 0;
	if (buf)
		pfree(buf);
	if (!ok)
	{
		LWLockRelease(&sh->log_lock);
		LWLockRelease(&sh->flush_lock);
		ereport(data_sync_elevel(ERROR),
				(errcode_for_file_access(),
				 errmsg("could not truncate the redo log of index %u: %m",
						sh->indexoid)));
	}
	sh->log_base = base;
	sh->log_insert = base + tail;
	sh->log_flushed = sh->log_insert;
	LWLockRelease(&sh->log_lock);
	LWLockRelease(&sh->flush_lock);
}

/*
 * First pass of replay: the valid prefix of the log (its length in *valid)
 * and the xids that wrote a COMMIT record in it.
 *
 * Why the COMMIT records: a transaction still running at a crash has its
 * index records in the log (written, not fsynced, but the OS may have kept
 * them) while its WAL may be lost; PostgreSQL can then hand its xid to a
 * new transaction, and clog would call the old records committed.  A
 * transaction writes COMMIT only at pre-commit, after flushing the WAL up
 * to that point, so an xid with a COMMIT record can never be reused and
 * clog's verdict on it is the truth.
 */
static HTAB *
committed_xids(HiIndexShared *sh, const char *buf, Size len, Size *valid)
{
	HASHCTL		ctl;
	HTAB	   *set;
	Size		off = 0;

	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = sizeof(TransactionId);
	ctl.entrysize = sizeof(TransactionId);
	ctl.hcxt = CurrentMemoryContext;
	set = hash_create("hybrid_index committed xids", 256, &ctl,
					  HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	while (off + sizeof(HiLogRecord) <= len)
	{
		HiLogRecord rec;

		memcpy(&rec, buf + off, sizeof(rec));
		if (rec.crc != rec_crc(&rec) || rec.lsn != sh->log_base + off)
			break;
		if (rec.type == HI_LOG_COMMIT && TransactionIdIsNormal(rec.xid))
			(void) hash_search(set, &rec.xid, HASH_ENTER, NULL);
		off += sizeof(rec);
	}
	*valid = off;
	return set;
}

/*
 * Does an INSERT of xid count?  On a primary (after a crash or restart) only
 * if the xid wrote a COMMIT record and clog agrees.  On a hot standby the
 * index mirrors the primary's live one, which holds the entries of running
 * transactions too: everything counts except what clog or the running-xacts
 * state already calls aborted (a transaction cut off by a crash of the
 * primary, whose entries that primary no longer has and whose VACUUM will
 * never delete them).  Xids older than clog's horizon are judged by their
 * COMMIT record alone: clog cannot be asked about them.
 */
static bool
insert_counts(TransactionId xid, HTAB *committed, bool standby, bool live)
{
	bool		has_commit;

	if (!TransactionIdIsValid(xid))
		return true;
	/*
	 * A running primary reloading an index after a failed change: a
	 * running xid wrote the record in this server's life (xids of records
	 * from before a restart are in WAL, so they are never handed out
	 * again); its entry must be there when it commits.
	 */
	if (live && TransactionIdIsInProgress(xid))
		return true;
	has_commit = committed != NULL &&
		hash_search(committed, &xid, HASH_FIND, NULL) != NULL;
	if (TransactionIdPrecedes(xid, HI_TRANSAM->oldestClogXid))
		return has_commit || (standby && committed == NULL);
	if (standby)
		return TransactionIdIsInProgress(xid) || TransactionIdDidCommit(xid);

	/*
	 * A primary after a restart: of the transactions that wrote records
	 * before it, only prepared ones still run (PREPARE wrote their COMMIT
	 * record, as a commit does); their entries must be there when COMMIT
	 * PREPARED makes their rows visible.
	 */
	if (has_commit && TransactionIdIsInProgress(xid))
		return true;
	return has_commit && TransactionIdDidCommit(xid);
}

/* Apply the records of buf that count; returns how many were applied */
static uint64
apply_records(HiIndex *idx, const char *buf, Size len, HTAB *committed,
			  bool standby, bool live, hi_log_apply_fn apply)
{
	Size		pos;
	uint64		applied = 0;

	for (pos = 0; pos + sizeof(HiLogRecord) <= len; pos += sizeof(HiLogRecord))
	{
		HiLogRecord rec;

		memcpy(&rec, buf + pos, sizeof(rec));
		if (rec.type == HI_LOG_DELETE || rec.type == HI_LOG_PAYLOAD_DEL ||
			((rec.type == HI_LOG_INSERT || rec.type == HI_LOG_PAYLOAD) &&
			 insert_counts(rec.xid, committed, standby, live)))
		{
			apply(idx, &rec);
			applied++;
		}
		if ((pos / sizeof(HiLogRecord) & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	return applied;
}

/*
 * Replay the log into a freshly loaded index.  The caller holds tree_lock
 * exclusively and has set log_base to the checkpoint's LSN.  Returns the
 * number of records applied.  The log's valid prefix is kept; a torn or
 * stale tail is cut off so later appends continue right after it.  During
 * recovery (a hot standby) WAL replay owns the file: nothing is cut, and
 * log_insert says how far this index has followed it (hi_log_follow).
 */
uint64
hi_log_replay(HiIndex *idx, hi_log_apply_fn apply, bool live)
{
	HiIndexShared *sh = idx->sh;
	char	   *path = hi_file_path(sh->spcoid[HI_TIER_FLASH], sh->dboid,
									sh->spcoid[HI_TIER_FLASH], sh->relnumber, "log");
	Size		len = 0;
	char	   *buf = hi_read_whole_file(path, &len);
	Size		off = 0;
	uint64		applied = 0;
	bool		standby = RecoveryInProgress();

	/* no file: an index built since its last append, never appended to */
	sh->log_missing = buf == NULL;
	if (buf != NULL)
	{
		HTAB	   *committed = committed_xids(sh, buf, len, &off);

		applied = apply_records(idx, buf, off, committed, standby, live, apply);
		hash_destroy(committed);
		pfree(buf);
	}
	pfree(path);

	if (off != len && !standby)
	{
		int			fd = hi_log_fd(sh);

		if (ftruncate(fd, off) != 0)
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not truncate the redo log of index %u: %m",
							sh->indexoid)));
	}
	sh->log_insert = sh->log_base + off;
	sh->log_flushed = sh->log_insert;
	return applied;
}

/*
 * Hot standby: has WAL replay written records beyond what this index has
 * applied?  A cheap test without locks, for every scan's open.
 */
bool
hi_log_has_more(HiIndexShared *sh)
{
	struct stat st;

	if (fstat(hi_log_fd(sh), &st) != 0)
		return false;
	return (uint64) st.st_size >= sh->log_insert - sh->log_base + sizeof(HiLogRecord);
}

/*
 * Hot standby: apply the valid records WAL replay appended since the index
 * was loaded or last followed (caller holds tree_lock exclusively).  A
 * record still being written fails its CRC and waits for the next call.
 */
uint64
hi_log_follow(HiIndex *idx, hi_log_apply_fn apply)
{
	HiIndexShared *sh = idx->sh;
	int			fd = hi_log_fd(sh);
	uint64		applied = 0;
	char	   *buf = palloc(sizeof(HiLogRecord) * 1024);

	for (;;)
	{
		ssize_t		n = pg_pread(fd, buf, sizeof(HiLogRecord) * 1024,
								 (off_t) (sh->log_insert - sh->log_base));
		Size		valid = 0;

		if (n < 0)
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not read the redo log of index \"%s\": %m",
							hi_index_name(idx))));
		while (valid + sizeof(HiLogRecord) <= (Size) n)
		{
			HiLogRecord rec;

			memcpy(&rec, buf + valid, sizeof(rec));
			if (rec.crc != rec_crc(&rec) || rec.lsn != sh->log_insert + valid)
				break;
			valid += sizeof(rec);
		}
		if (valid == 0)
			break;
		applied += apply_records(idx, buf, valid, NULL, true, false, apply);
		sh->log_insert += valid;
		sh->log_flushed = sh->log_insert;
	}
	pfree(buf);
	return applied;
}

/*
 * A promoted server takes over the log its hot standby's readers followed
 * (caller holds tree_lock exclusively, the readers having applied it up to
 * log_insert): what lies beyond (a record WAL replay was writing when
 * recovery ended) goes, so that appends continue right after the last
 * record applied, and nothing in WAL after the redo pointer says yet where
 * the log ends.
 */
void
hi_log_take_over(HiIndexShared *sh)
{
	int			fd = hi_log_fd(sh);
	struct stat st;

	if (fstat(fd, &st) != 0 ||
		((uint64) st.st_size > sh->log_insert - sh->log_base &&
		 (ftruncate(fd, (off_t) (sh->log_insert - sh->log_base)) != 0 ||
		  pg_fdatasync(fd) != 0)))
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not truncate the redo log of index %u: %m",
						sh->indexoid)));
	LWLockAcquire(&sh->log_lock, LW_EXCLUSIVE);
	sh->log_flushed = sh->log_insert;
	sh->confirm_redo = 0;
	sh->synced_upto = sh->log_insert;
	LWLockRelease(&sh->log_lock);
}

/*
 * Up to where the redo log of a relfilenode holds changes on this server's
 * disk: the checkpoint its map file reflects (*base), then the log's valid
 * records.  For WAL redo, so never an ERROR: a file that cannot be read
 * counts as holding nothing.  *exists: the index has a map file here.
 * *newer: the log may begin after the map's checkpoint (only a copy makes
 * that: its map file was copied before a checkpoint, its log after it, as
 * a base backup may): its first valid record is beyond the map's
 * position, or it has none (a checkpoint emptied it after the map was
 * copied).  Such a copy that lacks records is healed by the next MAP
 * record in WAL, whose PAGES records carry every page written since the
 * map's checkpoint; without one it keeps refusing.
 */
uint64
hi_log_copy_end(Oid dboid, Oid flashspc, Oid relnumber, uint64 *base, bool *exists,
				bool *newer)
{
	char	   *mpath = hi_file_path(flashspc, dboid, flashspc, relnumber, "map");
	char	   *lpath = hi_file_path(flashspc, dboid, flashspc, relnumber, "log");
	uint64		off = 0;
	int			fd;

	*base = hi_map_ckpt_position(mpath, exists);
	*newer = false;
	fd = *exists ? open(lpath, O_RDONLY | PG_BINARY, 0) : -1;
	if (fd >= 0)
	{
		HiLogRecord rec;
		bool		first = true;

		while (read(fd, &rec, sizeof(rec)) == sizeof(rec) &&
			   rec.crc == rec_crc(&rec))
		{
			if (first && rec.lsn > *base)
				*newer = true;
			first = false;
			if (rec.lsn != *base + off)
				break;
			off += sizeof(rec);
		}
		if (first)
			*newer = true;
		close(fd);
	}
	pfree(mpath);
	pfree(lpath);
	return *base + off;
}

/*
 * PRE_COMMIT: mark the xid committed in every index log it wrote to.  WAL
 * holds the records (LOG, written before each append), and the commit
 * record's flush makes them durable: the commit pays that one flush.  Crash
 * recovery writes into each log what WAL has and the log lost, and cuts
 * off what WAL lost (hi_wal.c); records older than the checkpoint recovery
 * starts from were made durable by the log sync worker before that
 * checkpoint completed.
 *
 * Only while the worker is not running does the committer make its logs
 * durable itself, as before: first its WAL (so that an xid with a COMMIT
 * record in a log can never be handed out again after a crash), then the
 * logs.
 */
void
hi_log_at_precommit(void)
{
	TransactionId xid = GetTopTransactionIdIfAny();
	bool		self_sync;
	int			i;

	if (ntouched == 0)
		return;
	self_sync = !hi_log_sync_active();
	if (self_sync && TransactionIdIsValid(xid) && XactLastRecEnd != InvalidXLogRecPtr)
		XLogFlush(XactLastRecEnd);
	for (i = 0; i < ntouched; i++)
	{
		HiIndexShared *sh = &hi_shared->indexes[touched[i].slotno];
		uint64		upto = touched[i].upto;

		if (!sh->in_use || sh->generation != touched[i].generation)
			continue;
		/*
		 * Also when an index checkpoint took the records into its pages: a
		 * copy of the log (a standby) has them and needs the COMMIT
		 */
		if (TransactionIdIsValid(xid))
		{
			HiLogRecord rec;
			char		name[32];

			memset(&rec, 0, sizeof(rec));
			rec.type = HI_LOG_COMMIT;
			rec.xid = xid;
			snprintf(name, sizeof(name), "%u", sh->indexoid);
			upto = append_records(sh, &rec, 1, name);
		}
		if (self_sync)
			hi_log_flush(sh, upto);
	}
	ntouched = 0;
}

void
hi_log_at_xact_end(void)
{
	ntouched = 0;
}
