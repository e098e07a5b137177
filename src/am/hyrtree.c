/*
 * hyrtree.c
 *	  Handler, reloptions and operator class validation of the hyrtree
 *	  access method.
 */
#include "postgres.h"

#include "access/amvalidate.h"
#include "access/reloptions.h"
#include "catalog/pg_amop.h"
#include "catalog/pg_opclass.h"
#include "commands/defrem.h"
#include "commands/progress.h"
#include "commands/tablespace.h"
#include "commands/vacuum.h"
#include "utils/regproc.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/catcache.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "am/hyrtree.h"
#include "rtree/rtree.h"

PG_FUNCTION_INFO_V1(hyrtree_handler);

static relopt_kind hyrtree_relopt_kind;

static relopt_enum_elt_def placement_values[] = {
	{"none", HI_PLACEMENT_NONE},
	{"upper", HI_PLACEMENT_UPPER},
	{"wma", HI_PLACEMENT_WMA},
	{"random", HI_PLACEMENT_RANDOM},
	{NULL, 0}
};

static void
validate_tablespace_name(const char *value)
{
	if (value == NULL || value[0] == '\0')
		return;
	if (!OidIsValid(get_tablespace_oid(value, true)))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("optane_tablespace \"%s\" does not exist", value)));
}

void
hyrtree_init(void)
{
	hyrtree_relopt_kind = add_reloption_kind();
	add_int_reloption(hyrtree_relopt_kind, "page_size",
					  "Index page size in bytes (a power of two)",
					  HI_PAGE_SIZE_DEFAULT, HI_PAGE_SIZE_MIN, HI_PAGE_SIZE_MAX,
					  AccessExclusiveLock);
	add_enum_reloption(hyrtree_relopt_kind, "placement",
					   "Which pages live on the fast tier",
					   placement_values, HI_PLACEMENT_WMA,
					   "Valid values are \"none\", \"upper\", \"wma\" and \"random\".",
					   AccessExclusiveLock);
	add_string_reloption(hyrtree_relopt_kind, "optane_tablespace",
						 "Tablespace holding the fast (Optane) tier",
						 "", validate_tablespace_name, AccessExclusiveLock);
	add_int_reloption(hyrtree_relopt_kind, "buffer_size",
					  "Cache budget of this index in kB (0: share the whole cache)",
					  0, 0, INT_MAX, AccessExclusiveLock);
	add_int_reloption(hyrtree_relopt_kind, "epoch_size",
					  "Node reads per placement epoch (-1: hybrid_index.epoch_size)",
					  -1, -1, INT_MAX, AccessExclusiveLock);
	add_int_reloption(hyrtree_relopt_kind, "wma_epochs",
					  "Epochs in the moving average (-1: hybrid_index.wma_epochs)",
					  -1, -1, HI_WMA_MAX_EPOCHS, AccessExclusiveLock);
	add_real_reloption(hyrtree_relopt_kind, "wma_threshold",
					   "Score percentile for migration (-1: hybrid_index.wma_threshold)",
					   -1, -1, 100, AccessExclusiveLock);
	add_int_reloption(hyrtree_relopt_kind, "optane_capacity",
					  "Capacity of the fast tier in kB (0: unlimited)",
					  0, 0, INT_MAX, AccessExclusiveLock);
}

static bytea *
hyrtree_options(Datum reloptions, bool validate)
{
	static const relopt_parse_elt tab[] = {
		{"page_size", RELOPT_TYPE_INT, offsetof(HiIndexOptions, page_size)},
		{"placement", RELOPT_TYPE_ENUM, offsetof(HiIndexOptions, placement)},
		{"buffer_size", RELOPT_TYPE_INT, offsetof(HiIndexOptions, buffer_size)},
		{"optane_tablespace", RELOPT_TYPE_STRING, offsetof(HiIndexOptions, optane_tablespace)},
		{"epoch_size", RELOPT_TYPE_INT, offsetof(HiIndexOptions, epoch_size)},
		{"wma_epochs", RELOPT_TYPE_INT, offsetof(HiIndexOptions, wma_epochs)},
		{"wma_threshold", RELOPT_TYPE_REAL, offsetof(HiIndexOptions, wma_threshold)},
		{"optane_capacity", RELOPT_TYPE_INT, offsetof(HiIndexOptions, optane_capacity)},
	};
	HiIndexOptions *opts;

	opts = (HiIndexOptions *) build_reloptions(reloptions, validate,
											   hyrtree_relopt_kind,
											   sizeof(HiIndexOptions),
											   tab, lengthof(tab));
	if (opts && (opts->wma_epochs == 0 || (opts->wma_threshold >= 0 && opts->wma_threshold < 1) ||
				 opts->epoch_size == 0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid placement parameters"),
				 errdetail("epoch_size and wma_epochs must be positive, wma_threshold between 1 and 100.")));
	if (opts && (opts->page_size & (opts->page_size - 1)) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for page_size: %d", opts->page_size),
				 errdetail("page_size must be a power of two between %d and %d.",
						   HI_PAGE_SIZE_MIN, HI_PAGE_SIZE_MAX)));
	return (bytea *) opts;
}

/* Operators of an opclass must be ours: &&, ~=, ~, @ and <-> for ORDER BY */
static bool
hyrtree_validate(Oid opclassoid)
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
					 errmsg("operator family \"%s\" of access method hyrtree contains operator %s with invalid strategy number %d",
							NameStr(form->opcname), format_operator(op->amopopr),
							op->amopstrategy)));
			ok = false;
		}
	}
	ReleaseCatCacheList(oprlist);
	ReleaseSysCache(tup);
	return ok;
}

static char *
hyrtree_buildphasename(int64 phasenum)
{
	switch (phasenum)
	{
		case PROGRESS_CREATEIDX_SUBPHASE_INITIALIZE:
			return "initializing";
		case HYRTREE_PHASE_LOAD:
			return "sorting entries";
		case HYRTREE_PHASE_WRITE:
			return "writing pages";
		default:
			return NULL;
	}
}

Datum
hyrtree_handler(PG_FUNCTION_ARGS)
{
	IndexAmRoutine *am = makeNode(IndexAmRoutine);

	hi_check_preloaded();

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

	am->ambuild = hyrtree_build;
	am->ambuildempty = hyrtree_buildempty;
	am->aminsert = hyrtree_insert;
	am->ambulkdelete = hyrtree_bulkdelete;
	am->amvacuumcleanup = hyrtree_vacuumcleanup;
	am->amcanreturn = NULL;
	am->amcostestimate = hyrtree_costestimate;
	am->amoptions = hyrtree_options;
	am->amproperty = NULL;
	am->ambuildphasename = hyrtree_buildphasename;
	am->amvalidate = hyrtree_validate;
	am->amadjustmembers = NULL;
	am->ambeginscan = hyrtree_beginscan;
	am->amrescan = hyrtree_rescan;
	am->amgettuple = hyrtree_gettuple;
	am->amgetbitmap = hyrtree_getbitmap;
	am->amendscan = hyrtree_endscan;
	am->ammarkpos = NULL;
	am->amrestrpos = NULL;
	am->amestimateparallelscan = NULL;
	am->aminitparallelscan = NULL;
	am->amparallelrescan = NULL;

	PG_RETURN_POINTER(am);
}

/* Is this access method one of ours? */
bool
hi_is_our_am(Oid amoid)
{
	char	   *name;
	bool		ours;

	if (!OidIsValid(amoid))
		return false;
	name = get_am_name(amoid);
	ours = name != NULL && strcmp(name, "hyrtree") == 0;
	if (name)
		pfree(name);
	return ours;
}

/* Open a hyrtree index for use (loading and recovering it if needed) */
HiIndex *
hyrtree_open(Relation index)
{
	return hi_index_open_for(index, rt_redo);
}
