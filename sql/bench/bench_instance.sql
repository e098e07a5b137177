-- Benchmarks from SQL: configurations, workloads and the tables they run on ---

-- Add or replace a configuration
CREATE FUNCTION hybrid_index_bench.add_config(p_name text, p_access_method name,
	p_reloptions jsonb DEFAULT '{}', p_gucs jsonb DEFAULT '{}', p_tablespace name DEFAULT NULL,
	p_device_profile text DEFAULT 'off', p_opclass text DEFAULT NULL,
	p_server_settings jsonb DEFAULT '{}', p_description text DEFAULT NULL) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	old hybrid_index_bench.config;
BEGIN
	SELECT * INTO old FROM hybrid_index_bench.config WHERE name = p_name;
	INSERT INTO hybrid_index_bench.config AS c (name, access_method, opclass, reloptions, gucs,
		server_settings, tablespace, device_profile, description)
	VALUES (p_name, p_access_method, p_opclass, coalesce(p_reloptions, '{}'),
			coalesce(p_gucs, '{}'), coalesce(p_server_settings, '{}'), p_tablespace,
			coalesce(p_device_profile, 'off'), p_description)
	ON CONFLICT (name) DO UPDATE SET
		access_method = EXCLUDED.access_method, opclass = EXCLUDED.opclass,
		reloptions = EXCLUDED.reloptions, gucs = EXCLUDED.gucs,
		server_settings = EXCLUDED.server_settings, tablespace = EXCLUDED.tablespace,
		device_profile = EXCLUDED.device_profile, description = EXCLUDED.description;
	-- an index built with other options is stale
	IF (old.access_method, old.opclass, old.reloptions, old.tablespace)
	   IS DISTINCT FROM (p_access_method, p_opclass, coalesce(p_reloptions, '{}'), p_tablespace) THEN
		UPDATE hybrid_index_bench.instance SET state = 'stale' WHERE config = p_name;
	END IF;
	RETURN p_name;
END $$;

-- Add or replace a workload
CREATE FUNCTION hybrid_index_bench.add_workload(p_name text, p_kind text,
	p_query_set text DEFAULT NULL, p_source_dataset text DEFAULT NULL,
	p_params jsonb DEFAULT '{}', p_description text DEFAULT NULL) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO hybrid_index_bench.workload (name, kind, query_set, source_dataset, params, description)
	VALUES (p_name, p_kind, p_query_set, p_source_dataset, coalesce(p_params, '{}'), p_description)
	ON CONFLICT (name) DO UPDATE SET
		kind = EXCLUDED.kind, query_set = EXCLUDED.query_set,
		source_dataset = EXCLUDED.source_dataset, params = EXCLUDED.params,
		description = EXCLUDED.description;
	RETURN p_name;
END $$;

-- The CREATE INDEX statement of a configuration for a work table
CREATE FUNCTION hybrid_index_bench.index_ddl(p_config text, p_table regclass, p_index name)
RETURNS text
LANGUAGE plpgsql STABLE AS $$
DECLARE
	cfg hybrid_index_bench.config;
BEGIN
	SELECT * INTO cfg FROM hybrid_index_bench.config WHERE name = p_config;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'configuration "%" does not exist', p_config;
	END IF;
	IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_am WHERE amname = cfg.access_method AND amtype = 'i') THEN
		RAISE EXCEPTION 'index access method "%" does not exist', cfg.access_method
			USING HINT = 'Configuration "' || p_config || '" needs it; is its extension installed?';
	END IF;
	RETURN format('CREATE INDEX %I ON %s USING %I (geom%s)%s%s', p_index, p_table, cfg.access_method,
		CASE WHEN cfg.opclass IS NULL THEN ''
			 ELSE format(' %s', (SELECT string_agg(format('%I', x), '.')
								 FROM unnest(parse_ident(cfg.opclass)) x)) END,
		CASE WHEN cfg.reloptions = '{}' THEN ''
			 ELSE format(' WITH (%s)', (SELECT string_agg(format('%I = %L', key, value), ', ' ORDER BY key)
										FROM jsonb_each_text(cfg.reloptions))) END,
		CASE WHEN cfg.tablespace IS NULL THEN '' ELSE format(' TABLESPACE %I', cfg.tablespace) END);
END $$;

-- The instance (work table) of a configuration on a dataset, created if needed
CREATE FUNCTION hybrid_index_bench._instance(p_config text, p_dataset text)
RETURNS hybrid_index_bench.instance
LANGUAGE plpgsql AS $$
DECLARE
	inst hybrid_index_bench.instance;
	sch name := hybrid_index_bench._data_schema();
	tbl text;
BEGIN
	IF NOT EXISTS (SELECT 1 FROM hybrid_index_bench.dataset WHERE name = p_dataset) THEN
		RAISE EXCEPTION 'dataset "%" does not exist', p_dataset;
	END IF;
	IF NOT EXISTS (SELECT 1 FROM hybrid_index_bench.config WHERE name = p_config) THEN
		RAISE EXCEPTION 'configuration "%" does not exist', p_config;
	END IF;
	SELECT * INTO inst FROM hybrid_index_bench.instance WHERE dataset = p_dataset AND config = p_config;
	IF NOT FOUND THEN
		tbl := hybrid_index_bench._table_name('w_', ARRAY[p_dataset, p_config]);
		INSERT INTO hybrid_index_bench.instance (dataset, config, table_name, index_name)
			VALUES (p_dataset, p_config, tbl, tbl || '_idx') RETURNING * INTO inst;
	END IF;
	IF to_regclass(format('%I.%I', sch, inst.table_name)) IS NULL THEN
		EXECUTE format('CREATE TABLE %I.%I (id bigint NOT NULL, geom geometry) '
					   'WITH (autovacuum_enabled = false)', sch, inst.table_name);
		UPDATE hybrid_index_bench.instance SET state = 'empty'
			WHERE dataset = p_dataset AND config = p_config RETURNING * INTO inst;
	END IF;
	UPDATE hybrid_index_bench.instance
		SET has_index = to_regclass(format('%I.%I', sch, inst.index_name)) IS NOT NULL
		WHERE dataset = p_dataset AND config = p_config RETURNING * INTO inst;
	RETURN inst;
END $$;

CREATE FUNCTION hybrid_index_bench._set_state(inst hybrid_index_bench.instance, p_state text)
RETURNS hybrid_index_bench.instance
LANGUAGE sql AS $$
	UPDATE hybrid_index_bench.instance
		SET state = p_state,
			has_index = to_regclass(format('%I.%I', 'hybrid_index_bench_data', index_name)) IS NOT NULL,
			updated_at = now()
		WHERE dataset = inst.dataset AND config = inst.config
		RETURNING *
$$;

-- Set the configuration's GUCs and device profile for this transaction
-- (or the session: p_local false); returns the previous values
CREATE FUNCTION hybrid_index_bench._apply_settings(p_config text, p_extra jsonb DEFAULT '{}',
												   p_local boolean DEFAULT true) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
	want jsonb;
	old jsonb := '{}';
	kv record;
	cur text;
BEGIN
	SELECT '{"jit": "off", "max_parallel_workers_per_gather": "0"}'::jsonb
		   || coalesce(p_extra, '{}') || p.settings
		   || jsonb_build_object('hybrid_index.emulate_devices', CASE WHEN p.emulate THEN 'on' ELSE 'off' END)
		   || c.gucs
	INTO want
	FROM hybrid_index_bench.config c
	JOIN hybrid_index_bench.device_profile p ON p.name = c.device_profile
	WHERE c.name = p_config;
	FOR kv IN SELECT key, value FROM jsonb_each_text(want) LOOP
		cur := current_setting(kv.key, true);
		IF cur IS DISTINCT FROM kv.value THEN
			old := old || jsonb_build_object(kv.key, cur);
			PERFORM set_config(kv.key, kv.value, p_local);
		END IF;
	END LOOP;
	RETURN old;
END $$;

CREATE FUNCTION hybrid_index_bench._restore_settings(p_old jsonb) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
	kv record;
BEGIN
	FOR kv IN SELECT key, value FROM jsonb_each_text(p_old) WHERE value IS NOT NULL LOOP
		PERFORM set_config(kv.key, kv.value, false);
	END LOOP;
END $$;

-- Settings that need a restart: which of the configuration's differ now?
CREATE FUNCTION hybrid_index_bench.server_settings_mismatch(p_config text) RETURNS jsonb
LANGUAGE plpgsql STABLE AS $$
DECLARE
	kv record;
	cur text;
	same boolean;
	bad jsonb := '{}';
BEGIN
	FOR kv IN SELECT key, value FROM hybrid_index_bench.config c, jsonb_each_text(c.server_settings)
			  WHERE c.name = p_config LOOP
		cur := current_setting(kv.key, true);
		same := lower(cur) = lower(kv.value);
		IF NOT same AND cur IS NOT NULL THEN
			BEGIN
				same := pg_size_bytes(cur) = pg_size_bytes(kv.value);
			EXCEPTION WHEN invalid_parameter_value THEN
				same := false;
			END;
		END IF;
		IF NOT coalesce(same, false) THEN
			bad := bad || jsonb_build_object(kv.key, jsonb_build_object('want', kv.value, 'have', cur));
		END IF;
	END LOOP;
	RETURN bad;
END $$;

-- Bring the work table of a configuration on a dataset into a state:
--   base           the dataset's rows, no index
--   empty          no rows, no index
--   empty_indexed  no rows, the configuration's index
--   base_indexed   the dataset's rows and the index
--   indexed        the index on whatever rows the table has (base if empty/stale)
-- Returns the index (NULL without one).  Setup work is not measured.
CREATE FUNCTION hybrid_index_bench.prepare(p_config text, p_dataset text,
										   p_target text DEFAULT 'indexed') RETURNS regclass
LANGUAGE plpgsql AS $$
DECLARE
	inst hybrid_index_bench.instance := hybrid_index_bench._instance(p_config, p_dataset);
	sch name := 'hybrid_index_bench_data';
	src text;
	tbl text;
	want_rows text;
	want_index boolean;
BEGIN
	IF p_target NOT IN ('base', 'empty', 'empty_indexed', 'base_indexed', 'indexed') THEN
		RAISE EXCEPTION 'unknown target state "%"', p_target;
	END IF;
	PERFORM hybrid_index_bench._apply_settings(p_config);
	SELECT table_name INTO STRICT src FROM hybrid_index_bench.dataset WHERE name = p_dataset;
	tbl := format('%I.%I', sch, inst.table_name);
	want_rows := CASE WHEN p_target LIKE 'empty%' THEN 'empty'
					  WHEN p_target LIKE 'base%' OR inst.state IN ('empty', 'stale', 'dirty') THEN 'base'
					  ELSE inst.state END;
	want_index := p_target LIKE '%indexed';
	IF inst.state IS DISTINCT FROM want_rows THEN
		IF inst.has_index THEN
			EXECUTE format('DROP INDEX %I.%I', sch, inst.index_name);
		END IF;
		EXECUTE format('TRUNCATE %s', tbl);
		IF want_rows = 'base' THEN
			EXECUTE format('INSERT INTO %s (id, geom) SELECT id, geom FROM %I.%I ORDER BY id',
						   tbl, sch, src);
		END IF;
		EXECUTE format('ANALYZE %s', tbl);
		inst := hybrid_index_bench._set_state(inst, want_rows);
	END IF;
	inst := hybrid_index_bench._set_state(inst, inst.state);
	IF inst.has_index AND NOT want_index THEN
		EXECUTE format('DROP INDEX %I.%I', sch, inst.index_name);
		inst := hybrid_index_bench._set_state(inst, inst.state);
	END IF;
	IF want_index AND NOT inst.has_index THEN
		EXECUTE hybrid_index_bench.index_ddl(p_config, tbl::regclass, inst.index_name);
		inst := hybrid_index_bench._set_state(inst, inst.state);
	END IF;
	RETURN CASE WHEN inst.has_index THEN format('%I.%I', sch, inst.index_name)::regclass END;
END $$;
COMMENT ON FUNCTION hybrid_index_bench.prepare(text, text, text) IS
	'Bring the work table of a configuration on a dataset into a state (base, empty, empty_indexed, base_indexed, indexed)';

-- Build the configuration's index on the dataset (if not built); returns it
CREATE FUNCTION hybrid_index_bench.build_index(p_config text, p_dataset text) RETURNS regclass
LANGUAGE sql AS $$
	SELECT hybrid_index_bench.prepare(p_config, p_dataset, 'indexed')
$$;

-- Remove the work tables (of a dataset, of a configuration, or all)
CREATE FUNCTION hybrid_index_bench.drop_instances(p_dataset text DEFAULT NULL,
												  p_config text DEFAULT NULL) RETURNS int
LANGUAGE plpgsql AS $$
DECLARE
	inst hybrid_index_bench.instance;
	n int := 0;
BEGIN
	FOR inst IN SELECT * FROM hybrid_index_bench.instance
				WHERE (p_dataset IS NULL OR dataset = p_dataset)
				  AND (p_config IS NULL OR config = p_config) LOOP
		PERFORM hybrid_index_bench._drop_table(inst.table_name);
		DELETE FROM hybrid_index_bench.instance WHERE dataset = inst.dataset AND config = inst.config;
		n := n + 1;
	END LOOP;
	RETURN n;
END $$;

-- Make the index of a configuration on a dataset durable in its files, so
-- that a restart has nothing to replay (bench/run calls it, and CHECKPOINT,
-- before every cold run: replaying the redo log at first use would read
-- the index into the cache).  Returns whether there was such an index.
CREATE FUNCTION hybrid_index_bench.checkpoint_index(p_config text, p_dataset text) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
	inst hybrid_index_bench.instance;
	idx regclass;
BEGIN
	SELECT * INTO inst FROM hybrid_index_bench.instance WHERE dataset = p_dataset AND config = p_config;
	IF NOT FOUND THEN
		RETURN false;
	END IF;
	idx := to_regclass(format('%I.%I', 'hybrid_index_bench_data', inst.index_name));
	IF idx IS NULL THEN
		RETURN false;
	END IF;
	IF hybrid_index_bench.is_hybrid_am((SELECT a.amname FROM pg_catalog.pg_class c
										JOIN pg_catalog.pg_am a ON a.oid = c.relam WHERE c.oid = idx)) THEN
		PERFORM hybrid_index_bench._checkpoint(idx);
	END IF;
	RETURN true;
END $$;
