"""The benchmark's own PostgreSQL 15 cluster, run as the postgres OS user
(PostgreSQL refuses root), started inside the memory cgroup when there is
one, restarted with other server settings or for cold runs."""
import os
import pwd
import subprocess
import time

from . import system

BASE_CONF = """
# --- bench/run ---
port = {port}
listen_addresses = ''
unix_socket_directories = '{sock}'
shared_preload_libraries = 'hybrid_index'
hybrid_index.max_page_size = 32768
# (each configuration's settings below set the preset's largest page size)
max_connections = 20
fsync = on
max_wal_size = '8GB'
checkpoint_timeout = '30min'
autovacuum = off
lc_messages = 'C'
log_min_messages = warning
log_line_prefix = '%m [%p] '
include_if_exists = 'bench_settings.conf'
"""


class Cluster:
    def __init__(self, workdir, port, bindir, cgroup=None):
        self.workdir = workdir
        self.port = port
        self.bindir = bindir
        self.datadir = os.path.join(workdir, "pgdata")
        self.sockdir = os.path.join(workdir, "sock")
        self.logfile = os.path.join(workdir, "server.log")
        self.cgroup = cgroup
        self.settings = None
        pw = pwd.getpwnam("postgres")
        self.uid, self.gid = pw.pw_uid, pw.pw_gid

    def _as_pg(self, args, **kw):
        return subprocess.run(["runuser", "-u", "postgres", "--"] + args, cwd="/tmp",
                              capture_output=True, text=True, **kw)

    def chown(self, path):
        os.chown(path, self.uid, self.gid)

    def mkdir(self, path):
        os.makedirs(path, exist_ok=True)
        self.chown(path)
        return path

    def init(self):
        self.mkdir(self.workdir)
        os.chmod(self.workdir, 0o755)
        self.mkdir(self.sockdir)
        if os.path.exists(os.path.join(self.datadir, "PG_VERSION")):
            return False
        p = self._as_pg([os.path.join(self.bindir, "initdb"), "-D", self.datadir, "-U", "postgres",
                         "-A", "trust", "-E", "UTF8", "--no-locale"])
        if p.returncode != 0:
            raise RuntimeError("initdb failed: %s" % p.stderr)
        with open(os.path.join(self.datadir, "postgresql.conf"), "a") as f:
            f.write(BASE_CONF.format(port=self.port, sock=self.sockdir))
        return True

    def running(self):
        p = self._as_pg([os.path.join(self.bindir, "pg_ctl"), "-D", self.datadir, "status"])
        return p.returncode == 0

    def set_settings(self, settings):
        """Write the server settings; returns True when they changed."""
        settings = dict(sorted(settings.items()))
        if settings == self.settings:
            return False
        path = os.path.join(self.datadir, "bench_settings.conf")
        with open(path, "w") as f:
            for k, v in settings.items():
                f.write("%s = '%s'\n" % (k, str(v).replace("'", "''")))
        self.chown(path)
        self.settings = settings
        return True

    def start(self):
        cmd = ["runuser", "-u", "postgres", "--", os.path.join(self.bindir, "pg_ctl"), "-D", self.datadir,
               "-l", self.logfile, "-w", "-t", "600", "-o", "-p %d -k %s" % (self.port, self.sockdir), "start"]
        if self.cgroup is not None and self.cgroup.procs_file:
            # the postmaster (and every backend) is born inside the cgroup
            cmd = ["sh", "-c", 'echo $$ > "$0" && exec "$@"', self.cgroup.procs_file] + cmd
        if not os.path.exists(self.logfile):
            open(self.logfile, "a").close()
            self.chown(self.logfile)
        p = subprocess.run(cmd, cwd="/tmp", capture_output=True, text=True)
        if p.returncode != 0:
            tail = open(self.logfile).read()[-3000:] if os.path.exists(self.logfile) else ""
            raise RuntimeError("server did not start: %s\n%s" % (p.stderr.strip(), tail))
        for _ in range(600):
            if self._as_pg([os.path.join(self.bindir, "pg_isready"), "-q", "-h", self.sockdir,
                            "-p", str(self.port)]).returncode == 0:
                return
            time.sleep(0.2)
        raise RuntimeError("server not ready")

    def stop(self):
        if not self.running():
            return
        p = self._as_pg([os.path.join(self.bindir, "pg_ctl"), "-D", self.datadir, "-m", "fast",
                         "-w", "-t", "120", "stop"])
        if p.returncode != 0:
            self._as_pg([os.path.join(self.bindir, "pg_ctl"), "-D", self.datadir, "-m", "immediate",
                         "-w", "stop"])

    def restart(self, cold=False):
        """Restart; cold also drops the OS page cache while the server is down.
        Returns None or why the cache could not be dropped."""
        self.stop()
        err = system.drop_caches() if cold else None
        self.start()
        return err

    def log_problems(self, since=0):
        """ERROR/FATAL/PANIC lines of the server log from byte offset since."""
        return self.log_lines(since, ("ERROR:", "FATAL:", "PANIC:", "terminated by signal"))

    def log_lines(self, since, needles):
        """Lines of the server log from byte offset since that contain one of needles."""
        if not os.path.exists(self.logfile):
            return []
        with open(self.logfile, errors="replace") as f:
            f.seek(since)
            return [l.rstrip() for l in f if any(w in l for w in needles)]

    def log_size(self):
        return os.path.getsize(self.logfile) if os.path.exists(self.logfile) else 0
