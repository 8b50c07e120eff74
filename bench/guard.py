#!/usr/bin/env python3
"""What the memory guard costs, and how fast it acts.

One run, CPU time from /proc/PID/schedstat (never wall time for a cost):

1. the guard's worker: its on-CPU time per second of wall time, as a
   percentage of one core, with pg_procmem.guard = on at guard_interval
   50 ms (the default) and 10 ms, two clusters side by side over the same
   window, idle and then with 200 idle connections each; a third cluster
   with guard = off, where no guard process may run.
2. pg_procmem.max_backend_memory (1GB, never reached) against unset, two
   clusters side by side, the setting swapped between them round by round:
   (a) pgbench -S -M prepared, one client each: the backend's on-CPU time
   over a window in the middle of the run, per transaction (the
   transactions pgbench's log says ended in that window); (b) one CPU-bound
   query of a fixed amount of work (about 10 s), its backend's on-CPU time,
   with pg_procmem.backend_check_interval 50 ms (the default) and 10 ms;
   the checks it ran are its wall time over the interval.
3. time to act: a cluster (guard on, guard_terminate on, threshold 90%)
   in a memory cgroup limited to 1.5 GB ($GUARD_CGROUP, made by bench/run),
   its unreclaimable use (usage - (total_cache - total_shmem), v1; usage -
   (file - shmem) - slab_reclaimable, v2: what the guard reads) sampled
   every 5 ms by a thread: a sort growing at about 300 MB/s, an unthrottled
   sort, sessions each holding 100 MB of temp_buffers, idle; from the
   sample that crossed 90% to the guard's action (acted_at), to the
   client's error, and to the memory given back (the use fallen by half of
   what the victim held from its peak). With the hogs' growth rates, the
   headroom the threshold must leave: rate x (check interval + time to
   cancel).
4. over the threshold with nothing worth acting on: 200 sessions running
   pg_sleep in the memory cgroup, its limit set so that the use is at 93%:
   the guard's worker's on-CPU time per second.

Run through `PG_MAJOR=17 bench/run guard`, as root (ports 5650-5655).
Writes bench/results/<name>.md and PNGs.
"""
import argparse
import json
import os
import pwd
import re
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import psycopg

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from overhead import PG_BIN, close_all, pyplot, result_path, run_as_postgres  # noqa: E402

MB = 1024 * 1024
LIMIT = 1536 * MB
GUARD_TYPE = "pg_procmem guard"
# the hogs of test/guard/guard.py
SORT = ("SELECT count(*) FROM (SELECT g, repeat('x', 1000) AS pad FROM (SELECT generate_series(1, 400000000) AS g) "
        "AS x WHERE pg_sleep(CASE WHEN g % 1000 = 0 THEN greatest(0, g / {rows_per_s}.0 - "
        "extract(epoch FROM clock_timestamp() - statement_timestamp())) ELSE 0 END) IS NOT NULL "
        "ORDER BY g DESC, pad) AS s")
FAST = ("SELECT count(*) FROM (SELECT g, repeat('x', 1000) AS pad FROM generate_series(1, 400000000) AS g "
        "ORDER BY g DESC, pad) AS s")
TEMP = ("CREATE TEMP TABLE t AS SELECT repeat('x', 400) AS x FROM generate_series(1, 220000)")
# CPU-bound, fixed work, little memory: the inner scan's tuplestore is kept across rescans
BUSY = "SELECT sum(a::bigint * b) FROM generate_series(1, {n}) a, generate_series(1, 1000) b"


# --- clusters ------------------------------------------------------------------

class Cluster:
    """A throwaway cluster under /tmp/w/bench-guard.*, its postmaster in `cgroup` if given."""

    def __init__(self, port, settings, cgroup=None):
        self.port, self.cgroup = port, cgroup
        os.makedirs("/tmp/w", exist_ok=True)
        self.dir = tempfile.mkdtemp(prefix="bench-guard.", dir="/tmp/w")
        pw = pwd.getpwnam("postgres")
        os.chown(self.dir, pw.pw_uid, pw.pw_gid)
        os.chmod(self.dir, 0o755)
        self.data = os.path.join(self.dir, "data")
        run_as_postgres(f"{PG_BIN}/initdb", "-D", self.data, "-U", "postgres", "--auth=trust", "--no-sync",
                        "-E", "UTF8", "--locale=C")
        conf = {"shared_preload_libraries": "pg_procmem", "shared_buffers": "128MB", "jit": "off",
                "autovacuum": "off", "listen_addresses": "''", "unix_socket_directories": self.dir,
                "port": str(port), "max_connections": "220", "max_wal_size": "4GB", "checkpoint_timeout": "1h"}
        conf.update(settings)
        # in postgresql.conf: ALTER SYSTEM may change them later
        with open(os.path.join(self.data, "postgresql.conf"), "a") as f:
            for k, v in conf.items():
                f.write(f"{k} = '{v.strip(chr(39))}'\n")
        into = f"echo $$ > {cgroup}/cgroup.procs && " if cgroup else ""
        subprocess.run(["sh", "-c", f"{into}exec runuser -u postgres -- {PG_BIN}/pg_ctl -D {self.data} "
                        f"-l {self.dir}/server.log -w -t 120 start"], check=True, capture_output=True)
        with open(os.path.join(self.data, "postmaster.pid")) as f:
            self.pid = int(f.readline())

    def connect(self, app="gbench"):
        return psycopg.connect(host=self.dir, port=self.port, user="postgres", dbname="postgres",
                               autocommit=True, application_name=app)

    def stop(self):
        subprocess.run(["runuser", "-u", "postgres", "--", f"{PG_BIN}/pg_ctl", "-D", self.data, "-m", "fast",
                        "-w", "stop"], capture_output=True)
        shutil.rmtree(self.dir, ignore_errors=True)

    def log_issues(self):
        try:
            with open(os.path.join(self.dir, "server.log"), errors="replace") as f:
                lines = f.read().splitlines()
        except OSError:
            return []
        return [ln for ln in lines if re.search(r"\b(WARNING|PANIC):|terminated by signal|was terminated", ln)]


def on_cpu_ns(pid):
    with open(f"/proc/{pid}/schedstat") as f:
        return int(f.read().split()[0])


def children(pid):
    """(pid, title) of a postmaster's children."""
    out = []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open(f"/proc/{p}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            if ppid == pid:
                with open(f"/proc/{p}/cmdline", "rb") as f:
                    out.append((int(p), f.read().replace(b"\0", b" ").decode(errors="replace").strip()))
        except (OSError, ValueError):
            pass
    return out


def guard_pid(mon, timeout=15):
    deadline = time.time() + timeout
    while time.time() < deadline:
        row = mon.execute("SELECT pid FROM pg_stat_activity WHERE backend_type = %s", (GUARD_TYPE,)).fetchone()
        if row:
            return row[0]
        time.sleep(0.2)
    return None


def reload(mon, settings):
    for k, v in settings.items():
        if v is None:
            mon.execute(f"ALTER SYSTEM RESET {k}")
        else:
            mon.execute(f"ALTER SYSTEM SET {k} = '{v}'")
    mon.execute("SELECT pg_reload_conf()")


def machine_busy():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return sum(v[:8]) - v[3] - v[4], sum(v[:8])


def busy_pct(a, b):
    return (b[0] - a[0]) * 100 / max(b[1] - a[1], 1)


# --- part 1: the guard's worker ---------------------------------------------------

def part_worker(port, seconds, connections):
    clusters, mons, conns = {}, {}, []
    res = {"windows": {}}
    try:
        for i, (label, guard, interval) in enumerate((("50ms", "on", "50ms"), ("10ms", "on", "10ms"),
                                                      ("off", "off", "50ms"))):
            cl = Cluster(port + i, {"pg_procmem.guard": guard, "pg_procmem.guard_interval": interval})
            clusters[label], mons[label] = cl, cl.connect()
            mons[label].execute("CREATE EXTENSION pg_procmem")
        pids = {label: guard_pid(mons[label]) for label in ("50ms", "10ms")}
        res["guard_pids"] = pids
        for phase in ("idle", f"{connections} idle connections"):
            if phase != "idle":
                for label in ("50ms", "10ms"):
                    for _ in range(connections):
                        c = clusters[label].connect()
                        c.execute("SELECT 1")
                        conns.append(c)
                time.sleep(2)
            print(f"-- part 1: {phase}, {seconds} s", flush=True)
            c0 = {label: on_cpu_ns(pid) for label, pid in pids.items()}
            w0, j0 = time.time(), machine_busy()
            time.sleep(seconds)
            c1 = {label: on_cpu_ns(pid) for label, pid in pids.items()}
            wall, busy = time.time() - w0, busy_pct(j0, machine_busy())
            res["windows"][phase] = {label: {"cpu_ms": (c1[label] - c0[label]) / 1e6, "wall_s": wall,
                                             "pct": (c1[label] - c0[label]) / 1e9 / wall * 100,
                                             "ticks": wall * 1000 / int(label[:-2]),
                                             "us_per_tick": (c1[label] - c0[label]) / 1e3 / (wall * 1000 /
                                                                                              int(label[:-2])),
                                             "busy_pct": busy}
                                     for label in pids}
            print(res["windows"][phase], flush=True)
        off = mons["off"].execute("SELECT count(*) FROM pg_stat_activity WHERE backend_type = %s",
                                  (GUARD_TYPE,)).fetchone()[0]
        res["off"] = {"in_pg_stat_activity": off,
                      "children": [t for _, t in children(clusters["off"].pid)],
                      "guard_children": [t for _, t in children(clusters["off"].pid) if "guard" in t]}
        # and the 50 ms one turned off: its worker stops by itself
        reload(mons["50ms"], {"pg_procmem.guard": "off"})
        time.sleep(2)
        res["turned_off"] = {"worker_alive": os.path.exists(f"/proc/{pids['50ms']}"),
                             "guard_children": [t for _, t in children(clusters["50ms"].pid) if "guard" in t]}
        res["logs"] = {label: cl.log_issues() for label, cl in clusters.items()}
    finally:
        close_all(conns)
        close_all(mons.values())
        for cl in clusters.values():
            cl.stop()
    return res


# --- part 2: the per-backend limit -------------------------------------------------

def pgbench_window(clusters, mons, limited, seconds, skip, measure, workdir):
    """Both clusters' pgbench -S at once; per cluster its backend's on-CPU ns
    and the transactions that ended between two reads of it."""
    for label, mon in mons.items():
        reload(mon, {"pg_procmem.max_backend_memory": "1GB" if label == limited else None})
    time.sleep(0.5)
    procs = {}
    for label, cl in clusters.items():
        d = os.path.join(workdir, label)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        procs[label] = subprocess.Popen(
            [f"{PG_BIN}/pgbench", "-h", cl.dir, "-p", str(cl.port), "-U", "postgres", "-n", "-S", "-M", "prepared",
             "-c", "1", "-j", "1", "-T", str(seconds), "-l", "--log-prefix", os.path.join(d, "log"), "postgres"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    time.sleep(skip)
    pids = {}
    for label, mon in mons.items():
        rows = mon.execute("SELECT pid FROM pg_stat_activity WHERE application_name = 'pgbench'").fetchall()
        pids[label] = rows[0][0]
    # the setting as the backend sees it
    seen = {}
    for label, mon in mons.items():
        seen[label] = mon.execute("SELECT setting FROM pg_settings WHERE name = 'pg_procmem.max_backend_memory'"
                                  ).fetchone()[0]
    a = {label: (time.time(), on_cpu_ns(pid)) for label, pid in pids.items()}
    time.sleep(measure)
    b = {label: (time.time(), on_cpu_ns(pid)) for label, pid in pids.items()}
    out = {}
    for label, p in procs.items():
        p.communicate(timeout=seconds + 60)
        n = 0
        d = os.path.join(workdir, label)
        for fn in os.listdir(d):
            with open(os.path.join(d, fn)) as f:
                for line in f:
                    x = line.split()
                    t = int(x[4]) + int(x[5]) / 1e6       # the transaction's end
                    n += a[label][0] < t <= b[label][0]
        cpu = b[label][1] - a[label][1]
        out[label] = {"limit": label == limited, "setting_mb": seen[label], "xacts": n, "cpu_ms": cpu / 1e6,
                      "us_per_xact": cpu / 1e3 / max(n, 1), "wall_s": b[label][0] - a[label][0]}
    return out


def calibrate(mon, target_s):
    """BUSY's n for about target_s of CPU."""
    n = 2000
    while True:
        pid = mon.execute("SELECT pg_backend_pid()").fetchone()[0]
        c0 = on_cpu_ns(pid)
        mon.execute(BUSY.format(n=n))
        s = (on_cpu_ns(pid) - c0) / 1e9
        if s > 0.5:
            return int(n * target_s / s)
        n *= 4


def sched(pid):
    """(on-CPU ns, timeslices) from /proc/PID/schedstat."""
    with open(f"/proc/{pid}/schedstat") as f:
        v = f.read().split()
    return int(v[0]), int(v[2])


def statement_cost(conn, sql, limited, interval):
    """One statement in conn's backend: its on-CPU seconds, wall seconds and timeslices."""
    conn.execute(f"SET pg_procmem.backend_check_interval = '{interval}'")
    conn.execute("SET pg_procmem.max_backend_memory = " + ("'1GB'" if limited else "0"))
    pid = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
    (c0, s0), w0 = sched(pid), time.time()
    conn.execute(sql)
    w1, (c1, s1) = time.time(), sched(pid)
    return {"limit": limited, "interval": interval, "cpu_s": (c1 - c0) / 1e9, "wall_s": w1 - w0,
            "slices": s1 - s0}


def busy_runs(cl, n, rounds):
    """BUSY in one backend, the limit on and off in ABBA order, per interval."""
    c = cl.connect("gbench-busy")
    c.execute("SET max_parallel_workers_per_gather = 0")
    out = []
    try:
        for interval in ("50ms", "10ms"):
            for r in range(rounds):
                for limited in ((True, False) if r % 2 == 0 else (False, True)):
                    x = statement_cost(c, BUSY.format(n=n), limited, interval)
                    out.append(x)
                    print(x, flush=True)
    finally:
        c.close()
    return out


def sleep_runs(clusters, seconds):
    """pg_sleep in both clusters at once, the limit in one: every check wakes
    the backend, so its timeslices count the checks and its CPU is theirs."""
    out = []
    for interval in ("50ms", "10ms"):
        conns = {label: cl.connect("gbench-sleep") for label, cl in clusters.items()}
        res = {}

        def run(label):
            res[label] = statement_cost(conns[label], f"SELECT pg_sleep({seconds})", label == "P", interval)
        threads = [threading.Thread(target=run, args=(label,)) for label in conns]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        close_all(conns.values())
        out.append({"interval": interval, "on": res["P"], "off": res["Q"]})
        print(out[-1], flush=True)
    return out


def part_limit(port, rounds, workdir):
    clusters, mons = {}, {}
    res = {"pgbench": [], "busy": []}
    try:
        for i, label in enumerate(("P", "Q")):
            cl = Cluster(port + i, {})
            clusters[label], mons[label] = cl, cl.connect()
            mons[label].execute("CREATE EXTENSION pg_procmem")
            subprocess.run([f"{PG_BIN}/pgbench", "-h", cl.dir, "-p", str(cl.port), "-U", "postgres", "-i", "-s", "10",
                            "-q", "postgres"], check=True, capture_output=True)
        print("-- part 2a: pgbench -S -M prepared", flush=True)
        for r in range(rounds):
            limited = ("P", "Q")[r % 2]
            w = pgbench_window(clusters, mons, limited, 16, 3, 11, workdir)
            res["pgbench"].append(w)
            print(w, flush=True)
        for mon in mons.values():
            reload(mon, {"pg_procmem.max_backend_memory": None})
        print("-- part 2b: a CPU-bound query", flush=True)
        n = calibrate(mons["P"], 5)
        res["busy_n"] = n
        res["busy"] = busy_runs(clusters["P"], n, rounds)
        print("-- part 2b: a sleeping statement", flush=True)
        res["sleep_s"] = 5
        res["sleep"] = sleep_runs(clusters, res["sleep_s"])
        res["actions"] = {label: mon.execute("SELECT count(*) FROM pg_procmem_guard_actions").fetchone()[0]
                          for label, mon in mons.items()}
        res["logs"] = {label: cl.log_issues() for label, cl in clusters.items()}
    finally:
        close_all(mons.values())
        for cl in clusters.values():
            cl.stop()
    return res


# --- part 3: time to act --------------------------------------------------------------

def cg_write(cg, name, value):
    with open(os.path.join(cg, name), "w") as f:
        f.write(value)


def cg_limit(cg, limit):
    """As test/py/cluster.py's cgroup_memory_limit: swap included."""
    if os.path.exists(os.path.join(cg, "memory.max")):
        cg_write(cg, "memory.max", str(limit) if limit else "max")
        cg_write(cg, "memory.swap.max", "0" if limit else "max")
    elif limit:
        cg_write(cg, "memory.limit_in_bytes", str(limit))
        if os.path.exists(os.path.join(cg, "memory.memsw.limit_in_bytes")):
            cg_write(cg, "memory.memsw.limit_in_bytes", str(limit))
    else:
        if os.path.exists(os.path.join(cg, "memory.memsw.limit_in_bytes")):
            cg_write(cg, "memory.memsw.limit_in_bytes", "-1")
        cg_write(cg, "memory.limit_in_bytes", "-1")


def oom_kills(cg):
    for name in ("memory.events", "memory.oom_control"):
        p = os.path.join(cg, name)
        if os.path.exists(p):
            with open(p) as f:
                for line in f:
                    k, _, v = line.partition(" ")
                    if k == "oom_kill":
                        return int(v)
    return None


class CgroupSampler(threading.Thread):
    """The cgroup's unreclaimable use every `every` s: [(time, bytes)]."""

    def __init__(self, cg, every):
        super().__init__(daemon=True)
        self.cg, self.every = cg, every
        self.v2 = os.path.exists(os.path.join(cg, "memory.current"))
        self.usage = os.path.join(cg, "memory.current" if self.v2 else "memory.usage_in_bytes")
        self.samples, self.stop_flag = [], False

    def read(self):
        with open(self.usage) as f:
            usage = int(f.read())
        st = {}
        with open(os.path.join(self.cg, "memory.stat")) as f:
            for line in f:
                k, v = line.split()
                st[k] = int(v)
        if self.v2:
            return max(usage - (st["file"] - st["shmem"]) - st.get("slab_reclaimable", 0), 0)
        return max(usage - (st["total_cache"] - st["total_shmem"]), 0)

    def run(self):
        while not self.stop_flag:
            t = time.time()
            self.samples.append((t, self.read()))
            time.sleep(max(self.every - (time.time() - t), 0.0005))

    def since(self, t0):
        return [s for s in self.samples if s[0] >= t0]


def actions_after(mon, number):
    return [dict(zip(("number", "acted_at", "pid", "action", "reason", "held", "used", "limit_bytes", "given_back",
                      "application_name"), r)) for r in mon.execute(
        "SELECT action_number, extract(epoch FROM acted_at)::float8, pid, action, reason, held, used, limit_bytes, "
        "given_back, application_name FROM pg_procmem_guard_actions WHERE action_number > %s ORDER BY action_number",
        (number,)).fetchall()]


def last_number(mon):
    return mon.execute("SELECT coalesce(max(action_number), 0) FROM pg_procmem_guard_actions").fetchone()[0]


def settle(sampler, base, timeout=15):
    """Until the cgroup's use is back near where it was before a run."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if sampler.samples and sampler.samples[-1][1] <= base + 64 * MB:
            return
        time.sleep(0.1)


def run_sort(cl, mon, sampler, name, sql):
    """One hog: its client's error time and SQLSTATE; the actions."""
    before = last_number(mon)
    c = cl.connect("gbench-" + name)
    c.execute("SET work_mem = '8GB'")
    t0 = time.time()
    err = {}
    try:
        c.execute(sql)
        err["sqlstate"] = None
    except psycopg.Error as e:
        err["sqlstate"] = e.sqlstate
    err["at"] = time.time()
    time.sleep(2.5)                     # the guard measures what it gave back for 2 s
    acts = actions_after(mon, before)
    c.close()
    return {"start": t0, "errors": [err], "actions": acts}


def run_sessions(cl, mon, sampler, name):
    """Sessions filling 100 MB of temp_buffers each, then idle, until the
    guard ends one; each idle session's socket watched for its end."""
    before = last_number(mon)
    t0 = time.time()
    conns, ends, canceled = [], {}, []

    def watch(i, fd):
        # the FATAL message, or the socket closing, makes it readable
        try:
            if select.select([fd], [], [], 30)[0]:
                ends[i] = time.time()
        except (OSError, ValueError):
            pass
    for i in range(20):
        c = cl.connect("gbench-" + name)
        try:
            c.execute("SET temp_buffers = '100MB'")
            c.execute(TEMP)
        except psycopg.Error as e:
            # the guard canceled it while it filled (what it filled stays held)
            canceled.append({"at": time.time(), "session": i, "sqlstate": e.sqlstate})
        conns.append(c)
        threading.Thread(target=watch, args=(i, c.fileno()), daemon=True).start()
        t_next = time.time() + 0.7
        while time.time() < t_next:
            time.sleep(0.05)
        if any(a["action"] == "terminate" for a in actions_after(mon, before)):
            break
    time.sleep(2.5)
    acts = actions_after(mon, before)
    errors = sorted(canceled + [{"at": t, "session": i, "ended": True} for i, t in ends.items()],
                    key=lambda e: e["at"])
    close_all(conns)
    return {"start": t0, "errors": errors, "sessions": len(conns), "actions": acts}


def analyse(run, samples, limit, threshold_pct):
    """Crossing, action, error, given back, growth rate and peak, from one run's samples."""
    level = limit * threshold_pct / 100
    s = [x for x in samples if x[0] >= run["start"]]
    cross = next((x for x in s if x[1] >= level), None)
    r = {"crossed": cross is not None, "samples": len(s),
         "sample_gap_ms": statistics.median(b[0] - a[0] for a, b in zip(s, s[1:])) * 1000 if len(s) > 1 else None}
    if cross is None:
        return r
    tc = cross[0]
    # the growth rate: the fastest over 100 ms in the second before the crossing
    before = [x for x in s if tc - 1 <= x[0] <= tc]
    rate = 0
    for j, (t, v) in enumerate(before):
        ref = next((x for x in reversed(before[:j + 1]) if x[0] <= t - 0.1), None)
        if ref is not None:
            rate = max(rate, (v - ref[1]) / MB / (t - ref[0]))
    r["rate_mb_s"] = rate
    acts = run["actions"]
    r["actions"] = [(a["action"], a["application_name"]) for a in acts]
    if not acts:
        return r
    first = acts[0]
    r["to_action_ms"] = (first["acted_at"] - tc) * 1000
    r["first_action"] = first["action"]
    errs = [e["at"] for e in run["errors"] if e["at"] >= first["acted_at"] - 0.001]
    # the action that gave memory back: the first whose victim gave back half of what it held
    back_act = next((a for a in acts if a["given_back"] is not None and a["given_back"] * 2 >= a["held"]), None)
    if errs:
        r["to_error_ms"] = (min(errs) - tc) * 1000
    if back_act is not None:
        r["gave_back_action"] = back_act["action"]
        r["to_gave_back_action_ms"] = (back_act["acted_at"] - tc) * 1000
        r["held_mb"] = back_act["held"] / MB
        r["given_back_mb"] = back_act["given_back"] / MB
        peak = 0
        for t, v in s:
            if t < tc:
                continue
            peak = max(peak, v)
            if t >= back_act["acted_at"] and v <= peak - back_act["held"] / 2:
                r["to_given_back_ms"] = (t - tc) * 1000
                break
        victim_errs = [e["at"] for e in run["errors"] if e["at"] >= back_act["acted_at"] - 0.001]
        if victim_errs:
            r["action_to_error_ms"] = (min(victim_errs) - back_act["acted_at"]) * 1000
    # the peak: where the victim stopped growing (up to 2 s after the action that gave memory back)
    end = (back_act or first)["acted_at"] + 2
    upto = [x for x in s if tc <= x[0] <= end]
    peak = max(upto, key=lambda x: x[1])
    r["peak_mb"] = peak[1] / MB
    r["overshoot_mb"] = (peak[1] - level) / MB
    r["to_peak_ms"] = (peak[0] - tc) * 1000
    r["action_to_peak_ms"] = (peak[0] - first["acted_at"]) * 1000
    r["guard_used_mb"] = first["used"] / MB
    r["limit_mb"] = first["limit_bytes"] / MB
    return r


def part_act(port, cg, runs, interval_ms, worker_seconds):
    cl = Cluster(port, {"shared_buffers": "256MB", "max_connections": "150", "pg_procmem.guard": "on",
                        "pg_procmem.guard_terminate": "on", "pg_procmem.guard_interval": f"{interval_ms}ms"},
                 cgroup=cg)
    mon = cl.connect("gbench-monitor")
    res = {"runs": {}, "interval_ms": interval_ms}
    sampler = CgroupSampler(cg, 0.005)
    try:
        mon.execute("CREATE EXTENSION pg_procmem")
        guard_pid(mon)
        kills = oom_kills(cg)
        start_pm = mon.execute("SELECT pg_postmaster_start_time()").fetchone()[0]
        cg_limit(cg, LIMIT)
        sampler.start()
        time.sleep(0.5)
        base = sampler.samples[-1][1]
        res["base_mb"] = base / MB
        # the guard's worker at rest, reading the cgroup levels' figures
        gpid = guard_pid(mon)
        c0, w0 = on_cpu_ns(gpid), time.time()
        time.sleep(worker_seconds)
        cpu, wall = (on_cpu_ns(gpid) - c0) / 1e9, time.time() - w0
        res["worker_in_cgroup"] = {"cpu_ms": cpu * 1000, "wall_s": wall, "pct": cpu / wall * 100,
                                   "ticks": wall * 1000 / interval_ms, "us_per_tick": cpu * 1e6 / (wall * 1000 /
                                                                                                interval_ms)}
        print(res["worker_in_cgroup"], flush=True)
        scenarios = (("slow", lambda: run_sort(cl, mon, sampler, "slow", SORT.format(rows_per_s=300000))),
                     ("fast", lambda: run_sort(cl, mon, sampler, "fast", FAST)),
                     ("sessions", lambda: run_sessions(cl, mon, sampler, "sessions")))
        for i in range(runs):
            for name, fn in scenarios:
                print(f"-- part 3: {name}, run {i + 1}", flush=True)
                settle(sampler, base)
                run = fn()
                settle(sampler, base)
                a = analyse(run, sampler.since(run["start"]), LIMIT, 90)
                a["run"] = run
                res["runs"].setdefault(name, []).append(a)
                print({k: v for k, v in a.items() if k != "run"}, flush=True)
        res["timelines"] = {name: [(t, v) for t, v in sampler.since(rs[0]["run"]["start"])
                                   if t <= rs[0]["run"]["start"] + 12] for name, rs in res["runs"].items()}
        res["oom_kills"] = None if kills is None else oom_kills(cg) - kills
        res["same_postmaster"] = mon.execute("SELECT pg_postmaster_start_time()").fetchone()[0] == start_pm
        res["sample_gap_ms"] = statistics.median(b[0] - a[0] for a, b in zip(sampler.samples, sampler.samples[1:])) \
            * 1000
        res["logs"] = cl.log_issues()
    finally:
        sampler.stop_flag = True
        cg_limit(cg, None)
        mon.close()
        cl.stop()
    return res


# --- part 4: over the threshold with nothing worth acting on ---------------------------

def sleep_until_canceled(conn, seconds):
    try:
        conn.execute("SELECT pg_sleep(%s)" % seconds)
    except psycopg.Error:
        pass            # canceled at the end of the part


def part_over(port, cg, seconds, connections):
    """`connections` sessions each running pg_sleep (a few MB each: no
    statement worth a cancel), the cgroup's limit set so that its
    unreclaimable use is at 93% (past the 90% threshold, under the 95%
    critical level): the guard's worker's on-CPU time per second. Every
    statement is a running one, so every look reads each backend (statm, and
    its DSM at the full reads)."""
    cl = Cluster(port, {"pg_procmem.guard": "on", "max_connections": str(connections + 20)}, cgroup=cg)
    mon = cl.connect("gbench-monitor")
    conns, threads, res = [], [], {"connections": connections}
    sampler = CgroupSampler(cg, 0.1)
    try:
        mon.execute("CREATE EXTENSION pg_procmem")
        gpid = guard_pid(mon)
        for _ in range(connections):
            c = cl.connect("gbench-sleeper")
            c.execute("SELECT 1")
            conns.append(c)
        threads += [threading.Thread(target=lambda c=c: sleep_until_canceled(c, seconds + 30), daemon=True)
                    for c in conns]
        for t in threads:
            t.start()
        time.sleep(3)
        used = sampler.read()
        limit = int(used / 0.93)
        cg_limit(cg, limit)
        sampler.start()
        time.sleep(3)
        print(f"-- part 4: {connections} running statements at 93% of {limit / MB:.0f} MB, {seconds} s", flush=True)
        c0, w0, j0 = on_cpu_ns(gpid), time.time(), machine_busy()
        time.sleep(seconds)
        cpu, wall = (on_cpu_ns(gpid) - c0) / 1e9, time.time() - w0
        pcts = [v * 100 / limit for _, v in sampler.samples]
        res.update({"cpu_ms": cpu * 1000, "wall_s": wall, "pct": cpu / wall * 100, "limit_mb": limit / MB,
                    "use_min_pct": min(pcts), "use_max_pct": max(pcts), "busy_pct": busy_pct(j0, machine_busy()),
                    "actions": mon.execute("SELECT count(*) FROM pg_procmem_guard_actions").fetchone()[0]})
        print(res, flush=True)
        res["logs"] = cl.log_issues()
    finally:
        sampler.stop_flag = True
        cg_limit(cg, None)
        # the sleeps ended first: their threads must not find their connections closed under them
        mon.execute("SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = 'gbench-sleeper'")
        for t in threads:
            t.join(10)
        close_all(conns)
        mon.close()
        cl.stop()
    return res


# --- the report ------------------------------------------------------------------------

def med_max(xs):
    xs = [x for x in xs if x is not None]
    return (statistics.median(xs), max(xs)) if xs else (None, None)


def f(v, fmt="{:.0f}"):
    return "-" if v is None else fmt.format(v)


def headroom(act):
    """Per scenario: rate, time to cancel, the headroom rate x (interval + time to cancel), the threshold it needs."""
    out = {}
    for name, rs in act["runs"].items():
        rate = med_max(r.get("rate_mb_s") for r in rs)
        stop = med_max(max(r["action_to_peak_ms"], 0) if "action_to_peak_ms" in r else None for r in rs)
        over = med_max(r.get("overshoot_mb") for r in rs)
        if None in (rate[1], stop[1]):
            continue
        # past the crossing the guard sees it at its next look (up to one
        # interval), then the victim grows until its cancel lands
        # a cancel seen to land within one sample counts as one sample
        stop = (stop[0], max(stop[1], act["sample_gap_ms"]))
        t = act["interval_ms"] + stop[1]
        room = rate[1] * t / 1000
        need = (LIMIT / MB - room) / (LIMIT / MB) * 100
        out[name] = {"rate": rate, "stop": stop, "cancel_ms": t, "headroom_mb": room,
                     "threshold_pct": int(need), "overshoot": over}
    return out


def render(d):
    w, lim, act = d["worker"], d["limit"], d.get("act")
    md = [f"# What the memory guard costs, and how fast it acts: {d['name']}", "",
          f"Reproduce: `PG_MAJOR=17 bench/run guard` (as root; bench/run builds and installs pg_procmem from this "
          f"checkout, makes the memory cgroup, then runs `bench/guard.py`). {d['version']}, {d['cores']} cores, "
          f"Linux {d['kernel']}, cgroup {d['cgroup_version']}; 1-minute load average {d['load_start']:.2f} at the "
          f"start, {d['load_end']:.2f} at the end (this run included); the run took {d['minutes']:.1f} min. Costs "
          "are CPU time (the processes' own clocks, /proc/PID/schedstat), not wall time: the machine is shared.", "",
          "## 1. The guard's worker", "",
          "Two clusters side by side, `pg_procmem.guard = on`, one at `pg_procmem.guard_interval = 50ms` (the "
          "default), one at 10 ms, over the same window; the worker's on-CPU time per second of wall time. Far "
          "below the threshold, as here, each look is one reading of the pressure watch (the cgroup's or the "
          "machine's figures) and nothing else: the backends are read only within 10 points of the threshold "
          "(once a second) and past it (every look).", "",
          "| server | guard_interval | looks | on-CPU | window | CPU % of a core | µs per look | machine busy |",
          "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for phase, v in w["windows"].items():
        for label in ("50ms", "10ms"):
            r = v[label]
            md.append(f"| {phase} | {label[:-2]} ms | {r['ticks']:.0f} | {r['cpu_ms']:.1f} ms | {r['wall_s']:.1f} s | "
                      f"{r['pct']:.3f}% | {r['us_per_tick']:.1f} | {r['busy_pct']:.0f}% |")
    if act and "worker_in_cgroup" in act:
        r = act["worker_in_cgroup"]
        md.append(f"| idle, in a memory cgroup limited to 1.5 GB (part 3's cluster) | 50 ms | {r['ticks']:.0f} | "
                  f"{r['cpu_ms']:.1f} ms | {r['wall_s']:.1f} s | {r['pct']:.3f}% | {r['us_per_tick']:.1f} | |")
    over = d.get("over")
    if over:
        md += ["", f"Over the threshold with nothing worth acting on (part 4: {over['connections']} sessions each "
               f"running `pg_sleep`, a few MB apiece, in a cgroup whose limit puts its unreclaimable use at "
               f"{over['use_min_pct']:.0f}-{over['use_max_pct']:.0f}% of {over['limit_mb']:.0f} MB, past the 90% "
               f"threshold): the worker took {over['cpu_ms']:.0f} ms of CPU in {over['wall_s']:.1f} s, "
               f"**{over['pct']:.2f}% of a core** ({over['actions']} actions; machine {over['busy_pct']:.0f}% busy). "
               "With nothing to act on it looks at the backends once a second, or as soon as the memory grows by "
               "16 MB; each look reads every running backend's statm, and once a second every backend's DSM "
               "segments."]
    off = w["off"]
    md += ["", f"With `pg_procmem.guard = off` (a third cluster, the same window) no guard process runs: "
           f"{off['in_pg_stat_activity']} rows of backend_type `{GUARD_TYPE}` in pg_stat_activity, "
           f"{len(off['guard_children'])} of the postmaster's {len(off['children'])} children named so "
           f"({', '.join(sorted(set(re.sub(r'^postgres: ', '', t) for t in off['children'])))}). The 50 ms "
           f"cluster's guard turned off with a reload: its worker "
           f"{'still ran' if w['turned_off']['worker_alive'] else 'had exited'} 2 s later.", "",
           "## 2. The per-backend limit", "",
           "Two clusters side by side (P and Q, pg_procmem preloaded, shared_buffers 128 MB), "
           "`pg_procmem.max_backend_memory = 1GB` (never reached) in one and unset (0) in the other, swapped "
           "round by round so that neither cluster's own speed counts.", "",
           "### (a) Per query: pgbench -S", "",
           "`pgbench -n -S -M prepared -c 1 -j 1 -T 16` against both at once (scale 10); the backend's on-CPU time "
           "from 3 s to 14 s of the run, and the transactions pgbench's log (`-l`) says ended in that window.", "",
           "| round | cluster with the limit | limit: transactions | µs per transaction | unset: transactions | "
           "µs per transaction | difference |", "|---:|---|---:|---:|---:|---:|---:|"]
    diffs = []
    for i, rnd in enumerate(lim["pgbench"]):
        on = next(v for v in rnd.values() if v["limit"])
        offv = next(v for v in rnd.values() if not v["limit"])
        lab = next(k for k, v in rnd.items() if v["limit"])
        diffs.append(on["us_per_xact"] - offv["us_per_xact"])
        md.append(f"| {i + 1} | {lab} | {on['xacts']:,} | {on['us_per_xact']:.2f} | {offv['xacts']:,} | "
                  f"{offv['us_per_xact']:.2f} | {diffs[-1]:+.2f} µs |")
    on_all = statistics.median(next(v for v in r.values() if v["limit"])["us_per_xact"] for r in lim["pgbench"])
    off_all = statistics.median(next(v for v in r.values() if not v["limit"])["us_per_xact"] for r in lim["pgbench"])
    md += ["", f"Medians: {on_all:.2f} µs per transaction with the limit, {off_all:.2f} without; the rounds' "
           f"differences: median {statistics.median(diffs):+.2f} µs ({statistics.median(diffs) / off_all * 100:+.1f}%),"
           f" from {min(diffs):+.2f} to {max(diffs):+.2f}. With the limit set, each statement sets a one-shot "
           "timer at its executor's start, which sets itself again while the statement runs and stops when the "
           "backend is idle (a setitimer call a check; /proc/PID/statm is opened once per backend); a statement "
           "shorter than the interval is never checked.", "",
           "### (b) Per second of a running query", "",
           f"`{BUSY.format(n=lim['busy_n'])}` (a fixed amount of work, about 5 s of CPU; no parallel workers), "
           "in one backend of P, with the limit and without in turn (ABBA order, then again), at each "
           "`pg_procmem.backend_check_interval`; its backend's on-CPU time. The checks are the statement's wall "
           "time over the interval (the timer is wall-clock); each is a SIGALRM, one pread of /proc/PID/statm, "
           "and the timer set again.", "",
           "| backend_check_interval | limit | runs | CPU s (median) | spread | wall s | checks |",
           "|---:|---|---:|---:|---:|---:|---:|"]
    busy = {}
    for x in lim["busy"]:
        busy.setdefault((x["interval"], x["limit"]), []).append(x)
    for (interval, limited), xs in busy.items():
        cpu = [x["cpu_s"] for x in xs]
        wall = statistics.median(x["wall_s"] for x in xs)
        md.append(f"| {interval[:-2]} ms | {'1GB' if limited else 'unset'} | {len(xs)} | {statistics.median(cpu):.3f} | "
                  f"{min(cpu):.3f} - {max(cpu):.3f} | {wall:.2f} | "
                  f"{wall * 1000 / int(interval[:-2]) if limited else 0:.0f} |")
    md.append("")
    busy_diff = {}
    for interval in ("50ms", "10ms"):
        on = [x["cpu_s"] for x in busy.get((interval, True), [])]
        offc = [x["cpu_s"] for x in busy.get((interval, False), [])]
        if on and offc:
            dd = statistics.median(on) - statistics.median(offc)
            spread = max(max(on) - min(on), max(offc) - min(offc))
            busy_diff[interval] = dd
            md.append(f"- {interval[:-2]} ms: medians' difference {dd * 1000:+.0f} ms ({dd / statistics.median(offc) * 100:+.2f}%), "
                      f"against a spread of {spread * 1000:.0f} ms between runs of the same setting")
    md += ["", "The difference is within the noise of a CPU-bound statement on this shared machine. To see the "
           "check's own cost, the same measure in a statement that only sleeps (`SELECT pg_sleep("
           f"{lim['sleep_s']})`), where each check wakes the backend: its timeslices count the checks, and its "
           "CPU is theirs (the wake-up included, which a running statement does not pay), P with the limit and Q "
           "without, at once:", "",
           "| backend_check_interval | limit: CPU ms | timeslices | unset: CPU ms | timeslices | checks counted | "
           "expected | CPU per check | per second of a statement |", "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for x in lim["sleep"]:
        on, offv = x["on"], x["off"]
        checks = on["slices"] - offv["slices"]
        per = (on["cpu_s"] - offv["cpu_s"]) * 1e6 / max(checks, 1)
        every = int(x["interval"][:-2])
        md.append(f"| {every} ms | {on['cpu_s'] * 1000:.1f} | {on['slices']} | {offv['cpu_s'] * 1000:.1f} | "
                  f"{offv['slices']} | {checks} | {on['wall_s'] * 1000 / every:.0f} | {per:.1f} µs | "
                  f"{per * 1000 / every / 1e6 * 100:.3f}% of a core |")
    md.append("")
    if act:
        hr = headroom(act)
        md += ["## 3. Time to act", "",
               f"One cluster (shared_buffers 256 MB, `pg_procmem.guard = on`, `guard_terminate = on`, threshold "
               f"90%, guard_interval {act['interval_ms']} ms) in a memory cgroup limited to 1.5 GB (swap "
               f"included); its unreclaimable use sampled every {act['sample_gap_ms']:.1f} ms (median) by a "
               f"thread of this script (usage - (total_cache - total_shmem), what the guard reads); "
               f"{act['base_mb']:.0f} MB at rest. The threshold is {LIMIT * 0.9 / MB:.0f} MB. Each scenario "
               f"{len(next(iter(act['runs'].values())))} times, interleaved. Times are from the first sample at "
               "or over the threshold to: the guard's action (acted_at, the server's clock: the same clock); the "
               "client's error (psycopg's exception; for the idle sessions, their socket turning readable with "
               "the FATAL message); the memory given back (the first sample where the use has fallen by half of "
               "what the victim held, from its peak since the crossing). The growth rate is the cgroup's, the "
               "fastest over 100 ms in the second before the crossing.", "",
               "- slow: test/guard/guard.py's SORT, a sort throttled to 300,000 rows (~300 MB) a second",
               "- fast: its FAST, the same sort unthrottled (work_mem 8GB)",
               "- sessions: sessions that each fill 100 MB of temp_buffers and stay idle, one every 0.7 s, until "
               "the guard ends one (nothing to cancel: it terminates; a session still filling is canceled "
               "first, which frees nothing of its temp_buffers)", "",
               "| scenario | growth MB/s | to the first action, ms | to the action that freed, ms | to the "
               "client's error, ms | to memory given back, ms | action to the peak, ms | held by the victim MB | "
               "peak MB | past the threshold MB | actions |",
               "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
        for name, rs in act["runs"].items():
            def mm(key, fmt="{:.0f}"):
                m, x = med_max(r.get(key) for r in rs)
                return "-" if m is None else f"{fmt.format(m)} / {fmt.format(x)}"
            acts = sorted(set(" + ".join(a for a, _ in r.get("actions", [])) for r in rs))
            md.append(f"| {name} | {mm('rate_mb_s')} | {mm('to_action_ms')} | {mm('to_gave_back_action_ms')} | "
                      f"{mm('to_error_ms')} | {mm('to_given_back_ms')} | {mm('action_to_peak_ms')} | {mm('held_mb')} | "
                      f"{mm('peak_mb')} | {mm('overshoot_mb', '{:.1f}')} | {'; '.join(acts)} |")
        md += ["", "Medians / maxima over the runs. *The action that freed* is the first whose victim gave back "
               "half of what it held (for the sessions, the terminate: the cancel of a session still filling, "
               "before it, frees nothing of its temp_buffers). *The client's error* is the first after the first "
               "action: psycopg raises it once the backend says it is ready again, after its abort has freed the "
               "statement's memory, hence after the memory given back for the sorts. *The peak* is the highest "
               "use from the crossing to 2 s after the action that freed: where the victim stopped growing.", ""]
        crossed = {name: sum(r["crossed"] for r in rs) for name, rs in act["runs"].items()}
        crossed_s = ", ".join(f"{k} {v} of {len(act['runs'][k])}" for k, v in crossed.items())
        missed = [(name, r["run"]["actions"][0]["used"] / MB) for name, rs in act["runs"].items() for r in rs
                  if not r["crossed"] and r["run"]["actions"]]
        if missed:
            crossed_s += " (" + "; ".join(
                f"{name}: the guard read {used:.1f} MB, over the threshold, and acted before this script's next "
                f"sample saw it; the use stayed under the threshold in every sample" for name, used in missed) + \
                ": such a run is left out of the table)"
        md += [f"Runs that crossed the threshold in this script's samples: {crossed_s}. "
               f"The cgroup's OOM kill counter moved by {act['oom_kills']}; the postmaster was "
               f"{'the same throughout' if act['same_postmaster'] else 'RESTARTED'}.", "",
               "## 4. The headroom the threshold must leave", "",
               "Past the threshold the guard sees the crossing at its next look (up to one guard_interval later), "
               "then the victim keeps growing until its cancel lands. So the threshold must leave, below the "
               "limit:", "", "    headroom = growth rate x (guard_interval + time to cancel)", "",
               "with *time to cancel* from the guard's action to the peak (the victim stopped growing; at least "
               "one sample's gap, this script's resolution). With this run's maxima:", "",
               "| scenario | growth rate (max) | guard_interval + time to cancel (max) | headroom | highest threshold "
               "for 1.5 GB | measured past the threshold (max) |", "|---|---:|---:|---:|---:|---:|"]
        for name, h in hr.items():
            md.append(f"| {name} | {h['rate'][1]:.0f} MB/s | {act['interval_ms']} + {h['stop'][1]:.0f} = "
                      f"{h['cancel_ms']:.0f} ms | {h['headroom_mb']:.0f} MB | {h['threshold_pct']}% "
                      f"({h['threshold_pct'] * LIMIT / 100 / MB:.0f} MB) | {f(h['overshoot'][1])} MB |")
        md += ["", "For any growth rate R (MB/s) and a cgroup of L MB: threshold <= 1 - R x (interval + time to "
               "cancel) / L. At the default 90% a 1.5 GB cgroup leaves 154 MB: enough for a hog growing at up to "
               "154 MB / (interval + time to cancel) a second; a hog allocating faster than that (an unthrottled "
               "sort on a fast machine) needs a lower threshold or a shorter interval. The rest of the server "
               "(other backends' growth in the same time) needs its share of the headroom too.", ""]
    md += ["## Server logs", ""]
    issues = [(k, ln) for k, v in w["logs"].items() for ln in v] + [(k, ln) for k, v in lim["logs"].items()
                                                                   for ln in v]
    if act:
        issues += [("act", ln) for ln in act["logs"]]
    md += ["No WARNING, PANIC or process killed by a signal in any cluster's log."] if not issues else \
        [f"- {k}: `{ln[:200]}`" for k, ln in issues[:20]]
    md += ["", f"![the guard's runs]({d['name']}.png)", "", f"![costs]({d['name']}-cost.png)", "", "```json",
           # the timelines (thousands of samples) stay in the run's JSON file only
           json.dumps({k: ({kk: vv for kk, vv in v.items() if kk != "timelines"} if k == "act" else v)
                       for k, v in d.items()}, indent=1, default=str), "```", ""]
    with open(result_path(f"{d['name']}.md"), "w") as fh:
        fh.write("\n".join(md))
    charts(d)
    print("\n".join(md[:-4]))


def charts(d):
    plt = pyplot()
    act = d.get("act")
    if act:
        names = list(act["runs"])
        fig, axes = plt.subplots(1, len(names), figsize=(5 * len(names), 3.8), squeeze=False)
        for ax, name in zip(axes[0], names):
            r0 = act["runs"][name][0]
            tl = act["timelines"][name]
            level = LIMIT * 0.9 / MB
            if r0.get("crossed") and tl:
                tcross = next((t for t, v in tl if v >= LIMIT * 0.9), tl[0][0] if tl else 0)
                ax.plot([(t - tcross) * 1000 for t, _ in tl], [v / MB for _, v in tl], "-", color="#1f77b4",
                        label="cgroup's unreclaimable use")
                for key, color, lab in (("to_gave_back_action_ms", "#d62728", "guard's action"),
                                        ("to_error_ms", "#ff7f0e", "client's error"),
                                        ("to_given_back_ms", "#2ca02c", "half given back")):
                    if r0.get(key) is not None:
                        ax.axvline(r0[key], color=color, linestyle="--", linewidth=1, label=lab)
            ax.axhline(level, color="k", linestyle=":", linewidth=1, label="threshold (90%)")
            ax.axhline(LIMIT / MB, color="k", linewidth=1, label="limit (1.5 GB)")
            ax.set_xlim(-1000, 1000)
            ax.set_xlabel("ms from the crossing (first run)")
            ax.set_ylabel("MB")
            ax.set_title(name)
            ax.legend(fontsize=7, loc="lower left")
        fig.tight_layout()
        fig.savefig(result_path(f"{d['name']}.png"), dpi=100)
    w, lim = d["worker"], d["limit"]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 3.8))
    phases = list(w["windows"])
    for j, (label, color) in enumerate((("50ms", "#1f77b4"), ("10ms", "#d62728"))):
        ax1.bar([i + (j - 0.5) * 0.4 for i in range(len(phases))], [w["windows"][p][label]["pct"] for p in phases],
                0.4, color=color, label=f"guard_interval {label[:-2]} ms")
    ax1.set_xticks(range(len(phases)), phases)
    ax1.set_ylabel("guard worker's CPU, % of one core")
    ax1.set_title("the guard's worker")
    ax1.legend(fontsize=8)
    on = [next(v for v in r.values() if v["limit"])["us_per_xact"] for r in lim["pgbench"]]
    off = [next(v for v in r.values() if not v["limit"])["us_per_xact"] for r in lim["pgbench"]]
    x = range(len(on))
    ax2.plot(list(x), on, "o-", color="#d62728", label="max_backend_memory 1GB")
    ax2.plot(list(x), off, "s-", color="#1f77b4", label="unset")
    ax2.set_xticks(list(x), [f"round {i + 1}" for i in x])
    ax2.set_ylabel("backend µs per transaction (pgbench -S)")
    ax2.set_ylim(0, max(on + off) * 1.2)
    ax2.set_title("the per-backend limit, per query")
    ax2.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(result_path(f"{d['name']}-cost.png"), dpi=100)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--name", default="guard")
    ap.add_argument("--port", type=int, default=5650)
    ap.add_argument("--seconds", type=int, default=15, help="part 1's windows")
    ap.add_argument("--connections", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=4, help="part 2's rounds (even: the limit swapped)")
    ap.add_argument("--runs", type=int, default=5, help="part 3's runs per scenario")
    ap.add_argument("--parts", default="1,2,3,4")
    ap.add_argument("--render", metavar="FILE.json", help="only write the report from a run's figures")
    a = ap.parse_args()
    if a.render:
        with open(a.render) as fh:
            return render(json.load(fh))
    t_start = time.time()
    version = subprocess.run([f"{PG_BIN}/postgres", "--version"], capture_output=True, text=True).stdout.strip()
    cg = os.environ.get("GUARD_CGROUP", "")
    d = {"name": a.name, "version": version, "cores": os.cpu_count(), "kernel": os.uname().release,
         "cgroup_version": "v2" if cg and os.path.exists(os.path.join(cg, "memory.current")) else "v1",
         "load_start": os.getloadavg()[0]}
    parts = a.parts.split(",")
    os.makedirs("/tmp/w", exist_ok=True)
    workdir = tempfile.mkdtemp(prefix="bench-guard-pgbench.", dir="/tmp/w")
    try:
        if "1" in parts:
            d["worker"] = part_worker(a.port, a.seconds, a.connections)
        if "2" in parts:
            d["limit"] = part_limit(a.port + 3, a.rounds, workdir)
        if "3" in parts:
            if cg:
                d["act"] = part_act(a.port + 5, cg, a.runs, 50, a.seconds)
            else:
                print("-- part 3 skipped: no memory cgroup ($GUARD_CGROUP)", flush=True)
        if "4" in parts:
            if cg:
                d["over"] = part_over(a.port + 5, cg, 20, a.connections)
            else:
                print("-- part 4 skipped: no memory cgroup ($GUARD_CGROUP)", flush=True)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    d["load_end"] = os.getloadavg()[0]
    d["minutes"] = (time.time() - t_start) / 60
    with open(f"/tmp/w/bench-{a.name}.json", "w") as fh:
        json.dump(d, fh, default=str)
    if "worker" in d and "limit" in d:
        render(d)
    else:
        print(json.dumps(d, default=str)[:5000])


if __name__ == "__main__":
    main()
