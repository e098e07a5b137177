/*
 * rtam_build.c
 *	  CREATE INDEX (bulk load) and one-by-one insertion of the R-tree AMs.
 */
#include "postgres.h"

#include "access/xact.h"

#include "am/am_common.h"
#include "am/rtam.h"
#include "rtree/rtree.h"

static const AmBuildLayout rt_build_layout = {
	.size = sizeof(RtBuildItem),
	.box_offset = offsetof(RtBuildItem, box),
	.tid_offset = offsetof(RtBuildItem, tid),
	.kind_offset = offsetof(RtBuildItem, kind)
};

static void
load(HiIndex *idx, void *items, Size n, void *arg)
{
	rt_bulk_load(idx, (RtBuildItem *) items, n);
}

/* CREATE INDEX: am_build.c reads the heap, rt_bulk_load packs the tree */
IndexBuildResult *
rtam_build(Relation heap, Relation index, IndexInfo *info)
{
	return am_build(heap, index, info, &rt_build_layout, false, load, NULL);
}

bool
rtam_insert(Relation index, Datum *values, bool *isnull, ItemPointer ht_ctid,
			   Relation heap, IndexUniqueCheck checkUnique, bool indexUnchanged,
			   IndexInfo *info)
{
	HiIndex    *idx = hi_am_open(index);
	HiBox		box;
	HiKeyKind	kind;

	memset(&box, 0, sizeof(box));
	kind = isnull[0] ? HI_KEY_NULL : hi_geom_box(values[0], &box);
	rt_insert(idx, kind, &box, ht_ctid, GetTopTransactionId());
	return false;
}
