/*
 * grid_build_split_worker.c
 *	  The helper's side of a grid bulk load shared with a parallel worker
 *	  (grid_build_split.c): the tasks the leader gives it, and its side of
 *	  the root's first cut, which it builds and hands back.
 */
#include "postgres.h"

#include "storage/buffile.h"

#include "grid/grid.h"
#include "grid/grid_int.h"
#include "grid/grid_build_split_int.h"

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

		grid_split_read_exact(f, &est, sizeof(est));
		grid_split_read_exact(f, &ns, sizeof(ns));
		s = palloc_extended(sizeof(GridItem) * Max(ns, 1), MCXT_ALLOC_HUGE);
		grid_split_read_exact(f, s, sizeof(GridItem) * ns);
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
	grid_split_read_file_items(shared, GRID_L_UP, own, side->ext);
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
	grid_split_write_all(f, &out, sizeof(out));
	grid_split_write_all(f, bs->sub, sizeof(GridSubdirOut) * bs->nsub);
	for (i = 0; i < 2; i++)
		grid_split_write_all(f, bs->root.v[i], sizeof(double) * bs->root.n[i]);
	grid_split_close_shared(f);
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
				grid_split_write_all(f, keys, sizeof(uint64) * n);
				grid_split_close_shared(f);
				pfree(keys);
				break;
			}
		case GRID_TASK_SAMPLE:
			{
				Size		ns;
				GridItem   *s = grid_split_sample_of(own, (Size) own->maxsample, &ns);

				f = shared->create(shared->arg, GRID_W_SAMPLE);
				grid_split_write_all(f, &ns, sizeof(ns));
				grid_split_write_all(f, s, sizeof(GridItem) * ns);
				grid_split_close_shared(f);
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
					grid_split_write_item(f, &it);
				grid_split_close_shared(f);
				break;
			}
		case GRID_TASK_CUT:
			own->side = side_begin(idx, own, &t, shared);
			f = shared->create(shared->arg, GRID_W_LOW);
			grid_split_part_items(own, t.dim, t.v, false, f, own->side->ext);
			grid_split_close_shared(f);
			break;
		case GRID_TASK_BUILD:
			help_build(own, &t, shared);
			break;
		default:
			elog(ERROR, "a grid build's task has unknown kind %d", (int) t.kind);
	}
}
