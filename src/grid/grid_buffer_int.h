/*
 * grid_buffer_int.h
 *	  Declarations shared by the two halves of the grid's own page buffers:
 *	  grid_buffer.c (pins, reads, the gbuf_ interface) and grid_buffer_lru.c
 *	  (the frames' hash, the hot and cold LRU lists and their write-out,
 *	  thesis Algorithms 4-5).  Only indexes with a buffer_size have them.
 */
#ifndef GRID_BUFFER_INT_H
#define GRID_BUFFER_INT_H

#include "port/pg_bitutils.h"
#include "utils/dsa.h"

#include "grid/grid.h"

#define GB_VALID	0x01
#define GB_DIRTY	0x02
#define GB_READING	0x04

#define GB_FREE		0
#define GB_HOT		1
#define GB_COLD		2

typedef struct GridBufDesc
{
	uint32		pageno;
	uint16		flags;
	uint8		list;
	uint8		pad;
	int32		pins;
	int32		prev;
	int32		next;
} GridBufDesc;

static inline GridBuf *
buf_of(Grid *g, int which)
{
	return &g->gs->buf[which];
}

static inline GridBufDesc *
descs_of(GridBuf *b)
{
	return (GridBufDesc *) dsa_get_address(hi_dsa(), b->descs);
}

static inline int32 *
hash_of(GridBuf *b)
{
	return (int32 *) dsa_get_address(hi_dsa(), b->hash);
}

/*
 * Frame pages live in chunks allocated when a frame of theirs is first
 * used, so that a large buffer_size costs memory only as the index's pages
 * fill it (a small index never takes all of it).  Frames are taken in
 * order (the free list starts at frame 0), and the chunks grow: 1, 2, 4,
 * ... 64 frames, then 64 each.  A partition of a few pages so holds a few
 * pages' worth per buffer, not 64 (a megabyte per index at 8 kB pages, a
 * gigabyte of dynamic shared memory for 1,000 partitions queried once).
 */
#define GB_CHUNK_FRAMES 64
#define GB_CHUNK_GEOM	6		/* chunks 0..5 hold 1..32 frames */
#define GB_GEOM_FRAMES	((1 << GB_CHUNK_GEOM) - 1)	/* frames in chunks 0..5 */

static inline int
chunk_no(int f)
{
	if (f < GB_GEOM_FRAMES)
		return pg_leftmost_one_pos32((uint32) f + 1);
	return GB_CHUNK_GEOM + (f - GB_GEOM_FRAMES) / GB_CHUNK_FRAMES;
}

static inline int
chunk_first(int k)
{
	if (k < GB_CHUNK_GEOM)
		return (1 << k) - 1;
	return GB_GEOM_FRAMES + (k - GB_CHUNK_GEOM) * GB_CHUNK_FRAMES;
}

static inline int
chunk_frames(int k)
{
	return k < GB_CHUNK_GEOM ? 1 << k : GB_CHUNK_FRAMES;
}

/* how many chunks nframes frames need */
static inline int
chunk_count(int nframes)
{
	return nframes > 0 ? chunk_no(nframes - 1) + 1 : 0;
}

static inline dsa_pointer *
chunks_of(GridBuf *b)
{
	return (dsa_pointer *) dsa_get_address(hi_dsa(), b->chunks);
}

static inline char *
frame_data(GridShared *gs, GridBuf *b, int f)
{
	int			k = chunk_no(f);
	dsa_pointer c = chunks_of(b)[k];
	char	   *base = (char *) TYPEALIGN(HI_IO_ALIGN, dsa_get_address(hi_dsa(), c));

	return base + (Size) (f - chunk_first(k)) * gs->page_size;
}


extern int gbl_hash_lookup(GridBuf *b, GridBufDesc *d, int32 *h, uint32 pageno);
extern void gbl_hash_insert(GridBuf *b, int32 *h, uint32 pageno, int f);
extern void gbl_hash_delete(GridBuf *b, GridBufDesc *d, int32 *h, uint32 pageno);
extern void gbl_list_unlink(GridBuf *b, GridBufDesc *d, int f);
extern void gbl_list_push(GridBuf *b, GridBufDesc *d, int f, int list);
extern void gbl_free_push(GridBuf *b, GridBufDesc *d, int f);
extern void gbl_forget_frame(GridBuf *b, GridBufDesc *d, int32 *h, int f);
extern void gbl_write_frames(Grid *g, GridBuf *b, GridBufDesc *d, const int *frames, int n);
extern int gbl_get_frame(Grid *g, GridBuf *b, GridBufDesc *d, int32 *h);
extern void gbl_touch(Grid *g, GridBuf *b, GridBufDesc *d, int32 *h, int f);

#endif							/* GRID_BUFFER_INT_H */
