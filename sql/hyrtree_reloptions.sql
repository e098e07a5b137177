--
-- hyrtree_reloptions: page sizes, placement, tablespaces, buffer_size and
-- the errors for bad reloptions. (The test cluster must run with
-- hybrid_index.max_page_size = 32768, as tools/pgcluster.sh sets it.)
--
SHOW hybrid_index.max_page_size;

SELECT setseed(0.77);
CREATE TABLE ro (id bigint, geom geometry);
INSERT INTO ro
  SELECT i, CASE WHEN i % 4 = 0
                 THEN ST_MakePoint(50 + (random() - 0.5) * 10, 50 + (random() - 0.5) * 10)
                 ELSE ST_MakePoint(random() * 100, random() * 100) END
  FROM generate_series(1, 20000) i;
INSERT INTO ro
  SELECT 100000 + i, ST_Buffer(ST_MakePoint(random() * 100, random() * 100), random() * 3, 'quad_segs=1')
  FROM generate_series(1, 2000) i;
INSERT INTO ro VALUES (200001, NULL), (200002, 'POINT EMPTY');
CREATE TABLE roq (qid int, g geometry);
INSERT INTO roq
  SELECT i, ST_MakeEnvelope(x, y, x + w, y + w)
  FROM (SELECT i, random() * 100 AS x, random() * 100 AS y, random() * random() * 30 AS w
        FROM generate_series(1, 15) i) s;

-- Build the index with one page size, check it, compare scans, drop it.
CREATE FUNCTION try_page_size(ps int,
    OUT page_size_ok boolean, OUT check_ok boolean, OUT height_ok boolean,
    OUT entries_ok boolean, OUT filters_ok boolean, OUT knn_ok boolean)
LANGUAGE plpgsql AS $$
DECLARE
  j jsonb;
BEGIN
  EXECUTE format('CREATE INDEX ro_idx ON ro USING hyrtree (geom) WITH (page_size = %s)', ps);
  j := hybrid_index_inspect('ro_idx');
  page_size_ok := (j->>'page_size')::int = ps;
  check_ok := hybrid_index_check('ro_idx');
  height_ok := (j->>'height')::int >= 2 AND jsonb_array_length(j->'levels') = (j->>'height')::int;
  entries_ok := (j->>'entries')::bigint = (SELECT count(*) FROM ro WHERE NOT ST_IsEmpty(geom))
            AND (j->>'null_entries')::bigint = (SELECT count(*) FROM ro WHERE geom IS NULL OR ST_IsEmpty(geom));
  SELECT bool_and(d.index_same AND d.index_plan AND d.bitmap_same AND d.bitmap_plan)
    INTO filters_ok
    FROM roq, LATERAL hit.diff(format('SELECT id FROM ro WHERE geom && %L::geometry', roq.g), 'ro_idx') d;
  SELECT bool_and(d.dist_same AND d.ids_same AND d.index_plan)
    INTO knn_ok
    FROM roq, LATERAL hit.knn_diff('ro', 'ro_idx', ST_Centroid(roq.g), 25) d;
  DROP INDEX ro_idx;
END $$;

SELECT ps, t.* FROM unnest(ARRAY[2048, 4096, 8192, 16384, 32768]) ps, LATERAL try_page_size(ps) t;

-- smaller pages make taller trees
CREATE INDEX ro_2k ON ro USING hyrtree (geom) WITH (page_size = 2048);
CREATE INDEX ro_32k ON ro USING hyrtree (geom) WITH (page_size = 32768);
SELECT (hybrid_index_inspect('ro_2k')->>'height')::int > (hybrid_index_inspect('ro_32k')->>'height')::int
  AS small_pages_taller;
DROP INDEX ro_2k, ro_32k;

-- the default page size is 8192
CREATE INDEX ro_default ON ro USING hyrtree (geom);
SELECT hybrid_index_inspect('ro_default')->>'page_size' AS default_page_size;
DROP INDEX ro_default;

-- reloptions are stored like any other
CREATE INDEX ro_opts ON ro USING hyrtree (geom) WITH (page_size = 4096, buffer_size = 256);
SELECT reloptions FROM pg_class WHERE relname = 'ro_opts';
SELECT hybrid_index_check('ro_opts');
DROP INDEX ro_opts;
CREATE INDEX ro_nobuf ON ro USING hyrtree (geom) WITH (buffer_size = 0);
SELECT hybrid_index_check('ro_nobuf');
DROP INDEX ro_nobuf;

-- bad reloptions
CREATE INDEX ro_bad ON ro USING hyrtree (geom) WITH (page_size = 3000);
CREATE INDEX ro_bad ON ro USING hyrtree (geom) WITH (page_size = 1024);
CREATE INDEX ro_bad ON ro USING hyrtree (geom) WITH (page_size = 65536);
CREATE INDEX ro_bad ON ro USING hyrtree (geom) WITH (page_size = 0);
CREATE INDEX ro_bad ON ro USING hyrtree (geom) WITH (placement = 'lower');
CREATE INDEX ro_bad ON ro USING hyrtree (geom) WITH (placement = 'upper', optane_tablespace = 'no_such_tablespace');
CREATE INDEX ro_bad ON ro USING hyrtree (geom) WITH (buffer_size = -1);
CREATE INDEX ro_bad ON ro USING hyrtree (geom) WITH (no_such_option = 1);
SELECT count(*) AS leftover_bad_indexes FROM pg_class WHERE relname = 'ro_bad';

-- placement = upper with an Optane tablespace (an in-place tablespace here)
SET allow_in_place_tablespaces = on;
CREATE TABLESPACE hi_regress_optane LOCATION '';
CREATE TABLESPACE hi_regress_flash LOCATION '';
RESET allow_in_place_tablespaces;

CREATE INDEX ro_upper ON ro USING hyrtree (geom)
  WITH (page_size = 2048, placement = 'upper', optane_tablespace = 'hi_regress_optane');
SELECT hybrid_index_check('ro_upper');
SELECT hybrid_index_inspect('ro_upper')->>'placement' AS placement;
-- upper levels live on the optane tier, the leaves on flash
SELECT sum((l->>'optane')::int) > 0 AS some_nodes_on_optane,
       sum((l->>'flash')::int) > 0 AS some_nodes_on_flash,
       bool_and((l->>'nodes')::int = (l->>'flash')::int + (l->>'optane')::int) AS nodes_add_up
FROM jsonb_array_elements(hybrid_index_inspect('ro_upper')->'levels') l;
SELECT tier, pages > 0 AS has_pages FROM hybrid_index_stats('ro_upper') ORDER BY tier;
-- the data files are in the database directory of each tier's tablespace,
-- map and log next to the flash data (the log once the index changes: none
-- after a build); all named hyb_<flash tablespace oid>_<relfilenode>.*
SELECT tier, count(*) AS files,
       bool_and(hit.file_dir_ok(path, CASE tier WHEN 'optane' THEN 'hi_regress_optane' END)) AS in_tier_dir,
       bool_and(hit.file_name_ok(path, 'ro_upper')) AS named_ok,
       bool_and(bytes > 0) AS nonempty
FROM hybrid_index_files('ro_upper') AS f(tier, path, bytes)
WHERE bytes IS NOT NULL GROUP BY tier ORDER BY tier;
SELECT bool_and(d.index_same AND d.index_plan AND d.bitmap_same AND d.bitmap_plan) AS filters_ok
FROM roq, LATERAL hit.diff(format('SELECT id FROM ro WHERE geom && %L::geometry', roq.g), 'ro_upper') d;
SELECT bool_and(d.dist_same AND d.ids_same AND d.index_plan) AS knn_ok
FROM roq, LATERAL hit.knn_diff('ro', 'ro_upper', ST_Centroid(roq.g), 25) d;
-- the tablespace of a tier in use cannot be dropped
DROP TABLESPACE hi_regress_optane;
SELECT hybrid_index_check('ro_upper');
DROP INDEX ro_upper;

-- TABLESPACE clause: the flash tier follows the index's tablespace
CREATE INDEX ro_ts ON ro USING hyrtree (geom) TABLESPACE hi_regress_flash;
SELECT tier, bool_and(hit.file_dir_ok(path, 'hi_regress_flash')) AS in_tier_dir,
       bool_and(hit.file_name_ok(path, 'ro_ts')) AS named_ok
FROM hybrid_index_files('ro_ts') AS f(tier, path, bytes)
WHERE bytes IS NOT NULL GROUP BY tier ORDER BY tier;
SELECT bool_and(d.index_same AND d.index_plan AND d.bitmap_same AND d.bitmap_plan) AS filters_ok
FROM roq, LATERAL hit.diff(format('SELECT id FROM ro WHERE geom && %L::geometry', roq.g), 'ro_ts') d;
-- both tiers in non-default tablespaces
CREATE INDEX ro_both ON ro USING hyrtree (geom)
  WITH (placement = 'upper', optane_tablespace = 'hi_regress_optane') TABLESPACE hi_regress_flash;
SELECT tier, bool_and(hit.file_dir_ok(path,
                      CASE tier WHEN 'optane' THEN 'hi_regress_optane' ELSE 'hi_regress_flash' END)) AS in_tier_dir,
       bool_and(hit.file_name_ok(path, 'ro_both')) AS named_ok
FROM hybrid_index_files('ro_both') AS f(tier, path, bytes)
WHERE bytes IS NOT NULL GROUP BY tier ORDER BY tier;
SELECT hybrid_index_check('ro_both');
DROP INDEX ro_ts, ro_both;

DROP TABLESPACE hi_regress_optane;
DROP TABLESPACE hi_regress_flash;
DROP FUNCTION try_page_size(int);
DROP TABLE ro, roq;
