/*
 * am_build.c
 *	  CREATE INDEX for every hybrid_index AM: the heap scan that turns each
 *	  row's geometry into a (box, TID, kind) entry of the core's build type
 *	  and hands it to the core's collector (which keeps its memory within
 *	  maintenance_work_mem), progress reporting, and the bulk load under
 *	  tree_lock.  Also the
 *	  refusal of unlogged tables.
 */
#include "postgres.h"

#include "access/tableam.h"
#include "access/xlog.h"
#include "commands/progress.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "utils/memutils.h"

#include "am/am_common.h"
#include "core/hi_core.h"

typedef struct AmBuildState
{
	const AmBuildOps *ops;
	void	   *spool;
	AmIncludeSpool *incl;		/* INCLUDE rows, if the index has any */
	char	   *item;			/* one entry, filled per heap tuple */
	Size		n;
	MemoryContext tmpcxt;
} AmBuildState;

/* One heap tuple's entry (also for parallel workers, am_build_parallel.c) */
void
am_build_fill(const AmBuildLayout *l, char *item, int32 srid, ItemPointer tid,
			  Datum *values, bool *isnull, MemoryContext tmpcxt)
{
	MemoryContext old;

	memset(item, 0, l->size);
	*(ItemPointer) (item + l->tid_offset) = *tid;
	/* detoasting a big polygon allocates: keep it out of the build's memory */
	old = MemoryContextSwitchTo(tmpcxt);
	*(uint8 *) (item + l->kind_offset) = isnull[0] ? HI_KEY_NULL :
		hi_geom_key(values[0], srid, (HiBox *) (item + l->key_offset),
					(uint8 *) (item + l->flags_offset));
	MemoryContextSwitchTo(old);
	MemoryContextReset(tmpcxt);
}

/* An entry to the collector (the leader's own, or a worker's) */
static void
put_item(void *state, const void *item)
{
	AmBuildState *bs = (AmBuildState *) state;

	bs->ops->put(bs->spool, item);
	bs->n++;
	if ((bs->n & 1023) == 0)
		pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE, bs->n);
}

/* A worker's collected entries to the collector */
static Size
import_items(void *state, BufFile *file, const char *name)
{
	AmBuildState *bs = (AmBuildState *) state;
	Size		n = bs->ops->import(bs->spool, file, name);

	bs->n += n;
	pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE, bs->n);
	return n;
}

static void
presort_items(void *state)
{
	AmBuildState *bs = (AmBuildState *) state;

	if (bs->ops->presort != NULL)
		bs->ops->presort(bs->spool);
}

static void
build_callback(Relation index, ItemPointer tid, Datum *values, bool *isnull,
			   bool tupleIsAlive, void *state)
{
	AmBuildState *bs = (AmBuildState *) state;

	am_build_fill(&bs->ops->layout, bs->item, am_point_srid(index), tid, values, isnull, bs->tmpcxt);
	if (bs->incl)
	{
		const AmBuildLayout *l = &bs->ops->layout;
		MemoryContext old = MemoryContextSwitchTo(bs->tmpcxt);
		HiBox		key;

		/* the row's key: the Z-order of the entry's centre (am_include.c) */
		memcpy(&key, bs->item + l->key_offset, sizeof(key));
		am_include_spool_put(bs->incl, index, tid,
							 hi_key_zorder((HiKeyKind) *(uint8 *) (bs->item + l->kind_offset),
										   &key, *(uint8 *) (bs->item + l->flags_offset)),
							 values, isnull);
		MemoryContextSwitchTo(old);
		MemoryContextReset(bs->tmpcxt);
	}
	put_item(bs, bs->item);
}

/*
 * ambuild: read the heap into the core's collector (ops), whose memory is
 * bounded by maintenance_work_mem, then let the core load the index.
 */
IndexBuildResult *
am_build(Relation heap, Relation index, IndexInfo *info,
		 const AmBuildOps *ops, void *arg)
{
	IndexBuildResult *result;
	AmBuildState bs;
	HiIndex    *idx;
	double		reltuples;
	int			nworkers;
	HiWalImage *img;
	XLogRecPtr	image_start;
	AmParallelBuild *pb;

	if (info->ii_NumIndexKeyAttrs != 1)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("access method %s indexes exactly one geometry column",
						hi_am_ops(index->rd_rel->relam)->name)));

	/*
	 * pg_upgrade restores the schema into the new cluster with every table
	 * empty and then puts the old cluster's relation files in place; ours
	 * come over with hybrid_index_upgrade_files.  Nothing is made here, so
	 * that until then the index refuses (its files are missing) instead of
	 * answering as if empty.
	 */
	if (IsBinaryUpgrade)
		return palloc0(sizeof(IndexBuildResult));

	idx = hi_am_create(index);

	bs.ops = ops;
	bs.n = 0;
	bs.incl = am_include_spool_begin(index, idx);
	bs.item = palloc(ops->layout.size);
	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, AM_PHASE_SCAN);
	nworkers = am_build_workers(heap, index, info);
	pb = nworkers > 0 ?
		am_build_parallel_begin(heap, index, info, ops, nworkers,
								hi_wal_image_wanted(idx->sh)) : NULL;
	bs.spool = ops->begin(am_build_parallel_budget(pb, (Size) maintenance_work_mem * 1024),
						  arg);
	{
		HiLoadShared files;

		/* the workers (and a helper) read the leader's runs where they are */
		if (ops->share != NULL && am_build_parallel_files(pb, &files))
			ops->share(bs.spool, &files, "hybrid_index_run_l");
	}
	bs.tmpcxt = AllocSetContextCreate(CurrentMemoryContext, "hybrid_index build tuple",
									  ALLOCSET_DEFAULT_SIZES);
	if (pb != NULL)
		reltuples = am_build_parallel_scan(pb, heap, index, info, build_callback,
										   &bs, put_item, import_items, presort_items);
	else
		reltuples = table_index_build_scan(heap, index, info, true, true,
										   build_callback, &bs, NULL);
	MemoryContextDelete(bs.tmpcxt);
	pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_TOTAL, bs.n);
	if (ops->report_load)
		pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, AM_PHASE_LOAD);

	{
		HiLoadHelper helper;

		if (ops->set_helper != NULL && am_build_parallel_helper(pb, &helper))
			ops->set_helper(bs.spool, &helper);
	}
	LWLockAcquire(&idx->sh->tree_lock, LW_EXCLUSIVE);
	/* before the image's first record: see hi_index_built_sync */
	image_start = GetXLogInsertRecPtr();
	/* standbys and restored backups get the new files from WAL */
	img = hi_wal_image_begin(idx->sh, am_build_parallel_has_image(pb) ?
							 am_build_parallel_image_sink : NULL, pb);
	PG_TRY();
	{
		ops->load(idx, bs.spool, arg);
		if (bs.incl)
			am_include_spool_load(idx, bs.incl);
		idx->sh->building = false;
		hi_index_checkpoint_built(idx, img != NULL);
	}
	PG_CATCH();
	{
		hi_wal_image_abandon(img);
		PG_RE_THROW();
	}
	PG_END_TRY();
	hi_wal_image_finish(img);
	/* the map file's records come after the worker's of the tier files */
	am_build_parallel_image_done(pb);
	hi_wal_log_image_map(idx->sh);
	/* the files are in WAL: synced now or by the next checkpoint */
	hi_index_built_sync(idx, image_start);
	/* from here on its page writes and checkpoints go to WAL one by one */
	idx->sh->wal_pages = true;
	LWLockRelease(&idx->sh->tree_lock);
	if (pb != NULL)
		am_build_parallel_end(pb);
	pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE, bs.n);

	result = palloc(sizeof(IndexBuildResult));
	result->heap_tuples = reltuples;
	result->index_tuples = bs.n;
	return result;
}

/* ambuildempty: our pages live outside PostgreSQL's storage */
void
am_buildempty(Relation index)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("access method %s does not support unlogged tables",
					hi_am_ops(index->rd_rel->relam)->name),
			 errdetail("Index \"%s\" keeps its pages outside PostgreSQL's storage, which cannot reset them after a crash.",
					   RelationGetRelationName(index))));
}
