/*
 * wal_redo_ckpt.c
 *	  WAL redo of an index checkpoint on a copy: the pages of a PAGES
 *	  record parked in the copy's pending file, in WAL order, until the MAP
 *	  record that writes them into the tier files, replaces the map file,
 *	  cuts the tier files' free tails and the log, as the primary did.
 */
#include "postgres.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/file_perm.h"
#include "port/pg_crc32c.h"
#include "storage/fd.h"

#include "base/hi_base.h"
#include "log/redo_log.h"
#include "log/wal_records.h"
#include "log/wal_redo_int.h"
#include "storage/storage.h"

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
		hi_copy_make_room(c);
		c->pfd = hi_copy_opened(hi_copy_open_file(c, c->key.spcoid, "pending"));
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

void
hi_copy_sync_pending(CopyState *c)
{
	hi_copy_sync_file(c, c->pfd, &c->pend_unsynced, "pending pages");
}

/* Park the pages a PAGES record carries */
void
hi_redo_pages(XLogReaderState *record, const xl_hi_pages *xl, const char *data)
{
	CopyState  *c = hi_copy_state(&xl->id);
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
		hi_copy_mark_stale(record, &xl->id, c, "has pages this server could not park");
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
			hi_copy_mark_stale(record, &xl->id, c, "has pages this server could not park");
			break;
		}
		c->pend_end += len;
	}
	c->pend_unsynced = true;
	hi_copies_unsynced = true;
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
bool
hi_copy_apply_pending(CopyState *c)
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
			(tfd[tier] = hi_copy_open_file(c, tier == HI_TIER_FLASH ? c->key.spcoid : e.optspc,
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
	char	   *path = hi_copy_path(c, dirspc, hi_tier_suffix(tier));
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
	int			fd = hi_copy_log_fd(c);
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
	ok = hi_copy_apply_pending(c);

	/*
	 * An equal position is a later map of the same checkpoint (its second
	 * round moved pages down to shrink the files): WAL order says it is
	 * the newer one.
	 */
	if (ok && m->xl->position >= c->base)
	{
		char	   *path = hi_copy_path(c, c->key.spcoid, "map");
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
			hi_copy_close_gap(c);
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
		hi_copy_mark_stale(m->record, &m->xl->id, c, "checkpoints the index, which this server could not do");
}

void
hi_redo_map(XLogReaderState *record, const xl_hi_map *xl, const char *image)
{
	CopyState  *c = hi_copy_state(&xl->id);
	const HiMapHeader *h = (const HiMapHeader *) image;
	MapRedo		m;

	if (!c->exists || (c->stale && !c->gap))
		return;
	if (xl->len < sizeof(HiMapHeader) || h->magic != HI_MAP_MAGIC)
	{
		hi_copy_mark_stale(record, &xl->id, c, "has a map file this server cannot read");
		return;
	}
	m.record = record;
	m.xl = xl;
	m.image = image;
	m.c = c;
	if (hi_redo_exclusive_hook)
		hi_redo_exclusive_hook(xl->id.dboid, xl->id.relnumber, apply_map, &m);
	else
		apply_map(&m);
}
