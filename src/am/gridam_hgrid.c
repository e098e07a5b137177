/*
 * gridam_hgrid.c
 *	  The hgrid access method (H-Grid, thesis section 4.3): handler,
 *	  reloptions, GUCs and registration with the hybrid_index core.
 *
 * H-Grid parameters, each a GUC hybrid_index.hgrid_* that a reloption
 * overrides (name in parentheses where it differs):
 *	 buffer_size			directory + bucket buffers, kB (64 MB, taken as pages
 *							fill it; the thesis (4.3.4) had 8 MB, its preset
 *							in bench/ keeps that)
 *	 selectivity			s of Algorithm 9 (the thesis varies 1.0-2.5)
 *	 average				cma (Algorithm 9) or sma over `window` weights
 *	 window					SMA window
 *	 cooling_period			accesses between cooling rounds (0: no cooling)
 *	 optane_capacity		fast-tier capacity in kB (0: unlimited)
 *	 directories_on_optane	the thesis' "H-Grid special case"
 * Reloptions only: placement (hot: H-Grid, random: the control, none: GFFM
 * on flash), optane_tablespace (the fast tier; default: the index's own
 * tablespace), and the Grid File core's, with lbgrid's GUCs as defaults:
 * page_size, bucket_capacity, cold_size, buffer_split, merge_threshold,
 * batch_size, knn_prefetch.  Buckets are GFFM's (updated in place through
 * the hot/cold buffers), as in the thesis.
 */
#include "postgres.h"

#include "access/reloptions.h"
#include "utils/guc.h"

#include "am/gridam.h"
#include "core/hi_core.h"
#include "policy/placement.h"

PG_FUNCTION_INFO_V1(hgrid_handler);

int			hgrid_buffer_kb = HGRID_BUFFER_KB_DEFAULT;
int			hgrid_buffer_split = HGRID_BUFFER_SPLIT_DEFAULT;
double		hgrid_selectivity = HGRID_SELECTIVITY_DEFAULT;
int			hgrid_average = 0;
int			hgrid_window = HGRID_WINDOW_DEFAULT;
int			hgrid_cooling_period = HGRID_COOLING_DEFAULT;
int			hgrid_capacity_kb = 0;
bool		hgrid_dirs_on_optane = false;

static relopt_kind hgrid_relopt_kind;

static const struct config_enum_entry average_options[] = {
	{"cma", 0, false},
	{"sma", 1, false},
	{NULL, 0, false}
};

static relopt_enum_elt_def average_values[] = {
	{"default", -1},
	{"cma", 0},
	{"sma", 1},
	{NULL, 0}
};

static relopt_enum_elt_def onoff_values[] = {
	{"default", -1},
	{"on", 1},
	{"off", 0},
	{NULL, 0}
};

static relopt_enum_elt_def placement_values[] = {
	{"hot", HR_PLACEMENT_HOT},
	{"random", HR_PLACEMENT_RANDOM},
	{"none", HR_PLACEMENT_NONE},
	{NULL, 0}
};

static const HiAmOps hgrid_ops = {
	.name = "hgrid",
	.kind = HI_AM_HGRID,
	.default_placement = HR_PLACEMENT_HOT,
	.source = &grid_page_source,
	.redo = grid_redo,
	.check = hgrid_check,
	.inspect_json = hgrid_inspect_json,
	.pages = hgrid_pages,
	.discard = grid_discard,
	.reset_stats = hgrid_reset_stats,
	.page_layout = grid_page_layout
};

static const HiGucDef hgrid_gucs[] = {
	{"hybrid_index.hgrid_buffer_size",
		"Memory of an hgrid index's directory and bucket buffers.",
		"Applies when the index is loaded; per index: reloption buffer_size.  Memory is taken as the index's pages fill the buffers.",
		HI_GUC_INT, &hgrid_buffer_kb, HGRID_BUFFER_KB_DEFAULT, 64, 64 * 1024 * 1024, NULL, PGC_SUSET, GUC_UNIT_KB},
	{"hybrid_index.hgrid_buffer_split",
		"Percentage of an hgrid index's buffer that holds directory pages; buckets get the rest.",
		"Applies when the index is loaded; per index: reloption buffer_split. H-Grid's directories are small: most of the buffer caches buckets.",
		HI_GUC_INT, &hgrid_buffer_split, HGRID_BUFFER_SPLIT_DEFAULT, 1, 99, NULL, PGC_SUSET, 0},
	{"hybrid_index.hgrid_selectivity",
		"Selectivity s of H-Grid's hot-region detection: a page is hot if its weight exceeds s times the average.",
		NULL,
		HI_GUC_REAL, &hgrid_selectivity, HGRID_SELECTIVITY_DEFAULT, 0.0, 1000.0, NULL, PGC_SUSET, 0},
	{"hybrid_index.hgrid_average",
		"Average the hot-region weights are compared with: cumulative (cma) or simple moving (sma).",
		NULL,
		HI_GUC_ENUM, &hgrid_average, 0, 0, 0, average_options, PGC_SUSET, 0},
	{"hybrid_index.hgrid_window",
		"Weights in the simple moving average of H-Grid (average = sma).",
		NULL,
		HI_GUC_INT, &hgrid_window, HGRID_WINDOW_DEFAULT, 1, HR_SMA_MAX_WINDOW, NULL, PGC_SUSET, 0},
	{"hybrid_index.hgrid_cooling_period",
		"Page accesses between H-Grid cooling rounds, which move pages unread for a whole period back to flash (0: never).",
		NULL,
		HI_GUC_INT, &hgrid_cooling_period, HGRID_COOLING_DEFAULT, 0, INT_MAX, NULL, PGC_SUSET, 0},
	{"hybrid_index.hgrid_optane_capacity",
		"Fast-tier capacity of an hgrid index (0: unlimited).",
		NULL,
		HI_GUC_INT, &hgrid_capacity_kb, 0, 0, INT_MAX, NULL, PGC_SUSET, GUC_UNIT_KB},
	{"hybrid_index.hgrid_directories_on_optane",
		"Whether hgrid indexes keep every sub-directory on the fast tier (the H-Grid special case).",
		NULL,
		HI_GUC_BOOL, &hgrid_dirs_on_optane, 0, 0, 0, NULL, PGC_SUSET, 0},
};

static void
define_gucs(void)
{
	hi_define_guc_table(hgrid_gucs, lengthof(hgrid_gucs));
}

static void
define_reloptions(void)
{
	relopt_kind k = add_reloption_kind();

	hgrid_relopt_kind = k;
	add_int_reloption(k, "page_size", "Index page size in bytes (a power of two)",
					  HI_PAGE_SIZE_DEFAULT, HI_PAGE_SIZE_MIN, HI_PAGE_SIZE_MAX,
					  AccessExclusiveLock);
	add_int_reloption(k, "buffer_size",
					  "Directory and bucket buffers in kB (0: hybrid_index.hgrid_buffer_size)",
					  0, 0, INT_MAX, AccessExclusiveLock);
	add_enum_reloption(k, "placement", "Which pages live on the fast tier",
					   placement_values, HR_PLACEMENT_HOT,
					   "Valid values are \"hot\", \"random\" and \"none\".",
					   AccessExclusiveLock);
	add_string_reloption(k, "optane_tablespace", "Tablespace holding the fast (Optane) tier",
						 "", hi_validate_tablespace_name, AccessExclusiveLock);
	add_int_reloption(k, "optane_capacity",
					  "Capacity of the fast tier in kB (-1: hybrid_index.hgrid_optane_capacity, 0: unlimited)",
					  -1, -1, INT_MAX, AccessExclusiveLock);
	add_enum_reloption(k, "directories_on_optane",
					   "Every sub-directory on the fast tier (the H-Grid special case)",
					   onoff_values, -1, "Valid values are \"on\", \"off\" and \"default\".",
					   AccessExclusiveLock);
	add_real_reloption(k, "selectivity",
					   "Selectivity s of hot-region detection (-1: hybrid_index.hgrid_selectivity)",
					   -1, -1, 1000, AccessExclusiveLock);
	add_enum_reloption(k, "average", "Average of the weights: cma or sma",
					   average_values, -1,
					   "Valid values are \"cma\", \"sma\" and \"default\".", AccessExclusiveLock);
	add_int_reloption(k, "window", "SMA window (-1: hybrid_index.hgrid_window)",
					  -1, -1, HR_SMA_MAX_WINDOW, AccessExclusiveLock);
	add_int_reloption(k, "cooling_period",
					  "Accesses between cooling rounds (-1: hybrid_index.hgrid_cooling_period, 0: none)",
					  -1, -1, INT_MAX, AccessExclusiveLock);
	add_int_reloption(k, "bucket_capacity",
					  "Entries per bucket (0: hybrid_index.lbgrid_bucket_capacity)",
					  0, 0, LBGRID_CAPACITY_MAX, AccessExclusiveLock);
	add_int_reloption(k, "cold_size",
					  "Pages of each cold LRU list (-1: hybrid_index.lbgrid_cold_size)",
					  -1, -1, LBGRID_COLD_MAX, AccessExclusiveLock);
	add_int_reloption(k, "buffer_split",
					  "Percentage of the buffer for directories (-1: hybrid_index.hgrid_buffer_split)",
					  -1, -1, 99, AccessExclusiveLock);
	add_int_reloption(k, "merge_threshold",
					  "Occupancy percentage below which buckets merge (-1: GUC)",
					  -1, -1, LBGRID_MERGE_MAX, AccessExclusiveLock);
	add_int_reloption(k, "batch_size",
					  "Pages per batched read (-1: GUC, 0: half the bucket buffer)",
					  -1, -1, INT_MAX, AccessExclusiveLock);
	add_enum_reloption(k, "knn_prefetch", "kNN scans read the closest buckets in batches",
					   onoff_values, -1, "Valid values are \"on\", \"off\" and \"default\".",
					   AccessExclusiveLock);
}

static bytea *
hgrid_options(Datum reloptions, bool validate)
{
#define HOPT(name, type, field) {name, type, offsetof(HgridOptions, field)}
	static const relopt_parse_elt tab[] = {
		HOPT("page_size", RELOPT_TYPE_INT, lb.base.page_size),
		HOPT("buffer_size", RELOPT_TYPE_INT, lb.base.buffer_size),
		HOPT("placement", RELOPT_TYPE_ENUM, lb.base.placement),
		HOPT("optane_tablespace", RELOPT_TYPE_STRING, lb.base.optane_tablespace),
		HOPT("optane_capacity", RELOPT_TYPE_INT, optane_capacity),
		HOPT("directories_on_optane", RELOPT_TYPE_ENUM, dirs_on_optane),
		HOPT("selectivity", RELOPT_TYPE_REAL, selectivity),
		HOPT("average", RELOPT_TYPE_ENUM, average),
		HOPT("window", RELOPT_TYPE_INT, window),
		HOPT("cooling_period", RELOPT_TYPE_INT, cooling_period),
		HOPT("bucket_capacity", RELOPT_TYPE_INT, lb.bucket_capacity),
		HOPT("cold_size", RELOPT_TYPE_INT, lb.cold_size),
		HOPT("buffer_split", RELOPT_TYPE_INT, lb.buffer_split),
		HOPT("merge_threshold", RELOPT_TYPE_INT, lb.merge_threshold),
		HOPT("batch_size", RELOPT_TYPE_INT, lb.batch_size),
		HOPT("knn_prefetch", RELOPT_TYPE_ENUM, lb.knn_prefetch),
	};
#undef HOPT
	HgridOptions *o;

	o = (HgridOptions *) build_reloptions(reloptions, validate, hgrid_relopt_kind,
										  sizeof(HgridOptions), tab, lengthof(tab));
	if (o == NULL)
		return NULL;
	/* the core's fields hgrid does not take */
	o->lb.logging = 0;			/* GFFM buckets */
	o->lb.compact_threshold = -1;
	o->lb.max_list = -1;
	lbgrid_check_options(&o->lb);
	if (o->window == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for window: 0"),
				 errdetail("The moving-average window holds at least one weight.")));
	if (o->selectivity < 0 && o->selectivity != -1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for selectivity: %g", o->selectivity),
				 errdetail("selectivity is a factor of the average weight, 0 or more (-1: the setting hybrid_index.hgrid_selectivity).")));
	return (bytea *) o;
}

/* The Grid File core's settings: lbgrid's, with GFFM buckets and hgrid's buffer */
static void
hgrid_settings(Relation index, GridSettings *out)
{
	HgridOptions *o = index ? (HgridOptions *) index->rd_options : NULL;

	lbgrid_settings(index, out);
	out->mode = GRID_MODE_GFFM;
	out->buffer_kb = o && o->lb.base.buffer_size > 0 ? o->lb.base.buffer_size : hgrid_buffer_kb;
	out->dir_pct = o && o->lb.buffer_split > 0 ? o->lb.buffer_split : hgrid_buffer_split;
	out->compact_pct = 0;
	out->max_list = 0;
}

/* The hot-region parameters of this operation: reloptions over GUCs */
void
hgrid_params(Relation index, uint32 page_size, HrParams *out)
{
	/* no relation (the checkpoint at shutdown): the server's settings */
	HgridOptions *o = index ? (HgridOptions *) index->rd_options : NULL;
	int			cap_kb;

	out->mode = o ? o->lb.base.placement : HR_PLACEMENT_HOT;
	out->dirs_on_fast = o && o->dirs_on_optane >= 0 ? o->dirs_on_optane == 1 :
		hgrid_dirs_on_optane;
	out->selectivity = o && o->selectivity >= 0 ? o->selectivity : hgrid_selectivity;
	out->sma = (o && o->average >= 0 ? o->average : hgrid_average) == 1;
	out->window = o && o->window > 0 ? o->window : hgrid_window;
	out->cooling = o && o->cooling_period >= 0 ? o->cooling_period : hgrid_cooling_period;
	cap_kb = o && o->optane_capacity >= 0 ? o->optane_capacity :
		hgrid_capacity_kb;
	out->capacity = cap_kb > 0 ?
		(uint32) Max(1, (int64) cap_kb * 1024 / Max(page_size, 1)) : 0;
}

/* From _PG_init */
void
hgrid_init(void)
{
	grid_shmem_init();
	grid_register_am(HI_AM_HGRID, hgrid_settings, hgrid_access, hgrid_free_ext,
					 hgrid_page_freed);
	hi_register_am(&hgrid_ops);
	hi_place_register_kind(hgrid_ops.kind, hgrid_ops.page_layout);
	hgrid_place_register();
	define_gucs();
	define_reloptions();
}

static IndexAmRoutine *
hgrid_routine(void)
{
	IndexAmRoutine *am = grid_am_routine();

	am->amoptions = hgrid_options;
	am->ambuild = hgrid_build;
	am->ambulkdelete = hgrid_bulkdelete;
	return am;
}

Datum
hgrid_handler(PG_FUNCTION_ARGS)
{
	static IndexAmRoutine *kept = NULL;

	hi_check_preloaded();
	return hi_am_handler_result(&kept, hgrid_routine);
}
