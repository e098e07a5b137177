/*
 * payload_log.c
 *	  Logging INCLUDE rows (payload.h): a row goes to the redo log (and
 *	  WAL) as HI_LOG_PAYLOAD records: in a tree keyed by (z, TID) first one
 *	  flagged PL_LOG_Z carrying the row's z, then records carrying up to 16
 *	  bytes each of the row in their key, the first flagged PL_LOG_FIRST
 *	  and the last PL_LOG_LAST, written together under tree_lock so nothing
 *	  comes between them; replay puts the row back together and inserts it
 *	  when its last record is applied.  A VACUUM's HI_LOG_PAYLOAD_DEL
 *	  carries the row's z in its key.
 *	  A row cut short (the log's tail lost in a crash) is never inserted.
 *	  The records carry the inserting xid and count as inserts do.
 */
#include "postgres.h"

#include "utils/memutils.h"

#include "payload/payload.h"

#define PL_LOG_FIRST	0x01
#define PL_LOG_LAST		0x02
#define PL_LOG_Z		0x04	/* key holds the z of the row that follows */
#define PL_CHUNK		((int) sizeof(HiBox))

/*
 * Log n rows (keys[i], rows[i] of lens[i] bytes), a write per
 * HI_LOG_WRITE_MAX records.  tree_lock is held exclusively, so the records
 * of a row stay together even across two writes.
 */
void
pl_log_rows(HiIndex *idx, TransactionId xid, const PlKey *keys,
			const char *const *rows, const Size *lens, int n)
{
	bool		z = pl_keyed_z(idx);
	int			nrec = 0;
	HiLogRecord *recs;
	int			r;
	int			o = 0;
	int			done;

	for (r = 0; r < n; r++)
		nrec += Max(1, (int) ((lens[r] + PL_CHUNK - 1) / PL_CHUNK)) + (z ? 1 : 0);
	recs = palloc0(sizeof(HiLogRecord) * nrec);
	for (r = 0; r < n; r++)
	{
		int			k = Max(1, (int) ((lens[r] + PL_CHUNK - 1) / PL_CHUNK));
		int			i;

		if (z)
		{
			recs[o].type = HI_LOG_PAYLOAD;
			recs[o].iskey = 0;
			recs[o].flags = PL_LOG_Z;
			recs[o].xid = xid;
			recs[o].tid = keys[r].tid;
			memcpy(&recs[o].key, &keys[r].z, sizeof(uint64));
			o++;
		}

		for (i = 0; i < k; i++, o++)
		{
			Size		off = (Size) i * PL_CHUNK;
			Size		c = Min((Size) PL_CHUNK, lens[r] - Min(lens[r], off));

			recs[o].type = HI_LOG_PAYLOAD;
			recs[o].iskey = (uint8) c;
			recs[o].flags = (i == 0 ? PL_LOG_FIRST : 0) | (i == k - 1 ? PL_LOG_LAST : 0);
			recs[o].xid = xid;
			recs[o].tid = keys[r].tid;
			if (c > 0)
				memcpy(&recs[o].key, rows[r] + off, c);
		}
	}
	for (done = 0; done < nrec; done += HI_LOG_WRITE_MAX)
		hi_log_append_records(idx, xid, recs + done, Min(nrec - done, HI_LOG_WRITE_MAX));
	pfree(recs);
}

/* the row being put together by replay (one backend replays at a time) */
static char *redo_buf = NULL;
static Size redo_len = 0;
static Size redo_cap = 0;
static PlKey redo_key;
static int	redo_slot;
static uint32 redo_generation;
static bool redo_open = false;

/* the z of the row whose records follow (PL_LOG_Z) */
static PlKey redo_z;
static int	redo_z_slot;
static uint32 redo_z_generation;
static bool redo_z_set = false;

/*
 * Apply a payload record (an AM's redo hands them over); false for any
 * other record.  tree_lock is held exclusively.
 */
bool
pl_redo(HiIndex *idx, const HiLogRecord *rec)
{
	PlKey		key;

	key.tid = rec->tid;
	memcpy(&key.z, &rec->key, sizeof(key.z));
	if (rec->type == HI_LOG_PAYLOAD_DEL)
	{
		if (pl_enabled(idx))
			(void) pl_delete(idx, &key);
		return true;
	}
	if (rec->type != HI_LOG_PAYLOAD)
		return false;
	if (rec->flags & PL_LOG_Z)
	{
		redo_z = key;
		redo_z_slot = idx->slotno;
		redo_z_generation = idx->generation;
		redo_z_set = true;
		return true;
	}
	if (rec->flags & PL_LOG_FIRST)
	{
		bool		has_z = redo_z_set && ItemPointerEquals(&redo_z.tid, &key.tid) &&
			redo_z_slot == idx->slotno && redo_z_generation == idx->generation;

		redo_len = 0;
		redo_key.tid = key.tid;
		redo_key.z = has_z ? redo_z.z : 0;
		redo_z_set = false;
		redo_slot = idx->slotno;
		redo_generation = idx->generation;
		/* a row of a (z, TID) tree without its z is not put anywhere */
		redo_open = has_z || !pl_keyed_z(idx);
		if (!redo_open)
			return true;
	}
	else if (!redo_open || !ItemPointerEquals(&redo_key.tid, &key.tid) ||
			 redo_slot != idx->slotno || redo_generation != idx->generation)
	{
		/* a row whose first records are gone: nothing to insert */
		redo_open = false;
		return true;
	}
	if (redo_buf == NULL)
	{
		redo_cap = 1024;
		redo_buf = MemoryContextAlloc(TopMemoryContext, redo_cap);
	}
	if (redo_len + rec->iskey > redo_cap)
	{
		redo_cap = Max(redo_cap * 2, redo_len + rec->iskey);
		redo_buf = repalloc(redo_buf, redo_cap);
	}
	memcpy(redo_buf + redo_len, &rec->key, rec->iskey);
	redo_len += rec->iskey;
	if (rec->flags & PL_LOG_LAST)
	{
		unsigned short info;

		redo_open = false;
		memcpy(&info, redo_buf, Min(redo_len, sizeof(info)));
		/* the row is whole: its own length says so */
		if (pl_enabled(idx) && redo_len >= sizeof(info) &&
			(Size) (info & INDEX_SIZE_MASK) == redo_len + sizeof(ItemPointerData))
			pl_insert(idx, &redo_key, redo_buf, redo_len);
	}
	return true;
}
