-- 020_polygons.sql — polygons (varied sizes, holes, overlaps), lines and
-- multi-geometries: all operators, kNN with exact-distance recheck (box
-- distance < true distance for polygons and lines), and the hi_* helpers
-- against the exact PostGIS predicates.
\set ON_ERROR_STOP 1
\set QUIET 1
\pset format unaligned
\pset tuples_only true
\pset pager off

BEGIN;
\o /dev/null
\ir ../../sql/hyrtree_00_setup.sql
\o

SELECT plan(23);

SELECT setseed(0.1357);
CREATE TABLE shapes (id bigint, kind text, geom geometry);
-- "real-ish" polygons: irregular stars (concave), some with holes
INSERT INTO shapes
  SELECT i, 'star',
         ST_MakePolygon(ST_MakeLine(array_append(pts, pts[1])))
  FROM (SELECT i, array_agg(ST_MakePoint(cx + r * (0.5 + random()) * cos(a), cy + r * (0.5 + random()) * sin(a)) ORDER BY a) AS pts
        FROM (SELECT i, random() * 5000 AS cx, random() * 5000 AS cy, 5 + random() * random() * 150 AS r
              FROM generate_series(1, 12000) i) c,
             LATERAL (SELECT generate_series(0, 11) * pi() / 6 AS a) ang
        GROUP BY i) s;
INSERT INTO shapes
  SELECT 20000 + i, 'holed',
         ST_Difference(ST_Buffer(p, r, 'quad_segs=4'), ST_Buffer(p, r / 2, 'quad_segs=4'))
  FROM (SELECT i, ST_MakePoint(random() * 5000, random() * 5000) AS p, 10 + random() * 80 AS r
        FROM generate_series(1, 3000) i) s;
-- polylines
INSERT INTO shapes
  SELECT 30000 + i, 'line',
         ST_MakeLine(ARRAY[ST_MakePoint(x, y), ST_MakePoint(x + (random() - 0.5) * 300, y + (random() - 0.5) * 300),
                           ST_MakePoint(x + (random() - 0.5) * 300, y + (random() - 0.5) * 300)])
  FROM (SELECT i, random() * 5000 AS x, random() * 5000 AS y FROM generate_series(1, 8000) i) s;
-- multipolygons spread far apart (large boxes, mostly empty)
INSERT INTO shapes
  SELECT 40000 + i, 'multi',
         ST_Collect(ST_Buffer(ST_MakePoint(random() * 5000, random() * 5000), 20),
                    ST_Buffer(ST_MakePoint(random() * 5000, random() * 5000), 20))
  FROM generate_series(1, 300) i;
INSERT INTO shapes SELECT 50000 + i, 'empty', 'POLYGON EMPTY' FROM generate_series(1, 20) i;
INSERT INTO shapes SELECT 60000 + i, 'null', NULL FROM generate_series(1, 20) i;

CREATE TABLE qg (qid int, g geometry);
INSERT INTO qg
  SELECT i, ST_MakeEnvelope(x, y, x + w, y + w)
  FROM (SELECT i, random() * 5000 AS x, random() * 5000 AS y, random() * random() * 800 AS w FROM generate_series(1, 25) i) s;
INSERT INTO qg SELECT 100 + i, ST_Buffer(ST_MakePoint(random() * 5000, random() * 5000), 50 + random() * 200) FROM generate_series(1, 10) i;
INSERT INTO qg SELECT 200 + i, ST_MakeLine(ST_MakePoint(random() * 5000, random() * 5000), ST_MakePoint(random() * 5000, random() * 5000)) FROM generate_series(1, 5) i;
INSERT INTO qg SELECT 300 + row_number() OVER (ORDER BY id), ST_PointOnSurface(geom) FROM shapes WHERE kind = 'star' AND id % 1000 = 1;

CREATE INDEX shapes_idx ON shapes USING hyrtree (geom) WITH (page_size = 4096);
ANALYZE shapes;
SELECT ok(hybrid_index_check('shapes_idx'), 'shapes_idx passes check');
SELECT is((hybrid_index_inspect('shapes_idx')->>'entries')::bigint,
          (SELECT count(*) FROM shapes WHERE geom IS NOT NULL AND NOT ST_IsEmpty(geom)), 'entries = non-empty rows');
SELECT is((hybrid_index_inspect('shapes_idx')->>'null_entries')::bigint, 40::bigint, 'null_entries = NULL + EMPTY rows');

-- operators
CREATE TEMP TABLE r_ops AS
  SELECT op, q.qid, d.*
  FROM unnest(ARRAY['&&', '~', '@', '~=']) op, qg q,
       LATERAL hit.diff(format('SELECT id FROM shapes WHERE geom %s %L::geometry', op, q.g), 'shapes_idx') d;
SELECT is((SELECT count(*) FROM r_ops WHERE op = '&&' AND NOT (index_same AND index_plan AND bitmap_same AND bitmap_plan)), 0::bigint, '&&: index and bitmap = seq');
SELECT is((SELECT count(*) FROM r_ops WHERE op = '~' AND NOT (index_same AND index_plan AND bitmap_same AND bitmap_plan)), 0::bigint, '~: index and bitmap = seq');
SELECT is((SELECT count(*) FROM r_ops WHERE op = '@' AND NOT (index_same AND index_plan AND bitmap_same AND bitmap_plan)), 0::bigint, '@: index and bitmap = seq');
SELECT is((SELECT count(*) FROM r_ops WHERE op = '~=' AND NOT (index_same AND index_plan AND bitmap_same AND bitmap_plan)), 0::bigint, '~=: index and bitmap = seq');
SELECT cmp_ok((SELECT sum(n) FROM r_ops WHERE op = '~'), '>', 0::bigint, '~ found something');
SELECT cmp_ok((SELECT sum(n) FROM r_ops WHERE op = '@'), '>', 0::bigint, '@ found something');
SELECT is((SELECT count(*) FROM (SELECT geom FROM shapes WHERE id % 997 = 3 AND geom IS NOT NULL) s,
           LATERAL hit.diff(format('SELECT id FROM shapes WHERE geom ~= %L::geometry', s.geom), 'shapes_idx') d
           WHERE NOT (d.index_same AND d.bitmap_same AND d.n >= 1)), 0::bigint, '~=: each shape finds itself');

-- kNN with recheck: exact distance order for polygons and lines
CREATE TEMP TABLE r_knn AS
  SELECT k, q.qid, d.*
  FROM unnest(ARRAY[1, 5, 50, 500]) k, (SELECT * FROM qg WHERE qid % 3 = 0) q,
       LATERAL hit.knn_diff('shapes', 'shapes_idx', q.g, k) d;
SELECT is((SELECT count(*) FROM r_knn WHERE NOT dist_same), 0::bigint, 'kNN: identical distance sequences');
SELECT is((SELECT count(*) FROM r_knn WHERE NOT ids_same), 0::bigint, 'kNN: same ids');
SELECT is((SELECT count(*) FROM r_knn WHERE NOT index_plan), 0::bigint, 'kNN: ordered index scans used');
SELECT is((SELECT count(*) FROM (SELECT * FROM qg WHERE qid IN (1, 101, 201)) q,
           LATERAL hit.knn_diff('shapes', 'shapes_idx', q.g, 30, 'kind = ''line''') d
           WHERE NOT (d.dist_same AND d.ids_same AND d.index_plan)), 0::bigint, 'kNN with a filter on another column');

-- hi_* helpers = exact PostGIS predicates (set equality), through the index
SELECT bag_eq('SELECT s.id FROM shapes s, qg q WHERE q.qid < 100 AND hi_intersects(s.geom, q.g)',
              'SELECT s.id FROM shapes s, qg q WHERE q.qid < 100 AND ST_Intersects(s.geom, q.g)',
              'hi_intersects = ST_Intersects (join over 25 windows)');
SELECT bag_eq('SELECT s.id FROM shapes s, qg q WHERE q.qid BETWEEN 100 AND 199 AND hi_dwithin(s.geom, q.g, 40)',
              'SELECT s.id FROM shapes s, qg q WHERE q.qid BETWEEN 100 AND 199 AND ST_DWithin(s.geom, q.g, 40)',
              'hi_dwithin = ST_DWithin');
SELECT bag_eq('SELECT s.id FROM shapes s, qg q WHERE q.qid >= 300 AND hi_contains(s.geom, q.g)',
              'SELECT s.id FROM shapes s, qg q WHERE q.qid >= 300 AND ST_Contains(s.geom, q.g)',
              'hi_contains = ST_Contains');
SELECT bag_eq('SELECT s.id FROM shapes s, qg q WHERE q.qid < 200 AND hi_within(s.geom, q.g)',
              'SELECT s.id FROM shapes s, qg q WHERE q.qid < 200 AND ST_Within(s.geom, q.g)',
              'hi_within = ST_Within');
SELECT is((SELECT count(*) FROM qg q,
           LATERAL hit.diff(format('SELECT id FROM shapes WHERE hi_intersects(geom, %L::geometry)', q.g), 'shapes_idx') d
           WHERE NOT (d.index_plan AND d.bitmap_plan)), 0::bigint, 'hi_intersects uses the index');
SELECT is((SELECT count(*) FROM qg q WHERE hit.ids(format('SELECT id FROM shapes WHERE hi_intersects(geom, %L::geometry)', q.g), 'index')
                                     <> hit.ids(format('SELECT id FROM shapes WHERE ST_Intersects(geom, %L::geometry)', q.g), 'seq')), 0::bigint,
          'hi_intersects via index = ST_Intersects via seq scan, per query');

-- updates move shapes; VACUUM cannot run in this transaction, dead tuples stay
UPDATE shapes SET geom = ST_Translate(geom, 100, -50) WHERE id % 5 = 0;
SELECT ok(hybrid_index_check('shapes_idx'), 'check passes after updates');
SELECT is((SELECT count(*) FROM r_ops r JOIN qg q USING (qid),
           LATERAL hit.diff(format('SELECT id FROM shapes WHERE geom && %L::geometry', q.g), 'shapes_idx') d
           WHERE r.op = '&&' AND NOT (d.index_same AND d.bitmap_same)), 0::bigint, '&& after updates: index and bitmap = seq');
SELECT is((SELECT count(*) FROM (SELECT * FROM qg WHERE qid % 3 = 0) q, LATERAL hit.knn_diff('shapes', 'shapes_idx', q.g, 20) d
           WHERE NOT (d.dist_same AND d.ids_same)), 0::bigint, 'kNN after updates = sorted seq scan');

SELECT * FROM finish();
ROLLBACK;
