/*
 * hi_radix.c
 *	  A stable LSD radix sort of (uint64 key, uint32 value) pairs, for the
 *	  bulk loads' sorts by coordinate: 8-bit digits, one counting pass for
 *	  all digits, and digits every key shares skipped (coordinates of one
 *	  data set share their sign and most of their exponent).  Against an
 *	  inlined comparison sort it does a few sequential passes instead of
 *	  n log n dependent comparisons.
 */
#include "postgres.h"

#include "miscadmin.h"

#include "base/hi_base.h"

#define RADIX_BITS	8
#define RADIX_SIZE	(1 << RADIX_BITS)
#define RADIX_PASSES (64 / RADIX_BITS)

/* below this many pairs insertion sort is faster than the passes */
#define RADIX_MIN	64

/* A key that orders as the double does (NaNs after +infinity) */
uint64
hi_radix_key_double(double v)
{
	uint64		u;

	if (v == 0)
		v = 0;					/* -0 orders as 0 */
	memcpy(&u, &v, sizeof(u));
	/* negative: flip all bits; positive: flip the sign bit */
	return (u & UINT64CONST(0x8000000000000000)) ? ~u : u | UINT64CONST(0x8000000000000000);
}

static void
insertion_sort(uint64 *key, uint32 *val, Size n)
{
	Size		i;

	for (i = 1; i < n; i++)
	{
		uint64		k = key[i];
		uint32		v = val[i];
		Size		j = i;

		while (j > 0 && key[j - 1] > k)
		{
			key[j] = key[j - 1];
			val[j] = val[j - 1];
			j--;
		}
		key[j] = k;
		val[j] = v;
	}
}

/*
 * Sort key[0..n) with val alongside, stably.  tmpkey and tmpval are
 * scratch arrays of n; returns true if the result ended in them, false if
 * in key and val.
 */
bool
hi_radix_sort(uint64 *key, uint32 *val, Size n, uint64 *tmpkey, uint32 *tmpval)
{
	Size	   *count;
	uint64	   *sk = key,
			   *dk = tmpkey;
	uint32	   *sv = val,
			   *dv = tmpval;
	bool		in_tmp = false;
	Size		i;
	int			p;

	if (n < RADIX_MIN)
	{
		insertion_sort(key, val, n);
		return false;
	}
	count = palloc0(sizeof(Size) * RADIX_PASSES * RADIX_SIZE);
	for (i = 0; i < n; i++)
	{
		uint64		k = key[i];

		for (p = 0; p < RADIX_PASSES; p++)
			count[p * RADIX_SIZE + ((k >> (p * RADIX_BITS)) & (RADIX_SIZE - 1))]++;
	}
	for (p = 0; p < RADIX_PASSES; p++)
	{
		Size	   *c = count + p * RADIX_SIZE;
		int			shift = p * RADIX_BITS;
		Size		sum = 0;
		int			d;

		/* every key has this digit: the pass would not move anything */
		if (c[(sk[0] >> shift) & (RADIX_SIZE - 1)] == n)
			continue;
		for (d = 0; d < RADIX_SIZE; d++)
		{
			Size		t = c[d];

			c[d] = sum;
			sum += t;
		}
		for (i = 0; i < n; i++)
		{
			Size		at = c[(sk[i] >> shift) & (RADIX_SIZE - 1)]++;

			dk[at] = sk[i];
			dv[at] = sv[i];
		}
		{
			uint64	   *tk = sk;
			uint32	   *tv = sv;

			sk = dk;
			sv = dv;
			dk = tk;
			dv = tv;
		}
		in_tmp = !in_tmp;
		CHECK_FOR_INTERRUPTS();
	}
	pfree(count);
	return in_tmp;
}
