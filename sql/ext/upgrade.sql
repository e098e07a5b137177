
-- after pg_upgrade: the indexes' files from the old cluster (docs/operations.md, "Upgrading PostgreSQL")
CREATE FUNCTION hybrid_index_upgrade_files(old_datadir text, link boolean DEFAULT false)
	RETURNS bigint
	AS 'MODULE_PATHNAME' LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION hybrid_index_upgrade_files(text, boolean) IS
	'After pg_upgrade from an older major version: copy (link => true: hard-link) every hybrid_index file of the old data directory into this cluster; superusers only';
REVOKE ALL ON FUNCTION hybrid_index_upgrade_files(text, boolean) FROM PUBLIC;
