/*
 * hi_logged_insert.c
 *	  The insertion of a batch's entries by a core, its redo-log records
 *	  written ahead, a write per HI_LOG_WRITE_MAX of them (a write call per
 *	  row was a sixth of an insertion's time).
 *
 * Until the last entry of a write is in, the loaded index is behind its
 * log: if applying one fails, the index is loaded again from its files and
 * log (hi_change_failed), which counts the entries of running transactions,
 * so the index never lacks an entry its log has (its VACUUM would not
 * delete that entry, a replay would bring it back).  A failed write leaves
 * nothing logged and nothing applied.
 */
#include "postgres.h"

#include "core/hi_core.h"

/*
 * Log and apply the n entries, in their order, each with apply(arg, item).
 * The caller holds tree_lock exclusively.
 */
void
hi_insert_logged(HiIndex *idx, TransactionId xid, const HiKeyItem *items, int n,
				 hi_apply_item_fn apply, void *arg)
{
	int			done;

	for (done = 0; done < n; done += HI_LOG_WRITE_MAX)
	{
		int			m = Min(n - done, HI_LOG_WRITE_MAX);

		hi_log_append_inserts(idx, xid, items + done, m);
		hi_change_touched(idx->sh);
		PG_TRY();
		{
			int			j;

			for (j = 0; j < m; j++)
				apply(arg, &items[done + j]);
		}
		PG_CATCH();
		{
			hi_change_failed(idx);
			PG_RE_THROW();
		}
		PG_END_TRY();
		idx->sh->changing = 0;
	}
}
