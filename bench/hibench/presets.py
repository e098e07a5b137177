"""Named experiments.  A preset is data (datasets, query sets, workloads,
configurations, phases); adding an access method is adding Config rows
(see bench/README.md).  scale multiplies dataset sizes."""
from .model import Budget, Config, Dataset, Phase, Preset, QuerySet, Workload

WINDOW_AREAS = (0.001, 0.01, 0.1)


def _n(x, scale, least=1000):
    return max(least, int(round(x * scale)))


def _query_sets(ds, nq, seed0, knn=True, groups=(), uniform=(), nq_knn=None):
    """Windows of 0.001/0.01/0.1 % following the data (and uniform ones of the
    areas in `uniform`), 10-NN points (nq_knn of them, default nq), point
    groups [(n, group size)]."""
    sets, wls = [], []
    for i, a in enumerate(WINDOW_AREAS):
        qs = "w%s:%s" % (a, ds)
        sets.append(QuerySet(qs, ds, "window", nq, area_pct=a, distribution="data", seed=seed0 + i))
        wls.append(Workload("range_%s:%s" % (a, ds), "range", query_set=qs, label="range %s %%" % a))
    for i, a in enumerate(uniform):
        qs = "w%su:%s" % (a, ds)
        sets.append(QuerySet(qs, ds, "window", nq, area_pct=a, distribution="uniform", seed=seed0 + 4 + i))
        wls.append(Workload("range_%su:%s" % (a, ds), "range", query_set=qs, label="range %s %% (uniform)" % a))
    if knn:
        sets.append(QuerySet("knn10:%s" % ds, ds, "knn", nq_knn or nq, k=10, distribution="data", seed=seed0 + 7))
        wls.append(Workload("knn10:%s" % ds, "knn", query_set="knn10:%s" % ds, label="10-NN"))
    for j, (n, g) in enumerate(groups):
        sets.append(QuerySet("group%d:%s" % (g, ds), ds, "point_group", n, group=g, seed=seed0 + 8 + j))
        wls.append(Workload("group%d:%s" % (g, ds), "point_group", query_set="group%d:%s" % (g, ds),
                            label="groups of %d point%s" % (g, "s" if g > 1 else "")))
    return sets, wls


def default(scale=1.0):
    n = _n(200000, scale)
    ds = "pts%dk" % (n // 1000)
    f = min(scale, 1)
    sets, qwl = _query_sets(ds, _n(300, f, 50), 20, uniform=(0.01,),
                            groups=((_n(300, f, 20), 1), (_n(100, f, 20), 10), (_n(20, f, 10), 100)))
    configs = [
        Config("hyrtree", "hyrtree", {"placement": "none"}, label="hyrtree (none)"),
        Config("hyrtree-upper", "hyrtree", {"placement": "upper", "optane_tablespace": "bench_fast"},
               label="hyrtree (upper)"),
        Config("gist", "gist"),
        Config("spgist", "spgist"),
        Config("brin", "brin"),
    ]
    wls = [Workload("build", "build", label="CREATE INDEX"),
           Workload("insert1k-autocommit", "insert", source="ins1k", params={"commit_every": 1},
                    label="1k inserts, one transaction each")] + qwl
    cold = [w.name for w in qwl if w.name.startswith(("range_0.01:", "knn10:"))]
    return Preset(
        "default", "Small comparison of every access method on %d real-derived points "
        "(GeoNames cities500, jittered): CREATE INDEX, 1,000 single-row insert transactions, "
        "range queries at 0.001/0.01/0.1 %% of the extent (following the data; 0.01 %% also uniform), "
        "10-NN, groups of 1/10/100 points; warm and cold; "
        "equal memory budget." % n,
        datasets=[Dataset("cities", "cities"),
                  Dataset(ds, "jittered", n=n, source="cities", seed=11, radius=0.05),
                  Dataset("ins1k", "jittered", n=1000, source="cities", seed=12, radius=0.05)],
        query_sets=sets, workloads=wls, configs=configs,
        phases=[Phase([ds], sequence=["build", "insert1k-autocommit"], queries=[w.name for w in qwl],
                      cold=cold)],
        reps=3, baseline="gist", budget=Budget(mb=128, split=0.5, slack_mb=256),
        skip={("spgist", "knn10:" + ds)} | {("brin", w.name) for w in qwl if not w.name.startswith("range_0.01:")},
        fast_tier=True,
        notes=["SP-GiST and BRIN skip 10-NN: PostGIS 3.3 has no kNN ordering for them "
               "(it would be a sequential scan and sort).",
               "BRIN runs only the 0.01 % range queries: on data in random physical order each "
               "query reads most of the table (tens of ms), which would take most of the time budget."])


GC_AMS = ("hyrtree", "efind", "lbgrid", "hgrid")


def gist_compare(scale=1.0, query_count=1000, scale_windows=False):
    """Issue 21, item 5: the defaults of all four access methods against GiST
    and SP-GiST on 1M, 5M and 20M real-derived points.  query_count: queries
    per query set (1,000).  scale_windows: the smallest dataset gets
    query_count windows of each size, a larger one fewer in proportion (at
    least 5), so that every run returns about as many rows (the 0.1 %
    windows of 20M points return 20,000 rows each)."""
    sizes = [_n(1000000, scale), _n(5000000, scale), _n(20000000, scale)]
    names = ["jit%s" % (("%dm" % (s // 1000000)) if s % 1000000 == 0 else "%dk" % (s // 1000)) for s in sizes]
    nins = _n(50000, scale, 100)
    datasets = [Dataset("cities", "cities"),
                Dataset("ins50k", "jittered", n=nins, source="cities", seed=3, radius=0.05),
                Dataset("ins2k", "jittered", n=2000, source="cities", seed=4, radius=0.05)]
    # a parallel build: one worker plus the leader, whatever the table's size
    parallel = {"max_parallel_maintenance_workers": "1", "min_parallel_table_scan_size": "0"}
    sets, wls, phases = [], [Workload("build", "build", params={"settings": {"max_parallel_maintenance_workers": "0"}},
                                      label="CREATE INDEX (serial)"),
                             Workload("build-parallel", "build", params={"settings": parallel},
                                      label="CREATE INDEX (one worker and the leader)"),
                             Workload("insert50k", "insert", source="ins50k", params={"per_row": False},
                                      label="one INSERT of {:,} rows".format(nins)),
                             Workload("insert2k-autocommit", "insert", source="ins2k",
                                      params={"commit_every": 1},
                                      label="2k single-row INSERTs, one transaction each")], []
    for i, (n, ds) in enumerate(zip(sizes, names)):
        datasets.append(Dataset(ds, "jittered", n=n, source="cities", seed=1 + i, radius=0.05))
        nw = max(5, query_count * sizes[0] // n) if scale_windows else query_count
        s, q = _query_sets(ds, nw, 100 + 10 * i, nq_knn=query_count)
        sets += s
        wls += q
        qn = [w.name for w in q]
        phases.append(Phase([ds], sequence=["build-parallel", "build", "insert50k", "insert2k-autocommit"],
                            queries=qn, cold=qn))
    from .summaries import gist_compare_summary
    configs = [Config(am, am, label=am) for am in GC_AMS] + [Config("gist", "gist", label="GiST"),
                                                            Config("spgist", "spgist", label="SP-GiST")]
    skip = {(c, "build-parallel") for c in ("gist", "spgist")} | \
        {("spgist", "knn10:" + ds) for ds in names}
    return Preset(
        "gist-compare", "The four access methods with default settings against PostGIS GiST and SP-GiST "
        "on %s real-derived points: CREATE INDEX serial and with one parallel worker, one %s-row INSERT, "
        "2k single-row insert transactions, %s range queries at 0.001/0.01/0.1 %% of the extent "
        "(following the data) and %s 10-NN, warm and cold, index sizes fresh and after the inserts; "
        "same memory budget." % (", ".join("{:,}".format(n) for n in sizes), "{:,}".format(nins),
                                 "/".join("{:,}".format(max(5, query_count * sizes[0] // n)) for n in sizes)
                                 if scale_windows else "{:,}".format(query_count),
                                 "{:,}".format(query_count)),
        datasets=datasets, query_sets=sets, workloads=wls, configs=configs,
        phases=phases, reps=3, baseline="gist", budget=Budget(mb=256, split=0.5, slack_mb=256),
        skip=skip, summary=gist_compare_summary,
        notes=["Targets (issue 21), ratios to GiST of medians: warm range <= 1.0x at every selectivity; "
               "10-NN <= 1.0x; serial build <= 0.5x, parallel build <= 0.35x; the 50k-row INSERT <= 1.0x; "
               "size after the build <= 1.2x; size growth through the inserts <= 1.2x GiST's; single-row "
               "commits: time <= 1/0.9x (issue 18's TPS >= 0.9x).",
               "GiST and SP-GiST build serially in PostgreSQL 15 (no parallel build); SP-GiST skips 10-NN: "
               "PostGIS 3.3 has no kNN ordering for it.",
               "Every access method runs with its defaults: no reloptions (hyrtree's placement, efind's and "
               "the grids' buffers as they come)."])


PROBE_LABEL = "index only (no heap)"


def _modes(queries, allowed=("probe", "sql"), ordered=False):
    """queries: comma-separated query modes; in the order given if ordered,
    else in the order of allowed (probes first)"""
    modes = []
    for m in (m.strip() for m in queries.split(",")):
        if m and m not in modes:
            modes.append(m)
    if not modes or set(modes) - set(allowed):
        raise ValueError("queries must be a comma-separated list of %s, not %r" % ("/".join(allowed), queries))
    return modes if ordered else [m for m in allowed if m in modes]


# probe: the index alone, batched (a level's pages per I/O batch); probe-qd1:
# the same with one page read per batch; sql: through the executor
HYRTREE_MODES = ("probe", "probe-qd1", "sql")


def hyrtree_placement(scale=1.0, page_sizes=(4096, 8192, 16384), queries="probe,sql", epoch_size=None,
                      optane_capacity_kb=None):
    """Issue 4: R-tree on flash / on the fast tier / sHR-tree / rHyR-tree / HyR-tree,
    with and without the paper's device profiles; construction by insertion and
    5,000 range queries with the data's skew; 4 MB cache per index.  queries:
    probe (the index alone, hybrid_index_probe, as the paper measures), sql
    (SELECT ... WHERE geom && window through the executor) or both, probes
    first.  epoch_size: node reads per epoch of the HyR-tree variants (default
    the paper's 250,000, times scale); optane_capacity_kb: fast-tier capacity of
    the hybrid variants (default unlimited)."""
    from .summaries import hyrtree_summary
    n = _n(5000000, scale)
    tag = "%dm" % (n // 1000000) if n % 1000000 == 0 else "%dk" % (n // 1000)
    datasets = [Dataset("cities", "cities"),
                Dataset("uniform" + tag, "uniform", n=n, seed=31),
                Dataset("gaussian" + tag, "gaussian", n=n, seed=32),
                Dataset("clustered" + tag, "jittered", n=n, source="cities", seed=33, radius=0.01)]
    epoch = epoch_size or max(1000, int(250000 * scale))
    configs = []
    for ps in page_sizes:
        k = ps // 1024
        common = {"page_size": ps, "buffer_size": 4096}
        hyb = dict(common, optane_tablespace="bench_fast", epoch_size=epoch)
        if optane_capacity_kb:
            hyb["optane_capacity"] = optane_capacity_kb
        variants = [
            ("flash", dict(common, placement="none"), "bench_flash", "R-tree on flash"),
            ("fast", dict(common, placement="none"), "bench_fast", "R-tree on fast tier"),
            ("upper", dict(hyb, placement="upper"), "bench_flash", "sHR-tree"),
            ("random", dict(hyb, placement="random"), "bench_flash", "rHyR-tree"),
            ("wma", dict(hyb, placement="wma"), "bench_flash", "HyR-tree"),
        ]
        for emu in (True, False):
            for v, rel, ts, label in variants:
                # the fast-tier R-tree's file is the index's own ("flash") tier:
                # under emulation it gets the fast device's latencies
                configs.append(Config("%s-%dk%s" % (v, k, "-emu" if emu else ""), "hyrtree", rel,
                                      tablespace=ts, profile="paper" if emu else "off",
                                      gucs=FAST_AS_FLASH if emu and v == "fast" else {},
                                      label="%s %dK%s" % (label, k, " emu" if emu else "")))
    sets, wls, phases = [], [Workload("build-insert", "build_insert", label="construction by insertion")], []
    for i, d in enumerate(datasets[1:]):
        qs = "w0.01:%s" % d.name
        sets.append(QuerySet(qs, d.name, "window", 5000, area_pct=0.01, distribution="data", seed=300 + i))
        seq = ["build-insert"]
        for m in _modes(queries, HYRTREE_MODES, ordered=True):
            if m == "probe":
                wls.append(Workload("range-probe:%s" % d.name, "range_probe", query_set=qs,
                                    params={"warmup": False},
                                    label="5,000 range queries (0.01 %%), %s" % PROBE_LABEL))
                seq.append("range-probe:%s" % d.name)
            elif m == "probe-qd1":
                # the paper's R-tree reads one node at a time (O_DIRECT, queue
                # depth 1); io_depth = 1 makes every page read its own batch
                wls.append(Workload("range-probe-qd1:%s" % d.name, "range_probe", query_set=qs,
                                    params={"warmup": False, "settings": {"hybrid_index.io_depth": "1"}},
                                    label="5,000 range queries (0.01 %%), %s, one page read at a time "
                                          "(io_depth = 1, as the paper's R-tree)" % PROBE_LABEL))
                seq.append("range-probe-qd1:%s" % d.name)
            else:
                wls.append(Workload("range:%s" % d.name, "range", query_set=qs, params={"warmup": False},
                                    label="5,000 range queries (0.01 %), SQL"))
                seq.append("range:%s" % d.name)
        phases.append(Phase([d.name], sequence=seq))
    return Preset(
        "hyrtree-placement", "Issue 4 (HyR-tree paper, Figs. 7 and 8) at this machine's scale: "
        "%s points per dataset, page sizes %s, 4 MB cache per index, construction by insertion, "
        "5,000 range queries following the data; with the paper's device profiles (-emu) and "
        "without." % ("{:,}".format(n), "/".join("%dK" % (p // 1024) for p in page_sizes)),
        datasets=datasets, query_sets=sets, workloads=wls, configs=configs, phases=phases,
        reps=3, baseline="flash-8k-emu" if 8192 in page_sizes else configs[0].name,
        budget=Budget(equal=False, shared_buffers_mb=256, cache_mb=256), fast_tier=True,
        drop_after_config=True, summary=hyrtree_summary, direct_io=True,
        notes=["R-tree on the fast tier = placement none with the index's own tablespace on the fast "
               "device: its pages count as the \"flash\" tier's (the tier of the index's tablespace); "
               "with emulation that file gets the fast device's latencies (flash_read_latency = 7, "
               "flash_write_latency = 18, flash_parallelism = 4 for that configuration).","Every run builds the index by insertion and then runs the queries once, "
               "so the placement learns during the measured queries, as in the paper.",
               "Epoch size %d node reads (the paper: 250,000 at its scale)." % epoch,
               "Query runs in this order after each build: %s. Probe runs (%s) call "
               "hybrid_index_probe(index, window, '&&') once per window: the index search alone, "
               "counting the TIDs it returns, no heap fetch and no recheck, as the paper (and "
               "FESTIval) time the index; SQL runs are SELECT count(*), sum(id) ... WHERE geom && "
               "window through the executor (bitmap heap scan). A later run finds the placement "
               "the earlier one learned." % (", ".join(_modes(queries, HYRTREE_MODES, ordered=True)), PROBE_LABEL)])


PRESETS = {"default": default, "gist-compare": gist_compare, "hyrtree-placement": hyrtree_placement}


MIXES = (0, 20, 40, 60, 80, 100)        # insert share of the thesis' I/S workloads (Table 3.2)
KNN_KS = (10, 100, 1000)
GROUPS = (1, 10, 100)


def lbgrid_thesis(scale=1.0, queries="sql"):
    """Issue 6: the thesis' section 3.5 (LB-Grid, GFFM) at this machine's scale.
    queries: sql (default), probe or probe,sql: probe adds the range queries
    with and without batched reads on the index alone (hybrid_index_probe,
    no heap fetch, no recheck)."""
    from .summaries import lbgrid_summary
    modes = _modes(queries)
    n = _n(5000000, scale)
    f = min(scale, 1)
    tag = "%dm" % (n // 1000000) if n % 1000000 == 0 else "%dk" % (n // 1000)
    ops = _n(20000, scale, 500)
    # every mix of every rep takes fresh rows: ops x (0+.2+...+1 = 3) x 3 reps
    nsrc = 9 * ops
    buf_mb = max(4, min(16, int(round(16 * scale))))
    buf_kb = buf_mb * 1024
    # builds stay within maintenance_work_mem (64 MB here): the cgroup
    # leaves room for that, the indexes' shared structures, the backends
    # and a little page cache (128 MB: an lbgrid build at 5M points was
    # OOM-killed once, with another 5M-point index's structures resident)
    slack_mb = 256
    kinds = [("real", "jittered", dict(source="cities", radius=0.05)),
             ("uniform", "uniform", {}), ("gaussian", "gaussian", {})]
    datasets = [Dataset("cities", "cities")]
    sets, wls, phases = [], [Workload("build", "build", label="CREATE INDEX (initial load)")], []
    nq = _n(1000, f, 100)
    nk = {10: _n(500, f, 50), 100: _n(200, f, 30), 1000: _n(50, f, 10)}
    ng = _n(50, f, 10)
    for i, (kname, kind, extra) in enumerate(kinds):
        ds = "%s%s" % (kname, tag)
        src = "%s-ins%s" % (kname, tag)
        datasets.append(Dataset(ds, kind, n=n, seed=61 + i, **extra))
        datasets.append(Dataset(src, kind, n=nsrc, seed=71 + i, **extra))
        seed = 600 + 20 * i
        q = []
        qs = "w0.01:%s" % ds
        sets.append(QuerySet(qs, ds, "window", nq, area_pct=0.01, distribution="data", seed=seed))
        if "probe" in modes:
            q += [Workload("range-probe:%s" % ds, "range_probe", query_set=qs,
                           label="range 0.01 %%, batched reads (P-RQ), %s" % PROBE_LABEL),
                  Workload("range-probe-nobatch:%s" % ds, "range_probe", query_set=qs,
                           params={"settings": {"hybrid_index.lbgrid_batch_size": "1"}},
                           label="range 0.01 %%, no batching (RQ), %s" % PROBE_LABEL)]
        if "sql" in modes:
            q += [Workload("range:%s" % ds, "range", query_set=qs, label="range 0.01 %, batched reads (P-RQ)"),
                  Workload("range-nobatch:%s" % ds, "range", query_set=qs,
                           params={"settings": {"hybrid_index.lbgrid_batch_size": "1"}},
                           label="range 0.01 %, no batching (RQ)")]
        for j, k in enumerate(KNN_KS):
            qs = "knn%d:%s" % (k, ds)
            sets.append(QuerySet(qs, ds, "knn", nk[k], k=k, distribution="data", seed=seed + 1 + j))
            q += [Workload("knn%d:%s" % (k, ds), "knn", query_set=qs, label="%d-NN, prefetch (PR)" % k),
                  Workload("knn%d-nopf:%s" % (k, ds), "knn", query_set=qs,
                           params={"settings": {"hybrid_index.lbgrid_knn_prefetch": "off"}},
                           label="%d-NN, no prefetch" % k)]
        for j, g in enumerate(GROUPS):
            qs = "group%d:%s" % (g, ds)
            sets.append(QuerySet(qs, ds, "point_group", ng * 100 // g, group=g, seed=seed + 5 + j))
            q.append(Workload("group%d:%s" % (g, ds), "point_group", query_set=qs, params={"op": "~="},
                              label="group point queries, %d point%s (geom ~= ANY)" % (g, "s" if g > 1 else "")))
        qs = "pts:%s" % ds
        sets.append(QuerySet(qs, ds, "knn", ops, k=1, distribution="data", seed=seed + 9))
        mixes = [Workload("mix%d:%s" % (m, ds), "mix", query_set=qs, source=src,
                          params={"ops": ops, "insert_ratio": m / 100.0, "search": "point", "keep": True},
                          label="I/S %d/%d (%s ops)" % (m, 100 - m, "{:,}".format(ops))) for m in MIXES]
        sets_w = q + mixes
        wls += sets_w
        phases.append(Phase([ds], sequence=["build"], queries=[w.name for w in sets_w]))
    lb = {"buffer_size": buf_kb}
    configs = [Config("lbgrid", "lbgrid", dict(lb), label="LB-Grid"),
               Config("gffm", "lbgrid", dict(lb, logging="off"), label="GFFM"),
               Config("hyrtree", "hyrtree", {"placement": "none", "buffer_size": buf_kb}, label="hyrtree (none)"),
               Config("gist", "gist", label="GiST")]
    lbonly = [w.name for w in wls if "-nobatch:" in w.name or "-nopf:" in w.name]
    return Preset(
        "lbgrid-thesis", "Issue 6 (thesis section 3.5: LB-Grid and GFFM) at this machine's scale: "
        "%s points per dataset (real-derived, uniform, gaussian), bulk-loaded; range queries (0.01 %%) "
        "with and without batched reads; 10/100/1000-NN with and without prefetch; group point queries "
        "of 1/10/100 points; then the insert/search mixes 0/100 ... 100/0 of %s operations each (searches "
        "are exact point queries), run one after the other on the same index; LB-Grid, GFFM "
        "(logging = off), hyrtree (placement none) and GiST with %d MB of index buffer each."
        % ("{:,}".format(n), "{:,}".format(ops), buf_mb),
        datasets=datasets, query_sets=sets, workloads=wls, configs=configs, phases=phases,
        reps=3, baseline="gist", budget=Budget(mb=2 * buf_mb, split=0.5, slack_mb=slack_mb),
        skip={(c, w) for c in ("hyrtree", "gist") for w in lbonly},
        summary=lbgrid_summary, direct_io=True,
        notes=["Index buffer: %d MB for every configuration (the thesis: 16 MB at 50M-500M points). "
               "lbgrid/GFFM: reloption buffer_size (75 %% directories / 25 %% buckets, cold lists of "
               "128 pages); hyrtree: buffer_size (its share of the page cache); GiST: shared_buffers = "
               "%d MB (heap and index), the others shared_buffers = %d MB for the heap; the server runs "
               "in a memory cgroup of %d MB + 16 MB + %d MB (CREATE INDEX stays within "
               "maintenance_work_mem = 64 MB for every access method; what the slack leaves to the OS "
               "page cache holds part of GiST's index and of the heap). At 5M points the heap does not "
               "fit: the SQL range sets then read most heap rows from the disk (one configuration's "
               "1,000 queries took over 6 minutes and were stopped); --queries probe runs the range "
               "sets on the index alone."
               % (buf_mb, 2 * buf_mb, buf_mb, 2 * buf_mb, slack_mb),
               "Mixes run in the order 0/100, 20/80, ..., 100/0 on the index the queries ran on, each "
               "taking fresh rows of the insert source (the thesis starts each from the loaded index); "
               "a search is `geom ~= point` for a point of the dataset.",
               "Unbatched range queries and kNN without prefetch set hybrid_index.lbgrid_batch_size = 1 "
               "and hybrid_index.lbgrid_knn_prefetch = off for the run; they apply to lbgrid/GFFM only.",
               "Our access methods read and write their files with O_DIRECT; GiST goes through shared "
               "buffers and the OS page cache (limited by the cgroup)."])


PRESETS["lbgrid-thesis"] = lbgrid_thesis


EFIND_PAGE_SIZES = (2048, 4096, 8192, 16384, 32768)


def efind_paper(scale=1.0, page_sizes=EFIND_PAGE_SIZES, sweep_page_size=4096):
    """Issue 5: the eFIND paper's sections 5 and 6 at this machine's scale."""
    from .summaries import efind_summary
    nland = _n(81848, scale, 500)          # every land polygon at scale 1
    npts = _n(200000, scale, 1000)
    f = min(scale, 1)
    nq = _n(100, f, 20)                    # the paper: 100 windows per selectivity
    land, pts = ("land" if nland >= 81848 else "land%dk" % (nland // 1000)), "points%dk" % (npts // 1000)
    datasets = [Dataset("cities", "cities"), Dataset(land, "land", limit=None if nland >= 81848 else nland),
                Dataset(pts, "jittered", n=npts, source="cities", seed=81, radius=0.05)]
    sets, wls = [], [Workload("build-insert", "build_insert", label="construction by one-by-one insertion")]
    qnames = {}
    for i, ds in enumerate((land, pts)):
        qnames[ds] = []
        for j, a in enumerate(WINDOW_AREAS):
            qs = "w%s:%s" % (a, ds)
            sets.append(QuerySet(qs, ds, "window", nq, area_pct=a, distribution="data", seed=800 + 10 * i + j))
            # the paper runs the queries right after the construction, caches as it left them
            wls.append(Workload("irq%s:%s" % (a, ds), "range", query_set=qs, params={"warmup": False},
                                label="%d IRQs at %s %%" % (nq, a)))
            qnames[ds].append("irq%s:%s" % (a, ds))
    configs, main = [], []
    for ps in page_sizes:
        k = ps // 1024
        configs += [Config("efind-%dk" % k, "efind", {"page_size": ps, "buffer_size": 512},
                           label="eFIND %dK" % k),
                    Config("rtree-%dk" % k, "hyrtree", {"page_size": ps, "placement": "none", "buffer_size": 512},
                           label="R-tree %dK" % k)]
        main += ["efind-%dk" % k, "rtree-%dk" % k]
    configs.append(Config("gist", "gist", label="GiST (8K)"))
    main.append("gist")
    # section 6: each sweep varies one parameter of the paper's incremental strategy
    k = sweep_page_size // 1024
    base = {"page_size": sweep_page_size, "buffer_size": 512}
    no_rb_tc = dict(base, read_buffer_share=0, temporal_control="none")
    sweeps = [
        ("flushing policy (6.1; no read buffer, no temporal control, p = 60 %)", "flush_policy",
         [(v, dict(no_rb_tc, flush_policy=v, flush_percent=60)) for v in ("m", "mh", "mha", "mhao")], "mh"),
        ("p (6.1; FP_mh, no read buffer, no temporal control)", "flush_percent",
         [(v, dict(no_rb_tc, flush_policy="mh", flush_percent=v)) for v in (20, 40, 60, 80)], 60),
        ("read buffer share (6.2; FP_mh, p = 60 %, LRU, no temporal control)", "read_buffer_share",
         [(v, dict(base, flush_policy="mh", read_buffer_share=v, read_buffer_policy="lru",
                   temporal_control="none")) for v in (0, 20, 40, 60, 80)], 20),
        ("temporal control (6.3; FP_mh, 20 % read buffer)", "temporal control + read buffer policy",
         [("none", dict(base, read_buffer_share=20, read_buffer_policy="s2q", temporal_control="none"))] +
         [("%s TC" % v.upper(), dict(base, read_buffer_share=20, read_buffer_policy=v, temporal_control="both"))
          for v in ("lru", "s2q", "2q")], "S2Q TC"),
        ("log size (6.4; FP_mh, S2Q, temporal control)", "log_size (MB)",
         [(v, dict(base, read_buffer_share=20, read_buffer_policy="s2q", temporal_control="both",
                   **({} if v == 10 else {"log_size": v * 1024}))) for v in (5, 10, 50, 100)], 10),
    ]
    seen, sweep_rows = {}, []
    for title, param, values, best in sweeps:
        rows = []
        for v, rel in values:
            key = tuple(sorted(rel.items()))
            if key not in seen:
                name = "ef%dk-%s-%s" % (k, param.split()[0].replace("_", ""), str(v).replace(" ", "").lower())
                seen[key] = name
                configs.append(Config(name, "efind", rel, label="eFIND %dK %s=%s" % (k, param.split()[0], v)))
            rows.append((v, seen[key]))
        sweep_rows.append((title, param, rows, best))
    sweep_cfgs = list(dict.fromkeys(c for _, _, rows, _ in sweep_rows for _, c in rows))
    phases = [Phase([land], sequence=["build-insert"] + qnames[land], vacuum=False, configs=main + sweep_cfgs),
              Phase([pts], sequence=["build-insert"] + qnames[pts], vacuum=False, configs=main)]
    p = Preset(
        "efind-paper", "Issue 5 (eFIND paper, sections 5 and 6) at this machine's scale: construction by "
        "one-by-one insertion of %s land polygons (OpenStreetMap land polygons, @geo-maps) and %s "
        "real-derived points (GeoNames cities500, jittered), then %d intersection range queries (IRQs) at "
        "each of 0.001/0.01/0.1 %% of the extent, as one sequence per run; eFIND and the plain R-tree "
        "(hyrtree, placement none) with a 512 KB buffer, page sizes %s; GiST (8 KB pages) for reference. "
        "Section 6's sweeps (flushing policy, p, read buffer share, temporal control, log size) at %d KB "
        "pages on the polygons." % ("{:,}".format(nland), "{:,}".format(npts), nq,
                                    "/".join("%dK" % (p // 1024) for p in page_sizes), k),
        datasets=datasets, query_sets=sets, workloads=wls, configs=configs, phases=phases,
        reps=3, baseline="rtree-%dk" % k if sweep_page_size in page_sizes else "gist",
        budget=Budget(equal=False, shared_buffers_mb=64, cache_mb=64), summary=efind_summary,
        direct_io=True,
        drop_after_config=True,
        notes=["Buffer: eFIND buffer_size = 512 KB (write + read buffer, 20 %% read by default); the R-tree "
               "buffer_size = 512 KB of the shared page cache (its only cache). GiST has shared_buffers = "
               "64 MB and the OS page cache: it is not held to 512 KB (PostgreSQL's buffer manager cannot "
               "give one index a budget), so it is a reference, not an equal-memory competitor.",
               "Each run is construction then the three IRQ sets, in that order, on that index (the paper's "
               "sequence); queries get no warm-up pass.",
               "The paper's 0 MB log (no durability) has no counterpart: hybrid_index always keeps its redo "
               "log; log_size is the size at which eFIND compacts it.",
               "Best values of the paper (marked ★ in the sweep tables): FP_mh, p = 60 %, 20 % read buffer, "
               "S2Q with temporal control, 10 MB log."])
    p.efind_sweeps = sweep_rows
    p.efind_main = (land, pts, page_sizes)
    return p


PRESETS["efind-paper"] = efind_paper


HGRID_KNN_KS = (10, 50, 100, 1000)
HGRID_SELECTIVITIES = (1.0, 1.5, 2.5)
# the thesis' Table 4.1 latencies are the HyR-tree paper's ("paper" profile);
# an index wholly on the fast device has its pages in its flash-tier file,
# so that file gets the fast device's latencies
FAST_AS_FLASH = {"hybrid_index.flash_read_latency": "7", "hybrid_index.flash_write_latency": "18",
                 "hybrid_index.flash_parallelism": "4"}


def hgrid_thesis(scale=1.0, queries="sql", buffer_kb=None):
    """Issue 7: the thesis' section 4.3.4 (H-Grid) at this machine's scale.
    queries: sql (default), probe or probe,sql: probe adds, before each search
    workload, its twin on the index alone (hybrid_index_probe*, no heap):
    point searches at the data points and at uniform points, kNN, range.
    buffer_kb: buffers per index (default 8 MB, the thesis' size; the thesis
    had 50M-500M points, so 8 MB held a far smaller share of its indexes)."""
    from .summaries import hgrid_summary
    modes = _modes(queries)
    n = _n(5000000, scale)
    f = min(scale, 1)
    tag = "%dm" % (n // 1000000) if n % 1000000 == 0 else "%dk" % (n // 1000)
    ops = _n(20000, scale, 1000)
    nsrc = 9 * ops
    # the thesis: 8 MB of buffers for 50M-500M points; keep the buffer a
    # small share of the index at every scale
    buf_kb = buffer_kb or max(1024, int(8192 * min(1.0, scale)))
    kinds = [("real", "jittered", dict(source="cities", radius=0.05)),
             ("uniform", "uniform", {}), ("gaussian", "gaussian", {})]
    datasets = [Dataset("cities", "cities")]
    sets, wls, phases = [], [Workload("build", "build", label="CREATE INDEX (initial load)")], []
    nq = _n(1000, f, 100)
    nk = {10: _n(1000, f, 100), 50: _n(500, f, 50), 100: _n(300, f, 30), 1000: _n(50, f, 10)}
    for i, (kname, kind, extra) in enumerate(kinds):
        ds = "%s%s" % (kname, tag)
        src = "%s-ins%s" % (kname, tag)
        datasets.append(Dataset(ds, kind, n=n, seed=91 + i, **extra))
        datasets.append(Dataset(src, kind, n=nsrc, seed=95 + i, **extra))
        seed = 900 + 20 * i
        qs = "pts:%s" % ds
        sets.append(QuerySet(qs, ds, "knn", ops, k=1, distribution="data", seed=seed))
        # the mixes first: H-Grid learns where the hot regions are as it runs
        q = []
        if "probe" in modes:
            # the search-only mix (0/100) on the index alone: every point once
            q.append(Workload("pts-probe:%s" % ds, "point_probe", query_set=qs, params={"warmup": False},
                              label="point searches (%s), %s" % ("{:,}".format(ops), PROBE_LABEL)))
        if "sql" in modes:
            q += [Workload("mix%d:%s" % (m, ds), "mix", query_set=qs, source=src,
                           params={"ops": ops, "insert_ratio": m / 100.0, "search": "point", "keep": True},
                           label="I/S %d/%d (%s ops)" % (m, 100 - m, "{:,}".format(ops))) for m in MIXES]
        for j, k in enumerate(HGRID_KNN_KS):
            kq = "knn%d:%s" % (k, ds)
            sets.append(QuerySet(kq, ds, "knn", nk[k], k=k, distribution="data", seed=seed + 1 + j))
            if "probe" in modes:
                q.append(Workload("knn%d-probe:%s" % (k, ds), "knn_probe", query_set=kq,
                                  label="%d-NN, %s" % (k, PROBE_LABEL)))
            if "sql" in modes:
                q.append(Workload(kq, "knn", query_set=kq, label="%d-NN" % k))
        # 0.001 % of the extent: windows following the data hold ~1,500 of
        # 5M real-derived points (0.01 %: ~15,000, heap reads dominate)
        rq = "w0.001:%s" % ds
        sets.append(QuerySet(rq, ds, "window", nq, area_pct=0.001, distribution="data", seed=seed + 9))
        if "probe" in modes:
            q.append(Workload("range-probe:%s" % ds, "range_probe", query_set=rq,
                              label="range 0.001 %%, %s" % PROBE_LABEL))
        if "sql" in modes:
            q.append(Workload("range:%s" % ds, "range", query_set=rq, label="range 0.001 %"))
        # last, a search-only run whose points are uniform over the extent: a
        # skew the data does not have (sparse regions' buckets are larger and
        # so hotter), the case hot-region detection is made for
        qu = "ptsu:%s" % ds
        sets.append(QuerySet(qu, ds, "knn", ops, k=1, distribution="uniform", seed=seed + 10))
        if "probe" in modes:
            q.append(Workload("ptsu-probe:%s" % ds, "point_probe", query_set=qu, params={"warmup": False},
                              label="point searches at uniform points (%s), %s" % ("{:,}".format(ops), PROBE_LABEL)))
        if "sql" in modes:
            q.append(Workload("mixu0:%s" % ds, "mix", query_set=qu, source=src,
                              params={"ops": ops, "insert_ratio": 0.0, "search": "point", "keep": True},
                              label="I/S 0/100, uniform points (%s ops)" % "{:,}".format(ops)))
        wls += q
        phases.append(Phase([ds], sequence=["build"], queries=[w.name for w in q]))
    # the thesis' split (75 % directories), not hgrid's default
    common = {"buffer_size": buf_kb, "buffer_split": 75}
    hyb = dict(common, optane_tablespace="bench_fast")
    configs = []
    for emu in (True, False):
        sfx, prof = ("-emu", "paper") if emu else ("", "off")
        lab = " emu" if emu else ""
        configs.append(Config("gffm-flash" + sfx, "hgrid", dict(common, placement="none"),
                              tablespace="bench_flash", profile=prof, label="GFFM flash" + lab))
        configs.append(Config("gffm-fast" + sfx, "hgrid", dict(common, placement="none"),
                              tablespace="bench_fast", profile=prof, gucs=FAST_AS_FLASH if emu else {},
                              label="GFFM fast tier" + lab))
        sels = HGRID_SELECTIVITIES if emu else (1.0, 1.5)
        for s in sels:
            configs.append(Config("hgrid-s%s%s" % (s, sfx), "hgrid", dict(hyb, placement="hot", selectivity=s),
                                  tablespace="bench_flash", profile=prof, label="H-Grid s=%s%s" % (s, lab)))
        configs.append(Config("hgrid-random" + sfx, "hgrid", dict(hyb, placement="random", selectivity=1.5),
                              tablespace="bench_flash", profile=prof, label="H-Grid random" + lab))
        configs.append(Config("hgrid-special" + sfx, "hgrid",
                              dict(hyb, placement="hot", selectivity=1.5, directories_on_optane="on"),
                              tablespace="bench_flash", profile=prof, label="H-Grid special" + lab))
    return Preset(
        "hgrid-thesis", "Issue 7 (thesis section 4.3.4: H-Grid) at this machine's scale: %s points per "
        "dataset (real-derived, uniform, gaussian), bulk-loaded; the insert/search mixes 0/100 ... 100/0 of "
        "%s operations each (searches: exact point queries of data points), then 10/50/100/1000-NN and "
        "range queries (0.001 %%), on the same index; GFFM on flash, GFFM wholly on the fast tier, H-Grid "
        "(s = %s), H-Grid random and the special case, %d kB of buffers each; with the thesis' device "
        "latencies emulated (-emu) and once on the real tiers."
        % ("{:,}".format(n), "{:,}".format(ops), "/".join(str(s) for s in HGRID_SELECTIVITIES), buf_kb),
        datasets=datasets, query_sets=sets, workloads=wls, configs=configs, phases=phases,
        reps=3, baseline="gffm-flash-emu", budget=Budget(equal=False, shared_buffers_mb=128, cache_mb=32),
        fast_tier=True, drop_after_config=True, summary=hgrid_summary, direct_io=True,
        notes=["GFFM = hgrid with placement none (the same code without placement); GFFM on the fast tier "
               "has the index's own tablespace on the fast device and, with emulation, the fast device's "
               "latencies for that file.",
               "Emulation (profile paper = thesis Table 4.1): flash 120 us reads / 30 us writes, 8 in "
               "parallel; fast tier 7 us / 18 us, 4 in parallel; a batch takes ceil(n / parallelism) x latency.",
               "Buffers (reloption buffer_size) %d kB per index: 75 %% directories, 25 %% buckets, cold lists "
               "of 128 pages (the lbgrid defaults)." % buf_kb,
               "Runs of a configuration follow each other on one index (mixes keep their inserts), so H-Grid "
               "learns during the measured runs, as in the thesis; the medians are of 3 runs.",
               "Query modes: %s. Probe runs (%s) call hybrid_index_probe(index, point, '~=') / "
               "hybrid_index_probe_knn / hybrid_index_probe(index, window, '&&'): the index's search alone, "
               "no heap fetch and no recheck; each comes right before its SQL twin, on the same index."
               % (", ".join(modes), PROBE_LABEL)])


PRESETS["hgrid-thesis"] = hgrid_thesis
