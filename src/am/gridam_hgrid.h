/*
 * gridam_hgrid.h
 *	  The hgrid index access method: H-Grid (thesis section 4.3), the
 *	  two-level Grid File with GFFM buckets whose sub-directories and buckets
 *	  live on either tier, placed by hot-region detection
 *	  (policy/hgrid_hot_region.c).  It shares the Grid File core (grid/) and the AM
 *	  glue of lbgrid (am/lbgrid*.c).
 */
#ifndef AM_HGRID_H
#define AM_HGRID_H

#include "am/gridam.h"
#include "policy/hgrid_hot_region.h"

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

#define HGRID_BUFFER_KB_DEFAULT		8192	/* thesis 4.3.4: 8 MB */
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

#endif							/* AM_HGRID_H */
