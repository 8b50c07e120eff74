"""Every monitoring tool's file under monitoring/, against the tool's own
rules and the server (TAP): each query run as a LOGIN role only IN ROLE
pg_monitor with search_path=pg_catalog returns exactly the columns the file
declares (labels text, values numeric or NULL), and each file keeps its
tool's documented format. monitoring/metrics.toml is the reference for the
groups, their columns' kinds and tiers.

    python3 test/monitoring/tools.py

A tool whose file is missing or unreadable fails each of its tests (the
count stays fixed)."""
import glob
import json
import os
import re
import sys

import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "py"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tap import ok, done, execute, drop_role
import toolrules as R

ROLE = "procmem_tools"
PLANNED = 38
SLOW_SECONDS = 300


def load_yaml(*path):
    with open(os.path.join(R.MON, *path)) as f:
        return yaml.safe_load(f)


def tool(name, loader, checks):
    """Runs one tool's checks (each: (description, function(loaded) ->
    list of problems)); if its files cannot be loaded, every check fails."""
    try:
        loaded, err = loader(), None
    except Exception as e:  # a missing or malformed file
        loaded, err = None, "%s: %s" % (type(e).__name__, e)
    for desc, fn in checks:
        if err:
            ok(False, "%s: %s" % (name, desc), "could not load the files: " + err)
            continue
        try:
            problems = fn(loaded)
        except Exception as e:
            problems = ["%s: %s" % (type(e).__name__, e)]
        ok(not problems, "%s: %s" % (name, desc), "\n".join(problems[:30]))


def kinds_problems(tool_groups, defn, default_only, legacy=False):
    """A tool's {group: {column: kind}} against metrics.toml: the same
    groups (the default ones, or all), the same columns and kinds (legacy
    names only where legacy)."""
    p = []
    want = R.default_groups(defn) if default_only else set(defn)
    got = set(tool_groups)
    if got != want:
        p.append("groups %s, metrics.toml's %s" % (sorted(got), sorted(want)))
    for g in sorted(got & set(defn)):
        if tool_groups[g] is not None and tool_groups[g] != R.columns(defn[g], legacy):
            p.append("%s: columns %s, metrics.toml has %s" % (g, tool_groups[g], R.columns(defn[g], legacy)))
    return p


# --- postgres_exporter (and the files made of its format) ---------------------

EXPORTER_QUERY_KEYS = {"query", "master", "cache_seconds", "metrics", "runonserver"}
CNPG_QUERY_KEYS = {"query", "predicate_query", "metrics", "master", "primary", "cache_seconds",
                   "runonserver", "target_databases", "name"}
EXPORTER_COLUMN_KEYS = {"usage", "description", "metric_mapping", "pg_version"}
CNPG_COLUMN_KEYS = EXPORTER_COLUMN_KEYS | {"name"}
USAGES = {"DISCARD", "LABEL", "COUNTER", "GAUGE", "MAPPEDMETRIC", "DURATION", "HISTOGRAM"}
USAGE_KIND = R.USAGE_KIND


def exporter_columns(group):
    return [(c, m) for item in group.get("metrics") or [] for c, m in item.items()]


def exporter_format_problems(doc, query_keys=EXPORTER_QUERY_KEYS, column_keys=EXPORTER_COLUMN_KEYS):
    p = []
    if not isinstance(doc, dict) or not doc:
        return ["not a mapping of query groups"]
    for g, q in doc.items():
        if not isinstance(q, dict):
            p.append("%s: not a mapping" % g)
            continue
        if set(q) - query_keys:
            p.append("%s: unknown keys %s" % (g, sorted(set(q) - query_keys)))
        if not isinstance(q.get("query"), str) or not q["query"].strip():
            p.append("%s: no query" % g)
        if not R.PROM_NAME.match(g):
            p.append("%s: not a metric name prefix" % g)
        for item in q.get("metrics") or []:
            if not isinstance(item, dict) or len(item) != 1:
                p.append("%s: a metrics entry is not a one-key mapping: %r" % (g, item))
                continue
            for c, m in item.items():
                if not isinstance(m, dict) or set(m) - column_keys:
                    p.append("%s.%s: keys %s" % (g, c, sorted(m) if isinstance(m, dict) else m))
                    continue
                if m.get("usage") not in USAGES:
                    p.append("%s.%s: usage %r" % (g, c, m.get("usage")))
                if not str(m.get("description") or "").strip():
                    p.append("%s.%s: no description" % (g, c))
        if not q.get("metrics"):
            p.append("%s: no metrics" % g)
    return p


def exporter_run_problems(doc, runner):
    p = []
    for g, q in doc.items():
        cols = exporter_columns(q)
        labels = [c for c, m in cols if m.get("usage") == "LABEL"]
        values = [c for c, m in cols if m.get("usage") in ("GAUGE", "COUNTER")]
        p += ["%s: %s" % (g, x) for x in R.check_columns(runner.run(q["query"]), labels, values)]
    return p


def exporter_kinds(doc):
    return {R.short(g): {c: USAGE_KIND.get(m.get("usage"), m.get("usage")) for c, m in exporter_columns(q)}
            for g, q in doc.items()}


RELEASED = os.path.join(R.REPO, "test", "fixtures", "released-v1.2.0", "postgres_exporter")


def released_series():
    """{series: kind} of the postgres_exporter files of the last release
    (v1.2.0's, which hold 1.1.0's): names dashboards and alerts use. A copy
    is kept in test/fixtures, because a clone need not carry the tag."""
    out = {}
    for f in ("pg_procmem.yaml", "pg_procmem_per_process.yaml"):
        with open(os.path.join(RELEASED, f)) as fh:
            text = fh.read()
        for g, q in yaml.safe_load(text).items():
            for c, m in exporter_columns(q):
                if m["usage"] != "LABEL":
                    out["%s_%s" % (g, c)] = USAGE_KIND[m["usage"]]
    return out


def exporter_series(doc):
    return {"%s_%s" % (g, c): USAGE_KIND.get(m.get("usage"))
            for g, q in doc.items() for c, m in exporter_columns(q) if m.get("usage") != "LABEL"}


def check_exporter(defn, runner):
    def load():
        return {f: load_yaml("postgres_exporter", f) for f in ("pg_procmem.yaml", "pg_procmem_per_process.yaml")}

    def both(d):
        return dict(d["pg_procmem.yaml"], **d["pg_procmem_per_process.yaml"])

    def tiers(d):
        p = []
        for g, q in both(d).items():
            slow = defn.get(R.short(g), {}).get("tier") == "slow"
            if slow and q.get("cache_seconds") != SLOW_SECONDS:
                p.append("%s is slow: cache_seconds %r, not %d" % (g, q.get("cache_seconds"), SLOW_SECONDS))
            if not slow and "cache_seconds" in q:
                p.append("%s is a scrape group with cache_seconds %r" % (g, q["cache_seconds"]))
            if q.get("master") is not True:
                p.append("%s: not master: true (it would run in every database)" % g)
        return p

    def names(d):
        have = exporter_series(both(d))
        p = []
        for s, k in released_series().items():
            if s not in have:
                p.append("released series %s is gone" % s)
            elif have[s] != k:
                p.append("released series %s was a %s, is a %s" % (s, k, have[s]))
        old = released_series()
        for s, k in have.items():
            if s not in old:
                p += R.naming_problems(s, k)
        return p

    tool("postgres_exporter", load, [
        ("both files keep the exporter's format (query keys, usage, description)",
         lambda d: exporter_format_problems(d["pg_procmem.yaml"]) +
         exporter_format_problems(d["pg_procmem_per_process.yaml"])),
        ("pg_procmem.yaml holds metrics.toml's default groups, the per-process file the rest, kinds as declared",
         lambda d: kinds_problems(exporter_kinds(d["pg_procmem.yaml"]), defn, True, True) +
         kinds_problems(exporter_kinds(both(d)), defn, False, True) +
         (["%s in both files" % g for g in set(d["pg_procmem.yaml"]) & set(d["pg_procmem_per_process.yaml"])])),
        ("as a pg_monitor role: every query returns exactly its declared columns, labels text, values numeric",
         lambda d: exporter_run_problems(both(d), runner)),
        ("slow groups cache_seconds: %d, scrape groups none; master: true" % SLOW_SECONDS, tiers),
        ("the series of v1.2.0 stay (name and type); new ones follow Prometheus naming", names),
    ])


# --- CloudNativePG -------------------------------------------------------------

CNPG_KEYS = {"queries", "queries-slow", "queries-per-process"}


def check_cnpg(defn, runner):
    def load():
        with open(os.path.join(R.MON, "cloudnative-pg", "pg-procmem-monitoring.yaml")) as f:
            return [d for d in yaml.safe_load_all(f) if d is not None]

    def shape(docs):
        if len(docs) != 1:
            return ["%d YAML documents, not one ConfigMap" % len(docs)]
        d, p = docs[0], []
        if d.get("apiVersion") != "v1" or d.get("kind") != "ConfigMap":
            p.append("apiVersion %r kind %r: not a v1 ConfigMap" % (d.get("apiVersion"), d.get("kind")))
        if (d.get("metadata") or {}).get("name") != "pg-procmem-monitoring":
            p.append("metadata.name %r" % (d.get("metadata") or {}).get("name"))
        data = d.get("data") or {}
        if "queries" not in data or set(data) - CNPG_KEYS or not all(isinstance(v, str) for v in data.values()):
            p.append("data keys %s: want the strings queries (and %s)" % (sorted(data), sorted(CNPG_KEYS - {"queries"})))
        return p

    def parts(docs):
        return {k: yaml.safe_load(v) or {} for k, v in docs[0]["data"].items()}

    def queries(docs):
        return {g: q for part in parts(docs).values() for g, q in part.items()}

    def groups(docs):
        p = kinds_problems(exporter_kinds(queries(docs)), defn, False)
        for k, part in parts(docs).items():
            for g in part:
                d = defn.get(R.short(g), {})
                want = "queries-per-process" if d.get("opt_in") else \
                    "queries-slow" if d.get("tier") == "slow" else "queries"
                if k != want:
                    p.append("%s (%s%s) is under %s" % (g, d.get("tier"), ", opt-in" * bool(d.get("opt_in")), k))
        return p

    def reload(docs):
        labels = (docs[0].get("metadata") or {}).get("labels") or {}
        return [] if "cnpg.io/reload" in labels else [
            "no cnpg.io/reload label: running clusters would not see an edited ConfigMap (labels %s)" % labels]

    tool("CloudNativePG", load, [
        ("a v1 ConfigMap named pg-procmem-monitoring, keys queries (and queries-slow, queries-per-process)", shape),
        ("its queries use only keys and usages CloudNativePG's custom queries know",
         lambda d: [x for part in parts(d).values()
                    for x in exporter_format_problems(part, CNPG_QUERY_KEYS, CNPG_COLUMN_KEYS)]),
        ("metrics.toml's groups, kinds as declared, no legacy names; slow ones under queries-slow, "
         "opt-in ones under queries-per-process, the rest under queries", groups),
        ("as a pg_monitor role: every query returns exactly its declared columns",
         lambda d: exporter_run_problems(queries(d), runner)),
        ("labelled cnpg.io/reload, so that instances reload it", reload),
    ])


# --- Percona PMM ---------------------------------------------------------------

PMM_DIRS = ("high-resolution", "medium-resolution", "low-resolution")


def check_pmm(defn, runner):
    def load():
        found = {r: load_yaml("pmm", r, "pg_procmem.yml") for r in PMM_DIRS
                 if os.path.exists(os.path.join(R.MON, "pmm", r, "pg_procmem.yml"))}
        strays = set(os.listdir(os.path.join(R.MON, "pmm"))) - set(PMM_DIRS)
        if strays or not found:
            raise ValueError("monitoring/pmm holds %s: want pg_procmem.yml in some of %s" % (
                sorted(os.listdir(os.path.join(R.MON, "pmm"))), PMM_DIRS))
        return found

    def split(d):
        p, seen = [], {}
        for r, doc in d.items():
            for g in doc or {}:
                seen.setdefault(g, []).append(r)
        p += ["%s in %s" % (g, rs) for g, rs in seen.items() if len(rs) > 1]
        exp = load_yaml("postgres_exporter", "pg_procmem.yaml")
        if set(seen) != set(exp):
            p.append("groups %s, pg_procmem.yaml's %s" % (sorted(seen), sorted(exp)))
        for r, doc in d.items():
            for g, q in (doc or {}).items():
                e = exp.get(g) or {}
                if (q.get("query"), q.get("metrics")) != (e.get("query"), e.get("metrics")):
                    p.append("%s/%s: query or metrics differ from pg_procmem.yaml's" % (r, g))
        return p

    def tiers(d):
        p = []
        for r, doc in d.items():
            for g in doc or {}:
                slow = defn.get(R.short(g), {}).get("tier") == "slow"
                if slow != (r == "low-resolution"):
                    p.append("%s (%s) is in %s" % (g, defn.get(R.short(g), {}).get("tier"), r))
        return p

    tool("PMM", load, [
        ("pg_procmem.yml only in PMM's folders (%s), each in postgres_exporter's format" % ", ".join(PMM_DIRS),
         lambda d: [x for r in d for x in exporter_format_problems(d[r])]),
        ("each group of pg_procmem.yaml in exactly one resolution, unchanged", split),
        ("slow groups in low-resolution, scrape groups in high or medium", tiers),
        ("as a pg_monitor role: every query returns exactly its declared columns",
         lambda d: [x for r in d for x in exporter_run_problems(d[r] or {}, runner)]),
    ])


# --- Datadog -------------------------------------------------------------------

DD_TYPES = {"gauge": "gauge", "monotonic_count": "counter", "tag": "label"}
DD_QUERY_KEYS = {"metric_prefix", "query", "columns", "tags", "collection_interval", "name"}
DD_METRIC = re.compile(r"^[A-Za-z][A-Za-z0-9_.]*$")


def dd_group(q, defn):
    """The metrics.toml group of a Datadog custom query: the one with the
    same SQL, else the one named by its metric_prefix or columns."""
    norm = lambda s: " ".join((s or "").split()).rstrip(";")
    for g, d in defn.items():
        if norm(d["query"]) == norm(q.get("query")):
            return g
    for g in defn:
        if R.short(q.get("metric_prefix", "")) == g or any(
                str(c.get("name", "")).startswith(g + ".") for c in q.get("columns") or []):
            return g
    return None


def check_datadog(defn, runner):
    def load():
        return load_yaml("datadog", "conf.yaml"), load_yaml("datadog", "custom_queries_per_process.yaml")

    def cqs(d):
        """The default custom queries, then the per-process file's."""
        return d[0]["instances"][0]["custom_queries"] + d[1]["custom_queries"]

    def shape(both):
        d, p = both[0], []
        if set(both[1]) != {"custom_queries"} or not isinstance(both[1]["custom_queries"], list):
            p.append("custom_queries_per_process.yaml: keys %s, want a list custom_queries" % sorted(both[1]))
        if not isinstance(d.get("init_config", {}), (dict, type(None))) or "init_config" not in d:
            p.append("no init_config mapping")
        inst = d.get("instances")
        if not isinstance(inst, list) or len(inst) != 1:
            return p + ["instances: want a list of one"]
        missing = {"host", "port", "username", "dbname", "custom_queries"} - set(inst[0])
        if missing:
            p.append("the instance lacks %s" % sorted(missing))
        return p

    def fields(d):
        p, names = [], set()
        for i, q in enumerate(cqs(d)):
            where = "custom query #%d (%s)" % (i + 1, q.get("metric_prefix"))
            if set(q) - DD_QUERY_KEYS:
                p.append("%s: unknown keys %s" % (where, sorted(set(q) - DD_QUERY_KEYS)))
            if not isinstance(q.get("metric_prefix"), str) or not q["metric_prefix"]:
                p.append("%s: no metric_prefix" % where)
            if not isinstance(q.get("query"), str):
                p.append("%s: no query" % where)
            for t in q.get("tags") or []:
                if not re.match(r"^[A-Za-z][^:]*:.+$", str(t)):
                    p.append("%s: tag %r is not key:value" % (where, t))
            for c in q.get("columns") or [{}]:
                if c.get("type") not in DD_TYPES:
                    p.append("%s: column %r type %r" % (where, c.get("name"), c.get("type")))
                    continue
                if c["type"] != "tag":
                    m = "%s.%s" % (str(q.get("metric_prefix", "")).rstrip("."), c.get("name"))
                    if not DD_METRIC.match(m) or len(m) > 200:
                        p.append("%s: metric name %r" % (where, m))
                    if m in names:
                        p.append("%s: metric %s twice" % (where, m))
                    names.add(m)
                elif not re.match(r"^[a-z][a-z0-9_./-]*$", str(c.get("name"))):
                    p.append("%s: tag name %r" % (where, c.get("name")))
        return p

    def coverage(d):
        return kinds_of(d[0]["instances"][0]["custom_queries"], True) + kinds_of(cqs(d), False)

    def kinds_of(queries, default_only):
        got = {}
        for q in queries:
            g = dd_group(q, defn)
            if g is None:
                got["(unmatched %s)" % q.get("metric_prefix")] = None
                continue
            kinds = [DD_TYPES.get(c.get("type")) for c in q.get("columns") or []]
            want = [defn[g]["columns"][c] for c in defn[g]["order"] if c not in defn[g]["legacy"]]
            got[g] = None
            if kinds != want:
                got[g] = dict(zip([c for c in defn[g]["order"] if c not in defn[g]["legacy"]], kinds))
        return kinds_problems(got, defn, default_only)

    def run(d):
        p = []
        for q in cqs(d):
            r = runner.run(q["query"])
            cols = q.get("columns") or []
            where = q.get("metric_prefix")
            if r["error"]:
                p.append("%s: %s" % (where, r["error"]))
                continue
            if len(r["columns"]) != len(cols):
                p.append("%s: %d columns, %d declared" % (where, len(r["columns"]), len(cols)))
                continue
            for (name, typ), c in zip(r["columns"], cols):
                if (c.get("type") == "tag") != (typ in R.LABEL_TYPES) or (
                        c.get("type") != "tag" and typ not in R.VALUE_TYPES):
                    p.append("%s: column %s (%s) declared %s" % (where, name, typ, c.get("type")))
        return p

    def intervals(d):
        p = []
        for q in cqs(d):
            g = dd_group(q, defn)
            slow = g is not None and defn[g]["tier"] == "slow"
            ci = q.get("collection_interval")
            if slow and not (isinstance(ci, int) and ci >= SLOW_SECONDS):
                p.append("%s is slow: collection_interval %r" % (g, ci))
            if not slow and ci is not None:
                p.append("%s is a scrape group with collection_interval %r" % (g, ci))
        return p

    tool("Datadog", load, [
        ("conf.yaml: init_config, one instance with host, port, username, dbname, custom_queries", shape),
        ("custom queries: known keys, metric_prefix, column types gauge/monotonic_count/tag, "
         "valid metric names, key:value tags", fields),
        ("conf.yaml: one custom query per default group of metrics.toml, the per-process file the rest; "
         "column kinds in its order, no legacy names", coverage),
        ("as a pg_monitor role: each query returns one column per declared column, tags text, values numeric",
         run),
        ("slow groups have collection_interval >= %d, scrape groups none" % SLOW_SECONDS, intervals),
    ])


# --- pgwatch v3 ----------------------------------------------------------------

PGWATCH_KEYS = {"sqls", "init_sql", "node_status", "gauges", "is_instance_level", "storage_name",
                "description", "metric_attrs"}


def check_pgwatch(defn, runner):
    def load():
        return load_yaml("pgwatch", "pg_procmem.yaml")

    def fmt(d):
        p = []
        if set(d) - {"metrics", "presets"} or not isinstance(d.get("metrics"), dict):
            return ["top-level keys %s: want metrics and presets" % sorted(d)]
        for n, m in d["metrics"].items():
            if not re.match(r"^[a-z][a-z0-9_]{0,62}$", n):
                p.append("%s: not a lower-case name of at most 63 characters (a table of the sink)" % n)
            if set(m) - PGWATCH_KEYS:
                p.append("%s: unknown keys %s" % (n, sorted(set(m) - PGWATCH_KEYS)))
            sqls = m.get("sqls") or {}
            if not sqls or not all(isinstance(v, int) for v in sqls):
                p.append("%s: sqls keys %s are not PostgreSQL major versions" % (n, list(sqls)))
            elif min(sqls) > 14:
                p.append("%s: no SQL for PostgreSQL 14 (lowest key %d)" % (n, min(sqls)))
            if m.get("is_instance_level") is not True:
                p.append("%s: not is_instance_level (the figures are the instance's)" % n)
            if not str(m.get("description") or "").strip():
                p.append("%s: no description" % n)
            if m.get("node_status") not in (None, "primary", "standby"):
                p.append("%s: node_status %r" % (n, m["node_status"]))
        return p

    def run(d):
        p = []
        for n, m in d["metrics"].items():
            for v, sql in (m.get("sqls") or {}).items():
                r = runner.run(sql)
                cols = [c for c, _ in r["columns"]]
                labels = [c for c in cols if c.startswith("tag_")]
                values = [c for c in cols if not c.startswith("tag_") and c != "epoch_ns"]
                p += ["%s (%s): %s" % (n, v, x) for x in R.check_columns(r, labels, values, ["epoch_ns"])]
                if not r["error"]:
                    if dict(r["columns"]).get("epoch_ns") != "bigint":
                        p.append("%s: epoch_ns is %s, not bigint" % (n, dict(r["columns"]).get("epoch_ns")))
                    import time
                    now = time.time() * 1e9
                    far = [x["epoch_ns"] for x in r["rows"] if not R.is_number(x.get("epoch_ns")) or
                           abs(float(x["epoch_ns"]) - now) > 60e9]
                    if far:
                        p.append("%s: epoch_ns %s is not now in nanoseconds" % (n, far[:2]))
        return p

    def gauges(d):
        got = {}
        for n, m in d["metrics"].items():
            sql = (m.get("sqls") or {}).get(min(m.get("sqls") or {0: ""}))
            cols = [c for c, _ in runner.run(sql or "SELECT")["columns"]]
            g = m.get("gauges") or []
            kinds = {}
            for c in cols:
                if c == "epoch_ns":
                    continue
                if c.startswith("tag_"):
                    kinds[c[4:]] = "label"
                else:
                    kinds[c] = "gauge" if (c in g or g == ["*"]) else "counter"
            got[R.short(n)] = kinds if cols else None  # a failed query: the run test says so
            stray = [c for c in g if c != "*" and c not in cols] if cols else []
            if stray or ("*" in g and len(g) > 1):
                got[R.short(n) + " (gauges %s)" % g] = None
        return kinds_problems(got, defn, False)

    def presets(d):
        p, used = [], set()
        for name, pr in (d.get("presets") or {}).items():
            if not str((pr or {}).get("description") or "").strip():
                p.append("preset %s: no description" % name)
            for n, iv in ((pr or {}).get("metrics") or {}).items():
                used.add(n)
                if n not in d["metrics"]:
                    p.append("preset %s: no metric %s" % (name, n))
                elif not isinstance(iv, int) or iv <= 0:
                    p.append("preset %s: %s interval %r" % (name, n, iv))
                elif defn.get(R.short(n), {}).get("tier") == "slow" and iv < SLOW_SECONDS:
                    p.append("preset %s: slow %s every %d s" % (name, n, iv))
        if not d.get("presets"):
            p.append("no presets")
        p += ["metric %s is in no preset" % n for n in set(d["metrics"]) - used
              if not defn.get(R.short(n), {}).get("opt_in")]
        return p

    tool("pgwatch", load, [
        ("metric definitions: pgwatch v3 keys, sqls for PostgreSQL 14 and later, instance level, described", fmt),
        ("as a pg_monitor role: each SQL returns epoch_ns (now, ns), tag_ columns text, the rest numeric", run),
        ("metrics.toml's groups, gauges the gauge columns (counters not), no legacy names", gauges),
        ("presets name existing metrics with positive intervals, slow ones >= %d s, every default metric in one"
         % SLOW_SECONDS, presets),
    ])


# --- pgMonitor's sql_exporter --------------------------------------------------

SQLX_COLLECTOR_KEYS = {"collector_name", "min_interval", "metrics", "queries"}
SQLX_METRIC_KEYS = {"metric_name", "type", "help", "key_labels", "static_labels", "value_label", "values",
                    "query", "query_ref", "no_prepared_statement", "static_value", "timestamp_value"}
SQLX_QUERY_KEYS = {"query_name", "query", "no_prepared_statement"}


def check_sql_exporter(defn, runner):
    def load():
        files = sorted(glob.glob(os.path.join(R.MON, "pgmonitor", "*.collector.yml")))
        if "pg_procmem.collector.yml" not in map(os.path.basename, files):
            raise FileNotFoundError("no monitoring/pgmonitor/pg_procmem.collector.yml")
        return {os.path.basename(f): load_yaml("pgmonitor", os.path.basename(f)) for f in files}

    def each(fn):
        return lambda docs: [f + ": " + x for f, d in docs.items() for x in fn(d)]

    def unique(docs):
        p = []
        cn = [d.get("collector_name") for d in docs.values()]
        mn = [m.get("metric_name") for d in docs.values() for m in d.get("metrics") or []]
        p += ["collector_name %s twice" % c for c in set(cn) if cn.count(c) > 1]
        p += ["metric %s in two collectors" % m for m in set(mn) if mn.count(m) > 1]
        return p

    def fmt(d):
        p = []
        if set(d) - SQLX_COLLECTOR_KEYS:
            p.append("unknown collector keys %s" % sorted(set(d) - SQLX_COLLECTOR_KEYS))
        if not re.match(r"^[A-Za-z0-9_-]+$", str(d.get("collector_name") or "")):
            p.append("collector_name %r" % d.get("collector_name"))
        qnames = [q.get("query_name") for q in d.get("queries") or []]
        p += ["query %s defined twice" % q for q in set(qnames) if qnames.count(q) > 1]
        for q in d.get("queries") or []:
            if set(q) - SQLX_QUERY_KEYS or not q.get("query_name") or not q.get("query"):
                p.append("query %r: keys %s" % (q.get("query_name"), sorted(q)))
        names = [m.get("metric_name") for m in d.get("metrics") or []]
        p += ["metric %s defined twice" % n for n in set(names) if names.count(n) > 1]
        for m in d.get("metrics") or []:
            n = m.get("metric_name")
            if set(m) - SQLX_METRIC_KEYS:
                p.append("%s: unknown keys %s" % (n, sorted(set(m) - SQLX_METRIC_KEYS)))
            if not R.PROM_NAME.match(str(n)):
                p.append("%r: not a metric name" % n)
            if str(m.get("type", "")).lower() not in ("gauge", "counter"):
                p.append("%s: type %r" % (n, m.get("type")))
            if not str(m.get("help") or "").strip():
                p.append("%s: no help" % n)
            if ("query" in m) == ("query_ref" in m):
                p.append("%s: not exactly one of query and query_ref" % n)
            if "query_ref" in m and m["query_ref"] not in qnames:
                p.append("%s: query_ref %r is no query" % (n, m["query_ref"]))
            vals, keys = m.get("values") or [], m.get("key_labels") or []
            if not vals and m.get("static_value") is None:
                p.append("%s: no values" % n)
            if len(vals) > 1 and not m.get("value_label"):
                p.append("%s: several values without value_label" % n)
            if len(set(keys)) != len(keys) or m.get("value_label") in keys:
                p.append("%s: duplicate labels %s / %s" % (n, keys, m.get("value_label")))
            p += ["%s: label %r" % (n, k) for k in keys if not R.PROM_LABEL.match(str(k))]
        return p

    def run(d):
        p = []
        queries = {q["query_name"]: q["query"] for q in d.get("queries") or []}
        used = {}
        for m in d.get("metrics") or []:
            sql = queries.get(m.get("query_ref")) or m.get("query")
            u = used.setdefault(sql, [set(), set()])
            u[0] |= set(m.get("key_labels") or [])
            u[1] |= set(m.get("values") or [])
        for sql, (labels, values) in used.items():
            name = next((k for k, v in queries.items() if v == sql), "(literal)")
            # every column must be read by a metric: sql_exporter rejects extra columns
            p += ["%s: %s" % (name, x) for x in R.check_columns(runner.run(sql), labels, values)]
        return p

    def kinds(docs):
        got, tiers = {}, []
        by_sql = {" ".join(v["query"].split()): g for g, v in defn.items()}
        for f, d in docs.items():
            queries = {q["query_name"]: q["query"] for q in d.get("queries") or []}
            slow_collector = R.interval_seconds(d.get("min_interval", 0)) >= SLOW_SECONDS
            for m in d.get("metrics") or []:
                sql = " ".join((queries.get(m.get("query_ref")) or m.get("query") or "").split())
                g = by_sql.get(sql) or R.short(str(m.get("query_ref")))
                if g in defn and (defn[g]["tier"] == "slow") != slow_collector:
                    tiers.append("%s: %s (%s) in a collector with min_interval %r" % (
                        f, m.get("metric_name"), defn[g]["tier"], d.get("min_interval")))
                if g in defn and defn[g]["opt_in"] and f == "pg_procmem.collector.yml":
                    tiers.append("%s: opt-in %s in the default collector" % (f, g))
                k = got.setdefault(g, {})
                for c in m.get("key_labels") or []:
                    k[c] = "label"
                for c in m.get("values") or []:
                    k[c] = str(m.get("type")).lower()
        return kinds_problems(got, defn, False) + sorted(set(tiers))

    def naming(d):
        return [x for m in d.get("metrics") or [] for x in R.naming_problems(
            str(m.get("metric_name")), str(m.get("type")).lower())]

    tool("sql_exporter (pgMonitor)", load, [
        ("collectors: collector_name, metrics (name, gauge/counter, help, values, value_label, key_labels) "
         "and queries as sql_exporter's config demands, query_refs resolved, names unique", 
         lambda docs: each(fmt)(docs) + unique(docs)),
        ("as a pg_monitor role: each query returns exactly the key_labels and values its metrics read", each(run)),
        ("metrics.toml's groups, kinds as declared, no legacy names; slow ones (only) in a collector with "
         "min_interval >= %d s; opt-in ones out of pg_procmem.collector.yml" % SLOW_SECONDS, kinds),
        ("metric names follow Prometheus naming (base units, counters _total)", each(naming)),
    ])


# --- OpenTelemetry collector (sqlqueryreceiver) -------------------------------

OTEL_RECEIVER_KEYS = {"driver", "datasource", "collection_interval", "queries"}
OTEL_METRIC_KEYS = {"metric_name", "value_column", "attribute_columns", "data_type", "value_type", "monotonic",
                    "aggregation", "unit", "description", "static_attributes", "start_ts_column", "ts_column"}
OTEL_UNITS = {"_bytes": "By", "_seconds": "s"}
# the slow tier: every 4 minutes, under Prometheus's 5-minute lookback
OTEL_SLOW_SECONDS = 240


def check_otel(defn, runner):
    def load():
        return {f: load_yaml("otel", f) for f in ("pg_procmem.yaml", "pg_procmem_per_process.yaml")}

    def receivers(docs):
        return [(f, r, v) for f, d in docs.items() for r, v in (d.get("receivers") or {}).items()]

    def fmt(docs):
        p = []
        for f, r, v in receivers(docs):
            if not r.startswith("sqlquery/") or set(v) - OTEL_RECEIVER_KEYS or v.get("driver") != "postgres":
                p.append("%s: %s: keys %s, driver %r" % (f, r, sorted(v), v.get("driver")))
            if "${env:PG_PROCMEM_DATASOURCE}" != v.get("datasource"):
                p.append("%s: %s: datasource %r" % (f, r, v.get("datasource")))
            for qy in v.get("queries") or []:
                for m in qy.get("metrics") or []:
                    n = m.get("metric_name")
                    if set(m) - OTEL_METRIC_KEYS:
                        p.append("%s: %s: unknown keys %s" % (f, n, sorted(set(m) - OTEL_METRIC_KEYS)))
                    if m.get("data_type") not in ("gauge", "sum") or m.get("value_type") not in ("int", "double"):
                        p.append("%s: %s: data_type %r value_type %r" % (f, n, m.get("data_type"), m.get("value_type")))
                    if m.get("data_type") == "sum" and (m.get("monotonic") is not True
                                                       or m.get("aggregation") != "cumulative"):
                        p.append("%s: %s: a sum not monotonic and cumulative" % (f, n))
                    if not str(m.get("description") or "").strip():
                        p.append("%s: %s: no description" % (f, n))
        main = docs["pg_procmem.yaml"]
        pipes = (main.get("service") or {}).get("pipelines") or {}
        want = sorted(r for f, r, _ in receivers(docs) if f == "pg_procmem.yaml")
        if sorted((pipes.get("metrics/pg_procmem") or {}).get("receivers") or []) != want:
            p.append("the pipeline metrics/pg_procmem does not take %s" % want)
        for f, d in docs.items():
            for name, pipe in ((d.get("service") or {}).get("pipelines") or {}).items():
                if pipe.get("processors") != ["resource/pg_procmem"]:
                    p.append("%s: %s: processors %s" % (f, name, pipe.get("processors")))
        attrs = {a.get("key"): a.get("value") for a in
                 ((main.get("processors") or {}).get("resource/pg_procmem") or {}).get("attributes") or []}
        if attrs.get("service.instance.id") != "${env:PG_PROCMEM_INSTANCE}" or "service.name" not in attrs:
            p.append("resource/pg_procmem sets %s" % attrs)
        return p

    def run(docs):
        p = []
        for f, r, v in receivers(docs):
            for qy in v.get("queries") or []:
                ms = qy.get("metrics") or []
                labels = {a for m in ms for a in m.get("attribute_columns") or []}
                values = {m.get("value_column") for m in ms}
                res = runner.run(qy["sql"])
                p += ["%s: %s: %s" % (f, r, x) for x in R.check_columns(res, labels, values)]
                # the receiver logs an error at every collection for a NULL value
                p += ["%s: %s: %s is NULL" % (f, r, c) for row in res["rows"] for c in values if row.get(c) is None]
        return p

    def kinds(docs):
        got, tiers = {}, []
        for f, r, v in receivers(docs):
            slow = R.interval_seconds(v.get("collection_interval", "10s")) >= OTEL_SLOW_SECONDS
            for qy in v.get("queries") or []:
                for m in qy.get("metrics") or []:
                    name = str(m.get("metric_name"))
                    g = next((g for g in defn if name.startswith("pg_procmem_%s_" % g)
                              and name[len("pg_procmem_%s_" % g):] == m.get("value_column")), None)
                    if g is None:
                        tiers.append("%s: %s is no group's column" % (f, name))
                        continue
                    # 300 s apart, remote-written samples leave gaps in Prometheus's 5-minute lookback
                    late = R.interval_seconds(v.get("collection_interval", "10s")) >= SLOW_SECONDS
                    if (defn[g]["tier"] == "slow") != slow or late or defn[g]["opt_in"] != (f != "pg_procmem.yaml"):
                        tiers.append("%s: %s (%s%s) in %s" % (f, name, defn[g]["tier"],
                                                             ", opt-in" if defn[g]["opt_in"] else "", r))
                    k = got.setdefault(g, {})
                    for a in m.get("attribute_columns") or []:
                        k[a] = "label"
                    k[m["value_column"]] = "counter" if m.get("data_type") == "sum" else "gauge"
        return kinds_problems(got, defn, False) + sorted(set(tiers))

    def naming(docs):
        p = []
        for f, r, v in receivers(docs):
            for qy in v.get("queries") or []:
                for m in qy.get("metrics") or []:
                    n = str(m.get("metric_name"))
                    kind = "counter" if m.get("data_type") == "sum" else "gauge"
                    p += R.naming_problems(n, kind)
                    unit = next((u for sfx, u in OTEL_UNITS.items() if n.endswith(sfx)), None)
                    # a unit of "1" would have Prometheus add _ratio to the name
                    if m.get("unit") != unit:
                        p.append("%s: unit %r, its name says %r" % (n, m.get("unit"), unit))
        return p

    tool("OpenTelemetry (sqlqueryreceiver)", load, [
        ("receivers (driver postgres, PG_PROCMEM_DATASOURCE), metrics (gauge or cumulative monotonic sum, "
         "a description), the pipelines and the resource processor naming the server", fmt),
        ("as a pg_monitor role: each query returns exactly its attribute and value columns, no value NULL", run),
        ("metrics.toml's groups, kinds as declared, no legacy names; the slow tier (only) in a receiver "
         "collecting every %d s to %d s; opt-in groups in their own file" % (OTEL_SLOW_SECONDS, SLOW_SECONDS - 1), kinds),
        ("names as postgres_exporter's (Prometheus naming); units By and s where the name ends so, no other", naming),
    ])


# --- Zabbix agent 2 ------------------------------------------------------------

UUID = re.compile(r"^[0-9a-f]{32}$")
NUMERIC_VALUE_TYPES = {"FLOAT", "UNSIGNED"}


def walk_uuids(node, out):
    if isinstance(node, dict):
        if "uuid" in node:
            out.append(str(node["uuid"]))
        for v in node.values():
            walk_uuids(v, out)
    elif isinstance(node, list):
        for v in node:
            walk_uuids(v, out)


def check_zabbix(defn, runner):
    def load():
        sqls = {}
        for f in sorted(glob.glob(os.path.join(R.MON, "zabbix", "*.sql"))):
            with open(f) as fh:
                sqls[os.path.basename(f)[:-4]] = fh.read()
        if not sqls:
            raise FileNotFoundError("no monitoring/zabbix/*.sql")
        return sqls, load_yaml("zabbix", "pg_procmem_template.yaml")

    def sql_files(d):
        p = []
        for name, sql in d[0].items():
            if not re.match(r"^[A-Za-z0-9_]+$", name):
                p.append("%s.sql: the query name (file name) is not plain" % name)
            bare = re.sub(r"'(?:[^']|'')*'", "''", re.sub(r"--[^\n]*|/\*.*?\*/", "", sql, flags=re.S))
            if ";" in bare.strip().rstrip(";"):
                p.append("%s.sql: more than one statement" % name)
            if re.search(r"\$\d", bare):
                p.append("%s.sql: parameters ($n) the template does not pass" % name)
            if R.short(name) not in defn:
                p.append("%s.sql: no group %s in metrics.toml" % (name, R.short(name)))
        missing = R.default_groups(defn) - {R.short(n) for n in d[0]}
        if missing:
            p.append("no .sql for %s" % sorted(missing))
        return p

    def run(d):
        p = []
        for name, sql in d[0].items():
            g = defn.get(R.short(name))
            if not g:
                continue
            labels = [c for c, k in R.columns(g).items() if k == "label"]
            values = [c for c, k in R.columns(g).items() if k != "label"]
            p += ["%s.sql: %s" % (name, x) for x in R.check_columns(runner.run(sql), labels, values)]
        return p

    def template(d):
        t, p = d[1], []
        ex = t.get("zabbix_export") or {}
        if str(ex.get("version")) != "7.0":
            p.append("zabbix_export.version %r, not '7.0'" % ex.get("version"))
        if len(ex.get("templates") or []) != 1:
            return p + ["want one template"]
        tp = ex["templates"][0]
        for k in ("uuid", "template", "name", "groups"):
            if not tp.get(k):
                p.append("template: no %s" % k)
        groups = {g.get("name") for g in ex.get("template_groups") or []}
        p += ["template group %s not exported" % g["name"] for g in tp.get("groups") or [] if g.get("name") not in groups]
        uuids = []
        walk_uuids(ex, uuids)
        p += ["uuid %r is not 32 lower-case hex digits" % u for u in uuids if not UUID.match(u)]
        p += ["uuid %s used twice" % u for u in set(uuids) if uuids.count(u) > 1]
        return p

    def all_items(tp):
        items = list(tp.get("items") or [])
        for rule in tp.get("discovery_rules") or []:
            items += [dict(i, _rule=rule.get("key")) for i in rule.get("item_prototypes") or []]
        return items

    def masters(d):
        tp, p = d[1]["zabbix_export"]["templates"][0], []
        macros = {m.get("macro") for m in tp.get("macros") or []}
        used = set()
        keys = [i.get("key") for i in all_items(tp)] + [r.get("key") for r in tp.get("discovery_rules") or []]
        p += ["item key %s twice" % k for k in set(keys) if keys.count(k) > 1]
        for k in keys:
            try:
                R.zabbix_key(k)
            except ValueError as e:
                p.append(str(e))
            p += ["%s: macro %s not defined in the template" % (k, m) for m in re.findall(r"\{\$[^}]+\}", k)
                  if m not in macros]
        for i in tp.get("items") or []:
            name, params = R.zabbix_key(i["key"]) if R.ZBX_KEY.match(i["key"]) else (None, [])
            if name != "pgsql.custom.query":
                continue
            if len(params) < 5 or params[4] not in d[0]:
                p.append("%s: the fifth parameter is no query file" % i["key"])
                continue
            used.add(params[4])
            if i.get("value_type") != "TEXT":
                p.append("%s: value_type %r, not TEXT (it returns JSON)" % (i["key"], i.get("value_type")))
            if i.get("type", "ZABBIX_PASSIVE") not in ("ZABBIX_PASSIVE", "ZABBIX_ACTIVE"):
                p.append("%s: type %r is not a Zabbix agent item" % (i["key"], i.get("type")))
            slow = defn.get(R.short(params[4]), {}).get("tier") == "slow"
            delay = R.interval_seconds(i.get("delay", "1m"))
            if slow and delay < SLOW_SECONDS:
                p.append("%s: slow query every %d s" % (params[4], delay))
        p += ["%s.sql: no master item runs it" % n for n in set(d[0]) - used]
        return p

    def outputs(d):
        """Each master item's JSON, as the plugin would return it now."""
        tp, out = d[1]["zabbix_export"]["templates"][0], {}
        for i in tp.get("items") or []:
            name, params = R.zabbix_key(i["key"])
            if name == "pgsql.custom.query" and len(params) >= 5 and params[4] in d[0]:
                out[i["key"]] = json.loads(R.zabbix_json(runner.run(d[0][params[4]])))
        return out

    def dependents(d):
        tp, p = d[1]["zabbix_export"]["templates"][0], []
        data = outputs(d)
        p += ["%s returns no rows now" % k for k, v in data.items() if not v]
        rules = {r.get("key"): r for r in tp.get("discovery_rules") or []}
        for r in rules.values():
            mk = (r.get("master_item") or {}).get("key")
            if r.get("type") != "DEPENDENT" or mk not in data:
                p.append("discovery rule %s: not DEPENDENT on a custom query item (%s)" % (r.get("key"), mk))
                continue
            for mp in r.get("lld_macro_paths") or []:
                for row in data[mk]:
                    try:
                        R.jsonpath(mp["path"], row)
                    except Exception as e:
                        p.append("rule %s: %s on a row: %s" % (r.get("key"), mp.get("path"), e))
                        break
        for i in all_items(tp):
            if i.get("type") != "DEPENDENT":
                continue
            mk = (i.get("master_item") or {}).get("key")
            if mk not in data:
                p.append("%s: master item %r is no custom query item" % (i.get("key"), mk))
                continue
            steps = [s for s in i.get("preprocessing") or [] if s.get("type") == "JSONPATH"]
            if not steps:
                p.append("%s: no JSONPATH preprocessing" % i.get("key"))
                continue
            paths = [steps[0]["parameters"][0]]
            rule = rules.get(i.get("_rule"))
            if rule:  # a prototype: one item per discovered row
                paths = []
                for row in data[(rule.get("master_item") or {}).get("key")] or []:
                    path = steps[0]["parameters"][0]
                    for mp in rule.get("lld_macro_paths") or []:
                        try:
                            path = path.replace(mp["lld_macro"], str(R.jsonpath(mp["path"], row)))
                        except Exception:
                            pass
                    paths.append(path)
                if "{#" in i.get("key", "") and not re.search(r"\{#[A-Z0-9_.]+\}", i["key"]):
                    p.append("%s: bad LLD macro" % i["key"])
            for path in paths:
                try:
                    v = R.jsonpath(path, data[mk])
                    if isinstance(v, list):
                        if len(v) != 1:
                            raise IndexError("%d matches" % len(v))
                        v = v[0]
                except Exception as e:
                    p.append("%s: %s: %s" % (i.get("key"), path, e))
                    continue
                vt = i.get("value_type", "UNSIGNED")
                if vt in NUMERIC_VALUE_TYPES and v is not None and not isinstance(v, (int, float)):
                    p.append("%s: %s gives %r for a %s item" % (i.get("key"), path, v, vt))
                if vt == "UNSIGNED" and isinstance(v, float) and not v.is_integer():
                    p.append("%s: %s gives %r for an UNSIGNED item" % (i.get("key"), path, v))
        return p

    def units(d):
        tp, p = d[1]["zabbix_export"]["templates"][0], []
        for i in all_items(tp):
            steps = [s for s in i.get("preprocessing") or [] if s.get("type") == "JSONPATH"]
            col = re.findall(r"[.'\"]([a-z_0-9]+)['\"]?\]?(?:\.first\(\))?$", steps[0]["parameters"][0]) if steps else []
            if not col:
                continue
            want = "B" if col[0].endswith("_bytes") else "unixtime" if col[0].endswith("_time_seconds") else \
                "s" if col[0].endswith("_seconds") else None
            if want and i.get("units") != want:
                p.append("%s (%s): units %r, not %r" % (i.get("key"), col[0], i.get("units"), want))
            if want == "s" or want is None and col[0].endswith("_ratio"):
                if i.get("value_type", "UNSIGNED") != "FLOAT":
                    p.append("%s (%s): value_type %r, not FLOAT" % (i.get("key"), col[0], i.get("value_type")))
        return p

    tool("Zabbix", load, [
        ("one query per .sql file, named like its group, no parameters; one for each default group", sql_files),
        ("as a pg_monitor role: each .sql returns exactly its group's columns (no legacy names), labels text, values numeric", run),
        ("template: zabbix_export version 7.0, one template in an exported group, uuids 32 hex and unique",
         template),
        ("master items: pgsql.custom.query keys naming a .sql file, TEXT, agent items, macros defined, "
         "unique keys, slow ones every >= %d s, every .sql used" % SLOW_SECONDS, masters),
        ("dependent items and discovery rules: master item exists, their JSONPath finds one value "
         "of the right type in the query's output now", dependents),
        ("units: _bytes items B, _seconds s, _time_seconds unixtime; seconds and ratios FLOAT", units),
    ])


def main():
    execute("DROP ROLE IF EXISTS %s; CREATE ROLE %s LOGIN IN ROLE pg_monitor" % (ROLE, ROLE))
    runner = R.Runner(ROLE)
    try:
        try:
            defn, err = R.load_definition(), None
        except Exception as e:
            defn, err = {}, "%s: %s" % (type(e).__name__, e)
        bad = []
        for g, d in defn.items():
            if d["tier"] not in ("scrape", "slow"):
                bad.append("%s: tier %r" % (g, d["tier"]))
            if not str(d["help"] or "").strip():
                bad.append("%s: no help" % g)
            bad += ["%s.%s: kind %r" % (g, c, k) for c, k in d["columns"].items() if k not in R.KINDS]
            bad += ["%s.%s: no help" % (g, c) for c, h in d["column_help"].items() if not str(h or "").strip()]
            bad += ["%s: %s" % (g, x) for x in R.check_columns(
                runner.run(d["query"]), [c for c, k in d["columns"].items() if k == "label"],
                [c for c, k in d["columns"].items() if k != "label"])]
        ok(not err and defn and not bad,
           "metrics.toml: groups with a query, columns of kind label/gauge/counter, help, tier scrape or slow; "
           "each query returns its columns as a pg_monitor role", err or "\n".join(bad[:30]))
        check_exporter(defn, runner)
        check_cnpg(defn, runner)
        check_pmm(defn, runner)
        check_datadog(defn, runner)
        check_pgwatch(defn, runner)
        check_sql_exporter(defn, runner)
        check_zabbix(defn, runner)
        check_otel(defn, runner)
    finally:
        drop_role(ROLE)
    if ok.__globals__["_n"] != PLANNED:
        ok(False, "ran %d tests, planned %d" % (ok.__globals__["_n"], PLANNED))
    done()


if __name__ == "__main__":
    main()
