/*
 * hyrtree.h
 *	  The hyrtree access method: an R-tree over the flash and fast tiers.
 */
#ifndef HYRTREE_H
#define HYRTREE_H

#include "access/amapi.h"
#include "access/genam.h"
#include "nodes/execnodes.h"
#include "nodes/pathnodes.h"

#include "hybrid_index.h"

/* build sub-phases reported in pg_stat_progress_create_index */
#define HYRTREE_PHASE_LOAD		2
#define HYRTREE_PHASE_WRITE		3

extern void hyrtree_init(void);
extern bool hi_is_our_am(Oid amoid);
extern HiIndex *hyrtree_open(Relation index);

/* hyrtree_build.c */
extern IndexBuildResult *hyrtree_build(Relation heap, Relation index, IndexInfo *info);
extern void hyrtree_buildempty(Relation index);
extern bool hyrtree_insert(Relation index, Datum *values, bool *isnull,
						   ItemPointer ht_ctid, Relation heap,
						   IndexUniqueCheck checkUnique, bool indexUnchanged,
						   IndexInfo *info);

/* hyrtree_scan.c */
extern IndexScanDesc hyrtree_beginscan(Relation index, int nkeys, int norderbys);
extern void hyrtree_rescan(IndexScanDesc scan, ScanKey keys, int nkeys,
						   ScanKey orderbys, int norderbys);
extern bool hyrtree_gettuple(IndexScanDesc scan, ScanDirection dir);
extern int64 hyrtree_getbitmap(IndexScanDesc scan, TIDBitmap *tbm);
extern void hyrtree_endscan(IndexScanDesc scan);

/* hyrtree_vacuum.c */
extern IndexBulkDeleteResult *hyrtree_bulkdelete(IndexVacuumInfo *info,
												 IndexBulkDeleteResult *stats,
												 IndexBulkDeleteCallback callback,
												 void *callback_state);
extern IndexBulkDeleteResult *hyrtree_vacuumcleanup(IndexVacuumInfo *info,
													IndexBulkDeleteResult *stats);

/* hyrtree_cost.c */
extern void hyrtree_costestimate(PlannerInfo *root, IndexPath *path,
								 double loop_count, Cost *indexStartupCost,
								 Cost *indexTotalCost, Selectivity *indexSelectivity,
								 double *indexCorrelation, double *indexPages);

#endif							/* HYRTREE_H */
