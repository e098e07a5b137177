/*
 * log_sync.c
 *	  The background worker that couples the redo logs to PostgreSQL's
 *	  checkpoints, so that a commit pays WAL's flush and nothing more.
 *
 * A transaction's records reach its index's redo log (the file) without an
 * fsync; WAL, flushed at commit, holds them too, and crash recovery writes
 * into the log what WAL has and the log lost (hi_wal.c).  Recovery replays
 * WAL only from the last checkpoint's redo pointer, so every record older
 * than that pointer must be durable in its log before the checkpoint is
 * complete.  PostgreSQL 15 has no checkpoint hook; this worker makes every
 * checkpoint wait for it instead (the lever named in DURABILITY.md):
 *
 *	- it keeps DELAY_CHKPT_COMPLETE set under a virtual transaction id of
 *	  its own, so a checkpoint, before it writes its record, waits until
 *	  that id changes;
 *	- when the redo pointer moves (a checkpoint began), it fsyncs every
 *	  loaded index's log up to what was appended (an append holds log_lock
 *	  from its WAL insert to its write, so taking log_lock sees every record
 *	  older than the pointer written) and logs SYNCED(position) for each
 *	  whose log changed since its last one, so that recovery knows how far
 *	  each log can be trusted (a log that did not change holds nothing to
 *	  cut; its next append flushes its own LOG record, redo_log.c);
 *	- it changes its id only while it has synced for the newest redo
 *	  pointer, and checks and changes it holding ProcArrayLock exclusively.
 *
 * Why a checkpoint cannot complete without the sync for its own pointer,
 * on every version we build for (read in CreateCheckPoint, xlog.c, of 15
 * to 18 and 19rc1): the checkpoint publishes its redo pointer in
 * XLogCtl->RedoRecPtr under info_lck (17+: after it inserted its
 * XLOG_CHECKPOINT_REDO record, 15 and 16: after it released the WAL
 * insertion locks), and only later, after CheckPointGuts, collects the ids
 * to wait for with GetVirtualXIDsDelayingChkpt(DELAY_CHKPT_COMPLETE), which
 * takes ProcArrayLock.  If that collection came before our exclusive hold,
 * the pointer was published before it, so our check (GetRedoRecPtr, under
 * the same spinlock) sees the new pointer and keeps the old id, which the
 * checkpoint then waits on.  If it came after, it collects the new id,
 * whose flag is set too, and waits until we change that one, which we do
 * only once synced for its pointer.  (When it ran on 15 alone, the worker held
 * XactSLRULock for the same purpose, which CheckPointCLOG takes between
 * the two steps; 17 split that lock into per-bank locks, so the argument
 * now rests on the lock the collection itself takes, and holds alike on
 * every version.)
 *
 * While the worker is not running (the first moments after a start, or
 * after it failed), committing transactions fsync the logs themselves, as
 * before (hi_log_sync_active).
 *
 * The same coupling syncs the files of builds (storage/tier_defer.c): a
 * build lists its files instead of syncing them, and the worker syncs the
 * list when a checkpoint begins, before the checkpoint can complete.
 */
#include "postgres.h"

#include "access/xlog.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "storage/sinvaladt.h"
#include "utils/memutils.h"

#include "base/hi_base.h"
#include "log/redo_log.h"
#include "storage/storage.h"

PGDLLEXPORT void hi_log_sync_main(Datum arg);

/* what the worker runs at shutdown (core's checkpoint of every index) */
static int	(*shutdown_hook) (void) = NULL;

void
hi_log_sync_set_shutdown_hook(int (*fn) (void))
{
	shutdown_hook = fn;
}

void
hi_log_sync_register(void)
{
	BackgroundWorker bgw;

	memset(&bgw, 0, sizeof(bgw));
	bgw.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	/* on a standby: once promoted (restartpoints need no coupling) */
	bgw.bgw_start_time = BgWorkerStart_RecoveryFinished;
	bgw.bgw_restart_time = 1;
	snprintf(bgw.bgw_library_name, BGW_MAXLEN, "hybrid_index");
	snprintf(bgw.bgw_function_name, BGW_MAXLEN, "hi_log_sync_main");
	snprintf(bgw.bgw_name, BGW_MAXLEN, "hybrid_index log sync");
	snprintf(bgw.bgw_type, BGW_MAXLEN, "hybrid_index log sync");
	RegisterBackgroundWorker(&bgw);
}

/* Does the worker couple checkpoints now (committers need not fsync)? */
bool
hi_log_sync_active(void)
{
	return hi_shared != NULL && pg_atomic_read_u32(&hi_shared->sync_pid) != 0;
}

/*
 * Make every loaded index's log durable up to what was appended; with
 * log_synced, say so in WAL.  An index that cannot be synced (dropped
 * meanwhile) is reported and skipped.
 */
static void
sync_all(bool log_synced, XLogRecPtr redo)
{
	int			i;
	MemoryContext cxt = CurrentMemoryContext;

	for (i = 0; i < hi_shared->max_indexes; i++)
	{
		HiIndexShared *sh = &hi_shared->indexes[i];

		/* the slot keeps its identity meanwhile (claims and releases wait) */
		LWLockAcquire(&hi_shared->registry_lock, LW_SHARED);
		PG_TRY();
		{
			/*
			 * A slot a hot standby loaded and nobody used since promotion
			 * follows a log that WAL replay wrote and made durable at the
			 * end of recovery: it is not this server's until its next use
			 * takes it over (core/hi_index.c).  A SYNCED record of the
			 * position its readers reached would tell crash recovery to
			 * cut off the records beyond, which are committed.
			 */
			if (sh->in_use && sh->loaded && !sh->loaded_in_recovery)
			{
				hi_log_sync(sh, log_synced, redo);
				/* what the size functions report follows the files */
				hi_files_report_size(sh, false);
			}
		}
		PG_CATCH();
		{
			/* no transaction here: release what the failed sync held */
			LWLockReleaseAll();
			MemoryContextSwitchTo(cxt);
			EmitErrorReport();
			FlushErrorState();
			LWLockAcquire(&hi_shared->registry_lock, LW_SHARED);
		}
		PG_END_TRY();
		LWLockRelease(&hi_shared->registry_lock);
	}
}

static void
sync_exit(int code, Datum arg)
{
	(void) pg_atomic_exchange_u32(&hi_shared->sync_pid, 0);
	MyProc->delayChkptFlags &= ~DELAY_CHKPT_COMPLETE;
}

void
hi_log_sync_main(Datum arg)
{
	XLogRecPtr	synced;

	pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	BackgroundWorkerUnblockSignals();
	/* no database: a backend id and a place in the proc array */
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);
	pgstat_report_activity(STATE_RUNNING, "coupling index logs to checkpoints");

	before_shmem_exit(sync_exit, (Datum) 0);
	HI_PROC_LXID(MyProc) = GetNextLocalTransactionId();
	MyProc->delayChkptFlags |= DELAY_CHKPT_COMPLETE;
	(void) pg_atomic_exchange_u32(&hi_shared->sync_pid, (uint32) MyProcPid);
	/* what committers did not fsync before the flag was up */
	synced = GetRedoRecPtr();
	sync_all(false, synced);
	/* and builds listed before a restart of this worker */
	(void) hi_files_sync_deferred();

	while (!ShutdownRequestPending)
	{
		XLogRecPtr	redo = GetRedoRecPtr();

		if (redo != synced)
		{
			int			nbuilt;

			sync_all(true, redo);
			/* builds' files that waited for a checkpoint (tier_defer.c) */
			nbuilt = hi_files_sync_deferred();
			if (nbuilt > 0)
				ereport(DEBUG1,
						(errmsg_internal("hybrid_index: synced the files of %d builds for the checkpoint at %X/%X",
										 nbuilt, LSN_FORMAT_ARGS(redo))));
			synced = redo;
		}
		/* release a checkpoint waiting for us: see the header comment */
		LWLockAcquire(ProcArrayLock, LW_EXCLUSIVE);
		if (GetRedoRecPtr() == synced)
			HI_PROC_LXID(MyProc) = GetNextLocalTransactionId();
		LWLockRelease(ProcArrayLock);

		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 10L, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		/* absorb proc signal barriers (DROP TABLESPACE, DROP DATABASE) */
		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
	}
	/* shutting down: backends sync what they append from here on */
	(void) pg_atomic_exchange_u32(&hi_shared->sync_pid, 0);
	MyProc->delayChkptFlags &= ~DELAY_CHKPT_COMPLETE;

	/*
	 * PostgreSQL's shutdown checkpoint waits for this worker to exit: the
	 * indexes are checkpointed first, so that a clean restart replays no
	 * index log (their first use then only reads the map file)
	 */
	if (shutdown_hook)
	{
		int			n;

		pgstat_report_activity(STATE_RUNNING, "checkpointing indexes for shutdown");
		n = shutdown_hook();
		if (n > 0)
			ereport(LOG,
					(errmsg("hybrid_index: checkpointed %d indexes for shutdown", n)));
	}
	sync_all(false, GetRedoRecPtr());
	(void) hi_files_sync_deferred();
	proc_exit(0);
}
