/*
 * grid_build_split.c
 *	  A grid bulk load shared with a helper process (the parallel worker of
 *	  CREATE INDEX): each process builds the sub-directories of one side of
 *	  the root's first k-d cut.
 *
 * Both processes collect the entries of their part of the heap scan, and
 * the worker keeps its own (grid_build_export tells the leader how many
 * and where).  The leader then finds the first cut the serial build would
 * make, as its tasks to the worker say, one after the other:
 *
 *	KEYS	with all entries in memory, the worker's centre coordinates of
 *			the wider dimension join the leader's; a radix selection finds
 *			the coordinate at the cut's position, and one pass the run of
 *			equal ones around it: grid_set_cut's cut, without sorting.
 *	SAMPLE	otherwise, from the two reservoir samples, weighed by the
 *			entries each stands for: the cut the spilled build's sample
 *			would give (grid_build_spill.c).
 *	CUT		both part their entries: those below to the leader, above to
 *			the worker, through two shared files.  Cut on samples, each
 *			first cuts its side's part of the sample into regions, as the
 *			spilled build does (grid_build_spill.c), and spreads its own
 *			entries of its side into them as it parts, and the other's as
 *			it reads them: one pass over the entries fewer, and no second
 *			temporary copy of the other's.
 *	BUILD	each builds its side, as the serial build would (in memory or
 *			spilled), writing its pages itself (grid_build_write.c); the
 *			worker hands back its sub-directories and root cuts.
 *	ITEMS	(instead of CUT and BUILD) a set too small to share: the worker
 *			sends its entries, the leader builds alone.
 *
 * In memory, each side holds exactly the entries the serial build's
 * recursion gives it and is cut as the serial build cuts it: the same root
 * scales, sub-directories, regions and buckets (entries of equal
 * coordinates may sit in another order, as the scan's order differs); only
 * page numbers differ.  Page ids and the store's tables are shared, changed
 * under the helper's lock.
 *
 * This file is the leader's side: it plans the first cut and gives the
 * tasks; the helper's side of each task is in grid_build_split_worker.c,
 * the files the two exchange are written and read by grid_build_split_io.c
 * (grid_build_split_int.h).
 */
#include "postgres.h"

#include <math.h>

#include "commands/progress.h"
#include "pgstat.h"
#include "storage/buffile.h"

#include "grid/grid.h"
#include "grid/grid_int.h"
#include "grid/grid_build_split_int.h"

#define SIGN_BIT		UINT64CONST(0x8000000000000000)

/*
 * The two sides of a first cut made on samples: the sample's items of
 * each, and how many entries each stands for
 */
typedef struct SideSamples
{
	GridItem   *s[2];
	int			n[2];
	double		est[2];
} SideSamples;

void
grid_build_set_helper(GridBuildSpool *sp, const HiLoadHelper *helper)
{
	sp->helper = *helper;
}

static inline double
key_double(uint64 key)
{
	uint64		u = (key & SIGN_BIT) ? key ^ SIGN_BIT : ~key;
	double		v;

	memcpy(&v, &u, sizeof(v));
	return v;
}

/*
 * The m-th smallest (from 0) of n keys: a radix selection, 16 bits at a
 * time from the top; after the first digit few candidates are left.
 */
static uint64
select_key(const uint64 *keys, Size n, Size m)
{
	uint32	   *count = palloc(sizeof(uint32) << 16);
	uint64	   *cand = NULL;
	const uint64 *in = keys;
	Size		nc = n;
	uint64		prefix = 0;
	int			shift;
	uint64		res;

	for (shift = 48; shift >= 0; shift -= 16)
	{
		uint64		himask = shift == 48 ? 0 : ~UINT64CONST(0) << (shift + 16);
		Size		i,
					j;
		int			d;

		memset(count, 0, sizeof(uint32) << 16);
		for (i = 0; i < nc; i++)
			if ((in[i] & himask) == prefix)
				count[(in[i] >> shift) & 0xFFFF]++;
		for (d = 0; m >= count[d]; d++)
			m -= count[d];
		prefix |= (uint64) d << shift;
		/* the candidates left, copied once they are few */
		if (cand == NULL && count[d] < nc / 4)
		{
			uint64		mask = ~UINT64CONST(0) << shift;

			cand = palloc(sizeof(uint64) * Max(count[d], 1));
			for (i = 0, j = 0; i < nc; i++)
				if ((in[i] & mask) == prefix)
					cand[j++] = in[i];
			in = cand;
			nc = j;
		}
	}
	res = prefix;
	pfree(count);
	if (cand)
		pfree(cand);
	return res;
}

/*
 * The first cut of the whole set (n keys of dimension dim), as kd_build /
 * grid_set_cut make it for k buckets: its coordinate, and how many keys
 * fall below it.
 */
static double
first_cut(const uint64 *keys, Size n, int k, Size *below_n)
{
	Size		m = (Size) grid_cut_pos((int64) n, k / 2, k);
	Size		lt = 0,
				le = 0,
				i;
	uint64		tkey,
				belowk = 0,
				abovek = ~UINT64CONST(0);
	double		t,
				lower_max,
				upper_min;

	tkey = select_key(keys, n, m);
	for (i = 0; i < n; i++)
	{
		uint64		key = keys[i];

		if (key < tkey)
		{
			lt++;
			belowk = Max(belowk, key);
		}
		else if (key > tkey)
			abovek = Min(abovek, key);
		if (key <= tkey)
			le++;
	}
	t = key_double(tkey);
	/* sorted, positions [lt, le) hold t: move m off the run as the cut does */
	if (m != lt)
		m = (Size) grid_cut_off_run((int64) m, (int64) lt, (int64) le, (int64) n);
	lower_max = m == lt ? key_double(belowk) : t;
	upper_min = m == lt ? t : key_double(abovek);
	*below_n = m;
	return grid_cut_value(lower_max, upper_min);
}

/* The helper does task; the leader goes on meanwhile, then waits */
static void
task_start(const HiLoadHelper *h, GridTaskKind kind, GridTask *t)
{
	t->kind = kind;
	h->start(h->arg, t, sizeof(*t));
}

/*
 * The helper's items come to the leader's collector (a build not shared
 * after all)
 */
static void
fetch_items(GridBuildSpool *sp)
{
	const HiLoadHelper *h = &sp->helper;
	GridTask	t;

	memset(&t, 0, sizeof(t));
	task_start(h, GRID_TASK_ITEMS, &t);
	h->finish(h->arg);
	grid_split_read_file_items(&h->shared, GRID_W_ITEMS, sp, NULL);
	sp->peer.n = 0;
}

/* Is a set of n entries worth sharing: does build_groups cut its root? */
static bool
worth_sharing(GridBuild *bs, Size n, int *k)
{
	if (n > (Size) INT_MAX)
		return false;
	*k = (int) ((n + bs->target - 1) / bs->target);
	/* a root this large is no sub-directory: build_groups cuts it */
	return gd_flat_size(1, 1, *k) > (Size) grid_dir_capacity(bs->g) * GRID_BUILD_DIR_PCT / 100;
}

/*
 * The exact first cut of the leader's and the helper's items, all in
 * memory; false if there is none
 */
static bool
plan_exact(GridBuild *bs, GridBuildSpool *sp, int k, int *dim, double *v)
{
	const HiLoadHelper *h = &sp->helper;
	GridPeer   *peer = &sp->peer;
	GridItem   *items = (GridItem *) hi_list_array(sp->items);
	Size		nown = hi_list_count(sp->items);
	Size		n = nown + peer->n;
	double		lo[2],
				hi[2];
	uint64	   *keys;
	GridTask	t;
	BufFile    *f;
	Size		below_n,
				i;
	int			d;

	memcpy(lo, peer->lo, sizeof(lo));
	memcpy(hi, peer->hi, sizeof(hi));
	for (i = 0; i < nown; i++)
		for (d = 0; d < 2; d++)
		{
			lo[d] = Min(lo[d], items[i].c[d]);
			hi[d] = Max(hi[d], items[i].c[d]);
		}
	d = grid_cut_dim(lo, hi);
	if (!(hi[d] - lo[d] > 0))
		return false;

	/* the helper's keys of that dimension join the leader's */
	memset(&t, 0, sizeof(t));
	t.dim = d;
	task_start(h, GRID_TASK_KEYS, &t);
	keys = palloc_extended(sizeof(uint64) * n, MCXT_ALLOC_HUGE);
	for (i = 0; i < nown; i++)
		keys[i] = hi_radix_key_double(items[i].c[d]);
	h->finish(h->arg);
	f = h->shared.open(h->shared.arg, GRID_W_KEYS);
	grid_split_read_exact(f, keys + nown, sizeof(uint64) * peer->n);
	BufFileClose(f);
	*v = first_cut(keys, n, k, &below_n);
	pfree(keys);
	*dim = d;
	return below_n > 0 && below_n < n;
}

/*
 * The first cut of the leader's and the helper's items, some spilled, on
 * their samples as the spilled build cuts: each sample weighs the items it
 * stands for, so the denser one is thinned to the other's rate.  False if
 * there is none; else ss gets the thinned sample's items of each side.
 */
static bool
plan_sampled(GridBuild *bs, GridBuildSpool *sp, int k, int *dim, double *v,
			 SideSamples *ss)
{
	const HiLoadHelper *h = &sp->helper;
	Size		nl = hi_list_count(sp->items);
	Size		nw = sp->peer.n;
	Size		nls,
				nws,
				ns = 0,
				below_n,
				i;
	GridItem   *ls = grid_split_sample_of(sp, (Size) sp->maxsample, &nls);
	GridItem   *ws;
	const GridItem **all;
	double		rl,
				rw,
				rmax;
	double		lo[2] = {INFINITY, INFINITY};
	double		hi[2] = {-INFINITY, -INFINITY};
	uint64	   *keys;
	GridTask	t;
	BufFile    *f;
	int			d;

	memset(&t, 0, sizeof(t));
	task_start(h, GRID_TASK_SAMPLE, &t);
	h->finish(h->arg);
	f = h->shared.open(h->shared.arg, GRID_W_SAMPLE);
	grid_split_read_exact(f, &nws, sizeof(nws));
	ws = palloc_extended(sizeof(GridItem) * Max(nws, 1), MCXT_ALLOC_HUGE);
	grid_split_read_exact(f, ws, sizeof(GridItem) * nws);
	BufFileClose(f);

	rl = nls > 0 ? (double) nl / nls : 0;
	rw = nws > 0 ? (double) nw / nws : 0;
	rmax = Max(rl, rw);
	all = palloc_extended(sizeof(GridItem *) * Max(nls + nws, 1), MCXT_ALLOC_HUGE);
	/* sample item i of a sample at rate r stays if it crosses a step of rmax */
	for (i = 0; i < nls; i++)
		if (floor((i + 1) * rl / rmax) > floor(i * rl / rmax))
			all[ns++] = &ls[i];
	for (i = 0; i < nws; i++)
		if (floor((i + 1) * rw / rmax) > floor(i * rw / rmax))
			all[ns++] = &ws[i];
	for (i = 0; i < ns; i++)
		for (d = 0; d < 2; d++)
		{
			lo[d] = Min(lo[d], all[i]->c[d]);
			hi[d] = Max(hi[d], all[i]->c[d]);
		}
	d = grid_cut_dim(lo, hi);
	below_n = 0;
	if (ns > 1 && hi[d] - lo[d] > 0)
	{
		keys = palloc_extended(sizeof(uint64) * ns, MCXT_ALLOC_HUGE);
		for (i = 0; i < ns; i++)
			keys[i] = hi_radix_key_double(all[i]->c[d]);
		*v = first_cut(keys, ns, k, &below_n);
		pfree(keys);
	}
	if (below_n > 0 && below_n < ns)
	{
		int			side;

		/* each side's share of the sample weighs it, as in cut_sample */
		ss->n[0] = ss->n[1] = 0;
		for (i = 0; i < ns; i++)
			ss->n[all[i]->c[d] < *v ? 0 : 1]++;
		for (side = 0; side < 2; side++)
		{
			ss->s[side] = palloc_extended(sizeof(GridItem) * ss->n[side], MCXT_ALLOC_HUGE);
			ss->est[side] = (double) (nl + nw) * ss->n[side] / ns;
			ss->n[side] = 0;
		}
		for (i = 0; i < ns; i++)
		{
			side = all[i]->c[d] < *v ? 0 : 1;
			ss->s[side][ss->n[side]++] = *all[i];
		}
	}
	if (ls != sp->sample)
		pfree(ls);
	pfree(ws);
	pfree(all);
	*dim = d;
	return below_n > 0 && below_n < ns;
}

/*
 * Build the grid over [lo, hi) from the leader's items and the helper's,
 * each process one side of the first cut.  False if not shared: then the
 * helper's items are in sp, for the leader to build alone.
 */
bool
grid_build_shared(GridBuild *bs, GridBuildSpool *sp, const double *lo, const double *hi)
{
	const HiLoadHelper *h = &sp->helper;
	Grid	   *g = bs->g;
	Size		n = hi_list_count(sp->items) + sp->peer.n;
	Size		nside;
	int			k = 0,
				dim = 0;
	double		v = 0;
	double		mid_lo[2] = {lo[0], lo[1]};
	double		mid_hi[2] = {hi[0], hi[1]};
	GridTask	t;
	GridSplitOut out;
	SideSamples ss;
	GridExt    *ext = NULL;
	BufFile    *f;
	int			i;
	bool		exact = !hi_list_spilled(sp->items) && !sp->peer.spilled;
	bool		planned;

	memset(&ss, 0, sizeof(ss));
	if (!worth_sharing(bs, n, &k))
		planned = false;
	else if (exact)
		planned = plan_exact(bs, sp, k, &dim, &v);
	else
		planned = plan_sampled(bs, sp, k, &dim, &v, &ss);
	if (!planned)
	{
		if (sp->peer.n > 0)
			fetch_items(sp);
		return false;
	}
	mid_hi[dim] = v;
	mid_lo[dim] = v;
	memset(&t, 0, sizeof(t));
	t.dim = dim;
	t.v = v;
	t.target = bs->target;
	memcpy(t.lo, mid_lo, sizeof(t.lo));
	memcpy(t.hi, hi, sizeof(t.hi));
	if (!exact)
	{
		/* each side cut into regions on its part of the sample */
		f = h->shared.create(h->shared.arg, GRID_L_SAMPLE);
		grid_split_write_all(f, &ss.est[1], sizeof(double));
		grid_split_write_all(f, &ss.n[1], sizeof(int));
		grid_split_write_all(f, ss.s[1], sizeof(GridItem) * ss.n[1]);
		grid_split_close_shared(f);
		pfree(ss.s[1]);
		t.spread = true;
		ext = grid_ext_begin(bs, ss.s[0], ss.n[0], ss.est[0], lo, mid_hi, sp->budget);
		pfree(ss.s[0]);
	}

	/* both part their items: lower to the leader, upper to the helper */
	task_start(h, GRID_TASK_CUT, &t);
	f = h->shared.create(h->shared.arg, GRID_L_UP);
	grid_split_part_items(sp, dim, v, true, f, ext);
	grid_split_close_shared(f);
	h->finish(h->arg);

	/* the helper builds the upper side, writing its pages itself */
	gw_share(bs->writer, &h->shared);
	task_start(h, GRID_TASK_BUILD, &t);

	/* the lower side: the leader's items, then the helper's */
	grid_split_read_file_items(&h->shared, GRID_W_LOW, sp, ext);
	nside = hi_list_count(sp->items);
	if (exact)
		ereport(DEBUG1,
				(errmsg_internal("hybrid_index: a parallel worker builds %zu of the %zu entries of \"%s\"",
								 n - nside, n, hi_index_name(g->idx))));
	else
		ereport(DEBUG1,
				(errmsg_internal("hybrid_index: a parallel worker builds one side of the %zu entries of \"%s\", cut on samples",
								 n, hi_index_name(g->idx))));
	grid_coords_add(&bs->root, dim, v);
	if (ext)
		grid_ext_finish(bs, ext);
	else
		grid_build_part(bs, sp, lo, mid_hi);

	h->finish(h->arg);
	gw_share(bs->writer, NULL);
	f = h->shared.open(h->shared.arg, GRID_W_OUT);
	grid_split_read_exact(f, &out, sizeof(out));
	if (bs->nsub + out.nsub > bs->maxsub)
	{
		bs->maxsub = bs->nsub + out.nsub;
		bs->sub = bs->sub ? repalloc(bs->sub, sizeof(GridSubdirOut) * bs->maxsub) :
			palloc(sizeof(GridSubdirOut) * bs->maxsub);
	}
	grid_split_read_exact(f, bs->sub + bs->nsub, sizeof(GridSubdirOut) * out.nsub);
	bs->nsub += out.nsub;
	for (i = 0; i < 2; i++)
	{
		int			j;

		for (j = 0; j < out.ncut[i]; j++)
		{
			double		c;

			grid_split_read_exact(f, &c, sizeof(c));
			grid_coords_add(&bs->root, i, c);
		}
	}
	BufFileClose(f);
	bs->done += out.done;
	pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE, bs->done);
	return true;
}
