#!/usr/bin/env bash
# covering.sh — point queries answered from the index (issue 42): our
# access methods, whose entries keep points exactly and can be returned by
# index-only scans, next to GiST in the same run on the same data.
#
#   bench/covering.sh [points] [reps]      (defaults 1000000, 5; as root)
#   AMS="gist hyrtree" SIZES=0 bench/covering.sh 20000000 3
#                       fewer access methods (GiST always first), no size builds
#
# One table of `points` uniform points, geometry(Point, 4326) with an id and
# a name, vacuumed (so the visibility map is set), queried warm.  Each
# access method's index is built alone on it with INCLUDE (id, name) (GiST
# too, though it can never return the geometry), and each workload runs a
# fixed set of 20 queries; the time is the median over `reps` runs of the
# set's total, after two warm-up runs:
#   count 0.01 % / 0.1 % / 1 %   SELECT count(*) ... WHERE geom && window,
#                                windows of that share of the area
#   dwithin count                SELECT count(*) ... WHERE ST_DWithin(geom, p, r),
#                                about 0.1 % of the points each
#   dwithin id, name             SELECT id, name ... WHERE ST_DWithin(geom, p, r)
#   100-NN geom                  SELECT geom ... ORDER BY geom <-> p LIMIT 100
#   100-NN id                    SELECT id ... ORDER BY geom <-> p LIMIT 100
# The plan node of each workload is printed beside it.  Then each index is
# built once more with INCLUDE (id) and once without INCLUDE, for their
# sizes (pg_relation_size) and build times.
# Prints a Markdown table; ratios are ours ÷ GiST's medians.
set -euo pipefail
cd "$(dirname "$0")/.."
NPTS=${1:-1000000}
REPS=${2:-5}
DATA=/tmp/hi_bench_covering
PORT=${PORT:-56442}
. bench/lib.sh

bench_cluster "shared_buffers = 1GB
hybrid_index.cache_size = 512MB
max_parallel_workers_per_gather = 0
jit = off"

q "SELECT setseed(0.42)"
q "CREATE TABLE pts (id int, name text, geom geometry(Point, 4326))"
q "INSERT INTO pts SELECT i, 'place ' || i, ST_SetSRID(ST_MakePoint(random() * 1000, random() * 1000), 4326) FROM generate_series(1, $NPTS) i"
q "VACUUM ANALYZE pts"

# 20 query centres, the same for every access method
CENTRES=$(psql -XAtq -c "SELECT setseed(0.7); SELECT string_agg(format('%s %s', round((50 + random() * 900)::numeric, 3), round((50 + random() * 900)::numeric, 3)), ',') FROM generate_series(1, 20)" | tail -1)

workload() {
	# the 20 statements of workload $1, one per line
	local half r
	IFS=, read -ra cs <<<"$CENTRES"
	for c in "${cs[@]}"; do
		set -- "$1" $c
		case $1 in
		count0.01) half=5 ;;
		count0.1) half=15.811 ;;
		count1) half=50 ;;
		esac
		case $1 in
		count*) echo "SELECT count(*) FROM pts WHERE geom && ST_MakeEnvelope($2 - $half, $3 - $half, $2 + $half, $3 + $half, 4326);" ;;
		dwcount) echo "SELECT count(*) FROM pts WHERE ST_DWithin(geom, 'SRID=4326;POINT($2 $3)'::geometry, 17.84);" ;;
		dwidname) echo "SELECT id, name FROM pts WHERE ST_DWithin(geom, 'SRID=4326;POINT($2 $3)'::geometry, 17.84);" ;;
		knngeom) echo "SELECT geom FROM pts ORDER BY geom <-> 'SRID=4326;POINT($2 $3)'::geometry LIMIT 100;" ;;
		knnid) echo "SELECT id FROM pts ORDER BY geom <-> 'SRID=4326;POINT($2 $3)'::geometry LIMIT 100;" ;;
		esac
	done
}

run_ms() {
	# total server-side ms of a workload's 20 statements
	{ echo '\timing on'; echo 'SET enable_seqscan = off;'; workload "$1"; } |
		psql -XAtq -v ON_ERROR_STOP=1 -o /dev/null 2>&1 |
		sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | tail -20 | awk '{s += $1} END {printf "%.2f", s}'
}

plan_of() {
	{ echo 'SET enable_seqscan = off;'; echo "EXPLAIN (COSTS OFF) $(workload "$1" | head -1)"; } |
		psql -XAtq | grep -o -E 'Index Only Scan|Bitmap Heap Scan|Index Scan|Seq Scan' | head -1
}

declare -A R
WLS="count0.01 count0.1 count1 dwcount dwidname knngeom knnid"
AMS=${AMS:-gist hyrtree efind lbgrid hgrid}
SIZES=${SIZES:-1}
build() {
	psql -XAtq -c '\timing on' -c "CREATE INDEX pts_idx ON pts USING $1 (geom) $2" |
		sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p'
}
for am in $AMS; do
	R[$am,build]=$(build "$am" "INCLUDE (id, name)")
	q "VACUUM ANALYZE pts"
	R[$am,size]=$(q "SELECT pg_relation_size('pts_idx')")
	for w in $WLS; do
		R[$am,$w]=$(warm_median "$w")
		R[$am,$w,plan]=$(plan_of "$w")
	done
	q "DROP INDEX pts_idx"
	if [ "$SIZES" = 1 ]; then
		R[$am,build1]=$(build "$am" "INCLUDE (id)")
		R[$am,size1]=$(q "SELECT pg_relation_size('pts_idx')")
		q "DROP INDEX pts_idx"
		R[$am,build0]=$(build "$am" "")
		R[$am,size0]=$(q "SELECT pg_relation_size('pts_idx')")
		q "DROP INDEX pts_idx"
	fi
	echo "covering: $am done" >&2
done

mb() { awk -v b="$1" 'BEGIN {printf "%.1f MB", b / 1048576}'; }
echo "$NPTS uniform points, geometry(Point, 4326), vacuumed, warm; medians of $REPS runs of"
echo "20 queries each (total ms); ratio = ours ÷ GiST, every index with INCLUDE (id, name); plan node in brackets"
echo
OURS=${AMS#gist }
echo "| workload | GiST ms |$(for am in $OURS; do printf ' %s |' "$am"; done)"
echo "|---|---:|$(for am in $OURS; do printf -- '---:|'; done)"
for w in count0.01:"count(*), window 0.01 %" count0.1:"count(*), window 0.1 %" \
	count1:"count(*), window 1 %" dwcount:"count(*) ST_DWithin (0.1 %)" \
	dwidname:"SELECT id, name ... ST_DWithin (0.1 %)" knngeom:"SELECT geom ... 100-NN" \
	knnid:"SELECT id ... 100-NN"; do
	k=${w%%:*}
	line="| ${w#*:} | ${R[gist,$k]} [${R[gist,$k,plan]}] |"
	for am in $OURS; do
		line="$line ${R[$am,$k]} ($(r2 "${R[$am,$k]}" "${R[gist,$k]}")×) [${R[$am,$k,plan]}] |"
	done
	echo "$line"
done
SZ="size:index size, INCLUDE (id, name)"
BL="build:CREATE INDEX ms, INCLUDE (id, name)"
if [ "$SIZES" = 1 ]; then
	SZ="$SZ|size1:index size, INCLUDE (id)|size0:index size, no INCLUDE"
	BL="$BL|build1:CREATE INDEX ms, INCLUDE (id)|build0:CREATE INDEX ms, no INCLUDE"
fi
IFS='|' read -ra SZA <<<"$SZ"
IFS='|' read -ra BLA <<<"$BL"
for k in "${SZA[@]}"; do
	kk=${k%%:*}
	line="| ${k#*:} | $(mb "${R[gist,$kk]}") |"
	for am in $OURS; do
		line="$line $(mb "${R[$am,$kk]}") ($(r2 "${R[$am,$kk]}" "${R[gist,$kk]}")×) |"
	done
	echo "$line"
done
for k in "${BLA[@]}"; do
	kk=${k%%:*}
	line="| ${k#*:} | ${R[gist,$kk]} |"
	for am in $OURS; do
		line="$line ${R[$am,$kk]} ($(r2 "${R[$am,$kk]}" "${R[gist,$kk]}")×) |"
	done
	echo "$line"
done
