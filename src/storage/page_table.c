/*
 * page_table.c
 *	  Logical page id -> (tier, slot) mapping and the free-slot maps of the
 *	  tier files, kept in the shared DSA area.
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

#include <fcntl.h>
#include <unistd.h>

#include "port/pg_crc32c.h"
#include "utils/dsa.h"

#include "base/hi_base.h"
#include "storage/storage.h"

#define PT_MIN_CAP 64

static void *
grow_array(dsa_pointer *ptr, uint32 *cap, uint32 need, Size elsize)
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

static uint32 *
pt_array(HiIndexShared *sh)
{
	return (uint32 *) dsa_get_address(hi_dsa(), sh->pt);
}

static uint8 *
slot_array(HiIndexShared *sh, int tier)
{
	return (uint8 *) dsa_get_address(hi_dsa(), sh->slotmap[tier]);
}

/* Fresh, empty page table (caller owns the slot exclusively) */
void
hi_pt_init(HiIndexShared *sh, uint32 npages_hint)
{
	int			t;

	hi_pt_free(sh);
	(void) grow_array(&sh->pt, &sh->pt_cap, npages_hint, sizeof(uint32));
	for (t = 0; t < HI_NUM_TIERS; t++)
	{
		(void) grow_array(&sh->slotmap[t], &sh->slot_cap[t], PT_MIN_CAP, sizeof(uint8));
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
		e = pt_array(sh)[pageno];
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
	map = slot_array(sh, tier);
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
	uint8	   *map = slot_array(sh, t);

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
	map = slot_array(sh, tier);
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
		map = grow_array(&sh->slotmap[tier], &sh->slot_cap[tier], s + 1, sizeof(uint8));
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
	if (slot < sh->nslots[tier] && HI_SLOT_IN_USE(slot_array(sh, tier)[slot]))
	{
		slot_array(sh, tier)[slot] = HI_SLOT_FREE;
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
	pt = grow_array(&sh->pt, &sh->pt_cap, pageno + 1, sizeof(uint32));
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
	pt = pt_array(sh);
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
	pt = DsaPointerIsValid(sh->pt) ? pt_array(sh) : NULL;
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
	pt = DsaPointerIsValid(sh->pt) ? pt_array(sh) : NULL;
	for (p = 0; pt && p < sh->pt_cap; p++)
	{
		uint32		e = pt[p];

		if (!HI_PTE_MAPPED(e) ||
			slot_array(sh, HI_PTE_TIER(e))[HI_PTE_SLOT(e)] != HI_SLOT_FRESH)
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
		uint8	   *map = slot_array(sh, t);
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
		uint8	   *map = slot_array(sh, t);
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
	map = slot_array(sh, tier);
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
	map = slot_array(sh, tier);
	pt = pt_array(sh);
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
	pt = pt_array(sh);
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
		if (s >= sh->nslots[tier] || !HI_SLOT_IN_USE(slot_array(sh, tier)[s]))
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
		uint8	   *map = slot_array(sh, t);

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

/* ---- map file ---- */

static pg_crc32c
map_crc(const char *buf, Size len)
{
	pg_crc32c	crc;

	INIT_CRC32C(crc);
	COMP_CRC32C(crc, buf + offsetof(HiMapHeader, npte),
				len - offsetof(HiMapHeader, npte));
	FIN_CRC32C(crc);
	return crc;
}

/*
 * The map file's contents from the shared state (palloc'd, *lenp bytes).
 * The caller holds tree_lock exclusively and has flushed every dirty page,
 * so the page table matches the pages on disk.
 */
char *
hi_map_image(HiIndexShared *sh, Size *lenp)
{
	uint32		npte = sh->meta.npages;
	uint32		bloblen = DsaPointerIsValid(sh->am_blob) ? sh->am_blob_len : 0;
	Size		len = sizeof(HiMapHeader) + (Size) npte * sizeof(uint32) + bloblen;
	char	   *buf = palloc_extended(len, MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	HiMapHeader *h = (HiMapHeader *) buf;
	int			t;

	h->magic = HI_MAP_MAGIC;
	h->version = HI_MAP_VERSION;
	h->npte = npte;
	h->indexoid = sh->indexoid;
	h->dboid = sh->dboid;
	h->relnumber = sh->relnumber;
	h->meta = sh->meta;
	h->am_blob_len = bloblen;
	if (bloblen > 0)
		memcpy(buf + sizeof(HiMapHeader) + (Size) npte * sizeof(uint32),
			   dsa_get_address(hi_dsa(), sh->am_blob), bloblen);
	LWLockAcquire(&sh->map_lock, LW_SHARED);
	for (t = 0; t < HI_NUM_TIERS; t++)
	{
		h->spcoid[t] = sh->spcoid[t];
		h->nslots[t] = sh->nslots[t];
	}
	if (npte > 0)
		memcpy(buf + sizeof(HiMapHeader), pt_array(sh),
			   (Size) Min(npte, sh->pt_cap) * sizeof(uint32));
	LWLockRelease(&sh->map_lock);
	h->crc = map_crc(buf, len);
	*lenp = len;
	return buf;
}

/* Replace the map file by an image (atomically and durably) */
void
hi_map_write_image(HiIndexShared *sh, const char *image, Size len, bool sync)
{
	char	   *path = hi_file_path(sh->spcoid[HI_TIER_FLASH], sh->dboid,
									sh->spcoid[HI_TIER_FLASH], sh->relnumber, "map");

	hi_replace_file(path, image, len, sync);
	pfree(path);
}

void
hi_map_write(HiIndexShared *sh)
{
	Size		len;
	char	   *buf = hi_map_image(sh, &len);

	hi_map_write_image(sh, buf, len, true);
	pfree(buf);
}

static char *
map_load(const char *path, Size *len, bool *bad)
{
	char	   *buf = hi_read_whole_file(path, len);
	HiMapHeader *h = (HiMapHeader *) buf;

	*bad = false;
	if (buf == NULL)
		return NULL;
	if (*len < HI_MAP_HEADER_SIZE(2) || h->magic != HI_MAP_MAGIC ||
		!HI_MAP_VERSION_OK(h->version) ||
		*len != HI_MAP_HEADER_SIZE(h->version) + (Size) h->npte * sizeof(uint32) + h->am_blob_len ||
		h->crc != map_crc(buf, *len))
		*bad = true;
	else if (h->version < 3)
	{
		/* a version 2 map: make room for the fields it lacks */
		Size		hsz = HI_MAP_HEADER_SIZE(h->version);
		char	   *nbuf = palloc_extended(*len - hsz + sizeof(HiMapHeader), MCXT_ALLOC_HUGE);

		memcpy(nbuf, buf, hsz);
		memcpy(nbuf + sizeof(HiMapHeader), buf + hsz, *len - hsz);
		*len += sizeof(HiMapHeader) - hsz;
		pfree(buf);
		buf = nbuf;
		h = (HiMapHeader *) buf;
		h->meta.payload_root = HI_INVALID_PAGE;
		h->meta.payload_keys = 0;
	}
	return buf;
}

/*
 * The position of the redo log a map file reflects (its checkpoint), for
 * WAL redo: never an ERROR (a replay must not stop on our records).
 * Returns 0 and sets *exists false when there is no map file; 0 for a map
 * file that cannot be read or is not one.
 */
uint64
hi_map_ckpt_position(const char *path, bool *exists)
{
	int			fd = open(path, O_RDONLY | PG_BINARY, 0);
	HiMapHeader h;
	uint64		pos = 0;

	*exists = fd >= 0 || errno != ENOENT;
	if (fd < 0)
		return 0;
	if (read(fd, &h, sizeof(h)) >= (ssize_t) HI_MAP_HEADER_SIZE(2) &&
		h.magic == HI_MAP_MAGIC && HI_MAP_VERSION_OK(h.version))
		pos = h.meta.ckpt_lsn;
	close(fd);
	return pos;
}

/*
 * The entry format of an index not loaded (HiMeta.version), from its map
 * file's header; 0 when there is none or it cannot be read.
 */
uint32
hi_map_meta_version(const char *path)
{
	int			fd = open(path, O_RDONLY | PG_BINARY, 0);
	HiMapHeader h;
	uint32		v = 0;

	if (fd < 0)
		return 0;
	if (read(fd, &h, sizeof(h)) >= (ssize_t) HI_MAP_HEADER_SIZE(2) &&
		h.magic == HI_MAP_MAGIC && HI_MAP_VERSION_OK(h.version))
		v = h.meta.version;
	close(fd);
	return v;
}

Oid
hi_map_read_owner(const char *path)
{
	Size		len;
	bool		bad;
	char	   *buf = map_load(path, &len, &bad);
	Oid			owner = InvalidOid;

	if (buf && !bad)
		owner = ((HiMapHeader *) buf)->indexoid;
	if (buf)
		pfree(buf);
	return owner;
}

/*
 * Load metadata and page table from the map file into a fresh slot.
 * Returns false if the index has no map file (its files are missing).
 */
bool
hi_map_read(HiIndexShared *sh, const char *indexname)
{
	char	   *path = hi_file_path(sh->spcoid[HI_TIER_FLASH], sh->dboid,
									sh->spcoid[HI_TIER_FLASH], sh->relnumber, "map");
	Size		len;
	bool		bad;
	char	   *buf = map_load(path, &len, &bad);
	HiMapHeader *h = (HiMapHeader *) buf;
	uint32	   *pt;
	uint32		p;
	int			t;

	if (buf == NULL)
		return false;
	if (bad && len >= HI_MAP_HEADER_SIZE(2) && h->magic == HI_MAP_MAGIC &&
		!HI_MAP_VERSION_OK(h->version))
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("map file \"%s\" of index \"%s\" has format version %u, this build of hybrid_index reads versions %u to %u",
						path, indexname, h->version, HI_MAP_VERSION_MIN, HI_MAP_VERSION),
				 errhint("REINDEX the index.")));
	if (bad)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("map file \"%s\" of index \"%s\" is corrupted", path, indexname),
				 errhint("REINDEX the index.")));

	sh->meta = h->meta;
	/*
	 * The map file knows where the tiers are; reloptions changed by ALTER
	 * INDEX ... SET take effect only when the index is rebuilt.
	 */
	for (t = 0; t < HI_NUM_TIERS; t++)
		if (OidIsValid(h->spcoid[t]))
			sh->spcoid[t] = h->spcoid[t];
	hi_pt_init(sh, h->npte);
	pt = grow_array(&sh->pt, &sh->pt_cap, h->npte, sizeof(uint32));
	memcpy(pt, buf + sizeof(HiMapHeader), (Size) h->npte * sizeof(uint32));
	for (t = 0; t < HI_NUM_TIERS; t++)
	{
		(void) grow_array(&sh->slotmap[t], &sh->slot_cap[t], h->nslots[t], sizeof(uint8));
		sh->nslots[t] = h->nslots[t];
		sh->free_hint[t] = 0;
		sh->used_slots[t] = 0;
	}
	for (p = 0; p < h->npte; p++)
	{
		uint32		e = pt[p];

		if (!HI_PTE_MAPPED(e))
			continue;
		t = HI_PTE_TIER(e);
		if (HI_PTE_SLOT(e) >= sh->nslots[t])
			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("map file \"%s\" of index \"%s\" points past the end of tier %s",
							path, indexname, hi_tier_suffix(t))));
		slot_array(sh, t)[HI_PTE_SLOT(e)] = HI_SLOT_USED;
		sh->used_slots[t]++;
	}
	hi_am_blob_set(sh, buf + sizeof(HiMapHeader) + (Size) h->npte * sizeof(uint32),
				   h->am_blob_len);
	pfree(buf);
	pfree(path);
	return true;
}

/*
 * State an access method keeps besides pages and page table (a grid's root
 * directory, say): stored in the DSA area, written into the map file at
 * each checkpoint and restored when the index is loaded.
 */
void
hi_am_blob_set(HiIndexShared *sh, const char *data, uint32 len)
{
	dsa_area   *area = hi_dsa();

	if (DsaPointerIsValid(sh->am_blob))
		dsa_free(area, sh->am_blob);
	sh->am_blob = InvalidDsaPointer;
	sh->am_blob_len = 0;
	if (len == 0)
		return;
	sh->am_blob = dsa_allocate_extended(area, len, DSA_ALLOC_HUGE);
	memcpy(dsa_get_address(area, sh->am_blob), data, len);
	sh->am_blob_len = len;
}

/* A palloc'd copy of the AM state, NULL if none */
char *
hi_am_blob_get(HiIndexShared *sh, uint32 *len)
{
	char	   *copy;

	*len = 0;
	if (!DsaPointerIsValid(sh->am_blob))
		return NULL;
	copy = palloc(sh->am_blob_len);
	memcpy(copy, dsa_get_address(hi_dsa(), sh->am_blob), sh->am_blob_len);
	*len = sh->am_blob_len;
	return copy;
}
