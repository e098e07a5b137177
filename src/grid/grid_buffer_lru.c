/*
 * grid_buffer_lru.c
 *	  The frames of a grid's own buffers (indexes with a buffer_size): the
 *	  page hash, the hot LRU list (HLRU) of recently used pages and the cold
 *	  LRU list (CLRU) of dirty pages evicted from it, written as one batch
 *	  when it overflows (thesis section 3.4.3, Algorithms 4-5).  Callers
 *	  hold buf_lock (grid_buffer.c).
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/memutils.h"

#include "grid/grid_buffer_int.h"
#include "storage/storage.h"

/* Give frame f's chunk its memory before f is first used (buf_lock held) */
static void
ensure_chunk(GridShared *gs, GridBuf *b, int f)
{
	int			k = chunk_no(f);
	dsa_pointer *c = chunks_of(b) + k;

	if (!DsaPointerIsValid(*c))
		*c = dsa_allocate_extended(hi_dsa(),
								   (Size) chunk_frames(k) * gs->page_size + HI_IO_ALIGN,
								   DSA_ALLOC_HUGE);
}

static inline uint32
hash_home(GridBuf *b, uint32 pageno)
{
	return (pageno * 2654435761U) & (b->hash_cap - 1);
}

/* ---- hash: open addressing, linear probing, backward-shift deletion ---- */

int
gbl_hash_lookup(GridBuf *b, GridBufDesc *d, int32 *h, uint32 pageno)
{
	uint32		i = hash_home(b, pageno);

	while (h[i] >= 0)
	{
		if (d[h[i]].pageno == pageno)
			return h[i];
		i = (i + 1) & (b->hash_cap - 1);
	}
	return -1;
}

void
gbl_hash_insert(GridBuf *b, int32 *h, uint32 pageno, int f)
{
	uint32		i = hash_home(b, pageno);

	while (h[i] >= 0)
		i = (i + 1) & (b->hash_cap - 1);
	h[i] = f;
}

void
gbl_hash_delete(GridBuf *b, GridBufDesc *d, int32 *h, uint32 pageno)
{
	uint32		mask = b->hash_cap - 1;
	uint32		i = hash_home(b, pageno);
	uint32		j;

	while (h[i] >= 0 && d[h[i]].pageno != pageno)
		i = (i + 1) & mask;
	if (h[i] < 0)
		return;
	h[i] = -1;
	j = i;
	for (;;)
	{
		uint32		k;

		j = (j + 1) & mask;
		if (h[j] < 0)
			break;
		k = hash_home(b, d[h[j]].pageno);
		/* move h[j] back to i unless its home lies cyclically in (i, j] */
		if ((j > i && (k <= i || k > j)) || (j < i && k <= i && k > j))
		{
			h[i] = h[j];
			h[j] = -1;
			i = j;
		}
	}
}

/* ---- lists ---- */

void
gbl_list_unlink(GridBuf *b, GridBufDesc *d, int f)
{
	GridBufDesc *x = &d[f];
	int		   *head = x->list == GB_HOT ? &b->hot_head : &b->cold_head;
	int		   *tail = x->list == GB_HOT ? &b->hot_tail : &b->cold_tail;

	Assert(x->list == GB_HOT || x->list == GB_COLD);
	if (x->prev >= 0)
		d[x->prev].next = x->next;
	else
		*head = x->next;
	if (x->next >= 0)
		d[x->next].prev = x->prev;
	else
		*tail = x->prev;
	if (x->list == GB_HOT)
		b->nhot--;
	else
		b->ncold--;
	x->list = GB_FREE;
	x->prev = x->next = -1;
}

/* Put f at the MRU end of the hot or cold list */
void
gbl_list_push(GridBuf *b, GridBufDesc *d, int f, int list)
{
	int		   *head = list == GB_HOT ? &b->hot_head : &b->cold_head;
	int		   *tail = list == GB_HOT ? &b->hot_tail : &b->cold_tail;

	d[f].list = list;
	d[f].prev = -1;
	d[f].next = *head;
	if (*head >= 0)
		d[*head].prev = f;
	*head = f;
	if (*tail < 0)
		*tail = f;
	if (list == GB_HOT)
		b->nhot++;
	else
		b->ncold++;
}

void
gbl_free_push(GridBuf *b, GridBufDesc *d, int f)
{
	d[f].list = GB_FREE;
	d[f].flags = 0;
	d[f].pins = 0;
	d[f].pageno = HI_INVALID_PAGE;
	d[f].prev = -1;
	d[f].next = b->free_head;
	b->free_head = f;
}

/* A frame leaves its list and the hash and becomes free */
void
gbl_forget_frame(GridBuf *b, GridBufDesc *d, int32 *h, int f)
{
	gbl_list_unlink(b, d, f);
	gbl_hash_delete(b, d, h, d[f].pageno);
	gbl_free_push(b, d, f);
}

/* ---- write-out ---- */

/*
 * Write the given dirty frames into their tier files as one batch and
 * mark them clean.  The pages cannot change meanwhile: whoever writes them
 * holds buf_lock, and a change needs tree_lock exclusively.
 */
void
gbl_write_frames(Grid *g, GridBuf *b, GridBufDesc *d, const int *frames, int n)
{
	char	  **pages;
	int			i;

	if (n == 0)
		return;
	pages = palloc(sizeof(char *) * n);
	for (i = 0; i < n; i++)
		pages[i] = frame_data(g->gs, b, frames[i]);
	hi_store_write(g->sh, pages, n);
	for (i = 0; i < n; i++)
		d[frames[i]].flags &= ~GB_DIRTY;
	b->st.pages_flushed += n;
	pfree(pages);
}

/* Algorithm 5, lines 4-7: write the whole CLRU in one batch */
static void
flush_cold(Grid *g, GridBuf *b, GridBufDesc *d)
{
	int		   *frames = palloc(sizeof(int) * Max(b->ncold, 1));
	int			n = 0;
	int			f;

	for (f = b->cold_head; f >= 0; f = d[f].next)
		if (d[f].flags & GB_DIRTY)
			frames[n++] = f;
	gbl_write_frames(g, b, d, frames, n);
	b->st.cold_flushes++;
	pfree(frames);
}

/*
 * Flush the CLRU for a frame.  A reader on a full disk gets the error back
 * instead (the pages stay dirty and cached) and takes a clean frame: reads
 * keep working on a full disk, and so does loading an index (replaying its
 * log).  A change (tree_lock held exclusively) fails with it, rather than
 * fill the buffer with dirty pages that reads could not evict.
 */
static ErrorData *
flush_cold_for_frame(Grid *g, GridBuf *b, GridBufDesc *d)
{
	MemoryContext cxt = CurrentMemoryContext;
	uint32		holdoff = InterruptHoldoffCount;
	ErrorData  *full = NULL;

	if (!hi_replaying && LWLockHeldByMeInMode(&g->sh->tree_lock, LW_EXCLUSIVE))
	{
		flush_cold(g, b, d);
		return NULL;
	}
	PG_TRY();
	{
		flush_cold(g, b, d);
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		if (edata->sqlerrcode != ERRCODE_DISK_FULL)
			PG_RE_THROW();
		hi_error_handled(holdoff);
		full = edata;
	}
	PG_END_TRY();
	return full;
}

/*
 * Free the least recently used clean, unpinned frame (hot list first, so
 * that the lists keep their sizes); re-raise full if there is none.
 */
static void
drop_clean(GridBuf *b, GridBufDesc *d, int32 *h, ErrorData *full)
{
	int			lists[2] = {b->hot_tail, b->cold_tail};
	int			i;

	for (i = 0; i < 2; i++)
	{
		int			f;

		for (f = lists[i]; f >= 0; f = d[f].prev)
			if (d[f].pins == 0 && d[f].flags == GB_VALID)
			{
				gbl_forget_frame(b, d, h, f);
				FreeErrorData(full);
				return;
			}
	}
	ReThrowError(full);
}

/*
 * Algorithm 5: make room in a full HLRU.  The least recently used unpinned
 * page leaves it: a clean one is dropped, a dirty one moves to the CLRU,
 * which is first flushed as a batch and its least recently used (now
 * clean) page dropped if it is full.  False if every hot page is pinned.
 */
static bool
evict_one(Grid *g, GridBuf *b, GridBufDesc *d, int32 *h)
{
	int			v;
	ErrorData  *full;

	for (v = b->hot_tail; v >= 0; v = d[v].prev)
		if (d[v].pins == 0 && !(d[v].flags & GB_READING))
			break;
	if (v < 0)
		return false;
	b->st.evictions++;
	if (!(d[v].flags & GB_DIRTY))
	{
		gbl_forget_frame(b, d, h, v);
		return true;
	}
	if (b->ncold >= b->cold_cap)
	{
		int			cp = b->cold_tail;

		if ((d[cp].flags & GB_DIRTY) && (full = flush_cold_for_frame(g, b, d)) != NULL)
		{
			drop_clean(b, d, h, full);
			return true;
		}
		/* CLRU pages are never pinned (pinning moves them to the HLRU) */
		Assert(d[cp].pins == 0);
		gbl_forget_frame(b, d, h, cp);
	}
	gbl_list_unlink(b, d, v);
	gbl_list_push(b, d, v, GB_COLD);
	return true;
}

/* A free frame, evicting if the HLRU is full; -1 if all are pinned */
int
gbl_get_frame(Grid *g, GridBuf *b, GridBufDesc *d, int32 *h)
{
	int			f;

	if (b->nhot >= b->hot_cap && !evict_one(g, b, d, h))
		return -1;
	if (b->free_head < 0)
	{
		/* hot below capacity: the CLRU holds the rest, drop a clean one */
		for (f = b->cold_tail; f >= 0; f = d[f].prev)
			if (!(d[f].flags & GB_DIRTY))
				break;
		if (f >= 0)
		{
			gbl_forget_frame(b, d, h, f);
		}
		else if (b->cold_tail >= 0)
		{
			ErrorData  *full = flush_cold_for_frame(g, b, d);

			if (full)
				drop_clean(b, d, h, full);
			else
			{
				f = b->cold_tail;
				gbl_forget_frame(b, d, h, f);
			}
		}
		if (b->free_head < 0)
			return -1;
	}
	f = b->free_head;
	ensure_chunk(g->gs, b, f);
	b->free_head = d[f].next;
	d[f].next = -1;
	return f;
}

/* Algorithm 4, lines 1-11: a page found in the buffer becomes MRU of HLRU */
void
gbl_touch(Grid *g, GridBuf *b, GridBufDesc *d, int32 *h, int f)
{
	if (d[f].list == GB_HOT)
	{
		gbl_list_unlink(b, d, f);
		gbl_list_push(b, d, f, GB_HOT);
		return;
	}
	gbl_list_unlink(b, d, f);
	if (b->nhot >= b->hot_cap)
		(void) evict_one(g, b, d, h);	/* f is pinned: not a victim */
	gbl_list_push(b, d, f, GB_HOT);
}
