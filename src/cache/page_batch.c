/*
 * page_batch.c
 *	  A bulk load's batch of new pages: private, aligned page buffers
 *	  written straight to the tier files, hybrid_index.io_depth at a time
 *	  (hi_store_write), with clean copies left in the shared page cache
 *	  for an index without a buffer budget of its own.  The R-tree's and
 *	  the grid's bulk loads write every page through one.
 *
 * A page handed out stays in memory, for its builder to finish, until the
 * next request finds the batch full or the batch is flushed.
 */
#include "postgres.h"

#include "miscadmin.h"

#include "cache/page_cache.h"
#include "storage/storage.h"

void
hi_page_batch_init(HiPageBatch *b, HiIndex *idx)
{
	int			i;

	b->idx = idx;
	b->max = Max(hi_io_depth, 8);
	b->mem = palloc((Size) b->max * idx->page_size + HI_IO_ALIGN);
	b->pages = palloc(sizeof(char *) * b->max);
	b->pagenos = palloc(sizeof(uint32) * b->max);
	for (i = 0; i < b->max; i++)
		b->pages[i] = (char *) TYPEALIGN(HI_IO_ALIGN, b->mem) + (Size) i * idx->page_size;
	b->n = 0;
}

/* Write the pages handed out so far */
void
hi_page_batch_flush(HiPageBatch *b)
{
	int			i;

	if (b->n == 0)
		return;
	hi_store_write(b->idx->sh, b->pages, b->n);
	if (b->idx->sh->budget_frames == 0)
	{
		for (i = 0; i < b->n; i++)
			b->pagenos[i] = ((HiPageHeader *) b->pages[i])->pageno;
		hi_cache_put_clean(b->idx, b->pagenos, b->n, b->pages);
	}
	b->n = 0;
	CHECK_FOR_INTERRUPTS();
}

/* A zeroed page buffer (the batch written first if it is full) */
char *
hi_page_batch_next(HiPageBatch *b)
{
	char	   *page;

	if (b->n == b->max)
		hi_page_batch_flush(b);
	page = b->pages[b->n++];
	memset(page, 0, b->idx->page_size);
	return page;
}

/* Flush and free */
void
hi_page_batch_end(HiPageBatch *b)
{
	hi_page_batch_flush(b);
	pfree(b->mem);
	pfree(b->pages);
	pfree(b->pagenos);
}
