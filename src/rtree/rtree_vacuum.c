/*
 * rtree_vacuum.c
 *	  Deletion: VACUUM's bulk delete and the redo of a logged deletion.
 *
 * Entries are removed from leaves (and the null list); pages are not
 * merged or freed, and parents' boxes stay as they are (still enclosing,
 * only less tight), like GiST does between REINDEXes.  Every removal is
 * logged and the log is fsynced before ambulkdelete returns, because the
 * heap will reuse the TIDs right after.
 */
#include "postgres.h"

#include "commands/vacuum.h"
#include "miscadmin.h"

#include "rtree/rtree.h"
#include "log/redo_log.h"
#include "core/hi_core.h"
#include "policy/placement.h"

/* Remove dead entries of one leaf-format page; returns how many */
static int
vacuum_page(HiIndex *idx, HiFrame f, IndexBulkDeleteCallback callback,
			void *cb_state, double *remaining, uint64 *count)
{
	char	   *page = rt_data(idx, f);
	HiPageHeader *h = RT_PAGE_HDR(page);
	RtLeafEntry *e = RT_LEAF(page);
	int			removed = 0;
	int			k = 0;

	/*
	 * Each removal is logged first and counted at once (in *count, the
	 * metadata's), and the page is dirty from the first one on: if a log
	 * append fails (a full disk), what was removed stays consistent.
	 */
	while (k < h->nentries)
	{
		if (callback(&e[k].tid, cb_state))
		{
			hi_log_append(idx, HI_LOG_DELETE, InvalidTransactionId,
						  (HiKeyKind) e[k].kind, &e[k].key, e[k].flags, &e[k].tid);
			if (removed == 0)
			{
				rt_begin_write(idx, f);
				rt_mark_dirty(idx, f);
			}
			e[k] = e[h->nentries - 1];
			h->nentries--;
			(*count)--;
			removed++;
			continue;
		}
		k++;
	}
	*remaining += h->nentries;
	if (removed > 0)
		rt_mark_dirty(idx, f);
	return removed;
}

/* Logical ids of every leaf (tree_lock held) */
static uint32 *
collect_leaves(HiIndex *idx, Size *nleaves)
{
	HiIndexShared *sh = idx->sh;
	uint32	   *cur;
	Size		ncur = 1;
	int			level;
	int			chunk = rt_batch_limit(idx);
	HiFrame    *frames = palloc(sizeof(HiFrame) * chunk);

	cur = palloc(sizeof(uint32));
	cur[0] = sh->meta.root;
	for (level = sh->meta.height - 1; level > 0; level--)
	{
		uint32	   *next = palloc_extended(sizeof(uint32) * ncur *
										   rt_internal_capacity(idx->page_size),
										   MCXT_ALLOC_HUGE);
		Size		nnext = 0;
		Size		start;

		for (start = 0; start < ncur; start += chunk)
		{
			int			n = (int) Min((Size) chunk, ncur - start);
			int			i,
						k;

			rt_read_batch(idx, cur + start, n, frames);
			for (i = 0; i < n; i++)
			{
				char	   *page = rt_data(idx, frames[i]);

				for (k = 0; k < RT_PAGE_HDR(page)->nentries; k++)
					next[nnext++] = RT_INTERNAL(page)[k].child;
				rt_release(idx, frames[i]);
			}
		}
		pfree(cur);
		cur = next;
		ncur = nnext;
	}
	pfree(frames);
	*nleaves = ncur;
	return cur;
}

/* What one VACUUM pass over the leaves keeps (hi_vacuum_pass) */
typedef struct RtVacuum
{
	IndexBulkDeleteCallback callback;
	void	   *cb_state;
	double	   *removed;
	double	   *remaining;
	HiFrame    *frames;
	uint32	   *leaves;
} RtVacuum;

static Size
vac_collect(HiIndex *idx, void *arg)
{
	RtVacuum   *v = (RtVacuum *) arg;
	Size		n;

	v->leaves = collect_leaves(idx, &n);
	*v->remaining = 0;
	return n;
}

static void
vac_visit(HiIndex *idx, void *arg, Size start, Size end)
{
	RtVacuum   *v = (RtVacuum *) arg;
	int			n = (int) (end - start);
	int			i;

	rt_read_batch(idx, v->leaves + start, n, v->frames);
	for (i = 0; i < n; i++)
	{
		*v->removed += vacuum_page(idx, v->frames[i], v->callback, v->cb_state,
								   v->remaining, &idx->sh->meta.nentries);
		rt_release(idx, v->frames[i]);
	}
}

static void
vac_end_pass(HiIndex *idx, void *arg)
{
	RtVacuum   *v = (RtVacuum *) arg;

	pfree(v->leaves);
	v->leaves = NULL;
}

static const HiVacuumPass rt_vacuum_pass = {vac_collect, vac_visit, vac_end_pass};

/*
 * VACUUM: remove the entries whose heap tuples are dead.  Leaves are
 * processed a batch at a time under tree_lock held exclusively, so inserts
 * and scans proceed between batches.  A split in between may have moved
 * entries of a leaf not yet processed to a page we do not know: then the
 * pass starts over (what was removed stays removed); after a few restarts
 * the last pass keeps the lock throughout.
 */
void
rt_bulk_delete(HiIndex *idx, IndexBulkDeleteCallback callback, void *cb_state,
			   double *tuples_removed, double *tuples_remaining)
{
	HiIndexShared *sh = idx->sh;
	HiMeta	   *meta = &sh->meta;
	int			chunk = rt_batch_limit(idx);
	RtVacuum	v;
	uint32		pageno;
	int			removed;

	*tuples_removed = 0;
	v.callback = callback;
	v.cb_state = cb_state;
	v.removed = tuples_removed;
	v.remaining = tuples_remaining;
	v.frames = palloc(sizeof(HiFrame) * chunk);
	v.leaves = NULL;
	/* returns with tree_lock held exclusively */
	hi_vacuum_pass(idx, chunk, &rt_vacuum_pass, &v);

	pageno = meta->null_head;
	while (pageno != HI_INVALID_PAGE)
	{
		HiFrame		f = rt_read(idx, pageno);

		removed = vacuum_page(idx, f, callback, cb_state, tuples_remaining,
							  &meta->nnulls);
		*tuples_removed += removed;
		pageno = rt_null_next(rt_data(idx, f));
		rt_release(idx, f);
	}

	/* the heap reuses these TIDs as soon as we return */
	hi_log_flush_inserted(sh);
	hi_index_after_change(idx);
	LWLockRelease(&sh->tree_lock);
	pfree(v.frames);
}

/* Remove one entry in the null list; false if not found */
static bool
delete_null(HiIndex *idx, ItemPointer tid)
{
	uint32		pageno = idx->sh->meta.null_head;

	while (pageno != HI_INVALID_PAGE)
	{
		HiFrame		f = rt_read(idx, pageno);
		char	   *page = rt_data(idx, f);
		HiPageHeader *h = RT_PAGE_HDR(page);
		int			k;

		for (k = 0; k < h->nentries; k++)
			if (ItemPointerEquals(&RT_LEAF(page)[k].tid, tid))
			{
				rt_begin_write(idx, f);
				RT_LEAF(page)[k] = RT_LEAF(page)[h->nentries - 1];
				h->nentries--;
				rt_mark_dirty(idx, f);
				/* count it before the release: efind may flush (and fail) there */
				idx->sh->meta.nnulls--;
				rt_release(idx, f);
				return true;
			}
		pageno = rt_null_next(page);
		rt_release(idx, f);
	}
	return false;
}

/* Depth-first search for the leaf entry (box, tid) under pageno */
static bool
delete_in(HiIndex *idx, uint32 pageno, const HiBox *key, uint8 flags,
		  const HiBox *box, ItemPointer tid)
{
	HiFrame		f = rt_read(idx, pageno);
	char	   *page = rt_data(idx, f);
	HiPageHeader *h = RT_PAGE_HDR(page);
	int			k;

	if (h->level == 0)
	{
		for (k = 0; k < h->nentries; k++)
			if (ItemPointerEquals(&RT_LEAF(page)[k].tid, tid) &&
				RT_LEAF(page)[k].flags == flags &&
				memcmp(&RT_LEAF(page)[k].key, key, sizeof(HiBox)) == 0)
			{
				rt_begin_write(idx, f);
				RT_LEAF(page)[k] = RT_LEAF(page)[h->nentries - 1];
				h->nentries--;
				rt_mark_dirty(idx, f);
				rt_release(idx, f);
				idx->sh->meta.nentries--;
				return true;
			}
		rt_release(idx, f);
		return false;
	}
	for (k = 0; k < h->nentries; k++)
	{
		RtInternalEntry e = RT_INTERNAL(page)[k];

		if (hi_box_contains(&e.box, box))
		{
			if (delete_in(idx, e.child, key, flags, box, tid))
			{
				rt_release(idx, f);
				return true;
			}
			page = rt_data(idx, f);
			h = RT_PAGE_HDR(page);
		}
	}
	rt_release(idx, f);
	return false;
}

/* Redo of a logged deletion (tree_lock held exclusively) */
void
rt_delete_entry(HiIndex *idx, HiKeyKind kind, const HiBox *key, uint8 flags,
				ItemPointer tid)
{
	HiBox		tmp;

	if (kind != HI_KEY_BOX)
		(void) delete_null(idx, tid);
	else
		(void) delete_in(idx, idx->sh->meta.root, key, flags,
						 hi_ent_box(key, flags, &tmp), tid);
}
