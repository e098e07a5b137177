/*
 * hi_planner.h
 *	  The planner hook that lets PostGIS functions use our indexes
 *	  (hi_planner.c).
 */
#ifndef HI_PLANNER_H
#define HI_PLANNER_H

extern bool hi_postgis_functions;

extern void hi_planner_install(void);

#endif							/* HI_PLANNER_H */
