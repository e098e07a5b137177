-- 010_points.sql — differential tests on 50k points (30k uniform, 20k in
-- dense clusters), default and 2 kB pages, placement none and upper:
-- index scan and bitmap scan return exactly the rows of a sequential scan;
-- kNN returns the true nearest rows in true distance order.
\set ON_ERROR_STOP 1
\set QUIET 1
\pset format unaligned
\pset tuples_only true
\pset pager off

BEGIN;
\o /dev/null
\ir ../../sql/hyrtree_00_setup.sql
\o

SELECT plan(30);

SELECT setseed(0.424242);
CREATE TABLE pts (id bigint, geom geometry);
INSERT INTO pts
  SELECT i, ST_MakePoint(random() * 10000, random() * 10000) FROM generate_series(1, 30000) i;
INSERT INTO pts
  SELECT 100000 + i,
         ST_MakePoint(c.x + (random() + random() + random() + random() - 2) * 40,
                      c.y + (random() + random() + random() + random() - 2) * 40)
  FROM generate_series(1, 20000) i,
       LATERAL (SELECT 500 + (i % 20) * 450 AS x, 9500 - (i % 20) * 430 AS y) c;
-- query windows: random sizes, some tiny, some covering a cluster
CREATE TABLE win (wid int, g geometry);
INSERT INTO win
  SELECT i, ST_MakeEnvelope(x, y, x + w, y + h)
  FROM (SELECT i, random() * 10000 AS x, random() * 10000 AS y,
               random() * random() * 2000 AS w, random() * random() * 2000 AS h
        FROM generate_series(1, 50) i) s;
INSERT INTO win
  SELECT 100 + i, ST_Expand(ST_MakePoint(500 + i * 450, 9500 - i * 430), 30) FROM generate_series(0, 9) i;
CREATE TABLE kpts (kid int, g geometry);
INSERT INTO kpts SELECT i, ST_MakePoint(random() * 10000, random() * 10000) FROM generate_series(1, 20) i;
INSERT INTO kpts SELECT 100 + i, ST_MakePoint(500 + i * 450, 9500 - i * 430) FROM generate_series(0, 4) i;

CREATE INDEX pts_idx ON pts USING hyrtree (geom);
ANALYZE pts;

SELECT index_is_type('pts', 'pts_idx', 'hyrtree');
SELECT ok(hybrid_index_check('pts_idx'), 'pts_idx passes hybrid_index_check');
SELECT is((hybrid_index_inspect('pts_idx')->>'entries')::bigint, 50000::bigint, 'pts_idx has 50000 entries');

-- && windows
CREATE TEMP TABLE r_overlap AS
  SELECT w.wid, d.* FROM win w, LATERAL hit.diff(format('SELECT id FROM pts WHERE geom && %L::geometry', w.g), 'pts_idx') d;
SELECT is((SELECT count(*) FROM r_overlap WHERE NOT (index_same AND index_plan)), 0::bigint,
          '&&: index scan = seq scan for 60 windows');
SELECT is((SELECT count(*) FROM r_overlap WHERE NOT (bitmap_same AND bitmap_plan)), 0::bigint,
          '&&: bitmap scan = seq scan for 60 windows');
SELECT cmp_ok((SELECT sum(n) FROM r_overlap), '>', 10000::bigint, '&&: the windows found many rows');

-- @ (points within windows) and commuted ~
CREATE TEMP TABLE r_within AS
  SELECT w.wid, d.* FROM win w, LATERAL hit.diff(format('SELECT id FROM pts WHERE geom @ %L::geometry', w.g), 'pts_idx') d;
SELECT is((SELECT count(*) FROM r_within WHERE NOT (index_same AND index_plan AND bitmap_same AND bitmap_plan)), 0::bigint,
          '@: index and bitmap scans = seq scan');
SELECT is((SELECT count(*) FROM win w, LATERAL hit.diff(format('SELECT id FROM pts WHERE %L::geometry ~ geom', w.g), 'pts_idx') d
           WHERE NOT (d.index_same AND d.index_plan AND d.bitmap_same AND d.bitmap_plan)), 0::bigint,
          'q ~ geom: index and bitmap scans = seq scan');

-- ~= and ~ with points taken from the data (exact matches)
SELECT is((SELECT count(*) FROM (SELECT geom FROM pts WHERE id % 2500 = 7) p,
           LATERAL hit.diff(format('SELECT id FROM pts WHERE geom ~= %L::geometry', p.geom), 'pts_idx') d
           WHERE NOT (d.index_same AND d.index_plan AND d.bitmap_same AND d.bitmap_plan AND d.n >= 1)), 0::bigint,
          '~=: every data point finds itself, as a seq scan does');
SELECT is((SELECT count(*) FROM (SELECT geom FROM pts WHERE id % 2500 = 11) p,
           LATERAL hit.diff(format('SELECT id FROM pts WHERE geom ~ %L::geometry', p.geom), 'pts_idx') d
           WHERE NOT (d.index_same AND d.index_plan AND d.bitmap_same AND d.bitmap_plan AND d.n >= 1)), 0::bigint,
          '~: box containment of data points, as a seq scan');

-- explicit result comparison for one window, with pgTAP's diagnostics
SELECT is(hit.ids('SELECT id FROM pts WHERE geom && ST_MakeEnvelope(4000, 4000, 4700, 4300)', 'index'),
          hit.ids('SELECT id FROM pts WHERE geom && ST_MakeEnvelope(4000, 4000, 4700, 4300)', 'seq'),
          'one window: same ids (index vs seq)');
SELECT is(hit.ids('SELECT id FROM pts WHERE geom && ST_MakeEnvelope(4000, 4000, 4700, 4300)', 'bitmap'),
          hit.ids('SELECT id FROM pts WHERE geom && ST_MakeEnvelope(4000, 4000, 4700, 4300)', 'seq'),
          'one window: same ids (bitmap vs seq)');

-- kNN
CREATE TEMP TABLE r_knn AS
  SELECT k, p.kid, d.* FROM unnest(ARRAY[1, 10, 100, 1000]) k, kpts p,
       LATERAL hit.knn_diff('pts', 'pts_idx', p.g, k) d;
SELECT is((SELECT count(*) FROM r_knn WHERE NOT dist_same), 0::bigint, 'kNN: same distance sequences as a sorted seq scan');
SELECT is((SELECT count(*) FROM r_knn WHERE NOT ids_same), 0::bigint, 'kNN: same ids (ties at the boundary aside)');
SELECT is((SELECT count(*) FROM r_knn WHERE NOT index_plan), 0::bigint, 'kNN: ordered index scans were used');
SELECT is((SELECT (hit.knn('pts', 'POINT(5000 5000)', 50, 'index')).dists),
          (SELECT (hit.knn('pts', 'POINT(5000 5000)', 50, 'seq')).dists),
          'kNN around the centre: identical distances');

-- inserts after the build, then deletes
INSERT INTO pts
  SELECT 200000 + i, ST_MakePoint(random() * 10000, random() * 10000) FROM generate_series(1, 15000) i;
INSERT INTO pts
  SELECT 300000 + i, ST_MakePoint(5000 + random(), 5000 + random()) FROM generate_series(1, 3000) i;
SELECT ok(hybrid_index_check('pts_idx'), 'check passes after 18000 inserts');
SELECT is((SELECT count(*) FROM win w, LATERAL hit.diff(format('SELECT id FROM pts WHERE geom && %L::geometry', w.g), 'pts_idx') d
           WHERE NOT (d.index_same AND d.index_plan AND d.bitmap_same AND d.bitmap_plan)), 0::bigint,
          '&& after inserts: index and bitmap = seq');
SELECT is((SELECT count(*) FROM kpts p, LATERAL hit.knn_diff('pts', 'pts_idx', p.g, 50) d
           WHERE NOT (d.dist_same AND d.ids_same AND d.index_plan)), 0::bigint,
          'kNN after inserts = sorted seq scan');
DELETE FROM pts WHERE id % 4 = 0;
SELECT is((SELECT count(*) FROM win w, LATERAL hit.diff(format('SELECT id FROM pts WHERE geom && %L::geometry', w.g), 'pts_idx') d
           WHERE NOT (d.index_same AND d.bitmap_same)), 0::bigint,
          '&& after deletes: index and bitmap = seq');
SELECT is((SELECT count(*) FROM kpts p, LATERAL hit.knn_diff('pts', 'pts_idx', p.g, 50) d
           WHERE NOT (d.dist_same AND d.ids_same)), 0::bigint,
          'kNN after deletes = sorted seq scan');

-- 2 kB pages, placement upper (optane tier in the index's tablespace)
CREATE TABLE pts2 AS SELECT * FROM pts;
CREATE INDEX pts2_idx ON pts2 USING hyrtree (geom) WITH (page_size = 2048, placement = 'upper');
SELECT ok(hybrid_index_check('pts2_idx'), 'pts2_idx (2 kB, upper) passes check');
SELECT cmp_ok((hybrid_index_inspect('pts2_idx')->>'height')::int, '>=', 3, 'pts2_idx is at least 3 levels high');
SELECT ok((SELECT bool_and(CASE WHEN (l->>'level')::int > 0 THEN (l->>'optane')::int = (l->>'nodes')::int
                                ELSE (l->>'flash')::int = (l->>'nodes')::int END)
           FROM jsonb_array_elements(hybrid_index_inspect('pts2_idx')->'levels') l),
          'placement upper: inner levels on optane, leaves on flash');
SELECT is((SELECT count(*) FROM win w, LATERAL hit.diff(format('SELECT id FROM pts2 WHERE geom && %L::geometry', w.g), 'pts2_idx') d
           WHERE NOT (d.index_same AND d.index_plan AND d.bitmap_same AND d.bitmap_plan)), 0::bigint,
          'pts2_idx: && index and bitmap = seq');
SELECT is((SELECT count(*) FROM kpts p, LATERAL hit.knn_diff('pts2', 'pts2_idx', p.g, 100) d
           WHERE NOT (d.dist_same AND d.ids_same AND d.index_plan)), 0::bigint,
          'pts2_idx: kNN = sorted seq scan');
SELECT ok((SELECT pages > 0 FROM hybrid_index_stats('pts2_idx') WHERE tier = 'optane'), 'pts2_idx has pages on optane');

-- 32 kB pages: a shallow tree
CREATE INDEX pts2_big ON pts2 USING hyrtree (geom) WITH (page_size = 32768);
DROP INDEX pts2_idx;
SELECT ok(hybrid_index_check('pts2_big'), 'pts2_big (32 kB) passes check');
SELECT is((SELECT count(*) FROM win w, LATERAL hit.diff(format('SELECT id FROM pts2 WHERE geom && %L::geometry', w.g), 'pts2_big') d
           WHERE NOT (d.index_same AND d.index_plan AND d.bitmap_same AND d.bitmap_plan)), 0::bigint,
          'pts2_big: && index and bitmap = seq');
SELECT is((SELECT count(*) FROM kpts p, LATERAL hit.knn_diff('pts2', 'pts2_big', p.g, 100) d
           WHERE NOT (d.dist_same AND d.ids_same AND d.index_plan)), 0::bigint,
          'pts2_big: kNN = sorted seq scan');

SELECT * FROM finish();
ROLLBACK;
