/*
 * rtree_spool.c
 *	  The entries of one level of an STR bulk load, sorted by box centre.
 *
 * A spool is a sort of base/hi_runsort.c keyed by the bit pattern of the
 * centre's coordinate (hi_radix_key_double), within the spool's budget:
 * entries that fit are radix-sorted in memory and read through their
 * order; beyond the budget they go in sorted runs to temporary files,
 * merged as they are read.  Ties keep their order of arrival either way,
 * so a level sorts the same whether it spilled or not.  Until this, a
 * spool that outgrew its budget moved to tuplesort: 2M points with 64 MB
 * of maintenance_work_mem built in 1.64 s against 0.71 s in memory.
 */
#include "postgres.h"

#include "base/hi_base.h"
#include "rtree/rtree.h"

struct RtSpool
{
	int			dim;
	bool		leaf;			/* entries are RtLeafEntry (may be points) */
	HiRunSort  *sort;
};

/* an exact point sorts by its coordinate, a box by its centre */
static inline double
centre(const void *e, int dim, bool leaf)
{
	const HiBox *b = (const HiBox *) e;

	if (leaf && (((const RtLeafEntry *) e)->flags & HI_ENT_POINT))
	{
		double		x,
					y;

		hi_point_get(&((const RtLeafEntry *) e)->key, &x, &y);
		return dim == 0 ? x : y;
	}
	return dim == 0 ? ((double) b->xmin + (double) b->xmax) / 2 :
		((double) b->ymin + (double) b->ymax) / 2;
}

static uint64
centre_key(const void *e, void *arg)
{
	const RtSpool *s = (const RtSpool *) arg;

	return hi_radix_key_double(centre(e, s->dim, s->leaf));
}

/* expect: entries the caller expects, to size the array at once */
RtSpool *
rt_spool_begin(Size esz, int dim, Size budget, Size expect)
{
	RtSpool    *s = palloc0(sizeof(RtSpool));

	s->dim = dim;
	s->leaf = esz == sizeof(RtLeafEntry);
	s->sort = hi_runsort_begin(esz, budget, expect, centre_key, s);
	return s;
}

void
rt_spool_put(RtSpool *s, const void *e)
{
	hi_runsort_put(s->sort, e);
}

Size
rt_spool_count(const RtSpool *s)
{
	return hi_runsort_count(s->sort);
}

/* all entries are in: sort them */
void
rt_spool_sort(RtSpool *s)
{
	hi_runsort_sort(s->sort);
}

/* the next entry in order (the caller knows how many there are) */
void
rt_spool_get(RtSpool *s, void *e)
{
	if (!hi_runsort_get(s->sort, e))
		elog(ERROR, "R-tree bulk load read past the end of its spool");
}

/* no more entries will be put (runs may still be added): sort them now */
void
rt_spool_presort(RtSpool *s)
{
	hi_runsort_presort(s->sort);
}

/* s's runs go to the parallel build's shared file set (see hi_runsort_share.c) */
void
rt_spool_share(RtSpool *s, const HiLoadShared *files, const char *prefix)
{
	hi_runsort_share(s->sort, files, prefix);
}

/* a worker's spool: every entry to runs, their list to list */
Size
rt_spool_export(RtSpool *s, BufFile *list)
{
	return hi_runsort_export(s->sort, list);
}

/* the runs listed in list join s */
Size
rt_spool_import(RtSpool *s, const HiLoadShared *files, BufFile *list)
{
	return hi_runsort_import(s->sort, files, list);
}

/* the first n entries of s's order go to a helper, listed in list */
void
rt_spool_split(RtSpool *s, Size n, BufFile *list, const char *name)
{
	hi_runsort_split(s->sort, n, list, name);
}

void
rt_spool_end(RtSpool *s)
{
	hi_runsort_end(s->sort);
	pfree(s);
}
