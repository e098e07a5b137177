--
-- hyrtree_helpers: hi_intersects, hi_dwithin, hi_contains and hi_within are
-- inlinable SQL helpers that add an index condition to the exact PostGIS
-- predicate. They must return exactly what ST_Intersects, ST_DWithin,
-- ST_Contains and ST_Within return, and the planner must use the index.
--
SELECT setseed(0.11);
CREATE TABLE hp (id bigint, geom geometry);
INSERT INTO hp
  SELECT i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 6000) i;
INSERT INTO hp
  SELECT 10000 + i, ST_Buffer(ST_MakePoint(random() * 1000, random() * 1000), 2 + random() * 40)
  FROM generate_series(1, 1500) i;
INSERT INTO hp
  SELECT 20000 + i, ST_MakeLine(ST_MakePoint(x, y), ST_MakePoint(x + (random() - 0.5) * 100, y + (random() - 0.5) * 100))
  FROM (SELECT i, random() * 1000 AS x, random() * 1000 AS y FROM generate_series(1, 1000) i) s;
INSERT INTO hp VALUES (30001, NULL), (30002, 'POINT EMPTY');
CREATE INDEX hp_idx ON hp USING hyrtree (geom);
ANALYZE hp;

CREATE TABLE hq (qid int, g geometry);
INSERT INTO hq
  SELECT i, ST_Buffer(ST_MakePoint(random() * 1000, random() * 1000), 10 + random() * 80, 'quad_segs=3')
  FROM generate_series(1, 12) i;
INSERT INTO hq
  SELECT 100 + i, ST_MakeLine(ST_MakePoint(random() * 1000, random() * 1000), ST_MakePoint(random() * 1000, random() * 1000))
  FROM generate_series(1, 4) i;
INSERT INTO hq SELECT 200 + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 4) i;
-- points inside data polygons, so that ST_Contains(geom, q) finds something
INSERT INTO hq SELECT 300 + row_number() OVER (ORDER BY id), ST_PointOnSurface(geom) FROM hp
  WHERE id BETWEEN 10001 AND 10006;

-- the helpers are plain SQL functions (inlinable), not C functions
SELECT proname, l.lanname AS language, provolatile, proisstrict
FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
WHERE proname IN ('hi_intersects', 'hi_dwithin', 'hi_contains', 'hi_within')
ORDER BY proname;

-- the planner uses the index for them
EXPLAIN (COSTS OFF)
SELECT id FROM hp WHERE hi_intersects(geom, ST_MakeEnvelope(490, 490, 510, 510));
EXPLAIN (COSTS OFF)
SELECT id FROM hp WHERE hi_dwithin(geom, 'POINT(500 500)'::geometry, 15);
-- with the indexed column as second argument too
SELECT hit.uses('SELECT id FROM hp WHERE hi_dwithin(''POINT(500 500)''::geometry, geom, 15)', 'index', 'hp_idx')
  AS dwithin_reversed_uses_index;
EXPLAIN (COSTS OFF)
SELECT id FROM hp WHERE hi_contains(geom, 'POINT(500 500)'::geometry);
EXPLAIN (COSTS OFF)
SELECT id FROM hp WHERE hi_within(geom, ST_MakeEnvelope(490, 490, 510, 510));

CREATE TABLE hcases (name text, helper text, exact text);
INSERT INTO hcases VALUES
  ('intersects(geom,q)', 'hi_intersects(geom, %1$L::geometry)', 'ST_Intersects(geom, %1$L::geometry)'),
  ('intersects(q,geom)', 'hi_intersects(%1$L::geometry, geom)', 'ST_Intersects(%1$L::geometry, geom)'),
  ('dwithin(geom,q,0)',  'hi_dwithin(geom, %1$L::geometry, 0)', 'ST_DWithin(geom, %1$L::geometry, 0)'),
  ('dwithin(geom,q,25)', 'hi_dwithin(geom, %1$L::geometry, 25)', 'ST_DWithin(geom, %1$L::geometry, 25)'),
  ('dwithin(q,geom,60)', 'hi_dwithin(%1$L::geometry, geom, 60)', 'ST_DWithin(%1$L::geometry, geom, 60)'),
  ('contains(geom,q)',   'hi_contains(geom, %1$L::geometry)', 'ST_Contains(geom, %1$L::geometry)'),
  ('contains(q,geom)',   'hi_contains(%1$L::geometry, geom)', 'ST_Contains(%1$L::geometry, geom)'),
  ('within(geom,q)',     'hi_within(geom, %1$L::geometry)', 'ST_Within(geom, %1$L::geometry)'),
  ('within(q,geom)',     'hi_within(%1$L::geometry, geom)', 'ST_Within(%1$L::geometry, geom)');

-- helper through the index (index and bitmap scans) = exact predicate on a seq scan
CREATE TABLE hres AS
SELECT c.name, hq.qid,
       cardinality(hit.ids(format('SELECT id FROM hp WHERE ' || c.exact, hq.g), 'seq')) AS n,
       hit.ids(format('SELECT id FROM hp WHERE ' || c.helper, hq.g), 'index')
         = hit.ids(format('SELECT id FROM hp WHERE ' || c.exact, hq.g), 'seq') AS index_same,
       hit.uses(format('SELECT id FROM hp WHERE ' || c.helper, hq.g), 'index', 'hp_idx') AS index_plan,
       hit.ids(format('SELECT id FROM hp WHERE ' || c.helper, hq.g), 'bitmap')
         = hit.ids(format('SELECT id FROM hp WHERE ' || c.exact, hq.g), 'seq') AS bitmap_same,
       hit.uses(format('SELECT id FROM hp WHERE ' || c.helper, hq.g), 'bitmap', 'hp_idx') AS bitmap_plan
FROM hcases c CROSS JOIN hq;
SELECT name, count(*) AS queries, sum(n) AS total_rows, count(*) FILTER (WHERE n > 0) AS nonempty,
       bool_and(index_same) AS index_same, bool_and(index_plan) AS index_plan,
       bool_and(bitmap_same) AS bitmap_same, bool_and(bitmap_plan) AS bitmap_plan
FROM hres GROUP BY name ORDER BY name;
SELECT * FROM hres WHERE NOT (index_same AND index_plan AND bitmap_same AND bitmap_plan) ORDER BY name, qid;

-- NULL and EMPTY arguments
SELECT hi_intersects(NULL, 'POINT(1 1)') IS NULL AS null_arg,
       coalesce(hi_intersects('POINT EMPTY', 'POINT(1 1)'), false) = false AS empty_arg,
       hi_dwithin('POINT(0 0)', 'POINT(3 4)', 5) AS dwithin_boundary,
       hi_dwithin('POINT(0 0)', 'POINT(3 4)', 4.999) AS dwithin_outside,
       hi_contains(ST_MakeEnvelope(0, 0, 10, 10), 'POINT(5 5)') AS contains,
       hi_within('POINT(5 5)', ST_MakeEnvelope(0, 0, 10, 10)) AS within,
       hi_contains(ST_MakeEnvelope(0, 0, 10, 10), 'POINT(10 5)') AS boundary_not_contained;

-- a join: points in polygons through the index on the points
SELECT count(*) AS pairs FROM hq JOIN hp ON hi_intersects(hp.geom, hq.g) WHERE hq.qid < 100;
SELECT count(*) AS pairs FROM hq JOIN hp ON ST_Intersects(hp.geom, hq.g) WHERE hq.qid < 100;

DROP TABLE hp, hq, hcases, hres;
