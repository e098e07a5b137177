/*
 * am_scan.c
 *	  What the index scans of every hybrid_index AM do alike: the scan
 *	  state's memory, copying scan keys on rescan, the query box of an
 *	  ORDER BY geom <-> q, handing kNN distances to the executor, and the
 *	  index tuple of index-only scans, and handing out an answer (a TID
 *	  list or a core's kNN search).  Turning scan keys into quals and
 *	  searching stay with each AM (rtam_scan.c, gridam_scan.c).
 *
 * Filter answers are exact: the index stores the float boxes PostGIS' box
 * operators compare and decides &&, ~=, ~ and @ with PostGIS' own
 * predicates (geom/geom_box_ops.c), as PostGIS' GiST support does, so TIDs
 * and bitmap pages go out without xs_recheck; hybrid_index.recheck = on
 * asks the executor to recheck anyway (a diagnostic).  kNN distances of
 * exact points are exact; others are lower bounds the executor rechecks
 * (xs_recheckorderby).  Index-only scans of a geometry(Point) column get
 * the points rebuilt from the entries (am_return.c).
 */
#include "postgres.h"

#include "access/relscan.h"
#include "nodes/tidbitmap.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "am/am_common.h"
#include "core/hi_core.h"

/*
 * ambeginscan: a scan whose opaque state (opaque_size bytes, starting with
 * an AmScanBase) is zeroed, with the index open.
 */
IndexScanDesc
am_beginscan(Relation index, int nkeys, int norderbys, Size opaque_size)
{
	IndexScanDesc scan = RelationGetIndexScan(index, nkeys, norderbys);
	AmScanBase *so;

	Assert(opaque_size >= sizeof(AmScanBase));
	/* rows this session inserted earlier are in the index before it is read */
	am_pending_insert_all();
	so = palloc0(opaque_size);

	/*
	 * The scan's own copy of the handle: a relcache invalidation between
	 * two calls (RelationReloadIndexInfo) frees rd_amcache, where the
	 * relation keeps its handle
	 */
	so->returning = -1;
	so->idx = palloc(sizeof(HiIndex));
	*so->idx = *hi_am_open(index);

	/*
	 * Blocks of 8 kB that do not grow: a query over 10,000 partitions
	 * holds every scan until its end, and a scan's search leaves about
	 * 2 kB in use.  Default blocks (8 kB, doubling) kept 24-72 kB per
	 * scan, 330 MB in all, fresh memory whose page faults were a tenth of
	 * the grids' search; with these, chunks over 2 kB (a bucket's entries,
	 * a visit list) are malloc'd alone and go back at pfree, for the next
	 * scan to reuse, and a rescan's small allocations fit the 8 kB block
	 * a reset keeps (1 kB blocks made a rescan-heavy kNN malloc anew).
	 */
	so->cxt = AllocSetContextCreate(CurrentMemoryContext, "hybrid_index scan",
									0, 8 * 1024, 8 * 1024);
	if (norderbys > 0)
	{
		scan->xs_orderbyvals = palloc0(sizeof(Datum) * norderbys);
		scan->xs_orderbynulls = palloc(sizeof(bool) * norderbys);
	}
	scan->opaque = so;
	return scan;
}

/* amrescan: the new scan keys and ORDER BY keys, if given; a new answer */
void
am_rescan(IndexScanDesc scan, ScanKey keys, int nkeys, ScanKey orderbys,
		  int norderbys)
{
	am_pending_insert_all();
	if (keys && scan->numberOfKeys > 0)
		memmove(scan->keyData, keys, scan->numberOfKeys * sizeof(ScanKeyData));
	if (orderbys && scan->numberOfOrderBys > 0)
		memmove(scan->orderByData, orderbys, scan->numberOfOrderBys * sizeof(ScanKeyData));
	am_scan_reset(scan);
	{
		HiIndex    *idx = ((AmScanBase *) scan->opaque)->idx;

		/* a new answer from a reloaded index: the copy follows it */
		if (!idx->sh->loaded || idx->sh->generation != idx->generation || idx->sh->needs_reload)
			*idx = *hi_am_open(scan->indexRelation);
	}
}

void
am_check_forward(IndexScanDesc scan, ScanDirection dir)
{
	if (dir != ForwardScanDirection)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("index \"%s\" only supports forward scans",
						RelationGetRelationName(scan->indexRelation))));
}

/*
 * The box of the first ORDER BY argument; true if it has none (NULL or
 * EMPTY geometry), when *box is all zeros and nothing has a distance.
 */
bool
am_orderby_box(IndexScanDesc scan, HiBox *box)
{
	ScanKey		ob = &scan->orderByData[0];

	memset(box, 0, sizeof(HiBox));
	if (ob->sk_flags & SK_ISNULL)
		return true;
	return hi_geom_box(ob->sk_argument, box) != HI_KEY_BOX;
}

/*
 * Tell the geom layer how the loaded PostGIS evaluates EMPTY geometries
 * under &&, ~, @ and ~= (hi_empty_box): PostGIS's own @ of the index's
 * operator class is asked once per backend whether 'POINT EMPTY' @
 * 'POINT(0 0)', true where EMPTY has the box-empty box (after 3.3) and false
 * where it has none.
 */
void
am_scan_empty_semantics(Relation index)
{
	static int	known = -1;

	if (known < 0)
	{
		Oid			type = index->rd_opcintype[0];
		Oid			op = get_opfamily_member(index->rd_opfamily[0], type, type,
											 AM_STRATEGY_WITHIN);
		Oid			typinput;
		Oid			typioparam;
		Datum		empty;
		Datum		point;

		if (!OidIsValid(op))
			elog(ERROR, "operator class of index \"%s\" has no operator @",
				 RelationGetRelationName(index));
		getTypeInputInfo(type, &typinput, &typioparam);
		empty = OidInputFunctionCall(typinput, "POINT EMPTY", typioparam, -1);
		point = OidInputFunctionCall(typinput, "POINT(0 0)", typioparam, -1);
		known = DatumGetBool(OidFunctionCall2(get_opcode(op), empty, point)) ? 1 : 0;
		hi_geom_set_empty_boxed(known == 1);
	}
}

/*
 * The ORDER BY value of the tuple returned: exact (a point's distance, or
 * any entry's in an index-only scan), or a box distance, a lower bound the
 * executor rechecks against the true distance.
 */
void
am_set_orderby(IndexScanDesc scan, double dist, bool isnull, bool exact)
{
	scan->xs_orderbyvals[0] = Float8GetDatum(dist);
	scan->xs_orderbynulls[0] = isnull;
	scan->xs_recheckorderby = !exact;
}

/*
 * The planner makes index-only scans of any index for queries that use no
 * column at all (SELECT count(*) FROM t), even where the column cannot be
 * returned (not a geometry(Point) column); such a scan wants an index
 * tuple, and reads none of its values.  Hand it one holding NULL, made
 * once per scan.
 */
void
am_set_null_itup(IndexScanDesc scan)
{
	AmScanBase *so = (AmScanBase *) scan->opaque;

	if (!scan->xs_want_itup)
		return;
	if (so->null_itup == NULL)
	{
		Datum		value = (Datum) 0;
		bool		isnull = true;
		MemoryContext old = MemoryContextSwitchTo(GetMemoryChunkContext(so));

		so->null_itup = index_form_tuple(RelationGetDescr(scan->indexRelation),
										 &value, &isnull);
		MemoryContextSwitchTo(old);
	}
	scan->xs_itup = so->null_itup;
	scan->xs_itupdesc = RelationGetDescr(scan->indexRelation);
}

/*
 * Forget the current answer (amrescan, and after amgetbitmap): end a kNN
 * search, free the scan's memory; the keys are prepared again next time.
 */
void
am_scan_reset(IndexScanDesc scan)
{
	AmScanBase *so = (AmScanBase *) scan->opaque;

	if (so->knn && so->knn_end)
		so->knn_end(so->knn);
	MemoryContextReset(so->cxt);
	so->prepared = false;
	so->no_results = false;
	so->items = NULL;
	so->rows = NULL;
	so->nitems = 0;
	so->tids = NULL;
	so->ntids = 0;
	so->pos = 0;
	so->knn = NULL;
	so->knn_next = NULL;
	so->knn_end = NULL;
}

/* The answer is a kNN search of the core, handed out by am_scan_next */
void
am_scan_set_knn(IndexScanDesc scan, void *knn, AmKnnNextFn next, AmKnnEndFn end)
{
	AmScanBase *so = (AmScanBase *) scan->opaque;

	so->knn = knn;
	so->knn_next = next;
	so->knn_end = end;
}

/*
 * amgettuple of every AM: on the first call after (re)scan, start turns the
 * keys into the core's quals and sets up the answer (a TID list, a kNN
 * search, or no_results); then each call hands out the next TID.
 */
bool
am_gettuple(IndexScanDesc scan, ScanDirection dir, void (*start) (IndexScanDesc scan))
{
	AmScanBase *so = (AmScanBase *) scan->opaque;
	MemoryContext old;
	bool		found;

	am_check_forward(scan, dir);
	old = MemoryContextSwitchTo(so->cxt);
	if (!so->prepared)
	{
		start(scan);
		so->prepared = true;
	}
	found = am_scan_next(scan);
	MemoryContextSwitchTo(old);
	return found;
}

/*
 * A range search's answer: TIDs, or an index-only scan's entries (whose
 * INCLUDE rows are looked up at once)
 */
void
am_scan_set_hits(IndexScanDesc scan, HiHits *hits)
{
	AmScanBase *so = (AmScanBase *) scan->opaque;

	so->items = hits->items;
	so->tids = hits->tids;
	if (hits->want_items)
		so->nitems = hits->n;
	else
		so->ntids = hits->n;
	am_scan_items_ready(scan);
}

/* Append n TIDs to the answer's TID list (in the scan's memory) */
void
am_tids_append(IndexScanDesc scan, ItemPointer tids, Size n)
{
	AmScanBase *so = (AmScanBase *) scan->opaque;

	if (n == 0)
		return;
	so->tids = so->tids ?
		repalloc_huge(so->tids, sizeof(ItemPointerData) * (so->ntids + n)) :
		MemoryContextAllocHuge(so->cxt, sizeof(ItemPointerData) * n);
	memcpy(so->tids + so->ntids, tids, sizeof(ItemPointerData) * n);
	so->ntids += n;
}

/* The answer's next TID, false at the end */
bool
am_scan_next(IndexScanDesc scan)
{
	AmScanBase *so = (AmScanBase *) scan->opaque;
	bool		found = false;
	HiKeyItem	item;
	const HiKeyItem *cur = NULL;	/* NULL: the value is in the heap */

	if (so->no_results)
		found = false;
	else if (so->knn)
	{
		double		dist;
		bool		isnull;
		bool		exact;

		found = so->knn_next(so->knn, &item, &dist, &isnull, &exact);
		if (found)
		{
			scan->xs_heaptid = item.tid;
			cur = &item;
			am_set_orderby(scan, dist, isnull, exact);
		}
	}
	else if (so->pos < so->nitems + so->ntids)
	{
		if (so->pos < so->nitems)
		{
			cur = &so->items[so->pos];
			scan->xs_heaptid = cur->tid;
		}
		else
			scan->xs_heaptid = so->tids[so->pos - so->nitems];
		so->pos++;
		found = true;
		/* rows of a TID list in an ordered scan are EMPTY: they sort last */
		if (scan->numberOfOrderBys > 0)
			am_set_orderby(scan, 0, true, true);
	}
	scan->xs_recheck = hi_recheck;
	if (found)
	{
		if (am_scan_returning(scan))
			am_set_itup(scan, cur,
						so->rows && cur && cur != &item ? so->rows[so->pos - 1] : NULL,
						cur == &item);
		else
			am_set_null_itup(scan);
	}
	return found;
}

/* amgetbitmap's TIDs into the bitmap (tbm NULL: the caller only counts) */
void
am_bitmap_add(TIDBitmap *tbm, ItemPointer tids, Size n)
{
	if (n > 0 && tbm != NULL)
		tbm_add_tuples(tbm, tids, (int) n, hi_recheck);
}

/* amendscan */
void
am_endscan(IndexScanDesc scan)
{
	AmScanBase *so = (AmScanBase *) scan->opaque;

	if (so->knn && so->knn_end)
		so->knn_end(so->knn);
	am_return_end(scan);
	MemoryContextDelete(so->cxt);
	pfree(so);
	scan->opaque = NULL;
}
