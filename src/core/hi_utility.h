/*
 * hi_utility.h
 *	  Utility commands that would move our indexes between tablespaces
 *	  (hi_utility.c), called around ProcessUtility.
 */
#ifndef HI_UTILITY_H
#define HI_UTILITY_H

#include "nodes/pg_list.h"

/* refuse what would break an index; the indexes to rebuild afterwards */
extern List *hi_utility_before(Node *stmt);
extern void hi_utility_after(List *rebuild);

#endif							/* HI_UTILITY_H */
