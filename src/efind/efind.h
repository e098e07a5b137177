/*
 * efind.h
 *	  eFIND (Carniel, Ciferri and Ciferri, "A generic and efficient
 *	  framework for flash-aware spatial indexing", Information Systems
 *	  2019) as a page source of the R-tree core: the write buffer with
 *	  per-page modification trees, page retrieval that merges stored pages
 *	  with buffered modifications, the flushing algorithm and its four
 *	  policies, the read buffer (LRU, S2Q, 2Q) and the temporal control of
 *	  reads and writes.
 *
 * Files, one job each:
 *	 efind_config.c		parameters: GUCs, reloptions, the value fixed per index
 *	 efind_state.c		per-index shared state: directory, creation, discard
 *	 efind_dsa.c		hash table and FIFO ring in the DSA area
 *	 efind_modtree.c	the red-black tree of an index page's modified entries
 *	 efind_wbuf.c		Write Buffer Table: recording (Alg. 1) and merging
 *	 efind_rbuf.c		Read Buffer Table and its replacement policies
 *	 efind_retrieve.c	page retrieval (Alg. 2)
 *	 efind_temporal.c	temporal control of writes (Alg. 4) and reads (Alg. 5)
 *	 efind_flush.c		flushing (Alg. 3, Eq. 4-7) and checkpoint flushes
 *	 efind_source.c		the HiPageSource the R-tree core sees
 *	 efind_stats.c		checks and the JSON of hybrid_index_inspect
 *
 * Durability (Goal 5, Alg. 7) is the foundation's: see efind_source.c.
 */
#ifndef EFIND_H
#define EFIND_H

#include "lib/stringinfo.h"
#include "port/atomics.h"
#include "storage/lwlock.h"
#include "utils/dsa.h"

#include "base/hi_base.h"
#include "core/hi_core.h"

/* ---- parameters (efind_config.c) ---- */

typedef enum EfReadPolicy
{
	EF_RB_LRU = 0,
	EF_RB_S2Q = 1,				/* simplified 2Q: A1 is the read queue RQ */
	EF_RB_2Q = 2				/* full 2Q: A1in, A1out and Am */
} EfReadPolicy;

typedef enum EfFlushPolicy
{
	EF_FP_M = 0,				/* Eq. 4 */
	EF_FP_MH = 1,				/* Eq. 5 */
	EF_FP_MHA = 2,				/* Eq. 6 */
	EF_FP_MHAO = 3				/* Eq. 7 */
} EfFlushPolicy;

/* temporal control: a bit for reads (Alg. 5) and one for writes (Alg. 4) */
#define EF_TC_NONE		0
#define EF_TC_READS		1
#define EF_TC_WRITES	2
#define EF_TC_BOTH		3

/* the paper's best values (section 6) */
#define EF_BUFFER_KB_DEFAULT		512
#define EF_BUFFER_KB_MIN			8
#define EF_BUFFER_KB_MAX			(16 * 1024 * 1024)
#define EF_READ_SHARE_DEFAULT		20
#define EF_READ_SHARE_MAX			90
#define EF_READ_POLICY_DEFAULT		EF_RB_S2Q
#define EF_FLUSH_POLICY_DEFAULT		EF_FP_MH
#define EF_FLUSH_PERCENT_DEFAULT	60
#define EF_FLUSH_UNIT_DEFAULT		5
#define EF_FLUSH_UNIT_MAX			1024
#define EF_TEMPORAL_DEFAULT			EF_TC_BOTH
#define EF_SEQ_DISTANCE_DEFAULT		10
#define EF_STRIDE_DISTANCE_DEFAULT	100
#define EF_DISTANCE_MAX				1000000000
#define EF_LOG_KB_DEFAULT			10240
#define EF_LOG_KB_MIN				64
#define EF_LOG_KB_MAX				(16 * 1024 * 1024)

/*
 * Reloptions of an efind index.  The foundation reads the HiIndexOptions
 * part (page size, placement); -1 in an efind field means "take the
 * hybrid_index.* setting".
 */
typedef struct EfindOptions
{
	HiIndexOptions base;		/* base.buffer_size: efind's buffer, kB */
	int			read_buffer_share;
	int			read_buffer_policy;
	int			flush_policy;
	int			flush_percent;
	int			flush_unit;
	int			temporal_control;
	int			seq_distance;
	int			stride_distance;
	int			log_size;
} EfindOptions;

/* The parameters of one index, fixed when it is built (the AM blob) */
typedef struct EfindConfig
{
	uint32		magic;
	uint32		version;
	int32		buffer_kb;
	int32		read_share;		/* percent of buffer_kb for the read buffer */
	int32		read_policy;	/* EfReadPolicy */
	int32		flush_policy;	/* EfFlushPolicy */
	int32		flush_percent;	/* p */
	int32		flush_unit;		/* s */
	int32		temporal;		/* EF_TC_* */
	int32		seq_distance;
	int32		stride_distance;
	int32		log_kb;
} EfindConfig;

#define EF_CONFIG_MAGIC		0x45464E44	/* "EFND" */
#define EF_CONFIG_VERSION	1

extern int	ef_guc_buffer_kb;
extern int	ef_guc_read_share;
extern int	ef_guc_read_policy;
extern int	ef_guc_flush_policy;
extern int	ef_guc_flush_percent;
extern int	ef_guc_flush_unit;
extern int	ef_guc_temporal;
extern int	ef_guc_seq_distance;
extern int	ef_guc_stride_distance;
extern int	ef_guc_log_kb;

extern void efind_define_gucs(void);
extern void ef_config_resolve(Relation index, EfindConfig *cfg);
extern const char *ef_read_policy_name(int p);
extern const char *ef_flush_policy_name(int p);
extern const char *ef_temporal_name(int t);

/* ---- containers in the DSA area (efind_dsa.c) ---- */

#define EF_NIL		((uint32) 0xFFFFFFFF)

/* open addressing, linear probing, uint32 key (never EF_NIL) -> uint64 */
typedef struct EfHash
{
	uint32		cap;			/* power of two */
	uint32		n;
	dsa_pointer slots;
} EfHash;

typedef struct EfHashSlot
{
	uint32		key;
	uint32		pad;
	uint64		val;
} EfHashSlot;

extern void efh_init(dsa_area *a, EfHash *h, uint32 cap);
extern void efh_free(dsa_area *a, EfHash *h);
extern uint64 *efh_find(dsa_area *a, EfHash *h, uint32 key);
extern void efh_put(dsa_area *a, EfHash *h, uint32 key, uint64 val);
extern bool efh_remove(dsa_area *a, EfHash *h, uint32 key);
extern EfHashSlot *efh_slots(dsa_area *a, EfHash *h);

/* FIFO of page ids with a fixed capacity; the oldest falls out */
typedef struct EfRing
{
	uint32		cap;
	uint32		head;			/* oldest */
	uint32		n;
	dsa_pointer ids;
} EfRing;

extern void ef_ring_init(dsa_area *a, EfRing *r, uint32 cap);
extern void ef_ring_free(dsa_area *a, EfRing *r);
extern uint32 ef_ring_push(dsa_area *a, EfRing *r, uint32 id);
extern bool ef_ring_contains(dsa_area *a, EfRing *r, uint32 id);
extern bool ef_ring_remove(dsa_area *a, EfRing *r, uint32 id);
extern uint32 ef_ring_get(dsa_area *a, EfRing *r, uint32 i);

/* ---- the modification tree of one page (efind_modtree.c) ---- */

#define EF_OP_PUT		1		/* the latest version of the entry */
#define EF_OP_DEL		2		/* the entry was removed */

typedef struct EfMod
{
	uint64		key;			/* child page id, or heap TID as block << 16 | offset */
	HiBox		box;			/* the latest box or exact point (flags; for
								 * EF_OP_DEL: the removed one) */
	uint32		left;
	uint32		right;
	uint8		red;
	uint8		op;				/* EF_OP_* */
	uint8		kind;			/* HiKeyKind of a leaf entry */
	uint8		flags;			/* HI_ENT_* of a leaf entry */
} EfMod;

extern uint32 ef_mt_find(const EfMod *nodes, uint32 root, uint64 key);
extern uint32 ef_mt_insert(EfMod *nodes, uint32 *nnodes, uint32 root, uint64 key,
						   uint32 *found);
extern uint32 ef_mt_inorder(const EfMod *nodes, uint32 root, uint32 *out);
extern int	ef_mt_check(const EfMod *nodes, uint32 root, uint32 nnodes);

/* ---- per-index shared state (efind_state.c) ---- */

#define EF_STATUS_NEW	1		/* created in the buffer, no stored version */
#define EF_STATUS_MOD	2		/* stored version plus modified entries */
#define EF_STATUS_DEL	3		/* deleted page (the R-tree core frees none) */

/* A Write Buffer Table entry (in the DSA area) */
typedef struct EfWbEntry
{
	uint32		pageno;
	uint16		level;			/* h of Eq. 5-7 */
	uint16		flags;			/* page header as last recorded */
	uint32		link;
	uint8		status;			/* EF_STATUS_* */
	uint8		pad[3];
	uint32		mod_count;
	uint64		stamp;			/* logical time of the last modification */
	uint32		nnodes;
	uint32		capnodes;
	uint32		root;
	dsa_pointer nodes;			/* EfMod[capnodes] */
} EfWbEntry;

#define EF_RBQ_FREE		0
#define EF_RBQ_AM		1		/* LRU list (LRU, S2Q, 2Q's Am) */
#define EF_RBQ_A1IN		2		/* 2Q's FIFO of pages seen once */

typedef struct EfRbFrame
{
	uint32		pageno;
	uint32		prev;
	uint32		next;
	uint32		queue;
} EfRbFrame;

typedef struct EfRbList
{
	uint32		head;			/* most recent */
	uint32		tail;			/* next victim */
	uint32		n;
} EfRbList;

/* What the last flush chose and why (shown by hybrid_index_inspect) */
#define EF_LAST_FLUSH_SHOWN 16

typedef struct EfFlushedPage
{
	uint32		pageno;
	uint32		h;
	uint32		mod_count;
	double		marea;
	double		oarea;
} EfFlushedPage;

typedef struct EfLastFlush
{
	uint32		policy;
	uint32		entries;		/* write buffer entries at the flush */
	uint32		oldest;			/* the p % oldest of them (line 1) */
	uint32		filtered;		/* left by the temporal control (line 2) */
	uint32		units;			/* flushing units scored (line 4) */
	uint32		npages;			/* pages of the chosen unit */
	double		degree;			/* its FP value (lines 6-7) */
	double		runner_up;		/* greatest degree of the other units */
	double		alpha;			/* Eq. 6 weight of the chosen unit */
	double		beta;			/* Eq. 7 weight of the chosen unit */
	double		total_marea;
	double		total_oarea;
	EfFlushedPage pages[EF_LAST_FLUSH_SHOWN];
} EfLastFlush;

/* chunks of read buffer frames: 1, 2, 4 ... frames (enough for 2^32 - 1) */
#define EF_RB_CHUNKS 32

typedef struct EfindState
{
	EfindConfig cfg;
	uint32		page_size;
	uint64		write_budget;	/* bytes of the write buffer */
	uint32		rb_frames;		/* pages of the read buffer */

	/* write buffer and write queue: wb_lock */
	EfHash		wb;
	uint32		wb_status[4];	/* entries per EF_STATUS_* */
	uint64		wb_bytes;
	uint64		clock;
	EfRing		wq;
	EfLastFlush last;

	/* read buffer and read queue: rb_lock */
	EfHash		rbh;
	dsa_pointer frames;			/* EfRbFrame[rb_frames] */
	dsa_pointer chunks[EF_RB_CHUNKS];	/* the frames' pages: chunk k holds
										 * frames 2^k - 1 .. 2^(k+1) - 2,
										 * allocated at their first use */
	EfRbList	am;
	EfRbList	a1in;
	uint32		free_head;
	uint32		kin;			/* 2Q: A1in's share of the frames */
	EfRing		a1out;			/* 2Q: ids of pages that left A1in */
	EfRing		rq;				/* RQ: ids of pages read from storage */
} EfindState;

/* Counters of an index, in fixed shared memory */
typedef struct EfCounters
{
	pg_atomic_uint64 records;	/* pages recorded by Alg. 1 */
	pg_atomic_uint64 modifications; /* entry modifications recorded */
	pg_atomic_uint64 flushes;	/* Alg. 3 runs that wrote a unit */
	pg_atomic_uint64 flushed_pages;
	pg_atomic_uint64 flush_reads;	/* stored versions read to flush */
	pg_atomic_uint64 ckpt_flushes;	/* whole-buffer flushes (checkpoints) */
	pg_atomic_uint64 ckpt_pages;
	pg_atomic_uint64 tcw_sequential;	/* Alg. 4 returned Seq */
	pg_atomic_uint64 tcw_stride;	/* Alg. 4 returned Str */
	pg_atomic_uint64 tcw_union;		/* Alg. 4 returned Seq U Str */
	pg_atomic_uint64 tcw_input;		/* Alg. 4 returned its input */
	pg_atomic_uint64 tcr_refreshed;	/* Alg. 5 line 2: cached copy updated */
	pg_atomic_uint64 tcr_precached;	/* Alg. 5 line 5: RQ page cached */
	pg_atomic_uint64 rb_hits;
	pg_atomic_uint64 rb_misses;
	pg_atomic_uint64 rb_admissions;
	pg_atomic_uint64 rb_evictions;
	pg_atomic_uint64 wb_new_reads;	/* pages served from NEW entries */
	pg_atomic_uint64 wb_merges;	/* stored pages merged with modifications */
	pg_atomic_uint64 storage_reads;
	pg_atomic_uint64 storage_read_batches;
} EfCounters;

typedef struct EfindSlot
{
	LWLock		wb_lock;		/* write buffer, WQ */
	LWLock		rb_lock;		/* read buffer, RQ */
	uint32		generation;		/* of the HiIndexShared slot the state is for */
	bool		valid;
	dsa_pointer state;			/* EfindState */
	pg_atomic_uint64 serial;	/* bumped whenever a state is created */
	EfCounters	c;
} EfindSlot;

/* What every efind function works on: one index, attached */
typedef struct Ef
{
	HiIndex    *idx;
	HiIndexShared *sh;
	EfindSlot  *slot;
	EfindState *st;
	dsa_area   *area;
} Ef;

/*
 * Does the index read its stored pages through the shared page cache (no
 * buffer budget of its own, reloption buffer_size unset)?  Otherwise the
 * paper's memory model holds exactly.
 */
static inline bool
ef_shares_cache(const Ef *ef)
{
	return ef->sh->budget_frames == 0;
}

extern void efind_shmem_init(void);
extern void ef_get(HiIndex *idx, Ef *ef);
extern void efind_discard(int slotno, uint32 generation);

/* ---- write buffer (efind_wbuf.c), wb_lock held by the caller ---- */

extern EfWbEntry *ef_wb_lookup(Ef *ef, uint32 pageno);
extern void ef_wb_record(Ef *ef, uint32 pageno, const char *before,
						 const char *after, bool is_new);
extern void ef_wb_assemble(Ef *ef, EfWbEntry *e, const char *stored, char *out);
extern void ef_wb_remove(Ef *ef, uint32 pageno);
extern void ef_wb_free_all(Ef *ef);
extern void ef_wb_areas(Ef *ef, EfWbEntry *e, double *marea, double *oarea);
extern Size ef_wb_entry_bytes(const EfWbEntry *e);
extern void ef_wb_check(Ef *ef);

/* ---- a backend's assembled inner pages (efind_memo.c), wb_lock held ---- */

extern bool ef_memo_get(Ef *ef, const EfWbEntry *e, char *out);
extern void ef_memo_put(Ef *ef, const EfWbEntry *e, const char *page);

/* ---- read buffer (efind_rbuf.c), rb_lock held exclusively ---- */

extern void ef_rb_init(Ef *ef);
extern void ef_rb_free(Ef *ef);
extern bool ef_rb_get(Ef *ef, uint32 pageno, char *out);
extern void ef_rb_after_read(Ef *ef, uint32 pageno, const char *page);
extern bool ef_rb_refresh(Ef *ef, uint32 pageno, const char *page);
extern void ef_rb_force(Ef *ef, uint32 pageno, const char *page);
extern void ef_rb_snapshot(Ef *ef, uint32 **pagenos, char **pages, int *n);

/* ---- page retrieval, Alg. 2 (efind_retrieve.c) ---- */

extern void ef_retrieve(Ef *ef, const uint32 *pagenos, int n, char **out,
						bool for_flush);
extern void ef_retrieve_write(Ef *ef, const uint32 *pagenos, int n, char **pages);

/* ---- temporal control (efind_temporal.c) ---- */

extern uint32 *ef_tc_filter_writes(Ef *ef, uint32 *pages, int n, int *nout);
extern void ef_tc_after_write(Ef *ef, uint32 pageno, const char *page);
extern void ef_tc_note_write(Ef *ef, uint32 pageno);

/* ---- flushing, Alg. 3 (efind_flush.c) ---- */

extern double ef_flush_degree(int policy, const EfWbEntry *const *unit, int n,
							  const double *marea, const double *oarea,
							  double total_marea, double total_oarea,
							  double *alpha, double *beta);
extern int	ef_flush_once(Ef *ef);
extern void ef_flush_to_budget(Ef *ef);
extern void ef_flush_all(Ef *ef);

/* ---- the page source (efind_source.c) ---- */

extern const HiPageSource efind_source;
extern void efind_source_init(void);

/* ---- observability (efind_stats.c) ---- */

extern void ef_append_json(HiIndex *idx, StringInfo buf);
extern void ef_reset_stats(HiIndex *idx);
extern void ef_check(HiIndex *idx);

/* ---- the access method (am/rtam_efind.c), called from _PG_init ---- */

extern void efind_init(void);

/* ---- helpers shared by the files ---- */

/* an aligned, page-sized scratch buffer (for O_DIRECT reads and writes) */
extern char *ef_alloc_page(MemoryContext cxt, uint32 page_size);

#endif							/* EFIND_H */
