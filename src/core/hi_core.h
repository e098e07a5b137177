/*
 * hi_core.h
 *	  Index handles and the registry of access methods (core/): open or
 *	  create an index's shared state, checkpoint it, read its options, and
 *	  forget a relfilenode everywhere it is kept.
 */
#ifndef HI_CORE_H
#define HI_CORE_H

#include "base/hi_base.h"
#include "log/redo_log.h"

/* One page of an index as hybrid_index_pages() shows it */
typedef struct HiPageInfo
{
	uint32		pageno;
	int			level;
	int			tier;			/* -1: not written yet */
	int			nentries;
	HiBox		box;
} HiPageInfo;

/*
 * What the SQL-level functions need of an access method (am/hi_am.c).
 * Every AM registers one of these from _PG_init.
 */
typedef struct HiAmOps
{
	const char *name;			/* pg_am.amname */
	HiAmKind	kind;
	uint32		default_placement;	/* mode when the index has no reloptions */
	const HiPageSource *source; /* where its structure gets its pages */
	hi_log_apply_fn redo;		/* replay of one redo log record */
	void		(*check) (HiIndex *idx);	/* ERROR on the first violation */
	char	   *(*inspect_json) (HiIndex *idx);
	HiPageInfo *(*pages) (HiIndex *idx, Size *n);
	/* optional: forget per-index state of a dropped/rebuilt relfilenode */
	void		(*discard) (int slotno, uint32 generation);
	/* optional: zero the AM's own counters (hybrid_index_reset_stats) */
	void		(*reset_stats) (HiIndex *idx);

	/*
	 * optional: what is wrong with the layout of a page read from storage
	 * (NULL: nothing).  Runs after the checksum matched, so that a page a
	 * bug wrote (its checksum is right) is reported, not decoded past its
	 * end.  Only the header fields the readers trust are checked: cheap.
	 */
	const char *(*page_layout) (const char *page, uint32 page_size);
} HiAmOps;

extern void hi_register_am(const HiAmOps *ops);
extern const HiAmOps *hi_am_ops(Oid amoid);
extern const HiAmOps *hi_am_ops_by_kind(HiAmKind kind);
extern bool hi_is_our_am(Oid amoid);
extern HiIndex *hi_am_open(Relation index);
extern HiIndex *hi_am_create(Relation index);
extern bool hi_is_our_index(Oid relid);
extern bool hi_is_our_index_of_kind(Oid relid, char kind);

/*
 * Per-index state kept above core (placement policies) is configured when
 * an index's shared slot is loaded or created and forgotten with its
 * relfilenode; the layer registers these from _PG_init.
 */
typedef struct HiSlotHooks
{
	void		(*configure) (HiIndexShared *sh, Relation index);
	void		(*forget) (int slotno, uint32 generation);
} HiSlotHooks;

extern void hi_register_slot_hooks(const HiSlotHooks *hooks);
extern void hi_slot_configure(HiIndexShared *sh, Relation index);
extern void hi_slot_forget(int slotno, uint32 generation);

typedef struct HiIndexOptions
{
	int32		vl_len_;
	int			page_size;
	int			placement;
	int			buffer_size;	/* kB, 0 = share the whole cache */
	int			optane_tablespace;	/* offset of the name, 0 = none */
} HiIndexOptions;

extern HiIndex *hi_index_open_for(Relation index, hi_log_apply_fn apply,
								  const HiPageSource *pages);
extern HiIndex *hi_index_create(Relation index, HiAmKind am, const HiPageSource *pages);
extern Oid	hi_index_optane_spc(Relation index, bool creating);
extern bool hi_index_checkpoint_detached(HiIndexShared *sh);

/* core/hi_slots.c: the registry, a cache of slots pinned by transactions */
extern HiIndexShared *hi_slot_claim(Relation index);
extern HiIndexShared *hi_slot_lookup(Oid dboid, Oid relnumber);
extern uint32 hi_index_format(Relation index);
extern void hi_slot_reset_state(HiIndexShared *sh);
extern void hi_slot_pin(HiIndexShared *sh);
extern bool hi_slot_pin_current(HiIndexShared *sh, uint32 generation);
extern void hi_slots_unpin_all(void);
extern void hi_slot_release(Oid dboid, Oid relnumber);
extern void hi_lock_for_read(HiIndex *idx);
extern void hi_lock_for_change(HiIndex *idx);
extern void hi_lock_loaded(HiIndex *idx, LWLockMode mode);
extern void hi_change_failed(HiIndex *idx);
extern bool hi_replaying;

/*
 * A multi-step change has modified the loaded state (tree_lock held
 * exclusively): if an error cuts it short, hi_change_failed forgets the
 * half-done state.
 */
static inline void
hi_change_touched(HiIndexShared *sh)
{
	sh->changing = 1;
}

/* core/hi_logged_insert.c: a batch's entries, their log records written ahead */
typedef void (*hi_apply_item_fn) (void *arg, const HiKeyItem *item);
extern void hi_insert_logged(HiIndex *idx, TransactionId xid, const HiKeyItem *items,
							 int n, hi_apply_item_fn apply, void *arg);
extern void hi_copy_exclusive(Oid dboid, Oid relnumber, hi_copy_fn fn, void *arg);
extern void hi_index_checkpoint(HiIndex *idx);
extern void hi_index_checkpoint_built(HiIndex *idx, bool defer_sync);
extern void hi_index_built_sync(HiIndex *idx, XLogRecPtr image_start);
extern void hi_stats_reset(HiIndexShared *sh);
extern void hi_index_after_change(HiIndex *idx);
extern HiIndexOptions *hi_index_options(Relation index);
extern void hi_validate_tablespace_name(const char *value);

/*
 * VACUUM's restartable walk over an index's units (core/hi_vacuum_pass.c):
 * collect lists them (tree_lock held, shared or exclusive) and returns how
 * many; visit handles units [start, end) under tree_lock held exclusively;
 * end_pass (optional) frees what collect made.
 */
typedef struct HiVacuumPass
{
	Size		(*collect) (HiIndex *idx, void *arg);
	void		(*visit) (HiIndex *idx, void *arg, Size start, Size end);
	void		(*end_pass) (HiIndex *idx, void *arg);
} HiVacuumPass;

extern void hi_vacuum_pass(HiIndex *idx, Size chunk, const HiVacuumPass *pass,
						   void *arg);
extern void hi_error_if_recovery(Relation index);
extern void hi_index_follow(HiIndex *idx, hi_log_apply_fn apply);
extern void hi_index_unload(HiIndexShared *sh);
extern int	hi_index_checkpoint_all(void);

/* ---- core/hi_acl.c ----
 * Privilege checks of the SQL-callable functions of hybrid_index.
 */
/*
 * The role may read the rows the index points to: SELECT on the index's
 * table (for a partitioned index, its partitioned table), or
 * pg_read_all_data, or superuser.  ERROR 42501 naming the table otherwise.
 */
extern void hi_acl_check_read(Oid indexoid);

/* The role owns the index (or is superuser); ERROR 42501 otherwise */
extern void hi_acl_check_owner(Oid indexoid);

#endif							/* HI_CORE_H */
