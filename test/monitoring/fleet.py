"""The fleet dashboard (monitoring/grafana/pg_procmem_fleet.json) over
Prometheus: the test server and two throwaway clusters of its own (each with
pg_procmem preloaded), one postgres_exporter per cluster with
monitoring/postgres_exporter/pg_procmem.yaml, one Prometheus scraping the
three as three instances. Every panel's PromQL, its variables substituted as
Grafana substitutes them, must be accepted, and a panel meant to show one
series per server (its legend has {{instance}}) must return one for each of
the three; one aggregating across servers (quantiles), at least one. The
memory-limit panels also run under promtool test rules on synthetic
servers, with a cgroup limit and without one (TAP).

    python3 test/monitoring/fleet.py EXPORTER_BINARY PROMETHEUS_DIR
    python3 test/monitoring/fleet.py '' ''     (none here: skipped)

PROMETHEUS_DIR holds the prometheus and promtool binaries (scripts/lib.sh's
debian_prometheus prints it). Run as root: the throwaway clusters run as
user postgres, with the server's own binaries (pg_config's BINDIR)."""
import json
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "py"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import toolrules as R  # noqa: E402
from tap import ok, skip, done, rows, value, execute, drop_role

REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
DASHBOARD = os.path.join(REPO, "monitoring", "grafana", "pg_procmem_fleet.json")
QUERIES = os.path.join(REPO, "monitoring", "postgres_exporter", "pg_procmem.yaml")
ROLE = "procmem_fleet"
JOB = "pg_procmem_fleet"
THROWAWAY = 2                   # clusters the test starts beside the test server
SCRAPE = 2                      # Prometheus' scrape interval, seconds
# what Grafana puts for its macros (a 5-minute dashboard range, 15 s steps)
MACROS = {"__range": "5m", "__rate_interval": "1m", "__interval": "15s", "__range_s": "300",
          "__interval_ms": "15000"}
RANGE_SECONDS, STEP_SECONDS = 300, 15
FIXED = 10                      # tests beside the one per panel query


# --- the dashboard -------------------------------------------------------------

def dashboard():
    with open(DASHBOARD) as f:
        return json.load(f)


def panels(items):
    """Every panel, rows' nested (collapsed) panels included, rows too."""
    for p in items:
        yield p
        yield from panels(p.get("panels", []))


def targets(d):
    """(panel title, target) of every query of the dashboard."""
    return [(p["title"], t) for p in panels(d["panels"]) for t in p.get("targets", [])]


def per_server(target):
    """A query meant to show one series per server labels them by instance;
    one without {{instance}} in its legend aggregates across servers."""
    return "{{instance}}" in target.get("legendFormat", "")


def variable_query(v):
    q = v.get("query")
    return q.get("query", "") if isinstance(q, dict) else (q or "")


def grafana_regex(values):
    """A multi-value (or All) variable as Grafana writes it into a
    Prometheus query: (a|b|c), regex characters escaped for a PromQL string."""
    esc = [re.sub(r"([\\^$*+?.()|{}\[\]])", r"\\\\\1", v) for v in values]
    return "(" + "|".join(esc) + ")" if len(esc) > 1 else esc[0]


def substitute(expr, variables):
    """expr with $name, ${name} and [[name]] replaced (longest names first);
    raises on a variable the test does not know."""
    def one(m):
        name = m.group(1) or m.group(2) or m.group(3)
        if name not in variables:
            raise KeyError("the test knows no variable $%s" % name)
        return variables[name]
    return re.sub(r"\$\{(\w+)(?::\w+)?\}|\[\[(\w+)\]\]|\$(\w+)", one, expr)


def metric_names(expr):
    return set(re.findall(r"\bpg_procmem_[a-z0-9_]+", expr))


def structure(d):
    """What an importable fleet dashboard needs; the problems found."""
    bad = []
    if not 36 <= d.get("schemaVersion", 0) <= 41:
        bad.append("schemaVersion %s" % d.get("schemaVersion"))
    if not d.get("uid") or not d.get("title"):
        bad.append("no uid or title")
    vs = {v["name"]: v for v in d.get("templating", {}).get("list", [])}
    ds = vs.get("datasource", {})
    if ds.get("type") != "datasource" or ds.get("query") != "prometheus":
        bad.append("no datasource variable of type datasource, query prometheus")
    inst = vs.get("instance", {})
    if not (inst.get("multi") and inst.get("includeAll")
            and re.match(r"label_values\(pg_procmem_system_mem_total_bytes\b.*,\s*instance\)$", variable_query(inst))):
        bad.append("the instance variable: not multi, All, label_values(pg_procmem_system_mem_total_bytes, instance)")
    ids = [p.get("id") for p in panels(d["panels"])]
    if len(ids) != len(set(ids)) or None in ids:
        bad.append("panel ids not unique: %s" % ids)
    for p in panels(d["panels"]):
        if p.get("type") == "row":
            continue
        if not p.get("title") or not p.get("description") or "\n" in p["description"]:
            bad.append("panel %s: no title or no one-line description" % p.get("title"))
        if not p.get("targets"):
            bad.append("panel %s: no query" % p.get("title"))
        for t in [p] + p.get("targets", []):
            if t.get("datasource") != {"type": "prometheus", "uid": "${datasource}"}:
                bad.append("panel %s: data source %s" % (p.get("title"), t.get("datasource")))
        for t in p.get("targets", []):
            if not t.get("expr") or not t.get("refId"):
                bad.append("panel %s: a target without expr or refId" % p.get("title"))
    return bad


# --- processes -------------------------------------------------------------------

def port_free(port):
    if os.path.exists("/var/run/postgresql/.s.PGSQL.%d" % port):
        return False
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


_taken = set()


def free_port():
    """A port nobody listens on, in 20000-39999 (as scripts/lib.sh's
    free_port), none this test handed out already."""
    for _ in range(200):
        port = random.randint(20000, 39999)
        if port not in _taken and port_free(port):
            _taken.add(port)
            return port
    raise RuntimeError("no free port in 20000-39999")


def as_postgres():
    return ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []


class Cluster:
    """A throwaway cluster as scripts/lib.sh's cluster_start makes one (and
    test/py/cluster.py runs it): initdb as user postgres in a temp
    directory, a Unix socket only, on a free port, pg_procmem preloaded."""

    def __init__(self, bindir):
        self.bindir = bindir
        self.libpath = os.environ.get("PG_LIBPATH") or os.path.join(os.path.dirname(bindir), "lib")
        self.dir = tempfile.mkdtemp(prefix="pg_procmem.fleet.")
        if os.geteuid() == 0:
            import pwd
            pw = pwd.getpwnam("postgres")
            os.chown(self.dir, pw.pw_uid, pw.pw_gid)
        os.chmod(self.dir, 0o755)
        self.data = os.path.join(self.dir, "data")
        self.port = free_port()

    def run(self, *cmd):
        subprocess.run(as_postgres() + ["env", "LD_LIBRARY_PATH=" + self.libpath] + list(cmd),
                       check=True, capture_output=True, text=True, timeout=120)

    def start(self):
        self.run(os.path.join(self.bindir, "initdb"), "-D", self.data, "-U", "postgres", "--auth=trust",
                 "--no-sync", "-E", "UTF8", "--locale=C")
        opts = ("-c port=%d -c unix_socket_directories=%s -c listen_addresses='' -c jit=off "
                "-c autovacuum=off -c shared_buffers=32MB -c max_connections=20 "
                "-c shared_preload_libraries=pg_procmem -c pg_procmem.sample_interval=1s" % (self.port, self.dir))
        log = os.path.join(self.dir, "server.log")
        try:
            self.run(os.path.join(self.bindir, "pg_ctl"), "-D", self.data, "-l", log, "-w", "-t", "60",
                     "start", "-o", opts)
        except subprocess.CalledProcessError:
            with open(log, errors="replace") as f:
                print("".join("# " + l for l in f.readlines()[-20:]), end="", flush=True)
            raise
        rows("CREATE EXTENSION pg_procmem; CREATE ROLE %s LOGIN IN ROLE pg_monitor" % ROLE, self.conninfo())

    def conninfo(self, user="postgres"):
        return "host=%s port=%d user=%s dbname=postgres" % (self.dir, self.port, user)

    def dsn(self):
        return "host=%s port=%d user=%s dbname=postgres sslmode=disable search_path=pg_catalog" % (
            self.dir, self.port, ROLE)

    def stop(self):
        if os.path.exists(os.path.join(self.data, "postmaster.pid")):
            for mode in ("fast", "immediate"):
                try:
                    self.run(os.path.join(self.bindir, "pg_ctl"), "-D", self.data, "-m", mode, "-w", "stop")
                    break
                except (subprocess.CalledProcessError, subprocess.TimeoutExpired):
                    pass
        shutil.rmtree(self.dir, ignore_errors=True)


def spawn(cmd, env=None, cwd=None):
    log = tempfile.TemporaryFile("w+")
    p = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=log, stderr=subprocess.STDOUT)
    p.log = log
    return p


def log_of(p, n=2000):
    p.log.seek(0)
    return p.log.read()[-n:]


def end(p):
    if p.poll() is None:
        p.terminate()
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(10)


# --- Prometheus' HTTP API --------------------------------------------------------

class Prometheus:
    def __init__(self, port):
        self.base = "http://127.0.0.1:%d" % port

    def get(self, path, **params):
        """The API's JSON answer (an error's too: HTTP 400 and 422 carry one)."""
        url = self.base + path + ("?" + urllib.parse.urlencode(params, doseq=True) if params else "")
        try:
            with urllib.request.urlopen(url, timeout=30) as r:
                return json.loads(r.read().decode())
        except urllib.error.HTTPError as e:
            body = e.read().decode(errors="replace")
            try:
                return json.loads(body)
            except ValueError:
                return {"status": "error", "error": "HTTP %d: %s" % (e.code, body[:500])}
        except OSError as e:            # not listening yet, or gone
            return {"status": "error", "error": str(e)}

    def query(self, expr, at):
        return self.get("/api/v1/query", query=expr, time="%.3f" % at)

    def query_range(self, expr, at):
        return self.get("/api/v1/query_range", query=expr, start="%.3f" % (at - RANGE_SECONDS),
                        end="%.3f" % at, step=str(STEP_SECONDS))

    def series_count(self, expr):
        r = self.query(expr, time.time())
        return len(r.get("data", {}).get("result", [])) if r.get("status") == "success" else 0


def check_target(prom, target, variables, instances, at):
    """Runs one panel query as Grafana would (a range query over the
    dashboard's range, or an instant one); returns (passed, what it found,
    the result's series labels)."""
    try:
        expr = substitute(target["expr"], variables)
    except KeyError as e:
        return False, str(e), []
    if target.get("instant") and not target.get("range"):
        r = prom.query(expr, at)
    else:
        r = prom.query_range(expr, at)
    if r.get("status") != "success":
        return False, "rejected: %s\n%s" % (r.get("error"), expr), []
    labels = [s["metric"] for s in r["data"]["result"]]
    if per_server(target):
        missing = sorted(set(instances) - {l.get("instance") for l in labels})
        if missing:
            return False, "no series for %s; got %s\n%s" % (missing, labels, expr), labels
    elif not labels:
        return False, "no series at all\n%s" % expr, labels
    return True, "", labels


# Synthetic servers for the panels whose figures are computed: (a metric
# the query reads, {server: {series: value}}, {server: the figure}). The
# memory limit: a cgroup with room left, none (the exporter's NaN:
# MemAvailable / MemTotal stands in), one with no room left, and one whose
# cgroup has room while the machine has not (the smaller share shows).
# A connection's overhead and the client backends' page tables: a
# checkpointer beside them, which no per-connection figure may count.
SYS = "pg_procmem_system_%s"
BT = 'pg_procmem_backend_type_%s{backend_type="%s"}'
VALUE_CASES = [
    ("pg_procmem_system_cgroup_room_bytes",
     {server: {SYS % "cgroup_room_bytes": room, SYS % "cgroup_limit_bytes": limit,
               SYS % "mem_available_bytes": avail, SYS % "mem_total_bytes": 1000}
      for server, (room, limit, avail) in {"limited": (100, 400, 900), "unlimited": ("NaN", "NaN", 300),
                                           "full": (0, 500, 800), "host_short": (990, 1000, 20)}.items()},
     {"limited": 0.25, "unlimited": 0.3, "full": 0.0, "host_short": 0.02}),
    ("pg_procmem_backend_type_overhead_bytes",
     {server: {BT % ("overhead_bytes", "client backend"): overhead, BT % ("processes", "client backend"): n,
               BT % ("overhead_bytes", "checkpointer"): 10000, BT % ("processes", "checkpointer"): 1}
      for server, (overhead, n) in {"a": (3000, 3), "b": (500, 1)}.items()},
     {"a": 1000, "b": 500}),
    ("pg_procmem_backend_type_page_tables_bytes",
     {server: {BT % ("page_tables_bytes", "client backend"): pt, BT % ("page_tables_bytes", "checkpointer"): 5000}
      for server, pt in {"a": 700, "b": 300}.items()},
     {"a": 700, "b": 300}),
]


def with_labels(series, server):
    extra = 'job="%s",instance="%s"' % (JOB, server)
    return series[:-1] + "," + extra + "}" if series.endswith("}") else series + "{" + extra + "}"


def value_panels(prom_dir, d, tmp):
    """Each per-server query reading one of VALUE_CASES' metrics, run by
    promtool test rules on its synthetic servers: the problems found (none:
    each server's figure as expected)."""
    promtool = os.path.join(prom_dir, "promtool")
    if not os.access(promtool, os.X_OK):
        return ["no promtool in %s" % prom_dir], 0
    problems, n = [], 0
    for metric, servers, want in VALUE_CASES:
        exprs = [(title, t) for title, t in targets(d) if metric in t["expr"] and per_server(t)]
        if not exprs:
            problems.append("no per-server panel reads %s" % metric)
            continue
        series = [{"series": with_labels(name, server), "values": " ".join([str(v)] * 10)}
                  for server, values in servers.items() for name, v in values.items()]
        variables = dict(MACROS, job=JOB, instance=grafana_regex(sorted(servers)))
        tests = [{"expr": substitute(t["expr"], variables), "eval_time": "5m",
                  "exp_samples": [{"labels": '{instance="%s"}' % i, "value": v} for i, v in want.items()]}
                 for _, t in exprs]
        n += len(tests)
        path = os.path.join(tmp, "values_test.yml")
        with open(path, "w") as f:
            json.dump({"rule_files": [], "evaluation_interval": "1m",
                       "tests": [{"interval": "1m", "input_series": series, "promql_expr_test": tests}]}, f, indent=1)
        r = subprocess.run([promtool, "test", "rules", path], capture_output=True, text=True, timeout=60)
        if r.returncode:
            problems += [(r.stdout + r.stderr)[-3000:], [title for title, _ in exprs]]
    return problems, n


def wait_for_targets(prom, process, instances, timeout=60):
    """Until every instance is up, scraped at least three times, with the
    pg_procmem series the panels read (client backends: the exporter's own
    connection, in the sampler's next sample)."""
    deadline = time.time() + timeout
    needs = ['up{instance="%s"} == 1',
             'count_over_time(up{instance="%s"}[1m]) >= 3',
             'pg_procmem_system_mem_total_bytes{instance="%s"}',
             'pg_procmem_history_last_sample_seconds{instance="%s"}',
             'pg_procmem_backend_type_processes{backend_type="client backend",instance="%s"}']
    missing = ["all: Prometheus did not answer"]
    while time.time() < deadline and process.poll() is None:
        missing = [(i, n % i) for i in instances for n in needs if prom.series_count(n % i) == 0]
        if not missing:
            return []
        time.sleep(1)
    return missing


# --- the test ----------------------------------------------------------------------

def main():
    d = dashboard()
    planned = FIXED + len(targets(d))
    exporter = sys.argv[1] if len(sys.argv) > 1 else ""
    prom_dir = sys.argv[2] if len(sys.argv) > 2 else ""
    prom_bin = os.path.join(prom_dir, "prometheus") if prom_dir else ""
    if not exporter or not os.access(exporter, os.X_OK):
        skip(planned, "no postgres_exporter here (neither Debian's package nor a build from the Go module proxy)")
        done()
        return
    if not prom_bin or not os.access(prom_bin, os.X_OK):
        skip(planned, "no Prometheus here (scripts/lib.sh's debian_prometheus: Debian's prometheus package)")
        done()
        return
    for b in (exporter, prom_bin):
        v = subprocess.run([b, "--version"], capture_output=True, text=True)
        print("# " + ((v.stdout + v.stderr).strip().splitlines() or ["?"])[0])

    bad = structure(d)
    ok(not bad, "the dashboard: schemaVersion, a Prometheus datasource variable, the instance variable, "
       "every panel titled and described, on ${datasource}", bad)
    names = set(R.exporter_file_series(legacy=True))
    legacy = names - set(R.exporter_file_series())
    used = set().union(*(metric_names(t["expr"]) for _, t in targets(d)))
    ok(used and used <= names and not used & legacy,
       "the %d pg_procmem metrics its panels read are pg_procmem.yaml's, none of its old names" % len(used),
       ["not in pg_procmem.yaml: %s" % sorted(used - names), "old names: %s" % sorted(used & legacy)])
    per_process = {n for n in used if n.startswith(("pg_procmem_process_", "pg_procmem_top_process_"))}
    ok(not per_process and not any(re.search(r"\bpid\b", t["expr"]) for _, t in targets(d)),
       "no per-process series (pid labels) on it", sorted(per_process))

    bindir = value("SELECT setting FROM pg_config WHERE name = 'BINDIR'") or os.environ.get("PG_BIN", "")
    clusters, procs, tmp = [], [], tempfile.mkdtemp(prefix="pg_procmem.fleet-prometheus.")
    execute("DROP ROLE IF EXISTS %s; CREATE ROLE %s LOGIN IN ROLE pg_monitor" % (ROLE, ROLE))
    try:
        dsns = {"main": R.dsn(ROLE)}
        for i in range(THROWAWAY):
            c = Cluster(bindir)
            clusters.append(c)
            c.start()
            dsns["throwaway%d" % (i + 1)] = c.dsn()
        instances = sorted(dsns)
        scrape = []
        for name in instances:
            port = free_port()
            procs.append(spawn([exporter, "--web.listen-address=127.0.0.1:%d" % port,
                                "--extend.query-path=" + QUERIES, "--log.level=info"],
                               env=dict(os.environ, DATA_SOURCE_NAME=dsns[name])))
            scrape.append({"targets": ["127.0.0.1:%d" % port], "labels": {"instance": name}})
        config = {"global": {"scrape_interval": "%ds" % SCRAPE, "scrape_timeout": "%ds" % SCRAPE,
                             "evaluation_interval": "%ds" % SCRAPE},
                  "scrape_configs": [{"job_name": JOB, "static_configs": scrape}]}
        with open(os.path.join(tmp, "prometheus.yml"), "w") as f:
            json.dump(config, f, indent=2)          # YAML reads JSON
        port = free_port()
        prometheus = spawn([prom_bin, "--config.file=" + os.path.join(tmp, "prometheus.yml"),
                            "--storage.tsdb.path=" + os.path.join(tmp, "data"),
                            "--web.listen-address=127.0.0.1:%d" % port], cwd=tmp)
        procs.append(prometheus)
        prom = Prometheus(port)
        missing = wait_for_targets(prom, prometheus, instances)
        ok(not missing, "Prometheus scrapes the %d servers' exporters (%s), each with its pg_procmem series"
           % (len(instances), ", ".join(instances)),
           ["missing: %s" % missing, "targets: %s" % json.dumps(prom.get("/api/v1/targets"))[:2000],
            "prometheus: " + log_of(prometheus)] + ["exporter: " + log_of(p) for p in procs[:-1]])

        # the variables, as Grafana's label_values() runs them
        vs = {v["name"]: v for v in d["templating"]["list"]}
        variables = dict(MACROS, datasource="prometheus")
        jobs = label_values(prom, variable_query(vs["job"]), variables) if "job" in vs else [JOB]
        ok(JOB in jobs, "variable job lists the scrape job", jobs)
        variables["job"] = grafana_regex(jobs or [JOB])
        found = label_values(prom, variable_query(vs["instance"]), variables)
        ok(set(instances) <= set(found), "variable instance lists each of the %d servers" % len(instances), found)
        variables["instance"] = grafana_regex(sorted(found) or instances)

        # every name the panels read is among the series Prometheus has
        have = set(prom.get("/api/v1/label/__name__/values").get("data", []))
        ok(used <= have, "each pg_procmem metric its panels read is among Prometheus' series",
           sorted(used - have))

        at = time.time()
        pids = []
        for title, t in targets(d):
            passed, why, labels = check_target(prom, t, variables, instances, at)
            pids += [l for l in labels if "pid" in l]
            ok(passed, "panel %s (%s): accepted, %s" % (title, t["refId"], "a series for each server"
                                                        if per_server(t) else "across servers"), why)
        ok(not pids, "no series a panel shows has a pid label", pids[:5])

        # the figures: the memory limit's share with a cgroup limit and without, a
        # connection's overhead, the client backends' page tables
        wrong, n = value_panels(prom_dir, d, tmp)
        ok(not wrong, "the %d per-server queries of the memory limit, overhead per connection and page tables "
           "give each synthetic server its figure (the smaller of the cgroup's room / limit and MemAvailable / "
           "MemTotal; client backends only; promtool test rules)" % n, wrong)

        # the check fails where a panel names metrics nobody exports
        title, t = next((title, t) for title, t in targets(d) if per_server(t))
        wrong = dict(t, expr=re.sub(r"\b(pg_procmem_[a-z0-9_]+)", r"\1_misspelled", t["expr"]))
        passed, why, _ = check_target(prom, wrong, variables, instances, at)
        ok(not passed and "no series" in why and not metric_names(wrong["expr"]) & have,
           "panel %s with its metrics misspelled would fail its test" % title, why)
    finally:
        for p in reversed(procs):
            end(p)
        for c in clusters:
            c.stop()
        shutil.rmtree(tmp, ignore_errors=True)
        drop_role(ROLE)
    done()


def label_values(prom, query, variables):
    """label_values(SELECTOR, LABEL) or label_values(LABEL), as Grafana asks
    Prometheus for it: /api/v1/label/LABEL/values, matched by SELECTOR."""
    m = re.match(r"^label_values\((?:(.*),\s*)?(\w+)\)$", query.strip(), re.S)
    if not m:
        return []
    params = {"start": "%.3f" % (time.time() - RANGE_SECONDS), "end": "%.3f" % time.time()}
    if m.group(1):
        params["match[]"] = substitute(m.group(1), variables)
    return prom.get("/api/v1/label/%s/values" % m.group(2), **params).get("data") or []


if __name__ == "__main__":
    main()
