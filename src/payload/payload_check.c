/*
 * payload_check.c
 *	  hybrid_index_check's part for the INCLUDE rows' tree (payload.h):
 *	  every key in its parent's range and in order, levels one apart, rows
 *	  inside their pages; the page count the AMs' checks add up, and the
 *	  layout check of a page read from disk.
 */
#include "postgres.h"

#include "miscadmin.h"

#include "payload/payload_page.h"

#define CHECK_FAIL(...) \
	ereport(ERROR, \
			(errcode(ERRCODE_INDEX_CORRUPTED), \
			 errmsg("index \"%s\" is corrupted", hi_index_name(idx)), \
			 errdetail(__VA_ARGS__)))

/*
 * Check a subtree: every key within [lo, hi) (NULL: unbounded), keys
 * sorted, levels one apart, every page keyed as the tree is; counts its
 * pages and rows.
 */
static void
check_page(HiIndex *idx, uint32 pageno, int level, const PlKey *lo,
		   const PlKey *hi, uint32 *pages, Size *rows)
{
	HiFrame		f = pl_read(idx, pageno);
	char	   *copy = palloc(idx->page_size);
	HiPageHeader *h = (HiPageHeader *) copy;
	int			i;

	memcpy(copy, pl_page(f), idx->page_size);
	hi_frame_release(f);
	(*pages)++;
	if (!(h->flags & HI_PAGE_FLAG_PAYLOAD) || (level >= 0 && h->level != level))
		CHECK_FAIL("Page %u of the INCLUDE rows is not the page its parent expects.", pageno);
	if (h->level == 0)
	{
		if (PL_DATA_LO(copy) > idx->page_size ||
			PL_HDR + h->nentries * slot_size(page_z(copy)) > PL_DATA_LO(copy))
			CHECK_FAIL("Leaf page %u of the INCLUDE rows has overlapping slots and rows.", pageno);
		for (i = 0; i < h->nentries; i++)
		{
			PlKey		k,
						prev;
			uint16		off = slot_off(copy, i);

			slot_key(copy, i, &k);
			if (i > 0)
				slot_key(copy, i - 1, &prev);
			if ((lo && pl_key_cmp(&k, lo) < 0) ||
				(hi && pl_key_cmp(&k, hi) >= 0) ||
				(i > 0 && pl_key_cmp(&prev, &k) >= 0))
				CHECK_FAIL("Leaf page %u of the INCLUDE rows holds TID (%u,%u) out of order.",
						   pageno, ItemPointerGetBlockNumberNoCheck(&k.tid),
						   ItemPointerGetOffsetNumberNoCheck(&k.tid));
			if (off < PL_DATA_LO(copy) || off + row_len(copy + off) > idx->page_size)
				CHECK_FAIL("Leaf page %u of the INCLUDE rows has a row outside the page.", pageno);
		}
		*rows += h->nentries;
	}
	else
	{
		if (h->nentries < 1)
			CHECK_FAIL("Inner page %u of the INCLUDE rows is empty.", pageno);
		for (i = 0; i < h->nentries; i++)
		{
			PlKey		k,
						next,
						prev;
			uint32		child = down_child(copy, i);

			down_key(copy, i, &k);
			if (i + 1 < h->nentries)
				down_key(copy, i + 1, &next);
			if (i > 1)
			{
				down_key(copy, i - 1, &prev);
				if (pl_key_cmp(&prev, &k) >= 0)
					CHECK_FAIL("Inner page %u of the INCLUDE rows has keys out of order.", pageno);
			}
			if (child >= idx->sh->meta.npages)
				CHECK_FAIL("Inner page %u of the INCLUDE rows points to page %u, past the end.",
						   pageno, child);
			check_page(idx, child, h->level - 1, i == 0 ? lo : &k,
					   i + 1 < h->nentries ? &next : hi, pages, rows);
		}
	}
	pfree(copy);
	CHECK_FOR_INTERRUPTS();
}

const char *
pl_page_layout(const char *page, uint32 page_size)
{
	const HiPageHeader *h = PL_HDR_OF(page);

	if (h->level >= 32)
		return "its level is out of range";
	if (h->level == 0)
	{
		if (h->reserved > page_size ||
			PL_HDR + (Size) h->nentries * slot_size(page_z(page)) > h->reserved)
			return "its slots and rows overlap";
	}
	else if (h->nentries > down_capacity(page_size, page_z(page)))
		return "its entry count exceeds the page's capacity";
	return NULL;
}

/* hybrid_index_check's part: returns the number of rows */
Size
pl_check(HiIndex *idx)
{
	uint32		pages = 0;
	Size		rows = 0;

	if (!pl_enabled(idx))
		return 0;
	check_page(idx, idx->sh->meta.payload_root, -1, NULL, NULL, &pages, &rows);
	return rows;
}

/* how many pages the tree has (the AMs' checks count every page) */
uint32
pl_pages(HiIndex *idx)
{
	uint32		pages = 0;
	uint32		level_first;

	if (!pl_enabled(idx))
		return 0;
	level_first = idx->sh->meta.payload_root;
	while (level_first != HI_INVALID_PAGE)
	{
		uint32		pageno = level_first;
		uint32		down = HI_INVALID_PAGE;

		while (pageno != HI_INVALID_PAGE)
		{
			HiFrame		f = pl_read(idx, pageno);
			char	   *page = pl_page(f);

			if (pageno == level_first && PL_HDR_OF(page)->level > 0)
				down = down_child(page, 0);
			pages++;
			pageno = PL_HDR_OF(page)->link;
			hi_frame_release(f);
		}
		level_first = down;
	}
	return pages;
}
