/*
 * redo_log.h
 *	  The per-index redo log (log/redo_log.c).
 */
#ifndef HI_REDO_LOG_H
#define HI_REDO_LOG_H

#include "base/hi_base.h"

typedef struct HiLogRecord HiLogRecord;
typedef void (*hi_log_apply_fn) (HiIndex *idx, const HiLogRecord *rec);

#define HI_LOG_INSERT	1
#define HI_LOG_DELETE	2
#define HI_LOG_COMMIT	3		/* the xid reached commit: its records count */
#define HI_LOG_PAYLOAD	4		/* up to 16 bytes of an INCLUDE row (payload/):
								 * iskey = bytes in key, flags = PL_LOG_* */
#define HI_LOG_PAYLOAD_DEL 5	/* VACUUM removed the INCLUDE row of tid */

struct HiLogRecord
{
	uint32		crc;			/* CRC-32C of the rest of the record */
	uint8		type;
	uint8		iskey;			/* HiKeyKind of the entry */
	uint8		flags;			/* HI_ENT_* of the entry (0 before exact points) */
	uint8		reserved;
	uint64		lsn;
	TransactionId xid;			/* top-level xid; Invalid: apply always */
	HiBox		key;
	ItemPointerData tid;
	uint16		pad;
};

/* records made by the caller (payload/), with their xid's bookkeeping */
extern void hi_log_append_records(HiIndex *idx, TransactionId xid, HiLogRecord *recs,
								  int n);
extern void hi_log_append(HiIndex *idx, uint8 type, TransactionId xid,
						  HiKeyKind kind, const HiBox *key, uint8 flags,
						  ItemPointer tid);
/* most records hi_log_append_inserts writes at once (12 kB) */
#define HI_LOG_WRITE_MAX	256
extern void hi_log_append_inserts(HiIndex *idx, TransactionId xid,
								  const HiKeyItem *items, int n);
extern void hi_log_flush(HiIndexShared *sh, uint64 upto);
extern void hi_log_flush_inserted(HiIndexShared *sh);
extern void hi_log_reset(HiIndexShared *sh, uint64 base);
extern uint64 hi_log_size(HiIndexShared *sh);
extern uint64 hi_log_copy_end(Oid dboid, Oid flashspc, Oid relnumber,
							  uint64 *base, bool *exists, bool *newer);

/*
 * log/hi_wal.c: the custom WAL resource manager of hybrid_index.  WAL
 * carries every record of every index's redo log, the files of every build
 * and every removal, so that a server replaying it into copies of the files
 * (a standby, a restored base backup, PITR) rebuilds the same logs; where
 * its copy lacks what WAL no longer has, the index is marked stale and
 * refuses to answer instead of missing rows.
 */
#define HI_RMGR_ID		190		/* docs/replication.md */
#define HI_RMGR_NAME	"hybrid_index"

extern void hi_wal_init(void);
extern void hi_wal_log_durable(HiIndexShared *sh, uint64 upto);
extern uint64 hi_wal_log_record(HiIndexShared *sh, const HiLogRecord *rec);
extern void hi_wal_log_restart(HiIndexShared *sh, uint64 position, bool flush);
extern void hi_wal_log_synced(HiIndexShared *sh, uint64 position);

/* log/wal_image.c: a build's files streamed into WAL as they are written */
typedef struct HiWalImage HiWalImage;
typedef void (*HiWalImageSink) (void *arg, const char *hdr, Size hlen,
								const char *data, Size dlen);
extern bool hi_wal_image_wanted(HiIndexShared *sh);
extern HiWalImage *hi_wal_image_begin(HiIndexShared *sh, HiWalImageSink sink,
									  void *arg);
extern void hi_wal_image_written(void *arg, int tier, uint64 offset,
								 const char *data, uint32 len);
extern void hi_wal_image_truncated(void *arg, int tier, uint64 len);
extern void hi_wal_image_finish(HiWalImage *img);
extern HiWalImage *hi_wal_image_join(HiIndexShared *sh);
extern void hi_wal_image_leave(HiWalImage *img);
extern void hi_wal_image_abandon(HiWalImage *img);
extern void hi_wal_image_insert(const char *rec, Size len);
extern void hi_wal_image_sync(void);
extern void hi_wal_log_image_map(HiIndexShared *sh);
extern void hi_wal_log_pages(HiIndexShared *sh, const uint32 *ptes,
							 char *const *pages, int n);
extern void hi_wal_log_map(HiIndexShared *sh, const char *image, Size len,
						   uint64 position);

/*
 * Redo of a checkpoint (MAP) rewrites a copy's files: the layer above runs
 * fn(arg) with nobody using the relfilenode's files (a hot standby's
 * readers kept out, its loaded state forgotten).
 */
typedef void (*hi_copy_fn) (void *arg);
typedef void (*hi_wal_exclusive_fn) (Oid dboid, Oid relnumber, hi_copy_fn fn,
									 void *arg);
extern void hi_wal_set_exclusive_hook(hi_wal_exclusive_fn fn);
extern void hi_wal_log_drop(Oid dboid, Oid flashspc, Oid relnumber);

extern uint64 hi_log_replay(HiIndex *idx, hi_log_apply_fn apply, bool live);
extern bool hi_log_has_more(HiIndexShared *sh);
extern uint64 hi_log_follow(HiIndex *idx, hi_log_apply_fn apply);
extern void hi_log_take_over(HiIndexShared *sh);
extern void hi_log_sync(HiIndexShared *sh, bool log_synced, uint64 redo);

/*
 * log/log_sync.c: the background worker that makes every index's log
 * durable before each checkpoint completes, so that commits need not.
 */
extern void hi_log_sync_register(void);
extern void hi_log_sync_set_shutdown_hook(int (*fn) (void));
extern bool hi_log_sync_active(void);
extern void hi_log_at_precommit(void);
extern void hi_log_at_xact_end(void);



#endif							/* HI_REDO_LOG_H */
