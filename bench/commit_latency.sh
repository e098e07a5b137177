#!/usr/bin/env bash
# commit_latency.sh LABEL — one client's commit latency: pgbench -c 1 -T 8,
# one single-row INSERT per transaction, synchronous_commit = on, into a
# 100k-row table with no index, GiST, and each access method (3 runs each),
# on a fresh cluster of its own.  Prints "LABEL index run latency_ms".  It
# measures the installed build: to compare two commits, install each
# (make install in its checkout) and run this once per build, alone on a
# quiet machine.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PORT=56320; DATA=/tmp/hi_single.$PORT
source bench/lib.sh
bench_cluster "shared_buffers = 256MB
synchronous_commit = on
fsync = on"
script=$(mktemp /tmp/hi_commit_latency.XXXXXX.sql)
echo "INSERT INTO w (geom) VALUES (ST_MakePoint(random() * 1000, random() * 1000));" > "$script"
chmod 644 "$script"
for v in none gist hyrtree efind lbgrid hgrid; do
  for r in 1 2 3; do
    q "DROP TABLE IF EXISTS w; CREATE TABLE w (id bigserial, geom geometry); INSERT INTO w (geom) SELECT ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 100000)"
    [ $v = none ] || q "CREATE INDEX ON w USING $v (geom)"
    q "CHECKPOINT"
    lat=$(pgbench -n -c 1 -T 8 -f "$script" 2>/dev/null | sed -n 's/^latency average = \([0-9.]*\) ms/\1/p')
    echo "${1:-build} $v $r $lat"
  done
done
bench_server stop
rm -f "$script"
