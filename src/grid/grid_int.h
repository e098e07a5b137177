/*
 * grid_int.h
 *	  Declarations shared by the files of the Grid File core only.
 */
#ifndef GRID_INT_H
#define GRID_INT_H

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
