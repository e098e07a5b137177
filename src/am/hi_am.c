/*
 * hi_am.c
 *	  Registry of the access methods built on hybrid_index, so that the
 *	  SQL-level functions (stats, inspect, check, pages) and the DROP hook
 *	  work for every one of them without knowing them by name.
 */
#include "postgres.h"

#include "commands/defrem.h"

#include "hybrid_index.h"

#define HI_MAX_AMS 8

static const HiAmOps *ams[HI_MAX_AMS];
static int	nams = 0;

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

/* A relfilenode is gone: every AM forgets its per-index state */
void
hi_am_discard_all(int slotno, uint32 generation)
{
	int			i;

	for (i = 0; i < nams; i++)
		if (ams[i]->discard)
			ams[i]->discard(slotno, generation);
}
