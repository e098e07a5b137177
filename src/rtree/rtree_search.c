/*
 * rtree_search.c
 *	  Range search that reads a whole level of candidate pages per batch
 *	  (the PIO B-tree paper's MPSearch, section 3.1, applied to the R-tree).
 *
 * The search runs to completion under tree_lock held in shared mode and
 * returns every matching heap TID (sorted and unique, or unique in index
 * order, on request).  Holding no lock or
 * pin between amgettuple calls, a scan can neither miss a row nor return
 * one twice when a concurrent insertion splits a page, and the sorted TIDs
 * visit the heap in physical order.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/hsearch.h"

#include "rtree/rtree.h"

void
rt_range_search(HiIndex *idx, const RtQual *quals, int nquals, RtTidOrder order,
				HiHits *out)
{
	HiIndexShared *sh = idx->sh;
	uint32	   *cur;
	Size		ncur = 1;
	Size		maxcur = 64;
	int			level;
	int			chunk = rt_batch_limit(idx);
	HiFrame    *frames = palloc(sizeof(HiFrame) * chunk);

	hi_lock_for_read(idx);
	cur = palloc(sizeof(uint32) * maxcur);
	cur[0] = sh->meta.root;
	for (level = sh->meta.height - 1; level >= 0 && ncur > 0; level--)
	{
		uint32	   *next = NULL;
		Size		nnext = 0,
					maxnext = 0;
		Size		start;

		for (start = 0; start < ncur; start += chunk)
		{
			int			n = (int) Min((Size) chunk, ncur - start);
			int			i;

			rt_read_batch(idx, cur + start, n, frames);
			for (i = 0; i < n; i++)
			{
				char	   *page = rt_data(idx, frames[i]);
				int			nent = RT_PAGE_HDR(page)->nentries;
				int			k;

				if (level > 0)
				{
					RtInternalEntry *e = RT_INTERNAL(page);

					for (k = 0; k < nent; k++)
					{
						if (!rt_internal_consistent(quals, nquals, &e[k].box))
							continue;
						if (nnext == maxnext)
						{
							maxnext = Max(64, maxnext * 2);
							next = next == NULL ?
								palloc_extended(sizeof(uint32) * maxnext, MCXT_ALLOC_HUGE) :
								repalloc_huge(next, sizeof(uint32) * maxnext);
						}
						next[nnext++] = e[k].child;
					}
				}
				else
				{
					RtLeafEntry *e = RT_LEAF(page);

					for (k = 0; k < nent; k++)
					{
						HiBox		tmp;

						if (rt_leaf_consistent(quals, nquals, rt_leaf_box(&e[k], &tmp)))
							hi_hits_add(out, &e[k].tid, e[k].kind, &e[k].key, e[k].flags);
					}
				}
				rt_release(idx, frames[i]);
			}
			CHECK_FOR_INTERRUPTS();
		}
		pfree(cur);
		cur = next;
		ncur = nnext;
	}
	LWLockRelease(&sh->tree_lock);
	if (cur)
		pfree(cur);
	pfree(frames);

	/* a bitmap orders and deduplicates by itself */
	if (order == RT_TIDS_HEAP)
		hi_hits_sort_unique(out);
	else if (order == RT_TIDS_INDEX)
		hi_hits_unique_in_order(out);
}

/* TIDs of the null list: NULL and EMPTY geometries, or EMPTY ones only */
void
rt_collect_nulls(HiIndex *idx, bool only_empty, ItemPointer *tids, Size *n)
{
	HiIndexShared *sh = idx->sh;
	HiHits		out;
	uint32		pageno;

	hi_hits_init(&out, false);

	hi_lock_for_read(idx);
	pageno = sh->meta.null_head;
	while (pageno != HI_INVALID_PAGE)
	{
		HiFrame		f = rt_read(idx, pageno);
		char	   *page = rt_data(idx, f);
		int			k;

		for (k = 0; k < RT_PAGE_HDR(page)->nentries; k++)
			if (!only_empty || RT_LEAF(page)[k].kind == HI_KEY_EMPTY)
				hi_hits_add(&out, &RT_LEAF(page)[k].tid, RT_LEAF(page)[k].kind,
							&RT_LEAF(page)[k].key, RT_LEAF(page)[k].flags);
		pageno = rt_null_next(page);
		rt_release(idx, f);
		CHECK_FOR_INTERRUPTS();
	}
	LWLockRelease(&sh->tree_lock);
	hi_hits_sort_unique(&out);
	*tids = out.tids;
	*n = out.n;
}
