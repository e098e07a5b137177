/*
 * page_table.c
 *	  Logical page id -> (tier, slot) mapping and the free-slot maps of the
 *	  tier files, kept in the shared DSA area (page_table_mapfile.c writes
 *	  them into the map file at checkpoints and reads them back).
 *
 * Pages are written copy-on-write: a dirty page leaves the cache into a
 * fresh slot, and its old slot becomes PENDING.  Pending slots still hold
 * the page the last checkpoint's map file points at, so they are reused
 * only after the next checkpoint (hi_pt_release_pending).  A crash thus
 * always finds the tree exactly as the last checkpoint left it, and the
 * redo log brings it forward.  The same indirection lets pages move between
 * tiers without touching the parents that point at them.
 *
 * A slot written since the last checkpoint (FRESH) is in no map file: when
 * its page is written again it can be reused before the next checkpoint,
 * so a page evicted many times between checkpoints costs two slots, not
 * one per eviction.  Only a read that looked the page up before the remap
 * may still be reading it (readers do not hold the page's lock across a
 * tier move): superseded FRESH slots wait in LIMBO and go free when a slot
 * is needed and no read from slots is in flight (hi_pt_reads_begin/end),
 * or at the checkpoint.  After a checkpoint the free slots at the end of a
 * tier file are cut off (hi_pt_trim), so files shrink.
 */
#include "postgres.h"

#include "utils/dsa.h"

#include "base/hi_base.h"
#include "storage/storage.h"
#include "storage/tier_int.h"

#define PT_MIN_CAP 64

void *
hi_pt_grow_array(dsa_pointer *ptr, uint32 *cap, uint32 need, Size elsize)
{
	dsa_area   *area = hi_dsa();
	uint32		newcap = Max(*cap, PT_MIN_CAP);
	dsa_pointer np;
	char	   *newp;

	while (newcap <= need)
		newcap *= 2;
	if (newcap == *cap && DsaPointerIsValid(*ptr))
		return dsa_get_address(area, *ptr);
	np = dsa_allocate_extended(area, (Size) newcap * elsize,
							   DSA_ALLOC_ZERO | DSA_ALLOC_HUGE);
	newp = dsa_get_address(area, np);
	if (DsaPointerIsValid(*ptr))
	{
		memcpy(newp, dsa_get_address(area, *ptr), (Size) *cap * elsize);
		dsa_free(area, *ptr);
	}
	*ptr = np;
	*cap = newcap;
	return newp;
}

/* Fresh, empty page table (caller owns the slot exclusively) */
void
hi_pt_init(HiIndexShared *sh, uint32 npages_hint)
{
	int			t;

	hi_pt_free(sh);
	(void) hi_pt_grow_array(&sh->pt, &sh->pt_cap, npages_hint, sizeof(uint32));
	for (t = 0; t < HI_NUM_TIERS; t++)
	{
		(void) hi_pt_grow_array(&sh->slotmap[t], &sh->slot_cap[t], PT_MIN_CAP, sizeof(uint8));
		sh->nslots[t] = 0;
		sh->free_hint[t] = 0;
		sh->used_slots[t] = 0;
		sh->limbo_slots[t] = 0;
	}
}

void
hi_pt_free(HiIndexShared *sh)
{
	dsa_area   *area = hi_dsa();
	int			t;

	if (DsaPointerIsValid(sh->pt))
		dsa_free(area, sh->pt);
	sh->pt = InvalidDsaPointer;
	if (DsaPointerIsValid(sh->am_blob))
		dsa_free(area, sh->am_blob);
	sh->am_blob = InvalidDsaPointer;
	sh->am_blob_len = 0;
	sh->pt_cap = 0;
	for (t = 0; t < HI_NUM_TIERS; t++)
	{
		if (DsaPointerIsValid(sh->slotmap[t]))
			dsa_free(area, sh->slotmap[t]);
		sh->slotmap[t] = InvalidDsaPointer;
		sh->slot_cap[t] = 0;
		sh->nslots[t] = 0;
		sh->used_slots[t] = 0;
		sh->limbo_slots[t] = 0;
	}
}

uint32
hi_pt_get(HiIndexShared *sh, uint32 pageno)
{
	uint32		e = 0;

	LWLockAcquire(&sh->map_lock, LW_SHARED);
	if (pageno < sh->pt_cap)
		e = hi_pt_array(sh)[pageno];
	LWLockRelease(&sh->map_lock);
	return e;
}

/*
 * A read of a slot begins: call before looking the page up, and
 * hi_pt_reads_end after the I/O (also on error).
 */
void
hi_pt_reads_begin(HiIndexShared *sh)
{
	pg_atomic_fetch_add_u32(&sh->slot_reads, 1);
}

void
hi_pt_reads_end(HiIndexShared *sh)
{
	pg_atomic_fetch_sub_u32(&sh->slot_reads, 1);
}

/*
 * LIMBO slots become free if no read is in flight; map_lock held
 * exclusively.  A read that begins later looks its page up under map_lock
 * after we release it, so it finds the page's current slot.
 */
static bool
release_limbo(HiIndexShared *sh, int tier)
{
	uint8	   *map;
	uint32		s;

	if (sh->limbo_slots[tier] == 0 || pg_atomic_read_u32(&sh->slot_reads) != 0)
		return false;
	map = hi_pt_slot_array(sh, tier);
	for (s = 0; s < sh->nslots[tier]; s++)
		if (map[s] == HI_SLOT_LIMBO)
		{
			map[s] = HI_SLOT_FREE;
			sh->free_hint[tier] = Min(sh->free_hint[tier], s);
		}
	sh->limbo_slots[tier] = 0;
	return true;
}

/* The slot of a superseded page version; map_lock held exclusively */
static void
supersede(HiIndexShared *sh, uint32 pte)
{
	int			t = HI_PTE_TIER(pte);
	uint8	   *map = hi_pt_slot_array(sh, t);

	if (map[HI_PTE_SLOT(pte)] == HI_SLOT_FRESH)
	{
		map[HI_PTE_SLOT(pte)] = HI_SLOT_LIMBO;
		sh->limbo_slots[t]++;
	}
	else
		map[HI_PTE_SLOT(pte)] = HI_SLOT_PENDING;
	sh->used_slots[t]--;
}

/* Take a free slot of a tier, extending the file if none is free */
uint32
hi_pt_alloc_slot(HiIndexShared *sh, int tier)
{
	uint8	   *map;
	uint32		s;

	LWLockAcquire(&sh->map_lock, LW_EXCLUSIVE);
	map = hi_pt_slot_array(sh, tier);
	for (;;)
	{
		for (s = sh->free_hint[tier]; s < sh->nslots[tier]; s++)
			if (map[s] == HI_SLOT_FREE)
				break;
		if (s < sh->nslots[tier] || !release_limbo(sh, tier))
			break;
	}
	if (s >= sh->nslots[tier])
	{
		s = sh->nslots[tier];
		if (s >= HI_MAX_SLOTS)
		{
			LWLockRelease(&sh->map_lock);
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("index file of tier %s is full", hi_tier_suffix(tier))));
		}
		map = hi_pt_grow_array(&sh->slotmap[tier], &sh->slot_cap[tier], s + 1, sizeof(uint8));
		sh->nslots[tier] = s + 1;
	}
	map[s] = HI_SLOT_FRESH;
	sh->used_slots[tier]++;
	sh->free_hint[tier] = s + 1;
	LWLockRelease(&sh->map_lock);
	return s;
}

/* Give back a slot taken by hi_pt_alloc_slot whose write failed */
void
hi_pt_unalloc_slot(HiIndexShared *sh, int tier, uint32 slot)
{
	LWLockAcquire(&sh->map_lock, LW_EXCLUSIVE);
	if (slot < sh->nslots[tier] && HI_SLOT_IN_USE(hi_pt_slot_array(sh, tier)[slot]))
	{
		hi_pt_slot_array(sh, tier)[slot] = HI_SLOT_FREE;
		sh->used_slots[tier]--;
		if (slot < sh->free_hint[tier])
			sh->free_hint[tier] = slot;
	}
	LWLockRelease(&sh->map_lock);
}

/* Point a page at a new slot; its old slot is superseded */
void
hi_pt_remap(HiIndexShared *sh, uint32 pageno, uint32 new_pte)
{
	uint32	   *pt;
	uint32		old;

	LWLockAcquire(&sh->map_lock, LW_EXCLUSIVE);
	pt = hi_pt_grow_array(&sh->pt, &sh->pt_cap, pageno + 1, sizeof(uint32));
	old = pt[pageno];
	pt[pageno] = new_pte;
	if (HI_PTE_MAPPED(old))
		supersede(sh, old);
	LWLockRelease(&sh->map_lock);
}

/*
 * Point a page at a new slot only if it still is where the caller read it
 * from (tier moves race with evictions of newer versions).
 */
bool
hi_pt_remap_if(HiIndexShared *sh, uint32 pageno, uint32 expect, uint32 new_pte)
{
	uint32	   *pt;
	bool		done = false;

	LWLockAcquire(&sh->map_lock, LW_EXCLUSIVE);
	pt = hi_pt_array(sh);
	if (pageno < sh->pt_cap && pt[pageno] == expect)
	{
		pt[pageno] = new_pte;
		supersede(sh, expect);
		done = true;
	}
	LWLockRelease(&sh->map_lock);
	return done;
}

/* Logical ids of the pages on a tier (only leaves, or all) */
uint32 *
hi_pt_collect(HiIndexShared *sh, int tier, bool leaves, Size *n)
{
	uint32	   *out;
	uint32	   *pt;
	uint32		p;
	Size		cnt = 0;

	LWLockAcquire(&sh->map_lock, LW_SHARED);
	out = palloc_extended(sizeof(uint32) * Max(sh->used_slots[tier], 1), MCXT_ALLOC_HUGE);
	pt = DsaPointerIsValid(sh->pt) ? hi_pt_array(sh) : NULL;
	for (p = 0; pt && p < sh->pt_cap && cnt < sh->used_slots[tier]; p++)
	{
		uint32		e = pt[p];

		if (HI_PTE_MAPPED(e) && HI_PTE_TIER(e) == tier && !(leaves && HI_PTE_UPPER(e)))
			out[cnt++] = p;
	}
	LWLockRelease(&sh->map_lock);
	*n = cnt;
	return out;
}

/*
 * The pages whose current version was written since the last checkpoint
 * (FRESH slots): what a checkpoint adds to the map file, and logs to WAL.
 */
uint32 *
hi_pt_fresh_pages(HiIndexShared *sh, Size *n)
{
	uint32	   *out;
	uint32	   *pt;
	uint32		p;
	Size		cnt = 0;
	Size		cap = 64;

	LWLockAcquire(&sh->map_lock, LW_SHARED);
	out = palloc_extended(sizeof(uint32) * cap, MCXT_ALLOC_HUGE);
	pt = DsaPointerIsValid(sh->pt) ? hi_pt_array(sh) : NULL;
	for (p = 0; pt && p < sh->pt_cap; p++)
	{
		uint32		e = pt[p];

		if (!HI_PTE_MAPPED(e) ||
			hi_pt_slot_array(sh, HI_PTE_TIER(e))[HI_PTE_SLOT(e)] != HI_SLOT_FRESH)
			continue;
		if (cnt == cap)
		{
			cap *= 2;
			out = repalloc_huge(out, sizeof(uint32) * cap);
		}
		out[cnt++] = p;
	}
	LWLockRelease(&sh->map_lock);
	*n = cnt;
	return out;
}

/*
 * Before a checkpoint writes the map file: the slots it will reference
 * are no longer FRESH.  Done before the write, so that if anything after
 * it fails, a slot of the new map file is never reused early (at worst it
 * waits for the next checkpoint as PENDING).  ckpt_lock is held
 * exclusively: nothing is remapped meanwhile.
 */
void
hi_pt_settle(HiIndexShared *sh)
{
	int			t;

	LWLockAcquire(&sh->map_lock, LW_EXCLUSIVE);
	for (t = 0; t < HI_NUM_TIERS; t++)
	{
		uint8	   *map = hi_pt_slot_array(sh, t);
		uint32		s;

		for (s = 0; s < sh->nslots[t]; s++)
			if (map[s] == HI_SLOT_FRESH)
				map[s] = HI_SLOT_USED;
	}
	LWLockRelease(&sh->map_lock);
}

/* After a checkpoint: slots of superseded page versions become free */
void
hi_pt_release_pending(HiIndexShared *sh)
{
	int			t;

	LWLockAcquire(&sh->map_lock, LW_EXCLUSIVE);
	for (t = 0; t < HI_NUM_TIERS; t++)
	{
		uint8	   *map = hi_pt_slot_array(sh, t);
		uint32		s;

		for (s = 0; s < sh->nslots[t]; s++)
			if (map[s] == HI_SLOT_PENDING || map[s] == HI_SLOT_LIMBO)
			{
				map[s] = HI_SLOT_FREE;
				if (s < sh->free_hint[t])
					sh->free_hint[t] = s;
			}
		sh->limbo_slots[t] = 0;
	}
	LWLockRelease(&sh->map_lock);
}

/*
 * Drop the free slots at the end of a tier from the slot map and return
 * the new length in slots, for the caller to truncate the file to.  Called
 * at a checkpoint (ckpt_lock held exclusively: no slot is being allocated,
 * written or read meanwhile).
 */
uint32
hi_pt_trim(HiIndexShared *sh, int tier)
{
	uint8	   *map;
	uint32		n;

	LWLockAcquire(&sh->map_lock, LW_EXCLUSIVE);
	map = hi_pt_slot_array(sh, tier);
	n = sh->nslots[tier];
	while (n > 0 && map[n - 1] == HI_SLOT_FREE)
		n--;
	sh->nslots[tier] = n;
	sh->free_hint[tier] = Min(sh->free_hint[tier], n);
	LWLockRelease(&sh->map_lock);
	return n;
}

/*
 * Pages to move down at a checkpoint so that the end of a tier file can be
 * cut off (hi_tier_compact): copy-on-write leaves the current versions
 * wherever free slots were when they were written, so after rewrites of
 * most pages between two checkpoints the live pages sit in the upper half
 * of a file twice their size.  Returns the pages of the highest live slots
 * that the free slots below them can take, highest first, or none while
 * the file is within HI_COMPACT_SLACK of its live pages.  ckpt_lock held
 * exclusively.
 */
#define HI_COMPACT_SLACK(used)	((used) / 8 + 16)

/* Is any tier file longer than its live pages and the slack? */
bool
hi_pt_compaction_wanted(HiIndexShared *sh)
{
	bool		want = false;
	int			t;

	LWLockAcquire(&sh->map_lock, LW_SHARED);
	for (t = 0; t < HI_NUM_TIERS; t++)
		if (sh->nslots[t] > sh->used_slots[t] + HI_COMPACT_SLACK(sh->used_slots[t]))
			want = true;
	LWLockRelease(&sh->map_lock);
	return want;
}

uint32 *
hi_pt_compaction_plan(HiIndexShared *sh, int tier, Size *n)
{
	uint8	   *map;
	uint32	   *pt;
	uint32	   *owner;
	uint32	   *out = NULL;
	uint32		nslots;
	uint32		p;
	uint32		lo,
				hi;
	Size		cnt = 0;

	*n = 0;
	LWLockAcquire(&sh->map_lock, LW_SHARED);
	nslots = sh->nslots[tier];
	if (nslots <= sh->used_slots[tier] + HI_COMPACT_SLACK(sh->used_slots[tier]) ||
		!DsaPointerIsValid(sh->pt))
	{
		LWLockRelease(&sh->map_lock);
		return NULL;
	}
	map = hi_pt_slot_array(sh, tier);
	pt = hi_pt_array(sh);
	owner = palloc_extended(sizeof(uint32) * nslots, MCXT_ALLOC_HUGE);
	memset(owner, 0xff, sizeof(uint32) * nslots);
	for (p = 0; p < sh->pt_cap; p++)
		if (HI_PTE_MAPPED(pt[p]) && HI_PTE_TIER(pt[p]) == tier &&
			HI_PTE_SLOT(pt[p]) < nslots)
			owner[HI_PTE_SLOT(pt[p])] = p;
	out = palloc_extended(sizeof(uint32) * Max(sh->used_slots[tier], 1), MCXT_ALLOC_HUGE);
	/* pair the lowest free slots with the highest live ones */
	lo = 0;
	hi = nslots;
	for (;;)
	{
		while (lo < hi && map[lo] != HI_SLOT_FREE)
			lo++;
		while (hi > lo && (owner[hi - 1] == PG_UINT32_MAX || !HI_SLOT_IN_USE(map[hi - 1])))
			hi--;
		if (hi == 0 || lo >= hi - 1)
			break;
		out[cnt++] = owner[hi - 1];
		lo++;
		hi--;
	}
	LWLockRelease(&sh->map_lock);
	pfree(owner);
	*n = cnt;
	return out;
}

void
hi_pt_count(HiIndexShared *sh, uint64 *pages_per_tier)
{
	int			t;

	LWLockAcquire(&sh->map_lock, LW_SHARED);
	for (t = 0; t < HI_NUM_TIERS; t++)
		pages_per_tier[t] = sh->used_slots[t];
	LWLockRelease(&sh->map_lock);
}

/*
 * Page table invariants: every mapped page points at a USED slot inside
 * its file, no two pages share a slot, and every USED slot is mapped.
 */
void
hi_pt_check(HiIndexShared *sh)
{
	uint32	   *pt;
	uint8	   *seen[HI_NUM_TIERS];
	uint32		p;
	int			t;

	LWLockAcquire(&sh->map_lock, LW_SHARED);
	pt = hi_pt_array(sh);
	for (t = 0; t < HI_NUM_TIERS; t++)
		seen[t] = palloc0(Max(sh->nslots[t], 1));
	for (p = 0; p < sh->meta.npages && p < sh->pt_cap; p++)
	{
		uint32		e = pt[p];
		int			tier;
		uint32		s;

		if (!HI_PTE_MAPPED(e))
			continue;
		tier = HI_PTE_TIER(e);
		s = HI_PTE_SLOT(e);
		if (s >= sh->nslots[tier] || !HI_SLOT_IN_USE(hi_pt_slot_array(sh, tier)[s]))
		{
			LWLockRelease(&sh->map_lock);
			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("page %u is mapped to slot %u of tier %s, which is not in use",
							p, s, hi_tier_suffix(tier))));
		}
		if (seen[tier][s])
		{
			LWLockRelease(&sh->map_lock);
			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("slot %u of tier %s is mapped by two pages", s,
							hi_tier_suffix(tier))));
		}
		seen[tier][s] = 1;
	}
	for (t = 0; t < HI_NUM_TIERS; t++)
	{
		uint32		s;
		uint8	   *map = hi_pt_slot_array(sh, t);

		for (s = 0; s < sh->nslots[t]; s++)
			if (HI_SLOT_IN_USE(map[s]) && !seen[t][s])
			{
				LWLockRelease(&sh->map_lock);
				ereport(ERROR,
						(errcode(ERRCODE_INDEX_CORRUPTED),
						 errmsg("slot %u of tier %s is in use but no page maps to it",
								s, hi_tier_suffix(t))));
			}
		pfree(seen[t]);
	}
	LWLockRelease(&sh->map_lock);
}
