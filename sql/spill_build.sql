--
-- spill_build: CREATE INDEX within maintenance_work_mem.  Each access
-- method builds an index of 200k points, polygons, lines, duplicates,
-- NULL and EMPTY rows with maintenance_work_mem = 1MB, which makes the
-- bulk load spill to temporary files (pg_stat_database.temp_files grows),
-- and once more with 1GB on a copy of the table, entirely in memory (no
-- temporary file).  Both must pass hybrid_index_check, answer every
-- operator exactly as a sequential scan (index and bitmap scans), return
-- kNN in true distance order, and have about the same number of pages.
-- Uses the helpers of hyrtree_00_setup.
--
\set ECHO none
SELECT to_regproc('hit.diff') IS NULL AS need_hit \gset
\if :need_hit
\o /dev/null
\i sql/hyrtree_00_setup.sql
\o
\endif
\set ECHO all
SET client_min_messages = warning;
-- serial builds: parallel workers write their entries to temporary files
SET max_parallel_maintenance_workers = 0;
SELECT setseed(0.577);

CREATE TABLE sb0 (id bigint, kind text, geom geometry);
INSERT INTO sb0
  SELECT i, 'upoint', ST_MakePoint(random() * 1000, random() * 1000)
  FROM generate_series(1, 90000) i;
INSERT INTO sb0
  SELECT 200000 + i, 'cpoint',
         ST_MakePoint(300 + (random() + random() + random() - 1.5) * 30,
                      700 + (random() + random() + random() - 1.5) * 30)
  FROM generate_series(1, 10000) i;
INSERT INTO sb0 SELECT 300000 + i, 'dup', 'POINT(250 250)' FROM generate_series(1, 300) i;
INSERT INTO sb0
  SELECT 400000 + i, 'polygon',
         ST_Buffer(ST_MakePoint(random() * 1000, random() * 1000),
                   1 + random() * random() * 40, 'quad_segs=2')
  FROM generate_series(1, 2000) i;
INSERT INTO sb0
  SELECT 500000 + i, 'line',
         ST_MakeLine(ST_MakePoint(x, y), ST_MakePoint(x + (random() - 0.5) * 60, y + (random() - 0.5) * 60))
  FROM (SELECT i, random() * 1000 AS x, random() * 1000 AS y FROM generate_series(1, 1000) i) s;
INSERT INTO sb0 SELECT 600000 + i, 'null', NULL FROM generate_series(1, 2000) i;
INSERT INTO sb0 SELECT 700000 + i, 'empty', 'POINT EMPTY' FROM generate_series(1, 50) i;
SELECT kind, count(*) FROM sb0 GROUP BY kind ORDER BY kind;

-- one table per access method and budget (the differential check forces
-- the index of its table), same rows in a different heap order
CREATE TABLE sb_cases (am text, tbl text, mem text);
INSERT INTO sb_cases
  SELECT am, t || '_' || left(am, 2), mem
  FROM (VALUES ('hyrtree'), ('efind'), ('lbgrid'), ('hgrid')) a(am),
       (VALUES ('sbs', '1MB'), ('sbm', '1GB')) m(t, mem);
DO $$
DECLARE
  c record;
BEGIN
  FOR c IN SELECT * FROM sb_cases LOOP
    EXECUTE format('CREATE TABLE %I AS SELECT * FROM sb0 ORDER BY %s',
                   c.tbl, CASE WHEN c.mem = '1MB' THEN 'id' ELSE 'md5(id::text)' END);
    EXECUTE format('ANALYZE %I', c.tbl);
  END LOOP;
END $$;

-- temporary files this database has written so far
CREATE FUNCTION sb_temp_files() RETURNS bigint LANGUAGE sql AS $$
  SELECT temp_files FROM pg_stat_database WHERE datname = current_database()
$$;

-- temporary files before a build, and the build's record after it
CREATE TABLE sb_mark (temp_files bigint);
CREATE TABLE sb_builds (tbl text, spilled boolean, checked boolean, pages bigint, temps bigint);
CREATE FUNCTION sb_before() RETURNS void LANGUAGE sql AS $$
  DELETE FROM sb_mark; INSERT INTO sb_mark SELECT sb_temp_files();
$$;
CREATE FUNCTION sb_after(tbl text) RETURNS void LANGUAGE sql AS $$
  INSERT INTO sb_builds
  SELECT tbl, sb_temp_files() > (SELECT temp_files FROM sb_mark),
         hybrid_index_check((tbl || '_idx')::regclass),
         (hybrid_index_inspect((tbl || '_idx')::regclass)->>'pages')::bigint,
         sb_temp_files() - (SELECT temp_files FROM sb_mark);
$$;
-- each build in statements of its own (\gexec runs every cell as one):
-- the backend's statistics of its temporary files are flushed before
-- sb_after reads them
SELECT 'SELECT sb_before()',
       format('SET maintenance_work_mem = %L', mem),
       format('CREATE INDEX %I ON %I USING %s (geom)', tbl || '_idx', tbl, am),
       'RESET maintenance_work_mem',
       'SELECT pg_stat_force_next_flush()',
       format('SELECT sb_after(%L)', tbl)
FROM sb_cases
ORDER BY array_position(ARRAY['hyrtree', 'efind', 'lbgrid', 'hgrid'], am),
         mem DESC \gexec

-- the 1MB builds spilled, the 1GB builds did not; all are consistent
SELECT c.am, c.mem, b.spilled, b.checked
FROM sb_builds b JOIN sb_cases c USING (tbl) ORDER BY c.am, c.mem;

-- spilled and in-memory builds have about the same size
SELECT s.am, mb.pages > 0 AS nonempty,
       abs(sb.pages - mb.pages)::float8 / mb.pages < 0.1 AS pages_within_10pct
FROM sb_cases s JOIN sb_cases m ON m.am = s.am AND m.mem = '1GB'
     JOIN sb_builds sb ON sb.tbl = s.tbl JOIN sb_builds mb ON mb.tbl = m.tbl
WHERE s.mem = '1MB' ORDER BY s.am;

-- query geometries
CREATE TABLE sb_q (qid int, g geometry);
INSERT INTO sb_q
  SELECT i, ST_MakeEnvelope(x, y, x + w, y + h)
  FROM (SELECT i, random() * 1000 AS x, random() * 1000 AS y,
               random() * random() * 120 AS w, random() * random() * 120 AS h
        FROM generate_series(1, 5) i) s;
INSERT INTO sb_q VALUES
  (101, ST_MakeEnvelope(290, 690, 310, 710)),             -- in the cluster
  (102, 'POINT(250 250)'),                                -- the duplicates
  (103, ST_MakeEnvelope(2000, 2000, 3000, 3000));         -- nothing
INSERT INTO sb_q
  SELECT 200 + row_number() OVER (ORDER BY id), geom FROM sb0
  WHERE id IN (7, 200011, 400005, 500003);
INSERT INTO sb_q
  SELECT 300 + row_number() OVER (ORDER BY id), ST_PointOnSurface(geom) FROM sb0
  WHERE kind = 'polygon' AND id % 1000 = 0;  -- inside polygons

CREATE TABLE sb_ops (op text, sqltext text);
INSERT INTO sb_ops VALUES
  ('&&', 'SELECT id FROM %I WHERE geom && %L::geometry'),
  ('~=', 'SELECT id FROM %I WHERE geom ~= %L::geometry'),
  ('~',  'SELECT id FROM %I WHERE geom ~ %L::geometry'),
  ('@',  'SELECT id FROM %I WHERE geom @ %L::geometry');

-- index scan and bitmap scan = sequential scan, for every operator
CREATE TABLE sb_res AS
  SELECT c.am, c.mem, o.op, q.qid, d.*
  FROM sb_cases c CROSS JOIN sb_ops o CROSS JOIN sb_q q,
       LATERAL hit.diff(format(o.sqltext, c.tbl, q.g), c.tbl || '_idx') d;
SELECT am, mem, op, count(*) AS queries, sum(n) AS total_rows,
       count(*) FILTER (WHERE n > 0) AS nonempty,
       bool_and(seq_plan AND index_plan AND bitmap_plan) AS plans,
       bool_and(index_same) AS index_same, bool_and(bitmap_same) AS bitmap_same
FROM sb_res GROUP BY am, mem, op ORDER BY am, mem, op;
SELECT * FROM sb_res
WHERE NOT (seq_plan AND index_same AND index_plan AND bitmap_same AND bitmap_plan)
ORDER BY am, mem, op, qid;

-- the spilled and the in-memory index give the same rows (both tables
-- hold the same rows)
SELECT s.am, bool_and(s.n = m.n) AS same_counts
FROM sb_res s JOIN sb_res m ON m.am = s.am AND m.op = s.op AND m.qid = s.qid AND m.mem = '1GB'
WHERE s.mem = '1MB' GROUP BY s.am ORDER BY s.am;

-- kNN in true distance order
CREATE TABLE sb_kres AS
  SELECT c.am, c.mem, k, q.qid, d.*
  FROM sb_cases c CROSS JOIN (VALUES (1), (25)) kk(k)
       CROSS JOIN (SELECT * FROM sb_q WHERE qid IN (1, 101, 102, 201)) q,
       LATERAL hit.knn_diff(c.tbl, c.tbl || '_idx', q.g, k) d;
SELECT am, mem, count(*) AS queries, sum(n) AS total_rows,
       bool_and(dist_same) AS dist_same, bool_and(ids_same) AS ids_same,
       bool_and(index_plan AND seq_plan) AS plans
FROM sb_kres GROUP BY am, mem ORDER BY am, mem;
SELECT * FROM sb_kres WHERE NOT (dist_same AND ids_same AND index_plan AND seq_plan)
ORDER BY am, mem, k, qid;

-- the indexes stay usable: inserts after a spilled build, checked again
DO $$
DECLARE
  c record;
BEGIN
  FOR c IN SELECT * FROM sb_cases WHERE mem = '1MB' LOOP
    EXECUTE format('INSERT INTO %I SELECT 800000 + i, ''late'', ST_MakePoint(i, 1000 - i) FROM generate_series(1, 500) i', c.tbl);
  END LOOP;
END $$;
SELECT c.am, hybrid_index_check(c.tbl || '_idx') AS checked,
       (hit.diff(format('SELECT id FROM %I WHERE geom && ST_MakeEnvelope(0, 500, 500, 1000)', c.tbl),
                 c.tbl || '_idx')).index_same AS index_same
FROM sb_cases c WHERE mem = '1MB' ORDER BY c.am;

-- how the spilled grid builds sent entries to their regions: the 1MB
-- builds above have few enough regions for a temporary file each; with
-- more regions than 1MB has file buffers for (64), the entries go through
-- one sort by region instead (a file or two, not one per region)
SELECT c.am, b.temps >= 10 AS file_per_region
FROM sb_builds b JOIN sb_cases c USING (tbl)
WHERE c.mem = '1MB' AND c.am IN ('lbgrid', 'hgrid') ORDER BY c.am;
CREATE TABLE sb_many AS
  SELECT i AS id, ST_MakePoint(random() * 1000, random() * 1000) AS geom
  FROM generate_series(1, 320000) i;
ANALYZE sb_many;
SELECT sb_before();
SET maintenance_work_mem = '1MB';
CREATE INDEX sb_many_idx ON sb_many USING hgrid (geom);
RESET maintenance_work_mem;
SELECT pg_stat_force_next_flush();
SELECT sb_temp_files() - temp_files BETWEEN 1 AND 9 AS sorted_by_region FROM sb_mark;
SELECT hybrid_index_check('sb_many_idx', heapallindexed => true) AS checked;
SELECT bool_and(d.seq_plan AND d.index_plan AND d.bitmap_plan) AS plans,
       bool_and(d.index_same AND d.bitmap_same) AS same, sum(d.n) > 0 AS found
FROM sb_q q,
     LATERAL hit.diff(format('SELECT id FROM sb_many WHERE geom && %L::geometry', q.g), 'sb_many_idx') d;
DROP TABLE sb_many;

DO $$
DECLARE
  c record;
BEGIN
  FOR c IN SELECT * FROM sb_cases LOOP
    EXECUTE format('DROP TABLE %I', c.tbl);
  END LOOP;
END $$;
DROP TABLE sb0, sb_cases, sb_mark, sb_builds, sb_q, sb_ops, sb_res, sb_kres;
DROP FUNCTION sb_temp_files(), sb_before(), sb_after(text);
