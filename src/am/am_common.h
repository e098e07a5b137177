/*
 * am_common.h
 *	  Index AM glue shared by all four access methods: what the R-tree AMs
 *	  (rtam_*.c) and the grid AMs (gridam_*.c) do alike around their cores.
 *	  Each helper has one job; what differs between the cores (their entry
 *	  types, search, load and vacuum routines) is passed in.
 */
#ifndef AM_COMMON_H
#define AM_COMMON_H

#include "access/amapi.h"
#include "access/genam.h"
#include "access/tableam.h"
#include "nodes/execnodes.h"
#include "nodes/pathnodes.h"
#include "nodes/plannodes.h"
#include "storage/buffile.h"

#include "base/hi_base.h"
#include "base/hi_hits.h"

/* build sub-phases reported in pg_stat_progress_create_index */
#define AM_PHASE_SCAN		2	/* reading the heap */
#define AM_PHASE_LOAD		3	/* building the index from the entries */

/* Scan strategies of our operator classes (GiST's numbers for boxes) */
#define AM_STRATEGY_OVERLAP		3	/* && */
#define AM_STRATEGY_SAME		6	/* ~= */
#define AM_STRATEGY_CONTAINS	7	/* ~ */
#define AM_STRATEGY_WITHIN		8	/* @ */
#define AM_STRATEGY_DISTANCE	13	/* <-> */

/* ---- am_insert_defer.c ---- */

/* how a core inserts a batch of entries (in an order of its choosing), each
 * logged with xid before it goes in */
typedef void (*am_insert_batch_fn) (HiIndex *idx, const HiKeyItem *items, int n,
									TransactionId xid);

extern void am_insert_deferred(Relation index, const HiKeyItem *item,
							   const char *row, Size rowlen,
							   am_insert_batch_fn insert);
extern void am_pending_insert_all(void);
extern void am_pending_at_precommit(void);
extern void am_pending_at_xact_end(void);
extern void am_pending_at_subxact_abort(SubTransactionId subid);
extern void am_pending_statement_start(PlannedStmt *stmt);
extern void am_pending_statement_end(PlannedStmt *stmt);

/* ---- hi_sql.c ---- */
extern List *hi_index_leaves(Oid relid);

/* ---- am_routine.c ---- */
extern IndexAmRoutine *am_routine(void);
extern bool am_validate(Oid opclassoid);
extern void am_check_page_size(int page_size);

/* ---- am_cost.c ---- */

/* what a family (R-tree, grid) adds to the generic cost estimate */
typedef struct AmCostModel
{
	/* pages and height of an index whose shared state is not loaded */
	void		(*guess) (double tuples, int page_size, double *pages,
						  double *height);
	/* CPU cost of reaching a leaf or bucket; the levels read above it */
	Cost		(*descent) (double tuples, double height, int *tree_height);
} AmCostModel;

extern void am_costestimate(const AmCostModel *model, PlannerInfo *root,
							IndexPath *path, double loop_count,
							Cost *indexStartupCost, Cost *indexTotalCost,
							Selectivity *indexSelectivity,
							double *indexCorrelation, double *indexPages);

/* ---- am_build.c ---- */

/*
 * Where a core's build entry keeps the fields a heap scan fills: the key's
 * box, the heap TID and the key kind (a uint8 HiKeyKind).
 */
typedef struct AmBuildLayout
{
	Size		size;
	Size		key_offset;
	Size		tid_offset;
	Size		kind_offset;
	Size		flags_offset;
} AmBuildLayout;

/*
 * How a core takes the entries of a heap scan: begin makes a collector
 * whose entries stay within budget bytes of memory (maintenance_work_mem;
 * past it they spill to temporary files), put adds one entry (of layout),
 * load builds the new, empty index from it with tree_lock held
 * exclusively and frees it.  report_load: report AM_PHASE_LOAD first.
 *
 * Optional, for parallel builds (am_build_parallel.c lists the collectors
 * that have them): each worker makes a collector of its own with begin
 * (arg NULL) and put, and export writes its entries to a temporary file
 * that import (given the file's name) hands to the leader's collector
 * (returning how many), after presort (optional) told it that its own
 * entries are all in.  The collector can then do part of its work in the
 * workers (the R-trees sort their entries there).  Without them workers
 * pass raw entries to put.  With set_helper and help, one worker also
 * takes a part of the load: set_helper gives the leader's collector the
 * helper before load, and each of the load's tasks runs in the worker
 * through help, with the worker's own collector (NULL: none; kept after
 * export, so that its entries can stay there).
 */
typedef struct AmBuildOps
{
	AmBuildLayout layout;
	bool		report_load;
	void	   *(*begin) (Size budget, void *arg);
	void		(*put) (void *spool, const void *entry);
	void		(*load) (HiIndex *idx, void *spool, void *arg);
	void		(*export) (void *spool, BufFile *file);
	Size		(*import) (void *spool, BufFile *file, const char *name);
	void		(*presort) (void *spool);
	/*
	 * optional: the collector's spills go to files of the parallel build's
	 * shared file set, named from prefix, for the other processes to read
	 */
	void		(*share) (void *spool, const HiLoadShared *files, const char *prefix);
	/*
	 * export leaves the worker's entries in its collector, for the helper's
	 * tasks to use: workers run the collector only when one can help
	 */
	bool		keeps_entries;
	void		(*set_helper) (void *spool, const HiLoadHelper *helper);
	void		(*help) (HiIndex *idx, void *spool, const void *task, Size len,
						 const HiLoadShared *shared);
} AmBuildOps;

extern IndexBuildResult *am_build(Relation heap, Relation index, IndexInfo *info,
								  const AmBuildOps *ops, void *arg);
extern void am_build_fill(const AmBuildLayout *l, char *item, int32 srid,
						  ItemPointer tid, Datum *values, bool *isnull,
						  MemoryContext tmpcxt);

/*
 * am_return.c: exact points and index-only scans.  am_point_srid is the
 * SRID a point must have to be stored as canonical (HI_ENT_CANON): the
 * column's type modifier's, or 0.
 */
/* am_include.c: INCLUDE columns */
typedef struct AmIncludeSpool AmIncludeSpool;
extern int	am_include_natts(Relation index);
extern TupleDesc am_include_desc(Relation index);
extern char *am_include_row(Relation index, Datum *values, bool *isnull, Size *len);
extern void am_include_insert_rows(HiIndex *idx, TransactionId xid,
								   const HiKeyItem *items,
								   const char *const *rows, const Size *lens, int n);
extern void am_include_vacuum(HiIndex *idx, IndexBulkDeleteCallback callback,
							  void *state);
extern AmIncludeSpool *am_include_spool_begin(Relation index, HiIndex *idx);
extern void am_include_spool_put(AmIncludeSpool *s, Relation index, ItemPointer tid,
								 uint64 z, Datum *values, bool *isnull);
extern void am_include_spool_load(HiIndex *idx, AmIncludeSpool *s);
extern void am_include_lookup(HiIndex *idx, const HiKeyItem *items, Size n,
							  IndexTuple *rows);

extern int32 am_point_srid(Relation index);
extern bool am_canreturn(Relation index, int attno);
extern bool am_scan_returning(IndexScanDesc scan);
extern void am_set_itup(IndexScanDesc scan, const HiKeyItem *item, IndexTuple row,
						bool lookup);
extern void am_scan_items_ready(IndexScanDesc scan);
extern void am_scan_set_hits(IndexScanDesc scan, HiHits *hits);
extern const HiKnnExact *am_knn_exact(IndexScanDesc scan);
extern void am_return_end(IndexScanDesc scan);
extern void am_needed_start(PlanState *root);
extern void am_needed_end(void);
extern void am_needed_reset(void);
extern bool am_needed_columns(Oid indexoid, uint64 *mask);

/* ---- am_build_parallel.c ---- */
/* the cores' build operations that parallel workers run (am_build_parallel.c) */
extern const AmBuildOps rtam_build_ops;
extern const AmBuildOps gridam_build_ops;

extern int	am_build_workers(Relation heap, Relation index, IndexInfo *info);
typedef struct AmParallelBuild AmParallelBuild;
extern AmParallelBuild *am_build_parallel_begin(Relation heap, Relation index,
												IndexInfo *info,
												const AmBuildOps *ops,
												int nworkers, bool image);
extern Size am_build_parallel_budget(AmParallelBuild *pb, Size budget);
extern double am_build_parallel_scan(AmParallelBuild *pb, Relation heap,
									 Relation index, IndexInfo *info,
									 IndexBuildCallback cb, void *cbstate,
									 void (*put) (void *state, const void *item),
									 Size (*import) (void *state, BufFile *file,
													 const char *name),
									 void (*presort) (void *state));
extern bool am_build_parallel_helper(AmParallelBuild *pb, HiLoadHelper *helper);
extern bool am_build_parallel_files(AmParallelBuild *pb, HiLoadShared *files);
extern bool am_build_parallel_has_image(AmParallelBuild *pb);
extern void am_build_parallel_image_sink(void *arg, const char *hdr, Size hlen,
										 const char *data, Size dlen);
extern void am_build_parallel_image_done(AmParallelBuild *pb);
extern void am_build_parallel_end(AmParallelBuild *pb);
extern void am_buildempty(Relation index);

/* ---- am_vacuum.c ---- */

/* A core's bulk delete: removes entries whose TID callback says are dead */
typedef void (*AmBulkDeleteFn) (HiIndex *idx, IndexBulkDeleteCallback callback,
								void *callback_state, double *removed,
								double *remaining);

extern IndexBulkDeleteResult *am_bulkdelete(IndexVacuumInfo *info,
											IndexBulkDeleteResult *stats,
											IndexBulkDeleteCallback callback,
											void *callback_state,
											AmBulkDeleteFn bulk_delete);
extern IndexBulkDeleteResult *am_vacuumcleanup(IndexVacuumInfo *info,
											   IndexBulkDeleteResult *stats);


/* ---- am_scan.c ---- */

/* a core's kNN search: the next entry in distance order; and its end */
typedef bool (*AmKnnNextFn) (void *knn, HiKeyItem *item, double *dist, bool *isnull,
							 bool *exact);
typedef void (*AmKnnEndFn) (void *knn);

/*
 * The start of every AM's scan state (IndexScanDesc->opaque): the open
 * index, the memory of the current scan (reset by amrescan), the index
 * tuple handed to index-only scans, and the answer being handed out:
 * nothing, a TID list (filter scans compute their whole answer on the
 * first call) or a kNN search of the core.
 */
typedef struct AmScanBase
{
	HiIndex    *idx;
	bool		prepared;		/* scan keys turned into the core's quals */
	MemoryContext cxt;
	IndexTuple	null_itup;
	bool		no_results;		/* a qual can never be true */
	HiKeyItem  *items;			/* index-only scans: entries, before the tids */
	IndexTuple *rows;			/* and their INCLUDE rows (NULL: none) */
	Size		nitems;
	ItemPointer tids;
	Size		ntids;
	Size		pos;
	void	   *knn;
	AmKnnNextFn knn_next;
	AmKnnEndFn	knn_end;
	int			returning;		/* -1: not asked yet; 1: an index-only scan
								 * of a column the index rebuilds */
	struct AmReturn *ret;		/* am_return.c's state of this scan */
	bool		needed_known;	/* needed says which columns are read */
	uint64		needed;			/* bit attno - 1: read by the executor
								 * (am_needed.c) */
} AmScanBase;

extern IndexScanDesc am_beginscan(Relation index, int nkeys, int norderbys,
								  Size opaque_size);
extern void am_rescan(IndexScanDesc scan, ScanKey keys, int nkeys, ScanKey orderbys,
					  int norderbys);
extern void am_check_forward(IndexScanDesc scan, ScanDirection dir);
extern bool am_orderby_box(IndexScanDesc scan, HiBox *box);
extern void am_scan_empty_semantics(Relation index);
extern void am_set_orderby(IndexScanDesc scan, double dist, bool isnull, bool exact);
extern void am_set_null_itup(IndexScanDesc scan);
extern void am_scan_reset(IndexScanDesc scan);
extern void am_scan_set_knn(IndexScanDesc scan, void *knn, AmKnnNextFn next,
							AmKnnEndFn end);
extern bool am_gettuple(IndexScanDesc scan, ScanDirection dir,
						void (*start) (IndexScanDesc scan));
extern void am_tids_append(IndexScanDesc scan, ItemPointer tids, Size n);
extern bool am_scan_next(IndexScanDesc scan);
extern void am_bitmap_add(TIDBitmap *tbm, ItemPointer tids, Size n);
extern void am_endscan(IndexScanDesc scan);

/* am/hi_heapcheck.c: every row of the table is in the (leaf) index */
extern void hi_check_heap_all_indexed(Oid indexoid);

#endif							/* AM_COMMON_H */
