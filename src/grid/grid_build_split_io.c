/*
 * grid_build_split_io.c
 *	  What passes between the two processes of a grid bulk load shared with
 *	  a parallel worker (grid_build_split.c), through the build's shared
 *	  file set: the worker's collector after the scan, and the items each
 *	  sends the other (parted at the cut, read back into a collector or its
 *	  regions), with the reads, writes and samples both sides use.
 */
#include "postgres.h"

#include <math.h>

#include "miscadmin.h"
#include "storage/buffile.h"

#include "grid/grid.h"
#include "grid/grid_int.h"
#include "grid/grid_build_split_int.h"

/* what a worker's collector sends the leader's after the scan */
typedef struct GridExport
{
	GridPeer	peer;
	Size		nnulls;			/* then GridEntry[nnulls] */
	Size		nodd;			/* then GridEntry[nodd] */
} GridExport;

void
grid_split_read_exact(BufFile *f, void *p, Size len)
{
	/* BufFileRead reads at most what it is asked; big reads come in pieces */
	while (len > 0)
	{
		Size		chunk = Min(len, (Size) 1 << 30);

		if (BufFileRead(f, p, chunk) != chunk)
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not read a file of a parallel grid build: %m")));
		p = (char *) p + chunk;
		len -= chunk;
	}
}

void
grid_split_write_all(BufFile *f, const void *p, Size len)
{
	while (len > 0)
	{
		Size		chunk = Min(len, (Size) 1 << 30);

		BufFileWrite(f, unconstify(void *, p), chunk);
		p = (const char *) p + chunk;
		len -= chunk;
	}
}

static void
write_list(BufFile *f, HiSpillList *l, Size recsize)
{
	char	   *rec;

	if (!hi_list_spilled(l))
	{
		grid_split_write_all(f, hi_list_array(l), recsize * hi_list_count(l));
		return;
	}
	rec = palloc(recsize);
	hi_list_rewind(l);
	while (hi_list_next(l, rec))
		BufFileWrite(f, rec, recsize);
	pfree(rec);
}

void
grid_split_close_shared(BufFile *f)
{
	BufFileExportFileSet(f);
	BufFileClose(f);
}

/*
 * A worker's collector after the scan (AmBuildOps.export): the NULL/EMPTY
 * entries and the boxes without a finite centre go to the leader's chains;
 * the items stay here, and the leader learns how many and where.
 */
void
grid_build_export(GridBuildSpool *sp, BufFile *file)
{
	GridExport x;
	Size		i;

	memset(&x, 0, sizeof(x));
	x.peer.valid = true;
	x.peer.spilled = hi_list_spilled(sp->items);
	x.peer.n = hi_list_count(sp->items);
	x.peer.lo[0] = x.peer.lo[1] = INFINITY;
	x.peer.hi[0] = x.peer.hi[1] = -INFINITY;
	if (!x.peer.spilled)
	{
		GridItem   *items = (GridItem *) hi_list_array(sp->items);

		for (i = 0; i < x.peer.n; i++)
		{
			x.peer.lo[0] = Min(x.peer.lo[0], items[i].c[0]);
			x.peer.hi[0] = Max(x.peer.hi[0], items[i].c[0]);
			x.peer.lo[1] = Min(x.peer.lo[1], items[i].c[1]);
			x.peer.hi[1] = Max(x.peer.hi[1], items[i].c[1]);
		}
	}
	x.nnulls = hi_list_count(sp->nulls);
	x.nodd = hi_list_count(sp->odd);
	grid_split_write_all(file, &x, sizeof(x));
	write_list(file, sp->nulls, sizeof(GridEntry));
	write_list(file, sp->odd, sizeof(GridEntry));
	hi_list_end(sp->nulls);
	hi_list_end(sp->odd);
	sp->nulls = sp->odd = NULL;
}

/* The leader's collector takes a worker's export; returns its entries */
Size
grid_build_import(GridBuildSpool *sp, BufFile *file)
{
	GridExport x;
	GridEntry	e;
	Size		i;

	grid_split_read_exact(file, &x, sizeof(x));
	if (sp->peer.valid)
		elog(ERROR, "a grid build has one helper, not more");
	sp->peer = x.peer;
	for (i = 0; i < x.nnulls; i++)
	{
		grid_split_read_exact(file, &e, sizeof(e));
		hi_list_put(sp->nulls, &e);
	}
	for (i = 0; i < x.nodd; i++)
	{
		grid_split_read_exact(file, &e, sizeof(e));
		hi_list_put(sp->odd, &e);
	}
	BufFileClose(file);
	return x.peer.n + x.nnulls + x.nodd;
}

/*
 * Items go from one process to the other as their entries alone, half
 * their size: the receiver finds their centres again
 */
void
grid_split_write_item(BufFile *f, const GridItem *it)
{
	BufFileWrite(f, unconstify(GridEntry *, &it->e), sizeof(GridEntry));
}

/*
 * n items (as entries) from f into a collector (hi_list_put may spill
 * them), or into the regions of ext
 */
static void
read_items(BufFile *f, GridBuildSpool *sp, GridExt *ext, Size n)
{
	/* in memory they go straight to the end of the array */
	GridItem   *room = ext ? NULL : (GridItem *) hi_list_extend(sp->items, n);
	GridEntry  *buf = palloc(sizeof(GridEntry) * 1024);
	GridItem	it;
	Size		done = 0;

	while (done < n)
	{
		Size		take = Min(n - done, 1024);
		Size		i;

		grid_split_read_exact(f, buf, sizeof(GridEntry) * take);
		for (i = 0; i < take; i++)
		{
			GridItem   *dst = room ? &room[done + i] : &it;

			dst->e = buf[i];
			if (!grid_ent_center(&dst->e, dst->c, dst->reach))
				elog(ERROR, "a parallel grid build received an entry without a centre");
			if (ext)
				grid_ext_put(ext, dst);
			else if (room == NULL)
				grid_build_put_item(sp, dst);
		}
		done += take;
		CHECK_FOR_INTERRUPTS();
	}
	pfree(buf);
}

/* the items of a file written by the other process, into a collector or ext */
void
grid_split_read_file_items(const HiLoadShared *shared, const char *name,
						   GridBuildSpool *sp, GridExt *ext)
{
	BufFile    *f = shared->open(shared->arg, name);
	int64		size;

	if (BufFileSeek(f, 0, 0, SEEK_END) != 0 ||
		(size = BufFileSize(f)) < 0 ||
		BufFileSeek(f, 0, 0, SEEK_SET) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not seek in a file of a parallel grid build: %m")));
	read_items(f, sp, ext, (Size) size / sizeof(GridEntry));
	BufFileClose(f);
}

/*
 * Part a collector's items at (dim, v): one side stays (the lower one if
 * keep_lower), or goes into the regions of ext if there is one; the other
 * goes to out, both in their order
 */
void
grid_split_part_items(GridBuildSpool *sp, int dim, double v, bool keep_lower,
					  BufFile *out, GridExt *ext)
{
	if (!hi_list_spilled(sp->items))
	{
		GridItem   *items = (GridItem *) hi_list_array(sp->items);
		Size		n = hi_list_count(sp->items);
		Size		kept = 0,
					i;

		for (i = 0; i < n; i++)
		{
			if ((items[i].c[dim] < v) != keep_lower)
				grid_split_write_item(out, &items[i]);
			else if (ext)
				grid_ext_put(ext, &items[i]);
			else
			{
				if (kept != i)
					items[kept] = items[i];
				kept++;
			}
		}
		hi_list_truncate(sp->items, kept);
	}
	else
	{
		HiSpillList *old = grid_build_take_items(sp);
		GridItem	it;

		hi_list_rewind(old);
		while (hi_list_next(old, &it))
		{
			if ((it.c[dim] < v) != keep_lower)
				grid_split_write_item(out, &it);
			else if (ext)
				grid_ext_put(ext, &it);
			else
				grid_build_put_item(sp, &it);
		}
		hi_list_end(old);
	}
}

/*
 * A uniform sample of a collector's items: its reservoir, or every
 * stride-th item of an in-memory list (at most max)
 */
GridItem *
grid_split_sample_of(GridBuildSpool *sp, Size max, Size *ns)
{
	GridItem   *items;
	GridItem   *out;
	Size		n = hi_list_count(sp->items);
	Size		stride,
				i;

	if (hi_list_spilled(sp->items))
	{
		*ns = sp->nsample;
		return sp->sample;
	}
	items = (GridItem *) hi_list_array(sp->items);
	stride = Max((n + max - 1) / Max(max, 1), 1);
	out = palloc_extended(sizeof(GridItem) * Max((n + stride - 1) / stride, 1), MCXT_ALLOC_HUGE);
	*ns = 0;
	for (i = 0; i < n; i += stride)
		out[(*ns)++] = items[i];
	return out;
}
