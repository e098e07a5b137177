--
-- efind_policies: every flushing policy (m, mh, mha, mhao) with every read
-- buffer policy (lru, s2q, 2q), and every temporal control mode, each on
-- its own table filled one row at a time through a 16 kB buffer (2 kB
-- pages), so hundreds of flushes happen. For each: the last flush's degree
-- is its policy's formula (Eq. 4-7) recomputed from the unit it chose, the
-- read buffer has the shape of its policy, the temporal control counted
-- what it did, hybrid_index_check passes, and filters and kNN equal a
-- sequential scan -- after the insertions, and again after deletions,
-- VACUUM and more insertions.
--
-- one insertion per row in arrival order, as in the paper's workloads (a
-- batch goes in along a Hilbert curve and flushes far less often)
SET hybrid_index.insert_batch = 0;
SELECT setseed(0.77);
CREATE TABLE ep_src (id bigint, geom geometry);
INSERT INTO ep_src
  SELECT i, ST_Buffer(ST_MakePoint(random() * 1000, random() * 1000), 0.5 + random() * 12, 'quad_segs=1')
  FROM generate_series(1, 1200) i;
INSERT INTO ep_src
  SELECT 5000 + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 1300) i;
INSERT INTO ep_src VALUES (9001, NULL), (9002, 'POINT EMPTY');
CREATE TABLE ep_more (id bigint, geom geometry);
INSERT INTO ep_more
  SELECT 10000 + i, ST_Buffer(ST_MakePoint(random() * 1000, random() * 1000), 0.5 + random() * 12, 'quad_segs=1')
  FROM generate_series(1, 600) i;
CREATE TABLE epq (qid int, g geometry);
INSERT INTO epq
  SELECT i, ST_MakeEnvelope(x, y, x + w, y + h)
  FROM (SELECT i, random() * 1000 AS x, random() * 1000 AS y,
               random() * 250 AS w, random() * 250 AS h FROM generate_series(1, 3) i) s;

CREATE TABLE ep_cases (name text, flush text, rbuf text, tc text);
INSERT INTO ep_cases
  SELECT f || '_' || r, f, r, 'both'
  FROM unnest(ARRAY['m', 'mh', 'mha', 'mhao']) f, unnest(ARRAY['lru', 's2q', '2q']) r;
INSERT INTO ep_cases
  SELECT 'tc_' || t, 'mh', 's2q', t FROM unnest(ARRAY['none', 'reads', 'writes']) t;

-- build, fill and verify one case
CREATE FUNCTION ep_fill(c ep_cases,
                        OUT flushes int, OUT degree_ok boolean, OUT budget_ok boolean,
                        OUT rbuf_shape_ok boolean, OUT tc_ok boolean,
                        OUT check_ok boolean, OUT filters_ok boolean, OUT knn_ok boolean)
LANGUAGE plpgsql AS $$
DECLARE
  t text := 'ep_' || c.name;
  i text := 'ep_' || c.name || '_idx';
  e jsonb;
  d record;
BEGIN
  EXECUTE format('CREATE TABLE %I (id bigint, geom geometry)', t);
  EXECUTE format('CREATE INDEX %I ON %I USING efind (geom) WITH (page_size = 2048, buffer_size = 16, '
                 'flush_policy = %L, read_buffer_policy = %L, temporal_control = %L)',
                 i, t, c.flush, c.rbuf, c.tc);
  EXECUTE format('INSERT INTO %I SELECT * FROM ep_src ORDER BY id', t);
  EXECUTE format('ANALYZE %I', t);
  e := hit.ef(i);
  flushes := (e->'flushes'->>'count')::int;
  degree_ok := hit.ef_degree_ok(i) AND e->'flushes'->'last'->>'policy' = c.flush;
  budget_ok := (e->'write_buffer'->>'bytes')::int <= (e->'write_buffer'->>'budget_bytes')::int;
  rbuf_shape_ok := e->'read_buffer'->>'policy' = c.rbuf
    AND (e->'read_buffer'->>'hits')::int > 0
    AND CASE c.rbuf
          WHEN '2q' THEN (e->'read_buffer'->>'a1in')::int + (e->'read_buffer'->>'a1out')::int > 0
          ELSE (e->'read_buffer'->>'a1in')::int = 0 AND (e->'read_buffer'->>'a1out')::int = 0
        END;
  tc_ok := CASE WHEN c.tc IN ('writes', 'both')
                THEN (e->'temporal'->>'writes_sequential')::int + (e->'temporal'->>'writes_stride')::int
                     + (e->'temporal'->>'writes_union')::int + (e->'temporal'->>'writes_unfiltered')::int
                     = flushes
                ELSE (e->'temporal'->>'writes_sequential')::int + (e->'temporal'->>'writes_stride')::int
                     + (e->'temporal'->>'writes_union')::int + (e->'temporal'->>'writes_unfiltered')::int = 0
           END
       AND CASE WHEN c.tc IN ('reads', 'both')
                THEN (e->'temporal'->>'reads_precached')::int > 0
                ELSE (e->'temporal'->>'reads_precached')::int = 0
           END;
  check_ok := hybrid_index_check(i);
  SELECT * INTO d FROM hit.ef_diff_all(t, i, 'epq', 15);
  filters_ok := d.filters_ok;
  knn_ok := d.knn_ok;
  EXECUTE format('DELETE FROM %I WHERE id %% 3 = 0', t);
END $$;

-- after VACUUM and more insertions
CREATE FUNCTION ep_refill(c ep_cases,
                          OUT degree_ok boolean, OUT check_ok boolean,
                          OUT filters_ok boolean, OUT knn_ok boolean)
LANGUAGE plpgsql AS $$
DECLARE
  t text := 'ep_' || c.name;
  i text := 'ep_' || c.name || '_idx';
  d record;
BEGIN
  EXECUTE format('INSERT INTO %I SELECT * FROM ep_more ORDER BY id', t);
  degree_ok := hit.ef_degree_ok(i);
  check_ok := hybrid_index_check(i)
    AND (hybrid_index_inspect(i)->>'entries')::bigint =
        (SELECT count(*) FROM ep_src WHERE id % 3 <> 0 AND NOT ST_IsEmpty(geom)) + 600;
  SELECT * INTO d FROM hit.ef_diff_all(t, i, 'epq', 15);
  filters_ok := d.filters_ok;
  knn_ok := d.knn_ok;
END $$;

CREATE TABLE ep_results AS
  SELECT c.name, c.flush, c.rbuf, c.tc, r.*
  FROM ep_cases c, LATERAL ep_fill(c) r;
SELECT name, flushes > 50 AS many_flushes, degree_ok, budget_ok, rbuf_shape_ok, tc_ok,
       check_ok, filters_ok, knn_ok
  FROM ep_results ORDER BY name;

-- the flushing policies choose differently: their flush histories differ
SELECT rbuf, count(DISTINCT (hit.ef('ep_' || name || '_idx')->'flushes')::text) AS distinct_histories
  FROM ep_results WHERE tc = 'both' GROUP BY rbuf ORDER BY rbuf;

SELECT format('VACUUM %I', 'ep_' || name) FROM ep_cases ORDER BY name \gexec
SELECT c.name, r.* FROM ep_cases c, LATERAL ep_refill(c) r ORDER BY c.name;
