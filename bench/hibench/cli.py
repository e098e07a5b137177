"""bench/run: command line, machine set-up, and the order of things."""
import argparse
import datetime
import fnmatch
import json
import os
import shutil
import subprocess
import sys
import time

from . import presets, system
from .cluster import Cluster
from .db import DB, SQLError, lit
from .report import Report
from .runner import Runner, fmt_duration

BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO = os.path.dirname(BENCH)
DBNAME = "hibench"


def log(msg):
    print("bench: %s" % msg, flush=True)


def parse(argv):
    ap = argparse.ArgumentParser(prog="bench/run", description=(
        "FESTIval-style benchmarks of hybrid_index (run as root). Starts its own PostgreSQL 15 "
        "cluster, runs a preset's workloads through the SQL functions of schema hybrid_index_bench "
        "and writes bench/results/<name>.md, PNG plots and a CSV of the executions "
        "(bench/results/raw/, not committed). See bench/README.md."),
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="presets: " + ", ".join(presets.PRESETS))
    ap.add_argument("preset", nargs="?", default="default", help="default | gist-compare | hyrtree-placement | lbgrid-thesis | efind-paper | list")
    ap.add_argument("--scale", type=float, default=1.0, help="multiply dataset sizes (e.g. 0.1 for a quick try)")
    ap.add_argument("--reps", type=int, help="runs per measurement (default: the preset's, 3)")
    ap.add_argument("--query-reps", type=int,
                    help="runs of each query workload (default: --reps); builds and inserts run --reps times")
    ap.add_argument("--name", help="results name: bench/results/<name>.md (default: the preset's name)")
    ap.add_argument("--configs", help="only configurations matching these comma-separated patterns")
    ap.add_argument("--datasets", help="only datasets matching these comma-separated patterns")
    ap.add_argument("--page-sizes", help="hyrtree-placement, efind-paper: page sizes, e.g. 8192 or 4096,16384")
    ap.add_argument("--queries", help="hyrtree-placement, hgrid-thesis, lbgrid-thesis: comma-separated "
                    "query modes: probe (index only, no heap), sql (through the executor); "
                    "hyrtree-placement also probe-qd1 (probe with io_depth = 1, one page read at a time "
                    "as the paper's R-tree) and runs them in the order given, the others probes first. "
                    "Default probe,sql (hyrtree-placement), sql (the others)")
    ap.add_argument("--query-count", type=int, help="gist-compare: queries per query set (default 1,000)")
    ap.add_argument("--scale-windows", action="store_true", help="gist-compare: --query-count windows of "
                    "each size for the smallest dataset, proportionally fewer for larger ones (at least 5), "
                    "10-NN unchanged")
    ap.add_argument("--no-cold", action="store_true", help="skip the cold runs")
    ap.add_argument("--buffer-kb", type=int, help="hgrid-thesis: buffer_size of every index (kB; default 8192, "
                    "the thesis' 8 MB)")
    ap.add_argument("--epoch-size", type=int, help="hyrtree-placement: epoch_size of the HyR-tree variants "
                    "(node reads; default 250,000 x --scale, the paper's value at its scale)")
    ap.add_argument("--optane-capacity-kb", type=int, help="hyrtree-placement: optane_capacity of the sHR/rHyR/HyR "
                    "variants (kB; default unlimited)")
    ap.add_argument("--mem-mb", type=int, help="memory budget of every configuration (MB)")
    ap.add_argument("--slack-mb", type=int, help="cgroup limit = budget + 16 MB + slack (processes, page cache)")
    ap.add_argument("--no-cgroup", action="store_true", help="do not limit the server's memory")
    ap.add_argument("--fast-tier", default="auto", choices=["auto", "loop", "tmpfs", "dir"])
    ap.add_argument("--fast-size-mb", type=int, default=4096)
    ap.add_argument("--no-fio", action="store_true")
    ap.add_argument("--fio-runtime", type=int, default=5)
    ap.add_argument("--no-install", action="store_true", help="do not run make install first")
    ap.add_argument("--port", type=int, default=55470)
    ap.add_argument("--workdir", help="cluster and scratch files (default /tmp/hi_bench.<port>)")
    ap.add_argument("--data-dir", default=os.path.join(REPO, "data"), help="where tools/fetch-data.sh puts the data")
    ap.add_argument("--results-dir", default=os.path.join(BENCH, "results"))
    ap.add_argument("--reuse", action="store_true", help="keep the cluster and its loaded data from a previous run")
    ap.add_argument("--keep", action="store_true", help="leave the cluster running and the fast tier mounted")
    ap.add_argument("--report", metavar="RUN_NAME",
                    help="only write the report of a finished run again (from the kept cluster data)")
    return ap.parse_args(argv)


def select(preset, args):
    def match(name, patterns):
        return any(fnmatch.fnmatch(name, p.strip()) for p in patterns.split(","))
    if args.configs:
        preset.configs = [c for c in preset.configs if match(c.name, args.configs)]
        if not preset.configs:
            sys.exit("bench: no configuration matches %s" % args.configs)
        if preset.baseline not in [c.name for c in preset.configs]:
            preset.baseline = preset.configs[0].name
    if args.datasets:
        for ph in preset.phases:
            ph.datasets = [d for d in ph.datasets if match(d, args.datasets)]
    if args.reps:
        preset.reps = args.reps
    if args.query_reps:
        preset.query_reps = args.query_reps
    if args.no_cold:
        for ph in preset.phases:
            ph.cold = []
    if args.mem_mb:
        preset.budget.mb = args.mem_mb
    if args.slack_mb is not None:
        preset.budget.slack_mb = args.slack_mb
    for c in preset.configs:
        c.server = preset.server_settings(c)


def needed_datasets(preset):
    need = set()
    for ph in preset.phases:
        need |= set(ph.datasets)
        for w in ph.sequence + ph.queries:
            if preset.workload(w).source:
                need.add(preset.workload(w).source)
    changed = True
    while changed:
        changed = False
        for d in preset.datasets:
            if d.name in need and d.source and d.source not in need:
                need.add(d.source)
                changed = True
    return need


def check_machine():
    if os.geteuid() != 0:
        sys.exit("bench: run as root (the cluster runs as postgres; cold runs drop the OS page cache)")
    try:
        import pwd
        pwd.getpwnam("postgres")
    except KeyError:
        sys.exit("bench: no postgres OS user (run tools/install-deps.sh)")
    for tool in ("pg_config", "fio"):
        if not shutil.which(tool):
            sys.exit("bench: %s not found (run tools/install-deps.sh)" % tool)


def install():
    log("building and installing the extension (make && make install)")
    # objects built for another server version (pg_config on the PATH
    # changed since the last build) are built again
    version = subprocess.run(["pg_config", "--version"], capture_output=True, text=True).stdout.strip()
    stamp = os.path.join(REPO, ".bench-pg-version")
    old = open(stamp).read().strip() if os.path.exists(stamp) else None
    if old != version:
        subprocess.run("make -C %s clean" % REPO, shell=True, capture_output=True, text=True)
    p = subprocess.run("make -C %s -j2 && make -C %s install" % (REPO, REPO), shell=True,
                       capture_output=True, text=True)
    if p.returncode == 0:
        with open(stamp, "w") as f:
            f.write(version + "\n")
    if p.returncode != 0:
        sys.exit("bench: build failed:\n" + (p.stdout + p.stderr)[-4000:])


def fetch_data(args, preset, need, workdir):
    kinds = {d.kind for d in preset.datasets if d.name in need} & {"cities", "land"}
    paths = {}
    for kind in sorted(kinds):
        log("fetching %s (tools/fetch-data.sh)" % kind)
        p = subprocess.run(["bash", os.path.join(REPO, "tools", "fetch-data.sh"), args.data_dir, kind],
                           capture_output=True, text=True)
        if p.returncode != 0:
            sys.exit("bench: tools/fetch-data.sh failed:\n" + p.stderr[-3000:])
        src = os.path.join(args.data_dir, "cities500.csv" if kind == "cities" else "land_polygons.csv")
        # the server reads the file: give it a copy it can read
        dst = os.path.join(workdir, "data", os.path.basename(src))
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        if not os.path.exists(dst) or os.path.getsize(dst) != os.path.getsize(src):
            shutil.copyfile(src, dst)
        os.chmod(os.path.dirname(dst), 0o755)
        os.chmod(dst, 0o644)
        paths[kind] = dst
    return paths


def setup_database(db, cluster, fast):
    if db.value("SELECT count(*) FROM pg_database WHERE datname = %s" % lit(DBNAME), dbname="postgres") == "0":
        db.run("CREATE DATABASE %s" % DBNAME, dbname="postgres")
    # the benchmark schema is an extension of its own (hybrid_index_bench,
    # requires hybrid_index): production databases do not get it.  A database
    # kept (--reuse) from before has the schema inside hybrid_index itself.
    if db.value("SELECT count(*) FROM pg_extension WHERE extname = 'hybrid_index_bench'") == "0" and \
            db.value("SELECT count(*) FROM pg_namespace WHERE nspname = 'hybrid_index_bench'") != "0":
        sys.exit("bench: database %s holds the benchmark schema of an older hybrid_index, from before "
                 "hybrid_index_bench was an extension of its own: run without --reuse" % DBNAME)
    db.run("CREATE EXTENSION IF NOT EXISTS postgis; CREATE EXTENSION IF NOT EXISTS hybrid_index; "
           "CREATE EXTENSION IF NOT EXISTS hybrid_index_bench;")
    spaces = {"bench_flash": cluster.mkdir(os.path.join(cluster.workdir, "flash_ts"))}
    if fast is not None:
        spaces["bench_fast"] = cluster.mkdir(os.path.join(fast.mount, "ts"))
    else:
        spaces["bench_fast"] = cluster.mkdir(os.path.join(cluster.workdir, "fast_ts"))
    for name, path in spaces.items():
        exists = db.value("SELECT count(*) FROM pg_tablespace WHERE spcname = %s" % lit(name)) != "0"
        if exists and not any(e.startswith("PG_") for e in os.listdir(path)):
            # --reuse after the fast tier was mounted afresh (tmpfs, loop):
            # the catalog entry outlived its directory; it holds nothing (every
            # configuration's table and index are dropped), so make it again
            log("tablespace %s: its directory %s is new, creating the tablespace again" % (name, path))
            db.run("DROP TABLESPACE %s" % name)
            exists = False
        if not exists:
            db.run("CREATE TABLESPACE %s LOCATION %s" % (name, lit(path)))
    return spaces


def run_fio(args, preset, spaces, fast):
    res = {"runtime": args.fio_runtime}
    for tier, path in (("flash", spaces["bench_flash"]), ("fast", spaces["bench_fast"] if fast else None)):
        if not path:
            continue
        res[tier + "_path"] = path
        res[tier] = []
        for qd in (1, 32):
            log("fio: %s tier, random reads, QD%d" % (tier, qd))
            res[tier].append(system.fio_randread(path, qd, bs=preset.fio_bs, runtime=args.fio_runtime))
    return res


def main(argv):
    args = parse(argv)
    if args.preset == "list":
        for name, fn in presets.PRESETS.items():
            print("%-18s %s" % (name, fn().description))
        return 0
    if args.preset not in presets.PRESETS:
        sys.exit("bench: unknown preset %s (try: bench/run list)" % args.preset)
    check_machine()
    kw = {}
    if args.page_sizes and args.preset in ("hyrtree-placement", "efind-paper"):
        kw["page_sizes"] = tuple(int(x) for x in args.page_sizes.split(","))
    if args.queries and args.preset in ("hyrtree-placement", "hgrid-thesis", "lbgrid-thesis"):
        kw["queries"] = args.queries
    if args.query_count and args.preset == "gist-compare":
        if args.query_count < 1:
            sys.exit("bench: --query-count must be at least 1")
        kw["query_count"] = args.query_count
    if args.scale_windows and args.preset == "gist-compare":
        kw["scale_windows"] = True
    if args.buffer_kb and args.preset == "hgrid-thesis":
        kw["buffer_kb"] = args.buffer_kb
    if args.epoch_size and args.preset == "hyrtree-placement":
        kw["epoch_size"] = args.epoch_size
    if args.optane_capacity_kb and args.preset == "hyrtree-placement":
        kw["optane_capacity_kb"] = args.optane_capacity_kb
    preset = presets.PRESETS[args.preset](args.scale, **kw)
    select(preset, args)
    name = args.name or preset.name
    workdir = args.workdir or "/tmp/hi_bench.%d" % args.port
    started = time.time()
    env = {"started": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
           "command": "bench/run " + " ".join(argv), "port": args.port, "database": DBNAME}
    env["machine"] = system.machine_info("/tmp")
    if not args.no_install and not args.report:
        install()
    bindir = subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True).stdout.strip()
    need = needed_datasets(preset)
    os.makedirs(workdir, exist_ok=True)
    data_paths = {} if args.report else fetch_data(args, preset, need, workdir)

    cgroup = None
    limit = preset.budget.cgroup_mb()
    if limit and not args.no_cgroup and not args.report:
        cgroup = system.MemoryCgroup("hi_bench_%d" % args.port)
        if cgroup.create(limit):
            log("memory cgroup: %s" % cgroup.describe())
        else:
            log("WARNING: %s" % cgroup.error)
    fast = None
    if preset.fast_tier and not args.report:
        fast = system.FastTier(workdir, args.port)
        fast.setup(args.fast_size_mb, {"auto": "auto", "loop": "loop", "tmpfs": "tmpfs", "dir": "none"}[args.fast_tier])
        log("fast tier: %s" % fast.description)

    cluster = Cluster(workdir, args.port, bindir, cgroup if cgroup and cgroup.path else None)
    if not args.reuse and not args.report:
        if os.path.exists(os.path.join(cluster.datadir, "PG_VERSION")):
            cluster.stop()
        for d in ("pgdata", "flash_ts", "fast_ts", "sock"):
            shutil.rmtree(os.path.join(workdir, d), ignore_errors=True)
        if fast:
            shutil.rmtree(os.path.join(fast.mount, "ts"), ignore_errors=True)
    elif cluster.running():
        cluster.stop()
    cluster.init()
    if args.report:
        return report_again(args, preset, cluster, bindir, name)
    cluster.set_settings(preset.configs[0].server)
    log("starting the cluster (%s, port %d)" % (cluster.datadir, args.port))
    cluster.start()
    db = DB(os.path.join(bindir, "psql"), cluster.sockdir, args.port, DBNAME)
    env["socket"] = cluster.sockdir
    rc = 0
    try:
        spaces = setup_database(db, cluster, fast)
        env["fio"] = None if args.no_fio else run_fio(args, preset, spaces, fast)
        run_name = "%s-%s" % (name, datetime.datetime.now().strftime("%Y%m%d-%H%M%S"))
        runner = Runner(preset, db, cluster, run_name, data_paths, log=log)
        runner.load_datasets(need)
        phase_ds = {d for ph in preset.phases for d in ph.datasets}
        runner.define(phase_ds)
        steps = runner.plan(phase_ds)
        log("%d measured runs planned (run name %s)" % (sum(1 for s in steps if s[0] == "run"), run_name))
        runner.execute(steps)

        env.update(collect_env(db, preset, cgroup, fast, runner, spaces))
        env["duration"] = fmt_duration(time.time() - started)
        env["failures"], env["warnings"] = runner.failures, runner.warnings
        db.run("INSERT INTO hybrid_index_bench.run_info (run_name, preset, environment) VALUES (%s, %s, %s) "
               "ON CONFLICT (run_name) DO UPDATE SET environment = EXCLUDED.environment"
               % (lit(run_name), lit(preset.name), lit(json.loads(json.dumps(env, default=str)))))
        md, pngs, csv = Report(preset, db, run_name, env, runner.failures, runner.warnings,
                               args.results_dir, name).write()
        log("wrote %s" % md)
        for f in pngs + [csv]:
            log("wrote %s" % f)
        if runner.failures:
            log("%d runs failed (listed in the report)" % len(runner.failures))
            rc = 1
    finally:
        if not args.keep:
            cluster.stop()
            if fast:
                fast.teardown()
            if cgroup:
                cgroup.remove()
        else:
            log("cluster left running: psql -h %s -p %d -U postgres -d %s" % (cluster.sockdir, args.port, DBNAME))
    log("done in %s" % fmt_duration(time.time() - started))
    return rc


def collect_env(db, preset, cgroup, fast, runner, spaces):
    env = {}
    v = db.rows("SELECT current_setting('server_version') AS pg, "
                "(SELECT extversion FROM pg_extension WHERE extname = 'postgis') AS postgis, "
                "hybrid_index_bench.extension_version() AS ext")[0]
    env["server_version"] = "PostgreSQL " + v["pg"]
    env["postgis_version"] = v["postgis"]
    env["extension_version"] = v["ext"]
    p = subprocess.run(["git", "-C", REPO, "describe", "--always", "--dirty"], capture_output=True, text=True)
    env["git"] = p.stdout.strip() or "?"
    b = preset.budget
    if b.equal:
        env["memory"] = ("equal budget of %d MB per configuration: PostgreSQL's AMs get shared_buffers = %d MB; "
                         "hybrid_index AMs get shared_buffers = %d MB + hybrid_index.cache_size = %d MB "
                         "(heap in shared buffers, index in our cache)."
                         % (b.mb, b.mb, b.mb - int(b.mb * b.split), int(b.mb * b.split)))
    else:
        env["memory"] = ("shared_buffers = %d MB, hybrid_index.cache_size = %d MB for every configuration "
                         "(per-index budgets are reloptions)" % (b.shared_buffers_mb, b.cache_mb))
    env["cgroup"] = cgroup.describe() if cgroup else "not used (the preset does not compare equal budgets)"
    if cgroup and cgroup.path:
        env["cgroup"] += " = budget + %d MB for shared memory of the other cache + %d MB slack (backends, OS page cache)" % (
            b.MIN_CACHE_MB, b.slack_mb)
    env["cgroup_stats"] = cgroup.stats() if cgroup and cgroup.path else None
    env["cold"] = runner.cold_note or "server restarted and OS page cache dropped (sync; echo 3 > /proc/sys/vm/drop_caches) before every cold run"
    env["flash_tier"] = "tablespace bench_flash at %s (or the default tablespace where a configuration names none), on %s" % (
        spaces["bench_flash"], env.get("machine", {}).get("disk") or system.machine_info("/tmp").get("disk"))
    env["fast_tier"] = ("tablespace bench_fast at %s: %s" % (spaces["bench_fast"], fast.description)) if fast else "not used"
    emu = sorted({c.profile for c in preset.configs})
    env["emulation"] = ("device profiles used: %s (%s)" % (", ".join(emu), "; ".join(
        "%s: %s" % (r["name"], r["settings"] or "off") for r in db.rows(
            "SELECT name, settings FROM hybrid_index_bench.device_profile WHERE name IN (%s)"
            % ", ".join(lit(e) for e in emu)))))
    env["loadavg_end"] = open("/proc/loadavg").read().split()[:3]
    return env


def report_again(args, preset, cluster, bindir, name):
    """Write the report of a finished run again from the cluster's tables."""
    if not cluster.running():
        cluster.start()
    db = DB(os.path.join(bindir, "psql"), cluster.sockdir, args.port, DBNAME)
    try:
        rows = db.rows("SELECT environment FROM hybrid_index_bench.run_info WHERE run_name = %s" % lit(args.report))
        if not rows:
            sys.exit("bench: no run %s in %s" % (args.report, cluster.datadir))
        env = rows[0]["environment"]
        md, pngs, csv = Report(preset, db, args.report, env, env.get("failures", []), env.get("warnings", []),
                               args.results_dir, name).write()
        for f in [md] + pngs + [csv]:
            log("wrote %s" % f)
    finally:
        if not args.keep:
            cluster.stop()
    return 0
