#!/usr/bin/env bash
# insert_budget.sh — SQL insert throughput when the index is much larger than
# its cache (issue 21, item 2): every access method next to GiST, on a fresh
# cluster of its own.
#
# Memory: GiST gets shared_buffers = BUDGET; our indexes get the same total,
# half as shared_buffers (the table's pages) and half as the shared page
# cache (hybrid_index.cache_size), so each index's cache is at most BUDGET
# and the index is at least 10x that (checked and printed).  Our tier files
# are read with O_DIRECT (hybrid_index.direct_io = on, not the default),
# past the OS cache, so that no memory beyond the budget holds our pages;
# GiST's pages come through it.
#
# For each index: CREATE INDEX on ROWS uniform random points, then REPS
# times: CHECKPOINT, server stop, OS page cache dropped, start, one
# INSERT ... SELECT of BATCH new uniform random points (a new batch each
# time), timed.  Rows per second are the medians over the reps; the target
# is eFIND and LB-Grid at least 2x GiST's.  After the last batch the index
# must answer a window query as a sequential scan does.
#
# usage: bench/insert_budget.sh [rows=6000000] [batch=50000] [reps=3] [budget_mb=16]
# Writes bench/results/insert-budget.md.  Run it alone on a quiet machine, as
# root (dropping the OS cache needs root; without it the report says so).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROWS=${1:-6000000}
BATCH=${2:-50000}
REPS=${3:-3}
BUDGET=${4:-16}
PORT=${HI_BENCH_PORT:-56370}
DATA=/tmp/hi_insert_budget.$PORT
OUT=${HI_BENCH_OUT:-bench/results/insert-budget.md}
VARIANTS=${HI_VARIANTS:-"gist efind lbgrid hyrtree hgrid"}

source bench/lib.sh
# (bench_cluster gives the page cache 8 kB frames: with the tests' 32 kB an
# 8 MB cache would hold only 256 pages)
bench_cluster "max_wal_size = 16GB
hybrid_index.direct_io = on
checkpoint_timeout = 1h
wal_buffers = 16MB
maintenance_work_mem = 1GB
max_parallel_maintenance_workers = 0
synchronous_commit = on"
q "CREATE TABLE p (id bigint, geom geometry);
   SELECT setseed(0.23);
   INSERT INTO p SELECT i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, $ROWS) i;
   CREATE TABLE s (batch int, id bigint, geom geometry);
   INSERT INTO s SELECT 1 + (i - 1) / $BATCH, $ROWS + i, ST_MakePoint(random() * 1000, random() * 1000)
   FROM generate_series(1, $REPS * $BATCH) i"
q "VACUUM ANALYZE p"
q "VACUUM ANALYZE s"

DROPPED=yes
# stop, drop the OS page cache, start: the next statement finds nothing cached
cold_restart() {
	q "CHECKPOINT"
	bench_server stop
	sync
	if ! { echo 3 >/proc/sys/vm/drop_caches; } 2>/dev/null; then
		DROPPED=no
	fi
	bench_server start
}

# memory of one variant: GiST all in shared_buffers, ours split
set_memory() {
	local v=$1
	if [ "$v" = gist ]; then
		q "ALTER SYSTEM SET shared_buffers = '${BUDGET}MB'"
		q "ALTER SYSTEM SET hybrid_index.cache_size = '1MB'"
	else
		q "ALTER SYSTEM SET shared_buffers = '$((BUDGET / 2))MB'"
		q "ALTER SYSTEM SET hybrid_index.cache_size = '$((BUDGET / 2))MB'"
	fi
}

index_bytes() {
	if [ "$1" = gist ]; then
		q "SELECT pg_relation_size('p_idx')"
	else
		q "SELECT sum(bytes) FROM hybrid_index_files('p_idx')"
	fi
}

# reads of index pages the statement could not find in memory: GiST's
# shared_buffers misses (some of them OS cache hits) or our cache's misses
index_reads() {
	if [ "$1" = gist ]; then
		q "SELECT idx_blks_read FROM pg_statio_user_indexes WHERE indexrelname = 'p_idx'"
	else
		q "SELECT sum(reads) FROM hybrid_index_stats('p_idx')"
	fi
}

# reads the device under the data directory completed (/proc/diskstats):
# what each INSERT really read, OS cache hits not counted
DEV=$(basename "$(findmnt -no SOURCE -T "$DATA" 2>/dev/null || true)")
device_reads() {
	awk -v d="$DEV" '$3 == d {print $4; found = 1} END {if (!found) print 0}' /proc/diskstats
}


declare -A RPS SIZE SIZEX READS DREADS OK
for v in $VARIANTS; do
	set_memory "$v"
	q "DROP INDEX IF EXISTS p_idx; DELETE FROM p WHERE id > $ROWS"
	q "VACUUM p"
	cold_restart
	q "CREATE INDEX p_idx ON p USING $v (geom)"
	[ "$v" = gist ] || q "SELECT hybrid_index_checkpoint('p_idx')" >/dev/null
	SIZE[$v]=$(index_bytes "$v")
	SIZEX[$v]=$(awk -v b="${SIZE[$v]}" -v m="$BUDGET" 'BEGIN {printf "%.1f", b / (m * 1048576)}')
	r_list=()
	d_list=()
	dev_list=()
	for r in $(seq 1 "$REPS"); do
		cold_restart
		before=$(index_reads "$v")
		dev0=$(device_reads)
		ms=$(psql -XAtq -v ON_ERROR_STOP=1 -c '\timing on' \
			-c "INSERT INTO p SELECT id, geom FROM s WHERE batch = $r" |
			sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p')
		dev1=$(device_reads)
		after=$(index_reads "$v")
		dev_list+=("$((dev1 - dev0))")
		rps=$(awk -v ms="$ms" -v n="$BATCH" 'BEGIN {printf "%.0f", n / (ms / 1000)}')
		r_list+=("$rps")
		d_list+=("$((after - before))")
		echo "insert_budget: $v rep $r: $ms ms, $rps rows/s, $((after - before)) index page reads, $((dev1 - dev0)) device reads" >&2
	done
	RPS[$v]=$(printf '%s\n' "${r_list[@]}" | median)
	READS[$v]=$(printf '%s\n' "${d_list[@]}" | median)
	DREADS[$v]=$(printf '%s\n' "${dev_list[@]}" | median)
	# the index answers a window as the table does, after the inserts
	got=$(psql -XAtq -v ON_ERROR_STOP=1 -c "SET enable_seqscan = off; SET enable_bitmapscan = off" \
		-c "SELECT count(*) FROM p WHERE geom && ST_MakeEnvelope(100, 100, 160, 130)")
	want=$(psql -XAtq -v ON_ERROR_STOP=1 -c "SET enable_indexscan = off; SET enable_bitmapscan = off" \
		-c "SELECT count(*) FROM p WHERE geom && ST_MakeEnvelope(100, 100, 160, 130)")
	[ "$got" = "$want" ] && OK[$v]=yes || OK[$v]="**no** ($got rows, the table has $want)"
	echo "insert_budget: $v: median ${RPS[$v]} rows/s, index ${SIZEX[$v]}x the budget, window ${OK[$v]}" >&2
done

mb() { awk -v b="$1" 'BEGIN {printf "%.0f", b / 1048576}'; }
KEEP=$(sed -n '/^## Where the time goes/,$p' "$OUT" 2>/dev/null || true)
{
	echo "# insert-budget: SQL inserts into an index much larger than its cache"
	echo
	echo "Command: \`bench/insert_budget.sh $ROWS $BATCH $REPS $BUDGET\` — $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD)."
	echo "Machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GB; PostgreSQL 15, device emulation off, no memory cgroup."
	echo "Memory: GiST \`shared_buffers = ${BUDGET}MB\`; ours \`shared_buffers = $((BUDGET / 2))MB\` plus"
	echo "\`hybrid_index.cache_size = $((BUDGET / 2))MB\` of 8 kB frames, defaults otherwise (lbgrid's and hgrid's own buffers and"
	echo "efind's 512 kB buffer come on top, as they do by default). A table of $ROWS uniform random points;"
	echo "each of $REPS repetitions: CHECKPOINT, server stop, OS page cache dropped ($DROPPED), start, one"
	echo "\`INSERT … SELECT\` of $BATCH new uniform random points (a new batch each time, so the index grows by"
	echo "$((REPS * BATCH)) rows in all). Our tier files are read past the OS cache (\`hybrid_index.direct_io = on\`, O_DIRECT); GiST's pages"
	echo "that fall out of \`shared_buffers\` may still be in the OS cache filled during the statement."
	echo
	echo "Index page reads: pages the index did not find in its memory (GiST: \`shared_buffers\` misses, some of"
	echo "them OS cache hits; ours: page cache misses, each a device read). Device reads: reads the device"
	echo "\`$DEV\` completed during the INSERT (\`/proc/diskstats\`; the table's pages and the source rows included)."
	echo
	echo "| index | index size | ÷ budget | rows/s (median) | ÷ GiST's | index page reads per INSERT | device reads per INSERT | window after the inserts = seq scan |"
	echo "|---|---:|---:|---:|---:|---:|---:|---|"
	for v in $VARIANTS; do
		echo "| $v | $(mb "${SIZE[$v]}") MB | ${SIZEX[$v]} | ${RPS[$v]} | $(r2 "${RPS[$v]}" "${RPS[gist]:-0}") | ${READS[$v]} | ${DREADS[$v]} | ${OK[$v]} |"
	done
	echo
	echo "## Targets (issue 21, item 2)"
	echo
	echo "Computed from the table by the script: eFIND and LB-Grid at least 2× GiST's SQL insert throughput"
	echo "with the index at least 10× its cache budget."
	echo
	for v in efind lbgrid; do
		case " $VARIANTS " in *" $v "*) ;; *) continue ;; esac
		x=$(r2 "${RPS[$v]}" "${RPS[gist]:-0}")
		big=$(awk -v s="${SIZEX[$v]}" 'BEGIN {print (s >= 10) ? "yes" : "no"}')
		met=$(awk -v x="$x" 'BEGIN {print (x >= 2) ? "met" : "**missed**"}')
		echo "- $v: ${x}× GiST's rows/s: $met (index ${SIZEX[$v]}× the budget$([ "$big" = yes ] || echo ', **below the 10× the target asks for**'))."
	done
	if [ -n "$KEEP" ]; then
		echo
		echo "$KEEP"
	fi
} >"$OUT"
echo "wrote $OUT" >&2
