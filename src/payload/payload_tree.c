/*
 * payload_tree.c
 *	  The B+-tree of INCLUDE rows keyed by (z, TID) (payload.h).
 *
 * Leaf page: header, then slots (key, offset of the row's bytes) sorted by
 * key, growing up; rows' bytes at the end of the page, growing down (the
 * header's reserved field is where they start).  A removed row leaves its
 * bytes behind until the page is compacted, when an insertion needs the
 * room.  Leaves are chained left to right (header link).
 *
 * Inner page: header (level >= 1), then (low key, child) pairs sorted by
 * key; a child holds the keys from its low key (the first child: from the
 * lowest) up to the next pair's.  Nothing is merged when rows go: a leaf
 * emptied by VACUUM stays, to be filled by later inserts of its range.
 *
 * A split of the rightmost page of a level by a key above all it holds
 * (every build, which inserts in key order) starts the new page with that
 * key alone, so such pages stay full; any other split halves the page.
 *
 * Each page says how it is keyed: with HI_PAGE_FLAG_PAYLOAD_Z its slots
 * hold (z, TID), without it (trees built by 0.2.0) the TID alone and every
 * z reads as 0.  Slots are read and written through the accessors of
 * payload_page.h (memcpy: inner pairs of (z, TID) are 20 bytes, not 8-byte
 * aligned).  The tree's check is payload_check.c.
 *
 * Pages come from the shared page cache directly, in every AM (eFIND's
 * buffers and the grids' buffers know only their own structures), and get
 * their logical page ids from the index's counter like the AM's pages.
 */
#include "postgres.h"

#include "miscadmin.h"

#include "payload/payload_page.h"

bool
pl_keyed_z(HiIndex *idx)
{
	return idx->sh->meta.payload_keys == PL_KEYS_Z;
}

/* a key as this tree holds it: z is 0 in a tree keyed by TID alone */
static inline PlKey
tree_key(HiIndex *idx, const PlKey *k)
{
	PlKey		r = *k;

	if (!pl_keyed_z(idx))
		r.z = 0;
	return r;
}

/* a page of the tree, pinned; what it must be is checked */
HiFrame
pl_read(HiIndex *idx, uint32 pageno)
{
	HiFrame		f = hi_cache_read(idx, pageno);
	HiPageHeader *h = PL_HDR_OF(pl_page(f));

	if (h->pageno != pageno || !(h->flags & HI_PAGE_FLAG_PAYLOAD) ||
		page_z(pl_page(f)) != pl_keyed_z(idx))
	{
		uint32		got = h->pageno;
		uint16		flags = h->flags;

		hi_frame_release(f);
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" is corrupted", hi_index_name(idx)),
				 errdetail("Page %u of its INCLUDE rows reads as page %u with flags 0x%x.",
						   pageno, got, flags),
				 errhint("REINDEX the index.")));
	}
	return f;
}

static void
page_init(HiIndex *idx, char *page, uint32 pageno, uint16 level)
{
	HiPageHeader *h = PL_HDR_OF(page);

	memset(page, 0, idx->page_size);
	h->pageno = pageno;
	h->level = level;
	h->flags = HI_PAGE_FLAG_PAYLOAD | (pl_keyed_z(idx) ? HI_PAGE_FLAG_PAYLOAD_Z : 0);
	h->nentries = 0;
	h->link = HI_INVALID_PAGE;
	h->reserved = (uint16) Min(idx->page_size, PG_UINT16_MAX);
}

/* a new page of the tree: its id from the index's counter */
static HiFrame
new_page(HiIndex *idx, uint16 level, uint32 *pageno)
{
	HiFrame		f;

	*pageno = idx->sh->meta.npages++;
	f = hi_cache_new_page(idx, *pageno);
	page_init(idx, pl_page(f), *pageno, level);
	return f;
}

/* free bytes of a leaf between its slots and its rows */
static inline Size
leaf_free(const char *page)
{
	return (Size) PL_DATA_LO(page) -
		(PL_HDR + PL_HDR_OF(page)->nentries * slot_size(page_z(page)));
}

/* bytes the rows of a leaf use */
static Size
leaf_used(const char *page)
{
	Size		used = 0;
	int			i;

	for (i = 0; i < PL_HDR_OF(page)->nentries; i++)
		used += row_len(page + slot_off(page, i));
	return used;
}

/* Rewrite a leaf's rows tightly at the end of the page */
static void
leaf_compact(HiIndex *idx, char *page)
{
	char	   *copy = palloc(idx->page_size);
	Size		lo = Min(idx->page_size, PG_UINT16_MAX);
	int			i;

	memcpy(copy, page, idx->page_size);
	for (i = 0; i < PL_HDR_OF(page)->nentries; i++)
	{
		uint16		off = slot_off(copy, i);
		Size		len = row_len(copy + off);
		PlKey		k;

		lo -= len;
		memcpy(page + lo, copy + off, len);
		slot_key(copy, i, &k);
		slot_set(page, i, &k, (uint16) lo);
	}
	PL_DATA_LO(page) = (uint16) lo;
	pfree(copy);
}

/* position of the first slot >= key in a leaf; *found if equal */
static int
leaf_search(const char *page, const PlKey *key, bool *found)
{
	int			lo = 0,
				hi = PL_HDR_OF(page)->nentries;
	PlKey		k;

	while (lo < hi)
	{
		int			mid = (lo + hi) / 2;

		slot_key(page, mid, &k);
		if (pl_key_cmp(&k, key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = false;
	if (lo < PL_HDR_OF(page)->nentries)
	{
		slot_key(page, lo, &k);
		*found = pl_key_cmp(&k, key) == 0;
	}
	return lo;
}

/* the child of an inner page whose range holds key */
static int
down_search(const char *page, const PlKey *key)
{
	int			lo = 1,
				hi = PL_HDR_OF(page)->nentries;
	PlKey		k;

	/* the last pair whose low key is <= key (the first pair: any) */
	while (lo < hi)
	{
		int			mid = (lo + hi) / 2;

		down_key(page, mid, &k);
		if (pl_key_cmp(&k, key) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo - 1;
}

/* put (low, child) into an inner page with room for it, at position at */
static void
down_put_at(char *page, int at, const PlKey *low, uint32 child)
{
	slots_shift(page, at, 1, down_size(page_z(page)));
	down_set(page, at, low, child);
	PL_HDR_OF(page)->nentries++;
}

/* put (low, child) into an inner page with room for it, in key order */
static void
down_put(char *page, const PlKey *low, uint32 child)
{
	int			n = PL_HDR_OF(page)->nentries;

	down_put_at(page, n == 0 ? 0 : down_search(page, low) + 1, low, child);
}

/* put a row into a leaf with room for it at slot position pos */
static void
leaf_put(char *page, int pos, const PlKey *key, const char *data, Size len)
{
	Size		lo = PL_DATA_LO(page) - len;

	slots_shift(page, pos, 1, slot_size(page_z(page)));
	memcpy(page + lo, data, len);
	slot_set(page, pos, key, (uint16) lo);
	PL_DATA_LO(page) = (uint16) lo;
	PL_HDR_OF(page)->nentries++;
}

/* remove slot pos of a leaf (its bytes stay until a compaction) */
static void
leaf_remove(char *page, int pos)
{
	slots_shift(page, pos + 1, -1, slot_size(page_z(page)));
	PL_HDR_OF(page)->nentries--;
}

void
pl_create(HiIndex *idx)
{
	uint32		pageno;
	HiFrame		f;

	idx->sh->meta.payload_keys = PL_KEYS_Z;
	f = new_page(idx, 0, &pageno);
	hi_frame_mark_dirty(f);
	hi_frame_release(f);
	idx->sh->meta.payload_root = pageno;
}

bool
pl_enabled(HiIndex *idx)
{
	return idx->sh->meta.payload_root != HI_INVALID_PAGE;
}

/*
 * Split a full page (frame f, id pageno) for key: the new right page gets
 * the upper half of the entries, or nothing when key is above all of a
 * rightmost page's (append).  Returns the new page's low key in *low and
 * its id; both pages stay pinned by the caller's frames (*rf).
 */
static uint32
split_page(HiIndex *idx, HiFrame f, const PlKey *key, HiFrame *rf, PlKey *low)
{
	char	   *page = pl_page(f);
	HiPageHeader *h = PL_HDR_OF(page);
	bool		leaf = h->level == 0;
	uint32		rno;
	char	   *right;
	int			n = h->nentries;
	int			keep;
	PlKey		last;
	int			i;

	*rf = new_page(idx, h->level, &rno);
	right = pl_page(*rf);
	if (leaf)
		slot_key(page, n - 1, &last);
	else
		down_key(page, n - 1, &last);
	keep = h->link == HI_INVALID_PAGE && pl_key_cmp(&last, key) < 0 ? n : n / 2;
	if (leaf)
	{
		for (i = keep; i < n; i++)
		{
			const char *bytes = page + slot_off(page, i);
			PlKey		k;

			slot_key(page, i, &k);
			leaf_put(right, i - keep, &k, bytes, row_len(bytes));
		}
		h->nentries = keep;
		leaf_compact(idx, page);
		if (keep < n)
			slot_key(right, 0, low);
		else
			*low = *key;
	}
	else
	{
		for (i = keep; i < n; i++)
		{
			PlKey		k;

			down_key(page, i, &k);
			down_set(right, i - keep, &k, down_child(page, i));
		}
		PL_HDR_OF(right)->nentries = n - keep;
		h->nentries = keep;
		if (keep < n)
			down_key(right, 0, low);
		else
			*low = *key;
	}
	PL_HDR_OF(right)->link = h->link;
	h->link = rno;
	return rno;
}

/*
 * Insert (or replace) the row of key.  The caller holds tree_lock
 * exclusively and has logged the row.
 */
void
pl_insert(HiIndex *idx, const PlKey *key_in, const char *data, Size len)
{
	HiMeta	   *meta = &idx->sh->meta;
	PlKey		key = tree_key(idx, key_in);
	uint32		path[32];
	int			pos[32];
	int			depth = 0;
	uint32		pageno = meta->payload_root;
	HiFrame		f;
	char	   *page;
	bool		found;
	int			at;

	if (len > PL_MAX_ROW(idx->page_size))
		elog(ERROR, "payload row of %zu bytes for index \"%s\" exceeds %u bytes",
			 len, hi_index_name(idx), PL_MAX_ROW(idx->page_size));
	/* descend, remembering the path */
	for (;;)
	{
		f = pl_read(idx, pageno);
		page = pl_page(f);
		if (PL_HDR_OF(page)->level == 0)
			break;
		if (depth >= lengthof(path))
			elog(ERROR, "payload tree of index \"%s\" is too deep", hi_index_name(idx));
		path[depth] = pageno;
		pos[depth] = down_search(page, &key);
		pageno = down_child(page, pos[depth]);
		depth++;
		hi_frame_release(f);
	}
	hi_frame_begin_write(f);
	at = leaf_search(page, &key, &found);
	if (found)
		leaf_remove(page, at);	/* replaced (replay of a row already in the
								 * checkpoint) */
	if (leaf_free(page) < len + slot_size(page_z(page)))
	{
		/* removed rows' bytes: compact if that makes the room */
		Size		tight = idx->page_size - leaf_used(page);

		if (tight >= PL_HDR + (PL_HDR_OF(page)->nentries + 1) * slot_size(page_z(page)) + len)
			leaf_compact(idx, page);
	}
	if (leaf_free(page) >= len + slot_size(page_z(page)))
	{
		leaf_put(page, at, &key, data, len);
		hi_frame_mark_dirty(f);
		hi_frame_release(f);
		return;
	}

	/* split the leaf, then carry the new page's key up */
	{
		HiFrame		rf;
		PlKey		low;
		uint32		rno = split_page(idx, f, &key, &rf, &low);
		char	   *into = pl_key_cmp(&key, &low) >= 0 ? pl_page(rf) : page;

		at = leaf_search(into, &key, &found);
		leaf_put(into, at, &key, data, len);
		hi_frame_mark_dirty(f);
		hi_frame_mark_dirty(rf);
		hi_frame_release(f);
		hi_frame_release(rf);

		while (depth > 0)
		{
			char	   *up;
			PlKey		dlow;
			uint32		dchild;

			depth--;
			f = pl_read(idx, path[depth]);
			hi_frame_begin_write(f);
			up = pl_page(f);
			dlow = low;
			dchild = rno;
			if (PL_HDR_OF(up)->nentries < down_capacity(idx->page_size, page_z(up)))
			{
				down_put_at(up, pos[depth] + 1, &dlow, dchild);
				hi_frame_mark_dirty(f);
				hi_frame_release(f);
				return;
			}
			rno = split_page(idx, f, &dlow, &rf, &low);
			down_put(pl_key_cmp(&dlow, &low) >= 0 ? pl_page(rf) : up, &dlow, dchild);
			hi_frame_mark_dirty(f);
			hi_frame_mark_dirty(rf);
			hi_frame_release(f);
			hi_frame_release(rf);
		}

		/* the root split: a new root over the two */
		{
			uint32		oldroot = meta->payload_root;
			uint32		newroot;
			HiFrame		nf;
			char	   *np;
			uint16		level;
			PlKey		lowest;

			f = pl_read(idx, oldroot);
			level = PL_HDR_OF(pl_page(f))->level + 1;
			hi_frame_release(f);
			nf = new_page(idx, level, &newroot);
			np = pl_page(nf);
			lowest.z = 0;
			ItemPointerSetInvalid(&lowest.tid);
			down_set(np, 0, &lowest, oldroot);
			down_set(np, 1, &low, rno);
			PL_HDR_OF(np)->nentries = 2;
			hi_frame_mark_dirty(nf);
			hi_frame_release(nf);
			meta->payload_root = newroot;
		}
	}
}

/* the leaf whose range holds key, pinned */
static HiFrame
find_leaf(HiIndex *idx, const PlKey *key)
{
	uint32		pageno = idx->sh->meta.payload_root;
	int			depth = 0;

	for (;;)
	{
		HiFrame		f = pl_read(idx, pageno);
		char	   *page = pl_page(f);

		if (PL_HDR_OF(page)->level == 0)
			return f;
		if (++depth > 32)
			elog(ERROR, "payload tree of index \"%s\" is too deep", hi_index_name(idx));
		pageno = down_child(page, down_search(page, key));
		hi_frame_release(f);
	}
}

bool
pl_delete(HiIndex *idx, const PlKey *key_in)
{
	PlKey		key = tree_key(idx, key_in);
	HiFrame		f = find_leaf(idx, &key);
	char	   *page = pl_page(f);
	bool		found;
	int			at = leaf_search(page, &key, &found);

	if (found)
	{
		hi_frame_begin_write(f);
		leaf_remove(page, at);
		hi_frame_mark_dirty(f);
	}
	hi_frame_release(f);
	return found;
}

/*
 * A build's rows in key order: appended to the rightmost leaf, which stays
 * pinned between rows, instead of a descent from the root per row; a row
 * that does not fit (or is not above the leaf's last key) goes through
 * pl_insert, whose append split starts the next rightmost leaf.
 */
void
pl_bulk_put(PlBulk *b, const PlKey *key_in, const char *data, Size len)
{
	HiIndex    *idx = b->idx;
	PlKey		key = tree_key(idx, key_in);

	if (b->pinned)
	{
		char	   *page = pl_page(b->f);
		HiPageHeader *h = PL_HDR_OF(page);
		PlKey		last;

		if (h->nentries > 0)
			slot_key(page, h->nentries - 1, &last);
		if (len <= PL_MAX_ROW(idx->page_size) && h->link == HI_INVALID_PAGE &&
			(h->nentries == 0 || pl_key_cmp(&last, &key) < 0) &&
			leaf_free(page) >= len + slot_size(page_z(page)))
		{
			hi_frame_begin_write(b->f);
			leaf_put(page, h->nentries, &key, data, len);
			hi_frame_mark_dirty(b->f);
			return;
		}
		hi_frame_release(b->f);
		b->pinned = false;
	}
	pl_insert(idx, &key, data, len);
	b->f = find_leaf(idx, &key);
	b->pinned = true;
}

void
pl_bulk_end(PlBulk *b)
{
	if (b->pinned)
		hi_frame_release(b->f);
	b->pinned = false;
}

/* a stored row as an index tuple with its TID, palloc'd */
static IndexTuple
row_tuple(const char *bytes, const ItemPointerData *tid)
{
	Size		len = row_len(bytes);
	IndexTuple	t = palloc(MAXALIGN(len + PL_TID_SIZE));

	memcpy((char *) t + PL_TID_SIZE, bytes, len);
	t->t_tid = *tid;
	return t;
}

/*
 * The rows of sorted keys.  The path from the root to the current leaf
 * stays pinned with each level's range: the next key past the leaf's range
 * climbs only as far as a level whose range holds it and descends from
 * there, so keys spread over many leaves cost about a leaf read each, not
 * a descent from the root, and the keys of one window, close together in
 * Z-order, share their leaves.  Reads of these pages are not counted as
 * workload by the placement policies.
 */
void
pl_lookup_sorted(HiIndex *idx, const PlKey *keys, int n, IndexTuple *rows)
{
	HiFrame		fr[32];
	PlKey		hi[32];
	bool		has_hi[32];
	int			depth = -1;		/* deepest pinned level; -1: nothing */
	bool		was = idx->maintenance;
	int			i;

	idx->maintenance = true;
	for (i = 0; i < n; i++)
	{
		PlKey		key = tree_key(idx, &keys[i]);
		char	   *page;
		bool		found;
		int			at;

		/* climb to the lowest level whose range holds key */
		while (depth >= 0 && has_hi[depth] && pl_key_cmp(&key, &hi[depth]) >= 0)
			hi_frame_release(fr[depth--]);
		if (depth < 0)
		{
			fr[0] = pl_read(idx, idx->sh->meta.payload_root);
			has_hi[0] = false;
			depth = 0;
		}
		/* and down to its leaf */
		for (;;)
		{
			int			k;

			page = pl_page(fr[depth]);
			if (PL_HDR_OF(page)->level == 0)
				break;
			if (depth + 1 >= lengthof(fr))
				elog(ERROR, "payload tree of index \"%s\" is too deep", hi_index_name(idx));
			k = down_search(page, &key);
			has_hi[depth + 1] = has_hi[depth];
			if (has_hi[depth])
				hi[depth + 1] = hi[depth];
			if (k + 1 < PL_HDR_OF(page)->nentries)
			{
				down_key(page, k + 1, &hi[depth + 1]);
				has_hi[depth + 1] = true;
			}
			fr[depth + 1] = pl_read(idx, down_child(page, k));
			depth++;
		}
		at = leaf_search(page, &key, &found);
		rows[i] = found ? row_tuple(page + slot_off(page, at), &keys[i].tid) : NULL;
		if ((i & 1023) == 1023)
			CHECK_FOR_INTERRUPTS();
	}
	while (depth >= 0)
		hi_frame_release(fr[depth--]);
	idx->maintenance = was;
}

/* the leftmost leaf's id */
static uint32
first_leaf(HiIndex *idx)
{
	uint32		pageno = idx->sh->meta.payload_root;

	for (;;)
	{
		HiFrame		f = pl_read(idx, pageno);
		char	   *page = pl_page(f);
		uint32		next = PL_HDR_OF(page)->level == 0 ? HI_INVALID_PAGE :
			down_child(page, 0);

		hi_frame_release(f);
		if (next == HI_INVALID_PAGE)
			return pageno;
		pageno = next;
	}
}

void
pl_bulk_delete(HiIndex *idx, IndexBulkDeleteCallback callback, void *cb_state)
{
	uint32		pageno = first_leaf(idx);

	while (pageno != HI_INVALID_PAGE)
	{
		HiFrame		f = pl_read(idx, pageno);
		char	   *page = pl_page(f);
		HiPageHeader *h = PL_HDR_OF(page);
		int			k = 0;
		bool		dirty = false;

		while (k < h->nentries)
		{
			PlKey		key;

			slot_key(page, k, &key);
			if (callback(&key.tid, cb_state))
			{
				HiBox		zbox;

				/* logged first, with its z: a failed append leaves the row */
				memset(&zbox, 0, sizeof(zbox));
				memcpy(&zbox, &key.z, sizeof(key.z));
				hi_log_append(idx, HI_LOG_PAYLOAD_DEL, InvalidTransactionId, HI_KEY_NULL,
							  &zbox, 0, &key.tid);
				if (!dirty)
					hi_frame_begin_write(f);
				dirty = true;
				leaf_remove(page, k);
				hi_frame_mark_dirty(f);
			}
			else
				k++;
		}
		pageno = h->link;
		hi_frame_release(f);
		CHECK_FOR_INTERRUPTS();
	}
}

