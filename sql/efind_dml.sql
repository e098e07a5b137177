--
-- efind_dml: an efind index with a small buffer through insertions (page
-- and root splits), NULL and EMPTY geometries (the null list), updates,
-- deletions with VACUUM, rolled back insertions, TRUNCATE, REINDEX,
-- VACUUM FULL and an index built on an empty table: after every step it
-- passes hybrid_index_check, counts its entries right and answers filters
-- and kNN exactly like a sequential scan, including rows whose entries
-- are only in the write buffer.
--
SELECT setseed(0.6);
CREATE TABLE ed (id bigint, geom geometry);
INSERT INTO ed
  SELECT i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 2000) i;
CREATE INDEX ed_idx ON ed USING efind (geom)
  WITH (page_size = 2048, buffer_size = 24, read_buffer_policy = '2q');

CREATE TABLE edq (qid int, g geometry);
INSERT INTO edq
  SELECT i, ST_MakeEnvelope(x, y, x + w, y + h)
  FROM (SELECT i, random() * 1000 AS x, random() * 1000 AS y,
               random() * 250 AS w, random() * 250 AS h FROM generate_series(1, 3) i) s;
INSERT INTO edq VALUES (100, ST_MakeEnvelope(-1, -1, 2001, 2001));

CREATE FUNCTION ed_state(OUT rows bigint, OUT check_ok boolean, OUT entries_ok boolean,
                         OUT filters_ok boolean, OUT knn_ok boolean)
LANGUAGE plpgsql AS $$
DECLARE
  d record;
BEGIN
  rows := (SELECT count(*) FROM ed);
  check_ok := hybrid_index_check('ed_idx');
  SELECT (j->>'entries')::bigint = (SELECT count(*) FROM ed WHERE geom IS NOT NULL AND NOT ST_IsEmpty(geom))
     AND (j->>'null_entries')::bigint = (SELECT count(*) FROM ed WHERE geom IS NULL OR ST_IsEmpty(geom))
    INTO entries_ok FROM hybrid_index_inspect('ed_idx') j;
  SELECT * INTO d FROM hit.ef_diff_all('ed', 'ed_idx', 'edq', 25);
  filters_ok := d.filters_ok;
  knn_ok := d.knn_ok;
END $$;
-- entries_ok compares with the live rows: it holds whenever VACUUM has
-- removed the dead ones
ANALYZE ed;
SELECT 'built' AS step, * FROM ed_state();

-- insertions with page splits and root splits, clusters and duplicates
INSERT INTO ed
  SELECT 10000 + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 6000) i;
INSERT INTO ed
  SELECT 20000 + i, ST_MakePoint(700 + random(), 300 + random()) FROM generate_series(1, 800) i;
INSERT INTO ed SELECT 30000 + i, 'POINT(123 456)' FROM generate_series(1, 300) i;
INSERT INTO ed
  SELECT 40000 + i, ST_Buffer(ST_MakePoint(random() * 1000, random() * 1000), random() * 40, 'quad_segs=2')
  FROM generate_series(1, 500) i;
-- the null list grows over several pages (85 entries per 2 kB page)
INSERT INTO ed SELECT 50000 + i, NULL FROM generate_series(1, 200) i;
INSERT INTO ed SELECT 60000 + i, 'POLYGON EMPTY' FROM generate_series(1, 100) i;
INSERT INTO ed VALUES (70001, 'POINT(-50000 90000)');
ANALYZE ed;
SELECT 'inserted' AS step, * FROM ed_state();
SELECT (j->>'height')::int >= 3 AS tree_grew,
       (j->'efind'->'flushes'->>'count')::int > 0 AS flushed,
       hit.ef_degree_ok('ed_idx') AS degree_ok
  FROM hybrid_index_inspect('ed_idx') j;
-- EMPTY ~= EMPTY is answered from the null list
SELECT * FROM hit.diff('SELECT id FROM ed WHERE geom ~= ''POLYGON EMPTY''::geometry', 'ed_idx');

-- deletions: dead rows are not returned, VACUUM removes their entries
DELETE FROM ed WHERE id % 3 = 0;
SELECT 'deleted' AS step, rows, check_ok, filters_ok, knn_ok FROM ed_state();
VACUUM ed;
SELECT 'vacuumed' AS step, * FROM ed_state();

-- updates move geometries
UPDATE ed SET geom = ST_Translate(geom, 3, -7) WHERE id % 7 = 1;
VACUUM ed;
SELECT 'updated' AS step, * FROM ed_state();

-- rolled back insertions are never returned
BEGIN;
INSERT INTO ed
  SELECT 900000 + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 1500) i;
SELECT count(*) AS visible_inside_transaction FROM ed WHERE id > 900000 AND geom && ST_MakeEnvelope(-1, -1, 1001, 1001);
ROLLBACK;
SET enable_seqscan = off;
SELECT count(*) AS aborted_rows_found FROM ed WHERE geom && ST_MakeEnvelope(-1, -1, 1001, 1001) AND id > 900000;
RESET enable_seqscan;
VACUUM ed;
SELECT 'rolled back' AS step, * FROM ed_state();

-- delete almost everything, then everything, then fill again
DELETE FROM ed WHERE id % 50 <> 0;
VACUUM ed;
SELECT 'mostly deleted' AS step, * FROM ed_state();
DELETE FROM ed;
VACUUM ed;
SELECT 'all deleted' AS step, * FROM ed_state();
INSERT INTO ed
  SELECT i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 3000) i;
SELECT 'refilled' AS step, * FROM ed_state();

-- TRUNCATE, REINDEX and VACUUM FULL give a fresh, working index
TRUNCATE ed;
INSERT INTO ed
  SELECT i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 2500) i;
SELECT 'after truncate' AS step, * FROM ed_state();
REINDEX INDEX ed_idx;
SELECT 'reindexed' AS step, * FROM ed_state();
INSERT INTO ed
  SELECT 10000 + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 1000) i;
VACUUM FULL ed;
SELECT 'vacuum full' AS step, * FROM ed_state();
SELECT e->>'read_buffer_policy' AS kept_read_policy, e->>'buffer_kb' AS kept_buffer_kb
  FROM hit.ef('ed_idx') e;

-- an index built on an empty table, filled by insertions only
DROP INDEX ed_idx;
DELETE FROM ed;
VACUUM ed;
CREATE INDEX ed_idx ON ed USING efind (geom) WITH (page_size = 2048, buffer_size = 16);
INSERT INTO ed
  SELECT i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 4000) i;
INSERT INTO ed VALUES (5001, NULL), (5002, 'POINT EMPTY');
ANALYZE ed;
SELECT 'from empty' AS step, * FROM ed_state();
SELECT (hit.ef('ed_idx')->'flushes'->>'count')::int > 0 AS flushed;
