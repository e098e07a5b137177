/*
 * rtree_check.c
 *	  Structural verification (hybrid_index_check) and the structural
 *	  snapshot (hybrid_index_inspect) of an R-tree.
 */
#include "postgres.h"

#include <sys/stat.h>

#include "lib/stringinfo.h"
#include "utils/json.h"
#include "miscadmin.h"

#include "payload/payload.h"
#include "rtree/rtree.h"
#include "storage/storage.h"
#include "log/redo_log.h"
#include "core/hi_core.h"
#include "policy/placement.h"

#define CHECK_FAIL(...) \
	ereport(ERROR, (errcode(ERRCODE_INDEX_CORRUPTED), \
					errmsg("index \"%s\" is corrupted", hi_index_name(idx)), \
					errdetail(__VA_ARGS__)))

static void
mark_seen(HiIndex *idx, uint8 *seen, uint32 pageno)
{
	if (pageno >= idx->sh->meta.npages)
		CHECK_FAIL("Page %u is referenced but only %u pages exist.", pageno,
				   idx->sh->meta.npages);
	if (seen[pageno])
		CHECK_FAIL("Page %u is referenced twice.", pageno);
	seen[pageno] = 1;
}

/*
 * Every page reachable exactly once, levels consistent, every box encloses
 * its child's entries, entry counts match, null list well formed, page
 * table consistent.  Raises an error naming the first violation.
 */
void
rt_check(HiIndex *idx)
{
	HiIndexShared *sh = idx->sh;
	HiMeta	   *meta = &sh->meta;
	uint8	   *seen;
	uint32	   *cur;
	HiBox	   *curbox;
	Size		ncur = 1;
	int			level;
	uint64		leaf_entries = 0;
	uint64		null_entries = 0;
	uint32		pageno;
	uint32		npages_seen = 0;

	LWLockAcquire(&sh->tree_lock, LW_SHARED);
	seen = palloc0(Max(meta->npages, 1));
	cur = palloc(sizeof(uint32));
	curbox = palloc(sizeof(HiBox));
	cur[0] = meta->root;
	mark_seen(idx, seen, meta->root);

	for (level = meta->height - 1; level >= 0; level--)
	{
		uint32	   *next = NULL;
		HiBox	   *nextbox = NULL;
		Size		nnext = 0;
		Size		i;

		if (level > 0)
		{
			next = palloc_extended(sizeof(uint32) * ncur * rt_internal_capacity(idx->page_size),
								   MCXT_ALLOC_HUGE);
			nextbox = palloc_extended(sizeof(HiBox) * ncur * rt_internal_capacity(idx->page_size),
									  MCXT_ALLOC_HUGE);
		}
		for (i = 0; i < ncur; i++)
		{
			HiFrame		f = rt_read(idx, cur[i]);
			char	   *page = rt_data(idx, f);
			HiPageHeader *h = RT_PAGE_HDR(page);
			HiBox		pbox;
			int			k;

			npages_seen++;
			if (h->level != level)
				CHECK_FAIL("Page %u has level %u, expected %d.", cur[i], h->level, level);
			if (h->flags & HI_PAGE_FLAG_NULLS)
				CHECK_FAIL("Page %u of the null list is linked into the tree.", cur[i]);
			if (h->nentries > (level > 0 ? rt_internal_capacity(idx->page_size) :
							   rt_leaf_capacity(idx->page_size)))
				CHECK_FAIL("Page %u holds %u entries, more than fit.", cur[i], h->nentries);
			if (level > 0 && h->nentries == 0)
				CHECK_FAIL("Internal page %u is empty.", cur[i]);
			if (cur[i] != meta->root && h->nentries > 0)
			{
				rt_page_box(page, &pbox);
				if (!(curbox[i].xmin <= pbox.xmin && curbox[i].ymin <= pbox.ymin &&
					  curbox[i].xmax >= pbox.xmax && curbox[i].ymax >= pbox.ymax))
					CHECK_FAIL("The parent's box of page %u does not enclose its entries.",
							   cur[i]);
			}
			if (level > 0)
			{
				for (k = 0; k < h->nentries; k++)
				{
					mark_seen(idx, seen, RT_INTERNAL(page)[k].child);
					nextbox[nnext] = RT_INTERNAL(page)[k].box;
					next[nnext++] = RT_INTERNAL(page)[k].child;
				}
			}
			else
			{
				for (k = 0; k < h->nentries; k++)
					if (RT_LEAF(page)[k].kind != HI_KEY_BOX)
						CHECK_FAIL("Leaf page %u holds a NULL or EMPTY entry.", cur[i]);
				leaf_entries += h->nentries;
			}
			rt_release(idx, f);
			CHECK_FOR_INTERRUPTS();
		}
		pfree(cur);
		pfree(curbox);
		cur = next;
		curbox = nextbox;
		ncur = nnext;
	}
	if (leaf_entries != meta->nentries)
		CHECK_FAIL("The leaves hold %llu entries, the metadata says %llu.",
				   (unsigned long long) leaf_entries,
				   (unsigned long long) meta->nentries);

	pageno = meta->null_head;
	while (pageno != HI_INVALID_PAGE)
	{
		HiFrame		f;
		char	   *page;
		int			k;

		mark_seen(idx, seen, pageno);
		f = rt_read(idx, pageno);
		page = rt_data(idx, f);
		npages_seen++;
		if (!(RT_PAGE_HDR(page)->flags & HI_PAGE_FLAG_NULLS))
			CHECK_FAIL("Page %u in the null list is not a null-list page.", pageno);
		for (k = 0; k < RT_PAGE_HDR(page)->nentries; k++)
			if (RT_LEAF(page)[k].kind == HI_KEY_BOX)
				CHECK_FAIL("Null-list page %u holds an entry with a box.", pageno);
		null_entries += RT_PAGE_HDR(page)->nentries;
		if (rt_null_next(page) == HI_INVALID_PAGE && pageno != meta->null_tail)
			CHECK_FAIL("The null list ends at page %u, not at its tail %u.", pageno,
					   meta->null_tail);
		pageno = rt_null_next(page);
		rt_release(idx, f);
	}
	if (null_entries != meta->nnulls)
		CHECK_FAIL("The null list holds %llu entries, the metadata says %llu.",
				   (unsigned long long) null_entries,
				   (unsigned long long) meta->nnulls);
	/* the INCLUDE rows' pages (payload/) */
	(void) pl_check(idx);
	npages_seen += pl_pages(idx);
	if (npages_seen != meta->npages)
		CHECK_FAIL("%u of %u pages are reachable.", npages_seen, meta->npages);

	hi_pt_check(sh);
	LWLockRelease(&sh->tree_lock);
	pfree(seen);
}

static void
json_file(StringInfo buf, const char *tier, const char *path, bool *first)
{
	struct stat st;

	if (!*first)
		appendStringInfoChar(buf, ',');
	*first = false;
	appendStringInfo(buf, "{\"tier\": \"%s\", \"path\": ", tier);
	escape_json(buf, path);
	appendStringInfo(buf, ", \"bytes\": %lld}",
					 stat(path, &st) == 0 ? (long long) st.st_size : -1LL);
}

/* The structure as JSON text: height, levels with nodes per tier, files */
char *
rt_inspect_json(HiIndex *idx)
{
	HiIndexShared *sh = idx->sh;
	HiMeta	   *meta = &sh->meta;
	StringInfoData buf;
	uint32	   *cur;
	Size		ncur = 1;
	int			level;
	bool		first = true;
	int			t;

	initStringInfo(&buf);
	LWLockAcquire(&sh->tree_lock, LW_SHARED);
	appendStringInfo(&buf,
					 "{\"am\": \"%s\", \"page_size\": %u, \"entry_format\": \"%s\", "
					 "\"include_order\": \"%s\", \"placement\": \"%s\", "
					 "\"height\": %u, \"entries\": %llu, \"null_entries\": %llu, "
					 "\"pages\": %u, \"checkpoints\": %llu, \"log_bytes\": %llu, "
					 "\"cache_frames\": %u, \"cache_budget_frames\": %d, \"levels\": [",
					 hi_am_ops_by_kind(meta->am) ? hi_am_ops_by_kind(meta->am)->name : "?",
					 meta->page_size, HI_ENTRY_FORMAT_NAME(meta->version),
					 HI_INCLUDE_ORDER_NAME(meta), hi_place_policy(sh)->name,
					 meta->height, (unsigned long long) meta->nentries,
					 (unsigned long long) meta->nnulls, meta->npages,
					 (unsigned long long) pg_atomic_read_u64(&sh->checkpoints),
					 (unsigned long long) hi_log_size(sh),
					 pg_atomic_read_u32(&sh->nframes), sh->budget_frames);

	cur = palloc(sizeof(uint32));
	cur[0] = meta->root;
	for (level = meta->height - 1; level >= 0; level--)
	{
		uint32	   *next = NULL;
		Size		nnext = 0;
		Size		i;
		uint64		tiers[HI_NUM_TIERS] = {0, 0};
		uint64		entries = 0;
		uint32		cap = level > 0 ? rt_internal_capacity(idx->page_size) :
			rt_leaf_capacity(idx->page_size);

		if (level > 0)
			next = palloc_extended(sizeof(uint32) * ncur * cap, MCXT_ALLOC_HUGE);
		for (i = 0; i < ncur; i++)
		{
			HiFrame		f = rt_read(idx, cur[i]);
			char	   *page = rt_data(idx, f);
			uint32		pte = hi_pt_get(sh, cur[i]);
			int			k;

			/* a page not written yet goes where the policy will put it */
			tiers[HI_PTE_MAPPED(pte) ? HI_PTE_TIER(pte) :
				  hi_place_write_tier(sh, idx->slotno, page, 0)]++;
			entries += RT_PAGE_HDR(page)->nentries;
			if (level > 0)
				for (k = 0; k < RT_PAGE_HDR(page)->nentries; k++)
					next[nnext++] = RT_INTERNAL(page)[k].child;
			rt_release(idx, f);
		}
		appendStringInfo(&buf,
						 "%s{\"level\": %d, \"nodes\": %zu, \"flash\": %llu, \"optane\": %llu, "
						 "\"entries\": %llu, \"fill\": %.4f}",
						 level == (int) meta->height - 1 ? "" : ", ",
						 level, ncur, (unsigned long long) tiers[HI_TIER_FLASH],
						 (unsigned long long) tiers[HI_TIER_OPTANE],
						 (unsigned long long) entries,
						 ncur > 0 ? (double) entries / ((double) ncur * cap) : 0.0);
		pfree(cur);
		cur = next;
		ncur = nnext;
	}
	appendStringInfoString(&buf, "], \"files\": [");
	for (t = 0; t < HI_NUM_TIERS; t++)
		json_file(&buf, hi_tier_suffix(t), hi_slot_path(sh, t), &first);
	json_file(&buf, "map", hi_file_path(sh->spcoid[HI_TIER_FLASH], sh->dboid,
										sh->spcoid[HI_TIER_FLASH], sh->relnumber, "map"),
			  &first);
	json_file(&buf, "log", hi_file_path(sh->spcoid[HI_TIER_FLASH], sh->dboid,
										sh->spcoid[HI_TIER_FLASH], sh->relnumber, "log"),
			  &first);
	appendStringInfo(&buf, "], \"placement_state\": %s}", hi_place_json(sh));
	LWLockRelease(&sh->tree_lock);
	return buf.data;
}

/* Every page of the tree, top down (hybrid_index_pages) */
HiPageInfo *
rt_pages(HiIndex *idx, Size *nout)
{
	HiIndexShared *sh = idx->sh;
	HiPageInfo *out;
	Size		o = 0;
	uint32	   *cur;
	Size		ncur = 1;
	int			level;

	LWLockAcquire(&sh->tree_lock, LW_SHARED);
	out = palloc_extended(sizeof(HiPageInfo) * Max(sh->meta.npages, 1), MCXT_ALLOC_HUGE);
	cur = palloc(sizeof(uint32));
	cur[0] = sh->meta.root;
	/* a level without pages ends the walk (a wrong height must not spin) */
	for (level = sh->meta.height - 1; level >= 0 && ncur > 0; level--)
	{
		uint32	   *next = NULL;
		Size		nnext = 0;
		Size		i;

		CHECK_FOR_INTERRUPTS();

		if (level > 0)
			next = palloc_extended(sizeof(uint32) * ncur * rt_internal_capacity(idx->page_size),
								   MCXT_ALLOC_HUGE);
		for (i = 0; i < ncur && o < sh->meta.npages; i++)
		{
			HiFrame		f = rt_read(idx, cur[i]);
			char	   *page = rt_data(idx, f);
			uint32		pte = hi_pt_get(sh, cur[i]);
			int			k;

			out[o].pageno = cur[i];
			out[o].level = level;
			out[o].tier = HI_PTE_MAPPED(pte) ? HI_PTE_TIER(pte) : -1;
			out[o].nentries = RT_PAGE_HDR(page)->nentries;
			rt_page_box(page, &out[o].box);
			o++;
			if (level > 0)
				for (k = 0; k < RT_PAGE_HDR(page)->nentries; k++)
					next[nnext++] = RT_INTERNAL(page)[k].child;
			rt_release(idx, f);
		}
		pfree(cur);
		cur = next;
		ncur = nnext;
	}
	LWLockRelease(&sh->tree_lock);
	*nout = o;
	return out;
}
