# bench/lib.sh — what the small benchmark scripts share.  Source it from the
# repository's root after setting DATA (a data directory under /tmp) and
# PORT:
#
#   bench_cluster "<extra postgresql.conf lines>"
#       a fresh cluster of the script's own (tools/pgcluster.sh), stopped
#       when the script exits, with PostGIS and hybrid_index created and
#       PGHOST/PGPORT/PGUSER/PGDATABASE exported; the page cache's frames
#       are the product's default 8 kB (pgcluster.sh allows the tests'
#       32 kB pages), unless the extra lines say otherwise;
#   bench_server stop|start
#       stops (fast) or starts that cluster;
#   q "<sql>"       runs it, unaligned output, stops the script on an error;
#   median          the median of the numbers on stdin;
#   r2 a b          a ÷ b with two decimals (0 when b is 0).

q() { psql -XAtq -v ON_ERROR_STOP=1 -c "$1"; }

bench_cluster() {
	bash tools/pgcluster.sh stop "$DATA" "$PORT" >/dev/null 2>&1 || true
	rm -rf "$DATA"
	HI_EXTRA_CONF="hybrid_index.max_page_size = 8192
$1" bash tools/pgcluster.sh start "$DATA" "$PORT" >/dev/null
	trap 'bash tools/pgcluster.sh stop "$DATA" "$PORT" >/dev/null 2>&1 || true' EXIT
	export PGHOST=/tmp/hybrid_index_sock.$PORT PGPORT=$PORT PGUSER=postgres PGDATABASE=postgres
	q "CREATE EXTENSION IF NOT EXISTS postgis; CREATE EXTENSION IF NOT EXISTS hybrid_index"
}

bench_server() { bash tools/pgcluster.sh "$1" "$DATA" "$PORT" >/dev/null; }

median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

# The median of $REPS runs of workload $1 after two warm-up runs; run_ms
# (the calling script's) prints one run's time in ms
warm_median() {
	local runs=() rep
	run_ms "$1" >/dev/null
	run_ms "$1" >/dev/null
	for rep in $(seq 1 "$REPS"); do
		runs+=("$(run_ms "$1")")
	done
	printf '%s\n' "${runs[@]}" | median
}

r2() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", (b > 0) ? a / b : 0}'; }
