/*-------------------------------------------------------------------------
 *
 * geom_point.c
 *	  Exact 2-D points: recognising a point datum, the key an index stores
 *	  for it, and the datum rebuilt from that key for index-only scans.
 *
 * A 2-D point serializes (PostGIS 3, gserialized2.c) as
 *
 *	 varlena header (4 bytes)
 *	 srid[3], flags (0x40: version 2, no Z/M, no box, no extended flags)
 *	 type (uint32, 1 = POINT), npoints (uint32, 1)
 *	 x, y (float8, native byte order)
 *
 * 32 bytes in all: PostGIS never caches a box for a point.  A point in
 * any other form (version 1 from PostGIS 2, a cached box, extended flags)
 * still gets an exact key, but not HI_ENT_CANON: an index-only scan takes
 * its value from the heap instead of rebuilding it (am/am_return.c).
 *
 * Portions of the layout knowledge derive from PostGIS (GPL-2.0-or-later).
 *
 * IDENTIFICATION
 *	  src/geom/geom_point.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "fmgr.h"

#include "compat/hi_compat.h"
#include "geom/geom_box.h"

/* see geom_box.c for the flag byte */
#define GP_FLAG_Z			0x01
#define GP_FLAG_M			0x02
#define GP_FLAG_BBOX		0x04
#define GP_FLAG_GEODETIC	0x08
#define GP2_FLAG_EXTENDED	0x10
#define GP_FLAG_VERSION		0x40
#define GP_TYPE_POINT		1

#define GP_CANON_FLAGS		GP_FLAG_VERSION
#define GP_CANON_SIZE		(VARHDRSZ + 4 + 2 * sizeof(uint32) + 2 * sizeof(double))

/* an SRID as the three bytes of a GSERIALIZED (21 bits, two's complement) */
static void
srid_bytes(int32 srid, uint8 *b)
{
	b[0] = (uint8) ((srid & 0x001F0000) >> 16);
	b[1] = (uint8) ((srid & 0x0000FF00) >> 8);
	b[2] = (uint8) (srid & 0x000000FF);
}

static int32
srid_of(const uint8 *b)
{
	int32		srid = ((int32) b[0] << 16) | ((int32) b[1] << 8) | (int32) b[2];

	return (int32) ((uint32) srid << 11) >> 11;
}

/*
 * Parse a 2-D point with finite coordinates.  Anything else (other types,
 * EMPTY, Z/M, a cached box, NaN or infinite coordinates, geography) is
 * "not a point" here and keeps the box key hi_geom_box() gives it.
 */
static bool
parse_point(Datum geom, double *x, double *y, int32 *srid, bool *canon)
{
	struct varlena *raw = (struct varlena *) DatumGetPointer(geom);
	struct varlena *val = raw;
	const uint8 *d;
	Size		len;
	Size		off = 4;
	uint8		flags;
	uint32		type;
	uint32		npoints;
	bool		ok = false;

	/* a point is 32 bytes: toasted only if someone forced it */
	if (VARATT_IS_EXTERNAL(raw) || VARATT_IS_COMPRESSED(raw))
		val = (struct varlena *) PG_DETOAST_DATUM(geom);
	d = (const uint8 *) VARDATA_ANY(val);
	len = VARSIZE_ANY_EXHDR(val);
	if (len < off + 2 * sizeof(uint32) + 2 * sizeof(double))
		goto done;
	flags = d[3];
	if (flags & (GP_FLAG_Z | GP_FLAG_M | GP_FLAG_BBOX | GP_FLAG_GEODETIC | 0x80))
		goto done;
	if ((flags & GP_FLAG_VERSION) && (flags & GP2_FLAG_EXTENDED))
		off += 8;
	if (len != off + 2 * sizeof(uint32) + 2 * sizeof(double))
		goto done;
	memcpy(&type, d + off, sizeof(uint32));
	memcpy(&npoints, d + off + sizeof(uint32), sizeof(uint32));
	if (type != GP_TYPE_POINT || npoints != 1)
		goto done;
	memcpy(x, d + off + 2 * sizeof(uint32), sizeof(double));
	memcpy(y, d + off + 2 * sizeof(uint32) + sizeof(double), sizeof(double));
	if (!isfinite(*x) || !isfinite(*y))
		goto done;
	*srid = srid_of(d);
	*canon = flags == GP_CANON_FLAGS;
	ok = true;
done:
	if (val != raw)
		pfree(val);
	return ok;
}

HiKeyKind
hi_geom_key(Datum geom, int32 srid, HiBox *key, uint8 *flags)
{
	double		x,
				y;
	int32		s;
	bool		canon;

	*flags = 0;
	if (parse_point(geom, &x, &y, &s, &canon))
	{
		hi_point_set(key, x, y);
		*flags = HI_ENT_POINT | (canon && s == srid ? HI_ENT_CANON : 0);
		return HI_KEY_BOX;
	}
	return hi_geom_box(geom, key);
}

bool
hi_geom_point(Datum geom, double *x, double *y, int32 *srid)
{
	bool		canon;

	return parse_point(geom, x, y, srid, &canon);
}

Datum
hi_point_datum(double x, double y, int32 srid)
{
	char	   *p = palloc(GP_CANON_SIZE);
	uint32		v;

	SET_VARSIZE(p, GP_CANON_SIZE);
	srid_bytes(srid, (uint8 *) p + VARHDRSZ);
	p[VARHDRSZ + 3] = GP_CANON_FLAGS;
	v = GP_TYPE_POINT;
	memcpy(p + VARHDRSZ + 4, &v, sizeof(uint32));
	v = 1;
	memcpy(p + VARHDRSZ + 8, &v, sizeof(uint32));
	memcpy(p + VARHDRSZ + 12, &x, sizeof(double));
	memcpy(p + VARHDRSZ + 20, &y, sizeof(double));
	return PointerGetDatum(p);
}
