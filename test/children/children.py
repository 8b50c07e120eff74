"""Every kind of child the server has, each named (TAP).

A primary (started by scripts/test) and a streaming standby of it that this
file makes, between them running every kind of process the major has, the
short-lived ones held while they are looked at: the logger, the archiver,
autovacuum's launcher and a worker (slowed by a cost delay), WAL senders
and the WAL receiver, the startup process, parallel workers (a query that
sleeps), logical replication's launcher, apply, tablesync (its table
locked) and sequencesync workers, a parallel apply worker (a streamed
transaction left open), the WAL summarizer, the slot sync worker, I/O
workers and REPACK's decoding worker (its table's last lock withheld), as
the major has them.

For each kind: pg_procmem_backends names it as pg_stat_activity does (the
logger and, on 14, the stats collector have no PGPROC: pg_procmem names them
itself), and so does the process's title alone, which is what pg_procmem
goes by for a child that has no PGPROC yet, or no longer (procmem_test's
procmem_test_title_type(): titles.c's title rule, built into the test
module, called as pg_procmem calls it). Then every
process of both servers: none is a "postmaster child", and every title
gives the type pg_stat_activity gives.

The environment: PG_BIN, CLUSTER_DIR (the primary in CLUSTER_DIR/data, run
with the settings scripts/test's children_suite gives it), PG_LIBPATH,
STANDBY_PORT (free, for the standby), and the libpq variables for the
primary, as a superuser.
"""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "py"))
from tap import ok, done, rows, value  # noqa: E402

PG_BIN = os.environ["PG_BIN"]
CLUSTER = os.environ["CLUSTER_DIR"]
STANDBY = os.path.join(CLUSTER, "standby")
STANDBY_PORT = os.environ["STANDBY_PORT"]
HOST = os.environ["PGHOST"]
PORT = os.environ["PGPORT"]
PSQL = os.environ.get("PSQL", "psql")
UNKNOWN = "postmaster child"

# The kinds that stay: pg_stat_activity's name, the first major that has
# it, and the server it runs on.
PERSISTENT = [
    ("checkpointer", 14, "primary"), ("background writer", 14, "primary"), ("walwriter", 14, "primary"),
    ("autovacuum launcher", 14, "primary"), ("archiver", 14, "primary"),
    ("logical replication launcher", 14, "primary"), ("walsender", 14, "primary"),
    ("pg_procmem sampler", 14, "primary"), ("client backend", 14, "primary"),
    ("walsummarizer", 17, "primary"), ("io worker", 18, "primary"),
    ("startup", 14, "standby"), ("walreceiver", 14, "standby"), ("checkpointer", 14, "standby"),
    ("background writer", 14, "standby"), ("slotsync worker", 17, "standby"), ("io worker", 18, "standby"),
]
# children without a PGPROC: pg_procmem names them from their titles alone
WITHOUT_PGPROC = [("logger", 14, 99), ("stats collector", 14, 14)]


def conninfo(server, db="postgres"):
    return "host=%s port=%s dbname=%s" % (HOST, STANDBY_PORT if server == "standby" else PORT, db)


def q(sql, server="primary", db="postgres"):
    return rows(sql, conninfo(server, db))


def run(sql, server="primary", db="postgres"):
    subprocess.run([PSQL, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", conninfo(server, db), "-c", sql],
                   check=True, capture_output=True, text=True)


class Session:
    """A psql session kept open: statements are sent to it one at a time,
    without waiting for them (a lock holder, a query left running)."""

    def __init__(self, db="postgres", name="children"):
        env = dict(os.environ, PGAPPNAME=name)
        self.p = subprocess.Popen([PSQL, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", conninfo("primary", db)],
                                  stdin=subprocess.PIPE,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True, env=env)

    def send(self, sql):
        self.p.stdin.write(sql + "\n")
        self.p.stdin.flush()

    def close(self):
        try:
            self.p.stdin.close()
            self.p.wait(60)
        except (OSError, subprocess.TimeoutExpired):
            self.p.kill()


def as_postgres(*cmd):
    r = subprocess.run(["runuser", "-u", "postgres", "--", "env", "LD_LIBRARY_PATH=" + os.environ.get("PG_LIBPATH", "")]
                       + list(cmd), capture_output=True, text=True)
    if r.returncode != 0:
        sys.stderr.write("%s failed:\n%s%s" % (cmd[0], r.stdout, r.stderr))
        r.check_returncode()


def seen(kind, server, seconds, filter):
    """The first process of this kind the server shows within seconds:
    (pid, pg_stat_activity's type, pg_procmem_backends' type, its title's
    type), all read while it is still there; None if none came."""
    r = q("SELECT * FROM children_seen(%s, %s, %d)" % (literal(kind), literal(filter) if filter else "NULL", seconds),
          server)
    return r[0] if r and r[0]["pid"] else None


def literal(s):
    return "'" + s.replace("'", "''") + "'"


def check_kind(kind, server="primary", seconds=30, pgproc=True, filter=None, label=None, tries=1, between=None):
    """A process of this kind (pg_stat_activity's name; filter: which one)
    is there, and pg_procmem and its title both name it so. tries: looks
    again after between() when none came."""
    label = (label or kind) + ("" if server == "primary" else " (standby)")
    for attempt in range(tries):
        if attempt:
            between()
        s = seen(kind, server, seconds, None if not pgproc else filter or "a.backend_type = %s" % literal(kind))
        if s:
            break
    if not ok(s is not None, "%s: running" % label):
        ok(False, "%s: named by pg_procmem and by its title" % label)
        return
    want = (kind if pgproc else None, kind, kind)
    got = (s["activity_type"], s["procmem_type"], s["title_type"])
    ok(got == want, "%s: named by pg_procmem (%s) and by its title (%s)" % (label, got[1], got[2]),
       "pid %s: pg_stat_activity, pg_procmem_backends, title: %s; want %s" % (s["pid"], got, want))


def sweep(server, when):
    """Every process of the server: not a "postmaster child", and its title
    gives the type pg_stat_activity (or pg_procmem, without a PGPROC) gives.
    A process found otherwise is looked at again a second later: a child
    just forked still has the postmaster's command line (a "postmaster
    child", rightly), and a title changes as its process moves on."""
    def bad(pids=None):
        return q("""SELECT p.pid, p.type, p.title, p.cmdline FROM (
                      SELECT b.pid, b.backend_type AS type, title_type(b.pid) AS title,
                             rtrim(replace(encode(pg_read_binary_file('/proc/' || b.pid || '/cmdline', 0, 1024, true),
                                                  'escape'), '\\000', ' ')) AS cmdline
                      FROM pg_procmem_backends AS b WHERE b.backend_type <> 'postmaster') AS p
                    WHERE p.title IS NOT NULL AND (p.type = '%s' OR p.title <> p.type) %s"""
                 % (UNKNOWN, "AND p.pid IN (%s)" % ",".join(pids) if pids else ""), server)
    found = bad()
    if found:
        time.sleep(1)
        found = bad([r["pid"] for r in found])
    n = value("SELECT count(*) FROM pg_procmem_backends", conninfo(server))
    ok(not found, "%s, %s: none of its %s processes is a %s, and each one's title gives its type"
       % (server, when, n, UNKNOWN), "\n".join(str(b) for b in found))


def holds(db, app, relation, mode, seconds=30):
    """The session named app holds its lock on relation (granted) within seconds."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        if value("""SELECT count(*) FROM pg_locks AS l JOIN pg_stat_activity AS a USING (pid)
                    WHERE a.application_name = '%s' AND l.relation = '%s'::regclass
                      AND l.mode = '%s' AND l.granted""" % (app, relation, mode), conninfo("primary", db)) != "0":
            return True
        time.sleep(0.1)
    return False


def setup(major):
    seq = major >= 19
    for sql in [
        "CREATE EXTENSION IF NOT EXISTS pg_procmem",
        "CREATE FUNCTION title_type(integer) RETURNS text AS '$libdir/procmem_test', "
        "'procmem_test_title_type' LANGUAGE C STRICT",
        # polled inside the server: some kinds live for a moment only. A
        # process of pg_stat_activity (as a) that passes the filter; with
        # filter NULL, a child without a PGPROC that pg_procmem names kind
        """CREATE FUNCTION children_seen(kind text, filter text, seconds integer,
                OUT pid integer, OUT activity_type text, OUT procmem_type text, OUT title_type text)
           LANGUAGE plpgsql AS $$
           DECLARE deadline timestamptz := clock_timestamp() + seconds * interval '1 s';
           BEGIN
               LOOP
                   PERFORM pg_stat_clear_snapshot();
                   IF filter IS NOT NULL THEN
                       EXECUTE format('SELECT a.pid, a.backend_type, b.backend_type, title_type(a.pid)
                                       FROM pg_stat_activity AS a JOIN pg_procmem_backends AS b USING (pid)
                                       WHERE (%s) AND a.pid <> pg_backend_pid() LIMIT 1', filter)
                           INTO pid, activity_type, procmem_type, title_type;
                   ELSE
                       SELECT p.pid, NULL, p.backend_type, title_type(p.pid)
                           INTO pid, activity_type, procmem_type, title_type
                       FROM pg_procmem_processes() AS p WHERE p.backend_type = kind LIMIT 1;
                   END IF;
                   EXIT WHEN (pid IS NOT NULL AND title_type IS NOT NULL) OR clock_timestamp() > deadline;
                   PERFORM pg_sleep(0.01);
               END LOOP;
               IF title_type IS NULL THEN pid := NULL; END IF;
           END $$""",
        "CREATE FUNCTION slow(integer) RETURNS boolean LANGUAGE sql PARALLEL SAFE AS "
        "$$ SELECT pg_sleep(0.002) IS NOT NULL $$",
        "CREATE TABLE big AS SELECT g FROM generate_series(1, 100000) g",
        "ALTER TABLE big SET (parallel_workers = 2)",
        # a worker that vacuums this stays (a cost limit of 1, a 100 ms delay)
        "CREATE TABLE dead (g integer) WITH (autovacuum_vacuum_cost_delay = 100, autovacuum_vacuum_cost_limit = 1, "
        "autovacuum_vacuum_threshold = 0, autovacuum_vacuum_scale_factor = 0)",
        "INSERT INTO dead SELECT generate_series(1, 100000)",
        "DELETE FROM dead",
        "CREATE TABLE t (id integer PRIMARY KEY, v text)",
        "INSERT INTO t SELECT g, md5(g::text) FROM generate_series(1, 1000) g",
        "CREATE TABLE r (id integer PRIMARY KEY, v text)",
        "INSERT INTO r SELECT g, md5(g::text) FROM generate_series(1, 10000) g",
        "CREATE PUBLICATION children_pub FOR TABLE t",
        "CREATE SEQUENCE s" if seq else None,
        "CREATE PUBLICATION children_seq FOR ALL SEQUENCES" if seq else None,
        # the subscription is in another database of the same server: its
        # slot made here (CREATE SUBSCRIPTION would wait for itself)
        "SELECT pg_create_logical_replication_slot('children_sub', 'pgoutput')",
        "CREATE DATABASE children_sub",
    ]:
        if sql:
            run(sql)
    for sql in ["CREATE TABLE t (id integer PRIMARY KEY, v text)", "CREATE SEQUENCE s" if seq else None]:
        if sql:
            run(sql, db="children_sub")


def start_standby(major):
    as_postgres(os.path.join(PG_BIN, "pg_basebackup"), "-D", STANDBY, "-c", "fast", "-X", "stream",
                "-C", "-S", "children_standby",
                "-R", "-d", "host=%s port=%s user=postgres dbname=postgres" % (HOST, PORT))
    with open(os.path.join(STANDBY, "postgresql.auto.conf"), "a") as f:
        # the connection string needs the database for the slot sync worker
        f.write("primary_conninfo = 'host=%s port=%s user=postgres dbname=postgres'\n" % (HOST, PORT))
    opts = ["-c port=%s" % STANDBY_PORT, "-c unix_socket_directories=%s" % HOST, "-c listen_addresses=''",
            "-c hot_standby_feedback=on", "-c wal_level=logical", "-c shared_preload_libraries=pg_procmem",
            # not below the primary's, or recovery stops
            "-c max_worker_processes=32", "-c max_wal_senders=10", "-c max_replication_slots=10",
            "-c logging_collector=off", "-c archive_mode=off", "-c summarize_wal=off" if major >= 17 else "",
            "-c sync_replication_slots=on" if major >= 17 else ""]
    as_postgres(os.path.join(PG_BIN, "pg_ctl"), "-D", STANDBY, "-l", os.path.join(CLUSTER, "standby.log"),
                "-w", "-t", "60", "start", "-o", " ".join(opts))


def stop_standby():
    if os.path.exists(os.path.join(STANDBY, "postmaster.pid")):
        as_postgres(os.path.join(PG_BIN, "pg_ctl"), "-D", STANDBY, "-m", "immediate", "-w", "stop")


def main():
    major = int(value("SELECT current_setting('server_version_num')")) // 10000
    try:
        setup(major)
        start_standby(major)
        children(major)
    except (subprocess.CalledProcessError, OSError) as e:
        ok(False, "the test ran to its end", "%s\n%s" % (e, getattr(e, "stderr", "") or ""))
    finally:
        stop_standby()
    done()


def children(major):
    idle = Session(name="children idle")
    for kind, first, server in PERSISTENT:
        if major >= first:
            check_kind(kind, server)
    for kind, first, last in WITHOUT_PGPROC:
        if first <= major <= last:
            check_kind(kind, pgproc=False)

    check_kind("autovacuum worker", seconds=60)
    query = Session(name="children parallel")
    query.send("SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; "
               "SELECT count(*) FROM big WHERE slow(g);")
    check_kind("parallel worker")

    # logical replication: tablesync held by a lock on its table
    sub = "children_sub"
    stream = ", streaming = parallel" if major >= 16 else ""
    pubs = "children_pub, children_seq" if major >= 19 else "children_pub"
    run("CREATE SUBSCRIPTION children_sub CONNECTION '%s user=postgres' PUBLICATION %s "
        "WITH (create_slot = false, slot_name = 'children_sub', enabled = false%s)" % (conninfo("primary"), pubs, stream),
        db=sub)
    holder = Session(db=sub, name="children lock")
    holder.send("BEGIN; LOCK TABLE t IN ACCESS EXCLUSIVE MODE;" +
                (" ALTER SEQUENCE s RESTART;" if major >= 19 else ""))
    ok(holds(sub, "children lock", "t", "AccessExclusiveLock") and
       (major < 19 or holds(sub, "children lock", "s", "ShareRowExclusiveLock")),
       "the subscriber's table (and sequence) locked before the subscription starts")
    run("ALTER SUBSCRIPTION children_sub ENABLE", db=sub)
    # before 17 they have one name (bgw_type), which their titles give too
    # (16's parallel apply workers have their own)
    def lr(kind):
        return kind if major >= 17 else "logical replication worker"
    check_kind(lr("logical replication apply worker"), label="logical replication apply worker",
               filter="a.pid IN (SELECT pid FROM pg_stat_subscription WHERE relid IS NULL)")
    check_kind(lr("logical replication tablesync worker"), label="logical replication tablesync worker",
               filter="a.pid IN (SELECT pid FROM pg_stat_subscription WHERE relid IS NOT NULL)")
    if major >= 19:
        check_kind("logical replication sequencesync worker")
    sweep("primary", "with autovacuum, parallel and tablesync workers running")
    holder.send("COMMIT;")
    synced = False
    for _ in range(300):
        if value("SELECT count(*) FROM pg_subscription_rel WHERE srsubstate <> 'r'", conninfo("primary", sub)) == "0":
            synced = True
            break
        time.sleep(0.1)
    ok(synced, "the subscription's table (and sequence) synchronized")

    # a streamed transaction left open: a parallel apply worker applies it.
    # The apply worker decides so when it starts the transaction, and only
    # once it has taken in that every table is ready: a row applied first,
    # and another transaction if none came.
    writer = Session(name="children stream")
    if major >= 16:
        run("INSERT INTO t VALUES (0, 'applied')")
        for _ in range(300):
            if value("SELECT count(*) FROM t WHERE id = 0", conninfo("primary", sub)) == "1":
                break
            time.sleep(0.1)
        streamed = "BEGIN; INSERT INTO t SELECT g, md5(g::text) FROM generate_series(1001, 40000) g;"
        writer.send(streamed)
        check_kind("logical replication parallel worker", label="logical replication parallel apply worker",
                   filter="a.pid IN (SELECT pid FROM pg_stat_subscription WHERE leader_pid IS NOT NULL)",
                   seconds=15, tries=3, between=lambda: writer.send("ROLLBACK; " + streamed))
        sweep("primary", "with a parallel apply worker running")
    sweep("standby", "with its every kind running")
    writer.send("COMMIT;")
    writer.close()

    if major >= 19:
        # REPACK (CONCURRENTLY) waits for its last lock while a reader holds one
        reader = Session(name="children reader")
        reader.send("BEGIN; SELECT count(*) FROM r;")
        ok(holds("postgres", "children reader", "r", "AccessShareLock"), "a reader holds its lock on REPACK's table")
        repack = Session(name="children repack")
        repack.send("REPACK (CONCURRENTLY) r;")
        check_kind("REPACK decoding worker")
        sweep("primary", "with REPACK's decoding worker running")
        reader.send("COMMIT;")
        reader.close()
        repack.close()

    run("SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = 'children parallel'")
    query.close()
    holder.close()
    idle.close()
    sweep("primary", "at the end")
    sweep("standby", "at the end")


if __name__ == "__main__":
    main()
