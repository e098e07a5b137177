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

#include <float.h>
#include <math.h>

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
	HI_KEY_NULL = 2,			/* SQL NULL */
	HI_KEY_UNKNOWN = 3			/* answers only: a TID whose entry the
								 * search did not keep (the heap has the
								 * value) */
} HiKeyKind;

/*
 * Entry flags, stored beside the kind in every entry (leaves, buckets,
 * write buffers, log and WAL records).  An entry of a 2-D point with
 * finite coordinates keeps them exactly: its 16 key bytes are the two
 * float8 x and y instead of the float4 box (the same size), so operators,
 * kNN distances and index-only scans need no heap.  Every reader of an
 * entry's box goes through hi_ent_box(), which rounds the point outward
 * to the box PostGIS itself gives it.  Indexes built before exact points
 * have no flags set and are read as before.
 */
#define HI_ENT_POINT	0x01	/* key holds float8 x, y (kind HI_KEY_BOX) */
#define HI_ENT_CANON	0x02	/* and the datum is that point exactly as
								 * PostGIS 3 serializes it, with the SRID of
								 * the index column's type modifier (or 0):
								 * an index-only scan can rebuild it */

/* One index entry of a geometry: its key and the heap row it stands for */
typedef struct HiKeyItem
{
	HiBox		key;			/* HI_KEY_BOX only: box, or point (flags) */
	ItemPointerData tid;
	uint8		kind;			/* HiKeyKind */
	uint8		flags;			/* HI_ENT_* */
} HiKeyItem;

/*
 * Extract the 2-D float box of a geometry datum (which may be toasted;
 * only the header slice is detoasted when a cached box is present).
 * Returns HI_KEY_EMPTY for empty geometries (box left unset). Raises an
 * ERROR with errcode for data that is not a valid GSERIALIZED geometry.
 */
extern HiKeyKind hi_geom_box(Datum geom, HiBox *box);

/*
 * The key an index stores for a geometry datum: hi_geom_box()'s box, or
 * for a finite 2-D point its exact coordinates (*flags gets HI_ENT_POINT,
 * and HI_ENT_CANON when the datum is the canonical serialization of the
 * point with SRID srid).
 */
extern HiKeyKind hi_geom_key(Datum geom, int32 srid, HiBox *key, uint8 *flags);

/* The coordinates of a point key */
static inline void
hi_point_get(const HiBox *key, double *x, double *y)
{
	memcpy(x, (const char *) key, sizeof(double));
	memcpy(y, (const char *) key + sizeof(double), sizeof(double));
}

static inline void
hi_point_set(HiBox *key, double x, double y)
{
	memcpy((char *) key, &x, sizeof(double));
	memcpy((char *) key + sizeof(double), &y, sizeof(double));
}

/* The BOX2DF PostGIS gives the point (x, y): rounded outward to float */
extern void hi_point_box_slow(double x, double y, HiBox *box);

/*
 * The floats next to a finite double d below and above it (both d's float
 * when d is one), as gs_float_down/up in geom_box.c give them; false for
 * what those clamp (NaN, beyond the float range) and for a d that rounds to
 * zero.  Without a branch on the rounding's direction, which is a coin
 * toss for real coordinates: a window over 1,000 partitions rounds about
 * a million of them, and nextafterf() and the mispredicted branches were
 * 7 % of such a query.
 */
static inline bool
hi_float_bounds(double d, float4 *lo, float4 *hi)
{
	union
	{
		float4		f;
		uint32		u;
	}			a, b;
	double		back;

	if (unlikely(!(fabs(d) < (double) FLT_MAX)))
		return false;
	a.f = (float4) d;
	back = (double) a.f;
	if (back == d)
	{
		*lo = *hi = a.f;
		return true;
	}
	if (unlikely(a.f == 0))
		return false;
	/* one step of the magnitude away from zero or toward it, toward d */
	b.u = a.u + (((d > back) == (a.f > 0)) ? 1 : (uint32) -1);
	*lo = Min(a.f, b.f);
	*hi = Max(a.f, b.f);
	return true;
}

static inline void
hi_point_box(double x, double y, HiBox *box)
{
	if (unlikely(!hi_float_bounds(x, &box->xmin, &box->xmax) ||
				 !hi_float_bounds(y, &box->ymin, &box->ymax)))
		hi_point_box_slow(x, y, box);
}

/*
 * The box of a stored entry's key: the key itself, or the box of its
 * point (in *tmp).  Every reader of an entry's box comes through here.
 */
static inline const HiBox *
hi_ent_box(const HiBox *key, uint8 flags, HiBox *tmp)
{
	double		x,
				y;

	if (likely(!(flags & HI_ENT_POINT)))
		return key;
	hi_point_get(key, &x, &y);
	hi_point_box(x, y, tmp);
	return tmp;
}

/*
 * A canonical point datum (HI_ENT_CANON) rebuilt from its coordinates:
 * byte for byte the GSERIALIZED PostGIS 3 writes for POINT(x y) with SRID
 * srid (palloc'd, 4-byte varlena header).
 */
extern Datum hi_point_datum(double x, double y, int32 srid);

/*
 * If geom is a 2-D point with finite coordinates, its coordinates and
 * SRID (any serialization); else false.  For exact kNN distances.
 */
extern bool hi_geom_point(Datum geom, double *x, double *y, int32 *srid);

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

/*
 * The Z-order value of a stored key's centre (a point: the point), over
 * the whole float plane (no extent: the floats' own bits interleaved); 0
 * for NULL and EMPTY.  Keys the INCLUDE rows of an index (am_include.c).
 */
extern uint64 hi_key_zorder(HiKeyKind kind, const HiBox *key, uint8 flags);

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

/*
 * Exact kNN distances.  The AM may give the kNN searches of both cores a
 * function that returns the exact ORDER BY value of an entry (true) or
 * declines (false: the box distance, a lower bound, is used and the
 * executor rechecks).  For a point entry and a point query it is the
 * distance PostGIS computes; an index-only scan asks it for every entry.
 */
typedef bool (*HiExactDistFn) (void *arg, const HiKeyItem *item, double *dist);

typedef struct HiKnnExact
{
	HiExactDistFn fn;
	void	   *arg;
	void	   *arg2;			/* the AM's own */
} HiKnnExact;

static inline double
hi_knn_entry_dist(const HiKnnExact *ex, const HiBox *query, const HiKeyItem *it,
				  bool *exact)
{
	HiBox		tmp;
	double		d;

	if (ex != NULL && ex->fn != NULL && ex->fn(ex->arg, it, &d))
	{
		*exact = true;
		return d;
	}
	*exact = false;
	return hi_box_distance(hi_ent_box(&it->key, it->flags, &tmp), query);
}

extern void hi_knn_seen_init(HiKnnSeen *seen);
extern bool hi_knn_seen(const HiKnnSeen *seen, double dist, ItemPointer tid);
extern void hi_knn_seen_add(HiKnnSeen *seen, double dist, ItemPointer tid);

#endif							/* GEOM_BOX_H */
