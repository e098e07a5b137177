-- 030_real_data.sql — the real datasets (tools/fetch-data.sh): GeoNames
-- cities500 (~235k points, SRID 4326) and OpenStreetMap country land
-- polygons (~82k polygons, 8M vertices). tools/test-all.sh loads them into
-- the tables real_cities and real_land of the pgTAP database; without
-- them every test here is skipped (with a reason).
\set ON_ERROR_STOP 1
\set QUIET 1
\pset format unaligned
\pset tuples_only true
\pset pager off

BEGIN;
\o /dev/null
\ir ../../sql/hyrtree_00_setup.sql
\o

SELECT plan(16);

CREATE FUNCTION pg_temp.real_tests() RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  n bigint;
BEGIN
  IF to_regclass('public.real_cities') IS NULL THEN
    RETURN NEXT skip('real_cities not loaded (run tools/fetch-data.sh, then tools/test-all.sh)', 9);
  ELSE
    SELECT count(*) INTO n FROM real_cities;
    RETURN NEXT cmp_ok(n, '>', 200000::bigint, 'real_cities has the GeoNames cities500 points');
    CREATE INDEX real_cities_idx ON real_cities USING hyrtree (geom);
    ANALYZE real_cities;
    RETURN NEXT ok(hybrid_index_check('real_cities_idx'), 'real_cities_idx passes check');
    RETURN NEXT is((hybrid_index_inspect('real_cities_idx')->>'entries')::bigint, n, 'one entry per city');
    CREATE TEMP TABLE cw (wid int, g geometry);
    -- windows around the world, some over dense areas (Europe, India), some at the antimeridian/poles
    INSERT INTO cw VALUES
      (1, ST_MakeEnvelope(-10, 35, 30, 60, 4326)), (2, ST_MakeEnvelope(2.2, 48.8, 2.5, 48.95, 4326)),
      (3, ST_MakeEnvelope(72, 8, 90, 30, 4326)), (4, ST_MakeEnvelope(170, -50, 180, -30, 4326)),
      (5, ST_MakeEnvelope(-180, 60, 180, 90, 4326)), (6, ST_MakeEnvelope(-180, -90, 180, 90, 4326)),
      (7, ST_MakeEnvelope(-74.3, 40.5, -73.7, 40.95, 4326)), (8, ST_MakeEnvelope(135, 34, 141, 37, 4326)),
      (9, ST_MakeEnvelope(-60, -40, -50, -30, 4326)), (10, ST_MakeEnvelope(0, 0, 0.0001, 0.0001, 4326));
    INSERT INTO cw
      SELECT 100 + row_number() OVER (ORDER BY id), ST_Expand(geom, 0.5) FROM real_cities
      WHERE id % 20011 = 1 LIMIT 15;
    RETURN NEXT is((SELECT count(*) FROM cw, LATERAL hit.diff(format('SELECT id FROM real_cities WHERE geom && %L::geometry', cw.g), 'real_cities_idx') d
                    WHERE NOT (d.index_same AND d.index_plan AND d.bitmap_same AND d.bitmap_plan)), 0::bigint,
                   'cities &&: index and bitmap scans = seq scan (25 windows)');
    RETURN NEXT is((SELECT count(*) FROM cw, LATERAL hit.diff(format('SELECT id FROM real_cities WHERE geom @ %L::geometry', cw.g), 'real_cities_idx') d
                    WHERE NOT (d.index_same AND d.bitmap_same)), 0::bigint,
                   'cities @: index and bitmap scans = seq scan');
    -- kNN around real cities (many exact duplicates of coordinates exist)
    CREATE TEMP TABLE ck AS
      SELECT k, c.id AS cid, d.*
      FROM unnest(ARRAY[1, 10, 100]) k,
           (SELECT id, geom FROM real_cities WHERE id % 15013 = 5 LIMIT 12) c,
           LATERAL hit.knn_diff('real_cities', 'real_cities_idx', c.geom, k) d;
    RETURN NEXT is((SELECT count(*) FROM ck WHERE NOT dist_same), 0::bigint, 'cities kNN: identical distance sequences');
    RETURN NEXT is((SELECT count(*) FROM ck WHERE NOT ids_same), 0::bigint, 'cities kNN: same ids');
    RETURN NEXT is((SELECT count(*) FROM ck WHERE NOT index_plan), 0::bigint, 'cities kNN: ordered index scans used');
    RETURN NEXT is((SELECT count(*) FROM real_cities c, LATERAL hit.knn_diff('real_cities', 'real_cities_idx', c.geom, 10) d
                    WHERE c.name IN ('Paris', 'Tokyo', 'Nairobi', 'Lima', 'Reykjavik') AND NOT (d.dist_same AND d.ids_same)),
                   0::bigint, '10 nearest places to some capitals, as a sorted seq scan');
  END IF;

  IF to_regclass('public.real_land') IS NULL OR to_regclass('public.real_cities') IS NULL THEN
    RETURN NEXT skip('real_land not loaded (run tools/fetch-data.sh, then tools/test-all.sh)', 7);
  ELSE
    SELECT count(*) INTO n FROM real_land;
    RETURN NEXT cmp_ok(n, '>', 50000::bigint, 'real_land has the land polygons');
    CREATE INDEX real_land_idx ON real_land USING hyrtree (geom) WITH (page_size = 4096, placement = 'upper');
    ANALYZE real_land;
    RETURN NEXT ok(hybrid_index_check('real_land_idx'), 'real_land_idx passes check');
    RETURN NEXT is((SELECT count(*) FROM cw, LATERAL hit.diff(format('SELECT id FROM real_land WHERE geom && %L::geometry', cw.g), 'real_land_idx') d
                    WHERE NOT (d.index_same AND d.index_plan AND d.bitmap_same AND d.bitmap_plan)), 0::bigint,
                   'land &&: index and bitmap scans = seq scan');
    RETURN NEXT is((SELECT count(*) FROM cw, LATERAL hit.diff(format('SELECT id FROM real_land WHERE geom ~ %L::geometry', ST_Centroid(cw.g)), 'real_land_idx') d
                    WHERE NOT (d.index_same AND d.bitmap_same)), 0::bigint,
                   'land ~ (polygons whose box contains a point): index and bitmap = seq');
    -- point in polygon through the polygon index, against PostGIS' GiST as the oracle
    CREATE TEMP TABLE land_gist AS SELECT id, npoints, geom FROM real_land;
    CREATE INDEX land_gist_idx ON land_gist USING gist (geom);
    ANALYZE land_gist;
    RETURN NEXT bag_eq(
      $q$SELECT c.id AS cid, l.id AS lid FROM real_cities c JOIN real_land l ON hi_intersects(l.geom, c.geom)
         WHERE l.npoints < 2000 AND c.id % 3 = 0$q$,
      $q$SELECT c.id AS cid, l.id AS lid FROM real_cities c JOIN land_gist l ON ST_Intersects(l.geom, c.geom)
         WHERE l.npoints < 2000 AND c.id % 3 = 0$q$,
      'cities in (small) land polygons: hyrtree + hi_intersects = GiST + ST_Intersects');
    -- kNN over polygons: exact recheck with true distances
    RETURN NEXT is((SELECT count(*) FROM (SELECT geom FROM real_cities WHERE name IN ('Honolulu', 'Reykjavik', 'Valparaíso') LIMIT 3) c,
                    LATERAL hit.knn_diff('real_land', 'real_land_idx', c.geom, 5,
                                         'npoints < 20000') d
                    WHERE NOT (d.dist_same AND d.ids_same AND d.index_plan)), 0::bigint,
                   'nearest land polygons to island/coastal cities = sorted seq scan');
    RETURN NEXT is((SELECT array_agg(x ORDER BY x) FROM (SELECT (hit.knn('real_land', g, 10, 'index')).dists AS ds FROM cw WHERE wid IN (2, 4)) s, unnest(s.ds) x),
                   (SELECT array_agg(x ORDER BY x) FROM (SELECT (hit.knn('land_gist', g, 10, 'index')).dists AS ds FROM cw WHERE wid IN (2, 4)) s, unnest(s.ds) x),
                   'land kNN: same distances as the GiST index');
  END IF;
END $$;

SELECT * FROM pg_temp.real_tests();

SELECT * FROM finish();
ROLLBACK;
