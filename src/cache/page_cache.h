/*
 * page_cache.h
 *	  The shared page cache (cache/page_cache.c) and the spill area that
 *	  parks dirty pages while a disk is full (cache/page_spill.c).  The
 *	  cache is only a cache: pages come from and go to the page store
 *	  (storage/storage.h).
 */
#ifndef HI_PAGE_CACHE_H
#define HI_PAGE_CACHE_H

#include "base/hi_base.h"
#include "storage/storage.h"

/* the page source of hyrtree: every page through the shared cache */
extern const HiPageSource hi_cache_source;

extern Size hi_cache_shmem_size(void);
extern void hi_cache_shmem_init(bool found);
extern void hi_cache_prefault_register(void);
extern HiFrame hi_cache_read(HiIndex *idx, uint32 pageno);
extern int	hi_cache_batch_limit(HiIndex *idx);
extern int	hi_cache_ahead_limit(HiIndex *idx);
extern int	hi_cache_frames(void);
extern int	hi_cache_read_batch(HiIndex *idx, const uint32 *pagenos, int n,
								HiFrame *frames);
extern void hi_cache_copy_pages(HiIndex *idx, const uint32 *pagenos, int n,
								char **bufs);
extern void hi_cache_prefetch(HiIndex *idx, const uint32 *pagenos, int n);
extern HiFrame hi_cache_new_page(HiIndex *idx, uint32 pageno);
extern bool hi_cache_holds(HiIndex *idx, uint32 pageno);
extern void hi_cache_write_back(HiIndex *idx, const uint32 *pagenos, int n,
								char *const *pages);
extern void hi_cache_put_clean(HiIndex *idx, const uint32 *pagenos, int n,
							   char *const *pages);
extern char *hi_frame_data(HiFrame f);
extern void hi_frame_begin_write(HiFrame f);
extern void hi_frame_mark_dirty(HiFrame f);
extern void hi_frame_release(HiFrame f);
extern void hi_cache_flush_index(HiIndexShared *sh, int slotno);

/* a bulk load's batch of new pages (cache/page_batch.c) */
typedef struct HiPageBatch
{
	HiIndex    *idx;
	char	   *mem;
	char	  **pages;			/* two sets of max aligned page buffers */
	uint32	   *pagenos;		/* of a set, for the cache's copies */
	int			max;
	int			set;			/* the set pages are handed out from */
	int			n;				/* handed out, not yet written */
	HiStoreFlight flight;		/* the other set's writes */
	bool		flying;
} HiPageBatch;

extern void hi_page_batch_init(HiPageBatch *b, HiIndex *idx);
extern char *hi_page_batch_next(HiPageBatch *b);
extern void hi_page_batch_flush(HiPageBatch *b);
extern void hi_page_batch_end(HiPageBatch *b);

/* dirty pages parked while the disk is full (cache/page_spill.c) */
extern Size hi_spill_shmem_size(int nentries);
extern void hi_spill_shmem_init(int nentries);
extern bool hi_spill_any(void);
extern bool hi_spill_put(uint32 slotno, uint32 generation, uint32 pageno,
						 const char *page, uint32 len);
extern bool hi_spill_has(uint32 slotno, uint32 generation, uint32 pageno);
extern bool hi_spill_take(uint32 slotno, uint32 generation, uint32 pageno, char *dst);
extern void hi_spill_flush(HiIndexShared *sh, int slotno);
extern void hi_spill_discard(int slotno, uint32 generation);

/* forget every page of a dropped or rebuilt relfilenode */
extern void hi_cache_discard_index(int slotno, uint32 generation);
extern void hi_cache_discard_page(HiIndex *idx, uint32 pageno);
extern void hi_cache_release_all(void);
extern void hi_cache_check_pins(void);

#endif							/* HI_PAGE_CACHE_H */
