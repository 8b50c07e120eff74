#!/usr/bin/env python3
"""What the memory history's file costs the server: a crash restart, the
postmaster, the sampler and a reader, with the file full and with none.

For each PostgreSQL major given (bench/run history builds and installs
pg_procmem for each first), one throwaway cluster, started four times: without
pg_procmem; with pg_procmem.history_size 32MB; with 512MB and its ring left
empty; with 512MB again. A full file is 1.49 times the ring (what the sampler
itself reaches before it rewrites), made with test/history/histfile: samples
of 100 processes; a full ring is one loaded from such a file.

1. Crash restarts: each a kill -9 of an idle backend right after a
   CHECKPOINT, timed in the server's log (log_line_prefix %m) from "all
   server processes terminated; reinitializing" to "database system is ready
   to accept connections". At 32MB and at 512MB, 10 pairs, interleaved so that
   whatever else the machine does falls on both alike: the ring full and no
   file on disk, then the ring full and a full file (an untimed crash restart
   between the two fills the ring again from the file). The file is put in
   place and fsync'ed before each kill, and sample_interval is 1h, so that the
   sampler samples once at its start and then neither appends nor rewrites
   while a restart is timed. Goal: with a full file within 20 ms or 10% of no
   file. Beside them, 10 restarts without pg_procmem and 10 at 512MB with the
   ring empty: what history_size itself costs.
2. The postmaster: what it read itself over each crash restart
   (/proc/PID/task/PID/io; the process-wide file adds what the children it
   reaped read) and its peak memory (VmHWM) after each start's restarts.
   Goals: at most 64 kB read (it reads none of the file); the peak with full
   files within 1 MB of the peak of the start that never had one.
3. With the 512 MB ring loaded from a full file: the sampler's peak private
   memory (RssAnon, polled every 5 ms) and CPU time (/proc/PID/schedstat)
   over its load, and a reader's, for pg_procmem_history_system and for
   pg_procmem_history (RssAnon polled every 2 ms), median of 3.

Run through `bench/run history` (as root; ports 5580-5584). Writes
bench/results/history.md and bench/results/history.png.
"""
import argparse
import datetime
import os
import pwd
import re
import shutil
import statistics
import subprocess
import tempfile
import threading
import time

import psycopg

HERE = os.path.dirname(os.path.abspath(__file__))
HISTFILE = os.path.join(HERE, ".build", "histfile")
TREES = os.environ.get("PG_TREES", "/var/tmp/pg_procmem")
MB = 1 << 20
ENTRY, RECORD = 608, 16
PROCESSES = 100
KILLS = 10
SAMPLE_BYTES = RECORD + (PROCESSES + 1) * ENTRY
# (name, history_size MB, a full file on disk at the kill, the ring full at the kill)
CONFIGS = [("no pg_procmem", None, False, False),
           ("32MB, ring full, no file", 32, False, True), ("32MB, ring full, full file", 32, True, True),
           ("512MB, ring empty, no file", 512, False, False),
           ("512MB, ring full, no file", 512, False, True), ("512MB, ring full, full file", 512, True, True),
           ("512MB, ring full, a rewrite stopped", 512, True, True)]
# the rewrite stopped after this many writes (of 256 kB at most): about 250 MB of a temporary file left
STOP_AFTER = 1000
# The server's starts: a name, history_size, and the configurations it runs (two: interleaved)
STARTS = [("no pg_procmem", None, ["no pg_procmem"]),
          ("32MB", 32, ["32MB, ring full, no file", "32MB, ring full, full file"]),
          ("512MB, never a file", 512, ["512MB, ring empty, no file"]),
          ("512MB", 512, ["512MB, ring full, no file", "512MB, ring full, full file"]),
          ("512MB, a rewrite stopped", 512, ["512MB, ring full, a rewrite stopped"])]
STAMP = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}) \w+ \[\d+\] LOG:  (.*)$")


def bin_of(major):
    """As scripts/lib.sh's set_pg_bin: Debian's 15, a PyPI tree, or a tree
    in Debian's layout (19, from Debian's archive)."""
    if major == 15:
        return "/usr/lib/postgresql/15/bin"
    debian = os.path.join(TREES, str(major), "usr", "lib", "postgresql", str(major), "bin")
    return debian if os.path.isdir(debian) else os.path.join(TREES, str(major), "bin")


def as_postgres(*args):
    return subprocess.run(["runuser", "-u", "postgres", "--", *args], check=True, capture_output=True, text=True)


def status(pid):
    out = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            k, _, v = line.partition(":")
            if v.split() and v.split()[0].isdigit():
                out[k] = int(v.split()[0]) * 1024
    return out


def own_rchar(pid):
    with open("/proc/%d/task/%d/io" % (pid, pid)) as f:
        return int(f.readline().split()[1])


def cpu_ns(pid):
    with open("/proc/%d/schedstat" % pid) as f:
        return int(f.read().split()[0])


def full_file(path, ring_mb, factor=1.49):
    """A valid file of factor times a ring of ring_mb, owned by postgres."""
    samples = int(factor * ring_mb * MB / SAMPLE_BYTES)
    subprocess.run([HISTFILE, "write", path, str(samples), str(PROCESSES)], check=True)
    pw = pwd.getpwnam("postgres")
    os.chown(path, pw.pw_uid, pw.pw_gid)
    return samples


class Server:
    """A throwaway cluster of one major, started and crashed in each configuration."""

    def __init__(self, major, port):
        self.major, self.port, self.bin = major, port, bin_of(major)
        self.lib = os.path.join(os.path.dirname(self.bin), "lib")
        self.dir = tempfile.mkdtemp(prefix="pg_procmem_bench.")
        pw = pwd.getpwnam("postgres")
        os.chown(self.dir, pw.pw_uid, pw.pw_gid)
        os.chmod(self.dir, 0o755)
        self.data = os.path.join(self.dir, "data")
        self.log = os.path.join(self.dir, "server.log")
        self.hfile = os.path.join(self.data, "pg_stat_tmp", "pg_procmem.history")
        as_postgres("env", "LD_LIBRARY_PATH=" + self.lib, os.path.join(self.bin, "initdb"), "-D", self.data,
                    "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C")

    def version(self):
        return as_postgres(os.path.join(self.bin, "postgres"), "--version").stdout.strip()

    def start(self, history_mb, extra=None):
        opts = {"port": self.port, "unix_socket_directories": self.dir, "listen_addresses": "''",
                "log_line_prefix": "'%m [%p] '", "autovacuum": "off", "jit": "off",
                "shared_preload_libraries": "pg_procmem" if history_mb else "''"}
        if history_mb:
            # one sample at the sampler's start, then none: no append or
            # rewrite of the file while the restarts are timed
            opts["pg_procmem.history_size"] = "%dMB" % history_mb
            opts["pg_procmem.sample_interval"] = "1h"
        opts.update(extra or {})
        as_postgres("env", "LD_LIBRARY_PATH=" + self.lib, os.path.join(self.bin, "pg_ctl"), "-D", self.data,
                    "-l", self.log, "-w", "-t", "120", "start",
                    "-o", " ".join("-c %s=%s" % kv for kv in opts.items()))
        self.pm = int(open(os.path.join(self.data, "postmaster.pid")).readline())
        if history_mb:
            with self.connect() as c:
                c.execute("CREATE EXTENSION IF NOT EXISTS pg_procmem")

    def stop(self):
        as_postgres(os.path.join(self.bin, "pg_ctl"), "-D", self.data, "-w", "-m", "fast", "stop")

    def connect(self):
        deadline = time.time() + 120
        while True:
            try:
                return psycopg.connect(host=self.dir, port=self.port, user="postgres", dbname="postgres",
                                       autocommit=True)
            except psycopg.OperationalError:
                if time.time() > deadline:
                    raise
                time.sleep(0.05)

    def log_size(self):
        return os.path.getsize(self.log)

    def log_lines(self, since):
        with open(self.log, errors="replace") as f:
            f.seek(since)
            return f.read().splitlines()

    def wait_log(self, since, text):
        """Waits until the log, from offset since, says text."""
        deadline = time.time() + 300
        while time.time() < deadline:
            if any(text in line for line in self.log_lines(since)):
                return
            time.sleep(0.05)
        raise SystemExit("the log never said: " + text)

    def sampler_pid(self, conn):
        r = conn.execute("SELECT pid FROM pg_stat_activity WHERE backend_type = 'pg_procmem sampler'").fetchone()
        return r[0] if r else None

    def loaded(self, file_samples):
        """Waits until the sampler has loaded the file and sampled once since."""
        deadline = time.time() + 300
        while time.time() < deadline:
            try:
                with self.connect() as c:
                    n = c.execute("SELECT coalesce(max(sample), 0) FROM pg_procmem_history_system").fetchone()[0]
                    if n > file_samples:
                        return
            except psycopg.Error:
                pass
            time.sleep(0.05)
        raise SystemExit("the sampler did not load the file")

    def put_file(self, spare):
        """The full file in place, on disk: its write-back must not be what a
        restart waits for."""
        tmp = self.hfile + ".bench"
        shutil.copyfile(spare, tmp)
        pw = pwd.getpwnam("postgres")
        os.chown(tmp, pw.pw_uid, pw.pw_gid)
        fd = os.open(tmp, os.O_RDONLY)
        os.fsync(fd)
        os.close(fd)
        os.replace(tmp, self.hfile)

    def kill_backend(self):
        """kill -9 of an idle backend after a CHECKPOINT; the log offset before it."""
        with self.connect() as mon:
            mon.execute("CHECKPOINT")
            victim = self.connect()
            pid = victim.info.backend_pid
        at = self.log_size()
        os.kill(pid, 9)
        try:
            victim.close()
        except psycopg.Error:
            pass
        return at

    def restart_ms(self, at):
        """The crash restart after log offset at: reinitializing to ready, ms."""
        deadline = time.time() + 120
        times = {}
        while time.time() < deadline and "ready" not in times:
            for line in self.log_lines(at):
                m = STAMP.match(line)
                if m and m.group(2).startswith("all server processes terminated; reinitializing"):
                    times["reinit"] = m.group(1)
                elif m and m.group(2).startswith("database system is ready to accept connections") and "reinit" in times:
                    times["ready"] = m.group(1)
            time.sleep(0.02)
        fmt = "%Y-%m-%d %H:%M:%S.%f"
        return (datetime.datetime.strptime(times["ready"], fmt) -
                datetime.datetime.strptime(times["reinit"], fmt)).total_seconds() * 1000

    def crash(self, history_mb, file_at_kill, ring_full, spare, file_samples):
        """One timed crash restart, the ring and the file as the configuration
        says: its ms, and what the postmaster read over it."""
        if ring_full and not self.ring_full:
            # the ring is filled by loading the file: an untimed crash restart
            self.put_file(spare)
            self.restart_ms(self.kill_backend())
            self.loaded(file_samples)
        if file_at_kill:
            self.put_file(spare)
        elif os.path.exists(self.hfile):
            os.unlink(self.hfile)
        read0 = own_rchar(self.pm)
        ms = self.restart_ms(self.kill_backend())
        read = own_rchar(self.pm) - read0
        if history_mb:
            self.loaded(file_samples if file_at_kill else 0)
        # what the new ring holds: the file loaded, or nothing
        self.ring_full = file_at_kill
        return ms, read

    def cleanup(self):
        try:
            self.stop()
        except subprocess.CalledProcessError:
            pass
        shutil.rmtree(self.dir, ignore_errors=True)


def poll_peak(pid, field, stop, out, every):
    peak = 0
    while not stop.is_set():
        try:
            peak = max(peak, status(pid)[field])
        except (OSError, KeyError):
            break
        time.sleep(every)
    out.append(peak)


def reader_cost(srv, query):
    """A reader's peak private memory above its start (RssAnon, polled every 2 ms) and CPU ms."""
    peaks, cpus = [], []
    for _ in range(3):
        with srv.connect() as c:
            pid = c.info.backend_pid
            base = status(pid)["RssAnon"]
            cpu0 = cpu_ns(pid)
            stop, out = threading.Event(), []
            t = threading.Thread(target=poll_peak, args=(pid, "RssAnon", stop, out, 0.002))
            t.start()
            rows = c.execute(query).fetchone()[0]
            stop.set()
            t.join()
            peaks.append(max(out[0] - base, 0))
            cpus.append((cpu_ns(pid) - cpu0) / 1e6)
    return statistics.median(peaks), statistics.median(cpus), rows


def sampler_load(srv, file_samples):
    """The sampler's peak RssAnon and CPU ms over its load of the file, from its start."""
    with srv.connect() as c:
        deadline = time.time() + 60
        pid = None
        while pid is None and time.time() < deadline:
            pid = srv.sampler_pid(c)
            time.sleep(0.001)
    stop, out = threading.Event(), []
    t = threading.Thread(target=poll_peak, args=(pid, "RssAnon", stop, out, 0.005))
    t.start()
    srv.loaded(file_samples)
    cpu = cpu_ns(pid) / 1e6
    stop.set()
    t.join()
    return out[0], cpu, status(pid)["VmHWM"]


def one_major(major, port, files):
    srv = Server(major, port)
    res = {"version": srv.version(), "configs": {}, "starts": {}}
    by_name = {c[0]: c for c in CONFIGS}
    try:
        for start_name, mb, names in STARTS:
            spare, file_samples = files[mb] if mb else (None, 0)
            if os.path.exists(srv.hfile):
                os.unlink(srv.hfile)
            full_start = len(names) == 2 and mb == 512
            stopped = start_name == "512MB, a rewrite stopped"
            if stopped:
                # beyond its bound: each start rewrites it, and stops after STOP_AFTER writes
                spare, file_samples = files["over"]
            if full_start or stopped:
                srv.put_file(spare)
            srv.start(mb, {"pg_procmem.debug_stop_rewrite_after": STOP_AFTER} if stopped else None)
            srv.ring_full = False
            if stopped:
                for n in names:
                    res["configs"][n] = {"ms": [], "reads": []}
                at = 0
                for _ in range(KILLS):
                    # this run's sampler has loaded the file and stopped its rewrite
                    srv.wait_log(at, "stopping in the middle of a rewrite")
                    at = srv.log_size()
                    read0 = own_rchar(srv.pm)
                    ms = srv.restart_ms(srv.kill_backend())
                    res["configs"][names[0]]["ms"].append(ms)
                    res["configs"][names[0]]["reads"].append(own_rchar(srv.pm) - read0)
                res["starts"][start_name] = {"hwm": status(srv.pm)["VmHWM"]}
                srv.stop()
                r = res["configs"][names[0]]
                print("PostgreSQL %d, %s: median %.1f ms (%s)" % (major, names[0], statistics.median(r["ms"]),
                                                                 ", ".join("%.0f" % x for x in r["ms"])), flush=True)
                continue
            for n in names:
                res["configs"][n] = {"ms": [], "reads": []}
            if full_start:
                # the sampler loading the full file at its start, and readers of the full ring
                r = res["configs"][names[1]]
                r["sampler_peak_anon"], r["sampler_load_cpu_ms"], r["sampler_hwm"] = sampler_load(srv, file_samples)
                r["reader_system"] = reader_cost(srv, "SELECT count(*) FROM pg_procmem_history_system")
                r["reader_processes"] = reader_cost(srv, "SELECT count(*) FROM pg_procmem_history")
                srv.ring_full = True
            elif mb:
                srv.loaded(0)
            for _ in range(KILLS):
                for n in names:
                    _, _, file_at_kill, ring_full = by_name[n]
                    ms, read = srv.crash(mb, file_at_kill, ring_full, spare, file_samples)
                    res["configs"][n]["ms"].append(ms)
                    res["configs"][n]["reads"].append(read)
            res["starts"][start_name] = {"hwm": status(srv.pm)["VmHWM"]}
            srv.stop()
            for n in names:
                r = res["configs"][n]
                print("PostgreSQL %d, %s: median %.1f ms (%s)" % (major, n, statistics.median(r["ms"]),
                                                                 ", ".join("%.0f" % x for x in r["ms"])), flush=True)
    finally:
        srv.cleanup()
    return res


def verdict(full, none):
    """Full against no file: the difference of the medians, the median of the
    paired differences (each full-file restart against the no-file one just
    before it), and whether both are within 20 ms or 10% either way."""
    d = statistics.median(full) - statistics.median(none)
    paired = statistics.median(f - n for f, n in zip(full, none))
    bound = max(20, 0.1 * statistics.median(none))
    return d, paired, abs(d) <= bound and abs(paired) <= bound


def write_report(results, command, took, load):
    def ver(res):
        return res["version"].split()[2]    # "postgres (PostgreSQL) 15.20 (Debian ...)"

    def med(res, name):
        return statistics.median(res["configs"][name]["ms"])

    lines = ["# What the memory history's file costs the server: history", "",
             "Reproduce: `%s` (as root; bench/run builds and installs pg_procmem from this checkout for each "
             "major, then runs `bench/history.py`). %d cores, %.0f GiB, Linux %s; 1-minute load average %.2f at "
             "the start, %.2f at the end; the run took %.1f min. Each major's cluster: shared_buffers 128 MB, "
             "autovacuum off, `pg_procmem.sample_interval = 1h` (the sampler samples once at its start, then "
             "neither appends to the file nor rewrites it while a restart is timed). A full file is 1.49 times "
             "the ring (what the sampler itself reaches before it rewrites: samples of %d processes, made with "
             "test/history/histfile), put in place and fsync'ed before each kill; a full ring is one loaded from "
             "such a file. MB are 2^20 bytes."
             % (command, os.cpu_count(), os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / (1 << 30),
                os.uname().release, load[0], load[1], took / 60, PROCESSES), "",
             "## 1. Crash restarts: a full file against no file", "",
             "From \"all server processes terminated; reinitializing\" to \"database system is ready to "
             "accept connections\" (the server's log, `%%m`), each a kill -9 of an idle backend after a "
             "CHECKPOINT. At 32MB and at 512MB, %d pairs interleaved: the ring full and no file on disk, then "
             "the ring full and a full file (an untimed crash restart between them fills the ring again). "
             "Goal: with a full file within 20 ms or 10%% of no file, either way, by the medians and by the "
             "median of the pairs' differences. Last, a start of its own whose sampler rewrites a file of "
             "1.55 times the ring and stops after %d writes (`pg_procmem.debug_stop_rewrite_after`), its "
             "temporary file of about 250 MB left as a killed sampler's would be, then a kill: against the "
             "ring full and no file (the startup process fsyncs every file of the data directory after a "
             "crash; the file is synced every 8 MB written, so little of it is left to write)."
             % (KILLS, STOP_AFTER), "",
             "| PostgreSQL | configuration | median ms | min | max | full - no file: medians | paired | goal |",
             "|---|---|---:|---:|---:|---:|---:|---|"]
    for major, res in results.items():
        for name, _, file_at_kill, _ in CONFIGS:
            r = res["configs"][name]
            cell = " | | "
            if name.endswith("a rewrite stopped"):
                none = res["configs"]["512MB, ring full, no file"]["ms"]
                d = statistics.median(r["ms"]) - statistics.median(none)
                good = abs(d) <= max(20, 0.1 * statistics.median(none))
                cell = "%+.1f ms | | %s" % (d, "met" if good else "**not met**")
            elif file_at_kill:
                none = res["configs"][name.replace("full file", "no file")]["ms"]
                d, paired, good = verdict(r["ms"], none)
                cell = "%+.1f ms | %+.1f ms | %s" % (d, paired, "met" if good else "**not met**")
            lines.append("| %s | %s | %.1f | %.1f | %.1f | %s |" % (ver(res), name, med(res, name), min(r["ms"]),
                                                                  max(r["ms"]), cell))
    lines += ["", "What history_size itself costs a crash restart, no file on disk, against the same cluster "
              "without pg_procmem (median ms): the postmaster unmaps the old shared memory, and the ring's "
              "pages that were written (a full ring: all of them) take their time to free. Differences of a "
              "few ms either way are this machine's noise.", "",
              "| PostgreSQL | no pg_procmem | 32MB, ring full | 512MB, ring empty | 512MB, ring full | "
              "32MB full - none | 512MB empty - none | 512MB full - none |",
              "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for major, res in results.items():
        none = med(res, "no pg_procmem")
        a, b, c = (med(res, "32MB, ring full, no file"), med(res, "512MB, ring empty, no file"),
                   med(res, "512MB, ring full, no file"))
        lines.append("| %s | %.1f | %.1f | %.1f | %.1f | %+.1f | %+.1f | %+.1f |" % (
            ver(res), none, a, b, c, a - none, b - none, c - none))
    lines += ["", "## 2. The postmaster", "",
              "What it read itself over each timed crash restart (/proc/PID/task/PID/io rchar: the "
              "process-wide io file adds what the children it reaped read, the sampler's loads among them), "
              "the most of any restart; and its peak memory (VmHWM) after each start's restarts. Goals: at "
              "most 64 kB read (it reads none of the file: these are its other reads); the peak of the start "
              "with full files within 1 MB of the start at the same history_size that never had one.", "",
              "| PostgreSQL | configuration | most read in a crash restart | goal |",
              "|---|---|---:|---|"]
    for major, res in results.items():
        for name, _, _, _ in CONFIGS:
            most = max(res["configs"][name]["reads"])
            lines.append("| %s | %s | %s bytes | %s |" % (ver(res), name, "{:,}".format(most),
                                                         "met" if most <= 64 * 1024 else "**not met**"))
    lines += ["", "| PostgreSQL | start | VmHWM | goal |", "|---|---|---:|---|"]
    for major, res in results.items():
        base = res["starts"]["512MB, never a file"]["hwm"]
        for start_name, _, _ in STARTS:
            hwm = res["starts"][start_name]["hwm"]
            goal = ""
            if start_name == "512MB":
                goal = "%+d kB against never a file: %s" % ((hwm - base) // 1024,
                                                            "met" if abs(hwm - base) <= MB else "**not met**")
            lines.append("| %s | %s | %s kB | %s |" % (ver(res), start_name, "{:,}".format(hwm // 1024), goal))
    lines += ["", "## 3. The sampler and a reader with the 512 MB ring full", "",
              "The sampler loading the full file (%d MB) at its start: its peak private memory (RssAnon, "
              "polled every 5 ms), the CPU it took from its start until it had loaded the file and sampled "
              "once (/proc/PID/schedstat), and its VmHWM (which counts the ring's shared pages it wrote). A "
              "reader: its peak private memory above its start (RssAnon, polled every 2 ms) and its CPU, "
              "median of 3." % int(1.49 * 512), "",
              "| PostgreSQL | sampler peak RssAnon | sampler CPU ms | sampler VmHWM | pg_procmem_history_system: "
              "rows, reader's peak, CPU ms | pg_procmem_history: rows, reader's peak, CPU ms |",
              "|---|---:|---:|---:|---|---|"]
    for major, res in results.items():
        r = res["configs"]["512MB, ring full, full file"]
        a, b = r["reader_system"], r["reader_processes"]
        lines.append("| %s | %.1f MB | %.0f | %.0f MB | %s, %.1f MB, %.0f | %s, %.1f MB, %.0f |" % (
            ver(res), r["sampler_peak_anon"] / MB, r["sampler_load_cpu_ms"], r["sampler_hwm"] / MB,
            "{:,}".format(a[2]), a[0] / MB, a[1], "{:,}".format(b[2]), b[0] / MB, b[1]))
    lines += ["", "Before this store (issue 26, PostgreSQL 16, a 401 MB file at history_size 256 MB): a crash "
              "restart took 0.5-0.6 s at history_size 32 MB, 2.2-4.4 s at 256 MB and 11.3 s at 512 MB "
              "(60 ms without a file); the postmaster peaked at 549-679 MB, the sampler at 532 MB, and a "
              "reader of pg_procmem_history_system at 280 MB."]
    with open(os.path.join(HERE, "results", "history.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


def chart(results):
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib import pyplot as plt
    fig, ax = plt.subplots(figsize=(12, 4.5))
    majors = list(results)
    width = 0.8 / len(CONFIGS)
    for i, (name, _, _, _) in enumerate(CONFIGS):
        meds = [statistics.median(results[m]["configs"][name]["ms"]) for m in majors]
        ax.bar([j + (i - (len(CONFIGS) - 1) / 2) * width for j in range(len(majors))], meds, width, label=name)
    ax.set_xticks(range(len(majors)))
    ax.set_xticklabels(["PostgreSQL %s" % results[m]["version"].split()[2] for m in majors])
    ax.set_ylabel("crash restart, ms (median of %d)" % KILLS)
    ax.set_title("Crash restart, reinitializing to ready, with and without the history's file")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1))
    fig.tight_layout()
    fig.savefig(os.path.join(HERE, "results", "history.png"), dpi=110)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--majors", default="14 15 16 17 18")
    ap.add_argument("--command", default="bench/run history")
    args = ap.parse_args()
    t0 = time.time()
    load0 = os.getloadavg()[0]
    work = tempfile.mkdtemp(prefix="pg_procmem_bench_files.")
    os.chmod(work, 0o755)
    files = {mb: (os.path.join(work, "full-%d" % mb), None) for mb in (32, 512)}
    files = {mb: (p, full_file(p, mb)) for mb, (p, _) in files.items()}
    over = os.path.join(work, "over-512")
    files["over"] = (over, full_file(over, 512, 1.55))
    results = {}
    try:
        for i, major in enumerate(int(m) for m in args.majors.split()):
            results[major] = one_major(major, 5580 + i, files)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    write_report(results, args.command, time.time() - t0, (load0, os.getloadavg()[0]))
    chart(results)
    print("wrote bench/results/history.md and history.png")


main()
