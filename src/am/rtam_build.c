/*
 * rtam_build.c
 *	  CREATE INDEX (bulk load) and one-by-one insertion of the R-tree AMs.
 */
#include "postgres.h"

#include "access/xact.h"

#include "am/am_common.h"
#include "am/rtam.h"
#include "rtree/rtree.h"
#include "core/hi_core.h"

static void *
begin(Size budget, void *arg)
{
	return rt_build_begin(budget);
}

static void
put(void *spool, const void *entry)
{
	rt_build_put((RtBuild *) spool, (const RtLeafEntry *) entry);
}

static void
load(HiIndex *idx, void *spool, void *arg)
{
	rt_bulk_load(idx, (RtBuild *) spool);
}

static void
export(void *spool, BufFile *file)
{
	rt_build_export((RtBuild *) spool, file);
}

static Size
import(void *spool, BufFile *file, const char *name)
{
	return rt_build_import((RtBuild *) spool, file, name);
}

/* a worker's part of the leaf level (the entries came through files) */
static void
help(HiIndex *idx, void *spool, const void *task, Size len, const HiLoadShared *shared)
{
	rt_bulk_help(idx, task, len, shared);
}

static void
set_helper(void *spool, const HiLoadHelper *helper)
{
	rt_build_set_helper((RtBuild *) spool, helper);
}

static void
share(void *spool, const HiLoadShared *files, const char *prefix)
{
	rt_build_share((RtBuild *) spool, files, prefix);
}

static void
presort(void *spool)
{
	rt_build_presort((RtBuild *) spool);
}

/* also a parallel worker's collector (am_build_parallel.c) */
const AmBuildOps rtam_build_ops = {
	.layout = {
		.size = sizeof(RtLeafEntry),
		.key_offset = offsetof(RtLeafEntry, key),
		.tid_offset = offsetof(RtLeafEntry, tid),
		.kind_offset = offsetof(RtLeafEntry, kind),
		.flags_offset = offsetof(RtLeafEntry, flags)
	},
	.report_load = false,
	.begin = begin,
	.put = put,
	.load = load,
	.export = export,
	.import = import,
	.presort = presort,
	.share = share,
	.set_helper = set_helper,
	.help = help
};

/* CREATE INDEX: am_build.c reads the heap, rt_bulk_load packs the tree */
IndexBuildResult *
rtam_build(Relation heap, Relation index, IndexInfo *info)
{
	return am_build(heap, index, info, &rtam_build_ops, NULL);
}

bool
rtam_insert(Relation index, Datum *values, bool *isnull, ItemPointer ht_ctid,
			   Relation heap, IndexUniqueCheck checkUnique, bool indexUnchanged,
			   IndexInfo *info)
{
	HiKeyItem	item;
	char	   *row = NULL;
	Size		rowlen = 0;

	memset(&item, 0, sizeof(item));
	item.kind = isnull[0] ? HI_KEY_NULL :
		hi_geom_key(values[0], am_point_srid(index), &item.key, &item.flags);
	item.tid = *ht_ctid;
	/* in batches: the core reads their leaves ahead (am_insert_defer.c) */
	if (am_include_natts(index) > 0)
		row = am_include_row(index, values, isnull, &rowlen);
	am_insert_deferred(index, &item, row, rowlen, rt_insert_batch);
	return false;
}
