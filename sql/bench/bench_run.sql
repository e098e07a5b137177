-- Benchmarks from SQL: running workloads --------------------------------------
--
-- A run is: _begin (checks, settings, unmeasured setup, optional inspect and
-- warm-up) -> _sample -> measured part (_measure) -> _finish (deltas of
-- every counter, one execution row).  run_workload() does it in one
-- transaction; the procedure run() commits the setup first and measures
-- the commit(s) too (needed for params.commit_every).

CREATE TYPE hybrid_index_bench.measure_result AS (
	ops bigint, rows_returned bigint, checksum numeric, latencies float8[]);

CREATE FUNCTION hybrid_index_bench._is_query_kind(p_kind text) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
	SELECT p_kind IN ('range', 'knn', 'point_group', 'range_probe', 'knn_probe', 'point_probe')
$$;

-- Index-only query kinds: the searches through hybrid_index_probe*, no heap
CREATE FUNCTION hybrid_index_bench._is_probe_kind(p_kind text) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$ SELECT p_kind IN ('range_probe', 'knn_probe', 'point_probe') $$;

-- The operator of a point_group workload: && (boxes overlap) or ~= (same
-- box, the thesis' group point query)
CREATE FUNCTION hybrid_index_bench._group_op(p_params jsonb) RETURNS text
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
	IF coalesce(p_params->>'op', '&&') NOT IN ('&&', '~=') THEN
		RAISE EXCEPTION 'params.op of a point_group workload must be && or ~=, not "%"', p_params->>'op';
	END IF;
	RETURN coalesce(p_params->>'op', '&&');
END $$;

CREATE FUNCTION hybrid_index_bench._count_rows(p_table regclass) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
	n bigint;
BEGIN
	EXECUTE format('SELECT count(id) FROM %s', p_table) INTO n;
	RETURN n;
END $$;

-- Counters of this backend and of the index at one moment
CREATE FUNCTION hybrid_index_bench._sample(p_table regclass, p_index regclass, p_ours boolean)
RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	idx regclass := p_index;
	r jsonb;
BEGIN
	r := jsonb_build_object('t', clock_timestamp(), 'proc', hybrid_index_bench._proc_sample(),
		'heap_fetched', pg_stat_get_xact_blocks_fetched(p_table),
		'heap_hit', pg_stat_get_xact_blocks_hit(p_table),
		'index_oid', idx::oid);
	IF idx IS NOT NULL THEN
		r := r || jsonb_build_object('idx_fetched', pg_stat_get_xact_blocks_fetched(idx),
									 'idx_hit', pg_stat_get_xact_blocks_hit(idx));
		IF p_ours THEN
			r := r || jsonb_build_object('tiers',
				(SELECT jsonb_object_agg(s.tier, to_jsonb(s) - 'tier')
				 FROM hybrid_index_bench._stats(idx) s));
		END IF;
	END IF;
	RETURN r;
END $$;

-- Checks, settings and unmeasured setup of a run; returns its context
CREATE FUNCTION hybrid_index_bench._begin(p_run_name text, p_config text, p_dataset text,
	p_workload text, p_rep int, p_mode text, p_notes jsonb, p_strict boolean, p_inspect text)
RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
	cfg hybrid_index_bench.config;
	ds hybrid_index_bench.dataset;
	wl hybrid_index_bench.workload;
	inst hybrid_index_bench.instance;
	src hybrid_index_bench.dataset;
	sch name := hybrid_index_bench._data_schema();
	bad jsonb;
	notes jsonb := coalesce(p_notes, '{}');
	target text;
	before_state text;
	had_index boolean;
	idx regclass;
	ours boolean;
	ctx jsonb;
	old jsonb;
	insert_rows bigint;
	ctx_state text;
BEGIN
	IF p_run_name IS NULL OR p_run_name = '' THEN
		RAISE EXCEPTION 'a run needs a name';
	END IF;
	IF p_mode NOT IN ('warm', 'cold') THEN
		RAISE EXCEPTION 'mode must be warm or cold, not "%"', p_mode;
	END IF;
	IF p_inspect NOT IN ('auto', 'none', 'after', 'both') THEN
		RAISE EXCEPTION 'inspect must be auto, none, after or both, not "%"', p_inspect;
	END IF;
	SELECT * INTO cfg FROM hybrid_index_bench.config WHERE name = p_config;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'configuration "%" does not exist', p_config;
	END IF;
	SELECT * INTO ds FROM hybrid_index_bench.dataset WHERE name = p_dataset;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'dataset "%" does not exist', p_dataset;
	END IF;
	SELECT * INTO wl FROM hybrid_index_bench.workload WHERE name = p_workload;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'workload "%" does not exist', p_workload;
	END IF;
	bad := hybrid_index_bench.server_settings_mismatch(p_config);
	IF bad <> '{}' THEN
		IF p_strict THEN
			RAISE EXCEPTION 'server settings differ from configuration "%"', p_config
				USING DETAIL = bad::text,
					  HINT = 'These settings need a restart; bench/run sets them, or pass p_strict => false.';
		END IF;
		notes := notes || jsonb_build_object('settings_mismatch', bad);
	END IF;
	IF wl.kind IN ('insert', 'mix') THEN
		SELECT * INTO STRICT src FROM hybrid_index_bench.dataset WHERE name = wl.source_dataset;
	ELSIF wl.kind = 'build_insert' THEN
		src := ds;
	END IF;
	insert_rows := least(src.n_rows, coalesce((wl.params->>'limit')::bigint, src.n_rows));
	IF wl.kind NOT IN ('insert', 'build_insert') AND coalesce((wl.params->>'commit_every')::int, 0) <> 0 THEN
		RAISE EXCEPTION 'commit_every applies to insert and build_insert workloads only';
	END IF;

	IF wl.params ? 'settings' AND jsonb_typeof(wl.params->'settings') <> 'object' THEN
		RAISE EXCEPTION 'params.settings of workload "%" must be an object of GUCs', p_workload;
	END IF;
	old := hybrid_index_bench._apply_settings(p_config,
		CASE WHEN (hybrid_index_bench._is_query_kind(wl.kind) OR wl.kind = 'mix')
				  AND coalesce((wl.params->>'force_index')::boolean, true)
			 THEN '{"enable_seqscan": "off"}'::jsonb ELSE '{}' END
		|| coalesce(wl.params->'settings', '{}'), false);

	-- unmeasured setup
	inst := hybrid_index_bench._instance(p_config, p_dataset);
	before_state := inst.state;
	had_index := inst.has_index;
	-- inserts go on the dataset's rows plus rows of other sources: state
	-- 'base', then 'base+<source>+...'
	target := CASE WHEN wl.kind = 'build' THEN 'base'
				   WHEN wl.kind = 'build_insert' THEN 'empty_indexed'
				   WHEN wl.kind = 'insert' AND inst.has_index
						AND (inst.state = 'base' OR inst.state LIKE 'base+%')
						AND NOT (inst.state || '+') LIKE '%+' || src.name || '+%' THEN 'indexed'
				   WHEN wl.kind = 'mix' AND coalesce((wl.params->>'keep')::boolean, false)
						AND inst.has_index THEN 'indexed'
				   WHEN wl.kind IN ('insert', 'mix') THEN 'base_indexed'
				   ELSE 'indexed' END;
	idx := hybrid_index_bench.prepare(p_config, p_dataset, target);
	SELECT * INTO inst FROM hybrid_index_bench.instance WHERE dataset = p_dataset AND config = p_config;
	IF inst.state IS DISTINCT FROM before_state OR inst.has_index IS DISTINCT FROM had_index THEN
		notes := notes || jsonb_build_object('setup', jsonb_build_object(
			'state_before', before_state, 'index_before', had_index,
			'state', inst.state, 'index', inst.has_index));
		IF p_mode = 'cold' AND wl.kind NOT IN ('build', 'build_insert') THEN
			RAISE WARNING 'cold run of "%" on "%" needed setup first: its caches are not cold',
				p_config, p_dataset
				USING HINT = 'Call hybrid_index_bench.prepare() before restarting the server.';
		END IF;
	END IF;
	ctx_state := inst.state;
	IF wl.kind IN ('build_insert', 'insert', 'mix') THEN
		inst := hybrid_index_bench._set_state(inst, 'dirty');
	END IF;
	ours := hybrid_index_bench.is_hybrid_am(cfg.access_method);

	ctx := jsonb_build_object(
		'run_name', p_run_name, 'config', p_config, 'dataset', p_dataset, 'workload', p_workload,
		'rep', p_rep, 'mode', p_mode, 'kind', wl.kind, 'params', wl.params,
		'query_set', wl.query_set, 'inspect', p_inspect, 'ours', ours,
		'am', cfg.access_method, 'reloptions', cfg.reloptions, 'tablespace', cfg.tablespace,
		'device_profile', cfg.device_profile,
		'table', format('%I.%I', sch, inst.table_name),
		'index', format('%I.%I', sch, inst.index_name),
		'index_name', inst.index_name,
		'ddl', hybrid_index_bench.index_ddl(p_config, format('%I.%I', sch, inst.table_name)::regclass,
											inst.index_name),
		'source_table', CASE WHEN src.name IS NOT NULL THEN format('%I.%I', sch, src.table_name) END,
		'source', src.name,
		'insert_rows', insert_rows,
		-- a kept mix continues after the rows earlier runs inserted
		'mix_skip', CASE WHEN wl.kind = 'mix' AND ctx_state = 'modified'
						 THEN hybrid_index_bench._count_rows(format('%I.%I', sch, inst.table_name)::regclass) - ds.n_rows
						 ELSE 0 END,
		-- inserted rows get ids above the dataset's: 10^12 x (1 + sources inserted before)
		'id_offset', CASE WHEN wl.kind IN ('insert', 'mix')
						  THEN 1000000000000 * (1 + length(ctx_state) - length(replace(ctx_state, '+', '')))
						  ELSE 0 END,
		'state', ctx_state, 'old_settings', old, 'notes', notes, 'started_at', now());
	IF ours AND idx IS NOT NULL AND (p_inspect = 'both' OR (p_inspect = 'auto' AND p_mode = 'warm')) THEN
		ctx := ctx || jsonb_build_object('inspect_before', hybrid_index_bench._inspect(idx));
	END IF;
	IF hybrid_index_bench._is_query_kind(wl.kind)
	   AND coalesce((wl.params->>'warmup')::boolean, p_mode = 'warm') THEN
		PERFORM hybrid_index_bench._measure(ctx);
		ctx := jsonb_set(ctx, '{notes}', (ctx->'notes') || '{"warmup": true}');
	END IF;
	RETURN ctx;
END $$;

-- The measured part of a run (rows lo..hi of the source for inserts)
CREATE FUNCTION hybrid_index_bench._measure(ctx jsonb, p_lo bigint DEFAULT NULL,
											p_hi bigint DEFAULT NULL)
RETURNS hybrid_index_bench.measure_result
LANGUAGE plpgsql AS $$
DECLARE
	kind text := ctx->>'kind';
	tbl regclass := (ctx->>'table')::regclass;
	params jsonb := ctx->'params';
	lim bigint := (params->>'limit')::bigint;
	res hybrid_index_bench.measure_result := (0, 0, 0, '{}');
	lo bigint := coalesce(p_lo, 1);
	hi bigint := coalesce(p_hi, (ctx->>'insert_rows')::bigint);
	off bigint := (ctx->>'id_offset')::bigint;
	k int;
	q record;
	sql text;
	ins text;
	t timestamptz;
	c bigint;
	s numeric;
	n bigint;
	ratio float8;
	qg geometry[];
	ig geometry[];
	nq int;
	ni int := 0;
	i bigint;
	skip bigint;
	search text;
BEGIN
	IF kind = 'build' THEN
		EXECUTE ctx->>'ddl';
		res.ops := 1;
	ELSIF kind IN ('insert', 'build_insert') THEN
		IF coalesce((params->>'per_row')::boolean, kind = 'insert') THEN
			ins := format('INSERT INTO %s (id, geom) VALUES ($1, $2)', tbl);
			FOR q IN EXECUTE format('SELECT id, geom FROM %s WHERE id BETWEEN $1 AND $2 ORDER BY id',
									(ctx->>'source_table')::regclass) USING lo, hi LOOP
				t := clock_timestamp();
				EXECUTE ins USING q.id + off, q.geom;
				res.ops := res.ops + 1;
				res.latencies[res.ops] := 1000 * extract(epoch FROM clock_timestamp() - t);
			END LOOP;
		ELSE
			EXECUTE format('INSERT INTO %s (id, geom) SELECT id + $3, geom FROM %s '
						   'WHERE id BETWEEN $1 AND $2 ORDER BY id', tbl, (ctx->>'source_table')::regclass)
				USING lo, hi, off;
			GET DIAGNOSTICS n = ROW_COUNT;
			res.ops := n;
		END IF;
	ELSIF hybrid_index_bench._is_query_kind(kind) THEN
		k := coalesce((params->>'k')::int,
					  (SELECT (qs.params->>'k')::int FROM hybrid_index_bench.query_set qs
					   WHERE qs.name = ctx->>'query_set'), 10);
		sql := CASE kind
			WHEN 'range' THEN format('SELECT count(*), sum(id) FROM %s WHERE geom && $1', tbl)
			-- probes: the index alone; no ids, so no checksum
			WHEN 'range_probe' THEN 'SELECT hybrid_index_bench._probe($3, $1, ''&&''), 0'
			WHEN 'knn_probe' THEN 'SELECT hybrid_index_bench._probe_knn($3, $1, $2), 0'
			WHEN 'point_probe' THEN 'SELECT hybrid_index_bench._probe($3, $1, ''~=''), 0'
			WHEN 'knn' THEN format('SELECT count(*), sum(id) FROM (SELECT id FROM %s '
								   'ORDER BY geom <-> $1 LIMIT $2) s', tbl)
			ELSE format('SELECT count(*), sum(id) FROM %s WHERE geom %s ANY($1)', tbl,
						hybrid_index_bench._group_op(params)) END;
		FOR q IN SELECT qq.geom, qq.geoms FROM hybrid_index_bench.query qq
				 WHERE qq.set_name = ctx->>'query_set' ORDER BY qq.qid LIMIT lim LOOP
			t := clock_timestamp();
			IF kind = 'point_group' THEN
				EXECUTE sql INTO c, s USING q.geoms;
			ELSIF kind = 'point_probe' AND q.geoms IS NOT NULL THEN
				-- a group: one probe per point
				c := 0;
				FOR i IN 1 .. coalesce(array_length(q.geoms, 1), 0) LOOP
					EXECUTE sql INTO n, s USING q.geoms[i], k, (ctx->>'index')::regclass;
					c := c + n;
				END LOOP;
			ELSE
				EXECUTE sql INTO c, s USING q.geom, k, (ctx->>'index')::regclass;
			END IF;
			res.ops := res.ops + 1;
			res.latencies[res.ops] := 1000 * extract(epoch FROM clock_timestamp() - t);
			res.rows_returned := res.rows_returned + c;
			res.checksum := res.checksum + coalesce(s, 0);
		END LOOP;
	ELSIF kind = 'mix' THEN
		-- params: ops (default: the query set's size), insert_ratio (default 0.5)
		ratio := coalesce((params->>'insert_ratio')::float8, 0.5);
		skip := coalesce((ctx->>'mix_skip')::bigint, 0);
		SELECT array_agg(qq.geom ORDER BY qq.qid) INTO qg FROM hybrid_index_bench.query qq
			WHERE qq.set_name = ctx->>'query_set';
		nq := coalesce(array_length(qg, 1), 0);
		n := coalesce((params->>'ops')::bigint, nq);
		EXECUTE format('SELECT array_agg(geom ORDER BY id) FROM %s WHERE id > $2 AND id <= $1 + $2',
					   (ctx->>'source_table')::regclass) INTO ig USING ceil(n * ratio)::bigint, skip;
		IF ceil(n * ratio) > coalesce(array_length(ig, 1), 0) THEN
			RAISE EXCEPTION 'mix "%" needs % rows of "%" after the % used before; it has %',
				ctx->>'workload', ceil(n * ratio), ctx->>'source', skip, coalesce(array_length(ig, 1), 0);
		END IF;
		search := coalesce(params->>'search', (SELECT CASE qs.kind WHEN 'knn' THEN 'knn' ELSE 'range' END
												 FROM hybrid_index_bench.query_set qs
												 WHERE qs.name = ctx->>'query_set'));
		IF coalesce((params->>'probe')::boolean, false) THEN
			-- params.probe: the searches on the index alone (no heap, no checksum)
			sql := CASE search
				WHEN 'knn' THEN 'SELECT hybrid_index_bench._probe_knn($2, $1, 10), 0'
				WHEN 'point' THEN 'SELECT hybrid_index_bench._probe($2, $1, ''~=''), 0'
				WHEN 'range' THEN 'SELECT hybrid_index_bench._probe($2, $1, ''&&''), 0'
				ELSE NULL END;
		ELSE
			sql := CASE search
				WHEN 'knn' THEN format('SELECT count(*), sum(id) FROM (SELECT id FROM %s ORDER BY geom <-> $1 LIMIT 10) s', tbl)
				WHEN 'point' THEN format('SELECT count(*), sum(id) FROM %s WHERE geom ~= $1', tbl)
				WHEN 'range' THEN format('SELECT count(*), sum(id) FROM %s WHERE geom && $1', tbl)
				ELSE NULL END;
		END IF;
		IF sql IS NULL THEN
			RAISE EXCEPTION 'params.search of a mix must be range, knn or point, not "%"', params->>'search';
		END IF;
		ins := format('INSERT INTO %s (id, geom) VALUES ($1, $2)', tbl);
		FOR i IN 1 .. n LOOP
			t := clock_timestamp();
			IF floor(i * ratio) > floor((i - 1) * ratio) AND ni < coalesce(array_length(ig, 1), 0) THEN
				ni := ni + 1;
				EXECUTE ins USING ni + skip + off, ig[ni];
			ELSIF nq > 0 THEN
				EXECUTE sql INTO c, s USING qg[1 + ((i - ni - 1) % nq)], (ctx->>'index')::regclass;
				res.rows_returned := res.rows_returned + c;
				res.checksum := res.checksum + coalesce(s, 0);
			END IF;
			res.ops := res.ops + 1;
			res.latencies[res.ops] := 1000 * extract(epoch FROM clock_timestamp() - t);
		END LOOP;
	ELSE
		RAISE EXCEPTION 'unknown workload kind "%"', kind;
	END IF;
	RETURN res;
END $$;

-- Scan nodes of the plan of a workload's first query
CREATE FUNCTION hybrid_index_bench._plan(ctx jsonb, OUT plan text, OUT uses_index boolean)
LANGUAGE plpgsql AS $$
DECLARE
	kind text := ctx->>'kind';
	tbl regclass := (ctx->>'table')::regclass;
	q record;
	p json;
BEGIN
	SELECT qq.geom, qq.geoms INTO q FROM hybrid_index_bench.query qq
		WHERE qq.set_name = ctx->>'query_set' ORDER BY qq.qid LIMIT 1;
	IF NOT FOUND THEN
		RETURN;
	END IF;
	IF hybrid_index_bench._is_probe_kind(kind) THEN
		plan := 'index only (no heap): ' || CASE kind WHEN 'knn_probe' THEN 'hybrid_index_probe_knn'
													ELSE 'hybrid_index_probe' END
				|| ' on ' || (ctx->>'index_name');
		uses_index := true;
		RETURN;
	END IF;
	IF kind = 'range' THEN
		EXECUTE format('EXPLAIN (FORMAT JSON) SELECT count(*) FROM %s WHERE geom && $1', tbl)
			INTO p USING q.geom;
	ELSIF kind = 'knn' THEN
		EXECUTE format('EXPLAIN (FORMAT JSON) SELECT id FROM %s ORDER BY geom <-> $1 LIMIT 10', tbl)
			INTO p USING q.geom;
	ELSE
		EXECUTE format('EXPLAIN (FORMAT JSON) SELECT count(*) FROM %s WHERE geom %s ANY($1)', tbl,
					   hybrid_index_bench._group_op(ctx->'params'))
			INTO p USING q.geoms;
	END IF;
	SELECT string_agg(DISTINCT (n->>'Node Type') || coalesce(' on ' || (n->>'Index Name'), ''), ', '),
		   coalesce(bool_or(n->>'Index Name' = ctx->>'index_name'), false)
	INTO plan, uses_index
	FROM jsonb_path_query(p::jsonb, 'strict $.** ? (exists (@."Node Type"))') n
	WHERE n->>'Node Type' LIKE '%Scan%';
END $$;

CREATE FUNCTION hybrid_index_bench._delta(a jsonb, b jsonb, tier text, field text) RETURNS float8
LANGUAGE sql IMMUTABLE AS $$
	SELECT (a->'tiers'->tier->>field)::float8 - coalesce((b->'tiers'->tier->>field)::float8, 0)
$$;

-- Store the execution row of a run; restores the settings
CREATE FUNCTION hybrid_index_bench._finish(ctx jsonb, p_before jsonb, p_t0 timestamptz,
	p_t1 timestamptz, res hybrid_index_bench.measure_result, p_includes_commit boolean)
RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
	kind text := ctx->>'kind';
	ours boolean := (ctx->>'ours')::boolean;
	idx regclass := to_regclass(ctx->>'index');
	after jsonb := hybrid_index_bench._sample((ctx->>'table')::regclass, to_regclass(ctx->>'index'), ours);
	b jsonb := p_before;
	ins jsonb;
	ins0 jsonb := ctx->'inspect_before';
	files jsonb;
	plan_txt text;
	plan_idx boolean;
	new_state text;
	id bigint;
	lat_p50 float8;
	lat_p95 float8;
	lat_max float8;
	nrows bigint;
	inst hybrid_index_bench.instance;
BEGIN
	IF (b->>'index_oid') IS DISTINCT FROM (after->>'index_oid') THEN
		-- a new index (build): its counters started at zero
		b := b - 'tiers' - 'idx_fetched' - 'idx_hit';
	END IF;
	IF ours AND idx IS NOT NULL THEN
		IF ctx->>'inspect' <> 'none' THEN
			ins := hybrid_index_bench._inspect(idx);
		END IF;
		SELECT jsonb_object_agg(f.kind, f.bytes) INTO files FROM hybrid_index_bench._files(idx) f;
	END IF;
	IF hybrid_index_bench._is_query_kind(kind) THEN
		SELECT p.plan, p.uses_index INTO plan_txt, plan_idx FROM hybrid_index_bench._plan(ctx) p;
	END IF;
	SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x), percentile_cont(0.95) WITHIN GROUP (ORDER BY x),
		   max(x)
	INTO lat_p50, lat_p95, lat_max FROM unnest(res.latencies) x;
	-- count(id), not count(*): a forced index-only scan of count(*) fails on
	-- hyrtree and crashes on PostGIS SP-GiST (see bench/README.md)
	EXECUTE format('SELECT count(id) FROM %s', (ctx->>'table')::regclass) INTO nrows;

	new_state := CASE kind WHEN 'build_insert' THEN 'base'
						   WHEN 'insert' THEN (ctx->>'state') || '+' || (ctx->>'source')
						   WHEN 'mix' THEN 'modified' END;
	SELECT * INTO inst FROM hybrid_index_bench.instance
		WHERE dataset = ctx->>'dataset' AND config = ctx->>'config';
	inst := hybrid_index_bench._set_state(inst, coalesce(new_state, inst.state));

	INSERT INTO hybrid_index_bench.execution (
		run_name, config, dataset, workload, rep, mode, started_at, includes_commit,
		wall_ms, cpu_ms, cpu_user_ms, cpu_sys_ms, latency_p50_ms, latency_p95_ms, latency_max_ms,
		operations, rows_returned, result_checksum, table_rows, table_state, plan, plan_uses_index,
		access_method, index_name, reloptions, tablespace,
		index_bytes, flash_index_bytes, optane_index_bytes, flash_pages, optane_pages,
		flash_reads, flash_writes, flash_read_batches, flash_write_batches,
		flash_bytes_read, flash_bytes_written, flash_io_ms,
		optane_reads, optane_writes, optane_read_batches, optane_write_batches,
		optane_bytes_read, optane_bytes_written, optane_io_ms,
		cache_hits, cache_misses, log_bytes, flushes, checkpoints, migrations_up, migrations_down,
		counters_since,
		idx_blks_read, idx_blks_hit, heap_blks_read, heap_blks_hit,
		os_read_bytes, os_write_bytes, os_rchar, os_wchar,
		device_profile, emulate_devices, shared_buffers, cache_size, settings,
		extension_version, postgis_version, server_version, server_started_at, inspect, notes)
	SELECT
		ctx->>'run_name', ctx->>'config', ctx->>'dataset', ctx->>'workload',
		(ctx->>'rep')::int, ctx->>'mode', p_t0, p_includes_commit,
		1000 * extract(epoch FROM p_t1 - p_t0),
		10.0 * (((after->'proc'->>'utime')::bigint + (after->'proc'->>'stime')::bigint)
				- ((b->'proc'->>'utime')::bigint + (b->'proc'->>'stime')::bigint)),
		10.0 * ((after->'proc'->>'utime')::bigint - (b->'proc'->>'utime')::bigint),
		10.0 * ((after->'proc'->>'stime')::bigint - (b->'proc'->>'stime')::bigint),
		lat_p50, lat_p95, lat_max,
		res.ops,
		CASE WHEN kind NOT IN ('build', 'build_insert', 'insert') THEN res.rows_returned END,
		CASE WHEN kind NOT IN ('build', 'build_insert', 'insert') THEN res.checksum END,
		nrows, inst.state, plan_txt, plan_idx,
		(ctx->>'am')::name, ctx->>'index_name', ctx->'reloptions', (ctx->>'tablespace')::name,
		CASE WHEN ours THEN (SELECT sum(v::bigint) FROM jsonb_each_text(files) e(k, v))
			 WHEN idx IS NOT NULL THEN pg_relation_size(idx) END,
		CASE WHEN ours THEN (files->>'flash')::bigint WHEN idx IS NOT NULL THEN pg_relation_size(idx) END,
		CASE WHEN ours THEN (files->>'optane')::bigint END,
		(after->'tiers'->'flash'->>'pages')::bigint, (after->'tiers'->'optane'->>'pages')::bigint,
		hybrid_index_bench._delta(after, b, 'flash', 'reads'),
		hybrid_index_bench._delta(after, b, 'flash', 'writes'),
		hybrid_index_bench._delta(after, b, 'flash', 'read_batches'),
		hybrid_index_bench._delta(after, b, 'flash', 'write_batches'),
		hybrid_index_bench._delta(after, b, 'flash', 'bytes_read'),
		hybrid_index_bench._delta(after, b, 'flash', 'bytes_written'),
		hybrid_index_bench._delta(after, b, 'flash', 'io_time_ms'),
		hybrid_index_bench._delta(after, b, 'optane', 'reads'),
		hybrid_index_bench._delta(after, b, 'optane', 'writes'),
		hybrid_index_bench._delta(after, b, 'optane', 'read_batches'),
		hybrid_index_bench._delta(after, b, 'optane', 'write_batches'),
		hybrid_index_bench._delta(after, b, 'optane', 'bytes_read'),
		hybrid_index_bench._delta(after, b, 'optane', 'bytes_written'),
		hybrid_index_bench._delta(after, b, 'optane', 'io_time_ms'),
		hybrid_index_bench._delta(after, b, 'flash', 'cache_hits'),
		hybrid_index_bench._delta(after, b, 'flash', 'cache_misses'),
		hybrid_index_bench._delta(after, b, 'flash', 'log_bytes'),
		hybrid_index_bench._delta(after, b, 'flash', 'write_batches')
			+ hybrid_index_bench._delta(after, b, 'optane', 'write_batches'),
		(ins->>'checkpoints')::bigint - coalesce((ins0->>'checkpoints')::bigint, 0),
		(ins->'placement_state'->>'migrations_up')::bigint
			- coalesce((ins0->'placement_state'->>'migrations_up')::bigint, 0),
		(ins->'placement_state'->>'migrations_down')::bigint
			- coalesce((ins0->'placement_state'->>'migrations_down')::bigint, 0),
		CASE WHEN ins IS NULL THEN NULL WHEN ins0 IS NULL THEN 'index open' ELSE 'run' END,
		(after->>'idx_fetched')::bigint - (after->>'idx_hit')::bigint
			- coalesce((b->>'idx_fetched')::bigint - (b->>'idx_hit')::bigint, 0),
		(after->>'idx_hit')::bigint - coalesce((b->>'idx_hit')::bigint, 0),
		(after->>'heap_fetched')::bigint - (after->>'heap_hit')::bigint
			- ((b->>'heap_fetched')::bigint - (b->>'heap_hit')::bigint),
		(after->>'heap_hit')::bigint - (b->>'heap_hit')::bigint,
		(after->'proc'->>'read_bytes')::bigint - (b->'proc'->>'read_bytes')::bigint,
		(after->'proc'->>'write_bytes')::bigint - (b->'proc'->>'write_bytes')::bigint,
		(after->'proc'->>'rchar')::bigint - (b->'proc'->>'rchar')::bigint,
		(after->'proc'->>'wchar')::bigint - (b->'proc'->>'wchar')::bigint,
		ctx->>'device_profile', current_setting('hybrid_index.emulate_devices', true)::boolean,
		current_setting('shared_buffers'), current_setting('hybrid_index.cache_size', true),
		(SELECT jsonb_object_agg(s.name, current_setting(s.name)) FROM pg_catalog.pg_settings s
		 WHERE s.name LIKE 'hybrid\_index.%' OR s.name IN ('shared_buffers', 'effective_cache_size',
			'work_mem', 'maintenance_work_mem', 'jit', 'max_parallel_workers_per_gather',
			'max_parallel_maintenance_workers', 'synchronous_commit', 'fsync', 'wal_level',
			'random_page_cost', 'enable_seqscan', 'enable_indexscan', 'enable_bitmapscan',
			'huge_pages', 'checkpoint_timeout', 'max_wal_size')),
		hybrid_index_bench.extension_version(),
		(SELECT extversion FROM pg_catalog.pg_extension WHERE extname = 'postgis'),
		current_setting('server_version'), pg_postmaster_start_time(), ins,
		(ctx->'notes') || CASE WHEN b->'proc' ? 'error'
							   THEN jsonb_build_object('cpu', b->'proc'->>'error') ELSE '{}' END
	RETURNING execution.id INTO id;
	PERFORM hybrid_index_bench._restore_settings(ctx->'old_settings');
	RETURN id;
END $$;

-- Run a workload for a configuration on a dataset in one transaction (the
-- commit is not measured); returns the execution id.  mode 'cold' only
-- labels the run: restarting the server and dropping the OS cache before
-- it is bench/run's job.  p_inspect: when to call hybrid_index_inspect
-- (auto = before and after warm runs, after cold runs; it reads the whole
-- tree, so it is never inside the measurement).
CREATE FUNCTION hybrid_index_bench.run_workload(p_run_name text, p_config text, p_dataset text,
	p_workload text, p_rep int DEFAULT 1, p_mode text DEFAULT 'warm', p_notes jsonb DEFAULT '{}',
	p_strict boolean DEFAULT true, p_inspect text DEFAULT 'auto') RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
	ctx jsonb;
	b jsonb;
	t0 timestamptz;
	res hybrid_index_bench.measure_result;
BEGIN
	IF EXISTS (SELECT 1 FROM hybrid_index_bench.workload w
			   WHERE w.name = p_workload AND coalesce((w.params->>'commit_every')::int, 0) <> 0) THEN
		RAISE EXCEPTION 'workload "%" commits during the run', p_workload
			USING HINT = 'Use CALL hybrid_index_bench.run(...) outside a transaction block.';
	END IF;
	ctx := hybrid_index_bench._begin(p_run_name, p_config, p_dataset, p_workload, p_rep, p_mode,
									 p_notes, p_strict, p_inspect);
	b := hybrid_index_bench._sample((ctx->>'table')::regclass, to_regclass(ctx->>'index'),
									(ctx->>'ours')::boolean);
	t0 := clock_timestamp();
	res := hybrid_index_bench._measure(ctx);
	RETURN hybrid_index_bench._finish(ctx, b, t0, clock_timestamp(), res, false);
END $$;
COMMENT ON FUNCTION hybrid_index_bench.run_workload(text, text, text, text, int, text, jsonb, boolean, text) IS
	'Run a workload for a configuration on a dataset in one transaction; returns the execution id';

-- The same as a procedure: setup is committed before the measurement, and
-- the measurement includes the commit (every params.commit_every rows for
-- insert workloads).  CALL it outside a transaction block.
CREATE PROCEDURE hybrid_index_bench.run(p_run_name text, p_config text, p_dataset text,
	p_workload text, p_rep int DEFAULT 1, p_mode text DEFAULT 'warm', p_notes jsonb DEFAULT '{}',
	p_strict boolean DEFAULT true, p_inspect text DEFAULT 'auto',
	INOUT p_execution bigint DEFAULT NULL)
LANGUAGE plpgsql AS $$
DECLARE
	ctx jsonb;
	b jsonb;
	t0 timestamptz;
	tc timestamptz;
	res hybrid_index_bench.measure_result;
	part hybrid_index_bench.measure_result;
	every bigint;
	lo bigint := 1;
	hi bigint;
	total bigint;
BEGIN
	ctx := hybrid_index_bench._begin(p_run_name, p_config, p_dataset, p_workload, p_rep, p_mode,
									 p_notes, p_strict, p_inspect);
	COMMIT;
	every := coalesce((ctx->'params'->>'commit_every')::bigint, 0);
	total := (ctx->>'insert_rows')::bigint;
	b := hybrid_index_bench._sample((ctx->>'table')::regclass, to_regclass(ctx->>'index'),
									(ctx->>'ours')::boolean);
	t0 := clock_timestamp();
	IF every > 0 AND ctx->>'kind' IN ('insert', 'build_insert') THEN
		res := (0, NULL, NULL, '{}');
		WHILE lo <= total LOOP
			hi := least(lo + every - 1, total);
			tc := clock_timestamp();
			part := hybrid_index_bench._measure(ctx, lo, hi);
			COMMIT;
			res.ops := res.ops + part.ops;
			-- per row, including its share of the commit
			res.latencies[(lo - 1) / every + 1] :=
				1000 * extract(epoch FROM clock_timestamp() - tc) / greatest(part.ops, 1);
			lo := hi + 1;
		END LOOP;
	ELSE
		res := hybrid_index_bench._measure(ctx);
		COMMIT;
	END IF;
	p_execution := hybrid_index_bench._finish(ctx, b, t0, clock_timestamp(), res, true);
	COMMIT;
END $$;
COMMENT ON PROCEDURE hybrid_index_bench.run(text, text, text, text, int, text, jsonb, boolean, text, bigint) IS
	'Run a workload, committing the setup first and measuring the commits; sets p_execution';

-- Run an experiment (every dataset x configuration x rep x workload, warm)
-- and commit after each execution; sets p_run_name (default: the
-- experiment's name and the time) and p_executions.
CREATE PROCEDURE hybrid_index_bench.run_experiment(p_experiment text,
	INOUT p_run_name text DEFAULT NULL, INOUT p_executions int DEFAULT 0)
LANGUAGE plpgsql AS $$
DECLARE
	e hybrid_index_bench.experiment;
	ds text;
	cfg text;
	wl text;
	rep int;
	id bigint;
	total int;
BEGIN
	SELECT * INTO e FROM hybrid_index_bench.experiment WHERE name = p_experiment;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'experiment "%" does not exist', p_experiment;
	END IF;
	p_run_name := coalesce(p_run_name, p_experiment || '-' || to_char(clock_timestamp(), 'YYYYMMDD-HH24MISS'));
	INSERT INTO hybrid_index_bench.run_info (run_name, preset) VALUES (p_run_name, p_experiment)
		ON CONFLICT (run_name) DO NOTHING;
	total := cardinality(e.datasets) * cardinality(e.configs) * e.reps * cardinality(e.workloads);
	p_executions := 0;
	COMMIT;
	FOREACH ds IN ARRAY e.datasets LOOP
		FOREACH cfg IN ARRAY e.configs LOOP
			FOR rep IN 1 .. e.reps LOOP
				FOREACH wl IN ARRAY e.workloads LOOP
					id := NULL;
					CALL hybrid_index_bench.run(p_run_name, cfg, ds, wl, rep, 'warm', '{}', true, 'auto', id);
					p_executions := p_executions + 1;
					RAISE NOTICE '[%/%] % % % rep %: execution %', p_executions, total, ds, cfg, wl, rep, id;
				END LOOP;
			END LOOP;
		END LOOP;
	END LOOP;
END $$;
