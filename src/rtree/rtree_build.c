/*
 * rtree_build.c
 *	  Bulk loading by Sort-Tile-Recursive packing (Leutenegger et al. 1997).
 *
 * Entries are sorted by the x of their centres and cut into vertical
 * slices of S*C entries (C entries per page, S = ceil(sqrt(pages))), each
 * slice sorted by y and packed into pages; the boxes of those pages are
 * packed the same way, level by level, up to a single root.  Pages are
 * written straight to the tier files in batches of hybrid_index.io_depth,
 * bypassing the cache, so a build of millions of rows costs two sorts per
 * level and sequential batched writes.
 */
#include "postgres.h"

#include <math.h>

#include "commands/progress.h"
#include "miscadmin.h"
#include "pgstat.h"

#include "rtree/rtree.h"

/* leave room in packed pages so the first inserts do not all split */
#define RT_BUILD_FILL_PCT 75

typedef struct PageWriter
{
	HiIndex    *idx;
	char	   *mem;
	char	  **pages;
	int			max;
	int			n;
	uint64		written;
} PageWriter;

static void
writer_init(PageWriter *w, HiIndex *idx)
{
	w->idx = idx;
	w->max = Max(hi_io_depth, 8);
	w->mem = palloc((Size) w->max * idx->page_size + HI_IO_ALIGN);
	w->pages = palloc(sizeof(char *) * w->max);
	for (w->n = 0; w->n < w->max; w->n++)
		w->pages[w->n] = (char *) TYPEALIGN(HI_IO_ALIGN, w->mem) +
			(Size) w->n * w->idx->page_size;
	w->n = 0;
	w->written = 0;
}

static void
writer_flush(PageWriter *w)
{
	hi_page_write_direct(w->idx->sh, w->pages, w->n);
	w->written += w->n;
	w->n = 0;
	CHECK_FOR_INTERRUPTS();
}

/* A zeroed page buffer with a fresh page number */
static char *
writer_page(PageWriter *w, uint16 level, uint16 flags, uint32 *pageno)
{
	char	   *page;

	if (w->n == w->max)
		writer_flush(w);
	page = w->pages[w->n++];
	memset(page, 0, w->idx->page_size);
	*pageno = w->idx->sh->meta.npages++;
	rt_page_init(page, *pageno, level, flags);
	return page;
}

static inline double
center_x(const HiBox *b)
{
	return ((double) b->xmin + (double) b->xmax) / 2;
}

static inline double
center_y(const HiBox *b)
{
	return ((double) b->ymin + (double) b->ymax) / 2;
}

/* entries sorted by box centre; box is the first member of every entry */
static int
cmp_x(const void *a, const void *b)
{
	double		ca = center_x((const HiBox *) a);
	double		cb = center_x((const HiBox *) b);

	return ca < cb ? -1 : (ca > cb ? 1 : 0);
}

static int
cmp_y(const void *a, const void *b)
{
	double		ca = center_y((const HiBox *) a);
	double		cb = center_y((const HiBox *) b);

	return ca < cb ? -1 : (ca > cb ? 1 : 0);
}

/*
 * Pack n entries of size esz (sorted in place, STR order) into pages of the
 * given level; returns the internal entries pointing at the new pages.
 */
static RtInternalEntry *
pack_level(PageWriter *w, char *entries, Size n, Size esz, int level,
		   uint32 cap, Size *nout)
{
	Size		npages = (n + cap - 1) / cap;
	Size		nslices = (Size) ceil(sqrt((double) npages));
	Size		per_slice = nslices > 0 ? ((npages + nslices - 1) / nslices) * cap : n;
	RtInternalEntry *out = palloc_extended(sizeof(RtInternalEntry) * Max(npages, 1),
										   MCXT_ALLOC_HUGE);
	Size		o = 0;
	Size		s;

	qsort(entries, n, esz, cmp_x);
	for (s = 0; s < n; s += per_slice)
	{
		Size		slice_n = Min(per_slice, n - s);
		Size		i;

		qsort(entries + s * esz, slice_n, esz, cmp_y);
		for (i = 0; i < slice_n; i += cap)
		{
			Size		cnt = Min((Size) cap, slice_n - i);
			uint32		pageno;
			char	   *page = writer_page(w, level, 0, &pageno);
			Size		k;

			memcpy(page + RT_HEADER_SIZE, entries + (s + i) * esz, cnt * esz);
			RT_PAGE_HDR(page)->nentries = cnt;
			out[o].child = pageno;
			for (k = 0; k < cnt; k++)
			{
				const HiBox *b = (const HiBox *) (entries + (s + i + k) * esz);

				if (k == 0)
					out[o].box = *b;
				else
					hi_box_union(&out[o].box, b);
			}
			o++;
		}
	}
	*nout = o;
	return out;
}

/*
 * Build the tree from all entries of the heap.  Caller holds nothing; the
 * index is new and invisible to everyone else.
 */
void
rt_bulk_load(HiIndex *idx, RtBuildItem *items, Size n)
{
	HiMeta	   *meta = &idx->sh->meta;
	PageWriter	w;
	RtLeafEntry *leaves;
	Size		nleaf = 0;
	Size		i;
	uint32		leafcap = Max(2, rt_leaf_capacity(idx->page_size) * RT_BUILD_FILL_PCT / 100);
	uint32		intcap = Max(2, rt_internal_capacity(idx->page_size) * RT_BUILD_FILL_PCT / 100);
	uint32		prev_null = HI_INVALID_PAGE;
	char	   *null_page = NULL;

	writer_init(&w, idx);
	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, 2);

	/* NULL and EMPTY entries go to the null list, in their own pages */
	leaves = palloc_extended(sizeof(RtLeafEntry) * Max(n, 1), MCXT_ALLOC_HUGE);
	for (i = 0; i < n; i++)
	{
		if (items[i].kind == HI_KEY_BOX)
		{
			RtLeafEntry *e = &leaves[nleaf++];

			e->box = items[i].box;
			e->tid = items[i].tid;
			e->kind = HI_KEY_BOX;
			e->pad = 0;
			continue;
		}
		if (null_page == NULL ||
			RT_PAGE_HDR(null_page)->nentries >= rt_leaf_capacity(idx->page_size))
		{
			uint32		pageno;

			/* link the full page to the next one before it can be written */
			if (null_page != NULL)
				rt_set_null_next(null_page, meta->npages);
			null_page = writer_page(&w, 0, HI_PAGE_FLAG_NULLS, &pageno);
			if (prev_null == HI_INVALID_PAGE)
				meta->null_head = pageno;
			prev_null = pageno;
			meta->null_tail = pageno;
		}
		{
			RtLeafEntry *e = &RT_LEAF(null_page)[RT_PAGE_HDR(null_page)->nentries++];

			memset(e, 0, sizeof(*e));
			e->tid = items[i].tid;
			e->kind = items[i].kind;
		}
		meta->nnulls++;
	}
	pfree(items);

	if (nleaf == 0)
	{
		writer_flush(&w);
		rt_init_empty(idx);
		return;
	}

	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, 3);
	{
		Size		nup;
		RtInternalEntry *up = pack_level(&w, (char *) leaves, nleaf,
										 sizeof(RtLeafEntry), 0, leafcap, &nup);
		int			level = 1;

		pfree(leaves);
		while (nup > 1)
		{
			Size		nnext;
			RtInternalEntry *next = pack_level(&w, (char *) up, nup,
											   sizeof(RtInternalEntry), level,
											   intcap, &nnext);

			pfree(up);
			up = next;
			nup = nnext;
			level++;
		}
		writer_flush(&w);
		meta->root = up[0].child;
		meta->height = level;
		meta->nentries = nleaf;
		pfree(up);
	}
}
