#!/usr/bin/env python3
"""What polling pg_procmem_advice costs, beside the views it is built on.

One cluster, huge_pages off, N connections that each scanned a table filling
most of shared_buffers (so that every backend maps the buffer pool in 4 kB
pages: the case where smaps_rollup is slow). Timed interleaved, median of
several runs: pg_procmem_advice, pg_procmem_backends (the headline view),
pg_procmem_hugepages, and pg_procmem_backends_pss (which walks smaps_rollup).

Run through `bench/run advice`, as root. Writes bench/results/<name>.md and PNG.
"""
import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from overhead import Cluster, pyplot, result_path, touch_all  # noqa: E402

QUERIES = {
    "pg_procmem_advice": "SELECT * FROM pg_procmem_advice",
    "pg_procmem_backends": "SELECT * FROM pg_procmem_backends",
    "pg_procmem_hugepages": "SELECT * FROM pg_procmem_hugepages",
    "pg_procmem_backends_pss": "SELECT * FROM pg_procmem_backends_pss",
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--name", default="advice")
    ap.add_argument("--connections", type=int, default=200)
    ap.add_argument("--touched-mb", type=int, default=1024)
    ap.add_argument("--reps", type=int, default=15)
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("run as root")

    cl = Cluster(a.touched_mb, False, a.connections, 5496)
    conns = []
    try:
        mon = cl.connect()
        mon.execute("CREATE EXTENSION pg_procmem")
        mon.execute("CREATE UNLOGGED TABLE touch (id int, pad char(1000)) WITH (fillfactor = 10)")
        mon.execute("INSERT INTO touch SELECT g, 'x' FROM generate_series(1, %s) g", (a.touched_mb * 128,))
        mon.execute("VACUUM (FREEZE) touch")
        conns = [cl.connect() for _ in range(a.connections)]
        for c in conns:
            c.execute("SET max_parallel_workers_per_gather = 0")
        touch_all(conns)
        processes = mon.execute("SELECT count(*) FROM pg_procmem_processes()").fetchone()[0]
        times = {q: [] for q in QUERIES}
        for r in range(a.reps):
            order = list(QUERIES) if r % 2 == 0 else list(reversed(QUERIES))
            for q in order:
                t0 = time.perf_counter()
                mon.execute(QUERIES[q]).fetchall()
                times[q].append(time.perf_counter() - t0)
        findings = mon.execute("SELECT check_name, severity FROM pg_procmem_advice").fetchall()
    finally:
        for c in conns:
            c.close()
        cl.stop()

    med = {q: statistics.median(t) * 1000 for q, t in times.items()}
    base = med["pg_procmem_backends"]
    lines = [f"# What polling pg_procmem_advice costs: {a.name}", "",
             "Reproduce: `%s` (as root). " % " ".join(["bench/run", "advice", *sys.argv[1:]]) +
             f"One cluster, huge_pages off, {a.connections} connections that each scanned "
             f"{a.touched_mb} MB of shared_buffers ({processes} server processes); each query "
             f"timed {a.reps} times, interleaved; medians. {os.cpu_count()} cores.", "",
             "| query | median | per process | vs pg_procmem_backends |", "|---|---:|---:|---:|"]
    for q in QUERIES:
        lines.append(f"| `{q}` | {med[q]:.1f} ms | {med[q] * 1000 / processes:.0f} µs "
                     f"| {med[q] / base:.2f}x |")
    lines += ["", f"The advice found: {', '.join(f'{c} ({s})' for c, s in findings)}.", "",
              f"![query times]({a.name}.png)", ""]
    with open(result_path(f"{a.name}.md"), "w") as f:
        f.write("\n".join(lines))

    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 3.2))
    names = list(QUERIES)
    ax.barh(names, [med[q] for q in names], color=["#d62728", "#1f77b4", "#7f7f7f", "#9ecae1"])
    for i, q in enumerate(names):
        ax.text(med[q], i, f" {med[q]:.0f} ms", va="center")
    ax.set_xlabel(f"median ms per query, {processes} processes, {a.touched_mb} MB touched each")
    ax.invert_yaxis()
    ax.set_xlim(0, max(med.values()) * 1.25)
    fig.tight_layout()
    fig.savefig(result_path(f"{a.name}.png"), dpi=100)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
