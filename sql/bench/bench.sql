-- hybrid_index_bench 0.1.0: FESTIval-style benchmarks of hybrid_index, an
-- extension of its own (requires hybrid_index) so that production databases
-- get none of it.  Installed by bench/run and the benchmark's tests.

\echo Use "CREATE EXTENSION hybrid_index_bench" to load this file. \quit

-- Benchmarks from SQL (FESTIval-style): the data model ---------------------
--
-- Schema hybrid_index_bench holds configurations and results as relational
-- data; the functions in bench_*.sql load datasets, generate query sets,
-- build indexes and run workloads, one row of `execution` per run.
-- Dataset and work tables live in schema hybrid_index_bench_data, created on
-- first use (it is not part of the extension: DROP EXTENSION keeps the data).
-- Every identifier that reaches dynamic SQL goes through format('%I')/%L, a
-- regclass (whose output is quoted) or EXECUTE ... USING; no function is
-- SECURITY DEFINER: everything runs with the caller's rights.  See
-- bench/README.md.

CREATE SCHEMA hybrid_index_bench;
COMMENT ON SCHEMA hybrid_index_bench IS
	'FESTIval-style benchmarks: datasets, index configurations, workloads, executions';

-- A dataset: a table hybrid_index_bench_data.<table_name>(id bigint, geom)
-- with dense ids 1..n_rows.  extent is the space query windows are drawn
-- from (the declared space for synthetic data, the data's box otherwise).
CREATE TABLE hybrid_index_bench.dataset (
	name text PRIMARY KEY,
	kind text NOT NULL CHECK (kind IN ('uniform', 'gaussian', 'clustered', 'cities',
									   'land', 'jittered', 'table')),
	params jsonb NOT NULL DEFAULT '{}',
	table_name text NOT NULL UNIQUE,
	srid int NOT NULL DEFAULT 0,
	n_rows bigint NOT NULL DEFAULT 0,
	extent box2d,
	load_ms float8,
	created_at timestamptz NOT NULL DEFAULT now()
);

-- Device profiles: hybrid_index.<tier>_* settings applied with emulation on.
CREATE TABLE hybrid_index_bench.device_profile (
	name text PRIMARY KEY,
	emulate boolean NOT NULL,
	settings jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(settings) = 'object'),
	description text,
	builtin boolean NOT NULL DEFAULT false
);
INSERT INTO hybrid_index_bench.device_profile VALUES
	('off', false, '{}', 'no emulation: real devices only', true),
	('paper', true,
	 '{"hybrid_index.flash_read_latency": "120", "hybrid_index.flash_write_latency": "30",
	   "hybrid_index.flash_parallelism": "8", "hybrid_index.optane_read_latency": "7",
	   "hybrid_index.optane_write_latency": "18", "hybrid_index.optane_parallelism": "4"}',
	 'flash SSD and Optane as in Table 1 of the HyR-tree paper', true);

-- An index configuration: any access method by name (ours, gist, spgist,
-- brin, ...).  reloptions go into WITH (...), gucs are SET for the run,
-- server_settings must already hold (they need a restart: bench/run sets
-- them), tablespace is the index's (= the flash tier of our AMs).
CREATE TABLE hybrid_index_bench.config (
	name text PRIMARY KEY CHECK (name ~ '^[A-Za-z0-9_.:-]+$'),
	access_method name NOT NULL,
	opclass text,
	reloptions jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(reloptions) = 'object'),
	gucs jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(gucs) = 'object'),
	server_settings jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(server_settings) = 'object'),
	tablespace name,
	device_profile text NOT NULL DEFAULT 'off'
		REFERENCES hybrid_index_bench.device_profile ON UPDATE CASCADE,
	description text,
	created_at timestamptz NOT NULL DEFAULT now()
);

-- A query set: windows, kNN points or point groups, drawn for a dataset.
CREATE TABLE hybrid_index_bench.query_set (
	name text PRIMARY KEY,
	dataset text NOT NULL REFERENCES hybrid_index_bench.dataset
		ON UPDATE CASCADE ON DELETE CASCADE,
	kind text NOT NULL CHECK (kind IN ('window', 'knn', 'point_group')),
	n int NOT NULL,
	params jsonb NOT NULL DEFAULT '{}',
	created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE hybrid_index_bench.query (
	set_name text NOT NULL REFERENCES hybrid_index_bench.query_set
		ON UPDATE CASCADE ON DELETE CASCADE,
	qid int NOT NULL,
	geom geometry,		-- window or kNN point
	geoms geometry[],	-- point group
	PRIMARY KEY (set_name, qid)
);

-- A workload.  kinds:
--   build         CREATE INDEX on the dataset's rows (bulk build)
--   build_insert  index built by inserting every row into an empty indexed table
--   insert        rows of source_dataset inserted one statement per row
--   range, knn, point_group   the queries of query_set
--   range_probe, knn_probe, point_probe   the same searches on the index
--                 alone (hybrid_index_probe: no heap access, no recheck,
--                 like FESTIval): geom && window, 10-NN (k), geom ~= point
--                 (a knn or window query set's geometries, or every point
--                 of a point_group set); rows = TIDs the index returned
--   mix           params.insert_ratio of params.ops operations are inserts
--                 (from source_dataset), the others queries of query_set
-- params: commit_every (insert kinds: COMMIT after so many rows, 0 = one
-- transaction; needs CALL hybrid_index_bench.run), limit (rows or queries),
-- k (knn), warmup (run the query set once before measuring, default: warm
-- mode), force_index (enable_seqscan off, default true), per_row,
-- settings (GUCs set for the run only, e.g. {"hybrid_index.lbgrid_batch_size": "1"};
-- a configuration's own gucs win), op (point_group: "&&" (default) or "~="),
-- search (mix: "range" = geom && q, "knn" = 10-NN of q, "point" = geom ~= q;
-- default from the query set's kind), keep (mix: run on the index as the
-- previous runs left it instead of a fresh build; inserts take the next
-- unused rows of the source), probe (mix: searches through the
-- index-only probes instead of SQL).
CREATE TABLE hybrid_index_bench.workload (
	name text PRIMARY KEY,
	kind text NOT NULL CHECK (kind IN ('build', 'build_insert', 'insert', 'range', 'knn',
									   'point_group', 'mix', 'range_probe', 'knn_probe',
									   'point_probe')),
	query_set text REFERENCES hybrid_index_bench.query_set ON UPDATE CASCADE,
	source_dataset text REFERENCES hybrid_index_bench.dataset ON UPDATE CASCADE,
	params jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(params) = 'object'),
	description text,
	CHECK (kind NOT IN ('range', 'knn', 'point_group', 'mix', 'range_probe', 'knn_probe',
						'point_probe') OR query_set IS NOT NULL),
	CHECK (kind NOT IN ('insert', 'mix') OR source_dataset IS NOT NULL)
);

-- The table (a copy of the dataset) and index a configuration runs on.
-- state: base (the dataset's rows), base+<source>[+<source>...] (after
-- inserts), empty, modified (after a mix), stale (dataset or configuration
-- changed), dirty (a run that inserts is under way or failed).
CREATE TABLE hybrid_index_bench.instance (
	dataset text NOT NULL REFERENCES hybrid_index_bench.dataset
		ON UPDATE CASCADE ON DELETE CASCADE,
	config text NOT NULL REFERENCES hybrid_index_bench.config
		ON UPDATE CASCADE ON DELETE CASCADE,
	table_name text NOT NULL UNIQUE,
	index_name text NOT NULL UNIQUE,
	state text NOT NULL DEFAULT 'empty',
	has_index boolean NOT NULL DEFAULT false,
	updated_at timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (dataset, config)
);

-- An experiment: configurations x datasets x workloads (in order) x reps.
CREATE TABLE hybrid_index_bench.experiment (
	name text PRIMARY KEY,
	configs text[] NOT NULL,
	datasets text[] NOT NULL,
	workloads text[] NOT NULL,
	reps int NOT NULL DEFAULT 3 CHECK (reps > 0),
	baseline text,
	description text
);

-- What the driver (bench/run) knew about the machine for a run name.
CREATE TABLE hybrid_index_bench.run_info (
	run_name text PRIMARY KEY,
	started_at timestamptz NOT NULL DEFAULT now(),
	preset text,
	environment jsonb NOT NULL DEFAULT '{}'
);

-- One row per measured run.
CREATE TABLE hybrid_index_bench.execution (
	id bigserial PRIMARY KEY,
	run_name text NOT NULL,
	config text NOT NULL REFERENCES hybrid_index_bench.config ON UPDATE CASCADE,
	dataset text NOT NULL REFERENCES hybrid_index_bench.dataset ON UPDATE CASCADE,
	workload text NOT NULL REFERENCES hybrid_index_bench.workload ON UPDATE CASCADE,
	rep int NOT NULL DEFAULT 1,
	mode text NOT NULL DEFAULT 'warm' CHECK (mode IN ('warm', 'cold')),
	started_at timestamptz NOT NULL,
	includes_commit boolean NOT NULL DEFAULT false,
	-- time
	wall_ms float8 NOT NULL,
	cpu_ms float8,				-- backend user+system CPU (/proc/self/stat)
	cpu_user_ms float8,
	cpu_sys_ms float8,
	latency_p50_ms float8,		-- per query or per inserted row
	latency_p95_ms float8,
	latency_max_ms float8,
	-- answers
	operations bigint NOT NULL DEFAULT 0,	-- queries run or rows inserted
	rows_returned bigint,
	result_checksum numeric,	-- sum of the ids returned
	table_rows bigint,
	table_state text,
	plan text,					-- scan nodes of the first query's plan
	plan_uses_index boolean,
	-- the index
	access_method name NOT NULL,
	index_name text,
	reloptions jsonb,
	tablespace name,
	index_bytes bigint,
	flash_index_bytes bigint,
	optane_index_bytes bigint,
	flash_pages bigint,
	optane_pages bigint,
	-- hybrid_index counters (deltas over the run; NULL for other AMs)
	flash_reads bigint, flash_writes bigint,
	flash_read_batches bigint, flash_write_batches bigint,
	flash_bytes_read bigint, flash_bytes_written bigint, flash_io_ms float8,
	optane_reads bigint, optane_writes bigint,
	optane_read_batches bigint, optane_write_batches bigint,
	optane_bytes_read bigint, optane_bytes_written bigint, optane_io_ms float8,
	cache_hits bigint, cache_misses bigint, log_bytes bigint,
	flushes bigint,				-- write batches (dirty pages written together)
	checkpoints bigint,
	migrations_up bigint, migrations_down bigint,
	counters_since text,		-- of checkpoints/migrations: 'run' (deltas) or 'index open' (totals)
	-- PostgreSQL buffer counters of this backend (pg_statio-style deltas)
	idx_blks_read bigint, idx_blks_hit bigint,
	heap_blks_read bigint, heap_blks_hit bigint,
	-- the backend's OS I/O (/proc/self/io deltas)
	os_read_bytes bigint, os_write_bytes bigint, os_rchar bigint, os_wchar bigint,
	-- environment
	device_profile text,
	emulate_devices boolean,
	shared_buffers text,
	cache_size text,
	settings jsonb,
	extension_version text,
	postgis_version text,
	server_version text,
	server_started_at timestamptz,
	inspect jsonb,				-- hybrid_index_inspect after the run
	notes jsonb NOT NULL DEFAULT '{}'
);
CREATE INDEX ON hybrid_index_bench.execution (run_name, dataset, workload, config);

-- pg_dump keeps what users added
SELECT pg_catalog.pg_extension_config_dump('hybrid_index_bench.dataset', '');
SELECT pg_catalog.pg_extension_config_dump('hybrid_index_bench.device_profile', 'WHERE NOT builtin');
SELECT pg_catalog.pg_extension_config_dump('hybrid_index_bench.config', '');
SELECT pg_catalog.pg_extension_config_dump('hybrid_index_bench.query_set', '');
SELECT pg_catalog.pg_extension_config_dump('hybrid_index_bench.query', '');
SELECT pg_catalog.pg_extension_config_dump('hybrid_index_bench.workload', '');
SELECT pg_catalog.pg_extension_config_dump('hybrid_index_bench.instance', '');
SELECT pg_catalog.pg_extension_config_dump('hybrid_index_bench.experiment', '');
SELECT pg_catalog.pg_extension_config_dump('hybrid_index_bench.run_info', '');
SELECT pg_catalog.pg_extension_config_dump('hybrid_index_bench.execution', '');
SELECT pg_catalog.pg_extension_config_dump('hybrid_index_bench.execution_id_seq', '');

-- The functions of hybrid_index the benchmark calls --------------------------
-- The same C functions as hybrid_index_stats & co. (with the same privilege
-- checks), declared here so that the benchmark does not depend on the
-- schema hybrid_index was installed in.

CREATE FUNCTION hybrid_index_bench._stats(index regclass,
	OUT tier text, OUT pages bigint, OUT reads bigint, OUT writes bigint,
	OUT read_batches bigint, OUT write_batches bigint,
	OUT bytes_read bigint, OUT bytes_written bigint, OUT io_time_ms float8,
	OUT cache_hits bigint, OUT cache_misses bigint, OUT log_bytes bigint)
	RETURNS SETOF record
	AS 'MODULE_PATHNAME', 'hybrid_index_stats' LANGUAGE C STRICT VOLATILE;

CREATE FUNCTION hybrid_index_bench._inspect(index regclass) RETURNS jsonb
	AS 'MODULE_PATHNAME', 'hybrid_index_inspect' LANGUAGE C STRICT VOLATILE;

CREATE FUNCTION hybrid_index_bench._files(index regclass,
	OUT kind text, OUT path text, OUT bytes bigint)
	RETURNS SETOF record
	AS 'MODULE_PATHNAME', 'hybrid_index_files' LANGUAGE C STRICT VOLATILE;

CREATE FUNCTION hybrid_index_bench._checkpoint(index regclass) RETURNS void
	AS 'MODULE_PATHNAME', 'hybrid_index_checkpoint' LANGUAGE C STRICT VOLATILE;

CREATE FUNCTION hybrid_index_bench._probe(index regclass, query geometry, op text)
	RETURNS bigint
	AS 'MODULE_PATHNAME', 'hybrid_index_probe' LANGUAGE C STRICT VOLATILE;

CREATE FUNCTION hybrid_index_bench._probe_knn(index regclass, point geometry, k int)
	RETURNS bigint
	AS 'MODULE_PATHNAME', 'hybrid_index_probe_knn' LANGUAGE C STRICT VOLATILE;

-- Small helpers ------------------------------------------------------------

-- Seed random() from an integer seed (distinct seeds give distinct streams)
CREATE FUNCTION hybrid_index_bench._seed(seed bigint) RETURNS void
LANGUAGE sql VOLATILE AS $$
	SELECT setseed(((seed % 2147483629) + 2147483629) % 2147483629 / 2147483629.0)
$$;

-- The schema of dataset and work tables, created on first use
CREATE FUNCTION hybrid_index_bench._data_schema() RETURNS name
LANGUAGE plpgsql AS $$
BEGIN
	IF to_regnamespace('hybrid_index_bench_data') IS NULL THEN
		CREATE SCHEMA hybrid_index_bench_data;
		COMMENT ON SCHEMA hybrid_index_bench_data IS
			'tables of hybrid_index_bench datasets and work tables (not part of the extension)';
	END IF;
	RETURN 'hybrid_index_bench_data';
END $$;

-- Drop a table of hybrid_index_bench_data if it exists (without a notice)
CREATE FUNCTION hybrid_index_bench._drop_table(p_table text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
	IF to_regclass(format('%I.%I', 'hybrid_index_bench_data', p_table)) IS NOT NULL THEN
		EXECUTE format('DROP TABLE %I.%I', 'hybrid_index_bench_data', p_table);
	END IF;
END $$;

-- A table name of at most 58 bytes (room for "_idx") made from parts,
-- readable where possible
CREATE FUNCTION hybrid_index_bench._table_name(prefix text, parts text[]) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
	SELECT CASE WHEN octet_length(n) <= 58 THEN n
				ELSE left(n, 49) || '_' || left(md5(n), 8) END
	FROM (SELECT lower(regexp_replace(prefix || array_to_string(parts, '__'),
									  '[^A-Za-z0-9_]', '_', 'g')) AS n) s
$$;

-- Is this access method one of hybrid_index's (tier counters available)?
CREATE FUNCTION hybrid_index_bench.is_hybrid_am(am name) RETURNS boolean
LANGUAGE sql STABLE AS $$
	SELECT EXISTS (
		SELECT 1 FROM pg_catalog.pg_am a
		JOIN pg_catalog.pg_depend d ON d.classid = 'pg_catalog.pg_am'::regclass
			AND d.objid = a.oid AND d.deptype = 'e'
		JOIN pg_catalog.pg_extension e ON e.oid = d.refobjid AND e.extname = 'hybrid_index'
		WHERE a.amname = am)
$$;

-- Backend CPU ticks and OS I/O of the calling backend, from /proc/self.
-- Needs pg_read_server_files (superusers have it); NULLs otherwise.
CREATE FUNCTION hybrid_index_bench._proc_sample() RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	stat text;
	io text;
	f text[];
	r jsonb := '{}';
BEGIN
	BEGIN
		stat := pg_read_file('/proc/self/stat');
		io := pg_read_file('/proc/self/io');
	EXCEPTION WHEN insufficient_privilege OR undefined_file OR undefined_function
				   OR io_error OR internal_error THEN
		RETURN jsonb_build_object('error', SQLERRM);
	END;
	-- fields after the parenthesised command name: state is field 3, utime 14, stime 15
	f := regexp_split_to_array(trim(substr(stat, length(stat) - strpos(reverse(stat), ')') + 2)), ' ');
	r := jsonb_build_object('utime', f[12]::bigint, 'stime', f[13]::bigint);
	SELECT r || coalesce(jsonb_object_agg(m[1], m[2]::bigint), '{}') INTO r
	FROM regexp_matches(io, '^(rchar|wchar|read_bytes|write_bytes): (\d+)$', 'gn') m;
	RETURN r;
END $$;

-- Version of the extension, for execution rows
CREATE FUNCTION hybrid_index_bench.extension_version() RETURNS text
LANGUAGE sql STABLE AS $$
	SELECT extversion FROM pg_catalog.pg_extension WHERE extname = 'hybrid_index'
$$;
