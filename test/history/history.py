"""The memory history (TAP): the sampler, the ring, the file, crash restarts.

Run as root by scripts/test against a throwaway cluster of its own, which
this test stops and starts (as user postgres) with other settings, and whose
history file it damages on purpose:

    PG_BIN=... CLUSTER_DIR=... SERVER_OPTS='-c ...' python3 test/history/history.py
"""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "py"))
from tap import ok, done, rows, value, execute

PG_BIN = os.environ["PG_BIN"]
CLUSTER = os.environ["CLUSTER_DIR"]
DATA = os.path.join(CLUSTER, "data")
LOG = os.path.join(CLUSTER, "server.log")
OPTS = os.environ.get("SERVER_OPTS", "")
HFILE = os.path.join(DATA, "pg_stat_tmp", "pg_procmem.history")
# the interval goes in postgresql.auto.conf: a command-line setting would
# hide the ones made with ALTER SYSTEM
PRELOAD = "-c shared_preload_libraries=pg_procmem"


def pg_ctl(*args):
    subprocess.run(["runuser", "-u", "postgres", "--", "env", "LD_LIBRARY_PATH=" + os.environ.get("PG_LIBPATH", ""),
                    os.path.join(PG_BIN, "pg_ctl"), "-D", DATA,
                    "-l", LOG, "-w", "-t", "60"] + list(args), check=True, capture_output=True)


def start(extra=""):
    pg_ctl("start", "-o", " ".join([OPTS, PRELOAD, extra]))


def stop(mode="fast"):
    pg_ctl("stop", "-m", mode)


def log_size():
    return os.path.getsize(LOG)


def log_since(offset):
    with open(LOG, errors="replace") as f:
        f.seek(offset)
        return f.read()


def samples():
    return int(value("SELECT count(*) FROM pg_procmem_history_system"))


def wait_until(cond, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            if cond():
                return True
        except subprocess.CalledProcessError:
            pass                        # the server is (re)starting
        time.sleep(0.2)
    return False


def session(sql, appname="history-test"):
    """A psql session that runs sql, then waits on its input."""
    p = subprocess.Popen([os.environ.get("PSQL", "psql"), "-X", "-q", "-o", "/dev/null"],
                         stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         text=True, env=dict(os.environ, PGAPPNAME=appname))
    p.stdin.write(sql + "\n")
    p.stdin.flush()
    return p


def close(p):
    try:
        p.stdin.close()
    except OSError:
        pass
    p.wait(30)


def pid_of(appname):
    return value("SELECT pid FROM pg_stat_activity WHERE application_name = '%s'" % appname)


def grows():
    """New samples arrive: the sampler runs."""
    n = samples()
    return wait_until(lambda: samples() > n, 10)


# --- the sampler and what it records ---------------------------------------

def sampler():
    r = rows("SELECT backend_type, datname FROM pg_stat_activity WHERE backend_type = 'pg_procmem sampler'")
    ok(len(r) == 1 and r[0]["datname"] is None,
       "the sampler is a background worker in pg_stat_activity, connected to no database", r)
    ok(grows(), "it samples every second (pg_procmem.sample_interval = 1s)")

    idle = session("SELECT 1;", "history-idle")
    busy = session("SELECT pg_sleep(4), 'history busy marker';", "history-busy")
    try:
        wait_until(lambda: pid_of("history-busy") and pid_of("history-idle"))
        ipid, bpid = pid_of("history-idle"), pid_of("history-busy")
        n = samples()
        wait_until(lambda: samples() >= n + 2, 10)
        last = rows("SELECT * FROM pg_procmem_history WHERE sampled_at = "
                    "(SELECT max(sampled_at) FROM pg_procmem_history_system)")
        by_pid = {r["pid"]: r for r in last}
        i, b = by_pid.get(ipid), by_pid.get(bpid)
        ok(i is not None and i["state"] == "idle" and i["datname"] == "postgres" and i["usename"] == "postgres"
           and i["application_name"] == "history-idle" and i["backend_type"] == "client backend",
           "an idle session's row says who it is", i)
        ok(b is not None and b["state"] == "active" and "history busy marker" in (b["query"] or "")
           and b["query_id"] is not None and b["query_start"] is not None,
           "a running query's row has its text and query_id", b)
        live = {r["pid"] for r in rows("SELECT pid FROM pg_procmem_backends")}
        both = {r["pid"] for r in rows(
            "SELECT pid FROM pg_procmem_backends WHERE backend_start < "
            "(SELECT max(sampled_at) FROM pg_procmem_history_system) OR backend_type IS DISTINCT FROM 'client backend'")}
        missing = both - set(by_pid) - {value("SELECT pg_backend_pid()")}
        ok(len(missing) <= 1 and {"postmaster", "checkpointer", "pg_procmem sampler"} <= {r["backend_type"] for r in last},
           "the last sample has the processes pg_procmem_backends shows (the same membership rule)",
           "live %s, sampled %s, missing %s" % (sorted(live), sorted(by_pid), sorted(missing)))
        sane = [r for r in last if r["overhead"] is not None and r["rss"] is not None and not (
            int(r["private_anon"] or 0) <= int(r["rss"]) and int(r["page_tables"]) <= int(r["overhead"])
            <= int(r["rss"]) + int(r["page_tables"]) + int(r["swap"] or 0))]
        ok(not sane and all(r["overhead"] is not None for r in last),
           "every process's figures hold together: private_anon <= rss, page_tables <= overhead <= rss + page_tables + swap",
           sane)
        with open("/proc/%s/status" % ipid) as f:
            pte = [int(l.split()[1]) * 1024 for l in f if l.startswith("VmPTE:")][0]
        ok(abs(int(i["page_tables"]) - pte) <= 64 * 1024,
           "an idle backend's page_tables agree with an independent read of /proc/PID/status (%s vs %s)"
           % (i["page_tables"], pte))
        q = rows("SELECT * FROM pg_procmem_query_memory WHERE query LIKE '%%history busy marker%%'")
        ok(len(q) == 1 and int(q[0]["samples"]) >= 2 and int(q[0]["backends"]) == 1
           and int(q[0]["max_overhead"]) >= int(q[0]["mean_overhead"]) > 0,
           "pg_procmem_query_memory ranks the query by the memory its backend held while running it", q)
        s = rows("SELECT * FROM pg_procmem_history_system ORDER BY sampled_at DESC LIMIT 1")[0]
        ok(int(s["processes"]) == len(last) and int(s["mem_available"]) <= int(s["mem_total"])
           and float(s["sample_ms"]) > 0 and int(s["connections"]) >= 2,
           "the system row: processes sampled, MemAvailable <= MemTotal, the sample's cost, connections counted", s)
    finally:
        close(idle)
        close(busy)


def terminated():
    """pg_terminate_backend() on the sampler: the postmaster starts it again."""
    old = value("SELECT pid FROM pg_stat_activity WHERE backend_type = 'pg_procmem sampler'")
    execute("SELECT pg_terminate_backend(%s)" % old)
    new = wait_until(lambda: value("SELECT pid FROM pg_stat_activity WHERE backend_type = 'pg_procmem sampler'")
                     not in (None, old), 30)
    ok(new and grows(), "a sampler ended with pg_terminate_backend() comes back and samples again")


def intervals():
    execute("ALTER SYSTEM SET pg_procmem.sample_interval = 0")
    execute("SELECT pg_reload_conf()")
    time.sleep(1.5)
    n = samples()
    time.sleep(3)
    ok(samples() == n, "interval 0 on SIGHUP: no more samples")
    execute("ALTER SYSTEM SET pg_procmem.sample_interval = '2s'")
    execute("SELECT pg_reload_conf()")
    ok(grows(), "a new interval on SIGHUP: sampling again")
    time.sleep(4.5)
    gaps = rows("SELECT extract(epoch FROM sampled_at - lag(sampled_at) OVER (ORDER BY sampled_at)) AS gap "
                "FROM pg_procmem_history_system ORDER BY sampled_at DESC LIMIT 2")
    ok(all(1.5 < float(g["gap"]) < 2.5 for g in gaps), "... every 2 s now", gaps)
    execute("ALTER SYSTEM SET pg_procmem.sample_interval = '1s'")
    execute("SELECT pg_reload_conf()")


# --- crash restarts and restarts -------------------------------------------

def crash():
    victim = session("SELECT pg_sleep(60), 'history victim marker';", "history-victim")
    wait_until(lambda: pid_of("history-victim"))
    pid = int(pid_of("history-victim"))
    n = samples()
    wait_until(lambda: samples() >= n + 2, 10)
    os.kill(pid, 9)
    close(victim)
    ok(wait_until(lambda: value("SELECT count(*) FROM pg_procmem_crashes") == "1", 60),
       "after kill -9 of a backend and the crash restart, pg_procmem_crashes has a row")
    c = rows("SELECT * FROM pg_procmem_crashes")[0]
    ok(c["killed_pid"] == str(pid) and c["how_known"] == "postmaster log" and c["signal"] == "9"
       and c["guessed_pid"] is None and "PID %d" % pid in c["logged"],
       "... naming the killed pid, from the postmaster's own log message", c)
    ok("history victim marker" in (c["query"] or "") and c["backend_type"] == "client backend"
       and int(c["overhead"]) > 0 and 0 <= float(c["seconds_since_sample"]) < 3
       and str(pid) in c["top_pids"],
       "... with its query, its memory at the last sample, less than 3 s before the crash", c)
    h = rows("SELECT count(*) AS n, max(sampled_at) < (SELECT crashed_at FROM pg_procmem_crashes) AS before "
             "FROM pg_procmem_history WHERE pid = %d" % pid)[0]
    ok(int(h["n"]) >= 2 and h["before"] == "t", "its samples from before the crash are in pg_procmem_history", h)
    ok(grows(), "the sampler is back after the crash restart")
    page = os.path.join(CLUSTER, "report.html")
    subprocess.run([os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "report"),
                    "-o", page], check=True, capture_output=True)
    with open(page) as f:
        doc = f.read()
    crash_part = doc[doc.find('id="crashes"'):] if 'id="crashes"' in doc else ""
    ok("PID %d" % pid in crash_part and "history victim marker" in crash_part and "stroke-dasharray" in doc,
       "scripts/report: a crash section naming the pid and its query, the crash marked on the charts")
    return pid


def restarts(pid):
    before = value("SELECT count(*) FROM pg_procmem_history WHERE pid = %d" % pid)
    stop()
    start()
    ok(value("SELECT count(*) FROM pg_procmem_history WHERE pid = %d" % pid) == before
       and value("SELECT count(*) FROM pg_procmem_crashes") == "1",
       "a clean restart keeps the history and the crash, and adds no crash")
    n = samples()
    wait_until(lambda: samples() >= n + 2, 10)
    stop("immediate")
    start()
    c = rows("SELECT * FROM pg_procmem_crashes ORDER BY crashed_at DESC LIMIT 1")[0]
    ok(value("SELECT count(*) FROM pg_procmem_crashes") == "2" and c["how_known"] == "unclean stop"
       and c["killed_pid"] is None and c["last_sample_at"] is not None,
       "a stop without shutdown (immediate) is a row too: an unclean stop, no pid claimed", c)

    # a crash in a run that took no sample: nothing of an earlier run is its
    execute("ALTER SYSTEM SET pg_procmem.sample_interval = 0")
    stop()
    start()
    victim = session("SELECT pg_sleep(60);", "history-unsampled")
    wait_until(lambda: pid_of("history-unsampled"))
    os.kill(int(pid_of("history-unsampled")), 9)
    close(victim)
    wait_until(lambda: value("SELECT count(*) FROM pg_procmem_crashes") == "3", 60)
    c = rows("SELECT * FROM pg_procmem_crashes ORDER BY number DESC LIMIT 1")[0]
    ok(c["number"] == "3" and c["how_known"] == "postmaster log" and c["last_sample_at"] is None
       and c["query"] is None and c["top_pids"] == "{}",
       "a crash before its run's first sample: the pid from the log, no earlier run's sample", c)
    execute("ALTER SYSTEM SET pg_procmem.sample_interval = '1s'")
    execute("SELECT pg_reload_conf()")


# --- the file ---------------------------------------------------------------

def damaged(name, damage, expect, keeps_crashes=False):
    """Stops, damages the file, starts: one LOG line, and a sampler that works."""
    crashes = value("SELECT count(*) FROM pg_procmem_crashes")
    stop()
    with open(HFILE, "rb") as f:
        good = f.read()
    with open(HFILE, "wb") as f:
        f.write(damage(good))
    at = log_size()
    start()
    ok(grows(), "%s file: the server starts and the sampler works" % name)
    lines = [l for l in log_since(at).splitlines() if "pg_procmem" in l and "history file" in l]
    ok(len(lines) == 1 and expect in lines[0], "... one LOG line says what was wrong", lines)
    with open(HFILE, "rb") as f:
        head = f.read(8)
    ok(head[:4] == good[:4] and head[4:8] == good[4:8], "... and the file is replaced by a good one")
    if keeps_crashes:
        ok(value("SELECT count(*) FROM pg_procmem_crashes") == crashes and int(crashes) >= 2,
           "... whose crash rows are kept (%s)" % crashes)


def files():
    import struct
    damaged("a truncated", lambda b: b[:len(b) - 100], "cut short after")
    damaged("a too large", lambda b: b + b"\0" * (80 << 20), "more than the", keeps_crashes=True)
    damaged("a garbage", lambda b: os.urandom(len(b)), "not a pg_procmem history file")
    damaged("a future version's", lambda b: b[:4] + struct.pack("<I", 99) + b[8:], "another version")
    stop()
    os.unlink(HFILE)
    subprocess.run(["runuser", "-u", "postgres", "--", "mkfifo", HFILE], check=True)
    at = log_size()
    start()                             # must not wait for a writer
    ok(grows() and os.path.isfile(HFILE) and "not a regular file" in log_since(at),
       "a FIFO in the file's place: the server starts, says so once, and a regular file replaces it")
    stop()
    os.unlink(HFILE)
    start()
    ok(grows(), "no file at all: a fresh history, silently")


def wrap():
    """A tiny ring (64 kB: about a hundred entries) wraps around."""
    stop()
    start("-c pg_procmem.history_size=64kB")
    idle = [session("SELECT 1;", "history-wrap") for _ in range(8)]
    try:
        wait_until(lambda: value("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'history-wrap'") == "8")
        first = value("SELECT min(sampled_at) FROM pg_procmem_history_system")
        # 17 entries a sample at least: 107 entries hold 6 samples
        time.sleep(10)
        s = rows("SELECT count(*) AS samples, min(sampled_at) AS oldest, "
                 "(SELECT count(*) FROM pg_procmem_history) AS rows FROM pg_procmem_history_system")[0]
        ok(int(s["samples"]) + int(s["rows"]) <= 65536 // 608 and s["oldest"] > first,
           "the ring keeps only the newest samples (at most 107 entries): the oldest moved on", s)
        orphans = value("SELECT count(*) FROM pg_procmem_history h WHERE NOT EXISTS "
                        "(SELECT FROM pg_procmem_history_system s WHERE s.sampled_at = h.sampled_at)")
        ok(orphans == "0", "every process row belongs to a whole sample the ring still has")
        ok(os.path.getsize(HFILE) <= 2 * 64 * 1024 + 64 * 1024,
           "the file stays within its bound (%d bytes)" % os.path.getsize(HFILE))
    finally:
        for p in idle:
            close(p)
    stop()
    start()


def main():
    start()
    execute("CREATE EXTENSION IF NOT EXISTS pg_procmem")
    execute("ALTER SYSTEM SET pg_procmem.sample_interval = '1s'")
    execute("SELECT pg_reload_conf()")
    sampler()
    terminated()
    intervals()
    pid = crash()
    restarts(pid)
    files()
    wrap()
    stop()
    done()


main()
