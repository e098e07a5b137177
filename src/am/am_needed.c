/*
 * am_needed.c
 *	  Which columns an index-only scan reads.  The executor does not tell
 *	  an index AM, and creates the scan descriptor only when the scan first
 *	  runs; so at ExecutorStart we walk the plan for index-only scans of our
 *	  indexes and note, per index, the index columns their target lists and
 *	  quals use (INDEX_VAR Vars).  A column no one reads is not rebuilt
 *	  (the point) nor looked up (the INCLUDE values): SELECT count(*) ...
 *	  WHERE geom && box reads the search's answer alone.
 *
 * Conservative by construction: the masks of every index-only scan of an
 * index in the running statements (nested ones too) are ORed, kept until
 * the outermost executor ends (or the transaction does), and an index with
 * no mask gets every column.
 */
#include "postgres.h"

#include "nodes/nodeFuncs.h"
#include "nodes/execnodes.h"
#include "nodes/plannodes.h"
#include "parser/parsetree.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "am/am_common.h"
#include "core/hi_core.h"

typedef struct Needed
{
	Oid			indexoid;
	uint64		mask;
} Needed;

static Needed *needed = NULL;
static int	nneeded = 0;
static int	maxneeded = 0;
static int	depth = 0;

static bool
collect_vars(Node *node, uint64 *mask)
{
	if (node == NULL)
		return false;
	if (IsA(node, Var))
	{
		Var		   *v = (Var *) node;

		if (v->varno == INDEX_VAR)
		{
			if (v->varattno <= 0 || v->varattno > 64)
				*mask = ~UINT64CONST(0);
			else
				*mask |= UINT64CONST(1) << (v->varattno - 1);
		}
		return false;
	}
	return expression_tree_walker(node, collect_vars, (void *) mask);
}

static void
note(Oid indexoid, uint64 mask)
{
	int			i;

	for (i = 0; i < nneeded; i++)
		if (needed[i].indexoid == indexoid)
		{
			needed[i].mask |= mask;
			return;
		}
	if (nneeded == maxneeded)
	{
		maxneeded = Max(8, maxneeded * 2);
		needed = needed == NULL ?
			MemoryContextAlloc(TopMemoryContext, sizeof(Needed) * maxneeded) :
			repalloc(needed, sizeof(Needed) * maxneeded);
	}
	needed[nneeded].indexoid = indexoid;
	needed[nneeded].mask = mask;
	nneeded++;
}

/* does an expression use any column of its node's input? */
static bool
uses_input(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, Var))
		return true;
	return expression_tree_walker(node, uses_input, context);
}

/*
 * The planner gives an index-only scan the index's whole column list as
 * its target list when its parent projects anyway (a physical tlist), so
 * its own target list says nothing.  One such parent is understood: an
 * aggregate without grouping whose target list and qual use no input
 * column (count(*)): it reads none of the scan's columns.
 */
static bool
parent_reads_nothing(PlanState *parent)
{
	Agg		   *agg;

	if (parent == NULL || !IsA(parent->plan, Agg))
		return false;
	agg = (Agg *) parent->plan;
	return agg->numCols == 0 && agg->groupingSets == NIL &&
		!uses_input((Node *) agg->plan.targetlist, NULL) &&
		!uses_input((Node *) agg->plan.qual, NULL);
}

/* context: the parent PlanState */
static bool
note_scan(PlanState *ps, void *context)
{
	if (ps == NULL)
		return false;
	if (IsA(ps, IndexOnlyScanState))
	{
		IndexOnlyScan *plan = (IndexOnlyScan *) ps->plan;
		Relation	index = ((IndexOnlyScanState *) ps)->ioss_RelationDesc;
		uint64		mask = 0;

		if (index != NULL && hi_is_our_am(index->rd_rel->relam))
		{
			if (!parent_reads_nothing((PlanState *) context))
				(void) collect_vars((Node *) plan->scan.plan.targetlist, &mask);
			(void) collect_vars((Node *) plan->scan.plan.qual, &mask);
			(void) collect_vars((Node *) plan->recheckqual, &mask);
			note(plan->indexid, mask);
		}
	}
	return planstate_tree_walker(ps, note_scan, ps);
}

/* After ExecutorStart: the columns of this statement's index-only scans */
void
am_needed_start(PlanState *root)
{
	depth++;
	if (root != NULL)
		(void) note_scan(root, NULL);
}

/* ExecutorEnd; the outermost one forgets the masks */
void
am_needed_end(void)
{
	if (depth > 0)
		depth--;
	if (depth == 0)
		nneeded = 0;
}

/* the transaction ended (an error may have skipped ExecutorEnd) */
void
am_needed_reset(void)
{
	depth = 0;
	nneeded = 0;
}

/* *mask: the index's columns read by the running statements' scans */
bool
am_needed_columns(Oid indexoid, uint64 *mask)
{
	int			i;

	for (i = 0; i < nneeded; i++)
		if (needed[i].indexoid == indexoid)
		{
			*mask = needed[i].mask;
			return true;
		}
	return false;
}
