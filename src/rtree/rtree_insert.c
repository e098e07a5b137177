/*
 * rtree_insert.c
 *	  One-by-one insertion (Guttman's Insert, ChooseLeaf, AdjustTree) and
 *	  the redo of logged changes.
 *
 * An insertion runs under the index's tree_lock held exclusively.  It first
 * descends and pins the whole path, then counts how many pages will split
 * and obtains every new page it needs, and only then changes pages: the
 * steps that can fail (I/O, cache exhaustion) all happen before the first
 * page is modified, so an error never leaves a half-split tree behind.
 */
#include "postgres.h"

#include "miscadmin.h"

#include "payload/payload.h"
#include "rtree/rtree.h"
#include "log/redo_log.h"
#include "core/hi_core.h"

static uint32
page_capacity(HiIndex *idx, int level)
{
	return level > 0 ? rt_internal_capacity(idx->page_size) :
		rt_leaf_capacity(idx->page_size);
}

static int
min_fill(HiIndex *idx, int level)
{
	return Max(1, (int) (page_capacity(idx, level) * RT_MIN_FILL_PCT / 100));
}

/* Start an empty tree: a root leaf with no entries */
void
rt_init_empty(HiIndex *idx)
{
	HiMeta	   *meta = &idx->sh->meta;
	uint32		root = meta->npages++;
	HiFrame		f = rt_new_page(idx, root);

	rt_page_init(rt_data(idx, f), root, 0, 0);
	rt_release(idx, f);
	meta->root = root;
	meta->height = 1;
}

/*
 * ChooseSubtree: least enlargement, then least area.  The boxes' areas
 * and enlargements are computed first, in a loop of its own that the
 * compiler can vectorise, then the choice is made; the arithmetic is the
 * same as a single loop's.  This runs over every entry of every inner
 * page an insertion passes, most of its CPU after the page merges, so
 * the scratch space is static (an inner page of the largest size) rather
 * than allocated per call.
 */
#define RT_MAX_INTERNAL ((HI_PAGE_SIZE_MAX - RT_HEADER_SIZE) / sizeof(RtInternalEntry))

int
rt_choose_entry(const char *page, const HiBox *box)
{
	static double area[RT_MAX_INTERNAL];
	static double enl[RT_MAX_INTERNAL];
	const HiPageHeader *h = RT_PAGE_HDR(page);
	const RtInternalEntry *e = RT_INTERNAL(page);
	int			n = Min(h->nentries, RT_MAX_INTERNAL);
	int			best = 0;
	int			i;

	for (i = 0; i < n; i++)
	{
		area[i] = rt_box_area(&e[i].box);
		enl[i] = rt_box_enlargement(&e[i].box, box, area[i]);
	}
	for (i = 1; i < n; i++)
		if (enl[i] < enl[best] || (enl[i] == enl[best] && area[i] < area[best]))
			best = i;
	return best;
}

/*
 * Split the entries of a full page plus one more between the page (left)
 * and a new page (right).  entries holds all n of them.
 */
static void
split_into(HiIndex *idx, char *left, char *right, const char *entries, int n,
		   Size esz, HiBox *lbox, HiBox *rbox)
{
	HiBox	   *boxes = palloc(sizeof(HiBox) * n);
	bool	   *toright = palloc(sizeof(bool) * n);
	int			level = RT_PAGE_HDR(left)->level;
	char	   *ldst = left + RT_HEADER_SIZE;
	char	   *rdst = right + RT_HEADER_SIZE;
	int			nl = 0,
				nr = 0;
	int			i;

	for (i = 0; i < n; i++)
		boxes[i] = *rt_entry_box(entries + i * esz, esz, &boxes[i]);
	rt_quadratic_split(boxes, n, min_fill(idx, level), toright);
	for (i = 0; i < n; i++)
	{
		if (toright[i])
		{
			memcpy(rdst + nr * esz, entries + i * esz, esz);
			if (nr++ == 0)
				*rbox = boxes[i];
			else
				hi_box_union(rbox, &boxes[i]);
		}
		else
		{
			memcpy(ldst + nl * esz, entries + i * esz, esz);
			if (nl++ == 0)
				*lbox = boxes[i];
			else
				hi_box_union(lbox, &boxes[i]);
		}
	}
	RT_PAGE_HDR(left)->nentries = nl;
	RT_PAGE_HDR(right)->nentries = nr;
	pfree(boxes);
	pfree(toright);
}

/* Append to the null list (NULL and EMPTY geometries) */
static void
null_insert(HiIndex *idx, HiKeyKind kind, ItemPointer tid)
{
	HiMeta	   *meta = &idx->sh->meta;
	HiFrame		tail = -1;
	RtLeafEntry *e;
	char	   *page;

	if (meta->null_tail != HI_INVALID_PAGE)
	{
		tail = rt_read(idx, meta->null_tail);
		if (RT_PAGE_HDR(rt_data(idx, tail))->nentries >=
			rt_leaf_capacity(idx->page_size))
		{
			uint32		newno = meta->npages++;
			HiFrame		nf = rt_new_page(idx, newno);

			rt_page_init(rt_data(idx, nf), newno, 0, HI_PAGE_FLAG_NULLS);
			rt_begin_write(idx, tail);
			rt_set_null_next(rt_data(idx, tail), newno);
			rt_mark_dirty(idx, tail);
			rt_release(idx, tail);
			tail = nf;
			meta->null_tail = newno;
		}
	}
	else
	{
		uint32		newno = meta->npages++;

		tail = rt_new_page(idx, newno);
		rt_page_init(rt_data(idx, tail), newno, 0, HI_PAGE_FLAG_NULLS);
		meta->null_head = meta->null_tail = newno;
	}
	rt_begin_write(idx, tail);
	page = rt_data(idx, tail);
	e = &RT_LEAF(page)[RT_PAGE_HDR(page)->nentries++];
	memset(e, 0, sizeof(*e));
	e->tid = *tid;
	e->kind = (uint8) kind;
	rt_mark_dirty(idx, tail);
	/* count it before the release: efind may flush (and fail) there */
	meta->nnulls++;
	rt_release(idx, tail);
}

/*
 * Insert an entry; tree_lock is held exclusively and the change is logged.
 */
void
rt_insert_locked(HiIndex *idx, HiKeyKind kind, const HiBox *key, uint8 flags,
				 ItemPointer tid)
{
	HiBox		boxbuf;
	const HiBox *box = hi_ent_box(key, flags, &boxbuf);
	HiMeta	   *meta = &idx->sh->meta;
	int			height = meta->height;
	HiFrame    *path = palloc(sizeof(HiFrame) * (height + 1));
	int		   *slot = palloc(sizeof(int) * (height + 1));
	HiFrame    *newf;
	uint32	   *newno;
	int			nsplit;
	bool	   *changes;
	bool		root_split;
	int			l;
	uint32		pageno;
	RtLeafEntry leafe;
	RtInternalEntry carry;
	HiBox		lbox,
				rbox;

	if (kind != HI_KEY_BOX)
	{
		null_insert(idx, kind, tid);
		return;
	}

	/* ChooseLeaf: descend, pinning the path */
	pageno = meta->root;
	for (l = height - 1; l >= 0; l--)
	{
		path[l] = rt_read(idx, pageno);
		if (l > 0)
		{
			char	   *page = rt_data(idx, path[l]);

			slot[l] = rt_choose_entry(page, box);
			pageno = RT_INTERNAL(page)[slot[l]].child;
		}
	}

	/* plan: how many levels split, and the new pages they need */
	nsplit = 0;
	while (nsplit < height &&
		   RT_PAGE_HDR(rt_data(idx, path[nsplit]))->nentries + 1 >
		   page_capacity(idx, nsplit))
		nsplit++;
	root_split = (nsplit == height);
	newf = palloc(sizeof(HiFrame) * (nsplit + 1));
	newno = palloc(sizeof(uint32) * (nsplit + 1));
	for (l = 0; l < nsplit + (root_split ? 1 : 0); l++)
	{
		newno[l] = meta->npages;
		newf[l] = rt_new_page(idx, newno[l]);
		meta->npages++;
	}

	/*
	 * Which pages change: those that take the entry or split, and above
	 * them the ancestors whose entry the union with the box changes.
	 * Only those are opened for writing and marked dirty: for efind an
	 * untouched inner page then costs no snapshot, no compare and no
	 * write-buffer record.  The test is the union itself, not a
	 * containment predicate: hi_box_union() widens NaN bounds, which
	 * PostGIS's "contains" would call covered.
	 */
	changes = palloc(sizeof(bool) * height);
	for (l = 0; l < height; l++)
	{
		if (l <= nsplit)
			changes[l] = true;
		else
		{
			HiBox		was = RT_INTERNAL(rt_data(idx, path[l]))[slot[l]].box;
			HiBox		grown = was;

			hi_box_union(&grown, box);
			changes[l] = memcmp(&grown, &was, sizeof(HiBox)) != 0;
		}
	}

	/* apply, bottom up */
	for (l = 0; l < height; l++)
		if (changes[l])
			rt_begin_write(idx, path[l]);

	memset(&leafe, 0, sizeof(leafe));
	leafe.key = *key;
	leafe.flags = flags;
	leafe.tid = *tid;
	leafe.kind = HI_KEY_BOX;

	for (l = 0; l < height; l++)
	{
		char	   *page = rt_data(idx, path[l]);
		HiPageHeader *h = RT_PAGE_HDR(page);
		Size		esz = l == 0 ? sizeof(RtLeafEntry) : sizeof(RtInternalEntry);
		const char *newentry = l == 0 ? (const char *) &leafe : (const char *) &carry;

		if (l > 0)
		{
			/* the child below split: tighten its entry to the left half */
			RT_INTERNAL(page)[slot[l]].box = lbox;
		}

		if (l < nsplit)
		{
			char	   *all = palloc((h->nentries + 1) * esz);
			char	   *right = rt_data(idx, newf[l]);

			memcpy(all, page + RT_HEADER_SIZE, h->nentries * esz);
			memcpy(all + h->nentries * esz, newentry, esz);
			rt_page_init(right, newno[l], l, 0);
			split_into(idx, page, right, all, h->nentries + 1, esz, &lbox, &rbox);
			pfree(all);
			rt_mark_dirty(idx, path[l]);
			rt_mark_dirty(idx, newf[l]);
			carry.box = rbox;
			carry.child = newno[l];
			continue;
		}

		/* room on this level: add the entry (if any is carried) and stop */
		if (l == 0 || l == nsplit)
		{
			memcpy(page + RT_HEADER_SIZE + h->nentries * esz, newentry, esz);
			h->nentries++;
		}
		rt_mark_dirty(idx, path[l]);

		/* AdjustTree: ancestors' boxes now also cover the new entry */
		for (l = l + 1; l < height; l++)
		{
			char	   *up = rt_data(idx, path[l]);

			if (!changes[l])
				continue;
			hi_box_union(&RT_INTERNAL(up)[slot[l]].box, box);
			rt_mark_dirty(idx, path[l]);
		}
		break;
	}

	if (root_split)
	{
		uint32		rootno = newno[nsplit];
		char	   *root = rt_data(idx, newf[nsplit]);
		RtInternalEntry *e;

		rt_page_init(root, rootno, height, 0);
		e = RT_INTERNAL(root);
		e[0].box = lbox;
		e[0].child = meta->root;
		e[1] = carry;
		RT_PAGE_HDR(root)->nentries = 2;
		rt_mark_dirty(idx, newf[nsplit]);
		meta->root = rootno;
		meta->height++;
	}
	if (nsplit > 0)
		pg_atomic_fetch_add_u64(&idx->sh->split_count, 1);
	/* count it before the releases: efind may flush (and fail) there */
	meta->nentries++;

	for (l = 0; l < height; l++)
		rt_release(idx, path[l]);
	for (l = 0; l < nsplit + (root_split ? 1 : 0); l++)
		rt_release(idx, newf[l]);
	pfree(path);
	pfree(slot);
	pfree(newf);
	pfree(newno);
	pfree(changes);
}

/* Apply one log record during recovery (tree_lock held exclusively) */
void
rt_redo(HiIndex *idx, const HiLogRecord *rec)
{
	ItemPointerData tid = rec->tid;

	if (pl_redo(idx, rec))
		return;
	if (rec->type == HI_LOG_INSERT)
		rt_insert_locked(idx, (HiKeyKind) rec->iskey, &rec->key, rec->flags, &tid);
	else if (rec->type == HI_LOG_DELETE)
		rt_delete_entry(idx, (HiKeyKind) rec->iskey, &rec->key, rec->flags, &tid);
}
