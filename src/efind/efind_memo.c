/*
 * efind_memo.c
 *	  A backend's memo of the inner pages it last assembled (Alg. 2, lines
 *	  13-14), for indexes that share the page cache.
 *
 * Every insertion's descent reads the root and the inner pages below it,
 * and they are nearly always buffered: an enlarged box or a split child
 * is a modification of them.  Merging such a page looks up each of its
 * entries in the page's modification tree, and once most entries have
 * been changed the filters in ef_wb_assemble pass them all: at 100k
 * points the merges of the descent were a quarter of an insertion's CPU.
 * Between two insertions an inner page rarely changes, so the version
 * assembled last is kept and reused while the page's Write Buffer Table
 * entry is unchanged.
 *
 * Why (stamp, mod_count) identifies a version: ef_wb_record gives an
 * entry a new stamp from the state's clock at the end of every record
 * that modified it, a stamp no other entry of the state had, and every
 * single modification counts in mod_count (so a record cut short by an
 * error changes the pair too); the stored version under an entry changes
 * only when a flush writes the page, which removes the entry.  The
 * state's serial (bumped whenever a state is created for the slot) tells
 * states apart.  Leaves are not kept: an insertion changes the leaf it
 * reads.
 *
 * Indexes with the paper's memory model (reloption buffer_size) never use
 * the memo, so their counters and read buffer behave exactly as the paper
 * describes.
 */
#include "postgres.h"

#include "utils/memutils.h"

#include "efind/efind.h"

#define MEMO_SLOTS	64				/* direct-mapped by page id */

typedef struct MemoSlot
{
	bool		valid;
	int			slotno;
	uint64		serial;
	uint32		pageno;
	uint64		stamp;
	uint32		mod_count;
	uint32		page_size;
	char	   *data;				/* hi_max_page_size bytes, once used */
} MemoSlot;

static MemoSlot *memo = NULL;

static MemoSlot *
slot_for(uint32 pageno)
{
	if (memo == NULL)
		memo = MemoryContextAllocZero(TopMemoryContext, sizeof(MemoSlot) * MEMO_SLOTS);
	return &memo[(pageno * UINT64CONST(0x9E3779B97F4A7C15)) >> 58];
}

static inline bool
memo_applies(Ef *ef, const EfWbEntry *e)
{
	return ef_shares_cache(ef) && e->level > 0 && e->stamp != 0 &&
		e->status != EF_STATUS_DEL;
}

/*
 * The page's current version into out if this backend assembled it last
 * with the entry as it is now.  Caller holds wb_lock.
 */
bool
ef_memo_get(Ef *ef, const EfWbEntry *e, char *out)
{
	MemoSlot   *m;

	if (!memo_applies(ef, e))
		return false;
	m = slot_for(e->pageno);
	if (!m->valid || m->pageno != e->pageno || m->stamp != e->stamp ||
		m->mod_count != e->mod_count ||
		m->slotno != ef->idx->slotno || m->page_size != ef->st->page_size ||
		m->serial != pg_atomic_read_u64(&ef->slot->serial))
		return false;
	memcpy(out, m->data, m->page_size);
	return true;
}

/* Keep the version of the page just assembled.  Caller holds wb_lock. */
void
ef_memo_put(Ef *ef, const EfWbEntry *e, const char *page)
{
	MemoSlot   *m;

	if (!memo_applies(ef, e))
		return;
	m = slot_for(e->pageno);
	if (m->data == NULL)
		m->data = MemoryContextAlloc(TopMemoryContext, hi_max_page_size);
	m->valid = true;
	m->slotno = ef->idx->slotno;
	m->serial = pg_atomic_read_u64(&ef->slot->serial);
	m->pageno = e->pageno;
	m->stamp = e->stamp;
	m->mod_count = e->mod_count;
	m->page_size = ef->st->page_size;
	memcpy(m->data, page, m->page_size);
}
