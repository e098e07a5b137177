/*
 * map_file.h
 *	  The map file of an index: structure metadata and page table as of the
 *	  last checkpoint, written atomically (temp file + rename).
 */
#ifndef MAP_FILE_H
#define MAP_FILE_H

#include "hybrid_index.h"

typedef struct HiMapHeader
{
	uint32		magic;
	uint32		version;
	uint32		crc;			/* CRC-32C of everything after this field */
	uint32		npte;			/* page table entries that follow */
	Oid			indexoid;		/* owner when written */
	Oid			dboid;
	Oid			relnumber;
	Oid			spcoid[HI_NUM_TIERS];
	uint32		nslots[HI_NUM_TIERS];
	uint32		am_blob_len;	/* AM state bytes after the page table */
	HiMeta		meta;
} HiMapHeader;

#define HI_MAP_MAGIC	0x48594D50	/* "HYMP" */
#define HI_MAP_VERSION	2	/* 2: grid directories' header padded to 24 bytes */

extern Oid	hi_map_read_owner(const char *path);
extern void hi_map_write(HiIndexShared *sh);
extern bool hi_map_read(HiIndexShared *sh, const char *indexname);

#endif							/* MAP_FILE_H */
