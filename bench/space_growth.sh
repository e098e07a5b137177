#!/usr/bin/env bash
# space_growth.sh — how an index's files grow under inserts, every access
# method next to GiST, on a fresh cluster of its own (issue 21, item 3):
#
#   a table of ROWS random points, CREATE INDEX (size fresh); INSERTS more
#   rows in statements of BATCH rows, then CHECKPOINT (and, for ours,
#   hybrid_index_checkpoint: the free tails of the tier files are cut at
#   index checkpoints) (size after inserts); REINDEX (size rebuilt).  The
#   target: (after inserts ÷ rebuilt) at most 1.2× GiST's same ratio.
#
# Sizes are pg_relation_size (for ours: tier files, map and log, see docs/operations.md
# "Sizes"); they do not depend on timing, so one run suffices.
#
# usage: bench/space_growth.sh [rows=1000000] [inserts=250000] [batch=5000]
# Writes bench/results/space-growth.md.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROWS=${1:-1000000}
INSERTS=${2:-250000}
BATCH=${3:-5000}
PORT=${HI_BENCH_PORT:-56350}
DATA=/tmp/hi_space_growth.$PORT
OUT=bench/results/space-growth.md
VARIANTS=${HI_VARIANTS:-"gist hyrtree efind lbgrid hgrid"}

source bench/lib.sh
bench_cluster "shared_buffers = 256MB
max_wal_size = 8GB
maintenance_work_mem = 256MB"

declare -A FRESH AFTER REBUILT SECS
for v in $VARIANTS; do
	q "DROP TABLE IF EXISTS g; CREATE TABLE g (id bigserial, geom geometry);
	   SELECT setseed(0.42);
	   INSERT INTO g (geom) SELECT ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, $ROWS)"
	q "CREATE INDEX g_idx ON g USING $v (geom)"
	q "CHECKPOINT"
	FRESH[$v]=$(q "SELECT pg_relation_size('g_idx')")
	t0=$(date +%s.%N)
	for b in $(seq 1 $((INSERTS / BATCH))); do
		q "INSERT INTO g (geom) SELECT ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, $BATCH)"
	done
	t1=$(date +%s.%N)
	SECS[$v]=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.1f", b - a}')
	[ "$v" != gist ] && q "SELECT hybrid_index_checkpoint('g_idx')" >/dev/null
	q "CHECKPOINT"
	AFTER[$v]=$(q "SELECT pg_relation_size('g_idx')")
	q "REINDEX INDEX g_idx"
	q "CHECKPOINT"
	REBUILT[$v]=$(q "SELECT pg_relation_size('g_idx')")
	echo "space_growth: $v fresh ${FRESH[$v]} after ${AFTER[$v]} rebuilt ${REBUILT[$v]} (${SECS[$v]} s of inserts)" >&2
done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", (b > 0) ? a / b : 0}'; }
{
	echo "# space-growth: index size under inserts"
	echo
	echo "Command: \`bench/space_growth.sh $ROWS $INSERTS $BATCH\` — $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD)."
	echo "Machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GB; PostgreSQL 15, hybrid_index defaults, device emulation off."
	echo "A table of $ROWS uniform random points; CREATE INDEX; $INSERTS more points inserted in statements of $BATCH rows;"
	echo "CHECKPOINT (for ours also \`hybrid_index_checkpoint\`); REINDEX. Sizes are \`pg_relation_size\` (for ours the index's files)."
	echo
	echo "| index | fresh | after inserts | rebuilt (REINDEX) | after ÷ rebuilt | ÷ GiST's ratio | after ÷ GiST's after |"
	echo "|---|---:|---:|---:|---:|---:|---:|"
	g=$(ratio "${AFTER[gist]}" "${REBUILT[gist]}")
	for v in $VARIANTS; do
		r=$(ratio "${AFTER[$v]}" "${REBUILT[$v]}")
		echo "| $v | $(numfmt --to=iec "${FRESH[$v]}") | $(numfmt --to=iec "${AFTER[$v]}") | $(numfmt --to=iec "${REBUILT[$v]}") | $r | $(ratio "$r" "$g") | $(ratio "${AFTER[$v]}" "${AFTER[gist]}") |"
	done
	echo
	echo "## Target (issue 21, item 3)"
	echo
	echo "Computed from the table by the script: (after ÷ rebuilt) ≤ 1.2 × GiST's ($g)."
	echo
	for v in $VARIANTS; do
		[ "$v" = gist ] && continue
		r=$(ratio "${AFTER[$v]}" "${REBUILT[$v]}")
		m=$(awk -v r="$r" -v g="$g" 'BEGIN {print (r <= 1.2 * g) ? "met" : "**missed**"}')
		echo "- $v: $r ÷ $g = $(ratio "$r" "$g")× — $m."
	done
} >"$OUT"
cat "$OUT"
