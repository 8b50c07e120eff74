#!/usr/bin/env python3
"""What a monitoring scrape of pg_procmem costs the backend that runs it.

Two clusters side by side, identical but for shared_preload_libraries
(pg_procmem or nothing), each with N idle connections. A scrape is every
query of a list, run one after another from one monitoring connection; its
cost is that backend's CPU time over the scrape (/proc/PID/schedstat, the
time on a CPU, so that waiting for a core on a busy machine does not count).
The lists: the queries of monitoring/postgres_exporter/pg_procmem.yaml as
main's HEAD has it (every view that needs the processes reads them live),
and the generated files' (`scripts/monitoring --queries`: its "scrape" tier,
run at every scrape, and its "slow" tier, every 5 minutes); without
scripts/monitoring, a stand-in: the same file with its per-process queries
reading pg_procmem_latest. Scrapes of each list and cluster alternate, after
one not counted (the session's caches).

Run through `bench/run scrape`, as root (PG_MAJOR=17). Writes
bench/results/<name>.md and PNG.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from overhead import Cluster, pyplot, result_path  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXPORTER_FILE = "monitoring/postgres_exporter/pg_procmem.yaml"
GENERATOR = os.path.join(REPO, "scripts", "monitoring")
# The last commit whose exporter file has every view read the processes live
# (as 1.2.0's did): the old way.
OLD_REF = "6ef4dccb4bf976f074feadc30d46e18f160da652"

# The stand-in for the generated queries: the exporter file's, with the
# per-process groups reading the newest sample instead of /proc.
STAND_IN = {
    "pg_procmem_backend_type": """
        SELECT backend_type, pg_catalog.count(*) AS processes, pg_catalog.sum(overhead) AS overhead_bytes,
               pg_catalog.sum(page_tables) AS page_tables_bytes, pg_catalog.sum(rss) AS rss_bytes,
               pg_catalog.count(*) FILTER (WHERE state OPERATOR(pg_catalog.=) 'idle') AS idle,
               pg_catalog.sum(overhead) FILTER (WHERE state OPERATOR(pg_catalog.=) 'idle') AS idle_overhead_bytes
        FROM public.pg_procmem_latest GROUP BY backend_type""",
    "pg_procmem_top_process": """
        SELECT rank::pg_catalog.text AS rank, backend_type, pid, overhead AS overhead_bytes,
               page_tables AS page_tables_bytes, rss AS rss_bytes
        FROM (SELECT pg_catalog.row_number() OVER (ORDER BY overhead DESC NULLS LAST, pid) AS rank, *
              FROM public.pg_procmem_latest) AS b
        WHERE rank OPERATOR(pg_catalog.<=) 5""",
    "pg_procmem_oom": """
        SELECT backend_type, pg_catalog.count(*) AS processes, pg_catalog.max(oom_score) AS max_oom_score,
               pg_catalog.min(rank) AS best_rank, pg_catalog.count(*) FILTER (WHERE oom_protected) AS protected
        FROM (SELECT pg_catalog.rank() OVER (ORDER BY oom_score DESC) AS rank, *
              FROM public.pg_procmem_latest) AS o
        GROUP BY backend_type""",
}


def exporter_queries(ref):
    """The exporter file's queries at git ref: [(group, query)]."""
    text = subprocess.run(["git", "-C", REPO, "show", f"{ref}:{EXPORTER_FILE}"], check=True,
                          capture_output=True, text=True).stdout
    return [(group, spec["query"]) for group, spec in yaml.safe_load(text).items()]


def generated(generator):
    out = subprocess.run([generator, "--queries"], check=True, capture_output=True, text=True).stdout
    tiers = {"scrape": [], "slow": []}
    for q in json.loads(out):
        # the opt-in groups (per-process series) apart from the default ones
        tiers.setdefault(q["tier"] + (", opt-in" if q.get("opt_in") else ""), []).append((q["group"], q["query"]))
    return tiers


def new_queries(ref, new_ref):
    """The generated files' queries: {tier: [(group, query)]}, and where they came from:
    this checkout's scripts/monitoring, else new_ref's, else a stand-in."""
    if os.access(GENERATOR, os.X_OK):
        return generated(GENERATOR), "`scripts/monitoring --queries`"
    if subprocess.run(["git", "-C", REPO, "cat-file", "-e", f"{new_ref}:scripts/monitoring"],
                      capture_output=True).returncode == 0:
        with tempfile.TemporaryDirectory() as d:
            subprocess.run(f"git -C {REPO} archive {new_ref} scripts monitoring | tar -x -C {d}",
                           shell=True, check=True)
            rev = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", new_ref], check=True,
                                 capture_output=True, text=True).stdout.strip()
            return generated(os.path.join(d, "scripts", "monitoring")), \
                f"`scripts/monitoring --queries` of `{new_ref}` ({rev})"
    standin = [(g, STAND_IN.get(g, q)) for g, q in exporter_queries(ref)]
    return {"scrape": standin, "slow": []}, \
        f"a stand-in (no scripts/monitoring yet): {EXPORTER_FILE} with {', '.join(STAND_IN)} reading pg_procmem_latest"


def cpu_ns(pid):
    with open(f"/proc/{pid}/schedstat") as f:
        return int(f.read().split()[0])


def scrape(conn, pid, queries):
    """One scrape: (the backend's CPU ms, per query CPU ms)."""
    per = {}
    start = before = cpu_ns(pid)
    for group, q in queries:
        conn.execute(q).fetchall()
        after = cpu_ns(pid)
        per[group] = (after - before) / 1e6
        before = after
    return (before - start) / 1e6, per


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--name", default="scrape")
    ap.add_argument("--connections", type=int, default=200)
    ap.add_argument("--scrapes", type=int, default=20)
    ap.add_argument("--old-ref", default=OLD_REF, help="the git ref whose exporter file is the old way")
    ap.add_argument("--hogs", type=int, default=0, metavar="N",
                    help="N busy loops at nice 0 while the scrapes run (a loaded host)")
    ap.add_argument("--new-ref", default="main",
                    help="where scripts/monitoring comes from when this checkout has none")
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("run as root")

    lists = {"old": exporter_queries(a.old_ref)}
    tiers, new_from = new_queries(a.old_ref, a.new_ref)
    for tier, queries in tiers.items():
        if queries:
            lists[f"new, {tier}"] = queries

    clusters, idle, mons = {}, [], {}
    cpu = {}                    # (cluster, list) -> [ms per scrape]
    per_query = {}              # (cluster, list) -> {group: [ms]}
    sources = {}
    try:
        for label, port, extra in (("not preloaded", 5622, {}),
                                   ("preloaded", 5623, {"shared_preload_libraries": "pg_procmem"})):
            cl = Cluster(64, False, a.connections + 5, port, extra=extra)
            clusters[label] = cl
            mon = cl.connect()
            mon.execute("CREATE EXTENSION pg_procmem")
            idle += [cl.connect() for _ in range(a.connections)]
            mons[label] = (mon, mon.execute("SELECT pg_backend_pid()").fetchone()[0])
        # a sample that saw every idle connection (the sampler's interval: 10 s)
        mon = mons["preloaded"][0]
        for _ in range(120):
            if mon.execute("SELECT count(*) FROM pg_procmem_history_latest(true)").fetchone()[0] > a.connections:
                break
            time.sleep(0.5)
        for label, (mon, pid) in mons.items():
            sources[label] = mon.execute("SELECT source, count(*) FROM pg_procmem_latest GROUP BY 1").fetchall()
            if label == "preloaded":
                processes = mon.execute("SELECT count(*) FROM pg_procmem_processes()").fetchone()[0]
            for name, queries in lists.items():
                scrape(mon, pid, queries)           # not counted: the session's caches
                cpu[label, name], per_query[label, name] = [], {g: [] for g, _ in queries}
        hogs = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(a.hogs)]
        load0 = os.getloadavg()[0]
        for r in range(a.scrapes):
            order = [(c, n) for c in mons for n in lists]
            for label, name in (order if r % 2 == 0 else list(reversed(order))):
                mon, pid = mons[label]
                ms, per = scrape(mon, pid, lists[name])
                cpu[label, name].append(ms)
                for g, v in per.items():
                    per_query[label, name][g].append(v)
            print(f"scrape {r + 1}: " + ", ".join(f"{c}/{n} {cpu[c, n][-1]:.1f} ms" for c, n in order), flush=True)
        load1 = os.getloadavg()[0]
    finally:
        for h in locals().get("hogs", []):
            h.kill()
            h.wait()
        for c in idle:
            c.close()
        for mon, _ in mons.values():
            mon.close()
        for cl in clusters.values():
            cl.stop()

    argv = " ".join(sys.argv[1:])
    lines = [f"# What a monitoring scrape costs: {a.name}", "",
             f"Reproduce: `PG_MAJOR=17 bench/run scrape {argv}`".replace("scrape  ", "scrape ").rstrip() +
             " (as root). Two clusters, identical but for `shared_preload_libraries = 'pg_procmem'` "
             f"(its sampler at its default interval, 10 s), each with {a.connections} idle connections "
             f"({processes} server processes on the preloaded one); {a.scrapes} scrapes of each list on each, "
             f"interleaved; {os.cpu_count()} cores. A scrape runs every query of a list from one connection; "
             "its cost is that backend's CPU time (`/proc/PID/schedstat`).", "",
             "Conditions: " + (f"{a.hogs} busy loops at nice 0 beside the scrapes" if a.hogs else
                              "a quiet host, no busy loop beside the scrapes") +
             f" (1-minute load average {load0:.2f} as they began, {load1:.2f} as they ended).", "",
             f"- old: the queries of {EXPORTER_FILE} at `{a.old_ref[:12]}` ({len(lists['old'])} queries)",
             f"- new: {new_from} ({', '.join(f'{t}: {len(q)} queries' for t, q in tiers.items() if q)}); "
             "the slow tier runs every 5 minutes", "",
             "`pg_procmem_latest` read from: " + "; ".join(
                 f"{c}: {', '.join(f'{s} ({n} rows)' for s, n in rows)}" for c, rows in sources.items()), "",
             "| cluster | queries | median CPU per scrape | max | the costliest queries (median) |",
             "|---|---|---:|---:|---|"]
    for (label, name), v in cpu.items():
        top = sorted(per_query[label, name].items(), key=lambda kv: -statistics.median(kv[1]))[:3]
        lines.append(f"| {label} | {name} | {statistics.median(v):.1f} ms | {max(v):.1f} ms | "
                     + ", ".join(f"{g} {statistics.median(x):.1f} ms" for g, x in top) + " |")
    lines += ["", f"![CPU per scrape]({a.name}.png)", "", "Every query, median CPU ms per scrape:", "",
              "| cluster | queries | " + " | ".join(["query", "median ms"]) + " |", "|---|---|---|---:|"]
    for (label, name), groups in per_query.items():
        for g, x in groups.items():
            lines.append(f"| {label} | {name} | {g} | {statistics.median(x):.2f} |")
    lines += ["", "```json", json.dumps({f"{c} / {n}": v for (c, n), v in cpu.items()}, indent=1), "```", ""]
    with open(result_path(f"{a.name}.md"), "w") as f:
        f.write("\n".join(lines))

    plt = pyplot()
    fig, ax = plt.subplots(figsize=(8, 4.2))
    names = list(lists)
    width = 0.8 / len(mons)
    for i, label in enumerate(mons):
        xs = [j + i * width for j in range(len(names))]
        ax.bar(xs, [statistics.median(cpu[label, n]) for n in names], width, label=label)
        for x, n in zip(xs, names):
            ax.plot([x] * len(cpu[label, n]), cpu[label, n], "k.", markersize=3)
    ax.axhline(100, color="grey", linestyle="--", linewidth=1)
    ax.set_xticks([j + width * (len(mons) - 1) / 2 for j in range(len(names))])
    ax.set_xticklabels(names)
    ax.set_ylabel("backend CPU ms per scrape (median; dots: each scrape)")
    ax.set_title(f"A scrape of pg_procmem at {a.connections} idle connections")
    ax.legend()
    fig.tight_layout()
    fig.savefig(result_path(f"{a.name}.png"), dpi=110)
    print(f"wrote bench/results/{a.name}.md")


if __name__ == "__main__":
    main()
