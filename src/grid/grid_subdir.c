/*
 * grid_subdir.c
 *	  Sub-directory splits and merges: the root level of the two-level Grid
 *	  File.  A sub-directory page that cannot take another bucket split is
 *	  cut in two along one of its boundaries, which becomes a boundary of
 *	  the root's scale if it is not one already; a sub-directory that has
 *	  shrunk below the merge threshold is joined with a neighbour whose
 *	  union with it is a box, and root boundaries no longer needed go
 *	  ("the merging procedure may be propagated up to the root directory").
 *
 * Both run with tree_lock held exclusively.
 */
#include "postgres.h"

#include "grid/grid.h"
#include "grid/grid_int.h"

typedef struct CutChoice
{
	int			dim;
	int			index;
	Size		cost;			/* flat size of the larger half */
	int			spanning;		/* regions across the cut */
} CutChoice;

/*
 * The cut that makes the larger half smallest, counting the regions that
 * cross it (their buckets are split) on both sides; fewer crossings break
 * ties.
 */
static CutChoice
choose_cut(const GridDir *d)
{
	CutChoice	best = {-1, -1, 0, 0};
	int			k;

	for (k = 0; k < 2; k++)
	{
		int			o = 1 - k;
		int			i;

		for (i = 1; i < d->n[k]; i++)
		{
			int			nl = 0,
						nr = 0,
						span = 0;
			int			j;
			Size		sl,
						sr,
						cost;

			for (j = 0; j < d->nr; j++)
			{
				if (d->r[j].hi[k] < i)
					nl++;
				else if (d->r[j].lo[k] >= i)
					nr++;
				else
					span++;
			}
			sl = k == GRID_X ? gd_flat_size(i, d->n[o], nl + span) :
				gd_flat_size(d->n[o], i, nl + span);
			sr = k == GRID_X ? gd_flat_size(d->n[k] - i, d->n[o], nr + span) :
				gd_flat_size(d->n[o], d->n[k] - i, nr + span);
			cost = Max(sl, sr);
			if (best.dim < 0 || cost < best.cost ||
				(cost == best.cost && span < best.spanning))
			{
				best.dim = k;
				best.index = i;
				best.cost = cost;
				best.spanning = span;
			}
		}
	}
	return best;
}

/*
 * Split the regions of d that cross boundary i of dim, splitting their
 * buckets (their entries are read in one group read).
 */
static void
split_crossing(Grid *g, GridDir *d, int dim, int i)
{
	double		v = d->s[dim][i];
	int		   *which = palloc(sizeof(int) * d->nr);
	uint32	   *bs = palloc(sizeof(uint32) * d->nr);
	GridBucketData *bd;
	int			n = 0;
	int			j;

	for (j = 0; j < d->nr; j++)
		if (d->r[j].lo[dim] < i && d->r[j].hi[dim] >= i)
		{
			which[n] = j;
			bs[n++] = d->r[j].ref;
		}
	if (n == 0)
		return;
	bd = palloc(sizeof(GridBucketData) * n);
	g->store->load(g, bs, n, bd);
	for (j = 0; j < n; j++)
	{
		GridItem   *it = grid_items(bd[j].e, bd[j].n);
		GridEntry  *lo = palloc(sizeof(GridEntry) * Max(bd[j].n, 1));
		GridEntry  *hi = palloc(sizeof(GridEntry) * Max(bd[j].n, 1));
		int			nlo,
					nhi;
		int			ni = gd_split_region(d, which[j], dim, i);
		uint32		nb = g->store->create(g);

		grid_divide(it, bd[j].n, dim, v, lo, &nlo, d->r[which[j]].reach,
					hi, &nhi, d->r[ni].reach);
		d->r[ni].ref = nb;
		g->store->replace(g, bs[j], lo, nlo);
		g->store->replace(g, nb, hi, nhi);
		g->gs->cnt.splits++;
		pfree(it);
		pfree(lo);
		pfree(hi);
	}
}

static void
dir_reach(const GridDir *d, float4 *reach)
{
	int			j;

	reach[0] = reach[1] = 0;
	for (j = 0; j < d->nr; j++)
	{
		reach[0] = Max(reach[0], d->r[j].reach[0]);
		reach[1] = Max(reach[1], d->r[j].reach[1]);
	}
}

/*
 * Split the sub-directory of root region si in two.  Returns the root
 * region of the new (upper) half.
 */
int
grid_split_subdir(Grid *g, int si)
{
	GridDirView rv;
	GridDir    *root;
	GridDir    *d;
	GridDir    *upper;
	CutChoice	cut;
	uint32		page;
	uint32		newpage;
	int			f;
	int			nf;
	int			j;
	int			s2;
	double		v;

	hi_change_touched(g->sh);
	grid_root(g, &rv);
	page = rv.r[si].ref;
	root = gd_decode((char *) rv.h);
	gbuf_pin(g, GRID_BUF_DIR, &page, 1, &f);
	d = gd_decode(GRID_DIR_FLAT(gbuf_page(g, GRID_BUF_DIR, f)));
	cut = choose_cut(d);
	if (cut.dim < 0)
		elog(ERROR, "grid sub-directory %u cannot be split", page);
	v = d->s[cut.dim][cut.index];

	/* the cut becomes a boundary of the root's scale (if not already) */
	j = gd_boundary_index(root, cut.dim, v);
	if (j < 0)
		j = gd_insert_boundary(root, cut.dim, v);
	Assert(root->r[si].lo[cut.dim] < j && root->r[si].hi[cut.dim] >= j);
	s2 = gd_split_region(root, si, cut.dim, j);

	split_crossing(g, d, cut.dim, cut.index);
	upper = gd_cut(d, cut.dim, cut.index);
	if (gd_size(d) > (Size) grid_dir_capacity(g) ||
		gd_size(upper) > (Size) grid_dir_capacity(g))
		elog(ERROR, "grid sub-directory split of page %u does not fit", page);

	newpage = grid_page_alloc(g);
	nf = gbuf_new(g, GRID_BUF_DIR, newpage, 1, GRID_PAGE_DIR);
	gd_encode(d, GRID_DIR_FLAT(gbuf_page(g, GRID_BUF_DIR, f)));
	gd_encode(upper, GRID_DIR_FLAT(gbuf_page(g, GRID_BUF_DIR, nf)));
	((HiPageHeader *) gbuf_page(g, GRID_BUF_DIR, f))->nentries = d->nr;
	((HiPageHeader *) gbuf_page(g, GRID_BUF_DIR, nf))->nentries = upper->nr;
	gbuf_dirty(g, GRID_BUF_DIR, f);
	gbuf_unpin(g, GRID_BUF_DIR, nf);
	gbuf_unpin(g, GRID_BUF_DIR, f);

	dir_reach(d, root->r[si].reach);
	root->r[s2].ref = newpage;
	dir_reach(upper, root->r[s2].reach);
	grid_root_set(g, root);
	g->gs->cnt.dir_splits++;
	grid_bump(g);
	return s2;
}

/*
 * Join the sub-directory of root region si with a neighbour if both are
 * small enough that the joined directory stays below (100 - merge
 * threshold) % of a page.  True if it did.
 */
bool
grid_merge_subdir(Grid *g, int si)
{
	GridDirView rv;
	GridDir    *root;
	int		   *cand;
	int			nc;
	int			c;
	Size		limit = (Size) grid_dir_capacity(g) * (100 - g->merge_pct) / 100;

	hi_change_touched(g->sh);
	grid_root(g, &rv);
	root = gd_decode((char *) rv.h);
	cand = palloc(sizeof(int) * root->nr);
	nc = gd_buddies(root, si, cand);
	for (c = 0; c < nc; c++)
	{
		int			o = cand[c];
		int			k;
		int			a,
					b;
		uint32		pages[2];
		int			frames[2];
		GridDir    *da,
				   *db,
				   *dj;
		int			removed;

		/* which dimension they share, and which one is below */
		for (k = 0; k < 2; k++)
			if (root->r[si].lo[1 - k] == root->r[o].lo[1 - k] &&
				root->r[si].hi[1 - k] == root->r[o].hi[1 - k] &&
				(root->r[si].hi[k] + 1 == root->r[o].lo[k] ||
				 root->r[o].hi[k] + 1 == root->r[si].lo[k]))
				break;
		Assert(k < 2);
		a = root->r[si].hi[k] + 1 == root->r[o].lo[k] ? si : o;
		b = a == si ? o : si;
		pages[0] = root->r[a].ref;
		pages[1] = root->r[b].ref;
		gbuf_pin(g, GRID_BUF_DIR, pages, 2, frames);
		da = gd_decode(GRID_DIR_FLAT(gbuf_page(g, GRID_BUF_DIR, frames[0])));
		db = gd_decode(GRID_DIR_FLAT(gbuf_page(g, GRID_BUF_DIR, frames[1])));
		dj = gd_join(da, db, k);
		removed = gd_remove_unneeded(dj);
		if (gd_size(dj) > limit)
		{
			gbuf_unpin(g, GRID_BUF_DIR, frames[0]);
			gbuf_unpin(g, GRID_BUF_DIR, frames[1]);
			continue;
		}
		gd_encode(dj, GRID_DIR_FLAT(gbuf_page(g, GRID_BUF_DIR, frames[0])));
		((HiPageHeader *) gbuf_page(g, GRID_BUF_DIR, frames[0]))->nentries = dj->nr;
		gbuf_dirty(g, GRID_BUF_DIR, frames[0]);
		gbuf_unpin(g, GRID_BUF_DIR, frames[0]);
		gbuf_unpin(g, GRID_BUF_DIR, frames[1]);
		grid_page_free(g, GRID_BUF_DIR, pages[1]);

		gd_merge_regions(root, a, b);
		g->gs->cnt.boundaries_removed += removed + gd_remove_unneeded(root);
		grid_root_set(g, root);
		g->gs->cnt.dir_merges++;
		grid_bump(g);
		return true;
	}
	return false;
}
