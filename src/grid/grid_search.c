/*
 * grid_search.c
 *	  Filter queries: range queries (Algorithm 6) and group point / window
 *	  queries (Algorithm 8), one implementation for both.
 *
 * A scan's keys are ANDed; a key from "geom op ANY(array)" holds if any of
 * its elements does.  One key drives the search (the one with the fewest
 * elements; a plain key is one element).  For each of its elements the
 * root directory (in memory) gives the sub-directories to visit; those
 * are read in batches that fit the directory buffer, each yields the
 * buckets that element can touch, and the buckets of all elements and
 * sub-directories are then read in groups that fit the bucket buffer
 * (next fit, as Algorithm 6 groups buckets into the LBB).  Algorithm 6 is
 * the case of one element; unlike the thesis' range query we also batch
 * buckets across sub-directories, as its group query does.
 *
 * Every entry of a visited bucket is tested against all keys with the
 * box predicates PostGIS uses, so the answer is exact on float boxes.
 * NULL and EMPTY entries are never returned by a key, except that EMPTY
 * ~= EMPTY holds in PostGIS (a sequential scan returns those rows, so we
 * do); a scan without keys returns every entry.
 */
#include "postgres.h"

#include <math.h>

#include "miscadmin.h"

#include "grid/grid.h"
#include "grid/grid_int.h"

#define TWO_M40 (1.0 / 1099511627776.0)	/* 2^-40 */

/* Does [lo - r, hi + r] meet [qlo, qhi], with a little slack for rounding? */
static inline bool
span_meets(double lo, double hi, double r, double qlo, double qhi)
{
	double		eps = (fabs(qlo) + fabs(qhi) + r) * TWO_M40;

	return lo - r - eps <= qhi && hi + r + eps >= qlo;
}

/*
 * Can a region [lo, hi) of centres, whose entries reach at most reach
 * beyond their centres, hold an entry satisfying qual q?
 */
bool
grid_qual_region(const GridQual *q, const double *lo, const double *hi,
				 const float4 *reach)
{
	const HiBox *b = &q->box;
	double		c[2];
	float4		r[2];

	if (q->isnull || q->empty)
		return false;			/* EMPTY entries are not in the grid */
	if (hi_box_has_nan(b))
		return true;			/* PostGIS's box-empty: no pruning */
	switch (q->strategy)
	{
		case GRID_STRATEGY_OVERLAP:
		case GRID_STRATEGY_CONTAINS:
			/* the entry's box meets the query box */
			return span_meets(lo[0], hi[0], reach[0], b->xmin, b->xmax) &&
				span_meets(lo[1], hi[1], reach[1], b->ymin, b->ymax);
		case GRID_STRATEGY_WITHIN:
			/* the entry's centre lies in the query box */
			return span_meets(lo[0], hi[0], 0, b->xmin, b->xmax) &&
				span_meets(lo[1], hi[1], 0, b->ymin, b->ymax);
		case GRID_STRATEGY_SAME:
			/* the entry's centre is the query's centre */
			if (!grid_center(b, c, r))
				return false;	/* equal boxes live in the odd chain */
			return span_meets(lo[0], hi[0], 0, c[0], c[0]) &&
				span_meets(lo[1], hi[1], 0, c[1], c[1]);
		default:
			elog(ERROR, "unrecognized strategy number: %d", q->strategy);
	}
	return true;
}

bool
grid_key_region(const GridKey *k, const double *lo, const double *hi,
				const float4 *reach)
{
	int			i;

	for (i = 0; i < k->nelems; i++)
		if (grid_qual_region(&k->elems[i], lo, hi, reach))
			return true;
	return false;
}

/*
 * May region [lo, hi) hold an entry that satisfies the query, through
 * element elem of the driving key (elem < 0: through any element)?
 */
bool
grid_region_may_match(const GridQuery *q, const GridKey *drive, int elem,
					  const double *lo, const double *hi, const float4 *reach)
{
	int			i;

	for (i = 0; i < q->nkeys; i++)
	{
		const GridKey *k = &q->keys[i];

		if (k == drive && elem >= 0)
		{
			if (!grid_qual_region(&k->elems[elem], lo, hi, reach))
				return false;
		}
		else if (!grid_key_region(k, lo, hi, reach))
			return false;
	}
	return true;
}

static bool
qual_matches(const GridQual *q, const GridEntry *e)
{
	HiBox		tmp;
	const HiBox *eb = e->kind == HI_KEY_BOX ? grid_ent_box(e, &tmp) : hi_empty_box();
	const HiBox *qb = q->empty ? NULL : &q->box;

	if (q->isnull)
		return false;
	switch (q->strategy)
	{
		case GRID_STRATEGY_OVERLAP:
			return hi_box_overlaps(eb, qb);
		case GRID_STRATEGY_SAME:
			return hi_box_equals(eb, qb);
		case GRID_STRATEGY_CONTAINS:
			return hi_box_contains(eb, qb);
		case GRID_STRATEGY_WITHIN:
			return hi_box_within(eb, qb);
		default:
			elog(ERROR, "unrecognized strategy number: %d", q->strategy);
	}
	return false;
}

/* Does the entry satisfy every key (some element of each)? */
bool
grid_entry_matches(const GridQuery *q, const GridEntry *e)
{
	int			i,
				j;

	if (q->nkeys == 0)
		return true;
	if (q->impossible || e->kind == HI_KEY_NULL)
		return false;
	for (i = 0; i < q->nkeys; i++)
	{
		bool		any = false;

		for (j = 0; j < q->keys[i].nelems && !any; j++)
			any = qual_matches(&q->keys[i].elems[j], e);
		if (!any)
			return false;
	}
	return true;
}

/* ---- result accumulation ---- */

static void
scan_chain(Grid *g, uint32 head, const GridQuery *q, HiHits *out)
{
	GridBucketData bd;
	int			i;

	if (head == HI_INVALID_PAGE)
		return;
	gc_load(g, &head, 1, &bd);
	for (i = 0; i < bd.n; i++)
		if (grid_entry_matches(q, &bd.e[i]))
			hi_hits_add(out, &bd.e[i].tid, bd.e[i].kind, &bd.e[i].key, bd.e[i].flags);
	if (bd.e)
		pfree(bd.e);
}

/*
 * Could an EMPTY entry satisfy every key?  (Up to PostGIS 3.3: each has a
 * "~= EMPTY" element; later, as the box-empty box answers.)
 */
static bool
empty_may_match(const GridQuery *q)
{
	GridEntry	e;

	memset(&e, 0, sizeof(e));
	e.kind = HI_KEY_EMPTY;
	return grid_entry_matches(q, &e);
}

/* (page or bucket, element) pairs, sorted by id to group them */
typedef struct Visit
{
	uint32		id;
	int			elem;
} Visit;

static int
cmp_visit(const void *a, const void *b)
{
	const Visit *x = a;
	const Visit *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->elem - y->elem;
}

typedef struct VisitList
{
	Visit	   *v;
	int			n;
	int			max;
} VisitList;

static void
visit_add(VisitList *l, uint32 id, int elem)
{
	if (l->n == l->max)
	{
		l->max = Max(64, l->max * 2);
		l->v = l->v ? repalloc_huge(l->v, sizeof(Visit) * l->max) :
			palloc_extended(sizeof(Visit) * l->max, MCXT_ALLOC_HUGE);
	}
	l->v[l->n].id = id;
	l->v[l->n].elem = elem;
	l->n++;
}

/*
 * The regions of directory v that element elem of the driving key (or
 * anything, elem < 0 with drive NULL) may reach: found through the cells
 * the element's window covers, grown by the directory's largest reach,
 * then each region tested with its own reach.
 */
static void
regions_for(const GridDirView *v, const GridQuery *q, const GridKey *drive, int elem,
			uint32 *seen, uint32 tick, VisitList *out, int out_elem)
{
	int			lo[2] = {0, 0};
	int			hi[2] = {v->h->n[0] - 1, v->h->n[1] - 1};
	int			x,
				y,
				k;

	if (drive && elem >= 0)
	{
		const GridQual *qq = &drive->elems[elem];
		const HiBox *b = &qq->box;

		if (!hi_box_has_nan(b))
		{
			double		wl[2] = {b->xmin, b->ymin};
			double		wh[2] = {b->xmax, b->ymax};
			double		c[2];
			float4		r[2];

			if (qq->strategy == GRID_STRATEGY_SAME)
			{
				if (!grid_center(b, c, r))
					return;
				wl[0] = wh[0] = c[0];
				wl[1] = wh[1] = c[1];
			}
			for (k = 0; k < 2; k++)
			{
				double		grow = (qq->strategy == GRID_STRATEGY_OVERLAP ||
									qq->strategy == GRID_STRATEGY_CONTAINS) ?
				v->h->reach[k] : 0;
				double		eps = (fabs(wl[k]) + fabs(wh[k]) + grow) * TWO_M40;

				lo[k] = gd_scale_find(v->s[k], v->h->n[k], wl[k] - grow - eps);
				hi[k] = gd_scale_find(v->s[k], v->h->n[k], wh[k] + grow + eps);
			}
		}
	}
	for (x = lo[0]; x <= hi[0]; x++)
		for (y = lo[1]; y <= hi[1]; y++)
		{
			int			ri = v->cells[x * v->h->n[1] + y];
			double		rlo[2],
						rhi[2];

			if (seen[ri] == tick)
				continue;
			seen[ri] = tick;
			gdv_region_box(v, ri, rlo, rhi);
			if (grid_region_may_match(q, drive, elem, rlo, rhi, v->r[ri].reach))
				visit_add(out, v->r[ri].ref, out_elem);
		}
}

/* Sort and drop duplicate (id, elem) pairs */
static void
visits_sort(VisitList *l)
{
	int			i,
				k = 0;

	if (l->n == 0)
		return;
	qsort(l->v, l->n, sizeof(Visit), cmp_visit);
	for (i = 1; i < l->n; i++)
		if (l->v[i].id != l->v[k].id || l->v[i].elem != l->v[k].elem)
			l->v[++k] = l->v[i];
	l->n = k + 1;
}

/*
 * Does the entry satisfy every key, where the driving key only needs to be
 * tried with the elements that led to its bucket (elems[0..nelems))?
 */
static bool
entry_matches_via(const GridQuery *q, const GridKey *drive, const int *elems,
				  int nelems, const GridEntry *e)
{
	int			i,
				j;

	if (q->nkeys == 0)
		return true;
	if (q->impossible || e->kind == HI_KEY_NULL)
		return false;
	for (i = 0; i < q->nkeys; i++)
	{
		const GridKey *k = &q->keys[i];
		bool		any = false;

		if (k == drive)
		{
			for (j = 0; j < nelems && !any; j++)
				any = qual_matches(&k->elems[elems[j]], e);
		}
		else
		{
			for (j = 0; j < k->nelems && !any; j++)
				any = qual_matches(&k->elems[j], e);
		}
		if (!any)
			return false;
	}
	return true;
}

/*
 * Phase 3: read the buckets in groups fitting the bucket buffer and test
 * their entries.  v holds (bucket, element) pairs sorted by bucket: each
 * bucket is read once and its entries tried only with the elements of the
 * driving key that reach it, so a group of many points costs about one
 * comparison per entry and point of its bucket.
 */
static void
scan_buckets(Grid *g, const GridQuery *q, const GridKey *drive, const VisitList *v,
			 HiHits *out)
{
	int			limit = gbuf_batch_limit(g, GRID_BUF_BUCKET);
	uint32	   *b = palloc(sizeof(uint32) * Max(v->n, 1));
	int		   *first = palloc(sizeof(int) * (v->n + 1));
	int		   *elems = palloc(sizeof(int) * Max(v->n, 1));
	GridBucketData *bd;
	int			nb = 0;
	int			start = 0;
	int			i;

	for (i = 0; i < v->n; i++)
	{
		if (nb == 0 || b[nb - 1] != v->v[i].id)
		{
			b[nb] = v->v[i].id;
			first[nb++] = i;
		}
		elems[i] = v->v[i].elem;
	}
	first[nb] = v->n;
	bd = palloc(sizeof(GridBucketData) * Max(nb, 1));
	while (start < nb)
	{
		int			end = start;
		int			pages = 0;
		int			j;

		/* next fit: as many buckets as their pages fit the buffer */
		do
		{
			pages += g->store->npages(g, b[end]);
			end++;
		} while (end < nb && pages + g->store->npages(g, b[end]) <= limit);
		g->store->load(g, b + start, end - start, bd);
		for (i = 0; i < end - start; i++)
		{
			int			k = start + i;

			for (j = 0; j < bd[i].n; j++)
				if (entry_matches_via(q, drive, elems + first[k], first[k + 1] - first[k],
									  &bd[i].e[j]))
					hi_hits_add(out, &bd[i].e[j].tid, bd[i].e[j].kind, &bd[i].e[j].key,
								bd[i].e[j].flags);
			if (bd[i].e)
				pfree(bd[i].e);
		}
		start = end;
		CHECK_FOR_INTERRUPTS();
	}
	pfree(bd);
	pfree(b);
	pfree(first);
	pfree(elems);
}

/*
 * The TIDs of every entry satisfying q, each once (tree_lock held in
 * shared mode by the caller).
 */
void
grid_search(Grid *g, const GridQuery *q, HiHits *out)
{
	const GridKey *drive = NULL;
	int			nelem = 1;
	GridDirView rv;
	VisitList	subdirs = {NULL, 0, 0};
	VisitList	buckets = {NULL, 0, 0};
	uint32	   *seen;
	uint32		tick = 0;
	int			dlimit = gbuf_batch_limit(g, GRID_BUF_DIR);
	int		   *frames = palloc(sizeof(int) * dlimit);
	uint32	   *pages = palloc(sizeof(uint32) * dlimit);
	int			e,
				i;

	if (q->impossible)
		return;
	for (i = 0; i < q->nkeys; i++)
		if (drive == NULL || q->keys[i].nelems < drive->nelems)
			drive = &q->keys[i];
	if (drive)
		nelem = drive->nelems;

	/* the chains outside the grid */
	if (q->nkeys == 0 || empty_may_match(q))
		scan_chain(g, g->gs->nulls, q, out);
	scan_chain(g, g->gs->odd, q, out);

	/* phase 1 (Algorithm 8, lines 1-10): sub-directories per element */
	grid_root(g, &rv);
	/* a region is looked at once per element: marks stamped per element */
	seen = palloc0(sizeof(uint32) * Max(rv.h->nr, 1));
	for (e = 0; e < nelem; e++)
		regions_for(&rv, q, drive, drive ? e : -1, seen, ++tick, &subdirs, e);
	pfree(seen);
	visits_sort(&subdirs);

	/* phase 2 (lines 11-19): sub-directories in batches, their buckets */
	i = 0;
	while (i < subdirs.n)
	{
		int			np = 0;
		int			first = i;
		int			p;
		int			j;

		while (i < subdirs.n && np < dlimit)
		{
			if (np == 0 || pages[np - 1] != subdirs.v[i].id)
				pages[np++] = subdirs.v[i].id;
			i++;
			/* keep all elements of the last page in this batch */
			while (i < subdirs.n && subdirs.v[i].id == pages[np - 1])
				i++;
		}
		gbuf_pin(g, GRID_BUF_DIR, pages, np, frames);
		j = first;
		for (p = 0; p < np; p++)
		{
			GridDirView dv;

			gdv_init(&dv, GRID_DIR_FLAT(gbuf_page(g, GRID_BUF_DIR, frames[p])));
			seen = palloc0(sizeof(uint32) * Max(dv.h->nr, 1));
			tick = 0;
			/* the elements of this page follow one another (sorted by page) */
			for (; j < i && subdirs.v[j].id == pages[p]; j++)
				regions_for(&dv, q, drive, drive ? subdirs.v[j].elem : -1, seen, ++tick,
							&buckets, subdirs.v[j].elem);
			pfree(seen);
			gbuf_unpin(g, GRID_BUF_DIR, frames[p]);
		}
		CHECK_FOR_INTERRUPTS();
	}

	/* phase 3 (lines 20-29): buckets in groups, across sub-directories */
	visits_sort(&buckets);
	scan_buckets(g, q, drive, &buckets, out);
}
