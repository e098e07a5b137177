/*
 * hi_runsort.c
 *	  A stable sort of fixed-size records by a uint64 key within a memory
 *	  budget: records collect in an array; an array that fills up is
 *	  radix-sorted (hi_radix.c) and written in order to a temporary file, a
 *	  run; at the end the runs and the last array are merged through a heap
 *	  of their heads.  Records that all fit are sorted in memory once and
 *	  read through their order, with no file.
 *
 * The R-tree's bulk load sorts its entries by centre with it.  Through
 * tuplesort (base/hi_spill.c), a 2M-point build with 64 MB of
 * maintenance_work_mem spent 0.9 s more than the same build in memory:
 * a record there costs about 100 bytes of the budget, so runs were short
 * and many, and each comparison went through float8's comparator.  Here a
 * record costs its size plus 24 bytes while its array is sorted, runs are
 * as long as the in-memory sort, and the merge compares integers.
 *
 * Ties keep their order of arrival: runs are cut in arrival order and the
 * merge breaks ties by run, so the result is the one a single in-memory
 * sort of all records gives, and a build makes the same tree whether it
 * spilled or not.  Runs sorted by other processes can join the merge too
 * (hi_runsort_share.c): ties between sources go by the order the sources
 * came in (their rank), the array's taking its place among them when no
 * more records are put.
 *
 * Memory: at most budget bytes for the array and its sort (recsize + 24
 * bytes per record), the order of the last array (4 bytes per record)
 * while it is read, and about 16 kB per run while runs are merged.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/buffile.h"
#include "utils/memutils.h"

#include "base/hi_base.h"
#include "base/runsort_int.h"

/* the radix sort's scratch per record: key, key copy, position, copy */
#define RUNSORT_SCRATCH	(2 * sizeof(uint64) + 2 * sizeof(uint32))

/* bytes a run is written and read in */
#define RUNSORT_IO		8192

HiRunSort *
hi_runsort_begin(Size recsize, Size budget, Size expect, HiRunKeyFn key, void *arg)
{
	HiRunSort  *s = palloc0(sizeof(HiRunSort));

	s->recsize = recsize;
	s->key = key;
	s->arg = arg;
	/* positions are kept as uint32 */
	s->maxn = Min(Max(budget / (recsize + RUNSORT_SCRATCH), 64), (Size) PG_UINT32_MAX);
	s->alloc = Min(Max(expect, 64), s->maxn);
	s->arr = palloc_extended(recsize * s->alloc, MCXT_ALLOC_HUGE);
	s->batch = Max(1, RUNSORT_IO / (int) recsize);
	return s;
}

/*
 * Sort the array by key, ties in arrival order; the order replaces it.
 * keep_keys: keep the sorted keys too (a merge reads them).
 */
static void
sort_array(HiRunSort *s, bool keep_keys)
{
	Size		n = Max(s->n, 1);
	uint64	   *key = palloc_extended(sizeof(uint64) * n, MCXT_ALLOC_HUGE);
	uint64	   *tmpkey = palloc_extended(sizeof(uint64) * n, MCXT_ALLOC_HUGE);
	uint32	   *val = palloc_extended(sizeof(uint32) * n, MCXT_ALLOC_HUGE);
	uint32	   *tmpval = palloc_extended(sizeof(uint32) * n, MCXT_ALLOC_HUGE);
	Size		i;

	if (s->order != NULL)
		pfree(s->order);
	for (i = 0; i < s->n; i++)
	{
		key[i] = s->key(s->arr + i * s->recsize, s->arg);
		val[i] = (uint32) i;
	}
	if (hi_radix_sort(key, val, s->n, tmpkey, tmpval))
	{
		s->order = tmpval;
		pfree(val);
		s->okey = tmpkey;
		pfree(key);
	}
	else
	{
		s->order = val;
		pfree(tmpval);
		s->okey = key;
		pfree(tmpkey);
	}
	if (!keep_keys)
	{
		pfree(s->okey);
		s->okey = NULL;
	}
	s->pos = 0;
}

/* Copy one record; the sizes of the bulk loads' entries without a call */
static inline void
copy_rec(void *dst, const void *src, Size recsize)
{
	if (recsize == 24)
		memcpy(dst, src, 24);
	else if (recsize == 20)
		memcpy(dst, src, 20);
	else
		memcpy(dst, src, recsize);
}

/* A new source of the merge, ranked after those before it */
HiRun *
runsort_new_run(HiRunSort *s)
{
	HiRun	   *r;

	if (s->nruns == s->maxruns)
	{
		s->maxruns = Max(8, s->maxruns * 2);
		s->runs = s->runs == NULL ? palloc(sizeof(HiRun) * s->maxruns) :
			repalloc(s->runs, sizeof(HiRun) * s->maxruns);
	}
	r = &s->runs[s->nruns++];
	memset(r, 0, sizeof(*r));
	r->rank = s->nextrank++;
	return r;
}

/*
 * The array becomes a run: sorted, written in order, emptied.  A shared
 * sort's run is a file of the shared file set, readable by other
 * processes once written.
 */
void
runsort_spill(HiRunSort *s)
{
	HiRun	   *r;
	char	   *out = palloc(RUNSORT_IO);
	int			k = 0;
	Size		i;

	sort_array(s, false);
	r = runsort_new_run(s);
	if (s->shared)
	{
		r->name = psprintf("%s_%d", s->prefix, s->nruns - 1);
		r->file = s->files.create(s->files.arg, r->name);
	}
	else
		r->file = BufFileCreateTemp(false);
	r->left = s->n;
	for (i = 0; i < s->n; i++)
	{
		copy_rec(out + k * s->recsize, runsort_array_at(s, i), s->recsize);
		if (++k == s->batch)
		{
			BufFileWrite(r->file, out, k * s->recsize);
			k = 0;
		}
	}
	if (k > 0)
		BufFileWrite(r->file, out, k * s->recsize);
	if (s->shared)
		BufFileExportFileSet(r->file);
	pfree(out);
	pfree(s->order);
	s->order = NULL;
	s->n = 0;
	CHECK_FOR_INTERRUPTS();
}

void
hi_runsort_put(HiRunSort *s, const void *rec)
{
	Assert(!s->sorted && !s->presorted);
	if (s->n == s->alloc)
	{
		if (s->alloc < s->maxn)
		{
			s->alloc = Min(s->alloc * 2, s->maxn);
			s->arr = repalloc_huge(s->arr, s->recsize * s->alloc);
		}
		else
			runsort_spill(s);
	}
	copy_rec(s->arr + s->recsize * s->n, rec, s->recsize);
	s->n++;
	s->total++;
}

Size
hi_runsort_count(const HiRunSort *s)
{
	return s->total;
}

/* Read the next batch of run r; false when the run is exhausted */
static bool
run_fill(HiRunSort *s, HiRun *r)
{
	int			want = (int) Min((Size) s->batch, r->left);

	if (want == 0)
		return false;
	if (BufFileRead(r->file, r->buf, want * s->recsize) != want * s->recsize)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not read a temporary file of a sort: %m")));
	r->left -= want;
	r->nbuf = want;
	r->pos = 0;
	return true;
}

/* The head record of a source of the merge */
static inline const char *
head(HiRunSort *s, int src)
{
	if (src == s->nruns)
		return runsort_array_at(s, s->pos);
	return s->runs[src].buf + s->runs[src].pos * s->recsize;
}

/*
 * The key of a source's head: the array's from its sorted keys (its
 * records are scattered over memory; the key would wait for each)
 */
static inline uint64
head_key(HiRunSort *s, int src)
{
	if (src == s->nruns)
		return s->okey[s->pos];
	return s->key(head(s, src), s->arg);
}

/* does source a's head come before b's (ties: the source of lower rank)? */
static inline bool
before(HiRunSort *s, int a, int b)
{
	return s->headkey[a] < s->headkey[b] ||
		(s->headkey[a] == s->headkey[b] && s->srank[a] < s->srank[b]);
}

static void
sift_down(HiRunSort *s, int i)
{
	int			n = s->nheap;

	for (;;)
	{
		int			l = 2 * i + 1;
		int			m = i;
		int			t;

		if (l < n && before(s, s->heap[l], s->heap[m]))
			m = l;
		if (l + 1 < n && before(s, s->heap[l + 1], s->heap[m]))
			m = l + 1;
		if (m == i)
			return;
		t = s->heap[i];
		s->heap[i] = s->heap[m];
		s->heap[m] = t;
		i = m;
	}
}

/* all records are in: sort them (and start the merge if there are runs) */
void
hi_runsort_sort(HiRunSort *s)
{
	int			i;

	Assert(!s->sorted);
	if (!s->presorted)
		sort_array(s, s->nruns > 0);
	else if (s->nruns == 0 && s->okey != NULL)
	{
		pfree(s->okey);
		s->okey = NULL;
	}
	if (!s->arr_ranked)
	{
		s->arr_rank = s->nextrank++;
		s->arr_ranked = true;
	}
	s->sorted = true;
	if (s->nruns == 0)
		return;

	s->heap = palloc(sizeof(int) * (s->nruns + 1));
	s->headkey = palloc(sizeof(uint64) * (s->nruns + 1));
	s->srank = palloc(sizeof(int) * (s->nruns + 1));
	s->nheap = 0;
	for (i = 0; i < s->nruns; i++)
	{
		HiRun	   *r = &s->runs[i];

		s->srank[i] = r->rank;
		if (BufFileSeek(r->file, 0, (off_t) (r->start * s->recsize), SEEK_SET) != 0)
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not rewind a temporary file of a sort: %m")));
		r->buf = palloc(s->batch * s->recsize);
		if (run_fill(s, r))
		{
			s->headkey[i] = head_key(s, i);
			s->heap[s->nheap++] = i;
		}
	}
	s->srank[s->nruns] = s->arr_rank;
	if (s->pos < s->n)
	{
		s->headkey[s->nruns] = head_key(s, s->nruns);
		s->heap[s->nheap++] = s->nruns;
	}
	for (i = s->nheap / 2 - 1; i >= 0; i--)
		sift_down(s, i);
}

/* the next record in key order; false after the last */
bool
hi_runsort_get(HiRunSort *s, void *rec)
{
	int			src;
	bool		more;

	Assert(s->sorted);
	if (s->nruns == 0)
	{
		if (s->pos >= s->n)
			return false;
		copy_rec(rec, runsort_array_at(s, s->pos), s->recsize);
		s->pos++;
		return true;
	}
	if (s->nheap == 0)
		return false;
	src = s->heap[0];
	copy_rec(rec, head(s, src), s->recsize);
	if (src == s->nruns)
		more = ++s->pos < s->n;
	else
	{
		HiRun	   *r = &s->runs[src];

		more = ++r->pos < r->nbuf || run_fill(s, r);
	}
	if (more)
		s->headkey[src] = head_key(s, src);
	else
		s->heap[0] = s->heap[--s->nheap];
	sift_down(s, 0);
	return true;
}

/*
 * No more records will be put: sort the array now, while waiting for runs
 * sorted elsewhere that are still being made.  Its records rank before
 * those runs'.
 */
void
hi_runsort_presort(HiRunSort *s)
{
	Assert(!s->sorted && !s->presorted);
	sort_array(s, true);
	s->presorted = true;
	s->arr_rank = s->nextrank++;
	s->arr_ranked = true;
}

void
hi_runsort_end(HiRunSort *s)
{
	int			i;

	for (i = 0; i < s->nruns; i++)
	{
		BufFileClose(s->runs[i].file);
		if (s->runs[i].buf != NULL)
			pfree(s->runs[i].buf);
		if (s->runs[i].name != NULL)
			pfree(s->runs[i].name);
	}
	if (s->runs != NULL)
		pfree(s->runs);
	if (s->heap != NULL)
		pfree(s->heap);
	if (s->headkey != NULL)
		pfree(s->headkey);
	if (s->srank != NULL)
		pfree(s->srank);
	if (s->order != NULL)
		pfree(s->order);
	if (s->okey != NULL)
		pfree(s->okey);
	pfree(s->arr);
	pfree(s);
}
