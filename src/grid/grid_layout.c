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

/*
 * A flat directory (a sub-directory page's, or the root's) whose counts fit
 * in room bytes: regions inside the grid, every cell naming a region that
 * covers it (searches locate cells, then read that region's bucket: a cell
 * naming another region would hide rows), the header's reach at least
 * every region's (searches grow windows by it).  Coverage and scales are
 * gd_check's.  Returns what is wrong, or NULL.
 */
const char *
grid_dir_layout(const char *flat, Size room)
{
	GridDirView v;
	const GridDirHdr *h = (const GridDirHdr *) flat;
	int			i;
	int			x;

	if (h->n[GRID_X] < 1 || h->n[GRID_Y] < 1 || h->nr < 1)
		return "its directory has no cells or no regions";
	if (gd_flat_size(h->n[GRID_X], h->n[GRID_Y], h->nr) > room)
		return "its directory is larger than the page";
	gdv_init(&v, (char *) flat);
	for (i = 0; i < h->nr; i++)
	{
		const GridRegion *r = &v.r[i];
		int			k;

		if (r->lo[GRID_X] > r->hi[GRID_X] || r->lo[GRID_Y] > r->hi[GRID_Y] ||
			r->hi[GRID_X] >= h->n[GRID_X] || r->hi[GRID_Y] >= h->n[GRID_Y])
			return "a region of its directory lies outside the grid";
		for (k = 0; k < 2; k++)
			if (!(h->reach[k] >= r->reach[k]))
				return "its directory's reach is smaller than a region's";
	}
	for (x = 0; x < h->n[GRID_X]; x++)
	{
		int			y;

		for (y = 0; y < h->n[GRID_Y]; y++)
		{
			uint16		c = v.cells[x * h->n[GRID_Y] + y];
			const GridRegion *r;

			if (c >= h->nr)
				return "a cell of its directory names no region";
			r = &v.r[c];
			if (x < r->lo[GRID_X] || x > r->hi[GRID_X] ||
				y < r->lo[GRID_Y] || y > r->hi[GRID_Y])
				return "a cell of its directory names a region that does not cover it";
		}
	}
	return NULL;
}

/* the kind bits of a page's flags: exactly one of them is set */
#define KIND_BITS	(HI_PAGE_FLAG_NULLS | GRID_PAGE_DIR | GRID_PAGE_BUCKET | GRID_PAGE_LOG | \
					 HI_PAGE_FLAG_PAYLOAD)

const char *
grid_page_layout(const char *page, uint32 page_size)
{
	const HiPageHeader *h = (const HiPageHeader *) page;

	switch (h->flags & KIND_BITS)
	{
		case HI_PAGE_FLAG_NULLS:
		case HI_PAGE_FLAG_PAYLOAD:
			return rt_page_layout(page, page_size);
		case GRID_PAGE_DIR:
			return grid_dir_layout(GRID_DIR_FLAT(page), page_size - GRID_DIR_OFF);
		case GRID_PAGE_BUCKET:
			if (h->nentries > grid_chain_capacity(page_size))
				return "its entry count exceeds the page's capacity";
			return NULL;
		default:
			return "its page kind is unknown";
	}
}
