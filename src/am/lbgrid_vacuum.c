/*
 * lbgrid_vacuum.c
 *	  VACUUM support of lbgrid (the work is in grid/grid_vacuum.c).
 */
#include "postgres.h"

#include "am/lbgrid.h"

IndexBulkDeleteResult *
lbgrid_bulkdelete(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
				  IndexBulkDeleteCallback callback, void *callback_state)
{
	HiIndex    *idx = hi_am_open(info->index);
	double		removed,
				remaining;

	if (stats == NULL)
		stats = palloc0(sizeof(IndexBulkDeleteResult));
	grid_bulk_delete(idx, callback, callback_state, &removed, &remaining);
	stats->tuples_removed += removed;
	stats->num_index_tuples = remaining;
	stats->num_pages = idx->sh->meta.npages;
	return stats;
}

IndexBulkDeleteResult *
lbgrid_vacuumcleanup(IndexVacuumInfo *info, IndexBulkDeleteResult *stats)
{
	HiIndex    *idx;

	if (info->analyze_only)
		return stats;
	idx = hi_am_open(info->index);
	if (stats == NULL)
		stats = palloc0(sizeof(IndexBulkDeleteResult));
	LWLockAcquire(&idx->sh->tree_lock, LW_SHARED);
	stats->num_pages = idx->sh->meta.npages;
	stats->num_index_tuples = (double) (idx->sh->meta.nentries + idx->sh->meta.nnulls);
	LWLockRelease(&idx->sh->tree_lock);
	stats->estimated_count = false;
	return stats;
}
