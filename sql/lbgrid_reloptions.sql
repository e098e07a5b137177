--
-- lbgrid_reloptions: page sizes, bucket capacity, logging (LB-Grid or
-- GFFM), buffer sizes and split, the GUCs hybrid_index.lbgrid_* and the
-- reloptions that override them, and the errors for bad values.  (The test
-- cluster runs with hybrid_index.max_page_size = 32768.)
--
SELECT setseed(0.88);
CREATE TABLE lr (id bigint, geom geometry);
INSERT INTO lr
  SELECT i, CASE WHEN i % 4 = 0
                 THEN ST_MakePoint(50 + (random() - 0.5) * 10, 50 + (random() - 0.5) * 10)
                 ELSE ST_MakePoint(random() * 100, random() * 100) END
  FROM generate_series(1, 12000) i;
INSERT INTO lr
  SELECT 100000 + i, ST_Buffer(ST_MakePoint(random() * 100, random() * 100), random() * 3, 'quad_segs=1')
  FROM generate_series(1, 1000) i;
INSERT INTO lr VALUES (200001, NULL), (200002, 'POINT EMPTY');
CREATE TABLE lrq (qid int, g geometry);
INSERT INTO lrq
  SELECT i, ST_MakeEnvelope(x, y, x + w, y + w)
  FROM (SELECT i, random() * 100 AS x, random() * 100 AS y, random() * random() * 30 AS w
        FROM generate_series(1, 12) i) s;

-- build with one page size and mode, check, compare scans, insert, drop
CREATE FUNCTION try_options(opts text,
    OUT mode text, OUT page_size int, OUT capacity int, OUT check_ok boolean,
    OUT filters_ok boolean, OUT knn_ok boolean, OUT after_inserts_ok boolean)
LANGUAGE plpgsql AS $$
DECLARE
  j jsonb;
BEGIN
  EXECUTE format('CREATE INDEX lr_idx ON lr USING lbgrid (geom) WITH (%s)', opts);
  j := hybrid_index_inspect('lr_idx');
  mode := j->>'mode';
  page_size := (j->>'page_size')::int;
  capacity := (j->>'bucket_capacity')::int;
  check_ok := hybrid_index_check('lr_idx');
  SELECT bool_and(d.index_same AND d.index_plan AND d.bitmap_same AND d.bitmap_plan)
    INTO filters_ok
    FROM lrq, LATERAL hit.diff(format('SELECT id FROM lr WHERE geom && %L::geometry', lrq.g), 'lr_idx') d;
  SELECT bool_and(d.dist_same AND d.ids_same AND d.index_plan)
    INTO knn_ok
    FROM lrq, LATERAL hit.knn_diff('lr', 'lr_idx', ST_Centroid(lrq.g), 25) d;
  INSERT INTO lr SELECT 300000 + i, ST_MakePoint(random() * 100, random() * 100) FROM generate_series(1, 3000) i;
  SELECT hybrid_index_check('lr_idx') AND bool_and(d.index_same AND d.bitmap_same)
    INTO after_inserts_ok
    FROM lrq, LATERAL hit.diff(format('SELECT id FROM lr WHERE geom && %L::geometry', lrq.g), 'lr_idx') d;
  DELETE FROM lr WHERE id > 300000;
  DROP INDEX lr_idx;
END $$;

SELECT o, t.* FROM unnest(ARRAY[
    'page_size = 2048', 'page_size = 4096', 'page_size = 8192', 'page_size = 16384',
    'page_size = 32768', 'page_size = 2048, logging = off', 'page_size = 32768, logging = off',
    'page_size = 4096, bucket_capacity = 10', 'page_size = 4096, bucket_capacity = 60000',
    'logging = default, merge_threshold = 0']) o,
  LATERAL try_options(o) t;

-- defaults: 8 kB pages, LB-Grid, as many entries per bucket as a page holds
CREATE INDEX lr_default ON lr USING lbgrid (geom);
SELECT j->>'mode' AS mode, j->>'page_size' AS page_size, j->>'bucket_capacity' AS capacity,
       j->'buffers'->'directory'->>'hot_pages' AS dir_hot, j->'buffers'->'bucket'->>'hot_pages' AS bucket_hot,
       j->'buffers'->'directory'->>'cold_pages' AS dir_cold, j->'buffers'->'bucket'->>'cold_pages' AS bucket_cold
FROM hybrid_index_inspect('lr_default') j;
DROP INDEX lr_default;

-- the GUCs give the defaults of new indexes; reloptions win over them
SET hybrid_index.lbgrid_logging = off;
SET hybrid_index.lbgrid_bucket_capacity = 50;
SET hybrid_index.lbgrid_buffer_size = '1MB';
SET hybrid_index.lbgrid_buffer_split = 50;
SET hybrid_index.lbgrid_cold_size = 16;
CREATE INDEX lr_guc ON lr USING lbgrid (geom);
CREATE INDEX lr_rel ON lr USING lbgrid (geom)
  WITH (logging = on, bucket_capacity = 20, buffer_size = 512, buffer_split = 75, cold_size = 4);
SELECT i, j->>'mode' AS mode, j->>'bucket_capacity' AS capacity,
       j->'buffers'->'directory'->>'hot_pages' AS dir_hot, j->'buffers'->'bucket'->>'hot_pages' AS bucket_hot,
       j->'buffers'->'bucket'->>'cold_pages' AS bucket_cold,
       hybrid_index_check(i) AS check_ok
FROM unnest(ARRAY['lr_guc', 'lr_rel']::regclass[]) i, LATERAL hybrid_index_inspect(i) j;
RESET hybrid_index.lbgrid_logging;
RESET hybrid_index.lbgrid_bucket_capacity;
RESET hybrid_index.lbgrid_buffer_size;
RESET hybrid_index.lbgrid_buffer_split;
RESET hybrid_index.lbgrid_cold_size;
DROP INDEX lr_guc, lr_rel;

-- per-operation knobs can change on a live index
CREATE INDEX lr_idx ON lr USING lbgrid (geom) WITH (page_size = 4096);
ALTER INDEX lr_idx SET (knn_prefetch = off, batch_size = 1, merge_threshold = 10,
                        compact_threshold = 50, max_list = 4);
SELECT reloptions FROM pg_class WHERE relname = 'lr_idx';
SELECT bool_and(d.dist_same AND d.ids_same AND d.index_plan) AS knn_without_prefetch
FROM lrq, LATERAL hit.knn_diff('lr', 'lr_idx', ST_Centroid(lrq.g), 40) d;
SELECT bool_and(d.index_same AND d.bitmap_same) AS filters_unbatched
FROM lrq, LATERAL hit.diff(format('SELECT id FROM lr WHERE geom && %L::geometry', lrq.g), 'lr_idx') d;
-- many inserts into few buckets with max_list = 4: lists stay short
INSERT INTO lr SELECT 400000 + i, ST_MakePoint(random() * 100, random() * 100) FROM generate_series(1, 4000) i;
SELECT (j->'btt'->>'max_list_length')::int <= 5 AS lists_bounded,
       (j->'btt'->>'rewrites')::int > 0 AS rewrites,
       hybrid_index_check('lr_idx') AS check_ok
FROM hybrid_index_inspect('lr_idx') j;
ALTER INDEX lr_idx RESET (knn_prefetch, batch_size, merge_threshold, compact_threshold, max_list);
DROP INDEX lr_idx;

-- I/O statistics: batched reads and writes on the flash tier only
CREATE INDEX lr_idx ON lr USING lbgrid (geom) WITH (page_size = 2048, buffer_size = 128);
SELECT hybrid_index_reset_stats('lr_idx');
SET enable_seqscan = off;
SELECT count(*) > 0 AS found FROM lr WHERE geom && ST_MakeEnvelope(0, 0, 60, 60);
RESET enable_seqscan;
SELECT tier, pages > 0 AS has_pages, reads > 0 AS reads, read_batches < reads AS batched,
       cache_misses > 0 AS misses
FROM hybrid_index_stats('lr_idx') ORDER BY tier;
DROP INDEX lr_idx;

-- bad values
CREATE INDEX lr_bad ON lr USING lbgrid (geom) WITH (page_size = 3000);
CREATE INDEX lr_bad ON lr USING lbgrid (geom) WITH (page_size = 1024);
CREATE INDEX lr_bad ON lr USING lbgrid (geom) WITH (bucket_capacity = 1);
CREATE INDEX lr_bad ON lr USING lbgrid (geom) WITH (cold_size = 0);
CREATE INDEX lr_bad ON lr USING lbgrid (geom) WITH (buffer_split = 0);
CREATE INDEX lr_bad ON lr USING hgrid (geom) WITH (cold_size = 0);
CREATE INDEX lr_bad ON lr USING lbgrid (geom) WITH (logging = maybe);
CREATE INDEX lr_bad ON lr USING lbgrid (geom) WITH (merge_threshold = 60);
CREATE INDEX lr_bad ON lr USING lbgrid (geom) WITH (placement = 'wma');
SET hybrid_index.lbgrid_merge_threshold = 80;
SET hybrid_index.lbgrid_buffer_split = 0;
-- an lbgrid index has one column
CREATE INDEX lr_bad ON lr USING lbgrid (geom, geom);

DROP FUNCTION try_options(text);
DROP TABLE lr, lrq;
