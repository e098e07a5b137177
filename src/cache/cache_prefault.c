/*
 * cache_prefault.c
 *	  A background worker that, once per server start, gives every frame of
 *	  the shared page cache its memory before queries need it.
 *
 * The frames live in PostgreSQL's main shared memory segment, whose pages
 * the kernel allocates and zeroes at their first touch.  Without this, the
 * first query after a start pays that for every frame it reads a page into:
 * perf of a first window over 10,000 partitions spent a third of its page
 * reads' samples allocating shared pages (shmem_alloc_and_add_folio,
 * clear_page) for frames, where GiST's shared buffers, which serve both its
 * index and heap pages, were allocated once.  Backends still map each
 * page at their own first touch (fork does not copy the page tables of a
 * shared mapping), which is far cheaper than allocating it.
 *
 * The worker only reads (MADV_POPULATE_WRITE allocates without writing;
 * where the kernel lacks it, one read per page allocates too), so it
 * never disturbs a frame a backend already uses.  hybrid_index.cache_prefault
 * turns it off for servers that should commit the cache's memory lazily.
 */
#include "postgres.h"

#include <sys/mman.h>

#include "miscadmin.h"
#include "portability/instr_time.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"

#include "cache/cache_int.h"

/* one call of madvise per this much, so that a shutdown is not kept waiting */
#define PREFAULT_CHUNK	(8 * 1024 * 1024)

PGDLLEXPORT void hi_cache_prefault_main(Datum arg);

void
hi_cache_prefault_register(void)
{
	BackgroundWorker bgw;

	if (!hi_cache_prefault)
		return;
	memset(&bgw, 0, sizeof(bgw));
	bgw.bgw_flags = BGWORKER_SHMEM_ACCESS;
	/* shared memory is all it needs: standbys and crash recovery too */
	bgw.bgw_start_time = BgWorkerStart_PostmasterStart;
	bgw.bgw_restart_time = BGW_NEVER_RESTART;
	snprintf(bgw.bgw_library_name, BGW_MAXLEN, "hybrid_index");
	snprintf(bgw.bgw_function_name, BGW_MAXLEN, "hi_cache_prefault_main");
	snprintf(bgw.bgw_name, BGW_MAXLEN, "hybrid_index cache prefault");
	snprintf(bgw.bgw_type, BGW_MAXLEN, "hybrid_index cache prefault");
	RegisterBackgroundWorker(&bgw);
}

/* Allocate the pages of [start, start + len) without changing their bytes */
static void
populate(char *start, Size len, Size page)
{
	char	   *p;

#ifdef MADV_POPULATE_WRITE
	if (madvise(start, len, MADV_POPULATE_WRITE) == 0)
		return;
#endif
	/* an older kernel: a read of a shared page that has none allocates it */
	for (p = start; p < start + len; p += page)
		(void) *(volatile char *) p;
}

void
hi_cache_prefault_main(Datum arg)
{
	Size		page = (Size) sysconf(_SC_PAGESIZE);
	char	   *start;
	char	   *end;
	Size		total;
	instr_time	t0,
				t1;

	pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
	BackgroundWorkerUnblockSignals();

	/* madvise takes whole pages */
	start = (char *) TYPEALIGN(page, cache_frame_data);
	end = (char *) TYPEALIGN_DOWN(page, cache_frame_data +
								  (Size) cache_ctl->nframes * cache_ctl->frame_size);
	total = end > start ? (Size) (end - start) : 0;
	INSTR_TIME_SET_CURRENT(t0);
	while (start < end && !ShutdownRequestPending)
	{
		Size		len = Min((Size) (end - start), (Size) PREFAULT_CHUNK);

		populate(start, len, page);
		start += len;
	}
	INSTR_TIME_SET_CURRENT(t1);
	INSTR_TIME_SUBTRACT(t1, t0);
	if (start >= end)
		elog(DEBUG1, "hybrid_index: page cache memory allocated (%zu MB in %.1f ms)",
			 total / (1024 * 1024), INSTR_TIME_GET_MILLISEC(t1));
	/* exit code 0: done, not to be started again */
	proc_exit(0);
}
