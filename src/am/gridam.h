/*
 * gridam.h
 *	  The lbgrid index access method: LB-Grid, and GFFM with logging = off
 *	  (thesis ch. 3).  Glue between PostgreSQL's index AM interface and the
 *	  Grid File core (grid/) with LB-Grid's store (lbgrid/).
 */
#ifndef AM_LBGRID_H
#define AM_LBGRID_H

#include "access/amapi.h"
#include "access/genam.h"
#include "nodes/execnodes.h"
#include "nodes/pathnodes.h"

#include "grid/grid.h"
#include "policy/placement.h"

/*
 * Reloptions.  The first part is the common HiIndexOptions, which the core
 * reads (page_size, buffer_size); -1 means "use the GUC".
 */
typedef struct LbgridOptions
{
	HiIndexOptions base;
	int			logging;		/* 1: LB-Grid, 0: GFFM, -1: GUC */
	int			bucket_capacity;	/* entries per bucket, 0: from page */
	int			cold_size;		/* CLRU pages */
	int			buffer_split;	/* % of buffer_size for directories */
	int			merge_threshold;	/* % occupancy that triggers merging */
	int			batch_size;		/* pages per batched read, 0: half buffer */
	int			knn_prefetch;	/* 1, 0, -1: GUC */
	int			compact_threshold;	/* % live below which to compact */
	int			max_list;		/* rewrite buckets with longer lists */
} LbgridOptions;

/* parameters: default, minimum, maximum */
#define LBGRID_BUFFER_KB_DEFAULT	4096
#define LBGRID_BUFFER_SPLIT_DEFAULT 75
#define LBGRID_COLD_DEFAULT			128
#define LBGRID_COLD_MAX				65536
#define LBGRID_MERGE_DEFAULT		30
#define LBGRID_MERGE_MAX			49
#define LBGRID_COMPACT_DEFAULT		25
#define LBGRID_COMPACT_MAX			90
#define LBGRID_MAX_LIST_DEFAULT		32
#define LBGRID_MAX_LIST_MAX			16384
#define LBGRID_CAPACITY_MAX			65536

extern int	lbgrid_buffer_kb;
extern int	lbgrid_buffer_split;
extern int	lbgrid_cold_size;
extern int	lbgrid_merge_threshold;
extern int	lbgrid_batch_size;
extern bool lbgrid_knn_prefetch;
extern bool lbgrid_logging;
extern int	lbgrid_bucket_capacity;
extern int	lbgrid_compact_threshold;
extern int	lbgrid_max_list;

/* gridam_lbgrid.c */
extern void lbgrid_check_options(const LbgridOptions *o);
extern void lbgrid_init(void);
extern void lbgrid_settings(Relation index, GridSettings *out);
extern IndexAmRoutine *grid_am_routine(void);

/* gridam_build.c */
extern IndexBuildResult *grid_am_build(Relation heap, Relation index, IndexInfo *info,
									   void (*prepare) (Grid *g));
extern IndexBuildResult *lbgrid_build(Relation heap, Relation index, IndexInfo *info);
extern bool lbgrid_insert(Relation index, Datum *values, bool *isnull,
						  ItemPointer ht_ctid, Relation heap,
						  IndexUniqueCheck checkUnique, bool indexUnchanged,
						  IndexInfo *info);

/* gridam_scan.c */
extern IndexScanDesc lbgrid_beginscan(Relation index, int nkeys, int norderbys);
extern bool lbgrid_gettuple(IndexScanDesc scan, ScanDirection dir);
extern int64 lbgrid_getbitmap(IndexScanDesc scan, TIDBitmap *tbm);

/* gridam_vacuum.c */
extern IndexBulkDeleteResult *lbgrid_bulkdelete(IndexVacuumInfo *info,
												IndexBulkDeleteResult *stats,
												IndexBulkDeleteCallback callback,
												void *callback_state);

/* gridam_cost.c */
extern void lbgrid_costestimate(PlannerInfo *root, IndexPath *path,
								double loop_count, Cost *indexStartupCost,
								Cost *indexTotalCost, Selectivity *indexSelectivity,
								double *indexCorrelation, double *indexPages);

/* gridam_inspect.c */
extern void lbgrid_check(HiIndex *idx);
extern char *lbgrid_inspect_json(HiIndex *idx);
extern HiPageInfo *lbgrid_pages(HiIndex *idx, Size *n);
extern void lbgrid_reset_stats(HiIndex *idx);

/* ---- hgrid (gridam_hgrid.c, gridam_hgrid_place.c) ----
 * The hgrid index access method: H-Grid (thesis section 4.3), the
 * two-level Grid File with GFFM buckets whose sub-directories and buckets
 * live on either tier, placed by hot-region detection
 * (policy/hgrid_hot_region.c).  It shares the Grid File core (grid/) and the AM
 * glue of lbgrid (am/gridam_*.c).
 */
/*
 * Reloptions: lbgrid's (whose first part is the core's HiIndexOptions;
 * logging is ignored: H-Grid's buckets are GFFM's), then H-Grid's own.
 */
typedef struct HgridOptions
{
	LbgridOptions lb;
	int			dirs_on_optane; /* 1, 0, -1: GUC */
	double		selectivity;	/* s; -1: GUC */
	int			average;		/* 0: CMA, 1: SMA, -1: GUC */
	int			window;			/* -1: GUC */
	int			cooling_period; /* -1: GUC, 0: off */
	int			optane_capacity;	/* kB, -1: GUC, 0: unlimited */
} HgridOptions;

#define HGRID_BUFFER_KB_DEFAULT		65536	/* 64 MB, taken as used; the thesis (4.3.4) had 8 MB */
#define HGRID_BUFFER_SPLIT_DEFAULT	25	/* % for directories: buckets get the rest */
#define HGRID_SELECTIVITY_DEFAULT	1.5
#define HGRID_WINDOW_DEFAULT		10000
#define HGRID_COOLING_DEFAULT		1000000

extern int	hgrid_buffer_kb;
extern double hgrid_selectivity;
extern int	hgrid_average;
extern int	hgrid_window;
extern int	hgrid_cooling_period;
extern int	hgrid_capacity_kb;
extern bool hgrid_dirs_on_optane;

/* gridam_hgrid.c */
extern void hgrid_init(void);
extern void hgrid_params(Relation index, uint32 page_size, HrParams *out);

/* gridam_hgrid_place.c */
extern void hgrid_access(Grid *g, int which, const uint32 *pagenos,
						 const int *frames, int n);
extern void hgrid_place_register(void);
extern void hgrid_free_ext(dsa_pointer am_ext);
extern void hgrid_page_freed(Grid *g, uint32 pageno);
extern IndexBuildResult *hgrid_build(Relation heap, Relation index, IndexInfo *info);
extern IndexBulkDeleteResult *hgrid_bulkdelete(IndexVacuumInfo *info,
											   IndexBulkDeleteResult *stats,
											   IndexBulkDeleteCallback callback,
											   void *callback_state);
extern void hgrid_check(HiIndex *idx);
extern HiPageInfo *hgrid_pages(HiIndex *idx, Size *n);
extern void hgrid_reset_stats(HiIndex *idx);
extern char *hgrid_inspect_json(HiIndex *idx);

#endif							/* AM_LBGRID_H */
