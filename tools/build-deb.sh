#!/usr/bin/env bash
# build-deb.sh — Debian packages of hybrid_index, built the way PGDG builds
# extensions (debian/, pg_buildext): postgresql-<N>-hybrid-index and
# postgresql-<N>-hybrid-index-bench (the benchmark schema, not needed in
# production) for every PostgreSQL version N >= 15 whose server-dev
# package (postgresql-server-dev-N) is installed.
#
#   bash tools/build-deb.sh [output directory]      default: dist/
#
# Builds in a temporary copy of this tree (the working tree as it is, not a
# commit), so the tree's own build is left alone.  Needs dpkg-dev,
# debhelper and postgresql-server-dev-all (tools/install-deps.sh installs
# them).  Prints the path of each package built.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=$(mkdir -p "${1:-$ROOT/dist}" && cd "${1:-$ROOT/dist}" && pwd)

for tool in dpkg-buildpackage dh pg_buildext; do
	command -v "$tool" >/dev/null 2>&1 || {
		echo "build-deb: $tool is missing (apt install dpkg-dev debhelper postgresql-server-dev-all, or tools/install-deps.sh)" >&2
		exit 1
	}
done

B=$(mktemp -d /tmp/hybrid_index_deb.XXXXXX)
trap 'rm -rf "$B"' EXIT
mkdir "$B/hybrid-index"
tar -C "$ROOT" --exclude=./.git --exclude=./data --exclude=./dist --exclude=./bench/results \
	--exclude=./results --exclude=./tmp_check --exclude=./log --exclude=./isolation \
	--exclude=./output_iso -cf - . | tar -C "$B/hybrid-index" -xf -

cd "$B/hybrid-index"
# the versions present on this machine decide the binary packages
pg_buildext updatecontrol
versions=$(pg_buildext supported-versions | tr '\n' ' ')
echo "build-deb: building for PostgreSQL $versions" >&2
if ! dpkg-buildpackage -b -us -uc -j"$(nproc)" >"$B/build.log" 2>&1; then
	tail -n 60 "$B/build.log" >&2
	cp "$B/build.log" "$OUT/build-deb.log"
	echo "build-deb: dpkg-buildpackage failed (log: $OUT/build-deb.log)" >&2
	exit 1
fi
grep -E "warning:" "$B/build.log" >&2 || true
for deb in "$B"/*.deb; do
	cp "$deb" "$OUT/"
	echo "$OUT/$(basename "$deb")"
done
