#!/usr/bin/env bash
# build_memory.sh — CREATE INDEX time, backend peak memory and temp-file use
# under a maintenance_work_mem setting (issue 2: bulk builds respect it).
#
#   bench/build_memory.sh <table> <am> <maintenance_work_mem> [rounds]
#
# Runs against the server of PGHOST/PGPORT (a cluster of tools/pgcluster.sh;
# the table has columns id, geom).  Each round opens a new backend, builds
# the index and prints one line: seconds, the backend's VmHWM growth during
# the build (peak RSS minus RSS before, after resetting the peak through
# /proc/<pid>/clear_refs; needs root or the server's OS user), the peak anonymous (private) memory sampled every 20 ms (shared
# buffers and the page cache are excluded: they are shared memory), the temp
# bytes written (pg_stat_database.temp_bytes delta) and the index's pages.
set -euo pipefail
tbl=$1
am=$2
mwm=$3
rounds=${4:-1}
psql_q() { psql -X -q -At "$@"; }
kb() { sed -n "s/^$2:[[:space:]]*\([0-9]*\) kB/\1/p" /proc/$1/status; }

for _ in $(seq 1 "$rounds"); do
	psql_q -c "DROP INDEX IF EXISTS bm_idx"
	fifo=$(mktemp -u /tmp/bm_fifo.XXXXXX)
	mkfifo "$fifo"
	exec 3<>"$fifo"
	out=$(mktemp /tmp/bm_out.XXXXXX)
	psql -X -q -At <"$fifo" >"$out" 2>&1 3>&- &
	ppid=$!
	echo "SELECT pg_backend_pid();" >&3
	while [ ! -s "$out" ]; do sleep 0.05; done
	bpid=$(head -1 "$out")
	# reset the backend's peak RSS (VmHWM) to its current RSS
	echo 5 >/proc/"$bpid"/clear_refs
	hwm0=$(kb "$bpid" VmRSS)
	temp0=$(psql_q -c "SELECT pg_stat_force_next_flush(); SELECT temp_bytes FROM pg_stat_database WHERE datname = current_database()" | tail -1)
	echo "SET maintenance_work_mem = '$mwm'; SELECT extract(epoch FROM clock_timestamp()); CREATE INDEX bm_idx ON $tbl USING $am (geom); SELECT extract(epoch FROM clock_timestamp()); SELECT 'done';" >&3
	peak=0
	while ! grep -q '^done$' "$out"; do
		a=$(kb "$bpid" RssAnon || echo 0)
		[ "${a:-0}" -gt "$peak" ] && peak=$a
		if ! kill -0 "$ppid" 2>/dev/null; then cat "$out" >&2; exit 1; fi
		sleep 0.02
	done
	hwm1=$(kb "$bpid" VmHWM)
	exec 3>&-
	wait "$ppid" || true
	t0=$(sed -n 2p "$out")
	t1=$(sed -n 3p "$out")
	rm -f "$fifo" "$out"
	sleep 0.6	# let the backend's statistics reach shared memory
	temp1=$(psql_q -c "SELECT pg_stat_force_next_flush(); SELECT temp_bytes FROM pg_stat_database WHERE datname = current_database()" | tail -1)
	pages=$(psql_q -c "SELECT coalesce(hybrid_index_inspect('bm_idx')->>'pages', hybrid_index_inspect('bm_idx')->>'npages', '?')")
	awk -v t="$tbl" -v a="$am" -v m="$mwm" -v s="$(echo "$t1 - $t0" | bc)" \
		-v h=$(( (hwm1 - hwm0) / 1024 )) -v p=$(( peak / 1024 )) \
		-v tb=$(( (temp1 - temp0) / 1048576 )) -v pg="$pages" \
		'BEGIN { printf "%-6s %-8s mwm=%-6s build=%7.2fs peak_rss_growth=%5dMB peak_anon=%5dMB temp=%5dMB pages=%s\n", t, a, m, s, h, p, tb, pg }'
done
