#!/usr/bin/env python3
"""How close page_tables_with_huge_pages comes to a huge-pages run.

Side by side in one run: a cluster with huge_pages=off, N connections that
each read a table filling ~85% of shared_buffers (and, first, the same
connections idle); pg_procmem_hugepages' prediction (1.2.0), and the 1.1.0
estimate computed from the same processes' figures. Then the same cluster
with huge_pages=on and the same workload: the page tables its processes
really have (VmPTE, summed). Run through bench/run hugepages, as root.
Writes bench/results/hugepages.md and .png.
"""
import argparse
import os
import sys

from overhead import Cluster, touch_all, result_path, pyplot

MB = 1024 * 1024


def old_estimate(mon):
    """The 1.1.0 model: page_tables - rss_shmem / 512 + rss_shmem * 8 / hugepage_size."""
    return float(mon.execute("""
        SELECT sum(GREATEST(page_tables - rss_shmem / 512, 0) + rss_shmem * 8 / 2097152)
        FROM pg_procmem_processes()""").fetchone()[0])


def state_figures(mon):
    pt, with_hp = mon.execute(
        "SELECT page_tables, page_tables_with_huge_pages FROM pg_procmem_hugepages").fetchone()
    return {"page_tables": float(pt), "new": float(with_hp), "old": old_estimate(mon),
            "processes": mon.execute("SELECT count(*) FROM pg_procmem_processes()").fetchone()[0]}


def run(touched_mb, huge_pages, n, port):
    print(f"-- huge_pages {'on' if huge_pages else 'off'}: {n} connections, {touched_mb} MB each",
          flush=True)
    cl = Cluster(touched_mb, huge_pages, n, port)
    conns = []
    res = {}
    try:
        mon = cl.connect()
        mon.execute("CREATE EXTENSION pg_procmem")
        mon.execute("CREATE EXTENSION pg_prewarm")
        mon.execute("CREATE UNLOGGED TABLE touch (id int, pad char(1000)) WITH (fillfactor = 10)")
        mon.execute("INSERT INTO touch SELECT g, 'x' FROM generate_series(1, %s) g", (touched_mb * 128,))
        mon.execute("VACUUM (FREEZE) touch")
        mon.execute("SELECT pg_prewarm('touch')")
        mon.execute("CHECKPOINT")
        for _ in range(n):
            c = cl.connect()
            c.execute("SET enable_indexscan = off; SET enable_bitmapscan = off; "
                      "SET max_parallel_workers_per_gather = 0")
            conns.append(c)
        res["idle"] = state_figures(mon)
        touch_all(conns)
        res["touched"] = state_figures(mon)
        in_use = mon.execute("SELECT in_use FROM pg_procmem_hugepages").fetchone()[0]
        if in_use != huge_pages:
            raise SystemExit("huge_pages=%s but in_use is %s" % (huge_pages, in_use))
    finally:
        for c in conns:
            c.close()
        cl.stop()
    print(res, flush=True)
    return res


def write_report(name, pairs, a, command):
    """pairs: [(off, on)], one per start of each cluster."""
    rows = []
    for k, (off, on) in enumerate(pairs):
        for state in ("idle", "touched"):
            rows.append((k + 1, state, off[state]["processes"], off[state]["page_tables"],
                         off[state]["old"], off[state]["new"], on[state]["page_tables"]))
    lines = [
        f"# page_tables_with_huge_pages against a huge-pages run: {name}",
        "",
        f"Reproduce: `{command}` (as root). shared_buffers {int(a.touched_mb / 0.85) + 16} MB, "
        f"{a.connections} connections; idle (connected), then touched (each read a {a.touched_mb} MB "
        "table from shared_buffers). The prediction is read with huge_pages=off; the same cluster and "
        "workload are then run with huge_pages=on and their page tables (VmPTE of every server process) "
        "measured. 1.1.0's estimate is computed from the same processes' figures. Each pair of starts "
        "places the mappings anew (address space layout randomization), which moves the page-table pages "
        f"of both runs: {len(pairs)} pairs. Kernel {os.uname().release}.",
        "",
        "| pair | state | processes | page tables, huge_pages=off | 1.1.0 estimate | 1.2.0 prediction | "
        "measured, huge_pages=on | 1.1.0 / measured | 1.2.0 / measured |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for k, state, procs, now, old, new, measured in rows:
        lines.append(f"| {k} | {state} | {procs} | {now / MB:,.1f} MB | {old / MB:,.1f} MB | {new / MB:,.1f} MB | "
                     f"{measured / MB:,.1f} MB | {old / measured:.3f} | {new / measured:.3f} |")
    new_r = [r[5] / r[6] for r in rows]
    old_r = [r[4] / r[6] for r in rows]
    lines += ["", f"1.2.0 / measured: {min(new_r):.3f} to {max(new_r):.3f}; "
              f"1.1.0 / measured: {min(old_r):.3f} to {max(old_r):.3f}.",
              "", "![prediction against measured](%s.png)" % name, ""]
    with open(result_path(name + ".md"), "w") as f:
        f.write("\n".join(lines))
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(9, 4.5))
    width = 0.27
    for i, (label, key, color) in enumerate([("1.1.0 estimate", 4, "#bbbbbb"),
                                             ("1.2.0 prediction", 5, "#1f77b4"),
                                             ("measured, huge_pages=on", 6, "#2ca02c")]):
        xs = [j + (i - 1) * width for j in range(len(rows))]
        ax.bar(xs, [r[key] / MB for r in rows], width, label=label, color=color)
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels([f"{r[1]} #{r[0]}" for r in rows])
    ax.set_ylabel("page tables of the server's processes (MB)")
    ax.set_title(f"Page tables with huge pages, {a.connections} connections: "
                 "predicted with huge_pages=off, then measured")
    ax.set_ylim(0, max(max(r[4], r[5], r[6]) for r in rows) / MB * 1.3)
    ax.legend(loc="upper center", ncol=3)
    fig.tight_layout()
    fig.savefig(result_path(name + ".png"), dpi=110)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--name", default="hugepages")
    ap.add_argument("--connections", type=int, default=200)
    ap.add_argument("--touched-mb", type=int, default=1700)
    ap.add_argument("--port", type=int, default=5497)
    ap.add_argument("--pairs", type=int, default=3, help="off/on pairs of starts")
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("run as root (huge pages, runuser)")
    pairs = [(run(a.touched_mb, False, a.connections, a.port),
              run(a.touched_mb, True, a.connections, a.port)) for _ in range(a.pairs)]
    command = ("bench/run hugepages " + " ".join(sys.argv[1:])).strip()
    write_report(a.name, pairs, a, command)
    print(f"wrote bench/results/{a.name}.md")


if __name__ == "__main__":
    main()
