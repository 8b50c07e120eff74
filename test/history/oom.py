"""A real OOM kill, and the post-mortem the memory history gives (TAP).

Run as root by scripts/test (PostgreSQL 15 suites) against a preloaded
cluster sampling every 500 ms inside a memory cgroup of its own
($OOM_CGROUP). It gives the cgroup a 3 GB limit and no swap, runs a sort
with work_mem = 8GB until the kernel kills that backend, and then asks the
history, after the crash restart and after a clean restart, what happened.
The limit is removed at the end.

    PG_BIN=... CLUSTER_DIR=... SERVER_OPTS=... OOM_CGROUP=... python3 test/history/oom.py
"""
import os
import re
import subprocess
import time

from cluster import PG_BIN, DATA, LOG, cgroup_memory_limit
from tap import ok, skip, done, rows, value, readme_questions, width

CGROUP = os.environ.get("OOM_CGROUP", "")
LIMIT = 3 << 30
MARKER = "pg_procmem oom test"
SORT = ("SET work_mem = '8GB'; SELECT count(*) FROM (SELECT g FROM generate_series(1, 300000000) g "
        "ORDER BY g DESC) s /* %s */;" % MARKER)


def cg(name):
    return os.path.join(CGROUP, name)


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def into_cgroup():
    write(cg("cgroup.procs"), str(os.getpid()))


def limit(on):
    """3 GB and no swap."""
    cgroup_memory_limit(CGROUP, LIMIT if on else None)


def wait_for(cond, timeout):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            r = cond()
            if r:
                return r
        except subprocess.CalledProcessError:
            pass                        # the server is restarting
        time.sleep(0.5)
    return None


def killed_pid(log_from):
    with open(LOG, errors="replace") as f:
        f.seek(log_from)
        m = re.search(r"server process \(PID (\d+)\) was terminated by signal 9", f.read())
    return int(m.group(1)) if m else None


def main():
    if not CGROUP:
        skip(9, "no memory cgroup could be made for the server here")
        done()
    log_from = os.path.getsize(LOG)
    limit(True)
    try:
        p = subprocess.Popen([os.environ.get("PSQL", "psql"), "-X", "-q", "-c", SORT],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        p.wait(300)
        pid = wait_for(lambda: killed_pid(log_from), 30)
    finally:
        limit(False)
    ok(pid is not None, "the kernel's OOM killer took the sorting backend (PID %s, from the server log)" % pid)
    if pid is None:
        done()
    c = wait_for(lambda: rows("SELECT * FROM pg_procmem_crashes WHERE killed_pid = %d" % pid), 60)
    ok(c and len(c) == 1, "after the crash restart, pg_procmem_crashes names PID %d" % pid, c)
    c = c[0] if c else {}
    ok(c.get("how_known") == "postmaster log" and c.get("signal") == "9",
       "... and says how it knows: the postmaster's own log message, signal 9", c)
    ok(c.get("cgroup_oom_kills") is not None and int(c["cgroup_oom_kills"]) >= 1,
       "... and that the cgroup's oom_kill counter rose", c)
    ok(MARKER in (c.get("query") or "") and c.get("backend_type") == "client backend",
       "... with the query it was running", c)

    h = rows("SELECT sampled_at, overhead, context_bytes, state, query FROM pg_procmem_history "
             "WHERE pid = %d ORDER BY sampled_at" % pid)
    active = [r for r in h if r["state"] == "active" and MARKER in (r["query"] or "")]
    ok(len(active) >= 2, "pg_procmem_history has its samples from before the crash, running the query", h)
    ok(len(active) >= 2 and int(active[-1]["overhead"]) > int(active[0]["overhead"]) + (100 << 20),
       "... growing by more than 100 MB between its first and last sample",
       [(r["sampled_at"], r["overhead"]) for r in active])
    ok(len(active) >= 1 and int(active[-1]["overhead"]) > LIMIT // 4,
       "... its last sample holds more than a quarter of the cgroup's limit", active[-1:] if active else None)

    # the post-mortem as docs/history.md shows it
    for q in ("SELECT crashed_at, how_known, killed_pid, signal, cgroup_oom_kills, seconds_since_sample, "
              "backend_type, pg_size_pretty(overhead) AS overhead, left(query, 60) AS query FROM pg_procmem_crashes",
              "SELECT sampled_at, pg_size_pretty(overhead) AS overhead, pg_size_pretty(context_bytes) AS contexts, "
              "state FROM pg_procmem_history WHERE pid = %d ORDER BY sampled_at" % pid):
        out = subprocess.run([os.environ.get("PSQL", "psql"), "-X", "-x" if "crashes" in q else "-q", "-c", q],
                             capture_output=True, text=True).stdout
        for line in out.splitlines():
            print("# " + line)
    # README's question, "what was using memory before the OOM kill?": one
    # terminal line, naming the pid, the cost and the start of the query
    q = next(q for question, q in readme_questions()[0] if "before the OOM kill" in question)
    r = subprocess.run([os.environ.get("PSQL", "psql"), "-X", "-P", "pager=off", "-c", q],
                       capture_output=True, text=True)
    widest = max((width(l) for l in r.stdout.splitlines()), default=0)
    ok(r.returncode == 0 and widest <= 80 and ("pid %d, client backend, " % pid) in r.stdout
       and "SET work_mem" in r.stdout,
       "README's crash query prints %d columns at most (80): pid, type, overhead, query" % widest,
       r.stdout + r.stderr)

    # a clean restart, in the cgroup, keeps it all
    subprocess.run(["runuser", "-u", "postgres", "--", os.path.join(PG_BIN, "pg_ctl"), "-D", DATA, "-l", LOG,
                    "-w", "-t", "60", "-m", "fast", "restart", "-o", os.environ.get("SERVER_OPTS", "")],
                   check=True, capture_output=True, preexec_fn=into_cgroup)
    n = value("SELECT count(*) FROM pg_procmem_history WHERE pid = %d" % pid)
    ok(n == str(len(h)) and value("SELECT count(*) FROM pg_procmem_crashes WHERE killed_pid = %d" % pid) == "1",
       "after a clean restart the killed backend's samples and the crash are still there", n)
    done()


main()
