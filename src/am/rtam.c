/*
 * rtam.c
 *	  The index AM routine shared by the R-tree access methods (hyrtree,
 *	  efind), and their operator class validation.
 */
#include "postgres.h"

#include "commands/progress.h"

#include "am/am_common.h"
#include "am/rtam.h"
#include "rtree/rtree.h"

/* amvalidate: see am_validate(); the message names hyrtree or efind */
static bool
rtam_validate(Oid opclassoid)
{
	return am_validate(opclassoid);
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
	IndexAmRoutine *am = am_routine();

	am->ambuild = rtam_build;
	am->aminsert = rtam_insert;
	am->ambulkdelete = rtam_bulkdelete;
	am->amcostestimate = rtam_costestimate;
	am->amoptions = options;
	am->ambuildphasename = rtam_buildphasename;
	am->amvalidate = rtam_validate;
	am->ambeginscan = rtam_beginscan;
	am->amrescan = am_rescan;
	am->amgettuple = rtam_gettuple;
	am->amgetbitmap = rtam_getbitmap;
	am->amendscan = am_endscan;
	return am;
}
