--
-- lbgrid_stats_ios: (1) hybrid_index_reset_stats zeroes the access
-- methods' own counters too (lbgrid and GFFM: splits, merges, buffer hits,
-- misses, batches, cold flushes, compactions; efind: flushes, read buffer,
-- temporal control), not only the tier and cache counters; (2) a forced
-- index-only scan that needs no column (count(*)) on lbgrid, GFFM and efind
-- counts what a sequential scan counts.  The grids have a buffer_size: the
-- thesis' buffers (and their counters) exist only with a budget.
-- Uses the helpers of hyrtree_00_setup (schema hit).
--
SET client_min_messages = warning;
SELECT setseed(0.271);
CREATE TABLE lsi (id bigint, geom geometry);
INSERT INTO lsi SELECT i, ST_MakePoint(random() * 1000, random() * 1000)
  FROM generate_series(1, 3000) i;
CREATE INDEX lsi_lb ON lsi USING lbgrid (geom) WITH (bucket_capacity = 16, buffer_size = 64, cold_size = 4);
CREATE TABLE lsg (id bigint, geom geometry);
INSERT INTO lsg SELECT id, geom FROM lsi;
CREATE INDEX lsg_gf ON lsg USING lbgrid (geom) WITH (logging = off, bucket_capacity = 16, buffer_size = 64, cold_size = 4);
CREATE TABLE lse (id bigint, geom geometry);
CREATE INDEX lse_ef ON lse USING efind (geom) WITH (buffer_size = 64, page_size = 2048);
INSERT INTO lse SELECT id, geom FROM lsi;

-- activity after the build: inserts (splits), deletes + vacuum (merges), queries
INSERT INTO lsi SELECT 5000 + i, ST_MakePoint(random() * 100, random() * 100)
  FROM generate_series(1, 1500) i;
INSERT INTO lsg SELECT id, geom FROM lsi WHERE id > 5000;
INSERT INTO lse SELECT id, geom FROM lsi WHERE id > 5000;
DELETE FROM lsi WHERE id % 3 = 0;
DELETE FROM lsg WHERE id % 3 = 0;
VACUUM lsi;
VACUUM lsg;
SET enable_seqscan = off;
SELECT count(id) > 0 AS rows FROM lsi WHERE geom && 'BOX(0 0, 500 500)'::box2d;
SELECT count(id) > 0 AS rows FROM lsg WHERE geom && 'BOX(0 0, 500 500)'::box2d;
SELECT count(id) > 0 AS rows FROM lse WHERE geom && 'BOX(0 0, 500 500)'::box2d;
RESET enable_seqscan;

-- the counters of one index as one jsonb (inspect's event counters)
CREATE FUNCTION hit.grid_counters(idx regclass) RETURNS jsonb
LANGUAGE sql AS $$
  SELECT jsonb_build_object(
    'splits', i->'splits', 'merges', i->'merges', 'dir_splits', i->'dir_splits',
    'dir_merges', i->'dir_merges', 'boundaries_removed', i->'boundaries_removed',
    'reorganisations', i->'reorganisations', 'overflows', i->'overflows',
    'dir', (i->'buffers'->'directory') - 'hot_pages' - 'cold_pages' - 'hot_used' - 'cold_used',
    'bucket', (i->'buffers'->'bucket') - 'hot_pages' - 'cold_pages' - 'hot_used' - 'cold_used',
    'btt', jsonb_build_object('compactions', i->'btt'->'compactions', 'rewrites', i->'btt'->'rewrites',
                              'log_buckets_dead', i->'btt'->'log_buckets_dead',
                              'log_buckets_sealed', i->'btt'->'log_buckets_sealed'))
  FROM hybrid_index_inspect(idx) i $$;
-- sum of every number in a jsonb
CREATE FUNCTION hit.jsum(j jsonb) RETURNS numeric
LANGUAGE sql AS $$
  SELECT coalesce(sum(v::text::numeric), 0)
  FROM jsonb_path_query(j, 'strict $.** ? (@.type() == "number")') v $$;
CREATE FUNCTION hit.ef_counters(idx regclass) RETURNS jsonb
LANGUAGE sql AS $$
  SELECT jsonb_build_object('write_buffer', jsonb_build_object('records', e->'write_buffer'->'records',
                                                               'modifications', e->'write_buffer'->'modifications'),
                            'flushes', (e->'flushes') - 'last' - 'pages_per_flush',
                            'temporal', (e->'temporal') - 'read_queue' - 'write_queue',
                            'read_buffer', jsonb_build_object('hits', e->'read_buffer'->'hits',
                                                              'misses', e->'read_buffer'->'misses',
                                                              'admissions', e->'read_buffer'->'admissions',
                                                              'evictions', e->'read_buffer'->'evictions'),
                            'storage_reads', e->'storage_reads', 'storage_read_batches', e->'storage_read_batches',
                            'new_page_reads', e->'new_page_reads', 'merged_reads', e->'merged_reads')
  FROM hybrid_index_inspect(idx) i, LATERAL (SELECT i->'efind' AS e) x $$;

-- before: every kind of counter moved
SELECT (c->>'splits')::int > 0 AS splits, (c->>'merges')::int > 0 AS merges,
       (c->'bucket'->>'misses')::int > 0 AS bucket_misses,
       (c->'dir'->>'hits')::int + (c->'bucket'->>'hits')::int > 0 AS hits,
       (c->'bucket'->>'cold_flushes')::int > 0 AS cold_flushes,
       (c->'btt'->>'log_buckets_sealed')::int > 0 AS sealed
  FROM hit.grid_counters('lsi_lb') c;
SELECT (c->>'splits')::int > 0 AS splits, (c->>'merges')::int > 0 AS merges,
       (c->'bucket'->>'cold_flushes')::int > 0 AS cold_flushes
  FROM hit.grid_counters('lsg_gf') c;
SELECT (c->'flushes'->>'count')::int > 0 AS flushes,
       (c->'write_buffer'->>'modifications')::int > 0 AS modifications,
       hit.jsum(c->'read_buffer') > 0 AS read_buffer
  FROM hit.ef_counters('lse_ef') c;
SELECT sum(reads + writes) > 0 AS tier_io FROM hybrid_index_stats('lsi_lb');

CREATE TEMP TABLE before_reset AS
  SELECT 'lsi_lb' AS idx, hit.grid_counters('lsi_lb') AS c
  UNION ALL SELECT 'lsg_gf', hit.grid_counters('lsg_gf')
  UNION ALL SELECT 'lse_ef', hit.ef_counters('lse_ef');
SELECT hybrid_index_reset_stats('lsi_lb'), hybrid_index_reset_stats('lsg_gf'),
       hybrid_index_reset_stats('lse_ef');
-- after: what only changes and writes count is zero; what reads count
-- (hybrid_index_inspect itself reads every page) is far below what it was
SELECT idx,
       hit.jsum(c - 'dir' - 'bucket') AS structure,
       hit.jsum(c->'dir') - (c->'dir'->>'hits')::int - (c->'dir'->>'misses')::int
         - (c->'dir'->>'read_batches')::int AS dir_writes,
       hit.jsum(c->'bucket') - (c->'bucket'->>'hits')::int - (c->'bucket'->>'misses')::int
         - (c->'bucket'->>'read_batches')::int - (c->'bucket'->>'evictions')::int AS bucket_writes,
       hit.jsum(c) < (SELECT hit.jsum(b.c) FROM before_reset b WHERE b.idx = a.idx) AS reads_dropped
  FROM (SELECT 'lsi_lb' AS idx, hit.grid_counters('lsi_lb') AS c
        UNION ALL SELECT 'lsg_gf', hit.grid_counters('lsg_gf')) a ORDER BY idx;
SELECT hit.jsum(c->'write_buffer') AS write_buffer, hit.jsum(c->'flushes') AS flushes,
       hit.jsum(c->'temporal') AS temporal,
       hit.jsum(c) < (SELECT hit.jsum(b.c) FROM before_reset b WHERE b.idx = 'lse_ef') AS reads_dropped
  FROM hit.ef_counters('lse_ef') c;
SELECT sum(writes + write_batches + bytes_written + log_bytes) AS tier_writes
  FROM hybrid_index_stats('lsi_lb');
SELECT hybrid_index_check('lsi_lb'), hybrid_index_check('lsg_gf'), hybrid_index_check('lse_ef');
-- and they count again
SET enable_seqscan = off;
SELECT count(id) > 0 AS rows FROM lsi WHERE geom && 'BOX(0 0, 500 500)'::box2d;
RESET enable_seqscan;
SELECT (c->'dir'->>'hits')::int + (c->'bucket'->>'hits')::int
       + (c->'bucket'->>'misses')::int > 0 AS counting
  FROM hit.grid_counters('lsi_lb') c;

-- index-only scans of count(*): need no column, get a NULL key
INSERT INTO lsi VALUES (90001, NULL), (90002, 'POINT EMPTY');
INSERT INTO lsg VALUES (90001, NULL), (90002, 'POINT EMPTY');
INSERT INTO lse VALUES (90001, NULL), (90002, 'POINT EMPTY');
VACUUM lsi;
VACUUM lsg;
VACUUM lse;
CREATE FUNCTION hit.ios_count(tbl text, idx text, w text, OUT ios_plan boolean, OUT same boolean)
LANGUAGE plpgsql AS $$
DECLARE
  q text := format('SELECT count(*) FROM %I WHERE %s', tbl, w);
  p text := '';
  l text;
  n_seq bigint;
  n_ios bigint;
BEGIN
  PERFORM hit.use_path('seq');
  EXECUTE q INTO n_seq;
  PERFORM hit.use_path('default');
  SET LOCAL enable_seqscan = off;
  SET LOCAL enable_bitmapscan = off;
  SET LOCAL enable_indexonlyscan = on;
  FOR l IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    p := p || l || E'\n';
  END LOOP;
  ios_plan := position('Index Only Scan using ' || idx IN p) > 0;
  EXECUTE q INTO n_ios;
  same := n_ios = n_seq AND n_seq > 0;
  RESET enable_seqscan;
  RESET enable_bitmapscan;
  RESET enable_indexonlyscan;
END $$;
-- (a qual on geom needs the column, which these AMs cannot return: plain count(*))
SELECT * FROM hit.ios_count('lsi', 'lsi_lb', 'true');
SELECT * FROM hit.ios_count('lsg', 'lsg_gf', 'true');
SELECT * FROM hit.ios_count('lse', 'lse_ef', 'true');
DROP TABLE lsi, lsg, lse;
DROP FUNCTION hit.grid_counters(regclass), hit.jsum(jsonb), hit.ef_counters(regclass),
  hit.ios_count(text, text, text);
