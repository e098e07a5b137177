--
-- insert_batch: index entries of inserted rows wait in the session and go
-- into their index in batches (hybrid_index.insert_batch), every access
-- method's along a Hilbert curve, the R-trees reading the batch's leaves
-- ahead.  Whatever a later statement,
-- a function in the same statement, a scan in the same transaction or
-- another session asks, the index answers as a sequential scan does;
-- entries of rolled-back subtransactions are gone; ON CONFLICT, exclusion
-- constraints, COPY, REINDEX and TRUNCATE in the same transaction work.
--
SELECT setseed(0.27);
CREATE TABLE ib (id bigint PRIMARY KEY, geom geometry);
INSERT INTO ib
  SELECT i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 3000) i;
CREATE INDEX ib_hy ON ib USING hyrtree (geom) WITH (page_size = 2048);
CREATE INDEX ib_ef ON ib USING efind (geom) WITH (page_size = 2048);
CREATE INDEX ib_lb ON ib USING lbgrid (geom) WITH (page_size = 4096);
CREATE INDEX ib_hg ON ib USING hgrid (geom) WITH (page_size = 4096);

CREATE TABLE ibq (qid int, g geometry);
INSERT INTO ibq VALUES (1, ST_MakeEnvelope(100, 100, 400, 300)),
                       (2, ST_MakeEnvelope(650, 20, 990, 700)),
                       (3, ST_MakeEnvelope(-1, -1, 1001, 1001));

-- every index: hybrid_index_check with heapallindexed, entries equal to
-- the live rows (no entry of a rolled-back row went in), every filter
-- through index and bitmap scans and kNN as a sequential scan answers
CREATE FUNCTION ib_state(OUT rows bigint, OUT check_ok boolean, OUT entries_ok boolean,
                         OUT filters_ok boolean, OUT knn_ok boolean)
LANGUAGE plpgsql AS $$
DECLARE
  ix text;
  w record;
  op text;
  d record;
BEGIN
  rows := (SELECT count(*) FROM ib);
  check_ok := true;
  entries_ok := true;
  filters_ok := true;
  knn_ok := true;
  FOREACH ix IN ARRAY ARRAY['ib_hy', 'ib_ef', 'ib_lb', 'ib_hg'] LOOP
    check_ok := check_ok AND hybrid_index_check(ix::regclass, true);
    entries_ok := entries_ok AND
      (SELECT (j->>'entries')::bigint + (j->>'null_entries')::bigint = rows
       FROM hybrid_index_inspect(ix::regclass) j);
    FOR w IN SELECT qid, g FROM ibq ORDER BY qid LOOP
      FOREACH op IN ARRAY ARRAY['&&', '~', '@'] LOOP
        SELECT * INTO d FROM hit.diff(format('SELECT id FROM ib WHERE geom %s %L::geometry', op, w.g), ix);
        filters_ok := filters_ok AND d.index_same AND d.bitmap_same;
      END LOOP;
      SELECT * INTO d FROM hit.knn_diff('ib', ix, ST_Centroid(w.g), 25);
      knn_ok := knn_ok AND d.dist_same AND d.ids_same;
    END LOOP;
  END LOOP;
END $$;

SELECT 'built' AS step, * FROM ib_state();

-- one statement of many rows: several full batches, the rest at commit
SET hybrid_index.insert_batch = 500;
INSERT INTO ib
  SELECT 10000 + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 4000) i;
SELECT 'statement' AS step, * FROM ib_state();
-- the batches of one statement: the entries of 100 rows (the four
-- indexes'), then 100 more, then those of the last 50 rows at the commit
SET hybrid_index.insert_batch = 400;
SET client_min_messages = debug1;
INSERT INTO ib
  SELECT 15000 + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 250) i;
RESET client_min_messages;
SET hybrid_index.insert_batch = 500;

-- later statements of the same transaction find the rows, through both
-- kinds of scan and kNN, before the commit
BEGIN;
INSERT INTO ib
  SELECT 20000 + i, ST_MakePoint(500 + random() * 10, 500 + random() * 10) FROM generate_series(1, 300) i;
SELECT 'in transaction' AS step, * FROM ib_state();
COMMIT;

-- a rolled-back savepoint takes the entries still waiting with it (those
-- of its released child too); the rows of the transaction around it stay
-- (the next statement would have put them in: entries of dead rows, which
-- VACUUM removes as it does any index's); no batch fills up meanwhile
SET hybrid_index.insert_batch = 2000;
BEGIN;
INSERT INTO ib
  SELECT 30000 + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 200) i;
SAVEPOINT s1;
SAVEPOINT s2;
INSERT INTO ib
  SELECT 32000 + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 200) i;
RELEASE SAVEPOINT s2;
ROLLBACK TO SAVEPOINT s1;
INSERT INTO ib
  SELECT 33000 + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 100) i;
COMMIT;
SELECT 'savepoints' AS step, * FROM ib_state();
SELECT count(*) FILTER (WHERE id BETWEEN 30001 AND 30200) AS kept,
       count(*) FILTER (WHERE id BETWEEN 32001 AND 32200) AS rolled_back,
       count(*) FILTER (WHERE id BETWEEN 33001 AND 33100) AS after
FROM ib;

-- an exception block: its rows go, the function's earlier rows stay
CREATE FUNCTION ib_insert_and_fail() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO ib
    SELECT 40000 + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 50) i;
  BEGIN
    INSERT INTO ib
      SELECT 41000 + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 50) i;
    RAISE EXCEPTION 'undo';
  EXCEPTION WHEN raise_exception THEN
    NULL;
  END;
END $$;
SELECT ib_insert_and_fail();
SELECT 'exception block' AS step, * FROM ib_state();

-- a volatile function's statements see the rows its caller inserted before
CREATE FUNCTION ib_insert_and_count(i int) RETURNS bigint LANGUAGE plpgsql
SET enable_seqscan = off SET enable_bitmapscan = off AS $$
BEGIN
  INSERT INTO ib VALUES (50000 + i, ST_MakePoint(-10 - i, -10 - i));
  RETURN (SELECT count(*) FROM ib WHERE geom && ST_MakeEnvelope(-100, -100, -10, -10));
END $$;
SELECT i, ib_insert_and_count(i) FROM generate_series(1, 5) i;
SELECT 'function' AS step, * FROM ib_state();

-- ON CONFLICT inserts at once (a conflicting speculative row dies at once)
INSERT INTO ib
  SELECT 10000 + 2 * i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 3000) i
ON CONFLICT (id) DO NOTHING;
INSERT INTO ib
  SELECT 60000 + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 100) i
ON CONFLICT (id) DO UPDATE SET geom = excluded.geom;
VACUUM ib;
SELECT 'on conflict' AS step, * FROM ib_state();

-- COPY
COPY ib (id, geom) FROM stdin;
70001	POINT(1 1)
70002	POINT(2 2)
70003	\N
70004	POINT EMPTY
70005	LINESTRING(3 3, 4 4)
\.
SELECT 'copy' AS step, * FROM ib_state();

-- REINDEX and TRUNCATE after inserts in the same transaction: the new
-- files hold each row once
BEGIN;
INSERT INTO ib
  SELECT 80000 + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 300) i;
REINDEX INDEX ib_hy;
INSERT INTO ib
  SELECT 81000 + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 300) i;
COMMIT;
SELECT 'reindex' AS step, * FROM ib_state();

CREATE TABLE ibt (id bigint, geom geometry);
CREATE INDEX ibt_idx ON ibt USING efind (geom);
BEGIN;
INSERT INTO ibt SELECT i, ST_MakePoint(i, i) FROM generate_series(1, 100) i;
TRUNCATE ibt;
INSERT INTO ibt SELECT i, ST_MakePoint(i, i) FROM generate_series(1, 10) i;
COMMIT;
SELECT (SELECT count(*) FROM ibt) AS rows,
       (SELECT (j->>'entries')::bigint FROM hybrid_index_inspect('ibt_idx') j) AS entries,
       hybrid_index_check('ibt_idx', true) AS check_ok;

-- an exclusion constraint's index takes every entry at once: a second row
-- overlapping one of the same statement is refused
CREATE TABLE ibx (id int, geom geometry, EXCLUDE USING hyrtree (geom WITH &&));
INSERT INTO ibx VALUES (1, ST_MakeEnvelope(0, 0, 10, 10)), (2, ST_MakeEnvelope(20, 20, 30, 30));
INSERT INTO ibx VALUES (3, ST_MakeEnvelope(40, 40, 50, 50)), (4, ST_MakeEnvelope(45, 45, 55, 55));
SELECT count(*) FROM ibx;

-- no batches at all
SET hybrid_index.insert_batch = 0;
INSERT INTO ib
  SELECT 90000 + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 300) i;
SELECT 'one by one' AS step, * FROM ib_state();
RESET hybrid_index.insert_batch;

-- a batch larger than the read-ahead's chunks, with deletions and VACUUM
INSERT INTO ib
  SELECT 100000 + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 5000) i;
DELETE FROM ib WHERE id % 7 = 0;
VACUUM ib;
SELECT 'default batch' AS step, * FROM ib_state();

DROP TABLE ib, ibq, ibt, ibx;
DROP FUNCTION ib_state(), ib_insert_and_fail(), ib_insert_and_count(int);
