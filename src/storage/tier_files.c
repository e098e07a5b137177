/*
 * tier_files.c
 *	  The files of an index: naming, creation and removal with
 *	  PostgreSQL's transactional semantics (a backend's descriptors of
 *	  them: tier_fds.c).
 *
 * An index (one relfilenode) owns a set of files named
 * hyb_<flash tablespace>_<relfilenode>.<suffix> in the database directory
 * of the tablespace that stands for each tier:
 *
 *	.flash	data pages on the flash tier (the index's own tablespace)
 *	.optane data pages on the fast tier (reloption optane_tablespace)
 *	.map	page table and structure metadata of the last checkpoint
 *	.log	redo log since that checkpoint
 *
 * PostgreSQL does not know these files, so we mirror what it does for
 * relation storage: files created by a transaction are removed if it
 * aborts; files of a dropped or replaced relfilenode are removed when the
 * dropping transaction commits, never before.  Because the files sit in
 * the tablespace's database directory, DROP TABLESPACE refuses to drop a
 * tablespace that still holds a tier, and DROP DATABASE removes them.
 */
#include "postgres.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/indexing.h"
#include "catalog/pg_class.h"
#include "catalog/pg_tablespace_d.h"
#include "common/file_perm.h"
#include "commands/tablespace.h"
#include "common/relpath.h"
#include "lib/ilist.h"
#include "miscadmin.h"
#include "storage/fd.h"
#include "utils/memutils.h"
#include "utils/relcache.h"
#include "utils/fmgroids.h"
#include "utils/snapmgr.h"

#include "base/hi_base.h"
#include "storage/storage.h"
#include "storage/tier_int.h"

/* told before a relfilenode's files are unlinked (hi_files_set_release_hook) */
static hi_files_release_fn release_hook = NULL;

void
hi_files_set_release_hook(hi_files_release_fn fn)
{
	release_hook = fn;
}

/* told after a dropped relfilenode's files were removed at commit */
static hi_files_drop_fn drop_hook = NULL;

void
hi_files_set_drop_hook(hi_files_drop_fn fn)
{
	drop_hook = fn;
}

/* the index whose file writes this backend reports, and to whom */
static HiIndexShared *watched = NULL;
static HiFileWatch watch;

const char *
hi_tier_suffix(int tier)
{
	return tier == HI_TIER_FLASH ? "flash" : "optane";
}

char *
hi_file_path(Oid dirspc, Oid dboid, Oid flashspc, Oid relnumber,
			 const char *suffix)
{
	char	   *dbpath = GetDatabasePath(dboid, dirspc);
	char	   *path;

	path = psprintf("%s/%s/hyb_%u_%u.%s", DataDir, dbpath, flashspc,
					relnumber, suffix);
	pfree(dbpath);
	return path;
}

char *
hi_slot_path(HiIndexShared *sh, int tier)
{
	return hi_file_path(sh->spcoid[tier], sh->dboid, sh->spcoid[HI_TIER_FLASH],
						sh->relnumber, hi_tier_suffix(tier));
}

/* Do the index's files still exist (its database may have been dropped)? */
bool
hi_slot_files_exist(HiIndexShared *sh)
{
	char	   *path = hi_slot_path(sh, HI_TIER_FLASH);
	struct stat st;
	bool		exists = stat(path, &st) == 0;

	pfree(path);
	return exists;
}

/* Report the writes and cuts of sh's tier files to w (NULL: no more) */
void
hi_files_watch(HiIndexShared *sh, const HiFileWatch *w)
{
	watched = w != NULL ? sh : NULL;
	if (w != NULL)
		watch = *w;
}

/* tier_io.c: a write to a tier file completed */
void
hi_files_watch_written(HiIndexShared *sh, int tier, uint64 offset,
					   const char *data, uint32 len)
{
	if (sh == watched)
		watch.written(watch.arg, tier, offset, data, len);
	else if (sh->image_open)
	{
		/*
		 * A page of a build in progress written by another process (its
		 * cache eviction): the build's image lacks it, so the builder logs
		 * the files again at its end (hi_wal_image_finish).  Set before the
		 * frame's FR_IO is cleared, which the builder's flush waits for.
		 */
		sh->image_foreign = true;
		pg_write_barrier();
	}
}

/*
 * Cut a tier file down to nslots slots (its free tail, hi_pt_trim).  Only
 * space is at stake: on failure the file just stays longer.
 */
void
hi_file_truncate(HiIndexShared *sh, int tier, uint32 nslots)
{
	int			fd = hi_file_open_existing(sh, tier);
	off_t		len = (off_t) nslots * sh->meta.page_size;
	struct stat st;

	if (fd < 0 || (fstat(fd, &st) == 0 && st.st_size <= len))
		return;
	if (ftruncate(fd, len) != 0)
	{
		char	   *path = hi_slot_path(sh, tier);

		ereport(WARNING,
				(errcode_for_file_access(),
				 errmsg("could not truncate index file \"%s\" to %u slots: %m",
						path, nslots)));
		pfree(path);
	}
	else if (sh == watched)
		watch.truncated(watch.arg, tier, (uint64) len);
}

void
hi_fsync_dir_of(const char *path)
{
	char	   *dir = pstrdup(path);
	char	   *slash = strrchr(dir, '/');

	if (slash)
	{
		*slash = '\0';
		fsync_fname(dir, true);
	}
	pfree(dir);
}

/*
 * The marker of a relfilenode whose files lack changes that WAL recorded as
 * durable in its redo log (hyb_<flash>_<relfilenode>.stale, removed with the
 * other files).  Written by WAL redo on a server whose files are a copy (a
 * standby, a restored base backup): never an ERROR there, a WARNING if it
 * cannot be written.  The text says what is missing.
 */
void
hi_files_mark_stale(Oid dboid, Oid flashspc, Oid relnumber, const char *why)
{
	char	   *path = hi_file_path(flashspc, dboid, flashspc, relnumber, "stale");
	int			fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | PG_BINARY, pg_file_create_mode);
	Size		len = strlen(why);

	if (fd < 0 || write(fd, why, len) != (ssize_t) len || pg_fsync(fd) != 0)
		ereport(WARNING,
				(errcode_for_file_access(),
				 errmsg("could not write index marker file \"%s\": %m", path)));
	if (fd >= 0)
		close(fd);
	{
		char	   *dir = pstrdup(path);

		*strrchr(dir, '/') = '\0';
		(void) fsync_fname_ext(dir, true, false, WARNING);
		pfree(dir);
	}
	pfree(path);
}

/* The text of an index's stale marker, or NULL if it has none */
char *
hi_files_stale(HiIndexShared *sh)
{
	char	   *path = hi_file_path(sh->spcoid[HI_TIER_FLASH], sh->dboid,
									sh->spcoid[HI_TIER_FLASH], sh->relnumber, "stale");
	Size		len;
	char	   *text = hi_read_whole_file(path, &len);

	pfree(path);
	if (text)
		text[len] = '\0';
	return text;
}

/* Write a whole file atomically and durably: temp file, fsync, rename */
void
hi_durable_write_file(const char *path, const char *data, Size len)
{
	hi_replace_file(path, data, len, true);
}

/*
 * Write a whole file atomically (temp file, rename); durably with sync, or
 * left for whoever syncs it later (a build's map: tier_defer.c)
 */
void
hi_replace_file(const char *path, const char *data, Size len, bool sync)
{
	char	   *tmp = psprintf("%s.tmp", path);
	int			fd;
	Size		done = 0;

	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | PG_BINARY, pg_file_create_mode);
	if (fd < 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not create file \"%s\": %m", tmp)));
	while (done < len)
	{
		ssize_t		w = write(fd, data + done, len - done);

		if (w < 0)
		{
			int			save_errno = errno;

			close(fd);
			unlink(tmp);
			errno = save_errno;
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not write file \"%s\": %m", tmp)));
		}
		done += w;
	}
	if (sync && pg_fsync(fd) != 0)
	{
		int			save_errno = errno;

		close(fd);
		errno = save_errno;
		ereport(data_sync_elevel(ERROR),
				(errcode_for_file_access(),
				 errmsg("could not fsync file \"%s\": %m", tmp)));
	}
	close(fd);

	/*
	 * The data is durable (fsync above): the rename is made durable by
	 * its directory's fsync alone (durable_rename would fsync the file
	 * twice more, which a build of 1,000 partitions pays 2,000 times).
	 */
	if (rename(tmp, path) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not rename file \"%s\" to \"%s\": %m", tmp, path)));
	if (sync)
		hi_fsync_dir_of(path);
	pfree(tmp);
}

char *
hi_read_whole_file(const char *path, Size *len)
{
	int			fd = open(path, O_RDONLY | PG_BINARY, 0);
	struct stat st;
	char	   *buf;
	Size		done = 0;

	if (fd < 0)
	{
		if (errno == ENOENT)
			return NULL;
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not open file \"%s\": %m", path)));
	}
	if (fstat(fd, &st) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not stat file \"%s\": %m", path)));
	buf = palloc_extended(st.st_size + 1, MCXT_ALLOC_HUGE);
	while (done < (Size) st.st_size)
	{
		ssize_t		r = read(fd, buf + done, st.st_size - done);

		if (r < 0)
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not read file \"%s\": %m", path)));
		if (r == 0)
			break;
		done += r;
	}
	close(fd);
	*len = done;
	return buf;
}

/*
 * Empty a file a new relfilenode's build finds (TRUNCATE rebuilding an
 * index created in the same transaction); false if there is none.
 */
static bool
empty_leftover(const char *path)
{
	int			fd = open(path, O_RDWR | O_TRUNC | PG_BINARY, 0);

	if (fd < 0 && errno != ENOENT)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not empty index file \"%s\": %m", path)));
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/*
 * Create the files of a freshly built relfilenode (truncating leftovers,
 * e.g. when TRUNCATE rebuilds an index created in the same transaction)
 * and have them removed if the transaction aborts.
 */
void
hi_files_create(HiIndexShared *sh)
{
	int			tier;
	char	   *logpath;

	/* registered first: whatever happens below is undone on abort */
	hi_files_pending_add(sh->dboid, sh->spcoid[HI_TIER_FLASH], sh->relnumber, false);

	/*
	 * The build's checkpoint makes the flash tier's directory durable with
	 * its map file (hi_replace_file); a fast tier in another tablespace has
	 * a directory of its own.  One beside the flash tier is made by its
	 * first page (open_fast_tier): a leftover is emptied here.
	 */
	for (tier = 0; tier < HI_NUM_TIERS; tier++)
	{
		char	   *path;

		if (!OidIsValid(sh->spcoid[tier]))
			continue;
		TablespaceCreateDbspace(sh->spcoid[tier], sh->dboid, false);
		if (tier == HI_TIER_FLASH)
		{
			(void) hi_file_open(sh, tier, true);
			continue;
		}
		path = hi_slot_path(sh, tier);
		if (!hi_fast_tier_lazy(sh))
		{
			(void) hi_file_open(sh, tier, true);
			hi_fsync_dir_of(path);
		}
		else
			(void) empty_leftover(path);
		pfree(path);
	}
	logpath = hi_file_path(sh->spcoid[HI_TIER_FLASH], sh->dboid,
						   sh->spcoid[HI_TIER_FLASH], sh->relnumber, "log");

	/*
	 * No log file: the first append makes it (hi_log_fd).  A missing log
	 * is an empty one for every reader.  A leftover (TRUNCATE rebuilding
	 * an index created in the same transaction) is emptied here, not yet
	 * durably.
	 */
	sh->log_missing = !empty_leftover(logpath);
	sh->log_fresh = sh->log_missing;
	pfree(logpath);
}

/* Call fn for the directory of the database in every tablespace */
void
hi_foreach_db_dir(Oid dboid, hi_dir_fn fn, void *arg)
{
	char	   *dbpath = GetDatabasePath(dboid, DEFAULTTABLESPACE_OID);
	char	   *dir = psprintf("%s/%s", DataDir, dbpath);
	DIR		   *tsdir;
	struct dirent *de;

	fn(dir, DEFAULTTABLESPACE_OID, arg);
	pfree(dir);
	pfree(dbpath);

	tsdir = AllocateDir("pg_tblspc");
	while ((de = ReadDir(tsdir, "pg_tblspc")) != NULL)
	{
		Oid			spc = (Oid) strtoul(de->d_name, NULL, 10);
		struct stat st;

		if (spc == InvalidOid)
			continue;
		dbpath = GetDatabasePath(dboid, spc);
		dir = psprintf("%s/%s", DataDir, dbpath);
		if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
			fn(dir, spc, arg);
		pfree(dir);
		pfree(dbpath);
	}
	FreeDir(tsdir);
}

/* Forget a relfilenode's cached state, then unlink its files */
void
hi_files_release_and_remove(Oid dboid, Oid flashspc, Oid relnumber)
{
	/* forget cached pages first: nothing may be written back to them */
	if (release_hook)
		release_hook(dboid, relnumber);
	hi_files_remove_set(dboid, flashspc, relnumber);
}

typedef struct OldSetArg
{
	Oid			indexoid;
	Oid			keep_flashspc;
	Oid			keep_relnumber;
} OldSetArg;

static void
find_old_sets_in_dir(const char *dir, Oid spcoid, void *arg)
{
	OldSetArg  *oa = (OldSetArg *) arg;
	DIR		   *d;
	struct dirent *de;

	d = AllocateDir(dir);
	if (d == NULL)
		return;
	while ((de = ReadDirExtended(d, dir, LOG)) != NULL)
	{
		unsigned int fs,
					rn;
		char		suffix[16];
		char	   *path;
		Oid			owner;

		if (sscanf(de->d_name, "hyb_%u_%u.%15s", &fs, &rn, suffix) != 3 ||
			strcmp(suffix, "map") != 0)
			continue;
		if (fs == oa->keep_flashspc && rn == oa->keep_relnumber)
			continue;
		path = psprintf("%s/%s", dir, de->d_name);
		owner = hi_map_read_owner(path);
		pfree(path);
		if (owner != oa->indexoid)
			continue;
		/* still the storage of some relation (e.g. a swapped index)? */
		if (OidIsValid(hi_relid_by_filenumber(fs == MyDatabaseTableSpace ? 0 : fs, rn)))
			continue;
		hi_files_pending_add(MyDatabaseId, fs, rn, true);
	}
	FreeDir(d);
}

/*
 * The relfilenodes this transaction replaced for the index: the versions
 * of its pg_class row that our own transaction updated still hold them
 * (REINDEX, TRUNCATE and table rewrites update the row in place of the
 * old storage).  Needs no map file, so it finds old sets whose map is
 * damaged or missing.
 */
static void
schedule_replaced_sets(Oid indexoid, Oid keep_flashspc, Oid keep_relnumber)
{
	Relation	pg_class = table_open(RelationRelationId, AccessShareLock);
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;

	ScanKeyInit(&key, Anum_pg_class_oid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(indexoid));
	scan = systable_beginscan(pg_class, ClassOidIndexId, true, SnapshotAny, 1, &key);
	while (HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		HeapTupleHeader th = tup->t_data;
		Form_pg_class form = (Form_pg_class) GETSTRUCT(tup);
		Oid			spc;

		if ((th->t_infomask & HEAP_XMAX_INVALID) ||
			HEAP_XMAX_IS_LOCKED_ONLY(th->t_infomask) ||
			!TransactionIdIsCurrentTransactionId(HeapTupleHeaderGetUpdateXid(th)))
			continue;
		if (form->relkind != RELKIND_INDEX || !OidIsValid(form->relfilenode))
			continue;
		spc = OidIsValid(form->reltablespace) ? form->reltablespace : MyDatabaseTableSpace;
		if (spc == keep_flashspc && form->relfilenode == keep_relnumber)
			continue;
		/* still the storage of some relation? */
		if (OidIsValid(hi_relid_by_filenumber(form->reltablespace, form->relfilenode)))
			continue;
		hi_files_pending_add(MyDatabaseId, spc, form->relfilenode, true);
	}
	systable_endscan(scan);
	table_close(pg_class, AccessShareLock);
}

/*
 * An index got a new relfilenode (REINDEX, TRUNCATE, VACUUM FULL, CLUSTER):
 * the previous files of the same index go when the transaction commits.
 * Old file sets are recognised by the pg_class row versions this
 * transaction replaced, and by the owner recorded in their map file (for
 * sets left by earlier transactions, e.g. before a crash), in both cases
 * only if no relation uses their relfilenode any more.
 */
void
hi_files_schedule_old_removal(Oid indexoid, Oid keep_flashspc, Oid keep_relnumber,
							  bool new_index)
{
	OldSetArg	oa;

	schedule_replaced_sets(indexoid, keep_flashspc, keep_relnumber);

	/*
	 * An index created by this transaction has a new OID: no set can be
	 * recorded as its own, and reading every map file of the database for
	 * each of a partitioned table's thousand new indexes would make their
	 * creation quadratic.
	 */
	if (new_index)
		return;
	oa.indexoid = indexoid;
	oa.keep_flashspc = keep_flashspc;
	oa.keep_relnumber = keep_relnumber;
	hi_foreach_db_dir(MyDatabaseId, find_old_sets_in_dir, &oa);
}

/*
 * The start (deferred_start) and end of a transaction's removals: the
 * build it may have been watching stopped; the sets are removed together
 * at the end (tier_remove.c), each directory synced once.
 */
void
hi_files_end_removals(bool deferred_start)
{
	if (deferred_start)
	{
		watched = NULL;
		hi_remove_batch_begin();
		return;
	}
	hi_remove_batch_end();
}

/* A build rolled back in the middle of its watch */
void
hi_files_unwatch(void)
{
	watched = NULL;
}

/*
 * Remove a set that a transaction's end removes, and say so (WAL) after
 * the commit record: a crash before it keeps the files.  A creation rolled
 * back is told too: a build streams its files into WAL as it writes them,
 * so copies hold part of them.
 */
void
hi_files_drop_set(Oid dboid, Oid flashspc, Oid relnumber)
{
	hi_files_release_and_remove(dboid, flashspc, relnumber);
	if (drop_hook)
		drop_hook(dboid, flashspc, relnumber);
}
