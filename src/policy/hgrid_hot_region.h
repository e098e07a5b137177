/*
 * hgrid_hot_region.h
 *	  H-Grid's hot-region detection (thesis section 4.3.2, Eq. 4.1-4.2,
 *	  Algorithm 9): which sub-directories and buckets of a grid index belong
 *	  on the fast tier, plus the cooling and capacity the thesis leaves as
 *	  future work.  The policy knows pages, their kinds and their parents;
 *	  it knows nothing of the Grid File (am/gridam_hgrid.c feeds it).
 */
#ifndef HGRID_HOT_REGION_H
#define HGRID_HOT_REGION_H

#include "lib/stringinfo.h"

#include "base/hi_base.h"
#include "core/hi_core.h"

/* Placement modes of hgrid (reloption placement; values kept in map files) */
#define HR_PLACEMENT_NONE	0	/* GFFM: every page on flash */
#define HR_PLACEMENT_RANDOM 3	/* as many random pages as "hot" would move */
#define HR_PLACEMENT_HOT	4	/* hot-region detection (H-Grid) */

#define HR_DIR		0			/* a sub-directory page */
#define HR_BUCKET	1			/* a bucket page */
#define HR_NKINDS	2

/* Parameters: reloptions over GUCs, refreshed by every operation */
typedef struct HrParams
{
	int			mode;			/* HR_PLACEMENT_* */
	bool		dirs_on_fast;	/* the thesis' "H-Grid special case" */
	double		selectivity;	/* s of Algorithm 9 */
	bool		sma;			/* simple moving average instead of CMA */
	int			window;			/* SMA window (weights) */
	int64		cooling;		/* accesses between cooling rounds, 0: off */
	uint32		capacity;		/* fast-tier pages, 0: unlimited */
} HrParams;

#define HR_SMA_MAX_WINDOW	1000000

extern dsa_pointer hr_create(void);
extern void hr_free(dsa_pointer p);
extern void hr_configure(dsa_pointer p, const HrParams *prm);

/*
 * One access of a page.  A sub-directory passes the buckets it points at
 * (their parent); a bucket its page id only.  *mark is set when the page
 * was found hot: the caller marks its buffered copy dirty so that the next
 * write-buffer flush writes it to the fast tier (Algorithm 9, line 13).
 * Returns true when maintenance (hr_maintain) is due.
 */
extern bool hr_access(HiIndexShared *sh, dsa_pointer p, const HrParams *prm,
					  int kind, uint32 pageno, const uint32 *children,
					  int nchildren, bool *mark);

/* Cooling, capacity and random-mode moves; call without grid locks */
extern void hr_maintain(HiIndexShared *sh, dsa_pointer p);

/* The tier a page is written to (hgrid's placement policies) */
extern int	hr_write_tier(HiIndexShared *sh, dsa_pointer p, const char *page,
						  uint32 old_pte);

/* State as JSON members (no braces), for hybrid_index_inspect */
extern void hr_json(HiIndexShared *sh, dsa_pointer p, StringInfo out);

/* A page id was freed: forget its weight, counts and pending move */
extern void hr_forget(dsa_pointer p, uint32 pageno);

/* ERROR (XX002) if the policy still holds state of a freed page id */
extern void hr_check_freed(dsa_pointer p, const uint32 *ids, uint32 n);

/* Forget counters (hybrid_index_reset_stats) */
extern void hr_reset_stats(dsa_pointer p);

#endif							/* HGRID_HOT_REGION_H */
