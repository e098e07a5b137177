/*
 * payload_tree.c
 *	  The B+-tree of INCLUDE rows keyed by heap TID (payload.h).
 *
 * Leaf page: header, then slots (TID, offset of the row's bytes) sorted by
 * TID, growing up; rows' bytes at the end of the page, growing down (the
 * header's reserved field is where they start).  A removed row leaves its
 * bytes behind until the page is compacted, when an insertion needs the
 * room.  Leaves are chained left to right (header link).
 *
 * Inner page: header (level >= 1), then (low TID, child) pairs sorted by
 * TID; a child holds the TIDs from its low key (the first child: from the
 * lowest) up to the next pair's.  Nothing is merged when rows go: a leaf
 * emptied by VACUUM stays, to be filled by later inserts of its range.
 *
 * A split of the rightmost page of a level by a TID above all it holds
 * (a heap filled in order, and every build) starts the new page with that
 * TID alone, so such pages stay full; any other split halves the page.
 *
 * Pages come from the shared page cache directly, in every AM (eFIND's
 * buffers and the grids' buffers know only their own structures), and get
 * their logical page ids from the index's counter like the AM's pages.
 */
#include "postgres.h"

#include "miscadmin.h"

#include "cache/page_cache.h"
#include "payload/payload.h"

typedef struct PlSlot
{
	ItemPointerData tid;
	uint16		off;			/* where the row's bytes start in the page */
} PlSlot;

typedef struct PlDown
{
	ItemPointerData low;
	uint16		pad;
	uint32		child;
} PlDown;

#define PL_HDR			MAXALIGN(sizeof(HiPageHeader))
#define PL_HDR_OF(p)	((HiPageHeader *) (p))
#define PL_SLOTS(p)		((PlSlot *) ((p) + PL_HDR))
#define PL_DOWNS(p)		((PlDown *) ((p) + PL_HDR))
/* rows' bytes start here (leaves) */
#define PL_DATA_LO(p)	(PL_HDR_OF(p)->reserved)

/* the stored bytes of a row: an index tuple from its t_info on */
#define PL_TID_SIZE		sizeof(ItemPointerData)

static inline Size
row_len(const char *bytes)
{
	unsigned short info;

	memcpy(&info, bytes, sizeof(info));
	return (Size) (info & INDEX_SIZE_MASK) - PL_TID_SIZE;
}

/* TID order, inlined (ItemPointerCompare is a call per comparison) */
static inline int
pl_tid_cmp(const ItemPointerData *a, const ItemPointerData *b)
{
	BlockNumber ba = ItemPointerGetBlockNumberNoCheck((ItemPointer) a);
	BlockNumber bb = ItemPointerGetBlockNumberNoCheck((ItemPointer) b);
	OffsetNumber oa,
				ob;

	if (ba != bb)
		return ba < bb ? -1 : 1;
	oa = ItemPointerGetOffsetNumberNoCheck((ItemPointer) a);
	ob = ItemPointerGetOffsetNumberNoCheck((ItemPointer) b);
	return oa < ob ? -1 : (oa > ob ? 1 : 0);
}

static inline int
down_capacity(uint32 page_size)
{
	return (int) ((page_size - PL_HDR) / sizeof(PlDown));
}

static inline char *
pl_page(HiFrame f)
{
	return hi_frame_data(f);
}

/* a page of the tree, pinned; what it must be is checked */
static HiFrame
pl_read(HiIndex *idx, uint32 pageno)
{
	HiFrame		f = hi_cache_read(idx, pageno);
	HiPageHeader *h = PL_HDR_OF(pl_page(f));

	if (h->pageno != pageno || !(h->flags & HI_PAGE_FLAG_PAYLOAD))
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
	h->flags = HI_PAGE_FLAG_PAYLOAD;
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
	return (Size) PL_DATA_LO(page) - (PL_HDR + PL_HDR_OF(page)->nentries * sizeof(PlSlot));
}

/* bytes the rows of a leaf use */
static Size
leaf_used(const char *page)
{
	const PlSlot *s = PL_SLOTS(page);
	Size		used = 0;
	int			i;

	for (i = 0; i < PL_HDR_OF(page)->nentries; i++)
		used += row_len(page + s[i].off);
	return used;
}

/* Rewrite a leaf's rows tightly at the end of the page */
static void
leaf_compact(HiIndex *idx, char *page)
{
	char	   *copy = palloc(idx->page_size);
	PlSlot	   *s = PL_SLOTS(page);
	Size		lo = Min(idx->page_size, PG_UINT16_MAX);
	int			i;

	memcpy(copy, page, idx->page_size);
	for (i = 0; i < PL_HDR_OF(page)->nentries; i++)
	{
		Size		len = row_len(copy + s[i].off);

		lo -= len;
		memcpy(page + lo, copy + s[i].off, len);
		s[i].off = (uint16) lo;
	}
	PL_DATA_LO(page) = (uint16) lo;
	pfree(copy);
}

/* position of the first slot >= tid in a leaf; *found if equal */
static int
leaf_search(const char *page, ItemPointer tid, bool *found)
{
	const PlSlot *s = PL_SLOTS(page);
	int			lo = 0,
				hi = PL_HDR_OF(page)->nentries;

	while (lo < hi)
	{
		int			mid = (lo + hi) / 2;

		if (pl_tid_cmp((ItemPointer) &s[mid].tid, tid) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = lo < PL_HDR_OF(page)->nentries &&
		ItemPointerEquals((ItemPointer) &s[lo].tid, tid);
	return lo;
}

/* the child of an inner page whose range holds tid */
static int
down_search(const char *page, ItemPointer tid)
{
	const PlDown *d = PL_DOWNS(page);
	int			lo = 1,
				hi = PL_HDR_OF(page)->nentries;

	/* the last pair whose low key is <= tid (the first pair: any) */
	while (lo < hi)
	{
		int			mid = (lo + hi) / 2;

		if (pl_tid_cmp((ItemPointer) &d[mid].low, tid) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo - 1;
}

/* put (low, child) into an inner page with room for it, in key order */
static void
down_put(char *page, const PlDown *d)
{
	int			n = PL_HDR_OF(page)->nentries;
	int			at = n == 0 ? 0 : down_search(page, (ItemPointer) &d->low) + 1;

	memmove(&PL_DOWNS(page)[at + 1], &PL_DOWNS(page)[at], sizeof(PlDown) * (Size) (n - at));
	PL_DOWNS(page)[at] = *d;
	PL_HDR_OF(page)->nentries++;
}

/* put a row into a leaf with room for it at slot position pos */
static void
leaf_put(char *page, int pos, ItemPointer tid, const char *data, Size len)
{
	HiPageHeader *h = PL_HDR_OF(page);
	PlSlot	   *s = PL_SLOTS(page);
	Size		lo = PL_DATA_LO(page) - len;

	memmove(&s[pos + 1], &s[pos], sizeof(PlSlot) * (h->nentries - pos));
	memcpy(page + lo, data, len);
	s[pos].tid = *tid;
	s[pos].off = (uint16) lo;
	PL_DATA_LO(page) = (uint16) lo;
	h->nentries++;
}

void
pl_create(HiIndex *idx)
{
	uint32		pageno;
	HiFrame		f = new_page(idx, 0, &pageno);

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
 * Split a full page (frame f, id pageno) for key tid: the new right page
 * gets the upper half of the entries, or nothing when tid is above all of
 * a rightmost page's (append).  Returns the new page's low key in *low
 * and its id; both pages stay pinned by the caller's frames (*rf).
 */
static uint32
split_page(HiIndex *idx, HiFrame f, ItemPointer tid, HiFrame *rf, ItemPointerData *low)
{
	char	   *page = pl_page(f);
	HiPageHeader *h = PL_HDR_OF(page);
	bool		leaf = h->level == 0;
	uint32		rno;
	char	   *right;
	int			n = h->nentries;
	int			keep;
	bool		append;

	*rf = new_page(idx, h->level, &rno);
	right = pl_page(*rf);
	if (leaf)
		append = h->link == HI_INVALID_PAGE &&
			pl_tid_cmp((ItemPointer) &PL_SLOTS(page)[n - 1].tid, tid) < 0;
	else
		append = pl_tid_cmp((ItemPointer) &PL_DOWNS(page)[n - 1].low, tid) < 0 &&
			h->link == HI_INVALID_PAGE;
	keep = append ? n : n / 2;
	if (leaf)
	{
		int			i;

		for (i = keep; i < n; i++)
		{
			const char *bytes = page + PL_SLOTS(page)[i].off;

			leaf_put(right, i - keep, &PL_SLOTS(page)[i].tid, bytes, row_len(bytes));
		}
		h->nentries = keep;
		leaf_compact(idx, page);
		*low = keep < n ? PL_SLOTS(right)[0].tid : *tid;
	}
	else
	{
		memcpy(PL_DOWNS(right), &PL_DOWNS(page)[keep], sizeof(PlDown) * (n - keep));
		PL_HDR_OF(right)->nentries = n - keep;
		h->nentries = keep;
		*low = keep < n ? PL_DOWNS(right)[0].low : *tid;
	}
	PL_HDR_OF(right)->link = h->link;
	h->link = rno;
	return rno;
}

/*
 * Insert (or replace) the row of tid.  The caller holds tree_lock
 * exclusively and has logged the row.
 */
void
pl_insert(HiIndex *idx, ItemPointer tid, const char *data, Size len)
{
	HiMeta	   *meta = &idx->sh->meta;
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
		pos[depth] = down_search(page, tid);
		pageno = PL_DOWNS(page)[pos[depth]].child;
		depth++;
		hi_frame_release(f);
	}
	hi_frame_begin_write(f);
	at = leaf_search(page, tid, &found);
	if (found)
	{
		/* a row replaced (replay of a row already in the checkpoint) */
		memmove(&PL_SLOTS(page)[at], &PL_SLOTS(page)[at + 1],
				sizeof(PlSlot) * (PL_HDR_OF(page)->nentries - at - 1));
		PL_HDR_OF(page)->nentries--;
	}
	if (leaf_free(page) < len + sizeof(PlSlot))
	{
		/* removed rows' bytes: compact if that makes the room */
		Size		tight = idx->page_size - leaf_used(page);

		if (tight >= PL_HDR + (PL_HDR_OF(page)->nentries + 1) * sizeof(PlSlot) + len)
			leaf_compact(idx, page);
	}
	if (leaf_free(page) >= len + sizeof(PlSlot))
	{
		leaf_put(page, at, tid, data, len);
		hi_frame_mark_dirty(f);
		hi_frame_release(f);
		return;
	}

	/* split the leaf, then carry the new page's key up */
	{
		HiFrame		rf;
		ItemPointerData low;
		uint32		rno = split_page(idx, f, tid, &rf, &low);
		char	   *right = pl_page(rf);
		char	   *into = pl_tid_cmp(tid, &low) >= 0 ? right : page;

		at = leaf_search(into, tid, &found);
		leaf_put(into, at, tid, data, len);
		hi_frame_mark_dirty(f);
		hi_frame_mark_dirty(rf);
		hi_frame_release(f);
		hi_frame_release(rf);

		while (depth > 0)
		{
			char	   *up;
			PlDown		d;
			int			n;

			depth--;
			f = pl_read(idx, path[depth]);
			hi_frame_begin_write(f);
			up = pl_page(f);
			d.low = low;
			d.pad = 0;
			d.child = rno;
			n = PL_HDR_OF(up)->nentries;
			if (n < down_capacity(idx->page_size))
			{
				at = pos[depth] + 1;
				memmove(&PL_DOWNS(up)[at + 1], &PL_DOWNS(up)[at], sizeof(PlDown) * (Size) (n - at));
				PL_DOWNS(up)[at] = d;
				PL_HDR_OF(up)->nentries++;
				hi_frame_mark_dirty(f);
				hi_frame_release(f);
				return;
			}
			rno = split_page(idx, f, &d.low, &rf, &low);
			down_put(pl_tid_cmp(&d.low, &low) >= 0 ? pl_page(rf) : up, &d);
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

			f = pl_read(idx, oldroot);
			level = PL_HDR_OF(pl_page(f))->level + 1;
			hi_frame_release(f);
			nf = new_page(idx, level, &newroot);
			np = pl_page(nf);
			ItemPointerSetInvalid(&PL_DOWNS(np)[0].low);
			PL_DOWNS(np)[0].child = oldroot;
			PL_DOWNS(np)[1].low = low;
			PL_DOWNS(np)[1].child = rno;
			PL_HDR_OF(np)->nentries = 2;
			hi_frame_mark_dirty(nf);
			hi_frame_release(nf);
			meta->payload_root = newroot;
		}
	}
}

/* the leaf whose range holds tid, pinned; *fence: where its range ends */
static HiFrame
find_leaf(HiIndex *idx, ItemPointer tid, ItemPointerData *fence, bool *has_fence)
{
	uint32		pageno = idx->sh->meta.payload_root;
	int			depth = 0;

	*has_fence = false;
	for (;;)
	{
		HiFrame		f = pl_read(idx, pageno);
		char	   *page = pl_page(f);
		int			i;

		if (PL_HDR_OF(page)->level == 0)
			return f;
		if (++depth > 32)
			elog(ERROR, "payload tree of index \"%s\" is too deep", hi_index_name(idx));
		i = down_search(page, tid);
		if (i + 1 < PL_HDR_OF(page)->nentries)
		{
			*fence = PL_DOWNS(page)[i + 1].low;
			*has_fence = true;
		}
		pageno = PL_DOWNS(page)[i].child;
		hi_frame_release(f);
	}
}

bool
pl_delete(HiIndex *idx, ItemPointer tid)
{
	ItemPointerData fence;
	bool		has_fence;
	HiFrame		f = find_leaf(idx, tid, &fence, &has_fence);
	char	   *page = pl_page(f);
	bool		found;
	int			at = leaf_search(page, tid, &found);

	if (found)
	{
		hi_frame_begin_write(f);
		memmove(&PL_SLOTS(page)[at], &PL_SLOTS(page)[at + 1],
				sizeof(PlSlot) * (PL_HDR_OF(page)->nentries - at - 1));
		PL_HDR_OF(page)->nentries--;
		hi_frame_mark_dirty(f);
	}
	hi_frame_release(f);
	return found;
}

/* a stored row as an index tuple with its TID, palloc'd */
static IndexTuple
row_tuple(const char *bytes, ItemPointer tid)
{
	Size		len = row_len(bytes);
	IndexTuple	t = palloc(MAXALIGN(len + PL_TID_SIZE));

	memcpy((char *) t + PL_TID_SIZE, bytes, len);
	t->t_tid = *tid;
	return t;
}

/*
 * The rows of sorted TIDs.  The path from the root to the current leaf
 * stays pinned with each level's range: the next TID past the leaf's range
 * climbs only as far as a level whose range holds it and descends from
 * there, so TIDs spread over many leaves cost about a leaf read each, not
 * a descent from the root.  Reads of these pages are not counted as
 * workload by the placement policies (they follow the heap's order, not
 * the queries').
 */
void
pl_lookup_sorted(HiIndex *idx, const ItemPointerData *tids, int n, IndexTuple *rows)
{
	HiFrame		fr[32];
	ItemPointerData hi[32];
	bool		has_hi[32];
	int			depth = -1;		/* deepest pinned level; -1: nothing */
	bool		was = idx->maintenance;
	int			i;

	idx->maintenance = true;
	for (i = 0; i < n; i++)
	{
		ItemPointer tid = (ItemPointer) &tids[i];
		char	   *page;
		bool		found;
		int			at;

		/* climb to the lowest level whose range holds tid */
		while (depth >= 0 && has_hi[depth] && pl_tid_cmp(tid, &hi[depth]) >= 0)
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
			k = down_search(page, tid);
			has_hi[depth + 1] = has_hi[depth];
			if (has_hi[depth])
				hi[depth + 1] = hi[depth];
			if (k + 1 < PL_HDR_OF(page)->nentries)
			{
				hi[depth + 1] = PL_DOWNS(page)[k + 1].low;
				has_hi[depth + 1] = true;
			}
			fr[depth + 1] = pl_read(idx, PL_DOWNS(page)[k].child);
			depth++;
		}
		at = leaf_search(page, tid, &found);
		rows[i] = found ? row_tuple(page + PL_SLOTS(page)[at].off, tid) : NULL;
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
			PL_DOWNS(page)[0].child;

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
			ItemPointerData tid = PL_SLOTS(page)[k].tid;

			if (callback(&tid, cb_state))
			{
				/* logged first: a failed append leaves the row where it was */
				hi_log_append(idx, HI_LOG_PAYLOAD_DEL, InvalidTransactionId, HI_KEY_NULL,
							  NULL, 0, &tid);
				if (!dirty)
					hi_frame_begin_write(f);
				dirty = true;
				memmove(&PL_SLOTS(page)[k], &PL_SLOTS(page)[k + 1],
						sizeof(PlSlot) * (h->nentries - k - 1));
				h->nentries--;
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

#define CHECK_FAIL(...) \
	ereport(ERROR, \
			(errcode(ERRCODE_INDEX_CORRUPTED), \
			 errmsg("index \"%s\" is corrupted", hi_index_name(idx)), \
			 errdetail(__VA_ARGS__)))

/*
 * Check a subtree: every key within [lo, hi), keys sorted, levels one
 * apart; counts its pages and rows.
 */
static void
check_page(HiIndex *idx, uint32 pageno, int level, const ItemPointerData *lo,
		   const ItemPointerData *hi, uint32 *pages, Size *rows)
{
	HiFrame		f = pl_read(idx, pageno);
	char	   *copy = palloc(idx->page_size);
	HiPageHeader *h = (HiPageHeader *) copy;
	int			i;

	memcpy(copy, pl_page(f), idx->page_size);
	hi_frame_release(f);
	(*pages)++;
	if (!(h->flags & HI_PAGE_FLAG_PAYLOAD) || (level >= 0 && h->level != level))
		CHECK_FAIL("Page %u of the INCLUDE rows is not the page its parent expects.", pageno);
	if (h->level == 0)
	{
		if (PL_DATA_LO(copy) > idx->page_size ||
			PL_HDR + h->nentries * sizeof(PlSlot) > PL_DATA_LO(copy))
			CHECK_FAIL("Leaf page %u of the INCLUDE rows has overlapping slots and rows.", pageno);
		for (i = 0; i < h->nentries; i++)
		{
			ItemPointer t = &PL_SLOTS(copy)[i].tid;
			uint16		off = PL_SLOTS(copy)[i].off;

			if ((lo && ItemPointerIsValid(lo) && pl_tid_cmp(t, (ItemPointer) lo) < 0) ||
				(hi && pl_tid_cmp(t, (ItemPointer) hi) >= 0) ||
				(i > 0 && pl_tid_cmp(&PL_SLOTS(copy)[i - 1].tid, t) >= 0))
				CHECK_FAIL("Leaf page %u of the INCLUDE rows holds TID (%u,%u) out of order.",
						   pageno, ItemPointerGetBlockNumberNoCheck(t),
						   ItemPointerGetOffsetNumberNoCheck(t));
			if (off < PL_DATA_LO(copy) || off + row_len(copy + off) > idx->page_size)
				CHECK_FAIL("Leaf page %u of the INCLUDE rows has a row outside the page.", pageno);
		}
		*rows += h->nentries;
	}
	else
	{
		if (h->nentries < 1)
			CHECK_FAIL("Inner page %u of the INCLUDE rows is empty.", pageno);
		for (i = 0; i < h->nentries; i++)
		{
			PlDown	   *d = &PL_DOWNS(copy)[i];
			const ItemPointerData *clo = i == 0 ? lo : &d->low;
			const ItemPointerData *chi = i + 1 < h->nentries ? &PL_DOWNS(copy)[i + 1].low : hi;

			if (i > 1 && pl_tid_cmp(&PL_DOWNS(copy)[i - 1].low, &d->low) >= 0)
				CHECK_FAIL("Inner page %u of the INCLUDE rows has keys out of order.", pageno);
			if (d->child >= idx->sh->meta.npages)
				CHECK_FAIL("Inner page %u of the INCLUDE rows points to page %u, past the end.",
						   pageno, d->child);
			check_page(idx, d->child, h->level - 1, clo, chi, pages, rows);
		}
	}
	pfree(copy);
	CHECK_FOR_INTERRUPTS();
}

const char *
pl_page_layout(const char *page, uint32 page_size)
{
	const HiPageHeader *h = PL_HDR_OF(page);

	if (h->level >= 32)
		return "its level is out of range";
	if (h->level == 0)
	{
		if (h->reserved > page_size ||
			PL_HDR + (Size) h->nentries * sizeof(PlSlot) > h->reserved)
			return "its slots and rows overlap";
	}
	else if (h->nentries > down_capacity(page_size))
		return "its entry count exceeds the page's capacity";
	return NULL;
}

/* hybrid_index_check's part: returns the number of rows */
Size
pl_check(HiIndex *idx)
{
	uint32		pages = 0;
	Size		rows = 0;

	if (!pl_enabled(idx))
		return 0;
	check_page(idx, idx->sh->meta.payload_root, -1, NULL, NULL, &pages, &rows);
	return rows;
}

/* how many pages the tree has (the AMs' checks count every page) */
uint32
pl_pages(HiIndex *idx)
{
	uint32		pages = 0;
	uint32		level_first;

	if (!pl_enabled(idx))
		return 0;
	level_first = idx->sh->meta.payload_root;
	while (level_first != HI_INVALID_PAGE)
	{
		uint32		pageno = level_first;
		uint32		down = HI_INVALID_PAGE;

		while (pageno != HI_INVALID_PAGE)
		{
			HiFrame		f = pl_read(idx, pageno);
			char	   *page = pl_page(f);

			if (pageno == level_first && PL_HDR_OF(page)->level > 0)
				down = PL_DOWNS(page)[0].child;
			pages++;
			pageno = PL_HDR_OF(page)->link;
			hi_frame_release(f);
		}
		level_first = down;
	}
	return pages;
}
