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
 */
#include "postgres.h"

#include <math.h>

#include "commands/progress.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/buffile.h"

#include "grid/grid.h"
#include "grid/grid_int.h"

/* files of the build's shared file set */
#define GRID_W_KEYS		"grid_w_keys"	/* the helper's keys of one dimension */
#define GRID_W_SAMPLE	"grid_w_sample"	/* a sample of the helper's items */
#define GRID_W_ITEMS	"grid_w_items"	/* all the helper's items */
#define GRID_W_LOW		"grid_w_low"	/* the helper's items below the cut */
#define GRID_L_UP		"grid_l_up"		/* the leader's items above the cut */
#define GRID_L_SAMPLE	"grid_l_sample" /* the sample's items above the cut */
#define GRID_W_OUT		"grid_w_out"	/* what the helper built */

#define SIGN_BIT		UINT64CONST(0x8000000000000000)

/* the helper's tasks, in the order the leader gives them */
typedef enum GridTaskKind
{
	GRID_TASK_KEYS,				/* its keys of dim to GRID_W_KEYS */
	GRID_TASK_SAMPLE,			/* a sample of its items to GRID_W_SAMPLE */
	GRID_TASK_ITEMS,			/* not shared after all: its items to GRID_W_ITEMS */
	GRID_TASK_CUT,				/* its items below (dim, v) to GRID_W_LOW (if
								 * spread, those above into its regions) */
	GRID_TASK_BUILD				/* build over [lo, hi) from its own and GRID_L_UP */
} GridTaskKind;

typedef struct GridTask
{
	GridTaskKind kind;
	int			dim;
	double		v;
	int			target;
	bool		spread;			/* cut on samples: GRID_L_SAMPLE plans its side */
	double		lo[2];			/* its side */
	double		hi[2];
} GridTask;

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

/*
 * The helper's side between its tasks, when cut on samples: the regions
 * its entries are spread into as they are parted (NULL if its sample
 * gave one region: its entries collect in its spool)
 */
typedef struct GridSide
{
	GridBuild	bs;
	GridExt    *ext;
} GridSide;

/* what the helper built: GRID_W_OUT starts with this */
typedef struct GridSplitOut
{
	int			nsub;			/* then GridSubdirOut[nsub] */
	int			ncut[2];		/* then double[ncut[0]], double[ncut[1]] */
	Size		done;
} GridSplitOut;

/* what a worker's collector sends the leader's after the scan */
typedef struct GridExport
{
	GridPeer	peer;
	Size		nnulls;			/* then GridEntry[nnulls] */
	Size		nodd;			/* then GridEntry[nodd] */
} GridExport;

void
grid_build_set_helper(GridBuildSpool *sp, const HiLoadHelper *helper)
{
	sp->helper = *helper;
}

static void
read_exact(BufFile *f, void *p, Size len)
{
	/* BufFileRead reads at most what it is asked; big reads come in pieces */
	while (len > 0)
	{
		Size		chunk = Min(len, (Size) 1 << 30);

		if (BufFileRead(f, p, chunk) != chunk)
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not read a file of a parallel grid build: %m")));
		p = (char *) p + chunk;
		len -= chunk;
	}
}

static void
write_all(BufFile *f, const void *p, Size len)
{
	while (len > 0)
	{
		Size		chunk = Min(len, (Size) 1 << 30);

		BufFileWrite(f, unconstify(void *, p), chunk);
		p = (const char *) p + chunk;
		len -= chunk;
	}
}

static void
write_list(BufFile *f, HiSpillList *l, Size recsize)
{
	char	   *rec;

	if (!hi_list_spilled(l))
	{
		write_all(f, hi_list_array(l), recsize * hi_list_count(l));
		return;
	}
	rec = palloc(recsize);
	hi_list_rewind(l);
	while (hi_list_next(l, rec))
		BufFileWrite(f, rec, recsize);
	pfree(rec);
}

static void
close_shared(BufFile *f)
{
	BufFileExportFileSet(f);
	BufFileClose(f);
}

/*
 * A worker's collector after the scan (AmBuildOps.export): the NULL/EMPTY
 * entries and the boxes without a finite centre go to the leader's chains;
 * the items stay here, and the leader learns how many and where.
 */
void
grid_build_export(GridBuildSpool *sp, BufFile *file)
{
	GridExport x;
	Size		i;

	memset(&x, 0, sizeof(x));
	x.peer.valid = true;
	x.peer.spilled = hi_list_spilled(sp->items);
	x.peer.n = hi_list_count(sp->items);
	x.peer.lo[0] = x.peer.lo[1] = INFINITY;
	x.peer.hi[0] = x.peer.hi[1] = -INFINITY;
	if (!x.peer.spilled)
	{
		GridItem   *items = (GridItem *) hi_list_array(sp->items);

		for (i = 0; i < x.peer.n; i++)
		{
			x.peer.lo[0] = Min(x.peer.lo[0], items[i].c[0]);
			x.peer.hi[0] = Max(x.peer.hi[0], items[i].c[0]);
			x.peer.lo[1] = Min(x.peer.lo[1], items[i].c[1]);
			x.peer.hi[1] = Max(x.peer.hi[1], items[i].c[1]);
		}
	}
	x.nnulls = hi_list_count(sp->nulls);
	x.nodd = hi_list_count(sp->odd);
	write_all(file, &x, sizeof(x));
	write_list(file, sp->nulls, sizeof(GridEntry));
	write_list(file, sp->odd, sizeof(GridEntry));
	hi_list_end(sp->nulls);
	hi_list_end(sp->odd);
	sp->nulls = sp->odd = NULL;
}

/* The leader's collector takes a worker's export; returns its entries */
Size
grid_build_import(GridBuildSpool *sp, BufFile *file)
{
	GridExport x;
	GridEntry	e;
	Size		i;

	read_exact(file, &x, sizeof(x));
	if (sp->peer.valid)
		elog(ERROR, "a grid build has one helper, not more");
	sp->peer = x.peer;
	for (i = 0; i < x.nnulls; i++)
	{
		read_exact(file, &e, sizeof(e));
		hi_list_put(sp->nulls, &e);
	}
	for (i = 0; i < x.nodd; i++)
	{
		read_exact(file, &e, sizeof(e));
		hi_list_put(sp->odd, &e);
	}
	BufFileClose(file);
	return x.peer.n + x.nnulls + x.nodd;
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
 * Items go from one process to the other as their entries alone, half
 * their size: the receiver finds their centres again
 */
static void
write_item(BufFile *f, const GridItem *it)
{
	BufFileWrite(f, unconstify(GridEntry *, &it->e), sizeof(GridEntry));
}

/*
 * n items (as entries) from f into a collector (hi_list_put may spill
 * them), or into the regions of ext
 */
static void
read_items(BufFile *f, GridBuildSpool *sp, GridExt *ext, Size n)
{
	/* in memory they go straight to the end of the array */
	GridItem   *room = ext ? NULL : (GridItem *) hi_list_extend(sp->items, n);
	GridEntry  *buf = palloc(sizeof(GridEntry) * 1024);
	GridItem	it;
	Size		done = 0;

	while (done < n)
	{
		Size		take = Min(n - done, 1024);
		Size		i;

		read_exact(f, buf, sizeof(GridEntry) * take);
		for (i = 0; i < take; i++)
		{
			GridItem   *dst = room ? &room[done + i] : &it;

			dst->e = buf[i];
			if (!grid_ent_center(&dst->e, dst->c, dst->reach))
				elog(ERROR, "a parallel grid build received an entry without a centre");
			if (ext)
				grid_ext_put(ext, dst);
			else if (room == NULL)
				grid_build_put_item(sp, dst);
		}
		done += take;
		CHECK_FOR_INTERRUPTS();
	}
	pfree(buf);
}

/* the items of a file written by the other process, into a collector or ext */
static void
read_file_items(const HiLoadShared *shared, const char *name, GridBuildSpool *sp,
				GridExt *ext)
{
	BufFile    *f = shared->open(shared->arg, name);
	int64		size;

	if (BufFileSeek(f, 0, 0, SEEK_END) != 0 ||
		(size = BufFileSize(f)) < 0 ||
		BufFileSeek(f, 0, 0, SEEK_SET) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not seek in a file of a parallel grid build: %m")));
	read_items(f, sp, ext, (Size) size / sizeof(GridEntry));
	BufFileClose(f);
}

/*
 * Part a collector's items at (dim, v): one side stays (the lower one if
 * keep_lower), or goes into the regions of ext if there is one; the other
 * goes to out, both in their order
 */
static void
part_items(GridBuildSpool *sp, int dim, double v, bool keep_lower, BufFile *out,
		   GridExt *ext)
{
	if (!hi_list_spilled(sp->items))
	{
		GridItem   *items = (GridItem *) hi_list_array(sp->items);
		Size		n = hi_list_count(sp->items);
		Size		kept = 0,
					i;

		for (i = 0; i < n; i++)
		{
			if ((items[i].c[dim] < v) != keep_lower)
				write_item(out, &items[i]);
			else if (ext)
				grid_ext_put(ext, &items[i]);
			else
			{
				if (kept != i)
					items[kept] = items[i];
				kept++;
			}
		}
		hi_list_truncate(sp->items, kept);
	}
	else
	{
		HiSpillList *old = grid_build_take_items(sp);
		GridItem	it;

		hi_list_rewind(old);
		while (hi_list_next(old, &it))
		{
			if ((it.c[dim] < v) != keep_lower)
				write_item(out, &it);
			else if (ext)
				grid_ext_put(ext, &it);
			else
				grid_build_put_item(sp, &it);
		}
		hi_list_end(old);
	}
}

/*
 * A uniform sample of a collector's items: its reservoir, or every
 * stride-th item of an in-memory list (at most max)
 */
static GridItem *
sample_of(GridBuildSpool *sp, Size max, Size *ns)
{
	GridItem   *items;
	GridItem   *out;
	Size		n = hi_list_count(sp->items);
	Size		stride,
				i;

	if (hi_list_spilled(sp->items))
	{
		*ns = sp->nsample;
		return sp->sample;
	}
	items = (GridItem *) hi_list_array(sp->items);
	stride = Max((n + max - 1) / Max(max, 1), 1);
	out = palloc_extended(sizeof(GridItem) * Max((n + stride - 1) / stride, 1), MCXT_ALLOC_HUGE);
	*ns = 0;
	for (i = 0; i < n; i += stride)
		out[(*ns)++] = items[i];
	return out;
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
	read_file_items(&h->shared, GRID_W_ITEMS, sp, NULL);
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
	read_exact(f, keys + nown, sizeof(uint64) * peer->n);
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
	GridItem   *ls = sample_of(sp, (Size) sp->maxsample, &nls);
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
	read_exact(f, &nws, sizeof(nws));
	ws = palloc_extended(sizeof(GridItem) * Max(nws, 1), MCXT_ALLOC_HUGE);
	read_exact(f, ws, sizeof(GridItem) * nws);
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
		write_all(f, &ss.est[1], sizeof(double));
		write_all(f, &ss.n[1], sizeof(int));
		write_all(f, ss.s[1], sizeof(GridItem) * ss.n[1]);
		close_shared(f);
		pfree(ss.s[1]);
		t.spread = true;
		ext = grid_ext_begin(bs, ss.s[0], ss.n[0], ss.est[0], lo, mid_hi, sp->budget);
		pfree(ss.s[0]);
	}

	/* both part their items: lower to the leader, upper to the helper */
	task_start(h, GRID_TASK_CUT, &t);
	f = h->shared.create(h->shared.arg, GRID_L_UP);
	part_items(sp, dim, v, true, f, ext);
	close_shared(f);
	h->finish(h->arg);

	/* the helper builds the upper side, writing its pages itself */
	gw_share(bs->writer, &h->shared);
	task_start(h, GRID_TASK_BUILD, &t);

	/* the lower side: the leader's items, then the helper's */
	read_file_items(&h->shared, GRID_W_LOW, sp, ext);
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
	read_exact(f, &out, sizeof(out));
	if (bs->nsub + out.nsub > bs->maxsub)
	{
		bs->maxsub = bs->nsub + out.nsub;
		bs->sub = bs->sub ? repalloc(bs->sub, sizeof(GridSubdirOut) * bs->maxsub) :
			palloc(sizeof(GridSubdirOut) * bs->maxsub);
	}
	read_exact(f, bs->sub + bs->nsub, sizeof(GridSubdirOut) * out.nsub);
	bs->nsub += out.nsub;
	for (i = 0; i < 2; i++)
	{
		int			j;

		for (j = 0; j < out.ncut[i]; j++)
		{
			double		c;

			read_exact(f, &c, sizeof(c));
			grid_coords_add(&bs->root, i, c);
		}
	}
	BufFileClose(f);
	bs->done += out.done;
	pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE, bs->done);
	return true;
}

/* The helper's side of the build, begun at its cut */
static GridSide *
side_begin(HiIndex *idx, GridBuildSpool *own, const GridTask *t, const HiLoadShared *shared)
{
	GridSide   *side = palloc0(sizeof(GridSide));

	side->bs.g = grid_open(idx);
	side->bs.target = t->target;
	side->bs.writer = gw_begin(side->bs.g);
	gw_share(side->bs.writer, shared);
	if (t->spread)
	{
		BufFile    *f = shared->open(shared->arg, GRID_L_SAMPLE);
		double		est;
		int			ns;
		GridItem   *s;

		read_exact(f, &est, sizeof(est));
		read_exact(f, &ns, sizeof(ns));
		s = palloc_extended(sizeof(GridItem) * Max(ns, 1), MCXT_ALLOC_HUGE);
		read_exact(f, s, sizeof(GridItem) * ns);
		BufFileClose(f);
		side->ext = grid_ext_begin(&side->bs, s, ns, est, t->lo, t->hi, own->budget);
		pfree(s);
	}
	return side;
}

/* The helper's side: its own items above the cut, then the leader's */
static void
help_build(GridBuildSpool *own, const GridTask *t, const HiLoadShared *shared)
{
	GridSplitOut out;
	GridSide   *side = own->side;
	GridBuild  *bs;
	BufFile    *f;
	int			i;

	if (side == NULL)
		elog(ERROR, "a grid build's helper was given its side before its cut");
	bs = &side->bs;
	read_file_items(shared, GRID_L_UP, own, side->ext);
	if (side->ext)
		grid_ext_finish(bs, side->ext);
	else
		grid_build_part(bs, own, t->lo, t->hi);
	gw_end(bs->writer);
	/* the items are consumed: their temporary file goes now */
	hi_list_end(own->items);
	own->items = hi_list_begin(sizeof(GridItem), 0);

	memset(&out, 0, sizeof(out));
	out.nsub = bs->nsub;
	out.ncut[0] = bs->root.n[0];
	out.ncut[1] = bs->root.n[1];
	out.done = bs->done;
	f = shared->create(shared->arg, GRID_W_OUT);
	write_all(f, &out, sizeof(out));
	write_all(f, bs->sub, sizeof(GridSubdirOut) * bs->nsub);
	for (i = 0; i < 2; i++)
		write_all(f, bs->root.v[i], sizeof(double) * bs->root.n[i]);
	close_shared(f);
	own->side = NULL;
	pfree(side);
}

/*
 * A task of the helper (a parallel worker; own: its collector, holding the
 * items of its part of the scan).  The index is new and invisible to
 * everyone else; its builder holds tree_lock and waits for this.
 */
void
grid_bulk_help(HiIndex *idx, GridBuildSpool *own, const void *taskp, Size len,
			   const HiLoadShared *shared)
{
	GridTask	t;
	BufFile    *f;
	Size		n,
				i;

	if (len != sizeof(t) || own == NULL)
		elog(ERROR, "a grid build's task has %zu bytes, not %zu", len, sizeof(t));
	memcpy(&t, taskp, sizeof(t));
	n = hi_list_count(own->items);
	switch (t.kind)
	{
		case GRID_TASK_KEYS:
			{
				GridItem   *items = (GridItem *) hi_list_array(own->items);
				uint64	   *keys = palloc_extended(sizeof(uint64) * Max(n, 1), MCXT_ALLOC_HUGE);

				for (i = 0; i < n; i++)
					keys[i] = hi_radix_key_double(items[i].c[t.dim]);
				f = shared->create(shared->arg, GRID_W_KEYS);
				write_all(f, keys, sizeof(uint64) * n);
				close_shared(f);
				pfree(keys);
				break;
			}
		case GRID_TASK_SAMPLE:
			{
				Size		ns;
				GridItem   *s = sample_of(own, (Size) own->maxsample, &ns);

				f = shared->create(shared->arg, GRID_W_SAMPLE);
				write_all(f, &ns, sizeof(ns));
				write_all(f, s, sizeof(GridItem) * ns);
				close_shared(f);
				if (s != own->sample)
					pfree(s);
				break;
			}
		case GRID_TASK_ITEMS:
			{
				GridItem	it;

				f = shared->create(shared->arg, GRID_W_ITEMS);
				hi_list_rewind(own->items);
				while (hi_list_next(own->items, &it))
					write_item(f, &it);
				close_shared(f);
				break;
			}
		case GRID_TASK_CUT:
			own->side = side_begin(idx, own, &t, shared);
			f = shared->create(shared->arg, GRID_W_LOW);
			part_items(own, t.dim, t.v, false, f, own->side->ext);
			close_shared(f);
			break;
		case GRID_TASK_BUILD:
			help_build(own, &t, shared);
			break;
		default:
			elog(ERROR, "a grid build's task has unknown kind %d", (int) t.kind);
	}
}
