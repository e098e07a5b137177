/*-------------------------------------------------------------------------
 *
 * geom_box.c
 *	  The 2-D float box of a PostGIS geometry, read straight from its
 *	  GSERIALIZED bytes, and the box predicates PostGIS uses for the
 *	  &&, ~, @ and ~= operators.
 *
 * We deliberately do not link liblwgeom: the few flags and the layout we
 * need are defined below, after PostGIS 3.3's liblwgeom/gserialized1.c,
 * gserialized2.c, gbox.c and postgis/gserialized_gist_2d.c.
 *
 * Serialized layout (all integers and doubles in native byte order):
 *
 *	 varlena header
 *	 srid[3], flags (1 byte)
 *	 [extended flags, uint64]		v2 only, if the extended flag is set
 *	 [cached box, float pairs]		if the bbox flag is set
 *	 geometry body					type-specific, see gs_geom_box()
 *
 * The key of a geometry must be bit-for-bit the BOX2DF that PostGIS's
 * gserialized_datum_get_box2df_p() produces, since PostGIS evaluates its
 * box operators on that box during a sequential scan: if our index saw a
 * box one float ulp smaller, an index scan would miss rows.  So when the
 * value carries a cached box we copy its x/y floats; otherwise we compute
 * the double min/max over the vertices the way lwgeom_calculate_gbox()
 * does (same order of comparisons, so even NaN coordinates end up where
 * PostGIS puts them) and round it outward to float like gbox_float_round().
 *
 * Portions of the layout knowledge derive from PostGIS (GPL-2.0-or-later).
 *
 * IDENTIFICATION
 *	  src/geom/geom_box.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <float.h>
#include <math.h>

#include "fmgr.h"
#include "miscadmin.h"
#include "utils/float.h"

#include "compat/hi_compat.h"
#include "geom/geom_box.h"

/*
 * Flag byte.  The low four bits mean the same in v1 and v2; 0x40 tells the
 * versions apart.  In v1 0x10 and 0x20 are the never-stored "read-only"
 * and "solid" bits and do not change the layout; in v2 0x10 announces the
 * 8-byte extended flags word (the design notes in gserialized.txt say
 * 0x20, but the code, which is what wrote the data, uses 0x10).
 */
#define GS_FLAG_Z			0x01
#define GS_FLAG_M			0x02
#define GS_FLAG_BBOX		0x04
#define GS_FLAG_GEODETIC	0x08
#define GS2_FLAG_EXTENDED	0x10
#define GS_FLAG_VERSION		0x40	/* clear: v1 (PostGIS 2.x), set: v2 */
#define GS_FLAG_VERSION_HI	0x80	/* reserved for a future version */

#define GS_SRID_FLAGS_SIZE	4		/* 3 SRID bytes and the flag byte */
#define GS2_XFLAGS_SIZE		8		/* v2 extended flags */
#define GS_MAX_BOX_SIZE		(8 * sizeof(float))	/* XYZM min/max */

/*
 * Bytes after the varlena header that always hold the flags, the extended
 * flags and the largest box: enough to read a cached box from a slice.
 */
#define GS_HEADER_SLICE		(GS_SRID_FLAGS_SIZE + GS2_XFLAGS_SIZE + GS_MAX_BOX_SIZE)

/* liblwgeom type numbers */
#define GS_POINT			1
#define GS_LINE				2
#define GS_POLYGON			3
#define GS_MULTIPOINT		4
#define GS_MULTILINE		5
#define GS_MULTIPOLYGON		6
#define GS_COLLECTION		7
#define GS_CIRCSTRING		8
#define GS_COMPOUND			9
#define GS_CURVEPOLY		10
#define GS_MULTICURVE		11
#define GS_MULTISURFACE		12
#define GS_POLYHEDRALSURFACE 13
#define GS_TRIANGLE			14
#define GS_TIN				15

/* liblwgeom's tolerance for degenerate arcs (EPSILON_SQLMM) */
#define GS_EPSILON_SQLMM	1e-8

/* Parsed fixed part of a serialized geometry */
typedef struct GsHeader
{
	uint8		flags;
	int			ndims;			/* ordinates per vertex: 2, 3 or 4 */
	Size		box_offset;		/* where the cached box starts, if any */
	Size		body_offset;	/* where the geometry body starts */
} GsHeader;

/* Bounds-checked cursor over the geometry body */
typedef struct GsReader
{
	const char *data;
	Size		len;
	Size		pos;
	int			ndims;
} GsReader;

/* A double box, as liblwgeom's GBOX restricted to x and y */
typedef struct GsDBox
{
	double		xmin;
	double		xmax;
	double		ymin;
	double		ymax;
} GsDBox;

typedef struct GsPoint
{
	double		x;
	double		y;
} GsPoint;

static void gs_parse_header(const char *data, Size len, GsHeader *h);
static uint32 gs_read_uint32(GsReader *r);
static const char *gs_take_points(GsReader *r, uint32 npoints);
static GsPoint gs_point(const char *ords, int ndims, uint32 i);
static bool gs_points_box(const char *ords, int ndims, uint32 npoints,
						  GsDBox *box);
static double gs_arc_center(const GsPoint *p1, const GsPoint *p2,
							const GsPoint *p3, GsPoint *center);
static int	gs_segment_side(const GsPoint *p1, const GsPoint *p2,
							const GsPoint *q);
static void gs_arc_box(const GsPoint *a1, const GsPoint *a2,
					   const GsPoint *a3, GsDBox *box);
static bool gs_circstring_box(const char *ords, int ndims, uint32 npoints,
							  GsDBox *box);
static bool gs_subtype_allowed(uint32 type, uint32 subtype);
static bool gs_geom_box(GsReader *r, GsDBox *box);
static float4 gs_float_down(double d);
static float4 gs_float_up(double d);


/*
 * Decode the fixed part of a serialized geometry.  "data" points just past
 * the varlena header and "len" bytes are available there (possibly only a
 * slice of the value).  Checks that the header and any cached box fit.
 */
static void
gs_parse_header(const char *data, Size len, GsHeader *h)
{
	Size		off = GS_SRID_FLAGS_SIZE;

	if (len < GS_SRID_FLAGS_SIZE)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("invalid geometry value: %zu bytes is too short for a header",
						len)));

	h->flags = (uint8) data[GS_SRID_FLAGS_SIZE - 1];

	if (h->flags & GS_FLAG_VERSION_HI)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("invalid geometry value: unsupported serialization version (flags 0x%02x)",
						h->flags)));

	/*
	 * Geodetic values are geography: their cached box is a 3-D geocentric
	 * box, not lon/lat, so there is no planar key to give.
	 */
	if (h->flags & GS_FLAG_GEODETIC)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("geodetic (geography) values are not supported"),
				 errhint("Index a geometry column, or cast the geography to geometry.")));

	h->ndims = 2 + ((h->flags & GS_FLAG_Z) ? 1 : 0) +
		((h->flags & GS_FLAG_M) ? 1 : 0);

	if ((h->flags & GS_FLAG_VERSION) && (h->flags & GS2_FLAG_EXTENDED))
		off += GS2_XFLAGS_SIZE;

	if (h->flags & GS_FLAG_BBOX)
	{
		h->box_offset = off;
		off += 2 * h->ndims * sizeof(float);
	}
	else
		h->box_offset = 0;

	if (len < off)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("invalid geometry value: %zu bytes is too short for a header of %zu bytes",
						len, off)));

	h->body_offset = off;
}

static uint32
gs_read_uint32(GsReader *r)
{
	uint32		v;

	if (r->len - r->pos < sizeof(uint32))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("invalid geometry value: truncated at byte %zu", r->pos)));
	memcpy(&v, r->data + r->pos, sizeof(uint32));
	r->pos += sizeof(uint32);
	return v;
}

/* Claim the ordinates of npoints vertices; returns where they start */
static const char *
gs_take_points(GsReader *r, uint32 npoints)
{
	uint64		nbytes = (uint64) npoints * r->ndims * sizeof(double);
	const char *ords = r->data + r->pos;

	if (nbytes > (uint64) (r->len - r->pos))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("invalid geometry value: %u vertices do not fit in the remaining %zu bytes",
						npoints, r->len - r->pos)));
	r->pos += (Size) nbytes;
	return ords;
}

/* x and y of vertex i (the ordinates need not be double-aligned) */
static GsPoint
gs_point(const char *ords, int ndims, uint32 i)
{
	GsPoint		p;

	memcpy(&p.x, ords + (Size) i * ndims * sizeof(double), sizeof(double));
	memcpy(&p.y, ords + ((Size) i * ndims + 1) * sizeof(double), sizeof(double));
	return p;
}

/*
 * Box of a point array, as ptarray_calculate_gbox_cartesian().  The ternary
 * operators are liblwgeom's FP_MIN/FP_MAX (a < b ? a : b), whose argument
 * order decides what a NaN coordinate does, so keep them as they are.
 */
static bool
gs_points_box(const char *ords, int ndims, uint32 npoints, GsDBox *box)
{
	GsPoint		p;
	uint32		i;

	if (npoints == 0)
		return false;

	p = gs_point(ords, ndims, 0);
	box->xmin = box->xmax = p.x;
	box->ymin = box->ymax = p.y;
	for (i = 1; i < npoints; i++)
	{
		p = gs_point(ords, ndims, i);
		box->xmin = (box->xmin < p.x) ? box->xmin : p.x;
		box->xmax = (box->xmax > p.x) ? box->xmax : p.x;
		box->ymin = (box->ymin < p.y) ? box->ymin : p.y;
		box->ymax = (box->ymax > p.y) ? box->ymax : p.y;
	}
	return true;
}

/*
 * Center and radius of the circle through three points, as liblwgeom's
 * lw_arc_center(); a negative radius means the points are collinear.  The
 * arithmetic is written operation for operation like PostGIS's (its
 * pow(x, 2.0) is exactly x * x once compiled), so the box we derive from
 * it is the same double box and rounds to the same floats.
 */
static double
gs_arc_center(const GsPoint *p1, const GsPoint *p2, const GsPoint *p3,
			  GsPoint *center)
{
	double		cx,
				cy;
	double		dx21,
				dy21,
				dx31,
				dy31,
				h21,
				h31,
				d;

	/* Closed circle: the center is halfway to the middle point */
	if (fabs(p1->x - p3->x) < GS_EPSILON_SQLMM &&
		fabs(p1->y - p3->y) < GS_EPSILON_SQLMM)
	{
		cx = p1->x + (p2->x - p1->x) / 2.0;
		cy = p1->y + (p2->y - p1->y) / 2.0;
		center->x = cx;
		center->y = cy;
		return sqrt((cx - p1->x) * (cx - p1->x) + (cy - p1->y) * (cy - p1->y));
	}

	dx21 = p2->x - p1->x;
	dy21 = p2->y - p1->y;
	dx31 = p3->x - p1->x;
	dy31 = p3->y - p1->y;

	h21 = dx21 * dx21 + dy21 * dy21;
	h31 = dx31 * dx31 + dy31 * dy31;

	d = 2 * (dx21 * dy31 - dx31 * dy21);
	if (fabs(d) < GS_EPSILON_SQLMM)
		return -1.0;

	cx = p1->x + (h21 * dy31 - h31 * dy21) / d;
	cy = p1->y - (h21 * dx31 - h31 * dx21) / d;
	center->x = cx;
	center->y = cy;
	return sqrt((cx - p1->x) * (cx - p1->x) + (cy - p1->y) * (cy - p1->y));
}

/* Side of q relative to p1->p2: -1, 0 or 1 (liblwgeom's lw_segment_side) */
static int
gs_segment_side(const GsPoint *p1, const GsPoint *p2, const GsPoint *q)
{
	double		side = ((q->x - p1->x) * (p2->y - p1->y) -
						(p2->x - p1->x) * (q->y - p1->y));

	return (side > 0) - (side < 0);
}

/*
 * Box of the arc a1-a2-a3, as lw_arc_calculate_gbox_cartesian_2d(): the
 * end points, plus each axis extreme of the circle that lies on the same
 * side of the chord as the middle point.
 */
static void
gs_arc_box(const GsPoint *a1, const GsPoint *a2, const GsPoint *a3,
		   GsDBox *box)
{
	GsPoint		c = {0.0, 0.0};
	GsPoint		ext;
	double		r;
	int			a2_side;

	r = gs_arc_center(a1, a2, a3, &c);

	/* Chord end points first; also the whole answer for a straight arc */
	box->xmin = (a1->x < a3->x) ? a1->x : a3->x;
	box->ymin = (a1->y < a3->y) ? a1->y : a3->y;
	box->xmax = (a1->x > a3->x) ? a1->x : a3->x;
	box->ymax = (a1->y > a3->y) ? a1->y : a3->y;
	if (r < 0.0)
		return;

	/* Same start and end: a full circle */
	if (a1->x == a3->x && a1->y == a3->y)
	{
		box->xmin = c.x - r;
		box->ymin = c.y - r;
		box->xmax = c.x + r;
		box->ymax = c.y + r;
		return;
	}

	a2_side = gs_segment_side(a1, a3, a2);

	ext.x = c.x - r;
	ext.y = c.y;
	if (a2_side == gs_segment_side(a1, a3, &ext))
		box->xmin = ext.x;

	ext.x = c.x;
	ext.y = c.y - r;
	if (a2_side == gs_segment_side(a1, a3, &ext))
		box->ymin = ext.y;

	ext.x = c.x + r;
	ext.y = c.y;
	if (a2_side == gs_segment_side(a1, a3, &ext))
		box->xmax = ext.x;

	ext.x = c.x;
	ext.y = c.y + r;
	if (a2_side == gs_segment_side(a1, a3, &ext))
		box->ymax = ext.y;
}

/*
 * Box of a circular string, as lwcircstring_calculate_gbox_cartesian():
 * fewer than three points give no box, otherwise the arcs (0,1,2), (2,3,4)
 * ... are merged into a box that starts out as [FLT_MAX, -FLT_MAX] (sic:
 * PostGIS starts from the float limits, not from the first arc).
 */
static bool
gs_circstring_box(const char *ords, int ndims, uint32 npoints, GsDBox *box)
{
	uint32		i;

	if (npoints < 3)
		return false;

	box->xmin = box->ymin = FLT_MAX;
	box->xmax = box->ymax = -1 * FLT_MAX;

	for (i = 2; i < npoints; i += 2)
	{
		GsPoint		p1 = gs_point(ords, ndims, i - 2);
		GsPoint		p2 = gs_point(ords, ndims, i - 1);
		GsPoint		p3 = gs_point(ords, ndims, i);
		GsDBox		arc;

		gs_arc_box(&p1, &p2, &p3, &arc);
		/* gbox_merge() */
		if (arc.xmin < box->xmin)
			box->xmin = arc.xmin;
		if (arc.ymin < box->ymin)
			box->ymin = arc.ymin;
		if (arc.xmax > box->xmax)
			box->xmax = arc.xmax;
		if (arc.ymax > box->ymax)
			box->ymax = arc.ymax;
	}
	return true;
}

/* Which members a collection type may hold (lwcollection_allows_subtype) */
static bool
gs_subtype_allowed(uint32 type, uint32 subtype)
{
	switch (type)
	{
		case GS_COLLECTION:
			return true;
		case GS_MULTIPOINT:
			return subtype == GS_POINT;
		case GS_MULTILINE:
			return subtype == GS_LINE;
		case GS_MULTIPOLYGON:
			return subtype == GS_POLYGON;
		case GS_COMPOUND:
			return subtype == GS_LINE || subtype == GS_CIRCSTRING;
		case GS_CURVEPOLY:
		case GS_MULTICURVE:
			return subtype == GS_CIRCSTRING || subtype == GS_LINE ||
				subtype == GS_COMPOUND;
		case GS_MULTISURFACE:
			return subtype == GS_POLYGON || subtype == GS_CURVEPOLY;
		case GS_POLYHEDRALSURFACE:
			return subtype == GS_POLYGON;
		case GS_TIN:
			return subtype == GS_TRIANGLE;
		default:
			return false;
	}
}

/*
 * Walk one serialized geometry at the reader's position, leave the reader
 * just past it, and compute its double box as lwgeom_calculate_gbox_cartesian()
 * does.  Returns false when PostGIS finds no box (EMPTY, and a few
 * degenerate shapes it also treats as box-less).  The whole body is walked
 * even where PostGIS would not look (inner rings), so that every count is
 * checked against the bytes actually present.
 *
 * Body layouts (uint32 = native 4-byte integer):
 *	 point, line, triangle, circularstring:
 *		<type> <npoints> <npoints * ndims doubles>
 *	 polygon:
 *		<type> <nrings> <npoints of each ring> [<pad> if nrings is odd]
 *		<the rings' doubles, one ring after the other>
 *	 every collection type (multi*, geometrycollection, compoundcurve,
 *	 curvepolygon, multicurve, multisurface, polyhedralsurface, tin):
 *		<type> <ngeoms> <each member, serialized the same way>
 */
static bool
gs_geom_box(GsReader *r, GsDBox *box)
{
	uint32		type;
	uint32		count;
	const char *ords;

	/* Collections nest; garbage could nest them very deep */
	check_stack_depth();

	type = gs_read_uint32(r);
	count = gs_read_uint32(r);

	switch (type)
	{
		case GS_POINT:
			/* PostGIS writes 0 (EMPTY) or 1 vertex for a point */
			if (count > 1)
				ereport(ERROR,
						(errcode(ERRCODE_DATA_CORRUPTED),
						 errmsg("invalid geometry value: point with %u vertices",
								count)));
			ords = gs_take_points(r, count);
			return gs_points_box(ords, r->ndims, count, box);

		case GS_LINE:
		case GS_TRIANGLE:
			ords = gs_take_points(r, count);
			return gs_points_box(ords, r->ndims, count, box);

		case GS_CIRCSTRING:
			ords = gs_take_points(r, count);
			return gs_circstring_box(ords, r->ndims, count, box);

		case GS_POLYGON:
			{
				GsReader	counts;
				bool		found = false;
				uint32		i;
				Size		nbytes = (Size) count * sizeof(uint32);

				/* The ring sizes, padded to keep the doubles aligned */
				if (count % 2)
					nbytes += sizeof(uint32);
				if (nbytes > r->len - r->pos)
					ereport(ERROR,
							(errcode(ERRCODE_DATA_CORRUPTED),
							 errmsg("invalid geometry value: %u rings do not fit in the remaining %zu bytes",
									count, r->len - r->pos)));
				counts = *r;
				r->pos += nbytes;

				/* Only the outer ring bounds a polygon, as in PostGIS */
				for (i = 0; i < count; i++)
				{
					uint32		npoints = gs_read_uint32(&counts);

					ords = gs_take_points(r, npoints);
					if (i == 0)
						found = gs_points_box(ords, r->ndims, npoints, box);
				}
				return found;
			}

		case GS_MULTIPOINT:
		case GS_MULTILINE:
		case GS_MULTIPOLYGON:
		case GS_COLLECTION:
		case GS_COMPOUND:
		case GS_CURVEPOLY:
		case GS_MULTICURVE:
		case GS_MULTISURFACE:
		case GS_POLYHEDRALSURFACE:
		case GS_TIN:
			{
				bool		found = false;
				uint32		i;

				for (i = 0; i < count; i++)
				{
					GsDBox		sub;
					uint32		subtype;

					if (r->len - r->pos < sizeof(uint32))
						ereport(ERROR,
								(errcode(ERRCODE_DATA_CORRUPTED),
								 errmsg("invalid geometry value: truncated at byte %zu",
										r->pos)));
					memcpy(&subtype, r->data + r->pos, sizeof(uint32));
					if (!gs_subtype_allowed(type, subtype))
						ereport(ERROR,
								(errcode(ERRCODE_DATA_CORRUPTED),
								 errmsg("invalid geometry value: type %u cannot contain type %u",
										type, subtype)));

					if (!gs_geom_box(r, &sub))
						continue;	/* EMPTY members do not count */
					if (!found)
					{
						*box = sub;
						found = true;
					}
					else
					{
						/* gbox_merge(): NaN never replaces a bound here */
						if (sub.xmin < box->xmin)
							box->xmin = sub.xmin;
						if (sub.ymin < box->ymin)
							box->ymin = sub.ymin;
						if (sub.xmax > box->xmax)
							box->xmax = sub.xmax;
						if (sub.ymax > box->ymax)
							box->ymax = sub.ymax;
					}
				}
				return found;
			}

		default:
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("invalid geometry value: unknown geometry type %u",
							type)));
	}
	return false;				/* keep compiler quiet */
}

/*
 * Largest float <= d, clamped to the float range (next_float_down() in
 * liblwgeom/lwgeom_api.c).  NaN stays NaN.  Note the asymmetric clamps,
 * copied on purpose: a min above FLT_MAX becomes FLT_MAX.
 */
static float4
gs_float_down(double d)
{
	float4		f;

	if (d > (double) FLT_MAX)
		return FLT_MAX;
	if (d <= (double) -FLT_MAX)
		return -FLT_MAX;
	f = (float4) d;
	if ((double) f <= d)
		return f;
	return nextafterf(f, -1 * FLT_MAX);
}

/* Smallest float >= d, clamped to the float range (next_float_up()) */
static float4
gs_float_up(double d)
{
	float4		f;

	if (d >= (double) FLT_MAX)
		return FLT_MAX;
	if (d < (double) -FLT_MAX)
		return -FLT_MAX;
	f = (float4) d;
	if ((double) f >= d)
		return f;
	return nextafterf(f, FLT_MAX);
}

/* gbox_float_round() of a point's degenerate box (hi_point_box's rare cases) */
void
hi_point_box_slow(double x, double y, HiBox *box)
{
	box->xmin = gs_float_down(x);
	box->xmax = gs_float_up(x);
	box->ymin = gs_float_down(y);
	box->ymax = gs_float_up(y);
}

/*
 * hi_geom_box
 *		The BOX2DF of a geometry datum, as PostGIS's &&, ~, @ and ~= see it.
 *
 * Mirrors gserialized_datum_get_box2df_p(): a cached box is taken as is
 * (its first four floats are xmin, xmax, ymin, ymax whatever Z/M follow),
 * and only the header slice of a toasted value is fetched for it.  Without
 * a cached box the whole value is detoasted and the box computed.
 *
 * EMPTY: PostGIS has no box for EMPTY geometries (nor for collections of
 * EMPTY members, nor for a few degenerate shapes such as a polygon whose
 * outer ring has no vertex); we return HI_KEY_EMPTY in exactly those cases.
 * In GSERIALIZED, POINT EMPTY is a point with 0 vertices (the NaN NaN
 * encoding exists only in WKB and is turned into 0 vertices on input).
 *
 * NaN: a vertex with NaN coordinates (ST_MakePoint('NaN', 1) is accepted)
 * is not EMPTY for PostGIS: its box is computed and may hold NaN, and the
 * BOX2DF predicates then compare NaN like any float.  We return that very
 * box (HI_KEY_BOX), and hi_box_overlaps() & co. reproduce those
 * comparisons, so an index scan answers as a sequential scan does.
 */
HiKeyKind
hi_geom_box(Datum geom, HiBox *box)
{
	struct varlena *raw = (struct varlena *) DatumGetPointer(geom);
	struct varlena *val;
	GsHeader	h;
	GsReader	r;
	GsDBox		dbox;
	bool		found;

	/*
	 * Short (1-byte header) and plain values are read in place: everything
	 * is fetched with memcpy, so no alignment is needed.  External or
	 * compressed ones get the header slice first.
	 */
	if (VARATT_IS_EXTERNAL(raw) || VARATT_IS_COMPRESSED(raw))
		val = (struct varlena *) PG_DETOAST_DATUM_SLICE(geom, 0, GS_HEADER_SLICE);
	else
		val = raw;

	gs_parse_header(VARDATA_ANY(val), VARSIZE_ANY_EXHDR(val), &h);

	if (h.flags & GS_FLAG_BBOX)
	{
		float4		f[4];

		/* Cached box: xmin, xmax, ymin, ymax, then Z and/or M pairs */
		memcpy(f, VARDATA_ANY(val) + h.box_offset, sizeof(f));
		box->xmin = f[0];
		box->xmax = f[1];
		box->ymin = f[2];
		box->ymax = f[3];
		if (val != raw)
			pfree(val);
		return HI_KEY_BOX;
	}

	/*
	 * No cached box: we need the coordinates.  A slice shorter than what we
	 * asked for is already the whole value.
	 */
	if (val != raw && VARSIZE_ANY_EXHDR(val) >= GS_HEADER_SLICE)
	{
		pfree(val);
		val = (struct varlena *) PG_DETOAST_DATUM(geom);
		gs_parse_header(VARDATA_ANY(val), VARSIZE_ANY_EXHDR(val), &h);
	}

	r.data = VARDATA_ANY(val);
	r.len = VARSIZE_ANY_EXHDR(val);
	r.pos = h.body_offset;
	r.ndims = h.ndims;
	found = gs_geom_box(&r, &dbox);

	if (found)
	{
		/* gbox_float_round(): widen to the enclosing float box */
		box->xmin = gs_float_down(dbox.xmin);
		box->xmax = gs_float_up(dbox.xmax);
		box->ymin = gs_float_down(dbox.ymin);
		box->ymax = gs_float_up(dbox.ymax);
	}

	if (val != raw)
		pfree(val);
	return found ? HI_KEY_BOX : HI_KEY_EMPTY;
}
