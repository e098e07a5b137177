/*
 * grid.h
 *	  The two-level Grid File core (thesis ch. 3.2, after Hinrichs' two-level
 *	  Grid File), shared by the grid access methods (lbgrid, and hgrid).
 *
 * Layout:
 *	 - the root directory: linear scales and a grid array whose cells point
 *	   at sub-directories, kept in shared memory (DSA) and saved in the map
 *	   file's AM blob at each checkpoint;
 *	 - sub-directories: one page each, with their own sub-scales and a grid
 *	   array whose cells point at buckets;
 *	 - buckets: opaque ids handed to a bucket store.  The core knows nothing
 *	   of how a bucket is kept: GFFM keeps it in a page (plus overflow pages,
 *	   grid_chain.c), LB-Grid in log-buckets found through the Bucket
 *	   Translation Table (lbgrid/).
 *
 * Both directory levels use the same format (GridDir): scales per
 * dimension and a list of regions.  A region is a box of cells (the Grid
 * File's "several cells may point to the same bucket") with the id it
 * points at and its reach (below); the grid array is derived from the
 * regions whenever a directory is written.
 *
 * Geometries are indexed by the centre of their box (points are their own
 * centre).  Each region also records its reach: the largest distance from
 * an entry's centre to the edge of the entry's box, per dimension.  A box
 * query then visits the regions whose box grown by their reach meets the
 * query, so non-point geometries are found without a second index; a
 * large geometry only widens its own bucket and sub-directory.  NULL and
 * EMPTY geometries, and boxes whose centre or reach is not finite (NaN or
 * infinite coordinates), live outside the grid in two chains of pages.
 *
 * Concurrency: the index's tree_lock, shared to read, exclusive to change.
 * Pages are read through the grid's own buffers (grid_buffer.c), which
 * have a lock of their own for their bookkeeping.
 */
#ifndef GRID_H
#define GRID_H

#include "access/genam.h"
#include "lib/stringinfo.h"

#include "base/hi_base.h"
#include "policy/placement.h"
#include "core/hi_core.h"
#include "base/hi_hits.h"
#include "log/redo_log.h"

/* dimensions */
#define GRID_X 0
#define GRID_Y 1

/* modes: how buckets are stored (the store, see GridStoreOps) */
#define GRID_MODE_GFFM	0		/* bucket = page chain, updated in place */
#define GRID_MODE_LOG	1		/* bucket = records in log-buckets (LB-Grid) */
#define GRID_NUM_MODES	2

/* page kinds in HiPageHeader.flags */
#define GRID_PAGE_DIR		0x0100	/* a sub-directory (level 1) */
#define GRID_PAGE_BUCKET	0x0200	/* a GFFM bucket or chain page */
#define GRID_PAGE_LOG		0x0400	/* an LB-Grid log-bucket */

/* scan strategies (GiST numbers, as hyrtree) */
#define GRID_STRATEGY_OVERLAP	3	/* && */
#define GRID_STRATEGY_SAME		6	/* ~= */
#define GRID_STRATEGY_CONTAINS	7	/* ~ */
#define GRID_STRATEGY_WITHIN	8	/* @ */
#define GRID_STRATEGY_DISTANCE	13	/* <-> */

/* ---- entries ---- */

typedef struct GridEntry
{
	HiBox		key;			/* box, or exact point (flags) */
	ItemPointerData tid;
	uint8		kind;			/* HiKeyKind */
	uint8		flags;			/* HI_ENT_* */
} GridEntry;

typedef struct GridBucketData
{
	GridEntry  *e;
	int			n;
} GridBucketData;

/* Centre and reach of a box; false if not finite (the entry is "odd") */
extern bool grid_center(const HiBox *b, double *c, float4 *reach);

/* The box of an entry (its key, or its exact point's box) */
static inline const HiBox *
grid_ent_box(const GridEntry *e, HiBox *tmp)
{
	return hi_ent_box(&e->key, e->flags, tmp);
}

/* Centre and reach of an entry's box */
static inline bool
grid_ent_center(const GridEntry *e, double *c, float4 *reach)
{
	HiBox		tmp;

	return grid_center(grid_ent_box(e, &tmp), c, reach);
}

/* ---- directories (grid_dir.c) ---- */

typedef struct GridRegion
{
	uint32		ref;			/* bucket id, or sub-directory page */
	uint16		lo[2];			/* first cell per dimension */
	uint16		hi[2];			/* last cell per dimension */
	float4		reach[2];
} GridRegion;

typedef struct GridDirHdr
{
	uint16		n[2];			/* cells per dimension */
	uint16		nr;				/* regions */
	uint16		flags;
	float4		reach[2];		/* largest reach of its regions */
	uint32		pad[2];			/* the scales after it are doubles: 8-aligned */
} GridDirHdr;

StaticAssertDecl(sizeof(GridDirHdr) % sizeof(double) == 0,
				 "the scales of a flat directory must be aligned");

/* read-only (except reach) view of a flat directory, on a page or in DSA */
typedef struct GridDirView
{
	GridDirHdr *h;
	double	   *s[2];			/* scales, n[d] + 1 values: outer bounds too */
	GridRegion *r;
	uint16	   *cells;			/* cells[ix * n[1] + iy] = region */
} GridDirView;

/* a directory being changed */
typedef struct GridDir
{
	int			n[2];
	int			nr;
	int			maxr;
	double	   *s[2];
	GridRegion *r;
} GridDir;

#define GRID_MAX_REGIONS	65535
#define GRID_MAX_CELLS		65535	/* per dimension */

extern Size gd_flat_size(int nx, int ny, int nr);
extern void gdv_init(GridDirView *v, char *flat);
extern int	gd_scale_find(const double *s, int n, double v);
extern int	gdv_locate(const GridDirView *v, double x, double y);
extern void gdv_region_box(const GridDirView *v, int r, double *lo, double *hi);
extern GridDir *gd_new(const double *lo, const double *hi, uint32 ref);
extern GridDir *gd_decode(const char *flat);
extern int	grid_chain_capacity(uint32 page_size);
extern const char *grid_page_layout(const char *page, uint32 page_size);
extern const char *grid_dir_layout(const char *flat, Size room);
extern Size gd_size(const GridDir *d);
extern void gd_encode(const GridDir *d, char *flat);
extern void gd_region_box(const GridDir *d, int r, double *lo, double *hi);
extern int	gd_boundary_index(const GridDir *d, int dim, double v);
extern int	gd_insert_boundary(GridDir *d, int dim, double v);
extern int	gd_split_region(GridDir *d, int r, int dim, int i);
extern bool gd_can_merge(const GridDir *d, int a, int b);
extern void gd_merge_regions(GridDir *d, int a, int b);
extern int	gd_remove_unneeded(GridDir *d);
extern int	gd_buddies(const GridDir *d, int r, int *out);
extern GridDir *gd_cut(GridDir *d, int dim, int i);
extern GridDir *gd_join(const GridDir *a, const GridDir *b, int dim);
extern void gd_check(const GridDir *d, const char *what, uint32 pageno);
extern int	grid_subdir_refs(const char *page, uint32 *out);

/* ---- buffers (grid_buffer.c): HLRU + CLRU, Algorithms 4 and 5 ---- */

#define GRID_BUF_DIR	0
#define GRID_BUF_BUCKET 1

typedef struct GridBufStats
{
	uint64		hits;
	uint64		misses;
	uint64		read_batches;
	uint64		evictions;
	uint64		cold_flushes;	/* CLRU written as one batch */
	uint64		pages_flushed;
} GridBufStats;

typedef struct GridBuf
{
	int			nframes;		/* hot_cap + cold_cap */
	int			hot_cap;
	int			cold_cap;
	int			nhot;
	int			ncold;
	int			hot_head;		/* MRU end */
	int			hot_tail;
	int			cold_head;
	int			cold_tail;
	int			free_head;
	int			hash_cap;		/* power of two */
	dsa_pointer descs;
	dsa_pointer hash;
	dsa_pointer chunks;			/* dsa_pointer per chunk of frames' pages
								 * (grid_buffer.c), allocated when first used */
	GridBufStats st;
} GridBuf;

/* ---- shared state of one index, in the DSA area ---- */

typedef struct GridCounters
{
	uint64		splits;			/* bucket splits */
	uint64		merges;			/* bucket merges */
	uint64		dir_splits;		/* sub-directory splits */
	uint64		dir_merges;
	uint64		boundaries_removed;
	uint64		overflows;		/* unsplittable full buckets */
	uint64		reorganisations;	/* sub-directories repartitioned */
} GridCounters;

typedef struct GridShared
{
	uint32		magic;
	uint64		epoch;			/* unique per state made (pins left by an
								 * error never touch a later state) */
	int			mode;			/* GRID_MODE_* */
	uint32		page_size;
	int			capacity;		/* entries per bucket before a split */
	LWLock		buf_lock;		/* bookkeeping of both buffers */
	bool		direct;			/* pages straight from the shared page cache:
								 * no buffer of its own (grid_buffer_cache.c) */
	GridBuf		buf[2];			/* GRID_BUF_DIR, GRID_BUF_BUCKET */

	dsa_pointer root;			/* flat GridDir of sub-directories */
	uint32		root_len;
	uint32		nulls;			/* chain of NULL and EMPTY entries */
	uint32		odd;			/* chain of boxes with no finite centre */
	dsa_pointer free_pages;		/* logical page ids free for reuse */
	uint32		nfree;
	uint32		free_cap;
	uint64		applied_lsn;	/* newest log record reflected */
	GridCounters cnt;
	dsa_pointer ext;			/* the store's own state (LB-Grid: BTT) */
	uint32		am_kind;		/* HiAmKind of the index */
	dsa_pointer am_ext;			/* the AM's own state (H-Grid: weights) */
} GridShared;

#define GRID_SHARED_MAGIC 0x47524944	/* "GRID" */

typedef struct GridStoreOps GridStoreOps;

/*
 * A bulk load's page writer (grid_build_write.c): new pages written
 * straight to storage in batches, never through the buffers, each once.
 * With a helper process building the same index, lock serializes the
 * changes of shared state (page ids, the store's tables).
 */
typedef struct GridWriter GridWriter;
extern void gw_alloc(GridWriter *w, uint32 *pagenos, int n);
extern char *gw_page(GridWriter *w, uint32 pageno, uint16 level, uint16 flags);
extern void gw_lock(GridWriter *w);
extern void gw_unlock(GridWriter *w);

/*
 * A backend's handle on an index's grid for one operation.  Knobs that a
 * session may change (GUCs, reloptions) are read when it is opened.
 */
typedef struct Grid
{
	HiIndex    *idx;
	HiIndexShared *sh;
	GridShared *gs;
	const GridStoreOps *store;
	int			merge_pct;		/* merge below this occupancy */
	int			batch_pages;	/* pages per batched read */
	bool		knn_prefetch;
	int			compact_pct;	/* LB-Grid: compact log-buckets below */
	int			max_list;		/* LB-Grid: rewrite a bucket past this L */
} Grid;

/* Settings an access method gives the core when an index is opened */
typedef struct GridSettings
{
	int			mode;
	int			capacity;		/* 0: from the page size */
	int			buffer_kb;
	int			dir_pct;
	int			cold_pages;
	int			merge_pct;
	int			batch_pages;	/* 0: half the bucket buffer */
	bool		knn_prefetch;
	int			compact_pct;
	int			max_list;
} GridSettings;

typedef void (*GridSettingsFn) (Relation index, GridSettings *out);

/*
 * Optional: told of every page a buffer hands out (hits and misses), after
 * the pin, without locks of the grid.  H-Grid's hot-region detection
 * (weights of sub-directories and buckets) hangs here; the tier a page is
 * written to is the placement policy's business (hi_place_write_tier), not
 * the grid's.
 */
typedef void (*GridAccessFn) (Grid *g, int which, const uint32 *pagenos,
							  const int *frames, int n);

/* Optional: frees GridShared.am_ext (the AM's own shared state) */
typedef void (*GridAmExtFreeFn) (dsa_pointer am_ext);

/*
 * Optional: a page id was freed (bucket merge, sub-directory merge, chain
 * shortened); whatever the AM knows of it no longer applies when the id
 * is reused.  Called with tree_lock held exclusively.
 */
typedef void (*GridPageFreedFn) (Grid *g, uint32 pageno);

typedef bool (*GridVacuumFn) (ItemPointer tid, void *arg);

/*
 * How buckets are kept.  Entries are copied in and out; callers hold
 * tree_lock exclusively for everything but npages, count and load.
 */
struct GridStoreOps
{
	const char *name;
	int			(*capacity) (uint32 page_size);
	int			(*npages) (Grid *g, uint32 b);
	/* the pages of bucket b known without reading any (at most npages) */
	int			(*pages) (Grid *g, uint32 b, uint32 *out);
	/* does add read the bucket's pages? */
	bool		add_reads;
	void		(*load) (Grid *g, const uint32 *b, int n, GridBucketData *out);
	uint32		(*count) (Grid *g, uint32 b);
	uint32		(*create) (Grid *g);
	void		(*drop) (Grid *g, uint32 b);
	void		(*add) (Grid *g, uint32 b, const GridEntry *e);
	void		(*remove) (Grid *g, uint32 b, const GridEntry *e);
	void		(*replace) (Grid *g, uint32 b, const GridEntry *e, int n);
	/* remove the entries whose TID fn accepts, logging each removal */
	void		(*vacuum) (Grid *g, uint32 b, GridVacuumFn fn, void *arg,
						   double *removed, double *remaining);
	/* deferred work after a change (compaction); true if some is left */
	bool		(*after_change) (Grid *g);
	/* the store's own shared state, saved in the blob */
	void		(*init_ext) (Grid *g);
	void		(*save_ext) (Grid *g, StringInfo out);
	void		(*load_ext) (Grid *g, const char *data, Size len);
	void		(*free_ext) (GridShared *gs);
	void		(*check) (Grid *g, int64 *entries);
	void		(*inspect) (Grid *g, StringInfo json);
	/* HiPageInfo of a page the store owns (log-buckets); false if not */
	bool		(*page_info) (Grid *g, uint32 pageno, HiPageInfo *info);

	/*
	 * Bulk load: n new buckets, the i-th holding
	 * e[first[i] .. first[i + 1]), their pages written through w; their ids
	 * to ids[].  Tables shared with a helper change under gw_lock.
	 */
	void		(*bulk) (Grid *g, GridWriter *w, const GridEntry *e, const int *first,
						 int n, uint32 *ids);
};

extern void grid_register_store(int mode, const GridStoreOps *ops);

/* ---- state (grid_state.c) ---- */
extern void grid_shmem_init(void);
extern void grid_register_am(HiAmKind kind, GridSettingsFn settings, GridAccessFn access,
							 GridAmExtFreeFn free_ext, GridPageFreedFn freed);
extern void grid_note_access(Grid *g, int which, const uint32 *pagenos,
							 const int *frames, int n);
extern Grid *grid_open(HiIndex *idx);
extern Grid *grid_create(HiIndex *idx);
extern void grid_discard(int slotno, uint32 generation);
extern GridShared *grid_lookup_shared(int slotno, uint32 generation);
extern void grid_with_state(int slotno, uint32 generation,
							void (*fn) (GridShared *gs, void *arg), void *arg);
extern void grid_redo(HiIndex *idx, const HiLogRecord *rec);
extern void grid_note_applied(Grid *g);
extern void grid_after_change(Grid *g);
extern uint32 grid_page_alloc(Grid *g);
extern void grid_page_free(Grid *g, int which, uint32 pageno);
extern void grid_root(Grid *g, GridDirView *v);
extern void grid_root_set(Grid *g, const GridDir *d);
extern void grid_bump(Grid *g);
extern const HiPageSource grid_page_source;
extern char *grid_data_ptr(dsa_pointer p);

/* ---- buffers ---- */
extern void gbuf_init(Grid *g, int which, int hot, int cold);
extern void gbuf_free(GridShared *gs, int which);
extern void gbuf_pin(Grid *g, int which, const uint32 *pagenos, int n, int *frames);
extern int	gbuf_new(Grid *g, int which, uint32 pageno, uint16 level, uint16 flags);
extern char *gbuf_page(Grid *g, int which, int frame);
extern void gbuf_dirty(Grid *g, int which, int frame);
extern void gbuf_unpin(Grid *g, int which, int frame);
extern void gbuf_drop(Grid *g, int which, uint32 pageno);
extern void gbuf_flush_all(Grid *g);
extern int	gbuf_batch_limit(Grid *g, int which);
extern bool gbuf_shares_cache(Grid *g);
extern void gbuf_prefetch(Grid *g, int which, const uint32 *pagenos, int n);
extern void gbuf_release_pins(void);

/* ---- page chains: GFFM buckets, NULL and odd lists (grid_chain.c) ---- */
extern const GridStoreOps grid_chain_ops;
extern uint32 gc_create(Grid *g);
extern void gc_add(Grid *g, uint32 head, const GridEntry *e);
extern bool gc_remove(Grid *g, uint32 head, const GridEntry *e);
extern void gc_load(Grid *g, const uint32 *heads, int n, GridBucketData *out);
extern uint32 gc_count(Grid *g, uint32 head);
extern void gc_vacuum(Grid *g, uint32 head, GridVacuumFn fn, void *arg,
					  double *removed, double *remaining);
extern uint32 *gc_pages(Grid *g, uint32 head, int *n);

/* ---- changes (grid_insert.c, grid_merge.c) ---- */
extern void grid_insert(Grid *g, const GridEntry *e);
extern void grid_insert_read_ahead(Grid *g, const HiKeyItem *items, int n);
extern bool grid_delete(Grid *g, const GridEntry *e);
extern void grid_try_merge(Grid *g, double x, double y);
extern void grid_note_delete(Grid *g, const GridEntry *e);
extern int	grid_split_subdir(Grid *g, int si);

/* ---- queries ---- */

/* one element of a scan key (an ANY array has several) */
typedef struct GridQual
{
	int			strategy;
	bool		isnull;			/* NULL argument: matches nothing */
	bool		empty;			/* EMPTY argument */
	HiBox		box;
} GridQual;

typedef struct GridKey
{
	int			nelems;
	GridQual   *elems;			/* the key holds if any element does */
} GridKey;

typedef struct GridQuery
{
	int			nkeys;
	GridKey    *keys;			/* all must hold */
	bool		impossible;		/* some key can never hold */
} GridQuery;

extern bool grid_entry_matches(const GridQuery *q, const GridEntry *e);
extern void grid_search(Grid *g, const GridQuery *q, HiHits *out);

typedef struct GridKnn GridKnn;
extern GridKnn *grid_knn_begin(Grid *g, const HiBox *query, bool query_empty,
							   const GridQuery *q, const HiKnnExact *exact);
extern bool grid_knn_next(GridKnn *k, HiKeyItem *item, double *dist, bool *isnull,
						  bool *exact);
extern void grid_knn_end(GridKnn *k);

/* ---- build, vacuum, check (grid_build.c, grid_vacuum.c, grid_check.c) ---- */
typedef struct GridBuildSpool GridBuildSpool;
extern GridBuildSpool *grid_build_begin(Size budget);
extern void grid_build_put(GridBuildSpool *sp, const GridEntry *e);
extern void grid_bulk_load(Grid *g, GridBuildSpool *sp);
extern void grid_build_set_helper(GridBuildSpool *sp, const HiLoadHelper *helper);
extern void grid_build_export(GridBuildSpool *sp, BufFile *file);
extern Size grid_build_import(GridBuildSpool *sp, BufFile *file);
extern void grid_bulk_help(HiIndex *idx, GridBuildSpool *own, const void *task, Size len,
						   const HiLoadShared *shared);
extern void grid_bulk_delete(HiIndex *idx, GridVacuumFn fn, void *arg,
							 double *removed, double *remaining);
extern void grid_check(Grid *g);
extern char *grid_inspect_json(Grid *g, const char *am);
extern HiPageInfo *grid_pages(Grid *g, Size *n);

/* Region test helpers (grid_search.c) */
extern bool grid_region_may_match(const GridQuery *q, const GridKey *drive,
								  int elem, const double *lo, const double *hi,
								  const float4 *reach);

#endif							/* GRID_H */
