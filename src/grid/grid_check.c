/*
 * grid_check.c
 *	  Invariants of a grid index (hybrid_index_check), its structural
 *	  snapshot (hybrid_index_inspect) and page list (hybrid_index_pages).
 *
 * Checked: the root and every sub-directory are valid directories; each
 * sub-directory covers exactly its root region and its reach is within
 * the root region's; each bucket belongs to one region; every entry's
 * centre lies in its region and its box within the region's reach; the
 * store's counts match what its buckets hold; the chains hold only what
 * belongs there; entry counts match the metadata; the page table is sound.
 */
#include "postgres.h"

#include <float.h>
#include <math.h>

#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/memutils.h"

#include "payload/payload.h"
#include "grid/grid.h"
#include "grid/grid_int.h"
#include "storage/storage.h"
#include "core/hi_core.h"

#define corrupt(...) \
	ereport(ERROR, (errcode(ERRCODE_INDEX_CORRUPTED), errmsg(__VA_ARGS__)))

typedef struct BucketRef
{
	uint32		id;
	uint32		dirpage;
	double		lo[2];
	double		hi[2];
	float4		reach[2];
} BucketRef;

static int
cmp_ref(const void *a, const void *b)
{
	uint32		x = ((const BucketRef *) a)->id;
	uint32		y = ((const BucketRef *) b)->id;

	return x < y ? -1 : x > y ? 1 : 0;
}

/* All buckets with their regions, checking the directories on the way */
static BucketRef *
walk_dirs(Grid *g, int *nout, int *ndirs)
{
	GridDirView rv;
	GridDir    *root;
	int			max = 256;
	BucketRef  *out = palloc(sizeof(BucketRef) * max);
	int			n = 0;
	int			i;
	const char *why;

	grid_root(g, &rv);
	why = grid_dir_layout((char *) rv.h, MaxAllocHugeSize);
	if (why != NULL)
		corrupt("root directory: %s", why);
	root = gd_decode((char *) rv.h);
	gd_check(root, "root directory", 0);
	for (i = 0; i < root->nr; i++)
	{
		uint32		page = root->r[i].ref;
		int			f;
		char	   *pg;
		GridDir    *d;
		double		lo[2],
					hi[2];
		int			j,
					k;

		gbuf_pin(g, GRID_BUF_DIR, &page, 1, &f);
		pg = gbuf_page(g, GRID_BUF_DIR, f);
		if (((HiPageHeader *) pg)->pageno != page ||
			!(((HiPageHeader *) pg)->flags & GRID_PAGE_DIR))
			corrupt("root region %d points at page %u, which is not a sub-directory", i, page);
		/* the copy in the buffer, even if its stored copy was sound */
		why = grid_dir_layout(GRID_DIR_FLAT(pg), g->gs->page_size - GRID_DIR_OFF);
		if (why != NULL)
		{
			gbuf_unpin(g, GRID_BUF_DIR, f);
			corrupt("sub-directory %u: %s", page, why);
		}
		d = gd_decode(GRID_DIR_FLAT(pg));
		gbuf_unpin(g, GRID_BUF_DIR, f);
		gd_check(d, "sub-directory", page);
		gd_region_box(root, i, lo, hi);
		for (k = 0; k < 2; k++)
			if (d->s[k][0] != lo[k] || d->s[k][d->n[k]] != hi[k])
				corrupt("sub-directory %u does not cover its root region", page);
		for (j = 0; j < d->nr; j++)
		{
			if (d->r[j].reach[0] > root->r[i].reach[0] ||
				d->r[j].reach[1] > root->r[i].reach[1])
				corrupt("sub-directory %u: region %d reaches beyond its root region", page, j);
			if (n == max)
			{
				max *= 2;
				out = repalloc_huge(out, sizeof(BucketRef) * max);
			}
			out[n].id = d->r[j].ref;
			out[n].dirpage = page;
			gd_region_box(d, j, out[n].lo, out[n].hi);
			out[n].reach[0] = d->r[j].reach[0];
			out[n].reach[1] = d->r[j].reach[1];
			n++;
		}
		CHECK_FOR_INTERRUPTS();
	}
	*nout = n;
	*ndirs = root->nr;
	return out;
}

static void
check_entry(const GridEntry *e, const BucketRef *r)
{
	double		c[2];
	float4		reach[2];
	int			k;

	if (e->kind != HI_KEY_BOX || !grid_ent_center(e, c, reach))
		corrupt("bucket %u holds an entry that belongs outside the grid", r->id);
	for (k = 0; k < 2; k++)
	{
		if (!(c[k] >= r->lo[k] && (c[k] < r->hi[k] || (isinf(r->hi[k]) && c[k] <= r->hi[k]))))
			corrupt("bucket %u: entry (%u,%u) lies outside its region",
					r->id, ItemPointerGetBlockNumberNoCheck(&e->tid),
					ItemPointerGetOffsetNumberNoCheck(&e->tid));
		if (reach[k] > r->reach[k])
			corrupt("bucket %u: entry (%u,%u) reaches beyond its region's reach",
					r->id, ItemPointerGetBlockNumberNoCheck(&e->tid),
					ItemPointerGetOffsetNumberNoCheck(&e->tid));
	}
}

void
grid_check(Grid *g)
{
	int			nb;
	int			ndirs;
	BucketRef  *refs;
	int64		entries = 0;
	int64		nulls = 0;
	int			i;
	GridBucketData bd;

	/* the INCLUDE rows (payload/) */
	(void) pl_check(g->idx);
	refs = walk_dirs(g, &nb, &ndirs);

	qsort(refs, nb, sizeof(BucketRef), cmp_ref);
	for (i = 1; i < nb; i++)
		if (refs[i].id == refs[i - 1].id)
			corrupt("bucket %u is in two regions", refs[i].id);
	for (i = 0; i < nb; i++)
	{
		int			j;

		g->store->load(g, &refs[i].id, 1, &bd);
		for (j = 0; j < bd.n; j++)
			check_entry(&bd.e[j], &refs[i]);
		if (g->store->count(g, refs[i].id) != (uint32) bd.n)
			corrupt("bucket %u counts %u entries but holds %d",
					refs[i].id, g->store->count(g, refs[i].id), bd.n);
		entries += bd.n;
		if (bd.e)
			pfree(bd.e);
		CHECK_FOR_INTERRUPTS();
	}
	if (g->gs->nulls != HI_INVALID_PAGE)
	{
		gc_load(g, &g->gs->nulls, 1, &bd);
		for (i = 0; i < bd.n; i++)
			if (bd.e[i].kind == HI_KEY_BOX)
				corrupt("the NULL/EMPTY list holds a box");
		if (gc_count(g, g->gs->nulls) != (uint32) bd.n)
			corrupt("the NULL/EMPTY list counts %u entries but holds %d",
					gc_count(g, g->gs->nulls), bd.n);
		nulls = bd.n;
	}
	if (g->gs->odd != HI_INVALID_PAGE)
	{
		double		c[2];
		float4		r[2];

		gc_load(g, &g->gs->odd, 1, &bd);
		for (i = 0; i < bd.n; i++)
			if (bd.e[i].kind != HI_KEY_BOX || grid_ent_center(&bd.e[i], c, r))
				corrupt("the list of boxes without a finite centre holds another entry");
		if (gc_count(g, g->gs->odd) != (uint32) bd.n)
			corrupt("the odd-box list counts %u entries but holds %d",
					gc_count(g, g->gs->odd), bd.n);
		entries += bd.n;
	}
	if ((uint64) entries != g->sh->meta.nentries || (uint64) nulls != g->sh->meta.nnulls)
		corrupt("index holds %lld entries and %lld NULL/EMPTY ones, metadata says %llu and %llu",
				(long long) entries, (long long) nulls,
				(unsigned long long) g->sh->meta.nentries,
				(unsigned long long) g->sh->meta.nnulls);
	if (g->store->check)
		g->store->check(g, &entries);
	hi_pt_check(g->sh);
}

static void
buf_json(StringInfo s, const char *name, const GridBuf *b)
{
	appendStringInfo(s, "\"%s\": {\"hot_pages\": %d, \"cold_pages\": %d, \"hot_used\": %d, "
					 "\"cold_used\": %d, \"hits\": %llu, \"misses\": %llu, "
					 "\"read_batches\": %llu, \"evictions\": %llu, \"cold_flushes\": %llu, "
					 "\"pages_flushed\": %llu}",
					 name, b->hot_cap, b->cold_cap, b->nhot, b->ncold,
					 (unsigned long long) b->st.hits, (unsigned long long) b->st.misses,
					 (unsigned long long) b->st.read_batches,
					 (unsigned long long) b->st.evictions,
					 (unsigned long long) b->st.cold_flushes,
					 (unsigned long long) b->st.pages_flushed);
}

/* The structural snapshot, as JSON text */
char *
grid_inspect_json(Grid *g, const char *am)
{
	StringInfoData s;
	GridDirView rv;
	int			nb;
	int			ndirs;
	BucketRef  *refs = walk_dirs(g, &nb, &ndirs);
	uint64		pages[HI_NUM_TIERS];
	GridBuf		bufs[2];
	const GridCounters *c = &g->gs->cnt;

	grid_root(g, &rv);
	hi_pt_count(g->sh, pages);
	LWLockAcquire(&g->gs->buf_lock, LW_SHARED);
	bufs[0] = g->gs->buf[GRID_BUF_DIR];
	bufs[1] = g->gs->buf[GRID_BUF_BUCKET];
	LWLockRelease(&g->gs->buf_lock);

	initStringInfo(&s);
	appendStringInfo(&s, "{\"am\": \"%s\", \"mode\": \"%s\", \"page_size\": %u, "
					 "\"entry_format\": \"%s\", \"include_order\": \"%s\", "
					 "\"bucket_capacity\": %d, \"entries\": %llu, \"null_entries\": %llu, "
					 "\"pages\": %u, \"pages_flash\": %llu, \"pages_optane\": %llu, "
					 "\"root\": {\"cells\": [%d, %d], \"regions\": %d, \"reach\": [%g, %g]}, "
					 "\"directories\": %d, \"buckets\": %d, \"avg_bucket_fill\": %.4f, "
					 "\"splits\": %llu, \"merges\": %llu, \"dir_splits\": %llu, "
					 "\"dir_merges\": %llu, \"boundaries_removed\": %llu, \"overflows\": %llu, "
					 "\"reorganisations\": %llu, "
					 "\"free_page_ids\": %u, ",
					 am, g->store->name, g->gs->page_size,
					 HI_ENTRY_FORMAT_NAME(g->sh->meta.version),
					 HI_INCLUDE_ORDER_NAME(&g->sh->meta), g->gs->capacity,
					 (unsigned long long) g->sh->meta.nentries,
					 (unsigned long long) g->sh->meta.nnulls,
					 g->sh->meta.npages,
					 (unsigned long long) pages[HI_TIER_FLASH],
					 (unsigned long long) pages[HI_TIER_OPTANE],
					 rv.h->n[0], rv.h->n[1], rv.h->nr,
					 (double) rv.h->reach[0], (double) rv.h->reach[1],
					 ndirs, nb,
					 nb > 0 ? (double) g->sh->meta.nentries / ((double) nb * g->gs->capacity) : 0.0,
					 (unsigned long long) c->splits, (unsigned long long) c->merges,
					 (unsigned long long) c->dir_splits, (unsigned long long) c->dir_merges,
					 (unsigned long long) c->boundaries_removed,
					 (unsigned long long) c->overflows,
					 (unsigned long long) c->reorganisations, g->gs->nfree);
	appendStringInfoString(&s, "\"buffers\": {");
	buf_json(&s, "directory", &bufs[0]);
	appendStringInfoString(&s, ", ");
	buf_json(&s, "bucket", &bufs[1]);
	appendStringInfoString(&s, "}");
	if (g->store->inspect)
	{
		appendStringInfoString(&s, ", ");
		g->store->inspect(g, &s);
	}
	appendStringInfoString(&s, "}");
	pfree(refs);
	return s.data;
}

static void
page_add(HiPageInfo **out, Size *n, Size *max, Grid *g, uint32 pageno, int level,
		 int nentries, const double *lo, const double *hi)
{
	HiPageInfo *p;
	uint32		pte = hi_pt_get(g->sh, pageno);

	if (*n == *max)
	{
		*max *= 2;
		*out = repalloc_huge(*out, sizeof(HiPageInfo) * *max);
	}
	p = &(*out)[(*n)++];
	p->pageno = pageno;
	p->level = level;
	p->tier = HI_PTE_MAPPED(pte) ? HI_PTE_TIER(pte) : -1;
	p->nentries = nentries;
	memset(&p->box, 0, sizeof(HiBox));
	if (lo)
	{
		p->box.xmin = (float4) Max(lo[0], -FLT_MAX);
		p->box.ymin = (float4) Max(lo[1], -FLT_MAX);
		p->box.xmax = (float4) Min(hi[0], FLT_MAX);
		p->box.ymax = (float4) Min(hi[1], FLT_MAX);
	}
}

static void
chain_pages(Grid *g, uint32 head, const double *lo, const double *hi,
			HiPageInfo **out, Size *n, Size *max)
{
	int			np;
	uint32	   *pages = gc_pages(g, head, &np);
	int			i;

	for (i = 0; i < np; i++)
	{
		int			f;

		gbuf_pin(g, GRID_BUF_BUCKET, &pages[i], 1, &f);
		page_add(out, n, max, g, pages[i], 0,
				 ((HiPageHeader *) gbuf_page(g, GRID_BUF_BUCKET, f))->nentries, lo, hi);
		gbuf_unpin(g, GRID_BUF_BUCKET, f);
	}
	pfree(pages);
}

/* hybrid_index_pages: sub-directories, then bucket pages, then the chains */
HiPageInfo *
grid_pages(Grid *g, Size *n)
{
	Size		max = 256;
	HiPageInfo *out = palloc(sizeof(HiPageInfo) * max);
	GridDirView rv;
	int			nb;
	int			ndirs;
	BucketRef  *refs;
	int			i;

	*n = 0;
	grid_root(g, &rv);
	for (i = 0; i < rv.h->nr; i++)
	{
		double		lo[2],
					hi[2];
		uint32		p = rv.r[i].ref;
		int			f;

		gdv_region_box(&rv, i, lo, hi);
		gbuf_pin(g, GRID_BUF_DIR, &p, 1, &f);
		page_add(&out, n, &max, g, p, 1,
				 ((HiPageHeader *) gbuf_page(g, GRID_BUF_DIR, f))->nentries, lo, hi);
		gbuf_unpin(g, GRID_BUF_DIR, f);
	}
	refs = walk_dirs(g, &nb, &ndirs);
	if (g->store->page_info == NULL)
	{
		for (i = 0; i < nb; i++)
		{
			chain_pages(g, refs[i].id, refs[i].lo, refs[i].hi, &out, n, &max);
			CHECK_FOR_INTERRUPTS();
		}
	}
	else
	{
		uint32		p;

		for (p = 0; p < g->sh->meta.npages; p++)
		{
			HiPageInfo	info;

			if (!g->store->page_info(g, p, &info))
				continue;
			page_add(&out, n, &max, g, p, info.level, info.nentries, NULL, NULL);
		}
	}
	if (g->gs->nulls != HI_INVALID_PAGE)
		chain_pages(g, g->gs->nulls, NULL, NULL, &out, n, &max);
	if (g->gs->odd != HI_INVALID_PAGE)
		chain_pages(g, g->gs->odd, NULL, NULL, &out, n, &max);
	pfree(refs);
	return out;
}
