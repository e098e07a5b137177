/*
 * hi_hits.h
 *	  The answer of a range search of either core (rtree_search.c,
 *	  grid_search.c): heap TIDs, or for an index-only scan the entries
 *	  themselves (HiKeyItem: TID, kind, key and flags), from which the AM
 *	  rebuilds the values it returns.
 */
#ifndef HI_HITS_H
#define HI_HITS_H

#include "geom/geom_box.h"

typedef struct HiHits
{
	bool		want_items;		/* collect items, not TIDs */
	ItemPointer tids;
	HiKeyItem  *items;
	Size		n;
	Size		max;
} HiHits;

extern void hi_hits_init(HiHits *h, bool want_items);
extern void hi_hits_grow(HiHits *h);
/* sort by TID and drop repeated TIDs (the heap in physical order) */
extern void hi_hits_sort_unique(HiHits *h);
/* drop repeated TIDs, keeping the first of each where it is */
extern void hi_hits_unique_in_order(HiHits *h);

static inline void
hi_hits_add(HiHits *h, const ItemPointerData *tid, uint8 kind, const HiBox *key,
			uint8 flags)
{
	if (h->n == h->max)
		hi_hits_grow(h);
	if (h->want_items)
	{
		HiKeyItem  *it = &h->items[h->n++];

		it->key = *key;
		it->tid = *tid;
		it->kind = kind;
		it->flags = flags;
	}
	else
		h->tids[h->n++] = *tid;
}

#endif							/* HI_HITS_H */
