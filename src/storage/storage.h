/*
 * storage.h
 *	  The storage layer: tier files (one per tier per index, in the
 *	  tablespace of the tier), batched I/O, the page table and slot maps,
 *	  the map file, moves between tiers, and the page store that reads and
 *	  writes whole pages by logical id (checksum, layout check,
 *	  copy-on-write slots, tier choice).  It knows nothing about the index
 *	  structures: what only an upper layer knows (a page's layout, which
 *	  tier a page goes to) comes in as a HiStorePolicy registered per
 *	  access method kind.
 */
#ifndef HI_STORAGE_H
#define HI_STORAGE_H

#include "base/hi_base.h"

/* ---- storage/page_table_mapfile.c: metadata and page table as of the
 * last checkpoint, written atomically (temp file + rename) ---- */

typedef struct HiMapHeader
{
	uint32		magic;
	uint32		version;
	uint32		crc;			/* CRC-32C of everything after this field */
	uint32		npte;			/* page table entries that follow */
	Oid			indexoid;		/* owner when written */
	Oid			dboid;
	Oid			relnumber;
	Oid			spcoid[HI_NUM_TIERS];
	uint32		nslots[HI_NUM_TIERS];
	uint32		am_blob_len;	/* AM state bytes after the page table */
	HiMeta		meta;
} HiMapHeader;

#define HI_MAP_MAGIC	0x48594D50	/* "HYMP" */
/*
 * 2: grid directories' header padded to 24 bytes; 3: leaf entries may hold
 * exact points (HI_ENT_POINT), so that a build that does not know them
 * refuses the index instead of reading points as boxes.  Version 2 maps
 * are read (their entries are all boxes) and written back as version 3.
 * 4: HiMeta.payload_keys says how the INCLUDE rows' tree is keyed
 * (payload.h: (z, TID) from 0.3.0 on), so that a build reading 3 at most
 * refuses an index whose tree it would read as keyed by TID.  Version 3
 * maps (payload_keys 0: keyed by TID) are read as they are.
 */
#define HI_MAP_VERSION	4
#define HI_MAP_VERSION_MIN	2
#define HI_MAP_VERSION_OK(v) ((v) >= HI_MAP_VERSION_MIN && (v) <= HI_MAP_VERSION)
/* version 2's header: HiMeta ended before payload_root */
#define HI_MAP_HEADER_SIZE(v) \
	((v) >= 3 ? sizeof(HiMapHeader) : offsetof(HiMapHeader, meta) + offsetof(HiMeta, payload_root))

extern Oid	hi_map_read_owner(const char *path);
extern uint64 hi_map_ckpt_position(const char *path, bool *exists);
extern uint32 hi_map_meta_version(const char *path);
extern char *hi_map_image(HiIndexShared *sh, Size *len);
extern void hi_map_write_image(HiIndexShared *sh, const char *image, Size len, bool sync);
extern void hi_map_write(HiIndexShared *sh);
extern bool hi_map_read(HiIndexShared *sh, const char *indexname);

/* AM-specific state saved in the map file at checkpoints */
extern void hi_am_blob_set(HiIndexShared *sh, const char *data, uint32 len);
extern char *hi_am_blob_get(HiIndexShared *sh, uint32 *len);

/* ---- storage/tier_files.c ---- */
extern char *hi_file_path(Oid dirspc, Oid dboid, Oid flashspc, Oid relnumber,
						  const char *suffix);
extern const char *hi_tier_suffix(int tier);
extern int	hi_file_open(HiIndexShared *sh, int tier, bool create);
extern int	hi_file_open_existing(HiIndexShared *sh, int tier);
extern bool hi_files_sweep_pending(void);
extern bool hi_file_in_memory(HiIndexShared *sh, int tier);
extern int	hi_log_fd(HiIndexShared *sh);
extern char *hi_slot_path(HiIndexShared *sh, int tier);
extern void hi_file_truncate(HiIndexShared *sh, int tier, uint32 nslots);

/*
 * Told of every write to one index's tier files in this backend, and of
 * every cut (a build streams its files into WAL through it).  NULL stops.
 */
typedef struct HiFileWatch
{
	void		(*written) (void *arg, int tier, uint64 offset, const char *data,
							uint32 len);
	void		(*truncated) (void *arg, int tier, uint64 len);
	void	   *arg;
} HiFileWatch;
extern void hi_files_watch(HiIndexShared *sh, const HiFileWatch *w);

/* tier_defer.c: a build's files synced at the next checkpoint */
extern Size hi_defer_shmem_size(void);
extern void hi_defer_shmem_init(void);
extern bool hi_files_defer_sync(HiIndexShared *sh);
extern void hi_files_sync_built(HiIndexShared *sh);
extern int	hi_files_sync_deferred(void);
extern void hi_files_watch_written(HiIndexShared *sh, int tier, uint64 offset,
								   const char *data, uint32 len);
extern bool hi_slot_files_exist(HiIndexShared *sh);
extern void hi_files_create(HiIndexShared *sh);
extern void hi_files_forget(HiIndexShared *sh);
extern void hi_files_schedule_old_removal(Oid indexoid, Oid keep_flashspc,
										  Oid keep_relnumber, bool new_index);
extern void hi_files_schedule_drop(Oid indexoid);
extern void hi_files_mark_stale(Oid dboid, Oid flashspc, Oid relnumber, const char *why);
extern char *hi_files_stale(HiIndexShared *sh);

/* the layer above forgets a relfilenode's shared state before its files go */
typedef void (*hi_files_release_fn) (Oid dboid, Oid relnumber);
extern void hi_files_set_release_hook(hi_files_release_fn fn);
/* ... and is told once they were removed (to log it) */
typedef void (*hi_files_drop_fn) (Oid dboid, Oid flashspc, Oid relnumber);
extern void hi_files_set_drop_hook(hi_files_drop_fn fn);
extern void hi_files_remove_set(Oid dboid, Oid flashspc, Oid relnumber);
/*
 * ... and of a prepared transaction's file sets (hyb2pc/<xid>): the file
 * was written (data, len) or finished and removed (data NULL), to log it;
 * WAL replay writes and removes the same file (tier_pending.c)
 */
typedef void (*hi_files_prepared_fn) (Oid dboid, Oid dbspc, TransactionId xid,
									  const char *data, Size len);
extern void hi_files_set_prepared_hook(hi_files_prepared_fn fn);
extern void hi_files_prepared_redo(Oid dboid, Oid dbspc, TransactionId xid,
								   const char *data, Size len);
/* after pg_upgrade: our files of an old data directory into this cluster (tier_upgrade.c) */
extern int64 hi_files_import_upgraded(const char *old_datadir, bool link_files, int64 *skipped);
extern void hi_files_release_and_remove(Oid dboid, Oid flashspc, Oid relnumber);

/* storage/tier_size.c: the main fork as long as the files (sizes for DBAs) */
extern void hi_files_report_size(HiIndexShared *sh, bool resparsify);
extern void hi_files_report_size_at_load(HiIndexShared *sh);
extern void hi_files_clear_reported_size(Oid spcoid, Oid dboid, Oid relnumber);
/* tier_files.c: what a transaction's end does with a set */
extern void hi_files_end_removals(bool deferred_start);
extern void hi_files_unwatch(void);
extern void hi_files_drop_set(Oid dboid, Oid flashspc, Oid relnumber);

/* storage/tier_pending.c: sets removed at commit or abort, also two-phase */
typedef struct HiFileSet
{
	Oid			dboid;
	Oid			flashspc;
	Oid			relnumber;
	bool		at_commit;		/* removed at commit (drop), else at abort */
} HiFileSet;
extern void hi_files_pending_add(Oid dboid, Oid flashspc, Oid relnumber, bool at_commit);
extern void hi_files_at_xact_end(bool commit);
extern void hi_files_at_subxact_end(bool commit, SubTransactionId mySubid,
									SubTransactionId parentSubid);
extern bool hi_files_pending(void);
extern void hi_files_at_prepare(void);
extern void hi_files_at_prepared(void);
extern void hi_files_finish_prepared(void);
extern void hi_fsync_dir_of(const char *path);
extern void hi_durable_write_file(const char *path, const char *data, Size len);
extern void hi_replace_file(const char *path, const char *data, Size len, bool sync);
extern char *hi_read_whole_file(const char *path, Size *len);

/* ---- storage/tier_io.c ---- */
typedef struct HiIoReq
{
	int			fd;
	int			tier;
	off_t		offset;
	char	   *buf;
	uint32		len;
	const char *path;			/* for error messages */
} HiIoReq;

extern void hi_io_batch(HiIndexShared *sh, HiIoReq *reqs, int n, bool write);
extern bool hi_io_write_start(HiIndexShared *sh, HiIoReq *reqs, int n);
extern void hi_io_write_wait(void);

/* ---- storage/page_table.c ---- */
extern void hi_pt_init(HiIndexShared *sh, uint32 npages_hint);
extern void hi_pt_free(HiIndexShared *sh);
extern uint32 hi_pt_get(HiIndexShared *sh, uint32 pageno);
extern uint32 hi_pt_alloc_slot(HiIndexShared *sh, int tier);
extern void hi_pt_unalloc_slot(HiIndexShared *sh, int tier, uint32 slot);
extern bool hi_pt_remap_if(HiIndexShared *sh, uint32 pageno, uint32 expect,
						   uint32 new_pte);
extern uint32 *hi_pt_collect(HiIndexShared *sh, int tier, bool leaves, Size *n);
extern uint32 *hi_pt_fresh_pages(HiIndexShared *sh, Size *n);
extern uint32 *hi_pt_compaction_plan(HiIndexShared *sh, int tier, Size *n);
extern bool hi_pt_compaction_wanted(HiIndexShared *sh);
extern void hi_pt_remap(HiIndexShared *sh, uint32 pageno, uint32 new_pte);
extern void hi_pt_settle(HiIndexShared *sh);
extern void hi_pt_release_pending(HiIndexShared *sh);
extern uint32 hi_pt_trim(HiIndexShared *sh, int tier);
extern void hi_pt_reads_begin(HiIndexShared *sh);
extern void hi_pt_reads_end(HiIndexShared *sh);
extern void hi_pt_count(HiIndexShared *sh, uint64 *pages_per_tier);
extern void hi_pt_check(HiIndexShared *sh);

/* ---- storage/tier_move.c ---- */
extern int	hi_tier_move(HiIndexShared *sh, const uint32 *pagenos, int n, int to_tier);
extern int	hi_tier_compact(HiIndexShared *sh, int tier);

/* ---- storage/page_store.c ---- */

/*
 * What the page store needs from the layers above, per access method kind
 * (registered at load time, so that any backend, e.g. one evicting another
 * index's pages, finds it from the shared slot alone).  Every member is
 * optional.
 */
typedef struct HiStorePolicy
{
	/* what is wrong with a page's layout once its checksum matched, or NULL */
	const char *(*page_layout) (const char *page, uint32 page_size);
	/* pages just read from the tier files or found in a cache */
	void		(*note_reads) (HiIndexShared *sh, int slotno, const uint32 *pagenos,
							   char *const *pages, int n);
	/* the tier a page is written to (old_pte: its current mapping) */
	int			(*write_tier) (HiIndexShared *sh, int slotno, const char *page,
							   uint32 old_pte);
	/* whether a clean page leaving a cache should move to the other tier */
	bool		(*migrate_clean) (HiIndexShared *sh, int slotno, const char *page,
								  uint32 pte);
} HiStorePolicy;

extern void hi_store_register(HiAmKind kind, const HiStorePolicy *policy);
extern const HiStorePolicy *hi_store_policy(const HiIndexShared *sh);
extern void hi_store_write(HiIndexShared *sh, char **pages, int n);

/* a batch of page writes left in flight (hi_store_write_start) */
typedef struct HiStoreFlight
{
	HiIndexShared *sh;
	char	  **pages;
	int			n;
	HiIoReq    *reqs;
	uint32	   *ptes;
	bool		in_flight;		/* else done at start */
	bool		started;		/* finish has something to do */
} HiStoreFlight;

extern void hi_store_write_start(HiStoreFlight *f, HiIndexShared *sh, char **pages, int n);
extern void hi_store_write_finish(HiStoreFlight *f);
extern void hi_store_read_pages(HiIndexShared *sh, const char *relname,
								const uint32 *pagenos, int n, char **bufs,
								uint32 *ptes);
extern uint64 hi_store_device_reads(HiIndexShared *sh);
extern bool hi_store_reads_often(HiIndexShared *sh, uint64 before, int n);
extern void hi_store_read(HiIndexShared *sh, const uint32 *pagenos, int n,
						  char **bufs);
extern uint32 hi_page_checksum(const char *page, uint32 page_size);
extern void hi_store_verify(HiIndexShared *sh, const char *page, uint32 pageno,
							uint32 pte);

#endif							/* HI_STORAGE_H */
