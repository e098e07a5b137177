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

void
rtam_costestimate(PlannerInfo *root, IndexPath *path, double loop_count,
				  Cost *indexStartupCost, Cost *indexTotalCost,
				  Selectivity *indexSelectivity, double *indexCorrelation,
				  double *indexPages)
{
	IndexOptInfo *index = path->indexinfo;
	double		pages,
				height;
	int			page_size;
	Cost		descent = 0;

	if (!am_index_shape(index, &pages, &height, &page_size))
	{
		double		fanout = rt_leaf_capacity(page_size) * 0.7;

		pages = Max(1.0, ceil(index->tuples / fanout) * 1.02);
		height = Max(1.0, ceil(log(Max(pages, 2.0)) / log(fanout)) + 1);
	}

	/* descending from the root, as gistcostestimate charges it */
	if (index->tuples > 1)
		descent += ceil(log(index->tuples) / log(2.0)) * cpu_operator_cost;
	descent += (height + 1) * 50.0 * cpu_operator_cost;

	am_costestimate(root, path, loop_count, pages, (int) height - 1, descent,
					indexStartupCost, indexTotalCost, indexSelectivity,
					indexCorrelation, indexPages);
}
