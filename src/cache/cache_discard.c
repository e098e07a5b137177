/*
 * cache_discard.c
 *	  Pages that leave the shared page cache without being written: every
 *	  page of a dropped or rebuilt relfilenode, one freed grid page; and the
 *	  pins a backend must not keep (released at abort, checked at commit).
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/lwlock.h"
#include "storage/spin.h"
#include "utils/hsearch.h"

#include "cache/cache_int.h"
#include "storage/storage.h"

/*
 * Forget frame f if it holds a page of the slot generation (waiting while
 * it is pinned or under I/O); false if it holds something else.
 */
static bool
discard_frame(HiFrame f, int slotno, uint32 generation)
{
	HiFrameDesc *d = &cache_descs[f];

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
			return false;
		if (busy)
		{
			pg_usleep(50);
			CHECK_FOR_INTERRUPTS();
			continue;
		}
		hash = get_hash_value(cache_frame_map, &tag);
		LWLockAcquire(cache_part_lock(hash), LW_EXCLUSIVE);
		SpinLockAcquire(&d->hdr);
		if (d->refcount == 0 && !(d->flags & FR_IO) &&
			memcmp(&d->tag, &tag, sizeof(tag)) == 0)
		{
			d->flags = 0;
			d->usage = 0;
			SpinLockRelease(&d->hdr);
			hash_search_with_hash_value(cache_frame_map, &tag, hash, HASH_REMOVE, NULL);
			pg_atomic_fetch_sub_u32(&hi_shared->indexes[slotno].nframes, 1);
		}
		else
			SpinLockRelease(&d->hdr);
		LWLockRelease(cache_part_lock(hash));
	}
}

/* The frame a page is mapped to (not pinned: it may change), or -1 */
HiFrame
cache_mapped_frame(int slotno, uint32 generation, uint32 pageno)
{
	HiFrameTag	tag;
	HiMapEntry *e;
	uint32		hash;
	HiFrame		frame = -1;

	memset(&tag, 0, sizeof(tag));
	tag.slotno = slotno;
	tag.generation = generation;
	tag.pageno = pageno;
	hash = get_hash_value(cache_frame_map, &tag);
	LWLockAcquire(cache_part_lock(hash), LW_SHARED);
	e = hash_search_with_hash_value(cache_frame_map, &tag, hash, HASH_FIND, NULL);
	if (e)
		frame = e->frame;
	LWLockRelease(cache_part_lock(hash));
	return frame;
}

/*
 * Forget one page of an index without writing it: a grid page whose id
 * was freed (its next user starts from a new, zeroed page).  The caller
 * holds tree_lock exclusively, so no one else pins the page for long.
 */
void
hi_cache_discard_page(HiIndex *idx, uint32 pageno)
{
	HiFrame		frame = cache_mapped_frame(idx->slotno, idx->generation, pageno);

	if (frame >= 0)
	{
		/* our own pin would never go: a caller's bug, not a wait */
		if (cache_local_pins != NULL && cache_local_pins[frame] > 0)
			elog(ERROR, "page %u of index \"%s\" is discarded while pinned",
				 pageno, hi_index_name(idx));
		(void) discard_frame(frame, idx->slotno, idx->generation);
	}
	if (hi_spill_any() && hi_spill_has(idx->slotno, idx->generation, pageno))
	{
		char	   *scratch = palloc(hi_max_page_size);

		(void) hi_spill_take(idx->slotno, idx->generation, pageno, scratch);
		pfree(scratch);
	}
}

/*
 * Forget every cached page of a slot generation, without writing.  An
 * index none of whose pages is cached costs nothing; one with few pages
 * (a partition) is looked up page by page in the frame map, as PostgreSQL
 * drops the buffers of a small relation; only a large one scans every
 * frame.  A scan per index made DROP TABLE of 1,000 partitions, and every
 * CREATE INDEX on their parent, pay 1,000 scans of the whole cache.
 */
void
hi_cache_discard_index(int slotno, uint32 generation)
{
	HiIndexShared *sh;
	uint32		npages;
	int			f;

	if (cache_ctl == NULL)
		return;
	hi_spill_discard(slotno, generation);
	sh = &hi_shared->indexes[slotno];
	if (pg_atomic_read_u32(&sh->nframes) == 0)
		return;
	cache_ensure_local();
	npages = sh->meta.npages;
	if (cache_by_page(npages))
	{
		uint32		p;

		for (p = 0; p < npages; p++)
		{
			HiFrame		frame = cache_mapped_frame(slotno, generation, p);

			if (frame >= 0)
				(void) discard_frame(frame, slotno, generation);
		}
		/* every frame of the slot went: nothing beyond its page count */
		if (pg_atomic_read_u32(&sh->nframes) == 0)
			return;
	}
	for (f = 0; f < cache_ctl->nframes; f++)
		(void) discard_frame(f, slotno, generation);
}

/* At (sub)transaction abort: drop every pin this backend still holds */
void
hi_cache_release_all(void)
{
	int			f;

	if (cache_local_pins == NULL)
		return;
	for (f = 0; f < cache_ctl->nframes; f++)
		while (cache_local_pins[f] > 0)
			cache_unpin(f);
}

/*
 * At commit no pin may be left: a pin outlives its backend and its frame
 * could never be evicted again.  Checked in assertion builds, as
 * PostgreSQL checks its buffer pins.
 */
void
hi_cache_check_pins(void)
{
#ifdef USE_ASSERT_CHECKING
	int			f;
	int			leaked = 0;

	if (cache_local_pins == NULL)
		return;
	for (f = 0; f < cache_ctl->nframes; f++)
		if (cache_local_pins[f] != 0)
		{
			elog(WARNING, "hybrid_index cache frame %d (page %u) left pinned %d time(s)",
				 f, cache_descs[f].tag.pageno, cache_local_pins[f]);
			leaked++;
		}
	Assert(leaked == 0);
#endif
}
