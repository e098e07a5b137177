-- Benchmarks from SQL: reports -------------------------------------------------

-- Per-tier I/O of the executions side by side with the names of everything
CREATE VIEW hybrid_index_bench.execution_summary AS
SELECT e.id, e.run_name, e.dataset, e.workload, w.kind, e.config, e.access_method, e.mode, e.rep,
	   e.wall_ms, e.cpu_ms, e.operations,
	   e.wall_ms / nullif(e.operations, 0) AS ms_per_op,
	   e.rows_returned, e.flash_reads, e.optane_reads, e.flash_writes, e.optane_writes,
	   e.cache_hits, e.cache_misses, e.idx_blks_read, e.idx_blks_hit,
	   e.migrations_up, e.migrations_down, e.index_bytes, e.emulate_devices, e.plan_uses_index,
	   e.started_at
FROM hybrid_index_bench.execution e
JOIN hybrid_index_bench.workload w ON w.name = e.workload;

-- Statistics per (dataset, workload, mode, configuration) of a run:
-- median, mean, standard deviation, min and max of a numeric column of
-- execution (default wall_ms), and the ratio of the median to the median of
-- the baseline configuration on the same dataset, workload and mode.
-- answers_agree: every configuration's queries returned the same rows
-- (count and id sum; count only for kNN, where ties may differ) on
-- tables of the same size.
CREATE FUNCTION hybrid_index_bench.report(p_run_name text, p_baseline text DEFAULT NULL,
	p_metric name DEFAULT 'wall_ms')
RETURNS TABLE (dataset text, workload text, kind text, mode text, config text, runs int,
			   median float8, avg float8, stddev float8, min float8, max float8,
			   ratio float8, operations bigint, median_ms_per_op float8, median_cpu_ms float8,
			   flash_reads float8, optane_reads float8, flash_writes float8, optane_writes float8,
			   cache_hits float8, cache_misses float8, idx_blks_read float8,
			   median_rows float8, answers_agree boolean)
LANGUAGE plpgsql STABLE AS $$
BEGIN
	IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_attribute a
				   WHERE a.attrelid = 'hybrid_index_bench.execution'::regclass
					 AND a.attname = p_metric AND a.attnum > 0 AND NOT a.attisdropped
					 AND a.atttypid IN ('int4'::regtype, 'int8'::regtype, 'float8'::regtype,
										'numeric'::regtype)) THEN
		RAISE EXCEPTION '"%" is not a numeric column of hybrid_index_bench.execution', p_metric;
	END IF;
	RETURN QUERY
	WITH e AS (
		SELECT x.*, w.kind AS wkind, (to_jsonb(x)->>p_metric)::float8 AS m
		FROM hybrid_index_bench.execution x
		JOIN hybrid_index_bench.workload w ON w.name = x.workload
		WHERE x.run_name = p_run_name),
	s AS (
		SELECT e.dataset, e.workload, min(e.wkind) AS kind, e.mode, e.config, count(*)::int AS runs,
			   percentile_cont(0.5) WITHIN GROUP (ORDER BY e.m) AS median,
			   avg(e.m) AS avg, stddev_samp(e.m) AS stddev, min(e.m) AS min, max(e.m) AS max,
			   max(e.operations) AS operations,
			   percentile_cont(0.5) WITHIN GROUP (ORDER BY e.wall_ms / nullif(e.operations, 0)) AS ms_per_op,
			   percentile_cont(0.5) WITHIN GROUP (ORDER BY e.cpu_ms) AS cpu_ms,
			   percentile_cont(0.5) WITHIN GROUP (ORDER BY e.flash_reads) AS flash_reads,
			   percentile_cont(0.5) WITHIN GROUP (ORDER BY e.optane_reads) AS optane_reads,
			   percentile_cont(0.5) WITHIN GROUP (ORDER BY e.flash_writes) AS flash_writes,
			   percentile_cont(0.5) WITHIN GROUP (ORDER BY e.optane_writes) AS optane_writes,
			   percentile_cont(0.5) WITHIN GROUP (ORDER BY e.cache_hits) AS cache_hits,
			   percentile_cont(0.5) WITHIN GROUP (ORDER BY e.cache_misses) AS cache_misses,
			   percentile_cont(0.5) WITHIN GROUP (ORDER BY e.idx_blks_read) AS idx_blks_read,
			   percentile_cont(0.5) WITHIN GROUP (ORDER BY e.rows_returned) AS rows
		FROM e GROUP BY e.dataset, e.workload, e.mode, e.config),
	agree AS (
		SELECT e.dataset, e.workload, e.mode,
			   count(DISTINCT (e.table_rows, e.rows_returned,
							   CASE WHEN e.wkind IN ('knn', 'knn_probe') THEN NULL ELSE e.result_checksum END))
				   <= count(DISTINCT e.table_rows) AS ok
		FROM e WHERE e.wkind IN ('range', 'knn', 'point_group', 'mix', 'range_probe', 'knn_probe',
							 'point_probe')
		GROUP BY e.dataset, e.workload, e.mode)
	SELECT s.dataset, s.workload, s.kind, s.mode, s.config, s.runs,
		   s.median, s.avg, s.stddev, s.min, s.max,
		   s.median / nullif(bl.median, 0),
		   s.operations, s.ms_per_op, s.cpu_ms,
		   s.flash_reads, s.optane_reads, s.flash_writes, s.optane_writes,
		   s.cache_hits, s.cache_misses, s.idx_blks_read, s.rows, a.ok
	FROM s
	LEFT JOIN s bl ON bl.config = p_baseline AND bl.dataset = s.dataset
				  AND bl.workload = s.workload AND bl.mode = s.mode
	LEFT JOIN agree a ON a.dataset = s.dataset AND a.workload = s.workload AND a.mode = s.mode
	ORDER BY s.dataset, s.workload, s.mode, s.config;
END $$;
COMMENT ON FUNCTION hybrid_index_bench.report(text, text, name) IS
	'Median/mean/stddev/min/max of a metric per configuration of a run, with ratios to a baseline';
