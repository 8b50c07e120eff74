"""Real OOM kills under load, and the post-mortem a DBA gets from SQL (TAP).

Run as root by scripts/test (every major) against a cluster preloaded at
the default sample interval (10 s) inside a memory cgroup of its own
($OOM_CGROUP), with pgbench running 100 clients from outside that cgroup.
Each incident gets a limit of its own: the memory the cluster cannot give
back now (anonymous and shared) plus HEADROOM, so that it happens the same
way on a busy machine. The incidents:

  slow      a sort, work_mem = 8GB set in its session, grows for ~30 s
  quick     the same grows for ~7 s
  fast      the same, unthrottled, started just after a sample in one of
            pgbench's connections (user and application as pgbench's: a
            pool's connection): no sample sees it before the kernel kills
            it, and the row names it, not the pool
  busy      a join of 30 million rows (work_mem = 4GB) while busy loops
            load every core: the victim takes seconds to die, samples taken in
            between skip it, and the crash row must come from the last
            sample before the kill (the OOM kill counter's reads place it)
  parallel  a parallel sort (4 workers): the leader and its workers are one
            holder, in the crash row and the holders
  dsm       a parallel hash join (2 workers, work_mem = 4GB): its hash
            table in dynamic shared memory, in no process's overhead; the
            crash row names its group with its DSM
  idle      a session idle in transaction holding 500 MB of temp_buffers
            (set in its session) while a sort tips the cgroup over: the
            kernel kills the idle one; the row says so, and what to change
            is its temp_buffers, not a work_mem
  plpgsql   a PL/pgSQL block growing an array (work_mem = 64MB set in its
            session, which bounds none of it): no "lower its work_mem"
  whole     the server killed whole, postmaster included, right after an
            OOM kill in its cgroup (a container's memory.oom.group = 1):
            the unclean stop found at the next start names the OOM kill
            and who held the memory at the last sample
  sessions  the checkpointer writes out 200 MB of shared_buffers, then
            sessions of one user and application each fill 100 MB of
            temp_buffers (set in the session) and stay; the kernel kills
            the checkpointer for the shared memory it touched (or one of
            the sessions)

After each, as a pg_monitor role with SQL only: README's crash question
(at most 80 columns, naming the pid, the first 40 characters of the query,
the user and the application; for sessions, the group that held the
memory) and the advice's crash row. The limit is removed after each kill.

    PG_BIN=... CLUSTER_DIR=... SERVER_OPTS=... OOM_CGROUP=... python3 test/history/oom.py
"""
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "py"))
from cluster import (OPTS, LOG, LOAD, pg_ctl, cgroup_memory_limit, cgroup_figures, into_cgroup,  # noqa: E402
                     wait_until, grows, session, close, killed_pid, crash_row, login_role, psql_as, pgbench,
                     pgbench_init, temp_buffers, postmaster_pid, drop_stale_locks, oom_kills as cgroup_oom_kills)
from tap import ok, section, skip_rest, done, rows, value, execute, readme_questions, width  # noqa: E402

CGROUP = os.environ.get("OOM_CGROUP", "")
# the incidents to run (a developer's shortcut; scripts/test runs all four)
INCIDENTS = os.environ.get("OOM_INCIDENTS",
                           "slow,quick,fast,busy,parallel,dsm,idle,plpgsql,whole,sessions").split(",")
HEADROOM = 700 << 20
DBA = "oom_dba"                 # pg_monitor only
HOG, HOG_APP = "oom_hog", "hogapp"
ETL, ETL_APP = "oom_etl", "loader"
# the sort, of rows of about 1 kB (so that it grows with its rows, not in
# the steps its array of pointers doubles in), throttled by a sleep every
# 10,000 rows (10 MB; 0: flat out); the rows come from a set-returning
# function in the target list, which the executor does not materialize
# first
SORT = ("SELECT count(*) FROM (SELECT g, repeat('x', 1000) AS pad FROM (SELECT generate_series(1, 400000000) AS g) "
        "AS x WHERE pg_sleep(CASE WHEN g % 10000 = 0 THEN {pause} ELSE 0 END) IS NOT NULL "
        "ORDER BY g DESC, pad) AS s /* {name} */;")
TEMP = temp_buffers(100)
# a join that grows to gigabytes (the reproduction; the planner makes it a merge
# join over two sorts)
HASH = ("SET work_mem = '4GB';\nSELECT count(*) FROM generate_series(1, 30000000) a(k) JOIN "
        "(SELECT g AS k, md5(g::text) AS v FROM generate_series(1, 30000000) g) b USING (k) /* busy */;")


def unreclaimable():
    """What the cgroup cannot give back without swap: anonymous and shared
    memory (v1 memory.stat's rss and shmem, v2's anon and shmem)."""
    fig = cgroup_figures(CGROUP)
    return fig["anon"] + fig["shmem"]


def as_dba(sql):
    return psql_as(DBA, sql)


def incident(name, cause):
    """Runs cause() under pgbench and the limit until the kernel kills a
    process of the server; returns the pid the postmaster logged, once the
    crash row for it is there."""
    load = pgbench(*LOAD, connected=100)
    log_from = os.path.getsize(LOG)
    limit = unreclaimable() + HEADROOM
    cgroup_memory_limit(CGROUP, limit)
    started = []
    try:
        cause(started, lambda: killed_pid(log_from))
        pid = killed_pid(log_from) if wait_until(lambda: killed_pid(log_from), 120) else None
        load.terminate()
        for p in started:
            close(p)
        # the limit stays through the crash restart, as a container's does
        if pid and not crash_row(pid):
            print("# no crash row for PID %d" % pid)
    finally:
        cgroup_memory_limit(CGROUP, None)
        load.terminate()
        load.wait(30)
        for p in started:
            close(p)
    print("# %s: limit %d MB, the postmaster logged the kill of PID %s" % (name, limit >> 20, pid))
    return pid


def hog(pause, name, user, app, after_sample=False):
    def cause(started, killed):
        if after_sample:
            grows(15, 0.05)
        started.append(session("SET work_mem = '8GB';\n" + SORT.format(pause=pause, name=name), app, user))
    return cause


def sessions(started, killed):
    """Sessions filling temp_buffers until the kernel kills; half-way, a
    sample sees them."""
    for i in range(40):
        if killed():
            return
        started.append(session(TEMP, ETL_APP, ETL))
        time.sleep(1.5)
        if i == 3:
            grows()


def crash_question():
    q = next(q for question, q in readme_questions()[0] if "before the OOM kill" in question)
    r = as_dba(q)
    widest = max((width(l) for l in r.stdout.splitlines()), default=0)
    return r, widest


def report_of(out, pid):
    """The report of the crash that killed pid, from psql's aligned output
    of README's crash question, its lines joined by spaces."""
    text = " ".join(l.split("|", 1)[-1].rstrip(" +") for l in out.splitlines()[2:])
    start = text.find("killed: pid %d," % pid)
    if start < 0:
        return ""
    end = [i for i in (text.find(" killed: pid ", start + 1), text.find(" guess: pid ", start + 1)) if i > 0]
    return re.sub(r"\s+", " ", text[start:min(end) if end else len(text)])


def check_hog(name, pid, query, user, app):
    if pid is None:
        skip_rest("%s: the kernel killed nothing within 2 minutes" % name)
    r, widest = crash_question()
    block = report_of(r.stdout, pid)
    want = ["user %s" % user, "app %s" % app, "query: " + query[:40], "work_mem = 8GB (session)"]
    # one no sample saw: about what it grew by, the cgroup's room at the last sample
    if "no sample saw it" in block:
        want.append(" of room at the last sample")
    ok(r.returncode == 0 and widest <= 80 and all(w in block for w in want),
       "%s: README's crash question, as a pg_monitor role, names PID %d, the first 40 characters of its query, "
       "its user and application and work_mem = 8GB (session), in %d columns (80)" % (name, pid, widest),
       r.stdout + r.stderr)
    c = rows("SELECT * FROM pg_procmem_crashes WHERE killed_pid = %d" % pid)
    c = c[0] if c else {}
    ok(c.get("query_from") == "exit" and (c.get("query") or "").startswith(query[:40])
       and (c.get("summary") or "").startswith("pid %d, " % pid)
       and c.get("work_mem_source") == "session" and c.get("usename") == user and c.get("crashed_at")
       and c.get("restarted_at") and c["crashed_at"] <= c["restarted_at"],
       "%s: the crash row names it in its summary, has the query as the postmaster read it at the exit, "
       "the settings from the process's slot, and crashed_at (the exit) before restarted_at; %s" %
       (name, "a sample saw it" if c.get("overhead") else "no sample saw it"),
       {k: c.get(k) for k in ("summary", "crashed_at", "restarted_at", "query_from", "overhead", "last_seen_at",
                              "work_mem", "work_mem_source", "cgroup_oom_kills")})
    a = as_dba("SELECT summary, evidence, recommendation FROM pg_procmem_advice WHERE check_name = 'crash_restart' "
               "AND evidence LIKE '%%(PID %d)%%'" % pid)
    ok(a.returncode == 0 and "pid %d" % pid in a.stdout and "work_mem = 8GB (session)" in a.stdout
       and "set in its session" in a.stdout,
       "%s: pg_procmem_advice's crash_restart row names PID %d and what it ran with: work_mem set in its session"
       % (name, pid), a.stdout + a.stderr)


def busy_loops():
    """Busy loops outside the server's cgroup, 16 a core: a machine as
    loaded as the incidents this reproduces (a load of about 36 on two
    cores, where a killed backend took 1.3 to 2.3 s to exit)."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(16 * (os.cpu_count() or 2))]


def kernel_took(pid):
    """The anonymous memory the kernel's OOM report gave pid (dmesg), in
    bytes; None when it is not there."""
    out = subprocess.run(["dmesg"], capture_output=True, text=True).stdout
    m = re.findall(r"Killed process %d \(.*?anon-rss:(\d+)kB" % pid, out)
    return int(m[-1]) * 1024 if m else None


def check_busy():
    """The join killed on a busy machine: the row's figures from the
    last sample before the kill, the advice naming the OOM killer."""
    loops = busy_loops()
    try:
        pid = incident("busy", lambda started, killed: started.append(session(HASH, HOG_APP, HOG)))
    finally:
        for p in loops:
            p.kill()
            p.wait()
    ok(pid is not None, "busy: the kernel killed PID %s" % pid)
    if pid is None:
        skip_rest("busy: nothing was killed")
    took = kernel_took(pid)
    c = rows("SELECT c.*, (SELECT count(*) FROM pg_procmem_history_system s WHERE s.sampled_at > c.killed_after "
             "AND s.sampled_at < c.exited_at) AS samples_between, "
             "c.killed_after <= c.crashed_at AND c.crashed_at <= c.exited_at "
             "AND c.last_sample_at < c.killed_after AS ordered FROM pg_procmem_crashes c WHERE killed_pid = %d" % pid)
    c = c[0] if c else {}
    print("# busy: the kernel took %s MB of anonymous memory; the row: held %s MB at %s, killed after %s, by %s, "
          "exited %s; %s samples between the kill and the exit" %
          (took and took >> 20, c.get("overhead") and int(c["overhead"]) >> 20, c.get("last_seen_at"),
           c.get("killed_after"), c.get("crashed_at"), c.get("exited_at"), c.get("samples_between")))
    ok(c.get("oom_killed") == "t" and c.get("cgroup_oom_kills") not in (None, "0") and c.get("ordered") == "t",
       "busy: the OOM kill counter placed the kill (last_sample_at < killed_after <= crashed_at <= exited_at) "
       "and counted it", c)
    # On a machine this loaded the last sample can be 0.2 s before the kill,
    # while the join grows hundreds of MB a second: the figure is judged at
    # its sample's time, not the kill's. Its growth carries it to the kill
    # (killed_after): the hog's own between its two last samples, or where
    # one sample alone saw it, the cgroup's use between the two last
    # samples (the join is what grows in it; pgbench's clients hold still).
    # That lands within 10% of what the kernel took, or the figure itself
    # does. A figure that counted wrong would carry its error along.
    last2 = rows("SELECT overhead, extract(epoch FROM sampled_at) AS t FROM pg_procmem_history "
                 "WHERE pid = %d ORDER BY sampled_at DESC LIMIT 2" % pid)
    if len(last2) < 2 and c.get("last_sample_at"):
        last2 = rows("SELECT cgroup_usage AS overhead, extract(epoch FROM sampled_at) AS t "
                     "FROM pg_procmem_history_system WHERE sampled_at <= timestamptz '%s' "
                     "AND cgroup_usage IS NOT NULL ORDER BY sampled_at DESC LIMIT 2" % c["last_sample_at"])
    carried = None
    if c.get("overhead") and len(last2) == 2 and c.get("killed_after"):
        (o1, t1), (o0, t0) = [(int(r["overhead"]), float(r["t"])) for r in last2]
        kill_t = float(value("SELECT extract(epoch FROM timestamptz '%s')" % c["killed_after"]))
        if t1 > t0:
            carried = int(c["overhead"]) + max(0, o1 - o0) / (t1 - t0) * max(0.0, kill_t - t1)
    ok(c.get("overhead") and took and (abs(int(c["overhead"]) - took) <= took / 10 or
                                       (carried is not None and abs(carried - took) <= took / 10)),
       "busy: it held %s MB at its last sample; that, or its growth carried to the kill (%s MB), within 10%% of "
       "the %s MB the kernel took" % (c.get("overhead") and int(c["overhead"]) >> 20,
                                     carried and int(carried) >> 20, took and took >> 20), last2)
    ok("held " in (c.get("report") or "") and "at its last sample" in c["report"] and "OOM kill " in c["report"]
       and "no sample saw it" not in c["report"],
       "busy: the report says what it held at its last sample, and when the OOM killer struck", c.get("report"))
    a = as_dba("SELECT evidence, recommendation FROM pg_procmem_advice WHERE check_name = 'crash_restart' "
               "AND evidence LIKE '%%(PID %d)%%'" % pid)
    ok(a.returncode == 0 and "the OOM killer killed it between" in a.stdout and "cause unknown" not in a.stdout
       and "not by the OOM killer" not in a.stdout,
       "busy: the advice says the OOM killer killed it, and when", a.stdout + a.stderr)


# a parallel sort over pgbench_accounts (scale 5: 500,000 rows), each row
# joined to 100 of about 1 kB: every worker sorts its share in memory, each
# slowed by a sleep of 0.2 s every 10,000 rows (10 MB), so that samples see
# the query (pg_sleep() runs in the workers)
PARALLEL = ("SET work_mem = '8GB'; SET max_parallel_workers_per_gather = 4; SET parallel_setup_cost = 0; "
            "SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;\n"
            "SELECT count(*) FROM (SELECT a.aid, g, repeat('x', 1000) AS pad FROM pgbench_accounts a "
            "CROSS JOIN generate_series(1, 100) g WHERE pg_sleep(CASE WHEN (a.aid * 100 + g) % 10000 = 0 "
            "THEN 0.2 ELSE 0 END) IS NOT NULL ORDER BY pad, g, a.aid) s /* parallel */;")


def check_parallel():
    """A parallel sort killed: its leader and workers are one holder."""
    pid = incident("parallel", lambda started, killed: started.append(session(PARALLEL, HOG_APP, HOG)))
    ok(pid is not None, "parallel: the kernel killed PID %s" % pid)
    if pid is None:
        skip_rest("parallel: nothing was killed")
    c = rows("SELECT backend_type, parallel_processes, parallel_overhead, overhead, report "
             "FROM pg_procmem_crashes WHERE killed_pid = %d" % pid)
    c = c[0] if c else {}
    h = rows("SELECT h.* FROM pg_procmem_crash_holders h JOIN pg_procmem_crashes c USING (number) "
             "WHERE c.killed_pid = %d AND h.rank = 1" % pid)
    h = h[0] if h else {}
    print("# parallel: killed a %s; its parallel query: %s processes, %s bytes; rank 1: %s" %
          (c.get("backend_type"), c.get("parallel_processes"), c.get("parallel_overhead"), h))
    ok(c.get("parallel_processes") and int(c["parallel_processes"]) >= 2 and c.get("overhead")
       and int(c["parallel_overhead"]) > int(c["overhead"]) and "its parallel query: " in (c.get("report") or ""),
       "parallel: the crash row sums its parallel query (leader and workers) beyond what the killed one held", c)
    ok(h.get("usename") == HOG and h.get("backend_type") == "client backend" and h.get("parallel_workers")
       and int(h["parallel_workers"]) >= 1 and int(h["processes"]) == int(h["parallel_workers"]) + 1,
       "parallel: the largest holder is its session, its workers counted with it, not a group of their own", h)


# a parallel hash join of 1.4 million rows of about 830 bytes on each side
# (stored uncompressed: a pad computed in the query would be computed above
# the join, and a compressed one would stay small in the hash table):
# whichever side the planner hashes, its 1.2 GB go into the shared hash
# table, in DSM. A sleep of 0.1 s every 10,000 rows on both sides paces
# the build
DSM_JOIN = ("SET work_mem = '4GB'; SET hash_mem_multiplier = 1; SET max_parallel_workers_per_gather = 2; "
            "SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0; "
            "SET enable_mergejoin = off; SET enable_nestloop = off;\n"
            "{explain}SELECT sum(length(a.pad) + length(b.pad)) FROM "
            "(SELECT g, pad FROM dsm_rows WHERE pg_sleep(CASE WHEN g % 10000 = 0 THEN 0.1 ELSE 0 END) IS NOT NULL) a "
            "JOIN (SELECT g, pad FROM dsm_rows WHERE pg_sleep(CASE WHEN g % 10000 = 0 THEN 0.1 ELSE 0 END) "
            "IS NOT NULL) b USING (g) /* dsm */;")


def check_dsm():
    """A parallel hash join killed: its hash table was in DSM, which the
    crash row and the holders name with its group."""
    # made here: a crash restart empties an unlogged table, and the incidents before end in one
    execute("DROP TABLE IF EXISTS dsm_rows; CREATE UNLOGGED TABLE dsm_rows (g integer, pad text); "
            "ALTER TABLE dsm_rows ALTER pad SET STORAGE EXTERNAL; "
            "INSERT INTO dsm_rows SELECT g, repeat('x', 800) FROM generate_series(1, 1400000) g; ANALYZE dsm_rows; "
            "GRANT SELECT ON dsm_rows TO %s" % HOG)
    plan = psql_as(HOG, DSM_JOIN.format(explain="EXPLAIN (COSTS OFF) "))
    ok("Parallel Hash" in plan.stdout, "dsm: the join is a parallel hash join", plan.stdout + plan.stderr)
    pid = incident("dsm", lambda started, killed: started.append(session(DSM_JOIN.format(explain=""), HOG_APP, HOG)))
    ok(pid is not None, "dsm: the kernel killed PID %s" % pid)
    if pid is None:
        skip_rest("dsm: nothing was killed")
    c = rows("SELECT backend_type, parallel_processes, parallel_overhead, parallel_dsm, overhead, report "
             "FROM pg_procmem_crashes WHERE killed_pid = %d" % pid)
    c = c[0] if c else {}
    h = rows("SELECT h.* FROM pg_procmem_crash_holders h JOIN pg_procmem_crashes c USING (number) "
             "WHERE c.killed_pid = %d AND h.rank = 1" % pid)
    h = h[0] if h else {}
    print("# dsm: killed a %s; its parallel query: %s processes, %s MB of overhead, %s MB of its own DSM; "
          "rank 1: %s/%s, %s MB of overhead, %s MB of DSM" %
          (c.get("backend_type"), c.get("parallel_processes"),
           c.get("parallel_overhead") and int(c["parallel_overhead"]) >> 20,
           c.get("parallel_dsm") and int(c["parallel_dsm"]) >> 20, h.get("usename"), h.get("application_name"),
           h.get("overhead") and int(h["overhead"]) >> 20, h.get("dsm") and int(h["dsm"]) >> 20))
    ok(c.get("parallel_dsm") and int(c["parallel_dsm"]) >= 100 << 20
       and int(c["parallel_dsm"]) > int(c.get("parallel_overhead") or c.get("overhead") or 0)
       and "of shared memory (DSM) of its own" in (c.get("report") or ""),
       "dsm: the crash row names its group's own DSM (at least 100 MB, more than its processes' overhead), "
       "and the report says it", c)
    ok(h.get("usename") == HOG and h.get("dsm") and int(h["dsm"]) >= 100 << 20,
       "dsm: the largest holder is its session, with its DSM", h)


def check_idle():
    """A session idle in transaction holds 500 MB of temp_buffers; a sort
    then tips the cgroup over, and the kernel kills the idle one."""
    def cause(started, killed):
        started.append(session("BEGIN;\n" + temp_buffers(500) + "\nSELECT 'filled';", "idleapp", ETL))
        wait_until(lambda: value("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'idleapp' "
                                 "AND state = 'idle in transaction' AND query LIKE 'SELECT ''filled''%'") == "1", 60)
        grows()
        started.append(session("SET work_mem = '8GB';\n" + SORT.format(pause=0.05, name="tipper"), HOG_APP, HOG))
    pid = incident("idle", cause)
    ok(pid is not None, "idle: the kernel killed PID %s" % pid)
    if pid is None:
        skip_rest("idle: nothing was killed")
    c = rows("SELECT application_name, state, temp_buffers_source, report FROM pg_procmem_crashes "
             "WHERE killed_pid = %d" % pid)
    c = c[0] if c else {}
    print("# idle: killed %s (%s)" % (c.get("application_name"), c.get("state")))
    if c.get("application_name") != "idleapp":
        skip_rest("idle: the kernel killed the sort, not the idle session")
    ok(c.get("state") == "idle in transaction" and "it was idle in transaction then" in (c.get("report") or "")
       and "to change: its temp_buffers, set in its session" in c["report"] and "work_mem" not in c["report"],
       "idle: the crash row says it was idle in transaction, and that its temp_buffers (set in its session) "
       "is what to change, not a work_mem", c)
    a = as_dba("SELECT recommendation FROM pg_procmem_advice WHERE check_name = 'crash_restart' "
               "AND evidence LIKE '%%(PID %d)%%'" % pid)
    ok(a.returncode == 0 and "idle in transaction" in a.stdout and "between statements" in a.stdout
       and "lower it there" not in a.stdout,
       "idle: the advice says it held the memory between statements, not that a work_mem should go down",
       a.stdout + a.stderr)


# an array of 1 kB strings grown by a PL/pgSQL block, 10 MB every 50 ms
PLPGSQL = ("SET work_mem = '64MB';\nDO $$ DECLARE a text[] := '{}'; BEGIN FOR i IN 1..100000000 LOOP "
           "a := a || repeat('x', 1000); IF i % 10000 = 0 THEN PERFORM pg_sleep(0.05); END IF; END LOOP; END $$;")


def check_plpgsql():
    """A PL/pgSQL block's array: its statement had no sort or hash, and
    neither the row nor the advice says to lower its work_mem."""
    pid = incident("plpgsql", lambda started, killed: started.append(session(PLPGSQL, HOG_APP, HOG)))
    ok(pid is not None, "plpgsql: the kernel killed PID %s" % pid)
    if pid is None:
        skip_rest("plpgsql: nothing was killed")
    c = rows("SELECT plan_memory, work_mem_source, report FROM pg_procmem_crashes WHERE killed_pid = %d" % pid)
    c = c[0] if c else {}
    ok(c.get("plan_memory") == "none" and c.get("work_mem_source") == "session"
       and "no sort or hash in it" in (c.get("report") or "") and "its work_mem" not in c["report"],
       "plpgsql: work_mem was set in its session, but its plans had no sort or hash: the row says so, and "
       "not to change its work_mem", c)
    a = as_dba("SELECT recommendation FROM pg_procmem_advice WHERE check_name = 'crash_restart' "
               "AND evidence LIKE '%%(PID %d)%%'" % pid)
    ok(a.returncode == 0 and "no sort or hash" in a.stdout and "max_backend_memory" in a.stdout
       and "lower it there" not in a.stdout,
       "plpgsql: the advice says no work_mem bounds it, max_backend_memory does", a.stdout + a.stderr)


def oom_kills():
    """The cgroup's OOM kill counter now (-1: none)."""
    kills = cgroup_oom_kills(CGROUP)
    return -1 if kills is None else kills


def check_whole():
    """A process of the cgroup (not the server's) grows until the kernel
    kills it, and every process of the cgroup is killed with it, the
    postmaster too, as memory.oom.group = 1 does; then the server starts
    again."""
    pm = postmaster_pid()
    holder = session(TEMP, "wholeapp", ETL)
    wait_until(lambda: value("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'wholeapp' "
                             "AND state = 'idle'") == "1", 60)
    grows(30)
    kills = oom_kills()
    cgroup_memory_limit(CGROUP, unreclaimable() + HEADROOM)
    try:
        hog = subprocess.Popen([sys.executable, "-c", "import time\nb = []\nwhile True:\n"
                                "    b.append(b'x' * (20 << 20))\n    time.sleep(0.01)"],
                               preexec_fn=into_cgroup(CGROUP))
        counted = wait_until(lambda: oom_kills() > kills, 120, 0.01)
        with open(os.path.join(CGROUP, "cgroup.procs")) as f:
            for pid in f.read().split():
                try:
                    os.kill(int(pid), 9)
                except ProcessLookupError:
                    pass
        hog.wait(30)
        # gone, every one (the lock file's postmaster too), before the next start
        gone = wait_until(lambda: not open(os.path.join(CGROUP, "cgroup.procs")).read().split(), 60)
    finally:
        cgroup_memory_limit(CGROUP, None)
        close(holder)
    drop_stale_locks(pm)
    ok(counted and gone, "whole: the kernel's OOM kill counted, then every process of the cgroup killed")
    pg_ctl("-m", "fast", "start", "-o", OPTS, preexec_fn=into_cgroup(CGROUP))
    wait_until(lambda: value("SELECT count(*) FROM pg_procmem_crashes WHERE how_known = 'unclean stop' "
                             "AND crashed_at > now() - interval '2 minutes'") == "1", 60)
    c = rows("SELECT c.number, c.oom_killed, c.cgroup_oom_kills, c.last_sample_at, c.report, "
             "(SELECT count(*) FROM pg_procmem_crash_holders h WHERE h.number = c.number) AS holders "
             "FROM pg_procmem_crashes c WHERE how_known = 'unclean stop' ORDER BY number DESC LIMIT 1")
    c = c[0] if c else {}
    ok(c.get("oom_killed") == "t" and c.get("cgroup_oom_kills") not in (None, "0") and c.get("last_sample_at")
       and int(c.get("holders") or 0) >= 1 and "OOM kill counter +" in (c.get("report") or "")
       and "last sample: " in c["report"] and "%s/wholeapp" % ETL in c["report"],
       "whole: the unclean stop found at the next start names the OOM kill, its last sample and who held "
       "the memory then (the session holding temp_buffers)", c)
    a = as_dba("SELECT recommendation FROM pg_procmem_advice WHERE check_name = 'unclean_stop'")
    ok(a.returncode == 0 and "The OOM kill counter rose by" in a.stdout and "memory.oom.group" in a.stdout,
       "whole: the advice names the OOM killer, and memory.oom.group", a.stdout + a.stderr)


def check_sessions():
    """The checkpointer writes out 200 MB of shared_buffers (256 MB), and so
    touches them: it has the largest RSS, as on a busy server. Then the
    sessions."""
    execute("DROP TABLE IF EXISTS oom_fill; CREATE TABLE oom_fill (x text); "
            "INSERT INTO oom_fill SELECT repeat('x', 500) FROM generate_series(1, 380000); CHECKPOINT;")
    pid = incident("sessions", sessions)
    ok(pid is not None, "sessions: the kernel killed PID %s" % pid)
    if pid is None:
        skip_rest("sessions: nothing was killed")
    r, widest = crash_question()
    group = re.search(r"%s/%s: (\d+) sessions held" % (ETL, ETL_APP), report_of(r.stdout, pid))
    ok(r.returncode == 0 and widest <= 80 and ("pid %d," % pid) in r.stdout and group
       and int(group.group(1)) >= 3,
       "sessions: README's crash question names PID %d and the group that held the memory (%s sessions of "
       "%s/%s), in %d columns" % (pid, group.group(1) if group else "no", ETL, ETL_APP, widest),
       r.stdout + r.stderr)
    a = as_dba("SELECT summary, recommendation FROM pg_procmem_advice WHERE check_name = 'crash_restart' "
               "AND evidence LIKE '%%(PID %d)%%'" % pid)
    ok(a.returncode == 0 and ("%s/%s" % (ETL, ETL_APP)) in a.stdout and "temp_buffers = 100MB" in a.stdout,
       "sessions: the advice's crash row names the sessions' user and application, and temp_buffers",
       a.stdout + a.stderr)
    c = rows("SELECT backend_type, summary, cgroup_oom_kills FROM pg_procmem_crashes WHERE killed_pid = %d" % pid)
    print("# sessions: the kernel killed the %s; summary: %s; the cgroup counted %s OOM kills" %
          tuple((c[0] if c else {}).get(k) for k in ("backend_type", "summary", "cgroup_oom_kills")))


def main():
    with section(39, "oom"):
        incidents()
    done()


def incidents():
    if not CGROUP:
        skip_rest("no memory cgroup could be made for the server here")
    login_role(DBA, "pg_monitor")
    login_role(HOG)
    login_role(ETL)
    pgbench_init(5)
    execute("GRANT SELECT ON pgbench_accounts TO %s" % HOG)

    with section(5, "slow"):
        if "slow" not in INCIDENTS:
            skip_rest("slow: not in OOM_INCIDENTS")
        slow = SORT.format(pause=0.4, name="slow")
        pid = incident("slow", hog(0.4, "slow", HOG, HOG_APP))
        ok(pid is not None, "slow: the kernel killed PID %s" % pid)
        h = rows("SELECT sample, overhead FROM pg_procmem_history WHERE pid = %d AND state = 'active' "
                 "ORDER BY sample" % (pid or 0))
        ok(len(h) >= 2 and int(h[-1]["overhead"]) > int(h[0]["overhead"]) + (50 << 20),
           "slow: pg_procmem_history has %d samples of its growth" % len(h), h)
        check_hog("slow", pid, slow, HOG, HOG_APP)

    for name, pause in (("quick", 0.08), ("fast", 0)):
        with section(4, name):
            if name not in INCIDENTS:
                skip_rest("%s: not in OOM_INCIDENTS" % name)
            # fast: one of pgbench's connections runs it (a pool's connection: the
            # crash row must name it, not the pool it belongs to)
            user, app = (HOG, HOG_APP) if name == "quick" else ("postgres", "pgbench")
            pid = incident(name, hog(pause, name, user, app, after_sample=(name == "fast")))
            ok(pid is not None, "%s: the kernel killed PID %s" % (name, pid))
            check_hog(name, pid, SORT.format(pause=pause, name=name), user, app)

    with section(5, "busy"):
        if "busy" not in INCIDENTS:
            skip_rest("busy: not in OOM_INCIDENTS")
        check_busy()

    with section(3, "parallel"):
        if "parallel" not in INCIDENTS:
            skip_rest("parallel: not in OOM_INCIDENTS")
        check_parallel()

    with section(4, "dsm"):
        if "dsm" not in INCIDENTS:
            skip_rest("dsm: not in OOM_INCIDENTS")
        check_dsm()

    with section(3, "idle"):
        if "idle" not in INCIDENTS:
            skip_rest("idle: not in OOM_INCIDENTS")
        check_idle()

    with section(3, "plpgsql"):
        if "plpgsql" not in INCIDENTS:
            skip_rest("plpgsql: not in OOM_INCIDENTS")
        check_plpgsql()

    with section(3, "whole"):
        if "whole" not in INCIDENTS:
            skip_rest("whole: not in OOM_INCIDENTS")
        check_whole()

    with section(3, "sessions"):
        if "sessions" not in INCIDENTS:
            skip_rest("sessions: not in OOM_INCIDENTS")
        check_sessions()
    print("\n".join("# " + l for l in crash_question()[0].stdout.splitlines()))

    # the kill counter counts this server's kills, not the cgroup's life
    k = rows("SELECT s.cgroup_oom_kills - b.cgroup_oom_kills AS kills, b.since "
             "FROM pg_procmem_system_info() AS s, pg_procmem_oom_kills_baseline() AS b")
    ok(k and k[0]["kills"] == "0",
       "the cgroup counted no OOM kill since the last crash restart (pg_procmem_oom_kills_baseline(); each "
       "crash row counts its own)", k)

    # a clean restart, in the cgroup, keeps the crash rows
    n = value("SELECT count(*) FROM pg_procmem_crashes")
    pg_ctl("-m", "fast", "restart", "-o", OPTS, preexec_fn=into_cgroup(CGROUP))
    ok(wait_until(lambda: value("SELECT count(*) FROM pg_procmem_crashes") == n, 30),
       "after a clean restart the %s crash rows are still there" % n)


main()
