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

/* tier_remove.c */
extern bool hi_is_oid_name(const char *name);
extern void hi_remove_batch_begin(void);
extern void hi_remove_batch_end(void);

#endif							/* HI_TIER_INT_H */
