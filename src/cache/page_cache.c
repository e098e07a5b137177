/*
 * page_cache.c
 *	  The shared page cache of hybrid_index: our pages never enter
 *	  PostgreSQL's shared buffers.
 *
 * Frames are hybrid_index.max_page_size bytes, aligned for O_DIRECT; an
 * index with smaller pages uses the front of a frame.  A partitioned shared
 * hash maps (index slot, slot generation, logical page) to a frame.
 * Replacement is a clock sweep; an index with a budget (reloption
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

#include "miscadmin.h"
#include "port/pg_crc32c.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

#include "cache/page_cache.h"
#include "storage/storage.h"

#define HI_CACHE_PARTITIONS 16
#define HI_MAX_USAGE 5

#define FR_TAG_VALID	0x01
#define FR_VALID		0x02
#define FR_DIRTY		0x04
#define FR_IO			0x08

typedef struct HiFrameTag
{
	uint32		slotno;
	uint32		generation;
	uint32		pageno;
} HiFrameTag;

typedef struct HiFrameDesc
{
	HiFrameTag	tag;
	slock_t		hdr;
	uint16		flags;
	uint16		usage;
	int32		refcount;
} HiFrameDesc;

typedef struct HiMapEntry
{
	HiFrameTag	tag;
	int			frame;
} HiMapEntry;

typedef struct HiCacheCtl
{
	int			nframes;
	int			frame_size;
	pg_atomic_uint32 clock;
} HiCacheCtl;

static HiCacheCtl *ctl;
static HiFrameDesc *descs;
static char *frame_data;
static HTAB *frame_map;
static LWLockPadded *part_locks;

/* backend-local pins, released at (sub)transaction abort */
static int32 *local_pins = NULL;

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

	ctl = ShmemInitStruct("hybrid_index cache ctl", sizeof(HiCacheCtl), &found);
	descs = ShmemInitStruct("hybrid_index cache descs",
							mul_size(n, sizeof(HiFrameDesc)), &found);
	raw = ShmemInitStruct("hybrid_index cache frames",
						  add_size(mul_size(n, hi_max_page_size), HI_IO_ALIGN), &found);
	frame_data = (char *) TYPEALIGN(HI_IO_ALIGN, raw);
	part_locks = GetNamedLWLockTranche("hybrid_index_cache");

	memset(&info, 0, sizeof(info));
	info.keysize = sizeof(HiFrameTag);
	info.entrysize = sizeof(HiMapEntry);
	info.num_partitions = HI_CACHE_PARTITIONS;
	frame_map = ShmemInitHash("hybrid_index cache map", n, n, &info,
							  HASH_ELEM | HASH_BLOBS | HASH_PARTITION);
	hi_spill_shmem_init(n);

	if (!found)
	{
		int			i;

		ctl->nframes = n;
		ctl->frame_size = hi_max_page_size;
		pg_atomic_init_u32(&ctl->clock, 0);
		for (i = 0; i < n; i++)
		{
			SpinLockInit(&descs[i].hdr);
			descs[i].flags = 0;
			descs[i].usage = 0;
			descs[i].refcount = 0;
		}
	}
}

char *
hi_frame_data(HiFrame f)
{
	return frame_data + (Size) f * ctl->frame_size;
}

static void
ensure_local(void)
{
	if (local_pins == NULL)
		local_pins = MemoryContextAllocZero(TopMemoryContext,
											sizeof(int32) * ctl->nframes);
}

static LWLock *
part_lock(uint32 hash)
{
	return &part_locks[hash % HI_CACHE_PARTITIONS].lock;
}

static void
unpin(HiFrame f)
{
	HiFrameDesc *d = &descs[f];

	SpinLockAcquire(&d->hdr);
	Assert(d->refcount > 0);
	d->refcount--;
	SpinLockRelease(&d->hdr);
	local_pins[f]--;
}

void
hi_frame_release(HiFrame f)
{
	unpin(f);
}

/* Wait until nobody is reading the frame in or writing it out */
static void
wait_io(HiFrame f)
{
	for (;;)
	{
		HiFrameDesc *d = &descs[f];
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
static HiFrame
lookup_pin(const HiFrameTag *tag)
{
	uint32		hash = get_hash_value(frame_map, tag);
	HiMapEntry *e;
	HiFrame		f = -1;

	LWLockAcquire(part_lock(hash), LW_SHARED);
	e = hash_search_with_hash_value(frame_map, tag, hash, HASH_FIND, NULL);
	if (e)
	{
		HiFrameDesc *d = &descs[e->frame];

		f = e->frame;
		SpinLockAcquire(&d->hdr);
		d->refcount++;
		if (d->usage < HI_MAX_USAGE)
			d->usage++;
		SpinLockRelease(&d->hdr);
		local_pins[f]++;
	}
	LWLockRelease(part_lock(hash));
	return f;
}

/*
 * Write out frames that the caller has pinned and marked FR_IO (and that
 * are dirty), grouped per index.  Clears DIRTY and IO.
 */
static void
flush_frames(HiFrame *frames, int n)
{
	int			i;
	char	  **pages = palloc(sizeof(char *) * n);
	int		   *members = palloc(sizeof(int) * n);
	bool	   *grouped = palloc0(sizeof(bool) * n);
	bool	   *written = palloc0(sizeof(bool) * n);

	PG_TRY();
	{
		for (i = 0; i < n; i++)
		{
			HiFrameTag	tag = descs[frames[i]].tag;
			HiIndexShared *sh = &hi_shared->indexes[tag.slotno];
			int			cnt = 0;
			int			j;

			if (grouped[i])
				continue;
			for (j = i; j < n; j++)
			{
				HiFrameTag	t2 = descs[frames[j]].tag;

				if (!grouped[j] && t2.slotno == tag.slotno && t2.generation == tag.generation)
				{
					pages[cnt] = hi_frame_data(frames[j]);
					members[cnt++] = j;
					grouped[j] = true;
				}
			}

			/*
			 * A dropped or rebuilt index, or one whose database was dropped
			 * (its files are gone): its pages are just forgotten.
			 */
			if (sh->in_use && sh->generation == tag.generation && sh->loaded &&
				hi_slot_files_exist(sh))
				hi_store_write(sh, pages, cnt);
			for (j = 0; j < cnt; j++)
				written[members[j]] = true;
		}
	}
	PG_FINALLY();
	{
		/* frames whose write failed stay dirty: nothing is lost */
		for (i = 0; i < n; i++)
		{
			HiFrameDesc *d = &descs[frames[i]];

			SpinLockAcquire(&d->hdr);
			if (written[i])
				d->flags &= ~FR_DIRTY;
			d->flags &= ~FR_IO;
			SpinLockRelease(&d->hdr);
		}
	}
	PG_END_TRY();
	pfree(pages);
	pfree(members);
	pfree(grouped);
	pfree(written);
}

/*
 * Find a victim frame and pin it.  A dirty victim comes back with FR_IO set
 * (set under the same spinlock hold as the pin, so nobody can start
 * modifying it before it is written out); *dirty tells.
 */
static HiFrame
clock_victim(int restrict_slot, bool clean_only, bool *dirty)
{
	int			n = ctl->nframes;
	int			tries;

	for (tries = 0; tries < n * (HI_MAX_USAGE + 2); tries++)
	{
		HiFrame		f = pg_atomic_fetch_add_u32(&ctl->clock, 1) % n;
		HiFrameDesc *d = &descs[f];

		SpinLockAcquire(&d->hdr);
		if (d->refcount == 0 && !(d->flags & FR_IO) &&
			!(clean_only && (d->flags & FR_DIRTY)))
		{
			if (restrict_slot >= 0 && (!(d->flags & FR_TAG_VALID) ||
									   d->tag.slotno != (uint32) restrict_slot))
			{
				SpinLockRelease(&d->hdr);
				continue;
			}
			if (d->usage > 0)
			{
				d->usage--;
				SpinLockRelease(&d->hdr);
				continue;
			}
			d->refcount = 1;
			*dirty = (d->flags & FR_DIRTY) != 0;
			if (*dirty)
				d->flags |= FR_IO;
			SpinLockRelease(&d->hdr);
			local_pins[f]++;
			return f;
		}
		SpinLockRelease(&d->hdr);
		if ((tries & 1023) == 1023)
			CHECK_FOR_INTERRUPTS();
	}
	/* an index at its budget with every page pinned may borrow a frame */
	if (restrict_slot >= 0)
		return clock_victim(-1, clean_only, dirty);
	if (clean_only)
		return -1;
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_RESOURCES),
			 errmsg("no unpinned hybrid_index cache frame available"),
			 errhint("Raise hybrid_index.cache_size or the index's buffer_size.")));
	return -1;					/* keep compiler quiet */
}

/*
 * Detach a pinned, clean victim from its old page.  Fails (returns false,
 * victim unpinned) if someone pinned or dirtied it meanwhile.
 */
static bool
detach_victim(HiFrame f)
{
	HiFrameDesc *d = &descs[f];
	HiFrameTag	old;
	uint16		flags;
	uint32		hash;

	SpinLockAcquire(&d->hdr);
	old = d->tag;
	flags = d->flags;
	SpinLockRelease(&d->hdr);
	if (!(flags & FR_TAG_VALID))
		return true;

	hash = get_hash_value(frame_map, &old);
	LWLockAcquire(part_lock(hash), LW_EXCLUSIVE);
	SpinLockAcquire(&d->hdr);
	if (d->refcount != 1 || (d->flags & (FR_DIRTY | FR_IO)))
	{
		SpinLockRelease(&d->hdr);
		LWLockRelease(part_lock(hash));
		unpin(f);
		return false;
	}
	d->flags = 0;
	d->usage = 0;
	SpinLockRelease(&d->hdr);
	hash_search_with_hash_value(frame_map, &old, hash, HASH_REMOVE, NULL);
	LWLockRelease(part_lock(hash));
	pg_atomic_fetch_sub_u32(&hi_shared->indexes[old.slotno].nframes, 1);
	return true;
}

/* Put a detached victim back on the free side (refcount drops to 0) */
static void
return_victim(HiFrame f)
{
	HiFrameDesc *d = &descs[f];

	SpinLockAcquire(&d->hdr);
	d->flags = 0;
	d->usage = 0;
	SpinLockRelease(&d->hdr);
	unpin(f);
}

/*
 * The disk is full and every unpinned frame is dirty: park the page of a
 * dirty victim in the spill store (page_spill.c) and hand out its frame,
 * detached and pinned.  -1: nothing to park (the store is full, or no
 * victim), -2: the victim got pinned meanwhile, try again.
 */
static HiFrame
spill_victim(int restrict_slot)
{
	bool		isdirty;
	HiFrame		f = clock_victim(restrict_slot, false, &isdirty);
	HiFrameDesc *d = &descs[f];
	HiFrameTag	tag;
	HiIndexShared *sh;
	uint32		hash;
	bool		parked = false;

	if (!isdirty)
		return detach_victim(f) ? f : -2;
	tag = d->tag;
	sh = &hi_shared->indexes[tag.slotno];
	hash = get_hash_value(frame_map, &tag);
	LWLockAcquire(part_lock(hash), LW_EXCLUSIVE);
	SpinLockAcquire(&d->hdr);
	if (d->refcount != 1)
	{
		d->flags &= ~FR_IO;
		SpinLockRelease(&d->hdr);
		LWLockRelease(part_lock(hash));
		unpin(f);
		return -2;
	}
	SpinLockRelease(&d->hdr);
	/* a page of a dropped or rebuilt index is just forgotten */
	if (!sh->in_use || sh->generation != tag.generation || !sh->loaded)
		parked = true;
	else
		parked = hi_spill_put(tag.slotno, tag.generation, tag.pageno,
							  hi_frame_data(f), sh->meta.page_size);
	if (parked)
	{
		SpinLockAcquire(&d->hdr);
		d->flags = 0;
		d->usage = 0;
		SpinLockRelease(&d->hdr);
		hash_search_with_hash_value(frame_map, &tag, hash, HASH_REMOVE, NULL);
		LWLockRelease(part_lock(hash));
		pg_atomic_fetch_sub_u32(&hi_shared->indexes[tag.slotno].nframes, 1);
		return f;
	}
	SpinLockAcquire(&d->hdr);
	d->flags &= ~FR_IO;
	SpinLockRelease(&d->hdr);
	LWLockRelease(part_lock(hash));
	unpin(f);
	return -1;
}

/*
 * A clean victim that the placement policy wants on another tier (a hot
 * leaf on flash, HyR-tree's Algorithm 2) is written out like a dirty one.
 * We hold the only pin; FR_IO is set under the header lock only if that is
 * still so, so nobody starts modifying the page while it is written.
 */
static bool
migrate_clean_victim(HiFrame f)
{
	HiFrameDesc *d = &descs[f];
	HiFrameTag	tag;
	HiIndexShared *sh;
	const HiStorePolicy *policy;
	bool		take = false;

	SpinLockAcquire(&d->hdr);
	tag = d->tag;
	if (!(d->flags & FR_TAG_VALID) || !(d->flags & FR_VALID))
	{
		SpinLockRelease(&d->hdr);
		return false;
	}
	SpinLockRelease(&d->hdr);
	sh = &hi_shared->indexes[tag.slotno];
	if (!sh->in_use || sh->generation != tag.generation || !sh->loaded)
		return false;
	policy = hi_store_policy(sh);
	if (policy->migrate_clean == NULL ||
		!policy->migrate_clean(sh, tag.slotno, hi_frame_data(f),
							   hi_pt_get(sh, tag.pageno)))
		return false;
	SpinLockAcquire(&d->hdr);
	if (d->refcount == 1 && !(d->flags & FR_IO))
	{
		d->flags |= FR_IO;
		take = true;
	}
	SpinLockRelease(&d->hdr);
	return take;
}

/*
 * Write-behind: a dirty victim costs a write anyway, so the frames the
 * clock hand will reach next that are dirty and cold go out in the same
 * batch (like PostgreSQL's background writer, but as one psync batch).
 * Returns the victims followed by the extra frames, all pinned with FR_IO.
 */
static HiFrame *
collect_write_behind(HiFrame *dirty, int ndirty, int *nextra)
{
	int			depth = Max(hi_io_depth, 1);
	HiFrame    *all = palloc(sizeof(HiFrame) * (ndirty + depth));
	uint32		hand = pg_atomic_read_u32(&ctl->clock);
	int			look;

	memcpy(all, dirty, sizeof(HiFrame) * ndirty);
	*nextra = 0;
	for (look = 0; look < 4 * depth && ndirty + *nextra < depth; look++)
	{
		HiFrame		f = (hand + look) % ctl->nframes;
		HiFrameDesc *d = &descs[f];

		SpinLockAcquire(&d->hdr);
		if (d->refcount == 0 && d->usage <= 1 &&
			(d->flags & (FR_DIRTY | FR_IO | FR_TAG_VALID)) == (FR_DIRTY | FR_TAG_VALID))
		{
			d->refcount++;
			d->flags |= FR_IO;
			SpinLockRelease(&d->hdr);
			local_pins[f]++;
			all[ndirty + (*nextra)++] = f;
			continue;
		}
		SpinLockRelease(&d->hdr);
	}
	return all;
}

/*
 * Write out dirty victims (and write-behind frames).  If the tier's file
 * system is full, returns the error instead of raising it: the frames stay
 * dirty and cached, and the caller looks for clean victims.
 */
static ErrorData *
flush_victims(HiFrame *dirty, int ndirty)
{
	MemoryContext cxt = CurrentMemoryContext;
	ErrorData  *full = NULL;
	int			nextra = 0;
	HiFrame    *all = collect_write_behind(dirty, ndirty, &nextra);
	int			i;

	PG_TRY();
	{
		flush_frames(all, ndirty + nextra);
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		if (edata->sqlerrcode != ERRCODE_DISK_FULL)
		{
			for (i = ndirty; i < ndirty + nextra; i++)
				unpin(all[i]);
			PG_RE_THROW();
		}
		FlushErrorState();
		full = edata;
	}
	PG_END_TRY();
	/* write-behind frames stay cached (clean, or dirty if the disk is full) */
	for (i = ndirty; i < ndirty + nextra; i++)
		unpin(all[i]);
	pfree(all);
	return full;
}

/* Clear FR_IO of a pinned frame whose I/O this backend gives up */
static void
end_io(HiFrame f)
{
	HiFrameDesc *d = &descs[f];

	SpinLockAcquire(&d->hdr);
	d->flags &= ~FR_IO;
	SpinLockRelease(&d->hdr);
}

/*
 * Get n clean, detached, pinned frames for pages of idx.  Dirty victims are
 * written out together first.  When that fails because the disk is full,
 * the dirty pages stay cached and clean frames are taken instead, so that
 * reads keep working on a full disk; only if every unpinned frame is dirty
 * does the disk-full error reach the caller.
 */
static void
get_free_frames(HiIndex *idx, HiFrame *out, int n)
{
	int			got = 0;
	HiFrame    *dirty = palloc(sizeof(HiFrame) * n);
	HiFrame    *cand = palloc(sizeof(HiFrame) * n);
	ErrorData  *full = NULL;

	while (got < n)
	{
		int			want = n - got;
		int			ncand = 0;
		volatile int ndirty = 0;
		int			i;
		int			restrict_slot = -1;
		int			nparked = 0;

		if (idx->sh->budget_frames > 0 &&
			(int) pg_atomic_read_u32(&idx->sh->nframes) + want > idx->sh->budget_frames)
			restrict_slot = idx->slotno;
		PG_TRY();
		{
			for (i = 0; i < want; i++)
			{
				bool		isdirty;
				HiFrame		f;

				/* under a budget, take from our own pages only as needed */
				if (restrict_slot >= 0 &&
					(int) pg_atomic_read_u32(&idx->sh->nframes) + (want - i) <= idx->sh->budget_frames)
					restrict_slot = -1;
				f = clock_victim(restrict_slot, full != NULL, &isdirty);
				if (f < 0)
				{
					/* disk full, no clean frame: park a dirty page instead */
					while ((f = spill_victim(restrict_slot)) == -2)
						CHECK_FOR_INTERRUPTS();
					if (f < 0)
						break;
					out[got++] = f;
					nparked++;
					continue;
				}
				cand[ncand++] = f;
				/* with the disk full, clean pages stay where they are */
				if (isdirty || (full == NULL && migrate_clean_victim(f)))
					dirty[ndirty++] = f;
			}
		}
		PG_CATCH();
		{
			/*
			 * No victim left (every frame pinned), or a cancel: the victims
			 * marked for writing are not written.  Their FR_IO must go, or
			 * every later reader of those pages waits for it forever (the
			 * pins themselves are dropped at abort).
			 */
			for (i = 0; i < ndirty; i++)
				end_io(dirty[i]);
			PG_RE_THROW();
		}
		PG_END_TRY();
		if (ncand == 0 && nparked == 0)
		{
			/* every unpinned frame is dirty, the disk and the store full */
			for (i = 0; i < got; i++)
				return_victim(out[i]);
			ReThrowError(full);
		}
		if (ndirty > 0)
		{
			ErrorData  *err = flush_victims(dirty, ndirty);

			if (err)
			{
				/*
				 * A change in progress (tree_lock held exclusively) fails
				 * now rather than fill the cache with dirty pages that
				 * reads would then have to evict.
				 */
				if (LWLockHeldByMeInMode(&idx->sh->tree_lock, LW_EXCLUSIVE))
				{
					for (i = 0; i < ncand; i++)
						if (detach_victim(cand[i]))
							return_victim(cand[i]);
					for (i = 0; i < got; i++)
						return_victim(out[i]);
					ReThrowError(err);
				}
				if (full)
					FreeErrorData(full);
				full = err;
			}
		}
		/* victims whose write failed are dirty still: detach skips them */
		for (i = 0; i < ncand; i++)
			if (detach_victim(cand[i]))
				out[got++] = cand[i];
	}
	if (full)
		FreeErrorData(full);
	pfree(dirty);
	pfree(cand);
}

/*
 * Map a detached frame to tag.  If another backend mapped the page
 * meanwhile, the frame goes back and theirs is pinned instead (*ours false).
 */
static HiFrame
map_frame(HiFrame f, const HiFrameTag *tag, uint16 flags, bool *ours)
{
	uint32		hash = get_hash_value(frame_map, tag);
	HiMapEntry *e;
	bool		found;
	HiFrameDesc *d = &descs[f];

	LWLockAcquire(part_lock(hash), LW_EXCLUSIVE);
	e = hash_search_with_hash_value(frame_map, tag, hash, HASH_ENTER_NULL, &found);
	if (e == NULL)
	{
		LWLockRelease(part_lock(hash));
		return_victim(f);
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("hybrid_index cache map is full")));
	}
	if (found)
	{
		HiFrame		theirs = e->frame;
		HiFrameDesc *td = &descs[theirs];

		SpinLockAcquire(&td->hdr);
		td->refcount++;
		SpinLockRelease(&td->hdr);
		local_pins[theirs]++;
		LWLockRelease(part_lock(hash));
		return_victim(f);
		*ours = false;
		return theirs;
	}
	e->frame = f;
	SpinLockAcquire(&d->hdr);
	d->tag = *tag;
	d->flags = FR_TAG_VALID | flags;
	d->usage = 1;
	SpinLockRelease(&d->hdr);
	LWLockRelease(part_lock(hash));
	pg_atomic_fetch_add_u32(&hi_shared->indexes[tag->slotno].nframes, 1);
	*ours = true;
	return f;
}

/* Undo a mapping whose read failed */
static void
unmap_failed(HiFrame f)
{
	HiFrameDesc *d = &descs[f];
	HiFrameTag	tag = d->tag;
	uint32		hash = get_hash_value(frame_map, &tag);

	LWLockAcquire(part_lock(hash), LW_EXCLUSIVE);
	hash_search_with_hash_value(frame_map, &tag, hash, HASH_REMOVE, NULL);
	SpinLockAcquire(&d->hdr);
	d->flags = 0;
	d->usage = 0;
	SpinLockRelease(&d->hdr);
	LWLockRelease(part_lock(hash));
	pg_atomic_fetch_sub_u32(&hi_shared->indexes[tag.slotno].nframes, 1);
	unpin(f);
}

/*
 * Pin the frames of n distinct pages, reading the missing ones in one
 * batch.  frames[i] receives the frame of pagenos[i].
 */
void
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

	ensure_local();
	tag.slotno = idx->slotno;
	tag.generation = idx->generation;
	for (i = 0; i < n; i++)
	{
		tag.pageno = pagenos[i];
		frames[i] = lookup_pin(&tag);
		if (frames[i] < 0)
			miss[nmiss++] = i;
		else
			waits[nwait++] = i;
	}
	pg_atomic_fetch_add_u64(&idx->sh->cache_hits, n - nmiss);
	pg_atomic_fetch_add_u64(&idx->sh->cache_misses, nmiss);

	if (nmiss > 0)
	{
		HiFrame    *mapped;
		volatile int nmapped = 0;

		free_frames = palloc(sizeof(HiFrame) * nmiss);
		toread = palloc(sizeof(int) * nmiss);
		mapped = palloc(sizeof(HiFrame) * nmiss);
		get_free_frames(idx, free_frames, nmiss);
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
						HiFrameDesc *d = &descs[frames[k]];

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
				HiFrameDesc *d = &descs[mapped[i]];
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
			hi_store_read_pages(idx->sh, RelationGetRelationName(idx->rel),
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
			HiFrameDesc *d = &descs[frames[toread[i]]];

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
		HiFrameDesc *d = &descs[frames[k]];
		bool		valid;

		wait_io(frames[k]);
		SpinLockAcquire(&d->hdr);
		valid = (d->flags & FR_VALID) != 0;
		SpinLockRelease(&d->hdr);
		if (!valid)
		{
			unpin(frames[k]);
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
}

/*
 * How many pages a caller should pin at once in one batch: the I/O depth,
 * but no more than half the index's budget (or of the cache).
 */
int
hi_cache_batch_limit(HiIndex *idx)
{
	int			limit = Max(hi_io_depth, 1);
	int			cap = idx->sh->budget_frames > 0 ? idx->sh->budget_frames : ctl->nframes;

	return Max(1, Min(limit, cap / 2));
}

HiFrame
hi_cache_read(HiIndex *idx, uint32 pageno)
{
	HiFrame		f;

	hi_cache_read_batch(idx, &pageno, 1, &f);
	return f;
}

/* A frame for a brand-new page (zeroed, dirty, pinned) */
HiFrame
hi_cache_new_page(HiIndex *idx, uint32 pageno)
{
	HiFrame		f;
	HiFrameTag	tag;
	bool		ours;

	ensure_local();
	get_free_frames(idx, &f, 1);
	tag.slotno = idx->slotno;
	tag.generation = idx->generation;
	tag.pageno = pageno;
	memset(hi_frame_data(f), 0, idx->page_size);
	f = map_frame(f, &tag, FR_VALID | FR_DIRTY, &ours);
	if (!ours)
		elog(ERROR, "new page %u of index \"%s\" is already cached",
			 pageno, RelationGetRelationName(idx->rel));
	return f;
}

/* Before modifying a pinned frame: wait for a write-out in progress */
void
hi_frame_begin_write(HiFrame f)
{
	wait_io(f);
}

void
hi_frame_mark_dirty(HiFrame f)
{
	HiFrameDesc *d = &descs[f];

	SpinLockAcquire(&d->hdr);
	d->flags |= FR_DIRTY;
	SpinLockRelease(&d->hdr);
}

/*
 * Write every dirty page of an index.  The caller holds its tree_lock
 * exclusively, so no page gets dirtied meanwhile.
 */
void
hi_cache_flush_index(HiIndexShared *sh, int slotno)
{
	HiFrame    *list;
	int			n = 0;
	int			f;

	ensure_local();
	list = palloc(sizeof(HiFrame) * ctl->nframes);
	for (f = 0; f < ctl->nframes; f++)
	{
		HiFrameDesc *d = &descs[f];

		for (;;)
		{
			bool		busy = false;
			bool		take = false;

			SpinLockAcquire(&d->hdr);
			if ((d->flags & FR_TAG_VALID) && d->tag.slotno == (uint32) slotno &&
				d->tag.generation == sh->generation && (d->flags & FR_DIRTY))
			{
				if (d->flags & FR_IO)
					busy = true;
				else
				{
					d->refcount++;
					d->flags |= FR_IO;
					take = true;
				}
			}
			SpinLockRelease(&d->hdr);
			if (take)
			{
				local_pins[f]++;
				list[n++] = f;
			}
			if (!busy)
				break;
			wait_io(f);
		}
	}
	PG_TRY();
	{
		flush_frames(list, n);
	}
	PG_FINALLY();
	{
		int			i;

		for (i = 0; i < n; i++)
			unpin(list[i]);
	}
	PG_END_TRY();
	pfree(list);
	/* and the pages parked while the disk was full */
	hi_spill_flush(sh, slotno);
}

/* Forget every cached page of a slot generation, without writing */
void
hi_cache_discard_index(int slotno, uint32 generation)
{
	int			f;

	if (ctl == NULL)
		return;
	hi_spill_discard(slotno, generation);
	ensure_local();
	for (f = 0; f < ctl->nframes; f++)
	{
		HiFrameDesc *d = &descs[f];

		for (;;)
		{
			HiFrameTag	tag;
			bool		match;
			bool		busy;
			uint32		hash;

			SpinLockAcquire(&d->hdr);
			tag = d->tag;
			match = (d->flags & FR_TAG_VALID) && tag.slotno == (uint32) slotno &&
				tag.generation == generation;
			busy = d->refcount > 0 || (d->flags & FR_IO);
			SpinLockRelease(&d->hdr);
			if (!match)
				break;
			if (busy)
			{
				pg_usleep(50);
				CHECK_FOR_INTERRUPTS();
				continue;
			}
			hash = get_hash_value(frame_map, &tag);
			LWLockAcquire(part_lock(hash), LW_EXCLUSIVE);
			SpinLockAcquire(&d->hdr);
			if (d->refcount == 0 && !(d->flags & FR_IO) &&
				memcmp(&d->tag, &tag, sizeof(tag)) == 0)
			{
				d->flags = 0;
				d->usage = 0;
				SpinLockRelease(&d->hdr);
				hash_search_with_hash_value(frame_map, &tag, hash, HASH_REMOVE, NULL);
				pg_atomic_fetch_sub_u32(&hi_shared->indexes[slotno].nframes, 1);
			}
			else
				SpinLockRelease(&d->hdr);
			LWLockRelease(part_lock(hash));
		}
	}
}

/* At (sub)transaction abort: drop every pin this backend still holds */
void
hi_cache_release_all(void)
{
	int			f;

	if (local_pins == NULL)
		return;
	for (f = 0; f < ctl->nframes; f++)
		while (local_pins[f] > 0)
			unpin(f);
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

const HiPageSource hi_cache_source = {
	src_read_batch,
	src_new_page,
	src_data,
	src_begin_write,
	src_mark_dirty,
	src_release,
	hi_cache_batch_limit,
	src_flush_all
};
