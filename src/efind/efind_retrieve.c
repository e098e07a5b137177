/*
 * efind_retrieve.c
 *	  Page retrieval (Alg. 2): the current version of index pages, from
 *	  the three places parts of the index live in.
 *
 *	  - A NEW page exists only in the Write Buffer Table: it is assembled
 *		from its entry (line 3).
 *	  - Otherwise the stored version comes from the Read Buffer Table
 *		(lines 6-7) or from storage (lines 9-11); pages read from storage
 *		pass through the read buffer's replacement policy and the read
 *		queue RQ (line 12, see efind_rbuf.c).
 *	  - A page with modifications in the Write Buffer Table is its stored
 *		version merged with them (lines 13-14).
 *
 * All pages of a call that must come from storage are read in one batch.
 * The caller holds the index's tree_lock, so the write buffer cannot
 * change meanwhile; no efind lock is held during the I/O.
 *
 * Below the paper's buffers, an index without a buffer budget of its own
 * (no reloption buffer_size) reads through the shared page cache, as a
 * GiST index reads through shared buffers: with the paper's 512 kB alone,
 * every insertion's descent read leaves from the device while holding
 * tree_lock (0.60x GiST's single-row INSERT throughput).  With a budget the
 * paper's memory model is kept exactly.  There, flushes hand the new
 * stored versions to the cache as dirty pages (ef_retrieve_write), which
 * eviction and the checkpoint write in batches: an insertion that flushes
 * does not wait for the device while holding tree_lock either.
 */
#include "postgres.h"

#include "cache/page_cache.h"
#include "efind/efind.h"
#include "storage/storage.h"

/* A page-sized buffer aligned for O_DIRECT, living as long as cxt */
char *
ef_alloc_page(MemoryContext cxt, uint32 page_size)
{
	char	   *raw = MemoryContextAlloc(cxt, page_size + HI_IO_ALIGN);

	return (char *) TYPEALIGN(HI_IO_ALIGN, raw);
}

/*
 * Store the flushed versions of n pages: with the paper's buffer model
 * (buffer_size), written at once in one batch; sharing the page cache,
 * handed to it as dirty pages (written by eviction or the checkpoint).
 */
void
ef_retrieve_write(Ef *ef, const uint32 *pagenos, int n, char **pages)
{
	if (ef_shares_cache(ef))
		hi_cache_write_back(ef->idx, pagenos, n, pages);
	else
		hi_store_write(ef->sh, pages, n);
}

/*
 * The current versions of n distinct pages into out[i] (page_size bytes
 * each, HI_IO_ALIGN-aligned).  for_flush: the reads serve a flush.
 */
void
ef_retrieve(Ef *ef, const uint32 *pagenos, int n, char **out, bool for_flush)
{
	EfCounters *c = &ef->slot->c;
	bool	   *done = palloc0(sizeof(bool) * n);
	bool	   *merge = palloc0(sizeof(bool) * n);
	int		   *miss = palloc(sizeof(int) * n);
	char	  **dst = out;
	char	   *scratch = NULL;
	int			nmiss = 0;
	int			nmerge = 0;
	int			i;

	/* lines 1-3: NEW pages come from the write buffer alone */
	LWLockAcquire(&ef->slot->wb_lock, LW_SHARED);
	for (i = 0; i < n; i++)
	{
		EfWbEntry  *e = ef_wb_lookup(ef, pagenos[i]);

		if (e == NULL)
			continue;
		if (!for_flush && ef_memo_get(ef, e, out[i]))
		{
			/* assembled by this backend before, unchanged since */
			done[i] = true;
			pg_atomic_fetch_add_u64(e->status == EF_STATUS_MOD ? &c->wb_merges : &c->wb_new_reads, 1);
			continue;
		}
		if (e->status == EF_STATUS_MOD)
		{
			merge[i] = true;
			nmerge++;
			continue;
		}
		ef_wb_assemble(ef, e, NULL, out[i]);	/* NEW (DEL raises an error) */
		ef_memo_put(ef, e, out[i]);
		done[i] = true;
		pg_atomic_fetch_add_u64(&c->wb_new_reads, 1);
	}
	LWLockRelease(&ef->slot->wb_lock);

	/*
	 * Where each stored version goes: straight into out, or, for a page
	 * still to be merged, into a scratch page that the merge reads (saves
	 * a copy of every merged page, most of an insertion's leaves).
	 */
	if (nmerge > 0)
	{
		uint32		ps = ef->st->page_size;
		int			k = 0;

		scratch = palloc(nmerge * (Size) ps + HI_IO_ALIGN);
		dst = palloc(sizeof(char *) * n);
		for (i = 0; i < n; i++)
			dst[i] = merge[i] ?
				(char *) TYPEALIGN(HI_IO_ALIGN, scratch) + (Size) ps * k++ : out[i];
	}

	/* lines 5-7: stored versions cached in the read buffer */
	LWLockAcquire(&ef->slot->rb_lock, LW_EXCLUSIVE);
	for (i = 0; i < n; i++)
		if (!done[i] && !ef_rb_get(ef, pagenos[i], dst[i]))
			miss[nmiss++] = i;
	LWLockRelease(&ef->slot->rb_lock);

	/* lines 8-12: the others from storage, in one batch */
	if (nmiss > 0)
	{
		uint32	   *mp = palloc(sizeof(uint32) * nmiss);
		char	  **mb = palloc(sizeof(char *) * nmiss);

		for (i = 0; i < nmiss; i++)
		{
			mp[i] = pagenos[miss[i]];
			mb[i] = dst[miss[i]];
		}
		if (ef_shares_cache(ef))
			hi_cache_copy_pages(ef->idx, mp, nmiss, mb);
		else
			hi_store_read(ef->sh, mp, nmiss, mb);
		pg_atomic_fetch_add_u64(&c->storage_reads, nmiss);
		pg_atomic_fetch_add_u64(&c->storage_read_batches, 1);
		if (for_flush)
			pg_atomic_fetch_add_u64(&c->flush_reads, nmiss);

		LWLockAcquire(&ef->slot->rb_lock, LW_EXCLUSIVE);
		for (i = 0; i < nmiss; i++)
			ef_rb_after_read(ef, mp[i], mb[i]);
		LWLockRelease(&ef->slot->rb_lock);
		pfree(mp);
		pfree(mb);
	}

	/* lines 13-14: merge stored versions with buffered modifications */
	if (nmerge > 0)
	{
		LWLockAcquire(&ef->slot->wb_lock, LW_SHARED);
		for (i = 0; i < n; i++)
		{
			EfWbEntry  *e;

			if (!merge[i])
				continue;
			e = ef_wb_lookup(ef, pagenos[i]);
			if (e == NULL || e->status != EF_STATUS_MOD)
				elog(ERROR, "efind: buffered changes of page %u vanished during a read",
					 pagenos[i]);
			ef_wb_assemble(ef, e, dst[i], out[i]);
			ef_memo_put(ef, e, out[i]);
			pg_atomic_fetch_add_u64(&c->wb_merges, 1);
		}
		LWLockRelease(&ef->slot->wb_lock);
	}
	if (scratch)
	{
		pfree(scratch);
		pfree(dst);
	}
	pfree(done);
	pfree(merge);
	pfree(miss);
}
