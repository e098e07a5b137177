/*
 * rtree_insert_batch.c
 *	  Insertion of a batch of entries (the rows a statement inserted, which
 *	  the access method hands over when they are needed): Guttman's Insert
 *	  for each, grouped by the leaf it goes to, after reading those leaves
 *	  ahead.
 *
 * One insertion reads the leaf it changes.  With the index larger than its
 * memory that is a device read per row, waited for alone while the
 * insertion holds tree_lock.  A batch knows its entries in advance: a
 * descent for each (ChooseLeaf, changing nothing) names their leaves; the
 * entries are ordered by leaf, so that a leaf several of them go to is read
 * once, and each chunk's leaves (as many as the page source keeps in
 * memory, its ahead_limit) are read in batches of the source's limit, so
 * that the device serves them at its queue depth.  Then the chunk's entries
 * go in through the unchanged algorithm, each logged before it goes in as a
 * one-by-one insertion is (the log's order is the order they went in); a
 * leaf that a split changed since the plan is read when an insertion needs
 * it.
 *
 * The plan costs a descent per entry.  It is made only when the batch's
 * first entries read their leaves from the device more than rarely (the
 * index's device read counters say so).
 *
 * Without a plan the entries go in along a Hilbert curve over the batch's
 * extent (NULL and EMPTY first, each group in arrival order): neighbours
 * on the curve mostly share their leaf and inner pages, so an insertion
 * finds the pages the one before it changed still in memory, and eFIND's
 * write buffer collects a leaf's changes before it flushes the leaf
 * instead of one change per flush.  With a plan, each leaf's entries keep
 * that order.
 */
#include "postgres.h"

#include "miscadmin.h"

#include "rtree/rtree.h"
#include "core/hi_core.h"
#include "storage/storage.h"

/* fewer entries than this: nothing worth batching */
#define RT_AHEAD_MIN	8
/* most entries inserted under one hold of tree_lock */
#define RT_CHUNK_MAX	4096

/* The leaf ChooseLeaf takes for box now */
static uint32
choose_leaf(HiIndex *idx, const HiBox *box)
{
	HiMeta	   *meta = &idx->sh->meta;
	uint32		pageno = meta->root;
	int			l;

	for (l = meta->height - 1; l > 0; l--)
	{
		HiFrame		f = rt_read(idx, pageno);
		const char *page = rt_data(idx, f);

		pageno = RT_INTERNAL(page)[rt_choose_entry(page, box)].child;
		rt_release(idx, f);
	}
	return pageno;
}

typedef struct RtPlanned
{
	uint32		leaf;			/* HI_INVALID_PAGE: NULL or EMPTY, no leaf */
	int			item;
} RtPlanned;

static int
cmp_planned(const void *a, const void *b)
{
	const RtPlanned *x = a;
	const RtPlanned *y = b;

	if (x->leaf != y->leaf)
		return x->leaf < y->leaf ? -1 : 1;
	return x->item < y->item ? -1 : x->item > y->item;
}

/*
 * The leaves of n entries, and the order to insert them in: by leaf (by
 * page number), so that the entries of one leaf go in together and it is
 * read once, each leaf's entries in their own order.
 */
static RtPlanned *
plan(HiIndex *idx, const HiKeyItem *items, int n)
{
	RtPlanned  *p = palloc(sizeof(RtPlanned) * n);
	bool		was = idx->maintenance;
	int			i;

	/* the insertions read these pages again: a placement counts those */
	idx->maintenance = true;
	LWLockAcquire(&idx->sh->tree_lock, LW_SHARED);
	for (i = 0; i < n; i++)
	{
		HiBox		tmp;

		p[i].item = i;
		p[i].leaf = items[i].kind == HI_KEY_BOX ?
			choose_leaf(idx, hi_ent_box(&items[i].key, items[i].flags, &tmp)) :
			HI_INVALID_PAGE;
		if ((i & 1023) == 1023)
			CHECK_FOR_INTERRUPTS();
	}
	LWLockRelease(&idx->sh->tree_lock);
	idx->maintenance = was;
	qsort(p, n, sizeof(RtPlanned), cmp_planned);
	return p;
}

/*
 * Bring n distinct pages into memory: through the source's read_ahead, or
 * read in batches and released; tree_lock held
 */
static void
read_ahead(HiIndex *idx, const uint32 *pagenos, int n)
{
	bool		was = idx->maintenance;

	if (n == 0)
		return;
	idx->maintenance = true;	/* as in plan() */
	if (idx->pages->read_ahead)
		idx->pages->read_ahead(idx, pagenos, n);
	else
	{
		int			limit = Max(1, rt_batch_limit(idx));
		HiFrame    *frames = palloc(sizeof(HiFrame) * limit);
		int			i;

		for (i = 0; i < n; i += limit)
		{
			int			k = Min(limit, n - i);
			int			j;

			rt_read_batch(idx, pagenos + i, k, frames);
			for (j = 0; j < k; j++)
				rt_release(idx, frames[j]);
		}
		pfree(frames);
	}
	idx->maintenance = was;
}

static void
apply_insert(void *arg, const HiKeyItem *it)
{
	ItemPointerData tid = it->tid;

	rt_insert_locked((HiIndex *) arg, (HiKeyKind) it->kind, &it->key, it->flags,
					 &tid);
}

/*
 * Insert the k entries from position from (of the plan p, if any) under one
 * hold of tree_lock, their log records written ahead (hi_insert_logged);
 * the nl leaves given are read ahead first.
 */
static void
insert_chunk(HiIndex *idx, const HiKeyItem *items, const RtPlanned *p, int from,
			 int k, const uint32 *leaves, int nl, TransactionId xid)
{
	HiKeyItem  *chunk = NULL;
	int			j;

	if (p)
	{
		chunk = palloc(sizeof(HiKeyItem) * k);
		for (j = 0; j < k; j++)
			chunk[j] = items[p[from + j].item];
	}
	LWLockAcquire(&idx->sh->tree_lock, LW_EXCLUSIVE);
	read_ahead(idx, leaves, nl);
	hi_insert_logged(idx, xid, chunk ? chunk : items + from, k, apply_insert, idx);
	hi_index_after_change(idx);
	LWLockRelease(&idx->sh->tree_lock);
	if (chunk)
		pfree(chunk);
	CHECK_FOR_INTERRUPTS();
}

/*
 * Insert n entries, each logged with xid before it goes in.
 *
 * The entries go in along a Hilbert curve (hi_items_hilbert_order), the
 * first chunk of them without a plan.  If their insertions read from the
 * device more than rarely, the rest are planned and go in by leaf, a chunk
 * at a time: the leaves of a chunk (as many as the page source keeps) are
 * read ahead, then its entries inserted.
 * tree_lock is taken per chunk, so readers wait no longer than for one.
 */
void
rt_insert_batch(HiIndex *idx, const HiKeyItem *items, int n, TransactionId xid)
{
	int			keep = idx->pages->ahead_limit ? idx->pages->ahead_limit(idx) : 0;
	int			probe = Max(RT_AHEAD_MIN, Min(keep, RT_CHUNK_MAX));
	int			k = Min(n, probe);
	uint64		reads = hi_store_device_reads(idx->sh);
	HiKeyItem  *sorted = NULL;
	RtPlanned  *p;
	uint32	   *leaves;
	int			i;

	if (n > 1)
		items = sorted = hi_items_hilbert_order(items, n);
	insert_chunk(idx, items, NULL, 0, k, NULL, 0, xid);

	/* nothing more, or the leaves were in memory: the rest as they come */
	if (n - k < RT_AHEAD_MIN || keep < RT_AHEAD_MIN ||
		!hi_store_reads_often(idx->sh, reads, k))
	{
		for (i = k; i < n; i += probe)
			insert_chunk(idx, items, NULL, i, Min(probe, n - i), NULL, 0, xid);
		if (sorted)
			pfree(sorted);
		return;
	}

	items += k;
	n -= k;
	p = plan(idx, items, n);
	leaves = palloc(sizeof(uint32) * Min(n, keep));
	for (i = 0; i < n;)
	{
		int			nl = 0;
		int			j;

		/* a chunk: entries of at most keep leaves */
		for (j = i; j < n && j - i < RT_CHUNK_MAX; j++)
		{
			if (p[j].leaf == HI_INVALID_PAGE)
				continue;
			if (nl > 0 && leaves[nl - 1] == p[j].leaf)
				continue;
			if (nl == keep)
				break;
			leaves[nl++] = p[j].leaf;
		}
		insert_chunk(idx, items, p, i, j - i, leaves, nl, xid);
		i = j;
	}
	pfree(leaves);
	pfree(p);
	if (sorted)
		pfree(sorted);
}
