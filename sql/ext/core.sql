-- hybrid_index 0.3.0: spatial index access methods for flash and hybrid
-- flash/Optane storage.  Requires shared_preload_libraries = 'hybrid_index'.

\echo Use "CREATE EXTENSION hybrid_index" to load this file. \quit

-- The access method ------------------------------------------------------

CREATE FUNCTION hyrtree_handler(internal) RETURNS index_am_handler
	AS 'MODULE_PATHNAME' LANGUAGE C;

CREATE ACCESS METHOD hyrtree TYPE INDEX HANDLER hyrtree_handler;
COMMENT ON ACCESS METHOD hyrtree IS
	'R-tree over a flash tier and a fast (Optane) tier; placement none = R-tree, upper = sHR-tree';

CREATE OPERATOR CLASS hyrtree_geometry_ops
	DEFAULT FOR TYPE geometry USING hyrtree AS
	OPERATOR 3 && (geometry, geometry),
	OPERATOR 6 ~= (geometry, geometry),
	OPERATOR 7 ~ (geometry, geometry),
	OPERATOR 8 @ (geometry, geometry),
	OPERATOR 13 <-> (geometry, geometry) FOR ORDER BY pg_catalog.float_ops;

-- Observability ------------------------------------------------------------

CREATE FUNCTION hybrid_index_version() RETURNS text
	AS 'MODULE_PATHNAME' LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION hybrid_index_version() IS
	'Release of the loaded hybrid_index library; newer than the extension''s version until ALTER EXTENSION hybrid_index UPDATE';

CREATE FUNCTION hybrid_index_stats(index regclass,
	OUT tier text, OUT pages bigint, OUT reads bigint, OUT writes bigint,
	OUT read_batches bigint, OUT write_batches bigint,
	OUT bytes_read bigint, OUT bytes_written bigint, OUT io_time_ms float8,
	OUT cache_hits bigint, OUT cache_misses bigint, OUT log_bytes bigint)
	RETURNS SETOF record
	AS 'MODULE_PATHNAME' LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION hybrid_index_stats(regclass) IS
	'Per-tier page counts and I/O counters of an index; cache and log counters on the flash row';

CREATE FUNCTION hybrid_index_reset_stats(index regclass) RETURNS void
	AS 'MODULE_PATHNAME' LANGUAGE C STRICT VOLATILE;

CREATE FUNCTION hybrid_index_inspect(index regclass) RETURNS jsonb
	AS 'MODULE_PATHNAME' LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION hybrid_index_inspect(regclass) IS
	'Structure of an index: height, nodes per level per tier, fill, files';

CREATE FUNCTION hybrid_index_check(index regclass, heapallindexed boolean DEFAULT false)
	RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION hybrid_index_check(regclass, boolean) IS
	'Verify the invariants of an index (and with heapallindexed, that every row of its table is in it); raises an error naming the first violation';

CREATE FUNCTION hybrid_index_checkpoint(index regclass) RETURNS void
	AS 'MODULE_PATHNAME' LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION hybrid_index_checkpoint(regclass) IS
	'Write every cached change of an index to its tier files and empty its redo log';

CREATE FUNCTION hybrid_index_files(index regclass,
	OUT kind text, OUT path text, OUT bytes bigint)
	RETURNS SETOF record
	AS 'MODULE_PATHNAME' LANGUAGE C STRICT VOLATILE;

CREATE FUNCTION hybrid_index_pages(index regclass,
	OUT pageno bigint, OUT level int, OUT tier text, OUT entries int,
	OUT score float8, OUT box float8[])
	RETURNS SETOF record
	AS 'MODULE_PATHNAME' LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION hybrid_index_pages(regclass) IS
	'Every page of the tree: level, tier (NULL: not written yet), entries, placement score, enclosing box';

CREATE FUNCTION hybrid_index_key_box(geometry) RETURNS float8[]
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION hybrid_index_key_box(geometry) IS
	'The float box {xmin,ymin,xmax,ymax} an index keeps for a geometry (NULL if EMPTY)';

-- Index-aware PostGIS predicates ------------------------------------------
-- PostGIS rewrites ST_Intersects & co. into && only for GiST, SP-GiST and
-- BRIN.  These inlinable SQL functions carry the box test in the open, so
-- the planner can use any index on the column, ours included.

CREATE FUNCTION hi_intersects(geom1 geometry, geom2 geometry) RETURNS boolean
	AS $$ SELECT $1 && $2 AND ST_Intersects($1, $2) $$
	LANGUAGE sql IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION hi_dwithin(geom1 geometry, geom2 geometry, distance float8) RETURNS boolean
	AS $$ SELECT $1 && ST_Expand($2, $3) AND $2 && ST_Expand($1, $3) AND ST_DWithin($1, $2, $3) $$
	LANGUAGE sql IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION hi_contains(geom1 geometry, geom2 geometry) RETURNS boolean
	AS $$ SELECT $1 ~ $2 AND ST_Contains($1, $2) $$
	LANGUAGE sql IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION hi_within(geom1 geometry, geom2 geometry) RETURNS boolean
	AS $$ SELECT $1 @ $2 AND ST_Within($1, $2) $$
	LANGUAGE sql IMMUTABLE PARALLEL SAFE;
