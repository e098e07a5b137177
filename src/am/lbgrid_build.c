/*
 * lbgrid_build.c
 *	  CREATE INDEX (bulk load of the grid), the empty-index build of
 *	  unlogged tables (refused), and insertion.
 *
 * An insertion is logged (redo log, with the inserting transaction's xid)
 * and applied under tree_lock held exclusively; the log is fsynced before
 * the transaction commits (see log/redo_log.c).
 */
#include "postgres.h"

#include "access/tableam.h"
#include "access/xact.h"
#include "commands/defrem.h"
#include "commands/progress.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "utils/memutils.h"

#include "am/lbgrid.h"

typedef struct BuildState
{
	GridEntry  *items;
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
	GridEntry  *e;

	if (bs->n == bs->max)
	{
		bs->max *= 2;
		bs->items = repalloc_huge(bs->items, sizeof(GridEntry) * bs->max);
	}
	e = &bs->items[bs->n];
	memset(e, 0, sizeof(*e));
	e->tid = *tid;
	/* detoasting a big polygon allocates: keep it out of the build's memory */
	old = MemoryContextSwitchTo(bs->tmpcxt);
	e->kind = isnull[0] ? HI_KEY_NULL : hi_geom_box(values[0], &e->box);
	MemoryContextSwitchTo(old);
	MemoryContextReset(bs->tmpcxt);
	bs->n++;
	if ((bs->n & 1023) == 0)
		pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE, bs->n);
}

/*
 * CREATE INDEX of a grid AM.  prepare (optional) sees the new, empty grid
 * before it is loaded and written (hgrid sets up its placement there).
 */
IndexBuildResult *
grid_am_build(Relation heap, Relation index, IndexInfo *info, void (*prepare) (Grid *g))
{
	IndexBuildResult *result;
	BuildState	bs;
	HiIndex    *idx;
	Grid	   *g;
	double		reltuples;

	if (info->ii_NumIndexAttrs != 1)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("access method %s indexes exactly one geometry column",
						get_am_name(index->rd_rel->relam))));

	idx = hi_am_create(index);

	bs.max = 1024;
	bs.n = 0;
	bs.items = palloc_extended(sizeof(GridEntry) * bs.max, MCXT_ALLOC_HUGE);
	bs.tmpcxt = AllocSetContextCreate(CurrentMemoryContext, "lbgrid build tuple",
									  ALLOCSET_DEFAULT_SIZES);
	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, 2);
	reltuples = table_index_build_scan(heap, index, info, true, true,
									   build_callback, &bs, NULL);
	MemoryContextDelete(bs.tmpcxt);
	pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_TOTAL, bs.n);
	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, 3);

	LWLockAcquire(&idx->sh->tree_lock, LW_EXCLUSIVE);
	g = grid_create(idx);
	if (prepare)
		prepare(g);
	grid_bulk_load(g, bs.items, bs.n);
	idx->sh->building = false;
	hi_index_checkpoint(idx);
	LWLockRelease(&idx->sh->tree_lock);
	pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE, bs.n);

	result = palloc(sizeof(IndexBuildResult));
	result->heap_tuples = reltuples;
	result->index_tuples = bs.n;
	return result;
}

IndexBuildResult *
lbgrid_build(Relation heap, Relation index, IndexInfo *info)
{
	return grid_am_build(heap, index, info, NULL);
}

void
lbgrid_buildempty(Relation index)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("access method %s does not support unlogged tables",
					get_am_name(index->rd_rel->relam)),
			 errdetail("Index \"%s\" keeps its pages outside PostgreSQL's storage, which cannot reset them after a crash.",
					   RelationGetRelationName(index))));
}

bool
lbgrid_insert(Relation index, Datum *values, bool *isnull, ItemPointer ht_ctid,
			  Relation heap, IndexUniqueCheck checkUnique, bool indexUnchanged,
			  IndexInfo *info)
{
	HiIndex    *idx = hi_am_open(index);
	GridEntry	e;
	TransactionId xid = GetTopTransactionId();
	Grid	   *g;

	memset(&e, 0, sizeof(e));
	e.kind = isnull[0] ? HI_KEY_NULL : hi_geom_box(values[0], &e.box);
	e.tid = *ht_ctid;

	LWLockAcquire(&idx->sh->tree_lock, LW_EXCLUSIVE);
	g = grid_open(idx);
	hi_log_append(idx, HI_LOG_INSERT, xid, (HiKeyKind) e.kind, &e.box, &e.tid);
	grid_insert(g, &e);
	grid_after_change(g);
	grid_note_applied(g);
	hi_index_after_change(idx);
	LWLockRelease(&idx->sh->tree_lock);
	return false;
}
