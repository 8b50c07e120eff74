"""The memory history's file under attack (TAP): no file can stop a start or
a crash restart, slow one down, or make pg_procmem follow it elsewhere.

Run as root by scripts/test against a throwaway cluster of its own, which it
stops, starts and crashes, putting in the file's place: a damaged file,
another version's, garbage, a FIFO, a symbolic link, a directory, a 10 GB
sparse file, a 401 MB file under a memory cgroup ($HISTORY_CGROUP, where
cgroups can be made) and under ulimit -v; an unwritable and a symlinked
pg_stat_tmp; and a rewrite stopped after each of its writes.

    PG_BIN=... CLUSTER_DIR=... SERVER_OPTS='-c ...' [HISTORY_CGROUP=...] python3 test/history/files.py
"""
import os
import shutil
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "py"))
from cluster import (CLUSTER, STAT_TMP, HFILE, HTMP, ENTRY, start, stop, log_size, log_since,  # noqa: E402
                     histfile, history_lines, samples, wait_until, grows, sampler_pid, postmaster_pid, pid_of,
                     session, close, proc_fields, own_io, crash, as_postgres, write_history, check_history,
                     postgres_ids, cgroup_memory_limit, alter_system, exited, drop_stale_locks)
from tap import ok, section, skip_rest, done, rows, value, execute, PSQL  # noqa: E402

CGROUP = os.environ.get("HISTORY_CGROUP", "")
MB = 1 << 20


def restart(extra=""):
    stop()
    start(extra)
    wait_until(lambda: sampler_pid() is not None)


def crash_back():
    """A crash restart; true when the server and its sampler came back."""
    crash()
    return wait_until(lambda: sampler_pid() is not None and value("SELECT 1") == "1", 60)


def replaced(at, expect, name):
    """The server started with the thing at the file's name: one LOG line
    saying so, the sampler works, a good file is there now."""
    ok(grows(), "%s: the server starts and the sampler works" % name)
    lines = history_lines(log_since(at))
    ok(len(lines) == 1 and expect in lines[0], "... one LOG line says what was wrong", lines)
    wait_until(lambda: os.path.isfile(HFILE) and not os.path.islink(HFILE))
    with open(HFILE, "rb") as f:
        head = f.read(8)
    ok(not os.path.islink(HFILE) and head[:4] == b"PMHS" and head[4:8] == struct.pack("<I", 1),
       "... and a regular file of ours is written in its place")


def damaged(name, damage, expect):
    """Stops (cleanly), damages the file, starts: what follows the damage
    (the clean stop) is not known, so no unclean stop is claimed."""
    stop()
    with open(HFILE, "rb") as f:
        good = f.read()
    with open(HFILE, "wb") as f:
        f.write(damage(good))
    at = log_size()
    start()
    replaced(at, expect, name)
    ok(value("SELECT count(*) FROM pg_procmem_crashes WHERE how_known = 'unclean stop'") == "0",
       "... and no unclean stop is made up of the part that could not be read")


def hostile_contents():
    damaged("a truncated file", lambda b: b[:len(b) - 100], "is cut short")
    damaged("a file cut in half", lambda b: b[:len(b) // 2 + 123], "is cut short")
    damaged("garbage appended", lambda b: b + b"\0" * (8 << 20), "is damaged")
    damaged("a garbage file", lambda b: os.urandom(len(b)), "is not a memory history file")
    damaged("a future version's file", lambda b: b[:4] + struct.pack("<I", 99) + b[8:], "another version")


def hostile_things():
    """Not a regular file at the file's name: never opened, never followed."""
    stop()
    os.unlink(HFILE)
    as_postgres("mkfifo", HFILE)
    at = log_size()
    start()                             # must not wait for a writer
    replaced(at, "which was not a regular file", "a FIFO")

    # a symbolic link to a file outside the data directory
    outside = os.path.join(CLUSTER, "outside")
    with open(outside, "wb") as f:
        f.write(b"not pg_procmem's\n")
    os.chown(outside, *postgres_ids())
    stop()
    os.unlink(HFILE)
    os.symlink(outside, HFILE)
    os.lchown(HFILE, *postgres_ids())
    at = log_size()
    start()
    replaced(at, "which was not a regular file", "a symbolic link to a file outside")
    os.unlink(HFILE)
    os.symlink(outside, HFILE)
    os.lchown(HFILE, *postgres_ids())
    came_back = crash_back()
    with open(outside, "rb") as f:
        body = f.read()
    ok(came_back and body == b"not pg_procmem's\n" and not os.path.islink(HFILE),
       "... put back while running, then a crash restart: the file it pointed at is untouched", body)

    # a directory that is not empty: in the way, said once, nothing written
    stop()
    os.unlink(HFILE)
    os.makedirs(os.path.join(HFILE, "keep"))
    at = log_size()
    start()
    ok(grows() and grows(), "a directory at the file's name: the server starts and samples")
    time.sleep(1)
    lines = history_lines(log_since(at))
    written = own_io(sampler_pid())["wchar"]
    ok(len(lines) == 1 and "in the way of the memory history file" in lines[0] and written < 64 * 1024,
       "... one LOG line, and no temporary file written meanwhile (%d bytes)" % written, lines)
    shutil.rmtree(HFILE)
    ok(wait_until(lambda: os.path.isfile(HFILE)) and "written again" in log_since(at),
       "... once it is gone, the file is written again")

    # a directory at the temporary file's name
    stop()
    os.unlink(HFILE)
    os.makedirs(os.path.join(HTMP, "keep"))
    at = log_size()
    start()
    grows()
    lines = history_lines(log_since(at))
    ok(len(lines) == 1 and HTMP.split("/")[-1] in lines[0],
       "a directory at the temporary file's name: the one LOG line names that name", lines)
    shutil.rmtree(HTMP)
    wait_until(lambda: os.path.isfile(HFILE))


def sparse():
    """10 GB sparse files: ignored after their first bytes."""
    for name, head, expect in (("a 10 GB sparse file", b"", "is not a memory history file"),
                               ("a 10 GB sparse file with a good header",
                                struct.pack("<IIII", 0x53484d50, 1, ENTRY, 0), None)):
        stop()
        with open(HFILE, "rb") as f:
            good_head = f.read(16)
        with open(HFILE, "wb") as f:
            f.write(good_head if expect is None else head)
            f.truncate(10 << 30)
        at = log_size()
        start()
        replaced(at, expect or "is damaged", name)
        ok(own_io(sampler_pid())["rchar"] < 4 * MB,
           "... read no more than its first bytes (the sampler read %d bytes in all)"
           % own_io(sampler_pid())["rchar"])


def unwritable():
    """pg_stat_tmp not writable: said once, naming the temporary file; the
    minute's wait between tries survives the sampler's restart."""
    stop()
    os.unlink(HFILE)
    os.chmod(STAT_TMP, 0o500)
    try:
        at = log_size()
        start()
        ok(grows(), "pg_stat_tmp not writable: the server starts and samples")
        lines = history_lines(log_since(at))
        ok(len(lines) == 1 and "could not create memory history file" in lines[0] and ".tmp" in lines[0],
           "... one LOG line, naming the temporary file it could not create", lines)
        old = sampler_pid()
        execute("SELECT pg_terminate_backend(%d)" % old)
        wait_until(lambda: sampler_pid() not in (None, old))
        os.chmod(STAT_TMP, 0o700)
        grows()
        time.sleep(2)
        ok(not os.path.exists(HFILE) and len(history_lines(log_since(at))) == 1,
           "... writable again, a restarted sampler still waits out the minute since the failure")
    finally:
        os.chmod(STAT_TMP, 0o700)
    restart()
    wait_until(lambda: os.path.isfile(HFILE))


def symlinked_dir():
    """pg_stat_tmp a symbolic link to another directory (a tmpfs, say): it works."""
    elsewhere = os.path.join(CLUSTER, "stat_tmp_elsewhere")
    stop()
    shutil.move(STAT_TMP, elsewhere)
    os.symlink(elsewhere, STAT_TMP)
    os.lchown(STAT_TMP, *postgres_ids())
    try:
        at = log_size()
        start()
        grows()
        before = samples()
        came_back = crash_back()
        ok(came_back and samples() >= before and os.path.isfile(os.path.join(elsewhere, "pg_procmem.history"))
           and not history_lines(log_since(at)),
           "pg_stat_tmp a symbolic link: the file is written through it, a crash restart loads it, nothing said")
    finally:
        stop()
        os.unlink(STAT_TMP)
        shutil.move(elsewhere, STAT_TMP)
        start()


def bounded_reads(size):
    """Reading the history costs what the read returns, whatever the ring's
    size: a server whose every process has 64 MB of address space beyond
    what a backend maps reads every system row and every process row of the
    256 MB ring (the rows spill to a temporary file past work_mem)."""
    app = "history-reader"
    p = session("SELECT 1;", app)
    wait_until(lambda: pid_of(app))
    mapped = proc_fields("/proc/%d/status" % pid_of(app))["VmSize"]
    close(p)
    stop()
    start(size, prefix=("prlimit", "--as=%d" % (mapped + 64 * MB), "--"))
    wait_until(lambda: samples() > 4000, 60)
    r = subprocess.run([PSQL, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1",
                        "-c", "SELECT count(*) FROM pg_procmem_history_system",
                        "-c", "SELECT count(*) FROM pg_procmem_history",
                        "-c", "SELECT samples FROM pg_procmem_query_memory WHERE query_id = 42"],
                       capture_output=True, text=True)
    counts = r.stdout.split()
    ok(r.returncode == 0 and len(counts) == 3 and int(counts[0]) > 4000 and int(counts[1]) > 400000
       and int(counts[2]) > 400000,
       "with 64 MB of address space to spare, a backend reads the whole 256 MB ring: %s system rows, %s "
       "process rows, and pg_procmem_query_memory over all of them (%s)" % tuple((counts + ["?"] * 3)[:3]),
       r.stderr)


def big_file():
    """A 401 MB file (1.49 times a 256 MB ring, what the sampler itself
    reaches before a rewrite): the postmaster never reads it, and its memory
    and a crash restart do not depend on it; under a 600 MB memory cgroup and
    under ulimit -v 640 MB the server starts and restarts after a crash."""
    size = "-c pg_procmem.history_size=256MB"
    stop()
    os.unlink(HFILE)
    start(size)
    crash_back()
    base_hwm = proc_fields("/proc/%d/status" % postmaster_pid())["VmHWM"]

    stop()
    write_history(HFILE, 6530, 100)     # 6,530 samples of 101 entries: 401 MB
    file_size = os.path.getsize(HFILE)
    limit = ("prlimit", "--as=%d" % (640 * MB), "--")
    at = log_size()
    start(size, prefix=limit)
    pm = postmaster_pid()
    ok(wait_until(lambda: samples() > 4000, 60),
       "a %d MB file, ulimit -v 640 MB: the server starts, the sampler loads it (%s samples)"
       % (file_size // MB, samples()))
    read_before = own_io(pm)["rchar"]
    came_back = crash_back()
    read = own_io(pm)["rchar"] - read_before
    hwm = proc_fields("/proc/%d/status" % pm)["VmHWM"]
    ok(came_back and wait_until(lambda: value("SELECT count(*) FROM pg_procmem_crashes") != "0"),
       "... and restarts after a crash, whose row is written")
    ok(read <= 64 * 1024, "... the postmaster read %d bytes over the crash restart (at most 64 kB)" % read)
    ok(hwm - base_hwm <= MB, "... its peak memory is %d kB, %d kB more than with no file (at most 1 MB)"
       % (hwm // 1024, (hwm - base_hwm) // 1024))
    # a poll of the test's refused while the server restarts is no failure
    # (a busy machine's restart once said "not yet accepting connections")
    refused = ("recovery", "not yet accepting connections", "is starting up")
    bad = [l for l in log_since(at).splitlines()
           if "out of memory" in l or "FATAL" in l and not any(r in l for r in refused)]
    ok(not bad, "... no out of memory, no FATAL", "\n".join(bad))
    bounded_reads(size)

    with section(1, "a 600 MB memory cgroup"):
        if not CGROUP:
            skip_rest("no memory cgroup could be made here")
        stop()
        write_history(HFILE, 6530, 100)
        with open(os.path.join(CGROUP, "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))
        cgroup_memory_limit(CGROUP, 600 * MB)
        try:
            start(size)
            loaded = wait_until(lambda: samples() > 4000, 60)
            came_back = crash_back()
            ok(loaded and came_back and value("SELECT 1") == "1",
               "the same file in a 600 MB memory cgroup without swap: the server starts, loads it and "
               "restarts after a crash")
        finally:
            cgroup_memory_limit(CGROUP, None)
    stop()
    os.unlink(HFILE)
    start()


def stopped_rewrites():
    """A rewrite stopped after each of its writes (the test-only setting
    pg_procmem.debug_stop_rewrite_after): the file on disk is whole after
    every one, and the next start loads it.

    The file is larger than its bound (a 2 MB ring's: 6 MB), so each start
    rewrites it at once, a batch of records a write; the sampler stops after
    write k, the server is stopped without shutdown and started with k + 1,
    until a rewrite ends."""
    size = "-c pg_procmem.history_size=2MB -c pg_procmem.sample_interval=1h"
    capacity = 2 * 1024 * 1024 // ENTRY
    stop()
    write_history(HFILE, 115, 100)     # 7 MB
    whole = check_history(HFILE, capacity)
    stops, finished, bad = 0, False, []
    for k in range(1, 40):
        at = log_size()
        ino = os.stat(HFILE).st_ino
        start(size + " -c pg_procmem.debug_stop_rewrite_after=%d" % k)
        wait_until(lambda: "stopping in the middle of a rewrite" in log_since(at) or
                   os.stat(HFILE).st_ino != ino, 30, 0.05)
        if "stopping in the middle" not in log_since(at):
            finished = os.stat(HFILE).st_ino != ino
            break
        stops += 1
        on_disk = check_history(HFILE, capacity)
        if on_disk != whole or not os.path.exists(HTMP):
            bad.append((k, on_disk))
        stop("immediate")
    loaded = samples()
    stop()
    ok(stops >= 3 and finished and not bad and loaded >= whole["samples"],
       "a rewrite stopped after each of its %d writes: the file whole on disk each time and loaded by the next "
       "start, until a rewrite ends" % stops, (bad, whole, loaded))
    os.unlink(HFILE)
    start()


def crafted():
    """A file whose CRCs hold but whose values no build writes: what it says
    is kept in bounds, and every view reads."""
    stop()
    histfile("craft", HFILE)
    os.chown(HFILE, *postgres_ids())
    start()
    ok(grows() and grows(), "a crafted file: the server starts and samples")
    r = rows("SELECT max(sample) AS hi, count(*) AS n, (SELECT sample FROM pg_procmem_history_system "
             "ORDER BY sampled_at DESC NULLS LAST LIMIT 1) AS newest, "
             "count(*) FILTER (WHERE sampled_at IS NULL) AS no_time FROM pg_procmem_history_system")[0]
    ok(int(r["hi"]) < 1000 and r["newest"] == r["hi"] and r["no_time"] == "1",
       "... samples numbered 2^63 - 2 and 5 are renumbered (the newest is the highest: %s), a time out of "
       "range is NULL" % r["hi"], r)
    c = rows("SELECT number, how_known, killed_pid, signal, last_sample_at, seconds_since_sample, summary "
             "FROM pg_procmem_crashes")
    ok(len(c) == 2 and int(c[0]["number"]) == 1 and c[0]["how_known"] == "unknown" and c[0]["killed_pid"] is None
       and c[0]["signal"] is None and c[0]["last_sample_at"] is None and c[0]["seconds_since_sample"] is None
       and int(c[1]["number"]) == 2,
       "... its crash row, numbered 2^31 - 1, is number 1, and states no pid, signal or time it cannot have; "
       "the next row is 2", c)
    stop()
    os.unlink(HFILE)
    start()


def children(pid):
    """The pids of pid's children (from /proc/*/stat)."""
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open("/proc/%s/stat" % d) as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                        out.append(int(d))
            except (OSError, ValueError, IndexError):
                pass
    return out


def orphan():
    """The postmaster killed while its sampler loads a large file: the
    orphan stops at once, as the server's other processes do, and does not
    keep the next start waiting."""
    stop()
    histfile("stops", HFILE, 50000000)  # 800 MB of clean-stop records: seconds to scan
    os.chown(HFILE, *postgres_ids())
    start()
    wait_until(lambda: sampler_pid() is not None, 30, 0.02)
    spid, pm = sampler_pid(), postmaster_pid()
    others = [p for p in children(pm) if p != spid]
    loading = own_io(spid)["rchar"] < os.path.getsize(HFILE)
    os.kill(pm, 9)
    t0 = time.time()
    gone = wait_until(lambda: exited(spid), 10, 0.01)
    took = time.time() - t0
    # a new postmaster needs the old shared memory let go by every process
    everyone = wait_until(lambda: all(exited(p) for p in others), 30, 0.05)
    drop_stale_locks(pm)
    try:
        start()
        started = True
    except subprocess.CalledProcessError:
        started = False
    ok(loading and gone and took < 2 and everyone and started,
       "the postmaster killed while the sampler loads a file: the sampler ends in %.2f s, and once the "
       "server's other processes have too, the next start works" % took,
       {"loading": loading, "gone": gone, "everyone": everyone, "started": started})
    if started:
        stop()
    os.unlink(HFILE)
    start()


def main():
    start()
    execute("CREATE EXTENSION IF NOT EXISTS pg_procmem")
    alter_system("pg_procmem.sample_interval = '500ms'")
    grows()
    hostile_contents()
    hostile_things()
    sparse()
    unwritable()
    symlinked_dir()
    stopped_rewrites()
    crafted()
    orphan()
    big_file()
    stop()
    done()


main()
