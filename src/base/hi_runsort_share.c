/*
 * hi_runsort_share.c
 *	  A sort's runs shared with the other processes of a parallel build.
 *
 * A shared sort writes its runs as files of the build's shared file set
 * (hi_runsort_share), so another process can read them where they are:
 * a worker spills its array as one more run and lists its runs
 * (hi_runsort_export); the leader adds them to its own sort
 * (hi_runsort_import); and with a helper the leader hands it the first n
 * records of the merged order as a list of pieces of those runs
 * (hi_runsort_split), found by a search on the key, so neither process
 * copies the other's records before both merge their halves.  Before
 * this, a worker merged its runs into one file and the leader merged its
 * own into another for the helper: at 20M points with 64 MB of
 * maintenance_work_mem, two passes over the data during which one of the
 * two processes waited (1.9 s of a 6.3 s build).
 *
 * A list is a uint32 count and that many RunRef, in rank order: a source
 * that comes later breaks ties later, in every process that merges it.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/buffile.h"

#include "base/hi_base.h"
#include "base/runsort_int.h"

/* records [start, start + n) of the shared file name */
typedef struct RunRef
{
	char		name[RUNSORT_NAME_LEN];
	uint64		start;
	uint64		n;
} RunRef;

/* s's runs go to files of files' set, named from prefix */
void
hi_runsort_share(HiRunSort *s, const HiLoadShared *files, const char *prefix)
{
	Assert(s->nruns == 0);
	s->shared = true;
	s->files = *files;
	strlcpy(s->prefix, prefix, sizeof(s->prefix));
}

static void
write_ref(BufFile *list, const char *name, Size start, Size n)
{
	RunRef		ref;

	memset(&ref, 0, sizeof(ref));
	strlcpy(ref.name, name, sizeof(ref.name));
	ref.start = start;
	ref.n = n;
	BufFileWrite(list, &ref, sizeof(ref));
}

/* Are the runs in rank order?  (They are created and added in it.) */
static void
check_rank_order(HiRunSort *s)
{
	int			i;

	for (i = 1; i < s->nruns; i++)
		if (s->runs[i].rank < s->runs[i - 1].rank)
			elog(ERROR, "the runs of a shared sort are out of order");
}

/*
 * A worker is done putting: its array becomes a run too, and the list of
 * its runs goes to list.  Returns the records listed.
 */
Size
hi_runsort_export(HiRunSort *s, BufFile *list)
{
	uint32		count;
	int			i;

	if (!s->shared)
		elog(ERROR, "a sort exports its runs only from a shared file set");
	Assert(!s->sorted && !s->presorted);
	if (s->n > 0)
		runsort_spill(s);
	check_rank_order(s);
	count = (uint32) s->nruns;
	BufFileWrite(list, &count, sizeof(count));
	for (i = 0; i < s->nruns; i++)
		write_ref(list, s->runs[i].name, s->runs[i].start, s->runs[i].left);
	return s->total;
}

/*
 * The runs listed in list (files of files' set) join s's merge, ranked
 * after its sources so far.  Returns their records.
 */
Size
hi_runsort_import(HiRunSort *s, const HiLoadShared *files, BufFile *list)
{
	uint32		count;
	uint32		i;
	Size		added = 0;

	Assert(!s->sorted);
	if (BufFileRead(list, &count, sizeof(count)) != sizeof(count))
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not read the runs of a parallel sort: %m")));
	for (i = 0; i < count; i++)
	{
		RunRef		ref;
		HiRun	   *r;

		if (BufFileRead(list, &ref, sizeof(ref)) != sizeof(ref))
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not read the runs of a parallel sort: %m")));
		ref.name[sizeof(ref.name) - 1] = '\0';
		r = runsort_new_run(s);
		r->name = pstrdup(ref.name);
		r->file = files->open(files->arg, r->name);
		r->start = (Size) ref.start;
		r->left = (Size) ref.n;
		added += r->left;
	}
	s->total += added;
	return added;
}

/* unread records of source src */
static Size
source_len(HiRunSort *s, int src)
{
	return src == s->nruns ? s->n - s->pos : s->runs[src].left;
}

/* The key of unread record j of source src (rec: a record's room) */
static uint64
source_key(HiRunSort *s, int src, Size j, char *rec)
{
	HiRun	   *r;

	if (src == s->nruns)
		return s->okey[s->pos + j];
	r = &s->runs[src];
	if (BufFileSeek(r->file, 0, (off_t) ((r->start + j) * s->recsize), SEEK_SET) != 0 ||
		BufFileRead(r->file, rec, s->recsize) != s->recsize)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not read a run of a parallel sort: %m")));
	return s->key(rec, s->arg);
}

/* The first j in [lo, hi) of source src whose key is at least k, or hi */
static Size
lower_bound(HiRunSort *s, int src, uint64 k, Size lo, Size hi, char *rec)
{
	while (lo < hi)
	{
		Size		mid = lo + (hi - lo) / 2;

		if (source_key(s, src, mid, rec) < k)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The array's next n records, in order, to a new file of the shared set */
static void
write_array_part(HiRunSort *s, Size n, const char *name)
{
	BufFile    *file = s->files.create(s->files.arg, name);
	char	   *out = palloc(s->batch * s->recsize);
	int			k = 0;
	Size		j;

	for (j = 0; j < n; j++)
	{
		memcpy(out + k * s->recsize, runsort_array_at(s, s->pos + j), s->recsize);
		if (++k == s->batch)
		{
			BufFileWrite(file, out, k * s->recsize);
			k = 0;
		}
	}
	if (k > 0)
		BufFileWrite(file, out, k * s->recsize);
	BufFileClose(file);
	pfree(out);
}

/*
 * The first n records of s's order are handed off: list gets them as
 * pieces of s's runs, in rank order, and the array's part of them as a
 * new file of the shared set, name; s keeps the rest.  All records must
 * be in and s not sorted yet.
 *
 * The pieces are found by bisecting the key: with klo the largest key
 * below which there are at most n records (lo[i] in source i), the
 * records of key klo (hi[i] - lo[i] in source i) fill up to n in rank
 * order, as the merge breaks ties.  Each step searches a source only
 * between its bounds so far, so a source costs about log2 of its length
 * reads plus one per step while its bounds still differ.
 */
void
hi_runsort_split(HiRunSort *s, Size n, BufFile *list, const char *name)
{
	int			nsrc = s->nruns + 1;
	Size	   *lo = palloc(sizeof(Size) * nsrc);
	Size	   *hi = palloc(sizeof(Size) * nsrc);
	Size	   *mid = palloc(sizeof(Size) * nsrc);
	int		   *order = palloc(sizeof(int) * nsrc);
	char	   *rec = palloc(s->recsize);
	uint64		klo = 0;
	uint64		khi = PG_UINT64_MAX;
	Size		below = 0;
	Size		need;
	uint32		count = 0;
	int			i;

	if (!s->shared)
		elog(ERROR, "a sort hands off records only from a shared file set");
	if (n > s->total)
		elog(ERROR, "a sort cannot hand off %zu of its %zu records", n, s->total);
	Assert(!s->sorted);
	if (!s->presorted)
		hi_runsort_presort(s);
	check_rank_order(s);
	for (i = 0; i < nsrc; i++)
	{
		lo[i] = 0;
		hi[i] = lower_bound(s, i, PG_UINT64_MAX, 0, source_len(s, i), rec);
		below += hi[i];
	}
	if (below <= n)
	{
		/* the cut falls among records of the largest key */
		klo = PG_UINT64_MAX;
		for (i = 0; i < nsrc; i++)
		{
			lo[i] = hi[i];
			hi[i] = source_len(s, i);
		}
	}
	else
	{
		while (khi - klo > 1)
		{
			uint64		k = klo + (khi - klo) / 2;
			Size		cnt = 0;

			for (i = 0; i < nsrc; i++)
			{
				mid[i] = lo[i] == hi[i] ? lo[i] : lower_bound(s, i, k, lo[i], hi[i], rec);
				cnt += mid[i];
			}
			if (cnt <= n)
			{
				klo = k;
				memcpy(lo, mid, sizeof(Size) * nsrc);
			}
			else
			{
				khi = k;
				memcpy(hi, mid, sizeof(Size) * nsrc);
			}
			CHECK_FOR_INTERRUPTS();
		}
	}

	/* the sources in rank order: the array before the first run above it */
	{
		int			k = 0;
		int			j;

		for (j = 0; j < s->nruns && s->runs[j].rank < s->arr_rank; j++)
			order[k++] = j;
		order[k++] = s->nruns;
		for (; j < s->nruns; j++)
			order[k++] = j;
	}

	/* lo[i]: the cut in source i; records of key klo fill up in rank order */
	below = 0;
	for (i = 0; i < nsrc; i++)
		below += lo[i];
	need = n - below;
	for (i = 0; i < nsrc && need > 0; i++)
	{
		int			src = order[i];
		Size		take = Min(need, hi[src] - lo[src]);

		lo[src] += take;
		need -= take;
	}
	if (need != 0)
		elog(ERROR, "a sort could not find where its first %zu records end", n);

	for (i = 0; i < nsrc; i++)
		if (lo[i] > 0)
			count++;
	BufFileWrite(list, &count, sizeof(count));
	for (i = 0; i < nsrc; i++)
	{
		int			src = order[i];

		if (lo[src] == 0)
			continue;
		if (src == s->nruns)
		{
			write_array_part(s, lo[src], name);
			write_ref(list, name, 0, lo[src]);
			s->pos += lo[src];
		}
		else
		{
			HiRun	   *r = &s->runs[src];

			write_ref(list, r->name, r->start, lo[src]);
			r->start += lo[src];
			r->left -= lo[src];
		}
	}
	s->total -= n;
	pfree(order);
	pfree(mid);
	pfree(rec);
	pfree(lo);
	pfree(hi);
}
