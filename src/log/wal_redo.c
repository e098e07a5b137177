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
#include "port/pg_crc32c.h"
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
	bool		healable;		/* its log begins after its map's checkpoint
								 * (hi_log_copy_end): a gap may be closed */
	bool		gap;			/* stale for lack of records that a later
								 * MAP record can make unnecessary */
	uint64		gap_upto;		/* ... if it reaches here */
	bool		unsynced;		/* appended since the last fsync */
	uint64		base;			/* the map file's checkpoint position */
	uint64		end;			/* the log's valid records end here */
	uint64		confirmed;		/* WAL replayed so far vouches for the log
								 * up to here (0: nothing yet) */
	int			fd;				/* the log, -1 = not open */
	int			pfd;			/* the pending file, -1 = not open */
	bool		pend_known;		/* pend_end read from the file */
	bool		pend_unsynced;	/* parked since the last fsync */
	off_t		pend_end;		/* its valid entries end here */
	bool		in_lru;			/* fd or pfd open: in open_copies */
	dlist_node	lru;
} CopyState;

/*
 * Copies with a descriptor open, most recently used first.  Replay of
 * thousands of indexes keeps within a bounded number of descriptors
 * (copy_make_room): the least recently used copy's are made durable and
 * closed, and opened again when a record needs them.
 */
static dlist_head open_copies = DLIST_STATIC_INIT(open_copies);
static int	nopen_copy_fds = 0;

/*
 * The pending file (hyb_<flash>_<relfilenode>.pending): pages PAGES records
 * carried, parked in WAL order until the MAP record that makes them part
 * of the index.  Parked entries are made durable whenever the primary
 * checkpoints (its SYNCED records precede every restartpoint), so that a
 * restart of this server finds every page written before the point where
 * its replay resumes.  Replay after a restart parks again what it replays:
 * the file then holds some writes twice, in order, and applying it in
 * order leaves each slot with its last write.
 */
typedef struct PendingEntry
{
	uint32		magic;
	uint32		pte;			/* tier and slot */
	uint32		page_size;
	Oid			optspc;			/* the fast tier's tablespace */
	uint32		crc;			/* of the fields above and the page */
	uint32		pad;
} PendingEntry;

#define HI_PENDING_MAGIC	0x48495047	/* "HIPG" */

/* relfilenodes seen by this replay; nobody else changes their files */
static HTAB *copies = NULL;

/* some copy has writes not yet fsynced (sync_all_copies) */
static bool copies_unsynced = false;

static void sync_all_copies(void);

/* core's exclusive access to a relfilenode's files (hi_copy_exclusive) */
static hi_wal_exclusive_fn exclusive_hook = NULL;

void
hi_wal_set_exclusive_hook(hi_wal_exclusive_fn fn)
{
	exclusive_hook = fn;
}

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

static char *
copy_path(const CopyState *c, Oid dirspc, const char *suffix)
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
static void sync_pending(CopyState *c);

/*
 * Before c opens one more descriptor: close those of the least recently
 * used other copies, durable first (what they appended since their last
 * fsync is synced now rather than at the next restartpoint).  A third of
 * the descriptors PostgreSQL leaves this process, as for other external
 * ones (fd.c), and room for apply_pending's tier files.
 */
static void
copy_make_room(CopyState *c)
{
	int			budget = Max(4, max_safe_fds / 3 - 8);

	while (nopen_copy_fds >= budget && !dlist_is_empty(&open_copies))
	{
		CopyState  *victim = dlist_tail_element(CopyState, lru, &open_copies);

		if (victim == c)
			break;
		sync_copy(victim);
		sync_pending(victim);
		copy_close(victim);
	}
	if (c->in_lru)
		dlist_delete(&c->lru);
	dlist_push_head(&open_copies, &c->lru);
	c->in_lru = true;
}

/* A long-lived descriptor of c (its log or pending file) was opened */
static int
copy_opened(int fd)
{
	if (fd >= 0)
	{
		ReserveExternalFD();
		nopen_copy_fds++;
	}
	return fd;
}

/* One of a copy's files, opened (made if missing) for writing; -1 and a WARNING if impossible */
static int
open_copy_file(const CopyState *c, Oid dirspc, const char *suffix)
{
	char	   *path = copy_path(c, dirspc, suffix);
	int			fd = open(path, O_RDWR | O_CREAT | PG_BINARY, pg_file_create_mode);

	if (fd < 0)
		ereport(WARNING,
				(errcode_for_file_access(),
				 errmsg("hybrid_index: could not open \"%s\" for WAL replay: %m", path)));
	pfree(path);
	return fd;
}

/* The copy's log, opened for writing; -1 (and a WARNING) if impossible */
static int
copy_log_fd(CopyState *c)
{
	if (c->fd < 0)
	{
		copy_make_room(c);
		c->fd = copy_opened(open_copy_file(c, c->key.spcoid, "log"));
	}
	return c->fd;
}

static void request_reload(const CopyState *c);

static void
mark_stale(XLogReaderState *record, const xl_hi_ident *id, CopyState *c,
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
		mark_stale(record, id, c, why);
	pfree(why);
	return true;
}

/* A MAP record reached gap_upto: the copy lacks nothing any more */
static void
close_gap(CopyState *c)
{
	char	   *stale = copy_path(c, c->key.spcoid, "stale");

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
static void
sync_file(const CopyState *c, int fd, bool *unsynced, const char *what)
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
	sync_file(c, c->fd, &c->unsynced, "redo log");
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
	fd = copy_log_fd(c);
	if (fd < 0 ||
		pg_pwrite(fd, &xl->rec, sizeof(HiLogRecord), (off_t) (pos - c->base)) != sizeof(HiLogRecord))
	{
		mark_stale(record, &xl->id, c, "has a redo log record this server could not write");
		return;
	}
	c->end += sizeof(HiLogRecord);
	c->unsynced = true;
	copies_unsynced = true;
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
	copies_unsynced = true;
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

	/* a restartpoint may follow: it must find what redo wrote durable */
	sync_all_copies();
	if (!c->exists || c->stale || xl->position < c->base)
		return;
	if (copy_lacks(record, &xl->id, c, xl->position, "says the log was durable"))
		return;
	confirm(c, xl->position);
}

/* ---- PAGES and MAP: index checkpoints ---- */

static pg_crc32c
entry_crc(const PendingEntry *e, const char *page)
{
	pg_crc32c	crc;

	INIT_CRC32C(crc);
	COMP_CRC32C(crc, e, offsetof(PendingEntry, crc));
	COMP_CRC32C(crc, page, e->page_size);
	FIN_CRC32C(crc);
	return crc;
}

/*
 * Read the next valid entry of a pending file at *off into e and page
 * (HI_PAGE_SIZE_MAX bytes); false at its end or at a torn entry.
 */
static bool
pending_next(int fd, off_t *off, PendingEntry *e, char *page)
{
	if (pg_pread(fd, e, sizeof(*e), *off) != sizeof(*e) ||
		e->magic != HI_PENDING_MAGIC || e->page_size == 0 ||
		e->page_size > HI_PAGE_SIZE_MAX ||
		pg_pread(fd, page, e->page_size, *off + sizeof(*e)) != (ssize_t) e->page_size ||
		e->crc != entry_crc(e, page))
		return false;
	*off += sizeof(*e) + e->page_size;
	return true;
}

/* The copy's pending file, open for appending at pend_end; -1 on failure */
static int
pending_fd(CopyState *c)
{
	if (c->pfd < 0)
	{
		copy_make_room(c);
		c->pfd = copy_opened(open_copy_file(c, c->key.spcoid, "pending"));
		c->pend_known = false;
	}
	if (c->pfd >= 0 && !c->pend_known)
	{
		/* entries a crash tore are overwritten from here on */
		PendingEntry e;
		char	   *page = palloc(HI_PAGE_SIZE_MAX);
		off_t		off = 0;

		while (pending_next(c->pfd, &off, &e, page))
			;
		pfree(page);
		c->pend_end = off;
		c->pend_known = true;
	}
	return c->pfd;
}

static void
sync_pending(CopyState *c)
{
	sync_file(c, c->pfd, &c->pend_unsynced, "pending pages");
}

/* Park the pages a PAGES record carries */
static void
redo_pages(XLogReaderState *record, const xl_hi_pages *xl, const char *data)
{
	CopyState  *c = copy_state(&xl->id);
	const uint32 *ptes = (const uint32 *) data;
	const char *pages = data + sizeof(uint32) * xl->npages;
	char	   *buf;
	uint32		i;
	int			fd;

	if (!c->exists || (c->stale && !c->gap))
		return;
	fd = pending_fd(c);
	if (fd < 0)
	{
		mark_stale(record, &xl->id, c, "has pages this server could not park");
		return;
	}
	buf = palloc(sizeof(PendingEntry) + xl->page_size);
	for (i = 0; i < xl->npages; i++)
	{
		PendingEntry *e = (PendingEntry *) buf;
		Size		len = sizeof(PendingEntry) + xl->page_size;

		memset(e, 0, sizeof(*e));
		e->magic = HI_PENDING_MAGIC;
		e->pte = ptes[i];
		e->page_size = xl->page_size;
		e->optspc = xl->optspc;
		memcpy(buf + sizeof(PendingEntry), pages + (Size) i * xl->page_size, xl->page_size);
		e->crc = entry_crc(e, buf + sizeof(PendingEntry));
		if (pg_pwrite(fd, buf, len, c->pend_end) != (ssize_t) len)
		{
			mark_stale(record, &xl->id, c, "has pages this server could not park");
			break;
		}
		c->pend_end += len;
	}
	c->pend_unsynced = true;
	copies_unsynced = true;
	pfree(buf);
}

/* what redo of a MAP record works on, inside hi_copy_exclusive */
typedef struct MapRedo
{
	XLogReaderState *record;
	const xl_hi_map *xl;
	const char *image;
	CopyState  *c;
} MapRedo;

/*
 * Write the parked pages into the tier files, in order (each slot ends
 * with its last write), and make them durable; false on failure.
 */
static bool
apply_pending(CopyState *c)
{
	int			tfd[HI_NUM_TIERS] = {-1, -1};
	PendingEntry e;
	char	   *page;
	off_t		off = 0;
	bool		ok = true;
	int			t;

	if (pending_fd(c) < 0)
		return false;
	page = palloc(HI_PAGE_SIZE_MAX);
	while (ok && off < c->pend_end && pending_next(c->pfd, &off, &e, page))
	{
		int			tier = HI_PTE_TIER(e.pte);

		if (tfd[tier] < 0 &&
			(tfd[tier] = open_copy_file(c, tier == HI_TIER_FLASH ? c->key.spcoid : e.optspc,
										hi_tier_suffix(tier))) < 0)
		{
			ok = false;
			break;
		}
		ok = pg_pwrite(tfd[tier], page, e.page_size,
					   (off_t) HI_PTE_SLOT(e.pte) * e.page_size) == (ssize_t) e.page_size;
	}
	for (t = 0; t < HI_NUM_TIERS; t++)
		if (tfd[t] >= 0)
		{
			ok = ok && pg_fsync(tfd[t]) == 0;
			close(tfd[t]);
		}
	pfree(page);
	return ok;
}

/* Cut a tier file to the slots a map file says it has */
static bool
trim_tier(CopyState *c, Oid dirspc, int tier, uint32 nslots, uint32 page_size)
{
	char	   *path = copy_path(c, dirspc, hi_tier_suffix(tier));
	struct stat st;
	bool		ok = true;

	if (stat(path, &st) == 0 && st.st_size > (off_t) nslots * page_size)
		ok = truncate(path, (off_t) nslots * page_size) == 0;
	pfree(path);
	return ok;
}

/*
 * The copy's log restarts at position, keeping the records it holds from
 * there on (a COMMIT appended while the primary checkpointed; the primary
 * kept it too, see hi_log_reset).
 */
static bool
cut_log(CopyState *c, uint64 position)
{
	int			fd = copy_log_fd(c);
	Size		tail = c->end > position ? (Size) (c->end - position) : 0;
	char	   *buf = tail > 0 ? palloc(tail) : NULL;
	bool		ok;

	ok = fd >= 0 &&
		(tail == 0 || pg_pread(fd, buf, tail, (off_t) (position - c->base)) == (ssize_t) tail) &&
		ftruncate(fd, 0) == 0 &&
		(tail == 0 || pg_pwrite(fd, buf, tail, 0) == (ssize_t) tail) &&
		pg_fdatasync(fd) == 0;
	if (buf)
		pfree(buf);
	if (ok)
	{
		c->base = position;
		c->end = position + tail;
		c->confirmed = Max(c->confirmed, position);
		c->unsynced = false;
	}
	return ok;
}

static void
apply_map(void *arg)
{
	MapRedo    *m = (MapRedo *) arg;
	CopyState  *c = m->c;
	const HiMapHeader *h = (const HiMapHeader *) m->image;
	bool		ok;

	/* pages first: every one the map references is then in place */
	ok = apply_pending(c);

	/*
	 * An equal position is a later map of the same checkpoint (its second
	 * round moved pages down to shrink the files): WAL order says it is
	 * the newer one.
	 */
	if (ok && m->xl->position >= c->base)
	{
		char	   *path = copy_path(c, c->key.spcoid, "map");
		char	   *tmp = psprintf("%s.tmp", path);
		int			fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | PG_BINARY, pg_file_create_mode);
		int			t;

		ok = fd >= 0 &&
			pg_pwrite(fd, m->image, m->xl->len, 0) == (ssize_t) m->xl->len &&
			pg_fsync(fd) == 0;
		if (fd >= 0)
			close(fd);
		ok = ok && durable_rename(tmp, path, WARNING) == 0;
		/* the free tails the primary cut off (as of the map it wrote) */
		for (t = 0; ok && t < HI_NUM_TIERS; t++)
			if (OidIsValid(h->spcoid[t]))
				ok = trim_tier(c, h->spcoid[t], t, h->nslots[t], h->meta.page_size);
		ok = ok && cut_log(c, m->xl->position);
		pfree(tmp);
		pfree(path);
		/* the copy's log now fits its map: a later gap would be real */
		c->healable = false;
		if (ok && c->gap && m->xl->position >= c->gap_upto)
			close_gap(c);
	}
	/* parked pages are in the tier files now */
	if (ok)
		ok = ftruncate(c->pfd, 0) == 0 && pg_fdatasync(c->pfd) == 0;
	if (ok)
	{
		c->pend_end = 0;
		c->pend_unsynced = false;
	}
	else
		mark_stale(m->record, &m->xl->id, c, "checkpoints the index, which this server could not do");
}

static void
redo_map(XLogReaderState *record, const xl_hi_map *xl, const char *image)
{
	CopyState  *c = copy_state(&xl->id);
	const HiMapHeader *h = (const HiMapHeader *) image;
	MapRedo		m;

	if (!c->exists || (c->stale && !c->gap))
		return;
	if (xl->len < sizeof(HiMapHeader) || h->magic != HI_MAP_MAGIC)
	{
		mark_stale(record, &xl->id, c, "has a map file this server cannot read");
		return;
	}
	m.record = record;
	m.xl = xl;
	m.image = image;
	m.c = c;
	if (exclusive_hook)
		exclusive_hook(xl->id.dboid, xl->id.relnumber, apply_map, &m);
	else
		apply_map(&m);
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

	if (copies == NULL || !copies_unsynced)
		return;
	copies_unsynced = false;
	hash_seq_init(&st, copies);
	while ((c = hash_seq_search(&st)) != NULL)
	{
		sync_copy(c);
		sync_pending(c);
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
	CopyState  *c = copy_state(&xl->id);
	Oid			dirspc = xl->file == HI_IMAGE_OPTANE ? xl->optspc : xl->id.spcoid;
	const char *suffix = xl->file == HI_IMAGE_FLASH ? "flash" :
		xl->file == HI_IMAGE_OPTANE ? "optane" : "map";
	char	   *path;
	int			fd;
	bool		ok;
	bool		lazy;

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
		char	   *pending = copy_path(c, xl->id.spcoid, "pending");

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
	else if (info == XLOG_HI_PAGES && len >= sizeof(xl_hi_pages) &&
			 ((const xl_hi_pages *) data)->page_size > 0 &&
			 ((const xl_hi_pages *) data)->page_size <= HI_PAGE_SIZE_MAX &&
			 len == sizeof(xl_hi_pages) + (Size) ((const xl_hi_pages *) data)->npages *
			 (sizeof(uint32) + ((const xl_hi_pages *) data)->page_size))
		redo_pages(record, (const xl_hi_pages *) data, data + sizeof(xl_hi_pages));
	else if (info == XLOG_HI_MAP && len >= sizeof(xl_hi_map) &&
			 len == sizeof(xl_hi_map) + ((const xl_hi_map *) data)->len)
		redo_map(record, (const xl_hi_map *) data, data + sizeof(xl_hi_map));
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
			if (copy_log_fd(c) >= 0 &&
				ftruncate(c->fd, (off_t) (c->confirmed - c->base)) == 0)
			{
				ereport(LOG,
						(errmsg("hybrid_index: cut %llu redo log records of relfilenode %u that WAL does not hold",
								(unsigned long long) ((c->end - c->confirmed) / sizeof(HiLogRecord)),
								c->key.relnumber)));
				c->end = c->confirmed;
				c->unsynced = true;
				copies_unsynced = true;
				request_reload(c);
			}
		}
		if (c->fd >= 0 && c->unsynced)
			(void) pg_fdatasync(c->fd);
		copy_close(c);
		/* pages parked after the last checkpoint: slots no map references */
		{
			char	   *pending = copy_path(c, c->key.spcoid, "pending");

			(void) unlink(pending);
			pfree(pending);
		}
	}
	hash_destroy(copies);
	copies = NULL;
}

