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
            nothing to cancel, so the guard ends them, largest first, none
            twice
  phj       a parallel hash join of a 20M-row table with itself (a leader
            and 4 workers, work_mem 4GB): its hash table is in the group's
            own DSM, no process's private memory passes 16 MB; the client
            is told of the DSM

For each: the hog's client gets the guard's error (53200), the guard's
action names it and what it gave back, the cgroup's OOM kill counter does
not move, there is no crash restart, and pgbench has no failed
transaction; the guard acted on no pgbench connection. Then, without
pgbench:

  advice    the memory_guard check counts them and names the largest
  innocent  (cgroup 1.1 GB) a superuser's statement holding 150 MB, no
            longer growing (it waits on a lock), beside a plain role's
            parallel hash join: the join is canceled, not the superuser's
  phj off   (under pgbench again) the parallel hash join with the guard
            off ends in an OOM kill
  holder    a session idle in transaction holding 966 MB of temp_buffers
            and 8 statements growing to 100 MB each: guard_terminate off,
            no OOM kill, the holder kept, one WARNING naming it, only
            growing statements canceled, each client told of the holder;
            on, no OOM kill, the holder ended once (its client told why,
            its row with its user and database), no pid acted on twice, no
            running statement ended
  stuck     idle sessions holding temp_buffers over the threshold, with
            guard_terminate off: short statements (a DBA's) are not
            canceled, and one WARNING names the largest holder
  restart   a crash restart keeps the actions, as measured
  cache     a file read again and again in the cgroup, for GUARD_STEADY
            seconds (15; scripts/test: 60 in the extras, else skipped; the
            proof: 60, --steady 600 for longer): its page cache fills the cgroup to its limit;
            nothing canceled, nothing logged
  steady    sessions holding temp_buffers keep the cgroup at 82-88% of its
            limit for GUARD_STEADY seconds: nothing canceled, nothing logged
  dry_run   (threshold 60 %) the slow sort is said to be canceled, once,
            and runs on until its own limit (1100MB) stops it
  off       the fast sort ends in an OOM kill

and over all of them, with autovacuum on (scripts/test): the guard acted
on nothing but the tests' hogs (by application_name), never an autovacuum
worker, and no action is credited with more than it held. Every psql has a
timeout, and a server gone or a timeout is a failing test, not a hang.

    PG_BIN=... CLUSTER_DIR=... GUARD_CGROUP=... python3 test/guard/guard.py
"""
import os
import re
import subprocess
import sys
import tempfile
import time
import traceback

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "py"))
from cluster import (LOG, LOAD, Recorder, wait_until, session, close, cgroup_memory_limit, cgroup_figures,  # noqa: E402
                     crash, alter_system, login_role, pgbench, pgbench_init, paced_sort, temp_buffers, sparse_file,
                     drop_cache, read_in_cgroup, statement, finish, back, retrying, int_table,
                     oom_kills as cgroup_oom_kills)
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
# a parallel hash join of 20M rows with itself, a leader and 4 workers: its
# hash table, in the group's own dynamic shared memory, grows past 1.2 GB
# (about 8 s on 2 cores); no backend's private memory passes 16 MB
BIG_ROWS = 20000000
PHJ = ("SET work_mem = '4GB'; SET parallel_setup_cost = 0; SET max_parallel_workers_per_gather = 4;\n"
       "SELECT count(*) FROM big a JOIN big b USING (g);")
PLAIN = "guard_plain"           # a plain role: the parallel hash join beside a superuser's statement
SMALL = 1100 << 20              # that incident's cgroup
# a superuser's statement that builds a 150 MB array (18.75M integers) and
# then waits on an advisory lock the test holds: running, not growing
KEPT = ("DO $$ DECLARE a integer[]; BEGIN a := array_fill(0, ARRAY[18750000]); PERFORM pg_advisory_lock(4244);\n"
        "RAISE NOTICE 'kept %', array_length(a, 1); END $$;")
# a statement growing to 100 MB at about 20 MB/s (a text array, 1 MB an
# element), then holding it 3 s
GROW = ("DO $$ DECLARE a text[] := '{}'; BEGIN FOR i IN 1..100 LOOP a := a || repeat('x', 1048000); "
        "PERFORM pg_sleep(0.05); END LOOP; PERFORM pg_sleep(3); END $$;")
GROWERS = 8
# a session idle in transaction holding about 966 MB of temp_buffers
HOLDER = "BEGIN;\n" + temp_buffers(966)
# and one that also has 6,000 (empty) temporary tables, made first: its
# exit drops them, about 1.6 s, before its memory is given back (the issue's
# 1 GB session took about 3 s): a guard that waits less ends others meanwhile
SLOW_EXIT = "".join("DO $$ BEGIN FOR i IN %d..%d LOOP EXECUTE format('CREATE TEMP TABLE h%%s (x int)', i); "
                    "END LOOP; END $$;\n" % (k * 1000 + 1, k * 1000 + 1000) for k in range(6))
TEMP = temp_buffers(100)
# half as much: steps of about 3% of the limit
TEMP_HALF = temp_buffers(50)
# how long the checks for no false cancel hold (0: skipped), and how many
# times the incidents run (the proof, bench/run guard-proof: GUARD_RUNS=10)
STEADY = int(os.environ.get("GUARD_STEADY", "15"))
RUNS = int(os.environ.get("GUARD_RUNS", "1"))
# GUARD_QUICK=1: only a bounded sort past its own limit and one hog in the
# cgroup, about a minute: test/guard/mutations.sh's live check
QUICK = os.environ.get("GUARD_QUICK") == "1"
# about 900 MB in memory, done in seconds: past 150 MB only after the limit's first check
BOUNDED = ("SET statement_timeout = '60s'; SET pg_procmem.max_backend_memory = '150MB'; SET work_mem = '1GB';\n"
           "SELECT count(*) FROM (SELECT g, repeat('x', 1000) AS pad FROM generate_series(1, 800000) AS g "
           "ORDER BY g DESC, pad) AS s;")
FILE_SIZE = 3 << 30


def psql(sql, user=None, app="guard-test", timeout=180):
    """Runs sql in its own session; its result and errors, verbose (SQLSTATE).
    Still running after timeout seconds: ended, and its stderr says so."""
    return finish(statement(sql, app, user), timeout)


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
    """The cgroup's OOM kill counter."""
    return cgroup_oom_kills(CGROUP)


def actions(since):
    return retrying(lambda: rows(
        "SELECT action_number, pid, action, reason, processes, held, limit_bytes, used, given_back, "
        "usename, datname, application_name, query FROM pg_procmem_guard_actions WHERE action_number > %d "
        "ORDER BY action_number" % since, "user=%s dbname=postgres" % DBA))


def last_action():
    return int(retrying(lambda: value("SELECT coalesce(max(action_number), 0) FROM pg_procmem_guard_actions")))


def lost(r):
    """A client's connection lost to a crash (an OOM kill's restart): waits for the server to be back."""
    if "server closed the connection unexpectedly" in r.stderr or "crash of another server process" in r.stderr:
        back()
        return True
    return False


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


def calm(name):
    """Before an incident: the last one's sessions gone (a backend ended or
    left still drops its temp tables, for seconds on a busy machine) and the
    cgroup's use back under 60% of its limit, or 60 s gone by (said). Else
    the incident starts near the threshold, and the guard rightly acts on
    something else first (a session of the last incident, seen on 14)."""
    def quiet():
        left = value("SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE 'guard-%' "
                     "AND application_name <> 'guard-test' AND pid <> pg_backend_pid()")
        return left == "0" and used()[0] < LIMIT * 0.6
    if not wait_until(quiet, 60):
        print("# %s: began with the last incident not over: %s used, sessions %s" % (
            name, used()[0], rows("SELECT pid, application_name, state FROM pg_stat_activity "
                                  "WHERE application_name LIKE 'guard-%'")))


def hog(name, sql, processes=1, dsm=False):
    """A sort (or a join) in the cgroup until the guard cancels it; the
    guard's action. dsm: its memory is its parallel group's own DSM."""
    calm(name)
    before = last_action()
    t0 = time.time()
    # the session stays a moment after the error: what it gives back is measured while it lives
    r = psql("SET work_mem = '8GB';\n" + sql + "\nSELECT pg_sleep(2.5);", app="guard-" + name)
    took = time.time() - t0
    lost(r)
    a = actions(before)
    print("# %s: ended after %.1f s: %s" % (name, took, r.stderr.strip().splitlines()[-3:]))
    for x in a:
        print("# %s: action %s" % (name, dict(x)))
    said = ("it held the most memory of the running statements (" if processes == 1 else
            "it and its %d parallel workers held the most memory of the running statements (" % (processes - 1))
    ok("ERROR:  53200: canceling statement because " + said in r.stderr and
       "cgroup's memory reached" in r.stderr and
       "DETAIL:  pg_procmem.guard acts at pg_procmem.guard_threshold (90%) of the limit." in r.stderr and
       (not dsm or re.search(r"of the running statements \([0-9.]+ [kMG]B, [0-9.]+ [kMG]B of it in dynamic "
                             r"shared memory\)", r.stderr)),
       "%s: the hog's client gets the guard's error (53200, what it held%s, the figures, the threshold)"
       % (name, ", its DSM" if dsm else ""), r.stderr)
    mine = [x for x in a if x["application_name"] == "guard-" + name]
    ok(len(mine) >= 1 and mine[0]["action"] == "cancel" and mine[0]["reason"] == "server limit"
       and int(mine[0]["used"]) >= int(mine[0]["limit_bytes"]) * 0.9 and int(mine[0]["processes"]) == processes,
       "%s: the guard's action names the hog (%d processes), at 90%% of the cgroup's limit or more"
       % (name, processes), a)
    # measured while the group exits (its DSM is freed when its last worker detaches: seconds when busy)
    wait_until(lambda: [x for x in actions(before)[:1] if x["given_back"] is not None
                        and int(x["given_back"]) >= int(x["held"]) // 2], 10)
    a = actions(before)
    mine = [x for x in a if x["application_name"] == "guard-" + name]
    ok(mine and mine[0]["given_back"] is not None and int(mine[0]["given_back"]) >= int(mine[0]["held"]) // 2,
       "%s: the hog gave back at least half of what it held (%s of %s bytes)"
       % (name, mine and mine[0]["given_back"], mine and mine[0]["held"]), a)
    return a


def temp_sessions():
    """Sessions filling temp_buffers and staying idle: the guard ends them."""
    calm("sessions")
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
    # measured until the session exits (seconds on a busy machine)
    wait_until(lambda: all(x["given_back"] is not None and int(x["given_back"]) >= int(x["held"]) // 2
                           for x in actions(before) if x["action"] == "terminate"), 30)
    a = actions(before)
    for x in a:
        print("# sessions: action %s" % dict(x))
    ends = [x for x in a if x["action"] == "terminate"]
    ok(ends and all(x["application_name"] == ETL_APP for x in a) and len({x["pid"] for x in ends}) == len(ends)
       and all(x["usename"] == "postgres" and x["datname"] == "postgres" for x in ends),
       "sessions: the guard ended %d of the temp_buffers sessions (none twice, each row with its user and "
       "database), and acted on nothing else" % len(ends), a)
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
    # of two as large, the later (the view orders by held, then acted_at, descending)
    largest = max(a, key=lambda x: (int(x["held"]), int(x["action_number"])))
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
    said, detail, hint = said_idle(log_from)
    ok(all(r.returncode == 0 for r in looks) and not actions(before) and len(said) == 1 and len(detail) == 1
       and int(detail[0][0]) in holders and detail[0][1] == "idle" and hint,
       "stuck: %d idle sessions over the threshold, guard_terminate off: a DBA's 3 looks run, nothing canceled, "
       "one WARNING naming an idle holder, with the advice" % len(started),
       ([r.stderr for r in looks], actions(before), lines, detail))


def said_idle(log_from):
    """The guard's WARNINGs since log_from about sessions holding memory
    between statements (terminate off), their DETAILs' (PID, state), and
    whether each HINT gives the advice."""
    with open(LOG, errors="replace") as f:
        f.seek(log_from)
        text = f.read()
    said = re.findall(r"WARNING:  pg_procmem guard: sessions between statements hold [0-9.]+ [kMG]B of the "
                      r"cgroup's memory, which is at [0-9.]+ [kMG]B of its [0-9.]+ [kMG]B limit; a cancel frees none "
                      r"of it", text)
    detail = re.findall(r"DETAIL:  The largest: PID (\d+) holds [0-9.]+ [kMG]B \((idle|idle in transaction), user ",
                        text)
    hints = [l for l in text.splitlines() if "HINT:" in l and "idle_in_transaction_session_timeout" in l
             and "pg_procmem.guard_terminate" in l]
    return said, detail, len(hints) == len(said)


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


def phj_plan():
    """The join is a parallel hash join with 4 workers on this major."""
    r = psql(PHJ.replace("SELECT count(*)", "EXPLAIN SELECT count(*)"), app="guard-explain", timeout=60)
    ok("Parallel Hash Join" in r.stdout and re.search(r"->  Parallel Hash  ", r.stdout)
       and "Workers Planned: 4" in r.stdout,
       "phj: the join of big (%d rows) with itself is a parallel hash join with 4 workers" % BIG_ROWS,
       r.stdout + r.stderr)


def innocent():
    """A superuser's statement holding 150 MB and no longer growing, beside
    a plain role's parallel hash join (its hash table in DSM) in a 1.1 GB
    cgroup: the join is canceled, the superuser's statement is not. The
    threshold (50%, or more where the server already holds more) is where
    the join's DSM is past 300 MB, twice the superuser's statement."""
    int_table("big", BIG_ROWS, 4)
    execute("GRANT SELECT ON big TO %s" % PLAIN)
    before, kills = last_action(), oom_kills()
    lock = session("SELECT pg_advisory_lock(4244);", "guard-lock")
    wait_until(lambda: value("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted") == "1", 10)
    cgroup_memory_limit(CGROUP, SMALL)
    kept = statement(KEPT, "guard-kept")
    wait_until(lambda: value("SELECT wait_event_type FROM pg_stat_activity WHERE application_name = 'guard-kept'")
               == "Lock", 30)
    time.sleep(1)
    threshold = max(50, -(-(used()[0] + (300 << 20)) * 100 // SMALL))
    print("# innocent: the cgroup at %d MB with the superuser's statement waiting; threshold %d%% of %d MB"
          % (used()[0] >> 20, threshold, SMALL >> 20))
    set_guard("on", threshold)
    try:
        r = psql(PHJ, user=PLAIN, app="guard-plain", timeout=120)
        lost(r)
    finally:
        close(lock)
        k = finish(kept, 30)
        lost(k)
        cgroup_memory_limit(CGROUP, LIMIT)
        set_guard("on", 90)
    a = actions(before)
    for x in a:
        print("# innocent: action %s" % dict(x))
    print("# innocent: the join: %s" % r.stderr.strip().splitlines()[-3:])
    ok(k.returncode == 0 and "kept 18750000" in k.stderr and not [x for x in a if x["application_name"] == "guard-kept"],
       "innocent: the superuser's 150 MB statement, not growing, is not canceled", (k.stderr, a))
    ok("ERROR:  53200: canceling statement because it and its 4 parallel workers held the most memory of the "
       "running statements" in r.stderr and "of it in dynamic shared memory" in r.stderr
       and [x for x in a if x["application_name"] == "guard-plain" and x["action"] == "cancel"]
       and oom_kills() == kills,
       "innocent: the plain role's parallel hash join is canceled (53200, its DSM counted), no OOM kill",
       (r.stderr, a, kills, oom_kills()))


def phj_off():
    """With the guard off, the parallel hash join under pgbench ends in an OOM kill."""
    int_table("big", BIG_ROWS, 4)
    set_guard("off", 90)
    kills = oom_kills()
    load = pgbench(*LOAD, seconds=60, connected=100)
    try:
        r = psql(PHJ, app="guard-phj-off", timeout=120)
        wait_until(lambda: oom_kills() != kills, 10)
        ok(oom_kills() > (kills or 0) and lost(r),
           "phj off: the parallel hash join ends in an OOM kill (the cgroup's counter %s, then %s) and its "
           "connection is lost" % (kills, oom_kills()), r.stderr)
    finally:
        load.kill()
        load.wait()
        back()
        set_guard("on", 90)


def idle_holder(terminate):
    """A session idle in transaction holding 966 MB of temp_buffers, and 8
    statements growing to 100 MB each: more than the cgroup holds. With
    guard_terminate off: no OOM kill, the idle session kept, one WARNING
    naming it, only growing statements canceled (their clients told of the
    idle session); on: no OOM kill, the idle session ended once, no pid
    acted on twice, no running statement ended."""
    name = "holder %s" % ("on" if terminate else "off")
    set_guard("on", 90, terminate=terminate)
    before, log_from, kills = last_action(), os.path.getsize(LOG), oom_kills()
    holder = statement(("SET temp_buffers = '966MB';\n" + SLOW_EXIT if terminate else "") + HOLDER, "guard-holder")
    growers = []
    try:
        wait_until(lambda: value("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'guard-holder' "
                                 "AND state = 'idle in transaction'") == "1", 60)
        hpid = int(value("SELECT coalesce(max(pid), 0) FROM pg_stat_activity WHERE application_name = 'guard-holder'"))
        start_used = used()[0]
        for i in range(GROWERS):
            growers.append(statement(GROW, "guard-grow-%d" % i))
            time.sleep(0.25)
        done_ = [finish(g, 90) for g in growers]
        if any(lost(g) for g in done_):
            print("# %s: a grower's connection was lost" % name)
        alive = value("SELECT count(*) FROM pg_stat_activity WHERE pid = %d AND state = 'idle in transaction'"
                      % hpid) == "1"
        # a terminate's figure is measured until its session exits (seconds: 6,000 tables to drop)
        wait_until(lambda: all(x["given_back"] is not None and
                               (x["action"] != "terminate" or int(x["given_back"]) >= int(x["held"]) // 2)
                               for x in actions(before)), 30)
    finally:
        h = finish(holder, 30, more="SELECT 1;")
        for g in growers:
            if g.returncode is None:
                finish(g, 1)
        lost(h)
        set_guard("on", 90)
    a = actions(before)
    for x in a:
        print("# %s: action %s" % (name, dict(x)))
    canceled = [g for g in done_ if "ERROR:  53200: canceling statement because it held the most memory" in g.stderr]
    print("# %s: the cgroup at %d MB with the holder (PID %d) idle; %d of %d growing statements canceled, "
          "%d ran to their end" % (name, start_used >> 20, hpid, len(canceled), GROWERS,
                                   len([g for g in done_ if g.returncode == 0])))
    ok(oom_kills() == kills, "%s: no OOM kill (the cgroup's counter %s, then %s)" % (name, kills, oom_kills()),
       [g.stderr for g in done_ if g.returncode != 0])
    if not terminate:
        said, detail, hint = said_idle(log_from)
        ok(alive and not [x for x in a if int(x["pid"]) == hpid],
           "%s: the idle holder (PID %d) is not ended" % (name, hpid), a)
        ok(len(said) == 1 and detail and detail[0] == (str(hpid), "idle in transaction") and hint,
           "%s: one WARNING names it (PID %d, idle in transaction), with the advice" % (name, hpid),
           (said, detail, guard_lines(log_from)))
        told = re.compile(r"Sessions between statements held [0-9.]+ [kMG]B \(the largest, PID %d, " % hpid)
        ok(a and all(x["action"] == "cancel" and (x["application_name"] or "").startswith("guard-grow-") for x in a)
           and len({x["pid"] for x in a}) == len(a) and canceled and all(told.search(g.stderr) for g in canceled),
           "%s: the guard canceled %d growing statements, each once, and nothing else; each client told of the "
           "idle session (DETAIL, PID %d)" % (name, len(canceled), hpid), (a, [g.stderr for g in canceled]))
    else:
        ends = [x for x in a if x["action"] == "terminate"]
        # its exit drops 6,000 tables first, listed meanwhile as it was:
        # seconds on a busy machine, longer than the growers may take
        gone = wait_until(lambda: value("SELECT count(*) FROM pg_stat_activity WHERE pid = %d" % hpid) == "0", 60)
        ok(len(ends) == 1 and int(ends[0]["pid"]) == hpid and gone,
           "%s: the idle holder (PID %d) ended once, and no running statement ended" % (name, hpid),
           ["terminated: %s; the holder %s" % ([(x["pid"], x["application_name"]) for x in ends],
                                               "exited" if gone else "still listed after 60 s")] + a)
        ok(len({x["pid"] for x in a}) == len(a), "%s: no pid acted on twice" % name, a)
        e = ends[0] if ends else {}
        ok("terminating connection because this session held" in h.stderr
           and "between statements, the most of any session, when the cgroup's memory reached" in h.stderr
           and e.get("usename") == "postgres" and e.get("datname") == "postgres"
           and e.get("given_back") is not None and int(e["held"]) // 2 <= int(e["given_back"]) <= int(e["held"]) +
           (64 << 20),
           "%s: its client is told why, and its row has its user, database and what it gave back "
           "(%s of %s bytes)" % (name, e.get("given_back"), e.get("held")), (h.stderr, e))


def records(av_seen):
    """Every action so far: on a hog of the tests (application_name guard-*),
    never an autovacuum worker (autovacuum is on), and none credited with
    more than it held (and the 128 MB a hog grows while the signal lands)."""
    a = actions(0)
    others = [x for x in a if not (x["application_name"] or "").startswith("guard-")]
    ok(a and not others and av_seen,
       "autovacuum on (%d looks saw a worker running): the guard acted on nothing but the tests' hogs, never an "
       "autovacuum worker" % av_seen, others)
    over = [x for x in a if x["given_back"] is not None and int(x["given_back"]) > int(x["held"]) + (128 << 20)]
    ok(not over, "no action is credited with more than it held: what a later action freed is that one's", over)


class Autovacuum(Recorder):
    """How often a look (every second) saw an autovacuum worker."""

    def __init__(self):
        def look():
            try:
                return int(value("SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'autovacuum worker'"))
            except subprocess.CalledProcessError:
                return 0
        super().__init__(look, 1.0)

    def seen(self):
        return len([n for n in self.readings if n])


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


def quick():
    """The mutation script's live check: the per-backend limit stops a
    bounded sort (its timer re-armed after a first check under the limit),
    and the guard cancels one hog in the cgroup (the right pid signalled)."""
    if not CGROUP:
        skip_rest("no memory cgroup could be made for the server here")
    login_role(DBA, "pg_monitor")
    set_guard("on", 90)
    r = psql(BOUNDED, timeout=120)
    ok("53200" in r.stderr and "over pg_procmem.max_backend_memory (150MB)" in r.stderr,
       "quick: a bounded sort past a SET of 150MB is canceled by its own limit", r.stderr)
    kills = oom_kills()
    cgroup_memory_limit(CGROUP, LIMIT)
    hog("slow", SORT)
    ok(oom_kills() == kills, "quick: the cgroup's OOM kill counter did not move (%s, then %s)" % (kills, oom_kills()))


def main():
    av = Autovacuum()
    try:
        if QUICK:
            with section(5, "guard, quick"):
                quick()
        else:
            with section(33 + 14 * RUNS, "guard"):
                incidents(av)
    except Exception:           # a failing test, not a traceback (the server gone, a timeout)
        ok(False, "guard: the suite stopped on an error", traceback.format_exc())
    finally:
        av.stop()
        if CGROUP:
            cgroup_memory_limit(CGROUP, None)
    done()


def incidents(av):
    if not CGROUP:
        skip_rest("no memory cgroup could be made for the server here")
    login_role(DBA, "pg_monitor")
    login_role(LIMITED)
    login_role(PLAIN)
    execute("ALTER ROLE %s SET pg_procmem.max_backend_memory = '150MB'" % LIMITED)
    set_guard("on", 90)
    # in the cgroup's limit: a limit that never acts ends in a cancel or an OOM kill, not the host's memory
    cgroup_memory_limit(CGROUP, LIMIT)
    backend_limit()
    cgroup_memory_limit(CGROUP, None)
    pgbench_init(5)
    t0 = time.time()
    int_table("big", BIG_ROWS, 4)
    print("# big: %d rows in %.0f s" % (BIG_ROWS, time.time() - t0))
    phj_plan()
    started = run_started()
    load = pgbench(*LOAD, seconds=75 * RUNS, connected=100, output=True)
    kills = oom_kills()
    try:
        cgroup_memory_limit(CGROUP, LIMIT)
        found = []
        for run in range(RUNS):
            if RUNS > 1:
                print("# run %d of %d" % (run + 1, RUNS))
            found += (hog("slow", SORT) + hog("fast", FAST) + hog("parallel", PARALLEL, 3) +
                      temp_sessions() + hog("phj", PHJ, 5, dsm=True))
            int_table("big", BIG_ROWS, 4)      # emptied by a crash restart (an OOM kill)
        print("# the incidents under pgbench took %.0f s" % (time.time() - t0))
    finally:
        cgroup_memory_limit(CGROUP, None)
        try:
            out, _ = load.communicate(timeout=75 * RUNS + 120)
        except subprocess.TimeoutExpired:
            load.kill()
            out, _ = load.communicate()
    failed = re.search(r"number of failed transactions: (\d+)", out)
    ok(load.returncode == 0 and (failed is None or failed.group(1) == "0") and "aborted" not in out,
       "pgbench ran its 100 clients to the end with no failed transaction", out)
    ok(not [x for x in found if x["application_name"] == "pgbench"],
       "the guard acted on no pgbench connection", found)
    ok(oom_kills() == kills, "the cgroup's OOM kill counter did not move (%s)" % kills)
    ok(run_started() == started, "no crash restart: the checkpointer started at %s" % started)
    advice()
    cgroup_memory_limit(CGROUP, LIMIT)
    innocent()
    phj_off()
    survives()
    stuck()
    with section(2, "no false cancel"):
        if STEADY <= 0:
            skip_rest("the checks for no false cancel run in the extras (GUARD_STEADY, PostgreSQL 15)")
        page_cache()
        steady()
    idle_holder(False)
    idle_holder(True)
    dry_run()
    guard_off()
    records(av.seen())


main()
