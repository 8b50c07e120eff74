#!/usr/bin/env python3
"""What the memory history's sampler costs.

The background worker "pg_procmem sampler" reads every process of the server
each pg_procmem.sample_interval and appends one sample (a system entry and
one history_entry per process) to a ring in shared memory and to the file
pg_stat_tmp/pg_procmem.history in the data directory. Three parts, one run:

1. cost per sample against the number of processes: a cluster each with 100,
   500 and 1,000 idle connections (shared_buffers 128 MB, huge_pages off),
   sample_interval 1 s; sample_ms of every sample taken once all connections
   were open (pg_procmem_history_system), its median and p95, per process;
   the bytes a sample takes in the ring and in the file (computed, and the
   file's growth measured), and how long the default 32 MB ring lasts at the
   default 10 s.
2. the sampler's CPU: two clusters side by side with 200 idle connections
   each, sample_interval 10 s (the default) and 1 s; the sampler's
   utime + stime (/proc/PID/stat) and its on-CPU time (/proc/PID/schedstat)
   over the same 60 s, as a percentage of one core.
3. the ring's shared memory: shared_memory_size (postgres -C, server
   stopped) with pg_procmem.history_size 32MB and 64kB and without
   pg_procmem; on running clusters pg_shmem_allocations' "pg_procmem
   history" and shared_memory_size; the 64kB ring's samples counted.

A sampler that dies (the postmaster then restarts the server) is reported,
not hidden: its row is marked crashed and keeps only the samples taken
before the crash (the restart loads them back from the file).

Run through `PG_MAJOR=17 bench/run sampler`, as root (ports 5570-5575).
Writes bench/results/<name>.md and PNG.
"""
import argparse
import datetime
import json
import math
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import shutil
import pwd
import time

import psycopg

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from overhead import Cluster, PG_BIN, close_all, pyplot, result_path, run_as_postgres  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
CLK_TCK = os.sysconf("SC_CLK_TCK")
RECORD_HEADER = 16                      # sizeof(history_record)
MB = 1024 * 1024


def entry_size():
    """sizeof(history_entry), compiled from src/rules/history_format.h."""
    build = os.path.join(HERE, ".build")
    os.makedirs(build, exist_ok=True)
    src, exe = os.path.join(build, "entry_size.c"), os.path.join(build, "entry_size")
    with open(src, "w") as f:
        f.write('#include <stdio.h>\n#include "rules/history_format.h"\n'
                'int main(void) { printf("%zu %zu\\n", sizeof(history_entry), sizeof(history_record)); '
                'return 0; }\n')
    subprocess.run(["cc", "-iquote", os.path.join(HERE, "..", "src"), "-o", exe, src], check=True)
    entry, record = map(int, subprocess.run([exe], check=True, capture_output=True,
                                            text=True).stdout.split())
    assert record == RECORD_HEADER, record
    return entry


def ring_entries(history_kb, entry):
    """As src/history/history_ring.c: the ring's entries for pg_procmem.history_size."""
    return max(history_kb * 1024 // entry, 16)


def nearest_rank(xs, q):
    s = sorted(xs)
    return s[max(math.ceil(q * len(s)) - 1, 0)]


def start_cluster(port, connections, interval, history_size=None):
    extra = {"shared_preload_libraries": "pg_procmem", "shared_buffers": "128MB",
             "pg_procmem.sample_interval": "%ds" % interval}
    if history_size:
        extra["pg_procmem.history_size"] = history_size
    # max_connections: connections + 10 for the monitor and the reserved slots
    cl = Cluster(96, False, connections + 10, port, extra=extra)
    mon = cl.connect()
    mon.execute("CREATE EXTENSION pg_procmem")
    return cl, mon


def open_idle(cl, n):
    conns = []
    for _ in range(n):
        conns.append(cl.connect())
    return conns


def sampler_pid(mon):
    row = mon.execute("SELECT pid FROM pg_stat_activity WHERE backend_type = 'pg_procmem sampler'").fetchone()
    return row[0]


def cpu_times(pid):
    """(utime + stime in seconds, on-CPU seconds from schedstat or None)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12])          # utime, stime (fields 14, 15)
    try:
        with open(f"/proc/{pid}/schedstat") as f:
            on_cpu = int(f.read().split()[0]) / 1e9
    except OSError:
        on_cpu = None
    return ticks / CLK_TCK, on_cpu


def machine_jiffies():
    """(busy, total) jiffies of all CPUs, from /proc/stat."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    idle = v[3] + v[4]                                  # idle, iowait
    total = sum(v[:8])                                  # up to steal; guest is in user
    return total - idle, total


def busy_pct(a, b):
    """The machine's CPU use between two machine_jiffies(), % of all its cores."""
    return (b[0] - a[0]) * 100 / max(b[1] - a[1], 1)


def wait_quiet(threshold, max_wait):
    """Waits (up to max_wait s) for a second in which the machine's CPUs are
    less than threshold % busy: other work on the machine slows the sampler
    down. Returns the last second's figure."""
    deadline = time.time() + max_wait
    while True:
        a = machine_jiffies()
        time.sleep(1)
        pct = busy_pct(a, machine_jiffies())
        if pct < threshold or time.time() > deadline:
            return pct


def samples_since(mon, since):
    return mon.execute("SELECT sampled_at, processes, sample_ms FROM pg_procmem_history_system "
                       "WHERE sampled_at > %s ORDER BY sampled_at", (since,)).fetchall()


def wait_new_sample(mon, after, timeout=60):
    """Waits for a sample later than `after`; returns its sampled_at."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        row = mon.execute("SELECT max(sampled_at) FROM pg_procmem_history_system").fetchone()
        if row[0] is not None and (after is None or row[0] > after):
            return row[0]
        time.sleep(0.2)
    raise SystemExit("no new sample in %d s" % timeout)


def file_mark(cl, mon, after):
    """Right after a new sample (its record written): the file's size and that sample's time."""
    at = wait_new_sample(mon, after)
    for _ in range(50):
        # the sampler writes the file right after the ring
        time.sleep(0.1)
        size = os.stat(os.path.join(cl.data, "pg_stat_tmp", "pg_procmem.history")).st_size
        # still the same last sample: the size belongs to it (the next one
        # reaches the ring before the file)
        now = mon.execute("SELECT max(sampled_at) FROM pg_procmem_history_system").fetchone()[0]
        if now == at:
            return at, size
        at = now
    raise SystemExit("could not catch the file between two samples")


def log_lines(cl):
    try:
        with open(os.path.join(cl.dir, "server.log"), errors="replace") as f:
            return f.read().splitlines()
    except OSError:
        return []


def server_log_issues(cl):
    """WARNING / ERROR / FATAL / PANIC lines and pg_procmem's own LOG lines."""
    return [ln for ln in log_lines(cl)
            if re.search(r"\b(WARNING|ERROR|FATAL|PANIC):|pg_procmem: |background worker \"pg_procmem", ln)]


def sampler_deaths(cl):
    """The postmaster's lines about the sampler dying (it exits with code 1
    when told to stop, so that the postmaster starts it again unless it is
    shutting down: only a signal or an odd status is a death)."""
    return [ln for ln in log_lines(cl) if 'background worker "pg_procmem sampler"' in ln and
            re.search(r"terminated by signal|exited with (exit code [2-9]|unrecognized)", ln)]


def reconnect(cl, timeout=60):
    """A new connection once the server accepts them again (after a crash restart)."""
    deadline = time.time() + timeout
    while True:
        try:
            c = cl.connect()
            c.execute("SELECT 1")
            return c
        except psycopg.OperationalError:
            if time.time() > deadline:
                raise
            time.sleep(0.5)


def stop_all(clusters):
    """Stops the servers first: the Clusters of one run share a cgroup name,
    which only the last stop can remove."""
    for cl in clusters:
        subprocess.run(["runuser", "-u", "postgres", "--", f"{PG_BIN}/pg_ctl", "-D", cl.data,
                        "-m", "fast", "-w", "stop"], capture_output=True)
    for cl in clusters:
        cl.stop()


def computed(data, name, settings):
    """postgres -C name with these settings, server stopped; None when unknown."""
    try:
        out = run_as_postgres(f"{PG_BIN}/postgres", "-D", data, "-C", name,
                              *[f"-c{k}={v}" for k, v in settings.items()])
    except subprocess.CalledProcessError:
        return None
    return out.stdout.strip()


# --- part 1 ----------------------------------------------------------------

def part_cost(steps, want, port, entry, quiet):
    res = []
    for i, n in enumerate(steps):
        print(f"-- part 1: {n} idle connections, sample_interval 1 s", flush=True)
        cl, mon = start_cluster(port + i, n, 1)
        conns, r = [], {"connections": n, "crashed": False}
        t0 = mon.execute("SELECT clock_timestamp()").fetchone()[0]
        rows = []
        try:
            try:
                t_open = time.time()
                conns = open_idle(cl, n)
                r["opened_s"] = time.time() - t_open
                spid = sampler_pid(mon)
                r["busy_before_pct"] = wait_quiet(quiet, 90)
                t0 = mon.execute("SELECT clock_timestamp()").fetchone()[0]
                at0, size0 = file_mark(cl, mon, t0)
                cpu0, busy0 = cpu_times(spid), machine_jiffies()
                rows = samples_since(mon, t0)
                deadline = time.time() + 2 * want + 60
                while len(rows) < want + 1 and time.time() < deadline:
                    time.sleep(max(want + 1 - len(rows), 1))
                    rows = samples_since(mon, t0)
                at1, size1 = file_mark(cl, mon, rows[-1][0])
                cpu1, busy1 = cpu_times(spid), machine_jiffies()
                rows = samples_since(mon, t0)
                between = [x for x in rows if at0 < x[0] <= at1]
                if between:
                    r["cpu_ms_per_sample"] = ((cpu1[1] - cpu0[1]) if cpu0[1] is not None
                                              else (cpu1[0] - cpu0[0])) * 1000 / len(between)
                r["busy_pct"] = busy_pct(busy0, busy1)
                rows = [x for x in rows if x[0] <= at1]
                r["file_measured"] = (size1 - size0) / len(between) if between and size1 >= size0 else None
                r["file_samples"], r["file_size"] = len(between), size1
                shm = mon.execute("SELECT size FROM pg_shmem_allocations "
                                  "WHERE name = 'pg_procmem history'").fetchone()
                r["ring_alloc"] = shm[0] if shm else None
            except psycopg.OperationalError as e:
                print(f"connection lost: {str(e).splitlines()[0]}", flush=True)
                r["crashed"] = True
            deaths = sampler_deaths(cl)
            if deaths:
                r["crashed"] = True
            if r["crashed"]:
                # the crash restart loaded the file back into the ring: the
                # samples with every connection, taken before the crash
                time.sleep(1)
                mon = reconnect(cl)
                rows = [x for x in samples_since(mon, t0) if x[1] >= n]
                r["deaths"] = sampler_deaths(cl)
                r["file_measured"] = None
            r["samples"] = len(rows)
            if rows:
                ms, procs = [x[2] for x in rows], [x[1] for x in rows]
                p = statistics.median(procs)
                r.update({"processes_min": min(procs), "processes_max": max(procs), "processes": p,
                          "ms_all": ms, "median_ms": statistics.median(ms),
                          "p95_ms": nearest_rank(ms, 0.95), "max_ms": max(ms), "min_ms": min(ms),
                          "ring_bytes": (p + 1) * entry, "file_bytes": (p + 1) * entry + RECORD_HEADER})
            r["log"] = server_log_issues(cl)
            res.append(r)
            print({k: v for k, v in r.items() if k not in ("ms_all", "log")}, flush=True)
        finally:
            close_all(conns)
            mon.close()
            stop_all([cl])
    return res


# --- parts 2 and 3 ---------------------------------------------------------

def sampler_overhead(mon, pid, t0, t1):
    """The sampler's own overhead at its first and last sample in [t0, t1]."""
    rows = mon.execute("SELECT overhead FROM pg_procmem_history WHERE pid = %s AND sampled_at "
                       "BETWEEN %s AND %s ORDER BY sampled_at", (pid, t0, t1)).fetchall()
    return (rows[0][0], rows[-1][0]) if rows else (None, None)


def part_cpu_and_shmem(n, seconds, port, entry, quiet):
    """Two clusters with n idle connections (sample_interval 10 s and 1 s)
    and one with history_size 64kB, side by side."""
    print(f"-- part 2: {n} idle connections, sample_interval 10 s and 1 s, {seconds} s; "
          "part 3: a 64kB ring beside them", flush=True)
    clusters, conns, mons = {}, [], {}
    cpu, shm = {}, {}
    try:
        for label, p, interval, size in (("10 s", port, 10, None), ("1 s", port + 1, 1, None),
                                         ("64kB", port + 2, 1, "64kB")):
            cl, mon = start_cluster(p, n, interval, size)
            clusters[label], mons[label] = cl, mon
        pids = {label: sampler_pid(mons[label]) for label in ("10 s", "1 s")}
        busy_before = wait_quiet(quiet, 90)
        t0 = {}
        for label in pids:
            try:
                conns += open_idle(clusters[label], n)
                t0[label] = mons[label].execute("SELECT clock_timestamp()").fetchone()[0]
            except psycopg.OperationalError:    # the sampler crashed (reported below)
                t0[label] = None

        def cpu_or_none(pid):
            try:
                return cpu_times(pid)
            except OSError:             # gone: it crashed
                return None

        before = {label: cpu_or_none(pid) for label, pid in pids.items()}
        w0, j0 = time.time(), machine_jiffies()
        time.sleep(seconds)
        busy = busy_pct(j0, machine_jiffies())
        after = {label: cpu_or_none(pid) for label, pid in pids.items()}
        wall = time.time() - w0
        for label in pids:
            # any death since the cluster started: a window without one
            # full-size sampler is no measurement
            c = {"pid": pids[label], "wall_s": wall, "busy_pct": busy, "busy_before_pct": busy_before,
                 "deaths": sampler_deaths(clusters[label])}
            c["crashed"] = bool(c["deaths"]) or None in (before[label], after[label], t0[label])
            if t0[label] is None:
                t0[label] = datetime.datetime.fromtimestamp(w0, datetime.timezone.utc)
            try:
                mon = mons[label]
                t1 = mon.execute("SELECT clock_timestamp()").fetchone()[0]
            except psycopg.OperationalError:
                mon = mons[label] = reconnect(clusters[label])
                t1 = mon.execute("SELECT clock_timestamp()").fetchone()[0]
            rows = [r for r in samples_since(mon, t0[label]) if r[0] <= t1 and r[1] >= n]
            c.update({"samples": len(rows),
                      "processes": statistics.median([r[1] for r in rows]) if rows else None,
                      "median_ms": statistics.median([r[2] for r in rows]) if rows else None,
                      "ms_all": [r[2] for r in rows]})
            if not c["crashed"]:
                stat_s = after[label][0] - before[label][0]
                sched_s = (after[label][1] - before[label][1]) if before[label][1] is not None else None
                c.update({"stat_s": stat_s, "stat_pct": stat_s / wall * 100, "sched_s": sched_s,
                          "sched_pct": sched_s / wall * 100 if sched_s is not None else None,
                          "cpu_ms_per_sample": (sched_s if sched_s is not None else stat_s) * 1000 / len(rows)
                          if rows else None})
                c["overhead_first"], c["overhead_last"] = sampler_overhead(mon, pids[label], t0[label], t1)
            cpu[label] = c
            print(label, {k: v for k, v in c.items() if k != "ms_all"}, flush=True)

        # part 3 on the running clusters (same settings but the ring)
        for label in ("10 s", "64kB"):
            try:
                m = mons[label]
                m.execute("SELECT 1")
            except psycopg.OperationalError:
                m = mons[label] = reconnect(clusters[label])
            row = m.execute("SELECT setting FROM pg_settings WHERE name = 'shared_memory_size'").fetchone()
            shm[label] = {
                "ring_alloc": m.execute("SELECT size FROM pg_shmem_allocations "
                                        "WHERE name = 'pg_procmem history'").fetchone()[0],
                "shared_memory_size": int(row[0]) if row else None,
                "shmem_total": m.execute("SELECT sum(allocated_size) FROM pg_shmem_allocations").fetchone()[0],
            }
        rows = mons["64kB"].execute("SELECT count(*), min(processes), max(processes), "
                                    "max(sampled_at) - min(sampled_at) FROM pg_procmem_history_system").fetchone()
        shm["64kB"].update({"samples_kept": rows[0], "processes_min": rows[1], "processes_max": rows[2],
                            "span_s": rows[3].total_seconds() if rows[3] else None,
                            "expected": ring_entries(64, entry) // (rows[2] + 1),
                            "deaths": sampler_deaths(clusters["64kB"])})
        logs = {label: server_log_issues(cl) for label, cl in clusters.items()}
    finally:
        close_all(conns)
        for m in mons.values():
            m.close()
        stop_all(list(clusters.values()))

    # postgres -C on a data directory of its own, never started
    d = tempfile.mkdtemp(prefix="pg_procmem_bench.")
    pw = pwd.getpwnam("postgres")
    os.chown(d, pw.pw_uid, pw.pw_gid)
    try:
        run_as_postgres(f"{PG_BIN}/initdb", "-D", f"{d}/data", "-U", "postgres", "--auth=trust",
                        "--no-sync", "-E", "UTF8", "--locale=C")
        base = {"shared_buffers": "128MB", "max_connections": str(n + 20), "huge_pages": "off"}
        cmd = {}
        for label, extra in (("without pg_procmem", {}),
                             ("history_size 64kB", {"shared_preload_libraries": "pg_procmem",
                                                    "pg_procmem.history_size": "64kB"}),
                             ("history_size 32MB (default)", {"shared_preload_libraries": "pg_procmem",
                                                              "pg_procmem.history_size": "32MB"})):
            v = computed(f"{d}/data", "shared_memory_size", {**base, **extra})
            cmd[label] = int(v) if v and v.isdigit() else None
    finally:
        shutil.rmtree(d, ignore_errors=True)
    return cpu, shm, cmd, logs


def fmt(v, spec, unit=""):
    return "" if v is None else f"{v:{spec}}{unit}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--name", default="sampler")
    ap.add_argument("--steps", default="100,500,1000")
    ap.add_argument("--samples", type=int, default=30, help="samples per step of part 1 (>= 20)")
    ap.add_argument("--cpu-connections", type=int, default=200)
    ap.add_argument("--cpu-seconds", type=int, default=60)
    ap.add_argument("--port", type=int, default=5570, help="ports port .. port+5")
    ap.add_argument("--quiet", type=float, default=25,
                    help="before measuring, wait up to 90 s for a second with the machine's CPUs "
                    "less busy than this (%%)")
    ap.add_argument("--note", help="a paragraph for the report (e.g. how the build differed)")
    ap.add_argument("--reproduce", help="the command shown as the one that reproduces the report")
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("run as root")
    steps = [int(s) for s in a.steps.split(",")]
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = 4 * max(max(steps), 2 * a.cpu_connections) + 256
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, need)), hard))
    entry = entry_size()
    version = subprocess.run([f"{PG_BIN}/postgres", "--version"], capture_output=True,
                             text=True).stdout.strip()
    load_before = os.getloadavg()
    started = time.time()

    cost = part_cost(steps, a.samples, a.port, entry, a.quiet)
    cpu, shm, cmd, logs = part_cpu_and_shmem(a.cpu_connections, a.cpu_seconds, a.port + 3, entry, a.quiet)
    took = time.time() - started
    load_after = os.getloadavg()

    # --- the report
    ring32 = ring_entries(32 * 1024, entry)
    reproduce = a.reproduce or f"PG_MAJOR=17 bench/run sampler {' '.join(sys.argv[1:])}".rstrip()
    lines = [f"# What the memory history's sampler costs: {a.name}", "",
             f"Reproduce: `{reproduce}` (as root; bench/run builds and installs pg_procmem from this "
             "checkout, then runs `bench/sampler.py`). "
             f"{version}, {os.cpu_count()} cores, "
             f"{os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 1024**3:.0f} GiB, "
             f"Linux {os.uname().release}; 1-minute load average {load_before[0]:.2f} at the start, "
             f"{load_after[0]:.2f} at the end (this run included); "
             f"the run took {took / 60:.1f} min. Every cluster: pg_procmem preloaded, "
             "shared_buffers 128 MB, huge_pages off, autovacuum off, idle connections held open by "
             f"psycopg. sizeof(history_entry) = {entry} bytes, a file record's header "
             f"{RECORD_HEADER} bytes.", ""]
    crashed_any = [r for r in cost if r["crashed"]] + [c for c in cpu.values() if c["crashed"]]
    if crashed_any or shm["64kB"]["deaths"]:
        lines += ["**The sampler crashed during this run** (see *Server logs* below): a row marked "
                  "*crashed* has only the samples taken before the crash, or none.", ""]
    if a.note:
        lines += [a.note, ""]
    lines += ["## 1. Cost per sample against the number of processes", "",
              f"One cluster per row, `pg_procmem.sample_interval = 1s`; `sample_ms` "
              "(pg_procmem_history_system) of every sample taken after the last connection "
              f"opened ({a.samples} or more). `processes` counts every process of the server the sampler "
              "read (the postmaster, the auxiliary processes, the sampler, the benchmark's own "
              "connection). A sample takes processes + 1 entries (the system entry first) in the ring, "
              f"and {RECORD_HEADER} bytes more in the file; *file, measured* is the file's growth per "
              "sample between two points of the run. `sample_ms` is wall time: *CPU ms per sample* is "
              "the sampler's own on-CPU time (/proc/PID/schedstat) between the same two points, and "
              "*machine busy* how busy all the machine's cores were then (/proc/stat, this run's "
              f"processes included); each row waited first for a second under {a.quiet:.0f}% busy "
              "(other work on the machine makes samples slower).", "",
              "| connections | processes | samples | median ms | p95 ms | max ms | µs per process (median) "
              "| CPU ms per sample | machine busy | bytes per sample, ring | bytes per sample, file "
              "| file, measured | sampler |",
              "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    offsets = [r["processes"] - r["connections"] for r in cost if r.get("processes")]
    offset = offsets[0] if offsets else 7
    for r in cost:
        status = "ok" if not r["crashed"] else \
            f"**crashed** ({len(r.get('deaths', []))}× in the log) after {r['samples']} full samples"
        if not r.get("processes"):
            lines.append(f"| {r['connections']:,} | | 0 | | | | | | | | | | {status} |")
            continue
        procs = (f"{r['processes']:,.0f}" if r["processes_min"] == r["processes_max"]
                 else f"{r['processes']:,.0f} ({r['processes_min']}–{r['processes_max']})")
        fm = f"{r['file_measured']:,.0f}" if r.get("file_measured") is not None else "n/a"
        lines.append(f"| {r['connections']:,} | {procs} | {r['samples']} | {r['median_ms']:.1f} "
                     f"| {r['p95_ms']:.1f} | {r['max_ms']:.1f} "
                     f"| {r['median_ms'] * 1000 / r['processes']:.0f} "
                     f"| {fmt(r.get('cpu_ms_per_sample'), '.1f')} | {fmt(r.get('busy_pct'), '.0f', '%')} "
                     f"| {r['ring_bytes']:,.0f} "
                     f"| {r['file_bytes']:,.0f} | {fm} | {status} |")
    lines += ["", f"How long the default ring (`pg_procmem.history_size = 32MB`: {ring32:,} entries) "
              "keeps at the default `sample_interval = 10s` (whole samples; the file holds up to 1.5 "
              "times as much before it is rewritten from the ring, and a restart loads it back into a "
              "ring of the same size):", "",
              "| connections | processes | entries per sample | samples kept | minutes kept |",
              "|---:|---:|---:|---:|---:|"]
    for r in cost:
        procs = r.get("processes") or r["connections"] + offset
        kept = ring32 // int(procs + 1)
        r["kept_samples"], r["kept_minutes"] = kept, kept * 10 / 60
        lines.append(f"| {r['connections']:,} | {procs:,.0f}{'' if r.get('processes') else ' (expected)'} "
                     f"| {procs + 1:,.0f} | {kept:,} | {kept * 10 / 60:.1f} |")

    lines += ["", f"## 2. The sampler's CPU with {a.cpu_connections} idle connections", "",
              f"Two clusters side by side (a third, idle, for part 3), {a.cpu_connections} idle "
              f"connections each; the sampler's CPU over the same {a.cpu_seconds} s: utime + stime from "
              f"/proc/PID/stat ({CLK_TCK} ticks a second, so ±{100 / CLK_TCK / a.cpu_seconds:.3f} points), "
              "and its on-CPU time from /proc/PID/schedstat (ns), as a percentage of one core. "
              "*Sampler's overhead* is its own `overhead` in the history at the window's first and last "
              "sample. Goal: at most 1% at the default 10 s.", "",
              "| sample_interval | processes | samples in the window | median sample ms "
              "| utime+stime | CPU % (stat) | on-CPU (schedstat) | CPU % (schedstat) | CPU ms per sample "
              "| sampler's overhead | sampler |",
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for label, c in cpu.items():
        name = f"{label}{' (default)' if label == '10 s' else ''}"
        procs = f"{c['processes']:,.0f}" if c["processes"] else ""
        med = f"{c['median_ms']:.1f}" if c["median_ms"] is not None else ""
        if c["crashed"]:
            lines.append(f"| {name} | {procs} | {c['samples']} | {med} | | | | | | "
                         f"| **crashed** ({len(c['deaths'])}× in the log) |")
            continue
        sched = f"{c['sched_s'] * 1000:.0f} ms" if c["sched_s"] is not None else "n/a"
        schedp = f"{c['sched_pct']:.3f}%" if c["sched_pct"] is not None else "n/a"
        ov = (f"{c['overhead_first'] / 1024:,.0f} → {c['overhead_last'] / 1024:,.0f} kB"
              if c.get("overhead_first") is not None else "n/a")
        lines.append(f"| {name} | {procs} | {c['samples']} | {med} | {c['stat_s'] * 1000:.0f} ms "
                     f"| {c['stat_pct']:.3f}% | {sched} | {schedp} | {fmt(c['cpu_ms_per_sample'], '.1f')} | {ov} | ok |")
    c10 = cpu["10 s"]
    lines += ["", f"The machine's cores were {c10['busy_pct']:.0f}% busy over the window (this run's "
              f"clusters and samplers included; {c10['busy_before_pct']:.0f}% in the second before it)."]
    if not c10["crashed"]:
        verdict = "within" if c10["stat_pct"] <= 1.0 else "over"
        lines += ["", f"At the default 10 s the sampler takes {c10['stat_pct']:.2f}% of one core "
                  f"({verdict} the 1% goal)."]
    else:
        lines += ["", "At the default 10 s: no figure, the sampler crashed in the window."]

    lines += ["", "## 3. The ring's shared memory", "",
              "`shared_memory_size` (MB, rounded up) from `postgres -C shared_memory_size`, server stopped, "
              f"shared_buffers 128 MB, max_connections {a.cpu_connections + 20}, huge_pages off:", "",
              "| configuration | shared_memory_size | against history_size 64kB |", "|---|---:|---:|"]
    small = cmd.get("history_size 64kB")
    for label, v in cmd.items():
        diff = f"{v - small:+,} MB" if v is not None and small is not None else "n/a"
        lines.append(f"| {label} | {f'{v:,} MB' if v is not None else 'n/a'} | {diff} |")
    big = cmd.get("history_size 32MB (default)")
    if big and small:
        lines += ["", f"Ratio 32MB / 64kB: {big / small:.3f} (the ring is "
                  f"{(big - small) / big * 100:.0f}% of the default cluster's shared memory)."]
    lines += ["", "On the running clusters of part 2 (same settings; `pg_shmem_allocations`):", "",
              "| history_size | \"pg_procmem history\" allocation | all allocations | shared_memory_size |",
              "|---|---:|---:|---:|"]
    for label, size in (("10 s", "32MB (default)"), ("64kB", "64kB")):
        s = shm[label]
        sms = f"{s['shared_memory_size']:,} MB" if s.get("shared_memory_size") else "n/a"
        lines.append(f"| {size} | {s['ring_alloc']:,} bytes | {s['shmem_total'] / MB:,.1f} MB | {sms} |")
    d = shm["10 s"]["ring_alloc"] - shm["64kB"]["ring_alloc"]
    s64 = shm["64kB"]
    lines += ["", f"Difference: {d:,} bytes ({d / MB:.2f} MB). The 64kB ring "
              f"({ring_entries(64, entry)} entries), sampling {s64['processes_max']} processes every second, "
              f"held {s64['samples_kept']} samples spanning {s64['span_s']:.0f} s "
              f"(expected {s64['expected']}: whole samples of {s64['processes_max'] + 1} entries)."]

    lines += ["", "## Server logs", "",
              "WARNING, ERROR, FATAL and PANIC lines and pg_procmem's own, by message (numbers as N):", ""]
    all_logs = [(f"part 1, {r['connections']} connections", r["log"]) for r in cost] + \
               [(f"parts 2 and 3, {k}", v) for k, v in logs.items()]
    if not any(v for _, v in all_logs):
        lines.append("None in any cluster's log.")
    else:
        lines += ["| cluster | lines | message |", "|---|---:|---|"]
    for label, v in all_logs:
        groups = {}
        for ln in v:
            msg = re.sub(r"^\S+ \S+ \S+ \[\d+\] ", "", ln)
            groups.setdefault(re.sub(r"\d+", "N", msg), []).append(msg)
        for key, msgs in groups.items():
            lines.append(f"| {label} | {len(msgs)} | `{msgs[0][:200]}` |")

    lines += ["", f"![sample ms against processes]({a.name}.png)", "", "```json",
              json.dumps({"entry_size": entry, "cost": [{k: v for k, v in r.items() if k != "log"} for r in cost],
                          "cpu": cpu, "shmem_running": shm, "shared_memory_size_mb": cmd},
                         indent=1, default=str), "```", ""]
    with open(result_path(f"{a.name}.md"), "w") as f:
        f.write("\n".join(lines))

    plt = pyplot()
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(10, 3.8))
    ok = [r for r in cost if r.get("processes")]
    for r in ok:
        ax.plot([r["processes"]] * len(r["ms_all"]), r["ms_all"], ".", color="#1f77b4", alpha=0.35,
                markersize=5)
    xs = [r["processes"] for r in ok]
    ax.plot(xs, [r["median_ms"] for r in ok], "o-", color="#1f77b4", label="median, interval 1 s")
    ax.plot(xs, [r["p95_ms"] for r in ok], "v--", color="#1f77b4", alpha=0.7, label="p95, interval 1 s")
    for r in cost:
        if r["crashed"]:
            x = r.get("processes") or r["connections"] + offset
            ax.axvline(x, color="#d62728", linestyle=":", linewidth=1)
            ax.annotate("sampler crashed", (x, 0), xytext=(3, 5), textcoords="offset points",
                        rotation=90, color="#d62728", fontsize=8)
    for label, color in (("10 s", "#d62728"), ("1 s", "#2ca02c")):
        c = cpu[label]
        if c["ms_all"]:
            ax.plot([c["processes"]] * len(c["ms_all"]), c["ms_all"], "x", color=color,
                    label=f"part 2, interval {label}")
    ax.set_xlabel("server processes")
    ax.set_ylabel("sample_ms")
    ax.set_xlim(0, None)
    ax.set_ylim(0, None)
    ax.set_title("cost of one sample")
    ax.legend(fontsize=8)
    ax2.plot(xs, [r["median_ms"] * 1000 / r["processes"] for r in ok], "o-", color="#1f77b4")
    ax2.set_xlabel("server processes")
    ax2.set_ylabel("median µs per process")
    ax2.set_xlim(0, None)
    ax2.set_ylim(0, None)
    ax2.set_title("per process")
    fig.tight_layout()
    fig.savefig(result_path(f"{a.name}.png"), dpi=100)
    print("\n".join(lines[:-4]))


if __name__ == "__main__":
    main()
