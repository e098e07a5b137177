/*
 * placement.h
 *	  Page placement between the tiers (policy/hyrtree_placement.c): none/upper,
 *	  HyR-tree's weighted moving average, rHyR-tree's random control, and
 *	  the dispatch to an access method's own policy (H-Grid's hot regions).
 */
#ifndef HI_PLACEMENT_H
#define HI_PLACEMENT_H

#include "base/hi_base.h"
#include "utils/rel.h"

extern void hi_place_init(void);
extern void hi_place_register_kind(HiAmKind kind,
								  const char *(*page_layout) (const char *, uint32));
extern Size hi_place_shmem_size(void);
extern void hi_place_shmem_init(void);
extern void hi_place_configure(HiIndexShared *sh, Relation index);
extern void hi_place_note_reads(HiIndexShared *sh, int slotno, const uint32 *pagenos,
								char *const *pages, int n);
extern int	hi_place_write_tier(HiIndexShared *sh, int slotno, const char *page,
								uint32 old_pte);
extern bool hi_place_migrate_clean(HiIndexShared *sh, int slotno, const char *page,
								   uint32 pte);
extern void hi_place_forget(int slotno, uint32 generation);
extern double hi_place_score(HiIndexShared *sh, int slotno, uint32 pageno);
extern char *hi_place_json(HiIndexShared *sh);

#endif							/* HI_PLACEMENT_H */
