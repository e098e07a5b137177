/*
 * rtree_split.c
 *	  Guttman's quadratic split (Guttman 1984, section 3.5.2).
 *
 * Works on boxes only, so leaf and internal pages share it.  The caller
 * keeps the entries marked false in the old page and moves the ones
 * marked true to the new page.
 */
#include "postgres.h"

#include <math.h>

#include "rtree/rtree.h"

/*
 * Split n boxes into two groups of at least min_fill each.
 */
void
rt_quadratic_split(const HiBox *boxes, int n, int min_fill, bool *right)
{
	bool	   *assigned = palloc0(sizeof(bool) * n);
	HiBox		g[2];
	double		area[2];
	int			count[2] = {1, 1};
	int			seed1 = 0,
				seed2 = 1;
	double		worst = -1;
	int			remaining;
	int			i,
				j;

	Assert(n >= 2);

	/* PickSeeds: the pair that would waste the most area together */
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
		{
			HiBox		u = boxes[i];
			double		d;

			hi_box_union(&u, &boxes[j]);
			d = hi_box_area(&u) - hi_box_area(&boxes[i]) - hi_box_area(&boxes[j]);
			if (d > worst)
			{
				worst = d;
				seed1 = i;
				seed2 = j;
			}
		}
	g[0] = boxes[seed1];
	g[1] = boxes[seed2];
	area[0] = hi_box_area(&g[0]);
	area[1] = hi_box_area(&g[1]);
	assigned[seed1] = assigned[seed2] = true;
	right[seed1] = false;
	right[seed2] = true;
	remaining = n - 2;

	while (remaining > 0)
	{
		int			best = -1;
		double		best_diff = -1;
		double		best_d0 = 0,
					best_d1 = 0;
		int			to;

		/* a group that needs every remaining entry to reach m gets them */
		if (count[0] + remaining <= min_fill || count[1] + remaining <= min_fill)
		{
			int			grp = (count[0] + remaining <= min_fill) ? 0 : 1;

			for (i = 0; i < n; i++)
				if (!assigned[i])
				{
					assigned[i] = true;
					right[i] = (grp == 1);
					hi_box_union(&g[grp], &boxes[i]);
					count[grp]++;
				}
			break;
		}

		/* PickNext: the entry with the strongest preference for a group */
		for (i = 0; i < n; i++)
		{
			double		d0,
						d1,
						diff;

			if (assigned[i])
				continue;
			d0 = hi_box_enlargement(&g[0], &boxes[i]);
			d1 = hi_box_enlargement(&g[1], &boxes[i]);
			diff = fabs(d0 - d1);
			if (diff > best_diff)
			{
				best_diff = diff;
				best = i;
				best_d0 = d0;
				best_d1 = d1;
			}
		}

		/* least enlargement, then smaller area, then fewer entries */
		if (best_d0 < best_d1)
			to = 0;
		else if (best_d1 < best_d0)
			to = 1;
		else if (area[0] < area[1])
			to = 0;
		else if (area[1] < area[0])
			to = 1;
		else
			to = count[0] <= count[1] ? 0 : 1;

		assigned[best] = true;
		right[best] = (to == 1);
		hi_box_union(&g[to], &boxes[best]);
		area[to] = hi_box_area(&g[to]);
		count[to]++;
		remaining--;
	}
	pfree(assigned);
}
