--
-- points_ios: exact points and index-only scans (issue 42) in every AM.
-- A geometry(Point, srid) column is returned by the index: plans use Index
-- Only Scan, the geometries returned are byte for byte the heap's
-- (ST_AsEWKB compared with a sequential scan's), also after updates clear
-- visibility-map bits, for NULL and EMPTY points, SRID 4326 and 0, and a
-- geometry(Point) column holding points of another SRID (those come from
-- the heap).  kNN over points hands out exact distances: ordered index-only
-- scans work, for point and polygon queries.  A column without the Point
-- type modifier gets no index-only scan.
--
SET client_min_messages = warning;
SELECT setseed(0.4242);
CREATE SCHEMA pio;

CREATE TABLE pio.p4326 (id int, geom geometry(Point, 4326));
INSERT INTO pio.p4326
  SELECT i, ST_SetSRID(ST_MakePoint(random() * 100, random() * 100), 4326)
  FROM generate_series(1, 4000) i;
-- duplicates, points on float-rounding edges, NULL and EMPTY
INSERT INTO pio.p4326 SELECT 5000 + i, geom FROM pio.p4326 WHERE id <= 200;
INSERT INTO pio.p4326 VALUES
  (6001, 'SRID=4326;POINT(10.000000000000002 20.1)'),
  (6002, 'SRID=4326;POINT(0.1 0.30000000000000004)'),
  (6003, NULL), (6004, 'SRID=4326;POINT EMPTY'), (6005, NULL);

-- geometry(Point) with SRID 0 points
CREATE TABLE pio.p0 (id int, geom geometry(Point));
INSERT INTO pio.p0
  SELECT i, ST_MakePoint(random() * 100, random() * 100) FROM generate_series(1, 3000) i;
INSERT INTO pio.p0 VALUES (5001, 'POINT EMPTY'), (5002, NULL);
-- and with a few of SRID 3857 (only the box operators: PostGIS's functions
-- refuse mixed SRIDs)
CREATE TABLE pio.pmix (id int, geom geometry(Point));
INSERT INTO pio.pmix SELECT * FROM pio.p0;
INSERT INTO pio.pmix
  SELECT 4000 + i, ST_SetSRID(ST_MakePoint(random() * 100, random() * 100), 3857)
  FROM generate_series(1, 50) i;

-- no type modifier: no index-only scan
CREATE TABLE pio.pany (id int, geom geometry);
INSERT INTO pio.pany SELECT id, geom FROM pio.p4326;

-- The plan of q, and whether an index-only scan of idx returns exactly the
-- rows (as EWKB) a sequential scan returns
CREATE FUNCTION pio.ios(q text, idx text, OUT ios boolean, OUT same boolean, OUT n bigint)
LANGUAGE plpgsql AS $$
DECLARE
  p text := '';
  l text;
  a text;
  b text;
BEGIN
  -- (enable_indexscan = off would disable index-only scans too)
  SET LOCAL enable_seqscan = off;
  SET LOCAL enable_bitmapscan = off;
  SET LOCAL enable_indexscan = on;
  SET LOCAL enable_indexonlyscan = on;
  FOR l IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    p := p || l || E'\n';
  END LOOP;
  ios := position('Index Only Scan using ' || idx IN p) > 0;
  EXECUTE format('SELECT md5(string_agg(v, %L ORDER BY v)), count(*) FROM (%s) s(v)',
                 ',', replace(q, 'SELECT geom', 'SELECT coalesce(ST_AsEWKB(geom)::text, ''null'')'))
    INTO a, n;
  SET LOCAL enable_seqscan = on;
  SET LOCAL enable_indexonlyscan = off;
  SET LOCAL enable_indexscan = off;
  EXECUTE format('SELECT md5(string_agg(v, %L ORDER BY v)) FROM (%s) s(v)',
                 ',', replace(q, 'SELECT geom', 'SELECT coalesce(ST_AsEWKB(geom)::text, ''null'')'))
    INTO b;
  same := a IS NOT DISTINCT FROM b;
END $$;

-- kNN: the k nearest by index-only scan against a sorted sequential scan:
-- the same distances in the same order, each row returned a row at that
-- distance (ties may come in any order)
CREATE FUNCTION pio.knn(tbl text, idx text, q text, k int, OUT ios boolean, OUT same boolean)
LANGUAGE plpgsql AS $$
DECLARE
  p text := '';
  l text;
  s text := format('SELECT geom FROM %s WHERE geom IS NOT NULL ORDER BY geom <-> %L::geometry LIMIT %s',
                   tbl, q, k);
  a float8[];
  b float8[];
  bad int;
BEGIN
  -- (enable_indexscan = off would disable index-only scans too)
  SET LOCAL enable_seqscan = off;
  SET LOCAL enable_bitmapscan = off;
  SET LOCAL enable_indexscan = on;
  SET LOCAL enable_indexonlyscan = on;
  FOR l IN EXECUTE 'EXPLAIN (COSTS OFF) ' || s LOOP
    p := p || l || E'\n';
  END LOOP;
  ios := position('Index Only Scan using ' || idx IN p) > 0;
  EXECUTE format('CREATE TEMP TABLE knn_out AS SELECT row_number() OVER () AS r, geom FROM (%s) s', s);
  SELECT array_agg(geom <-> q::geometry ORDER BY r) INTO a FROM knn_out;
  SET LOCAL enable_seqscan = on;
  SET LOCAL enable_indexonlyscan = off;
  EXECUTE format('SELECT array_agg(d ORDER BY d) FROM (SELECT geom <-> %L::geometry AS d FROM %s
                  WHERE geom IS NOT NULL ORDER BY 1 LIMIT %s) s', q, tbl, k) INTO b;
  EXECUTE format('SELECT count(*) FROM knn_out o WHERE NOT EXISTS (SELECT 1 FROM %s t
                  WHERE ST_AsEWKB(t.geom) = ST_AsEWKB(o.geom))', tbl) INTO bad;
  DROP TABLE knn_out;
  same := a = b AND bad = 0;
END $$;

CREATE FUNCTION pio.check_all(tbl text, idx text, srid int, boxonly boolean DEFAULT false)
RETURNS TABLE (query text, ios boolean, same boolean, n bigint)
LANGUAGE plpgsql AS $$
DECLARE
  w text := format('ST_MakeEnvelope(10, 10, 30, 40, %s)', srid);
  p text := format('ST_SetSRID(ST_MakePoint(50, 50), %s)', srid);
  q text;
BEGIN
  FOREACH q IN ARRAY ARRAY[
    format('SELECT geom FROM %s WHERE geom && %s', tbl, w),
    -- (EMPTY @ x and EMPTY ~ x hold from PostGIS 3.4 on: EMPTY rows left out)
    format('SELECT geom FROM %s WHERE geom @ %s AND NOT ST_IsEmpty(geom)', tbl, w),
    format('SELECT geom FROM %s WHERE geom ~= ST_SetSRID(''POINT(10.000000000000002 20.1)''::geometry, %s)', tbl, srid),
    format('SELECT geom FROM %s WHERE geom ~ ST_SetSRID(''POINT(0.1 0.30000000000000004)''::geometry, %s) AND NOT ST_IsEmpty(geom)', tbl, srid),
    format('SELECT geom FROM %s WHERE ST_DWithin(geom, %s, 7.5)', tbl, p),
    format('SELECT geom FROM %s WHERE ST_Intersects(geom, ST_Buffer(%s, 9))', tbl, p),
    format('SELECT geom FROM %s WHERE geom && ST_MakeEnvelope(-1, -1, 200, 200, %s)', tbl, srid)]
  LOOP
    CONTINUE WHEN boxonly AND q ~ '(ST_DWithin|ST_Intersects)';
    SELECT * INTO ios, same, n FROM pio.ios(q, idx);
    query := regexp_replace(q, '^SELECT geom FROM [a-z0-9.]+ WHERE ', '');
    RETURN NEXT;
  END LOOP;
  query := 'count(*) &&';
  SELECT * INTO ios, same, n FROM pio.ios(format('SELECT count(*)::text FROM %s WHERE geom && %s', tbl, w), idx);
  RETURN NEXT;
  IF boxonly THEN
    RETURN;
  END IF;
  query := 'kNN point';
  SELECT k.ios, k.same, 60 INTO ios, same, n
    FROM pio.knn(tbl, idx, format('SRID=%s;POINT(50 50)', srid), 60) k;
  RETURN NEXT;
  query := 'kNN polygon';
  SELECT k.ios, k.same, 40 INTO ios, same, n
    FROM pio.knn(tbl, idx, format('SRID=%s;POLYGON((40 40, 45 40, 45 47, 40 40))', srid), 40) k;
  RETURN NEXT;
END $$;

CREATE FUNCTION pio.run(am text) RETURNS TABLE (tbl text, query text, ios boolean, same boolean, n bigint)
LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('CREATE INDEX p4326_x ON pio.p4326 USING %s (geom)', am);
  EXECUTE format('CREATE INDEX p0_x ON pio.p0 USING %s (geom)', am);
  EXECUTE format('CREATE INDEX pany_x ON pio.pany USING %s (geom)', am);
  EXECUTE format('CREATE INDEX pmix_x ON pio.pmix USING %s (geom)', am);
  RETURN QUERY SELECT 'p4326', c.* FROM pio.check_all('pio.p4326', 'p4326_x', 4326) c;
  RETURN QUERY SELECT 'p0', c.* FROM pio.check_all('pio.p0', 'p0_x', 0) c;
  RETURN QUERY SELECT 'pany', c.* FROM pio.check_all('pio.pany', 'pany_x', 4326) c
    WHERE c.query LIKE '%&&%' OR c.query LIKE 'kNN point';
  RETURN QUERY SELECT 'pmix', c.* FROM pio.check_all('pio.pmix', 'pmix_x', 0, true) c;
  EXECUTE 'DROP INDEX pio.p4326_x, pio.p0_x, pio.pany_x, pio.pmix_x';
END $$;

VACUUM ANALYZE pio.p4326, pio.p0, pio.pany, pio.pmix;

SELECT * FROM pio.run('hyrtree');
SELECT * FROM pio.run('efind');
SELECT * FROM pio.run('lbgrid');
SELECT * FROM pio.run('hgrid');

-- a vacuumed table needs no heap fetch; updates clear visibility-map bits
-- and the answers stay the same
CREATE INDEX p4326_h ON pio.p4326 USING hyrtree (geom);
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF)
  SELECT geom FROM pio.p4326 WHERE geom && ST_MakeEnvelope(10, 10, 30, 40, 4326);
UPDATE pio.p4326 SET geom = ST_SetSRID(ST_MakePoint(ST_Y(geom), ST_X(geom)), 4326)
  WHERE id % 7 = 0;
DELETE FROM pio.p4326 WHERE id % 11 = 0;
INSERT INTO pio.p4326 VALUES (7001, 'SRID=4326;POINT(15 15)'), (7002, NULL),
  (7003, 'SRID=4326;POINT EMPTY');
EXPLAIN (COSTS OFF)
  SELECT geom FROM pio.p4326 WHERE geom && ST_MakeEnvelope(10, 10, 30, 40, 4326);
RESET enable_seqscan;
RESET enable_bitmapscan;
-- (which plan wins now depends on the visibility map: answers only)
SELECT query, same, n FROM pio.check_all('pio.p4326', 'p4326_h', 4326);
DROP INDEX pio.p4326_h;
SELECT tbl, query, same, n FROM pio.run('lbgrid') WHERE tbl = 'p4326';

-- ORDER BY distances of points are exact: a plain index scan needs no
-- recheck, and the order equals a sorted sequential scan's
CREATE INDEX p0_e ON pio.p0 USING efind (geom);
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SET enable_indexonlyscan = off;
SELECT array_agg(id ORDER BY r) = (SELECT array_agg(id ORDER BY d, id)
  FROM (SELECT id, geom <-> 'POINT(33 66)'::geometry d FROM pio.p0
        WHERE ST_SRID(geom) = 0 ORDER BY 2, 1 LIMIT 100) s) AS same_order
FROM (SELECT id, row_number() OVER () r FROM
       (SELECT id FROM pio.p0 WHERE ST_SRID(geom) = 0
        ORDER BY geom <-> 'POINT(33 66)'::geometry LIMIT 100) s) t;
RESET ALL;
-- the entry format, as hybrid_index_inspect shows it
SELECT hybrid_index_inspect('pio.p0_e')->>'entry_format' AS entry_format;
DROP SCHEMA pio CASCADE;
