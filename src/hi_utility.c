/*-------------------------------------------------------------------------
 *
 * hi_utility.c
 *	  Utility commands and hybrid_index: the ProcessUtility and object access
 *	  hooks.
 *
 * PostgreSQL moves an index by copying its relation file; ours keep their
 * pages in tier files it does not know, so:
 *
 *	 - ALTER INDEX ... SET TABLESPACE, ALTER INDEX ALL IN TABLESPACE (which
 *	   moves indexes without going through ProcessUtility for each) and
 *	   ALTER INDEX ... SET / RESET (optane_tablespace) rebuild each of our
 *	   indexes they move in the same transaction (as REINDEX), so its tier
 *	   files are created in the new tablespaces and the old ones are
 *	   removed at commit (kept on rollback), like any relfilenode change;
 *	 - ALTER DATABASE ... SET TABLESPACE is refused while the database's
 *	   default tablespace directory holds files of ours.
 *
 * It is also where DROP of our indexes schedules their files' removal at
 * commit (object access hook).  The CONCURRENTLY variants of CREATE, DROP
 * and REINDEX need nothing here: each step is a transaction, the files of
 * each relfilenode follow the transaction that creates or drops it.
 * This file holds every utility hook of the extension (hi_utility_install).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "catalog/objectaccess.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "executor/spi.h"
#include "nodes/makefuncs.h"
#include "tcop/utility.h"
#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/catalog.h"
#include "catalog/index.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_database.h"
#include "catalog/pg_namespace.h"
#include "commands/dbcommands.h"
#include "common/relpath.h"
#include "commands/tablespace.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "storage/fd.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "base/hi_base.h"
#include "am/am_common.h"
#include "core/hi_core.h"
#include "storage/storage.h"
#include "hi_utility.h"

static object_access_hook_type prev_object_access_hook = NULL;
static ProcessUtility_hook_type prev_process_utility = NULL;


/* Does a SET / RESET (...) list name optane_tablespace? */
static bool
names_fast_tier(List *defs)
{
	ListCell   *lc;

	foreach(lc, defs)
	{
		DefElem    *d = lfirst_node(DefElem, lc);

		if (d->defnamespace == NULL && strcmp(d->defname, "optane_tablespace") == 0)
			return true;
	}
	return false;
}

/*
 * ALTER INDEX ALL IN TABLESPACE: our indexes that will move, to rebuild
 * afterwards (PostgreSQL moves them without going through ProcessUtility
 * for each).  The selection mirrors AlterTableMoveAll(): indexes whose
 * reltablespace is the source (0 for the database's default), owned by one
 * of the roles if any are named, outside catalog, TOAST and temporary
 * schemas.
 */
static List *
indexes_moved_by(AlterTableMoveAllStmt *stmt)
{
	List	   *moved = NIL;
	Oid			orig;
	List	   *roles = NIL;
	ListCell   *lc;
	Relation	rel;
	TableScanDesc scan;
	ScanKeyData key;
	HeapTuple	tuple;

	if (stmt->objtype != OBJECT_INDEX)
		return NIL;
	orig = get_tablespace_oid(stmt->orig_tablespacename, true);
	if (!OidIsValid(orig))
		return NIL;				/* PostgreSQL reports it */
	if (orig == MyDatabaseTableSpace)
		orig = InvalidOid;
	foreach(lc, stmt->roles)
		roles = lappend_oid(roles, get_rolespec_oid(lfirst(lc), false));

	rel = table_open(RelationRelationId, AccessShareLock);
	ScanKeyInit(&key, Anum_pg_class_reltablespace, BTEqualStrategyNumber,
				F_OIDEQ, ObjectIdGetDatum(orig));
	scan = table_beginscan_catalog(rel, 1, &key);
	while ((tuple = heap_getnext(scan, ForwardScanDirection)) != NULL)
	{
		Form_pg_class form = (Form_pg_class) GETSTRUCT(tuple);

		if (form->relkind != RELKIND_INDEX || !hi_is_our_am(form->relam))
			continue;
		if (IsCatalogNamespace(form->relnamespace) || form->relisshared ||
			isAnyTempNamespace(form->relnamespace) ||
			IsToastNamespace(form->relnamespace))
			continue;
		if (roles != NIL && !list_member_oid(roles, form->relowner))
			continue;
		moved = lappend_oid(moved, form->oid);
	}
	table_endscan(scan);
	table_close(rel, AccessShareLock);
	return moved;
}

/*
 * ALTER DATABASE ... SET TABLESPACE moves the directory of the database's
 * default tablespace, our files with it, but they are named and looked up
 * by their tablespace: refuse while that directory holds any of them.  We
 * are connected to another database, so we look at the files, not at its
 * catalog.
 */
static void
check_move_database(AlterDatabaseStmt *stmt)
{
	ListCell   *lc;
	Oid			dboid;
	HeapTuple	tup;
	Oid			spc;
	char	   *dbpath;
	char	   *dir;
	DIR		   *d;
	struct dirent *de;
	char	   *found = NULL;

	foreach(lc, stmt->options)
	{
		DefElem    *opt = lfirst_node(DefElem, lc);

		if (strcmp(opt->defname, "tablespace") == 0)
			break;
	}
	if (lc == NULL)
		return;
	dboid = get_database_oid(stmt->dbname, true);
	if (!OidIsValid(dboid))
		return;					/* PostgreSQL reports it */
	tup = SearchSysCache1(DATABASEOID, ObjectIdGetDatum(dboid));
	if (!HeapTupleIsValid(tup))
		return;
	spc = ((Form_pg_database) GETSTRUCT(tup))->dattablespace;
	ReleaseSysCache(tup);

	dbpath = GetDatabasePath(dboid, spc);
	dir = psprintf("%s/%s", DataDir, dbpath);
	d = AllocateDir(dir);
	while (d && (de = ReadDirExtended(d, dir, LOG)) != NULL)
		if (strncmp(de->d_name, "hyb_", 4) == 0)
		{
			found = pstrdup(de->d_name);
			break;
		}
	if (d)
		FreeDir(d);
	if (found)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot move database \"%s\" while hybrid_index indexes keep files in its default tablespace",
						stmt->dbname),
				 errdetail("File \"%s/%s\" would move with the database but is looked up by its tablespace.",
						   dir, found),
				 errhint("Drop those indexes, or move them with REINDEX (TABLESPACE ...) to another tablespace, before moving the database.")));
	pfree(dir);
	pfree(dbpath);
}

/*
 * PostgreSQL copies a moved index's main fork block by block (and logs
 * every block); ours only stands for the size of the files, which the
 * rebuild after the ALTER makes anew: nothing to copy.
 */
static void
clear_sizes(List *indexes)
{
	ListCell   *lc;

	foreach(lc, indexes)
	{
		HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(lfirst_oid(lc)));
		Form_pg_class cls;

		if (!HeapTupleIsValid(tup))
			continue;
		cls = (Form_pg_class) GETSTRUCT(tup);
		if (cls->relpersistence == RELPERSISTENCE_PERMANENT)
			hi_files_clear_reported_size(OidIsValid(cls->reltablespace) ?
										 cls->reltablespace : MyDatabaseTableSpace,
										 MyDatabaseId, cls->relfilenode);
		ReleaseSysCache(tup);
	}
}

static List *
hi_utility_before(Node *stmt)
{
	List	   *rebuild = NIL;

	if (IsA(stmt, AlterTableMoveAllStmt))
		rebuild = indexes_moved_by((AlterTableMoveAllStmt *) stmt);
	else if (IsA(stmt, AlterDatabaseStmt))
		check_move_database((AlterDatabaseStmt *) stmt);
	else if (IsA(stmt, AlterTableStmt))
	{
		AlterTableStmt *as = (AlterTableStmt *) stmt;
		ListCell   *lc;
		Oid			relid = InvalidOid;
		bool		looked = false;

		foreach(lc, as->cmds)
		{
			AlterTableCmd *cmd = lfirst_node(AlterTableCmd, lc);

			/* a new tablespace of either tier: the files follow by a rebuild */
			if (cmd->subtype != AT_SetTableSpace &&
				((cmd->subtype != AT_SetRelOptions && cmd->subtype != AT_ResetRelOptions) ||
				 !names_fast_tier((List *) cmd->def)))
				continue;
			if (!looked)
			{
				relid = RangeVarGetRelid(as->relation, NoLock, true);
				looked = true;
			}
			if (OidIsValid(relid) && hi_is_our_index(relid))
			{
				rebuild = list_make1_oid(relid);
				break;
			}
		}
	}
	clear_sizes(rebuild);
	return rebuild;
}

/*
 * After the ALTER: rebuild each index whose tablespace or optane_tablespace
 * changed, so that its files are where its catalog entry says.  REINDEX's
 * own path: the new relfilenode's files are created by ambuild in the
 * tablespaces of the index and its reloptions, the old ones are removed at
 * commit (kept if the transaction rolls back).
 */
static void
hi_utility_after(List *rebuild)
{
	ListCell   *lc;

	foreach(lc, rebuild)
	{
		Oid			indexoid = lfirst_oid(lc);

		CommandCounterIncrement();
		hi_reindex_index(indexoid, get_rel_persistence(indexoid));
	}
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
		hi_is_our_index(objectId))
		hi_files_schedule_drop(objectId);
}

/*
 * Our ProcessUtility hook: refuse what would break an index, let
 * PostgreSQL run the command, then rebuild what moved.
 */
static void
hi_process_utility(PlannedStmt *pstmt, const char *queryString,
				   bool readOnlyTree, ProcessUtilityContext context,
				   ParamListInfo params, QueryEnvironment *queryEnv,
				   DestReceiver *dest, QueryCompletion *qc)
{
	List	   *rebuild;

	/*
	 * Index entries of rows inserted so far go in before the command can
	 * read, rebuild, move or drop their index (COMMIT and PREPARE do it
	 * themselves; a rollback drops them).
	 */
	if (!IsA(pstmt->utilityStmt, TransactionStmt))
		am_pending_insert_all();
	rebuild = hi_utility_before(pstmt->utilityStmt);

	if (prev_process_utility)
		prev_process_utility(pstmt, queryString, readOnlyTree, context, params,
							 queryEnv, dest, qc);
	else
		standard_ProcessUtility(pstmt, queryString, readOnlyTree, context, params,
								queryEnv, dest, qc);
	hi_utility_after(rebuild);

	/* a prepared transaction ended: its index files go or stay now */
	if (IsA(pstmt->utilityStmt, TransactionStmt))
	{
		TransactionStmtKind kind = ((TransactionStmt *) pstmt->utilityStmt)->kind;

		if (kind == TRANS_STMT_COMMIT_PREPARED || kind == TRANS_STMT_ROLLBACK_PREPARED)
			hi_files_finish_prepared();
	}
}

/* Called once from _PG_init */
void
hi_utility_install(void)
{
	prev_object_access_hook = object_access_hook;
	object_access_hook = hi_object_access;
	prev_process_utility = ProcessUtility_hook;
	ProcessUtility_hook = hi_process_utility;
}
