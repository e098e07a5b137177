/*
 * geom_knn.c
 *	  The entries a best-first kNN search has returned (see geom_box.h).
 */
#include "postgres.h"

#include "geom/geom_box.h"

/* An empty set, its TID array in the current memory context */
void
hi_knn_seen_init(HiKnnSeen *seen)
{
	seen->have_last = false;
	seen->last_dist = 0;
	seen->nat_last = 0;
	seen->maxat_last = 16;
	seen->at_last = palloc(sizeof(ItemPointerData) * seen->maxat_last);
}

/* Whether the entry (dist, tid) has been returned already */
bool
hi_knn_seen(const HiKnnSeen *seen, double dist, ItemPointer tid)
{
	int			i;

	if (!seen->have_last || dist > seen->last_dist)
		return false;
	if (dist < seen->last_dist)
		return true;
	for (i = 0; i < seen->nat_last; i++)
		if (ItemPointerEquals(&seen->at_last[i], tid))
			return true;
	return false;
}

/* The entry (dist, tid) is returned; dist is at least the last one's */
void
hi_knn_seen_add(HiKnnSeen *seen, double dist, ItemPointer tid)
{
	if (!seen->have_last || dist > seen->last_dist)
	{
		seen->have_last = true;
		seen->last_dist = dist;
		seen->nat_last = 0;
	}
	if (seen->nat_last == seen->maxat_last)
	{
		seen->maxat_last *= 2;
		seen->at_last = repalloc(seen->at_last, sizeof(ItemPointerData) * seen->maxat_last);
	}
	seen->at_last[seen->nat_last++] = *tid;
}
