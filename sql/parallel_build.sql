--
-- parallel_build: CREATE INDEX with parallel workers (issue 21).  Each
-- access method builds an index of points, polygons, lines, duplicates,
-- NULL and EMPTY rows with one worker plus the leader (the server says how
-- many workers it launched, at DEBUG1) and once serially on a copy of the
-- table.  The R-trees are built in parallel once more with 1MB of
-- maintenance_work_mem: both processes' sorts spill into runs, and the
-- worker packs its half of the leaf level from pieces of both processes'
-- runs.  Both must pass hybrid_index_check, have the same number of
-- entries and pages, answer every operator exactly as a sequential scan
-- (index and bitmap scans) and return kNN in true distance order.  The
-- grids use small pages, so that their root is cut and each process
-- builds one side (the server says how many entries the worker built):
-- the same root, sub-directories and buckets as the serial build.  They
-- are built in parallel once more with 1MB of maintenance_work_mem: both
-- processes' entries spill, and the first cut comes from their samples;
-- each process spreads its side's entries into regions as it parts them.
-- One more table (pbd) holds more duplicates than distinct points, all at
-- the corner: its first cut puts them all on the worker's side, which no
-- sample can cut into regions, so it is loaded whole there.
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
SELECT setseed(0.311);

CREATE TABLE pb0 (id bigint, kind text, geom geometry);
INSERT INTO pb0
  SELECT i, 'upoint', ST_MakePoint(random() * 1000, random() * 1000)
  FROM generate_series(1, 40000) i;
INSERT INTO pb0 SELECT 300000 + i, 'dup', 'POINT(250 250)' FROM generate_series(1, 200) i;
INSERT INTO pb0
  SELECT 400000 + i, 'polygon',
         ST_Buffer(ST_MakePoint(random() * 1000, random() * 1000),
                   1 + random() * random() * 40, 'quad_segs=2')
  FROM generate_series(1, 1000) i;
INSERT INTO pb0
  SELECT 500000 + i, 'line',
         ST_MakeLine(ST_MakePoint(x, y), ST_MakePoint(x + (random() - 0.5) * 60, y + (random() - 0.5) * 60))
  FROM (SELECT i, random() * 1000 AS x, random() * 1000 AS y FROM generate_series(1, 500) i) s;
INSERT INTO pb0 SELECT 600000 + i, 'null', NULL FROM generate_series(1, 500) i;
INSERT INTO pb0 SELECT 700000 + i, 'empty', 'POINT EMPTY' FROM generate_series(1, 20) i;

CREATE TABLE pbd AS
  SELECT id, kind, geom FROM pb0 WHERE kind = 'upoint' AND id <= 10000
  UNION ALL SELECT 800000 + i, 'corner', 'POINT(1000 1000)' FROM generate_series(1, 15000) i;

-- per access method a table built in parallel (p) and a copy built serially (s)
CREATE TABLE pb_cases (am text, tbl text, par boolean, mem text, src text DEFAULT 'pb0');
INSERT INTO pb_cases
  SELECT am, t || '_' || left(am, 2), par, NULL
  FROM (VALUES ('hyrtree'), ('efind'), ('lbgrid'), ('hgrid')) a(am),
       (VALUES ('pbp', true), ('pbs', false)) m(t, par);
INSERT INTO pb_cases VALUES ('lbgrid', 'pbm_lb', true, '1MB', 'pb0'), ('hgrid', 'pbm_hg', true, '1MB', 'pb0'),
  ('hyrtree', 'pbm_hy', true, '1MB', 'pb0'), ('efind', 'pbm_ef', true, '1MB', 'pb0'),
  ('lbgrid', 'pbd_lb', true, '1MB', 'pbd'), ('hgrid', 'pbd_hg', true, '1MB', 'pbd');
DO $$
DECLARE
  c record;
BEGIN
  FOR c IN SELECT * FROM pb_cases LOOP
    EXECUTE format('CREATE TABLE %I AS SELECT * FROM %I ORDER BY md5(id::text)', c.tbl, c.src);
    EXECUTE format('ALTER TABLE %I SET (parallel_workers = %s)', c.tbl,
                   CASE WHEN c.par THEN 1 ELSE 0 END);
    EXECUTE format('ANALYZE %I', c.tbl);
  END LOOP;
END $$;

-- this backend's first page writes before DEBUG1: without io_uring (the
-- nouring suite) the first one logs the fallback to synchronous I/O
CREATE TABLE pb_warm AS SELECT * FROM pb0 LIMIT 100;
CREATE INDEX pb_warm_idx ON pb_warm USING hyrtree (geom);
DROP TABLE pb_warm;

SET min_parallel_table_scan_size = 0;
SET max_parallel_maintenance_workers = 1;
SET client_min_messages = debug1;
SELECT format('%sCREATE INDEX %I ON %I USING %s (geom)%s%s',
              CASE WHEN mem IS NOT NULL THEN format('SET maintenance_work_mem = %L; ', mem) ELSE '' END,
              tbl || '_idx', tbl, am,
              CASE WHEN am IN ('lbgrid', 'hgrid') THEN ' WITH (page_size = 4096)' ELSE '' END,
              CASE WHEN mem IS NOT NULL THEN '; RESET maintenance_work_mem' ELSE '' END)
FROM pb_cases
ORDER BY array_position(ARRAY['hyrtree', 'efind', 'lbgrid', 'hgrid'], am), par DESC, tbl \gexec
SET client_min_messages = warning;
RESET max_parallel_maintenance_workers;
RESET min_parallel_table_scan_size;

-- consistent, and the same entries and pages as the serial build
SELECT p.am, hybrid_index_check((p.tbl || '_idx')::regclass) AS parallel_checked,
       hybrid_index_check((s.tbl || '_idx')::regclass) AS serial_checked,
       (hybrid_index_inspect((p.tbl || '_idx')::regclass)->>'pages') =
         (hybrid_index_inspect((s.tbl || '_idx')::regclass)->>'pages') AS same_pages,
       hybrid_index_check((p.tbl || '_idx')::regclass, heapallindexed => true) AS holds_every_row
FROM pb_cases p JOIN pb_cases s ON s.am = p.am AND NOT s.par
WHERE p.par AND p.mem IS NULL ORDER BY array_position(ARRAY['hyrtree', 'efind', 'lbgrid', 'hgrid'], p.am);
-- the spilled ones: consistent, every row
SELECT tbl, hybrid_index_check((tbl || '_idx')::regclass, heapallindexed => true) AS holds_every_row
FROM pb_cases WHERE mem IS NOT NULL ORDER BY tbl;

-- the R-trees built in parallel, spilled or not: the serial build's tree,
-- page by page (number, level, entries, box)
CREATE FUNCTION pb_tree(idx regclass) RETURNS text LANGUAGE sql AS $$
  SELECT md5(string_agg(format('%s/%s/%s/%s', pageno, level, entries, box), ';' ORDER BY pageno))
  FROM hybrid_index_pages(idx) $$;
SELECT p.tbl, pb_tree((p.tbl || '_idx')::regclass) = pb_tree((s.tbl || '_idx')::regclass) AS same_tree
FROM pb_cases p JOIN pb_cases s ON s.am = p.am AND NOT s.par
WHERE p.par AND p.am IN ('hyrtree', 'efind') ORDER BY p.tbl;
DROP FUNCTION pb_tree(regclass);

-- the grids: the same root directory, sub-directories and buckets
SELECT p.am, (pi->'root') = (si->'root') AS same_root,
       (pi->>'directories') = (si->>'directories') AS same_directories,
       (pi->>'buckets') = (si->>'buckets') AS same_buckets,
       (pi->>'avg_bucket_fill') = (si->>'avg_bucket_fill') AS same_fill,
       (pi->>'directories')::int > 1 AS root_cut
FROM pb_cases p JOIN pb_cases s ON s.am = p.am AND NOT s.par,
     LATERAL (SELECT hybrid_index_inspect((p.tbl || '_idx')::regclass) AS pi,
                     hybrid_index_inspect((s.tbl || '_idx')::regclass) AS si) x
WHERE p.par AND p.mem IS NULL AND p.am IN ('lbgrid', 'hgrid') ORDER BY p.am;

-- query geometries
CREATE TABLE pb_q (qid int, g geometry);
INSERT INTO pb_q
  SELECT i, ST_MakeEnvelope(x, y, x + w, y + h)
  FROM (SELECT i, random() * 1000 AS x, random() * 1000 AS y,
               random() * random() * 150 AS w, random() * random() * 150 AS h
        FROM generate_series(1, 5) i) s;
INSERT INTO pb_q VALUES
  (102, 'POINT(250 250)'),                                -- the duplicates
  (104, 'POINT(1000 1000)'),                              -- pbd's corner
  (103, ST_MakeEnvelope(2000, 2000, 3000, 3000));         -- nothing
INSERT INTO pb_q
  SELECT 200 + row_number() OVER (ORDER BY id), geom FROM pb0
  WHERE id IN (7, 400005, 500003);

CREATE TABLE pb_ops (op text, sqltext text);
INSERT INTO pb_ops VALUES
  ('&&', 'SELECT id FROM %I WHERE geom && %L::geometry'),
  ('~=', 'SELECT id FROM %I WHERE geom ~= %L::geometry'),
  ('~',  'SELECT id FROM %I WHERE geom ~ %L::geometry'),
  ('@',  'SELECT id FROM %I WHERE geom @ %L::geometry');

-- index scan and bitmap scan = sequential scan, for every operator
CREATE TABLE pb_res AS
  SELECT c.am, c.tbl, o.op, q.qid, d.*
  FROM pb_cases c CROSS JOIN pb_ops o CROSS JOIN pb_q q,
       LATERAL hit.diff(format(o.sqltext, c.tbl, q.g), c.tbl || '_idx') d;
SELECT am, tbl, count(*) AS queries, sum(n) AS total_rows,
       bool_and(seq_plan AND index_plan AND bitmap_plan) AS plans,
       bool_and(index_same) AS index_same, bool_and(bitmap_same) AS bitmap_same
FROM pb_res GROUP BY am, tbl ORDER BY am, tbl;

-- kNN in true distance order, NULL and EMPTY last
SELECT c.am, c.tbl, q.qid, d.n, d.dist_same, d.ids_same, d.index_plan
FROM pb_cases c CROSS JOIN (VALUES (1, 'POINT(500 500)'::geometry), (2, 'POINT(250 250)')) q(qid, g),
     LATERAL hit.knn_diff(c.tbl, c.tbl || '_idx', q.g, 60) d
ORDER BY c.am, c.tbl, q.qid;

DROP TABLE pb0, pbd, pb_q, pb_ops, pb_res;
DO $$
DECLARE
  c record;
BEGIN
  FOR c IN SELECT * FROM pb_cases LOOP
    EXECUTE format('DROP TABLE %I', c.tbl);
  END LOOP;
END $$;
DROP TABLE pb_cases;
