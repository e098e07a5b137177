/*
 * hi_wal.c
 *	  The custom WAL resource manager of hybrid_index (HI_RMGR_ID).
 *
 * Issue 18, second step: WAL carries every change of an index, so that a
 * server whose files are a copy (a streaming standby, a restored base
 * backup, PITR) rebuilds what the primary has instead of refusing.
 *
 * The unit of replication is the index's redo log, which is logical (one
 * record per entry inserted or deleted, one per committing transaction):
 * every structure of every access method (R-tree nodes, eFIND's buffers,
 * grid directories, BTT, placement) is rebuilt from it when the index is
 * first used, exactly as after a crash on the primary.  Records:
 *
 *	LOG		one redo log record, with its position in the endless log.  The
 *			primary inserts it under log_lock, so WAL order is log order.
 *			Redo writes it into this server's copy of the log at that
 *			position: below the copy's end it is there already (replay is
 *			idempotent), at the end it is appended, beyond the end the copy
 *			lacks records WAL no longer has: the index is marked stale (it
 *			refuses with a REINDEX hint), never silently short.
 *	DURABLE the redo log holds every change below a position (one per
 *			VACUUM; a transaction's COMMIT LOG record plays that part for
 *			it).  Redo makes the copy's log durable there, and marks the
 *			index stale if the copy does not reach it.
 *	IMAGE	a chunk of a file of a freshly built index (tier files, map
 *			file), logged once the build's checkpoint wrote them: a copy
 *			gets the files of indexes created, rebuilt (REINDEX, TRUNCATE,
 *			VACUUM FULL, CLUSTER) or moved after it was taken.
 *	RESTART the primary's log continues at a position (it loaded the
 *			index after a restart, or an append failed): a copy cuts off
 *			what lies beyond (records of transactions that never committed,
 *			which the primary's log lost), so that positions mean the same
 *			records on both.
 *	DROP	the files of a relfilenode were removed at commit.
 *
 * Redo runs in the startup process: no catalogs, and it must never stop on
 * one of our records, so nothing here raises an ERROR; what cannot be done
 * is logged and the index marked stale (the safe side).
 */
#include "postgres.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "access/xlog.h"
#include "access/xlog_internal.h"
#include "access/xloginsert.h"
#include "access/xlogreader.h"
#include "common/file_perm.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "storage/fd.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

#include "base/hi_base.h"
#include "log/redo_log.h"
#include "storage/storage.h"

#define XLOG_HI_DURABLE		0x00
#define XLOG_HI_LOG			0x10
#define XLOG_HI_IMAGE		0x20
#define XLOG_HI_RESTART		0x30
#define XLOG_HI_DROP		0x40
#define XLOG_HI_SYNCED		0x50

/* which index a record is about (its flash tier names its files) */
typedef struct xl_hi_ident
{
	Oid			dboid;
	Oid			spcoid;			/* the flash tier's tablespace */
	Oid			relnumber;
	Oid			indexoid;
} xl_hi_ident;

typedef struct xl_hi_durable
{
	xl_hi_ident id;
	uint64		upto;			/* the redo log holds every change below */
} xl_hi_durable;

typedef struct xl_hi_log
{
	xl_hi_ident id;
	HiLogRecord rec;			/* rec.lsn: its position in the log */
} xl_hi_log;

/* the files of an image */
#define HI_IMAGE_FLASH		0
#define HI_IMAGE_OPTANE		1
#define HI_IMAGE_MAP		2

#define HI_IMAGE_FIRST		0x01	/* truncate the file first */
#define HI_IMAGE_LAST		0x02	/* the file is complete: fsync it */

typedef struct xl_hi_image
{
	xl_hi_ident id;
	Oid			optspc;			/* the fast tier's tablespace */
	uint8		file;			/* HI_IMAGE_* */
	uint8		flags;
	uint16		pad;
	uint32		len;			/* bytes that follow */
	uint64		offset;
} xl_hi_image;

#define HI_IMAGE_CHUNK		(64 * 1024)

typedef struct xl_hi_restart
{
	xl_hi_ident id;
	uint64		position;		/* the log continues here */
} xl_hi_restart;

typedef struct xl_hi_drop
{
	xl_hi_ident id;
} xl_hi_drop;

typedef struct xl_hi_synced
{
	xl_hi_ident id;
	uint64		position;		/* the log is durable up to here */
} xl_hi_synced;

static void
ident_of(HiIndexShared *sh, xl_hi_ident *id)
{
	memset(id, 0, sizeof(*id));
	id->dboid = sh->dboid;
	id->spcoid = sh->spcoid[HI_TIER_FLASH];
	id->relnumber = sh->relnumber;
	id->indexoid = sh->indexoid;
}

/* Changes of temporary indexes are not logged (standbys have no such tables) */
static bool
wal_logged(HiIndexShared *sh)
{
	return sh->wal_logged && !RecoveryInProgress();
}

/* ---- insertion (the primary) ---- */

/* Insert a record whose data (len bytes) starts with the index's ident */
static XLogRecPtr
insert_record(HiIndexShared *sh, uint8 info, void *xl, Size len)
{
	ident_of(sh, (xl_hi_ident *) xl);
	XLogBeginInsert();
	XLogRegisterData((char *) xl, len);
	return XLogInsert(HI_RMGR_ID, info);
}

void
hi_wal_log_durable(HiIndexShared *sh, uint64 upto)
{
	xl_hi_durable xl;

	if (!wal_logged(sh))
		return;
	xl.upto = upto;
	(void) insert_record(sh, XLOG_HI_DURABLE, &xl, sizeof(xl));
}

/* One redo log record; the caller holds log_lock (WAL order = log order) */
void
hi_wal_log_record(HiIndexShared *sh, const HiLogRecord *rec)
{
	xl_hi_log	xl;

	if (!wal_logged(sh))
		return;
	xl.rec = *rec;
	(void) insert_record(sh, XLOG_HI_LOG, &xl, sizeof(xl));
}

void
hi_wal_log_restart(HiIndexShared *sh, uint64 position, bool flush)
{
	xl_hi_restart xl;
	XLogRecPtr	end;

	if (!wal_logged(sh))
		return;
	xl.position = position;
	end = insert_record(sh, XLOG_HI_RESTART, &xl, sizeof(xl));
	if (flush)
		XLogFlush(end);
}

/* The log sync worker made the log durable up to position (a checkpoint) */
void
hi_wal_log_synced(HiIndexShared *sh, uint64 position)
{
	xl_hi_synced xl;

	if (!wal_logged(sh))
		return;
	xl.position = position;
	(void) insert_record(sh, XLOG_HI_SYNCED, &xl, sizeof(xl));
}

/* The files of a relfilenode were removed (dboid: its database) */
void
hi_wal_log_drop(Oid dboid, Oid flashspc, Oid relnumber)
{
	xl_hi_drop	xl;

	if (RecoveryInProgress())
		return;
	memset(&xl, 0, sizeof(xl));
	xl.id.dboid = dboid;
	xl.id.spcoid = flashspc;
	xl.id.relnumber = relnumber;
	XLogBeginInsert();
	XLogRegisterData((char *) &xl, sizeof(xl));
	(void) XLogInsert(HI_RMGR_ID, XLOG_HI_DROP);
}

static void
log_image_chunk(HiIndexShared *sh, uint8 file, uint8 flags, uint64 offset,
				const char *data, uint32 len)
{
	xl_hi_image xl;

	memset(&xl, 0, sizeof(xl));
	ident_of(sh, &xl.id);
	xl.optspc = sh->spcoid[HI_TIER_OPTANE];
	xl.file = file;
	xl.flags = flags;
	xl.len = len;
	xl.offset = offset;
	XLogBeginInsert();
	XLogRegisterData((char *) &xl, sizeof(xl));
	if (len > 0)
		XLogRegisterData((char *) data, len);
	(void) XLogInsert(HI_RMGR_ID, XLOG_HI_IMAGE);
}

/* Log a whole file in chunks (read through a descriptor of our own) */
static void
log_image_file(HiIndexShared *sh, uint8 file, const char *path)
{
	int			fd = OpenTransientFile(path, O_RDONLY | PG_BINARY);
	char	   *buf;
	uint64		off = 0;
	bool		first = true;

	if (fd < 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not open index file \"%s\" to log it: %m", path)));
	buf = palloc(HI_IMAGE_CHUNK);
	for (;;)
	{
		ssize_t		r = pg_pread(fd, buf, HI_IMAGE_CHUNK, (off_t) off);
		uint8		flags = first ? HI_IMAGE_FIRST : 0;

		if (r < 0)
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not read index file \"%s\" to log it: %m", path)));
		if (r < HI_IMAGE_CHUNK)
			flags |= HI_IMAGE_LAST;
		log_image_chunk(sh, file, flags, off, buf, (uint32) r);
		off += r;
		first = false;
		if (flags & HI_IMAGE_LAST)
			break;
		CHECK_FOR_INTERRUPTS();
	}
	pfree(buf);
	CloseTransientFile(fd);
}

/*
 * A build ended with a checkpoint: log its files, the tier files first and
 * the map file last (a copy whose replay stops in between has no valid map
 * file, so the index refuses there instead of reading half a tree).  The
 * caller holds tree_lock exclusively, so the files do not change meanwhile.
 */
void
hi_wal_log_image(HiIndexShared *sh)
{
	int			t;
	char	   *path;

	if (!wal_logged(sh))
		return;
	for (t = 0; t < HI_NUM_TIERS; t++)
	{
		if (!OidIsValid(sh->spcoid[t]))
			continue;
		path = hi_slot_path(sh, t);
		log_image_file(sh, t == HI_TIER_FLASH ? HI_IMAGE_FLASH : HI_IMAGE_OPTANE, path);
		pfree(path);
	}
	path = hi_file_path(sh->spcoid[HI_TIER_FLASH], sh->dboid,
						sh->spcoid[HI_TIER_FLASH], sh->relnumber, "map");
	log_image_file(sh, HI_IMAGE_MAP, path);
	pfree(path);
}

/* ---- redo (the startup process) ---- */

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
copy_path(const xl_hi_ident *id, Oid dirspc, const char *suffix)
{
	return hi_file_path(dirspc, id->dboid, id->spcoid, id->relnumber, suffix);
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
copy_log_fd(const xl_hi_ident *id, CopyState *c)
{
	if (c->fd < 0)
	{
		char	   *path = copy_path(id, id->spcoid, "log");

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

/* Make what redo wrote into the copy's log durable */
static void
sync_copy(CopyState *c, Oid relnumber)
{
	if (c->unsynced && c->fd >= 0)
	{
		if (pg_fdatasync(c->fd) != 0)
			ereport(WARNING,
					(errcode_for_file_access(),
					 errmsg("hybrid_index: could not fsync the redo log of relfilenode %u: %m",
							relnumber)));
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
	if (pos > c->end)
	{
		char	   *what = psprintf("holds redo log position " UINT64_FORMAT " of index %u",
									pos, xl->id.indexoid);

		mark_stale(record, &xl->id, c, what);
		pfree(what);
		return;
	}
	fd = copy_log_fd(&xl->id, c);
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
		sync_copy(c, xl->id.relnumber);
}

static void
redo_durable(XLogReaderState *record, const xl_hi_durable *xl)
{
	CopyState  *c = copy_state(&xl->id);

	if (!c->exists || c->stale)
		return;
	if (xl->upto > c->end)
	{
		char	   *what = psprintf("records changes to index %u up to redo log position " UINT64_FORMAT,
									xl->id.indexoid, xl->upto);

		mark_stale(record, &xl->id, c, what);
		pfree(what);
		return;
	}
	confirm(c, xl->upto);
	sync_copy(c, xl->id.relnumber);
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
	if (xl->position == c->end)
	{
		confirm(c, c->end);
		return;
	}
	if (xl->position > c->end)
	{
		char	   *what = psprintf("continues the redo log of index %u at position " UINT64_FORMAT,
									xl->id.indexoid, xl->position);

		mark_stale(record, &xl->id, c, what);
		pfree(what);
		return;
	}
	fd = copy_log_fd(&xl->id, c);
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
	if (xl->position > c->end)
	{
		char	   *what = psprintf("says the redo log of index %u was durable up to position " UINT64_FORMAT,
									xl->id.indexoid, xl->position);

		mark_stale(record, &xl->id, c, what);
		pfree(what);
		return;
	}
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
	path = copy_path(&xl->id, dirspc, suffix);
	if ((xl->flags & HI_IMAGE_FIRST) && xl->file == HI_IMAGE_FLASH)
	{
		/*
		 * A new build of this relfilenode: what the copy had is replaced
		 * (its map file goes first, so that an interrupted image leaves no
		 * index that looks valid), and an earlier verdict no longer holds.
		 */
		char	   *map = copy_path(&xl->id, xl->id.spcoid, "map");
		char	   *stale = copy_path(&xl->id, xl->id.spcoid, "stale");

		(void) unlink(map);
		(void) unlink(stale);
		pfree(map);
		pfree(stale);
		copy_close(c);
		c->exists = false;
		c->stale = false;
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
		char	   *log = copy_path(&xl->id, xl->id.spcoid, "log");
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
	hi_files_remove_set(xl->id.dboid, xl->id.spcoid, xl->id.relnumber);
	c->known = false;
}

static void
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
static void
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
			CopyKey    *k = &c->key;
			xl_hi_ident id;

			memset(&id, 0, sizeof(id));
			id.dboid = k->dboid;
			id.spcoid = k->spcoid;
			id.relnumber = k->relnumber;
			if (copy_log_fd(&id, c) >= 0 &&
				ftruncate(c->fd, (off_t) (c->confirmed - c->base)) == 0)
			{
				ereport(LOG,
						(errmsg("hybrid_index: cut %llu redo log records of relfilenode %u that WAL does not hold",
								(unsigned long long) ((c->end - c->confirmed) / sizeof(HiLogRecord)),
								k->relnumber)));
				c->end = c->confirmed;
				c->unsynced = true;
			}
		}
		if (c->fd >= 0 && c->unsynced)
			(void) pg_fdatasync(c->fd);
		copy_close(c);
	}
	hash_destroy(copies);
	copies = NULL;
}

static void
hi_wal_desc(StringInfo buf, XLogReaderState *record)
{
	uint8		info = XLogRecGetInfo(record) & ~XLR_INFO_MASK;
	uint32		len = XLogRecGetDataLen(record);
	const char *data = XLogRecGetData(record);
	const xl_hi_ident *id = (const xl_hi_ident *) data;

	if (len < sizeof(xl_hi_ident))
		return;
	appendStringInfo(buf, "index %u, rel %u/%u/%u", id->indexoid, id->spcoid,
					 id->dboid, id->relnumber);
	if (info == XLOG_HI_DURABLE && len == sizeof(xl_hi_durable))
		appendStringInfo(buf, ", redo log durable up to " UINT64_FORMAT,
						 ((const xl_hi_durable *) data)->upto);
	else if (info == XLOG_HI_LOG && len == sizeof(xl_hi_log))
	{
		const HiLogRecord *r = &((const xl_hi_log *) data)->rec;

		appendStringInfo(buf, ", %s at " UINT64_FORMAT ", xid %u, tid (%u,%u)",
						 r->type == HI_LOG_INSERT ? "insert" :
						 r->type == HI_LOG_DELETE ? "delete" : "commit",
						 r->lsn, r->xid,
						 ItemPointerGetBlockNumberNoCheck(&r->tid),
						 ItemPointerGetOffsetNumberNoCheck(&r->tid));
	}
	else if (info == XLOG_HI_IMAGE && len >= sizeof(xl_hi_image))
	{
		const xl_hi_image *im = (const xl_hi_image *) data;

		appendStringInfo(buf, ", %s bytes " UINT64_FORMAT "..+%u%s",
						 im->file == HI_IMAGE_FLASH ? "flash" :
						 im->file == HI_IMAGE_OPTANE ? "optane" : "map",
						 im->offset, im->len,
						 (im->flags & HI_IMAGE_LAST) ? ", last" : "");
	}
	else if (info == XLOG_HI_RESTART && len == sizeof(xl_hi_restart))
		appendStringInfo(buf, ", log continues at " UINT64_FORMAT,
						 ((const xl_hi_restart *) data)->position);
	else if (info == XLOG_HI_SYNCED && len == sizeof(xl_hi_synced))
		appendStringInfo(buf, ", log durable up to " UINT64_FORMAT,
						 ((const xl_hi_synced *) data)->position);
}

static const char *
hi_wal_identify(uint8 info)
{
	switch (info & ~XLR_INFO_MASK)
	{
		case XLOG_HI_DURABLE:
			return "DURABLE";
		case XLOG_HI_LOG:
			return "LOG";
		case XLOG_HI_IMAGE:
			return "IMAGE";
		case XLOG_HI_RESTART:
			return "RESTART";
		case XLOG_HI_DROP:
			return "DROP";
		case XLOG_HI_SYNCED:
			return "SYNCED";
	}
	return NULL;
}

static RmgrData hi_rmgr = {
	.rm_name = HI_RMGR_NAME,
	.rm_redo = hi_wal_redo,
	.rm_desc = hi_wal_desc,
	.rm_identify = hi_wal_identify,
	.rm_cleanup = hi_wal_cleanup
};

/* Called once from _PG_init (shared_preload_libraries only) */
void
hi_wal_init(void)
{
	RegisterCustomRmgr(HI_RMGR_ID, &hi_rmgr);
	hi_files_set_drop_hook(hi_wal_log_drop);
}
