/*
 * geom_hilbert.c
 *	  Hilbert curve keys of box centres: an order in which boxes close in
 *	  the plane come close together; and Z-order keys over the whole float
 *	  plane (hi_key_zorder), which need no extent.
 *
 * Used to order a batch of insertions (base/hi_hilbert_order.c): entries
 * that follow each other then mostly go to the same leaf or bucket through
 * the same inner or directory pages.
 * The key is the position of the centre's cell on Hilbert's curve of order
 * 16 over the given extent, computed level by level: the quadrant's place
 * on the curve, then the quadrant turned so its sub-curve starts at its
 * origin.
 */
#include "postgres.h"

#include <float.h>

#include "geom/geom_box.h"

#define HILBERT_ORDER	16
#define HILBERT_CELLS	(1u << HILBERT_ORDER)

/* The cell of v on an axis from lo to lo + span, clamped (NaN: 0) */
static uint32
cell_of(double v, double lo, double span)
{
	double		c;

	if (!(span > 0))
		return 0;
	c = (v - lo) / span * HILBERT_CELLS;
	if (!(c >= 0))
		return 0;
	if (c >= HILBERT_CELLS - 1)
		return HILBERT_CELLS - 1;
	return (uint32) c;
}

uint64
hi_box_hilbert(const HiBox *box, const HiBox *extent)
{
	uint32		x = cell_of(((double) box->xmin + box->xmax) / 2, extent->xmin,
							(double) extent->xmax - extent->xmin);
	uint32		y = cell_of(((double) box->ymin + box->ymax) / 2, extent->ymin,
							(double) extent->ymax - extent->ymin);
	uint64		d = 0;
	uint32		s;

	for (s = HILBERT_CELLS / 2; s > 0; s /= 2)
	{
		uint32		rx = (x & s) ? 1 : 0;
		uint32		ry = (y & s) ? 1 : 0;

		d += (uint64) s * s * ((3 * rx) ^ ry);
		if (ry == 0)
		{
			uint32		t;

			if (rx == 1)
			{
				x = HILBERT_CELLS - 1 - x;
				y = HILBERT_CELLS - 1 - y;
			}
			t = x;
			x = y;
			y = t;
		}
	}
	return d;
}

/*
 * A float's bits as an unsigned integer in the float's order (negative
 * values flipped whole, positive ones with the sign bit set), so that
 * interleaving them needs no extent.
 */
static inline uint32
float_order_bits(float4 f)
{
	uint32		u;

	memcpy(&u, &f, sizeof(u));
	return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

/* a double as a float, clamped to the float range (NaN stays NaN) */
static inline float4
clamp_float(double v)
{
	if (v > FLT_MAX)
		return FLT_MAX;
	if (v < -FLT_MAX)
		return -FLT_MAX;
	return (float4) v;
}

/* the bits of v spread to the even positions of a 64-bit word */
static inline uint64
spread_bits(uint32 v)
{
	uint64		x = v;

	x = (x | (x << 16)) & UINT64CONST(0x0000FFFF0000FFFF);
	x = (x | (x << 8)) & UINT64CONST(0x00FF00FF00FF00FF);
	x = (x | (x << 4)) & UINT64CONST(0x0F0F0F0F0F0F0F0F);
	x = (x | (x << 2)) & UINT64CONST(0x3333333333333333);
	x = (x | (x << 1)) & UINT64CONST(0x5555555555555555);
	return x;
}

uint64
hi_key_zorder(HiKeyKind kind, const HiBox *key, uint8 flags)
{
	float4		cx,
				cy;

	if (kind != HI_KEY_BOX)
		return 0;
	if (flags & HI_ENT_POINT)
	{
		double		x,
					y;

		hi_point_get(key, &x, &y);
		cx = clamp_float(x);
		cy = clamp_float(y);
	}
	else
	{
		cx = clamp_float(((double) key->xmin + key->xmax) / 2);
		cy = clamp_float(((double) key->ymin + key->ymax) / 2);
	}
	return (spread_bits(float_order_bits(cx)) << 1) | spread_bits(float_order_bits(cy));
}
