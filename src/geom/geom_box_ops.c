/*
 * geom_box_ops.c
 *	  Predicates and arithmetic on the float boxes of geometry keys: the
 *	  box predicates PostGIS evaluates for &&, ~, @ and ~= (bit for bit, so
 *	  index answers equal a sequential scan's), and union, area,
 *	  enlargement and overlap for the R-tree's choices.  Reading a box from
 *	  a geometry is geom_box.c's job.
 */
#include "postgres.h"

#include <float.h>
#include <math.h>

#include "geom/geom_box.h"

static void hi_box_normalize(HiBox *a);
static double hi_box_extent(float4 lo, float4 hi);

/*
 * Box predicates: box2df_overlaps(), box2df_contains(), box2df_within()
 * and box2df_equals() of PostGIS 3.3, with NULL standing for an EMPTY
 * geometry as in gserialized_datum_predicate_2d().  "Box-empty" (NaN
 * xmin) is PostGIS's own in-box EMPTY marker, reachable here only through
 * NaN coordinates.  Comparisons are on float4, like BOX2DF's.
 */
#define HI_BOX_EMPTY(b)		isnan((b)->xmin)

bool
hi_box_overlaps(const HiBox *a, const HiBox *b)
{
	if (a == NULL || b == NULL || HI_BOX_EMPTY(a) || HI_BOX_EMPTY(b))
		return false;

	if (a->xmin > b->xmax || b->xmin > a->xmax ||
		a->ymin > b->ymax || b->ymin > a->ymax)
		return false;

	return true;
}

bool
hi_box_contains(const HiBox *a, const HiBox *b)
{
	if (a == NULL || b == NULL)
		return false;

	/* PostGIS: everything but box-empty contains box-empty */
	if (HI_BOX_EMPTY(b) && !HI_BOX_EMPTY(a))
		return true;

	if (a->xmin > b->xmin || a->xmax < b->xmax ||
		a->ymin > b->ymin || a->ymax < b->ymax)
		return false;

	return true;
}

bool
hi_box_within(const HiBox *a, const HiBox *b)
{
	if (a == NULL || b == NULL)
		return false;

	/* PostGIS: box-empty is within everything but box-empty */
	if (HI_BOX_EMPTY(a) && !HI_BOX_EMPTY(b))
		return true;

	if (a->xmin < b->xmin || a->xmax > b->xmax ||
		a->ymin < b->ymin || a->ymax > b->ymax)
		return false;

	return true;
}

bool
hi_box_equals(const HiBox *a, const HiBox *b)
{
	if (a == NULL && b == NULL)
		return true;			/* EMPTY ~= EMPTY */
	if (a == NULL || b == NULL)
		return false;
	if (HI_BOX_EMPTY(a) && HI_BOX_EMPTY(b))
		return true;
	if (HI_BOX_EMPTY(a) || HI_BOX_EMPTY(b))
		return false;
	return a->xmin == b->xmin && a->xmax == b->xmax &&
		a->ymin == b->ymin && a->ymax == b->ymax;
}

static bool empty_boxed = false;
static const HiBox box_empty = {NAN, NAN, NAN, NAN};

void
hi_geom_set_empty_boxed(bool boxed)
{
	empty_boxed = boxed;
}

const HiBox *
hi_empty_box(void)
{
	return empty_boxed ? &box_empty : NULL;
}

bool
hi_box_has_nan(const HiBox *a)
{
	return isnan(a->xmin) || isnan(a->ymin) ||
		isnan(a->xmax) || isnan(a->ymax);
}

/*
 * Make a box NaN-free and at least as permissive for every predicate:
 * box-empty (NaN xmin) matches "within" any query whatever its other
 * bounds, so it becomes the whole float plane; any other NaN bound becomes
 * the widest bound on its side (as PostGIS's box2df_set_finite()).
 */
static void
hi_box_normalize(HiBox *a)
{
	if (isnan(a->xmin))
	{
		a->xmin = a->ymin = -FLT_MAX;
		a->xmax = a->ymax = FLT_MAX;
		return;
	}
	if (isnan(a->ymin))
		a->ymin = -FLT_MAX;
	if (isnan(a->xmax))
		a->xmax = FLT_MAX;
	if (isnan(a->ymax))
		a->ymax = FLT_MAX;
}

void
hi_box_union(HiBox *a, const HiBox *b)
{
	HiBox		nb = *b;

	hi_box_normalize(a);
	hi_box_normalize(&nb);

	if (nb.xmin < a->xmin)
		a->xmin = nb.xmin;
	if (nb.ymin < a->ymin)
		a->ymin = nb.ymin;
	if (nb.xmax > a->xmax)
		a->xmax = nb.xmax;
	if (nb.ymax > a->ymax)
		a->ymax = nb.ymax;
}

/* Side length in double; a reversed (corrupt cached) box counts as 0 */
static double
hi_box_extent(float4 lo, float4 hi)
{
	double		e = (double) hi - (double) lo;

	return (e > 0.0) ? e : 0.0;
}

double
hi_box_area(const HiBox *a)
{
	HiBox		n = *a;

	hi_box_normalize(&n);
	return hi_box_extent(n.xmin, n.xmax) * hi_box_extent(n.ymin, n.ymax);
}

double
hi_box_enlargement(const HiBox *a, const HiBox *b)
{
	HiBox		u = *a;
	double		e;

	hi_box_union(&u, b);
	e = hi_box_area(&u) - hi_box_area(a);
	/* Rounding of huge areas must not make a penalty negative */
	return (e > 0.0) ? e : 0.0;
}

double
hi_box_overlap_area(const HiBox *a, const HiBox *b)
{
	HiBox		na = *a;
	HiBox		nb = *b;

	hi_box_normalize(&na);
	hi_box_normalize(&nb);
	return hi_box_extent(Max(na.xmin, nb.xmin), Min(na.xmax, nb.xmax)) *
		hi_box_extent(Max(na.ymin, nb.ymin), Min(na.ymax, nb.ymax));
}
