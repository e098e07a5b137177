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
CREATE TABLE xb (id int, geom geometry);
INSERT INTO xb SELECT i, ST_MakePoint(random() * 100, random() * 100)
  FROM generate_series(1, 20000) i;

-- the index scan node of a plan (JSON), its shared hit and read blocks
CREATE FUNCTION pg_temp.xb_node(q text, OUT node text, OUT hit bigint, OUT rd bigint)
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

CREATE TABLE xb_res (am text, path text, node text, hit bigint, rd bigint);
DO $$
DECLARE
  am text;
BEGIN
  FOREACH am IN ARRAY ARRAY['hyrtree', 'efind', 'lbgrid', 'hgrid', 'gist'] LOOP
    EXECUTE format('CREATE TABLE xb_%s AS SELECT * FROM xb', am);
    EXECUTE format('CREATE INDEX xb_%s_idx ON xb_%s USING %s (geom)', am, am, am);
    EXECUTE format('ANALYZE xb_%s', am);
    PERFORM set_config('enable_seqscan', 'off', true);
    PERFORM set_config('enable_indexscan', 'off', true);
    INSERT INTO xb_res SELECT am, 'bitmap', e.* FROM pg_temp.xb_node(
      format('SELECT count(*) FROM xb_%s WHERE geom && ST_MakeEnvelope(10, 10, 30, 30)', am)) e;
    PERFORM set_config('enable_indexscan', 'on', true);
    PERFORM set_config('enable_bitmapscan', 'off', true);
    INSERT INTO xb_res SELECT am, 'index', e.* FROM pg_temp.xb_node(
      format('SELECT id FROM xb_%s WHERE geom && ST_MakeEnvelope(10, 10, 30, 30)', am)) e;
    INSERT INTO xb_res SELECT am, 'knn', e.* FROM pg_temp.xb_node(
      format('SELECT id FROM xb_%s ORDER BY geom <-> ''POINT(50 50)'' LIMIT 10', am)) e;
    PERFORM set_config('enable_bitmapscan', 'on', true);
  END LOOP;
END $$;
-- every scan node shows the index's pages (hits + reads)
SELECT am, path, node, hit + rd > 0 AS shows_pages FROM xb_res ORDER BY am, path;

DROP TABLE xb, xb_res, xb_hyrtree, xb_efind, xb_lbgrid, xb_hgrid, xb_gist;
