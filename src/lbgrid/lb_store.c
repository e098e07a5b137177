/*
 * lb_store.c
 *	  LB-Grid's bucket store: reading a logical bucket from its log-buckets
 *	  (Algorithm 1) and changing it by appending log records (Algorithms 2
 *	  and 3).
 *
 * Reading buckets: the log-buckets on their lists are fetched with group
 * reads through the bucket buffer (several buckets at once share the
 * reads of common log-buckets), their records of those buckets newer than
 * each bucket's "since" are collected, and redundant and deleted records
 * are resolved: per (TID, box) the inserts and deletes cancel in time
 * order; what remains is the bucket's content.
 *
 * Changing buckets: an insert or delete is one record appended to the
 * working log-bucket; a split, merge or compaction rewrites a bucket as a
 * whole (replace): its old records stop counting and its live entries are
 * appended afresh.
 */
#include "postgres.h"

#include "miscadmin.h"

#include "grid/grid.h"
#include "lbgrid/lbgrid.h"

int
lb_capacity(uint32 page_size)
{
	return (int) ((page_size - LB_HDR_SIZE) / sizeof(LbRecord));
}

/*
 * HiAmOps.page_layout of lbgrid: log-buckets here (lb_load walks nentries
 * records), every other page kind as in the Grid File core.
 */
const char *
lbgrid_page_layout(const char *page, uint32 page_size)
{
	const HiPageHeader *h = (const HiPageHeader *) page;

	if ((h->flags & (HI_PAGE_FLAG_NULLS | GRID_PAGE_DIR | GRID_PAGE_BUCKET | GRID_PAGE_LOG)) ==
		GRID_PAGE_LOG)
	{
		if (h->nentries > lb_capacity(page_size))
			return "its record count exceeds the log-bucket's capacity";
		return NULL;
	}
	return grid_page_layout(page, page_size);
}

/*
 * A log-bucket's records stopped counting: cnt fewer live ones.  It is
 * freed when none are left (unless records still go there), else it may
 * become a compaction candidate.
 */
void
lb_release_page(Grid *g, uint32 page, uint32 cnt)
{
	LbShared   *ls = lb_shared(g);
	LbPage	   *lp = lb_page(g, page);

	Assert(lp->nref >= cnt);
	lp->nref -= cnt;
	if (lp->nref == 0 && page != ls->working)
	{
		lp->flags = 0;
		lp->nrec = 0;
		grid_page_free(g, GRID_BUF_BUCKET, page);
		ls->freed++;
	}
	else
		lb_maybe_queue(g, page);
}

/* Seal the working log-bucket and start a new one */
static void
new_working(Grid *g)
{
	LbShared   *ls = lb_shared(g);
	uint32		old = ls->working;
	uint32		p;
	int			f;
	LbPage	   *lp;

	p = grid_page_alloc(g);
	f = gbuf_new(g, GRID_BUF_BUCKET, p, 0, GRID_PAGE_LOG);
	gbuf_unpin(g, GRID_BUF_BUCKET, f);
	lp = lb_page(g, p);
	lp->nref = 0;
	lp->nrec = 0;
	lp->flags = LB_PAGE_LOG;
	ls = lb_shared(g);
	ls->working = p;
	if (old != HI_INVALID_PAGE)
	{
		lp = lb_page(g, old);
		lp->flags |= LB_PAGE_SEALED;
		ls->sealed++;
		lb_release_page(g, old, 0);
	}
}

/* Append records of bucket b to the working log-bucket(s) */
static void
append(Grid *g, uint32 b, uint8 op, const GridEntry *e, int n)
{
	int			cap = lb_capacity(g->gs->page_size);
	int			done = 0;

	while (done < n)
	{
		LbShared   *ls = lb_shared(g);
		uint32		w = ls->working;
		int			f;
		char	   *page;
		HiPageHeader *h;
		int			take;
		int			i;
		LbPage	   *lp;
		LbBtt	   *bt;

		if (w == HI_INVALID_PAGE || lb_page(g, w)->nrec >= cap)
		{
			new_working(g);
			continue;
		}
		gbuf_pin(g, GRID_BUF_BUCKET, &w, 1, &f);
		page = gbuf_page(g, GRID_BUF_BUCKET, f);
		h = (HiPageHeader *) page;
		take = Min(n - done, cap - h->nentries);
		for (i = 0; i < take; i++)
		{
			LbRecord   *r = &LB_RECORDS(page)[h->nentries++];

			memset(r, 0, sizeof(LbRecord));
			r->bucket = b;
			r->op = op;
			r->kind = e[done + i].kind;
			r->ts = ls->ts++;
			r->box = e[done + i].box;
			r->tid = e[done + i].tid;
		}
		gbuf_dirty(g, GRID_BUF_BUCKET, f);
		gbuf_unpin(g, GRID_BUF_BUCKET, f);
		lp = lb_page(g, w);
		lp->nrec += take;
		lp->nref += take;
		bt = lb_btt(g, b);
		for (i = 0; i < take; i++)
			lb_list_add(g, bt, w);
		bt->nrec += take;
		if (op == LB_OP_INSERT)
			bt->nlive += take;
		else
			bt->nlive -= Min(bt->nlive, (uint32) take);
		done += take;
	}
}

/* ---- reading: Algorithm 1 ---- */

typedef struct Req
{
	uint32		bucket;
	int			idx;			/* position in the caller's array */
} Req;

typedef struct RecList
{
	LbRecord   *r;
	int			n;
	int			max;
	bool		deletes;		/* a delete record is among them */
} RecList;

static int
cmp_req(const void *a, const void *b)
{
	uint32		x = ((const Req *) a)->bucket;
	uint32		y = ((const Req *) b)->bucket;

	return x < y ? -1 : x > y ? 1 : 0;
}

static int
cmp_u32(const void *a, const void *b)
{
	uint32		x = *(const uint32 *) a;
	uint32		y = *(const uint32 *) b;

	return x < y ? -1 : x > y ? 1 : 0;
}

/* records of one (TID, box) together, in time order */
static int
cmp_rec(const void *a, const void *b)
{
	const LbRecord *x = a;
	const LbRecord *y = b;
	int			c = ItemPointerCompare((ItemPointer) &x->tid, (ItemPointer) &y->tid);

	if (c != 0)
		return c;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	c = memcmp(&x->box, &y->box, sizeof(HiBox));
	if (c != 0)
		return c;
	return x->ts < y->ts ? -1 : x->ts > y->ts ? 1 : 0;
}

/*
 * Lines 10-12: drop redundant and deleted records, compose the bucket.
 * Without delete records every record is a live entry as it stands (two
 * inserts of one entry count twice either way), and the sort that pairs
 * deletes with their inserts is skipped: it was a third of a warm range
 * query's CPU time on a freshly built index.
 */
static void
resolve(RecList *rl, GridBucketData *out)
{
	int			i = 0;

	out->n = 0;
	out->e = palloc(sizeof(GridEntry) * Max(rl->n, 1));
	if (!rl->deletes)
	{
		for (i = 0; i < rl->n; i++)
		{
			GridEntry  *e = &out->e[i];

			memset(e, 0, sizeof(GridEntry));
			e->box = rl->r[i].box;
			e->tid = rl->r[i].tid;
			e->kind = rl->r[i].kind;
		}
		out->n = rl->n;
		return;
	}
	if (rl->n > 1)
		qsort(rl->r, rl->n, sizeof(LbRecord), cmp_rec);
	while (i < rl->n)
	{
		int			j = i;
		int			live = 0;

		while (j < rl->n && cmp_rec(&rl->r[i], &rl->r[j]) <= 0 &&
			   ItemPointerEquals(&rl->r[i].tid, &rl->r[j].tid) &&
			   rl->r[i].kind == rl->r[j].kind &&
			   memcmp(&rl->r[i].box, &rl->r[j].box, sizeof(HiBox)) == 0)
		{
			if (rl->r[j].op == LB_OP_INSERT)
				live++;
			else if (live > 0)
				live--;
			j++;
		}
		while (live-- > 0)
		{
			GridEntry  *e = &out->e[out->n++];

			memset(e, 0, sizeof(GridEntry));
			e->box = rl->r[i].box;
			e->tid = rl->r[i].tid;
			e->kind = rl->r[i].kind;
		}
		i = j;
	}
}

/*
 * Algorithm 1 for n buckets at once: one group read (in rounds that fit
 * the bucket buffer) of all their log-buckets.
 */
void
lb_load(Grid *g, const uint32 *b, int n, GridBucketData *out)
{
	Req		   *req = palloc(sizeof(Req) * Max(n, 1));
	uint64	   *since = palloc(sizeof(uint64) * Max(n, 1));
	RecList    *rl = palloc0(sizeof(RecList) * Max(n, 1));
	uint32	   *pages;
	int			npages = 0;
	int			maxpages = 0;
	int			limit = gbuf_batch_limit(g, GRID_BUF_BUCKET);
	int		   *frames = palloc(sizeof(int) * limit);
	int			i,
				start;

	for (i = 0; i < n; i++)
	{
		LbBtt	   *bt = lb_btt(g, b[i]);

		req[i].bucket = b[i];
		req[i].idx = i;
		since[i] = bt->since;
		maxpages += bt->nlist;
	}
	qsort(req, n, sizeof(Req), cmp_req);
	/* line 1: the lists, merged into one set of log-buckets */
	pages = palloc(sizeof(uint32) * Max(maxpages, 1));
	for (i = 0; i < n; i++)
	{
		LbBtt	   *bt = lb_btt(g, b[i]);
		LbRef	   *l = lb_list(bt);
		int			j;

		for (j = 0; j < bt->nlist; j++)
			pages[npages++] = l[j].page;
	}
	if (npages > 1)
	{
		int			k = 0;

		qsort(pages, npages, sizeof(uint32), cmp_u32);
		for (i = 1; i < npages; i++)
			if (pages[i] != pages[k])
				pages[++k] = pages[i];
		npages = k + 1;
	}

	/* lines 2-9: batch reads, picking the records of the buckets */
	for (start = 0; start < npages; start += limit)
	{
		int			cnt = Min(limit, npages - start);
		int			p;

		gbuf_pin(g, GRID_BUF_BUCKET, pages + start, cnt, frames);
		for (p = 0; p < cnt; p++)
		{
			char	   *page = gbuf_page(g, GRID_BUF_BUCKET, frames[p]);
			int			nr = ((HiPageHeader *) page)->nentries;
			int			r;
			Req		   *hit = NULL;
			uint32		last = HI_INVALID_PAGE;

			for (r = 0; r < nr; r++)
			{
				LbRecord   *rec = &LB_RECORDS(page)[r];
				RecList    *l;

				/* a bucket's records come in runs (builds, rewrites) */
				if (rec->bucket != last)
				{
					Req			key;

					key.bucket = last = rec->bucket;
					hit = bsearch(&key, req, n, sizeof(Req), cmp_req);
				}
				if (hit == NULL || rec->ts < since[hit->idx])
					continue;
				l = &rl[hit->idx];
				if (l->n == l->max)
				{
					l->max = Max(16, l->max * 2);
					l->r = l->r ? repalloc(l->r, sizeof(LbRecord) * l->max) :
						palloc(sizeof(LbRecord) * l->max);
				}
				l->r[l->n++] = *rec;
				if (rec->op != LB_OP_INSERT)
					l->deletes = true;
			}
			gbuf_unpin(g, GRID_BUF_BUCKET, frames[p]);
		}
		CHECK_FOR_INTERRUPTS();
	}
	for (i = 0; i < n; i++)
	{
		resolve(&rl[i], &out[i]);
		if (rl[i].r)
			pfree(rl[i].r);
	}
	pfree(req);
	pfree(since);
	pfree(rl);
	pfree(pages);
	pfree(frames);
}

/* ---- changes ---- */

static int
lb_npages(Grid *g, uint32 b)
{
	return Max(1, lb_btt(g, b)->nlist);
}

static uint32
lb_count(Grid *g, uint32 b)
{
	return lb_btt(g, b)->nlive;
}

static uint32
lb_create(Grid *g)
{
	return lb_btt_new(g);
}

/* The bucket's current records stop counting; its list empties */
static void
release_list(Grid *g, uint32 b)
{
	LbBtt	   *bt = lb_btt(g, b);
	int			n = bt->nlist;
	LbRef	   *copy;
	int			i;

	if (n == 0)
		return;
	copy = palloc(sizeof(LbRef) * n);
	memcpy(copy, lb_list(bt), sizeof(LbRef) * n);
	bt->nlist = 0;
	bt->nrec = 0;
	bt->nlive = 0;
	for (i = 0; i < n; i++)
		lb_release_page(g, copy[i].page, copy[i].cnt);
	pfree(copy);
}

static void
lb_drop(Grid *g, uint32 b)
{
	release_list(g, b);
	lb_btt_free(g, b);
}

/* Algorithm 2, lines 1-7: one insert record */
static void
lb_add(Grid *g, uint32 b, const GridEntry *e)
{
	append(g, b, LB_OP_INSERT, e, 1);
	lb_maybe_rewrite(g, b);
}

/* Algorithm 3, lines 1-5: one delete record (the entry is there) */
static void
lb_remove(Grid *g, uint32 b, const GridEntry *e)
{
	append(g, b, LB_OP_DELETE, e, 1);
	lb_maybe_rewrite(g, b);
}

/* The bucket holds exactly e[0..n) from now on */
void
lb_replace(Grid *g, uint32 b, const GridEntry *e, int n)
{
	LbBtt	   *bt;

	release_list(g, b);
	bt = lb_btt(g, b);
	bt->since = lb_shared(g)->ts;
	if (n > 0)
		append(g, b, LB_OP_INSERT, e, n);
}

static void
lb_vacuum(Grid *g, uint32 b, GridVacuumFn fn, void *arg,
		  double *removed, double *remaining)
{
	GridBucketData bd;
	int			i;
	int			gone = 0;

	lb_load(g, &b, 1, &bd);
	for (i = 0; i < bd.n; i++)
		if (fn(&bd.e[i].tid, arg))
		{
			grid_note_delete(g, &bd.e[i]);
			append(g, b, LB_OP_DELETE, &bd.e[i], 1);
			gone++;
		}
	*removed += gone;
	*remaining += bd.n - gone;
	if (gone > 0)
		lb_maybe_rewrite(g, b);
	pfree(bd.e);
}

const GridStoreOps lb_store_ops = {
	.name = "log",
	.capacity = lb_capacity,
	.npages = lb_npages,
	.load = lb_load,
	.count = lb_count,
	.create = lb_create,
	.drop = lb_drop,
	.add = lb_add,
	.remove = lb_remove,
	.replace = lb_replace,
	.vacuum = lb_vacuum,
	.after_change = lb_after_change,
	.init_ext = lb_init_ext,
	.save_ext = lb_save_ext,
	.load_ext = lb_load_ext,
	.free_ext = lb_free_ext,
	.check = lb_check,
	.inspect = lb_inspect,
	.page_info = lb_page_info,
};
