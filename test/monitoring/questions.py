"""README's one-query-per-question table: every query runs as a pg_monitor
role and prints at most 80 columns in psql's default aligned format, on a
server with idle connections that scanned a table and on one with none
(TAP). The crash row's query is checked after a real crash in
test/history/oom.py."""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "py"))
from tap import ok, done, rows, value, execute, readme_questions, width, PSQL, drop_role

ROLE = "procmem_questions"
AS_ROLE = "user=%s dbname=%s" % (ROLE, os.environ.get("PGDATABASE", "postgres"))


def psql(query):
    """The query as a DBA runs it: psql's defaults (aligned, border 1)."""
    return subprocess.run([PSQL, "-X", "-P", "pager=off", "-v", "ON_ERROR_STOP=1", "-d", AS_ROLE, "-c", query],
                          capture_output=True, text=True)


def check_all(where):
    for question, query in questions:
        r = psql(query)
        widest = max((width(l) for l in r.stdout.splitlines()), default=0)
        ok(r.returncode == 0 and not r.stderr and widest <= 80,
           "%s: %r runs and prints %d columns at most (80)" % (where, question, widest),
           r.stderr + r.stdout)


def idle_clients():
    return int(value("SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'"
                     " AND state = 'idle' AND pid <> pg_backend_pid()"))


questions, stray = readme_questions()
ok(len(questions) >= 8 and not stray,
   "README's question table: %d rows, each | question | `SELECT ...;` |" % len(questions), stray)

execute("DROP ROLE IF EXISTS %s; CREATE ROLE %s LOGIN; GRANT pg_monitor TO %s" % (ROLE, ROLE, ROLE))
try:
    # no idle connection (a fresh server): the headroom still answers
    deadline = time.time() + 10
    while idle_clients() and time.time() < deadline:
        time.sleep(0.2)
    fit = rows("SELECT idle_client_backends, more_idle_connections_fit, per_connection, per_connection_from,"
               " available FROM pg_procmem_headroom", AS_ROLE)[0]
    ok(fit["idle_client_backends"] == "0" and fit["more_idle_connections_fit"] is not None
       and int(fit["more_idle_connections_fit"]) == max(int(int(fit["available"]) / int(fit["per_connection"])), 0)
       and fit["per_connection_from"] == "the smallest client backend (none is idle)",
       "no idle connection: more_idle_connections_fit answers, from the smallest client backend", fit)
    check_all("no idle connection")
    # a fresh idle server: nothing critical about the server itself (the
    # host's own state, an OOM kill recorded in its cgroup or memory short,
    # may be critical on a shared machine, and is left out)
    crit = rows("SELECT check_name, summary FROM pg_procmem_advice WHERE severity = 'critical'"
                " AND check_name NOT IN ('cgroup_oom_kills', 'cgroup_limit')"
                " AND NOT (check_name = 'oom_postmaster' AND (SELECT memory_short FROM pg_procmem_advice_facts))",
                AS_ROLE)
    ok(not crit, "an idle server raises no critical finding about itself", crit)

    # the demo's shape: idle connections that each scanned a table
    execute("DROP TABLE IF EXISTS questions_scan; CREATE TABLE questions_scan AS"
            " SELECT g, repeat('x', 200) AS pad FROM generate_series(1, 20000) g;"
            " GRANT SELECT ON questions_scan TO %s" % ROLE)
    idle = [subprocess.Popen([PSQL, "-X", "-q", "-d", AS_ROLE], stdin=subprocess.PIPE,
                             stdout=subprocess.DEVNULL, text=True)
            for _ in range(5)]
    try:
        for p in idle:
            p.stdin.write("SELECT count(*) FROM questions_scan;\n")
            p.stdin.flush()
        deadline = time.time() + 20
        while idle_clients() < 5 and time.time() < deadline:
            time.sleep(0.2)
        fit = rows("SELECT idle_client_backends, per_connection, avg_idle_overhead, per_connection_from"
                   " FROM pg_procmem_headroom", AS_ROLE)[0]
        ok(int(fit["idle_client_backends"]) >= 5 and fit["per_connection"] == fit["avg_idle_overhead"]
           and fit["per_connection_from"] == "the average idle client backend",
           "five idle connections: more_idle_connections_fit goes by their average", fit)
        check_all("five idle connections")
    finally:
        for p in idle:
            p.stdin.close()
            p.wait()
        execute("DROP TABLE questions_scan")
finally:
    drop_role(ROLE)
done()
