--
-- include_columns: INCLUDE columns (issue 42) in every AM.  Index-only
-- scans return the included values (int, text of any length, NULLs) next
-- to the point: answers equal a sequential scan's, for filters
-- (ST_DWithin, &&) and kNN, after inserts, updates, deletes and VACUUM;
-- hybrid_index_check(heapallindexed) compares every row's included values
-- with the table's.  A row whose included values do not fit a quarter of
-- a page is refused with an error, and nothing of it stays.
--
SET client_min_messages = warning;
SELECT setseed(0.515);
CREATE SCHEMA inc;
CREATE TABLE inc.t (id int, name text, cat int, geom geometry(Point, 4326));
INSERT INTO inc.t
  SELECT i, CASE WHEN i % 10 = 0 THEN NULL ELSE 'place ' || i END, i % 7,
         ST_SetSRID(ST_MakePoint(random() * 100, random() * 100), 4326)
  FROM generate_series(1, 4000) i;
-- long values (compressed in the row), NULL and EMPTY points
INSERT INTO inc.t
  SELECT 5000 + i, repeat('long ' || i, 150), NULL,
         ST_SetSRID(ST_MakePoint(random() * 100, random() * 100), 4326)
  FROM generate_series(1, 30) i;
INSERT INTO inc.t VALUES (6001, 'no point', 1, NULL), (6002, 'empty', 2, 'SRID=4326;POINT EMPTY');
VACUUM ANALYZE inc.t;

-- plan of q and whether its answer (as text, sorted) equals a sequential scan's
CREATE FUNCTION inc.same(q text, idx text, OUT ios boolean, OUT same boolean, OUT n bigint)
LANGUAGE plpgsql AS $$
DECLARE
  p text := '';
  l text;
  a text;
  b text;
BEGIN
  SET LOCAL enable_seqscan = off;
  SET LOCAL enable_bitmapscan = off;
  SET LOCAL enable_indexscan = on;
  SET LOCAL enable_indexonlyscan = on;
  FOR l IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    p := p || l || E'\n';
  END LOOP;
  ios := position('Index Only Scan using ' || idx IN p) > 0;
  EXECUTE format('SELECT md5(string_agg(s::text, %L ORDER BY s::text)), count(*) FROM (%s) s', ',', q)
    INTO a, n;
  SET LOCAL enable_seqscan = on;
  SET LOCAL enable_indexonlyscan = off;
  SET LOCAL enable_indexscan = off;
  EXECUTE format('SELECT md5(string_agg(s::text, %L ORDER BY s::text)) FROM (%s) s', ',', q)
    INTO b;
  same := a IS NOT DISTINCT FROM b;
END $$;

CREATE FUNCTION inc.checks(idx text)
RETURNS TABLE (query text, ios boolean, same boolean, n bigint)
LANGUAGE plpgsql AS $$
DECLARE
  q text;
BEGIN
  FOREACH q IN ARRAY ARRAY[
    'SELECT id, name FROM inc.t WHERE ST_DWithin(geom, ''SRID=4326;POINT(50 50)''::geometry, 9)',
    'SELECT id, name, cat FROM inc.t WHERE geom && ST_MakeEnvelope(10, 60, 35, 90, 4326)',
    'SELECT name FROM inc.t WHERE geom && ST_MakeEnvelope(-1, -1, 101, 101, 4326) AND name LIKE ''long%''',
    -- (EMPTY @ x holds from PostGIS 3.4 on: EMPTY rows left out)
    'SELECT id, geom FROM inc.t WHERE geom @ ST_MakeEnvelope(20, 20, 30, 30, 4326) AND NOT ST_IsEmpty(geom)',
    -- the 40 nearest: distances have no ties here
    'SELECT id, name FROM inc.t ORDER BY geom <-> ''SRID=4326;POINT(33 44)''::geometry LIMIT 40',
    -- (a polygon beside the points: no ties at distance 0)
    'SELECT id FROM inc.t ORDER BY geom <-> ''SRID=4326;POLYGON((110 60, 120 60, 115 70, 110 60))''::geometry LIMIT 25']
  LOOP
    SELECT * INTO ios, same, n FROM inc.same(q, idx);
    query := regexp_replace(q, '^SELECT (.*) FROM inc.t ', '\1: ');
    RETURN NEXT;
  END LOOP;
END $$;

CREATE FUNCTION inc.run(am text) RETURNS TABLE (step text, query text, ios boolean, same boolean, n bigint)
LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('CREATE INDEX t_x ON inc.t USING %s (geom) INCLUDE (id, name, cat)', am);
  PERFORM hybrid_index_check('inc.t_x', heapallindexed => true);
  RETURN QUERY SELECT 'built', c.* FROM inc.checks('t_x') c;
  EXECUTE 'DROP INDEX inc.t_x';
END $$;

SELECT * FROM inc.run('hyrtree');
SELECT * FROM inc.run('efind');
SELECT * FROM inc.run('lbgrid');
SELECT * FROM inc.run('hgrid');

-- changes: inserts (one page of rows through splits), updates, deletes,
-- VACUUM; every AM at once on the same table
CREATE INDEX t_h ON inc.t USING hyrtree (geom) INCLUDE (id, name) WITH (page_size = 2048);
CREATE INDEX t_e ON inc.t USING efind (geom) INCLUDE (name, id) WITH (page_size = 2048, buffer_size = 16);
CREATE INDEX t_l ON inc.t USING lbgrid (geom) INCLUDE (id, name) WITH (page_size = 2048, bucket_capacity = 20);
CREATE INDEX t_g ON inc.t USING hgrid (geom hgrid_geometry_ops) INCLUDE (id, name) WITH (page_size = 2048);
INSERT INTO inc.t
  SELECT 7000 + i, 'new ' || i, i % 3, ST_SetSRID(ST_MakePoint(random() * 100, random() * 100), 4326)
  FROM generate_series(1, 3000) i;
UPDATE inc.t SET name = 'renamed ' || id WHERE id % 9 = 4;
DELETE FROM inc.t WHERE id % 13 = 0;
VACUUM inc.t;
INSERT INTO inc.t VALUES (9001, 'after vacuum', 0, 'SRID=4326;POINT(50 50)');
SELECT i, hybrid_index_check(i, heapallindexed => true)
  FROM unnest(ARRAY['inc.t_h', 'inc.t_e', 'inc.t_l', 'inc.t_g']::regclass[]) i;
-- the rows are kept in the Z-order of their entries (0.2.0: heap order)
SELECT i, hybrid_index_inspect(i)->>'include_order' AS include_order
  FROM unnest(ARRAY['inc.t_h', 'inc.t_e', 'inc.t_l', 'inc.t_g']::regclass[]) i;
SELECT 'hyrtree' AS am, c.query, c.same, c.n FROM inc.checks('t_h') c
WHERE c.query LIKE 'id, name:%';
DROP INDEX inc.t_h, inc.t_e, inc.t_l;
-- (which plan wins depends on the visibility map now: answers only)
SELECT c.query, c.same, c.n FROM inc.checks('t_g') c;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF)
  SELECT id, name FROM inc.t WHERE ST_DWithin(geom, 'SRID=4326;POINT(50 50)'::geometry, 2);
RESET enable_seqscan;
RESET enable_bitmapscan;

-- a row too large for the index is refused, as B-tree refuses one; the
-- statement leaves nothing behind
CREATE INDEX t_small ON inc.t USING hyrtree (geom) INCLUDE (name) WITH (page_size = 2048);
INSERT INTO inc.t
  SELECT 9100, string_agg(md5(g::text), ''), 0, 'SRID=4326;POINT(1 1)' FROM generate_series(1, 40) g;
SELECT count(*) FROM inc.t WHERE id = 9100;
SELECT hybrid_index_check('inc.t_small', heapallindexed => true);

-- a deep tree of INCLUDE rows (2 kB pages: inner pages split, the root
-- grows), filled in heap order, then out of it as inserts reuse the TIDs
-- VACUUM freed
CREATE TABLE inc.deep (id int, name text, geom geometry(Point, 4326));
INSERT INTO inc.deep SELECT i, 'row ' || i, ST_SetSRID(ST_MakePoint(i % 300, i / 300), 4326)
  FROM generate_series(1, 30000) i;
CREATE INDEX deep_h ON inc.deep USING hyrtree (geom) INCLUDE (name) WITH (page_size = 2048);
CREATE INDEX deep_e ON inc.deep USING efind (geom) INCLUDE (name)
  WITH (page_size = 2048, log_size = 128);
DELETE FROM inc.deep WHERE id % 3 = 0;
VACUUM inc.deep;
INSERT INTO inc.deep SELECT 40000 + i, 'again ' || i, ST_SetSRID(ST_MakePoint(i % 300, i / 300), 4326)
  FROM generate_series(1, 12000) i;
SELECT i, hybrid_index_check(i, heapallindexed => true)
  FROM unnest(ARRAY['inc.deep_h', 'inc.deep_e']::regclass[]) i;
SELECT same, n FROM inc.same('SELECT name FROM inc.deep WHERE geom && ST_MakeEnvelope(10, 10, 40, 60, 4326)', 'deep_h');

-- geometry without a Point type modifier: the included columns alone give
-- no index-only scan (the geometry is not returned), answers stay right
CREATE TABLE inc.u (id int, geom geometry);
INSERT INTO inc.u SELECT id, geom FROM inc.t;
CREATE INDEX u_x ON inc.u USING lbgrid (geom) INCLUDE (id);
VACUUM ANALYZE inc.u;
SELECT * FROM inc.same('SELECT id FROM inc.u WHERE geom && ST_MakeEnvelope(10, 10, 20, 20, 4326)', 'u_x');
SELECT hybrid_index_check('inc.u_x', heapallindexed => true);
RESET ALL;
DROP SCHEMA inc CASCADE;
