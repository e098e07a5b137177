/*
 * rtam.c
 *	  The index AM routine shared by the R-tree access methods (hyrtree,
 *	  efind), and their operator class validation.
 */
#include "postgres.h"

#include "access/amvalidate.h"
#include "catalog/pg_amop.h"
#include "catalog/pg_opclass.h"
#include "commands/progress.h"
#include "commands/vacuum.h"
#include "utils/catcache.h"
#include "utils/regproc.h"
#include "utils/syscache.h"

#include "am/am_common.h"
#include "am/rtam.h"
#include "rtree/rtree.h"

/* Operators of an opclass must be ours: &&, ~=, ~, @ and <-> for ORDER BY */
static bool
rtam_validate(Oid opclassoid)
{
	HeapTuple	tup;
	Form_pg_opclass form;
	CatCList   *oprlist;
	bool		ok = true;
	int			i;

	tup = SearchSysCache1(CLAOID, ObjectIdGetDatum(opclassoid));
	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for operator class %u", opclassoid);
	form = (Form_pg_opclass) GETSTRUCT(tup);
	oprlist = SearchSysCacheList1(AMOPSTRATEGY, ObjectIdGetDatum(form->opcfamily));
	for (i = 0; i < oprlist->n_members; i++)
	{
		Form_pg_amop op = (Form_pg_amop) GETSTRUCT(&oprlist->members[i]->tuple);
		bool		search_ok = op->amopstrategy == RT_STRATEGY_OVERLAP ||
			op->amopstrategy == RT_STRATEGY_SAME ||
			op->amopstrategy == RT_STRATEGY_CONTAINS ||
			op->amopstrategy == RT_STRATEGY_WITHIN;

		if (op->amoppurpose == AMOP_SEARCH ? !search_ok :
			op->amopstrategy != RT_STRATEGY_DISTANCE)
		{
			ereport(INFO,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("operator family \"%s\" of a hybrid_index R-tree access method contains operator %s with invalid strategy number %d",
							NameStr(form->opcname), format_operator(op->amopopr),
							op->amopstrategy)));
			ok = false;
		}
	}
	ReleaseCatCacheList(oprlist);
	ReleaseSysCache(tup);
	return ok;
}

char *
rtam_buildphasename(int64 phasenum)
{
	switch (phasenum)
	{
		case PROGRESS_CREATEIDX_SUBPHASE_INITIALIZE:
			return "initializing";
		case AM_PHASE_SCAN:
			return "sorting entries";
		case AM_PHASE_LOAD:
			return "writing pages";
		default:
			return NULL;
	}
}

IndexAmRoutine *
rtam_routine(amoptions_function options)
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
	am->amclusterable = false;
	am->ampredlocks = false;
	am->amcanparallel = false;
	am->amcaninclude = false;
	am->amusemaintenanceworkmem = false;
	am->amparallelvacuumoptions = VACUUM_OPTION_NO_PARALLEL;
	am->amkeytype = InvalidOid;

	am->ambuild = rtam_build;
	am->ambuildempty = am_buildempty;
	am->aminsert = rtam_insert;
	am->ambulkdelete = rtam_bulkdelete;
	am->amvacuumcleanup = am_vacuumcleanup;
	am->amcanreturn = NULL;
	am->amcostestimate = rtam_costestimate;
	am->amoptions = options;
	am->amproperty = NULL;
	am->ambuildphasename = rtam_buildphasename;
	am->amvalidate = rtam_validate;
	am->amadjustmembers = NULL;
	am->ambeginscan = rtam_beginscan;
	am->amrescan = rtam_rescan;
	am->amgettuple = rtam_gettuple;
	am->amgetbitmap = rtam_getbitmap;
	am->amendscan = rtam_endscan;
	am->ammarkpos = NULL;
	am->amrestrpos = NULL;
	am->amestimateparallelscan = NULL;
	am->aminitparallelscan = NULL;
	am->amparallelrescan = NULL;

	return am;
}

