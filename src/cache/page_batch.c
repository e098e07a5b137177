/*
 * page_batch.c
 *	  A bulk load's batch of new pages: private, aligned page buffers
 *	  written straight to the tier files, hybrid_index.io_depth at a time,
 *	  with clean copies left in the shared page cache for an index without
 *	  a buffer budget of its own.  The R-tree's and the grid's bulk loads
 *	  write every page through one.
 *
 * A page handed out stays in memory, for its builder to finish, until the
 * next request finds the batch full or the batch is flushed.  The buffers
 * are two sets: while the device writes one (hi_store_write_start), the
 * builder fills the other, and a set is waited for only when the builder
 * needs it again.  Written one set at a time, a 5M-point build waited
 * 11 % of its time for its writes, each of its two processes in a
 * parallel one up to a quarter.
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
	b->mem = palloc((Size) 2 * b->max * idx->page_size + HI_IO_ALIGN);
	b->pages = palloc(sizeof(char *) * 2 * b->max);
	b->pagenos = palloc(sizeof(uint32) * b->max);
	for (i = 0; i < 2 * b->max; i++)
		b->pages[i] = (char *) TYPEALIGN(HI_IO_ALIGN, b->mem) + (Size) i * idx->page_size;
	b->set = 0;
	b->n = 0;
	b->flying = false;
}

/* The set in flight is written: its pages are current, copies to the cache */
static void
land(HiPageBatch *b)
{
	HiStoreFlight *f = &b->flight;
	int			i;

	b->flying = false;
	hi_store_write_finish(f);
	if (b->idx->sh->budget_frames == 0)
	{
		for (i = 0; i < f->n; i++)
			b->pagenos[i] = ((HiPageHeader *) f->pages[i])->pageno;
		hi_cache_put_clean(b->idx, b->pagenos, f->n, f->pages);
	}
}

/*
 * Start writing the pages handed out so far (the other set's writes are
 * waited for first) and hand out the other set from now on
 */
static void
send(HiPageBatch *b)
{
	if (b->flying)
		land(b);
	if (b->n == 0)
		return;
	hi_store_write_start(&b->flight, b->idx->sh, b->pages + b->set * b->max, b->n);
	b->flying = true;
	b->set ^= 1;
	b->n = 0;
	CHECK_FOR_INTERRUPTS();
}

/* Write the pages handed out so far, and wait for them */
void
hi_page_batch_flush(HiPageBatch *b)
{
	send(b);
	if (b->flying)
		land(b);
}

/* A zeroed page buffer (the batch written first if it is full) */
char *
hi_page_batch_next(HiPageBatch *b)
{
	char	   *page;

	if (b->n == b->max)
		send(b);
	page = b->pages[b->set * b->max + b->n++];
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
