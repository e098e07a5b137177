"""Named experiments.  A preset is data (datasets, query sets, workloads,
configurations, phases); adding an access method is adding Config rows
(see bench/README.md).  scale multiplies dataset sizes."""
from .model import Budget, Config, Dataset, Phase, Preset, QuerySet, Workload

WINDOW_AREAS = (0.001, 0.01, 0.1)


def _n(x, scale, least=1000):
    return max(least, int(round(x * scale)))


def _query_sets(ds, nq, seed0, knn=True, groups=(), uniform=()):
    """Windows of 0.001/0.01/0.1 % following the data (and uniform ones of the
    areas in `uniform`), 10-NN points, point groups [(n, group size)]."""
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
        sets.append(QuerySet("knn10:%s" % ds, ds, "knn", nq, k=10, distribution="data", seed=seed0 + 7))
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


def gist_compare(scale=1.0):
    """The foundation issue's comparison: hyrtree (placement none) vs GiST."""
    sizes = [_n(1000000, scale), _n(5000000, scale)]
    names = ["jit%s" % (("%dm" % (s // 1000000)) if s % 1000000 == 0 else "%dk" % (s // 1000)) for s in sizes]
    nins = _n(100000, scale, 100)
    datasets = [Dataset("cities", "cities"),
                Dataset("ins100k", "jittered", n=nins, source="cities", seed=3, radius=0.05),
                Dataset("ins2k", "jittered", n=2000, source="cities", seed=4, radius=0.05)]
    sets, wls, phases = [], [Workload("build", "build", label="CREATE INDEX"),
                             Workload("insert100k", "insert", source="ins100k",
                                      label="{:,} single-row INSERTs (one transaction)".format(nins)),
                             Workload("insert2k-autocommit", "insert", source="ins2k",
                                      params={"commit_every": 1},
                                      label="2k single-row INSERTs, one transaction each")], []
    for i, (n, ds) in enumerate(zip(sizes, names)):
        datasets.append(Dataset(ds, "jittered", n=n, source="cities", seed=1 + i, radius=0.05))
        s, q = _query_sets(ds, 1000, 100 + 10 * i)
        sets += s
        wls += q
        phases.append(Phase([ds], sequence=["build", "insert100k", "insert2k-autocommit"],
                            queries=[w.name for w in q], cold=[w.name for w in q]))
    return Preset(
        "gist-compare", "hyrtree (placement none, R-tree on flash) against PostGIS GiST on %s "
        "real-derived points: CREATE INDEX, %s single-row inserts, 2k insert transactions, "
        "1,000 range queries at 0.001/0.01/0.1 %% of the extent (following the data) and 1,000 "
        "10-NN, warm and cold, same memory budget." % (" and ".join("{:,}".format(n) for n in sizes),
                                                       "{:,}".format(nins)),
        datasets=datasets, query_sets=sets, workloads=wls,
        configs=[Config("hyrtree", "hyrtree", {"placement": "none"}, label="hyrtree (none)"),
                 Config("gist", "gist", label="GiST")],
        phases=phases, reps=3, baseline="gist", budget=Budget(mb=256, split=0.5, slack_mb=256),
        notes=["Targets (foundation issue): build <= GiST; inserts <= GiST; warm range <= 1.2x; "
               "cold range <= 0.7x; 10-NN <= 1.5x."])


def hyrtree_placement(scale=1.0, page_sizes=(4096, 8192, 16384)):
    """Issue 4: R-tree on flash / on the fast tier / sHR-tree / rHyR-tree / HyR-tree,
    with and without the paper's device profiles; construction by insertion and
    5,000 range queries with the data's skew; 4 MB cache per index."""
    n = _n(5000000, scale)
    tag = "%dm" % (n // 1000000) if n % 1000000 == 0 else "%dk" % (n // 1000)
    datasets = [Dataset("cities", "cities"),
                Dataset("uniform" + tag, "uniform", n=n, seed=31),
                Dataset("gaussian" + tag, "gaussian", n=n, seed=32),
                Dataset("clustered" + tag, "jittered", n=n, source="cities", seed=33, radius=0.01)]
    epoch = max(1000, int(250000 * scale))
    configs = []
    for ps in page_sizes:
        k = ps // 1024
        common = {"page_size": ps, "buffer_size": 4096}
        hyb = dict(common, optane_tablespace="bench_fast", epoch_size=epoch)
        variants = [
            ("flash", dict(common, placement="none"), "bench_flash", "R-tree on flash"),
            ("fast", dict(common, placement="none"), "bench_fast", "R-tree on fast tier"),
            ("upper", dict(hyb, placement="upper"), "bench_flash", "sHR-tree"),
            ("random", dict(hyb, placement="random"), "bench_flash", "rHyR-tree"),
            ("wma", dict(hyb, placement="wma"), "bench_flash", "HyR-tree"),
        ]
        for emu in (True, False):
            for v, rel, ts, label in variants:
                configs.append(Config("%s-%dk%s" % (v, k, "-emu" if emu else ""), "hyrtree", rel,
                                      tablespace=ts, profile="paper" if emu else "off",
                                      label="%s %dK%s" % (label, k, " emu" if emu else "")))
    sets, wls, phases = [], [Workload("build-insert", "build_insert", label="construction by insertion")], []
    for i, d in enumerate(datasets[1:]):
        qs = "w0.01:%s" % d.name
        sets.append(QuerySet(qs, d.name, "window", 5000, area_pct=0.01, distribution="data", seed=300 + i))
        wls.append(Workload("range:%s" % d.name, "range", query_set=qs, params={"warmup": False},
                            label="5,000 range queries (0.01 %)"))
        phases.append(Phase([d.name], sequence=["build-insert", "range:%s" % d.name]))
    return Preset(
        "hyrtree-placement", "Issue 4 (HyR-tree paper, Figs. 7 and 8) at this machine's scale: "
        "%s points per dataset, page sizes %s, 4 MB cache per index, construction by insertion, "
        "5,000 range queries following the data; with the paper's device profiles (-emu) and "
        "without." % ("{:,}".format(n), "/".join("%dK" % (p // 1024) for p in page_sizes)),
        datasets=datasets, query_sets=sets, workloads=wls, configs=configs, phases=phases,
        reps=3, baseline="flash-8k-emu" if 8192 in page_sizes else configs[0].name,
        budget=Budget(equal=False, shared_buffers_mb=256, cache_mb=256), fast_tier=True,
        drop_after_config=True,
        notes=["R-tree on the fast tier = placement none with the index's own tablespace on the fast "
               "device: its pages count as the \"flash\" tier's (the tier of the index's tablespace).","Every run builds the index by insertion and then runs the queries once, "
               "so the placement learns during the measured queries, as in the paper.",
               "Epoch size %d node reads (the paper: 250,000 at its scale)." % epoch])


PRESETS = {"default": default, "gist-compare": gist_compare, "hyrtree-placement": hyrtree_placement}
