/*
 * hi_compat.c
 *	  One small function per difference between PostgreSQL major versions
 *	  that is more than a spelling (hi_compat.h lists them all).
 */
#include "postgres.h"

#include "access/tableam.h"
#include "catalog/index.h"
#include "catalog/pg_class.h"
#include "catalog/pg_tablespace.h"
#include "commands/vacuum.h"
#include "common/relpath.h"
#include "miscadmin.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/acl.h"
#include "utils/memutils.h"
#if PG_VERSION_NUM >= 160000
#include "utils/relfilenumbermap.h"
#else
#include "utils/relfilenodemap.h"
#endif

#include "compat/hi_compat.h"

Oid
hi_relid_by_filenumber(Oid reltablespace, Oid relnumber)
{
#if PG_VERSION_NUM >= 160000
	return RelidByRelfilenumber(reltablespace, (RelFileNumber) relnumber);
#else
	return RelidByRelfilenode(reltablespace, relnumber);
#endif
}

char *
hi_relpath_main(Oid spcoid, Oid dboid, Oid relnumber)
{
#if PG_VERSION_NUM >= 180000
	RelPathStr	p = GetRelationPath(dboid, spcoid, (RelFileNumber) relnumber,
									INVALID_PROC_NUMBER, MAIN_FORKNUM);

	return pstrdup(p.str);
#elif PG_VERSION_NUM >= 170000
	return GetRelationPath(dboid, spcoid, (RelFileNumber) relnumber,
						   INVALID_PROC_NUMBER, MAIN_FORKNUM);
#else
	return GetRelationPath(dboid, spcoid, relnumber, InvalidBackendId, MAIN_FORKNUM);
#endif
}

bool
hi_class_ownercheck(Oid relid, Oid roleid)
{
#if PG_VERSION_NUM >= 160000
	return object_ownercheck(RelationRelationId, relid, roleid);
#else
	return pg_class_ownercheck(relid, roleid);
#endif
}

AclResult
hi_tablespace_aclcheck(Oid spcoid, Oid roleid, AclMode mode)
{
#if PG_VERSION_NUM >= 160000
	return object_aclcheck(TableSpaceRelationId, spcoid, roleid, mode);
#else
	return pg_tablespace_aclcheck(spcoid, roleid, mode);
#endif
}

IndexScanDesc
hi_index_beginscan(Relation heap, Relation index, Snapshot snapshot,
				   int nkeys, int norderbys)
{
#if PG_VERSION_NUM >= 190000
	return index_beginscan(heap, index, snapshot, NULL, nkeys, norderbys, SO_NONE);
#elif PG_VERSION_NUM >= 180000
	return index_beginscan(heap, index, snapshot, NULL, nkeys, norderbys);
#else
	return index_beginscan(heap, index, snapshot, nkeys, norderbys);
#endif
}

IndexScanDesc
hi_index_beginscan_bitmap(Relation index, Snapshot snapshot, int nkeys)
{
#if PG_VERSION_NUM >= 180000
	return index_beginscan_bitmap(index, snapshot, NULL, nkeys);
#else
	return index_beginscan_bitmap(index, snapshot, nkeys);
#endif
}

TableScanDesc
hi_table_beginscan_parallel(Relation heap, ParallelTableScanDesc pscan)
{
#if PG_VERSION_NUM >= 190000
	return table_beginscan_parallel(heap, pscan, SO_NONE);
#else
	return table_beginscan_parallel(heap, pscan);
#endif
}

bool
hi_tbm_count_exact(TIDBitmap *tbm, int64 *ntids)
{
	bool		exact = true;
	int64		n = 0;
#if PG_VERSION_NUM >= 180000
	TBMIterator it = tbm_begin_iterate(tbm, NULL, InvalidDsaPointer);
	TBMIterateResult r;
	OffsetNumber offsets[TBM_MAX_TUPLES_PER_PAGE];

	while (tbm_iterate(&it, &r))
	{
		int			k;

		if (r.lossy)
		{
			exact = false;
			break;
		}
		k = tbm_extract_page_tuple(&r, offsets, TBM_MAX_TUPLES_PER_PAGE);
		n += k;
	}
	tbm_end_iterate(&it);
#else
	TBMIterator *it = tbm_begin_iterate(tbm);
	TBMIterateResult *r;

	while ((r = tbm_iterate(it)) != NULL)
	{
		if (r->ntuples < 0)
		{
			exact = false;
			break;
		}
		n += r->ntuples;
	}
	tbm_end_iterate(it);
#endif
	*ntids = n;
	return exact;
}

void
hi_vacuum_delay_point(void)
{
#if PG_VERSION_NUM >= 180000
	vacuum_delay_point(false);
#else
	vacuum_delay_point();
#endif
}

void
hi_reindex_index(Oid indexoid, char persistence)
{
	ReindexParams params = {0};

#if PG_VERSION_NUM >= 170000
	reindex_index(NULL, indexoid, false, persistence, &params);
#else
	reindex_index(indexoid, false, persistence, &params);
#endif
}

HTAB *
hi_shmem_init_hash(const char *name, int64 nelems, HASHCTL *info, int flags)
{
#if PG_VERSION_NUM >= 190000
	return ShmemInitHash(name, nelems, info, flags);
#else
	return ShmemInitHash(name, (long) nelems, (long) nelems, info, flags);
#endif
}

int
hi_lwlock_new_tranche(const char *name)
{
#if PG_VERSION_NUM >= 190000
	return LWLockNewTrancheId(name);
#else
	int			id = LWLockNewTrancheId();

	LWLockRegisterTranche(id, name);
	return id;
#endif
}

void
hi_lwlock_name_tranche(int tranche_id, const char *name)
{
#if PG_VERSION_NUM < 190000
	LWLockRegisterTranche(tranche_id, name);
#endif
}

Datum
hi_am_handler_result(IndexAmRoutine **kept, IndexAmRoutine *(*make) (void))
{
#if PG_VERSION_NUM >= 190000
	if (*kept == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

		*kept = make();
		MemoryContextSwitchTo(old);
	}
	return PointerGetDatum(*kept);
#else
	(void) kept;
	return PointerGetDatum(make());
#endif
}
