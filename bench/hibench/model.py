"""What a preset is made of.  Everything here becomes rows of the
hybrid_index_bench tables; the driver only adds what SQL cannot do."""

# access methods whose pages live in hybrid_index's tiers and page cache
HYBRID_AMS = {"hyrtree", "efind", "lbgrid", "hgrid"}


class Dataset:
    """kind: cities | land | jittered | uniform | gaussian | clustered"""

    def __init__(self, name, kind, n=None, seed=1, source=None, radius=None, params=None,
                 extent="BOX(-180 -90,180 90)", srid=4326, limit=None):
        self.name, self.kind, self.n, self.seed = name, kind, n, seed
        self.source, self.radius, self.params = source, radius, params or {}
        self.extent, self.srid, self.limit = extent, srid, limit


class QuerySet:
    """kind: window (area_pct) | knn (k) | point_group (group)"""

    def __init__(self, name, dataset, kind, n, area_pct=None, distribution="data", k=10, group=10, seed=1):
        self.name, self.dataset, self.kind, self.n = name, dataset, kind, n
        self.area_pct, self.distribution, self.k, self.group, self.seed = area_pct, distribution, k, group, seed


class Workload:
    def __init__(self, name, kind, query_set=None, source=None, params=None, label=None):
        self.name, self.kind, self.query_set, self.source = name, kind, query_set, source
        self.params = params or {}
        self.label = label or name


class Config:
    def __init__(self, name, am, reloptions=None, gucs=None, tablespace=None, profile="off",
                 opclass=None, label=None, hybrid=None):
        self.name, self.am = name, am
        self.reloptions, self.gucs = reloptions or {}, gucs or {}
        self.tablespace, self.profile, self.opclass = tablespace, profile, opclass
        self.label = label or name
        self.hybrid = am in HYBRID_AMS if hybrid is None else hybrid
        self.server = {}


class Phase:
    """For each dataset: reps rounds over the configurations, each running the
    sequence once (in order, warm); each configuration's VACUUM; then
    query_reps rounds, each configuration running each of queries (warm) and
    each of cold (restart and drop caches before every run) in a server
    restarted for it.  Rounds spread the machine's drift over every
    configuration alike.  A preset that drops each configuration's table runs
    all of one configuration before the next."""

    def __init__(self, datasets, sequence=(), queries=(), cold=(), vacuum=True, configs=None):
        self.datasets, self.sequence = list(datasets), list(sequence)
        self.queries, self.cold, self.vacuum = list(queries), list(cold), vacuum
        # names of the configurations this phase runs (None: all of the preset's)
        self.configs = None if configs is None else list(configs)


class Budget:
    """Server memory.  equal: every configuration gets mb MB of caches
    (shared_buffers for PostgreSQL's AMs; split between shared_buffers and
    hybrid_index.cache_size for ours) and the whole server is limited to
    mb + slack_mb by a memory cgroup."""

    def __init__(self, mb=256, split=0.5, slack_mb=256, equal=True, shared_buffers_mb=128, cache_mb=128):
        self.mb, self.split, self.slack_mb, self.equal = mb, split, slack_mb, equal
        self.shared_buffers_mb, self.cache_mb = shared_buffers_mb, cache_mb

    MIN_CACHE_MB = 16

    def server_settings(self, config):
        if not self.equal:
            return {"shared_buffers": "%dMB" % self.shared_buffers_mb,
                    "hybrid_index.cache_size": "%dMB" % self.cache_mb}
        if config.hybrid:
            cache = int(self.mb * self.split)
            return {"shared_buffers": "%dMB" % (self.mb - cache), "hybrid_index.cache_size": "%dMB" % cache}
        return {"shared_buffers": "%dMB" % self.mb, "hybrid_index.cache_size": "%dMB" % self.MIN_CACHE_MB}

    def cgroup_mb(self):
        return self.mb + self.MIN_CACHE_MB + self.slack_mb if self.equal else None


class Preset:
    def __init__(self, name, description, datasets, query_sets, workloads, configs, phases,
                 reps=3, baseline=None, budget=None, skip=(), fast_tier=False, notes=(),
                 fio_bs="8k", drop_after_config=False, summary=None, direct_io=None):
        self.name, self.description = name, description
        # hybrid_index.direct_io for every configuration (None: the product's
        # default, off): the papers' experiments count device I/O, which the
        # OS page cache would hide
        self.direct_io = direct_io
        self.datasets, self.query_sets = datasets, query_sets
        self.workloads, self.configs, self.phases = workloads, configs, phases
        self.reps, self.baseline = reps, baseline
        # runs of each query workload (None: reps): queries are cheap next to
        # builds and their noise larger
        self.query_reps = None
        self.budget = budget or Budget()
        self.skip = set(skip)
        self.fast_tier, self.notes, self.fio_bs = fast_tier, list(notes), fio_bs
        # drop each configuration's work table and index once its runs are done
        # (many configurations would not fit on the fast tier together)
        self.drop_after_config = drop_after_config
        # summary(report) -> markdown lines: the preset's own tables (paper
        # tables, targets), written before the per-workload results
        self.summary = summary
        for c in self.configs:
            c.server = self.server_settings(c)

    def server_settings(self, config):
        """The budget's settings, and the largest page size of the preset's
        configurations: the page cache's frames are
        hybrid_index.max_page_size bytes each, so a cache of N MB holds
        N MB / max_page_size pages, and under a 32 kB maximum an 8 kB index
        would get a quarter of its budget."""
        max_ps = max([int(c.reloptions.get("page_size", 8192)) for c in self.configs if c.hybrid] or [8192])
        s = dict(self.budget.server_settings(config), **{"hybrid_index.max_page_size": str(max_ps)})
        if self.direct_io is not None:
            s["hybrid_index.direct_io"] = "on" if self.direct_io else "off"
        return s

    @property
    def qreps(self):
        return self.query_reps or self.reps

    def skipped(self, config, workload):
        return (config, workload) in self.skip or (config, "*") in self.skip

    def workload(self, name):
        return next(w for w in self.workloads if w.name == name)

    def config(self, name):
        return next(c for c in self.configs if c.name == name)
