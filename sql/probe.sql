--
-- probe: hybrid_index_probe / hybrid_index_probe_knn, the index-only
-- searches of the benchmarks.  For every access method on geometry (ours
-- and PostGIS's GiST) the number of TIDs a probe returns equals the number
-- of rows a sequential scan finds with the same operator, on points,
-- polygons, lines, NULL and EMPTY rows; kNN probes return k TIDs (fewer
-- when the table is smaller).  Coordinates are multiples of 0.5, exact in
-- GiST's float4 boxes.  Then the errors.
--
SET client_min_messages = warning;
SELECT setseed(0.4142);

CREATE TABLE pr (id int, geom geometry);
INSERT INTO pr SELECT i, ST_MakePoint(floor(random() * 200) / 2, floor(random() * 200) / 2)
  FROM generate_series(1, 3000) i;
INSERT INTO pr SELECT 5000 + i,
    ST_MakeEnvelope(x, y, x + 1 + floor(random() * 10) / 2, y + 1 + floor(random() * 10) / 2)
  FROM (SELECT i, floor(random() * 190) / 2 AS x, floor(random() * 190) / 2 AS y
        FROM generate_series(1, 300) i) s;
INSERT INTO pr SELECT 6000 + i, ST_MakeLine(ST_MakePoint(i / 2.0, 0), ST_MakePoint(i / 2.0, 20))
  FROM generate_series(1, 50) i;
INSERT INTO pr VALUES (7001, NULL), (7002, NULL), (7003, 'POINT EMPTY'), (7004, 'POLYGON EMPTY');
-- duplicates of a point, for ~=
INSERT INTO pr SELECT 8000 + i, 'POINT(10.5 20)' FROM generate_series(1, 7) i;

-- the queries: windows of every size, points that exist and one that does
-- not, a polygon that equals a row's box
CREATE TABLE prq (qid int, q geometry);
INSERT INTO prq VALUES
  (1, ST_MakeEnvelope(10, 10, 20, 20)), (2, ST_MakeEnvelope(0, 0, 100, 100)),
  (3, ST_MakeEnvelope(50.5, 3, 51, 90)), (4, ST_MakeEnvelope(-10, -10, -1, -1)),
  (5, 'POINT(10.5 20)'), (6, 'POINT(0.25 0.25)'),
  (7, (SELECT ST_Envelope(geom) FROM pr WHERE id = 5001)),
  (8, (SELECT geom FROM pr WHERE id = 17)),
  (9, 'POINT EMPTY');

CREATE TABLE pr_hyr AS SELECT * FROM pr;
CREATE TABLE pr_efind AS SELECT * FROM pr;
CREATE TABLE pr_lbgrid AS SELECT * FROM pr;
CREATE TABLE pr_hgrid AS SELECT * FROM pr;
CREATE TABLE pr_gist AS SELECT * FROM pr;
CREATE INDEX pr_hyr_idx ON pr_hyr USING hyrtree (geom) WITH (page_size = 2048, placement = none);
CREATE INDEX pr_efind_idx ON pr_efind USING efind (geom) WITH (page_size = 2048, buffer_size = 16);
CREATE INDEX pr_lbgrid_idx ON pr_lbgrid USING lbgrid (geom);
CREATE INDEX pr_hgrid_idx ON pr_hgrid USING hgrid (geom);
CREATE INDEX pr_gist_idx ON pr_gist USING gist (geom);
-- rows inserted after the build go through each AM's insert path
INSERT INTO pr_hyr SELECT id + 100000, geom FROM pr WHERE id % 10 = 0;
INSERT INTO pr_efind SELECT id + 100000, geom FROM pr WHERE id % 10 = 0;
INSERT INTO pr_lbgrid SELECT id + 100000, geom FROM pr WHERE id % 10 = 0;
INSERT INTO pr_hgrid SELECT id + 100000, geom FROM pr WHERE id % 10 = 0;
INSERT INTO pr_gist SELECT id + 100000, geom FROM pr WHERE id % 10 = 0;
INSERT INTO pr SELECT id + 100000, geom FROM pr WHERE id % 10 = 0;

-- what a sequential scan finds
SET enable_indexscan = off;
SET enable_bitmapscan = off;
CREATE TABLE prexp AS
  SELECT qid, op, (SELECT count(*) FROM pr WHERE CASE op
      WHEN '&&' THEN pr.geom && q WHEN '~=' THEN pr.geom ~= q
      WHEN '~' THEN pr.geom ~ q WHEN '@' THEN pr.geom @ q END) AS n
  FROM prq, unnest('{&&,~=,~,@}'::text[]) op;
RESET enable_indexscan;
RESET enable_bitmapscan;

-- the expected counts are not trivial
SELECT op, sum(n) AS rows, count(*) FILTER (WHERE n = 0) AS empty_queries
FROM prexp GROUP BY op ORDER BY op;

-- every AM: probe == sequential scan, for every query and operator (the
-- rows where they differ).  GiST is compared without "~= EMPTY": PostGIS's
-- GiST returns nothing there, unlike a sequential scan.  The one row
-- expected: GiST keeps EMPTY geometries under a box at the origin, so "@ a
-- window around the origin" returns the 2 EMPTY rows too (and an SQL query
-- through GiST returns them as well; the sequential scan does not).
SELECT am, e.qid, e.op, e.n AS seqscan, hybrid_index_probe(idx, q.q, e.op) AS probe
FROM prexp e JOIN prq q USING (qid),
     (VALUES ('hyrtree', 'pr_hyr_idx'::regclass), ('efind', 'pr_efind_idx'),
             ('lbgrid', 'pr_lbgrid_idx'), ('hgrid', 'pr_hgrid_idx'), ('gist', 'pr_gist_idx')) a(am, idx)
WHERE NOT (am = 'gist' AND e.op = '~=' AND ST_IsEmpty(q.q))
  AND hybrid_index_probe(idx, q.q, e.op) IS DISTINCT FROM e.n
ORDER BY 1, 2, 3;
SELECT count(*) AS probes_compared
FROM prexp e, (VALUES ('hyrtree'), ('efind'), ('lbgrid'), ('hgrid'), ('gist')) a(am)
WHERE NOT (am = 'gist' AND e.op = '~=' AND e.qid = 9);

-- the default operator is &&
SELECT hybrid_index_probe('pr_hyr_idx', ST_MakeEnvelope(10, 10, 20, 20))
     = (SELECT n FROM prexp WHERE qid = 1 AND op = '&&') AS default_is_overlap;
-- NULL query: NULL (strict)
SELECT hybrid_index_probe('pr_hyr_idx', NULL) IS NULL AS null_query;

-- the probe sees what the transaction sees: deleted rows are still in the
-- index until VACUUM, so it counts index entries, not visible rows
BEGIN;
DELETE FROM pr_hgrid WHERE id < 100;
SELECT hybrid_index_probe('pr_hgrid_idx', ST_MakeEnvelope(0, 0, 100, 100))
     = (SELECT n FROM prexp WHERE qid = 2 AND op = '&&') AS counts_index_entries;
ROLLBACK;

-- kNN: k TIDs (or every row, NULL and EMPTY ones last, when k is larger)
SELECT am,
       hybrid_index_probe_knn(idx, 'POINT(50 50)', 10) AS k10,
       hybrid_index_probe_knn(idx, 'POINT(-500 7)', 1) AS k1,
       hybrid_index_probe_knn(idx, 'POINT(50 50)', 0) AS k0,
       hybrid_index_probe_knn(idx, 'POINT(50 50)', 100000)
         = (SELECT count(*) FROM pr)
         AS k_all
FROM (VALUES ('hyrtree', 'pr_hyr_idx'::regclass), ('efind', 'pr_efind_idx'),
             ('lbgrid', 'pr_lbgrid_idx'), ('hgrid', 'pr_hgrid_idx'), ('gist', 'pr_gist_idx')) a(am, idx)
ORDER BY am;

-- a table smaller than k (its NULL row included, as ORDER BY returns it)
CREATE TABLE pr_small (geom geometry);
INSERT INTO pr_small VALUES ('POINT(1 1)'), ('POINT(2 2)'), ('POINT(3 3)'), (NULL);
CREATE INDEX pr_small_idx ON pr_small USING hyrtree (geom) WITH (placement = none);
CREATE INDEX pr_small_gist ON pr_small USING gist (geom);
SELECT hybrid_index_probe_knn('pr_small_idx', 'POINT(0 0)', 10) AS hyrtree_small,
       hybrid_index_probe_knn('pr_small_gist', 'POINT(0 0)', 10) AS gist_small;

-- errors
SELECT hybrid_index_probe('pr', 'POINT(1 1)');
CREATE TABLE pr_txt (t text);
CREATE INDEX pr_txt_idx ON pr_txt (t);
SELECT hybrid_index_probe('pr_txt_idx', 'POINT(1 1)');
SELECT hybrid_index_probe('pr_hyr_idx', 'POINT(1 1)', '<<');
SELECT hybrid_index_probe_knn('pr_hyr_idx', 'POINT(1 1)', -1);
CREATE TABLE pr_brin AS SELECT * FROM pr;
CREATE INDEX pr_brin_idx ON pr_brin USING brin (geom);
SELECT hybrid_index_probe('pr_brin_idx', ST_MakeEnvelope(0, 0, 10, 10));
SELECT hybrid_index_probe_knn('pr_brin_idx', 'POINT(1 1)', 3);
CREATE TABLE pr_spg AS SELECT * FROM pr;
CREATE INDEX pr_spg_idx ON pr_spg USING spgist (geom);
SELECT hybrid_index_probe('pr_spg_idx', ST_MakeEnvelope(10, 10, 20, 20))
     = (SELECT n FROM prexp WHERE qid = 1 AND op = '&&') AS spgist_overlap;
SELECT hybrid_index_probe_knn('pr_spg_idx', 'POINT(1 1)', 3);

DROP TABLE pr, prq, prexp, pr_hyr, pr_efind, pr_lbgrid, pr_hgrid, pr_gist, pr_small,
  pr_txt, pr_brin, pr_spg;
