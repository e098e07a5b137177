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
 * Pages are written straight to storage by the build's page writer
 * (grid_build_write.c), in batches, each once; the build ends with a
 * checkpoint.
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

/* items a sub-directory's gather reads ahead of the one it copies */
#define GRID_BUILD_PREFETCH 24


/*
 * The k-d partition of one set, cut as grid_set_cut() cuts it, in preorder:
 * a node's subtree is nodes [i, i + size), its leaves (buckets-to-be) in
 * the order the build visits them.  The set is cut once, in place; the
 * root level then reads the tree to decide where sub-directories begin.
 * (Each try of a sub-directory used to partition a copy of its set, and a
 * try that did not fit was thrown away and redone one level down: a third
 * of the cutting of a 5M-point build.)
 */
typedef struct KdNode
{
	double		lo[2];
	double		hi[2];
	double		v;				/* a cut: its coordinate */
	int			dim;			/* a cut: its dimension; a leaf: -1 */
	int			size;			/* nodes in its subtree, itself included */
	int			n;				/* items below */
	uint32	   *ids;			/* a leaf: its items' numbers, by x */
} KdNode;

typedef struct KdTree
{
	KdNode	   *node;
	int			nnode;
	int			maxnode;
	int			target;			/* entries per bucket */
} KdTree;

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

/*
 * A set of items as two lists of item numbers, one sorted by centre x and
 * one by centre y.  A cut reads its position and its neighbours' values in
 * the list of its dimension and splits the other list stably, so both
 * halves stay sorted: one pass over 4-byte numbers per level of the
 * recursion, where selecting and moving 56-byte items took several
 * (40 % of a 5M-point build went to that).
 */
void
grid_set_begin(GridSet *s, GridItem *items, int n)
{
	Size		cnt = Max(n, 1);
	uint64	   *key = palloc_extended(sizeof(uint64) * cnt, MCXT_ALLOC_HUGE);
	uint64	   *tmpkey = palloc_extended(sizeof(uint64) * cnt, MCXT_ALLOC_HUGE);
	int			k;

	s->items = items;
	s->n = n;
	for (k = 0; k < 2; k++)
	{
		uint32	   *val = palloc_extended(sizeof(uint32) * cnt, MCXT_ALLOC_HUGE);
		uint32	   *tmpval = palloc_extended(sizeof(uint32) * cnt, MCXT_ALLOC_HUGE);
		int			i;

		for (i = 0; i < n; i++)
		{
			key[i] = hi_radix_key_double(items[i].c[k]);
			val[i] = (uint32) i;
		}
		if (hi_radix_sort(key, val, n, tmpkey, tmpval))
		{
			s->by[k] = tmpval;
			pfree(val);
		}
		else
		{
			s->by[k] = val;
			pfree(tmpval);
		}
	}
	pfree(key);
	pfree(tmpkey);
	s->side = palloc_extended(sizeof(uint64) * ((cnt + 63) / 64), MCXT_ALLOC_HUGE);
	s->tmp = palloc_extended(sizeof(uint32) * cnt, MCXT_ALLOC_HUGE);
}

void
grid_set_end(GridSet *s)
{
	pfree(s->by[0]);
	pfree(s->by[1]);
	pfree(s->side);
	pfree(s->tmp);
}

#define SET_C(s, k, i)	((s)->items[(s)->by[k][i]].c[k])

/*
 * The rules of a cut, shared with the parallel build's first cut
 * (grid_build_split.c), which must make the same one: along the wider
 * spread of the centres (x on a tie) ...
 */
int
grid_cut_dim(const double *lo, const double *hi)
{
	return hi[GRID_X] - lo[GRID_X] >= hi[GRID_Y] - lo[GRID_Y] ? GRID_X : GRID_Y;
}

/* ... at the position nearest n * want / total, inside the set ... */
int64
grid_cut_pos(int64 n, int want, int total)
{
	int64		m = n * want / total;

	return Max(1, Min(n - 1, m));
}

/*
 * ... moved off a run [lo, hi) of equal coordinates holding it, to the
 * nearer end (the lower one on a tie) that is inside the set ...
 */
int64
grid_cut_off_run(int64 m, int64 lo, int64 hi, int64 n)
{
	Assert(lo >= 1 || hi < n);
	return (lo >= 1 && (hi >= n || m - lo <= hi - m)) ? lo : hi;
}

/* ... at a coordinate between the last below and the first above */
double
grid_cut_value(double lower_max, double upper_min)
{
	double		v = (lower_max + upper_min) / 2;

	return (v > lower_max && v <= upper_min) ? v : upper_min;
}

/*
 * Cut a set (n > 1) in two, the lower part holding about n * want / total
 * items, along its wider dimension: returns the count below the cut (0: all
 * centres coincide) and the cut's dimension and coordinate, and makes
 * *lower and *upper the two halves (sharing s's lists).  The cut is the
 * position nearest to that count (the lower one on a tie) where the
 * coordinate changes in sorted order.
 */
int
grid_set_cut(GridSet *s, int want, int total, GridSet *lower, GridSet *upper,
			 int *dim, double *v)
{
	int			n = s->n;
	double		lo[2],
				hi[2];
	int			k,
				o,
				m,
				i,
				j,
				r;
	double		t,
				lower_max,
				upper_min;

	for (k = 0; k < 2; k++)
	{
		lo[k] = SET_C(s, k, 0);
		hi[k] = SET_C(s, k, n - 1);
	}
	k = grid_cut_dim(lo, hi);
	if (!(hi[k] - lo[k] > 0))
		return 0;				/* both spreads are 0: one centre */

	m = (int) grid_cut_pos(n, want, total);
	t = SET_C(s, k, m);
	if (!(SET_C(s, k, m - 1) < t))
	{
		/* m is inside a run of equal coordinates [rlo, rhi) */
		int			rlo = m,
					rhi = m;

		while (rlo >= 1 && SET_C(s, k, rlo - 1) == t)
			rlo--;
		while (rhi < n && SET_C(s, k, rhi) == t)
			rhi++;
		m = (int) grid_cut_off_run(m, rlo, rhi, n);
	}
	lower_max = SET_C(s, k, m - 1);
	upper_min = SET_C(s, k, m);
	*dim = k;
	*v = grid_cut_value(lower_max, upper_min);

	/*
	 * The other list, split stably by side.  The sides are bits by item
	 * number: 5M items take 625 kB, which stays in the CPU's cache where
	 * these scattered accesses land.
	 */
	o = 1 - k;
	for (i = 0; i < m; i++)
	{
		uint32		x = s->by[k][i];

		s->side[x >> 6] &= ~(UINT64CONST(1) << (x & 63));
	}
	for (i = m; i < n; i++)
	{
		uint32		x = s->by[k][i];

		s->side[x >> 6] |= UINT64CONST(1) << (x & 63);
	}
	/* without a branch: which side is as good as random */
	for (i = 0, j = 0, r = 0; i < n; i++)
	{
		uint32		x = s->by[o][i];
		int			up = (int) ((s->side[x >> 6] >> (x & 63)) & 1);

		s->by[o][j] = x;
		s->tmp[r] = x;
		j += 1 - up;
		r += up;
	}
	Assert(j == m);
	memcpy(s->by[o] + m, s->tmp, sizeof(uint32) * r);

	*lower = *s;
	lower->n = m;
	*upper = *s;
	upper->n = n - m;
	upper->by[0] = s->by[0] + m;
	upper->by[1] = s->by[1] + m;
	return m;
}

/* Cut set s over [lo, hi) into buckets of t->target; returns its node */
static int
kd_build(KdTree *t, GridSet *s, const double *lo, const double *hi)
{
	int			k = (s->n + t->target - 1) / t->target;
	int			i;
	int			dim;
	double		v;
	GridSet		lower,
				upper;

	check_stack_depth();
	CHECK_FOR_INTERRUPTS();
	if (t->nnode == t->maxnode)
	{
		t->maxnode = Max(64, t->maxnode * 2);
		t->node = t->node ? repalloc_huge(t->node, sizeof(KdNode) * t->maxnode) :
			palloc_extended(sizeof(KdNode) * t->maxnode, MCXT_ALLOC_HUGE);
	}
	i = t->nnode++;
	memcpy(t->node[i].lo, lo, sizeof(double) * 2);
	memcpy(t->node[i].hi, hi, sizeof(double) * 2);
	t->node[i].dim = -1;
	t->node[i].v = 0;
	t->node[i].n = s->n;
	t->node[i].ids = s->by[0];
	if (k > 1 && grid_set_cut(s, k / 2, k, &lower, &upper, &dim, &v) > 0)
	{
		double		mid_hi[2] = {hi[0], hi[1]};
		double		mid_lo[2] = {lo[0], lo[1]};

		t->node[i].dim = dim;
		t->node[i].v = v;
		mid_hi[dim] = v;
		mid_lo[dim] = v;
		(void) kd_build(t, &lower, lo, mid_hi);
		(void) kd_build(t, &upper, mid_lo, hi);
	}
	t->node[i].size = t->nnode - i;
	return i;
}

static void
kd_begin(KdTree *t, GridBuild *bs, GridSet *s, const double *lo, const double *hi)
{
	memset(t, 0, sizeof(KdTree));
	t->target = bs->target;
	(void) kd_build(t, s, lo, hi);
}

static int
scale_index(const double *s, int n, double v)
{
	int			i = gd_scale_find(s, n + 1, v);

	Assert(s[i] == v);
	return i;
}

/*
 * A sub-directory in the making: its directory, whose regions have no
 * buckets yet, and the entries of each region's bucket-to-be.
 */
typedef struct DirDraft
{
	GridDir    *d;
	GridEntry  *e;				/* region i's: e[first[i]] .. e[first[i + 1] - 1] */
	int		   *first;
} DirDraft;

/*
 * The draft of a sub-directory made of node top's subtree, a region per
 * leaf; false (and nothing made) if its flat form would exceed limit
 * bytes.  Nothing is written: draft_store() makes the buckets.
 */
static bool
make_dir(const GridSet *set, const KdTree *t, int top, Size limit, DirDraft *out)
{
	const KdNode *nd = &t->node[top];
	GridCoords	cuts = {{NULL, NULL}, {0, 0}, {0, 0}};
	int			nleaves = 0;
	GridDir    *d;
	int			pos = 0;
	int			i,
				k;

	for (i = top; i < top + nd->size; i++)
	{
		if (t->node[i].dim >= 0)
			grid_coords_add(&cuts, t->node[i].dim, t->node[i].v);
		else
			nleaves++;
	}
	d = palloc0(sizeof(GridDir));
	for (k = 0; k < 2; k++)
		d->s[k] = make_scale(cuts.v[k], cuts.n[k], nd->lo[k], nd->hi[k], &d->n[k]);
	for (k = 0; k < 2; k++)
		if (cuts.v[k])
			pfree(cuts.v[k]);
	if (gd_flat_size(d->n[0], d->n[1], nleaves) > limit)
	{
		pfree(d->s[0]);
		pfree(d->s[1]);
		pfree(d);
		return false;
	}

	d->maxr = d->nr = nleaves;
	d->r = palloc0(sizeof(GridRegion) * Max(nleaves, 1));
	out->d = d;
	out->e = palloc_extended(sizeof(GridEntry) * Max(nd->n, 1), MCXT_ALLOC_HUGE);
	out->first = palloc(sizeof(int) * (nleaves + 1));
	nleaves = 0;
	for (i = top; i < top + nd->size; i++)
	{
		const KdNode *l = &t->node[i];
		GridRegion *r;
		int			j;

		if (l->dim >= 0)
			continue;
		out->first[nleaves] = pos;
		r = &d->r[nleaves++];
		r->ref = HI_INVALID_PAGE;
		for (k = 0; k < 2; k++)
		{
			r->lo[k] = scale_index(d->s[k], d->n[k], l->lo[k]);
			r->hi[k] = scale_index(d->s[k], d->n[k], l->hi[k]) - 1;
		}
		for (j = 0; j < l->n; j++)
		{
			const GridItem *it = &set->items[l->ids[j]];
			Size		ahead = (l->ids - nd->ids) + j + GRID_BUILD_PREFETCH;

			/*
			 * The items are scattered over the whole build's array: fetch
			 * ahead, across leaves (the subtree's lists are contiguous).
			 */
			if (ahead < (Size) nd->n)
				__builtin_prefetch(&set->items[nd->ids[ahead]]);
			out->e[pos++] = it->e;
			r->reach[0] = Max(r->reach[0], it->reach[0]);
			r->reach[1] = Max(r->reach[1], it->reach[1]);
		}
	}
	out->first[nleaves] = pos;
	return true;
}

/* A bucket for each region of a draft */
static void
draft_store(Grid *g, DirDraft *dd)
{
	int			i;

	for (i = 0; i < dd->d->nr; i++)
	{
		GridRegion *r = &dd->d->r[i];

		r->ref = g->store->create(g);
		g->store->replace(g, r->ref, dd->e + dd->first[i], dd->first[i + 1] - dd->first[i]);
	}
	pfree(dd->e);
	pfree(dd->first);
}

static void
dir_free(GridDir *d)
{
	pfree(d->s[0]);
	pfree(d->s[1]);
	pfree(d->r);
	pfree(d);
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
 * Try to make one sub-directory of node top's subtree.  False (and nothing
 * written) if its directory would not fit in 70 % of a page.
 */
static bool
emit_subdir(GridBuild *bs, const GridSet *set, const KdTree *t, int top, bool force)
{
	Grid	   *g = bs->g;
	const KdNode *nd = &t->node[top];
	Size		limit = (Size) grid_dir_capacity(g) * (force ? 100 : GRID_BUILD_DIR_PCT) / 100;
	DirDraft	dd;
	GridSubdirOut *so;
	uint32	   *ids;
	char	   *page;
	int			i;

	if (!make_dir(set, t, top, limit, &dd))
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
	memcpy(so->lo, nd->lo, sizeof(double) * 2);
	memcpy(so->hi, nd->hi, sizeof(double) * 2);
	dir_reach(dd.d, so->reach);
	/* straight to storage: the store's pages, then the directory's */
	ids = palloc(sizeof(uint32) * Max(dd.d->nr, 1));
	g->store->bulk(g, bs->writer, dd.e, dd.first, dd.d->nr, ids);
	for (i = 0; i < dd.d->nr; i++)
		dd.d->r[i].ref = ids[i];
	pfree(ids);
	pfree(dd.e);
	pfree(dd.first);
	gw_alloc(bs->writer, &so->page, 1);
	page = gw_page(bs->writer, so->page, 1, GRID_PAGE_DIR);
	gd_encode(dd.d, GRID_DIR_FLAT(page));
	((HiPageHeader *) page)->nentries = dd.d->nr;
	dir_free(dd.d);
	CHECK_FOR_INTERRUPTS();
	bs->done += nd->n;
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
	DirDraft	dd;
	bool		made;
	uint32	   *ids;
	GridBucketData *bd;
	GridItem   *items;
	GridSet		set;
	KdTree		t;
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
			if (!grid_ent_center(&bd[i].e[j], items[n].c, items[n].reach))
				elog(ERROR, "grid bucket holds an entry without a finite centre");
			n++;
		}

	memset(&bs, 0, sizeof(bs));
	bs.g = g;
	bs.target = Max(1, g->gs->capacity * GRID_BUILD_FILL_PCT / 100);
	grid_set_begin(&set, items, n);
	kd_begin(&t, &bs, &set, lo, hi);
	made = make_dir(&set, &t, 0, (Size) grid_dir_capacity(g), &dd);
	pfree(t.node);
	grid_set_end(&set);
	pfree(items);
	if (!made)
		return false;			/* the old directory stays */
	draft_store(g, &dd);
	for (i = 0; i < old->nr; i++)
		g->store->drop(g, ids[i]);
	gbuf_pin(g, GRID_BUF_DIR, &page, 1, &f);
	gd_encode(dd.d, GRID_DIR_FLAT(gbuf_page(g, GRID_BUF_DIR, f)));
	((HiPageHeader *) gbuf_page(g, GRID_BUF_DIR, f))->nentries = dd.d->nr;
	gbuf_dirty(g, GRID_BUF_DIR, f);
	gbuf_unpin(g, GRID_BUF_DIR, f);
	grid_root(g, &rv);
	dir_reach(dd.d, rv.r[si].reach);
	dir_free(dd.d);
	g->gs->cnt.reorganisations++;
	grid_bump(g);
	return true;
}

/*
 * Root level: from the top of the k-d partition down, the first node whose
 * subtree's directory fits becomes a sub-directory; the cuts above it
 * become boundaries of the root's scales.
 */
static void
build_groups(GridBuild *bs, const GridSet *set, const KdTree *t, int i)
{
	const KdNode *nd = &t->node[i];
	int			k = Max(1, (nd->n + bs->target - 1) / bs->target);

	CHECK_FOR_INTERRUPTS();
	/* a sub-directory of k buckets needs at least k regions */
	if (gd_flat_size(1, 1, k) <= (Size) grid_dir_capacity(bs->g) * GRID_BUILD_DIR_PCT / 100 &&
		emit_subdir(bs, set, t, i, false))
		return;
	if (nd->dim < 0)
	{
		/* cannot cut (one centre): an overflowing bucket */
		(void) emit_subdir(bs, set, t, i, true);
		return;
	}
	grid_coords_add(&bs->root, nd->dim, nd->v);
	build_groups(bs, set, t, i + 1);
	build_groups(bs, set, t, i + 1 + t->node[i + 1].size);
}

/* The sub-directories of set s over [lo, hi) (s is cut in place) */
void
grid_build_groups(GridBuild *bs, GridSet *s, const double *lo, const double *hi)
{
	KdTree		t;

	kd_begin(&t, bs, s, lo, hi);
	build_groups(bs, s, &t, 0);
	pfree(t.node);
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
 * in memory they are partitioned there; otherwise see
 * grid_build_spill.c.  With a parallel worker holding entries too, each
 * process builds one side of the first cut (grid_build_split.c).
 */
void
grid_bulk_load(Grid *g, GridBuildSpool *sp)
{
	GridBuild	bs;
	Size		ni = hi_list_count(sp->items) + sp->peer.n;
	bool		shared = false;
	double		lo[2] = {-INFINITY, -INFINITY};
	double		hi[2] = {INFINITY, INFINITY};
	GridDir    *root;
	int			k;
	int			i;

	/*
	 * A chain gets its first page only when it has an entry (grid_insert
	 * makes it at the first one later): an empty chain's page cost every
	 * search of a fresh index a read round of its own (an index of points
	 * has no odd entries), a third of the reads of a first query.
	 */
	if (hi_list_count(sp->nulls) > 0)
	{
		g->gs->nulls = gc_create(g);
		load_chain(g, g->gs->nulls, sp->nulls);
	}
	if (hi_list_count(sp->odd) > 0)
	{
		g->gs->odd = gc_create(g);
		load_chain(g, g->gs->odd, sp->odd);
	}
	g->sh->meta.nnulls = hi_list_count(sp->nulls);
	g->sh->meta.nentries = ni + hi_list_count(sp->odd);
	hi_list_end(sp->nulls);
	hi_list_end(sp->odd);

	memset(&bs, 0, sizeof(bs));
	bs.g = g;
	bs.target = Max(1, g->gs->capacity * GRID_BUILD_FILL_PCT / 100);
	bs.writer = gw_begin(g);
	pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE, 0);
	/* a parallel worker's items: a side of the grid built there, or here */
	if (sp->peer.valid)
	{
		if (sp->helper.start == NULL)
			elog(ERROR, "a grid build's helper holds entries but cannot be reached");
		shared = grid_build_shared(&bs, sp, lo, hi);
	}
	if (!shared)
		grid_build_part(&bs, sp, lo, hi);
	hi_list_end(sp->items);
	if (sp->sample)
		pfree(sp->sample);
	pfree(sp);
	gw_end(bs.writer);

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
