/*
 * am_cost.c
 *	  Planner cost estimates of every hybrid_index AM.
 *
 * An index's main fork is empty (pages live in tier files), so the
 * planner's idea of its size is 0 pages: we tell it the real number of
 * pages before running the generic estimate.  Batched reads make the pages
 * of one step cost less than random single reads: they are charged at the
 * midpoint between sequential and random page cost.  Each AM adds the cost
 * of reaching its leaves or buckets (rtam_cost.c, gridam_cost.c).
 */
#include "postgres.h"

#include "access/genam.h"
#include "miscadmin.h"
#include "utils/rel.h"
#include "utils/selfuncs.h"
#include "utils/spccache.h"

#include "am/am_common.h"
#include "core/hi_core.h"

/*
 * The index's pages and height from its shared state, if it is loaded
 * (true); otherwise false and its page size, to estimate them from.
 */
static bool
index_shape(IndexOptInfo *index, double *pages, double *height, int *page_size)
{
	Relation	rel = index_open(index->indexoid, NoLock);
	HiIndexShared *sh = hi_slot_lookup(MyDatabaseId, HI_REL_NUMBER(rel));
	HiIndexOptions *opts = hi_index_options(rel);
	bool		loaded = sh && sh->loaded;

	*page_size = opts ? opts->page_size : HI_PAGE_SIZE_DEFAULT;
	if (loaded)
	{
		*pages = Max(sh->meta.npages, 1);
		*height = Max(sh->meta.height, 1);
	}
	index_close(rel, NoLock);
	return loaded;
}

/*
 * amcostestimate of every AM: the index's pages and height (from its
 * shared state, else the family's guess), the generic estimate over them
 * with batched reads, and the family's CPU cost of reaching the leaves or
 * buckets, charged at startup.
 */
void
am_costestimate(const AmCostModel *model, PlannerInfo *root, IndexPath *path,
				double loop_count, Cost *indexStartupCost, Cost *indexTotalCost,
				Selectivity *indexSelectivity, double *indexCorrelation,
				double *indexPages)
{
	IndexOptInfo *index = path->indexinfo;
	GenericCosts costs;
	double		spc_random,
				spc_seq;
	double		pages,
				height;
	int			page_size;
	int			tree_height;
	Cost		descent;

	if (!index_shape(index, &pages, &height, &page_size))
		model->guess(index->tuples, page_size, &pages, &height);
	descent = model->descent(index->tuples, height, &tree_height);

	index->pages = (BlockNumber) Min(pages, (double) MaxBlockNumber);
	index->tree_height = tree_height;

	MemSet(&costs, 0, sizeof(costs));
	genericcostestimate(root, path, loop_count, &costs);

	get_tablespace_page_costs(index->reltablespace, &spc_random, &spc_seq);
	/* batched reads: cheaper than one random read per page */
	costs.indexTotalCost -= costs.numIndexPages * spc_random;
	costs.indexTotalCost += costs.numIndexPages * (spc_random + spc_seq) / 2;

	costs.indexStartupCost += descent;
	costs.indexTotalCost += descent;

	*indexStartupCost = costs.indexStartupCost;
	*indexTotalCost = costs.indexTotalCost;
	*indexSelectivity = costs.indexSelectivity;
	*indexCorrelation = costs.indexCorrelation;
	*indexPages = costs.numIndexPages;
}
