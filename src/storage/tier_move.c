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

/* Returns the number of pages moved */
int
hi_tier_move(HiIndexShared *sh, const uint32 *pagenos, int n, int to_tier)
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

	for (start = 0; start < n; start += depth)
	{
		int			cnt = 0;
		int			keep = 0;
		int			i;

		/* a checkpoint must not free the old slots before we remap */
		LWLockAcquire(&sh->ckpt_lock, LW_SHARED);
		PG_TRY();
		{
			for (i = start; i < Min(n, start + depth); i++)
			{
				uint32		e = hi_pt_get(sh, pagenos[i]);

				if (!HI_PTE_MAPPED(e) || HI_PTE_TIER(e) == to_tier)
					continue;
				which[cnt] = pagenos[i];
				pages[cnt] = bufs + (Size) cnt * psize;
				cnt++;
			}
			hi_store_read_pages(sh, NULL, which, cnt, pages, old);
			/* a page another backend moved meanwhile is where it belongs */
			for (i = 0; i < cnt; i++)
				if (HI_PTE_TIER(old[i]) != to_tier)
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

					new[i] = HI_PTE_MAKE(to_tier, slot, HI_PTE_UPPER(old[i]));
					reqs[i].fd = hi_file_open(sh, to_tier, false);
					reqs[i].tier = to_tier;
					reqs[i].offset = (off_t) slot * psize;
					reqs[i].buf = pages[i];
					reqs[i].len = psize;
					reqs[i].path = path;
				}
				PG_TRY();
				{
					hi_io_batch(sh, reqs, cnt, true);
				}
				PG_CATCH();
				{
					for (i = 0; i < cnt; i++)
						hi_pt_unalloc_slot(sh, to_tier, HI_PTE_SLOT(new[i]));
					PG_RE_THROW();
				}
				PG_END_TRY();
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
			LWLockRelease(&sh->ckpt_lock);
		}
		PG_END_TRY();
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
