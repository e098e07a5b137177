/*
 * gridam_hgrid_place.c
 *	  Glue between the Grid File core and H-Grid's placement policy
 *	  (policy/hgrid_hot_region.c): the access hook the grid's buffers call for
 *	  every page they hand out (Algorithms 10-12: fetch, then weigh), the
 *	  tier of each page write, and the maintenance operations that must not
 *	  count as workload (build, VACUUM, checks).
 *
 * The policy state hangs off the index's GridShared (am_ext) and lives as
 * long as it; it is created at the first access after the index is built
 * or loaded.  Maintenance (build, VACUUM, checks) reads through a handle
 * marked so (HiIndex.maintenance): its pages are not weighed.
 */
#include "postgres.h"

#include "am/gridam.h"
#include "core/hi_core.h"
#include "policy/placement.h"

/* The policy state of an index, created on first use */
static dsa_pointer
state_of(Grid *g)
{
	GridShared *gs = g->gs;

	if (!DsaPointerIsValid(gs->am_ext))
	{
		LWLockAcquire(&gs->buf_lock, LW_EXCLUSIVE);
		if (!DsaPointerIsValid(gs->am_ext))
		{
			PG_TRY();
			{
				gs->am_ext = hr_create();
			}
			PG_FINALLY();
			{
				hi_lwlock_release_cleanup(&gs->buf_lock);
			}
			PG_END_TRY();
		}
		else
			LWLockRelease(&gs->buf_lock);
	}
	return gs->am_ext;
}

void
hgrid_free_ext(dsa_pointer am_ext)
{
	hr_free(am_ext);
}

/* GridPageFreedFn: a freed page's weight and pending move are gone */
void
hgrid_page_freed(Grid *g, uint32 pageno)
{
	if (DsaPointerIsValid(g->gs->am_ext))
		hr_forget(g->gs->am_ext, pageno);
}

/*
 * GridAccessFn: weigh every page handed out (Eq. 4.1-4.2, Algorithm 9).
 * A sub-directory tells the policy which buckets are its children.  A
 * page found hot is marked dirty so the next write-buffer flush writes it
 * to the fast tier.
 */
void
hgrid_access(Grid *g, int which, const uint32 *pagenos, const int *frames, int n)
{
	HrParams	prm;
	dsa_pointer st;
	uint32	   *refs = NULL;
	bool		due = false;
	int			i;

	if (g->idx->maintenance || g->sh->building)
		return;
	hgrid_params(g->idx->rel, g->gs->page_size, &prm);
	st = state_of(g);
	/* a region takes more than 16 bytes of its page: this bounds the ids */
	if (which == GRID_BUF_DIR)
		refs = palloc(sizeof(uint32) * (g->gs->page_size / 16));
	for (i = 0; i < n; i++)
	{
		bool		mark;
		int			nrefs = 0;

		if (which == GRID_BUF_DIR)
			nrefs = grid_subdir_refs(gbuf_page(g, which, frames[i]), refs);
		due |= hr_access(g->sh, st, &prm, which == GRID_BUF_DIR ? HR_DIR : HR_BUCKET,
						 pagenos[i], refs, nrefs, &mark);
		if (mark)
			gbuf_dirty(g, which, frames[i]);
	}
	if (refs)
		pfree(refs);
	if (due)
		hr_maintain(g->sh, st);
}

/* Where the policy wants a page written */
static int
hgrid_write_tier(HiIndexShared *sh, int slotno, const char *page, uint32 old_pte)
{
	GridShared *gs = grid_lookup_shared(slotno, sh->generation);

	if (gs != NULL && DsaPointerIsValid(gs->am_ext))
		return hr_write_tier(sh, gs->am_ext, page, old_pte);
	/* no access yet since the index was loaded: pages stay where they are */
	return HI_PTE_MAPPED(old_pte) ? HI_PTE_TIER(old_pte) : HI_TIER_FLASH;
}

/*
 * hgrid's placement modes (thesis section 4.3): hot regions, the random
 * control and none (GFFM on flash) all go through the hot-region state,
 * which decides by its mode; the grid buffers' access hook (hgrid_access)
 * is what it learns from, not the page store's reads.
 */
static const HiPlacementPolicy hgrid_policy_hot = {
	.name = "hot",
	.write_tier = hgrid_write_tier
};

static const HiPlacementPolicy hgrid_policy_random = {
	.name = "random",
	.write_tier = hgrid_write_tier
};

static const HiPlacementPolicy hgrid_policy_none = {
	.name = "none",
	.write_tier = hgrid_write_tier
};

void
hgrid_place_register(void)
{
	hi_place_register(HI_AM_HGRID, HR_PLACEMENT_HOT, &hgrid_policy_hot);
	hi_place_register(HI_AM_HGRID, HR_PLACEMENT_RANDOM, &hgrid_policy_random);
	hi_place_register(HI_AM_HGRID, HR_PLACEMENT_NONE, &hgrid_policy_none);
}

/*
 * CREATE INDEX: the pages of the new grid are written at its first
 * checkpoint, so the state (parameters: the special case puts every
 * sub-directory on the fast tier) must exist before.
 */
static void
prepare_build(Grid *g)
{
	HrParams	prm;

	hgrid_params(g->idx->rel, g->gs->page_size, &prm);
	hr_configure(state_of(g), &prm);
	/* the build's own reads are not workload */
	g->idx->maintenance = true;
}

IndexBuildResult *
hgrid_build(Relation heap, Relation index, IndexInfo *info)
{
	IndexBuildResult *res;

	res = grid_am_build(heap, index, info, prepare_build);
	return res;
}

IndexBulkDeleteResult *
hgrid_bulkdelete(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
				 IndexBulkDeleteCallback callback, void *callback_state)
{
	IndexBulkDeleteResult *res;

	res = lbgrid_bulkdelete(info, stats, callback, callback_state);
	return res;
}

void
hgrid_check(HiIndex *idx)
{
	Grid	   *g;

	lbgrid_check(idx);
	/* the policy knows nothing of page ids free for reuse */
	hi_lock_loaded(idx, LW_SHARED);
	g = grid_open(idx);
	if (DsaPointerIsValid(g->gs->am_ext) && g->gs->nfree > 0)
		hr_check_freed(g->gs->am_ext, (const uint32 *) grid_data_ptr(g->gs->free_pages),
					   g->gs->nfree);
	LWLockRelease(&idx->sh->tree_lock);
}

/* hybrid_index_reset_stats: the grid's counters and the policy's */
void
hgrid_reset_stats(HiIndex *idx)
{
	Grid	   *g;

	lbgrid_reset_stats(idx);
	hi_lock_loaded(idx, LW_SHARED);
	g = grid_open(idx);
	if (DsaPointerIsValid(g->gs->am_ext))
		hr_reset_stats(g->gs->am_ext);
	LWLockRelease(&idx->sh->tree_lock);
}

HiPageInfo *
hgrid_pages(HiIndex *idx, Size *n)
{
	HiPageInfo *res;

	res = lbgrid_pages(idx, n);
	return res;
}

char *
hgrid_inspect_json(HiIndex *idx)
{
	StringInfoData s;
	char	   *grid;
	Grid	   *g;
	HrParams	prm;
	dsa_pointer st;

	hi_lock_loaded(idx, LW_SHARED);
	g = grid_open(idx);
	grid = grid_inspect_json(g, "hgrid");
	st = state_of(g);
	hgrid_params(idx->rel, g->gs->page_size, &prm);
	hr_configure(st, &prm);
	initStringInfo(&s);
	/* the grid's object, with the policy's state as one more member */
	appendBinaryStringInfo(&s, grid, strlen(grid) - 1);
	appendStringInfoString(&s, ", \"hot_region\": {");
	hr_json(idx->sh, st, &s);
	appendStringInfoString(&s, "}}");
	LWLockRelease(&idx->sh->tree_lock);
	return s.data;
}
