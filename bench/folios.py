#!/usr/bin/env python3
"""overhead with the heap in transparent huge pages (large folios), against the truth.

With transparent_hugepage = always a large sort's memory is mapped in 2 MB
folios. Where the kernel keeps the pagemap "exclusively mapped" bit per folio
and conservatively (CONFIG_NO_PAGE_MAPCOUNT, Linux >= 6.15 with it set), an
exact count could under-read; this kernel says whether it does here. One
backend holds a sorted cursor (work_mem large enough to sort in memory);
its overhead and the classic Pss_Anon + VmPTE are read, then it is
terminated: the truth is what the cluster's memory cgroup loses.

Changes /sys/kernel/mm/transparent_hugepage/enabled (host-wide) and puts
back what it found, also on failure. Run through bench/run folios, as root.
Writes bench/results/folios.md.
"""
import argparse
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from overhead import Cluster, fmt_kb, result_path, wait_reaped  # noqa: E402

THP = "/sys/kernel/mm/transparent_hugepage/enabled"


def thp_mode():
    with open(THP) as f:
        return re.search(r"\[(\w+)\]", f.read()).group(1)


def set_thp(mode):
    with open(THP, "w") as f:
        f.write(mode)


def rollup_kb(pid, key):
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    return 0


def config_value(name):
    """A kernel build option from /boot/config-RELEASE or /proc/config.gz."""
    import gzip
    for path, opener in ((f"/boot/config-{os.uname().release}", open), ("/proc/config.gz", gzip.open)):
        try:
            with opener(path, "rt") as f:
                for line in f:
                    if line.startswith(name + "="):
                        return line.strip().split("=", 1)[1]
                    if line.startswith(f"# {name} is not set"):
                        return "not set"
        except OSError:
            pass
    return "unknown"


def one(mode, rows, port):
    set_thp(mode)
    cl = Cluster(64, False, 10, port, extra={"work_mem": "4GB"})
    try:
        mon = cl.connect()
        mon.execute("CREATE EXTENSION pg_procmem")
        b = cl.connect()
        pid = b.info.backend_pid
        b.execute("BEGIN")
        b.execute(f"DECLARE c NO SCROLL CURSOR FOR SELECT g FROM generate_series(1, {rows}) g "
                  "ORDER BY g DESC")
        b.execute("FETCH 1 FROM c")
        r = mon.execute("SELECT overhead, private_anon, page_tables, kernel, "
                        "pss_anon + page_tables FROM pg_procmem_process(%s, true)", (pid,)).fetchone()
        huge = rollup_kb(pid, "AnonHugePages")
        before = cl.usage()
        mon.execute("SELECT pg_terminate_backend(%s)", (pid,))
        wait_reaped([pid])
        after = cl.usage()
        b.close()
        mon.close()
        return {"thp": mode, "rows": rows, "overhead": r[0], "private_anon": r[1], "page_tables": r[2],
                "kernel": r[3], "pss_anon_pte": r[4], "anon_huge": huge, "freed": before - after}
    finally:
        cl.stop()


def report(res, command):
    md = ["# overhead with the heap in transparent huge pages", "",
          f"Reproduce: `{command}` (as root). Linux {os.uname().release}; "
          f"CONFIG_NO_PAGE_MAPCOUNT {config_value('CONFIG_NO_PAGE_MAPCOUNT')}. One backend holds "
          "an in-memory sort of the rows below (a cursor, work_mem 4GB); the truth is what the "
          "cluster's memory cgroup freed when it was terminated.", "",
          "| transparent_hugepage | rows sorted | AnonHugePages | Pss_Anon + VmPTE | overhead "
          "| cgroup freed | error (overhead) | error (estimate) |",
          "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in res:
        e = r["overhead"] - r["freed"]
        e2 = r["pss_anon_pte"] - r["freed"]
        md.append(f"| {r['thp']} | {r['rows']:,} | {fmt_kb(r['anon_huge'])} kB | {fmt_kb(r['pss_anon_pte'])} kB "
                  f"| {fmt_kb(r['overhead'])} kB | {fmt_kb(r['freed'])} kB "
                  f"| {e / 1024:+,.1f} kB ({e / r['freed'] * 100:+.2f}%) "
                  f"| {e2 / 1024:+,.1f} kB ({e2 / r['freed'] * 100:+.2f}%) |")
    md += ["", "Where the kernel is built with CONFIG_NO_PAGE_MAPCOUNT (an option since Linux "
           "6.15), pagemap's \"exclusively mapped\" bit for a page of a large folio says whether "
           "the folio *may* be mapped by another process, which errs towards shared: pages of a "
           "folio once shared copy-on-write with the postmaster can count in cow_shared_anon "
           "instead of private_anon, and overhead under-reads by them. A sort's folios are "
           "allocated by the backend itself and never shared, so they read exactly either way.", "",
           "Raw:", "", "```json", json.dumps(res, indent=1), "```", ""]
    with open(result_path("folios.md"), "w") as f:
        f.write("\n".join(md))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=20_000_000)
    ap.add_argument("--port", type=int, default=int(os.environ.get("PGPORT", "5583")))
    a = ap.parse_args()
    saved = thp_mode()
    res = []
    try:
        for mode in ("never", "always"):
            res.append(one(mode, a.rows, a.port))
            print(json.dumps(res[-1]))
    finally:
        set_thp(saved)
    report(res, "bench/run folios")


if __name__ == "__main__":
    main()
