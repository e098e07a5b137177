-- 052_bench_params.sql — workload parameters the lbgrid-thesis and
-- efind-paper presets use:
--   settings  GUCs set for one run (and restored after it)
--   op        point_group workloads as geom ~= ANY($1) (group point queries)
--   search    mix searches as exact point queries (geom ~= q)
--   keep      mixes run one after the other on the same index, each taking
--             the next unused rows of the insert source
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

SELECT plan(15);

\o /dev/null
SELECT hybrid_index_bench.load_synthetic('t052_pts', 'uniform', 3000, 52, 'BOX(0 0,100 100)', 0);
SELECT hybrid_index_bench.load_synthetic('t052_ins', 'uniform', 400, 53, 'BOX(0 0,100 100)', 0);
SELECT hybrid_index_bench.make_point_groups('t052_g10', 't052_pts', 20, 10, 3);
SELECT hybrid_index_bench.make_knn_points('t052_p', 't052_pts', 100, 1, 'data', 4);
SELECT hybrid_index_bench.make_windows('t052_w', 't052_pts', 30, 0.5, 'data', 5);
SELECT hybrid_index_bench.add_config('t052_lb', 'lbgrid', '{"bucket_capacity": 16}');
SELECT hybrid_index_bench.add_config('t052_gist', 'gist');
SELECT hybrid_index_bench.add_workload('t052_same', 'point_group', 't052_g10', NULL, '{"op": "~="}');
SELECT hybrid_index_bench.add_workload('t052_overlap', 'point_group', 't052_g10');
SELECT hybrid_index_bench.add_workload('t052_badop', 'point_group', 't052_g10', NULL, '{"op": "@"}');
SELECT hybrid_index_bench.add_workload('t052_nobatch', 'range', 't052_w', NULL,
	'{"settings": {"hybrid_index.lbgrid_batch_size": "1"}}');
SELECT hybrid_index_bench.add_workload('t052_range', 'range', 't052_w');
SELECT hybrid_index_bench.add_workload('t052_mix50', 'mix', 't052_p', 't052_ins',
	'{"ops": 100, "insert_ratio": 0.5, "search": "point", "keep": true}');
SELECT hybrid_index_bench.add_workload('t052_mix100', 'mix', 't052_p', 't052_ins',
	'{"ops": 100, "insert_ratio": 1.0, "search": "point", "keep": true}');
SELECT hybrid_index_bench.add_workload('t052_mixbig', 'mix', 't052_p', 't052_ins',
	'{"ops": 300, "insert_ratio": 1.0, "keep": true}');
SELECT hybrid_index_bench.add_workload('t052_mixbad', 'mix', 't052_p', 't052_ins', '{"search": "nearest"}');
\o

-- the rows each group of the query set matches exactly, by a sequential
-- scan, summed over the groups (as the workload sums its queries)
CREATE TEMP TABLE want_same AS
	SELECT count(*) AS n, sum(d.id) AS s
	FROM hybrid_index_bench.query q, hybrid_index_bench_data.ds_t052_pts d
	WHERE q.set_name = 't052_g10' AND EXISTS (SELECT 1 FROM unnest(q.geoms) g WHERE d.geom ~= g);

-- op: ~=
SELECT hybrid_index_bench.run_workload('t052', 't052_lb', 't052_pts', 't052_same') AS lb_same \gset
SELECT hybrid_index_bench.run_workload('t052', 't052_gist', 't052_pts', 't052_same') AS gist_same \gset
SELECT results_eq(format($$SELECT rows_returned, result_checksum FROM hybrid_index_bench.execution
						   WHERE id IN (%s, %s)$$, :lb_same, :gist_same),
				  $$SELECT n, s::numeric FROM want_same UNION ALL SELECT n, s::numeric FROM want_same$$,
				  'op ~=: lbgrid and GiST return the rows a sequential scan matches');
SELECT ok((SELECT plan_uses_index AND plan LIKE '%t052_lb%' FROM hybrid_index_bench.execution WHERE id = :lb_same),
		  'op ~=: the plan uses the lbgrid index');
SELECT ok((SELECT rows_returned >= 20 FROM hybrid_index_bench.execution WHERE id = :lb_same),
		  'op ~=: every group finds its points');
SELECT hybrid_index_bench.run_workload('t052', 't052_lb', 't052_pts', 't052_overlap') AS lb_ovl \gset
SELECT ok((SELECT rows_returned FROM hybrid_index_bench.execution WHERE id = :lb_ovl)
		  = (SELECT n FROM want_same), 'op && (default) on points: the same rows');
SELECT throws_ok($$SELECT hybrid_index_bench.run_workload('t052', 't052_lb', 't052_pts', 't052_badop')$$,
				 'P0001', 'params.op of a point_group workload must be && or ~=, not "@"',
				 'op: anything but && and ~= is refused');

-- settings
SET hybrid_index.lbgrid_batch_size = 0;
SELECT hybrid_index_bench.run_workload('t052', 't052_lb', 't052_pts', 't052_nobatch') AS nb \gset
SELECT hybrid_index_bench.run_workload('t052', 't052_lb', 't052_pts', 't052_range') AS b \gset
SELECT is((SELECT settings->>'hybrid_index.lbgrid_batch_size' FROM hybrid_index_bench.execution WHERE id = :nb),
		  '1', 'settings: set during the run (recorded in the execution row)');
SELECT is((SELECT settings->>'hybrid_index.lbgrid_batch_size' FROM hybrid_index_bench.execution WHERE id = :b),
		  '0', 'settings: a workload without them runs with the session''s value');
SELECT is(current_setting('hybrid_index.lbgrid_batch_size'), '0', 'settings: restored after the run');
SELECT results_eq(format($$SELECT rows_returned, result_checksum FROM hybrid_index_bench.execution WHERE id = %s$$, :nb),
				  format($$SELECT rows_returned, result_checksum FROM hybrid_index_bench.execution WHERE id = %s$$, :b),
				  'unbatched and batched range queries return the same rows');

-- mixes: point searches, kept index, fresh source rows
SELECT hybrid_index_bench.run_workload('t052', 't052_lb', 't052_pts', 't052_mix50') AS m1 \gset
SELECT hybrid_index_bench.run_workload('t052', 't052_lb', 't052_pts', 't052_mix100') AS m2 \gset
SELECT results_eq(format($$SELECT operations, table_rows, table_state FROM hybrid_index_bench.execution
						   WHERE id IN (%s, %s) ORDER BY id$$, :m1, :m2),
				  $$VALUES (100::bigint, 3050::bigint, 'modified'), (100::bigint, 3150::bigint, 'modified')$$,
				  'keep: the second mix adds its inserts to the first one''s');
SELECT ok((SELECT rows_returned >= 50 FROM hybrid_index_bench.execution WHERE id = :m1),
		  'search point: each of the 50 searches finds its data point');
SELECT is((SELECT count(DISTINCT id) FROM hybrid_index_bench_data.w_t052_pts__t052_lb), 3150::bigint,
		  'keep: inserted ids are distinct');
SELECT is((SELECT count(*) FROM hybrid_index_bench_data.w_t052_pts__t052_lb w
		   JOIN hybrid_index_bench_data.ds_t052_ins s ON s.id = w.id - 1000000000000
		   WHERE ST_Equals(s.geom, w.geom) AND s.id <= 150), 150::bigint,
		  'keep: the two mixes inserted source rows 1..50 and 51..150');
SELECT throws_like($$SELECT hybrid_index_bench.run_workload('t052', 't052_lb', 't052_pts', 't052_mixbig')$$,
				   'mix "t052_mixbig" needs 300 rows of "t052_ins" after the 150 used before; it has 250',
				   'keep: a mix that would run out of source rows is refused');
SELECT throws_like($$SELECT hybrid_index_bench.run_workload('t052', 't052_lb', 't052_pts', 't052_mixbad')$$,
				   'params.search of a mix must be range, knn or point%',
				   'search: unknown kinds are refused');

SELECT * FROM finish();
ROLLBACK;
