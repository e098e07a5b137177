/*
 * efind_rbuf.c
 *	  The Read Buffer Table (section 4.2, Goal 3): stored versions of
 *	  index pages, in the DSA area, under one of three replacement
 *	  policies (section 6.3):
 *
 *	  lru	every page read from storage is cached; the least recently
 *			used page is replaced.
 *	  s2q	simplified 2Q (Johnson and Shasha 1994): a page is cached only
 *			when it is read again while its id is still in the FIFO A1 of
 *			pages seen once; cached pages form an LRU list Am.  eFIND's read
 *			queue RQ is that A1 (section 6.3).
 *	  2q	full 2Q: a page read for the first time enters the FIFO A1in
 *			(Kin = 25 % of the frames); pages leaving A1in leave their id in
 *			the FIFO A1out (Kout = 50 %); a page read again while in A1out
 *			enters the LRU list Am.  A frame is taken from A1in while it is
 *			over Kin, else from Am.
 *
 * The read queue RQ (ids of the pages last read from storage, Alg. 2
 * line 11) also feeds the temporal control of reads (Alg. 5).  Its size is
 * half the number of pages the whole buffer could hold, at least 16.
 *
 * The caller holds rb_lock exclusively (a hit reorders the lists).
 */
#include "postgres.h"

#include "executor/instrument.h"
#include "port/pg_bitutils.h"

#include "efind/efind.h"

#define RQ_MIN 16

static inline EfRbFrame *
frames(Ef *ef)
{
	return (EfRbFrame *) dsa_get_address(ef->area, ef->st->frames);
}

/*
 * A frame's page.  The pages live in chunks of 1, 2, 4 ... frames
 * allocated at their first use, so that an index that reads a few pages
 * (one of a thousand partitions) holds a few pages, not its whole read
 * buffer, in the DSA area.
 */
static inline char *
frame_page(Ef *ef, uint32 f)
{
	int			k = pg_leftmost_one_pos32(f + 1);

	return (char *) dsa_get_address(ef->area, ef->st->chunks[k]) +
		(Size) (f + 1 - (1U << k)) * ef->st->page_size;
}

/* Allocate the chunk of frame f if it has none yet (an ERROR changes nothing) */
static void
ensure_frame_page(Ef *ef, uint32 f)
{
	EfindState *st = ef->st;
	int			k = pg_leftmost_one_pos32(f + 1);
	uint32		first = (1U << k) - 1;
	uint32		n;

	if (DsaPointerIsValid(st->chunks[k]))
		return;
	n = Min((uint32) 1 << k, st->rb_frames - first);
	st->chunks[k] = dsa_allocate_extended(ef->area, (Size) n * st->page_size, DSA_ALLOC_HUGE);
}

static void
list_remove(EfRbFrame *fr, EfRbList *l, uint32 f)
{
	if (fr[f].prev != EF_NIL)
		fr[fr[f].prev].next = fr[f].next;
	else
		l->head = fr[f].next;
	if (fr[f].next != EF_NIL)
		fr[fr[f].next].prev = fr[f].prev;
	else
		l->tail = fr[f].prev;
	fr[f].prev = fr[f].next = EF_NIL;
	l->n--;
}

static void
list_push_head(EfRbFrame *fr, EfRbList *l, uint32 f)
{
	fr[f].prev = EF_NIL;
	fr[f].next = l->head;
	if (l->head != EF_NIL)
		fr[l->head].prev = f;
	l->head = f;
	if (l->tail == EF_NIL)
		l->tail = f;
	l->n++;
}

static EfRbList *
list_of(EfindState *st, uint32 queue)
{
	return queue == EF_RBQ_AM ? &st->am : &st->a1in;
}

void
ef_rb_init(Ef *ef)
{
	EfindState *st = ef->st;
	uint32		n = st->rb_frames;
	uint64		buffer_pages = (uint64) st->cfg.buffer_kb * 1024 / st->page_size;
	EfRbFrame  *fr;
	uint32		i;

	st->am.head = st->am.tail = st->a1in.head = st->a1in.tail = EF_NIL;
	st->am.n = st->a1in.n = 0;
	st->free_head = EF_NIL;
	ef_ring_init(ef->area, &st->rq, (uint32) Max(RQ_MIN, buffer_pages / 2));
	if (n == 0)
		return;

	st->kin = Max(1, n / 4);
	ef_ring_init(ef->area, &st->a1out, Max(1, n / 2));
	/* at most n pages are cached: sized so the table never grows */
	efh_init(ef->area, &st->rbh, 2 * n + 2);
	st->frames = dsa_allocate_extended(ef->area, sizeof(EfRbFrame) * (Size) n, DSA_ALLOC_HUGE);
	fr = frames(ef);
	for (i = 0; i < n; i++)
	{
		fr[i].pageno = EF_NIL;
		fr[i].queue = EF_RBQ_FREE;
		fr[i].prev = EF_NIL;
		fr[i].next = i + 1 < n ? i + 1 : EF_NIL;
	}
	st->free_head = 0;
}

void
ef_rb_free(Ef *ef)
{
	EfindState *st = ef->st;
	int			k;

	ef_ring_free(ef->area, &st->rq);
	ef_ring_free(ef->area, &st->a1out);
	if (DsaPointerIsValid(st->rbh.slots))
		efh_free(ef->area, &st->rbh);
	if (DsaPointerIsValid(st->frames))
		dsa_free(ef->area, st->frames);
	st->frames = InvalidDsaPointer;
	for (k = 0; k < EF_RB_CHUNKS; k++)
	{
		if (DsaPointerIsValid(st->chunks[k]))
			dsa_free(ef->area, st->chunks[k]);
		st->chunks[k] = InvalidDsaPointer;
	}
}

static uint32
lookup(Ef *ef, uint32 pageno)
{
	uint64	   *v;

	if (ef->st->rb_frames == 0)
		return EF_NIL;
	v = efh_find(ef->area, &ef->st->rbh, pageno);
	return v ? (uint32) *v : EF_NIL;
}

/* A hit: the policy's reaction to a reference of a cached page */
static void
touch(Ef *ef, uint32 f)
{
	EfRbFrame  *fr = frames(ef);

	/* 2Q leaves a page in A1in where it is: correlated references */
	if (fr[f].queue == EF_RBQ_AM)
	{
		list_remove(fr, &ef->st->am, f);
		list_push_head(fr, &ef->st->am, f);
	}
}

/* A frame to fill: a free one, or the policy's victim */
static uint32
take_frame(Ef *ef)
{
	EfindState *st = ef->st;
	EfRbFrame  *fr = frames(ef);
	uint32		f;

	if (st->free_head != EF_NIL)
	{
		f = st->free_head;
		ensure_frame_page(ef, f);
		st->free_head = fr[f].next;
		fr[f].next = EF_NIL;
		return f;
	}
	if (st->cfg.read_policy == EF_RB_2Q && (st->a1in.n > st->kin || st->am.n == 0))
	{
		f = st->a1in.tail;
		list_remove(fr, &st->a1in, f);
		(void) ef_ring_push(ef->area, &st->a1out, fr[f].pageno);
	}
	else
	{
		f = st->am.tail;
		list_remove(fr, &st->am, f);
	}
	efh_remove(ef->area, &st->rbh, fr[f].pageno);
	fr[f].pageno = EF_NIL;
	fr[f].queue = EF_RBQ_FREE;
	pg_atomic_fetch_add_u64(&ef->slot->c.rb_evictions, 1);
	return f;
}

static void
admit(Ef *ef, uint32 pageno, const char *page, uint32 queue)
{
	uint32		f = take_frame(ef);
	EfRbFrame  *fr = frames(ef);

	memcpy(frame_page(ef, f), page, ef->st->page_size);
	fr[f].pageno = pageno;
	fr[f].queue = queue;
	efh_put(ef->area, &ef->st->rbh, pageno, f);
	list_push_head(fr, list_of(ef->st, queue), f);
	pg_atomic_fetch_add_u64(&ef->slot->c.rb_admissions, 1);
}

/* Alg. 2, lines 6-7: the stored version of a page, if cached */
bool
ef_rb_get(Ef *ef, uint32 pageno, char *out)
{
	uint32		f = lookup(ef, pageno);

	if (f == EF_NIL)
	{
		pg_atomic_fetch_add_u64(&ef->slot->c.rb_misses, 1);
		return false;
	}
	memcpy(out, frame_page(ef, f), ef->st->page_size);
	touch(ef, f);
	pg_atomic_fetch_add_u64(&ef->slot->c.rb_hits, 1);
	pgBufferUsage.shared_blks_hit++;
	return true;
}

/*
 * Alg. 2, lines 9-12: a page was read from storage: the replacement
 * policy decides whether it is cached, and its id enters RQ.
 */
void
ef_rb_after_read(Ef *ef, uint32 pageno, const char *page)
{
	EfindState *st = ef->st;
	bool		cached = false;

	if (st->rb_frames > 0 && lookup(ef, pageno) == EF_NIL)
	{
		switch (st->cfg.read_policy)
		{
			case EF_RB_LRU:
				admit(ef, pageno, page, EF_RBQ_AM);
				cached = true;
				break;
			case EF_RB_S2Q:
				/* the second read while in A1 (= RQ) makes a page hot */
				if (ef_ring_remove(ef->area, &st->rq, pageno))
				{
					admit(ef, pageno, page, EF_RBQ_AM);
					cached = true;
				}
				break;
			case EF_RB_2Q:
				if (ef_ring_remove(ef->area, &st->a1out, pageno))
					admit(ef, pageno, page, EF_RBQ_AM);
				else
					admit(ef, pageno, page, EF_RBQ_A1IN);
				cached = true;
				break;
		}
	}
	/* S2Q's A1 holds pages seen once and not cached */
	if (!(cached && st->cfg.read_policy == EF_RB_S2Q))
		(void) ef_ring_push(ef->area, &st->rq, pageno);
}

/* Alg. 5, line 2: a flushed page that is cached gets its new version */
bool
ef_rb_refresh(Ef *ef, uint32 pageno, const char *page)
{
	uint32		f = lookup(ef, pageno);

	if (f == EF_NIL)
		return false;
	memcpy(frame_page(ef, f), page, ef->st->page_size);
	touch(ef, f);
	return true;
}

/*
 * Alg. 5, line 5: a flushed page whose id is in RQ is cached now, so the
 * read that would follow the write is served from memory.  It has been
 * read from storage before, so every policy puts it among its frequently
 * used pages (Am); its id leaves RQ.
 */
void
ef_rb_force(Ef *ef, uint32 pageno, const char *page)
{
	if (ef->st->rb_frames == 0)
		return;
	if (ef_rb_refresh(ef, pageno, page))
		return;
	(void) ef_ring_remove(ef->area, &ef->st->rq, pageno);
	admit(ef, pageno, page, EF_RBQ_AM);
}

/*
 * Invariants of the read buffer: lists and table agree, every frame is in
 * exactly one list.  Returns palloc'd copies of the cached pages so the
 * caller can compare them with storage.
 */
void
ef_rb_snapshot(Ef *ef, uint32 **pagenos, char **pages, int *n)
{
	EfindState *st = ef->st;
	EfRbFrame  *fr;
	uint32		seen = 0;
	uint32		q;
	uint32		f;
	int			k = 0;

	*n = 0;
	*pagenos = NULL;
	*pages = NULL;
	if (st->rb_frames == 0)
		return;
	fr = frames(ef);
	*pagenos = palloc(sizeof(uint32) * st->rb_frames);
	*pages = palloc((Size) st->rb_frames * st->page_size);
	for (q = EF_RBQ_AM; q <= EF_RBQ_A1IN; q++)
	{
		EfRbList   *l = list_of(st, q);
		uint32		cnt = 0;
		uint32		prev = EF_NIL;

		for (f = l->head; f != EF_NIL; f = fr[f].next)
		{
			if (f >= st->rb_frames || fr[f].queue != q || fr[f].prev != prev ||
				lookup(ef, fr[f].pageno) != f || ++cnt > st->rb_frames)
				ereport(ERROR,
						(errcode(ERRCODE_INDEX_CORRUPTED),
						 errmsg("efind read buffer: frame %u is misplaced", f)));
			(*pagenos)[k] = fr[f].pageno;
			memcpy(*pages + (Size) k * st->page_size, frame_page(ef, f), st->page_size);
			k++;
			prev = f;
		}
		if (cnt != l->n || l->tail != prev)
			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("efind read buffer: a list holds %u frames, %u recorded", cnt, l->n)));
		seen += cnt;
	}
	for (f = st->free_head; f != EF_NIL && seen <= st->rb_frames; f = fr[f].next)
		seen++;
	if (seen != st->rb_frames || st->rbh.n != st->am.n + st->a1in.n)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("efind read buffer: %u of %u frames accounted for", seen, st->rb_frames)));
	*n = k;
}
