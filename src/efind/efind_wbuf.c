/*
 * efind_wbuf.c
 *	  The Write Buffer Table (section 4.2, Goal 1): a hash table from page
 *	  id to (h, mod_count, timestamp, status, mod_tree), in the DSA area.
 *
 * Recording (Alg. 1, lines 2-20).  The R-tree core changes a private copy
 * of a page; when it marks the page dirty, the copy is compared with the
 * version the core read (or last recorded), entry by entry: an entry whose
 * identifier (child page id in an internal page, heap TID in a leaf) is
 * new or whose content changed is stored in the page's mod_tree as its
 * latest version, and an entry that disappeared is stored as removed.
 * mod_count counts these entry modifications (plus header changes, such as
 * the link of a null-list page), the logical clock stamps the entry.
 *
 * Merging (Alg. 2, line 14).  A page's current version is its stored
 * version with each modified entry replaced by its latest version, removed
 * entries dropped and entries absent from the stored version appended in
 * identifier order.  A NEW page has no stored version: its mod_tree holds
 * every entry.
 *
 * The caller holds wb_lock: shared to look up and merge, exclusive to
 * record and remove.
 */
#include "postgres.h"

#include "cache/page_cache.h"
#include "rtree/rtree.h"
#include "efind/efind.h"
#include "storage/storage.h"

#define MIN_NODES 8
/* entries compared at once when looking for the changed ones (ef_wb_record) */
#define RECORD_CHUNK 16

typedef struct KeyPos
{
	uint64		key;
	int			pos;
} KeyPos;

static inline EfWbEntry *
entry_at(Ef *ef, dsa_pointer p)
{
	return (EfWbEntry *) dsa_get_address(ef->area, p);
}

static inline EfMod *
nodes_of(Ef *ef, EfWbEntry *e)
{
	return DsaPointerIsValid(e->nodes) ? (EfMod *) dsa_get_address(ef->area, e->nodes) : NULL;
}

static inline Size
entry_size(int level)
{
	return level > 0 ? sizeof(RtInternalEntry) : sizeof(RtLeafEntry);
}

static inline uint32
page_capacity(uint32 page_size, int level)
{
	return level > 0 ? rt_internal_capacity(page_size) : rt_leaf_capacity(page_size);
}

/* The identifier of an entry: child page id, or heap TID */
static inline uint64
entry_key(const char *ent, int level)
{
	if (level > 0)
		return ((const RtInternalEntry *) ent)->child;
	else
	{
		const RtLeafEntry *l = (const RtLeafEntry *) ent;

		return ((uint64) ItemPointerGetBlockNumberNoCheck(&l->tid) << 16) |
			ItemPointerGetOffsetNumberNoCheck(&l->tid);
	}
}

/* A key's bit in a 64-bit signature of a set of keys */
static inline uint64
key_bit(uint64 key)
{
	return UINT64CONST(1) << ((key * UINT64CONST(0x9E3779B97F4A7C15)) >> 58);
}

/* Write the entry a node holds into ent */
static void
node_to_entry(const EfMod *m, int level, char *ent)
{
	if (level > 0)
	{
		RtInternalEntry *e = (RtInternalEntry *) ent;

		e->box = m->box;
		e->child = (uint32) m->key;
	}
	else
	{
		RtLeafEntry *e = (RtLeafEntry *) ent;

		memset(e, 0, sizeof(*e));
		e->key = m->box;
		e->flags = m->flags;
		ItemPointerSet(&e->tid, (BlockNumber) (m->key >> 16), (OffsetNumber) (m->key & 0xFFFF));
		e->kind = m->kind;
	}
}

Size
ef_wb_entry_bytes(const EfWbEntry *e)
{
	return sizeof(EfWbEntry) + (Size) e->nnodes * sizeof(EfMod);
}

EfWbEntry *
ef_wb_lookup(Ef *ef, uint32 pageno)
{
	uint64	   *v = efh_find(ef->area, &ef->st->wb, pageno);

	return v ? entry_at(ef, (dsa_pointer) *v) : NULL;
}

/* A new Write Buffer Table entry (Alg. 1, line 11) */
static EfWbEntry *
create_entry(Ef *ef, uint32 pageno, uint8 status)
{
	dsa_pointer p = dsa_allocate0(ef->area, sizeof(EfWbEntry));
	EfWbEntry  *e = entry_at(ef, p);

	e->pageno = pageno;
	e->status = status;
	e->root = EF_NIL;
	e->nodes = InvalidDsaPointer;
	PG_TRY();
	{
		efh_put(ef->area, &ef->st->wb, pageno, (uint64) p);
	}
	PG_CATCH();
	{
		dsa_free(ef->area, p);
		PG_RE_THROW();
	}
	PG_END_TRY();
	ef->st->wb_status[status]++;
	ef->st->wb_bytes += sizeof(EfWbEntry);
	return e;
}

/* Room for one more node in the entry's mod_tree */
static void
ensure_room(Ef *ef, EfWbEntry *e)
{
	uint32		newcap;
	dsa_pointer np;

	if (e->nnodes < e->capnodes)
		return;
	newcap = Max(MIN_NODES, e->capnodes * 2);
	np = dsa_allocate_extended(ef->area, sizeof(EfMod) * (Size) newcap, DSA_ALLOC_HUGE);
	if (e->nnodes > 0)
		memcpy(dsa_get_address(ef->area, np), nodes_of(ef, e), sizeof(EfMod) * (Size) e->nnodes);
	if (DsaPointerIsValid(e->nodes))
		dsa_free(ef->area, e->nodes);
	e->nodes = np;
	e->capnodes = newcap;
}

/* Keep the latest version of one entry (or its removal) in the mod_tree */
static void
put_mod(Ef *ef, EfWbEntry *e, int level, const char *ent, uint8 op)
{
	EfMod	   *nodes;
	uint32		before;
	uint32		i;

	ensure_room(ef, e);
	nodes = nodes_of(ef, e);
	before = e->nnodes;
	e->root = ef_mt_insert(nodes, &e->nnodes, e->root, entry_key(ent, level), &i);
	memcpy(&nodes[i].box, ent, sizeof(HiBox));	/* the box or key comes first */
	nodes[i].kind = level > 0 ? 0 : ((const RtLeafEntry *) ent)->kind;
	nodes[i].flags = level > 0 ? 0 : ((const RtLeafEntry *) ent)->flags;
	nodes[i].op = op;
	if (e->nnodes > before)
		ef->st->wb_bytes += sizeof(EfMod);
	e->mod_count++;
}

static int
cmp_keypos(const void *a, const void *b)
{
	uint64		ka = ((const KeyPos *) a)->key;
	uint64		kb = ((const KeyPos *) b)->key;

	return ka < kb ? -1 : (ka > kb ? 1 : 0);
}

static KeyPos *
sorted_keys(const char *entries, int from, int to, int level, Size esz)
{
	KeyPos	   *k = palloc(sizeof(KeyPos) * Max(to - from, 1));
	int			i;

	for (i = from; i < to; i++)
	{
		k[i - from].key = entry_key(entries + i * esz, level);
		k[i - from].pos = i;
	}
	qsort(k, to - from, sizeof(KeyPos), cmp_keypos);
	for (i = 1; i < to - from; i++)
		if (k[i].key == k[i - 1].key)
			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("efind: page holds two entries with identifier " UINT64_FORMAT,
							k[i].key)));
	return k;
}

/*
 * Record what changed between before (the version the R-tree core read,
 * or recorded last) and after (its private copy now).  Alg. 1, lines 2-20.
 */
void
ef_wb_record(Ef *ef, uint32 pageno, const char *before, const char *after, bool is_new)
{
	const HiPageHeader *hb = RT_PAGE_HDR(before);
	const HiPageHeader *ha = RT_PAGE_HDR(after);
	int			level = ha->level;
	Size		esz = entry_size(level);
	const char *eb = before + RT_HEADER_SIZE;
	const char *ea = after + RT_HEADER_SIZE;
	int			nb = hb->nentries;
	int			na = ha->nentries;
	EfWbEntry  *e = ef_wb_lookup(ef, pageno);
	int			i;
	uint32		mods_before;

	if (nb > 0 && hb->level != ha->level)
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("efind: page %u changed its level from %u to %u",
						pageno, hb->level, ha->level)));
	if (e == NULL)
		e = create_entry(ef, pageno, is_new ? EF_STATUS_NEW : EF_STATUS_MOD);
	mods_before = e->mod_count;
	/* a header change (a new page, a null-list page's link) is a modification */
	if (hb->level != ha->level || hb->flags != ha->flags || hb->link != ha->link)
		e->mod_count++;
	e->level = ha->level;
	e->flags = ha->flags;
	e->link = ha->link;

	/*
	 * The common case: entries kept their places, some changed or came
	 * last.  Runs of entries equal byte for byte (nearly all of a leaf an
	 * insertion appended to) are passed over a chunk per compare: an equal
	 * entry has an equal key and needs no modification.
	 */
	i = 0;
	while (i < Min(nb, na))
	{
		const char *b = eb + i * esz;
		const char *a = ea + i * esz;
		int			run = Min(Min(nb, na) - i, RECORD_CHUNK);

		if (memcmp(a, b, run * esz) == 0)
		{
			i += run;
			continue;
		}
		for (; run > 0; run--, i++, a += esz, b += esz)
		{
			if (entry_key(b, level) != entry_key(a, level))
				break;
			if (memcmp(a, b, esz) != 0)
				put_mod(ef, e, level, a, EF_OP_PUT);
		}
		if (run > 0)
			break;				/* a key differs here: match the rest by key */
	}

	/* the rest (moves, removals, splits): match by identifier */
	if (i < nb || i < na)
	{
		KeyPos	   *kb = sorted_keys(eb, i, nb, level, esz);
		KeyPos	   *ka = sorted_keys(ea, i, na, level, esz);
		int			x = 0,
					y = 0;
		int			cb = nb - i,
					ca = na - i;

		while (x < cb || y < ca)
		{
			if (y >= ca || (x < cb && kb[x].key < ka[y].key))
			{
				put_mod(ef, e, level, eb + kb[x].pos * esz, EF_OP_DEL);
				x++;
			}
			else if (x >= cb || ka[y].key < kb[x].key)
			{
				put_mod(ef, e, level, ea + ka[y].pos * esz, EF_OP_PUT);
				y++;
			}
			else
			{
				if (memcmp(eb + kb[x].pos * esz, ea + ka[y].pos * esz, esz) != 0)
					put_mod(ef, e, level, ea + ka[y].pos * esz, EF_OP_PUT);
				x++;
				y++;
			}
		}
		pfree(kb);
		pfree(ka);
	}

	if (e->mod_count != mods_before || e->stamp == 0)
	{
		e->stamp = ++ef->st->clock;
		pg_atomic_fetch_add_u64(&ef->slot->c.records, 1);
		pg_atomic_fetch_add_u64(&ef->slot->c.modifications, e->mod_count - mods_before);
	}
}

/*
 * The current version of a buffered page into out (page_size bytes):
 * stored (its stored version; NULL for a NEW page) merged with the
 * entry's modifications.  Alg. 2, lines 3 and 14.
 */
void
ef_wb_assemble(Ef *ef, EfWbEntry *e, const char *stored, char *out)
{
	uint32		psize = ef->st->page_size;
	int			level = e->level;
	Size		esz = entry_size(level);
	uint32		cap = page_capacity(psize, level);
	HiPageHeader *h = RT_PAGE_HDR(out);
	char	   *dst = out + RT_HEADER_SIZE;
	EfMod	   *nodes = nodes_of(ef, e);
	uint32	   *order = palloc(sizeof(uint32) * Max(e->nnodes, 1));
	bool	   *used = palloc0(sizeof(bool) * Max(e->nnodes, 1));
	uint32		n = 0;
	uint32		norder = 0;
	uint32		i;

	if (e->status == EF_STATUS_DEL)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("efind: page %u was deleted", e->pageno)));
	if (e->status == EF_STATUS_MOD && stored == NULL)
		elog(ERROR, "efind: merging page %u without its stored version", e->pageno);

	memset(out, 0, psize);
	if (e->status == EF_STATUS_MOD)
	{
		const HiPageHeader *sh = RT_PAGE_HDR(stored);
		const char *src = stored + RT_HEADER_SIZE;
		uint64		lo = 1,
					hi = 0,
					sig = 0;

		/*
		 * Most stored entries have no modification: their keys are outside
		 * the modifications' range (new rows' TIDs follow the stored ones)
		 * or miss a 64-bit signature of the modified keys, and need no
		 * search of the tree.  An insertion's descent merges every buffered
		 * page it passes; a search per entry was a fifth of its CPU.
		 */
		norder = nodes ? ef_mt_inorder(nodes, e->root, order) : 0;
		if (norder > 0)
		{
			lo = nodes[order[0]].key;
			hi = nodes[order[norder - 1]].key;
			for (i = 0; i < norder; i++)
				sig |= key_bit(nodes[order[i]].key);
		}

		if (sh->level != level)
			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("efind: stored page %u has level %u, its buffered changes level %d",
							e->pageno, sh->level, level)));
		for (i = 0; i < sh->nentries; i++)
		{
			const char *s = src + i * esz;
			uint64		key = entry_key(s, level);
			uint32		m = key >= lo && key <= hi && (sig & key_bit(key)) ?
				ef_mt_find(nodes, e->root, key) : EF_NIL;

			if (m == EF_NIL)
			{
				if (n >= cap)
					goto overflow;
				memcpy(dst + n++ * esz, s, esz);
				continue;
			}
			used[m] = true;
			if (nodes[m].op == EF_OP_PUT)
			{
				if (n >= cap)
					goto overflow;
				node_to_entry(&nodes[m], level, dst + n++ * esz);
			}
		}
	}
	if (e->status != EF_STATUS_MOD)
		norder = nodes ? ef_mt_inorder(nodes, e->root, order) : 0;
	for (i = 0; i < norder; i++)
	{
		EfMod	   *m = &nodes[order[i]];

		if (m->op != EF_OP_PUT || used[order[i]])
			continue;
		if (n >= cap)
			goto overflow;
		node_to_entry(m, level, dst + n++ * esz);
	}
	h->checksum = 0;
	h->pageno = e->pageno;
	h->level = level;
	h->flags = e->flags;
	h->nentries = n;
	h->reserved = 0;
	h->link = e->link;
	pfree(order);
	pfree(used);
	return;

overflow:
	ereport(ERROR,
			(errcode(ERRCODE_INDEX_CORRUPTED),
			 errmsg("efind: page %u would hold more than %u entries after merging its changes",
					e->pageno, cap)));
}

static void
free_entry(Ef *ef, dsa_pointer p)
{
	EfWbEntry  *e = entry_at(ef, p);

	ef->st->wb_status[e->status]--;
	ef->st->wb_bytes -= ef_wb_entry_bytes(e);
	if (DsaPointerIsValid(e->nodes))
		dsa_free(ef->area, e->nodes);
	dsa_free(ef->area, p);
}

/* Free a page's entry once its current version is stored (Alg. 3, line 16) */
void
ef_wb_remove(Ef *ef, uint32 pageno)
{
	uint64	   *v = efh_find(ef->area, &ef->st->wb, pageno);
	dsa_pointer p;

	if (v == NULL)
		return;
	p = (dsa_pointer) *v;
	efh_remove(ef->area, &ef->st->wb, pageno);
	free_entry(ef, p);
}

/* Forget every buffered modification (the index is gone) */
void
ef_wb_free_all(Ef *ef)
{
	EfHashSlot *s;
	uint32		i;

	if (!DsaPointerIsValid(ef->st->wb.slots))
		return;
	s = efh_slots(ef->area, &ef->st->wb);
	for (i = 0; i < ef->st->wb.cap; i++)
		if (s[i].key != EF_NIL)
		{
			free_entry(ef, (dsa_pointer) s[i].val);
			s[i].key = EF_NIL;
			s[i].val = 0;
		}
	ef->st->wb.n = 0;
}

/*
 * The modified area of a page (area of the rectangle enclosing the latest
 * versions of its modified entries) and its overlapping modified area (sum
 * of the pairwise overlaps of those entries): the inputs of the weights
 * alpha and beta of Eq. 6 and 7.
 */
void
ef_wb_areas(Ef *ef, EfWbEntry *e, double *marea, double *oarea)
{
	EfMod	   *nodes = nodes_of(ef, e);
	HiBox		un,
				bi,
				bj;
	bool		any = false;
	double		ov = 0;
	uint32		i,
				j;

	for (i = 0; i < e->nnodes; i++)
	{
		if (nodes[i].op != EF_OP_PUT)
			continue;
		if (!any)
			un = *hi_ent_box(&nodes[i].box, nodes[i].flags, &bi);
		else
			hi_box_union(&un, hi_ent_box(&nodes[i].box, nodes[i].flags, &bi));
		any = true;
		for (j = i + 1; j < e->nnodes; j++)
			if (nodes[j].op == EF_OP_PUT)
				ov += hi_box_overlap_area(hi_ent_box(&nodes[i].box, nodes[i].flags, &bi),
										  hi_ent_box(&nodes[j].box, nodes[j].flags, &bj));
	}
	*marea = any ? hi_box_area(&un) : 0;
	*oarea = ov;
}

/* Invariants of the Write Buffer Table (hybrid_index_check) */
void
ef_wb_check(Ef *ef)
{
	EfHashSlot *s = efh_slots(ef->area, &ef->st->wb);
	uint64		bytes = 0;
	uint32		count[4] = {0, 0, 0, 0};
	uint32		n = 0;
	uint32		i;

	for (i = 0; i < ef->st->wb.cap; i++)
	{
		EfWbEntry  *e;
		uint32		pte;

		if (s[i].key == EF_NIL)
			continue;
		n++;
		e = entry_at(ef, (dsa_pointer) s[i].val);
		if (e->pageno != s[i].key || e->status < EF_STATUS_NEW || e->status > EF_STATUS_DEL)
			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("efind write buffer: entry of page %u is malformed", s[i].key)));
		if (e->pageno >= ef->sh->meta.npages)
			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("efind write buffer holds page %u, but only %u pages exist",
							e->pageno, ef->sh->meta.npages)));
		pte = hi_pt_get(ef->sh, e->pageno);
		if (e->status == EF_STATUS_NEW && HI_PTE_MAPPED(pte))
			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("efind write buffer: NEW page %u already has a stored version",
							e->pageno)));
		/* sharing the cache, a flushed page may be there only (dirty) */
		if (e->status == EF_STATUS_MOD && !HI_PTE_MAPPED(pte) &&
			!(ef_shares_cache(ef) && hi_cache_holds(ef->idx, e->pageno)))
			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("efind write buffer: modified page %u has no stored version",
							e->pageno)));
		if (e->nnodes > e->capnodes ||
			(e->nnodes > 0 && ef_mt_check(nodes_of(ef, e), e->root, e->nnodes) < 0))
			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("efind write buffer: the modification tree of page %u is malformed",
							e->pageno)));
		count[e->status]++;
		bytes += ef_wb_entry_bytes(e);
	}
	if (n != ef->st->wb.n || bytes != ef->st->wb_bytes ||
		count[EF_STATUS_NEW] != ef->st->wb_status[EF_STATUS_NEW] ||
		count[EF_STATUS_MOD] != ef->st->wb_status[EF_STATUS_MOD] ||
		count[EF_STATUS_DEL] != ef->st->wb_status[EF_STATUS_DEL])
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("efind write buffer: %u entries and " UINT64_FORMAT " bytes counted, "
						"%u entries and " UINT64_FORMAT " bytes recorded",
						n, bytes, ef->st->wb.n, ef->st->wb_bytes)));
}
