/*
 * hi_vacuum_pass.c
 *	  VACUUM's walk over the units of an index (R-tree leaves, grid
 *	  buckets) while inserts go on.
 *
 * The units are listed under tree_lock in shared mode, then visited a
 * chunk at a time under tree_lock in exclusive mode, so inserters wait for
 * one chunk at most.  A split between two chunks (split_count moved) may
 * have moved entries to a unit already visited or not listed: the pass
 * starts over.  After three restarts the whole pass runs under the lock,
 * which always ends.  Either way the caller gets tree_lock back exclusively
 * held, to finish (NULL lists, merges) and flush.
 */
#include "postgres.h"

#include "commands/vacuum.h"

#include "core/hi_core.h"

#define HI_VACUUM_MAX_RESTARTS 3

void
hi_vacuum_pass(HiIndex *idx, Size chunk, const HiVacuumPass *pass, void *arg)
{
	HiIndexShared *sh = idx->sh;
	int			restarts = 0;
	bool		hold = false;

	Assert(chunk > 0);
	for (;;)
	{
		uint64		seen;
		Size		n;
		Size		start;
		bool		restart = false;

		hi_lock_loaded(idx, hold ? LW_EXCLUSIVE : LW_SHARED);
		seen = pg_atomic_read_u64(&sh->split_count);
		n = pass->collect(idx, arg);
		if (!hold)
			LWLockRelease(&sh->tree_lock);

		for (start = 0; start < n && !restart; start += chunk)
		{
			if (!hold)
			{
				LWLockAcquire(&sh->tree_lock, LW_EXCLUSIVE);
				sh->changing = 0;
			}
			/* a split, or a change that failed half-way elsewhere */
			if (pg_atomic_read_u64(&sh->split_count) != seen || sh->needs_reload)
			{
				restart = true;
				LWLockRelease(&sh->tree_lock);
				break;
			}
			pass->visit(idx, arg, start, Min(n, start + chunk));
			if (!hold)
				LWLockRelease(&sh->tree_lock);
			hi_vacuum_delay_point();
		}
		if (pass->end_pass)
			pass->end_pass(idx, arg);
		if (!restart)
			break;
		if (++restarts >= HI_VACUUM_MAX_RESTARTS)
			hold = true;
	}
	if (!hold)
		hi_lock_loaded(idx, LW_EXCLUSIVE);
}
