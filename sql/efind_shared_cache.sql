--
-- efind_shared_cache: an efind index with default memory (no buffer_size:
-- its stored pages are read through the shared page cache, and a backend
-- reuses the inner pages it assembled last while their Write Buffer Table
-- entries are unchanged, efind_memo.c).  A second backend (dblink) changes
-- the inner pages between this backend's reads: after every step this
-- backend's index and bitmap scans and kNN must equal a sequential scan.
--
CREATE EXTENSION IF NOT EXISTS dblink;
SELECT setseed(0.41);
CREATE TABLE es (id bigint, geom geometry);
INSERT INTO es
  SELECT i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 3000) i;
-- small pages: three levels, so inner pages below the root are buffered too
CREATE INDEX es_idx ON es USING efind (geom) WITH (page_size = 2048);
CREATE TABLE esq (qid int, g geometry);
INSERT INTO esq
  SELECT i, ST_MakeEnvelope(x, y, x + 200, y + 200)
  FROM (SELECT i, random() * 900 AS x, random() * 900 AS y FROM generate_series(1, 3) i) s;
INSERT INTO esq VALUES (100, ST_MakeEnvelope(-1, -1, 2001, 2001));

SELECT dblink_connect('other', format('dbname=%s port=%s host=%s', current_database(),
                      current_setting('port'),
                      split_part(current_setting('unix_socket_directories'), ',', 1)));

-- one step: this backend reads (and keeps the inner pages it assembles),
-- the other backend changes the index, this backend reads again
CREATE FUNCTION es_step(sql text, OUT height int, OUT filters_ok boolean, OUT knn_ok boolean,
                        OUT check_ok boolean)
LANGUAGE plpgsql AS $$
DECLARE
  d record;
BEGIN
  PERFORM count(*) FROM es WHERE geom && ST_MakeEnvelope(0, 0, 1000, 1000);
  PERFORM dblink_exec('other', sql);
  SELECT * INTO d FROM hit.ef_diff_all('es', 'es_idx', 'esq', 25);
  filters_ok := d.filters_ok;
  knn_ok := d.knn_ok;
  check_ok := hybrid_index_check('es_idx');
  height := (hybrid_index_inspect('es_idx')->>'height')::int;
END $$;

SELECT * FROM es_step('SET application_name = ''es''');
-- rows outside every box so far: the root's and inner pages' boxes grow
SELECT * FROM es_step($$INSERT INTO es SELECT 10000 + i, ST_MakePoint(1000 + i, 1000 + i)
                        FROM generate_series(1, 50) i$$);
-- enough rows to split leaves and inner pages (the other backend seeds its
-- own random(): setseed above reaches only this one, and the height printed
-- depends on the points)
SELECT * FROM es_step($$SELECT setseed(0.17); INSERT INTO es SELECT 20000 + i, ST_MakePoint(random() * 1100, random() * 1100)
                        FROM generate_series(1, 3000) i$$);
-- this backend inserts, then the other one, into the same leaves
INSERT INTO es SELECT 30000 + i, ST_MakePoint(500 + i * 0.01, 500) FROM generate_series(1, 200) i;
SELECT * FROM es_step($$INSERT INTO es SELECT 40000 + i, ST_MakePoint(500 + i * 0.01, 500.5)
                        FROM generate_series(1, 200) i$$);
-- deletions and VACUUM in the other backend shrink and remove entries
SELECT * FROM es_step('DELETE FROM es WHERE id % 3 = 0');
SELECT * FROM es_step('VACUUM es');
-- a checkpoint writes every buffered page: no entry is left for a kept page
SELECT * FROM es_step($q$DO $d$ BEGIN PERFORM hybrid_index_checkpoint('es_idx'); END $d$$q$);
SELECT * FROM es_step($$INSERT INTO es SELECT 50000 + i, ST_MakePoint(-100 - i, -100)
                        FROM generate_series(1, 100) i$$);
-- REINDEX in the other backend (outside es_step: this backend's open
-- transaction would hold it off): a new relfilenode and efind state
SELECT count(*) > 0 FROM es WHERE geom && ST_MakeEnvelope(0, 0, 1000, 1000);
SELECT dblink_exec('other', 'REINDEX INDEX es_idx');
SELECT * FROM es_step('SET application_name = ''es''');
SELECT * FROM es_step($$SELECT setseed(0.23); INSERT INTO es SELECT 60000 + i, ST_MakePoint(random() * 1000, random() * 1000)
                        FROM generate_series(1, 500) i$$);
SELECT count(*) FROM es;

SELECT dblink_disconnect('other');
DROP FUNCTION es_step(text);
DROP TABLE es, esq;
DROP EXTENSION dblink;
