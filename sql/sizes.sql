--
-- sizes: pg_relation_size, pg_indexes_size, pg_table_size (psql's \di+) and
-- pg_total_relation_size report an index's files (tier files, map file,
-- log), rounded up to whole blocks, for every access method: after the
-- build, after inserts once the index checkpointed, after REINDEX (a new
-- relfilenode) and after TRUNCATE.  GiST is measured next to them.  Answers
-- stay exact (index = bitmap = sequential scan).
--
SET client_min_messages = warning;
SELECT setseed(0.21);
CREATE TABLE sz (id int, geom geometry);
INSERT INTO sz SELECT i, ST_MakePoint(random() * 100, random() * 100)
  FROM generate_series(1, 20000) i;

-- the size an index's files add up to, in whole blocks
CREATE FUNCTION pg_temp.files_bytes(idx regclass) RETURNS bigint
LANGUAGE sql AS $$
  SELECT ceil(sum(bytes) / 8192.0)::bigint * 8192 FROM hybrid_index_files(idx)
$$;

-- index, bitmap and sequential scans of one window agree
CREATE FUNCTION pg_temp.same(tbl text) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
  q text := format('SELECT coalesce(sum(id), 0) FROM %I WHERE geom && ST_MakeEnvelope(20, 20, 45, 45)', tbl);
  s bigint; i bigint; b bigint;
BEGIN
  PERFORM set_config('enable_indexscan', 'off', true);
  PERFORM set_config('enable_bitmapscan', 'off', true);
  EXECUTE q INTO s;
  PERFORM set_config('enable_seqscan', 'off', true);
  PERFORM set_config('enable_indexscan', 'on', true);
  EXECUTE q INTO i;
  PERFORM set_config('enable_indexscan', 'off', true);
  PERFORM set_config('enable_bitmapscan', 'on', true);
  EXECUTE q INTO b;
  PERFORM set_config('enable_seqscan', 'on', true);
  PERFORM set_config('enable_indexscan', 'on', true);
  RETURN s = i AND i = b;
END $$;

CREATE TABLE sz_res (am text, step text, rel_ok boolean, nonzero boolean,
                     indexes_ok boolean, table_ok boolean, total_ok boolean,
                     same boolean, bytes bigint);
CREATE FUNCTION pg_temp.measure(am text, step text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  t text := 'sz_' || am;
  i regclass := ('sz_' || am || '_idx')::regclass;
  r bigint := pg_relation_size(i);
BEGIN
  INSERT INTO sz_res VALUES (am, step,
    CASE WHEN am = 'gist' THEN true ELSE r = pg_temp.files_bytes(i) END,
    r > 0,
    pg_indexes_size(t::regclass) = r,
    pg_table_size(i) = r,
    pg_total_relation_size(t::regclass) = pg_table_size(t::regclass) + r,
    pg_temp.same(t), r);
END $$;

DO $$
DECLARE
  am text;
BEGIN
  FOREACH am IN ARRAY ARRAY['hyrtree', 'efind', 'lbgrid', 'hgrid', 'gist'] LOOP
    EXECUTE format('CREATE TABLE sz_%s AS SELECT * FROM sz', am);
    EXECUTE format('CREATE INDEX sz_%s_idx ON sz_%s USING %s (geom)', am, am, am);
    PERFORM pg_temp.measure(am, '1 build');
    EXECUTE format('INSERT INTO sz_%s SELECT 100000 + i, ST_MakePoint(random() * 100, random() * 100) FROM generate_series(1, 20000) i', am);
    IF am <> 'gist' THEN
      PERFORM hybrid_index_checkpoint(format('sz_%s_idx', am)::regclass);
    END IF;
    PERFORM pg_temp.measure(am, '2 inserts');
    EXECUTE format('REINDEX INDEX sz_%s_idx', am);
    PERFORM pg_temp.measure(am, '3 reindex');
    EXECUTE format('TRUNCATE sz_%s', am);
    PERFORM pg_temp.measure(am, '4 truncate');
  END LOOP;
END $$;
SELECT am, step, rel_ok, nonzero, indexes_ok, table_ok, total_ok, same
FROM sz_res ORDER BY am, step;

-- the size grows with the rows and shrinks with TRUNCATE, as GiST's does
SELECT am,
       max(bytes) FILTER (WHERE step = '2 inserts') > max(bytes) FILTER (WHERE step = '1 build') AS grew,
       max(bytes) FILTER (WHERE step = '4 truncate') < max(bytes) FILTER (WHERE step = '1 build') AS shrank
FROM sz_res GROUP BY am ORDER BY am;

DROP TABLE sz_res, sz_hyrtree, sz_efind, sz_lbgrid, sz_hgrid, sz_gist;

-- pages are written copy-on-write wherever free slots are: after inserts
-- rewrote most pages, one index checkpoint still leaves each tier file
-- within 1/8 (plus 16 slots) of its live pages (it moves the highest pages
-- down into the slots it freed, then cuts the end off); answers stay exact
CREATE TABLE sz_compact (am text, slots bigint, pages bigint, same boolean);
DO $$
DECLARE
  am text;
  i regclass;
  ps int;
BEGIN
  FOREACH am IN ARRAY ARRAY['hyrtree', 'efind', 'lbgrid', 'hgrid'] LOOP
    EXECUTE format('CREATE TABLE sz_%s AS SELECT * FROM sz', am);
    EXECUTE format('CREATE INDEX sz_%s_idx ON sz_%s USING %s (geom)', am, am, am);
    i := format('sz_%s_idx', am)::regclass;
    EXECUTE format('INSERT INTO sz_%s SELECT 100000 + i, ST_MakePoint(random() * 100, random() * 100) FROM generate_series(1, 40000) i', am);
    PERFORM hybrid_index_checkpoint(i);
    ps := (hybrid_index_inspect(i)->>'page_size')::int;
    INSERT INTO sz_compact
    SELECT am, f.bytes / ps, s.pages, pg_temp.same('sz_' || am)
    FROM hybrid_index_files(i) f JOIN hybrid_index_stats(i) s ON s.tier = f.kind;
  END LOOP;
END $$;
SELECT am, bool_and(slots <= pages + pages / 8 + 16) AS compact, bool_and(same) AS same
FROM sz_compact GROUP BY am ORDER BY am;

DROP TABLE sz, sz_compact, sz_hyrtree, sz_efind, sz_lbgrid, sz_hgrid;
