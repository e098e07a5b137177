/*
 * grid_build_spill.c
 *	  The collector of a grid CREATE INDEX, and the bulk load of a grid
 *	  whose entries do not fit in maintenance_work_mem.
 *
 * The in-memory build (grid_build.c) cuts the entries top-down, k-d style,
 * at the centre coordinate that splits a set in proportion to the buckets
 * each side needs; the cuts above the sub-directories are the root's scale
 * boundaries.  This file does the upper part of the same recursion on a
 * uniform sample and the lower part on the real entries:
 *
 *	1. While the heap is scanned, entries (with their centres) collect in
 *	   an array of up to 7/8 of the budget B, less the room the in-memory
 *	   build's sorted lists take (GRID_SET_BYTES per entry).  Past it they
 *	   go, array included, to a temporary file, and a reservoir sample
 *	   (Vitter's algorithm R, up to B/8 of entries) of all of them is kept.
 *	2. The cuts are chosen on the sample exactly as the in-memory build
 *	   chooses them (same dimension rule, same proportions; the sample's
 *	   share stands for the real counts) until a part is expected to hold
 *	   at most half of what fits in B/2 (entries and their sorted lists):
 *	   a region.  Its cuts go to the root's scales.
 *	3. The file is read once; each entry goes to its region's temporary
 *	   file (a walk down the cuts finds it).  Regions that would take more
 *	   than B/2 of file buffers instead key a tuplesort of B/2.
 *	4. The entries are read region by region; a region's entries
 *	   (at most B/2) are partitioned in memory by the in-memory build,
 *	   which adds the remaining root cuts, sub-directories and buckets.  A
 *	   region that the sample underestimated beyond B/2 goes to a file of
 *	   its own and is built the same way, recursively, after the sort ends.
 *
 * So the directory above the regions comes from sample quantiles instead
 * of exact ones (with thousands of sample entries per region the counts
 * are within a few per cent), and everything below is what an in-memory
 * build makes.  Cost: one sequential write and read of the entries
 * (48 bytes each) plus one more of them (24 bytes each) through the
 * regions' files, against none in memory.  Distributing instead of sorting
 * matters: the tuplesort's comparisons and tuple copies were a third of a
 * 2M-point spilled build's time.
 * Memory: at most B for entries, sample and sort, plus 64 kB for each of
 * the two chains' lists and the grid's page buffers.  A set of entries
 * whose centres all coincide cannot be cut; if it outgrows B/2 it is
 * loaded whole (it becomes one bucket with overflow pages anyway).
 */
#include "postgres.h"

#include <math.h>

#include "commands/progress.h"
#include "miscadmin.h"
#include "pgstat.h"

#include "grid/grid.h"
#include "grid/grid_int.h"

/* the chains' entries kept in memory before they go to a temporary file */
#define GRID_CHAIN_MEM		(64 * 1024)

/* regions with a temporary file each at most (else the tuplesort) */
#define GRID_REGION_FILES_MAX	512

/* a fixed seed: the same heap builds the same grid */
#define GRID_SAMPLE_SEED	UINT64CONST(0x9e3779b97f4a7c15)

/* Memory for the items of a budget, less their sorted lists' and the sample's */
static Size
items_room(Size budget)
{
	return (budget - budget / 8) / (sizeof(GridItem) + GRID_SET_BYTES) * sizeof(GridItem);
}

GridBuildSpool *
grid_build_begin(Size budget)
{
	GridBuildSpool *sp = palloc0(sizeof(GridBuildSpool));

	sp->budget = budget;
	/* room for the in-memory build's sorted lists (GRID_SET_BYTES each) */
	sp->items = hi_list_begin(sizeof(GridItem), items_room(budget));
	sp->nulls = hi_list_begin(sizeof(GridEntry), GRID_CHAIN_MEM);
	sp->odd = hi_list_begin(sizeof(GridEntry), GRID_CHAIN_MEM);
	sp->maxsample = (int) Min(Max(budget / 8 / sizeof(GridItem), 64), (Size) INT_MAX);
	pg_prng_seed(&sp->rng, GRID_SAMPLE_SEED);
	return sp;
}

/* Algorithm R: every item seen so far is in the sample with equal chance */
static void
sample_offer(GridBuildSpool *sp, const GridItem *it)
{
	sp->seen++;
	if (sp->nsample < sp->maxsample)
		sp->sample[sp->nsample++] = *it;
	else
	{
		uint64		j = pg_prng_uint64_range(&sp->rng, 0, sp->seen - 1);

		if (j < (uint64) sp->maxsample)
			sp->sample[j] = *it;
	}
}

static void
sample_start(GridBuildSpool *sp)
{
	sp->sample = palloc_extended(sizeof(GridItem) * sp->maxsample, MCXT_ALLOC_HUGE);
	sp->nsample = 0;
	sp->seen = 0;
}

/* one entry of the heap scan */
void
grid_build_put(GridBuildSpool *sp, const GridEntry *e)
{
	GridItem	it;

	if (e->kind != HI_KEY_BOX)
	{
		hi_list_put(sp->nulls, e);
		return;
	}
	if (!grid_ent_center(e, it.c, it.reach))
	{
		hi_list_put(sp->odd, e);
		return;
	}
	it.e = *e;
	grid_build_put_item(sp, &it);
}

/* one entry whose centre is known */
void
grid_build_put_item(GridBuildSpool *sp, const GridItem *it)
{
	if (sp->sample == NULL && hi_list_full(sp->items))
	{
		/* about to spill: sample what the array holds first */
		GridItem   *arr = (GridItem *) hi_list_array(sp->items);
		Size		i;

		sample_start(sp);
		for (i = 0; i < hi_list_count(sp->items); i++)
			sample_offer(sp, &arr[i]);
	}
	hi_list_put(sp->items, it);
	if (sp->sample != NULL)
		sample_offer(sp, it);
}

/* ---- external build ---- */

typedef struct RegionNode
{
	int			dim;
	double		v;
	int			child[2];		/* node indexes; -1: a leaf */
	int			region[2];		/* region of a leaf child */
} RegionNode;

typedef struct Region
{
	double		lo[2];
	double		hi[2];
	Size		count;
} Region;

typedef struct Regions
{
	RegionNode *node;
	int			nnode;
	int			maxnode;
	Region	   *r;
	int			nr;
	int			maxr;
	double		target;			/* entries a region is expected to hold at most */
} Regions;

static int
add_region(Regions *rs, const double *lo, const double *hi)
{
	if (rs->nr == rs->maxr)
	{
		rs->maxr = Max(16, rs->maxr * 2);
		rs->r = rs->r ? repalloc(rs->r, sizeof(Region) * rs->maxr) :
			palloc(sizeof(Region) * rs->maxr);
	}
	memcpy(rs->r[rs->nr].lo, lo, sizeof(double) * 2);
	memcpy(rs->r[rs->nr].hi, hi, sizeof(double) * 2);
	rs->r[rs->nr].count = 0;
	return rs->nr++;
}

/*
 * Cut the sample s[0..ns) standing for est entries over [lo, hi) as
 * grid_build_groups() would cut the entries themselves.  Returns the node
 * made, or -1 if the part is a region (its index in *region).
 */
static int
cut_sample(GridBuild *bs, Regions *rs, GridSet *s, double est,
		   const double *lo, const double *hi, int *region)
{
	int			k = (int) Min(ceil(est / bs->target), (double) INT_MAX);
	int			ns = s->n;
	int			dim;
	double		v;
	int			m = 0;
	int			node;
	GridSet		lower,
				upper;
	double		mid_hi[2] = {hi[0], hi[1]};
	double		mid_lo[2] = {lo[0], lo[1]};

	CHECK_FOR_INTERRUPTS();
	if (est > rs->target && ns > 1)
		m = grid_set_cut(s, k / 2, k, &lower, &upper, &dim, &v);
	if (m == 0)
	{
		*region = add_region(rs, lo, hi);
		return -1;
	}
	grid_coords_add(&bs->root, dim, v);
	if (rs->nnode == rs->maxnode)
	{
		rs->maxnode = Max(16, rs->maxnode * 2);
		rs->node = rs->node ? repalloc(rs->node, sizeof(RegionNode) * rs->maxnode) :
			palloc(sizeof(RegionNode) * rs->maxnode);
	}
	node = rs->nnode++;
	rs->node[node].dim = dim;
	rs->node[node].v = v;
	mid_hi[dim] = v;
	mid_lo[dim] = v;
	/* left first: regions are numbered in the order the in-memory build visits them */
	{
		int			c0 = cut_sample(bs, rs, &lower, est * m / ns, lo, mid_hi,
									&rs->node[node].region[0]);

		rs->node[node].child[0] = c0;
	}
	{
		int			c1 = cut_sample(bs, rs, &upper, est * (ns - m) / ns,
									mid_lo, hi, &rs->node[node].region[1]);

		rs->node[node].child[1] = c1;
	}
	return node;
}

/* the region of a centre: below a cut's value goes left, like cut_items */
static int
region_of(const Regions *rs, int root, int root_region, const double *c)
{
	int			node = root;
	int			region = root_region;

	while (node >= 0)
	{
		const RegionNode *n = &rs->node[node];
		int			side = c[n->dim] < n->v ? 0 : 1;

		region = n->region[side];
		node = n->child[side];
	}
	return region;
}

typedef struct Deferred
{
	HiSpillList *items;
	double		lo[2];
	double		hi[2];
} Deferred;

/* A reservoir sample of the items of a list */
static GridItem *
sample_list(HiSpillList *l, int max, int *ns)
{
	GridBuildSpool sp;
	GridItem	it;

	memset(&sp, 0, sizeof(sp));
	sp.maxsample = max;
	pg_prng_seed(&sp.rng, GRID_SAMPLE_SEED);
	sample_start(&sp);
	hi_list_rewind(l);
	while (hi_list_next(l, &it))
		sample_offer(&sp, &it);
	*ns = sp.nsample;
	return sp.sample;
}

static void build_external(GridBuild *bs, HiSpillList *list, GridItem *s, int ns,
						   const double *lo, const double *hi, Size budget);

/* The entries of the regions, region after region (step 3) */
typedef struct RegionEntries
{
	HiSort	   *sort;			/* sorted by region, or */
	HiSpillList **lists;		/* one list per region */
} RegionEntries;

/* The next entry of region r (regions are read in order) */
static bool
region_next(RegionEntries *re, int r, GridEntry *e)
{
	if (re->sort)
		return hi_sort_get(re->sort, e);
	return hi_list_next(re->lists[r], e);
}

/*
 * The regions of a part of the grid being spread (step 3): the cuts above
 * them and where their entries go until they are built (step 4)
 */
struct GridExt
{
	Regions		rs;
	int			root;			/* the cuts' top node, or -1 */
	int			root_region;
	RegionEntries re;
	Size		region_max;		/* entries a region may hold to be built in memory */
	Size		budget;
};

/*
 * Cut the part of the grid over [lo, hi), of est entries of which
 * s[0..ns) is a uniform sample, into regions (steps 2 and 3; the cuts go
 * to the root's scales).  NULL if the sample cannot be cut at all (its
 * centres coincide, or est fits one region): nothing is changed then.
 */
GridExt *
grid_ext_begin(GridBuild *bs, GridItem *s, int ns, double est,
			   const double *lo, const double *hi, Size budget)
{
	GridExt    *x = palloc0(sizeof(GridExt));
	GridSet		set;
	int			r;

	x->budget = budget;
	x->region_max = Max(budget / 2 / (sizeof(GridItem) + GRID_SET_BYTES),
						(Size) bs->target);
	x->root_region = -1;
	/* half of what fits: room for the sample's error */
	x->rs.target = (double) x->region_max / 2;
	grid_set_begin(&set, s, ns);
	x->root = cut_sample(bs, &x->rs, &set, est, lo, hi, &x->root_region);
	grid_set_end(&set);
	if (x->rs.nr == 1)
	{
		pfree(x->rs.r);
		pfree(x);
		return NULL;
	}

	/* each entry to its region: a file each, or a sort by region */
	if (x->rs.nr <= GRID_REGION_FILES_MAX && (Size) x->rs.nr * BLCKSZ <= budget / 2)
	{
		x->re.lists = palloc(sizeof(HiSpillList *) * x->rs.nr);
		for (r = 0; r < x->rs.nr; r++)
			x->re.lists[r] = hi_list_begin(sizeof(GridEntry), 0);
	}
	else
		x->re.sort = hi_sort_begin(sizeof(GridEntry), 1, budget / 2);
	return x;
}

/* One entry to its region */
void
grid_ext_put(GridExt *x, const GridItem *it)
{
	int			r = region_of(&x->rs, x->root, x->root_region, it->c);

	x->rs.r[r].count++;
	if (x->re.sort)
		hi_sort_put(x->re.sort, &it->e, (double) r, 0);
	else
		hi_list_put(x->re.lists[r], &it->e);
}

/* Build the regions from their entries (step 4); x is freed */
void
grid_ext_finish(GridBuild *bs, GridExt *x)
{
	Regions    *rs = &x->rs;
	RegionEntries *re = &x->re;
	Deferred   *deferred = NULL;
	int			ndeferred = 0;
	GridSet		set;
	GridItem	it;
	int			r;

	if (re->sort)
		hi_sort_done(re->sort);
	else
		for (r = 0; r < rs->nr; r++)
			hi_list_rewind(re->lists[r]);

	for (r = 0; r < rs->nr; r++)
	{
		Region	   *reg = &rs->r[r];
		Size		i;

		if (reg->count <= x->region_max)
		{
			GridItem   *items = palloc_extended(sizeof(GridItem) * Max(reg->count, 1),
											  MCXT_ALLOC_HUGE);

			for (i = 0; i < reg->count; i++)
			{
				if (!region_next(re, r, &items[i].e) ||
					!grid_ent_center(&items[i].e, items[i].c, items[i].reach))
					elog(ERROR, "grid bulk load lost entries of a region");
			}
			if (re->lists)
				hi_list_end(re->lists[r]);
			grid_set_begin(&set, items, (int) reg->count);
			grid_build_groups(bs, &set, reg->lo, reg->hi);
			grid_set_end(&set);
			pfree(items);
			continue;
		}
		/* underestimated: a file of its own, built after this sort */
		if (ndeferred == 0)
			deferred = palloc(sizeof(Deferred) * rs->nr);
		deferred[ndeferred].items = hi_list_begin(sizeof(GridItem), 0);
		memcpy(deferred[ndeferred].lo, reg->lo, sizeof(double) * 2);
		memcpy(deferred[ndeferred].hi, reg->hi, sizeof(double) * 2);
		for (i = 0; i < reg->count; i++)
		{
			if (!region_next(re, r, &it.e) ||
				!grid_ent_center(&it.e, it.c, it.reach))
				elog(ERROR, "grid bulk load lost entries of a region");
			hi_list_put(deferred[ndeferred].items, &it);
		}
		if (re->lists)
			hi_list_end(re->lists[r]);
		ndeferred++;
	}
	if (re->sort)
		hi_sort_end(re->sort);
	else
		pfree(re->lists);
	pfree(rs->r);
	if (rs->node)
		pfree(rs->node);

	for (r = 0; r < ndeferred; r++)
	{
		int			dns;
		GridItem   *ds = sample_list(deferred[r].items,
									 (int) Max(x->budget / 8 / sizeof(GridItem), 64), &dns);

		build_external(bs, deferred[r].items, ds, dns, deferred[r].lo,
					   deferred[r].hi, x->budget);
		hi_list_end(deferred[r].items);
	}
	if (deferred)
		pfree(deferred);
	pfree(x);
}

/*
 * Build the part of the grid over [lo, hi) from the items of list (all
 * centres inside), with s[0..ns) a uniform sample of them (freed here).
 */
static void
build_external(GridBuild *bs, HiSpillList *list, GridItem *s, int ns,
			   const double *lo, const double *hi, Size budget)
{
	Size		n = hi_list_count(list);
	GridExt    *x = grid_ext_begin(bs, s, ns, (double) n, lo, hi, budget);
	GridSet		set;
	GridItem	it;

	pfree(s);
	if (x == NULL)
	{
		/* the sample cannot be cut (all its centres coincide): load it whole */
		GridItem   *items = palloc_extended(sizeof(GridItem) * Max(n, 1), MCXT_ALLOC_HUGE);
		Size		i = 0;

		if (n > INT_MAX)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("too many entries with the same centre for a grid bulk load")));
		hi_list_rewind(list);
		while (hi_list_next(list, &items[i]))
			i++;
		grid_set_begin(&set, items, (int) n);
		grid_build_groups(bs, &set, lo, hi);
		grid_set_end(&set);
		pfree(items);
		return;
	}
	hi_list_rewind(list);
	while (hi_list_next(list, &it))
		grid_ext_put(x, &it);
	grid_ext_finish(bs, x);
}

/*
 * The part of the grid over [lo, hi) from the items of sp (all centres
 * inside): partitioned in memory if they are there, else from their file
 * and sample.  The items are consumed.
 */
void
grid_build_part(GridBuild *bs, GridBuildSpool *sp, const double *lo, const double *hi)
{
	if (!hi_list_spilled(sp->items))
	{
		Size		n = hi_list_count(sp->items);
		GridSet		set;

		if (n > INT_MAX)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("too many entries for an in-memory grid bulk load")));
		grid_set_begin(&set, (GridItem *) hi_list_array(sp->items), (int) n);
		grid_build_groups(bs, &set, lo, hi);
		grid_set_end(&set);
		return;
	}
	build_external(bs, sp->items, sp->sample, sp->nsample, lo, hi, sp->budget);
	sp->sample = NULL;
}

/*
 * The items collected so far, for the caller to read (and end); sp starts
 * over with none, and no sample
 */
HiSpillList *
grid_build_take_items(GridBuildSpool *sp)
{
	HiSpillList *old = sp->items;

	if (sp->sample)
		pfree(sp->sample);
	sp->sample = NULL;
	sp->nsample = 0;
	sp->seen = 0;
	pg_prng_seed(&sp->rng, GRID_SAMPLE_SEED);
	sp->items = hi_list_begin(sizeof(GridItem), items_room(sp->budget));
	return old;
}
