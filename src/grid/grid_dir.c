/*
 * grid_dir.c
 *	  Grid File directories: linear scales and regions, for the root
 *	  directory and the sub-directories alike (thesis section 3.2: "the Root
 *	  Directory and the sub-directories are maintained in the same way").
 *
 * A directory covers a box split by its scales into n[0] x n[1] cells.
 * Each region is a box of cells; regions tile the directory.  The flat
 * form (on a sub-directory page, or in shared memory for the root) is
 *
 *	 GridDirHdr | scale x (n[0]+1 doubles) | scale y | regions | cells
 *
 * where cells[ix * n[1] + iy] is the region of cell (ix, iy), rebuilt from
 * the regions at each encode.  Reads use the flat form in place
 * (GridDirView); changes decode it (GridDir), edit, and encode it back.
 *
 * The operations are those of the Grid File: a new boundary in a scale
 * (a column of cells splits; regions across it just cover one more cell),
 * splitting a region along a boundary, merging two regions whose union is a
 * box, removing boundaries no region ends at, cutting a directory in two
 * along a boundary (sub-directory split) and joining two (merge).
 */
#include "postgres.h"

#include <math.h>

#include "grid/grid.h"
#include "grid/grid_int.h"

Size
gd_flat_size(int nx, int ny, int nr)
{
	return sizeof(GridDirHdr) + sizeof(double) * (Size) (nx + 1 + ny + 1) +
		sizeof(GridRegion) * (Size) nr + sizeof(uint16) * (Size) nx * ny;
}

void
gdv_init(GridDirView *v, char *flat)
{
	char	   *p = flat;

	v->h = (GridDirHdr *) p;
	p += sizeof(GridDirHdr);
	v->s[GRID_X] = (double *) p;
	p += sizeof(double) * (v->h->n[GRID_X] + 1);
	v->s[GRID_Y] = (double *) p;
	p += sizeof(double) * (v->h->n[GRID_Y] + 1);
	v->r = (GridRegion *) p;
	p += sizeof(GridRegion) * v->h->nr;
	v->cells = (uint16 *) p;
}

/*
 * The ids a sub-directory page points at (bucket ids: GFFM head pages),
 * one per region, into out (room for page_size / 16: a region takes more
 * than 16 bytes of the page); returns how many.
 */
int
grid_subdir_refs(const char *page, uint32 *out)
{
	GridDirView v;
	int			i;

	gdv_init(&v, GRID_DIR_FLAT((char *) page));
	for (i = 0; i < v.h->nr; i++)
		out[i] = v.r[i].ref;
	return v.h->nr;
}

/*
 * Cell of coordinate v in a scale of n cells: the last i with s[i] <= v,
 * clamped to the directory (cells are half-open [s[i], s[i+1])).
 */
int
gd_scale_find(const double *s, int n, double v)
{
	int			lo = 0;
	int			hi = n - 1;

	if (isnan(v))
		return 0;
	while (lo < hi)
	{
		int			mid = (lo + hi + 1) / 2;

		if (s[mid] <= v)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

int
gdv_locate(const GridDirView *v, double x, double y)
{
	int			ix = gd_scale_find(v->s[GRID_X], v->h->n[GRID_X], x);
	int			iy = gd_scale_find(v->s[GRID_Y], v->h->n[GRID_Y], y);

	return v->cells[ix * v->h->n[GRID_Y] + iy];
}

void
gdv_region_box(const GridDirView *v, int r, double *lo, double *hi)
{
	int			d;

	for (d = 0; d < 2; d++)
	{
		lo[d] = v->s[d][v->r[r].lo[d]];
		hi[d] = v->s[d][v->r[r].hi[d] + 1];
	}
}

void
gd_region_box(const GridDir *g, int r, double *lo, double *hi)
{
	int			d;

	for (d = 0; d < 2; d++)
	{
		lo[d] = g->s[d][g->r[r].lo[d]];
		hi[d] = g->s[d][g->r[r].hi[d] + 1];
	}
}

static GridDir *
gd_alloc(int nx, int ny, int maxr)
{
	GridDir    *d = palloc0(sizeof(GridDir));

	d->n[GRID_X] = nx;
	d->n[GRID_Y] = ny;
	d->maxr = Max(maxr, 4);
	d->s[GRID_X] = palloc(sizeof(double) * (nx + 1));
	d->s[GRID_Y] = palloc(sizeof(double) * (ny + 1));
	d->r = palloc0(sizeof(GridRegion) * d->maxr);
	return d;
}

/* A directory of one cell and one region over [lo, hi) */
GridDir *
gd_new(const double *lo, const double *hi, uint32 ref)
{
	GridDir    *d = gd_alloc(1, 1, 4);
	int			k;

	for (k = 0; k < 2; k++)
	{
		d->s[k][0] = lo[k];
		d->s[k][1] = hi[k];
	}
	d->nr = 1;
	d->r[0].ref = ref;
	return d;
}

GridDir *
gd_decode(const char *flat)
{
	GridDirView v;
	GridDir    *d;

	gdv_init(&v, (char *) flat);
	d = gd_alloc(v.h->n[GRID_X], v.h->n[GRID_Y], v.h->nr + 4);
	memcpy(d->s[GRID_X], v.s[GRID_X], sizeof(double) * (d->n[GRID_X] + 1));
	memcpy(d->s[GRID_Y], v.s[GRID_Y], sizeof(double) * (d->n[GRID_Y] + 1));
	memcpy(d->r, v.r, sizeof(GridRegion) * v.h->nr);
	d->nr = v.h->nr;
	return d;
}

Size
gd_size(const GridDir *d)
{
	return gd_flat_size(d->n[GRID_X], d->n[GRID_Y], d->nr);
}

void
gd_encode(const GridDir *d, char *flat)
{
	GridDirView v;
	GridDirHdr *h = (GridDirHdr *) flat;
	int			i;

	if (d->nr > GRID_MAX_REGIONS || d->n[GRID_X] > GRID_MAX_CELLS ||
		d->n[GRID_Y] > GRID_MAX_CELLS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("grid directory too large: %d x %d cells, %d regions",
						d->n[GRID_X], d->n[GRID_Y], d->nr)));
	memset(h, 0, sizeof(GridDirHdr));
	h->n[GRID_X] = d->n[GRID_X];
	h->n[GRID_Y] = d->n[GRID_Y];
	h->nr = d->nr;
	gdv_init(&v, flat);
	memcpy(v.s[GRID_X], d->s[GRID_X], sizeof(double) * (d->n[GRID_X] + 1));
	memcpy(v.s[GRID_Y], d->s[GRID_Y], sizeof(double) * (d->n[GRID_Y] + 1));
	memcpy(v.r, d->r, sizeof(GridRegion) * d->nr);
	for (i = 0; i < d->nr; i++)
	{
		const GridRegion *r = &d->r[i];
		int			x,
					y;

		h->reach[0] = Max(h->reach[0], r->reach[0]);
		h->reach[1] = Max(h->reach[1], r->reach[1]);
		for (x = r->lo[GRID_X]; x <= r->hi[GRID_X]; x++)
			for (y = r->lo[GRID_Y]; y <= r->hi[GRID_Y]; y++)
				v.cells[x * d->n[GRID_Y] + y] = (uint16) i;
	}
}

/* Index i with s[dim][i] == v among the inner boundaries, or -1 */
int
gd_boundary_index(const GridDir *d, int dim, double v)
{
	int			i;

	for (i = 1; i < d->n[dim]; i++)
		if (d->s[dim][i] == v)
			return i;
	return -1;
}

/*
 * A new boundary v in scale dim, strictly inside the directory and not an
 * existing boundary.  The column (or row) holding v splits in two; every
 * region over it covers both halves.  Returns the new boundary's index.
 */
int
gd_insert_boundary(GridDir *d, int dim, double v)
{
	int			n = d->n[dim];
	int			k = gd_scale_find(d->s[dim], n, v);
	int			i;

	Assert(v > d->s[dim][0] && v < d->s[dim][n]);
	Assert(d->s[dim][k] < v);
	d->s[dim] = repalloc(d->s[dim], sizeof(double) * (n + 2));
	memmove(&d->s[dim][k + 2], &d->s[dim][k + 1], sizeof(double) * (n - k));
	d->s[dim][k + 1] = v;
	d->n[dim] = n + 1;
	/* old cell k becomes cells k and k+1 */
	for (i = 0; i < d->nr; i++)
	{
		GridRegion *r = &d->r[i];

		if (r->lo[dim] > k)
			r->lo[dim]++;
		if (r->hi[dim] >= k)
			r->hi[dim]++;
	}
	return k + 1;
}

/*
 * Split region r along inner boundary i of dim (r->lo < i <= r->hi): r
 * keeps the cells below i, a new region (returned) gets the rest, with the
 * same ref and reach; the caller sets them.
 */
int
gd_split_region(GridDir *d, int r, int dim, int i)
{
	GridRegion *nr;

	Assert(d->r[r].lo[dim] < i && i <= d->r[r].hi[dim]);
	if (d->nr == d->maxr)
	{
		d->maxr *= 2;
		d->r = repalloc(d->r, sizeof(GridRegion) * d->maxr);
	}
	nr = &d->r[d->nr];
	*nr = d->r[r];
	nr->lo[dim] = i;
	d->r[r].hi[dim] = i - 1;
	return d->nr++;
}

/* Is the union of regions a and b a box (they share a whole side)? */
bool
gd_can_merge(const GridDir *d, int a, int b)
{
	const GridRegion *ra = &d->r[a];
	const GridRegion *rb = &d->r[b];
	int			k;

	for (k = 0; k < 2; k++)
	{
		int			o = 1 - k;

		if (ra->lo[o] != rb->lo[o] || ra->hi[o] != rb->hi[o])
			continue;
		if (ra->hi[k] + 1 == rb->lo[k] || rb->hi[k] + 1 == ra->lo[k])
			return true;
	}
	return false;
}

/* a := a U b (a box, see gd_can_merge); b is removed */
void
gd_merge_regions(GridDir *d, int a, int b)
{
	GridRegion *ra = &d->r[a];
	GridRegion *rb = &d->r[b];
	int			k;

	Assert(gd_can_merge(d, a, b));
	for (k = 0; k < 2; k++)
	{
		ra->lo[k] = Min(ra->lo[k], rb->lo[k]);
		ra->hi[k] = Max(ra->hi[k], rb->hi[k]);
		ra->reach[k] = Max(ra->reach[k], rb->reach[k]);
	}
	d->r[b] = d->r[d->nr - 1];
	d->nr--;
}

/*
 * Remove the inner boundaries no region ends at (Algorithm 3, lines
 * 19-20: "remove redundant boundary from grid and scale").  Returns how
 * many were removed.
 */
int
gd_remove_unneeded(GridDir *d)
{
	int			removed = 0;
	int			k;

	for (k = 0; k < 2; k++)
	{
		int			i;

		for (i = d->n[k] - 1; i >= 1; i--)
		{
			bool		needed = false;
			int			j;

			/* boundary i separates cells i-1 and i */
			for (j = 0; j < d->nr && !needed; j++)
				needed = d->r[j].hi[k] == i - 1;
			if (needed)
				continue;
			for (j = 0; j < d->nr; j++)
			{
				if (d->r[j].lo[k] >= i)
					d->r[j].lo[k]--;
				if (d->r[j].hi[k] >= i)
					d->r[j].hi[k]--;
			}
			memmove(&d->s[k][i], &d->s[k][i + 1], sizeof(double) * (d->n[k] - i));
			d->n[k]--;
			removed++;
		}
	}
	return removed;
}

/* Regions whose union with r is a box; returns how many (out: indexes) */
int
gd_buddies(const GridDir *d, int r, int *out)
{
	int			n = 0;
	int			j;

	for (j = 0; j < d->nr; j++)
		if (j != r && gd_can_merge(d, r, j))
			out[n++] = j;
	return n;
}

/*
 * Cut d along inner boundary i of dim: d keeps the cells below i and the
 * returned directory gets the rest.  No region may cross i.  Boundaries of
 * the other dimension that one half no longer needs are removed.
 */
GridDir *
gd_cut(GridDir *d, int dim, int i)
{
	int			o = 1 - dim;
	GridDir    *right = gd_alloc(dim == GRID_X ? d->n[dim] - i : d->n[o],
								 dim == GRID_X ? d->n[o] : d->n[dim] - i, d->nr);
	int			j;
	int			kept = 0;

	memcpy(right->s[dim], &d->s[dim][i], sizeof(double) * (d->n[dim] - i + 1));
	memcpy(right->s[o], d->s[o], sizeof(double) * (d->n[o] + 1));
	for (j = 0; j < d->nr; j++)
	{
		GridRegion	r = d->r[j];

		Assert(!(r.lo[dim] < i && r.hi[dim] >= i));
		if (r.lo[dim] >= i)
		{
			r.lo[dim] -= i;
			r.hi[dim] -= i;
			right->r[right->nr++] = r;
		}
		else
			d->r[kept++] = r;
	}
	d->nr = kept;
	d->n[dim] = i;
	(void) gd_remove_unneeded(d);
	(void) gd_remove_unneeded(right);
	return right;
}

/* Index of value v in a sorted scale (it must be there) */
static int
scale_pos(const double *s, int n, double v)
{
	int			i = gd_scale_find(s, n + 1, v);

	if (s[i] != v)
		elog(ERROR, "grid scale value %g not found when joining directories", v);
	return i;
}

/*
 * Join a and b, adjacent along dim with a below b and the same extent in
 * the other dimension.  The other scale is the union of both.
 */
GridDir *
gd_join(const GridDir *a, const GridDir *b, int dim)
{
	int			o = 1 - dim;
	int			n_dim = a->n[dim] + b->n[dim];
	double	   *so = palloc(sizeof(double) * (a->n[o] + b->n[o] + 2));
	int			no = 0;
	int			ia = 0,
				ib = 0;
	GridDir    *d;
	int			j;

	Assert(a->s[dim][a->n[dim]] == b->s[dim][0]);
	Assert(a->s[o][0] == b->s[o][0] && a->s[o][a->n[o]] == b->s[o][b->n[o]]);
	/* merge the two sorted other-dimension scales, dropping duplicates */
	while (ia <= a->n[o] || ib <= b->n[o])
	{
		double		v;

		if (ib > b->n[o] || (ia <= a->n[o] && a->s[o][ia] <= b->s[o][ib]))
			v = a->s[o][ia++];
		else
			v = b->s[o][ib++];
		if (no == 0 || so[no - 1] != v)
			so[no++] = v;
	}
	d = gd_alloc(dim == GRID_X ? n_dim : no - 1, dim == GRID_X ? no - 1 : n_dim,
				 a->nr + b->nr);
	memcpy(d->s[dim], a->s[dim], sizeof(double) * (a->n[dim] + 1));
	memcpy(&d->s[dim][a->n[dim] + 1], &b->s[dim][1], sizeof(double) * b->n[dim]);
	memcpy(d->s[o], so, sizeof(double) * no);
	for (j = 0; j < a->nr + b->nr; j++)
	{
		const GridDir *src = j < a->nr ? a : b;
		GridRegion	r = src->r[j < a->nr ? j : j - a->nr];

		r.lo[o] = scale_pos(so, no - 1, src->s[o][r.lo[o]]);
		r.hi[o] = scale_pos(so, no - 1, src->s[o][r.hi[o] + 1]) - 1;
		if (src == b)
		{
			r.lo[dim] += a->n[dim];
			r.hi[dim] += a->n[dim];
		}
		d->r[d->nr++] = r;
	}
	pfree(so);
	return d;
}

/*
 * Directory invariants: scales strictly increasing, regions inside the
 * grid, every cell covered by exactly one region.
 */
void
gd_check(const GridDir *d, const char *what, uint32 pageno)
{
	int			k;
	int			j;
	uint8	   *cov;

	for (k = 0; k < 2; k++)
	{
		int			i;

		if (d->n[k] < 1)
			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("%s %u has no cells in dimension %d", what, pageno, k)));
		for (i = 0; i < d->n[k]; i++)
			if (!(d->s[k][i] < d->s[k][i + 1]))
				ereport(ERROR,
						(errcode(ERRCODE_INDEX_CORRUPTED),
						 errmsg("%s %u: scale %d not increasing at %d (%g, %g)",
								what, pageno, k, i, d->s[k][i], d->s[k][i + 1])));
	}
	cov = palloc0((Size) d->n[GRID_X] * d->n[GRID_Y]);
	for (j = 0; j < d->nr; j++)
	{
		const GridRegion *r = &d->r[j];
		int			x,
					y;

		if (r->lo[GRID_X] > r->hi[GRID_X] || r->lo[GRID_Y] > r->hi[GRID_Y] ||
			r->hi[GRID_X] >= d->n[GRID_X] || r->hi[GRID_Y] >= d->n[GRID_Y])
			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("%s %u: region %d out of the grid", what, pageno, j)));
		for (x = r->lo[GRID_X]; x <= r->hi[GRID_X]; x++)
			for (y = r->lo[GRID_Y]; y <= r->hi[GRID_Y]; y++)
			{
				if (cov[x * d->n[GRID_Y] + y])
					ereport(ERROR,
							(errcode(ERRCODE_INDEX_CORRUPTED),
							 errmsg("%s %u: cell (%d, %d) in two regions", what, pageno, x, y)));
				cov[x * d->n[GRID_Y] + y] = 1;
			}
	}
	for (j = 0; j < d->n[GRID_X] * d->n[GRID_Y]; j++)
		if (!cov[j])
			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("%s %u: cell %d in no region", what, pageno, j)));
	pfree(cov);
}
