-- 050_bench.sql — the benchmark schema hybrid_index_bench on tiny data:
-- dataset loaders (synthetic with seeds, CSV files in the formats of
-- tools/fetch-data.sh, jittered real-derived points), query sets (window
-- areas, data-following positions, kNN points, point groups), index DDL of
-- configurations, one execution row per run with plausible counters for
-- hyrtree, GiST, SP-GiST and BRIN, workload state, settings, reports.
-- Runs in one transaction that is rolled back.
\set ON_ERROR_STOP 1
\set QUIET 1
\pset format unaligned
\pset tuples_only true
\pset pager off

BEGIN;
SET client_min_messages = warning;
-- the benchmark is an extension of its own (CREATE EXTENSION hybrid_index
-- alone does not make it); rolled back with the rest
CREATE EXTENSION IF NOT EXISTS hybrid_index_bench;

SELECT plan(95);

-- Datasets -------------------------------------------------------------------

SELECT is(hybrid_index_bench.load_synthetic('t_uni', 'uniform', 2000, 7, 'BOX(10 20,110 70)', 0),
		  2000::bigint, 'load_synthetic returns the number of rows');
SELECT is((SELECT count(*) FROM hybrid_index_bench_data.ds_t_uni), 2000::bigint, 'uniform: 2000 rows');
SELECT is((SELECT count(*) FROM hybrid_index_bench_data.ds_t_uni
		   WHERE ST_X(geom) BETWEEN 10 AND 110 AND ST_Y(geom) BETWEEN 20 AND 70), 2000::bigint,
		  'uniform: every point inside the extent');
SELECT ok((SELECT min(id) = 1 AND max(id) = 2000 AND count(DISTINCT id) = 2000
		   FROM hybrid_index_bench_data.ds_t_uni), 'uniform: ids are 1..n');
SELECT ok((SELECT abs(avg(ST_X(geom)) - 60) < 3 AND abs(avg(ST_Y(geom)) - 45) < 1.5
				  AND abs(stddev(ST_X(geom)) - 100 / sqrt(12)) < 2
		   FROM hybrid_index_bench_data.ds_t_uni), 'uniform: mean and spread of a uniform distribution');
SELECT results_eq($$SELECT kind, n_rows, extent::text, srid, (params->>'seed')::int
					FROM hybrid_index_bench.dataset WHERE name = 't_uni'$$,
				  $$VALUES ('uniform', 2000::bigint, 'BOX(10 20,110 70)', 0, 7)$$,
				  'dataset row: kind, size, declared extent, srid, seed');
CREATE TEMP TABLE snap AS SELECT id, geom FROM hybrid_index_bench_data.ds_t_uni;
SELECT hybrid_index_bench.load_synthetic('t_uni', 'uniform', 2000, 7, 'BOX(10 20,110 70)', 0);
SELECT is((SELECT count(*) FROM snap s JOIN hybrid_index_bench_data.ds_t_uni d USING (id)
		   WHERE ST_Equals(s.geom, d.geom)), 2000::bigint, 'same seed: same points');
SELECT hybrid_index_bench.load_synthetic('t_uni2', 'uniform', 2000, 8, 'BOX(10 20,110 70)', 0);
SELECT ok((SELECT count(*) FROM snap s JOIN hybrid_index_bench_data.ds_t_uni2 d USING (id)
		   WHERE ST_Equals(s.geom, d.geom)) < 10, 'another seed: other points');

SELECT hybrid_index_bench.load_synthetic('t_gau', 'gaussian', 4000, 3, 'BOX(0 0,100 100)', 0,
										 '{"sigma": 0.05}');
SELECT ok((SELECT abs(avg(ST_X(geom)) - 50) < 0.5 AND abs(avg(ST_Y(geom)) - 50) < 0.5
				  AND abs(stddev(ST_X(geom)) - 5) < 0.4 AND abs(stddev(ST_Y(geom)) - 5) < 0.4
		   FROM hybrid_index_bench_data.ds_t_gau), 'gaussian: centred, sigma = 5 % of the extent');
SELECT is((SELECT count(*) FROM hybrid_index_bench_data.ds_t_gau
		   WHERE ST_X(geom) BETWEEN 0 AND 100 AND ST_Y(geom) BETWEEN 0 AND 100), 4000::bigint,
		  'gaussian: every point inside the extent');

SELECT hybrid_index_bench.load_synthetic('t_clu', 'clustered', 2000, 5, 'BOX(10 20,110 70)', 0,
										 '{"clusters": 4, "sigma": 0.005}');
SELECT ok((SELECT count(DISTINCT (floor(ST_X(geom)), floor(ST_Y(geom)))) FROM hybrid_index_bench_data.ds_t_clu)
		  < (SELECT count(DISTINCT (floor(ST_X(geom)), floor(ST_Y(geom)))) FROM hybrid_index_bench_data.ds_t_uni) / 10,
		  'clustered: the points occupy a small part of the space');
SELECT is((SELECT (params->>'clusters')::int FROM hybrid_index_bench.dataset WHERE name = 't_clu'), 4,
		  'clustered: parameters recorded');

SELECT throws_ok($$SELECT hybrid_index_bench.load_synthetic('t_bad', 'zipf', 10)$$, 'P0001',
				 'unknown synthetic dataset kind "zipf"', 'unknown kinds are refused');
SELECT throws_like($$SELECT hybrid_index_bench.load_synthetic('a b; drop', 'uniform', 10)$$,
				   'invalid dataset name%', 'dataset names are checked');

-- jittered: radius 0 gives points of the source; a radius moves them
SELECT is(hybrid_index_bench.load_jittered('t_jit0', 't_uni', 3000, 11, 0), 3000::bigint,
		  'load_jittered returns the number of rows');
SELECT is((SELECT count(*) FROM hybrid_index_bench_data.ds_t_jit0 j
		   WHERE (ST_X(j.geom), ST_Y(j.geom)) IN (SELECT ST_X(geom), ST_Y(geom) FROM hybrid_index_bench_data.ds_t_uni)),
		  3000::bigint, 'jittered with radius 0: every point is a source point');
SELECT hybrid_index_bench.load_jittered('t_jit', 't_uni', 3000, 11, 0.05);
-- the mean offset of a 2-D normal is 1.2533 sigma; source points are ~0.8 apart
SELECT ok((SELECT max(d) < 0.05 * 6 AND avg(d) BETWEEN 0.055 AND 0.07
		   FROM (SELECT (SELECT j.geom <-> c.geom FROM hybrid_index_bench_data.ds_t_uni c
						 ORDER BY j.geom <-> c.geom LIMIT 1) d
				 FROM hybrid_index_bench_data.ds_t_jit j WHERE j.id <= 300) s),
		  'jittered: points moved by a normal offset of the given sigma');
SELECT is((SELECT extent::text FROM hybrid_index_bench.dataset WHERE name = 't_jit'), 'BOX(10 20,110 70)',
		  'jittered: the extent of the source');

-- CSV files in the formats of tools/fetch-data.sh
COPY (VALUES (3190509, 'Oslo', 'NO', 580000, 10.74609, 59.91273),
			 (2643743, 'London', 'GB', 8961989, -0.12574, 51.50853),
			 (3451190, 'Rio de Janeiro', 'BR', 6023699, -43.18223, -22.90642))
	TO '/tmp/hi_bench_050_cities.csv' WITH (FORMAT csv, HEADER true);
COPY (SELECT 1, 'AAA', 0, 5, 'SRID=4326;POLYGON((0 0,1 0,1 1,0 1,0 0))'
	  UNION ALL SELECT 2, 'AAA', 1, 5, 'SRID=4326;POLYGON((5 5,7 5,7 8,5 8,5 5))')
	TO '/tmp/hi_bench_050_land.csv' WITH (FORMAT csv, HEADER true);
SELECT is(hybrid_index_bench.load_cities('t_cities', '/tmp/hi_bench_050_cities.csv'), 3::bigint,
		  'load_cities reads the cities CSV');
SELECT results_eq($$SELECT id, ST_AsText(geom), ST_SRID(geom) FROM hybrid_index_bench_data.ds_t_cities ORDER BY id$$,
				  $$VALUES (1::bigint, 'POINT(-0.12574 51.50853)', 4326), (2, 'POINT(10.74609 59.91273)', 4326),
						   (3, 'POINT(-43.18223 -22.90642)', 4326)$$,
				  'cities: points at lon/lat, ids in GeoNames id order');
SELECT is(hybrid_index_bench.load_land('t_land', '/tmp/hi_bench_050_land.csv'), 2::bigint,
		  'load_land reads the land polygons CSV');
SELECT is((SELECT sum(ST_Area(geom)) FROM hybrid_index_bench_data.ds_t_land), 7::float8,
		  'land: polygons with their areas');
SELECT is((SELECT extent::text FROM hybrid_index_bench.dataset WHERE name = 't_land'), 'BOX(0 0,7 8)',
		  'land: the extent of the data');

CREATE TEMP TABLE src_tab (k int, g geometry);
INSERT INTO src_tab VALUES (30, 'POINT(3 3)'), (10, 'POINT(1 1)'), (20, 'POINT(2 2)');
SELECT is(hybrid_index_bench.load_from_table('t_tab', 'src_tab', 'g', 'k'), 3::bigint,
		  'load_from_table copies a table');
SELECT is((SELECT array_agg(ST_X(geom) ORDER BY id) FROM hybrid_index_bench_data.ds_t_tab),
		  ARRAY[1, 2, 3]::float8[], 'load_from_table: ids follow the order column');

-- real data when tools/test-all.sh loaded it: real-derived points by jittering
CREATE FUNCTION pg_temp.real_tests() RETURNS SETOF text LANGUAGE plpgsql AS $$
BEGIN
	-- two IFs: the second is planned only when the table exists
	IF to_regclass('public.real_cities') IS NULL THEN
		RETURN NEXT skip('real_cities not loaded (tools/test-all.sh loads it)', 3);
		RETURN;
	END IF;
	IF NOT EXISTS (SELECT 1 FROM public.real_cities) THEN
		RETURN NEXT skip('real_cities is empty', 3);
		RETURN;
	END IF;
	PERFORM hybrid_index_bench.load_from_table('t_real', 'real_cities', 'geom', 'id');
	RETURN NEXT is((SELECT n_rows FROM hybrid_index_bench.dataset WHERE name = 't_real'),
				   (SELECT count(*) FROM real_cities), 'real cities loaded as a dataset');
	PERFORM hybrid_index_bench.load_jittered('t_realjit', 't_real', 50000, 5, 0.05);
	RETURN NEXT ok((SELECT count(*) = 50000 AND ST_XMin(ST_Extent(geom)) >= -180 AND ST_XMax(ST_Extent(geom)) <= 180
						   AND ST_YMin(ST_Extent(geom)) >= -90 AND ST_YMax(ST_Extent(geom)) <= 90
					FROM hybrid_index_bench_data.ds_t_realjit), '50k real-derived points inside the world');
	PERFORM hybrid_index_bench.make_windows('t_realw', 't_realjit', 100, 0.001, 'data');
	RETURN NEXT is((SELECT count(*) FROM hybrid_index_bench.query q WHERE set_name = 't_realw'
					AND EXISTS (SELECT 1 FROM hybrid_index_bench_data.ds_t_realjit d WHERE d.geom && q.geom)),
				   100::bigint, 'windows following the real-derived data all hold points');
END $$;
SELECT * FROM pg_temp.real_tests();

-- Query sets -----------------------------------------------------------------

SELECT is(hybrid_index_bench.make_windows('t_w001', 't_uni', 200, 0.01), 200, 'make_windows returns n');
SELECT is((SELECT count(*) FROM hybrid_index_bench.query q
		   WHERE set_name = 't_w001' AND abs(ST_Area(q.geom) - 0.0001 * 100 * 50) < 1e-9), 200::bigint,
		  '0.01 % windows: area = 0.0001 x the extent''s area');
SELECT is((SELECT count(*) FROM hybrid_index_bench.query q
		   WHERE set_name = 't_w001'
			 AND abs((ST_XMax(q.geom) - ST_XMin(q.geom)) / (ST_YMax(q.geom) - ST_YMin(q.geom)) - 2) < 1e-9),
		  200::bigint, 'windows have the extent''s aspect ratio');
SELECT is((SELECT count(*) FROM hybrid_index_bench.query q
		   WHERE set_name = 't_w001' AND ST_Covers(ST_MakeEnvelope(10, 20, 110, 70, 0), q.geom)),
		  200::bigint, 'windows lie inside the extent');
SELECT hybrid_index_bench.make_windows('t_w0001', 't_uni', 50, 0.001);
SELECT hybrid_index_bench.make_windows('t_w01', 't_uni', 50, 0.1);
SELECT is((SELECT array_agg(DISTINCT round((ST_Area(geom) / 5000 * 100)::numeric, 6)
						 ORDER BY round((ST_Area(geom) / 5000 * 100)::numeric, 6))
		   FROM hybrid_index_bench.query WHERE set_name IN ('t_w0001', 't_w01')),
		  ARRAY[0.001, 0.1]::numeric[], '0.001 % and 0.1 % windows have their areas');
SELECT ok((SELECT abs(avg(ST_X(ST_Centroid(geom))) - 60) < 6 FROM hybrid_index_bench.query
		   WHERE set_name = 't_w001'), 'uniform windows: centres spread over the extent');
-- following the data: every window holds the point it was centred on
SELECT hybrid_index_bench.make_windows('t_wdata', 't_clu', 100, 0.001, 'data');
SELECT hybrid_index_bench.make_windows('t_wuni', 't_clu', 100, 0.001, 'uniform');
SELECT is((SELECT count(*) FROM hybrid_index_bench.query q WHERE set_name = 't_wdata'
		   AND EXISTS (SELECT 1 FROM hybrid_index_bench_data.ds_t_clu c WHERE c.geom && q.geom)),
		  100::bigint, 'data-following windows: every window holds data');
SELECT ok((SELECT count(*) FROM hybrid_index_bench.query q WHERE set_name = 't_wuni'
		   AND EXISTS (SELECT 1 FROM hybrid_index_bench_data.ds_t_clu c WHERE c.geom && q.geom)) < 50,
		  'uniform windows on clustered data: most are empty');
CREATE TEMP TABLE wsnap AS SELECT qid, geom FROM hybrid_index_bench.query WHERE set_name = 't_wdata';
SELECT hybrid_index_bench.make_windows('t_wdata', 't_clu', 100, 0.001, 'data');
SELECT is((SELECT count(*) FROM wsnap s JOIN hybrid_index_bench.query q USING (qid)
		   WHERE q.set_name = 't_wdata' AND ST_Equals(s.geom, q.geom)), 100::bigint,
		  'query sets are reproducible from their seed');
SELECT throws_like($$SELECT hybrid_index_bench.make_windows('t_bad', 't_uni', 10, 0)$$,
				   'window area must be%', 'window areas are checked');
SELECT throws_like($$SELECT hybrid_index_bench.make_windows('t_bad', 't_uni', 10, 1, 'zipf')$$,
				   'unknown distribution%', 'distributions are checked');
SELECT throws_like($$SELECT hybrid_index_bench.make_windows('t_bad', 'nope', 10, 1)$$,
				   'dataset "nope" does not exist', 'unknown datasets are refused');

SELECT is(hybrid_index_bench.make_knn_points('t_knn', 't_uni', 30, 5, 'data'), 30, 'make_knn_points returns n');
SELECT is((SELECT count(*) FROM hybrid_index_bench.query q WHERE set_name = 't_knn'
		   AND EXISTS (SELECT 1 FROM hybrid_index_bench_data.ds_t_uni d WHERE d.geom ~= q.geom)),
		  30::bigint, 'kNN points following the data are data points');
SELECT is((SELECT (params->>'k')::int FROM hybrid_index_bench.query_set WHERE name = 't_knn'), 5, 'k is recorded');
SELECT is(hybrid_index_bench.make_point_groups('t_pg', 't_uni', 12, 10), 12, 'make_point_groups returns n');
SELECT is((SELECT array_agg(DISTINCT cardinality(geoms)) FROM hybrid_index_bench.query WHERE set_name = 't_pg'),
		  ARRAY[10], 'point groups of 10');
SELECT is((SELECT count(*) FROM hybrid_index_bench.query q, unnest(q.geoms) g WHERE set_name = 't_pg'
		   AND EXISTS (SELECT 1 FROM hybrid_index_bench_data.ds_t_uni d WHERE d.geom ~= g)),
		  120::bigint, 'point groups are points of the dataset');

-- Configurations ---------------------------------------------------------------

SELECT hybrid_index_bench.add_config('t_hyr', 'hyrtree', '{"placement": "none", "page_size": 4096}');
SELECT hybrid_index_bench.add_config('t_gist', 'gist');
SELECT hybrid_index_bench.add_config('t_spgist', 'spgist');
SELECT hybrid_index_bench.add_config('t_brin', 'brin', '{"pages_per_range": 4}');
SELECT hybrid_index_bench.add_config('t_emu', 'hyrtree', '{"placement": "upper"}',
									 '{"hybrid_index.io_depth": "7"}', NULL, 'paper');
SELECT is(hybrid_index_bench.index_ddl('t_hyr', 'src_tab', 'i'),
		  'CREATE INDEX i ON src_tab USING hyrtree (geom) WITH (page_size = ''4096'', placement = ''none'')',
		  'index_ddl: reloptions as quoted literals');
SELECT hybrid_index_bench.add_config('t_odd', 'gist', '{"x) WITH (y": "1''"}', '{}', 'pg_default',
									 'off', 'public.gist_geometry_ops_2d');
SELECT is(hybrid_index_bench.index_ddl('t_odd', 'src_tab', 'my idx'),
		  'CREATE INDEX "my idx" ON src_tab USING gist (geom public.gist_geometry_ops_2d) WITH ("x) WITH (y" = ''1'''''') TABLESPACE pg_default',
		  'index_ddl: every name and value is quoted');
SELECT hybrid_index_bench.add_config('t_noam', 'efind_not_yet');
SELECT throws_like($$SELECT hybrid_index_bench.index_ddl('t_noam', 'src_tab', 'i')$$,
				   'index access method "efind_not_yet" does not exist', 'missing access methods are reported');
SELECT ok(hybrid_index_bench.is_hybrid_am('hyrtree') AND NOT hybrid_index_bench.is_hybrid_am('gist'),
		  'is_hybrid_am tells our access methods from PostgreSQL''s');

-- Runs -----------------------------------------------------------------------

SELECT hybrid_index_bench.add_workload('t_build', 'build');
SELECT hybrid_index_bench.add_workload('t_range', 'range', 't_w001');
SELECT hybrid_index_bench.add_workload('t_range_big', 'range', 't_w01', NULL, '{"limit": 20}');
SELECT hybrid_index_bench.add_workload('t_knn', 'knn', 't_knn');
SELECT hybrid_index_bench.add_workload('t_pg', 'point_group', 't_pg');
SELECT hybrid_index_bench.load_synthetic('t_ins', 'uniform', 300, 99, 'BOX(10 20,110 70)', 0);
SELECT hybrid_index_bench.add_workload('t_insert', 'insert', NULL, 't_ins', '{"limit": 250}');
SELECT hybrid_index_bench.add_workload('t_binsert', 'build_insert');
SELECT hybrid_index_bench.add_workload('t_mix', 'mix', 't_w001', 't_ins', '{"ops": 40, "insert_ratio": 0.25}');
SELECT hybrid_index_bench.add_workload('t_insert_c', 'insert', NULL, 't_ins', '{"commit_every": 10}');

CREATE TEMP TABLE ex (config text, workload text, id bigint);
INSERT INTO ex SELECT c, w, hybrid_index_bench.run_workload('t050', c, 't_uni', w)
	FROM unnest(ARRAY['t_hyr', 't_gist', 't_spgist', 't_brin']) WITH ORDINALITY c(c, i),
		 unnest(ARRAY['t_build', 't_range', 't_range_big', 't_knn', 't_pg']) WITH ORDINALITY w(w, j)
	WHERE NOT (c = 't_brin' AND w = 't_knn')
	ORDER BY i, j;
CREATE TEMP VIEW exv AS SELECT e.* FROM hybrid_index_bench.execution e JOIN ex USING (id);

SELECT is((SELECT count(*) FROM exv), 19::bigint, 'one execution row per run');
SELECT results_eq($$SELECT operations, table_rows, access_method::text COLLATE "default", index_name, plan, run_name, rep, mode
					FROM exv WHERE config = 't_hyr' AND workload = 't_build'$$,
				  $$VALUES (1::bigint, 2000::bigint, 'hyrtree', 'w_t_uni__t_hyr_idx', NULL::text, 't050', 1, 'warm')$$,
				  'hyrtree build: the run recorded');
SELECT ok((SELECT wall_ms > 0 AND cpu_ms >= 0 AND flash_writes > 0 AND flash_pages > 0
				  AND index_bytes >= flash_index_bytes AND flash_index_bytes > 0
				  AND optane_reads = 0 AND extension_version = '0.3.0' AND server_version IS NOT NULL
				  AND postgis_version IS NOT NULL AND NOT emulate_devices
				  AND shared_buffers = current_setting('shared_buffers')
				  AND cache_size = current_setting('hybrid_index.cache_size')
				  AND reloptions = '{"placement": "none", "page_size": 4096}'
			FROM exv WHERE config = 't_hyr' AND workload = 't_build'),
		  'hyrtree build: time, CPU, tier writes and pages, sizes, versions, settings');
-- the answers every index must give
CREATE TEMP TABLE truth AS
	SELECT 't_range' AS workload, count(*) AS n, sum(d.id) AS s
	FROM hybrid_index_bench.query q JOIN hybrid_index_bench_data.ds_t_uni d ON d.geom && q.geom
	WHERE q.set_name = 't_w001'
	UNION ALL
	SELECT 't_pg', count(*), sum(d.id)
	FROM hybrid_index_bench.query q, unnest(q.geoms) g, hybrid_index_bench_data.ds_t_uni d
	WHERE q.set_name = 't_pg' AND d.geom && g
	UNION ALL
	SELECT 't_knn', count(*), sum(id)
	FROM hybrid_index_bench.query q,
		 LATERAL (SELECT d.id FROM hybrid_index_bench_data.ds_t_uni d
				  ORDER BY ST_Distance(d.geom, q.geom), d.id LIMIT 5) k
	WHERE q.set_name = 't_knn';
SELECT is((SELECT count(*) FROM exv e JOIN truth t USING (workload)
		   WHERE e.rows_returned = t.n AND e.result_checksum = t.s), 11::bigint,
		  'range, kNN and point-group runs return the sequential scan''s rows (all 4 AMs)');
SELECT is((SELECT array_agg(DISTINCT operations || '/' || rows_returned) FROM exv WHERE workload = 't_range_big'),
		  (SELECT ARRAY['20/' || count(*)] FROM hybrid_index_bench.query q JOIN hybrid_index_bench_data.ds_t_uni d
		   ON d.geom && q.geom WHERE q.set_name = 't_w01' AND q.qid <= 20),
		  'params.limit runs the first queries of a set');
-- PostGIS 3.3's SP-GiST operator class has no kNN ordering: that run is flagged
SELECT is((SELECT array_agg(config || ':' || workload ORDER BY config, workload) FROM exv
		   WHERE workload IN ('t_range', 't_knn', 't_pg') AND NOT plan_uses_index), ARRAY['t_spgist:t_knn'],
		  'query runs record whether their plan used the configuration''s index');
SELECT ok((SELECT plan LIKE '%Index Scan on w_t_uni__t_hyr_idx%' FROM exv
		   WHERE config = 't_hyr' AND workload = 't_knn'), 'kNN: an ordered index scan');
SELECT ok((SELECT operations = 200 AND cache_hits + cache_misses > 0 AND flash_writes = 0
				  AND latency_p50_ms > 0 AND latency_p95_ms >= latency_p50_ms AND latency_max_ms >= latency_p95_ms
				  AND counters_since = 'run' AND inspect->>'am' = 'hyrtree' AND migrations_up = 0
				  AND (notes->>'warmup')::boolean AND settings->>'enable_seqscan' = 'off'
			FROM exv WHERE config = 't_hyr' AND workload = 't_range'),
		  'hyrtree range: cache counters, latencies, inspect, warm-up, forced index');
SELECT ok((SELECT idx_blks_hit + idx_blks_read > 0 AND heap_blks_hit + heap_blks_read > 0
				  AND flash_reads IS NULL AND cache_hits IS NULL AND index_bytes = flash_index_bytes
				  AND index_bytes > 0 AND inspect IS NULL
			FROM exv WHERE config = 't_gist' AND workload = 't_range'),
		  'GiST range: PostgreSQL buffer counters, no tier counters');
SELECT ok((SELECT bool_and(index_bytes > 0) FROM exv WHERE config IN ('t_spgist', 't_brin')),
		  'SP-GiST and BRIN: index sizes');
SELECT is(current_setting('enable_seqscan'), 'on', 'settings of a run are restored');

-- inserts, build by insertion, mixes
SELECT hybrid_index_bench.run_workload('t050i', 't_hyr', 't_uni', 't_insert');
SELECT hybrid_index_bench.run_workload('t050i', 't_gist', 't_uni', 't_insert');
SELECT results_eq($$SELECT config, operations, table_rows, table_state FROM hybrid_index_bench.execution
					WHERE run_name = 't050i' ORDER BY config$$,
				  $$VALUES ('t_gist', 250::bigint, 2250::bigint, 'base+t_ins'),
						   ('t_hyr', 250::bigint, 2250::bigint, 'base+t_ins')$$,
				  'insert: rows of the source added, state recorded');
SELECT ok((SELECT log_bytes > 0 AND cache_hits > 0 AND latency_p50_ms > 0 FROM hybrid_index_bench.execution
		   WHERE run_name = 't050i' AND config = 't_hyr'), 'hyrtree insert: redo log and cache counters');
SELECT is((SELECT count(*) FROM hybrid_index_bench_data.w_t_uni__t_hyr WHERE id > 1000000000000), 250::bigint,
		  'inserted rows carry ids above the dataset''s');
SELECT hybrid_index_bench.add_workload('t_insert2', 'insert', NULL, 't_jit0', '{"limit": 30}');
SELECT hybrid_index_bench.run_workload('t050j', 't_hyr', 't_uni', 't_insert2');
SELECT results_eq($$SELECT table_rows, table_state, notes ? 'setup' FROM hybrid_index_bench.execution WHERE run_name = 't050j'$$,
				  $$VALUES (2280::bigint, 'base+t_ins+t_jit0', false)$$,
				  'inserts of another source go on top');
SELECT is((SELECT count(*) FROM hybrid_index_bench_data.w_t_uni__t_hyr WHERE id > 2000000000000), 30::bigint,
		  'with ids above the first source''s');
SELECT hybrid_index_bench.run_workload('t050i', 't_hyr', 't_uni', 't_insert', 2);
SELECT is((SELECT table_rows FROM hybrid_index_bench.execution WHERE run_name = 't050i' AND rep = 2), 2250::bigint,
		  'a second insert run starts again from the dataset''s rows');
SELECT ok((SELECT notes->'setup'->>'state_before' = 'base+t_ins+t_jit0' FROM hybrid_index_bench.execution
		   WHERE run_name = 't050i' AND rep = 2), 'the reset is noted');
SELECT hybrid_index_bench.run_workload('t050b', 't_hyr', 't_uni', 't_binsert');
SELECT results_eq($$SELECT operations, table_rows, table_state FROM hybrid_index_bench.execution WHERE run_name = 't050b'$$,
				  $$VALUES (2000::bigint, 2000::bigint, 'base')$$, 'build_insert: every row inserted into an empty index');
SELECT ok(hybrid_index_check('hybrid_index_bench_data.w_t_uni__t_hyr_idx'), 'the index built by insertion is sound');
SELECT hybrid_index_bench.run_workload('t050m', 't_gist', 't_uni', 't_mix');
SELECT results_eq($$SELECT operations, table_rows, table_state FROM hybrid_index_bench.execution WHERE run_name = 't050m'$$,
				  $$VALUES (40::bigint, 2010::bigint, 'modified')$$, 'mix: 40 operations, a quarter inserts');
SELECT throws_like($$SELECT hybrid_index_bench.run_workload('x', 't_hyr', 't_uni', 't_insert_c')$$,
				   'workload "t_insert_c" commits during the run', 'commit_every needs the procedure');
SELECT throws_like($$SELECT hybrid_index_bench.run_workload('x', 't_hyr', 't_uni', 'nope')$$,
				   'workload "nope" does not exist', 'unknown workloads are refused');
SELECT throws_like($$SELECT hybrid_index_bench.run_workload('x', 't_hyr', 't_uni', 't_range', 1, 'lukewarm')$$,
				   'mode must be warm or cold%', 'modes are checked');

-- a cold-labelled run does not inspect or warm up before measuring
SELECT hybrid_index_bench.run_workload('t050c', 't_hyr', 't_uni', 't_range', 1, 'cold');
SELECT ok((SELECT NOT notes ? 'warmup' AND counters_since = 'index open' AND mode = 'cold'
		   FROM hybrid_index_bench.execution WHERE run_name = 't050c'), 'cold runs: no warm-up, no inspect before');

SELECT ok(hybrid_index_bench.checkpoint_index('t_hyr', 't_uni') AND hybrid_index_bench.checkpoint_index('t_gist', 't_uni')
		  AND NOT hybrid_index_bench.checkpoint_index('t_brin', 't_clu'),
		  'checkpoint_index: our indexes are checkpointed, others pass, missing ones say so');
SELECT is((SELECT bytes FROM hybrid_index_files('hybrid_index_bench_data.w_t_uni__t_hyr_idx') WHERE kind = 'log'),
		  0::bigint, 'after checkpoint_index the redo log is empty');

-- device profile and GUCs of a configuration
SELECT hybrid_index_bench.run_workload('t050e', 't_emu', 't_uni', 't_range');
SELECT ok((SELECT emulate_devices AND device_profile = 'paper' AND settings->>'hybrid_index.io_depth' = '7'
				  AND settings->>'hybrid_index.flash_read_latency' = '120'
				  AND optane_reads + flash_reads >= 0 AND optane_pages > 0
		   FROM hybrid_index_bench.execution WHERE run_name = 't050e'),
		  'device profile and GUCs are applied during the run and recorded');
SELECT is(current_setting('hybrid_index.emulate_devices') || '/' || current_setting('hybrid_index.io_depth'),
		  'off/64', 'and restored afterwards');

-- server settings that need a restart
SELECT hybrid_index_bench.add_config('t_sb', 'gist', p_server_settings =>
	jsonb_build_object('shared_buffers', (pg_size_bytes(current_setting('shared_buffers')) / 1024)::text || 'kB'));
SELECT is(hybrid_index_bench.server_settings_mismatch('t_sb'), '{}'::jsonb, 'equal sizes in other units match');
SELECT hybrid_index_bench.add_config('t_sb2', 'gist', p_server_settings => '{"shared_buffers": "7GB"}');
SELECT throws_like($$SELECT hybrid_index_bench.run_workload('x', 't_sb2', 't_uni', 't_build')$$,
				   'server settings differ from configuration "t_sb2"', 'runs refuse other server settings');
SELECT hybrid_index_bench.run_workload('t050s', 't_sb2', 't_uni', 't_build', p_strict => false);
SELECT ok((SELECT notes->'settings_mismatch'->'shared_buffers'->>'want' = '7GB'
		   FROM hybrid_index_bench.execution WHERE run_name = 't050s'),
		  'or, not strict, note the difference');

-- instances and datasets
SELECT is(hybrid_index_bench.prepare('t_gist', 't_uni', 'base'), NULL::regclass, 'prepare base: no index');
SELECT is(hybrid_index_bench.build_index('t_gist', 't_uni')::text, 'hybrid_index_bench_data.w_t_uni__t_gist_idx',
		  'build_index returns the index');
SELECT hybrid_index_bench.add_config('t_gist', 'gist', '{"fillfactor": 50}');
SELECT is((SELECT state FROM hybrid_index_bench.instance WHERE config = 't_gist' AND dataset = 't_uni'), 'stale',
		  'changing a configuration makes its indexes stale');
SELECT hybrid_index_bench.build_index('t_gist', 't_uni');
SELECT is((SELECT reloptions FROM pg_class WHERE oid = 'hybrid_index_bench_data.w_t_uni__t_gist_idx'::regclass),
		  ARRAY['fillfactor=50'], 'and the next build uses the new options');
SELECT throws_ok($$SELECT hybrid_index_bench.drop_dataset('t_uni')$$, '23503', NULL,
				 'datasets with executions are kept');
SELECT hybrid_index_bench.drop_dataset('t_uni', true);
SELECT ok(to_regclass('hybrid_index_bench_data.ds_t_uni') IS NULL
		  AND to_regclass('hybrid_index_bench_data.w_t_uni__t_hyr') IS NULL
		  AND NOT EXISTS (SELECT 1 FROM hybrid_index_bench.query_set WHERE dataset = 't_uni'),
		  'drop_dataset(force) removes tables, work tables and query sets');

-- Reports --------------------------------------------------------------------

SELECT hybrid_index_bench.add_workload('t_rep', 'range', 't_wdata');
INSERT INTO hybrid_index_bench.execution (run_name, config, dataset, workload, rep, mode, started_at,
	wall_ms, cpu_ms, operations, rows_returned, result_checksum, table_rows, access_method, flash_reads)
SELECT 'rep', c, 't_clu', 't_rep', r, 'warm', now(), w, w / 2, 10, rows, 5, 100, 'x', r
FROM (VALUES ('t_gist', 1, 10.0, 7), ('t_gist', 2, 20.0, 7), ('t_gist', 3, 30.0, 7),
			 ('t_hyr', 1, 60.0, 7), ('t_hyr', 2, 20.0, 7), ('t_hyr', 3, 40.0, 7),
			 ('t_brin', 1, 5.0, 8)) v(c, r, w, rows);
SELECT results_eq($$SELECT config, runs, median, avg, round(stddev::numeric, 6)::float8, min, max, ratio, median_ms_per_op
					FROM hybrid_index_bench.report('rep', 't_gist') ORDER BY config$$,
				  $$VALUES ('t_brin', 1, 5::float8, 5::float8, NULL::float8, 5::float8, 5::float8, 0.25::float8, 0.5::float8),
						   ('t_gist', 3, 20, 20, 10, 10, 30, 1, 2),
						   ('t_hyr', 3, 40, 40, 20, 20, 60, 2, 4)$$,
				  'report: median, mean, stddev, min, max, ratio to the baseline, per operation');
SELECT is((SELECT median FROM hybrid_index_bench.report('rep', 't_gist', 'cpu_ms') WHERE config = 't_hyr'),
		  20::float8, 'report of another metric');
SELECT is((SELECT array_agg(DISTINCT answers_agree) FROM hybrid_index_bench.report('rep')), ARRAY[false],
		  'answers_agree notices a configuration returning other rows');
DELETE FROM hybrid_index_bench.execution WHERE run_name = 'rep' AND config = 't_brin';
SELECT is((SELECT array_agg(DISTINCT answers_agree) FROM hybrid_index_bench.report('rep')), ARRAY[true],
		  'and agrees when they return the same rows');
SELECT is((SELECT ratio FROM hybrid_index_bench.report('rep') LIMIT 1), NULL::float8, 'no baseline, no ratio');
SELECT throws_like($$SELECT * FROM hybrid_index_bench.report('rep', NULL, 'config')$$,
				   '"config" is not a numeric column%', 'report metrics are checked');

-- /proc samples (the test runs as a superuser)
SELECT ok((SELECT (s->>'utime')::bigint >= 0 AND (s->>'stime')::bigint >= 0 AND (s->>'rchar')::bigint > 0
		   FROM hybrid_index_bench._proc_sample() s), '_proc_sample reads the backend''s CPU ticks and I/O');

SELECT * FROM finish();
ROLLBACK;
