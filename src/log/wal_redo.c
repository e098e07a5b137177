/*
 * wal_redo.c
 *	  Redo of hybrid_index's WAL records (the startup process: crash
 *	  recovery, standbys, restored backups, PITR).  What each record does
 *	  to this server's copy of an index's files is said in hi_wal.c's
 *	  header.  No catalogs here, and nothing raises an ERROR: replay must
 *	  never stop on one of our records; what cannot be done is logged and
 *	  the index marked stale (it then refuses with a REINDEX hint).
 */
#include "postgres.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "access/xlog.h"
#include "access/xlog_internal.h"
#include "common/file_perm.h"
#include "lib/ilist.h"
#include "miscadmin.h"
#include "storage/fd.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

#include "base/hi_base.h"
#include "log/redo_log.h"
#include "log/wal_records.h"
#include "log/wal_redo_int.h"
#include "storage/storage.h"

/*
 * Copies with a descriptor open, most recently used first.  Replay of
 * thousands of indexes keeps within a bounded number of descriptors
 * (hi_copy_make_room): the least recently used copy's are made durable and
 * closed, and opened again when a record needs them.
 */
static dlist_head open_copies = DLIST_STATIC_INIT(open_copies);
static int	nopen_copy_fds = 0;

/* relfilenodes seen by this replay; nobody else changes their files */
static HTAB *copies = NULL;

/* some copy has writes not yet fsynced (sync_all_copies) */
bool		hi_copies_unsynced = false;

static void sync_all_copies(void);

/* core's exclusive access to a relfilenode's files (hi_copy_exclusive) */
hi_wal_exclusive_fn hi_redo_exclusive_hook = NULL;

void
hi_wal_set_exclusive_hook(hi_wal_exclusive_fn fn)
{
	hi_redo_exclusive_hook = fn;
}

CopyState *
hi_copy_state(const xl_hi_ident *id)
{
	CopyKey		key;
	CopyState  *c;
	bool		found;

	if (copies == NULL)
	{
		HASHCTL		ctl;

		memset(&ctl, 0, sizeof(ctl));
		ctl.keysize = sizeof(CopyKey);
		ctl.entrysize = sizeof(CopyState);
		ctl.hcxt = TopMemoryContext;
		copies = hash_create("hybrid_index redo", 64, &ctl,
							 HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	memset(&key, 0, sizeof(key));
	key.dboid = id->dboid;
	key.spcoid = id->spcoid;
	key.relnumber = id->relnumber;
	c = hash_search(copies, &key, HASH_ENTER, &found);
	if (!found)
	{
		c->known = false;
		c->stale = false;
		c->gap = false;
		c->gap_upto = 0;
		c->unsynced = false;
		c->confirmed = 0;
		c->fd = -1;
		c->pfd = -1;
		c->in_lru = false;
		c->pend_known = false;
		c->pend_unsynced = false;
		c->pend_end = 0;
	}
	if (!c->known)
	{
		c->end = hi_log_copy_end(id->dboid, id->spcoid, id->relnumber,
								 &c->base, &c->exists, &c->healable);
		c->known = true;
	}
	return c;
}

char *
hi_copy_path(const CopyState *c, Oid dirspc, const char *suffix)
{
	return hi_file_path(dirspc, c->key.dboid, c->key.spcoid, c->key.relnumber, suffix);
}

static void
copy_close(CopyState *c)
{
	if (c->fd >= 0)
	{
		close(c->fd);
		ReleaseExternalFD();
		nopen_copy_fds--;
	}
	c->fd = -1;
	if (c->pfd >= 0)
	{
		close(c->pfd);
		ReleaseExternalFD();
		nopen_copy_fds--;
	}
	c->pfd = -1;
	c->pend_known = false;
	c->pend_unsynced = false;
	if (c->in_lru)
		dlist_delete(&c->lru);
	c->in_lru = false;
}

static void sync_copy(CopyState *c);

/*
 * Before c opens one more descriptor: close those of the least recently
 * used other copies, durable first (what they appended since their last
 * fsync is synced now rather than at the next restartpoint).  A third of
 * the descriptors PostgreSQL leaves this process, as for other external
 * ones (fd.c), and room for hi_copy_apply_pending's tier files.
 */
void
hi_copy_make_room(CopyState *c)
{
	int			budget = Max(4, max_safe_fds / 3 - 8);

	while (nopen_copy_fds >= budget && !dlist_is_empty(&open_copies))
	{
		CopyState  *victim = dlist_tail_element(CopyState, lru, &open_copies);

		if (victim == c)
			break;
		sync_copy(victim);
		hi_copy_sync_pending(victim);
		copy_close(victim);
	}
	if (c->in_lru)
		dlist_delete(&c->lru);
	dlist_push_head(&open_copies, &c->lru);
	c->in_lru = true;
}

/* A long-lived descriptor of c (its log or pending file) was opened */
int
hi_copy_opened(int fd)
{
	if (fd >= 0)
	{
		ReserveExternalFD();
		nopen_copy_fds++;
	}
	return fd;
}

/* One of a copy's files, opened (made if missing) for writing; -1 and a WARNING if impossible */
int
hi_copy_open_file(const CopyState *c, Oid dirspc, const char *suffix)
{
	char	   *path = hi_copy_path(c, dirspc, suffix);
	int			fd = open(path, O_RDWR | O_CREAT | PG_BINARY, pg_file_create_mode);

	if (fd < 0)
		ereport(WARNING,
				(errcode_for_file_access(),
				 errmsg("hybrid_index: could not open \"%s\" for WAL replay: %m", path)));
	pfree(path);
	return fd;
}

/* The copy's log, opened for writing; -1 (and a WARNING) if impossible */
int
hi_copy_log_fd(CopyState *c)
{
	if (c->fd < 0)
	{
		hi_copy_make_room(c);
		c->fd = hi_copy_opened(hi_copy_open_file(c, c->key.spcoid, "log"));
	}
	return c->fd;
}

static void request_reload(const CopyState *c);

void
hi_copy_mark_stale(XLogReaderState *record, const xl_hi_ident *id, CopyState *c,
		   const char *what)
{
	char	   *why;

	if (c->stale && !c->gap)
		return;
	why = psprintf("WAL at %X/%X %s; this copy of its redo log ends at position "
				   UINT64_FORMAT ".\n", LSN_FORMAT_ARGS(record->ReadRecPtr), what, c->end);
	hi_files_mark_stale(id->dboid, id->spcoid, id->relnumber, why);
	pfree(why);
	c->stale = true;
	c->gap = false;
	ereport(LOG,
			(errmsg("hybrid_index: index %u (relfilenode %u) lacks changes replayed from WAL and will need REINDEX",
					id->indexoid, id->relnumber)));

	/*
	 * A hot standby's readers that loaded it load it again, and so meet
	 * the marker and refuse, instead of answering from a state that lacks
	 * what WAL carried; so does a promoted server's first use (it would
	 * otherwise take their state over).  Inside a checkpoint's redo
	 * (hi_copy_exclusive, registry_lock held) the readers' state is
	 * forgotten already.
	 */
	if (hi_shared == NULL || !LWLockHeldByMe(&hi_shared->registry_lock))
		request_reload(c);
}

/*
 * Hot standby readers that loaded this index load it again at their next
 * open (core/hi_index.c): replay changed its files under them.
 */
static void
request_reload(const CopyState *c)
{
	int			i;

	if (hi_shared == NULL)
		return;
	LWLockAcquire(&hi_shared->registry_lock, LW_SHARED);
	i = hi_slot_hash_find(c->key.dboid, c->key.relnumber);
	if (i >= 0)
		pg_atomic_fetch_add_u32(&hi_shared->indexes[i].reload_requests, 1);
	LWLockRelease(&hi_shared->registry_lock);
}

/*
 * A record that says the log reaches pos: if this copy ends short of it,
 * it lacks records WAL no longer has; the index is marked stale (true).
 */
static bool
copy_lacks(XLogReaderState *record, const xl_hi_ident *id, CopyState *c,
		   uint64 pos, const char *what)
{
	char	   *why;

	if (pos <= c->end)
		return false;
	if (c->gap)
	{
		c->gap_upto = Max(c->gap_upto, pos);
		return true;
	}
	why = psprintf("%s of index %u at redo log position " UINT64_FORMAT,
				   what, id->indexoid, pos);
	if (c->healable)
	{
		/*
		 * A base backup copied the map file before a checkpoint of the
		 * index and its log after it: the checkpoint's MAP record follows
		 * in WAL (it was written after the copy began) and makes what the
		 * copy lacks unnecessary.  Until then the index refuses.
		 */
		char	   *text = psprintf("WAL at %X/%X %s; this copy's map file is older than its redo log, and a checkpoint of the index later in WAL is awaited.\n",
									LSN_FORMAT_ARGS(record->ReadRecPtr), why);

		hi_files_mark_stale(id->dboid, id->spcoid, id->relnumber, text);
		pfree(text);
		c->stale = true;
		c->gap = true;
		c->gap_upto = pos;
		ereport(LOG,
				(errmsg("hybrid_index: index %u (relfilenode %u) lacks changes its map file is older than; a checkpoint of it later in WAL is awaited",
						id->indexoid, id->relnumber)));
	}
	else
		hi_copy_mark_stale(record, id, c, why);
	pfree(why);
	return true;
}

/* A MAP record reached gap_upto: the copy lacks nothing any more */
void
hi_copy_close_gap(CopyState *c)
{
	char	   *stale = hi_copy_path(c, c->key.spcoid, "stale");

	if (unlink(stale) == 0)
		hi_fsync_dir_of(stale);
	pfree(stale);
	c->stale = false;
	c->gap = false;
	ereport(LOG,
			(errmsg("hybrid_index: relfilenode %u has every change again: WAL replayed a checkpoint of it",
					c->key.relnumber)));
}

/* fdatasync one of a copy's files if written since (what: for the WARNING) */
void
hi_copy_sync_file(const CopyState *c, int fd, bool *unsynced, const char *what)
{
	if (*unsynced && fd >= 0)
	{
		if (pg_fdatasync(fd) != 0)
			ereport(WARNING,
					(errcode_for_file_access(),
					 errmsg("hybrid_index: could not fsync the %s of relfilenode %u: %m",
							what, c->key.relnumber)));
		*unsynced = false;
	}
}

static void
sync_copy(CopyState *c)
{
	hi_copy_sync_file(c, c->fd, &c->unsynced, "redo log");
}

static void
confirm(CopyState *c, uint64 pos)
{
	c->confirmed = Max(c->confirmed, pos);
}

static void
redo_log(XLogReaderState *record, const xl_hi_log *xl)
{
	CopyState  *c = hi_copy_state(&xl->id);
	uint64		pos = xl->rec.lsn;
	int			fd;

	/* no files: the index refuses by itself (its map file is missing) */
	if (!c->exists)
		return;
	if (c->gap)
		c->gap_upto = Max(c->gap_upto, pos + sizeof(HiLogRecord));
	if (c->stale)
		return;
	if (pos < c->end)
	{
		/* the log has it (a log gets WAL's records in WAL's order) */
		confirm(c, pos + sizeof(HiLogRecord));
		return;
	}
	if (copy_lacks(record, &xl->id, c, pos, "holds a record"))
	{
		if (c->gap)
			c->gap_upto = Max(c->gap_upto, pos + sizeof(HiLogRecord));
		return;
	}
	fd = hi_copy_log_fd(c);
	if (fd < 0 ||
		pg_pwrite(fd, &xl->rec, sizeof(HiLogRecord), (off_t) (pos - c->base)) != sizeof(HiLogRecord))
	{
		hi_copy_mark_stale(record, &xl->id, c, "has a redo log record this server could not write");
		return;
	}
	c->end += sizeof(HiLogRecord);
	c->unsynced = true;
	hi_copies_unsynced = true;
	confirm(c, c->end);
	/* a committed transaction's records are durable here before its commit is */
	if (xl->rec.type == HI_LOG_COMMIT)
		sync_copy(c);
}

static void
redo_durable(XLogReaderState *record, const xl_hi_durable *xl)
{
	CopyState  *c = hi_copy_state(&xl->id);

	if (!c->exists || c->stale)
		return;
	if (copy_lacks(record, &xl->id, c, xl->upto, "records the changes"))
		return;
	confirm(c, xl->upto);
	sync_copy(c);
}

/*
 * The primary's log continues at position: beyond it this copy may hold
 * records the primary's log lost (a crash cut off transactions that never
 * committed, or an append failed): they go.  A copy that ends short of it
 * lacks records WAL no longer has.
 */
static void
redo_restart(XLogReaderState *record, const xl_hi_restart *xl)
{
	CopyState  *c = hi_copy_state(&xl->id);
	int			fd;

	if (!c->exists || c->stale || xl->position < c->base)
		return;

	/*
	 * The primary loaded the index again from its files: entries of
	 * transactions a crash cut off are gone from it, and its VACUUM will
	 * never delete them.  A hot standby's readers hold them: they load it
	 * again too (with the same judgement of those transactions).
	 */
	request_reload(c);
	if (xl->position == c->end)
	{
		confirm(c, c->end);
		return;
	}
	if (copy_lacks(record, &xl->id, c, xl->position, "continues the log"))
		return;
	fd = hi_copy_log_fd(c);
	if (fd < 0 || ftruncate(fd, (off_t) (xl->position - c->base)) != 0)
	{
		hi_copy_mark_stale(record, &xl->id, c, "cuts a redo log this server could not cut");
		return;
	}
	c->end = xl->position;
	c->unsynced = true;
	hi_copies_unsynced = true;
	c->confirmed = c->end;
}

/*
 * The primary's log was durable up to position when a checkpoint began:
 * its records below it are to be trusted (those older than the checkpoint
 * are not in the WAL replayed here).
 */
static void
redo_synced(XLogReaderState *record, const xl_hi_synced *xl)
{
	CopyState  *c = hi_copy_state(&xl->id);

	/* a restartpoint may follow: it must find what redo wrote durable */
	sync_all_copies();
	if (!c->exists || c->stale || xl->position < c->base)
		return;
	if (copy_lacks(record, &xl->id, c, xl->position, "says the log was durable"))
		return;
	confirm(c, xl->position);
}

/*
 * A checkpoint begins on the primary: what redo wrote becomes durable.
 * Once per checkpoint in effect: a SYNCED record per index written to
 * comes in a burst, and only the first finds anything unsynced.
 */
static void
sync_all_copies(void)
{
	HASH_SEQ_STATUS st;
	CopyState  *c;

	if (copies == NULL || !hi_copies_unsynced)
		return;
	hi_copies_unsynced = false;
	hash_seq_init(&st, copies);
	while ((c = hash_seq_search(&st)) != NULL)
	{
		sync_copy(c);
		hi_copy_sync_pending(c);
	}
}

/* The database directory of a tablespace, made if missing; false on failure */
static bool
ensure_db_dir(Oid spcoid, Oid dboid)
{
	char	   *dbpath = GetDatabasePath(dboid, spcoid);
	char	   *dir = psprintf("%s/%s", DataDir, dbpath);
	struct stat st;
	bool		ok = true;

	if (stat(dir, &st) != 0)
	{
		/* a tablespace's version directory may be missing too */
		char	   *parent = pstrdup(dir);

		*strrchr(parent, '/') = '\0';
		if (stat(parent, &st) != 0)
			(void) MakePGDirectory(parent);
		if (MakePGDirectory(dir) != 0 && errno != EEXIST)
		{
			ereport(WARNING,
					(errcode_for_file_access(),
					 errmsg("hybrid_index: could not create directory \"%s\" for WAL replay: %m", dir)));
			ok = false;
		}
		pfree(parent);
	}
	pfree(dir);
	pfree(dbpath);
	return ok;
}

static void
redo_image(XLogReaderState *record, const xl_hi_image *xl, const char *data)
{
	CopyState  *c = hi_copy_state(&xl->id);
	Oid			dirspc = xl->file == HI_IMAGE_OPTANE ? xl->optspc : xl->id.spcoid;
	const char *suffix = xl->file == HI_IMAGE_FLASH ? "flash" :
		xl->file == HI_IMAGE_OPTANE ? "optane" : "map";
	char	   *path;
	int			fd;
	bool		ok;
	bool		lazy;

	if (!ensure_db_dir(dirspc, xl->id.dboid))
	{
		hi_copy_mark_stale(record, &xl->id, c, "holds the files of a new index that could not be created");
		return;
	}
	path = hi_copy_path(c, dirspc, suffix);
	if ((xl->flags & HI_IMAGE_FIRST) && xl->file == HI_IMAGE_FLASH)
	{
		/*
		 * A new build of this relfilenode: what the copy had is replaced
		 * (its map file goes first, so that an interrupted image leaves no
		 * index that looks valid), and an earlier verdict no longer holds.
		 */
		char	   *map = hi_copy_path(c, xl->id.spcoid, "map");
		char	   *stale = hi_copy_path(c, xl->id.spcoid, "stale");
		char	   *pending = hi_copy_path(c, xl->id.spcoid, "pending");

		copy_close(c);
		(void) unlink(map);
		(void) unlink(stale);
		(void) unlink(pending);
		pfree(map);
		pfree(stale);
		pfree(pending);
		c->exists = false;
		c->stale = false;
		request_reload(c);
	}
	/*
	 * As on the primary, a fast tier beside the flash tier gets its file
	 * from its first page (storage/tier_files.c): a record without bytes
	 * (FIRST, LAST, a cut to nothing) leaves a missing one missing.
	 */
	lazy = xl->file == HI_IMAGE_OPTANE && xl->optspc == xl->id.spcoid &&
		xl->len == 0 && !((xl->flags & HI_IMAGE_CUT) && xl->offset > 0);
	fd = open(path, O_RDWR | (lazy ? 0 : O_CREAT) | PG_BINARY |
			  ((xl->flags & HI_IMAGE_FIRST) ? O_TRUNC : 0), pg_file_create_mode);
	ok = fd >= 0;
	if (ok && (xl->flags & HI_IMAGE_CUT))
		ok = ftruncate(fd, (off_t) xl->offset) == 0;
	else if (ok && xl->len > 0)
		ok = pg_pwrite(fd, data, xl->len, (off_t) xl->offset) == (ssize_t) xl->len;
	if (ok && (xl->flags & HI_IMAGE_LAST))
		ok = pg_fsync(fd) == 0;
	if (fd < 0 && lazy && errno == ENOENT)
		ok = true;				/* nothing to empty, cut or sync */
	if (fd >= 0)
		close(fd);
	if (!ok)
		ereport(WARNING,
				(errcode_for_file_access(),
				 errmsg("hybrid_index: could not write \"%s\" in WAL replay: %m", path)));
	else if ((xl->flags & HI_IMAGE_LAST) && xl->file == HI_IMAGE_MAP)
	{
		/* the map file is complete: the index exists here, its log empty */
		char	   *log = hi_copy_path(c, xl->id.spcoid, "log");
		int			lfd = open(log, O_RDWR | O_CREAT | O_TRUNC | PG_BINARY, pg_file_create_mode);

		if (lfd >= 0)
		{
			(void) pg_fsync(lfd);
			close(lfd);
		}
		pfree(log);
		fsync_fname_ext(path, false, false, WARNING);
		hi_fsync_dir_of(path);
		copy_close(c);
		c->known = false;		/* read base and end from the new files */
		(void) hi_copy_state(&xl->id);
		c->confirmed = c->end;
	}
	pfree(path);
}

static void
redo_drop(const xl_hi_drop *xl)
{
	CopyState  *c = hi_copy_state(&xl->id);

	copy_close(c);
	/* a hot standby's readers may have loaded it: its cached state goes too */
	hi_files_release_and_remove(xl->id.dboid, xl->id.spcoid, xl->id.relnumber);
	c->known = false;
}

void
hi_wal_redo(XLogReaderState *record)
{
	uint8		info = XLogRecGetInfo(record) & ~XLR_INFO_MASK;
	uint32		len = XLogRecGetDataLen(record);
	const char *data = XLogRecGetData(record);

	if (info == XLOG_HI_LOG && len == sizeof(xl_hi_log))
		redo_log(record, (const xl_hi_log *) data);
	else if (info == XLOG_HI_DURABLE && len == sizeof(xl_hi_durable))
		redo_durable(record, (const xl_hi_durable *) data);
	else if (info == XLOG_HI_IMAGE && len >= sizeof(xl_hi_image) &&
			 len == sizeof(xl_hi_image) + ((const xl_hi_image *) data)->len)
		redo_image(record, (const xl_hi_image *) data, data + sizeof(xl_hi_image));
	else if (info == XLOG_HI_RESTART && len == sizeof(xl_hi_restart))
		redo_restart(record, (const xl_hi_restart *) data);
	else if (info == XLOG_HI_DROP && len == sizeof(xl_hi_drop))
		redo_drop((const xl_hi_drop *) data);
	else if (info == XLOG_HI_SYNCED && len == sizeof(xl_hi_synced))
		redo_synced(record, (const xl_hi_synced *) data);
	else if (info == XLOG_HI_PAGES && len >= sizeof(xl_hi_pages) &&
			 ((const xl_hi_pages *) data)->page_size > 0 &&
			 ((const xl_hi_pages *) data)->page_size <= HI_PAGE_SIZE_MAX &&
			 len == sizeof(xl_hi_pages) + (Size) ((const xl_hi_pages *) data)->npages *
			 (sizeof(uint32) + ((const xl_hi_pages *) data)->page_size))
		hi_redo_pages(record, (const xl_hi_pages *) data, data + sizeof(xl_hi_pages));
	else if (info == XLOG_HI_MAP && len >= sizeof(xl_hi_map) &&
			 len == sizeof(xl_hi_map) + ((const xl_hi_map *) data)->len)
		hi_redo_map(record, (const xl_hi_map *) data, data + sizeof(xl_hi_map));
	else if (info == XLOG_HI_TWOPHASE && len >= sizeof(xl_hi_twophase) &&
			 len == sizeof(xl_hi_twophase) + ((const xl_hi_twophase *) data)->len)
	{
		const xl_hi_twophase *xt = (const xl_hi_twophase *) data;

		hi_files_prepared_redo(xt->dboid, xt->dbspc, xt->xid,
							   xt->len > 0 ? data + sizeof(xl_hi_twophase) : NULL, xt->len);
	}
	else
		ereport(WARNING,
				(errmsg("hybrid_index: skipping WAL record of unknown type %u (length %u) at %X/%X",
						info, len, LSN_FORMAT_ARGS(record->ReadRecPtr)),
				 errhint("The server replays WAL of a newer hybrid_index; indexes it concerns may need REINDEX.")));
}

/*
 * End of recovery (crash recovery, promotion, end of a restore).  A log may
 * hold records beyond what WAL vouches for: appended before a crash whose
 * WAL was lost with them (their transactions never committed, and their
 * xids may be handed out again).  They are cut off, so that a later replay
 * never applies them; then what redo wrote is made durable.
 */
void
hi_wal_cleanup(void)
{
	HASH_SEQ_STATUS st;
	CopyState  *c;

	if (copies == NULL)
		return;
	hash_seq_init(&st, copies);
	while ((c = hash_seq_search(&st)) != NULL)
	{
		if (c->known && c->exists && !c->stale && c->confirmed >= c->base &&
			c->confirmed > 0 && c->end > c->confirmed)
		{
			if (hi_copy_log_fd(c) >= 0 &&
				ftruncate(c->fd, (off_t) (c->confirmed - c->base)) == 0)
			{
				ereport(LOG,
						(errmsg("hybrid_index: cut %llu redo log records of relfilenode %u that WAL does not hold",
								(unsigned long long) ((c->end - c->confirmed) / sizeof(HiLogRecord)),
								c->key.relnumber)));
				c->end = c->confirmed;
				c->unsynced = true;
				hi_copies_unsynced = true;
				request_reload(c);
			}
		}
		if (c->fd >= 0 && c->unsynced)
			(void) pg_fdatasync(c->fd);
		copy_close(c);
		/* pages parked after the last checkpoint: slots no map references */
		{
			char	   *pending = hi_copy_path(c, c->key.spcoid, "pending");

			(void) unlink(pending);
			pfree(pending);
		}
	}
	hash_destroy(copies);
	copies = NULL;
}

