#!/usr/bin/env python3
"""What reading one process costs, file by file, against a plain read of its status.

One cluster (pg_procmem preloaded, shared_buffers 128 MB, huge_pages off)
with idle connections; bench/cost.c times the /proc layer's own readers on
every server process (CPU time per process, medians), and the views are
timed beside a plain C read of /proc/PID/status for the same pids.

Run through `bench/run cost`, as root. Writes bench/results/cost.md.
"""
import argparse
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from overhead import Cluster, reader_time, result_path  # noqa: E402

COST = os.path.join(os.path.dirname(os.path.abspath(__file__)), ".build", "cost")
QUERIES = {
    "pg_procmem_processes()": "SELECT count(*) FROM pg_procmem_processes()",
    "pg_procmem_backends": "SELECT count(*) FROM pg_procmem_backends",
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--connections", type=int, default=200)
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--port", type=int, default=int(os.environ.get("PGPORT", "5587")))
    a = ap.parse_args()
    cl = Cluster(96, False, a.connections + 10, a.port,
                 extra={"shared_preload_libraries": "pg_procmem"})
    conns = []
    try:
        mon = cl.connect()
        mon.execute("CREATE EXTENSION pg_procmem")
        for _ in range(a.connections):
            c = cl.connect()
            c.execute("SELECT 1")
            conns.append(c)
        pids = [r[0] for r in mon.execute("SELECT pid FROM pg_procmem_processes()").fetchall()]
        out = subprocess.run(["runuser", "-u", "postgres", "--", COST, str(a.reps), *map(str, pids)],
                             check=True, capture_output=True, text=True).stdout
        parts = [line.rsplit("\t", 1) for line in out.strip().splitlines()]
        parts = [(k, float(v)) for k, v in parts]
        floor = dict(parts)["status, a plain read (the floor)"]
        times = {q: [] for q in QUERIES}
        status = []
        for r in range(a.reps):
            for q in QUERIES:
                t0 = time.perf_counter()
                mon.execute(QUERIES[q]).fetchall()
                times[q].append(time.perf_counter() - t0)
            status.append(reader_time("status", pids, 1))
        times = {q: sorted(v)[len(v) // 2] for q, v in times.items()}
        status_s = sorted(status)[len(status) // 2]
        n = len(pids)
        md = ["# What reading one process costs", "",
              f"Reproduce: `bench/run cost` (as root). Linux {os.uname().release}, {os.cpu_count()} cores; "
              f"{n} server processes ({a.connections} idle connections), shared_buffers 128 MB.", "",
              "The /proc layer's readers one by one (`bench/cost.c`: CPU time per process, median "
              f"of {a.reps} passes over every process), against a plain C read of /proc/PID/status:", "",
              "| part | µs per process | / status |", "|---|---:|---:|"]
        md += [f"| {k} | {v:.1f} | {v / floor:.1f}x |" for k, v in parts]
        md += ["", "The SQL functions, wall time per process (medians, interleaved with the plain "
               "status reader, same pids):", "", "| query | µs per process | / status |", "|---|---:|---:|"]
        md += [f"| `{q}` | {t / n * 1e6:.0f} | {t / status_s:.1f}x |" for q, t in times.items()]
        md += [f"| plain status reader (C) | {status_s / n * 1e6:.1f} | 1.0x |", ""]
        with open(result_path("cost.md"), "w") as f:
            f.write("\n".join(md) + "\n")
        print("\n".join(md))
    finally:
        for c in conns:
            c.close()
        cl.stop()


if __name__ == "__main__":
    main()
