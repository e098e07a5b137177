/*
 * tier_move.c
 *	  Moving pages between tiers without going through the cache: read the
 *	  current version from its slot, write it to a fresh slot of the other
 *	  tier, and point the page table at it.
 *
 * Used by placement policies for moves the eviction path cannot make
 * (reclaiming cold leaves from a full fast tier, rHyR-tree's random
 * promotions).  The tree is not involved: a page keeps its logical id, so
 * parents need no change.  If the page was rewritten meanwhile (a dirty
 * cached copy evicted), the page table no longer holds the version we
 * copied and the copy is dropped; the newer version wins.
 */
#include "postgres.h"

#include "miscadmin.h"

#include "base/hi_base.h"
#include "storage/storage.h"

/*
 * Move pages to fresh slots of to_tier.  compact: a checkpoint moves pages
 * down within their tier (it holds ckpt_lock exclusively); a page is moved
 * only into a slot below its own.  Returns the number of pages moved.
 */
static int
move_pages(HiIndexShared *sh, const uint32 *pagenos, int n, int to_tier, bool compact)
{
	uint32		psize = sh->meta.page_size;
	int			depth = Max(hi_io_depth, 1);
	char	   *mem = palloc((Size) depth * psize + HI_IO_ALIGN);
	char	   *bufs = (char *) TYPEALIGN(HI_IO_ALIGN, mem);
	char	  **pages = palloc(sizeof(char *) * depth);
	HiIoReq    *reqs = palloc(sizeof(HiIoReq) * depth);
	uint32	   *old = palloc(sizeof(uint32) * depth);
	uint32	   *new = palloc(sizeof(uint32) * depth);
	uint32	   *which = palloc(sizeof(uint32) * depth);
	char	   *path = hi_slot_path(sh, to_tier);
	int			moved = 0;
	int			start;
	bool		done = false;

	for (start = 0; start < n; start += depth)
	{
		int			cnt = 0;
		int			keep = 0;
		int			i;

		/* a checkpoint must not free the old slots before we remap */
		if (!compact)
			LWLockAcquire(&sh->ckpt_lock, LW_SHARED);
		PG_TRY();
		{
			for (i = start; i < Min(n, start + depth); i++)
			{
				uint32		e = hi_pt_get(sh, pagenos[i]);

				if (!HI_PTE_MAPPED(e) || (HI_PTE_TIER(e) == to_tier) != compact)
					continue;
				which[cnt] = pagenos[i];
				pages[cnt] = bufs + (Size) cnt * psize;
				cnt++;
			}
			hi_store_read_pages(sh, NULL, which, cnt, pages, old);
			/* a page another backend moved meanwhile is where it belongs */
			for (i = 0; i < cnt; i++)
				if ((HI_PTE_TIER(old[i]) != to_tier) != compact)
				{
					which[keep] = which[i];
					old[keep] = old[i];
					pages[keep] = pages[i];
					keep++;
				}
			cnt = keep;
			if (cnt > 0)
			{
				for (i = 0; i < cnt; i++)
				{
					uint32		slot = hi_pt_alloc_slot(sh, to_tier);

					if (compact && slot > HI_PTE_SLOT(old[i]))
					{
						/* no free slot below it left: the rest stay */
						hi_pt_unalloc_slot(sh, to_tier, slot);
						cnt = i;
						done = true;
						break;
					}
					new[i] = HI_PTE_MAKE(to_tier, slot, HI_PTE_UPPER(old[i]));
					reqs[i].fd = hi_file_open(sh, to_tier, false);
					reqs[i].tier = to_tier;
					reqs[i].offset = (off_t) slot * psize;
					reqs[i].buf = pages[i];
					reqs[i].len = psize;
					reqs[i].path = path;
				}
				HI_TRY_INNER();
				{
					if (cnt > 0)
						hi_io_batch(sh, reqs, cnt, true);
				}
				HI_CATCH_INNER();
				{
					for (i = 0; i < cnt; i++)
						hi_pt_unalloc_slot(sh, to_tier, HI_PTE_SLOT(new[i]));
					PG_RE_THROW();
				}
				HI_END_TRY_INNER();
				for (i = 0; i < cnt; i++)
				{
					if (hi_pt_remap_if(sh, which[i], old[i], new[i]))
						moved++;
					else
						hi_pt_unalloc_slot(sh, to_tier, HI_PTE_SLOT(new[i]));
				}
			}
		}
		PG_FINALLY();
		{
			if (!compact)
				hi_lwlock_release_cleanup(&sh->ckpt_lock);
		}
		PG_END_TRY();
		if (done)
			break;
		CHECK_FOR_INTERRUPTS();
	}
	pfree(mem);
	pfree(pages);
	pfree(reqs);
	pfree(old);
	pfree(new);
	pfree(which);
	return moved;
}

/* Move pages to the other tier (placement policies) */
int
hi_tier_move(HiIndexShared *sh, const uint32 *pagenos, int n, int to_tier)
{
	return move_pages(sh, pagenos, n, to_tier, false);
}

/*
 * At a checkpoint (ckpt_lock held exclusively, no page dirty): move the
 * pages of a tier's highest slots into its lowest free ones, so that the
 * checkpoint cuts the end of the file off (their old slots are PENDING
 * until the new map file is written).  The moved pages are fresh: the
 * checkpoint logs them to WAL like any page written since the last one.
 */
int
hi_tier_compact(HiIndexShared *sh, int tier)
{
	Size		n;
	uint32	   *pages = hi_pt_compaction_plan(sh, tier, &n);
	int			moved = 0;

	if (pages == NULL)
		return 0;
	if (n > 0)
		moved = move_pages(sh, pages, (int) n, tier, true);
	pfree(pages);
	return moved;
}
