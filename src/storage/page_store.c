/*
 * page_store.c
 *	  Pages by logical id: the one way every buffer manager (the shared
 *	  page cache, eFIND's buffers, the grid buffers) and tier migration read
 *	  and write whole pages.  A read maps the page id through the page
 *	  table, reads in one batch and verifies checksum, page id and layout; a
 *	  write checksums, chooses the tier, writes copy-on-write into fresh
 *	  slots in one batch and only then points the page table at them.
 *
 * What only an upper layer knows comes from the HiStorePolicy its access
 * method kind registered (hi_store_register): the layout check, the tier
 * of a write, and the read notifications placement policies learn from.
 */
#include "postgres.h"

#include "executor/instrument.h"
#include "port/pg_crc32c.h"

#include "storage/storage.h"

#define HI_MAX_KINDS 8

static const HiStorePolicy *policies[HI_MAX_KINDS];

/* Called from _PG_init by each access method kind that needs a policy */
void
hi_store_register(HiAmKind kind, const HiStorePolicy *policy)
{
	if ((int) kind < 0 || (int) kind >= HI_MAX_KINDS)
		elog(ERROR, "invalid hybrid_index access method kind %d", (int) kind);
	policies[kind] = policy;
}

/* The policy of an index's kind; never NULL (an empty one if none) */
const HiStorePolicy *
hi_store_policy(const HiIndexShared *sh)
{
	static const HiStorePolicy none = {0};
	uint32		kind = sh->meta.am;

	if (kind < HI_MAX_KINDS && policies[kind] != NULL)
		return policies[kind];
	return &none;
}

/* The tier a page is written to: the policy's choice, flash without one */
static int
write_tier(HiIndexShared *sh, int slotno, const char *page, uint32 old_pte)
{
	const HiStorePolicy *p = hi_store_policy(sh);

	if (p->write_tier == NULL)
		return HI_TIER_FLASH;
	return p->write_tier(sh, slotno, page, old_pte);
}

uint32
hi_page_checksum(const char *page, uint32 page_size)
{
	pg_crc32c	crc;

	INIT_CRC32C(crc);
	COMP_CRC32C(crc, page + sizeof(uint32), page_size - sizeof(uint32));
	FIN_CRC32C(crc);
	return crc;
}

void
hi_store_verify(HiIndexShared *sh, const char *page, uint32 pageno, uint32 pte)
{
	const HiPageHeader *h = (const HiPageHeader *) page;

	if (h->checksum != hi_page_checksum(page, sh->meta.page_size) ||
		h->pageno != pageno)
	{
		char	   *path = hi_slot_path(sh, HI_PTE_TIER(pte));

		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("corrupted page %u in index file \"%s\" at slot %u",
						pageno, path, HI_PTE_SLOT(pte)),
				 errdetail("Stored checksum %08x, computed %08x; page header says page %u.",
						   h->checksum, hi_page_checksum(page, sh->meta.page_size),
						   h->pageno),
				 errhint("REINDEX the index.")));
	}
	else
	{
		const HiStorePolicy *p = hi_store_policy(sh);
		const char *why;

		if (p->page_layout != NULL &&
			(why = p->page_layout(page, sh->meta.page_size)) != NULL)
		{
			char	   *path = hi_slot_path(sh, HI_PTE_TIER(pte));

			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("corrupted page %u in index file \"%s\" at slot %u",
							pageno, path, HI_PTE_SLOT(pte)),
					 errdetail("The checksum is right but %s.", why),
					 errhint("REINDEX the index.")));
		}
	}
}

/*
 * Give each of n pages a fresh slot of the tier it belongs on, set its
 * checksum, and describe its write in reqs; its new mapping goes to ptes.
 * ckpt_lock is held.
 */
static void
prepare_writes(HiIndexShared *sh, char **pages, int n, HiIoReq *reqs, uint32 *ptes)
{
	uint32		psize = sh->meta.page_size;
	int			slotno = sh - hi_shared->indexes;
	char	   *paths[HI_NUM_TIERS] = {NULL, NULL};
	int			i;

	for (i = 0; i < n; i++)
	{
		HiPageHeader *h = (HiPageHeader *) pages[i];
		int			tier = write_tier(sh, slotno, pages[i],
									  hi_pt_get(sh, h->pageno));
		uint32		slot = hi_pt_alloc_slot(sh, tier);

		h->checksum = hi_page_checksum(pages[i], psize);
		ptes[i] = HI_PTE_MAKE(tier, slot, h->level > 0);
		if (paths[tier] == NULL)
			paths[tier] = hi_slot_path(sh, tier);
		reqs[i].fd = hi_file_open(sh, tier, false);
		reqs[i].tier = tier;
		reqs[i].offset = (off_t) slot * psize;
		reqs[i].buf = pages[i];
		reqs[i].len = psize;
		reqs[i].path = paths[tier];
	}
}

/* The writes failed: the old versions stay current; the new slots go back */
static void
unalloc_slots(HiIndexShared *sh, const uint32 *ptes, int n)
{
	int			i;

	for (i = 0; i < n; i++)
		hi_pt_unalloc_slot(sh, HI_PTE_TIER(ptes[i]), HI_PTE_SLOT(ptes[i]));
}

/* The writes are done: point the page table at the new slots */
static void
remap_pages(HiIndexShared *sh, char **pages, const uint32 *ptes, int n)
{
	int			i;

	for (i = 0; i < n; i++)
		hi_pt_remap(sh, ((HiPageHeader *) pages[i])->pageno, ptes[i]);
	pgBufferUsage.shared_blks_written += n;
}

/*
 * Write pages of one index copy-on-write: each into a fresh slot of the
 * tier it belongs on, in one batch, then point the page table at them.
 */
void
hi_store_write(HiIndexShared *sh, char **pages, int n)
{
	HiIoReq    *reqs;
	uint32	   *ptes;

	if (n == 0)
		return;
	reqs = palloc(sizeof(HiIoReq) * n);
	ptes = palloc(sizeof(uint32) * n);

	/* a checkpoint waits for page writes in flight (see hi_index.c) */
	LWLockAcquire(&sh->ckpt_lock, LW_SHARED);
	PG_TRY();
	{
		prepare_writes(sh, pages, n, reqs, ptes);
		HI_TRY_INNER();
		{
			hi_io_batch(sh, reqs, n, true);
		}
		HI_CATCH_INNER();
		{
			unalloc_slots(sh, ptes, n);
			PG_RE_THROW();
		}
		HI_END_TRY_INNER();
		remap_pages(sh, pages, ptes, n);
	}
	PG_FINALLY();
	{
		hi_lwlock_release_cleanup(&sh->ckpt_lock);
	}
	PG_END_TRY();
	pfree(reqs);
	pfree(ptes);
}

/*
 * hi_store_write in two halves, for a bulk load that goes on building its
 * next pages while the device writes these: the pages get their slots and
 * their writes are submitted (f describes them), and the caller leaves
 * them unchanged until hi_store_write_finish waits for the writes and
 * points the page table at the new slots.  Where the writes cannot be
 * left in flight (hi_io_write_start) they are done here.  ckpt_lock is
 * held from start to finish, so one index's writes in flight in one
 * process at a time.
 */
void
hi_store_write_start(HiStoreFlight *f, HiIndexShared *sh, char **pages, int n)
{
	f->sh = sh;
	f->pages = pages;
	f->n = n;
	f->in_flight = false;
	f->started = false;
	if (n == 0)
		return;
	f->reqs = palloc(sizeof(HiIoReq) * n);
	f->ptes = palloc(sizeof(uint32) * n);
	LWLockAcquire(&sh->ckpt_lock, LW_SHARED);
	PG_TRY();
	{
		prepare_writes(sh, pages, n, f->reqs, f->ptes);
		HI_TRY_INNER();
		{
			f->in_flight = hi_io_write_start(sh, f->reqs, n);
			if (!f->in_flight)
				hi_io_batch(sh, f->reqs, n, true);
		}
		HI_CATCH_INNER();
		{
			unalloc_slots(sh, f->ptes, n);
			PG_RE_THROW();
		}
		HI_END_TRY_INNER();
	}
	PG_CATCH();
	{
		hi_lwlock_release_cleanup(&sh->ckpt_lock);
		PG_RE_THROW();
	}
	PG_END_TRY();
	f->started = true;
}

void
hi_store_write_finish(HiStoreFlight *f)
{
	if (!f->started)
		return;
	f->started = false;
	PG_TRY();
	{
		if (f->in_flight)
		{
			HI_TRY_INNER();
			{
				hi_io_write_wait();
			}
			HI_CATCH_INNER();
			{
				unalloc_slots(f->sh, f->ptes, f->n);
				PG_RE_THROW();
			}
			HI_END_TRY_INNER();
		}
		remap_pages(f->sh, f->pages, f->ptes, f->n);
	}
	PG_FINALLY();
	{
		hi_lwlock_release_cleanup(&f->sh->ckpt_lock);
	}
	PG_END_TRY();
	pfree(f->reqs);
	pfree(f->ptes);
}

/*
 * Read the stored versions of n pages into bufs (HI_IO_ALIGN-aligned,
 * page_size each) in one batch, and verify them; ptes (optional) receives
 * the mapping each was read from.  relname names the index in errors (NULL:
 * its OID).
 *
 * The caller keeps a checkpoint from freeing the slots being read: by
 * holding tree_lock (the shared cache does; a checkpoint holds it
 * exclusively) or ckpt_lock (hi_store_read, tier moves).  A slot
 * superseded meanwhile stays unused until the reads are done
 * (hi_pt_reads_begin).
 */
void
hi_store_read_pages(HiIndexShared *sh, const char *relname, const uint32 *pagenos,
					int n, char **bufs, uint32 *ptes)
{
	HiIoReq    *reqs;
	uint32	   *ptes_local = NULL;
	char	   *paths[HI_NUM_TIERS] = {NULL, NULL};
	uint32		psize = sh->meta.page_size;
	int			i;

	if (n == 0)
		return;
	reqs = palloc(sizeof(HiIoReq) * n);
	if (ptes == NULL)
		ptes = ptes_local = palloc(sizeof(uint32) * n);
	hi_pt_reads_begin(sh);
	PG_TRY();
	{
		for (i = 0; i < n; i++)
		{
			uint32		e = hi_pt_get(sh, pagenos[i]);
			int			tier;

			if (!HI_PTE_MAPPED(e))
			{
				if (relname)
					ereport(ERROR,
							(errcode(ERRCODE_INDEX_CORRUPTED),
							 errmsg("page %u of index \"%s\" has no storage",
									pagenos[i], relname)));
				ereport(ERROR,
						(errcode(ERRCODE_INDEX_CORRUPTED),
						 errmsg("page %u of index %u has no storage",
								pagenos[i], sh->indexoid)));
			}
			tier = HI_PTE_TIER(e);
			if (paths[tier] == NULL)
				paths[tier] = hi_slot_path(sh, tier);
			ptes[i] = e;
			reqs[i].fd = hi_file_open(sh, tier, false);
			reqs[i].tier = tier;
			reqs[i].offset = (off_t) HI_PTE_SLOT(e) * psize;
			reqs[i].buf = bufs[i];
			reqs[i].len = psize;
			reqs[i].path = paths[tier];
		}
		hi_io_batch(sh, reqs, n, false);
		/* EXPLAIN (BUFFERS) shows the pages we read as shared reads */
		pgBufferUsage.shared_blks_read += n;
	}
	PG_FINALLY();
	{
		hi_pt_reads_end(sh);
	}
	PG_END_TRY();
	for (i = 0; i < n; i++)
		hi_store_verify(sh, bufs[i], pagenos[i], ptes[i]);
	pfree(reqs);
	if (ptes_local)
		pfree(ptes_local);
}

/*
 * hi_store_read_pages for buffer managers that do not hold tree_lock
 * (eFIND's buffers, the grid buffers): a checkpoint waits meanwhile.
 */
void
hi_store_read(HiIndexShared *sh, const uint32 *pagenos, int n, char **bufs)
{
	if (n == 0)
		return;
	LWLockAcquire(&sh->ckpt_lock, LW_SHARED);
	PG_TRY();
	{
		hi_store_read_pages(sh, NULL, pagenos, n, bufs, NULL);
	}
	PG_FINALLY();
	{
		hi_lwlock_release_cleanup(&sh->ckpt_lock);
	}
	PG_END_TRY();
}
