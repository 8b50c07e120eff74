"""The throwaway cluster the live tests of the history, the OOM post-mortem,
the pressure watch and the guard stop, start, crash, load and squeeze, and
what they read of it: its log, its history file, its processes' /proc, its
memory cgroup (test/history/*.py, test/pressure, test/guard; standard
library only).

The environment: PG_BIN, CLUSTER_DIR (the cluster in CLUSTER_DIR/data, its
log in CLUSTER_DIR/server.log), SERVER_OPTS (the -c options that start it:
port, socket directory), PG_LIBPATH (LD_LIBRARY_PATH for pg_ctl), and the
libpq variables for psql."""
import glob
import os
import re
import subprocess
import tempfile
import threading
import time

from tap import value, execute

PG_BIN = os.environ["PG_BIN"]
CLUSTER = os.environ["CLUSTER_DIR"]
DATA = os.path.join(CLUSTER, "data")
LOG = os.path.join(CLUSTER, "server.log")
OPTS = os.environ.get("SERVER_OPTS", "")
STAT_TMP = os.path.join(DATA, "pg_stat_tmp")
HFILE = os.path.join(STAT_TMP, "pg_procmem.history")
HTMP = HFILE + ".tmp"
ENTRY = 664                     # sizeof(history_entry): the format
REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
# the interval goes in postgresql.auto.conf: a command-line setting would
# hide the ones made with ALTER SYSTEM
PRELOAD = "-c shared_preload_libraries=pg_procmem -c log_line_prefix='%m [%p] '"


def pg_ctl(*args, env=None, prefix=(), preexec_fn=None):
    e = {"LD_LIBRARY_PATH": os.environ.get("PG_LIBPATH", "")}
    e.update(env or {})
    subprocess.run(list(prefix) + ["runuser", "-u", "postgres", "--", "env"] +
                   ["%s=%s" % kv for kv in e.items()] +
                   [os.path.join(PG_BIN, "pg_ctl"), "-D", DATA, "-l", LOG, "-w", "-t", "60"] + list(args),
                   check=True, capture_output=True, preexec_fn=preexec_fn)


def start(extra="", env=None, prefix=()):
    pg_ctl("start", "-o", " ".join([OPTS, PRELOAD, extra]), env=env, prefix=prefix)


def stop(mode="fast"):
    pg_ctl("stop", "-m", mode)


def running():
    return os.path.exists(os.path.join(DATA, "postmaster.pid"))


def log_size():
    """Where the server's log is now: its length, and the collector's files'."""
    return {p: os.path.getsize(p) if os.path.exists(p) else 0 for p in log_files()}


def log_files():
    d = os.path.join(DATA, "log")
    extra = [os.path.join(d, f) for f in sorted(os.listdir(d))] if os.path.isdir(d) else []
    return [LOG] + extra


def log_since(mark):
    """What the log (and the collector's files) got since log_size() said mark."""
    out = []
    for p in filter(os.path.exists, log_files()):
        with open(p, errors="replace") as f:
            f.seek(mark.get(p, 0) if isinstance(mark, dict) else 0)
            out.append(f.read())
    return "".join(out)


def history_lines(text):
    """The LOG lines (not their DETAIL or HINT) about the memory history."""
    return [l for l in text.splitlines() if " LOG:  " in l and ("memory history" in l or "pg_procmem.history" in l)]


def samples():
    return int(value("SELECT count(*) FROM pg_procmem_history_system"))


def newest():
    return int(value("SELECT coalesce(max(sample), 0) FROM pg_procmem_history_system"))


def wait_until(cond, timeout=30, step=0.2):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            if cond():
                return True
        except (subprocess.CalledProcessError, OSError, ValueError, TypeError):
            pass                        # the server is (re)starting
        time.sleep(step)
    return False


def grows(timeout=15, step=0.2):
    """A new sample arrives: the sampler runs."""
    try:
        n = newest()
    except subprocess.CalledProcessError:
        n = 0
    return wait_until(lambda: newest() > n, timeout, step)


def alter_system(*settings):
    """ALTER SYSTEM SET each of settings ("name = value"), then a reload."""
    for setting in settings:
        execute("ALTER SYSTEM SET " + setting)
    execute("SELECT pg_reload_conf()")


def login_role(name, in_role=None):
    """A role that may log in (a member of in_role), made unless it is there."""
    if value("SELECT count(*) FROM pg_roles WHERE rolname = '%s'" % name) == "0":
        execute("CREATE ROLE %s LOGIN%s" % (name, " IN ROLE " + in_role if in_role else ""))


def psql_as(user, sql, database=None):
    """psql -c sql as user, unpaged: its output and errors."""
    return subprocess.run([os.environ.get("PSQL", "psql"), "-X", "-P", "pager=off", "-U", user] +
                          (["-d", database] if database else []) + ["-c", sql], capture_output=True, text=True)


def session(sql, appname="history-test", user=None):
    """A psql session that runs sql, then waits on its input."""
    env = dict(os.environ, PGAPPNAME=appname)
    if user:
        env["PGUSER"] = user
    p = subprocess.Popen([os.environ.get("PSQL", "psql"), "-X", "-q", "-o", "/dev/null"],
                         stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         text=True, env=env)
    p.stdin.write(sql + "\n")
    p.stdin.flush()
    return p


def end_sessions(prefix):
    """Ends the backends of the test's sessions whose application_name starts so."""
    execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name LIKE '%s%%'" % prefix)


def close(p):
    try:
        p.stdin.close()
    except OSError:
        pass
    try:
        p.wait(30)
    except subprocess.TimeoutExpired:
        p.kill()


def pid_of(appname):
    v = value("SELECT pid FROM pg_stat_activity WHERE application_name = '%s'" % appname)
    return int(v) if v else None


def sampler_pid():
    v = value("SELECT pid FROM pg_stat_activity WHERE backend_type = 'pg_procmem sampler'")
    return int(v) if v else None


def postmaster_pid():
    with open(os.path.join(DATA, "postmaster.pid")) as f:
        return int(f.readline())


def proc_fields(path):
    """A /proc file of "Key: value" lines, as ints where they are (kB as bytes)."""
    out = {}
    with open(path) as f:
        for line in f:
            k, _, v = line.partition(":")
            parts = v.split()
            if parts and parts[0].isdigit():
                out[k] = int(parts[0]) * (1024 if parts[1:2] == ["kB"] else 1)
    return out


def own_io(pid):
    """A process's own I/O: /proc/PID/task/PID/io (the process-wide file adds
    what the children it reaped read)."""
    return proc_fields("/proc/%d/task/%d/io" % (pid, pid))


def crash(appname="history-victim", wait_back=True):
    """kill -9 of a backend running a long query; waits for the crash
    restart to end (and for the sampler to be back). Returns the pid."""
    victim = session("SELECT pg_sleep(60), 'history victim marker';", appname)
    wait_until(lambda: pid_of(appname))
    pid = pid_of(appname)
    os.kill(pid, 9)
    close(victim)
    if wait_back:
        wait_until(lambda: sampler_pid() is not None and pid_of(appname) is None, 60)
    return pid


def exited(pid):
    """Gone, or a zombie nobody has reaped yet (its parent, the postmaster, is dead)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except OSError:
        return True


def drop_stale_locks(pm):
    """After the postmaster pm was killed: a zombie nobody reaps (a
    container's PID 1 that does not) passes the lock files' kill(pid, 0)
    check, so the next start would refuse; take them, as init's reaping
    would have made them stale (the shared memory check stands)."""
    if exited(pm) and os.path.exists("/proc/%d" % pm):
        for lock in [os.path.join(DATA, "postmaster.pid")] + glob.glob(os.path.join(CLUSTER, ".s.PGSQL.*.lock")):
            os.unlink(lock)


def killed_pid(log_from):
    """The process the postmaster logged as killed by signal 9 (the OOM
    killer's) since log_from, an offset in its log; None: none yet."""
    with open(LOG, errors="replace") as f:
        f.seek(log_from)
        m = re.search(r"\(PID (\d+)\) was terminated by signal 9", f.read())
    return int(m.group(1)) if m else None


def crash_row(pid, timeout=90):
    """Waits for pid's crash row (the crash restart over); whether it came."""
    return wait_until(lambda: value("SELECT count(*) FROM pg_procmem_crash_log(true) WHERE killed_pid = %d"
                                    % pid) == "1", timeout)


def as_postgres(*cmd):
    subprocess.run(["runuser", "-u", "postgres", "--"] + list(cmd), check=True, capture_output=True)


_histfile = None


def histfile(*args):
    """test/history/histfile (built once with the extension's codec): its output."""
    global _histfile
    if _histfile is None:
        d = tempfile.mkdtemp(prefix="histfile.")
        _histfile = os.path.join(d, "histfile")
        subprocess.run(["cc", "-O2", "-D_GNU_SOURCE", "-iquote", os.path.join(REPO, "src"), "-o", _histfile,
                        os.path.join(REPO, "test", "history", "histfile.c"),
                        os.path.join(REPO, "src", "rules", "history_format.c")],
                       check=True)
        os.chmod(d, 0o755)
    return subprocess.run([_histfile] + [str(a) for a in args], check=True, capture_output=True,
                          text=True).stdout


def write_history(path, samples_, processes, *more):
    """A valid history file at path, owned by postgres (histfile write)."""
    histfile("write", path, samples_, processes, *more)
    os.chown(path, *postgres_ids())


def check_history(path, capacity):
    """What loading path into a ring of capacity entries finds (histfile check)."""
    out = histfile("check", path, capacity)
    return {k: (int(v) if v.lstrip("-").isdigit() else v)
            for k, _, v in (l.partition(" ") for l in out.splitlines())}


def postgres_ids():
    import pwd
    pw = pwd.getpwnam("postgres")
    return pw.pw_uid, pw.pw_gid


def cgroup_write(cgroup, name, text):
    """Writes a cgroup's file, where the cgroup has it."""
    path = os.path.join(cgroup, name)
    if os.path.exists(path):
        with open(path, "w") as f:
            f.write(text)


def into_cgroup(cgroup):
    """A preexec_fn for subprocess: the child joins cgroup (what it uses is
    charged there)."""
    def join():
        with open(os.path.join(cgroup, "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))
    return join


def oom_kills(cgroup):
    """A memory cgroup's OOM kill counter (v2 memory.events, v1 memory.oom_control); None without one."""
    for name in ("memory.events", "memory.oom_control"):
        path = os.path.join(cgroup, name)
        if os.path.exists(path):
            with open(path) as f:
                for line in f:
                    k, _, v = line.partition(" ")
                    if k == "oom_kill":
                        return int(v)
    return None


def pressure_avg10(path):
    """A pressure file's some and full avg10, in percent (/proc/pressure/memory,
    a cgroup v2's memory.pressure); None where it cannot be read."""
    try:
        with open(path) as f:
            return [float(line.split()[1].split("=")[1]) for line in f]
    except OSError:
        return None


def cgroup_figures(cgroup):
    """A memory cgroup's figures now, in bytes (v2's, or v1's hierarchical
    total_ ones): current (its usage), anon, shmem, file (page cache,
    shared memory in it), inactive_file, active_file, slab_reclaimable
    (v2 only); and used, what the pressure watch and the guard count
    (src/rules/pressure.c's read_level(): page cache, shared memory aside,
    and reclaimable slab are not used)."""
    v2 = os.path.exists(os.path.join(cgroup, "memory.current"))
    with open(os.path.join(cgroup, "memory.current" if v2 else "memory.usage_in_bytes")) as f:
        current = int(f.read())
    with open(os.path.join(cgroup, "memory.stat")) as f:
        stat = dict(l.split()[:2] for l in f)

    def get(v2_name, v1_name):
        return int(stat[v2_name] if v2 else stat.get("total_" + v1_name, stat[v1_name]))
    fig = {"current": current, "anon": get("anon", "rss"), "shmem": get("shmem", "shmem"),
           "file": get("file", "cache"), "inactive_file": get("inactive_file", "inactive_file"),
           "active_file": get("active_file", "active_file"),
           "slab_reclaimable": int(stat.get("slab_reclaimable", 0)) if v2 else 0}
    fig["used"] = max(current - (fig["file"] - fig["shmem"]) - fig["slab_reclaimable"], 0)
    return fig


def sparse_file(path, size):
    """A file of size bytes, all hole, none of it in the page cache: read,
    its holes go into the page cache as data does, without writing it to
    the disk first (on a disk: on a tmpfs a hole reads as the zero page)."""
    with open(path, "wb") as f:
        f.truncate(size)
    drop_cache(path)


def drop_cache(path):
    fd = os.open(path, os.O_RDONLY)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    os.close(fd)


def read_in_cgroup(cgroup, path):
    """dd reads path from inside cgroup (its page cache charged there)."""
    return subprocess.run(["dd", "if=" + path, "of=/dev/null", "bs=1M"], capture_output=True, text=True,
                          preexec_fn=into_cgroup(cgroup))


def cgroup_memory_limit(cgroup, limit):
    """A memory cgroup's limit, swap included (None: no limit): v2's
    memory.max and memory.swap.max, or v1's limits in the order the kernel
    accepts (memory+swap may not go below memory: lowered, memory first;
    raised, memory+swap first)."""
    if os.path.exists(os.path.join(cgroup, "memory.max")):
        cgroup_write(cgroup, "memory.max", str(limit) if limit else "max")
        cgroup_write(cgroup, "memory.swap.max", "0" if limit else "max")
    elif limit:
        try:
            cgroup_write(cgroup, "memory.limit_in_bytes", str(limit))
            cgroup_write(cgroup, "memory.memsw.limit_in_bytes", str(limit))
        except OSError:                 # raised: memory+swap first
            cgroup_write(cgroup, "memory.memsw.limit_in_bytes", str(limit))
            cgroup_write(cgroup, "memory.limit_in_bytes", str(limit))
    else:
        cgroup_write(cgroup, "memory.memsw.limit_in_bytes", "-1")
        cgroup_write(cgroup, "memory.limit_in_bytes", "-1")


class Recorder:
    """read() every step seconds, in a thread, until stop(): the readings
    (a failed read is left out)."""

    def __init__(self, read, step=0.05):
        self.readings = []
        self._read, self._step = read, step
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        while not self._stop.is_set():
            try:
                self.readings.append(self._read())
            except (OSError, ValueError, KeyError):
                pass
            time.sleep(self._step)

    def stop(self):
        self._stop.set()
        self._thread.join(5)
        return self.readings


# The load the incident tests (oom, pressure, guard) run under: pgbench's
# 100 clients, select-only at a modest rate
LOAD = ("-S", "-c", "100", "-j", "4", "-R", "400")


def pgbench_init(scale):
    subprocess.run([os.path.join(PG_BIN, "pgbench"), "-i", "-s", str(scale), "-q"], check=True, capture_output=True)


def pgbench(*args, seconds=600, connected=0, output=False):
    """pgbench -n with args for seconds, in the background (outside the
    server's cgroup); connected: returns once that many of its connections
    are there; output: its output kept for communicate(), as text, else
    thrown away."""
    out = subprocess.PIPE if output else subprocess.DEVNULL
    p = subprocess.Popen([os.path.join(PG_BIN, "pgbench"), "-n"] + list(args) + ["-T", str(seconds)],
                         stdout=out, stderr=subprocess.STDOUT if output else subprocess.DEVNULL, text=True)
    if connected:
        wait_until(lambda: int(value("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'pgbench'"))
                   >= connected, 60)
    return p


def paced_sort(rows_per_s):
    """A sort of rows of about 1 kB (it grows with its rows, not in the
    steps its array of pointers doubles in), paced to rows_per_s rows a
    second (300,000: about 300 MB/s) by a sleep every 1,000 rows up to where
    the statement's clock says it should be; the rows come from a
    set-returning function in the target list, which the executor does not
    materialize first."""
    return ("SELECT count(*) FROM (SELECT g, repeat('x', 1000) AS pad FROM (SELECT generate_series(1, 400000000) AS g) "
            "AS x WHERE pg_sleep(CASE WHEN g %% 1000 = 0 THEN greatest(0, g / %d.0 - "
            "extract(epoch FROM clock_timestamp() - statement_timestamp())) ELSE 0 END) IS NOT NULL "
            "ORDER BY g DESC, pad) AS s;" % rows_per_s)


def temp_buffers(mb):
    """What a session runs to fill mb MB of temp_buffers (set in the session)
    with a temporary table, then stays holding them."""
    return ("SET temp_buffers = '%dMB'; CREATE TEMP TABLE t AS "
            "SELECT repeat('x', 400) AS x FROM generate_series(1, %d);" % (mb, mb * 2200))


def statement(sql, appname, user=None):
    """psql runs sql in a session of its own, in the background, verbose
    (its errors with their SQLSTATE): finish() waits for it."""
    env = dict(os.environ, PGAPPNAME=appname)
    if user:
        env["PGUSER"] = user
    p = subprocess.Popen([os.environ.get("PSQL", "psql"), "-X", "-v", "VERBOSITY=verbose", "-f", "-"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    p.appname = appname
    p.stdin.write(sql + "\n")
    p.stdin.flush()
    return p


def finish(p, timeout=120, more=None):
    """Waits for a statement() (more: what it runs next, before its input
    closes) for at most timeout seconds: a CompletedProcess. One still
    running then is killed, its backends ended (by its application_name),
    and its stderr says so: a test fails on it, and does not hang."""
    try:
        if more:
            p.stdin.write(more + "\n")
            p.stdin.flush()
    except OSError:
        pass                            # psql is gone: its connection was lost
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        err = (err or "") + "\n(the test's timeout: still running after %d s, killed)" % timeout
        try:
            end_sessions(p.appname)
        except (subprocess.CalledProcessError, OSError):
            pass
    return subprocess.CompletedProcess(p.args, p.returncode, out, err)


def back(timeout=90):
    """Waits for the server to accept connections again (after a crash
    restart): whether it does (at once not, with no postmaster)."""
    return running() and wait_until(lambda: value("SELECT 1") == "1", timeout, 0.5)


def retrying(fn, timeout=90):
    """fn(), tried again while the server is (re)starting (a crash restart
    after an OOM kill): a test fails on what it finds, not on a traceback."""
    deadline = time.time() + timeout
    while True:
        try:
            return fn()
        except subprocess.CalledProcessError:
            if time.time() > deadline or not running():
                raise                   # no postmaster: no restart to wait for
            time.sleep(0.5)


def int_table(name, rows_, parallel_workers):
    """An unlogged table name (g integer) of rows_ rows, 1 to rows_, analyzed,
    with parallel_workers, made unless it is there with its rows (a crash
    restart empties an unlogged table); a 20M-row one takes about 15 s."""
    if value("SELECT count(*) FROM pg_class WHERE relname = '%s' AND relkind = 'r'" % name) == "1" and \
            value("SELECT count(*) FROM (SELECT 1 FROM %s LIMIT 1) AS x" % name) == "1":
        return False
    execute("DROP TABLE IF EXISTS %s; CREATE UNLOGGED TABLE %s (g integer) WITH (parallel_workers = %d); "
            "INSERT INTO %s SELECT generate_series(1, %d); ANALYZE %s"
            % (name, name, parallel_workers, name, rows_, name))
    return True
