/*
 * grid_build_write.c
 *	  The page writer of a grid bulk load: the new sub-directories and
 *	  buckets are built in private page buffers and written straight to
 *	  storage in batches (copies left in the shared page cache, as the grid
 *	  buffers leave them), each page once.
 *
 * Through the grid buffers, every bucket page went through a frame, its
 * CLRU and a flush under the buffers' lock: one process at a time, so a
 * parallel build's two processes could not write together.  Here each
 * process has its own buffers; only page ids and the store's tables are
 * shared, changed under the helper's lock (gw_lock).  Since no page is
 * written twice while both write, no storage slot is reused between
 * them, and the order of their WAL image records does not matter.
 */
#include "postgres.h"

#include "miscadmin.h"

#include "cache/page_cache.h"
#include "grid/grid.h"
#include "grid/grid_int.h"
#include "storage/storage.h"

struct GridWriter
{
	Grid	   *g;
	const HiLoadShared *shared; /* NULL: no helper */
	char	   *mem;
	char	  **pages;
	uint32	   *pagenos;
	int			n;
	int			max;
};

GridWriter *
gw_begin(Grid *g)
{
	GridWriter *w = palloc0(sizeof(GridWriter));
	uint32		psize = g->gs->page_size;
	int			i;

	w->g = g;
	w->max = Max(hi_io_depth, 8);
	w->mem = palloc((Size) w->max * psize + HI_IO_ALIGN);
	w->pages = palloc(sizeof(char *) * w->max);
	w->pagenos = palloc(sizeof(uint32) * w->max);
	for (i = 0; i < w->max; i++)
		w->pages[i] = (char *) TYPEALIGN(HI_IO_ALIGN, w->mem) + (Size) i * psize;
	return w;
}

/* From now on a helper writes the index too (NULL: no longer) */
void
gw_share(GridWriter *w, const HiLoadShared *shared)
{
	w->shared = shared;
}

static void
gw_flush(GridWriter *w)
{
	Grid	   *g = w->g;
	int			i;

	if (w->n == 0)
		return;
	hi_store_write(g->sh, w->pages, w->n);
	if (g->idx != NULL && g->sh->budget_frames == 0)
	{
		for (i = 0; i < w->n; i++)
			w->pagenos[i] = ((HiPageHeader *) w->pages[i])->pageno;
		hi_cache_put_clean(g->idx, w->pagenos, w->n, w->pages);
	}
	w->n = 0;
	CHECK_FOR_INTERRUPTS();
}

/* Write what is pending and free the writer */
void
gw_end(GridWriter *w)
{
	gw_flush(w);
	pfree(w->mem);
	pfree(w->pages);
	pfree(w->pagenos);
	pfree(w);
}

void
gw_lock(GridWriter *w)
{
	if (w->shared != NULL)
		w->shared->lock(w->shared->arg);
}

void
gw_unlock(GridWriter *w)
{
	if (w->shared != NULL)
		w->shared->unlock(w->shared->arg);
}

/* n new page ids */
void
gw_alloc(GridWriter *w, uint32 *pagenos, int n)
{
	int			i;

	gw_lock(w);
	for (i = 0; i < n; i++)
		pagenos[i] = grid_page_alloc(w->g);
	gw_unlock(w);
}

/* A zeroed page of id pageno, its header set; written at the next batch */
char *
gw_page(GridWriter *w, uint32 pageno, uint16 level, uint16 flags)
{
	HiPageHeader *ph;

	if (w->n == w->max)
		gw_flush(w);
	ph = (HiPageHeader *) w->pages[w->n++];
	memset(ph, 0, w->g->gs->page_size);
	ph->pageno = pageno;
	ph->level = level;
	ph->flags = flags;
	ph->link = HI_INVALID_PAGE;
	return (char *) ph;
}
