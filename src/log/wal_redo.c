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
#include "miscadmin.h"
#include "storage/fd.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

#include "base/hi_base.h"
#include "log/redo_log.h"
#include "log/wal_records.h"
#include "storage/storage.h"

typedef struct CopyKey
{
	Oid			dboid;
	Oid			spcoid;
	Oid			relnumber;
} CopyKey;

/* This server's copy of an index's log, as replay has left it */
typedef struct CopyState
{
	CopyKey		key;
	bool		known;			/* base/end read from the files */
	bool		exists;			/* the index has a map file here */
	bool		stale;			/* marked already */
	bool		unsynced;		/* appended since the last fsync */
	uint64		base;			/* the map file's checkpoint position */
	uint64		end;			/* the log's valid records end here */
	uint64		confirmed;		/* WAL replayed so far vouches for the log
								 * up to here (0: nothing yet) */
	int			fd;				/* the log, -1 = not open */
} CopyState;

/* relfilenodes seen by this replay; nobody else changes their files */
static HTAB *copies = NULL;

static CopyState *
copy_state(const xl_hi_ident *id)
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
		c->unsynced = false;
		c->confirmed = 0;
		c->fd = -1;
	}
	if (!c->known)
	{
		c->end = hi_log_copy_end(id->dboid, id->spcoid, id->relnumber,
								 &c->base, &c->exists);
		c->known = true;
	}
	return c;
}

static char *
copy_path(const CopyState *c, Oid dirspc, const char *suffix)
{
	return hi_file_path(dirspc, c->key.dboid, c->key.spcoid, c->key.relnumber, suffix);
}

static void
copy_close(CopyState *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

/* The copy's log, opened for writing; -1 (and a WARNING) if impossible */
static int
copy_log_fd(CopyState *c)
{
	if (c->fd < 0)
	{
		char	   *path = copy_path(c, c->key.spcoid, "log");

		c->fd = open(path, O_RDWR | O_CREAT | PG_BINARY, pg_file_create_mode);
		if (c->fd < 0)
			ereport(WARNING,
					(errcode_for_file_access(),
					 errmsg("hybrid_index: could not open \"%s\" for WAL replay: %m", path)));
		pfree(path);
	}
	return c->fd;
}

static void
mark_stale(XLogReaderState *record, const xl_hi_ident *id, CopyState *c,
		   const char *what)
{
	char	   *why;

	if (c->stale)
		return;
	why = psprintf("WAL at %X/%X %s; this copy of its redo log ends at position "
				   UINT64_FORMAT ".\n", LSN_FORMAT_ARGS(record->ReadRecPtr), what, c->end);
	hi_files_mark_stale(id->dboid, id->spcoid, id->relnumber, why);
	pfree(why);
	c->stale = true;
	ereport(LOG,
			(errmsg("hybrid_index: index %u (relfilenode %u) lacks changes replayed from WAL and will need REINDEX",
					id->indexoid, id->relnumber)));
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
	for (i = 0; i < hi_shared->max_indexes; i++)
	{
		HiIndexShared *sh = &hi_shared->indexes[i];

		if (sh->in_use && sh->dboid == c->key.dboid &&
			sh->relnumber == c->key.relnumber)
			pg_atomic_fetch_add_u32(&sh->reload_requests, 1);
	}
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
	why = psprintf("%s of index %u at redo log position " UINT64_FORMAT,
				   what, id->indexoid, pos);
	mark_stale(record, id, c, why);
	pfree(why);
	return true;
}

static void
sync_copy(CopyState *c)
{
	if (c->unsynced && c->fd >= 0)
	{
		if (pg_fdatasync(c->fd) != 0)
			ereport(WARNING,
					(errcode_for_file_access(),
					 errmsg("hybrid_index: could not fsync the redo log of relfilenode %u: %m",
							c->key.relnumber)));
		c->unsynced = false;
	}
}

static void
confirm(CopyState *c, uint64 pos)
{
	c->confirmed = Max(c->confirmed, pos);
}

static void
redo_log(XLogReaderState *record, const xl_hi_log *xl)
{
	CopyState  *c = copy_state(&xl->id);
	uint64		pos = xl->rec.lsn;
	int			fd;

	/* no files: the index refuses by itself (its map file is missing) */
	if (!c->exists || c->stale)
		return;
	if (pos < c->end)
	{
		/* the log has it (a log gets WAL's records in WAL's order) */
		confirm(c, pos + sizeof(HiLogRecord));
		return;
	}
	if (copy_lacks(record, &xl->id, c, pos, "holds a record"))
		return;
	fd = copy_log_fd(c);
	if (fd < 0 ||
		pg_pwrite(fd, &xl->rec, sizeof(HiLogRecord), (off_t) (pos - c->base)) != sizeof(HiLogRecord))
	{
		mark_stale(record, &xl->id, c, "has a redo log record this server could not write");
		return;
	}
	c->end += sizeof(HiLogRecord);
	c->unsynced = true;
	confirm(c, c->end);
	/* a committed transaction's records are durable here before its commit is */
	if (xl->rec.type == HI_LOG_COMMIT)
		sync_copy(c);
}

static void
redo_durable(XLogReaderState *record, const xl_hi_durable *xl)
{
	CopyState  *c = copy_state(&xl->id);

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
	CopyState  *c = copy_state(&xl->id);
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
	fd = copy_log_fd(c);
	if (fd < 0 || ftruncate(fd, (off_t) (xl->position - c->base)) != 0)
	{
		mark_stale(record, &xl->id, c, "cuts a redo log this server could not cut");
		return;
	}
	c->end = xl->position;
	c->unsynced = true;
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
	CopyState  *c = copy_state(&xl->id);

	if (!c->exists || c->stale || xl->position < c->base)
		return;
	if (copy_lacks(record, &xl->id, c, xl->position, "says the log was durable"))
		return;
	confirm(c, xl->position);
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
	CopyState  *c = copy_state(&xl->id);
	Oid			dirspc = xl->file == HI_IMAGE_OPTANE ? xl->optspc : xl->id.spcoid;
	const char *suffix = xl->file == HI_IMAGE_FLASH ? "flash" :
		xl->file == HI_IMAGE_OPTANE ? "optane" : "map";
	char	   *path;
	int			fd;
	bool		ok;

	if (!ensure_db_dir(dirspc, xl->id.dboid))
	{
		mark_stale(record, &xl->id, c, "holds the files of a new index that could not be created");
		return;
	}
	path = copy_path(c, dirspc, suffix);
	if ((xl->flags & HI_IMAGE_FIRST) && xl->file == HI_IMAGE_FLASH)
	{
		/*
		 * A new build of this relfilenode: what the copy had is replaced
		 * (its map file goes first, so that an interrupted image leaves no
		 * index that looks valid), and an earlier verdict no longer holds.
		 */
		char	   *map = copy_path(c, xl->id.spcoid, "map");
		char	   *stale = copy_path(c, xl->id.spcoid, "stale");

		(void) unlink(map);
		(void) unlink(stale);
		pfree(map);
		pfree(stale);
		copy_close(c);
		c->exists = false;
		c->stale = false;
		request_reload(c);
	}
	fd = open(path, O_RDWR | O_CREAT | PG_BINARY | ((xl->flags & HI_IMAGE_FIRST) ? O_TRUNC : 0),
			  pg_file_create_mode);
	ok = fd >= 0;
	if (ok && xl->len > 0)
		ok = pg_pwrite(fd, data, xl->len, (off_t) xl->offset) == (ssize_t) xl->len;
	if (ok && (xl->flags & HI_IMAGE_LAST))
		ok = pg_fsync(fd) == 0;
	if (fd >= 0)
		close(fd);
	if (!ok)
		ereport(WARNING,
				(errcode_for_file_access(),
				 errmsg("hybrid_index: could not write \"%s\" in WAL replay: %m", path)));
	else if ((xl->flags & HI_IMAGE_LAST) && xl->file == HI_IMAGE_MAP)
	{
		/* the map file is complete: the index exists here, its log empty */
		char	   *log = copy_path(c, xl->id.spcoid, "log");
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
		(void) copy_state(&xl->id);
		c->confirmed = c->end;
	}
	pfree(path);
}

static void
redo_drop(const xl_hi_drop *xl)
{
	CopyState  *c = copy_state(&xl->id);

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
			if (copy_log_fd(c) >= 0 &&
				ftruncate(c->fd, (off_t) (c->confirmed - c->base)) == 0)
			{
				ereport(LOG,
						(errmsg("hybrid_index: cut %llu redo log records of relfilenode %u that WAL does not hold",
								(unsigned long long) ((c->end - c->confirmed) / sizeof(HiLogRecord)),
								c->key.relnumber)));
				c->end = c->confirmed;
				c->unsynced = true;
				request_reload(c);
			}
		}
		if (c->fd >= 0 && c->unsynced)
			(void) pg_fdatasync(c->fd);
		copy_close(c);
	}
	hash_destroy(copies);
	copies = NULL;
}

