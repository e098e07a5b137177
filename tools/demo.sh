#!/usr/bin/env bash
# demo.sh — see hybrid_index at work on real data, from a fresh machine:
#
#   bash tools/demo.sh
#
# Installs the dependencies, builds and installs the extension, starts a
# local PostgreSQL cluster (data /tmp/hybrid_index_demo, port 5499, left
# running), loads the GeoNames cities500 dataset (~235k places) into
# cities(id, name, country, population, geom geometry(Point,4326)), builds
# a hyrtree index and runs a few queries with EXPLAIN ANALYZE, then shows
# the index's statistics and structure. Run as root.
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

step "query 1: window query (places in a box around the Alps)"
"${PSQL[@]}" -d "$DB" <<'EOF'
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY ON)
SELECT count(*) FROM cities WHERE geom && ST_MakeEnvelope(5.5, 45.5, 10.5, 47.8, 4326);
SELECT count(*) AS places_in_box FROM cities WHERE geom && ST_MakeEnvelope(5.5, 45.5, 10.5, 47.8, 4326);
EOF

step "query 2: kNN — the 10 places nearest to Paris (index order, exact after recheck)"
"${PSQL[@]}" -d "$DB" <<'EOF'
EXPLAIN (COSTS OFF)
SELECT name, country FROM cities
ORDER BY geom <-> (SELECT geom FROM cities WHERE name = 'Paris' AND country = 'FR' ORDER BY population DESC LIMIT 1)
LIMIT 10;
WITH paris AS (SELECT geom FROM cities WHERE name = 'Paris' AND country = 'FR' ORDER BY population DESC LIMIT 1)
SELECT c.name, c.country, c.population,
       round((c.geom <-> p.geom)::numeric, 5) AS degrees,
       round((ST_DistanceSphere(c.geom, p.geom) / 1000)::numeric, 2) AS km
FROM cities c, paris p
ORDER BY c.geom <-> p.geom
LIMIT 10;
EOF

step "query 3: hi_dwithin — places within 0.3 degrees of Berlin"
"${PSQL[@]}" -d "$DB" <<'EOF'
EXPLAIN (COSTS OFF)
SELECT count(*) FROM cities WHERE hi_dwithin(geom, ST_SetSRID(ST_MakePoint(13.405, 52.52), 4326), 0.3);
SELECT count(*) AS near_berlin,
       string_agg(name, ', ' ORDER BY population DESC) FILTER (WHERE population > 20000) AS larger_ones
FROM cities WHERE hi_dwithin(geom, ST_SetSRID(ST_MakePoint(13.405, 52.52), 4326), 0.3);
EOF

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
