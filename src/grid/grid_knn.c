/*
 * grid_knn.c
 *	  k-nearest-neighbour search for ORDER BY geom <-> q (Algorithm 7).
 *
 * The thesis walks the grid ring by ring ("level by level") around the
 * query's cell, keeps a visited list because many cells point to the same
 * bucket, queues cells by their minimum distance, and fetches the
 * log-buckets of the closest queued cells in groups that fit the buffer.
 * SQL does not say k in advance, so we run the same walk incrementally, as
 * a best-first search (Hjaltason and Samet) over one priority queue that
 * holds entries, buckets, sub-directories and "next ring" markers:
 *
 *	 - a ring marker of a directory (the root or a sub-directory) carries
 *	   the least distance anything outside the rings seen so far can have;
 *	   when it comes first, the next ring's cells are enqueued (each region
 *	   once: the visited list) and the next marker after them;
 *	 - a sub-directory or bucket comes out by the distance of its region
 *	   grown by its reach; when one must be read and prefetch is on, the
 *	   closest not yet read ones of the queue are read with it in one batch
 *	   (the thesis' cellQueue'), sized to the buffer;
 *	 - an entry comes out by the distance of its box to the query box,
 *	   a lower bound of ST_Distance: the executor rechecks and reorders.
 *
 * So entries leave in distance order, exactly.  No lock is held between
 * calls; if entries moved between buckets meanwhile (split_count), the
 * walk restarts and skips what it already returned (everything nearer
 * than the last distance, and the TIDs returned at exactly that distance).
 * NULL and EMPTY entries have no distance and come last.
 */
#include "postgres.h"

#include <math.h>

#include "lib/pairingheap.h"
#include "miscadmin.h"
#include "utils/memutils.h"

#include "geom/geom_box.h"
#include "grid/grid.h"
#include "grid/grid_int.h"

#define TWO_M30 (1.0 / 1073741824.0)	/* 2^-30 */

#define KI_ENTRY	0
#define KI_BUCKET	1
#define KI_SUBDIR	2
#define KI_RING		3

typedef struct KnnItem
{
	pairingheap_node ph;
	double		dist;
	int			type;
	int			ref;			/* RING: view; BUCKET, SUBDIR: pending index */
	int			ring;
	bool		exact;			/* dist is the true ORDER BY value */
	HiKeyItem	e;				/* the entry (KI_ENTRY) */
} KnnItem;

/*
 * A directory being walked ring by ring.  A sub-directory's view is a copy
 * of its page (the buffer may drop the page between calls); the root's
 * points into the shared root, found again at each call: the root is only
 * replaced together with split_count, and copying it (megabytes at 20M
 * points) for every scan cost more than the walk.
 */
typedef struct RingView
{
	GridDirView v;
	bool		root;
	int			cell[2];		/* the query's cell */
	bool	   *pushed;			/* visited list: regions already queued */
} RingView;

typedef struct Pending
{
	uint32		id;
	double		dist;
	bool		loaded;
	bool		prefetched;		/* its pages read ahead into the cache */
} Pending;

typedef struct PendList
{
	Pending    *p;
	int			n;
	int			max;
} PendList;

struct GridKnn
{
	HiIndex    *idx;
	HiBox		query;
	bool		query_empty;
	HiKnnExact	exact;
	const GridQuery *q;
	MemoryContext cxt;			/* reset at each (re)start */
	MemoryContext tmpcxt;		/* reset at each call */
	pairingheap *heap;
	bool		started;
	uint64		split_seen;
	RingView   *views;
	int			nviews;
	int			maxviews;
	PendList	buckets;
	PendList	subdirs;
	HiKnnSeen	seen;			/* entries returned, to skip on restart */
	bool		tail_started;
	ItemPointer tail;
	Size		ntail;
	Size		tailpos;
};

static bool knn_next(GridKnn *k, HiIndexShared *sh, HiKeyItem *item, double *dist,
					 bool *isnull, bool *exact);

static int
knn_cmp(const pairingheap_node *a, const pairingheap_node *b, void *arg)
{
	const KnnItem *x = (const KnnItem *) a;
	const KnnItem *y = (const KnnItem *) b;

	if (x->dist < y->dist)
		return 1;
	if (x->dist > y->dist)
		return -1;
	/* at equal distance, hand out entries before reading more */
	if ((x->type == KI_ENTRY) != (y->type == KI_ENTRY))
		return x->type == KI_ENTRY ? 1 : -1;
	return 0;
}

static double
finite_abs(double v)
{
	return isfinite(v) ? fabs(v) : 0;
}

/*
 * A lower bound of hi_box_distance() for every entry whose box lies in the
 * region: the same rules (geom_dist.c) on the region grown by its reach,
 * shaved by 2^-30 instead of 2^-40 to absorb the rounding of the growth.
 */
double
grid_region_distance(const HiBox *q, const double *lo, const double *hi,
					 const float4 *reach)
{
	double		ql[2] = {q->xmin, q->ymin};
	double		qh[2] = {q->xmax, q->ymax};
	double		dd[2] = {0, 0};
	double		a[2],
				b[2];
	double		mag = 0;
	int			k;

	if (hi_box_unbounded(q))
		return 0;
	for (k = 0; k < 2; k++)
	{
		a[k] = lo[k] - reach[k];
		b[k] = hi[k] + reach[k];
		if (qh[k] < a[k])
			dd[k] = a[k] - qh[k];
		else if (ql[k] > b[k])
			dd[k] = ql[k] - b[k];
		mag = Max(mag, Max(finite_abs(ql[k]), finite_abs(qh[k])));
		mag = Max(mag, Max(finite_abs(lo[k]), finite_abs(hi[k])) + reach[k]);
	}
	return hi_dist_finish(sqrt(dd[0] * dd[0] + dd[1] * dd[1]), mag, TWO_M30,
						  hi_dist_spans_axis(a[0], a[1], b[0], b[1]) ||
						  hi_dist_spans_axis(ql[0], ql[1], qh[0], qh[1]));
}

static void
push(GridKnn *k, double dist, int type, int ref, int ring)
{
	KnnItem    *it = MemoryContextAlloc(k->cxt, sizeof(KnnItem));

	it->dist = dist;
	it->type = type;
	it->ref = ref;
	it->ring = ring;
	it->exact = false;
	pairingheap_add(k->heap, &it->ph);
}

/* an entry, at its exact distance if the AM gives one */
static void
push_entry(GridKnn *k, const GridEntry *e)
{
	KnnItem    *it = MemoryContextAlloc(k->cxt, sizeof(KnnItem));

	it->type = KI_ENTRY;
	it->ref = 0;
	it->ring = 0;
	it->e.key = e->key;
	it->e.tid = e->tid;
	it->e.kind = e->kind;
	it->e.flags = e->flags;
	it->dist = hi_knn_entry_dist(&k->exact, &k->query, &it->e, &it->exact);
	pairingheap_add(k->heap, &it->ph);
}

static int
pend_add(GridKnn *k, PendList *l, uint32 id, double dist)
{
	if (l->n == l->max)
	{
		l->max = Max(32, l->max * 2);
		l->p = l->p ? repalloc(l->p, sizeof(Pending) * l->max) :
			MemoryContextAlloc(k->cxt, sizeof(Pending) * l->max);
	}
	l->p[l->n].id = id;
	l->p[l->n].dist = dist;
	l->p[l->n].loaded = false;
	l->p[l->n].prefetched = false;
	return l->n++;
}

static void
add_view(GridKnn *k, char *flat, Size len, bool root)
{
	RingView   *rv;
	char	   *copy = flat;
	double		c[2];
	int			d;

	if (k->nviews == k->maxviews)
	{
		k->maxviews = Max(8, k->maxviews * 2);
		k->views = k->views ? repalloc(k->views, sizeof(RingView) * k->maxviews) :
			MemoryContextAlloc(k->cxt, sizeof(RingView) * k->maxviews);
	}
	rv = &k->views[k->nviews];
	if (!root)
	{
		copy = MemoryContextAlloc(k->cxt, len);
		memcpy(copy, flat, len);
	}
	gdv_init(&rv->v, copy);
	rv->root = root;
	rv->pushed = MemoryContextAllocZero(k->cxt, sizeof(bool) * Max(rv->v.h->nr, 1));
	c[0] = ((double) k->query.xmin + (double) k->query.xmax) / 2;
	c[1] = ((double) k->query.ymin + (double) k->query.ymax) / 2;
	for (d = 0; d < 2; d++)
		rv->cell[d] = gd_scale_find(rv->v.s[d], rv->v.h->n[d], c[d]);
	k->nviews++;
}

/*
 * Least distance from the query box to anything outside the cells within
 * ring r of the view's query cell: the nearest side of that block of cells
 * that has cells beyond it, less the directory's reach.  -1: none left.
 */
static double
ring_bound(GridKnn *k, RingView *rv, int r)
{
	double		best = -1;
	double		ql[2] = {k->query.xmin, k->query.ymin};
	double		qh[2] = {k->query.xmax, k->query.ymax};
	double		mag = 0;
	bool		near_axis = false;
	int			d;

	for (d = 0; d < 2; d++)
	{
		int			lo = rv->cell[d] - r;
		int			hi = rv->cell[d] + r + 1;
		double		reach = rv->v.h->reach[d];

		mag = Max(mag, Max(finite_abs(ql[d]), finite_abs(qh[d])));
		if (lo > 0)
		{
			double		s = rv->v.s[d][lo];
			double		dist = Max(0, ql[d] - s - reach);

			mag = Max(mag, finite_abs(s) + reach);
			best = best < 0 ? dist : Min(best, dist);
		}
		if (hi < rv->v.h->n[d])
		{
			double		s = rv->v.s[d][hi];
			double		dist = Max(0, s - reach - qh[d]);

			mag = Max(mag, finite_abs(s) + reach);
			best = best < 0 ? dist : Min(best, dist);
		}
	}
	if (best < 0)
		return -1;
	if (hi_box_unbounded(&k->query))
		return 0;

	/*
	 * An entry outside that spans an axis line is at least as far as that
	 * line: within 2 of one, such entries may have a bound of 0 below 1.
	 */
	for (d = 0; d < 2; d++)
		if (Max(0, Max(ql[d], -qh[d])) <= 2.0)
			near_axis = true;
	return hi_dist_finish(best, mag, TWO_M30, near_axis);
}

/* Queue a cell's region unless queued before (Algorithm 7, lines 6-12) */
static void
queue_cell(GridKnn *k, RingView *rv, int x, int y)
{
	int			ri = rv->v.cells[x * rv->v.h->n[1] + y];
	double		lo[2],
				hi[2];
	double		dist;

	if (rv->pushed[ri])
		return;
	rv->pushed[ri] = true;
	gdv_region_box(&rv->v, ri, lo, hi);
	if (!grid_region_may_match(k->q, NULL, -1, lo, hi, rv->v.r[ri].reach))
		return;
	dist = grid_region_distance(&k->query, lo, hi, rv->v.r[ri].reach);
	if (rv->root)
		push(k, dist, KI_SUBDIR, pend_add(k, &k->subdirs, rv->v.r[ri].ref, dist), 0);
	else
		push(k, dist, KI_BUCKET, pend_add(k, &k->buckets, rv->v.r[ri].ref, dist), 0);
}

/*
 * Queue the regions of ring r of view vi (Algorithm 7, lines 4-13): the
 * border of the block of cells within r of the query's cell, its columns
 * x = cx - r and cx + r whole, its rows between them, so a ring costs its
 * own cells, not the block's.
 */
static void
expand_ring(GridKnn *k, int vi, int r)
{
	RingView   *rv = &k->views[vi];
	int			n0 = rv->v.h->n[0];
	int			n1 = rv->v.h->n[1];
	int			cx = rv->cell[0];
	int			cy = rv->cell[1];
	int			ylo = Max(cy - r, 0);
	int			yhi = Min(cy + r, n1 - 1);
	int			x,
				y;
	double		next;

	for (x = Max(cx - r, 0); x <= Min(cx + r, n0 - 1); x++)
	{
		if (x == cx - r || x == cx + r)
		{
			for (y = ylo; y <= yhi; y++)
				queue_cell(k, rv, x, y);
		}
		else
		{
			/* r > 0 here: the top and bottom cells are distinct */
			if (cy - r >= 0)
				queue_cell(k, rv, x, cy - r);
			if (cy + r < n1)
				queue_cell(k, rv, x, cy + r);
		}
	}
	next = ring_bound(k, rv, r);
	if (next >= 0)
		push(k, next, KI_RING, vi, r + 1);
}

static int
cmp_pending(const void *a, const void *b)
{
	const Pending *x = *(const Pending *const *) a;
	const Pending *y = *(const Pending *const *) b;

	return x->dist < y->dist ? -1 : x->dist > y->dist ? 1 : 0;
}

/*
 * The pending items to read with item first: itself, and with prefetch
 * the closest unread others (Algorithm 7, line 17), within budget pages.
 */
static Pending **
prefetch_group(GridKnn *k, Grid *g, PendList *l, int first, bool buckets,
			   int budget, int *n)
{
	Pending   **all = palloc(sizeof(Pending *) * l->n);
	Pending   **out = palloc(sizeof(Pending *) * l->n);
	int			nall = 0;
	int			pages;
	int			i;

	out[0] = &l->p[first];
	*n = 1;
	if (!g->knn_prefetch)
	{
		pfree(all);
		return out;
	}
	pages = buckets ? g->store->npages(g, l->p[first].id) : 1;
	for (i = 0; i < l->n; i++)
		if (!l->p[i].loaded && !l->p[i].prefetched && i != first)
			all[nall++] = &l->p[i];
	qsort(all, nall, sizeof(Pending *), cmp_pending);
	for (i = 0; i < nall; i++)
	{
		int			np = buckets ? g->store->npages(g, all[i]->id) : 1;

		if (pages + np > budget)
			break;
		pages += np;
		out[(*n)++] = all[i];
	}
	pfree(all);
	return out;
}

static void
load_subdirs(GridKnn *k, Grid *g, int first)
{
	int			n;
	Pending   **grp = prefetch_group(k, g, &k->subdirs, first, false,
									 gbuf_batch_limit(g, GRID_BUF_DIR), &n);
	uint32	   *pages = palloc(sizeof(uint32) * n);
	int		   *frames = palloc(sizeof(int) * n);
	int			i;

	for (i = 0; i < n; i++)
		pages[i] = grp[i]->id;
	gbuf_pin(g, GRID_BUF_DIR, pages, n, frames);
	for (i = 0; i < n; i++)
	{
		char	   *flat = GRID_DIR_FLAT(gbuf_page(g, GRID_BUF_DIR, frames[i]));
		GridDirHdr *h = (GridDirHdr *) flat;

		add_view(k, flat, gd_flat_size(h->n[0], h->n[1], h->nr), false);
		gbuf_unpin(g, GRID_BUF_DIR, frames[i]);
		grp[i]->loaded = true;
		expand_ring(k, k->nviews - 1, 0);
	}
	pfree(pages);
	pfree(frames);
	pfree(grp);
}

/*
 * Read the cache ahead for the buckets of a prefetch group but the first:
 * their entries are taken when the walk gets to them, most often never
 * (the thesis' prefetch read them into its small buffer and took them all).
 */
static void
prefetch_buckets(Grid *g, Pending **grp, int n)
{
	uint32	   *pages;
	int			npages = 0;
	int			max = 0;
	int			i;

	for (i = 1; i < n; i++)
		max += g->store->npages(g, grp[i]->id);
	pages = palloc(sizeof(uint32) * Max(max, 1));
	for (i = 1; i < n; i++)
	{
		npages += g->store->pages(g, grp[i]->id, pages + npages);
		grp[i]->prefetched = true;
	}
	gbuf_prefetch(g, GRID_BUF_BUCKET, pages, npages);
	pfree(pages);
}

static void
load_buckets(GridKnn *k, Grid *g, int first)
{
	int			n;
	Pending   **grp = prefetch_group(k, g, &k->buckets, first, true,
									 gbuf_batch_limit(g, GRID_BUF_BUCKET), &n);
	uint32	   *ids;
	GridBucketData *bd;
	int			i,
				j;

	if (n > 1 && gbuf_shares_cache(g))
	{
		prefetch_buckets(g, grp, n);
		n = 1;
	}
	ids = palloc(sizeof(uint32) * n);
	bd = palloc(sizeof(GridBucketData) * n);
	for (i = 0; i < n; i++)
		ids[i] = grp[i]->id;
	g->store->load(g, ids, n, bd);
	for (i = 0; i < n; i++)
	{
		grp[i]->loaded = true;
		for (j = 0; j < bd[i].n; j++)
			if (grid_entry_matches(k->q, &bd[i].e[j]))
				push_entry(k, &bd[i].e[j]);
		if (bd[i].e)
			pfree(bd[i].e);
	}
	pfree(ids);
	pfree(bd);
	pfree(grp);
}

GridKnn *
grid_knn_begin(Grid *g, const HiBox *query, bool query_empty, const GridQuery *q,
			   const HiKnnExact *exact)
{
	GridKnn    *k = palloc0(sizeof(GridKnn));

	if (exact)
		k->exact = *exact;
	k->idx = g->idx;
	if (query)
		k->query = *query;
	k->query_empty = query_empty;
	k->q = q;
	k->cxt = AllocSetContextCreate(CurrentMemoryContext, "grid knn",
								   ALLOCSET_DEFAULT_SIZES);
	k->tmpcxt = AllocSetContextCreate(CurrentMemoryContext, "grid knn call",
									  ALLOCSET_DEFAULT_SIZES);
	hi_knn_seen_init(&k->seen);
	return k;
}

static void
restart(GridKnn *k, Grid *g)
{
	MemoryContext old;
	GridDirView rv;
	GridBucketData bd;
	int			i;

	MemoryContextReset(k->cxt);
	old = MemoryContextSwitchTo(k->cxt);
	k->heap = pairingheap_allocate(knn_cmp, NULL);
	MemoryContextSwitchTo(old);
	k->views = NULL;
	k->nviews = k->maxviews = 0;
	memset(&k->buckets, 0, sizeof(PendList));
	memset(&k->subdirs, 0, sizeof(PendList));
	k->split_seen = pg_atomic_read_u64(&g->sh->split_count);
	grid_root(g, &rv);
	add_view(k, (char *) rv.h, g->gs->root_len, true);
	push(k, 0, KI_RING, 0, 0);
	/* boxes without a finite centre: outside the grid, few if any */
	if (g->gs->odd != HI_INVALID_PAGE)
	{
		gc_load(g, &g->gs->odd, 1, &bd);
		for (i = 0; i < bd.n; i++)
			if (grid_entry_matches(k->q, &bd.e[i]))
				push_entry(k, &bd.e[i]);
	}
	k->started = true;
}

/* NULL and EMPTY entries that qualify (all of them without keys) */
static void
collect_tail(GridKnn *k, Grid *g)
{
	GridBucketData bd;
	int			i;

	k->ntail = 0;
	if (g->gs->nulls == HI_INVALID_PAGE)
		return;
	gc_load(g, &g->gs->nulls, 1, &bd);
	k->tail = MemoryContextAlloc(k->cxt, sizeof(ItemPointerData) * Max(bd.n, 1));
	for (i = 0; i < bd.n; i++)
		if (grid_entry_matches(k->q, &bd.e[i]))
			k->tail[k->ntail++] = bd.e[i].tid;
}

/*
 * Next entry in distance order.  *isnull: it has no distance (NULL or
 * EMPTY geometry, or an EMPTY query) and sorts last.
 */
bool
grid_knn_next(GridKnn *k, HiKeyItem *item, double *dist, bool *isnull, bool *exact)
{
	HiIndexShared *sh = k->idx->sh;
	MemoryContext old;
	bool		found;

	/* what a call reads is dropped after it; what the walk keeps is in cxt */
	MemoryContextReset(k->tmpcxt);
	old = MemoryContextSwitchTo(k->tmpcxt);
	found = knn_next(k, sh, item, dist, isnull, exact);
	MemoryContextSwitchTo(old);
	return found;
}

static bool
knn_next(GridKnn *k, HiIndexShared *sh, HiKeyItem *item, double *dist, bool *isnull,
		 bool *exact)
{
	if (!k->query_empty && !k->tail_started)
	{
		Grid	   *g;

		hi_lock_for_read(k->idx);
		g = grid_open(k->idx);
		if (!k->started || pg_atomic_read_u64(&sh->split_count) != k->split_seen)
			restart(k, g);
		else
			gdv_init(&k->views[0].v, grid_data_ptr(g->gs->root));
		while (!pairingheap_is_empty(k->heap))
		{
			KnnItem    *it = (KnnItem *) pairingheap_remove_first(k->heap);

			switch (it->type)
			{
				case KI_ENTRY:
					if (hi_knn_seen(&k->seen, it->dist, &it->e.tid))
						break;
					hi_knn_seen_add(&k->seen, it->dist, &it->e.tid);
					*item = it->e;
					*dist = it->dist;
					*isnull = false;
					*exact = it->exact;
					LWLockRelease(&sh->tree_lock);
					return true;
				case KI_RING:
					expand_ring(k, it->ref, it->ring);
					break;
				case KI_SUBDIR:
					if (!k->subdirs.p[it->ref].loaded)
						load_subdirs(k, g, it->ref);
					break;
				case KI_BUCKET:
					if (!k->buckets.p[it->ref].loaded)
						load_buckets(k, g, it->ref);
					break;
			}
			CHECK_FOR_INTERRUPTS();
		}
		LWLockRelease(&sh->tree_lock);
	}

	if (!k->tail_started)
	{
		Grid	   *g;

		k->tail_started = true;
		hi_lock_for_read(k->idx);
		g = grid_open(k->idx);
		if (k->query_empty)
		{
			/* no distance for anything: every qualifying entry */
			MemoryContext old = MemoryContextSwitchTo(k->cxt);

			HiHits		hits;

			hi_hits_init(&hits, false);
			grid_search(g, k->q, &hits);
			k->tail = hits.tids;
			k->ntail = hits.n;
			MemoryContextSwitchTo(old);
		}
		else
			collect_tail(k, g);
		LWLockRelease(&sh->tree_lock);
	}
	if (k->tailpos < k->ntail)
	{
		memset(item, 0, sizeof(HiKeyItem));
		item->kind = HI_KEY_UNKNOWN;
		item->tid = k->tail[k->tailpos++];
		*dist = 0;
		*isnull = true;
		*exact = true;
		return true;
	}
	return false;
}

void
grid_knn_end(GridKnn *k)
{
	MemoryContextDelete(k->cxt);
	MemoryContextDelete(k->tmpcxt);
}
