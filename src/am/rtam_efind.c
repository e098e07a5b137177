/*
 * rtam_efind.c
 *	  The efind access method: an R-tree (the shared R-tree core and AM
 *	  glue, quadratic split) whose pages go through the eFIND framework
 *	  (src/efind/).  Handler, reloptions, and the operations the SQL-level
 *	  functions dispatch to.
 *
 * Reloptions override the hybrid_index.efind_* settings (and
 * hybrid_index.flush_policy); -1, the default, takes the setting.  Both
 * are resolved when the index is built and fixed in it (efind_config.c):
 * changing a reloption with ALTER INDEX ... SET takes effect at REINDEX.
 */
#include "postgres.h"

#include "access/reloptions.h"
#include "fmgr.h"
#include "lib/stringinfo.h"

#include "am/am_common.h"
#include "am/rtam.h"
#include "efind/efind.h"
#include "rtree/rtree.h"
#include "core/hi_core.h"
#include "policy/placement.h"

PG_FUNCTION_INFO_V1(efind_handler);

static relopt_kind efind_relopt_kind;

static relopt_enum_elt_def read_policy_values[] = {
	{"lru", EF_RB_LRU},
	{"s2q", EF_RB_S2Q},
	{"2q", EF_RB_2Q},
	{NULL, 0}
};

static relopt_enum_elt_def flush_policy_values[] = {
	{"m", EF_FP_M},
	{"mh", EF_FP_MH},
	{"mha", EF_FP_MHA},
	{"mhao", EF_FP_MHAO},
	{NULL, 0}
};

static relopt_enum_elt_def temporal_values[] = {
	{"none", EF_TC_NONE},
	{"reads", EF_TC_READS},
	{"writes", EF_TC_WRITES},
	{"both", EF_TC_BOTH},
	{NULL, 0}
};

/* hybrid_index_inspect: the R-tree's snapshot plus an "efind" object */
static char *
efind_inspect_json(HiIndex *idx)
{
	char	   *tree = rt_inspect_json(idx);
	char	   *end = strrchr(tree, '}');
	StringInfoData buf;

	if (end == NULL)
		elog(ERROR, "efind: unexpected R-tree snapshot");
	initStringInfo(&buf);
	appendBinaryStringInfo(&buf, tree, end - tree);
	appendStringInfoString(&buf, ", \"efind\": ");
	ef_append_json(idx, &buf);
	appendStringInfoChar(&buf, '}');
	pfree(tree);
	return buf.data;
}

/* hybrid_index_check: the R-tree as the page source shows it, then eFIND */
static void
efind_check(HiIndex *idx)
{
	rt_check(idx);
	ef_check(idx);
}

static const HiAmOps efind_ops = {
	.name = "efind",
	.kind = HI_AM_EFIND,
	.default_placement = HI_PLACEMENT_NONE,
	.source = &efind_source,
	.redo = rt_redo,
	.check = efind_check,
	.inspect_json = efind_inspect_json,
	.pages = rt_pages,
	.discard = efind_discard,
	.reset_stats = ef_reset_stats,
	.page_layout = rt_page_layout
};

void
efind_init(void)
{
	efind_define_gucs();
	efind_shmem_init();
	efind_source_init();
	hi_register_am(&efind_ops);
	hi_place_register_kind(efind_ops.kind, efind_ops.page_layout);
	/* placement none, parameters from the settings (inspect shows them) */
	hi_wma_register(efind_ops.kind, NULL);

	efind_relopt_kind = add_reloption_kind();
	add_int_reloption(efind_relopt_kind, "page_size",
					  "Index page size in bytes (a power of two)",
					  HI_PAGE_SIZE_DEFAULT, HI_PAGE_SIZE_MIN, HI_PAGE_SIZE_MAX,
					  AccessExclusiveLock);
	add_int_reloption(efind_relopt_kind, "buffer_size",
					  "Buffer in kB, write plus read buffer (-1: hybrid_index.efind_buffer_size)",
					  -1, -1, EF_BUFFER_KB_MAX, AccessExclusiveLock);
	add_int_reloption(efind_relopt_kind, "read_buffer_share",
					  "Percentage of the buffer for the read buffer (-1: hybrid_index.efind_read_buffer_share)",
					  -1, -1, EF_READ_SHARE_MAX, AccessExclusiveLock);
	add_enum_reloption(efind_relopt_kind, "read_buffer_policy",
					   "Read buffer replacement policy (default: hybrid_index.efind_read_buffer_policy)",
					   read_policy_values, -1,
					   "Valid values are \"lru\", \"s2q\" and \"2q\".", AccessExclusiveLock);
	add_enum_reloption(efind_relopt_kind, "flush_policy",
					   "Flushing policy (default: hybrid_index.flush_policy)",
					   flush_policy_values, -1,
					   "Valid values are \"m\", \"mh\", \"mha\" and \"mhao\".", AccessExclusiveLock);
	add_int_reloption(efind_relopt_kind, "flush_percent",
					  "Percentage p of the oldest write buffer entries a flush considers (-1: hybrid_index.efind_flush_percent)",
					  -1, -1, 100, AccessExclusiveLock);
	add_int_reloption(efind_relopt_kind, "flush_unit",
					  "Pages per flushing unit (-1: hybrid_index.efind_flush_unit)",
					  -1, -1, EF_FLUSH_UNIT_MAX, AccessExclusiveLock);
	add_enum_reloption(efind_relopt_kind, "temporal_control",
					   "Temporal control of reads and writes (default: hybrid_index.efind_temporal_control)",
					   temporal_values, -1,
					   "Valid values are \"none\", \"reads\", \"writes\" and \"both\".",
					   AccessExclusiveLock);
	add_int_reloption(efind_relopt_kind, "seq_distance",
					  "Largest page distance of a sequential write (-1: hybrid_index.efind_seq_distance)",
					  -1, -1, EF_DISTANCE_MAX, AccessExclusiveLock);
	add_int_reloption(efind_relopt_kind, "stride_distance",
					  "Page distance of a stride write (-1: hybrid_index.efind_stride_distance)",
					  -1, -1, EF_DISTANCE_MAX, AccessExclusiveLock);
	add_int_reloption(efind_relopt_kind, "log_size",
					  "Redo log size in kB that triggers compaction (-1: hybrid_index.efind_log_size)",
					  -1, -1, EF_LOG_KB_MAX, AccessExclusiveLock);
}

static void
check_min(const char *name, int value, int min)
{
	if (value != -1 && value < min)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for %s: %d", name, value),
				 errdetail("%s must be at least %d, or -1 for the hybrid_index setting.",
						   name, min)));
}

static bytea *
efind_options(Datum reloptions, bool validate)
{
	static const relopt_parse_elt tab[] = {
		{"page_size", RELOPT_TYPE_INT, offsetof(EfindOptions, base.page_size)},
		{"buffer_size", RELOPT_TYPE_INT, offsetof(EfindOptions, base.buffer_size)},
		{"read_buffer_share", RELOPT_TYPE_INT, offsetof(EfindOptions, read_buffer_share)},
		{"read_buffer_policy", RELOPT_TYPE_ENUM, offsetof(EfindOptions, read_buffer_policy)},
		{"flush_policy", RELOPT_TYPE_ENUM, offsetof(EfindOptions, flush_policy)},
		{"flush_percent", RELOPT_TYPE_INT, offsetof(EfindOptions, flush_percent)},
		{"flush_unit", RELOPT_TYPE_INT, offsetof(EfindOptions, flush_unit)},
		{"temporal_control", RELOPT_TYPE_ENUM, offsetof(EfindOptions, temporal_control)},
		{"seq_distance", RELOPT_TYPE_INT, offsetof(EfindOptions, seq_distance)},
		{"stride_distance", RELOPT_TYPE_INT, offsetof(EfindOptions, stride_distance)},
		{"log_size", RELOPT_TYPE_INT, offsetof(EfindOptions, log_size)},
	};
	EfindOptions *o;

	o = (EfindOptions *) build_reloptions(reloptions, validate, efind_relopt_kind,
										  sizeof(EfindOptions), tab, lengthof(tab));
	if (o == NULL)
		return NULL;
	am_check_page_size(o->base.page_size);
	check_min("buffer_size", o->base.buffer_size, EF_BUFFER_KB_MIN);
	check_min("flush_percent", o->flush_percent, 1);
	check_min("flush_unit", o->flush_unit, 1);
	check_min("log_size", o->log_size, EF_LOG_KB_MIN);

	/* the foundation's view: an R-tree with every page on the flash tier */
	o->base.placement = HI_PLACEMENT_NONE;
	o->base.optane_tablespace = 0;
	return (bytea *) o;
}

static IndexAmRoutine *
efind_routine(void)
{
	return rtam_routine(efind_options);
}

Datum
efind_handler(PG_FUNCTION_ARGS)
{
	static IndexAmRoutine *kept = NULL;

	hi_check_preloaded();
	return hi_am_handler_result(&kept, efind_routine);
}
