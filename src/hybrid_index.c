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

#include "hybrid_index.h"
#include "core/hi_utility.h"
#include "am/rtam.h"
#include "am/lbgrid.h"
#include "am/hgrid.h"
#include "efind/efind.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;
static object_access_hook_type prev_object_access_hook = NULL;
static ProcessUtility_hook_type prev_process_utility = NULL;

static void
hi_shmem_request_hook(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	hi_shmem_request();
}

static void
hi_shmem_startup_hook(void)
{
	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	hi_shmem_startup();
}

/* Access method of a relation, InvalidOid if none */
static Oid
relation_am(Oid relid)
{
	HeapTuple	tp = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	Oid			am = InvalidOid;

	if (HeapTupleIsValid(tp))
	{
		Form_pg_class form = (Form_pg_class) GETSTRUCT(tp);

		if (form->relkind == RELKIND_INDEX)
			am = form->relam;
		ReleaseSysCache(tp);
	}
	return am;
}

/*
 * DROP of one of our indexes (directly, or through DROP TABLE and other
 * cascades): its files go away when the transaction commits.
 */
static void
hi_object_access(ObjectAccessType access, Oid classId, Oid objectId,
				 int subId, void *arg)
{
	if (prev_object_access_hook)
		prev_object_access_hook(access, classId, objectId, subId, arg);

	if (access == OAT_DROP && classId == RelationRelationId && subId == 0 &&
		hi_is_our_am(relation_am(objectId)))
		hi_files_schedule_drop(objectId);
}

/*
 * ALTER INDEX ... SET TABLESPACE would make PostgreSQL copy the (empty)
 * main fork and leave our tier files behind; refuse it and point at
 * REINDEX (TABLESPACE ...), which rebuilds the index in place.
 */
static void
check_alter_tablespace(AlterTableStmt *stmt)
{
	ListCell   *lc;
	Oid			relid;

	foreach(lc, stmt->cmds)
	{
		AlterTableCmd *cmd = lfirst_node(AlterTableCmd, lc);

		if (cmd->subtype != AT_SetTableSpace)
			continue;
		relid = RangeVarGetRelid(stmt->relation, NoLock, true);
		if (OidIsValid(relid) && hi_is_our_am(relation_am(relid)))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("cannot move index \"%s\" with ALTER INDEX ... SET TABLESPACE",
							stmt->relation->relname),
					 errdetail("Its pages live in hybrid_index tier files, which this command would leave behind."),
					 errhint("Use REINDEX (TABLESPACE new_tablespace) INDEX %s.",
							 quote_identifier(stmt->relation->relname))));
	}
}

/* Is any relation named in a DROP INDEX statement one of our indexes? */
static bool
drop_names_our_index(DropStmt *stmt)
{
	ListCell   *lc;

	foreach(lc, stmt->objects)
	{
		RangeVar   *rv = makeRangeVarFromNameList((List *) lfirst(lc));
		Oid			relid = RangeVarGetRelid(rv, NoLock, true);

		if (OidIsValid(relid) && hi_is_our_am(relation_am(relid)))
			return true;
	}
	return false;
}

/* Would this REINDEX rebuild one of our indexes? */
static bool
reindex_touches_our_index(ReindexStmt *rs)
{
	bool		found = false;

	if (rs->relation)
	{
		Oid			relid = RangeVarGetRelid(rs->relation, NoLock, true);
		Relation	rel;
		List	   *indexes;
		ListCell   *lc;

		if (!OidIsValid(relid))
			return false;
		if (rs->kind == REINDEX_OBJECT_INDEX)
			return hi_is_our_am(relation_am(relid));
		rel = table_open(relid, AccessShareLock);
		indexes = RelationGetIndexList(rel);
		foreach(lc, indexes)
			found |= hi_is_our_am(relation_am(lfirst_oid(lc)));
		table_close(rel, AccessShareLock);
		return found;
	}

	/* SCHEMA, DATABASE, SYSTEM: any of our indexes in scope */
	SPI_connect();
	if (SPI_execute_with_args("SELECT DISTINCT c.relam FROM pg_catalog.pg_class c "
							  "JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
							  "WHERE c.relkind = 'i' AND ($1 IS NULL OR n.nspname = $1)",
							  1, (Oid[]) {TEXTOID},
							  (Datum[]) {rs->name ? CStringGetTextDatum(rs->name) : (Datum) 0},
							  rs->kind == REINDEX_OBJECT_SCHEMA && rs->name ? " " : "n",
							  true, 0) == SPI_OK_SELECT)
	{
		uint64		i;

		for (i = 0; i < SPI_processed && !found; i++)
		{
			bool		isnull;
			Datum		am = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc,
										   1, &isnull);

			found = !isnull && hi_is_our_am(DatumGetObjectId(am));
		}
	}
	SPI_finish();
	return found;
}

/*
 * The concurrent variants of DROP INDEX and REINDEX run in several
 * transactions and, for REINDEX, swap relfilenodes between two indexes;
 * our files follow transactions, not those steps.  Refuse them with the
 * plain command as the way out.
 */
static void
check_concurrent(Node *stmt)
{
	if (IsA(stmt, DropStmt))
	{
		DropStmt   *ds = (DropStmt *) stmt;

		if (ds->removeType == OBJECT_INDEX && ds->concurrent && drop_names_our_index(ds))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("DROP INDEX CONCURRENTLY is not supported for hybrid_index indexes"),
					 errhint("Use DROP INDEX without CONCURRENTLY.")));
	}
	else if (IsA(stmt, ReindexStmt))
	{
		ReindexStmt *rs = (ReindexStmt *) stmt;
		ListCell   *lc;
		bool		concurrently = false;

		foreach(lc, rs->params)
		{
			DefElem    *opt = (DefElem *) lfirst(lc);

			if (strcmp(opt->defname, "concurrently") == 0 && defGetBoolean(opt))
				concurrently = true;
		}
		if (concurrently && reindex_touches_our_index(rs))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("REINDEX CONCURRENTLY is not supported for hybrid_index indexes"),
					 errhint("Use REINDEX without CONCURRENTLY.")));
	}
}

static void
hi_process_utility(PlannedStmt *pstmt, const char *queryString,
				   bool readOnlyTree, ProcessUtilityContext context,
				   ParamListInfo params, QueryEnvironment *queryEnv,
				   DestReceiver *dest, QueryCompletion *qc)
{
	List	   *rebuild;

	if (IsA(pstmt->utilityStmt, AlterTableStmt))
		check_alter_tablespace((AlterTableStmt *) pstmt->utilityStmt);
	check_concurrent(pstmt->utilityStmt);
	rebuild = hi_utility_before(pstmt->utilityStmt);

	if (prev_process_utility)
		prev_process_utility(pstmt, queryString, readOnlyTree, context, params,
							 queryEnv, dest, qc);
	else
		standard_ProcessUtility(pstmt, queryString, readOnlyTree, context, params,
								queryEnv, dest, qc);
	hi_utility_after(rebuild);
}

static void
hi_xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
		case XACT_EVENT_PARALLEL_PRE_COMMIT:
			/* the transaction's log records are durable before it commits */
			hi_log_at_precommit();
			break;
		case XACT_EVENT_PRE_PREPARE:
			if (hi_files_pending())
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("cannot prepare a transaction that created or dropped a hybrid_index index")));
			hi_log_at_precommit();
			break;
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_PREPARE:
			hi_files_at_xact_end(true);
			hi_log_at_xact_end();
			break;
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
			hi_place_suspended = false;
			hi_cache_release_all();
			hi_files_at_xact_end(false);
			hi_log_at_xact_end();
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
		hi_place_suspended = false;
		hi_cache_release_all();
		hi_files_at_subxact_end(false, mySubid, parentSubid);
	}
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
	hyrtree_init();
	efind_init();
	lbgrid_init();
	hgrid_init();
	/* after every module has defined its settings: the rest are typos */
	MarkGUCPrefixReserved("hybrid_index");

	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = hi_shmem_request_hook;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = hi_shmem_startup_hook;
	prev_object_access_hook = object_access_hook;
	object_access_hook = hi_object_access;
	prev_process_utility = ProcessUtility_hook;
	ProcessUtility_hook = hi_process_utility;

	RegisterXactCallback(hi_xact_callback, NULL);
	RegisterSubXactCallback(hi_subxact_callback, NULL);
}
