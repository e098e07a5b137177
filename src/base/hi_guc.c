/*
 * hi_guc.c
 *	  The hybrid_index.* configuration parameters.
 */
#include "postgres.h"

#include "utils/guc.h"

#include "base/hi_base.h"

int			hi_cache_size_mb = 128;
int			hi_max_page_size = HI_PAGE_SIZE_DEFAULT;
int			hi_max_indexes = -1;
int			hi_io_method = HI_IO_URING;
int			hi_io_depth = 64;
int			hi_insert_batch = 65536;
int			hi_checkpoint_log_kb = 65536;
bool		hi_emulate_devices = false;
bool		hi_direct_io = false;
bool		hi_cache_prefault = true;
bool		hi_recheck = false;
bool		hi_debug_fail_split = false;
int			hi_dev_read_us[HI_NUM_TIERS] = {120, 7};
int			hi_dev_write_us[HI_NUM_TIERS] = {30, 18};
int			hi_dev_parallelism[HI_NUM_TIERS] = {8, 4};

static const struct config_enum_entry hi_io_method_options[] = {
	{"io_uring", HI_IO_URING, false},
	{"sync", HI_IO_SYNC, false},
	{NULL, 0, false}
};

static bool
check_max_page_size(int *newval, void **extra, GucSource source)
{
	if ((*newval & (*newval - 1)) != 0)
	{
		GUC_check_errdetail("hybrid_index.max_page_size must be a power of two.");
		return false;
	}
	return true;
}

static bool
check_max_indexes(int *newval, void **extra, GucSource source)
{
	if (*newval != -1 && *newval < 4)
	{
		GUC_check_errdetail("hybrid_index.max_indexes must be -1 (sized by the lock table) or at least 4.");
		return false;
	}
	return true;
}

/* Define the settings of a table (each module's hybrid_index.* settings) */
void
hi_define_guc_table(const HiGucDef *defs, int n)
{
	int			i;

	for (i = 0; i < n; i++)
	{
		const HiGucDef *d = &defs[i];

		switch (d->type)
		{
			case HI_GUC_INT:
				DefineCustomIntVariable(d->name, d->short_desc, d->long_desc, (int *) d->var,
										(int) d->boot, (int) d->min, (int) d->max,
										d->context, d->flags, d->int_check, NULL, NULL);
				break;
			case HI_GUC_REAL:
				DefineCustomRealVariable(d->name, d->short_desc, d->long_desc,
										 (double *) d->var, d->boot, d->min, d->max,
										 d->context, d->flags, NULL, NULL, NULL);
				break;
			case HI_GUC_BOOL:
				DefineCustomBoolVariable(d->name, d->short_desc, d->long_desc, (bool *) d->var,
										 d->boot != 0, d->context, d->flags, NULL, NULL, NULL);
				break;
			case HI_GUC_ENUM:
				DefineCustomEnumVariable(d->name, d->short_desc, d->long_desc, (int *) d->var,
										 (int) d->boot, d->options, d->context, d->flags,
										 NULL, NULL, NULL);
				break;
		}
	}
}

static const HiGucDef hi_gucs[] = {
	{"hybrid_index.cache_size",
		"Size of the shared page cache of hybrid_index indexes.",
		NULL,
		HI_GUC_INT, &hi_cache_size_mb, 128, 1, 1024 * 1024, NULL, PGC_POSTMASTER, GUC_UNIT_MB},
	{"hybrid_index.cache_prefault",
		"Allocate the memory of the shared page cache at server start, in a background worker.",
		"Otherwise the first queries after a start pay the kernel's allocation of every cache frame they read a page into. Off: the cache's memory is committed as it fills.",
		HI_GUC_BOOL, &hi_cache_prefault, 1, 0, 0, NULL, PGC_POSTMASTER, 0},
	{"hybrid_index.max_page_size",
		"Largest page_size an index may use (the size of a cache frame).",
		"Indexes with smaller pages use part of a frame; budgets count their own page size.",
		HI_GUC_INT, &hi_max_page_size, HI_PAGE_SIZE_DEFAULT, HI_PAGE_SIZE_MIN, HI_PAGE_SIZE_MAX, NULL, PGC_POSTMASTER, GUC_UNIT_BYTE, check_max_page_size},
	{"hybrid_index.max_indexes",
		"Number of hybrid_index indexes that can be in use at once in the whole server.",
		"-1 (the default): as many as the lock table lets transactions lock at once, max_locks_per_transaction * (max_connections + background processes + max_prepared_transactions). An index nobody uses gives its room back.",
		HI_GUC_INT, &hi_max_indexes, -1, -1, 1048576, NULL, PGC_POSTMASTER, 0, check_max_indexes},
	{"hybrid_index.io_method",
		"How index pages are read and written: io_uring batches or synchronous calls.",
		"io_uring falls back to sync automatically where the kernel refuses it.",
		HI_GUC_ENUM, &hi_io_method, HI_IO_URING, 0, 0, hi_io_method_options, PGC_SUSET, 0},
	{"hybrid_index.direct_io",
		"Read and write the tier files with O_DIRECT, past the OS page cache.",
		"Off: the OS page cache is a second cache below the shared page cache, as it is below shared buffers for PostgreSQL's own indexes. Files whose filesystem refuses O_DIRECT (tmpfs) use buffered I/O either way.",
		HI_GUC_BOOL, &hi_direct_io, 0, 0, 0, NULL, PGC_POSTMASTER, 0},
	{"hybrid_index.io_depth",
		"Largest number of page I/Os submitted in one batch.",
		NULL,
		HI_GUC_INT, &hi_io_depth, 64, 1, 1024, NULL, PGC_SUSET, 0},
	{"hybrid_index.insert_batch",
		"Index entries a session keeps before inserting them into their index in one batch.",
		"Entries of the rows a statement inserts go in together, before the session's next statement or scan and before its transaction commits; a batch goes in along a Hilbert curve, and an R-tree larger than its cache inserts it by leaf and reads the leaves ahead, many per I/O batch. 0 inserts every entry at once.",
		HI_GUC_INT, &hi_insert_batch, 65536, 0, 1024 * 1024, NULL, PGC_USERSET, 0},
	{"hybrid_index.checkpoint_log_size",
		"Redo log size of an index that triggers its checkpoint.",
		NULL,
		HI_GUC_INT, &hi_checkpoint_log_kb, 65536, 64, 16 * 1024 * 1024, NULL, PGC_SIGHUP, GUC_UNIT_KB},
	{"hybrid_index.recheck",
		"Have the executor recheck every row a filter scan returns (a diagnostic).",
		"The indexes store PostGIS' float boxes and decide &&, ~=, ~ and @ exactly, as PostGIS' GiST support does, so there is nothing to recheck; kNN distances are rechecked either way.",
		HI_GUC_BOOL, &hi_recheck, 0, 0, 0, NULL, PGC_USERSET, 0},
	{"hybrid_index.emulate_devices",
		"Apply the per-tier device profiles (latency, parallelism) after each I/O batch.",
		"For experiments only: reproduces the papers' flash and Optane devices on one disk.",
		HI_GUC_BOOL, &hi_emulate_devices, 0, 0, 0, NULL, PGC_SUSET, 0},
	{"hybrid_index.debug_fail_split",
		"For tests: every bucket split of a grid index fails half-way with an error.",
		"Exercises the recovery from a change cut short: the index is loaded again from its files and log at its next use.",
		HI_GUC_BOOL, &hi_debug_fail_split, 0, 0, 0, NULL, PGC_SUSET, GUC_NOT_IN_SAMPLE},
	{"hybrid_index.flash_read_latency",
		"Emulated read latency of the flash tier (microseconds).",
		NULL,
		HI_GUC_INT, &hi_dev_read_us[HI_TIER_FLASH], 120, 0, 1000000, NULL, PGC_SUSET, 0},
	{"hybrid_index.flash_write_latency",
		"Emulated write latency of the flash tier (microseconds).",
		NULL,
		HI_GUC_INT, &hi_dev_write_us[HI_TIER_FLASH], 30, 0, 1000000, NULL, PGC_SUSET, 0},
	{"hybrid_index.flash_parallelism",
		"Emulated internal parallelism of the flash tier (I/Os served at once).",
		NULL,
		HI_GUC_INT, &hi_dev_parallelism[HI_TIER_FLASH], 8, 1, 1024, NULL, PGC_SUSET, 0},
	{"hybrid_index.optane_read_latency",
		"Emulated read latency of the fast tier (microseconds).",
		NULL,
		HI_GUC_INT, &hi_dev_read_us[HI_TIER_OPTANE], 7, 0, 1000000, NULL, PGC_SUSET, 0},
	{"hybrid_index.optane_write_latency",
		"Emulated write latency of the fast tier (microseconds).",
		NULL,
		HI_GUC_INT, &hi_dev_write_us[HI_TIER_OPTANE], 18, 0, 1000000, NULL, PGC_SUSET, 0},
	{"hybrid_index.optane_parallelism",
		"Emulated internal parallelism of the fast tier (I/Os served at once).",
		NULL,
		HI_GUC_INT, &hi_dev_parallelism[HI_TIER_OPTANE], 4, 1, 1024, NULL, PGC_SUSET, 0},
};

/*
 * Settings that shape what other sessions see (the shared state an index
 * is loaded into, its placement, how its pages are written, device
 * emulation) are PGC_SUSET or stricter; only recheck, which concerns this
 * session's own executor, is PGC_USERSET.
 */
void
hi_define_gucs(void)
{
	hi_define_guc_table(hi_gucs, lengthof(hi_gucs));
}
