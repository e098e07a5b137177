/*
 * rtree_knn.c
 *	  Best-first k-nearest-neighbour search (Hjaltason and Samet) for
 *	  ORDER BY geom <-> q.
 *
 * Pages and entries wait in a pairing heap by their box distance to the
 * query box, a lower bound of the true distance; the executor rechecks the
 * real distance and reorders, so the final order is exact for any geometry
 * type.  No lock or pin is held between calls.  If a page split happened
 * since the previous call (split_count moved), entries may have moved to
 * pages the heap does not know, so the search restarts from the root and
 * skips what it already returned: everything nearer than the last
 * distance, and the TIDs returned at exactly that distance.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/memutils.h"

#include "geom/geom_box.h"
#include "rtree/rtree.h"

typedef struct KnnItem
{
	pairingheap_node ph;
	double		dist;
	bool		is_tid;
	bool		exact;			/* dist is the true ORDER BY value */
	uint32		pageno;
	HiKeyItem	e;				/* the entry (is_tid) */
} KnnItem;

struct RtKnnState
{
	HiIndex    *idx;
	HiBox		query;
	bool		query_empty;
	HiKnnExact	exact;
	RtQual	   *quals;
	int			nquals;
	MemoryContext heapcxt;
	pairingheap *heap;
	bool		started;
	uint64		split_seen;
	HiKnnSeen	seen;			/* entries returned, to skip on restart */
	/* after the tree: entries without a distance */
	bool		tail_started;
	ItemPointer tail;
	Size		ntail;
	Size		tailpos;
};

static int
knn_cmp(const pairingheap_node *a, const pairingheap_node *b, void *arg)
{
	const KnnItem *ia = (const KnnItem *) a;
	const KnnItem *ib = (const KnnItem *) b;

	if (ia->dist < ib->dist)
		return 1;
	if (ia->dist > ib->dist)
		return -1;
	/* at equal distance, hand out entries before opening more pages */
	if (ia->is_tid != ib->is_tid)
		return ia->is_tid ? 1 : -1;
	return 0;
}

RtKnnState *
rt_knn_begin(HiIndex *idx, const HiBox *query, bool query_empty,
			 const RtQual *quals, int nquals, const HiKnnExact *exact)
{
	RtKnnState *st = palloc0(sizeof(RtKnnState));

	if (exact)
		st->exact = *exact;
	st->idx = idx;
	if (query)
		st->query = *query;
	st->query_empty = query_empty;
	st->nquals = nquals;
	st->quals = palloc(sizeof(RtQual) * Max(nquals, 1));
	memcpy(st->quals, quals, sizeof(RtQual) * nquals);
	st->heapcxt = AllocSetContextCreate(CurrentMemoryContext, "rtree knn",
										ALLOCSET_DEFAULT_SIZES);
	hi_knn_seen_init(&st->seen);
	return st;
}

static void
push(RtKnnState *st, double dist, uint32 pageno)
{
	KnnItem    *it = MemoryContextAlloc(st->heapcxt, sizeof(KnnItem));

	it->dist = dist;
	it->is_tid = false;
	it->exact = false;
	it->pageno = pageno;
	pairingheap_add(st->heap, &it->ph);
}

/* a leaf entry, at its exact distance if the AM gives one */
static void
push_entry(RtKnnState *st, const RtLeafEntry *e)
{
	KnnItem    *it = MemoryContextAlloc(st->heapcxt, sizeof(KnnItem));

	it->is_tid = true;
	it->pageno = HI_INVALID_PAGE;
	it->e.key = e->key;
	it->e.tid = e->tid;
	it->e.kind = e->kind;
	it->e.flags = e->flags;
	it->dist = hi_knn_entry_dist(&st->exact, &st->query, &it->e, &it->exact);
	pairingheap_add(st->heap, &it->ph);
}

static void
restart(RtKnnState *st)
{
	HiIndexShared *sh = st->idx->sh;

	MemoryContext old;

	MemoryContextReset(st->heapcxt);
	old = MemoryContextSwitchTo(st->heapcxt);
	st->heap = pairingheap_allocate(knn_cmp, NULL);
	MemoryContextSwitchTo(old);
	st->split_seen = pg_atomic_read_u64(&sh->split_count);
	push(st, 0, sh->meta.root);
	st->started = true;
}

/*
 * Next entry in distance order.  *isnull: the entry has no distance
 * (NULL or EMPTY geometry, or a NULL/EMPTY query) and sorts last.
 */
bool
rt_knn_next(RtKnnState *st, HiKeyItem *item, double *dist, bool *isnull, bool *exact)
{
	HiIndexShared *sh = st->idx->sh;

	if (!st->query_empty && !st->tail_started)
	{
		hi_lock_for_read(st->idx);
		if (!st->started || pg_atomic_read_u64(&sh->split_count) != st->split_seen)
			restart(st);
		while (!pairingheap_is_empty(st->heap))
		{
			KnnItem    *it = (KnnItem *) pairingheap_remove_first(st->heap);
			HiFrame		f;
			char	   *page;
			int			k;
			int			nent;

			if (it->is_tid)
			{
				if (hi_knn_seen(&st->seen, it->dist, &it->e.tid))
				{
					pfree(it);
					continue;
				}
				hi_knn_seen_add(&st->seen, it->dist, &it->e.tid);
				*item = it->e;
				*dist = it->dist;
				*isnull = false;
				*exact = it->exact;
				pfree(it);
				LWLockRelease(&sh->tree_lock);
				return true;
			}

			f = rt_read(st->idx, it->pageno);
			page = rt_data(st->idx, f);
			nent = RT_PAGE_HDR(page)->nentries;
			if (RT_PAGE_HDR(page)->level > 0)
			{
				RtInternalEntry *e = RT_INTERNAL(page);

				for (k = 0; k < nent; k++)
					if (rt_internal_consistent(st->quals, st->nquals, &e[k].box))
						push(st, hi_box_distance(&e[k].box, &st->query), e[k].child);
			}
			else
			{
				RtLeafEntry *e = RT_LEAF(page);

				for (k = 0; k < nent; k++)
				{
					HiBox		tmp;
					const HiBox *b = rt_leaf_box(&e[k], &tmp);

					if (rt_leaf_consistent(st->quals, st->nquals, b))
						push_entry(st, &e[k]);
				}
			}
			rt_release(st->idx, f);
			pfree(it);
			CHECK_FOR_INTERRUPTS();
		}
		LWLockRelease(&sh->tree_lock);
	}

	/* entries without a distance come last */
	if (!st->tail_started)
	{
		st->tail_started = true;
		if (st->query_empty)
		{
			/* no distance for anything: every qualifying entry, then NULLs */
			HiHits		hits;
			ItemPointer boxes;
			Size		nboxes;
			ItemPointer nulls = NULL;
			Size		nnulls = 0;

			hi_hits_init(&hits, false);
			rt_range_search(st->idx, st->quals, st->nquals, RT_TIDS_HEAP, &hits);
			boxes = hits.tids;
			nboxes = hits.n;
			if (st->nquals == 0 || rt_empty_consistent(st->quals, st->nquals))
				rt_collect_nulls(st->idx, st->nquals > 0, &nulls, &nnulls);
			st->ntail = nboxes + nnulls;
			st->tail = palloc_extended(sizeof(ItemPointerData) * Max(st->ntail, 1),
									   MCXT_ALLOC_HUGE);
			if (nboxes)
				memcpy(st->tail, boxes, sizeof(ItemPointerData) * nboxes);
			if (nnulls)
				memcpy(st->tail + nboxes, nulls, sizeof(ItemPointerData) * nnulls);
		}
		else if (st->nquals == 0 || rt_empty_consistent(st->quals, st->nquals))
			rt_collect_nulls(st->idx, st->nquals > 0, &st->tail, &st->ntail);
	}
	if (st->tailpos < st->ntail)
	{
		memset(item, 0, sizeof(HiKeyItem));
		item->kind = HI_KEY_UNKNOWN;
		item->tid = st->tail[st->tailpos++];
		*dist = 0;
		*isnull = true;
		*exact = true;
		return true;
	}
	return false;
}

void
rt_knn_end(RtKnnState *st)
{
	MemoryContextDelete(st->heapcxt);
}
