/*-------------------------------------------------------------------------
 *
 * hi_utility.c
 *	  Utility commands that would move our indexes between tablespaces.
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
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
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

#include "hybrid_index.h"
#include "core/hi_utility.h"

/* Our index (a plain index with one of our access methods)? */
static bool
is_our_index(Oid relid)
{
	HeapTuple	tp = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	bool		ours = false;

	if (HeapTupleIsValid(tp))
	{
		Form_pg_class form = (Form_pg_class) GETSTRUCT(tp);

		ours = form->relkind == RELKIND_INDEX && hi_is_our_am(form->relam);
		ReleaseSysCache(tp);
	}
	return ours;
}

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

List *
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
			if (OidIsValid(relid) && is_our_index(relid))
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
void
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
