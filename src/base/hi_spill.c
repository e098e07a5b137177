/*
 * hi_spill.c
 *	  Temporary storage of the bulk builds within a memory budget.
 *
 * HiSort carries records of up to 24 bytes through tuplesort: a minimal
 * tuple of one or two float8 sort keys and three int8 payload columns,
 * sorted with float8's btree order.  tuplesort keeps them in memory while
 * they fit in the budget and otherwise writes sorted runs to temporary
 * files and merges them, so a build sorts any number of entries in a fixed
 * amount of memory.  A record costs about 100 bytes of the budget in
 * memory (tuple, chunk header and SortTuple), 48 bytes on disk.
 *
 * HiSpillList keeps records in arrival order: in a growing array while the
 * array fits in its budget, then (array included) in a BufFile.
 */
#include "postgres.h"

#include <limits.h>

#include "access/tupdesc.h"
#include "catalog/pg_operator_d.h"
#include "catalog/pg_type_d.h"
#include "executor/tuptable.h"
#include "storage/buffile.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/tuplesort.h"

#include "base/hi_base.h"

#define SORT_KEYS_MAX	2
#define SORT_PAYLOAD	3		/* int8 columns after the keys */

struct HiSort
{
	Size		recsize;
	int			nkeys;
	TupleDesc	desc;
	TupleTableSlot *in;
	TupleTableSlot *out;
	Tuplesortstate *ts;
};

HiSort *
hi_sort_begin(Size recsize, int nkeys, Size budget)
{
	HiSort	   *s = palloc0(sizeof(HiSort));
	AttrNumber	att[SORT_KEYS_MAX];
	Oid			ops[SORT_KEYS_MAX];
	Oid			coll[SORT_KEYS_MAX];
	bool		nfirst[SORT_KEYS_MAX];
	int			i;

	Assert(recsize <= HI_SPILL_REC_MAX && nkeys >= 1 && nkeys <= SORT_KEYS_MAX);
	s->recsize = recsize;
	s->nkeys = nkeys;
	s->desc = CreateTemplateTupleDesc(nkeys + SORT_PAYLOAD);
	for (i = 0; i < nkeys; i++)
	{
		TupleDescInitEntry(s->desc, i + 1, NULL, FLOAT8OID, -1, 0);
		att[i] = i + 1;
		ops[i] = Float8LessOperator;
		coll[i] = InvalidOid;
		nfirst[i] = false;
	}
	for (i = 0; i < SORT_PAYLOAD; i++)
		TupleDescInitEntry(s->desc, nkeys + i + 1, NULL, INT8OID, -1, 0);
	HI_TUPLEDESC_FINALIZE(s->desc);
	s->in = MakeSingleTupleTableSlot(s->desc, &TTSOpsVirtual);
	s->out = MakeSingleTupleTableSlot(s->desc, &TTSOpsMinimalTuple);
	/* tuplesort's budget is in kB, at least 64 */
	s->ts = tuplesort_begin_heap(s->desc, nkeys, att, ops, coll, nfirst,
								 (int) Min(Max(budget / 1024, 64), (Size) MAX_KILOBYTES),
								 NULL, TUPLESORT_NONE);
	return s;
}

void
hi_sort_put(HiSort *s, const void *rec, double k1, double k2)
{
	TupleTableSlot *slot = s->in;
	int64		payload[SORT_PAYLOAD] = {0, 0, 0};
	int			i;

	memcpy(payload, rec, s->recsize);
	ExecClearTuple(slot);
	slot->tts_values[0] = Float8GetDatum(k1);
	if (s->nkeys > 1)
		slot->tts_values[1] = Float8GetDatum(k2);
	for (i = 0; i < SORT_PAYLOAD; i++)
		slot->tts_values[s->nkeys + i] = Int64GetDatum(payload[i]);
	memset(slot->tts_isnull, 0, sizeof(bool) * (s->nkeys + SORT_PAYLOAD));
	ExecStoreVirtualTuple(slot);
	tuplesort_puttupleslot(s->ts, slot);
}

/* all records are in: sort (the last run, then the merge if spilled) */
void
hi_sort_done(HiSort *s)
{
	tuplesort_performsort(s->ts);
}

/* the next record in key order; false at the end */
bool
hi_sort_get(HiSort *s, void *rec)
{
	int64		payload[SORT_PAYLOAD];
	int			i;

	if (!tuplesort_gettupleslot(s->ts, true, false, s->out, NULL))
		return false;
	slot_getallattrs(s->out);
	for (i = 0; i < SORT_PAYLOAD; i++)
		payload[i] = DatumGetInt64(s->out->tts_values[s->nkeys + i]);
	memcpy(rec, payload, s->recsize);
	return true;
}

void
hi_sort_end(HiSort *s)
{
	tuplesort_end(s->ts);
	ExecDropSingleTupleTableSlot(s->in);
	ExecDropSingleTupleTableSlot(s->out);
	FreeTupleDesc(s->desc);
	pfree(s);
}

struct HiSpillList
{
	Size		recsize;
	Size		maxrecs;		/* what the array may hold */
	char	   *arr;
	Size		alloc;			/* records allocated in arr */
	Size		n;
	Size		pos;			/* reading: next record */
	BufFile    *file;
};

HiSpillList *
hi_list_begin(Size recsize, Size budget)
{
	HiSpillList *l = palloc0(sizeof(HiSpillList));

	l->recsize = recsize;
	l->maxrecs = Max(budget / recsize, 16);
	return l;
}

/* would the next record move the list to its file? */
bool
hi_list_full(const HiSpillList *l)
{
	return l->file == NULL && l->n >= l->maxrecs;
}

void
hi_list_put(HiSpillList *l, const void *rec)
{
	if (l->file == NULL && l->n >= l->maxrecs)
	{
		l->file = BufFileCreateTemp(false);
		BufFileWrite(l->file, l->arr, l->recsize * l->n);
		pfree(l->arr);
		l->arr = NULL;
		l->alloc = 0;
	}
	if (l->file != NULL)
	{
		BufFileWrite(l->file, unconstify(void *, rec), l->recsize);
		l->n++;
		return;
	}
	if (l->n == l->alloc)
	{
		l->alloc = Min(Max(l->alloc * 2, 1024), l->maxrecs);
		l->arr = l->arr ? repalloc_huge(l->arr, l->recsize * l->alloc) :
			palloc_extended(l->recsize * l->alloc, MCXT_ALLOC_HUGE);
	}
	memcpy(l->arr + l->recsize * l->n++, rec, l->recsize);
}

Size
hi_list_count(const HiSpillList *l)
{
	return l->n;
}

bool
hi_list_spilled(const HiSpillList *l)
{
	return l->file != NULL;
}

/* the records, if they are still all in memory; NULL once spilled */
char *
hi_list_array(HiSpillList *l)
{
	return l->file == NULL ? l->arr : NULL;
}

/*
 * Keep the first n records of a list in memory, giving back the memory
 * of the rest
 */
void
hi_list_truncate(HiSpillList *l, Size n)
{
	Assert(l->file == NULL && n <= l->n);
	l->n = n;
	if (l->arr != NULL && n < l->alloc)
	{
		l->alloc = Max(n, 1);
		l->arr = repalloc_huge(l->arr, l->recsize * l->alloc);
	}
}

/*
 * Room for n more records at the end of an in-memory list, for the caller
 * to fill: their address, or NULL (nothing done) if the list would no
 * longer fit in memory
 */
char *
hi_list_extend(HiSpillList *l, Size n)
{
	char	   *p;

	if (l->file != NULL || l->n + n > l->maxrecs)
		return NULL;
	if (l->n + n > l->alloc)
	{
		l->alloc = Max(l->n + n, 1);
		l->arr = l->arr ? repalloc_huge(l->arr, l->recsize * l->alloc) :
			palloc_extended(l->recsize * l->alloc, MCXT_ALLOC_HUGE);
	}
	p = l->arr + l->recsize * l->n;
	l->n += n;
	return p;
}

/* start reading from the first record */
void
hi_list_rewind(HiSpillList *l)
{
	l->pos = 0;
	if (l->file != NULL && BufFileSeek(l->file, 0, 0, SEEK_SET) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not rewind temporary file of an index build: %m")));
}

bool
hi_list_next(HiSpillList *l, void *rec)
{
	if (l->pos >= l->n)
		return false;
	if (l->file == NULL)
		memcpy(rec, l->arr + l->recsize * l->pos, l->recsize);
	else if (BufFileRead(l->file, rec, l->recsize) != l->recsize)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not read temporary file of an index build: %m")));
	l->pos++;
	return true;
}

void
hi_list_end(HiSpillList *l)
{
	if (l->file != NULL)
		BufFileClose(l->file);
	if (l->arr != NULL)
		pfree(l->arr);
	pfree(l);
}
