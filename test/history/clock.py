"""The memory history and a wall clock that steps back (TAP): sampling goes
on, and "the newest" is the newest sample taken, whatever its time says.

Run as root by scripts/test against a throwaway cluster of its own, started
with test/history/clockshift.c preloaded (LD_PRELOAD), whose offset this
test sets while the server runs: the host's clock is never touched. Only
the wall clock moves, as when an NTP step or an administrator sets the
clock back; the monotonic clock does not. (libfaketime would not do: the
postmaster's children stop following its offset once it is running.)

    PG_BIN=... CLUSTER_DIR=... SERVER_OPTS='-c ...' python3 test/history/clock.py
"""
import os
import struct
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "py"))
from cluster import (CLUSTER, start, stop, newest, wait_until, grows, session, close, pid_of,  # noqa: E402
                     sampler_pid, alter_system)
from tap import ok, done, rows, value, execute  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
LIB = os.path.join(CLUSTER, "clockshift.so")
OFFSET = os.path.join(CLUSTER, "clockshift")
FAKE = {"LD_PRELOAD": LIB, "CLOCKSHIFT_FILE": OFFSET}


def offset(seconds):
    """The wall clock of the server's processes, moved by seconds (at once)."""
    fd = os.open(OFFSET, os.O_WRONLY | os.O_CREAT, 0o644)
    os.pwrite(fd, struct.pack("=q", int(seconds * 1000000)), 0)
    os.close(fd)


def query_sampled(marker, app):
    """A query that runs 2.5 s, sampled at least twice; waits for its end."""
    p = session("SELECT pg_sleep(2.5), '%s';" % marker, app)
    wait_until(lambda: pid_of(app))
    n = newest()
    wait_until(lambda: newest() >= n + 2, 10)
    close(p)


def main():
    subprocess.run(["cc", "-shared", "-fPIC", "-O2", "-o", LIB, os.path.join(HERE, "clockshift.c"), "-ldl"],
                   check=True)
    offset(0)
    start(env=FAKE)
    execute("CREATE EXTENSION IF NOT EXISTS pg_procmem")
    alter_system("pg_procmem.sample_interval = '500ms'")
    grows()
    query_sampled("clock marker one", "clock-one")
    before = rows("SELECT max(sample) AS sample, max(sampled_at) AS at FROM pg_procmem_history_system")[0]

    offset(-3600)                       # the wall clock steps back an hour
    ok(grows(5) and grows(5), "the wall clock stepped back an hour: sampling goes on")
    query_sampled("clock marker two", "clock-two")
    last = rows("SELECT sample, sampled_at, sampled_at < '%s' AS earlier FROM pg_procmem_history_system "
                "ORDER BY sample DESC LIMIT 1" % before["at"])[0]
    ok(int(last["sample"]) > int(before["sample"]) and last["earlier"] == "t",
       "... the newest sample has the highest number, and a time an hour earlier than older ones", last)
    q = rows("SELECT query, last_seen < first_seen AS stepped FROM pg_procmem_query_memory "
             "WHERE query LIKE '%clock marker%'")
    ok(len(q) == 1 and "clock marker two" in q[0]["query"] and q[0]["stepped"] == "t",
       "pg_procmem_query_memory: the text of its newest sample, not of the latest time; last_seen "
       "is that sample's (earlier than first_seen)", q)
    ok(int(value("SELECT count(*) FROM pg_procmem_history WHERE sample = (SELECT max(sample) "
                 "FROM pg_procmem_history_system)")) > 0,
       "joined on the newest sample, pg_procmem_history has its processes")

    stop()
    start(env=FAKE)
    wait_until(lambda: sampler_pid() is not None)
    ok(grows() and int(value("SELECT min(sample) FROM pg_procmem_history_system")) == 1
       and newest() > int(last["sample"]),
       "after a restart the numbers go on from the file's: the order survives the restart")
    offset(0)
    ok(grows(5), "the clock back where it was (an hour forward): sampling goes on")
    stop()
    done()


main()
