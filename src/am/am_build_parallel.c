/*
 * am_build_parallel.c
 *	  Parallel CREATE INDEX for every hybrid_index AM (issue 21): the heap
 *	  scan, where a build of points spends most of its time (reading each
 *	  tuple, detoasting its geometry, computing its box), is shared by the
 *	  leader and max_parallel_maintenance_workers workers through a
 *	  parallel table scan.  Each worker writes its entries to its own file
 *	  of a shared file set; the leader, once its own part is done, hands
 *	  them to the core's collector.  The load (STR packing, the grid build)
 *	  stays serial, so the index does not depend on how the scan was split.
 *
 * PostgreSQL 15 plans parallel builds for btree alone (index_build sets
 * ii_ParallelWorkers only there): the worker count comes from
 * plan_create_index_workers, which weighs the table's size, the
 * parallel_workers reloption and max_parallel_maintenance_workers, as
 * pgvector does.
 */
#include "postgres.h"

#include "access/parallel.h"
#include "access/relscan.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/index.h"
#include "miscadmin.h"
#include "optimizer/optimizer.h"
#include "storage/buffile.h"
#include "storage/sharedfileset.h"
#include "storage/spin.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "am/am_common.h"

#define PARALLEL_KEY_BUILD	UINT64CONST(0x4859420000000001)
#define PARALLEL_KEY_SCAN	UINT64CONST(0x4859420000000002)

/* What the leader shares with its workers */
typedef struct HiParallelBuild
{
	Oid			heaprelid;
	Oid			indexrelid;
	bool		isconcurrent;
	AmBuildLayout layout;
	slock_t		mutex;
	double		reltuples;		/* live tuples the workers saw */
	SharedFileSet fileset;		/* one file of entries per worker */
} HiParallelBuild;

typedef struct WorkerState
{
	const AmBuildLayout *layout;
	BufFile    *file;
	char	   *item;
	MemoryContext tmpcxt;
} WorkerState;

PGDLLEXPORT void hi_build_worker_main(dsm_segment *seg, shm_toc *toc);

/* How many workers a build of index on heap gets (0: a serial build) */
int
am_build_workers(Relation heap, Relation index, IndexInfo *info)
{
	if (!IsNormalProcessingMode() || IsParallelWorker() ||
		max_parallel_maintenance_workers <= 0 ||
		heap->rd_rel->relpersistence == RELPERSISTENCE_TEMP)
		return 0;
	return plan_create_index_workers(RelationGetRelid(heap), RelationGetRelid(index));
}

static void
worker_callback(Relation index, ItemPointer tid, Datum *values, bool *isnull,
				bool tupleIsAlive, void *state)
{
	WorkerState *ws = (WorkerState *) state;

	am_build_fill(ws->layout, ws->item, tid, values, isnull, ws->tmpcxt);
	BufFileWrite(ws->file, ws->item, ws->layout->size);
}

static char *
file_name(char *buf, int worker)
{
	snprintf(buf, MAXPGPATH, "hybrid_index_build_%d", worker);
	return buf;
}

/*
 * The heap scan of a build, shared with nworkers workers: cb gets the
 * leader's part (as in a serial build), put every entry of the workers'.
 * Returns the live tuples seen, or -1 if no worker could be launched
 * (the caller scans serially then).
 */
double
am_build_scan_parallel(Relation heap, Relation index, IndexInfo *info,
					   const AmBuildLayout *layout, int nworkers,
					   IndexBuildCallback cb, void *cbstate,
					   void (*put) (void *state, const void *item))
{
	ParallelContext *pcxt;
	Snapshot	snapshot;
	Size		scan_size;
	HiParallelBuild *shared;
	ParallelTableScanDesc pscan;
	TableScanDesc scan;
	double		reltuples;
	int			i;

	EnterParallelMode();
	pcxt = CreateParallelContext("hybrid_index", "hi_build_worker_main", nworkers);
	/* as btree: a concurrent build sees an MVCC snapshot, others every tuple */
	snapshot = info->ii_Concurrent ? RegisterSnapshot(GetTransactionSnapshot()) : SnapshotAny;
	scan_size = table_parallelscan_estimate(heap, snapshot);
	shm_toc_estimate_chunk(&pcxt->estimator, sizeof(HiParallelBuild));
	shm_toc_estimate_chunk(&pcxt->estimator, scan_size);
	shm_toc_estimate_keys(&pcxt->estimator, 2);
	InitializeParallelDSM(pcxt);
	if (pcxt->seg == NULL)
	{
		if (IsMVCCSnapshot(snapshot))
			UnregisterSnapshot(snapshot);
		DestroyParallelContext(pcxt);
		ExitParallelMode();
		return -1;
	}
	shared = shm_toc_allocate(pcxt->toc, sizeof(HiParallelBuild));
	shared->heaprelid = RelationGetRelid(heap);
	shared->indexrelid = RelationGetRelid(index);
	shared->isconcurrent = info->ii_Concurrent;
	shared->layout = *layout;
	SpinLockInit(&shared->mutex);
	shared->reltuples = 0;
	SharedFileSetInit(&shared->fileset, pcxt->seg);
	pscan = shm_toc_allocate(pcxt->toc, scan_size);
	table_parallelscan_initialize(heap, pscan, snapshot);
	shm_toc_insert(pcxt->toc, PARALLEL_KEY_BUILD, shared);
	shm_toc_insert(pcxt->toc, PARALLEL_KEY_SCAN, pscan);

	/* with no worker launched the leader takes the whole parallel scan */
	LaunchParallelWorkers(pcxt);
	ereport(DEBUG1,
			(errmsg_internal("hybrid_index: building index \"%s\" with %d of %d parallel workers",
							 RelationGetRelationName(index), pcxt->nworkers_launched,
							 nworkers)));

	/* the leader's part, then the workers' */
	scan = table_beginscan_parallel(heap, pscan);
	reltuples = table_index_build_scan(heap, index, info, true, true, cb, cbstate, scan);
	WaitForParallelWorkersToFinish(pcxt);
	reltuples += shared->reltuples;
	{
		char	   *item = palloc(layout->size);
		char		name[MAXPGPATH];

		for (i = 0; i < pcxt->nworkers_launched; i++)
		{
			BufFile    *f = BufFileOpenFileSet(&shared->fileset.fs, file_name(name, i),
											   O_RDONLY, true);

			if (f == NULL)
				continue;
			while (BufFileRead(f, item, layout->size) == layout->size)
			{
				put(cbstate, item);
				CHECK_FOR_INTERRUPTS();
			}
			BufFileClose(f);
		}
		pfree(item);
	}
	if (IsMVCCSnapshot(snapshot))
		UnregisterSnapshot(snapshot);
	DestroyParallelContext(pcxt);
	ExitParallelMode();
	return reltuples;
}

/* A worker: its part of the heap scan, entries to its file */
void
hi_build_worker_main(dsm_segment *seg, shm_toc *toc)
{
	HiParallelBuild *shared = shm_toc_lookup(toc, PARALLEL_KEY_BUILD, false);
	ParallelTableScanDesc pscan = shm_toc_lookup(toc, PARALLEL_KEY_SCAN, false);
	/* the leader holds these already; workers join its lock group */
	LOCKMODE	heap_mode = shared->isconcurrent ? ShareUpdateExclusiveLock : ShareLock;
	LOCKMODE	index_mode = shared->isconcurrent ? RowExclusiveLock : AccessExclusiveLock;
	Relation	heap = table_open(shared->heaprelid, heap_mode);
	Relation	index = index_open(shared->indexrelid, index_mode);
	IndexInfo  *info = BuildIndexInfo(index);
	WorkerState ws;
	char		name[MAXPGPATH];
	TableScanDesc scan;
	double		reltuples;

	info->ii_Concurrent = shared->isconcurrent;
	SharedFileSetAttach(&shared->fileset, seg);
	ws.layout = &shared->layout;
	ws.file = BufFileCreateFileSet(&shared->fileset.fs, file_name(name, ParallelWorkerNumber));
	ws.item = palloc(shared->layout.size);
	ws.tmpcxt = AllocSetContextCreate(CurrentMemoryContext, "hybrid_index build tuple",
									  ALLOCSET_DEFAULT_SIZES);
	scan = table_beginscan_parallel(heap, pscan);
	reltuples = table_index_build_scan(heap, index, info, true, false,
									   worker_callback, &ws, scan);
	BufFileClose(ws.file);
	SpinLockAcquire(&shared->mutex);
	shared->reltuples += reltuples;
	SpinLockRelease(&shared->mutex);
	index_close(index, index_mode);
	table_close(heap, heap_mode);
}
