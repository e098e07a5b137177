/*
 * hybrid_index.c
 *	  Module entry point: GUCs, shared memory, and the hooks that tie index
 *	  files and redo logs to PostgreSQL's transactions.
 *
 * Everything an index shares between backends lives in shared memory of
 * our own, so the library must be loaded by shared_preload_libraries.
 * Loading it any other way (CREATE EXTENSION, or an AM handler call after
 * the preload line was removed) fails with an error that says what to do.
 */
#include "postgres.h"

#include "access/xact.h"
#include "executor/executor.h"
#include "catalog/objectaccess.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "access/table.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "executor/spi.h"
#include "utils/relcache.h"
#include "nodes/makefuncs.h"
#include "nodes/parsenodes.h"
#include "tcop/utility.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "access/htup_details.h"
#include "utils/lsyscache.h"
#include "utils/builtins.h"
#include "utils/syscache.h"

#include "base/hi_base.h"
#include "policy/placement.h"
#include "core/hi_core.h"
#include "cache/page_cache.h"
#include "log/redo_log.h"
#include "storage/storage.h"
#include "hi_planner.h"
#include "hi_utility.h"
#include "am/am_common.h"
#include "am/rtam.h"
#include "am/gridam.h"
#include "efind/efind.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;
static ExecutorStart_hook_type prev_executor_start = NULL;
static ExecutorEnd_hook_type prev_executor_end = NULL;

static void
hi_shmem_request_hook(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	hi_shmem_request();
	RequestAddinShmemSpace(hi_cache_shmem_size());
	RequestAddinShmemSpace(hi_wma_shmem_size());
	RequestAddinShmemSpace(hi_defer_shmem_size());
}

static void
hi_shmem_startup_hook(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	found = hi_shmem_startup();
	hi_cache_shmem_init(found);
	hi_wma_shmem_init();
	hi_defer_shmem_init();
	LWLockRelease(AddinShmemInitLock);
}

static void
hi_xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
		case XACT_EVENT_PARALLEL_PRE_COMMIT:
			/* deferred index entries go in, then their log records are durable */
			am_pending_at_precommit();
			hi_log_at_precommit();
			break;
		case XACT_EVENT_PRE_PREPARE:
			/* as a commit, and the files' fate waits in a file of its own */
			am_pending_at_precommit();
			hi_log_at_precommit();
			hi_files_at_prepare();
			break;
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_PREPARE:
			am_pending_at_xact_end();
			am_needed_reset();
			if (event == XACT_EVENT_PREPARE)
				hi_files_at_prepared();
			else
				hi_files_at_xact_end(true);
			hi_log_at_xact_end();
			hi_cache_check_pins();
			/* last: the steps above still use the slots */
			hi_slots_unpin_all();
			break;
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
			am_pending_at_xact_end();
			am_needed_reset();
			hi_cache_release_all();
			hi_files_at_xact_end(false);
			hi_log_at_xact_end();
			hi_slots_unpin_all();
			break;
	}
}

static void
hi_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
					SubTransactionId parentSubid, void *arg)
{
	if (event == SUBXACT_EVENT_COMMIT_SUB)
		hi_files_at_subxact_end(true, mySubid, parentSubid);
	else if (event == SUBXACT_EVENT_ABORT_SUB)
	{
		am_pending_at_subxact_abort(mySubid);
		hi_cache_release_all();
		hi_files_at_subxact_end(false, mySubid, parentSubid);
	}
}

/*
 * Index entries that rows of earlier statements left waiting go in before
 * a statement starts (am_insert_defer.c): before it plans parallel workers
 * that would not see them, or calls functions that scan.
 */
static void
hi_executor_start(QueryDesc *queryDesc, int eflags)
{
	am_pending_statement_start(queryDesc->plannedstmt);
	if (prev_executor_start)
		prev_executor_start(queryDesc, eflags);
	else
		standard_ExecutorStart(queryDesc, eflags);
	/* which columns our index-only scans must return (am_needed.c) */
	am_needed_start(queryDesc->planstate);
}

static void
hi_executor_end(QueryDesc *queryDesc)
{
	am_pending_statement_end(queryDesc->plannedstmt);
	am_needed_end();
	if (prev_executor_end)
		prev_executor_end(queryDesc);
	else
		standard_ExecutorEnd(queryDesc);
}

void
_PG_init(void)
{
	if (!process_shared_preload_libraries_in_progress)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("hybrid_index must be loaded via shared_preload_libraries"),
				 errdetail("Its access methods keep index pages and state in shared memory that is set up at server start."),
				 errhint("Add 'hybrid_index' to shared_preload_libraries in postgresql.conf and restart the server.")));

	hi_define_gucs();
	hi_wal_init();
	hi_log_sync_register();
	hi_cache_prefault_register();
	hi_log_sync_set_shutdown_hook(hi_index_checkpoint_all);
	hi_wma_init();
	hi_files_set_release_hook(hi_slot_release);
	hi_wal_set_exclusive_hook(hi_copy_exclusive);
	hyrtree_init();
	efind_init();
	lbgrid_init();
	hgrid_init();
	hi_planner_install();
	/* after every module has defined its settings: the rest are typos */
	MarkGUCPrefixReserved("hybrid_index");

	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = hi_shmem_request_hook;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = hi_shmem_startup_hook;
	hi_utility_install();
	prev_executor_start = ExecutorStart_hook;
	ExecutorStart_hook = hi_executor_start;
	prev_executor_end = ExecutorEnd_hook;
	ExecutorEnd_hook = hi_executor_end;

	RegisterXactCallback(hi_xact_callback, NULL);
	RegisterSubXactCallback(hi_subxact_callback, NULL);
}
