/*
 * grid_insert.c
 *	  Insertion into the two-level Grid File: the bucket of a point is found
 *	  through the root directory and one sub-directory; a full bucket splits
 *	  (Algorithm 2, lines 8-17), possibly adding a boundary to its
 *	  sub-directory's scale; a sub-directory that cannot take the split is
 *	  itself split first, adding a boundary to the root's scale when needed
 *	  ("successive insertions may trigger sub-directory splitting, executed
 *	  as in the original Grid File").
 *
 * The caller holds tree_lock exclusively and has logged the insertion.
 */
#include "postgres.h"

#include <float.h>
#include <math.h>

#include "lib/qunique.h"
#include "miscadmin.h"

#include "cache/page_cache.h"
#include "grid/grid.h"
#include "grid/grid_int.h"

/*
 * Centre and reach of an entry's box.  The reach is rounded up to the next
 * float and one float step beyond, so that the box lies inside the centre's
 * cell grown by the reach despite double rounding.  False when the centre
 * is not finite (NaN or infinite coordinates, or a reversed cached box)
 * or a bound is +-FLT_MAX (PostGIS's clamp of huge ones): such entries
 * live in the odd chain, so that no region holds an unbounded box (kNN
 * gives those a distance of 0, see geom_dist.c).
 */
bool
grid_center(const HiBox *b, double *c, float4 *reach)
{
	double		lo[2] = {b->xmin, b->ymin};
	double		hi[2] = {b->xmax, b->ymax};
	int			k;

	for (k = 0; k < 2; k++)
	{
		double		r;

		if (!(fabs(lo[k]) < FLT_MAX && fabs(hi[k]) < FLT_MAX) || hi[k] < lo[k])
			return false;
		c[k] = lo[k] == hi[k] ? lo[k] : (lo[k] + hi[k]) / 2;
		r = Max(c[k] - lo[k], hi[k] - c[k]);
		if (r <= 0)
			reach[k] = 0;
		else
		{
			float4		f = (float4) r;

			if ((double) f < r)
				f = nextafterf(f, INFINITY);
			reach[k] = nextafterf(f, INFINITY);
		}
	}
	return true;
}

int
grid_dir_capacity(Grid *g)
{
	return (int) (g->gs->page_size - GRID_DIR_OFF);
}

/* Grow the reach of root region si (and the root's maximum) in place */
void
grid_root_grow_reach(Grid *g, int si, const float4 *reach)
{
	GridDirView rv;
	int			k;

	grid_root(g, &rv);
	for (k = 0; k < 2; k++)
	{
		rv.r[si].reach[k] = Max(rv.r[si].reach[k], reach[k]);
		rv.h->reach[k] = Max(rv.h->reach[k], reach[k]);
	}
}

/* Entries with centres, for split decisions */
GridItem *
grid_items(const GridEntry *e, int n)
{
	GridItem   *it = palloc(sizeof(GridItem) * Max(n, 1));
	int			i;

	for (i = 0; i < n; i++)
	{
		it[i].e = e[i];
		if (!grid_ent_center(&e[i], it[i].c, it[i].reach))
			elog(ERROR, "grid bucket holds an entry without a finite centre");
	}
	return it;
}

/*
 * Divide items by coordinate v of dim: the entries below v go to *lo,
 * the others to *hi, with the reaches of both halves.
 */
void
grid_divide(const GridItem *it, int n, int dim, double v,
			GridEntry *lo, int *nlo, float4 *rlo,
			GridEntry *hi, int *nhi, float4 *rhi)
{
	int			i;

	*nlo = *nhi = 0;
	rlo[0] = rlo[1] = rhi[0] = rhi[1] = 0;
	for (i = 0; i < n; i++)
	{
		bool		below = it[i].c[dim] < v;
		float4	   *r = below ? rlo : rhi;

		if (below)
			lo[(*nlo)++] = it[i].e;
		else
			hi[(*nhi)++] = it[i].e;
		r[0] = Max(r[0], it[i].reach[0]);
		r[1] = Max(r[1], it[i].reach[1]);
	}
}

static int
cmp_double(const void *a, const void *b)
{
	double		x = *(const double *) a;
	double		y = *(const double *) b;

	return x < y ? -1 : x > y ? 1 : 0;
}

/*
 * A new boundary in dim that splits the items as evenly as possible:
 * returns the smaller side's size (0: all centres equal in dim) and the
 * value in *v (items below *v go left).
 */
static int
median_boundary(const GridItem *it, int n, int dim, double *v)
{
	double	   *c = palloc(sizeof(double) * n);
	int			i;
	int			best = -1;

	for (i = 0; i < n; i++)
		c[i] = it[i].c[dim];
	qsort(c, n, sizeof(double), cmp_double);
	/* the position nearest the middle where the value changes */
	for (i = 0; i < n; i++)
	{
		int			m1 = n / 2 - i;
		int			m2 = n / 2 + i;

		if (m1 >= 1 && m1 < n && c[m1 - 1] < c[m1])
		{
			best = m1;
			break;
		}
		if (m2 >= 1 && m2 < n && c[m2 - 1] < c[m2])
		{
			best = m2;
			break;
		}
		if (m1 < 1 && m2 >= n)
			break;
	}
	if (best < 0)
	{
		pfree(c);
		return 0;
	}
	*v = (c[best - 1] + c[best]) / 2;
	if (!(*v > c[best - 1] && *v <= c[best]))
		*v = c[best];
	pfree(c);
	return Min(best, n - best);
}

/*
 * How to split region ri holding items: along an existing boundary inside
 * the region when that is balanced enough (the directory does not grow),
 * else along a new median boundary (one more column or row of cells; the
 * dimension that adds fewer cells wins ties).
 */
GridSplitPlan
grid_plan_split(const GridDir *d, int ri, const GridItem *it, int n)
{
	GridSplitPlan best = {0};
	GridSplitPlan nb = {0};
	const GridRegion *r = &d->r[ri];
	int			k;

	best.kind = GRID_SPLIT_NONE;
	for (k = 0; k < 2; k++)
	{
		int			i;

		for (i = r->lo[k] + 1; i <= r->hi[k]; i++)
		{
			double		v = d->s[k][i];
			int			left = 0;
			int			j;
			int			score;

			for (j = 0; j < n; j++)
				left += it[j].c[k] < v;
			score = Min(left, n - left);
			if (best.kind == GRID_SPLIT_NONE || score > best.score)
			{
				best.kind = GRID_SPLIT_EXISTING;
				best.dim = k;
				best.index = i;
				best.value = v;
				best.score = score;
			}
		}
	}
	if (best.kind == GRID_SPLIT_EXISTING && best.score >= n / 4 && best.score > 0)
		return best;

	nb.kind = GRID_SPLIT_NONE;
	for (k = 0; k < 2; k++)
	{
		double		v;
		int			score = median_boundary(it, n, k, &v);
		int			added = d->n[1 - k];

		if (score == 0)
			continue;
		if (gd_boundary_index(d, k, v) >= 0)
			continue;			/* an existing boundary, weighed above */
		if (nb.kind == GRID_SPLIT_NONE || score > nb.score ||
			(score == nb.score && added < d->n[1 - nb.dim]))
		{
			nb.kind = GRID_SPLIT_NEW;
			nb.dim = k;
			nb.value = v;
			nb.score = score;
		}
	}
	if (nb.kind == GRID_SPLIT_NEW &&
		(best.kind == GRID_SPLIT_NONE || nb.score > best.score))
		return nb;
	if (best.kind == GRID_SPLIT_EXISTING && best.score > 0)
		return best;
	best.kind = GRID_SPLIT_NONE;
	return best;
}

/* Flat size of d after plan p (one region more, maybe one boundary) */
static Size
size_after(const GridDir *d, const GridSplitPlan *p)
{
	int			nx = d->n[GRID_X] + (p->kind == GRID_SPLIT_NEW && p->dim == GRID_X);
	int			ny = d->n[GRID_Y] + (p->kind == GRID_SPLIT_NEW && p->dim == GRID_Y);

	return gd_flat_size(nx, ny, d->nr + 1);
}

/*
 * Split region ri of d (whose bucket's entries plus the new one are it[])
 * as planned: a new bucket takes the upper part.
 */
void
grid_apply_split(Grid *g, GridDir *d, int ri, const GridSplitPlan *p,
				 const GridItem *it, int n)
{
	int			i = p->kind == GRID_SPLIT_NEW ?
		gd_insert_boundary(d, p->dim, p->value) : p->index;
	int			ni = gd_split_region(d, ri, p->dim, i);
	GridEntry  *lo = palloc(sizeof(GridEntry) * Max(n, 1));
	GridEntry  *hi = palloc(sizeof(GridEntry) * Max(n, 1));
	int			nlo,
				nhi;
	uint32		nb = g->store->create(g);

	hi_change_touched(g->sh);
	grid_divide(it, n, p->dim, d->s[p->dim][i], lo, &nlo, d->r[ri].reach,
				hi, &nhi, d->r[ni].reach);
	d->r[ni].ref = nb;
	g->store->replace(g, d->r[ri].ref, lo, nlo);
	if (hi_debug_fail_split)
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("split of a bucket of index \"%s\" cut short by hybrid_index.debug_fail_split",
						hi_index_name(g->idx))));
	g->store->replace(g, nb, hi, nhi);
	g->gs->cnt.splits++;
	pfree(lo);
	pfree(hi);
}

/* Should a full bucket of n entries try to split now? */
static bool
try_split(Grid *g, uint32 n)
{
	uint32		cap = (uint32) g->gs->capacity;

	/* an unsplittable bucket retries once per capacity's worth of entries */
	return n >= cap && (n - cap) % cap == 0;
}

static uint32
special_chain(Grid *g, bool nulls)
{
	uint32	   *p = nulls ? &g->gs->nulls : &g->gs->odd;

	if (*p == HI_INVALID_PAGE)
		*p = gc_create(g);
	return *p;
}

void
grid_insert(Grid *g, const GridEntry *e)
{
	double		c[2];
	float4		reach[2];
	bool		force = false;

	if (e->kind != HI_KEY_BOX)
	{
		gc_add(g, special_chain(g, true), e);
		g->sh->meta.nnulls++;
		return;
	}
	if (!grid_ent_center(e, c, reach))
	{
		gc_add(g, special_chain(g, false), e);
		g->sh->meta.nentries++;
		return;
	}

	for (;;)
	{
		GridDirView rv;
		GridDirView dv;
		int			si;
		int			bi;
		uint32		dirpage;
		uint32		b;
		int			f;
		uint32		n;
		GridDir    *d;
		GridBucketData bd;
		GridItem   *it;
		GridSplitPlan plan;

		CHECK_FOR_INTERRUPTS();
		grid_root(g, &rv);
		si = gdv_locate(&rv, c[GRID_X], c[GRID_Y]);
		dirpage = rv.r[si].ref;
		gbuf_pin(g, GRID_BUF_DIR, &dirpage, 1, &f);
		gdv_init(&dv, GRID_DIR_FLAT(gbuf_page(g, GRID_BUF_DIR, f)));
		bi = gdv_locate(&dv, c[GRID_X], c[GRID_Y]);
		b = dv.r[bi].ref;
		n = g->store->count(g, b);

		if (force || n < (uint32) g->gs->capacity || !try_split(g, n))
		{
			g->store->add(g, b, e);
			/* counted once it is in: a failed add (disk full) counts nothing */
			g->sh->meta.nentries++;
			if (reach[0] > dv.r[bi].reach[0] || reach[1] > dv.r[bi].reach[1])
			{
				int			k;

				for (k = 0; k < 2; k++)
				{
					dv.r[bi].reach[k] = Max(dv.r[bi].reach[k], reach[k]);
					dv.h->reach[k] = Max(dv.h->reach[k], reach[k]);
				}
				gbuf_dirty(g, GRID_BUF_DIR, f);
				grid_root_grow_reach(g, si, reach);
			}
			gbuf_unpin(g, GRID_BUF_DIR, f);
			return;
		}

		/* Algorithm 2, lines 9-16: read B, add p, split by a boundary */
		g->store->load(g, &b, 1, &bd);
		bd.e = bd.e ? repalloc(bd.e, sizeof(GridEntry) * (bd.n + 1)) :
			palloc(sizeof(GridEntry));
		bd.e[bd.n++] = *e;
		it = grid_items(bd.e, bd.n);
		d = gd_decode(GRID_DIR_FLAT(gbuf_page(g, GRID_BUF_DIR, f)));
		plan = grid_plan_split(d, bi, it, bd.n);
		if (plan.kind == GRID_SPLIT_NONE)
		{
			/* every centre is the same: the bucket overflows */
			g->gs->cnt.overflows++;
			gbuf_unpin(g, GRID_BUF_DIR, f);
			force = true;
			continue;
		}
		if (size_after(d, &plan) > (Size) grid_dir_capacity(g))
		{
			gbuf_unpin(g, GRID_BUF_DIR, f);
			(void) grid_split_subdir(g, si);
			continue;
		}
		grid_apply_split(g, d, bi, &plan, it, bd.n);
		g->sh->meta.nentries++;
		gd_encode(d, GRID_DIR_FLAT(gbuf_page(g, GRID_BUF_DIR, f)));
		gbuf_dirty(g, GRID_BUF_DIR, f);
		gbuf_unpin(g, GRID_BUF_DIR, f);
		grid_root_grow_reach(g, si, reach);
		grid_bump(g);
		return;
	}
}

static int
cmp_uint32(const void *a, const void *b)
{
	uint32		x = *(const uint32 *) a;
	uint32		y = *(const uint32 *) b;

	return x < y ? -1 : x > y ? 1 : 0;
}

/* Sort and drop duplicates; returns how many are left */
static int
sort_unique(uint32 *v, int n)
{
	qsort(v, n, sizeof(uint32), cmp_uint32);
	return (int) qunique(v, n, sizeof(uint32), cmp_uint32);
}

/*
 * Read ahead what inserting these entries will read, for an index larger
 * than its memory whose buffers share the page cache (a batch,
 * grid_insert_batch): their sub-directories, pinned in batches, and where
 * adding to a bucket reads it (GFFM chains; LB-Grid appends to its working
 * log-bucket), the buckets' known pages into the cache, at most the cache's
 * read-ahead limit.  Otherwise each insertion would wait alone for its
 * sub-directory and bucket.  Changes nothing; tree_lock is held.
 */
void
grid_insert_read_ahead(Grid *g, const HiKeyItem *items, int n)
{
	uint32	   *dir;
	double	   *cx;
	uint32	   *dirs;
	uint32	   *buckets;
	int		   *frames;
	int			limit = gbuf_batch_limit(g, GRID_BUF_DIR);
	int			ndirs = 0;
	int			nb = 0;
	int			m = 0;
	int			i,
				off;
	GridDirView rv;

	if (!gbuf_shares_cache(g))
		return;
	dir = palloc(sizeof(uint32) * Max(n, 1));
	cx = palloc(sizeof(double) * 2 * Max(n, 1));
	dirs = palloc(sizeof(uint32) * Max(n, 1));
	buckets = palloc(sizeof(uint32) * Max(n, 1));
	grid_root(g, &rv);
	for (i = 0; i < n; i++)
	{
		float4		reach[2];
		HiBox		tmp;

		if (items[i].kind != HI_KEY_BOX ||
			!grid_center(hi_ent_box(&items[i].key, items[i].flags, &tmp), cx + 2 * m, reach))
			continue;
		dir[m] = rv.r[gdv_locate(&rv, cx[2 * m + GRID_X], cx[2 * m + GRID_Y])].ref;
		dirs[ndirs++] = dir[m++];
	}
	ndirs = sort_unique(dirs, ndirs);
	frames = palloc(sizeof(int) * Max(limit, 1));
	for (off = 0; off < ndirs; off += limit)
	{
		int			cnt = Min(limit, ndirs - off);

		gbuf_pin(g, GRID_BUF_DIR, dirs + off, cnt, frames);
		for (i = 0; i < m && g->store->add_reads; i++)
		{
			uint32	   *d = bsearch(&dir[i], dirs + off, cnt, sizeof(uint32), cmp_uint32);
			GridDirView dv;

			if (d == NULL)
				continue;
			gdv_init(&dv, GRID_DIR_FLAT(gbuf_page(g, GRID_BUF_DIR, frames[d - (dirs + off)])));
			buckets[nb++] = dv.r[gdv_locate(&dv, cx[2 * i + GRID_X], cx[2 * i + GRID_Y])].ref;
		}
		for (i = 0; i < cnt; i++)
			gbuf_unpin(g, GRID_BUF_DIR, frames[i]);
	}
	nb = sort_unique(buckets, nb);
	if (nb > 0)
	{
		int			room = hi_cache_ahead_limit(g->idx);
		uint32	   *pages = palloc(sizeof(uint32) * room);
		int			np = 0;

		for (i = 0; i < nb && np + g->store->npages(g, buckets[i]) <= room; i++)
			np += g->store->pages(g, buckets[i], pages + np);
		gbuf_prefetch(g, GRID_BUF_BUCKET, pages, np);
		pfree(pages);
	}
	pfree(frames);
	pfree(dir);
	pfree(cx);
	pfree(dirs);
	pfree(buckets);
}
