#!/usr/bin/env bash
# test-all.sh — THE test command of hybrid_index. Run as root from anywhere:
#
#   bash tools/test-all.sh              on PostgreSQL 15 (Debian's)
#   bash tools/test-all.sh --pg 18      on PostgreSQL 18 (or 16; built by
#                                       tools/build-pg.sh, cached)
#
# 1. installs dependencies (tools/install-deps.sh), builds and installs the
#    extension (make && make install, as root);
# 2. fetches the real datasets (tools/fetch-data.sh; cached in data/);
# 3. copies the tree to a fresh temp dir owned by `postgres` and, as postgres:
#    a. starts a throw-away cluster (tools/pgcluster.sh),
#    b. runs pg_regress (make installcheck, tests sql/*.sql), then the
#       isolation specs (pg_isolation_regress; test/isolation/*.spec made
#       into one test per access method), then pg_regress once more with
#       io_uring refused by the kernel (kernel.io_uring_disabled = 2 for the
#       duration, restored afterwards): every AM must fall back to
#       synchronous I/O and pass the same tests ("nouring");
#    c. runs pg_prove over test/pgtap/*.sql in a database with pgtap,
#       postgis and hybrid_index (real data preloaded when available), then
#       the client tests test/clients/ (pytest; SQLAlchemy + GeoAlchemy2 and
#       ogrinfo, from tools/install-client-deps.sh and gdal-bin),
#    (first of all, tools/check-layers.sh: no file includes a header of a
#    layer above it)
#    d. runs the TAP tests test/t/*.pl (make installcheck with REGRESS
#       emptied: PGXS runs prove_installcheck), each with its own clusters
#       (085_extension_update gets the released versions, each built into
#       a copy of the server by tools/build-release.sh);
#    e. builds the Debian packages, installs them, runs pg_regress against
#       them and removes them (tools/test-package.sh; where the version has
#       a postgresql-server-dev package, i.e. 15 on Debian 12);
# 4. stops every server it started, prints the summaries and exits non-zero
#    if anything failed.
#
# Environment knobs:
#   HI_SKIP_DEPS=1      don't run install-deps.sh
#   HI_SKIP_DATA=1      don't fetch the real datasets (real-data tests skip)
#   HI_SUITES="regress isolation nouring pgtap clients tap package"   which suites to run (default: all)
#   HI_KEEP=1           keep the temp dir even when everything passed
#   PROVE_TESTS="test/t/002_crash.pl"  run only some TAP tests
#   HI_TAP_SKIP="002_crash 005_concurrency"  run every TAP test but these
#   HI_PGTAP="test/pgtap/010_points.sql"  run only some pgTAP files
#   HI_PORT=5496        port of the pg_regress/pgTAP cluster
#   HI_PG=18            the same as --pg 18
set -uo pipefail

PGV=${HI_PG:-15}
while [ $# -gt 0 ]; do
	case "$1" in
	--pg)
		PGV=${2:?--pg needs a major version}
		shift 2
		;;
	--pg=*)
		PGV=${1#--pg=}
		shift
		;;
	*)
		echo "test-all: unknown argument $1 (usage: test-all.sh [--pg 15|16|18])" >&2
		exit 2
		;;
	esac
done

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SUITES=${HI_SUITES:-regress isolation nouring pgtap clients tap package}
START=$(date +%s)

if [ "$(id -u)" != 0 ]; then
	echo "test-all: run as root (it installs packages and the extension, then runs tests as postgres)" >&2
	exit 1
fi

log() { echo "=== test-all: $* ($(($(date +%s) - START))s)"; }

# --- 1. dependencies and build -------------------------------------------
if [ "${HI_SKIP_DEPS:-0}" != 1 ]; then
	log "installing dependencies"
	bash "$ROOT/tools/install-deps.sh" --pg "$PGV" || {
		echo "test-all: install-deps.sh failed" >&2
		exit 1
	}
fi
PG_CONFIG=$(bash "$ROOT/tools/build-pg.sh" "$PGV" | tail -n 1) || {
	echo "test-all: no PostgreSQL $PGV (tools/install-deps.sh --pg $PGV)" >&2
	exit 1
}
export PG_CONFIG
export PATH="$("$PG_CONFIG" --bindir):$PATH"
export PG_BINDIR="$("$PG_CONFIG" --bindir)"
log "PostgreSQL: $("$PG_CONFIG" --version) ($PG_CONFIG)"

log "building and installing the extension"
BUILD_LOG=$(mktemp /tmp/hybrid_index_build.XXXXXX.log)
# warnings are errors: one source tree builds clean on every version
if ! (cd "$ROOT" && make clean >/dev/null && make -j2 COPT=-Werror && make install) >"$BUILD_LOG" 2>&1; then
	tail -n 60 "$BUILD_LOG"
	echo "test-all: BUILD FAILED (full log: $BUILD_LOG)"
	echo "test-all: 0 passed, 1 failed"
	exit 1
fi
grep -E "warning:" "$BUILD_LOG" | head -n 20 || true
rm -f "$BUILD_LOG"

# pg_upgrade's old cluster (TAP 060_pg_upgrade) is Debian's PostgreSQL 15:
# it needs the extension too, built from the same tree in a copy of its own
PG15_CONFIG=/usr/lib/postgresql/15/bin/pg_config
if [ "$PGV" != 15 ] && [[ " $SUITES " == *" tap "* ]] && [ -x "$PG15_CONFIG" ]; then
	log "building and installing the extension for PostgreSQL 15 too (pg_upgrade's old cluster)"
	B15=$(mktemp -d /tmp/hybrid_index_build15.XXXXXX)
	tar -C "$ROOT" --exclude=./.git --exclude=./data --exclude=./results --exclude=./tmp_check \
		--exclude=./bench/results -cf - . | tar -C "$B15" -xf -
	if ! (cd "$B15" && make clean >/dev/null && make -j2 COPT=-Werror PG_CONFIG="$PG15_CONFIG" &&
		make install PG_CONFIG="$PG15_CONFIG") >"$B15/build.log" 2>&1; then
		tail -n 40 "$B15/build.log"
		echo "test-all: BUILD FAILED for PostgreSQL 15 (log: $B15/build.log)"
		echo "test-all: 0 passed, 1 failed"
		exit 1
	fi
	rm -rf "$B15"
fi

# the released versions, each built into a copy of this server (TAP
# 085_extension_update updates their databases to this tree's version)
if [[ " $SUITES " == *" tap "* ]] && { [ -z "${PROVE_TESTS:-}" ] || [[ "$PROVE_TESTS" == *085_extension_update* ]]; } &&
	[[ " ${HI_TAP_SKIP:-} " != *" 085_extension_update "* ]]; then
	log "building the released versions for the update test (tools/build-release.sh)"
	REL_LOG=$(mktemp /tmp/hybrid_index_release.XXXXXX.log)
	bash "$ROOT/tools/build-release.sh" "$PG_CONFIG" >"$REL_LOG.out" 2>"$REL_LOG"
	rc=$?
	if [ $rc = 0 ]; then
		HI_RELEASES=$(awk '{printf "%s%s=%s", (NR > 1 ? " " : ""), $1, $2}' "$REL_LOG.out")
		export HI_RELEASES
		log "released versions: $HI_RELEASES"
	elif [ $rc = 2 ]; then
		HI_RELEASES_WHY=$(tail -n 1 "$REL_LOG")
		export HI_RELEASES_WHY
		log "the update test will skip: $HI_RELEASES_WHY"
	else
		cat "$REL_LOG"
		echo "test-all: BUILD FAILED for a released version (tools/build-release.sh)"
		echo "test-all: 0 passed, 1 failed"
		exit 1
	fi
	rm -f "$REL_LOG" "$REL_LOG.out"
fi

# --- 2. data ----------------------------------------------------------------
DATA_DIR="$ROOT/data"
if [ "${HI_SKIP_DATA:-0}" != 1 ]; then
	log "fetching datasets"
	if ! bash "$ROOT/tools/fetch-data.sh" "$DATA_DIR" all; then
		echo "test-all: WARNING: fetch-data.sh failed; real-data tests will be skipped" >&2
	fi
fi

# --- 3. temp copy owned by postgres ---------------------------------------------
WORK=$(mktemp -d /tmp/hybrid_index_test.XXXXXX)
chmod 755 "$WORK"
mkdir "$WORK/src"
tar -C "$ROOT" --exclude=./.git --exclude=./data --exclude=./results \
	--exclude=./tmp_check --exclude=./log --exclude=./bench/results \
	--exclude=./regression.diffs --exclude=./regression.out --exclude=./isolation \
	--exclude=./output_iso -cf - . |
	tar -C "$WORK/src" -xf -
chown -R postgres: "$WORK"

PORT=${HI_PORT:-5496}
# pick a free port
for _ in $(seq 1 50); do
	if ! (exec 3<>/dev/tcp/127.0.0.1/"$PORT") 2>/dev/null && [ ! -e "/tmp/.s.PGSQL.$PORT" ] &&
		[ ! -e "/tmp/hybrid_index_sock.$PORT/.s.PGSQL.$PORT" ]; then
		break
	fi
	PORT=$((PORT + 1))
done
PGDATA_DIR="$WORK/pgdata"
SOCK="/tmp/hybrid_index_sock.$PORT"
CLUSTER_STARTED=0

# the nouring suite turns io_uring off machine-wide: always turn it back on
URING_SYSCTL=/proc/sys/kernel/io_uring_disabled
URING_WAS=
restore_uring() {
	if [ -n "$URING_WAS" ]; then
		echo "$URING_WAS" >"$URING_SYSCTL" || true
		URING_WAS=
	fi
}

cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	restore_uring
	if [ "$CLUSTER_STARTED" = 1 ]; then
		bash "$ROOT/tools/pgcluster.sh" stop "$PGDATA_DIR" "$PORT" >/dev/null 2>&1 || true
	fi
	# TAP tests stop their nodes in END blocks; stop any that survived an
	# interrupted run (only servers under our own temp dir).
	for pidfile in "$WORK"/src/tmp_check/t_*_data/pgdata/postmaster.pid; do
		[ -e "$pidfile" ] || continue
		runuser -u postgres -- pg_ctl -D "$(dirname "$pidfile")" -m immediate -w -t 30 stop >/dev/null 2>&1 || true
	done
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

as_pg() {
	(cd "$WORK/src" && runuser -u postgres -- env PATH="$PATH" PGHOST="$SOCK" PGPORT="$PORT" PGUSER=postgres \
		PGDATABASE=postgres "$@")
}
psql_pg() { as_pg psql -X -q -v ON_ERROR_STOP=1 "$@"; }

PASSED=0
FAILED=0
FAILED_WHAT=()
count_pass() { PASSED=$((PASSED + $1)); }
count_fail() {
	FAILED=$((FAILED + $1))
	FAILED_WHAT+=("$2")
}

# calls go down the layers only (ARCHITECTURE.md; src/README.md)
log "layer check"
if bash "$ROOT/tools/check-layers.sh"; then
	count_pass 1
else
	count_fail 1 "layers"
fi

need_cluster=0
case " $SUITES " in *" regress "* | *" isolation "* | *" nouring "* | *" pgtap "* | *" clients "*) need_cluster=1 ;; esac
if [ $need_cluster = 1 ]; then
	log "starting cluster (port $PORT, data $PGDATA_DIR)"
	CLUSTER_STARTED=1
	# no autovacuum: an autoanalyze holds a snapshot that can keep a test's
	# VACUUM from removing the rows it deleted (and the test from seeing the
	# index merges it asserts); tests VACUUM explicitly
	if ! HI_EXTRA_CONF="autovacuum = off" bash "$ROOT/tools/pgcluster.sh" start "$PGDATA_DIR" "$PORT"; then
		echo "test-all: could not start the test cluster"
		count_fail 1 "cluster start"
		SUITES=$(echo " $SUITES " | sed 's/ regress / /; s/ isolation / /; s/ nouring / /; s/ pgtap / /; s/ clients / /')
	fi
fi

# Summary of a pg_regress / pg_isolation_regress run: print its own lines,
# count its tests, show the diffs when it failed.
#   regress_result <exit status> <log> <regression.diffs> <label>
regress_result() {
	local rc=$1 logf=$2 diffs=$3 label=$4 n_ok n_bad
	# pg_regress prints "test name ... ok" up to 15 and TAP lines
	# ("ok 3 - name", "not ok 4 + name") from 16 on
	grep -E "^(test |ok |not ok |     |\+\+\+)|tests? (passed|failed)|^ *[0-9]+ of [0-9]+|All [0-9]+ tests" "$logf" || true
	n_ok=$(grep -cE "^(test|     ) +[A-Za-z0-9_]+ +\.\.\. ok|^ok +[0-9]+ +[-+] +[A-Za-z0-9_]+" "$logf" || true)
	n_bad=$(grep -cE "\.\.\. FAILED|\.\.\. failed|^not ok +[0-9]+ +[-+] " "$logf" || true)
	if [ "$rc" != 0 ]; then
		[ "$n_bad" -gt 0 ] || n_bad=1
		if [ -s "$diffs" ]; then
			echo "---------------- $diffs ----------------"
			head -c 60000 "$diffs"
			echo "---------------- end of $diffs ----------------"
		else
			tail -n 40 "$logf"
		fi
		count_fail "$n_bad" "$label"
	fi
	count_pass "$n_ok"
}

# --- 3b. pg_regress ----------------------------------------------------------------
# A pg_regress file that needs a contrib module this server was built
# without (16's wheel has no contrib; pg_walinspect is added to it, dblink
# does not build against 16 from 18's source) is left out, saying so.
REGRESS_LIST=$(cd "$ROOT" && ls sql/*.sql | xargs -n1 basename | sed 's/\.sql$//' | LC_ALL=C sort)
REGRESS_LEFT_OUT=
SHAREDIR=$("$PG_CONFIG" --sharedir)
for t in $REGRESS_LIST; do
	for ext in $(grep -ohE "CREATE EXTENSION (IF NOT EXISTS )?[a-z_]+" "$ROOT/sql/$t.sql" | awk '{print $NF}' | sort -u); do
		case "$ext" in hybrid_index | hybrid_index_bench | postgis | pgtap) continue ;; esac
		if [ ! -f "$SHAREDIR/extension/$ext.control" ]; then
			REGRESS_LEFT_OUT="$REGRESS_LEFT_OUT $t($ext)"
			REGRESS_LIST=$(echo "$REGRESS_LIST" | grep -vx "$t")
		fi
	done
done
REGRESS_LIST=$(echo $REGRESS_LIST)
[ -n "$REGRESS_LEFT_OUT" ] && log "pg_regress files left out (this server lacks the contrib module):$REGRESS_LEFT_OUT"

if [[ " $SUITES " == *" regress "* ]]; then
	log "pg_regress (make installcheck)"
	as_pg make installcheck TAP_TESTS= ISOLATION= REGRESS="$REGRESS_LIST" >"$WORK/regress.log" 2>&1
	regress_result $? "$WORK/regress.log" "$WORK/src/regression.diffs" "pg_regress"
fi

# --- 3b'. isolation specs ------------------------------------------------------
if [[ " $SUITES " == *" isolation "* ]]; then
	log "isolation specs (pg_isolation_regress)"
	as_pg make installcheck REGRESS= TAP_TESTS= >"$WORK/isolation.log" 2>&1
	regress_result $? "$WORK/isolation.log" "$WORK/src/output_iso/regression.diffs" "isolation"
fi

# --- 3b''. pg_regress with io_uring refused by the kernel ------------------------
if [[ " $SUITES " == *" nouring "* ]]; then
	extra_opts="-c log_min_messages=log"
	if [ -w "$URING_SYSCTL" ]; then
		URING_WAS=$(cat "$URING_SYSCTL")
		echo 2 >"$URING_SYSCTL"
		log "pg_regress with io_uring refused by the kernel (kernel.io_uring_disabled = 2 until it ends)"
		want_fallback=1
	else
		log "pg_regress with hybrid_index.io_method = sync ($URING_SYSCTL not writable: io_uring cannot be refused here)"
		extra_opts="$extra_opts -c hybrid_index.io_method=sync"
		want_fallback=0
	fi
	mark=$(stat -c %s "$PGDATA_DIR/server.log" 2>/dev/null || echo 0)
	as_pg env PGOPTIONS="$extra_opts" make installcheck TAP_TESTS= ISOLATION= REGRESS="$REGRESS_LIST" >"$WORK/nouring.log" 2>&1
	rc=$?
	restore_uring
	regress_result $rc "$WORK/nouring.log" "$WORK/src/regression.diffs" "pg_regress without io_uring"
	if [ $want_fallback = 1 ]; then
		n_fb=$(tail -c +"$((mark + 1))" "$PGDATA_DIR/server.log" | grep -c "io_uring unavailable" || true)
		if [ "$n_fb" -gt 0 ]; then
			echo "test-all: nouring: $n_fb backends logged the fallback to synchronous I/O"
		else
			echo "test-all: nouring: no backend logged the fallback to synchronous I/O"
			count_fail 1 "nouring fallback message"
		fi
	fi
fi

# --- 3c. pgTAP -----------------------------------------------------------------------
if [[ " $SUITES " == *" pgtap "* ]]; then
	log "pgTAP (pg_prove)"
	TAPDB=hi_pgtap
	ok=1
	psql_pg -d postgres -c "DROP DATABASE IF EXISTS $TAPDB" -c "CREATE DATABASE $TAPDB" &&
		psql_pg -d $TAPDB -c "CREATE EXTENSION pgtap" -c "CREATE EXTENSION postgis" \
			-c "CREATE EXTENSION hybrid_index" || ok=0
	if [ $ok = 1 ] && [ -s "$DATA_DIR/cities500.csv" ]; then
		log "loading real data into $TAPDB"
		psql_pg -d $TAPDB \
			-c "CREATE TABLE real_cities(id bigint, name text, country text, population bigint, lon float8, lat float8)" \
			-c "COPY real_cities FROM STDIN WITH (FORMAT csv, HEADER true)" <"$DATA_DIR/cities500.csv" &&
			psql_pg -d $TAPDB \
				-c "ALTER TABLE real_cities ADD COLUMN geom geometry(Point,4326)" \
				-c "UPDATE real_cities SET geom = ST_SetSRID(ST_MakePoint(lon, lat), 4326)" \
				-c "VACUUM ANALYZE real_cities" || ok=0
	fi
	if [ $ok = 1 ] && [ -s "$DATA_DIR/land_polygons.csv" ]; then
		psql_pg -d $TAPDB -c "SET client_min_messages = warning" \
			-c "CREATE TABLE real_land(id int, country text, part int, npoints int, geom geometry(Polygon,4326))" \
			-c "COPY real_land FROM STDIN WITH (FORMAT csv, HEADER true)" <"$DATA_DIR/land_polygons.csv" &&
			psql_pg -d $TAPDB -c "VACUUM ANALYZE real_land" || ok=0
	fi
	if [ $ok != 1 ]; then
		echo "test-all: could not prepare the pgTAP database"
		count_fail 1 "pgTAP setup"
	else
		files=${HI_PGTAP:-$(cd "$WORK/src" && ls test/pgtap/*.sql 2>/dev/null | tr '\n' ' ')}
		if [ -z "$files" ]; then
			echo "test-all: no pgTAP files found"
			count_fail 1 "pgTAP (no files)"
		else
			# shellcheck disable=SC2086
			as_pg pg_prove --ext .sql -h "$SOCK" -p "$PORT" -U postgres -d $TAPDB \
				--psql-bin "$(pg_config --bindir)/psql" --timer $files 2>&1 | tee "$WORK/pgtap.log"
			rc=${PIPESTATUS[0]}
			n_files=$(echo $files | wc -w)
			n_bad=$(grep -cE "test/pgtap/[^ ]+\.sql +\(Wstat:" "$WORK/pgtap.log" || true)
			if [ "$rc" != 0 ]; then
				[ "$n_bad" -gt 0 ] || n_bad=1
				count_fail "$n_bad" "pgTAP"
			fi
			count_pass $((n_files - n_bad > 0 ? n_files - n_bad : 0))
		fi
	fi
fi

# --- 3c'. real clients: an ORM and a GIS client ---------------------------------
if [[ " $SUITES " == *" clients "* ]]; then
	log "clients (SQLAlchemy + GeoAlchemy2 over psycopg2, GDAL's ogrinfo)"
	if PY=$(bash "$ROOT/tools/install-client-deps.sh" 2>"$WORK/clients-deps.log" | tail -n 1) &&
		command -v ogrinfo >/dev/null 2>&1; then
		(cd "$WORK/src" && PGHOST="$SOCK" PGPORT="$PORT" "$PY" -m pytest -q -p no:cacheprovider \
			test/clients) 2>&1 | tee "$WORK/clients.log"
		if [ "${PIPESTATUS[0]}" = 0 ]; then
			count_pass 1
		else
			count_fail 1 "clients"
		fi
	else
		tail -n 20 "$WORK/clients-deps.log"
		echo "test-all: the client tests' dependencies are missing (tools/install-client-deps.sh, gdal-bin)"
		count_fail 1 "clients (dependencies)"
	fi
fi

if [ "$CLUSTER_STARTED" = 1 ]; then
	bash "$ROOT/tools/pgcluster.sh" stop "$PGDATA_DIR" "$PORT" >/dev/null 2>&1 || true
	CLUSTER_STARTED=0
fi

# --- 3d. TAP tests -----------------------------------------------------------------
if [[ " $SUITES " == *" tap "* ]]; then
	# a tiny filesystem for the full-disk test (032); it skips, saying why,
	# where loop devices cannot be mounted
	if bash "$ROOT/test/setup_tiny_fs.sh" >"$WORK/tinyfs.log" 2>&1; then
		TINYFS=1
	else
		TINYFS=0
		log "no tiny filesystem for the full-disk test: $(tail -n 1 "$WORK/tinyfs.log")"
	fi
	log "TAP tests (prove_installcheck)"
	extra=()
	# HI_TAP_SKIP="002_crash 050_standby": every TAP file but those
	if [ -z "${PROVE_TESTS:-}" ] && [ -n "${HI_TAP_SKIP:-}" ]; then
		PROVE_TESTS=$(cd "$WORK/src" && for f in test/t/*.pl; do
			b=$(basename "$f" .pl)
			[[ " $HI_TAP_SKIP " == *" $b "* ]] || echo "$f"
		done | tr '\n' ' ')
		log "TAP files left out: $HI_TAP_SKIP"
	fi
	[ -n "${PROVE_TESTS:-}" ] && extra+=("PROVE_TESTS=$PROVE_TESTS")
	as_pg make installcheck REGRESS= ISOLATION= PROVE_FLAGS="--timer" "${extra[@]}" 2>&1 | tee "$WORK/tap.log"
	rc=${PIPESTATUS[0]}
	n_files=$(grep -cE "test/t/[^ ]+\.pl \.\.+" "$WORK/tap.log" || true)
	n_bad=$(grep -cE "test/t/[^ ]+\.pl +\(Wstat:" "$WORK/tap.log" || true)
	if [ "$rc" != 0 ]; then
		[ "$n_bad" -gt 0 ] || n_bad=1
		count_fail "$n_bad" "TAP"
		# show the tail of the failing tests' logs
		for f in "$WORK"/src/tmp_check/log/regress_log_*; do
			[ -e "$f" ] || continue
			name=$(basename "$f" | sed 's/^regress_log_//')
			if grep -qE "test/t/$name\.pl +\(Wstat:" "$WORK/tap.log"; then
				echo "---------------- tail of $f ----------------"
				tail -n 60 "$f"
			fi
		done
	fi
	count_pass $((n_files - n_bad > 0 ? n_files - n_bad : 0))
	if [ "$TINYFS" = 1 ]; then
		bash "$ROOT/test/setup_tiny_fs.sh" --remove >/dev/null 2>&1 || true
	fi
fi

# --- 3e. the Debian packages ------------------------------------------------------------
if [[ " $SUITES " == *" package "* ]]; then
	log "Debian packages (tools/test-package.sh $PGV)"
	bash "$ROOT/tools/test-package.sh" "$PGV" 2>&1 | tee "$WORK/package.log"
	rc=${PIPESTATUS[0]}
	if [ "$rc" = 0 ]; then
		count_pass 1
	elif [ "$rc" = 3 ]; then
		log "package test skipped: no postgresql-server-dev-$PGV package here (packages are built for versions installed from packages)"
	else
		count_fail 1 "Debian packages"
	fi
fi

# --- 4. summary ------------------------------------------------------------------------
log "done"
if [ "$FAILED" -gt 0 ]; then
	echo "test-all: FAILED suites: ${FAILED_WHAT[*]}"
	echo "test-all: logs kept in $WORK"
else
	if [ "${HI_KEEP:-0}" = 1 ]; then
		echo "test-all: logs kept in $WORK"
	else
		rm -rf "$WORK"
	fi
fi
echo "test-all: $PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
