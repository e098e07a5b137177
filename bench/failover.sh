#!/usr/bin/env bash
# failover.sh — the first query on a promoted hot standby, our access
# methods next to GiST in the same run on the same data (issue 41, item 4).
#
#   bench/failover.sh [points] [partitions] [reps]
#                                 (defaults 500000, 1000, 3; as root)
#
# For each access method and repetition, two scenarios, each on a fresh
# primary (port $PORT, default 56451) and a streaming hot standby made from
# it by pg_basebackup -R (port $PORT + 1):
#   one table    `a`: 100,000 uniform points, the index, CHECKPOINT, the
#                standby; the standby runs the window query once (its
#                readers load the index), the primary inserts `points` more
#                rows (one INSERT ... SELECT), the standby replays them all;
#   partitions   `t`: `partitions` range partitions of id, 1,000,000 points,
#                the index on the parent, the standby queries the window
#                over all partitions once, the primary inserts 100,000 more
#                rows spread over every partition, the standby replays them;
# then, each the median of `reps` runs:
#   standby, just before      the window query on the standby
#   first after promotion     the primary stopped (fast), pg_ctl promote -w,
#                             the first window query on the new primary
#   again                     the window query once more
# Every answer is checked against a sequential scan on the promoted server
# (a warning and exit status 1 when they differ).  Prints a Markdown table;
# ratios are ours ÷ GiST's medians.  The "hybrid_index:" lines the promoted
# server logged are counted on stderr and its log kept in $LOGS.  The timed
# queries run with enable_seqscan off for every access method alike (after
# the inserts, without ANALYZE, the planner may otherwise pick sequential
# scans of the partitions for some and index scans for others).
# max_locks_per_transaction is raised on both servers for every access
# method alike (a statement over N partitions locks 2N relations); autovacuum
# is off so that no VACUUM of the primary runs during a measurement.
set -euo pipefail
cd "$(dirname "$0")/.."
NPTS=${1:-500000}
NPART=${2:-1000}
REPS=${3:-3}
PORT=${PORT:-56451}
SPORT=$((PORT + 1))
DATA=/tmp/hi_bench_failover_p
SDATA=/tmp/hi_bench_failover_s
LOGS=/tmp/hi_bench_failover_logs
A_BASE=100000           # one table: rows before the standby is made
B_BASE=1000000          # partitions: rows before the standby is made
B_NEW=100000            # partitions: rows inserted on the primary afterwards
. bench/lib.sh
BINDIR=${PG_BINDIR:-$(pg_config --bindir 2>/dev/null || echo /usr/lib/postgresql/15/bin)}

locks=$(((NPART * 3) / 100 + 64))
CONF="hybrid_index.max_page_size = 8192
wal_level = replica
max_wal_senders = 4
max_replication_slots = 4
hot_standby = on
fsync = on
max_locks_per_transaction = $locks
shared_buffers = 256MB
hybrid_index.cache_size = 256MB
max_parallel_workers_per_gather = 0
jit = off
autovacuum = off"

failed=0
stop_all() {
	bash tools/pgcluster.sh stop "$SDATA" "$SPORT" >/dev/null 2>&1 || true
	bash tools/pgcluster.sh stop "$DATA" "$PORT" >/dev/null 2>&1 || true
}
trap stop_all EXIT
trap 'exit 130' INT TERM

# runs a program as the postgres OS user (PostgreSQL refuses root)
as_pg() { (cd /tmp && runuser -u postgres -- "$@"); }
# sql on the server of port $1, unaligned output, stops on an error
qp() { PGHOST=/tmp/hybrid_index_sock.$1 PGPORT=$1 PGUSER=postgres PGDATABASE=postgres psql -XAtq -v ON_ERROR_STOP=1 -c "$2"; }
# the answer and the server-side time in ms (psql's \timing) of a statement
# on the server of port $1: "answer ms"
tm() {
	local out ans t
	out=$(PGHOST=/tmp/hybrid_index_sock.$1 PGPORT=$1 PGUSER=postgres PGDATABASE=postgres \
		psql -XAtq -v ON_ERROR_STOP=1 -c '\timing on' -c "SET enable_seqscan = off; $2")
	ans=$(grep -v '^Time: ' <<<"$out" | tail -1)
	t=$(sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' <<<"$out" | tail -1)
	echo "$ans $t"
}

# a fresh primary (data directories of both servers cleaned first)
new_primary() {
	stop_all
	rm -rf "$DATA" "$SDATA"
	HI_EXTRA_CONF="$CONF" bash tools/pgcluster.sh start "$DATA" "$PORT" >/dev/null
	qp "$PORT" "CREATE EXTENSION IF NOT EXISTS postgis; CREATE EXTENSION IF NOT EXISTS hybrid_index"
}

# the streaming hot standby, from a base backup of the primary
new_standby() {
	as_pg "$BINDIR/pg_basebackup" -D "$SDATA" -h /tmp/hybrid_index_sock.$PORT -p "$PORT" -U postgres \
		-R -X stream -c fast -C -S failover_standby
	# the primary's log came along with its data directory
	rm -f "$SDATA/server.log"
	cat >>"$SDATA/postgresql.conf" <<EOF
# --- the standby's own (bench/failover.sh) ---
port = $SPORT
unix_socket_directories = '/tmp/hybrid_index_sock.$SPORT'
EOF
	bash tools/pgcluster.sh start "$SDATA" "$SPORT" >/dev/null
	[ "$(qp "$SPORT" "SELECT pg_is_in_recovery()")" = t ] || {
		echo "failover: $SDATA is not a hot standby" >&2
		exit 1
	}
}

# waits until the standby replayed everything the primary wrote
wait_replay() {
	local lsn
	lsn=$(qp "$PORT" "SELECT pg_current_wal_insert_lsn()")
	for _ in $(seq 1 6000); do
		[ "$(qp "$SPORT" "SELECT pg_last_wal_replay_lsn() >= '$lsn'::pg_lsn")" = t ] && return 0
		sleep 0.1
	done
	echo "failover: the standby did not replay up to $lsn in 10 minutes" >&2
	exit 1
}

# one run of a scenario ($1: a or t) for an access method ($2), rep ($3):
# sets R[...] entries of the run
declare -A R
run() {
	local s=$1 am=$2 rep=$3 win before first again seq nlog m v hl plan
	win="SELECT count(*) FROM $s WHERE geom && ST_MakeEnvelope(500, 500, 531.6, 531.6)"
	new_primary
	if [ "$s" = a ]; then
		qp "$PORT" "CREATE TABLE a (id bigint, geom geometry)"
		qp "$PORT" "SELECT setseed(0.5); INSERT INTO a SELECT i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(0, $A_BASE - 1) i" >/dev/null
	else
		qp "$PORT" "CREATE TABLE t (id bigint, geom geometry) PARTITION BY RANGE (id)"
		qp "$PORT" "DO \$\$ BEGIN FOR k IN 0 .. $NPART - 1 LOOP
		     EXECUTE format('CREATE TABLE t_%s PARTITION OF t FOR VALUES FROM (%s) TO (%s)', k, k::bigint * $B_BASE / $NPART, (k + 1)::bigint * $B_BASE / $NPART);
		   END LOOP; END \$\$"
		qp "$PORT" "SELECT setseed(0.5); INSERT INTO t SELECT i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(0, $B_BASE - 1) i" >/dev/null
	fi
	qp "$PORT" "VACUUM ANALYZE $s"
	qp "$PORT" "CREATE INDEX ${s}_geom_idx ON $s USING $am (geom)"
	qp "$PORT" "CHECKPOINT"
	new_standby
	# the standby's readers load the index (every partition's)
	qp "$SPORT" "$win" >/dev/null
	if [ "$s" = a ]; then
		qp "$PORT" "SELECT setseed(0.25); INSERT INTO a SELECT $A_BASE + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(0, $NPTS - 1) i" >/dev/null
	else
		# ids spread evenly over every partition's range
		qp "$PORT" "SELECT setseed(0.25); INSERT INTO t SELECT (i::bigint * $B_BASE) / $B_NEW, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(0, $B_NEW - 1) i" >/dev/null
	fi
	wait_replay
	before=$(tm "$SPORT" "$win")
	bash tools/pgcluster.sh stop "$DATA" "$PORT" >/dev/null
	nlog=$(wc -l <"$SDATA/server.log")
	as_pg "$BINDIR/pg_ctl" -D "$SDATA" promote -w -t 120 >/dev/null
	first=$(tm "$SPORT" "$win")
	again=$(tm "$SPORT" "$win")
	seq=$(qp "$SPORT" "SET enable_indexscan = off; SET enable_bitmapscan = off; $win")
	for m in "standby, just before:$before" "first after promotion:$first" "again:$again"; do
		v=${m#*:}
		if [ "${v%% *}" != "$seq" ] || [ -z "${v#* }" ]; then
			echo "failover: WARNING: $am, $s, rep $rep, ${m%%:*}: ${v%% *} rows, a sequential scan finds $seq" >&2
			failed=1
		fi
	done
	# (not piped into grep -q: psql would die of SIGPIPE on a long plan)
	plan=$(qp "$SPORT" "SET enable_seqscan = off; EXPLAIN $win")
	if ! grep -q "Index" <<<"$plan"; then
		echo "failover: note: $am, $s: the window query's plan uses no index" >&2
	fi
	R[$s,$am,before]+="${before#* } "
	R[$s,$am,first]+="${first#* } "
	R[$s,$am,again]+="${again#* } "
	# what the promoted server logged of hybrid_index after the promotion
	mkdir -p "$LOGS"
	cp "$SDATA/server.log" "$LOGS/${s}_${am}_$rep.log"
	hl=$(tail -n +"$((nlog + 1))" "$SDATA/server.log" | grep -c 'hybrid_index:' || true)
	echo "failover: $am, $s, rep $rep: before $before, first $first, again $again (seq $seq); $hl \"hybrid_index:\" log lines after the promotion (log: $LOGS/${s}_${am}_$rep.log)" >&2
	stop_all
}

AMS="gist hyrtree efind lbgrid hgrid"
for rep in $(seq 1 "$REPS"); do
	for am in $AMS; do
		run a "$am" "$rep"
		run t "$am" "$rep"
	done
done

med() { tr ' ' '\n' <<<"$1" | grep . | median; }
echo "Promotion of a hot standby: one table of $A_BASE points + $NPTS inserted; $NPART partitions of"
echo "$B_BASE points + $B_NEW inserted; the standby had queried the index; medians of $REPS runs (ms);"
echo "ratio = ours ÷ GiST"
echo
echo "| workload | GiST ms | hyrtree | efind | lbgrid | hgrid |"
echo "|---|---:|---:|---:|---:|---:|"
for s in a t; do
	if [ "$s" = a ]; then label="one table"; else label="$NPART partitions"; fi
	for k in before:"standby, just before" first:"first after promotion" again:"again"; do
		g=$(med "${R[$s,gist,${k%%:*}]}")
		line="| $label: ${k#*:} | $g |"
		for am in hyrtree efind lbgrid hgrid; do
			v=$(med "${R[$s,$am,${k%%:*}]}")
			line="$line $v ($(r2 "$v" "$g")×) |"
		done
		echo "$line"
	done
done
echo
echo "Settings (both servers): fsync = on, shared_buffers = 256MB, hybrid_index.cache_size = 256MB,"
echo "hybrid_index.max_page_size = 8192, max_parallel_workers_per_gather = 0, jit = off, autovacuum = off,"
echo "max_locks_per_transaction = $locks, wal_level = replica, streaming through a replication slot;"
echo "the primary stopped (fast) before pg_ctl promote -w."
exit $failed
