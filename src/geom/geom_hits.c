/*
 * geom_hits.c
 *	  A range search's answer: TIDs or entries (geom_hits.h).
 */
#include "postgres.h"

#include "utils/hsearch.h"
#include "utils/memutils.h"

#include "geom/geom_hits.h"

void
hi_hits_init(HiHits *h, bool want_items)
{
	memset(h, 0, sizeof(HiHits));
	h->want_items = want_items;
}

void
hi_hits_grow(HiHits *h)
{
	Size		esz = h->want_items ? sizeof(HiKeyItem) : sizeof(ItemPointerData);
	void	   *old = h->want_items ? (void *) h->items : (void *) h->tids;
	void	   *p;

	h->max = Max(64, h->max * 2);
	p = old == NULL ? palloc_extended(esz * h->max, MCXT_ALLOC_HUGE) :
		repalloc_huge(old, esz * h->max);
	if (h->want_items)
		h->items = p;
	else
		h->tids = p;
}

static int
cmp_tid(const void *a, const void *b)
{
	return ItemPointerCompare((ItemPointer) a, (ItemPointer) b);
}

static int
cmp_item(const void *a, const void *b)
{
	return ItemPointerCompare((ItemPointer) &((const HiKeyItem *) a)->tid,
							  (ItemPointer) &((const HiKeyItem *) b)->tid);
}

static inline ItemPointer
tid_at(const HiHits *h, Size i)
{
	return h->want_items ? &h->items[i].tid : &h->tids[i];
}

static inline void
move_to(HiHits *h, Size to, Size from)
{
	if (h->want_items)
		h->items[to] = h->items[from];
	else
		h->tids[to] = h->tids[from];
}

void
hi_hits_sort_unique(HiHits *h)
{
	Size		i,
				o = 0;

	if (h->n < 2)
		return;
	if (h->want_items)
		qsort(h->items, h->n, sizeof(HiKeyItem), cmp_item);
	else
		qsort(h->tids, h->n, sizeof(ItemPointerData), cmp_tid);
	for (i = 0; i < h->n; i++)
		if (o == 0 || !ItemPointerEquals(tid_at(h, o - 1), tid_at(h, i)))
			move_to(h, o++, i);
	h->n = o;
}

void
hi_hits_unique_in_order(HiHits *h)
{
	HASHCTL		ctl;
	HTAB	   *seen;
	Size		i,
				o = 0;

	if (h->n < 2)
		return;
	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = sizeof(ItemPointerData);
	ctl.entrysize = sizeof(ItemPointerData);
	ctl.hcxt = CurrentMemoryContext;
	seen = hash_create("hybrid_index tids", h->n, &ctl,
					   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	for (i = 0; i < h->n; i++)
	{
		bool		found;

		(void) hash_search(seen, tid_at(h, i), HASH_ENTER, &found);
		if (!found)
			move_to(h, o++, i);
	}
	hash_destroy(seen);
	h->n = o;
}
