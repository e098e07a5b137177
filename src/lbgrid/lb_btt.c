/*
 * lb_btt.c
 *	  The Bucket Translation Table and the log-bucket table of LB-Grid, in
 *	  the DSA area, and their image in the AM blob.
 *
 * The thesis implements the BTT as a hash table; our logical bucket ids
 * are dense (freed ids are reused), so an array indexed by id is the
 * perfect hash.  Each entry's list of log-buckets is a DSA allocation of
 * its own that grows by doubling.
 */
#include "postgres.h"

#include "grid/grid.h"
#include "lbgrid/lbgrid.h"

typedef struct LbBlobHdr
{
	uint64		ts;
	uint32		working;
	uint32		nbtt;
	uint32		nfree_ids;
	uint32		npages;
	uint64		compactions;
	uint64		rewrites;
	uint64		freed;
	uint64		sealed;
} LbBlobHdr;

typedef struct LbBttDisk
{
	uint32		nlive;
	uint32		nrec;
	uint64		since;
	uint32		nlist;
	uint32		flags;
} LbBttDisk;

static inline void *
addr(dsa_pointer p)
{
	return dsa_get_address(hi_dsa(), p);
}

/* Grow a DSA array of elsize-byte elements to hold at least need */
static void
grow(dsa_pointer *p, uint32 *cap, uint32 need, Size elsize)
{
	uint32		ncap = Max(*cap, 16);
	dsa_pointer np;

	if (need <= *cap && DsaPointerIsValid(*p))
		return;
	while (ncap < need)
		ncap *= 2;
	np = dsa_allocate_extended(hi_dsa(), (Size) ncap * elsize, DSA_ALLOC_HUGE | DSA_ALLOC_ZERO);
	if (DsaPointerIsValid(*p))
	{
		memcpy(addr(np), addr(*p), (Size) *cap * elsize);
		dsa_free(hi_dsa(), *p);
	}
	*p = np;
	*cap = ncap;
}

LbShared *
lb_shared(Grid *g)
{
	return (LbShared *) addr(g->gs->ext);
}

LbBtt *
lb_btt(Grid *g, uint32 b)
{
	LbShared   *ls = lb_shared(g);

	if (b >= ls->nbtt)
		elog(ERROR, "bucket %u is not in the bucket translation table", b);
	return &((LbBtt *) addr(ls->btt))[b];
}

LbRef *
lb_list(LbBtt *bt)
{
	return DsaPointerIsValid(bt->list) ? (LbRef *) addr(bt->list) : NULL;
}

uint32
lb_btt_new(Grid *g)
{
	LbShared   *ls = lb_shared(g);
	uint32		b;
	LbBtt	   *bt;

	if (ls->nfree_ids > 0)
		b = ((uint32 *) addr(ls->free_ids))[--ls->nfree_ids];
	else
	{
		grow(&ls->btt, &ls->btt_cap, ls->nbtt + 1, sizeof(LbBtt));
		b = ls->nbtt++;
		((LbBtt *) addr(ls->btt))[b].list = InvalidDsaPointer;
	}
	bt = lb_btt(g, b);
	bt->nlive = bt->nrec = 0;
	bt->nlist = 0;
	bt->since = ls->ts;
	bt->flags = LB_BTT_USED;
	return b;
}

void
lb_btt_free(Grid *g, uint32 b)
{
	LbShared   *ls = lb_shared(g);
	LbBtt	   *bt = lb_btt(g, b);

	if (DsaPointerIsValid(bt->list))
		dsa_free(hi_dsa(), bt->list);
	bt->list = InvalidDsaPointer;
	bt->cap = bt->nlist = 0;
	bt->flags = 0;
	bt->nlive = bt->nrec = 0;
	grow(&ls->free_ids, &ls->free_ids_cap, ls->nfree_ids + 1, sizeof(uint32));
	((uint32 *) addr(ls->free_ids))[ls->nfree_ids++] = b;
}

/*
 * cnt records of the bucket went to log-bucket page: count them in the
 * last list element if that is the page, else append the page
 * (Algorithm 2, lines 4-6).
 */
void
lb_list_add_n(Grid *g, LbBtt *bt, uint32 page, uint32 cnt)
{
	LbRef	   *l = lb_list(bt);

	if (bt->nlist > 0 && l[bt->nlist - 1].page == page)
	{
		l[bt->nlist - 1].cnt += cnt;
		return;
	}
	if (bt->nlist == bt->cap)
	{
		uint32		cap = bt->cap;

		grow(&bt->list, &cap, bt->cap + 1, sizeof(LbRef));
		bt->cap = cap;
		l = lb_list(bt);
	}
	l[bt->nlist].page = page;
	l[bt->nlist].cnt = cnt;
	bt->nlist++;
}

LbPage *
lb_page(Grid *g, uint32 pageno)
{
	LbShared   *ls = lb_shared(g);

	if (pageno >= ls->pages_cap)
		grow(&ls->pages, &ls->pages_cap, pageno + 1, sizeof(LbPage));
	return &((LbPage *) addr(ls->pages))[pageno];
}

void
lb_init_ext(Grid *g)
{
	dsa_pointer p = dsa_allocate0(hi_dsa(), sizeof(LbShared));
	LbShared   *ls = (LbShared *) addr(p);

	ls->working = HI_INVALID_PAGE;
	ls->ts = 1;
	ls->btt = ls->free_ids = ls->pages = ls->queue = InvalidDsaPointer;
	g->gs->ext = p;
	/* the compaction queue grows with its first entries (lb_queue_room) */
}

/*
 * Room for one more log-bucket in the compaction queue: it grows up to
 * LB_QUEUE_CAP entries, so that an index with few log-buckets (one of
 * thousands of partitions) does not hold 4 kB of queue in shared memory.
 */
bool
lb_queue_room(Grid *g)
{
	LbShared   *ls = lb_shared(g);

	if (ls->nqueue < ls->queue_cap)
		return true;
	if (ls->queue_cap >= LB_QUEUE_CAP)
		return false;
	grow(&ls->queue, &ls->queue_cap, Min(ls->nqueue + 1, LB_QUEUE_CAP), sizeof(uint32));
	return true;
}

void
lb_save_ext(Grid *g, StringInfo out)
{
	LbShared   *ls = lb_shared(g);
	LbBlobHdr	h;
	uint32		b;

	memset(&h, 0, sizeof(h));
	h.ts = ls->ts;
	h.working = ls->working;
	h.nbtt = ls->nbtt;
	h.nfree_ids = ls->nfree_ids;
	h.npages = Min(ls->pages_cap, g->sh->meta.npages);
	h.compactions = ls->compactions;
	h.rewrites = ls->rewrites;
	h.freed = ls->freed;
	h.sealed = ls->sealed;
	appendBinaryStringInfo(out, (char *) &h, sizeof(h));
	for (b = 0; b < ls->nbtt; b++)
	{
		LbBtt	   *bt = lb_btt(g, b);
		LbBttDisk	d;

		memset(&d, 0, sizeof(d));
		d.nlive = bt->nlive;
		d.nrec = bt->nrec;
		d.since = bt->since;
		d.nlist = bt->nlist;
		d.flags = bt->flags;
		appendBinaryStringInfo(out, (char *) &d, sizeof(d));
		if (bt->nlist > 0)
			appendBinaryStringInfo(out, (char *) lb_list(bt), sizeof(LbRef) * bt->nlist);
	}
	if (ls->nfree_ids > 0)
		appendBinaryStringInfo(out, (char *) addr(ls->free_ids), sizeof(uint32) * ls->nfree_ids);
	if (h.npages > 0)
		appendBinaryStringInfo(out, (char *) addr(ls->pages), sizeof(LbPage) * h.npages);
}

void
lb_load_ext(Grid *g, const char *data, Size len)
{
	LbBlobHdr	h;
	const char *p = data;
	const char *end = data + len;
	LbShared   *ls;
	uint32		b;
	uint32		pg;

	lb_init_ext(g);
	ls = lb_shared(g);
	if (len < sizeof(h))
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("bucket translation table of index \"%s\" is corrupted",
						hi_index_name(g->idx))));
	memcpy(&h, p, sizeof(h));
	p += sizeof(h);
	ls->ts = h.ts;
	ls->working = h.working;
	ls->compactions = h.compactions;
	ls->rewrites = h.rewrites;
	ls->freed = h.freed;
	ls->sealed = h.sealed;
	grow(&ls->btt, &ls->btt_cap, Max(h.nbtt, 1), sizeof(LbBtt));
	ls->nbtt = h.nbtt;
	for (b = 0; b < h.nbtt; b++)
	{
		LbBttDisk	d;
		LbBtt	   *bt = &((LbBtt *) addr(ls->btt))[b];

		if (p + sizeof(d) > end)
			elog(ERROR, "bucket translation table truncated");
		memcpy(&d, p, sizeof(d));
		p += sizeof(d);
		bt->nlive = d.nlive;
		bt->nrec = d.nrec;
		bt->since = d.since;
		bt->flags = d.flags;
		bt->nlist = 0;
		bt->cap = 0;
		bt->list = InvalidDsaPointer;
		if (d.nlist > 0)
		{
			uint32		cap = 0;

			if (p + sizeof(LbRef) * d.nlist > end)
				elog(ERROR, "bucket translation table truncated");
			grow(&bt->list, &cap, d.nlist, sizeof(LbRef));
			bt = &((LbBtt *) addr(ls->btt))[b];
			bt->cap = cap;
			memcpy(lb_list(bt), p, sizeof(LbRef) * d.nlist);
			bt->nlist = d.nlist;
			p += sizeof(LbRef) * d.nlist;
		}
	}
	if (h.nfree_ids > 0)
	{
		grow(&ls->free_ids, &ls->free_ids_cap, h.nfree_ids, sizeof(uint32));
		memcpy(addr(ls->free_ids), p, sizeof(uint32) * h.nfree_ids);
		ls->nfree_ids = h.nfree_ids;
		p += sizeof(uint32) * h.nfree_ids;
	}
	if (h.npages > 0)
	{
		grow(&ls->pages, &ls->pages_cap, h.npages, sizeof(LbPage));
		memcpy(addr(ls->pages), p, sizeof(LbPage) * h.npages);
		p += sizeof(LbPage) * h.npages;
	}
	if (p != end)
		elog(ERROR, "bucket translation table has %d trailing bytes", (int) (end - p));
	/* the compaction queue is not saved: find its candidates again */
	for (pg = 0; pg < h.npages; pg++)
	{
		LbPage	   *lp = lb_page(g, pg);

		lp->flags &= ~LB_PAGE_QUEUED;
		lb_maybe_queue(g, pg);
	}
}

void
lb_free_ext(GridShared *gs)
{
	LbShared   *ls;
	uint32		b;

	if (!DsaPointerIsValid(gs->ext))
		return;
	ls = (LbShared *) addr(gs->ext);
	for (b = 0; b < ls->nbtt; b++)
	{
		LbBtt	   *bt = &((LbBtt *) addr(ls->btt))[b];

		if (DsaPointerIsValid(bt->list))
			dsa_free(hi_dsa(), bt->list);
	}
	if (DsaPointerIsValid(ls->btt))
		dsa_free(hi_dsa(), ls->btt);
	if (DsaPointerIsValid(ls->free_ids))
		dsa_free(hi_dsa(), ls->free_ids);
	if (DsaPointerIsValid(ls->pages))
		dsa_free(hi_dsa(), ls->pages);
	if (DsaPointerIsValid(ls->queue))
		dsa_free(hi_dsa(), ls->queue);
	dsa_free(hi_dsa(), gs->ext);
	gs->ext = InvalidDsaPointer;
}
