/*
 * am_scan.c
 *	  What the index scans of every hybrid_index AM do alike: the scan
 *	  state's memory, copying scan keys on rescan, the query box of an
 *	  ORDER BY geom <-> q, handing kNN distances to the executor, and the
 *	  index tuple of index-only scans.  Turning scan keys into quals and
 *	  searching stay with each AM (rtam_scan.c, gridam_scan.c).
 */
#include "postgres.h"

#include "access/relscan.h"
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
	so = palloc0(opaque_size);
	so->idx = hi_am_open(index);
	so->cxt = AllocSetContextCreate(CurrentMemoryContext, "hybrid_index scan",
									ALLOCSET_DEFAULT_SIZES);
	if (norderbys > 0)
	{
		scan->xs_orderbyvals = palloc0(sizeof(Datum) * norderbys);
		scan->xs_orderbynulls = palloc(sizeof(bool) * norderbys);
	}
	scan->opaque = so;
	return scan;
}

/* amrescan's new scan keys and ORDER BY keys, if given */
void
am_rescan_keys(IndexScanDesc scan, ScanKey keys, ScanKey orderbys)
{
	if (keys && scan->numberOfKeys > 0)
		memmove(scan->keyData, keys, scan->numberOfKeys * sizeof(ScanKeyData));
	if (orderbys && scan->numberOfOrderBys > 0)
		memmove(scan->orderByData, orderbys, scan->numberOfOrderBys * sizeof(ScanKeyData));
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
 * The ORDER BY value of the tuple returned: a box distance, a lower bound
 * the executor rechecks against the true distance.
 */
void
am_set_orderby(IndexScanDesc scan, double dist, bool isnull)
{
	scan->xs_orderbyvals[0] = Float8GetDatum(dist);
	scan->xs_orderbynulls[0] = isnull;
	scan->xs_recheckorderby = true;
}

/*
 * The planner makes index-only scans of any index for queries that use no
 * column at all (SELECT count(*) FROM t), even of an AM that cannot return
 * its column; such a scan wants an index tuple, and reads none of its
 * values.  Hand it one holding NULL (our entries keep boxes, not
 * geometries), made once per scan.
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

/* amendscan, after the AM has ended what its core keeps for the scan */
void
am_endscan(IndexScanDesc scan)
{
	AmScanBase *so = (AmScanBase *) scan->opaque;

	MemoryContextDelete(so->cxt);
	pfree(so);
	scan->opaque = NULL;
}
