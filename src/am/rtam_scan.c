/*
 * rtam_scan.c
 *	  Index scans of the R-tree AMs: filter scans (amgettuple, amgetbitmap) and
 *	  kNN-ordered scans (ORDER BY geom <-> q).
 *
 * Filter scans compute their whole answer on the first call (see
 * rtree_search.c) and hand it out TID by TID.  Every TID is returned with
 * xs_recheck set (bitmap pages likewise): the index compares the same float
 * boxes PostGIS's box operators compare, so its answers are exact, but the
 * recheck also guards against any entry a crash could leave behind.  It
 * costs the executor one operator call per row; hybrid_index.recheck = off
 * drops it for experiments that compare raw index speed.  kNN distances are lower bounds and are
 * rechecked by the executor (xs_recheckorderby).
 *
 * EMPTY geometries match no box predicate, except that PostGIS says
 * EMPTY ~= EMPTY; a scan whose only quals are "~= EMPTY" returns the EMPTY
 * rows of the null list, so the index answers what a sequential scan does
 * (PostGIS's GiST index returns nothing there).
 */
#include "postgres.h"

#include "access/relscan.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "utils/memutils.h"

#include "am/am_common.h"
#include "am/rtam.h"
#include "rtree/rtree.h"

typedef struct HyrtreeScan
{
	AmScanBase	base;			/* must be first */
	bool		no_results;		/* a qual can never be true (NULL/EMPTY) */
	bool		empty_same;		/* only "~= EMPTY" quals: the EMPTY rows match */
	RtQual	   *quals;
	int			nquals;
	/* filter scans */
	ItemPointer tids;
	Size		ntids;
	Size		pos;
	/* kNN scans */
	RtKnnState *knn;
} HyrtreeScan;

IndexScanDesc
rtam_beginscan(Relation index, int nkeys, int norderbys)
{
	return am_beginscan(index, nkeys, norderbys, sizeof(HyrtreeScan));
}

void
rtam_rescan(IndexScanDesc scan, ScanKey keys, int nkeys, ScanKey orderbys,
			   int norderbys)
{
	HyrtreeScan *so = (HyrtreeScan *) scan->opaque;

	am_rescan_keys(scan, keys, orderbys);
	MemoryContextReset(so->base.cxt);
	so->base.prepared = false;
	so->no_results = false;
	so->tids = NULL;
	so->ntids = 0;
	so->pos = 0;
	so->knn = NULL;
}

/* Turn scan keys into box quals; a NULL or EMPTY argument matches nothing */
static void
prepare(IndexScanDesc scan)
{
	HyrtreeScan *so = (HyrtreeScan *) scan->opaque;
	int			i;

	so->quals = palloc(sizeof(RtQual) * Max(scan->numberOfKeys, 1));
	so->nquals = 0;
	so->empty_same = false;
	for (i = 0; i < scan->numberOfKeys; i++)
	{
		ScanKey		key = &scan->keyData[i];
		RtQual	   *q = &so->quals[so->nquals];

		if (key->sk_flags & SK_ISNULL)
		{
			so->no_results = true;
			continue;
		}
		q->strategy = key->sk_strategy;
		if (hi_geom_box(key->sk_argument, &q->box) != HI_KEY_BOX)
		{
			if (q->strategy == RT_STRATEGY_SAME)
				so->empty_same = true;
			else
				so->no_results = true;
			continue;
		}
		so->nquals++;
	}
	/* an entry cannot be EMPTY and satisfy a box qual at once */
	if (so->empty_same && so->nquals > 0)
		so->no_results = true;
	so->base.prepared = true;
}

static void
start_knn(IndexScanDesc scan)
{
	HyrtreeScan *so = (HyrtreeScan *) scan->opaque;
	HiBox		qbox;
	bool		qempty = am_orderby_box(scan, &qbox);

	so->knn = rt_knn_begin(so->base.idx, &qbox, qempty, so->quals, so->nquals);
}

bool
rtam_gettuple(IndexScanDesc scan, ScanDirection dir)
{
	HyrtreeScan *so = (HyrtreeScan *) scan->opaque;
	MemoryContext old;
	bool		found = false;

	am_check_forward(scan, dir);
	old = MemoryContextSwitchTo(so->base.cxt);
	if (!so->base.prepared)
	{
		prepare(scan);
		if (!so->no_results)
		{
			pgstat_count_index_scan(scan->indexRelation);
			if (so->empty_same)
				rt_collect_nulls(so->base.idx, true, &so->tids, &so->ntids);
			else if (scan->numberOfOrderBys > 0)
				start_knn(scan);
			else
			{
				so->tids = rt_range_search(so->base.idx, so->quals, so->nquals, true,
											   &so->ntids);
				/* no quals at all: a full scan must return NULLs too */
				if (so->nquals == 0)
				{
					ItemPointer nulls;
					Size		nnulls;

					rt_collect_nulls(so->base.idx, false, &nulls, &nnulls);
					if (nnulls > 0)
					{
						so->tids = so->tids ?
							repalloc_huge(so->tids, sizeof(ItemPointerData) * (so->ntids + nnulls)) :
							palloc_extended(sizeof(ItemPointerData) * nnulls, MCXT_ALLOC_HUGE);
						memcpy(so->tids + so->ntids, nulls, sizeof(ItemPointerData) * nnulls);
						so->ntids += nnulls;
					}
				}
			}
		}
	}

	if (so->no_results)
		found = false;
	else if (so->knn)
	{
		double		dist;
		bool		isnull;

		found = rt_knn_next(so->knn, &scan->xs_heaptid, &dist, &isnull);
		if (found)
			am_set_orderby(scan, dist, isnull);
	}
	else if (so->pos < so->ntids)
	{
		scan->xs_heaptid = so->tids[so->pos++];
		found = true;
		/* EMPTY rows: no distance, they sort last */
		if (scan->numberOfOrderBys > 0)
			am_set_orderby(scan, 0, true);
	}
	scan->xs_recheck = hi_recheck;
	if (found)
		am_set_null_itup(scan);
	MemoryContextSwitchTo(old);
	return found;
}

/* amgetbitmap; tbm NULL: only count the TIDs (hybrid_index_probe) */
int64
rtam_getbitmap(IndexScanDesc scan, TIDBitmap *tbm)
{
	HyrtreeScan *so = (HyrtreeScan *) scan->opaque;
	MemoryContext old = MemoryContextSwitchTo(so->base.cxt);
	ItemPointer tids;
	Size		n = 0;

	prepare(scan);
	if (!so->no_results)
	{
		pgstat_count_index_scan(scan->indexRelation);
		if (!so->empty_same)
		{
			tids = rt_range_search(so->base.idx, so->quals, so->nquals, false, &n);
			if (n > 0 && tbm != NULL)
				tbm_add_tuples(tbm, tids, (int) n, hi_recheck);
		}
		if (so->nquals == 0)
		{
			Size		nnulls;

			rt_collect_nulls(so->base.idx, so->empty_same, &tids, &nnulls);
			if (nnulls > 0 && tbm != NULL)
				tbm_add_tuples(tbm, tids, (int) nnulls, hi_recheck);
			n += nnulls;
		}
	}
	MemoryContextSwitchTo(old);
	MemoryContextReset(so->base.cxt);
	so->base.prepared = false;
	return (int64) n;
}

void
rtam_endscan(IndexScanDesc scan)
{
	HyrtreeScan *so = (HyrtreeScan *) scan->opaque;

	if (so->knn)
		rt_knn_end(so->knn);
	am_endscan(scan);
}
