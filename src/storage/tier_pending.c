/*-------------------------------------------------------------------------
 *
 * tier_pending.c
 *	  File sets a transaction removes when it ends: an index's files go
 *	  when the transaction that dropped it (or replaced its storage)
 *	  commits, and a new index's files when the transaction that built it
 *	  rolls back.  PostgreSQL does the same for relation files with its
 *	  pending deletes (storage.c).
 *
 * Two-phase commit: PREPARE TRANSACTION hands the transaction over to a
 * later COMMIT PREPARED or ROLLBACK PREPARED, possibly in another session
 * and after a restart, and PostgreSQL keeps its own pending deletes in the
 * transaction's two-phase state.  An extension cannot add to that state,
 * so a prepared transaction's file sets are written to a file of their
 * own, hyb2pc/<xid> in the database's directory, made durable before the
 * PREPARE's own record (a crash after the PREPARE keeps both).  Once the
 * transaction is neither running nor prepared, clog says which of its
 * sets go: the sets are finished by any session of that database after
 * its COMMIT PREPARED or ROLLBACK PREPARED (finish_prepared), and a set
 * whose transaction ended while no session finished it (a crash between
 * the two) is finished by the next such command in that database.  Citus
 * commits every distributed transaction that touches more than one
 * worker in two phases, CREATE INDEX on a distributed table included.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "access/transam.h"
#include "access/xact.h"
#include "common/file_perm.h"
#include "miscadmin.h"
#include "storage/fd.h"
#include "storage/procarray.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/relcache.h"

#include "base/hi_base.h"
#include "storage/storage.h"

/* A file set to remove at commit (drop) or at abort (creation) */
typedef struct HiPendingOp
{
	HiFileSet	set;
	bool		at_commit;
	int			nest_level;
	struct HiPendingOp *next;
} HiPendingOp;

static HiPendingOp *pending_ops = NULL;

/* the file this backend wrote at PRE_PREPARE, until PREPARE or abort */
static char *prepared_path = NULL;

/* the file of a prepared transaction's sets */
#define PREPARED_MAGIC	0x48493250	/* "HI2P" */
typedef struct PreparedHeader
{
	uint32		magic;
	uint32		nsets;
	TransactionId xid;
	uint32		pad;
} PreparedHeader;

/* What a prepared transaction left, in hyb2pc/ */
#define PREPARED_DIR	"hyb2pc"

/* WAL: standbys keep the same files, so that a promoted one finishes them */
static hi_files_prepared_fn prepared_hook = NULL;

void
hi_files_set_prepared_hook(hi_files_prepared_fn fn)
{
	prepared_hook = fn;
}

void
hi_files_pending_add(Oid dboid, Oid flashspc, Oid relnumber, bool at_commit)
{
	HiPendingOp *op;

	if (at_commit)
		for (op = pending_ops; op; op = op->next)
			if (op->at_commit && op->set.flashspc == flashspc &&
				op->set.relnumber == relnumber)
				return;
	op = MemoryContextAllocZero(TopMemoryContext, sizeof(HiPendingOp));
	op->set.dboid = dboid;
	op->set.flashspc = flashspc;
	op->set.relnumber = relnumber;
	op->at_commit = at_commit;
	op->nest_level = GetCurrentTransactionNestLevel();
	op->next = pending_ops;
	pending_ops = op;
}

/* DROP of an index: its current files go when the transaction commits */
void
hi_files_schedule_drop(Oid indexoid)
{
	Relation	rel = RelationIdGetRelation(indexoid);

	if (!RelationIsValid(rel))
		return;
	hi_files_pending_add(MyDatabaseId, HI_REL_SPC(rel), HI_REL_NUMBER(rel), true);
	RelationClose(rel);
}

bool
hi_files_pending(void)
{
	return pending_ops != NULL;
}

static char *
prepared_dir_of(Oid dboid, Oid dbspc)
{
	char	   *dbpath = GetDatabasePath(dboid, dbspc);
	char	   *dir = psprintf("%s/%s/%s", DataDir, dbpath, PREPARED_DIR);

	pfree(dbpath);
	return dir;
}

static char *
prepared_dir(void)
{
	return prepared_dir_of(MyDatabaseId, MyDatabaseTableSpace);
}

/*
 * PRE_PREPARE: the sets go to hyb2pc/<xid>, durably, before PostgreSQL
 * writes the transaction's own two-phase state.
 */
void
hi_files_at_prepare(void)
{
	TransactionId xid = GetTopTransactionIdIfAny();
	StringInfoData buf;
	PreparedHeader hdr;
	HiPendingOp *op;
	char	   *dir;
	char	   *path;

	if (pending_ops == NULL)
		return;
	/* creating or dropping storage always assigned the transaction an xid */
	if (!TransactionIdIsValid(xid))
		elog(ERROR, "hybrid_index: a transaction with pending index files has no transaction id");
	memset(&hdr, 0, sizeof(hdr));
	hdr.magic = PREPARED_MAGIC;
	hdr.xid = xid;
	for (op = pending_ops; op; op = op->next)
		hdr.nsets++;
	initStringInfo(&buf);
	appendBinaryStringInfo(&buf, (const char *) &hdr, sizeof(hdr));
	for (op = pending_ops; op; op = op->next)
	{
		HiFileSet	set = op->set;

		set.at_commit = op->at_commit;
		appendBinaryStringInfo(&buf, (const char *) &set, sizeof(set));
	}
	dir = prepared_dir();
	if (MakePGDirectory(dir) != 0 && errno != EEXIST)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not create directory \"%s\": %m", dir)));
	path = psprintf("%s/%u", dir, xid);
	/* fsyncs the file and its directory, which a new directory's parent needs too */
	hi_durable_write_file(path, buf.data, buf.len);
	hi_fsync_dir_of(dir);
	/* before the PREPARE's own record, which flushes it */
	if (prepared_hook)
		prepared_hook(MyDatabaseId, MyDatabaseTableSpace, xid, buf.data, buf.len);
	pfree(buf.data);
	pfree(dir);
	if (prepared_path)
		pfree(prepared_path);
	prepared_path = MemoryContextStrdup(TopMemoryContext, path);
	pfree(path);
}

static void
free_ops(void)
{
	HiPendingOp *op = pending_ops;

	pending_ops = NULL;
	while (op)
	{
		HiPendingOp *next = op->next;

		pfree(op);
		op = next;
	}
}

void
hi_files_at_xact_end(bool commit)
{
	HiPendingOp *op = pending_ops;

	/* a PREPARE that failed: its file is no one's */
	if (prepared_path)
	{
		(void) unlink(prepared_path);
		pfree(prepared_path);
		prepared_path = NULL;
	}
	/* detach the list first: an error below must not loop forever */
	pending_ops = NULL;
	hi_files_end_removals(true);
	while (op)
	{
		HiPendingOp *next = op->next;

		if (op->at_commit == commit)
			hi_files_drop_set(op->set.dboid, op->set.flashspc, op->set.relnumber);
		pfree(op);
		op = next;
	}
	hi_files_end_removals(false);
}

/* PREPARE done: the sets wait in their file for the transaction's end */
void
hi_files_at_prepared(void)
{
	if (prepared_path)
	{
		pfree(prepared_path);
		prepared_path = NULL;
	}
	hi_files_unwatch();
	free_ops();
}

void
hi_files_at_subxact_end(bool commit, SubTransactionId mySubid,
						SubTransactionId parentSubid)
{
	int			level = GetCurrentTransactionNestLevel();
	HiPendingOp **prev = &pending_ops;
	HiPendingOp *op;

	/* a build rolled back in the middle of its watch */
	if (!commit)
		hi_files_unwatch();
	while ((op = *prev) != NULL)
	{
		if (op->nest_level >= level)
		{
			if (commit)
				op->nest_level = level - 1;
			else
			{
				/* rolled back: undo creations now, forget drops */
				*prev = op->next;
				if (!op->at_commit)
					hi_files_drop_set(op->set.dboid, op->set.flashspc, op->set.relnumber);
				pfree(op);
				continue;
			}
		}
		prev = &op->next;
	}
}

/* Apply one prepared transaction's file, which it ended; false if unreadable */
static bool
finish_one(const char *path, TransactionId xid, bool committed)
{
	Size		len;
	char	   *data = hi_read_whole_file(path, &len);
	PreparedHeader hdr;
	uint32		i;

	if (data == NULL || len < sizeof(hdr))
		return false;
	memcpy(&hdr, data, sizeof(hdr));
	if (hdr.magic != PREPARED_MAGIC || hdr.xid != xid ||
		len != sizeof(hdr) + (Size) hdr.nsets * sizeof(HiFileSet))
	{
		ereport(WARNING,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("hybrid_index: ignoring malformed prepared transaction file \"%s\"", path)));
		pfree(data);
		return false;
	}
	for (i = 0; i < hdr.nsets; i++)
	{
		HiFileSet	set;

		memcpy(&set, data + sizeof(hdr) + i * sizeof(HiFileSet), sizeof(set));
		if (set.at_commit == committed)
			hi_files_drop_set(set.dboid, set.flashspc, set.relnumber);
	}
	pfree(data);
	return true;
}

/*
 * After COMMIT PREPARED or ROLLBACK PREPARED in this database: finish the
 * sets of every prepared transaction of the database that has ended.  A
 * database that never prepared a transaction with index files has no
 * hyb2pc directory: one failed opendir.
 */
void
hi_files_finish_prepared(void)
{
	char	   *dir = prepared_dir();
	DIR		   *d;
	struct dirent *de;
	bool		removed = false;

	d = AllocateDir(dir);
	if (d == NULL)
	{
		pfree(dir);
		return;
	}
	hi_files_end_removals(true);
	while ((de = ReadDirExtended(d, dir, LOG)) != NULL)
	{
		char	   *end;
		unsigned long v;
		TransactionId xid;
		char	   *path;

		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		errno = 0;
		v = strtoul(de->d_name, &end, 10);
		if (errno != 0 || *end != '\0' || v > PG_UINT32_MAX)
			continue;			/* a .tmp of a write cut short, say */
		xid = (TransactionId) v;
		/* still prepared (or being finished by its own session right now) */
		if (TransactionIdIsInProgress(xid))
			continue;
		/* ended so long ago that clog no longer knows how: left alone */
		if (TransactionIdPrecedes(xid, HI_TRANSAM->oldestClogXid))
		{
			ereport(WARNING,
					(errmsg("hybrid_index: cannot tell how transaction %u ended; leaving \"%s/%s\"",
							xid, dir, de->d_name),
					 errhint("Remove the index files it names by hand if their indexes no longer exist.")));
			continue;
		}
		path = psprintf("%s/%s", dir, de->d_name);
		(void) finish_one(path, xid, TransactionIdDidCommit(xid));
		if (unlink(path) == 0)
		{
			removed = true;
			if (prepared_hook)
				prepared_hook(MyDatabaseId, MyDatabaseTableSpace, xid, NULL, 0);
		}
		pfree(path);
	}
	FreeDir(d);
	hi_files_end_removals(false);
	if (removed)
		fsync_fname_ext(dir, true, true, LOG);
	pfree(dir);
}

/*
 * WAL replay of a prepared transaction's file: written (data) or finished
 * (data NULL) on the primary.  A standby keeps the same file, so that once
 * promoted, its COMMIT PREPARED or ROLLBACK PREPARED finishes the sets as
 * the primary would have; their removals on the primary reach it as DROP
 * records.  A database dropped meanwhile has nothing to keep.
 */
void
hi_files_prepared_redo(Oid dboid, Oid dbspc, TransactionId xid, const char *data, Size len)
{
	char	   *dir = prepared_dir_of(dboid, dbspc);
	char	   *path = psprintf("%s/%u", dir, xid);

	if (data == NULL)
	{
		if (unlink(path) == 0)
			fsync_fname_ext(dir, true, true, LOG);
	}
	else if (MakePGDirectory(dir) != 0 && errno != EEXIST)
	{
		int			elevel = errno == ENOENT ? DEBUG1 : WARNING;

		ereport(elevel,
				(errcode_for_file_access(),
				 errmsg("hybrid_index: could not create directory \"%s\": %m", dir)));
	}
	else
	{
		hi_durable_write_file(path, data, len);
		hi_fsync_dir_of(dir);
	}
	pfree(path);
	pfree(dir);
}
