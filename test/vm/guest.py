"""pg_procmem inside the guest scripts/vm boots: Debian 12's kernel (6.1:
no PAGEMAP_SCAN, so the exact figure comes from the pread path) with
cgroup v2, the server in a memory cgroup of its own ($VM_CGROUP), preloaded
and sampling every second (test/vm/run.sh starts it). TAP.

What it checks, where users run it: the kernel and cgroup mode are those;
the pagemap method read every process without PAGEMAP_SCAN; idle
connections' overhead against what the cgroup frees (test/folios's check,
both settings of pg_procmem.pagemap_ioctls, which 6.1 reads alike); the
pressure stall figures of the machine and of the server's cgroup, and
the cgroup stalled for real (memory.high) raising the pressure watch; the
guard against memory.max with a hog (a cancel, no OOM kill), the pressure
watch raised meanwhile; and the whole
server killed at once with memory.oom.group = 1 (as Kubernetes sets it),
read back at the next start as an unclean stop with the OOM kill counted.
"""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "py"))
sys.path.insert(0, os.path.join(HERE, "..", "folios"))
os.environ.setdefault("FOLIOS_CGROUP", os.environ["VM_CGROUP"])
os.environ.setdefault("FOLIOS_IDLE", "40")
from tap import ok, done, rows, value, execute  # noqa: E402
from cluster import (alter_system, cgroup_memory_limit, cgroup_write, oom_kills, pg_ctl, into_cgroup,  # noqa: E402
                     pressure_avg10, wait_until, grows, statement, finish, OPTS, PRELOAD)
import check as folios  # noqa: E402

CGROUP = os.environ["VM_CGROUP"]
# a sort that grows until something stops it (test/guard's FAST)
HOG = ("SET work_mem = '8GB';\nSELECT count(*) FROM (SELECT g, repeat('x', 1000) AS pad "
       "FROM generate_series(1, 400000000) AS g ORDER BY g DESC, pad) AS s;")


def cg(name):
    with open(os.path.join(CGROUP, name)) as f:
        return f.read().strip()


def platform():
    release = os.uname().release
    with open("/proc/self/mounts") as f:
        v2 = any(line.split()[1] == "/sys/fs/cgroup" and line.split()[2] == "cgroup2" for line in f)
    ok(release.startswith("6.1.") and v2,
       "the guest runs Debian 12's kernel with cgroup v2 unified (Linux %s, cgroup %s)"
       % (release, "v2" if v2 else "not v2"))
    t = rows("SELECT count(*) AS n, count(*) FILTER (WHERE exact) AS scanned FROM pg_procmem_page_tables()")[0]
    ok(int(t["n"]) >= 5 and t["scanned"] == "0",
       "no process's pages were read with PAGEMAP_SCAN (6.1 has none): every overhead here is the pread "
       "path's (%s processes)" % t["n"])


def stall():
    """The newest sample's stall figures: none NULL on 6.1 with cgroup v2;
    the cgroup's as its memory.pressure says, within 10 points."""
    grows(30)
    s = rows("SELECT * FROM pg_procmem_history_system ORDER BY sample DESC LIMIT 1")[0]
    here = pressure_avg10(os.path.join(CGROUP, "memory.pressure"))
    cols = ("psi_some_avg10", "psi_full_avg10", "cgroup_psi_some_avg10", "cgroup_psi_full_avg10")
    ok(all(s[c] is not None for c in cols) and s["psi_unavailable"] is None and
       near(float(s["cgroup_psi_some_avg10"]), here[0]) and near(float(s["cgroup_psi_full_avg10"]), here[1]),
       "the history has the stall of the machine and of the server's cgroup (some/full %s/%s%%, %s/%s%%), "
       "the cgroup's as its memory.pressure says" % tuple(s[c] for c in cols), (s, here))


def near(a, b):
    """Two reads of a stall average a second or two apart: within a point
    and a quarter (it decays by a tenth a second)."""
    return abs(a - b) <= 1 + 0.25 * max(a, b)


def stalled():
    """memory.high 64 MB above the cgroup's use, no memory.max, and a
    growing sort (ended by its statement_timeout): the kernel throttles and
    reclaims, the server's cgroup stalls. The samples show its full stall,
    as its memory.pressure says, and the pressure watch raised by the stall
    alone (no limit's use can raise it)."""
    cgroup_memory_limit(CGROUP, None)       # run.sh's, for the pgTAP files
    first = int(value("SELECT coalesce(max(sample), 0) FROM pg_procmem_history_system"))
    cgroup_write(CGROUP, "memory.high", str(int(cg("memory.current")) + (64 << 20)))
    try:
        r = finish(statement("SET statement_timeout = '20s';\n" + HOG, "vm-stall"), 180)
    finally:
        cgroup_write(CGROUP, "memory.high", "max")
    grows(30)
    s = rows("SELECT max(cgroup_psi_full_avg10) AS cgroup, max(psi_full_avg10) AS machine, "
             "count(*) FILTER (WHERE pressure_source = 'cgroup stall') AS by_stall, "
             "count(*) FILTER (WHERE pressure IS NOT NULL AND pressure_source <> 'cgroup stall') AS by_other "
             "FROM pg_procmem_history_system WHERE sample > %d" % first)[0]
    newest = float(value("SELECT cgroup_psi_full_avg10 FROM pg_procmem_history_system ORDER BY sample DESC LIMIT 1"))
    here = pressure_avg10(os.path.join(CGROUP, "memory.pressure"))[1]
    ok(float(s["cgroup"] or 0) >= 10 and int(s["by_stall"]) >= 1 and int(s["by_other"]) == 0 and near(newest, here),
       "memory.high under a growing sort: the server's cgroup stalled (full %s%% at most; the machine's %s%%), "
       "%s samples raised by the stall alone; the newest %.2f%%, as memory.pressure says (%.2f%%)"
       % (s["cgroup"], s["machine"], s["by_stall"], newest, here), (s, r.stderr[-300:]))


def server_limit(extra):
    """memory.max at the cgroup's use now plus extra bytes (no swap)."""
    cgroup_memory_limit(CGROUP, int(cg("memory.current")) + extra)


def guard():
    """The guard on, the cgroup's limit 400 MB above its use: a growing sort
    is canceled (53200) before the kernel kills anything."""
    alter_system("pg_procmem.guard = 'on'")
    wait_until(lambda: value("SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'pg_procmem guard'") == "1",
               60)
    kills = oom_kills(CGROUP)
    server_limit(400 << 20)
    first = int(value("SELECT coalesce(max(sample), 0) FROM pg_procmem_history_system"))
    try:
        r = statement(HOG, "vm-hog")
        r = finish(r, 600)
    finally:
        cgroup_memory_limit(CGROUP, None)
    a = rows("SELECT action, reason FROM pg_procmem_guard_actions WHERE application_name = 'vm-hog'")
    ok("53200" in r.stderr and oom_kills(CGROUP) == kills and any(x["action"] == "cancel" for x in a),
       "the guard cancels a growing sort at memory.max's threshold, and the kernel killed nothing "
       "(oom_kill %s, then %s)" % (kills, oom_kills(CGROUP)), (r.stderr, a))
    grows(30)
    raised = rows("SELECT pressure, pressure_source, count(*) AS n FROM pg_procmem_history_system WHERE sample > %d "
                  "AND pressure IS NOT NULL GROUP BY 1, 2" % first)
    # (after the cancel its reclaim's stall can hold the level a while: 'cgroup stall')
    ok(any(x["pressure_source"] == "cgroup" for x in raised) and
       all(x["pressure_source"] in ("cgroup", "cgroup stall") for x in raised),
       "the pressure watch saw it coming: samples at a raised level, from the cgroup's limit (%s)"
       % ", ".join("%s %s: %s" % (x["pressure"], x["pressure_source"], x["n"]) for x in raised), raised)
    alter_system("pg_procmem.guard = 'off'")


def killed_whole():
    """The guard off and memory.oom.group = 1: the same sort makes the kernel
    kill every process of the cgroup at once, the postmaster too; the next
    start reads it back as an unclean stop, the OOM kill counted."""
    grows(30)
    pm = value("SELECT pid FROM pg_procmem_processes() WHERE backend_type = 'postmaster'")
    kills = oom_kills(CGROUP)
    with open(os.path.join(CGROUP, "memory.oom.group"), "w") as f:
        f.write("1")
    server_limit(400 << 20)
    try:
        r = statement(HOG, "vm-killed")
        r = finish(r, 600)
        gone = wait_until(lambda: not os.path.exists("/proc/%s" % pm), 60)
    finally:
        cgroup_memory_limit(CGROUP, None)
        with open(os.path.join(CGROUP, "memory.oom.group"), "w") as f:
            f.write("0")
    ok(gone and oom_kills(CGROUP) > kills and r.returncode != 0,
       "memory.oom.group = 1: the kernel killed the whole server, the postmaster too (oom_kill %s, then %s)"
       % (kills, oom_kills(CGROUP)), r.stderr)
    # a postmaster killed leaves its pid file: pg_ctl starts anew when that pid is no one's
    pg_ctl("start", "-o", " ".join([OPTS, PRELOAD]), preexec_fn=into_cgroup(CGROUP))
    wait_until(lambda: value("SELECT count(*) FROM pg_procmem_crashes") != "0", 60)
    c = rows("SELECT how_known, cgroup_oom_kills, oom_killed, killed_pid, report FROM pg_procmem_crashes "
             "ORDER BY number DESC LIMIT 1")
    said = re.search(r"OOM kill counter \+\d+ since [0-9:]+: killed whole\?", c[0]["report"] or "") if c else None
    ok(c and c[0]["how_known"] == "unclean stop" and c[0]["killed_pid"] is None and c[0]["oom_killed"] == "t"
       and int(c[0]["cgroup_oom_kills"] or 0) >= 1 and said,
       "the next start reads it back: an unclean stop, no pid claimed, the OOM kills counted, its report "
       "says '%s'" % (said.group(0) if said else "(not said)"), c)


def main():
    try:
        execute("CREATE EXTENSION IF NOT EXISTS pg_procmem")
        platform()
        folios.idle()
        stall()
        stalled()
        guard()
        killed_whole()
    except Exception as e:           # a failing test, not a traceback
        ok(False, "the guest's checks stopped on an error: %s: %s" % (type(e).__name__, e))
    done()


main()
