--
-- lbgrid_group: group point queries (geom ~= ANY(array), Algorithm 8) and
-- batch window queries (geom && ANY(array)) reach the index as one scan
-- (amsearcharray) and return what a sequential scan returns: each row
-- once, even when it matches several elements; NULL and EMPTY elements;
-- combined with other conditions; LB-Grid and GFFM.
--
SELECT setseed(0.777);
CREATE TABLE gp (id bigint, geom geometry);
INSERT INTO gp SELECT i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 8000) i;
INSERT INTO gp SELECT 10000 + i, ST_MakePoint(10 * (i % 50), 10 * (i / 50 % 50)) FROM generate_series(0, 4999) i;
INSERT INTO gp SELECT 20000 + i, ST_Buffer(ST_MakePoint(random() * 1000, random() * 1000), 5, 'quad_segs=1')
  FROM generate_series(1, 500) i;
INSERT INTO gp VALUES (30001, NULL), (30002, 'POINT EMPTY'), (30003, 'POLYGON EMPTY');
CREATE TABLE gq AS SELECT * FROM gp;
CREATE INDEX gp_idx ON gp USING lbgrid (geom) WITH (page_size = 2048, bucket_capacity = 24);
CREATE INDEX gq_idx ON gq USING lbgrid (geom) WITH (page_size = 2048, bucket_capacity = 24, logging = off);
ANALYZE gp;
ANALYZE gq;

-- one index scan for the whole array
EXPLAIN (COSTS OFF)
SELECT id FROM gp WHERE geom ~= ANY (ARRAY['POINT(10 20)'::geometry, 'POINT(30 40)'::geometry]);

-- query arrays: sizes 1, 10, 100 of existing points (with repeats), points
-- that are not there, polygons taken from the data, NULL and EMPTY elements
CREATE TABLE arrs (aid int, a geometry[]);
INSERT INTO arrs
  SELECT n, (SELECT array_agg(geom ORDER BY random()) FROM
               (SELECT geom FROM gp WHERE id <= 8000 ORDER BY random() LIMIT n) s)
  FROM unnest(ARRAY[1, 10, 100]) n;
INSERT INTO arrs
  SELECT 1000 + n, (SELECT array_agg(ST_MakePoint(10 * (i % 50), 10 * (i / 50 % 50)))
                   FROM generate_series(1, n) i)
  FROM unnest(ARRAY[1, 10, 100]) n;
INSERT INTO arrs VALUES
  (300, ARRAY['POINT(10 10)'::geometry, 'POINT(10 10)', 'POINT(10 10)']),    -- repeats
  (301, ARRAY['POINT(-1 -1)'::geometry, 'POINT(5000 5000)']),                -- absent
  (302, ARRAY[NULL::geometry, 'POINT(20 20)']),                              -- NULL element
  (303, ARRAY[NULL::geometry]),                                              -- only NULL
  (304, ARRAY['POINT EMPTY'::geometry, 'POINT(30 30)']),                     -- EMPTY element
  (305, ARRAY['POLYGON EMPTY'::geometry]),
  (306, '{}'::geometry[]);                                                   -- empty array
INSERT INTO arrs
  SELECT 400, array_agg(geom) FROM gp WHERE id BETWEEN 20001 AND 20040;      -- polygons
-- window arrays: overlapping windows, a window containing another
INSERT INTO arrs VALUES
  (500, ARRAY[ST_MakeEnvelope(0, 0, 100, 100), ST_MakeEnvelope(50, 50, 150, 150),
              ST_MakeEnvelope(60, 60, 70, 70)]),
  (501, ARRAY[ST_MakeEnvelope(900, 900, 2000, 2000), 'POINT EMPTY'::geometry, NULL]);
INSERT INTO arrs
  SELECT 600 + n, (SELECT array_agg(ST_MakeEnvelope(x, y, x + 20, y + 20))
                   FROM (SELECT random() * 1000 AS x, random() * 1000 AS y
                         FROM generate_series(1, n)) s)
  FROM unnest(ARRAY[1, 10, 100]) n;

CREATE TABLE gres AS
  SELECT t.tbl, o.op, arrs.aid, d.*
  FROM (VALUES ('gp'), ('gq')) t(tbl),
       (VALUES ('~='), ('&&'), ('~'), ('@')) o(op),
       arrs,
       LATERAL hit.diff(format('SELECT id FROM %I WHERE geom %s ANY (%L::geometry[])',
                               t.tbl, o.op, arrs.a), t.tbl || '_idx') d;
SELECT tbl, op, count(*) AS arrays, sum(n) AS total_rows,
       bool_and(index_same) AS index_same, bool_and(index_plan) AS index_plan,
       bool_and(bitmap_same) AS bitmap_same, bool_and(bitmap_plan) AS bitmap_plan
FROM gres GROUP BY tbl, op ORDER BY tbl, op;
SELECT * FROM gres
WHERE NOT (seq_plan AND index_same AND index_plan AND bitmap_same AND bitmap_plan)
ORDER BY tbl, op, aid;
-- the group queries of points found what they asked for
SELECT aid, n FROM gres WHERE tbl = 'gp' AND op = '~=' AND aid IN (1, 10, 100, 1001, 1010, 1100, 300, 301, 302, 303, 304, 305, 306)
ORDER BY aid;

-- an array key together with a plain key, and two array keys
SELECT t.tbl, d.* FROM (VALUES ('gp'), ('gq')) t(tbl),
  LATERAL hit.diff(format('SELECT id FROM %I WHERE geom ~= ANY (%L::geometry[]) AND geom && %L::geometry',
                          t.tbl, (SELECT a FROM arrs WHERE aid = 1100), ST_MakeEnvelope(0, 0, 50, 1000)),
                   t.tbl || '_idx') d
ORDER BY 1;
SELECT t.tbl, d.* FROM (VALUES ('gp'), ('gq')) t(tbl),
  LATERAL hit.diff(format('SELECT id FROM %I WHERE geom && ANY (%L::geometry[]) AND geom @ ANY (%L::geometry[])',
                          t.tbl, ARRAY[ST_MakeEnvelope(0, 0, 40, 40), ST_MakeEnvelope(100, 0, 140, 1000)],
                          (SELECT a FROM arrs WHERE aid = 500)),
                   t.tbl || '_idx') d
ORDER BY 1;
-- kNN restricted by a group of windows
SELECT t.tbl, d.n, d.dist_same, d.ids_same, d.index_plan
FROM (VALUES ('gp'), ('gq')) t(tbl),
     LATERAL hit.knn_diff(t.tbl, t.tbl || '_idx', 'POINT(500 500)', 25,
                          format('geom && ANY (%L::geometry[])', (SELECT a FROM arrs WHERE aid = 610))) d
ORDER BY 1;

-- a parameterised group query: the form applications use
PREPARE grp(geometry[]) AS SELECT count(*) FROM gp WHERE geom ~= ANY ($1);
SET enable_seqscan = off;
EXECUTE grp(ARRAY['POINT(10 10)'::geometry, 'POINT(20 30)', 'POINT(-5 -5)']);
EXECUTE grp(NULL);
RESET enable_seqscan;
DEALLOCATE grp;

SELECT hybrid_index_check('gp_idx') AS gp_check, hybrid_index_check('gq_idx') AS gq_check;
DROP TABLE gp, gq, arrs, gres;
