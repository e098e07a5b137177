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
#include "grid/grid_buffer_int.h"
#include "grid/grid_int.h"
#include "storage/storage.h"

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
		gbl_free_push(b, d, f);
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
		f = gbl_hash_lookup(b, d, h, pagenos[i]);
		if (f >= 0)
		{
			if (d[f].flags & GB_READING)
			{
				/* its reader needs no more frames: safe to wait pinned */
				*need_wait = true;
				continue;
			}
			d[f].pins++;
			gbl_touch(g, b, d, h, f);
			b->st.hits++;
			pg_atomic_fetch_add_u64(&g->sh->cache_hits, 1);
			pgBufferUsage.shared_blks_hit++;
			frames[i] = f;
			track_pin(g, which, f);
			continue;
		}
		f = gbl_get_frame(g, b, d, h);
		if (f < 0)
		{
			*no_frame = true;
			break;
		}
		d[f].pageno = pagenos[i];
		d[f].flags = GB_READING;
		d[f].pins = 1;
		gbl_hash_insert(b, h, pagenos[i], f);
		gbl_list_push(b, d, f, GB_HOT);
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
		gbl_forget_frame(b, d, h, f);
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
					gbl_forget_frame(b, d, h, f);
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
					gbl_forget_frame(b, d, h, rd[i]);
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
		f = gbl_hash_lookup(b, d, h, pageno);
		if (f >= 0)
		{
			/* a stale copy of a freed page id: reuse its frame */
			d[f].pins++;
			gbl_touch(g, b, d, h, f);
		}
		else
		{
			f = gbl_get_frame(g, b, d, h);
			if (f >= 0)
			{
				d[f].pageno = pageno;
				d[f].pins = 1;
				gbl_hash_insert(b, h, pageno, f);
				gbl_list_push(b, d, f, GB_HOT);
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
	f = gbl_hash_lookup(b, d, h, pageno);
	if (f >= 0)
	{
		if (d[f].pins > 0)
		{
			LWLockRelease(&g->gs->buf_lock);
			elog(ERROR, "grid page %u is freed while pinned", pageno);
		}
		gbl_list_unlink(b, d, f);
		gbl_hash_delete(b, d, h, pageno);
		gbl_free_push(b, d, f);
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
			gbl_write_frames(g, b, d, frames, n);
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
