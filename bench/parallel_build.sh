#!/usr/bin/env bash
# parallel_build.sh — CREATE INDEX serially and with one parallel worker
# plus the leader, every access method next to GiST (which PostgreSQL 15
# builds serially), on a fresh cluster of its own (issue 21, item 4).
#
# A table of ROWS uniform random points; each build is timed REPS times
# (median), alternating serial and parallel, with each maintenance_work_mem
# of MEMS (PostgreSQL's default 64MB first: what a user gets, where both
# processes spill; then 1GB, where everything fits); the target is
# parallel ÷ serial ≤ 1 / 1.5 with one worker on this 2-core machine.
#
# usage: bench/parallel_build.sh [rows=5000000] [reps=3] [mems="64MB 1GB"]
# Writes bench/results/parallel-build.md.  Run it alone on a quiet machine.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROWS=${1:-5000000}
REPS=${2:-3}
MEMS=${3:-"64MB 1GB"}
PORT=${HI_BENCH_PORT:-56360}
DATA=/tmp/hi_parallel_build.$PORT
OUT=bench/results/parallel-build.md
VARIANTS=${HI_VARIANTS:-"gist hyrtree efind lbgrid hgrid"}

source bench/lib.sh
bench_cluster "shared_buffers = 1GB
max_wal_size = 16GB
max_parallel_maintenance_workers = 1"
q "CREATE TABLE p (id bigint, geom geometry);
   SELECT setseed(0.17);
   INSERT INTO p SELECT i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, $ROWS) i"
q "VACUUM ANALYZE p"
q "CHECKPOINT"
TABLE_MB=$(q "SELECT pg_relation_size('p') / 1048576")

# seconds of one CREATE INDEX with the given number of workers (the
# table's parallel_workers: 0 is serial)
build() {
	local v=$1 w=$2 m=$3
	q "DROP INDEX IF EXISTS p_idx; ALTER TABLE p SET (parallel_workers = $w); CHECKPOINT"
	psql -XAtq -v ON_ERROR_STOP=1 -c "SET maintenance_work_mem = '$m'" -c '\timing on' \
		-c "CREATE INDEX p_idx ON p USING $v (geom)" |
		sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | awk '{printf "%.2f\n", $1 / 1000}'
}

declare -A SER PAR
for m in $MEMS; do
	for v in $VARIANTS; do
		s_list=()
		p_list=()
		for r in $(seq 1 "$REPS"); do
			s=$(build "$v" 0 "$m")
			s_list+=("$s")
			if [ "$v" != gist ]; then
				p=$(build "$v" 1 "$m")
				p_list+=("$p")
			else
				p=-
			fi
			echo "parallel_build: $m $v rep $r: serial $s s, parallel $p s" >&2
		done
		SER[$m,$v]=$(printf '%s\n' "${s_list[@]}" | median)
		[ "$v" != gist ] && PAR[$m,$v]=$(printf '%s\n' "${p_list[@]}" | median)
	done
done

# a hand-written section at the end (profiles) is kept
KEEP=$(sed -n '/^## Where the time goes/,$p' "$OUT" 2>/dev/null || true)
{
	echo "# parallel-build: CREATE INDEX with a parallel worker"
	echo
	echo "Command: \`bench/parallel_build.sh $ROWS $REPS \"$MEMS\"\` — $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD)."
	echo "Machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GB; PostgreSQL 15, \`shared_buffers = 1GB\`,"
	echo "hybrid_index defaults, device emulation off. A table of $ROWS uniform random points"
	echo "($TABLE_MB MB, in the OS cache). Medians of $REPS builds; parallel = one worker plus the leader"
	echo "(\`max_parallel_maintenance_workers = 1\`, the table's \`parallel_workers\`), which share"
	echo "\`maintenance_work_mem\` (with 64MB, PostgreSQL's default, both processes' entries spill to temporary files);"
	echo "GiST builds serially in PostgreSQL 15."
	echo
	echo "| maintenance_work_mem | index | serial | parallel | serial ÷ parallel | serial ÷ GiST's | parallel ÷ GiST's |"
	echo "|---|---|---:|---:|---:|---:|---:|"
	for m in $MEMS; do
		echo "| $m | gist | ${SER[$m,gist]} s | – | – | 1.00 | – |"
		for v in $VARIANTS; do
			[ "$v" = gist ] && continue
			echo "| $m | $v | ${SER[$m,$v]} s | ${PAR[$m,$v]} s | $(r2 "${SER[$m,$v]}" "${PAR[$m,$v]}") | $(r2 "${SER[$m,$v]}" "${SER[$m,gist]}") | $(r2 "${PAR[$m,$v]}" "${SER[$m,gist]}") |"
		done
	done
	echo
	echo "## Targets (issue 21)"
	echo
	echo "Computed from the table by the script: parallel at least 1.5× faster than serial with one worker;"
	echo "serial ≤ 0.5× GiST's; parallel ≤ 0.35× GiST's."
	echo
	for m in $MEMS; do
		for v in $VARIANTS; do
			[ "$v" = gist ] && continue
			sp=$(r2 "${SER[$m,$v]}" "${PAR[$m,$v]}")
			sg=$(r2 "${SER[$m,$v]}" "${SER[$m,gist]}")
			pg=$(r2 "${PAR[$m,$v]}" "${SER[$m,gist]}")
			echo "- $m, $v: speedup ${sp}× $(awk -v r="$sp" 'BEGIN {print (r >= 1.5) ? "met" : "**missed**"}');" \
				"serial ${sg}× GiST $(awk -v r="$sg" 'BEGIN {print (r <= 0.5) ? "met" : "**missed**"}');" \
				"parallel ${pg}× GiST $(awk -v r="$pg" 'BEGIN {print (r <= 0.35) ? "met" : "**missed**"}')."
		done
	done
	if [ -n "$KEEP" ]; then
		echo
		printf '%s\n' "$KEEP"
	fi
} >"$OUT"
cat "$OUT"
