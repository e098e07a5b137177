--
-- postgis_functions: PostGIS predicates as users write them use our
-- indexes (hi_planner.c adds the box condition each call implies).  For
-- every access method, every function and both argument orders, over
-- points, lines, polygons, NULL and EMPTY: the index scan and the bitmap
-- scan return exactly what a sequential scan of the query as written
-- returns (hybrid_index.postgis_functions = off), and the plan uses the
-- index.  Then prepared statements with generic plans, a join by index
-- nested loop, PL/pgSQL, and tables without our indexes left untouched.
--
\set ECHO none
SELECT to_regproc('hit.diff') IS NULL AS need_hit \gset
\if :need_hit
\o /dev/null
\i sql/hyrtree_00_setup.sql
\o
\endif
\set ECHO all
SET client_min_messages = warning;
SELECT setseed(0.577);

CREATE TABLE pf (id bigint, geom geometry);
INSERT INTO pf SELECT i, ST_MakePoint(random() * 100, random() * 100)
  FROM generate_series(1, 1500) i;
INSERT INTO pf SELECT 2000 + i, ST_Buffer(ST_MakePoint(random() * 100, random() * 100),
                                          0.5 + random() * 4, 'quad_segs=2')
  FROM generate_series(1, 300) i;
INSERT INTO pf SELECT 3000 + i, ST_MakeLine(ST_MakePoint(x, y), ST_MakePoint(x + 3, y + 1))
  FROM (SELECT i, random() * 100 AS x, random() * 100 AS y FROM generate_series(1, 200) i) s;
-- exact copies of query geometries (ST_Equals, ST_Covers on the boundary)
INSERT INTO pf VALUES (4001, 'POLYGON((20 20, 40 20, 40 35, 20 35, 20 20))'),
                      (4002, 'POINT(50 50)'), (4003, 'LINESTRING(10 80, 30 90)'),
                      (4004, 'POINT(20 20)'), (4005, 'POINT(30 20)');
INSERT INTO pf VALUES (5001, NULL), (5002, 'POINT EMPTY'), (5003, 'POLYGON EMPTY'),
                      (5004, 'GEOMETRYCOLLECTION EMPTY');

-- ids of a query under an access path: as written for the sequential scan
-- (no added condition), with the added condition for index and bitmap scans
CREATE FUNCTION pg_temp.pf_ids(q text, path text) RETURNS bigint[]
LANGUAGE plpgsql AS $$
DECLARE
  r bigint[];
BEGIN
  PERFORM set_config('hybrid_index.postgis_functions', (path <> 'seq')::text, true);
  r := hit.ids(q, path);
  PERFORM set_config('hybrid_index.postgis_functions', 'on', true);
  RETURN r;
END $$;

-- every function and argument order on table tbl with index idx: rows,
-- and whether index and bitmap scans agree with the query as written and
-- use the index
CREATE FUNCTION pg_temp.pf_check(tbl text, idx text)
RETURNS TABLE (fn text, n int, index_same boolean, bitmap_same boolean, plans boolean)
LANGUAGE plpgsql AS $$
DECLARE
  f text;
  g text;
  q text;
  s bigint[];
  ok_i boolean;
  ok_b boolean;
  ok_p boolean;
  total int;
BEGIN
  FOREACH f IN ARRAY ARRAY['ST_Intersects', 'ST_Overlaps', 'ST_Touches', 'ST_Crosses',
                           'ST_Contains', 'ST_ContainsProperly', 'ST_Covers', 'ST_Within',
                           'ST_CoveredBy', 'ST_Equals', 'ST_DWithin', 'ST_DFullyWithin'] LOOP
    ok_i := true; ok_b := true; ok_p := true; total := 0;
    FOREACH g IN ARRAY ARRAY['POLYGON((20 20, 40 20, 40 35, 20 35, 20 20))',
                             'POINT(50 50)', 'LINESTRING(10 80, 30 90)',
                             'POLYGON((0 0, 100 0, 100 100, 0 100, 0 0))',
                             'POINT EMPTY', 'GEOMETRYCOLLECTION EMPTY'] LOOP
      FOREACH q IN ARRAY ARRAY[
          format('SELECT id FROM %s WHERE %s(geom, %L::geometry%s)', tbl, f, g,
                 CASE WHEN f IN ('ST_DWithin', 'ST_DFullyWithin') THEN ', 2.5' ELSE '' END),
          format('SELECT id FROM %s WHERE %s(%L::geometry, geom%s)', tbl, f, g,
                 CASE WHEN f IN ('ST_DWithin', 'ST_DFullyWithin') THEN ', 2.5' ELSE '' END)] LOOP
        s := pg_temp.pf_ids(q, 'seq');
        total := total + cardinality(s);
        ok_i := ok_i AND pg_temp.pf_ids(q, 'index') = s;
        ok_b := ok_b AND pg_temp.pf_ids(q, 'bitmap') = s;
        ok_p := ok_p AND hit.uses(q, 'index', idx) AND hit.uses(q, 'bitmap', idx);
      END LOOP;
    END LOOP;
    fn := f; n := total; index_same := ok_i; bitmap_same := ok_b; plans := ok_p;
    RETURN NEXT;
  END LOOP;
END $$;

CREATE TABLE pf_h AS SELECT * FROM pf;
CREATE INDEX pf_h_idx ON pf_h USING hyrtree (geom);
CREATE TABLE pf_e AS SELECT * FROM pf;
CREATE INDEX pf_e_idx ON pf_e USING efind (geom);
CREATE TABLE pf_l AS SELECT * FROM pf;
CREATE INDEX pf_l_idx ON pf_l USING lbgrid (geom);
CREATE TABLE pf_g AS SELECT * FROM pf;
CREATE INDEX pf_g_idx ON pf_g USING hgrid (geom);
ANALYZE pf_h, pf_e, pf_l, pf_g;

SELECT * FROM pg_temp.pf_check('pf_h', 'pf_h_idx');
-- the other access methods answer alike: only the rows that differ
SELECT 'efind' AS am, * FROM pg_temp.pf_check('pf_e', 'pf_e_idx')
  WHERE NOT (index_same AND bitmap_same AND plans);
SELECT 'lbgrid' AS am, * FROM pg_temp.pf_check('pf_l', 'pf_l_idx')
  WHERE NOT (index_same AND bitmap_same AND plans);
SELECT 'hgrid' AS am, * FROM pg_temp.pf_check('pf_g', 'pf_g_idx')
  WHERE NOT (index_same AND bitmap_same AND plans);
-- the same row counts for every access method
SELECT count(DISTINCT (fn, n)) = 12 AS same_counts
FROM (SELECT * FROM pg_temp.pf_check('pf_h', 'pf_h_idx')
      UNION ALL SELECT * FROM pg_temp.pf_check('pf_e', 'pf_e_idx')
      UNION ALL SELECT * FROM pg_temp.pf_check('pf_l', 'pf_l_idx')
      UNION ALL SELECT * FROM pg_temp.pf_check('pf_g', 'pf_g_idx')) s;

-- a NULL argument: nothing, through the index
SELECT hit.diff('SELECT id FROM pf_h WHERE ST_Intersects(geom, NULL::geometry)', 'pf_h_idx');

-- prepared statements with generic plans: the condition is on parameters
SET plan_cache_mode = force_generic_plan;
PREPARE pf_dw(geometry, float8) AS SELECT count(*) FROM pf_h WHERE ST_DWithin(geom, $1, $2);
PREPARE pf_in(geometry) AS SELECT count(*) FROM pf_h WHERE ST_Intersects($1, geom);
SELECT hit.plan('EXECUTE pf_dw(''POINT(50 50)'', 10)', 'default') ~ 'pf_h_idx' AS generic_uses_index;
EXECUTE pf_dw('POINT(50 50)', 10);
SET hybrid_index.postgis_functions = off;
PREPARE pf_dw_off(geometry, float8) AS SELECT count(*) FROM pf_h WHERE ST_DWithin(geom, $1, $2);
EXECUTE pf_dw_off('POINT(50 50)', 10);
SET hybrid_index.postgis_functions = on;
EXECUTE pf_in('POLYGON((20 20, 40 20, 40 35, 20 35, 20 20))');
SELECT count(*) FROM pf WHERE ST_Intersects('POLYGON((20 20, 40 20, 40 35, 20 35, 20 20))', geom);
RESET plan_cache_mode;

-- a join: an index nested loop over the inner table's index
CREATE TABLE pf_q (qid int, g geometry);
INSERT INTO pf_q SELECT i, ST_MakeEnvelope(i * 9, i * 9, i * 9 + 6, i * 9 + 6)
  FROM generate_series(0, 9) i;
ANALYZE pf_q;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_seqscan = off;
SELECT hit.plan('SELECT q.qid, p.id FROM pf_q q JOIN pf_h p ON ST_Intersects(p.geom, q.g)', 'default')
       ~ 'Nested Loop.*pf_h_idx' AS nestloop_uses_index;
SELECT count(*), sum(p.id) FROM pf_q q JOIN pf_h p ON ST_Intersects(p.geom, q.g);
RESET enable_seqscan;
SET hybrid_index.postgis_functions = off;
SELECT count(*), sum(p.id) FROM pf_q q JOIN pf_h p ON ST_Intersects(p.geom, q.g);
SET hybrid_index.postgis_functions = on;
RESET enable_hashjoin;
RESET enable_mergejoin;

-- PL/pgSQL
CREATE FUNCTION pg_temp.pf_near(p geometry, d float8) RETURNS bigint
LANGUAGE plpgsql AS $$
BEGIN
  RETURN (SELECT count(*) FROM pf_h WHERE ST_DWithin(geom, p, d));
END $$;
SELECT pg_temp.pf_near('POINT(50 50)', 10) AS plpgsql_count;

-- under OR nothing is implied: no added condition, same answer
SELECT hit.plan('SELECT id FROM pf_h WHERE ST_Intersects(geom, ''POINT(50 50)'') OR id = 1', 'default')
       ~ '&&' AS or_rewritten;
-- a table without our index is left as written (GiST gets PostGIS' own)
CREATE TABLE pf_plain AS SELECT * FROM pf;
CREATE TABLE pf_gist AS SELECT * FROM pf;
CREATE INDEX pf_gist_idx ON pf_gist USING gist (geom);
ANALYZE pf_plain, pf_gist;
SELECT hit.plan('SELECT id FROM pf_plain WHERE ST_Intersects(geom, ''POINT(50 50)'')', 'default')
       ~ '&&' AS plain_rewritten;
SELECT hit.plan('SELECT id FROM pf_gist WHERE ST_Intersects(geom, ''POINT(50 50)'')', 'default')
       ~ 'pf_gist_idx' AS gist_uses_its_index;
-- a volatile argument is not duplicated
SELECT hit.plan('SELECT id FROM pf_h WHERE ST_DWithin(geom, ''POINT(50 50)'', random())', 'default')
       ~ '&&' AS volatile_rewritten;

DROP TABLE pf, pf_h, pf_e, pf_l, pf_g, pf_q, pf_plain, pf_gist;
