/*
 * hi_upgrade.c
 *	  hybrid_index_upgrade_files(old_datadir text, link boolean) -> bigint:
 *	  after pg_upgrade, bring every index's files over from the old
 *	  cluster (storage/tier_upgrade.c says why and how).  Superusers only:
 *	  it reads another cluster's data directory.
 */
#include "postgres.h"

#include "access/xlog.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/builtins.h"

#include "core/hi_core.h"
#include "storage/storage.h"

PG_FUNCTION_INFO_V1(hybrid_index_upgrade_files);

Datum
hybrid_index_upgrade_files(PG_FUNCTION_ARGS)
{
	char	   *old_datadir = text_to_cstring(PG_GETARG_TEXT_PP(0));
	bool		link_files = PG_GETARG_BOOL(1);
	int64		skipped;
	int64		n;

	hi_check_preloaded();
	if (!superuser())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for function hybrid_index_upgrade_files"),
				 errdetail("Only superusers may read another cluster's data directory.")));
	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("hybrid_index_upgrade_files cannot run during recovery"),
				 errhint("Run it on the upgraded primary; standbys are made again from it after pg_upgrade.")));
	if (!is_absolute_path(old_datadir))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the old data directory must be an absolute path: \"%s\"", old_datadir)));
	n = hi_files_import_upgraded(old_datadir, link_files, &skipped);
	ereport(NOTICE,
			(errmsg("hybrid_index: %lld files brought over from \"%s\" (%s), %lld already here",
					(long long) n, old_datadir, link_files ? "linked" : "copied",
					(long long) skipped)));
	PG_RETURN_INT64(n);
}
