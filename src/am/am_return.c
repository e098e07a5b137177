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
#include "utils/datum.h"
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

	/* INCLUDE columns: their rows keep the values (am_include.c) */
	if (attno > IndexRelationGetNumberOfKeyAttributes(index))
		return true;
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
	bool		returning;
	bool		ret_geom;		/* the geometry column is rebuilt */
	int			ninc;			/* INCLUDE columns */
	TupleDesc	pd;				/* their descriptor (payload rows) */
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
		MemoryContext old;

		r->cxt = AllocSetContextCreate(scancxt, "hybrid_index returned value",
									   ALLOCSET_SMALL_SIZES);
		r->distcxt = AllocSetContextCreate(scancxt, "hybrid_index exact distance",
										   ALLOCSET_SMALL_SIZES);
		old = MemoryContextSwitchTo(scancxt);

		r->srid = am_point_srid(scan->indexRelation);
		r->returning = am_scan_returning(scan);
		r->ret_geom = am_canreturn(scan->indexRelation, 1);
		r->ninc = am_include_natts(scan->indexRelation);
		if (r->ninc > 0)
			r->pd = am_include_desc(scan->indexRelation);
		MemoryContextSwitchTo(old);
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
	{
		so->returning = scan->xs_want_itup &&
			(am_canreturn(scan->indexRelation, 1) ||
			 am_include_natts(scan->indexRelation) > 0) ? 1 : 0;
		so->needed_known = so->returning == 1 &&
			am_needed_columns(RelationGetRelid(scan->indexRelation), &so->needed);
	}
	return so->returning == 1;
}

/*
 * The heap's values of the index's columns for the row at tid (want[i]:
 * column i is needed), for entries the index cannot rebuild (a point of
 * another SRID or serialization, EMPTY, the rows of a NULL list, an
 * INCLUDE row missing).  Any version of a HOT chain carries the indexed
 * values, so the root's are taken whatever the snapshot; the executor then
 * decides visibility as for every index-only scan.  A line pointer that is
 * gone has no visible version either: NULLs, never looked at.
 */
static void
heap_values(IndexScanDesc scan, AmReturn *r, ItemPointer tid, const bool *want,
			Datum *values, bool *isnull)
{
	Relation	index = scan->indexRelation;
	int			natts = RelationGetDescr(index)->natts;
	bool		call_again = false;
	bool		all_dead = false;
	bool		found;
	int			i;

	if (r->fetch == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(GetMemoryChunkContext(r));

		r->fetch = hi_index_fetch_begin(scan->heapRelation);
		r->slot = table_slot_create(scan->heapRelation, NULL);
		MemoryContextSwitchTo(old);
	}
	found = table_index_fetch_tuple(r->fetch, tid, SnapshotAny, r->slot, &call_again,
									&all_dead);
	for (i = 0; i < natts; i++)
	{
		Datum		v;

		if (!want[i])
			continue;
		isnull[i] = true;
		if (!found)
			continue;
		v = slot_getattr(r->slot, index->rd_index->indkey.values[i], &isnull[i]);
		if (!isnull[i])
		{
			Form_pg_attribute att = TupleDescAttr(RelationGetDescr(index), i);

			values[i] = att->attlen == -1 ?
				PointerGetDatum(PG_DETOAST_DATUM_COPY(v)) :
				datumCopy(v, att->attbyval, att->attlen);
		}
	}
	if (found)
		ExecClearTuple(r->slot);
}

/*
 * The index tuple of an index-only scan: the point rebuilt from an exact
 * canonical entry (byte for byte what PostGIS stored), NULL for a NULL
 * entry, the INCLUDE values from the entry's row (row, or looked up when
 * lookup), the heap's values for what the index cannot give.  A column
 * the index cannot return is NULL: the planner reads none of those.
 */
void
am_set_itup(IndexScanDesc scan, const HiKeyItem *item, IndexTuple row, bool lookup)
{
	AmReturn   *r = get_ret(scan);
	AmScanBase *so = (AmScanBase *) scan->opaque;
	TupleDesc	desc = RelationGetDescr(scan->indexRelation);
	int			natts = desc->natts;
	Datum		values[INDEX_MAX_KEYS];
	bool		isnull[INDEX_MAX_KEYS];
	bool		want[INDEX_MAX_KEYS];
	bool		any_heap = false;
	MemoryContext old;
	int			i;

	MemoryContextReset(r->cxt);
	old = MemoryContextSwitchTo(r->cxt);
	memset(want, 0, sizeof(want));
	for (i = 0; i < natts; i++)
	{
		values[i] = (Datum) 0;
		isnull[i] = true;
	}
	if (!r->ret_geom || (so->needed_known && !(so->needed & 1)))
		;						/* not read by the executor */
	else if (item != NULL && item->kind == HI_KEY_NULL)
		;
	else if (item != NULL && item->kind == HI_KEY_BOX && (item->flags & HI_ENT_CANON))
	{
		double		x,
					y;

		hi_point_get(&item->key, &x, &y);
		values[0] = hi_point_datum(x, y, r->srid);
		isnull[0] = false;
	}
	else
		want[0] = any_heap = true;
	if (r->ninc > 0 && (!so->needed_known || (so->needed >> 1) != 0))
	{
		if (row == NULL && lookup && item != NULL)
			am_include_lookup(so->idx, item, 1, &row);
		if (row != NULL)
			for (i = 0; i < r->ninc; i++)
				values[1 + i] = index_getattr(row, i + 1, r->pd, &isnull[1 + i]);
		else
		{
			for (i = 0; i < r->ninc; i++)
				want[1 + i] = true;
			any_heap = true;
		}
	}
	if (any_heap)
		heap_values(scan, r, &scan->xs_heaptid, want, values, isnull);
	scan->xs_itup = index_form_tuple(desc, values, isnull);
	scan->xs_itupdesc = desc;
	MemoryContextSwitchTo(old);
}

/*
 * After a range search of an index-only scan: the INCLUDE rows of its
 * entries, looked up in one pass in TID order.
 */
void
am_scan_items_ready(IndexScanDesc scan)
{
	AmScanBase *so = (AmScanBase *) scan->opaque;

	if (so->nitems == 0 || !am_scan_returning(scan) ||
		am_include_natts(scan->indexRelation) == 0 ||
		(so->needed_known && (so->needed >> 1) == 0))
		return;
	so->rows = palloc_extended(sizeof(IndexTuple) * so->nitems, MCXT_ALLOC_HUGE);
	am_include_lookup(so->idx, so->items, so->nitems, so->rows);
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
		bool		want[INDEX_MAX_KEYS];
		Datum		vals[INDEX_MAX_KEYS];
		bool		nulls[INDEX_MAX_KEYS];

		memset(want, 0, sizeof(want));
		want[0] = true;
		heap_values(scan, r, &tid, want, vals, nulls);
		value = vals[0];
		isnull = nulls[0];
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
