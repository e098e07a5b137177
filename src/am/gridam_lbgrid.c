/*
 * gridam_lbgrid.c
 *	  The lbgrid access method: handler, reloptions, GUCs, operator class
 *	  validation, and its registration with the hybrid_index core.
 *
 * Parameters (thesis section 3.5 and Table 3.2), each a GUC
 * hybrid_index.lbgrid_* that a reloption of the same name overrides:
 *	 logging			on: LB-Grid (log-buckets, BTT); off: GFFM
 *	 bucket_capacity	entries per bucket (0: as many as a page holds)
 *	 buffer_size		directory + bucket buffers, kB (reloption of the core)
 *	 buffer_split		% of buffer_size for directories (75)
 *	 cold_size			CLRU pages of each buffer (128)
 *	 merge_threshold	% occupancy below which buckets merge (30)
 *	 batch_size			pages per batched read (0: half the bucket buffer)
 *	 knn_prefetch		kNN reads the closest cells in batches (on)
 *	 compact_threshold	% live records below which a log-bucket is compacted
 *	 max_list			log-buckets on a bucket's list before it is rewritten
 * logging and bucket_capacity are fixed when the index is built; the
 * buffer sizes when it is loaded; the rest apply to each operation.
 */
#include "postgres.h"

#include "access/reloptions.h"
#include "commands/progress.h"
#include "fmgr.h"
#include "utils/guc.h"

#include "am/am_common.h"
#include "am/gridam.h"
#include "lbgrid/lbgrid.h"
#include "core/hi_core.h"
#include "policy/placement.h"

PG_FUNCTION_INFO_V1(lbgrid_handler);

int			lbgrid_buffer_kb = LBGRID_BUFFER_KB_DEFAULT;
int			lbgrid_buffer_split = LBGRID_BUFFER_SPLIT_DEFAULT;
int			lbgrid_cold_size = LBGRID_COLD_DEFAULT;
int			lbgrid_merge_threshold = LBGRID_MERGE_DEFAULT;
int			lbgrid_batch_size = 0;
bool		lbgrid_knn_prefetch = true;
bool		lbgrid_logging = true;
int			lbgrid_bucket_capacity = 0;
int			lbgrid_compact_threshold = LBGRID_COMPACT_DEFAULT;
int			lbgrid_max_list = LBGRID_MAX_LIST_DEFAULT;

static relopt_kind lbgrid_relopt_kind;

/* as the reloption: a bucket holds at least 2 entries (0: a page's worth) */
static bool
check_bucket_capacity(int *newval, void **extra, GucSource source)
{
	if (*newval == 1)
	{
		GUC_check_errdetail("A bucket must hold at least 2 entries (0: as many as a page holds).");
		return false;
	}
	return true;
}

static relopt_enum_elt_def onoff_values[] = {
	{"default", -1},
	{"on", 1},
	{"off", 0},
	{NULL, 0}
};

static const HiAmOps lbgrid_ops = {
	.name = "lbgrid",
	.kind = HI_AM_LBGRID,
	.default_placement = HI_PLACEMENT_NONE,
	.source = &grid_page_source,
	.redo = grid_redo,
	.check = lbgrid_check,
	.inspect_json = lbgrid_inspect_json,
	.pages = lbgrid_pages,
	.discard = grid_discard,
	.reset_stats = lbgrid_reset_stats,
	.page_layout = lbgrid_page_layout
};

static const HiGucDef lbgrid_gucs[] = {
	{"hybrid_index.lbgrid_buffer_size",
		"Memory of an lbgrid index's directory and bucket buffers (HLRU lists).",
		"Applies when the index is loaded; per index: reloption buffer_size.",
		HI_GUC_INT, &lbgrid_buffer_kb, LBGRID_BUFFER_KB_DEFAULT, 64, 64 * 1024 * 1024, NULL, PGC_SUSET, GUC_UNIT_KB},
	{"hybrid_index.lbgrid_buffer_split",
		"Percentage of the lbgrid buffer given to directory pages.",
		"The thesis uses 75 (directories) / 25 (buckets).",
		HI_GUC_INT, &lbgrid_buffer_split, LBGRID_BUFFER_SPLIT_DEFAULT, 1, 99, NULL, PGC_SUSET, 0},
	{"hybrid_index.lbgrid_cold_size",
		"Pages in each cold LRU list (CLRU) of an lbgrid index, written as one batch.",
		NULL,
		HI_GUC_INT, &lbgrid_cold_size, LBGRID_COLD_DEFAULT, 1, LBGRID_COLD_MAX, NULL, PGC_SUSET, 0},
	{"hybrid_index.lbgrid_merge_threshold",
		"Bucket occupancy (percent) below which lbgrid merges buckets.",
		NULL,
		HI_GUC_INT, &lbgrid_merge_threshold, LBGRID_MERGE_DEFAULT, 0, LBGRID_MERGE_MAX, NULL, PGC_SUSET, 0},
	{"hybrid_index.lbgrid_batch_size",
		"Pages per batched read of lbgrid range, kNN and group queries.",
		"0: half of the bucket buffer; 1: no batching.",
		HI_GUC_INT, &lbgrid_batch_size, 0, 0, INT_MAX, NULL, PGC_SUSET, 0},
	{"hybrid_index.lbgrid_knn_prefetch",
		"Whether lbgrid kNN scans read the closest cells' buckets in batches.",
		NULL,
		HI_GUC_BOOL, &lbgrid_knn_prefetch, 1, 0, 0, NULL, PGC_SUSET, 0},
	{"hybrid_index.lbgrid_logging",
		"Whether new lbgrid indexes keep buckets in log-buckets (LB-Grid) or in place (GFFM).",
		"Fixed when the index is built; per index: reloption logging.",
		HI_GUC_BOOL, &lbgrid_logging, 1, 0, 0, NULL, PGC_SUSET, 0},
	{"hybrid_index.lbgrid_bucket_capacity",
		"Entries per bucket of new lbgrid indexes (0: as many as a page holds).",
		NULL,
		HI_GUC_INT, &lbgrid_bucket_capacity, 0, 0, LBGRID_CAPACITY_MAX, NULL, PGC_SUSET, 0,
	check_bucket_capacity},
	{"hybrid_index.lbgrid_compact_threshold",
		"Live records (percent) below which an LB-Grid log-bucket is compacted.",
		NULL,
		HI_GUC_INT, &lbgrid_compact_threshold, LBGRID_COMPACT_DEFAULT, 0, LBGRID_COMPACT_MAX, NULL, PGC_SUSET, 0},
	{"hybrid_index.lbgrid_max_list",
		"Log-buckets a bucket's BTT list may reach before the bucket is rewritten (0: no limit).",
		NULL,
		HI_GUC_INT, &lbgrid_max_list, LBGRID_MAX_LIST_DEFAULT, 0, LBGRID_MAX_LIST_MAX, NULL, PGC_SUSET, 0},
};

static void
define_gucs(void)
{
	hi_define_guc_table(lbgrid_gucs, lengthof(lbgrid_gucs));
}

static void
define_reloptions(void)
{
	lbgrid_relopt_kind = add_reloption_kind();
	add_int_reloption(lbgrid_relopt_kind, "page_size",
					  "Index page size in bytes (a power of two)",
					  HI_PAGE_SIZE_DEFAULT, HI_PAGE_SIZE_MIN, HI_PAGE_SIZE_MAX,
					  AccessExclusiveLock);
	add_int_reloption(lbgrid_relopt_kind, "buffer_size",
					  "Directory and bucket buffers in kB (0: hybrid_index.lbgrid_buffer_size)",
					  0, 0, INT_MAX, AccessExclusiveLock);
	add_enum_reloption(lbgrid_relopt_kind, "logging",
					   "LB-Grid log-buckets (on) or GFFM buckets updated in place (off)",
					   onoff_values, -1, "Valid values are \"on\", \"off\" and \"default\".",
					   AccessExclusiveLock);
	add_int_reloption(lbgrid_relopt_kind, "bucket_capacity",
					  "Entries per bucket (0: hybrid_index.lbgrid_bucket_capacity)",
					  0, 0, LBGRID_CAPACITY_MAX, AccessExclusiveLock);
	add_int_reloption(lbgrid_relopt_kind, "cold_size",
					  "Pages of each cold LRU list (-1: hybrid_index.lbgrid_cold_size)",
					  -1, -1, LBGRID_COLD_MAX, AccessExclusiveLock);
	add_int_reloption(lbgrid_relopt_kind, "buffer_split",
					  "Percentage of the buffer for directories (-1: hybrid_index.lbgrid_buffer_split)",
					  -1, -1, 99, AccessExclusiveLock);
	add_int_reloption(lbgrid_relopt_kind, "merge_threshold",
					  "Occupancy percentage below which buckets merge (-1: GUC)",
					  -1, -1, LBGRID_MERGE_MAX, AccessExclusiveLock);
	add_int_reloption(lbgrid_relopt_kind, "batch_size",
					  "Pages per batched read (-1: GUC, 0: half the bucket buffer)",
					  -1, -1, INT_MAX, AccessExclusiveLock);
	add_enum_reloption(lbgrid_relopt_kind, "knn_prefetch",
					   "kNN scans read the closest buckets in batches",
					   onoff_values, -1, "Valid values are \"on\", \"off\" and \"default\".",
					   AccessExclusiveLock);
	add_int_reloption(lbgrid_relopt_kind, "compact_threshold",
					  "Live percentage below which a log-bucket is compacted (-1: GUC)",
					  -1, -1, LBGRID_COMPACT_MAX, AccessExclusiveLock);
	add_int_reloption(lbgrid_relopt_kind, "max_list",
					  "Log-buckets on a bucket's list before it is rewritten (-1: GUC, 0: no limit)",
					  -1, -1, LBGRID_MAX_LIST_MAX, AccessExclusiveLock);
}

/* From _PG_init */
void
lbgrid_init(void)
{
	grid_shmem_init();
	grid_register_store(GRID_MODE_LOG, &lb_store_ops);
	grid_register_am(HI_AM_LBGRID, lbgrid_settings, NULL, NULL, NULL);
	hi_register_am(&lbgrid_ops);
	hi_place_register_kind(lbgrid_ops.kind, lbgrid_ops.page_layout);
	define_gucs();
	define_reloptions();
}

static inline int
pick(int reloption, int guc)
{
	return reloption >= 0 ? reloption : guc;
}

/* The index's parameters: reloptions over this session's GUCs */
void
lbgrid_settings(Relation index, GridSettings *out)
{
	/* no relation (the checkpoint at shutdown): the server's settings */
	LbgridOptions *o = index ? (LbgridOptions *) index->rd_options : NULL;

	out->mode = (o ? pick(o->logging, lbgrid_logging) : lbgrid_logging) ?
		GRID_MODE_LOG : GRID_MODE_GFFM;
	out->capacity = o && o->bucket_capacity > 0 ? o->bucket_capacity : lbgrid_bucket_capacity;
	out->buffer_kb = o && o->base.buffer_size > 0 ? o->base.buffer_size : lbgrid_buffer_kb;
	out->dir_pct = o ? pick(o->buffer_split, lbgrid_buffer_split) : lbgrid_buffer_split;
	out->cold_pages = o ? pick(o->cold_size, lbgrid_cold_size) : lbgrid_cold_size;
	out->merge_pct = o ? pick(o->merge_threshold, lbgrid_merge_threshold) : lbgrid_merge_threshold;
	out->batch_pages = o ? pick(o->batch_size, lbgrid_batch_size) : lbgrid_batch_size;
	out->knn_prefetch = o ? pick(o->knn_prefetch, lbgrid_knn_prefetch) : lbgrid_knn_prefetch;
	out->compact_pct = o ? pick(o->compact_threshold, lbgrid_compact_threshold) :
		lbgrid_compact_threshold;
	out->max_list = o ? pick(o->max_list, lbgrid_max_list) : lbgrid_max_list;
}

/*
 * The Grid File reloptions (lbgrid's and hgrid's) that their ranges let
 * through but their meaning does not
 */
void
lbgrid_check_options(const LbgridOptions *o)
{
	am_check_page_size(o->base.page_size);
	if (o->bucket_capacity == 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for bucket_capacity: 1"),
				 errdetail("A bucket must hold at least 2 entries (0: the setting hybrid_index.lbgrid_bucket_capacity).")));
	if (o->cold_size == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for cold_size: 0"),
				 errdetail("A cold LRU list holds at least one page (-1: the setting hybrid_index.lbgrid_cold_size).")));
	if (o->buffer_split == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for buffer_split: 0"),
				 errdetail("The directory buffer takes 1 to 99 percent of the buffer (-1: the setting hybrid_index.lbgrid_buffer_split).")));
}

static bytea *
lbgrid_options(Datum reloptions, bool validate)
{
	static const relopt_parse_elt tab[] = {
		{"page_size", RELOPT_TYPE_INT, offsetof(LbgridOptions, base.page_size)},
		{"buffer_size", RELOPT_TYPE_INT, offsetof(LbgridOptions, base.buffer_size)},
		{"logging", RELOPT_TYPE_ENUM, offsetof(LbgridOptions, logging)},
		{"bucket_capacity", RELOPT_TYPE_INT, offsetof(LbgridOptions, bucket_capacity)},
		{"cold_size", RELOPT_TYPE_INT, offsetof(LbgridOptions, cold_size)},
		{"buffer_split", RELOPT_TYPE_INT, offsetof(LbgridOptions, buffer_split)},
		{"merge_threshold", RELOPT_TYPE_INT, offsetof(LbgridOptions, merge_threshold)},
		{"batch_size", RELOPT_TYPE_INT, offsetof(LbgridOptions, batch_size)},
		{"knn_prefetch", RELOPT_TYPE_ENUM, offsetof(LbgridOptions, knn_prefetch)},
		{"compact_threshold", RELOPT_TYPE_INT, offsetof(LbgridOptions, compact_threshold)},
		{"max_list", RELOPT_TYPE_INT, offsetof(LbgridOptions, max_list)},
	};
	LbgridOptions *opts;

	opts = (LbgridOptions *) build_reloptions(reloptions, validate, lbgrid_relopt_kind,
											  sizeof(LbgridOptions), tab, lengthof(tab));
	if (opts)
		lbgrid_check_options(opts);
	return (bytea *) opts;
}

/* amvalidate: see am_validate(); the message names lbgrid or hgrid */
static bool
lbgrid_validate(Oid opclassoid)
{
	return am_validate(opclassoid);
}

static char *
lbgrid_buildphasename(int64 phasenum)
{
	switch (phasenum)
	{
		case PROGRESS_CREATEIDX_SUBPHASE_INITIALIZE:
			return "initializing";
		case AM_PHASE_SCAN:
			return "reading entries";
		case AM_PHASE_LOAD:
			return "building grid";
		default:
			return NULL;
	}
}

/*
 * The index AM routine of the grid access methods (lbgrid and hgrid share
 * everything but reloptions, build and VACUUM wrappers).
 */
IndexAmRoutine *
grid_am_routine(void)
{
	IndexAmRoutine *am = am_routine();

	am->amsearcharray = true;	/* geom ~= ANY(...): group point queries */
	am->ambuild = lbgrid_build;
	am->aminsert = lbgrid_insert;
	am->ambulkdelete = lbgrid_bulkdelete;
	am->amcostestimate = lbgrid_costestimate;
	am->amoptions = lbgrid_options;
	am->ambuildphasename = lbgrid_buildphasename;
	am->amvalidate = lbgrid_validate;
	am->ambeginscan = lbgrid_beginscan;
	am->amrescan = am_rescan;
	am->amgettuple = lbgrid_gettuple;
	am->amgetbitmap = lbgrid_getbitmap;
	am->amendscan = am_endscan;
	return am;
}

Datum
lbgrid_handler(PG_FUNCTION_ARGS)
{
	static IndexAmRoutine *kept = NULL;

	hi_check_preloaded();
	return hi_am_handler_result(&kept, grid_am_routine);
}
