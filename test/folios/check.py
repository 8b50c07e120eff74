"""overhead against what the cgroup frees: idle connections, by both of the
pagemap method's paths, and a backend's memory in transparent huge pages
(TAP).

Run as root by scripts/test (PostgreSQL 15 extras) against a cluster in a
memory cgroup of its own ($FOLIOS_CGROUP). With transparent_hugepage set to
never and then to always (host-wide: what was there is put back, also on
failure), one backend holds an in-memory sort (a cursor); its overhead is
compared with what the cgroup loses when it is terminated: within 40 kB or
2%, whichever is larger. Where the kernel keeps pagemap's exclusive bit per
large folio and conservatively (CONFIG_NO_PAGE_MAPCOUNT) an exact count of
pages shared once could under-read; a sort's own folios must read exactly
on every kernel. A run in which the backend got no huge pages (THP not
available, or someone changed the setting meanwhile) is SKIPPED, not passed.

    FOLIOS_CGROUP=... python3 test/folios/check.py
"""
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "py"))
from tap import PSQL, ok, section, skip_rest, done, value, execute, rows  # noqa: E402

THP = "/sys/kernel/mm/transparent_hugepage/enabled"
CGROUP = os.environ.get("FOLIOS_CGROUP", "")
ROWS = 8_000_000


def usage():
    """Bytes charged to the cgroup less page cache (shared memory stays in)."""
    time.sleep(1.0)
    v2 = os.path.exists(os.path.join(CGROUP, "memory.current"))
    with open(os.path.join(CGROUP, "memory.current" if v2 else "memory.usage_in_bytes")) as f:
        u = int(f.read())
    stat = dict(line.split() for line in open(os.path.join(CGROUP, "memory.stat")))
    cache, shmem = ("file", "shmem") if v2 else ("total_cache", "total_shmem")
    return u - (int(stat[cache]) - int(stat[shmem]))


def anon_huge(pid):
    """AnonHugePages of /proc/PID/smaps_rollup in bytes; None when it could
    not be read (never 0: "not in huge pages" must be seen, not assumed)."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("AnonHugePages:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def one(mode):
    with open(THP, "w") as f:
        f.write(mode)
    sess = subprocess.Popen([PSQL, "-X", "-A", "-t", "-q", "-v", "ON_ERROR_STOP=1"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    sess.stdin.write("SET work_mem = '2GB'; BEGIN; DECLARE c NO SCROLL CURSOR FOR "
                     f"SELECT g FROM generate_series(1, {ROWS}) g ORDER BY g DESC; "
                     "FETCH 1 FROM c; SELECT pg_backend_pid();\n")
    sess.stdin.flush()
    sess.stdout.readline()                  # the row fetched
    pid = int(sess.stdout.readline())
    overhead = int(value(f"SELECT overhead FROM pg_procmem_process({pid})"))
    huge = anon_huge(pid)
    before = usage()
    execute(f"SELECT pg_terminate_backend({pid})")
    sess.stdin.close()                      # psql then sees its connection gone and ends
    sess.wait(timeout=60)
    while os.path.exists(f"/proc/{pid}"):
        time.sleep(0.05)
    freed = before - usage()
    return overhead, freed, huge


# the cgroup's usage is charged in batches (64 pages a CPU): over 50
# connections, 10 kB each at most on two cores
IDLE = int(os.environ.get("FOLIOS_IDLE", "50"))


def idle():
    """IDLE idle connections: their overhead read by both of the pagemap
    method's paths, the PAGEMAP_SCAN ioctl's and the pread of every page's
    entry that kernels before 6.7 use (pg_procmem.pagemap_ioctls off),
    against what the cgroup frees when they are terminated, per
    connection: within 40 kB or 2%."""
    sessions = [subprocess.Popen([PSQL, "-X", "-A", "-t", "-q", "-v", "ON_ERROR_STOP=1"], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, text=True,
                                 env=dict(os.environ, PGAPPNAME="folios-idle")) for _ in range(IDLE)]
    for sess in sessions:
        sess.stdin.write("SELECT pg_backend_pid();\n")
        sess.stdin.flush()
    pids = []
    for sess in sessions:
        pids.append(int(sess.stdout.readline()))
    time.sleep(1.0)
    listed = "ARRAY[%s]" % ",".join(map(str, pids))
    total = "SELECT sum(overhead), count(overhead) FROM pg_procmem_processes() WHERE pid = ANY(%s)" % listed
    scan = rows(total)[0]
    pread = rows(total, setup=("SET pg_procmem.pagemap_ioctls = off",))[0]
    before = usage()
    execute("SELECT pg_terminate_backend(pid) FROM unnest(%s) AS pid" % listed)
    for sess in sessions:
        sess.stdin.close()
        sess.wait(timeout=60)
    for pid in pids:
        while os.path.exists(f"/proc/{pid}"):
            time.sleep(0.05)
    freed = (before - usage()) / IDLE
    goal = max(40 * 1024, 0.02 * freed)
    for name, got in (("pagemap_ioctls on", scan), ("pagemap_ioctls off (the pread path)", pread)):
        each = int(got["sum"] or 0) / IDLE
        ok(got["count"] == str(IDLE) and freed > 0 and abs(each - freed) <= goal,
           f"idle connections, {name}, {os.uname().release}: overhead {each / 1024:.0f} kB each is what the "
           f"cgroup freed, {freed / 1024:.0f} kB each, within {goal / 1024:.0f} kB",
           f"error {(each - freed) / 1024:+.1f} kB, {got['count']} of {IDLE} read")


def main():
    with section(6, "folios"):
        if not CGROUP:
            skip_rest("no memory cgroup to measure the truth in")
        with section(2, "idle connections"):
            idle()
        with open(THP) as f:
            saved = re.search(r"\[(\w+)\]", f.read()).group(1)
        try:
            for mode in ("never", "always"):
                with section(2, "THP " + mode):
                    overhead, freed, huge = one(mode)
                    goal = max(40 * 1024, 0.02 * freed)
                    if mode == "always" and huge == 0:
                        skip_rest("the backend got no transparent huge pages here")
                    ok(huge is not None and (huge == 0) == (mode == "never"),
                       f"THP {mode}: the sort's memory {'is' if huge else 'is not'} in huge pages "
                       f"({'AnonHugePages unread' if huge is None else huge >> 20} MB)")
                    ok(freed > 100 << 20 and abs(overhead - freed) <= goal,
                       f"THP {mode}: overhead {overhead >> 10} kB is what the cgroup freed, {freed >> 10} kB, "
                       f"within {goal / 1024:.0f} kB", f"error {(overhead - freed) / 1024:+.1f} kB")
        finally:
            with open(THP, "w") as f:
                f.write(saved)
    done()


if __name__ == "__main__":
    main()
