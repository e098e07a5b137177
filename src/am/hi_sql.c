/*
 * hi_sql.c
 *	  SQL-callable observability of hybrid_index indexes: per-tier I/O
 *	  statistics, structural snapshot, invariant check, checkpoint, files.
 */
#include "postgres.h"

#include <sys/stat.h>

#include "access/genam.h"
#include "access/relation.h"
#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/tuplestore.h"
#include "utils/syscache.h"
#include "catalog/pg_class.h"
#include "utils/json.h"
#include "catalog/pg_inherits.h"

#include "am/am_common.h"
#include "am/rtam.h"
#include "rtree/rtree.h"
#include "policy/placement.h"
#include "core/hi_core.h"
#include "storage/storage.h"

PG_FUNCTION_INFO_V1(hybrid_index_stats);
PG_FUNCTION_INFO_V1(hybrid_index_reset_stats);
PG_FUNCTION_INFO_V1(hybrid_index_inspect);
PG_FUNCTION_INFO_V1(hybrid_index_check);
PG_FUNCTION_INFO_V1(hybrid_index_checkpoint);
PG_FUNCTION_INFO_V1(hybrid_index_files);
PG_FUNCTION_INFO_V1(hybrid_index_pages);
PG_FUNCTION_INFO_V1(hybrid_index_version);

/*
 * The release of the loaded library.  After a package upgrade and restart
 * it is newer than pg_extension.extversion until ALTER EXTENSION
 * hybrid_index UPDATE has run in the database (docs/upgrading.md).
 */
Datum
hybrid_index_version(PG_FUNCTION_ARGS)
{
	PG_RETURN_TEXT_P(cstring_to_text(HI_EXTENSION_VERSION));
}

/*
 * The indexes a function answers for: the index itself, or for a
 * partitioned index every index of its leaf partitions (whatever their
 * depth), in the order of find_all_inheritors.
 */
List *
hi_index_leaves(Oid relid)
{
	List	   *leaves = NIL;
	ListCell   *lc;

	if (get_rel_relkind(relid) != RELKIND_PARTITIONED_INDEX)
		return list_make1_oid(relid);
	foreach(lc, find_all_inheritors(relid, AccessShareLock, NULL))
		if (get_rel_relkind(lfirst_oid(lc)) == RELKIND_INDEX)
			leaves = lappend_oid(leaves, lfirst_oid(lc));
	return leaves;
}

/*
 * hi_index_leaves of an index that must be ours: a partitioned index of
 * another access method is refused here, by its own name
 */
static List *
our_leaves(Oid relid)
{
	if (get_rel_relkind(relid) == RELKIND_PARTITIONED_INDEX &&
		!hi_is_our_index_of_kind(relid, RELKIND_PARTITIONED_INDEX))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a hybrid_index index", get_rel_name(relid))));
	return hi_index_leaves(relid);
}

/* Open a relation that must be an index of one of our access methods */
static Relation
open_our_index(Oid relid, LOCKMODE lockmode, HiIndex **idx, const HiAmOps **ops)
{
	Relation	rel;
	const HiAmOps *am;

	/* what this session inserted is in the index before it is looked at */
	am_pending_insert_all();
	rel = relation_open(relid, lockmode);
	am = rel->rd_rel->relkind == RELKIND_INDEX ? hi_am_ops(rel->rd_rel->relam) : NULL;

	if (am == NULL)
	{
		char	   *name = pstrdup(RelationGetRelationName(rel));

		relation_close(rel, lockmode);
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a hybrid_index index", name)));
	}
	*idx = hi_am_open(rel);
	if (ops)
		*ops = am;
	return rel;
}

/* Add one index's counters to acc[tier][column] (columns 1..11) */
static void
stats_add(Oid indexoid, double acc[HI_NUM_TIERS][12])
{
	Relation	rel;
	HiIndex    *idx;
	uint64		pages[HI_NUM_TIERS];
	int			t;

	rel = open_our_index(indexoid, AccessShareLock, &idx, NULL);
	hi_pt_count(idx->sh, pages);
	for (t = 0; t < HI_NUM_TIERS; t++)
	{
		HiTierCounters *c = &idx->sh->tiers[t];

		acc[t][1] += pages[t];
		acc[t][2] += pg_atomic_read_u64(&c->reads);
		acc[t][3] += pg_atomic_read_u64(&c->writes);
		acc[t][4] += pg_atomic_read_u64(&c->read_batches);
		acc[t][5] += pg_atomic_read_u64(&c->write_batches);
		acc[t][6] += pg_atomic_read_u64(&c->bytes_read);
		acc[t][7] += pg_atomic_read_u64(&c->bytes_written);
		acc[t][8] += pg_atomic_read_u64(&c->io_time_us) / 1000.0;
	}
	/* cache and log counters belong to the index, shown on its first row */
	acc[0][9] += pg_atomic_read_u64(&idx->sh->cache_hits);
	acc[0][10] += pg_atomic_read_u64(&idx->sh->cache_misses);
	acc[0][11] += pg_atomic_read_u64(&idx->sh->log_bytes);
	relation_close(rel, AccessShareLock);
}

/* One row per tier; a partitioned index: the sums over its partitions */
Datum
hybrid_index_stats(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	double		acc[HI_NUM_TIERS][12] = {{0}};
	ListCell   *lc;
	int			t;
	int			k;

	InitMaterializedSRF(fcinfo, 0);
	foreach(lc, our_leaves(PG_GETARG_OID(0)))
		stats_add(lfirst_oid(lc), acc);
	for (t = 0; t < HI_NUM_TIERS; t++)
	{
		Datum		values[12];
		bool		nulls[12] = {0};

		values[0] = CStringGetTextDatum(t == HI_TIER_FLASH ? "flash" : "optane");
		for (k = 1; k < 12; k++)
			values[k] = k == 8 ? Float8GetDatum(acc[t][k]) : Int64GetDatum((int64) acc[t][k]);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

Datum
hybrid_index_reset_stats(PG_FUNCTION_ARGS)
{
	HiIndex    *idx;
	const HiAmOps *am;
	Relation	rel;
	ListCell   *lc;

	hi_acl_check_owner(PG_GETARG_OID(0));
	foreach(lc, our_leaves(PG_GETARG_OID(0)))
	{
		rel = open_our_index(lfirst_oid(lc), AccessShareLock, &idx, &am);
		hi_stats_reset(idx->sh);
		/* the AM's own counters (efind's flushes, lbgrid's buffers, ...) too */
		if (am->reset_stats)
			am->reset_stats(idx);
		relation_close(rel, AccessShareLock);
	}
	PG_RETURN_VOID();
}

/* The structural snapshot of one index, as JSON text */
static char *
inspect_one(Oid indexoid)
{
	HiIndex    *idx;
	const HiAmOps *am;
	Relation	rel = open_our_index(indexoid, AccessShareLock, &idx, &am);
	char	   *json;

	/* inspection and checks read pages that are not workload */
	idx->maintenance = true;
	json = am->inspect_json(idx);
	idx->maintenance = false;
	relation_close(rel, AccessShareLock);
	return json;
}

Datum
hybrid_index_inspect(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	StringInfoData buf;
	ListCell   *lc;
	bool		first = true;

	if (get_rel_relkind(relid) != RELKIND_PARTITIONED_INDEX)
		PG_RETURN_DATUM(DirectFunctionCall1(jsonb_in, CStringGetDatum(inspect_one(relid))));
	/* a partitioned index: each partition's index by name */
	initStringInfo(&buf);
	appendStringInfoString(&buf, "{\"partitioned\": true, \"partitions\": {");
	foreach(lc, our_leaves(relid))
	{
		Oid			child = lfirst_oid(lc);

		if (!first)
			appendStringInfoString(&buf, ", ");
		first = false;
		escape_json(&buf, quote_qualified_identifier(get_namespace_name(get_rel_namespace(child)),
													 get_rel_name(child)));
		appendStringInfo(&buf, ": %s", inspect_one(child));
	}
	appendStringInfoString(&buf, "}}");
	PG_RETURN_DATUM(DirectFunctionCall1(jsonb_in, CStringGetDatum(buf.data)));
}

Datum
hybrid_index_check(PG_FUNCTION_ARGS)
{
	HiIndex    *idx;
	const HiAmOps *am;
	Relation	rel;

	ListCell   *lc;

	bool		heapallindexed = PG_NARGS() > 1 && PG_GETARG_BOOL(1);

	hi_acl_check_read(PG_GETARG_OID(0));
	foreach(lc, our_leaves(PG_GETARG_OID(0)))
	{
		rel = open_our_index(lfirst_oid(lc), AccessShareLock, &idx, &am);
		idx->maintenance = true;
		am->check(idx);
		idx->maintenance = false;
		relation_close(rel, AccessShareLock);
		if (heapallindexed)
			hi_check_heap_all_indexed(lfirst_oid(lc));
	}
	PG_RETURN_BOOL(true);
}

Datum
hybrid_index_checkpoint(PG_FUNCTION_ARGS)
{
	HiIndex    *idx;
	Relation	rel;

	ListCell   *lc;

	hi_acl_check_owner(PG_GETARG_OID(0));
	foreach(lc, our_leaves(PG_GETARG_OID(0)))
	{
		rel = open_our_index(lfirst_oid(lc), AccessShareLock, &idx, NULL);
		hi_error_if_recovery(rel);
		hi_lock_for_change(idx);
		hi_index_checkpoint(idx);
		LWLockRelease(&idx->sh->tree_lock);
		relation_close(rel, AccessShareLock);
	}
	PG_RETURN_VOID();
}

/* The files of one index: its data file per tier, map and log */
static void
files_one(ReturnSetInfo *rsinfo, Oid indexoid)
{
	Relation	rel;
	HiIndexShared *sh;
	HiIndex    *idx;
	const char *kinds[] = {"flash", "optane", "map", "log"};
	int			k;

	rel = open_our_index(indexoid, AccessShareLock, &idx, NULL);
	sh = idx->sh;
	for (k = 0; k < 4; k++)
	{
		char	   *path;
		struct stat st;
		Datum		values[3];
		bool		nulls[3] = {0};

		if (k < HI_NUM_TIERS)
			path = hi_slot_path(sh, k);
		else
			path = hi_file_path(sh->spcoid[HI_TIER_FLASH], sh->dboid,
								sh->spcoid[HI_TIER_FLASH], sh->relnumber, kinds[k]);
		values[0] = CStringGetTextDatum(kinds[k]);
		values[1] = CStringGetTextDatum(path);
		if (stat(path, &st) == 0)
			values[2] = Int64GetDatum((int64) st.st_size);
		else
			nulls[2] = true;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	relation_close(rel, AccessShareLock);
}

/* A partitioned index: the files of every partition's index */
Datum
hybrid_index_files(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	ListCell   *lc;

	InitMaterializedSRF(fcinfo, 0);
	foreach(lc, our_leaves(PG_GETARG_OID(0)))
		files_one(rsinfo, lfirst_oid(lc));
	return (Datum) 0;
}

/* The pages of one index */
static void
pages_one(ReturnSetInfo *rsinfo, Oid indexoid)
{
	Relation	rel;
	HiIndex    *idx;
	HiPageInfo *pages;
	Size		n;
	Size		i;
	const HiAmOps *am;

	rel = open_our_index(indexoid, AccessShareLock, &idx, &am);
	idx->maintenance = true;
	pages = am->pages(idx, &n);
	idx->maintenance = false;
	for (i = 0; i < n; i++)
	{
		Datum		values[6];
		bool		nulls[6] = {0};
		Datum		box[4];

		values[0] = Int64GetDatum(pages[i].pageno);
		values[1] = Int32GetDatum(pages[i].level);
		if (pages[i].tier < 0)
			nulls[2] = true;
		else
			values[2] = CStringGetTextDatum(pages[i].tier == HI_TIER_FLASH ? "flash" : "optane");
		values[3] = Int32GetDatum(pages[i].nentries);
		values[4] = Float8GetDatum(hi_place_score(idx->sh, idx->slotno, pages[i].pageno));
		box[0] = Float8GetDatum(pages[i].box.xmin);
		box[1] = Float8GetDatum(pages[i].box.ymin);
		box[2] = Float8GetDatum(pages[i].box.xmax);
		box[3] = Float8GetDatum(pages[i].box.ymax);
		if (pages[i].nentries == 0)
			nulls[5] = true;
		else
			values[5] = PointerGetDatum(construct_array(box, 4, FLOAT8OID, sizeof(float8),
														FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	relation_close(rel, AccessShareLock);
}

/* A partitioned index: the pages of every partition's index, one after the other */
Datum
hybrid_index_pages(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	ListCell   *lc;

	hi_acl_check_read(PG_GETARG_OID(0));
	InitMaterializedSRF(fcinfo, 0);
	foreach(lc, our_leaves(PG_GETARG_OID(0)))
		pages_one(rsinfo, lfirst_oid(lc));
	return (Datum) 0;
}
