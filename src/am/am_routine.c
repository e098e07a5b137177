/*
 * am_routine.c
 *	  The parts of the index AM routine every hybrid_index AM shares (what
 *	  it can and cannot do, the callbacks of am_build.c and am_vacuum.c),
 *	  and operator class validation.
 */
#include "postgres.h"

#include "access/amvalidate.h"
#include "catalog/pg_amop.h"
#include "catalog/pg_opclass.h"
#include "commands/defrem.h"
#include "commands/vacuum.h"
#include "utils/catcache.h"
#include "utils/regproc.h"
#include "utils/syscache.h"

#include "am/am_common.h"

/*
 * An index AM routine with the capabilities of all our AMs; the caller
 * sets amsearcharray if it wants, and the callbacks of its own family
 * (build, insert, bulk delete, cost, options, phase names, validate, scans).
 */
IndexAmRoutine *
am_routine(void)
{
	IndexAmRoutine *am = makeNode(IndexAmRoutine);

	am->amstrategies = 0;
	am->amsupport = 0;
	am->amoptsprocnum = 0;
	am->amcanorder = false;
	am->amcanorderbyop = true;
	am->amcanbackward = false;
	am->amcanunique = false;
	am->amcanmulticol = false;
	am->amoptionalkey = true;
	am->amsearcharray = false;
	am->amsearchnulls = false;
	am->amstorage = false;
	am->amclusterable = true;	/* CLUSTER reads every TID in index (spatial) order */
	am->ampredlocks = false;
	am->amcanparallel = false;
	am->amcaninclude = true;
	am->amusemaintenanceworkmem = false;
	am->amparallelvacuumoptions = VACUUM_OPTION_NO_PARALLEL;
	am->amkeytype = InvalidOid;

	am->ambuildempty = am_buildempty;
	am->amvacuumcleanup = am_vacuumcleanup;
	am->amcanreturn = am_canreturn;
	am->amproperty = NULL;
	am->amadjustmembers = NULL;
	am->ammarkpos = NULL;
	am->amrestrpos = NULL;
	am->amestimateparallelscan = NULL;
	am->aminitparallelscan = NULL;
	am->amparallelrescan = NULL;
	return am;
}

/*
 * amvalidate: the operators of an opclass must be &&, ~=, ~, @, and <->
 * for ORDER BY.  The message names the access method.
 */
bool
am_validate(Oid opclassoid)
{
	HeapTuple	tup;
	Form_pg_opclass form;
	CatCList   *oprlist;
	bool		ok = true;
	int			i;
	char	   *phrase;

	tup = SearchSysCache1(CLAOID, ObjectIdGetDatum(opclassoid));
	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for operator class %u", opclassoid);
	form = (Form_pg_opclass) GETSTRUCT(tup);
	phrase = psprintf("access method %s", get_am_name(form->opcmethod));
	oprlist = SearchSysCacheList1(AMOPSTRATEGY, ObjectIdGetDatum(form->opcfamily));
	for (i = 0; i < oprlist->n_members; i++)
	{
		Form_pg_amop op = (Form_pg_amop) GETSTRUCT(&oprlist->members[i]->tuple);
		int			s = op->amopstrategy;
		bool		search_ok = s == AM_STRATEGY_OVERLAP || s == AM_STRATEGY_SAME ||
			s == AM_STRATEGY_CONTAINS || s == AM_STRATEGY_WITHIN;

		if (op->amoppurpose == AMOP_SEARCH ? !search_ok : s != AM_STRATEGY_DISTANCE)
		{
			ereport(INFO,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("operator family \"%s\" of %s contains operator %s with invalid strategy number %d",
							NameStr(form->opcname), phrase,
							format_operator(op->amopopr), s)));
			ok = false;
		}
	}
	ReleaseCatCacheList(oprlist);
	ReleaseSysCache(tup);
	pfree(phrase);
	return ok;
}

/* Reloption page_size: a power of two (the range is checked by its definition) */
void
am_check_page_size(int page_size)
{
	if ((page_size & (page_size - 1)) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for page_size: %d", page_size),
				 errdetail("page_size must be a power of two between %d and %d.",
						   HI_PAGE_SIZE_MIN, HI_PAGE_SIZE_MAX)));
}
