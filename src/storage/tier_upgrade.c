/*
 * tier_upgrade.c
 *	  After pg_upgrade: bring the indexes' files over from the old cluster.
 *
 * pg_upgrade restores the schema into the new cluster with every table
 * empty and then copies (or links) each relation's files, which it finds by
 * relfilenode; ours (hyb_<flash tablespace>_<relfilenode>.<suffix>, beside
 * them in each tier's tablespace) it does not know, and our build makes
 * none during the restore (am_build).  PostgreSQL 15 and later keep the
 * database OIDs, tablespace OIDs and relfilenodes across pg_upgrade, so
 * every one of our files has the same name in the new cluster, in the
 * directory of the same database and tablespace: <old>/base/<db> for the
 * default tablespace, and for any other the old version's directory
 * (PG_<old major>_<catalog version>) beside the new one in the same
 * location.  The files themselves do not depend on the server version
 * (our own page format; the old server's clean shutdown checkpointed every
 * index, so their logs hold nothing to replay).
 *
 * Files already present are left alone, so a second run brings nothing
 * twice; link mode makes hard links, as pg_upgrade --link does (the old
 * cluster must not be started again).
 */
#include "postgres.h"

#include <sys/stat.h>
#include <unistd.h>

#include "common/relpath.h"
#include "miscadmin.h"
#include "storage/copydir.h"
#include "storage/fd.h"

#include "base/hi_base.h"
#include "storage/storage.h"
#include "storage/tier_int.h"

static bool
is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/*
 * Bring our files of one database directory from old_dir into new_dir
 * (made if missing).  Returns how many were brought; *skipped counts those
 * already there.
 */
static int64
import_db_dir(const char *old_dir, const char *new_dir, bool link_files, int64 *skipped)
{
	DIR		   *d;
	struct dirent *de;
	int64		n = 0;

	d = AllocateDir(old_dir);
	if (d == NULL)
		return 0;
	while ((de = ReadDir(d, old_dir)) != NULL)
	{
		unsigned int fs,
					rn;
		char		suffix[16];
		char	   *from;
		char	   *to;

		if (sscanf(de->d_name, "hyb_%u_%u.%15s", &fs, &rn, suffix) != 3)
			continue;
		if (!is_dir(new_dir) && MakePGDirectory(new_dir) != 0 && errno != EEXIST)
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not create directory \"%s\": %m", new_dir)));
		from = psprintf("%s/%s", old_dir, de->d_name);
		to = psprintf("%s/%s", new_dir, de->d_name);
		if (access(to, F_OK) == 0)
			(*skipped)++;
		else
		{
			if (link_files)
			{
				if (link(from, to) != 0)
					ereport(ERROR,
							(errcode_for_file_access(),
							 errmsg("could not link \"%s\" to \"%s\": %m", from, to),
							 errhint("Hard links need both clusters on one file system; use link => false to copy.")));
			}
			else
				copy_file(from, to);
			fsync_fname(to, false);
			n++;
		}
		pfree(from);
		pfree(to);
	}
	FreeDir(d);
	if (n > 0)
		fsync_fname(new_dir, true);
	return n;
}

/* every database directory under old_base into the same under new_base */
static int64
import_base(const char *old_base, const char *new_base, bool link_files, int64 *skipped)
{
	DIR		   *d;
	struct dirent *de;
	int64		n = 0;

	d = AllocateDir(old_base);
	if (d == NULL)
		return 0;
	while ((de = ReadDir(d, old_base)) != NULL)
	{
		char	   *old_dir;
		char	   *new_dir;
		char	   *db_dir;

		if (!hi_is_oid_name(de->d_name))
			continue;
		old_dir = psprintf("%s/%s", old_base, de->d_name);
		new_dir = psprintf("%s/%s", new_base, de->d_name);
		db_dir = psprintf("base/%s", de->d_name);
		/* a database the new cluster does not have is not brought over */
		if (is_dir(old_dir) && is_dir(db_dir))
			n += import_db_dir(old_dir, new_dir, link_files, skipped);
		pfree(old_dir);
		pfree(new_dir);
		pfree(db_dir);
	}
	FreeDir(d);
	return n;
}

int64
hi_files_import_upgraded(const char *old_datadir, bool link_files, int64 *skipped)
{
	char	   *version_file = psprintf("%s/PG_VERSION", old_datadir);
	FILE	   *f;
	char		major[32];
	char	   *old_prefix;
	char	   *old_base;
	char		real_old[MAXPGPATH];
	char		real_new[MAXPGPATH];
	DIR		   *d;
	struct dirent *de;
	int64		n = 0;

	*skipped = 0;
	f = AllocateFile(version_file, "r");
	if (f == NULL)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("\"%s\" is not the data directory of a PostgreSQL cluster: could not open \"%s\": %m",
						old_datadir, version_file)));
	if (fgets(major, sizeof(major), f) == NULL)
		major[0] = '\0';
	FreeFile(f);
	major[strcspn(major, "\r\n")] = '\0';
	if (realpath(old_datadir, real_old) == NULL || realpath(DataDir, real_new) == NULL)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not resolve the path of \"%s\": %m", old_datadir)));
	if (strcmp(real_old, real_new) == 0 || strcmp(major, PG_MAJORVERSION) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("\"%s\" is not the data directory of the cluster this one was upgraded from",
						old_datadir),
				 errdetail("It holds PostgreSQL %s; this server is PostgreSQL %s.",
						   major, PG_MAJORVERSION)));

	/* the default tablespace */
	old_base = psprintf("%s/base", old_datadir);
	n += import_base(old_base, "base", link_files, skipped);

	/* every other tablespace: the old version's directory beside ours */
	old_prefix = psprintf("PG_%s_", major);
	d = AllocateDir("pg_tblspc");
	while (d != NULL && (de = ReadDir(d, "pg_tblspc")) != NULL)
	{
		char	   *loc;
		DIR		   *ld;
		struct dirent *le;

		if (!hi_is_oid_name(de->d_name))
			continue;
		loc = psprintf("pg_tblspc/%s", de->d_name);
		ld = AllocateDir(loc);
		while (ld != NULL && (le = ReadDir(ld, loc)) != NULL)
		{
			char	   *old_dir;
			char	   *new_dir;

			if (strncmp(le->d_name, old_prefix, strlen(old_prefix)) != 0)
				continue;
			old_dir = psprintf("%s/%s", loc, le->d_name);
			new_dir = psprintf("%s/%s", loc, TABLESPACE_VERSION_DIRECTORY);
			if (is_dir(new_dir))
				n += import_base(old_dir, new_dir, link_files, skipped);
			pfree(old_dir);
			pfree(new_dir);
		}
		if (ld != NULL)
			FreeDir(ld);
		pfree(loc);
	}
	if (d != NULL)
		FreeDir(d);
	return n;
}
