/*
 * wal_records.h
 *	  The records of hybrid_index's WAL resource manager (log/): their
 *	  types and layouts, shared by insertion and description (hi_wal.c)
 *	  and redo (wal_redo.c).  Every record's data starts with the ident of
 *	  the index it is about, but TWOPHASE's, which is about a transaction.
 */
#ifndef HI_WAL_RECORDS_H
#define HI_WAL_RECORDS_H

#include "access/xlogreader.h"

#include "base/hi_base.h"
#include "log/redo_log.h"

#define XLOG_HI_DURABLE		0x00
#define XLOG_HI_LOG			0x10
#define XLOG_HI_IMAGE		0x20
#define XLOG_HI_RESTART		0x30
#define XLOG_HI_DROP		0x40
#define XLOG_HI_SYNCED		0x50
#define XLOG_HI_PAGES		0x60
#define XLOG_HI_MAP			0x70
#define XLOG_HI_TWOPHASE	0x80	/* no index ident: see xl_hi_twophase */

/* which index a record is about (its flash tier names its files) */
typedef struct xl_hi_ident
{
	Oid			dboid;
	Oid			spcoid;			/* the flash tier's tablespace */
	Oid			relnumber;
	Oid			indexoid;
} xl_hi_ident;

typedef struct xl_hi_durable
{
	xl_hi_ident id;
	uint64		upto;			/* the redo log holds every change below */
} xl_hi_durable;

typedef struct xl_hi_log
{
	xl_hi_ident id;
	HiLogRecord rec;			/* rec.lsn: its position in the log */
} xl_hi_log;

/* the files of an image */
#define HI_IMAGE_FLASH		0
#define HI_IMAGE_OPTANE		1
#define HI_IMAGE_MAP		2

#define HI_IMAGE_FIRST		0x01	/* truncate the file first */
#define HI_IMAGE_LAST		0x02	/* the file is complete: fsync it */
#define HI_IMAGE_CUT		0x04	/* cut the file to offset bytes (len 0) */

typedef struct xl_hi_image
{
	xl_hi_ident id;
	Oid			optspc;			/* the fast tier's tablespace */
	uint8		file;			/* HI_IMAGE_* */
	uint8		flags;
	uint16		pad;
	uint32		len;			/* bytes that follow */
	uint64		offset;
} xl_hi_image;

#define HI_IMAGE_CHUNK		(64 * 1024)

/* hi_wal.c, for the log layer's other files */
extern void hi_wal_ident_of(HiIndexShared *sh, xl_hi_ident *id);
extern bool hi_wal_logged(HiIndexShared *sh);

typedef struct xl_hi_restart
{
	xl_hi_ident id;
	uint64		position;		/* the log continues here */
} xl_hi_restart;

typedef struct xl_hi_drop
{
	xl_hi_ident id;
} xl_hi_drop;

typedef struct xl_hi_synced
{
	xl_hi_ident id;
	uint64		position;		/* the log is durable up to here */
} xl_hi_synced;

/*
 * Pages written to tier files since the index's last checkpoint (slots no
 * map file references yet): npages page table entries (tier, slot), then
 * the pages.
 */
typedef struct xl_hi_pages
{
	xl_hi_ident id;
	Oid			optspc;			/* the fast tier's tablespace */
	uint32		page_size;
	uint32		npages;
	uint32		pad;
} xl_hi_pages;

#define HI_PAGES_PER_RECORD	16

/* An index checkpoint: its new map file (len bytes follow) */
typedef struct xl_hi_map
{
	xl_hi_ident id;
	uint64		position;		/* the map reflects the log below here */
	uint32		len;
	uint32		pad;
} xl_hi_map;

/*
 * A prepared transaction's file sets (storage/tier_pending.c): its file
 * hyb2pc/<xid> in the database's directory was written (len bytes of it
 * follow) or, with len 0, finished and removed.
 */
typedef struct xl_hi_twophase
{
	Oid			dboid;
	Oid			dbspc;			/* the database's tablespace */
	TransactionId xid;
	uint32		len;
} xl_hi_twophase;

/* redo (wal_redo.c), called through the resource manager (hi_wal.c) */
extern void hi_wal_redo(XLogReaderState *record);
extern void hi_wal_cleanup(void);

#endif							/* HI_WAL_RECORDS_H */
