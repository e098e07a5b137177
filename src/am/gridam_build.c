/*
 * gridam_build.c
 *	  CREATE INDEX (bulk load of the grid) and insertion of the grid AMs.
 *
 * Inserted entries wait in the session and go in as a batch
 * (am_insert_defer.c); each is logged (redo log, with the inserting
 * transaction's xid) before it is applied under tree_lock held
 * exclusively (see log/redo_log.c).
 */
#include "postgres.h"

#include "access/xact.h"
#include "miscadmin.h"

#include "am/am_common.h"
#include "am/gridam.h"
#include "log/redo_log.h"
#include "core/hi_core.h"
#include "storage/storage.h"

typedef struct LoadArg
{
	void		(*prepare) (Grid *g);
} LoadArg;

static void *
begin(Size budget, void *arg)
{
	return grid_build_begin(budget);
}

static void
put(void *spool, const void *entry)
{
	grid_build_put((GridBuildSpool *) spool, (const GridEntry *) entry);
}

static void
load(HiIndex *idx, void *spool, void *arg)
{
	LoadArg    *la = (LoadArg *) arg;
	Grid	   *g = grid_create(idx);

	if (la->prepare)
		la->prepare(g);
	grid_bulk_load(g, (GridBuildSpool *) spool);
}

static void
set_helper(void *spool, const HiLoadHelper *helper)
{
	grid_build_set_helper((GridBuildSpool *) spool, helper);
}

static void
export(void *spool, BufFile *file)
{
	grid_build_export((GridBuildSpool *) spool, file);
}

static Size
import(void *spool, BufFile *file, const char *name)
{
	return grid_build_import((GridBuildSpool *) spool, file);
}

static void
help(HiIndex *idx, void *spool, const void *task, Size len, const HiLoadShared *shared)
{
	grid_bulk_help(idx, (GridBuildSpool *) spool, task, len, shared);
}

/*
 * A parallel worker collects its entries and keeps them; with one worker
 * each process builds one side of the grid (grid_build_split.c)
 */
const AmBuildOps gridam_build_ops = {
	.layout = {
		.size = sizeof(GridEntry),
		.key_offset = offsetof(GridEntry, key),
		.tid_offset = offsetof(GridEntry, tid),
		.kind_offset = offsetof(GridEntry, kind),
		.flags_offset = offsetof(GridEntry, flags)
	},
	.report_load = true,
	.begin = begin,
	.put = put,
	.load = load,
	.export = export,
	.import = import,
	.keeps_entries = true,
	.set_helper = set_helper,
	.help = help
};

/*
 * CREATE INDEX of a grid AM.  prepare (optional) sees the new, empty grid
 * before it is loaded and written (hgrid sets up its placement there).
 */
IndexBuildResult *
grid_am_build(Relation heap, Relation index, IndexInfo *info, void (*prepare) (Grid *g))
{
	LoadArg		la = {prepare};

	return am_build(heap, index, info, &gridam_build_ops, &la);
}

IndexBuildResult *
lbgrid_build(Relation heap, Relation index, IndexInfo *info)
{
	return grid_am_build(heap, index, info, NULL);
}

static void
apply_insert(void *arg, const HiKeyItem *it)
{
	Grid	   *g = (Grid *) arg;
	GridEntry	e;

	memset(&e, 0, sizeof(e));
	e.kind = it->kind;
	e.key = it->key;
	e.flags = it->flags;
	e.tid = it->tid;
	grid_insert(g, &e);
	grid_after_change(g);
}

/*
 * Insert a batch of entries (am_insert_defer.c) along a Hilbert curve:
 * neighbours share their sub-directory and bucket, which are then at hand
 * (H-Grid's buffer) or appended to together (LB-Grid's log-buckets).
 * HI_LOG_WRITE_MAX entries per hold of tree_lock, their sub-directories and
 * buckets read ahead once insertions read from the device (an index larger
 * than its memory), their records logged ahead with one write
 * (hi_insert_logged; an insertion cut short, a split or compaction meeting
 * a full disk, has the index loaded again).
 */
static void
grid_insert_batch(HiIndex *idx, const HiKeyItem *items, int n, TransactionId xid)
{
	HiKeyItem  *sorted = n > 1 ? hi_items_hilbert_order(items, n) : NULL;
	const HiKeyItem *it = sorted ? sorted : items;
	bool		ahead = false;
	int			done;

	for (done = 0; done < n; done += HI_LOG_WRITE_MAX)
	{
		int			k = Min(n - done, HI_LOG_WRITE_MAX);
		uint64		reads = hi_store_device_reads(idx->sh);
		Grid	   *g;

		hi_lock_for_change(idx);
		g = grid_open(idx);
		if (ahead)
			grid_insert_read_ahead(g, it + done, k);
		hi_insert_logged(idx, xid, it + done, k, apply_insert, g);
		grid_note_applied(g);
		hi_index_after_change(idx);
		LWLockRelease(&idx->sh->tree_lock);
		if (!ahead)
			ahead = hi_store_reads_often(idx->sh, reads, k);
		CHECK_FOR_INTERRUPTS();
	}
	if (sorted)
		pfree(sorted);
}

bool
lbgrid_insert(Relation index, Datum *values, bool *isnull, ItemPointer ht_ctid,
			  Relation heap, IndexUniqueCheck checkUnique, bool indexUnchanged,
			  IndexInfo *info)
{
	HiKeyItem	item;
	char	   *row = NULL;
	Size		rowlen = 0;

	memset(&item, 0, sizeof(item));
	item.kind = isnull[0] ? HI_KEY_NULL :
		hi_geom_key(values[0], am_point_srid(index), &item.key, &item.flags);
	item.tid = *ht_ctid;
	/* in batches, as the R-tree AMs (am_insert_defer.c) */
	if (am_include_natts(index) > 0)
		row = am_include_row(index, values, isnull, &rowlen);
	am_insert_deferred(index, &item, row, rowlen, grid_insert_batch);
	return false;
}
