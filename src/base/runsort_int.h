/*
 * runsort_int.h
 *	  The insides of a HiRunSort, shared by hi_runsort.c (sort and merge)
 *	  and hi_runsort_share.c (runs other processes read); nothing else
 *	  includes it.
 */
#ifndef RUNSORT_INT_H
#define RUNSORT_INT_H

#include "storage/buffile.h"

#include "base/hi_base.h"

/* a shared run's name in the file set */
#define RUNSORT_NAME_LEN 64

/* records of the array ahead of the reader that a gather prefetches */
#define RUNSORT_PREFETCH 16

typedef struct HiRun
{
	BufFile    *file;
	char	   *name;			/* in the shared file set, or NULL: private */
	Size		start;			/* records of file before its unread ones */
	Size		left;			/* records not yet read into buf */
	int			rank;			/* ties: the source of lower rank first */
	char	   *buf;			/* a batch of the run's records */
	int			nbuf;
	int			pos;			/* the head: buf + pos * recsize */
} HiRun;

struct HiRunSort
{
	Size		recsize;
	HiRunKeyFn	key;
	void	   *arg;
	Size		maxn;			/* records the array may hold */
	Size		alloc;			/* records allocated in arr */
	char	   *arr;
	Size		n;				/* records in arr */
	Size		total;			/* records put or added, not handed off */
	uint32	   *order;			/* arr's positions in key order, once sorted */
	uint64	   *okey;			/* their keys, while the array is merged */
	Size		pos;			/* the next of order to read */
	int			batch;			/* records per RUNSORT_IO */
	HiRun	   *runs;
	int			nruns;
	int			maxruns;
	int			nextrank;		/* of the next source to come */
	int			arr_rank;		/* the array's, once it has one */
	bool		arr_ranked;
	/* merge: sources 0..nruns-1 are the runs, nruns the array */
	int		   *heap;
	uint64	   *headkey;		/* per source */
	int		   *srank;			/* per source */
	int			nheap;
	bool		sorted;
	bool		presorted;		/* the array is sorted; runs may still come */
	/* runs go to the shared file set (hi_runsort_share) */
	bool		shared;
	HiLoadShared files;
	char		prefix[RUNSORT_NAME_LEN - 8];
};

/* The array's record at position i of its order (gathered, prefetching) */
static inline const char *
runsort_array_at(HiRunSort *s, Size i)
{
	if (i + RUNSORT_PREFETCH < s->n)
		__builtin_prefetch(s->arr + s->recsize * s->order[i + RUNSORT_PREFETCH]);
	return s->arr + s->recsize * s->order[i];
}

extern HiRun *runsort_new_run(HiRunSort *s);
extern void runsort_spill(HiRunSort *s);

#endif							/* RUNSORT_INT_H */
