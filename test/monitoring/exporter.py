"""postgres_exporter with monitoring/postgres_exporter/*.yaml, against the
test server: start it as a pg_monitor role, scrape /metrics, check the
pg_procmem series against the server and /proc (TAP).

    python3 test/monitoring/exporter.py EXPORTER_BINARY
    python3 test/monitoring/exporter.py ''     (could not be built: skipped)
"""
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "py"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import toolrules as R  # noqa: E402
from toolrules import free_port  # noqa: E402
from tap import ok, skip, section, done, rows, value, execute, meminfo, drop_role

REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
QUERIES = os.path.join(REPO, "monitoring", "postgres_exporter")
ROLE = "procmem_exporter"
PLANNED = 27


def dsn(role=ROLE, dbname=None):
    return R.dsn(role, dbname)


def scrape(binary, queries_file, data_source=None):
    """Runs the exporter until one scrape of /metrics succeeded; returns the
    parsed samples {name: [(labels dict, value)]} and its log."""
    port = free_port()
    log = tempfile.TemporaryFile("w+")
    proc = subprocess.Popen(
        [binary, "--web.listen-address=127.0.0.1:%d" % port,
         "--extend.query-path=" + queries_file, "--log.level=info"],
        env=dict(os.environ, DATA_SOURCE_NAME=data_source or dsn()), stdout=log, stderr=subprocess.STDOUT)
    try:
        text = None
        for _ in range(100):
            try:
                with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=30) as r:
                    text = r.read().decode()
                break
            except OSError:
                time.sleep(0.2)
    finally:
        proc.terminate()
        proc.wait(10)
    log.seek(0)
    return parse(text or ""), log.read()


SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def parse(text):
    samples = {}
    for line in text.splitlines():
        m = SAMPLE.match(line)
        if m:
            labels = dict(LABEL.findall(m.group(2) or ""))
            samples.setdefault(m.group(1), []).append((labels, float(m.group(3))))
    return samples


def one(samples, name, **labels):
    """The value of the one sample of name with these labels, or None."""
    found = [v for l, v in samples.get(name, []) if all(l.get(k) == x for k, x in labels.items())]
    return found[0] if len(found) == 1 else None




def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else ""
    if not binary or not os.access(binary, os.X_OK):
        skip(PLANNED, "no postgres_exporter here (neither Go >= 1.21 with the module proxy nor Debian's package)")
        done()
    version = subprocess.run([binary, "--version"], capture_output=True, text=True)
    print("# " + (version.stdout + version.stderr).strip().splitlines()[0])
    execute("DROP ROLE IF EXISTS %s; CREATE ROLE %s LOGIN IN ROLE pg_monitor" % (ROLE, ROLE))
    # two idle sessions, for the headroom's idle overhead
    idle = [subprocess.Popen([os.environ.get("PSQL", "psql"), "-X", "-q"], stdin=subprocess.PIPE)
            for _ in range(2)]
    try:
        sample_after_sessions()
        with section(PLANNED, "postgres_exporter"):
            check(binary)
    finally:
        for p in idle:
            p.stdin.close()
            p.wait(10)
        drop_role(ROLE)
    done()


def sample_after_sessions():
    """Where pg_procmem is preloaded, the scrape tier reads the sampler's
    newest sample: wait for one taken after the idle sessions connected (at
    most two intervals), so that its per-type counts can be compared with a
    live read. No sample (not preloaded): the scrape reads live."""
    for _ in range(300):
        if int(value("SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' "
                     "AND pid <> pg_backend_pid()")) >= 2:
            break
        time.sleep(0.1)
    since = value("SELECT statement_timestamp()")
    for _ in range(300):
        if value("SELECT count(*) = 0 OR max(sampled_at) > '%s' FROM pg_procmem_history_latest(true)" % since) == "t":
            break
        time.sleep(0.1)


def check(binary):
    m, log = scrape(binary, os.path.join(QUERIES, "pg_procmem.yaml"))
    ok(one(m, "pg_up") == 1, "the exporter connected as a pg_monitor role (pg_up 1)", log[-2000:])
    ok(not re.search(r"(?i)error.*pg_procmem|pg_procmem.*error", log),
       "no pg_procmem query failed in the exporter's log",
       "\n".join(l for l in log.splitlines() if "pg_procmem" in l)[-2000:])

    # per backend type: the counts add up to the server's processes
    procs = m.get("pg_procmem_backend_type_processes", [])
    types = {l["backend_type"]: v for l, v in procs}
    n = int(value("SELECT count(*) FROM pg_procmem_backends"))
    ok(abs(sum(types.values()) - n) <= 2,
       "processes per backend_type add up to the server's %d processes (+-2: the exporter's own)" % n, types)
    ok({"postmaster", "checkpointer", "client backend"} <= set(types),
       "backend types include postmaster, checkpointer, client backend", sorted(types))
    ckpt = one(m, "pg_procmem_backend_type_overhead_bytes", backend_type="checkpointer")
    ok(ckpt is not None and 64 << 10 < ckpt < 256 << 20,
       "checkpointer overhead is between 64 kB and 256 MB", ckpt)
    pt = one(m, "pg_procmem_backend_type_page_tables_bytes", backend_type="checkpointer")
    ok(pt is not None and 0 < pt < ckpt, "its page tables are part of its overhead", (pt, ckpt))
    rss = one(m, "pg_procmem_backend_type_rss_bytes", backend_type="postmaster")
    pm = one(m, "pg_procmem_backend_type_overhead_bytes", backend_type="postmaster")
    ok(rss is not None and pm is not None and pm < rss, "the postmaster's overhead is below its rss", (pm, rss))

    # the top 5: ranks 1..5, overhead not increasing, pids of the server
    top = sorted(m.get("pg_procmem_top_process_overhead_bytes", []), key=lambda s: int(s[0]["rank"]))
    ok([int(l["rank"]) for l, _ in top] == [1, 2, 3, 4, 5], "top processes: ranks 1 to 5",
       [l for l, _ in top])
    ok(all(a[1] >= b[1] for a, b in zip(top, top[1:])), "ranked by overhead, largest first", top)
    pids = {int(v) for _, v in m.get("pg_procmem_top_process_pid", [])}
    server = {int(r["pid"]) for r in rows("SELECT pid FROM pg_procmem_backends")}
    # the exporter's own backends (it holds two) may be among them, gone by now
    ok(len(pids) == 5 and len(pids - server) <= 2,
       "their pids are processes of the server (but the exporter's own connections)", (pids, server))
    ok(not any("pid" in l for s in m for l, _ in m[s] if s.startswith("pg_procmem_")),
       "no pid label in the default file (low cardinality)")

    # the machine and the cgroup agree with /proc
    ok(one(m, "pg_procmem_system_mem_total_bytes") == meminfo("MemTotal"),
       "mem_total_bytes equals MemTotal of /proc/meminfo")
    avail = one(m, "pg_procmem_system_mem_available_bytes")
    ok(avail is not None and 0 < avail <= meminfo("MemTotal"), "mem_available_bytes is within (0, MemTotal]")
    ok(one(m, "pg_procmem_hugepages_hugepages_total", huge_pages=value("SHOW huge_pages"))
       == meminfo("HugePages_Total"),
       "hugepages_total equals HugePages_Total, labelled with the huge_pages setting")
    ok(one(m, "pg_procmem_hugepages_in_use") in (0.0, 1.0), "hugepages in_use is 0 or 1")
    usage = one(m, "pg_procmem_system_cgroup_usage_bytes")
    ok(usage is not None and usage > 0, "the cgroup's usage is reported", usage)

    # headroom and OOM
    fit = one(m, "pg_procmem_headroom_more_idle_connections_fit")
    ok(fit is not None and fit > 0, "more_idle_connections_fit is positive", fit)
    acc = one(m, "pg_procmem_accounting_accounted_bytes")
    over = one(m, "pg_procmem_accounting_processes_overhead_bytes")
    ok(acc is not None and over is not None and acc >= over > 0,
       "accounted memory includes the processes' overhead", (acc, over))
    # the two queries run at different moments: a connection may be forked
    # ("postmaster child"), authenticating (no type yet) or exiting between them
    ranks = {l["backend_type"]: v for l, v in m.get("pg_procmem_oom_best_rank", [])}
    transient = {"client backend", "postmaster child", ""}
    ok(min(ranks.values(), default=0) == 1 and set(ranks) <= set(types) | transient,
       "OOM ranking: one backend type holds rank 1, and the types are the server's", ranks)
    score = one(m, "pg_procmem_oom_max_oom_score", backend_type="postmaster")
    ok(score is not None and 0 <= score <= 2000, "the postmaster's oom_score is within 0..2000", score)

    # the advice: one series per finding
    found = {(l["check_name"], l["severity"]) for l, v in m.get("pg_procmem_advice_findings", []) if v == 1}
    view = {(r["check_name"], r["severity"]) for r in rows("SELECT check_name, severity FROM pg_procmem_advice")}
    ok(any(c == "overcommit" for c, _ in found),
       "advice: the overcommit finding is always there", found)
    # findings that follow MemAvailable, or the oom_scores of whichever client
    # backends are connected at the moment, may come and go between two reads
    # (oom_postmaster's severity too: only its presence is stable)
    moving = {"work_mem_exposure", "dirty_writeback", "cgroup_limit", "oom_auxiliary_first"}
    stable = lambda fs: {c for c, _ in fs if c not in moving}
    ok(stable(found) == stable(view),
       "advice: one series per finding of pg_procmem_advice", (found, view))

    # the memory history: the preloaded test server samples every 10 s
    samples = one(m, "pg_procmem_history_samples")
    ok(samples is not None and samples >= 1 and (one(m, "pg_procmem_history_last_sample_ms") or 0) > 0,
       "history: samples held, and what the last one cost", (samples, one(m, "pg_procmem_history_last_sample_ms")))
    ok(one(m, "pg_procmem_history_crash_restarts") == int(value(
        "SELECT COALESCE(max(number), 0) FROM pg_procmem_crashes")),
       "history: the crash-restart counter is pg_procmem_crashes' highest number",
       one(m, "pg_procmem_history_crash_restarts"))
    ok(one(m, "pg_procmem_guard_actions_total") == int(value(
        "SELECT COALESCE(max(action_number), 0) FROM pg_procmem_guard_actions")) and
       one(m, "pg_procmem_guard_canceled_last_hour") == int(value(
           "SELECT count(*) FROM pg_procmem_guard_actions WHERE action = 'cancel' "
           "AND acted_at > now() - interval '1 hour'")),
       "guard: the actions counter and the last hour's cancels, as pg_procmem_guard_actions has them",
       (one(m, "pg_procmem_guard_actions_total"), one(m, "pg_procmem_guard_canceled_last_hour")))
    # names earlier releases shipped, beside their new names (docs/monitoring.md, "Names")
    pairs = [("pg_procmem_system_cgroup_oom_kills", "pg_procmem_system_cgroup_oom_kills_total", 1),
             ("pg_procmem_history_crash_restarts", "pg_procmem_history_crash_restarts_total", 1),
             ("pg_procmem_history_last_sample_ms", "pg_procmem_history_last_sample_seconds", 1000)]
    got = [(old, one(m, old), one(m, new)) for old, new, _ in pairs]
    ok(all(o is not None and n is not None and abs(o - n * f) <= 1e-6 * max(abs(o), 1)
           for (_, o, n), (_, _, f) in zip(got, pairs)),
       "the 1.1.0 and 1.2.0 names are still scraped, equal to their new names", got)

    # opt-in: one series per process, with a pid label
    both = tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False)
    for f in ("pg_procmem.yaml", "pg_procmem_per_process.yaml"):
        with open(os.path.join(QUERIES, f)) as src:
            both.write(src.read() + "\n")
    both.close()
    m2, log2 = scrape(binary, both.name)
    os.unlink(both.name)
    postmaster = value("SELECT pid FROM pg_procmem_backends WHERE backend_type = 'postmaster'")
    v = one(m2, "pg_procmem_process_overhead_bytes", pid=postmaster, backend_type="postmaster")
    ok(v is not None and v > 0, "with pg_procmem_per_process.yaml: the postmaster's own series, by pid",
       log2[-2000:])


if __name__ == "__main__":
    main()
