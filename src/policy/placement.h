/*
 * placement.h
 *	  Page placement between the tiers.  A placement policy decides which
 *	  tier each page of an index is written to, may learn from the pages an
 *	  index reads, and may move clean pages; each is one implementation of
 *	  HiPlacementPolicy, registered for an access method kind and a
 *	  placement mode (the index's reloption "placement"), with its
 *	  per-index state in shared memory of its own:
 *
 *	  policy/placement.c	the registry and the dispatch the page store calls
 *	  policy/hyrtree_wma.c	the R-tree AMs': none, upper (sHR-tree), HyR-tree's
 *							weighted moving average and the rHyR-tree's
 *							random control (their Node Score Table:
 *							policy/hyrtree_wma_nst.c)
 *	  policy/hgrid_hot_region.c and am/gridam_hgrid_place.c
 *							H-Grid's hot regions and its random control
 */
#ifndef HI_PLACEMENT_H
#define HI_PLACEMENT_H

#include "lib/stringinfo.h"
#include "utils/rel.h"

#include "base/hi_base.h"
#include "core/hi_core.h"

/* Placement modes of the R-tree access methods (reloption placement) */
#define HI_PLACEMENT_NONE	0	/* every page on flash: the papers' R-tree */
#define HI_PLACEMENT_UPPER	1	/* non-leaf pages on the fast tier: sHR-tree */
#define HI_PLACEMENT_WMA	2	/* upper + hot leaves by WMA score: HyR-tree */
#define HI_PLACEMENT_RANDOM 3	/* upper + as many random leaves: rHyR-tree */
#define HI_PLACEMENT_MODES	8	/* modes an access method may register */

#define HI_WMA_MAX_EPOCHS	10

typedef struct HiPlacementPolicy
{
	const char *name;			/* the mode's name (hybrid_index_inspect) */
	/* pages the index just read, from the tier files or a cache */
	void		(*note_reads) (HiIndexShared *sh, int slotno, const uint32 *pagenos,
							   char *const *pages, int n);
	/* the tier a page is written to (old_pte: its current mapping, 0: none) */
	int			(*write_tier) (HiIndexShared *sh, int slotno, const char *page,
							   uint32 old_pte);
	/* whether a clean page leaving a cache should move up anyway */
	bool		(*migrate_clean) (HiIndexShared *sh, int slotno, const char *page,
								  uint32 pte);
	/* the policy's state as a JSON object (hybrid_index_inspect) */
	char	   *(*json) (HiIndexShared *sh);
} HiPlacementPolicy;

/* policy/placement.c */
extern void hi_place_register(HiAmKind kind, uint32 mode,
							  const HiPlacementPolicy *policy);
extern const HiPlacementPolicy *hi_place_policy(const HiIndexShared *sh);
extern void hi_place_register_kind(HiAmKind kind,
								   const char *(*page_layout) (const char *, uint32));
extern int	hi_place_write_tier(HiIndexShared *sh, int slotno, const char *page,
								uint32 old_pte);
extern char *hi_place_json(HiIndexShared *sh);

/*
 * policy/hyrtree_wma.c: the R-tree AMs' policies (none, upper, wma,
 * random), registered for a kind by hi_wma_register.  The parameters of wma and random come from the access method
 * (its reloptions over the hybrid_index.* settings) through params.
 */
typedef struct HiWmaParams
{
	int			epoch_size;		/* node reads per epoch; <= 0: GUC */
	int			wma_epochs;		/* t; <= 0: GUC */
	double		wma_threshold;	/* N-th percentile; <= 0: GUC */
	int			optane_capacity_kb; /* fast-tier capacity; <= 0: unlimited */
} HiWmaParams;

typedef void (*hi_wma_params_fn) (Relation index, HiWmaParams *out);

extern void hi_wma_init(void);
extern void hi_wma_register(HiAmKind kind, hi_wma_params_fn params);
/* policy/hyrtree_wma_nst.c: the Node Score Table in shared memory */
extern Size hi_wma_shmem_size(void);
extern void hi_wma_shmem_init(void);
extern double hi_place_score(HiIndexShared *sh, int slotno, uint32 pageno);

/* ---- policy/hgrid_hot_region.c ----
 * H-Grid's hot-region detection (thesis section 4.3.2, Eq. 4.1-4.2,
 * Algorithm 9): which sub-directories and buckets of a grid index belong
 * on the fast tier, plus the cooling and capacity the thesis leaves as
 * future work.  The policy knows pages, their kinds and their parents;
 * it knows nothing of the Grid File (am/gridam_hgrid.c feeds it).
 */
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

#endif							/* HI_PLACEMENT_H */
