/*
 * am_include.c
 *	  INCLUDE columns of every AM: their values as a payload row (an index
 *	  tuple of the included columns, payload/payload.h) made at CREATE
 *	  INDEX and at each insert, removed by VACUUM, and looked up for the
 *	  rows an index-only scan returns.
 *
 * A row is keyed by the Z-order of its entry's centre and its TID
 * (payload.h), so the rows of a spatial search's answer share their pages.
 * A row larger than a quarter of the index's page is refused when it is
 * inserted, as B-tree refuses rows above a third of its page.  Builds of
 * an index with INCLUDE columns run without parallel workers: the rows are
 * sorted by key (PostgreSQL's tuplesort, within maintenance_work_mem) and
 * go to the tree in that order, packing its pages full.
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_operator_d.h"
#include "catalog/pg_type_d.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/tuplesort.h"

#include "am/am_common.h"
#include "core/hi_core.h"
#include "payload/payload.h"

int
am_include_natts(Relation index)
{
	return IndexRelationGetNumberOfAttributes(index) -
		IndexRelationGetNumberOfKeyAttributes(index);
}

/* the tuple descriptor of the payload rows: the INCLUDE columns */
TupleDesc
am_include_desc(Relation index)
{
	TupleDesc	desc = RelationGetDescr(index);
	int			nkey = IndexRelationGetNumberOfKeyAttributes(index);
	int			ninc = am_include_natts(index);
	TupleDesc	pd = CreateTemplateTupleDesc(ninc);
	int			i;

	for (i = 0; i < ninc; i++)
		TupleDescCopyEntry(pd, i + 1, desc, nkey + i + 1);
	return pd;
}

/* the payload row of a heap row's values (all the index's columns) */
static IndexTuple
form_row(Relation index, TupleDesc pd, Datum *values, bool *isnull, Size page_size)
{
	int			nkey = IndexRelationGetNumberOfKeyAttributes(index);
	IndexTuple	t = index_form_tuple(pd, values + nkey, isnull + nkey);
	Size		len = IndexTupleSize(t) - sizeof(ItemPointerData);

	if (len > PL_MAX_ROW(page_size))
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("INCLUDE values of %zu bytes exceed the maximum of %u for index \"%s\"",
						len, PL_MAX_ROW(page_size), RelationGetRelationName(index)),
				 errhint("Values larger than a quarter of the index's page (page_size %u) cannot be included; include fewer or smaller columns, or use a larger page_size.",
						 (unsigned) page_size)));
	return t;
}

static inline const char *
row_bytes(IndexTuple t, Size *len)
{
	*len = IndexTupleSize(t) - sizeof(ItemPointerData);
	return (const char *) t + sizeof(ItemPointerData);
}

/*
 * aminsert's part: the row's INCLUDE values as stored (palloc'd; *len
 * bytes), for am_insert_deferred to insert with the entry's batch
 */
char *
am_include_row(Relation index, Datum *values, bool *isnull, Size *len)
{
	HiIndex    *idx = hi_am_open(index);
	TupleDesc	pd = am_include_desc(index);
	IndexTuple	t = form_row(index, pd, values, isnull, idx->page_size);
	char	   *bytes;

	*len = IndexTupleSize(t) - sizeof(ItemPointerData);
	bytes = palloc(*len);
	memcpy(bytes, (char *) t + sizeof(ItemPointerData), *len);
	pfree(t);
	FreeTupleDesc(pd);
	return bytes;
}

/* the key of an entry's row (z 0 in a tree keyed by TID alone) */
static inline PlKey
item_key(const HiKeyItem *item, bool keyed_z)
{
	PlKey		k;

	k.z = keyed_z ? hi_key_zorder((HiKeyKind) item->kind, &item->key, item->flags) : 0;
	k.tid = item->tid;
	return k;
}

/*
 * The INCLUDE rows of n inserted heap rows, logged (a write per many) and
 * put into the index's tree under one hold of tree_lock
 */
void
am_include_insert_rows(HiIndex *idx, TransactionId xid, const HiKeyItem *items,
					   const char *const *rows, const Size *lens, int n)
{
	PlKey	   *keys;
	int			i;

	if (n == 0)
		return;
	keys = palloc(sizeof(PlKey) * n);
	for (i = 0; i < n; i++)
		keys[i] = item_key(&items[i], pl_keyed_z(idx));
	hi_lock_for_change(idx);
	if (!pl_enabled(idx))
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" has INCLUDE columns but no place for their values",
						hi_index_name(idx)),
				 errhint("REINDEX the index.")));
	pl_log_rows(idx, xid, keys, rows, lens, n);
	hi_change_touched(idx->sh);
	PG_TRY();
	{
		for (i = 0; i < n; i++)
			pl_insert(idx, &keys[i], rows[i], lens[i]);
	}
	PG_CATCH();
	{
		hi_change_failed(idx);
		PG_RE_THROW();
	}
	PG_END_TRY();
	idx->sh->changing = 0;
	/* under tree_lock: a checkpoint must not run beside other changes */
	hi_index_after_change(idx);
	LWLockRelease(&idx->sh->tree_lock);
	pfree(keys);
}

/* ambulkdelete's part: the rows of dead TIDs go too */
void
am_include_vacuum(HiIndex *idx, IndexBulkDeleteCallback callback, void *state)
{
	hi_lock_for_change(idx);
	if (pl_enabled(idx))
	{
		PG_TRY();
		{
			pl_bulk_delete(idx, callback, state);
		}
		PG_CATCH();
		{
			hi_change_failed(idx);
			PG_RE_THROW();
		}
		PG_END_TRY();
	}
	LWLockRelease(&idx->sh->tree_lock);
}

/* ---- CREATE INDEX: rows sorted by key, then loaded ---- */

/*
 * The sort's tuples: (z, TID, row) as (int8, int8, bytea), z with its top
 * bit flipped so that int8's order is z's unsigned order.
 */
#define Z_FLIP			(UINT64CONST(1) << 63)

struct AmIncludeSpool
{
	TupleDesc	pd;
	TupleDesc	sd;
	Tuplesortstate *sort;
	TupleTableSlot *slot;
	Size		page_size;
};

AmIncludeSpool *
am_include_spool_begin(Relation index, HiIndex *idx)
{
	AmIncludeSpool *s;
	AttrNumber	cols[2] = {1, 2};
	Oid			ops[2] = {Int8LessOperator, Int8LessOperator};
	Oid			colls[2] = {InvalidOid, InvalidOid};
	bool		nulls_first[2] = {false, false};

	if (am_include_natts(index) == 0)
		return NULL;
	s = palloc0(sizeof(AmIncludeSpool));
	s->pd = am_include_desc(index);
	s->sd = CreateTemplateTupleDesc(3);
	TupleDescInitEntry(s->sd, 1, "z", INT8OID, -1, 0);
	TupleDescInitEntry(s->sd, 2, "tid", INT8OID, -1, 0);
	TupleDescInitEntry(s->sd, 3, "row", BYTEAOID, -1, 0);
	s->sort = tuplesort_begin_heap(s->sd, 2, cols, ops, colls, nulls_first,
								   maintenance_work_mem, NULL, TUPLESORT_NONE);
	s->slot = MakeSingleTupleTableSlot(s->sd, &TTSOpsMinimalTuple);
	s->page_size = idx->page_size;
	return s;
}

void
am_include_spool_put(AmIncludeSpool *s, Relation index, ItemPointer tid, uint64 z,
					 Datum *values, bool *isnull)
{
	IndexTuple	t = form_row(index, s->pd, values, isnull, s->page_size);
	Size		len;
	const char *bytes = row_bytes(t, &len);
	bytea	   *b = palloc(VARHDRSZ + len);

	SET_VARSIZE(b, VARHDRSZ + len);
	memcpy(VARDATA(b), bytes, len);
	ExecClearTuple(s->slot);
	s->slot->tts_values[0] = Int64GetDatum((int64) (z ^ Z_FLIP));
	s->slot->tts_values[1] = Int64GetDatum(((int64) ItemPointerGetBlockNumber(tid) << 16) |
										   ItemPointerGetOffsetNumber(tid));
	s->slot->tts_values[2] = PointerGetDatum(b);
	memset(s->slot->tts_isnull, 0, sizeof(bool) * 3);
	ExecStoreVirtualTuple(s->slot);
	tuplesort_puttupleslot(s->sort, s->slot);
	ExecClearTuple(s->slot);
	pfree(b);
	pfree(t);
}

/* the tree made and filled (tree_lock held exclusively, before the build's checkpoint) */
void
am_include_spool_load(HiIndex *idx, AmIncludeSpool *s)
{
	MemoryContext rowcxt = AllocSetContextCreate(CurrentMemoryContext, "INCLUDE rows",
												 ALLOCSET_DEFAULT_SIZES);
	Size		i = 0;
	PlBulk		bulk;

	pl_create(idx);
	bulk.idx = idx;
	bulk.pinned = false;
	tuplesort_performsort(s->sort);
	for (;;)
	{
		MemoryContext old = MemoryContextSwitchTo(rowcxt);
		bool		isnull;
		int64		tidv;
		bytea	   *b;
		PlKey		key;

		if (!tuplesort_gettupleslot(s->sort, true, false, s->slot, NULL))
		{
			MemoryContextSwitchTo(old);
			break;
		}
		key.z = (uint64) DatumGetInt64(slot_getattr(s->slot, 1, &isnull)) ^ Z_FLIP;
		tidv = DatumGetInt64(slot_getattr(s->slot, 2, &isnull));
		ItemPointerSet(&key.tid, (BlockNumber) (tidv >> 16), (OffsetNumber) (tidv & 0xFFFF));
		b = DatumGetByteaPP(slot_getattr(s->slot, 3, &isnull));
		/* (form_row refused oversized rows; pl_insert checks again) */
		pl_bulk_put(&bulk, &key, VARDATA_ANY(b), VARSIZE_ANY_EXHDR(b));
		MemoryContextSwitchTo(old);
		MemoryContextReset(rowcxt);
		if ((++i & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	pl_bulk_end(&bulk);
	tuplesort_end(s->sort);
	ExecDropSingleTupleTableSlot(s->slot);
	MemoryContextDelete(rowcxt);
}

/* ---- index-only scans ---- */

static int
cmp_key(const void *a, const void *b)
{
	return pl_key_cmp((const PlKey *) a, (const PlKey *) b);
}

/* the rows of n sorted keys (NULL where none), under tree_lock shared */
static void
lookup_sorted(HiIndex *idx, const PlKey *keys, Size n, IndexTuple *rows)
{
	hi_lock_for_read(idx);
	if (pl_enabled(idx))
		pl_lookup_sorted(idx, keys, (int) n, rows);
	else
		memset(rows, 0, sizeof(IndexTuple) * n);
	LWLockRelease(&idx->sh->tree_lock);
}

/*
 * The payload rows of n answer entries (any order), rows[i] NULL where the
 * tree has none, looked up in key order: the rows of a window lie close
 * together there.  The keys are sorted by z with a radix sort (a
 * comparison sort was a tenth of a window query's time), then runs of
 * equal z by TID.  An entry the search did not keep (HI_KEY_UNKNOWN) is
 * looked up with z 0 (right for NULL and EMPTY entries; a box's row is
 * then not found and comes from the heap).  Takes tree_lock shared.
 */
void
am_include_lookup(HiIndex *idx, const HiKeyItem *items, Size n, IndexTuple *rows)
{
	uint64	   *z;
	uint32	   *pos;
	uint64	   *tmpz;
	uint32	   *tmppos;
	PlKey	   *keys;
	IndexTuple *sorted;
	bool		keyed_z = pl_keyed_z(idx);
	Size		i,
				run;

	if (n == 0)
		return;
	if (n == 1)
	{
		/* a kNN scan's row: no sort, nothing to allocate */
		PlKey		key = item_key(&items[0], keyed_z);

		lookup_sorted(idx, &key, 1, rows);
		return;
	}
	if (n > PG_UINT32_MAX)
		elog(ERROR, "too many rows to look up in index \"%s\"", hi_index_name(idx));
	z = palloc_extended(sizeof(uint64) * n, MCXT_ALLOC_HUGE);
	pos = palloc_extended(sizeof(uint32) * n, MCXT_ALLOC_HUGE);
	tmpz = palloc_extended(sizeof(uint64) * n, MCXT_ALLOC_HUGE);
	tmppos = palloc_extended(sizeof(uint32) * n, MCXT_ALLOC_HUGE);
	for (i = 0; i < n; i++)
	{
		z[i] = item_key(&items[i], keyed_z).z;
		pos[i] = (uint32) i;
	}
	if (hi_radix_sort(z, pos, n, tmpz, tmppos))
	{
		/* the result is in the scratch pair: swap the names */
		uint64	   *zs = z;
		uint32	   *ps = pos;

		z = tmpz;
		pos = tmppos;
		tmpz = zs;
		tmppos = ps;
	}
	keys = palloc_extended(sizeof(PlKey) * n, MCXT_ALLOC_HUGE);
	sorted = palloc_extended(sizeof(IndexTuple) * n, MCXT_ALLOC_HUGE);
	for (i = 0; i < n; i++)
	{
		keys[i].z = z[i];
		keys[i].tid = items[pos[i]].tid;
	}
	/* equal z (the same point, or every key of a tree keyed by TID): by TID */
	for (i = 0; i < n; i = run)
	{
		bool		ordered = true;

		for (run = i + 1; run < n && keys[run].z == keys[i].z; run++)
			if (ordered && pl_key_cmp(&keys[run - 1], &keys[run]) > 0)
				ordered = false;
		if (!ordered)
		{
			/* sort the run's keys and positions together */
			Size		k;
			struct
			{
				PlKey		key;
				uint32		pos;
			}		   *tmp = palloc(sizeof(*tmp) * (run - i));

			for (k = i; k < run; k++)
			{
				tmp[k - i].key = keys[k];
				tmp[k - i].pos = pos[k];
			}
			qsort(tmp, run - i, sizeof(*tmp), cmp_key);
			for (k = i; k < run; k++)
			{
				keys[k] = tmp[k - i].key;
				pos[k] = tmp[k - i].pos;
			}
			pfree(tmp);
		}
	}
	lookup_sorted(idx, keys, n, sorted);
	for (i = 0; i < n; i++)
		rows[pos[i]] = sorted[i];
	pfree(keys);
	pfree(sorted);
	pfree(z);
	pfree(pos);
	pfree(tmpz);
	pfree(tmppos);
}
