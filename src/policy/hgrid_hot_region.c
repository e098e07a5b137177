/*
 * hgrid_hot_region.c
 *	  H-Grid's placement policy: hot-region detection (thesis section 4.3.2,
 *	  Eq. 4.1-4.2, Algorithm 9), the random control, and the cooling and
 *	  capacity the thesis lists as future work.
 *
 * Per page of the index (a dense array by logical page id, in the DSA
 * area) we keep its access count F, the time t of its last access, its
 * weight W at that access, its parent (buckets) and flags.  Time T is the
 * number of accesses of the index so far.  On each access:
 *
 *	 sub-directory i:  W_i = F_i - (1 - t_i / T)                  (Eq. 4.1)
 *	 bucket j in i:    W_j = (W_i + F_j) - (1 - t_j / T)          (Eq. 4.2)
 *
 * with F normalised to [0,1] by the largest count of the page's kind.  A
 * page on the flash tier adds W to the cumulative moving average CA of its
 * kind (or to a simple moving average over a window) and qualifies if
 * W > s * CA; a bucket only if its sub-directory is on the fast tier
 * (Algorithm 9).  A qualifying page is flagged and its buffered copy
 * marked dirty, so the next write-buffer flush writes it to the fast tier
 * (Algorithms 10-12 read it from wherever the page table says).  The pages
 * of the array that are on the fast tier, with their weights, are the
 * thesis' Hybrid Bucket Table (buckets) and its directory counterpart.
 *
 * random: the same detection runs, but a page that qualifies only adds one
 * to a quota; as many pages of its kind, drawn uniformly from the flash
 * tier, are moved to the fast tier instead (a bucket qualifies there if its
 * sub-directory qualified, since sub-directories are not where "hot" put
 * them).  This is the thesis' "H-Grid (Random)" control.
 *
 * Cooling (beyond the thesis): every `cooling` accesses, pages on the fast
 * tier that nobody read during the whole period move back to flash.
 * Capacity: a page is not promoted while the fast tier holds `capacity`
 * pages; if it holds more (sub-directories of the special case, a lowered
 * capacity), the least-weighted buckets move back until it is at 90 %.
 *
 * The state is not persisted: after a restart weights are rebuilt from new
 * accesses while pages stay on the tier the (durable) page table says.
 */
#include "postgres.h"

#include "common/pg_prng.h"
#include "miscadmin.h"

#include "policy/placement.h"
#include "storage/storage.h"

#define HR_F_QUALIFIED	0x01	/* passed Algorithm 9 (random: parent test) */
#define HR_F_PROMOTE	0x02	/* write to the fast tier next time */
#define HR_F_DEMOTE		0x04	/* write to flash next time */
#define HR_F_KNOWN		0x08	/* accessed at least once */

#define HR_KIND_NONE	0xFF

typedef struct HrPage
{
	uint32		count;			/* accesses */
	uint32		parent;			/* a bucket's sub-directory */
	uint64		last;			/* T of the last access */
	float		weight;			/* W at the last access */
	uint8		kind;			/* HR_DIR, HR_BUCKET, HR_KIND_NONE */
	uint8		flags;
	uint16		pad;
} HrPage;

typedef struct HrAvg
{
	double		sum;			/* CMA: all weights; SMA: the window's */
	uint64		n;
	dsa_pointer ring;			/* SMA: the window's weights */
	int			ring_cap;
	int			pos;
	int			filled;
} HrAvg;

typedef struct HrState
{
	LWLock		lock;
	HrParams	prm;
	uint64		clock;			/* T */
	uint32		max_count[HR_NKINDS];
	HrAvg		avg[HR_NKINDS];
	dsa_pointer pages;
	uint32		cap;
	uint64		next_cool;
	uint32		quota[HR_NKINDS];	/* random: pages still to move */
	uint32		pending_up;		/* flagged PROMOTE, not yet written */
	/* counters */
	uint64		promotions[HR_NKINDS];
	uint64		demotions[HR_NKINDS];
	uint64		detections[HR_NKINDS];
	uint64		random_moves[HR_NKINDS];
	uint64		capacity_refusals;
	uint64		cooling_rounds;
} HrState;

static inline HrState *
state_of(dsa_pointer p)
{
	return (HrState *) dsa_get_address(hi_dsa(), p);
}

static inline HrPage *
pages_of(HrState *st)
{
	return (HrPage *) dsa_get_address(hi_dsa(), st->pages);
}

static void
init_pages(HrPage *pg, uint32 from, uint32 to)
{
	uint32		i;

	for (i = from; i < to; i++)
	{
		memset(&pg[i], 0, sizeof(HrPage));
		pg[i].parent = HI_INVALID_PAGE;
		pg[i].kind = HR_KIND_NONE;
	}
}

dsa_pointer
hr_create(void)
{
	dsa_area   *area = hi_dsa();
	dsa_pointer p = dsa_allocate0(area, sizeof(HrState));
	HrState    *st = state_of(p);
	int			k;

	LWLockInitialize(&st->lock, hi_shared->tranche_id);
	st->cap = 64;			/* grows with the page ids seen (ensure_cap): a partition has few */
	st->pages = dsa_allocate_extended(area, sizeof(HrPage) * st->cap, DSA_ALLOC_HUGE);
	init_pages(pages_of(st), 0, st->cap);
	for (k = 0; k < HR_NKINDS; k++)
		st->avg[k].ring = InvalidDsaPointer;
	return p;
}

void
hr_free(dsa_pointer p)
{
	dsa_area   *area = hi_dsa();
	HrState    *st = state_of(p);
	int			k;

	for (k = 0; k < HR_NKINDS; k++)
		if (DsaPointerIsValid(st->avg[k].ring))
			dsa_free(area, st->avg[k].ring);
	dsa_free(area, st->pages);
	dsa_free(area, p);
}

/* Room for page ids below n (lock held exclusively) */
static void
ensure_cap(HrState *st, uint32 n)
{
	dsa_area   *area = hi_dsa();
	uint32		newcap = st->cap;
	dsa_pointer np;

	if (n <= st->cap)
		return;
	while (newcap < n)
		newcap = newcap < 0x40000000 ? newcap * 2 : n;
	np = dsa_allocate_extended(area, sizeof(HrPage) * (Size) newcap, DSA_ALLOC_HUGE);
	memcpy(dsa_get_address(area, np), pages_of(st), sizeof(HrPage) * (Size) st->cap);
	init_pages((HrPage *) dsa_get_address(area, np), st->cap, newcap);
	dsa_free(area, st->pages);
	st->pages = np;
	st->cap = newcap;
}

/* New parameters; a changed SMA window restarts the window */
static void
configure(HrState *st, const HrParams *prm)
{
	int			k;

	if (prm->sma != st->prm.sma || prm->window != st->prm.window)
	{
		for (k = 0; k < HR_NKINDS; k++)
		{
			HrAvg	   *a = &st->avg[k];

			if (DsaPointerIsValid(a->ring))
				dsa_free(hi_dsa(), a->ring);
			a->ring = InvalidDsaPointer;
			a->ring_cap = a->pos = a->filled = 0;
			a->sum = 0;
			a->n = 0;
			if (prm->sma)
			{
				a->ring_cap = Max(prm->window, 1);
				a->ring = dsa_allocate_extended(hi_dsa(), sizeof(float) * a->ring_cap,
												DSA_ALLOC_HUGE);
			}
		}
	}
	if (prm->cooling != st->prm.cooling)
		st->next_cool = prm->cooling > 0 ? st->clock + prm->cooling : 0;
	st->prm = *prm;
}

/* Algorithm 9, lines 4-5 and 9: add W to the average, return the average */
static double
average_add(HrState *st, int kind, double w)
{
	HrAvg	   *a = &st->avg[kind];

	if (!st->prm.sma)
	{
		a->sum += w;
		a->n++;
		return a->sum / (double) a->n;
	}
	else
	{
		float	   *ring = (float *) dsa_get_address(hi_dsa(), a->ring);

		if (a->filled == a->ring_cap)
			a->sum -= ring[a->pos];
		else
			a->filled++;
		ring[a->pos] = (float) w;
		a->sum += w;
		a->pos = (a->pos + 1) % a->ring_cap;
		a->n++;
		return a->sum / (double) a->filled;
	}
}

static double
average_of(HrState *st, int kind)
{
	HrAvg	   *a = &st->avg[kind];

	if (st->prm.sma)
		return a->filled > 0 ? a->sum / a->filled : 0;
	return a->n > 0 ? a->sum / (double) a->n : 0;
}

static inline bool
on_fast(HiIndexShared *sh, uint32 pageno)
{
	uint32		e = hi_pt_get(sh, pageno);

	return HI_PTE_MAPPED(e) && HI_PTE_TIER(e) == HI_TIER_OPTANE;
}

static bool
fast_tier_full(HiIndexShared *sh, HrState *st)
{
	if (st->prm.capacity == 0)
		return false;
	return sh->used_slots[HI_TIER_OPTANE] + st->pending_up >= st->prm.capacity;
}

static bool
maintenance_due(HiIndexShared *sh, HrState *st)
{
	if (st->prm.mode == HR_PLACEMENT_RANDOM &&
		st->quota[HR_DIR] + st->quota[HR_BUCKET] >= 16)
		return true;
	if (st->next_cool > 0 && st->clock >= st->next_cool)
		return true;
	return st->prm.capacity > 0 &&
		sh->used_slots[HI_TIER_OPTANE] > st->prm.capacity;
}

void
hr_configure(dsa_pointer p, const HrParams *prm)
{
	HrState    *st = state_of(p);

	LWLockAcquire(&st->lock, LW_EXCLUSIVE);
	configure(st, prm);
	LWLockRelease(&st->lock);
}

bool
hr_access(HiIndexShared *sh, dsa_pointer p, const HrParams *prm, int kind,
		  uint32 pageno, const uint32 *children, int nchildren, bool *mark)
{
	HrState    *st = state_of(p);
	HrPage	   *pg;
	HrPage	   *me;
	uint32		maxid = pageno;
	double		f,
				d,
				w,
				ca;
	uint64		prev;
	bool		due;
	int			i;

	*mark = false;
	for (i = 0; i < nchildren; i++)
		if (children[i] != HI_INVALID_PAGE && children[i] > maxid)
			maxid = children[i];

	LWLockAcquire(&st->lock, LW_EXCLUSIVE);
	configure(st, prm);
	ensure_cap(st, maxid + 1);
	pg = pages_of(st);
	me = &pg[pageno];
	st->clock++;

	/* Eq. 4.1 / 4.2 */
	me->count++;
	if (me->count > st->max_count[kind])
		st->max_count[kind] = me->count;
	prev = me->last;
	f = (double) me->count / (double) st->max_count[kind];
	d = 1.0 - (double) prev / (double) st->clock;
	w = f - d;
	if (kind == HR_BUCKET && me->parent != HI_INVALID_PAGE)
		w += pg[me->parent].weight;
	me->last = st->clock;
	me->weight = (float) w;
	me->kind = (uint8) kind;
	me->flags |= HR_F_KNOWN;
	for (i = 0; i < nchildren; i++)
		if (children[i] != HI_INVALID_PAGE)
			pg[children[i]].parent = pageno;

	/*
	 * Algorithm 10, lines 4-8: a page in the HBT only has its weight
	 * updated; the others go through Algorithm 9.  Sub-directories of the
	 * special case belong on the fast tier anyway (this moves those written
	 * before directories_on_optane was set).
	 */
	if (kind == HR_DIR && prm->dirs_on_fast)
	{
		if (!(me->flags & HR_F_PROMOTE) && !on_fast(sh, pageno))
		{
			me->flags = (me->flags | HR_F_PROMOTE) & ~HR_F_DEMOTE;
			st->pending_up++;
			*mark = true;
		}
	}
	else if (prm->mode != HR_PLACEMENT_NONE && !(me->flags & HR_F_PROMOTE) &&
			 !on_fast(sh, pageno))
	{
		bool		parent_ok = true;

		ca = average_add(st, kind, w);
		if (kind == HR_BUCKET)
		{
			uint32		par = me->parent;

			if (par == HI_INVALID_PAGE)
				parent_ok = false;
			else if (prm->mode == HR_PLACEMENT_RANDOM)
				parent_ok = prm->dirs_on_fast || (pg[par].flags & HR_F_QUALIFIED);
			else
				parent_ok = prm->dirs_on_fast || (pg[par].flags & HR_F_PROMOTE) ||
					on_fast(sh, par);
		}
		if (parent_ok && w > prm->selectivity * ca)
		{
			st->detections[kind]++;
			if (fast_tier_full(sh, st))
				st->capacity_refusals++;
			else if (prm->mode == HR_PLACEMENT_HOT)
			{
				me->flags = (me->flags | HR_F_PROMOTE) & ~HR_F_DEMOTE;
				st->pending_up++;
				*mark = true;
			}
			else if (!(me->flags & HR_F_QUALIFIED))
				st->quota[kind]++;	/* once per page, as "hot" moves it once */
			me->flags |= HR_F_QUALIFIED;
		}
	}
	due = maintenance_due(sh, st);
	LWLockRelease(&st->lock);
	return due;
}

int
hr_write_tier(HiIndexShared *sh, dsa_pointer p, const char *page, uint32 old_pte)
{
	const HiPageHeader *h = (const HiPageHeader *) page;
	HrState    *st = state_of(p);
	int			kind = h->level > 0 ? HR_DIR : HR_BUCKET;
	int			old_tier = HI_PTE_MAPPED(old_pte) ? HI_PTE_TIER(old_pte) : -1;
	int			tier;

	LWLockAcquire(&st->lock, LW_EXCLUSIVE);
	if (kind == HR_DIR && st->prm.dirs_on_fast)
		tier = HI_TIER_OPTANE;
	else if (h->pageno < st->cap && (pages_of(st)[h->pageno].flags & HR_F_PROMOTE))
		tier = HI_TIER_OPTANE;
	else if (h->pageno < st->cap && (pages_of(st)[h->pageno].flags & HR_F_DEMOTE))
		tier = HI_TIER_FLASH;
	else
		tier = old_tier >= 0 ? old_tier : HI_TIER_FLASH;
	if (h->pageno < st->cap)
	{
		HrPage	   *me = &pages_of(st)[h->pageno];

		if (me->flags & HR_F_PROMOTE)
			st->pending_up--;
		me->flags &= ~(HR_F_PROMOTE | HR_F_DEMOTE);
	}
	if (old_tier >= 0 && old_tier != tier)
	{
		if (tier == HI_TIER_OPTANE)
			st->promotions[kind]++;
		else
			st->demotions[kind]++;
	}
	LWLockRelease(&st->lock);
	return tier;
}

/* Move pages and count those that moved (no locks of ours held) */
static void
move_pages(HiIndexShared *sh, HrState *st, uint32 *ids, int *kinds, int n, int to)
{
	int			moved;
	int			i;

	if (n == 0)
		return;
	moved = hi_tier_move(sh, ids, n, to);
	LWLockAcquire(&st->lock, LW_EXCLUSIVE);
	for (i = 0; i < n; i++)
	{
		HrPage	   *me = &pages_of(st)[ids[i]];

		if (to == HI_TIER_FLASH)
			me->flags &= ~HR_F_DEMOTE;
	}
	/* per kind, attribute the moves in proportion (all of one kind, mostly) */
	for (i = 0; i < n && moved > 0; i++, moved--)
	{
		if (to == HI_TIER_OPTANE)
			st->random_moves[kinds[i]]++;
		else
			st->demotions[kinds[i]]++;
	}
	LWLockRelease(&st->lock);
}

/* Random mode: draw quota pages of each kind from the flash tier */
static void
random_moves(HiIndexShared *sh, HrState *st)
{
	uint32		want[HR_NKINDS];
	Size		nflash;
	uint32	   *flash;
	uint32	   *ids;
	int		   *kinds;
	int			n = 0;
	int			k;

	LWLockAcquire(&st->lock, LW_EXCLUSIVE);
	for (k = 0; k < HR_NKINDS; k++)
	{
		want[k] = st->quota[k];
		st->quota[k] = 0;
	}
	LWLockRelease(&st->lock);
	if (want[HR_DIR] + want[HR_BUCKET] == 0)
		return;

	flash = hi_pt_collect(sh, HI_TIER_FLASH, false, &nflash);
	ids = palloc(sizeof(uint32) * (want[HR_DIR] + want[HR_BUCKET]));
	kinds = palloc(sizeof(int) * (want[HR_DIR] + want[HR_BUCKET]));
	for (k = 0; k < HR_NKINDS && nflash > 0; k++)
	{
		int			tries = 0;
		uint32		got = 0;

		while (got < want[k] && tries++ < (int) want[k] * 64)
		{
			uint64		r = pg_prng_uint64_range(&pg_global_prng_state, 0, nflash - 1);
			uint32		e = hi_pt_get(sh, flash[r]);
			int			j;
			bool		dup = false;

			if (!HI_PTE_MAPPED(e) || HI_PTE_TIER(e) != HI_TIER_FLASH ||
				HI_PTE_UPPER(e) != (k == HR_DIR))
				continue;
			for (j = 0; j < n && !dup; j++)
				dup = ids[j] == flash[r];
			if (dup)
				continue;
			ids[n] = flash[r];
			kinds[n] = k;
			n++;
			got++;
		}
	}
	pfree(flash);
	if (st->prm.capacity > 0)
	{
		int64		room = (int64) st->prm.capacity - sh->used_slots[HI_TIER_OPTANE];

		n = (int) Max(0, Min(n, room));
	}
	move_pages(sh, st, ids, kinds, n, HI_TIER_OPTANE);
	pfree(ids);
	pfree(kinds);
}

typedef struct Cand
{
	uint32		page;
	int			kind;
	uint64		last;
	float		weight;
} Cand;

static int
cand_cmp(const void *a, const void *b)
{
	const Cand *x = a;
	const Cand *y = b;

	if (x->weight != y->weight)
		return x->weight < y->weight ? -1 : 1;
	return x->last < y->last ? -1 : x->last > y->last ? 1 : 0;
}

/*
 * Cooling and capacity: fast-tier pages not read during the last period
 * go back to flash; over capacity, the least-weighted buckets go too
 * (never the sub-directories of the special case).
 */
static void
cool(HiIndexShared *sh, HrState *st)
{
	Size		nfast;
	uint32	   *fast = hi_pt_collect(sh, HI_TIER_OPTANE, false, &nfast);
	Cand	   *c = palloc(sizeof(Cand) * Max(nfast, 1));
	uint32	   *ids = palloc(sizeof(uint32) * Max(nfast, 1));
	int		   *kinds = palloc(sizeof(int) * Max(nfast, 1));
	int			nc = 0;
	int			n = 0;
	int64		excess = 0;
	Size		i;
	bool		cooling;

	LWLockAcquire(&st->lock, LW_EXCLUSIVE);
	cooling = st->next_cool > 0 && st->clock >= st->next_cool;
	if (cooling)
	{
		st->next_cool = st->clock + st->prm.cooling;
		st->cooling_rounds++;
	}
	if (st->prm.capacity > 0 && nfast > st->prm.capacity)
		excess = (int64) nfast - (int64) st->prm.capacity * 9 / 10;
	for (i = 0; i < nfast; i++)
	{
		uint32		pno = fast[i];
		HrPage	   *me = pno < st->cap ? &pages_of(st)[pno] : NULL;
		bool		dir = HI_PTE_UPPER(hi_pt_get(sh, pno));
		bool		cold;

		if (dir && st->prm.dirs_on_fast)
			continue;
		if (me && (me->flags & HR_F_PROMOTE))
			continue;
		cold = me == NULL || me->last + st->prm.cooling <= st->clock;
		if (cooling && cold)
		{
			ids[n] = pno;
			kinds[n++] = dir ? HR_DIR : HR_BUCKET;
			if (me)
				me->flags = (me->flags | HR_F_DEMOTE) & ~HR_F_QUALIFIED;
			excess--;
		}
		else if (!dir)
		{
			c[nc].page = pno;
			c[nc].kind = HR_BUCKET;
			c[nc].last = me ? me->last : 0;
			c[nc].weight = me && (me->flags & HR_F_KNOWN) ? me->weight : -3.0f;
			nc++;
		}
	}
	if (excess > 0 && nc > 0)
	{
		int			j;

		qsort(c, nc, sizeof(Cand), cand_cmp);
		for (j = 0; j < nc && excess > 0; j++, excess--)
		{
			ids[n] = c[j].page;
			kinds[n++] = c[j].kind;
			if (c[j].page < st->cap)
				pages_of(st)[c[j].page].flags =
					(pages_of(st)[c[j].page].flags | HR_F_DEMOTE) & ~HR_F_QUALIFIED;
		}
	}
	LWLockRelease(&st->lock);
	move_pages(sh, st, ids, kinds, n, HI_TIER_FLASH);
	pfree(fast);
	pfree(c);
	pfree(ids);
	pfree(kinds);
}

void
hr_maintain(HiIndexShared *sh, dsa_pointer p)
{
	HrState    *st = state_of(p);

	if (st->prm.mode == HR_PLACEMENT_RANDOM)
		random_moves(sh, st);
	if ((st->next_cool > 0 && st->clock >= st->next_cool) ||
		(st->prm.capacity > 0 && sh->used_slots[HI_TIER_OPTANE] > st->prm.capacity))
		cool(sh, st);
}

void
hr_forget(dsa_pointer p, uint32 pageno)
{
	HrState    *st = state_of(p);

	LWLockAcquire(&st->lock, LW_EXCLUSIVE);
	if (pageno < st->cap)
	{
		HrPage	   *me = &pages_of(st)[pageno];

		if (me->flags & HR_F_PROMOTE)
			st->pending_up--;
		init_pages(pages_of(st), pageno, pageno + 1);
	}
	LWLockRelease(&st->lock);
}

void
hr_check_freed(dsa_pointer p, const uint32 *ids, uint32 n)
{
	HrState    *st = state_of(p);
	uint32		i;

	LWLockAcquire(&st->lock, LW_SHARED);
	for (i = 0; i < n; i++)
	{
		const HrPage *me;

		if (ids[i] >= st->cap)
			continue;
		me = &pages_of(st)[ids[i]];
		if (me->flags != 0 || me->count != 0 || me->kind != HR_KIND_NONE)
		{
			uint32		id = ids[i];
			uint8		flags = me->flags;

			LWLockRelease(&st->lock);
			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("hot-region state of freed page %u is still kept (flags 0x%02x)",
							id, flags)));
		}
	}
	LWLockRelease(&st->lock);
}

void
hr_reset_stats(dsa_pointer p)
{
	HrState    *st = state_of(p);

	LWLockAcquire(&st->lock, LW_EXCLUSIVE);
	memset(st->promotions, 0, sizeof(st->promotions));
	memset(st->demotions, 0, sizeof(st->demotions));
	memset(st->detections, 0, sizeof(st->detections));
	memset(st->random_moves, 0, sizeof(st->random_moves));
	st->capacity_refusals = 0;
	st->cooling_rounds = 0;
	LWLockRelease(&st->lock);
}

void
hr_json(HiIndexShared *sh, dsa_pointer p, StringInfo out)
{
	HrState    *st = state_of(p);
	static const char *const names[HR_NKINDS] = {"directories", "buckets"};
	uint64		ontier[HR_NKINDS][HI_NUM_TIERS];
	double		wsum[HR_NKINDS];
	uint64		wn[HR_NKINDS];
	uint32		pno;
	int			k;

	memset(ontier, 0, sizeof(ontier));
	memset(wsum, 0, sizeof(wsum));
	memset(wn, 0, sizeof(wn));
	LWLockAcquire(&st->lock, LW_SHARED);
	for (pno = 0; pno < sh->meta.npages; pno++)
	{
		uint32		e = hi_pt_get(sh, pno);
		int			kind = HI_PTE_UPPER(e) ? HR_DIR : HR_BUCKET;
		int			t;

		if (!HI_PTE_MAPPED(e))
			continue;
		t = HI_PTE_TIER(e);
		ontier[kind][t]++;
		/* the HBT and its directory counterpart: fast-tier pages' weights */
		if (t == HI_TIER_OPTANE && pno < st->cap && (pages_of(st)[pno].flags & HR_F_KNOWN))
		{
			wsum[kind] += pages_of(st)[pno].weight;
			wn[kind]++;
		}
	}
	appendStringInfo(out,
					 "\"placement\": \"%s\", \"directories_on_optane\": %s, "
					 "\"selectivity\": %g, \"average\": \"%s\", \"window\": %d, "
					 "\"cooling_period\": " INT64_FORMAT ", \"optane_capacity_pages\": %u, "
					 "\"accesses\": " UINT64_FORMAT ", \"cooling_rounds\": " UINT64_FORMAT ", "
					 "\"capacity_refusals\": " UINT64_FORMAT ", \"pending_promotions\": %u",
					 st->prm.mode == HR_PLACEMENT_HOT ? "hot" :
					 st->prm.mode == HR_PLACEMENT_RANDOM ? "random" : "none",
					 st->prm.dirs_on_fast ? "true" : "false",
					 st->prm.selectivity, st->prm.sma ? "sma" : "cma", st->prm.window,
					 st->prm.cooling, st->prm.capacity, st->clock,
					 st->cooling_rounds, st->capacity_refusals, st->pending_up);
	for (k = 0; k < HR_NKINDS; k++)
		appendStringInfo(out,
						 ", \"%s\": {\"flash\": " UINT64_FORMAT ", \"optane\": " UINT64_FORMAT
						 ", \"average_weight\": %g, \"optane_mean_weight\": %g"
						 ", \"detections\": " UINT64_FORMAT ", \"promotions\": " UINT64_FORMAT
						 ", \"random_moves\": " UINT64_FORMAT ", \"demotions\": " UINT64_FORMAT
						 ", \"max_accesses\": %u}",
						 names[k], ontier[k][HI_TIER_FLASH], ontier[k][HI_TIER_OPTANE],
						 average_of(st, k),
						 wn[k] ? wsum[k] / wn[k] : 0.0,
						 st->detections[k], st->promotions[k], st->random_moves[k],
						 st->demotions[k], st->max_count[k]);
	LWLockRelease(&st->lock);
}
