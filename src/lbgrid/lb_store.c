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
		/* a search trusts the order of a sealed log-bucket (lb_load) */
		if (h->flags & LB_HDR_SORTED)
		{
			const LbRecord *r = LB_RECORDS(page);
			int			i;

			for (i = 1; i < h->nentries; i++)
				if (r[i].bucket < r[i - 1].bucket ||
					(r[i].bucket == r[i - 1].bucket && r[i].ts <= r[i - 1].ts))
					return "its records are not in bucket order although it says so";
		}
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

/* records of one bucket together, in time order */
static int
cmp_bucket_ts(const void *a, const void *b)
{
	const LbRecord *x = a;
	const LbRecord *y = b;

	if (x->bucket != y->bucket)
		return x->bucket < y->bucket ? -1 : 1;
	return x->ts < y->ts ? -1 : x->ts > y->ts ? 1 : 0;
}

/*
 * A sealed log-bucket gets no more records: order them by bucket, so that
 * a search finds a bucket's run with a binary search instead of looking up
 * the bucket of each of the page's records (lb_load).  Records of one
 * bucket keep their time order; lists count records per page, not
 * positions, so nothing else changes.
 */
static void
sort_sealed(Grid *g, uint32 page)
{
	int			f;
	char	   *pg;
	HiPageHeader *h;

	gbuf_pin(g, GRID_BUF_BUCKET, &page, 1, &f);
	pg = gbuf_page(g, GRID_BUF_BUCKET, f);
	h = (HiPageHeader *) pg;
	if (h->nentries > 1)
		qsort(LB_RECORDS(pg), h->nentries, sizeof(LbRecord), cmp_bucket_ts);
	h->flags |= LB_HDR_SORTED;
	gbuf_dirty(g, GRID_BUF_BUCKET, f);
	gbuf_unpin(g, GRID_BUF_BUCKET, f);
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
		sort_sealed(g, old);
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
			r->key = e[done + i].key;
			r->flags = e[done + i].flags;
			r->tid = e[done + i].tid;
		}
		gbuf_dirty(g, GRID_BUF_BUCKET, f);
		gbuf_unpin(g, GRID_BUF_BUCKET, f);
		lp = lb_page(g, w);
		lp->nrec += take;
		lp->nref += take;
		bt = lb_btt(g, b);
		if (take > 0)
			lb_list_add_n(g, bt, w, take);
		bt->nrec += take;
		if (op == LB_OP_INSERT)
			bt->nlive += take;
		else
			bt->nlive -= Min(bt->nlive, (uint32) take);
		done += take;
	}
}

/* ---- reading: Algorithm 1 ---- */

/*
 * The requested buckets by id, for the records of a log-bucket page: an
 * open-addressing table of positions in the caller's array.  A page holds
 * short runs of many buckets' records, so this lookup runs about once per
 * record; a binary search there was a third of lbgrid's warm range time.
 */
typedef struct ReqTable
{
	const uint32 *b;			/* the caller's bucket ids */
	int32	   *slot;			/* position in b, or -1 */
	uint32		mask;
	int			shift;
} ReqTable;

static inline uint32
req_hash(const ReqTable *t, uint32 bucket)
{
	return (bucket * 0x9E3779B1u) >> t->shift;
}

static void
req_init(ReqTable *t, const uint32 *b, int n)
{
	int			bits = 1;
	int			i;

	while ((1 << bits) < 2 * n)
		bits++;
	t->b = b;
	t->mask = (1u << bits) - 1;
	t->shift = 32 - bits;
	t->slot = palloc(sizeof(int32) << bits);
	memset(t->slot, -1, sizeof(int32) << bits);
	for (i = 0; i < n; i++)
	{
		uint32		h = req_hash(t, b[i]);

		while (t->slot[h] >= 0 && b[t->slot[h]] != b[i])
			h = (h + 1) & t->mask;
		/* a bucket asked for twice gets its records in its first place */
		if (t->slot[h] < 0)
			t->slot[h] = i;
	}
}

/* The position of bucket in the caller's array, or -1 */
static inline int
req_find(const ReqTable *t, uint32 bucket)
{
	uint32		h = req_hash(t, bucket);

	while (t->slot[h] >= 0)
	{
		if (t->b[t->slot[h]] == bucket)
			return t->slot[h];
		h = (h + 1) & t->mask;
	}
	return -1;
}

typedef struct RecList
{
	LbRecord   *r;
	int			n;
	int			max;
	bool		deletes;		/* a delete record is among them */
} RecList;

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
	if (x->flags != y->flags)
		return x->flags < y->flags ? -1 : 1;
	c = memcmp(&x->key, &y->key, sizeof(HiBox));
	if (c != 0)
		return c;
	return x->ts < y->ts ? -1 : x->ts > y->ts ? 1 : 0;
}

/* The entry an insert record adds */
static inline void
entry_of(GridEntry *e, const LbRecord *r)
{
	memset(e, 0, sizeof(GridEntry));
	e->key = r->key;
	e->flags = r->flags;
	e->tid = r->tid;
	e->kind = r->kind;
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
			entry_of(&out->e[i], &rl->r[i]);
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
			   rl->r[i].kind == rl->r[j].kind && rl->r[i].flags == rl->r[j].flags &&
			   memcmp(&rl->r[i].key, &rl->r[j].key, sizeof(HiBox)) == 0)
		{
			if (rl->r[j].op == LB_OP_INSERT)
				live++;
			else if (live > 0)
				live--;
			j++;
		}
		while (live-- > 0)
			entry_of(&out->e[out->n++], &rl->r[i]);
		i = j;
	}
}

/* A log-bucket in the lists of the idx-th requested bucket */
typedef struct PageReq
{
	uint32		page;
	int			idx;
} PageReq;

static int
cmp_page_req(const void *a, const void *b)
{
	const PageReq *x = a;
	const PageReq *y = b;

	if (x->page != y->page)
		return x->page < y->page ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx ? 1 : 0;
}

/*
 * A bucket whose records are all inserts (every delete record makes nrec
 * exceed nlive) goes straight into its entries: no copy of its records, no
 * composing, half the memory of a search.
 */
static inline void
take_entry(Grid *g, GridBucketData *d, int *max, const LbRecord *rec)
{
	if (rec->op != LB_OP_INSERT)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" is corrupted", hi_index_name(g->idx)),
				 errdetail("Bucket %u counts no deletions but holds a delete record.",
						   rec->bucket),
				 errhint("REINDEX the index.")));
	if (d->n == *max)
	{
		*max *= 2;
		d->e = repalloc(d->e, sizeof(GridEntry) * *max);
	}
	entry_of(&d->e[d->n++], rec);
}

static inline void
take_record(RecList *l, const LbRecord *rec)
{
	if (l->n == l->max)
	{
		l->max *= 2;
		l->r = repalloc(l->r, sizeof(LbRecord) * l->max);
	}
	l->r[l->n++] = *rec;
	if (rec->op != LB_OP_INSERT)
		l->deletes = true;
}

/* One current record of the idx-th requested bucket */
static inline void
take(Grid *g, RecList *rl, GridBucketData *out, int idx, const LbRecord *rec)
{
	if (rl[idx].r)
		take_record(&rl[idx], rec);
	else
		take_entry(g, &out[idx], &rl[idx].max, rec);
}

/* The first of the nr sorted records whose bucket is at least bucket */
static int
sorted_lower_bound(const LbRecord *recs, int nr, uint32 bucket)
{
	int			lo = 0,
				hi = nr;

	while (lo < hi)
	{
		int			mid = lo + (hi - lo) / 2;

		if (recs[mid].bucket < bucket)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Algorithm 1 for n buckets at once: one group read (in rounds that fit
 * the bucket buffer) of all their log-buckets.
 */
void
lb_load(Grid *g, const uint32 *b, int n, GridBucketData *out)
{
	ReqTable	req;
	uint64	   *since = palloc(sizeof(uint64) * Max(n, 1));
	RecList    *rl = palloc0(sizeof(RecList) * Max(n, 1));
	PageReq    *pr;
	int			npr = 0;
	uint32	   *pages;
	int		   *first;			/* pages[k]'s requests: pr[first[k]..first[k+1]) */
	int			npages = 0;
	int			maxpages = 0;
	int			limit = gbuf_batch_limit(g, GRID_BUF_BUCKET);
	int		   *frames = palloc(sizeof(int) * limit);
	int			i,
				start;

	for (i = 0; i < n; i++)
	{
		LbBtt	   *bt = lb_btt(g, b[i]);

		since[i] = bt->since;
		maxpages += bt->nlist;
		/* room for the records its list counts */
		rl[i].max = Max(bt->nrec, 1);
		if (bt->nrec == bt->nlive)
		{
			/* inserts only: rl[i] stays empty, max sizes out[i] */
			out[i].n = 0;
			out[i].e = palloc(sizeof(GridEntry) * rl[i].max);
		}
		else
			rl[i].r = palloc(sizeof(LbRecord) * rl[i].max);
	}
	req_init(&req, b, n);
	/* line 1: the lists, merged into one set of log-buckets */
	pr = palloc(sizeof(PageReq) * Max(maxpages, 1));
	for (i = 0; i < n; i++)
	{
		LbBtt	   *bt = lb_btt(g, b[i]);
		LbRef	   *l = lb_list(bt);
		int			j;

		/* a bucket asked for twice is read once, as in req_find */
		if (req_find(&req, b[i]) != i)
			continue;
		for (j = 0; j < bt->nlist; j++)
		{
			pr[npr].page = l[j].page;
			pr[npr++].idx = i;
		}
	}
	if (npr > 1)
	{
		int			k = 0;

		qsort(pr, npr, sizeof(PageReq), cmp_page_req);
		for (i = 1; i < npr; i++)
			if (cmp_page_req(&pr[i], &pr[k]) != 0)
				pr[++k] = pr[i];
		npr = k + 1;
	}
	pages = palloc(sizeof(uint32) * Max(npr, 1));
	first = palloc(sizeof(int) * (npr + 1));
	for (i = 0; i < npr; i++)
		if (npages == 0 || pages[npages - 1] != pr[i].page)
		{
			pages[npages] = pr[i].page;
			first[npages++] = i;
		}
	first[npages] = npr;

	/* lines 2-9: batch reads, picking the records of the buckets */
	for (start = 0; start < npages; start += limit)
	{
		int			cnt = Min(limit, npages - start);
		int			p;

		gbuf_pin(g, GRID_BUF_BUCKET, pages + start, cnt, frames);
		for (p = 0; p < cnt; p++)
		{
			char	   *page = gbuf_page(g, GRID_BUF_BUCKET, frames[p]);
			HiPageHeader *h = (HiPageHeader *) page;
			const LbRecord *recs = LB_RECORDS(page);
			int			nr = h->nentries;
			int			r;

			if (h->flags & LB_HDR_SORTED)
			{
				/* a sealed page: each requested bucket's run directly */
				int			k;

				for (k = first[start + p]; k < first[start + p + 1]; k++)
				{
					int			idx = pr[k].idx;

					for (r = sorted_lower_bound(recs, nr, b[idx]);
						 r < nr && recs[r].bucket == b[idx]; r++)
						if (recs[r].ts >= since[idx])
							take(g, rl, out, idx, &recs[r]);
				}
			}
			else
			{
				/* the working log-bucket (and unsorted older ones) */
				int			hit = -1;
				uint32		last = HI_INVALID_PAGE;

				for (r = 0; r < nr; r++)
				{
					/* a bucket's records come in runs (builds, rewrites) */
					if (recs[r].bucket != last)
						hit = req_find(&req, last = recs[r].bucket);
					if (hit >= 0 && recs[r].ts >= since[hit])
						take(g, rl, out, hit, &recs[r]);
				}
			}
			gbuf_unpin(g, GRID_BUF_BUCKET, frames[p]);
		}
		CHECK_FOR_INTERRUPTS();
	}
	for (i = 0; i < n; i++)
		if (rl[i].r)
		{
			resolve(&rl[i], &out[i]);
			pfree(rl[i].r);
		}
	pfree(req.slot);
	pfree(since);
	pfree(rl);
	pfree(pr);
	pfree(pages);
	pfree(first);
	pfree(frames);
}

/* ---- changes ---- */

static int
lb_npages(Grid *g, uint32 b)
{
	return Max(1, lb_btt(g, b)->nlist);
}

static int
lb_pages(Grid *g, uint32 b, uint32 *out)
{
	LbBtt	   *bt = lb_btt(g, b);
	LbRef	   *l = lb_list(bt);
	int			j;

	for (j = 0; j < bt->nlist; j++)
		out[j] = l[j].page;
	return bt->nlist;
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

/*
 * GridStoreOps.bulk: the records of n new buckets, one after the other,
 * packed into fresh log-buckets written sealed and in bucket order, as the
 * working log-bucket would have taken them; then the BTT and the
 * log-bucket table learn of them.  Only the last log-bucket of a call may
 * be partly filled (it is sealed all the same; it is not a compaction
 * candidate, as all its records count).
 */
static void
lb_bulk(Grid *g, GridWriter *w, const GridEntry *e, const int *first, int n, uint32 *ids)
{
	int			cap = lb_capacity(g->gs->page_size);
	int			total = first[n];
	int			npages = (total + cap - 1) / cap;
	uint32	   *pages = palloc(sizeof(uint32) * Max(npages, 1));
	LbShared   *ls;
	uint64		ts0;
	int			b = 0;
	int			k = 0;
	int			i;

	gw_lock(w);
	ls = lb_shared(g);
	for (i = 0; i < n; i++)
		ids[i] = lb_btt_new(g);
	ts0 = ls->ts;
	ls->ts += total;
	for (i = 0; i < npages; i++)
		pages[i] = grid_page_alloc(g);
	gw_unlock(w);

	for (i = 0; i < npages; i++)
	{
		char	   *pg = gw_page(w, pages[i], 0, GRID_PAGE_LOG | LB_HDR_SORTED);
		LbRecord   *r = LB_RECORDS(pg);
		int			take = Min(cap, total - i * cap);
		bool		sorted = true;
		int			j;

		for (j = 0; j < take; j++, k++)
		{
			while (k >= first[b + 1])
				b++;
			r[j].bucket = ids[b];
			r[j].op = LB_OP_INSERT;
			r[j].kind = e[k].kind;
			r[j].ts = ts0 + k;
			r[j].key = e[k].key;
			r[j].flags = e[k].flags;
			r[j].tid = e[k].tid;
			if (j > 0 && r[j].bucket < r[j - 1].bucket)
				sorted = false;
		}
		/* reused bucket ids need not ascend */
		if (!sorted)
			qsort(r, take, sizeof(LbRecord), cmp_bucket_ts);
		((HiPageHeader *) pg)->nentries = take;
	}

	gw_lock(w);
	ls = lb_shared(g);
	for (i = 0; i < n; i++)
	{
		LbBtt	   *bt = lb_btt(g, ids[i]);

		bt->since = ts0;
		bt->nrec = bt->nlive = first[i + 1] - first[i];
		for (k = first[i]; k < first[i + 1];)
		{
			int			end = Min(first[i + 1], (k / cap + 1) * cap);

			lb_list_add_n(g, bt, pages[k / cap], end - k);
			k = end;
		}
	}
	for (i = 0; i < npages; i++)
	{
		LbPage	   *lp = lb_page(g, pages[i]);

		lp->nrec = lp->nref = Min(cap, total - i * cap);
		lp->flags = LB_PAGE_LOG | LB_PAGE_SEALED;
		ls->sealed++;
	}
	gw_unlock(w);
	pfree(pages);
}

const GridStoreOps lb_store_ops = {
	.name = "log",
	.capacity = lb_capacity,
	.npages = lb_npages,
	.pages = lb_pages,
	.add_reads = false,			/* appends to the working log-bucket */
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
	.bulk = lb_bulk,
};
