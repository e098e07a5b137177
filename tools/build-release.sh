#!/usr/bin/env bash
# build-release.sh — a PostgreSQL installation with a released version of
# hybrid_index in it, for the extension update test (TAP 085): the server
# of <pg_config> copied (hard links where the filesystem allows) with its
# PostGIS, our files taken out, and the release built from git history
# (tools/releases.txt) and installed into the copy.  PostgreSQL finds its
# share and lib directories relative to its binaries, so the copy runs as
# its own installation beside the original.
#
#   bash tools/build-release.sh <pg_config> [version...]   (default: every release)
#
# Prints one line "<version> <install path>" per release (the path is what
# PostgreSQL::Test::Cluster takes as install_path).  Cached under
# /var/cache/hybrid_index/release-*, keyed by the release's commit, the
# server and this script.  Exit status 2: the release cannot be built here
# because the clone has no history of it (a shallow clone or a tarball);
# 1: anything else failed.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PGC=${1:?usage: build-release.sh <pg_config> [version...]}
shift
CACHE=${HI_CACHE_DIR:-/var/cache/hybrid_index}

mapfile -t RELEASES < <(grep -vE '^\s*(#|$)' "$ROOT/tools/releases.txt")
WANT=("$@")

bindir=$("$PGC" --bindir)
sharedir=$("$PGC" --sharedir)
pkglibdir=$("$PGC" --pkglibdir)
prefix=$(dirname "$bindir")

for line in "${RELEASES[@]}"; do
	read -r ver commit <<<"$line"
	if [ ${#WANT[@]} -gt 0 ] && [[ " ${WANT[*]} " != *" $ver "* ]]; then
		continue
	fi
	if ! git -C "$ROOT" cat-file -e "$commit^{tree}" 2>/dev/null; then
		echo "build-release: release $ver (commit $commit) is not in this clone's history (shallow clone or no .git): cannot build it" >&2
		exit 2
	fi
	key=$( (echo "$commit" && "$PGC" --version && realpath "$PGC" && cat "${BASH_SOURCE[0]}") | sha256sum | cut -c1-12)
	dest="$CACHE/release-$ver-$key"
	if [ ! -e "$dest/.done" ]; then
		echo "build-release: building $ver ($commit) for $("$PGC" --version) into $dest" >&2
		rm -rf "$dest" "$dest.src"
		mkdir -p "$dest" "$dest.src"
		# the installation: its prefix (bin, lib, share where they live
		# under it) and the share directory where it lives elsewhere (Debian)
		copy() {
			mkdir -p "$dest$(dirname "$1")"
			cp -al "$1" "$dest$1" 2>/dev/null || cp -a "$1" "$dest$1"
		}
		copy "$prefix"
		case "$sharedir/" in "$prefix"/*) ;; *) copy "$sharedir" ;; esac
		case "$pkglibdir/" in "$prefix"/*) ;; *) copy "$pkglibdir" ;; esac
		# libraries the binaries find relative to themselves ($ORIGIN
		# rpaths: a wheel's libpq in a directory beside the installation)
		for rp in $(readelf -d "$bindir/initdb" "$bindir/postgres" 2>/dev/null |
			sed -n 's/.*R\(UN\)\{0,1\}PATH.*\[\(.*\)\]/\2/p' | tr ':' '\n' | grep -F '$ORIGIN' | sort -u); do
			d=$(realpath -m "${rp//\$ORIGIN/$bindir}")
			case "$d/" in "$prefix"/*) ;; *) [ -d "$d" ] && [ ! -e "$dest$d" ] && copy "$d" ;; esac
		done
		rm -rf "$dest$pkglibdir"/hybrid_index.so "$dest$pkglibdir"/bitcode/hybrid_index* \
			"$dest$sharedir"/extension/hybrid_index*
		git -C "$ROOT" archive "$commit" | tar -C "$dest.src" -xf -
		if ! (cd "$dest.src" && make -j2 PG_CONFIG="$PGC" && make install PG_CONFIG="$PGC" DESTDIR="$dest") \
			>"$dest.build.log" 2>&1; then
			tail -n 30 "$dest.build.log" >&2
			echo "build-release: building $ver failed (log: $dest.build.log)" >&2
			exit 1
		fi
		rm -rf "$dest.src" "$dest.build.log"
		# the copy must find its own share directory, not the original's
		got=$("$dest$bindir/pg_config" --sharedir)
		if [ "$got" != "$dest$sharedir" ]; then
			echo "build-release: the copied server is not relocatable (share directory $got)" >&2
			exit 1
		fi
		touch "$dest/.done"
	fi
	echo "$ver $dest$prefix"
done
