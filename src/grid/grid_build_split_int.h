/*
 * grid_build_split_int.h
 *	  What the files of a grid bulk load shared with a parallel worker share:
 *	  grid_build_split.c (the leader), grid_build_split_worker.c (the helper)
 *	  and grid_build_split_io.c (the files between them).
 */
#ifndef GRID_BUILD_SPLIT_INT_H
#define GRID_BUILD_SPLIT_INT_H

#include "storage/buffile.h"

#include "grid/grid_int.h"

/* files of the build's shared file set */
#define GRID_W_KEYS		"grid_w_keys"	/* the helper's keys of one dimension */
#define GRID_W_SAMPLE	"grid_w_sample"	/* a sample of the helper's items */
#define GRID_W_ITEMS	"grid_w_items"	/* all the helper's items */
#define GRID_W_LOW		"grid_w_low"	/* the helper's items below the cut */
#define GRID_L_UP		"grid_l_up"		/* the leader's items above the cut */
#define GRID_L_SAMPLE	"grid_l_sample" /* the sample's items above the cut */
#define GRID_W_OUT		"grid_w_out"	/* what the helper built */

/* the helper's tasks, in the order the leader gives them */
typedef enum GridTaskKind
{
	GRID_TASK_KEYS,				/* its keys of dim to GRID_W_KEYS */
	GRID_TASK_SAMPLE,			/* a sample of its items to GRID_W_SAMPLE */
	GRID_TASK_ITEMS,			/* not shared after all: its items to GRID_W_ITEMS */
	GRID_TASK_CUT,				/* its items below (dim, v) to GRID_W_LOW (if
								 * spread, those above into its regions) */
	GRID_TASK_BUILD				/* build over [lo, hi) from its own and GRID_L_UP */
} GridTaskKind;

typedef struct GridTask
{
	GridTaskKind kind;
	int			dim;
	double		v;
	int			target;
	bool		spread;			/* cut on samples: GRID_L_SAMPLE plans its side */
	double		lo[2];			/* its side */
	double		hi[2];
} GridTask;

/* what the helper built: GRID_W_OUT starts with this */
typedef struct GridSplitOut
{
	int			nsub;			/* then GridSubdirOut[nsub] */
	int			ncut[2];		/* then double[ncut[0]], double[ncut[1]] */
	Size		done;
} GridSplitOut;

/* grid_build_split_io.c */
extern void grid_split_read_exact(BufFile *f, void *p, Size len);
extern void grid_split_write_all(BufFile *f, const void *p, Size len);
extern void grid_split_close_shared(BufFile *f);
extern void grid_split_write_item(BufFile *f, const GridItem *it);
extern void grid_split_read_file_items(const HiLoadShared *shared, const char *name,
									   GridBuildSpool *sp, GridExt *ext);
extern void grid_split_part_items(GridBuildSpool *sp, int dim, double v, bool keep_lower,
								  BufFile *out, GridExt *ext);
extern GridItem *grid_split_sample_of(GridBuildSpool *sp, Size max, Size *ns);

#endif							/* GRID_BUILD_SPLIT_INT_H */
