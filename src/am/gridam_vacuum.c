/*
 * gridam_vacuum.c
 *	  VACUUM support of lbgrid (the work is in grid/grid_vacuum.c, the
 *	  statistics in am_vacuum.c).
 */
#include "postgres.h"

#include "am/am_common.h"
#include "am/gridam.h"

IndexBulkDeleteResult *
lbgrid_bulkdelete(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
				  IndexBulkDeleteCallback callback, void *callback_state)
{
	return am_bulkdelete(info, stats, callback, callback_state, grid_bulk_delete);
}
