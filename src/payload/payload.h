/*
 * payload.h
 *	  The INCLUDE columns of an index: a B+-tree of rows keyed by the
 *	  Z-order of the entry's key and the heap TID, in the index's own pages,
 *	  beside the access method's structure.
 *
 * An index with INCLUDE columns keeps, for every heap row it indexes, the
 * row's included values (an index tuple of those columns, without its TID)
 * in a tree ordered by (z, TID), z being the Z-order value of the centre of
 * the row's index entry (am_include.c).  The access method's entries stay
 * as they are (24 bytes: box or point, TID, kind, flags), so the R-trees,
 * the grids, their buckets and log-buckets, eFIND's buffers and the build
 * paths of all four AMs carry nothing new, and range and kNN searches read
 * no more pages than without INCLUDE.  The rows of the entries a spatial
 * search returns lie close together in that order: an index-only scan
 * looks them up sorted by key (payload_tree.c), reading a few payload
 * pages per window instead of one per row (keyed by TID alone, as 0.2.0
 * built them, the rows of a window were as scattered as the heap's).
 * A build sorts the rows by key and packs the leaves full.
 *
 * Trees built by 0.2.0 are keyed by TID alone (PL_KEYS_TID, meta
 * payload_keys 0, pages without HI_PAGE_FLAG_PAYLOAD_Z): they keep working,
 * every key's z being 0 there; REINDEX makes them Z-ordered.
 *
 * Durability: each row is logged (redo log and WAL) as a record of its z
 * and records of up to 16 bytes of its data (payload_log.c), applied at
 * replay like the entries' records; pages are written at the index's
 * checkpoints with the others.  Concurrency: changed under tree_lock held
 * exclusively, read under tree_lock shared.  A row that is missing (its
 * records cut by a crash before commit, say) is never made up: the scan
 * takes the value from the heap (am_return.c).
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

/* how a tree is keyed (HiMeta.payload_keys) */
#define PL_KEYS_TID		0		/* TID alone (0.2.0): every z is 0 */
#define PL_KEYS_Z		1		/* (z, TID) */

/* a row's key: the Z-order of its entry's centre, then its heap TID */
typedef struct PlKey
{
	uint64		z;
	ItemPointerData tid;
} PlKey;

/* payload_tree.c */
extern void pl_create(HiIndex *idx);
extern bool pl_enabled(HiIndex *idx);
extern bool pl_keyed_z(HiIndex *idx);
extern void pl_insert(HiIndex *idx, const PlKey *key, const char *data, Size len);
extern bool pl_delete(HiIndex *idx, const PlKey *key);

/* a build's rows in ascending key order (tree_lock held exclusively) */
typedef struct PlBulk
{
	HiIndex    *idx;
	HiFrame		f;				/* the rightmost leaf, while pinned */
	bool		pinned;
} PlBulk;
extern void pl_bulk_put(PlBulk *b, const PlKey *key, const char *data, Size len);
extern void pl_bulk_end(PlBulk *b);
extern Size pl_check(HiIndex *idx);
extern uint32 pl_pages(HiIndex *idx);
/* what is wrong with a payload page read from disk, or NULL */
extern const char *pl_page_layout(const char *page, uint32 page_size);

/*
 * Look up the rows of n keys sorted ascending (pl_key_cmp); rows[i] gets a
 * palloc'd index tuple (t_tid set), or NULL when the tree has no row for
 * keys[i].  Under tree_lock shared (taken by the caller).
 */
extern void pl_lookup_sorted(HiIndex *idx, const PlKey *keys, int n, IndexTuple *rows);

/* key order: z, then TID */
static inline int
pl_key_cmp(const PlKey *a, const PlKey *b)
{
	BlockNumber ba,
				bb;
	OffsetNumber oa,
				ob;

	if (a->z != b->z)
		return a->z < b->z ? -1 : 1;
	ba = ItemPointerGetBlockNumberNoCheck((ItemPointer) &a->tid);
	bb = ItemPointerGetBlockNumberNoCheck((ItemPointer) &b->tid);
	if (ba != bb)
		return ba < bb ? -1 : 1;
	oa = ItemPointerGetOffsetNumberNoCheck((ItemPointer) &a->tid);
	ob = ItemPointerGetOffsetNumberNoCheck((ItemPointer) &b->tid);
	return oa < ob ? -1 : (oa > ob ? 1 : 0);
}

/* VACUUM: remove the rows whose TIDs callback says are dead; logged */
extern void pl_bulk_delete(HiIndex *idx, IndexBulkDeleteCallback callback,
						   void *cb_state);

/* payload_log.c */
extern void pl_log_rows(HiIndex *idx, TransactionId xid, const PlKey *keys,
						const char *const *rows, const Size *lens, int n);
extern bool pl_redo(HiIndex *idx, const HiLogRecord *rec);

#endif							/* HI_PAYLOAD_H */
