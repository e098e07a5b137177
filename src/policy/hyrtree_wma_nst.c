/*
 * hyrtree_wma_nst.c
 *	  The Node Score Table of the R-tree placement policies wma and random
 *	  (hyrtree_wma.c): the leaves' reads and scores, the end of an epoch
 *	  (Algorithm 1) and the moves made then: the random control's leaves
 *	  up, and the coldest leaves back to flash while the fast tier is over
 *	  its capacity.
 *
 * Node Score Table (NST): a shared hash keyed by (index slot, generation,
 * leaf page) holding the leaf's reads in the current epoch, its reads in
 * the last t epochs and its score.  An epoch is a number of node reads of
 * the index.  At the end of an epoch (Algorithm 1) every entry pushes its
 * count, scores S = sum_{i=0}^{t-1} 2(t-i)/(t(t+1)) Y_{t-i} (Eq. 2), and the
 * threshold T becomes the N-th percentile of the scores.  Entries whose
 * last t epochs saw no read are dropped, which bounds the table by the
 * leaves read recently; hybrid_index.score_table_entries caps it (leaves
 * beyond the cap are not tracked until space frees up).  The NST is not
 * persisted: after a restart scores are rebuilt from new reads, while the
 * pages already on the fast tier stay there (the page table is durable).
 */
#include "postgres.h"

#include <math.h>

#include "common/pg_prng.h"

#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/hsearch.h"

#include "base/hi_base.h"
#include "policy/placement.h"
#include "policy/hyrtree_wma_int.h"
#include "storage/storage.h"

#define NST_PARTITIONS 16

typedef struct NstKey
{
	uint32		slotno;
	uint32		generation;
	uint32		pageno;
} NstKey;

typedef struct NstEntry
{
	NstKey		key;
	uint32		ctn;			/* reads in the current epoch */
	uint16		hist[HI_WMA_MAX_EPOCHS];	/* hist[0] = last epoch */
	uint8		nhist;
	bool		counted;		/* random mode: counted in the quota (once) */
	float		score;
} NstEntry;

static HTAB *nst = NULL;

/* one per registry slot (hyrtree_wma_int.h) */
WmaSlot    *hi_wma_slots = NULL;

/* slot generations forgotten since the last purge (shared; see hi_wma_forget) */
static pg_atomic_uint32 *wma_forgotten_ptr = NULL;
#define wma_forgotten (*wma_forgotten_ptr)

static long purge_garbage(void);

static LWLockPadded *nst_locks = NULL;

Size
hi_wma_shmem_size(void)
{
	RequestNamedLWLockTranche("hybrid_index_nst", NST_PARTITIONS);
	return add_size(add_size(hash_estimate_size(hi_wma_score_table_entries, sizeof(NstEntry)),
							 mul_size(sizeof(WmaSlot), hi_registry_slots())),
					sizeof(pg_atomic_uint32));
}

void
hi_wma_shmem_init(void)
{
	HASHCTL		info;
	bool		found;

	memset(&info, 0, sizeof(info));
	info.keysize = sizeof(NstKey);
	info.entrysize = sizeof(NstEntry);
	info.num_partitions = NST_PARTITIONS;
	nst = hi_shmem_init_hash("hybrid_index node score table", hi_wma_score_table_entries,
							 &info, HASH_ELEM | HASH_BLOBS | HASH_PARTITION);
	nst_locks = GetNamedLWLockTranche("hybrid_index_nst");

	wma_forgotten_ptr = ShmemInitStruct("hybrid_index placement garbage",
										sizeof(pg_atomic_uint32), &found);
	if (!found)
		pg_atomic_init_u32(wma_forgotten_ptr, 0);
	hi_wma_slots = ShmemInitStruct("hybrid_index placement", sizeof(WmaSlot) * hi_registry_slots(),
								   &found);
	if (!found)
	{
		int			i;

		memset(hi_wma_slots, 0, sizeof(WmaSlot) * hi_registry_slots());
		for (i = 0; i < hi_registry_slots(); i++)
		{
			WmaSlot    *w = &hi_wma_slots[i];

			LWLockInitialize(&w->lock, hi_shared->tranche_id);
			pg_atomic_init_u64(&w->epoch_reads, 0);
			pg_atomic_init_u64(&w->migrations_up, 0);
			pg_atomic_init_u64(&w->migrations_down, 0);
			pg_atomic_init_u64(&w->random_quota, 0);
		}
	}
}

static LWLock *
nst_lock(uint32 hash)
{
	return &nst_locks[hash % NST_PARTITIONS].lock;
}

/* The table's key of a page of an index, and its hash */
static uint32
nst_key(NstKey *key, HiIndexShared *sh, int slotno, uint32 pageno)
{
	key->slotno = slotno;
	key->generation = sh->generation;
	key->pageno = pageno;
	return get_hash_value(nst, key);
}

static NstEntry *
lookup(NstKey *key, uint32 hash)
{
	return (NstEntry *) hash_search_with_hash_value(nst, key, hash, HASH_FIND, NULL);
}

double
hi_place_score(HiIndexShared *sh, int slotno, uint32 pageno)
{
	NstKey		key;
	uint32		hash;
	NstEntry   *e;
	double		score = 0;

	if (nst == NULL)
		return 0;
	hash = nst_key(&key, sh, slotno, pageno);
	LWLockAcquire(nst_lock(hash), LW_SHARED);
	e = lookup(&key, hash);
	if (e)
		score = e->score;
	LWLockRelease(nst_lock(hash));
	return score;
}

static int
cmp_float(const void *a, const void *b)
{
	float		fa = *(const float *) a;
	float		fb = *(const float *) b;

	return fa < fb ? -1 : (fa > fb ? 1 : 0);
}

/* Eq. 2: weights 2(t-i)/(t(t+1)), the most recent epoch weighing most */
static float
wma_score(const NstEntry *e, int t)
{
	double		s = 0;
	int			i;

	for (i = 0; i < e->nhist && i < t; i++)
		s += 2.0 * (t - i) / ((double) t * (t + 1)) * e->hist[i];
	return (float) s;
}

typedef struct Cand
{
	uint32		pageno;
	float		score;
} Cand;

static int
cmp_cand(const void *a, const void *b)
{
	float		fa = ((const Cand *) a)->score;
	float		fb = ((const Cand *) b)->score;

	return fa < fb ? -1 : (fa > fb ? 1 : 0);
}

static Size
count_leaves(HiIndexShared *sh)
{
	Size		total = 0;
	int			t;

	for (t = 0; t < HI_NUM_TIERS; t++)
	{
		Size		n;
		uint32	   *l = hi_pt_collect(sh, t, true, &n);

		pfree(l);
		total += n;
	}
	return total;
}

/* Move the coldest fast-tier leaves back to flash while over capacity */
static void
reclaim(HiIndexShared *sh, int slotno)
{
	WmaSlot    *w = hi_wma_slot(sh);
	Size		n;
	uint32	   *leaves;
	uint64		pages[HI_NUM_TIERS];
	Cand	   *c;
	Size		i;
	int64		excess;
	uint32	   *victims;
	int			nv = 0;

	if (w->optane_capacity == 0)
		return;
	hi_pt_count(sh, pages);
	if (pages[HI_TIER_OPTANE] < w->optane_capacity)
		return;
	excess = (int64) pages[HI_TIER_OPTANE] - (int64) (w->optane_capacity * 9 / 10);
	leaves = hi_pt_collect(sh, HI_TIER_OPTANE, true, &n);
	c = palloc(sizeof(Cand) * Max(n, 1));
	for (i = 0; i < n; i++)
	{
		c[i].pageno = leaves[i];
		c[i].score = (float) hi_place_score(sh, slotno, leaves[i]);
	}
	qsort(c, n, sizeof(Cand), cmp_cand);
	victims = palloc(sizeof(uint32) * Max(n, 1));
	for (i = 0; i < n && nv < excess; i++)
	{
		/* hot leaves stay even over capacity */
		if (w->have_threshold && c[i].score > w->threshold)
			break;
		victims[nv++] = c[i].pageno;
	}
	if (nv > 0)
		pg_atomic_fetch_add_u64(&w->migrations_down,
								hi_tier_move(sh, victims, nv, HI_TIER_FLASH));
	pfree(leaves);
	pfree(c);
	pfree(victims);
}

/* rHyR-tree: promote as many random flash leaves as WMA would have */
static void
promote_random(HiIndexShared *sh)
{
	WmaSlot    *w = hi_wma_slot(sh);
	uint64		quota = pg_atomic_exchange_u64(&w->random_quota, 0);
	Size		n;
	uint32	   *leaves;
	uint32	   *pick;
	Size		i;
	int			np = 0;
	uint64		pages[HI_NUM_TIERS];

	if (quota == 0)
		return;
	hi_pt_count(sh, pages);
	if (w->optane_capacity > 0)
	{
		if (pages[HI_TIER_OPTANE] >= w->optane_capacity)
			return;
		quota = Min(quota, w->optane_capacity - pages[HI_TIER_OPTANE]);
	}
	leaves = hi_pt_collect(sh, HI_TIER_FLASH, true, &n);
	pick = palloc(sizeof(uint32) * Max(Min(quota, n), 1));
	/* partial Fisher-Yates: quota distinct random leaves */
	for (i = 0; i < n && (uint64) np < quota; i++)
	{
		Size		j = i + (Size) (pg_prng_uint64(&pg_global_prng_state) % (n - i));
		uint32		tmp = leaves[i];

		leaves[i] = leaves[j];
		leaves[j] = tmp;
		pick[np++] = leaves[i];
	}
	if (np > 0)
		pg_atomic_fetch_add_u64(&w->migrations_up, hi_tier_move(sh, pick, np, HI_TIER_OPTANE));
	pfree(leaves);
	pfree(pick);
}

/*
 * Algorithm 1: at the end of an epoch, age every entry of the index,
 * score it, and set T to the N-th percentile of the scores.
 */
static void
epoch_end(HiIndexShared *sh, int slotno)
{
	WmaSlot    *w = hi_wma_slot(sh);
	HASH_SEQ_STATUS seq;
	NstEntry   *e;
	float	   *scores;
	Size		nscores = 0;
	Size		maxscores = 1024;
	int			t = Max(1, Min(w->wma_epochs, HI_WMA_MAX_EPOCHS));
	int			p;

	if (!LWLockConditionalAcquire(&w->lock, LW_EXCLUSIVE))
		return;					/* somebody else is closing the epoch */

	scores = palloc(sizeof(float) * maxscores);
	for (p = 0; p < NST_PARTITIONS; p++)
		LWLockAcquire(&nst_locks[p].lock, LW_EXCLUSIVE);
	hash_seq_init(&seq, nst);
	while ((e = (NstEntry *) hash_seq_search(&seq)) != NULL)
	{
		HiIndexShared *owner = &hi_shared->indexes[e->key.slotno];
		int			i;
		bool		any = false;

		/* entries of dropped or rebuilt indexes: garbage */
		if (!owner->in_use || owner->generation != e->key.generation)
		{
			hash_search(nst, &e->key, HASH_REMOVE, NULL);
			continue;
		}
		if (e->key.slotno != (uint32) slotno)
			continue;
		for (i = HI_WMA_MAX_EPOCHS - 1; i > 0; i--)
			e->hist[i] = e->hist[i - 1];
		e->hist[0] = (uint16) Min(e->ctn, PG_UINT16_MAX);
		e->ctn = 0;
		e->nhist = Min(e->nhist + 1, t);
		for (i = 0; i < e->nhist; i++)
			any |= e->hist[i] != 0;
		if (!any)
		{
			hash_search(nst, &e->key, HASH_REMOVE, NULL);
			continue;
		}
		e->score = wma_score(e, t);
		if (nscores == maxscores)
		{
			maxscores *= 2;
			scores = repalloc_huge(scores, sizeof(float) * maxscores);
		}
		scores[nscores++] = e->score;
	}
	for (p = NST_PARTITIONS - 1; p >= 0; p--)
		LWLockRelease(&nst_locks[p].lock);

	if (nscores > 0)
	{
		Size		nleaves = count_leaves(sh);
		Size		nzero = nleaves > nscores ? nleaves - nscores : 0;
		Size		total = nscores + nzero;
		Size		rank;

		/*
		 * The percentile is over every leaf of the index, as in the paper's
		 * table of all leaves: leaves not read in the last t epochs score 0.
		 */
		qsort(scores, nscores, sizeof(float), cmp_float);
		rank = (Size) ceil(w->wma_threshold / 100.0 * total);	/* nearest rank */
		rank = Max(rank, 1);
		w->threshold = rank <= nzero ? 0 : scores[Min(rank - nzero, nscores) - 1];
		w->have_threshold = true;
		w->score_min = nzero > 0 ? 0 : scores[0];
		w->score_median = total / 2 < nzero ? 0 : scores[Min(total / 2 - nzero, nscores - 1)];
		w->score_max = scores[nscores - 1];
	}
	else
		w->have_threshold = false;
	w->scored_leaves = nscores;
	w->epoch_no++;
	pfree(scores);

	PG_TRY();
	{
		if (sh->meta.placement == HI_PLACEMENT_RANDOM)
			promote_random(sh);
		reclaim(sh, slotno);
	}
	PG_FINALLY();
	{
		hi_lwlock_release_cleanup(&w->lock);
	}
	PG_END_TRY();
}

/*
 * The cache reports every page an index read (hits and misses): leaves
 * count in the NST, every page counts toward the epoch.
 */
void
hi_wma_note_reads(HiIndexShared *sh, int slotno, const uint32 *pagenos,
				  char *const *pages, int n)
{
	WmaSlot    *w = hi_wma_slot(sh);
	uint64		before;
	int			i;

	if (nst == NULL || n == 0)
		return;
	for (i = 0; i < n; i++)
	{
		const HiPageHeader *h = (const HiPageHeader *) pages[i];
		NstKey		key;
		uint32		hash;
		NstEntry   *e;
		bool		found;

		if (h->level != 0 || (h->flags & HI_PAGE_FLAG_NULLS))
			continue;
		hash = nst_key(&key, sh, slotno, pagenos[i]);
		LWLockAcquire(nst_lock(hash), LW_EXCLUSIVE);
		e = (NstEntry *) hash_search_with_hash_value(nst, &key, hash,
													 HASH_ENTER_NULL, &found);
		if (e == NULL && pg_atomic_exchange_u32(&wma_forgotten, 0) != 0)
		{
			/* full: make room from forgotten indexes' entries, once */
			LWLockRelease(nst_lock(hash));
			(void) purge_garbage();
			LWLockAcquire(nst_lock(hash), LW_EXCLUSIVE);
			e = (NstEntry *) hash_search_with_hash_value(nst, &key, hash,
														 HASH_ENTER_NULL, &found);
		}
		if (e != NULL)
		{
			if (!found)
			{
				memset(((char *) e) + sizeof(NstKey), 0, sizeof(NstEntry) - sizeof(NstKey));
			}
			e->ctn++;
		}
		LWLockRelease(nst_lock(hash));
	}
	before = pg_atomic_fetch_add_u64(&w->epoch_reads, n);
	if (w->epoch_size > 0 &&
		before / w->epoch_size != (before + n) / w->epoch_size)
		epoch_end(sh, slotno);
}

/*
 * random mode: count a leaf WMA would have moved.  Once while the NST
 * tracks it: WMA moves a hot leaf once and then finds it on the fast tier,
 * whereas here it stays on flash and would be counted again every epoch
 * (the control would then move more than WMA does).
 */
void
hi_wma_count_for_random(HiIndexShared *sh, int slotno, uint32 pageno)
{
	WmaSlot    *w = hi_wma_slot(sh);
	NstKey		key;
	uint32		hash;
	NstEntry   *e;

	if (!w->have_threshold)
		return;
	hash = nst_key(&key, sh, slotno, pageno);
	LWLockAcquire(nst_lock(hash), LW_EXCLUSIVE);
	e = lookup(&key, hash);
	if (e && !e->counted && e->score > w->threshold)
	{
		e->counted = true;
		pg_atomic_fetch_add_u64(&w->random_quota, 1);
	}
	LWLockRelease(nst_lock(hash));
}

/*
 * Remove the entries of slot generations that are gone (indexes dropped,
 * rebuilt or given back: their slot is free or has a newer generation).
 * Returns how many went.
 */
static long
purge_garbage(void)
{
	HASH_SEQ_STATUS seq;
	NstEntry   *e;
	int			p;
	long		n = 0;

	for (p = 0; p < NST_PARTITIONS; p++)
		LWLockAcquire(&nst_locks[p].lock, LW_EXCLUSIVE);
	hash_seq_init(&seq, nst);
	while ((e = (NstEntry *) hash_seq_search(&seq)) != NULL)
	{
		HiIndexShared *owner = &hi_shared->indexes[e->key.slotno];

		if (!owner->in_use || owner->generation != e->key.generation)
		{
			hash_search(nst, &e->key, HASH_REMOVE, NULL);
			n++;
		}
	}
	for (p = NST_PARTITIONS - 1; p >= 0; p--)
		LWLockRelease(&nst_locks[p].lock);
	return n;
}

/*
 * A slot generation is forgotten (index dropped, rebuilt, given back, or
 * unloaded to be loaded again).  Its entries are left where they are:
 * a dropped, rebuilt or given-back index's generation is never used again,
 * so they are garbage that no lookup matches, removed by the next
 * epoch_end of any index or, when the table is full, by purge_garbage;
 * an index loaded again keeps the read counts of its leaves.  Removing
 * them here scanned the whole table (score_table_entries buckets) once per
 * index: a fifth of a DROP TABLE of 1,000 partitions, and part of every
 * CREATE INDEX.
 */
void
hi_wma_forget(int slotno, uint32 generation)
{
	if (nst != NULL)
		pg_atomic_fetch_add_u32(&wma_forgotten, 1);
}
