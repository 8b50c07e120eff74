"""The memory history (TAP): the sampler, the ring, crash restarts, restarts.

Run as root by scripts/test against a throwaway cluster of its own, which
this test stops and starts (as user postgres) with other settings, and whose
processes it kills:

    PG_BIN=... CLUSTER_DIR=... SERVER_OPTS='-c ...' python3 test/history/history.py

test/history/files.py attacks the history's file, disk.py its disk, clock.py
its clock.
"""
import os
import struct
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "py"))
from cluster import (HFILE, ENTRY, start, stop, log_size, log_since, history_lines, samples, newest,  # noqa: E402
                     wait_until, grows, session, close, end_sessions, pid_of, sampler_pid, crash, own_io,
                     write_history, alter_system, pressure_avg10)
from tap import ok, section, skip_rest, done, rows, value, execute, PSQL  # noqa: E402


def script_rows(script):
    """The CSV rows of the last query of a psql script read from its input."""
    import csv
    import io
    import subprocess
    out = subprocess.run([PSQL, "-X", "-q", "--csv", "-v", "ON_ERROR_STOP=1", "-P", "null=\\N"],
                         input=script, check=True, capture_output=True, text=True).stdout
    return list(csv.DictReader(io.StringIO(out)))


# --- the sampler and what it records ---------------------------------------

def sampler():
    r = rows("SELECT backend_type, datname FROM pg_stat_activity WHERE backend_type = 'pg_procmem sampler'")
    ok(len(r) == 1 and r[0]["datname"] is None,
       "the sampler is a background worker in pg_stat_activity, connected to no database", r)
    ok(grows(), "it samples every second (pg_procmem.sample_interval = 1s)")

    idle = session("SELECT 1;", "history-idle")
    busy = session("SELECT pg_sleep(4), 'history busy marker';", "history-busy")
    try:
        wait_until(lambda: pid_of("history-busy") and pid_of("history-idle"))
        ipid, bpid = pid_of("history-idle"), pid_of("history-busy")
        n = newest()
        wait_until(lambda: newest() >= n + 2, 10)
        # one sample's rows and its system row, read by its number: a later
        # sample (a busy machine's sampler runs on meanwhile) is not this one
        last_sample = int(value("SELECT max(sample) FROM pg_procmem_history_system"))
        last = rows("SELECT * FROM pg_procmem_history WHERE sample = %d" % last_sample)
        by_pid = {int(r["pid"]): r for r in last}
        i, b = by_pid.get(ipid), by_pid.get(bpid)
        ok(i is not None and i["state"] == "idle" and i["datname"] == "postgres" and i["usename"] == "postgres"
           and i["application_name"] == "history-idle" and i["backend_type"] == "client backend",
           "an idle session's row says who it is", i)
        ok(b is not None and b["state"] == "active" and "history busy marker" in (b["query"] or "")
           and b["query_id"] is not None and b["query_start"] is not None,
           "a running query's row has its text and query_id", b)
        live = {int(r["pid"]) for r in rows("SELECT pid FROM pg_procmem_backends")}
        both = {int(r["pid"]) for r in rows(
            "SELECT pid FROM pg_procmem_backends WHERE backend_start < "
            "(SELECT max(sampled_at) FROM pg_procmem_history_system) OR backend_type IS DISTINCT FROM 'client backend'")}
        missing = both - set(by_pid) - {int(value("SELECT pg_backend_pid()"))}
        ok(len(missing) <= 1 and {"postmaster", "checkpointer", "pg_procmem sampler"} <= {r["backend_type"] for r in last},
           "the last sample has the processes pg_procmem_backends shows (the same membership rule)",
           "live %s, sampled %s, missing %s" % (sorted(live), sorted(by_pid), sorted(missing)))
        sane = [r for r in last if r["overhead"] is not None and r["rss"] is not None and not (
            int(r["private_anon"] or 0) <= int(r["rss"]) and int(r["page_tables"]) <= int(r["overhead"])
            <= int(r["rss"]) + int(r["page_tables"]) + int(r["swap"] or 0))]
        ok(not sane and all(r["overhead"] is not None for r in last),
           "every process's figures hold together: private_anon <= rss, page_tables <= overhead <= rss + page_tables + swap",
           sane)
        with open("/proc/%s/status" % ipid) as f:
            pte = [int(l.split()[1]) * 1024 for l in f if l.startswith("VmPTE:")][0]
        ok(abs(int(i["page_tables"]) - pte) <= 64 * 1024,
           "an idle backend's page_tables agree with an independent read of /proc/PID/status (%s vs %s)"
           % (i["page_tables"], pte))
        q = rows("SELECT * FROM pg_procmem_query_memory WHERE query LIKE '%%history busy marker%%'")
        ok(len(q) == 1 and int(q[0]["samples"]) >= 2 and int(q[0]["backends"]) == 1
           and int(q[0]["max_overhead"]) >= int(q[0]["mean_overhead"]) > 0,
           "pg_procmem_query_memory ranks the query by the memory its backend held while running it", q)
        s = rows("SELECT * FROM pg_procmem_history_system WHERE sample = %d" % last_sample)[0]
        ok(int(s["processes"]) == len(last) and int(s["mem_available"]) <= int(s["mem_total"])
           and float(s["sample_ms"]) > 0 and int(s["connections"]) >= 2,
           "the system row: processes sampled, MemAvailable <= MemTotal, the sample's cost, connections counted", s)
        stall(s)
        gaps = value("SELECT count(*) FROM (SELECT sample - lag(sample) OVER (ORDER BY sample) AS d "
                     "FROM pg_procmem_history_system) s WHERE d <> 1")
        ok(gaps == "0", "samples are numbered 1, 2, 3, ... in the order they were taken")
    finally:
        close(idle)
        close(busy)


def server_pressure_file():
    """The server's own cgroup's memory.pressure where it is in a cgroup v2
    (no v1 memory controller line), else None: read apart from pg_procmem."""
    pm = value("SELECT pid FROM pg_procmem_processes() WHERE backend_type = 'postmaster'")
    with open("/proc/%s/cgroup" % pm) as f:
        lines = [l.rstrip("\n").split(":", 2) for l in f]
    if any("memory" in l[1].split(",") for l in lines):
        return None
    path = [l[2] for l in lines if l[0] == "0"]
    return "/sys/fs/cgroup%s/memory.pressure" % path[0] if path else None


def stall(s):
    """The system row's pressure stall: the machine's read where the kernel
    has PSI, NULL with the reason where not; the server's cgroup's likewise
    (cgroup v2 only). Each agrees with a read of the same file here, within
    10 points (avg10 moves between the two reads)."""
    here = pressure_avg10("/proc/pressure/memory")
    cols = [s[c] for c in ("psi_some_avg10", "psi_full_avg10")]
    why = s["psi_unavailable"] or ""
    if here is None:
        ok(cols == [None, None] and "PSI is off on this machine" in why,
           "the system row: no /proc/pressure/memory here: its stall NULL, and why", s)
    else:
        got = [float(c) for c in cols if c is not None]
        ok(len(got) == 2 and 0 <= got[1] <= got[0] <= 100 and abs(got[0] - here[0]) <= 10 and
           abs(got[1] - here[1]) <= 10,
           "the system row: the machine's memory stall (some %s%%, full %s%%), as /proc/pressure/memory "
           "says (%s)" % (cols[0], cols[1], here), s)
    path = server_pressure_file()
    mine = [s[c] for c in ("cgroup_psi_some_avg10", "cgroup_psi_full_avg10")]
    if path is None:
        ok(mine == [None, None] and "cgroup is v1" in why,
           "the system row: the server's cgroup is v1 here: its stall NULL, and why (%s)" % why, s)
    else:
        here = pressure_avg10(path)
        got = [float(c) for c in mine if c is not None]
        ok(here is not None and len(got) == 2 and 0 <= got[1] <= got[0] <= 100 and
           abs(got[0] - here[0]) <= 10 and abs(got[1] - here[1]) <= 10,
           "the system row: the server's cgroup's memory stall (some %s%%, full %s%%), as %s says (%s)"
           % (mine[0], mine[1], path, here), s)


def snapshot():
    """All reads of one transaction stop at the same sample."""
    got = script_rows("BEGIN;\n"
                      "SELECT max(sample) AS a FROM pg_procmem_history_system \\gset\n"
                      "SELECT pg_sleep(2.2) \\g /dev/null\n"
                      "SELECT :a AS a, (SELECT max(sample) FROM pg_procmem_history_system) AS b, "
                      "(SELECT max(sample) FROM pg_procmem_history) AS c, "
                      "(SELECT count(*) FROM pg_procmem_history h JOIN pg_procmem_history_system s USING (sample) "
                      " WHERE sample = (SELECT max(sample) FROM pg_procmem_history_system)) AS joined;\n"
                      "COMMIT;\n")
    r = got[-1] if got else {}
    ok(r and r["a"] == r["b"] == r["c"] and int(r["joined"]) > 0,
       "within a transaction, every read stops at the same sample (2 s apart, at 1 s an interval): "
       "the processes joined with the system rows on the newest sample find it", r)
    ok(int(value("SELECT max(sample) FROM pg_procmem_history_system")) > int(r.get("a") or 0),
       "the next transaction sees the newer samples")


def cancelled():
    """pg_cancel_backend() on the sampler: it cancels nothing, the sampler goes on."""
    pid = sampler_pid()
    sent = value("SELECT pg_cancel_backend(%d)" % pid)
    time.sleep(1.5)
    ok(sent == "t" and sampler_pid() == pid and grows(),
       "pg_cancel_backend() on the sampler: the same sampler samples on")


def terminated():
    """pg_terminate_backend() on the sampler: the postmaster starts it again,
    which goes on with the file as it is (no rewrite)."""
    old = sampler_pid()
    ino = os.stat(HFILE).st_ino
    execute("SELECT pg_terminate_backend(%s)" % old)
    new = wait_until(lambda: sampler_pid() not in (None, old), 30)
    ok(new and grows(), "a sampler ended with pg_terminate_backend() comes back and samples again")
    written = own_io(sampler_pid())["wchar"]
    ok(os.stat(HFILE).st_ino == ino and written < 64 * ENTRY,
       "... appending to the same file: it wrote %d bytes, not the ring again" % written)


def intervals():
    alter_system("pg_procmem.sample_interval = 0")
    time.sleep(1.5)
    n = samples()
    time.sleep(3)
    ok(samples() == n, "interval 0 on SIGHUP: no more samples")
    alter_system("pg_procmem.sample_interval = '2s'")
    ok(grows(), "a new interval on SIGHUP: sampling again")
    time.sleep(4.5)
    gaps = rows("SELECT extract(epoch FROM sampled_at - lag(sampled_at) OVER (ORDER BY sample)) AS gap "
                "FROM pg_procmem_history_system ORDER BY sample DESC LIMIT 2")
    ok(all(1.5 < float(g["gap"]) < 2.5 for g in gaps), "... every 2 s now", gaps)
    alter_system("pg_procmem.sample_interval = '1s'")


def statement_text():
    """pg_procmem.keep_statement_text = off for one role: its text reaches
    neither a view nor the file, another role's still does."""
    execute("DROP ROLE IF EXISTS history_secret; CREATE ROLE history_secret LOGIN")
    execute("ALTER ROLE history_secret SET pg_procmem.keep_statement_text = off")
    secret = session("SELECT pg_sleep(3.5), 'api_key=SECRET-4711';", "history-secret", user="history_secret")
    open_ = session("SELECT pg_sleep(3.5), 'history open marker';", "history-open")
    try:
        wait_until(lambda: pid_of("history-secret") and pid_of("history-open"))
        n = newest()
        wait_until(lambda: newest() >= n + 2, 10)
        seen = rows("SELECT usename, state, query, query_id FROM pg_procmem_history WHERE application_name IN "
                    "('history-secret', 'history-open') AND state = 'active'")
        mine = [r for r in seen if r["usename"] == "history_secret"]
        ok(mine and all(r["query"] is None and r["query_id"] is not None for r in mine),
           "a role with keep_statement_text = off: sampled, its query_id kept, its text not", seen)
        ok(any("history open marker" in (r["query"] or "") for r in seen if r["usename"] == "postgres"),
           "... another role's text is kept")
        close(secret)
        close(open_)
        time.sleep(1.2)
        with open(HFILE, "rb") as f:
            body = f.read()
        ok(b"SECRET-4711" not in body and b"history open marker" in body,
           "... and the secret is not in the history's file either")
    finally:
        close(secret)
        close(open_)
        execute("DROP ROLE history_secret")


def settings():
    """What each backend runs with, as its session left it: a SET stays, a
    SET LOCAL goes with its transaction, a SET in a transaction that aborts
    goes back; a role's setting says so."""
    execute("DROP ROLE IF EXISTS history_roleset; CREATE ROLE history_roleset LOGIN")
    execute("ALTER ROLE history_roleset SET work_mem = '96MB'")
    scripts = {"history-set": "SET work_mem = '2GB';",
               "history-local": "BEGIN; SET LOCAL work_mem = '3GB'; SELECT 1; COMMIT;",
               "history-abort": "SET work_mem = '5MB'; BEGIN; SET work_mem = '6GB'; SELECT 1; ROLLBACK;",
               "history-temp": "SET temp_buffers = '24MB'; SET hash_mem_multiplier = 3.5;"}
    sessions = [session(sql, app) for app, sql in scripts.items()]
    sessions.append(session("SELECT 1;", "history-role", user="history_roleset"))
    try:
        wait_until(lambda: all(pid_of(a) for a in list(scripts) + ["history-role"]))
        n = newest()
        wait_until(lambda: newest() >= n + 2, 10)
        got = {r["application_name"]: r for r in rows(
            "SELECT DISTINCT ON (application_name) application_name, work_mem, work_mem_source, temp_buffers, "
            "temp_buffers_source, hash_mem_multiplier, hash_mem_multiplier_source FROM pg_procmem_history "
            "WHERE application_name LIKE 'history-%' ORDER BY application_name, sample DESC")}
        want = {"history-set": ("2147483648", "session"), "history-local": ("4194304", "default"),
                "history-abort": ("5242880", "session"), "history-role": ("100663296", "user")}
        ok(all((got.get(a) or {}).get("work_mem") == w and got[a]["work_mem_source"] == src
               for a, (w, src) in want.items()),
           "work_mem as each session has it: a SET stays, a SET LOCAL goes with its transaction, a SET in an "
           "aborted one goes back, a role's says 'user'", got)
        t = got.get("history-temp") or {}
        ok(t.get("temp_buffers") == str(24 << 20) and t.get("temp_buffers_source") == "session"
           and t.get("hash_mem_multiplier") == "3.5" and t.get("hash_mem_multiplier_source") == "session",
           "... and temp_buffers and hash_mem_multiplier, with their sources", t)
    finally:
        for p in sessions:
            close(p)
        execute("DROP ROLE history_roleset")


# --- crash restarts and restarts -------------------------------------------

def crashed():
    n = samples()
    victim = session("SELECT pg_sleep(60), 'history victim marker';", "history-victim")
    wait_until(lambda: pid_of("history-victim"))
    pid = pid_of("history-victim")
    wait_until(lambda: samples() >= n + 2, 10)
    os.kill(pid, 9)
    close(victim)
    ok(wait_until(lambda: value("SELECT count(*) FROM pg_procmem_crashes") == "1", 60),
       "after kill -9 of a backend and the crash restart, pg_procmem_crashes has a row")
    c = rows("SELECT * FROM pg_procmem_crashes")[0]
    ok(c["killed_pid"] == str(pid) and c["how_known"] == "postmaster log" and c["signal"] == "9"
       and c["guessed_pid"] is None and "PID %d" % pid in c["logged"],
       "... naming the killed pid, from the postmaster's own log message", c)
    ok("history victim marker" in (c["query"] or "") and c["backend_type"] == "client backend"
       and int(c["overhead"]) > 0 and 0 <= float(c["seconds_since_sample"]) < 3
       and str(pid) in c["top_pids"],
       "... with its query, its memory at the last sample, less than 3 s before the crash", c)
    h = rows("SELECT count(*) AS n, max(sampled_at) < (SELECT crashed_at FROM pg_procmem_crashes) AS before "
             "FROM pg_procmem_history WHERE pid = %d" % pid)[0]
    ok(int(h["n"]) >= 2 and h["before"] == "t", "its samples from before the crash are in pg_procmem_history", h)
    # docs/history.md's query: every process at the last sample before the crash
    last = rows("SELECT h.pid, h.backend_type FROM pg_procmem_crashes c JOIN pg_procmem_history h "
                "ON h.sampled_at = c.last_sample_at WHERE c.number = (SELECT max(number) FROM pg_procmem_crashes) "
                "ORDER BY h.overhead DESC NULLS LAST")
    ok(str(pid) in [r["pid"] for r in last] and "checkpointer" in [r["backend_type"] for r in last],
       "docs/history.md's query lists every process at the last sample before the crash, the victim among them")
    with open(HFILE, "rb") as f:
        first = struct.unpack("<I", f.read(20)[16:20])[0]
    ok(first == 2, "the file was written anew with its crash rows first (record kind %d), where a torn "
       "tail cannot reach them" % first)
    ok(grows(), "the sampler is back after the crash restart")
    page = os.path.join(os.environ["CLUSTER_DIR"], "report.html")
    import subprocess
    subprocess.run([os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "report"),
                    "-o", page], check=True, capture_output=True)
    with open(page) as f:
        doc = f.read()
    crash_part = doc[doc.find('id="crashes"'):] if 'id="crashes"' in doc else ""
    ok("PID %d" % pid in crash_part and "history victim marker" in crash_part and "stroke-dasharray" in doc,
       "scripts/report: a crash section naming the pid and its query, the crash marked on the charts")
    return pid


def logger_first():
    """With logging_collector on: the logger killed (the postmaster just starts
    another), then a backend a second later: the crash is the backend's."""
    stop()
    start("-c logging_collector=on")
    crashes = int(value("SELECT count(*) FROM pg_procmem_crashes"))
    logger = int(value("SELECT pid FROM pg_procmem_backends WHERE backend_type = 'logger'"))
    os.kill(logger, 9)
    time.sleep(1)
    pid = crash("history-after-logger")
    wait_until(lambda: int(value("SELECT count(*) FROM pg_procmem_crashes")) > crashes, 60)
    c = rows("SELECT * FROM pg_procmem_crashes ORDER BY number DESC LIMIT 1")[0]
    ok(c["killed_pid"] == str(pid) and c["how_known"] == "postmaster log",
       "the logger killed, then a backend 1 s later: the crash names the backend (%d), not the logger (%d)"
       % (pid, logger), c)
    stop()
    start()


def restarts(pid):
    before = value("SELECT count(*) FROM pg_procmem_history WHERE pid = %d" % pid)
    crashes = int(value("SELECT count(*) FROM pg_procmem_crashes"))
    stop()
    start()
    wait_until(lambda: sampler_pid() is not None)
    ok(value("SELECT count(*) FROM pg_procmem_history WHERE pid = %d" % pid) == before
       and int(value("SELECT count(*) FROM pg_procmem_crashes")) == crashes,
       "a clean restart keeps the history and the crashes, and adds no crash")
    n = newest()
    wait_until(lambda: newest() >= n + 2, 10)
    stop("immediate")
    start()
    ok(wait_until(lambda: int(value("SELECT count(*) FROM pg_procmem_crashes")) == crashes + 1),
       "a stop without shutdown (immediate) is a row too")
    c = rows("SELECT * FROM pg_procmem_crashes ORDER BY number DESC LIMIT 1")[0]
    ok(c["how_known"] == "unclean stop" and c["killed_pid"] is None and c["last_sample_at"] is not None,
       "... an unclean stop, no pid claimed, the last sample before it known", c)

    # the sampler ended by pg_terminate_backend(), then the server stopped
    # without shutdown before the sampler came back: still an unclean stop
    grows()
    execute("SELECT pg_terminate_backend(%d)" % sampler_pid())
    stop("immediate")
    start()
    ok(wait_until(lambda: int(value("SELECT count(*) FROM pg_procmem_crashes")) == crashes + 2),
       "pg_terminate_backend() on the sampler, then an immediate stop: an unclean stop row too "
       "(only the postmaster's shutdown writes a clean stop)")
    crashes += 1

    # a crash in a run that took no sample: nothing of an earlier run is its
    execute("ALTER SYSTEM SET pg_procmem.sample_interval = 0")
    stop()
    start()
    victim = session("SELECT pg_sleep(60);", "history-unsampled")
    wait_until(lambda: pid_of("history-unsampled"))
    os.kill(pid_of("history-unsampled"), 9)
    close(victim)
    wait_until(lambda: int(value("SELECT count(*) FROM pg_procmem_crashes")) == crashes + 2, 60)
    c = rows("SELECT * FROM pg_procmem_crashes ORDER BY number DESC LIMIT 1")[0]
    ok(c["number"] == str(crashes + 2) and c["how_known"] == "postmaster log" and c["last_sample_at"] is None
       and c["last_seen_at"] is None and c["overhead"] is None and c["top_pids"] == "{}",
       "a crash before its run's first sample: the pid from the log, no earlier run's sample", c)
    ok(c["query"] == "SELECT pg_sleep(60);" and c["query_from"] == "exit" and c["query_cut"] == "f"
       and c["application_name"] == "history-unsampled" and c["work_mem_source"] == "default"
       and "no sample saw it" in c["report"],
       "... and who it was and what it ran, from what the postmaster copied at its exit", c)
    alter_system("pg_procmem.sample_interval = '1s'")


# --- the ring --------------------------------------------------------------

def larger_file():
    """A file larger than the ring (history_size lowered, or a typo that fell
    back to the default): its newest samples that fit are kept."""
    stop()
    write_history(HFILE, 400, 20)      # 400 samples of 21 entries: 5 MB
    at = log_size()
    # no sample of its own meanwhile: they would push the file's out
    start("-c pg_procmem.history_size=64kB -c pg_procmem.sample_interval=0")
    wait_until(lambda: sampler_pid() is not None and samples() > 0)
    got = rows("SELECT min(sample) AS lo, max(sample) AS hi, count(*) AS n, "
               "count(*) FILTER (WHERE sample <= 400) AS old FROM pg_procmem_history_system")[0]
    lines = history_lines(log_since(at))
    ok(int(got["old"]) >= 1 and int(value("SELECT count(*) FROM pg_procmem_history WHERE query LIKE "
                                          "'histfile sample 400 %'")) == 20,
       "a 5 MB file into a 64 kB ring: its newest samples that fit, the last one whole", got)
    ok(len(lines) == 1 and "holds more than pg_procmem.history_size" in lines[0],
       "... said in one LOG line", lines)


def wrap():
    """A tiny ring (64 kB: about a hundred entries) wraps around."""
    stop()
    start("-c pg_procmem.history_size=64kB -c pg_procmem.sample_interval=200ms")
    idle = [session("SELECT 1;", "history-wrap") for _ in range(8)]
    try:
        wait_until(lambda: value("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'history-wrap'") == "8")
        first = value("SELECT min(sample) FROM pg_procmem_history_system")
        # 17 entries a sample at least: 107 entries hold 6 samples
        time.sleep(2)
        s = rows("SELECT count(*) AS samples, min(sample) AS oldest, "
                 "(SELECT count(*) FROM pg_procmem_history) AS rows FROM pg_procmem_history_system")[0]
        ok(int(s["samples"]) + int(s["rows"]) <= 65536 // ENTRY and int(s["oldest"]) > int(first),
           "the ring keeps only the newest samples (at most 107 entries): the oldest moved on", s)
        orphans = value("SELECT count(*) FROM pg_procmem_history h WHERE NOT EXISTS "
                        "(SELECT FROM pg_procmem_history_system s WHERE s.sample = h.sample)")
        ok(orphans == "0", "every process row belongs to a whole sample the ring still has")
        # a small ring's file: the ring and 4 MB at most, and one sample over
        ok(os.path.getsize(HFILE) <= 64 * 1024 + (4 << 20) + 64 * 1024,
           "the file stays within its bound (%d bytes)" % os.path.getsize(HFILE))
    finally:
        for p in idle:
            close(p)


def protected():
    """oom_protected follows a process's oom_score_adj, in the history and in
    pg_procmem_latest (reused figures too: the sampler reads it again)."""
    pm = int(value("SELECT pid FROM pg_procmem_backends WHERE backend_type = 'postmaster'"))
    path = "/proc/%d/oom_score_adj" % pm
    with open(path) as f:
        old = f.read().strip()

    def state():
        n = newest()
        wait_until(lambda: newest() >= n + 3, 20)
        return (rows("SELECT sample, oom_protected, reused FROM pg_procmem_history WHERE pid = %d "
                     "ORDER BY sample DESC LIMIT 2" % pm),
                rows("SELECT oom_protected, source FROM pg_procmem_latest WHERE pid = %d" % pm))

    hist, latest = state()
    figures = rows("SELECT count(*) AS n, count(*) FILTER (WHERE reused) AS reused, "
                   "count(*) FILTER (WHERE oom_protected IS NOT NULL) AS known, "
                   "count(*) FILTER (WHERE oom_protected) AS protected FROM pg_procmem_history "
                   "WHERE sample > (SELECT max(sample) - 2 FROM pg_procmem_history_system)")[0]
    ok(int(figures["n"]) > 0 and figures["known"] == figures["n"],
       "oom_protected is known for every process of the last two samples, reused figures (%s) included"
       % figures["reused"], figures)
    with section(2, "the postmaster at oom_score_adj -1000"):
        try:
            with open(path, "w") as f:
                f.write("-1000")
        except PermissionError:
            skip_rest("lowering oom_score_adj needs CAP_SYS_RESOURCE, which this machine withholds")
        try:
            hist, latest = state()
        finally:
            with open(path, "w") as f:
                f.write(old)
        ok(len(hist) == 2 and all(r["oom_protected"] == "t" for r in hist)
           and latest == [{"oom_protected": "t", "source": "sample"}],
           "the postmaster at oom_score_adj -1000: oom_protected in its last two samples and in pg_procmem_latest",
           (hist, latest))
        hist, latest = state()
        ok(len(hist) == 2 and all(r["oom_protected"] == "f" for r in hist)
           and latest == [{"oom_protected": "f", "source": "sample"}],
           "back at %s: not protected, in the samples since and in pg_procmem_latest" % old, (hist, latest))


def outgrown():
    """A sample larger than the ring: the processes holding the most, said once."""
    stop()
    at = log_size()
    start("-c pg_procmem.history_size=64kB -c max_connections=150 -c pg_procmem.sample_interval=200ms")
    many = [session("SELECT 1;", "history-many") for _ in range(110)]
    big = session("SELECT pg_sleep(20) FROM (SELECT count(*) FROM generate_series(1, 1500000) g "
                  "GROUP BY g % 1000000) s LIMIT 1;", "history-big")
    try:
        wait_until(lambda: value("SELECT count(*) FROM pg_stat_activity WHERE application_name = "
                                 "'history-many'") == "110", 60)
        bpid = pid_of("history-big")
        # its hash table built, and it asleep on it (a sample before may
        # catch it small, under load: then it is rightly not among the largest)
        wait_until(lambda: value("SELECT wait_event FROM pg_stat_activity WHERE pid = %d" % bpid) == "PgSleep", 60)
        n = newest()
        wait_until(lambda: newest() >= n + 3, 15)
        # the ring holds one sample, which the next one (200 ms on) replaces:
        # its rows are counted in one read of it, not a query per view
        k = rows("SELECT sample, count(*) AS kept, count(*) FILTER (WHERE pid = %d) AS big, "
                 "max(overhead) FILTER (WHERE pid = %d) AS big_overhead, min(overhead) AS smallest "
                 "FROM pg_procmem_history GROUP BY sample ORDER BY sample DESC LIMIT 1" % (bpid, bpid))
        processes = value("SELECT max(processes) FROM pg_procmem_history_system")
        lines = [l for l in log_since(at).splitlines() if "does not fit pg_procmem.history_size" in l]
        ok(k and int(processes) > 110 and int(k[0]["kept"]) == 65536 // ENTRY - 1 and len(lines) == 1,
           "a sample of %s processes into a 107-entry ring: 106 kept, said once in the log" % processes,
           (k, lines))
        ok(k and k[0]["big"] == "1", "... the backend holding the most among them", k)
        latest = rows("SELECT (SELECT count(*) FROM pg_procmem_history_latest(true)) AS newest, "
                      "(SELECT array_agg(DISTINCT source) FROM pg_procmem_latest) AS source, "
                      "(SELECT count(*) FROM pg_procmem_latest) AS n")
        ok(latest and latest[0]["newest"] == "0" and latest[0]["source"] == "{live}"
           and int(latest[0]["n"]) > 110,
           "a cut sample does not pass for every process: pg_procmem_history_latest() has no rows, "
           "pg_procmem_latest reads all %s live" % (latest and latest[0]["n"]), latest)
    finally:
        end_sessions("history-")
        for p in many + [big]:
            close(p)


def main():
    start()
    execute("CREATE EXTENSION IF NOT EXISTS pg_procmem")
    alter_system("pg_procmem.sample_interval = '1s'")
    sampler()
    snapshot()
    cancelled()
    terminated()
    intervals()
    statement_text()
    settings()
    protected()
    pid = crashed()
    logger_first()
    restarts(pid)
    larger_file()
    wrap()
    outgrown()
    stop()
    done()


main()
