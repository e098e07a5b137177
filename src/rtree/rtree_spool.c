/*
 * rtree_spool.c
 *	  The entries of one level of an STR bulk load, sorted by box centre.
 *
 * A spool of budget B keeps its entries in an array of at most B/2 bytes
 * and sorts it in memory, the fast path when a level fits.  It sorts
 * the entries' centres by radix and keeps the resulting order (3.4 s of
 * a 2M-point build went to qsort moving whole entries through a
 * comparison function).  The sort takes 24 bytes per entry while it runs
 * and the order 4 afterwards, within the budget's other half.  The
 * entry that would overflow the array moves the array into a tuplesort of
 * budget B/2 (sort key: the centre coordinate; see core/hi_spill.c) and
 * frees it, so the spool never holds more than B; tuplesort spills sorted
 * runs to temporary files past its half.
 */
#include "postgres.h"

#include "miscadmin.h"

#include "base/hi_base.h"
#include "rtree/rtree.h"

/* entries ahead of the reader that the gather prefetches */
#define RT_SPOOL_PREFETCH	16

struct RtSpool
{
	Size		esz;
	int			dim;
	Size		budget;
	char	   *arr;
	Size		alloc;			/* entries allocated in arr */
	Size		maxn;			/* entries arr may hold */
	Size		n;
	Size		pos;			/* next entry to return */
	uint32	   *order;			/* sorted: the array's positions in order */
	HiSort	   *sort;
};

static inline double
centre(const void *e, int dim)
{
	const HiBox *b = (const HiBox *) e;

	return dim == 0 ? ((double) b->xmin + (double) b->xmax) / 2 :
		((double) b->ymin + (double) b->ymax) / 2;
}

/*
 * Sort the in-memory array by centre, ties in arrival order, and keep only
 * the order (4 bytes per entry).  Readers gather the entries through it:
 * independent loads the CPU overlaps, where an in-place permutation
 * follows its cycles one dependent load at a time (12 % of a 5M-point
 * build went to that).  The sort is base/hi_radix.c's on the centres'
 * bit patterns: 30 % of a 5M-point build's backend time went to a
 * comparison sort.  It takes 24 bytes per entry while it runs.
 */
static void
sort_array(RtSpool *s)
{
	Size		n = Max(s->n, 1);
	uint64	   *key = palloc_extended(sizeof(uint64) * n, MCXT_ALLOC_HUGE);
	uint64	   *tmpkey = palloc_extended(sizeof(uint64) * n, MCXT_ALLOC_HUGE);
	uint32	   *val = palloc_extended(sizeof(uint32) * n, MCXT_ALLOC_HUGE);
	uint32	   *tmpval = palloc_extended(sizeof(uint32) * n, MCXT_ALLOC_HUGE);
	Size		i;

	if (s->order != NULL)
		pfree(s->order);
	for (i = 0; i < s->n; i++)
	{
		key[i] = hi_radix_key_double(centre(s->arr + i * s->esz, s->dim));
		val[i] = (uint32) i;
	}
	if (hi_radix_sort(key, val, s->n, tmpkey, tmpval))
	{
		s->order = tmpval;
		pfree(val);
	}
	else
	{
		s->order = val;
		pfree(tmpval);
	}
	pfree(key);
	pfree(tmpkey);
}

/* expect: entries the caller expects, to size the array at once */
RtSpool *
rt_spool_begin(Size esz, int dim, Size budget, Size expect)
{
	RtSpool    *s = palloc0(sizeof(RtSpool));

	Assert(esz <= HI_SPILL_REC_MAX);
	s->esz = esz;
	s->dim = dim;
	s->budget = budget;
	/* positions are kept as uint32 (sort_array) */
	s->maxn = Min(Max(budget / 2 / esz, 64), (Size) PG_UINT32_MAX);
	s->alloc = Min(Max(expect, 64), s->maxn);
	s->arr = palloc_extended(esz * s->alloc, MCXT_ALLOC_HUGE);
	return s;
}

static void
spill(RtSpool *s)
{
	Size		i;

	s->sort = hi_sort_begin(s->esz, 1, s->budget / 2);
	for (i = 0; i < s->n; i++)
	{
		const char *e = s->arr + i * s->esz;

		hi_sort_put(s->sort, e, centre(e, s->dim), 0);
	}
	pfree(s->arr);
	s->arr = NULL;
}

void
rt_spool_put(RtSpool *s, const void *e)
{
	if (s->sort == NULL && s->n == s->alloc)
	{
		if (s->alloc < s->maxn)
		{
			s->alloc = Min(s->alloc * 2, s->maxn);
			s->arr = repalloc_huge(s->arr, s->esz * s->alloc);
		}
		else
			spill(s);
	}
	if (s->sort != NULL)
		hi_sort_put(s->sort, e, centre(e, s->dim), 0);
	else
		memcpy(s->arr + s->esz * s->n, e, s->esz);
	s->n++;
}

Size
rt_spool_count(const RtSpool *s)
{
	return s->n;
}

bool
rt_spool_spilled(const RtSpool *s)
{
	return s->sort != NULL;
}

/* all entries are in: sort them */
void
rt_spool_sort(RtSpool *s)
{
	if (s->sort != NULL)
		hi_sort_done(s->sort);
	else
		sort_array(s);
	s->pos = 0;
}

/* the next entry in order (the caller knows how many there are) */
void
rt_spool_get(RtSpool *s, void *e)
{
	if (s->pos >= s->n)
		elog(ERROR, "R-tree bulk load read past the end of its spool");
	if (s->sort != NULL)
	{
		if (!hi_sort_get(s->sort, e))
			elog(ERROR, "R-tree bulk load lost entries in its sort");
	}
	else
	{
		const char *src;

		/* sort_array set the order: the array is never read unsorted */
		Assert(s->order != NULL);
		src = s->arr + s->esz * s->order[s->pos];

		/* the gather misses the CPU's caches: ask for an entry ahead */
		if (s->pos + RT_SPOOL_PREFETCH < s->n)
			__builtin_prefetch(s->arr + s->esz * s->order[s->pos + RT_SPOOL_PREFETCH]);

		/* the two entry sizes of a build, copied without a call */
		if (s->esz == sizeof(RtLeafEntry))
			memcpy(e, src, sizeof(RtLeafEntry));
		else if (s->esz == sizeof(RtInternalEntry))
			memcpy(e, src, sizeof(RtInternalEntry));
		else
			memcpy(e, src, s->esz);
	}
	s->pos++;
}

void
rt_spool_end(RtSpool *s)
{
	if (s->sort != NULL)
		hi_sort_end(s->sort);
	if (s->arr != NULL)
		pfree(s->arr);
	if (s->order != NULL)
		pfree(s->order);
	pfree(s);
}
