/*
 * rtam.h
 *	  Index AM glue shared by the R-tree access methods (hyrtree, efind):
 *	  build, insert, scans, vacuum, cost.  What differs between them (the
 *	  page source, reloptions, redo) comes from their HiAmOps.
 */
#ifndef RTAM_H
#define RTAM_H

#include "access/amapi.h"
#include "access/genam.h"
#include "nodes/execnodes.h"
#include "nodes/pathnodes.h"

#include "base/hi_base.h"
#include "core/hi_core.h"

extern void hyrtree_init(void);
extern char *rtam_buildphasename(int64 phasenum);
extern IndexAmRoutine *rtam_routine(amoptions_function options);

/* rtam_build.c */
extern IndexBuildResult *rtam_build(Relation heap, Relation index, IndexInfo *info);
extern bool rtam_insert(Relation index, Datum *values, bool *isnull,
						   ItemPointer ht_ctid, Relation heap,
						   IndexUniqueCheck checkUnique, bool indexUnchanged,
						   IndexInfo *info);

/* rtam_scan.c */
extern IndexScanDesc rtam_beginscan(Relation index, int nkeys, int norderbys);
extern bool rtam_gettuple(IndexScanDesc scan, ScanDirection dir);
extern int64 rtam_getbitmap(IndexScanDesc scan, TIDBitmap *tbm);

/* rtam_vacuum.c */
extern IndexBulkDeleteResult *rtam_bulkdelete(IndexVacuumInfo *info,
												 IndexBulkDeleteResult *stats,
												 IndexBulkDeleteCallback callback,
												 void *callback_state);

/* rtam_cost.c */
extern void rtam_costestimate(PlannerInfo *root, IndexPath *path,
								 double loop_count, Cost *indexStartupCost,
								 Cost *indexTotalCost, Selectivity *indexSelectivity,
								 double *indexCorrelation, double *indexPages);

#endif							/* RTAM_H */
