/*
 * tier_size.c
 *	  What PostgreSQL's size functions report for an index: the length of
 *	  its files.
 *
 * pg_relation_size, pg_indexes_size, pg_total_relation_size and psql's
 * \di+ measure a relation's main fork.  Ours holds no data (the pages live
 * in the tier files), so it is kept as long as the index's files together
 * (tier files, map file, log), as a sparse file: it takes no disk space,
 * and whatever reads its blocks sees all-zero pages, which PostgreSQL
 * treats as new pages (checksum verification in pg_basebackup and
 * pg_checksums skips them).  md.c expects segments of RELSEG_SIZE blocks
 * at most, so a length past 1 GB is spread over "relfilenode.1", ".2", ...
 *
 * A copy that is not sparse (a base backup writes the zeros out) is made
 * sparse again when the index is loaded.  Only permanent indexes: a
 * temporary one's main fork lives under another name.
 */
#include "postgres.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/file_perm.h"
#include "common/relpath.h"
#include "storage/fd.h"

#include "base/hi_base.h"
#include "storage/storage.h"

/* Bytes of the index's files on disk (missing files count as empty) */
static uint64
files_length(HiIndexShared *sh)
{
	uint64		total = 0;
	int			t;
	struct stat st;
	const char *other[] = {"map", "log"};

	for (t = 0; t < HI_NUM_TIERS; t++)
	{
		char	   *path;

		if (!OidIsValid(sh->spcoid[t]))
			continue;
		path = hi_slot_path(sh, t);
		if (stat(path, &st) == 0)
			total += (uint64) st.st_size;
		pfree(path);
	}
	for (t = 0; t < lengthof(other); t++)
	{
		char	   *path = hi_file_path(sh->spcoid[HI_TIER_FLASH], sh->dboid,
										sh->spcoid[HI_TIER_FLASH], sh->relnumber,
										other[t]);

		if (stat(path, &st) == 0)
			total += (uint64) st.st_size;
		pfree(path);
	}
	return total;
}

/*
 * Set one segment file's length (0: remove it, except segment 0); false if
 * it could not be done (reported by the caller as a WARNING).
 */
static bool
set_segment(const char *base, int segno, off_t len, bool resparsify)
{
	char	   *path = segno == 0 ? pstrdup(base) : psprintf("%s.%d", base, segno);
	bool		ok = true;
	int			fd;
	struct stat st;

	if (segno > 0 && len == 0)
	{
		if (unlink(path) != 0 && errno != ENOENT)
			ok = false;
		pfree(path);
		return ok;
	}
	/* segment 0 is PostgreSQL's: never created here */
	fd = open(path, O_RDWR | PG_BINARY | (segno > 0 ? O_CREAT : 0), pg_file_create_mode);
	if (fd < 0)
	{
		pfree(path);
		return segno == 0 && errno == ENOENT;
	}
	if (fstat(fd, &st) != 0)
		ok = false;
	else
	{
		/* blocks allocated: a copy wrote the zeros out; drop them first */
		if (resparsify && st.st_blocks > 0 && ftruncate(fd, 0) != 0)
			ok = false;
		if (ok && (st.st_size != len || (resparsify && st.st_blocks > 0)) &&
			ftruncate(fd, len) != 0)
			ok = false;
	}
	close(fd);
	pfree(path);
	return ok;
}

/*
 * Make the main fork of the index's relation as long as its files.
 * resparsify: also give back blocks a copy allocated (at load).  Never an
 * ERROR: a size that cannot be reported is not worth failing a checkpoint.
 */
void
hi_files_report_size(HiIndexShared *sh, bool resparsify)
{
	char	   *base;
	uint64		nblocks;
	uint64		segbytes = (uint64) RELSEG_SIZE * BLCKSZ;
	int			segno;
	int			nsegs;
	bool		ok = true;

	if (!sh->wal_logged)
		return;
	nblocks = (files_length(sh) + BLCKSZ - 1) / BLCKSZ;
	base = hi_relpath_main(sh->spcoid[HI_TIER_FLASH], sh->dboid, sh->relnumber);
	nsegs = (int) ((nblocks + RELSEG_SIZE - 1) / RELSEG_SIZE);
	for (segno = 0; ok && segno < Max(nsegs, 1); segno++)
	{
		uint64		left = nblocks * BLCKSZ - Min(nblocks * BLCKSZ, (uint64) segno * segbytes);

		ok = set_segment(base, segno, (off_t) Min(left, segbytes), resparsify);
	}
	/* segments a longer index had */
	for (segno = Max(nsegs, 1); ok; segno++)
	{
		char	   *path = psprintf("%s.%d", base, segno);
		bool		exists = access(path, F_OK) == 0;

		pfree(path);
		if (!exists)
			break;
		ok = set_segment(base, segno, 0, false);
	}
	if (!ok)
		ereport(WARNING,
				(errcode_for_file_access(),
				 errmsg("could not set the reported size of index %u (\"%s\"): %m",
						sh->indexoid, base)));
	pfree(base);
}

/*
 * Before PostgreSQL copies an index's main fork block by block (ALTER
 * INDEX ... SET TABLESPACE, whose rebuild then makes new files): nothing
 * to copy.  The next checkpoint reports the size again.
 */
void
hi_files_clear_reported_size(Oid spcoid, Oid dboid, Oid relnumber)
{
	char	   *base;
	int			segno;

	base = hi_relpath_main(spcoid, dboid, relnumber);
	if (truncate(base, 0) != 0 && errno != ENOENT)
		ereport(WARNING,
				(errcode_for_file_access(),
				 errmsg("could not truncate \"%s\": %m", base)));
	for (segno = 1;; segno++)
	{
		char	   *path = psprintf("%s.%d", base, segno);
		bool		gone = unlink(path) != 0;

		pfree(path);
		if (gone)
			break;
	}
	pfree(base);
}

/*
 * At load: a main fork that holds blocks is a copy (a base backup, a
 * pg_upgrade copy) that wrote its zeros out, and is made sparse and as long
 * as the files again.  One that holds none has the length the last index
 * checkpoint or build gave it, and the files have not changed since unless
 * the log holds records (whose replay ends in a checkpoint, which reports
 * it): one stat instead of eight system calls per index, the first query
 * over a thousand partitions after a restart paid them all.
 */
void
hi_files_report_size_at_load(HiIndexShared *sh)
{
	char	   *base;
	struct stat st;
	bool		sparse;

	if (!sh->wal_logged)
		return;
	base = hi_relpath_main(sh->spcoid[HI_TIER_FLASH], sh->dboid, sh->relnumber);
	sparse = stat(base, &st) == 0 && st.st_blocks == 0 && st.st_size > 0;
	pfree(base);
	if (!sparse)
		hi_files_report_size(sh, true);
}
