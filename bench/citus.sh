#!/usr/bin/env bash
# citus.sh — a distributed table (Citus) indexed by our access methods next
# to GiST (issue 44), on a test cluster on this machine: a coordinator and
# two workers, all three on these 2 cores, so the figures are functional
# (what one query through the coordinator costs), not a claim of scale.
#
#   bench/citus.sh [points] [reps]       (defaults 1000000, 5; as root)
#   AMS="gist hyrtree" bench/citus.sh    fewer access methods (GiST first)
#
# PostgreSQL 16.14 (the release build of tools/build-pg.sh 16) with Citus
# 14.0.1 (tools/build-pg.sh --citus 16); the extension is built for it in a
# temporary copy of the tree.  One table of `points` uniform points,
# geometry(Point, 4326), distributed by id over 8 shards (4 per worker),
# vacuumed.  For each access method: CREATE INDEX on the distributed table
# (Citus builds the 8 shard indexes over its connections to both workers),
# then, warm, a set of 20 queries of each workload through the coordinator,
# the median over `reps` runs of the set's total time (psql \timing, at the
# coordinator's client):
#   window ids       SELECT id ... WHERE geom && window (0.1 % of the area)
#   window count     SELECT count(*) ... WHERE geom && window (0.1 %)
#   10-NN            SELECT id ... ORDER BY geom <-> p LIMIT 10
# Prints a Markdown table; ratios are ours ÷ GiST's medians.
set -euo pipefail
cd "$(dirname "$0")/.."
NPTS=${1:-1000000}
REPS=${2:-5}
AMS=${AMS:-gist hyrtree efind lbgrid hgrid}
BASE=${PORT:-56450}

PGC=$(bash tools/build-pg.sh --citus 16 | tail -n 1)
BUILD=$(mktemp -d /tmp/hi_bench_citus_build.XXXXXX)
tar --exclude=.git -cf - . | tar -C "$BUILD" -xf -
(cd "$BUILD" && make clean >/dev/null && make -j2 PG_CONFIG="$PGC" && make install PG_CONFIG="$PGC") \
	>"$BUILD/build.log" 2>&1 || {
	tail -n 30 "$BUILD/build.log"
	exit 1
}
export PATH="$("$PGC" --bindir):$PATH" PG_BINDIR="$("$PGC" --bindir)"

NODES="c w1 w2"
port_of() { case $1 in c) echo "$BASE" ;; w1) echo $((BASE + 1)) ;; w2) echo $((BASE + 2)) ;; esac; }
sock_of() { echo "/tmp/hybrid_index_sock.$(port_of "$1")"; }
stop_all() {
	for n in $NODES; do
		bash tools/pgcluster.sh stop "/tmp/hi_bench_citus_$n" "$(port_of "$n")" >/dev/null 2>&1 || true
	done
	rm -rf "$BUILD"
}
trap stop_all EXIT
for n in $NODES; do
	bash tools/pgcluster.sh stop "/tmp/hi_bench_citus_$n" "$(port_of "$n")" >/dev/null 2>&1 || true
	rm -rf "/tmp/hi_bench_citus_$n"
	HI_PRELOAD="citus,hybrid_index" HI_EXTRA_CONF="hybrid_index.max_page_size = 8192
shared_buffers = 1GB
hybrid_index.cache_size = 512MB
max_connections = 100
max_prepared_transactions = 50
jit = off
citus.local_hostname = '$(sock_of "$n")'" \
		bash tools/pgcluster.sh start "/tmp/hi_bench_citus_$n" "$(port_of "$n")" >/dev/null
	psql -XAtq -v ON_ERROR_STOP=1 -h "$(sock_of "$n")" -p "$(port_of "$n")" -U postgres -d postgres \
		-c "CREATE EXTENSION citus; CREATE EXTENSION postgis; CREATE EXTENSION hybrid_index" >/dev/null
done
export PGHOST=$(sock_of c) PGPORT=$(port_of c) PGUSER=postgres PGDATABASE=postgres
q() { psql -XAtq -v ON_ERROR_STOP=1 -c "$1"; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
r2() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", (b > 0) ? a / b : 0}'; }

q "SELECT citus_set_coordinator_host('$(sock_of c)', $(port_of c))" >/dev/null
for n in w1 w2; do
	q "SELECT citus_add_node('$(sock_of $n)', $(port_of $n))" >/dev/null
done
q "SET citus.shard_count = 8; CREATE TABLE pts (id bigint, geom geometry(Point, 4326)); SELECT create_distributed_table('pts', 'id')" >/dev/null
q "SELECT setseed(0.42); INSERT INTO pts SELECT i, ST_SetSRID(ST_MakePoint(random() * 1000, random() * 1000), 4326) FROM generate_series(1, $NPTS) i"
q "VACUUM ANALYZE pts"

CENTRES=$(q "SELECT setseed(0.7); SELECT string_agg(format('%s %s', round((50 + random() * 900)::numeric, 3), round((50 + random() * 900)::numeric, 3)), ',') FROM generate_series(1, 20)" | tail -1)
workload() {
	IFS=, read -ra cs <<<"$CENTRES"
	for c in "${cs[@]}"; do
		set -- "$1" $c
		case $1 in
		wids) echo "SELECT id FROM pts WHERE geom && ST_MakeEnvelope($2 - 15.811, $3 - 15.811, $2 + 15.811, $3 + 15.811, 4326);" ;;
		wcount) echo "SELECT count(*) FROM pts WHERE geom && ST_MakeEnvelope($2 - 15.811, $3 - 15.811, $2 + 15.811, $3 + 15.811, 4326);" ;;
		knn) echo "SELECT id FROM pts ORDER BY geom <-> 'SRID=4326;POINT($2 $3)'::geometry LIMIT 10;" ;;
		esac
	done
}
run_ms() {
	{ echo '\timing on'; workload "$1"; } | psql -XAtq -v ON_ERROR_STOP=1 -o /dev/null 2>&1 |
		sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | awk '{s += $1} END {printf "%.2f", s}'
}
# the node of one shard's plan (all shards alike), from EXPLAIN through Citus
plan_of() {
	psql -XAtq -c "EXPLAIN (COSTS OFF) $(workload "$1" | head -1)" |
		grep -o -E 'Index Only Scan|Bitmap Heap Scan|Index Scan|Seq Scan' | head -1
}

declare -A R
WLS="wids wcount knn"
for am in $AMS; do
	R[$am,build]=$(psql -XAtq -c '\timing on' -c "CREATE INDEX pts_idx ON pts USING $am (geom)" |
		sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p')
	q "VACUUM ANALYZE pts"
	for w in $WLS; do
		R[$am,$w]=$(warm_median "$w")
		R[$am,$w,plan]=$(plan_of "$w")
	done
	q "DROP INDEX pts_idx"
	echo "citus: $am done" >&2
done

echo "$NPTS uniform points, geometry(Point, 4326), distributed by id over 8 shards on 2 workers (coordinator"
echo "and workers on one 2-core machine), vacuumed, warm; medians of $REPS runs of 20 queries each (total ms"
echo "at the client); ratio = ours ÷ GiST; each shard's plan node in brackets"
echo
OURS=${AMS#gist }
echo "| workload | GiST |$(for am in $OURS; do printf ' %s |' "$am"; done)"
echo "|---|---:|$(for am in $OURS; do printf -- '---:|'; done)"
for w in wids:"SELECT id ... && window (0.1 %)" wcount:"SELECT count(*) ... && window (0.1 %)" \
	knn:"SELECT id ... 10-NN"; do
	k=${w%%:*}
	line="| ${w#*:} | ${R[gist,$k]} ms [${R[gist,$k,plan]}] |"
	for am in $OURS; do
		line="$line ${R[$am,$k]} ($(r2 "${R[$am,$k]}" "${R[gist,$k]}")×) [${R[$am,$k,plan]}] |"
	done
	echo "$line"
done
line="| CREATE INDEX on the distributed table | ${R[gist,build]} ms |"
for am in $OURS; do
	line="$line ${R[$am,build]} ($(r2 "${R[$am,build]}" "${R[gist,build]}")×) |"
done
echo "$line"
