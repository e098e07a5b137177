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
 * (B is then shared by the participants), and with one worker the leaf
 * level, most of the load, is split: the slices are independent once the
 * x order is known, so the worker packs the first half of them into a
 * range of page numbers reserved for it (pack_leaves_split, rt_bulk_help).
 * The pages are those of a serial build.
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

/* A worker's sorted entries (rt_build_import), kept apart for a split */
typedef struct RtPart
{
	BufFile    *file;
	char		name[MAXPGPATH];
	int			fileno;			/* where its sorted leaves begin */
	off_t		offset;
	Size		n;
} RtPart;

struct RtBuild
{
	Size		budget;
	RtSpool    *leaves;
	HiSpillList *nulls;
	RtPart		part;			/* file NULL: none */
	HiLoadHelper helper;		/* start NULL: none */
};

/*
 * The leaf level split between the leader and a helper process: the
 * helper packs the first slices, from the first a_n entries of the
 * leader's sorted file and the first b_n of the worker's, into pages
 * numbered from first_page, and writes the internal entries of those pages
 * to RT_SPLIT_UP.
 */
typedef struct RtSplitTask
{
	char		a_name[MAXPGPATH];
	char		b_name[MAXPGPATH];
	int32		b_fileno;
	uint64		b_offset;
	uint64		a_n;
	uint64		b_n;
	uint64		per_slice;
	uint64		budget;
	uint32		cap;
	uint32		first_page;
} RtSplitTask;

#define RT_SPLIT_A	"hybrid_index_build_sorted"
#define RT_SPLIT_UP "hybrid_index_build_up"

RtBuild *
rt_build_begin(Size budget)
{
	RtBuild    *b = palloc(sizeof(RtBuild));

	b->budget = budget;
	b->leaves = rt_spool_begin(sizeof(RtLeafEntry), 0, budget, 1024);
	b->nulls = hi_list_begin(sizeof(RtLeafEntry), RT_NULLS_MEM);
	memset(&b->part, 0, sizeof(b->part));
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

/*
 * The leader's side: b owns file (name, in the build's shared file set)
 * from here on; returns the entries in it.  The first worker's sorted
 * leaves are kept apart: with a helper the leaf level may be split.
 */
Size
rt_build_import(RtBuild *b, BufFile *file, const char *name)
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
	if (b->part.file == NULL)
	{
		b->part.file = file;
		strlcpy(b->part.name, name, sizeof(b->part.name));
		BufFileTell(file, &b->part.fileno, &b->part.offset);
		b->part.n = (Size) (rest / sizeof(e));
	}
	else
		rt_spool_add_sorted(b->leaves, file, (Size) (rest / sizeof(e)));
	return (Size) nnulls + (Size) (rest / sizeof(e));
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
				const HiBox *b = (const HiBox *) (dst + k * esz);

				rt_spool_get(slice, dst + k * esz);
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

/* The centre key of the idx-th leaf entry from (fileno, offset) of file */
static uint64
key_at(BufFile *file, int fileno, off_t offset, Size idx)
{
	RtLeafEntry e;

	if (BufFileSeek(file, fileno, offset + (off_t) (idx * sizeof(e)), SEEK_SET) != 0 ||
		BufFileRead(file, &e, sizeof(e)) != sizeof(e))
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not read the sorted entries of a parallel build: %m")));
	return rt_spool_key(&e, 0);
}

/* n sorted leaf entries from entry idx of file (at fileno, offset) join m */
static void
add_part(RtSpool *m, BufFile *file, int fileno, off_t offset, Size idx, Size n)
{
	if (BufFileSeek(file, fileno, offset + (off_t) (idx * sizeof(RtLeafEntry)), SEEK_SET) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not seek in the sorted entries of a parallel build: %m")));
	rt_spool_add_sorted(m, file, n);
}

/*
 * The leaf level with a helper process: the leader writes its sorted
 * entries to a shared file; of the merge of that file and the worker's,
 * the helper packs the first half of the slices (rt_bulk_help) into a
 * range of page numbers reserved for it while the leader packs the rest.
 * Both read their entries sequentially from the two files, so the random
 * gather of the leader's sorted array happens once, and the packing, the
 * page writes and their WAL records are shared.  Returns the spool of the
 * leaf pages' internal entries.
 */
static RtSpool *
pack_leaves_split(PageWriter *w, RtBuild *b, uint32 cap, Size *done)
{
	const HiLoadShared *f = &b->helper.shared;
	RtPart	   *p = &b->part;
	Size		esz = sizeof(RtLeafEntry);
	BufFile    *a = f->create(f->arg, RT_SPLIT_A);
	Size		na = rt_spool_write_sorted(b->leaves, a);
	Size		nb = p->n;
	Size		n = na + nb;
	Size		per_slice = slice_size(n, cap);
	Size		nslices = (n + per_slice - 1) / per_slice;
	Size		r = (nslices / 2) * per_slice;	/* the helper's entries */
	Size		i = 0;
	RtSpool    *out = rt_spool_begin(sizeof(RtInternalEntry), 0, b->budget / 4,
									 (n + cap - 1) / cap);
	RtSpool    *m;

	BufFileExportFileSet(a);
	if (r > 0)
	{
		RtSplitTask task;
		Size		lo = r > nb ? r - nb : 0;
		Size		hi = Min(r, na);

		/*
		 * The first r of the merge (ties: a's first) are a[0, i) and
		 * b[0, r - i) for the smallest i where b[r - i - 1] comes before
		 * a[i].
		 */
		while (lo < hi)
		{
			Size		mid = lo + (hi - lo) / 2;
			Size		j = r - mid;

			if (j == 0 || mid == na ||
				key_at(p->file, p->fileno, p->offset, j - 1) < key_at(a, 0, 0, mid))
				hi = mid;
			else
				lo = mid + 1;
		}
		i = lo;
		memset(&task, 0, sizeof(task));
		strlcpy(task.a_name, RT_SPLIT_A, sizeof(task.a_name));
		strlcpy(task.b_name, p->name, sizeof(task.b_name));
		task.b_fileno = p->fileno;
		task.b_offset = p->offset;
		task.a_n = i;
		task.b_n = r - i;
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

	/* the leader's slices: the rest of both files, merged */
	m = rt_spool_begin(esz, 0, b->budget, 64);
	add_part(m, a, 0, 0, i, na - i);
	add_part(m, p->file, p->fileno, p->offset, r - i, nb - (r - i));
	p->file = NULL;				/* m closes it */
	rt_spool_sort(m);
	pack_slices(w, m, n - r, per_slice, esz, 0, cap, b->budget, out, NULL, done);
	rt_spool_end(m);

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
 * bytes): pack its slices into its pages, write them (the caller streams
 * them into WAL), and write the internal entries of the pages to
 * RT_SPLIT_UP.  The index is new and invisible to everyone else; its
 * builder holds tree_lock and waits for this.
 */
void
rt_bulk_help(HiIndex *idx, const void *taskp, Size len, const HiLoadShared *f)
{
	RtSplitTask t;
	RtSpool    *m;
	BufFile    *up;
	PageWriter	w;

	if (len != sizeof(t))
		elog(ERROR, "an R-tree build's task has %zu bytes, not %zu", len, sizeof(t));
	memcpy(&t, taskp, sizeof(t));
	m = rt_spool_begin(sizeof(RtLeafEntry), 0, t.budget, 64);
	add_part(m, f->open(f->arg, t.a_name), 0, 0, 0, t.a_n);
	add_part(m, f->open(f->arg, t.b_name), t.b_fileno, t.b_offset, 0, t.b_n);
	rt_spool_sort(m);
	up = f->create(f->arg, RT_SPLIT_UP);
	writer_init(&w, idx);
	w.fixed = true;
	w.next = t.first_page;
	pack_slices(&w, m, t.a_n + t.b_n, t.per_slice, sizeof(RtLeafEntry), 0, t.cap,
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
	Size		nleaf = rt_spool_count(b->leaves) + b->part.n;
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
		if (b->part.file != NULL)
			BufFileClose(b->part.file);
		rt_spool_end(b->leaves);
		pfree(b);
		hi_page_batch_end(&w.batch);
		rt_init_empty(idx);
		return;
	}

	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, 3);
	pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE, 0);
	if (b->part.file != NULL && b->helper.start != NULL)
		level = pack_leaves_split(&w, b, leafcap, &done);
	else
	{
		if (b->part.file != NULL)
			add_part(b->leaves, b->part.file, b->part.fileno, b->part.offset, 0, b->part.n);
		level = pack_level(&w, b->leaves, sizeof(RtLeafEntry), 0, leafcap, b->budget, &done);
	}
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
