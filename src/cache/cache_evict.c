/*
 * cache_evict.c
 *	  Making room in the shared page cache: clock-sweep victims (an index
 *	  at its budget evicts only its own pages), dirty victims written in one
 *	  batch together with dirty neighbours of the same index (write-behind),
 *	  clean leaves a placement policy wants on the other tier, and pages
 *	  parked in the spill area while a disk is full.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/block.h"
#include "storage/lwlock.h"
#include "storage/spin.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

#include "cache/cache_int.h"
#include "storage/storage.h"

/*
 * Write out frames that the caller has pinned and marked FR_IO (and that
 * are dirty), grouped per index.  Clears DIRTY and IO.
 */
void
cache_flush_frames(HiFrame *frames, int n)
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
			HiFrameTag	tag = cache_descs[frames[i]].tag;
			HiIndexShared *sh = &hi_shared->indexes[tag.slotno];
			int			cnt = 0;
			int			j;

			if (grouped[i])
				continue;
			for (j = i; j < n; j++)
			{
				HiFrameTag	t2 = cache_descs[frames[j]].tag;

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
			HiFrameDesc *d = &cache_descs[frames[i]];

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
	int			n = cache_ctl->nframes;
	int			tries;

	for (tries = 0; tries < n * (HI_MAX_USAGE + 2); tries++)
	{
		HiFrame		f = pg_atomic_fetch_add_u32(&cache_ctl->clock, 1) % n;
		HiFrameDesc *d = &cache_descs[f];

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
			cache_local_pins[f]++;
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
	HiFrameDesc *d = &cache_descs[f];
	HiFrameTag	old;
	uint16		flags;
	uint32		hash;

	SpinLockAcquire(&d->hdr);
	old = d->tag;
	flags = d->flags;
	SpinLockRelease(&d->hdr);
	if (!(flags & FR_TAG_VALID))
		return true;

	hash = get_hash_value(cache_frame_map, &old);
	LWLockAcquire(cache_part_lock(hash), LW_EXCLUSIVE);
	SpinLockAcquire(&d->hdr);
	if (d->refcount != 1 || (d->flags & (FR_DIRTY | FR_IO)))
	{
		SpinLockRelease(&d->hdr);
		LWLockRelease(cache_part_lock(hash));
		cache_unpin(f);
		return false;
	}
	d->flags = 0;
	d->usage = 0;
	SpinLockRelease(&d->hdr);
	hash_search_with_hash_value(cache_frame_map, &old, hash, HASH_REMOVE, NULL);
	LWLockRelease(cache_part_lock(hash));
	pg_atomic_fetch_sub_u32(&hi_shared->indexes[old.slotno].nframes, 1);
	return true;
}

/* Put a detached victim back on the free side (refcount drops to 0) */
void
cache_return_victim(HiFrame f)
{
	HiFrameDesc *d = &cache_descs[f];

	SpinLockAcquire(&d->hdr);
	d->flags = 0;
	d->usage = 0;
	SpinLockRelease(&d->hdr);
	cache_unpin(f);
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
	HiFrameDesc *d = &cache_descs[f];
	HiFrameTag	tag;
	HiIndexShared *sh;
	uint32		hash;
	bool		parked = false;

	if (!isdirty)
		return detach_victim(f) ? f : -2;
	tag = d->tag;
	sh = &hi_shared->indexes[tag.slotno];
	hash = get_hash_value(cache_frame_map, &tag);
	LWLockAcquire(cache_part_lock(hash), LW_EXCLUSIVE);
	SpinLockAcquire(&d->hdr);
	if (d->refcount != 1)
	{
		d->flags &= ~FR_IO;
		SpinLockRelease(&d->hdr);
		LWLockRelease(cache_part_lock(hash));
		cache_unpin(f);
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
		hash_search_with_hash_value(cache_frame_map, &tag, hash, HASH_REMOVE, NULL);
		LWLockRelease(cache_part_lock(hash));
		pg_atomic_fetch_sub_u32(&hi_shared->indexes[tag.slotno].nframes, 1);
		return f;
	}
	SpinLockAcquire(&d->hdr);
	d->flags &= ~FR_IO;
	SpinLockRelease(&d->hdr);
	LWLockRelease(cache_part_lock(hash));
	cache_unpin(f);
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
	HiFrameDesc *d = &cache_descs[f];
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
	/* a build's pages stay put until its files are in WAL (wal_image.c) */
	if (sh->image_open)
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
	uint32		hand = pg_atomic_read_u32(&cache_ctl->clock);
	int			look;

	memcpy(all, dirty, sizeof(HiFrame) * ndirty);
	*nextra = 0;
	for (look = 0; look < 4 * depth && ndirty + *nextra < depth; look++)
	{
		HiFrame		f = (hand + look) % cache_ctl->nframes;
		HiFrameDesc *d = &cache_descs[f];

		SpinLockAcquire(&d->hdr);
		if (d->refcount == 0 && d->usage <= 1 &&
			(d->flags & (FR_DIRTY | FR_IO | FR_TAG_VALID)) == (FR_DIRTY | FR_TAG_VALID))
		{
			d->refcount++;
			d->flags |= FR_IO;
			SpinLockRelease(&d->hdr);
			cache_local_pins[f]++;
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
	uint32		holdoff = InterruptHoldoffCount;
	ErrorData  *full = NULL;
	int			nextra = 0;
	HiFrame    *all = collect_write_behind(dirty, ndirty, &nextra);
	int			i;

	PG_TRY();
	{
		cache_flush_frames(all, ndirty + nextra);
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		if (edata->sqlerrcode != ERRCODE_DISK_FULL)
		{
			for (i = ndirty; i < ndirty + nextra; i++)
				cache_unpin(all[i]);
			PG_RE_THROW();
		}
		hi_error_handled(holdoff);
		full = edata;
	}
	PG_END_TRY();
	/* write-behind frames stay cached (clean, or dirty if the disk is full) */
	for (i = ndirty; i < ndirty + nextra; i++)
		cache_unpin(all[i]);
	pfree(all);
	return full;
}

/* Clear FR_IO of a pinned frame whose I/O this backend gives up */
void
cache_end_io(HiFrame f)
{
	HiFrameDesc *d = &cache_descs[f];

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
void
cache_get_free_frames(HiIndex *idx, HiFrame *out, int n)
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
				cache_end_io(dirty[i]);
			PG_RE_THROW();
		}
		PG_END_TRY();
		if (ncand == 0 && nparked == 0)
		{
			/* every unpinned frame is dirty, the disk and the store full */
			for (i = 0; i < got; i++)
				cache_return_victim(out[i]);
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
							cache_return_victim(cand[i]);
					for (i = 0; i < got; i++)
						cache_return_victim(out[i]);
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
 * Take frame f for writing if it holds a dirty page of the slot generation
 * (page pageno, unless that is InvalidBlockNumber; waiting while another
 * process writes it): pinned, FR_IO set.
 */
static bool
take_dirty(HiFrame f, int slotno, uint32 generation, uint32 pageno)
{
	HiFrameDesc *d = &cache_descs[f];

	for (;;)
	{
		bool		busy = false;
		bool		take = false;

		SpinLockAcquire(&d->hdr);
		if ((d->flags & FR_TAG_VALID) && d->tag.slotno == (uint32) slotno &&
			d->tag.generation == generation && (d->flags & FR_DIRTY) &&
			(pageno == InvalidBlockNumber || d->tag.pageno == pageno))
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
			cache_local_pins[f]++;
		if (!busy)
			return take;
		cache_wait_io(f);
	}
}

/*
 * Write every dirty page of an index.  The caller holds its tree_lock
 * exclusively, so no page gets dirtied meanwhile.  An index with few pages
 * (a partition) is looked up page by page in the frame map, as
 * hi_cache_discard_index does; only a large one scans every frame.  A scan
 * per index was a tenth of CREATE INDEX on a parent of 1,000 partitions
 * (each build ends with a flush) with a cache of 256 MB, and grows with
 * the cache.
 */
void
hi_cache_flush_index(HiIndexShared *sh, int slotno)
{
	HiFrame    *list;
	int			n = 0;
	int			f;
	uint32		npages = sh->meta.npages;
	uint32		nframes = pg_atomic_read_u32(&sh->nframes);

	cache_ensure_local();
	if (nframes > 0)
	{
		bool		by_page = cache_by_page(npages);

		list = palloc(sizeof(HiFrame) * (by_page ? npages : cache_ctl->nframes));
		if (by_page)
		{
			uint32		p;

			for (p = 0; p < npages; p++)
			{
				f = cache_mapped_frame(slotno, sh->generation, p);
				if (f >= 0 && take_dirty(f, slotno, sh->generation, p))
					list[n++] = f;
			}
		}
		else
		{
			for (f = 0; f < cache_ctl->nframes; f++)
				if (take_dirty(f, slotno, sh->generation, InvalidBlockNumber))
					list[n++] = f;
		}
		PG_TRY();
		{
			cache_flush_frames(list, n);
		}
		PG_FINALLY();
		{
			int			i;

			for (i = 0; i < n; i++)
				cache_unpin(list[i]);
		}
		PG_END_TRY();
		pfree(list);
	}
	/* and the pages parked while the disk was full */
	hi_spill_flush(sh, slotno);
}
