/*
 * hi_wal.c
 *	  The custom WAL resource manager of hybrid_index (HI_RMGR_ID).
 *
 * This is the first step of durability through PostgreSQL's WAL (issue
 * 18): index changes are still made durable by each index's own redo log,
 * and WAL carries, for every transaction (and every VACUUM) that changed an
 * index, one record "the redo log of relfilenode R holds every committed
 * change up to position P" (the position after the transaction's COMMIT
 * record in that log, flushed before this record is written).
 *
 * On the primary's own crash recovery, R's log always holds P (it was
 * flushed first), so replay changes nothing.  On a server whose files are a
 * copy taken earlier (a streaming standby, a restored base backup, PITR),
 * replay meets positions its copy of the log does not reach: the index's
 * files lack committed changes, and the index is marked stale
 * (hi_files_mark_stale): once the server can open it (after promotion, or
 * at the end of a restore), it refuses with an error naming it and a
 * REINDEX hint instead of silently missing rows.  An index created after
 * the copy has no files there and refuses likewise.
 *
 * Replay must never stop on one of our records: nothing here raises an
 * ERROR; a file that cannot be read counts as holding nothing (the index is
 * marked stale, the safe side).
 */
#include "postgres.h"

#include "access/xlog.h"
#include "access/xlog_internal.h"
#include "access/xloginsert.h"
#include "access/xlogreader.h"
#include "lib/stringinfo.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

#include "base/hi_base.h"
#include "log/redo_log.h"
#include "storage/storage.h"

#define XLOG_HI_DURABLE		0x00

typedef struct xl_hi_durable
{
	Oid			dboid;
	Oid			spcoid;			/* the flash tier's tablespace */
	Oid			relnumber;
	Oid			indexoid;
	uint64		upto;			/* the redo log holds every change below */
} xl_hi_durable;

/* Write the record (primary only; the caller flushed the log up to upto) */
void
hi_wal_log_durable(HiIndexShared *sh, uint64 upto)
{
	xl_hi_durable xl;

	if (RecoveryInProgress())
		return;
	xl.dboid = sh->dboid;
	xl.spcoid = sh->spcoid[HI_TIER_FLASH];
	xl.relnumber = sh->relnumber;
	xl.indexoid = sh->indexoid;
	xl.upto = upto;
	XLogBeginInsert();
	XLogRegisterData((char *) &xl, sizeof(xl));
	(void) XLogInsert(HI_RMGR_ID, XLOG_HI_DURABLE);
}

/* ---- redo (the startup process) ---- */

typedef struct CheckedKey
{
	Oid			dboid;
	Oid			spcoid;
	Oid			relnumber;
} CheckedKey;

typedef struct Checked
{
	CheckedKey	key;
	uint64		end;			/* what this server's copy of the log holds */
	bool		exists;			/* the index has files here */
	bool		stale;			/* marked already */
} Checked;

/* relfilenodes seen by this replay; their files do not change meanwhile */
static HTAB *checked = NULL;

static void
redo_durable(XLogReaderState *record, const xl_hi_durable *xl)
{
	CheckedKey	key;
	Checked    *c;
	bool		found;

	if (checked == NULL)
	{
		HASHCTL		ctl;

		memset(&ctl, 0, sizeof(ctl));
		ctl.keysize = sizeof(CheckedKey);
		ctl.entrysize = sizeof(Checked);
		ctl.hcxt = TopMemoryContext;
		checked = hash_create("hybrid_index redo", 64, &ctl,
							  HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	memset(&key, 0, sizeof(key));
	key.dboid = xl->dboid;
	key.spcoid = xl->spcoid;
	key.relnumber = xl->relnumber;
	c = hash_search(checked, &key, HASH_ENTER, &found);
	if (!found)
	{
		c->end = hi_log_durable_end(xl->dboid, xl->spcoid, xl->relnumber, &c->exists);
		c->stale = false;
	}
	/* no files: the index refuses by itself (its map file is missing) */
	if (!c->exists || c->stale || xl->upto <= c->end)
		return;
	{
		char	   *why = psprintf("WAL at %X/%X records changes to index %u up to position "
								   UINT64_FORMAT " of its redo log; this copy of its files holds "
								   "them up to " UINT64_FORMAT ".\n",
								   LSN_FORMAT_ARGS(record->ReadRecPtr), xl->indexoid,
								   xl->upto, c->end);

		hi_files_mark_stale(xl->dboid, xl->spcoid, xl->relnumber, why);
		pfree(why);
	}
	c->stale = true;
	ereport(LOG,
			(errmsg("hybrid_index: index %u (relfilenode %u) lacks changes replayed from WAL and will need REINDEX",
					xl->indexoid, xl->relnumber)));
}

static void
hi_wal_redo(XLogReaderState *record)
{
	uint8		info = XLogRecGetInfo(record) & ~XLR_INFO_MASK;

	if (info == XLOG_HI_DURABLE && XLogRecGetDataLen(record) == sizeof(xl_hi_durable))
		redo_durable(record, (const xl_hi_durable *) XLogRecGetData(record));
	else
		ereport(WARNING,
				(errmsg("hybrid_index: skipping WAL record of unknown type %u (length %u) at %X/%X",
						info, XLogRecGetDataLen(record), LSN_FORMAT_ARGS(record->ReadRecPtr)),
				 errhint("The server replays WAL of a newer hybrid_index; indexes it concerns may need REINDEX.")));
}

static void
hi_wal_desc(StringInfo buf, XLogReaderState *record)
{
	uint8		info = XLogRecGetInfo(record) & ~XLR_INFO_MASK;

	if (info == XLOG_HI_DURABLE && XLogRecGetDataLen(record) == sizeof(xl_hi_durable))
	{
		const xl_hi_durable *xl = (const xl_hi_durable *) XLogRecGetData(record);

		appendStringInfo(buf, "index %u, rel %u/%u/%u, redo log durable up to " UINT64_FORMAT,
						 xl->indexoid, xl->spcoid, xl->dboid, xl->relnumber, xl->upto);
	}
}

static const char *
hi_wal_identify(uint8 info)
{
	if ((info & ~XLR_INFO_MASK) == XLOG_HI_DURABLE)
		return "DURABLE";
	return NULL;
}

static RmgrData hi_rmgr = {
	.rm_name = HI_RMGR_NAME,
	.rm_redo = hi_wal_redo,
	.rm_desc = hi_wal_desc,
	.rm_identify = hi_wal_identify
};

/* Called once from _PG_init (shared_preload_libraries only) */
void
hi_wal_init(void)
{
	RegisterCustomRmgr(HI_RMGR_ID, &hi_rmgr);
}
