-- Benchmarks from SQL: query sets ---------------------------------------------
--
-- Query sets are drawn for a dataset, reproducibly from a seed.
-- distribution 'uniform': positions uniform in the dataset's extent;
-- 'data': positions at random rows of the dataset (the data's skew).

-- Register (or replace) a query set; returns the dataset row
CREATE FUNCTION hybrid_index_bench._query_set_begin(p_name text, p_dataset text, p_kind text,
	p_n int, p_params jsonb) RETURNS hybrid_index_bench.dataset
LANGUAGE plpgsql AS $$
DECLARE
	ds hybrid_index_bench.dataset;
BEGIN
	SELECT * INTO ds FROM hybrid_index_bench.dataset WHERE name = p_dataset;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'dataset "%" does not exist', p_dataset;
	END IF;
	IF ds.n_rows = 0 OR ds.extent IS NULL THEN
		RAISE EXCEPTION 'dataset "%" is empty', p_dataset;
	END IF;
	IF p_n IS NULL OR p_n < 1 THEN
		RAISE EXCEPTION 'a query set needs at least one query';
	END IF;
	IF p_params->>'distribution' NOT IN ('uniform', 'data') THEN
		RAISE EXCEPTION 'unknown distribution "%"', p_params->>'distribution'
			USING HINT = 'Use uniform or data.';
	END IF;
	INSERT INTO hybrid_index_bench.query_set (name, dataset, kind, n, params)
		VALUES (p_name, p_dataset, p_kind, p_n, p_params)
		ON CONFLICT (name) DO UPDATE
			SET dataset = EXCLUDED.dataset, kind = EXCLUDED.kind, n = EXCLUDED.n,
				params = EXCLUDED.params, created_at = now();
	DELETE FROM hybrid_index_bench.query WHERE set_name = p_name;
	PERFORM hybrid_index_bench._seed((p_params->>'seed')::bigint);
	RETURN ds;
END $$;

-- n random positions (x, y), qid 1..n, following the distribution
CREATE FUNCTION hybrid_index_bench._positions(ds hybrid_index_bench.dataset, p_n int,
	p_distribution text) RETURNS TABLE (qid int, x float8, y float8, u float8, v float8)
LANGUAGE plpgsql AS $$
BEGIN
	IF p_distribution = 'uniform' THEN
		RETURN QUERY
			SELECT i, ST_XMin(ds.extent) + random() * (ST_XMax(ds.extent) - ST_XMin(ds.extent)),
					  ST_YMin(ds.extent) + random() * (ST_YMax(ds.extent) - ST_YMin(ds.extent)),
					  random(), random()
			FROM generate_series(1, p_n) i;
	ELSE
		RETURN QUERY EXECUTE format(
			'WITH r AS MATERIALIZED (SELECT i, 1 + floor(random() * $1)::bigint AS id, '
			'                               random() AS u, random() AS v '
			'                        FROM generate_series(1, $2) i) '
			'SELECT r.i, ST_X(p), ST_Y(p), r.u, r.v FROM r JOIN '
			'  (SELECT id, CASE WHEN GeometryType(geom) = ''POINT'' THEN geom '
			'               ELSE ST_PointOnSurface(geom) END AS p FROM %I.%I) d '
			'  ON d.id = r.id ORDER BY r.i',
			'hybrid_index_bench_data', ds.table_name)
			USING ds.n_rows, p_n;
	END IF;
END $$;

-- Windows covering p_area_pct percent of the dataset's extent, with the
-- extent's aspect ratio, lying inside the extent: uniform, or centred on
-- data points (shifted back inside the extent at its borders).
CREATE FUNCTION hybrid_index_bench.make_windows(p_name text, p_dataset text, p_n int,
	p_area_pct float8, p_distribution text DEFAULT 'uniform', p_seed bigint DEFAULT 1)
RETURNS int
LANGUAGE plpgsql AS $$
DECLARE
	ds hybrid_index_bench.dataset;
	f float8;
	w float8;
	h float8;
BEGIN
	IF p_area_pct IS NULL OR p_area_pct <= 0 OR p_area_pct > 100 THEN
		RAISE EXCEPTION 'window area must be in (0, 100] percent of the extent';
	END IF;
	ds := hybrid_index_bench._query_set_begin(p_name, p_dataset, 'window', p_n,
		jsonb_build_object('area_pct', p_area_pct, 'distribution', p_distribution, 'seed', p_seed));
	f := sqrt(p_area_pct / 100.0);
	w := (ST_XMax(ds.extent) - ST_XMin(ds.extent)) * f;
	h := (ST_YMax(ds.extent) - ST_YMin(ds.extent)) * f;
	INSERT INTO hybrid_index_bench.query (set_name, qid, geom)
		SELECT p_name, p.qid,
			   ST_MakeEnvelope(x0, y0, x0 + w, y0 + h, ds.srid)
		FROM hybrid_index_bench._positions(ds, p_n, p_distribution) p,
			 LATERAL (SELECT
				CASE WHEN p_distribution = 'uniform'
					 THEN ST_XMin(ds.extent) + p.u * (ST_XMax(ds.extent) - ST_XMin(ds.extent) - w)
					 ELSE least(greatest(p.x - w / 2, ST_XMin(ds.extent)), ST_XMax(ds.extent) - w)
				END AS x0,
				CASE WHEN p_distribution = 'uniform'
					 THEN ST_YMin(ds.extent) + p.v * (ST_YMax(ds.extent) - ST_YMin(ds.extent) - h)
					 ELSE least(greatest(p.y - h / 2, ST_YMin(ds.extent)), ST_YMax(ds.extent) - h)
				END AS y0) c;
	RETURN p_n;
END $$;
COMMENT ON FUNCTION hybrid_index_bench.make_windows(text, text, int, float8, text, bigint) IS
	'Query set of n windows of area_pct % of the dataset extent (uniform or following the data)';

-- kNN query points (k is stored with the set)
CREATE FUNCTION hybrid_index_bench.make_knn_points(p_name text, p_dataset text, p_n int,
	p_k int DEFAULT 10, p_distribution text DEFAULT 'uniform', p_seed bigint DEFAULT 1)
RETURNS int
LANGUAGE plpgsql AS $$
DECLARE
	ds hybrid_index_bench.dataset;
BEGIN
	IF p_k IS NULL OR p_k < 1 THEN
		RAISE EXCEPTION 'k must be at least 1';
	END IF;
	ds := hybrid_index_bench._query_set_begin(p_name, p_dataset, 'knn', p_n,
		jsonb_build_object('k', p_k, 'distribution', p_distribution, 'seed', p_seed));
	INSERT INTO hybrid_index_bench.query (set_name, qid, geom)
		SELECT p_name, p.qid, ST_SetSRID(ST_MakePoint(p.x, p.y), ds.srid)
		FROM hybrid_index_bench._positions(ds, p_n, p_distribution) p;
	RETURN p_n;
END $$;

-- Groups of p_group_size points of the dataset (the thesis' group point
-- queries, run as geom && ANY(points))
CREATE FUNCTION hybrid_index_bench.make_point_groups(p_name text, p_dataset text, p_n int,
	p_group_size int DEFAULT 10, p_seed bigint DEFAULT 1) RETURNS int
LANGUAGE plpgsql AS $$
DECLARE
	ds hybrid_index_bench.dataset;
BEGIN
	IF p_group_size IS NULL OR p_group_size < 1 THEN
		RAISE EXCEPTION 'a point group needs at least one point';
	END IF;
	ds := hybrid_index_bench._query_set_begin(p_name, p_dataset, 'point_group', p_n,
		jsonb_build_object('group_size', p_group_size, 'distribution', 'data', 'seed', p_seed));
	INSERT INTO hybrid_index_bench.query (set_name, qid, geoms)
		SELECT p_name, 1 + (p.qid - 1) / p_group_size,
			   array_agg(ST_SetSRID(ST_MakePoint(p.x, p.y), ds.srid) ORDER BY p.qid)
		FROM hybrid_index_bench._positions(ds, p_n * p_group_size, 'data') p
		GROUP BY 1 + (p.qid - 1) / p_group_size;
	RETURN p_n;
END $$;
