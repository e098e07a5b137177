/*
 * hi_heapcheck.c
 *	  hybrid_index_check(index, heapallindexed => true): every row the
 *	  table holds is in the index, as amcheck's heapallindexed verifies for
 *	  btree.  The structure checks (the AM's check callback) prove that the
 *	  index is consistent with itself; this proves it lacks no row.
 *
 * The index's entries are read with one ordered (kNN) scan, which returns
 * every entry, NULL and EMPTY ones included; their TIDs are sorted.  Then
 * the table is scanned as CREATE INDEX scans it (table_index_build_scan:
 * every tuple a build would index, HOT chains by their root, the partial
 * index's predicate applied) and each tuple's TID is looked up, and for an
 * index with INCLUDE columns its included values too, which must equal the
 * row's.  The table is locked in SHARE mode meanwhile, so no row can come
 * or go.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/relscan.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/index.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "am/am_common.h"
#include "core/hi_core.h"

#define HEAPCHECK_STRATEGY_DISTANCE 13	/* <-> */

typedef struct HeapCheckState
{
	Relation	index;
	HiIndex    *idx;
	int			nkey;
	int			ninc;
	TupleDesc	pd;				/* the INCLUDE columns */
	ItemPointerData *tids;		/* the index's entries, sorted */
	Size		ntids;
	double		checked;
} HeapCheckState;

static int
tid_cmp(const void *a, const void *b)
{
	return ItemPointerCompare((ItemPointer) a, (ItemPointer) b);
}

/* The TIDs of every entry of the index, sorted; *n of them */
static ItemPointerData *
index_tids(Relation heap, Relation index, Size *n)
{
	Oid			keytype = index->rd_opcintype[0];
	Oid			opno = get_opfamily_member(index->rd_opfamily[0], keytype, keytype,
										   HEAPCHECK_STRATEGY_DISTANCE);
	Oid			typinput;
	Oid			typioparam;
	Datum		origin;
	ScanKeyData orderby;
	IndexScanDesc scan;
	Snapshot	snapshot;
	ItemPointer tid;
	ItemPointerData *tids;
	Size		cap = 1024;

	if (!OidIsValid(opno) || !index->rd_indam->amcanorderbyop)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("index \"%s\" has no ordered scan to read its entries with",
						RelationGetRelationName(index))));
	getTypeInputInfo(keytype, &typinput, &typioparam);
	origin = OidInputFunctionCall(typinput, "POINT(0 0)", typioparam, -1);
	ScanKeyEntryInitialize(&orderby, SK_ORDER_BY, 1, HEAPCHECK_STRATEGY_DISTANCE, keytype,
						   index->rd_indcollation[0], get_opcode(opno), origin);

	tids = palloc(cap * sizeof(ItemPointerData));
	*n = 0;
	/* only TIDs are read, never the heap: any snapshot does */
	snapshot = RegisterSnapshot(GetTransactionSnapshot());
	scan = hi_index_beginscan(heap, index, snapshot, 0, 1);
	index_rescan(scan, NULL, 0, &orderby, 1);
	while ((tid = index_getnext_tid(scan, ForwardScanDirection)) != NULL)
	{
		if (*n == cap)
		{
			cap *= 2;
			tids = repalloc_huge(tids, cap * sizeof(ItemPointerData));
		}
		tids[(*n)++] = *tid;
		if ((*n & 4095) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	index_endscan(scan);
	UnregisterSnapshot(snapshot);
	qsort(tids, *n, sizeof(ItemPointerData), tid_cmp);
	return tids;
}

/* two values of a column, varlena ones compared detoasted */
static bool
same_value(Datum a, Datum b, Form_pg_attribute att)
{
	if (att->attlen == -1)
	{
		struct varlena *x = PG_DETOAST_DATUM_PACKED(a);
		struct varlena *y = PG_DETOAST_DATUM_PACKED(b);

		return VARSIZE_ANY_EXHDR(x) == VARSIZE_ANY_EXHDR(y) &&
			memcmp(VARDATA_ANY(x), VARDATA_ANY(y), VARSIZE_ANY_EXHDR(x)) == 0;
	}
	return datumIsEqual(a, b, att->attbyval, att->attlen);
}

/* the row's INCLUDE values as the index keeps them (payload/) */
static void
check_included(HeapCheckState *st, ItemPointer tid, Datum *values, bool *isnull)
{
	HiKeyItem	it;
	IndexTuple	row;
	int			j;

	/* the entry's key gives the row's (payload.h) */
	memset(&it, 0, sizeof(it));
	it.tid = *tid;
	it.kind = isnull[0] ? HI_KEY_NULL :
		hi_geom_key(values[0], am_point_srid(st->index), &it.key, &it.flags);
	am_include_lookup(st->idx, &it, 1, &row);
	if (row == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" lacks the INCLUDE values of the table row at (%u,%u)",
						RelationGetRelationName(st->index),
						ItemPointerGetBlockNumber(tid), ItemPointerGetOffsetNumber(tid)),
				 errhint("REINDEX INDEX %s.",
						 quote_identifier(RelationGetRelationName(st->index)))));
	for (j = 0; j < st->ninc; j++)
	{
		bool		n;
		Datum		d = index_getattr(row, j + 1, st->pd, &n);

		if (n != isnull[st->nkey + j] ||
			(!n && !same_value(d, values[st->nkey + j], TupleDescAttr(st->pd, j))))
			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("index \"%s\" holds other INCLUDE values than the table row at (%u,%u)",
							RelationGetRelationName(st->index),
							ItemPointerGetBlockNumber(tid), ItemPointerGetOffsetNumber(tid)),
					 errdetail("Column %d of the INCLUDE columns differs.", j + 1),
					 errhint("REINDEX INDEX %s.",
							 quote_identifier(RelationGetRelationName(st->index)))));
	}
	pfree(row);
}

static void
check_tuple(Relation index, ItemPointer tid, Datum *values, bool *isnull,
			bool tupleIsAlive, void *arg)
{
	HeapCheckState *st = (HeapCheckState *) arg;

	if (bsearch(tid, st->tids, st->ntids, sizeof(ItemPointerData), tid_cmp) == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" lacks the table row at (%u,%u)",
						RelationGetRelationName(st->index),
						ItemPointerGetBlockNumber(tid), ItemPointerGetOffsetNumber(tid)),
				 errdetail("The index has %zu entries; %.0f rows of the table were found in it before this one.",
						   st->ntids, st->checked),
				 errhint("REINDEX INDEX %s.",
						 quote_identifier(RelationGetRelationName(st->index)))));
	if (st->ninc > 0)
		check_included(st, tid, values, isnull);
	st->checked++;
}

/* ERROR on the first row of the table the index lacks (a leaf index) */
void
hi_check_heap_all_indexed(Oid indexoid)
{
	Oid			heapoid = IndexGetRelation(indexoid, false);
	Relation	heap;
	Relation	index;
	IndexInfo  *info;
	HeapCheckState st;

	/* the SHARE lock holds writers off: what LOCK TABLE asks for it */
	if (pg_class_aclmask(heapoid, GetUserId(), ACL_UPDATE | ACL_DELETE | ACL_TRUNCATE,
						 ACLMASK_ANY) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for table %s", get_rel_name(heapoid)),
				 errdetail("heapallindexed locks the table in SHARE mode, which needs UPDATE, DELETE or TRUNCATE on it.")));
	am_pending_insert_all();
	heap = table_open(heapoid, ShareLock);
	index = index_open(indexoid, AccessShareLock);
	info = BuildIndexInfo(index);

	st.index = index;
	st.checked = 0;
	st.nkey = IndexRelationGetNumberOfKeyAttributes(index);
	st.ninc = am_include_natts(index);
	st.pd = st.ninc > 0 ? am_include_desc(index) : NULL;
	st.idx = st.ninc > 0 ? hi_am_open(index) : NULL;
	st.tids = index_tids(heap, index, &st.ntids);
	(void) table_index_build_scan(heap, index, info, true, false, check_tuple, &st, NULL);
	pfree(st.tids);
	index_close(index, AccessShareLock);
	table_close(heap, ShareLock);
}
