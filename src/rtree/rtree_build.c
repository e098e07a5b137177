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
 *
 * In a parallel build each process collects and sorts its own entries
 * (B is then shared by the participants) into runs in the build's shared
 * file set, and the leader merges them all.  With one worker the leaf
 * level, most of the load, is split: the slices are independent once the
 * x order is known, so the worker packs the first half of them, merged
 * from pieces of both processes' runs, into a range of page numbers
 * reserved for it (pack_leaves_split, rt_bulk_help).  The pages are those
 * of a serial build.
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
	HiPageBatch batch;
	HiIndex    *idx;
	bool		fixed;			/* numbers from next (a helper's range) */
	uint32		next;
} PageWriter;

static void
writer_init(PageWriter *w, HiIndex *idx)
{
	hi_page_batch_init(&w->batch, idx);
	w->idx = idx;
	w->fixed = false;
	w->next = 0;
}

/* A zeroed page buffer with a fresh page number */
static char *
writer_page(PageWriter *w, uint16 level, uint16 flags, uint32 *pageno)
{
	char	   *page = hi_page_batch_next(&w->batch);

	*pageno = w->fixed ? w->next++ : w->idx->sh->meta.npages++;
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
	bool		shared;			/* leaves' runs are in files' set */
	HiLoadShared files;
	HiLoadHelper helper;		/* start NULL: none */
};

/*
 * The leaf level split between the leader and a helper process: the
 * helper packs the first n entries of the x order, listed in the shared
 * file list (pieces of both processes' runs, hi_runsort_split), into
 * pages numbered from first_page, and writes the internal entries of
 * those pages to RT_SPLIT_UP.
 */
typedef struct RtSplitTask
{
	char		list[MAXPGPATH];
	uint64		n;
	uint64		per_slice;
	uint64		budget;
	uint32		cap;
	uint32		first_page;
} RtSplitTask;

#define RT_SPLIT_LIST	"hybrid_index_build_split"
#define RT_SPLIT_ARRAY	"hybrid_index_build_split_array"
#define RT_SPLIT_UP		"hybrid_index_build_up"

RtBuild *
rt_build_begin(Size budget)
{
	RtBuild    *b = palloc(sizeof(RtBuild));

	b->budget = budget;
	b->leaves = rt_spool_begin(sizeof(RtLeafEntry), 0, budget, 1024);
	b->nulls = hi_list_begin(sizeof(RtLeafEntry), RT_NULLS_MEM);
	b->shared = false;
	memset(&b->helper, 0, sizeof(b->helper));
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
 * A process of a parallel build: the leaf entries' runs go to the build's
 * shared file set (files), named from prefix, so that the other processes
 * read them where they are.
 */
void
rt_build_share(RtBuild *b, const HiLoadShared *files, const char *prefix)
{
	b->shared = true;
	b->files = *files;
	rt_spool_share(b->leaves, files, prefix);
}

/*
 * A parallel build's worker hands its entries to the leader's build in one
 * temporary file (b is consumed): the count of its NULL and EMPTY entries,
 * those entries, then the list of its boxes' runs, sorted by centre x
 * (rt_build_share made them files of the shared set).
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
	(void) rt_spool_export(b->leaves, file);
	rt_spool_end(b->leaves);
	pfree(b);
}

/* The leader's own entries are in: sort them while the workers export */
void
rt_build_presort(RtBuild *b)
{
	rt_spool_presort(b->leaves);
}

/*
 * The leader's side: a worker's file (rt_build_export), which it closes;
 * the worker's runs join the leaf spool's merge.  Returns the entries.
 */
Size
rt_build_import(RtBuild *b, BufFile *file, const char *name)
{
	uint64		nnulls;
	uint64		i;
	Size		n;
	RtLeafEntry e;

	if (!b->shared)
		elog(ERROR, "an R-tree build imports a worker's entries only with a shared file set");
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
	n = rt_spool_import(b->leaves, &b->files, file);
	BufFileClose(file);
	return (Size) nnulls + n;
}

/* A process that can pack part of the leaf level (rt_bulk_help) */
void
rt_build_set_helper(RtBuild *b, const HiLoadHelper *helper)
{
	b->helper = *helper;
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

/* STR's slice of a level of n entries: entries per slice, a multiple of cap */
static Size
slice_size(Size n, uint32 cap)
{
	Size		npages = (n + cap - 1) / cap;
	Size		nslices = (Size) ceil(sqrt((double) npages));

	return nslices > 0 ? ((npages + nslices - 1) / nslices) * cap : n;
}

/*
 * Pack the next n entries of size esz of in (sorted by x) into pages of
 * the given level, in vertical slices of per_slice entries each sorted by
 * y; the internal entry pointing at each new page goes to out, or to file
 * upfile.  done (if not NULL) counts the leaf entries packed (progress).
 */
static void
pack_slices(PageWriter *w, RtSpool *in, Size n, Size per_slice, Size esz, int level,
			uint32 cap, Size budget, RtSpool *out, BufFile *upfile, Size *done)
{
	Size		s;

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
				HiBox		tmp;
				const HiBox *b;

				rt_spool_get(slice, dst + k * esz);
				b = rt_entry_box(dst + k * esz, esz, &tmp);
				if (k == 0)
					up.box = *b;
				else
					hi_box_union(&up.box, b);
			}
			RT_PAGE_HDR(page)->nentries = cnt;
			if (upfile != NULL)
				BufFileWrite(upfile, &up, sizeof(up));
			else
				rt_spool_put(out, &up);
		}
		rt_spool_end(slice);
		if (level == 0 && done != NULL)
		{
			*done += slice_n;
			pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE, *done);
		}
	}
}

/*
 * Pack the n entries of size esz of spool in (sorted here, STR order) into
 * pages of the given level; returns the spool of the internal entries
 * pointing at the new pages.
 */
static RtSpool *
pack_level(PageWriter *w, RtSpool *in, Size esz, int level, uint32 cap,
		   Size budget, Size *done)
{
	Size		n = rt_spool_count(in);
	RtSpool    *out = rt_spool_begin(sizeof(RtInternalEntry), 0, budget / 4,
									 (n + cap - 1) / cap);

	rt_spool_sort(in);
	pack_slices(w, in, n, slice_size(n, cap), esz, level, cap, budget, out, NULL, done);
	return out;
}

/*
 * The leaf level with a helper process: of the x order of all entries,
 * the helper packs the first half of the slices (rt_bulk_help) into a
 * range of page numbers reserved for it while the leader packs the rest.
 * The helper's entries are pieces of the runs both processes sorted
 * (rt_spool_split finds where its half ends in each), merged by the helper
 * as the leader merges its own, so the packing, the page writes and their
 * WAL records are shared and no entry is copied for the other process
 * but the leader's unspilled ones in the helper's half.  Returns the
 * spool of the leaf pages' internal entries.
 */
static RtSpool *
pack_leaves_split(PageWriter *w, RtBuild *b, uint32 cap, Size *done)
{
	const HiLoadShared *f = &b->helper.shared;
	Size		n = rt_spool_count(b->leaves);
	Size		per_slice = slice_size(n, cap);
	Size		nslices = (n + per_slice - 1) / per_slice;
	Size		r = (nslices / 2) * per_slice;	/* the helper's entries */
	RtSpool    *out = rt_spool_begin(sizeof(RtInternalEntry), 0, b->budget / 4,
									 (n + cap - 1) / cap);

	if (r > 0)
	{
		RtSplitTask task;
		BufFile    *list = f->create(f->arg, RT_SPLIT_LIST);

		rt_spool_split(b->leaves, r, list, RT_SPLIT_ARRAY);
		BufFileClose(list);
		memset(&task, 0, sizeof(task));
		strlcpy(task.list, RT_SPLIT_LIST, sizeof(task.list));
		task.n = r;
		task.per_slice = per_slice;
		task.budget = b->budget;
		task.cap = cap;
		task.first_page = w->idx->sh->meta.npages;
		w->idx->sh->meta.npages += r / cap;
		b->helper.start(b->helper.arg, &task, sizeof(task));
		ereport(DEBUG1,
				(errmsg_internal("hybrid_index: a parallel worker packs %zu of the %zu entries of the leaf level of \"%s\"",
								 r, n, RelationGetRelationName(w->idx->rel))));
	}

	/* the leader's slices: the rest of the order */
	rt_spool_sort(b->leaves);
	pack_slices(w, b->leaves, n - r, per_slice, sizeof(RtLeafEntry), 0, cap, b->budget,
				out, NULL, done);

	if (r > 0)
	{
		Size		mine = rt_spool_count(out);
		BufFile    *up;
		RtInternalEntry e;
		size_t		got;

		b->helper.finish(b->helper.arg);
		up = f->open(f->arg, RT_SPLIT_UP);
		while ((got = BufFileRead(up, &e, sizeof(e))) == sizeof(e))
			rt_spool_put(out, &e);
		BufFileClose(up);
		if (got != 0 || rt_spool_count(out) - mine != r / cap)
			elog(ERROR, "the helper of an R-tree build packed %zu pages, not %zu",
				 rt_spool_count(out) - mine, r / cap);
		*done += r;
		pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE, *done);
	}
	return out;
}

/*
 * A helper process's part of a leaf level (pack_leaves_split's task, len
 * bytes): merge its pieces of the runs, pack its slices into its pages,
 * write them (the caller streams them into WAL), and write the internal
 * entries of the pages to RT_SPLIT_UP.  The index is new and invisible to
 * everyone else; its builder holds tree_lock and waits for this.
 */
void
rt_bulk_help(HiIndex *idx, const void *taskp, Size len, const HiLoadShared *f)
{
	RtSplitTask t;
	RtSpool    *m;
	BufFile    *list;
	BufFile    *up;
	PageWriter	w;

	if (len != sizeof(t))
		elog(ERROR, "an R-tree build's task has %zu bytes, not %zu", len, sizeof(t));
	memcpy(&t, taskp, sizeof(t));
	t.list[sizeof(t.list) - 1] = '\0';
	m = rt_spool_begin(sizeof(RtLeafEntry), 0, t.budget, 64);
	list = f->open(f->arg, t.list);
	if (rt_spool_import(m, f, list) != t.n)
		elog(ERROR, "the helper of an R-tree build did not get its %zu entries", (Size) t.n);
	BufFileClose(list);
	rt_spool_sort(m);
	up = f->create(f->arg, RT_SPLIT_UP);
	writer_init(&w, idx);
	w.fixed = true;
	w.next = t.first_page;
	pack_slices(&w, m, t.n, t.per_slice, sizeof(RtLeafEntry), 0, t.cap,
				t.budget, NULL, up, NULL);
	hi_page_batch_end(&w.batch);
	rt_spool_end(m);
	BufFileClose(up);
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
		hi_page_batch_end(&w.batch);
		rt_init_empty(idx);
		return;
	}

	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, 3);
	pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE, 0);
	/* a helper reads the leader's runs: they must be in the shared set */
	if (b->helper.start != NULL && b->shared)
		level = pack_leaves_split(&w, b, leafcap, &done);
	else
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
	hi_page_batch_end(&w.batch);
	meta->root = root.child;
	meta->height = height;
	meta->nentries = nleaf;
	pfree(b);
}
