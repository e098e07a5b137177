/*
 * tier_remove.c
 *	  Unlinking the files of index file sets that are gone (dropped, rolled
 *	  back, replaced).
 *
 * One set is unlinked by name, every suffix a file of a set can have, so
 * that removing it costs the same however many files its directory holds.
 * The sets a transaction's end removes are collected first
 * (hi_remove_batch_begin .. _end); many of them (DROP TABLE of a table of
 * 1,000 partitions) are removed by one listing of each directory of the
 * database instead: the files that exist, about three per set, rather
 * than eight names tried per set and pg_tblspc listed once per set.  Each
 * directory is synced once, after all its removals.
 */
#include "postgres.h"

#include <dirent.h>
#include <unistd.h>

#include "common/relpath.h"
#include "nodes/pg_list.h"
#include "storage/fd.h"
#include "utils/memutils.h"

#include "storage/storage.h"
#include "storage/tier_int.h"

/* from this many sets of a database on, one listing per directory */
#define HI_REMOVE_LIST_MIN 16

/*
 * Every name a file of a set can have: the tier files, the log, the map
 * and its temporary (hi_durable_write_file), the pending pages a copy's
 * WAL replay parks, the stale marker.
 */
static const char *const set_suffixes[] = {
	"flash", "optane", "log", "map", "map.tmp", "pending", "stale", "stale.tmp"
};

typedef struct RemoveKey
{
	Oid			dboid;
	Oid			flashspc;
	Oid			relnumber;
} RemoveKey;

/* the sets a transaction's end removes, and the directories to sync */
static bool batching = false;
static RemoveKey *batch = NULL;
static int	nbatch = 0;
static int	maxbatch = 0;
static List *dirs_to_sync = NIL;

static void
sync_dir_of_removal(const char *dir)
{
	ListCell   *lc;
	MemoryContext old;

	if (!batching)
	{
		fsync_fname_ext(dir, true, true, LOG);
		return;
	}
	foreach(lc, dirs_to_sync)
		if (strcmp((char *) lfirst(lc), dir) == 0)
			return;
	old = MemoryContextSwitchTo(TopMemoryContext);
	dirs_to_sync = lappend(dirs_to_sync, pstrdup(dir));
	MemoryContextSwitchTo(old);
}

static bool
remove_file(const char *path)
{
	if (unlink(path) == 0)
		return true;
	if (errno != ENOENT)
		ereport(WARNING,
				(errcode_for_file_access(),
				 errmsg("could not remove index file \"%s\": %m", path)));
	return false;
}

static void
unlink_set_in_dir(const char *dir, Oid spcoid, void *arg)
{
	RemoveKey  *k = (RemoveKey *) arg;
	bool		removed = false;
	int			i;

	for (i = 0; i < lengthof(set_suffixes); i++)
	{
		char	   *path = psprintf("%s/hyb_%u_%u.%s", dir, k->flashspc, k->relnumber,
									set_suffixes[i]);

		removed |= remove_file(path);
		pfree(path);
	}
	if (removed)
		sync_dir_of_removal(dir);
}

static int
cmp_key(const void *a, const void *b)
{
	const RemoveKey *x = (const RemoveKey *) a;
	const RemoveKey *y = (const RemoveKey *) b;

	if (x->dboid != y->dboid)
		return x->dboid < y->dboid ? -1 : 1;
	if (x->flashspc != y->flashspc)
		return x->flashspc < y->flashspc ? -1 : 1;
	if (x->relnumber != y->relnumber)
		return x->relnumber < y->relnumber ? -1 : 1;
	return 0;
}

typedef struct ListArg
{
	RemoveKey  *keys;			/* of one database, sorted */
	int			n;
} ListArg;

/* Remove the files of the listed sets that one directory holds */
static void
unlink_listed_in_dir(const char *dir, Oid spcoid, void *arg)
{
	ListArg    *la = (ListArg *) arg;
	DIR		   *d = AllocateDir(dir);
	struct dirent *de;
	bool		removed = false;

	if (d == NULL)
		return;
	while ((de = ReadDirExtended(d, dir, LOG)) != NULL)
	{
		unsigned int fs,
					rn;
		char		suffix[16];
		RemoveKey	k;
		bool		known = false;
		int			i;

		if (sscanf(de->d_name, "hyb_%u_%u.%15s", &fs, &rn, suffix) != 3)
			continue;
		for (i = 0; i < lengthof(set_suffixes) && !known; i++)
			known = strcmp(suffix, set_suffixes[i]) == 0;
		k.dboid = la->keys[0].dboid;
		k.flashspc = fs;
		k.relnumber = rn;
		if (known && bsearch(&k, la->keys, la->n, sizeof(RemoveKey), cmp_key) != NULL)
		{
			char	   *path = psprintf("%s/%s", dir, de->d_name);

			removed |= remove_file(path);
			pfree(path);
		}
	}
	FreeDir(d);
	if (removed)
		sync_dir_of_removal(dir);
}

/* Unlink a relfilenode's files in every tablespace (also in WAL redo) */
void
hi_files_remove_set(Oid dboid, Oid flashspc, Oid relnumber)
{
	RemoveKey	k;

	k.dboid = dboid;
	k.flashspc = flashspc;
	k.relnumber = relnumber;
	if (batching)
	{
		if (nbatch == maxbatch)
		{
			maxbatch = Max(64, maxbatch * 2);
			batch = batch == NULL ?
				MemoryContextAlloc(TopMemoryContext, sizeof(RemoveKey) * maxbatch) :
				repalloc(batch, sizeof(RemoveKey) * maxbatch);
		}
		batch[nbatch++] = k;
		return;
	}
	hi_foreach_db_dir(dboid, unlink_set_in_dir, &k);
}

/*
 * A transaction's end starts removing sets.  Sets a failed end left
 * (an error between begin and end) are removed with this end's.
 */
void
hi_remove_batch_begin(void)
{
	batching = true;
}

/* ... and ends: every set collected goes, then each directory is synced */
void
hi_remove_batch_end(void)
{
	int			i = 0;

	if (!batching)
		return;
	if (nbatch > 1)
		qsort(batch, nbatch, sizeof(RemoveKey), cmp_key);
	while (i < nbatch)
	{
		int			j = i;

		while (j < nbatch && batch[j].dboid == batch[i].dboid)
			j++;
		if (j - i >= HI_REMOVE_LIST_MIN)
		{
			ListArg		la;

			la.keys = batch + i;
			la.n = j - i;
			hi_foreach_db_dir(batch[i].dboid, unlink_listed_in_dir, &la);
		}
		else
		{
			int			k;

			for (k = i; k < j; k++)
				hi_foreach_db_dir(batch[k].dboid, unlink_set_in_dir, &batch[k]);
		}
		i = j;
	}
	nbatch = 0;
	batching = false;
	while (dirs_to_sync != NIL)
	{
		char	   *dir = (char *) linitial(dirs_to_sync);

		dirs_to_sync = list_delete_first(dirs_to_sync);
		fsync_fname_ext(dir, true, true, LOG);
		pfree(dir);
	}
}

/* Is a directory entry's name a number (a database or tablespace OID)? */
bool
hi_is_oid_name(const char *name)
{
	if (*name == '\0')
		return false;
	for (; *name; name++)
		if (*name < '0' || *name > '9')
			return false;
	return true;
}

/* Unlink the pending files in one database directory; false if unreadable */
static bool
sweep_db_dir(const char *dir)
{
	DIR		   *d = AllocateDir(dir);
	struct dirent *de;

	if (d == NULL)
		return false;
	while ((de = ReadDirExtended(d, dir, LOG)) != NULL)
	{
		unsigned int fs,
					rn;
		char		suffix[16];

		if (sscanf(de->d_name, "hyb_%u_%u.%15s", &fs, &rn, suffix) == 3 &&
			strcmp(suffix, "pending") == 0)
		{
			char	   *path = psprintf("%s/%s", dir, de->d_name);

			if (unlink(path) != 0 && errno != ENOENT)
				ereport(LOG,
						(errcode_for_file_access(),
						 errmsg("could not remove file \"%s\": %m", path)));
			pfree(path);
		}
	}
	FreeDir(d);
	return true;
}

/* Every database directory below parent (base, a tablespace's version directory) */
static bool
sweep_parent(const char *parent)
{
	DIR		   *d = AllocateDir(parent);
	struct dirent *de;
	bool		ok = true;

	if (d == NULL)
		return errno == ENOENT;
	while ((de = ReadDirExtended(d, parent, LOG)) != NULL)
	{
		char	   *dir;

		if (!hi_is_oid_name(de->d_name))
			continue;
		dir = psprintf("%s/%s", parent, de->d_name);
		ok = sweep_db_dir(dir) && ok;
		pfree(dir);
	}
	FreeDir(d);
	return ok;
}

/*
 * Remove the pending files of every database in every tablespace: pages a
 * copy's WAL replay parked until a MAP record, which no map references once
 * recovery has ended (wal_redo.c).  One listing per database directory
 * instead of a name looked up at every index's first load, which was a
 * twentieth of the first query over 1,000 partitions after a restart.  Never
 * an ERROR; false if some directory could not be read.
 */
bool
hi_files_sweep_pending(void)
{
	DIR		   *ts;
	struct dirent *de;
	bool		ok = sweep_parent("base");

	ts = AllocateDir("pg_tblspc");
	if (ts == NULL)
		return false;
	while ((de = ReadDirExtended(ts, "pg_tblspc", LOG)) != NULL)
	{
		char	   *parent;

		if (!hi_is_oid_name(de->d_name))
			continue;
		parent = psprintf("pg_tblspc/%s/%s", de->d_name, TABLESPACE_VERSION_DIRECTORY);
		ok = sweep_parent(parent) && ok;
		pfree(parent);
	}
	FreeDir(ts);
	return ok;
}
