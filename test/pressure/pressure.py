"""The pressure watch at its default settings, under load (TAP).

Run as root by scripts/test (every major) against a cluster preloaded at
the default settings (sample_interval 10 s, the watch every 100 ms,
thresholds 75 and 90 %, pressure_sample_interval 1 s) inside a memory
cgroup of its own ($PRESSURE_CGROUP), with pgbench running 100 clients from
outside that cgroup. The cgroup gets a limit of 1.5 GB, no swap:

  cache  a process in the cgroup reads a 3 GB file once: the page cache
         fills the cgroup to its limit, and the kernel can drop all of it.
         No fast sampling: over the read and 12 s after, the samples stay
         ~10 s apart, none marked with pressure from the cgroup.
  hog    a sort grows at about 300 MB/s from just after a sample until
         the kernel kills it. The history, read after the crash restart
         by a pg_monitor role, has at least three samples of it, its
         overhead growing, at most ~1 s apart, marked under pressure.

The cgroup's figures (memory.stat) are read every 50 ms meanwhile: the
diagnostics show what the watch saw, and the hog's real growth rate.

    PG_BIN=... CLUSTER_DIR=... PRESSURE_CGROUP=... python3 test/pressure/pressure.py
"""
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "py"))
from cluster import (LOG, LOAD, Recorder, cgroup_memory_limit, cgroup_figures, wait_until, grows, newest,  # noqa: E402
                     session, close, pid_of, killed_pid, crash_row, login_role, psql_as, pgbench, pgbench_init,
                     paced_sort, sparse_file, read_in_cgroup)
from tap import ok, section, skip_rest, done, rows, readme_questions, width  # noqa: E402

CGROUP = os.environ.get("PRESSURE_CGROUP", "")
LIMIT = 1536 << 20
FILE_SIZE = 3 << 30
HOT_SIZE = 1 << 30                      # read three times: active page cache
DBA = "pressure_dba"            # pg_monitor only
HOG_APP = "pressure-hog"
# regular samples are 10 s apart; fast ones (1 s, or 250 ms) far less
REGULAR_GAP = 9.0
FAST_GAP = 1.5
# the guard's slow sort: about 300 MB/s
HOG = "SET work_mem = '8GB';\n" + paced_sort(300000)
# how the history's query (cut at 255 bytes) starts
HOG_START = "SELECT count(*) FROM (SELECT g, repeat(''x'', 1000) AS pad"


def over_time(readings, t0, step=0.5):
    """One line of figures (MB) every step seconds from t0."""
    out, next_t = [], t0
    for t, f in readings:
        if t >= next_t:
            out.append("%5.1f s: current %5d, anon %5d, inactive_file %5d, active_file %5d, watch's used %5d (%2.0f%%)"
                       % (t - t0, f["current"] >> 20, f["anon"] >> 20, f["inactive_file"] >> 20,
                          f["active_file"] >> 20, f["used"] >> 20, f["used"] * 100.0 / LIMIT))
            next_t = t + step
    return out


def system_samples(since):
    return rows("SELECT sample, extract(epoch FROM sampled_at) AS t, pressure, pressure_source, pressure_used, "
                "pressure_limit FROM pg_procmem_history_system WHERE sample >= %d ORDER BY sample" % since,
                "user=%s dbname=postgres" % DBA)


def gaps(times):
    return [round(b - a, 2) for a, b in zip(times, times[1:])]


def after_sample():
    """Waits for a new sample; returns its number."""
    grows(15, 0.05)
    return newest()


def page_cache():
    """A 3 GB file read once by a process in the cgroup: the page cache
    fills it, which is no pressure. The file is sparse (its holes are read
    into the page cache as data is: the cgroup's inactive_file grows the
    same)."""
    d = tempfile.mkdtemp(prefix="pg_procmem_pressure.", dir="/var/tmp")
    path, hot = os.path.join(d, "big"), os.path.join(d, "hot")
    try:
        sparse_file(path, FILE_SIZE)
        sparse_file(hot, HOT_SIZE)
        start = after_sample()
        rec = Recorder(lambda: (time.time(), cgroup_figures(CGROUP)))
        t0 = time.time()
        dd = read_in_cgroup(CGROUP, path)
        read_s = time.time() - t0
        # a hot table: read three times, its pages go to the active list, page cache all the same
        for _ in range(3):
            read_in_cgroup(CGROUP, hot)
        time.sleep(12)
        readings = rec.stop()
    finally:
        for p in (path, hot):
            if os.path.exists(p):
                os.unlink(p)
        os.rmdir(d)
    peak = max((f["current"] for _, f in readings), default=0)
    active = max((f["active_file"] for _, f in readings), default=0)
    used = max((f["used"] for _, f in readings), default=0)
    figures = over_time(readings, t0)
    print("# cache: read %d MB in %.1f s (dd: %s); the cgroup's peak %d MB of %d (%.0f%%), the watch's used at "
          "most %d MB (%.0f%%)" % (FILE_SIZE >> 20, read_s, dd.stderr.strip().splitlines()[-1:], peak >> 20,
                                   LIMIT >> 20, peak * 100.0 / LIMIT, used >> 20, used * 100.0 / LIMIT))
    print("\n".join("# cache: " + l for l in figures[:8]))
    ok(dd.returncode == 0 and peak >= 0.9 * LIMIT,
       "cache: reading a %d MB file filled the cgroup to %d MB, at least 90%% of its limit (%d MB)"
       % (FILE_SIZE >> 20, peak >> 20, LIMIT >> 20), "\n".join(figures) + "\n" + dd.stderr)
    ok(active >= HOT_SIZE // 2,
       "cache: a %d MB file read three times put %d MB on the active list (at least half of it)"
       % (HOT_SIZE >> 20, active >> 20), "\n".join(figures))
    s = system_samples(start)
    g = gaps([float(r["t"]) for r in s])
    ok(len(s) >= 2 and min(g) >= REGULAR_GAP,
       "cache: over the read and 12 s after, %d samples at least %.0f s apart (no fast sampling): %s"
       % (len(s), REGULAR_GAP, g), "\n".join(figures))
    marked = [r for r in s if r["pressure"]]
    ok(not any(r["pressure_source"] == "cgroup" for r in marked),
       "cache: no sample over the read is marked with pressure from the cgroup", marked)
    for r in marked:
        print("# cache: sample %s marked %s from the %s (%s of %s bytes): other work on this host"
              % (r["sample"], r["pressure"], r["pressure_source"], r["pressure_used"], r["pressure_limit"]))


def growth_rate(readings):
    """MB/s of the cgroup's anonymous memory, over the hog's steady part:
    from 200 MB above where it started to its peak."""
    if not readings:
        return 0.0, 0
    base = readings[0][1]["anon"]
    top_i = max(range(len(readings)), key=lambda i: readings[i][1]["anon"])
    first = next((r for r in readings[:top_i + 1] if r[1]["anon"] >= base + (200 << 20)), None)
    top = readings[top_i]
    if first is None or top[0] - first[0] < 0.5:
        return 0.0, top[1]["anon"]
    return (top[1]["anon"] - first[1]["anon"]) / (top[0] - first[0]) / (1 << 20), top[1]["anon"]


def hog():
    """A sort growing at about 300 MB/s from just after a sample until the
    kernel kills it."""
    log_from = os.path.getsize(LOG)
    start = after_sample()
    rec = Recorder(lambda: (time.time(), cgroup_figures(CGROUP)))
    t0 = time.time()
    p = session(HOG, HOG_APP)
    try:
        wait_until(lambda: pid_of(HOG_APP), 10, 0.05)
        pid = pid_of(HOG_APP)
        killed = killed_pid(log_from) if wait_until(lambda: killed_pid(log_from), 60, 0.1) else None
        grew_s = time.time() - t0
        readings = rec.stop()
    finally:
        close(p)
    rate, top = growth_rate(readings)
    print("# hog: PID %s grew at %.0f MB/s (the cgroup's anon, %d MB at its peak), killed (PID %s) %.1f s after "
          "it started" % (pid, rate, top >> 20, killed, grew_s))
    print("\n".join("# hog: " + l for l in over_time(readings, t0)))
    ok(pid is not None and killed == pid, "hog: the kernel killed the hog (PID %s; the postmaster logged %s)"
       % (pid, killed))
    # read once the crash restart is over
    crash_row(killed or 0)
    h = rows("SELECT sample, extract(epoch FROM sampled_at) AS t, overhead FROM pg_procmem_history "
             "WHERE pid = %d AND state = 'active' AND query LIKE '%s%%' ORDER BY sample" % (pid or 0, HOG_START),
             "user=%s dbname=postgres" % DBA)
    s = {r["sample"]: r for r in system_samples(start)}
    over = [int(r["overhead"]) for r in h]
    ok(len(h) >= 3 and all(b > a for a, b in zip(over, over[1:])),
       "hog: %d samples of it before the kill, its overhead growing (%s MB)" % (len(h), [o >> 20 for o in over]),
       h)
    times = [float(s[str(start)]["t"])] if str(start) in s else []
    g = gaps(times + [float(r["t"]) for r in h])
    ok(len(h) >= 1 and len(g) == len(h) and max(g) <= FAST_GAP,
       "hog: from the sample it started after, its samples at most %.1f s apart: %s" % (FAST_GAP, g), s)
    # README's question, as a DBA asks it after the restart
    q = next(q for question, q in readme_questions()[0] if "run short lately" in question)
    r = psql_as(DBA, q, "postgres")
    widest = max((width(l) for l in r.stdout.splitlines()), default=0)
    ok(r.returncode == 0 and "critical" in r.stdout and "cgroup" in r.stdout and widest <= 80,
       "hog: README's question names the critical samples and the cgroup in %d columns (80 at most)" % widest,
       r.stdout + r.stderr)
    levels = [(s.get(r["sample"]) or {}).get("pressure") for r in h]
    sources = [(s.get(r["sample"]) or {}).get("pressure_source") for r in h]
    ok(h and all(levels) and set(sources) == {"cgroup"} and "critical" in levels,
       "hog: its samples are marked under pressure from the cgroup, critical at the end: %s" % levels,
       [s.get(r["sample"]) for r in h])


def main():
    with section(9, "pressure"):
        if not CGROUP:
            skip_rest("no memory cgroup could be made for the server here")
        login_role(DBA, "pg_monitor")
        pgbench_init(5)
        load = pgbench(*LOAD, connected=100)
        try:
            # after pgbench's connections: their start is growth the watch sees
            cgroup_memory_limit(CGROUP, LIMIT)
            page_cache()
            hog()
        finally:
            cgroup_memory_limit(CGROUP, None)
            load.terminate()
            load.wait(30)
    done()


main()
