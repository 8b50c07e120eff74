#!/usr/bin/env python3
"""What reused figures save the sampler, and what the pressure watch costs.

A process that cannot have changed since its last read (src/rules/reuse.h) keeps
that read's figures: the sampler checks it (its membership: stat and a
stat(2) of exe; schedstat; oom_score) instead of reading it. One run:

1. per process (bench/reuse_cost.c, no PostgreSQL in the loop): CPU time of
   that check against a plain read of /proc/PID/status and against a fresh
   read, medians of passes over sleeping processes: children of its own
   (8 MB touched, 100 small mappings each), and the idle backends of
   cluster A below. Goal: the check at most 3 times a plain status read.
2. the sampler at 1,000 idle connections: two clusters side by side,
   A with pg_procmem.sample_reuse on, B off, over the same window; the
   sampler's on-CPU time (/proc/PID/schedstat) as a percentage of one core,
   counted between the end of one sample and the end of a later one (whole
   samples on each side); how many entries each sample reused comes from
   the history file's system entries. At sample_interval 10 s (the default;
   goal on: <= 1%) and 1 s (goal on: <= 10%).
3. the watch alone: sample_interval 3600 s (one sample at the reload, then
   none), A with pg_procmem.pressure_watch_interval 100 ms (the default),
   B with the watch off (0), the sampler's CPU over 60 s. Goal: <= 0.2%.

Conditions (part 2; none by default, a quiet host): --compact-every S writes
1 to /proc/sys/vm/compact_memory every S seconds (compaction migrates pages:
pgmigrate_success moves, which no longer stops reuse), --hogs N runs N busy
loops at nice 0 beside it (a loaded host). The sampler's CPU is its own
clock either way.

Run through `PG_MAJOR=17 bench/run reuse`, as root (ports 5643, 5644);
`PG_MAJOR=17 bench/run reuse --name reuse-loaded --compact-every 5 --hogs 2`
is the loaded host's run.
Writes bench/results/<name>.md and PNG.
"""
import argparse
import json
import os
import resource
import statistics
import struct
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from overhead import Cluster, PG_BIN, close_all, pyplot, result_path  # noqa: E402
from sampler import cpu_times, machine_jiffies, busy_pct, stop_all, sampler_pid, sampler_deaths, \
    server_log_issues  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
COST = os.path.join(HERE, ".build", "reuse_cost")
RECORD = 16                             # sizeof(history_record), and the file's header


def offsets():
    """sizeof(history_entry) and the system entry's fields this reads, from src/rules/history_format.h."""
    build = os.path.join(HERE, ".build")
    src, exe = os.path.join(build, "reuse_offsets.c"), os.path.join(build, "reuse_offsets")
    with open(src, "w") as f:
        f.write('#include <stddef.h>\n#include <stdio.h>\n#include "rules/history_format.h"\n'
                '#define O(f) offsetof(history_entry, u.sys.f)\n'
                'int main(void) { printf("%zu %zu %zu %zu %zu\\n", sizeof(history_entry), O(sample), '
                'O(processes), O(reused), O(sample_us)); return 0; }\n')
    subprocess.run(["cc", "-iquote", os.path.join(HERE, "..", "src"), "-o", exe, src], check=True)
    return dict(zip(("entry", "sample", "processes", "reused", "sample_us"),
                    map(int, subprocess.run([exe], check=True, capture_output=True, text=True).stdout.split())))


def file_samples(cl, off):
    """{sample number: (processes, reused, sample_us)} from the history file's sample records."""
    with open(history_file(cl), "rb") as f:
        data = f.read()
    out, pos = {}, RECORD
    while pos + RECORD <= len(data):
        kind, count, _crc, _pad = struct.unpack_from("=IIII", data, pos)
        pos += RECORD
        if kind == 1:
            e = pos
            if e + count * off["entry"] > len(data):
                break                   # being written
            out[struct.unpack_from("=q", data, e + off["sample"])[0]] = (
                struct.unpack_from("=i", data, e + off["processes"])[0],
                struct.unpack_from("=i", data, e + off["reused"])[0],
                struct.unpack_from("=q", data, e + off["sample_us"])[0])
            pos += count * off["entry"]
        elif kind == 2:
            break                       # crash rows come first, of another size: none here
    return out


# src/rules/reuse.c's counters: anonymous pages moved stop reuse; file pages only
# make a reused process's rss read again; reclaim's totals are anonymous
# only where the kernel does not count reclaim by kind
MOVED_ANON = ("pgsteal_anon", "pgdemote_", "pgpromote_success", "pswpout", "zswpout",
              "thp_split_", "thp_deferred_split_page", "thp_underused_split_page", "thp_collapse_alloc",
              "thp_migration_split")
MOVED_FILE = ("pgsteal_file", "drop_pagecache", "drop_slab")


def moved_counters():
    """/proc/vmstat's counters of pages moved under sleeping processes, by kind: {name: (kind, value)}."""
    with open("/proc/vmstat") as f:
        vm = {k: int(v) for k, v in (line.split() for line in f)}

    def kind(k):
        if any(k == m or (m.endswith("_") and k.startswith(m)) for m in MOVED_ANON):
            return "anon"
        if k in MOVED_FILE:
            return "file"
        if k.startswith("pgsteal_") and "pgsteal_anon" not in vm:
            return "anon"
        return None
    return {k: (kind(k), v) for k, v in vm.items() if kind(k)}


def postmaster_state(cl):
    """The postmaster's timeslices, page faults and anonymous resident pages
    (what src/rules/reuse.c's reuse_postmaster_still() compares)."""
    with open(os.path.join(cl.data, "postmaster.pid")) as f:
        pid = int(f.readline())
    with open(f"/proc/{pid}/schedstat") as f:
        slices = int(f.read().split()[2])
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    with open(f"/proc/{pid}/statm") as f:
        statm = [int(x) for x in f.read().split()]
    return slices, int(fields[7]) + int(fields[9]), statm[1] - statm[2]


def on_cpu(pid):
    return cpu_times(pid)[1]


def newest(mon):
    return mon.execute("SELECT coalesce(max(sample), 0) FROM pg_procmem_history_system").fetchone()[0]


def settings(mons, per_cluster):
    for label, mon in mons.items():
        for k, v in per_cluster[label].items():
            mon.execute(f"ALTER SYSTEM SET {k} = '{v}'")
        mon.execute("SELECT pg_reload_conf()")


def history_file(cl):
    return os.path.join(cl.data, "pg_stat_tmp", "pg_procmem.history")


def file_state(cl):
    st = os.stat(history_file(cl))
    return st.st_size, st.st_mtime_ns


def sample_window(clusters, pids, off, skip, count, timeout):
    """Per cluster: the sampler's on-CPU time between the end of a sample
    (the skip-th after now) and the end of the count-th after it. The end of
    a sample is its write to the history file, seen by a stat(2) of the file
    every 20 ms (not a query: reading the ring would load the machine).
    Returns {label: (first sample, last sample, cpu s, wall s)}."""
    newest = {label: max(file_samples(cl, off) or [0]) for label, cl in clusters.items()}
    start = dict(newest)
    state = {label: file_state(cl) for label, cl in clusters.items()}
    marks = {label: [] for label in clusters}
    deadline = time.time() + timeout
    # why a sample may not reuse: anonymous pages moved on the machine, a
    # postmaster touched its memory (each second); and what only makes rss read again
    moved, pms, last_look = moved_counters(), {label: postmaster_state(cl) for label, cl in clusters.items()}, 0
    seconds, anon_seconds, file_seconds, moved_which = 0, 0, 0, set()
    ran = {label: 0 for label in clusters}
    touched = {label: 0 for label in clusters}
    while time.time() < deadline and any(len(v) < 2 for v in marks.values()):
        if any(marks.values()) and time.time() - last_look >= 1:
            last_look, now_moved = time.time(), moved_counters()
            diff = {k for k in now_moved if now_moved[k] != moved.get(k)}
            seconds += 1
            anon_seconds += any(now_moved[k][0] == "anon" for k in diff)
            file_seconds += any(now_moved[k][0] == "file" for k in diff)
            moved_which |= diff
            moved = now_moved
            for label, cl in clusters.items():
                r = postmaster_state(cl)
                ran[label] += r[0] != pms[label][0]
                touched[label] += r[0] != pms[label][0] and r[1:] != pms[label][1:]
                pms[label] = r
        for label, cl in clusters.items():
            now = file_state(cl)
            if now == state[label] or len(marks[label]) == 2:
                continue
            time.sleep(0.02)            # the write's last bytes
            cpu, at = on_cpu(pids[label]), time.time()
            state[label] = file_state(cl)
            n = max(file_samples(cl, off) or [0])
            target = marks[label][0][0] + count if marks[label] else start[label] + skip
            if n >= target:
                marks[label].append((n, cpu, at))
        time.sleep(0.02)
    why = {"seconds": seconds, "anon_moved_seconds": anon_seconds, "file_moved_seconds": file_seconds,
           "vmstat_moved": sorted(moved_which), "postmaster_ran_seconds": ran, "postmaster_touched_seconds": touched}
    return {label: (v[0][0], v[1][0], v[1][1] - v[0][1], v[1][2] - v[0][2])
            for label, v in marks.items() if len(v) == 2}, why


class Load:
    """Part 2's conditions: compaction every compact_every seconds (a
    thread), hogs busy loops at nice 0; what they did, for the report."""

    def __init__(self, compact_every, hogs):
        self.compact_every, self.hogs, self.procs, self.compactions = compact_every, hogs, [], 0
        self.stop = threading.Event()
        self.thread = None

    def __enter__(self):
        with open("/proc/vmstat") as f:
            self.migrated0 = int(next((l.split()[1] for l in f if l.startswith("pgmigrate_success ")), 0))
        self.procs = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(self.hogs)]
        if self.compact_every:
            self.thread = threading.Thread(target=self.compact, daemon=True)
            self.thread.start()
        return self

    def compact(self):
        while not self.stop.wait(self.compact_every):
            with open("/proc/sys/vm/compact_memory", "w") as f:
                f.write("1")
            self.compactions += 1

    def __exit__(self, *exc):
        self.stop.set()
        if self.thread:
            self.thread.join()
        for p in self.procs:
            p.kill()
            p.wait()
        with open("/proc/vmstat") as f:
            self.migrated = int(next((l.split()[1] for l in f if l.startswith("pgmigrate_success ")), 0)) \
                - self.migrated0
        return False

    def said(self):
        return {"compact_every": self.compact_every, "hogs": self.hogs, "compactions": self.compactions,
                "pages_migrated": self.migrated}


def part_sampler(clusters, mons, pids, off, interval, count, skip):
    settings(mons, {label: {"pg_procmem.sample_interval": interval, "pg_procmem.pressure_watch_interval": "100ms"}
                    for label in mons})
    time.sleep(1.5)                     # the reload's sample (reads every process afresh)
    j0 = machine_jiffies()
    w, why = sample_window(clusters, pids, off, skip, count,
                           (count + skip + 2) * (10 if interval == "10s" else 1) + 60)
    busy = busy_pct(j0, machine_jiffies())
    res = {"why": why}
    for label, (first, last, cpu, wall) in w.items():
        fs = file_samples(clusters[label], off)
        inside = [fs[s] for s in range(first + 1, last + 1) if s in fs]
        reused_ms = [us / 1000 for p, r, us in inside if r > p / 2]
        fresh_ms = [us / 1000 for p, r, us in inside if r <= p / 2]
        res[label] = {"samples": last - first, "cpu_s": cpu, "wall_s": wall, "pct": cpu / wall * 100,
                      "ms_per_sample": cpu * 1000 / (last - first),
                      "processes": statistics.median(p for p, _, _ in inside),
                      "reused_share": sum(r for _, r, _ in inside) / max(sum(p for p, _, _ in inside), 1),
                      "samples_reusing": len(reused_ms),
                      "reusing_ms": statistics.median(reused_ms) if reused_ms else None,
                      "fresh_ms": statistics.median(fresh_ms) if fresh_ms else None,
                      "sample_ms_median": statistics.median(us / 1000 for _, _, us in inside),
                      "reused_all": [r for _, r, _ in inside],
                      "busy_pct": busy}
        print(interval, label, res[label], flush=True)
    return res


def part_watch(mons, pids, seconds):
    settings(mons, {"A": {"pg_procmem.sample_interval": "3600s", "pg_procmem.pressure_watch_interval": "100ms"},
                    "B": {"pg_procmem.sample_interval": "3600s", "pg_procmem.pressure_watch_interval": "0"}})
    # the reload's one sample, then nothing but the watch
    time.sleep(3)
    before = {label: (on_cpu(p), time.time()) for label, p in pids.items()}
    n0 = {label: newest(m) for label, m in mons.items()}
    j0 = machine_jiffies()
    time.sleep(seconds)
    busy = busy_pct(j0, machine_jiffies())
    res = {}
    for label, p in pids.items():
        cpu, wall = on_cpu(p) - before[label][0], time.time() - before[label][1]
        res[label] = {"cpu_s": cpu, "wall_s": wall, "pct": cpu / wall * 100,
                      "samples": newest(mons[label]) - n0[label], "busy_pct": busy}
        print("watch", label, res[label], flush=True)
    return res


def cost(reps, pids):
    out = subprocess.run([COST, str(reps)] + [str(p) for p in pids], check=True, capture_output=True,
                         text=True).stdout
    return {k: float(v) for k, v in (line.rsplit("\t", 1) for line in out.strip().splitlines())}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--name", default="reuse")
    ap.add_argument("--connections", type=int, default=1000)
    ap.add_argument("--port", type=int, default=5643)
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--watch-seconds", type=int, default=60)
    ap.add_argument("--compact-every", type=float, default=0, metavar="S",
                    help="write 1 to /proc/sys/vm/compact_memory every S seconds during part 2")
    ap.add_argument("--hogs", type=int, default=0, metavar="N", help="N busy loops at nice 0 during part 2")
    ap.add_argument("--render", metavar="FILE.json", help="only write the report from a run's figures")
    a = ap.parse_args()
    if a.render:
        with open(a.render) as f:
            return render(json.load(f))
    t_start = time.time()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 4 * 2 * a.connections + 256)), hard))
    off = offsets()
    version = subprocess.run([f"{PG_BIN}/postgres", "--version"], capture_output=True, text=True).stdout.strip()
    load0 = os.getloadavg()[0]

    print("-- part 1: own children", flush=True)
    own = subprocess.run([COST, str(a.reps * 4), "-50", "8"], check=True, capture_output=True, text=True).stdout
    own = {k: float(v) for k, v in (line.rsplit("\t", 1) for line in own.strip().splitlines())}

    clusters, mons, conns = {}, {}, []
    try:
        for i, (label, reuse) in enumerate((("A", "on"), ("B", "off"))):
            print(f"-- cluster {label}: sample_reuse {reuse}, {a.connections} idle connections", flush=True)
            cl = Cluster(96, False, a.connections + 10, a.port + i,
                         extra={"shared_preload_libraries": "pg_procmem", "shared_buffers": "128MB",
                                "pg_procmem.sample_reuse": reuse})
            # the intervals go in postgresql.auto.conf (ALTER SYSTEM): a
            # command-line setting would hide them
            clusters[label] = cl
            mons[label] = cl.connect()
            mons[label].execute("CREATE EXTENSION pg_procmem")
            for _ in range(a.connections):
                c = cl.connect()
                c.execute("SELECT 1")
                conns.append(c)
        pids = {label: sampler_pid(m) for label, m in mons.items()}

        with Load(a.compact_every, a.hogs) as load:
            print("-- part 2: 10 s", flush=True)
            ten = part_sampler(clusters, mons, pids, off, "10s", 12, 1)
            print("-- part 2: 1 s", flush=True)
            one = part_sampler(clusters, mons, pids, off, "1s", 60, 2)
        print("-- part 3: the watch alone", flush=True)
        watch = part_watch(mons, pids, a.watch_seconds)

        print("-- part 1: cluster A's backends", flush=True)
        backends = [r[0] for r in mons["A"].execute(
            "SELECT pid FROM pg_stat_activity WHERE backend_type = 'client backend' "
            "AND pid <> pg_backend_pid()").fetchall()]
        server = cost(a.reps, backends)
        logs = {label: server_log_issues(cl) for label, cl in clusters.items()}
        deaths = {label: sampler_deaths(cl) for label, cl in clusters.items()}
    finally:
        close_all(conns)
        close_all(mons.values())
        stop_all(list(clusters.values()))
    data = {"name": a.name, "version": version, "cores": os.cpu_count(), "kernel": os.uname().release,
            "load_start": load0, "load_end": os.getloadavg()[0], "minutes": (time.time() - t_start) / 60,
            "connections": a.connections, "reps": a.reps, "watch_seconds": a.watch_seconds,
            "backends": len(backends), "cost_children": own, "cost_backends": server, "interval_10s": ten,
            "interval_1s": one, "watch": watch, "offsets": off, "logs": logs, "deaths": deaths,
            "load": load.said()}
    render(data)


def reproduce_flags(d):
    """The options of the run, as bench/run takes them."""
    load = d.get("load") or {}
    return "".join(x for x in (
        f" --name {d['name']}" if d["name"] != "reuse" else "",
        f" --compact-every {load['compact_every']:g}" if load.get("compact_every") else "",
        f" --hogs {load['hogs']}" if load.get("hogs") else ""))


def render(d):
    """bench/results/<name>.md and PNG from one run's figures (also: --render FILE.json)."""
    own, server, ten, one, watch = (d["cost_children"], d["cost_backends"], d["interval_10s"], d["interval_1s"],
                                    d["watch"])
    a = argparse.Namespace(name=d["name"], connections=d["connections"], reps=d["reps"],
                           watch_seconds=d["watch_seconds"])
    logs, deaths = d["logs"], d["deaths"]
    floor, reused, fresh = (k for k in own)
    md = [f"# What reused figures save the sampler: {a.name}", "",
          f"Reproduce: `PG_MAJOR=17 bench/run reuse{reproduce_flags(d)}` (as root; bench/run builds and installs pg_procmem from this "
          f"checkout, then runs `bench/reuse.py`). {d['version']}, {d['cores']} cores, Linux {d['kernel']}; "
          f"1-minute load average {d['load_start']:.2f} at the start, {d['load_end']:.2f} at the end (this run "
          f"included); the run took {d['minutes']:.1f} min. Times are CPU time (the processes' own clocks, "
          "/proc/PID/schedstat), not wall time: the machine is shared.", "",
          "## 1. Per process: the check of a reused process against a read", "",
          "`bench/reuse_cost.c`: CPU µs per process, the three interleaved pass by pass, median of the passes. "
          "*Reused* is what the sampler does for a process whose figures it keeps: the membership check (stat, a "
          "stat(2) of exe), schedstat, oom_score; *fresh* the same check and schedstat, then the whole reading "
          "(`procmem_read_process()`). Goal: the check at most 3 times a plain status read.", "",
          "| processes | " + " | ".join(f"{k} µs" for k in own) + " | reused / status | fresh / reused |",
          "|---|---:|---:|---:|---:|---:|"]
    for label, r in ((f"50 sleeping children of its own (8 MB touched, 100 mappings), {a.reps * 4} passes", own),
                     (f"{d['backends']} idle backends (cluster A), {a.reps} passes", server)):
        md.append(f"| {label} | " + " | ".join(f"{v:.1f}" for v in r.values()) +
                  f" | {r[reused] / r[floor]:.2f}x | {r[fresh] / r[reused]:.1f}x |")
    load = d.get("load") or {"compact_every": 0, "hogs": 0}
    conditions = ("a quiet host: no compaction asked for, no busy loop beside it" if not load["compact_every"]
                  and not load["hogs"] else
                  ", ".join(x for x in (
                      f"`/proc/sys/vm/compact_memory` written every {load['compact_every']:g} s "
                      f"({load['compactions']} compactions, {load['pages_migrated']:,} pages migrated)"
                      if load["compact_every"] else "",
                      f"{load['hogs']} busy loops at nice 0 (the machine's {d['cores']} cores)" if load["hogs"] else "")
                            if x))
    md += ["", f"## 2. The sampler at {a.connections:,} idle connections", "",
           f"Conditions: {conditions}.", "",
           "Two clusters side by side (pg_procmem preloaded, shared_buffers 128 MB, autovacuum off), "
           f"{a.connections:,} idle connections each held by psycopg; A with `pg_procmem.sample_reuse = on` "
           "(the default), B off (every process read at every sample). The sampler's on-CPU time is counted "
           "from just after one sample to just after a later one (whole samples; the watch ticks every 100 ms "
           "in both), after the reload's first samples. *Reused* is the share of process entries the window's "
           "samples reused, *samples reusing* how many of them reused most of their entries, from the history "
           "file's system entries (of the window's samples the file still held: at 1 s it is rewritten from the "
           "ring, which keeps 51 samples of 1,008 entries); *sample ms* the medians of the sampler's own CPU "
           "per sample (`pg_procmem_history_system.sample_ms`) of those and of the others. Goals for A: at most 1% of a core at 10 s, "
           "10% at 1 s.", "",
           "| sample_interval | cluster | samples | processes | reused | samples reusing | sample ms, reusing "
           "| sample ms, reading all | CPU ms per sample | on-CPU | window | CPU % of a core | machine busy |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]

    def ms(v):
        return "-" if v is None else f"{v:.1f}"
    for interval, res in (("10 s (default)", ten), ("1 s", one)):
        for label in ("A", "B"):
            r = res.get(label)
            if not r:
                md.append(f"| {interval} | {label} | no window | | | | | | | | | | |")
                continue
            md.append(f"| {interval} | {label}: reuse {'on' if label == 'A' else 'off'} | {r['samples']} | "
                      f"{r['processes']:.0f} | {r['reused_share'] * 100:.1f}% | {r['samples_reusing']} of "
                      f"{len(r['reused_all'])} | "
                      f"{ms(r['reusing_ms'])} | {ms(r['fresh_ms'])} | "
                      f"{r['ms_per_sample']:.1f} | {r['cpu_s'] * 1000:.0f} ms | {r['wall_s']:.1f} s | "
                      f"{r['pct']:.3f}% | {r['busy_pct']:.0f}% |")
    md += ["", "A sample reuses nothing when, since the last one, an anonymous page moved on the machine "
           "(/proc/vmstat's counters of anonymous reclaim, swap-out, THP splits and collapses (not migration: docs/overhead.md), ...: "
           "the machine is shared) or the postmaster touched its memory (ran and took a page fault, or its "
           "anonymous resident set changed: its once-a-minute wake-up does neither); page cache reclaimed only "
           "makes the reused processes' rss read again. Every process is read afresh at least every 2 minutes "
           "(REUSE_MAX_AGE_MS), so at 10 s at most 11 samples in 12 reuse, at 1 s 119 in 120. Over each window "
           "(looked at once a second):", "",
           "| sample_interval | seconds | anonymous pages moved | file pages moved | which counters | "
           "A's postmaster ran | touched its memory | B's ran | touched |", "|---|---:|---:|---:|---|---:|---:|---:|---:|"]
    for interval, res in (("10 s (default)", ten), ("1 s", one)):
        w = res.get("why")
        if w and "anon_moved_seconds" in w:
            md.append(f"| {interval} | {w['seconds']} | {w['anon_moved_seconds']} | {w['file_moved_seconds']} | "
                      f"{', '.join(w['vmstat_moved']) or '-'} | {w['postmaster_ran_seconds'].get('A')} | "
                      f"{w['postmaster_touched_seconds'].get('A')} | {w['postmaster_ran_seconds'].get('B')} | "
                      f"{w['postmaster_touched_seconds'].get('B')} |")
    for interval, res, every, k in (("10 s", ten, 10, 12), ("1 s", one, 1, 120)):
        r = res.get("A")
        if r and r["reusing_ms"] is not None and r["fresh_ms"] is not None:
            best = (r["fresh_ms"] + (k - 1) * r["reusing_ms"]) / (k * every * 1000) * 100
            md += ["", f"Were the conditions to hold throughout at {interval}: one sample in {k} reads every process "
                      f"({r['fresh_ms']:.1f} ms), the others reuse ({r['reusing_ms']:.1f} ms): "
                      f"{best:.2f}% of a core (from this window's medians)."]
    md += ["", "## 3. The pressure watch alone", "",
           f"The same clusters, `pg_procmem.sample_interval = 3600s` (one sample at the reload, then none in the "
           f"window), A with `pg_procmem.pressure_watch_interval = 100ms` (the default), B with the watch off "
           f"(0): the sampler's on-CPU time over {a.watch_seconds} s. Goal: at most 0.2% of a core.", "",
           "| cluster | samples in the window | on-CPU | window | CPU % of a core |", "|---|---:|---:|---:|---:|"]
    for label, what in (("A", "watch every 100 ms"), ("B", "watch off")):
        r = watch[label]
        md.append(f"| {label}: {what} | {r['samples']} | {r['cpu_s'] * 1000:.1f} ms | {r['wall_s']:.1f} s | "
                  f"{r['pct']:.4f}% |")
    tick = (watch["A"]["cpu_s"] - watch["B"]["cpu_s"]) / (watch["A"]["wall_s"] * 10) * 1e6
    md += ["", f"The watch's own cost: {tick:.1f} µs a tick (A less B, 10 ticks a second).", "",
           "## Verdict", ""]
    checks = [("the check of a reused process / a plain status read (children)", own[reused] / own[floor], 3, "x"),
              ("the check of a reused process / a plain status read (backends)", server[reused] / server[floor], 3, "x"),
              ("sampler, 10 s, reuse on", ten.get("A", {}).get("pct"), 1, "%"),
              ("sampler, 1 s, reuse on", one.get("A", {}).get("pct"), 10, "%"),
              ("the watch alone", watch["A"]["pct"], 0.2, "%")]
    md += ["| figure | measured | goal | met |", "|---|---:|---:|---|"]
    for what, v, goal, unit in checks:
        md.append(f"| {what} | {'n/a' if v is None else f'{v:.3f}{unit}'} | <= {goal}{unit} | "
                  f"{'n/a' if v is None else ('yes' if v <= goal else 'NO')} |")
    md += ["", "## Server logs", ""]
    issues = [(label, ln) for label, v in logs.items() for ln in v] + \
             [(label, ln) for label, v in deaths.items() for ln in v]
    md += ["None in either cluster's log (WARNING, ERROR, FATAL, PANIC, pg_procmem's own, sampler deaths)."] \
        if not issues else [f"- {label}: `{ln[:200]}`" for label, ln in issues[:20]]
    md += ["", f"![CPU of the sampler]({a.name}.png)", "", "```json",
           json.dumps(d, indent=1), "```", ""]
    with open(result_path(f"{a.name}.md"), "w") as f:
        f.write("\n".join(md))

    plt = pyplot()
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    labels = list(own)
    x = range(len(labels))
    ax1.bar([i - 0.2 for i in x], [own[k] for k in labels], 0.4, label="children of its own")
    ax1.bar([i + 0.2 for i in x], [server[k] for k in labels], 0.4, label="idle backends")
    ax1.set_xticks(list(x), ["status\n(plain read)", "reused\n(the check)", "fresh\n(a whole read)"])
    ax1.set_yscale("log")
    ax1.set_ylabel("CPU µs per process (log)")
    ax1.set_title("per process")
    ax1.legend(fontsize=8)
    groups = [("10 s", ten), ("1 s", one)]
    for j, (lab, color) in enumerate((("A", "#2ca02c"), ("B", "#d62728"))):
        vals = [g.get(lab, {}).get("pct", 0) for _, g in groups] + [watch[lab]["pct"]]
        ax2.bar([i + (j - 0.5) * 0.4 for i in range(3)], vals, 0.4, color=color,
                label="A: reuse on, watch 100 ms" if lab == "A" else "B: reuse off (watch off in the last)")
    for i, goal in enumerate((1, 10, 0.2)):
        ax2.plot([i - 0.4, i + 0.4], [goal, goal], "k--", linewidth=1)
    ax2.set_xticks(range(3), ["interval 10 s", "interval 1 s", "watch alone"])
    ax2.set_yscale("log")
    ax2.set_ylabel("sampler's CPU, % of one core (log; dashes: goals)")
    ax2.set_title(f"{a.connections:,} idle connections")
    ax2.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    fig.savefig(result_path(f"{a.name}.png"), dpi=100)
    print("\n".join(md[:-4]))


if __name__ == "__main__":
    main()
