/*
 * gridam_inspect.c
 *	  hybrid_index_check, hybrid_index_inspect and hybrid_index_pages for
 *	  lbgrid indexes (called through HiAmOps), under tree_lock in shared
 *	  mode, and hybrid_index_reset_stats (exclusive).
 */
#include "postgres.h"

#include "am/gridam.h"
#include "lbgrid/lbgrid.h"
#include "core/hi_core.h"

void
lbgrid_check(HiIndex *idx)
{
	hi_lock_loaded(idx, LW_SHARED);
	grid_check(grid_open(idx));
	LWLockRelease(&idx->sh->tree_lock);
}

char *
lbgrid_inspect_json(HiIndex *idx)
{
	char	   *json;

	hi_lock_loaded(idx, LW_SHARED);
	json = grid_inspect_json(grid_open(idx), "lbgrid");
	LWLockRelease(&idx->sh->tree_lock);
	return json;
}

HiPageInfo *
lbgrid_pages(HiIndex *idx, Size *n)
{
	HiPageInfo *pages;

	hi_lock_loaded(idx, LW_SHARED);
	pages = grid_pages(grid_open(idx), n);
	LWLockRelease(&idx->sh->tree_lock);
	return pages;
}

/*
 * hybrid_index_reset_stats: zero the grid's event counters (splits, merges,
 * buffer hits, misses, batches, cold-list flushes) and LB-Grid's
 * (compactions, rewrites, log-buckets sealed and freed).  tree_lock
 * exclusive keeps writers out; buf_lock the buffers' bookkeeping.
 */
void
lbgrid_reset_stats(HiIndex *idx)
{
	Grid	   *g;
	int			i;

	hi_lock_for_change(idx);
	g = grid_open(idx);
	MemSet(&g->gs->cnt, 0, sizeof(g->gs->cnt));
	LWLockAcquire(&g->gs->buf_lock, LW_EXCLUSIVE);
	for (i = 0; i < 2; i++)
		MemSet(&g->gs->buf[i].st, 0, sizeof(g->gs->buf[i].st));
	LWLockRelease(&g->gs->buf_lock);
	if (g->gs->mode == GRID_MODE_LOG)
	{
		LbShared   *lb = lb_shared(g);

		lb->compactions = lb->rewrites = lb->freed = lb->sealed = 0;
	}
	LWLockRelease(&idx->sh->tree_lock);
}
