/*
 * am_build_parallel.c
 *	  Parallel CREATE INDEX for every hybrid_index AM (issue 21): the heap
 *	  scan, where a build of points spends most of its time (reading each
 *	  tuple, detoasting its geometry, computing its box), is shared by the
 *	  leader and max_parallel_maintenance_workers workers through a
 *	  parallel table scan.  Each worker writes its entries to its own file
 *	  of a shared file set and says so through a message queue; the leader,
 *	  once its own part is done, hands them to the core's collector.  A
 *	  collector with export and import runs in each worker too and writes
 *	  the file itself: the R-tree workers sort their entries by centre x
 *	  into runs in the build's shared file set (AmBuildOps.share; the
 *	  leader's runs go there too) and list them, and the leader merges all
 *	  the runs where they are; the grid workers keep their entries and
 *	  export only what the leader needs to plan.  With one worker, a core
 *	  with a helper task (both families) shares the load: the worker, once
 *	  its part of the scan is exported, takes the load's tasks from a third
 *	  queue until the leader is done with it (am_build_parallel_helper
 *	  gives the leader's load the means), writes its pages itself and
 *	  streams them into WAL
 *	  (hi_wal_image_join), and says so after each task.  The R-tree's
 *	  worker packs half the leaf level, the grid's builds one side of the
 *	  root's first cut; the two processes share temporary files and a lock
 *	  for the new index's shared state.  With more workers the load stays
 *	  in the leader, and the first worker inserts the WAL records of the
 *	  files the load writes, which the leader passes to it through a second
 *	  queue (log/wal_image.c's sink): those records were a quarter of a
 *	  5M-point parallel build's time.
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
#include "storage/shm_mq.h"
#include "storage/spin.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "am/am_common.h"
#include "core/hi_core.h"
#include "log/redo_log.h"

#define PARALLEL_KEY_BUILD	UINT64CONST(0x4859420000000001)
#define PARALLEL_KEY_SCAN	UINT64CONST(0x4859420000000002)
#define PARALLEL_KEY_DONE	UINT64CONST(0x4859420000000003)
#define PARALLEL_KEY_IMAGE	UINT64CONST(0x4859420000000004)
#define PARALLEL_KEY_TASK	UINT64CONST(0x4859420000000005)

/* a worker's queue to say its part of the scan is done */
#define DONE_QUEUE_SIZE		1024
/* the queue of WAL records from the leader to the first worker */
#define IMAGE_QUEUE_SIZE	(4 * 1024 * 1024)
/* the queue of the load's task from the leader to the first worker */
#define TASK_QUEUE_SIZE		(16 * 1024)

/*
 * The cores' build operations a worker can run (a collector, a helper
 * task), by their number in shared memory
 */
static const AmBuildOps *const known_ops[] = {&rtam_build_ops, &gridam_build_ops};

/* What the leader shares with its workers */
typedef struct HiParallelBuild
{
	Oid			heaprelid;
	Oid			indexrelid;
	bool		isconcurrent;
	AmBuildLayout layout;
	int			ops;			/* in known_ops, or -1 */
	bool		collect;		/* workers run ops' collector (else raw entries) */
	Size		budget;			/* a worker collector's memory */
	slock_t		mutex;
	double		reltuples;		/* live tuples the workers saw */
	bool		image;			/* the first worker inserts WAL records */
	bool		split;			/* the first worker may get a task of the load */
	LWLock		lock;			/* HiLoadShared.lock */
	SharedFileSet fileset;		/* one file of entries per worker */
} HiParallelBuild;

/* The leader's side of a parallel build */
struct AmParallelBuild
{
	ParallelContext *pcxt;
	Snapshot	snapshot;
	HiParallelBuild *shared;
	ParallelTableScanDesc pscan;
	const AmBuildLayout *layout;
	int			participants;	/* workers launched and the leader */
	shm_mq_handle **done;		/* per worker launched */
	shm_mq_handle *image;		/* to the first worker, or NULL */
	shm_mq_handle *task;		/* to the first worker, or NULL */
};

typedef struct WorkerState
{
	const AmBuildLayout *layout;
	const AmBuildOps *ops;		/* the collector, or NULL: raw entries */
	void	   *spool;
	BufFile    *file;
	char	   *item;
	MemoryContext tmpcxt;
} WorkerState;

PGDLLEXPORT void hi_build_worker_main(dsm_segment *seg, shm_toc *toc);

/* files of the build's shared file set, in any process (arg: HiParallelBuild) */
static BufFile *
fileset_create(void *arg, const char *name)
{
	return BufFileCreateFileSet(&((HiParallelBuild *) arg)->fileset.fs, name);
}

static BufFile *
fileset_open(void *arg, const char *name)
{
	return BufFileOpenFileSet(&((HiParallelBuild *) arg)->fileset.fs, name, O_RDONLY, false);
}

/* the leader's and the helper's changes of the new index, one at a time */
static void
shared_lock(void *arg)
{
	LWLockAcquire(&((HiParallelBuild *) arg)->lock, LW_EXCLUSIVE);
}

static void
shared_unlock(void *arg)
{
	LWLockRelease(&((HiParallelBuild *) arg)->lock);
}

static void
shared_of(HiParallelBuild *shared, HiLoadShared *out)
{
	out->arg = shared;
	out->create = fileset_create;
	out->open = fileset_open;
	out->lock = shared_lock;
	out->unlock = shared_unlock;
}

/* How many workers a build of index on heap gets (0: a serial build) */
int
am_build_workers(Relation heap, Relation index, IndexInfo *info)
{
	if (!IsNormalProcessingMode() || IsParallelWorker() ||
		max_parallel_maintenance_workers <= 0 ||
		heap->rd_rel->relpersistence == RELPERSISTENCE_TEMP ||
		am_include_natts(index) > 0)
		return 0;
	return plan_create_index_workers(RelationGetRelid(heap), RelationGetRelid(index));
}

static void
worker_callback(Relation index, ItemPointer tid, Datum *values, bool *isnull,
				bool tupleIsAlive, void *state)
{
	WorkerState *ws = (WorkerState *) state;

	am_build_fill(ws->layout, ws->item, am_point_srid(index), tid, values, isnull, ws->tmpcxt);
	if (ws->ops != NULL)
		ws->ops->put(ws->spool, ws->item);
	else
		BufFileWrite(ws->file, ws->item, ws->layout->size);
}

static char *
file_name(char *buf, int worker)
{
	snprintf(buf, MAXPGPATH, "hybrid_index_build_%d", worker);
	return buf;
}

/*
 * Start a parallel build with nworkers workers (NULL if no parallel context
 * could be set up: the caller builds serially).  image: the first worker
 * is to insert the WAL records of the load (am_build_parallel_image_sink).
 */
AmParallelBuild *
am_build_parallel_begin(Relation heap, Relation index, IndexInfo *info,
						const AmBuildOps *ops, int nworkers, bool image)
{
	const AmBuildLayout *layout = &ops->layout;
	AmParallelBuild *pb = palloc0(sizeof(AmParallelBuild));
	ParallelContext *pcxt;
	Size		scan_size;
	HiParallelBuild *shared;
	char	   *done;
	shm_mq	   *imq = NULL;
	shm_mq	   *tmq = NULL;
	int			known = -1;
	bool		split;
	int			i;

	for (i = 0; i < lengthof(known_ops); i++)
		if (known_ops[i] == ops)
			known = i;
	split = known >= 0 && ops->help != NULL && ops->set_helper != NULL && nworkers == 1;
	/* with a helper each process logs the pages it writes */
	if (split)
		image = false;
	EnterParallelMode();
	pcxt = CreateParallelContext("hybrid_index", "hi_build_worker_main", nworkers);
	/* as btree: a concurrent build sees an MVCC snapshot, others every tuple */
	pb->snapshot = info->ii_Concurrent ? RegisterSnapshot(GetTransactionSnapshot()) : SnapshotAny;
	scan_size = table_parallelscan_estimate(heap, pb->snapshot);
	shm_toc_estimate_chunk(&pcxt->estimator, sizeof(HiParallelBuild));
	shm_toc_estimate_chunk(&pcxt->estimator, scan_size);
	shm_toc_estimate_chunk(&pcxt->estimator, (Size) DONE_QUEUE_SIZE * nworkers);
	shm_toc_estimate_keys(&pcxt->estimator, 3);
	if (image)
	{
		shm_toc_estimate_chunk(&pcxt->estimator, IMAGE_QUEUE_SIZE);
		shm_toc_estimate_keys(&pcxt->estimator, 1);
	}
	if (split)
	{
		shm_toc_estimate_chunk(&pcxt->estimator, TASK_QUEUE_SIZE);
		shm_toc_estimate_keys(&pcxt->estimator, 1);
	}
	InitializeParallelDSM(pcxt);
	if (pcxt->seg == NULL)
	{
		if (IsMVCCSnapshot(pb->snapshot))
			UnregisterSnapshot(pb->snapshot);
		DestroyParallelContext(pcxt);
		ExitParallelMode();
		pfree(pb);
		return NULL;
	}
	shared = shm_toc_allocate(pcxt->toc, sizeof(HiParallelBuild));
	shared->heaprelid = RelationGetRelid(heap);
	shared->indexrelid = RelationGetRelid(index);
	shared->isconcurrent = info->ii_Concurrent;
	shared->layout = *layout;
	shared->ops = known;
	shared->collect = known >= 0 && ops->export != NULL && ops->import != NULL &&
		(split || !ops->keeps_entries);
	/* as btree: maintenance_work_mem is shared by the participants */
	shared->budget = (Size) maintenance_work_mem * 1024 / (nworkers + 1);
	SpinLockInit(&shared->mutex);
	shared->reltuples = 0;
	shared->image = image;
	shared->split = split;
	LWLockInitialize(&shared->lock, hi_shared->tranche_id);
	SharedFileSetInit(&shared->fileset, pcxt->seg);
	pb->pscan = shm_toc_allocate(pcxt->toc, scan_size);
	table_parallelscan_initialize(heap, pb->pscan, pb->snapshot);
	done = shm_toc_allocate(pcxt->toc, (Size) DONE_QUEUE_SIZE * nworkers);
	for (i = 0; i < nworkers; i++)
		shm_mq_set_receiver(shm_mq_create(done + (Size) i * DONE_QUEUE_SIZE,
										  DONE_QUEUE_SIZE), MyProc);
	shm_toc_insert(pcxt->toc, PARALLEL_KEY_BUILD, shared);
	shm_toc_insert(pcxt->toc, PARALLEL_KEY_SCAN, pb->pscan);
	shm_toc_insert(pcxt->toc, PARALLEL_KEY_DONE, done);
	if (image)
	{
		imq = shm_mq_create(shm_toc_allocate(pcxt->toc, IMAGE_QUEUE_SIZE), IMAGE_QUEUE_SIZE);
		shm_mq_set_sender(imq, MyProc);
		shm_toc_insert(pcxt->toc, PARALLEL_KEY_IMAGE, imq);
	}
	if (shared->split)
	{
		tmq = shm_mq_create(shm_toc_allocate(pcxt->toc, TASK_QUEUE_SIZE), TASK_QUEUE_SIZE);
		shm_mq_set_sender(tmq, MyProc);
		shm_toc_insert(pcxt->toc, PARALLEL_KEY_TASK, tmq);
	}

	/* with no worker launched the leader takes the whole parallel scan */
	LaunchParallelWorkers(pcxt);
	ereport(DEBUG1,
			(errmsg_internal("hybrid_index: building index \"%s\" with %d of %d parallel workers",
							 RelationGetRelationName(index), pcxt->nworkers_launched,
							 nworkers)));
	pb->done = palloc0(sizeof(shm_mq_handle *) * Max(pcxt->nworkers_launched, 1));
	for (i = 0; i < pcxt->nworkers_launched; i++)
		pb->done[i] = shm_mq_attach((shm_mq *) (done + (Size) i * DONE_QUEUE_SIZE),
									pcxt->seg, pcxt->worker[i].bgwhandle);
	if (imq != NULL && pcxt->nworkers_launched > 0)
		pb->image = shm_mq_attach(imq, pcxt->seg, pcxt->worker[0].bgwhandle);
	if (tmq != NULL && pcxt->nworkers_launched > 0)
		pb->task = shm_mq_attach(tmq, pcxt->seg, pcxt->worker[0].bgwhandle);
	pb->pcxt = pcxt;
	pb->shared = shared;
	pb->layout = layout;
	pb->participants = pcxt->nworkers_launched + 1;
	return pb;
}

/*
 * The leader collector's share of budget: all of it, unless the workers
 * run collectors of their own (each has budget / participants then).
 */
Size
am_build_parallel_budget(AmParallelBuild *pb, Size budget)
{
	if (pb == NULL || !pb->shared->collect)
		return budget;
	return budget / pb->participants;
}

/*
 * A worker ended without doing its part: its error, or ours.  Its error
 * comes through the parallel context's messages, which are not read while
 * interrupts are held (the load holds tree_lock): then the server log has
 * it and this is the error.
 */
static void
worker_lost(AmParallelBuild *pb)
{
	if (INTERRUPTS_CAN_BE_PROCESSED())
		WaitForParallelWorkersToFinish(pb->pcxt);
	ereport(ERROR,
			(errcode(ERRCODE_INTERNAL_ERROR),
			 errmsg("a parallel worker of a hybrid_index build ended before its part was done")));
}

/*
 * The heap scan of the build: cb gets the leader's part (as in a serial
 * build), put every entry of the workers' or, if they ran collectors,
 * import each worker's file (which it keeps).  Returns the live tuples
 * seen.
 */
double
am_build_parallel_scan(AmParallelBuild *pb, Relation heap, Relation index,
					   IndexInfo *info, IndexBuildCallback cb, void *cbstate,
					   void (*put) (void *state, const void *item),
					   Size (*import) (void *state, BufFile *file, const char *name),
					   void (*presort) (void *state))
{
	const AmBuildLayout *layout = pb->layout;
	TableScanDesc scan;
	double		reltuples;
	char	   *item = palloc(layout->size);
	char		name[MAXPGPATH];
	int			i;

	scan = hi_table_beginscan_parallel(heap, pb->pscan);
	reltuples = table_index_build_scan(heap, index, info, true, true, cb, cbstate, scan);
	if (pb->shared->collect && pb->pcxt->nworkers_launched > 0)
		presort(cbstate);
	for (i = 0; i < pb->pcxt->nworkers_launched; i++)
	{
		Size		len;
		void	   *data;

		if (shm_mq_receive(pb->done[i], &len, &data, false) != SHM_MQ_SUCCESS)
			worker_lost(pb);
	}
	SpinLockAcquire(&pb->shared->mutex);
	reltuples += pb->shared->reltuples;
	SpinLockRelease(&pb->shared->mutex);
	for (i = 0; i < pb->pcxt->nworkers_launched; i++)
	{
		BufFile    *f = BufFileOpenFileSet(&pb->shared->fileset.fs, file_name(name, i),
										   O_RDONLY, true);

		if (f == NULL)
			continue;
		if (pb->shared->collect)
		{
			/* the leader's collector reads and closes it */
			(void) import(cbstate, f, name);
			continue;
		}
		while (BufFileRead(f, item, layout->size) == layout->size)
		{
			put(cbstate, item);
			CHECK_FOR_INTERRUPTS();
		}
		BufFileClose(f);
	}
	pfree(item);
	return reltuples;
}

static void
helper_start(void *arg, const void *task, Size len)
{
	AmParallelBuild *pb = (AmParallelBuild *) arg;

	/* the helper's writes come after the leader's so far in WAL */
	hi_wal_image_sync();
	if (shm_mq_send(pb->task, len, task, false, true) != SHM_MQ_SUCCESS)
		worker_lost(pb);
}

/* the worker says it did the task (tree_lock may be held: waits on a queue) */
static void
helper_finish(void *arg)
{
	AmParallelBuild *pb = (AmParallelBuild *) arg;
	Size		len;
	void	   *data;

	if (shm_mq_receive(pb->done[0], &len, &data, false) != SHM_MQ_SUCCESS)
		worker_lost(pb);
}

/*
 * Can a worker take part of the load?  If so, helper gets the means: the
 * build's shared file set, and the task queue to the first worker.
 */
bool
am_build_parallel_helper(AmParallelBuild *pb, HiLoadHelper *helper)
{
	if (pb == NULL || pb->task == NULL)
		return false;
	shared_of(pb->shared, &helper->shared);
	helper->arg = pb;
	helper->start = helper_start;
	helper->finish = helper_finish;
	return true;
}

/*
 * Do workers run collectors?  If so, files gets the build's shared file
 * set, where a collector's spills can go for the other processes to read.
 */
bool
am_build_parallel_files(AmParallelBuild *pb, HiLoadShared *files)
{
	if (pb == NULL || !pb->shared->collect || pb->pcxt->nworkers_launched == 0)
		return false;
	shared_of(pb->shared, files);
	return true;
}

/* Is a worker there to insert the load's WAL records? */
bool
am_build_parallel_has_image(AmParallelBuild *pb)
{
	return pb != NULL && pb->image != NULL;
}

/* log/wal_image.c's sink: a WAL record to the first worker (arg: pb) */
void
am_build_parallel_image_sink(void *arg, const char *hdr, Size hlen,
							 const char *data, Size dlen)
{
	AmParallelBuild *pb = (AmParallelBuild *) arg;
	shm_mq_iovec iov[2];

	iov[0].data = hdr;
	iov[0].len = hlen;
	iov[1].data = data;
	iov[1].len = dlen;
	if (shm_mq_sendv(pb->image, iov, dlen > 0 ? 2 : 1, false, true) != SHM_MQ_SUCCESS)
		worker_lost(pb);
}

/*
 * The load's records are all sent: wait until the first worker inserted
 * them (it says so on its queue), so that the caller's next records follow
 * them in WAL.  Waits on the queue alone, so tree_lock may be held.
 */
void
am_build_parallel_image_done(AmParallelBuild *pb)
{
	Size		len;
	void	   *data;

	if (pb == NULL || pb->image == NULL)
		return;
	shm_mq_detach(pb->image);
	pb->image = NULL;
	if (shm_mq_receive(pb->done[0], &len, &data, false) != SHM_MQ_SUCCESS)
		worker_lost(pb);
}

/* The build is over: the workers go (not with tree_lock held: see above) */
void
am_build_parallel_end(AmParallelBuild *pb)
{
	/* a worker still waiting for a task goes */
	if (pb->task != NULL)
		shm_mq_detach(pb->task);
	WaitForParallelWorkersToFinish(pb->pcxt);
	if (IsMVCCSnapshot(pb->snapshot))
		UnregisterSnapshot(pb->snapshot);
	DestroyParallelContext(pb->pcxt);
	ExitParallelMode();
	pfree(pb->done);
	pfree(pb);
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
	shm_mq_handle *done;

	info->ii_Concurrent = shared->isconcurrent;
	SharedFileSetAttach(&shared->fileset, seg);
	ws.layout = &shared->layout;
	ws.ops = shared->collect ? known_ops[shared->ops] : NULL;
	ws.spool = ws.ops != NULL ? ws.ops->begin(shared->budget, NULL) : NULL;
	if (ws.ops != NULL && ws.ops->share != NULL)
	{
		HiLoadShared files;
		char		prefix[NAMEDATALEN];

		shared_of(shared, &files);
		snprintf(prefix, sizeof(prefix), "hybrid_index_run_w%d", ParallelWorkerNumber);
		ws.ops->share(ws.spool, &files, prefix);
	}
	ws.file = BufFileCreateFileSet(&shared->fileset.fs, file_name(name, ParallelWorkerNumber));
	ws.item = palloc(shared->layout.size);
	ws.tmpcxt = AllocSetContextCreate(CurrentMemoryContext, "hybrid_index build tuple",
									  ALLOCSET_DEFAULT_SIZES);
	scan = hi_table_beginscan_parallel(heap, pscan);
	reltuples = table_index_build_scan(heap, index, info, true, false,
									   worker_callback, &ws, scan);
	if (ws.ops != NULL)
		ws.ops->export(ws.spool, ws.file);
	BufFileClose(ws.file);
	SpinLockAcquire(&shared->mutex);
	shared->reltuples += reltuples;
	SpinLockRelease(&shared->mutex);

	/* the leader may read the file now */
	{
		shm_mq	   *mq = (shm_mq *) ((char *) shm_toc_lookup(toc, PARALLEL_KEY_DONE, false) +
									 (Size) ParallelWorkerNumber * DONE_QUEUE_SIZE);

		shm_mq_set_sender(mq, MyProc);
		done = shm_mq_attach(mq, seg, NULL);
		(void) shm_mq_send(done, 1, "s", false, true);
	}

	/* the first worker may get a part of the load to do */
	if (shared->split && ParallelWorkerNumber == 0)
	{
		shm_mq	   *mq = shm_toc_lookup(toc, PARALLEL_KEY_TASK, false);
		shm_mq_handle *h;
		Size		len;
		void	   *data;
		HiIndex    *idx = NULL;
		HiLoadShared sh;

		shm_mq_set_receiver(mq, MyProc);
		h = shm_mq_attach(mq, seg, NULL);
		shared_of(shared, &sh);
		/* tasks until the leader is done with us (it detaches) */
		while (shm_mq_receive(h, &len, &data, false) == SHM_MQ_SUCCESS)
		{
			HiWalImage *img;

			if (idx == NULL)
			{
				idx = hi_am_open(index);
				/* the build's own reads are not workload */
				idx->maintenance = true;
			}
			img = hi_wal_image_join(idx->sh);
			PG_TRY();
			{
				known_ops[shared->ops]->help(idx, ws.spool, data, len, &sh);
			}
			PG_CATCH();
			{
				hi_wal_image_abandon(img);
				PG_RE_THROW();
			}
			PG_END_TRY();
			hi_wal_image_leave(img);
			(void) shm_mq_send(done, 1, "p", false, true);
		}
		shm_mq_detach(h);
	}

	/* the first worker inserts the load's WAL records until the leader is done */
	if (shared->image && ParallelWorkerNumber == 0)
	{
		shm_mq	   *mq = shm_toc_lookup(toc, PARALLEL_KEY_IMAGE, false);
		shm_mq_handle *h;

		shm_mq_set_receiver(mq, MyProc);
		h = shm_mq_attach(mq, seg, NULL);
		for (;;)
		{
			Size		len;
			void	   *data;
			shm_mq_result res = shm_mq_receive(h, &len, &data, false);

			if (res == SHM_MQ_DETACHED)
				break;
			if (res != SHM_MQ_SUCCESS)
				elog(ERROR, "hybrid_index: could not receive a WAL record of a parallel build");
			hi_wal_image_insert((const char *) data, len);
		}
		shm_mq_detach(h);
		/* all inserted: the leader's next records come after them */
		(void) shm_mq_send(done, 1, "i", false, true);
	}
	shm_mq_detach(done);
	index_close(index, index_mode);
	table_close(heap, heap_mode);
}
