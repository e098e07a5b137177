#!/usr/bin/env bash
# direct_io.sh — queries right after a server restart and over new points,
# with the tier files buffered (hybrid_index.direct_io = off, the default)
# and with O_DIRECT, next to GiST, every access method at PostgreSQL's and
# our default memory settings (shared_buffers = 128MB,
# hybrid_index.cache_size = 128MB), on a fresh cluster of its own.
#
# A table of ROWS uniform random points (the indexes 150-200 MB at 5M: more
# than either cache).  For each index, built alone on the table, and each
# setting: REPS rounds of a server restart (the OS page cache kept), then
# three timed passes: "first" (KNN 10-NN queries and WINDOWS windows of
# 0.01 % of the extent, nothing in PostgreSQL's or our cache), "new" (the
# same numbers of other points and windows: the caches hold the first
# pass's pages) and "again" (the first pass's queries once more: warm).
# Each pass's time is the sum of its queries' (clock_timestamp in a DO
# block); medians over the rounds.  The first round after a switch of the
# setting is a round like the others: the OS cache then holds what the
# previous rounds read, as it would on a server that has been running.
#
# usage: bench/direct_io.sh [rows=5000000] [reps=3] [knn=500] [windows=200]
# Writes bench/results/direct-io.md.  Run it alone on a quiet machine.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROWS=${1:-5000000}
REPS=${2:-3}
KNN=${3:-500}
WINDOWS=${4:-200}
PORT=${HI_BENCH_PORT:-56380}
DATA=/tmp/hi_direct_io.$PORT
OUT=${HI_BENCH_OUT:-bench/results/direct-io.md}
VARIANTS=${HI_VARIANTS:-"gist hyrtree efind lbgrid hgrid"}

source bench/lib.sh
bench_cluster "shared_buffers = 128MB
hybrid_index.cache_size = 128MB
max_wal_size = 16GB"
q "CREATE TABLE p (id bigint, geom geometry);
   SELECT setseed(0.23);
   INSERT INTO p SELECT i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, $ROWS) i"
q "VACUUM ANALYZE p"
# query points and windows: set 0 for the first and the third pass, set 1 for the second
side=10    # 0.01 % of the 1000 x 1000 extent
q "CREATE TABLE qp (set int, qid int, pt geometry);
   CREATE TABLE qw (set int, qid int, box geometry);
   SELECT setseed(0.41);
   INSERT INTO qp SELECT s, i, ST_MakePoint(random() * 1000, random() * 1000)
     FROM generate_series(0, 1) s, generate_series(1, $KNN) i;
   INSERT INTO qw SELECT s, i, ST_MakeEnvelope(x, y, x + $side, y + $side)
     FROM generate_series(0, 1) s, generate_series(1, $WINDOWS) i,
          LATERAL (SELECT random() * (1000 - $side) AS x, random() * (1000 - $side) AS y OFFSET 0) r"
q "CHECKPOINT"
TABLE_MB=$(q "SELECT pg_relation_size('p') / 1048576")

# "knn_ms win_ms" of one pass over query set $1
pass() {
	psql -XAtq -v ON_ERROR_STOP=1 <<SQL 2>&1 | sed -n 's/^NOTICE: *//p'
SET enable_seqscan = off;
DO \$\$
DECLARE r record; t0 timestamptz; k float8 := 0; w float8 := 0; c bigint; s numeric;
BEGIN
  FOR r IN SELECT pt FROM qp WHERE set = $1 ORDER BY qid LOOP
    t0 := clock_timestamp();
    SELECT count(*), sum(id) INTO c, s FROM (SELECT id FROM p ORDER BY geom <-> r.pt LIMIT 10) n;
    k := k + extract(epoch FROM clock_timestamp() - t0) * 1000;
  END LOOP;
  FOR r IN SELECT box FROM qw WHERE set = $1 ORDER BY qid LOOP
    t0 := clock_timestamp();
    SELECT count(*), sum(id) INTO c, s FROM p WHERE geom && r.box;
    w := w + extract(epoch FROM clock_timestamp() - t0) * 1000;
  END LOOP;
  RAISE NOTICE '% %', round(k::numeric, 1), round(w::numeric, 1);
END \$\$;
SQL
}

# one pass's "knn_ms win_ms", or stop the script
checked_pass() {
	local out
	out=$(pass "$1")
	if [ "$(wc -w <<<"$out")" != 2 ]; then
		echo "direct_io: a pass over query set $1 returned \"$out\"" >&2
		return 1
	fi
	echo "$out"
}

# the medians of the columns of the lines of numbers in $1
col_medians() {
	local c out=()
	for c in $(seq 1 "$(head -n 1 <<<"$1" | wc -w)"); do
		out+=("$(awk -v c="$c" '{print $c}' <<<"$1" | median)")
	done
	echo "${out[*]}"
}

# GiST does not read our setting: one of them is enough
settings_for() { if [ "$1" = gist ]; then echo off; else echo "off on"; fi; }

declare -A RES
declare -A SIZE
for v in $VARIANTS; do
	q "DROP INDEX IF EXISTS p_idx"
	q "CREATE INDEX p_idx ON p USING $v (geom)"
	q "CHECKPOINT"
	if [ "$v" = gist ]; then
		SIZE[$v]=$(q "SELECT round(pg_relation_size('p_idx') / 1048576.0)")
	else
		SIZE[$v]=$(q "SELECT round(sum(bytes) / 1048576.0) FROM hybrid_index_files('p_idx') AS f(tier, path, bytes)
		              WHERE tier IN ('flash', 'optane')")
	fi
	for d in $(settings_for "$v"); do
		q "ALTER SYSTEM SET hybrid_index.direct_io = $d"
		rows=""
		for r in $(seq 1 "$REPS"); do
			bench_server stop
			bench_server start
			first=$(checked_pass 0)
			new=$(checked_pass 1)
			again=$(checked_pass 0)
			echo "direct_io: $v direct_io=$d round $r: first $first ms, new $new ms, again $again ms (10-NN, windows)" >&2
			rows+="$first $new $again"$'\n'
		done
		RES[$v,$d]=$(col_medians "${rows%$'\n'}")
	done
	q "ALTER SYSTEM RESET hybrid_index.direct_io"
done
q "DROP INDEX IF EXISTS p_idx"

read -r g_fk g_fw g_nk g_nw g_ak g_aw <<<"${RES[gist,off]:-0 0 0 0 0 0}"
{
	echo "# direct-io: queries after a restart, buffered tier files against O_DIRECT"
	echo
	echo "Command: \`bench/direct_io.sh $ROWS $REPS $KNN $WINDOWS\` — $(date -u '+%Y-%m-%d %H:%M') UTC, commit $(git rev-parse --short HEAD)."
	echo "Machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GB; PostgreSQL 15, device emulation off, no memory cgroup."
	echo "PostgreSQL's and our default memory settings: \`shared_buffers = 128MB\`, \`hybrid_index.cache_size = 128MB\`."
	echo "A table of $ROWS uniform random points ($TABLE_MB MB); one index at a time. Each round: server restart"
	echo "(the OS page cache kept), then three timed passes: **first** ($KNN 10-NN queries and $WINDOWS windows of"
	echo "0.01 % of the extent, neither PostgreSQL's nor our cache holding anything), **new** (as many other"
	echo "points and windows) and **again** (the first pass's queries again). Sums of the queries' times in ms,"
	echo "medians of $REPS rounds; × GiST: ÷ GiST's median of the same pass."
	echo
	echo "| index | MB | direct_io | first: 10-NN | windows | new: 10-NN | windows | again: 10-NN | windows |"
	echo "|---|---:|---|---:|---:|---:|---:|---:|---:|"
	for v in $VARIANTS; do
		for d in $(settings_for "$v"); do
			read -r fk fw nk nw ak aw <<<"${RES[$v,$d]}"
			if [ "$v" = gist ]; then
				echo "| gist | ${SIZE[$v]} | – | $fk | $fw | $nk | $nw | $ak | $aw |"
			else
				echo "| $v | ${SIZE[$v]} | $d | $fk ($(r2 "$fk" "$g_fk")×) | $fw ($(r2 "$fw" "$g_fw")×) | $nk ($(r2 "$nk" "$g_nk")×) | $nw ($(r2 "$nw" "$g_nw")×) | $ak ($(r2 "$ak" "$g_ak")×) | $aw ($(r2 "$aw" "$g_aw")×) |"
			fi
		done
	done
	echo
	echo "With \`direct_io = on\` every page our cache misses is read from the device, however recently it was"
	echo "read; GiST's misses in \`shared_buffers\` are copies from the OS page cache, and so are ours with"
	echo "\`direct_io = off\`, the default."
} >"$OUT"
echo "direct_io: wrote $OUT" >&2
