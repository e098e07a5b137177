/*
 * fuzz_grid_page.c
 *	  libFuzzer harness for the page decoders of the grid indexes (lbgrid,
 *	  hgrid): the layout check every page read from storage goes through
 *	  (lbgrid_page_layout / grid_page_layout, src/grid/grid_layout.c and
 *	  src/lbgrid/lb_store.c, behind hi_store_verify) and, for the pages it
 *	  accepts, what the readers then do with them:
 *	  - sub-directories: gdv_init + gdv_locate over the page (the search
 *		path), grid_subdir_refs into a page_size / 16 array (hgrid's access
 *		hook), gd_decode + gd_check (hybrid_index_check) and, when the check
 *		passes, gd_encode of the decoded directory must reproduce the page's
 *		scales, regions and cells bit for bit;
 *	  - GFFM bucket/chain pages: the entries copied as gc_load does;
 *	  - log-buckets: the records walked as lb_load does;
 *	  - NULL-list pages: the leaf entries walked as the NULL scan does.
 *
 * Input: byte 0 = flags (bits 0-1: page size 2048 << (v % 3); bit 2: hgrid
 * instead of lbgrid; bit 3: keep the input's checksum instead of fixing
 * it), then one page (zero-padded).  The page is an exact-size malloc, so
 * ASan sees any read past it.  Checks besides ASan/UBSan: the layout check
 * and gd_check end in success or XX002, nothing else.
 *
 * HI_FUZZ_WRITE_SEEDS=dir ./fuzz_grid_page  writes a seed corpus and exits.
 */
#include "postgres.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "catalog/pg_class.h"
#include "utils/rel.h"

#include "base/hi_base.h"
#include "core/hi_core.h"
#include "storage/storage.h"
#include "grid/grid.h"
#include "grid/grid_int.h"
#include "lbgrid/lbgrid.h"
#include "rtree/rtree.h"
#include "pg_shim.h"

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int			LLVMFuzzerInitialize(int *argc, char ***argv);

/* what hi_store_verify needs from other layers */
static HiAmOps fuzz_ops[2];
static HiStorePolicy fuzz_policy[2];
static int	fuzz_kind;			/* 0 lbgrid, 1 hgrid */

const HiAmOps *
hi_am_ops_by_kind(HiAmKind kind)
{
	return &fuzz_ops[fuzz_kind];
}

char *
hi_slot_path(HiIndexShared *sh, int tier)
{
	return pstrdup(tier == HI_TIER_FLASH ? "fuzz/hyb_0_0.flash" : "fuzz/hyb_0_0.optane");
}

static HiIndexShared *fake_sh;

static bool
verify(const char *page, uint32 pageno)
{
	volatile bool ok = true;

	PG_TRY();
	{
		hi_store_verify(fake_sh, page, pageno, HI_PTE_MAKE(0, 1, false));
	}
	PG_CATCH();
	{
		ok = false;
		if (fuzz_last_error.sqlerrcode != ERRCODE_INDEX_CORRUPTED)
		{
			fprintf(stderr, "hi_store_verify: unexpected SQLSTATE %s: %s\n",
					fuzz_sqlstate(fuzz_last_error.sqlerrcode), fuzz_last_error.message);
			abort();
		}
	}
	PG_END_TRY();
	return ok;
}

/* what the search path does with a sub-directory page */
static void
use_dir(const char *page, uint32 psize)
{
	GridDirView v;
	uint32	   *refs = palloc(sizeof(uint32) * (psize / 16));
	volatile uint32 sink = 0;
	int			n;
	int			i;
	GridDir    *volatile d = NULL;
	volatile bool checked = true;

	gdv_init(&v, GRID_DIR_FLAT((char *) page));
	/* locate the corners, the centre and the scale values themselves */
	for (i = 0; i <= v.h->n[GRID_X]; i++)
		sink += gdv_locate(&v, v.s[GRID_X][i], v.s[GRID_Y][0]);
	for (i = 0; i <= v.h->n[GRID_Y]; i++)
		sink += gdv_locate(&v, v.s[GRID_X][0], v.s[GRID_Y][i]);
	sink += gdv_locate(&v, -1e308, 1e308) + gdv_locate(&v, 0.0, 0.0);
	for (i = 0; i < v.h->nr; i++)
	{
		double		lo[2],
					hi[2];

		gdv_region_box(&v, i, lo, hi);
		sink += gdv_locate(&v, (lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2);
	}
	n = grid_subdir_refs(page, refs);
	if (n != v.h->nr)
		abort();

	PG_TRY();
	{
		d = gd_decode(GRID_DIR_FLAT((char *) page));
		gd_check(d, "sub-directory", 1);
	}
	PG_CATCH();
	{
		checked = false;
		if (fuzz_last_error.sqlerrcode != ERRCODE_INDEX_CORRUPTED)
		{
			fprintf(stderr, "gd_check: unexpected SQLSTATE %s: %s\n",
					fuzz_sqlstate(fuzz_last_error.sqlerrcode), fuzz_last_error.message);
			abort();
		}
	}
	PG_END_TRY();
	if (checked)
	{
		/* a directory that passes its check encodes back to the same page */
		Size		len = gd_size(d);
		char	   *flat = palloc0(len);
		GridDirView w;

		if (len > psize - GRID_DIR_OFF)
			abort();
		gd_encode(d, flat);
		gdv_init(&w, flat);
		if (memcmp(w.s[GRID_X], v.s[GRID_X], sizeof(double) * (v.h->n[GRID_X] + 1)) != 0 ||
			memcmp(w.s[GRID_Y], v.s[GRID_Y], sizeof(double) * (v.h->n[GRID_Y] + 1)) != 0 ||
			memcmp(w.r, v.r, sizeof(GridRegion) * v.h->nr) != 0 ||
			memcmp(w.cells, v.cells, sizeof(uint16) * v.h->n[GRID_X] * v.h->n[GRID_Y]) != 0)
		{
			fprintf(stderr, "sub-directory passed gd_check but does not re-encode to itself\n");
			abort();
		}
	}
	(void) sink;
}

static void
use_page(const char *page, uint32 psize)
{
	const HiPageHeader *h = (const HiPageHeader *) page;
	int			n = h->nentries;

	switch (h->flags & (HI_PAGE_FLAG_NULLS | GRID_PAGE_DIR | GRID_PAGE_BUCKET | GRID_PAGE_LOG))
	{
		case HI_PAGE_FLAG_NULLS:
			{
				RtLeafEntry *e = palloc(sizeof(RtLeafEntry) * Max(n, 1));

				memcpy(e, RT_LEAF(page), sizeof(RtLeafEntry) * n);
				break;
			}
		case GRID_PAGE_DIR:
			use_dir(page, psize);
			break;
		case GRID_PAGE_LOG:
			{
				volatile uint64 ts = 0;
				int			r;

				if (fuzz_kind != 0)
					abort();	/* hgrid has no log-buckets */
				for (r = 0; r < n; r++)
					ts += LB_RECORDS(page)[r].ts + LB_RECORDS(page)[r].bucket;
				(void) ts;
				break;
			}
		case GRID_PAGE_BUCKET:
			{
				/* gc_load: the entries after the chain header */
				GridEntry  *e = palloc(sizeof(GridEntry) * Max(n, 1));
				Size		hdr = MAXALIGN(sizeof(HiPageHeader)) + 2 * sizeof(uint32);

				memcpy(e, page + hdr, sizeof(GridEntry) * n);
				break;
			}
		default:
			abort();			/* the layout check accepted an unknown kind */
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32		psize;
	uint8		flags;
	char	   *page;

	if (size < 1 + sizeof(HiPageHeader))
		return 0;
	flags = data[0];
	psize = 2048u << ((flags & 3) % 3);
	fuzz_kind = (flags & 4) ? 1 : 0;
	fake_sh->meta.page_size = psize;
	fake_sh->meta.am = fuzz_kind ? HI_AM_HGRID : HI_AM_LBGRID;

	fuzz_begin_input();
	page = malloc(psize);
	memset(page, 0, psize);
	memcpy(page, data + 1, Min((size_t) psize, size - 1));
	((HiPageHeader *) page)->pageno = 1;
	if (!(flags & 8))
		((HiPageHeader *) page)->checksum = hi_page_checksum(page, psize);
	if (verify(page, 1))
		use_page(page, psize);
	free(page);
	fuzz_mem_reset();
	return 0;
}

/* ---- seeds: pages the grid writes ---- */

static void
write_file(const char *dir, const char *name, uint8 flags, const char *page, uint32 psize)
{
	fuzz_write_seed(dir, name, &flags, 1, page, psize);
}

static void
init_page(char *page, uint16 level, uint16 flags, uint16 n)
{
	HiPageHeader *h = (HiPageHeader *) page;

	memset(page, 0, 2048);
	h->pageno = 1;
	h->level = level;
	h->flags = flags;
	h->nentries = n;
	h->link = HI_INVALID_PAGE;
}

static void
write_seeds(const char *dir)
{
	static char page[2048] __attribute__((aligned(16)));
	double		lo[2] = {0, 0};
	double		hi[2] = {100, 100};
	GridDir    *d;
	int			i;

	mkdir(dir, 0755);
	fuzz_begin_input();
	/* a sub-directory of 3 x 2 cells, 4 regions (one spans two cells) */
	d = gd_new(lo, hi, 7);
	gd_insert_boundary(d, GRID_X, 30);
	gd_insert_boundary(d, GRID_X, 60);
	gd_insert_boundary(d, GRID_Y, 50);
	init_page(page, 1, GRID_PAGE_DIR, 0);
	gd_encode(d, GRID_DIR_FLAT(page));
	write_file(dir, "dir_lbgrid", 0, page, 2048);
	write_file(dir, "dir_hgrid", 4, page, 2048);
	/* a GFFM bucket of 5 entries */
	init_page(page, 0, GRID_PAGE_BUCKET, 5);
	for (i = 0; i < 5; i++)
	{
		GridEntry  *e = (GridEntry *) (page + MAXALIGN(sizeof(HiPageHeader)) + 8) + i;

		e->box.xmin = e->box.xmax = i;
		e->box.ymin = e->box.ymax = i;
		ItemPointerSet(&e->tid, 1, i + 1);
		e->kind = HI_KEY_BOX;
	}
	write_file(dir, "bucket_hgrid", 4, page, 2048);
	/* a log-bucket of 3 records */
	init_page(page, 0, GRID_PAGE_LOG, 3);
	for (i = 0; i < 3; i++)
	{
		LbRecord   *r = &LB_RECORDS(page)[i];

		r->bucket = 7;
		r->op = (i == 2) ? LB_OP_DELETE : LB_OP_INSERT;
		r->kind = HI_KEY_BOX;
		r->ts = i + 1;
		ItemPointerSet(&r->tid, 1, i + 1);
	}
	write_file(dir, "log_lbgrid", 0, page, 2048);
	/* a NULL-list page of 2 entries */
	init_page(page, 0, HI_PAGE_FLAG_NULLS, 2);
	RT_LEAF(page)[0].kind = HI_KEY_NULL;
	RT_LEAF(page)[1].kind = HI_KEY_EMPTY;
	write_file(dir, "nulls_hgrid", 4, page, 2048);
	fuzz_mem_reset();
	fprintf(stderr, "wrote 5 seeds to %s\n", dir);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *dir = getenv("HI_FUZZ_WRITE_SEEDS");

	fake_sh = calloc(1, sizeof(HiIndexShared));
	fuzz_ops[0].name = "lbgrid";
	fuzz_ops[0].page_layout = lbgrid_page_layout;
	fuzz_ops[1].name = "hgrid";
	fuzz_ops[1].page_layout = grid_page_layout;
	fuzz_policy[0].page_layout = lbgrid_page_layout;
	fuzz_policy[1].page_layout = grid_page_layout;
	hi_store_register(HI_AM_LBGRID, &fuzz_policy[0]);
	hi_store_register(HI_AM_HGRID, &fuzz_policy[1]);
	if (dir != NULL && dir[0] != '\0')
	{
		write_seeds(dir);
		exit(0);
	}
	return 0;
}
