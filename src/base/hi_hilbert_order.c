/*
 * hi_hilbert_order.c
 *	  A batch of index entries in the order of a Hilbert curve over their
 *	  extent, for the batched insertions of every access method.
 *
 * Entries that follow each other on the curve mostly go to the same leaf
 * or bucket through the same directory or inner pages, so an insertion
 * finds in memory what the one before it changed; a write buffer (eFIND's)
 * collects a page's changes before it flushes the page instead of one
 * change per flush.
 */
#include "postgres.h"

#include "base/hi_base.h"

/*
 * A copy of the n items, NULL and EMPTY ones first, then the boxes by the
 * Hilbert keys of their centres; each group otherwise in arrival order.
 */
HiKeyItem *
hi_items_hilbert_order(const HiKeyItem *items, int n)
{
	HiKeyItem  *out = palloc(sizeof(HiKeyItem) * Max(n, 1));
	uint64	   *key = palloc(sizeof(uint64) * Max(n, 1) * 2);
	uint32	   *val = palloc(sizeof(uint32) * Max(n, 1) * 2);
	HiBox		extent;
	bool		any = false;
	uint32	   *ord;
	int			i;

	memset(&extent, 0, sizeof(extent));
	for (i = 0; i < n; i++)
	{
		HiBox		tmp;
		const HiBox *b;

		if (items[i].kind != HI_KEY_BOX)
			continue;
		b = hi_ent_box(&items[i].key, items[i].flags, &tmp);
		if (!any)
			extent = *b;
		else
			hi_box_union(&extent, b);
		any = true;
	}
	for (i = 0; i < n; i++)
	{
		HiBox		tmp;

		key[i] = items[i].kind == HI_KEY_BOX ?
			hi_box_hilbert(hi_ent_box(&items[i].key, items[i].flags, &tmp),
						   &extent) + 1 : 0;
		val[i] = i;
	}
	ord = hi_radix_sort(key, val, n, key + n, val + n) ? val + n : val;
	for (i = 0; i < n; i++)
		out[i] = items[ord[i]];
	pfree(key);
	pfree(val);
	return out;
}
