/*
 * rtam_cost.c
 *	  Planner cost estimate for R-tree AM scans (hyrtree, efind): the
 *	  generic estimate of am_cost.c over the tree's pages, plus the descent
 *	  from the root like GiST charges it.
 */
#include "postgres.h"

#include <math.h>

#include "optimizer/cost.h"
#include "optimizer/optimizer.h"

#include "am/am_common.h"
#include "am/rtam.h"
#include "rtree/rtree.h"

static void
rt_guess(double tuples, int page_size, double *pages, double *height)
{
	double		fanout = rt_leaf_capacity(page_size) * 0.7;

	*pages = Max(1.0, ceil(tuples / fanout) * 1.02);
	*height = Max(1.0, ceil(log(Max(*pages, 2.0)) / log(fanout)) + 1);
}

/* descending from the root, as gistcostestimate charges it */
static Cost
rt_descent(double tuples, double height, int *tree_height)
{
	Cost		descent = 0;

	if (tuples > 1)
		descent += ceil(log(tuples) / log(2.0)) * cpu_operator_cost;
	descent += (height + 1) * 50.0 * cpu_operator_cost;
	*tree_height = (int) height - 1;
	return descent;
}

static const AmCostModel rt_cost_model = {rt_guess, rt_descent};

void
rtam_costestimate(PlannerInfo *root, IndexPath *path, double loop_count,
				  Cost *indexStartupCost, Cost *indexTotalCost,
				  Selectivity *indexSelectivity, double *indexCorrelation,
				  double *indexPages)
{
	am_costestimate(&rt_cost_model, root, path, loop_count, indexStartupCost,
					indexTotalCost, indexSelectivity, indexCorrelation, indexPages);
}
