/*
 * hi_probe.c
 *	  Index-only probes: run one search on an index of a geometry column and
 *	  count the TIDs it returns, without fetching a heap tuple or rechecking
 *	  an operator.  They time the index alone, as FESTIval times the index
 *	  operations of the papers' experiments, where an SQL query adds the
 *	  executor's heap fetches and rechecks (the same for every index).
 *
 * They work for any index AM on geometry (ours, PostGIS's GiST, ...): the
 * operator is looked up in the opfamily of the index's first column by
 * strategy, as the planner would.  What is timed is the AM's search and
 * the TIDs it produces, not PostgreSQL's TIDBitmap (building, sorting and
 * iterating one costs more CPU than an index search that reads cached
 * pages, and would dilute the differences between indexes): our AMs'
 * amgetbitmap counts when given no bitmap; other AMs are counted through
 * amgettuple, which hands out the TIDs of their search one by one; an AM
 * without it (BRIN) goes through a bitmap, counted by iterating its exact
 * TIDs, and is refused if it answers with lossy pages.
 */
#include "postgres.h"

#include "access/amapi.h"
#include "access/genam.h"
#include "access/relation.h"
#include "access/relscan.h"
#include "access/stratnum.h"
#include "catalog/pg_class.h"
#include "miscadmin.h"
#include "nodes/tidbitmap.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "am/am_common.h"
#include "am/gridam.h"
#include "am/rtam.h"
#include "core/hi_core.h"

PG_FUNCTION_INFO_V1(hybrid_index_probe);
PG_FUNCTION_INFO_V1(hybrid_index_probe_knn);

/* the box strategies of PostGIS's 2-D opclasses (and ours) */
#define PROBE_STRATEGY_OVERLAP	3	/* && */
#define PROBE_STRATEGY_SAME		6	/* ~= */
#define PROBE_STRATEGY_CONTAINS 7	/* ~ */
#define PROBE_STRATEGY_WITHIN	8	/* @ */
#define PROBE_STRATEGY_DISTANCE 13	/* <-> (ORDER BY) */

static StrategyNumber
probe_strategy(const char *op)
{
	if (strcmp(op, "&&") == 0)
		return PROBE_STRATEGY_OVERLAP;
	if (strcmp(op, "~=") == 0)
		return PROBE_STRATEGY_SAME;
	if (strcmp(op, "~") == 0)
		return PROBE_STRATEGY_CONTAINS;
	if (strcmp(op, "@") == 0)
		return PROBE_STRATEGY_WITHIN;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("unknown probe operator \"%s\"", op),
			 errhint("Use &&, ~=, ~ or @.")));
	return InvalidStrategy;		/* keep the compiler quiet */
}

/*
 * Open an index whose first column is of the probe's geometry type; returns
 * the operator of the strategy in the column's opfamily and the heap (both
 * locked AccessShareLock).
 */
static Relation
probe_open(Oid indexoid, Oid geomtype, StrategyNumber strategy, const char *opname,
		   Relation *heap, Oid *opno)
{
	Relation	index;
	const char *name;
	Oid			opfamily;

	am_pending_insert_all();
	index = relation_open(indexoid, AccessShareLock);
	name = RelationGetRelationName(index);

	if (index->rd_rel->relkind != RELKIND_INDEX)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not an index", name)));
	opfamily = index->rd_opfamily[0];
	/* the stored key type may differ (GiST stores boxes): ask the opclass */
	if (index->rd_opcintype[0] != geomtype)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("index \"%s\" is not an index on a geometry column", name),
				 errdetail("Its first column's operator class is for type %s.",
						   format_type_be(index->rd_opcintype[0]))));
	*opno = get_opfamily_member(opfamily, geomtype, geomtype, strategy);
	if (!OidIsValid(*opno))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("operator class of index \"%s\" has no operator %s for geometry",
						name, opname)));
	*heap = relation_open(index->rd_index->indrelid, AccessShareLock);
	return index;
}

static void
probe_close(Relation index, Relation heap)
{
	relation_close(index, AccessShareLock);
	relation_close(heap, AccessShareLock);
}

/* TIDs an index scan returns, at most limit of them */
static int64
probe_count_tids(IndexScanDesc scan, int64 limit)
{
	int64		n = 0;

	while (n < limit && index_getnext_tid(scan, ForwardScanDirection) != NULL)
	{
		CHECK_FOR_INTERRUPTS();
		n++;
	}
	return n;
}

/* Count the exact TIDs of a bitmap; refuse lossy pages */
static int64
probe_count_bitmap(TIDBitmap *tbm, Relation index)
{
	int64		n = 0;

	if (!hi_tbm_count_exact(tbm, &n))
		ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("index \"%s\" returned lossy bitmap pages: the probe cannot count its TIDs",
							RelationGetRelationName(index)),
					 errhint("Raise work_mem if the bitmap outgrew it; lossy access methods such as BRIN cannot be probed.")));
	return n;
}

/*
 * hybrid_index_probe(index regclass, query geometry, op text) -> bigint
 *
 * The number of TIDs the index returns for "geom <op> query".
 */
static int64
probe_one(Oid indexoid, Datum query, const char *op, Oid geomtype)
{
	StrategyNumber strategy = probe_strategy(op);
	Relation	index;
	Relation	heap;
	Oid			opno;
	ScanKeyData key;
	IndexScanDesc scan;
	Snapshot	snapshot;
	int64		n = 0;

	index = probe_open(indexoid, geomtype, strategy, op, &heap, &opno);
	if (index->rd_indam->amgetbitmap == NULL && index->rd_indam->amgettuple == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("index \"%s\" supports neither bitmap nor tuple scans",
						RelationGetRelationName(index))));

	ScanKeyEntryInitialize(&key, 0, 1, strategy, geomtype,
						   index->rd_indcollation[0], get_opcode(opno), query);
	snapshot = RegisterSnapshot(GetActiveSnapshot());
	if (index->rd_indam->amgetbitmap == rtam_getbitmap ||
		index->rd_indam->amgetbitmap == lbgrid_getbitmap)
	{
		/* ours: the search's TIDs, counted without a bitmap */
		scan = hi_index_beginscan_bitmap(index, snapshot, 1);
		index_rescan(scan, &key, 1, NULL, 0);
		n = index->rd_indam->amgetbitmap(scan, NULL);
		index_endscan(scan);
	}
	else if (index->rd_indam->amgettuple != NULL)
	{
		scan = hi_index_beginscan(heap, index, snapshot, 1, 0);
		index_rescan(scan, &key, 1, NULL, 0);
		n = probe_count_tids(scan, PG_INT64_MAX);
		index_endscan(scan);
	}
	else
	{
		TIDBitmap  *tbm = tbm_create(work_mem * 1024L, NULL);

		scan = hi_index_beginscan_bitmap(index, snapshot, 1);
		index_rescan(scan, &key, 1, NULL, 0);
		(void) index_getbitmap(scan, tbm);
		index_endscan(scan);
		n = probe_count_bitmap(tbm, index);
		tbm_free(tbm);
	}
	UnregisterSnapshot(snapshot);
	probe_close(index, heap);
	return n;
}

/* A partitioned index: the sum over its partitions' indexes */
Datum
hybrid_index_probe(PG_FUNCTION_ARGS)
{
	Oid			indexoid = PG_GETARG_OID(0);
	Datum		query = PG_GETARG_DATUM(1);
	char	   *op = text_to_cstring(PG_GETARG_TEXT_PP(2));
	Oid			geomtype = get_fn_expr_argtype(fcinfo->flinfo, 1);
	ListCell   *lc;
	int64		n = 0;

	hi_acl_check_read(indexoid);
	foreach(lc, hi_index_leaves(indexoid))
		n += probe_one(lfirst_oid(lc), query, op, geomtype);
	PG_RETURN_INT64(n);
}

/*
 * hybrid_index_probe_knn(index regclass, point geometry, k int) -> bigint
 *
 * An ordered scan by "geom <-> point" that stops after k TIDs; returns how
 * many it got (fewer than k when the index holds fewer entries).  The AM's
 * order is taken as it comes: distances it marks for recheck are not
 * re-sorted, as no heap tuple is read.
 */
static int64
probe_knn_one(Oid indexoid, Datum point, int32 k, Oid geomtype)
{
	Relation	index;
	Relation	heap;
	Oid			opno;
	ScanKeyData orderby;
	IndexScanDesc scan;
	Snapshot	snapshot;
	int64		n = 0;

	index = probe_open(indexoid, geomtype, PROBE_STRATEGY_DISTANCE, "<->", &heap, &opno);
	if (!index->rd_indam->amcanorderbyop || index->rd_indam->amgettuple == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("index \"%s\" does not support ordered (kNN) scans",
						RelationGetRelationName(index))));

	ScanKeyEntryInitialize(&orderby, SK_ORDER_BY, 1, PROBE_STRATEGY_DISTANCE, geomtype,
						   index->rd_indcollation[0], get_opcode(opno), point);
	snapshot = RegisterSnapshot(GetActiveSnapshot());
	scan = hi_index_beginscan(heap, index, snapshot, 0, 1);
	index_rescan(scan, NULL, 0, &orderby, 1);
	n = probe_count_tids(scan, k);
	index_endscan(scan);
	UnregisterSnapshot(snapshot);
	probe_close(index, heap);
	return n;
}

/*
 * A partitioned index: as many TIDs as an ordered scan merging its
 * partitions' scans would give before stopping at k
 */
Datum
hybrid_index_probe_knn(PG_FUNCTION_ARGS)
{
	Oid			indexoid = PG_GETARG_OID(0);
	Datum		point = PG_GETARG_DATUM(1);
	int32		k = PG_GETARG_INT32(2);
	Oid			geomtype = get_fn_expr_argtype(fcinfo->flinfo, 1);
	ListCell   *lc;
	int64		n = 0;

	if (k < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("k must not be negative")));
	hi_acl_check_read(indexoid);
	foreach(lc, hi_index_leaves(indexoid))
		n += probe_knn_one(lfirst_oid(lc), point, k, geomtype);
	PG_RETURN_INT64(Min(n, (int64) k));
}
