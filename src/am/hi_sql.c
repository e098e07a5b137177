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

/* Open a relation that must be an index of one of our access methods */
static Relation
open_our_index(Oid relid, LOCKMODE lockmode, HiIndex **idx, const HiAmOps **ops)
{
	Relation	rel = relation_open(relid, lockmode);
	const HiAmOps *am = rel->rd_rel->relkind == RELKIND_INDEX ?
		hi_am_ops(rel->rd_rel->relam) : NULL;

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

Datum
hybrid_index_stats(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Relation	rel;
	HiIndex    *idx;
	uint64		pages[HI_NUM_TIERS];
	int			t;

	InitMaterializedSRF(fcinfo, 0);
	rel = open_our_index(relid, AccessShareLock, &idx, NULL);
	hi_pt_count(idx->sh, pages);
	for (t = 0; t < HI_NUM_TIERS; t++)
	{
		HiTierCounters *c = &idx->sh->tiers[t];
		Datum		values[12];
		bool		nulls[12] = {0};

		values[0] = CStringGetTextDatum(t == HI_TIER_FLASH ? "flash" : "optane");
		values[1] = Int64GetDatum((int64) pages[t]);
		values[2] = Int64GetDatum((int64) pg_atomic_read_u64(&c->reads));
		values[3] = Int64GetDatum((int64) pg_atomic_read_u64(&c->writes));
		values[4] = Int64GetDatum((int64) pg_atomic_read_u64(&c->read_batches));
		values[5] = Int64GetDatum((int64) pg_atomic_read_u64(&c->write_batches));
		values[6] = Int64GetDatum((int64) pg_atomic_read_u64(&c->bytes_read));
		values[7] = Int64GetDatum((int64) pg_atomic_read_u64(&c->bytes_written));
		values[8] = Float8GetDatum(pg_atomic_read_u64(&c->io_time_us) / 1000.0);
		/* cache and log counters belong to the index, shown on its first row */
		values[9] = Int64GetDatum(t == 0 ? (int64) pg_atomic_read_u64(&idx->sh->cache_hits) : 0);
		values[10] = Int64GetDatum(t == 0 ? (int64) pg_atomic_read_u64(&idx->sh->cache_misses) : 0);
		values[11] = Int64GetDatum(t == 0 ? (int64) pg_atomic_read_u64(&idx->sh->log_bytes) : 0);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	relation_close(rel, AccessShareLock);
	return (Datum) 0;
}

Datum
hybrid_index_reset_stats(PG_FUNCTION_ARGS)
{
	HiIndex    *idx;
	const HiAmOps *am;
	Relation	rel;

	hi_acl_check_owner(PG_GETARG_OID(0));
	rel = open_our_index(PG_GETARG_OID(0), AccessShareLock, &idx, &am);
	hi_stats_reset(idx->sh);
	/* the AM's own counters (efind's flushes, lbgrid's buffers, ...) too */
	if (am->reset_stats)
		am->reset_stats(idx);
	relation_close(rel, AccessShareLock);
	PG_RETURN_VOID();
}

Datum
hybrid_index_inspect(PG_FUNCTION_ARGS)
{
	HiIndex    *idx;
	const HiAmOps *am;
	Relation	rel = open_our_index(PG_GETARG_OID(0), AccessShareLock, &idx, &am);
	char	   *json;

	/* inspection and checks read pages that are not workload */
	idx->maintenance = true;
	json = am->inspect_json(idx);
	idx->maintenance = false;

	relation_close(rel, AccessShareLock);
	PG_RETURN_DATUM(DirectFunctionCall1(jsonb_in, CStringGetDatum(json)));
}

Datum
hybrid_index_check(PG_FUNCTION_ARGS)
{
	HiIndex    *idx;
	const HiAmOps *am;
	Relation	rel;

	hi_acl_check_read(PG_GETARG_OID(0));
	rel = open_our_index(PG_GETARG_OID(0), AccessShareLock, &idx, &am);
	idx->maintenance = true;
	am->check(idx);
	idx->maintenance = false;
	relation_close(rel, AccessShareLock);
	PG_RETURN_BOOL(true);
}

Datum
hybrid_index_checkpoint(PG_FUNCTION_ARGS)
{
	HiIndex    *idx;
	Relation	rel;

	hi_acl_check_owner(PG_GETARG_OID(0));
	rel = open_our_index(PG_GETARG_OID(0), AccessShareLock, &idx, NULL);
	LWLockAcquire(&idx->sh->tree_lock, LW_EXCLUSIVE);
	hi_index_checkpoint(idx);
	LWLockRelease(&idx->sh->tree_lock);
	relation_close(rel, AccessShareLock);
	PG_RETURN_VOID();
}

Datum
hybrid_index_files(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Relation	rel;
	HiIndexShared *sh;
	HiIndex    *idx;
	const char *kinds[] = {"flash", "optane", "map", "log"};
	int			k;

	InitMaterializedSRF(fcinfo, 0);
	rel = open_our_index(PG_GETARG_OID(0), AccessShareLock, &idx, NULL);
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
	return (Datum) 0;
}

Datum
hybrid_index_pages(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Relation	rel;
	HiIndex    *idx;
	HiPageInfo *pages;
	Size		n;
	Size		i;
	const HiAmOps *am;

	hi_acl_check_read(PG_GETARG_OID(0));
	InitMaterializedSRF(fcinfo, 0);
	rel = open_our_index(PG_GETARG_OID(0), AccessShareLock, &idx, &am);
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
	return (Datum) 0;
}
