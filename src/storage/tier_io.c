/*
 * tier_io.c
 *	  Batched page I/O: "submit n reads (or n writes), wait for all", the
 *	  psync I/O of the PIO B-tree paper (section 2.3), over io_uring.
 *
 * A batch never mixes reads and writes.  Batches larger than
 * hybrid_index.io_depth are cut into rounds of that size; within a round,
 * requests that follow each other in a file go as one vectored request.
 * Where io_uring is unavailable (seccomp, old kernels) or
 * hybrid_index.io_method = sync, the same interface runs plain
 * pread/pwrite loops.  Per-tier device profiles, when
 * hybrid_index.emulate_devices is on, stretch each round to what the
 * emulated device would take: ceil(n / parallelism) * latency (n counts
 * the pages asked for, also where neighbours went as one request).
 */
#include "postgres.h"

#include <liburing.h>
#include <sys/uio.h>
#include <unistd.h>

#include "access/xact.h"
#include "miscadmin.h"
#include "portability/instr_time.h"
#include "storage/fd.h"
#include "utils/wait_event.h"

#include "base/hi_base.h"
#include "storage/storage.h"

static struct io_uring ring;
static int	ring_depth = 0;		/* 0: no ring yet */
static bool uring_refused = false;

/*
 * A ring is a file descriptor of this process: it is counted among the
 * external descriptors PostgreSQL's fd.c allows beside its own
 * (max_files_per_process), so that rings never starve it (18's own
 * io_method = io_uring rings are made by the postmaster, apart from ours).
 * Returns 0, or the errno why there is no ring.
 */
static int
ring_open(struct io_uring *r, int depth)
{
	int			rc;

	if (!AcquireExternalFD())
		return EMFILE;
	rc = io_uring_queue_init(depth, r, 0);
	if (rc < 0)
	{
		ReleaseExternalFD();
		return -rc;
	}
	return 0;
}

static void
ring_close(struct io_uring *r)
{
	io_uring_queue_exit(r);
	ReleaseExternalFD();
}

static bool
ensure_ring(int depth)
{
	int			err;

	if (uring_refused)
		return false;
	if (ring_depth >= depth)
		return true;
	if (ring_depth > 0)
		ring_close(&ring);
	ring_depth = 0;
	err = ring_open(&ring, depth);
	if (err != 0)
	{
		uring_refused = true;
		/* once per process; the server's log only (a parallel worker's would reach the client) */
		ereport(LOG_SERVER_ONLY,
				(errmsg("hybrid_index: io_uring unavailable (%s), falling back to synchronous I/O",
						err == EMFILE ? "no file descriptor left within max_files_per_process" : strerror(err))));
		return false;
	}
	ring_depth = depth;
	return true;
}

static void
io_failed(const HiIoReq *r, bool write, int err, ssize_t got)
{
	if (err != 0)
	{
		errno = err;
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not %s %u bytes at offset %lld of index file \"%s\": %m",
						write ? "write" : "read", r->len, (long long) r->offset, r->path)));
	}
	ereport(ERROR,
			(errcode(write ? ERRCODE_DISK_FULL : ERRCODE_DATA_CORRUPTED),
			 errmsg("could not %s %u bytes at offset %lld of index file \"%s\": only %zd done",
					write ? "write" : "read", r->len, (long long) r->offset, r->path, got),
			 write ? errhint("Check free space on the tier's file system.") : 0));
}

/*
 * One request with pread/pwrite.  Returns 0, or the errno of a failure
 * (-1 for a short transfer) with *done set to what was transferred.
 */
static int
sync_one(HiIoReq *r, bool write, ssize_t *done)
{
	*done = 0;
	while (*done < r->len)
	{
		ssize_t		rc = write ?
			pwrite(r->fd, r->buf + *done, r->len - *done, r->offset + *done) :
			pread(r->fd, r->buf + *done, r->len - *done, r->offset + *done);

		if (rc < 0 && errno == EINTR)
			continue;
		if (rc < 0)
			return errno;
		if (rc == 0)
			return -1;
		*done += rc;
	}
	return 0;
}

/*
 * Requests that follow each other in one file form a run, sent as one
 * vectored request.  A bulk load or a checkpoint writes runs of fresh
 * slots, and 64 writes of 8 kB that extend an O_DIRECT file serialise on
 * the file's lock in the kernel's io_uring workers: 1.4 s of a 5M-point
 * build's 3.4 s went to that.
 */
typedef struct IoRun
{
	HiIoReq    *req;			/* its first request */
	struct iovec *iov;			/* one per request */
	int			count;
	Size		len;			/* bytes of all its requests */
} IoRun;

/* the largest run, in bytes */
#define HI_IO_RUN_MAX		(1024 * 1024)

static int
make_runs(HiIoReq *reqs, int n, IoRun *runs, struct iovec *iov)
{
	int			m = 0;
	int			i;

	for (i = 0; i < n; i++)
	{
		IoRun	   *prev = m > 0 ? &runs[m - 1] : NULL;
		HiIoReq    *last = prev ? prev->req + prev->count - 1 : NULL;

		iov[i].iov_base = reqs[i].buf;
		iov[i].iov_len = reqs[i].len;
		if (prev && last->fd == reqs[i].fd && last->tier == reqs[i].tier &&
			last->offset + last->len == reqs[i].offset &&
			prev->len + reqs[i].len <= HI_IO_RUN_MAX)
		{
			prev->count++;
			prev->len += reqs[i].len;
			continue;
		}
		runs[m].req = &reqs[i];
		runs[m].iov = &iov[i];
		runs[m].count = 1;
		runs[m].len = reqs[i].len;
		m++;
	}
	return m;
}

/*
 * A run's requests one by one, synchronously (a run that came back short:
 * they are whole pages, so doing them again is harmless).  Returns the
 * failed request, if any, with *err and *done set.
 */
static HiIoReq *
run_one_by_one(IoRun *run, bool write, int *err, ssize_t *done)
{
	int			i;

	for (i = 0; i < run->count; i++)
	{
		*err = sync_one(&run->req[i], write, done);
		if (*err != 0)
			return &run->req[i];
	}
	return NULL;
}

/* A run with preadv/pwritev (a single request with pread/pwrite) */
static HiIoReq *
sync_run(IoRun *run, bool write, int *err, ssize_t *done)
{
	ssize_t		rc;

	if (run->count == 1)
	{
		*err = sync_one(run->req, write, done);
		return *err != 0 ? run->req : NULL;
	}
	do
	{
		rc = write ? pwritev(run->req->fd, run->iov, run->count, run->req->offset) :
			preadv(run->req->fd, run->iov, run->count, run->req->offset);
	} while (rc < 0 && errno == EINTR);
	if (rc == (ssize_t) run->len)
		return NULL;
	return run_one_by_one(run, write, err, done);
}

static void
round_sync(IoRun *runs, int n, bool write)
{
	int			i;

	for (i = 0; i < n; i++)
	{
		ssize_t		done;
		int			err;
		HiIoReq    *bad = sync_run(&runs[i], write, &err, &done);

		if (bad)
			io_failed(bad, write, err > 0 ? err : 0, done);
	}
}

/* The first failure of a round: its request, errno (0: a short transfer), bytes done */
typedef struct IoFailure
{
	HiIoReq    *req;
	int			err;
	ssize_t		done;
} IoFailure;

static inline void
note_failure(IoFailure *f, HiIoReq *req, int err, ssize_t done)
{
	if (f->req == NULL)
	{
		f->req = req;
		f->err = err > 0 ? err : 0;
		f->done = done;
	}
}

/* A run's request in a submission entry of ring r_ring */
static void
prep_run(struct io_uring *r_ring, IoRun *r, bool write)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(r_ring);

	Assert(sqe != NULL);
	if (r->count == 1 && write)
		io_uring_prep_write(sqe, r->req->fd, r->req->buf, r->req->len, r->req->offset);
	else if (r->count == 1)
		io_uring_prep_read(sqe, r->req->fd, r->req->buf, r->req->len, r->req->offset);
	else if (write)
		io_uring_prep_writev(sqe, r->req->fd, r->iov, r->count, r->req->offset);
	else
		io_uring_prep_readv(sqe, r->req->fd, r->iov, r->count, r->req->offset);
	io_uring_sqe_set_data(sqe, r);
}

/*
 * Wait for n completions of runs submitted to r_ring, noting the first
 * failure in f; a short transfer is done again synchronously (whole pages:
 * it may be fine)
 */
static void
reap(struct io_uring *r_ring, int n, bool write, IoFailure *f)
{
	while (n > 0)
	{
		struct io_uring_cqe *cqe;
		int			rc = io_uring_wait_cqe(r_ring, &cqe);
		IoRun	   *r;

		if (rc == -EINTR)
			continue;
		if (rc < 0)
			ereport(PANIC,
					(errmsg("io_uring completion wait failed: %s", strerror(-rc))));
		r = (IoRun *) io_uring_cqe_get_data(cqe);
		if (cqe->res < 0)
			note_failure(f, r->req, -cqe->res, 0);
		else if ((Size) cqe->res != r->len)
		{
			ssize_t		done;
			int			err;
			HiIoReq    *failed = run_one_by_one(r, write, &err, &done);

			if (failed)
				note_failure(f, failed, err, done);
		}
		io_uring_cqe_seen(r_ring, cqe);
		n--;
	}
}

/*
 * A round over io_uring.  Requests to files in memory (tmpfs/ramfs, see
 * tier_files.c) are copied with pread/pwrite while the others are in
 * flight: buffered io_uring requests to such files are handed to a kernel
 * worker thread, which costs tens of microseconds for what is a memcpy.
 * Errors are raised only after every submitted request has completed, so
 * no request is left writing into a buffer its caller no longer owns.
 */
static void
round_uring(IoRun *runs, int n, bool write, const bool *mem_tier)
{
	int			i;
	int			nring = 0;
	int			submitted = 0;
	IoFailure	f = {NULL, 0, 0};
	int			submit_err = 0;

	for (i = 0; i < n; i++)
	{
		if (mem_tier[runs[i].req->tier])
			continue;
		prep_run(&ring, &runs[i], write);
		nring++;
	}
	while (submitted < nring)
	{
		int			rc = io_uring_submit(&ring);

		if (rc == -EINTR)
			continue;
		if (rc <= 0)
		{
			/* nothing more was submitted: reap what was, then fail */
			submit_err = rc < 0 ? -rc : EAGAIN;
			nring = submitted;
			break;
		}
		submitted += rc;
	}

	/* the in-memory requests, while the device works on the others */
	for (i = 0; i < n; i++)
	{
		ssize_t		done;
		int			err;
		HiIoReq    *failed;

		if (!mem_tier[runs[i].req->tier])
			continue;
		failed = run_one_by_one(&runs[i], write, &err, &done);
		if (failed)
			note_failure(&f, failed, err, done);
	}

	/* wait for every completion before raising any error */
	reap(&ring, nring, write, &f);
	if (submit_err != 0)
	{
		/* unsubmitted entries must not go out with a later round */
		ring_close(&ring);
		ring_depth = 0;
	}
	if (f.req != NULL)
		io_failed(f.req, write, f.err, f.done);
	if (submit_err != 0)
		ereport(ERROR,
				(errcode(ERRCODE_IO_ERROR),
				 errmsg("io_uring submission failed: %s", strerror(submit_err))));
}

/* Sleep out the rest of what the emulated devices would have needed */
static void
emulate_round(HiIoReq *reqs, int n, bool write, double elapsed_us)
{
	int			count[HI_NUM_TIERS] = {0, 0};
	double		need = 0;
	int			i;
	int			t;

	for (i = 0; i < n; i++)
		count[reqs[i].tier]++;
	for (t = 0; t < HI_NUM_TIERS; t++)
	{
		int			lat = write ? hi_dev_write_us[t] : hi_dev_read_us[t];
		int			par = Max(hi_dev_parallelism[t], 1);
		double		tier_us;

		if (count[t] == 0)
			continue;
		/* tiers are separate devices: they work in parallel */
		tier_us = (double) ((count[t] + par - 1) / par) * lat;
		need = Max(need, tier_us);
	}
	if (need > elapsed_us)
	{
		instr_time	start,
					now;

		/* short waits: spin, the kernel's timer slack would dwarf them */
		INSTR_TIME_SET_CURRENT(start);
		if (need - elapsed_us > 200)
			pg_usleep((long) (need - elapsed_us) - 50);
		for (;;)
		{
			INSTR_TIME_SET_CURRENT(now);
			INSTR_TIME_SUBTRACT(now, start);
			if (INSTR_TIME_GET_MICROSEC(now) >= need - elapsed_us)
				break;
		}
	}
}

/*
 * A round is done: count its I/Os, bytes, batch and time (us) per tier,
 * and report its writes to whoever watches the files (a build's WAL image)
 */
static void
account_round(HiIndexShared *sh, HiIoReq *reqs, int n, bool write, double us)
{
	bool		tier_used[HI_NUM_TIERS] = {false, false};
	int			i;

	for (i = 0; i < n; i++)
	{
		HiTierCounters *c = &sh->tiers[reqs[i].tier];

		if (write)
			hi_files_watch_written(sh, reqs[i].tier, (uint64) reqs[i].offset,
								   reqs[i].buf, (uint32) reqs[i].len);

		tier_used[reqs[i].tier] = true;
		pg_atomic_fetch_add_u64(write ? &c->writes : &c->reads, 1);
		pg_atomic_fetch_add_u64(write ? &c->bytes_written : &c->bytes_read,
								reqs[i].len);
	}
	for (i = 0; i < HI_NUM_TIERS; i++)
	{
		if (!tier_used[i])
			continue;
		pg_atomic_fetch_add_u64(write ? &sh->tiers[i].write_batches :
								&sh->tiers[i].read_batches, 1);
		pg_atomic_fetch_add_u64(&sh->tiers[i].io_time_us, (uint64) us);
	}
}

/*
 * Run a batch of page reads or writes and wait for all of them.  Counts
 * I/Os (the pages asked for, also where neighbours went as one request),
 * batches, bytes and time per tier in the index's shared counters.
 */
void
hi_io_batch(HiIndexShared *sh, HiIoReq *reqs, int n, bool write)
{
	/* a round at a time (io_depth's GUC maximum is 1024) */
	static IoRun runs[1024];
	static struct iovec iov[lengthof(runs)];
	int			depth = Min(Max(hi_io_depth, 1), (int) lengthof(runs));
	int			start;

	for (start = 0; start < n; start += depth)
	{
		int			cnt = Min(depth, n - start);
		int			nruns = make_runs(reqs + start, cnt, runs, iov);
		instr_time	t0,
					t1;
		double		us;
		int			i;
		bool		mem_tier[HI_NUM_TIERS];

		for (i = 0; i < HI_NUM_TIERS; i++)
			mem_tier[i] = hi_file_in_memory(sh, i);
		INSTR_TIME_SET_CURRENT(t0);
		/* what pg_stat_activity shows while the pages come and go */
		pgstat_report_wait_start(write ? WAIT_EVENT_DATA_FILE_WRITE : WAIT_EVENT_DATA_FILE_READ);
		/*
		 * One run has nothing to overlap: pread/pwrite does it with less
		 * work than a submission and its completion (a single page read
		 * cost 40 % more through the ring; the first query over 1,000
		 * partitions reads two or three pages of each index one by one)
		 */
		if (hi_io_method == HI_IO_URING && nruns > 1 && ensure_ring(depth))
			round_uring(runs, nruns, write, mem_tier);
		else
			round_sync(runs, nruns, write);
		INSTR_TIME_SET_CURRENT(t1);
		INSTR_TIME_SUBTRACT(t1, t0);
		us = INSTR_TIME_GET_MICROSEC(t1);
		if (hi_emulate_devices)
		{
			emulate_round(reqs + start, cnt, write, us);
			INSTR_TIME_SET_CURRENT(t1);
			INSTR_TIME_SUBTRACT(t1, t0);
			us = INSTR_TIME_GET_MICROSEC(t1);
		}
		pgstat_report_wait_end();

		account_round(sh, reqs + start, cnt, write, us);
		CHECK_FOR_INTERRUPTS();
	}
}

/*
 * A round of writes left in flight while its caller goes on (a bulk
 * load's page batch: hi_store_write_start), on a ring of its own, so that
 * the synchronous rounds the caller runs meanwhile (a cache eviction's
 * writes, reads) never reap its completions.  One per process at a time;
 * hi_io_write_wait reaps it, accounts it (the time submitting and
 * waiting: what the caller did meanwhile is not I/O time) and raises its
 * errors.  A transaction that fails with a round in flight waits for it
 * as it aborts (flight_abort), before its buffers can be freed.
 */
static struct io_uring flight_ring;
static int	flight_depth = 0;
static int	flight_pending = 0;		/* submitted, not yet reaped */
static IoRun flight_runs[1024];
static struct iovec flight_iov[lengthof(flight_runs)];
static HiIoReq *flight_reqs = NULL; /* NULL: no round in flight */
static int	flight_n;
static HiIndexShared *flight_sh;
static double flight_us;
static bool flight_callbacks = false;

/* Reap what is in flight, ignoring the results */
static void
flight_drain(void)
{
	while (flight_pending > 0)
	{
		struct io_uring_cqe *cqe;
		int			rc = io_uring_wait_cqe(&flight_ring, &cqe);

		if (rc == -EINTR)
			continue;
		if (rc < 0)
			ereport(PANIC,
					(errmsg("io_uring completion wait failed: %s", strerror(-rc))));
		io_uring_cqe_seen(&flight_ring, cqe);
		flight_pending--;
	}
	flight_reqs = NULL;
}

static void
flight_xact_abort(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT)
		flight_drain();
}

static void
flight_subxact_abort(SubXactEvent event, SubTransactionId mySubid,
					 SubTransactionId parentSubid, void *arg)
{
	if (event == SUBXACT_EVENT_ABORT_SUB)
		flight_drain();
}

/*
 * Submit n page writes (at most hybrid_index.io_depth) and return without
 * waiting: true if they are in flight (hi_io_write_wait must follow
 * before their buffers change), false if nothing was done because they
 * cannot fly (no io_uring, device emulation, a tier file in memory,
 * another round in flight): the caller then runs hi_io_batch.
 */
bool
hi_io_write_start(HiIndexShared *sh, HiIoReq *reqs, int n)
{
	int			depth = Min(Max(hi_io_depth, 1), (int) lengthof(flight_runs));
	int			nruns;
	int			submitted = 0;
	instr_time	t0,
				t1;
	int			i;

	if (flight_reqs != NULL || n > depth || hi_io_method != HI_IO_URING ||
		hi_emulate_devices || uring_refused)
		return false;
	for (i = 0; i < n; i++)
		if (hi_file_in_memory(sh, reqs[i].tier))
			return false;
	if (flight_depth < depth)
	{
		static bool flight_logged = false;
		int			err;

		if (flight_depth > 0)
			ring_close(&flight_ring);
		flight_depth = 0;
		err = ring_open(&flight_ring, depth);
		if (err != 0)
		{
			/* such writes are then waited for where they are submitted */
			if (!flight_logged)
				ereport(LOG_SERVER_ONLY,
						(errmsg("hybrid_index: no io_uring ring for writes in flight (%s): bulk loads wait for each batch of writes",
								err == EMFILE ? "no file descriptor left within max_files_per_process" : strerror(err))));
			flight_logged = true;
			return false;
		}
		flight_depth = depth;
	}
	if (!flight_callbacks)
	{
		RegisterXactCallback(flight_xact_abort, NULL);
		RegisterSubXactCallback(flight_subxact_abort, NULL);
		flight_callbacks = true;
	}

	INSTR_TIME_SET_CURRENT(t0);
	nruns = make_runs(reqs, n, flight_runs, flight_iov);
	for (i = 0; i < nruns; i++)
		prep_run(&flight_ring, &flight_runs[i], true);
	while (submitted < nruns)
	{
		int			rc = io_uring_submit(&flight_ring);

		if (rc == -EINTR)
			continue;
		if (rc <= 0)
		{
			/* reap what went, drop what did not, and fail */
			flight_pending = submitted;
			flight_drain();
			ring_close(&flight_ring);
			flight_depth = 0;
			ereport(ERROR,
					(errcode(ERRCODE_IO_ERROR),
					 errmsg("io_uring submission failed: %s",
							strerror(rc < 0 ? -rc : EAGAIN))));
		}
		submitted += rc;
	}
	flight_pending = nruns;
	flight_reqs = reqs;
	flight_n = n;
	flight_sh = sh;
	INSTR_TIME_SET_CURRENT(t1);
	INSTR_TIME_SUBTRACT(t1, t0);
	flight_us = INSTR_TIME_GET_MICROSEC(t1);
	return true;
}

/* Wait for the writes hi_io_write_start left in flight */
void
hi_io_write_wait(void)
{
	IoFailure	f = {NULL, 0, 0};
	HiIoReq    *reqs = flight_reqs;
	instr_time	t0,
				t1;

	if (reqs == NULL)
		elog(ERROR, "hybrid_index: no page writes in flight to wait for");
	INSTR_TIME_SET_CURRENT(t0);
	pgstat_report_wait_start(WAIT_EVENT_DATA_FILE_WRITE);
	reap(&flight_ring, flight_pending, true, &f);
	pgstat_report_wait_end();
	flight_pending = 0;
	flight_reqs = NULL;
	if (f.req != NULL)
		io_failed(f.req, true, f.err, f.done);
	INSTR_TIME_SET_CURRENT(t1);
	INSTR_TIME_SUBTRACT(t1, t0);
	account_round(flight_sh, reqs, flight_n, true, flight_us + INSTR_TIME_GET_MICROSEC(t1));
}

/*
 * Did n operations since the device read count was before read from the
 * device more than rarely (one read per 8 of them)?  Then a batch reads
 * ahead (the R-trees' plan, the grids' read-ahead).
 */
bool
hi_store_reads_often(HiIndexShared *sh, uint64 before, int n)
{
	return (hi_store_device_reads(sh) - before) * 8 >= (uint64) n;
}

/* Pages this index read from its tier files so far (every backend) */
uint64
hi_store_device_reads(HiIndexShared *sh)
{
	uint64		n = 0;
	int			t;

	for (t = 0; t < HI_NUM_TIERS; t++)
		n += pg_atomic_read_u64(&sh->tiers[t].reads);
	return n;
}
