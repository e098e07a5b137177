/*
 * efind_modtree.c
 *	  The mod_tree of a Write Buffer Table entry (section 4.2): a red-black
 *	  tree keyed by the entry identifier (a child's page id in an internal
 *	  page, a heap TID in a leaf) whose element holds the most recent
 *	  version of that entry, or records its removal.  Only the latest
 *	  version of an entry is ever kept: a second modification of the same
 *	  entry overwrites the node in place, so the buffer holds no list of
 *	  repeated elements (the problem eFIND solves over FAST, section 7.3).
 *
 * The tree is Sedgewick's left-leaning variant of the red-black tree
 * (insertion only: a removed entry stays as a node marked EF_OP_DEL, which
 * is what the merge of Alg. 2 needs).  Nodes live in one array in the DSA
 * area and link by index, so the array can grow by copying.
 */
#include "postgres.h"

#include "efind/efind.h"

#define MT_MAX_DEPTH 128

static inline bool
is_red(const EfMod *n, uint32 i)
{
	return i != EF_NIL && n[i].red;
}

static uint32
rotate_left(EfMod *n, uint32 h)
{
	uint32		x = n[h].right;

	n[h].right = n[x].left;
	n[x].left = h;
	n[x].red = n[h].red;
	n[h].red = 1;
	return x;
}

static uint32
rotate_right(EfMod *n, uint32 h)
{
	uint32		x = n[h].left;

	n[h].left = n[x].right;
	n[x].right = h;
	n[x].red = n[h].red;
	n[h].red = 1;
	return x;
}

static void
flip_colors(EfMod *n, uint32 h)
{
	n[h].red = !n[h].red;
	n[n[h].left].red = !n[n[h].left].red;
	n[n[h].right].red = !n[n[h].right].red;
}

/* Index of the node holding key, or EF_NIL */
uint32
ef_mt_find(const EfMod *nodes, uint32 root, uint64 key)
{
	uint32		i = root;

	while (i != EF_NIL)
	{
		if (key < nodes[i].key)
			i = nodes[i].left;
		else if (key > nodes[i].key)
			i = nodes[i].right;
		else
			return i;
	}
	return EF_NIL;
}

static uint32
insert_rec(EfMod *n, uint32 *nnodes, uint32 h, uint64 key, uint32 *found, int depth)
{
	if (h == EF_NIL)
	{
		uint32		x = (*nnodes)++;

		memset(&n[x], 0, sizeof(EfMod));
		n[x].key = key;
		n[x].left = n[x].right = EF_NIL;
		n[x].red = 1;
		*found = x;
		return x;
	}
	if (depth > MT_MAX_DEPTH)
		elog(ERROR, "efind modification tree is too deep");
	if (key < n[h].key)
		n[h].left = insert_rec(n, nnodes, n[h].left, key, found, depth + 1);
	else if (key > n[h].key)
		n[h].right = insert_rec(n, nnodes, n[h].right, key, found, depth + 1);
	else
	{
		*found = h;
		return h;
	}

	if (is_red(n, n[h].right) && !is_red(n, n[h].left))
		h = rotate_left(n, h);
	if (is_red(n, n[h].left) && is_red(n, n[n[h].left].left))
		h = rotate_right(n, h);
	if (is_red(n, n[h].left) && is_red(n, n[h].right))
		flip_colors(n, h);
	return h;
}

/*
 * Find key, adding a node for it if absent (the caller guarantees room for
 * one more node).  *found receives the node's index; a new node is zeroed
 * apart from its key.  Returns the new root.
 */
uint32
ef_mt_insert(EfMod *nodes, uint32 *nnodes, uint32 root, uint64 key, uint32 *found)
{
	root = insert_rec(nodes, nnodes, root, key, found, 0);
	nodes[root].red = 0;
	return root;
}

/* Node indexes in key order into out (room for every node); returns count */
uint32
ef_mt_inorder(const EfMod *nodes, uint32 root, uint32 *out)
{
	uint32		stack[MT_MAX_DEPTH];
	int			sp = 0;
	uint32		i = root;
	uint32		n = 0;

	while (i != EF_NIL || sp > 0)
	{
		while (i != EF_NIL)
		{
			if (sp >= MT_MAX_DEPTH)
				elog(ERROR, "efind modification tree is too deep");
			stack[sp++] = i;
			i = nodes[i].left;
		}
		i = stack[--sp];
		out[n++] = i;
		i = nodes[i].right;
	}
	return n;
}

/*
 * Verify the red-black invariants (keys ordered, no red right link, no two
 * reds in a row, equal black height) over exactly nnodes nodes.  Returns
 * the black height, or -1 on a violation.
 */
static int
check_rec(const EfMod *n, uint32 h, bool have_lo, uint64 lo, bool have_hi,
		  uint64 hi, uint32 *count, uint32 nnodes, int depth)
{
	int			l,
				r;

	if (h == EF_NIL)
		return 0;
	if (h >= nnodes || depth > MT_MAX_DEPTH || ++(*count) > nnodes)
		return -1;
	if ((have_lo && n[h].key <= lo) || (have_hi && n[h].key >= hi))
		return -1;
	if (is_red(n, n[h].right) || (n[h].red && is_red(n, n[h].left)))
		return -1;
	l = check_rec(n, n[h].left, have_lo, lo, true, n[h].key, count, nnodes, depth + 1);
	r = check_rec(n, n[h].right, true, n[h].key, have_hi, hi, count, nnodes, depth + 1);
	if (l < 0 || r < 0 || l != r)
		return -1;
	return l + (n[h].red ? 0 : 1);
}

int
ef_mt_check(const EfMod *nodes, uint32 root, uint32 nnodes)
{
	uint32		count = 0;
	int			bh;

	if (root != EF_NIL && nodes[root].red)
		return -1;
	bh = check_rec(nodes, root, false, 0, false, 0, &count, nnodes, 0);
	if (bh < 0 || count != nnodes)
		return -1;
	return bh;
}
