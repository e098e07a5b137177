/*
 * rtree_spool.c
 *	  The entries of one level of an STR bulk load, sorted by box centre.
 *
 * A spool of budget B keeps its entries in an array of at most B/2 bytes
 * and sorts it with qsort, the fast path when a level fits in memory.  The
 * entry that would overflow the array moves the array into a tuplesort of
 * budget B/2 (sort key: the centre coordinate; see core/hi_spill.c) and
 * frees it, so the spool never holds more than B; tuplesort spills sorted
 * runs to temporary files past its half.
 */
#include "postgres.h"

#include "miscadmin.h"

#include "base/hi_base.h"
#include "rtree/rtree.h"

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
	HiSort	   *sort;
};

static inline double
centre(const void *e, int dim)
{
	const HiBox *b = (const HiBox *) e;

	return dim == 0 ? ((double) b->xmin + (double) b->xmax) / 2 :
		((double) b->ymin + (double) b->ymax) / 2;
}

static int
cmp_x(const void *a, const void *b)
{
	double		ca = centre(a, 0);
	double		cb = centre(b, 0);

	return ca < cb ? -1 : (ca > cb ? 1 : 0);
}

static int
cmp_y(const void *a, const void *b)
{
	double		ca = centre(a, 1);
	double		cb = centre(b, 1);

	return ca < cb ? -1 : (ca > cb ? 1 : 0);
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
	s->maxn = Max(budget / 2 / esz, 64);
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
		qsort(s->arr, s->n, s->esz, s->dim == 0 ? cmp_x : cmp_y);
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
		memcpy(e, s->arr + s->esz * s->pos, s->esz);
	s->pos++;
}

void
rt_spool_end(RtSpool *s)
{
	if (s->sort != NULL)
		hi_sort_end(s->sort);
	if (s->arr != NULL)
		pfree(s->arr);
	pfree(s);
}
