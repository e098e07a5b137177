/*
 * am_vacuum.c
 *	  VACUUM callbacks of every hybrid_index AM: the statistics PostgreSQL
 *	  wants around the core's own bulk delete (rtree_vacuum.c,
 *	  grid_vacuum.c).
 */
#include "postgres.h"

#include "am/am_common.h"
#include "core/hi_core.h"

IndexBulkDeleteResult *
am_bulkdelete(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
			  IndexBulkDeleteCallback callback, void *callback_state,
			  AmBulkDeleteFn bulk_delete)
{
	HiIndex    *idx = hi_am_open(info->index);
	double		removed,
				remaining;

	if (stats == NULL)
		stats = palloc0(sizeof(IndexBulkDeleteResult));
	/* VACUUM's reads are not workload for the placement policies */
	idx->maintenance = true;
	PG_TRY();
	{
		bulk_delete(idx, callback, callback_state, &removed, &remaining);
		if (am_include_natts(info->index) > 0)
			am_include_vacuum(idx, callback, callback_state);
	}
	PG_CATCH();
	{
		/* a merge or compaction cut short leaves a half-done state */
		hi_change_failed(idx);
		PG_RE_THROW();
	}
	PG_END_TRY();
	idx->maintenance = false;
	stats->tuples_removed += removed;
	stats->num_index_tuples = remaining;
	stats->num_pages = idx->sh->meta.npages;
	return stats;
}

/* amvacuumcleanup: the index's size, from its metadata */
IndexBulkDeleteResult *
am_vacuumcleanup(IndexVacuumInfo *info, IndexBulkDeleteResult *stats)
{
	HiIndex    *idx;

	if (info->analyze_only)
		return stats;
	idx = hi_am_open(info->index);
	if (stats == NULL)
		stats = palloc0(sizeof(IndexBulkDeleteResult));
	hi_lock_loaded(idx, LW_SHARED);
	stats->num_pages = idx->sh->meta.npages;
	stats->num_index_tuples = (double) (idx->sh->meta.nentries + idx->sh->meta.nnulls);
	LWLockRelease(&idx->sh->tree_lock);
	stats->estimated_count = false;
	return stats;
}
