/*
 * hi_base.h
 *	  The types every layer of hybrid_index passes around: page header,
 *	  per-index shared slot and per-backend handle, page-table entry and
 *	  slot-state encodings, the GUC variables, and the shared-memory root.
 *	  No logic lives behind this header beyond the GUC definitions
 *	  (base/hi_guc.c), the shared root (base/hi_shmem.c), the build
 *	  spill files (base/hi_spill.c) and the builds' radix sort
 *	  (base/hi_radix.c).
 *
 * Layers, top to bottom (tools/check-layers.sh enforces them; src/README.md
 * says what each owns): top (hybrid_index.c, hi_utility.c) -> am ->
 * efind, lbgrid -> grid -> rtree -> policy -> core -> cache -> log ->
 * storage -> base, geom.  A folder includes headers of folders below it
 * only; what a lower layer needs from above is registered as a callback.
 */
#ifndef HI_BASE_H
#define HI_BASE_H

#include "postgres.h"

#include "access/xact.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/buffile.h"
#include "storage/lwlock.h"
#include "storage/spin.h"
#include "utils/dsa.h"
#include "utils/guc.h"
#include "utils/rel.h"

#include "compat/hi_compat.h"
#include "geom/geom_box.h"

#define HI_EXTENSION_VERSION	"0.3.0"	/* hybrid_index.control, hybrid_index_version() */

#define HI_NUM_TIERS		2
#define HI_TIER_FLASH		0
#define HI_TIER_OPTANE		1

#define HI_INVALID_PAGE		((uint32) 0xFFFFFFFF)

#define HI_PAGE_SIZE_MIN	2048
#define HI_PAGE_SIZE_MAX	32768
#define HI_PAGE_SIZE_DEFAULT 8192
#define HI_IO_ALIGN			4096

/* Access methods built on this core (stored in the map file) */
typedef enum HiAmKind
{
	HI_AM_HYRTREE = 1,
	HI_AM_EFIND = 2,
	HI_AM_LBGRID = 3,
	HI_AM_HGRID = 4
} HiAmKind;


typedef enum HiIoMethod
{
	HI_IO_URING = 0,
	HI_IO_SYNC = 1
} HiIoMethod;

/* ---- GUCs (base/hi_guc.c) ---- */
extern int	hi_cache_size_mb;
extern int	hi_max_page_size;
extern int	hi_max_indexes;
extern int	hi_io_method;
extern int	hi_io_depth;
extern int	hi_insert_batch;
extern int	hi_checkpoint_log_kb;
extern bool hi_emulate_devices;
extern bool hi_direct_io;
extern bool hi_cache_prefault;
extern bool hi_recheck;
extern bool hi_debug_fail_split;
extern int	hi_dev_read_us[HI_NUM_TIERS];
extern int	hi_dev_write_us[HI_NUM_TIERS];
extern int	hi_dev_parallelism[HI_NUM_TIERS];

extern void hi_define_gucs(void);

/*
 * One setting of a table of hybrid_index.* settings (hi_define_guc_table):
 * every module defines its settings as a table; min/max apply to int and
 * real settings, options to enum ones; boot is the default (0/1 for bool).
 */
typedef enum HiGucType
{
	HI_GUC_INT,
	HI_GUC_REAL,
	HI_GUC_BOOL,
	HI_GUC_ENUM
} HiGucType;

typedef struct HiGucDef
{
	const char *name;
	const char *short_desc;
	const char *long_desc;
	HiGucType	type;
	void	   *var;
	double		boot;
	double		min;
	double		max;
	const struct config_enum_entry *options;
	GucContext	context;
	int			flags;
	GucIntCheckHook int_check;	/* int settings only, may be NULL */
} HiGucDef;

extern void hi_define_guc_table(const HiGucDef *defs, int n);

/*
 * Every page of every index starts with this header.  The storage layer
 * reads checksum and pageno (to verify what it read); placement policies
 * read level.
 */
typedef struct HiPageHeader
{
	uint32		checksum;		/* CRC-32C of the page with this field 0 */
	uint32		pageno;			/* logical page id */
	uint16		level;			/* 0 = leaf */
	uint16		flags;
	uint16		nentries;
	uint16		reserved;
	uint32		link;			/* next page of a chain (null list) */
} HiPageHeader;

#define HI_PAGE_FLAG_NULLS	0x0001	/* page of the NULL/EMPTY list */
#define HI_PAGE_FLAG_PAYLOAD 0x1000 /* page of the INCLUDE rows (payload/) */
#define HI_PAGE_FLAG_PAYLOAD_Z 0x2000	/* and keyed by (Z-order, TID) */

/*
 * Structure metadata of one index, persisted in its map file at each
 * checkpoint and otherwise kept in shared memory (protected by tree_lock).
 */
typedef struct HiMeta
{
	uint32		magic;
	uint32		version;
	uint32		am;				/* HiAmKind */
	uint32		page_size;
	uint32		placement;		/* placement mode, the AM's (policy/placement.h) */
	uint32		root;			/* logical page id of the root */
	uint32		height;			/* 1 = root is a leaf */
	uint32		npages;			/* logical page ids handed out */
	uint32		null_head;		/* first page of NULL/EMPTY entries */
	uint32		null_tail;		/* last page of NULL/EMPTY entries */
	uint64		nentries;		/* non-NULL, non-EMPTY entries */
	uint64		nnulls;			/* NULL or EMPTY entries */
	uint64		ckpt_lsn;		/* log position the map file reflects */
	/* map version 3 on */
	uint32		payload_root;	/* root of the INCLUDE rows (payload/), or
								 * HI_INVALID_PAGE */
	uint32		payload_keys;	/* how its pages are keyed: PL_KEYS_* */
} HiMeta;

#define HI_META_MAGIC	0x48594258	/* "HYBX" */
/*
 * Entry format: 1 = boxes only, 2 = point entries hold exact coordinates
 * (HI_ENT_POINT/HI_ENT_CANON).  An index of format 1 keeps working; only
 * format 2 offers index-only scans (am_return.c).
 */
#define HI_META_VERSION 2
#define HI_META_VERSION_POINTS 2
#define HI_ENTRY_FORMAT_NAME(v) \
	((v) >= HI_META_VERSION_POINTS ? "boxes and exact points" : "boxes")
/* how the INCLUDE rows are ordered (payload.h: PL_KEYS_TID 0, PL_KEYS_Z 1) */
#define HI_INCLUDE_ORDER_NAME(m) \
	((m)->payload_root == HI_INVALID_PAGE ? "none" : \
	 (m)->payload_keys == 1 ? "z-order" : "heap")

typedef struct HiTierCounters
{
	pg_atomic_uint64 reads;
	pg_atomic_uint64 writes;
	pg_atomic_uint64 read_batches;
	pg_atomic_uint64 write_batches;
	pg_atomic_uint64 bytes_read;
	pg_atomic_uint64 bytes_written;
	pg_atomic_uint64 io_time_us;
} HiTierCounters;

/*
 * Page table entries: tier in the top bit, a flag for non-leaf pages (so
 * placement policies can find leaves without reading pages), and slot + 1
 * below (0 = no slot yet).
 */
#define HI_PTE_TIER(e)		((int) ((e) >> 31))
#define HI_PTE_UPPER(e)		((bool) (((e) >> 30) & 1))
#define HI_PTE_SLOT(e)		((uint32) (((e) & 0x3FFFFFFF) - 1))
#define HI_PTE_MAKE(t, s, upper) \
	((((uint32) (t)) << 31) | ((uint32) ((upper) ? 1 : 0) << 30) | ((s) + 1))
#define HI_PTE_MAPPED(e)	(((e) & 0x3FFFFFFF) != 0)
#define HI_MAX_SLOTS		0x3FFFFFF0

/* slot states in a tier's slot map */
#define HI_SLOT_FREE		0
#define HI_SLOT_USED		1	/* current, and in the last map file */
#define HI_SLOT_PENDING		2	/* superseded; the last map file may use it */
#define HI_SLOT_FRESH		3	/* current, written since the last checkpoint */
#define HI_SLOT_LIMBO		4	/* FRESH, then superseded: in no map file,
								 * free once no read of it can be in flight */
#define HI_SLOT_IN_USE(s)	((s) == HI_SLOT_USED || (s) == HI_SLOT_FRESH)

/*
 * Shared state of one index (one relfilenode), in the registry.
 */
typedef struct HiIndexShared
{
	/* identity, protected by the registry lock */
	bool		in_use;
	bool		evicting;		/* being written out to give the slot back
								 * (core/hi_slots.c) */
	pg_atomic_uint32 pins;		/* transactions using the index (taken with
								 * the registry lock held) */
	bool		referenced;		/* pinned since the clock last passed */
	int			free_next;		/* next free slot, -1 = none (free list) */
	bool		wal_logged;		/* a permanent relation: changes go to WAL */
	uint32		generation;		/* bumped whenever the slot is (re)used */
	Oid			dboid;
	Oid			indexoid;
	Oid			relnumber;
	Oid			spcoid[HI_NUM_TIERS];	/* InvalidOid: tier not configured */

	LWLock		tree_lock;		/* structure: shared to read, exclusive to change */
	LWLock		map_lock;		/* page table and slot maps */
	LWLock		log_lock;		/* log appends */
	LWLock		flush_lock;		/* log fsync: one flusher, others wait */
	LWLock		load_lock;		/* loading / recovery at first use */
	LWLock		ckpt_lock;		/* page writes shared, checkpoint exclusive */

	bool		loaded;
	bool		building;		/* ambuild in progress; nothing to load */
	bool		image_open;		/* a build streams its files into WAL
								 * (log/wal_image.c): only the processes
								 * building see their writes */
	volatile bool image_foreign;	/* another process wrote a page of this
									 * index meanwhile (a cache eviction):
									 * the image re-logs the files */
	bool		build_sync_deferred;	/* the build's checkpoint leaves its
										 * files unsynced: the next
										 * checkpoint syncs them
										 * (storage/tier_defer.c) */
	bool		wal_pages;		/* page writes and map files go to WAL (a
								 * loaded primary's index; a build's files
								 * go as one image at its end instead) */
	bool		loaded_in_recovery; /* a hot standby's: follows the log WAL
									 * replay writes (core/hi_index.c) */
	int			changing;		/* a multi-step change of the loaded state
								 * is under way (tree_lock held
								 * exclusively): an error now leaves it
								 * half done (hi_change_failed) */
	bool		needs_reload;	/* a change failed half-way: the loaded
								 * state must not be used; the next opener
								 * forgets it (hi_index_open_for) */
	bool		reload_live;	/* unloaded after a failed change: the next
								 * load replays running transactions too */
	uint32		reload_seen;	/* reload_requests when last loaded */
	pg_atomic_uint32 reload_requests;	/* WAL replay cut the log or rebuilt
										 * the files: load again */
	int			budget_frames;	/* per-index cache budget, 0 = none */
	int			checkpoint_log_kb;	/* log size that triggers a checkpoint;
									 * 0 = hybrid_index.checkpoint_log_size */
	pg_atomic_uint32 nframes;	/* cache frames holding pages of this index */

	HiMeta		meta;
	pg_atomic_uint64 split_count;	/* bumped by every split, for kNN scans */

	/* AM-specific state saved in the map file at checkpoints (DSA) */
	dsa_pointer am_blob;
	uint32		am_blob_len;

	/* page table and slot maps, in the DSA area, protected by map_lock */
	dsa_pointer pt;
	uint32		pt_cap;
	dsa_pointer slotmap[HI_NUM_TIERS];
	uint32		slot_cap[HI_NUM_TIERS];
	uint32		nslots[HI_NUM_TIERS];	/* file length in slots */
	uint32		free_hint[HI_NUM_TIERS];
	uint32		used_slots[HI_NUM_TIERS];
	uint32		limbo_slots[HI_NUM_TIERS];
	pg_atomic_uint32 slot_reads;	/* reads from slots in flight (a LIMBO slot
									 * is reused only when there are none) */

	/* redo log positions (LSN = byte offset in the endless log) */
	uint64		log_insert;		/* protected by log_lock */
	uint64		log_flushed;	/* protected by flush_lock */
	uint64		log_base;		/* LSN at file offset 0 */
	uint64		confirm_redo;	/* WAL's redo pointer when WAL last said
								 * where this log ends (log/redo_log.c,
								 * append_records); 0 = not since the load
								 * (protected by log_lock) */
	uint64		synced_upto;	/* the log's end at its last SYNCED record
								 * (protected by log_lock) */
	bool		log_fresh;		/* the log file was created empty by this
								 * build and nothing was appended since
								 * (protected by log_lock) */
	bool		log_missing;	/* no log file yet: a build makes none, the
								 * first append does (hi_log_fd) */

	HiTierCounters tiers[HI_NUM_TIERS];
	pg_atomic_uint64 cache_hits;
	pg_atomic_uint64 cache_misses;
	pg_atomic_uint64 log_bytes;
	pg_atomic_uint64 checkpoints;
} HiIndexShared;

/* Shared-memory root (base/hi_shmem.c) */
typedef struct HiSharedRoot
{
	LWLock		registry_lock;
	int			tranche_id;
	int			max_indexes;
	int			free_head;		/* first free slot, -1 = none */
	int			clock_hand;		/* where the search for an idle slot goes on */
	pg_atomic_uint32 sync_pid;	/* the log sync worker, 0 = not running */
	pg_atomic_uint32 pending_sweep; /* the server's pending files removed
									 * since it left recovery: 0 not yet, 1
									 * under way, 2 done (core/hi_index.c) */
	HiIndexShared indexes[FLEXIBLE_ARRAY_MEMBER];
} HiSharedRoot;

extern HiSharedRoot *hi_shared;

extern int	hi_registry_slots(void);
extern int	hi_slot_hash_find(Oid dboid, Oid relnumber);
extern void hi_slot_hash_set(Oid dboid, Oid relnumber, int slotno);
extern void hi_shmem_request(void);
extern bool hi_shmem_startup(void);
extern dsa_area *hi_dsa(void);
extern void hi_check_preloaded(void);

/*
 * LWLockRelease in a PG_CATCH or PG_FINALLY block of a lock taken before
 * the error: errfinish() reset InterruptHoldoffCount to 0, and the
 * release's RESUME_INTERRUPTS must not take it below (an assertion failure
 * with assertions, interrupts held off for good without).  On the normal
 * path of a PG_FINALLY the lock's own holdoff is still counted.
 */
static inline void
hi_lwlock_release_cleanup(LWLock *lock)
{
	if (InterruptHoldoffCount == 0)
		HOLD_INTERRUPTS();
	LWLockRelease(lock);
}

/*
 * The end of a PG_CATCH block that handles an ERROR instead of re-throwing
 * it while LWLocks taken before the PG_TRY are still held: errfinish() set
 * InterruptHoldoffCount to 0, and each of those locks' releases will count
 * it down once more; put back what it was before the PG_TRY.
 */
static inline void
hi_error_handled(uint32 holdoff)
{
	FlushErrorState();
	InterruptHoldoffCount = holdoff;
}

/* ---- per-backend handle on an open index (core/hi_index.c) ---- */
typedef int HiFrame;			/* a pinned page; -1 = none */
typedef struct HiPageSource HiPageSource;

typedef struct HiIndex
{
	Relation	rel;
	int			slotno;
	uint32		generation;
	HiIndexShared *sh;
	uint32		page_size;
	const HiPageSource *pages;	/* where the index structure gets its pages */

	/*
	 * The current operation is maintenance (VACUUM, checks, inspection):
	 * its page reads are not workload, placement policies do not count
	 * them.  Set around the operation; cleared when the handle is opened.
	 */
	bool		maintenance;
} HiIndex;

extern const char *hi_index_name(const HiIndex *idx);

/*
 * How an index structure reads and changes its pages.  The shared page
 * cache is one source (hi_cache_source, used by hyrtree); an access method
 * with a buffer design of its own (eFIND's write and read buffers) supplies
 * another, and the structure code stays the same.
 */
struct HiPageSource
{
	/* pin the current versions of n distinct pages */
	void		(*read_batch) (HiIndex *idx, const uint32 *pagenos, int n, HiFrame *frames);
	/* a zeroed, pinned page for a new logical page id */
	HiFrame		(*new_page) (HiIndex *idx, uint32 pageno);
	char	   *(*data) (HiIndex *idx, HiFrame f);
	/* before changing a pinned page, and after */
	void		(*begin_write) (HiIndex *idx, HiFrame f);
	void		(*mark_dirty) (HiIndex *idx, HiFrame f);
	void		(*release) (HiIndex *idx, HiFrame f);
	/* how many pages to pin at once in one batch */
	int			(*batch_limit) (HiIndex *idx);
	/* checkpoint: every change reaches the tier files (tree_lock held) */
	void		(*flush_all) (HiIndex *idx);

	/*
	 * How many pages read ahead of their use stay in memory until then
	 * (released pages the source keeps); 0: reading ahead saves nothing.
	 */
	int			(*ahead_limit) (HiIndex *idx);

	/*
	 * Bring n distinct pages into memory ahead of their use (tree_lock
	 * held), where read_batch then finds them; NULL: read_batch and
	 * release them.
	 */
	void		(*read_ahead) (HiIndex *idx, const uint32 *pagenos, int n);
};

/* ---- base/hi_spill.c ----
 * Temporary storage of the bulk builds, bounded by a memory budget
 * (maintenance_work_mem): fixed-size records sorted by float8 keys
 * through tuplesort, and unsorted record lists that move to a BufFile
 * once they outgrow their array.  Both spill through PostgreSQL's own
 * temporary files, so they show in log_temp_files and
 * pg_stat_database.temp_bytes like any sort.
 */
/* the largest record the sort carries (three int8 payload columns) */
#define HI_SPILL_REC_MAX	24

/* records sorted by one or two float8 keys; memory within budget bytes */
typedef struct HiSort HiSort;

extern HiSort *hi_sort_begin(Size recsize, int nkeys, Size budget);
extern void hi_sort_put(HiSort *s, const void *rec, double k1, double k2);
extern void hi_sort_done(HiSort *s);
extern bool hi_sort_get(HiSort *s, void *rec);
extern void hi_sort_end(HiSort *s);

/* records kept in order of arrival: an array, then a temporary file */
typedef struct HiSpillList HiSpillList;

extern HiSpillList *hi_list_begin(Size recsize, Size budget);
extern void hi_list_put(HiSpillList *l, const void *rec);
extern Size hi_list_count(const HiSpillList *l);
extern bool hi_list_full(const HiSpillList *l);
extern bool hi_list_spilled(const HiSpillList *l);
extern char *hi_list_array(HiSpillList *l);
extern void hi_list_truncate(HiSpillList *l, Size n);
extern char *hi_list_extend(HiSpillList *l, Size n);
extern void hi_list_rewind(HiSpillList *l);
extern bool hi_list_next(HiSpillList *l, void *rec);
extern void hi_list_end(HiSpillList *l);

/* ---- base/hi_runsort.c ----
 * A stable sort of fixed-size records by a uint64 key within a budget:
 * radix-sorted arrays, written as runs to temporary files once the array
 * is full, merged at the end.
 */
typedef uint64 (*HiRunKeyFn) (const void *rec, void *arg);
typedef struct HiRunSort HiRunSort;

extern HiRunSort *hi_runsort_begin(Size recsize, Size budget, Size expect,
								   HiRunKeyFn key, void *arg);
extern void hi_runsort_put(HiRunSort *s, const void *rec);
extern Size hi_runsort_count(const HiRunSort *s);
extern void hi_runsort_sort(HiRunSort *s);
extern bool hi_runsort_get(HiRunSort *s, void *rec);
extern void hi_runsort_presort(HiRunSort *s);
extern void hi_runsort_end(HiRunSort *s);

/* ---- a bulk load's helper: another process of a parallel build ----
 * The AM layer (am_build_parallel.c) implements it; a core's load hands
 * part of its work to the helper through it.  Both processes share
 * temporary files, opened by name in either, and a lock that serializes
 * their changes of the index's shared state (page allocation, buffers,
 * the store's tables) while both write the new index.
 */
typedef struct HiLoadShared
{
	void	   *arg;
	BufFile    *(*create) (void *arg, const char *name);
	BufFile    *(*open) (void *arg, const char *name);
	void		(*lock) (void *arg);
	void		(*unlock) (void *arg);
} HiLoadShared;

typedef struct HiLoadHelper
{
	HiLoadShared shared;
	void	   *arg;			/* of start and finish */
	/* the helper starts on task (len bytes in the core's own format) */
	void		(*start) (void *arg, const void *task, Size len);
	/* wait until the helper is done with its task */
	void		(*finish) (void *arg);
} HiLoadHelper;

/* ---- base/hi_runsort_share.c ----
 * A sort's runs in a parallel build's shared file set: another process
 * merges them without a pass that copies them first.  A worker exports
 * its runs as a list, the leader imports them into its own sort and hands
 * the first n records of the whole order to its helper as another list.
 */
extern void hi_runsort_share(HiRunSort *s, const HiLoadShared *files, const char *prefix);
extern Size hi_runsort_export(HiRunSort *s, BufFile *list);
extern Size hi_runsort_import(HiRunSort *s, const HiLoadShared *files, BufFile *list);
extern void hi_runsort_split(HiRunSort *s, Size n, BufFile *list, const char *name);

/* ---- stable radix sort of (uint64, uint32) pairs (base/hi_radix.c) ---- */
extern uint64 hi_radix_key_double(double v);
extern bool hi_radix_sort(uint64 *key, uint32 *val, Size n, uint64 *tmpkey,
						  uint32 *tmpval);

/* ---- a batch of entries along a Hilbert curve (base/hi_hilbert_order.c) ---- */
extern HiKeyItem *hi_items_hilbert_order(const HiKeyItem *items, int n);

#endif							/* HI_BASE_H */
