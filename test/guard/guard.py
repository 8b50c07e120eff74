"""The memory guard and the per-backend limit, under load (TAP).

Run as root by scripts/test (every major) against a cluster preloaded
with pg_procmem, which it gives pg_procmem.guard = on and
pg_procmem.guard_terminate = on by ALTER SYSTEM (the threshold at its
default, 90 %), inside a memory cgroup of its own
($GUARD_CGROUP), with pgbench running 100 clients from outside that
cgroup:

  limit     a superuser's SET of pg_procmem.max_backend_memory, and a
            role's ALTER ROLE ... SET: a sort past it gets SQLSTATE 53200
            with the figure, the limit and the setting's name; a role may
            not set it itself; a query under it runs
  slow      with the cgroup at 1.5 GB: a sort growing at about 300 MB/s
            (these four GUARD_RUNS times: 1; the proof: 10)
  fast      the same sort, unthrottled
  parallel  a sort in a leader and two parallel workers: one group, whose
            leader is canceled
  sessions  sessions that each fill 100 MB of temp_buffers and stay idle:
            nothing to cancel, so the guard ends them, largest first

For each: the hog's client gets the guard's error (53200), the guard's
action names it and what it gave back, the cgroup's OOM kill counter does
not move, there is no crash restart, and pgbench has no failed
transaction; the guard acted on no pgbench connection. Then, without
pgbench:

  advice    the memory_guard check counts them and names the largest
  stuck     idle sessions holding temp_buffers over the threshold, with
            guard_terminate off: short statements (a DBA's) are not
            canceled, and one WARNING names the largest holder
  restart   a crash restart keeps the actions, as measured
  cache     a file read again and again in the cgroup, for GUARD_STEADY
            seconds (15; scripts/test: 60 in the extras, else skipped; the
            proof: 600): its page cache fills the cgroup to its limit;
            nothing canceled, nothing logged
  steady    sessions holding temp_buffers keep the cgroup at 82-88% of its
            limit for GUARD_STEADY seconds: nothing canceled, nothing logged
  dry_run   (threshold 60 %) the slow sort is said to be canceled, once,
            and runs on until its own limit (1100MB) stops it
  off       the fast sort ends in an OOM kill

    PG_BIN=... CLUSTER_DIR=... GUARD_CGROUP=... python3 test/guard/guard.py
"""
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "py"))
from cluster import (LOG, LOAD, Recorder, wait_until, session, close, cgroup_memory_limit, cgroup_figures,  # noqa: E402
                     crash, alter_system, login_role, pgbench, pgbench_init, paced_sort, temp_buffers, sparse_file,
                     drop_cache, read_in_cgroup)
from tap import ok, section, skip_rest, done, rows, value, execute  # noqa: E402

CGROUP = os.environ.get("GUARD_CGROUP", "")
LIMIT = 1536 << 20
PSQL = os.environ.get("PSQL", "psql")
DBA = "guard_dba"               # pg_monitor only
LIMITED = "guard_limited"       # a role with its own limit
ETL_APP = "guard-etl"
SORT = paced_sort(300000)       # about 300 MB/s
FAST = ("SELECT count(*) FROM (SELECT g, repeat('x', 1000) AS pad FROM generate_series(1, 400000000) AS g "
        "ORDER BY g DESC, pad) AS s;")
# pgbench_accounts (scale 5: 500,000 rows) sorted with 3.2 kB of padding a row, by a leader and two workers
PARALLEL = ("SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0;\n"
            "SELECT count(*) FROM (SELECT aid, repeat(md5(aid::text), 100) AS pad FROM pgbench_accounts "
            "ORDER BY pad, aid) AS s;")
TEMP = temp_buffers(100)
# half as much: steps of about 3% of the limit
TEMP_HALF = temp_buffers(50)
# how long the checks for no false cancel hold (0: skipped), and how many
# times the incidents run (the proof: GUARD_STEADY=600 GUARD_RUNS=10)
STEADY = int(os.environ.get("GUARD_STEADY", "15"))
RUNS = int(os.environ.get("GUARD_RUNS", "1"))
FILE_SIZE = 3 << 30


def psql(sql, user=None, app="guard-test", timeout=180):
    """Runs sql in its own session; its result and errors, verbose (SQLSTATE)."""
    env = dict(os.environ, PGAPPNAME=app)
    if user:
        env["PGUSER"] = user
    return subprocess.run([PSQL, "-X", "-v", "VERBOSITY=verbose", "-f", "-"], input=sql, capture_output=True,
                          text=True, env=env, timeout=timeout)


def used():
    """The cgroup's use the kernel cannot reclaim, as the guard counts it,
    and its usage."""
    fig = cgroup_figures(CGROUP)
    return fig["used"], fig["current"]


def guard_lines(log_from):
    with open(LOG, errors="replace") as f:
        f.seek(log_from)
        return [l for l in f.read().splitlines() if "pg_procmem guard:" in l or "53200" in l]


def oom_kills():
    """The cgroup's OOM kill counter (v2 memory.events, v1 memory.oom_control)."""
    for name in ("memory.events", "memory.oom_control"):
        path = os.path.join(CGROUP, name)
        if os.path.exists(path):
            with open(path) as f:
                for line in f:
                    k, _, v = line.partition(" ")
                    if k == "oom_kill":
                        return int(v)
    return None


def actions(since):
    return rows("SELECT action_number, pid, action, reason, processes, held, limit_bytes, used, given_back, "
                "application_name, query FROM pg_procmem_guard_actions WHERE action_number > %d "
                "ORDER BY action_number" % since, "user=%s dbname=postgres" % DBA)


def last_action():
    return int(value("SELECT coalesce(max(action_number), 0) FROM pg_procmem_guard_actions"))


def backend_limit():
    """pg_procmem.max_backend_memory, set by a superuser in a session and for a role."""
    r = psql("SET pg_procmem.max_backend_memory = '150MB';\nSET work_mem = '2GB';\n" + FAST)
    ok("ERROR:  53200: canceling statement because this backend held" in r.stderr and
       "over pg_procmem.max_backend_memory (150MB)" in r.stderr,
       "limit: a sort past a superuser's SET of 150MB gets SQLSTATE 53200 naming the figure and the limit",
       r.stderr)
    r = psql("SET pg_procmem.max_backend_memory = '1GB';", user=LIMITED)
    ok("permission denied to set parameter" in r.stderr,
       "limit: a role may not set pg_procmem.max_backend_memory itself", r.stderr)
    r = psql("SET work_mem = '2GB';\n" + FAST, user=LIMITED)
    ok("53200" in r.stderr and "(150MB)" in r.stderr,
       "limit: ALTER ROLE ... SET pg_procmem.max_backend_memory limits the role's sessions", r.stderr)
    r = psql("SELECT count(*) FROM generate_series(1, 100000);", user=LIMITED)
    ok(r.returncode == 0 and "100000" in r.stdout, "limit: a query under the limit runs", r.stderr)
    # where the log hook does not reach (docs/guard.md, "What the client sees")
    r = psql("SET log_min_messages = fatal; SET pg_procmem.max_backend_memory = '150MB'; SET work_mem = '2GB';\n"
             + FAST)
    ok("ERROR:  57014: canceling statement due to user request" in r.stderr,
       "limit: with log_min_messages above error, the client sees a plain cancel (57014)", r.stderr)
    r = psql("SET pg_procmem.max_backend_memory = '150MB'; SET work_mem = '2GB';\n"
             "DO $$ DECLARE n int := 0; BEGIN\n"
             "  FOR i IN 1..2 LOOP\n"
             "    BEGIN PERFORM count(*) FROM (SELECT g, repeat('x', 1000) AS pad FROM generate_series(1, 400000000) "
             "AS g ORDER BY g DESC, pad) AS s;\n"
             "    EXCEPTION WHEN query_canceled THEN n := n + 1; RAISE NOTICE 'caught % (%)', SQLSTATE, n; END;\n"
             "  END LOOP; END $$;")
    ok(r.stderr.count("NOTICE:  00000: caught 57014") == 2 and "ERROR" not in r.stderr,
       "limit: a block that catches query_canceled sees 57014, and the limit cancels its next statement too",
       r.stderr)
    a = [x for x in actions(0) if x["reason"] == "backend limit"]
    good = [x for x in a if x["action"] == "cancel" and int(x["held"]) > int(x["limit_bytes"]) == 150 << 20
            and x["given_back"] is not None and int(x["given_back"]) > int(x["held"]) // 2]
    ok(len(a) == 2 and len(good) == 2,
       "limit: the two cancels the client saw as such are on record (not those the hook did not see), each "
       "having held more than the limit and given back over half", a)


def hog(name, sql, processes=1):
    """A sort in the cgroup until the guard cancels it; the guard's action."""
    before = last_action()
    t0 = time.time()
    # the session stays a moment after the error: what it gives back is measured while it lives
    r = psql("SET work_mem = '8GB';\n" + sql + "\nSELECT pg_sleep(2.5);", app="guard-" + name)
    took = time.time() - t0
    a = actions(before)
    print("# %s: ended after %.1f s: %s" % (name, took, r.stderr.strip().splitlines()[-3:]))
    for x in a:
        print("# %s: action %s" % (name, dict(x)))
    said = ("this backend held the most memory" if processes == 1 else
            "this backend and its %d parallel workers held the most memory" % (processes - 1))
    ok("ERROR:  53200: canceling statement because " + said in r.stderr and
       "cgroup's memory reached" in r.stderr and "pg_procmem.guard_threshold (90%)" in r.stderr,
       "%s: the hog's client gets the guard's error (53200, the figures, the threshold)" % name, r.stderr)
    mine = [x for x in a if x["application_name"] == "guard-" + name]
    ok(len(mine) >= 1 and mine[0]["action"] == "cancel" and mine[0]["reason"] == "server limit"
       and int(mine[0]["used"]) >= int(mine[0]["limit_bytes"]) * 0.9 and int(mine[0]["processes"]) == processes,
       "%s: the guard's action names the hog (%d processes), at 90%% of the cgroup's limit or more"
       % (name, processes), a)
    wait_until(lambda: actions(before)[0]["given_back"] is not None, 5)
    a = actions(before)
    mine = [x for x in a if x["application_name"] == "guard-" + name]
    ok(mine and mine[0]["given_back"] is not None and int(mine[0]["given_back"]) >= int(mine[0]["held"]) // 2,
       "%s: the hog gave back at least half of what it held (%s of %s bytes)"
       % (name, mine and mine[0]["given_back"], mine and mine[0]["held"]), a)
    return a


def temp_sessions():
    """Sessions filling temp_buffers and staying idle: the guard ends them."""
    before = last_action()
    started = []
    try:
        for _ in range(20):
            started.append(session(TEMP, ETL_APP))
            time.sleep(0.7)
            if [x for x in actions(before) if x["action"] == "terminate"]:
                break
        wait_until(lambda: [x for x in actions(before) if x["action"] == "terminate"], 10)
    finally:
        for p in started:
            close(p)
    # what a session gave back is recorded at the guard's next look after
    # the action (50 ms): the last one may not have it yet
    wait_until(lambda: all(x["given_back"] is not None for x in actions(before) if x["action"] == "terminate"), 10)
    a = actions(before)
    for x in a:
        print("# sessions: action %s" % dict(x))
    ends = [x for x in a if x["action"] == "terminate"]
    ok(ends and all(x["application_name"] == ETL_APP for x in a),
       "sessions: the guard ended %d of the temp_buffers sessions, and acted on nothing else" % len(ends), a)
    ok(ends and all(int(x["given_back"] or 0) >= 50 << 20 for x in ends),
       "sessions: each session ended gave back at least 50 MB", ends)
    return a


def run_started():
    """When the server's processes last started: the checkpointer's start (a
    crash restart starts it again; pg_postmaster_start_time() stays)."""
    return value("SELECT backend_start FROM pg_stat_activity WHERE backend_type = 'checkpointer'")


def advice():
    """The advice's memory_guard check, as a pg_monitor role: the counts
    agree with the actions, and it names the largest."""
    a = actions(0)
    canceled = len([x for x in a if x["action"] == "cancel"])
    ended = len([x for x in a if x["action"] == "terminate"])
    largest = max(a, key=lambda x: int(x["held"]))
    r = rows("SELECT severity, summary, evidence FROM pg_procmem_advice WHERE check_name = 'memory_guard'",
             "user=%s dbname=postgres" % DBA)
    ok(len(r) == 1 and r[0]["severity"] == "warning" and
       r[0]["summary"] == "memory guard: %d canceled, %d ended in the last day" % (canceled, ended) and
       ("pid %s " % largest["pid"]) in r[0]["evidence"] and
       ("application %s" % largest["application_name"]) in r[0]["evidence"],
       "advice: memory_guard, a warning, counts %d canceled and %d ended and names the largest (pid %s)"
       % (canceled, ended, largest["pid"]), r)


def fill(started, app, share):
    """Sessions holding 50 MB of temp_buffers each, idle, until the cgroup's
    unreclaimable use reaches share of its limit (into started, for the
    caller to close)."""
    while used()[0] < share * LIMIT and len(started) < 40:
        started.append(session(TEMP_HALF, app))
        wait_until(lambda: value("SELECT count(*) FROM pg_stat_activity WHERE application_name = "
                                 "'%s' AND state = 'idle'" % app) == str(len(started)), 30, 0.1)


def page_cache():
    """A 3 GB file read in the cgroup: its page cache fills the cgroup to
    its limit, which is no pressure: nothing canceled, nothing logged. The
    file is sparse, on disk (a hole reads into the page cache as data does)."""
    before, log_from = last_action(), os.path.getsize(LOG)
    d = tempfile.mkdtemp(prefix="pg_procmem_guard.", dir="/var/tmp")
    path = os.path.join(d, "big")
    rec = Recorder(used)
    try:
        sparse_file(path, FILE_SIZE)
        end = time.time() + STEADY
        while time.time() < end:
            drop_cache(path)
            dd = read_in_cgroup(CGROUP, path)
    finally:
        readings = rec.stop()
        os.unlink(path)
        os.rmdir(d)
    peak = max(u for _, u in readings)
    top = max(x for x, _ in readings)
    ok(dd.returncode == 0 and peak >= 0.95 * LIMIT and not actions(before) and not guard_lines(log_from),
       "page cache: the cgroup at %.0f%% of its limit (its unreclaimable part at most %.0f%%) for %d s: "
       "nothing canceled, nothing logged" % (peak * 100.0 / LIMIT, top * 100.0 / LIMIT, STEADY),
       (actions(before), guard_lines(log_from)))


def steady():
    """Sessions holding temp_buffers until the cgroup is at 82-88%, held
    there with the threshold at 90%: nothing canceled, nothing logged."""
    before, log_from = last_action(), os.path.getsize(LOG)
    started = []
    try:
        fill(started, "guard-steady", 0.82)
        rec = Recorder(used)
        time.sleep(STEADY)
        readings = rec.stop()
    finally:
        for p in started:
            close(p)
    low = min(x for x, _ in readings) * 100.0 / LIMIT
    high = max(x for x, _ in readings) * 100.0 / LIMIT
    ok(low >= 80 and high < 90 and not actions(before) and not guard_lines(log_from),
       "steady: %d sessions held the cgroup at %.0f-%.0f%% of its limit for %d s: nothing canceled, nothing logged"
       % (len(started), low, high, STEADY), (actions(before), guard_lines(log_from)))


def set_guard(mode, threshold, terminate=True):
    """The guard's settings, by ALTER SYSTEM (the server's command line sets none: it would win)."""
    alter_system("pg_procmem.guard = '%s'" % mode, "pg_procmem.guard_terminate = %s" % ("on" if terminate else "off"),
                 "pg_procmem.guard_threshold = %d" % threshold)
    time.sleep(1)


def stuck():
    """Idle sessions hold the memory, and pg_procmem.guard_terminate is off:
    the guard cancels no short statement (a DBA's looking for the holder),
    and says once who holds the most."""
    before, log_from = last_action(), os.path.getsize(LOG)
    started = []
    try:
        fill(started, "guard-stuck", 0.84)
        holders = {int(r["pid"]) for r in rows("SELECT pid FROM pg_stat_activity "
                                                "WHERE application_name = 'guard-stuck'")}
        set_guard("on", 80, terminate=False)
        looks = [psql("SELECT pg_sleep(0.5), count(*) FROM pg_procmem_backends;", user=DBA) for _ in range(3)]
        time.sleep(0.5)
        lines = guard_lines(log_from)
    finally:
        set_guard("on", 90)
        for p in started:
            close(p)
    said = [l for l in lines if "no running statement holds 16 MB or more to cancel" in l]
    detail = re.findall(r"The largest client backend, PID (\d+), holds", open(LOG, errors="replace").read()[log_from:])
    ok(all(r.returncode == 0 for r in looks) and not actions(before) and len(said) == 1 and detail
       and int(detail[0]) in holders,
       "stuck: %d idle sessions over the threshold, guard_terminate off: a DBA's 3 looks run, nothing canceled, "
       "one WARNING naming an idle holder" % len(started),
       ([r.stderr for r in looks], actions(before), lines, detail))


def dry_run():
    """dry_run: the slow sort is said to be canceled, once, and runs on
    until its own limit stops it."""
    before = last_action()
    set_guard("dry_run", 60)
    r = psql("SET work_mem = '8GB'; SET pg_procmem.max_backend_memory = '1100MB';\n" + SORT,
             app="guard-dry")
    a = actions(before)
    for x in a:
        print("# dry_run: action %s" % dict(x))
    said = [x for x in a if x["action"] == "would cancel"]
    own = [x for x in a if x["reason"] == "backend limit"]
    ok("53200" in r.stderr and "over pg_procmem.max_backend_memory (1100MB)" in r.stderr,
       "dry_run: the sort ran on until its own limit canceled it", r.stderr)
    ok(len(said) == 1 and said[0]["application_name"] == "guard-dry" and len(a) == 2 and own
       and int(own[0]["held"]) > int(said[0]["held"]) and said[0]["given_back"] is None,
       "dry_run: one 'would cancel' of it at 60% (nothing given back: nothing done), and nothing else but "
       "its own limit's cancel, later", a)


def guard_off():
    """With the guard off, the fast sort ends in an OOM kill."""
    set_guard("off", 90)
    kills = oom_kills()
    r = psql("SET work_mem = '8GB';\n" + FAST, app="guard-off")
    wait_until(lambda: oom_kills() != kills, 10)
    lost = ("server closed the connection unexpectedly" in r.stderr or
            "crash of another server process" in r.stderr)
    ok(oom_kills() == (kills or 0) + 1 and lost,
       "off: the same sort ends in an OOM kill (the cgroup's counter %s, then %s) and its connection is lost"
       % (kills, oom_kills()), r.stderr)
    # the crash restart over, for the cluster's stop
    wait_until(lambda: value("SELECT 1") == "1", 60)


def survives():
    """The actions are in the history file: a crash restart keeps them, as measured."""
    q = ("SELECT action_number, acted_at, pid, action, reason, held, given_back, application_name, query "
         "FROM pg_procmem_guard_actions ORDER BY action_number")
    wait_until(lambda: all(r["given_back"] is not None for r in rows(q)), 10)
    time.sleep(3)                       # the sampler writes them down, measured
    before = rows(q)
    run = run_started()
    crash("guard-victim")
    wait_until(lambda: run_started() not in (run, None) and rows(q) == before, 30)
    after = rows(q)
    ok(len(before) >= 5 and after == before and run_started() != run,
       "a crash restart keeps the %d actions, each as measured" % len(before),
       "before: %s\nafter: %s" % (before, after))


def main():
    with section(19 + 11 * RUNS, "guard"):
        if not CGROUP:
            skip_rest("no memory cgroup could be made for the server here")
        login_role(DBA, "pg_monitor")
        login_role(LIMITED)
        execute("ALTER ROLE %s SET pg_procmem.max_backend_memory = '150MB'" % LIMITED)
        set_guard("on", 90)
        backend_limit()
        pgbench_init(5)
        started = run_started()
        load = pgbench(*LOAD, seconds=55 * RUNS, connected=100, output=True)
        kills = oom_kills()
        try:
            cgroup_memory_limit(CGROUP, LIMIT)
            found = []
            for run in range(RUNS):
                if RUNS > 1:
                    print("# run %d of %d" % (run + 1, RUNS))
                found += (hog("slow", SORT) + hog("fast", FAST) + hog("parallel", PARALLEL, 3) +
                          temp_sessions())
        finally:
            cgroup_memory_limit(CGROUP, None)
        out, _ = load.communicate(timeout=55 * RUNS + 120)
        failed = re.search(r"number of failed transactions: (\d+)", out)
        ok(load.returncode == 0 and (failed is None or failed.group(1) == "0") and "aborted" not in out,
           "pgbench ran its 100 clients to the end with no failed transaction", out)
        ok(not [x for x in found if x["application_name"] == "pgbench"],
           "the guard acted on no pgbench connection", found)
        ok(oom_kills() == kills, "the cgroup's OOM kill counter did not move (%s)" % kills)
        ok(run_started() == started, "no crash restart: the checkpointer started at %s" % started)
        advice()
        survives()
        cgroup_memory_limit(CGROUP, LIMIT)
        try:
            stuck()
            with section(2, "no false cancel"):
                if STEADY <= 0:
                    skip_rest("the checks for no false cancel run in the extras (GUARD_STEADY, PostgreSQL 15)")
                page_cache()
                steady()
            dry_run()
            guard_off()
        finally:
            cgroup_memory_limit(CGROUP, None)
    done()


main()
