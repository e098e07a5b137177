"""Real clients on hybrid_index indexes: an ORM (SQLAlchemy + GeoAlchemy2)
with its ordinary spatial filters and distance ordering, and GDAL's ogrinfo
with a spatial filter.  Every access method's table answers exactly as a
GiST-indexed copy of the same data, and the plans use our index.

Run by tools/test-all.sh (suite "clients") against its cluster:
    PGHOST=<socket dir> PGPORT=<port> python -m pytest -q test/clients
"""
import os
import re
import subprocess
import time

import pytest
from geoalchemy2 import Geometry, WKTElement
from sqlalchemy import BigInteger, Column, create_engine, func, select, text
from sqlalchemy.orm import DeclarativeBase, Session

AMS = ["hyrtree", "efind", "lbgrid", "hgrid"]
DB = "hi_clients"
HOST = os.environ.get("PGHOST", "/tmp")
PORT = os.environ.get("PGPORT", "5432")


def dsn(db):
    return "postgresql+psycopg2://postgres@/%s?host=%s&port=%s" % (db, HOST, PORT)


@pytest.fixture(scope="module")
def engine():
    admin = create_engine(dsn("postgres"), isolation_level="AUTOCOMMIT")
    with admin.connect() as c:
        c.execute(text("DROP DATABASE IF EXISTS %s" % DB))
        c.execute(text("CREATE DATABASE %s" % DB))
    admin.dispose()
    eng = create_engine(dsn(DB))
    with eng.begin() as c:
        c.execute(text("CREATE EXTENSION postgis"))
        c.execute(text("CREATE EXTENSION hybrid_index"))
        c.execute(text("SELECT setseed(0.31)"))
        # points, small polygons, lines, NULL and EMPTY (SRID 4326, as GIS data is)
        c.execute(text("""
            CREATE TABLE src AS
            SELECT i::bigint AS id, ST_SetSRID(ST_MakePoint(random() * 40 - 20, random() * 30 + 30), 4326) AS geom
            FROM generate_series(1, 4000) i
            UNION ALL
            SELECT 10000 + i, ST_SetSRID(ST_Buffer(ST_MakePoint(random() * 40 - 20, random() * 30 + 30),
                                                   0.05 + random() * 0.5, 'quad_segs=2'), 4326)
            FROM generate_series(1, 500) i
            UNION ALL
            SELECT 20000 + i, ST_SetSRID(ST_MakeLine(ST_MakePoint(x, y), ST_MakePoint(x + 0.7, y + 0.2)), 4326)
            FROM (SELECT i, random() * 40 - 20 AS x, random() * 30 + 30 AS y
                  FROM generate_series(1, 300) i) s
            UNION ALL SELECT 30001, NULL UNION ALL SELECT 30002, 'SRID=4326;POINT EMPTY'::geometry"""))
        for am in AMS + ["gist"]:
            c.execute(text("CREATE TABLE places_%s (id bigint PRIMARY KEY, geom geometry(Geometry, 4326))" % am))
            c.execute(text("INSERT INTO places_%s SELECT * FROM src" % am))
            c.execute(text("CREATE INDEX places_%s_geom ON places_%s USING %s (geom)" % (am, am, am)))
            c.execute(text("ANALYZE places_%s" % am))
    yield eng
    eng.dispose()


class Base(DeclarativeBase):
    pass


def model(am):
    """An ordinary GeoAlchemy2 model of table places_<am>."""
    name = "Place_" + am
    if name not in MODELS:
        MODELS[name] = type(name, (Base,), {
            "__tablename__": "places_" + am,
            "id": Column(BigInteger, primary_key=True),
            "geom": Column(Geometry("GEOMETRY", srid=4326, spatial_index=False)),
        })
    return MODELS[name]


MODELS = {}

WINDOW = WKTElement("POLYGON((-5 40, 5 40, 5 48, -5 48, -5 40))", srid=4326)
POINT = WKTElement("POINT(2.35 48.85)", srid=4326)
BIG = WKTElement("POLYGON((-20 30, 20 30, 20 60, -20 60, -20 30))", srid=4326)


def queries(P):
    """The ORM's ordinary spatial filters and distance ordering, both argument orders."""
    return {
        "intersects": select(P.id).where(func.ST_Intersects(P.geom, WINDOW)),
        "intersects_reversed": select(P.id).where(func.ST_Intersects(WINDOW, P.geom)),
        "dwithin": select(P.id).where(P.geom.ST_DWithin(POINT, 1.5)),
        "contains": select(P.id).where(func.ST_Contains(WINDOW, P.geom)),
        "within": select(P.id).where(P.geom.ST_Within(BIG)),
        "covers_reversed": select(P.id).where(func.ST_Covers(BIG, P.geom)),
        "intersects_and_id": select(P.id).where(P.geom.ST_Intersects(WINDOW), P.id < 10000),
        "knn": select(P.id).order_by(P.geom.distance_centroid(POINT)).limit(25),
    }


def run(session, stmt):
    return [r[0] for r in session.execute(stmt)]


def explain(session, stmt):
    """The plan of the statement the ORM sends, with its parameters bound as the ORM binds them."""
    dialect = session.bind.dialect
    compiled = stmt.compile(dialect=dialect)
    params = {}
    for name, value in compiled.params.items():
        proc = compiled.binds[name].type._cached_bind_processor(dialect)
        params[name] = proc(value) if proc else value
    rows = session.connection().exec_driver_sql("EXPLAIN " + str(compiled), params)
    return "\n".join(r[0] for r in rows)


@pytest.mark.parametrize("am", AMS)
def test_orm_answers_equal_gist_and_use_our_index(engine, am):
    with Session(engine) as s:
        s.execute(text("SET enable_seqscan = off"))
        mine, gist = queries(model(am)), queries(model("gist"))
        for name in mine:
            got, want = run(s, mine[name]), run(s, gist[name])
            if name == "knn":
                # same order of true distances; ids tied at the boundary may differ
                d = "SELECT ST_Distance(geom, ST_GeomFromText('POINT(2.35 48.85)', 4326)) FROM places_gist WHERE id = :i"
                dist = lambda ids: [round(s.execute(text(d), {"i": i}).scalar(), 9) for i in ids]
                assert dist(got) == dist(want), (am, name)
            else:
                assert sorted(got) == sorted(want), (am, name)
                assert len(want) > 0, name
            plan = explain(s, mine[name])
            assert "places_%s_geom" % am in plan, (am, name, plan)


def test_orm_without_our_index_is_left_alone(engine):
    with Session(engine) as s:
        plan = explain(s, queries(model("gist"))["intersects"])
        assert "places_gist_geom" in plan and "st_intersects" in plan.lower()


def idx_scans(engine, am):
    with engine.connect() as c:
        return c.execute(text("SELECT idx_scan FROM pg_stat_user_indexes WHERE indexrelname = :n"),
                         {"n": "places_%s_geom" % am}).scalar()


def scanned_by(engine, am, before):
    """Whether the index was scanned since before (ogrinfo's backend reports
    its statistics at its exit, a moment after ogrinfo has its answer)."""
    for _ in range(30):
        if idx_scans(engine, am) > before:
            return True
        time.sleep(0.1)
    return False


def ogr_ids(table, spat):
    conn = "PG:host=%s port=%s dbname=%s user=postgres tables=%s" % (HOST, PORT, DB, table)
    out = subprocess.run(["ogrinfo", "-ro", "-q", "-spat"] + [str(v) for v in spat] + [conn, table],
                         capture_output=True, text=True, check=True).stdout
    # the primary key is the feature id
    return sorted(int(m) for m in re.findall(r"^OGRFeature\(\w+\):(\d+)$", out, re.M))


@pytest.mark.parametrize("am", AMS)
def test_ogrinfo_spatial_filter(engine, am):
    # ogrinfo reads through a cursor, planned for fast start: for the small
    # windows every index is scanned; for the large ones a table scan may win
    # (with GiST too, and which way is a matter of estimates), so there only
    # the answers are compared
    for spat, small in [((2, 48, 3, 49), True), ((-1, 44, 0, 45), True),
                        ((-5, 40, 5, 48), False), ((-20, 30, 20, 60), False)]:
        before = idx_scans(engine, am)
        got = ogr_ids("places_" + am, spat)
        want = ogr_ids("places_gist", spat)
        assert got == want and len(got) > 0, (am, spat)
        if small:
            assert scanned_by(engine, am, before), \
                "ogrinfo -spat %s did not scan places_%s_geom" % (spat, am)
