/*
 * placement.c
 *	  The registry of placement policies and the dispatch the page store
 *	  calls: each index is served by the policy its access method kind
 *	  registered for its placement mode (HiMeta.placement); one that
 *	  registered nothing has every page on flash.
 */
#include "postgres.h"

#include "utils/memutils.h"

#include "base/hi_base.h"
#include "policy/placement.h"
#include "storage/storage.h"

#define HI_PLACE_KINDS 8

static const HiPlacementPolicy *policies[HI_PLACE_KINDS][HI_PLACEMENT_MODES];

static int
none_write_tier(HiIndexShared *sh, int slotno, const char *page, uint32 old_pte)
{
	return HI_TIER_FLASH;
}

/* every page on flash: what an index whose kind registered nothing gets */
static const HiPlacementPolicy place_none = {
	.name = "none",
	.write_tier = none_write_tier
};

/* Called from _PG_init: policy serves indexes of kind with this mode */
void
hi_place_register(HiAmKind kind, uint32 mode, const HiPlacementPolicy *policy)
{
	if ((int) kind < 0 || (int) kind >= HI_PLACE_KINDS || mode >= HI_PLACEMENT_MODES)
		elog(ERROR, "invalid placement registration (kind %d, mode %u)", (int) kind, mode);
	policies[kind][mode] = policy;
}

/* The policy of an index: none if its kind registered nothing for its mode */
const HiPlacementPolicy *
hi_place_policy(const HiIndexShared *sh)
{
	uint32		kind = sh->meta.am;
	uint32		mode = sh->meta.placement;

	if (kind < HI_PLACE_KINDS && mode < HI_PLACEMENT_MODES && policies[kind][mode])
		return policies[kind][mode];
	return &place_none;
}

/* ---- what the page store calls (HiStorePolicy) ---- */

static void
place_note_reads(HiIndexShared *sh, int slotno, const uint32 *pagenos,
				 char *const *pages, int n)
{
	const HiPlacementPolicy *p = hi_place_policy(sh);

	if (p->note_reads && n > 0)
		p->note_reads(sh, slotno, pagenos, pages, n);
}

/* The tier the index's policy writes a page to */
int
hi_place_write_tier(HiIndexShared *sh, int slotno, const char *page, uint32 old_pte)
{
	const HiPlacementPolicy *p = hi_place_policy(sh);

	return p->write_tier ? p->write_tier(sh, slotno, page, old_pte) : HI_TIER_FLASH;
}

static bool
place_migrate_clean(HiIndexShared *sh, int slotno, const char *page, uint32 pte)
{
	const HiPlacementPolicy *p = hi_place_policy(sh);

	return p->migrate_clean ? p->migrate_clean(sh, slotno, page, pte) : false;
}

/*
 * The page store's policy for an access method kind: its page layout
 * check, and placement by the index's policy.
 */
void
hi_place_register_kind(HiAmKind kind, const char *(*page_layout) (const char *, uint32))
{
	HiStorePolicy *p = MemoryContextAllocZero(TopMemoryContext, sizeof(HiStorePolicy));

	p->page_layout = page_layout;
	p->note_reads = place_note_reads;
	p->write_tier = hi_place_write_tier;
	p->migrate_clean = place_migrate_clean;
	hi_store_register(kind, p);
}

/* The policy's state for hybrid_index_inspect (JSON null if it keeps none) */
char *
hi_place_json(HiIndexShared *sh)
{
	const HiPlacementPolicy *p = hi_place_policy(sh);

	return p->json ? p->json(sh) : pstrdup("null");
}
