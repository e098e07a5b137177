/*
 * rtree_split.c
 *	  Guttman's quadratic split (Guttman 1984, section 3.5.2).
 *
 * Works on boxes only, so leaf and internal pages share it.  The caller
 * keeps the entries marked false in the old page and moves the ones
 * marked true to the new page.
 *
 * The algorithm is Guttman's: PickSeeds takes the pair wasting the most
 * area, PickNext repeatedly assigns the entry with the strongest
 * preference.  Pages hold hundreds of entries, so the constant factor
 * matters: boxes are widened to double once, areas are precomputed, and an
 * entry's enlargement for a group is recomputed only when that group's
 * box actually grew.
 */
#include "postgres.h"

#include <math.h>

#include "rtree/rtree.h"

typedef struct DBox
{
	double		xmin,
				ymin,
				xmax,
				ymax;
} DBox;

static inline double
dbox_area(const DBox *b)
{
	return (b->xmax - b->xmin) * (b->ymax - b->ymin);
}

static inline double
dbox_union_area(const DBox *a, const DBox *b)
{
	return (Max(a->xmax, b->xmax) - Min(a->xmin, b->xmin)) *
		(Max(a->ymax, b->ymax) - Min(a->ymin, b->ymin));
}

static inline bool
dbox_grow(DBox *a, const DBox *b)
{
	bool		grew = false;

	if (b->xmin < a->xmin)
		a->xmin = b->xmin, grew = true;
	if (b->ymin < a->ymin)
		a->ymin = b->ymin, grew = true;
	if (b->xmax > a->xmax)
		a->xmax = b->xmax, grew = true;
	if (b->ymax > a->ymax)
		a->ymax = b->ymax, grew = true;
	return grew;
}

/*
 * Split n boxes into two groups of at least min_fill each.
 */
void
rt_quadratic_split(const HiBox *boxes, int n, int min_fill, bool *right)
{
	DBox	   *b = palloc(sizeof(DBox) * n);
	double	   *area = palloc(sizeof(double) * n);
	double	   *enl[2];
	int		   *todo = palloc(sizeof(int) * n);
	int			ntodo = 0;
	DBox		g[2];
	double		garea[2];
	int			count[2] = {1, 1};
	int			seed1 = 0,
				seed2 = 1;
	double		worst = -1;
	int			i,
				j;

	Assert(n >= 2);
	enl[0] = palloc(sizeof(double) * n);
	enl[1] = palloc(sizeof(double) * n);
	for (i = 0; i < n; i++)
	{
		b[i].xmin = boxes[i].xmin;
		b[i].ymin = boxes[i].ymin;
		b[i].xmax = boxes[i].xmax;
		b[i].ymax = boxes[i].ymax;
		area[i] = dbox_area(&b[i]);
	}

	/* PickSeeds: the pair that would waste the most area together */
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
		{
			double		d = dbox_union_area(&b[i], &b[j]) - area[i] - area[j];

			if (d > worst)
			{
				worst = d;
				seed1 = i;
				seed2 = j;
			}
		}
	g[0] = b[seed1];
	g[1] = b[seed2];
	garea[0] = area[seed1];
	garea[1] = area[seed2];
	right[seed1] = false;
	right[seed2] = true;
	for (i = 0; i < n; i++)
	{
		if (i == seed1 || i == seed2)
			continue;
		todo[ntodo++] = i;
		enl[0][i] = dbox_union_area(&g[0], &b[i]) - garea[0];
		enl[1][i] = dbox_union_area(&g[1], &b[i]) - garea[1];
	}

	while (ntodo > 0)
	{
		int			best = 0;
		double		best_diff = -1;
		int			e;
		int			to;

		/* a group that needs every remaining entry to reach m gets them */
		if (count[0] + ntodo <= min_fill || count[1] + ntodo <= min_fill)
		{
			bool		grp = (count[0] + ntodo <= min_fill) ? false : true;

			for (i = 0; i < ntodo; i++)
				right[todo[i]] = grp;
			break;
		}

		/* PickNext: the entry with the strongest preference for a group */
		for (i = 0; i < ntodo; i++)
		{
			double		diff = fabs(enl[0][todo[i]] - enl[1][todo[i]]);

			if (diff > best_diff)
			{
				best_diff = diff;
				best = i;
			}
		}
		e = todo[best];

		/* least enlargement, then smaller area, then fewer entries */
		if (enl[0][e] < enl[1][e])
			to = 0;
		else if (enl[1][e] < enl[0][e])
			to = 1;
		else if (garea[0] < garea[1])
			to = 0;
		else if (garea[1] < garea[0])
			to = 1;
		else
			to = count[0] <= count[1] ? 0 : 1;

		right[e] = (to == 1);
		count[to]++;
		todo[best] = todo[--ntodo];
		if (dbox_grow(&g[to], &b[e]))
		{
			garea[to] = dbox_area(&g[to]);
			for (i = 0; i < ntodo; i++)
				enl[to][todo[i]] = dbox_union_area(&g[to], &b[todo[i]]) - garea[to];
		}
	}
	pfree(b);
	pfree(area);
	pfree(enl[0]);
	pfree(enl[1]);
	pfree(todo);
}
