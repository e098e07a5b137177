"""bench/results/<name>.md, PNG plots and a CSV of the executions (in bench/results/raw/,
not committed)."""
import datetime
import gzip
import json
import math
import os
import statistics
import textwrap

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from .db import lit  # noqa: E402

# workload kinds that time the index alone (hybrid_index_probe*), no heap
PROBE_KINDS = {"range_probe", "knn_probe", "point_probe"}
TIER_COLUMNS = [("flash_reads", "flash reads", "#1f77b4", ""), ("optane_reads", "fast-tier reads", "#ff7f0e", ""),
                ("flash_writes", "flash writes", "#1f77b4", "//"), ("optane_writes", "fast-tier writes", "#ff7f0e", "//"),
                ("idx_blks_read", "PostgreSQL index blocks read", "#2ca02c", "")]
MODE_ALPHA = {"warm": 1.0, "cold": 0.55}


def num(x, digits=1):
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    if abs(x) >= 10000:
        return "{:,.0f}".format(x)
    if abs(x) >= 100:
        return "%.0f" % x
    if abs(x) >= 1 or x == 0:
        return "%.*f" % (digits, x)
    return "%.3g" % x


def median(vals):
    vals = [v for v in vals if v is not None]
    return statistics.median(vals) if vals else None


# raw execution CSVs go to <results>/raw/, which git ignores
RAW_DIR = "raw"


class Report:
    def __init__(self, preset, db, run_name, env, failures, warnings, out_dir, name):
        self.p = preset
        self.db = db
        self.run = run_name
        self.env = env
        self.failures = failures
        self.warnings = warnings
        self.out_dir = out_dir
        self.name = name
        self.stats = db.rows("SELECT * FROM hybrid_index_bench.report(%s, %s)" % (lit(run_name), lit(preset.baseline)))
        self.execs = db.rows("SELECT e.*, w.kind FROM hybrid_index_bench.execution e JOIN hybrid_index_bench.workload w "
                             "ON w.name = e.workload WHERE run_name = %s ORDER BY id" % lit(run_name))
        self.labels = {c.name: c.label for c in preset.configs}
        self.wlabels = {w.name: w.label for w in preset.workloads}
        self.config_order = [c.name for c in preset.configs]

    # --- helpers ------------------------------------------------------------------

    def _datasets(self):
        seen = []
        for e in self.execs:
            if e["dataset"] not in seen:
                seen.append(e["dataset"])
        return seen

    def _workloads(self, dataset):
        order = [w.name for w in self.p.workloads]
        ws = {e["workload"] for e in self.execs if e["dataset"] == dataset}
        return [w for w in order if w in ws]

    def _group(self, dataset, workload, config, mode):
        return [e for e in self.execs if e["dataset"] == dataset and e["workload"] == workload
                and e["config"] == config and e["mode"] == mode]

    def _stat(self, dataset, workload, config, mode):
        for s in self.stats:
            if (s["dataset"], s["workload"], s["config"], s["mode"]) == (dataset, workload, config, mode):
                return s
        return None

    # --- markdown -------------------------------------------------------------------

    def write(self):
        os.makedirs(self.out_dir, exist_ok=True)
        pngs = self.plots()
        md = os.path.join(self.out_dir, self.name + ".md")
        with open(md, "w") as f:
            f.write(self.markdown(pngs))
        # gzip: every row repeats the run's settings and inspect snapshots.
        # raw/ is ignored by git (.gitignore): the command in the report
        # regenerates it, and only the report and its plots are committed.
        os.makedirs(os.path.join(self.out_dir, RAW_DIR), exist_ok=True)
        csv = os.path.join(self.out_dir, RAW_DIR, self.name + "-executions.csv.gz")
        out, _ = self.db.run("COPY (SELECT * FROM hybrid_index_bench.execution WHERE run_name = %s ORDER BY id) "
                             "TO STDOUT WITH (FORMAT csv, HEADER true)" % lit(self.run))
        with gzip.open(csv, "wt") as f:
            f.write(out)
        return md, pngs, csv

    def _runs_text(self):
        if self.p.qreps == self.p.reps:
            return "%d runs" % self.p.reps
        return "%d runs (queries: %d)" % (self.p.reps, self.p.qreps)

    def markdown(self, pngs):
        env = self.env
        L = ["# %s: %s" % (self.name, self.p.name), "", self.p.description, ""]
        L += ["Run `%s`, %s, %s (wall clock). Command: `%s`." % (
            self.run, env["started"], env["duration"], env["command"]), ""]
        L += ["Each figure is the **median of %s**; the spread is shown as min–max. Ratios are medians "
              "divided by the median of **%s** (the baseline) for the same dataset, workload and mode. "
              "Warm: caches warm (a warm-up pass before query runs). Cold: the server was restarted and the "
              "OS page cache dropped before every run. %s" % (
                  self._runs_text(), self.labels.get(self.p.baseline, "–"),
                  "Each configuration ran its repetitions one after the other (its table was dropped before "
                  "the next configuration's)." if self.p.drop_after_config else
                  "The repetitions ran in rounds, every configuration once per round (the builds and inserts, "
                  "then the queries), so that the machine's drift over minutes falls on all of them alike; "
                  "each configuration's queries of a round ran in a server restarted for them (every "
                  "configuration has its own copy of the table, and the others' pages would crowd its own "
                  "out of the buffers)."), ""]
        for f in pngs:
            L.append("![%s](%s)" % (os.path.basename(f), os.path.basename(f)))
        L.append("")
        if self.p.summary:
            L += self.p.summary(self)
        L += self._results()
        L += self._batched()
        L += self._setup()
        L += self._problems()
        L += ["## Reproduce", "",
              "```sh", env["command"], "```", "",
              "The warm runs of each dataset are also one SQL call in the benchmark database "
              "(after `bench/run ... --keep`: `psql -h %s -p %s -U postgres -d %s`): `CALL hybrid_index_bench.run_experiment('%s:<dataset>');` "
              "and the statistics: `SELECT * FROM hybrid_index_bench.report('%s', '%s');`."
              % (env["socket"], env["port"], env["database"], self.p.name, self.run, self.p.baseline), "",
              "Raw rows: `%s/%s-executions.csv.gz` (one row per run, every column of "
              "`hybrid_index_bench.execution`), written next to this report by the command above; it is not "
              "committed (`bench/results/%s/` is ignored by git): run the command again to regenerate it."
              % (RAW_DIR, self.name, RAW_DIR), "",
              "Data: GeoNames cities500 (CC BY 4.0); © OpenStreetMap contributors (ODbL) for land polygons.", ""]
        return "\n".join(L)

    def _results(self):
        L = ["## Results", ""]
        for d in self._datasets():
            n = self.db.value("SELECT n_rows FROM hybrid_index_bench.dataset WHERE name = %s" % lit(d))
            L += ["### Dataset `%s` (%s rows)" % (d, "{:,}".format(int(n)) if n else "?"), ""]
            for w in self._workloads(d):
                L += ["#### %s (`%s`)" % (self.wlabels.get(w, w), w), ""]
                if any(e["kind"] in PROBE_KINDS for e in self.execs if e["workload"] == w):
                    L += ["*Index only (no heap): each query is one call of hybrid_index_probe / "
                          "hybrid_index_probe_knn, the index's search alone; rows = TIDs the index "
                          "returned; the executor's heap fetches and rechecks of the SQL workloads are not in "
                          "these times.*", ""]
                L += ["| configuration | mode | median ms (min–max) | ms/op | × %s | CPU ms | flash R/W | fast R/W "
                      "| cache hits | PG idx blocks read | rows | index used |" % self.labels.get(self.p.baseline, "base"),
                      "|---|---|---|---|---|---|---|---|---|---|---|---|"]
                for mode in ("warm", "cold"):
                    for c in self.config_order:
                        s = self._stat(d, w, c, mode)
                        if not s:
                            continue
                        g = self._group(d, w, c, mode)
                        hits, miss = median([e["cache_hits"] for e in g]), median([e["cache_misses"] for e in g])
                        hit = "%.1f %%" % (100.0 * hits / (hits + miss)) if hits is not None and (hits + miss) > 0 else "–"
                        used = {e["plan_uses_index"] for e in g}
                        L.append("| %s | %s | **%s** (%s–%s) | %s | %s | %s | %s / %s | %s / %s | %s | %s | %s | %s |" % (
                            self.labels.get(c, c), mode, num(s["median"]), num(s["min"]), num(s["max"]),
                            num(s["median_ms_per_op"], 3), num(s["ratio"], 2), num(s["median_cpu_ms"], 0),
                            num(s["flash_reads"], 0), num(s["flash_writes"], 0),
                            num(s["optane_reads"], 0), num(s["optane_writes"], 0), hit,
                            num(s["idx_blks_read"], 0), num(s["median_rows"], 0),
                            "–" if used == {None} else ("yes" if used == {True} else "**NO**")))
                agree = {s["answers_agree"] for s in self.stats if s["dataset"] == d and s["workload"] == w}
                if False in agree:
                    L += ["", "**The configurations returned different rows for this workload** (see the CSV)."]
                L.append("")
        return L

    def _batched(self):
        fio = self.env.get("fio") or {}
        flash = {r["qd"]: r for r in fio.get("flash", []) if "iops" in r}
        rows = []
        for e in self.execs:
            if e["mode"] == "cold" and e["kind"] == "range" and e["flash_reads"]:
                rows.append(e)
        if not rows or not flash:
            return []
        L = ["## Batched reads against the disk", "",
             "fio random reads on the flash tier's disk: QD1 %s IOPS, QD32 %s IOPS (%s, %s). Cold range "
             "queries of our access methods, index page reads per second of wall time (whole run, CPU "
             "included) and per second of I/O time:" % (
                 num(flash.get(1, {}).get("iops"), 0), num(flash.get(32, {}).get("iops"), 0),
                 self.p.fio_bs, "O_DIRECT" if flash.get(32, {}).get("direct") else "buffered"), "",
             "| dataset | workload | configuration | reads | reads/s (wall) | reads/s (I/O time) | % of QD32 |",
             "|---|---|---|---|---|---|---|"]
        seen = set()
        for e in rows:
            key = (e["dataset"], e["workload"], e["config"])
            if key in seen:
                continue
            seen.add(key)
            g = self._group(*key, "cold")
            reads = median([x["flash_reads"] for x in g])
            wall = median([x["wall_ms"] for x in g])
            io = median([x["flash_io_ms"] for x in g])
            rps = reads / (wall / 1000.0) if wall else None
            iops = reads / (io / 1000.0) if io else None
            L.append("| %s | %s | %s | %s | %s | %s | %s |" % (
                key[0], key[1], self.labels.get(key[2], key[2]), num(reads, 0), num(rps, 0), num(iops, 0),
                num(100.0 * iops / flash[32]["iops"], 0) if iops and 32 in flash else "–"))
        return L + [""]

    def _setup(self):
        env = self.env
        m = env["machine"]
        L = ["## Setup", "",
             "- Machine: %s, %s cores, %s GB RAM, kernel %s; disk %s; load average at start %s, at end %s." % (
                 m.get("cpu", "?"), m.get("cores"), m.get("memory_gb"), m.get("kernel"), m.get("disk"),
                 " ".join(m.get("loadavg", [])), " ".join(env.get("loadavg_end", []))),
             "- Software: %s; PostGIS %s; hybrid_index %s (git %s)." % (
                 env.get("server_version"), env.get("postgis_version"), env.get("extension_version"), env.get("git")),
             "- Memory: %s" % env.get("memory"),
             "- Memory cgroup: %s%s" % (env.get("cgroup"), (" — peak %s MB, limit reached %s times, OOM kills %s" % (
                 env["cgroup_stats"].get("peak_mb"), env["cgroup_stats"].get("limit_hits"),
                 env["cgroup_stats"].get("oom_kills"))) if env.get("cgroup_stats") else ""),
             "- Cold runs: %s" % env.get("cold"),
             "- Flash tier: %s. Fast tier: %s" % (env.get("flash_tier"), env.get("fast_tier")),
             "- Device emulation: %s" % env.get("emulation"), ""]
        fio = env.get("fio") or {}
        if fio:
            L += ["fio random reads (%s blocks, io_uring, %s s each):" % (self.p.fio_bs, fio.get("runtime")), "",
                  "| tier | path | QD | IOPS | mean latency µs | O_DIRECT |", "|---|---|---|---|---|---|"]
            for tier in ("flash", "fast"):
                for r in fio.get(tier, []):
                    L.append("| %s | %s | %s | %s | %s | %s |" % (
                        tier, fio.get(tier + "_path"), r["qd"], num(r.get("iops"), 0), num(r.get("lat_us")),
                        "yes" if r.get("direct") else ("no" if "iops" in r else r.get("error"))))
            L.append("")
        L += ["Configurations:", "", "| name | access method | reloptions | tablespace | device profile | server settings |",
              "|---|---|---|---|---|---|"]
        for c in self.p.configs:
            L.append("| %s | %s | %s | %s | %s | %s |" % (
                c.name, c.am, ", ".join("%s=%s" % kv for kv in sorted(c.reloptions.items())) or "–",
                c.tablespace or "default", c.profile,
                ", ".join("%s=%s" % kv for kv in sorted(c.server.items()))))
        L += ["", "Datasets and query sets:", ""]
        for d in self.db.rows("SELECT name, kind, n_rows, params, extent::text AS extent, round(load_ms) AS load_ms "
                              "FROM hybrid_index_bench.dataset ORDER BY name"):
            L.append("- `%s`: %s, %s rows, extent %s, `%s`" % (d["name"], d["kind"], "{:,}".format(d["n_rows"]),
                                                                d["extent"], json.dumps(d["params"], sort_keys=True)))
        for q in self.db.rows("SELECT name, kind, n, params FROM hybrid_index_bench.query_set ORDER BY name"):
            L.append("- query set `%s`: %s × %s `%s`" % (q["name"], q["n"], q["kind"], json.dumps(q["params"], sort_keys=True)))
        return L + [""] + ["- " + n for n in self.p.notes] + [""]

    def _problems(self):
        L = []
        m = self.env.get("machine", {})
        loads = [float(x) for x in m.get("loadavg", []) + self.env.get("loadavg_end", [])]
        if loads and m.get("cores") and max(loads) > 0.5 * m["cores"]:
            self.warnings = ["the machine was busy (load average up to %.1f on %d cores, other work than "
                             "this benchmark): expect noise, and compare the min–max spreads"
                             % (max(loads), m["cores"])] + [w for w in self.warnings if "machine was busy" not in w]
        if self.failures:
            L += ["## Failed runs", ""]
            for f in self.failures:
                L.append("- %(dataset)s %(config)s %(workload)s %(mode)s rep %(rep)s: %(error)s" % f)
                for line in f.get("server_log", []):
                    L.append("  - server log: `%s`" % line)
            L.append("")
        noidx = sorted({(e["dataset"], e["config"], e["workload"]) for e in self.execs if e["plan_uses_index"] is False})
        if noidx or self.warnings:
            L += ["## Warnings", ""]
            for d, c, w in noidx:
                L.append("- %s %s %s: the plan did not use the configuration's index" % (d, c, w))
            for w in self.warnings:
                L.append("- %s" % w)
            L.append("")
        return L

    # --- plots -----------------------------------------------------------------------

    def plots(self):
        out = []
        for d in self._datasets():
            ws = self._workloads(d)
            if not ws:
                continue
            for what in ("time", "io"):
                path = os.path.join(self.out_dir, "%s-%s-%s.png" % (self.name, what, d.replace(":", "_")))
                self._plot(d, ws, what, path)
                out.append(path)
        return out

    def _plot(self, dataset, workloads, what, path):
        configs = [c for c in self.config_order if any(e["config"] == c and e["dataset"] == dataset for e in self.execs)]
        modes = [m for m in ("warm", "cold") if any(e["mode"] == m and e["dataset"] == dataset for e in self.execs)]
        nb = len(configs)
        cols = 1 if nb > 12 else min(4, len(workloads))
        rows = math.ceil(len(workloads) / cols)
        w_sub = max(3.6, 0.42 * nb * len(modes) + 1.2)
        fig, axes = plt.subplots(rows, cols, figsize=(w_sub * cols, 3.9 * rows), squeeze=False)
        width = 0.8 / len(modes)
        handles = {}
        for i, w in enumerate(workloads):
            ax = axes[i // cols][i % cols]
            ax.set_title(self.wlabels.get(w, w), fontsize=10)
            totals = []
            for j, mode in enumerate(modes):
                for k, c in enumerate(configs):
                    g = self._group(dataset, w, c, mode)
                    if not g:
                        continue
                    x = k - 0.4 + width * (j + 0.5)
                    alpha = MODE_ALPHA[mode]
                    if what == "time":
                        s = self._stat(dataset, w, c, mode)
                        med = s["median"]
                        totals.append(med)
                        h = ax.bar(x, med, width, color="#999999", alpha=alpha, edgecolor="black", linewidth=0.5,
                                   yerr=[[med - s["min"]], [s["max"] - med]], capsize=2, error_kw={"linewidth": 0.8})
                        handles.setdefault("total (%s)" % mode, h)
                        bottom = 0.0
                        for col, label, color, hatch in (("flash_io_ms", "flash I/O time", "#1f77b4", "//"),
                                                         ("optane_io_ms", "fast-tier I/O time", "#ff7f0e", "xx")):
                            v = median([e[col] for e in g])
                            if v:
                                v = min(v, med - bottom)
                                h = ax.bar(x, v, width, bottom=bottom, color=color, alpha=0.6 * alpha,
                                           hatch=hatch, edgecolor="black", linewidth=0.3)
                                handles.setdefault(label, h)
                                bottom += v
                    else:
                        bottom = 0.0
                        for col, label, color, hatch in TIER_COLUMNS:
                            v = median([e[col] for e in g])
                            if v:
                                h = ax.bar(x, v, width, bottom=bottom, color=color, alpha=alpha, hatch=hatch,
                                           edgecolor="black", linewidth=0.4)
                                handles.setdefault(label, h)
                                bottom += v
            ax.set_xticks(range(nb))
            ax.set_xticklabels([self.labels.get(c, c) for c in configs], rotation=35 if nb > 3 else 0,
                               ha="right" if nb > 3 else "center", fontsize=8)
            ax.set_ylabel("ms per run (median)" if what == "time" else "I/Os per run (median)", fontsize=8)
            ax.tick_params(axis="y", labelsize=8)
            ax.grid(axis="y", alpha=0.3)
            ax.set_axisbelow(True)
            heights = [t for t in totals if t and t > 0]
            if what == "time" and heights and max(heights) / min(heights) > 50:
                ax.set_yscale("log")
                ax.set_title(self.wlabels.get(w, w) + " (log scale)", fontsize=10)
            if not ax.patches:
                ax.text(0.5, 0.5, "no I/O" if what == "io" else "no runs", transform=ax.transAxes,
                        ha="center", va="center", fontsize=9, color="#666666")
                ax.set_yticks([])
        for i in range(len(workloads), rows * cols):
            axes[i // cols][i % cols].axis("off")
        title = ("Execution time per configuration" if what == "time" else "I/Os per tier") + \
            " — %s, dataset %s\n(median of %s%s%s)" % (
                self.p.name, dataset, self._runs_text(), "; error bars min–max" if what == "time" else "",
                "; left bar warm, right bar cold (lighter)" if len(modes) > 1 else "")
        fig.suptitle(title, fontsize=11)
        order = ["total (warm)", "total (cold)", "flash I/O time", "fast-tier I/O time"] + [t[1] for t in TIER_COLUMNS]
        handles = {k: handles[k] for k in order if k in handles}
        if handles:
            fig.legend(list(handles.values()), list(handles.keys()), loc="lower center", bbox_to_anchor=(0.5, 0.025),
                       ncol=min(5, len(handles)), fontsize=8, frameon=False)
        if what == "io":
            note = ("hybrid_index AMs: page reads and writes per tier (hybrid_index_stats). "
                    "PostgreSQL's AMs: index blocks read into shared buffers (pg_statio; from the OS, "
                    "whose page cache may have held them); their writes are not counted.")
            fig.text(0.01, 0.004, "\n".join(textwrap.wrap(note, int(fig.get_figwidth() * 17))),
                     fontsize=7, color="#444444")
        fig.tight_layout(rect=(0, 0.1 if fig.get_figwidth() < 14 else 0.085, 1, 0.93))
        fig.savefig(path, dpi=110)
        plt.close(fig)


def now():
    return datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
