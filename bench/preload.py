#!/usr/bin/env python3
"""What preloading pg_procmem costs in throughput.

Two clusters side by side, identical but for shared_preload_libraries
(pg_procmem or nothing): pgbench -S (read-only) and the default TPC-B-like
read-write script against each, runs interleaved (off, on, off, on ...) so that
drift in the machine's speed hits both alike. Reports the median tps of each
and the cost in percent.

Run through `bench/run preload`, as root. Writes bench/results/<name>.md and PNG.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from overhead import Cluster, PG_BIN, pyplot, result_path  # noqa: E402


def pgbench(cl, *args):
    out = subprocess.run([f"{PG_BIN}/pgbench", "-h", cl.dir, "-p", str(cl.port), "-U", "postgres",
                          *args, "postgres"], check=True, capture_output=True, text=True).stdout
    m = re.search(r"tps = ([0-9.]+) \(without initial connection time\)", out)
    return float(m.group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--name", default="preload")
    ap.add_argument("--runs", type=int, default=5, help="runs per mode and cluster")
    ap.add_argument("--seconds", type=int, default=15)
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--scale", type=int, default=10)
    ap.add_argument("--loop", type=int, default=200000, help="executor runs per timed loop")
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("run as root")

    clusters = {}
    try:
        for label, port, extra in (("off", 5496, {}),
                                   ("on", 5497, {"shared_preload_libraries": "pg_procmem"})):
            cl = Cluster(64, False, a.clients + 10, port, extra=extra)
            subprocess.run([f"{PG_BIN}/pgbench", "-h", cl.dir, "-p", str(port), "-U", "postgres",
                            "-i", "-q", "-s", str(a.scale), "postgres"], check=True, capture_output=True)
            clusters[label] = cl
        # the hooks' own cost: each PERFORM is an executor run (ExecutorEnd)
        loop = "DO $$ BEGIN FOR i IN 1..%d LOOP PERFORM 1; END LOOP; END $$" % a.loop
        conns = {label: cl.connect() for label, cl in clusters.items()}
        per_run = {"off": [], "on": []}
        for r in range(2 * a.runs):
            for label in (("off", "on") if r % 2 == 0 else ("on", "off")):
                t0 = time.perf_counter()
                conns[label].execute(loop)
                per_run[label].append((time.perf_counter() - t0) / a.loop * 1e9)
        for c in conns.values():
            c.close()
        modes = {"select-only (-S)": ["-S"], "read-write (TPC-B-like)": []}
        tps = {m: {"off": [], "on": []} for m in modes}
        for r in range(a.runs):
            for m, args in modes.items():
                for label in (("off", "on") if r % 2 == 0 else ("on", "off")):
                    t = pgbench(clusters[label], *args, "-c", str(a.clients), "-j", "2",
                                "-T", str(a.seconds))
                    tps[m][label].append(t)
                    print(f"run {r + 1} {m} preload {label}: {t:.0f} tps", flush=True)
    finally:
        for cl in clusters.values():
            cl.stop()

    lines = [f"# What preloading pg_procmem costs: {a.name}", "",
             f"Reproduce: `bench/run preload {' '.join(sys.argv[1:])}`".rstrip() + " (as root). "
             f"Two clusters (shared_buffers 80 MB, pgbench scale {a.scale}), identical but for "
             f"`shared_preload_libraries = 'pg_procmem'`; {a.clients} clients, {a.seconds} s a run, "
             f"{a.runs} runs per mode and cluster, interleaved; {os.cpu_count()} cores.", "",
             "| workload | without (median tps) | with pg_procmem preloaded | cost | runs without | runs with |",
             "|---|---:|---:|---:|---|---|"]
    result = {}
    for m in tps:
        off, on = statistics.median(tps[m]["off"]), statistics.median(tps[m]["on"])
        cost = (off - on) / off * 100
        result[m] = {"off": tps[m]["off"], "on": tps[m]["on"], "cost_pct": cost}
        lines.append(f"| {m} | {off:,.0f} | {on:,.0f} | {cost:+.1f}% "
                     f"| {', '.join(f'{x:.0f}' for x in tps[m]['off'])} "
                     f"| {', '.join(f'{x:.0f}' for x in tps[m]['on'])} |")
    off_ns, on_ns = statistics.median(per_run["off"]), statistics.median(per_run["on"])
    hook_ns = on_ns - off_ns
    s_tps = statistics.median(tps["select-only (-S)"]["off"])
    txn_ns = a.clients / s_tps * 1e9 if s_tps else float("nan")
    lines += ["", "The hooks' own cost, measured directly: a PL/pgSQL loop of "
              f"{a.loop:,} `PERFORM 1` (each one an executor run through ExecutorEnd), timed "
              f"{2 * a.runs} times on each cluster, alternating:", "",
              "| | without | with pg_procmem preloaded | difference |", "|---|---:|---:|---:|",
              f"| per executor run (median) | {off_ns:.0f} ns | {on_ns:.0f} ns | {hook_ns:+.0f} ns |", "",
              f"A pgbench -S transaction (one executor run, one commit) takes {txn_ns / 1000:.1f} µs "
              f"per client here, so the hook adds about {hook_ns / txn_ns * 100:+.2f}% to it "
              "(the commit callback adds one clock read more).",
              "", f"![throughput]({a.name}.png)", "", "```json",
              json.dumps({"pgbench": result, "loop_ns": per_run}, indent=1), "```", ""]
    with open(result_path(f"{a.name}.md"), "w") as f:
        f.write("\n".join(lines))

    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4))
    names = list(tps)
    for i, label in enumerate(("off", "on")):
        ax.bar([j + i * 0.38 for j in range(len(names))],
               [statistics.median(tps[m][label]) for m in names], 0.38,
               label="pg_procmem preloaded" if label == "on" else "not preloaded")
        for j, m in enumerate(names):
            ax.plot([j + i * 0.38] * len(tps[m][label]), tps[m][label], "k.", markersize=4)
    ax.set_xticks([j + 0.19 for j in range(len(names))])
    ax.set_xticklabels(names)
    ax.set_ylabel("transactions per second (median; dots: each run)")
    ax.set_title("pgbench with and without pg_procmem preloaded")
    ax.legend()
    fig.tight_layout()
    fig.savefig(result_path(f"{a.name}.png"), dpi=110)
    print(f"wrote bench/results/{a.name}.md")


if __name__ == "__main__":
    main()
