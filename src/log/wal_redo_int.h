/*
 * wal_redo_int.h
 *	  What WAL redo's files share (wal_redo.c, wal_redo_ckpt.c): this
 *	  server's copy of an index as replay leaves it.
 */
#ifndef WAL_REDO_INT_H
#define WAL_REDO_INT_H

#include "access/xlogreader.h"
#include "lib/ilist.h"

#include "log/redo_log.h"
#include "log/wal_records.h"

typedef struct CopyKey
{
	Oid			dboid;
	Oid			spcoid;
	Oid			relnumber;
} CopyKey;

/* This server's copy of an index's log, as replay has left it */
typedef struct CopyState
{
	CopyKey		key;
	bool		known;			/* base/end read from the files */
	bool		exists;			/* the index has a map file here */
	bool		stale;			/* marked already */
	bool		healable;		/* its log begins after its map's checkpoint
								 * (hi_log_copy_end): a gap may be closed */
	bool		gap;			/* stale for lack of records that a later
								 * MAP record can make unnecessary */
	uint64		gap_upto;		/* ... if it reaches here */
	bool		unsynced;		/* appended since the last fsync */
	uint64		base;			/* the map file's checkpoint position */
	uint64		end;			/* the log's valid records end here */
	uint64		confirmed;		/* WAL replayed so far vouches for the log
								 * up to here (0: nothing yet) */
	int			fd;				/* the log, -1 = not open */
	int			pfd;			/* the pending file, -1 = not open */
	bool		pend_known;		/* pend_end read from the file */
	bool		pend_unsynced;	/* parked since the last fsync */
	off_t		pend_end;		/* its valid entries end here */
	bool		in_lru;			/* fd or pfd open: in open_copies */
	dlist_node	lru;
} CopyState;

/*
 * The pending file (hyb_<flash>_<relfilenode>.pending): pages PAGES records
 * carried, parked in WAL order until the MAP record that makes them part
 * of the index.  Parked entries are made durable whenever the primary
 * checkpoints (its SYNCED records precede every restartpoint), so that a
 * restart of this server finds every page written before the point where
 * its replay resumes.  Replay after a restart parks again what it replays:
 * the file then holds some writes twice, in order, and applying it in
 * order leaves each slot with its last write.
 */
typedef struct PendingEntry
{
	uint32		magic;
	uint32		pte;			/* tier and slot */
	uint32		page_size;
	Oid			optspc;			/* the fast tier's tablespace */
	uint32		crc;			/* of the fields above and the page */
	uint32		pad;
} PendingEntry;

#define HI_PENDING_MAGIC	0x48495047	/* "HIPG" */

/* wal_redo.c */
extern bool hi_copies_unsynced;	/* some copy has writes not yet fsynced */
extern hi_wal_exclusive_fn hi_redo_exclusive_hook;
extern CopyState *hi_copy_state(const xl_hi_ident *id);
extern char *hi_copy_path(const CopyState *c, Oid dirspc, const char *suffix);
extern void hi_copy_make_room(CopyState *c);
extern int	hi_copy_opened(int fd);
extern int	hi_copy_open_file(const CopyState *c, Oid dirspc, const char *suffix);
extern int	hi_copy_log_fd(CopyState *c);
extern void hi_copy_mark_stale(XLogReaderState *record, const xl_hi_ident *id,
							   CopyState *c, const char *what);
extern void hi_copy_close_gap(CopyState *c);
extern void hi_copy_sync_file(const CopyState *c, int fd, bool *unsynced,
							  const char *what);

/* wal_redo_ckpt.c: PAGES and MAP records */
extern void hi_redo_pages(XLogReaderState *record, const xl_hi_pages *xl,
						  const char *data);
extern void hi_redo_map(XLogReaderState *record, const xl_hi_map *xl,
						const char *image);
extern bool hi_copy_apply_pending(CopyState *c);
extern void hi_copy_sync_pending(CopyState *c);

#endif							/* WAL_REDO_INT_H */
