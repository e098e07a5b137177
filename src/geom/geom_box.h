/*
 * geom_box.h
 *	  Geometry keys: the 2-D float box of a PostGIS geometry, read straight
 *	  from its GSERIALIZED form (v1 and v2) without linking PostGIS, and the
 *	  box predicates PostGIS itself uses for &&, ~, @ and ~=.
 *
 * Boxes are float4 and rounded outward from the double coordinates exactly
 * as PostGIS builds its BOX2DF, so an index answer equals the answer of the
 * operator evaluated by a sequential scan.
 */
#ifndef GEOM_BOX_H
#define GEOM_BOX_H

#include "postgres.h"
#include "storage/itemptr.h"

typedef struct HiBox
{
	float4		xmin;
	float4		ymin;
	float4		xmax;
	float4		ymax;
} HiBox;

/* What a geometry datum turned into */
typedef enum HiKeyKind
{
	HI_KEY_BOX = 0,				/* a non-empty geometry with a box */
	HI_KEY_EMPTY = 1,			/* an EMPTY geometry (no box) */
	HI_KEY_NULL = 2				/* SQL NULL */
} HiKeyKind;

/* One index entry of a geometry: its key and the heap row it stands for */
typedef struct HiKeyItem
{
	HiBox		box;			/* set for HI_KEY_BOX only */
	ItemPointerData tid;
	uint8		kind;			/* HiKeyKind */
} HiKeyItem;

/*
 * Extract the 2-D float box of a geometry datum (which may be toasted;
 * only the header slice is detoasted when a cached box is present).
 * Returns HI_KEY_EMPTY for empty geometries (box left unset). Raises an
 * ERROR with errcode for data that is not a valid GSERIALIZED geometry.
 */
extern HiKeyKind hi_geom_box(Datum geom, HiBox *box);

/*
 * Box predicates with PostGIS 3 semantics (BOX2DF).
 *
 * Pass NULL for a geometry that is EMPTY (hi_geom_box() returned
 * HI_KEY_EMPTY): the result is then exactly that of the geometry operator
 * evaluated by PostGIS (EMPTY && x, EMPTY ~ x, x ~ EMPTY, EMPTY @ x and
 * x @ EMPTY are false; EMPTY ~= EMPTY is true).
 *
 * A box may hold NaN when the geometry has NaN coordinates; the predicates
 * then behave as PostGIS's do (plain IEEE comparisons, and a box whose xmin
 * is NaN counts as "box-empty": it overlaps nothing, is contained by and
 * within every other non-box-empty box, and equals every box-empty box).
 * Index keys of inner nodes must therefore be built with hi_box_union(),
 * which never produces NaN (see there), and a query box for which
 * hi_box_has_nan() is true must not be used to prune inner nodes.
 */
extern bool hi_box_overlaps(const HiBox *a, const HiBox *b);
extern bool hi_box_contains(const HiBox *a, const HiBox *b);	/* a ~ b */
extern bool hi_box_within(const HiBox *a, const HiBox *b);	/* a @ b */
extern bool hi_box_equals(const HiBox *a, const HiBox *b);	/* a ~= b */

/* True if any of the four bounds is NaN */
extern bool hi_box_has_nan(const HiBox *a);

/*
 * The box PostGIS gives an EMPTY geometry when it evaluates &&, ~, @ and
 * ~=: none (NULL) up to 3.3, the box-empty box (NaN) in later releases
 * (where EMPTY @ x, x @ EMPTY, EMPTY ~ x and x ~ EMPTY all hold).  The AM
 * layer asks the loaded PostGIS which (hi_geom_set_empty_boxed) before a
 * scan; index entries keep EMPTY as its own kind either way, so an index
 * answers for whichever PostGIS the server runs.
 */
extern void hi_geom_set_empty_boxed(bool boxed);
extern const HiBox *hi_empty_box(void);

/*
 * kNN lower bounds (geom_dist.c).  hi_box_distance() is the ORDER BY value
 * an index hands out for an entry: never above PostGIS's ST_Distance (<->)
 * of any geometries inside the boxes, as computed by PostGIS in double,
 * including its underflow to 0 near the axes and its 0 for unbounded
 * boxes.  NULL (EMPTY) gives +Infinity.  hi_dist_finish() turns the exact
 * distance d of two boxes (or of regions that contain entry boxes) into
 * such a bound: margin is the relative shave (HI_DIST_MARGIN for entry
 * boxes, larger for regions so that a region never comes out after the
 * entries inside it), mag the largest finite coordinate magnitude, and
 * near_axis whether either side spans the x = 0 or y = 0 line (or, for a
 * bound on unseen regions, may).  Caveat, shared with PostGIS's own GiST
 * kNN: a geometry whose box does not enclose it (NaN vertices, which the
 * box skips) or for which ST_Distance itself errs (some arcs) can still
 * see ST_Distance below the bound.
 */
#define HI_DIST_MARGIN (1.0 / 1099511627776.0)	/* 2^-40 */
extern double hi_box_distance(const HiBox *a, const HiBox *b);
extern double hi_dist_finish(double d, double mag, double margin, bool near_axis);
/* a bound is +-FLT_MAX (where PostGIS clamps huge and infinite ones) or NaN */
extern bool hi_box_unbounded(const HiBox *a);
extern bool hi_dist_spans_axis(double xmin, double ymin, double xmax, double ymax);

/*
 * R-tree helpers.  hi_box_union() replaces NaN bounds by the widest float
 * bound (and a box-empty input by the whole plane), so a union never holds
 * NaN and covers every child for all four predicates; build an inner key
 * by copying the first child and then uniting every child, the first
 * included.  The area helpers see boxes through the same normalization.
 */
extern void hi_box_union(HiBox *a, const HiBox *b);	/* a := a U b */
extern double hi_box_area(const HiBox *a);
extern double hi_box_enlargement(const HiBox *a, const HiBox *b);	/* area(a U b) - area(a) */
extern double hi_box_overlap_area(const HiBox *a, const HiBox *b);

/* the centre's position on a Hilbert curve over extent (geom_hilbert.c) */
extern uint64 hi_box_hilbert(const HiBox *box, const HiBox *extent);

/* ---- geom/geom_knn.c ----
 * What the best-first kNN searches of both cores (rtree_knn.c,
 * grid_knn.c) remember of the entries they returned, so that a search
 * restarted after a concurrent split skips them.
 */
/*
 * Entries come out in non-decreasing distance: the ones returned are
 * everything nearer than last_dist and the TIDs returned at exactly
 * last_dist.
 */
typedef struct HiKnnSeen
{
	bool		have_last;
	double		last_dist;
	ItemPointerData *at_last;
	int			nat_last;
	int			maxat_last;
} HiKnnSeen;

extern void hi_knn_seen_init(HiKnnSeen *seen);
extern bool hi_knn_seen(const HiKnnSeen *seen, double dist, ItemPointer tid);
extern void hi_knn_seen_add(HiKnnSeen *seen, double dist, ItemPointer tid);

#endif							/* GEOM_BOX_H */
