/*-------------------------------------------------------------------------
 *
 * geom_sql.c
 *	  SQL-callable view of the geometry keys.
 *
 * hybrid_index_key_box(geometry) shows the float box the index stores for
 * a geometry, so that users and regression tests can see what the index
 * sees (and compare it with PostGIS's own box).
 *
 * IDENTIFICATION
 *	  src/geom/geom_sql.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "utils/array.h"

#include "geom/geom_box.h"

PG_FUNCTION_INFO_V1(hybrid_index_key_box);

/*
 * hybrid_index_key_box(geometry) RETURNS float8[]
 *		{xmin, ymin, xmax, ymax} of the geometry's key box, NULL if EMPTY.
 *
 * The argument is PostGIS's geometry type; we only take its Datum, so this
 * module needs no PostGIS headers.  Declared STRICT: a NULL never gets here.
 */
Datum
hybrid_index_key_box(PG_FUNCTION_ARGS)
{
	HiBox		box;
	Datum		elems[4];
	ArrayType  *result;

	if (hi_geom_box(PG_GETARG_DATUM(0), &box) != HI_KEY_BOX)
		PG_RETURN_NULL();

	/* float4 -> float8 is exact, so the array shows the key bit for bit */
	elems[0] = Float8GetDatum((float8) box.xmin);
	elems[1] = Float8GetDatum((float8) box.ymin);
	elems[2] = Float8GetDatum((float8) box.xmax);
	elems[3] = Float8GetDatum((float8) box.ymax);

	result = construct_array(elems, 4, FLOAT8OID, sizeof(float8),
							 FLOAT8PASSBYVAL, TYPALIGN_DOUBLE);

	PG_RETURN_ARRAYTYPE_P(result);
}
