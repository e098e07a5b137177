-- bench_funcs.sql -- server-side timing helpers for bench/gist_compare.sh.
-- Every query of a set runs through EXECUTE ... USING (a one-shot plan made
-- with the actual window, as a client query would get); its duration is
-- measured with clock_timestamp() around the EXECUTE, so psql and network
-- overhead is not counted.  The functions return one row per query; the
-- rows are materialised first and stored by the caller after the set ends.

-- the query sets (x1 y1 x2 y2 = window; kNN: x1 y1 = query point)
CREATE TABLE IF NOT EXISTS bench_queries (
	kind text, qid int, x1 float8, y1 float8, x2 float8, y2 float8,
	PRIMARY KEY (kind, qid));

-- CPU time this backend has used so far, in ms (/proc/self/schedstat: ns on CPU)
CREATE OR REPLACE FUNCTION bench_cpu_ms() RETURNS float8 LANGUAGE sql AS
$$ SELECT split_part(pg_read_file('/proc/self/schedstat'), ' ', 1)::float8 / 1e6 $$;

-- run one query set (kind = range_* or knn10) against table p_table; the
-- backend CPU time of the whole pass is left in the setting bench.cpu_ms
CREATE OR REPLACE FUNCTION bench_run_set(p_table text, p_kind text)
RETURNS TABLE (qid int, ms float8, cnt bigint, ids int[])
LANGUAGE plpgsql AS $$
DECLARE
	q record;
	t0 timestamptz;
	c bigint;
	a int[];
	knn_sql text := format('SELECT array_agg(id) FROM (SELECT id FROM %I ORDER BY geom <-> ST_SetSRID(ST_MakePoint($1, $2), 4326) LIMIT 10) s', p_table);
	range_sql text := format('SELECT count(*) FROM %I WHERE geom && ST_MakeEnvelope($1, $2, $3, $4, 4326)', p_table);
	cpu0 float8 := bench_cpu_ms();
BEGIN
	FOR q IN SELECT * FROM bench_queries b WHERE b.kind = p_kind ORDER BY b.qid LOOP
		IF p_kind LIKE 'knn%' THEN
			t0 := clock_timestamp();
			EXECUTE knn_sql INTO a USING q.x1, q.y1;
			ms := 1000 * extract(epoch FROM clock_timestamp() - t0);
			cnt := coalesce(array_length(a, 1), 0);
			ids := a;
		ELSE
			t0 := clock_timestamp();
			EXECUTE range_sql INTO c USING q.x1, q.y1, q.x2, q.y2;
			ms := 1000 * extract(epoch FROM clock_timestamp() - t0);
			cnt := c;
			ids := NULL;
		END IF;
		qid := q.qid;
		RETURN NEXT;
	END LOOP;
	PERFORM set_config('bench.cpu_ms', (bench_cpu_ms() - cpu0)::text, false);
END $$;

-- 100k single-row INSERTs, each through the index's aminsert (ids > N).
-- bench_make_insert_fn('pts_gist') creates bench_insert_pts_gist(): a loop
-- with a static INSERT (cached plan, as an application's prepared INSERT).
CREATE OR REPLACE FUNCTION bench_make_insert_fn(p_table text)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE format($f$
		CREATE OR REPLACE FUNCTION %I() RETURNS bigint LANGUAGE plpgsql AS $b$
		DECLARE
			r record;
			n bigint := 0;
		BEGIN
			FOR r IN SELECT id, geom FROM bench_inserts ORDER BY id LOOP
				INSERT INTO %I (id, geom) VALUES (r.id, r.geom);
				n := n + 1;
			END LOOP;
			RETURN n;
		END $b$ $f$, 'bench_insert_' || p_table, p_table);
END $$;

-- raw per-query results of all runs
CREATE TABLE IF NOT EXISTS bench_times (
	n bigint, idx text, kind text, mode text, rep int,
	qid int, ms float8, cnt bigint, ids int[]);
