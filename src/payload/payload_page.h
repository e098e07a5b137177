/*
 * payload_page.h
 *	  The page layout of the INCLUDE rows' tree (payload_tree.c), shared
 *	  with its check (payload_check.c); nothing outside payload/ includes
 *	  it.
 */
#ifndef PAYLOAD_PAGE_H
#define PAYLOAD_PAGE_H

#include "cache/page_cache.h"
#include "payload/payload.h"

#define PL_HDR			MAXALIGN(sizeof(HiPageHeader))
#define PL_HDR_OF(p)	((HiPageHeader *) (p))
/* rows' bytes start here (leaves) */
#define PL_DATA_LO(p)	(PL_HDR_OF(p)->reserved)

/* the stored bytes of a row: an index tuple from its t_info on */
#define PL_TID_SIZE		sizeof(ItemPointerData)
#define PL_Z_SIZE		sizeof(uint64)

static inline Size
row_len(const char *bytes)
{
	unsigned short info;

	memcpy(&info, bytes, sizeof(info));
	return (Size) (info & INDEX_SIZE_MASK) - PL_TID_SIZE;
}

/* ---- slots: [z] TID offset (leaves), [z] TID pad child (inner) ---- */

static inline bool
page_z(const char *page)
{
	return (PL_HDR_OF(page)->flags & HI_PAGE_FLAG_PAYLOAD_Z) != 0;
}

static inline Size
key_size(bool z)
{
	return (z ? PL_Z_SIZE : 0) + PL_TID_SIZE;
}

static inline Size
slot_size(bool z)
{
	return key_size(z) + sizeof(uint16);
}

static inline Size
down_size(bool z)
{
	return key_size(z) + sizeof(uint16) + sizeof(uint32);
}

static inline char *
slot_at(const char *page, int i)
{
	return (char *) page + PL_HDR + (Size) i * slot_size(page_z(page));
}

static inline char *
down_at(const char *page, int i)
{
	return (char *) page + PL_HDR + (Size) i * down_size(page_z(page));
}

static inline void
get_key(const char *at, bool z, PlKey *k)
{
	if (z)
	{
		memcpy(&k->z, at, PL_Z_SIZE);
		memcpy(&k->tid, at + PL_Z_SIZE, PL_TID_SIZE);
	}
	else
	{
		k->z = 0;
		memcpy(&k->tid, at, PL_TID_SIZE);
	}
}

static inline void
put_key(char *at, bool z, const PlKey *k)
{
	if (z)
	{
		memcpy(at, &k->z, PL_Z_SIZE);
		memcpy(at + PL_Z_SIZE, &k->tid, PL_TID_SIZE);
	}
	else
		memcpy(at, &k->tid, PL_TID_SIZE);
}

static inline void
slot_key(const char *page, int i, PlKey *k)
{
	get_key(slot_at(page, i), page_z(page), k);
}

static inline uint16
slot_off(const char *page, int i)
{
	uint16		off;

	memcpy(&off, slot_at(page, i) + key_size(page_z(page)), sizeof(off));
	return off;
}

static inline void
slot_set(char *page, int i, const PlKey *k, uint16 off)
{
	char	   *at = slot_at(page, i);

	put_key(at, page_z(page), k);
	memcpy(at + key_size(page_z(page)), &off, sizeof(off));
}

static inline void
down_key(const char *page, int i, PlKey *k)
{
	get_key(down_at(page, i), page_z(page), k);
}

static inline uint32
down_child(const char *page, int i)
{
	uint32		child;

	memcpy(&child, down_at(page, i) + key_size(page_z(page)) + sizeof(uint16), sizeof(child));
	return child;
}

static inline void
down_set(char *page, int i, const PlKey *k, uint32 child)
{
	char	   *at = down_at(page, i);
	uint16		pad = 0;

	put_key(at, page_z(page), k);
	memcpy(at + key_size(page_z(page)), &pad, sizeof(pad));
	memcpy(at + key_size(page_z(page)) + sizeof(uint16), &child, sizeof(child));
}

/* open (n - at) slots' room at position at, or close it (shift < 0) */
static inline void
slots_shift(char *page, int at, int shift, Size size)
{
	int			n = PL_HDR_OF(page)->nentries;

	memmove(page + PL_HDR + (at + shift) * size, page + PL_HDR + at * size,
			size * (Size) (n - at));
}

static inline int
down_capacity(uint32 page_size, bool z)
{
	return (int) ((page_size - PL_HDR) / down_size(z));
}

static inline char *
pl_page(HiFrame f)
{
	return hi_frame_data(f);
}

/* a page of the tree, pinned; what it must be is checked */
extern HiFrame pl_read(HiIndex *idx, uint32 pageno);

#endif							/* PAYLOAD_PAGE_H */
