--
-- hgrid_basic: H-Grid (thesis section 4.3).  Every operator of
-- hgrid_geometry_ops on mixed data (points, duplicates, polygons, lines,
-- huge boxes, NaN/infinite coordinates, NULL and EMPTY) for each placement
-- (hot, random, none, the special case with every sub-directory on the fast
-- tier), compared between a sequential scan, an index scan and a bitmap
-- scan, and kNN against a sorted sequential scan -- after a skewed
-- workload has moved pages between the tiers, and again after inserts,
-- deletes, VACUUM and cooling.  Small pages and buffers make the grid deep
-- and the write buffers flush often.  Uses the helpers of hyrtree_00_setup.
--
-- pg_regress runs hgrid_* before hyrtree_00_setup (name order): load the
-- helpers unless an earlier test did
\set ECHO none
SELECT to_regproc('hit.diff') IS NULL AS need_hit \gset
\if :need_hit
\o /dev/null
\i sql/hyrtree_00_setup.sql
\o
\endif
\set ECHO all
SET client_min_messages = warning;
SELECT setseed(0.2718);

CREATE TABLE hg0 (id bigint, kind text, geom geometry);
INSERT INTO hg0
  SELECT i, 'upoint', ST_MakePoint(random() * 1000, random() * 1000)
  FROM generate_series(1, 5000) i;
INSERT INTO hg0
  SELECT 10000 + i, 'cpoint',
         ST_MakePoint(150 + (random() + random() + random() - 1.5) * 40,
                      150 + (random() + random() + random() - 1.5) * 40)
  FROM generate_series(1, 3000) i;
INSERT INTO hg0 SELECT 25000 + i, 'dup', 'POINT(640 360)' FROM generate_series(1, 120) i;
INSERT INTO hg0
  SELECT 30000 + i, 'polygon',
         ST_Buffer(ST_MakePoint(random() * 1000, random() * 1000),
                   1 + random() * random() * 60, 'quad_segs=2')
  FROM generate_series(1, 800) i;
INSERT INTO hg0
  SELECT 40000 + i, 'line',
         ST_MakeLine(ST_MakePoint(x, y), ST_MakePoint(x + (random() - 0.5) * 80, y + (random() - 0.5) * 80))
  FROM (SELECT i, random() * 1000 AS x, random() * 1000 AS y FROM generate_series(1, 500) i) s;
INSERT INTO hg0
  SELECT 50000 + i, 'multi',
         ST_Collect(ST_MakePoint(-500 + random() * 100, -500 + random() * 100),
                    ST_MakePoint(1500 + random() * 100, 1500 + random() * 100))
  FROM generate_series(1, 20) i;
INSERT INTO hg0 VALUES
  (55001, 'odd', ST_MakePoint('NaN'::float8, 5)),
  (55002, 'odd', ST_MakePoint(5, 'Infinity'::float8));
INSERT INTO hg0 SELECT 60000 + i, 'null', NULL FROM generate_series(1, 20) i;
INSERT INTO hg0
  SELECT 70000 + i, 'empty', (ARRAY['POINT EMPTY', 'POLYGON EMPTY', 'GEOMETRYCOLLECTION EMPTY'])[1 + i % 3]::geometry
  FROM generate_series(1, 20) i;

-- one table per configuration, same rows
CREATE TABLE hh AS SELECT * FROM hg0;   -- placement hot
CREATE TABLE hr AS SELECT * FROM hg0;   -- placement random
CREATE TABLE hn AS SELECT * FROM hg0;   -- placement none: GFFM on flash
CREATE TABLE hs AS SELECT * FROM hg0;   -- special case
CREATE INDEX hh_idx ON hh USING hgrid (geom)
  WITH (page_size = 2048, bucket_capacity = 24, buffer_size = 128, buffer_split = 75, cold_size = 8,
        selectivity = 1.1, cooling_period = 0);
CREATE INDEX hr_idx ON hr USING hgrid (geom)
  WITH (page_size = 2048, bucket_capacity = 24, buffer_size = 128, buffer_split = 75, cold_size = 8,
        selectivity = 1.1, cooling_period = 0, placement = random);
CREATE INDEX hn_idx ON hn USING hgrid (geom)
  WITH (page_size = 2048, bucket_capacity = 24, buffer_size = 128, buffer_split = 75, cold_size = 8, placement = none);
CREATE INDEX hs_idx ON hs USING hgrid (geom)
  WITH (page_size = 2048, bucket_capacity = 24, buffer_size = 128, buffer_split = 75, cold_size = 8,
        selectivity = 1.1, cooling_period = 0, directories_on_optane = on,
        average = sma, window = 200);
ANALYZE hh; ANALYZE hr; ANALYZE hn; ANALYZE hs;
SELECT hybrid_index_check('hh_idx') AND hybrid_index_check('hr_idx') AND
       hybrid_index_check('hn_idx') AND hybrid_index_check('hs_idx') AS all_check;

-- the operator class is the default one for geometry
SELECT opc.opcname, opc.opcdefault, am.amname
  FROM pg_index i JOIN pg_opclass opc ON opc.oid = i.indclass[0]
  JOIN pg_am am ON am.oid = opc.opcmethod
 WHERE i.indexrelid = 'hh_idx'::regclass;

-- after the build: everything on flash, except the special case's directories
SELECT t, j->>'am' AS am, j->>'mode' AS mode, j->'hot_region'->>'placement' AS placement,
       (j->>'directories')::int > 5 AS many_dirs, (j->>'buckets')::int > 200 AS many_buckets,
       (j->'hot_region'->'directories'->>'optane')::int > 0 AS dirs_optane,
       (j->'hot_region'->'directories'->>'optane')::int = (j->>'directories')::int AS all_dirs_optane,
       (j->'hot_region'->'buckets'->>'optane')::int AS buckets_optane
FROM (VALUES ('hh', hybrid_index_inspect('hh_idx')), ('hr', hybrid_index_inspect('hr_idx')),
             ('hn', hybrid_index_inspect('hn_idx')), ('hs', hybrid_index_inspect('hs_idx'))) v(t, j)
ORDER BY t;

-- a skewed workload: point searches, most of them in the cluster at (150, 150)
CREATE TABLE wl AS
  SELECT row_number() OVER () AS n, geom FROM (
    SELECT geom FROM hg0 WHERE kind = 'cpoint'
    UNION ALL SELECT geom FROM hg0 WHERE kind = 'cpoint'
    UNION ALL SELECT geom FROM hg0 WHERE kind = 'upoint' AND id % 10 = 0) s
  ORDER BY md5(ST_AsText(geom));
CREATE FUNCTION hit.hg_workload(tbl text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE r record; found bigint := 0; c bigint;
BEGIN
  PERFORM hit.use_path('index');
  FOR r IN SELECT geom FROM wl ORDER BY n LOOP
    EXECUTE format('SELECT count(*) FROM %I WHERE geom ~= $1', tbl) INTO c USING r.geom;
    found := found + c;
  END LOOP;
  PERFORM hit.use_path('default');
  RETURN found;
END $$;
SELECT hit.hg_workload('hh') = hit.hg_workload('hn') AS same_hits,
       hit.hg_workload('hr') = hit.hg_workload('hs') AS same_hits2;

-- hot: some buckets found hot and written to the fast tier at a flush of
-- the (small) bucket write buffer; hot directories too, but these wait in
-- the larger directory buffer until the checkpoint below; random: as many
-- moves, at random; none: nothing moves
SELECT t,
       (j->'hot_region'->'buckets'->>'detections')::int > 0 AS detections,
       (j->'hot_region'->'buckets'->>'promotions')::int + (j->'hot_region'->'buckets'->>'random_moves')::int > 0 AS buckets_moved,
       (j->'hot_region'->'buckets'->>'optane')::int > 0 AS buckets_on_optane,
       (j->'hot_region'->'buckets'->>'optane')::int < (j->>'buckets')::int / 2 AS most_buckets_on_flash,
       (j->'hot_region'->'directories'->>'optane')::int > 0 AS dirs_on_optane,
       (j->'hot_region'->'directories'->>'detections')::int > 0 AS dirs_detected
FROM (VALUES ('hh', hybrid_index_inspect('hh_idx')), ('hr', hybrid_index_inspect('hr_idx')),
             ('hn', hybrid_index_inspect('hn_idx')), ('hs', hybrid_index_inspect('hs_idx'))) v(t, j)
ORDER BY t;
-- the hot buckets are the cluster's: their mean weight beats the average
SELECT (j->'hot_region'->'buckets'->>'optane_mean_weight')::float8 >
       (j->'hot_region'->'buckets'->>'average_weight')::float8 AS hot_buckets_heavier
FROM hybrid_index_inspect('hh_idx') j;
-- I/O went to both tiers
SELECT tier, reads > 0 AS read, writes > 0 AS written FROM hybrid_index_stats('hh_idx') ORDER BY tier;

CREATE TABLE qs (qid int, g geometry);
INSERT INTO qs
  SELECT i, ST_MakeEnvelope(x, y, x + w, y + h)
  FROM (SELECT i, random() * 1000 AS x, random() * 1000 AS y,
               random() * random() * 300 AS w, random() * random() * 300 AS h
        FROM generate_series(1, 15) i) s;
INSERT INTO qs VALUES
  (101, ST_MakeEnvelope(-10000, -10000, 10000, 10000)),
  (102, ST_MakeEnvelope(2000, 2000, 3000, 3000)),
  (103, ST_MakeEnvelope(120, 120, 180, 180)),
  (104, 'POINT(640 360)'),
  (105, ST_MakeEnvelope(-600, -600, -400, -400)),
  (106, 'LINESTRING(0 0, 1000 1000)'),
  (107, ST_MakePoint('NaN'::float8, 5)),
  (108, ST_MakeEnvelope(0, 0, 'Infinity'::float8, 20));
INSERT INTO qs
  SELECT 200 + row_number() OVER (ORDER BY id), geom FROM hg0
  WHERE id IN (5, 10005, 10017, 25003, 30001, 40001, 50001, 55001);

CREATE TABLE ops (op text, sqltext text);
INSERT INTO ops VALUES
  ('&&',  'SELECT id FROM %I WHERE geom && %L::geometry'),
  ('~=',  'SELECT id FROM %I WHERE geom ~= %L::geometry'),
  ('~',   'SELECT id FROM %I WHERE geom ~ %L::geometry'),
  ('@',   'SELECT id FROM %I WHERE geom @ %L::geometry'),
  ('q@',  'SELECT id FROM %I WHERE %L::geometry @ geom');

CREATE FUNCTION hit.hg_filters(stage text) RETURNS TABLE (stage text, tbl text, op text, queries bigint,
  total_rows bigint, all_same boolean) LANGUAGE sql AS $$
  SELECT stage, t.tbl, ops.op, count(*), sum(d.n),
         bool_and(d.seq_plan AND d.index_same AND d.index_plan AND d.bitmap_same AND d.bitmap_plan)
  FROM (VALUES ('hh'), ('hr'), ('hn'), ('hs')) t(tbl) CROSS JOIN ops CROSS JOIN qs,
       LATERAL hit.diff(format(ops.sqltext, t.tbl, qs.g), t.tbl || '_idx') d
  GROUP BY t.tbl, ops.op ORDER BY t.tbl, ops.op
$$;
CREATE TABLE kq (kid int, g geometry);
INSERT INTO kq VALUES (1, 'POINT(150 150)'), (2, 'POINT(640 360)'), (3, 'POINT(-3000 -3000)'),
  (4, 'LINESTRING(10 990, 990 10)'), (5, ST_Buffer('POINT(600 300)'::geometry, 50)), (6, 'POINT(999 1)');
CREATE FUNCTION hit.hg_knn(stage text) RETURNS TABLE (stage text, tbl text, k int, queries bigint,
  all_same boolean) LANGUAGE sql AS $$
  SELECT stage, t.tbl, k, count(*),
         bool_and(d.dist_same AND d.ids_same AND d.index_plan AND d.seq_plan)
  FROM (VALUES ('hh'), ('hr'), ('hn'), ('hs')) t(tbl) CROSS JOIN unnest(ARRAY[1, 10, 100, 1000]) k
       CROSS JOIN kq, LATERAL hit.knn_diff(t.tbl, t.tbl || '_idx', kq.g, k) d
  GROUP BY t.tbl, k ORDER BY t.tbl, k
$$;

SELECT * FROM hit.hg_filters('after workload');
SELECT * FROM hit.hg_knn('after workload');
-- group point queries (geom ~= ANY) and batch windows (geom && ANY)
SELECT t.tbl, d.n, d.index_same, d.bitmap_same, d.index_plan
FROM (VALUES ('hh'), ('hs')) t(tbl),
     LATERAL hit.diff(format('SELECT id FROM %I WHERE geom ~= ANY(%L::geometry[])', t.tbl,
                             (SELECT array_agg(geom) FROM hg0 WHERE id % 97 = 0)), t.tbl || '_idx') d;

-- changes while pages move: inserts into the hot cluster, deletes, VACUUM
CREATE FUNCTION hit.hg_change(tbl text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('INSERT INTO %I SELECT 80000 + i, ''cpoint2'', ST_MakePoint(140 + (i %% 37), 140 + (i %% 41)) '
                 'FROM generate_series(1, 2000) i', tbl);
  EXECUTE format('INSERT INTO %I VALUES (90001, ''null'', NULL), (90002, ''empty'', ''POINT EMPTY'')', tbl);
  EXECUTE format('DELETE FROM %I WHERE id %% 3 = 0 AND kind IN (''upoint'', ''cpoint'', ''polygon'', ''null'', ''empty'')', tbl);
END $$;
SELECT hit.hg_change('hh'), hit.hg_change('hr'), hit.hg_change('hn'), hit.hg_change('hs');
VACUUM hh; VACUUM hr; VACUUM hn; VACUUM hs;
SELECT hit.hg_workload('hh') = hit.hg_workload('hn') AS same_hits_after_changes,
       hit.hg_workload('hr') = hit.hg_workload('hs') AS same_hits_after_changes2;
SELECT hybrid_index_check('hh_idx') AND hybrid_index_check('hr_idx') AND
       hybrid_index_check('hn_idx') AND hybrid_index_check('hs_idx') AS all_check;
SELECT * FROM hit.hg_filters('after changes');
SELECT * FROM hit.hg_knn('after changes');

-- checkpoint: the map records which tier every page is on
SELECT hybrid_index_checkpoint('hh_idx'), hybrid_index_checkpoint('hs_idx');
SELECT t, (j->>'pages_optane')::int > 0 AS optane_pages,
       (j->'hot_region'->'directories'->>'optane')::int + (j->'hot_region'->'buckets'->>'optane')::int
         = (j->>'pages_optane')::int AS tiers_add_up
FROM (VALUES ('hh', hybrid_index_inspect('hh_idx')), ('hs', hybrid_index_inspect('hs_idx'))) v(t, j);

-- cooling: with a short period, a workload elsewhere sends the cluster's
-- buckets back to flash
ALTER INDEX hh_idx SET (cooling_period = 500);
CREATE TABLE wl2 AS SELECT geom FROM hg0 WHERE kind = 'upoint' AND ST_X(geom) > 500 AND ST_Y(geom) > 500;
DO $$
DECLARE r record; c bigint;
BEGIN
  PERFORM hit.use_path('index');
  FOR r IN SELECT geom FROM wl2 LOOP
    SELECT count(*) INTO c FROM hh WHERE geom ~= r.geom;
  END LOOP;
  PERFORM hit.use_path('default');
END $$;
SELECT (j->'hot_region'->>'cooling_rounds')::int > 0 AS cooled,
       (j->'hot_region'->'buckets'->>'demotions')::int > 0 AS buckets_demoted
FROM hybrid_index_inspect('hh_idx') j;
SELECT * FROM hit.hg_filters('after cooling') WHERE tbl = 'hh';

-- capacity: a fast tier of 16 pages never holds more
CREATE TABLE hc AS SELECT * FROM hg0;
CREATE INDEX hc_idx ON hc USING hgrid (geom)
  WITH (page_size = 2048, bucket_capacity = 24, buffer_size = 128, buffer_split = 75, cold_size = 8,
        selectivity = 0.5, cooling_period = 0, optane_capacity = 32);
SELECT hit.hg_workload('hc') > 0 AS ran;
SELECT hybrid_index_checkpoint('hc_idx');
SELECT (j->'hot_region'->>'optane_capacity_pages')::int AS capacity_pages,
       (j->>'pages_optane')::int BETWEEN 1 AND 16 AS within_capacity,
       (j->'hot_region'->>'capacity_refusals')::int > 0 AS refused_some
FROM hybrid_index_inspect('hc_idx') j;
SELECT hybrid_index_check('hc_idx');

-- bad parameters
CREATE INDEX ON hc USING hgrid (geom) WITH (placement = wma);
CREATE INDEX ON hc USING hgrid (geom) WITH (selectivity = -2);
CREATE INDEX ON hc USING hgrid (geom) WITH (selectivity = -0.5);
CREATE INDEX ON hc USING hgrid (geom) WITH (window = 0);
CREATE INDEX ON hc USING hgrid (geom) WITH (average = median);
CREATE INDEX ON hc USING hgrid (geom) WITH (optane_tablespace = no_such_space);
CREATE INDEX ON hc USING hgrid (geom, geom);
SET hybrid_index.hgrid_selectivity = -1;
SET hybrid_index.hgrid_average = 'sma';
SHOW hybrid_index.hgrid_average;
RESET hybrid_index.hgrid_average;

DROP TABLE hg0, hh, hr, hn, hs, hc, wl, wl2, qs, ops, kq;
DROP FUNCTION hit.hg_workload(text), hit.hg_filters(text), hit.hg_knn(text), hit.hg_change(text);
