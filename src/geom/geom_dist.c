/*-------------------------------------------------------------------------
 *
 * geom_dist.c
 *	  Lower bounds of PostGIS's geometry distance (<->) for kNN scans.
 *
 * An index orders a kNN scan by a box distance and asks the executor to
 * recheck: the executor evaluates <-> on the heap tuple and raises "index
 * returned tuples in wrong order" if that ever comes out below the value
 * the index gave.  So the bound must stay below what PostGIS computes, not
 * only below the mathematical distance.  <-> on geometry is ST_Distance
 * (PostGIS 3.3 lwgeom_mindistance2d(), liblwgeom/measures.c), computed in
 * double with no tolerance, and it errs low in three ways:
 *
 *	 1. rounding: projections, cross products and the nearly-parallel test
 *		of lw_dist2d_seg_seg() are exact to a few ulps of the coordinates;
 *		shaving margin * (d + mag) off covers it (2^-40 >> 2^-52);
 *	 2. underflow: lw_dist2d_pt_pt() squares the offsets (sqrt(h*h + v*v),
 *		not hypot) and lw_dist2d_pt_seg() tests "point on segment" by
 *		comparing two products of coordinate differences, so below about
 *		2^-537 distances and products flush to 0 and the point counts as
 *		on the segment; we give 0 below 2^-500.  Worse, a segment shorter
 *		than 2^-537 makes ||AB||^2 and the dot product 0, r = 0/0 = NaN,
 *		and both cross products of lw_dist2d_pt_seg() (and the side test
 *		of ptarray_contains_point()) flush to 0 whenever the point is
 *		within 2^-1075 / |AB| <= 1/2 of A on each axis: ST_Distance is 0
 *		for a true distance up to ~0.71 (POINT(1e-40 1e-45) <-> an
 *		envelope of side 2e-300 is 0).  Two distinct doubles differ by
 *		less than 2^-537 only if both are below 2^-484 in magnitude (or
 *		of opposite signs), so such a segment lies in a box that spans an
 *		axis line (float boxes round anything that small outward to 0):
 *		when either box spans x = 0 or y = 0 we give 0 below 1;
 *	 3. overflow: beyond ~1e154 the products are +-Inf and Inf - Inf is
 *		NaN, so tests compare NaN or Inf == Inf; the float box of such a
 *		geometry is clamped to +-FLT_MAX (as any coordinate beyond
 *		it, or infinite), and <-> of anything with an infinite or huge
 *		coordinate is 0 or garbage: we give 0 when either box reaches
 *		+-FLT_MAX (or has a NaN bound).
 *
 * The cost is small: 0 is returned only for boxes crossing an axis within
 * a distance of 1, or unbounded ones; the executor's reorder queue then
 * sorts those few by their true distance.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <float.h>
#include <math.h>

#include "utils/float.h"

#include "geom/geom_box.h"

/* below this, PostGIS's squares and products may underflow: 2^-500 */
#define HI_DIST_TINY	ldexp(1.0, -500)
/* ST_Distance may be 0 below this next to a segment shorter than 2^-537 */
#define HI_DIST_AXIS_REACH	1.0

bool
hi_dist_spans_axis(double xmin, double ymin, double xmax, double ymax)
{
	return (xmin <= 0 && xmax >= 0) || (ymin <= 0 && ymax >= 0);
}

double
hi_dist_finish(double d, double mag, double margin, bool near_axis)
{
	double		s;

	if (isnan(d) || d <= 0)
		return 0.0;
	s = d - (d + mag) * margin;
	if (!(s > HI_DIST_TINY))
		return 0.0;
	if (near_axis && s < HI_DIST_AXIS_REACH)
		return 0.0;
	return s;
}

bool
hi_box_unbounded(const HiBox *a)
{
	return !(fabsf(a->xmin) < FLT_MAX && fabsf(a->ymin) < FLT_MAX &&
			 fabsf(a->xmax) < FLT_MAX && fabsf(a->ymax) < FLT_MAX);
}

static double
box_mag(const HiBox *a)
{
	return Max(Max(fabs(a->xmin), fabs(a->xmax)),
			   Max(fabs(a->ymin), fabs(a->ymax)));
}

/*
 * hi_box_distance
 *		Lower bound of ST_Distance between anything inside a and anything
 *		inside b, as PostGIS computes it (see the file header).
 */
double
hi_box_distance(const HiBox *a, const HiBox *b)
{
	double		dx = 0.0;
	double		dy = 0.0;
	double		d;

	if (a == NULL || b == NULL)
		return get_float8_infinity();
	if (hi_box_unbounded(a) || hi_box_unbounded(b))
		return 0.0;

	if ((double) b->xmin > (double) a->xmax)
		dx = (double) b->xmin - (double) a->xmax;
	else if ((double) a->xmin > (double) b->xmax)
		dx = (double) a->xmin - (double) b->xmax;

	if ((double) b->ymin > (double) a->ymax)
		dy = (double) b->ymin - (double) a->ymax;
	else if ((double) a->ymin > (double) b->ymax)
		dy = (double) a->ymin - (double) b->ymax;

	if (dx == 0.0 && dy == 0.0)
		return 0.0;
	d = (dy == 0.0) ? dx : (dx == 0.0) ? dy : sqrt(dx * dx + dy * dy);

	return hi_dist_finish(d, Max(box_mag(a), box_mag(b)), HI_DIST_MARGIN,
						  hi_dist_spans_axis(a->xmin, a->ymin, a->xmax, a->ymax) ||
						  hi_dist_spans_axis(b->xmin, b->ymin, b->xmax, b->ymax));
}
