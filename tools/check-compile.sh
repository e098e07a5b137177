#!/usr/bin/env bash
# check-compile.sh — compile every src/ file against the server headers of a
# PostgreSQL version that cannot run here (17, 19), warnings as errors.
#
#   bash tools/check-compile.sh 17|19     (headers from tools/build-pg.sh --headers)
#   bash tools/check-compile.sh DIR       (any server include directory)
#
# The flags are PGXS's for PostgreSQL 18 (the warnings PostgreSQL itself
# builds with) plus our Makefile's, -Werror. Those headers were made for
# Debian 13 (glibc 2.41, gcc 14), newer than Debian 12's: exactly two shims,
# force-included here and nowhere else:
#   - strlcpy/strlcat: their pg_config.h says the C library has them
#     (glibc 2.38+), so port.h does not declare them; declared here as
#     PostgreSQL's own src/port declares them;
#   - typeof_unqual (gcc 14, used by copyObject in 19): spelt with gcc 12's
#     __typeof__ of a comma expression, whose type is unqualified.
# Objects go to a temporary directory; nothing in the tree changes.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
arg=${1:-}
case "$arg" in
17 | 19) inc=$(bash "$ROOT/tools/build-pg.sh" --headers "$arg") || exit 1 ;;
/*) inc=$arg ;;
*)
	echo "usage: $0 17|19|<server include dir>" >&2
	exit 2
	;;
esac
[ -f "$inc/pg_config.h" ] || {
	echo "check-compile: no pg_config.h in $inc" >&2
	exit 1
}
version=$(sed -n 's/^#define PG_VERSION_NUM \([0-9]*\)/\1/p' "$inc/pg_config.h")

tmp=$(mktemp -d /tmp/hybrid_index_cc.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/shim.h" <<'EOF'
/* check-compile.sh only: what Debian 13's headers expect of glibc and gcc */
#include <stddef.h>
extern size_t strlcpy(char *dst, const char *src, size_t siz);
extern size_t strlcat(char *dst, const char *src, size_t siz);
#define typeof_unqual(x) __typeof__(((void) 0, (x)))
EOF

FLAGS=(-Wall -Wmissing-prototypes -Wpointer-arith -Wdeclaration-after-statement -Werror=vla
	-Wendif-labels -Wmissing-format-attribute -Wimplicit-fallthrough=3 -Wcast-function-type
	-Wshadow=compatible-local -Wformat-security -fno-strict-aliasing -fwrapv
	-fexcess-precision=standard -Wno-format-truncation -Wno-stringop-truncation -O2
	-fPIC -fvisibility=hidden -std=gnu11 -Werror -D_GNU_SOURCE)

cd "$ROOT"
files=$(ls src/*.c src/*/*.c)
n=0
bad=0
for f in $files; do
	n=$((n + 1))
	if ! gcc "${FLAGS[@]}" -include "$tmp/shim.h" -I"$ROOT/src" -I"$inc" \
		-c "$f" -o "$tmp/$(echo "$f" | tr / _).o" 2>"$tmp/err"; then
		bad=$((bad + 1))
		cat "$tmp/err"
	fi
done
echo "check-compile: PostgreSQL $version headers ($inc): $((n - bad)) of $n files compiled without warnings"
[ "$bad" -eq 0 ]
