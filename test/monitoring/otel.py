"""The OpenTelemetry collector's sqlquery receiver with monitoring/otel/*.yaml,
against the test server: run the collector as a pg_monitor role, its
pipeline's exporters replaced by a file exporter (and a prometheus exporter
where the binary has one); check every metric of monitoring/metrics.toml
arrives with its type, unit, attributes and resource, and that the names it
exports into Prometheus are the postgres_exporter file's (TAP).

    python3 test/monitoring/otel.py OTELCOL_BINARY
    python3 test/monitoring/otel.py ''     (could not be built: skipped)
"""
import json
import math
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
from tap import ok, skip, section, skip_rest, done, rows, value, execute, meminfo, drop_role

REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
OTEL = os.path.join(REPO, "monitoring", "otel")
ROLE = "procmem_otel"
INSTANCE = "pg-procmem-otel-test:%s" % os.environ.get("PGPORT", "")
PLANNED = 21
PROMETHEUS_TESTS = 4
UNITS = (("_bytes", "By"), ("_seconds", "s"))


def expected(opt_in):
    """{metric name: (kind, unit, label columns)} of metrics.toml's groups
    (the default ones, or the opt-in ones), without the legacy columns."""
    out = {}
    for g, d in R.load_definition().items():
        if d["opt_in"] != opt_in:
            continue
        labels = [c for c in d["order"] if d["columns"][c] == "label"]
        for c in d["order"]:
            if d["columns"][c] != "label" and c not in d["legacy"]:
                unit = next((u for sfx, u in UNITS if c.endswith(sfx)), "")
                out["pg_procmem_%s_%s" % (g, c)] = (d["columns"][c], unit, labels)
    return out


def attrs(lst):
    out = {}
    for a in lst or []:
        v = a.get("value", {})
        out[a["key"]] = next(iter(v.values())) if v else None
    return out


def number(p):
    v = p.get("asDouble", p.get("asInt"))
    return float(v) if v is not None else None     # "NaN" as a string too


def read_file_export(path):
    """The file exporter's JSON lines (one a collection round of a receiver):
    {name: metric}, each from the newest line that has it, with its
    resource's attributes and the data points of all its rows (the receiver
    makes one metric a row); plus every resource seen."""
    metrics, resources = {}, []
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        return metrics, resources
    for line in lines:
        try:
            doc = json.loads(line)
        except ValueError:
            continue        # a line being written
        round_ = {}
        for rm in doc.get("resourceMetrics", []):
            res = attrs(rm.get("resource", {}).get("attributes"))
            resources.append(res)
            for sm in rm.get("scopeMetrics", []):
                for m in sm.get("metrics", []):
                    m["resource"] = res
                    if m["name"] not in round_:
                        round_[m["name"]] = m
                        continue
                    first = round_[m["name"]]
                    for k in ("gauge", "sum"):
                        if k in m and k in first:
                            first[k].setdefault("dataPoints", []).extend(m[k].get("dataPoints", []))
                        elif k in m or k in first:
                            first.setdefault("mixed", True)
        metrics.update(round_)
    return metrics, resources


def kind_of(m):
    """gauge, counter (a monotonic cumulative sum) or what else it is."""
    if m.get("mixed"):
        return "gauge and sum at once"
    if "gauge" in m:
        return "gauge"
    if "sum" in m:
        s = m["sum"]
        # AGGREGATION_TEMPORALITY_CUMULATIVE is 2
        cumulative = s.get("aggregationTemporality") in (2, "AGGREGATION_TEMPORALITY_CUMULATIVE")
        return "counter" if s.get("isMonotonic") and cumulative else "sum (monotonic %s, temporality %s)" % (
            s.get("isMonotonic", False), s.get("aggregationTemporality"))
    return "other: " + ",".join(k for k in m if k not in ("name", "unit", "description", "resource"))


def points(m):
    body = m.get("gauge") or m.get("sum") or {}
    return [(attrs(p.get("attributes")), number(p)) for p in body.get("dataPoints", [])]


def one(m, name, **labels):
    found = [v for a, v in points(m[name]) if all(a.get(k) == x for k, x in labels.items())] if name in m else []
    return found[0] if len(found) == 1 else None


SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: \d+)?$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def scrape(port):
    """The prometheus exporter's /metrics: ({name: TYPE}, {name: [(labels, value)]}), or None."""
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=10) as r:
            text = r.read().decode()
    except OSError:
        return None
    types, samples = {}, {}
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, t = line.split(None, 3)
            types[name] = t
            continue
        m = SAMPLE.match(line)
        if m:
            samples.setdefault(m.group(1), []).append((dict(LABEL.findall(m.group(2) or "")), float(m.group(3))))
    return types, samples


class Collector:
    """The collector with the given files and an override that sends the
    pipelines to a file (and a prometheus exporter), the tiers' intervals short."""

    def __init__(self, binary, files, pipelines, prometheus_port=None):
        self.dir = tempfile.mkdtemp(prefix="procmem-otel.")
        self.out = os.path.join(self.dir, "metrics.jsonl")
        exporters = {"file/test": {"path": self.out, "format": "json", "flush_interval": "200ms"}}
        if prometheus_port:
            exporters["prometheus/test"] = {"endpoint": "127.0.0.1:%d" % prometheus_port}
        override = {
            "receivers": {"sqlquery/pg_procmem": {"collection_interval": "2s"},
                          "sqlquery/pg_procmem_slow": {"collection_interval": "5s"}},
            "exporters": exporters,
            "service": {
                "pipelines": {p: {"exporters": sorted(exporters)} for p in pipelines},
                # no listener of its own (:8888): two lanes run this test at once
                "telemetry": {"metrics": {"level": "none"}},
            },
        }
        if "sqlquery/pg_procmem_per_process" in " ".join(open(f).read() for f in files):
            override["receivers"]["sqlquery/pg_procmem_per_process"] = {"collection_interval": "2s"}
        path = os.path.join(self.dir, "override.yaml")
        with open(path, "w") as f:
            json.dump(override, f, indent=1)     # JSON is YAML
        self.log = open(os.path.join(self.dir, "collector.log"), "w+")
        self.proc = subprocess.Popen(
            [binary] + ["--config=" + f for f in files] + ["--config=" + path],
            env=dict(os.environ, PG_PROCMEM_DATASOURCE=R.dsn(ROLE), PG_PROCMEM_INSTANCE=INSTANCE),
            stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)

    def running(self):
        return self.proc.poll() is None

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.log.seek(0)
        text = self.log.read()
        self.log.close()
        for f in os.listdir(self.dir):
            os.unlink(os.path.join(self.dir, f))
        os.rmdir(self.dir)
        return text


def complaints(log):
    """The log's lines at level error, and those at level warn from a
    sqlquery receiver (a NULL value, a column not found, a value it cannot
    parse: the row's metrics are dropped)."""
    return [l for l in log.splitlines()
            if re.search(r"\terror\t", l) or re.search(r"\twarn\t", l) and "sqlquery" in l]


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else ""
    if not binary or not os.access(binary, os.X_OK):
        skip(PLANNED, "no OpenTelemetry collector here (a build needs Go >= 1.25 and the Go module proxy)")
        done()
    version = subprocess.run([binary, "--version"], capture_output=True, text=True)
    print("# " + (version.stdout + version.stderr).strip().splitlines()[0])
    components = subprocess.run([binary, "components"], capture_output=True, text=True).stdout
    has_prometheus = re.search(r"^\s*- name: prometheus\s*$", components.split("exporters:", 1)[-1], re.M)
    execute("DROP ROLE IF EXISTS %s; CREATE ROLE %s LOGIN IN ROLE pg_monitor" % (ROLE, ROLE))
    try:
        with section(PLANNED, "otel"):
            check(binary, bool(has_prometheus))
    finally:
        drop_role(ROLE)
    done()


def check(binary, has_prometheus):
    want = expected(opt_in=False)
    port = free_port() if has_prometheus else None
    c = Collector(binary, [os.path.join(OTEL, "pg_procmem.yaml")], ["metrics/pg_procmem"], port)
    prom = None
    try:
        # both tiers collect at start; a few rounds at most (no timing asserted)
        for _ in range(80):
            m, resources = read_file_export(c.out)
            if port:
                prom = scrape(port)
            if set(want) <= set(m) and (not port or (prom and "pg_procmem_headroom_available_bytes" in prom[0])) \
                    or not c.running():
                break
            time.sleep(0.5)
        time.sleep(1)       # one more scrape-tier round: its errors, if any, logged
        m, resources = read_file_export(c.out)
        if port:
            prom = scrape(port) or prom
    finally:
        log = c.stop()

    ok(bool(m), "the collector ran the files' queries as a pg_monitor role, and the file exporter got them",
       log[-3000:])
    missing = sorted(set(want) - set(m))
    ok(not missing, "every metric of metrics.toml's default groups arrived (%d)" % len(want), missing)
    extra = sorted(n for n in m if n not in want)
    ok(not extra, "and no other (no legacy name: those are postgres_exporter's and PMM's)", extra)
    bad = ["%s: %s, not %s" % (n, kind_of(m[n]), k) for n, (k, _, _) in sorted(want.items())
           if n in m and kind_of(m[n]) != k]
    ok(m and not bad, "types: a gauge is a gauge, a counter a monotonic cumulative sum", bad)
    bad = ["%s: %r, not %r" % (n, m[n].get("unit", ""), u) for n, (_, u, _) in sorted(want.items())
           if n in m and m[n].get("unit", "") != u]
    ok(m and not bad, "units: By for _bytes, s for _seconds, none else", bad)
    bad = ["%s: %s, not %s" % (n, sorted(a), sorted(labels)) for n, (_, _, labels) in sorted(want.items())
           if n in m for a, _ in points(m[n]) if sorted(a) != sorted(labels)]
    ok(m and not bad and all(points(m[n]) for n in want if n in m),
       "attributes: each data point has its group's label columns, no other", bad[:20])
    res = {"service.instance.id": INSTANCE, "service.name": "postgresql", "db.system": "postgresql"}
    bad = [r for r in resources if any(r.get(k) != v for k, v in res.items())]
    ok(resources and not bad, "resource: service.instance.id is PG_PROCMEM_INSTANCE, service.name and db.system "
       "postgresql", bad[:3])
    ok(not complaints(log), "no error in the collector's log, no warning from its sqlquery receivers",
       complaints(log)[:20])

    # values against direct reads where they hold still
    sys_row = rows("SELECT mem_total, commit_limit FROM pg_procmem_system")[0]
    ok(one(m, "pg_procmem_system_mem_total_bytes") == float(sys_row["mem_total"]) == meminfo("MemTotal"),
       "system: mem_total_bytes is pg_procmem_system's mem_total (MemTotal)",
       (one(m, "pg_procmem_system_mem_total_bytes"), sys_row["mem_total"]))
    hp = rows("SELECT huge_pages, hugepages_total FROM pg_procmem_hugepages")[0]
    ok(one(m, "pg_procmem_hugepages_hugepages_configured", huge_pages=hp["huge_pages"]) == float(hp["hugepages_total"]),
       "hugepages: hugepages_configured is pg_procmem_hugepages' hugepages_total, with the huge_pages attribute",
       points(m.get("pg_procmem_hugepages_hugepages_configured", {})))
    types = {a["backend_type"]: v for a, v in points(m.get("pg_procmem_backend_type_processes", {}))}
    ok({"postmaster", "checkpointer"} <= set(types) and types["postmaster"] == 1.0,
       "backend_type: one postmaster, and a checkpointer", types)
    top = sorted(points(m.get("pg_procmem_top_process_overhead_bytes", {})), key=lambda p: int(p[0]["rank"]))
    ok([int(a["rank"]) for a, _ in top] == [1, 2, 3, 4, 5] and all(a[1] >= b[1] for a, b in zip(top, top[1:])),
       "top_process: ranks 1 to 5, overhead not increasing", top)
    findings = {a["check_name"] for a, v in points(m.get("pg_procmem_advice_findings", {})) if v == 1}
    ok("overcommit" in findings, "advice: the overcommit finding is always there", findings)
    ok(one(m, "pg_procmem_guard_actions_total") == float(value(
        "SELECT COALESCE(max(action_number), 0) FROM pg_procmem_guard_actions")) and
       one(m, "pg_procmem_history_crash_restarts_total") == float(value(
           "SELECT COALESCE(max(number), 0) FROM pg_procmem_crashes")),
       "the counters: guard actions and crash restarts, as pg_procmem_guard_actions and pg_procmem_crashes have them",
       (one(m, "pg_procmem_guard_actions_total"), one(m, "pg_procmem_history_crash_restarts_total")))
    # a NULL is NaN, as in postgres_exporter: the figures the server has NULL (no
    # cgroup limit: "max") arrive as NaN, the others as numbers
    cols = {"cgroup_usage_bytes": "cgroup_usage", "cgroup_limit_bytes": "cgroup_effective_limit",
            "cgroup_room_bytes": "cgroup_room", "swap_used_bytes": "swap_used"}
    null = rows("SELECT %s FROM pg_procmem_system" % ", ".join(
        "%s IS NULL AS %s" % (v, k) for k, v in cols.items()))[0]
    got = {k: one(m, "pg_procmem_system_" + k) for k in cols}
    ok(all(v is not None and math.isnan(v) == (null[k] == "t") for k, v in got.items()),
       "system: the cgroup's figures and swap arrive, a NULL one as NaN", (got, null))

    with section(PROMETHEUS_TESTS, "prometheus"):
        if not has_prometheus:
            skip_rest("the collector was built without the prometheus exporter")
        ok(prom is not None, "the prometheus exporter served /metrics", log[-2000:])
        types, samples = prom or ({}, {})
        names = {n: t for n, t in types.items() if n.startswith("pg_procmem_")}
        pe = R.exporter_file_series()
        ok(set(names) == set(pe), "its pg_procmem_* names are the postgres_exporter file's names (%d)" % len(pe),
           ["only the collector's: %s" % sorted(set(names) - set(pe)),
            "only postgres_exporter's: %s" % sorted(set(pe) - set(names))])
        bad = ["%s: %s, not %s" % (n, names[n], t) for n, t in sorted(pe.items()) if n in names and names[n] != t]
        ok(not bad and names, "and their TYPE (gauge, counter) is the postgres_exporter file's", bad)
        labels = {(l.get("instance"), l.get("job")) for n in names for l, _ in samples.get(n, [])}
        ok(labels == {(INSTANCE, "postgresql")} and
           one_prom(samples, "pg_procmem_system_mem_total_bytes") == meminfo("MemTotal"),
           "every series has instance PG_PROCMEM_INSTANCE (job postgresql); mem_total_bytes is MemTotal",
           (labels, one_prom(samples, "pg_procmem_system_mem_total_bytes")))

    # the opt-in file beside it: one series per process, a pid attribute
    per = expected(opt_in=True)
    c = Collector(binary, [os.path.join(OTEL, "pg_procmem.yaml"), os.path.join(OTEL, "pg_procmem_per_process.yaml")],
                  ["metrics/pg_procmem", "metrics/pg_procmem_per_process"])
    try:
        for _ in range(60):
            m, _ = read_file_export(c.out)
            if set(per) <= set(m) or not c.running():
                break
            time.sleep(0.5)
    finally:
        log = c.stop()
    bad = sorted(n for n in per if n not in m or not points(m[n]) or
                 any(sorted(a) != sorted(per[n][2]) for a, _ in points(m[n])))
    ok(not bad, "with pg_procmem_per_process.yaml: every pg_procmem_process_* metric (%d) arrives, "
       "with pid and its other attributes" % len(per), bad or log[-2000:])
    postmaster = value("SELECT pid FROM pg_procmem_backends WHERE backend_type = 'postmaster'")
    v = one(m, "pg_procmem_process_overhead_bytes", pid=postmaster, backend_type="postmaster")
    ok(v is not None and v > 0 and not complaints(log),
       "the postmaster's own series, by pid, and no complaint in the log", (v, complaints(log)[:20]))


def one_prom(samples, name):
    found = [v for _, v in samples.get(name, [])]
    return found[0] if len(found) == 1 else None


if __name__ == "__main__":
    main()
