/*
 * lbgrid_cost.c
 *	  Planner cost estimate for lbgrid scans.
 *
 * The index's main fork is empty (pages live in tier files), so we tell
 * the planner the real number of pages first, then run the generic
 * estimate.  A grid reaches any bucket in two steps (root directory in
 * memory, one sub-directory page, the bucket: the Grid File's two-access
 * principle); LB-Grid reads a bucket as a group read of its log-buckets
 * (the thesis' cost R_p * (1 + L / w)).  Pages of a batched read cost the
 * midpoint between sequential and random page cost, as in rtam_cost.c.
 */
#include "postgres.h"

#include <math.h>

#include "miscadmin.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "utils/rel.h"
#include "utils/selfuncs.h"
#include "utils/spccache.h"

#include "am/lbgrid.h"

static double
index_pages(IndexOptInfo *index)
{
	Relation	rel = index_open(index->indexoid, NoLock);
	HiIndexShared *sh = hi_slot_lookup(MyDatabaseId, rel->rd_node.relNode);
	HiIndexOptions *opts = hi_index_options(rel);
	int			page_size = opts ? opts->page_size : HI_PAGE_SIZE_DEFAULT;
	double		pages;

	if (sh && sh->loaded)
		pages = Max(sh->meta.npages, 1);
	else
		pages = Max(1.0, ceil(index->tuples * sizeof(GridEntry) / (page_size * 0.7)));
	index_close(rel, NoLock);
	return pages;
}

void
lbgrid_costestimate(PlannerInfo *root, IndexPath *path, double loop_count,
					Cost *indexStartupCost, Cost *indexTotalCost,
					Selectivity *indexSelectivity, double *indexCorrelation,
					double *indexPages)
{
	IndexOptInfo *index = path->indexinfo;
	GenericCosts costs;
	double		spc_random,
				spc_seq;

	index->pages = (BlockNumber) Min(index_pages(index), (double) MaxBlockNumber);
	index->tree_height = 1;

	MemSet(&costs, 0, sizeof(costs));
	genericcostestimate(root, path, loop_count, &costs);

	get_tablespace_page_costs(index->reltablespace, &spc_random, &spc_seq);
	costs.indexTotalCost -= costs.numIndexPages * spc_random;
	costs.indexTotalCost += costs.numIndexPages * (spc_random + spc_seq) / 2;

	/* the directory step: one sub-directory page, a root lookup */
	costs.indexStartupCost += 100.0 * cpu_operator_cost;
	costs.indexTotalCost += 100.0 * cpu_operator_cost;

	*indexStartupCost = costs.indexStartupCost;
	*indexTotalCost = costs.indexTotalCost;
	*indexSelectivity = costs.indexSelectivity;
	*indexCorrelation = costs.indexCorrelation;
	*indexPages = costs.numIndexPages;
}
