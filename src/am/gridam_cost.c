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

static void
grid_guess(double tuples, int page_size, double *pages, double *height)
{
	*pages = Max(1.0, ceil(tuples * sizeof(GridEntry) / (page_size * 0.7)));
	*height = 1;
}

/* the directory step: one sub-directory page, a root lookup */
static Cost
grid_descent(double tuples, double height, int *tree_height)
{
	*tree_height = 1;
	return 100.0 * cpu_operator_cost;
}

static const AmCostModel grid_cost_model = {grid_guess, grid_descent};

void
lbgrid_costestimate(PlannerInfo *root, IndexPath *path, double loop_count,
					Cost *indexStartupCost, Cost *indexTotalCost,
					Selectivity *indexSelectivity, double *indexCorrelation,
					double *indexPages)
{
	am_costestimate(&grid_cost_model, root, path, loop_count, indexStartupCost,
					indexTotalCost, indexSelectivity, indexCorrelation, indexPages);
}
