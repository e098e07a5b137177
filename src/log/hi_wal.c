/*
 * hi_wal.c
 *	  The custom WAL resource manager of hybrid_index (HI_RMGR_ID).
 *
 * Issue 18, second step: WAL carries every change of an index, so that a
 * server whose files are a copy (a streaming standby, a restored base
 * backup, PITR) rebuilds what the primary has instead of refusing.
 *
 * The unit of replication is the index's redo log, which is logical (one
 * record per entry inserted or deleted, one per committing transaction):
 * every structure of every access method (R-tree nodes, eFIND's buffers,
 * grid directories, BTT, placement) is rebuilt from it when the index is
 * first used, exactly as after a crash on the primary.  Records:
 *
 *	LOG		one redo log record, with its position in the endless log.  The
 *			primary inserts it under log_lock, so WAL order is log order.
 *			Redo writes it into this server's copy of the log at that
 *			position: below the copy's end it is there already (replay is
 *			idempotent), at the end it is appended, beyond the end the copy
 *			lacks records WAL no longer has: the index is marked stale (it
 *			refuses with a REINDEX hint), never silently short.
 *	DURABLE the redo log holds every change below a position (one per
 *			VACUUM; a transaction's COMMIT LOG record plays that part for
 *			it).  Redo makes the copy's log durable there, and marks the
 *			index stale if the copy does not reach it.
 *	IMAGE	a chunk of a file of a freshly built index, or a cut of it:
 *			the tier files as the build writes them, the map file after
 *			the build's checkpoint (wal_image.c): a copy gets the files
 *			of indexes created, rebuilt (REINDEX, TRUNCATE, VACUUM FULL,
 *			CLUSTER) or moved after it was taken.
 *	RESTART the primary's log continues at a position (it loaded an
 *			index whose log held records, after a crash, or an append
 *			failed; a load with an empty log logs nothing): a copy cuts off
 *			what lies beyond (records of transactions that never committed,
 *			which the primary's log lost), so that positions mean the same
 *			records on both.
 *	DROP	the files of a relfilenode were removed at commit.
 *	PAGES	at an index checkpoint, the pages written since the previous
 *			one (copy-on-write, into slots no map file references yet),
 *			read back once they are durable, like PostgreSQL's full-page
 *			images; pages written and superseded in between cost no WAL.
 *			Redo parks them in the copy's "pending" file until the MAP.
 *	MAP		an index checkpoint: its new map file, logged and flushed
 *			before the map file is replaced.  Redo writes the parked pages
 *			into the copy's tier files, replaces the map file and empties
 *			the copy's log up to the checkpoint, as the primary did: a
 *			standby's log stays as short as the primary's, and a copy whose
 *			files were taken while the index checkpointed (a base backup)
 *			gets every page the new map references.
 *
 * Redo runs in the startup process: no catalogs, and it must never stop on
 * one of our records, so nothing here raises an ERROR; what cannot be done
 * is logged and the index marked stale (the safe side).
 */
#include "postgres.h"


#include "access/xlog.h"
#include "access/xlog_internal.h"
#include "access/xloginsert.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "storage/fd.h"

#include "base/hi_base.h"
#include "log/redo_log.h"
#include "storage/storage.h"
#include "log/wal_records.h"

void
hi_wal_ident_of(HiIndexShared *sh, xl_hi_ident *id)
{
	memset(id, 0, sizeof(*id));
	id->dboid = sh->dboid;
	id->spcoid = sh->spcoid[HI_TIER_FLASH];
	id->relnumber = sh->relnumber;
	id->indexoid = sh->indexoid;
}

/* Changes of temporary indexes are not logged (standbys have no such tables) */
bool
hi_wal_logged(HiIndexShared *sh)
{
	return sh->wal_logged && !RecoveryInProgress();
}

/* ---- insertion (the primary) ---- */

/* Insert a record whose data (len bytes) starts with the index's ident */
static XLogRecPtr
insert_record(HiIndexShared *sh, uint8 info, void *xl, Size len)
{
	hi_wal_ident_of(sh, (xl_hi_ident *) xl);
	XLogBeginInsert();
	XLogRegisterData((char *) xl, len);
	return XLogInsert(HI_RMGR_ID, info);
}

void
hi_wal_log_durable(HiIndexShared *sh, uint64 upto)
{
	xl_hi_durable xl;

	if (!hi_wal_logged(sh))
		return;
	xl.upto = upto;
	(void) insert_record(sh, XLOG_HI_DURABLE, &xl, sizeof(xl));
}

/*
 * One redo log record; the caller holds log_lock (WAL order = log order).
 * Returns the end of the WAL record (0 when the index is not WAL-logged).
 */
uint64
hi_wal_log_record(HiIndexShared *sh, const HiLogRecord *rec)
{
	xl_hi_log	xl;

	if (!hi_wal_logged(sh))
		return 0;
	xl.rec = *rec;
	return insert_record(sh, XLOG_HI_LOG, &xl, sizeof(xl));
}

void
hi_wal_log_restart(HiIndexShared *sh, uint64 position, bool flush)
{
	xl_hi_restart xl;
	XLogRecPtr	end;

	if (!hi_wal_logged(sh))
		return;
	xl.position = position;
	end = insert_record(sh, XLOG_HI_RESTART, &xl, sizeof(xl));
	if (flush)
		XLogFlush(end);
}

/* The log sync worker made the log durable up to position (a checkpoint) */
void
hi_wal_log_synced(HiIndexShared *sh, uint64 position)
{
	xl_hi_synced xl;

	if (!hi_wal_logged(sh))
		return;
	xl.position = position;
	(void) insert_record(sh, XLOG_HI_SYNCED, &xl, sizeof(xl));
}

/*
 * Pages a checkpoint makes part of the index (written since the previous
 * one, into slots no map file references yet; ptes[i] says where pages[i]
 * is).  Only for a loaded primary index: a build's files go as one image at
 * its end.
 */
void
hi_wal_log_pages(HiIndexShared *sh, const uint32 *ptes, char *const *pages, int n)
{
	int			start;

	if (!sh->wal_pages || !hi_wal_logged(sh))
		return;
	for (start = 0; start < n; start += HI_PAGES_PER_RECORD)
	{
		int			cnt = Min(HI_PAGES_PER_RECORD, n - start);
		xl_hi_pages xl;
		int			i;

		memset(&xl, 0, sizeof(xl));
		hi_wal_ident_of(sh, &xl.id);
		xl.optspc = sh->spcoid[HI_TIER_OPTANE];
		xl.page_size = sh->meta.page_size;
		xl.npages = cnt;
		XLogBeginInsert();
		XLogRegisterData((char *) &xl, sizeof(xl));
		XLogRegisterData((char *) (ptes + start), sizeof(uint32) * cnt);
		for (i = 0; i < cnt; i++)
			XLogRegisterData(pages[start + i], sh->meta.page_size);
		(void) XLogInsert(HI_RMGR_ID, XLOG_HI_PAGES);
	}
}

/*
 * An index checkpoint's new map file, reflecting the log below position:
 * flushed before the map file is replaced, so that WAL always holds every
 * map file a copy may need (and, before it, every page it references).
 */
void
hi_wal_log_map(HiIndexShared *sh, const char *image, Size len, uint64 position)
{
	xl_hi_map	xl;
	XLogRecPtr	end;

	if (!sh->wal_pages || !hi_wal_logged(sh))
		return;
	memset(&xl, 0, sizeof(xl));
	hi_wal_ident_of(sh, &xl.id);
	xl.position = position;
	xl.len = (uint32) len;
	XLogBeginInsert();
	XLogRegisterData((char *) &xl, sizeof(xl));
	XLogRegisterData((char *) image, (uint32) len);
	end = XLogInsert(HI_RMGR_ID, XLOG_HI_MAP);
	XLogFlush(end);
}

/* The files of a relfilenode were removed (dboid: its database) */
void
hi_wal_log_drop(Oid dboid, Oid flashspc, Oid relnumber)
{
	xl_hi_drop	xl;

	if (RecoveryInProgress())
		return;
	memset(&xl, 0, sizeof(xl));
	xl.id.dboid = dboid;
	xl.id.spcoid = flashspc;
	xl.id.relnumber = relnumber;
	XLogBeginInsert();
	XLogRegisterData((char *) &xl, sizeof(xl));
	(void) XLogInsert(HI_RMGR_ID, XLOG_HI_DROP);
}

/* A prepared transaction's file (data) or its end (data NULL): standbys keep it too */
static void
hi_wal_log_twophase(Oid dboid, Oid dbspc, TransactionId xid, const char *data, Size len)
{
	xl_hi_twophase xl;

	if (RecoveryInProgress())
		return;
	memset(&xl, 0, sizeof(xl));
	xl.dboid = dboid;
	xl.dbspc = dbspc;
	xl.xid = xid;
	xl.len = data ? (uint32) len : 0;
	XLogBeginInsert();
	XLogRegisterData((char *) &xl, sizeof(xl));
	if (data && len > 0)
		XLogRegisterData((char *) data, (uint32) len);
	(void) XLogInsert(HI_RMGR_ID, XLOG_HI_TWOPHASE);
}

static void
hi_wal_desc(StringInfo buf, XLogReaderState *record)
{
	uint8		info = XLogRecGetInfo(record) & ~XLR_INFO_MASK;
	uint32		len = XLogRecGetDataLen(record);
	const char *data = XLogRecGetData(record);
	const xl_hi_ident *id = (const xl_hi_ident *) data;

	if (info == XLOG_HI_TWOPHASE && len >= sizeof(xl_hi_twophase))
	{
		const xl_hi_twophase *xt = (const xl_hi_twophase *) data;

		appendStringInfo(buf, "prepared transaction %u of database %u: %s", xt->xid, xt->dboid,
						 xt->len > 0 ? "index file sets to finish at its end" : "finished");
		return;
	}
	if (len < sizeof(xl_hi_ident))
		return;
	appendStringInfo(buf, "index %u, rel %u/%u/%u", id->indexoid, id->spcoid,
					 id->dboid, id->relnumber);
	if (info == XLOG_HI_DURABLE && len == sizeof(xl_hi_durable))
		appendStringInfo(buf, ", redo log durable up to " UINT64_FORMAT,
						 ((const xl_hi_durable *) data)->upto);
	else if (info == XLOG_HI_LOG && len == sizeof(xl_hi_log))
	{
		const HiLogRecord *r = &((const xl_hi_log *) data)->rec;

		appendStringInfo(buf, ", %s at " UINT64_FORMAT ", xid %u, tid (%u,%u)",
						 r->type == HI_LOG_INSERT ? "insert" :
						 r->type == HI_LOG_DELETE ? "delete" :
						 r->type == HI_LOG_PAYLOAD ? "include row" :
						 r->type == HI_LOG_PAYLOAD_DEL ? "include row delete" : "commit",
						 r->lsn, r->xid,
						 ItemPointerGetBlockNumberNoCheck(&r->tid),
						 ItemPointerGetOffsetNumberNoCheck(&r->tid));
	}
	else if (info == XLOG_HI_IMAGE && len >= sizeof(xl_hi_image))
	{
		const xl_hi_image *im = (const xl_hi_image *) data;

		const char *file = im->file == HI_IMAGE_FLASH ? "flash" :
			im->file == HI_IMAGE_OPTANE ? "optane" : "map";

		if (im->flags & HI_IMAGE_CUT)
			appendStringInfo(buf, ", %s cut to " UINT64_FORMAT " bytes", file, im->offset);
		else
			appendStringInfo(buf, ", %s bytes " UINT64_FORMAT "..+%u%s%s", file,
							 im->offset, im->len,
							 (im->flags & HI_IMAGE_FIRST) ? ", first" : "",
							 (im->flags & HI_IMAGE_LAST) ? ", last" : "");
	}
	else if (info == XLOG_HI_RESTART && len == sizeof(xl_hi_restart))
		appendStringInfo(buf, ", log continues at " UINT64_FORMAT,
						 ((const xl_hi_restart *) data)->position);
	else if (info == XLOG_HI_SYNCED && len == sizeof(xl_hi_synced))
		appendStringInfo(buf, ", log durable up to " UINT64_FORMAT,
						 ((const xl_hi_synced *) data)->position);
	else if (info == XLOG_HI_PAGES && len >= sizeof(xl_hi_pages))
	{
		const xl_hi_pages *xp = (const xl_hi_pages *) data;
		const uint32 *ptes = (const uint32 *) (data + sizeof(xl_hi_pages));
		uint32		i;

		appendStringInfo(buf, ", %u pages of %u bytes:", xp->npages, xp->page_size);
		for (i = 0; i < xp->npages && len >= sizeof(xl_hi_pages) + (i + 1) * sizeof(uint32); i++)
			appendStringInfo(buf, " %s slot %u",
							 HI_PTE_TIER(ptes[i]) == HI_TIER_FLASH ? "flash" : "optane",
							 HI_PTE_SLOT(ptes[i]));
	}
	else if (info == XLOG_HI_MAP && len >= sizeof(xl_hi_map))
		appendStringInfo(buf, ", checkpoint at log position " UINT64_FORMAT ", map file of %u bytes",
						 ((const xl_hi_map *) data)->position,
						 ((const xl_hi_map *) data)->len);
}

static const char *
hi_wal_identify(uint8 info)
{
	switch (info & ~XLR_INFO_MASK)
	{
		case XLOG_HI_DURABLE:
			return "DURABLE";
		case XLOG_HI_LOG:
			return "LOG";
		case XLOG_HI_IMAGE:
			return "IMAGE";
		case XLOG_HI_RESTART:
			return "RESTART";
		case XLOG_HI_DROP:
			return "DROP";
		case XLOG_HI_SYNCED:
			return "SYNCED";
		case XLOG_HI_PAGES:
			return "PAGES";
		case XLOG_HI_MAP:
			return "MAP";
		case XLOG_HI_TWOPHASE:
			return "TWOPHASE";
	}
	return NULL;
}

static RmgrData hi_rmgr = {
	.rm_name = HI_RMGR_NAME,
	.rm_redo = hi_wal_redo,
	.rm_desc = hi_wal_desc,
	.rm_identify = hi_wal_identify,
	.rm_cleanup = hi_wal_cleanup
};

/* Called once from _PG_init (shared_preload_libraries only) */
void
hi_wal_init(void)
{
	RegisterCustomRmgr(HI_RMGR_ID, &hi_rmgr);
	hi_files_set_drop_hook(hi_wal_log_drop);
	hi_files_set_prepared_hook(hi_wal_log_twophase);
}
