/*
 * rtam_hyrtree.c
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

#include "am/am_common.h"
#include "am/rtam.h"
#include "rtree/rtree.h"
#include "cache/page_cache.h"
#include "core/hi_core.h"
#include "policy/placement.h"

PG_FUNCTION_INFO_V1(hyrtree_handler);

static relopt_kind hyrtree_relopt_kind;

/* hyrtree's reloptions: the common ones and the wma/random parameters */
typedef struct HyrtreeOptions
{
	HiIndexOptions base;
	int			epoch_size;		/* -1: hybrid_index.epoch_size */
	int			wma_epochs;		/* -1: hybrid_index.wma_epochs */
	double		wma_threshold;	/* -1: hybrid_index.wma_threshold */
	int			optane_capacity;	/* kB, 0 = unlimited */
} HyrtreeOptions;

static relopt_enum_elt_def placement_values[] = {
	{"none", HI_PLACEMENT_NONE},
	{"upper", HI_PLACEMENT_UPPER},
	{"wma", HI_PLACEMENT_WMA},
	{"random", HI_PLACEMENT_RANDOM},
	{NULL, 0}
};

/* Reloption validator of optane_tablespace (hyrtree, hgrid) */
void
hi_validate_tablespace_name(const char *value)
{
	if (value == NULL || value[0] == '\0')
		return;
	if (!OidIsValid(get_tablespace_oid(value, true)))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("optane_tablespace \"%s\" does not exist", value)));
}

static const HiAmOps hyrtree_ops = {
	.name = "hyrtree",
	.kind = HI_AM_HYRTREE,
	.default_placement = HI_PLACEMENT_WMA,
	.source = &hi_cache_source,
	.redo = rt_redo,
	.check = rt_check,
	.inspect_json = rt_inspect_json,
	.pages = rt_pages,
	.discard = NULL,
	.page_layout = rt_page_layout
};

/* The placement parameters of an index (hi_wma_params_fn) */
static void
hyrtree_wma_params(Relation index, HiWmaParams *out)
{
	HyrtreeOptions *o = (HyrtreeOptions *) index->rd_options;

	if (o == NULL)
		return;
	out->epoch_size = o->epoch_size;
	out->wma_epochs = o->wma_epochs;
	out->wma_threshold = o->wma_threshold;
	out->optane_capacity_kb = o->optane_capacity;
}

void
hyrtree_init(void)
{
	hi_register_am(&hyrtree_ops);
	hi_place_register_kind(hyrtree_ops.kind, hyrtree_ops.page_layout);
	hi_wma_register(hyrtree_ops.kind, hyrtree_wma_params);
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
						 "", hi_validate_tablespace_name, AccessExclusiveLock);
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
		{"page_size", RELOPT_TYPE_INT, offsetof(HyrtreeOptions, base.page_size)},
		{"placement", RELOPT_TYPE_ENUM, offsetof(HyrtreeOptions, base.placement)},
		{"buffer_size", RELOPT_TYPE_INT, offsetof(HyrtreeOptions, base.buffer_size)},
		{"optane_tablespace", RELOPT_TYPE_STRING, offsetof(HyrtreeOptions, base.optane_tablespace)},
		{"epoch_size", RELOPT_TYPE_INT, offsetof(HyrtreeOptions, epoch_size)},
		{"wma_epochs", RELOPT_TYPE_INT, offsetof(HyrtreeOptions, wma_epochs)},
		{"wma_threshold", RELOPT_TYPE_REAL, offsetof(HyrtreeOptions, wma_threshold)},
		{"optane_capacity", RELOPT_TYPE_INT, offsetof(HyrtreeOptions, optane_capacity)},
	};
	HyrtreeOptions *opts;

	opts = (HyrtreeOptions *) build_reloptions(reloptions, validate,
											   hyrtree_relopt_kind,
											   sizeof(HyrtreeOptions),
											   tab, lengthof(tab));
	if (opts)
	{
		/* what the ranges let through but the meaning does not (-1: the GUC) */
		if (opts->epoch_size == 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid value for epoch_size: 0"),
					 errdetail("An epoch must count at least 1 node read (-1: the setting hybrid_index.epoch_size).")));
		if (opts->wma_epochs == 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid value for wma_epochs: 0"),
					 errdetail("The moving average must span at least 1 epoch (-1: the setting hybrid_index.wma_epochs).")));
		if (opts->wma_threshold != -1 && opts->wma_threshold < 1)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid value for wma_threshold: %g", opts->wma_threshold),
					 errdetail("wma_threshold is a percentile between 1 and 100 (-1: the setting hybrid_index.wma_threshold).")));
		am_check_page_size(opts->base.page_size);
	}
	return (bytea *) opts;
}

static IndexAmRoutine *
hyrtree_routine(void)
{
	return rtam_routine(hyrtree_options);
}

Datum
hyrtree_handler(PG_FUNCTION_ARGS)
{
	static IndexAmRoutine *kept = NULL;

	hi_check_preloaded();
	return hi_am_handler_result(&kept, hyrtree_routine);
}
