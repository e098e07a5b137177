/*
 * rtree_page.c
 *	  R-tree page helpers and the consistency tests of scan predicates.
 */
#include "postgres.h"

#include "rtree/rtree.h"

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
		const HiBox *b = h->level > 0 ? &RT_INTERNAL(page)[i].box :
		&RT_LEAF(page)[i].box;

		if (i == 0)
			*box = *b;
		else
			hi_box_union(box, b);
	}
	if (h->nentries == 0)
		box->xmin = box->ymin = box->xmax = box->ymax = 0;
}

/*
 * Can a subtree whose entries lie inside box hold an entry that satisfies
 * every qual?
 */
bool
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
				if (!hi_box_overlaps(box, q))
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
bool
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
				ok = hi_box_overlaps(box, q);
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
