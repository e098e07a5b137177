/*
 * payload_log.c
 *	  Logging INCLUDE rows (payload.h): a row goes to the redo log (and
 *	  WAL) as HI_LOG_PAYLOAD records carrying up to 16 bytes each in their
 *	  key, the first flagged PL_LOG_FIRST and the last PL_LOG_LAST, written
 *	  together under tree_lock so nothing comes between them; replay puts
 *	  the row back together and inserts it when its last record is applied.
 *	  A row cut short (the log's tail lost in a crash) is never inserted.
 *	  The records carry the inserting xid and count as inserts do.
 */
#include "postgres.h"

#include "utils/memutils.h"

#include "payload/payload.h"

#define PL_LOG_FIRST	0x01
#define PL_LOG_LAST		0x02
#define PL_CHUNK		((int) sizeof(HiBox))

/*
 * Log n rows (tids[i], rows[i] of lens[i] bytes), a write per
 * HI_LOG_WRITE_MAX records.  tree_lock is held exclusively, so the records
 * of a row stay together even across two writes.
 */
void
pl_log_rows(HiIndex *idx, TransactionId xid, const ItemPointerData *tids,
			const char *const *rows, const Size *lens, int n)
{
	int			nrec = 0;
	HiLogRecord *recs;
	int			r;
	int			o = 0;
	int			done;

	for (r = 0; r < n; r++)
		nrec += Max(1, (int) ((lens[r] + PL_CHUNK - 1) / PL_CHUNK));
	recs = palloc0(sizeof(HiLogRecord) * nrec);
	for (r = 0; r < n; r++)
	{
		int			k = Max(1, (int) ((lens[r] + PL_CHUNK - 1) / PL_CHUNK));
		int			i;

		for (i = 0; i < k; i++, o++)
		{
			Size		off = (Size) i * PL_CHUNK;
			Size		c = Min((Size) PL_CHUNK, lens[r] - Min(lens[r], off));

			recs[o].type = HI_LOG_PAYLOAD;
			recs[o].iskey = (uint8) c;
			recs[o].flags = (i == 0 ? PL_LOG_FIRST : 0) | (i == k - 1 ? PL_LOG_LAST : 0);
			recs[o].xid = xid;
			recs[o].tid = tids[r];
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
static ItemPointerData redo_tid;
static int	redo_slot;
static uint32 redo_generation;
static bool redo_open = false;

/*
 * Apply a payload record (an AM's redo hands them over); false for any
 * other record.  tree_lock is held exclusively.
 */
bool
pl_redo(HiIndex *idx, const HiLogRecord *rec)
{
	ItemPointerData tid = rec->tid;

	if (rec->type == HI_LOG_PAYLOAD_DEL)
	{
		if (pl_enabled(idx))
			(void) pl_delete(idx, &tid);
		return true;
	}
	if (rec->type != HI_LOG_PAYLOAD)
		return false;
	if (rec->flags & PL_LOG_FIRST)
	{
		redo_len = 0;
		redo_tid = tid;
		redo_slot = idx->slotno;
		redo_generation = idx->generation;
		redo_open = true;
	}
	else if (!redo_open || !ItemPointerEquals(&redo_tid, &tid) ||
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
			pl_insert(idx, &tid, redo_buf, redo_len);
	}
	return true;
}
