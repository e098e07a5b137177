/*
 * grid_buffer.c
 *	  The grid's page buffers (thesis section 3.4.3, Figure 3.5): one for
 *	  directory pages, one for bucket pages (GFFM buckets or log-buckets),
 *	  each a hot LRU list (HLRU) of recently used pages and a cold LRU list
 *	  (CLRU) of dirty pages evicted from the HLRU.  When the CLRU overflows,
 *	  all of it is written as one batch (Algorithm 5), so writes reach the
 *	  device in groups and never interleave with single reads.
 *
 * The buffers live in the DSA area (one pair per index), so every backend
 * sees the same pages, dirty ones included, and do their I/O through
 * hi_store_read / hi_store_write (batched, checksummed, copy-on-write into
 * the tier files): the thesis' memory model, kept exactly, for an index
 * with a buffer budget of its own (reloption buffer_size).  An index
 * without one has no buffers: every gbuf_ call goes to the shared page
 * cache's own frames (grid_buffer_cache.c, GridShared.direct), as GiST's
 * pages stay in shared buffers.  (A state's mode is fixed when it is
 * made; a slot's budget is set before, and a new generation starts at 0.)
 *
 * Locking.  Page contents follow the index's tree_lock: shared to read,
 * exclusive to change, so no one changes a page while another backend reads
 * or writes it.  buf_lock protects the lists, the hash and frame headers.
 * A frame being read in is pinned and marked READING; others wanting it
 * wait without the lock.  A CLRU flush runs under buf_lock (its pages cannot
 * change: whoever flushes holds tree_lock).  Pins are short: a backend pins
 * a batch, copies what it needs and unpins before asking for another batch
 * of the same buffer, so waiting for a frame cannot deadlock.  Pins left by
 * an error are released at (sub)transaction abort (gbuf_release_pins).
 */
#include "postgres.h"

#include "executor/instrument.h"
#include "miscadmin.h"
#include "port/pg_bitutils.h"
#include "utils/memutils.h"

#include "cache/page_cache.h"
#include "grid/grid.h"
#include "grid/grid_int.h"
#include "storage/storage.h"

#define GB_VALID	0x01
#define GB_DIRTY	0x02
#define GB_READING	0x04

#define GB_FREE		0
#define GB_HOT		1
#define GB_COLD		2

typedef struct GridBufDesc
{
	uint32		pageno;
	uint16		flags;
	uint8		list;
	uint8		pad;
	int32		pins;
	int32		prev;
	int32		next;
} GridBufDesc;

/* backend-local record of pins, for release at abort */
typedef struct LocalPin
{
	int			slotno;
	uint32		generation;
	uint64		epoch;			/* of the state pinned (GridShared.epoch) */
	int			which;
	int			frame;
} LocalPin;

static LocalPin *local_pins = NULL;
static int	nlocal = 0;
static int	maxlocal = 0;

#define GB_WAIT_US		50
#define GB_WAIT_MAX		(60 * 1000 * 1000 / GB_WAIT_US)	/* 60 s */

/* Does this index keep its pages in the shared page cache only? */
static inline bool
shares_cache(Grid *g)
{
	return g->gs->direct;
}

static inline GridBuf *
buf_of(Grid *g, int which)
{
	return &g->gs->buf[which];
}

static inline GridBufDesc *
descs_of(GridBuf *b)
{
	return (GridBufDesc *) dsa_get_address(hi_dsa(), b->descs);
}

static inline int32 *
hash_of(GridBuf *b)
{
	return (int32 *) dsa_get_address(hi_dsa(), b->hash);
}

/*
 * Frame pages live in chunks allocated when a frame of theirs is first
 * used, so that a large buffer_size costs memory only as the index's pages
 * fill it (a small index never takes all of it).  Frames are taken in
 * order (the free list starts at frame 0), and the chunks grow: 1, 2, 4,
 * ... 64 frames, then 64 each.  A partition of a few pages so holds a few
 * pages' worth per buffer, not 64 (a megabyte per index at 8 kB pages, a
 * gigabyte of dynamic shared memory for 1,000 partitions queried once).
 */
#define GB_CHUNK_FRAMES 64
#define GB_CHUNK_GEOM	6		/* chunks 0..5 hold 1..32 frames */
#define GB_GEOM_FRAMES	((1 << GB_CHUNK_GEOM) - 1)	/* frames in chunks 0..5 */

static inline int
chunk_no(int f)
{
	if (f < GB_GEOM_FRAMES)
		return pg_leftmost_one_pos32((uint32) f + 1);
	return GB_CHUNK_GEOM + (f - GB_GEOM_FRAMES) / GB_CHUNK_FRAMES;
}

static inline int
chunk_first(int k)
{
	if (k < GB_CHUNK_GEOM)
		return (1 << k) - 1;
	return GB_GEOM_FRAMES + (k - GB_CHUNK_GEOM) * GB_CHUNK_FRAMES;
}

static inline int
chunk_frames(int k)
{
	return k < GB_CHUNK_GEOM ? 1 << k : GB_CHUNK_FRAMES;
}

/* how many chunks nframes frames need */
static inline int
chunk_count(int nframes)
{
	return nframes > 0 ? chunk_no(nframes - 1) + 1 : 0;
}

static inline dsa_pointer *
chunks_of(GridBuf *b)
{
	return (dsa_pointer *) dsa_get_address(hi_dsa(), b->chunks);
}

static inline char *
frame_data(GridShared *gs, GridBuf *b, int f)
{
	int			k = chunk_no(f);
	dsa_pointer c = chunks_of(b)[k];
	char	   *base = (char *) TYPEALIGN(HI_IO_ALIGN, dsa_get_address(hi_dsa(), c));

	return base + (Size) (f - chunk_first(k)) * gs->page_size;
}

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

static int
hash_lookup(GridBuf *b, GridBufDesc *d, int32 *h, uint32 pageno)
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

static void
hash_insert(GridBuf *b, int32 *h, uint32 pageno, int f)
{
	uint32		i = hash_home(b, pageno);

	while (h[i] >= 0)
		i = (i + 1) & (b->hash_cap - 1);
	h[i] = f;
}

static void
hash_delete(GridBuf *b, GridBufDesc *d, int32 *h, uint32 pageno)
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

static void
list_unlink(GridBuf *b, GridBufDesc *d, int f)
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
static void
list_push(GridBuf *b, GridBufDesc *d, int f, int list)
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

static void
free_push(GridBuf *b, GridBufDesc *d, int f)
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
static void
forget_frame(GridBuf *b, GridBufDesc *d, int32 *h, int f)
{
	list_unlink(b, d, f);
	hash_delete(b, d, h, d[f].pageno);
	free_push(b, d, f);
}

/* ---- pins ---- */

static void
track_pin(Grid *g, int which, int f)
{
	if (nlocal == maxlocal)
	{
		maxlocal = Max(32, maxlocal * 2);
		local_pins = local_pins == NULL ?
			MemoryContextAlloc(TopMemoryContext, sizeof(LocalPin) * maxlocal) :
			repalloc(local_pins, sizeof(LocalPin) * maxlocal);
	}
	local_pins[nlocal].slotno = g->idx->slotno;
	local_pins[nlocal].generation = g->idx->generation;
	local_pins[nlocal].epoch = g->gs->epoch;
	local_pins[nlocal].which = which;
	local_pins[nlocal].frame = f;
	nlocal++;
}

static void
untrack_pin(Grid *g, int which, int f)
{
	int			i;

	for (i = nlocal - 1; i >= 0; i--)
		if (local_pins[i].frame == f && local_pins[i].which == which &&
			local_pins[i].slotno == g->idx->slotno &&
			local_pins[i].generation == g->idx->generation)
		{
			local_pins[i] = local_pins[--nlocal];
			return;
		}
}

/* Drop one pin an error left behind, if its state still exists */
static void
release_pin(GridShared *gs, void *arg)
{
	LocalPin   *p = (LocalPin *) arg;
	GridBuf    *b;
	GridBufDesc *d;

	/* the state may have been forgotten and made again since */
	if (gs->epoch != p->epoch)
		return;
	b = &gs->buf[p->which];
	LWLockAcquire(&gs->buf_lock, LW_EXCLUSIVE);
	d = descs_of(b);
	if (d[p->frame].pins > 0)
		d[p->frame].pins--;
	LWLockRelease(&gs->buf_lock);
}

/* At abort: drop the pins an error left behind */
void
gbuf_release_pins(void)
{
	int			i;

	for (i = 0; i < nlocal; i++)
		grid_with_state(local_pins[i].slotno, local_pins[i].generation,
						release_pin, &local_pins[i]);
	nlocal = 0;
}

/* ---- setup ---- */

void
gbuf_init(Grid *g, int which, int hot, int cold)
{
	GridShared *gs = g->gs;
	GridBuf    *b = &gs->buf[which];
	dsa_area   *area = hi_dsa();
	GridBufDesc *d;
	int32	   *h;
	int			f;

	memset(b, 0, sizeof(GridBuf));
	b->hot_cap = Max(hot, 8);
	b->cold_cap = Max(cold, 1);
	b->nframes = b->hot_cap + b->cold_cap;
	if (gs->direct)
	{
		/* no frames: the sizes only bound a batch (gbuf_batch_limit) */
		b->descs = b->hash = b->chunks = InvalidDsaPointer;
		return;
	}
	b->hash_cap = 16;
	while (b->hash_cap < 2 * b->nframes)
		b->hash_cap *= 2;
	b->descs = dsa_allocate_extended(area, sizeof(GridBufDesc) * b->nframes, DSA_ALLOC_HUGE);
	b->hash = dsa_allocate_extended(area, sizeof(int32) * b->hash_cap, DSA_ALLOC_HUGE);
	b->chunks = dsa_allocate_extended(area, sizeof(dsa_pointer) * chunk_count(b->nframes),
									  DSA_ALLOC_HUGE | DSA_ALLOC_ZERO);
	d = descs_of(b);
	h = hash_of(b);
	memset(h, 0xFF, sizeof(int32) * b->hash_cap);
	b->hot_head = b->hot_tail = b->cold_head = b->cold_tail = -1;
	b->free_head = -1;
	for (f = b->nframes - 1; f >= 0; f--)
		free_push(b, d, f);
}

void
gbuf_free(GridShared *gs, int which)
{
	GridBuf    *b = &gs->buf[which];
	dsa_area   *area = hi_dsa();

	if (DsaPointerIsValid(b->descs))
		dsa_free(area, b->descs);
	if (DsaPointerIsValid(b->hash))
		dsa_free(area, b->hash);
	if (DsaPointerIsValid(b->chunks))
	{
		dsa_pointer *c = chunks_of(b);
		int			i;

		for (i = 0; i < chunk_count(b->nframes); i++)
			if (DsaPointerIsValid(c[i]))
				dsa_free(area, c[i]);
		dsa_free(area, b->chunks);
	}
	b->descs = b->hash = b->chunks = InvalidDsaPointer;
}

/* ---- write-out ---- */

/*
 * Write the given dirty frames into their tier files as one batch and
 * mark them clean.  The pages cannot change meanwhile: whoever writes them
 * holds buf_lock, and a change needs tree_lock exclusively.
 */
static void
write_frames(Grid *g, GridBuf *b, GridBufDesc *d, const int *frames, int n)
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
	write_frames(g, b, d, frames, n);
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
				forget_frame(b, d, h, f);
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
		forget_frame(b, d, h, v);
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
		forget_frame(b, d, h, cp);
	}
	list_unlink(b, d, v);
	list_push(b, d, v, GB_COLD);
	return true;
}

/* A free frame, evicting if the HLRU is full; -1 if all are pinned */
static int
get_frame(Grid *g, GridBuf *b, GridBufDesc *d, int32 *h)
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
			forget_frame(b, d, h, f);
		}
		else if (b->cold_tail >= 0)
		{
			ErrorData  *full = flush_cold_for_frame(g, b, d);

			if (full)
				drop_clean(b, d, h, full);
			else
			{
				f = b->cold_tail;
				forget_frame(b, d, h, f);
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
static void
touch(Grid *g, GridBuf *b, GridBufDesc *d, int32 *h, int f)
{
	if (d[f].list == GB_HOT)
	{
		list_unlink(b, d, f);
		list_push(b, d, f, GB_HOT);
		return;
	}
	list_unlink(b, d, f);
	if (b->nhot >= b->hot_cap)
		(void) evict_one(g, b, d, h);	/* f is pinned: not a victim */
	list_push(b, d, f, GB_HOT);
}

static void
wait_a_bit(Grid *g, int *waits)
{
	if (++(*waits) > GB_WAIT_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_RESOURCES),
				 errmsg("buffer of index \"%s\" has no free page",
						hi_index_name(g->idx)),
				 errhint("Raise the index's buffer_size or lower batch_size.")));
	pg_usleep(GB_WAIT_US);
	CHECK_FOR_INTERRUPTS();
}

/*
 * One round of gbuf_pin under buf_lock: pin the pages found, claim frames
 * (marked READING) for the missing ones.  Returns how many to read.
 */
static int
claim_frames(Grid *g, GridBuf *b, int which, const uint32 *pagenos, int n,
			 int *frames, int *rd, uint32 *rdpages, char **bufs,
			 bool *need_wait, bool *no_frame)
{
	GridBufDesc *d = descs_of(b);
	int32	   *h = hash_of(b);
	int			nread = 0;
	int			i;

	for (i = 0; i < n && !*no_frame; i++)
	{
		int			f;

		if (frames[i] >= 0)
			continue;
		f = hash_lookup(b, d, h, pagenos[i]);
		if (f >= 0)
		{
			if (d[f].flags & GB_READING)
			{
				/* its reader needs no more frames: safe to wait pinned */
				*need_wait = true;
				continue;
			}
			d[f].pins++;
			touch(g, b, d, h, f);
			b->st.hits++;
			pg_atomic_fetch_add_u64(&g->sh->cache_hits, 1);
			pgBufferUsage.shared_blks_hit++;
			frames[i] = f;
			track_pin(g, which, f);
			continue;
		}
		f = get_frame(g, b, d, h);
		if (f < 0)
		{
			*no_frame = true;
			break;
		}
		d[f].pageno = pagenos[i];
		d[f].flags = GB_READING;
		d[f].pins = 1;
		hash_insert(b, h, pagenos[i], f);
		list_push(b, d, f, GB_HOT);
		b->st.misses++;
		pg_atomic_fetch_add_u64(&g->sh->cache_misses, 1);
		frames[i] = f;
		track_pin(g, which, f);
		rd[nread] = f;
		rdpages[nread] = pagenos[i];
		bufs[nread] = frame_data(g->gs, b, f);
		nread++;
	}
	return nread;
}

/*
 * A round that failed (a write for a frame failed, or a cancel): the
 * frames it claimed for reading go back, or whoever wants those pages
 * would wait for a read that never comes.  Pins on found pages go at abort.
 */
static void
forget_claims(Grid *g, GridBuf *b, int which, int *frames, int n)
{
	GridBufDesc *d = descs_of(b);
	int32	   *h = hash_of(b);
	int			i;

	for (i = 0; i < n; i++)
	{
		int			f = frames[i];

		if (f < 0 || !(d[f].flags & GB_READING))
			continue;
		forget_frame(b, d, h, f);
		untrack_pin(g, which, f);
		frames[i] = -1;
	}
}

/*
 * Pin n distinct pages (Algorithm 4), reading the missing ones in one
 * batch.  frames[i] receives the frame of pagenos[i].
 */
void
gbuf_pin(Grid *g, int which, const uint32 *pagenos, int n, int *frames)
{
	GridBuf    *b = buf_of(g, which);
	int		   *rd = palloc(sizeof(int) * Max(n, 1));
	uint32	   *rdpages = palloc(sizeof(uint32) * Max(n, 1));
	char	  **bufs = palloc(sizeof(char *) * Max(n, 1));
	int			waits = 0;
	int			i;

	if (g->gs->direct)
	{
		gbc_pin(g, which, pagenos, n, frames);
		pfree(rd);
		pfree(rdpages);
		pfree(bufs);
		return;
	}
	for (i = 0; i < n; i++)
		frames[i] = -1;
	for (;;)
	{
		GridBufDesc *d;
		int32	   *h;
		int			nread = 0;
		bool		need_wait = false;
		bool		no_frame = false;

		LWLockAcquire(&g->gs->buf_lock, LW_EXCLUSIVE);
		PG_TRY();
		{
			nread = claim_frames(g, b, which, pagenos, n, frames, rd, rdpages,
								 bufs, &need_wait, &no_frame);
		}
		PG_CATCH();
		{
			forget_claims(g, b, which, frames, n);
			hi_lwlock_release_cleanup(&g->gs->buf_lock);
			PG_RE_THROW();
		}
		PG_END_TRY();
		d = descs_of(b);
		h = hash_of(b);
		if (no_frame)
		{
			/*
			 * Every frame is pinned.  Waiting while holding our own pins
			 * could deadlock with another backend doing the same: give them
			 * all back (frames reserved for reading are freed) and retry.
			 */
			int			k;

			for (i = 0; i < n; i++)
			{
				int			f = frames[i];
				bool		ours = false;

				if (f < 0)
					continue;
				for (k = 0; k < nread && !ours; k++)
					ours = rd[k] == f;
				if (ours)
				{
					forget_frame(b, d, h, f);
				}
				else
					d[f].pins--;
				untrack_pin(g, which, f);
				frames[i] = -1;
			}
			LWLockRelease(&g->gs->buf_lock);
			wait_a_bit(g, &waits);
			continue;
		}
		LWLockRelease(&g->gs->buf_lock);

		if (nread > 0)
		{
			PG_TRY();
			{
				hi_store_read(g->sh, rdpages, nread, bufs);
			}
			PG_CATCH();
			{
				/* forget the frames we were reading; other pins go at abort */
				LWLockAcquire(&g->gs->buf_lock, LW_EXCLUSIVE);
				d = descs_of(b);
				h = hash_of(b);
				for (i = 0; i < nread; i++)
				{
					forget_frame(b, d, h, rd[i]);
					untrack_pin(g, which, rd[i]);
				}
				hi_lwlock_release_cleanup(&g->gs->buf_lock);
				PG_RE_THROW();
			}
			PG_END_TRY();
			LWLockAcquire(&g->gs->buf_lock, LW_EXCLUSIVE);
			d = descs_of(b);
			for (i = 0; i < nread; i++)
				d[rd[i]].flags = GB_VALID;
			b->st.read_batches++;
			LWLockRelease(&g->gs->buf_lock);
		}
		if (!need_wait)
			break;
		wait_a_bit(g, &waits);
	}
	grid_note_access(g, which, pagenos, frames, n);
	pfree(rd);
	pfree(rdpages);
	pfree(bufs);
}

/* Do this index's buffers read through the shared page cache? */
bool
gbuf_shares_cache(Grid *g)
{
	return shares_cache(g);
}

/*
 * Read ahead (kNN's prefetch, Algorithm 7 line 17) for an index in the
 * shared page cache: the pages it lacks are read in batches and nothing is
 * pinned, so the caller takes their entries only if it gets to them.
 * Warm, it costs a lookup per page.
 */
void
gbuf_prefetch(Grid *g, int which, const uint32 *pagenos, int n)
{
	Assert(shares_cache(g));
	hi_cache_prefetch(g->idx, pagenos, n);
}

/* A zeroed, pinned, dirty page for a new logical page id */
int
gbuf_new(Grid *g, int which, uint32 pageno, uint16 level, uint16 flags)
{
	GridBuf    *b = buf_of(g, which);
	int			waits = 0;
	int			f;
	HiPageHeader *ph;

	if (g->gs->direct)
		return gbc_new(g, pageno, level, flags);
	for (;;)
	{
		GridBufDesc *d;
		int32	   *h;

		LWLockAcquire(&g->gs->buf_lock, LW_EXCLUSIVE);
		d = descs_of(b);
		h = hash_of(b);
		f = hash_lookup(b, d, h, pageno);
		if (f >= 0)
		{
			/* a stale copy of a freed page id: reuse its frame */
			d[f].pins++;
			touch(g, b, d, h, f);
		}
		else
		{
			f = get_frame(g, b, d, h);
			if (f >= 0)
			{
				d[f].pageno = pageno;
				d[f].pins = 1;
				hash_insert(b, h, pageno, f);
				list_push(b, d, f, GB_HOT);
			}
		}
		if (f >= 0)
		{
			d[f].flags = GB_VALID | GB_DIRTY;
			track_pin(g, which, f);
		}
		LWLockRelease(&g->gs->buf_lock);
		if (f >= 0)
			break;
		wait_a_bit(g, &waits);
	}
	ph = (HiPageHeader *) frame_data(g->gs, b, f);
	memset(ph, 0, g->gs->page_size);
	ph->pageno = pageno;
	ph->level = level;
	ph->flags = flags;
	ph->link = HI_INVALID_PAGE;
	return f;
}

char *
gbuf_page(Grid *g, int which, int frame)
{
	if (g->gs->direct)
		return hi_frame_data(frame);
	return frame_data(g->gs, buf_of(g, which), frame);
}

void
gbuf_dirty(Grid *g, int which, int frame)
{
	GridBuf    *b = buf_of(g, which);

	if (g->gs->direct)
	{
		gbc_dirty(g, frame);
		return;
	}
	hi_change_touched(g->sh);
	LWLockAcquire(&g->gs->buf_lock, LW_EXCLUSIVE);
	descs_of(b)[frame].flags |= GB_DIRTY;
	LWLockRelease(&g->gs->buf_lock);
}

void
gbuf_unpin(Grid *g, int which, int frame)
{
	GridBuf    *b = buf_of(g, which);
	GridBufDesc *d;

	if (g->gs->direct)
	{
		hi_frame_release(frame);
		return;
	}
	LWLockAcquire(&g->gs->buf_lock, LW_EXCLUSIVE);
	d = descs_of(b);
	Assert(d[frame].pins > 0);
	d[frame].pins--;
	LWLockRelease(&g->gs->buf_lock);
	untrack_pin(g, which, frame);
}

/* A freed page leaves the buffer without being written */
void
gbuf_drop(Grid *g, int which, uint32 pageno)
{
	GridBuf    *b = buf_of(g, which);
	GridBufDesc *d;
	int32	   *h;
	int			f;

	if (g->gs->direct)
	{
		gbc_drop(g, pageno);
		return;
	}
	LWLockAcquire(&g->gs->buf_lock, LW_EXCLUSIVE);
	d = descs_of(b);
	h = hash_of(b);
	f = hash_lookup(b, d, h, pageno);
	if (f >= 0)
	{
		if (d[f].pins > 0)
		{
			LWLockRelease(&g->gs->buf_lock);
			elog(ERROR, "grid page %u is freed while pinned", pageno);
		}
		list_unlink(b, d, f);
		hash_delete(b, d, h, pageno);
		free_push(b, d, f);
	}
	LWLockRelease(&g->gs->buf_lock);
}

/* Checkpoint: every dirty page of both buffers, in batches */
void
gbuf_flush_all(Grid *g)
{
	int			which;

	/* the cache's dirty frames are the caller's (src_flush_all) */
	if (g->gs->direct)
		return;
	for (which = 0; which < 2; which++)
	{
		GridBuf    *b = buf_of(g, which);
		GridBufDesc *d;
		int		   *frames = palloc(sizeof(int) * b->nframes);
		int			n = 0;
		int			f;

		LWLockAcquire(&g->gs->buf_lock, LW_EXCLUSIVE);
		d = descs_of(b);
		for (f = 0; f < b->nframes; f++)
			if (d[f].list != GB_FREE && (d[f].flags & GB_DIRTY))
				frames[n++] = f;
		PG_TRY();
		{
			write_frames(g, b, d, frames, n);
		}
		PG_FINALLY();
		{
			hi_lwlock_release_cleanup(&g->gs->buf_lock);
		}
		PG_END_TRY();
		pfree(frames);
	}
}

/*
 * Pages one batched read of this buffer may pin: the grid's batch size
 * for buckets (the thesis' LBB), never more than half the HLRU, so that
 * concurrent batches always find frames; in the shared page cache, never
 * more than the cache lets one batch pin either.
 */
int
gbuf_batch_limit(Grid *g, int which)
{
	GridBuf    *b = buf_of(g, which);
	int			limit = Max(b->hot_cap / 2, 1);

	if (which == GRID_BUF_BUCKET && g->batch_pages > 0)
		limit = Min(g->batch_pages, limit);
	if (g->gs->direct)
		limit = Min(limit, hi_cache_batch_limit(g->idx));
	return limit;
}
