#!/usr/bin/env bash
# commit_cost.sh — what durability costs a write, every access method next to
# GiST and no index, on a fresh cluster of its own (issue 18's benchmark):
#
#   1. pgbench, 4 clients, one single-row INSERT per transaction,
#      synchronous_commit = on: transactions per second (median of REPS runs
#      of SECONDS each) and WAL bytes per inserted row;
#   2. WAL bytes written by CREATE INDEX, next to the index's size;
#   3. 100k rows inserted one statement at a time in 1,000-row transactions,
#      a clean restart (pg_ctl restart -m fast), then the first index query:
#      its time (median of REPS runs);
#   4. the insertions alone: 30,000 single-row INSERTs in one transaction
#      (a PL/pgSQL loop, no commit per row), so that the index's own CPU per
#      row shows without the commits around it (median of REPS runs).
#
# usage: bench/commit_cost.sh [rows=100000] [reps=3] [seconds=15]
# Writes bench/results/commit-cost.md.  Run it alone on a quiet machine.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROWS=${1:-100000}
REPS=${2:-3}
SECONDS_PER_RUN=${3:-15}
PORT=${HI_BENCH_PORT:-56310}
DATA=/tmp/hi_commit_cost.$PORT
OUT=bench/results/commit-cost.md
VARIANTS="none gist hyrtree efind lbgrid hgrid"

source bench/lib.sh
bench_cluster "shared_buffers = 256MB
max_wal_size = 4GB
synchronous_commit = on
fsync = on"


using() {
	case $1 in
	gist) echo "USING gist (geom)" ;;
	*) echo "USING $1 (geom)" ;;
	esac
}

fresh_table() {
	local v=$1
	q "DROP TABLE IF EXISTS w; CREATE TABLE w (id bigserial, geom geometry);
	   INSERT INTO w (geom) SELECT ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, $ROWS)"
	if [ "$v" != none ]; then
		local before after
		before=$(q "CHECKPOINT; SELECT pg_current_wal_insert_lsn()")
		q "CREATE INDEX w_idx ON w $(using "$v")"
		after=$(q "SELECT pg_current_wal_insert_lsn()")
		BUILD_WAL=$(q "SELECT pg_wal_lsn_diff('$after', '$before')")
		if [ "$v" = gist ]; then
			INDEX_SIZE=$(q "SELECT pg_relation_size('w_idx')")
		else
			INDEX_SIZE=$(q "SELECT sum(bytes) FROM hybrid_index_files('w_idx')")
		fi
	else
		BUILD_WAL=0
		INDEX_SIZE=0
	fi
	q "CHECKPOINT"
}

script=$(mktemp /tmp/hi_commit_cost.XXXXXX.sql)
chmod 644 "$script"
echo "INSERT INTO w (geom) VALUES (ST_MakePoint(random() * 1000, random() * 1000));" >"$script"

declare -A TPS WALROW BWAL ISIZE FIRST TPSL WALL
# the variants take turns within each repetition, so that a machine whose
# speed drifts during the run favours none of them
for r in $(seq 1 "$REPS"); do
	for v in $VARIANTS; do
		fresh_table "$v"
		BWAL[$v]=$BUILD_WAL
		ISIZE[$v]=$INDEX_SIZE
		n0=$(q "SELECT count(*) FROM w")
		l0=$(q "SELECT pg_current_wal_insert_lsn()")
		tps=$(pgbench -n -c 4 -j 2 -T "$SECONDS_PER_RUN" -f "$script" 2>/dev/null |
			sed -n 's/^tps = \([0-9.]*\).*/\1/p' | tail -1)
		l1=$(q "SELECT pg_current_wal_insert_lsn()")
		n1=$(q "SELECT count(*) FROM w")
		TPSL[$v]="${TPSL[$v]:-} $tps"
		WALL[$v]="${WALL[$v]:-} $(q "SELECT round(pg_wal_lsn_diff('$l1', '$l0') / greatest($n1 - $n0, 1))")"
		echo "commit_cost: $v rep $r: $tps tps" >&2
	done
done
# the insertions alone, in turns too
declare -A LOOP LOOPL
for r in $(seq 1 "$REPS"); do
	for v in $VARIANTS; do
		fresh_table "$v"
		ms=$(psql -XAtq -c '\timing on' -c "DO \$\$ BEGIN FOR i IN 1..30000 LOOP
			INSERT INTO w (geom) VALUES (ST_MakePoint(random() * 1000, random() * 1000)); END LOOP; END \$\$" |
			sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | tail -1)
		LOOPL[$v]="${LOOPL[$v]:-} $ms"
		echo "commit_cost: $v rep $r: 30k inserts in one transaction $ms ms" >&2
	done
done

for v in $VARIANTS; do
	TPS[$v]=$(printf '%s\n' ${TPSL[$v]} | median)
	LOOP[$v]=$(printf '%s\n' ${LOOPL[$v]} | median)
	WALROW[$v]=$(printf '%s\n' ${WALL[$v]} | median)

	# the first query after inserts and a clean restart
	if [ "$v" != none ]; then
		first_list=()
		for r in $(seq 1 "$REPS"); do
			q "DROP TABLE IF EXISTS f; CREATE TABLE f (id bigserial, geom geometry);
			   INSERT INTO f (geom) SELECT ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 1000);
			   CREATE INDEX f_idx ON f $(using "$v")"
			for b in $(seq 1 $((ROWS / 1000))); do
				q "INSERT INTO f (geom) SELECT ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 1000)"
			done
			bench_server stop
			bench_server start
			ms=$(psql -XAtq -c '\timing on' -c "SET enable_seqscan = off; SELECT count(*) FROM f WHERE geom && ST_MakeEnvelope(100, 100, 110, 110)" |
				sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | tail -1)
			first_list+=("$ms")
			echo "commit_cost: $v first query after restart, rep $r: $ms ms" >&2
		done
		FIRST[$v]=$(printf '%s\n' "${first_list[@]}" | median)
	fi
done
rm -f "$script"

# a hand-written section at the end (history, measured with other scripts) is kept
KEEP=$(sed -n '/^## One client.s commit latency/,$p' "$OUT" 2>/dev/null || true)
{
	echo "# commit-cost: what durability costs a write"
	echo
	echo "Command: \`bench/commit_cost.sh $ROWS $REPS $SECONDS_PER_RUN\` — $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD)."
	echo "Machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GB; PostgreSQL 15, \`fsync = on\`,"
	echo "\`synchronous_commit = on\`, \`shared_buffers = 256MB\`, hybrid_index defaults; device emulation off."
	echo "Medians of $REPS runs (the variants take turns within each repetition); each pgbench run: 4 clients, ${SECONDS_PER_RUN} s, one single-row INSERT per transaction"
	echo "into a table of $ROWS rows with the index. The insertions alone: a PL/pgSQL loop of 30,000 single-row INSERTs"
	echo "in one transaction into a fresh table of $ROWS rows with the index (the table's heap and WAL records, no commit per row)."
	echo
	echo "| index | TPS | ÷ GiST | 30k INSERTs in one transaction | ÷ GiST | WAL bytes per row | CREATE INDEX WAL | index size | WAL ÷ size | first query after $ROWS inserts and a clean restart |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
	for v in $VARIANTS; do
		TPS[$v]=$(printf '%.0f' "${TPS[$v]}")
		ratio=$(awk -v a="${TPS[$v]}" -v b="${TPS[gist]}" 'BEGIN {printf "%.2f", a / b}')
		lr=$(r2 "${LOOP[$v]}" "${LOOP[gist]}")
		if [ "$v" = none ]; then
			echo "| no index | ${TPS[$v]} | $ratio | ${LOOP[$v]} ms | $lr | ${WALROW[$v]} | – | – | – | – |"
		else
			wr=$(awk -v a="${BWAL[$v]}" -v b="${ISIZE[$v]}" 'BEGIN {printf "%.2f", (b > 0) ? a / b : 0}')
			echo "| $v | ${TPS[$v]} | $ratio | ${LOOP[$v]} ms | $lr | ${WALROW[$v]} | $(numfmt --to=iec "${BWAL[$v]}") | $(numfmt --to=iec "${ISIZE[$v]}") | $wr | ${FIRST[$v]} ms |"
		fi
	done
	echo
	echo "## Targets (issue 18)"
	echo
	echo "Computed from the table above by the script."
	echo
	for v in hyrtree efind lbgrid hgrid; do
		tr=$(awk -v a="${TPS[$v]}" -v b="${TPS[gist]}" 'BEGIN {printf "%.2f", a / b}')
		tm=$(awk -v r="$tr" 'BEGIN {print (r >= 0.9) ? "met" : "**missed**"}')
		fm=$(awk -v f="${FIRST[$v]}" 'BEGIN {print (f <= 100) ? "met" : "**missed**"}')
		wr=$(awk -v a="${BWAL[$v]}" -v b="${ISIZE[$v]}" 'BEGIN {printf "%.2f", (b > 0) ? a / b : 0}')
		wm=$(awk -v r="$wr" 'BEGIN {print (r <= 1.5) ? "met" : "**missed**"}')
		echo "- $v: TPS ≥ 0.9× GiST's $tm (${tr}×); first query after a clean restart ≤ 100 ms $fm (${FIRST[$v]} ms, GiST ${FIRST[gist]} ms); build WAL ≤ 1.5× the index's size $wm (${wr}×)."
	done
	if [ -n "$KEEP" ]; then
		echo
		printf '%s\n' "$KEEP"
	fi
} >"$OUT"
cat "$OUT"
