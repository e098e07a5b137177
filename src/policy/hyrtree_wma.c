/*
 * hyrtree_wma.c
 *	  Which tier a page belongs on: the placement policies of the R-tree
 *	  access methods (hyrtree; efind uses none).
 *
 *	none	every page on flash (the papers' R-tree on flash)
 *	upper	non-leaf pages on the fast tier (sHR-tree)
 *	wma		upper, plus the leaves the Node Score Table finds hot (HyR-tree,
 *			Koutsoukos et al., section 3, Algorithms 1-3, Eq. 2)
 *	random	upper, plus as many randomly chosen leaves as wma would move
 *			(rHyR-tree, the paper's control)
 *
 * Leaves are scored by the Node Score Table (hyrtree_wma_nst.c), which
 * also ends the epochs and makes the moves that follow (Algorithm 1, the
 * random control's quota, capacity).
 *
 * On eviction (Algorithm 2) a leaf on flash whose score exceeds T is
 * written to the fast tier even if clean; dirty pages go to the tier they
 * are on (leaves) or to the fast tier (upper levels).  Reads go wherever
 * the page table says (Algorithm 3, in the cache).
 *
 * Capacity (reloption optane_capacity): the papers leave full fast tiers
 * open.  At the end of an epoch, if the fast tier is full, its coldest
 * leaves (lowest score, untracked ones first) that are not above T move
 * back to flash until it is at 90 % of the capacity; a leaf is not
 * promoted while the tier is full.
 */
#include "postgres.h"

#include "lib/stringinfo.h"

#include "base/hi_base.h"
#include "policy/placement.h"
#include "policy/hyrtree_wma_int.h"
#include "core/hi_core.h"
#include "storage/storage.h"
#include "utils/guc.h"

/* settings (hi_wma_init), the defaults of the reloptions */
static int	wma_epoch_size_guc = 250000;
static int	wma_epochs_guc = 5;
static double wma_threshold_guc = 95.0;
int			hi_wma_score_table_entries = 262144;

/* the R-tree kinds (hi_wma_register) and where their indexes' parameters come from */
static bool registered[HI_AM_HGRID + 1];
static hi_wma_params_fn params_of[HI_AM_HGRID + 1];

/*
 * Slot hook: the parameters of an index of an R-tree kind (its reloptions
 * over the settings), and a fresh state, when it is loaded or created.
 */
static void
wma_configure(HiIndexShared *sh, Relation index)
{
	uint32		page_size = sh->meta.page_size ? sh->meta.page_size : HI_PAGE_SIZE_DEFAULT;
	WmaSlot    *w = hi_wma_slot(sh);
	HiWmaParams prm = {0};

	if (sh->meta.am >= lengthof(registered) || !registered[sh->meta.am])
		return;
	if (params_of[sh->meta.am])
		params_of[sh->meta.am] (index, &prm);
	w->epoch_size = prm.epoch_size > 0 ? prm.epoch_size : wma_epoch_size_guc;
	w->wma_epochs = prm.wma_epochs > 0 ? prm.wma_epochs : wma_epochs_guc;
	w->wma_threshold = prm.wma_threshold > 0 ? prm.wma_threshold : wma_threshold_guc;
	w->optane_capacity = prm.optane_capacity_kb > 0 ?
		(uint32) Max(1, (int64) prm.optane_capacity_kb * 1024 / page_size) : 0;
	pg_atomic_write_u64(&w->epoch_reads, 0);
	pg_atomic_write_u64(&w->migrations_up, 0);
	pg_atomic_write_u64(&w->migrations_down, 0);
	pg_atomic_write_u64(&w->random_quota, 0);
	w->epoch_no = 0;
	w->threshold = 0;
	w->have_threshold = false;
	w->scored_leaves = 0;
	w->score_min = w->score_median = w->score_max = 0;
}

static bool
fast_tier_has_room(HiIndexShared *sh)
{
	WmaSlot    *w = hi_wma_slot(sh);
	uint64		pages[HI_NUM_TIERS];

	if (w->optane_capacity == 0)
		return true;
	hi_pt_count(sh, pages);
	return pages[HI_TIER_OPTANE] < w->optane_capacity;
}

/* Would WMA move this flash leaf to the fast tier now? */
static bool
wma_wants(HiIndexShared *sh, int slotno, uint32 pageno)
{
	WmaSlot    *w = hi_wma_slot(sh);
	return w->have_threshold &&
		hi_place_score(sh, slotno, pageno) > w->threshold &&
		fast_tier_has_room(sh);
}

/* none: every page on flash (the papers' R-tree) */
static int
none_write_tier(HiIndexShared *sh, int slotno, const char *page, uint32 old_pte)
{
	return HI_TIER_FLASH;
}

/* upper: the sHR-tree, non-leaf pages on the fast tier */
static int
upper_write_tier(HiIndexShared *sh, int slotno, const char *page, uint32 old_pte)
{
	return ((const HiPageHeader *) page)->level == 0 ? HI_TIER_FLASH : HI_TIER_OPTANE;
}

/*
 * Algorithm 2: the tier a page is written to.  old_pte is where it lives
 * now (0 for a page never written).  Upper levels go to the fast tier, a
 * leaf stays where it is unless it is hot (wma) or counts for the random
 * control's quota (random).
 */
static int
wma_write_tier(HiIndexShared *sh, int slotno, const char *page, uint32 old_pte)
{
	const HiPageHeader *h = (const HiPageHeader *) page;
	WmaSlot    *w = hi_wma_slot(sh);

	if (h->level != 0 || (HI_PTE_MAPPED(old_pte) && HI_PTE_TIER(old_pte) == HI_TIER_OPTANE))
		return HI_TIER_OPTANE;
	if (!(h->flags & HI_PAGE_FLAG_NULLS) && HI_PTE_MAPPED(old_pte) &&
		wma_wants(sh, slotno, h->pageno))
	{
		pg_atomic_fetch_add_u64(&w->migrations_up, 1);
		return HI_TIER_OPTANE;
	}
	return HI_TIER_FLASH;
}

static int
random_write_tier(HiIndexShared *sh, int slotno, const char *page, uint32 old_pte)
{
	const HiPageHeader *h = (const HiPageHeader *) page;

	if (h->level != 0 || (HI_PTE_MAPPED(old_pte) && HI_PTE_TIER(old_pte) == HI_TIER_OPTANE))
		return HI_TIER_OPTANE;
	if (!(h->flags & HI_PAGE_FLAG_NULLS) && HI_PTE_MAPPED(old_pte))
		hi_wma_count_for_random(sh, slotno, h->pageno);
	return HI_TIER_FLASH;
}

/* Algorithm 2, lines 2-6: a clean flash leaf evicted that should move up */
static bool
clean_flash_leaf(const char *page, uint32 pte)
{
	const HiPageHeader *h = (const HiPageHeader *) page;

	return h->level == 0 && !(h->flags & HI_PAGE_FLAG_NULLS) &&
		HI_PTE_MAPPED(pte) && HI_PTE_TIER(pte) == HI_TIER_FLASH;
}

static bool
wma_migrate_clean(HiIndexShared *sh, int slotno, const char *page, uint32 pte)
{
	return clean_flash_leaf(page, pte) &&
		wma_wants(sh, slotno, ((const HiPageHeader *) page)->pageno);
}

/* random: counts the leaf WMA would have moved, moves it not */
static bool
random_migrate_clean(HiIndexShared *sh, int slotno, const char *page, uint32 pte)
{
	if (clean_flash_leaf(page, pte))
		hi_wma_count_for_random(sh, slotno, ((const HiPageHeader *) page)->pageno);
	return false;
}

/* Policy state as a JSON object, for hybrid_index_inspect */
static char *
wma_json(HiIndexShared *sh)
{
	WmaSlot    *w = hi_wma_slot(sh);
	StringInfoData buf;
	Size		nleaves[HI_NUM_TIERS];
	int			t;

	for (t = 0; t < HI_NUM_TIERS; t++)
	{
		uint32	   *l = hi_pt_collect(sh, t, true, &nleaves[t]);

		pfree(l);
	}
	initStringInfo(&buf);
	appendStringInfo(&buf,
					 "{\"leaves_flash\": %zu, \"leaves_optane\": %zu, "
					 "\"migrations_up\": %llu, \"migrations_down\": %llu, "
					 "\"epoch\": %llu, \"epoch_size\": %d, \"epoch_reads\": %llu, "
					 "\"wma_epochs\": %d, \"wma_threshold\": %g, "
					 "\"optane_capacity_pages\": %u, ",
					 nleaves[HI_TIER_FLASH], nleaves[HI_TIER_OPTANE],
					 (unsigned long long) pg_atomic_read_u64(&w->migrations_up),
					 (unsigned long long) pg_atomic_read_u64(&w->migrations_down),
					 (unsigned long long) w->epoch_no, w->epoch_size,
					 (unsigned long long) pg_atomic_read_u64(&w->epoch_reads),
					 w->wma_epochs, w->wma_threshold, w->optane_capacity);
	if (w->have_threshold)
		appendStringInfo(&buf,
						 "\"threshold\": %g, \"scored_leaves\": %u, "
						 "\"score_min\": %g, \"score_median\": %g, \"score_max\": %g}",
						 w->threshold, w->scored_leaves, w->score_min,
						 w->score_median, w->score_max);
	else
		appendStringInfo(&buf, "\"threshold\": null, \"scored_leaves\": %u}",
						 w->scored_leaves);
	return buf.data;
}

static const HiPlacementPolicy policy_none = {
	.name = "none",
	.write_tier = none_write_tier,
	.json = wma_json
};

static const HiPlacementPolicy policy_upper = {
	.name = "upper",
	.write_tier = upper_write_tier,
	.json = wma_json
};

static const HiPlacementPolicy policy_wma = {
	.name = "wma",
	.note_reads = hi_wma_note_reads,
	.write_tier = wma_write_tier,
	.migrate_clean = wma_migrate_clean,
	.json = wma_json
};

static const HiPlacementPolicy policy_random = {
	.name = "random",
	.note_reads = hi_wma_note_reads,
	.write_tier = random_write_tier,
	.migrate_clean = random_migrate_clean,
	.json = wma_json
};

static const HiSlotHooks wma_slot_hooks = {
	.configure = wma_configure,
	.forget = hi_wma_forget
};

static const HiGucDef wma_gucs[] = {
	{"hybrid_index.epoch_size",
		"Node reads per epoch of the HyR-tree placement (wma, random).",
		"The paper uses 250000; per index override: reloption epoch_size.",
		HI_GUC_INT, &wma_epoch_size_guc, 250000, 1, INT_MAX, NULL, PGC_SUSET, 0},
	{"hybrid_index.wma_epochs",
		"Epochs t in the weighted moving average of leaf reads (Eq. 2).",
		NULL,
		HI_GUC_INT, &wma_epochs_guc, 5, 1, HI_WMA_MAX_EPOCHS, NULL, PGC_SUSET, 0},
	{"hybrid_index.wma_threshold",
		"Percentile N of leaf scores above which leaves move to the fast tier.",
		"The paper uses 95 to 99.",
		HI_GUC_REAL, &wma_threshold_guc, 95.0, 1.0, 100.0, NULL, PGC_SUSET, 0},
	{"hybrid_index.score_table_entries",
		"Capacity of the shared Node Score Table (leaves tracked at once, all indexes).",
		NULL,
		HI_GUC_INT, &hi_wma_score_table_entries, 262144, 1024, 64 * 1024 * 1024, NULL, PGC_POSTMASTER, 0},
};

/* Called once from _PG_init: the settings and the per-index state */
void
hi_wma_init(void)
{
	hi_define_guc_table(wma_gucs, lengthof(wma_gucs));
	hi_register_slot_hooks(&wma_slot_hooks);
}

/*
 * An R-tree kind's placement modes: none, upper, wma and random, with the
 * parameters of its indexes from params (NULL: the settings).
 */
void
hi_wma_register(HiAmKind kind, hi_wma_params_fn params)
{
	if ((int) kind < 0 || (int) kind >= (int) lengthof(params_of))
		elog(ERROR, "invalid hybrid_index access method kind %d", (int) kind);
	registered[kind] = true;
	params_of[kind] = params;
	hi_place_register(kind, HI_PLACEMENT_NONE, &policy_none);
	hi_place_register(kind, HI_PLACEMENT_UPPER, &policy_upper);
	hi_place_register(kind, HI_PLACEMENT_WMA, &policy_wma);
	hi_place_register(kind, HI_PLACEMENT_RANDOM, &policy_random);
}
