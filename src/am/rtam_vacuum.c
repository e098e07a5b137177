/*
 * rtam_vacuum.c
 *	  VACUUM support of the R-tree AMs (hyrtree, efind); the work is in
 *	  rtree/rtree_vacuum.c, the statistics in am_vacuum.c.
 */
#include "postgres.h"

#include "am/am_common.h"
#include "am/rtam.h"
#include "rtree/rtree.h"

IndexBulkDeleteResult *
rtam_bulkdelete(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
				IndexBulkDeleteCallback callback, void *callback_state)
{
	return am_bulkdelete(info, stats, callback, callback_state, rt_bulk_delete);
}
