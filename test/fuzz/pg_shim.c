/*
 * pg_shim.c
 *	  Backend symbols the fuzzed hybrid_index sources need, implemented the
 *	  way the backend behaves where it matters for memory safety:
 *
 *	  - ereport(ERROR) / elog(ERROR) siglongjmp to *PG_exception_stack, so
 *		PG_TRY/PG_CATCH in the harness (and in the code under test) work as
 *		in a backend; lower levels just return.
 *	  - palloc & co. return tracked malloc chunks (16-byte aligned, like
 *		MAXALIGN or better); fuzz_mem_reset() frees all of them after each
 *		input, as the end of a query would reset its memory context.
 *		palloc of more than MaxAllocSize without MCXT_ALLOC_HUGE raises an
 *		ERROR, like the backend.
 *	  - check_stack_depth() raises an ERROR past 2 MB of stack (the
 *		default max_stack_depth), measured from the harness entry.
 *	  - LWLocks are no-ops (one thread).
 *
 * Every message is formatted with vsnprintf, so a format string whose
 * arguments do not match is exercised too (ASan/UBSan see bad pointers).
 */
#include "postgres.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "miscadmin.h"
#include "storage/lwlock.h"
#include "utils/elog.h"
#include "utils/memutils.h"

#include "pg_shim.h"

/* ---- errors ---- */

sigjmp_buf *PG_exception_stack = NULL;
ErrorContextCallback *error_context_stack = NULL;
FuzzError	fuzz_last_error;

static int	cur_elevel;
static int	cur_sqlerrcode;
static char cur_message[512];

bool
errstart(int elevel, const char *domain)
{
	cur_elevel = elevel;
	cur_sqlerrcode = (elevel >= ERROR) ? ERRCODE_INTERNAL_ERROR : 0;
	cur_message[0] = '\0';
	/* messages below ERROR are formatted too (cheap), then dropped */
	return true;
}

bool
errstart_cold(int elevel, const char *domain)
{
	return errstart(elevel, domain);
}

void
pg_re_throw(void)
{
	if (PG_exception_stack == NULL)
	{
		fprintf(stderr, "pg_shim: ERROR outside PG_TRY: %s\n", fuzz_last_error.message);
		abort();
	}
	siglongjmp(*PG_exception_stack, 1);
}

void
errfinish(const char *filename, int lineno, const char *funcname)
{
	if (cur_elevel < ERROR)
		return;
	fuzz_last_error.elevel = cur_elevel;
	fuzz_last_error.sqlerrcode = cur_sqlerrcode;
	memcpy(fuzz_last_error.message, cur_message, sizeof(cur_message));
	fuzz_last_error.filename = filename;
	fuzz_last_error.lineno = lineno;
	if (cur_elevel >= FATAL)
	{
		/* a FATAL/PANIC from a decoder would end the backend: a finding */
		fprintf(stderr, "pg_shim: elevel %d at %s:%d: %s\n", cur_elevel,
				filename, lineno, cur_message);
		abort();
	}
	pg_re_throw();
}

int
errcode(int sqlerrcode)
{
	cur_sqlerrcode = sqlerrcode;
	return 0;
}

int
errcode_for_file_access(void)
{
	cur_sqlerrcode = ERRCODE_IO_ERROR;
	return 0;
}

static int
format_into(char *buf, size_t len, const char *fmt, va_list ap)
{
	vsnprintf(buf, len, fmt, ap);
	return 0;
}

int
errmsg(const char *fmt,...)
{
	va_list		ap;

	va_start(ap, fmt);
	format_into(cur_message, sizeof(cur_message), fmt, ap);
	va_end(ap);
	return 0;
}

int
errmsg_internal(const char *fmt,...)
{
	va_list		ap;

	va_start(ap, fmt);
	format_into(cur_message, sizeof(cur_message), fmt, ap);
	va_end(ap);
	return 0;
}

int
errdetail(const char *fmt,...)
{
	char		buf[512];
	va_list		ap;

	va_start(ap, fmt);
	format_into(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return 0;
}

int
errdetail_internal(const char *fmt,...)
{
	char		buf[512];
	va_list		ap;

	va_start(ap, fmt);
	format_into(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return 0;
}

int
errhint(const char *fmt,...)
{
	char		buf[512];
	va_list		ap;

	va_start(ap, fmt);
	format_into(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return 0;
}

const char *
fuzz_sqlstate(int sqlerrcode)
{
	static char buf[6];
	int			i;

	for (i = 0; i < 5; i++)
	{
		buf[i] = PGUNSIXBIT(sqlerrcode);
		sqlerrcode >>= 6;
	}
	buf[5] = '\0';
	return buf;
}

/* ---- stack depth ---- */

static char *stack_base = NULL;

void
check_stack_depth(void)
{
	char		here;
	long		depth;

	if (stack_base == NULL)
		return;
	depth = (long) (stack_base - &here);
	if (depth < 0)
		depth = -depth;
	if (depth > 2L * 1024 * 1024 - 512 * 1024)	/* max_stack_depth minus slop */
		ereport(ERROR,
				(errcode(ERRCODE_STATEMENT_TOO_COMPLEX),
				 errmsg("stack depth limit exceeded")));
}

/* ---- interrupts ---- */

volatile sig_atomic_t InterruptPending = false;

void
ProcessInterrupts(void)
{
}

/* ---- LWLocks: one thread, nothing to lock ---- */

bool
LWLockAcquire(LWLock *lock, LWLockMode mode)
{
	return true;
}

void
LWLockRelease(LWLock *lock)
{
}

/* ---- memory ---- */

typedef struct Chunk
{
	struct Chunk *prev;
	struct Chunk *next;
	Size		size;
	Size		pad;			/* keep the payload 16-byte aligned */
} Chunk;

static Chunk chunks = {&chunks, &chunks, 0, 0};
static long nlive = 0;

MemoryContext CurrentMemoryContext = NULL;
MemoryContext TopMemoryContext = NULL;

static void *
shim_alloc(Size size, int flags)
{
	Chunk	   *c;

	if (!(flags & MCXT_ALLOC_HUGE) && !AllocSizeIsValid(size))
		elog(ERROR, "invalid memory alloc request size %zu", size);
	if ((flags & MCXT_ALLOC_HUGE) && !AllocHugeSizeIsValid(size))
		elog(ERROR, "invalid memory alloc request size %zu", size);
	/* more than the fuzz machine should give one input: out of memory */
	if (size > (Size) 256 * 1024 * 1024)
	{
		if (flags & MCXT_ALLOC_NO_OOM)
			return NULL;
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory"),
				 errdetail("Failed on request of size %zu.", size)));
	}
	c = malloc(sizeof(Chunk) + (size ? size : 1));
	if (c == NULL)
		abort();
	c->size = size;
	c->next = chunks.next;
	c->prev = &chunks;
	chunks.next->prev = c;
	chunks.next = c;
	nlive++;
	if (flags & MCXT_ALLOC_ZERO)
		memset(c + 1, 0, size);
	return c + 1;
}

void
pfree(void *pointer)
{
	Chunk	   *c = ((Chunk *) pointer) - 1;

	c->prev->next = c->next;
	c->next->prev = c->prev;
	nlive--;
	free(c);
}

void *
palloc(Size size)
{
	return shim_alloc(size, 0);
}

void *
palloc0(Size size)
{
	return shim_alloc(size, MCXT_ALLOC_ZERO);
}

void *
palloc_extended(Size size, int flags)
{
	return shim_alloc(size, flags);
}

void *
repalloc(void *pointer, Size size)
{
	Chunk	   *c = ((Chunk *) pointer) - 1;
	void	   *n = shim_alloc(size, 0);

	memcpy(n, pointer, Min(size, c->size));
	pfree(pointer);
	return n;
}

void *
MemoryContextAlloc(MemoryContext context, Size size)
{
	return shim_alloc(size, 0);
}

void *
MemoryContextAllocZero(MemoryContext context, Size size)
{
	return shim_alloc(size, MCXT_ALLOC_ZERO);
}

void *
MemoryContextAllocExtended(MemoryContext context, Size size, int flags)
{
	return shim_alloc(size, flags);
}

char *
pstrdup(const char *in)
{
	Size		len = strlen(in) + 1;
	char	   *out = shim_alloc(len, 0);

	memcpy(out, in, len);
	return out;
}

char *
psprintf(const char *fmt,...)
{
	char		buf[1024];
	va_list		ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return pstrdup(buf);
}

void
fuzz_mem_reset(void)
{
	while (chunks.next != &chunks)
		pfree(chunks.next + 1);
}

long
fuzz_mem_live(void)
{
	return nlive;
}

void
fuzz_begin_input(void)
{
	char		here;

	stack_base = &here;
	memset(&fuzz_last_error, 0, sizeof(fuzz_last_error));
	PG_exception_stack = NULL;
	error_context_stack = NULL;
}

void
fuzz_write_seed(const char *dir, const char *name, const void *head, size_t hlen,
				const void *body, size_t blen)
{
	char		path[1024];
	FILE	   *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (f == NULL)
	{
		perror(path);
		exit(1);
	}
	if ((hlen > 0 && fwrite(head, 1, hlen, f) != hlen) ||
		(blen > 0 && fwrite(body, 1, blen, f) != blen) || fclose(f) != 0)
	{
		perror(path);
		exit(1);
	}
}
