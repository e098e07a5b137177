--
-- efind_basic: the efind access method. Its operator class; its
-- parameters (settings with the paper's best values, reloptions, values
-- fixed in the index); every operator and kNN equal to a sequential scan
-- (a) on an index built over existing rows and grown one row at a time
-- with a 16 kB buffer, so the test runs many flushes, and (b) on an index
-- whose pages all still live in the write buffer (NEW entries), then (c)
-- after a checkpoint wrote them and later changes sit in the buffer as
-- modified entries merged with the stored pages on every read.
--
-- one insertion per row in arrival order, as in the paper's workloads (a
-- batch goes in along a Hilbert curve and flushes far less often)
SET hybrid_index.insert_batch = 0;
SELECT setseed(0.31);
CREATE TABLE eb (id bigint, geom geometry);
INSERT INTO eb
  SELECT i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 3000) i;
INSERT INTO eb
  SELECT 10000 + i, ST_Buffer(ST_MakePoint(random() * 1000, random() * 1000),
                              1 + random() * 30, 'quad_segs=2')
  FROM generate_series(1, 1000) i;
INSERT INTO eb
  SELECT 20000 + i, ST_MakeLine(ST_MakePoint(x, y), ST_MakePoint(x + (random() - 0.5) * 60, y + (random() - 0.5) * 60))
  FROM (SELECT i, random() * 1000 AS x, random() * 1000 AS y FROM generate_series(1, 500) i) s;
INSERT INTO eb VALUES (30001, NULL), (30002, 'POINT EMPTY'), (30003, 'POLYGON EMPTY');

CREATE TABLE ebq (qid int, g geometry);
INSERT INTO ebq
  SELECT i, ST_MakeEnvelope(x, y, x + w, y + h)
  FROM (SELECT i, random() * 1000 AS x, random() * 1000 AS y,
               random() * 200 AS w, random() * 200 AS h FROM generate_series(1, 6) i) s;
INSERT INTO ebq VALUES (100, ST_MakeEnvelope(-1, -1, 1001, 1001));

-- the access method and its default operator class
SELECT amname, amtype FROM pg_am WHERE amname = 'efind';
SELECT opc.opcname, opc.opcdefault, opc.opcintype::regtype
  FROM pg_opclass opc JOIN pg_am am ON am.oid = opc.opcmethod WHERE am.amname = 'efind';
SELECT amop.amopstrategy, amop.amopopr::regoperator, amop.amoppurpose
  FROM pg_amop amop JOIN pg_opfamily f ON f.oid = amop.amopfamily
  JOIN pg_am am ON am.oid = f.opfmethod
  WHERE am.amname = 'efind' ORDER BY 1;

-- the settings default to the paper's best values
SHOW hybrid_index.efind_buffer_size;
SHOW hybrid_index.efind_read_buffer_share;
SHOW hybrid_index.efind_read_buffer_policy;
SHOW hybrid_index.flush_policy;
SHOW hybrid_index.efind_flush_percent;
SHOW hybrid_index.efind_flush_unit;
SHOW hybrid_index.efind_temporal_control;
SHOW hybrid_index.efind_seq_distance;
SHOW hybrid_index.efind_stride_distance;
SHOW hybrid_index.efind_log_size;

-- (a) built over existing rows, then grown one row at a time
CREATE INDEX eb_idx ON eb USING efind (geom) WITH (page_size = 2048, buffer_size = 16);
SELECT hybrid_index_check('eb_idx');
SELECT j->>'am' AS am, j->>'placement' AS placement, (j->>'entries')::int AS entries,
       (j->>'null_entries')::int AS null_entries
  FROM hybrid_index_inspect('eb_idx') j;
SELECT e->>'buffer_kb' AS buffer_kb, e->>'read_buffer_share' AS read_share,
       e->>'read_buffer_policy' AS read_policy, e->>'flush_policy' AS flush_policy,
       e->>'flush_percent' AS p, e->>'flush_unit' AS s, e->>'temporal_control' AS tc,
       e->>'seq_distance' AS seq, e->>'stride_distance' AS stride, e->>'log_size_kb' AS log_kb,
       (e->'write_buffer'->>'budget_bytes')::int AS write_budget,
       (e->'read_buffer'->>'frames')::int AS read_frames,
       (e->'log'->>'compaction_kb')::int AS compaction_kb
  FROM hit.ef('eb_idx') e;
INSERT INTO eb
  SELECT 40000 + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 4000) i;
INSERT INTO eb
  SELECT 50000 + i, ST_Buffer(ST_MakePoint(random() * 1000, random() * 1000),
                              1 + random() * 20, 'quad_segs=2')
  FROM generate_series(1, 1500) i;
INSERT INTO eb VALUES (60001, NULL), (60002, 'LINESTRING EMPTY');
ANALYZE eb;
SELECT (e->'flushes'->>'count')::int > 100 AS many_flushes,
       (e->'flushes'->>'pages_per_flush')::float8 BETWEEN 1 AND 5 AS units_of_at_most_5,
       (e->'write_buffer'->>'bytes')::int <= (e->'write_buffer'->>'budget_bytes')::int AS within_budget,
       (e->'write_buffer'->>'entries')::int > 0 AS buffered_changes,
       (e->'read_buffer'->>'hits')::int > 0 AS read_buffer_hits,
       (e->'merged_reads')::int > 0 AS merged_reads
  FROM hit.ef('eb_idx') e;
SELECT hit.ef_degree_ok('eb_idx') AS degree_is_fp_mh;
SELECT hybrid_index_check('eb_idx');
SELECT (j->>'entries')::bigint = (SELECT count(*) FROM eb WHERE NOT ST_IsEmpty(geom)) AS entries_ok,
       (j->>'null_entries')::bigint = (SELECT count(*) FROM eb WHERE geom IS NULL OR ST_IsEmpty(geom)) AS nulls_ok
  FROM hybrid_index_inspect('eb_idx') j;
SELECT * FROM hit.ef_diff_all('eb', 'eb_idx', 'ebq');
SELECT count(*) AS stats_rows FROM hybrid_index_stats('eb_idx');

-- (b) built empty and filled by insertions into a buffer that never fills:
-- every page but the root (stored by the build's checkpoint) is a NEW
-- write buffer entry without a stored version
CREATE TABLE ew (id bigint, geom geometry);
CREATE INDEX ew_idx ON ew USING efind (geom) WITH (page_size = 4096, buffer_size = 65536);
INSERT INTO ew SELECT id, geom FROM eb;
ANALYZE ew;
SELECT (e->'flushes'->>'count')::int AS flushes,
       (e->'write_buffer'->>'new')::int = (j->>'pages')::int - 1 AS new_but_root,
       (e->'write_buffer'->>'mod')::int AS modified_entries
  FROM hybrid_index_inspect('ew_idx') j, LATERAL (SELECT j->'efind' AS e) x;
SELECT count(*) - count(*) FILTER (WHERE tier IS NULL) AS pages_stored FROM hybrid_index_pages('ew_idx');
SELECT * FROM hit.ef_diff_all('ew', 'ew_idx', 'ebq');
SELECT hybrid_index_check('ew_idx');

-- (c) a checkpoint writes the whole write buffer (eFIND's log compaction)
SELECT hybrid_index_checkpoint('ew_idx');
SELECT (e->'write_buffer'->>'entries')::int AS entries_left,
       (e->'flushes'->>'checkpoint_pages')::int = (j->>'pages')::int + 1 AS every_page_written,
       (e->'log'->>'bytes')::int AS log_bytes
  FROM hybrid_index_inspect('ew_idx') j, LATERAL (SELECT j->'efind' AS e) x;
SELECT count(*) FILTER (WHERE tier IS NULL) AS pages_not_stored FROM hybrid_index_pages('ew_idx');
-- now changes on top of stored pages: MOD entries merged on every read
DELETE FROM ew WHERE id % 5 = 0;
VACUUM ew;
INSERT INTO ew
  SELECT 70000 + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 800) i;
SELECT (e->'write_buffer'->>'mod')::int > 0 AS modified_entries,
       (e->'write_buffer'->>'modifications')::int > 800 AS entry_modifications,
       (e->'flushes'->>'count')::int AS flushes
  FROM hit.ef('ew_idx') e;
SELECT hit.ef('ew_idx')->>'merged_reads' AS merged_reads_before \gset
SELECT * FROM hit.ef_diff_all('ew', 'ew_idx', 'ebq');
SELECT (hit.ef('ew_idx')->>'merged_reads')::int > :merged_reads_before AS scans_merged_pages;
SELECT hybrid_index_check('ew_idx');

-- parameters: settings apply to indexes built afterwards, reloptions
-- override them, and both stay fixed in the index
SET hybrid_index.flush_policy = 'mhao';
SET hybrid_index.efind_read_buffer_policy = '2q';
SET hybrid_index.efind_temporal_control = 'writes';
SET hybrid_index.efind_flush_percent = 80;
CREATE INDEX ew_idx2 ON ew USING efind (geom)
  WITH (flush_unit = 3, read_buffer_policy = 'lru', log_size = 2048, read_buffer_share = 40);
RESET hybrid_index.flush_policy;
RESET hybrid_index.efind_read_buffer_policy;
RESET hybrid_index.efind_temporal_control;
RESET hybrid_index.efind_flush_percent;
SELECT e->>'flush_policy' AS flush_policy, e->>'read_buffer_policy' AS read_policy,
       e->>'temporal_control' AS tc, e->>'flush_percent' AS p, e->>'flush_unit' AS s,
       e->>'log_size_kb' AS log_kb, e->>'read_buffer_share' AS read_share,
       (e->'read_buffer'->>'frames')::int AS read_frames
  FROM hit.ef('ew_idx2') e;
DROP INDEX ew_idx2;

-- invalid parameters
CREATE INDEX ew_bad ON ew USING efind (geom) WITH (flush_policy = 'fifo');
CREATE INDEX ew_bad ON ew USING efind (geom) WITH (read_buffer_policy = 'arc');
CREATE INDEX ew_bad ON ew USING efind (geom) WITH (temporal_control = 'always');
CREATE INDEX ew_bad ON ew USING efind (geom) WITH (buffer_size = 4);
CREATE INDEX ew_bad ON ew USING efind (geom) WITH (flush_percent = 0);
CREATE INDEX ew_bad ON ew USING efind (geom) WITH (read_buffer_share = 95);
CREATE INDEX ew_bad ON ew USING efind (geom) WITH (page_size = 3000);
CREATE INDEX ew_bad ON ew USING efind (geom) WITH (placement = 'upper');
SET hybrid_index.flush_policy = 'lru';
