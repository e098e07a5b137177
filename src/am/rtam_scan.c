/*
 * rtam_scan.c
 *	  Index scans of the R-tree AMs: filter scans (amgettuple, amgetbitmap) and
 *	  kNN-ordered scans (ORDER BY geom <-> q).
 *
 * Filter scans compute their whole answer on the first call (see
 * rtree_search.c) and hand it out TID by TID (am_scan.c, which also says
 * what is rechecked).
 *
 * EMPTY geometries are answered as the loaded PostGIS evaluates them
 * (hi_empty_box).  Up to PostGIS 3.3 they match no box predicate, except
 * that EMPTY ~= EMPTY: a scan whose only quals are "~= EMPTY" returns the
 * EMPTY rows of the null list, so the index answers what a sequential scan
 * does (PostGIS's GiST index returns nothing there).  Later releases give
 * EMPTY the box-empty box: an EMPTY query is then that box, and the EMPTY
 * rows join the answer whenever they satisfy every qual.
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
	bool		empty_same;		/* only "~= EMPTY" quals: the EMPTY rows match */
	bool		empty_also;		/* the EMPTY rows match besides the tree's */
	RtQual	   *quals;
	int			nquals;
} HyrtreeScan;

IndexScanDesc
rtam_beginscan(Relation index, int nkeys, int norderbys)
{
	return am_beginscan(index, nkeys, norderbys, sizeof(HyrtreeScan));
}

/*
 * Turn scan keys into box quals; a NULL argument matches nothing, nor does
 * an EMPTY one where PostGIS gives EMPTY no box (but "~= EMPTY")
 */
static void
prepare(IndexScanDesc scan)
{
	HyrtreeScan *so = (HyrtreeScan *) scan->opaque;
	int			i;

	so->quals = palloc(sizeof(RtQual) * Max(scan->numberOfKeys, 1));
	so->nquals = 0;
	so->empty_same = false;
	so->empty_also = false;
	am_scan_empty_semantics(scan->indexRelation);
	for (i = 0; i < scan->numberOfKeys; i++)
	{
		ScanKey		key = &scan->keyData[i];
		RtQual	   *q = &so->quals[so->nquals];

		if (key->sk_flags & SK_ISNULL)
		{
			so->base.no_results = true;
			continue;
		}
		q->strategy = key->sk_strategy;
		if (hi_geom_box(key->sk_argument, &q->box) != HI_KEY_BOX)
		{
			if (hi_empty_box() != NULL)
				q->box = *hi_empty_box();
			else
			{
				if (q->strategy == RT_STRATEGY_SAME)
					so->empty_same = true;
				else
					so->base.no_results = true;
				continue;
			}
		}
		so->nquals++;
	}
	/* an entry cannot be EMPTY and satisfy a box qual at once */
	if (so->empty_same && so->nquals > 0)
		so->base.no_results = true;
	so->empty_also = !so->empty_same && rt_empty_consistent(so->quals, so->nquals);
	so->base.prepared = true;
}

static void
start_knn(IndexScanDesc scan)
{
	HyrtreeScan *so = (HyrtreeScan *) scan->opaque;
	HiBox		qbox;
	bool		qempty = am_orderby_box(scan, &qbox);

	am_scan_set_knn(scan, rt_knn_begin(so->base.idx, &qbox, qempty, so->quals, so->nquals,
									   am_knn_exact(scan)),
					(AmKnnNextFn) rt_knn_next, (AmKnnEndFn) rt_knn_end);
}

/* The answer of a scan, on its first amgettuple call */
static void
start_scan(IndexScanDesc scan)
{
	HyrtreeScan *so = (HyrtreeScan *) scan->opaque;

	prepare(scan);
	if (so->base.no_results)
		return;
	HI_COUNT_INDEX_SEARCH(scan);
	if (so->empty_same)
		rt_collect_nulls(so->base.idx, true, &so->base.tids, &so->base.ntids);
	else if (scan->numberOfOrderBys > 0)
		start_knn(scan);
	else
	{
		/*
		 * TIDs in heap order, except for a scan without quals (CLUSTER's):
		 * in the index's spatial order
		 */
		HiHits		hits;

		hi_hits_init(&hits, am_scan_returning(scan));
		rt_range_search(so->base.idx, so->quals, so->nquals,
						so->nquals > 0 ? RT_TIDS_HEAP : RT_TIDS_INDEX, &hits);
		am_scan_set_hits(scan, &hits);
		/* no quals at all: a full scan must return NULLs too */
		if (so->nquals == 0 || so->empty_also)
		{
			ItemPointer nulls;
			Size		nnulls;

			rt_collect_nulls(so->base.idx, so->empty_also, &nulls, &nnulls);
			am_tids_append(scan, nulls, nnulls);
		}
	}
}

bool
rtam_gettuple(IndexScanDesc scan, ScanDirection dir)
{
	return am_gettuple(scan, dir, start_scan);
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
	if (!so->base.no_results)
	{
		HI_COUNT_INDEX_SEARCH(scan);
		if (!so->empty_same)
		{
			HiHits		hits;

			hi_hits_init(&hits, false);
			rt_range_search(so->base.idx, so->quals, so->nquals, RT_TIDS_ANY, &hits);
			n = hits.n;
			am_bitmap_add(tbm, hits.tids, n);
		}
		if (so->nquals == 0 || so->empty_also)
		{
			Size		nnulls;

			rt_collect_nulls(so->base.idx, so->empty_same || so->empty_also, &tids, &nnulls);
			am_bitmap_add(tbm, tids, nnulls);
			n += nnulls;
		}
	}
	MemoryContextSwitchTo(old);
	am_scan_reset(scan);
	return (int64) n;
}
