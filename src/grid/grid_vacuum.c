/*
 * grid_vacuum.c
 *	  VACUUM's bulk delete over a grid index.
 *
 * The buckets are listed under tree_lock in shared mode, then processed a
 * group at a time under tree_lock held exclusively, so inserts and scans
 * run between groups.  If a split or merge moved entries meanwhile
 * (split_count), the pass starts over (what was removed stays removed);
 * after a few restarts the last pass holds the lock throughout.  Merges of
 * buckets left under the threshold wait until every bucket has been
 * visited: merging earlier could move entries of an unvisited bucket into
 * a visited one.  Every removal is logged, and the log is made durable
 * before ambulkdelete returns, since the heap reuses the TIDs right after.
 */
#include "postgres.h"

#include "commands/vacuum.h"
#include "miscadmin.h"

#include "grid/grid.h"
#include "grid/grid_int.h"
#include "log/redo_log.h"
#include "core/hi_core.h"

#define VACUUM_GROUP 32			/* buckets per exclusive-lock round */

typedef struct VacBucket
{
	uint32		id;
	double		x;				/* a point of its region, to find it again */
	double		y;
} VacBucket;

/* Every bucket with a point of its region (tree_lock held by the caller) */
static VacBucket *
list_buckets(Grid *g, int *nout)
{
	GridDirView rv;
	int			limit = gbuf_batch_limit(g, GRID_BUF_DIR);
	uint32	   *pages = palloc(sizeof(uint32) * limit);
	int		   *frames = palloc(sizeof(int) * limit);
	int			max = 256;
	VacBucket  *out = palloc(sizeof(VacBucket) * max);
	int			n = 0;
	int			i = 0;
	int			nr;

	grid_root(g, &rv);
	nr = rv.h->nr;
	while (i < nr)
	{
		int			np = 0;
		int			p;

		while (i < nr && np < limit)
		{
			grid_root(g, &rv);
			pages[np++] = rv.r[i++].ref;
		}
		gbuf_pin(g, GRID_BUF_DIR, pages, np, frames);
		for (p = 0; p < np; p++)
		{
			GridDirView dv;
			int			j;

			gdv_init(&dv, GRID_DIR_FLAT(gbuf_page(g, GRID_BUF_DIR, frames[p])));
			for (j = 0; j < dv.h->nr; j++)
			{
				double		lo[2],
							hi[2];

				if (n == max)
				{
					max *= 2;
					out = repalloc_huge(out, sizeof(VacBucket) * max);
				}
				gdv_region_box(&dv, j, lo, hi);
				out[n].id = dv.r[j].ref;
				out[n].x = lo[0];
				out[n].y = lo[1];
				n++;
			}
			gbuf_unpin(g, GRID_BUF_DIR, frames[p]);
		}
	}
	pfree(pages);
	pfree(frames);
	*nout = n;
	return out;
}

/*
 * Sub-directories whose buckets hold on average less than the merge
 * threshold, which merging could not fix, are repartitioned; the result
 * may then join a neighbour.
 */
static void
reorganise(Grid *g)
{
	int			si = 0;
	uint32		cap = (uint32) g->gs->capacity;
	GridDirView rv0;
	int			budget;

	if (g->merge_pct <= 0)
		return;
	grid_root(g, &rv0);
	budget = rv0.h->nr + 8;		/* each rebuild makes progress; bound it */
	while (budget > 0)
	{
		GridDirView rv;
		GridDirView dv;
		uint32		page;
		int			f;
		uint64		total = 0;
		int			nr;
		int			j;
		double		lo[2],
					hi[2];

		grid_root(g, &rv);
		if (si >= rv.h->nr)
			break;
		page = rv.r[si].ref;
		gdv_region_box(&rv, si, lo, hi);
		gbuf_pin(g, GRID_BUF_DIR, &page, 1, &f);
		gdv_init(&dv, GRID_DIR_FLAT(gbuf_page(g, GRID_BUF_DIR, f)));
		nr = dv.h->nr;
		for (j = 0; j < nr; j++)
			total += g->store->count(g, dv.r[j].ref);
		gbuf_unpin(g, GRID_BUF_DIR, f);
		if (nr > 1 && total * 100 < (uint64) nr * cap * g->merge_pct &&
			grid_rebuild_subdir(g, si))
		{
			/* the smaller directory may join a neighbour (regions move) */
			grid_try_merge(g, lo[0], lo[1]);
			si = 0;
			budget--;
			continue;
		}
		si++;
		CHECK_FOR_INTERRUPTS();
	}
}

/* What one VACUUM pass over the buckets keeps (hi_vacuum_pass) */
typedef struct GridVacuum
{
	GridVacuumFn fn;
	void	   *arg;
	double	   *removed;
	double	   *remaining;
	VacBucket  *bs;
	VacBucket  *low;			/* buckets under the merge threshold */
	int			nlow;
} GridVacuum;

static Size
vac_collect(HiIndex *idx, void *arg)
{
	GridVacuum *v = (GridVacuum *) arg;
	int			nb;

	v->bs = list_buckets(grid_open(idx), &nb);
	*v->remaining = 0;
	v->nlow = 0;
	v->low = v->low ? repalloc(v->low, sizeof(VacBucket) * Max(nb, 1)) :
		palloc(sizeof(VacBucket) * Max(nb, 1));
	return (Size) nb;
}

static void
vac_visit(HiIndex *idx, void *arg, Size start, Size end)
{
	GridVacuum *v = (GridVacuum *) arg;
	Grid	   *g = grid_open(idx);
	uint32		low_at = (uint32) g->gs->capacity * g->merge_pct / 100;
	Size		i;

	for (i = start; i < end; i++)
	{
		double		rm = 0,
					rem = 0;

		g->store->vacuum(g, v->bs[i].id, v->fn, v->arg, &rm, &rem);
		*v->removed += rm;
		*v->remaining += rem;
		/* under the threshold, now or since an earlier VACUUM */
		if (rem < low_at)
			v->low[v->nlow++] = v->bs[i];
	}
	grid_after_change(g);
	grid_note_applied(g);
}

static void
vac_end_pass(HiIndex *idx, void *arg)
{
	GridVacuum *v = (GridVacuum *) arg;

	pfree(v->bs);
	v->bs = NULL;
}

static const HiVacuumPass grid_vacuum_pass = {vac_collect, vac_visit, vac_end_pass};

void
grid_bulk_delete(HiIndex *idx, GridVacuumFn fn, void *arg,
				 double *removed, double *remaining)
{
	HiIndexShared *sh = idx->sh;
	GridVacuum	v;
	Grid	   *g;
	int			i;
	int			pass;

	*removed = 0;
	v.fn = fn;
	v.arg = arg;
	v.removed = removed;
	v.remaining = remaining;
	v.bs = NULL;
	v.low = NULL;
	v.nlow = 0;
	/* returns with tree_lock held exclusively */
	hi_vacuum_pass(idx, VACUUM_GROUP, &grid_vacuum_pass, &v);

	g = grid_open(idx);
	/* the chains outside the grid */
	if (g->gs->nulls != HI_INVALID_PAGE)
		gc_vacuum(g, g->gs->nulls, fn, arg, removed, remaining);
	if (g->gs->odd != HI_INVALID_PAGE)
		gc_vacuum(g, g->gs->odd, fn, arg, removed, remaining);
	/*
	 * Algorithm 3's merges, now that every bucket has been visited.  A merge
	 * can give a bucket tried earlier a buddy it did not have: a few passes.
	 */
	for (pass = 0; pass < 8; pass++)
	{
		uint64		before = g->gs->cnt.merges + g->gs->cnt.dir_merges;

		for (i = 0; i < v.nlow; i++)
		{
			grid_try_merge(g, v.low[i].x, v.low[i].y);
			CHECK_FOR_INTERRUPTS();
		}
		if (g->gs->cnt.merges + g->gs->cnt.dir_merges == before)
			break;
	}
	reorganise(g);
	/* VACUUM is maintenance: finish the pending compactions too */
	while (g->store->after_change && g->store->after_change(g))
		CHECK_FOR_INTERRUPTS();

	/* the heap reuses these TIDs as soon as we return */
	hi_log_flush_inserted(sh);
	grid_note_applied(g);
	hi_index_after_change(idx);
	LWLockRelease(&sh->tree_lock);
	if (v.low)
		pfree(v.low);
}
