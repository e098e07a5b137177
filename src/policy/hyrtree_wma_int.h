/*
 * hyrtree_wma_int.h
 *	  What the R-tree placement policies (hyrtree_wma.c) and their Node
 *	  Score Table (hyrtree_wma_nst.c) share: the per-index state of wma and
 *	  random, and the table's calls the policies make.
 */
#ifndef HYRTREE_WMA_INT_H
#define HYRTREE_WMA_INT_H

#include "storage/lwlock.h"

#include "base/hi_base.h"

/*
 * Per-index state of the wma and random policies, one per registry slot,
 * in shared memory of this module (reset by wma_configure).
 */
typedef struct WmaSlot
{
	LWLock		lock;			/* end-of-epoch processing */
	int			epoch_size;		/* node reads per epoch */
	int			wma_epochs;		/* t */
	double		wma_threshold;	/* N-th percentile */
	uint32		optane_capacity;	/* pages, 0 = unlimited */
	pg_atomic_uint64 epoch_reads;
	uint64		epoch_no;		/* protected by lock */
	double		threshold;		/* T for the current epoch */
	bool		have_threshold;
	uint32		scored_leaves;	/* leaves with a score last epoch */
	float		score_min;
	float		score_median;
	float		score_max;
	pg_atomic_uint64 migrations_up;
	pg_atomic_uint64 migrations_down;
	pg_atomic_uint64 random_quota;	/* rHyR-tree: leaves WMA would move */
} WmaSlot;

/* hyrtree_wma.c: the setting hybrid_index.score_table_entries */
extern int	hi_wma_score_table_entries;

/* hyrtree_wma_nst.c */
extern WmaSlot *hi_wma_slots;

static inline WmaSlot *
hi_wma_slot(HiIndexShared *sh)
{
	return &hi_wma_slots[sh - hi_shared->indexes];
}

extern void hi_wma_note_reads(HiIndexShared *sh, int slotno, const uint32 *pagenos,
							  char *const *pages, int n);
extern void hi_wma_count_for_random(HiIndexShared *sh, int slotno, uint32 pageno);
extern void hi_wma_forget(int slotno, uint32 generation);

#endif							/* HYRTREE_WMA_INT_H */
