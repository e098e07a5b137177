--
-- explain_buffers: EXPLAIN (ANALYZE, BUFFERS) shows the index's page hits
-- and reads on its scan node, for every access method, as for GiST (our
-- pages count as shared blocks: they are in the extension's shared page
-- cache, in pages of the index's page_size).  A Bitmap Index Scan node
-- counts the index's pages alone; an Index Scan node counts the heap pages
-- it fetches too, as for any access method.
--
SET client_min_messages = warning;
SELECT setseed(0.11);
CREATE TABLE eb (id int, geom geometry);
INSERT INTO eb SELECT i, ST_MakePoint(random() * 100, random() * 100)
  FROM generate_series(1, 20000) i;

-- the index scan node of a plan (JSON), its shared hit and read blocks
CREATE FUNCTION pg_temp.eb_node(q text, OUT node text, OUT hit bigint, OUT rd bigint)
LANGUAGE plpgsql AS $$
DECLARE
  p jsonb;
  n jsonb;
BEGIN
  EXECUTE 'EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ' || q INTO p;
  -- the plan's nodes, depth first: the first index scan
  WITH RECURSIVE t(j) AS (SELECT p->0->'Plan'
                          UNION ALL SELECT c FROM t, jsonb_array_elements(t.j->'Plans') c)
  SELECT j INTO n FROM t WHERE j->>'Node Type' IN ('Index Scan', 'Bitmap Index Scan') LIMIT 1;
  node := n->>'Node Type';
  hit := (n->>'Shared Hit Blocks')::bigint;
  rd := (n->>'Shared Read Blocks')::bigint;
END $$;

CREATE TABLE eb_res (am text, path text, node text, hit bigint, rd bigint);
DO $$
DECLARE
  am text;
BEGIN
  FOREACH am IN ARRAY ARRAY['hyrtree', 'efind', 'lbgrid', 'hgrid', 'gist'] LOOP
    EXECUTE format('CREATE TABLE eb_%s AS SELECT * FROM eb', am);
    EXECUTE format('CREATE INDEX eb_%s_idx ON eb_%s USING %s (geom)', am, am, am);
    EXECUTE format('ANALYZE eb_%s', am);
    PERFORM set_config('enable_seqscan', 'off', true);
    PERFORM set_config('enable_indexscan', 'off', true);
    INSERT INTO eb_res SELECT am, 'bitmap', e.* FROM pg_temp.eb_node(
      format('SELECT count(*) FROM eb_%s WHERE geom && ST_MakeEnvelope(10, 10, 30, 30)', am)) e;
    PERFORM set_config('enable_indexscan', 'on', true);
    PERFORM set_config('enable_bitmapscan', 'off', true);
    INSERT INTO eb_res SELECT am, 'index', e.* FROM pg_temp.eb_node(
      format('SELECT id FROM eb_%s WHERE geom && ST_MakeEnvelope(10, 10, 30, 30)', am)) e;
    INSERT INTO eb_res SELECT am, 'knn', e.* FROM pg_temp.eb_node(
      format('SELECT id FROM eb_%s ORDER BY geom <-> ''POINT(50 50)'' LIMIT 10', am)) e;
    PERFORM set_config('enable_bitmapscan', 'on', true);
  END LOOP;
END $$;
-- every scan node shows the index's pages (hits + reads)
SELECT am, path, node, hit + rd > 0 AS shows_pages FROM eb_res ORDER BY am, path;

DROP TABLE eb, eb_res, eb_hyrtree, eb_efind, eb_lbgrid, eb_hgrid, eb_gist;
