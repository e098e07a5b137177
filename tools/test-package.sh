#!/usr/bin/env bash
# test-package.sh — the Debian packages, tested as a DBA gets them: builds
# them (tools/build-deb.sh), installs them with apt into this machine,
# runs pg_regress against a fresh server from a directory that holds only
# the tests (no source tree, no build: the extension comes from the
# package), creates the benchmark extension from its own package, removes
# the packages (their files must go) and puts back the files a source
# install had where the packages went.  Run as root.
#
#   bash tools/test-package.sh [PostgreSQL major version]     default 15
#
# Exit status 3: no server-dev package for that version on this machine
# (packages are built only for versions installed from packages).
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
V=${1:-15}
PGC=/usr/lib/postgresql/$V/bin/pg_config
# the pg_regress files run against the package: the setup the others load,
# each access method's basic test, PostGIS's functions, index-only scans,
# INCLUDE columns, and the SQL interface (which creates hybrid_index_bench)
TESTS=${HI_PACKAGE_TESTS:-"hyrtree_00_setup hyrtree_basic efind_00_setup efind_basic lbgrid_basic hgrid_basic postgis_functions points_ios include_columns hyrtree_functions"}
PKG=postgresql-$V-hybrid-index
BENCH=postgresql-$V-hybrid-index-bench

say() { echo "test-package: $*"; }
if ! dpkg-query -W -f='${Status}' "postgresql-server-dev-$V" 2>/dev/null | grep -q "install ok installed" ||
	[ ! -x "$PGC" ]; then
	say "no postgresql-server-dev-$V package on this machine: no package to build for PostgreSQL $V"
	exit 3
fi
if [ "$(id -u)" != 0 ]; then
	say "run as root (it installs and removes packages)"
	exit 1
fi

W=$(mktemp -d /tmp/hybrid_index_pkg.XXXXXX)
chmod 755 "$W"
SAVED="$W/saved"
INSTALLED=0
restore() {
	if [ "$INSTALLED" = 1 ]; then
		apt-get remove -y -q --purge "$PKG" "$BENCH" </dev/null >"$W/remove.log" 2>&1 || dpkg --purge "$BENCH" "$PKG" >/dev/null 2>&1
		INSTALLED=0
	fi
	# the files a source install had where the packages went
	[ -d "$SAVED" ] && cp -a "$SAVED"/. / 2>/dev/null
	return 0
}
finish() {
	local rc=$?
	restore
	if [ $rc = 0 ]; then rm -rf "$W"; else say "logs kept in $W"; fi
	exit $rc
}
trap finish EXIT
trap 'exit 130' INT TERM

say "building the packages (tools/build-deb.sh)"
bash "$ROOT/tools/build-deb.sh" "$W/dist" >"$W/build.out" || exit 1
deb=$(ls "$W"/dist/"${PKG}"_*_*.deb 2>/dev/null | head -n 1)
bdeb=$(ls "$W"/dist/"${BENCH}"_*_all.deb 2>/dev/null | head -n 1)
if [ -z "$deb" ] || [ -z "$bdeb" ]; then
	say "FAILED: build-deb.sh made no $PKG or $BENCH package"
	exit 1
fi
say "built $(basename "$deb") $(basename "$bdeb")"

# keep what a source install put where the packages' files go, and the
# release scripts it left that no package owns (restore() puts them back)
set_aside() {
	local f
	for f in "$@"; do
		[ -e "$f" ] || continue
		mkdir -p "$SAVED$(dirname "$f")"
		cp -a "$f" "$SAVED$f" && rm -f "$f"
	done
}
files=$( (dpkg-deb -c "$deb" && dpkg-deb -c "$bdeb") | awk '{print $6}' | grep -v '/$' | sed 's|^\./|/|')
mkdir -p "$SAVED"
# shellcheck disable=SC2086
set_aside $files "$($PGC --sharedir)"/extension/hybrid_index*

say "apt-get install $(basename "$deb") $(basename "$bdeb")"
INSTALLED=1
if ! apt-get install -y -q --no-install-recommends "$deb" "$bdeb" </dev/null >"$W/install.log" 2>&1; then
	tail -n 30 "$W/install.log"
	say "FAILED: apt-get install"
	exit 1
fi
owner=$(dpkg -S "$($PGC --pkglibdir)/hybrid_index.so" 2>/dev/null | cut -d: -f1)
if [ "$owner" != "$PKG" ]; then
	say "FAILED: $($PGC --pkglibdir)/hybrid_index.so belongs to '${owner:-no package}', not $PKG"
	exit 1
fi
say "$PKG $(dpkg-query -W -f='${Version}' "$PKG") and $BENCH installed"

# only the tests: sql/ and expected/ in a directory of their own
T="$W/tests"
mkdir -p "$T/sql" "$T/expected"
for t in $TESTS; do
	cp "$ROOT/sql/$t.sql" "$T/sql/" && cp "$ROOT/expected/$t.out" "$T/expected/" || exit 1
done
cat >"$W/extra.conf" <<CONF
shared_preload_libraries = 'hybrid_index'
hybrid_index.max_page_size = 32768
autovacuum = off
lc_messages = 'C'
CONF
chown -R postgres: "$W"
BINDIR=$("$PGC" --bindir)
PG_REGRESS=$("$PGC" --pkglibdir)/pgxs/src/test/regress/pg_regress
say "pg_regress against the installed package: $TESTS"
# shellcheck disable=SC2086
(cd "$T" && runuser -u postgres -- "$PG_REGRESS" --temp-instance="$W/instance" --temp-config="$W/extra.conf" \
	--bindir="$BINDIR" --inputdir=. --outputdir="$W/out" --port=$((5900 + RANDOM % 60)) \
	--load-extension=postgis --load-extension=hybrid_index $TESTS) >"$W/regress.log" 2>&1
rc=$?
grep -E "^(test |ok |not ok |     )|tests? (passed|failed)|All [0-9]+ tests" "$W/regress.log"
if [ $rc != 0 ]; then
	[ -s "$W/out/regression.diffs" ] && head -c 20000 "$W/out/regression.diffs"
	say "FAILED: pg_regress against the package"
	exit 1
fi

say "apt-get remove --purge $PKG $BENCH"
apt-get remove -y -q --purge "$PKG" "$BENCH" </dev/null >"$W/remove.log" 2>&1 || {
	tail -n 20 "$W/remove.log"
	say "FAILED: apt-get remove"
	exit 1
}
INSTALLED=0
left=""
for f in $files; do [ -e "$f" ] && left="$left $f"; done
if [ -n "$left" ]; then
	say "FAILED: files left after removing the packages:$left"
	exit 1
fi
say "passed: built, installed, $(echo $TESTS | wc -w) pg_regress tests, removed without leftovers"
