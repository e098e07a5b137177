/*-------------------------------------------------------------------------
 *
 * hi_utility.c
 *	  Utility commands and hybrid_index: the ProcessUtility and object access
 *	  hooks.
 *
 * PostgreSQL moves an index by copying its relation file; ours keep their
 * pages in tier files it does not know, so:
 *
 *	 - ALTER INDEX ... SET / RESET (optane_tablespace) rebuilds the index
 *	   in the same transaction (as REINDEX), so the fast tier's file is
 *	   created in the new tablespace and the old files are removed at
 *	   commit (kept on rollback), like any relfilenode change;
 *	 - ALTER INDEX ALL IN TABLESPACE ... SET TABLESPACE, which moves
 *	   indexes without going through ProcessUtility for each, is refused
 *	   while it would touch one of ours, pointing at REINDEX (TABLESPACE);
 *	 - ALTER DATABASE ... SET TABLESPACE is refused while the database's
 *	   default tablespace directory holds files of ours.
 *
 * It is also where DROP of our indexes schedules their files' removal at
 * commit (object access hook), and where ALTER INDEX ... SET TABLESPACE and
 * the CONCURRENTLY variants that our files cannot follow are refused.
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
 * ALTER INDEX ALL IN TABLESPACE: refuse if one of our indexes would move.
 * The selection mirrors AlterTableMoveAll(): indexes whose reltablespace is
 * the source (0 for the database's default), owned by one of the roles if
 * any are named, outside catalog, TOAST and temporary schemas.
 */
static void
check_move_all(AlterTableMoveAllStmt *stmt)
{
	Oid			orig;
	List	   *roles = NIL;
	ListCell   *lc;
	Relation	rel;
	TableScanDesc scan;
	ScanKeyData key;
	HeapTuple	tuple;

	if (stmt->objtype != OBJECT_INDEX)
		return;
	orig = get_tablespace_oid(stmt->orig_tablespacename, true);
	if (!OidIsValid(orig))
		return;					/* PostgreSQL reports it */
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
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot move index \"%s\" with ALTER INDEX ALL IN TABLESPACE",
						NameStr(form->relname)),
				 errdetail("Its pages live in hybrid_index tier files, which this command would leave behind."),
				 errhint("Move it first with REINDEX (TABLESPACE %s) INDEX %s, then repeat the command.",
						 quote_identifier(stmt->new_tablespacename),
						 quote_qualified_identifier(get_namespace_name(form->relnamespace),
													NameStr(form->relname)))));
	}
	table_endscan(scan);
	table_close(rel, AccessShareLock);
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

static List *
hi_utility_before(Node *stmt)
{
	List	   *rebuild = NIL;

	if (IsA(stmt, AlterTableMoveAllStmt))
		check_move_all((AlterTableMoveAllStmt *) stmt);
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

			if ((cmd->subtype != AT_SetRelOptions && cmd->subtype != AT_ResetRelOptions) ||
				!names_fast_tier((List *) cmd->def))
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
	return rebuild;
}

/*
 * After the ALTER: rebuild each index whose optane_tablespace changed, so
 * that its files are where its reloptions say.  REINDEX's own path: the
 * new relfilenode's files are created by ambuild in the tablespaces of the
 * new reloptions, the old ones are removed at commit.
 */
static void
hi_utility_after(List *rebuild)
{
	ListCell   *lc;

	foreach(lc, rebuild)
	{
		Oid			indexoid = lfirst_oid(lc);
		ReindexParams params = {0};

		CommandCounterIncrement();
		reindex_index(indexoid, false, get_rel_persistence(indexoid), &params);
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
		if (OidIsValid(relid) && hi_is_our_index(relid))
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

		if (OidIsValid(relid) && hi_is_our_index(relid))
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
			return hi_is_our_index(relid);
		rel = table_open(relid, AccessShareLock);
		indexes = RelationGetIndexList(rel);
		foreach(lc, indexes)
			found |= hi_is_our_index(lfirst_oid(lc));
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

/* Called once from _PG_init */
void
hi_utility_install(void)
{
	prev_object_access_hook = object_access_hook;
	object_access_hook = hi_object_access;
	prev_process_utility = ProcessUtility_hook;
	ProcessUtility_hook = hi_process_utility;
}
