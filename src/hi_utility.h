/*
 * hi_utility.h
 *	  Utility commands that would move our indexes between tablespaces
 *	  (hi_utility.c): the hooks around ProcessUtility and DROP.
 */
#ifndef HI_UTILITY_H
#define HI_UTILITY_H

#include "nodes/pg_list.h"

/* the ProcessUtility and object access hooks, set once from _PG_init */
extern void hi_utility_install(void);

#endif							/* HI_UTILITY_H */
