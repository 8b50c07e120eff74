"""The memory history's file and a small disk (TAP): the file never takes the
free space the server needs.

Run as root by scripts/test inside a mount namespace of its own (unshare -m),
where this test puts the cluster's data directory on a tmpfs of 160 MB, then
of 400 MB, and pg_stat_tmp on a tmpfs of its own: nothing outside the
namespace sees them.

    unshare -m --propagation private env PG_BIN=... CLUSTER_DIR=... SERVER_OPTS='-c ...' \
        python3 test/history/disk.py
"""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "py"))
from cluster import (CLUSTER, DATA, HFILE, start, stop, log_size, log_since, history_lines, wait_until,  # noqa: E402
                     grows, session, close, end_sessions, postgres_ids, histfile)
from tap import ok, done, value, execute  # noqa: E402

MB = 1 << 20
MARGIN_MIN = 256 * MB


def on_tmpfs(size_mb):
    """The data directory, copied onto a tmpfs of size_mb mounted in its place."""
    keep = os.path.join(CLUSTER, "data.keep")
    if not os.path.exists(keep):
        subprocess.run(["cp", "-a", DATA, keep], check=True)     # owners kept
    if os.path.ismount(DATA):
        subprocess.run(["umount", DATA], check=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%dm,mode=0700" % size_mb, "tmpfs", DATA], check=True)
    subprocess.run(["cp", "-a", keep + "/.", DATA], check=True)
    os.chown(DATA, *postgres_ids())


def free():
    st = os.statvfs(DATA)
    return st.f_bavail * st.f_frsize


def size(path):
    return os.path.getsize(path) if os.path.exists(path) else 0


def small_disk():
    """160 MB in all: less free than the margin, so the file is never written;
    the server's own writes have all the space."""
    on_tmpfs(160)
    at = log_size()
    start("-c pg_procmem.history_size=16MB -c pg_procmem.sample_interval=100ms")
    execute("CREATE EXTENSION IF NOT EXISTS pg_procmem")
    idle = [session("SELECT 1;", "disk-idle") for _ in range(20)]
    sizes = []
    for _ in range(15):
        grows()
        sizes.append(size(HFILE))
    lines = history_lines(log_since(at))
    ok(max(sizes) == 0 and len(lines) == 1 and "too little free space" in lines[0],
       "a 160 MB data directory (%d MB free): the file is never written, said once" % (free() // MB),
       (sizes, lines))
    room = (free() - 24 * MB) // 3     # a table of this much, and its WAL
    execute("CREATE TABLE filler (b text); ALTER TABLE filler ALTER b SET STORAGE plain")
    execute("INSERT INTO filler SELECT repeat('x', 4000) FROM generate_series(1, %d)" % (room // 8192))
    ok(value("SELECT count(*) > 0 FROM filler") == "t" and grows(),
       "... the server writes %d MB of table and its WAL into the rest, and samples on" % (room // MB))
    end_sessions("disk-")
    for p in idle:
        close(p)
    stop()


def margin():
    """400 MB: the file is written until writing more would leave less than
    the margin (256 MB here) free, then not, said once; written again once
    there is room."""
    on_tmpfs(400)
    at = log_size()
    start("-c pg_procmem.history_size=1MB -c pg_procmem.sample_interval=100ms")
    # the server's own first writes (the extension, relcache init files) before the margin is near
    execute("CREATE EXTENSION IF NOT EXISTS pg_procmem")
    grows()
    ok(wait_until(lambda: size(HFILE) > 0), "a 400 MB data directory: the file is written (%d MB free)"
       % (free() // MB))
    blocker = os.path.join(DATA, "blocker")
    # leave 64 kB above the margin: a few samples' worth
    with open(blocker, "wb") as f:
        f.write(b"\0" * max(free() - MARGIN_MIN - 64 * 1024, 0))
    lowest = free()
    stopped = wait_until(lambda: "too little free space" in log_since(at), 30)
    for _ in range(10):
        grows()
        lowest = min(lowest, free())
    still = size(HFILE)
    grows()
    grows()
    # the server's own writes (WAL, statistics) go on meanwhile on the same
    # filesystem: a few pages under the margin are theirs (12 kB seen on 19)
    ok(stopped and size(HFILE) == still and lowest >= MARGIN_MIN - MB,
       "... up to the margin: then it stops, and 256 MB stay free, less at most 1 MB of the server's other "
       "writes (%d kB at the lowest)" % (lowest // 1024))
    ok(len([l for l in history_lines(log_since(at)) if "too little free space" in l]) == 1, "... said once")
    os.unlink(blocker)
    ok(wait_until(lambda: "written again" in log_since(at), 30) and wait_until(lambda: size(HFILE) > 0),
       "... room again: the file is written again, and said")
    stop()


def own_filesystem():
    """pg_stat_tmp a symbolic link to a tmpfs of its own (64 MB, 24 inodes):
    the margin there is 5%, not the data directory's 256 MB, so the file is
    written; with its inodes used up, a rewrite cannot create its temporary
    file, and the file it has is kept (only bytes short of the margin cost
    the file)."""
    on_tmpfs(400)
    stat_tmp = os.path.join(DATA, "pg_stat_tmp")
    own = os.path.join(CLUSTER, "stat_tmpfs")
    os.makedirs(own, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m,nr_inodes=24,mode=0700", "tmpfs", own], check=True)
    os.chown(own, *postgres_ids())
    shutil.rmtree(stat_tmp)
    os.symlink(own, stat_tmp)
    at = log_size()
    start("-c pg_procmem.history_size=64kB -c pg_procmem.sample_interval=100ms")
    execute("CREATE EXTENSION IF NOT EXISTS pg_procmem")
    ok(wait_until(lambda: size(HFILE) > 0) and not history_lines(log_since(at)),
       "pg_stat_tmp on a 64 MB tmpfs of its own: the file is written (the margin there is 5%)")
    stop()
    # larger than its bound, so that the next start rewrites it
    histfile("write", HFILE, 100, 100)
    os.chown(HFILE, *postgres_ids())
    before = size(HFILE)
    fillers = 0
    try:
        while True:
            with open(os.path.join(own, "filler.%d" % fillers), "w"):
                pass
            fillers += 1
    except OSError:
        pass
    at = log_size()
    start("-c pg_procmem.history_size=64kB -c pg_procmem.sample_interval=100ms")
    ok(grows() and grows(), "... out of inodes: the server starts and samples")
    lines = [l for l in history_lines(log_since(at)) if "No space left" in l]
    ok(size(HFILE) == before and len(lines) == 1,
       "... its inodes used up (%d files): the rewrite cannot create its temporary file, said once, and the "
       "file it had is kept" % fillers, lines)
    stop()
    subprocess.run(["umount", own], check=True)
    os.unlink(stat_tmp)
    os.makedirs(stat_tmp, mode=0o700)
    os.chown(stat_tmp, *postgres_ids())


def main():
    try:
        small_disk()
        margin()
        own_filesystem()
    finally:
        # the mounts end with this namespace; a server left running here would not
        if os.path.exists(os.path.join(DATA, "postmaster.pid")):
            stop("immediate")
        subprocess.run(["umount", os.path.join(CLUSTER, "stat_tmpfs")], check=False, capture_output=True)
        subprocess.run(["umount", DATA], check=False)
    done()


main()
