/*
 * gridam_cost.c
 *	  Planner cost estimate for grid AM scans (lbgrid, hgrid).
 *
 * A grid reaches any bucket in two steps (root directory in memory, one
 * sub-directory page, the bucket: the Grid File's two-access principle);
 * LB-Grid reads a bucket as a group read of its log-buckets (the thesis'
 * cost R_p * (1 + L / w)).  The generic part, with batched reads charged
 * below random reads, is am_cost.c's.
 */
#include "postgres.h"

#include <math.h>

#include "optimizer/cost.h"
#include "optimizer/optimizer.h"

#include "am/am_common.h"
#include "am/gridam.h"

void
lbgrid_costestimate(PlannerInfo *root, IndexPath *path, double loop_count,
					Cost *indexStartupCost, Cost *indexTotalCost,
					Selectivity *indexSelectivity, double *indexCorrelation,
					double *indexPages)
{
	IndexOptInfo *index = path->indexinfo;
	double		pages,
				height;
	int			page_size;

	if (!am_index_shape(index, &pages, &height, &page_size))
		pages = Max(1.0, ceil(index->tuples * sizeof(GridEntry) / (page_size * 0.7)));

	/* the directory step: one sub-directory page, a root lookup */
	am_costestimate(root, path, loop_count, pages, 1, 100.0 * cpu_operator_cost,
					indexStartupCost, indexTotalCost, indexSelectivity,
					indexCorrelation, indexPages);
}
