/*
 * rtam_build.c
 *	  CREATE INDEX (bulk load), the empty-index build of unlogged tables,
 *	  and one-by-one insertion.
 */
#include "postgres.h"

#include "access/tableam.h"
#include "access/xact.h"
#include "commands/progress.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "utils/memutils.h"

#include "am/rtam.h"
#include "rtree/rtree.h"

typedef struct BuildState
{
	RtBuildItem *items;
	Size		n;
	Size		max;
	MemoryContext tmpcxt;
} BuildState;

static void
build_callback(Relation index, ItemPointer tid, Datum *values, bool *isnull,
			   bool tupleIsAlive, void *state)
{
	BuildState *bs = (BuildState *) state;
	MemoryContext old;
	RtBuildItem *it;

	if (bs->n == bs->max)
	{
		bs->max *= 2;
		bs->items = repalloc_huge(bs->items, sizeof(RtBuildItem) * bs->max);
	}
	it = &bs->items[bs->n];
	memset(it, 0, sizeof(*it));
	it->tid = *tid;
	/* detoasting a big polygon allocates: keep it out of the build's memory */
	old = MemoryContextSwitchTo(bs->tmpcxt);
	it->kind = isnull[0] ? HI_KEY_NULL : hi_geom_box(values[0], &it->box);
	MemoryContextSwitchTo(old);
	MemoryContextReset(bs->tmpcxt);
	bs->n++;
	if ((bs->n & 1023) == 0)
		pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE, bs->n);
}

IndexBuildResult *
rtam_build(Relation heap, Relation index, IndexInfo *info)
{
	IndexBuildResult *result;
	BuildState	bs;
	HiIndex    *idx;
	double		reltuples;
	Size		n;

	if (info->ii_NumIndexAttrs != 1)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("access method %s indexes exactly one geometry column",
						hi_am_ops(index->rd_rel->relam)->name)));

	idx = hi_am_create(index);

	bs.max = 1024;
	bs.n = 0;
	bs.items = palloc_extended(sizeof(RtBuildItem) * bs.max, MCXT_ALLOC_HUGE);
	bs.tmpcxt = AllocSetContextCreate(CurrentMemoryContext, "rtam build tuple",
									  ALLOCSET_DEFAULT_SIZES);
	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, RTAM_PHASE_LOAD);
	reltuples = table_index_build_scan(heap, index, info, true, true,
									   build_callback, &bs, NULL);
	MemoryContextDelete(bs.tmpcxt);
	n = bs.n;
	pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_TOTAL, n);

	LWLockAcquire(&idx->sh->tree_lock, LW_EXCLUSIVE);
	rt_bulk_load(idx, bs.items, n);
	idx->sh->building = false;
	hi_index_checkpoint(idx);
	LWLockRelease(&idx->sh->tree_lock);
	pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE, n);

	result = palloc(sizeof(IndexBuildResult));
	result->heap_tuples = reltuples;
	result->index_tuples = n;
	return result;
}

void
rtam_buildempty(Relation index)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("access method %s does not support unlogged tables",
					hi_am_ops(index->rd_rel->relam)->name),
			 errdetail("Index \"%s\" keeps its pages outside PostgreSQL's storage, which cannot reset them after a crash.",
					   RelationGetRelationName(index))));
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
