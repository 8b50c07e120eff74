#!/usr/bin/env python3
"""What the DSM figures cost the memory history's sampler.

Issue 43's cost point: the sampler's CPU at 1,000 connections within 10% of
what it was before the DSM figures (each process's segments, its parallel
group's, the server's shared and left-over ones). Two libraries, built here
from two commits of this repository into bench/.build/dsm/ (nothing is
installed): "before" (--before, the commit before the DSM work) and "after"
(--after, HEAD by default; each the newest commit at or before it that
changed the library). Two clusters side by side in one run, X and Y, the
same settings, each preloading one of them (dynamic_library_path points at
that library alone, so the postmaster and the sampler load the same file):
X before and Y after, then both restarted with the libraries swapped, and
everything below again, so that what differs between the clusters
themselves cancels out. --after 0e6ea0b compares the library with itself
(the noise).

1. 200, then 1,000 idle connections in each (psycopg), sample_interval 1 s,
   with pg_procmem.sample_reuse off (every process read at every sample)
   and on (the default: a process that cannot have changed keeps its
   figures), the two alternating, several rounds.
2. At 1,000 connections, a few parallel hash joins running in each cluster
   (their hash tables in DSM segments, each group's own; the joins sleep
   per joined row, so they hold their segments for the whole window and use
   little CPU), again reuse off and on.

A window is whole samples, the same count in both clusters, over the same
wall time: the sampler's on-CPU time (/proc/PID/schedstat, first field)
from just after one sample to just after the K-th after it (the end of a
sample is its append to pg_stat_tmp/pg_procmem.history); per round the
ratio after / before of the CPU per sample. The sampler's own CPU time for
each sample (pg_procmem_history_system.sample_ms, here read from the
history file: no CREATE EXTENSION) and how many entries it reused, per
library, by a reader compiled against that commit's history_format.c.

Run through `PG_MAJOR=17 bench/run dsm`, as root (ports 5621, 5622).
Writes bench/results/<name>.md and PNG.
"""
import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import psycopg

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from overhead import Cluster, PG_BIN, close_all, pyplot, result_path  # noqa: E402
from sampler import cpu_times, machine_jiffies, busy_pct, stop_all, sampler_pid, sampler_deaths, \
    server_log_issues  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
LABELS = ("before", "after")

# Prints "sample processes reused sample_us" for each sample record of a
# history file, in file order (a record cut short by a write under way ends it);
# where the entries have them, then "dsm_known dsm_segments dsm_mapped dsm_shared_segments"
READER_C = r'''
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rules/history_format.h"
int main(int argc, char **argv)
{
	FILE *f = fopen(argv[1], "rb");
	char *buf; size_t len = 0, cap = 1 << 20, got, off = sizeof(history_file_header);
	const history_record *r; const char *p;
	if (!f) return 2;
	buf = malloc(cap);
	while ((got = fread(buf + len, 1, cap - len, f)) > 0)
		if ((len += got) == cap) buf = realloc(buf, cap *= 2);
	if (history_format_check_header(buf, len) != HF_OK) return 3;
	while (history_format_next(buf, len, &off, &r, &p) == HF_OK)
		if (r->kind == RECORD_SAMPLE && r->count > 0) {
			history_entry e;
			memcpy(&e, p, sizeof(e));
			printf("%lld %d %d %lld", (long long) e.u.sys.sample, (int) e.u.sys.processes,
				   (int) e.u.sys.reused, (long long) e.u.sys.sample_us);
#ifdef HAS_DSM
			printf(" %d %d %lld %d", (int) e.u.sys.dsm_known, (int) e.u.sys.dsm_segments,
				   (long long) e.u.sys.dsm_mapped, (int) e.u.sys.dsm_shared_segments);
#endif
			printf("\n");
		}
	return 0;
}
'''


def git(*args):
    return subprocess.run(["git", "-C", REPO, *args], check=True, capture_output=True, text=True).stdout.strip()


def build(rev, pg_config):
    """The library and a history-file reader of commit rev, built once in
    bench/.build/dsm/<commit>-pg<major>/ (a git archive of the commit: the
    working tree's changes are not in it)."""
    # the newest commit that changed the library (the bench's own commits do not)
    commit = git("log", "-1", "--format=%H", git("rev-parse", f"{rev}^{{commit}}"), "--", "src", "Makefile",
                 "pg_procmem.control")
    major = subprocess.run([pg_config, "--version"], check=True, capture_output=True,
                           text=True).stdout.split()[1].split(".")[0]
    dest = os.path.join(HERE, ".build", "dsm", f"{commit[:12]}-pg{major}")
    so, reader = os.path.join(dest, "pg_procmem.so"), os.path.join(dest, "history_reader")
    if not (os.path.exists(so) and os.path.exists(reader)):
        print(f"-- building {rev} ({commit[:12]}) for PostgreSQL {major}", flush=True)
        shutil.rmtree(dest, ignore_errors=True)
        os.makedirs(dest)
        subprocess.run(f"git -C {REPO} archive {commit} | tar -x -C {dest}", shell=True, check=True)
        subprocess.run(["make", "-C", dest, "-s", "-j", str(os.cpu_count() or 2), "with_llvm=no",
                        f"PG_CONFIG={pg_config}"], check=True, capture_output=True)
        with open(os.path.join(dest, "history_reader.c"), "w") as f:
            f.write(READER_C)
        with open(os.path.join(dest, "src", "rules", "history_format.h")) as f:
            has_dsm = ["-DHAS_DSM"] if "dsm_segments" in f.read() else []
        subprocess.run(["cc", "-O2", "-D_GNU_SOURCE", *has_dsm, "-iquote", os.path.join(dest, "src"), "-o", reader,
                        os.path.join(dest, "history_reader.c"),
                        os.path.join(dest, "src", "rules", "history_format.c")], check=True)
    return {"rev": rev, "rev_commit": git("rev-parse", f"{rev}^{{commit}}"), "commit": commit, "title": git("log", "-1", "--format=%s", commit), "so": so,
            "reader": reader}


def history_file(cl):
    return os.path.join(cl.data, "pg_stat_tmp", "pg_procmem.history")


def file_state(cl):
    try:
        st = os.stat(history_file(cl))
    except FileNotFoundError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns


def file_samples(cl, reader, dsm=False):
    """{sample: (processes, reused, sample_us)} of the samples the history file holds;
    with dsm=True, {sample: (dsm_known, dsm_segments, dsm_mapped, dsm_shared_segments)} of those that have them."""
    out = subprocess.run([reader, history_file(cl)], capture_output=True, text=True).stdout
    res = {}
    for line in out.splitlines():
        v = [int(x) for x in line.split()]
        if dsm:
            if len(v) == 8:
                res[v[0]] = tuple(v[4:])
        else:
            res[v[0]] = tuple(v[1:4])
    return res


def on_cpu(pid):
    return cpu_times(pid)[1]


def set_all(mons, settings):
    """ALTER SYSTEM in every cluster, then one reload each."""
    for mon in mons.values():
        for k, v in settings.items():
            mon.execute(f"ALTER SYSTEM SET {k} = '{v}'")
    for mon in mons.values():
        mon.execute("SELECT pg_reload_conf()")


def window(side, count, skip, timeout):
    """Per cluster: the sampler's on-CPU time from just after a sample (the
    skip-th ending after now) to just after the count-th after that one.
    side: {label: (cluster, reader, sampler pid)}.
    Returns {label: {first, last, cpu_s, wall_s}} for those that got there."""
    start, state, marks = {}, {}, {label: [] for label in side}
    for label, (cl, reader, _pid) in side.items():
        start[label] = max(file_samples(cl, reader) or [0])
        state[label] = file_state(cl)
    deadline = time.time() + timeout
    while time.time() < deadline and any(len(v) < 2 for v in marks.values()):
        for label, (cl, reader, pid) in side.items():
            now = file_state(cl)
            if now == state[label] or len(marks[label]) == 2:
                continue
            time.sleep(0.02)            # the write's last bytes
            cpu, at = on_cpu(pid), time.time()
            state[label] = file_state(cl)
            n = max(file_samples(cl, reader) or [0])
            target = marks[label][0][0] + count if marks[label] else start[label] + skip
            if n >= target:
                marks[label].append((n, cpu, at))
        time.sleep(0.02)
    return {label: {"first": v[0][0], "last": v[1][0], "cpu_s": v[1][1] - v[0][1], "wall_s": v[1][2] - v[0][2]}
            for label, v in marks.items() if len(v) == 2}


def measure(side, mons, reuse, count, skip=2):
    """One window with sample_reuse set in both clusters; per cluster its
    figures, and the samples' own (from the file)."""
    set_all(mons, {"pg_procmem.sample_reuse": reuse})
    time.sleep(1.2)
    j0 = machine_jiffies()
    w = window(side, count, skip, (count + skip) * 3 + 60)
    busy = busy_pct(j0, machine_jiffies())
    res = {"reuse": reuse, "busy_pct": busy, "at": time.time()}
    for label, r in w.items():
        cl, reader, _ = side[label]
        fs = file_samples(cl, reader)
        inside = [fs[s] for s in range(r["first"] + 1, r["last"] + 1) if s in fs]
        r["samples"] = r["last"] - r["first"]
        r["ms_per_sample"] = r["cpu_s"] * 1000 / r["samples"]
        r["processes"] = statistics.median(p for p, _, _ in inside) if inside else None
        r["reused_share"] = sum(x for _, x, _ in inside) / max(sum(p for p, _, _ in inside), 1)
        r["sample_ms"] = [us / 1000 for _, _, us in inside]
        r["sample_ms_median"] = statistics.median(r["sample_ms"]) if inside else None
        # the sampler's own DSM figures at the window's last sample (after only)
        r["dsm"] = file_samples(cl, reader, dsm=True).get(r["last"])
        res[label] = r
    if all(label in res for label in LABELS):
        res["ratio"] = res["after"]["ms_per_sample"] / res["before"]["ms_per_sample"]
        if res["before"]["sample_ms_median"]:
            res["ratio_sample_ms"] = res["after"]["sample_ms_median"] / res["before"]["sample_ms_median"]
    print(f"   reuse {reuse}: " + ", ".join(
        f"{label} {res[label]['ms_per_sample']:.1f} ms/sample ({res[label]['samples']} samples, reused "
        f"{res[label]['reused_share'] * 100:.0f}%)" for label in LABELS if label in res) +
        (f", ratio {res['ratio']:.3f}" if "ratio" in res else "") + f", machine {busy:.0f}% busy", flush=True)
    return res


JOIN_SETUP = [
    "CREATE TABLE build_side AS SELECT g AS id, repeat('x', 200) AS pad FROM generate_series(1, {build}) g",
    "CREATE TABLE probe_side AS SELECT (g % {build}) + 1 AS id FROM generate_series(1, {probe}) g",
    "CREATE FUNCTION nap() RETURNS int LANGUAGE plpgsql PARALLEL SAFE AS "
    "$$BEGIN PERFORM pg_sleep({nap}); RETURN 1; END$$",
    "VACUUM ANALYZE build_side",
    "VACUUM ANALYZE probe_side",
]
# the probe side naps per joined row: the hash table, built first, stays in DSM
JOIN_QUERY = "SELECT sum(nap() + length(b.pad)) FROM probe_side p JOIN build_side b USING (id)"


def expected(line):
    """The server's log lines of what the bench does: a join it cancels, a
    restart (the sampler exits with code 1 when told to stop)."""
    return ("canceling statement due to user request" in line or
            'terminating background worker "parallel worker" due to administrator command' in line or
            re.search(r'background worker "pg_procmem sampler" \(PID \d+\) exited with exit code 1$', line))


JOIN_SETTINGS = {"parallel_setup_cost": "0", "parallel_tuple_cost": "0", "min_parallel_table_scan_size": "0",
                 "enable_mergejoin": "off", "enable_nestloop": "off", "work_mem": "256MB"}


class Joins:
    """n connections of a cluster each running the parallel hash join again
    and again until stopped (cancelled)."""

    def __init__(self, cl, n, workers):
        self.conns, self.stop, self.threads, self.errors = [], False, [], []
        for _ in range(n):
            c = cl.connect()
            for k, v in dict(JOIN_SETTINGS, max_parallel_workers_per_gather=str(workers)).items():
                c.execute(f"SET {k} = '{v}'")
            self.conns.append(c)
        self.plan = "\n".join(r[0] for r in self.conns[0].execute("EXPLAIN " + JOIN_QUERY).fetchall())
        for c in self.conns:
            t = threading.Thread(target=self.run, args=(c,), daemon=True)
            t.start()
            self.threads.append(t)

    def run(self, c):
        while not self.stop:
            try:
                c.execute(JOIN_QUERY)
            except psycopg.errors.QueryCanceled:
                pass
            except Exception as e:          # noqa: BLE001 - reported
                self.errors.append(repr(e))
                return

    def end(self):
        self.stop = True
        for c in self.conns:
            try:
                c.cancel()
            except Exception:               # noqa: BLE001
                pass
        for t in self.threads:
            t.join(30)
        close_all(self.conns)


def group_segments(cl):
    """The parallel groups running (leader pid: workers) from pg_stat_activity."""
    with cl.connect() as c:
        return c.execute("SELECT leader_pid, count(*) FROM pg_stat_activity WHERE leader_pid IS NOT NULL "
                         "AND leader_pid <> pid GROUP BY 1").fetchall()


def dsm_files(uid=None):
    """(files, allocated bytes) in /dev/shm named PostgreSQL.* (of every cluster on the host)."""
    n = b = 0
    for e in os.scandir("/dev/shm"):
        if e.name.startswith("PostgreSQL."):
            try:
                st = e.stat(follow_symlinks=False)
            except OSError:
                continue
            if uid is None or st.st_uid == uid:
                n += 1
                b += st.st_blocks * 512
    return n, b


def mapped_dsm(pids):
    """Distinct /dev/shm/PostgreSQL.* segments the processes map, and their bytes."""
    seen = {}
    for p in pids:
        try:
            with open(f"/proc/{p}/maps") as f:
                for line in f:
                    if "/dev/shm/PostgreSQL." in line:
                        path = line.split(None, 5)[5].strip().removesuffix(" (deleted)")
                        if path not in seen:
                            try:
                                seen[path] = os.stat(path).st_blocks * 512
                            except OSError:
                                seen[path] = 0
        except OSError:
            pass
    return len(seen), sum(seen.values())


def server_pids(cl):
    with cl.connect() as c:
        return [r[0] for r in c.execute("SELECT pid FROM pg_stat_activity").fetchall()]


def restart(cl):
    """pg_ctl restart (the command line's settings kept: postmaster.opts)."""
    subprocess.run(["runuser", "-u", "postgres", "--", f"{PG_BIN}/pg_ctl", "-D", cl.data, "-l",
                    os.path.join(cl.dir, "server.log"), "-m", "fast", "-w", "-t", "600", "restart"],
                   check=True, capture_output=True)


def rounds_of(side, mons, count, off, on):
    """count rounds, reuse off and on in each, the order alternating."""
    res = []
    for r in range(count):
        for reuse in (("off", "on") if r % 2 == 0 else ("on", "off")):
            res.append(measure(side, mons, reuse, off if reuse == "off" else on))
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--name", default="dsm")
    ap.add_argument("--before", default="0e6ea0b", help="the commit before the DSM work")
    ap.add_argument("--after", default="HEAD")
    ap.add_argument("--connections", default="200,1000")
    ap.add_argument("--rounds", type=int, default=3, help="rounds per connection count in each half")
    ap.add_argument("--join-rounds", type=int, default=1, help="rounds with the joins in each half")
    ap.add_argument("--samples-off", type=int, default=12, help="samples per window, reuse off")
    ap.add_argument("--samples-on", type=int, default=24, help="samples per window, reuse on")
    ap.add_argument("--joins", type=int, default=3, help="parallel hash joins per cluster in part 2")
    ap.add_argument("--workers", type=int, default=2, help="workers per join")
    ap.add_argument("--build-rows", type=int, default=100000)
    ap.add_argument("--probe-rows", type=int, default=300000)
    ap.add_argument("--port", type=int, default=5621)
    ap.add_argument("--render", metavar="FILE.json", help="only write the report from a run's figures")
    a = ap.parse_args()
    if a.render:
        with open(a.render) as f:
            return render(json.load(f))
    if os.geteuid() != 0:
        sys.exit("run as root")
    t_start = time.time()
    steps = [int(x) for x in a.connections.split(",")]
    top = max(steps)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 4 * 2 * top + 512)), hard))
    pg_config = os.path.join(PG_BIN, "pg_config")
    builds = {"before": build(a.before, pg_config), "after": build(a.after, pg_config)}
    for label, b in builds.items():
        print(f"-- {label}: {b['commit'][:12]} {b['title'][:80]}", flush=True)
    version = subprocess.run([f"{PG_BIN}/postgres", "--version"], capture_output=True, text=True).stdout.strip()
    load0 = os.getloadavg()[0]
    shm0 = dsm_files()

    libs = tempfile.mkdtemp(prefix="pg_procmem_dsmbench.")
    os.chmod(libs, 0o755)
    for label in LABELS:
        d = os.path.join(libs, label)
        os.makedirs(d)
        shutil.copy(builds[label]["so"], d)
        os.chmod(d, 0o755)
    # two clusters, X and Y, each loads one library in the first half and
    # the other in the second (dynamic_library_path, a restart between)
    positions = ("X", "Y")
    halves = ({"X": "before", "Y": "after"}, {"X": "after", "Y": "before"})
    clusters, idle, joins, mons = {}, [], {}, {}
    data = {"name": a.name, "version": version, "cores": os.cpu_count(), "kernel": os.uname().release,
            "builds": {k: {x: v[x] for x in ("rev", "rev_commit", "commit", "title")} for k, v in builds.items()},
            "rounds": a.rounds, "join_rounds": a.join_rounds, "samples_off": a.samples_off,
            "samples_on": a.samples_on, "joins": a.joins, "workers": a.workers, "steps": steps,
            "build_rows": a.build_rows, "probe_rows": a.probe_rows, "load_start": load0,
            "shm_files_start": shm0, "idle": {str(n): [] for n in steps}, "join": {}, "pids": [],
            "halves": halves}
    try:
        for i, pos in enumerate(positions):
            workers = a.joins * a.workers
            cl = Cluster(96, False, top + a.joins + 10, a.port + i, extra={
                "shared_buffers": "128MB", "max_worker_processes": str(workers + 8),
                "max_parallel_workers": str(workers + 2)})
            clusters[pos] = cl
            with cl.connect() as mon:
                for q in JOIN_SETUP:
                    mon.execute(q.format(build=a.build_rows, probe=a.probe_rows, nap=0.02))
                # in postgresql.auto.conf (ALTER SYSTEM): a command-line
                # setting would hide them
                for k, v in {"shared_preload_libraries": "pg_procmem",
                             "pg_procmem.sample_interval": "1s",
                             "pg_procmem.pressure_watch_interval": "100ms"}.items():
                    mon.execute(f"ALTER SYSTEM SET {k} = '{v}'")
        for half, assign in enumerate(halves):
            print(f"-- half {half + 1}: " + ", ".join(f"cluster {p} (port {clusters[p].port}) {assign[p]}"
                                                      for p in positions), flush=True)
            for pos in positions:
                with clusters[pos].connect() as mon:
                    mon.execute(f"ALTER SYSTEM SET dynamic_library_path = '{os.path.join(libs, assign[pos])}'")
                restart(clusters[pos])
            by = {assign[p]: clusters[p] for p in positions}
            mons = {label: by[label].connect() for label in LABELS}
            pids = {label: sampler_pid(m) for label, m in mons.items()}
            for label, pid in pids.items():
                with open(f"/proc/{pid}/maps") as f:
                    mapped = {ln.split()[-1] for ln in f if "pg_procmem" in ln and ".so" in ln}
                want = os.path.join(libs, label, "pg_procmem.so")
                if mapped != {want}:
                    raise SystemExit(f"{label}'s sampler maps {mapped}, not {want}")
            side = {label: (by[label], builds[label]["reader"], pids[label]) for label in LABELS}
            have = 0
            for n in steps:
                print(f"-- {n} idle connections each", flush=True)
                for _ in range(n - have):
                    for label in LABELS:
                        c = by[label].connect()
                        c.execute("SELECT 1")
                        idle.append(c)
                have = n
                for r in rounds_of(side, mons, a.rounds, a.samples_off, a.samples_on):
                    r["half"] = half
                    data["idle"][str(n)].append(r)
            if a.joins and a.join_rounds:
                print(f"-- {top} idle connections each and {a.joins} parallel hash joins "
                      f"({a.workers} workers each) running in each cluster", flush=True)
                for label in LABELS:
                    joins[label] = Joins(by[label], a.joins, a.workers)
                data["join_plan"] = joins["after"].plan
                # until every join built its hash table (its segments stop growing)
                last, steady = None, 0
                for _ in range(120):
                    time.sleep(1)
                    now = dsm_files(os.stat(by["after"].data).st_uid)[1]
                    steady = steady + 1 if now == last else 0
                    last = now
                    if steady >= 3:
                        break
                j = data["join"]
                j.setdefault("groups", []).append({label: [list(g) for g in group_segments(by[label])]
                                                    for label in LABELS})
                j.setdefault("mapped_dsm", []).append({label: mapped_dsm(server_pids(by[label]))
                                                        for label in LABELS})
                print(f"   groups {j['groups'][-1]}, segments mapped (count, bytes) {j['mapped_dsm'][-1]}",
                      flush=True)
                for r in rounds_of(side, mons, a.join_rounds, a.samples_off, a.samples_on):
                    r["half"] = half
                    j.setdefault("rounds", []).append(r)
                for label, jo in joins.items():
                    jo.end()
                    if jo.errors:
                        j.setdefault("errors", []).append(f"{label}: {jo.errors[:3]}")
                joins = {}
            data["pids"].append({label: (pids[label], sampler_pid(mons[label])) for label in LABELS})
            close_all(idle)
            close_all(mons.values())
            idle, mons = [], {}
        data["logs"] = {p: server_log_issues(cl) for p, cl in clusters.items()}
        data["deaths"] = {p: sampler_deaths(cl) for p, cl in clusters.items()}
    finally:
        for jo in joins.values():
            jo.end()
        close_all(idle)
        close_all(mons.values())
        stop_all(list(clusters.values()))
        shutil.rmtree(libs, ignore_errors=True)
    data["shm_files_end"] = dsm_files()
    data["load_end"] = os.getloadavg()[0]
    data["minutes"] = (time.time() - t_start) / 60
    # the figures, for --render (the report embeds them too)
    with open(os.path.join(HERE, ".build", f"{a.name}.json"), "w") as f:
        json.dump(data, f, indent=1, default=str)
    render(data)


def spread(xs):
    return (statistics.median(xs), min(xs), max(xs)) if xs else (None, None, None)


def summary(rounds, reuse):
    """Over the rounds of one reuse setting: per library the CPU ms per
    sample (pooled: all windows' CPU over all their samples), the median
    sample_ms; the ratios round by round and pooled."""
    rs = [r for r in rounds if r["reuse"] == reuse and "ratio" in r]
    if not rs:
        return None
    out = {"windows": len(rs), "ratios": [r["ratio"] for r in rs],
           "ratios_sample_ms": [r["ratio_sample_ms"] for r in rs if "ratio_sample_ms" in r],
           "busy": [r["busy_pct"] for r in rs]}
    for label in LABELS:
        cpu = sum(r[label]["cpu_s"] for r in rs)
        n = sum(r[label]["samples"] for r in rs)
        ms = [x for r in rs for x in r[label]["sample_ms"]]
        out[label] = {"ms_per_sample": cpu * 1000 / n, "samples": n, "cpu_s": cpu,
                      "wall_s": sum(r[label]["wall_s"] for r in rs),
                      "processes": statistics.median(r[label]["processes"] for r in rs if r[label]["processes"]),
                      "reused_share": statistics.mean(r[label]["reused_share"] for r in rs),
                      "sample_ms_median": statistics.median(ms) if ms else None,
                      "sample_ms_max": max(ms) if ms else None,
                      "ms_per_sample_rounds": [r[label]["ms_per_sample"] for r in rs],
                      "dsm": [r[label]["dsm"] for r in rs if r[label].get("dsm")]}
    out["pooled"] = out["after"]["ms_per_sample"] / out["before"]["ms_per_sample"]
    # per half (the libraries on the other cluster): a cluster's own bias shows as a difference
    out["halves"] = []
    for h in sorted({r.get("half", 0) for r in rs}):
        hs = [r for r in rs if r.get("half", 0) == h]
        ms = {label: sum(r[label]["cpu_s"] for r in hs) / sum(r[label]["samples"] for r in hs) for label in LABELS}
        out["halves"].append(ms["after"] / ms["before"])
    if out["before"]["sample_ms_median"]:
        out["pooled_sample_ms"] = out["after"]["sample_ms_median"] / out["before"]["sample_ms_median"]
    return out


def dsm_seen(xs):
    """The after sampler's dsm figures at the windows' last samples: 'segments (shared), MB', ranges."""
    known = [x for x in xs if x[0] == 1]
    if not known:
        return "-" if not xs else "not read"

    def rng(vals, f):
        lo, hi = min(vals), max(vals)
        return f(lo) if lo == hi else f"{f(lo)}-{f(hi)}"
    return (f"{rng([x[1] for x in known], str)} ({rng([x[3] for x in known], str)}), "
            f"{rng([x[2] / 1048576 for x in known], lambda v: f'{v:.1f}')}")


def render(d):
    """bench/results/<name>.md and PNG from one run's figures (also: --render FILE.json)."""
    name = d["name"]
    b, af = d["builds"]["before"], d["builds"]["after"]
    rows = []                           # (case, reuse, summary)
    for n in d["steps"]:
        for reuse in ("off", "on"):
            rows.append((f"{n:,} idle", n, reuse, summary(d["idle"][str(n)], reuse)))
    if d.get("join"):
        for reuse in ("off", "on"):
                rows.append((f"{max(d['steps']):,} idle + {d['joins']} parallel hash joins", max(d["steps"]), reuse,
                         summary(d["join"].get("rounds", []), reuse)))
    md = [f"# What the DSM figures cost the sampler: {name}", "",
          f"Reproduce: `PG_MAJOR=17 bench/run dsm` (as root; `bench/dsm.py` builds both libraries itself from "
          f"`git archive` of the two commits into bench/.build/dsm/, and installs nothing). {d['version']}, "
          f"{d['cores']} cores, Linux {d['kernel']}; 1-minute load average {d['load_start']:.2f} at the start, "
          f"{d['load_end']:.2f} at the end (this run included); the run took {d['minutes']:.1f} min. "
          "Times are CPU time (the sampler's own clock, /proc/PID/schedstat), not wall time: the machine is "
          "shared.", "",
          f"- **before**: `{b['commit'][:12]}` {b['title'][:100]}",
          f"- **after**: `{af['commit'][:12]}` {af['title'][:100]}", "",
          "Two clusters side by side, X and Y, each preloading one library (dynamic_library_path names its "
          "directory only; the sampler was checked to map that file): X *before* and Y *after* in the first "
          "half of the run, then both restarted with the libraries swapped for the second, so that what "
          "differs between the two clusters themselves cancels out. The same settings: shared_buffers 128 MB, "
          "autovacuum off, `pg_procmem.sample_interval = 1s`, the pressure watch every 100 ms (the default); "
          "idle connections held by psycopg, opened in both in turn. Each window counts the sampler's on-CPU "
          "time from just after one sample to just after a later one (the same number of whole samples in both "
          "clusters, over the same wall time), after the reload that set `pg_procmem.sample_reuse` and two "
          f"samples more; {d['rounds']} rounds per connection count in each half (reuse off: {d['samples_off']} "
          f"samples a window, on: {d['samples_on']}), off and on alternating in order round by round.", "",
          "*CPU ms per sample* is all windows' on-CPU time over all their samples; *ratio* after / before, "
          "pooled, per half and per round (median, min-max); *sample_ms* is the sampler's own CPU for a sample "
          "(`pg_procmem_history_system.sample_ms`, read from the history file), median over the windows' "
          "samples; *reused* the share of process entries the windows' samples reused.", "",
          "| case | sample_reuse | processes | reused (before / after) | CPU ms per sample, before | after "
          "| **ratio** | half 1 / half 2 | ratio per round: median (min-max) | sample_ms, before: median (max) | after | ratio of medians | % of a core at 10 s, "
          "after | after's DSM: segments (shared), MB |",
          "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for case, n, reuse, s in rows:
        if not s:
            md.append(f"| {case} | {reuse} | no window in both | | | | | | | | | | | |")
            continue
        med, lo, hi = spread(s["ratios"])
        bs, as_ = s["before"], s["after"]
        sm = f"{s['pooled_sample_ms']:.3f}" if s.get("pooled_sample_ms") else "-"
        md.append(f"| {case} | {reuse} | {bs['processes']:.0f} / {as_['processes']:.0f} | "
                  f"{bs['reused_share'] * 100:.0f}% / {as_['reused_share'] * 100:.0f}% | "
                  f"{bs['ms_per_sample']:.1f} | {as_['ms_per_sample']:.1f} | **{s['pooled']:.3f}** | "
                  f"{' / '.join(f'{h:.3f}' for h in s['halves'])} | "
                  f"{med:.3f} ({lo:.3f}-{hi:.3f}), {s['windows']} windows | "
                  f"{bs['sample_ms_median']:.1f} ({bs['sample_ms_max']:.0f}) | "
                  f"{as_['sample_ms_median']:.1f} ({as_['sample_ms_max']:.0f}) | {sm} | "
                  f"{as_['ms_per_sample'] / 100:.2f}% | {dsm_seen(as_['dsm'])} |")
    md += ["", "*% of a core at 10 s*: the CPU per sample at the default `sample_interval` (the pressure watch "
           "included; with reuse on, as if every sample reused: one in 12 reads every process). *after's DSM*: "
           "what the after library's sampler itself recorded at each window's last sample "
           "(`pg_procmem_history_system.dsm_segments`, `dsm_shared_segments`, `dsm_mapped`; the range over the "
           "windows).", ""]
    j = d.get("join")
    if j:
        md += [f"Part 2: in each cluster {d['joins']} connections ran `{JOIN_QUERY}` again and again "
               f"(build_side {d['build_rows']:,} rows of 200 bytes, probe_side {d['probe_rows']:,}; "
               f"{', '.join(f'{k} = {v}' for k, v in JOIN_SETTINGS.items())}, "
               f"max_parallel_workers_per_gather = {d['workers']}; `nap()` sleeps 20 ms: the hash table, built "
               "first, stays in DSM while the probe naps). The parallel groups (leader: workers) when the "
               "windows began, and the distinct /dev/shm segments the cluster's processes mapped "
               "(from /proc/PID/maps):", "",
               "| half | library | groups | segments mapped | their allocated bytes |", "|---|---|---|---:|---:|"]
        for h, (groups, mapped) in enumerate(zip(j.get("groups", []), j.get("mapped_dsm", []))):
            for label in LABELS:
                g, m = groups.get(label, []), mapped.get(label, [0, 0])
                md.append(f"| {h + 1} | {label} | {len(g)} ({', '.join(f'{w} workers' for _, w in g)}) | "
                          f"{m[0]} | {m[1] / 1048576:.1f} MB |")
        md += ["", "The plan:", "", "```", d.get("join_plan", ""), "```", ""]
        if j.get("errors"):
            md += ["Join errors: " + "; ".join(j["errors"]), ""]
    n0, n1 = d["shm_files_start"], d["shm_files_end"]
    md += [f"/dev/shm held {n0[0]} PostgreSQL.* files ({n0[1] / 1048576:.1f} MB, every cluster on the host) at "
           f"the start, {n1[0]} at the end.", "", "## Verdict", "",
           "Issue 43: the sampler's CPU at 1,000 connections within 10% of what it was before.", "",
           "| case | sample_reuse | ratio (pooled) | per round, max | sample_ms, ratio of medians | within 10% |",
           "|---|---|---:|---:|---:|---|"]
    for case, n, reuse, s in rows:
        if s and n == max(d["steps"]):
            sm = f"{s['pooled_sample_ms']:.3f}" if s.get("pooled_sample_ms") else "-"
            md.append(f"| {case} | {reuse} | {s['pooled']:.3f} | {max(s['ratios']):.3f} | {sm} | "
                      f"{'yes' if s['pooled'] <= 1.10 else 'NO'} |")
    md += ["", "## Server logs", ""]
    issues = [(f"cluster {p}", ln) for p, v in d["logs"].items() for ln in v if not expected(ln)] + \
             [(f"cluster {p}", ln) for p, v in d["deaths"].items() for ln in v]
    for h, pids in enumerate(d["pids"]):
        for label, (first, last) in pids.items():
            if first != last:
                issues.append((label, f"half {h + 1}: the sampler's pid changed, {first} -> {last}"))
    md += ["None in either cluster's log (WARNING, ERROR, FATAL, PANIC, pg_procmem's own, sampler deaths)."] \
        if not issues else [f"- {label}: `{ln[:200]}`" for label, ln in issues[:20]]
    md += ["", f"![the sampler's CPU, after against before]({name}.png)", "", "```json",
           json.dumps(d, indent=1, default=str), "```", ""]
    with open(result_path(f"{name}.md"), "w") as f:
        f.write("\n".join(md))

    plt = pyplot()
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    ok = [(case, n, reuse, s) for case, n, reuse, s in rows if s]
    labels = [f"{case.replace(' idle', '').replace(' + ' + str(d['joins']) + ' parallel hash joins', chr(10) + '+ joins')}"
              f"\nreuse {reuse}" for case, n, reuse, s in ok]
    xs = range(len(ok))
    w = 0.38
    for k, (label, color) in enumerate((("before", "#7f7f7f"), ("after", "#1f77b4"))):
        ax.bar([x + (k - 0.5) * w for x in xs], [s[label]["ms_per_sample"] for *_, s in ok], w, color=color,
               label=label)
        for x, (*_, s) in zip(xs, ok):
            ys = s[label]["ms_per_sample_rounds"]
            ax.plot([x + (k - 0.5) * w] * len(ys), ys, "k.", markersize=3)
    ax.set_xticks(list(xs))
    ax.set_xticklabels(labels, fontsize=7)
    ax.set_ylabel("sampler CPU ms per sample (schedstat)")
    ax.set_title("the sampler's CPU per sample")
    ax.legend(fontsize=8)
    for x, (*_, s) in zip(xs, ok):
        ax2.plot([x] * len(s["ratios"]), s["ratios"], ".", color="#1f77b4", alpha=0.6)
        ax2.plot([x], [s["pooled"]], "D", color="#d62728")
    ax2.axhline(1.0, color="k", linewidth=0.8)
    ax2.axhline(1.1, color="#d62728", linestyle="--", linewidth=0.8, label="goal: 1.10")
    ax2.set_xticks(list(xs))
    ax2.set_xticklabels(labels, fontsize=7)
    ax2.set_ylabel("after / before")
    ax2.set_title("ratio: windows (dots), pooled (diamond)")
    ax2.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(result_path(f"{name}.png"), dpi=100)
    print("\n".join(md[:md.index("## Server logs")]))


if __name__ == "__main__":
    main()
