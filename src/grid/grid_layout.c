/*
 * grid_layout.c
 *	  Layout check of Grid File pages read from storage (HiAmOps.page_layout
 *	  of lbgrid and hgrid): sub-directories, GFFM bucket/chain pages and the
 *	  NULL/EMPTY list.
 *
 * A page whose checksum matches was written by us, but a bug could still
 * have written nonsense, and the readers index arrays with the counts in a
 * page's header (gdv_init, gc_load, grid_subdir_refs): those counts are
 * bounded here, once per read from storage, so such a page is reported as
 * corrupted instead of being decoded past its end.  The full invariants
 * (coverage, scales, entries in their regions) are hybrid_index_check's.
 */
#include "postgres.h"

#include "grid/grid.h"
#include "grid/grid_int.h"
#include "rtree/rtree.h"

static const char *
dir_layout(const char *page, uint32 page_size)
{
	GridDirView v;
	const GridDirHdr *h = (const GridDirHdr *) GRID_DIR_FLAT(page);
	int			i;
	int			ncells;

	if (h->n[GRID_X] < 1 || h->n[GRID_Y] < 1 || h->nr < 1)
		return "its sub-directory has no cells or no regions";
	if (gd_flat_size(h->n[GRID_X], h->n[GRID_Y], h->nr) > page_size - GRID_DIR_OFF)
		return "its sub-directory is larger than the page";
	gdv_init(&v, (char *) GRID_DIR_FLAT(page));
	for (i = 0; i < h->nr; i++)
	{
		const GridRegion *r = &v.r[i];

		if (r->lo[GRID_X] > r->hi[GRID_X] || r->lo[GRID_Y] > r->hi[GRID_Y] ||
			r->hi[GRID_X] >= h->n[GRID_X] || r->hi[GRID_Y] >= h->n[GRID_Y])
			return "a region of its sub-directory lies outside the grid";
	}
	ncells = h->n[GRID_X] * h->n[GRID_Y];
	for (i = 0; i < ncells; i++)
		if (v.cells[i] >= h->nr)
			return "a cell of its sub-directory names no region";
	return NULL;
}

/* the kind bits of a page's flags: exactly one of them is set */
#define KIND_BITS	(HI_PAGE_FLAG_NULLS | GRID_PAGE_DIR | GRID_PAGE_BUCKET | GRID_PAGE_LOG)

const char *
grid_page_layout(const char *page, uint32 page_size)
{
	const HiPageHeader *h = (const HiPageHeader *) page;

	switch (h->flags & KIND_BITS)
	{
		case HI_PAGE_FLAG_NULLS:
			return rt_page_layout(page, page_size);
		case GRID_PAGE_DIR:
			return dir_layout(page, page_size);
		case GRID_PAGE_BUCKET:
			if (h->nentries > grid_chain_capacity(page_size))
				return "its entry count exceeds the page's capacity";
			return NULL;
		default:
			return "its page kind is unknown";
	}
}
