/*
 * page_spill.c
 *	  Dirty pages parked in shared memory while their tier's disk is full.
 *
 * A read needs a cache frame; when every unpinned frame holds a dirty page
 * and writing one fails with ENOSPC, the page cache moves a dirty page
 * here (a copy in the DSA area, found by a shared hash) instead of failing
 * the read.  A later miss on that page takes it back into a frame, still
 * dirty; a flush of the index (its checkpoint) writes what is parked here
 * once there is space; dropping or rebuilding the index forgets it.  At
 * most as many pages as the cache has frames are parked.
 *
 * Locking: spill_lock protects the hash.  The cache parks a page while
 * holding the partition lock of its frame, so a backend that then misses
 * the page in the cache finds it here (lock order: partition, spill).
 */
#include "postgres.h"

#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/dsa.h"
#include "utils/hsearch.h"

#include "base/hi_base.h"
#include "cache/page_cache.h"
#include "storage/storage.h"

typedef struct SpillKey
{
	uint32		slotno;
	uint32		generation;
	uint32		pageno;
} SpillKey;

typedef struct SpillEntry
{
	SpillKey	key;
	dsa_pointer page;
	uint32		len;
} SpillEntry;

typedef struct SpillCtl
{
	pg_atomic_uint32 count;
} SpillCtl;

static SpillCtl *spill_ctl;
static HTAB *spill_map;
static LWLock *spill_lock;

Size
hi_spill_shmem_size(int nentries)
{
	RequestNamedLWLockTranche("hybrid_index_spill", 1);
	return add_size(MAXALIGN(sizeof(SpillCtl)),
					hash_estimate_size(nentries, sizeof(SpillEntry)));
}

void
hi_spill_shmem_init(int nentries)
{
	bool		found;
	HASHCTL		info;

	spill_ctl = ShmemInitStruct("hybrid_index spill ctl", sizeof(SpillCtl), &found);
	if (!found)
		pg_atomic_init_u32(&spill_ctl->count, 0);
	memset(&info, 0, sizeof(info));
	info.keysize = sizeof(SpillKey);
	info.entrysize = sizeof(SpillEntry);
	spill_map = hi_shmem_init_hash("hybrid_index spill map", nentries, &info,
								   HASH_ELEM | HASH_BLOBS);
	spill_lock = &GetNamedLWLockTranche("hybrid_index_spill")->lock;
}

/* Is anything parked?  (Cheap test before a lookup.) */
bool
hi_spill_any(void)
{
	return pg_atomic_read_u32(&spill_ctl->count) > 0;
}

/* Park a copy of a page; false if there is no room */
bool
hi_spill_put(uint32 slotno, uint32 generation, uint32 pageno,
			 const char *page, uint32 len)
{
	SpillKey	key = {slotno, generation, pageno};
	SpillEntry *e;
	bool		found;
	dsa_pointer dp;

	dp = dsa_allocate_extended(hi_dsa(), len, DSA_ALLOC_NO_OOM);
	if (!DsaPointerIsValid(dp))
		return false;
	memcpy(dsa_get_address(hi_dsa(), dp), page, len);
	LWLockAcquire(spill_lock, LW_EXCLUSIVE);
	e = hash_search(spill_map, &key, HASH_ENTER_NULL, &found);
	if (e == NULL)
	{
		LWLockRelease(spill_lock);
		dsa_free(hi_dsa(), dp);
		return false;
	}
	if (found)
		dsa_free(hi_dsa(), e->page);	/* cannot happen: one copy per page */
	else
		pg_atomic_fetch_add_u32(&spill_ctl->count, 1);
	e->page = dp;
	e->len = len;
	LWLockRelease(spill_lock);
	return true;
}

/* Is a page parked? */
bool
hi_spill_has(uint32 slotno, uint32 generation, uint32 pageno)
{
	SpillKey	key = {slotno, generation, pageno};
	bool		found;

	if (!hi_spill_any())
		return false;
	LWLockAcquire(spill_lock, LW_SHARED);
	found = hash_search(spill_map, &key, HASH_FIND, NULL) != NULL;
	LWLockRelease(spill_lock);
	return found;
}

/* Take a parked page back into dst; false if it is not parked */
bool
hi_spill_take(uint32 slotno, uint32 generation, uint32 pageno, char *dst)
{
	SpillKey	key = {slotno, generation, pageno};
	SpillEntry *e;
	dsa_pointer dp = InvalidDsaPointer;

	if (!hi_spill_any())
		return false;
	LWLockAcquire(spill_lock, LW_EXCLUSIVE);
	e = hash_search(spill_map, &key, HASH_FIND, NULL);
	if (e)
	{
		dp = e->page;
		memcpy(dst, dsa_get_address(hi_dsa(), dp), e->len);
		hash_search(spill_map, &key, HASH_REMOVE, NULL);
		pg_atomic_fetch_sub_u32(&spill_ctl->count, 1);
	}
	LWLockRelease(spill_lock);
	if (DsaPointerIsValid(dp))
		dsa_free(hi_dsa(), dp);
	return DsaPointerIsValid(dp);
}

/*
 * Write the parked pages of an index (caller holds its tree_lock
 * exclusively: nobody takes them back meanwhile).  They stay parked if
 * the write fails.
 */
void
hi_spill_flush(HiIndexShared *sh, int slotno)
{
	HASH_SEQ_STATUS seq;
	SpillEntry *e;
	SpillKey   *keys;
	char	  **pages;
	char	   *mem;
	int			n = 0;
	int			max;
	int			i;
	uint32		psize = sh->meta.page_size;

	if (!hi_spill_any())
		return;
	LWLockAcquire(spill_lock, LW_SHARED);
	max = (int) pg_atomic_read_u32(&spill_ctl->count);
	keys = palloc(sizeof(SpillKey) * Max(max, 1));
	pages = palloc(sizeof(char *) * Max(max, 1));
	mem = palloc((Size) Max(max, 1) * psize + HI_IO_ALIGN);
	hash_seq_init(&seq, spill_map);
	while ((e = hash_seq_search(&seq)) != NULL)
	{
		if (e->key.slotno != (uint32) slotno || e->key.generation != sh->generation ||
			n >= max)
			continue;
		keys[n] = e->key;
		pages[n] = (char *) TYPEALIGN(HI_IO_ALIGN, mem) + (Size) n * psize;
		memcpy(pages[n], dsa_get_address(hi_dsa(), e->page), psize);
		n++;
	}
	LWLockRelease(spill_lock);

	if (n > 0)
	{
		hi_store_write(sh, pages, n);
		LWLockAcquire(spill_lock, LW_EXCLUSIVE);
		for (i = 0; i < n; i++)
		{
			e = hash_search(spill_map, &keys[i], HASH_FIND, NULL);
			if (e == NULL)
				continue;
			dsa_free(hi_dsa(), e->page);
			hash_search(spill_map, &keys[i], HASH_REMOVE, NULL);
			pg_atomic_fetch_sub_u32(&spill_ctl->count, 1);
		}
		LWLockRelease(spill_lock);
	}
	pfree(keys);
	pfree(pages);
	pfree(mem);
}

/* Forget the parked pages of a slot generation (dropped, rebuilt) */
void
hi_spill_discard(int slotno, uint32 generation)
{
	HASH_SEQ_STATUS seq;
	SpillEntry *e;

	if (spill_ctl == NULL || !hi_spill_any())
		return;
	LWLockAcquire(spill_lock, LW_EXCLUSIVE);
	hash_seq_init(&seq, spill_map);
	while ((e = hash_seq_search(&seq)) != NULL)
	{
		if (e->key.slotno != (uint32) slotno || e->key.generation != generation)
			continue;
		dsa_free(hi_dsa(), e->page);
		/* removing the current element is allowed during a scan */
		hash_search(spill_map, &e->key, HASH_REMOVE, NULL);
		pg_atomic_fetch_sub_u32(&spill_ctl->count, 1);
	}
	LWLockRelease(spill_lock);
}
