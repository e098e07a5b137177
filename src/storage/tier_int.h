/*
 * tier_int.h
 *	  Declarations shared by the files of storage/ only.
 */
#ifndef HI_TIER_INT_H
#define HI_TIER_INT_H

#include "postgres.h"

#include "base/hi_base.h"

typedef void (*hi_dir_fn) (const char *dir, Oid spcoid, void *arg);

/* tier_files.c */
extern void hi_foreach_db_dir(Oid dboid, hi_dir_fn fn, void *arg);

/* tier_fds.c */
extern bool hi_fast_tier_lazy(HiIndexShared *sh);

/*
 * page_table.c: the page table and slot maps in the DSA area (also read and
 * written by page_table_mapfile.c)
 */
extern void *hi_pt_grow_array(dsa_pointer *ptr, uint32 *cap, uint32 need, Size elsize);

static inline uint32 *
hi_pt_array(HiIndexShared *sh)
{
	return (uint32 *) dsa_get_address(hi_dsa(), sh->pt);
}

static inline uint8 *
hi_pt_slot_array(HiIndexShared *sh, int tier)
{
	return (uint8 *) dsa_get_address(hi_dsa(), sh->slotmap[tier]);
}

/* tier_remove.c */
extern bool hi_is_oid_name(const char *name);
extern void hi_remove_batch_begin(void);
extern void hi_remove_batch_end(void);

#endif							/* HI_TIER_INT_H */
