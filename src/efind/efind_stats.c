/*
 * efind_stats.c
 *	  What hybrid_index_inspect shows of an efind index (its "efind"
 *	  object: parameters, write buffer, flushes and the last flush's
 *	  choice, temporal control, read buffer, log), and what
 *	  hybrid_index_check verifies beyond the R-tree: the Write Buffer
 *	  Table's invariants and that every page in the read buffer is the
 *	  stored version.
 */
#include "postgres.h"

#include <math.h>

#include "cache/page_cache.h"
#include "efind/efind.h"
#include "storage/storage.h"
#include "log/redo_log.h"

static inline uint64
cnt(pg_atomic_uint64 *c)
{
	return pg_atomic_read_u64(c);
}

static void
json_double(StringInfo buf, double v)
{
	if (isfinite(v))
		appendStringInfo(buf, "%.17g", v);
	else
		appendStringInfoString(buf, "null");
}

static void
append_last_flush(StringInfo buf, const EfLastFlush *l)
{
	uint32		i;

	appendStringInfo(buf, "{\"policy\": \"%s\", \"entries\": %u, \"oldest\": %u, "
					 "\"filtered\": %u, \"units\": %u, \"pages\": %u, \"degree\": ",
					 ef_flush_policy_name(l->policy), l->entries, l->oldest,
					 l->filtered, l->units, l->npages);
	json_double(buf, l->degree);
	appendStringInfoString(buf, ", \"runner_up\": ");
	if (l->runner_up >= 0)
		json_double(buf, l->runner_up);
	else
		appendStringInfoString(buf, "null");
	appendStringInfoString(buf, ", \"alpha\": ");
	json_double(buf, l->alpha);
	appendStringInfoString(buf, ", \"beta\": ");
	json_double(buf, l->beta);
	appendStringInfoString(buf, ", \"total_modified_area\": ");
	json_double(buf, l->total_marea);
	appendStringInfoString(buf, ", \"total_overlap_area\": ");
	json_double(buf, l->total_oarea);
	appendStringInfoString(buf, ", \"unit\": [");
	for (i = 0; i < l->npages && i < EF_LAST_FLUSH_SHOWN; i++)
	{
		appendStringInfo(buf, "%s{\"page\": %u, \"h\": %u, \"mod_count\": %u, \"modified_area\": ",
						 i > 0 ? ", " : "", l->pages[i].pageno, l->pages[i].h,
						 l->pages[i].mod_count);
		json_double(buf, l->pages[i].marea);
		appendStringInfoString(buf, ", \"overlap_area\": ");
		json_double(buf, l->pages[i].oarea);
		appendStringInfoChar(buf, '}');
	}
	appendStringInfoString(buf, "]}");
}

/*
 * hybrid_index_reset_stats: zero the counters of an efind index.  State
 * (the write buffer, the last flush's choice) stays; only what counts
 * events since the last reset is zeroed.
 */
void
ef_reset_stats(HiIndex *idx)
{
	Ef			ef;
	pg_atomic_uint64 *c;
	Size		i;

	ef_get(idx, &ef);
	c = (pg_atomic_uint64 *) &ef.slot->c;
	StaticAssertStmt(sizeof(EfCounters) % sizeof(pg_atomic_uint64) == 0,
					 "EfCounters holds only pg_atomic_uint64 counters");
	for (i = 0; i < sizeof(EfCounters) / sizeof(pg_atomic_uint64); i++)
		pg_atomic_write_u64(&c[i], 0);
}

/* The "efind" object of hybrid_index_inspect */
void
ef_append_json(HiIndex *idx, StringInfo buf)
{
	Ef			ef;
	EfindState *st;
	EfCounters *c;
	EfindConfig cfg;
	EfLastFlush last;
	uint64		wb_bytes;
	uint32		wb_entries,
				wb_status[4],
				wq_n;
	uint32		am_n,
				a1in_n,
				a1out_n,
				rq_n;
	uint64		hits,
				misses,
				flushes;

	ef_get(idx, &ef);
	st = ef.st;
	c = &ef.slot->c;

	LWLockAcquire(&ef.slot->wb_lock, LW_SHARED);
	cfg = st->cfg;
	last = st->last;
	wb_bytes = st->wb_bytes;
	wb_entries = st->wb.n;
	memcpy(wb_status, st->wb_status, sizeof(wb_status));
	wq_n = st->wq.n;
	LWLockRelease(&ef.slot->wb_lock);
	LWLockAcquire(&ef.slot->rb_lock, LW_SHARED);
	am_n = st->am.n;
	a1in_n = st->a1in.n;
	a1out_n = st->rb_frames > 0 ? st->a1out.n : 0;
	rq_n = st->rq.n;
	LWLockRelease(&ef.slot->rb_lock);

	appendStringInfo(buf,
					 "{\"buffer_kb\": %d, \"read_buffer_share\": %d, \"read_buffer_policy\": \"%s\", "
					 "\"flush_policy\": \"%s\", \"flush_percent\": %d, \"flush_unit\": %d, "
					 "\"temporal_control\": \"%s\", \"seq_distance\": %d, \"stride_distance\": %d, "
					 "\"log_size_kb\": %d, ",
					 cfg.buffer_kb, cfg.read_share, ef_read_policy_name(cfg.read_policy),
					 ef_flush_policy_name(cfg.flush_policy), cfg.flush_percent, cfg.flush_unit,
					 ef_temporal_name(cfg.temporal), cfg.seq_distance, cfg.stride_distance,
					 cfg.log_kb);
	appendStringInfo(buf,
					 "\"write_buffer\": {\"budget_bytes\": " UINT64_FORMAT ", \"bytes\": " UINT64_FORMAT
					 ", \"entries\": %u, \"new\": %u, \"mod\": %u, \"del\": %u, "
					 "\"records\": " UINT64_FORMAT ", \"modifications\": " UINT64_FORMAT "}, ",
					 st->write_budget, wb_bytes, wb_entries, wb_status[EF_STATUS_NEW],
					 wb_status[EF_STATUS_MOD], wb_status[EF_STATUS_DEL],
					 cnt(&c->records), cnt(&c->modifications));

	flushes = cnt(&c->flushes);
	appendStringInfo(buf,
					 "\"flushes\": {\"count\": " UINT64_FORMAT ", \"pages\": " UINT64_FORMAT
					 ", \"pages_per_flush\": ",
					 flushes, cnt(&c->flushed_pages));
	json_double(buf, flushes > 0 ? (double) cnt(&c->flushed_pages) / flushes : 0);
	appendStringInfo(buf,
					 ", \"reads\": " UINT64_FORMAT ", \"checkpoint_flushes\": " UINT64_FORMAT
					 ", \"checkpoint_pages\": " UINT64_FORMAT ", \"last\": ",
					 cnt(&c->flush_reads), cnt(&c->ckpt_flushes), cnt(&c->ckpt_pages));
	if (flushes > 0)
		append_last_flush(buf, &last);
	else
		appendStringInfoString(buf, "null");
	appendStringInfoString(buf, "}, ");

	appendStringInfo(buf,
					 "\"temporal\": {\"writes_sequential\": " UINT64_FORMAT
					 ", \"writes_stride\": " UINT64_FORMAT ", \"writes_union\": " UINT64_FORMAT
					 ", \"writes_unfiltered\": " UINT64_FORMAT ", \"reads_refreshed\": " UINT64_FORMAT
					 ", \"reads_precached\": " UINT64_FORMAT ", \"read_queue\": %u, \"write_queue\": %u}, ",
					 cnt(&c->tcw_sequential), cnt(&c->tcw_stride), cnt(&c->tcw_union),
					 cnt(&c->tcw_input), cnt(&c->tcr_refreshed), cnt(&c->tcr_precached),
					 rq_n, wq_n);

	hits = cnt(&c->rb_hits);
	misses = cnt(&c->rb_misses);
	appendStringInfo(buf,
					 "\"read_buffer\": {\"policy\": \"%s\", \"frames\": %u, \"cached\": %u, "
					 "\"am\": %u, \"a1in\": %u, \"a1out\": %u, \"hits\": " UINT64_FORMAT
					 ", \"misses\": " UINT64_FORMAT ", \"hit_ratio\": ",
					 ef_read_policy_name(cfg.read_policy), st->rb_frames, am_n + a1in_n,
					 am_n, a1in_n, a1out_n, hits, misses);
	json_double(buf, hits + misses > 0 ? (double) hits / (hits + misses) : 0);
	appendStringInfo(buf,
					 ", \"admissions\": " UINT64_FORMAT ", \"evictions\": " UINT64_FORMAT "}, ",
					 cnt(&c->rb_admissions), cnt(&c->rb_evictions));

	appendStringInfo(buf,
					 "\"storage_reads\": " UINT64_FORMAT ", \"storage_read_batches\": " UINT64_FORMAT
					 ", \"new_page_reads\": " UINT64_FORMAT ", \"merged_reads\": " UINT64_FORMAT ", ",
					 cnt(&c->storage_reads), cnt(&c->storage_read_batches),
					 cnt(&c->wb_new_reads), cnt(&c->wb_merges));
	appendStringInfo(buf,
					 "\"log\": {\"bytes\": " UINT64_FORMAT ", \"compaction_kb\": %d, "
					 "\"compactions\": " UINT64_FORMAT "}}",
					 hi_log_size(idx->sh), idx->sh->checkpoint_log_kb,
					 cnt(&idx->sh->checkpoints));
}

/*
 * efind's part of hybrid_index_check: the Write Buffer Table's invariants,
 * the read buffer's lists, and every cached page equal to its stored
 * version (Alg. 5 keeps them so after every flush) -- the shared cache's
 * copy where the index shares it (flushes leave pages dirty there).
 */
void
ef_check(HiIndex *idx)
{
	Ef			ef;
	uint32	   *pagenos;
	char	   *pages;
	int			n;
	int			i;

	LWLockAcquire(&idx->sh->tree_lock, LW_SHARED);
	ef_get(idx, &ef);
	LWLockAcquire(&ef.slot->wb_lock, LW_SHARED);
	ef_wb_check(&ef);
	LWLockRelease(&ef.slot->wb_lock);
	LWLockAcquire(&ef.slot->rb_lock, LW_EXCLUSIVE);
	ef_rb_snapshot(&ef, &pagenos, &pages, &n);
	LWLockRelease(&ef.slot->rb_lock);
	for (i = 0; i < n; i++)
	{
		char	   *stored = ef_alloc_page(CurrentMemoryContext, ef.st->page_size);

		if (ef_shares_cache(&ef))
		{
			/* sharing the cache, flushes leave the newest version there */
			HiFrame		f;

			hi_cache_read_batch(idx, &pagenos[i], 1, &f);
			memcpy(stored, hi_frame_data(f), ef.st->page_size);
			hi_frame_release(f);
		}
		else
			hi_store_read(ef.sh, &pagenos[i], 1, &stored);
		/*
		 * The checksum field aside: it is set when a page is written to
		 * its tier file, and a flush into the shared cache hands the read
		 * buffer the page before that
		 */
		if (memcmp(stored + sizeof(uint32),
				   pages + (Size) i * ef.st->page_size + sizeof(uint32),
				   ef.st->page_size - sizeof(uint32)) != 0)
			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("index \"%s\" is corrupted", hi_index_name(idx)),
					 errdetail("The efind read buffer holds a version of page %u that is not its stored version.",
							   pagenos[i])));
	}
	LWLockRelease(&idx->sh->tree_lock);
}
