/*
 * grid_int.h
 *	  Declarations shared by the files of the Grid File core only.
 */
#ifndef GRID_INT_H
#define GRID_INT_H

#include "common/pg_prng.h"

#include "base/hi_base.h"
#include "grid/grid.h"

/* a sub-directory page: page header, then the flat directory */
#define GRID_DIR_OFF		MAXALIGN(sizeof(HiPageHeader))
#define GRID_DIR_FLAT(p)	((char *) (p) + GRID_DIR_OFF)

/* an entry with its centre and reach */
typedef struct GridItem
{
	GridEntry	e;
	double		c[2];
	float4		reach[2];
} GridItem;

/* ---- pages straight from the shared page cache (grid_buffer_cache.c) ---- */

extern void gbc_pin(Grid *g, int which, const uint32 *pagenos, int n, int *frames);
extern int	gbc_new(Grid *g, uint32 pageno, uint16 level, uint16 flags);
extern void gbc_dirty(Grid *g, int frame);
extern void gbc_drop(Grid *g, uint32 pageno);

/* ---- bulk load (grid_build.c, grid_build_spill.c) ---- */

#define GRID_BUILD_FILL_PCT 75
/* a bulk-loaded sub-directory fills at most this much of its page */
#define GRID_BUILD_DIR_PCT	70

/* boundaries collected for a directory's scales, per dimension */
typedef struct GridCoords
{
	double	   *v[2];
	int			n[2];
	int			max[2];
} GridCoords;

/* a sub-directory made by the bulk load, for the root directory */
typedef struct GridSubdirOut
{
	double		lo[2];
	double		hi[2];
	uint32		page;
	float4		reach[2];
} GridSubdirOut;

typedef struct GridBuild
{
	Grid	   *g;
	int			target;			/* entries per bucket */
	GridCoords	root;			/* root scale boundaries */
	GridSubdirOut *sub;
	int			nsub;
	int			maxsub;
	Size		done;			/* entries placed (progress) */
	GridWriter *writer;			/* pages of stores with bulk; else the buffers */
} GridBuild;

/* What a parallel worker's collector holds (grid_build_export) */
typedef struct GridPeer
{
	bool		valid;
	bool		spilled;		/* its items are not all in memory */
	Size		n;				/* its items */
	double		lo[2];			/* its centres' extremes */
	double		hi[2];
} GridPeer;

/*
 * The collector of CREATE INDEX (grid_build_spill.c): entries with a
 * finite centre as GridItems (an array, then a temporary file), a
 * reservoir sample of them once they spill, and the NULL/EMPTY entries
 * and boxes without a finite centre for their chains.
 */
struct GridBuildSpool
{
	Size		budget;
	HiSpillList *items;
	HiSpillList *nulls;
	HiSpillList *odd;
	GridItem   *sample;
	int			nsample;
	int			maxsample;
	uint64		seen;			/* items offered to the sample */
	pg_prng_state rng;
	HiLoadHelper helper;		/* start NULL: none (grid_build_split.c) */
	GridPeer	peer;			/* the helper's entries, kept there */
	struct GridSide *side;		/* a helper's side between its tasks
								 * (grid_build_split_worker.c) */
};

/*
 * A set of items being partitioned: their numbers sorted by centre x and
 * by centre y (grid_build.c).  Building one takes GRID_SET_BYTES per item
 * at its peak (the radix sort), 12 afterwards.
 */
typedef struct GridSet
{
	GridItem   *items;			/* every item of the build (never moved) */
	uint32	   *by[2];			/* this set's item numbers by centre x, by y */
	int			n;
	uint64	   *side;			/* scratch of the whole build: a bit per item */
	uint32	   *tmp;			/* scratch of the whole build */
} GridSet;

#define GRID_SET_BYTES		28

extern void grid_coords_add(GridCoords *c, int dim, double v);
extern void grid_set_begin(GridSet *s, GridItem *items, int n);
extern void grid_set_end(GridSet *s);
extern int	grid_set_cut(GridSet *s, int want, int total, GridSet *lower, GridSet *upper,
						 int *dim, double *v);
extern int	grid_cut_dim(const double *lo, const double *hi);
extern int64 grid_cut_pos(int64 n, int want, int total);
extern int64 grid_cut_off_run(int64 m, int64 lo, int64 hi, int64 n);
extern double grid_cut_value(double lower_max, double upper_min);
extern void grid_build_groups(GridBuild *bs, GridSet *s, const double *lo,
							  const double *hi);
extern void grid_build_part(GridBuild *bs, GridBuildSpool *sp, const double *lo,
							const double *hi);
extern HiSpillList *grid_build_take_items(GridBuildSpool *sp);

/* a spilled part of the grid spread into regions (grid_build_spill.c) */
typedef struct GridExt GridExt;
extern GridExt *grid_ext_begin(GridBuild *bs, GridItem *s, int ns, double est,
							   const double *lo, const double *hi, Size budget);
extern void grid_ext_put(GridExt *x, const GridItem *it);
extern void grid_ext_finish(GridBuild *bs, GridExt *x);
extern void grid_build_put_item(GridBuildSpool *sp, const GridItem *it);
extern bool grid_build_shared(GridBuild *bs, GridBuildSpool *sp, const double *lo,
							  const double *hi);
extern GridWriter *gw_begin(Grid *g);
extern void gw_share(GridWriter *w, const HiLoadShared *shared);
extern void gw_end(GridWriter *w);

#define GRID_SPLIT_NONE		0	/* all centres equal: cannot split */
#define GRID_SPLIT_EXISTING 1	/* along a boundary inside the region */
#define GRID_SPLIT_NEW		2	/* along a new boundary */

typedef struct GridSplitPlan
{
	int			kind;
	int			dim;
	int			index;			/* EXISTING: the boundary's index */
	double		value;			/* the boundary's coordinate */
	int			score;			/* entries on the smaller side */
} GridSplitPlan;

extern int	grid_dir_capacity(Grid *g);
extern void grid_root_grow_reach(Grid *g, int si, const float4 *reach);
extern GridItem *grid_items(const GridEntry *e, int n);
extern void grid_divide(const GridItem *it, int n, int dim, double v,
						GridEntry *lo, int *nlo, float4 *rlo,
						GridEntry *hi, int *nhi, float4 *rhi);
extern GridSplitPlan grid_plan_split(const GridDir *d, int ri, const GridItem *it, int n);
extern bool grid_merge_subdir(Grid *g, int si);
extern bool grid_rebuild_subdir(Grid *g, int si);
extern void grid_apply_split(Grid *g, GridDir *d, int ri, const GridSplitPlan *p,
							 const GridItem *it, int n);

/* lower bound of the distance between box q and region [lo,hi] grown by reach */
extern double grid_region_distance(const HiBox *q, const double *lo, const double *hi,
								   const float4 *reach);
extern bool grid_qual_region(const GridQual *q, const double *lo, const double *hi,
							 const float4 *reach);
extern bool grid_key_region(const GridKey *k, const double *lo, const double *hi,
							const float4 *reach);

#endif							/* GRID_INT_H */
