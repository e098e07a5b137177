/*
 * fuzz_page.c
 *	  libFuzzer harness for the page decoder/verifier of hybrid_index: the
 *	  page checksum check every page read goes through (hi_store_verify and
 *	  hi_page_checksum, src/storage/page_store.c) and the structural checks of
 *	  hybrid_index_check over R-tree pages (rt_check, src/rtree/rtree_check.c:
 *	  levels, entry counts against page capacity, child references, boxes,
 *	  null list, entry totals).
 *
 * The real rt_check runs over a page source that serves the pages of the
 * fuzz input instead of the shared cache; each page is verified by the
 * real hi_store_verify exactly as the cache does after a read.
 *
 * Input layout:
 *	 byte 0		flags: bit 0 = keep the checksums of the input (else they
 *				are fixed up, so the fuzzer gets past them and explores
 *				the structure checks); bits 1-2 = page size 2048 << (v % 3);
 *				bits 4-5 = pages the metadata claims beyond the input
 *	 bytes 1-24 metadata (little endian uint32): root, height, null_head,
 *				null_tail, nentries, nnulls
 *	 bytes 25..	the pages, page_size each (the last one zero-padded)
 *
 * Checks, besides ASan/UBSan: rt_check either succeeds or raises
 * ERRCODE_INDEX_CORRUPTED (XX002); never another error, never a crash.
 * With HI_FUZZ_PAGE_CONSUMERS=1 the inputs rt_check accepts are also fed
 * to rt_pages (hybrid_index_pages), which relies on pages being well
 * formed; with =2 every input is (pages whose checksum is right but whose
 * content is not: what a bug, not a disk, would write).
 *
 * HI_FUZZ_WRITE_SEEDS=dir ./fuzz_page  writes a seed corpus and exits.
 */
#include "postgres.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "catalog/pg_class.h"
#include "utils/rel.h"

#include "base/hi_base.h"
#include "core/hi_core.h"
#include "policy/placement.h"
#include "storage/storage.h"
#include "rtree/rtree.h"
#include "pg_shim.h"

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int			LLVMFuzzerInitialize(int *argc, char ***argv);

#define META_BYTES	24
#define MAX_FRAMES	4096

/* What the code under test would get from other layers */
static const HiAmOps fuzz_ops = {
	.name = "hyrtree",
	.kind = HI_AM_HYRTREE,
	.page_layout = rt_page_layout
};

/* the page store's layout check, as hyrtree registers it */
static const HiStorePolicy fuzz_policy = {
	.page_layout = rt_page_layout
};

const HiAmOps *
hi_am_ops_by_kind(HiAmKind kind)
{
	return &fuzz_ops;
}

void
hi_pt_check(HiIndexShared *sh)
{
	/* the page table is not part of this input */
}

/* every page is stored, alternately on the two tiers */
uint32
hi_pt_get(HiIndexShared *sh, uint32 pageno)
{
	return HI_PTE_MAKE(pageno % 2, pageno, false);
}

char *
hi_slot_path(HiIndexShared *sh, int tier)
{
	return pstrdup(tier == HI_TIER_FLASH ? "fuzz/hyb_0_0.flash" : "fuzz/hyb_0_0.optane");
}

/* ---- a page source over the fuzz input ---- */

static const uint8_t *in_pages;
static size_t in_len;
static uint32 in_npages;
static bool keep_checksums;
static char *frames[MAX_FRAMES];
static int	nframes;

static void
src_read_batch(HiIndex *idx, const uint32 *pagenos, int n, HiFrame *out)
{
	uint32		psize = idx->page_size;
	int			i;

	for (i = 0; i < n; i++)
	{
		uint32		p = pagenos[i];
		char	   *buf;
		size_t		off = (size_t) p * psize;

		if (p >= in_npages)
			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("page %u of index \"%s\" has no storage",
							p, RelationGetRelationName(idx->rel))));
		if (nframes >= MAX_FRAMES)
			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("fuzz: too many page reads")));
		buf = palloc0(psize);
		if (off < in_len)
			memcpy(buf, in_pages + off, Min((size_t) psize, in_len - off));
		if (!keep_checksums)
			((HiPageHeader *) buf)->checksum = hi_page_checksum(buf, psize);
		/* exactly what the cache does after reading a page */
		hi_store_verify(idx->sh, buf, p, hi_pt_get(idx->sh, p));
		frames[nframes] = buf;
		out[i] = nframes++;
	}
}

static char *
src_data(HiIndex *idx, HiFrame f)
{
	if (f < 0 || f >= nframes)
		abort();
	return frames[f];
}

static void
src_release(HiIndex *idx, HiFrame f)
{
	if (f < 0 || f >= nframes)
		abort();
}

static HiFrame
src_new_page(HiIndex *idx, uint32 pageno)
{
	abort();
}

static void
src_write(HiIndex *idx, HiFrame f)
{
	abort();					/* checks must not modify pages */
}

static int
src_batch_limit(HiIndex *idx)
{
	return 64;
}

static void
src_flush_all(HiIndex *idx)
{
	abort();
}

static const HiPageSource fuzz_source = {
	src_read_batch, src_new_page, src_data, src_write, src_write,
	src_release, src_batch_limit, src_flush_all
};

/* ---- the harness ---- */

static FormData_pg_class fake_class;
static RelationData fake_rel;
static HiIndexShared *fake_sh;
static int	consumers = 0;	/* 1: after rt_check passed; 2: always */

static uint32
get32(const uint8_t *p)
{
	uint32		v;

	memcpy(&v, p, 4);
	return v;
}

static void
setup_index(HiIndex *idx, uint32 psize, const uint8_t *meta, uint32 extra)
{
	if (fake_sh == NULL)
	{
		fake_sh = calloc(1, sizeof(HiIndexShared));
		hi_store_register(HI_AM_HYRTREE, &fuzz_policy);
		strcpy(NameStr(fake_class.relname), "fuzz_idx");
		fake_rel.rd_rel = &fake_class;
	}
	memset(&fake_sh->meta, 0, sizeof(HiMeta));
	fake_sh->meta.magic = HI_META_MAGIC;
	fake_sh->meta.version = HI_META_VERSION;
	fake_sh->meta.am = HI_AM_HYRTREE;
	fake_sh->meta.page_size = psize;
	fake_sh->meta.root = get32(meta);
	fake_sh->meta.height = get32(meta + 4);
	fake_sh->meta.null_head = get32(meta + 8);
	fake_sh->meta.null_tail = get32(meta + 12);
	fake_sh->meta.nentries = get32(meta + 16);
	fake_sh->meta.nnulls = get32(meta + 20);
	fake_sh->meta.npages = in_npages + extra;
	fake_sh->in_use = true;
	fake_sh->loaded = true;

	memset(idx, 0, sizeof(*idx));
	idx->rel = &fake_rel;
	idx->sh = fake_sh;
	idx->page_size = psize;
	idx->pages = &fuzz_source;
}

static bool
run_check(HiIndex *idx, const char *what)
{
	volatile bool ok = true;

	PG_TRY();
	{
		rt_check(idx);
	}
	PG_CATCH();
	{
		ok = false;
		if (fuzz_last_error.sqlerrcode != ERRCODE_INDEX_CORRUPTED)
		{
			fprintf(stderr, "%s: unexpected SQLSTATE %s: %s\n", what,
					fuzz_sqlstate(fuzz_last_error.sqlerrcode), fuzz_last_error.message);
			abort();
		}
	}
	PG_END_TRY();
	return ok;
}

static void
run_consumers(HiIndex *idx)
{
	PG_TRY();
	{
		Size		n;

		(void) rt_pages(idx, &n);
	}
	PG_CATCH();
	{
		if (fuzz_last_error.sqlerrcode != ERRCODE_INDEX_CORRUPTED)
		{
			fprintf(stderr, "rt_pages: unexpected SQLSTATE %s: %s\n",
					fuzz_sqlstate(fuzz_last_error.sqlerrcode), fuzz_last_error.message);
			abort();
		}
	}
	PG_END_TRY();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	HiIndex		idx;
	uint32		psize;
	uint8		flags;

	if (size < 1 + META_BYTES)
		return 0;
	flags = data[0];
	keep_checksums = (flags & 1) != 0;
	psize = 2048u << (((flags >> 1) & 3) % 3);
	in_pages = data + 1 + META_BYTES;
	in_len = size - 1 - META_BYTES;
	in_npages = (uint32) ((in_len + psize - 1) / psize);
	if (in_npages == 0)
		in_npages = 1;
	nframes = 0;

	fuzz_begin_input();
	setup_index(&idx, psize, data + 1, (flags >> 4) & 3);
	if ((run_check(&idx, "rt_check") && consumers == 1) || consumers == 2)
	{
		nframes = 0;
		run_consumers(&idx);
	}
	fuzz_mem_reset();
	return 0;
}

/* ---- seed corpus: small valid trees ---- */

static void
put32(uint8_t *p, uint32 v)
{
	memcpy(p, &v, 4);
}

static void
leaf_entry(char *page, int k, float x, float y, HiKeyKind kind)
{
	RtLeafEntry *e = &RT_LEAF(page)[k];

	e->box.xmin = x;
	e->box.ymin = y;
	e->box.xmax = x + 1;
	e->box.ymax = y + 1;
	ItemPointerSet(&e->tid, 1, k + 1);
	e->kind = kind;
	RT_PAGE_HDR(page)->nentries = k + 1;
}

/*
 * A two-level tree (root 0 over leaves 1 and 2) plus a null-list page 3,
 * with real checksums; flags select the page size.
 */
static size_t
make_tree(uint8_t *buf, int sizesel, bool keep)
{
	uint32		psize = 2048u << sizesel;
	static char pages[4 * 8192] __attribute__((aligned(16)));
	char	   *p;
	int			i;

	memset(buf, 0, 1 + META_BYTES + 4 * psize);
	memset(pages, 0, sizeof(pages));
	buf[0] = (keep ? 1 : 0) | (sizesel << 1);
	put32(buf + 1, 0);			/* root */
	put32(buf + 5, 2);			/* height */
	put32(buf + 9, 3);			/* null_head */
	put32(buf + 13, 3);			/* null_tail */
	put32(buf + 17, 6);			/* nentries */
	put32(buf + 21, 1);			/* nnulls */

	p = pages;
	rt_page_init(p, 0, 1, 0);
	for (i = 0; i < 2; i++)
	{
		RtInternalEntry *e = &RT_INTERNAL(p)[i];

		e->child = 1 + i;
		e->box.xmin = 10 * i;
		e->box.ymin = 0;
		e->box.xmax = 10 * i + 4;
		e->box.ymax = 4;
		RT_PAGE_HDR(p)->nentries = i + 1;
	}
	for (i = 0; i < 2; i++)
	{
		int			k;

		p = pages + (Size) (1 + i) * psize;
		rt_page_init(p, 1 + i, 0, 0);
		for (k = 0; k < 3; k++)
			leaf_entry(p, k, 10 * i + k, k, HI_KEY_BOX);
	}
	p = pages + (Size) 3 * psize;
	rt_page_init(p, 3, 0, HI_PAGE_FLAG_NULLS);
	leaf_entry(p, 0, 0, 0, HI_KEY_NULL);
	for (i = 0; i < 4; i++)
	{
		p = pages + (Size) i * psize;
		((HiPageHeader *) p)->checksum = hi_page_checksum(p, psize);
	}
	memcpy(buf + 1 + META_BYTES, pages, 4 * psize);
	return 1 + META_BYTES + 4 * psize;
}

static void
write_seeds(const char *dir)
{
	static uint8_t buf[1 + META_BYTES + 4 * 8192];
	size_t		len;
	HiIndex		idx;

	mkdir(dir, 0755);
	len = make_tree(buf, 0, true);
	/* the seed must pass: otherwise the harness is wrong, not the code */
	fuzz_begin_input();
	in_pages = buf + 1 + META_BYTES;
	in_len = len - 1 - META_BYTES;
	in_npages = 4;
	keep_checksums = true;
	nframes = 0;
	setup_index(&idx, 2048, buf + 1, 0);
	if (!run_check(&idx, "seed"))
	{
		fprintf(stderr, "seed tree fails rt_check: %s\n", fuzz_last_error.message);
		exit(1);
	}
	fuzz_mem_reset();
	fuzz_write_seed(dir, "tree_2k_checksums", NULL, 0, buf, len);
	len = make_tree(buf, 0, false);
	fuzz_write_seed(dir, "tree_2k", NULL, 0, buf, len);
	len = make_tree(buf, 1, false);
	fuzz_write_seed(dir, "tree_4k", NULL, 0, buf, len);
	fprintf(stderr, "wrote 3 seeds to %s\n", dir);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *dir = getenv("HI_FUZZ_WRITE_SEEDS");
	const char *c = getenv("HI_FUZZ_PAGE_CONSUMERS");

	consumers = (c != NULL) ? atoi(c) : 0;
	if (dir != NULL && dir[0] != '\0')
	{
		write_seeds(dir);
		exit(0);
	}
	return 0;
}
