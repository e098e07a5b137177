--
-- hyrtree_functions: the SQL-level interface — signatures, statistics,
-- inspection, files, checkpoints and GUCs. Structure and invariants are
-- asserted, never timings or cache behaviour.
--
SELECT p.oid::regprocedure AS function, pg_get_function_arguments(p.oid) AS arguments,
       pg_get_function_result(p.oid) AS result
FROM pg_proc p JOIN pg_depend d ON d.objid = p.oid AND d.classid = 'pg_proc'::regclass
JOIN pg_extension e ON e.oid = d.refobjid AND d.refclassid = 'pg_extension'::regclass
WHERE e.extname = 'hybrid_index'
  AND p.proname IN ('hybrid_index_stats', 'hybrid_index_reset_stats', 'hybrid_index_inspect', 'hybrid_index_check',
                    'hybrid_index_checkpoint', 'hybrid_index_files', 'hybrid_index_key_box')
ORDER BY p.proname;

SELECT amname, amtype FROM pg_am WHERE amname = 'hyrtree';
-- the loaded library's release is the installed extension's (a newer
-- library is the sign of a pending ALTER EXTENSION hybrid_index UPDATE)
SELECT hybrid_index_version() = extversion AS library_matches_extension,
       hybrid_index_version() ~ '^[0-9]+\.[0-9]+\.[0-9]+$' AS version_is_semver
FROM pg_extension WHERE extname = 'hybrid_index';
SELECT name, context, vartype, unit FROM pg_settings
WHERE name IN ('hybrid_index.cache_size', 'hybrid_index.max_page_size', 'hybrid_index.max_indexes',
               'hybrid_index.io_method', 'hybrid_index.io_depth', 'hybrid_index.checkpoint_log_size',
               'hybrid_index.direct_io')
ORDER BY name;
-- direct I/O is off unless asked for: the OS page cache sits below ours,
-- as it does below shared buffers
SELECT boot_val, reset_val FROM pg_settings WHERE name = 'hybrid_index.direct_io';

SELECT setseed(0.31);
CREATE TABLE fn (id bigint, geom geometry);
INSERT INTO fn
  SELECT i, ST_MakePoint(random() * 100, random() * 100) FROM generate_series(1, 30000) i;
INSERT INTO fn VALUES (30001, NULL), (30002, 'POINT EMPTY');
CREATE INDEX fn_idx ON fn USING hyrtree (geom) WITH (placement = 'none');
CREATE INDEX fn_btree ON fn (id);

-- hybrid_index_inspect
SELECT array_agg(k ORDER BY k) AS required_keys
FROM jsonb_object_keys(hybrid_index_inspect('fn_idx')) k
WHERE k IN ('height', 'entries', 'null_entries', 'page_size', 'placement', 'levels', 'files');
SELECT (j->>'height')::int >= 2 AS height_ok,
       (j->>'entries')::bigint AS entries,
       (j->>'null_entries')::bigint AS null_entries,
       (j->>'page_size')::int AS page_size,
       j->>'placement' AS placement,
       jsonb_typeof(j->'levels') AS levels_type,
       jsonb_array_length(j->'levels') = (j->>'height')::int AS one_level_per_height
FROM hybrid_index_inspect('fn_idx') j;
SELECT bool_and(l ?& ARRAY['level', 'nodes', 'flash', 'optane', 'fill']) AS level_keys,
       bool_and((l->>'fill')::float8 <= 1) AS fill_at_most_1,
       bool_and((l->>'nodes')::int >= 1) AS nodes_positive,
       bool_and((l->>'nodes')::int = (l->>'flash')::int + (l->>'optane')::int) AS tiers_add_up,
       bool_and((l->>'optane')::int = 0) AS nothing_on_optane,
       bool_and((l->>'fill')::float8 > 0) AS fill_positive,
       count(*) FILTER (WHERE (l->>'nodes')::int = 1) >= 1 AS has_root_level,
       sum((l->>'nodes')::int) <= (SELECT pages FROM hybrid_index_stats('fn_idx') WHERE tier = 'flash')
         AS nodes_fit_in_pages
FROM jsonb_array_elements(hybrid_index_inspect('fn_idx')->'levels') l;
-- leaves are level 0, the root level height - 1; entries of a level are the
-- nodes of the level below, the leaves hold every box
SELECT array_agg((l->>'level')::int ORDER BY (l->>'level')::int)
         = array(SELECT generate_series(0, (hybrid_index_inspect('fn_idx')->>'height')::int - 1)) AS levels_numbered,
       bool_and((l->>'nodes')::int = 1) FILTER (WHERE (l->>'level')::int = (hybrid_index_inspect('fn_idx')->>'height')::int - 1) AS single_root,
       bool_and((l->>'entries')::bigint = 30000) FILTER (WHERE (l->>'level')::int = 0) AS leaves_hold_all
FROM jsonb_array_elements(hybrid_index_inspect('fn_idx')->'levels') l;
SELECT bool_and((up.l->>'entries')::int = (down.l->>'nodes')::int) AS entries_are_child_nodes
FROM jsonb_array_elements(hybrid_index_inspect('fn_idx')->'levels') up(l)
JOIN jsonb_array_elements(hybrid_index_inspect('fn_idx')->'levels') down(l)
  ON (down.l->>'level')::int = (up.l->>'level')::int - 1;
-- each level has fewer nodes than the one below it
SELECT bool_and(nodes < lower_nodes) AS levels_shrink
FROM (SELECT (l->>'nodes')::int AS nodes,
             lag((l->>'nodes')::int) OVER (ORDER BY (l->>'nodes')::int DESC) AS lower_nodes
      FROM jsonb_array_elements(hybrid_index_inspect('fn_idx')->'levels') l) s
WHERE lower_nodes IS NOT NULL;

-- hybrid_index_stats: one row per tier
SELECT array_agg(tier ORDER BY tier) <@ ARRAY['flash', 'optane'] AS known_tiers,
       count(*) FILTER (WHERE tier = 'flash') AS flash_rows,
       count(DISTINCT tier) = count(*) AS one_row_per_tier
FROM hybrid_index_stats('fn_idx');
SELECT tier, pages > 0 AS has_pages,
       reads >= 0 AND writes >= 0 AND read_batches >= 0 AND write_batches >= 0
         AND bytes_read >= 0 AND bytes_written >= 0 AND io_time_ms >= 0
         AND cache_hits >= 0 AND cache_misses >= 0 AND log_bytes >= 0 AS counters_nonnegative,
       read_batches <= reads AND write_batches <= writes AS batches_le_ios
FROM hybrid_index_stats('fn_idx') WHERE tier = 'flash';
SELECT coalesce(sum(pages), 0) = 0 AS optane_unused
FROM hybrid_index_stats('fn_idx') WHERE tier = 'optane';

-- reset, then a query: every page access is a hit or a miss
SELECT hybrid_index_reset_stats('fn_idx');
SELECT sum(reads) AS reads, sum(writes) AS writes, sum(cache_hits) AS hits,
       sum(cache_misses) AS misses, sum(read_batches) AS read_batches
FROM hybrid_index_stats('fn_idx');
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT count(*) AS in_window FROM fn WHERE geom && ST_MakeEnvelope(10, 10, 30, 30);
RESET enable_seqscan;
RESET enable_bitmapscan;
SELECT sum(cache_hits + cache_misses) > 0 AS pages_accessed,
       bool_and(bytes_read = 0 OR reads > 0) AS bytes_need_reads
FROM hybrid_index_stats('fn_idx');
-- inserts write (eventually) and are counted
INSERT INTO fn
  SELECT 40000 + i, ST_MakePoint(random() * 100, random() * 100) FROM generate_series(1, 5000) i;
SELECT hybrid_index_checkpoint('fn_idx');
SELECT sum(writes) > 0 AS writes_counted, sum(bytes_written) >= sum(writes) AS bytes_written_ok
FROM hybrid_index_stats('fn_idx');

-- hybrid_index_files: absolute paths of hyb_<flash tablespace oid>_<relfilenode>.* in
-- the database directory; sizes match the files on disk. (Columns are
-- renamed positionally so that only the signature test above depends on
-- their names.)  The fast tier's file is made by its first page: none here,
-- so it is listed without a size.
SELECT tier, bytes IS NOT NULL AS exists, bytes > 0 AS nonempty
FROM hybrid_index_files('fn_idx') AS f(tier, path, bytes) ORDER BY tier;
SELECT count(*) FILTER (WHERE tier = 'flash') = 1 AS one_flash_file,
       coalesce(sum(bytes) FILTER (WHERE tier = 'optane'), 0) = 0 AS optane_empty,
       bool_and(hit.file_dir_ok(path, NULL)) AS in_database_dir,
       bool_and(hit.file_name_ok(path, 'fn_idx')) AS named_ok,
       count(DISTINCT path) = count(*) AS distinct_paths,
       bool_and(path LIKE '/%') AS absolute
FROM hybrid_index_files('fn_idx') AS f(tier, path, bytes) WHERE bytes IS NOT NULL;
SELECT bool_and((pg_stat_file(path)).size = bytes) AS sizes_match_disk
FROM hybrid_index_files('fn_idx') AS f(tier, path, bytes) WHERE bytes IS NOT NULL;

-- hybrid_index_checkpoint keeps the index intact
SELECT hybrid_index_checkpoint('fn_idx');
SELECT hybrid_index_check('fn_idx');
SELECT d.n, d.index_same, d.bitmap_same
FROM hit.diff('SELECT id FROM fn WHERE geom && ST_MakeEnvelope(20, 20, 45, 60)', 'fn_idx') d;

-- hybrid_index_key_box
SELECT hybrid_index_key_box(ST_MakeEnvelope(1, 2, 3, 4)) AS key_box;

-- the functions refuse indexes that are not hyrtree indexes
SELECT * FROM hybrid_index_stats('fn_btree');
SELECT hybrid_index_inspect('fn_btree');
SELECT hybrid_index_check('fn');

-- GUCs
SHOW hybrid_index.io_method;
SET hybrid_index.io_method = sync;
SELECT d.n, d.index_same, d.bitmap_same
FROM hit.diff('SELECT id FROM fn WHERE geom && ST_MakeEnvelope(5, 5, 25, 15)', 'fn_idx') d;
SELECT hybrid_index_check('fn_idx');
SET hybrid_index.io_method = io_uring;
SELECT d.n, d.index_same, d.bitmap_same
FROM hit.diff('SELECT id FROM fn WHERE geom && ST_MakeEnvelope(5, 5, 25, 15)', 'fn_idx') d;
SET hybrid_index.io_method = 'posix_aio';
RESET hybrid_index.io_method;
SET hybrid_index.io_depth = 1;
SELECT d.n, d.index_same, d.bitmap_same
FROM hit.diff('SELECT id FROM fn WHERE geom && ST_MakeEnvelope(50, 50, 90, 99)', 'fn_idx') d;
SET hybrid_index.io_depth = 1024;
SELECT d.n, d.index_same, d.bitmap_same
FROM hit.diff('SELECT id FROM fn WHERE geom && ST_MakeEnvelope(50, 50, 90, 99)', 'fn_idx') d;
SET hybrid_index.io_depth = 0;
SET hybrid_index.io_depth = 1025;
RESET hybrid_index.io_depth;
SET hybrid_index.cache_size = 1;
SET hybrid_index.max_page_size = 4096;
SET hybrid_index.max_indexes = 1;

DROP TABLE fn;

-- The benchmark is an extension of its own: CREATE EXTENSION hybrid_index
-- (pg_regress ran it for this database) made no benchmark schema, table or
-- function; CREATE EXTENSION hybrid_index_bench makes them, with the
-- functions of hybrid_index it calls, and DROP EXTENSION removes them.
SELECT count(*) AS bench_schemas FROM pg_namespace WHERE nspname LIKE 'hybrid\_index\_bench%';
SELECT count(*) AS bench_functions FROM pg_proc WHERE proname LIKE '%bench%'
  AND pronamespace IN (SELECT extnamespace FROM pg_extension WHERE extname = 'hybrid_index');
SELECT count(*) AS tables_of_hybrid_index
FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid AND d.refclassid = 'pg_extension'::regclass
WHERE e.extname = 'hybrid_index' AND d.classid = 'pg_class'::regclass;
SELECT extname FROM pg_extension WHERE extname LIKE 'hybrid_index%' ORDER BY 1;
CREATE EXTENSION hybrid_index_bench;
SELECT e.extname, e.extversion, r.extname AS requires
FROM pg_extension e, pg_extension r
WHERE e.extname = 'hybrid_index_bench' AND r.extname = 'hybrid_index'
  AND EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_extension'::regclass AND d.objid = e.oid
              AND d.refclassid = 'pg_extension'::regclass AND d.refobjid = r.oid);
SELECT count(*) AS bench_tables FROM pg_tables WHERE schemaname = 'hybrid_index_bench';
SELECT hybrid_index_bench.is_hybrid_am('hyrtree') AS hyrtree_is_ours,
       hybrid_index_bench.is_hybrid_am('gist') AS gist_is_ours,
       hybrid_index_bench.extension_version() = (SELECT extversion FROM pg_extension
                                                 WHERE extname = 'hybrid_index') AS version_ok;
CREATE TABLE fn_bench (id bigint, geom geometry);
INSERT INTO fn_bench SELECT i, ST_MakePoint(i % 100, i / 100) FROM generate_series(0, 9999) i;
CREATE INDEX fn_bench_idx ON fn_bench USING hyrtree (geom);
-- the benchmark's own declarations of hybrid_index's C functions
SELECT hybrid_index_bench._probe('fn_bench_idx', ST_MakeEnvelope(10, 10, 19.5, 19.5), '&&') AS probe,
       hybrid_index_bench._probe_knn('fn_bench_idx', ST_MakePoint(50, 50), 7) AS probe_knn,
       (SELECT count(*) FROM hybrid_index_bench._stats('fn_bench_idx')) AS stats_rows,
       (SELECT count(*) FROM hybrid_index_bench._files('fn_bench_idx')) AS files_rows,
       (hybrid_index_bench._inspect('fn_bench_idx')->>'entries')::bigint AS entries;
SELECT hybrid_index_bench._checkpoint('fn_bench_idx');
DROP TABLE fn_bench;
\set VERBOSITY terse
DROP EXTENSION hybrid_index;
\set VERBOSITY default
DROP EXTENSION hybrid_index_bench;
SELECT count(*) AS bench_schemas FROM pg_namespace WHERE nspname = 'hybrid_index_bench';
