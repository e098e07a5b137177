/*
 * page_table_mapfile.c
 *	  The map file: an index's metadata, page table and access method state
 *	  as of its last checkpoint (HiMapHeader, storage.h), built from the
 *	  shared state, written atomically and durably, and read back into a
 *	  fresh slot when the index is loaded (page_table.c owns that state).
 */
#include "postgres.h"

#include <fcntl.h>
#include <unistd.h>

#include "port/pg_crc32c.h"
#include "utils/dsa.h"

#include "base/hi_base.h"
#include "storage/storage.h"
#include "storage/tier_int.h"

static pg_crc32c
map_crc(const char *buf, Size len)
{
	pg_crc32c	crc;

	INIT_CRC32C(crc);
	COMP_CRC32C(crc, buf + offsetof(HiMapHeader, npte),
				len - offsetof(HiMapHeader, npte));
	FIN_CRC32C(crc);
	return crc;
}

/*
 * The map file's contents from the shared state (palloc'd, *lenp bytes).
 * The caller holds tree_lock exclusively and has flushed every dirty page,
 * so the page table matches the pages on disk.
 */
char *
hi_map_image(HiIndexShared *sh, Size *lenp)
{
	uint32		npte = sh->meta.npages;
	uint32		bloblen = DsaPointerIsValid(sh->am_blob) ? sh->am_blob_len : 0;
	Size		len = sizeof(HiMapHeader) + (Size) npte * sizeof(uint32) + bloblen;
	char	   *buf = palloc_extended(len, MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	HiMapHeader *h = (HiMapHeader *) buf;
	int			t;

	h->magic = HI_MAP_MAGIC;
	h->version = HI_MAP_VERSION;
	h->npte = npte;
	h->indexoid = sh->indexoid;
	h->dboid = sh->dboid;
	h->relnumber = sh->relnumber;
	h->meta = sh->meta;
	h->am_blob_len = bloblen;
	if (bloblen > 0)
		memcpy(buf + sizeof(HiMapHeader) + (Size) npte * sizeof(uint32),
			   dsa_get_address(hi_dsa(), sh->am_blob), bloblen);
	LWLockAcquire(&sh->map_lock, LW_SHARED);
	for (t = 0; t < HI_NUM_TIERS; t++)
	{
		h->spcoid[t] = sh->spcoid[t];
		h->nslots[t] = sh->nslots[t];
	}
	if (npte > 0)
		memcpy(buf + sizeof(HiMapHeader), hi_pt_array(sh),
			   (Size) Min(npte, sh->pt_cap) * sizeof(uint32));
	LWLockRelease(&sh->map_lock);
	h->crc = map_crc(buf, len);
	*lenp = len;
	return buf;
}

/* Replace the map file by an image (atomically and durably) */
void
hi_map_write_image(HiIndexShared *sh, const char *image, Size len, bool sync)
{
	char	   *path = hi_file_path(sh->spcoid[HI_TIER_FLASH], sh->dboid,
									sh->spcoid[HI_TIER_FLASH], sh->relnumber, "map");

	hi_replace_file(path, image, len, sync);
	pfree(path);
}

void
hi_map_write(HiIndexShared *sh)
{
	Size		len;
	char	   *buf = hi_map_image(sh, &len);

	hi_map_write_image(sh, buf, len, true);
	pfree(buf);
}

static char *
map_load(const char *path, Size *len, bool *bad)
{
	char	   *buf = hi_read_whole_file(path, len);
	HiMapHeader *h = (HiMapHeader *) buf;

	*bad = false;
	if (buf == NULL)
		return NULL;
	if (*len < HI_MAP_HEADER_SIZE(2) || h->magic != HI_MAP_MAGIC ||
		!HI_MAP_VERSION_OK(h->version) ||
		*len != HI_MAP_HEADER_SIZE(h->version) + (Size) h->npte * sizeof(uint32) + h->am_blob_len ||
		h->crc != map_crc(buf, *len))
		*bad = true;
	else if (h->version < 3)
	{
		/* a version 2 map: make room for the fields it lacks */
		Size		hsz = HI_MAP_HEADER_SIZE(h->version);
		char	   *nbuf = palloc_extended(*len - hsz + sizeof(HiMapHeader), MCXT_ALLOC_HUGE);

		memcpy(nbuf, buf, hsz);
		memcpy(nbuf + sizeof(HiMapHeader), buf + hsz, *len - hsz);
		*len += sizeof(HiMapHeader) - hsz;
		pfree(buf);
		buf = nbuf;
		h = (HiMapHeader *) buf;
		h->meta.payload_root = HI_INVALID_PAGE;
		h->meta.payload_keys = 0;
	}
	return buf;
}

/*
 * The header of a map file, if it can be read and is one of ours; *exists
 * false only when there is no file.  Never an ERROR.
 */
static bool
read_header(const char *path, HiMapHeader *h, bool *exists)
{
	int			fd = open(path, O_RDONLY | PG_BINARY, 0);
	bool		ok;

	*exists = fd >= 0 || errno != ENOENT;
	if (fd < 0)
		return false;
	ok = read(fd, h, sizeof(*h)) >= (ssize_t) HI_MAP_HEADER_SIZE(2) &&
		h->magic == HI_MAP_MAGIC && HI_MAP_VERSION_OK(h->version);
	close(fd);
	return ok;
}

/*
 * The position of the redo log a map file reflects (its checkpoint), for
 * WAL redo: never an ERROR (a replay must not stop on our records).
 * Returns 0 and sets *exists false when there is no map file; 0 for a map
 * file that cannot be read or is not one.
 */
uint64
hi_map_ckpt_position(const char *path, bool *exists)
{
	HiMapHeader h;

	return read_header(path, &h, exists) ? h.meta.ckpt_lsn : 0;
}

/*
 * The entry format of an index not loaded (HiMeta.version), from its map
 * file's header; 0 when there is none or it cannot be read.
 */
uint32
hi_map_meta_version(const char *path)
{
	HiMapHeader h;
	bool		exists;

	return read_header(path, &h, &exists) ? h.meta.version : 0;
}

Oid
hi_map_read_owner(const char *path)
{
	Size		len;
	bool		bad;
	char	   *buf = map_load(path, &len, &bad);
	Oid			owner = InvalidOid;

	if (buf && !bad)
		owner = ((HiMapHeader *) buf)->indexoid;
	if (buf)
		pfree(buf);
	return owner;
}

/*
 * Load metadata and page table from the map file into a fresh slot.
 * Returns false if the index has no map file (its files are missing).
 */
bool
hi_map_read(HiIndexShared *sh, const char *indexname)
{
	char	   *path = hi_file_path(sh->spcoid[HI_TIER_FLASH], sh->dboid,
									sh->spcoid[HI_TIER_FLASH], sh->relnumber, "map");
	Size		len;
	bool		bad;
	char	   *buf = map_load(path, &len, &bad);
	HiMapHeader *h = (HiMapHeader *) buf;
	uint32	   *pt;
	uint32		p;
	int			t;

	if (buf == NULL)
		return false;
	if (bad && len >= HI_MAP_HEADER_SIZE(2) && h->magic == HI_MAP_MAGIC &&
		!HI_MAP_VERSION_OK(h->version))
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("map file \"%s\" of index \"%s\" has format version %u, this build of hybrid_index reads versions %u to %u",
						path, indexname, h->version, HI_MAP_VERSION_MIN, HI_MAP_VERSION),
				 errhint("REINDEX the index.")));
	if (bad)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("map file \"%s\" of index \"%s\" is corrupted", path, indexname),
				 errhint("REINDEX the index.")));

	sh->meta = h->meta;
	/*
	 * The map file knows where the tiers are; reloptions changed by ALTER
	 * INDEX ... SET take effect only when the index is rebuilt.
	 */
	for (t = 0; t < HI_NUM_TIERS; t++)
		if (OidIsValid(h->spcoid[t]))
			sh->spcoid[t] = h->spcoid[t];
	hi_pt_init(sh, h->npte);
	pt = hi_pt_grow_array(&sh->pt, &sh->pt_cap, h->npte, sizeof(uint32));
	memcpy(pt, buf + sizeof(HiMapHeader), (Size) h->npte * sizeof(uint32));
	for (t = 0; t < HI_NUM_TIERS; t++)
	{
		(void) hi_pt_grow_array(&sh->slotmap[t], &sh->slot_cap[t], h->nslots[t], sizeof(uint8));
		sh->nslots[t] = h->nslots[t];
		sh->free_hint[t] = 0;
		sh->used_slots[t] = 0;
	}
	for (p = 0; p < h->npte; p++)
	{
		uint32		e = pt[p];

		if (!HI_PTE_MAPPED(e))
			continue;
		t = HI_PTE_TIER(e);
		if (HI_PTE_SLOT(e) >= sh->nslots[t])
			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("map file \"%s\" of index \"%s\" points past the end of tier %s",
							path, indexname, hi_tier_suffix(t))));
		hi_pt_slot_array(sh, t)[HI_PTE_SLOT(e)] = HI_SLOT_USED;
		sh->used_slots[t]++;
	}
	hi_am_blob_set(sh, buf + sizeof(HiMapHeader) + (Size) h->npte * sizeof(uint32),
				   h->am_blob_len);
	pfree(buf);
	pfree(path);
	return true;
}

/*
 * State an access method keeps besides pages and page table (a grid's root
 * directory, say): stored in the DSA area, written into the map file at
 * each checkpoint and restored when the index is loaded.
 */
void
hi_am_blob_set(HiIndexShared *sh, const char *data, uint32 len)
{
	dsa_area   *area = hi_dsa();

	if (DsaPointerIsValid(sh->am_blob))
		dsa_free(area, sh->am_blob);
	sh->am_blob = InvalidDsaPointer;
	sh->am_blob_len = 0;
	if (len == 0)
		return;
	sh->am_blob = dsa_allocate_extended(area, len, DSA_ALLOC_HUGE);
	memcpy(dsa_get_address(area, sh->am_blob), data, len);
	sh->am_blob_len = len;
}

/* A palloc'd copy of the AM state, NULL if none */
char *
hi_am_blob_get(HiIndexShared *sh, uint32 *len)
{
	char	   *copy;

	*len = 0;
	if (!DsaPointerIsValid(sh->am_blob))
		return NULL;
	copy = palloc(sh->am_blob_len);
	memcpy(copy, dsa_get_address(hi_dsa(), sh->am_blob), sh->am_blob_len);
	*len = sh->am_blob_len;
	return copy;
}
