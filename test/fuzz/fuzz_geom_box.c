/*
 * fuzz_geom_box.c
 *	  libFuzzer harness for hi_geom_box() (src/geom/geom_box.c), the
 *	  GSERIALIZED (PostGIS v1/v2) box reader that turns every geometry a
 *	  user stores or queries into an index key.
 *
 * Input: byte 0 selects nothing but is kept so that seeds can carry a
 * variant tag; bytes 1.. are the serialized geometry after its varlena
 * header (SRID, flags, optional extended flags and cached box, body).
 *
 * Each input is decoded three ways, as the backend could hand it over:
 *	 - a plain 4-byte-header varlena,
 *	 - a short 1-byte-header varlena (if it fits in 126 bytes),
 *	 - a "compressed" varlena, whose detoasting (header slice first, the
 *	   whole value if needed) this harness emulates.
 * Checks, besides ASan/UBSan: the three answers agree (same key kind and
 * the same box bits, or all three raise an error); an error carries one of
 * the SQLSTATEs the reader documents (XX001 data corrupted, 22023
 * geography, 54001 nesting too deep), never an internal error; a box
 * computed from coordinates is not reversed (except PostGIS's own
 * [FLT_MAX, -FLT_MAX] start value of arcs that yield nothing); no palloc'd
 * memory is leaked across a successful call.
 *
 * HI_FUZZ_WRITE_SEEDS=dir ./fuzz_geom_box  writes a seed corpus and exits.
 */
#include "postgres.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "fmgr.h"

#include "geom/geom_box.h"
#include "pg_shim.h"

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int			LLVMFuzzerInitialize(int *argc, char ***argv);

/* ---- detoasting, emulated for the "compressed" variant ---- */

static struct varlena *fake_compressed = NULL;
static const uint8_t *fake_payload = NULL;
static size_t fake_payload_len = 0;

static struct varlena *
plain_copy(const uint8_t *payload, size_t len)
{
	struct varlena *v = palloc(VARHDRSZ + len);

	SET_VARSIZE(v, VARHDRSZ + len);
	memcpy(VARDATA(v), payload, len);
	return v;
}

struct varlena *
pg_detoast_datum_slice(struct varlena *datum, int32 first, int32 count)
{
	size_t		n;

	if (datum != fake_compressed || first != 0 || count < 0)
	{
		fprintf(stderr, "unexpected detoast_slice(%p, %d, %d)\n", (void *) datum, first, count);
		abort();
	}
	n = Min((size_t) count, fake_payload_len);
	return plain_copy(fake_payload, n);
}

struct varlena *
pg_detoast_datum(struct varlena *datum)
{
	if (datum != fake_compressed)
	{
		/* hi_geom_box must not detoast a value it could read in place */
		fprintf(stderr, "unexpected detoast of a plain value\n");
		abort();
	}
	return plain_copy(fake_payload, fake_payload_len);
}

/* ---- one decode ---- */

typedef struct Outcome
{
	bool		error;
	int			sqlerrcode;
	HiKeyKind	kind;
	HiBox		box;
} Outcome;

static void
decode(struct varlena *v, Outcome *out)
{
	MemoryContext dummy = NULL;
	long		live_before = fuzz_mem_live();

	(void) dummy;
	memset(out, 0, sizeof(*out));
	PG_TRY();
	{
		out->kind = hi_geom_box(PointerGetDatum(v), &out->box);
		if (out->kind == HI_KEY_EMPTY)
			memset(&out->box, 0, sizeof(out->box));
		/* success frees every temporary copy it made */
		if (fuzz_mem_live() != live_before)
		{
			fprintf(stderr, "hi_geom_box leaked %ld chunks\n", fuzz_mem_live() - live_before);
			abort();
		}
	}
	PG_CATCH();
	{
		out->error = true;
		out->sqlerrcode = fuzz_last_error.sqlerrcode;
	}
	PG_END_TRY();
}

static void
check_error_code(const Outcome *o)
{
	if (!o->error)
		return;
	if (o->sqlerrcode == ERRCODE_DATA_CORRUPTED ||
		o->sqlerrcode == ERRCODE_INVALID_PARAMETER_VALUE ||
		o->sqlerrcode == ERRCODE_STATEMENT_TOO_COMPLEX)
		return;
	fprintf(stderr, "unexpected SQLSTATE %s: %s\n", fuzz_sqlstate(o->sqlerrcode),
			fuzz_last_error.message);
	abort();
}

static bool
same(const Outcome *a, const Outcome *b)
{
	if (a->error || b->error)
		return a->error && b->error && a->sqlerrcode == b->sqlerrcode;
	return a->kind == b->kind && memcmp(&a->box, &b->box, sizeof(HiBox)) == 0;
}

static void
report_mismatch(const char *what, const Outcome *a, const Outcome *b)
{
	fprintf(stderr, "%s: plain {err=%d %s kind=%d box=%g %g %g %g} vs {err=%d %s kind=%d box=%g %g %g %g}\n",
			what, a->error, fuzz_sqlstate(a->sqlerrcode), a->kind,
			a->box.xmin, a->box.ymin, a->box.xmax, a->box.ymax,
			b->error, fuzz_sqlstate(b->sqlerrcode), b->kind,
			b->box.xmin, b->box.ymin, b->box.xmax, b->box.ymax);
	abort();
}

static void
check_axis(float4 lo, float4 hi, const char *axis)
{
	if (isnan(lo) || isnan(hi) || lo <= hi)
		return;
	if (lo == FLT_MAX && hi == -FLT_MAX)
		return;					/* PostGIS's own empty-arc start value */
	fprintf(stderr, "computed box reversed on %s: %g > %g\n", axis, lo, hi);
	abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *payload;
	size_t		len;
	struct varlena *plain;
	Outcome		o_plain,
				o_short,
				o_comp;

	if (size < 1 || size > 1024 * 1024)
		return 0;
	payload = data + 1;
	len = size - 1;

	fuzz_begin_input();

	/* plain 4-byte header, in an exactly sized malloc chunk (ASan sees overreads) */
	plain = malloc(VARHDRSZ + len);
	SET_VARSIZE(plain, VARHDRSZ + len);
	memcpy(VARDATA(plain), payload, len);
	decode(plain, &o_plain);
	check_error_code(&o_plain);

	/* short 1-byte header */
	if (len + 1 <= VARATT_SHORT_MAX)
	{
		uint8	   *s = malloc(1 + len);

		SET_VARSIZE_SHORT(s, 1 + len);
		memcpy(s + 1, payload, len);
		decode((struct varlena *) s, &o_short);
		free(s);
		if (!same(&o_plain, &o_short))
			report_mismatch("short header", &o_plain, &o_short);
	}

	/* compressed: hi_geom_box must go through (emulated) detoasting */
	fake_compressed = malloc(VARHDRSZ + 4);
	SET_VARSIZE_COMPRESSED(fake_compressed, VARHDRSZ + 4);
	memset(VARDATA(fake_compressed), 0, 4);
	fake_payload = payload;
	fake_payload_len = len;
	decode(fake_compressed, &o_comp);
	free(fake_compressed);
	fake_compressed = NULL;
	if (!same(&o_plain, &o_comp))
		report_mismatch("compressed", &o_plain, &o_comp);

	/* a box computed from coordinates is never reversed */
	if (!o_plain.error && o_plain.kind == HI_KEY_BOX && len >= 4 && !(payload[3] & 0x04))
	{
		check_axis(o_plain.box.xmin, o_plain.box.xmax, "x");
		check_axis(o_plain.box.ymin, o_plain.box.ymax, "y");
	}

	free(plain);
	fuzz_mem_reset();
	return 0;
}

/* ---- seed corpus ---- */

typedef struct SeedBuf
{
	uint8		d[4096];
	size_t		n;
} SeedBuf;

static void
put(SeedBuf *b, const void *p, size_t n)
{
	memcpy(b->d + b->n, p, n);
	b->n += n;
}

static void
u32(SeedBuf *b, uint32 v)
{
	put(b, &v, 4);
}

static void
f64(SeedBuf *b, double v)
{
	put(b, &v, 8);
}

static void
f32(SeedBuf *b, float v)
{
	put(b, &v, 4);
}

/* variant tag, SRID 4326, flags */
static void
hdr(SeedBuf *b, uint8 flags)
{
	uint8		h[5] = {0, 0x00, 0x10, 0xE6, flags};

	b->n = 0;
	put(b, h, 5);
}

static void
pts(SeedBuf *b, int ndims, int n, const double *xy)
{
	int			i,
				k;

	for (i = 0; i < n; i++)
		for (k = 0; k < ndims; k++)
			f64(b, k < 2 ? xy[2 * i + k] : 7.0 + k);
}

static void
write_seed(const char *dir, int no, const SeedBuf *b)
{
	char		name[32];

	snprintf(name, sizeof(name), "seed_%02d", no);
	fuzz_write_seed(dir, name, NULL, 0, b->d, b->n);
}

static void
write_seeds(const char *dir)
{
	SeedBuf		b;
	int			no = 0;
	const double p1[] = {1, 2};
	const double l3[] = {0, 0, 10, 5, 3, -4};
	const double ring[] = {0, 0, 10, 0, 10, 10, 0, 10, 0, 0};
	const double hole[] = {2, 2, 3, 2, 3, 3, 2, 2};
	const double arc[] = {0, 0, 1, 1, 2, 0};
	const double circle[] = {0, 0, 2, 0, 0, 0};
	const double tri[] = {0, 0, 1, 0, 0, 1, 0, 0};
	double		nanpt[2];

	nanpt[0] = NAN;
	nanpt[1] = 3;
	mkdir(dir, 0755);

	hdr(&b, 0x40);				/* v2 POINT(1 2) */
	u32(&b, 1); u32(&b, 1); pts(&b, 2, 1, p1);
	write_seed(dir, no++, &b);

	hdr(&b, 0x40);				/* v2 POINT EMPTY */
	u32(&b, 1); u32(&b, 0);
	write_seed(dir, no++, &b);

	hdr(&b, 0x40);				/* v2 LINESTRING */
	u32(&b, 2); u32(&b, 3); pts(&b, 2, 3, l3);
	write_seed(dir, no++, &b);

	hdr(&b, 0x40);				/* v2 POLYGON, one ring (padded count) */
	u32(&b, 3); u32(&b, 1); u32(&b, 5); u32(&b, 0); pts(&b, 2, 5, ring);
	write_seed(dir, no++, &b);

	hdr(&b, 0x40);				/* v2 POLYGON with a hole */
	u32(&b, 3); u32(&b, 2); u32(&b, 5); u32(&b, 4); pts(&b, 2, 5, ring); pts(&b, 2, 4, hole);
	write_seed(dir, no++, &b);

	hdr(&b, 0x40);				/* MULTIPOINT(EMPTY, (1 2)) */
	u32(&b, 4); u32(&b, 2);
	u32(&b, 1); u32(&b, 0);
	u32(&b, 1); u32(&b, 1); pts(&b, 2, 1, p1);
	write_seed(dir, no++, &b);

	hdr(&b, 0x40);				/* GEOMETRYCOLLECTION(GEOMETRYCOLLECTION(POINT), LINESTRING) */
	u32(&b, 7); u32(&b, 2);
	u32(&b, 7); u32(&b, 1); u32(&b, 1); u32(&b, 1); pts(&b, 2, 1, p1);
	u32(&b, 2); u32(&b, 3); pts(&b, 2, 3, l3);
	write_seed(dir, no++, &b);

	hdr(&b, 0x41);				/* POINT Z */
	u32(&b, 1); u32(&b, 1); pts(&b, 3, 1, p1);
	write_seed(dir, no++, &b);

	hdr(&b, 0x03);				/* v1 POINT ZM */
	u32(&b, 1); u32(&b, 1); pts(&b, 4, 1, p1);
	write_seed(dir, no++, &b);

	hdr(&b, 0x44);				/* v2 LINESTRING with cached box */
	f32(&b, 0); f32(&b, 10); f32(&b, -4); f32(&b, 5);
	u32(&b, 2); u32(&b, 3); pts(&b, 2, 3, l3);
	write_seed(dir, no++, &b);

	hdr(&b, 0x55);				/* v2 extended flags, cached box, Z */
	u32(&b, 0); u32(&b, 0);
	f32(&b, 0); f32(&b, 10); f32(&b, -4); f32(&b, 5); f32(&b, 9); f32(&b, 9);
	u32(&b, 2); u32(&b, 3); pts(&b, 3, 3, l3);
	write_seed(dir, no++, &b);

	hdr(&b, 0x40);				/* CIRCULARSTRING */
	u32(&b, 8); u32(&b, 3); pts(&b, 2, 3, arc);
	write_seed(dir, no++, &b);

	hdr(&b, 0x40);				/* full circle */
	u32(&b, 8); u32(&b, 3); pts(&b, 2, 3, circle);
	write_seed(dir, no++, &b);

	hdr(&b, 0x40);				/* CURVEPOLYGON(CIRCULARSTRING) */
	u32(&b, 10); u32(&b, 1); u32(&b, 8); u32(&b, 3); pts(&b, 2, 3, circle);
	write_seed(dir, no++, &b);

	hdr(&b, 0x40);				/* COMPOUNDCURVE(LINESTRING, CIRCULARSTRING) */
	u32(&b, 9); u32(&b, 2);
	u32(&b, 2); u32(&b, 2); pts(&b, 2, 2, arc);
	u32(&b, 8); u32(&b, 3); pts(&b, 2, 3, arc);
	write_seed(dir, no++, &b);

	hdr(&b, 0x48);				/* geodetic (geography) point */
	u32(&b, 1); u32(&b, 1); pts(&b, 2, 1, p1);
	write_seed(dir, no++, &b);

	hdr(&b, 0x40);				/* POINT(NaN 3) */
	u32(&b, 1); u32(&b, 1); pts(&b, 2, 1, nanpt);
	write_seed(dir, no++, &b);

	hdr(&b, 0x40);				/* TIN(TRIANGLE) */
	u32(&b, 15); u32(&b, 1); u32(&b, 14); u32(&b, 4); pts(&b, 2, 4, tri);
	write_seed(dir, no++, &b);

	hdr(&b, 0x40);				/* MULTIPOLYGON(POLYGON, POLYGON EMPTY) */
	u32(&b, 6); u32(&b, 2);
	u32(&b, 3); u32(&b, 1); u32(&b, 5); u32(&b, 0); pts(&b, 2, 5, ring);
	u32(&b, 3); u32(&b, 0);
	write_seed(dir, no++, &b);

	hdr(&b, 0x40);				/* MULTISURFACE(CURVEPOLYGON(COMPOUNDCURVE)) */
	u32(&b, 12); u32(&b, 1);
	u32(&b, 10); u32(&b, 1);
	u32(&b, 9); u32(&b, 1); u32(&b, 8); u32(&b, 3); pts(&b, 2, 3, circle);
	write_seed(dir, no++, &b);

	fprintf(stderr, "wrote %d seeds to %s\n", no, dir);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *dir = getenv("HI_FUZZ_WRITE_SEEDS");

	if (dir != NULL && dir[0] != '\0')
	{
		write_seeds(dir);
		exit(0);
	}
	return 0;
}
