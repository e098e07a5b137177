--
-- lbgrid_dml: inserts after the build (bucket splits, sub-directory
-- splits, new root boundaries), deletes and VACUUM (merges, boundary
-- removal, sub-directory merges, log-bucket compaction), updates, rolled
-- back inserts, TRUNCATE, REINDEX, VACUUM FULL, an index built on an empty
-- table, COPY; for LB-Grid (ld) and GFFM (gd).  After each step both
-- indexes pass hybrid_index_check, count their entries right and answer
-- exactly like a sequential scan.  Tiny buffers make the cold lists
-- overflow (batched write-back) all the time.
--
SELECT setseed(0.5);
CREATE TABLE ld (id bigint, geom geometry);
INSERT INTO ld
  SELECT i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 3000) i;
CREATE TABLE gd AS SELECT * FROM ld;
CREATE INDEX ld_idx ON ld USING lbgrid (geom)
  WITH (page_size = 2048, bucket_capacity = 12, buffer_size = 96, cold_size = 8, buffer_split = 20);
CREATE INDEX gd_idx ON gd USING lbgrid (geom)
  WITH (page_size = 2048, bucket_capacity = 12, buffer_size = 96, cold_size = 8, buffer_split = 20,
        logging = off);

CREATE TABLE dq (qid int, g geometry);
INSERT INTO dq
  SELECT i, ST_MakeEnvelope(x, y, x + w, y + h)
  FROM (SELECT i, random() * 1000 AS x, random() * 1000 AS y,
               random() * 250 AS w, random() * 250 AS h FROM generate_series(1, 16) i) s;
INSERT INTO dq VALUES (100, ST_MakeEnvelope(-1, -1, 2001, 2001)), (101, 'POINT(123 456)');

-- state of both indexes: check passes, entries = heap rows (after
-- VACUUM), filters and kNN agree with a sequential scan
CREATE FUNCTION dml_state(OUT tbl text, OUT rows bigint, OUT check_ok boolean,
                          OUT filters_ok boolean, OUT knn_ok boolean)
RETURNS SETOF record LANGUAGE plpgsql AS $$
BEGIN
  FOREACH tbl IN ARRAY ARRAY['gd', 'ld'] LOOP
    EXECUTE format('SELECT count(*) FROM %I', tbl) INTO rows;
    check_ok := hybrid_index_check(tbl || '_idx');
    SELECT bool_and(d.index_same AND d.index_plan AND d.bitmap_same AND d.bitmap_plan)
      INTO filters_ok
      FROM dq, LATERAL hit.diff(format('SELECT id FROM %I WHERE geom && %L::geometry', tbl, dq.g), tbl || '_idx') d;
    SELECT bool_and(d.dist_same AND d.ids_same AND d.index_plan)
      INTO knn_ok
      FROM dq, LATERAL hit.knn_diff(tbl, tbl || '_idx', ST_Centroid(dq.g), 30) d
      WHERE dq.qid < 8;
    RETURN NEXT;
  END LOOP;
END $$;
-- after VACUUM: entries and null_entries = heap rows
CREATE FUNCTION dml_entries_ok(OUT tbl text, OUT entries_ok boolean)
RETURNS SETOF record LANGUAGE plpgsql AS $$
BEGIN
  FOREACH tbl IN ARRAY ARRAY['gd', 'ld'] LOOP
    EXECUTE format('SELECT (j->>''entries'')::bigint = (SELECT count(*) FROM %I WHERE geom IS NOT NULL AND NOT ST_IsEmpty(geom))
                       AND (j->>''null_entries'')::bigint = (SELECT count(*) FROM %I WHERE geom IS NULL OR ST_IsEmpty(geom))
                     FROM hybrid_index_inspect(%L) j', tbl, tbl, tbl || '_idx') INTO entries_ok;
    RETURN NEXT;
  END LOOP;
END $$;
-- counters of both indexes
CREATE FUNCTION dml_counter(name text) RETURNS TABLE (tbl text, value bigint)
LANGUAGE sql AS $$
  SELECT t, (hybrid_index_inspect(t || '_idx')->>name)::bigint FROM unnest(ARRAY['gd', 'ld']) t ORDER BY t
$$;
CREATE FUNCTION on_both(q text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format(q, 'ld');
  EXECUTE format(q, 'gd');
END $$;

SELECT 'built' AS step, * FROM dml_state();
SELECT * FROM dml_entries_ok();

-- inserts after the build: bucket splits, sub-directory splits
SELECT on_both('INSERT INTO %I SELECT 5000 + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 12000) i');
-- a dense cluster far outside the built area, and exact duplicates
SELECT on_both('INSERT INTO %I SELECT 30000 + i, ST_MakePoint(5000 + random(), -3000 + random()) FROM generate_series(1, 1500) i');
SELECT on_both('INSERT INTO %I SELECT 40000 + i, ''POINT(123 456)'' FROM generate_series(1, 300) i');
-- polygons and lines: their reach widens regions
SELECT on_both('INSERT INTO %I SELECT 50000 + i, ST_Buffer(ST_MakePoint(random() * 1000, random() * 1000), random() * 40, ''quad_segs=2'') FROM generate_series(1, 800) i');
SELECT on_both('INSERT INTO %I VALUES (60001, NULL), (60002, ''POLYGON EMPTY''), (60003, ''POINT(-50000 90000)''), (60004, ST_MakePoint(''NaN''::float8, 1))');
SELECT 'inserted' AS step, * FROM dml_state();
SELECT tbl, value > 1000 AS many_splits FROM dml_counter('splits');
SELECT tbl, value > 5 AS subdir_splits FROM dml_counter('dir_splits');
SELECT tbl, value > 0 AS overflowing_buckets FROM dml_counter('overflows');
SELECT (j->'buffers'->'bucket'->>'cold_flushes')::int > 10 AS cold_list_flushes,
       (j->'buffers'->'directory'->>'cold_flushes')::int > 0 AS dir_cold_list_flushes
FROM hybrid_index_inspect('ld_idx') j;
SELECT (j->'btt'->>'avg_list_length')::float8 >= 1 AS lists,
       (j->'btt'->>'max_list_length')::int <= 33 AS max_list_respected
FROM hybrid_index_inspect('ld_idx') j;

-- deletes: dead rows are not returned, VACUUM removes their entries and
-- merges the buckets left under the threshold
SELECT on_both('DELETE FROM %I WHERE mod(id, 3) = 0');
SELECT 'deleted' AS step, * FROM dml_state();
VACUUM (INDEX_CLEANUP ON) ld;
VACUUM (INDEX_CLEANUP ON) gd;
SELECT 'vacuumed' AS step, * FROM dml_state();
SELECT * FROM dml_entries_ok();

-- updates move geometries (new index entries, old ones dead)
SELECT on_both('UPDATE %I SET geom = ST_Translate(geom, 3, -7) WHERE mod(id, 7) = 1');
SELECT 'updated' AS step, * FROM dml_state();
VACUUM (INDEX_CLEANUP ON) ld;
VACUUM (INDEX_CLEANUP ON) gd;
SELECT 'vacuumed' AS step, * FROM dml_state();
SELECT * FROM dml_entries_ok();

-- rolled back inserts are never returned
BEGIN;
SELECT on_both('INSERT INTO %I SELECT 900000 + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 2000) i');
SELECT count(*) AS visible_inside_transaction FROM ld WHERE id > 900000 AND geom && ST_MakeEnvelope(-1, -1, 1001, 1001);
ROLLBACK;
SELECT 'rolled back' AS step, * FROM dml_state();
SELECT count(*) AS aborted_rows_found FROM ld WHERE geom && ST_MakeEnvelope(-1, -1, 1001, 1001) AND id > 900000;
VACUUM (INDEX_CLEANUP ON) ld;
VACUUM (INDEX_CLEANUP ON) gd;

-- delete almost everything: merges cascade, boundaries and sub-directories go
SELECT on_both('DELETE FROM %I WHERE mod(id, 50) <> 0');
VACUUM (INDEX_CLEANUP ON) ld;
VACUUM (INDEX_CLEANUP ON) gd;
SELECT 'mostly deleted' AS step, * FROM dml_state();
SELECT * FROM dml_entries_ok();
SELECT tbl, value > 500 AS many_merges FROM dml_counter('merges');
SELECT tbl, value > 0 AS subdir_merges FROM dml_counter('dir_merges');
SELECT tbl, value > 100 AS boundaries_removed FROM dml_counter('boundaries_removed');
SELECT (j->'btt'->>'compactions')::int > 0 AS compactions,
       (j->'btt'->>'log_buckets_dead')::int > 100 AS log_buckets_freed,
       (j->'btt'->>'records_live')::float8 >= 0.25 * (j->'btt'->>'records')::float8 AS space_bounded
FROM hybrid_index_inspect('ld_idx') j;
SELECT on_both('DELETE FROM %I');
VACUUM (INDEX_CLEANUP ON) ld;
VACUUM (INDEX_CLEANUP ON) gd;
SELECT 'all deleted' AS step, * FROM dml_state();
SELECT * FROM dml_entries_ok();
SELECT tbl, value AS entries_left FROM dml_counter('entries');
SELECT tbl, value AS buckets_left FROM dml_counter('buckets');
-- and fill it again
SELECT on_both('INSERT INTO %I SELECT i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 6000) i');
SELECT 'refilled' AS step, * FROM dml_state();

-- TRUNCATE, REINDEX and VACUUM FULL give a fresh, working index
SELECT on_both('TRUNCATE %I');
SELECT 'truncated' AS step, * FROM dml_state();
SELECT on_both('INSERT INTO %I SELECT i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 4000) i');
SELECT 'after truncate' AS step, * FROM dml_state();
REINDEX INDEX ld_idx;
REINDEX INDEX gd_idx;
SELECT 'reindexed' AS step, * FROM dml_state();
VACUUM FULL ld;
VACUUM FULL gd;
SELECT 'vacuum full' AS step, * FROM dml_state();
SELECT * FROM dml_entries_ok();

-- an index built on an empty table, filled by inserts only
DROP INDEX ld_idx, gd_idx;
SELECT on_both('DELETE FROM %I');
CREATE INDEX ld_idx ON ld USING lbgrid (geom) WITH (page_size = 2048, bucket_capacity = 12);
CREATE INDEX gd_idx ON gd USING lbgrid (geom) WITH (page_size = 2048, bucket_capacity = 12, logging = off);
SELECT tbl, value AS entries_in_empty_index FROM dml_counter('entries');
SELECT on_both('INSERT INTO %I SELECT i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 5000) i');
SELECT 'empty build + inserts' AS step, * FROM dml_state();

-- COPY goes through the same insert path
COPY ld FROM STDIN;
990001	POINT(1 1)
990002	POINT(999 999)
990003	\N
990004	LINESTRING(0 0,1000 1000)
\.
COPY gd FROM STDIN;
990001	POINT(1 1)
990002	POINT(999 999)
990003	\N
990004	LINESTRING(0 0,1000 1000)
\.
SELECT 'copy' AS step, * FROM dml_state();
SELECT * FROM dml_entries_ok();

-- a checkpoint writes the buffers and the grid state; still consistent
SELECT hybrid_index_checkpoint('ld_idx'), hybrid_index_checkpoint('gd_idx');
SELECT 'checkpointed' AS step, * FROM dml_state();

DROP FUNCTION dml_state(), dml_entries_ok(), dml_counter(text), on_both(text);
DROP TABLE ld, gd, dq;
