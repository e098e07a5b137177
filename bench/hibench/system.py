"""What the benchmark needs from the machine: a memory cgroup, the OS page
cache, a fast tier on RAM, fio, and a description of the hardware.

Every facility reports what it could do; nothing here fails the run when
the machine does not allow something, the report says so instead."""
import json
import os
import platform
import shutil
import subprocess


def sh(cmd, check=True, **kw):
    return subprocess.run(cmd, check=check, capture_output=True, text=True, **kw)


# --- memory cgroup -----------------------------------------------------------

class MemoryCgroup:
    """A memory cgroup for the server (v2 memory.max, or v1 memory.limit_in_bytes)."""

    def __init__(self, name):
        self.name = name
        self.path = None
        self.version = None
        self.error = None
        self.limit_mb = None

    def create(self, limit_mb):
        v2root = "/sys/fs/cgroup"
        v1root = "/sys/fs/cgroup/memory"
        try:
            controllers = open(os.path.join(v2root, "cgroup.controllers")).read().split()
        except OSError:
            controllers = []
        try:
            if "memory" in controllers:
                self.version = 2
                self.path = os.path.join(v2root, self.name)
                os.makedirs(self.path, exist_ok=True)
                with open(os.path.join(v2root, "cgroup.subtree_control"), "w") as f:
                    f.write("+memory")
                self._write("memory.max", str(limit_mb * 1024 * 1024))
                self._write("memory.swap.max", "0", optional=True)
            elif os.path.exists(os.path.join(v1root, "memory.limit_in_bytes")):
                self.version = 1
                self.path = os.path.join(v1root, self.name)
                os.makedirs(self.path, exist_ok=True)
                self._write("memory.limit_in_bytes", str(limit_mb * 1024 * 1024))
                self._write("memory.max_usage_in_bytes", "0", optional=True)
            else:
                self.error = "no memory controller in /sys/fs/cgroup (v2) or /sys/fs/cgroup/memory (v1)"
                return False
        except OSError as e:
            self.error = "cannot set up a memory cgroup: %s" % e
            self.path = None
            return False
        self.limit_mb = limit_mb
        return True

    def _write(self, fname, value, optional=False):
        try:
            with open(os.path.join(self.path, fname), "w") as f:
                f.write(value)
        except OSError:
            if not optional:
                raise

    def _read(self, fname):
        try:
            return open(os.path.join(self.path, fname)).read()
        except OSError:
            return None

    @property
    def procs_file(self):
        return os.path.join(self.path, "cgroup.procs") if self.path else None

    def stats(self):
        if not self.path:
            return {}
        if self.version == 1:
            peak = self._read("memory.max_usage_in_bytes")
            fail = self._read("memory.failcnt")
            oom = self._read("memory.oom_control") or ""
            kills = [l.split()[1] for l in oom.splitlines() if l.startswith("oom_kill ")]
            return {"peak_mb": round(int(peak) / 2**20, 1) if peak else None,
                    "limit_hits": int(fail) if fail else None,
                    "oom_kills": int(kills[0]) if kills else None}
        peak = self._read("memory.peak")
        events = dict(l.split() for l in (self._read("memory.events") or "").splitlines() if l)
        return {"peak_mb": round(int(peak) / 2**20, 1) if peak else None,
                "limit_hits": int(events.get("max", 0)), "oom_kills": int(events.get("oom_kill", 0))}

    def describe(self):
        if not self.path:
            return "not used: %s" % (self.error or "the preset does not ask for equal budgets")
        return "cgroup v%d %s, limit %d MB" % (self.version, self.path, self.limit_mb)

    def remove(self):
        if self.path:
            try:
                os.rmdir(self.path)
            except OSError:
                pass


# --- OS page cache -------------------------------------------------------------

def drop_caches():
    """sync and drop the OS page cache; returns None or why it was not possible."""
    os.sync()
    try:
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
        return None
    except OSError as e:
        return "cannot drop the OS page cache (%s); cold runs only restart the server" % e.strerror


# --- fast tier -------------------------------------------------------------------

class FastTier:
    """A directory standing for the fast (Optane) tier: ext4 on a RAM-backed
    loop device where possible, else tmpfs, else a plain directory."""

    def __init__(self, workdir, tag):
        self.mount = os.path.join(workdir, "fast")
        self.image = "/dev/shm/hi_bench_%s.img" % tag
        self.device = None
        self.kind = None
        self.description = None
        self.mounted_here = False

    def setup(self, size_mb, want="auto"):
        os.makedirs(self.mount, exist_ok=True)
        if os.path.ismount(self.mount):
            src = [l.split() for l in open("/proc/mounts") if l.split()[1] == self.mount]
            self.kind = "reused"
            self.description = "already mounted: %s (%s)" % (src[0][0], src[0][2]) if src else "already mounted"
            return
        errors = []
        if want in ("auto", "loop") and os.path.isdir("/dev/shm"):
            try:
                sh(["truncate", "-s", "%dM" % size_mb, self.image])
                self.device = sh(["losetup", "--find", "--show", self.image]).stdout.strip()
                sh(["mkfs.ext4", "-q", "-F", "-E", "nodiscard", self.device])
                sh(["mount", "-o", "noatime", self.device, self.mount])
                self.mounted_here = True
                self.kind = "loop"
                self.description = ("ext4 on RAM-backed loop device %s (%d MB sparse file %s on tmpfs)"
                                    % (self.device, size_mb, self.image))
                return
            except (subprocess.CalledProcessError, OSError) as e:
                errors.append("loop device: %s" % (getattr(e, "stderr", "") or e).strip())
                self._undo_loop()
        if want in ("auto", "tmpfs"):
            try:
                sh(["mount", "-t", "tmpfs", "-o", "size=%dM" % size_mb, "tmpfs", self.mount])
                self.mounted_here = True
                self.kind = "tmpfs"
                self.description = ("tmpfs (%d MB; memory, no device: hybrid_index copies its pages "
                                    "with pread/pwrite, about 2.5 us per 8 KB page)" % size_mb)
                return
            except (subprocess.CalledProcessError, OSError) as e:
                errors.append("tmpfs: %s" % (getattr(e, "stderr", "") or e).strip())
        self.kind = "directory"
        self.description = "plain directory on the same disk as the flash tier (%s)" % "; ".join(errors)

    def _undo_loop(self):
        if self.device:
            sh(["losetup", "-d", self.device], check=False)
            self.device = None
        if os.path.exists(self.image):
            os.unlink(self.image)

    def teardown(self):
        if self.mounted_here:
            sh(["umount", self.mount], check=False)
            self.mounted_here = False
        self._undo_loop()


# --- fio ---------------------------------------------------------------------------

def fio_randread(directory, qd, bs="8k", runtime=6, size_mb=512):
    """Random-read IOPS of the device under a directory at queue depth qd."""
    fname = os.path.join(directory, "hi_bench_fio.dat")
    result = {"qd": qd, "bs": bs}
    for direct in (1, 0):
        cmd = ["fio", "--name=hi", "--filename=" + fname, "--size=%dM" % size_mb,
               "--rw=randread", "--bs=" + bs, "--direct=%d" % direct, "--ioengine=io_uring",
               "--iodepth=%d" % qd, "--runtime=%d" % runtime, "--time_based",
               "--output-format=json", "--group_reporting"]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode == 0:
            try:
                job = json.loads(p.stdout[p.stdout.index("{"):])["jobs"][0]["read"]
                result.update(iops=round(job["iops"]), direct=bool(direct),
                              lat_us=round(job["clat_ns"]["mean"] / 1000, 1))
                break
            except (ValueError, KeyError, IndexError) as e:
                result["error"] = "cannot parse fio output: %s" % e
        else:
            result["error"] = (p.stderr or p.stdout).strip().splitlines()[-1:] or ["fio failed"]
    if os.path.exists(fname):
        os.unlink(fname)
    return result


# --- the machine ----------------------------------------------------------------

def machine_info(path):
    info = {"kernel": platform.release(), "cores": os.cpu_count()}
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                info["cpu"] = line.split(":", 1)[1].strip()
                break
        for line in open("/proc/meminfo"):
            if line.startswith("MemTotal"):
                info["memory_gb"] = round(int(line.split()[1]) / 2**20, 1)
        info["loadavg"] = open("/proc/loadavg").read().split()[:3]
    except OSError:
        pass
    p = subprocess.run(["findmnt", "-no", "SOURCE,FSTYPE", "--target", path], capture_output=True, text=True)
    info["disk"] = p.stdout.strip()
    if shutil.which("lsblk"):
        p = subprocess.run(["lsblk", "-dno", "NAME,MODEL,ROTA,SIZE"], capture_output=True, text=True)
        info["block_devices"] = [l.strip() for l in p.stdout.splitlines() if l.strip() and not l.startswith("loop")]
    return info
