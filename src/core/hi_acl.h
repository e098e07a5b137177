/*
 * hi_acl.h
 *	  Privilege checks of the SQL-callable functions of hybrid_index.
 */
#ifndef HI_ACL_H
#define HI_ACL_H

/*
 * The role may read the rows the index points to: SELECT on the index's
 * table (for a partitioned index, its partitioned table), or
 * pg_read_all_data, or superuser.  ERROR 42501 naming the table otherwise.
 */
extern void hi_acl_check_read(Oid indexoid);

/* The role owns the index (or is superuser); ERROR 42501 otherwise */
extern void hi_acl_check_owner(Oid indexoid);

#endif							/* HI_ACL_H */
