/*
 * wal_image.c
 *	  The IMAGE records of a build: the new index's tier files go into WAL
 *	  as the build writes them, and its map file last, so that a copy (a
 *	  standby, a restored backup) gets the files of every index created or
 *	  rebuilt after it was taken.
 *
 * A build watches its tier files (storage's hi_files_watch): every write
 * and every cut, in the order they happen, becomes an IMAGE record of the
 * same bytes at the same offset, contiguous writes merged into chunks of
 * up to HI_IMAGE_CHUNK.  Replaying them in order leaves each byte with its
 * last write, so the copy's files end as the primary's, whatever the build
 * rewrote or moved (copy-on-write, the checkpoint's compaction).  Logging
 * the files once the build was over meant reading them back from the
 * device, a quarter of a 5M-point parallel build's time; now the bytes are
 * logged from the build's own buffers, and a parallel build hands them to
 * a worker that inserts them while the leader goes on (the sink).
 *
 * Order on a copy: FIRST records empty every tier file (and forget the
 * copy's old map file), then the chunks and cuts, a LAST per tier (fsync),
 * and the map file, whose last chunk makes the index exist there.  A copy
 * whose replay stops in between has no valid map file: the index refuses
 * there instead of reading half a tree.
 */
#include "postgres.h"

#include <sys/stat.h>

#include "access/xlog.h"
#include "access/xloginsert.h"
#include "miscadmin.h"
#include "storage/fd.h"

#include "base/hi_base.h"
#include "log/redo_log.h"
#include "log/wal_records.h"
#include "storage/storage.h"

struct HiWalImage
{
	HiIndexShared *sh;
	HiWalImageSink sink;		/* NULL: insert here */
	void	   *arg;
	int			tier;			/* of the pending chunk, -1: none */
	uint64		offset;
	uint32		len;
	char	   *buf;			/* HI_IMAGE_CHUNK bytes */
};

/* this process's stream, while it watches */
static HiWalImage *watching = NULL;

static uint8
tier_file(int tier)
{
	return tier == HI_TIER_FLASH ? HI_IMAGE_FLASH : HI_IMAGE_OPTANE;
}

static void
insert_image(const xl_hi_image *xl, const char *data)
{
	XLogRecPtr	lsn;

	XLogBeginInsert();
	XLogRegisterData((char *) xl, sizeof(*xl));
	if (xl->len > 0)
		XLogRegisterData(unconstify(char *, data), xl->len);
	lsn = XLogInsert(HI_RMGR_ID, XLOG_HI_IMAGE);

	/*
	 * Have the WAL writer write and flush these records in the background,
	 * as it does an asynchronous commit's.  Otherwise the builder finds the
	 * WAL buffers full and writes them itself, fsyncing each finished
	 * segment: a fifth of both processes' time at the end of a parallel
	 * grid build of 5M points.
	 */
	XLogSetAsyncXactLSN(lsn);
}

static void
emit(HiIndexShared *sh, HiWalImageSink sink, void *arg, uint8 file, uint8 flags,
	 uint64 offset, const char *data, uint32 len)
{
	xl_hi_image xl;

	memset(&xl, 0, sizeof(xl));
	hi_wal_ident_of(sh, &xl.id);
	xl.optspc = sh->spcoid[HI_TIER_OPTANE];
	xl.file = file;
	xl.flags = flags;
	xl.len = len;
	xl.offset = offset;
	if (sink != NULL)
		sink(arg, (const char *) &xl, sizeof(xl), data, len);
	else
		insert_image(&xl, data);
}

static void
flush_pending(HiWalImage *img)
{
	if (img->tier < 0)
		return;
	emit(img->sh, img->sink, img->arg, tier_file(img->tier), 0, img->offset,
		 img->buf, img->len);
	img->tier = -1;
	img->len = 0;
}

/* A stream of sh's file writes into WAL (or to sink), watching them */
static HiWalImage *
watch_begin(HiIndexShared *sh, HiWalImageSink sink, void *arg)
{
	HiWalImage *img = palloc0(sizeof(HiWalImage));
	HiFileWatch watch = {hi_wal_image_written, hi_wal_image_truncated, img};

	img->sh = sh;
	img->sink = sink;
	img->arg = arg;
	img->tier = -1;
	img->buf = palloc(HI_IMAGE_CHUNK);
	hi_files_watch(sh, &watch);
	watching = img;
	return img;
}

/* Stop watching and emit the pending chunk */
static void
watch_end(HiWalImage *img)
{
	hi_files_watch(NULL, NULL);
	watching = NULL;
	flush_pending(img);
}

/* Will a build of sh log its files (not a temporary index's)? */
bool
hi_wal_image_wanted(HiIndexShared *sh)
{
	return hi_wal_logged(sh);
}

/*
 * Start streaming sh's tier files into WAL (NULL if its changes are not
 * logged: a temporary index): their copies are emptied first.  sink, if
 * not NULL, gets each record instead of inserting it.
 */
HiWalImage *
hi_wal_image_begin(HiIndexShared *sh, HiWalImageSink sink, void *arg)
{
	int			t;

	if (!hi_wal_logged(sh))
		return NULL;
	/* the flash tier first: its FIRST forgets what the copy had */
	for (t = 0; t < HI_NUM_TIERS; t++)
		if (OidIsValid(sh->spcoid[t]))
			emit(sh, sink, arg, tier_file(t), HI_IMAGE_FIRST, 0, NULL, 0);
	sh->image_foreign = false;
	sh->image_open = true;
	pg_memory_barrier();
	return watch_begin(sh, sink, arg);
}

/*
 * A helper process of a parallel build writes part of sh's tier files:
 * stream its writes too (NULL if sh is not logged).  The leader's
 * hi_wal_image_begin logged FIRST before the helper started; the leader
 * logs LAST once the helper is done (hi_wal_image_leave).
 */
HiWalImage *
hi_wal_image_join(HiIndexShared *sh)
{
	return hi_wal_logged(sh) ? watch_begin(sh, NULL, NULL) : NULL;
}

/* The helper's part is written: its last chunk (NULL: nothing joined) */
void
hi_wal_image_leave(HiWalImage *img)
{
	if (img == NULL)
		return;
	watch_end(img);
	pfree(img->buf);
	pfree(img);
}

/*
 * Emit this process's pending chunk now.  Two processes writing one index
 * (a parallel build's leader and helper) call this before the other may
 * write: a slot superseded by one of them can be reused by the other, and
 * replay must see the two writes of its bytes in the order they happened.
 */
void
hi_wal_image_sync(void)
{
	if (watching != NULL)
		flush_pending(watching);
}

/* A write of the build (HiFileWatch.written; arg is the HiWalImage) */
void
hi_wal_image_written(void *arg, int tier, uint64 offset, const char *data, uint32 len)
{
	HiWalImage *img = (HiWalImage *) arg;

	while (len > 0)
	{
		uint32		n;

		if (img->tier >= 0 &&
			(img->tier != tier || img->offset + img->len != offset ||
			 img->len == HI_IMAGE_CHUNK))
			flush_pending(img);
		if (img->tier < 0)
		{
			img->tier = tier;
			img->offset = offset;
		}
		n = Min(len, HI_IMAGE_CHUNK - img->len);
		memcpy(img->buf + img->len, data, n);
		img->len += n;
		offset += n;
		data += n;
		len -= n;
	}
}

/* A cut of a tier file (HiFileWatch.truncated) */
void
hi_wal_image_truncated(void *arg, int tier, uint64 len)
{
	HiWalImage *img = (HiWalImage *) arg;

	flush_pending(img);
	emit(img->sh, img->sink, img->arg, tier_file(tier), HI_IMAGE_CUT, len, NULL, 0);
}

/* The build failed: stop watching its files (NULL: nothing was started) */
void
hi_wal_image_abandon(HiWalImage *img)
{
	if (img != NULL)
	{
		hi_files_watch(NULL, NULL);
		watching = NULL;
		img->sh->image_open = false;
	}
}

/*
 * Other processes wrote pages of the build (evicting them from the shared
 * cache): those writes are not in the image, so log the tier files again
 * as they are now, every byte, and their length.  The build's checkpoint
 * has written every page and waited for the evictions in progress, and
 * tree_lock keeps pages from being dirtied, so the files hold the build's
 * last word; replayed after the build's own records, these leave a copy's
 * files equal to them.
 */
static void
relog_files(HiWalImage *img)
{
	HiIndexShared *sh = img->sh;
	int			t;

	ereport(LOG_SERVER_ONLY,
			(errmsg("hybrid_index: other sessions wrote pages of index %u while it was built; its files go to WAL once more",
					sh->indexoid),
			 errhint("A larger hybrid_index.cache_size keeps a build's pages in the cache.")));
	for (t = 0; t < HI_NUM_TIERS; t++)
	{
		int			fd;
		struct stat st;
		uint64		off = 0;

		if (!OidIsValid(sh->spcoid[t]))
			continue;
		fd = hi_file_open_existing(sh, t);
		if (fd < 0)
			continue;			/* no fast tier file: FIRST left the copy's empty */
		if (fstat(fd, &st) != 0)
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not stat tier %s of index %u: %m",
							hi_tier_suffix(t), sh->indexoid)));
		while (off < (uint64) st.st_size)
		{
			uint32		n = (uint32) Min((uint64) HI_IMAGE_CHUNK, (uint64) st.st_size - off);
			ssize_t		got = pg_pread(fd, img->buf, n, (off_t) off);

			if (got != (ssize_t) n)
				ereport(ERROR,
						(errcode_for_file_access(),
						 errmsg("could not read tier %s of index %u at offset %llu: %m",
								hi_tier_suffix(t), sh->indexoid,
								(unsigned long long) off)));
			emit(sh, img->sink, img->arg, tier_file(t), 0, off, img->buf, n);
			off += n;
			CHECK_FOR_INTERRUPTS();
		}
		emit(sh, img->sink, img->arg, tier_file(t), HI_IMAGE_CUT, (uint64) st.st_size, NULL, 0);
	}
}

/*
 * The tier files are complete (NULL: nothing was started): the last
 * chunks, then a LAST per file
 */
void
hi_wal_image_finish(HiWalImage *img)
{
	int			t;

	if (img == NULL)
		return;
	watch_end(img);
	pg_memory_barrier();
	if (img->sh->image_foreign)
		relog_files(img);
	img->sh->image_open = false;
	for (t = 0; t < HI_NUM_TIERS; t++)
		if (OidIsValid(img->sh->spcoid[t]))
			emit(img->sh, img->sink, img->arg, tier_file(t), HI_IMAGE_LAST, 0, NULL, 0);
	pfree(img->buf);
	pfree(img);
}

/* A record a sink passed on (a parallel build's worker inserts it) */
void
hi_wal_image_insert(const char *rec, Size len)
{
	xl_hi_image xl;

	if (len < sizeof(xl))
		elog(ERROR, "hybrid_index: an IMAGE record of %zu bytes is too short", len);
	memcpy(&xl, rec, sizeof(xl));
	if (xl.len != len - sizeof(xl) || xl.len > HI_IMAGE_CHUNK)
		elog(ERROR, "hybrid_index: an IMAGE record says %u bytes and carries %zu",
			 xl.len, len - sizeof(xl));
	insert_image(&xl, rec + sizeof(xl));
}

/*
 * Log the map file of a build whose tier files were streamed (after the
 * build's checkpoint wrote it, and after every chunk of the tier files):
 * its last chunk makes the index exist on a copy.
 */
void
hi_wal_log_image_map(HiIndexShared *sh)
{
	char	   *path;
	int			fd;
	char	   *buf;
	uint64		off = 0;
	bool		first = true;

	if (!hi_wal_logged(sh))
		return;
	path = hi_file_path(sh->spcoid[HI_TIER_FLASH], sh->dboid,
						sh->spcoid[HI_TIER_FLASH], sh->relnumber, "map");
	fd = OpenTransientFile(path, O_RDONLY | PG_BINARY);
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
		emit(sh, NULL, NULL, HI_IMAGE_MAP, flags, off, buf, (uint32) r);
		off += r;
		first = false;
		if (flags & HI_IMAGE_LAST)
			break;
		CHECK_FOR_INTERRUPTS();
	}
	pfree(buf);
	CloseTransientFile(fd);
	pfree(path);
}
