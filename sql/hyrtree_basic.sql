--
-- hyrtree_basic: every operator of hyrtree_geometry_ops on mixed data
-- (uniform and clustered points, duplicated grid points, polygons, lines,
-- multi-geometries with huge boxes, NULL and EMPTY), compared between a
-- sequential scan, an index scan and a bitmap scan; kNN compared between a
-- sorted sequential scan and the ordered index scan.
--
SELECT setseed(0.2024);

CREATE TABLE geoms (id bigint, kind text, geom geometry);
-- uniform points in [0,1000)^2
INSERT INTO geoms
  SELECT i, 'upoint', ST_MakePoint(random() * 1000, random() * 1000)
  FROM generate_series(1, 4000) i;
-- clustered points around 8 centres
INSERT INTO geoms
  SELECT 10000 + i, 'cpoint',
         ST_MakePoint(c.x + (random() + random() + random() - 1.5) * 15,
                      c.y + (random() + random() + random() - 1.5) * 15)
  FROM generate_series(1, 3000) i,
       LATERAL (SELECT (ARRAY[100, 250, 420, 600, 777, 850, 333, 900])[1 + i % 8] AS x,
                       (ARRAY[100, 800, 420, 650, 200, 900, 555, 30])[1 + i % 8] AS y) c;
-- integer grid points, each three times (exact duplicates, kNN ties)
INSERT INTO geoms
  SELECT 20000 + i, 'grid', ST_MakePoint(100 * (i % 10), 100 * ((i / 10) % 10))
  FROM generate_series(0, 299) i;
-- polygons of varied size
INSERT INTO geoms
  SELECT 30000 + i, 'polygon',
         ST_Buffer(ST_MakePoint(random() * 1000, random() * 1000),
                   1 + random() * random() * 60, 'quad_segs=2')
  FROM generate_series(1, 1500) i;
-- line segments
INSERT INTO geoms
  SELECT 40000 + i, 'line',
         ST_MakeLine(ST_MakePoint(x, y), ST_MakePoint(x + (random() - 0.5) * 80, y + (random() - 0.5) * 80))
  FROM (SELECT i, random() * 1000 AS x, random() * 1000 AS y FROM generate_series(1, 1000) i) s;
-- multipoints far apart: huge boxes covering the whole area
INSERT INTO geoms
  SELECT 50000 + i, 'multi',
         ST_Collect(ST_MakePoint(-500 + random() * 100, -500 + random() * 100),
                    ST_MakePoint(1500 + random() * 100, 1500 + random() * 100))
  FROM generate_series(1, 50) i;
-- NULL and EMPTY geometries: stored, never returned by a filter
INSERT INTO geoms SELECT 60000 + i, 'null', NULL FROM generate_series(1, 30) i;
INSERT INTO geoms
  SELECT 70000 + i, 'empty',
         (ARRAY['POINT EMPTY', 'POLYGON EMPTY', 'LINESTRING EMPTY',
                'GEOMETRYCOLLECTION EMPTY', 'MULTIPOINT EMPTY'])[1 + i % 5]::geometry
  FROM generate_series(1, 30) i;

SELECT kind, count(*) FROM geoms GROUP BY kind ORDER BY kind;

CREATE INDEX geoms_geom_idx ON geoms USING hyrtree (geom);
ANALYZE geoms;
SELECT hybrid_index_check('geoms_geom_idx');

-- the operator class is the default one for geometry
SELECT opc.opcname, opc.opcdefault, am.amname
  FROM pg_index i
  JOIN pg_opclass opc ON opc.oid = i.indclass[0]
  JOIN pg_am am ON am.oid = opc.opcmethod
 WHERE i.indexrelid = 'geoms_geom_idx'::regclass;

-- With default planner settings, selective queries use the index
EXPLAIN (COSTS OFF)
SELECT id FROM geoms WHERE geom && ST_MakeEnvelope(10, 10, 20, 20);
EXPLAIN (COSTS OFF)
SELECT id FROM geoms ORDER BY geom <-> 'POINT(1 1)'::geometry LIMIT 5;

-- Query geometries
CREATE TABLE qs (qid int, g geometry);
INSERT INTO qs
  SELECT i, ST_MakeEnvelope(x, y, x + w, y + h)
  FROM (SELECT i, random() * 1000 AS x, random() * 1000 AS y,
               random() * random() * 300 AS w, random() * random() * 300 AS h
        FROM generate_series(1, 40) i) s;
INSERT INTO qs VALUES
  (101, ST_MakeEnvelope(-10000, -10000, 10000, 10000)),  -- everything
  (102, ST_MakeEnvelope(2000, 2000, 3000, 3000)),        -- nothing
  (103, 'POINT(500 500)'),                               -- duplicated grid point
  (104, 'POINT(100 100)'),                               -- grid point in a cluster
  (105, ST_MakeEnvelope(100, 100, 200, 200)),            -- edges through grid points
  (106, 'LINESTRING(0 0, 1000 1000)'),
  (107, ST_MakeEnvelope(-600, -600, -400, -400)),        -- only multipoints
  (108, ST_MakeEnvelope(0, 0, 0, 1000)),                 -- degenerate box x = 0
  (109, 'POINT(0.1 0.7)');                               -- not float4-exact
-- geometries taken from the data: exact matches for ~= and ~
INSERT INTO qs
  SELECT 200 + row_number() OVER (ORDER BY id), geom FROM geoms
  WHERE id IN (5, 17, 10005, 20011, 30001, 30002, 40001, 40010, 50001);
-- points inside polygons: the polygons' boxes contain them (~)
INSERT INTO qs
  SELECT 300 + row_number() OVER (ORDER BY id), ST_PointOnSurface(geom) FROM geoms
  WHERE kind = 'polygon' AND id % 100 = 0;
SELECT count(*) AS query_geometries FROM qs;

-- Filters: seq vs index vs bitmap, per operator and argument order
CREATE TABLE ops (op text, sqltext text);
INSERT INTO ops VALUES
  ('&&',   'SELECT id FROM geoms WHERE geom && %L::geometry'),
  ('~=',   'SELECT id FROM geoms WHERE geom ~= %L::geometry'),
  ('~',    'SELECT id FROM geoms WHERE geom ~ %L::geometry'),
  ('@',    'SELECT id FROM geoms WHERE geom @ %L::geometry'),
  ('q&&',  'SELECT id FROM geoms WHERE %L::geometry && geom'),
  ('q@',   'SELECT id FROM geoms WHERE %L::geometry @ geom'),
  ('q~',   'SELECT id FROM geoms WHERE %L::geometry ~ geom'),
  ('&&+',  'SELECT id FROM geoms WHERE geom && %L::geometry AND kind <> ''line''');

CREATE TABLE results AS
  SELECT ops.op, qs.qid, d.*
  FROM ops CROSS JOIN qs,
       LATERAL hit.diff(format(ops.sqltext, qs.g), 'geoms_geom_idx') d;

SELECT op, count(*) AS queries, sum(n) AS total_rows,
       count(*) FILTER (WHERE n > 0) AS nonempty,
       bool_and(seq_plan) AS seq_plan,
       bool_and(index_same) AS index_same, bool_and(index_plan) AS index_plan,
       bool_and(bitmap_same) AS bitmap_same, bool_and(bitmap_plan) AS bitmap_plan
FROM results GROUP BY op ORDER BY op;
-- details of any failing query (expected: none)
SELECT * FROM results
WHERE NOT (seq_plan AND index_same AND index_plan AND bitmap_same AND bitmap_plan)
ORDER BY op, qid;

-- NULL and EMPTY rows never come out of a filter, even one covering all
SELECT count(*) AS null_or_empty_found
FROM geoms WHERE geom && ST_MakeEnvelope(-1e9, -1e9, 1e9, 1e9)
  AND (geom IS NULL OR ST_IsEmpty(geom));
SELECT hit.ids('SELECT id FROM geoms WHERE geom && ST_MakeEnvelope(-1e9, -1e9, 1e9, 1e9)', 'index')
     = (SELECT array_agg(id ORDER BY id) FROM geoms WHERE geom IS NOT NULL AND NOT ST_IsEmpty(geom))
  AS index_returns_all_nonempty;

-- An EMPTY query geometry: && matches nothing, but PostGIS' ~= says
-- EMPTY ~= EMPTY, so a sequential scan returns the EMPTY rows; hyrtree
-- answers the same through its null list (PostGIS' own GiST index returns
-- nothing there).  ~= EMPTY together with a box qual matches nothing.
SELECT q, d.* FROM (VALUES
    ('SELECT id FROM geoms WHERE geom && ''POINT EMPTY''::geometry'),
    ('SELECT id FROM geoms WHERE geom ~= ''POINT EMPTY''::geometry'),
    ('SELECT id FROM geoms WHERE geom ~= ''POLYGON EMPTY''::geometry'),
    ('SELECT id FROM geoms WHERE geom ~= ''POINT EMPTY''::geometry AND geom && ST_MakeEnvelope(-1e9, -1e9, 1e9, 1e9)'),
    ('SELECT id FROM geoms WHERE geom ~ ''POINT EMPTY''::geometry'),
    ('SELECT id FROM geoms WHERE geom @ ''POINT EMPTY''::geometry')) v(q),
  LATERAL hit.diff(q, 'geoms_geom_idx') d;

-- kNN: sorted seq scan vs ordered index scan
CREATE TABLE kq (kid int, g geometry);
INSERT INTO kq SELECT i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 12) i;
INSERT INTO kq VALUES
  (101, 'POINT(500 500)'),                          -- on duplicated grid points: ties
  (102, 'POINT(-3000 -3000)'),                      -- far outside the data
  (103, 'POINT(450 450)'),                          -- equidistant from 4 grid points
  (104, 'LINESTRING(10 990, 990 10)'),              -- non-point query
  (105, ST_Buffer('POINT(600 300)'::geometry, 50)); -- polygon query
CREATE TABLE kres AS
  SELECT k, kq.kid, d.*
  FROM unnest(ARRAY[1, 10, 100, 2500]) k CROSS JOIN kq,
       LATERAL hit.knn_diff('geoms', 'geoms_geom_idx', kq.g, k) d;
SELECT k, count(*) AS queries, sum(n) AS total_rows, bool_and(dist_same) AS dist_same,
       bool_and(ids_same) AS ids_same, bool_and(index_plan) AS index_plan,
       bool_and(seq_plan) AS seq_plan
FROM kres GROUP BY k ORDER BY k;
SELECT * FROM kres WHERE NOT (dist_same AND ids_same AND index_plan AND seq_plan) ORDER BY k, kid;

-- kNN over the whole table: every row, NULL and EMPTY rows last
SELECT n, dist_same, ids_same, index_plan
FROM hit.knn_diff('geoms', 'geoms_geom_idx', 'POINT(333 444)', NULL);
SELECT count(*) AS rows_returned,
       count(*) FILTER (WHERE d IS NULL) AS null_distance_rows,
       bool_and(d IS NULL) FILTER (WHERE ord > (SELECT count(*) FROM geoms) - 60) AS last_60_are_null_or_empty
FROM (SELECT d, row_number() OVER () AS ord
      FROM (SELECT * FROM hit.knn('geoms', 'POINT(333 444)', NULL, 'index')) k,
           unnest(k.ids, k.dists) u(id, d)) s;

-- kNN combined with a filter
SELECT k, bool_and(dist_same) AS dist_same, bool_and(ids_same) AS ids_same, bool_and(index_plan) AS index_plan
FROM unnest(ARRAY[5, 50]) k CROSS JOIN kq,
     LATERAL hit.knn_diff('geoms', 'geoms_geom_idx', kq.g, k,
                          'geom && ST_MakeEnvelope(200, 200, 700, 700)') d
GROUP BY k ORDER BY k;
SELECT k, bool_and(dist_same) AS dist_same, bool_and(ids_same) AS ids_same, bool_and(index_plan) AS index_plan
FROM unnest(ARRAY[5, 50]) k CROSS JOIN kq,
     LATERAL hit.knn_diff('geoms', 'geoms_geom_idx', kq.g, k, 'kind IN (''polygon'', ''line'')') d
GROUP BY k ORDER BY k;

-- The same answers as PostGIS' own GiST index
CREATE TABLE geoms_gist AS SELECT * FROM geoms;
CREATE INDEX geoms_gist_idx ON geoms_gist USING gist (geom);
SELECT bool_and(hit.ids(format('SELECT id FROM geoms WHERE geom && %L::geometry', g), 'index')
              = hit.ids(format('SELECT id FROM geoms_gist WHERE geom && %L::geometry', g), 'index')) AS same_as_gist
FROM qs;
SELECT bool_and((hit.knn('geoms', g, 20, 'index')).dists
              = (hit.knn('geoms_gist', g, 20, 'index')).dists) AS knn_same_as_gist
FROM kq;

-- key boxes: float4, rounded outward exactly like PostGIS
SELECT hybrid_index_key_box('POINT(1 2)') AS point_box,
       hybrid_index_key_box(ST_MakeEnvelope(-1.5, 2.25, 3, 4)) AS envelope_box,
       hybrid_index_key_box('LINESTRING(0 10, -5 3)') AS line_box;
SELECT b[1] <= 0.1 AND b[3] >= 0.1 AND b[1] < b[3] AND b[3] - b[1] < 1e-7
       AND b[1]::float4::float8 = b[1] AND b[3]::float4::float8 = b[3] AS rounded_outward
FROM hybrid_index_key_box('POINT(0.1 0.1)') b;
SELECT hybrid_index_key_box(NULL) IS NULL AS null_box,
       hybrid_index_key_box('POINT EMPTY') IS NULL AS empty_box,
       hybrid_index_key_box('GEOMETRYCOLLECTION EMPTY') IS NULL AS empty_collection_box;

SELECT hybrid_index_check('geoms_geom_idx');
DROP TABLE geoms, geoms_gist, qs, ops, results, kq, kres;
