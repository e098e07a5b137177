/*
 * grid_build_write.c
 *	  The page writer of a grid bulk load: the new sub-directories and
 *	  buckets are built in private page buffers and written straight to
 *	  storage in batches (cache/page_batch.c, copies left in the shared
 *	  page cache as the grid buffers leave them), each page once.
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

#include "cache/page_cache.h"
#include "grid/grid.h"
#include "grid/grid_int.h"

struct GridWriter
{
	Grid	   *g;
	const HiLoadShared *shared; /* NULL: no helper */
	HiPageBatch batch;
};

GridWriter *
gw_begin(Grid *g)
{
	GridWriter *w = palloc0(sizeof(GridWriter));

	w->g = g;
	hi_page_batch_init(&w->batch, g->idx);
	return w;
}

/* From now on a helper writes the index too (NULL: no longer) */
void
gw_share(GridWriter *w, const HiLoadShared *shared)
{
	w->shared = shared;
}

/* Write what is pending and free the writer */
void
gw_end(GridWriter *w)
{
	hi_page_batch_end(&w->batch);
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

/* A zeroed page of id pageno, its header set; written with its batch */
char *
gw_page(GridWriter *w, uint32 pageno, uint16 level, uint16 flags)
{
	HiPageHeader *ph = (HiPageHeader *) hi_page_batch_next(&w->batch);

	ph->pageno = pageno;
	ph->level = level;
	ph->flags = flags;
	ph->link = HI_INVALID_PAGE;
	return (char *) ph;
}
