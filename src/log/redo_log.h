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

struct HiLogRecord
{
	uint32		crc;			/* CRC-32C of the rest of the record */
	uint8		type;
	uint8		iskey;			/* HiKeyKind of the entry */
	uint16		reserved;
	uint64		lsn;
	TransactionId xid;			/* top-level xid; Invalid: apply always */
	HiBox		box;
	ItemPointerData tid;
	uint16		pad;
};

extern void hi_log_append(HiIndex *idx, uint8 type, TransactionId xid,
						  HiKeyKind kind, const HiBox *box, ItemPointer tid);
extern void hi_log_flush(HiIndexShared *sh, uint64 upto);
extern void hi_log_flush_inserted(HiIndexShared *sh);
extern void hi_log_reset(HiIndexShared *sh, uint64 base);
extern uint64 hi_log_size(HiIndexShared *sh);
extern uint64 hi_log_durable_end(Oid dboid, Oid flashspc, Oid relnumber, bool *exists);

/*
 * log/hi_wal.c: the custom WAL resource manager of hybrid_index.  A record
 * says "the redo log of this relfilenode holds every committed change up to
 * this position"; a server replaying WAL into copies of the files (a
 * standby, a restored base backup, PITR) marks the index stale when its copy
 * lacks them, so that it refuses to answer instead of missing rows.
 */
#define HI_RMGR_ID		190		/* see README, "WAL resource manager" */
#define HI_RMGR_NAME	"hybrid_index"

extern void hi_wal_init(void);
extern void hi_wal_log_durable(HiIndexShared *sh, uint64 upto);

extern uint64 hi_log_replay(HiIndex *idx, hi_log_apply_fn apply);
extern void hi_log_at_precommit(void);
extern void hi_log_at_xact_end(void);



#endif							/* HI_REDO_LOG_H */
