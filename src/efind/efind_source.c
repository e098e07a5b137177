/*
 * efind_source.c
 *	  eFIND as the page source of the R-tree core (efind_source): the core
 *	  runs its unchanged algorithms (Guttman insertion with quadratic split,
 *	  level-batched search, kNN, deletion), and eFIND changes only how pages
 *	  are read and written, which is the paper's premise (section 4).
 *
 * How the core's page operations map onto eFIND:
 *	  read_batch	Alg. 2 for the pages not pinned yet, into private copies of
 *					this backend (a "frame" is an index into a local handle
 *					array; pinning a page twice gives the same copy);
 *	  new_page		a zeroed private page; it becomes a NEW Write Buffer
 *					Table entry when first recorded;
 *	  begin_write	keeps the version the core is about to change;
 *	  mark_dirty	Alg. 1: the differences between that version and the
 *					changed copy are recorded entry by entry in the Write
 *					Buffer Table (efind_wbuf.c);
 *	  release		records changes not marked yet; when this backend's last
 *					pin goes and it holds tree_lock exclusively (the
 *					maintenance operation is over), flushes until the write
 *					buffer fits its budget (Alg. 1, line 23; Alg. 3);
 *	  flush_all		a checkpoint writes the whole write buffer.
 *
 * Durability (Goal 5, Alg. 7) uses the foundation's log and commit rules
 * instead of a log of its own:
 *	  - eFIND's log of modifications is the index's logical redo log
 *		(log/redo_log.c): every insertion and deletion is appended, with its
 *		transaction id, before the R-tree changes its pages, and a
 *		transaction's records are fsynced before it commits.  One logical
 *		record stands for all entry modifications it causes.
 *	  - Flushes write copy-on-write (cache/page_cache.c): a flushed page
 *		goes to a fresh slot and only the in-memory page table points at
 *		it; the slots the last checkpoint's map file references stay
 *		untouched until the next checkpoint.  After a crash the index
 *		therefore restarts from exactly its last checkpoint, and the FLUSH
 *		records of Alg. 3 line 14 / Alg. 7, which tell the restart which
 *		modifications are already stored, are not needed.
 *	  - A checkpoint is eFIND's log compaction: when the log reaches the
 *		efind log size (reloption log_size, default 10 MB, set as
 *		checkpoint_log_kb of the index), flush_all writes every buffered
 *		page, the map file is written and the log emptied (a stronger
 *		compaction than Alg. 7's, which keeps unflushed modifications in
 *		the new log).
 *	  - Restart (Alg. 7): the first use after a crash loads the last
 *		checkpoint and replays the log through this page source, the
 *		insertions of committed transactions and every deletion; the
 *		replayed operations run Alg. 1 again and so rebuild the Write
 *		Buffer Table, which the checkpoint that ends the replay writes
 *		out (hi_index_open_for in core/hi_index.c).
 */
#include "postgres.h"

#include "access/xact.h"
#include "utils/memutils.h"

#include "cache/page_cache.h"
#include "efind/efind.h"

typedef struct EfHandle
{
	bool		in_use;
	bool		is_new;			/* from new_page, not recorded yet */
	bool		snap_valid;		/* snap holds the version last recorded */
	int			refcount;
	int			slotno;
	uint32		generation;
	uint32		pageno;
	char	   *data;			/* the private copy the core reads and changes */
	char	   *snap;
} EfHandle;

static EfHandle *handles = NULL;
static int	nhandles = 0;
static int	pinned = 0;			/* handles in use, all indexes */

static HiFrame
new_handle(HiIndex *idx, uint32 pageno)
{
	EfHandle   *h;
	int			i;

	for (i = 0; i < nhandles; i++)
		if (!handles[i].in_use)
			break;
	if (i == nhandles)
	{
		int			newn = Max(16, nhandles * 2);

		handles = handles == NULL ?
			MemoryContextAllocZero(TopMemoryContext, sizeof(EfHandle) * newn) :
			repalloc(handles, sizeof(EfHandle) * newn);
		memset(handles + nhandles, 0, sizeof(EfHandle) * (newn - nhandles));
		nhandles = newn;
	}
	h = &handles[i];
	if (h->data == NULL)
		h->data = ef_alloc_page(TopMemoryContext, hi_max_page_size);
	h->in_use = true;
	h->is_new = false;
	h->snap_valid = false;
	h->refcount = 1;
	h->slotno = idx->slotno;
	h->generation = idx->generation;
	h->pageno = pageno;
	pinned++;
	return i;
}

static void
free_handle(EfHandle *h)
{
	h->in_use = false;
	h->is_new = false;
	h->snap_valid = false;
	h->refcount = 0;
	pinned--;
}

/* This backend's copy of a page, if pinned */
static HiFrame
find_pinned(HiIndex *idx, uint32 pageno)
{
	int			i;

	for (i = 0; i < nhandles; i++)
		if (handles[i].in_use && handles[i].pageno == pageno &&
			handles[i].slotno == idx->slotno && handles[i].generation == idx->generation)
			return i;
	return -1;
}

static EfHandle *
handle(HiFrame f)
{
	if (f < 0 || f >= nhandles || !handles[f].in_use)
		elog(ERROR, "efind: frame %d is not pinned", f);
	return &handles[f];
}

static void
src_read_batch(HiIndex *idx, const uint32 *pagenos, int n, HiFrame *frames)
{
	Ef			ef;
	uint32	   *need = palloc(sizeof(uint32) * n);
	char	  **out = palloc(sizeof(char *) * n);
	int			nneed = 0;
	int			i;

	ef_get(idx, &ef);
	for (i = 0; i < n; i++)
	{
		frames[i] = find_pinned(idx, pagenos[i]);
		if (frames[i] >= 0)
		{
			handles[frames[i]].refcount++;
			continue;
		}
		frames[i] = new_handle(idx, pagenos[i]);
		need[nneed] = pagenos[i];
		out[nneed++] = handles[frames[i]].data;
	}
	if (nneed > 0)
		ef_retrieve(&ef, need, nneed, out, false);
	pfree(need);
	pfree(out);
}

static HiFrame
src_new_page(HiIndex *idx, uint32 pageno)
{
	Ef			ef;
	HiFrame		f;
	EfHandle   *h;

	ef_get(idx, &ef);
	if (find_pinned(idx, pageno) >= 0)
		elog(ERROR, "efind: new page %u of index \"%s\" is already in use",
			 pageno, hi_index_name(idx));
	f = new_handle(idx, pageno);
	h = &handles[f];
	memset(h->data, 0, idx->page_size);
	if (h->snap == NULL)
		h->snap = ef_alloc_page(TopMemoryContext, hi_max_page_size);
	memset(h->snap, 0, idx->page_size);
	h->snap_valid = true;
	h->is_new = true;
	return f;
}

static char *
src_data(HiIndex *idx, HiFrame f)
{
	return handle(f)->data;
}

static void
src_begin_write(HiIndex *idx, HiFrame f)
{
	EfHandle   *h = handle(f);

	if (h->snap_valid)
		return;
	if (h->snap == NULL)
		h->snap = ef_alloc_page(TopMemoryContext, hi_max_page_size);
	memcpy(h->snap, h->data, idx->page_size);
	h->snap_valid = true;
}

/* Alg. 1, lines 2-20, for one page */
static void
record(HiIndex *idx, EfHandle *h)
{
	Ef			ef;
	const char *before = h->snap;

	ef_get(idx, &ef);
	if (!h->snap_valid)
	{
		/* changed without begin_write: the current version is the before */
		char	   *cur = ef_alloc_page(CurrentMemoryContext, idx->page_size);

		ef_retrieve(&ef, &h->pageno, 1, &cur, false);
		before = cur;
	}
	if (!h->is_new && memcmp(before, h->data, idx->page_size) == 0)
		return;
	LWLockAcquire(&ef.slot->wb_lock, LW_EXCLUSIVE);
	ef_wb_record(&ef, h->pageno, before, h->data, h->is_new);
	LWLockRelease(&ef.slot->wb_lock);
	if (h->snap == NULL)
		h->snap = ef_alloc_page(TopMemoryContext, hi_max_page_size);
	memcpy(h->snap, h->data, idx->page_size);
	h->snap_valid = true;
	h->is_new = false;
}

static void
src_mark_dirty(HiIndex *idx, HiFrame f)
{
	Assert(LWLockHeldByMeInMode(&idx->sh->tree_lock, LW_EXCLUSIVE));
	record(idx, handle(f));
}

static void
src_release(HiIndex *idx, HiFrame f)
{
	EfHandle   *h = handle(f);

	if (--h->refcount > 0)
		return;
	if (h->is_new || (h->snap_valid && memcmp(h->snap, h->data, idx->page_size) != 0))
		record(idx, h);
	free_handle(h);

	/* the operation is over: make room in the write buffer (Alg. 1 line 23) */
	if (pinned == 0 && LWLockHeldByMeInMode(&idx->sh->tree_lock, LW_EXCLUSIVE))
	{
		Ef			ef;

		ef_get(idx, &ef);
		ef_flush_to_budget(&ef);
	}
}

static int
src_batch_limit(HiIndex *idx)
{
	return Max(1, hi_io_depth);
}

static void
src_flush_all(HiIndex *idx)
{
	Ef			ef;

	ef_get(idx, &ef);
	ef_flush_all(&ef);
	/* what the flushes handed to the shared cache (ef_retrieve_write) */
	hi_cache_flush_index(idx->sh, idx->slotno);
}

/*
 * Pages read ahead stay in memory only through the shared page cache; the
 * paper's read buffer (buffer_size set) holds a few pages, which the
 * insertions' own reads would push out first.
 */
static int
src_ahead_limit(HiIndex *idx)
{
	Ef			ef;

	ef_get(idx, &ef);
	return ef_shares_cache(&ef) ? hi_cache_ahead_limit(idx) : 0;
}

/*
 * Read-ahead of a batch's leaves (rtree_insert_batch.c): their stored
 * versions into the shared page cache, where the insertions' retrieval
 * (Alg. 2) finds them.  Reading them through read_batch would copy each
 * out and merge it with its buffered changes only to drop the copy, which
 * the insertion then does again: a quarter of an insertion's CPU with the
 * index ten times its cache.  NEW pages live in the write buffer alone.
 */
static void
src_read_ahead(HiIndex *idx, const uint32 *pagenos, int n)
{
	Ef			ef;
	uint32	   *need;
	int			nneed = 0;
	int			i;

	ef_get(idx, &ef);
	if (!ef_shares_cache(&ef))
		return;					/* the paper's buffers: nothing kept (ahead_limit 0) */
	need = palloc(sizeof(uint32) * Max(n, 1));
	LWLockAcquire(&ef.slot->wb_lock, LW_SHARED);
	for (i = 0; i < n; i++)
	{
		EfWbEntry  *e = ef_wb_lookup(&ef, pagenos[i]);

		if (e == NULL || e->status == EF_STATUS_MOD)
			need[nneed++] = pagenos[i];
	}
	LWLockRelease(&ef.slot->wb_lock);
	hi_cache_prefetch(idx, need, nneed);
	pfree(need);
}

const HiPageSource efind_source = {
	src_read_batch,
	src_new_page,
	src_data,
	src_begin_write,
	src_mark_dirty,
	src_release,
	src_batch_limit,
	src_flush_all,
	src_ahead_limit,
	src_read_ahead
};

/* An error ended the operation: its private copies are dropped unrecorded */
static void
release_all(void)
{
	int			i;

	for (i = 0; i < nhandles; i++)
		if (handles[i].in_use)
			free_handle(&handles[i]);
	pinned = 0;
}

static void
xact_callback(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT)
		release_all();
}

static void
subxact_callback(SubXactEvent event, SubTransactionId mySubid,
				 SubTransactionId parentSubid, void *arg)
{
	if (event == SUBXACT_EVENT_ABORT_SUB)
		release_all();
}

void
efind_source_init(void)
{
	RegisterXactCallback(xact_callback, NULL);
	RegisterSubXactCallback(subxact_callback, NULL);
}
