/*
 * grid_merge.c
 *	  Deletion and merging (Algorithm 3).  A bucket whose occupancy drops
 *	  below the merge threshold (30 % by default) is merged with a buddy:
 *	  a neighbouring region of the same sub-directory whose union with it
 *	  is a box, chosen as the emptiest one whose entries fit together in
 *	  (100 - threshold) % of a bucket, so that a merge is not undone by the
 *	  next few insertions.  Boundaries no region ends at any more are then
 *	  removed from the sub-scale, and a sub-directory left small is joined
 *	  with a neighbour (grid_subdir.c), which may remove root boundaries.
 *
 * tree_lock is held exclusively by the callers.
 */
#include "postgres.h"

#include "miscadmin.h"

#include "grid/grid.h"
#include "grid/grid_int.h"
#include "log/redo_log.h"

static inline bool
same_entry(const GridEntry *a, const GridEntry *b)
{
	return ItemPointerEquals((ItemPointer) &a->tid, (ItemPointer) &b->tid) &&
		a->kind == b->kind && a->flags == b->flags &&
		memcmp(&a->key, &b->key, sizeof(HiBox)) == 0;
}

/* A removal VACUUM makes: logged (durable at the end of ambulkdelete) */
void
grid_note_delete(Grid *g, const GridEntry *e)
{
	hi_log_append(g->idx, HI_LOG_DELETE, InvalidTransactionId,
				  (HiKeyKind) e->kind, &e->key, e->flags, (ItemPointer) &e->tid);
	if (e->kind == HI_KEY_BOX)
		g->sh->meta.nentries--;
	else
		g->sh->meta.nnulls--;
}

/*
 * Redo of a deletion: remove one entry if the index has it (the insertion
 * may have been skipped by the replay, its transaction having aborted).
 */
bool
grid_delete(Grid *g, const GridEntry *e)
{
	double		c[2];
	float4		reach[2];
	GridDirView rv;
	GridDirView dv;
	uint32		dirpage;
	uint32		b;
	int			f;
	GridBucketData bd;
	int			i;
	bool		found = false;

	if (e->kind != HI_KEY_BOX || !grid_ent_center(e, c, reach))
	{
		uint32		chain = e->kind != HI_KEY_BOX ? g->gs->nulls : g->gs->odd;

		if (chain == HI_INVALID_PAGE || !gc_remove(g, chain, e))
			return false;
		if (e->kind == HI_KEY_BOX)
			g->sh->meta.nentries--;
		else
			g->sh->meta.nnulls--;
		return true;
	}
	grid_root(g, &rv);
	dirpage = rv.r[gdv_locate(&rv, c[GRID_X], c[GRID_Y])].ref;
	gbuf_pin(g, GRID_BUF_DIR, &dirpage, 1, &f);
	gdv_init(&dv, GRID_DIR_FLAT(gbuf_page(g, GRID_BUF_DIR, f)));
	b = dv.r[gdv_locate(&dv, c[GRID_X], c[GRID_Y])].ref;
	gbuf_unpin(g, GRID_BUF_DIR, f);

	g->store->load(g, &b, 1, &bd);
	for (i = 0; i < bd.n && !found; i++)
		found = same_entry(&bd.e[i], e);
	if (found)
	{
		g->store->remove(g, b, e);
		g->sh->meta.nentries--;
	}
	if (bd.e)
		pfree(bd.e);
	return found;
}

/*
 * Algorithm 3, lines 6-18, once: merge the bucket whose region holds
 * (x, y) with its emptiest fitting buddy.  Returns the root region of its
 * sub-directory if a merge happened, else -1.
 */
static int
merge_once(Grid *g, double x, double y, Size *dirsize)
{
	uint32		cap = (uint32) g->gs->capacity;
	uint32		low = cap * g->merge_pct / 100;
	uint32		fit = cap * (100 - g->merge_pct) / 100;
	GridDirView rv;
	GridDirView dv;
	GridDir    *d;
	uint32		dirpage;
	int			si;
	int			bi;
	int			f;
	uint32		n;
	int		   *cand;
	int			nc;
	int			best = -1;
	uint32		bestn = 0;
	int			j;
	uint32		pair[2];
	GridBucketData bd[2];
	GridEntry  *all;

	hi_change_touched(g->sh);
	grid_root(g, &rv);
	si = gdv_locate(&rv, x, y);
	dirpage = rv.r[si].ref;
	gbuf_pin(g, GRID_BUF_DIR, &dirpage, 1, &f);
	gdv_init(&dv, GRID_DIR_FLAT(gbuf_page(g, GRID_BUF_DIR, f)));
	*dirsize = gd_flat_size(dv.h->n[0], dv.h->n[1], dv.h->nr);
	bi = gdv_locate(&dv, x, y);
	n = g->store->count(g, dv.r[bi].ref);
	if (n >= low)
	{
		gbuf_unpin(g, GRID_BUF_DIR, f);
		return -1;
	}

	d = gd_decode(GRID_DIR_FLAT(gbuf_page(g, GRID_BUF_DIR, f)));
	cand = palloc(sizeof(int) * d->nr);
	nc = gd_buddies(d, bi, cand);
	for (j = 0; j < nc; j++)
	{
		uint32		m = g->store->count(g, d->r[cand[j]].ref);

		if (n + m <= fit && (best < 0 || m < bestn))
		{
			best = cand[j];
			bestn = m;
		}
	}
	if (best < 0)
	{
		gbuf_unpin(g, GRID_BUF_DIR, f);
		return -1;
	}

	/* lines 13-18: restore both buckets, keep B, drop mB */
	pair[0] = d->r[bi].ref;
	pair[1] = d->r[best].ref;
	g->store->load(g, pair, 2, bd);
	all = palloc(sizeof(GridEntry) * Max(bd[0].n + bd[1].n, 1));
	if (bd[0].n > 0)
		memcpy(all, bd[0].e, sizeof(GridEntry) * bd[0].n);
	if (bd[1].n > 0)
		memcpy(all + bd[0].n, bd[1].e, sizeof(GridEntry) * bd[1].n);
	g->store->replace(g, pair[0], all, bd[0].n + bd[1].n);
	g->store->drop(g, pair[1]);
	gd_merge_regions(d, bi, best);
	/* lines 19-21: boundaries no longer used leave the sub-scales */
	g->gs->cnt.boundaries_removed += gd_remove_unneeded(d);
	gd_encode(d, GRID_DIR_FLAT(gbuf_page(g, GRID_BUF_DIR, f)));
	((HiPageHeader *) gbuf_page(g, GRID_BUF_DIR, f))->nentries = d->nr;
	gbuf_dirty(g, GRID_BUF_DIR, f);
	gbuf_unpin(g, GRID_BUF_DIR, f);
	*dirsize = gd_size(d);
	g->gs->cnt.merges++;
	grid_bump(g);
	pfree(all);
	return si;
}

/*
 * Algorithm 3, lines 6-22, for the bucket whose region holds (x, y):
 * merge it while it is below the threshold and has a fitting buddy (a
 * merged bucket may merge again), then propagate to the root.
 */
void
grid_try_merge(Grid *g, double x, double y)
{
	GridDirView rv;
	int			si;
	int			rounds;
	Size		dirsize = 0;

	if (g->merge_pct <= 0)
		return;
	for (rounds = 0; rounds < 64; rounds++)
	{
		if (merge_once(g, x, y, &dirsize) < 0)
			break;
		CHECK_FOR_INTERRUPTS();
	}
	/* propagate to the root: join a small sub-directory with a neighbour */
	while (dirsize < (Size) grid_dir_capacity(g) * g->merge_pct / 100)
	{
		grid_root(g, &rv);
		if (rv.h->nr < 2)
			break;
		si = gdv_locate(&rv, x, y);
		if (!grid_merge_subdir(g, si))
			break;
		grid_root(g, &rv);
		si = gdv_locate(&rv, x, y);
		{
			uint32		page = rv.r[si].ref;
			int			f;
			GridDirView dv;

			gbuf_pin(g, GRID_BUF_DIR, &page, 1, &f);
			gdv_init(&dv, GRID_DIR_FLAT(gbuf_page(g, GRID_BUF_DIR, f)));
			dirsize = gd_flat_size(dv.h->n[0], dv.h->n[1], dv.h->nr);
			gbuf_unpin(g, GRID_BUF_DIR, f);
		}
		CHECK_FOR_INTERRUPTS();
	}
}
