/*
 * grid_buffer_cache.c
 *	  The grid's pages straight from the shared page cache, for an index
 *	  without a buffer budget of its own (no reloption buffer_size).
 *
 * The thesis' buffers (grid_buffer.c: HLRU and CLRU per index, Algorithms
 * 4-5) model a device with a small private memory.  Without a budget the
 * shared page cache is the memory, as shared buffers are GiST's: keeping
 * the thesis' buffers above it copied every page a second time on its
 * first use, into frames of dynamic shared memory each index held until it
 * was unloaded.  Over 1,000 partitions that second copy (and the faults of
 * fresh DSA pages under it) made the first window after a restart 1.4-1.8x
 * GiST's, and every loaded grid held 80-95 kB.  Here a frame the grid code
 * pins is the cache's own frame: one copy, pinned and released as the
 * R-trees pin theirs, written by the cache when it evicts it or at the
 * index's checkpoint (src_flush_all).
 *
 * Locking is the R-trees': page contents follow tree_lock (shared to read,
 * exclusive to change); hi_cache_read_batch returns frames no write-out is
 * touching, and none starts on a pinned frame except the index checkpoint,
 * which holds tree_lock exclusively.  Pins left by an error are released
 * by the cache at abort (hi_cache_release_all).
 *
 * The buffers' counters (hybrid_index_inspect) keep counting hits, misses
 * and read batches; they are statistics, updated without buf_lock.
 */
#include "postgres.h"

#include "cache/page_cache.h"
#include "grid/grid.h"
#include "grid/grid_int.h"

void
gbc_pin(Grid *g, int which, const uint32 *pagenos, int n, int *frames)
{
	GridBuf    *b = &g->gs->buf[which];
	int			nmiss;

	if (n <= 0)
		return;
	nmiss = hi_cache_read_batch(g->idx, pagenos, n, frames);
	b->st.hits += n - nmiss;
	b->st.misses += nmiss;
	if (nmiss > 0)
		b->st.read_batches++;
	grid_note_access(g, which, pagenos, frames, n);
}

/*
 * A zeroed, pinned, dirty page for a new logical page id.  A freed id left
 * the cache when it was freed (gbc_drop); a copy read in since (nothing
 * reads a freed id, but a crash's replay may have) goes first.
 */
int
gbc_new(Grid *g, uint32 pageno, uint16 level, uint16 flags)
{
	HiFrame		f;
	HiPageHeader *ph;

	hi_cache_discard_page(g->idx, pageno);
	f = hi_cache_new_page(g->idx, pageno);
	ph = (HiPageHeader *) hi_frame_data(f);
	ph->pageno = pageno;
	ph->level = level;
	ph->flags = flags;
	ph->link = HI_INVALID_PAGE;
	return f;
}

void
gbc_dirty(Grid *g, int frame)
{
	hi_change_touched(g->sh);
	hi_frame_mark_dirty(frame);
}

/* A freed page leaves the cache without being written */
void
gbc_drop(Grid *g, uint32 pageno)
{
	hi_cache_discard_page(g->idx, pageno);
}
