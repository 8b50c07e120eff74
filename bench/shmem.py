#!/usr/bin/env python3
"""What the views that read the main shared memory segment cost, against its size.

pg_procmem_accounting counts the segment's resident pages, and 1.1.0 did it
with mincore() over the whole segment, so that pg_procmem_advice (through
pg_procmem_hugepages) took 15 ms at shared_buffers 128 MB and 164 ms at
12 GB, and a cancel waited as long. Since 1.2.0 the huge pages view and the
advice do not read residency at all, and the accounting samples it above
256 MB at a fixed cost.

For each shared_buffers size: one cluster (huge_pages off, the segment
untouched but for what the server itself writes), a few idle connections;
each view timed interleaved, medians; then the latency from a cancel request
to the error, for a query that reads the view over and over. The accounting
is also timed with the segment touched (a table filling 85% of
shared_buffers, scanned once), where the sampled residency stands against
the exact count of a full mincore() (the 1.0.0 definition of the function
now samples too, so the exact figure is computed here by the same reading of
the touched table: main_segment_resident is compared with the relation's
size plus what the untouched run found).

Run through `bench/run shmem`, as root. Writes bench/results/<name>.md and PNG.
"""
import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from overhead import Cluster, cancel_latency, pyplot, result_path  # noqa: E402

QUERIES = {
    "pg_procmem_advice": "SELECT * FROM pg_procmem_advice",
    "pg_procmem_hugepages": "SELECT * FROM pg_procmem_hugepages",
    "pg_procmem_accounting": "SELECT * FROM pg_procmem_accounting",
    "pg_procmem_backends": "SELECT * FROM pg_procmem_backends",
}
# what a view reads, once per outer row of a long query: for the latency
# from a cancel request to the error (a view's own subquery can be planned
# to run once)
REPEATED = {
    "pg_procmem_advice": "SELECT count(*) FROM generate_series(1, 1000000) g, "
                         "LATERAL (SELECT * FROM pg_procmem_advice WHERE g > 0) v",
    "pg_procmem_shared_memory(true)": "SELECT count(*) FROM generate_series(1, 1000000) g, "
                                      "LATERAL pg_procmem_shared_memory(g > 0) s",
}


def start(sb_mb, connections, port):
    """A cluster of this shared_buffers with idle connections: (cluster, monitor, conns)."""
    # Cluster sizes shared_buffers as touched_mb / 0.85 + 16
    cl = Cluster(int((sb_mb - 16) * 0.85), False, connections, port)
    mon = cl.connect()
    mon.execute("CREATE EXTENSION pg_procmem")
    return cl, mon, [cl.connect() for _ in range(connections)]


def time_all(runs, reps):
    """Every view on every cluster, reps times, interleaved across clusters
    and queries (the order reversed every other round): drift in the
    machine's speed hits every size alike. Medians, ms."""
    times = {(i, q): [] for i in range(len(runs)) for q in QUERIES}
    keys = list(times)
    for r in range(reps):
        for i, q in (keys if r % 2 == 0 else list(reversed(keys))):
            mon = runs[i][1]
            t0 = time.perf_counter()
            mon.execute(QUERIES[q]).fetchall()
            times[(i, q)].append(time.perf_counter() - t0)
    return [{q: statistics.median(times[(i, q)]) * 1000 for q in QUERIES} for i in range(len(runs))]


def finish(sb_mb, cl, mon, reps, touch):
    """The rest, one cluster at a time: residency, cancel, the touched run."""
    size = mon.execute("SELECT main_segment_size FROM pg_procmem_shared_memory(false)").fetchone()[0]
    untouched = mon.execute("SELECT main_segment_resident, main_segment_resident_exact "
                            "FROM pg_procmem_shared_memory()").fetchone()
    cancel = {v: cancel_latency(cl, q, 5) for v, q in REPEATED.items()}
    touched, acc_touched = None, []
    if touch:
        # touch 85% of shared_buffers: the residency estimate against the
        # pages a scan of the table brought in (one 8 kB buffer per page)
        mon.execute("CREATE UNLOGGED TABLE touch (id int, pad char(1000)) WITH (fillfactor = 10)")
        pages = int(sb_mb * 0.85) * 128
        mon.execute("INSERT INTO touch SELECT g, 'x' FROM generate_series(1, %s) g", (pages,))
        mon.execute("SELECT count(*) FROM touch").fetchone()
        touched = mon.execute("SELECT main_segment_resident, main_segment_resident_exact, "
                              "pg_relation_size('touch') FROM pg_procmem_shared_memory()").fetchone()
        for _ in range(reps):
            t0 = time.perf_counter()
            mon.execute(QUERIES["pg_procmem_accounting"]).fetchall()
            acc_touched.append(time.perf_counter() - t0)
    return {"sb_mb": sb_mb, "size": size,
            "accounting_touched_ms": statistics.median(acc_touched) * 1000 if touch else None,
            "cancel_ms": {v: (x * 1000 if x is not None else None) for v, x in cancel.items()},
            "untouched": untouched, "touched": touched}


def measure(sizes, connections, reps, touch_max_mb):
    """All clusters up at once (their segments untouched cost no memory)."""
    runs, res = [], []
    try:
        for i, sb in enumerate(sizes):
            runs.append(start(sb, connections, 5497 - i))
        ms = time_all(runs, reps)
        for i, (cl, mon, conns) in enumerate(runs):
            res.append(dict(finish(sizes[i], cl, mon, reps, sizes[i] <= touch_max_mb), ms=ms[i]))
            for c in conns:
                c.close()
            cl.stop()
            runs[i] = None
    finally:
        for r in runs:
            if r:
                for c in r[2]:
                    c.close()
                r[0].stop()
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--name", default="shmem")
    ap.add_argument("--sizes-mb", default="128,1024,4096,12288")
    ap.add_argument("--connections", type=int, default=20)
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--touch-max-mb", type=int, default=4096,
                    help="fill and scan a table only up to this shared_buffers (memory, time)")
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("run as root")
    res = measure([int(x) for x in a.sizes_mb.split(",")], a.connections, a.reps, a.touch_max_mb)

    base = res[0]
    lines = [f"# What the shared-memory views cost, against the segment's size: {a.name}", "",
             "Reproduce: `%s` (as root). " % " ".join(["bench/run", "shmem", *sys.argv[1:]]) +
             f"One cluster per shared_buffers size, all running at once, huge_pages off, {a.connections} idle "
             f"connections each, the segments untouched; each view on each cluster timed {a.reps} times, "
             f"interleaved across clusters and views, medians. "
             f"Cancel: the advice, or the function under the accounting with its costly parts, read once "
             f"per row of a long query; the latency from the cancel request to the error (median of 5). "
             f"1.1.0 (the issue that asked for this): advice 15 ms at 128 MB and 164 ms at 12 GB, "
             f"and a cancel waited as long. {os.cpu_count()} cores.", "",
             "| shared_buffers | segment | " + " | ".join(f"`{q}`" for q in QUERIES) +
             " | accounting, 85% touched | cancel advice | cancel shared_memory(true) |",
             "|---:|---:|" + "---:|" * len(QUERIES) + "---:|---:|---:|"]
    for r in res:
        lines.append(f"| {r['sb_mb']:,} MB | {r['size'] / 2**20:,.0f} MB | " +
                     " | ".join(f"{r['ms'][q]:.1f} ms" for q in QUERIES) +
                     (f" | {r['accounting_touched_ms']:.1f} ms | " if r["touched"] else " | — | ") +
                     " | ".join(f"{r['cancel_ms'][v]:.1f} ms" if r['cancel_ms'][v] is not None else "—"
                                for v in REPEATED) + " |")
    lines += ["", "Largest size against the smallest (the goal: within 1.5x):", ""]
    for q in QUERIES:
        lines.append(f"- `{q}`: {res[-1]['ms'][q] / base['ms'][q]:.2f}x")
    t = [r for r in res if r["touched"]]
    if len(t) > 1:
        lines.append(f"- `pg_procmem_accounting` with 85% touched, {t[-1]['sb_mb']:,} MB against "
                     f"{t[0]['sb_mb']:,} MB: {t[-1]['accounting_touched_ms'] / t[0]['accounting_touched_ms']:.2f}x")
    lines += ["", "The resident part of the segment (sampled above 256 MB, exact below):", "",
              "| shared_buffers | untouched: resident | exact? | 85% touched: resident | table | "
              "resident − untouched − table |", "|---:|---:|---|---:|---:|---:|"]
    for r in res:
        u, t = r["untouched"], r["touched"]
        if t is None:
            lines.append(f"| {r['sb_mb']:,} MB | {u[0] / 2**20:,.1f} MB | {'yes' if u[1] else 'sampled'} "
                         "| (not touched) | | |")
            continue
        lines.append(f"| {r['sb_mb']:,} MB | {u[0] / 2**20:,.1f} MB | {'yes' if u[1] else 'sampled'} | "
                     f"{t[0] / 2**20:,.1f} MB | {t[2] / 2**20:,.1f} MB | "
                     f"{(t[0] - u[0] - t[2]) / 2**20:+,.1f} MB ({(t[0] - u[0] - t[2]) * 100 / r['size']:+.2f}% "
                     f"of the segment) |")
    lines += ["", "(The last column is the estimate's error plus what else the scan touched in the "
              "segment: buffer headers, the strategy ring's bookkeeping.)", "",
              f"![cost against size]({a.name}.png)", ""]
    with open(result_path(f"{a.name}.md"), "w") as f:
        f.write("\n".join(lines))

    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 3.6))
    xs = [r["sb_mb"] for r in res]
    for q, color in zip(QUERIES, ["#d62728", "#7f7f7f", "#1f77b4", "#2ca02c"]):
        ax.plot(xs, [r["ms"][q] for r in res], marker="o", color=color, label=q)
    ax.set_xscale("log")
    ax.set_xticks(xs)
    ax.set_xticklabels([f"{x:,} MB" for x in xs])
    ax.set_xlabel("shared_buffers (huge_pages off, untouched)")
    ax.set_ylabel("median ms per query")
    ax.set_ylim(0, max(max(r["ms"].values()) for r in res) * 1.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(result_path(f"{a.name}.png"), dpi=100)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
