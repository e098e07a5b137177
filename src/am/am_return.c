/*
 * am_return.c
 *	  Exact points and index-only scans of every AM: which SRID a stored
 *	  point must have to be rebuilt from the index, and whether a column
 *	  can be returned.
 *
 * A geometry column's type modifier (PostGIS's typmod) packs the SRID in
 * bits 8..28 (two's complement, bit 28 the sign), the geometry type in
 * bits 2..7 and Z/M in bits 1/0; -1 means none.
 */
#include "postgres.h"

#include <float.h>
#include <math.h>

#include "access/genam.h"
#include "access/itup.h"
#include "access/relscan.h"
#include "access/tableam.h"
#include "executor/tuptable.h"
#include "fmgr.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "am/am_common.h"
#include "core/hi_core.h"

#define TYPMOD_SRID(t)	((((t) & 0x0FFFFF00) - ((t) & 0x10000000)) >> 8)
#define TYPMOD_TYPE(t)	(((t) & 0x000000FC) >> 2)
#define TYPMOD_Z(t)		(((t) & 0x00000002) >> 1)
#define TYPMOD_M(t)		((t) & 0x00000001)
#define TYPMOD_POINT	1

int32
am_point_srid(Relation index)
{
	int32		typmod = TupleDescAttr(RelationGetDescr(index), 0)->atttypmod;

	return typmod < 0 ? 0 : TYPMOD_SRID(typmod);
}

/*
 * Can the index return column attno?  A plain column (no expression) of
 * type geometry(Point[, srid]) without Z or M, in an index whose entries
 * keep exact points (format 2).  Indexes built before exact points do not
 * offer it: REINDEX them to get index-only scans.
 */
bool
am_canreturn(Relation index, int attno)
{
	int32		typmod;

	if (attno != 1 || index->rd_index->indkey.values[0] == 0)
		return false;
	typmod = TupleDescAttr(RelationGetDescr(index), 0)->atttypmod;
	if (typmod < 0 || TYPMOD_TYPE(typmod) != TYPMOD_POINT ||
		TYPMOD_Z(typmod) || TYPMOD_M(typmod))
		return false;
	return hi_index_format(index) >= HI_META_VERSION_POINTS;
}

/* What a scan needs to rebuild values and compute exact distances */
typedef struct AmReturn
{
	MemoryContext cxt;			/* the value returned last */
	MemoryContext distcxt;		/* one exact distance */
	int32		srid;
	AttrNumber	heap_attno;
	bool		returning;
	IndexFetchTableData *fetch; /* values the index cannot rebuild */
	TupleTableSlot *slot;
	HiKnnExact	exact;
	bool		qpoint;			/* the ORDER BY argument is a 2-D point */
	double		qx,
				qy;
	int32		qsrid;
	ScanKey		orderby;
} AmReturn;

static AmReturn *
get_ret(IndexScanDesc scan)
{
	AmScanBase *so = (AmScanBase *) scan->opaque;

	if (so->ret == NULL)
	{
		MemoryContext scancxt = GetMemoryChunkContext(so);
		AmReturn   *r = MemoryContextAllocZero(scancxt, sizeof(AmReturn));

		r->cxt = AllocSetContextCreate(scancxt, "hybrid_index returned value",
									   ALLOCSET_SMALL_SIZES);
		r->distcxt = AllocSetContextCreate(scancxt, "hybrid_index exact distance",
										   ALLOCSET_SMALL_SIZES);
		r->srid = am_point_srid(scan->indexRelation);
		r->heap_attno = scan->indexRelation->rd_index->indkey.values[0];
		r->returning = am_scan_returning(scan);
		so->ret = r;
	}
	return so->ret;
}

/* an index-only scan of a column we rebuild (decided at the first tuple) */
bool
am_scan_returning(IndexScanDesc scan)
{
	AmScanBase *so = (AmScanBase *) scan->opaque;

	if (so->returning < 0)
		so->returning = scan->xs_want_itup &&
			am_canreturn(scan->indexRelation, 1) ? 1 : 0;
	return so->returning == 1;
}

/*
 * The heap's value of the column for the row at tid, for entries the index
 * cannot rebuild (a point of another SRID or serialization, EMPTY, the
 * rows of a NULL list).  Any version of a HOT chain carries the indexed
 * value, so the root's is taken whatever the snapshot; the executor then
 * decides visibility as for every index-only scan.  A line pointer that is
 * gone has no visible version either: NULL, never looked at.
 */
static void
heap_value(IndexScanDesc scan, AmReturn *r, ItemPointer tid, Datum *value, bool *isnull)
{
	bool		call_again = false;
	bool		all_dead = false;

	if (r->fetch == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(GetMemoryChunkContext(r));

		r->fetch = table_index_fetch_begin(scan->heapRelation);
		r->slot = table_slot_create(scan->heapRelation, NULL);
		MemoryContextSwitchTo(old);
	}
	*isnull = true;
	if (table_index_fetch_tuple(r->fetch, tid, SnapshotAny, r->slot, &call_again,
								&all_dead))
	{
		Datum		v = slot_getattr(r->slot, r->heap_attno, isnull);

		if (!*isnull)
			*value = PointerGetDatum(PG_DETOAST_DATUM_COPY(v));
		ExecClearTuple(r->slot);
	}
}

/*
 * The index tuple of an index-only scan: the point rebuilt from an exact
 * canonical entry (byte for byte what PostGIS stored), NULL for a NULL
 * entry, else the heap's value.
 */
void
am_set_itup(IndexScanDesc scan, const HiKeyItem *item)
{
	AmReturn   *r = get_ret(scan);
	MemoryContext old;
	Datum		value = (Datum) 0;
	bool		isnull = false;

	MemoryContextReset(r->cxt);
	old = MemoryContextSwitchTo(r->cxt);
	if (item != NULL && item->kind == HI_KEY_NULL)
		isnull = true;
	else if (item != NULL && item->kind == HI_KEY_BOX && (item->flags & HI_ENT_CANON))
	{
		double		x,
					y;

		hi_point_get(&item->key, &x, &y);
		value = hi_point_datum(x, y, r->srid);
	}
	else
		heap_value(scan, r, &scan->xs_heaptid, &value, &isnull);
	scan->xs_itup = index_form_tuple(RelationGetDescr(scan->indexRelation),
									 &value, &isnull);
	scan->xs_itupdesc = RelationGetDescr(scan->indexRelation);
	MemoryContextSwitchTo(old);
}

/*
 * Exact distance of an entry (HiExactDistFn).  A canonical point and a
 * point query of the same SRID: hypot() of the differences, as PostGIS's
 * distance2d_pt_pt() computes ST_Distance (beyond FLT_MAX PostGIS gives
 * NULL: left to the recheck).  In an index-only scan every entry gets its
 * exact value from PostGIS's own <-> on the rebuilt (or heap) value, since
 * such a scan cannot recheck.  Runs under the core's tree_lock.
 */
static bool
exact_dist(void *arg, const HiKeyItem *it, double *d)
{
	AmReturn   *r = (AmReturn *) arg;
	MemoryContext old;
	Datum		value = (Datum) 0;
	bool		isnull = false;
	bool		ok = false;

	if (it->kind != HI_KEY_BOX)
		return false;
	if (r->qpoint && (it->flags & HI_ENT_CANON) && r->qsrid == r->srid)
	{
		double		x,
					y;

		hi_point_get(&it->key, &x, &y);
		*d = hypot(r->qx - x, r->qy - y);
		if (*d < FLT_MAX)
			return true;
	}
	if (!r->returning)
		return false;
	MemoryContextReset(r->distcxt);
	old = MemoryContextSwitchTo(r->distcxt);
	if (it->flags & HI_ENT_CANON)
	{
		double		x,
					y;

		hi_point_get(&it->key, &x, &y);
		value = hi_point_datum(x, y, r->srid);
	}
	else
	{
		IndexScanDesc scan = (IndexScanDesc) r->exact.arg2;
		ItemPointerData tid = it->tid;

		heap_value(scan, r, &tid, &value, &isnull);
	}
	if (!isnull)
	{
		LOCAL_FCINFO(fcinfo, 2);
		Datum		result;

		InitFunctionCallInfoData(*fcinfo, &r->orderby->sk_func, 2,
								 r->orderby->sk_collation, NULL, NULL);
		fcinfo->args[0].value = value;
		fcinfo->args[0].isnull = false;
		fcinfo->args[1].value = r->orderby->sk_argument;
		fcinfo->args[1].isnull = false;
		result = FunctionCallInvoke(fcinfo);
		if (!fcinfo->isnull)
		{
			*d = DatumGetFloat8(result);
			ok = true;
		}
	}
	MemoryContextSwitchTo(old);
	return ok;
}

/*
 * The exact distances of a kNN scan (rescan: the query may have changed),
 * or NULL when there are none to give.
 */
const HiKnnExact *
am_knn_exact(IndexScanDesc scan)
{
	AmReturn   *r = get_ret(scan);
	ScanKey		ob = &scan->orderByData[0];

	r->orderby = ob;
	r->qpoint = !(ob->sk_flags & SK_ISNULL) &&
		hi_geom_point(ob->sk_argument, &r->qx, &r->qy, &r->qsrid);
	r->exact.fn = exact_dist;
	r->exact.arg = r;
	r->exact.arg2 = scan;
	return (r->qpoint || r->returning) ? &r->exact : NULL;
}

void
am_return_end(IndexScanDesc scan)
{
	AmScanBase *so = (AmScanBase *) scan->opaque;
	AmReturn   *r = so->ret;

	if (r == NULL)
		return;
	if (r->fetch)
		table_index_fetch_end(r->fetch);
	if (r->slot)
		ExecDropSingleTupleTableSlot(r->slot);
	MemoryContextDelete(r->cxt);
	MemoryContextDelete(r->distcxt);
	pfree(r);
	so->ret = NULL;
}
