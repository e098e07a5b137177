#!/usr/bin/env bash
# test/fuzz/sanitize.sh — the pg_regress suite (and optionally TAP tests)
# against an AddressSanitizer + UndefinedBehaviorSanitizer build of
# hybrid_index.
#
#   bash test/fuzz/sanitize.sh                                  (as root)
#   HI_SAN_TAP="test/t/030_bad_input.pl test/t/031_corruption.pl" bash test/fuzz/sanitize.sh
#
# PostgreSQL itself is not instrumented: the extension is built with
# -fsanitize=address,undefined (gcc), so hybrid_index.so needs libasan and
# libubsan, which the postmaster loads with it (shared_preload_libraries).
#
# Why not LD_PRELOAD=libasan.so (the usual way to put the ASan runtime
# first): on Debian 12 every PostgreSQL binary then deadlocks before main()
# — libp11-kit's constructor (pulled in through libpq/GnuTLS) calls
# newlocale() under glibc's setlocale lock, its malloc() lazily initializes
# ASan, and ASan's init calls dlerror() -> dcgettext(), which waits for the
# same lock. So the runtime is loaded by the dlopen() of our library, with
# ASAN_OPTIONS=verify_asan_link_order=0. What that checks: every access of
# our instrumented code to the stack, globals and shared memory against
# ASan's shadow (out-of-bounds on the stack and globals, use after scope),
# and all of UBSan (overflow, shifts, misalignment, bounds, bad bool/enum
# loads, NULL). What it cannot check: heap redzones, because malloc is not
# intercepted and palloc carves chunks out of big blocks anyway (PostgreSQL
# has no ASan hooks in its allocator; valgrind would be needed for that).
#
# halt_on_error=0 with -fsanitize-recover: one run collects every report.
# Reports go to the servers' stderr, i.e. their logs ($OUT/server.log, and
# $OUT/src/tmp_check/log/*.log for TAP nodes); they are collected into
# $OUT/reports.txt. A positive control (a tiny sanitized C function with a
# stack overflow and a bad shift) proves that reports do appear.
#
# To leave the system installation alone, PostgreSQL 15 is copied to
# $OUT/pg (it is relocatable) and the sanitizer build is installed there.
# Exit status: 0 if the suites passed and no sanitizer report was written.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
OUT=${HI_SAN_DIR:-/tmp/hi_sanitize}
PORT=${HI_SAN_PORT:-5497}
SYS_BIN=$(pg_config --bindir)

if [ "$(id -u)" != 0 ]; then
	echo "sanitize: run as root" >&2
	exit 1
fi
rm -rf "$OUT"
mkdir -p "$OUT"

# 1. private copy of PostgreSQL (bin, lib and share keep their relative layout)
PGROOT="$OUT/pg"
mkdir -p "$PGROOT/usr/lib/postgresql" "$PGROOT/usr/share/postgresql"
VER=$(basename "$(dirname "$SYS_BIN")")
cp -a "/usr/lib/postgresql/$VER" "$PGROOT/usr/lib/postgresql/"
cp -a "/usr/share/postgresql/$VER" "$PGROOT/usr/share/postgresql/"
ln -s /usr/include "$PGROOT/usr/include"
BIN="$PGROOT/usr/lib/postgresql/$VER/bin"
PG_CONFIG="$BIN/pg_config"

# 2. the source, built with the sanitizers and installed into the copy
SRC="$OUT/src"
mkdir -p "$SRC"
tar -C "$ROOT" --exclude=./.git --exclude=./data --exclude=./results --exclude=./tmp_check \
	--exclude=./log --exclude='*.o' --exclude='*.so' --exclude='*.bc' -cf - . | tar -C "$SRC" -xf -
SANFLAGS="-fsanitize=address,undefined -fsanitize-recover=address,undefined -fno-omit-frame-pointer"
echo "sanitize: building with $SANFLAGS"
if ! (cd "$SRC" && make -s -j2 PG_CONFIG="$PG_CONFIG" COPT="$SANFLAGS -O1 -g" \
	LDFLAGS_SL="$SANFLAGS" with_llvm=no && make -s install PG_CONFIG="$PG_CONFIG" with_llvm=no) >"$OUT/build.log" 2>&1; then
	tail -n 40 "$OUT/build.log"
	echo "sanitize: build failed"
	exit 1
fi
ldd "$PGROOT/usr/lib/postgresql/$VER/lib/hybrid_index.so" | grep -E "asan|ubsan" | sed 's/^/sanitize: linked /'

# a positive control: a sanitized function that overflows a stack array
mkdir -p "$OUT/control"
printf '%s\n' '#include "postgres.h"' '#include "fmgr.h"' 'PG_MODULE_MAGIC;' \
	'PG_FUNCTION_INFO_V1(san_control);' \
	'Datum san_control(PG_FUNCTION_ARGS)' \
	'{' \
	'	volatile int a[4] = {1, 2, 3, 4};' \
	'	PG_RETURN_INT32(a[PG_GETARG_INT32(0)] + (1 << PG_GETARG_INT32(1)));' \
	'}' >"$OUT/control/san_control.c"
gcc -fPIC -shared -O1 -g $SANFLAGS -I"$("$PG_CONFIG" --includedir-server)" \
	"$OUT/control/san_control.c" -o "$OUT/control/san_control.so" || exit 1
chown -R postgres: "$OUT"

# 3. a cluster whose postmaster loads the sanitized library
SANENV=(ASAN_OPTIONS="verify_asan_link_order=0:detect_leaks=0:halt_on_error=0:abort_on_error=0:handle_segv=1"
	UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=0")
DATA="$OUT/data"
SOCK="$OUT/sock"
mkdir -p "$SOCK"
chown postgres: "$SOCK"
as_pg() { runuser -u postgres -- env PATH="$BIN:$PATH" "$@"; }
as_pg initdb -D "$DATA" -U postgres -A trust -E UTF8 --no-locale >"$OUT/initdb.log" 2>&1 || {
	cat "$OUT/initdb.log"
	exit 1
}
cat >>"$DATA/postgresql.conf" <<EOF
port = $PORT
listen_addresses = ''
unix_socket_directories = '$SOCK'
shared_preload_libraries = 'hybrid_index'
hybrid_index.max_page_size = 32768
fsync = on
max_connections = 20
EOF
if ! as_pg env "${SANENV[@]}" pg_ctl -D "$DATA" -l "$OUT/server.log" -w -t 120 start >/dev/null; then
	tail -n 30 "$OUT/server.log"
	exit 1
fi
trap 'as_pg pg_ctl -D "$DATA" -m fast -w stop >/dev/null 2>&1' EXIT

# 4. the control must be reported
as_pg psql -h "$SOCK" -p "$PORT" -U postgres -XAtq -d postgres \
	-c "CREATE FUNCTION san_control(int, int) RETURNS int AS '$OUT/control/san_control.so' LANGUAGE C STRICT" \
	-c "SELECT san_control(6, 40)" -c "DROP FUNCTION san_control(int, int)" >/dev/null
sleep 1
if grep -q "ERROR: AddressSanitizer: stack-buffer-overflow" "$OUT/server.log" &&
	grep -q "runtime error: shift exponent" "$OUT/server.log"; then
	echo "sanitize: positive control reported by ASan and UBSan"
else
	echo "sanitize: POSITIVE CONTROL NOT REPORTED: the sanitizers are not working" >&2
	exit 1
fi
CONTROL_LINES=$(wc -l <"$OUT/server.log")

# 5. pg_regress (make installcheck) against it
echo "sanitize: running pg_regress"
(cd "$SRC" && as_pg env PGHOST="$SOCK" PGPORT="$PORT" PGUSER=postgres \
	make installcheck PG_CONFIG="$PG_CONFIG" TAP_TESTS= with_llvm=no) >"$OUT/regress.log" 2>&1
rc=$?
grep -E "^(test |ok |not ok |     )|tests? (passed|failed)" "$OUT/regress.log"
[ -s "$SRC/regression.diffs" ] && cp "$SRC/regression.diffs" "$OUT/"

# optional: TAP tests too (each makes its own clusters; they inherit the options)
if [ -n "${HI_SAN_TAP:-}" ]; then
	echo "sanitize: running TAP tests: $HI_SAN_TAP"
	(cd "$SRC" && as_pg env "${SANENV[@]}" make installcheck PG_CONFIG="$PG_CONFIG" REGRESS= ISOLATION= \
		PROVE_TESTS="$HI_SAN_TAP" with_llvm=no) >"$OUT/tap.log" 2>&1 || rc=1
	grep -E "\.pl \.\.|Result:" "$OUT/tap.log"
fi
as_pg pg_ctl -D "$DATA" -m fast -w stop >/dev/null 2>&1
trap - EXIT

# 6. reports: what the sanitizers wrote to the server logs (minus the control)
{
	tail -n +"$((CONTROL_LINES + 1))" "$OUT/server.log" | sed "s|^|server.log: |"
	for f in "$SRC"/tmp_check/log/*.log; do
		[ -e "$f" ] && sed "s|^|$(basename "$f"): |" "$f"
	done
} | grep -E -A 25 "runtime error|ERROR: AddressSanitizer" >"$OUT/reports.txt" || true
n=$(grep -cE "runtime error|ERROR: AddressSanitizer" "$OUT/reports.txt" || true)
echo "sanitize: suites exit $rc; $n sanitizer report(s) (see $OUT/reports.txt)"
if [ "$n" -gt 0 ]; then
	grep -hoE "(runtime error|ERROR: AddressSanitizer).*" "$OUT/reports.txt" | sort | uniq -c | sort -rn | head -n 30
	exit 1
fi
[ $rc = 0 ]
