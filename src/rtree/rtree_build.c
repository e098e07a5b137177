/*
 * rtree_build.c
 *	  Bulk loading by Sort-Tile-Recursive packing (Leutenegger et al. 1997).
 *
 * Entries are sorted by the x of their centres and cut into vertical
 * slices of S*C entries (C entries per page, S = ceil(sqrt(pages))), each
 * slice sorted by y and packed into pages; the boxes of those pages are
 * packed the same way, level by level, up to a single root.  Pages are
 * written straight to the tier files in batches of hybrid_index.io_depth,
 * so a build of millions of rows costs two sorts per level and sequential
 * batched writes.  An index sharing the page cache (no buffer_size) leaves
 * clean copies there, as GiST's build leaves its pages in the OS cache:
 * the first inserts after a build would otherwise read every leaf they
 * touch from the device (2.1-2.3x GiST's time for one 5,000-row INSERT
 * into 2M points).  The upper levels, written last, stay longest.
 *
 * Memory: the build stays within maintenance_work_mem (B).  The leaf
 * spool (rtree_spool.c) gets B: an array of entries and its radix sort's
 * scratch (48 bytes per entry in all), beyond which sorted runs go to
 * temporary files and are merged as the level is read.  While a level is
 * packed, its spool is read in x order while the current slice (a spool
 * by y of B/4) and the next level's spool (B/4) fill, so a slice larger
 * than B/4 spills too and no level needs to fit in memory: external STR.
 * Upper levels are 1/C of the level below.  The runs' merge keeps ties in
 * arrival order, so the tree is the same whether the spools spilled or
 * not.  Fixed overhead beyond B: the page writer's io_depth pages, 16 kB
 * per run while runs are merged, and 64 kB of NULL entries before they go
 * to a temporary file.
 */
#include "postgres.h"

#include <math.h>

#include "commands/progress.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/buffile.h"

#include "base/hi_base.h"
#include "cache/page_cache.h"
#include "rtree/rtree.h"
#include "storage/storage.h"

/* leave room in packed pages so the first inserts do not all split */
#define RT_BUILD_FILL_PCT 75

typedef struct PageWriter
{
	HiIndex    *idx;
	char	   *mem;
	char	  **pages;
	uint32	   *pagenos;		/* of pages, for the cache's copies */
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
	w->pagenos = palloc(sizeof(uint32) * w->max);
	for (w->n = 0; w->n < w->max; w->n++)
		w->pages[w->n] = (char *) TYPEALIGN(HI_IO_ALIGN, w->mem) +
			(Size) w->n * w->idx->page_size;
	w->n = 0;
	w->written = 0;
}

static void
writer_flush(PageWriter *w)
{
	hi_store_write(w->idx->sh, w->pages, w->n);
	if (w->idx->sh->budget_frames == 0 && w->n > 0)
	{
		int			i;

		for (i = 0; i < w->n; i++)
			w->pagenos[i] = ((HiPageHeader *) w->pages[i])->pageno;
		hi_cache_put_clean(w->idx, w->pagenos, w->n, w->pages);
	}
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

/* NULL and EMPTY entries kept in memory before they go to a temporary file */
#define RT_NULLS_MEM		(64 * 1024)

struct RtBuild
{
	Size		budget;
	RtSpool    *leaves;
	HiSpillList *nulls;
};

RtBuild *
rt_build_begin(Size budget)
{
	RtBuild    *b = palloc(sizeof(RtBuild));

	b->budget = budget;
	b->leaves = rt_spool_begin(sizeof(RtLeafEntry), 0, budget, 1024);
	b->nulls = hi_list_begin(sizeof(RtLeafEntry), RT_NULLS_MEM);
	return b;
}

/* one entry of the heap scan */
void
rt_build_put(RtBuild *b, const RtLeafEntry *e)
{
	if (e->kind == HI_KEY_BOX)
		rt_spool_put(b->leaves, e);
	else
		hi_list_put(b->nulls, e);
}

/*
 * A parallel build's worker hands its entries to the leader's build in one
 * temporary file (b is consumed): the count of its NULL and EMPTY entries,
 * those entries, then its boxes sorted by centre x.  rt_build_import makes
 * the sorted part a run of the leader's leaf spool, so each worker sorts
 * its share of the leaf level's x order and the leader merges.
 */
void
rt_build_export(RtBuild *b, BufFile *file)
{
	uint64		nnulls = hi_list_count(b->nulls);
	RtLeafEntry e;

	BufFileWrite(file, &nnulls, sizeof(nnulls));
	hi_list_rewind(b->nulls);
	while (hi_list_next(b->nulls, &e))
		BufFileWrite(file, &e, sizeof(e));
	hi_list_end(b->nulls);
	(void) rt_spool_write_sorted(b->leaves, file);
	rt_spool_end(b->leaves);
	pfree(b);
}

/* The leader's own entries are in: sort them while the workers export */
void
rt_build_presort(RtBuild *b)
{
	rt_spool_presort(b->leaves);
}

/* The leader's side: b owns file from here on; returns the entries in it */
Size
rt_build_import(RtBuild *b, BufFile *file)
{
	int64		size = BufFileSize(file);
	uint64		nnulls;
	uint64		i;
	int64		rest;
	RtLeafEntry e;

	if (BufFileRead(file, &nnulls, sizeof(nnulls)) != sizeof(nnulls))
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not read the entries of a parallel worker: %m")));
	for (i = 0; i < nnulls; i++)
	{
		if (BufFileRead(file, &e, sizeof(e)) != sizeof(e))
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not read the entries of a parallel worker: %m")));
		hi_list_put(b->nulls, &e);
	}
	rest = size - (int64) sizeof(nnulls) - (int64) (nnulls * sizeof(e));
	if (rest < 0 || rest % sizeof(e) != 0)
		elog(ERROR, "the entries of a parallel worker of an R-tree build have a bad size");
	rt_spool_add_sorted(b->leaves, file, (Size) (rest / sizeof(e)));
	return (Size) nnulls + (Size) (rest / sizeof(e));
}

/* NULL and EMPTY entries go to the null list, in their own pages */
static void
write_nulls(PageWriter *w, HiSpillList *nulls)
{
	HiMeta	   *meta = &w->idx->sh->meta;
	char	   *null_page = NULL;
	RtLeafEntry e;

	hi_list_rewind(nulls);
	while (hi_list_next(nulls, &e))
	{
		if (null_page == NULL ||
			RT_PAGE_HDR(null_page)->nentries >= rt_leaf_capacity(w->idx->page_size))
		{
			uint32		pageno;

			/* link the full page to the next one before it can be written */
			if (null_page != NULL)
				rt_set_null_next(null_page, meta->npages);
			null_page = writer_page(w, 0, HI_PAGE_FLAG_NULLS, &pageno);
			if (meta->null_head == HI_INVALID_PAGE)
				meta->null_head = pageno;
			meta->null_tail = pageno;
		}
		{
			RtLeafEntry *d = &RT_LEAF(null_page)[RT_PAGE_HDR(null_page)->nentries++];

			memset(d, 0, sizeof(*d));
			d->tid = e.tid;
			d->kind = e.kind;
		}
		meta->nnulls++;
	}
}

/*
 * Pack the n entries of size esz of spool in (sorted here, STR order) into
 * pages of the given level; returns the spool of the internal entries
 * pointing at the new pages.  done counts the entries packed (progress).
 */
static RtSpool *
pack_level(PageWriter *w, RtSpool *in, Size esz, int level, uint32 cap,
		   Size budget, Size *done)
{
	Size		n = rt_spool_count(in);
	Size		npages = (n + cap - 1) / cap;
	Size		nslices = (Size) ceil(sqrt((double) npages));
	Size		per_slice = nslices > 0 ? ((npages + nslices - 1) / nslices) * cap : n;
	RtSpool    *out = rt_spool_begin(sizeof(RtInternalEntry), 0, budget / 4, npages);
	Size		s;

	rt_spool_sort(in);
	for (s = 0; s < n; s += per_slice)
	{
		Size		slice_n = Min(per_slice, n - s);
		RtSpool    *slice = rt_spool_begin(esz, 1, budget / 4, slice_n);
		Size		i;

		for (i = 0; i < slice_n; i++)
		{
			char		e[HI_SPILL_REC_MAX];

			rt_spool_get(in, e);
			rt_spool_put(slice, e);
		}
		rt_spool_sort(slice);
		for (i = 0; i < slice_n; i += cap)
		{
			Size		cnt = Min((Size) cap, slice_n - i);
			RtInternalEntry up;
			char	   *page = writer_page(w, level, 0, &up.child);
			char	   *dst = page + RT_HEADER_SIZE;
			Size		k;

			for (k = 0; k < cnt; k++)
			{
				const HiBox *b = (const HiBox *) (dst + k * esz);

				rt_spool_get(slice, dst + k * esz);
				if (k == 0)
					up.box = *b;
				else
					hi_box_union(&up.box, b);
			}
			RT_PAGE_HDR(page)->nentries = cnt;
			rt_spool_put(out, &up);
		}
		rt_spool_end(slice);
		if (level == 0)
		{
			*done += slice_n;
			pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE, *done);
		}
	}
	return out;
}

/*
 * Build the tree from the entries of the heap scan (b is consumed).  The
 * index is new and invisible to everyone else.
 */
void
rt_bulk_load(HiIndex *idx, RtBuild *b)
{
	HiMeta	   *meta = &idx->sh->meta;
	PageWriter	w;
	uint32		leafcap = Max(2, rt_leaf_capacity(idx->page_size) * RT_BUILD_FILL_PCT / 100);
	uint32		intcap = Max(2, rt_internal_capacity(idx->page_size) * RT_BUILD_FILL_PCT / 100);
	Size		nleaf = rt_spool_count(b->leaves);
	Size		done = 0;
	RtSpool    *level;
	RtInternalEntry root;
	int			height;

	writer_init(&w, idx);
	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, 2);
	meta->null_head = HI_INVALID_PAGE;
	write_nulls(&w, b->nulls);
	hi_list_end(b->nulls);

	if (nleaf == 0)
	{
		rt_spool_end(b->leaves);
		pfree(b);
		writer_flush(&w);
		rt_init_empty(idx);
		return;
	}

	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, 3);
	pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE, 0);
	level = pack_level(&w, b->leaves, sizeof(RtLeafEntry), 0, leafcap, b->budget, &done);
	rt_spool_end(b->leaves);
	height = 1;
	while (rt_spool_count(level) > 1)
	{
		RtSpool    *next = pack_level(&w, level, sizeof(RtInternalEntry), height,
									  intcap, b->budget, &done);

		rt_spool_end(level);
		level = next;
		height++;
	}
	rt_spool_sort(level);
	rt_spool_get(level, &root);
	rt_spool_end(level);
	writer_flush(&w);
	meta->root = root.child;
	meta->height = height;
	meta->nentries = nleaf;
	pfree(b);
}
