/*
 * hi_acl.c
 *	  Privilege checks of the SQL-callable functions of hybrid_index.
 *
 * Functions that read the contents of an index (probes, pages, the
 * invariant check) reveal what its table holds, so they require what
 * reading the table requires: SELECT on it (pg_read_all_data and superusers
 * have it).  Functions that change an index's state (checkpoint, resetting
 * its counters) require owning the index, as maintenance commands do.
 * Counters and structure summaries need nothing, like pg_stat_all_indexes.
 *
 * The checks look at the catalogs only, before the relation is opened and
 * locked, so a role without the privilege cannot even wait for a lock on
 * it.  A relation that is not an index is left to the caller, which refuses
 * it with its own error.
 */
#include "postgres.h"

#include "catalog/index.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_class.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/lsyscache.h"

#include "core/hi_core.h"

/* Is this relation an index (partitioned or not)? */
static bool
is_index(Oid relid)
{
	char		relkind = get_rel_relkind(relid);

	return relkind == RELKIND_INDEX || relkind == RELKIND_PARTITIONED_INDEX;
}

void
hi_acl_check_read(Oid indexoid)
{
	Oid			userid = GetUserId();
	Oid			heapoid;
	AclResult	aclresult;

	if (!is_index(indexoid))
		return;
	/* a partitioned index belongs to the partitioned table: check that */
	heapoid = IndexGetRelation(indexoid, true);
	if (!OidIsValid(heapoid))
		return;					/* dropped meanwhile: opening it will fail */
	if (has_privs_of_role(userid, ROLE_PG_READ_ALL_DATA))
		return;
	aclresult = pg_class_aclcheck(heapoid, userid, ACL_SELECT);
	if (aclresult != ACLCHECK_OK)
	{
		char	   *relname = get_rel_name(heapoid);

		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for table %s",
						relname ? relname : "(dropped)"),
				 errdetail("Reading index \"%s\" requires SELECT on its table.",
						   get_rel_name(indexoid))));
	}
}

void
hi_acl_check_owner(Oid indexoid)
{
	if (!is_index(indexoid))
		return;
	if (!hi_class_ownercheck(indexoid, GetUserId()))
		aclcheck_error(ACLCHECK_NOT_OWNER, OBJECT_INDEX, get_rel_name(indexoid));
}
