"""pg_procmem_advice: every check stays quiet on a healthy set-up and speaks
up when its condition is provoked for real (TAP). Run as root by
scripts/test against a throwaway cluster that runs inside its own memory
cgroup ($ADVICE_CGROUP, empty if none could be made). It changes kernel
settings (THP, overcommit, oom_score_adj, a swap file, the cgroup's limit)
and gives every one of them back.

    PG_BIN=... ADVICE_CGROUP=... python3 test/advice/advice.py
"""
import os
import subprocess
import sys
import time
from contextlib import contextmanager

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "py"))
from tap import ok, section, skip_rest, done, rows, value, execute, meminfo

PG_BIN = os.environ.get("PG_BIN", "")
CGROUP = os.environ.get("ADVICE_CGROUP", "")
LOUD = ("warning", "critical")


def findings(check, setup=()):
    """{severity, evidence, ...} rows of one check, as the view gives them."""
    return rows("SELECT * FROM pg_procmem_advice WHERE check_name = '%s'" % check, setup=setup)


def severity(check, setup=()):
    """The check's severity, or None when it has no row."""
    r = findings(check, setup)
    return r[0]["severity"] if r else None


def quiet(check, why, setup=()):
    got = findings(check, setup)
    ok(all(r["severity"] not in LOUD for r in got), "%s quiet: %s" % (check, why), got)


def loud(check, why, want=LOUD, setup=()):
    got = findings(check, setup)
    # the summary fits beside the severity in 80 columns (README's query)
    ok(len(got) == 1 and got[0]["severity"] in want and got[0]["evidence"] and got[0]["recommendation"]
       and 0 < len(got[0]["summary"] or "") <= 64,
       "%s provoked: %s (and summed up in at most 64 characters)" % (check, why), got)
    return got[0] if got else None


@contextmanager
def written(path, text):
    """path holds text inside the block, its old content after."""
    with open(path) as f:
        old = f.read().strip()
    if "[" in old:                      # sysfs mode files: "always [madvise] never"
        old = old[old.index("[") + 1:old.index("]")]
    with open(path, "w") as f:
        f.write(text)
    try:
        yield
    finally:
        with open(path, "w") as f:
            f.write(old)


def pid_of(backend_type):
    return value("SELECT pid FROM pg_procmem_backends WHERE backend_type = '%s' LIMIT 1" % backend_type)




def sysctl(name):
    with open("/proc/sys/vm/" + name) as f:
        return int(f.read())


def cpu0_data_caches():
    """sysfs describes a data or unified cache of cpu0."""
    d = "/sys/devices/system/cpu/cpu0/cache"
    for i in range(32):
        try:
            with open("%s/index%d/type" % (d, i)) as f:
                if f.read().strip() != "Instruction":
                    return True
        except OSError:
            pass
    return False


def idle_sessions(n, sql=None):
    """n psql sessions that (run sql, then) wait idle on their input."""
    procs = []
    for _ in range(n):
        p = subprocess.Popen([os.environ.get("PSQL", "psql"), "-X", "-q", "-o", "/dev/null"],
                             stdin=subprocess.PIPE, text=True)
        if sql:
            p.stdin.write(sql + "\n")
            p.stdin.flush()
        procs.append(p)
    return procs


def close(procs):
    for p in procs:
        p.stdin.close()
        p.wait(30)


def wait_for(sql, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if value(sql) == "t":          # a new session each time: fresh statistics
            return True
        time.sleep(0.2)
    return False


# a session holding ~200 MB of local buffers (anonymous memory of its backend)
HOLD_SQL = ("SET temp_buffers = '400MB'; CREATE TEMP TABLE big AS "
            "SELECT g, repeat('x', 150) AS pad FROM generate_series(1, 1000000) g; SELECT count(*) FROM big;")
HOLDING = "SELECT count(*) = 1 FROM pg_stat_activity WHERE query LIKE '%FROM big%' AND state = 'idle'"


# --- the checks that need no restart --------------------------------------

def oom_checks():
    pm = int(pid_of("postmaster"))
    with section(1, "oom_postmaster protected"):
        try:
            with written("/proc/%d/oom_score_adj" % pm, "-1000"):
                quiet("oom_postmaster", "the postmaster has oom_score_adj -1000")
        except PermissionError:
            skip_rest("lowering oom_score_adj needs CAP_SYS_RESOURCE, which this machine withholds")
    # unprotected, with memory to spare: a risk, not an emergency (on an idle
    # server the postmaster's score is simply the highest)
    loud("oom_postmaster", "the postmaster has oom_score_adj 0, memory to spare", want=("warning",))
    # a client backend holding 200 MB of local buffers outranks every
    # auxiliary process (one oom_score point is about 0.15% of RAM)
    holder = idle_sessions(1, HOLD_SQL)
    try:
        wait_for(HOLDING)
        quiet("oom_auxiliary_first", "a client backend holds the most memory, all at oom_score_adj 0")
    finally:
        close(holder)
    ck = int(pid_of("checkpointer"))
    with written("/proc/%d/oom_score_adj" % ck, "500"):
        r = loud("oom_auxiliary_first", "the checkpointer's oom_score above every client backend's")
        ok(r is not None and "checkpointer (pid %d)" % ck in r["evidence"],
           "... and the evidence names the checkpointer and its pid", r)


def kernel_setting_checks():
    thp = "/sys/kernel/mm/transparent_hugepage/enabled"
    with section(2, "transparent_hugepage"):
        if not os.path.exists(thp):
            skip_rest("no transparent huge pages on this kernel")
        with written(thp, "madvise"):
            quiet("transparent_hugepage", "THP enabled = madvise")
        with written(thp, "always"):
            loud("transparent_hugepage", "THP enabled = always")

    committed, ram_swap = meminfo("Committed_AS"), meminfo("MemTotal") + meminfo("SwapTotal")
    with written("/proc/sys/vm/overcommit_memory", "0"), section(1, "overcommit quiet"):
        if committed >= ram_swap:
            skip_rest("Committed_AS is above RAM + swap on this machine")
        got = findings("overcommit")
        ok(len(got) == 1 and got[0]["severity"] == "info" and "vm.overcommit_memory = 0" in got[0]["evidence"],
           "overcommit quiet: heuristic mode, Committed_AS below RAM + swap (an info row)", got)
    with written("/proc/sys/vm/overcommit_memory", "1"):
        loud("overcommit", "vm.overcommit_memory = 1", want=("warning",))


def setting_checks():
    h = rows("SELECT available, max_connections, hash_mem_multiplier, autovacuum_exposure FROM pg_procmem_headroom")[0]
    # the work_mem at which max_connections x work_mem x hash_mem_multiplier
    # + the autovacuum exposure reaches the memory left
    edge = (int(h["available"]) - int(h["autovacuum_exposure"])) / (
        int(h["max_connections"]) * float(h["hash_mem_multiplier"]))
    kb = lambda b: "SET work_mem = '%dkB'" % min(int(b / 1024), 2147483647)
    # MemAvailable moves while other things run: 30% either side of the edge
    with section(2, "work_mem_exposure"):
        if edge < 1 << 20:
            skip_rest("less than 1 MB of work_mem per connection fits in the memory left here")
        quiet("work_mem_exposure", "work_mem 30%% below the edge (%d MB)" % (edge / 2 ** 20), setup=[kb(edge * 0.7)])
        loud("work_mem_exposure", "work_mem 30% above the edge", want=("warning",), setup=[kb(edge * 1.3)])

    m = rows("SELECT * FROM pg_procmem_machine_info()")[0]
    llc = int(m["cpu_cache_bytes"]) if m["cpu_cache_bytes"] else 0
    # a missing figure is not "no cache": where sysfs describes cpu0's data
    # caches, the figure must be there (and the checks below run)
    ok(bool(llc) == cpu0_data_caches(), "cpu_cache_bytes is known exactly where sysfs describes cpu0's data caches",
       {k: m[k] for k in ("cpu_cache_bytes", "cpu_cache_level")})
    with section(4, "above_cpu_cache"):
        if not llc:
            skip_rest("no last-level cache figure (%s)" % ("the test above failed: sysfs describes cpu0's caches"
                                                           if cpu0_data_caches() else "sysfs describes no cache of cpu0"))
        edge = max(16 * llc, 2 ** 30)
        for setting in ("work_mem", "maintenance_work_mem"):
            set_to = lambda b: "SET %s = '%dkB'" % (setting, b // 1024)
            quiet(setting + "_above_cpu_cache", "%s just under max(16 x LLC, 1 GB)" % setting,
                  setup=[set_to(edge - 2 ** 20)])
            loud(setting + "_above_cpu_cache", "%s at 16 x the last-level cache (%d MB)" % (setting, llc >> 20),
                 want=("warning",), setup=[set_to(edge)])

    # the dirty thresholds, computed here from /proc independently
    avail = meminfo("MemAvailable")
    limit = sysctl("dirty_bytes") or sysctl("dirty_ratio") * avail // 100
    background = sysctl("dirty_background_bytes") or sysctl("dirty_background_ratio") * avail // 100
    mwm = lambda b: "SET maintenance_work_mem = '%dkB'" % (b // 1024)
    with section(1, "dirty_writeback quiet"):
        if background <= 64 << 20:
            skip_rest("the dirty background threshold is below 64 MB here")
        ok(severity("dirty_writeback", setup=[mwm(64 << 20)]) is None,
           "dirty_writeback quiet: maintenance_work_mem 64 MB, below the background threshold (%d MB)"
           % (background >> 20))
    with section(1, "dirty_writeback info"):
        if limit <= background * 1.3:
            skip_rest("the dirty limit is too close to the background threshold")
        ok(severity("dirty_writeback", setup=[mwm((limit + background) // 2)]) == "info",
           "dirty_writeback: between the background threshold and the limit is info")
    loud("dirty_writeback", "maintenance_work_mem 20%% above the dirty limit (%d MB)" % (limit >> 20),
         want=("warning",), setup=[mwm(int(limit * 1.2))])


# --- the memory cgroup: usage near its limit, an OOM kill, swap ------------

def cg_file(*names):
    for n in names:
        if os.path.exists(os.path.join(CGROUP, n)):
            return os.path.join(CGROUP, n)
    raise FileNotFoundError(names[0])


LIMIT_FILE = ("memory.max", "memory.limit_in_bytes")
UNLIMITED = {"memory.max": "max", "memory.limit_in_bytes": "-1"}


def set_limit(v):
    path = cg_file(*LIMIT_FILE)
    with open(path, "w") as f:
        f.write(str(v) if v is not None else UNLIMITED[os.path.basename(path)])


@contextmanager
def no_swap(limit):
    """No swap for the cgroup inside the block (v2 memory.swap.max; v1
    memory+swap limited to the memory limit)."""
    for name, setting in (("memory.swap.max", "0"), ("memory.memsw.limit_in_bytes", str(limit))):
        path = os.path.join(CGROUP, name)
        if os.path.exists(path):
            with written(path, setting):
                yield
            return
    yield


def hog(nbytes, oom_adj=0):
    """A process in the server's cgroup that holds nbytes of touched memory."""
    code = ("import os, sys, time\n"
            "open('/proc/self/oom_score_adj', 'w').write('%d')\n"
            "b = bytearray(%d)\n"
            "for i in range(0, len(b), 4096): b[i] = 1\n"
            "print('ready', flush=True)\n"
            "time.sleep(600)\n" % (oom_adj, nbytes))
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                         preexec_fn=lambda: open(os.path.join(CGROUP, "cgroup.procs"), "w").write(str(os.getpid())))
    line = p.stdout.readline()
    return p, line.strip() == "ready"


def cgroup_room():
    """The cgroup's limit less what it uses that the kernel cannot reclaim,
    from its own files: usage less page cache and reclaimable slab (v2
    memory.stat file - shmem and slab_reclaimable; v1 total_cache -
    total_shmem, no slab figure), as sysmem_cgroup_unreclaimable() counts."""
    with open(cg_file("memory.stat")) as f:
        stat = dict(line.split() for line in f)
    reclaimable = (int(stat["file"]) - int(stat["shmem"]) + int(stat.get("slab_reclaimable", 0))
                   if "file" in stat else int(stat["total_cache"]) - int(stat["total_shmem"]))
    with open(cg_file(*LIMIT_FILE)) as f:
        limit = int(f.read())
    with open(cg_file("memory.current", "memory.usage_in_bytes")) as f:
        usage = int(f.read())
    return limit - max(usage - reclaimable, 0)


def cgroup_checks():
    with section(10, "cgroup"):
        if not CGROUP:
            skip_rest("no memory cgroup could be made for the server here")
        quiet("cgroup_limit", "no limit on the server's cgroup")
        quiet("cgroup_oom_kills", "no OOM kill in the server's fresh cgroup")
        limit = 1 << 30
        set_limit(limit)
        try:
            s = rows("SELECT cgroup_usage, cgroup_file, cgroup_shmem FROM pg_procmem_system")[0]
            used = int(s["cgroup_usage"]) - (int(s["cgroup_file"]) - int(s["cgroup_shmem"]))
            p, ready = hog(int(limit * 0.95) - used)
            try:
                ok(ready, "a process in the cgroup holds 95% of its 1 GB limit")
                # available is the tighter of MemAvailable and the room: the
                # room here, read from the cgroup's files before and after
                # (16 MB: the backend that reads the view is charged too)
                before = min(meminfo("MemAvailable"), cgroup_room())
                h = rows("SELECT available, mem_available FROM pg_procmem_headroom")[0]
                after = min(meminfo("MemAvailable"), cgroup_room())
                ok(min(before, after) - (16 << 20) <= int(h["available"]) <= max(before, after) + (16 << 20)
                   and int(h["available"]) < int(h["mem_available"]) // 2,
                   "headroom's available is the cgroup's room (limit less usage, page cache and reclaimable slab aside), "
                   "the tighter of the two, well below MemAvailable",
                   {"view": h, "room and MemAvailable, the tighter, before": before, "after": after})
                loud("cgroup_limit", "5% of the cgroup's limit left")
                # memory short, and the killer would take an auxiliary process
                # of the server first: an unprotected postmaster is critical
                ck = int(pid_of("checkpointer"))
                with written("/proc/%d/oom_score_adj" % ck, "500"):
                    r = loud("oom_postmaster", "memory short, the checkpointer first in line", want=("critical",))
                    ok(r is not None and "(the checkpointer, pid %d)" % ck in r["evidence"]
                       and "(short)" in r["evidence"], "... and the evidence says who is first and that memory is short", r)
            finally:
                p.kill()
                p.wait()
            quiet("cgroup_limit", "the hog is gone")
            # the OOM killer in the cgroup takes the hog (oom_score_adj 1000), not
            # the server; with swap off for the cgroup, it can't swap instead
            with no_swap(limit):
                p, ready = hog(2 * limit, oom_adj=1000)
                try:
                    p.wait(60)
                finally:
                    p.kill()
                    p.wait()
            ok(not ready and p.returncode == -9, "a process asking for twice the limit is OOM-killed", p.returncode)
            loud("cgroup_oom_kills", "an OOM kill recorded in the cgroup", want=("critical",))
        finally:
            set_limit(None)


SWAPFILE = "/var/tmp/pg_procmem-advice.swap"


def vm_swap(pid):
    """VmSwap of /proc/PID/status, in kB (0 once it has exited)."""
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmSwap:"):
                    return int(line.split()[1])
    except FileNotFoundError:
        pass
    return 0


def squeeze(pid):
    """Pushes the cgroup's memory into swap until the process has some
    there: v2 asks memory.reclaim (limits below usage OOM-kill on v2); v1
    lowers the limit 32 MB at a time (it refuses what it can't reclaim)."""
    reclaim = os.path.join(CGROUP, "memory.reclaim")
    for _ in range(40):
        if vm_swap(pid) > 0:
            return
        try:
            if os.path.exists(reclaim):
                with open(reclaim, "w") as f:
                    f.write(str(32 << 20))
            else:
                usage = int(open(cg_file("memory.usage_in_bytes")).read())
                set_limit(usage - (32 << 20))
        except OSError:
            return


def swap_check():
    quiet("swap", "nothing of the server is swapped out")
    with section(3, "swap"):
        if not CGROUP:
            skip_rest("no memory cgroup to push the server's memory into swap")
        swappiness = os.path.join(CGROUP, "memory.swappiness")
        if sysctl("swappiness") == 0 or (os.path.exists(swappiness) and int(open(swappiness).read()) == 0):
            skip_rest("vm.swappiness is 0: the kernel would not swap the server's memory")
        made = subprocess.run("rm -f %s && dd if=/dev/zero of=%s bs=1M count=512 status=none && chmod 600 %s && "
                              "mkswap %s >/dev/null && swapon %s" % ((SWAPFILE,) * 5), shell=True).returncode == 0
        if not made:
            subprocess.run(["rm", "-f", SWAPFILE])
            skip_rest("swapon is not allowed here")
        holder = []
        try:
            # a backend holding ~200 MB of local buffers
            holder = idle_sessions(1, HOLD_SQL)
            wait_for(HOLDING)
            pid = int(value("SELECT pid FROM pg_stat_activity WHERE query LIKE '%FROM big%' AND pid <> pg_backend_pid()"))
            squeeze(pid)
            set_limit(None)
            ok(vm_swap(pid) > 0, "the backend holding local buffers has pages in swap (VmSwap %d kB)" % vm_swap(pid))
            loud("swap", "pages of a backend pushed into swap by the cgroup", want=("warning",))
            # the view's figures against VmSwap read just before and just after
            # (background processes may fault pages back in meanwhile)
            pids = [int(r["pid"]) for r in rows("SELECT pid FROM pg_procmem_processes()")]
            before = {p: vm_swap(p) * 1024 for p in pids}
            theirs = {int(r["pid"]): int(r["swap"] or 0) for r in rows("SELECT pid, swap FROM pg_procmem_processes()")}
            after = {p: vm_swap(p) * 1024 for p in pids}
            off = [p for p in pids if p in theirs and not min(before[p], after[p]) <= theirs[p] <= max(before[p], after[p])]
            ok(not off, "each process's swap agrees with VmSwap of /proc/PID/status (%d kB in all)"
               % (sum(after.values()) >> 10), [(p, before[p], theirs[p], after[p]) for p in off])
        finally:
            set_limit(None)
            try:
                subprocess.run(["swapoff", SWAPFILE])
                subprocess.run(["rm", "-f", SWAPFILE])
            finally:
                close(holder)


# --- after a restart: big shared memory, many connection slots ------------

def restart(**settings):
    for k, v in settings.items():
        execute("ALTER SYSTEM SET %s = '%s'" % (k, v))
    data = value("SHOW data_directory")
    join = (lambda: open(os.path.join(CGROUP, "cgroup.procs"), "w").write(str(os.getpid()))) if CGROUP else None
    # pg_ctl restart keeps the command line options (postmaster.opts)
    subprocess.run(["runuser", "-u", "postgres", "--", os.path.join(PG_BIN, "pg_ctl"), "-D", data,
                    "-w", "-t", "120", "-m", "fast", "restart"],
                   check=True, stdout=subprocess.DEVNULL, preexec_fn=join)


def connect_many(n):
    """n connections, one transaction each (pgbench -C)."""
    script = "/tmp/pg_procmem-advice-select1.sql"
    with open(script, "w") as f:
        f.write("SELECT 1;\n")
    subprocess.run([os.path.join(PG_BIN, "pgbench"), "-n", "-C", "-c", "1", "-t", str(n), "-f", script],
                   check=True, stdout=subprocess.DEVNULL)
    os.unlink(script)


def connection_checks(cpus):
    with section(1, "huge_pages quiet"):
        if meminfo("HugePages_Total") != 0:
            skip_rest("huge pages are reserved on this host")
        quiet("huge_pages", "shared_buffers 128 MB, no huge pages reserved")
    ok(severity("max_connections") is None, "max_connections quiet: 10 x the %d CPUs" % cpus)
    quiet("idle_connections", "no idle connections")
    ok(severity("connection_rate") is None, "connection_rate quiet: a fresh server, few sessions")

    restart(max_connections=10 * cpus + 40, shared_buffers="8GB")
    loud("huge_pages", "shared_buffers 8 GB without huge pages")
    ok(severity("max_connections") == "info", "max_connections: above 10 x the CPUs is an info row")
    idle = idle_sessions(10 * cpus + 1)
    try:
        wait_for("SELECT count(*) >= %d FROM pg_stat_activity WHERE state = 'idle' AND backend_type = 'client backend'"
                 % (10 * cpus + 1))
        loud("idle_connections", "%d idle client backends on %d CPUs" % (10 * cpus + 1, cpus), want=("warning",))
    finally:
        close(idle)
    # 1,100 connections, one per transaction, with the statistics never
    # reset: pg_stat_database's counters are older than this server's start
    # (they survive restarts), so no rate can be measured: "unknown", info
    connect_many(1100)
    wait_for("SELECT sum(sessions) >= 1100 FROM pg_stat_database")
    got = findings("connection_rate")
    ok(len(got) == 1 and got[0]["severity"] == "info" and "unknown" in got[0]["evidence"],
       "connection_rate: 1,100 sessions, statistics never reset: the rate is unknown (info)", got)
    # a clean restart: a fresh server that has had no new sessions, whose
    # counters still hold the 1,100: never a rate it did not see
    restart()
    got = findings("connection_rate")
    ok(len(got) == 1 and "unknown" in got[0]["evidence"] and "per second on average" not in got[0]["evidence"],
       "connection_rate after a restart: no rate printed for sessions of an earlier run", got)
    # a single table's reset moves the database's stats_reset past the
    # start but keeps its sessions: still no rate (a draft of 1.2.0 took
    # stats_reset as the start of a window it could measure)
    execute("CREATE TABLE rate_probe (i int); "
            "SELECT pg_stat_reset_single_table_counters('rate_probe'::regclass); DROP TABLE rate_probe")
    got = findings("connection_rate")
    ok(len(got) == 1 and got[0]["severity"] == "info" and "per second on average" not in got[0]["evidence"],
       "connection_rate after a single table's reset: stats_reset moved, sessions did not: still unknown", got)

def main():
    cpus = int(value("SELECT cpus FROM pg_procmem_machine_info()"))
    restart(max_connections=10 * cpus)
    got = rows("SELECT * FROM pg_procmem_advice")
    ok(got and all(r["severity"] in ("info", "warning", "critical") and r["summary"] and r["evidence"]
                   and r["recommendation"] for r in got),
       "every finding has a severity, a summary, evidence and a recommendation", got)
    # the server's own memory settings first: restart() changes them last
    for part in (oom_checks, kernel_setting_checks, setting_checks, cgroup_checks, swap_check,
                 lambda: connection_checks(cpus)):
        try:
            part()
        except Exception as e:          # a failure, and go on with the others
            ok(False, "%s ran to the end" % getattr(part, "__name__", "a part"), "%s: %s" % (type(e).__name__, e))
    done()


if __name__ == "__main__":
    main()
