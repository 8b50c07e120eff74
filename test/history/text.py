"""Statement text fails closed (TAP): a process whose slot cannot be read
has its text kept back everywhere pg_procmem takes it.

Each process says in its slot of pg_procmem's shared memory whether its
statement text may be kept (pg_procmem.keep_statement_text, as its role,
database or session set it). Where that slot cannot be read (the process
exited between pg_stat_activity's read and the slot's, its PGPROC went to
another process, or it was killed while writing it), nobody knows its
setting, and the text is kept back: in the sampler's history (the view and
the file), in the guard's actions, and in the crash row the postmaster makes
when it is killed. procmem_test (test/modules), preloaded after pg_procmem,
makes every slot unreadable with procmem_test.unreadable_slots = on; with
it off again, the text is kept, so each check below can fail.

Run as root by scripts/test (the history suite) against a throwaway
cluster of its own, which this test starts and crashes (as user postgres):

    PG_BIN=... CLUSTER_DIR=... SERVER_OPTS='-c ...' python3 test/history/text.py
"""
import os
import re
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "py"))
from cluster import (HFILE, LOG, start, stop, newest, wait_until, session, close, end_sessions,  # noqa: E402
                     pid_of, sampler_pid, crash_row, alter_system, login_role, psql_as)
from tap import ok, skip, done, rows, value, execute  # noqa: E402

SECRET = "text secret marker 4711"
OPEN = "text open marker 0815"


def holder(marker, app):
    """A session whose statement holds a 2-million-group hash table (about
    150 MB) while it sleeps, with marker in its text."""
    return session("SET work_mem = '1GB'; SELECT pg_sleep(60), '%s' FROM (SELECT count(*) FROM "
                   "generate_series(1, 2000000) g GROUP BY g) s LIMIT 1;" % marker, app)


def asleep(app):
    """Its hash table built, and it asleep on it: its pid (None: not yet)."""
    pid = pid_of(app)
    if pid and value("SELECT wait_event FROM pg_stat_activity WHERE pid = %d" % pid) == "PgSleep":
        return pid
    return None


def file_has(marker):
    with open(HFILE, "rb") as f:
        return marker.encode() in f.read()


def sampled(pid):
    """Its rows in the history while it ran, after two more samples."""
    n = newest()
    wait_until(lambda: newest() >= n + 2, 15)
    return rows("SELECT query, query_id FROM pg_procmem_history WHERE pid = %d AND state = 'active'" % pid)


def guard_action(marker, app, since):
    """The guard's 'would cancel' in dry_run, against a 1 MB machine, of a
    statement with marker in its text that grows (about 50 MB/s, to 400
    MB): one that only holds memory is innocent (its cancel would not bring
    the machine under the threshold), never acted on."""
    p = session("DO $$ DECLARE a text[] := '{}'; BEGIN FOR i IN 1..400 LOOP a := a || repeat('x', 1000000); "
                "PERFORM pg_sleep(0.02); END LOOP; PERFORM pg_sleep(60); END $$ /* %s */;" % marker, app)
    try:
        pid = None
        wait_until(lambda: pid_of(app), 20)
        pid = pid_of(app)
        alter_system("pg_procmem.guard = 'dry_run'", "pg_procmem.guard_limit = '1MB'",
                     "pg_procmem.guard_threshold = 50")
        wait_until(lambda: value("SELECT count(*) FROM pg_procmem_guard_actions WHERE pid = %d "
                                 "AND action_number > %d" % (pid, since)) != "0", 20)
        a = rows("SELECT action, query FROM pg_procmem_guard_actions WHERE pid = %d AND action_number > %d"
                 % (pid, since))
    finally:
        alter_system("pg_procmem.guard = 'off'")
        end_sessions(app)
        close(p)
    return a


def last_action():
    return int(value("SELECT coalesce(max(action_number), 0) FROM pg_procmem_guard_actions"))


def unreadable():
    """Every slot unreadable: the text kept back in the view, the file, the
    guard's action, its log line and the crash row."""
    alter_system("procmem_test.unreadable_slots = on")
    time.sleep(1)
    log_from = os.path.getsize(LOG)
    p = holder(SECRET, "text-secret")
    try:
        ok(wait_until(lambda: asleep("text-secret"), 60), "a statement holding a hash table, asleep")
        pid = asleep("text-secret")
        seen = sampled(pid)
        ok(seen and all(r["query"] is None and r["query_id"] is not None for r in seen),
           "slots unreadable: the history has its samples and query_id, not its text", seen)
        a = guard_action(SECRET, "text-grow-secret", last_action())
        ok(a and all(r["query"] is None for r in a),
           "... the guard's action on it (dry_run) has no text", a)
        with open(LOG, errors="replace") as f:
            f.seek(log_from)
            said = [l for l in f.read().splitlines() if "pg_procmem guard: would cancel" in l
                    or "(not kept)" in l]
        ok(said and not any(SECRET in l for l in said) and any("(not kept)" in l for l in said),
           "... nor its log line: '(not kept)'", said)
        time.sleep(1.2)
        ok(not file_has(SECRET), "... nor the history's file")
        os.kill(pid, 9)
        ok(crash_row(pid), "killed: its crash row, after the crash restart")
        c = rows("SELECT query, query_from, report FROM pg_procmem_crashes WHERE killed_pid = %d" % pid)
        ok(c and c[0]["query"] is None and SECRET not in (c[0]["report"] or ""),
           "... without its text (its slot could not be read at its exit)", c)
        wait_until(lambda: sampler_pid() is not None, 30)
        time.sleep(1.5)
        ok(not file_has(SECRET), "... and the file, rewritten with the crash row, has none either")
    finally:
        end_sessions("text-")
        close(p)


def readable():
    """The same with readable slots: the text is kept (the checks above can fail)."""
    alter_system("procmem_test.unreadable_slots = off")
    time.sleep(1)
    p = holder(OPEN, "text-open")
    try:
        ok(wait_until(lambda: asleep("text-open"), 60), "slots readable again: the same statement")
        pid = asleep("text-open")
        seen = sampled(pid)
        ok(seen and all(OPEN in (r["query"] or "") for r in seen), "... its text in the history", seen)
        a = guard_action(OPEN, "text-grow-open", last_action())
        ok(a and all(OPEN in (r["query"] or "") for r in a), "... in the guard's action", a)
        time.sleep(1.2)
        ok(file_has(OPEN), "... and in the file")
        os.kill(pid, 9)
        ok(crash_row(pid), "killed: its crash row")
        c = rows("SELECT query FROM pg_procmem_crashes WHERE killed_pid = %d" % pid)
        ok(c and OPEN in (c[0]["query"] or ""), "... with its text", c)
    finally:
        end_sessions("text-")
        close(p)


def reused_pid(attempts=40):
    """A session of a role whose keep_statement_text is on exits; the next
    backend, of a role that has none, gets its pid (the kernel's
    ns_last_pid set just below it: psql takes one pid, its backend one a
    few on, as the last attempt saw; another process forking in between
    spoils an attempt). On 14 and
    15 a PGPROC freed last is taken first, so it gets its slot too (with the
    slot's owner told by its pid alone this test fails there); from 16 it
    gets another, and the test proves less. Its session, or
    None."""
    gap = 1                     # pids taken from psql's to its backend's, as last seen
    for _ in range(attempts):
        r = psql_as("text_alice", "SELECT pg_backend_pid(), 'text alice open';", "postgres")
        if r.returncode != 0:
            return None
        pid = int(re.search(r"^\s*(\d+)\s*\|", r.stdout, re.M).group(1))
        wait_until(lambda: not os.path.exists("/proc/%d" % pid), 10, 0.01)
        with open("/proc/sys/kernel/ns_last_pid", "w") as f:
            f.write(str(pid - 1 - gap))
        bob = session("SELECT pg_sleep(4), 'text bob secret 4242';", "text-bob", user="text_bob")
        got = pid_of("text-bob") if wait_until(lambda: pid_of("text-bob"), 10) else None
        if got == pid:
            return bob
        if got and 0 < got - bob.pid < 5:
            gap = got - bob.pid
        end_sessions("text-bob")
        close(bob)
    return None


def pid_reuse():
    """keep_statement_text off for the server, on for one role: a backend
    of another role that gets a pid of that role's exited backend keeps its
    text back (the slot the earlier one left is not its own)."""
    login_role("text_alice")
    login_role("text_bob")
    execute("ALTER ROLE text_alice SET pg_procmem.keep_statement_text = on")
    alter_system("pg_procmem.keep_statement_text = off")
    bob = reused_pid()
    try:
        if bob is None:
            skip(1, "no backend got an exited one's pid in 40 attempts (a busy machine forks in between)")
            return
        n = newest()
        wait_until(lambda: newest() >= n + 2, 15)
        time.sleep(1.2)
        ok(not file_has("text bob secret 4242"),
           "a backend with the pid of an exited one of a role whose text is kept: its own text kept back "
           "(the server's setting, off), not its predecessor's")
    finally:
        end_sessions("text-")
        if bob:
            close(bob)
        alter_system("pg_procmem.keep_statement_text = on")


def main():
    start("-c shared_preload_libraries=pg_procmem,procmem_test")
    execute("CREATE EXTENSION IF NOT EXISTS pg_procmem")
    alter_system("pg_procmem.sample_interval = '1s'")
    unreadable()
    readable()
    pid_reuse()
    stop()
    done()


main()
