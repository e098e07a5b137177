/*
 * lbgrid_inspect.c
 *	  hybrid_index_check, hybrid_index_inspect and hybrid_index_pages for
 *	  lbgrid indexes (called through HiAmOps), under tree_lock in shared
 *	  mode.
 */
#include "postgres.h"

#include "am/lbgrid.h"

void
lbgrid_check(HiIndex *idx)
{
	LWLockAcquire(&idx->sh->tree_lock, LW_SHARED);
	grid_check(grid_open(idx));
	LWLockRelease(&idx->sh->tree_lock);
}

char *
lbgrid_inspect_json(HiIndex *idx)
{
	char	   *json;

	LWLockAcquire(&idx->sh->tree_lock, LW_SHARED);
	json = grid_inspect_json(grid_open(idx), "lbgrid");
	LWLockRelease(&idx->sh->tree_lock);
	return json;
}

HiPageInfo *
lbgrid_pages(HiIndex *idx, Size *n)
{
	HiPageInfo *pages;

	LWLockAcquire(&idx->sh->tree_lock, LW_SHARED);
	pages = grid_pages(grid_open(idx), n);
	LWLockRelease(&idx->sh->tree_lock);
	return pages;
}
