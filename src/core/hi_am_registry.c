/*
 * hi_am_registry.c
 *	  Registry of the access methods built on hybrid_index, so that the
 *	  SQL-level functions (stats, inspect, check, pages) and the utility
 *	  hooks work for every one of them without knowing them by name, and
 *	  so that a forgotten relfilenode is forgotten by every layer above
 *	  core (hi_slot_forget).
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_class.h"
#include "commands/defrem.h"
#include "utils/syscache.h"

#include "base/hi_base.h"
#include "core/hi_core.h"
#include "cache/page_cache.h"

#define HI_MAX_AMS 8

#define HI_MAX_SLOT_HOOKS 8

static const HiAmOps *ams[HI_MAX_AMS];
static int	nams = 0;
static const HiSlotHooks *slot_hooks[HI_MAX_SLOT_HOOKS];
static int	nhooks = 0;

void
hi_register_am(const HiAmOps *ops)
{
	if (nams >= HI_MAX_AMS)
		elog(ERROR, "too many hybrid_index access methods");
	ams[nams++] = ops;
}

/* The operations of an access method, or NULL if it is not one of ours */
const HiAmOps *
hi_am_ops(Oid amoid)
{
	char	   *name;
	const HiAmOps *found = NULL;
	int			i;

	if (!OidIsValid(amoid))
		return NULL;
	name = get_am_name(amoid);
	if (name == NULL)
		return NULL;
	for (i = 0; i < nams; i++)
		if (strcmp(ams[i]->name, name) == 0)
			found = ams[i];
	pfree(name);
	return found;
}

bool
hi_is_our_am(Oid amoid)
{
	return hi_am_ops(amoid) != NULL;
}

/* Our index (a plain index with one of our access methods)? */
bool
hi_is_our_index(Oid relid)
{
	return hi_is_our_index_of_kind(relid, RELKIND_INDEX);
}

/* Our index of relkind kind (RELKIND_INDEX or RELKIND_PARTITIONED_INDEX)? */
bool
hi_is_our_index_of_kind(Oid relid, char kind)
{
	HeapTuple	tp = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	bool		ours = false;

	if (HeapTupleIsValid(tp))
	{
		Form_pg_class form = (Form_pg_class) GETSTRUCT(tp);

		ours = form->relkind == kind && hi_is_our_am(form->relam);
		ReleaseSysCache(tp);
	}
	return ours;
}

const HiAmOps *
hi_am_ops_by_kind(HiAmKind kind)
{
	int			i;

	for (i = 0; i < nams; i++)
		if (ams[i]->kind == kind)
			return ams[i];
	return NULL;
}

static const HiAmOps *
ops_of(Relation index)
{
	const HiAmOps *ops = hi_am_ops(index->rd_rel->relam);

	if (ops == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a hybrid_index index",
						RelationGetRelationName(index))));
	return ops;
}

/* Open an index of any of our access methods, recovering it if needed */
HiIndex *
hi_am_open(Relation index)
{
	const HiAmOps *ops = ops_of(index);

	return hi_index_open_for(index, ops->redo, ops->source);
}

/* A fresh, empty index of its access method, for ambuild */
HiIndex *
hi_am_create(Relation index)
{
	const HiAmOps *ops = ops_of(index);

	return hi_index_create(index, ops->kind, ops->source);
}

/* Called from _PG_init by a layer above core that keeps per-index state */
void
hi_register_slot_hooks(const HiSlotHooks *hooks)
{
	if (nhooks >= HI_MAX_SLOT_HOOKS)
		elog(ERROR, "too many hybrid_index slot hooks");
	slot_hooks[nhooks++] = hooks;
}

/* An index's shared slot was loaded or created: configure per-index state */
void
hi_slot_configure(HiIndexShared *sh, Relation index)
{
	int			i;

	for (i = 0; i < nhooks; i++)
		if (slot_hooks[i]->configure)
			slot_hooks[i]->configure(sh, index);
}

/*
 * A relfilenode is gone (dropped, rebuilt, or a failed load): its cached
 * pages, the policies' state and every AM's state of it are forgotten.
 */
void
hi_slot_forget(int slotno, uint32 generation)
{
	int			i;

	hi_cache_discard_index(slotno, generation);
	for (i = 0; i < nhooks; i++)
		if (slot_hooks[i]->forget)
			slot_hooks[i]->forget(slotno, generation);
	for (i = 0; i < nams; i++)
		if (ams[i]->discard)
			ams[i]->discard(slotno, generation);
}
