/*
 * tier_defer.c
 *	  Syncing a build's files at the next checkpoint instead of at its end.
 *
 * A build's tier files and map file go to WAL as an image (log/wal_image.c),
 * so until a checkpoint's redo pointer passes the image's first record,
 * crash recovery writes them again; they need to be durable only before
 * such a checkpoint completes.  As PostgreSQL's own writes are synced by
 * the checkpointer, a build lists its file set here and the log sync worker
 * fsyncs the listed sets (tier files, map file, the directory) when a
 * checkpoint begins, before that checkpoint can complete (log/log_sync.c).
 * A build of 1,000 partitions then pays no fsync per index (it paid four:
 * two tiers, the map and its directory; GiST pays one).
 *
 * The builder still syncs itself when the list is full, when no worker
 * runs, or when a checkpoint began after its image started (the worker may
 * have passed the list before the set was on it): core/hi_index.c.
 */
#include "postgres.h"

#include <fcntl.h>
#include <unistd.h>

#include "storage/fd.h"
#include "storage/lwlock.h"

#include "base/hi_base.h"
#include "storage/storage.h"

/* A file set to sync (what names its files) */
typedef struct HiDeferredSet
{
	Oid			dboid;
	Oid			spcoid[HI_NUM_TIERS];
	Oid			relnumber;
} HiDeferredSet;

#define HI_DEFER_MAX	8192

typedef struct HiDeferList
{
	LWLock		lock;
	int			n;
	HiDeferredSet sets[HI_DEFER_MAX];
} HiDeferList;

static HiDeferList *defer_list = NULL;

Size
hi_defer_shmem_size(void)
{
	return sizeof(HiDeferList);
}

void
hi_defer_shmem_init(void)
{
	bool		found;

	defer_list = ShmemInitStruct("hybrid_index deferred syncs", sizeof(HiDeferList), &found);
	if (!found)
	{
		LWLockInitialize(&defer_list->lock, hi_shared->tranche_id);
		defer_list->n = 0;
	}
}

/* List sh's files for the next checkpoint's sync; false if the list is full */
bool
hi_files_defer_sync(HiIndexShared *sh)
{
	bool		ok = false;
	int			t;

	if (defer_list == NULL)
		return false;
	LWLockAcquire(&defer_list->lock, LW_EXCLUSIVE);
	if (defer_list->n < HI_DEFER_MAX)
	{
		HiDeferredSet *s = &defer_list->sets[defer_list->n++];

		s->dboid = sh->dboid;
		for (t = 0; t < HI_NUM_TIERS; t++)
			s->spcoid[t] = sh->spcoid[t];
		s->relnumber = sh->relnumber;
		ok = true;
	}
	LWLockRelease(&defer_list->lock);
	return ok;
}

/*
 * fsync one file; a file that is gone (the index was dropped meanwhile)
 * needs nothing.  A failure is PANIC where PostgreSQL's would be.
 */
static void
sync_path(const char *path, bool dir)
{
	int			fd = open(path, (dir ? O_RDONLY : O_RDWR) | PG_BINARY, 0);

	if (fd < 0)
	{
		if (errno == ENOENT)
			return;
		ereport(data_sync_elevel(ERROR),
				(errcode_for_file_access(),
				 errmsg("could not open file \"%s\" to sync it: %m", path)));
		return;
	}
	if (pg_fsync(fd) != 0)
	{
		int			save_errno = errno;

		close(fd);
		errno = save_errno;
		ereport(data_sync_elevel(ERROR),
				(errcode_for_file_access(),
				 errmsg("could not fsync file \"%s\": %m", path)));
		return;
	}
	close(fd);
}

/* The tier files and the map file of a set, not its directory */
static void
sync_set_files(const HiDeferredSet *s)
{
	int			t;
	char	   *path;

	for (t = 0; t < HI_NUM_TIERS; t++)
	{
		if (!OidIsValid(s->spcoid[t]))
			continue;
		path = hi_file_path(s->spcoid[t], s->dboid, s->spcoid[HI_TIER_FLASH],
							s->relnumber, hi_tier_suffix(t));
		sync_path(path, false);
		pfree(path);
	}
	path = hi_file_path(s->spcoid[HI_TIER_FLASH], s->dboid, s->spcoid[HI_TIER_FLASH],
						s->relnumber, "map");
	sync_path(path, false);
	pfree(path);
}

/* The directory holding a set's map file (its rename) */
static char *
set_dir(const HiDeferredSet *s)
{
	char	   *path = hi_file_path(s->spcoid[HI_TIER_FLASH], s->dboid,
									s->spcoid[HI_TIER_FLASH], s->relnumber, "map");
	char	   *slash = strrchr(path, '/');

	if (slash != NULL)
		*slash = '\0';
	return path;
}

/* A builder's own sync of its files (what the worker would do) */
void
hi_files_sync_built(HiIndexShared *sh)
{
	HiDeferredSet s;
	char	   *dir;
	int			t;

	s.dboid = sh->dboid;
	for (t = 0; t < HI_NUM_TIERS; t++)
		s.spcoid[t] = sh->spcoid[t];
	s.relnumber = sh->relnumber;
	sync_set_files(&s);
	dir = set_dir(&s);
	sync_path(dir, true);
	pfree(dir);
}

/*
 * The log sync worker, when a checkpoint begins: fsync every listed set,
 * then each directory once, and take them off the list (sets listed
 * meanwhile stay for the next checkpoint).  Returns how many were synced.
 */
int
hi_files_sync_deferred(void)
{
	HiDeferredSet *sets;
	int			n;
	int			i;
	char	  **dirs;
	int			ndirs = 0;

	if (defer_list == NULL)
		return 0;
	LWLockAcquire(&defer_list->lock, LW_EXCLUSIVE);
	n = defer_list->n;
	sets = n > 0 ? palloc(sizeof(HiDeferredSet) * n) : NULL;
	if (n > 0)
		memcpy(sets, defer_list->sets, sizeof(HiDeferredSet) * n);
	LWLockRelease(&defer_list->lock);
	if (n == 0)
		return 0;

	dirs = palloc(sizeof(char *) * n);
	for (i = 0; i < n; i++)
	{
		char	   *dir = set_dir(&sets[i]);
		int			j;

		sync_set_files(&sets[i]);
		for (j = 0; j < ndirs; j++)
			if (strcmp(dirs[j], dir) == 0)
				break;
		if (j < ndirs)
			pfree(dir);
		else
			dirs[ndirs++] = dir;
	}
	for (i = 0; i < ndirs; i++)
	{
		sync_path(dirs[i], true);
		pfree(dirs[i]);
	}
	pfree(dirs);
	pfree(sets);

	/* the first n entries are ours: later ones were appended after them */
	LWLockAcquire(&defer_list->lock, LW_EXCLUSIVE);
	memmove(defer_list->sets, defer_list->sets + n,
			sizeof(HiDeferredSet) * (defer_list->n - n));
	defer_list->n -= n;
	LWLockRelease(&defer_list->lock);
	return n;
}
