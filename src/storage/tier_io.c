/*
 * tier_io.c
 *	  Batched page I/O: "submit n reads (or n writes), wait for all", the
 *	  psync I/O of the PIO B-tree paper (section 2.3), over io_uring.
 *
 * A batch never mixes reads and writes.  Batches larger than
 * hybrid_index.io_depth are cut into rounds of that size.  Where io_uring
 * is unavailable (seccomp, old kernels) or hybrid_index.io_method = sync,
 * the same interface runs plain pread/pwrite loops.  Per-tier device
 * profiles, when hybrid_index.emulate_devices is on, stretch each round to
 * what the emulated device would take: ceil(n / parallelism) * latency.
 */
#include "postgres.h"

#include <liburing.h>
#include <unistd.h>

#include "miscadmin.h"
#include "portability/instr_time.h"
#include "storage/fd.h"

#include "base/hi_base.h"
#include "storage/storage.h"

static struct io_uring ring;
static int	ring_depth = 0;		/* 0: no ring yet */
static bool uring_refused = false;

static bool
ensure_ring(int depth)
{
	int			rc;

	if (uring_refused)
		return false;
	if (ring_depth >= depth)
		return true;
	if (ring_depth > 0)
		io_uring_queue_exit(&ring);
	ring_depth = 0;
	rc = io_uring_queue_init(depth, &ring, 0);
	if (rc < 0)
	{
		uring_refused = true;
		ereport(LOG,
				(errmsg("hybrid_index: io_uring unavailable (%s), falling back to synchronous I/O",
						strerror(-rc))));
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

static void
round_sync(HiIoReq *reqs, int n, bool write)
{
	int			i;

	for (i = 0; i < n; i++)
	{
		ssize_t		done;
		int			err = sync_one(&reqs[i], write, &done);

		if (err != 0)
			io_failed(&reqs[i], write, err > 0 ? err : 0, done);
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
round_uring(HiIoReq *reqs, int n, bool write, const bool *mem_tier)
{
	int			i;
	int			nring = 0;
	int			submitted = 0;
	int			completed = 0;
	int			first_err = 0;
	int			bad = -1;
	ssize_t		bad_done = 0;
	int			submit_err = 0;

	for (i = 0; i < n; i++)
	{
		struct io_uring_sqe *sqe;

		if (mem_tier[reqs[i].tier])
			continue;
		sqe = io_uring_get_sqe(&ring);
		Assert(sqe != NULL);
		if (write)
			io_uring_prep_write(sqe, reqs[i].fd, reqs[i].buf, reqs[i].len, reqs[i].offset);
		else
			io_uring_prep_read(sqe, reqs[i].fd, reqs[i].buf, reqs[i].len, reqs[i].offset);
		io_uring_sqe_set_data(sqe, &reqs[i]);
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

		if (!mem_tier[reqs[i].tier])
			continue;
		err = sync_one(&reqs[i], write, &done);
		if (err != 0 && bad < 0)
		{
			bad = i;
			first_err = err > 0 ? err : 0;
			bad_done = done;
		}
	}

	/* wait for every completion before raising any error */
	while (completed < nring)
	{
		struct io_uring_cqe *cqe;
		int			rc = io_uring_wait_cqe(&ring, &cqe);
		HiIoReq    *r;

		if (rc == -EINTR)
			continue;
		if (rc < 0)
			ereport(PANIC,
					(errmsg("io_uring completion wait failed: %s", strerror(-rc))));
		r = (HiIoReq *) io_uring_cqe_get_data(cqe);
		if (cqe->res < 0)
		{
			if (bad < 0)
			{
				bad = r - reqs;
				first_err = -cqe->res;
				bad_done = 0;
			}
		}
		else if (cqe->res != (int) r->len)
		{
			/* a short transfer: finish it synchronously, it may be fine */
			HiIoReq		rest = *r;
			ssize_t		done;
			int			err;

			rest.buf += cqe->res;
			rest.offset += cqe->res;
			rest.len -= cqe->res;
			err = sync_one(&rest, write, &done);
			if (err != 0 && bad < 0)
			{
				bad = r - reqs;
				first_err = err > 0 ? err : 0;
				bad_done = cqe->res + done;
			}
		}
		io_uring_cqe_seen(&ring, cqe);
		completed++;
	}
	if (submit_err != 0)
	{
		/* unsubmitted entries must not go out with a later round */
		io_uring_queue_exit(&ring);
		ring_depth = 0;
	}
	if (bad >= 0)
		io_failed(&reqs[bad], write, first_err, bad_done);
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
 * Run a batch of page reads or writes and wait for all of them.  Counts
 * I/Os, batches, bytes and time per tier in the index's shared counters.
 */
void
hi_io_batch(HiIndexShared *sh, HiIoReq *reqs, int n, bool write)
{
	int			depth = Max(hi_io_depth, 1);
	int			start;

	for (start = 0; start < n; start += depth)
	{
		int			cnt = Min(depth, n - start);
		instr_time	t0,
					t1;
		double		us;
		int			i;
		bool		tier_used[HI_NUM_TIERS] = {false, false};
		bool		mem_tier[HI_NUM_TIERS];

		for (i = 0; i < HI_NUM_TIERS; i++)
			mem_tier[i] = hi_file_in_memory(sh, i);
		INSTR_TIME_SET_CURRENT(t0);
		if (hi_io_method == HI_IO_URING && ensure_ring(depth))
			round_uring(reqs + start, cnt, write, mem_tier);
		else
			round_sync(reqs + start, cnt, write);
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

		for (i = start; i < start + cnt; i++)
		{
			HiTierCounters *c = &sh->tiers[reqs[i].tier];

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
		CHECK_FOR_INTERRUPTS();
	}
}
