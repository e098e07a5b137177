/*
 * lbgrid.h
 *	  LB-Grid (thesis section 3.4): the Grid File's buckets kept as log
 *	  records in log-buckets, found through the Bucket Translation Table.
 *
 * A log-bucket is one page of log records, each (bucket id, operation,
 * timestamp, box, TID).  New records go to the working log-bucket, in the
 * bucket buffer; a full one is sealed and a new one started, and sealed
 * log-buckets reach the device with the CLRU batches.  The BTT maps each
 * logical bucket to the log-buckets holding its records (its list, length
 * L) with per-log-bucket record counts; it and the log-bucket table (live
 * records per log-bucket) live in the DSA area and are saved in the AM
 * blob at checkpoints.
 *
 * A bucket rewritten as a whole (split, merge, compaction) gets a new
 * "since" timestamp and a fresh list: its older records, wherever they
 * are, no longer count.  A log-bucket none of whose records count is
 * freed.
 */
#ifndef LBGRID_H
#define LBGRID_H

#include "grid/grid.h"

#define LB_OP_INSERT	1
#define LB_OP_DELETE	2

typedef struct LbRecord
{
	uint32		bucket;			/* logical bucket id */
	uint8		op;				/* LB_OP_* */
	uint8		kind;			/* HiKeyKind */
	uint8		flags;			/* HI_ENT_* */
	uint8		pad;
	uint64		ts;				/* timestamp: order of the records */
	HiBox		key;			/* box or exact point (flags) */
	ItemPointerData tid;
	uint16		pad2;
} LbRecord;

#define LB_HDR_SIZE		MAXALIGN(sizeof(HiPageHeader))
/* page header flag, beside grid.h's: records in (bucket, ts) order */
#define LB_HDR_SORTED	0x0800
#define LB_RECORDS(p)	((LbRecord *) ((char *) (p) + LB_HDR_SIZE))

/* one log-bucket of a bucket's list, and how many of its records it holds */
typedef struct LbRef
{
	uint32		page;
	uint32		cnt;
} LbRef;

#define LB_BTT_USED		0x0001

/* a BTT entry: one logical bucket */
typedef struct LbBtt
{
	uint32		nlive;			/* entries the bucket holds */
	uint32		nrec;			/* its current records (inserts + deletes) */
	uint64		since;			/* records older than this do not count */
	uint32		nlist;			/* L: log-buckets in the list */
	uint32		cap;
	uint32		flags;
	uint32		pad;
	dsa_pointer list;			/* LbRef[cap] */
} LbBtt;

#define LB_PAGE_LOG		0x01	/* the page is a log-bucket */
#define LB_PAGE_SEALED	0x02	/* full: no more records go there */
#define LB_PAGE_QUEUED	0x04	/* waiting for compaction */

/* the log-bucket table, per logical page id */
typedef struct LbPage
{
	uint32		nref;			/* records that still count */
	uint16		nrec;			/* records written to it */
	uint8		flags;
	uint8		pad;
} LbPage;

typedef struct LbShared
{
	uint64		ts;				/* next timestamp */
	uint32		working;		/* working log-bucket, or HI_INVALID_PAGE */
	dsa_pointer btt;			/* LbBtt[btt_cap] */
	uint32		nbtt;			/* ids handed out */
	uint32		btt_cap;
	dsa_pointer free_ids;		/* freed bucket ids */
	uint32		nfree_ids;
	uint32		free_ids_cap;
	dsa_pointer pages;			/* LbPage[pages_cap] */
	uint32		pages_cap;
	dsa_pointer queue;			/* log-buckets to compact */
	uint32		nqueue;
	uint32		queue_cap;
	uint64		compactions;	/* log-buckets compacted */
	uint64		rewrites;		/* buckets rewritten by L or staleness */
	uint64		freed;			/* log-buckets freed */
	uint64		sealed;			/* log-buckets filled */
} LbShared;

#define LB_QUEUE_CAP	1024

/* lb_btt.c */
extern LbShared *lb_shared(Grid *g);
extern LbBtt *lb_btt(Grid *g, uint32 b);
extern LbRef *lb_list(LbBtt *bt);
extern uint32 lb_btt_new(Grid *g);
extern void lb_btt_free(Grid *g, uint32 b);
extern void lb_list_add_n(Grid *g, LbBtt *bt, uint32 page, uint32 cnt);
extern LbPage *lb_page(Grid *g, uint32 pageno);
extern bool lb_queue_room(Grid *g);
extern void lb_init_ext(Grid *g);
extern void lb_save_ext(Grid *g, StringInfo out);
extern void lb_load_ext(Grid *g, const char *data, Size len);
extern void lb_free_ext(GridShared *gs);

/* lb_store.c */
extern const GridStoreOps lb_store_ops;
extern int	lb_capacity(uint32 page_size);
extern void lb_load(Grid *g, const uint32 *b, int n, GridBucketData *out);
extern void lb_replace(Grid *g, uint32 b, const GridEntry *e, int n);
extern void lb_release_page(Grid *g, uint32 page, uint32 cnt);

/* lb_compact.c */
extern void lb_maybe_queue(Grid *g, uint32 page);
extern void lb_maybe_rewrite(Grid *g, uint32 b);
extern bool lb_after_change(Grid *g);
extern void lb_check(Grid *g, int64 *entries);
extern void lb_inspect(Grid *g, StringInfo json);
extern bool lb_page_info(Grid *g, uint32 pageno, HiPageInfo *info);

extern const char *lbgrid_page_layout(const char *page, uint32 page_size);

#endif							/* LBGRID_H */
