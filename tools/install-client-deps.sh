#!/usr/bin/env bash
# install-client-deps.sh — the real client libraries the client tests use
# (test/clients/): SQLAlchemy + GeoAlchemy2 over psycopg2, and pytest, pinned,
# from PyPI into a virtual environment of Debian's python3 (python3-venv, and
# gdal-bin for ogrinfo, come from tools/install-deps.sh). Idempotent; prints
# the environment's python on its last line.
#
#   bash tools/install-client-deps.sh [venv dir]   (default /var/tmp/hybrid_index_clients)
set -euo pipefail
VENV=${1:-/var/tmp/hybrid_index_clients}
PKGS=(sqlalchemy==2.1.9 geoalchemy2==0.20.0 psycopg2-binary==2.9.13 pytest==9.2.0)

if [ ! -x "$VENV/bin/python" ]; then
	/usr/bin/python3 -m venv "$VENV" >&2
fi
if ! "$VENV/bin/python" - "${PKGS[@]}" <<'PY' >/dev/null 2>&1; then
import sys
from importlib.metadata import version
for spec in sys.argv[1:]:
    name, want = spec.split("==")
    assert version(name) == want, spec
PY
	"$VENV/bin/pip" install -q --disable-pip-version-check "${PKGS[@]}" >&2
fi
echo "$VENV/bin/python"
