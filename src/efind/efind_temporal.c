/*
 * efind_temporal.c
 *	  The temporal control (section 4.4, Goal 4): reads and writes should
 *	  not interleave on flash.
 *
 * Writes (Alg. 4).  The write queue WQ holds the ids of the pages last
 * written by flushes.  A candidate page is (almost) sequential to them if
 * it lies within seq_distance of one of them, and a stride page if it lies
 * farther than stride_distance from all of them (page ids stand for the
 * pages' places: flushes write copy-on-write into the next free slots, so
 * neighbouring ids written together land together).  A page written
 * again is not its own neighbour.  Seq is preferred when it fills a
 * flushing unit, then Str, then their union, else the input unchanged.
 *
 * Reads (Alg. 5).  After a flush writes a page, a cached copy is replaced
 * by the new version (always: the read buffer must hold stored versions),
 * and a page whose id is in the read queue RQ -- one that is being read --
 * is cached now, so the read that would follow the write hits memory.
 */
#include "postgres.h"

#include "efind/efind.h"

/*
 * Alg. 4: filter the flush candidates.  Returns pages itself or a palloc'd
 * array.  Caller holds wb_lock exclusively (WQ).
 */
uint32 *
ef_tc_filter_writes(Ef *ef, uint32 *pages, int n, int *nout)
{
	EfindState *st = ef->st;
	int			s = st->cfg.flush_unit;
	uint32	   *wq;
	int			nwq = 0;
	uint32	   *seq,
			   *str,
			   *out;
	int			nseq = 0,
				nstr = 0;
	int			i,
				j;

	*nout = n;
	if (!(st->cfg.temporal & EF_TC_WRITES))
		return pages;

	wq = palloc(sizeof(uint32) * Max(st->wq.n, 1));
	for (i = 0; i < (int) st->wq.n; i++)
	{
		uint32		id = ef_ring_get(ef->area, &st->wq, i);

		if (id != EF_NIL)
			wq[nwq++] = id;
	}
	if (nwq == 0)
	{
		/* nothing written yet: no pattern to follow */
		pg_atomic_fetch_add_u64(&ef->slot->c.tcw_input, 1);
		pfree(wq);
		return pages;
	}

	seq = palloc(sizeof(uint32) * n);
	str = palloc(sizeof(uint32) * n);
	for (i = 0; i < n; i++)
	{
		bool		near = false;
		bool		far = true;

		for (j = 0; j < nwq; j++)
		{
			int64		d;

			if (wq[j] == pages[i])
				continue;
			d = (int64) pages[i] - (int64) wq[j];
			if (d < 0)
				d = -d;
			if (d <= st->cfg.seq_distance)
				near = true;
			if (d <= st->cfg.stride_distance)
				far = false;
		}
		if (near)
			seq[nseq++] = pages[i];
		else if (far)
			str[nstr++] = pages[i];
	}
	pfree(wq);

	if (nseq >= s)
	{
		pg_atomic_fetch_add_u64(&ef->slot->c.tcw_sequential, 1);
		pfree(str);
		*nout = nseq;
		return seq;
	}
	if (nstr >= s)
	{
		pg_atomic_fetch_add_u64(&ef->slot->c.tcw_stride, 1);
		pfree(seq);
		*nout = nstr;
		return str;
	}
	if (nseq + nstr >= s)
	{
		pg_atomic_fetch_add_u64(&ef->slot->c.tcw_union, 1);
		out = palloc(sizeof(uint32) * (nseq + nstr));
		memcpy(out, seq, sizeof(uint32) * nseq);
		memcpy(out + nseq, str, sizeof(uint32) * nstr);
		pfree(seq);
		pfree(str);
		*nout = nseq + nstr;
		return out;
	}
	pg_atomic_fetch_add_u64(&ef->slot->c.tcw_input, 1);
	pfree(seq);
	pfree(str);
	return pages;
}

/* Alg. 3, line 15: a written page's id enters WQ (wb_lock exclusive) */
void
ef_tc_note_write(Ef *ef, uint32 pageno)
{
	(void) ef_ring_push(ef->area, &ef->st->wq, pageno);
}

/* Alg. 5 for a page just written with this image (takes rb_lock) */
void
ef_tc_after_write(Ef *ef, uint32 pageno, const char *page)
{
	LWLockAcquire(&ef->slot->rb_lock, LW_EXCLUSIVE);
	if (ef_rb_refresh(ef, pageno, page))
		pg_atomic_fetch_add_u64(&ef->slot->c.tcr_refreshed, 1);
	else if ((ef->st->cfg.temporal & EF_TC_READS) &&
			 ef->st->rb_frames > 0 &&
			 ef_ring_contains(ef->area, &ef->st->rq, pageno))
	{
		ef_rb_force(ef, pageno, page);
		pg_atomic_fetch_add_u64(&ef->slot->c.tcr_precached, 1);
	}
	LWLockRelease(&ef->slot->rb_lock);
}
