/*
 * rtree.h
 *	  The R-tree core shared by the R-tree access methods: page layout,
 *	  insertion (Guttman, quadratic split), bulk loading (STR packing),
 *	  level-batched range search, best-first kNN, deletion and checks.
 *
 * Pages: HiPageHeader, then an array of entries.  Internal entries hold a
 * child's logical page id and the box enclosing it; leaf entries hold a
 * heap TID and the entry's box.  NULL and EMPTY geometries live in a chain
 * of leaf-format pages of their own (the null list), outside the tree, so
 * they never widen a box; kNN scans return them last.
 */
#ifndef RTREE_H
#define RTREE_H

#include <math.h>

#include "access/genam.h"
#include "access/itup.h"
#include "lib/pairingheap.h"
#include "nodes/tidbitmap.h"

#include "base/hi_base.h"
#include "core/hi_core.h"
#include "base/hi_hits.h"
#include "log/redo_log.h"

typedef struct RtInternalEntry
{
	HiBox		box;
	uint32		child;
} RtInternalEntry;

typedef struct RtLeafEntry
{
	HiBox		key;			/* box, or exact point (flags) */
	ItemPointerData tid;
	uint8		kind;			/* HiKeyKind */
	uint8		flags;			/* HI_ENT_* */
} RtLeafEntry;

/*
 * The box of an entry of size esz (leaf entries are the larger ones and may
 * hold exact points; inner entries start with their box).
 */
StaticAssertDecl(sizeof(RtLeafEntry) != sizeof(RtInternalEntry),
				 "leaf and inner entries are told apart by size");

static inline const HiBox *
rt_entry_box(const char *ent, Size esz, HiBox *tmp)
{
	if (esz == sizeof(RtLeafEntry))
		return hi_ent_box(&((const RtLeafEntry *) ent)->key,
						  ((const RtLeafEntry *) ent)->flags, tmp);
	return (const HiBox *) ent;
}

/* the box of a leaf entry */
static inline const HiBox *
rt_leaf_box(const RtLeafEntry *e, HiBox *tmp)
{
	return hi_ent_box(&e->key, e->flags, tmp);
}

#define RT_HEADER_SIZE		MAXALIGN(sizeof(HiPageHeader))
#define RT_PAGE_HDR(p)		((HiPageHeader *) (p))
#define RT_INTERNAL(p)		((RtInternalEntry *) ((char *) (p) + RT_HEADER_SIZE))
#define RT_LEAF(p)			((RtLeafEntry *) ((char *) (p) + RT_HEADER_SIZE))

static inline uint32
rt_internal_capacity(uint32 page_size)
{
	return (page_size - RT_HEADER_SIZE) / sizeof(RtInternalEntry);
}

static inline uint32
rt_leaf_capacity(uint32 page_size)
{
	return (page_size - RT_HEADER_SIZE) / sizeof(RtLeafEntry);
}

/*
 * Box arithmetic on the hot paths (ChooseSubtree runs it for every entry
 * of every page on the way down), inlined and in double precision.
 */
static inline double
rt_box_area(const HiBox *b)
{
	return ((double) b->xmax - b->xmin) * ((double) b->ymax - b->ymin);
}

static inline double
rt_box_enlargement(const HiBox *a, const HiBox *b, double area_a)
{
	double		w = (double) Max(a->xmax, b->xmax) - Min(a->xmin, b->xmin);
	double		h = (double) Max(a->ymax, b->ymax) - Min(a->ymin, b->ymin);

	return w * h - area_a;
}

/* Page access through the index's page source (see HiPageSource) */
static inline void
rt_read_batch(HiIndex *idx, const uint32 *pagenos, int n, HiFrame *frames)
{
	idx->pages->read_batch(idx, pagenos, n, frames);
}

static inline HiFrame
rt_read(HiIndex *idx, uint32 pageno)
{
	HiFrame		f;

	idx->pages->read_batch(idx, &pageno, 1, &f);
	return f;
}

static inline HiFrame
rt_new_page(HiIndex *idx, uint32 pageno)
{
	return idx->pages->new_page(idx, pageno);
}

static inline char *
rt_data(HiIndex *idx, HiFrame f)
{
	return idx->pages->data(idx, f);
}

static inline void
rt_begin_write(HiIndex *idx, HiFrame f)
{
	idx->pages->begin_write(idx, f);
}

static inline void
rt_mark_dirty(HiIndex *idx, HiFrame f)
{
	idx->pages->mark_dirty(idx, f);
}

static inline void
rt_release(HiIndex *idx, HiFrame f)
{
	idx->pages->release(idx, f);
}

static inline int
rt_batch_limit(HiIndex *idx)
{
	return idx->pages->batch_limit(idx);
}

/* minimum fill of a page after a split (Guttman's m), 40 % */
#define RT_MIN_FILL_PCT 40

/* Scan predicates (GiST strategy numbers) */
#define RT_STRATEGY_OVERLAP		3	/* && */
#define RT_STRATEGY_SAME		6	/* ~= */
#define RT_STRATEGY_CONTAINS	7	/* ~ */
#define RT_STRATEGY_WITHIN		8	/* @ */
#define RT_STRATEGY_DISTANCE	13	/* <-> */

typedef struct RtQual
{
	int			strategy;
	HiBox		box;
} RtQual;

/* rtree_page.c */
extern void rt_page_init(char *page, uint32 pageno, uint16 level, uint16 flags);
extern uint32 rt_null_next(const char *page);
extern void rt_set_null_next(char *page, uint32 next);
extern void rt_page_box(const char *page, HiBox *box);
extern const char *rt_page_layout(const char *page, uint32 page_size);

/*
 * PostGIS's && on float boxes (hi_box_overlaps), inlined: it runs for
 * every entry of every page a search reads.  A box with NaN is empty and
 * overlaps nothing.
 */
static inline bool
rt_box_overlaps(const HiBox *a, const HiBox *b)
{
	if (isnan(a->xmin) || isnan(b->xmin))
		return false;
	return !(a->xmin > b->xmax || b->xmin > a->xmax ||
			 a->ymin > b->ymax || b->ymin > a->ymax);
}

/*
 * Can a subtree whose entries lie inside box hold an entry that satisfies
 * every qual?
 */
static inline bool
rt_internal_consistent(const RtQual *quals, int nquals, const HiBox *box)
{
	int			i;

	for (i = 0; i < nquals; i++)
	{
		const HiBox *q = &quals[i].box;

		/*
		 * PostGIS treats a box with NaN as empty, and EMPTY ~= EMPTY holds:
		 * such a query can match entries no internal box encloses.
		 */
		if (hi_box_has_nan(q))
			continue;
		switch (quals[i].strategy)
		{
			case RT_STRATEGY_OVERLAP:
			case RT_STRATEGY_WITHIN:
				if (!rt_box_overlaps(box, q))
					return false;
				break;
			case RT_STRATEGY_SAME:
			case RT_STRATEGY_CONTAINS:
				if (!hi_box_contains(box, q))
					return false;
				break;
			default:
				elog(ERROR, "unrecognized strategy number: %d", quals[i].strategy);
		}
	}
	return true;
}

/* Does a leaf entry with this box satisfy every qual? */
static inline bool
rt_leaf_consistent(const RtQual *quals, int nquals, const HiBox *box)
{
	int			i;

	for (i = 0; i < nquals; i++)
	{
		const HiBox *q = &quals[i].box;
		bool		ok;

		switch (quals[i].strategy)
		{
			case RT_STRATEGY_OVERLAP:
				ok = rt_box_overlaps(box, q);
				break;
			case RT_STRATEGY_SAME:
				ok = hi_box_equals(box, q);
				break;
			case RT_STRATEGY_CONTAINS:
				ok = hi_box_contains(box, q);
				break;
			case RT_STRATEGY_WITHIN:
				ok = hi_box_within(box, q);
				break;
			default:
				elog(ERROR, "unrecognized strategy number: %d", quals[i].strategy);
				ok = false;
		}
		if (!ok)
			return false;
	}
	return true;
}

/*
 * Does an EMPTY entry (kept in the null list) satisfy every qual, as the
 * loaded PostGIS evaluates EMPTY (hi_empty_box)?  Never without quals;
 * never where PostGIS gives EMPTY no box (3.3: EMPTY satisfies no box qual,
 * and an EMPTY query makes no qual there).
 */
static inline bool
rt_empty_consistent(const RtQual *quals, int nquals)
{
	const HiBox *e = hi_empty_box();

	return e != NULL && nquals > 0 && rt_leaf_consistent(quals, nquals, e);
}

/* rtree_split.c */
extern void rt_quadratic_split(const HiBox *boxes, int n, int min_fill, bool *right);

/* rtree_insert.c */
/* key and flags as in HiKeyItem: a box, or an exact point */
extern void rt_insert_locked(HiIndex *idx, HiKeyKind kind, const HiBox *key,
							 uint8 flags, ItemPointer tid);
extern void rt_init_empty(HiIndex *idx);
extern void rt_redo(HiIndex *idx, const HiLogRecord *rec);
extern int	rt_choose_entry(const char *page, const HiBox *box);

/* rtree_insert_batch.c */
extern void rt_insert_batch(HiIndex *idx, const HiKeyItem *items, int n,
							TransactionId xid);

/*
 * rtree_spool.c: the entries of one level of a bulk load (leaf or internal
 * entries, box first), sorted by the x (dim 0) or y (dim 1) of their box
 * centres, within a budget (base/hi_runsort.c: radix-sorted in memory,
 * sorted runs in temporary files beyond the budget).
 */
typedef struct RtSpool RtSpool;

extern RtSpool *rt_spool_begin(Size esz, int dim, Size budget, Size expect);
extern void rt_spool_put(RtSpool *s, const void *e);
extern Size rt_spool_count(const RtSpool *s);
extern void rt_spool_sort(RtSpool *s);
extern void rt_spool_get(RtSpool *s, void *e);
extern void rt_spool_presort(RtSpool *s);
extern void rt_spool_share(RtSpool *s, const HiLoadShared *files, const char *prefix);
extern Size rt_spool_export(RtSpool *s, BufFile *list);
extern Size rt_spool_import(RtSpool *s, const HiLoadShared *files, BufFile *list);
extern void rt_spool_split(RtSpool *s, Size n, BufFile *list, const char *name);
extern void rt_spool_end(RtSpool *s);

/* rtree_build.c: CREATE INDEX collects the heap's entries, then packs */
typedef struct RtBuild RtBuild;

extern RtBuild *rt_build_begin(Size budget);
extern void rt_build_put(RtBuild *b, const RtLeafEntry *e);
extern void rt_build_export(RtBuild *b, BufFile *file);
extern void rt_build_presort(RtBuild *b);
extern void rt_build_share(RtBuild *b, const HiLoadShared *files, const char *prefix);
extern Size rt_build_import(RtBuild *b, BufFile *file, const char *name);
extern void rt_build_set_helper(RtBuild *b, const HiLoadHelper *helper);
extern void rt_bulk_help(HiIndex *idx, const void *task, Size len, const HiLoadShared *shared);
extern void rt_bulk_load(HiIndex *idx, RtBuild *b);

/* rtree_search.c */
/* the order of the TIDs of a range search */
typedef enum RtTidOrder
{
	RT_TIDS_ANY,				/* as found, duplicates possible (a bitmap) */
	RT_TIDS_HEAP,				/* sorted and unique: the heap in physical order */
	RT_TIDS_INDEX				/* unique, in index (leaf) order: CLUSTER */
} RtTidOrder;

extern void rt_range_search(HiIndex *idx, const RtQual *quals, int nquals,
							RtTidOrder order, HiHits *out);
extern void rt_collect_nulls(HiIndex *idx, bool only_empty, ItemPointer *tids, Size *n);

/* rtree_knn.c */
typedef struct RtKnnState RtKnnState;
extern RtKnnState *rt_knn_begin(HiIndex *idx, const HiBox *query, bool query_empty,
								const RtQual *quals, int nquals,
								const HiKnnExact *exact);
extern bool rt_knn_next(RtKnnState *st, HiKeyItem *item, double *dist, bool *isnull,
						bool *exact);
extern void rt_knn_end(RtKnnState *st);

/* rtree_vacuum.c */
extern void rt_bulk_delete(HiIndex *idx, IndexBulkDeleteCallback callback,
						   void *cb_state, double *tuples_removed,
						   double *tuples_remaining);
extern void rt_delete_entry(HiIndex *idx, HiKeyKind kind, const HiBox *key,
							uint8 flags, ItemPointer tid);

/* rtree_check.c */
extern void rt_check(HiIndex *idx);
extern char *rt_inspect_json(HiIndex *idx);

extern HiPageInfo *rt_pages(HiIndex *idx, Size *n);

#endif							/* RTREE_H */
