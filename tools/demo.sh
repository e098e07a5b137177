#!/usr/bin/env bash
# demo.sh — see hybrid_index at work on real data, from a fresh machine:
#
#   bash tools/demo.sh
#
# Installs the dependencies, builds and installs the extension, starts a
# local PostgreSQL cluster (data /tmp/hybrid_index_demo, port 5499, left
# running), loads the GeoNames cities500 dataset (~235k places) into
# cities(id, name, country, population, geom geometry(Point,4326)), builds
# a hyrtree index and runs a few queries as users write them (&&, kNN,
# ST_DWithin, ST_Intersects), each with the plan line that shows the index
# at work, prints one
# side-by-side table of hyrtree and GiST on copies of the same rows (build,
# a window query, a kNN query, an ST_Intersects query, a 10k-row INSERT,
# index size), then shows the index's statistics and structure. Run as root.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DATADIR=${HI_DEMO_DATADIR:-/tmp/hybrid_index_demo}
PORT=${HI_DEMO_PORT:-5499}
SOCK=/tmp/hybrid_index_sock.$PORT
DB=hybrid_index_demo

if [ "$(id -u)" != 0 ]; then
	echo "demo: run as root (it installs packages and the extension)" >&2
	exit 1
fi

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "installing dependencies"
bash "$ROOT/tools/install-deps.sh"
export PATH="$(pg_config --bindir):$PATH"

step "building and installing hybrid_index"
(cd "$ROOT" && make -s -j2 >/dev/null && make -s install >/dev/null)
echo "installed $(pg_config --pkglibdir)/hybrid_index.so"

step "starting PostgreSQL (data $DATADIR, port $PORT)"
bash "$ROOT/tools/pgcluster.sh" start "$DATADIR" "$PORT"

step "fetching GeoNames cities500"
bash "$ROOT/tools/fetch-data.sh" "$ROOT/data" cities

PSQL=(psql -X -h "$SOCK" -p "$PORT" -U postgres -v ON_ERROR_STOP=1)
if ! "${PSQL[@]}" -d postgres -Atc "SELECT 1 FROM pg_database WHERE datname = '$DB'" | grep -q 1; then
	"${PSQL[@]}" -d postgres -qc "CREATE DATABASE $DB"
fi

step "loading cities and building the hyrtree index"
"${PSQL[@]}" -d "$DB" -q <<EOF
CREATE EXTENSION IF NOT EXISTS postgis;
CREATE EXTENSION IF NOT EXISTS hybrid_index;
DROP TABLE IF EXISTS cities;
CREATE TABLE cities (id bigint PRIMARY KEY, name text, country text, population bigint,
                     geom geometry(Point, 4326));
CREATE TEMP TABLE cities_raw (id bigint, name text, country text, population bigint, lon float8, lat float8);
\copy cities_raw FROM '$ROOT/data/cities500.csv' WITH (FORMAT csv, HEADER true)
INSERT INTO cities SELECT id, name, country, population, ST_SetSRID(ST_MakePoint(lon, lat), 4326) FROM cities_raw;
\timing on
CREATE INDEX cities_geom_idx ON cities USING hyrtree (geom);
\timing off
ANALYZE cities;
SELECT count(*) AS cities FROM cities;
EOF

# Prints the lines of a query's plan that name an index: the proof that the
# query as written uses it. Prepended to each query step's psql session.
INDEX_LINES=$(cat <<'EOF'
CREATE FUNCTION pg_temp.index_lines(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  l text;
BEGIN
  FOR l IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    IF l ~ 'Index' AND l !~ 'Index Cond' THEN
      RETURN NEXT 'plan: ' || btrim(replace(l, '->', ''));
    END IF;
  END LOOP;
END $$;
\pset footer off
\pset tuples_only on
EOF
)

# One query step: its title, the query whose plan lines are shown (a psql
# variable, so no quote doubling), then the SQL run for its answer (stdin)
query_step() {
	step "$1"
	"${PSQL[@]}" -d "$DB" -q -v q="$2" <<EOF
$INDEX_LINES
SELECT pg_temp.index_lines(:'q');
\pset tuples_only off
$(cat)
EOF
}

query_step "query 1: window query (places in a box around the Alps)" \
	"SELECT count(*) FROM cities WHERE geom && ST_MakeEnvelope(5.5, 45.5, 10.5, 47.8, 4326)" <<'EOF'
SELECT count(*) AS places_in_box FROM cities WHERE geom && ST_MakeEnvelope(5.5, 45.5, 10.5, 47.8, 4326);
EOF

query_step "query 2: kNN — the 10 places nearest to Paris (index order, exact after recheck)" \
	"SELECT name FROM cities ORDER BY geom <-> 'SRID=4326;POINT(2.3522 48.8566)' LIMIT 10" <<'EOF'
WITH paris AS (SELECT geom FROM cities WHERE name = 'Paris' AND country = 'FR' ORDER BY population DESC LIMIT 1)
SELECT c.name, c.country, c.population,
       round((c.geom <-> p.geom)::numeric, 5) AS degrees,
       round((ST_DistanceSphere(c.geom, p.geom) / 1000)::numeric, 2) AS km
FROM cities c, paris p
ORDER BY c.geom <-> p.geom
LIMIT 10;
EOF

query_step "query 3: ST_DWithin — places within 0.3 degrees of Berlin" \
	"SELECT count(*) FROM cities WHERE ST_DWithin(geom, 'SRID=4326;POINT(13.405 52.52)', 0.3)" <<'EOF'
SELECT count(*) AS near_berlin,
       array_to_string((array_agg(name ORDER BY population DESC))[1:8], ', ') AS largest
FROM cities WHERE ST_DWithin(geom, 'SRID=4326;POINT(13.405 52.52)', 0.3);
EOF

query_step "query 4: ST_Intersects — places inside a polygon (a triangle over the Benelux)" \
	"SELECT count(*) FROM cities WHERE ST_Intersects(geom, 'SRID=4326;POLYGON((2.5 49.5, 7 50, 5 53.5, 2.5 49.5))')" <<'EOF'
SELECT country, count(*) AS places
FROM cities WHERE ST_Intersects(geom, 'SRID=4326;POLYGON((2.5 49.5, 7 50, 5 53.5, 2.5 49.5))')
GROUP BY country ORDER BY places DESC;
EOF

step "what the choice means: hyrtree next to GiST on the same rows"
# Each side gets a copy of the table; every time is the median of 5 runs
# (build and INSERT: one run each, on a warm table), in milliseconds.
"${PSQL[@]}" -d "$DB" -q <<'EOF'
CREATE OR REPLACE FUNCTION pg_temp.ms(q text, reps int DEFAULT 5) RETURNS numeric
LANGUAGE plpgsql AS $$
DECLARE
  t0 timestamptz;
  times numeric[] := '{}';
BEGIN
  FOR i IN 1..reps LOOP
    t0 := clock_timestamp();
    EXECUTE q;
    times := times || extract(epoch FROM clock_timestamp() - t0)::numeric * 1000;
  END LOOP;
  RETURN (SELECT round(percentile_disc(0.5) WITHIN GROUP (ORDER BY x), 1) FROM unnest(times) x);
END $$;
SET client_min_messages = warning;
CREATE TEMP TABLE side (ord int, measure text, am text, value numeric);
DO $$
DECLARE
  am text;
  t text;
BEGIN
  FOREACH am IN ARRAY ARRAY['hyrtree', 'gist'] LOOP
    t := 'demo_' || am;
    EXECUTE format('DROP TABLE IF EXISTS %I', t);
    EXECUTE format('CREATE TABLE %I AS SELECT * FROM cities', t);
    EXECUTE format('ANALYZE %I', t);
    INSERT INTO side VALUES (1, 'CREATE INDEX (ms)', am,
      pg_temp.ms(format('CREATE INDEX %I ON %I USING %s (geom)', t || '_idx', t, am), 1));
    EXECUTE format('ANALYZE %I', t);
    PERFORM set_config('enable_seqscan', 'off', true);
    INSERT INTO side VALUES (2, 'window query, 5 x 2.3 degrees (ms)', am,
      pg_temp.ms(format('SELECT count(*) FROM %I WHERE geom && ST_MakeEnvelope(5.5, 45.5, 10.5, 47.8, 4326)', t)));
    INSERT INTO side VALUES (3, '10 places nearest to Paris (ms)', am,
      pg_temp.ms(format('SELECT id FROM %I ORDER BY geom <-> ST_SetSRID(ST_MakePoint(2.35, 48.86), 4326) LIMIT 10', t)));
    INSERT INTO side VALUES (4, 'ST_Intersects with a polygon (ms)', am,
      pg_temp.ms(format('SELECT count(*) FROM %I WHERE ST_Intersects(geom, ST_Buffer(ST_SetSRID(ST_MakePoint(13.4, 52.5), 4326), 1.5))', t)));
    PERFORM set_config('enable_seqscan', 'on', true);
    INSERT INTO side VALUES (5, 'INSERT of 10,000 rows (ms)', am,
      pg_temp.ms(format('INSERT INTO %I SELECT id + 100000000, name, country, population, geom FROM cities ORDER BY random() LIMIT 10000', t), 1));
    INSERT INTO side VALUES (6, 'index size (MB)', am,
      round(pg_relation_size((t || '_idx')::regclass) / 1048576.0, 1));
  END LOOP;
END $$;
\pset footer off
SELECT h.measure, h.value AS hyrtree, g.value AS gist,
       round(h.value / nullif(g.value, 0), 2) AS "hyrtree / gist"
FROM side h JOIN side g USING (ord, measure)
WHERE h.am = 'hyrtree' AND g.am = 'gist'
ORDER BY ord;
DROP TABLE demo_hyrtree, demo_gist;
EOF
echo "(one run each on this machine with warm caches; bench/run gist-compare measures with repetitions)"

step "index statistics (hybrid_index_stats) and structure (hybrid_index_inspect)"
"${PSQL[@]}" -d "$DB" <<'EOF'
SELECT * FROM hybrid_index_stats('cities_geom_idx');
SELECT jsonb_pretty(hybrid_index_inspect('cities_geom_idx') - 'files') AS inspect;
SELECT hybrid_index_check('cities_geom_idx') AS check_ok;
EOF

cat <<EOF

The demo cluster is still running.
  connect:  psql -h $SOCK -p $PORT -U postgres $DB
       or:  psql -h localhost -p $PORT -U postgres $DB
  stop:     bash $ROOT/tools/pgcluster.sh stop $DATADIR $PORT
  remove:   (after stopping) rm -rf $DATADIR
EOF
