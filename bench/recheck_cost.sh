#!/usr/bin/env bash
# recheck_cost.sh — where the time of a warm `SELECT count(*) ... WHERE geom
# && window` goes, hyrtree vs GiST (issue 2's warm range target).
#
#   bench/recheck_cost.sh [points] [reps]      (defaults 1000000, 21)
#
# Runs against the server of PGHOST/PGPORT (a cluster of tools/pgcluster.sh
# with hybrid_index preloaded).  Two identical tables of uniform points in
# spatial heap order (ORDER BY geom: PostGIS sorts along a space-filling
# curve, so neighbours share heap pages, as in the clustered benchmark
# data), one GiST and one hyrtree index (placement none, everything
# cached), and one window holding about 10 % of the rows.
# Prints the median of `reps` runs of:
#   gist sql          the query through the executor, GiST
#   hyrtree sql       the same, hyrtree, hybrid_index.recheck = on (the default before issue 21)
#   hyrtree norecheck the same with recheck = off (the default)
#   gist probe        hybrid_index_probe on the GiST index: its search alone
#   hyrtree probe     the same on hyrtree
# hyrtree sql - hyrtree norecheck is the executor's recheck; norecheck -
# probe the bitmap and heap work, which no index can make cheaper.
set -euo pipefail
n=${1:-1000000}
reps=${2:-21}
psql_q() { psql -X -q -At -v ON_ERROR_STOP=1 "$@"; }

psql_q <<EOF
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS postgis;
CREATE EXTENSION IF NOT EXISTS hybrid_index;
DROP TABLE IF EXISTS rc_gist, rc_hyr;
SELECT setseed(0.25);
CREATE TABLE rc_gist AS
  SELECT i AS id, ST_SetSRID(ST_MakePoint(random() * 360 - 180, random() * 180 - 90), 4326) AS geom
  FROM generate_series(1, $n) i ORDER BY 2;
CREATE TABLE rc_hyr AS SELECT * FROM rc_gist;
CREATE INDEX rc_gist_idx ON rc_gist USING gist (geom);
CREATE INDEX rc_hyr_idx ON rc_hyr USING hyrtree (geom) WITH (placement = 'none');
VACUUM ANALYZE rc_gist;
VACUUM ANALYZE rc_hyr;
CREATE OR REPLACE FUNCTION rc_time(q text, reps int, recheck text) RETURNS float8
LANGUAGE plpgsql AS \$\$
DECLARE
  t timestamptz;
  ms float8[] := '{}';
  c bigint;
BEGIN
  PERFORM set_config('hybrid_index.recheck', recheck, true);
  PERFORM set_config('enable_seqscan', 'off', true);
  PERFORM set_config('max_parallel_workers_per_gather', '0', true);
  EXECUTE q INTO c;					-- warm-up
  FOR i IN 1 .. reps LOOP
    t := clock_timestamp();
    EXECUTE q INTO c;
    ms := ms || extract(epoch FROM clock_timestamp() - t) * 1000;
  END LOOP;
  RETURN (SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY x) FROM unnest(ms) x);
END \$\$;
EOF

w="ST_MakeEnvelope(-180, -90, -72, -30, 4326)"
rows=$(psql_q -c "SELECT count(*) FROM rc_gist WHERE geom && $w")
printf "%d points, window of %d rows (%.1f %%), median of %d runs\n" "$n" "$rows" \
	"$(echo "100 * $rows / $n" | bc -l)" "$reps"
psql_q -F ' ' <<EOF
SELECT rpad(k, 18), round(ms::numeric, 2) || ' ms', round((ms / first_value(ms) OVER ())::numeric, 2) || 'x GiST'
FROM (VALUES
  (1, 'gist sql', rc_time('SELECT count(*) FROM rc_gist WHERE geom && $w', $reps, 'on')),
  (2, 'hyrtree sql', rc_time('SELECT count(*) FROM rc_hyr WHERE geom && $w', $reps, 'on')),
  (3, 'hyrtree norecheck', rc_time('SELECT count(*) FROM rc_hyr WHERE geom && $w', $reps, 'off')),
  (4, 'gist probe', rc_time('SELECT hybrid_index_probe(''rc_gist_idx'', $w, ''&&'')', $reps, 'on')),
  (5, 'hyrtree probe', rc_time('SELECT hybrid_index_probe(''rc_hyr_idx'', $w, ''&&'')', $reps, 'on'))
) v(o, k, ms) ORDER BY o;
EOF
psql_q -c "DROP TABLE rc_gist, rc_hyr; DROP FUNCTION rc_time(text, int, text);"
