/*
 * pg_shim.h
 *	  Just enough of the PostgreSQL backend to run hybrid_index's decoders
 *	  outside a server, under libFuzzer: error reporting (ereport(ERROR)
 *	  longjmps to the innermost PG_TRY, as in the backend), memory
 *	  allocation (palloc & co., all freed after each fuzz input), stack
 *	  depth checks and a few globals.  See pg_shim.c and README.md.
 */
#ifndef HI_FUZZ_PG_SHIM_H
#define HI_FUZZ_PG_SHIM_H

#include "postgres.h"

/* The last error raised (valid after PG_CATCH) */
typedef struct FuzzError
{
	int			elevel;
	int			sqlerrcode;
	char		message[512];
	const char *filename;
	int			lineno;
} FuzzError;

extern FuzzError fuzz_last_error;

/* Free everything palloc'd since the previous call */
extern void fuzz_mem_reset(void);

/* Number of live palloc'd chunks (for leak checks inside one input) */
extern long fuzz_mem_live(void);

/* Call at the start of each input: resets error state and the stack base */
extern void fuzz_begin_input(void);

/* Write a seed input dir/name of head (hlen bytes) then body (exits on error) */
extern void fuzz_write_seed(const char *dir, const char *name, const void *head, size_t hlen,
							const void *body, size_t blen);

/* Render an sqlstate as its five characters */
extern const char *fuzz_sqlstate(int sqlerrcode);

#endif							/* HI_FUZZ_PG_SHIM_H */
