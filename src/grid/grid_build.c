/*
 * grid_build.c
 *	  Bulk loading of the two-level Grid File (CREATE INDEX).
 *
 * Entries are partitioned top-down by their centres, k-d style: a set is
 * cut at the coordinate that splits it in proportion to the number of
 * buckets each side needs (75 % full, so the first insertions do not all
 * split), along its wider dimension.  Cuts that separate sub-directories
 * become boundaries of the root's scales; cuts inside a sub-directory
 * become boundaries of its sub-scales.  Every cut lies on a scale, so each
 * piece is a box of cells: a region of the Grid File.  A set becomes one
 * sub-directory as soon as its buckets' directory fits in 70 % of a page
 * (room for later splits); otherwise it is cut again at the root level.
 *
 * Pages are written through the grid's buffers, so a large build reaches
 * the device as CLRU batches; the build ends with a checkpoint.
 *
 * This file partitions entries that are all in memory (CREATE INDEX when
 * they fit in maintenance_work_mem, and the reorganisation of one
 * sub-directory); grid_build_spill.c collects the heap's entries and does
 * the upper cuts on a sample when they do not fit.
 */
#include "postgres.h"

#include <math.h>

#include "commands/progress.h"
#include "miscadmin.h"
#include "pgstat.h"

#include "grid/grid.h"
#include "grid/grid_int.h"

#define GRID_BUILD_DIR_PCT	70


typedef struct Leaf
{
	double		lo[2];
	double		hi[2];
	GridItem   *items;
	int			n;
} Leaf;

typedef struct LeafList
{
	Leaf	   *l;
	int			n;
	int			max;
} LeafList;

void
grid_coords_add(GridCoords *c, int dim, double v)
{
	if (c->n[dim] == c->max[dim])
	{
		c->max[dim] = Max(16, c->max[dim] * 2);
		c->v[dim] = c->v[dim] ? repalloc_huge(c->v[dim], sizeof(double) * c->max[dim]) :
			palloc(sizeof(double) * c->max[dim]);
	}
	c->v[dim][c->n[dim]++] = v;
}

static int
cmp_double(const void *a, const void *b)
{
	double		x = *(const double *) a;
	double		y = *(const double *) b;

	return x < y ? -1 : x > y ? 1 : 0;
}

/* Sorted, distinct scale: outer bounds and the cuts between them */
static double *
make_scale(const double *cuts, int ncuts, double lo, double hi, int *n)
{
	double	   *s = palloc(sizeof(double) * (ncuts + 2));
	int			k = 0;
	int			i;

	if (ncuts > 0)
		memcpy(s + 1, cuts, sizeof(double) * ncuts);
	qsort(s + 1, ncuts, sizeof(double), cmp_double);
	s[0] = lo;
	for (i = 1; i <= ncuts; i++)
		if (s[i] > s[k] && s[i] < hi)
			s[++k] = s[i];
	s[++k] = hi;
	*n = k;						/* cells */
	return s;
}

static inline void
swap_items(GridItem *a, GridItem *b)
{
	GridItem	t = *a;

	*a = *b;
	*b = t;
}

/*
 * Hoare's selection: rearrange it[0..n) on coordinate k so that it[m] holds
 * the value a sort would put there, with nothing greater before it and
 * nothing smaller after it.  A cut needs only that, in O(n) per level
 * instead of a sort's O(n log n).
 */
static void
select_nth(GridItem *it, int n, int m, int k)
{
	int			lo = 0,
				hi = n - 1;

	while (hi > lo)
	{
		int			mid = lo + (hi - lo) / 2;
		double		p;
		int			i = lo,
					j = hi;

		/* median of three as the pivot */
		if (it[mid].c[k] < it[lo].c[k])
			swap_items(&it[mid], &it[lo]);
		if (it[hi].c[k] < it[lo].c[k])
			swap_items(&it[hi], &it[lo]);
		if (it[hi].c[k] < it[mid].c[k])
			swap_items(&it[hi], &it[mid]);
		p = it[mid].c[k];
		while (i <= j)
		{
			while (it[i].c[k] < p)
				i++;
			while (it[j].c[k] > p)
				j--;
			if (i <= j)
			{
				swap_items(&it[i], &it[j]);
				i++;
				j--;
			}
		}
		/* [lo, j] <= p, (j, i) == p, [i, hi] >= p */
		if (m <= j)
			hi = j;
		else if (m >= i)
			lo = i;
		else
			break;
	}
}

/*
 * Move the items of it[0..n) whose coordinate k equals t to the end (at_end)
 * or to the start of the range; returns how many there are.
 */
static int
gather_equal(GridItem *it, int n, int k, double t, bool at_end)
{
	int			cnt = 0;
	int			i;

	if (at_end)
	{
		for (i = n - 1; i >= 0; i--)
			if (it[i].c[k] == t)
				swap_items(&it[i], &it[n - 1 - cnt++]);
	}
	else
	{
		for (i = 0; i < n; i++)
			if (it[i].c[k] == t)
				swap_items(&it[i], &it[cnt++]);
	}
	return cnt;
}

/*
 * Cut items (n > 1) in two, the lower part holding about n * want / total
 * entries: returns the count below the cut (0: all centres coincide) and
 * the cut's dimension and coordinate.  The cut is the position nearest to
 * that count (the lower one on a tie) where the coordinate changes, as in
 * a sorted order; items below it are moved before it, the others after.
 */
int
grid_cut_items(GridItem *it, int n, int want, int total, int *dim, double *v)
{
	double		spread[2];
	int			k;
	int			m;
	int			below,
				above;
	double		t,
				lower_max,
				upper_min;
	int			i;
	bool		use_lower,
				use_upper;

	for (k = 0; k < 2; k++)
	{
		double		mn = it[0].c[k],
					mx = it[0].c[k];

		for (i = 1; i < n; i++)
		{
			mn = Min(mn, it[i].c[k]);
			mx = Max(mx, it[i].c[k]);
		}
		spread[k] = mx - mn;
	}
	k = spread[GRID_X] >= spread[GRID_Y] ? GRID_X : GRID_Y;
	if (!(spread[k] > 0))
		return 0;				/* both spreads are 0: one centre */

	m = (int) ((int64) n * want / total);
	m = Max(1, Min(n - 1, m));
	select_nth(it, n, m, k);
	t = it[m].c[k];

	/* the run of items equal to t is [m - below, m + above) */
	below = gather_equal(it, m, k, t, true);
	above = gather_equal(it + m, n - m, k, t, false);
	use_lower = m - below >= 1;
	use_upper = m + above < n;
	Assert(use_lower || use_upper);
	if (use_lower && (!use_upper || below <= above))
	{
		m -= below;
		lower_max = it[0].c[k];
		for (i = 1; i < m; i++)
			lower_max = Max(lower_max, it[i].c[k]);
		upper_min = t;
	}
	else
	{
		m += above;
		lower_max = t;
		upper_min = it[m].c[k];
		for (i = m + 1; i < n; i++)
			upper_min = Min(upper_min, it[i].c[k]);
	}
	*dim = k;
	*v = (lower_max + upper_min) / 2;
	if (!(*v > lower_max && *v <= upper_min))
		*v = upper_min;
	return m;
}

/* Partition a sub-directory's items into buckets (leaves) */
static void
partition(GridBuild *bs, GridItem *it, int n, const double *lo, const double *hi,
		  GridCoords *cuts, LeafList *leaves)
{
	int			k = (n + bs->target - 1) / bs->target;
	int			dim;
	double		v;
	int			m;

	if (k > 1)
	{
		m = grid_cut_items(it, n, k / 2, k, &dim, &v);
		if (m > 0)
		{
			double		mid_hi[2] = {hi[0], hi[1]};
			double		mid_lo[2] = {lo[0], lo[1]};

			grid_coords_add(cuts, dim, v);
			mid_hi[dim] = v;
			mid_lo[dim] = v;
			partition(bs, it, m, lo, mid_hi, cuts, leaves);
			partition(bs, it + m, n - m, mid_lo, hi, cuts, leaves);
			return;
		}
	}
	if (leaves->n == leaves->max)
	{
		leaves->max = Max(16, leaves->max * 2);
		leaves->l = leaves->l ? repalloc(leaves->l, sizeof(Leaf) * leaves->max) :
			palloc(sizeof(Leaf) * leaves->max);
	}
	memcpy(leaves->l[leaves->n].lo, lo, sizeof(double) * 2);
	memcpy(leaves->l[leaves->n].hi, hi, sizeof(double) * 2);
	leaves->l[leaves->n].items = it;
	leaves->l[leaves->n].n = n;
	leaves->n++;
}

static int
scale_index(const double *s, int n, double v)
{
	int			i = gd_scale_find(s, n + 1, v);

	Assert(s[i] == v);
	return i;
}

/*
 * The directory of a sub-directory over [lo, hi) holding these items,
 * with a new bucket per region; NULL (and nothing created) if its flat
 * form would exceed limit bytes.
 */
static GridDir *
make_dir(GridBuild *bs, GridItem *it, int n, const double *lo, const double *hi,
		 Size limit)
{
	Grid	   *g = bs->g;
	GridCoords		cuts = {{NULL, NULL}, {0, 0}, {0, 0}};
	LeafList	leaves = {NULL, 0, 0};
	GridDir    *d;
	int			k,
				i;

	partition(bs, it, n, lo, hi, &cuts, &leaves);
	d = palloc0(sizeof(GridDir));
	for (k = 0; k < 2; k++)
		d->s[k] = make_scale(cuts.v[k], cuts.n[k], lo[k], hi[k], &d->n[k]);
	if (gd_flat_size(d->n[0], d->n[1], leaves.n) > limit)
		return NULL;

	d->maxr = d->nr = leaves.n;
	d->r = palloc0(sizeof(GridRegion) * Max(leaves.n, 1));
	for (i = 0; i < leaves.n; i++)
	{
		Leaf	   *l = &leaves.l[i];
		GridRegion *r = &d->r[i];
		GridEntry  *e = palloc(sizeof(GridEntry) * Max(l->n, 1));
		int			j;

		for (k = 0; k < 2; k++)
		{
			r->lo[k] = scale_index(d->s[k], d->n[k], l->lo[k]);
			r->hi[k] = scale_index(d->s[k], d->n[k], l->hi[k]) - 1;
		}
		for (j = 0; j < l->n; j++)
		{
			e[j] = l->items[j].e;
			r->reach[0] = Max(r->reach[0], l->items[j].reach[0]);
			r->reach[1] = Max(r->reach[1], l->items[j].reach[1]);
		}
		r->ref = g->store->create(g);
		g->store->replace(g, r->ref, e, l->n);
		pfree(e);
		CHECK_FOR_INTERRUPTS();
	}
	return d;
}

static void
dir_reach(const GridDir *d, float4 *reach)
{
	int			i;

	reach[0] = reach[1] = 0;
	for (i = 0; i < d->nr; i++)
	{
		reach[0] = Max(reach[0], d->r[i].reach[0]);
		reach[1] = Max(reach[1], d->r[i].reach[1]);
	}
}

/*
 * Try to make one sub-directory of these items.  False (and nothing
 * written) if its directory would not fit in 70 % of a page.
 */
static bool
emit_subdir(GridBuild *bs, GridItem *it, int n, const double *lo, const double *hi,
			bool force)
{
	Grid	   *g = bs->g;
	Size		limit = (Size) grid_dir_capacity(g) * (force ? 100 : GRID_BUILD_DIR_PCT) / 100;
	GridDir    *d = make_dir(bs, it, n, lo, hi, limit);
	GridSubdirOut  *so;
	int			f;

	if (d == NULL)
	{
		if (force)
			elog(ERROR, "grid bulk load: a sub-directory does not fit in a page");
		return false;
	}
	if (bs->nsub == bs->maxsub)
	{
		bs->maxsub = Max(16, bs->maxsub * 2);
		bs->sub = bs->sub ? repalloc(bs->sub, sizeof(GridSubdirOut) * bs->maxsub) :
			palloc(sizeof(GridSubdirOut) * bs->maxsub);
	}
	so = &bs->sub[bs->nsub++];
	memcpy(so->lo, lo, sizeof(double) * 2);
	memcpy(so->hi, hi, sizeof(double) * 2);
	so->page = grid_page_alloc(g);
	dir_reach(d, so->reach);
	f = gbuf_new(g, GRID_BUF_DIR, so->page, 1, GRID_PAGE_DIR);
	gd_encode(d, GRID_DIR_FLAT(gbuf_page(g, GRID_BUF_DIR, f)));
	((HiPageHeader *) gbuf_page(g, GRID_BUF_DIR, f))->nentries = d->nr;
	gbuf_unpin(g, GRID_BUF_DIR, f);
	bs->done += n;
	if (bs->nsub % 16 == 0)
		pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE, bs->done);
	return true;
}

/*
 * Reorganise the sub-directory of root region si: repartition its entries
 * into new buckets as a bulk load would.  Merging only joins buddies
 * whose union is a box, so deletions can leave regions that no merge can
 * join (a "pinwheel" of regions, each sharing only part of a side with its
 * neighbours) however empty they are; VACUUM calls this for sub-directories
 * whose buckets are on average below the merge threshold.  False if the
 * new directory would not fit (nothing changed then).
 */
bool
grid_rebuild_subdir(Grid *g, int si)
{
	GridDirView rv;
	GridBuild	bs;
	uint32		page;
	int			f;
	GridDir    *old;
	GridDir    *d;
	uint32	   *ids;
	GridBucketData *bd;
	GridItem   *items;
	int			n = 0;
	int			i,
				j;
	double		lo[2],
				hi[2];

	grid_root(g, &rv);
	page = rv.r[si].ref;
	gdv_region_box(&rv, si, lo, hi);
	gbuf_pin(g, GRID_BUF_DIR, &page, 1, &f);
	old = gd_decode(GRID_DIR_FLAT(gbuf_page(g, GRID_BUF_DIR, f)));
	gbuf_unpin(g, GRID_BUF_DIR, f);
	ids = palloc(sizeof(uint32) * old->nr);
	bd = palloc(sizeof(GridBucketData) * old->nr);
	for (i = 0; i < old->nr; i++)
		ids[i] = old->r[i].ref;
	g->store->load(g, ids, old->nr, bd);
	for (i = 0; i < old->nr; i++)
		n += bd[i].n;
	items = palloc(sizeof(GridItem) * Max(n, 1));
	n = 0;
	for (i = 0; i < old->nr; i++)
		for (j = 0; j < bd[i].n; j++)
		{
			items[n].e = bd[i].e[j];
			if (!grid_center(&bd[i].e[j].box, items[n].c, items[n].reach))
				elog(ERROR, "grid bucket holds an entry without a finite centre");
			n++;
		}

	memset(&bs, 0, sizeof(bs));
	bs.g = g;
	bs.target = Max(1, g->gs->capacity * GRID_BUILD_FILL_PCT / 100);
	d = make_dir(&bs, items, n, lo, hi, (Size) grid_dir_capacity(g));
	if (d == NULL)
		return false;			/* the old directory stays */
	for (i = 0; i < old->nr; i++)
		g->store->drop(g, ids[i]);
	gbuf_pin(g, GRID_BUF_DIR, &page, 1, &f);
	gd_encode(d, GRID_DIR_FLAT(gbuf_page(g, GRID_BUF_DIR, f)));
	((HiPageHeader *) gbuf_page(g, GRID_BUF_DIR, f))->nentries = d->nr;
	gbuf_dirty(g, GRID_BUF_DIR, f);
	gbuf_unpin(g, GRID_BUF_DIR, f);
	grid_root(g, &rv);
	dir_reach(d, rv.r[si].reach);
	g->gs->cnt.reorganisations++;
	grid_bump(g);
	return true;
}

/* Root level: cut until each part makes a sub-directory */
void
grid_build_groups(GridBuild *bs, GridItem *it, int n, const double *lo, const double *hi)
{
	int			k = Max(1, (n + bs->target - 1) / bs->target);
	int			dim;
	double		v;
	int			m = 0;

	CHECK_FOR_INTERRUPTS();
	/* a sub-directory of k buckets needs at least k regions */
	if (gd_flat_size(1, 1, k) <= (Size) grid_dir_capacity(bs->g) * GRID_BUILD_DIR_PCT / 100 &&
		emit_subdir(bs, it, n, lo, hi, false))
		return;
	if (n > 1)
		m = grid_cut_items(it, n, k / 2, k, &dim, &v);
	if (m == 0)
	{
		/* cannot cut (one centre): an overflowing bucket */
		(void) emit_subdir(bs, it, n, lo, hi, true);
		return;
	}
	{
		double		mid_hi[2] = {hi[0], hi[1]};
		double		mid_lo[2] = {lo[0], lo[1]};

		grid_coords_add(&bs->root, dim, v);
		mid_hi[dim] = v;
		mid_lo[dim] = v;
		grid_build_groups(bs, it, m, lo, mid_hi);
		grid_build_groups(bs, it + m, n - m, mid_lo, hi);
	}
}

/* Write a chain's entries from a collector list */
static void
load_chain(Grid *g, uint32 head, HiSpillList *l)
{
	char	   *arr = hi_list_array(l);
	GridEntry	e;

	if (hi_list_count(l) == 0)
		return;
	if (!hi_list_spilled(l))
	{
		grid_chain_ops.replace(g, head, (GridEntry *) arr, (int) hi_list_count(l));
		return;
	}
	hi_list_rewind(l);
	while (hi_list_next(l, &e))
		gc_add(g, head, &e);
}

/*
 * Build the grid from the entries of the heap scan (the index is empty;
 * tree_lock held exclusively; sp is consumed).  NULL/EMPTY entries and
 * boxes without a finite centre go to their chains.  If the entries fit
 * in memory they are partitioned in place; otherwise see
 * grid_build_spill.c.
 */
void
grid_bulk_load(Grid *g, GridBuildSpool *sp)
{
	GridBuild	bs;
	Size		ni = hi_list_count(sp->items);
	GridItem   *items = (GridItem *) hi_list_array(sp->items);
	double		lo[2] = {-INFINITY, -INFINITY};
	double		hi[2] = {INFINITY, INFINITY};
	GridDir    *root;
	int			k;
	int			i;

	g->gs->nulls = gc_create(g);
	g->gs->odd = gc_create(g);
	load_chain(g, g->gs->nulls, sp->nulls);
	load_chain(g, g->gs->odd, sp->odd);
	g->sh->meta.nnulls = hi_list_count(sp->nulls);
	g->sh->meta.nentries = ni + hi_list_count(sp->odd);
	hi_list_end(sp->nulls);
	hi_list_end(sp->odd);

	memset(&bs, 0, sizeof(bs));
	bs.g = g;
	bs.target = Max(1, g->gs->capacity * GRID_BUILD_FILL_PCT / 100);
	pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE, 0);
	if (!hi_list_spilled(sp->items))
	{
		if (ni > INT_MAX)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("too many entries for an in-memory grid bulk load")));
		grid_build_groups(&bs, items, (int) ni, lo, hi);
	}
	else
		grid_build_spilled(&bs, sp);
	hi_list_end(sp->items);
	if (sp->sample)
		pfree(sp->sample);
	pfree(sp);

	/* the root directory over the sub-directories */
	root = palloc0(sizeof(GridDir));
	for (k = 0; k < 2; k++)
		root->s[k] = make_scale(bs.root.v[k], bs.root.n[k], lo[k], hi[k], &root->n[k]);
	root->nr = root->maxr = bs.nsub;
	root->r = palloc0(sizeof(GridRegion) * Max(bs.nsub, 1));
	for (i = 0; i < bs.nsub; i++)
	{
		GridRegion *r = &root->r[i];

		for (k = 0; k < 2; k++)
		{
			r->lo[k] = scale_index(root->s[k], root->n[k], bs.sub[i].lo[k]);
			r->hi[k] = scale_index(root->s[k], root->n[k], bs.sub[i].hi[k]) - 1;
			r->reach[k] = bs.sub[i].reach[k];
		}
		r->ref = bs.sub[i].page;
	}
	grid_root_set(g, root);
}
