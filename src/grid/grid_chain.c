/*
 * grid_chain.c
 *	  Buckets kept as chains of pages, updated in place through the bucket
 *	  buffer: the buckets of GFFM (thesis section 3.3, the baseline of
 *	  LB-Grid and H-Grid), and in every mode the two lists outside the grid
 *	  (NULL/EMPTY entries, and boxes without a finite centre).
 *
 * A bucket is its head page; the head also records the chain's entry count
 * and its last page.  A grid bucket has one page unless it is an
 * unsplittable full bucket (many entries with the same centre), which
 * grows overflow pages.  New entries go to the last page; a removal fills
 * the hole with the last entry of the last page, so only the last page of
 * a chain is ever partly empty.
 */
#include "postgres.h"

#include "miscadmin.h"

#include "grid/grid.h"

typedef struct GcHead
{
	uint32		total;			/* entries in the chain (head page only) */
	uint32		tail;			/* last page of the chain (head page only) */
} GcHead;

#define GC_HDR_SIZE		(MAXALIGN(sizeof(HiPageHeader)) + sizeof(GcHead))
#define GC_PH(p)		((HiPageHeader *) (p))
#define GC_HEAD(p)		((GcHead *) ((p) + MAXALIGN(sizeof(HiPageHeader))))
#define GC_ENTRIES(p)	((GridEntry *) ((p) + GC_HDR_SIZE))

int
grid_chain_capacity(uint32 page_size)
{
	return (int) ((page_size - GC_HDR_SIZE) / sizeof(GridEntry));
}

static inline bool
entry_equal(const GridEntry *a, const GridEntry *b)
{
	return ItemPointerEquals((ItemPointer) &a->tid, (ItemPointer) &b->tid) &&
		a->kind == b->kind &&
		(a->kind != HI_KEY_BOX ||
		 (a->flags == b->flags && memcmp(&a->key, &b->key, sizeof(HiBox)) == 0));
}

static int
pin1(Grid *g, uint32 pageno)
{
	int			f;

	gbuf_pin(g, GRID_BUF_BUCKET, &pageno, 1, &f);
	return f;
}

static inline char *
page_of(Grid *g, int f)
{
	return gbuf_page(g, GRID_BUF_BUCKET, f);
}

static int
new_chain_page(Grid *g, uint32 *pageno)
{
	*pageno = grid_page_alloc(g);
	return gbuf_new(g, GRID_BUF_BUCKET, *pageno, 0, GRID_PAGE_BUCKET);
}

uint32
gc_create(Grid *g)
{
	uint32		p;
	int			f = new_chain_page(g, &p);

	GC_HEAD(page_of(g, f))->tail = p;
	gbuf_unpin(g, GRID_BUF_BUCKET, f);
	return p;
}

/* Page ids of a chain, head first */
uint32 *
gc_pages(Grid *g, uint32 head, int *n)
{
	int			max = 4;
	uint32	   *out = palloc(sizeof(uint32) * max);
	uint32		p = head;

	*n = 0;
	while (p != HI_INVALID_PAGE)
	{
		int			f = pin1(g, p);

		if (*n == max)
		{
			max *= 2;
			out = repalloc(out, sizeof(uint32) * max);
		}
		out[(*n)++] = p;
		p = GC_PH(page_of(g, f))->link;
		gbuf_unpin(g, GRID_BUF_BUCKET, f);
		CHECK_FOR_INTERRUPTS();
	}
	return out;
}

void
gc_add(Grid *g, uint32 head, const GridEntry *e)
{
	int			fh = pin1(g, head);
	char	   *hp = page_of(g, fh);
	uint32		tail = GC_HEAD(hp)->tail;
	int			ft = tail == head ? fh : pin1(g, tail);
	char	   *tp = page_of(g, ft);

	if (GC_PH(tp)->nentries >= grid_chain_capacity(g->gs->page_size))
	{
		uint32		np;
		int			fn = new_chain_page(g, &np);

		GC_PH(tp)->link = np;
		gbuf_dirty(g, GRID_BUF_BUCKET, ft);
		if (ft != fh)
			gbuf_unpin(g, GRID_BUF_BUCKET, ft);
		GC_HEAD(hp)->tail = np;
		ft = fn;
		tp = page_of(g, fn);
	}
	GC_ENTRIES(tp)[GC_PH(tp)->nentries++] = *e;
	GC_HEAD(hp)->total++;
	gbuf_dirty(g, GRID_BUF_BUCKET, ft);
	gbuf_dirty(g, GRID_BUF_BUCKET, fh);
	if (ft != fh)
		gbuf_unpin(g, GRID_BUF_BUCKET, ft);
	gbuf_unpin(g, GRID_BUF_BUCKET, fh);
}

/*
 * Rewrite a chain to hold exactly e[0..n), reusing its pages in order,
 * adding or freeing pages as needed.
 */
static void
gc_replace(Grid *g, uint32 head, const GridEntry *e, int n)
{
	int			cap = grid_chain_capacity(g->gs->page_size);
	int			nold;
	uint32	   *old = gc_pages(g, head, &nold);
	int			need = Max(1, (n + cap - 1) / cap);
	uint32	   *pages = palloc(sizeof(uint32) * need);
	int			done = 0;
	int			i;

	for (i = 0; i < need; i++)
		pages[i] = i < nold ? old[i] : grid_page_alloc(g);
	for (i = 0; i < need; i++)
	{
		int			f = i < nold ? pin1(g, pages[i]) :
			gbuf_new(g, GRID_BUF_BUCKET, pages[i], 0, GRID_PAGE_BUCKET);
		char	   *pg = page_of(g, f);
		int			take = Min(cap, n - done);

		if (take > 0)
			memcpy(GC_ENTRIES(pg), e + done, sizeof(GridEntry) * take);
		done += Max(take, 0);
		GC_PH(pg)->nentries = Max(take, 0);
		GC_PH(pg)->link = i + 1 < need ? pages[i + 1] : HI_INVALID_PAGE;
		if (i == 0)
		{
			GC_HEAD(pg)->total = n;
			GC_HEAD(pg)->tail = pages[need - 1];
		}
		gbuf_dirty(g, GRID_BUF_BUCKET, f);
		gbuf_unpin(g, GRID_BUF_BUCKET, f);
	}
	for (i = need; i < nold; i++)
		grid_page_free(g, GRID_BUF_BUCKET, old[i]);
	pfree(old);
	pfree(pages);
}

/* Remove one entry; false if it is not in the chain */
bool
gc_remove(Grid *g, uint32 head, const GridEntry *e)
{
	GridBucketData d;
	int			i;

	gc_load(g, &head, 1, &d);
	for (i = 0; i < d.n; i++)
		if (entry_equal(&d.e[i], e))
		{
			d.e[i] = d.e[d.n - 1];
			gc_replace(g, head, d.e, d.n - 1);
			pfree(d.e);
			return true;
		}
	if (d.e)
		pfree(d.e);
	return false;
}

/*
 * Read whole chains: the head pages in batches, then the next pages of all
 * chains in batches, and so on (a group read per round).
 */
void
gc_load(Grid *g, const uint32 *heads, int n, GridBucketData *out)
{
	uint32	   *cur = palloc(sizeof(uint32) * Max(n, 1));
	int		   *owner = palloc(sizeof(int) * Max(n, 1));
	int		   *max = palloc0(sizeof(int) * Max(n, 1));
	int			ncur = n;
	int			limit = gbuf_batch_limit(g, GRID_BUF_BUCKET);
	int		   *frames = palloc(sizeof(int) * limit);
	int			i;

	for (i = 0; i < n; i++)
	{
		cur[i] = heads[i];
		owner[i] = i;
		out[i].n = 0;
		out[i].e = NULL;
	}
	while (ncur > 0)
	{
		int			nnext = 0;
		int			start;

		for (start = 0; start < ncur; start += limit)
		{
			int			cnt = Min(limit, ncur - start);
			int			j;

			gbuf_pin(g, GRID_BUF_BUCKET, cur + start, cnt, frames);
			for (j = 0; j < cnt; j++)
			{
				char	   *pg = page_of(g, frames[j]);
				GridBucketData *o = &out[owner[start + j]];
				int			k = GC_PH(pg)->nentries;
				int			m = owner[start + j];

				if (o->n + k > max[m])
				{
					max[m] = Max(o->n + k, max[m] * 2);
					o->e = o->e ? repalloc(o->e, sizeof(GridEntry) * max[m]) :
						palloc(sizeof(GridEntry) * Max(max[m], 1));
				}
				if (k > 0)
					memcpy(o->e + o->n, GC_ENTRIES(pg), sizeof(GridEntry) * k);
				o->n += k;
				/* next round: the following page of this chain */
				if (GC_PH(pg)->link != HI_INVALID_PAGE)
				{
					cur[nnext] = GC_PH(pg)->link;
					owner[nnext] = m;
					nnext++;
				}
				gbuf_unpin(g, GRID_BUF_BUCKET, frames[j]);
			}
			CHECK_FOR_INTERRUPTS();
		}
		ncur = nnext;
	}
	pfree(cur);
	pfree(owner);
	pfree(max);
	pfree(frames);
}

uint32
gc_count(Grid *g, uint32 head)
{
	int			f = pin1(g, head);
	uint32		n = GC_HEAD(page_of(g, f))->total;

	gbuf_unpin(g, GRID_BUF_BUCKET, f);
	return n;
}

/* VACUUM: drop the entries fn accepts, logging each, and repack */
void
gc_vacuum(Grid *g, uint32 head, GridVacuumFn fn, void *arg,
		  double *removed, double *remaining)
{
	GridBucketData d;
	int			i;
	int			kept = 0;

	gc_load(g, &head, 1, &d);
	for (i = 0; i < d.n; i++)
	{
		if (fn(&d.e[i].tid, arg))
		{
			grid_note_delete(g, &d.e[i]);
			continue;
		}
		d.e[kept++] = d.e[i];
	}
	if (kept < d.n)
		gc_replace(g, head, d.e, kept);
	*removed += d.n - kept;
	*remaining += kept;
	if (d.e)
		pfree(d.e);
}

/* ---- the GFFM store ---- */

static int
chain_npages(Grid *g, uint32 b)
{
	return 1;					/* overflow pages are read in later rounds */
}

/* a chain's head page is the bucket's id */
static int
chain_pages(Grid *g, uint32 b, uint32 *out)
{
	out[0] = b;
	return 1;
}

static void
chain_drop(Grid *g, uint32 b)
{
	int			n;
	uint32	   *pages = gc_pages(g, b, &n);
	int			i;

	for (i = 0; i < n; i++)
		grid_page_free(g, GRID_BUF_BUCKET, pages[i]);
	pfree(pages);
}

static void
chain_remove(Grid *g, uint32 b, const GridEntry *e)
{
	if (!gc_remove(g, b, e))
		elog(ERROR, "entry to remove is not in bucket %u", b);
}

static void
chain_replace(Grid *g, uint32 b, const GridEntry *e, int n)
{
	gc_replace(g, b, e, n);
}

/*
 * GridStoreOps.bulk: each new bucket a chain of fresh pages (one, unless
 * its entries share a centre beyond a page), numbered as create and
 * replace would number them
 */
static void
gc_bulk(Grid *g, GridWriter *w, const GridEntry *e, const int *first, int n, uint32 *ids)
{
	int			cap = grid_chain_capacity(g->gs->page_size);
	int			total = 0;
	uint32	   *pages;
	int			p = 0;
	int			i,
				j;

	for (i = 0; i < n; i++)
		total += Max(1, (first[i + 1] - first[i] + cap - 1) / cap);
	pages = palloc(sizeof(uint32) * Max(total, 1));
	gw_alloc(w, pages, total);
	for (i = 0; i < n; i++)
	{
		int			cnt = first[i + 1] - first[i];
		int			need = Max(1, (cnt + cap - 1) / cap);

		ids[i] = pages[p];
		for (j = 0; j < need; j++)
		{
			char	   *pg = gw_page(w, pages[p + j], 0, GRID_PAGE_BUCKET);
			int			take = Max(0, Min(cap, cnt - j * cap));

			if (take > 0)
				memcpy(GC_ENTRIES(pg), e + first[i] + j * cap, sizeof(GridEntry) * take);
			GC_PH(pg)->nentries = take;
			GC_PH(pg)->link = j + 1 < need ? pages[p + j + 1] : HI_INVALID_PAGE;
			if (j == 0)
			{
				GC_HEAD(pg)->total = cnt;
				GC_HEAD(pg)->tail = pages[p + need - 1];
			}
		}
		p += need;
	}
	pfree(pages);
}

const GridStoreOps grid_chain_ops = {
	.name = "gffm",
	.capacity = grid_chain_capacity,
	.npages = chain_npages,
	.pages = chain_pages,
	.add_reads = true,
	.load = gc_load,
	.count = gc_count,
	.create = gc_create,
	.drop = chain_drop,
	.add = gc_add,
	.remove = chain_remove,
	.replace = chain_replace,
	.vacuum = gc_vacuum,
	.bulk = gc_bulk,
};
