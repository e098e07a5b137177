--
-- hyrtree_dml: inserts after the build (with page splits), deletes,
-- updates, VACUUM, rolled back inserts, TRUNCATE, REINDEX, an index built
-- on an empty table; after each step the index passes hybrid_index_check,
-- counts its entries right and answers exactly like a sequential scan.
--
SELECT setseed(0.5);
CREATE TABLE dml (id bigint, geom geometry);
INSERT INTO dml
  SELECT i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 5000) i;
CREATE INDEX dml_idx ON dml USING hyrtree (geom) WITH (page_size = 2048);

CREATE TABLE dq (qid int, g geometry);
INSERT INTO dq
  SELECT i, ST_MakeEnvelope(x, y, x + w, y + h)
  FROM (SELECT i, random() * 1000 AS x, random() * 1000 AS y,
               random() * 250 AS w, random() * 250 AS h FROM generate_series(1, 20) i) s;
INSERT INTO dq VALUES (100, ST_MakeEnvelope(-1, -1, 2001, 2001));

-- state of the index: check passes, entries = heap rows (after VACUUM),
-- filters and kNN agree with a sequential scan
CREATE FUNCTION dml_state(OUT rows bigint, OUT check_ok boolean, OUT filters_ok boolean, OUT knn_ok boolean)
LANGUAGE plpgsql AS $$
BEGIN
  rows := (SELECT count(*) FROM dml);
  check_ok := hybrid_index_check('dml_idx');
  SELECT bool_and(d.index_same AND d.index_plan AND d.bitmap_same AND d.bitmap_plan)
    INTO filters_ok
    FROM dq, LATERAL hit.diff(format('SELECT id FROM dml WHERE geom && %L::geometry', dq.g), 'dml_idx') d;
  SELECT bool_and(d.dist_same AND d.ids_same AND d.index_plan)
    INTO knn_ok
    FROM dq, LATERAL hit.knn_diff('dml', 'dml_idx', ST_Centroid(dq.g), 30) d
    WHERE dq.qid < 10;
END $$;
-- entries counts the boxes, null_entries the NULL and EMPTY geometries
CREATE FUNCTION dml_entries() RETURNS bigint LANGUAGE sql AS $$
  SELECT (hybrid_index_inspect('dml_idx')->>'entries')::bigint
$$;
CREATE FUNCTION dml_entries_ok() RETURNS boolean LANGUAGE sql AS $$
  SELECT (j->>'entries')::bigint = (SELECT count(*) FROM dml WHERE geom IS NOT NULL AND NOT ST_IsEmpty(geom))
     AND (j->>'null_entries')::bigint = (SELECT count(*) FROM dml WHERE geom IS NULL OR ST_IsEmpty(geom))
  FROM hybrid_index_inspect('dml_idx') j
$$;

SELECT 'built' AS step, * FROM dml_state();
SELECT dml_entries() = 5000 AND dml_entries_ok() AS entries_ok;

-- inserts after the build: many page splits with 2 kB pages
INSERT INTO dml
  SELECT 5000 + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 20000) i;
-- a dense cluster and exact duplicates
INSERT INTO dml
  SELECT 30000 + i, ST_MakePoint(700 + random(), 300 + random()) FROM generate_series(1, 2000) i;
INSERT INTO dml SELECT 40000 + i, 'POINT(123 456)' FROM generate_series(1, 500) i;
-- lines and polygons, growing boxes of upper levels
INSERT INTO dml
  SELECT 50000 + i, ST_Buffer(ST_MakePoint(random() * 1000, random() * 1000), random() * 40, 'quad_segs=2')
  FROM generate_series(1, 1000) i;
INSERT INTO dml VALUES (60001, NULL), (60002, 'POLYGON EMPTY'), (60003, 'POINT(-50000 90000)');
SELECT 'inserted' AS step, * FROM dml_state();
SELECT dml_entries_ok() AS entries_ok;
SELECT (hybrid_index_inspect('dml_idx')->>'height')::int >= 3 AS tree_grew;

-- deletes: dead rows are not returned, VACUUM removes their entries
DELETE FROM dml WHERE id % 3 = 0;
SELECT 'deleted' AS step, * FROM dml_state();
VACUUM (INDEX_CLEANUP ON) dml;
SELECT 'vacuumed' AS step, * FROM dml_state();
SELECT dml_entries_ok() AS entries_ok;

-- updates move geometries (new index entries, old ones dead)
UPDATE dml SET geom = ST_Translate(geom, 3, -7) WHERE id % 7 = 1;
SELECT 'updated' AS step, * FROM dml_state();
VACUUM (INDEX_CLEANUP ON) dml;
SELECT 'vacuumed' AS step, * FROM dml_state();
SELECT dml_entries_ok() AS entries_ok;

-- rolled back inserts are never returned
BEGIN;
INSERT INTO dml
  SELECT 900000 + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 3000) i;
SELECT count(*) AS visible_inside_transaction FROM dml WHERE id > 900000 AND geom && ST_MakeEnvelope(-1, -1, 1001, 1001);
ROLLBACK;
SELECT 'rolled back' AS step, * FROM dml_state();
SELECT count(*) AS aborted_rows_found FROM dml WHERE geom && ST_MakeEnvelope(-1, -1, 1001, 1001) AND id > 900000;
VACUUM (INDEX_CLEANUP ON) dml;
SELECT dml_entries_ok() AS entries_ok;

-- delete almost everything, then everything
DELETE FROM dml WHERE id % 100 <> 0;
VACUUM (INDEX_CLEANUP ON) dml;
SELECT 'mostly deleted' AS step, * FROM dml_state();
SELECT dml_entries_ok() AS entries_ok;
DELETE FROM dml;
VACUUM (INDEX_CLEANUP ON) dml;
SELECT 'all deleted' AS step, * FROM dml_state();
SELECT dml_entries() AS entries_left;
-- and fill it again
INSERT INTO dml
  SELECT i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 8000) i;
SELECT 'refilled' AS step, * FROM dml_state();

-- TRUNCATE and REINDEX give a fresh, working index
TRUNCATE dml;
SELECT 'truncated' AS step, * FROM dml_state();
INSERT INTO dml
  SELECT i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 6000) i;
SELECT 'after truncate' AS step, * FROM dml_state();
REINDEX INDEX dml_idx;
SELECT 'reindexed' AS step, * FROM dml_state();
VACUUM FULL dml;
SELECT 'vacuum full' AS step, * FROM dml_state();
SELECT dml_entries_ok() AS entries_ok;

-- an index built on an empty table, filled by inserts only
DROP INDEX dml_idx;
DELETE FROM dml;
VACUUM (INDEX_CLEANUP ON) dml;
CREATE INDEX dml_idx ON dml USING hyrtree (geom) WITH (page_size = 2048);
SELECT dml_entries() AS entries_in_empty_index;
INSERT INTO dml
  SELECT i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 7000) i;
SELECT 'empty build + inserts' AS step, * FROM dml_state();

-- COPY goes through the same insert path
COPY dml FROM STDIN;
990001	POINT(1 1)
990002	POINT(999 999)
990003	\N
990004	LINESTRING(0 0,1000 1000)
\.
SELECT 'copy' AS step, * FROM dml_state();

DROP FUNCTION dml_state(), dml_entries(), dml_entries_ok();
DROP TABLE dml, dq;
