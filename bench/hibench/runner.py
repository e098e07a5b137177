"""Runs a preset against the benchmark cluster: loads datasets and query
sets, records configurations and workloads as rows, then walks the phases,
one CALL hybrid_index_bench.run(...) per measured run."""
import os
import sys
import time

from .db import SQLError, lit


def fmt_duration(s):
    s = int(s)
    return "%d:%02d:%02d" % (s // 3600, s // 60 % 60, s % 60)


class Runner:
    def __init__(self, preset, db, cluster, run_name, data_paths, log=print):
        self.p = preset
        self.db = db
        self.cluster = cluster
        self.run_name = run_name
        self.data_paths = data_paths
        self.log = log
        self.failures = []
        self.warnings = []
        self.cold_note = None

    # --- setup ---------------------------------------------------------------

    def load_datasets(self, needed):
        for d in self.p.datasets:
            if d.name not in needed:
                continue
            want = self._dataset_params(d)
            have = self.db.rows("SELECT kind, params, n_rows FROM hybrid_index_bench.dataset WHERE name = %s"
                                % lit(d.name))
            if have and have[0]["kind"] == d.kind and all(have[0]["params"].get(k) == v for k, v in want.items()) \
                    and have[0]["n_rows"] > 0:
                self.log("dataset %s: present (%d rows)" % (d.name, have[0]["n_rows"]))
                continue
            t = time.time()
            if d.kind == "cities":
                n = self.db.call("hybrid_index_bench.load_cities", d.name, self.data_paths["cities"])
            elif d.kind == "land":
                n = self.db.call("hybrid_index_bench.load_land", d.name, self.data_paths["land"], d.limit)
            elif d.kind == "jittered":
                n = self.db.call("hybrid_index_bench.load_jittered", d.name, d.source, d.n, d.seed,
                                 float(d.radius))
            else:
                n = self.db.value("SELECT hybrid_index_bench.load_synthetic(%s, %s, %s, %s, %s::box2d, %s, %s)" % (
                    lit(d.name), lit(d.kind), lit(d.n), lit(d.seed), lit(d.extent), lit(d.srid), lit(d.params)))
            self.db.run("VACUUM ANALYZE hybrid_index_bench_data.%s" % self.db.value(
                "SELECT quote_ident(table_name) FROM hybrid_index_bench.dataset WHERE name = %s" % lit(d.name)))
            self.log("dataset %s: loaded %s rows in %.1f s" % (d.name, n, time.time() - t))

    @staticmethod
    def _dataset_params(d):
        if d.kind == "jittered":
            return {"source": d.source, "n": d.n, "seed": d.seed, "radius": float(d.radius)}
        if d.kind in ("uniform", "gaussian", "clustered"):
            return {"n": d.n, "seed": d.seed}
        if d.kind == "land":
            return {"limit": d.limit}
        return {}

    def define(self, datasets):
        for q in self.p.query_sets:
            if q.dataset not in datasets:
                continue
            if q.kind == "window":
                self.db.call("hybrid_index_bench.make_windows", q.name, q.dataset, q.n, float(q.area_pct),
                             q.distribution, q.seed)
            elif q.kind == "knn":
                self.db.call("hybrid_index_bench.make_knn_points", q.name, q.dataset, q.n, q.k,
                             q.distribution, q.seed)
            else:
                self.db.call("hybrid_index_bench.make_point_groups", q.name, q.dataset, q.n, q.group, q.seed)
        for w in self.p.workloads:
            if w.query_set and not any(q.name == w.query_set and q.dataset in datasets for q in self.p.query_sets):
                continue
            self.db.call("hybrid_index_bench.add_workload", w.name, w.kind, w.query_set, w.source, w.params,
                         w.label)
        for c in self.p.configs:
            self.db.value("SELECT hybrid_index_bench.add_config(%s, %s, %s, %s, %s, %s, %s, %s, %s)" % (
                lit(c.name), lit(c.am), lit(c.reloptions), lit(c.gucs), lit(c.tablespace), lit(c.profile),
                lit(c.opclass), lit(c.server), lit(c.label)))
        for i, ph in enumerate(self.p.phases):
            for d in ph.datasets:
                if d not in datasets:
                    continue
                # the warm part of the phase, re-runnable with one SQL call
                self.db.run("INSERT INTO hybrid_index_bench.experiment AS e "
                            "(name, configs, datasets, workloads, reps, baseline, description) "
                            "VALUES (%s, %s::text[], %s::text[], %s::text[], %s, %s, %s) "
                            "ON CONFLICT (name) DO UPDATE SET configs = EXCLUDED.configs, "
                            "datasets = EXCLUDED.datasets, workloads = EXCLUDED.workloads, "
                            "reps = EXCLUDED.reps, baseline = EXCLUDED.baseline, "
                            "description = EXCLUDED.description" % (
                                lit("%s:%s" % (self.p.name, d)), lit(self._arr([c.name for c in self.configs
                                                                     if ph.configs is None or c.name in ph.configs])),
                                lit(self._arr([d])), lit(self._arr(ph.sequence + ph.queries)), self.p.reps,
                                lit(self.p.baseline), lit(self.p.description)))

    @staticmethod
    def _arr(items):
        return "{" + ",".join('"%s"' % s.replace("\\", "\\\\").replace('"', '\\"') for s in items) + "}"

    # --- the plan --------------------------------------------------------------

    @property
    def configs(self):
        return self.p.configs

    def plan(self, datasets):
        steps = []
        reps, qreps = list(range(1, self.p.reps + 1)), list(range(1, self.p.qreps + 1))
        for ph in self.p.phases:
            for d in ph.datasets:
                if d not in datasets:
                    continue
                cs = [c.name for c in self.configs if ph.configs is None or c.name in ph.configs]
                if self.p.drop_after_config:
                    # one configuration's table at a time: everything of one, then the next
                    for c in cs:
                        steps += self._sequence_steps(ph, d, c, reps) + self._vacuum_steps(ph, d, c)
                        steps += self._query_steps(ph, d, c, qreps)
                        steps.append(("drop", d, c, None, None, None))
                    continue
                # Repetitions run in rounds, each configuration once per round:
                # the machine's speed drifts over minutes (other VMs, kernel
                # threads), and a configuration's repetitions run back to back
                # would carry that drift into its ratio to the baseline.
                # Builds and inserts: configurations with the same server
                # settings next to each other, every other round backwards, so
                # a round costs one restart per group of settings.
                order = self._grouped(cs)
                for rep in reps:
                    for c in self._round(order, rep):
                        steps += self._sequence_steps(ph, d, c, [rep])
                for c in order:
                    steps += self._vacuum_steps(ph, d, c)
                # Queries: a fresh server for each configuration's runs.  Every
                # configuration has its own copy of the table; in a server
                # shared with the others' runs, its warm-up would load its pages
                # into buffers full of the others' (each used more often), and
                # the clock sweep would evict its own new pages first.
                for rep in qreps:
                    for c in self._round(order, rep):
                        steps += self._query_steps(ph, d, c, [rep], fresh=True)
        return steps

    def _sequence_steps(self, ph, d, c, reps):
        """The given repetitions of one configuration's sequence (builds, inserts)."""
        runs = [("run", d, c, w, rep, "warm") for rep in reps for w in ph.sequence
                if not self.p.skipped(c, w)]
        return [("server", d, c, None, None, None)] + runs if runs else []

    def _vacuum_steps(self, ph, d, c):
        return [("vacuum", d, c, None, None, None)] if ph.vacuum and ph.queries else []

    def _query_steps(self, ph, d, c, reps, fresh=False):
        """One configuration's warm then cold query runs of the given
        repetitions; fresh: in a server restarted for them."""
        runs = [("run", d, c, w, rep, mode) for mode, ws in (("warm", ph.queries), ("cold", ph.cold))
                for w in ws if not self.p.skipped(c, w) for rep in reps]
        return [("fresh_server" if fresh else "server", d, c, None, None, None)] + runs if runs else []

    @staticmethod
    def _round(order, rep):
        """The configurations of round rep: every other round backwards."""
        return order if rep % 2 else order[::-1]

    def _grouped(self, names):
        """names reordered so that configurations with the same server settings
        are adjacent (each group where its first member was)."""
        groups = []
        for c in names:
            key = sorted(self.p.config(c).server.items())
            for g in groups:
                if g[0] == key:
                    g[1].append(c)
                    break
            else:
                groups.append((key, [c]))
        return [c for _, g in groups for c in g]

    def ensure_server(self, config, fresh=False):
        """The server with config's settings; fresh: restarted even if it had them."""
        if self.cluster.set_settings(self.p.config(config).server):
            self.log("server settings for %s: %s; restarting" % (
                config, ", ".join("%s=%s" % kv for kv in sorted(self.p.config(config).server.items()))))
            self.cluster.restart()
        elif fresh:
            self.cluster.restart()

    def execute(self, steps):
        runs = [s for s in steps if s[0] == "run"]
        total = len(runs)
        done = 0
        t0 = time.time()
        durations = {}
        for kind, d, c, w, rep, mode in steps:
            if kind in ("server", "fresh_server"):
                self.ensure_server(c, fresh=kind == "fresh_server")
                continue
            if kind == "vacuum":
                self._vacuum(d, c)
                continue
            if kind == "drop":
                self.db.call("hybrid_index_bench.drop_instances", d, c)
                continue
            done += 1
            notes = {"driver": "bench/run"}
            if mode == "cold":
                # nothing left to replay or flush after the restart
                self.db.run("SELECT hybrid_index_bench.checkpoint_index(%s, %s); CHECKPOINT;" % (lit(c), lit(d)))
                err = self.cluster.restart(cold=True)
                notes["restarted"] = True
                notes["os_cache_dropped"] = err is None
                if err and not self.cold_note:
                    self.cold_note = err
                    self.warnings.append(err)
            elapsed = time.time() - t0
            eta = self._eta(runs, done - 1, durations)
            prefix = "[%4d/%d %s eta %s] %s %s %s %s rep %d" % (
                done, total, fmt_duration(elapsed), fmt_duration(eta), d, c, w, mode, rep)
            sys.stdout.write(prefix + " ... ")
            sys.stdout.flush()
            logpos = self.cluster.log_size()
            t_step = time.time()
            try:
                out, err = self.db.run("CALL hybrid_index_bench.run(%s, %s, %s, %s, %d, %s, %s)" % (
                    lit(self.run_name), lit(c), lit(d), lit(w), rep, lit(mode), lit(notes)))
                ex = int(out.strip().splitlines()[-1])
                r = self.db.rows("SELECT wall_ms, operations, plan_uses_index FROM hybrid_index_bench.execution "
                                 "WHERE id = %d" % ex)[0]
                msg = "%.1f ms" % r["wall_ms"]
                if r["operations"] > 1:
                    msg += " (%d ops, %.3f ms/op)" % (r["operations"], r["wall_ms"] / r["operations"])
                if r["plan_uses_index"] is False:
                    msg += " NO INDEX USED"
                print(msg, flush=True)
                durations.setdefault((c, w, mode), []).append(time.time() - t_step)
                for line in err.splitlines():
                    if "WARNING" in line:
                        self.warnings.append("%s %s %s: %s" % (d, c, w, line.strip()))
                # io_uring refused (e.g. kernel.io_uring_disabled set by another
                # job, as tools/test-all.sh's nouring suite does): synchronous
                # reads, times not comparable with the other runs
                if self.cluster.log_lines(logpos, ("falling back to synchronous I/O",)):
                    print("    WARNING: io_uring was refused during this run (synchronous I/O)", flush=True)
                    self.warnings.append("%s %s %s rep %d: io_uring was refused by the kernel during this run, "
                                         "so its page reads were synchronous: its time is not comparable"
                                         % (d, c, w, rep))
            except SQLError as e:
                print("FAILED", flush=True)
                msg = str(e).splitlines()[0] if str(e) else "error"
                problems = self.cluster.log_problems(logpos)
                self.failures.append({"dataset": d, "config": c, "workload": w, "rep": rep, "mode": mode,
                                      "error": msg, "server_log": problems[-5:]})
                print("    " + msg, file=sys.stderr)
                if not self.cluster.running():
                    self.log("the server is down; restarting")
                    self.cluster.start()

    @staticmethod
    def _eta(runs, done, durations):
        """Seconds left: each remaining run is expected to take as long as the
        runs of the same configuration and workload so far, else of the same
        workload, else the mean run."""
        if not durations:
            return 0
        allt = [t for ts in durations.values() for t in ts]
        mean = sum(allt) / len(allt)
        left = 0.0
        for _, d, c, w, rep, mode in runs[done:]:
            same = durations.get((c, w, mode)) or [t for (c2, w2, m2), ts in durations.items()
                                                    if w2 == w and m2 == mode for t in ts]
            left += sum(same) / len(same) if same else mean
        return left

    def _vacuum(self, d, c):
        tbl = self.db.value("SELECT quote_ident(table_name) FROM hybrid_index_bench.instance "
                            "WHERE dataset = %s AND config = %s" % (lit(d), lit(c)))
        if tbl:
            try:
                self.db.run("VACUUM (ANALYZE) hybrid_index_bench_data.%s" % tbl)
            except SQLError as e:
                self.warnings.append("VACUUM of %s failed: %s" % (tbl, e))
