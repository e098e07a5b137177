-- hybrid_index 0.1.0 -> 0.2.0 (CHANGELOG.md).  The index file format did
-- not change: indexes built by 0.1.0 are read as they are.

\echo Use "ALTER EXTENSION hybrid_index UPDATE TO '0.2.0'" to load this file. \quit

CREATE FUNCTION hybrid_index_version() RETURNS text
	AS 'MODULE_PATHNAME' LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION hybrid_index_version() IS
	'Release of the loaded hybrid_index library; newer than the extension''s version until ALTER EXTENSION hybrid_index UPDATE';
