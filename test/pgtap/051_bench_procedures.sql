-- 051_bench_procedures.sql — the procedures of hybrid_index_bench, which
-- commit (so this file cannot run in one rolled-back transaction: it
-- removes what it made at the start and at the end):
--   run()             measures commits, COMMITs every params.commit_every rows
--   run_experiment()  configurations x datasets x reps x workloads, one call
\set ON_ERROR_STOP 1
\set QUIET 1
\pset format unaligned
\pset tuples_only true
\pset pager off
SET client_min_messages = warning;

-- the benchmark is an extension of its own (CREATE EXTENSION hybrid_index
-- alone does not make it); this file commits, so it removes the extension
-- again at the end if it made it
SELECT NOT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'hybrid_index_bench') AS made_bench \gset
CREATE EXTENSION IF NOT EXISTS hybrid_index_bench;

CREATE FUNCTION pg_temp.cleanup() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	DELETE FROM hybrid_index_bench.execution WHERE run_name LIKE 't051%';
	DELETE FROM hybrid_index_bench.run_info WHERE run_name LIKE 't051%';
	DELETE FROM hybrid_index_bench.experiment WHERE name LIKE 't051%';
	PERFORM hybrid_index_bench.drop_dataset(name, true) FROM hybrid_index_bench.dataset
		WHERE name LIKE 't051%';
	DELETE FROM hybrid_index_bench.workload WHERE name LIKE 't051%';
	DELETE FROM hybrid_index_bench.config WHERE name LIKE 't051%';
END $$;
SELECT pg_temp.cleanup();

\o /dev/null
SELECT hybrid_index_bench.load_synthetic('t051_pts', 'uniform', 3000, 51, 'BOX(0 0,10 10)', 0);
SELECT hybrid_index_bench.load_synthetic('t051_ins', 'uniform', 200, 52, 'BOX(0 0,10 10)', 0);
SELECT hybrid_index_bench.make_windows('t051_w', 't051_pts', 50, 0.1, 'data');
SELECT hybrid_index_bench.add_config('t051_hyr', 'hyrtree', '{"placement": "none"}');
SELECT hybrid_index_bench.add_config('t051_gist', 'gist');
SELECT hybrid_index_bench.add_workload('t051_build', 'build');
SELECT hybrid_index_bench.add_workload('t051_range', 'range', 't051_w');
SELECT hybrid_index_bench.add_workload('t051_ins1', 'insert', NULL, 't051_ins', '{"commit_every": 1, "limit": 60}');
SELECT hybrid_index_bench.add_workload('t051_ins25', 'insert', NULL, 't051_ins', '{"commit_every": 25}');
SELECT hybrid_index_bench.add_workload('t051_bins', 'build_insert', NULL, NULL, '{"commit_every": 1000}');
INSERT INTO hybrid_index_bench.experiment (name, configs, datasets, workloads, reps, baseline)
	VALUES ('t051_exp', '{t051_gist,t051_hyr}', '{t051_pts}', '{t051_build,t051_range}', 2, 't051_gist');
\o

SELECT plan(14);

CALL hybrid_index_bench.run('t051_run', 't051_hyr', 't051_pts', 't051_ins1') \gset hyr1_
CALL hybrid_index_bench.run('t051_run', 't051_gist', 't051_pts', 't051_ins1') \gset gist1_
CALL hybrid_index_bench.run('t051_run', 't051_hyr', 't051_pts', 't051_ins25') \gset hyr25_
CALL hybrid_index_bench.run('t051_run', 't051_hyr', 't051_pts', 't051_bins') \gset bins_

SELECT results_eq(format($$SELECT config, operations, table_rows, includes_commit, cardinality_ok
						   FROM (SELECT *, latency_p50_ms > 0 AND latency_max_ms >= latency_p50_ms AS cardinality_ok
								 FROM hybrid_index_bench.execution WHERE id IN (%s, %s)) e ORDER BY config$$,
						 :gist1_p_execution, :hyr1_p_execution),
				  $$VALUES ('t051_gist', 60::bigint, 3060::bigint, true, true),
						   ('t051_hyr', 60::bigint, 3060::bigint, true, true)$$,
				  'run(): 60 single-row transactions recorded, commits measured');
SELECT ok((SELECT log_bytes > 0 AND wall_ms > 0 FROM hybrid_index_bench.execution WHERE id = :hyr1_p_execution),
		  'hyrtree: its redo log was written');
SELECT is((SELECT count(*) FROM hybrid_index_bench_data.w_t051_pts__t051_gist WHERE id > 1000000000000),
		  60::bigint, 'the inserted rows are committed');
SELECT results_eq(format('SELECT operations, table_rows, table_state FROM hybrid_index_bench.execution WHERE id = %s',
						 :hyr25_p_execution),
				  $$VALUES (200::bigint, 3200::bigint, 'base+t051_ins')$$,
				  'commit_every 25: every source row inserted, in 8 transactions');
SELECT results_eq(format('SELECT operations, table_rows, table_state FROM hybrid_index_bench.execution WHERE id = %s',
						 :bins_p_execution),
				  $$VALUES (3000::bigint, 3000::bigint, 'base')$$,
				  'build_insert in transactions of 1000 rows');
SELECT ok(hybrid_index_check('hybrid_index_bench_data.w_t051_pts__t051_hyr_idx'), 'and the index is sound');
SELECT throws_ok($$CALL hybrid_index_bench.run('t051_run', 't051_gist', 't051_pts', 't051_ins1')$$, '2D000', NULL,
				 'run() cannot commit inside a transaction block');
SELECT is((SELECT state FROM hybrid_index_bench.instance WHERE config = 't051_gist' AND dataset = 't051_pts'),
		  'base+t051_ins', 'a failed run leaves the state as it was');

CALL hybrid_index_bench.run_experiment('t051_exp', 't051_exp_run') \gset exp_
SELECT is(:exp_p_executions, 8, 'run_experiment: 2 configurations x 2 reps x 2 workloads');
SELECT is(:'exp_p_run_name'::text, 't051_exp_run', 'under the given run name');
SELECT is((SELECT preset FROM hybrid_index_bench.run_info WHERE run_name = 't051_exp_run'), 't051_exp',
		  'run_info names the experiment');
SELECT results_eq($$SELECT config, workload, runs, answers_agree FROM hybrid_index_bench.report('t051_exp_run', 't051_gist')
					ORDER BY config, workload$$,
				  $$VALUES ('t051_gist', 't051_build', 2, NULL::boolean), ('t051_gist', 't051_range', 2, true),
						   ('t051_hyr', 't051_build', 2, NULL), ('t051_hyr', 't051_range', 2, true)$$,
				  'report: two runs per configuration and workload, same answers');
SELECT is((SELECT ratio FROM hybrid_index_bench.report('t051_exp_run', 't051_gist')
		   WHERE config = 't051_gist' AND workload = 't051_range'), 1::float8, 'the baseline''s ratio is 1');
SELECT is((SELECT array_agg(rep ORDER BY started_at) FROM hybrid_index_bench.execution
		   WHERE run_name = 't051_exp_run' AND config = 't051_hyr' AND workload = 't051_range'),
		  ARRAY[1, 2], 'reps are numbered');

SELECT * FROM finish();
\o /dev/null
SELECT pg_temp.cleanup();
\if :made_bench
DROP EXTENSION hybrid_index_bench;
DO $$
BEGIN
	IF to_regnamespace('hybrid_index_bench_data') IS NOT NULL AND NOT EXISTS
		(SELECT 1 FROM pg_class WHERE relnamespace = to_regnamespace('hybrid_index_bench_data')) THEN
		DROP SCHEMA hybrid_index_bench_data;
	END IF;
END $$;
\endif
