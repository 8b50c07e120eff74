#!/usr/bin/env python3
"""What pg_procmem costs per process, from 100 to 1,000 connections.

1.1.0 asked BackendPidGetProc (a scan of the proc array under ProcArrayLock)
once per candidate pid, and once per published context slot: a cost per
process that grows with the number of processes. Since 1.2.0 the pids that
hold a PGPROC are read in one pass over ProcGlobal, and a slot is checked
against its own PGPROC. One cluster (huge_pages off, shared_buffers 128 MB,
pg_procmem preloaded), connections opened in steps; at each step every
query is timed interleaved, medians, beside a plain C reader of
/proc/PID/status for the same pids (the floor).

Run through `bench/run scale`, as root. Writes bench/results/<name>.md and PNG.
"""
import argparse
import os
import resource
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from overhead import Cluster, pyplot, reader_time, result_path  # noqa: E402

QUERIES = {
    "pg_procmem_processes()": "SELECT count(*) FROM pg_procmem_processes()",
    "pg_procmem_backends": "SELECT count(*) FROM pg_procmem_backends",
    "pg_procmem_contexts": "SELECT count(*) FROM pg_procmem_contexts",
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--name", default="scale")
    ap.add_argument("--steps", default="100,300,1000")
    ap.add_argument("--reps", type=int, default=15)
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("run as root")
    steps = [int(s) for s in a.steps.split(",")]
    # a socket per connection
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 4 * max(steps) + 256)), hard))

    cl = Cluster(96, False, max(steps) + 10, 5498, extra={"shared_preload_libraries": "pg_procmem"})
    conns, res = [], []
    try:
        mon = cl.connect()
        mon.execute("CREATE EXTENSION pg_procmem")
        for n in steps:
            while len(conns) < n:
                c = cl.connect()
                c.execute("SELECT 1")         # a query: its contexts are published
                conns.append(c)
            pids = [r[0] for r in mon.execute("SELECT pid FROM pg_procmem_processes()").fetchall()]
            times = {q: [] for q in QUERIES}
            for r in range(a.reps):
                for q in (list(QUERIES) if r % 2 == 0 else list(reversed(QUERIES))):
                    t0 = time.perf_counter()
                    mon.execute(QUERIES[q]).fetchall()
                    times[q].append(time.perf_counter() - t0)
            published = mon.execute("SELECT count(*) FROM pg_procmem_contexts").fetchone()[0]
            # every view of the extension answers at this size, and how fast
            views = {}
            for (v,) in mon.execute("SELECT c.relname FROM pg_class c JOIN pg_depend d ON d.objid = c.oid "
                                    "JOIN pg_extension e ON e.oid = d.refobjid WHERE e.extname = 'pg_procmem' "
                                    "AND c.relkind = 'v' ORDER BY 1").fetchall():
                t0 = time.perf_counter()
                rows = mon.execute(f"SELECT count(*) FROM {v}").fetchone()[0]
                views[v] = (rows, (time.perf_counter() - t0) * 1000)
            res.append({"connections": n, "processes": len(pids), "published": published, "views": views,
                        "ms": {q: statistics.median(t) * 1000 for q, t in times.items()},
                        "status_ms": reader_time("status", pids, a.reps) * 1000})
            print({k: v for k, v in res[-1].items() if k != "views"}, flush=True)
    finally:
        for c in conns:
            c.close()
        cl.stop()

    lines = [f"# What pg_procmem costs per process, {steps[0]:,} to {steps[-1]:,} connections: {a.name}", "",
             "Reproduce: `%s` (as root). " % " ".join(["bench/run", "scale", *sys.argv[1:]]) +
             f"One cluster, pg_procmem preloaded, shared_buffers 128 MB, huge_pages off; idle connections "
             f"opened in steps; each query timed {a.reps} times, interleaved, medians. "
             f"{os.cpu_count()} cores.", "",
             "| connections | processes | " + " | ".join(f"`{q}` per process" for q in QUERIES) +
             " | status reader per process |", "|---:|---:|" + "---:|" * (len(QUERIES) + 1)]
    for r in res:
        lines.append(f"| {r['connections']:,} | {r['processes']:,} | " +
                     " | ".join(f"{r['ms'][q] * 1000 / (r['published'] if 'contexts' in q else r['processes']):.0f} µs"
                                for q in QUERIES) +
                     f" | {r['status_ms'] * 1000 / r['processes']:.1f} µs |")
    first, last = res[0], res[-1]
    lines += ["", f"Per process at {last['connections']:,} connections against {first['connections']:,} "
              "(flat is 1.00x):", ""]
    for q in QUERIES:
        div = (lambda r: r["published"]) if "contexts" in q else (lambda r: r["processes"])
        lines.append(f"- `{q}`: {(last['ms'][q] / div(last)) / (first['ms'][q] / div(first)):.2f}x")
    lines += ["", "(`pg_procmem_contexts` per published slot.)", "",
              f"Every view of the extension at {last['connections']:,} connections (rows, ms for one read; "
              "an error would have stopped the run):", "", "| view | rows | ms |", "|---|---:|---:|"]
    lines += [f"| `{v}` | {r:,} | {ms:.0f} |" for v, (r, ms) in last["views"].items()]
    lines += ["", f"![per process]({a.name}.png)", ""]
    with open(result_path(f"{a.name}.md"), "w") as f:
        f.write("\n".join(lines))

    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 3.4))
    xs = [r["processes"] for r in res]
    for q, color in zip(QUERIES, ["#d62728", "#1f77b4", "#2ca02c"]):
        div = (lambda r: r["published"]) if "contexts" in q else (lambda r: r["processes"])
        ax.plot(xs, [r["ms"][q] * 1000 / div(r) for r in res], marker="o", color=color, label=q)
    ax.plot(xs, [r["status_ms"] * 1000 / r["processes"] for r in res], marker="o", color="#7f7f7f",
            label="/proc/PID/status read (C)")
    ax.set_xlabel("server processes")
    ax.set_ylabel("median µs per process")
    ax.set_ylim(0, None)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(result_path(f"{a.name}.png"), dpi=100)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
