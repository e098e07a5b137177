"""Presets' own summary tables: the papers' tables and targets, from a
Report's statistics (medians of the runs).  Each function takes the Report
and returns markdown lines."""
from .report import num

THESIS_TARGETS = "Thesis targets (issue 6)"


def _med(r, d, w, c, col, mode="warm"):
    s = r._stat(d, w, c, mode)
    if not s:
        return None
    return s.get(col)


def _reads(r, d, w, c):
    """Index page reads of a configuration: tier reads for ours, PostgreSQL
    index blocks read (from the OS) for GiST."""
    s = r._stat(d, w, c, "warm")
    if not s:
        return None
    if c in r.hybrid:
        return (s["flash_reads"] or 0) + (s["optane_reads"] or 0)
    return s["idx_blks_read"]


def _batches(r, d, w, c):
    """Read batches (one io_uring submission each) of our access methods."""
    from .report import median
    g = r._group(d, w, c, "warm")
    if not g or c not in r.hybrid:
        return None
    return median([(e["flash_read_batches"] or 0) + (e["optane_read_batches"] or 0) for e in g])


def _rb(r, d, w, c):
    """reads, and (batches) for ours"""
    b = _batches(r, d, w, c)
    return num(_reads(r, d, w, c), 0) + (" in %s" % num(b, 0) if b is not None else "")


def _writes(r, d, w, c):
    s = r._stat(d, w, c, "warm")
    if not s or c not in r.hybrid:
        return None
    return (s["flash_writes"] or 0) + (s["optane_writes"] or 0)


def _ratio(a, b):
    return a / b if a is not None and b else None


def _verdict(x, target):
    if x is None:
        return "not measured"
    return "**met**" if x >= target else "**missed**"


def _rw(r, d, w, c):
    wr = _writes(r, d, w, c)
    return "%s / %s" % (_rb(r, d, w, c), num(wr, 0) if wr is not None else "–")


def _lb_configs(r):
    """LB-Grid and GFFM, those of them the run measured."""
    return [c for c in ("lbgrid", "gffm") if c in r.labels]


def _lbgrid_range_table(r, d, ws, cfgs, rq, prq, how, L, targets):
    """Table 3.4: range queries with (P-RQ) and without (RQ) batched reads"""
    L += ["Range queries%s (Table 3.4 / Fig. 3.13; ms for the query set, reads / writes):" % how, "",
          "| | " + " | ".join(r.labels[c] for c in cfgs) + " |", "|---|" + "---|" * len(cfgs)]
    for w, name in ((rq, "RQ (no batching)"), (prq, "P-RQ (batched)")):
        if w in ws:
            L.append("| %s | %s |" % (name, " | ".join(
                "%s (%s)" % (num(_med(r, d, w, c, "median")), _rw(r, d, w, c))
                if _med(r, d, w, c, "median") is not None else "–" for c in cfgs)))
    for c in _lb_configs(r):
        x = _ratio(_med(r, d, rq, c, "median"), _med(r, d, prq, c, "median"))
        targets.append((d, "range%s: unbatched ÷ batched time, %s" % (how, r.labels[c]), x,
                        2.0 if c == "lbgrid" else None))
    L.append("")


def lbgrid_summary(r):
    r.hybrid = {c.name for c in r.p.configs if c.hybrid}
    cfgs = [c for c in r.config_order]
    L = ["## Thesis tables (section 3.5) and targets", "",
         "Medians of the warm runs. *reads / writes*: index page reads and writes of the tier files "
         "(hybrid_index_stats) for LB-Grid, GFFM and hyrtree, with the number of batched read "
         "submissions (*in N*: the thesis counts a batch as one read operation); for GiST the index blocks PostgreSQL "
         "read into shared buffers (from the OS page cache or the disk; writes not counted).", ""]
    targets = []
    for d in r._datasets():
        ws = set(r._workloads(d))
        L += ["### %s" % d, ""]
        # Table 3.2 / Figure 3.12: insert/search mixes
        mixes = [w for w in r._workloads(d) if w.startswith("mix")]
        if mixes:
            L += ["Insert/search mixes (Fig. 3.12; ms for the whole mix, reads / writes):", "",
                  "| I/S | " + " | ".join(r.labels[c] for c in cfgs) + " | GFFM ÷ LB-Grid | GiST ÷ LB-Grid |",
                  "|---|" + "---|" * (len(cfgs) + 2)]
            for w in mixes:
                row = []
                for c in cfgs:
                    m = _med(r, d, w, c, "median")
                    row.append("%s (%s)" % (num(m), _rw(r, d, w, c)) if m is not None else "–")
                lb = _med(r, d, w, "lbgrid", "median")
                L.append("| %s | %s | %s | %s |" % (
                    r.wlabels[w].split(" (")[0].replace("I/S ", ""), " | ".join(row),
                    num(_ratio(_med(r, d, w, "gffm", "median"), lb), 2),
                    num(_ratio(_med(r, d, w, "gist", "median"), lb), 2)))
            w100 = "mix100:%s" % d
            if w100 in ws:
                lb = _med(r, d, w100, "lbgrid", "median")
                x = _ratio(_med(r, d, w100, "gffm", "median"), lb)
                y = _ratio(_med(r, d, w100, "gist", "median"), lb)
                targets.append((d, "100/0 mix: GFFM time ÷ LB-Grid time", x, 2.0))
                targets.append((d, "100/0 mix: GiST time ÷ LB-Grid time", y, 2.4))
            L.append("")
        # Table 3.4: range queries (SQL, then on the index alone)
        for rq, prq, how in (("range-nobatch:%s" % d, "range:%s" % d, ""),
                             ("range-probe-nobatch:%s" % d, "range-probe:%s" % d, ", index only")):
            if prq in ws:
                _lbgrid_range_table(r, d, ws, cfgs, rq, prq, how, L, targets)
        # Table 3.5: kNN
        knn = [k for k in (10, 100, 1000) if "knn%d:%s" % (k, d) in ws]
        if knn:
            L += ["kNN queries (Table 3.5 / Fig. 3.14; ms for the query set, reads):", "",
                  "| | " + " | ".join(r.labels[c] for c in cfgs) + " | no prefetch ÷ prefetch (LB-Grid, GFFM) |",
                  "|---|" + "---|" * (len(cfgs) + 1)]
            for k in knn:
                for w, name, ratio in (("knn%d-nopf:%s" % (k, d), "%dNN" % k, False),
                                       ("knn%d:%s" % (k, d), "PR %dNN" % k, True)):
                    if w not in ws:
                        continue
                    cells = []
                    for c in cfgs:
                        m = _med(r, d, w, c, "median")
                        cells.append("%s (%s)" % (num(m), _rb(r, d, w, c)) if m is not None else "–")
                    rat = ""
                    if ratio:
                        rat = ", ".join(num(_ratio(_med(r, d, "knn%d-nopf:%s" % (k, d), c, "median"),
                                                   _med(r, d, w, c, "median")), 2) for c in _lb_configs(r))
                    L.append("| %s | %s | %s |" % (name, " | ".join(cells), rat))
            L.append("")
        # Table 3.6: group point queries
        gs = [g for g in (1, 10, 100) if "group%d:%s" % (g, d) in ws]
        if gs:
            L += ["Group point queries (Table 3.6 / Fig. 3.15; every set holds the same number of points; "
                  "ms for the set, reads):", "",
                  "| points per query | " + " | ".join(r.labels[c] for c in cfgs) + " |",
                  "|---|" + "---|" * len(cfgs)]
            for g in gs:
                w = "group%d:%s" % (g, d)
                L.append("| %d | %s |" % (g, " | ".join(
                    "%s (%s)" % (num(_med(r, d, w, c, "median")), _rb(r, d, w, c))
                    if _med(r, d, w, c, "median") is not None else "–" for c in cfgs)))
            for c in _lb_configs(r):
                x = _ratio(_med(r, d, "group1:%s" % d, c, "median"), _med(r, d, "group100:%s" % d, c, "median"))
                targets.append((d, "100 single-point queries ÷ 1 group of 100, %s" % r.labels[c], x,
                                2.5 if c == "lbgrid" else None))
            L.append("")
    if targets:
        L += ["### %s" % THESIS_TARGETS, "",
              "| dataset | ratio | measured | target | |", "|---|---|---|---|---|"]
        for d, what, x, t in targets:
            L.append("| %s | %s | %s | %s | %s |" % (d, what, num(x, 2), ("≥ %.1f" % t) if t else "(info)",
                                                     _verdict(x, t) if t else ""))
        L.append("")
    return L


def efind_summary(r):
    r.hybrid = {c.name for c in r.p.configs if c.hybrid}
    land, pts, page_sizes = r.p.efind_main
    L = ["## eFIND paper: figures 6-12 as tables, and the targets", "",
         "Medians of the runs. *R/W*: page reads / writes of the index files (hybrid_index_stats; for eFIND "
         "the writes are its flushes' and checkpoints' batched page writes). Gain = 1 − eFIND ÷ R-tree.", ""]
    targets = []
    for d in (land, pts):
        if d not in r._datasets():
            continue
        bw = "build-insert"
        L += ["### %s: construction (Fig. 6)" % d, "",
              "| page | eFIND ms (R/W) | R-tree ms (R/W) | gain | eFIND writes ÷ R-tree writes |", "|---|---|---|---|---|"]
        for ps in page_sizes:
            k = ps // 1024
            e, t = "efind-%dk" % k, "rtree-%dk" % k
            me, mt = _med(r, d, bw, e, "median"), _med(r, d, bw, t, "median")
            if me is None or mt is None:
                continue
            gain = 1 - me / mt
            wr = _ratio(_writes(r, d, bw, e), _writes(r, d, bw, t))
            L.append("| %dK | %s (%s) | %s (%s) | %s | %s |" % (
                k, num(me), _rw(r, d, bw, e), num(mt), _rw(r, d, bw, t), "%.0f %%" % (100 * gain), num(wr, 2)))
            targets.append((d, "construction %dK: eFIND gain over the R-tree" % k, gain, 0.43, True))
            targets.append((d, "construction %dK: eFIND writes ÷ R-tree writes" % k, wr, 1.0, False))
        g = _med(r, d, bw, "gist", "median")
        if g is not None:
            L.append("| GiST 8K | – | %s | | |" % num(g))
        L.append("")
        qs = [w for w in r._workloads(d) if w.startswith("irq")]
        if qs:
            L += ["### %s: intersection range queries (Fig. 7; ms for the set)" % d, "",
                  "| page | " + " | ".join("%s eFIND | R-tree | ÷" % r.wlabels[w].split(" at ")[1] for w in qs) + " |",
                  "|---|" + "---|---|---|" * len(qs)]
            for ps in page_sizes:
                k = ps // 1024
                e, t = "efind-%dk" % k, "rtree-%dk" % k
                cells = []
                for w in qs:
                    me, mt = _med(r, d, w, e, "median"), _med(r, d, w, t, "median")
                    x = _ratio(me, mt)
                    cells.append("%s | %s | %s" % (num(me), num(mt), num(x, 2)))
                    if x is not None:
                        targets.append((d, "%s %dK: eFIND time ÷ R-tree time" % (r.wlabels[w].split(" at ")[1], k),
                                        x, 1.0, False))
                L.append("| %dK | %s |" % (k, " | ".join(cells)))
            g = [_med(r, d, w, "gist", "median") for w in qs]
            if any(x is not None for x in g):
                L.append("| GiST 8K | %s |" % " | ".join("%s | | " % num(x) for x in g))
            L.append("")
    sweeps = getattr(r.p, "efind_sweeps", [])
    if sweeps and land in r._datasets():
        L += ["### Section 6 sweeps (%s)" % land, "",
              "★ = the paper's best value; ◆ = the fastest construction measured here.", ""]
        q0 = next((w for w in r._workloads(land) if w.startswith("irq0.001")), None)
        for title, param, rows, best in sweeps:
            vals = [(v, c, _med(r, land, "build-insert", c, "median")) for v, c in rows]
            have = [x for x in vals if x[2] is not None]
            if not have:
                continue
            fastest = min(have, key=lambda x: x[2])[0]
            L += ["#### %s" % title, "",
                  "| %s | construction ms | R/W | flushes | IRQ 0.001 %% ms |" % param, "|---|---|---|---|---|"]
            for v, c, m in vals:
                if m is None:
                    continue
                fl = _inspect_path(r, land, "build-insert", c, ("efind", "flushes", "count"))
                L.append("| %s%s%s | %s | %s | %s | %s |" % (
                    v, " ★" if v == best else "", " ◆" if v == fastest else "", num(m),
                    _rw(r, land, "build-insert", c), num(fl, 0),
                    num(_med(r, land, q0, c, "median")) if q0 else "–"))
            L.append("")
    if targets:
        L += ["### Targets (issue 5)", "",
              "| dataset | what | measured | target | |", "|---|---|---|---|---|"]
        for d, what, x, t, at_least in targets:
            ok = None if x is None else (x >= t if at_least else x <= t)
            L.append("| %s | %s | %s | %s %s | %s |" % (
                d, what, ("%.0f %%" % (100 * x)) if (x is not None and at_least) else num(x, 2),
                "≥" if at_least else "≤", ("%.0f %%" % (100 * t)) if at_least else num(t, 2),
                "not measured" if ok is None else ("**met**" if ok else "**missed**")))
        L.append("")
    return L


def _inspect_path(r, d, w, c, path):
    """Median of a number in the inspect snapshot after the runs."""
    from .report import median
    vals = []
    for e in r._group(d, w, c, "warm"):
        x = e.get("inspect")
        for p in path:
            x = x.get(p) if isinstance(x, dict) else None
        if isinstance(x, (int, float)):
            vals.append(x)
    return median(vals)


def _tier_io(r, d, w, c):
    """(flash I/Os, fast-tier I/Os): page reads + writes of each tier file"""
    s = r._stat(d, w, c, "warm")
    if not s:
        return None, None
    return ((s["flash_reads"] or 0) + (s["flash_writes"] or 0),
            (s["optane_reads"] or 0) + (s["optane_writes"] or 0))


def _gain(base, x):
    """1 - x / base: how much faster x is than base"""
    return 1 - x / base if base and x is not None else None


def hgrid_summary(r):
    r.hybrid = {c.name for c in r.p.configs if c.hybrid}
    cfgs = list(r.config_order)
    L = ["## Thesis tables (section 4.3.4) and targets", "",
         "Medians of the warm runs: time in ms for the whole workload, and *flash / fast-tier I/Os* (page "
         "reads + writes of each tier file, hybrid_index_stats) with their ratio for the configurations "
         "that use both tiers (thesis Tables 4.2-4.4: 1.9-2.7 for H-Grid, 0.7-1.1 for the special case).", ""]
    targets = []
    for d in r._datasets():
        ws = r._workloads(d)
        L += ["### %s" % d, ""]
        for title, sel in (("Insert/search mixes (Fig. 4.3, Table 4.2; the last: searches at uniform points)",
                            lambda w: w.startswith("mix")),
                           ("Point searches on the index alone (probe, no heap)", lambda w: w.startswith("pts")),
                           ("kNN queries (Fig. 4.4, Table 4.3)", lambda w: w.startswith("knn")),
                           ("Range queries (Fig. 4.5, Table 4.4)", lambda w: w.startswith("range"))):
            rows = [w for w in ws if sel(w)]
            if not rows:
                continue
            L += [title + ":", "", "| | " + " | ".join(r.labels[c] for c in cfgs) + " |",
                  "|---|" + "---|" * len(cfgs)]
            for w in rows:
                cells = []
                for c in cfgs:
                    m = _med(r, d, w, c, "median")
                    fl, fa = _tier_io(r, d, w, c)
                    if m is None:
                        cells.append("–")
                        continue
                    ratio = (" = %s" % num(fl / fa, 2)) if fa else ""
                    cells.append("%s (%s / %s%s)" % (num(m), num(fl, 0), num(fa, 0), ratio))
                L.append("| %s | %s |" % (r.wlabels[w].split(" (")[0], " | ".join(cells)))
            L.append("")
        # gains on the emulated devices (the targets) and, without a
        # target, on the real tiers (configurations without -emu)
        gains = (("mix0:%s" % d, "single-point search (0/100)", 0.35, 0.45),
                 ("mixu0:%s" % d, "single-point search, uniform points (0/100)", 0.35, 0.45),
                 ("pts-probe:%s" % d, "single-point search, probe", 0.35, 0.45),
                 ("ptsu-probe:%s" % d, "single-point search, uniform points, probe", 0.35, 0.45),
                 ("range:%s" % d, "range queries", 0.20, None),
                 ("range-probe:%s" % d, "range queries, probe", 0.20, None)) + tuple(
            ("knn%d:%s" % (k, d), "%d-NN" % k, 0.15, None) for k in (10, 50, 100, 1000)) + tuple(
            ("knn%d-probe:%s" % (k, d), "%d-NN, probe" % k, 0.15, None) for k in (10, 50, 100, 1000))
        for sfx, real in (("-emu", False), ("", True)):
            if "gffm-flash" + sfx not in cfgs:
                continue
            for w, what, t_h, t_s in gains:
                if w not in ws:
                    continue
                if real:
                    what, t_h, t_s = what + " (real tiers)", None, None
                b = _med(r, d, w, "gffm-flash" + sfx, "median")
                for c in ("hgrid-s1.0" + sfx, "hgrid-s1.5" + sfx, "hgrid-s2.5" + sfx):
                    if c in cfgs:
                        targets.append((d, "%s: %s faster than GFFM on flash" % (what, r.labels.get(c, c)),
                                        _gain(b, _med(r, d, w, c, "median")), t_h))
                if "hgrid-special" + sfx in cfgs:
                    targets.append((d, "%s: special case faster than GFFM on flash" % what,
                                    _gain(b, _med(r, d, w, "hgrid-special" + sfx, "median")), t_s))
                if "hgrid-random" + sfx in cfgs and "hgrid-s1.5" + sfx in cfgs:
                    targets.append((d, "%s: H-Grid (s=1.5) faster than H-Grid random" % what,
                                    _gain(_med(r, d, w, "hgrid-random" + sfx, "median"),
                                          _med(r, d, w, "hgrid-s1.5" + sfx, "median")), None if real else 0.0))
    if targets:
        L += ["### Targets (issue 7, with emulation) and gains", "",
              "Gain = 1 − time ÷ time of the reference. The issue states its targets for the emulated "
              "devices; rows of real-tier configurations (no emu) are shown as information.", "",
              "| dataset | what | gain | target | |", "|---|---|---|---|---|"]
        for d, what, x, t in targets:
            L.append("| %s | %s | %s | %s | %s |" % (
                d, what, ("%.1f %%" % (100 * x)) if x is not None else "–",
                ("> %d %%" % round(100 * t)) if t is not None else "(info)",
                ("**met**" if x > t else "**missed**") if (t is not None and x is not None) else ""))
        L.append("")
    return L


def hyrtree_summary(r):
    """Issue 4: the HyR-tree paper's Tables 4.5/4.6 layout (time, reads and
    writes per tier for each configuration) and the targets, for probe
    (index only) and SQL range queries."""
    r.hybrid = {c.name for c in r.p.configs if c.hybrid}
    variants = (("flash", "R-tree on flash"), ("fast", "R-tree on fast tier"), ("upper", "sHR-tree"),
                ("random", "rHyR-tree"), ("wma", "HyR-tree"))
    groups = []
    for c in r.config_order:
        v, _, rest = c.partition("-")
        g = rest                                   # "8k" or "8k-emu"
        if g not in groups:
            groups.append(g)
    L = ["## Paper tables (Tables 4.5/4.6 layout) and targets", "",
         "Medians of the runs: time in ms for the whole workload, then *reads / writes* of the flash tier "
         "and of the fast tier (hybrid_index_stats). Construction = every point inserted one by one into an "
         "empty index; range = 5,000 windows of 0.01 % following the data, run once right after "
         "construction. **Probe** = the index alone (hybrid_index_probe, no heap), a level's pages read in "
         "one I/O batch; **one read at a time** = the same with io_depth = 1, every page its own I/O, as "
         "the paper's R-tree reads; **SQL** = through the executor (bitmap heap scan, heap fetch and "
         "recheck of every row).", ""]
    targets = []
    for d in r._datasets():
        ws = r._workloads(d)
        wl = [(w, t) for w, t in (("build-insert", "construction"), ("range-probe:%s" % d, "range, probe"),
                                  ("range-probe-qd1:%s" % d, "range, probe, one read at a time"),
                                  ("range:%s" % d, "range, SQL")) if w in ws]
        L += ["### %s" % d, ""]
        for g in groups:
            cfgs = [("%s-%s" % (v, g), lab) for v, lab in variants if "%s-%s" % (v, g) in r.config_order]
            if not cfgs:
                continue
            L += ["%s pages%s:" % (g.split("-")[0].upper(), ", paper's devices emulated" if g.endswith("-emu")
                                   else ", real tiers (no emulation)"), "",
                  "| configuration | " + " | ".join("%s ms | flash R / W | fast R / W" % t for _, t in wl) + " |",
                  "|---|" + "---|---|---|" * len(wl)]
            for c, lab in cfgs:
                cells = []
                for w, _ in wl:
                    s = r._stat(d, w, c, "warm")
                    if not s:
                        cells += ["–", "–", "–"]
                        continue
                    cells += [num(s["median"]), "%s / %s" % (num(s["flash_reads"], 0), num(s["flash_writes"], 0)),
                              "%s / %s" % (num(s["optane_reads"], 0), num(s["optane_writes"], 0))]
                L.append("| %s | %s |" % (lab, " | ".join(cells)))
            L.append("")
            if not g.endswith("-emu"):
                continue
            base, hyr, rnd = "flash-%s" % g, "wma-%s" % g, "random-%s" % g
            clustered = d.startswith(("clustered", "real"))
            for w, what in wl:
                b = _med(r, d, w, base, "median")
                x = _med(r, d, w, hyr, "median")
                if w == "build-insert":
                    targets.append((d, g, "%s: HyR-tree faster than R-tree on flash" % what, _gain(b, x), 0.18))
                    continue
                targets.append((d, g, "%s: HyR-tree faster than R-tree on flash" % what, _gain(b, x), 0.35))
                targets.append((d, g, "%s: HyR-tree faster than rHyR-tree" % what,
                                _gain(_med(r, d, w, rnd, "median"), x), 0.0 if clustered else None))
    if targets:
        L += ["### Targets (issue 4, with emulation)", "",
              "Gain = 1 − time ÷ time of the reference (medians). The rHyR-tree target applies to the "
              "clustered data only (info elsewhere).", "",
              "| dataset | pages | what | gain | target | |", "|---|---|---|---|---|---|"]
        for d, g, what, x, t in targets:
            L.append("| %s | %s | %s | %s | %s | %s |" % (
                d, g, what, ("%.1f %%" % (100 * x)) if x is not None else "–",
                ("≥ %d %%" % round(100 * t) if t else "> 0 %") if t is not None else "(info)",
                ("**met**" if (x >= t if t else x > 0) else "**missed**") if (t is not None and x is not None) else ""))
        L.append("")
    return L


def _gist_target(w, mode):
    """Issue 21's target for a gist-compare workload: the largest time ratio
    to GiST that meets it (None: no target, information only)."""
    if w == "build":
        return 0.5
    if w == "build-parallel":
        return 0.35
    if w.startswith("insert2k"):
        return 1 / 0.9                 # issue 18: TPS >= 0.9x GiST's
    if w.startswith("insert"):
        return 1.0
    if w.startswith(("range_", "knn")):
        return 1.0 if mode == "warm" else None
    return None


def _gc_ratio(r, d, w, c, mode):
    """A configuration's median time ÷ GiST's (a parallel build against
    GiST's serial one: GiST cannot build in parallel in PostgreSQL 15)."""
    g = _med(r, d, "build" if w == "build-parallel" else w, "gist", "median", mode)
    return _ratio(_med(r, d, w, c, "median", mode), g)


def _gc_cell(x, t):
    if x is None:
        return "–"
    if t is None:
        return "%.2f" % x
    return ("%.2f ✓" % x) if x <= t else ("**%.2f ✗**" % x)


def _gc_sizes(r, d, c):
    """(bytes after the serial build, bytes after the inserts): medians over
    the repetitions of the sequence."""
    from .report import median
    fresh = median([e["index_bytes"] for e in r._group(d, "build", c, "warm")])
    after = median([e["index_bytes"] for e in r._group(d, "insert2k-autocommit", c, "warm")])
    return fresh, after


def _gc_trend_plot(r, ams, keys):
    """Ratio to GiST against the number of points, one panel per workload."""
    import os
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    sizes = {ds.name: ds.n for ds in r.p.datasets}
    ds = [d for d in r._datasets() if sizes.get(d)]
    if len(ds) < 2:
        return None
    cols = 4
    rows = (len(keys) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.2 * rows), squeeze=False)
    for i, (w, mode) in enumerate(keys):
        ax = axes[i // cols][i % cols]
        stem = w.split(":")[0]
        for c in ams:
            # query workloads are named per dataset
            pts = [(sizes[d], _gc_ratio(r, d, stem + ":" + d if ":" in w else w, c, mode)) for d in ds]
            pts = [(n, x) for n, x in pts if x is not None]
            if pts:
                ax.plot([n for n, _ in pts], [x for _, x in pts], marker="o", label=r.labels.get(c, c))
        t = _gist_target(w, mode)
        if t is not None:
            ax.axhline(t, color="#888888", linestyle="--", linewidth=0.8)
        ax.axhline(1.0, color="#cccccc", linewidth=0.6)
        ax.set_xscale("log")
        ax.set_title("%s (%s)" % (r.wlabels.get(w, w.split(":")[0]), mode), fontsize=9)
        ax.set_ylabel("÷ GiST (median time)", fontsize=8)
        ax.tick_params(labelsize=7)
    for j in range(len(keys), rows * cols):
        axes[j // cols][j % cols].axis("off")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(ams), fontsize=8, frameon=False)
    fig.suptitle("gist-compare: time ÷ GiST's as the data grows (dashed: target)", fontsize=10)
    fig.tight_layout(rect=(0, 0.05, 1, 0.95))
    name = "%s-trend.png" % r.name
    fig.savefig(os.path.join(r.out_dir, name), dpi=90)
    plt.close(fig)
    return name


def gist_compare_summary(r):
    """Issue 21's targets: each access method's median time ÷ GiST's per
    dataset, workload and mode; sizes fresh and after the inserts; the
    parallel builds' speedup; how each ratio moves as the data grows."""
    from .presets import GC_AMS
    ams = [c for c in GC_AMS + ("spgist",) if c in r.config_order]
    ours = [c for c in GC_AMS if c in r.config_order]
    L = ["## Targets (issue 21)", "",
         "Each cell: median time ÷ GiST's median time on the same dataset, workload and mode (lower is "
         "better); ✓ the target is met, **✗** missed, no mark: no target (cold runs; SP-GiST is shown for "
         "reference). A parallel build is compared with GiST's serial build.", "",
         "| dataset | workload | mode | GiST ms | " + " | ".join(r.labels.get(c, c) for c in ams) + " | target |",
         "|---|---|---|---:|" + "---:|" * len(ams) + "---|"]
    rows = 0
    keys = []
    for d in r._datasets():
        for w in r._workloads(d):
            base = "build" if w == "build-parallel" else w
            for mode in ("warm", "cold"):
                g = _med(r, d, base, "gist", "median", mode)
                if g is None:
                    continue
                cells = [_gc_ratio(r, d, w, c, mode) for c in ams]
                if all(x is None for x in cells):
                    continue
                t = _gist_target(w, mode)
                L.append("| %s | %s | %s | %s | %s | %s |" % (
                    d, r.wlabels.get(w, w), mode, num(g),
                    " | ".join(_gc_cell(x, t if c in GC_AMS else None) for c, x in zip(ams, cells)),
                    ("≤ %.2f×" % t) if t else "–"))
                rows += 1
                k = (w.split(":")[0], mode)
                if t is not None and k not in [(kk[0].split(":")[0], kk[1]) for kk in keys]:
                    keys.append((w, mode))
    L.append("")
    if not rows:
        return []

    L += ["## Sizes", "",
          "Index size after the serial build (fresh) and right after the sequence's inserts (the INSERT "
          "statement and the 2k single-row transactions), before any checkpoint, medians over the "
          "repetitions; ratios to GiST's. Our files are copy-on-write: a page written back before the next "
          "checkpoint takes a new slot, and the old one is freed and the file cut at that checkpoint "
          "(`space-growth.md` measures after checkpoints). Targets: fresh ≤ 1.2× GiST's; growth (after ÷ "
          "fresh) ≤ 1.2× GiST's growth.", "",
          "| dataset | index | fresh MB | after inserts MB | growth | fresh ÷ GiST | growth ÷ GiST's |",
          "|---|---|---:|---:|---:|---:|---:|"]
    for d in r._datasets():
        gf, ga = _gc_sizes(r, d, "gist")
        gg = _ratio(ga, gf)
        for c in ["gist"] + ams:
            f, a = _gc_sizes(r, d, c)
            if f is None:
                continue
            gr = _ratio(a, f)
            L.append("| %s | %s | %s | %s | %s | %s | %s |" % (
                d, r.labels.get(c, c), num(f / 1048576), num(a / 1048576) if a else "–",
                ("%.2f" % gr) if gr else "–",
                _gc_cell(_ratio(f, gf), 1.2 if c in GC_AMS else None),
                _gc_cell(_ratio(gr, gg), 1.2 if c in GC_AMS else None)))
    L.append("")

    L += ["## Parallel builds", "",
          "Serial ÷ parallel build time (one worker and the leader), medians. Target: ≥ 1.5×.", "",
          "| dataset | " + " | ".join(r.labels.get(c, c) for c in ours) + " |",
          "|---|" + "---:|" * len(ours)]
    for d in r._datasets():
        cells = []
        for c in ours:
            x = _ratio(_med(r, d, "build", c, "median"), _med(r, d, "build-parallel", c, "median"))
            cells.append("–" if x is None else (("%.2f ✓" % x) if x >= 1.5 else ("**%.2f ✗**" % x)))
        L.append("| %s | %s |" % (d, " | ".join(cells)))
    L.append("")

    ds = r._datasets()
    if len(ds) > 1:
        L += ["## As the data grows", "",
              "Each access method's ratio to GiST per dataset, smallest first (the targets' workloads).", "",
              "| workload | mode | " + " | ".join(r.labels.get(c, c) for c in ours) + " |",
              "|---|---|" + "---|" * len(ours)]
        for w, mode in keys:
            stem = w.split(":")[0]
            cells = []
            for c in ours:
                xs = []
                for d in ds:
                    wd = stem + ":" + d if ":" in w else w
                    x = _gc_ratio(r, d, wd, c, mode)
                    xs.append("–" if x is None else "%.2f" % x)
                cells.append(" → ".join(xs))
            L.append("| %s | %s | %s |" % (r.wlabels.get(w, stem), mode, " | ".join(cells)))
        L.append("")
        png = _gc_trend_plot(r, ours, keys)
        if png:
            L += ["![ratios as the data grows](%s)" % png, ""]
    return L
