"""A parallel query's dynamic shared memory, live (TAP): a parallel hash
join's hash table in DSM, per process (dsm) and per parallel group
(group_dsm), against the segments read independently from the group's
processes' maps, on each dynamic_shared_memory_type (posix, mmap, sysv).

The query: a Parallel Hash Join with work_mem = 1GB, hash_mem_multiplier =
1 and 2 workers, whose hash table of 1.2 million rows of about 250 bytes
(about 300 MB) is built in DSM; its probe side then sleeps 2.5 s on 24 of
its rows, so the table stays built, unchanged, for about 20 s while the
test looks (and cancels the query once it has looked). Outside any
cgroup, one restart of the cluster per type.

The independent figure: every process of the server (the postmaster and
its children) has its /proc/PID/maps read; a segment of the server's type
is a mapping of /dev/shm/PostgreSQL.<handle> (posix), of
<data directory>/pg_dynshmem/mmap.<handle> (mmap), or of /SYSV<key> whose
inode is a shmid other than the main segment's (sysv, postmaster.pid says
which). What a segment holds: its file's allocated blocks (st_blocks * 512,
the file's inode checked against the mapping's) for posix and mmap,
/proc/sysvipc/shm's rss column for sysv. The group's own DSM is the sum of
the segments its leader or workers map and no other process of the server
maps, each counted once. The view is read between two such reads (A, view,
B); a moment counts when A and B agree (the table did not change in
between), else the three are read again.

What it asserts, for each type: the plan; the group's own DSM, 50 MB or
more; group_dsm within 20% of it; the same group_dsm on every member of
the group; each member's dsm within 20% of the segments it maps; an idle
backend's group_dsm is its own segments' (none: 0) and its dsm known; and
pg_procmem_process(pid, false) gives dsm, and group_dsm NULL (one process
alone has no group to look at).

Run as root by scripts/test (the history suite) against a throwaway
cluster of its own, which this test starts and restarts (as user postgres):

    PG_BIN=... CLUSTER_DIR=... SERVER_OPTS='-c ...' python3 test/history/dsm.py
"""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "py"))
from cluster import DATA, start, stop, wait_until, session, close, end_sessions, pid_of, postmaster_pid  # noqa: E402
from tap import ok, done, rows, value, execute  # noqa: E402

MB = 1 << 20
TYPES = ("posix", "mmap", "sysv")
FLOOR = 50 * MB                 # a group figure of zero (or nearly) cannot pass
TOLERANCE = 0.20
SETTINGS = ("SET work_mem = '1GB'; SET hash_mem_multiplier = 1; SET parallel_setup_cost = 0; "
            "SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0; "
            "SET max_parallel_workers_per_gather = 2; SET enable_parallel_hash = on;")
# the build side: 1.2 million rows with 200 bytes of text each, about 300
# MB of hash table; the probe side twice as many narrow rows (so the
# planner hashes the build side), sleeping 2.5 s on 24 of them
QUERY = ("SELECT count(*), sum(length(b.pad)) FROM dsm_probe p JOIN dsm_build b ON b.id = p.id "
         "AND (p.id % 100000 <> 0 OR pg_sleep(2.5) IS NOT NULL)")
APP = "dsm-query"
IDLE = "dsm-idle"


def tables():
    """Unlogged (no WAL to write; kept over a clean restart), analyzed."""
    execute("CREATE UNLOGGED TABLE dsm_build AS SELECT g AS id, repeat('x', 200) AS pad "
            "FROM generate_series(1, 1200000) g")
    execute("CREATE UNLOGGED TABLE dsm_probe AS SELECT g AS id FROM generate_series(1, 2400000) g")
    execute("VACUUM ANALYZE dsm_build, dsm_probe")


def plan():
    """EXPLAIN's lines for the query with the test's settings."""
    r = rows("EXPLAIN (COSTS OFF) " + QUERY, setup=[s.strip() + ";" for s in SETTINGS.split(";") if s.strip()])
    return [next(iter(x.values())) for x in r]


# --- the independent read: the server's processes' maps -------------------

def server_pids():
    """The postmaster and its children."""
    pm = postmaster_pid()
    pids = [pm]
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        if ppid == pm:
            pids.append(int(d))
    return pids


def main_shmid():
    """The main segment's shmid (postmaster.pid's 7th line: key, shmid)."""
    with open(os.path.join(DATA, "postmaster.pid")) as f:
        lines = f.read().splitlines()
    return int(lines[6].split()[1])


def sysv_rss():
    """/proc/sysvipc/shm: shmid -> rss (bytes)."""
    out = {}
    with open("/proc/sysvipc/shm") as f:
        head = f.readline().split()
        i_id, i_rss = head.index("shmid"), head.index("rss")
        for line in f:
            p = line.split()
            out[int(p[i_id])] = int(p[i_rss])
    return out


def mapped_segments(pid, kind, shmid, mmap_dir):
    """The DSM segments of kind pid maps: {id: (path, range)} (id: inode or
    shmid); None when its maps could not be read (it exited)."""
    out = {}
    try:
        with open("/proc/%d/maps" % pid) as f:
            text = f.read()
    except OSError:
        return None
    for line in text.splitlines():
        parts = line.split(None, 5)
        if len(parts) < 6:
            continue
        inode, path = int(parts[4]), parts[5].strip()
        if path.endswith(" (deleted)"):
            path = path[:-len(" (deleted)")]
        if kind == "posix" and path.startswith("/dev/shm/PostgreSQL."):
            out[inode] = (path, parts[0])
        elif kind == "mmap" and path.startswith(mmap_dir + "/mmap."):
            out[inode] = (path, parts[0])
        elif kind == "sysv" and path.startswith("/SYSV") and inode != shmid:
            out[inode] = (path, parts[0])
    return out


def segment_bytes(kind, pid, ident, where, rss):
    """What a segment holds as the kernel counts it."""
    if kind == "sysv":
        return rss.get(ident, 0)
    path, span = where
    try:
        st = os.stat(path)
        if st.st_ino == ident:
            return st.st_blocks * 512
    except OSError:
        pass
    # the name gone or another file's now: the mapped file itself
    st = os.stat("/proc/%d/map_files/%s" % (pid, span))
    return st.st_blocks * 512


def independent(kind, group, idle):
    """One read of every server process's maps: the segments' bytes, what
    each member of group maps, the group's own (mapped by no process
    outside it), and idle's own (mapped by no other process)."""
    shmid = main_shmid()
    mmap_dir = os.path.realpath(os.path.join(DATA, "pg_dynshmem"))
    maps = {}
    for pid in server_pids():
        m = mapped_segments(pid, kind, shmid, mmap_dir)
        if m is not None:
            maps[pid] = m
    rss = sysv_rss() if kind == "sysv" else {}
    size = {}
    for pid, m in maps.items():
        for ident, where in m.items():
            if ident not in size:
                try:
                    size[ident] = segment_bytes(kind, pid, ident, where, rss)
                except OSError:
                    size[ident] = 0
    inside = set().union(*[set(maps.get(p, {})) for p in group])
    outside = set().union(*[set(m) for p, m in maps.items() if p not in group])
    idle_own = set(maps.get(idle, {})) - set().union(*[set(m) for p, m in maps.items() if p != idle])
    own = inside - outside
    return {"members": {p: sum(size[i] for i in maps[p]) for p in group if p in maps},
            "own": sum(size[i] for i in own), "own_segments": len(own),
            "shared_with_others": len(inside & outside),
            "idle_own": sum(size[i] for i in idle_own), "idle_seen": idle in maps,
            "sizes": {i: size[i] for i in sorted(own)}}


# --- the view -------------------------------------------------------------

def view():
    """pg_procmem_backends' rows by pid; {} when it could not be read (psql said why on stderr)."""
    try:
        return {int(r["pid"]): r for r in rows("SELECT pid, leader_pid, dsm, group_dsm FROM pg_procmem_backends")}
    except subprocess.CalledProcessError as e:
        print("# pg_procmem_backends could not be read: %s" % (e.stderr or "").strip().replace("\n", " "))
        return {}


def near(x, y):
    return abs(x - y) <= TOLERANCE * y


def big(n):
    return "%.1f MB" % (n / MB) if n is not None else "unknown"


def leader_pid():
    """The query's leader (its workers have its application_name too)."""
    v = value("SELECT pid FROM pg_stat_activity WHERE application_name = '%s' AND leader_pid IS NULL "
              "AND backend_type = 'client backend'" % APP)
    return int(v) if v else None


def group_pids(leader):
    """The leader and the workers pg_stat_activity says are its."""
    return [leader] + [int(r["pid"]) for r in rows(
        "SELECT pid FROM pg_stat_activity WHERE leader_pid = %d ORDER BY pid" % leader)]


def settled(kind, group, idle, timeout=90):
    """Waits for the group's own DSM to reach the floor and stay still (two
    reads half a second apart the same): the hash table built."""
    last = [None]

    def still():
        a = independent(kind, group, idle)
        prev, last[0] = last[0], a
        return a["own"] >= FLOOR and prev is not None and prev["own"] == a["own"]
    return wait_until(still, timeout, 0.5), last[0]


def moment(kind, group, idle, attempts=8):
    """A, the view, B: the first attempt where A and B agree (the
    segments did not change over the view's read); else the last, marked
    unsettled."""
    for i in range(attempts):
        a = independent(kind, group, idle)
        v = view()
        b = independent(kind, group, idle)
        if a["own"] == b["own"] and a["members"] == b["members"]:
            return a, v, b, True, i + 1
        time.sleep(0.3)
    return a, v, b, False, attempts


def one_type(kind, first):
    if not first:
        stop()
    start("-c dynamic_shared_memory_type=%s" % kind)
    if first:
        execute("CREATE EXTENSION IF NOT EXISTS pg_procmem")
        tables()
    lines = plan()
    shown = value("SHOW dynamic_shared_memory_type")
    ok(shown == kind and any("Parallel Hash Join" in l for l in lines)
       and any(l.strip() == "->  Parallel Hash" for l in lines) and any("Workers Planned: 2" in l for l in lines),
       "%s: the server runs with dynamic_shared_memory_type = %s; the query's plan is a Parallel Hash "
       "Join under a Gather of 2 workers" % (kind, kind), "\n".join([shown or ""] + lines))

    idle_s = session("SELECT 1;", IDLE)
    q = session(SETTINGS + " " + QUERY + ";", APP)
    try:
        wait_until(lambda: pid_of(IDLE) and leader_pid(), 30)
        idle, leader = pid_of(IDLE), leader_pid()
        group = []
        if leader:
            wait_until(lambda: len(group_pids(leader)) == 3, 30)
            group = group_pids(leader)
        calm, seen = settled(kind, group, idle) if len(group) == 3 else (False, None)
        ok(calm, "%s: the query's group (its leader and 2 workers) holds DSM of its own, 50 MB or more, "
           "read from their maps, and it holds still" % kind,
           "group %s; independent read: %s" % (group, seen))
        if not calm:
            a = v = b = None
        else:
            a, v, b, agreed, tries = moment(kind, group, idle)
        # the view's figures for the group (None where a row or a figure is missing)
        gd = {p: (int(v[p]["group_dsm"]) if v and p in v and v[p]["group_dsm"] is not None else None)
              for p in group}
        md = {p: (int(v[p]["dsm"]) if v and p in v and v[p]["dsm"] is not None else None) for p in group}
        lead_gd = gd.get(leader)
        if a:
            print("# %s: group_dsm %s (leader %d's row); the segments only the group maps: %s in %d segments "
                  "(before the view's read), %s (after); %d of the group's segments shared with other "
                  "processes; %s after %d attempt(s)"
                  % (kind, big(lead_gd), leader, big(a["own"]), a["own_segments"], big(b["own"]),
                     a["shared_with_others"], "agreeing" if agreed else "NOT agreeing", tries))
            print("# %s: dsm per member (view / maps): %s" % (kind, ", ".join(
                "%d %s / %s" % (p, big(md[p]), big(a["members"].get(p))) for p in group)))
            # within 20% of the read that agrees with the other; if none
            # did, of either (the view read between them)
            fits = lead_gd is not None and lead_gd >= FLOOR and (
                near(lead_gd, a["own"]) if agreed else
                (near(lead_gd, a["own"]) or near(lead_gd, b["own"])
                 or min(a["own"], b["own"]) <= lead_gd <= max(a["own"], b["own"])))
        else:
            fits = False
        ok(fits, "%s: group_dsm is within 20%% of the allocated size of the segments only its group maps, "
           "and 50 MB or more" % kind,
           "group_dsm %s; independent %s / %s; segments %s" % (
               big(lead_gd), big(a and a["own"]), big(b and b["own"]), a and a["sizes"]))
        ok(len(gd) == 3 and None not in gd.values() and len(set(gd.values())) == 1,
           "%s: every member of the group (leader and workers) shows the same group_dsm" % kind, gd)
        ok(a is not None and all(md[p] is not None and p in a["members"] and near(md[p], a["members"][p])
                                 for p in group),
           "%s: each member's dsm is within 20%% of the segments it maps" % kind,
           {p: (md[p], a and a["members"].get(p)) for p in group})
        irow = v.get(idle) if v else None
        igd = int(irow["group_dsm"]) if irow and irow["group_dsm"] is not None else None
        ok(irow is not None and irow["dsm"] is not None and igd is not None and a["idle_seen"]
           and near(igd, a["idle_own"]) and (lead_gd is None or igd < lead_gd / 10),
           "%s: an idle backend's group_dsm is only what it alone maps (normally nothing), its dsm known"
           % kind,
           "idle %s: %s; independent own %s" % (idle, irow, big(a and a["idle_own"])))
        try:
            p = rows("SELECT dsm, group_dsm FROM pg_procmem_process(%d, false)" % leader) if leader else []
        except subprocess.CalledProcessError as e:
            p = [(e.stderr or "").strip()]
        ok(len(p) == 1 and isinstance(p[0], dict) and p[0]["dsm"] is not None and int(p[0]["dsm"]) > 0
           and p[0]["group_dsm"] is None,
           "%s: pg_procmem_process(leader, false): its dsm, and group_dsm NULL" % kind, p)
    finally:
        execute("SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = '%s' "
                "AND leader_pid IS NULL" % APP)
        end_sessions("dsm-")
        close(q)
        close(idle_s)
        wait_until(lambda: value("SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE 'dsm-%'")
                   == "0", 30)


def main():
    t0 = time.time()
    for i, kind in enumerate(TYPES):
        one_type(kind, i == 0)
    stop()
    print("# took %.0f s" % (time.time() - t0))
    done()


main()
