/*
 * geom_knn.h
 *	  What the best-first kNN searches of both cores (rtree_knn.c,
 *	  grid_knn.c) remember of the entries they returned, so that a search
 *	  restarted after a concurrent split skips them.
 */
#ifndef GEOM_KNN_H
#define GEOM_KNN_H

#include "postgres.h"

#include "storage/itemptr.h"

/*
 * Entries come out in non-decreasing distance: the ones returned are
 * everything nearer than last_dist and the TIDs returned at exactly
 * last_dist.
 */
typedef struct HiKnnSeen
{
	bool		have_last;
	double		last_dist;
	ItemPointerData *at_last;
	int			nat_last;
	int			maxat_last;
} HiKnnSeen;

extern void hi_knn_seen_init(HiKnnSeen *seen);
extern bool hi_knn_seen(const HiKnnSeen *seen, double dist, ItemPointer tid);
extern void hi_knn_seen_add(HiKnnSeen *seen, double dist, ItemPointer tid);

#endif							/* GEOM_KNN_H */
