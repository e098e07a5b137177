/*
 * efind_dsa.c
 *	  Two small containers living in the DSA area, shared by every backend
 *	  using an index: a hash table from page id to a 64-bit value (the
 *	  Write Buffer Table and the Read Buffer Table are such tables, section
 *	  4.2) and a bounded FIFO of page ids (the temporal control's RQ and WQ,
 *	  and 2Q's A1out).
 *
 * The caller holds the lock that protects the structure.  Growing the
 * hash table allocates the new array before touching the old one, so an
 * out-of-memory error leaves the table as it was.
 */
#include "postgres.h"

#include "common/hashfn.h"

#include "efind/efind.h"

#define EFH_MIN_CAP 16

static inline EfHashSlot *
slot_array(dsa_area *a, EfHash *h)
{
	return (EfHashSlot *) dsa_get_address(a, h->slots);
}

static dsa_pointer
alloc_slots(dsa_area *a, uint32 cap)
{
	dsa_pointer p = dsa_allocate_extended(a, sizeof(EfHashSlot) * (Size) cap,
										  DSA_ALLOC_HUGE);
	EfHashSlot *s = (EfHashSlot *) dsa_get_address(a, p);
	uint32		i;

	for (i = 0; i < cap; i++)
	{
		s[i].key = EF_NIL;
		s[i].pad = 0;
		s[i].val = 0;
	}
	return p;
}

void
efh_init(dsa_area *a, EfHash *h, uint32 cap)
{
	uint32		c = EFH_MIN_CAP;

	while (c < cap)
		c <<= 1;
	h->slots = alloc_slots(a, c);
	h->cap = c;
	h->n = 0;
}

void
efh_free(dsa_area *a, EfHash *h)
{
	if (DsaPointerIsValid(h->slots))
		dsa_free(a, h->slots);
	h->slots = InvalidDsaPointer;
	h->cap = 0;
	h->n = 0;
}

EfHashSlot *
efh_slots(dsa_area *a, EfHash *h)
{
	return slot_array(a, h);
}

uint64 *
efh_find(dsa_area *a, EfHash *h, uint32 key)
{
	EfHashSlot *s = slot_array(a, h);
	uint32		mask = h->cap - 1;
	uint32		i = murmurhash32(key) & mask;

	for (;;)
	{
		if (s[i].key == key)
			return &s[i].val;
		if (s[i].key == EF_NIL)
			return NULL;
		i = (i + 1) & mask;
	}
}

static void
put_nogrow(EfHashSlot *s, uint32 cap, uint32 key, uint64 val, uint32 *n)
{
	uint32		mask = cap - 1;
	uint32		i = murmurhash32(key) & mask;

	for (;;)
	{
		if (s[i].key == key)
		{
			s[i].val = val;
			return;
		}
		if (s[i].key == EF_NIL)
		{
			s[i].key = key;
			s[i].val = val;
			(*n)++;
			return;
		}
		i = (i + 1) & mask;
	}
}

/* Insert or replace; the table stays at most half full */
void
efh_put(dsa_area *a, EfHash *h, uint32 key, uint64 val)
{
	Assert(key != EF_NIL);
	if ((h->n + 1) * 2 > h->cap)
	{
		uint32		newcap = h->cap * 2;
		dsa_pointer np = alloc_slots(a, newcap);
		EfHashSlot *ns = (EfHashSlot *) dsa_get_address(a, np);
		EfHashSlot *os = slot_array(a, h);
		uint32		n = 0;
		uint32		i;

		for (i = 0; i < h->cap; i++)
			if (os[i].key != EF_NIL)
				put_nogrow(ns, newcap, os[i].key, os[i].val, &n);
		dsa_free(a, h->slots);
		h->slots = np;
		h->cap = newcap;
		h->n = n;
	}
	put_nogrow(slot_array(a, h), h->cap, key, val, &h->n);
}

/* Remove a key (backward-shift deletion keeps probe chains intact) */
bool
efh_remove(dsa_area *a, EfHash *h, uint32 key)
{
	EfHashSlot *s = slot_array(a, h);
	uint32		mask = h->cap - 1;
	uint32		i = murmurhash32(key) & mask;
	uint32		j;

	for (;;)
	{
		if (s[i].key == key)
			break;
		if (s[i].key == EF_NIL)
			return false;
		i = (i + 1) & mask;
	}
	j = i;
	for (;;)
	{
		uint32		home;

		j = (j + 1) & mask;
		if (s[j].key == EF_NIL)
			break;
		home = murmurhash32(s[j].key) & mask;
		/* may s[j] move to the hole at i?  only if i lies on its probe path */
		if ((j > i && (home <= i || home > j)) ||
			(j < i && (home <= i && home > j)))
		{
			s[i] = s[j];
			i = j;
		}
	}
	s[i].key = EF_NIL;
	s[i].val = 0;
	h->n--;
	return true;
}

/* ---- FIFO of page ids ---- */

void
ef_ring_init(dsa_area *a, EfRing *r, uint32 cap)
{
	r->cap = Max(cap, 1);
	r->head = 0;
	r->n = 0;
	r->ids = dsa_allocate(a, sizeof(uint32) * r->cap);
}

void
ef_ring_free(dsa_area *a, EfRing *r)
{
	if (DsaPointerIsValid(r->ids))
		dsa_free(a, r->ids);
	r->ids = InvalidDsaPointer;
	r->n = 0;
}

/* Append id; returns the id that fell out (EF_NIL if none) */
uint32
ef_ring_push(dsa_area *a, EfRing *r, uint32 id)
{
	uint32	   *ids = (uint32 *) dsa_get_address(a, r->ids);
	uint32		out = EF_NIL;

	if (r->n == r->cap)
	{
		out = ids[r->head];
		r->head = (r->head + 1) % r->cap;
		r->n--;
	}
	ids[(r->head + r->n) % r->cap] = id;
	r->n++;
	return out;
}

/* i-th id from the oldest (EF_NIL for a removed one) */
uint32
ef_ring_get(dsa_area *a, EfRing *r, uint32 i)
{
	uint32	   *ids = (uint32 *) dsa_get_address(a, r->ids);

	return ids[(r->head + i) % r->cap];
}

bool
ef_ring_contains(dsa_area *a, EfRing *r, uint32 id)
{
	uint32	   *ids = (uint32 *) dsa_get_address(a, r->ids);
	uint32		i;

	for (i = 0; i < r->n; i++)
		if (ids[(r->head + i) % r->cap] == id)
			return true;
	return false;
}

/* Forget id (its place becomes a hole that ages out like any id) */
bool
ef_ring_remove(dsa_area *a, EfRing *r, uint32 id)
{
	uint32	   *ids = (uint32 *) dsa_get_address(a, r->ids);
	bool		found = false;
	uint32		i;

	for (i = 0; i < r->n; i++)
		if (ids[(r->head + i) % r->cap] == id)
		{
			ids[(r->head + i) % r->cap] = EF_NIL;
			found = true;
		}
	return found;
}
