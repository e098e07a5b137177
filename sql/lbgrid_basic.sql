--
-- lbgrid_basic: every operator of lbgrid_geometry_ops on mixed data
-- (uniform and clustered points, duplicated points, polygons, lines,
-- multi-geometries with huge boxes, NaN and infinite coordinates, NULL and
-- EMPTY), for LB-Grid and for GFFM (logging = off), compared between a
-- sequential scan, an index scan and a bitmap scan; kNN compared between a
-- sorted sequential scan and the ordered index scan.  Small buckets make
-- the grid deep: many buckets, sub-directories and root boundaries.
-- Uses the helpers of hyrtree_00_setup (schema hit).
--
SELECT setseed(0.3141);

CREATE TABLE lg (id bigint, kind text, geom geometry);
INSERT INTO lg
  SELECT i, 'upoint', ST_MakePoint(random() * 1000, random() * 1000)
  FROM generate_series(1, 4000) i;
INSERT INTO lg
  SELECT 10000 + i, 'cpoint',
         ST_MakePoint(c.x + (random() + random() + random() - 1.5) * 15,
                      c.y + (random() + random() + random() - 1.5) * 15)
  FROM generate_series(1, 3000) i,
       LATERAL (SELECT (ARRAY[100, 250, 420, 600, 777, 850, 333, 900])[1 + i % 8] AS x,
                       (ARRAY[100, 800, 420, 650, 200, 900, 555, 30])[1 + i % 8] AS y) c;
-- integer grid points, each three times (exact duplicates, kNN ties)
INSERT INTO lg
  SELECT 20000 + i, 'grid', ST_MakePoint(100 * (i % 10), 100 * ((i / 10) % 10))
  FROM generate_series(0, 299) i;
-- one point 150 times: more than a bucket holds, and cannot be split
INSERT INTO lg SELECT 25000 + i, 'dup', 'POINT(640 360)' FROM generate_series(1, 150) i;
INSERT INTO lg
  SELECT 30000 + i, 'polygon',
         ST_Buffer(ST_MakePoint(random() * 1000, random() * 1000),
                   1 + random() * random() * 60, 'quad_segs=2')
  FROM generate_series(1, 1500) i;
INSERT INTO lg
  SELECT 40000 + i, 'line',
         ST_MakeLine(ST_MakePoint(x, y), ST_MakePoint(x + (random() - 0.5) * 80, y + (random() - 0.5) * 80))
  FROM (SELECT i, random() * 1000 AS x, random() * 1000 AS y FROM generate_series(1, 1000) i) s;
-- multipoints far apart: huge boxes covering the whole area
INSERT INTO lg
  SELECT 50000 + i, 'multi',
         ST_Collect(ST_MakePoint(-500 + random() * 100, -500 + random() * 100),
                    ST_MakePoint(1500 + random() * 100, 1500 + random() * 100))
  FROM generate_series(1, 50) i;
-- coordinates without a finite centre: kept outside the grid
INSERT INTO lg VALUES
  (55001, 'odd', ST_MakePoint('NaN'::float8, 5)),
  (55002, 'odd', ST_MakePoint(5, 'Infinity'::float8)),
  (55003, 'odd', ST_MakeLine(ST_MakePoint('-Infinity'::float8, 0), ST_MakePoint(10, 10)));
INSERT INTO lg SELECT 60000 + i, 'null', NULL FROM generate_series(1, 30) i;
INSERT INTO lg
  SELECT 70000 + i, 'empty',
         (ARRAY['POINT EMPTY', 'POLYGON EMPTY', 'LINESTRING EMPTY',
                'GEOMETRYCOLLECTION EMPTY', 'MULTIPOINT EMPTY'])[1 + i % 5]::geometry
  FROM generate_series(1, 30) i;
SELECT kind, count(*) FROM lg GROUP BY kind ORDER BY kind;

CREATE TABLE gf AS SELECT * FROM lg;
CREATE INDEX lg_idx ON lg USING lbgrid (geom)
  WITH (page_size = 2048, bucket_capacity = 16, buffer_size = 256);
CREATE INDEX gf_idx ON gf USING lbgrid (geom)
  WITH (page_size = 2048, bucket_capacity = 16, buffer_size = 256, logging = off);
ANALYZE lg;
ANALYZE gf;
SELECT hybrid_index_check('lg_idx') AS lg_check, hybrid_index_check('gf_idx') AS gf_check;

-- structure: both modes, same counts; a two-level grid with many buckets
SELECT j->>'mode' AS mode, j->>'bucket_capacity' AS capacity, j->>'entries' AS entries,
       j->>'null_entries' AS null_entries, (j->>'directories')::int > 10 AS many_subdirs,
       (j->>'buckets')::int > 500 AS many_buckets,
       (j->'root'->'cells'->>0)::int > 1 AND (j->'root'->'cells'->>1)::int > 1 AS root_scales,
       (j->'root'->'reach'->>0)::float8 > 100 AS wide_reach
FROM (VALUES (hybrid_index_inspect('lg_idx')), (hybrid_index_inspect('gf_idx'))) v(j);
SELECT (j->'btt'->>'avg_list_length')::float8 BETWEEN 1 AND 2 AS short_lists,
       (j->'btt'->>'buckets')::int = (j->>'buckets')::int AS btt_has_every_bucket
FROM hybrid_index_inspect('lg_idx') j;

-- the operator class is the default one for geometry
SELECT opc.opcname, opc.opcdefault, am.amname
  FROM pg_index i
  JOIN pg_opclass opc ON opc.oid = i.indclass[0]
  JOIN pg_am am ON am.oid = opc.opcmethod
 WHERE i.indexrelid = 'lg_idx'::regclass;

-- with default planner settings, selective queries use the index
EXPLAIN (COSTS OFF)
SELECT id FROM lg WHERE geom && ST_MakeEnvelope(10, 10, 20, 20);
EXPLAIN (COSTS OFF)
SELECT id FROM lg ORDER BY geom <-> 'POINT(1 1)'::geometry LIMIT 5;

CREATE TABLE qs (qid int, g geometry);
INSERT INTO qs
  SELECT i, ST_MakeEnvelope(x, y, x + w, y + h)
  FROM (SELECT i, random() * 1000 AS x, random() * 1000 AS y,
               random() * random() * 300 AS w, random() * random() * 300 AS h
        FROM generate_series(1, 30) i) s;
INSERT INTO qs VALUES
  (101, ST_MakeEnvelope(-10000, -10000, 10000, 10000)),  -- everything
  (102, ST_MakeEnvelope(2000, 2000, 3000, 3000)),        -- nothing
  (103, 'POINT(500 500)'),                               -- duplicated grid point
  (104, 'POINT(640 360)'),                               -- the overflowing point
  (105, ST_MakeEnvelope(100, 100, 200, 200)),            -- edges through grid points
  (106, 'LINESTRING(0 0, 1000 1000)'),
  (107, ST_MakeEnvelope(-600, -600, -400, -400)),        -- only multipoints
  (108, ST_MakeEnvelope(0, 0, 0, 1000)),                 -- degenerate box x = 0
  (109, 'POINT(0.1 0.7)'),                               -- not float4-exact
  (110, ST_MakePoint('NaN'::float8, 5)),                 -- NaN query box
  (111, ST_MakeEnvelope(0, 0, 'Infinity'::float8, 20));  -- infinite query box
INSERT INTO qs
  SELECT 200 + row_number() OVER (ORDER BY id), geom FROM lg
  WHERE id IN (5, 17, 10005, 20011, 25003, 30001, 30002, 40001, 40010, 50001, 55001, 55002);
INSERT INTO qs
  SELECT 300 + row_number() OVER (ORDER BY id), ST_PointOnSurface(geom) FROM lg
  WHERE kind = 'polygon' AND id % 100 = 0;
SELECT count(*) AS query_geometries FROM qs;

CREATE TABLE ops (op text, sqltext text);
INSERT INTO ops VALUES
  ('&&',   'SELECT id FROM %I WHERE geom && %L::geometry'),
  ('~=',   'SELECT id FROM %I WHERE geom ~= %L::geometry'),
  ('~',    'SELECT id FROM %I WHERE geom ~ %L::geometry'),
  ('@',    'SELECT id FROM %I WHERE geom @ %L::geometry'),
  ('q&&',  'SELECT id FROM %I WHERE %L::geometry && geom'),
  ('q@',   'SELECT id FROM %I WHERE %L::geometry @ geom'),
  ('q~',   'SELECT id FROM %I WHERE %L::geometry ~ geom'),
  ('&&+',  'SELECT id FROM %I WHERE geom && %L::geometry AND kind <> ''line'''),
  ('&&~',  'SELECT id FROM %I WHERE geom && %L::geometry AND geom ~ ST_Centroid(%2$L::geometry)');

CREATE TABLE results AS
  SELECT t.tbl, ops.op, qs.qid, d.*
  FROM (VALUES ('lg'), ('gf')) t(tbl) CROSS JOIN ops CROSS JOIN qs,
       LATERAL hit.diff(format(ops.sqltext, t.tbl, qs.g), t.tbl || '_idx') d;

SELECT tbl, op, count(*) AS queries, sum(n) AS total_rows,
       count(*) FILTER (WHERE n > 0) AS nonempty,
       bool_and(seq_plan) AS seq_plan,
       bool_and(index_same) AS index_same, bool_and(index_plan) AS index_plan,
       bool_and(bitmap_same) AS bitmap_same, bool_and(bitmap_plan) AS bitmap_plan
FROM results GROUP BY tbl, op ORDER BY tbl, op;
-- details of any failing query (expected: none)
SELECT * FROM results
WHERE NOT (seq_plan AND index_same AND index_plan AND bitmap_same AND bitmap_plan)
ORDER BY tbl, op, qid;

-- NULL and EMPTY rows never come out of a filter, even one covering all
SELECT hit.ids('SELECT id FROM lg WHERE geom && ST_MakeEnvelope(-1e9, -1e9, 1e9, 1e9)', 'index')
     = (SELECT array_agg(id ORDER BY id) FROM lg
        WHERE geom && ST_MakeEnvelope(-1e9, -1e9, 1e9, 1e9))
  AS index_equals_seq,
  (SELECT count(*) FROM lg WHERE geom && ST_MakeEnvelope(-1e9, -1e9, 1e9, 1e9)
     AND (geom IS NULL OR ST_IsEmpty(geom))) AS null_or_empty_found;

-- EMPTY query geometries: && matches nothing, EMPTY ~= EMPTY holds in PostGIS
SELECT t.tbl, q, d.* FROM (VALUES ('lg'), ('gf')) t(tbl),
  (VALUES
    ('SELECT id FROM %I WHERE geom && ''POINT EMPTY''::geometry'),
    ('SELECT id FROM %I WHERE geom ~= ''POINT EMPTY''::geometry'),
    ('SELECT id FROM %I WHERE geom ~= ''POLYGON EMPTY''::geometry'),
    ('SELECT id FROM %I WHERE geom ~= ''POINT EMPTY''::geometry AND geom && ST_MakeEnvelope(-1e9, -1e9, 1e9, 1e9)'),
    ('SELECT id FROM %I WHERE geom ~ ''POINT EMPTY''::geometry'),
    ('SELECT id FROM %I WHERE geom @ ''POINT EMPTY''::geometry')) v(q),
  LATERAL hit.diff(format(q, t.tbl), t.tbl || '_idx') d
ORDER BY 1, 2;

-- kNN: sorted seq scan vs ordered index scan
CREATE TABLE kq (kid int, g geometry);
INSERT INTO kq SELECT i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 10) i;
INSERT INTO kq VALUES
  (101, 'POINT(500 500)'),                          -- on duplicated grid points: ties
  (102, 'POINT(-3000 -3000)'),                      -- far outside the data
  (103, 'POINT(450 450)'),                          -- equidistant from 4 grid points
  (104, 'LINESTRING(10 990, 990 10)'),              -- non-point query
  (105, ST_Buffer('POINT(600 300)'::geometry, 50)), -- polygon query
  (106, 'POINT(640 360)');                          -- the overflowing point
CREATE TABLE kres AS
  SELECT t.tbl, k, kq.kid, d.*
  FROM (VALUES ('lg'), ('gf')) t(tbl) CROSS JOIN unnest(ARRAY[1, 10, 100, 2500]) k CROSS JOIN kq,
       LATERAL hit.knn_diff(t.tbl, t.tbl || '_idx', kq.g, k) d;
SELECT tbl, k, count(*) AS queries, sum(n) AS total_rows, bool_and(dist_same) AS dist_same,
       bool_and(ids_same) AS ids_same, bool_and(index_plan) AS index_plan,
       bool_and(seq_plan) AS seq_plan
FROM kres GROUP BY tbl, k ORDER BY tbl, k;
SELECT * FROM kres WHERE NOT (dist_same AND ids_same AND index_plan AND seq_plan) ORDER BY tbl, k, kid;

-- kNN over the whole table: every row, NULL and EMPTY rows last
SELECT t.tbl, d.n, d.dist_same, d.ids_same, d.index_plan
FROM (VALUES ('lg'), ('gf')) t(tbl),
     LATERAL hit.knn_diff(t.tbl, t.tbl || '_idx', 'POINT(333 444)', NULL) d;
SELECT count(*) AS rows_returned,
       count(*) FILTER (WHERE d IS NULL) AS null_distance_rows,
       bool_and(d IS NULL) FILTER (WHERE ord > (SELECT count(*) FROM lg) - 60) AS last_60_are_null_or_empty
FROM (SELECT d, row_number() OVER () AS ord
      FROM (SELECT * FROM hit.knn('lg', 'POINT(333 444)', NULL, 'index')) k,
           unnest(k.ids, k.dists) u(id, d)) s;

-- kNN with a filter, and without prefetch (one bucket per read)
SELECT k, bool_and(dist_same) AS dist_same, bool_and(ids_same) AS ids_same, bool_and(index_plan) AS index_plan
FROM unnest(ARRAY[5, 50]) k CROSS JOIN kq,
     LATERAL hit.knn_diff('lg', 'lg_idx', kq.g, k,
                          'geom && ST_MakeEnvelope(200, 200, 700, 700)') d
GROUP BY k ORDER BY k;
SET hybrid_index.lbgrid_knn_prefetch = off;
SELECT t.tbl, k, bool_and(dist_same) AS dist_same, bool_and(ids_same) AS ids_same
FROM (VALUES ('lg'), ('gf')) t(tbl) CROSS JOIN unnest(ARRAY[1, 30]) k CROSS JOIN kq,
     LATERAL hit.knn_diff(t.tbl, t.tbl || '_idx', kq.g, k, 'kind IN (''polygon'', ''line'')') d
GROUP BY t.tbl, k ORDER BY t.tbl, k;
RESET hybrid_index.lbgrid_knn_prefetch;

-- unbatched range queries (one page per read) give the same answers
SET hybrid_index.lbgrid_batch_size = 1;
SELECT t.tbl, bool_and(d.index_same AND d.bitmap_same) AS same
FROM (VALUES ('lg'), ('gf')) t(tbl) CROSS JOIN qs,
     LATERAL hit.diff(format('SELECT id FROM %I WHERE geom && %L::geometry', t.tbl, qs.g), t.tbl || '_idx') d
GROUP BY t.tbl ORDER BY t.tbl;
RESET hybrid_index.lbgrid_batch_size;

-- the same answers as PostGIS's own GiST index (which, unlike a sequential
-- scan, returns NaN boxes for &&: those rows are left out here)
CREATE TABLE lg_gist AS SELECT * FROM lg;
CREATE INDEX lg_gist_idx ON lg_gist USING gist (geom);
SELECT bool_and(hit.ids(format('SELECT id FROM lg WHERE geom && %L::geometry AND kind <> ''odd''', g), 'index')
              = hit.ids(format('SELECT id FROM lg_gist WHERE geom && %L::geometry AND kind <> ''odd''', g), 'index')) AS same_as_gist
FROM qs WHERE qid < 110;
SELECT bool_and((hit.knn('lg', g, 20, 'index', 'kind <> ''odd''')).dists
              = (hit.knn('lg_gist', g, 20, 'index', 'kind <> ''odd''')).dists) AS knn_same_as_gist
FROM kq;

-- hybrid_index_pages: sub-directories (level 1) and buckets (level 0)
SELECT level, count(*) > 0 AS present, bool_and(tier = 'flash') AS on_flash
FROM hybrid_index_pages('lg_idx') GROUP BY level ORDER BY level;
SELECT sum(entries) = (SELECT count(*) FROM gf) AS gffm_pages_hold_every_row
FROM hybrid_index_pages('gf_idx') WHERE level = 0;

SELECT hybrid_index_check('lg_idx') AS lg_check, hybrid_index_check('gf_idx') AS gf_check;
DROP TABLE lg, gf, lg_gist, qs, ops, results, kq, kres;
