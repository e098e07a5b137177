#!/usr/bin/env bash
# pgcluster.sh — a throw-away PostgreSQL 15 cluster for hybrid_index.
#
#   tools/pgcluster.sh start  <datadir> <port>   initdb (if needed) + start + wait ready
#   tools/pgcluster.sh stop   <datadir> [port]   fast shutdown (immediate if that hangs)
#   tools/pgcluster.sh status <datadir> [port]
#   tools/pgcluster.sh env    <datadir> <port>   print PGHOST/PGPORT/PGUSER exports
#
# The cluster listens on localhost and on the unix socket directory
# /tmp/hybrid_index_sock.<port>, trusts local connections (it is a test
# cluster), preloads hybrid_index and allows every hyrtree page size.
# PostgreSQL refuses to run as root, so when called as root the script
# re-runs itself as the `postgres` OS user.
#
# Environment:
#   HI_PRELOAD     shared_preload_libraries value (default: hybrid_index)
#   HI_EXTRA_CONF  extra lines appended to postgresql.conf at initdb time
#   PG_BINDIR      PostgreSQL binaries (default: pg_config --bindir)
set -euo pipefail

usage() {
	echo "usage: $0 start|stop|status|env <datadir> <port>" >&2
	exit 2
}

[ $# -ge 2 ] || usage
cmd=$1
datadir=$2
port=${3:-}

if [ "$(id -u)" = 0 ]; then
	# Re-run as postgres with an absolute script path (cwd may be unreadable).
	self=$(readlink -f "${BASH_SOURCE[0]}")
	tmpself=$(mktemp /tmp/hi_pgcluster.XXXXXX.sh)
	cp "$self" "$tmpself"
	chmod 755 "$tmpself"
	rc=0
	(cd /tmp && runuser -u postgres -- env \
		HI_PRELOAD="${HI_PRELOAD-hybrid_index}" \
		HI_EXTRA_CONF="${HI_EXTRA_CONF:-}" \
		PG_BINDIR="${PG_BINDIR:-}" \
		bash "$tmpself" "$@") || rc=$?
	rm -f "$tmpself"
	exit $rc
fi

PG_BINDIR=${PG_BINDIR:-$(pg_config --bindir 2>/dev/null || echo /usr/lib/postgresql/15/bin)}
PATH="$PG_BINDIR:$PATH"
export PATH

# Absolute data directory path
case "$datadir" in
/*) ;;
*) datadir="$(pwd)/$datadir" ;;
esac

if [ -z "$port" ] && [ -f "$datadir/postgresql.conf" ]; then
	port=$(sed -n "s/^port = \([0-9]*\).*/\1/p" "$datadir/postgresql.conf" | tail -1)
fi

sockdir=/tmp/hybrid_index_sock.${port}

do_start() {
	[ -n "$port" ] || usage
	if [ ! -s "$datadir/PG_VERSION" ]; then
		if [ -e "$datadir" ] && [ -n "$(ls -A "$datadir" 2>/dev/null)" ]; then
			echo "pgcluster: $datadir exists, is not empty and is not a cluster" >&2
			exit 1
		fi
		mkdir -p "$datadir"
		chmod 700 "$datadir"
		initdb -D "$datadir" -U postgres -A trust -E UTF8 --no-locale >"$datadir.initdb.log" 2>&1 || {
			cat "$datadir.initdb.log" >&2
			exit 1
		}
		rm -f "$datadir.initdb.log"
		cat >>"$datadir/postgresql.conf" <<EOF

# --- added by tools/pgcluster.sh ---
port = $port
listen_addresses = 'localhost'
unix_socket_directories = '$sockdir'
shared_preload_libraries = '${HI_PRELOAD-hybrid_index}'
hybrid_index.max_page_size = 32768
fsync = on
max_connections = 40
shared_buffers = 256MB
max_wal_size = 2GB
lc_messages = 'C'
log_min_messages = warning
log_line_prefix = '%m [%p] '
${HI_EXTRA_CONF:-}
EOF
		# A preload of '' would leave an empty (valid) setting; nothing else to do.
	fi
	mkdir -p "$sockdir"
	chmod 755 "$sockdir"
	if pg_ctl -D "$datadir" status >/dev/null 2>&1; then
		echo "pgcluster: already running ($datadir, port $port)"
		return 0
	fi
	if ! pg_ctl -D "$datadir" -l "$datadir/server.log" -w -t 120 \
		-o "-p $port -k $sockdir" start >/dev/null; then
		echo "pgcluster: server failed to start; last lines of $datadir/server.log:" >&2
		tail -n 30 "$datadir/server.log" >&2 || true
		exit 1
	fi
	for _ in $(seq 1 120); do
		if pg_isready -q -h "$sockdir" -p "$port"; then
			echo "pgcluster: running: datadir=$datadir port=$port socket=$sockdir"
			return 0
		fi
		sleep 0.5
	done
	echo "pgcluster: server did not become ready" >&2
	exit 1
}

do_stop() {
	if [ ! -s "$datadir/PG_VERSION" ]; then
		echo "pgcluster: no cluster in $datadir"
		return 0
	fi
	if ! pg_ctl -D "$datadir" status >/dev/null 2>&1; then
		echo "pgcluster: not running ($datadir)"
		return 0
	fi
	if ! pg_ctl -D "$datadir" -m fast -w -t 60 stop >/dev/null; then
		echo "pgcluster: fast stop failed, using immediate" >&2
		pg_ctl -D "$datadir" -m immediate -w -t 60 stop >/dev/null || true
	fi
	echo "pgcluster: stopped ($datadir)"
}

case "$cmd" in
start) do_start ;;
stop) do_stop ;;
status) pg_ctl -D "$datadir" status ;;
env)
	echo "export PGHOST=$sockdir PGPORT=$port PGUSER=postgres"
	;;
*) usage ;;
esac
