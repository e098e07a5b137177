#!/usr/bin/env bash
# many_partitions.sh — a table of many partitions indexed on the parent,
# our access methods next to GiST in the same run on the same data
# (issue 41).
#
#   bench/many_partitions.sh [partitions] [points] [reps]
#                                 (defaults 1000, 1000000, 3; as root)
#
# For each access method a table of `partitions` range partitions holding
# the same uniform points, and, each the median of `reps` runs:
#   build        CREATE INDEX on the parent (one index per partition)
#   window warm  a window query over all partitions (about 0.1 % of the
#                rows), the indexes loaded
#   knn warm     a 10-NN over all partitions (a Merge Append of index scans)
#   window first the same window, first statement after a server restart
#                (three restarts per run: the median of all of them)
#   knn first    the 10-NN, first statement after a restart (likewise)
#   drop         DROP TABLE of the parent with its partitions and indexes
# and once: the shared memory of hybrid_index (pg_shmem_allocations) and
# the file descriptors a backend holds after querying every partition
# (/proc).  Prints a Markdown table; ratios are ours ÷ GiST's medians.
# max_locks_per_transaction is raised for every access method alike
# (a statement over N partitions locks 2N relations).
set -euo pipefail
cd "$(dirname "$0")/.."
NPART=${1:-1000}
NPTS=${2:-1000000}
REPS=${3:-3}
# HI_BENCH_DATA: the data directory, e.g. on another file system
DATA=${HI_BENCH_DATA:-/tmp/hi_bench_parts}
PORT=${PORT:-56441}
. bench/lib.sh

# (DROP TABLE locks each partition, its index, TOAST table and TOAST index
# in one transaction, against max_locks × (max_connections 40 + the
# background processes): about 12 per partition is room enough)
locks=$(((NPART * 12) / 100 + 64))
# autovacuum off for every access method alike: the catalogs a DROP TABLE of
# thousands of partitions leaves bloated made a worker start right after
# some restarts and read from the disk beside the first statement, which
# then took up to half as long again (perf), whichever access method it was
bench_cluster "max_locks_per_transaction = $locks
shared_buffers = 256MB
hybrid_index.cache_size = 256MB
max_parallel_workers_per_gather = 0
jit = off
autovacuum = off"

ms() {
	# the server-side time of a statement, in ms (psql's \timing)
	psql -XAtq -v ON_ERROR_STOP=1 -c '\timing on' -c "$1" | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | tail -1
}

make_table() {
	local t=$1
	q "DROP TABLE IF EXISTS $t"
	q "CREATE TABLE $t (id bigint, geom geometry) PARTITION BY RANGE (id)"
	# partitions made 1,000 per transaction (each takes locks until its end)
	for from in $(seq 0 1000 $((NPART - 1))); do
		q "DO \$\$ BEGIN FOR k IN $from .. LEAST($from + 999, $NPART - 1) LOOP
		     EXECUTE format('CREATE TABLE ${t}_%s PARTITION OF $t FOR VALUES FROM (%s) TO (%s)', k, k::bigint * $NPTS / $NPART, (k + 1)::bigint * $NPTS / $NPART);
		   END LOOP; END \$\$"
	done
	q "INSERT INTO $t SELECT id, geom FROM pts"
	q "VACUUM ANALYZE $t"
}

q "SELECT setseed(0.5); CREATE TABLE pts AS SELECT i::bigint AS id, ST_MakePoint(random() * 1000, random() * 1000) AS geom FROM generate_series(0, $NPTS - 1) i"
WIN="SELECT count(*) FROM t WHERE geom && ST_MakeEnvelope(500, 500, 531.6, 531.6)"
KNN="SELECT id FROM t ORDER BY geom <-> ST_MakePoint(250, 750) LIMIT 10"

declare -A R V
AMS="gist hyrtree efind lbgrid hgrid"
# The access methods take turns within each repetition, in an order that
# rotates from one repetition to the next: a file system slows down file
# creation for minutes after many files were removed (this machine's ext4:
# the inode allocator skips recently deleted inodes), so running all of
# GiST's repetitions first, on a fresh directory, and ours after thousands
# of DROPs measured the order, not the access method.
set -- $AMS
NAMS=$#
for rep in $(seq 1 "$REPS"); do
	order=""
	for k in $(seq 0 $((NAMS - 1))); do
		i=$(( (k + rep - 1) % NAMS + 1 ))
		order="$order ${!i}"
	done
	for am in $order; do
		make_table t
		V[$am,build]+=" $(ms "CREATE INDEX t_geom_idx ON t USING $am (geom)")"
		q "ANALYZE t"
		for i in 1 2; do q "$WIN" >/dev/null; q "$KNN" >/dev/null; done
		V[$am,ww]+=" $(ms "$WIN")"
		V[$am,kw]+=" $(ms "$KNN")"
		# a first statement varies more than a warm one: three per run
		for i in 1 2 3; do
			bench_server stop; bench_server start
			V[$am,wf]+=" $(ms "$WIN")"
		done
		if [ "$rep" = 1 ]; then
			# dynamic shared memory (DSA segments: page tables, grid
			# states) once a new server queried every partition
			R[$am,dsm]=$(find /dev/shm -maxdepth 1 -name 'PostgreSQL.*' -user postgres -printf '%s\n' |
				awk '{s += $1} END {printf "%.1f MB", s / 1048576}')
		fi
		for i in 1 2 3; do
			bench_server stop; bench_server start
			V[$am,kf]+=" $(ms "$KNN")"
		done
		if [ "$rep" = 1 ] && [ "$am" != gist ]; then
			# descriptors of a backend that queried every partition
			R[$am,fds]=$(psql -XAtq -c "$WIN" -c "$KNN" \
				-c "SELECT count(*) FROM pg_ls_dir('/proc/' || pg_backend_pid() || '/fd') f" | tail -1)
		fi
		V[$am,drop]+=" $(ms "DROP TABLE t")"
		echo "many_partitions: $am, repetition $rep done" >&2
	done
done
for am in $AMS; do
	for k in build ww kw wf kf drop; do
		R[$am,$k]=$(printf '%s\n' ${V[$am,$k]} | median)
	done
done
# the registry (slots and what each layer keeps per slot) against the rest
# (page cache, DSA's first segment, spill and score tables): fixed sizes,
# nothing per idle index
reg=$(q "SELECT sum(allocated_size) FROM pg_shmem_allocations WHERE name IN ('hybrid_index root', 'hybrid_index slots', 'hybrid_index efind', 'hybrid_index grid registry', 'hybrid_index placement')")
rest=$(q "SELECT sum(allocated_size) FROM pg_shmem_allocations WHERE name LIKE 'hybrid_index%' AND name NOT IN ('hybrid_index root', 'hybrid_index slots', 'hybrid_index efind', 'hybrid_index grid registry', 'hybrid_index placement')")
mb() { awk -v b="$1" 'BEGIN {printf "%.1f MB", b / 1048576}'; }

echo "$NPART partitions, $NPTS points, medians of $REPS runs (ms; first after a restart: of $((3 * REPS)) restarts); ratio = ours ÷ GiST"
echo
echo "| workload | GiST ms | hyrtree | efind | lbgrid | hgrid |"
echo "|---|---:|---:|---:|---:|---:|"
for w in build:"CREATE INDEX on the parent" ww:"window, warm" kw:"10-NN, warm" \
	wf:"window, first after a restart" kf:"10-NN, first after a restart" drop:"DROP TABLE"; do
	k=${w%%:*}
	line="| ${w#*:} | ${R[gist,$k]} |"
	for am in hyrtree efind lbgrid hgrid; do
		line="$line ${R[$am,$k]} ($(r2 "${R[$am,$k]}" "${R[gist,$k]}")×) |"
	done
	echo "$line"
done
echo
echo "| | hyrtree | efind | lbgrid | hgrid |"
echo "|---|---:|---:|---:|---:|"
echo "| descriptors of a backend after querying all partitions | ${R[hyrtree,fds]} | ${R[efind,fds]} | ${R[lbgrid,fds]} | ${R[hgrid,fds]} |"
echo "| dynamic shared memory of the server after a first window over all partitions (GiST: ${R[gist,dsm]}) | ${R[hyrtree,dsm]} | ${R[efind,dsm]} | ${R[lbgrid,dsm]} | ${R[hgrid,dsm]} |"
echo
echo "Shared memory of hybrid_index (pg_shmem_allocations), fixed at start, whatever the number of"
echo "indexes: the registry of slots (max_locks_per_transaction = $locks; the slots, their hash"
echo "table and what the other layers keep per slot) $(mb "$reg"); everything else (the page cache"
echo "of 256 MB, the DSA area's first segment, spill and score tables) $(mb "$rest"). A loaded index"
echo "also holds its page table (and a grid its directory state; buffer frames only with a"
echo "buffer_size of its own) in the DSA area, in dynamic shared memory (table above); none once its"
echo "slot is given back."
