/*
 * hybrid_index.h
 *	  Declarations shared by every layer of hybrid_index: GUCs, the shared
 *	  per-index state, and the entry points each layer offers the one above.
 *
 * Layers (top to bottom): am/ (index AM glue) -> rtree/ (R-tree core) ->
 * cache/ (shared page cache) -> log/ (redo log) -> storage/ (page table,
 * tier files, batched I/O).  A module calls only the layers below it.
 */
#ifndef HYBRID_INDEX_H
#define HYBRID_INDEX_H

#include "postgres.h"

#include "access/xact.h"
#include "port/atomics.h"
#include "storage/lwlock.h"
#include "storage/spin.h"
#include "utils/dsa.h"
#include "utils/rel.h"

#include "geom/geom_box.h"

#define HI_EXTENSION_VERSION	"0.1.0"

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

/* Page placement policies of hyrtree (reloption "placement") */
typedef enum HiPlacement
{
	HI_PLACEMENT_NONE = 0,		/* every page on flash: the papers' R-tree */
	HI_PLACEMENT_UPPER = 1,		/* non-leaf pages on the fast tier: sHR-tree */
	HI_PLACEMENT_WMA = 2,		/* upper + hot leaves by WMA score: HyR-tree */
	HI_PLACEMENT_RANDOM = 3,	/* upper + as many random leaves: rHyR-tree;
								 * hgrid: as many random pages as "hot" */
	HI_PLACEMENT_HOT = 4		/* hgrid: hot-region detection (H-Grid) */
} HiPlacement;

#define HI_WMA_MAX_EPOCHS	10

typedef enum HiIoMethod
{
	HI_IO_URING = 0,
	HI_IO_SYNC = 1
} HiIoMethod;

/* ---- GUCs (core/hi_guc.c) ---- */
extern int	hi_cache_size_mb;
extern int	hi_max_page_size;
extern int	hi_max_indexes;
extern int	hi_io_method;
extern int	hi_io_depth;
extern int	hi_checkpoint_log_kb;
extern bool hi_emulate_devices;
extern bool hi_recheck;
extern int	hi_dev_read_us[HI_NUM_TIERS];
extern int	hi_dev_write_us[HI_NUM_TIERS];
extern int	hi_dev_parallelism[HI_NUM_TIERS];
extern int	hi_epoch_size;
extern int	hi_wma_epochs;
extern double hi_wma_threshold;
extern int	hi_score_table_entries;

extern void hi_define_gucs(void);

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
	uint32		placement;		/* HiPlacement */
	uint32		root;			/* logical page id of the root */
	uint32		height;			/* 1 = root is a leaf */
	uint32		npages;			/* logical page ids handed out */
	uint32		null_head;		/* first page of NULL/EMPTY entries */
	uint32		null_tail;		/* last page of NULL/EMPTY entries */
	uint64		nentries;		/* non-NULL, non-EMPTY entries */
	uint64		nnulls;			/* NULL or EMPTY entries */
	uint64		ckpt_lsn;		/* log position the map file reflects */
} HiMeta;

#define HI_META_MAGIC	0x48594258	/* "HYBX" */
#define HI_META_VERSION 1

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
	LWLock		place_lock;		/* end-of-epoch processing */

	bool		loaded;
	bool		building;		/* ambuild in progress; nothing to load */
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

	/* placement policy (policy/placement.c) */
	int			epoch_size;		/* node reads per epoch */
	int			wma_epochs;		/* t */
	double		wma_threshold;	/* N-th percentile */
	uint32		optane_capacity;	/* pages, 0 = unlimited */
	pg_atomic_uint64 epoch_reads;
	uint64		epoch_no;		/* protected by place_lock */
	double		threshold;		/* T for the current epoch */
	bool		have_threshold;
	uint32		scored_leaves;	/* leaves with a score last epoch */
	float		score_min;
	float		score_median;
	float		score_max;
	pg_atomic_uint64 migrations_up;
	pg_atomic_uint64 migrations_down;
	pg_atomic_uint64 random_quota;	/* rHyR-tree: leaves WMA would move */

	HiTierCounters tiers[HI_NUM_TIERS];
	pg_atomic_uint64 cache_hits;
	pg_atomic_uint64 cache_misses;
	pg_atomic_uint64 log_bytes;
	pg_atomic_uint64 checkpoints;
} HiIndexShared;

/* Shared-memory root (core/hi_shmem.c) */
typedef struct HiSharedRoot
{
	LWLock		registry_lock;
	int			tranche_id;
	int			max_indexes;
	pg_atomic_uint32 clock_hand;
	HiIndexShared indexes[FLEXIBLE_ARRAY_MEMBER];
} HiSharedRoot;

extern HiSharedRoot *hi_shared;

extern void hi_shmem_request(void);
extern void hi_shmem_startup(void);
extern dsa_area *hi_dsa(void);
extern void hi_check_preloaded(void);

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
} HiIndex;

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
};

extern const HiPageSource hi_cache_source;

typedef struct HiLogRecord HiLogRecord;
typedef void (*hi_log_apply_fn) (HiIndex *idx, const HiLogRecord *rec);

/* One page of an index as hybrid_index_pages() shows it */
typedef struct HiPageInfo
{
	uint32		pageno;
	int			level;
	int			tier;			/* -1: not written yet */
	int			nentries;
	HiBox		box;
} HiPageInfo;

/*
 * What the SQL-level functions need of an access method (am/hi_am.c).
 * Every AM registers one of these from _PG_init.
 */
typedef struct HiAmOps
{
	const char *name;			/* pg_am.amname */
	HiAmKind	kind;
	HiPlacement default_placement;	/* when the index has no reloptions */
	const HiPageSource *source; /* where its structure gets its pages */
	hi_log_apply_fn redo;		/* replay of one redo log record */
	void		(*check) (HiIndex *idx);	/* ERROR on the first violation */
	char	   *(*inspect_json) (HiIndex *idx);
	HiPageInfo *(*pages) (HiIndex *idx, Size *n);
	/* optional: forget per-index state of a dropped/rebuilt relfilenode */
	void		(*discard) (int slotno, uint32 generation);
	/* optional: the AM's own placement policy (hi_place_write_tier) */
	int			(*write_tier) (HiIndexShared *sh, int slotno, const char *page,
							   uint32 old_pte);
	/* optional: zero the AM's own counters (hybrid_index_reset_stats) */
	void		(*reset_stats) (HiIndex *idx);

	/*
	 * optional: what is wrong with the layout of a page read from storage
	 * (NULL: nothing).  Runs after the checksum matched, so that a page a
	 * bug wrote (its checksum is right) is reported, not decoded past its
	 * end.  Only the header fields the readers trust are checked: cheap.
	 */
	const char *(*page_layout) (const char *page, uint32 page_size);
} HiAmOps;

extern void hi_register_am(const HiAmOps *ops);
extern const HiAmOps *hi_am_ops(Oid amoid);
extern const HiAmOps *hi_am_ops_by_kind(HiAmKind kind);
extern bool hi_is_our_am(Oid amoid);
extern HiIndex *hi_am_open(Relation index);
extern HiIndex *hi_am_create(Relation index);
extern void hi_am_discard_all(int slotno, uint32 generation);

typedef struct HiIndexOptions
{
	int32		vl_len_;
	int			page_size;
	int			placement;
	int			buffer_size;	/* kB, 0 = share the whole cache */
	int			optane_tablespace;	/* offset of the name, 0 = none */
	int			epoch_size;		/* -1: hybrid_index.epoch_size */
	int			wma_epochs;		/* -1: hybrid_index.wma_epochs */
	double		wma_threshold;	/* -1: hybrid_index.wma_threshold */
	int			optane_capacity;	/* kB, 0 = unlimited */
} HiIndexOptions;

extern HiIndex *hi_index_open_for(Relation index, hi_log_apply_fn apply,
								  const HiPageSource *pages);
extern HiIndex *hi_index_create(Relation index, HiAmKind am, const HiPageSource *pages);
extern void hi_am_blob_set(HiIndexShared *sh, const char *data, uint32 len);
extern char *hi_am_blob_get(HiIndexShared *sh, uint32 *len);
extern HiIndexShared *hi_slot_lookup(Oid dboid, Oid relnumber);
extern void hi_slot_release(Oid dboid, Oid relnumber);
extern void hi_index_checkpoint(HiIndex *idx);
extern void hi_stats_reset(HiIndexShared *sh);
extern void hi_index_after_change(HiIndex *idx);
extern HiIndexOptions *hi_index_options(Relation index);
extern void hi_validate_tablespace_name(const char *value);
extern void hi_error_if_recovery(Relation index);

/* ---- storage/tier_files.c ---- */
extern char *hi_file_path(Oid dirspc, Oid dboid, Oid flashspc, Oid relnumber,
						  const char *suffix);
extern const char *hi_tier_suffix(int tier);
extern int	hi_file_open(HiIndexShared *sh, int tier, bool create);
extern bool hi_file_in_memory(HiIndexShared *sh, int tier);
extern int	hi_log_fd(HiIndexShared *sh);
extern char *hi_slot_path(HiIndexShared *sh, int tier);
extern void hi_file_truncate(HiIndexShared *sh, int tier, uint32 nslots);
extern bool hi_slot_files_exist(HiIndexShared *sh);
extern void hi_files_create(HiIndexShared *sh);
extern void hi_files_forget(HiIndexShared *sh);
extern void hi_files_schedule_old_removal(Oid indexoid, Oid keep_flashspc,
										  Oid keep_relnumber);
extern void hi_files_schedule_drop(Oid indexoid);
extern void hi_files_at_xact_end(bool commit);
extern void hi_files_at_subxact_end(bool commit, SubTransactionId mySubid,
									SubTransactionId parentSubid);
extern bool hi_files_pending(void);
extern void hi_fsync_dir_of(const char *path);
extern void hi_durable_write_file(const char *path, const char *data, Size len);
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

/* ---- storage/page_table.c ---- */
extern void hi_pt_init(HiIndexShared *sh, uint32 npages_hint);
extern void hi_pt_free(HiIndexShared *sh);
extern uint32 hi_pt_get(HiIndexShared *sh, uint32 pageno);
extern uint32 hi_pt_alloc_slot(HiIndexShared *sh, int tier);
extern void hi_pt_unalloc_slot(HiIndexShared *sh, int tier, uint32 slot);
extern bool hi_pt_remap_if(HiIndexShared *sh, uint32 pageno, uint32 expect,
						   uint32 new_pte);
extern uint32 *hi_pt_collect(HiIndexShared *sh, int tier, bool leaves, Size *n);
extern void hi_pt_remap(HiIndexShared *sh, uint32 pageno, uint32 new_pte);
extern void hi_pt_settle(HiIndexShared *sh);
extern void hi_pt_release_pending(HiIndexShared *sh);
extern uint32 hi_pt_trim(HiIndexShared *sh, int tier);
extern void hi_pt_reads_begin(HiIndexShared *sh);
extern void hi_pt_reads_end(HiIndexShared *sh);
extern void hi_pt_count(HiIndexShared *sh, uint64 *pages_per_tier);
extern void hi_pt_check(HiIndexShared *sh);

/* ---- cache/page_cache.c ---- */
extern Size hi_cache_shmem_size(void);
extern void hi_cache_shmem_init(bool found);
extern HiFrame hi_cache_read(HiIndex *idx, uint32 pageno);
extern int	hi_cache_batch_limit(HiIndex *idx);
extern void hi_cache_read_batch(HiIndex *idx, const uint32 *pagenos, int n,
								HiFrame *frames);
extern HiFrame hi_cache_new_page(HiIndex *idx, uint32 pageno);
extern char *hi_frame_data(HiFrame f);
extern void hi_frame_begin_write(HiFrame f);
extern void hi_frame_mark_dirty(HiFrame f);
extern void hi_frame_release(HiFrame f);
extern void hi_cache_flush_index(HiIndexShared *sh, int slotno);

/* dirty pages parked while the disk is full (cache/page_spill.c) */
extern Size hi_spill_shmem_size(int nentries);
extern void hi_spill_shmem_init(int nentries);
extern bool hi_spill_any(void);
extern bool hi_spill_put(uint32 slotno, uint32 generation, uint32 pageno,
						 const char *page, uint32 len);
extern bool hi_spill_take(uint32 slotno, uint32 generation, uint32 pageno, char *dst);
extern void hi_spill_flush(HiIndexShared *sh, int slotno);
extern void hi_spill_discard(int slotno, uint32 generation);
extern void hi_cache_discard_index(int slotno, uint32 generation);
extern void hi_cache_release_all(void);
extern void hi_page_write_direct(HiIndexShared *sh, char **pages, int n);
extern void hi_page_read_direct(HiIndexShared *sh, const uint32 *pagenos, int n,
								char **bufs);
extern uint32 hi_page_checksum(const char *page, uint32 page_size);
extern void hi_page_verify(HiIndexShared *sh, const char *page, uint32 pageno,
						   uint32 pte);

/* ---- storage/tier_move.c ---- */
extern int	hi_tier_move(HiIndexShared *sh, const uint32 *pagenos, int n, int to_tier);

/* ---- policy/placement.c ---- */
extern Size hi_place_shmem_size(void);
extern void hi_place_shmem_init(void);
extern void hi_place_configure(HiIndexShared *sh, Relation index);
extern void hi_place_note_reads(HiIndexShared *sh, int slotno, const uint32 *pagenos,
								char *const *pages, int n);
extern int	hi_place_write_tier(HiIndexShared *sh, int slotno, const char *page,
								uint32 old_pte);
extern bool hi_place_migrate_clean(HiIndexShared *sh, int slotno, const char *page,
								   uint32 pte);
extern void hi_place_forget(int slotno, uint32 generation);
extern bool hi_place_suspended;
extern double hi_place_score(HiIndexShared *sh, int slotno, uint32 pageno);
extern char *hi_place_json(HiIndexShared *sh);

/* ---- log/redo_log.c ---- */
#define HI_LOG_INSERT	1
#define HI_LOG_DELETE	2
#define HI_LOG_COMMIT	3		/* the xid reached commit: its records count */

struct HiLogRecord
{
	uint32		crc;			/* CRC-32C of the rest of the record */
	uint8		type;
	uint8		iskey;			/* HiKeyKind of the entry */
	uint16		reserved;
	uint64		lsn;
	TransactionId xid;			/* top-level xid; Invalid: apply always */
	HiBox		box;
	ItemPointerData tid;
	uint16		pad;
};

extern void hi_log_append(HiIndex *idx, uint8 type, TransactionId xid,
						  HiKeyKind kind, const HiBox *box, ItemPointer tid);
extern void hi_log_flush(HiIndexShared *sh, uint64 upto);
extern void hi_log_reset(HiIndexShared *sh, uint64 base);
extern uint64 hi_log_size(HiIndexShared *sh);

extern uint64 hi_log_replay(HiIndex *idx, hi_log_apply_fn apply);
extern void hi_log_at_precommit(void);
extern void hi_log_at_xact_end(void);

#endif							/* HYBRID_INDEX_H */
