/*
 * payload.h
 *	  The INCLUDE columns of an index: a B+-tree of rows keyed by heap TID,
 *	  in the index's own pages, beside the access method's structure.
 *
 * An index with INCLUDE columns keeps, for every heap row it indexes, the
 * row's included values (an index tuple of those columns, without its TID)
 * in a tree ordered by TID.  The access method's entries stay as they are
 * (24 bytes: box or point, TID, kind, flags), so the R-trees, the grids,
 * their buckets and log-buckets, eFIND's buffers and the build paths of
 * all four AMs carry nothing new, and range and kNN searches read no more
 * pages than without INCLUDE; an index-only scan looks the included values
 * of the rows it returns up in TID order (payload_tree.c), reading each
 * payload page once.  Inserts append to the rightmost leaf while TIDs
 * grow (a heap filled in order), and a build appends every row in heap
 * order: leaves are packed full.
 *
 * Durability: each row is logged (redo log and WAL) as records of up to 16
 * bytes of its data (payload_log.c), applied at replay like the entries'
 * records; pages are written at the index's checkpoints with the others.
 * Concurrency: changed under tree_lock held exclusively, read under
 * tree_lock shared.  A row that is missing (its records cut by a crash
 * before commit, say) is never made up: the scan takes the value from the
 * heap (am_return.c).
 */
#ifndef HI_PAYLOAD_H
#define HI_PAYLOAD_H

#include "access/itup.h"

#include "base/hi_base.h"
#include "core/hi_core.h"
#include "log/redo_log.h"

/*
 * A payload row as stored: the bytes of an index tuple of the INCLUDE
 * columns from its t_info on (its t_tid is the key).  The largest row a
 * page takes is a quarter of the page, so that a split always has room.
 */
#define PL_MAX_ROW(page_size)	((uint32) ((page_size) / 4))

/* a row handed in or out: the index tuple (t_tid set to the key) */
typedef IndexTuple PlRow;

/* payload_tree.c */
extern void pl_create(HiIndex *idx);
extern bool pl_enabled(HiIndex *idx);
extern void pl_insert(HiIndex *idx, ItemPointer tid, const char *data, Size len);
extern bool pl_delete(HiIndex *idx, ItemPointer tid);
extern Size pl_check(HiIndex *idx);
extern uint32 pl_pages(HiIndex *idx);
/* what is wrong with a payload page read from disk, or NULL */
extern const char *pl_page_layout(const char *page, uint32 page_size);

/*
 * Look up the rows of n TIDs sorted ascending; rows[i] gets a palloc'd
 * index tuple, or NULL when the tree has no row for tids[i].  Under
 * tree_lock shared (taken by the caller).
 */
extern void pl_lookup_sorted(HiIndex *idx, const ItemPointerData *tids, int n,
							 IndexTuple *rows);

/* VACUUM: remove the rows whose TIDs callback says are dead; logged */
extern void pl_bulk_delete(HiIndex *idx, IndexBulkDeleteCallback callback,
						   void *cb_state);

/* payload_log.c */
extern void pl_log_rows(HiIndex *idx, TransactionId xid, const ItemPointerData *tids,
						const char *const *rows, const Size *lens, int n);
extern bool pl_redo(HiIndex *idx, const HiLogRecord *rec);

#endif							/* HI_PAYLOAD_H */
