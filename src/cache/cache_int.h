/*
 * cache_int.h
 *	  What the files of the shared page cache share (cache/page_cache.c:
 *	  lookup, reads, pins and the page source; cache/cache_evict.c: victims,
 *	  write-behind and flushes).  Not for other layers: they use
 *	  cache/page_cache.h.
 */
#ifndef HI_CACHE_INT_H
#define HI_CACHE_INT_H

#include "storage/lwlock.h"
#include "storage/spin.h"
#include "utils/hsearch.h"

#include "cache/page_cache.h"

#define HI_CACHE_PARTITIONS 16
#define HI_MAX_USAGE 5

#define FR_TAG_VALID	0x01
#define FR_VALID		0x02
#define FR_DIRTY		0x04
#define FR_IO			0x08

typedef struct HiFrameTag
{
	uint32		slotno;
	uint32		generation;
	uint32		pageno;
} HiFrameTag;

typedef struct HiFrameDesc
{
	HiFrameTag	tag;
	slock_t		hdr;
	uint16		flags;
	uint16		usage;
	int32		refcount;
} HiFrameDesc;

typedef struct HiMapEntry
{
	HiFrameTag	tag;
	int			frame;
} HiMapEntry;

typedef struct HiCacheCtl
{
	int			nframes;
	int			frame_size;
	pg_atomic_uint32 clock;
} HiCacheCtl;

extern HiCacheCtl *cache_ctl;
extern HiFrameDesc *cache_descs;
extern char *cache_frame_data;
extern HTAB *cache_frame_map;
extern LWLockPadded *cache_part_locks;
extern int32 *cache_local_pins;

/* page_cache.c */
extern void cache_ensure_local(void);
extern LWLock *cache_part_lock(uint32 hash);
extern void cache_unpin(HiFrame f);
extern void cache_wait_io(HiFrame f);
extern HiFrame cache_lookup_pin(const HiFrameTag *tag);

/* cache_discard.c */
extern HiFrame cache_mapped_frame(int slotno, uint32 generation, uint32 pageno);

/*
 * Are an index's npages few enough to look each up in the frame map rather
 * than scan every frame (a partition's index: flushes and discards)?
 */
static inline bool
cache_by_page(uint32 npages)
{
	return npages > 0 && npages < (uint32) cache_ctl->nframes / 32;
}

/* cache_evict.c */
extern void cache_flush_frames(HiFrame *frames, int n);
extern void cache_end_io(HiFrame f);
extern void cache_return_victim(HiFrame f);
extern void cache_get_free_frames(HiIndex *idx, HiFrame *out, int n);

#endif							/* HI_CACHE_INT_H */
