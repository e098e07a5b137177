/*
 * am_include.c
 *	  INCLUDE columns of every AM: their values as a payload row (an index
 *	  tuple of the included columns, payload/payload.h) made at CREATE
 *	  INDEX and at each insert, removed by VACUUM, and looked up for the
 *	  rows an index-only scan returns.
 *
 * A row larger than a quarter of the index's page is refused when it is
 * inserted, as B-tree refuses rows above a third of its page.  Builds of
 * an index with INCLUDE columns run without parallel workers: the rows go
 * to the tree in heap order, packing its pages full.
 */
#include "postgres.h"

#include "access/xact.h"
#include "storage/buffile.h"
#include "utils/rel.h"

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

/*
 * The INCLUDE rows of n inserted heap rows, logged (a write per many) and
 * put into the index's tree under one hold of tree_lock
 */
void
am_include_insert_rows(HiIndex *idx, TransactionId xid, const ItemPointerData *tids,
					   const char *const *rows, const Size *lens, int n)
{
	int			i;

	if (n == 0)
		return;
	hi_lock_for_change(idx);
	if (!pl_enabled(idx))
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" has INCLUDE columns but no place for their values",
						hi_index_name(idx)),
				 errhint("REINDEX the index.")));
	pl_log_rows(idx, xid, tids, rows, lens, n);
	hi_change_touched(idx->sh);
	PG_TRY();
	{
		for (i = 0; i < n; i++)
		{
			ItemPointerData tid = tids[i];

			pl_insert(idx, &tid, rows[i], lens[i]);
		}
	}
	PG_CATCH();
	{
		hi_change_failed(idx);
		PG_RE_THROW();
	}
	PG_END_TRY();
	idx->sh->changing = 0;
	LWLockRelease(&idx->sh->tree_lock);
	hi_index_after_change(idx);
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

/* ---- CREATE INDEX: rows collected in a temporary file, then loaded ---- */

struct AmIncludeSpool
{
	TupleDesc	pd;
	BufFile    *file;
	Size		n;
	Size		page_size;
};

AmIncludeSpool *
am_include_spool_begin(Relation index, HiIndex *idx)
{
	AmIncludeSpool *s;

	if (am_include_natts(index) == 0)
		return NULL;
	s = palloc0(sizeof(AmIncludeSpool));
	s->pd = am_include_desc(index);
	s->file = BufFileCreateTemp(false);
	s->page_size = idx->page_size;
	return s;
}

void
am_include_spool_put(AmIncludeSpool *s, Relation index, ItemPointer tid,
					 Datum *values, bool *isnull)
{
	IndexTuple	t = form_row(index, s->pd, values, isnull, s->page_size);
	Size		len;
	const char *bytes = row_bytes(t, &len);
	uint32		len32 = (uint32) len;

	/* (PostgreSQL 15's BufFileWrite takes no const pointer) */
	BufFileWrite(s->file, tid, sizeof(ItemPointerData));
	BufFileWrite(s->file, &len32, sizeof(len32));
	BufFileWrite(s->file, unconstify(char *, bytes), len);
	s->n++;
	pfree(t);
}

static void
read_exact(BufFile *f, void *dst, Size len)
{
	if (BufFileRead(f, dst, len) != len)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not read the temporary file of INCLUDE rows: %m")));
}

/* the tree made and filled (tree_lock held exclusively, before the build's checkpoint) */
void
am_include_spool_load(HiIndex *idx, AmIncludeSpool *s)
{
	char	   *buf = palloc(PL_MAX_ROW(s->page_size) + 1);
	Size		i;

	pl_create(idx);
	if (BufFileSeek(s->file, 0, 0, SEEK_SET) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not rewind the temporary file of INCLUDE rows: %m")));
	for (i = 0; i < s->n; i++)
	{
		ItemPointerData tid;
		uint32		len;

		read_exact(s->file, &tid, sizeof(tid));
		read_exact(s->file, &len, sizeof(len));
		if (len > PL_MAX_ROW(s->page_size))
			elog(ERROR, "temporary file of INCLUDE rows holds a row of %u bytes", len);
		read_exact(s->file, buf, len);
		pl_insert(idx, &tid, buf, len);
		if ((i & 1023) == 1023)
			CHECK_FOR_INTERRUPTS();
	}
	BufFileClose(s->file);
	pfree(buf);
}

/* ---- index-only scans ---- */

typedef struct TidPos
{
	ItemPointerData tid;
	Size		pos;
} TidPos;

static int
cmp_tidpos(const void *a, const void *b)
{
	return ItemPointerCompare((ItemPointer) &((const TidPos *) a)->tid,
							  (ItemPointer) &((const TidPos *) b)->tid);
}

/*
 * The payload rows of n answer entries (any order), rows[i] NULL where the
 * tree has none.  Takes tree_lock shared.
 */
void
am_include_lookup(HiIndex *idx, const HiKeyItem *items, Size n, IndexTuple *rows)
{
	TidPos	   *tp;
	ItemPointerData *tids;
	IndexTuple *sorted;
	Size		i;

	if (n == 0)
		return;
	/* the answer of a range search comes sorted already */
	for (i = 1; i < n; i++)
		if (ItemPointerCompare((ItemPointer) &items[i - 1].tid, (ItemPointer) &items[i].tid) > 0)
			break;
	if (i == n)
	{
		tids = palloc_extended(sizeof(ItemPointerData) * n, MCXT_ALLOC_HUGE);
		for (i = 0; i < n; i++)
			tids[i] = items[i].tid;
		hi_lock_for_read(idx);
		if (pl_enabled(idx))
			pl_lookup_sorted(idx, tids, (int) n, rows);
		else
			memset(rows, 0, sizeof(IndexTuple) * n);
		LWLockRelease(&idx->sh->tree_lock);
		pfree(tids);
		return;
	}
	tp = palloc_extended(sizeof(TidPos) * n, MCXT_ALLOC_HUGE);
	for (i = 0; i < n; i++)
	{
		tp[i].tid = items[i].tid;
		tp[i].pos = i;
	}
	qsort(tp, n, sizeof(TidPos), cmp_tidpos);
	tids = palloc_extended(sizeof(ItemPointerData) * n, MCXT_ALLOC_HUGE);
	sorted = palloc_extended(sizeof(IndexTuple) * n, MCXT_ALLOC_HUGE);
	for (i = 0; i < n; i++)
		tids[i] = tp[i].tid;
	hi_lock_for_read(idx);
	if (pl_enabled(idx))
		pl_lookup_sorted(idx, tids, (int) n, sorted);
	else
		memset(sorted, 0, sizeof(IndexTuple) * n);
	LWLockRelease(&idx->sh->tree_lock);
	for (i = 0; i < n; i++)
		rows[tp[i].pos] = sorted[i];
	pfree(tp);
	pfree(tids);
	pfree(sorted);
}
