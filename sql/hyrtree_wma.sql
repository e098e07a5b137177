-- HyR-tree placement (placement = 'wma'): hot leaves move to the fast tier
-- within a few epochs, and leave it once the workload moves elsewhere and
-- the fast tier is full.  Deterministic data: a 400 x 400 grid of points.
CREATE TABLE wma_pts AS
	SELECT i AS id, ST_MakePoint((i % 400)::float8, (i / 400)::float8) AS geom
	FROM generate_series(0, 159999) i;
-- 8 kB pages; 256 kB cache budget; fast tier of 12 pages (96 kB), of which
-- the 4 upper pages (root and level 1) take 4
CREATE INDEX wma_idx ON wma_pts USING hyrtree (geom)
	WITH (placement = 'wma', epoch_size = 400, buffer_size = 256,
		  optane_capacity = 96, wma_epochs = 3, wma_threshold = 95);
SELECT hybrid_index_check('wma_idx');
SELECT i->>'placement' AS placement, i->'placement_state'->>'leaves_optane' AS leaves_optane,
	   i->'placement_state'->>'optane_capacity_pages' AS capacity
FROM (SELECT hybrid_index_inspect('wma_idx') i) s;

SET enable_seqscan = off;
SET enable_bitmapscan = off;

-- Algorithm 2 moves a hot leaf when it is evicted, so every query of the
-- hot region is followed by a background query somewhere on the grid.
CREATE FUNCTION wma_workload(x0 int, y0 int, side int, n int) RETURNS bigint
LANGUAGE sql AS $$
	SELECT sum((SELECT count(*) FROM wma_pts
				WHERE geom && ST_MakeEnvelope(x0 + g % 7, y0 + g % 5,
											  x0 + side + g % 7, y0 + side + g % 5)) +
			   (SELECT count(*) FROM wma_pts
				WHERE geom && ST_MakeEnvelope((g * 37) % 360, (g * 53) % 360,
											  (g * 37) % 360 + 40, (g * 53) % 360 + 40)))
	FROM generate_series(1, n) g
$$;

-- region A: windows around (40..60, 40..60)
SELECT wma_workload(40, 40, 12, 300);

-- the leaves under region A are now the ones on the fast tier
-- (every leaf under the core of region A is there, and A's leaves are the
-- hottest: the fast tier's leaves score at least as high as any flash leaf)
SELECT count(*) FILTER (WHERE box[1] <= 52 AND box[3] >= 46 AND box[2] <= 52 AND box[4] >= 46) AS a_core_leaves,
	   count(*) FILTER (WHERE tier = 'optane' AND
						box[1] <= 52 AND box[3] >= 46 AND box[2] <= 52 AND box[4] >= 46) AS a_core_leaves_on_optane
FROM hybrid_index_pages('wma_idx') WHERE level = 0;
SELECT (i->'placement_state'->>'migrations_up')::int > 0 AS migrated_up,
	   (i->'placement_state'->>'epoch')::int >= 3 AS epochs_passed
FROM (SELECT hybrid_index_inspect('wma_idx') i) s;

-- region B, far away, for many epochs: A cools down, the fast tier fills
-- with B's leaves and A's leave it
SELECT wma_workload(300, 300, 30, 1500);

SELECT count(*) FILTER (WHERE tier = 'optane' AND
						box[1] <= 60 AND box[3] >= 40 AND box[2] <= 60 AND box[4] >= 40) AS a_leaves_left_on_optane,
	   count(*) FILTER (WHERE tier = 'optane' AND
						box[1] <= 337 AND box[3] >= 300 AND box[2] <= 335 AND box[4] >= 300) > 0 AS b_leaves_on_optane
FROM hybrid_index_pages('wma_idx') WHERE level = 0;
SELECT (i->'placement_state'->>'migrations_down')::int > 0 AS migrated_down,
	   (i->'placement_state'->>'leaves_optane')::int + 4 <= 12 AS within_capacity
FROM (SELECT hybrid_index_inspect('wma_idx') i) s;

-- answers stay exact while pages move: index scan, bitmap scan, seq scan
SELECT count(*) FROM wma_pts WHERE geom && ST_MakeEnvelope(35, 35, 65, 65);
RESET enable_bitmapscan;
SET enable_indexscan = off;
SELECT count(*) FROM wma_pts WHERE geom && ST_MakeEnvelope(35, 35, 65, 65);
RESET enable_seqscan;
SET enable_bitmapscan = off;
SELECT count(*) FROM wma_pts WHERE geom && ST_MakeEnvelope(35, 35, 65, 65);
RESET ALL;
SELECT hybrid_index_check('wma_idx');

-- placement = 'random' (the rHyR-tree control) migrates random leaves, as
-- many as 'wma' moves for the same workload: both run it, no capacity limit
DROP INDEX wma_idx;
CREATE INDEX wma_ref ON wma_pts USING hyrtree (geom)
	WITH (placement = 'wma', epoch_size = 400, buffer_size = 256, wma_epochs = 3);
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT wma_workload(40, 40, 12, 600);
CREATE TEMP TABLE wma_moved AS
	SELECT (hybrid_index_inspect('wma_ref')->'placement_state'->>'migrations_up')::int AS n;
DROP INDEX wma_ref;
CREATE INDEX wma_rnd ON wma_pts USING hyrtree (geom)
	WITH (placement = 'random', epoch_size = 400, buffer_size = 256, wma_epochs = 3);
SELECT wma_workload(40, 40, 12, 600);
SELECT m.n > 0 AS wma_migrated,
	   r.n BETWEEN m.n * 0.7 AND m.n * 1.1 AS random_moved_as_many_as_wma
FROM wma_moved m,
	 (SELECT (hybrid_index_inspect('wma_rnd')->'placement_state'->>'migrations_up')::int AS n) r;
RESET ALL;
SELECT hybrid_index_check('wma_rnd');

-- bad placement parameters
CREATE INDEX wma_bad ON wma_pts USING hyrtree (geom) WITH (placement = 'hot');
CREATE INDEX wma_bad ON wma_pts USING hyrtree (geom) WITH (wma_threshold = 0.5);
CREATE INDEX wma_bad ON wma_pts USING hyrtree (geom) WITH (wma_epochs = 11);
DROP TABLE wma_pts CASCADE;
DROP FUNCTION wma_workload(int, int, int, int);
