/*
 * lb_compact.c
 *	  Keeping LB-Grid's space and read cost bounded, which the thesis leaves
 *	  open, and LB-Grid's checks and statistics.
 *
 * Log-buckets hold records that stop counting when their bucket is
 * rewritten (split, merge) or their entry deleted.  Without cleaning, the
 * index would grow without bound under updates and deletes, and a bucket
 * read would fetch ever more log-buckets.  Two triggers, both amortised:
 *
 *	 - log-bucket compaction (the log-structured file system's cleaner): a
 *	   sealed log-bucket whose counting records fall below compact_threshold
 *	   (25 %) of what it holds is compacted: every bucket with records in it
 *	   is rewritten, after which it holds nothing that counts and is freed.
 *	   Below 25 % live, space is at most 4x the live data, and the copying
 *	   per page reclaimed is at most a third of a page of records.  The
 *	   candidates are found when a log-bucket's count drops (no scan), and
 *	   processed a few at a time after each change (after_change), never in
 *	   the middle of one;
 *	 - bucket rewrite: a bucket whose list grew past max_list log-buckets
 *	   (its reads would need more than one batch of the I/O depth, the
 *	   thesis' cost L of a point search), or whose stale records (deleted
 *	   entries and their deletions) outnumber its live entries, is rewritten
 *	   on the spot: reading it costs no more than the work that made it
 *	   stale.
 *
 * Very large buckets (more than twice the capacity: many entries with one
 * centre) are not rewritten for compaction, which would copy them over and
 * over; they are rewritten by their own staleness trigger only.
 */
#include "postgres.h"

#include "miscadmin.h"

#include "grid/grid.h"
#include "lbgrid/lbgrid.h"
#include "core/hi_core.h"

#define LB_COMPACT_PER_CHANGE 4

/* Queue a sealed log-bucket for compaction if it is mostly stale */
void
lb_maybe_queue(Grid *g, uint32 page)
{
	LbShared   *ls = lb_shared(g);
	LbPage	   *lp = lb_page(g, page);

	if ((lp->flags & (LB_PAGE_LOG | LB_PAGE_SEALED)) != (LB_PAGE_LOG | LB_PAGE_SEALED) ||
		(lp->flags & LB_PAGE_QUEUED) || lp->nref == 0 ||
		(uint64) lp->nref * 100 >= (uint64) lp->nrec * g->compact_pct)
		return;
	if (!lb_queue_room(g))
		return;					/* found again when its count drops further */
	((uint32 *) dsa_get_address(hi_dsa(), ls->queue))[ls->nqueue++] = page;
	lp->flags |= LB_PAGE_QUEUED;
}

static void
rewrite(Grid *g, uint32 b)
{
	GridBucketData bd;

	hi_change_touched(g->sh);
	lb_load(g, &b, 1, &bd);
	lb_replace(g, b, bd.e, bd.n);
	pfree(bd.e);
}

/* After a record of bucket b was appended: rewrite it if it is due */
void
lb_maybe_rewrite(Grid *g, uint32 b)
{
	LbBtt	   *bt = lb_btt(g, b);
	uint32		cap = (uint32) g->gs->capacity;
	uint32		stale = bt->nrec - bt->nlive;

	/*
	 * A bucket larger than a log-bucket (entries sharing one centre) needs
	 * that many pages anyway: its limit grows with it, so rewriting it costs
	 * less than one page write per record appended since the last rewrite.
	 */
	uint32		limit = (uint32) g->max_list + (bt->nlive > cap ? 2 * (bt->nlive / cap) : 0);

	if ((g->max_list > 0 && bt->nlist > limit) ||
		(stale > Max(bt->nlive, cap / 4)))
	{
		rewrite(g, b);
		lb_shared(g)->rewrites++;
	}
}

/* Compact one log-bucket: rewrite the buckets whose records count there */
static void
compact(Grid *g, uint32 page)
{
	int			f;
	char	   *pg;
	uint32	   *bs;
	int			nb = 0;
	int			nr;
	int			i;
	uint32		cap = (uint32) g->gs->capacity;

	hi_change_touched(g->sh);
	gbuf_pin(g, GRID_BUF_BUCKET, &page, 1, &f);
	pg = gbuf_page(g, GRID_BUF_BUCKET, f);
	nr = ((HiPageHeader *) pg)->nentries;
	bs = palloc(sizeof(uint32) * Max(nr, 1));
	for (i = 0; i < nr; i++)
	{
		LbRecord   *r = &LB_RECORDS(pg)[i];
		LbShared   *ls = lb_shared(g);
		LbBtt	   *bt;
		int			j;
		bool		dup = false;

		if (r->bucket >= ls->nbtt)
			continue;
		bt = lb_btt(g, r->bucket);
		if (!(bt->flags & LB_BTT_USED) || r->ts < bt->since || bt->nlive > 2 * cap)
			continue;
		for (j = 0; j < nb && !dup; j++)
			dup = bs[j] == r->bucket;
		if (!dup)
			bs[nb++] = r->bucket;
	}
	gbuf_unpin(g, GRID_BUF_BUCKET, f);
	for (i = 0; i < nb; i++)
	{
		rewrite(g, bs[i]);
		CHECK_FOR_INTERRUPTS();
	}
	lb_shared(g)->compactions++;
	pfree(bs);
}

/* Deferred work after a change: a few compactions; true if more wait */
bool
lb_after_change(Grid *g)
{
	int			done = 0;

	while (done < LB_COMPACT_PER_CHANGE)
	{
		LbShared   *ls = lb_shared(g);
		uint32		page;
		LbPage	   *lp;

		if (ls->nqueue == 0)
			break;
		page = ((uint32 *) dsa_get_address(hi_dsa(), ls->queue))[--ls->nqueue];
		lp = lb_page(g, page);
		lp->flags &= ~LB_PAGE_QUEUED;
		if ((lp->flags & (LB_PAGE_LOG | LB_PAGE_SEALED)) != (LB_PAGE_LOG | LB_PAGE_SEALED) ||
			lp->nref == 0 ||
			(uint64) lp->nref * 100 >= (uint64) lp->nrec * g->compact_pct)
			continue;
		compact(g, page);
		done++;
	}
	return lb_shared(g)->nqueue > 0;
}

/*
 * The BTT, the log-bucket table and the log-buckets agree: each list
 * counts exactly the bucket's current records in each log-bucket, and
 * each log-bucket's count of live records is the sum over the lists.
 */
void
lb_check(Grid *g, int64 *entries)
{
	LbShared   *ls = lb_shared(g);
	uint32		npages = Min(ls->pages_cap, g->sh->meta.npages);
	uint32	   *refs = palloc0(sizeof(uint32) * Max(npages, 1));
	uint32		b;
	uint32		p;

	for (b = 0; b < ls->nbtt; b++)
	{
		LbBtt	   *bt = lb_btt(g, b);
		LbRef	   *l = lb_list(bt);
		uint32		sum = 0;
		int			j;

		if (!(bt->flags & LB_BTT_USED))
			continue;
		for (j = 0; j < bt->nlist; j++)
		{
			if (l[j].page >= npages || !(lb_page(g, l[j].page)->flags & LB_PAGE_LOG))
				ereport(ERROR,
						(errcode(ERRCODE_INDEX_CORRUPTED),
						 errmsg("bucket %u lists page %u, which is not a log-bucket", b, l[j].page)));
			refs[l[j].page] += l[j].cnt;
			sum += l[j].cnt;
		}
		if (sum != bt->nrec)
			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("bucket %u lists %u records but counts %u", b, sum, bt->nrec)));
	}
	for (p = 0; p < npages; p++)
	{
		LbPage	   *lp = lb_page(g, p);
		int			f;
		char	   *pg;
		int			i;
		uint32		counted = 0;

		if (!(lp->flags & LB_PAGE_LOG))
			continue;
		if (lp->nref != refs[p])
			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("log-bucket %u counts %u live records, the lists say %u",
							p, lp->nref, refs[p])));
		gbuf_pin(g, GRID_BUF_BUCKET, &p, 1, &f);
		pg = gbuf_page(g, GRID_BUF_BUCKET, f);
		if (((HiPageHeader *) pg)->nentries != lp->nrec)
			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("log-bucket %u holds %u records, the table says %u",
							p, ((HiPageHeader *) pg)->nentries, lp->nrec)));
		for (i = 0; i < lp->nrec; i++)
		{
			LbRecord   *r = &LB_RECORDS(pg)[i];
			LbBtt	   *bt;

			if (r->bucket >= ls->nbtt)
				continue;
			bt = lb_btt(g, r->bucket);
			if ((bt->flags & LB_BTT_USED) && r->ts >= bt->since)
				counted++;
		}
		gbuf_unpin(g, GRID_BUF_BUCKET, f);
		if (counted != lp->nref)
			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("log-bucket %u holds %u current records, the table says %u",
							p, counted, lp->nref)));
		CHECK_FOR_INTERRUPTS();
	}
	pfree(refs);
}

void
lb_inspect(Grid *g, StringInfo json)
{
	LbShared   *ls = lb_shared(g);
	uint32		npages = Min(ls->pages_cap, g->sh->meta.npages);
	uint64		nbuckets = 0;
	uint64		listsum = 0;
	uint32		maxlist = 0;
	uint64		logbuckets = 0;
	uint64		live = 0;
	uint64		records = 0;
	uint32		b;
	uint32		p;

	for (b = 0; b < ls->nbtt; b++)
	{
		LbBtt	   *bt = lb_btt(g, b);

		if (!(bt->flags & LB_BTT_USED))
			continue;
		nbuckets++;
		listsum += bt->nlist;
		maxlist = Max(maxlist, bt->nlist);
	}
	for (p = 0; p < npages; p++)
	{
		LbPage	   *lp = lb_page(g, p);

		if (!(lp->flags & LB_PAGE_LOG))
			continue;
		logbuckets++;
		live += lp->nref;
		records += lp->nrec;
	}
	appendStringInfo(json, "\"btt\": {\"buckets\": %llu, \"avg_list_length\": %.4f, "
					 "\"max_list_length\": %u, \"log_buckets_live\": %llu, "
					 "\"log_buckets_dead\": %llu, \"log_buckets_sealed\": %llu, "
					 "\"records\": %llu, \"records_live\": %llu, \"records_dead\": %llu, "
					 "\"compactions\": %llu, \"rewrites\": %llu, \"compaction_queue\": %u, "
					 "\"working_log_bucket\": %d}",
					 (unsigned long long) nbuckets,
					 nbuckets > 0 ? (double) listsum / nbuckets : 0.0, maxlist,
					 (unsigned long long) logbuckets, (unsigned long long) ls->freed,
					 (unsigned long long) ls->sealed,
					 (unsigned long long) records, (unsigned long long) live,
					 (unsigned long long) (records - live),
					 (unsigned long long) ls->compactions,
					 (unsigned long long) ls->rewrites, ls->nqueue,
					 ls->working == HI_INVALID_PAGE ? -1 : (int) ls->working);
}

/* hybrid_index_pages: log-buckets are level-0 pages of the store */
bool
lb_page_info(Grid *g, uint32 pageno, HiPageInfo *info)
{
	LbShared   *ls = lb_shared(g);
	LbPage	   *lp;

	if (pageno >= ls->pages_cap)
		return false;
	lp = lb_page(g, pageno);
	if (!(lp->flags & LB_PAGE_LOG))
		return false;
	memset(info, 0, sizeof(HiPageInfo));
	info->pageno = pageno;
	info->level = 0;
	info->nentries = lp->nrec;
	return true;
}
