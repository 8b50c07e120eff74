#!/usr/bin/env python3
"""How fast and how accurate pg_procmem's overhead figure is.

For each configuration (shared_buffers touched, huge_pages, connections) it
starts a throwaway cluster inside a memory cgroup of its own, opens N
connections that each touch the whole buffer pool, and measures side by side:

- speed: SELECT * FROM pg_procmem_backends, against plain C readers of
  /proc/PID/status (the lower bound) and /proc/PID/smaps_rollup (what PSS
  tools pay) for the same pids;
- accuracy: the average overhead per connection, against what the cgroup
  gains per added connection and frees per closed one, with ps RSS, PSS and
  Pss_Anon + VmPTE beside it.

Run through bench/run, as root. Writes bench/results/<name>.md and PNGs.
"""
import argparse
import json
import os
import pwd
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import psycopg

PG_BIN = os.environ.get("PG_BIN", "/usr/lib/postgresql/15/bin")
HERE = os.path.dirname(os.path.abspath(__file__))
READER = os.path.join(HERE, ".build", "proc_reader")

def cgroup_layout():
    """(root dir, usage file, page-cache key, shmem key) for cgroup v2 or v1."""
    try:
        with open("/sys/fs/cgroup/cgroup.controllers") as f:
            if "memory" in f.read().split():
                with open("/sys/fs/cgroup/cgroup.subtree_control", "w") as sc:
                    sc.write("+memory")
                return "/sys/fs/cgroup", "memory.current", "file", "shmem"
    except OSError:
        pass
    return "/sys/fs/cgroup/memory", "memory.usage_in_bytes", "total_cache", "total_shmem"


CGROUP_ROOT, CG_USAGE, CG_CACHE, CG_SHMEM = cgroup_layout()
MB = 1024 * 1024


def run_as_postgres(*args, **kw):
    return subprocess.run(["runuser", "-u", "postgres", "--", *args], check=True,
                          capture_output=True, text=True, **kw)


class Cluster:
    """A cluster in a temp dir, its postmaster in a memory cgroup of its own."""

    def __init__(self, touched_mb, huge_pages, connections, port, extra=None):
        self.port = port
        self.huge_pages = huge_pages
        self.dir = tempfile.mkdtemp(prefix="pg_procmem_bench.")
        pw = pwd.getpwnam("postgres")
        os.chown(self.dir, pw.pw_uid, pw.pw_gid)
        os.chmod(self.dir, 0o755)
        self.data = os.path.join(self.dir, "data")
        run_as_postgres(f"{PG_BIN}/initdb", "-D", self.data, "-U", "postgres",
                        "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C")
        # the table fills ~85% of shared_buffers
        sb_mb = int(touched_mb / 0.85) + 16
        self.settings = {
            "shared_buffers": f"{sb_mb}MB",
            "huge_pages": "on" if huge_pages else "off",
            "max_connections": str(connections + 10),
            "jit": "off", "autovacuum": "off", "listen_addresses": "''",
            "unix_socket_directories": self.dir, "port": str(port),
            "max_wal_size": "4GB", "checkpoint_timeout": "1h",
            # no background writes: file cache must not grow while measuring
            "bgwriter_lru_maxpages": "0",
        }
        self.settings.update(extra or {})
        self.hugepages_set = False
        if huge_pages:
            out = run_as_postgres(f"{PG_BIN}/postgres", "-D", self.data, "-C",
                                  "shared_memory_size_in_huge_pages",
                                  *self._opts()).stdout.strip()
            self._set_hugepages(int(out) + 8)
        self.cgroup = os.path.join(CGROUP_ROOT, f"pg_procmem_bench_{os.getpid()}")
        os.makedirs(self.cgroup, exist_ok=True)
        opts = " ".join(f"-c {k}={v}" for k, v in self.settings.items())
        subprocess.run(["sh", "-c", f"echo $$ > {self.cgroup}/cgroup.procs && exec runuser -u postgres -- "
                        f"{PG_BIN}/pg_ctl -D {self.data} -l {self.dir}/server.log -w -t 600 "
                        f"start -o \"{opts}\""], check=True, capture_output=True)

    def _opts(self):
        return [f"-c{k}={v}" for k, v in self.settings.items()]

    def _set_hugepages(self, n):
        with open("/proc/sys/vm/nr_hugepages", "w") as f:
            f.write(str(n))
        with open("/proc/sys/vm/nr_hugepages") as f:
            got = int(f.read())
        if n and got < n:
            raise SystemExit(f"could reserve only {got} of {n} huge pages")
        self.hugepages_set = n > 0

    def connect(self):
        return psycopg.connect(host=self.dir, port=self.port, user="postgres",
                               dbname="postgres", autocommit=True)

    def usage(self):
        """Bytes charged to the cgroup, less reclaimable file cache (shared
        memory stays in), after letting per-CPU charge batches settle."""
        time.sleep(1.0)
        with open(os.path.join(self.cgroup, CG_USAGE)) as f:
            usage = int(f.read())
        stat = {}
        with open(os.path.join(self.cgroup, "memory.stat")) as f:
            for line in f:
                k, v = line.split()
                stat[k] = int(v)
        # the cache figure counts page cache and shmem (shared_buffers) alike
        return usage - (stat[CG_CACHE] - stat[CG_SHMEM])

    def stop(self):
        subprocess.run(["runuser", "-u", "postgres", "--", f"{PG_BIN}/pg_ctl", "-D", self.data,
                        "-m", "fast", "-w", "stop"], capture_output=True)
        for _ in range(100):
            try:
                os.rmdir(self.cgroup)
                break
            except OSError:
                time.sleep(0.1)
        if self.hugepages_set:
            self._set_hugepages(0)
        shutil.rmtree(self.dir, ignore_errors=True)


def wait_reaped(pids, seconds=120):
    """Until the processes are gone from /proc: pg_procmem stops showing
    them when their memory map is detached, but the kernel frees page tables
    and its own structures only once they are reaped."""
    for _ in range(int(seconds * 10)):
        if not any(os.path.exists(f"/proc/{p}") for p in pids):
            return
        time.sleep(0.1)


def close_all(conns):
    """Closes connections, ignoring those already broken."""
    for c in conns:
        try:
            c.close()
        except Exception:
            pass


def touch_all(conns, workers=2):
    """Each connection scans the whole table (in parallel, `workers` at a time)."""
    queue = list(conns)
    lock = threading.Lock()

    def work():
        while True:
            with lock:
                if not queue:
                    return
                c = queue.pop()
            c.execute("SELECT count(*) FROM touch").fetchone()

    threads = [threading.Thread(target=work) for _ in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def figures(mon, pids):
    """Average per-connection figures for these pids, from pg_procmem_backends_pss."""
    row = mon.execute("""
        SELECT avg(rss), avg(pss), avg(pss_overhead), avg(overhead),
               count(*) FILTER (WHERE overhead_method LIKE 'pagemap%%')
        FROM pg_procmem_backends_pss WHERE pid = ANY(%s)""", (pids,)).fetchone()
    return {"rss": float(row[0]), "pss": float(row[1]), "pss_anon_pte": float(row[2]),
            "overhead": float(row[3]), "pagemap_rows": row[4]}


def scan_query(with_pss):
    """A long scan: every process read again and again. It checks for
    interrupts before each process, so a cancel waits about one process's
    read (a smaps_rollup walk with PSS)."""
    return ("SELECT count(*) FROM generate_series(1, 100000) g, "
            f"LATERAL pg_procmem_processes(g > 0 AND {'true' if with_pss else 'false'}) p")


def cancel_latency(cl, query, reps=5):
    """Median seconds from a cancel request to the error, for a long query."""
    lat = []
    for _ in range(reps):
        c = cl.connect()
        out = {}

        def run():
            try:
                c.execute(query).fetchall()
            except psycopg.errors.QueryCanceled:
                out["at"] = time.perf_counter()

        th = threading.Thread(target=run)
        th.start()
        time.sleep(0.5)
        t0 = time.perf_counter()
        c.cancel()
        th.join()
        if "at" in out:
            lat.append(out["at"] - t0)
        c.close()
    return statistics.median(lat) if lat else None


def median_time(fn, reps):
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def reader_time(name, pids, reps):
    out = subprocess.run([READER, name, str(reps), *map(str, pids)], check=True,
                         capture_output=True, text=True).stdout
    return float(out)


def one_config(touched_mb, huge_pages, n, reps, port):
    """Runs one configuration; returns a dict of measurements."""
    print(f"-- touched {touched_mb} MB, huge_pages {'on' if huge_pages else 'off'}, "
          f"{n} connections", flush=True)
    cl = Cluster(touched_mb, huge_pages, n, port)
    res = {"touched_mb": touched_mb, "huge_pages": huge_pages, "connections": n}
    conns = []
    try:
        mon = cl.connect()
        pages = touched_mb * 128
        mon.execute("CREATE EXTENSION pg_procmem")
        mon.execute("CREATE EXTENSION pg_prewarm")
        mon.execute("CREATE UNLOGGED TABLE touch (id int, pad char(1000)) WITH (fillfactor = 10)")
        mon.execute("INSERT INTO touch SELECT g, 'x' FROM generate_series(1, %s) g", (pages,))
        # hint bits set now, so that the scans below dirty nothing
        mon.execute("VACUUM (FREEZE) touch")
        mon.execute("SELECT pg_prewarm('touch')")
        mon.execute("CHECKPOINT")
        u0 = cl.usage()

        for _ in range(n):
            c = cl.connect()
            c.execute("SET enable_indexscan = off; SET enable_bitmapscan = off; "
                      "SET max_parallel_workers_per_gather = 0")
            conns.append(c)
        pids = [c.info.backend_pid for c in conns]
        u1 = cl.usage()
        res["idle"] = figures(mon, pids)
        res["idle"]["cgroup_added"] = (u1 - u0) / n

        touch_all(conns)
        u2 = cl.usage()
        res["touched"] = figures(mon, pids)
        res["touched"]["cgroup_added"] = (u2 - u0) / n

        # speed, in the touched state, over every server process
        allpids = [r[0] for r in mon.execute("SELECT pid FROM pg_procmem_processes()").fetchall()]
        res["processes"] = len(allpids)
        # interleaved, so that drift in the machine's speed hits all alike
        view, status, smaps = [], [], []
        for _ in range(reps):
            view.append(median_time(
                lambda: mon.execute("SELECT * FROM pg_procmem_backends").fetchall(), 1))
            status.append(reader_time("status", allpids, 1))
            smaps.append(reader_time("smaps_rollup", allpids, 1))
        res["view_s"] = statistics.median(view)
        res["status_s"] = statistics.median(status)
        res["smaps_s"] = statistics.median(smaps)
        res["pss_view_s"] = median_time(
            lambda: mon.execute("SELECT * FROM pg_procmem_backends_pss").fetchall(), max(1, reps // 2))
        res["cancel_default_s"] = cancel_latency(cl, scan_query(False))
        res["cancel_pss_s"] = cancel_latency(cl, scan_query(True))

        # what closing frees, from just before it: the speed runs above can
        # move the cgroup's usage by themselves (drift, reported)
        u2b = cl.usage()
        for c in conns:
            c.close()
        conns = []
        wait_reaped(pids)
        u3 = cl.usage()
        res["touched"]["cgroup_freed"] = (u2b - u3) / n
        res["touched"]["drift_during_speed_runs"] = (u2b - u2) / n
        mon.close()
    finally:
        for c in conns:
            c.close()
        cl.stop()
    print(json.dumps(res), flush=True)
    return res


def fmt_kb(b):
    return f"{b / 1024:,.0f}"


def result_path(filename):
    """bench/results/<filename>, the directory made if missing."""
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    return os.path.join(HERE, "results", filename)


def pyplot():
    """matplotlib.pyplot without a display."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def write_report(name, results, command):
    md = [f"# pg_procmem overhead benchmark: {name}", "",
          f"Reproduce: `{command}` (as root). Machine: {os.cpu_count()} cores, "
          f"{os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 1024**3:.0f} GiB, "
          f"Linux {os.uname().release}, PostgreSQL from {PG_BIN}.", ""]

    speed = [r for r in results if not r["huge_pages"]]
    md += ["## Speed (huge_pages=off, every connection touched the buffer pool)", "",
           "Median of the timed repetitions, all server processes read once per repetition.", "",
           "| touched | processes | pg_procmem_backends | status reader | smaps_rollup reader "
           "| smaps_rollup / pg_procmem | pg_procmem / status | pg_procmem per process "
           "| pg_procmem_backends_pss |",
           "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in speed:
        md.append(f"| {r['touched_mb'] / 1024:g} GB | {r['processes']} | {r['view_s'] * 1e3:.1f} ms "
                  f"| {r['status_s'] * 1e3:.2f} ms | {r['smaps_s'] * 1e3:.1f} ms "
                  f"| {r['smaps_s'] / r['view_s']:.1f}x | {r['view_s'] / r['status_s']:.1f}x "
                  f"| {r['view_s'] / r['processes'] * 1e6:.0f} µs | {r['pss_view_s'] * 1e3:.1f} ms |")
    md += ["", "Cancel latency: a scan over every process repeated 100,000 times is cancelled "
           "after 0.5 s; the time from the cancel request to the error (median of 5):", "",
           "| touched | default (pagemap) scan | with PSS (smaps_rollup) |", "|---:|---:|---:|"]
    for r in speed:
        if r.get("cancel_default_s") is not None:
            md.append(f"| {r['touched_mb'] / 1024:g} GB | {r['cancel_default_s'] * 1e3:.1f} ms "
                      f"| {(r.get('cancel_pss_s') or float('nan')) * 1e3:.1f} ms |")
    md += ["", "## Accuracy: per connection, kB", "",
           "The truth, both ways: `cgroup added` is what the cluster's memory cgroup gained per "
           "connection opened (idle) and after each touched the buffer pool (touched); `cgroup "
           "freed` is what it lost per connection closed. Each method's error is against the "
           "freed figure where there is one, else the added one, and (in brackets) against the "
           "other. The goal: within 40 kB or 2%, whichever is larger; **bold** is the closer method. "
           "The freed figure is taken from just before the connections close (the speed runs "
           "between the two measurements move the cgroup's usage by themselves: `drift` in the "
           "raw results, per connection).", "",
           "| huge_pages | touched | state | ps RSS | PSS | cgroup added | cgroup freed "
           "| Pss_Anon + VmPTE | error | overhead | error | within goal |",
           "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]

    def err(v, f):
        main = f.get("cgroup_freed", f["cgroup_added"])
        other = f["cgroup_added"] if "cgroup_freed" in f else None
        s = f"{(v - main) / 1024:+,.1f} kB ({(v - main) / main * 100:+.1f}%)"
        if other is not None:
            s += f" [{(v - other) / 1024:+,.1f} kB]"
        return v - main, s

    for r in results:
        for state in ("idle", "touched"):
            f = r[state]
            truth = f.get("cgroup_freed", f["cgroup_added"])
            e_est, s_est = err(f["pss_anon_pte"], f)
            e_ovh, s_ovh = err(f["overhead"], f)
            goal = max(40 * 1024, 0.02 * truth)
            won = abs(e_ovh) <= abs(e_est)
            md.append(f"| {'on' if r['huge_pages'] else 'off'} | {r['touched_mb'] / 1024:g} GB | {state} "
                      f"| {fmt_kb(f['rss'])} | {fmt_kb(f['pss'])} | {fmt_kb(f['cgroup_added'])} "
                      f"| {fmt_kb(f['cgroup_freed']) if 'cgroup_freed' in f else ''} "
                      f"| {fmt_kb(f['pss_anon_pte'])} | {s_est if won else '**' + s_est + '**'} "
                      f"| {fmt_kb(f['overhead'])} | {'**' + s_ovh + '**' if won else s_ovh} "
                      f"| {'yes' if abs(e_ovh) <= goal else 'NO'} |")
    md += ["", "![accuracy](" + f"{name}-accuracy.png)", "", "![speed](" + f"{name}-speed.png)", "",
           "Raw results:", "", "```json", json.dumps(results, indent=1), "```", ""]
    with open(result_path(f"{name}.md"), "w") as fh:
        fh.write("\n".join(md))
    charts(name, results)


def charts(name, results):
    plt = pyplot()

    # accuracy: grouped bars per scenario, log scale (RSS dwarfs the rest)
    series = [("ps RSS", "rss"), ("PSS", "pss"), ("Pss_Anon + VmPTE", "pss_anon_pte"),
              ("pg_procmem overhead", "overhead"), ("cgroup truth", None)]
    scen = []
    for r in results:
        for state in ("idle", "touched"):
            f = r[state]
            label = (f"hp {'on' if r['huge_pages'] else 'off'}\n"
                     f"{r['touched_mb'] / 1024:g} GB {state}")
            truth = f.get("cgroup_freed", f["cgroup_added"])
            scen.append((label, [f[k] / MB if k else truth / MB for _, k in series]))
    fig, ax = plt.subplots(figsize=(max(8, 1.3 * len(scen)), 5))
    width = 0.8 / len(series)
    for i, (lbl, _) in enumerate(series):
        xs = [j + i * width for j in range(len(scen))]
        ax.bar(xs, [s[1][i] for s in scen], width, label=lbl)
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(scen))])
    ax.set_xticklabels([s[0] for s in scen], fontsize=8)
    ax.set_yscale("log")
    ax.set_ylabel("MiB per connection (log scale)")
    ax.set_title("Memory per connection: what tools report vs what the kernel frees")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(result_path(f"{name}-accuracy.png"), dpi=110)

    speed = [r for r in results if not r["huge_pages"]]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    xs = [r["touched_mb"] / 1024 for r in speed]
    for lbl, key in (("smaps_rollup reader (C)", "smaps_s"), ("pg_procmem_backends", "view_s"),
                     ("status reader (C)", "status_s")):
        ax.plot(xs, [r[key] * 1e3 for r in speed], marker="o", label=lbl)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("shared_buffers touched by each backend (GB)")
    ax.set_ylabel(f"ms to read all {speed[0]['processes'] if speed else ''} processes")
    ax.set_title("Cost of one read of every server process (huge_pages=off)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(result_path(f"{name}-speed.png"), dpi=110)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--name", default="overhead")
    ap.add_argument("--connections", type=int, default=200)
    ap.add_argument("--touched-mb", default="512,1024,2048,4096",
                    help="buffer pool touched by each connection, huge_pages=off series")
    ap.add_argument("--huge-touched-mb", default="2048",
                    help="the same with huge_pages=on ('' to skip)")
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--port", type=int, default=5498)
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("run as root (memory cgroups, huge pages, runuser)")
    results = []
    for mb in [int(x) for x in a.touched_mb.split(",") if x]:
        results.append(one_config(mb, False, a.connections, a.reps, a.port))
    for mb in [int(x) for x in a.huge_touched_mb.split(",") if x]:
        results.append(one_config(mb, True, a.connections, a.reps, a.port))
    command = "bench/run " + " ".join(sys.argv[1:])
    write_report(a.name, results, command.strip())
    print(f"wrote bench/results/{a.name}.md")


if __name__ == "__main__":
    main()
