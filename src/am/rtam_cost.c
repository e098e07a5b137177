/*
 * rtam_cost.c
 *	  Planner cost estimate for R-tree AM scans (hyrtree, efind).
 *
 * The index's main fork is empty (pages live in tier files), so the
 * planner's idea of the index size is 0 pages; we tell it the real number
 * of pages before running the generic estimate, then add the descent from
 * the root like GiST does.  Batched reads make the pages of one level cost
 * less than random single reads: we charge them at the midpoint between
 * sequential and random page cost.
 */
#include "postgres.h"

#include <math.h>

#include "access/genam.h"
#include "miscadmin.h"
#include "optimizer/optimizer.h"
#include "utils/spccache.h"
#include "optimizer/cost.h"
#include "utils/rel.h"
#include "utils/selfuncs.h"

#include "am/rtam.h"
#include "rtree/rtree.h"

/* Pages and height of an index, from its shared state or estimated */
static void
index_shape(IndexOptInfo *index, double *pages, double *height)
{
	Relation	rel = index_open(index->indexoid, NoLock);
	HiIndexShared *sh = hi_slot_lookup(MyDatabaseId, rel->rd_node.relNode);
	HiIndexOptions *opts = hi_index_options(rel);
	int			page_size = opts ? opts->page_size : HI_PAGE_SIZE_DEFAULT;

	if (sh && sh->loaded)
	{
		*pages = Max(sh->meta.npages, 1);
		*height = Max(sh->meta.height, 1);
	}
	else
	{
		double		fanout = rt_leaf_capacity(page_size) * 0.7;

		*pages = Max(1.0, ceil(index->tuples / fanout) * 1.02);
		*height = Max(1.0, ceil(log(Max(*pages, 2.0)) / log(fanout)) + 1);
	}
	index_close(rel, NoLock);
}

void
rtam_costestimate(PlannerInfo *root, IndexPath *path, double loop_count,
					 Cost *indexStartupCost, Cost *indexTotalCost,
					 Selectivity *indexSelectivity, double *indexCorrelation,
					 double *indexPages)
{
	IndexOptInfo *index = path->indexinfo;
	GenericCosts costs;
	double		pages,
				height;
	double		spc_random,
				spc_seq;

	index_shape(index, &pages, &height);
	index->pages = (BlockNumber) Min(pages, (double) MaxBlockNumber);
	index->tree_height = (int) height - 1;

	MemSet(&costs, 0, sizeof(costs));
	genericcostestimate(root, path, loop_count, &costs);

	get_tablespace_page_costs(index->reltablespace, &spc_random, &spc_seq);
	/* batched level reads: cheaper than one random read per page */
	costs.indexTotalCost -= costs.numIndexPages * spc_random;
	costs.indexTotalCost += costs.numIndexPages * (spc_random + spc_seq) / 2;

	/* descending from the root, as gistcostestimate charges it */
	if (index->tuples > 1)
	{
		costs.indexStartupCost += ceil(log(index->tuples) / log(2.0)) * cpu_operator_cost;
		costs.indexTotalCost += ceil(log(index->tuples) / log(2.0)) * cpu_operator_cost;
	}
	costs.indexStartupCost += (height + 1) * 50.0 * cpu_operator_cost;
	costs.indexTotalCost += (height + 1) * 50.0 * cpu_operator_cost;

	*indexStartupCost = costs.indexStartupCost;
	*indexTotalCost = costs.indexTotalCost;
	*indexSelectivity = costs.indexSelectivity;
	*indexCorrelation = costs.indexCorrelation;
	*indexPages = costs.numIndexPages;
}
