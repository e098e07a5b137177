/*
 * hi_compat.h
 *	  Every difference between the PostgreSQL major versions hybrid_index
 *	  builds against (15, 16, 17, 18; 19 compiles), in one place.  The rest
 *	  of the source is written once, against these names; a difference that
 *	  is more than a spelling is one small function in compat/hi_compat.c.
 *
 * What differs, by the version that changed it:
 *	16: RelFileNode/rd_node -> RelFileLocator/rd_locator, RelidByRelfilenode
 *		-> RelidByRelfilenumber, pg_*_ownercheck/aclcheck -> object_*,
 *		the varlena macros in varatt.h, nested PG_TRY needs a suffix (or
 *		-Wshadow=compatible-local, which 16's PGXS turns on, warns);
 *	17: MyProc->lxid -> MyProc->vxid.lxid, ShmemVariableCache ->
 *		TransamVariables, reindex_index takes the statement;
 *	18: index_beginscan[_bitmap] take instrumentation and an AM counts its
 *		searches there, the TID bitmap iterator is a struct whose pages are
 *		read by tbm_extract_page_tuple, vacuum_delay_point(is_analyze),
 *		relpath functions return a struct;
 *	19: index_beginscan and table_beginscan_parallel take flags, the AM routine is kept by pointer (a
 *		static struct, no longer copied and freed), LWLockNewTrancheId(name)
 *		replaces LWLockRegisterTranche, ShmemInitHash takes one size, the
 *		planner hook gets the ExplainState, RequestAddinShmemSpace moved to
 *		storage/shmem.h (both headers are included here), a hand-made
 *		TupleDesc is finalized, C11 (our Makefile builds gnu11 throughout).
 */
#ifndef HI_COMPAT_H
#define HI_COMPAT_H

#include "postgres.h"

#include "access/amapi.h"
#include "access/genam.h"
#include "access/relscan.h"
#include "nodes/params.h"
#include "nodes/parsenodes.h"
#include "nodes/plannodes.h"
#include "nodes/tidbitmap.h"
#include "storage/ipc.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "utils/acl.h"
#include "utils/hsearch.h"
#include "utils/rel.h"

#if PG_VERSION_NUM < 150000
#error "hybrid_index needs PostgreSQL 15 or later"
#endif

#if PG_VERSION_NUM >= 160000
#include "varatt.h"
#endif

/* --- a relation's storage: tablespace, database, file number ----------- */
#if PG_VERSION_NUM >= 160000
#define HI_REL_SPC(rel)		((rel)->rd_locator.spcOid)
#define HI_REL_DB(rel)		((rel)->rd_locator.dbOid)
#define HI_REL_NUMBER(rel)	((Oid) (rel)->rd_locator.relNumber)
#else
#define HI_REL_SPC(rel)		((rel)->rd_node.spcNode)
#define HI_REL_DB(rel)		((rel)->rd_node.dbNode)
#define HI_REL_NUMBER(rel)	((rel)->rd_node.relNode)
#endif

/* the relation whose storage is (tablespace, file number); 0 = default */
extern Oid	hi_relid_by_filenumber(Oid reltablespace, Oid relnumber);

/* palloc'd path of the main fork of a permanent relation's storage */
extern char *hi_relpath_main(Oid spcoid, Oid dboid, Oid relnumber);

/* --- privileges ----------------------------------------------------------- */
extern bool hi_class_ownercheck(Oid relid, Oid roleid);
extern AclResult hi_tablespace_aclcheck(Oid spcoid, Oid roleid, AclMode mode);

/* --- this backend's virtual transaction id, and the transaction horizons */
#if PG_VERSION_NUM >= 170000
#define HI_PROC_LXID(proc)	((proc)->vxid.lxid)
#define HI_TRANSAM			TransamVariables
#else
#define HI_PROC_LXID(proc)	((proc)->lxid)
#define HI_TRANSAM			ShmemVariableCache
#endif

/* --- nested PG_TRY blocks in one function (the inner one) ----------------- */
#if PG_VERSION_NUM >= 160000
#define HI_TRY_INNER()		PG_TRY(_inner)
#define HI_CATCH_INNER()	PG_CATCH(_inner)
#define HI_FINALLY_INNER()	PG_FINALLY(_inner)
#define HI_END_TRY_INNER()	PG_END_TRY(_inner)
#else
#define HI_TRY_INNER()		PG_TRY()
#define HI_CATCH_INNER()	PG_CATCH()
#define HI_FINALLY_INNER()	PG_FINALLY()
#define HI_END_TRY_INNER()	PG_END_TRY()
#endif

/* --- index scans started by our own functions (no instrumentation) -------- */
extern IndexScanDesc hi_index_beginscan(Relation heap, Relation index, Snapshot snapshot,
										int nkeys, int norderbys);
extern IndexScanDesc hi_index_beginscan_bitmap(Relation index, Snapshot snapshot, int nkeys);

/* a parallel build's heap scan (19 takes scan option flags) */
extern TableScanDesc hi_table_beginscan_parallel(Relation heap, ParallelTableScanDesc pscan);

/*
 * An AM's search (one descent of the index per rescan): the statistics
 * counter, and from 18 on EXPLAIN ANALYZE's "Index Searches"
 */
#if PG_VERSION_NUM >= 180000
#define HI_COUNT_INDEX_SEARCH(scan) \
	do { \
		pgstat_count_index_scan((scan)->indexRelation); \
		if ((scan)->instrument) \
			(scan)->instrument->nsearches++; \
	} while (0)
#else
#define HI_COUNT_INDEX_SEARCH(scan) pgstat_count_index_scan((scan)->indexRelation)
#endif

/*
 * The exact TIDs of a TID bitmap, counted; false if a page is lossy (its
 * TIDs are not known)
 */
extern bool hi_tbm_count_exact(TIDBitmap *tbm, int64 *ntids);

/* --- maintenance ----------------------------------------------------------- */
extern void hi_vacuum_delay_point(void);
extern void hi_reindex_index(Oid indexoid, char persistence);

/* --- shared memory ------------------------------------------------------- */
extern HTAB *hi_shmem_init_hash(const char *name, int64 nelems, HASHCTL *info, int flags);

/* a tranche id for our LWLocks; each backend names it before use */
extern int	hi_lwlock_new_tranche(const char *name);
extern void hi_lwlock_name_tranche(int tranche_id, const char *name);

/*
 * What an AM handler returns.  Up to 18 the relcache copies the routine and
 * frees it; from 19 it keeps the pointer, so the routine is made once per
 * backend in TopMemoryContext and kept in *kept.
 */
extern Datum hi_am_handler_result(IndexAmRoutine **kept, IndexAmRoutine *(*make) (void));

/* --- a tuple descriptor built by hand is finalized before use (19) -------- */
#if PG_VERSION_NUM >= 190000
#define HI_TUPLEDESC_FINALIZE(desc) TupleDescFinalize(desc)
#else
#define HI_TUPLEDESC_FINALIZE(desc) ((void) (desc))
#endif

/* --- fetching heap rows for an index scan (19 takes ScanOptions flags) -- */
#if PG_VERSION_NUM >= 190000
#define hi_index_fetch_begin(rel) table_index_fetch_begin((rel), SO_NONE)
#else
#define hi_index_fetch_begin(rel) table_index_fetch_begin(rel)
#endif

/* --- the planner hook ---------------------------------------------------- */
#if PG_VERSION_NUM >= 190000
#define HI_PLANNER_ARGS Query *parse, const char *query_string, int cursorOptions, \
	ParamListInfo boundParams, struct ExplainState *es
#define HI_PLANNER_PASS parse, query_string, cursorOptions, boundParams, es
#else
#define HI_PLANNER_ARGS Query *parse, const char *query_string, int cursorOptions, \
	ParamListInfo boundParams
#define HI_PLANNER_PASS parse, query_string, cursorOptions, boundParams
#endif

#endif							/* HI_COMPAT_H */
