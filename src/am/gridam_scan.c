/*
 * gridam_scan.c
 *	  Index scans of lbgrid: filter scans (amgettuple, amgetbitmap), group
 *	  queries through "geom op ANY(array)" (amsearcharray), and kNN-ordered
 *	  scans (ORDER BY geom <-> q).
 *
 * A filter scan computes its whole answer on the first call, under
 * tree_lock in shared mode, and hands it out TID by TID: no concurrent
 * split can make it miss or repeat a row.  Every TID is returned with
 * xs_recheck = hybrid_index.recheck (the index compares float boxes with
 * PostGIS's own predicates; rechecking also guards against an entry a
 * crash left behind).  kNN distances are lower bounds, rechecked and
 * reordered by the executor (grid_knn.c).
 *
 * NULL and EMPTY geometries are indexed in the null chain.  EMPTY ones
 * are answered as the loaded PostGIS evaluates them (hi_empty_box): up to
 * 3.3 they match no filter but ~= EMPTY (a scan "geom ~= 'POINT EMPTY'"
 * returns the EMPTY rows, as a sequential scan does); later releases give
 * EMPTY the box-empty box, which an EMPTY query then is too.
 */
#include "postgres.h"

#include "access/itup.h"
#include "access/relscan.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "utils/array.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "am/am_common.h"
#include "am/gridam.h"

typedef struct LbgridScan
{
	AmScanBase	base;			/* must be first */
	GridQuery	q;
} LbgridScan;

IndexScanDesc
lbgrid_beginscan(Relation index, int nkeys, int norderbys)
{
	return am_beginscan(index, nkeys, norderbys, sizeof(LbgridScan));
}

static void
set_qual(GridQual *q, int strategy, Datum value, bool isnull)
{
	q->strategy = strategy;
	q->isnull = isnull;
	q->empty = false;
	memset(&q->box, 0, sizeof(HiBox));
	if (!isnull)
		q->empty = hi_geom_box(value, &q->box) != HI_KEY_BOX;
	if (q->empty && hi_empty_box() != NULL)
	{
		q->box = *hi_empty_box();
		q->empty = false;
	}
}

/*
 * Scan keys to a grid query.  A key with an array argument (ANY) becomes
 * one element per array element; a key none of whose elements can match
 * anything (NULL, or EMPTY with an operator other than ~=) makes the scan
 * return nothing.
 */
static void
prepare(IndexScanDesc scan)
{
	LbgridScan *so = (LbgridScan *) scan->opaque;
	GridQuery  *q = &so->q;
	int			i;

	q->nkeys = scan->numberOfKeys;
	q->keys = palloc0(sizeof(GridKey) * Max(q->nkeys, 1));
	q->impossible = false;
	am_scan_empty_semantics(scan->indexRelation);
	for (i = 0; i < scan->numberOfKeys; i++)
	{
		ScanKey		key = &scan->keyData[i];
		GridKey    *k = &q->keys[i];
		bool		possible = false;
		int			j;

		if (key->sk_flags & SK_ISNULL)
		{
			q->impossible = true;
			k->nelems = 0;
			continue;
		}
		if (key->sk_flags & SK_SEARCHARRAY)
		{
			ArrayType  *arr = DatumGetArrayTypeP(key->sk_argument);
			int16		typlen;
			bool		typbyval;
			char		typalign;
			Datum	   *elems;
			bool	   *nulls;
			int			n;

			get_typlenbyvalalign(ARR_ELEMTYPE(arr), &typlen, &typbyval, &typalign);
			deconstruct_array(arr, ARR_ELEMTYPE(arr), typlen, typbyval, typalign,
							  &elems, &nulls, &n);
			k->nelems = n;
			k->elems = palloc(sizeof(GridQual) * Max(n, 1));
			for (j = 0; j < n; j++)
				set_qual(&k->elems[j], key->sk_strategy, elems[j], nulls[j]);
		}
		else
		{
			k->nelems = 1;
			k->elems = palloc(sizeof(GridQual));
			set_qual(&k->elems[0], key->sk_strategy, key->sk_argument, false);
		}
		for (j = 0; j < k->nelems; j++)
		{
			GridQual   *e = &k->elems[j];

			possible |= !e->isnull && (!e->empty || e->strategy == GRID_STRATEGY_SAME);
		}
		if (!possible)
			q->impossible = true;
	}
	so->base.prepared = true;
}

static void
start_knn(IndexScanDesc scan)
{
	LbgridScan *so = (LbgridScan *) scan->opaque;
	HiBox		qbox;
	bool		qempty = am_orderby_box(scan, &qbox);
	Grid	   *g;

	hi_lock_for_read(so->base.idx);
	g = grid_open(so->base.idx);
	am_scan_set_knn(scan, grid_knn_begin(g, &qbox, qempty, &so->q, am_knn_exact(scan)),
					(AmKnnNextFn) grid_knn_next, (AmKnnEndFn) grid_knn_end);
	LWLockRelease(&so->base.idx->sh->tree_lock);
}

/* The whole answer of a filter scan: TIDs, or entries (want_items) */
static void
search(LbgridScan *so, HiHits *hits, bool want_items)
{
	hi_hits_init(hits, want_items);
	hi_lock_for_read(so->base.idx);
	grid_search(grid_open(so->base.idx), &so->q, hits);
	LWLockRelease(&so->base.idx->sh->tree_lock);
}

/* The answer of a scan, on its first amgettuple call */
static void
start_scan(IndexScanDesc scan)
{
	LbgridScan *so = (LbgridScan *) scan->opaque;

	prepare(scan);
	so->base.no_results = so->q.impossible;
	if (so->base.no_results)
		return;
	HI_COUNT_INDEX_SEARCH(scan);
	if (scan->numberOfOrderBys > 0)
		start_knn(scan);
	else
	{
		HiHits		hits;

		search(so, &hits, am_scan_returning(scan));
		am_scan_set_hits(scan, &hits);
	}
}

bool
lbgrid_gettuple(IndexScanDesc scan, ScanDirection dir)
{
	return am_gettuple(scan, dir, start_scan);
}

/* amgetbitmap; tbm NULL: only count the TIDs (hybrid_index_probe) */
int64
lbgrid_getbitmap(IndexScanDesc scan, TIDBitmap *tbm)
{
	LbgridScan *so = (LbgridScan *) scan->opaque;
	MemoryContext old = MemoryContextSwitchTo(so->base.cxt);
	Size		n = 0;

	prepare(scan);
	if (!so->q.impossible)
	{
		HiHits		hits;

		HI_COUNT_INDEX_SEARCH(scan);
		search(so, &hits, false);
		n = hits.n;
		am_bitmap_add(tbm, hits.tids, n);
	}
	MemoryContextSwitchTo(old);
	am_scan_reset(scan);
	return (int64) n;
}
