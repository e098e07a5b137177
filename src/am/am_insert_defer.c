/*
 * am_insert_defer.c
 *	  Deferred insertion: the index entries of the rows a session inserts
 *	  wait in its memory and go into their index in batches, before anything
 *	  can need them.
 *
 * Why: an R-tree insertion reads the leaf it changes, so an INSERT of many
 * rows into an index larger than its memory waits for one device read per
 * row.  Given a batch, the core inserts its entries by leaf, reading each
 * leaf once and many per I/O batch (rtree_insert_batch.c): an INSERT of
 * 50,000 rows into an efind index 11x its memory went from 0.39x GiST's
 * rows per second to 2x (bench/results/insert-budget.md).  Every core
 * inserts a batch along a Hilbert curve (base/hi_hilbert_order.c), so
 * that consecutive insertions share their pages, and logs its records a
 * write per many: in memory, efind's 50k-row INSERT took 0.81x GiST's
 * time instead of 1.7x.
 *
 * When the entries go in (am_pending_insert_all):
 *	  - before each statement the session starts (ExecutorStart, utility
 *		commands) and each scan of one of our indexes: its later statements,
 *		the functions they call and the parallel workers they start find
 *		every row an earlier statement inserted.  A statement does not see
 *		its own rows (its command id), except through volatile functions,
 *		whose queries start statements of their own;
 *	  - before the transaction commits or prepares, so that their log
 *		records are made durable with the rest: other sessions see the rows
 *		only from then on;
 *	  - when hybrid_index.insert_batch entries wait.
 *
 * Never deferred: an index of an exclusion constraint (other sessions'
 * checks must find the entry at once), and rows of INSERT ... ON CONFLICT:
 * a speculative insertion that conflicts kills its heap tuple at once, and
 * VACUUM could free the tuple's TID for another row before a deferred entry
 * for it went in.  For that reason too, entries of an aborted
 * subtransaction are dropped with it.
 *
 * If inserting a batch fails, entries of rows that stay alive may be lost;
 * the transaction then cannot commit (an error at COMMIT says why) rather
 * than leave rows no scan finds.
 */
#include "postgres.h"

#include "access/relation.h"
#include "access/xact.h"
#include "catalog/pg_class.h"
#include "nodes/plannodes.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "am/am_common.h"
#include "core/hi_core.h"

typedef struct PendingTarget
{
	Oid			indexoid;
	Oid			relnode;		/* the files the rows went to */
	am_insert_batch_fn insert;
} PendingTarget;

typedef struct PendingEntry
{
	HiKeyItem	item;
	int			target;
	SubTransactionId subid;
	char	   *row;			/* its INCLUDE values (in rows_cxt), or NULL */
	Size		rowlen;
} PendingEntry;

/* the waiting entries' INCLUDE rows: emptied with the batch */
static MemoryContext rows_cxt = NULL;

static PendingEntry *pending = NULL;
static int	npending = 0;
static int	maxpending = 0;
static PendingTarget *targets = NULL;
static int	ntargets = 0;
static int	maxtargets = 0;
static bool draining = false;

/* executors running INSERT ... ON CONFLICT: insert at once meanwhile */
static int	on_conflict_running = 0;

/* the index whose batch is going in, and one whose batch was lost */
static char current_index[NAMEDATALEN];
static char failed_index[NAMEDATALEN];

static void *
grow(void *arr, int *max, Size elem)
{
	int			newmax = Max(16, *max * 2);

	arr = arr == NULL ?
		MemoryContextAlloc(TopMemoryContext, elem * newmax) :
		repalloc(arr, elem * newmax);
	*max = newmax;
	return arr;
}

static int
target_of(Relation index, am_insert_batch_fn insert)
{
	Oid			oid = RelationGetRelid(index);
	Oid			relnode = HI_REL_NUMBER(index);
	int			t;

	for (t = 0; t < ntargets; t++)
		if (targets[t].indexoid == oid && targets[t].relnode == relnode)
			return t;
	if (ntargets == maxtargets)
		targets = grow(targets, &maxtargets, sizeof(PendingTarget));
	targets[ntargets].indexoid = oid;
	targets[ntargets].relnode = relnode;
	targets[ntargets].insert = insert;
	return ntargets++;
}

/* the INCLUDE rows of target t's n waiting entries, before the entries */
static void
insert_rows(Relation rel, int t, int n)
{
	HiKeyItem  *items = palloc(sizeof(HiKeyItem) * n);
	const char **rows = palloc(sizeof(char *) * n);
	Size	   *lens = palloc(sizeof(Size) * n);
	int			k = 0;
	int			i;

	for (i = 0; i < npending; i++)
		if (pending[i].target == t && pending[i].row != NULL)
		{
			items[k] = pending[i].item;
			rows[k] = pending[i].row;
			lens[k] = pending[i].rowlen;
			k++;
		}
	if (k > 0)
		am_include_insert_rows(hi_am_open(rel), GetTopTransactionId(), items,
							   (const char *const *) rows, lens, k);
	pfree(items);
	pfree(rows);
	pfree(lens);
}

/* Insert the waiting entries of target t into its index, in their order */
static void
insert_target(int t)
{
	PendingTarget *tg = &targets[t];
	Relation	rel;
	HiKeyItem  *items;
	int			n = 0;
	int			i;

	/*
	 * Dropped, or rebuilt or truncated after the rows went in (each of
	 * which runs a utility command, before which the entries went in; a
	 * rebuild reads them from the heap again): nothing is left to do.
	 */
	rel = try_relation_open(tg->indexoid, RowExclusiveLock);
	if (rel == NULL)
		return;
	if (rel->rd_rel->relkind != RELKIND_INDEX || HI_REL_NUMBER(rel) != tg->relnode)
	{
		relation_close(rel, NoLock);
		return;
	}
	strlcpy(current_index, RelationGetRelationName(rel), NAMEDATALEN);
	items = palloc(sizeof(HiKeyItem) * npending);
	for (i = 0; i < npending; i++)
		if (pending[i].target == t)
			items[n++] = pending[i].item;
	if (n > 0)
	{
		insert_rows(rel, t, n);
		tg->insert(hi_am_open(rel), items, n, GetTopTransactionId());
		elog(DEBUG1, "index \"%s\": %d entries inserted as one batch",
			 RelationGetRelationName(rel), n);
	}
	pfree(items);
	relation_close(rel, NoLock);
}

/* Insert every waiting entry into its index */
void
am_pending_insert_all(void)
{
	int			t;

	if (npending == 0 || draining)
		return;
	draining = true;
	strlcpy(current_index, "?", NAMEDATALEN);
	PG_TRY();
	{
		for (t = 0; t < ntargets; t++)
			insert_target(t);
	}
	PG_CATCH();
	{
		SubTransactionId cur = GetCurrentSubTransactionId();
		int			i;

		/*
		 * Which entries went in is unknown now.  Those of the current
		 * subtransaction and its children die with it (any error that is
		 * caught aborts it); rows of an enclosing one may stay alive.
		 */
		for (i = 0; i < npending; i++)
			if (pending[i].subid < cur)
				strlcpy(failed_index, current_index, NAMEDATALEN);
		npending = 0;
		ntargets = 0;
		draining = false;
		PG_RE_THROW();
	}
	PG_END_TRY();
	npending = 0;
	ntargets = 0;
	draining = false;
	if (rows_cxt)
		MemoryContextReset(rows_cxt);
}

/*
 * aminsert: keep the entry for a batch, or insert it at once where waiting
 * is not allowed.  An index that refuses changes says so here either way.
 */
void
am_insert_deferred(Relation index, const HiKeyItem *item, const char *row,
				   Size rowlen, am_insert_batch_fn insert)
{
	HiIndex    *idx = hi_am_open(index);

	if (hi_insert_batch <= 0 || on_conflict_running > 0 ||
		index->rd_index->indisexclusion || draining)
	{
		if (row != NULL)
			am_include_insert_rows(idx, GetTopTransactionId(), item, &row,
								   &rowlen, 1);
		insert(idx, item, 1, GetTopTransactionId());
		return;
	}
	if (npending >= hi_insert_batch)
		am_pending_insert_all();
	if (npending == maxpending)
		pending = grow(pending, &maxpending, sizeof(PendingEntry));
	pending[npending].item = *item;
	pending[npending].row = NULL;
	pending[npending].rowlen = rowlen;
	if (row != NULL)
	{
		if (rows_cxt == NULL)
			rows_cxt = AllocSetContextCreate(TopMemoryContext,
											 "hybrid_index pending INCLUDE rows",
											 ALLOCSET_DEFAULT_SIZES);
		pending[npending].row = MemoryContextAlloc(rows_cxt, rowlen);
		memcpy(pending[npending].row, row, rowlen);
	}
	pending[npending].target = target_of(index, insert);
	pending[npending].subid = GetCurrentSubTransactionId();
	npending++;
}

/* Before the transaction commits or prepares */
void
am_pending_at_precommit(void)
{
	am_pending_insert_all();
	if (failed_index[0] != '\0')
		ereport(ERROR,
				(errcode(ERRCODE_TRANSACTION_ROLLBACK),
				 errmsg("cannot commit: rows inserted by this transaction could not be added to index \"%s\"",
						failed_index),
				 errdetail("Inserting them into the index failed earlier in the transaction; committing would leave rows the index does not find."),
				 errhint("Roll back and repeat the transaction.")));
}

/* The transaction ended (committed, prepared or aborted) */
void
am_pending_at_xact_end(void)
{
	/* a large batch's array (up to 2 MB by default) is not kept for good */
	if (maxpending > 4096)
	{
		pfree(pending);
		pending = NULL;
		maxpending = 0;
	}
	npending = 0;
	ntargets = 0;
	draining = false;
	on_conflict_running = 0;
	failed_index[0] = '\0';
	if (rows_cxt)
		MemoryContextReset(rows_cxt);
}

/* A subtransaction aborted: its rows, and those of its children, are dead */
void
am_pending_at_subxact_abort(SubTransactionId subid)
{
	int			i;
	int			n = 0;

	for (i = 0; i < npending; i++)
		if (pending[i].subid < subid)
			pending[n++] = pending[i];
	npending = n;
	draining = false;
}

static bool
is_on_conflict(Plan *plan)
{
	return plan != NULL && IsA(plan, ModifyTable) &&
		((ModifyTable *) plan)->onConflictAction != ONCONFLICT_NONE;
}

/* Does the statement run INSERT ... ON CONFLICT (itself or in a WITH)? */
static bool
runs_on_conflict(PlannedStmt *stmt)
{
	ListCell   *lc;

	if (is_on_conflict(stmt->planTree))
		return true;
	foreach(lc, stmt->subplans)
		if (is_on_conflict((Plan *) lfirst(lc)))
			return true;
	return false;
}

/* ExecutorStart: entries of earlier statements go in first */
void
am_pending_statement_start(PlannedStmt *stmt)
{
	am_pending_insert_all();
	if (runs_on_conflict(stmt))
		on_conflict_running++;
}

/* ExecutorEnd (an error skips it: the count then stays up to xact end) */
void
am_pending_statement_end(PlannedStmt *stmt)
{
	if (on_conflict_running > 0 && runs_on_conflict(stmt))
		on_conflict_running--;
}
