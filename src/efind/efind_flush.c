/*
 * efind_flush.c
 *	  The flushing operation (Alg. 3, Goal 2) and the flush of the whole
 *	  write buffer at a checkpoint.
 *
 * Alg. 3, as run here when the write buffer exceeds its share of the
 * buffer (after a maintenance operation, Alg. 1 line 23):
 *	 1	take the p % oldest Write Buffer Table entries (by the logical time
 *		of their last modification; at least one flushing unit's worth);
 *	 2	filter them through the temporal control of writes (Alg. 4);
 *	 3	sort them by page id;
 *	 4	cut them into flushing units of s consecutive pages;
 *	 5-7 score every unit with the flushing policy and pick the best (the
 *		first of equals):
 *		  FP_m		= sum mod_count						(Eq. 4)
 *		  FP_mh		= sum mod_count * (h + 1)			(Eq. 5)
 *		  FP_mha	= FP_mh * alpha						(Eq. 6)
 *		  FP_mhao	= FP_mh * alpha * beta				(Eq. 7)
 *		where alpha is the unit's share of the modified area in the write
 *		buffer and beta its share of the overlapping modified area (see
 *		ef_wb_areas); a buffer without area (points only) gives weight 1;
 *	 9-11 retrieve the unit's current pages (Alg. 2);
 *	 13	write them in one batch (hi_store_write: copy-on-write into
 *		fresh slots, then the page table points at them), or, when the
 *		index shares the page cache (no buffer_size), hand them to it as
 *		dirty pages that eviction and the checkpoint write in batches, so
 *		that no insert waits for a device write while it holds the lock;
 *	 12	temporal control of reads (Alg. 5) for each written page -- after
 *		the write rather than before, so the read buffer never holds a
 *		version that a failed write did not store;
 *	 15	their ids enter WQ;
 *	 16	their entries leave the Write Buffer Table.
 * Line 14 (a FLUSH log record) has no counterpart: see efind_source.c.
 */
#include "postgres.h"

#include <math.h>

#include "miscadmin.h"
#include "utils/memutils.h"

#include "cache/page_cache.h"
#include "efind/efind.h"
#include "storage/storage.h"

typedef struct Cand
{
	uint32		pageno;
	uint64		stamp;
	EfWbEntry  *e;
	double		marea;
	double		oarea;
} Cand;

/* (stamp, page id): a total order, so the k oldest are one set */
static inline bool
older(const Cand *c, uint32 a, uint32 b)
{
	if (c[a].stamp != c[b].stamp)
		return c[a].stamp < c[b].stamp;
	return c[a].pageno < c[b].pageno;
}

static inline void
swap_u32(uint32 *a, uint32 *b)
{
	uint32		t = *a;

	*a = *b;
	*b = t;
}

/*
 * Put the indexes of the k oldest candidates first in ord[], in no
 * particular order (Hoare's selection, expected linear time).  A flush
 * runs after nearly every insertion once the write buffer is full; sorting
 * the whole Write Buffer Table by age there was most of an insertion's CPU.
 */
static void
select_oldest(const Cand *c, uint32 *ord, int n, int k)
{
	int			lo = 0,
				hi = n - 1;

	while (lo < hi)
	{
		int			mid = lo + (hi - lo) / 2;
		uint32		pivot;
		int			i = lo,
					j = hi;

		/* median of three as the pivot */
		if (older(c, ord[mid], ord[lo]))
			swap_u32(&ord[mid], &ord[lo]);
		if (older(c, ord[hi], ord[lo]))
			swap_u32(&ord[hi], &ord[lo]);
		if (older(c, ord[hi], ord[mid]))
			swap_u32(&ord[hi], &ord[mid]);
		pivot = ord[mid];
		while (i <= j)
		{
			while (older(c, ord[i], pivot))
				i++;
			while (older(c, pivot, ord[j]))
				j--;
			if (i <= j)
			{
				swap_u32(&ord[i], &ord[j]);
				i++;
				j--;
			}
		}
		/* [lo, j] before the pivot, [i, hi] after it */
		if (k - 1 <= j)
			hi = j;
		else if (k - 1 >= i)
			lo = i;
		else
			break;
	}
}

/* page id << 32 | index into the candidates: sorted as plain integers */
#define ST_SORT sort_keys
#define ST_ELEMENT_TYPE uint64
#define ST_COMPARE(a, b) (*(a) < *(b) ? -1 : (*(a) > *(b) ? 1 : 0))
#define ST_SCOPE static
#define ST_DECLARE
#define ST_DEFINE
#include "lib/sort_template.h"

/* The candidate of a page among the sorted keys (it is there) */
static const Cand *
find_cand(const Cand *cands, const uint64 *keys, int n, uint32 pageno)
{
	int			lo = 0,
				hi = n - 1;

	while (lo <= hi)
	{
		int			mid = lo + (hi - lo) / 2;
		uint32		p = (uint32) (keys[mid] >> 32);

		if (p == pageno)
			return &cands[(uint32) keys[mid]];
		if (p < pageno)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	elog(ERROR, "efind: page %u of a flushing unit is not a candidate", pageno);
	return NULL;
}

static int
cmp_u32(const void *a, const void *b)
{
	uint32		x = *(const uint32 *) a;
	uint32		y = *(const uint32 *) b;

	return x < y ? -1 : (x > y ? 1 : 0);
}

/*
 * The degree d of a flushing unit under a policy (Eq. 4-7).  marea and
 * oarea are the unit's pages' modified and overlapping modified areas;
 * the totals are over the whole write buffer.
 */
double
ef_flush_degree(int policy, const EfWbEntry *const *unit, int n,
				const double *marea, const double *oarea,
				double total_marea, double total_oarea,
				double *alpha, double *beta)
{
	double		m = 0,
				mh = 0,
				ua = 0,
				uo = 0;
	int			i;

	for (i = 0; i < n; i++)
	{
		m += unit[i]->mod_count;
		mh += (double) unit[i]->mod_count * (unit[i]->level + 1);
		if (marea)
			ua += marea[i];
		if (oarea)
			uo += oarea[i];
	}
	*alpha = total_marea > 0 ? ua / total_marea : 1.0;
	*beta = total_oarea > 0 ? uo / total_oarea : 1.0;
	switch (policy)
	{
		case EF_FP_M:
			return m;
		case EF_FP_MH:
			return mh;
		case EF_FP_MHA:
			return mh * *alpha;
		case EF_FP_MHAO:
			return mh * *alpha * *beta;
	}
	elog(ERROR, "unknown efind flushing policy %d", policy);
	return 0;
}

/* pages a flush assembles in buffers the backend keeps (write_pages) */
#define FLUSH_KEPT_PAGES 16

/*
 * Write the current versions of n pages in one batch, then Alg. 5 for each,
 * WQ, and free their Write Buffer Table entries.  Caller holds tree_lock
 * exclusively and no efind lock.
 */
static void
write_pages(Ef *ef, const uint32 *pagenos, int n)
{
	/*
	 * The first pages are assembled in buffers this backend keeps: once
	 * the write buffer is full a small flush follows nearly every
	 * insertion, and fresh buffers each time cost page faults (a tenth of
	 * a flush).  A larger batch (a checkpoint's) takes the rest from the
	 * flush's memory context.
	 */
	static char *kept[FLUSH_KEPT_PAGES];
	char	  **bufs = palloc(sizeof(char *) * n);
	int			i;

	for (i = 0; i < n; i++)
	{
		if (i >= FLUSH_KEPT_PAGES)
			bufs[i] = ef_alloc_page(CurrentMemoryContext, ef->st->page_size);
		else
		{
			if (kept[i] == NULL)
				kept[i] = ef_alloc_page(TopMemoryContext, hi_max_page_size);
			bufs[i] = kept[i];
		}
	}
	ef_retrieve(ef, pagenos, n, bufs, true);
	ef_retrieve_write(ef, pagenos, n, bufs);
	for (i = 0; i < n; i++)
		ef_tc_after_write(ef, pagenos[i], bufs[i]);
	LWLockAcquire(&ef->slot->wb_lock, LW_EXCLUSIVE);
	for (i = 0; i < n; i++)
	{
		ef_tc_note_write(ef, pagenos[i]);
		ef_wb_remove(ef, pagenos[i]);
	}
	LWLockRelease(&ef->slot->wb_lock);
}

/* A unit's place among the best ones: greater degree first, then earlier */
typedef struct UnitRank
{
	int			unit;
	double		degree;
} UnitRank;

static int
cmp_rank(const void *a, const void *b)
{
	const UnitRank *x = a;
	const UnitRank *y = b;

	if (x->degree != y->degree)
		return x->degree > y->degree ? -1 : 1;
	return x->unit - y->unit;
}

/*
 * Choose flushing units (lines 1-7): the max_units of greatest degree (the
 * paper's one when max_units is 1); wb_lock held exclusively.
 */
static uint32 *
choose_units(Ef *ef, int max_units, int *nchosen)
{
	EfindState *st = ef->st;
	EfLastFlush *last = &st->last;
	int			policy = st->cfg.flush_policy;
	int			s = st->cfg.flush_unit;
	bool		areas = policy == EF_FP_MHA || policy == EF_FP_MHAO;
	EfHashSlot *slots = efh_slots(ef->area, &st->wb);
	int			count = 0;
	Cand	   *cands = palloc(sizeof(Cand) * Max(st->wb.n, 1));
	uint32	   *pages;
	uint32	   *ord;
	uint64	   *keys;
	uint32	   *filtered;
	int			noldest,
				nfiltered;
	double		total_marea = 0,
				total_oarea = 0;
	int			best = -1;
	double		best_d = 0,
				best_alpha = 1,
				best_beta = 1,
				runner_up = -1;
	int			nunits;
	int			u,
				i;
	uint32	   *chosen;
	UnitRank   *ranks;
	const EfWbEntry **unit = palloc(sizeof(EfWbEntry *) * s);
	double	   *marea = palloc(sizeof(double) * s);
	double	   *oarea = palloc(sizeof(double) * s);

	for (i = 0; i < (int) st->wb.cap; i++)
	{
		if (slots[i].key == EF_NIL)
			continue;
		cands[count].pageno = slots[i].key;
		cands[count].e = (EfWbEntry *) dsa_get_address(ef->area, (dsa_pointer) slots[i].val);
		cands[count].stamp = cands[count].e->stamp;
		cands[count].marea = cands[count].oarea = 0;
		if (areas)
		{
			ef_wb_areas(ef, cands[count].e, &cands[count].marea, &cands[count].oarea);
			total_marea += cands[count].marea;
			total_oarea += cands[count].oarea;
		}
		count++;
	}
	*nchosen = 0;
	if (count == 0)
		return NULL;

	/*
	 * line 1: the p % oldest entries, at least one unit's worth; only
	 * they can be chosen, so only they are sorted, by page id (line 3),
	 * which is also how their entries are found below
	 */
	noldest = (int) ceil((double) count * st->cfg.flush_percent / 100.0);
	noldest = Min(count, Max(noldest, Min(s, count)));
	ord = palloc(sizeof(uint32) * count);
	for (i = 0; i < count; i++)
		ord[i] = i;
	if (noldest < count)
		select_oldest(cands, ord, count, noldest);
	keys = palloc(sizeof(uint64) * noldest);
	for (i = 0; i < noldest; i++)
		keys[i] = ((uint64) cands[ord[i]].pageno << 32) | ord[i];
	sort_keys(keys, noldest);
	pages = palloc(sizeof(uint32) * noldest);
	for (i = 0; i < noldest; i++)
		pages[i] = (uint32) (keys[i] >> 32);

	/* line 2: temporal control of writes */
	filtered = ef_tc_filter_writes(ef, pages, noldest, &nfiltered);

	/* line 3: by page id (the filter may reorder) */
	qsort(filtered, nfiltered, sizeof(uint32), cmp_u32);

	/* lines 4-7: flushing units of s pages, the one with the greatest degree */
	nunits = (nfiltered + s - 1) / s;
	ranks = palloc(sizeof(UnitRank) * Max(nunits, 1));
	for (u = 0; u < nunits; u++)
	{
		int			n = Min(s, nfiltered - u * s);
		double		d,
					alpha,
					beta;

		for (i = 0; i < n; i++)
		{
			const Cand *c = find_cand(cands, keys, noldest, filtered[u * s + i]);

			unit[i] = c->e;
			marea[i] = c->marea;
			oarea[i] = c->oarea;
		}
		d = ef_flush_degree(policy, unit, n, marea, oarea, total_marea, total_oarea,
							&alpha, &beta);
		ranks[u].unit = u;
		ranks[u].degree = d;
		if (best < 0 || d > best_d)
		{
			if (best >= 0)
				runner_up = Max(runner_up, best_d);
			best = u;
			best_d = d;
			best_alpha = alpha;
			best_beta = beta;
		}
		else
			runner_up = Max(runner_up, d);
	}

	*nchosen = Min(s, nfiltered - best * s);
	chosen = palloc(sizeof(uint32) * Max(nfiltered, 1));
	memcpy(chosen, filtered + best * s, sizeof(uint32) * *nchosen);
	if (max_units > 1 && nunits > 1)
	{
		/* the next best units, after the best (ranked as one pass would) */
		int			k = Min(max_units, nunits);

		qsort(ranks, nunits, sizeof(UnitRank), cmp_rank);
		for (u = 0; u < k; u++)
		{
			int			first = ranks[u].unit * s;
			int			n = Min(s, nfiltered - first);

			if (ranks[u].unit == best)
				continue;
			memcpy(chosen + *nchosen, filtered + first, sizeof(uint32) * n);
			*nchosen += n;
		}
	}

	/* what was chosen and why, for hybrid_index_inspect */
	memset(last, 0, sizeof(*last));
	last->policy = policy;
	last->entries = count;
	last->oldest = noldest;
	last->filtered = nfiltered;
	last->units = nunits;
	last->npages = Min(s, nfiltered - best * s);
	last->degree = best_d;
	last->runner_up = runner_up;
	last->alpha = best_alpha;
	last->beta = best_beta;
	last->total_marea = total_marea;
	last->total_oarea = total_oarea;
	for (i = 0; i < (int) last->npages && i < EF_LAST_FLUSH_SHOWN; i++)
	{
		const Cand *c = find_cand(cands, keys, noldest, chosen[i]);

		last->pages[i].pageno = c->pageno;
		last->pages[i].h = c->e->level;
		last->pages[i].mod_count = c->e->mod_count;
		last->pages[i].marea = c->marea;
		last->pages[i].oarea = c->oarea;
	}
	return chosen;
}

/*
 * Alg. 3 once, writing the max_units best units it ranks; returns the
 * number of pages written
 */
static int
flush_units(Ef *ef, int max_units)
{
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext, "efind flush",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(cxt);
	uint32	   *chosen;
	int			n;

	LWLockAcquire(&ef->slot->wb_lock, LW_EXCLUSIVE);
	chosen = choose_units(ef, max_units, &n);
	LWLockRelease(&ef->slot->wb_lock);
	if (n > 0)
	{
		/* several units: in batches the shared cache can take */
		int			limit = max_units > 1 ? hi_cache_batch_limit(ef->idx) : n;
		int			off;

		for (off = 0; off < n; off += limit)
			write_pages(ef, chosen + off, Min(limit, n - off));
		pg_atomic_fetch_add_u64(&ef->slot->c.flushes, 1);
		pg_atomic_fetch_add_u64(&ef->slot->c.flushed_pages, n);
	}
	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
	return n;
}

/* Alg. 3 once, as the paper runs it: one flushing unit */
int
ef_flush_once(Ef *ef)
{
	return flush_units(ef, 1);
}

/*
 * Alg. 1, line 23: flush while the write buffer exceeds its budget.  The
 * caller holds tree_lock exclusively and has finished its operation.
 *
 * With the paper's memory model (reloption buffer_size) one unit per run
 * of Alg. 3, as the paper does.  An index sharing the page cache differs
 * in two ways:
 *	- it writes the best eighth of the units one run ranks: once the buffer
 *	  is full a flush follows nearly every insertion, and ranking the whole
 *	  Write Buffer Table for 5 pages was most of an insertion's CPU (4x
 *	  GiST's per row).  The units are those a run ranks best, not quite the
 *	  ones successive runs would pick (removing a unit's pages moves the
 *	  later units' boundaries);
 *	- its buffer also counts as full when it holds modifications of more
 *	  pages than a quarter of the cache's frames: writing a page merges its
 *	  stored version (Alg. 2), and a buffer spread over more pages than the
 *	  cache keeps read nearly every page twice from the device, once when
 *	  an insertion chose it and again when it was flushed (1.7 device reads
 *	  per row into an index 11x an 8 MB cache, bench/insert_budget.sh).
 */
void
ef_flush_to_budget(Ef *ef)
{
	bool		shares_cache = ef_shares_cache(ef);
	uint32		max_pages = shares_cache ? Max(hi_cache_frames() / 4, 1) : UINT32_MAX;

	for (;;)
	{
		bool		over;
		int			units = 1;

		LWLockAcquire(&ef->slot->wb_lock, LW_SHARED);
		over = ef->st->wb_bytes > ef->st->write_budget || ef->st->wb.n > max_pages;
		if (shares_cache)
			units = Max(1, (int) (ef->st->wb.n / Max(ef->st->cfg.flush_unit, 1)) / 8);
		LWLockRelease(&ef->slot->wb_lock);
		if (!over || flush_units(ef, units) == 0)
			break;
		CHECK_FOR_INTERRUPTS();
	}
}

/*
 * A checkpoint (eFIND's log compaction): write every buffered page, in
 * page id order, in batches of hybrid_index.io_depth pages.
 */
void
ef_flush_all(Ef *ef)
{
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext, "efind checkpoint",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(cxt);
	EfHashSlot *slots;
	uint32	   *pages;
	int			n = 0;
	int			batch = Max(hi_io_depth, 1);
	int			start;
	uint32		i;

	LWLockAcquire(&ef->slot->wb_lock, LW_SHARED);
	pages = palloc(sizeof(uint32) * Max(ef->st->wb.n, 1));
	slots = efh_slots(ef->area, &ef->st->wb);
	for (i = 0; i < ef->st->wb.cap; i++)
		if (slots[i].key != EF_NIL)
			pages[n++] = slots[i].key;
	LWLockRelease(&ef->slot->wb_lock);
	qsort(pages, n, sizeof(uint32), cmp_u32);

	for (start = 0; start < n; start += batch)
	{
		MemoryContext bcxt = AllocSetContextCreate(cxt, "efind checkpoint batch",
												   ALLOCSET_DEFAULT_SIZES);

		MemoryContextSwitchTo(bcxt);
		write_pages(ef, pages + start, Min(batch, n - start));
		MemoryContextSwitchTo(cxt);
		MemoryContextDelete(bcxt);
	}
	pg_atomic_fetch_add_u64(&ef->slot->c.ckpt_flushes, 1);
	pg_atomic_fetch_add_u64(&ef->slot->c.ckpt_pages, n);
	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
}
