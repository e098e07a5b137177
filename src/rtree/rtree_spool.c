/*
 * rtree_spool.c
 *	  The entries of one level of an STR bulk load, sorted by box centre.
 *
 * A spool of budget B keeps its entries in an array of at most B/2 bytes
 * and sorts it in memory, the fast path when a level fits.  It sorts
 * (centre, position) keys of 16 bytes with an inlined comparison and then
 * permutes the entries in place: 3.4 s of a 2M-point build went to qsort
 * moving whole entries through a comparison function.  The keys take
 * 16 bytes per entry, within the budget's other half.  The
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

/* an entry's sort key: its centre, then its position (a total order) */
typedef struct SpoolKey
{
	double		centre;
	Size		pos;
} SpoolKey;

static inline int
key_cmp(const SpoolKey *a, const SpoolKey *b)
{
	if (a->centre != b->centre)
		return a->centre < b->centre ? -1 : 1;
	return a->pos < b->pos ? -1 : (a->pos > b->pos ? 1 : 0);
}

#define ST_SORT sort_spool_keys
#define ST_ELEMENT_TYPE SpoolKey
#define ST_COMPARE(a, b) key_cmp(a, b)
#define ST_SCOPE static
#define ST_CHECK_FOR_INTERRUPTS
#define ST_DECLARE
#define ST_DEFINE
#include "lib/sort_template.h"

/* Sort the in-memory array by centre: keys first, then one permutation */
static void
sort_array(RtSpool *s)
{
	SpoolKey   *keys = palloc_extended(sizeof(SpoolKey) * Max(s->n, 1), MCXT_ALLOC_HUGE);
	char	   *tmp = palloc(s->esz);
	Size		i;

	for (i = 0; i < s->n; i++)
	{
		keys[i].centre = centre(s->arr + i * s->esz, s->dim);
		keys[i].pos = i;
	}
	sort_spool_keys(keys, s->n);

	/*
	 * Position i takes the entry at keys[i].pos; follow each cycle of the
	 * permutation once, marking each done position by pointing it at itself.
	 */
	for (i = 0; i < s->n; i++)
	{
		Size		j = i;

		if (keys[i].pos == i)
			continue;
		memcpy(tmp, s->arr + i * s->esz, s->esz);
		for (;;)
		{
			Size		k = keys[j].pos;

			keys[j].pos = j;
			if (k == i)
			{
				memcpy(s->arr + j * s->esz, tmp, s->esz);
				break;
			}
			memcpy(s->arr + j * s->esz, s->arr + k * s->esz, s->esz);
			j = k;
		}
	}
	pfree(tmp);
	pfree(keys);
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
