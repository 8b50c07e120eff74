#!/usr/bin/env python3
"""What a backend costs the kernel itself, and whether it can be counted.

pg_procmem's overhead (exclusive anonymous pages + page tables) misses a
constant ~108 kB per backend against what the cgroup frees when it exits
(bench/results/overhead.md): kernel memory no /proc file attributes to a
process. This study (issue 16) checks a model built only from each process's
own counts, before it goes into C:

  kernel stack   threads x THREAD_SIZE (MemInfo KernelStack / threads on the host)
  page table top the PGD, 4 kB (8 kB with page-table isolation)
  per process    task_struct, mm_struct, signal, sighand, files, fs, pid, cred
  per mapping    vm_area_struct; an anon_vma and two anon_vma_chains for each
                 mapping with anonymous pages (the maple tree's nodes, about one
                 per 10 mappings, are freed too but not charged to the cgroup:
                 left out, as src/linux/kernel.c leaves them)
  per open file  struct file (shared ones, inherited from the postmaster, are
                 not freed when the backend exits: counted only when the
                 postmaster does not hold the same file)
  per socket     sock_inode_cache + the protocol's sock (UNIX or TCP)

Object sizes come from /sys/kernel/slab/<cache>/slab_size (root-only; the
fallback table the C code will need is printed beside them), plus 8 bytes an
object for the memory cgroup's object pointer. The truth is what the
cluster's cgroup gains per connection opened and loses per connection closed.

Run through bench/run kernel, as root. Writes bench/results/kernel.md.
"""
import argparse
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from overhead import Cluster, fmt_kb, result_path, wait_reaped  # noqa: E402

CACHES = ["task_struct", "mm_struct", "signal_cache", "sighand_cache", "files_cache",
          "fs_cache", "pid", "cred_jar", "vm_area_struct", "anon_vma", "anon_vma_chain",
          "maple_node", "filp", "sock_inode_cache", "UNIX", "TCP"]
OBJCG = 8  # the memory cgroup's pointer per object


def slab_sizes():
    sizes = {}
    for c in CACHES:
        try:
            with open(f"/sys/kernel/slab/{c}/slab_size") as f:
                sizes[c] = int(f.read())
        except OSError:
            sizes[c] = None
    return sizes


def thread_size():
    """KernelStack / every thread on the host, rounded to a power of two."""
    with open("/proc/meminfo") as f:
        ks = next(int(line.split()[1]) * 1024 for line in f if line.startswith("KernelStack:"))
    threads = sum(len(os.listdir(f"/proc/{p}/task")) for p in os.listdir("/proc")
                  if p.isdigit() and os.path.exists(f"/proc/{p}/task"))
    per = ks / threads
    size = 4096
    while size * 1.5 < per:
        size *= 2
    return size, per


def pgd_size():
    try:
        with open("/sys/devices/system/cpu/vulnerabilities/meltdown") as f:
            return 8192 if "PTI" in f.read() else 4096
    except OSError:
        return 4096


def fd_targets(pid):
    out = set()
    d = f"/proc/{pid}/fd"
    for fd in os.listdir(d):
        try:
            out.add(os.readlink(os.path.join(d, fd)))
        except OSError:
            pass
    return out


def counts(pid, pm_files):
    c = {"threads": 0, "vmas": 0, "anon_vmas": 0, "own_files": 0, "sockets": 0}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("Threads:"):
                c["threads"] = int(line.split()[1])
    anon = 0
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            if line[0] in "0123456789abcdef" and "-" in line.split()[0]:
                c["vmas"] += 1
                if anon:
                    c["anon_vmas"] += 1
                anon = 0
            elif line.startswith("Anonymous:") and int(line.split()[1]) > 0:
                anon = 1
    c["anon_vmas"] += anon
    for t in fd_targets(pid):
        # the same pipe or socket in the postmaster is one shared struct file
        if t in pm_files:
            continue
        c["own_files"] += 1
        if t.startswith("socket:"):
            c["sockets"] += 1
    return c


def model(c, sizes, stack, pgd):
    s = lambda k: (sizes[k] or 0) + OBJCG
    fixed = sum(s(k) for k in ["task_struct", "mm_struct", "signal_cache", "sighand_cache",
                                "files_cache", "fs_cache", "pid", "cred_jar"])
    return {
        "stack": c["threads"] * stack,
        "pgd": pgd,
        "process": fixed,
        "mappings": c["vmas"] * s("vm_area_struct")
        + c["anon_vmas"] * (s("anon_vma") + 2 * s("anon_vma_chain")),
        "files": c["own_files"] * s("filp") + c["sockets"] * (s("sock_inode_cache") + s("UNIX")),
    }


def run(n, port, touched_mb):
    cl = Cluster(touched_mb, False, n, port)
    res = {"connections": n}
    conns = []
    try:
        mon = cl.connect()
        mon.execute("CREATE EXTENSION pg_procmem")
        pm = int(open(os.path.join(cl.data, "postmaster.pid")).readline())
        u0 = cl.usage()
        for _ in range(n):
            conns.append(cl.connect())
        pids = [c.info.backend_pid for c in conns]
        u1 = cl.usage()
        pm_files = fd_targets(pm)
        rows = {r[0]: r[1:] for r in mon.execute(
            "SELECT pid, overhead, kernel FROM pg_procmem_backends WHERE pid = ANY(%s)", (pids,)).fetchall()}
        sizes = slab_sizes()
        stack, per_thread = thread_size()
        pgd = pgd_size()
        per = []
        for p in pids:
            c = counts(p, pm_files)
            per.append((rows[p], model(c, sizes, stack, pgd), c))
        for c in conns:
            c.close()
        conns = []
        wait_reaped(pids)
        u2 = cl.usage()
        res.update({
            "added": (u1 - u0) / n, "freed": (u1 - u2) / n,
            "overhead": statistics.mean(r[0][0] for r in per),
            # the C model's share of overhead (NULL where the fds were unreadable)
            "kernel": statistics.mean(r[0][1] or 0 for r in per),
            "model": {k: statistics.mean(r[1][k] for r in per) for k in per[0][1]},
            "counts": {k: statistics.mean(r[2][k] for r in per) for k in per[0][2]},
            "slab_size": sizes, "thread_size": stack, "kernel_stack_per_thread": per_thread, "pgd": pgd,
        })
        mon.close()
    finally:
        for c in conns:
            c.close()
        cl.stop()
    return res


def report(r, command):
    kernel = sum(r["model"].values())
    # overhead holds src/linux/kernel.c's share already; the study's model stands
    # beside it, to be compared part by part
    est = r["overhead"] if r.get("kernel") else r["overhead"] + kernel
    md = ["# What a backend costs the kernel", "",
          f"Reproduce: `{command}` (as root). Linux {os.uname().release}, {r['connections']} idle "
          "connections, huge_pages off.", "",
          "Per connection, kB. The truth is what the cluster's memory cgroup gained per connection "
          "opened and lost per connection closed.", "",
          "| cgroup added | cgroup freed | overhead | of it, kernel (src/linux/kernel.c) | this study's model "
          "| error (freed) |",
          "|---:|---:|---:|---:|---:|---:|",
          f"| {fmt_kb(r['added'])} | {fmt_kb(r['freed'])} | {fmt_kb(r['overhead'])} | {fmt_kb(r.get('kernel') or 0)} "
          f"| {fmt_kb(kernel)} | {(est - r['freed']) / 1024:+.1f} kB |", "",
          "The model's parts (mean per backend, kB):", "",
          "| part | kB |", "|---|---:|"]
    md += [f"| {k} | {v / 1024:.1f} |" for k, v in r["model"].items()]
    md += ["", "The counts behind them (mean per backend):", "", "| count | mean |", "|---|---:|"]
    md += [f"| {k} | {v:.1f} |" for k, v in r["counts"].items()]
    md += ["", f"THREAD_SIZE {r['thread_size']} (KernelStack per thread on the host: "
           f"{r['kernel_stack_per_thread']:.0f} bytes); PGD {r['pgd']} bytes.", "",
           "Slab sizes read from /sys/kernel/slab (root-only: the table C needs without root):", "",
           "| cache | slab_size |", "|---|---:|"]
    md += [f"| {k} | {v} |" for k, v in r["slab_size"].items()]
    md += ["", "Raw:", "", "```json", json.dumps(r, indent=1), "```"]
    with open(result_path("kernel.md"), "w") as f:
        f.write("\n".join(md) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--connections", type=int, default=100)
    ap.add_argument("--touched-mb", type=int, default=256)
    ap.add_argument("--port", type=int, default=int(os.environ.get("PGPORT", "5581")))
    a = ap.parse_args()
    r = run(a.connections, a.port, a.touched_mb)
    print(json.dumps(r, indent=1))
    report(r, "bench/run kernel")


if __name__ == "__main__":
    main()
