--
-- partitioned_functions: the hybrid_index_* functions on a partitioned
-- index answer for the indexes of its partitions (two levels deep here):
-- counters summed per tier, files, pages, checks and checkpoints of each,
-- inspect by partition, probes summed; a partitioned index of another
-- access method is refused by its name.
--
SET client_min_messages = warning;
SELECT setseed(0.9);
CREATE TABLE pt (id int, region int, geom geometry) PARTITION BY LIST (region);
CREATE TABLE pt_a PARTITION OF pt FOR VALUES IN (1);
CREATE TABLE pt_b PARTITION OF pt FOR VALUES IN (2, 3) PARTITION BY LIST (region);
CREATE TABLE pt_b2 PARTITION OF pt_b FOR VALUES IN (2);
CREATE TABLE pt_b3 PARTITION OF pt_b FOR VALUES IN (3);
INSERT INTO pt SELECT i, 1 + i % 3, ST_MakePoint(random() * 100, random() * 100)
  FROM generate_series(1, 6000) i;
CREATE INDEX pt_idx ON pt USING hyrtree (geom);
SELECT hybrid_index_checkpoint('pt_idx');

-- the leaf indexes
CREATE TEMP TABLE leaves AS
  SELECT relid::regclass AS idx FROM pg_partition_tree('pt_idx') WHERE isleaf;
SELECT count(*) AS leaf_indexes FROM leaves;

SELECT hybrid_index_check('pt_idx');
-- inspect: one object per partition's index, with its entries
SELECT jsonb_typeof(j->'partitions') AS partitions,
       (SELECT count(*) FROM jsonb_object_keys(j->'partitions')) AS n,
       (SELECT sum((v->>'entries')::int) FROM jsonb_each(j->'partitions') e(k, v)) AS entries
FROM (SELECT hybrid_index_inspect('pt_idx') j) s;
-- files: every partition's four
SELECT count(*) AS files, count(DISTINCT path) AS distinct_paths
FROM hybrid_index_files('pt_idx');
SELECT (SELECT count(*) FROM hybrid_index_files('pt_idx')) =
       (SELECT count(*) FROM leaves, hybrid_index_files(idx)) AS files_of_leaves;
-- pages: those of every partition's index
SELECT (SELECT count(*) FROM hybrid_index_pages('pt_idx')) =
       (SELECT count(*) FROM leaves, hybrid_index_pages(idx)) AS pages_of_leaves;
-- stats: per tier, the sums of the partitions' counters
SELECT s.tier, s.pages = l.pages AND s.writes = l.writes AS sums
FROM hybrid_index_stats('pt_idx') s
JOIN (SELECT tier, sum(pages) AS pages, sum(writes) AS writes
      FROM leaves, hybrid_index_stats(idx) GROUP BY tier) l USING (tier)
ORDER BY s.tier;
SELECT hybrid_index_reset_stats('pt_idx');
SELECT sum(writes) AS writes_after_reset FROM hybrid_index_stats('pt_idx');
-- probes: the partitions' counts summed, kNN capped at k
SELECT hybrid_index_probe('pt_idx', ST_MakeEnvelope(10, 10, 40, 40), '&&') =
       (SELECT count(*) FROM pt WHERE geom && ST_MakeEnvelope(10, 10, 40, 40)) AS probe_sum;
SELECT hybrid_index_probe_knn('pt_idx', 'POINT(50 50)', 10) AS knn_10,
       hybrid_index_probe_knn('pt_idx', 'POINT(50 50)', 100000) AS knn_all;

-- another access method's partitioned index: refused by name
CREATE INDEX pt_gist ON pt USING gist (geom);
SELECT hybrid_index_inspect('pt_gist');
-- the probes work on any access method, partitioned too
SELECT hybrid_index_probe('pt_gist', ST_MakeEnvelope(10, 10, 40, 40), '&&') =
       hybrid_index_probe('pt_idx', ST_MakeEnvelope(10, 10, 40, 40), '&&') AS gist_probe_same;
DROP TABLE pt;
