/*
 * tier_fds.c
 *	  A backend's descriptors of the index files: opening (a fast tier's
 *	  file made by its first page), a bounded LRU of them, and what kind of
 *	  file system each lives on.
 */
#include "postgres.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "common/file_perm.h"
#include "access/xlog.h"
#include "lib/ilist.h"
#include "miscadmin.h"
#include "storage/fd.h"
#include "utils/memutils.h"

#include "base/hi_base.h"
#include "storage/storage.h"
#include "storage/tier_int.h"

#define HI_FD_KINDS 3			/* flash, optane, log */
#define HI_FD_LOG	2

/*
 * A backend's descriptors of one slot's files.  The slots holding any are
 * in an LRU list, and their number is bounded (make_room): a backend that
 * touches thousands of indexes keeps within its share of
 * max_files_per_process, and PostgreSQL's own files keep theirs (every
 * descriptor here is counted with ReserveExternalFD).  Descriptors of the
 * slot being opened are never the ones closed, and every I/O batch is of
 * one index (hi_io_batch), so a closed number is never in a request.
 */
typedef struct HiLocalFds
{
	uint32		generation;
	int			fd[HI_FD_KINDS];
	bool		in_memory[HI_FD_KINDS]; /* file lives on tmpfs/ramfs */
	bool		in_lru;
	dlist_node	lru;			/* most recently used at the head */
} HiLocalFds;

static dlist_head fds_lru = DLIST_STATIC_INIT(fds_lru);
static int	nopen_fds = 0;
static HiLocalFds *local_fds = NULL;
static bool direct_io_logged = false;

static void
close_local(HiLocalFds *l, int k)
{
	if (l->fd[k] < 0)
		return;
	close(l->fd[k]);
	ReleaseExternalFD();
	nopen_fds--;
	l->fd[k] = -1;
}

static void
close_all_local(HiLocalFds *l)
{
	int			k;

	for (k = 0; k < HI_FD_KINDS; k++)
		close_local(l, k);
	if (l->in_lru)
		dlist_delete(&l->lru);
	l->in_lru = false;
}

/*
 * The most descriptors a backend keeps open: a third of what PostgreSQL
 * lets it open beyond its own needs, as for other external descriptors
 * (fd.c), and at least those of two indexes.
 */
static int
fds_budget(void)
{
	return Max(2 * HI_FD_KINDS, max_safe_fds / 3 - 8);
}

/* Before opening one more descriptor for l: close those of the LRU slots */
static void
make_room(HiLocalFds *l)
{
	while (nopen_fds >= fds_budget() && !dlist_is_empty(&fds_lru))
	{
		HiLocalFds *victim = dlist_tail_element(HiLocalFds, lru, &fds_lru);

		if (victim == l)
			break;
		close_all_local(victim);
	}
}

/* A descriptor opened for l */
static void
count_opened(HiLocalFds *l)
{
	ReserveExternalFD();
	nopen_fds++;
	if (!l->in_lru)
		dlist_push_head(&fds_lru, &l->lru);
	l->in_lru = true;
}

static HiLocalFds *
local_fds_for(HiIndexShared *sh)
{
	int			slotno = sh - hi_shared->indexes;
	HiLocalFds *l;
	int			k;

	if (local_fds == NULL)
	{
		local_fds = MemoryContextAlloc(TopMemoryContext,
									   sizeof(HiLocalFds) * hi_shared->max_indexes);
		for (slotno = 0; slotno < hi_shared->max_indexes; slotno++)
		{
			local_fds[slotno].generation = 0;
			local_fds[slotno].in_lru = false;
			for (k = 0; k < HI_FD_KINDS; k++)
				local_fds[slotno].fd[k] = -1;
		}
		slotno = sh - hi_shared->indexes;
	}
	l = &local_fds[slotno];
	if (l->generation != sh->generation)
	{
		/* the slot was reused for another relfilenode: close stale fds */
		close_all_local(l);
		l->generation = sh->generation;
	}
	else if (l->in_lru && dlist_head_node(&fds_lru) != &l->lru)
	{
		dlist_delete(&l->lru);
		dlist_push_head(&fds_lru, &l->lru);
	}
	return l;
}

/* Does the file live in memory (tmpfs, ramfs), where there is no device? */
static bool
fd_in_memory(int fd)
{
	struct statfs st;

	if (fstatfs(fd, &st) != 0)
		return false;
	return st.f_type == TMPFS_MAGIC || st.f_type == RAMFS_MAGIC;
}

/*
 * The same, remembered per tablespace for this backend (a tablespace's
 * files share its file system): opening 1,000 partitions' files asked the
 * kernel 2,000 times.
 */
#define HI_FS_KINDS 8
static struct
{
	Oid			spcoid;
	bool		in_memory;
}			fs_kinds[HI_FS_KINDS];
static int	nfs_kinds = 0;

static bool
tablespace_in_memory(Oid spcoid, int fd)
{
	bool		mem;
	int			i;

	for (i = 0; i < nfs_kinds; i++)
		if (fs_kinds[i].spcoid == spcoid)
			return fs_kinds[i].in_memory;
	mem = fd_in_memory(fd);
	if (nfs_kinds < HI_FS_KINDS)
	{
		fs_kinds[nfs_kinds].spcoid = spcoid;
		fs_kinds[nfs_kinds].in_memory = mem;
		nfs_kinds++;
	}
	return mem;
}

/*
 * Open (and with create, create or truncate) the data file of a tier.
 * Buffered by default: the OS page cache is then a second cache below ours,
 * as it is below shared buffers, so that a restarted server or an index
 * larger than the cache reads its misses from memory.  With
 * hybrid_index.direct_io (the papers' experiments count device I/O)
 * O_DIRECT is used where the filesystem accepts it; tmpfs and some others
 * refuse it, and that file then uses buffered I/O (logged once per
 * backend).  The choice is per file: a tmpfs fast tier must not take
 * O_DIRECT away from the flash tier of the same index.
 */
static int
open_tier_file(const char *path, int flags)
{
	int			fd;

	fd = open(path, flags | (hi_direct_io ? O_DIRECT : 0), pg_file_create_mode);
	if (fd < 0 && errno == EINVAL && hi_direct_io)
	{
		if (!direct_io_logged)
			ereport(LOG,
					(errmsg("hybrid_index: O_DIRECT refused for \"%s\", using buffered I/O", path)));
		direct_io_logged = true;
		fd = open(path, flags, pg_file_create_mode);
	}
	return fd;
}

/*
 * A fast tier beside the flash tier (no optane_tablespace) gets its file
 * from the first page written there: three of the four access methods
 * place none there at build, and a file made per index was a fifth of
 * CREATE INDEX on a parent of 1,000 partitions.  A missing one is empty to
 * every reader.  Its directory entry is durable before a map points into
 * it: the map's rename syncs that directory (hi_replace_file, or the
 * deferred sync of a build, tier_defer.c).  A fast tier in a tablespace of
 * its own is made at build, as the flash tier is, so that DROP TABLESPACE
 * refuses to drop it while the index lives; one missing there is an error.
 */
bool
hi_fast_tier_lazy(HiIndexShared *sh)
{
	return sh->spcoid[HI_TIER_OPTANE] == sh->spcoid[HI_TIER_FLASH];
}

static int
open_fast_tier(HiIndexShared *sh, const char *path, bool make)
{
	int			fd = open_tier_file(path, O_RDWR | PG_BINARY);

	if (fd >= 0 || errno != ENOENT || !make || !hi_fast_tier_lazy(sh))
		return fd;
	return open_tier_file(path, O_RDWR | O_CREAT | PG_BINARY);
}

static int
file_open(HiIndexShared *sh, int tier, bool create, bool make_fast)
{
	HiLocalFds *l = local_fds_for(sh);
	int			fd;
	char	   *path;

	if (!create && l->fd[tier] >= 0)
		return l->fd[tier];

	make_room(l);
	path = hi_slot_path(sh, tier);
	if (create)
		fd = open_tier_file(path, O_RDWR | O_CREAT | O_TRUNC | PG_BINARY);
	else if (tier == HI_TIER_OPTANE)
	{
		fd = open_fast_tier(sh, path, make_fast);
		if (fd < 0 && errno == ENOENT && !make_fast && hi_fast_tier_lazy(sh))
		{
			pfree(path);
			return -1;
		}
	}
	else
		fd = open_tier_file(path, O_RDWR | PG_BINARY);
	if (fd < 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not open index file \"%s\": %m", path)));
	close_local(l, tier);
	l->fd[tier] = fd;
	count_opened(l);
	l->in_memory[tier] = tablespace_in_memory(sh->spcoid[tier], fd);
	pfree(path);
	return fd;
}

int
hi_file_open(HiIndexShared *sh, int tier, bool create)
{
	return file_open(sh, tier, create, true);
}

/*
 * The tier file's descriptor, or -1 if it does not exist (a fast tier yet
 * to receive its first page): for syncs, cuts and copies of what is there
 */
int
hi_file_open_existing(HiIndexShared *sh, int tier)
{
	return file_open(sh, tier, false, false);
}

/*
 * Is this tier's file of the index in memory?  Only meaningful once the
 * file was opened in this backend (every I/O request carries its fd).
 */
bool
hi_file_in_memory(HiIndexShared *sh, int tier)
{
	HiLocalFds *l = local_fds_for(sh);

	return l->fd[tier] >= 0 && l->in_memory[tier];
}

int
hi_log_fd(HiIndexShared *sh)
{
	HiLocalFds *l = local_fds_for(sh);

	if (l->fd[HI_FD_LOG] < 0)
	{
		char	   *path = hi_file_path(sh->spcoid[HI_TIER_FLASH], sh->dboid,
										sh->spcoid[HI_TIER_FLASH], sh->relnumber, "log");
		bool		missing = sh->log_missing;
		int			fd;

		make_room(l);
		fd = open(path, O_RDWR | O_CREAT | PG_BINARY, pg_file_create_mode);
		if (fd < 0)
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not open index log \"%s\": %m", path)));

		/*
		 * The first append makes the log (a build makes none: a file
		 * created per index was a third of CREATE INDEX on a parent of
		 * 1,000 partitions).  Its directory entry is durable before any
		 * record is: whoever opens it while it may be new syncs it.
		 */
		if (missing && !RecoveryInProgress())
		{
			hi_fsync_dir_of(path);
			sh->log_missing = false;
		}
		l->fd[HI_FD_LOG] = fd;
		count_opened(l);
		pfree(path);
	}
	return l->fd[HI_FD_LOG];
}

/* Close this backend's descriptors of a slot */
void
hi_files_forget(HiIndexShared *sh)
{
	close_all_local(local_fds_for(sh));
}
