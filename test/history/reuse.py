"""Reused figures stay exact (TAP): what the sampler keeps from a process's
last read, when nothing can have changed it (src/rules/reuse.h), against a fresh
read of the same process at the same sample.

A preloaded cluster sampling every second with the hidden
pg_procmem.check_reuse on: the sampler then reads every reusable process
afresh too and logs one line per sample, "pg_procmem reuse check: N
reusable, A more than 8 kB off, B more than 64 kB off, largest D bytes (pid
P, FIELD)", comparing with the read reuse would have kept (up to 2 minutes old,
as with reuse on). Around it: a pool of idle connections, a few persistent busy
pgbench clients (writes: the checkpointer, walwriter and bgwriter run), and
pgbench connecting anew for every transaction at a rate that leaves many
one-second intervals without a connection's start or exit (an interval with
one reuses nothing). For DURATION seconds (environment, default 60; the
issue's proof is 600). Then check_reuse off: the samples do reuse (the
history file's entries say so, read here with offsets compiled from
src/rules/history_format.h), and cost less. Last, a backend that forked a
child sharing its pages (never exec'd) is read afresh while the child lives
and after it exits unreaped, its private_anon then its RssAnon.

Run as root by scripts/test against a throwaway cluster of its own, which
this test starts (as user postgres):

    DURATION=60 PG_BIN=... CLUSTER_DIR=... SERVER_OPTS='-c ...' python3 test/history/reuse.py

Prints the figures as TAP comments (reads, the reusable share, the
differences and where the largest were).
"""
import os
import re
import statistics
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "py"))
from cluster import (REPO, HFILE, start, stop, log_size, log_since, wait_until, grows, newest, session,  # noqa: E402
                     close, end_sessions, alter_system, pgbench, pgbench_init, pid_of, proc_fields, temp_buffers)
from tap import ok, done, rows, value, execute, skip  # noqa: E402

DURATION = int(os.environ.get("DURATION", "60"))
POOL = 50
CHECK = re.compile(r"pg_procmem reuse check: (\d+) reusable, (\d+) more than 8 kB off, "
                   r"(\d+) more than 64 kB off, largest (\d+) bytes \(pid (\d+), ([a-z_-]+)\)")


def checks(text):
    """The check's lines: (reusable, over 8 kB, over 64 kB, largest, pid, field)."""
    return [(int(m[1]), int(m[2]), int(m[3]), int(m[4]), int(m[5]), m[6]) for m in CHECK.finditer(text)]


def file_offsets():
    """Where a sample's reused count and a process entry's flags are in a
    history_entry (src/rules/history_format.h), compiled here."""
    d = tempfile.mkdtemp(prefix="reuse_offsets.")
    src, exe = os.path.join(d, "o.c"), os.path.join(d, "o")
    with open(src, "w") as f:
        f.write('#include <stddef.h>\n#include <stdio.h>\n#include "rules/history_format.h"\n'
                'int main(void) { printf("%zu %zu %zu %zu %d\\n", sizeof(history_entry), '
                'offsetof(history_entry, u.sys.sample), offsetof(history_entry, u.sys.reused), '
                'offsetof(history_entry, u.proc.settings.entry_flags), HISTORY_PROC_REUSED); return 0; }\n')
    subprocess.run(["cc", "-iquote", os.path.join(REPO, "src"), "-o", exe, src], check=True)
    return [int(v) for v in subprocess.run([exe], check=True, capture_output=True, text=True).stdout.split()]


def file_reuse(since):
    """Each sample numbered above since in the history file: (number, its
    system entry's reused count, its process entries flagged reused)."""
    entry, o_sample, o_reused, o_flags, flag = file_offsets()
    with open(HFILE, "rb") as f:
        data = f.read()
    out, pos = [], 16                   # the file's header, then records of a 16-byte header
    while pos + 16 <= len(data):
        kind, count = struct.unpack_from("=II", data, pos)
        pos += 16
        if kind == 1 and pos + count * entry <= len(data):
            n = struct.unpack_from("=q", data, pos + o_sample)[0]
            if n > since:
                out.append((n, struct.unpack_from("=i", data, pos + o_reused)[0],
                            sum(data[pos + i * entry + o_flags] & flag for i in range(1, count))))
            pos += count * entry
        elif kind != 3:
            break                       # crash rows (none here) or a record being written
    return out


def vmstat():
    """/proc/vmstat's counters of pages moved under sleeping processes (src/rules/reuse.c's list, roughly)."""
    with open("/proc/vmstat") as f:
        return {k: int(v) for k, v in (line.split() for line in f)
                if k.startswith(("pgsteal_", "pgdemote_", "pgmigrate_success", "thp_split_", "thp_collapse_alloc",
                                 "pswpout", "zswpout", "drop_"))}


def backend_type(pid):
    return value("SELECT string_agg(DISTINCT backend_type, ', ') FROM pg_procmem_history WHERE pid = %d" % pid)


def sample_ms(since):
    """The sampler's CPU ms of every sample numbered above since."""
    return [float(r["sample_ms"]) for r in rows(
        "SELECT sample_ms FROM pg_procmem_history_system WHERE sample > %d ORDER BY sample" % since)]


def proof():
    execute("SELECT 1")
    pgbench_init(2)
    pool = [session("SELECT 1;", "reuse-pool") for _ in range(POOL)]
    try:
        ok(wait_until(lambda: value("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'reuse-pool'")
                      == str(POOL), 60), "a pool of %d idle connections" % POOL)
        grows()
        mark = log_size()
        first = newest()
        # a few persistent busy clients (with writes), and a connection per
        # transaction at 0.2 a second: e^-0.2, about 4 intervals in 5 see
        # no connection start or exit
        busy = pgbench("-c", "3", "-j", "1", "-R", "20", seconds=DURATION, output=True)
        churn = pgbench("-C", "-S", "-c", "1", "-j", "1", "-R", "0.2", seconds=DURATION, output=True)
        out = [p.communicate(timeout=DURATION + 120)[0] for p in (busy, churn)]
        ok(busy.returncode == 0 and churn.returncode == 0, "pgbench ran %d s: busy clients, and a connection "
           "per transaction" % DURATION, out)
        last = newest()
        lines = checks(log_since(mark))
        reads = sum(l[0] for l in lines)
        over8 = sum(l[1] for l in lines)
        over64 = sum(l[2] for l in lines)
        s = rows("SELECT count(*) AS samples, sum(processes) AS processes FROM pg_procmem_history_system "
                 "WHERE sample > %d AND sample <= %d" % (first, last))[0]
        samples, processes = int(s["samples"]), int(s["processes"] or 0)
        print("# %d samples in %d s, %d process entries; %d samples checked reusable processes, "
              "%d reusable reads (%.1f%% of the entries); %d more than 8 kB off (%.4f%%), %d more than 64 kB off"
              % (samples, DURATION, processes, len(lines), reads, reads * 100 / max(processes, 1), over8,
                 over8 * 100 / max(reads, 1), over64))
        worst = sorted(lines, key=lambda l: -l[3])[:5]
        for l in (l for l in worst if l[3] > 0):
            print("# largest %d bytes, %s of pid %d (%s)" % (l[3], l[5], l[4], backend_type(l[4])))
        # else the proof is vacuous. Per sample, not per second: a busy
        # machine samples less often, and its page counters move more (a
        # sample after they moved reuses nothing)
        ok(len(lines) >= max(4, samples // 4) and reads >= len(lines) * POOL // 2,
           "at least a quarter of the %d samples (4 at least) checked reusable processes, %d or more each on "
           "average (the pool of %d idle connections): %d samples, %d reads"
           % (samples, POOL // 2, POOL, len(lines), reads))
        ok(over8 * 1000 <= reads, "at most 0.1%% of them more than 8 kB off a fresh read: %d of %d" % (over8, reads),
           [l for l in lines if l[1]])
        ok(over64 == 0, "none more than 64 kB off: %d" % over64, [l for l in lines if l[2]])
        fresh = sample_ms(first)

        # check_reuse off: the figures are reused, and a sample costs less.
        # Reuse needs the machine's page counters still (/proc/vmstat): on
        # a machine others share, reclaim elsewhere can hold it off a while.
        alter_system("pg_procmem.check_reuse = off")
        grows()
        since = newest()
        half = statistics.median(fresh) / 2
        moved = vmstat()
        # no query while waiting: each psql connection makes the postmaster
        # fork, and a sample after that reuses nothing
        for _ in range(9):
            time.sleep(10)
            reused_ms = sample_ms(since)
            cheap = min(reused_ms or [half]) < half
            if cheap:
                break
        now = vmstat()
        ok(cheap, "with check_reuse off a sample costs less than half the CPU of one that reads every "
           "process (reused figures): %.1f ms against a median of %.1f ms"
           % (min(reused_ms or [0]), statistics.median(fresh)),
           "samples' ms %s; /proc/vmstat's counters that moved meanwhile (reuse waits for them to stand "
           "still): %s" % (reused_ms, {k: now[k] - moved.get(k, 0) for k in now if now[k] != moved.get(k)}))
        f = file_reuse(since)
        ok(any(r for _, r, _ in f) and all(r == flagged for _, r, flagged in f),
           "... the history file's samples say so: %d of %d have reused entries, and each counts as many "
           "as its process entries flagged reused" % (sum(1 for _, r, _ in f if r), len(f)), f)
        r = rows("SELECT count(*) FILTER (WHERE reused > 0) AS with_reused, count(*) AS samples "
                 "FROM pg_procmem_history_system WHERE sample > %d" % since)[0]
        ok(int(r["with_reused"]) >= 1, "... and pg_procmem_history_system.reused: %s of %s samples"
           % (r["with_reused"], r["samples"]))
    finally:
        end_sessions("reuse-")
        for p in pool:
            close(p)


def children_of(pid):
    """The children its children file lists; None where the kernel has no such file."""
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            return [int(c) for c in f.read().split()]
    except FileNotFoundError:
        return None


def entries(pid, since):
    """The process's entries in the samples numbered above since, with how
    many each sample reused (another process's reused figures: reuse was on
    at that sample)."""
    return rows("SELECT h.sample, extract(epoch FROM h.sampled_at) AS t, h.reused, h.private_anon, "
                "s.reused AS sample_reused FROM pg_procmem_history h JOIN pg_procmem_history_system s "
                "USING (sample) WHERE h.pid = %d AND h.sample > %d ORDER BY h.sample" % (pid, since))


def quiet_until(cond, timeout=60):
    """Looks every 3 s (each look is a connection, which the postmaster forks:
    the sample after it reuses nothing, the next two can) until cond() holds."""
    end = time.time() + timeout
    while True:
        time.sleep(3)
        if cond() or time.time() > end:
            return cond()


def forked_child():
    """A backend forks a child that is never exec'd (procmem_test_fork_child(),
    as a C function or plperlu may), after filling temp buffers that the two
    then share copy-on-write; the child is killed while the backend sleeps,
    and stays a zombie it never reaps. Those pages are the backend's own again
    without it running: no sample may reuse its figures, before the child
    exits or after."""
    mb = 128
    execute("CREATE FUNCTION fork_child() RETURNS integer AS '$libdir/procmem_test', "
            "'procmem_test_fork_child' LANGUAGE C STRICT")
    forker = session(temp_buffers(mb) + " SELECT fork_child();", "reuse-forker")
    idle = session("SELECT 1;", "reuse-idle")
    try:
        ok(wait_until(lambda: value("SELECT count(*) FROM pg_stat_activity WHERE application_name "
                                    "IN ('reuse-forker', 'reuse-idle') AND state = 'idle'") == "2", 120),
           "a backend that filled %d MB of temp buffers and forked a child, and an idle one" % mb)
        pid = pid_of("reuse-forker")
        kids = children_of(pid)
        if kids is None:
            skip(4, "the kernel has no /proc/PID/task/TID/children: nothing is reused")
            return
        since = newest()
        # while the child lives: samples that reuse others' figures, never the forker's
        quiet_until(lambda: any(int(r["sample_reused"]) > 0 for r in entries(pid, since)))
        alive = [r for r in entries(pid, since) if int(r["sample_reused"]) > 0]
        anon = proc_fields("/proc/%d/status" % pid)["RssAnon"]
        ok(len(kids) == 1 and alive and not any(r["reused"] == "t" for r in alive),
           "its child %s alive: the forker is read afresh in samples that reuse others' figures (%d)"
           % (kids, len(alive)), alive)
        ok(alive and all(int(r["private_anon"]) < anon / 2 for r in alive),
           "... where its pages, shared with the child, are not its own: private_anon below half its "
           "RssAnon (%d kB)" % (anon // 1024), alive)

        # two samples with no connection first: the one after a connection reads every process
        time.sleep(2.5)
        os.kill(kids[0], 9)
        wait_until(lambda: open("/proc/%d/stat" % kids[0]).read().rsplit(")", 1)[1].split()[0] == "Z", 10)
        killed = time.time()
        with open("/proc/%d/schedstat" % pid) as f:
            ran_before = f.read().split()[:3:2]
        quiet_until(lambda: any(float(r["t"]) > killed and int(r["sample_reused"]) > 0
                                for r in entries(pid, since)))
        with open("/proc/%d/schedstat" % pid) as f:
            ran = f.read().split()[:3:2] != ran_before
        anon = proc_fields("/proc/%d/status" % pid)["RssAnon"]
        after = [r for r in entries(pid, since) if float(r["t"]) > killed and int(r["sample_reused"]) > 0]
        print("# the forker %s from the kill to the last look (its schedstat)" % ("ran" if ran else "did not run"))
        ok(children_of(pid) == kids and after and not any(r["reused"] == "t" for r in after),
           "its child a zombie it did not reap: the forker is read afresh in samples that reuse others' "
           "figures (%d)" % len(after), after)
        ok(after and all(abs(int(r["private_anon"]) - anon) <= anon / 10 for r in after),
           "... and its pages are its own: private_anon within 10%% of its RssAnon read from /proc "
           "(%d kB)" % (anon // 1024), after)
    finally:
        end_sessions("reuse-")
        for p in (forker, idle):
            close(p)


def main():
    start("-c max_connections=%d" % (POOL + 30))
    execute("CREATE EXTENSION IF NOT EXISTS pg_procmem")
    alter_system("pg_procmem.sample_interval = '1s'", "pg_procmem.check_reuse = on")
    proof()
    forked_child()
    stop()
    done()


main()
