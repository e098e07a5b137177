/*
 * rtree_page.c
 *	  R-tree page helpers and the consistency tests of scan predicates.
 */
#include "postgres.h"

#include "payload/payload.h"
#include "rtree/rtree.h"

/* deeper than any tree of 2^32 pages with at least two entries per node */
#define RT_MAX_LEVEL	64

/*
 * HiAmOps.page_layout of R-tree pages (hyrtree, efind; the NULL/EMPTY list
 * pages of every AM): entry counts within the page, sane levels.
 */
const char *
rt_page_layout(const char *page, uint32 page_size)
{
	const HiPageHeader *h = RT_PAGE_HDR(page);

	if (h->flags & HI_PAGE_FLAG_PAYLOAD)
		return pl_page_layout(page, page_size);
	if (h->flags & HI_PAGE_FLAG_NULLS)
	{
		if (h->level != 0)
			return "a NULL-list page has a level above 0";
		if (h->nentries > rt_leaf_capacity(page_size))
			return "its entry count exceeds the page's capacity";
		return NULL;
	}
	if (h->level >= RT_MAX_LEVEL)
		return "its level is out of range";
	if (h->nentries > (h->level == 0 ? rt_leaf_capacity(page_size) :
					   rt_internal_capacity(page_size)))
		return "its entry count exceeds the page's capacity";
	return NULL;
}

void
rt_page_init(char *page, uint32 pageno, uint16 level, uint16 flags)
{
	HiPageHeader *h = RT_PAGE_HDR(page);

	h->checksum = 0;
	h->pageno = pageno;
	h->level = level;
	h->flags = flags;
	h->nentries = 0;
	h->reserved = 0;
	h->link = HI_INVALID_PAGE;
}

uint32
rt_null_next(const char *page)
{
	return RT_PAGE_HDR(page)->link;
}

void
rt_set_null_next(char *page, uint32 next)
{
	RT_PAGE_HDR(page)->link = next;
}

/* Box enclosing every entry of a page */
void
rt_page_box(const char *page, HiBox *box)
{
	const HiPageHeader *h = RT_PAGE_HDR(page);
	int			i;

	for (i = 0; i < h->nentries; i++)
	{
		HiBox		tmp;
		const HiBox *b = h->level > 0 ? &RT_INTERNAL(page)[i].box :
		rt_leaf_box(&RT_LEAF(page)[i], &tmp);

		if (i == 0)
			*box = *b;
		else
			hi_box_union(box, b);
	}
	if (h->nentries == 0)
		box->xmin = box->ymin = box->xmax = box->ymax = 0;
}
