/*
 * page_cache.c
 *	  The shared page cache of hybrid_index: our pages never enter
 *	  PostgreSQL's shared buffers.
 *
 * Frames are hybrid_index.max_page_size bytes, aligned for O_DIRECT; an
 * index with smaller pages uses the front of a frame.  A partitioned shared
 * hash maps (index slot, slot generation, logical page) to a frame.
 * Replacement is a clock sweep (cache_evict.c); an index with a budget (reloption
 * buffer_size) that is at its budget evicts only its own pages, which is
 * how experiments reproduce the papers' small per-index buffers.
 *
 * Misses of a batch are read with one batched I/O per index; the dirty
 * victims they displace are written first, in one batch of writes.
 *
 * Locking: the frame header spinlock protects tag, flags, refcount and
 * usage; the partition locks protect the hash.  A pinned frame is never
 * evicted.  IO_IN_PROGRESS marks a frame being read in or written out: no
 * one modifies it meanwhile, and readers of a frame being read in wait.
 * Page contents are protected by the index's tree_lock (see rtree/).
 */
#include "postgres.h"

#include "executor/instrument.h"
#include "miscadmin.h"
#include "port/pg_crc32c.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

#include "cache/cache_int.h"
#include "storage/storage.h"

/* the cache's shared state (declared in cache_int.h) */
HiCacheCtl *cache_ctl;
HiFrameDesc *cache_descs;
char	   *cache_frame_data;
HTAB	   *cache_frame_map;
LWLockPadded *cache_part_locks;

/* backend-local pins, released at (sub)transaction abort */
int32	   *cache_local_pins = NULL;

static int
cache_nframes(void)
{
	int64		n = (int64) hi_cache_size_mb * 1024 * 1024 / hi_max_page_size;

	return (int) Max(n, 16);
}

Size
hi_cache_shmem_size(void)
{
	int			n = cache_nframes();
	Size		sz = MAXALIGN(sizeof(HiCacheCtl));

	RequestNamedLWLockTranche("hybrid_index_cache", HI_CACHE_PARTITIONS);
	sz = add_size(sz, mul_size(n, sizeof(HiFrameDesc)));
	sz = add_size(sz, mul_size(n, hi_max_page_size));
	sz = add_size(sz, HI_IO_ALIGN);
	sz = add_size(sz, hash_estimate_size(n, sizeof(HiMapEntry)));
	sz = add_size(sz, hi_spill_shmem_size(n));
	return sz;
}

void
hi_cache_shmem_init(bool found_any)
{
	int			n = cache_nframes();
	bool		found;
	HASHCTL		info;
	char	   *raw;

	cache_ctl = ShmemInitStruct("hybrid_index cache ctl", sizeof(HiCacheCtl), &found);
	cache_descs = ShmemInitStruct("hybrid_index cache descs",
							mul_size(n, sizeof(HiFrameDesc)), &found);
	raw = ShmemInitStruct("hybrid_index cache frames",
						  add_size(mul_size(n, hi_max_page_size), HI_IO_ALIGN), &found);
	cache_frame_data = (char *) TYPEALIGN(HI_IO_ALIGN, raw);
	cache_part_locks = GetNamedLWLockTranche("hybrid_index_cache");

	memset(&info, 0, sizeof(info));
	info.keysize = sizeof(HiFrameTag);
	info.entrysize = sizeof(HiMapEntry);
	info.num_partitions = HI_CACHE_PARTITIONS;
	cache_frame_map = hi_shmem_init_hash("hybrid_index cache map", n, &info,
									 HASH_ELEM | HASH_BLOBS | HASH_PARTITION);
	hi_spill_shmem_init(n);

	if (!found)
	{
		int			i;

		cache_ctl->nframes = n;
		cache_ctl->frame_size = hi_max_page_size;
		pg_atomic_init_u32(&cache_ctl->clock, 0);
		for (i = 0; i < n; i++)
		{
			SpinLockInit(&cache_descs[i].hdr);
			cache_descs[i].flags = 0;
			cache_descs[i].usage = 0;
			cache_descs[i].refcount = 0;
		}
	}
}

char *
hi_frame_data(HiFrame f)
{
	return cache_frame_data + (Size) f * cache_ctl->frame_size;
}

void
cache_ensure_local(void)
{
	if (cache_local_pins == NULL)
		cache_local_pins = MemoryContextAllocZero(TopMemoryContext,
											sizeof(int32) * cache_ctl->nframes);
}

LWLock *
cache_part_lock(uint32 hash)
{
	return &cache_part_locks[hash % HI_CACHE_PARTITIONS].lock;
}

void
cache_unpin(HiFrame f)
{
	HiFrameDesc *d = &cache_descs[f];

	SpinLockAcquire(&d->hdr);
	Assert(d->refcount > 0);
	d->refcount--;
	SpinLockRelease(&d->hdr);
	cache_local_pins[f]--;
}

void
hi_frame_release(HiFrame f)
{
	cache_unpin(f);
}

/* Wait until nobody is reading the frame in or writing it out */
void
cache_wait_io(HiFrame f)
{
	for (;;)
	{
		HiFrameDesc *d = &cache_descs[f];
		uint16		flags;

		SpinLockAcquire(&d->hdr);
		flags = d->flags;
		SpinLockRelease(&d->hdr);
		if (!(flags & FR_IO))
			return;
		pg_usleep(20);
		CHECK_FOR_INTERRUPTS();
	}
}

/* Look a page up and pin it; -1 if not cached */
HiFrame
cache_lookup_pin(const HiFrameTag *tag)
{
	uint32		hash = get_hash_value(cache_frame_map, tag);
	HiMapEntry *e;
	HiFrame		f = -1;

	LWLockAcquire(cache_part_lock(hash), LW_SHARED);
	e = hash_search_with_hash_value(cache_frame_map, tag, hash, HASH_FIND, NULL);
	if (e)
	{
		HiFrameDesc *d = &cache_descs[e->frame];

		f = e->frame;
		SpinLockAcquire(&d->hdr);
		d->refcount++;
		if (d->usage < HI_MAX_USAGE)
			d->usage++;
		SpinLockRelease(&d->hdr);
		cache_local_pins[f]++;
	}
	LWLockRelease(cache_part_lock(hash));
	return f;
}

/*
 * Map a detached frame to tag.  If another backend mapped the page
 * meanwhile, the frame goes back and theirs is pinned instead (*ours false).
 */
static HiFrame
map_frame(HiFrame f, const HiFrameTag *tag, uint16 flags, bool *ours)
{
	uint32		hash = get_hash_value(cache_frame_map, tag);
	HiMapEntry *e;
	bool		found;
	HiFrameDesc *d = &cache_descs[f];

	LWLockAcquire(cache_part_lock(hash), LW_EXCLUSIVE);
	e = hash_search_with_hash_value(cache_frame_map, tag, hash, HASH_ENTER_NULL, &found);
	if (e == NULL)
	{
		LWLockRelease(cache_part_lock(hash));
		cache_return_victim(f);
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("hybrid_index cache map is full")));
	}
	if (found)
	{
		HiFrame		theirs = e->frame;
		HiFrameDesc *td = &cache_descs[theirs];

		SpinLockAcquire(&td->hdr);
		td->refcount++;
		SpinLockRelease(&td->hdr);
		cache_local_pins[theirs]++;
		LWLockRelease(cache_part_lock(hash));
		cache_return_victim(f);
		*ours = false;
		return theirs;
	}
	e->frame = f;
	SpinLockAcquire(&d->hdr);
	d->tag = *tag;
	d->flags = FR_TAG_VALID | flags;
	d->usage = 1;
	SpinLockRelease(&d->hdr);
	LWLockRelease(cache_part_lock(hash));
	pg_atomic_fetch_add_u32(&hi_shared->indexes[tag->slotno].nframes, 1);
	*ours = true;
	return f;
}

/* Undo a mapping whose read failed */
static void
unmap_failed(HiFrame f)
{
	HiFrameDesc *d = &cache_descs[f];
	HiFrameTag	tag = d->tag;
	uint32		hash = get_hash_value(cache_frame_map, &tag);

	LWLockAcquire(cache_part_lock(hash), LW_EXCLUSIVE);
	hash_search_with_hash_value(cache_frame_map, &tag, hash, HASH_REMOVE, NULL);
	SpinLockAcquire(&d->hdr);
	d->flags = 0;
	d->usage = 0;
	SpinLockRelease(&d->hdr);
	LWLockRelease(cache_part_lock(hash));
	pg_atomic_fetch_sub_u32(&hi_shared->indexes[tag.slotno].nframes, 1);
	cache_unpin(f);
}

/*
 * Pin the frames of n distinct pages, reading the missing ones in one
 * batch.  frames[i] receives the frame of pagenos[i].  Returns how many
 * were not cached.  No frame returned is being read or written: a caller
 * holding tree_lock exclusively may change them at once.
 */
int
hi_cache_read_batch(HiIndex *idx, const uint32 *pagenos, int n, HiFrame *frames)
{
	HiFrameTag	tag;
	int		   *miss = palloc(sizeof(int) * n);
	int			nmiss = 0;
	HiFrame    *free_frames;
	int		   *toread;
	int			nread = 0;
	int			i;
	int			nwait = 0;
	int		   *waits = palloc(sizeof(int) * n);

	cache_ensure_local();
	tag.slotno = idx->slotno;
	tag.generation = idx->generation;
	for (i = 0; i < n; i++)
	{
		tag.pageno = pagenos[i];
		frames[i] = cache_lookup_pin(&tag);
		if (frames[i] < 0)
			miss[nmiss++] = i;
		else
			waits[nwait++] = i;
	}
	pg_atomic_fetch_add_u64(&idx->sh->cache_hits, n - nmiss);
	/* EXPLAIN (BUFFERS) shows our hits as shared hits; misses are reads */
	pgBufferUsage.shared_blks_hit += n - nmiss;
	pg_atomic_fetch_add_u64(&idx->sh->cache_misses, nmiss);

	if (nmiss > 0)
	{
		HiFrame    *mapped;
		volatile int nmapped = 0;

		free_frames = palloc(sizeof(HiFrame) * nmiss);
		toread = palloc(sizeof(int) * nmiss);
		mapped = palloc(sizeof(HiFrame) * nmiss);
		cache_get_free_frames(idx, free_frames, nmiss);
		PG_TRY();
		{
			for (i = 0; i < nmiss; i++)
			{
				bool		ours;
				int			k = miss[i];

				tag.pageno = pagenos[k];
				frames[k] = map_frame(free_frames[i], &tag, FR_IO, &ours);
				if (ours)
				{
					toread[nread++] = k;
					mapped[nmapped++] = frames[k];
				}
				else
					waits[nwait++] = k;
			}

			/* pages parked while the disk was full come back, still dirty */
			if (hi_spill_any())
			{
				int			keep = 0;

				for (i = 0; i < nread; i++)
				{
					int			k = toread[i];

					if (hi_spill_take(idx->slotno, idx->generation, pagenos[k],
									  hi_frame_data(frames[k])))
					{
						HiFrameDesc *d = &cache_descs[frames[k]];

						SpinLockAcquire(&d->hdr);
						d->flags = (d->flags & ~FR_IO) | FR_VALID | FR_DIRTY;
						SpinLockRelease(&d->hdr);
					}
					else
						toread[keep++] = k;
				}
				nread = keep;
			}
		}
		PG_CATCH();
		{
			/*
			 * The pages we mapped and marked FR_IO will not be read: unmap
			 * them, so that other backends waiting for them read them
			 * themselves instead of waiting forever.
			 */
			for (i = 0; i < nmapped; i++)
			{
				HiFrameDesc *d = &cache_descs[mapped[i]];
				bool		io;

				SpinLockAcquire(&d->hdr);
				io = (d->flags & FR_IO) != 0;
				SpinLockRelease(&d->hdr);
				if (io)
					unmap_failed(mapped[i]);
			}
			PG_RE_THROW();
		}
		PG_END_TRY();

		PG_TRY();
		{
			char	  **bufs = palloc(sizeof(char *) * Max(nread, 1));
			uint32	   *pnos = palloc(sizeof(uint32) * Max(nread, 1));

			for (i = 0; i < nread; i++)
			{
				bufs[i] = hi_frame_data(frames[toread[i]]);
				pnos[i] = pagenos[toread[i]];
			}
			hi_store_read_pages(idx->sh, hi_index_name(idx),
								pnos, nread, bufs, NULL);
			pfree(bufs);
			pfree(pnos);
		}
		PG_CATCH();
		{
			for (i = 0; i < nread; i++)
				unmap_failed(frames[toread[i]]);
			PG_RE_THROW();
		}
		PG_END_TRY();

		for (i = 0; i < nread; i++)
		{
			HiFrameDesc *d = &cache_descs[frames[toread[i]]];

			SpinLockAcquire(&d->hdr);
			d->flags = (d->flags & ~FR_IO) | FR_VALID;
			SpinLockRelease(&d->hdr);
		}
		pfree(free_frames);
		pfree(toread);
		pfree(mapped);
	}

	/* pages someone else is reading in: wait, and retry if they failed */
	for (i = 0; i < nwait; i++)
	{
		int			k = waits[i];
		HiFrameDesc *d = &cache_descs[frames[k]];
		bool		valid;

		cache_wait_io(frames[k]);
		SpinLockAcquire(&d->hdr);
		valid = (d->flags & FR_VALID) != 0;
		SpinLockRelease(&d->hdr);
		if (!valid)
		{
			cache_unpin(frames[k]);
			hi_cache_read_batch(idx, &pagenos[k], 1, &frames[k]);
		}
	}
	if (!idx->maintenance && hi_store_policy(idx->sh)->note_reads != NULL)
	{
		char	  **pages = palloc(sizeof(char *) * Max(n, 1));

		for (i = 0; i < n; i++)
			pages[i] = hi_frame_data(frames[i]);
		hi_store_policy(idx->sh)->note_reads(idx->sh, idx->slotno, pagenos, pages, n);
		pfree(pages);
	}
	pfree(miss);
	pfree(waits);
	return nmiss;
}

/* Pages the shared cache holds, all indexes together */
int
hi_cache_frames(void)
{
	return cache_ctl->nframes;
}

/*
 * How many pages a caller should pin at once in one batch: the I/O depth,
 * but no more than half the index's budget (or of the cache).
 */
int
hi_cache_batch_limit(HiIndex *idx)
{
	int			limit = Max(hi_io_depth, 1);
	int			cap = idx->sh->budget_frames > 0 ? idx->sh->budget_frames : cache_ctl->nframes;

	return Max(1, Min(limit, cap / 2));
}

/*
 * Read n distinct pages through the cache in batches it can read at once;
 * with bufs, copy each into bufs (page_size bytes each), else pin none
 */
static void
read_through(HiIndex *idx, const uint32 *pagenos, int n, char **bufs)
{
	int			limit = hi_cache_batch_limit(idx);
	HiFrame    *frames = palloc(sizeof(HiFrame) * Max(Min(n, limit), 1));
	int			off;

	for (off = 0; off < n; off += limit)
	{
		int			k = Min(limit, n - off);
		int			i;

		hi_cache_read_batch(idx, pagenos + off, k, frames);
		for (i = 0; i < k; i++)
		{
			if (bufs != NULL)
				memcpy(bufs[off + i], hi_frame_data(frames[i]), idx->page_size);
			hi_frame_release(frames[i]);
		}
	}
	pfree(frames);
}

/*
 * Copies of the current versions of n distinct pages into bufs (page_size
 * bytes each), read through the cache in batches: for buffers of an
 * access method's own (eFIND's, the grids') that share the cache below.
 */
void
hi_cache_copy_pages(HiIndex *idx, const uint32 *pagenos, int n, char **bufs)
{
	read_through(idx, pagenos, n, bufs);
}

HiFrame
hi_cache_read(HiIndex *idx, uint32 pageno)
{
	HiFrame		f;

	hi_cache_read_batch(idx, &pageno, 1, &f);
	return f;
}

/* A pinned frame gets a newer version of its page; dirty: not yet stored */
static void
overwrite_frame(HiFrame f, const char *page, uint32 page_size, bool dirty)
{
	/* a read-in or a write-out of it ends first */
	cache_wait_io(f);
	memcpy(hi_frame_data(f), page, page_size);
	SpinLockAcquire(&cache_descs[f].hdr);
	cache_descs[f].flags |= FR_VALID | (dirty ? FR_DIRTY : 0);
	SpinLockRelease(&cache_descs[f].hdr);
}

/*
 * The current versions of n distinct pages into the cache: those it holds
 * are overwritten, the others take free frames together (one batch of
 * victims).  dirty: the versions are not in their tier files yet.
 */
static void
put_pages(HiIndex *idx, const uint32 *pagenos, int n, char *const *pages,
		  bool dirty)
{
	HiFrameTag	tag;
	HiFrame    *frames = palloc(sizeof(HiFrame) * Max(n, 1));
	int		   *miss = palloc(sizeof(int) * Max(n, 1));
	int			nmiss = 0;
	int			i;

	cache_ensure_local();
	memset(&tag, 0, sizeof(tag));
	tag.slotno = idx->slotno;
	tag.generation = idx->generation;
	for (i = 0; i < n; i++)
	{
		HiFrame		f;

		tag.pageno = pagenos[i];
		f = cache_lookup_pin(&tag);
		if (f < 0)
		{
			miss[nmiss++] = i;
			continue;
		}
		overwrite_frame(f, pages[i], idx->page_size, dirty);
		cache_unpin(f);
	}
	if (nmiss > 0)
		cache_get_free_frames(idx, frames, nmiss);
	for (i = 0; i < nmiss; i++)
	{
		HiFrame		f = frames[i];
		bool		ours;

		tag.pageno = pagenos[miss[i]];
		/* an older version parked while the disk was full is superseded */
		if (hi_spill_any())
			(void) hi_spill_take(tag.slotno, tag.generation, tag.pageno, hi_frame_data(f));
		memcpy(hi_frame_data(f), pages[miss[i]], idx->page_size);
		f = map_frame(f, &tag, FR_VALID | (dirty ? FR_DIRTY : 0), &ours);
		/* cached meanwhile (a reader of a clean copy): overwrite it */
		if (!ours)
			overwrite_frame(f, pages[miss[i]], idx->page_size, dirty);
		cache_unpin(f);
	}
	pfree(frames);
	pfree(miss);
}

/*
 * Hand the current versions of n distinct pages to the cache as dirty
 * frames instead of writing them now: eviction and the index checkpoint
 * write them, in batches, like every dirty page (eFIND's flushes and the
 * grids' buffers when they share the cache).  Nobody may change these
 * pages meanwhile: eFIND holds the index's tree_lock exclusively, a grid
 * its buffer's lock (its pages change only under tree_lock exclusively).
 */
void
hi_cache_write_back(HiIndex *idx, const uint32 *pagenos, int n, char *const *pages)
{
	put_pages(idx, pagenos, n, pages, true);
}

/*
 * n pages were just written to their tier files past the cache (by a bulk
 * load, page_batch.c): the cache keeps clean copies, so that later reads
 * of them are memory copies, not device reads.  Nobody else may read or
 * write these pages meanwhile (the build holds them).
 */
void
hi_cache_put_clean(HiIndex *idx, const uint32 *pagenos, int n, char *const *pages)
{
	int			limit = hi_cache_batch_limit(idx);
	int			off;

	/* in batches a small cache can hold (its victims are found together) */
	for (off = 0; off < n; off += limit)
	{
		MemoryContext cxt = CurrentMemoryContext;
		uint32		holdoff = InterruptHoldoffCount;
		bool		full = false;

		PG_TRY();
		{
			put_pages(idx, pagenos + off, Min(limit, n - off), pages + off, false);
		}
		PG_CATCH();
		{
			ErrorData  *edata;

			/*
			 * They are copies: a full disk met while the cache writes
			 * another index's dirty victims costs them, not the caller's
			 * write, which is done.  (Finding no victim at all is not
			 * caught: its candidates stay pinned until the abort.)
			 */
			MemoryContextSwitchTo(cxt);
			edata = CopyErrorData();
			if (edata->sqlerrcode != ERRCODE_DISK_FULL)
				PG_RE_THROW();
			hi_error_handled(holdoff);
			FreeErrorData(edata);
			full = true;
		}
		PG_END_TRY();
		if (full)
			break;
	}
}

/*
 * Does the cache hold a version of a page that may not be in its tier file
 * yet (cached, or parked while the disk was full)?
 */
bool
hi_cache_holds(HiIndex *idx, uint32 pageno)
{
	HiFrameTag	tag;
	HiFrame		f;

	cache_ensure_local();
	memset(&tag, 0, sizeof(tag));
	tag.slotno = idx->slotno;
	tag.generation = idx->generation;
	tag.pageno = pageno;
	f = cache_lookup_pin(&tag);
	if (f >= 0)
	{
		cache_unpin(f);
		return true;
	}
	return hi_spill_has(tag.slotno, tag.generation, pageno);
}

/*
 * Bring n distinct pages into the cache, in batches it can read at once,
 * pinning none of them: the read-ahead of buffers that share the cache
 * (eFIND's, the grids').  Pages it holds already cost a lookup.
 */
void
hi_cache_prefetch(HiIndex *idx, const uint32 *pagenos, int n)
{
	read_through(idx, pagenos, n, NULL);
}

/* A frame for a brand-new page (zeroed, dirty, pinned) */
HiFrame
hi_cache_new_page(HiIndex *idx, uint32 pageno)
{
	HiFrame		f;
	HiFrameTag	tag;
	bool		ours;

	cache_ensure_local();
	cache_get_free_frames(idx, &f, 1);
	tag.slotno = idx->slotno;
	tag.generation = idx->generation;
	tag.pageno = pageno;
	memset(hi_frame_data(f), 0, idx->page_size);
	f = map_frame(f, &tag, FR_VALID | FR_DIRTY, &ours);
	if (!ours)
		elog(ERROR, "new page %u of index \"%s\" is already cached",
			 pageno, hi_index_name(idx));
	return f;
}

/* Before modifying a pinned frame: wait for a write-out in progress */
void
hi_frame_begin_write(HiFrame f)
{
	cache_wait_io(f);
}

void
hi_frame_mark_dirty(HiFrame f)
{
	HiFrameDesc *d = &cache_descs[f];

	SpinLockAcquire(&d->hdr);
	d->flags |= FR_DIRTY;
	SpinLockRelease(&d->hdr);
}

/* ---- the shared cache as a page source (hyrtree) ---- */

static void
src_read_batch(HiIndex *idx, const uint32 *pagenos, int n, HiFrame *frames)
{
	hi_cache_read_batch(idx, pagenos, n, frames);
}

static HiFrame
src_new_page(HiIndex *idx, uint32 pageno)
{
	return hi_cache_new_page(idx, pageno);
}

static char *
src_data(HiIndex *idx, HiFrame f)
{
	return hi_frame_data(f);
}

static void
src_begin_write(HiIndex *idx, HiFrame f)
{
	hi_frame_begin_write(f);
}

static void
src_mark_dirty(HiIndex *idx, HiFrame f)
{
	hi_frame_mark_dirty(f);
}

static void
src_release(HiIndex *idx, HiFrame f)
{
	hi_frame_release(f);
}

static void
src_flush_all(HiIndex *idx)
{
	hi_cache_flush_index(idx->sh, idx->slotno);
}

/*
 * Pages read ahead stay in the cache until the reader needs them unless
 * other pages evict them first: a quarter of the index's budget (or of
 * the cache) leaves room for what the readers pin meanwhile.
 */
int
hi_cache_ahead_limit(HiIndex *idx)
{
	int			cap = idx->sh->budget_frames > 0 ? idx->sh->budget_frames : cache_ctl->nframes;

	return cap / 4;
}

const HiPageSource hi_cache_source = {
	src_read_batch,
	src_new_page,
	src_data,
	src_begin_write,
	src_mark_dirty,
	src_release,
	hi_cache_batch_limit,
	src_flush_all,
	hi_cache_ahead_limit,
	NULL						/* read_batch and release are the read-ahead */
};
