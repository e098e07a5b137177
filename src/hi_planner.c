/*
 * hi_planner.c
 *	  PostGIS functions as users write them use our indexes.
 *
 * PostGIS turns ST_Intersects(geom, q) and its kin into an index condition
 * (geom && q) through its support function, but only for GiST, SP-GiST and
 * BRIN operator families: with one of our indexes the planner finds
 * nothing to use and scans the table.  This planner hook adds, before
 * planning, the box condition each such call implies, as one more
 * conjunct of the same WHERE or JOIN ... ON list, wherever one argument is
 * a column with one of our indexes:
 *
 *	 ST_Intersects, ST_Overlaps, ST_Touches, ST_Crosses	 a && b
 *	 ST_Contains, ST_ContainsProperly, ST_Covers			 a ~ b
 *	 ST_Within, ST_CoveredBy								 a @ b
 *	 ST_Equals												 a ~= b
 *	 ST_DWithin, ST_DFullyWithin (a, b, d)					 a && ST_Expand(b, d)
 *
 * (with the indexed column as the second argument, ~ and @ swap).  Each is
 * implied by the function for every input, NULL and EMPTY included (the
 * function is false or NULL whenever the boxes fail the condition; PostGIS
 * relies on the same implications for GiST, and ST_Equals compares boxes
 * first), so a conjunct added beside the call changes no answer: it only
 * gives the planner an index condition.  The call stays and decides.
 *
 * Only top-level conjuncts are rewritten (a call under OR or NOT implies
 * nothing for the whole qual), only for geometry (geography is refused by
 * the access methods), only where the other argument is not volatile, and
 * never on a table without one of our indexes on that column.  Being a
 * planner step it works for prepared statements, generic plans, PL/pgSQL
 * and joins (the condition on the inner side becomes a parameterized index
 * scan).  hybrid_index.postgis_functions = off turns it off.
 *
 * During recovery (a hot standby) the indexes cannot be read: the
 * standby's copies of their files are not kept up to date (see
 * log/hi_wal.c).  A second hook takes them out of the planner's choices
 * there, so queries on a hot standby plan without them and answer exactly
 * from the table, instead of failing on the index.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/relation.h"
#include "catalog/pg_class.h"
#include "catalog/pg_index.h"
#include "catalog/pg_opclass.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "access/xlog.h"
#include "optimizer/optimizer.h"
#include "optimizer/plancat.h"
#include "optimizer/planner.h"
#include "parser/parse_func.h"
#include "parser/parsetree.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "base/hi_base.h"
#include "core/hi_core.h"
#include "hi_planner.h"

/* GiST's strategy numbers, which our operator classes use */
#define STRAT_OVERLAP	3
#define STRAT_SAME		6
#define STRAT_CONTAINS	7
#define STRAT_WITHIN	8

typedef struct ImpliedBox
{
	const char *name;			/* PostGIS function, lower case */
	int			nargs;
	int			strategy;		/* with the first argument indexed */
	bool		expand;			/* the third argument widens the other side */
} ImpliedBox;

static const ImpliedBox implied[] = {
	{"st_intersects", 2, STRAT_OVERLAP, false},
	{"st_overlaps", 2, STRAT_OVERLAP, false},
	{"st_touches", 2, STRAT_OVERLAP, false},
	{"st_crosses", 2, STRAT_OVERLAP, false},
	{"st_contains", 2, STRAT_CONTAINS, false},
	{"st_containsproperly", 2, STRAT_CONTAINS, false},
	{"st_covers", 2, STRAT_CONTAINS, false},
	{"st_within", 2, STRAT_WITHIN, false},
	{"st_coveredby", 2, STRAT_WITHIN, false},
	{"st_equals", 2, STRAT_SAME, false},
	{"st_dwithin", 3, STRAT_OVERLAP, true},
	{"st_dfullywithin", 3, STRAT_OVERLAP, true},
};

bool		hi_postgis_functions = true;

static planner_hook_type prev_planner_hook = NULL;

/* Is t PostGIS's geometry type, in namespace nsp? */
static bool
is_geometry(Oid t, Oid nsp)
{
	HeapTuple	tp = SearchSysCache1(TYPEOID, ObjectIdGetDatum(t));
	bool		ok = false;

	if (HeapTupleIsValid(tp))
	{
		Form_pg_type typ = (Form_pg_type) GETSTRUCT(tp);

		ok = strcmp(NameStr(typ->typname), "geometry") == 0 && typ->typnamespace == nsp;
		ReleaseSysCache(tp);
	}
	return ok;
}

/* The entry of a function call we know, or NULL */
static const ImpliedBox *
implied_of(FuncExpr *fe, Oid *geomtype)
{
	HeapTuple	tp;
	Form_pg_proc proc;
	const ImpliedBox *found = NULL;
	int			i;

	tp = SearchSysCache1(PROCOID, ObjectIdGetDatum(fe->funcid));
	if (!HeapTupleIsValid(tp))
		return NULL;
	proc = (Form_pg_proc) GETSTRUCT(tp);
	for (i = 0; i < lengthof(implied); i++)
		if (proc->pronargs == implied[i].nargs &&
			strcmp(NameStr(proc->proname), implied[i].name) == 0)
			found = &implied[i];
	/* geometry arguments, from the namespace of the geometry type */
	if (found != NULL)
	{
		Oid			t = proc->proargtypes.values[0];

		if (!is_geometry(t, proc->pronamespace) || proc->proargtypes.values[1] != t ||
			(found->expand && proc->proargtypes.values[2] != FLOAT8OID))
			found = NULL;
		else
			*geomtype = t;
	}
	ReleaseSysCache(tp);
	return found;
}

/*
 * The operator family of one of our indexes whose first column is
 * attno of relid (a partitioned index counts: its partitions' indexes are
 * ours), InvalidOid if there is none.
 */
static Oid
our_index_opfamily(Oid relid, AttrNumber attno)
{
	Relation	rel = relation_open(relid, NoLock);
	List	   *indexes = RelationGetIndexList(rel);
	ListCell   *lc;
	Oid			opfamily = InvalidOid;

	relation_close(rel, NoLock);
	foreach(lc, indexes)
	{
		Oid			indexoid = lfirst_oid(lc);
		HeapTuple	itup = SearchSysCache1(INDEXRELID, ObjectIdGetDatum(indexoid));
		Form_pg_index index;
		bool		isnull;
		Datum		d;
		oidvector  *indclass;

		if (!HeapTupleIsValid(itup))
			continue;
		index = (Form_pg_index) GETSTRUCT(itup);
		if (index->indnatts >= 1 && index->indkey.values[0] == attno &&
			(hi_is_our_index(indexoid) ||
			 hi_is_our_index_of_kind(indexoid, RELKIND_PARTITIONED_INDEX)))
		{
			d = SysCacheGetAttr(INDEXRELID, itup, Anum_pg_index_indclass, &isnull);
			indclass = (oidvector *) DatumGetPointer(d);
			opfamily = get_opclass_family(indclass->values[0]);
		}
		ReleaseSysCache(itup);
		if (OidIsValid(opfamily))
			break;
	}
	list_free(indexes);
	return opfamily;
}

/* ST_Expand(geometry, float8) of the namespace the geometry type is in */
static Oid
expand_function(Oid geomtype)
{
	HeapTuple	tp = SearchSysCache1(TYPEOID, ObjectIdGetDatum(geomtype));
	Oid			nsp;
	List	   *name;
	Oid			args[2] = {geomtype, FLOAT8OID};

	if (!HeapTupleIsValid(tp))
		return InvalidOid;
	nsp = ((Form_pg_type) GETSTRUCT(tp))->typnamespace;
	ReleaseSysCache(tp);
	name = list_make2(makeString(get_namespace_name(nsp)), makeString("st_expand"));
	return LookupFuncName(name, 2, args, true);
}

/* Is clause (or its commuted form) in list already? */
static bool
already_there(List *list, OpExpr *clause)
{
	Oid			commutator = get_commutator(clause->opno);
	ListCell   *lc;

	foreach(lc, list)
	{
		Node	   *n = lfirst(lc);
		OpExpr	   *op;

		if (equal(n, clause))
			return true;
		if (!IsA(n, OpExpr) || !OidIsValid(commutator))
			continue;
		op = (OpExpr *) n;
		if (op->opno == commutator && list_length(op->args) == 2 &&
			equal(linitial(op->args), lsecond(clause->args)) &&
			equal(lsecond(op->args), linitial(clause->args)))
			return true;
	}
	return false;
}

/*
 * The box conditions one call implies for the columns among its two
 * geometry arguments that have one of our indexes, appended to *conds.
 */
static void
add_implied(Query *query, FuncExpr *fe, List **conds)
{
	Oid			geomtype = InvalidOid;
	const ImpliedBox *ib = implied_of(fe, &geomtype);
	int			side;

	if (ib == NULL)
		return;
	for (side = 0; side < 2; side++)
	{
		Node	   *arg = list_nth(fe->args, side);
		Node	   *other = list_nth(fe->args, 1 - side);
		Var		   *var;
		RangeTblEntry *rte;
		Oid			opfamily;
		int			strategy = ib->strategy;
		Oid			opno;
		Node	   *rhs;
		OpExpr	   *clause;

		if (!IsA(arg, Var))
			continue;
		var = (Var *) arg;
		if (var->varlevelsup != 0 || var->varattno <= 0 ||
			var->varno < 1 || var->varno > list_length(query->rtable))
			continue;
		rte = rt_fetch(var->varno, query->rtable);
		if (rte->rtekind != RTE_RELATION)
			continue;
		/* duplicating a volatile argument would change the answer */
		if (contain_volatile_functions(other) ||
			(ib->expand && contain_volatile_functions(list_nth(fe->args, 2))))
			continue;
		opfamily = our_index_opfamily(rte->relid, var->varattno);
		if (!OidIsValid(opfamily))
			continue;
		/* contains(a, b) with b indexed: b within a */
		if (side == 1 && strategy == STRAT_CONTAINS)
			strategy = STRAT_WITHIN;
		else if (side == 1 && strategy == STRAT_WITHIN)
			strategy = STRAT_CONTAINS;
		opno = get_opfamily_member(opfamily, geomtype, geomtype, strategy);
		if (!OidIsValid(opno))
			continue;
		rhs = copyObject(other);
		if (ib->expand)
		{
			Oid			expand = expand_function(geomtype);

			if (!OidIsValid(expand))
				continue;
			rhs = (Node *) makeFuncExpr(expand, geomtype,
										list_make2(rhs, copyObject(list_nth(fe->args, 2))),
										InvalidOid, InvalidOid, COERCE_EXPLICIT_CALL);
		}
		clause = (OpExpr *) make_opclause(opno, BOOLOID, false, (Expr *) copyObject(var),
										  (Expr *) rhs, InvalidOid, InvalidOid);
		if (!already_there(*conds, clause))
			*conds = lappend(*conds, clause);
	}
}

/* The top-level conjuncts of a qual, nested ANDs flattened */
static List *
conjuncts(Node *qual)
{
	List	   *out = NIL;
	ListCell   *lc;

	if (qual == NULL)
		return NIL;
	if (is_andclause(qual))
	{
		foreach(lc, ((BoolExpr *) qual)->args)
			out = list_concat(out, conjuncts(lfirst(lc)));
		return out;
	}
	return list_make1(qual);
}

/* qual with the conditions its conjuncts imply added to it */
static Node *
rewrite_qual(Query *query, Node *qual)
{
	List	   *conds = conjuncts(qual);
	List	   *added = NIL;
	ListCell   *lc;

	foreach(lc, conds)
		if (IsA(lfirst(lc), FuncExpr))
			add_implied(query, (FuncExpr *) lfirst(lc), &added);
	if (added == NIL)
		return qual;
	return (Node *) make_ands_explicit(list_concat(conds, added));
}

/* The WHERE lists and JOIN ... ON lists of one query level */
static void
rewrite_jointree(Query *query, Node *node)
{
	if (node == NULL)
		return;
	if (IsA(node, FromExpr))
	{
		FromExpr   *f = (FromExpr *) node;
		ListCell   *lc;

		foreach(lc, f->fromlist)
			rewrite_jointree(query, lfirst(lc));
		f->quals = rewrite_qual(query, f->quals);
	}
	else if (IsA(node, JoinExpr))
	{
		JoinExpr   *j = (JoinExpr *) node;

		rewrite_jointree(query, j->larg);
		rewrite_jointree(query, j->rarg);
		j->quals = rewrite_qual(query, j->quals);
	}
}

/* Every query level: subqueries, CTEs and sublinks included */
static bool
rewrite_walker(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, Query))
	{
		Query	   *query = (Query *) node;

		rewrite_jointree(query, (Node *) query->jointree);
		return query_tree_walker(query, rewrite_walker, context, 0);
	}
	return expression_tree_walker(node, rewrite_walker, context);
}

static PlannedStmt *
hi_planner(HI_PLANNER_ARGS)
{
	if (hi_postgis_functions && parse->commandType != CMD_UTILITY)
		(void) rewrite_walker((Node *) parse, NULL);
	if (prev_planner_hook)
		return prev_planner_hook(HI_PLANNER_PASS);
	return standard_planner(HI_PLANNER_PASS);
}

/* Called once from _PG_init */
void
hi_planner_install(void)
{
	DefineCustomBoolVariable("hybrid_index.postgis_functions",
							 "Let ST_Intersects, ST_DWithin, ST_Contains and their kin use hybrid_index indexes.",
							 "Adds the box condition each call implies (as PostGIS does for GiST) where a column has one of our indexes.",
							 &hi_postgis_functions, true, PGC_USERSET, 0, NULL, NULL, NULL);
	prev_planner_hook = planner_hook;
	planner_hook = hi_planner;
}
