"""Helpers for test/monitoring/tools.py and the tests that run a tool:
monitoring/metrics.toml read into one shape, the series the postgres_exporter
file exports, a data source and a port for a tool, the shipped queries run as
a pg_monitor role, Zabbix item keys and the JSONPath subset Zabbix templates
use."""
import json
import os
import re
import socket
import subprocess
import tomllib

REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
MON = os.path.join(REPO, "monitoring")
PSQL = os.environ.get("PSQL", "psql")

LABEL_TYPES = {"text"}
VALUE_TYPES = {"smallint", "integer", "bigint", "numeric", "real", "double precision"}
INTEGER_TYPES = {"smallint", "integer", "bigint"}
KINDS = {"label", "gauge", "counter"}


def short(name):
    """A group's name without the pg_procmem_ prefix the tools give it."""
    return re.sub(r"^pg_procmem[_.]", "", name)


def load_definition():
    """monitoring/metrics.toml as {group: {"query", "tier", "help", "columns":
    {column: kind}, "order": [columns]}}; raises on a file that does not
    have that shape."""
    with open(os.path.join(MON, "metrics.toml"), "rb") as f:
        doc = tomllib.load(f)
    entries = None
    # the groups: an array of tables, or a table of tables, holding queries
    for key, v in doc.items():
        if isinstance(v, list) and v and all(isinstance(e, dict) and "query" in e for e in v):
            entries = [(e.get("name"), e) for e in v]
        elif isinstance(v, dict) and v and all(isinstance(e, dict) and "query" in e for e in v.values()):
            entries = [(e.get("name", k), e) for k, e in v.items()]
        if entries:
            break
    if not entries:
        raise ValueError("no table of groups with queries in metrics.toml (keys: %s)" % sorted(doc))
    groups = {}
    for name, e in entries:
        cols = e.get("columns") or e.get("column")
        if isinstance(cols, dict):
            cols = [dict(c, name=k) if isinstance(c, dict) else {"name": k, "kind": c} for k, c in cols.items()]
        order = [c["name"] for c in cols]
        groups[short(name)] = {
            "name": name, "query": e["query"], "tier": e.get("tier"),
            "help": e.get("description", e.get("help")), "opt_in": bool(e.get("opt_in")),
            "columns": {c["name"]: c.get("kind") for c in cols},
            "legacy": {c["name"] for c in cols if c.get("legacy")},
            "column_help": {c["name"]: c.get("help") for c in cols},
            "order": order, "raw": e}
    return groups


USAGE_KIND = {"LABEL": "label", "GAUGE": "gauge", "COUNTER": "counter"}


def exporter_file_series(legacy=False):
    """{series: kind} that postgres_exporter exports with
    monitoring/postgres_exporter/pg_procmem.yaml (GROUP_COLUMN of each
    column not a label); metrics.toml's legacy names only if legacy
    (PyYAML). The OpenTelemetry files, the alert rules and the fleet
    dashboard use these names."""
    import yaml
    with open(os.path.join(MON, "postgres_exporter", "pg_procmem.yaml")) as f:
        doc = yaml.safe_load(f)
    old = {"pg_procmem_%s_%s" % (g, c) for g, d in load_definition().items() for c in d["legacy"]}
    return {"%s_%s" % (g, c): USAGE_KIND[m["usage"]] for g, q in doc.items() for item in q["metrics"]
            for c, m in item.items() if m["usage"] != "LABEL" and (legacy or "%s_%s" % (g, c) not in old)}


def free_port():
    """A TCP port of 127.0.0.1 nobody listens on, for a tool's endpoint."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def dsn(role, dbname=None):
    """A tool's libpq data source for the test server as docs/monitoring.md
    shows it: search_path is sent as a startup option (lib/pq passes
    unknown keys on)."""
    return "host=%s port=%s user=%s dbname=%s sslmode=disable search_path=pg_catalog" % (
        os.environ["PGHOST"], os.environ["PGPORT"], role, dbname or os.environ.get("PGDATABASE", "postgres"))


def default_groups(defn):
    """The groups of the default files: all but the opt-in ones (one series per process)."""
    return {g for g, d in defn.items() if not d["opt_in"]}


def columns(d, legacy=False):
    """A group's {column: kind}, without the legacy names (kept in the
    postgres_exporter and PMM files only) unless legacy."""
    return {c: k for c, k in d["columns"].items() if legacy or c not in d["legacy"]}


def conninfo(role):
    return "dbname=%s user=%s options='-c search_path=pg_catalog'" % (
        os.environ.get("PGDATABASE", "postgres"), role)


class Runner:
    """Runs each distinct query once as the role: its columns with types
    (psql's \\gdesc) and its rows (strings, NULL as None)."""

    def __init__(self, role):
        self.role = role
        self.cache = {}

    def _psql(self, script, csv=True):
        cmd = [PSQL, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", conninfo(self.role)]
        if csv:
            cmd.insert(1, "--csv")
        return subprocess.run(cmd + ["-P", "null=\\N"], input=script, capture_output=True, text=True)

    def run(self, sql):
        sql = sql.strip()
        if sql in self.cache:
            return self.cache[sql]
        body = sql.rstrip().rstrip(";")
        d = self._psql(body + "\n\\gdesc\n")
        r = self._psql(body + ";\n")
        if d.returncode or r.returncode:
            out = {"error": (d.stderr or r.stderr).strip(), "columns": [], "rows": []}
        else:
            import csv as _csv, io
            cols = [(row["Column"], re.sub(r"\(.*\)$", "", row["Type"]))
                    for row in _csv.DictReader(io.StringIO(d.stdout))]
            rows = [{k: (None if v == "\\N" else v) for k, v in row.items()}
                    for row in _csv.DictReader(io.StringIO(r.stdout))]
            out = {"error": None, "columns": cols, "rows": rows}
        self.cache[sql] = out
        return out


def is_number(v):
    try:
        float(v)
        return True
    except (TypeError, ValueError):
        return False


def check_columns(result, labels, values, extra=()):
    """Problems of one query's result against what a file declares: exactly
    these columns (plus extra), labels text, values of a numeric type, each
    value numeric or NULL. Returns a list of strings (empty: fine)."""
    if result["error"]:
        return ["query failed: " + result["error"]]
    got = dict(result["columns"])
    problems = []
    want = set(labels) | set(values) | set(extra)
    if len(result["columns"]) != len(got):
        problems.append("duplicate column names: %s" % [c for c, _ in result["columns"]])
    if set(got) != want:
        problems.append("columns %s, declared %s" % (sorted(got), sorted(want)))
    for c in labels:
        if c in got and got[c] not in LABEL_TYPES:
            problems.append("label %s is %s, not text" % (c, got[c]))
    for c in values:
        if c in got and got[c] not in VALUE_TYPES:
            problems.append("value %s is %s, not numeric" % (c, got[c]))
        bad = [r[c] for r in result["rows"] if c in r and r[c] is not None and not is_number(r[c])]
        if bad:
            problems.append("value %s returned %s" % (c, bad[:3]))
    return problems


# Prometheus naming (https://prometheus.io/docs/practices/naming/)
PROM_NAME = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")
PROM_LABEL = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")
NON_BASE_UNITS = re.compile(r"_(ms|us|ns|milliseconds|microseconds|nanoseconds|minutes|hours|days|"
                            r"kb|mb|gb|kib|mib|gib|kilobytes|megabytes|gigabytes|percent)(_total)?$")


def naming_problems(name, kind):
    """What a new Prometheus series name breaks: the name's syntax, base
    units (bytes, seconds), _total on counters and only there."""
    p = []
    if not PROM_NAME.match(name):
        p.append("%s: not a Prometheus metric name" % name)
    if NON_BASE_UNITS.search(name):
        p.append("%s: not in base units (bytes, seconds)" % name)
    if kind == "counter" and not name.endswith("_total"):
        p.append("%s: a counter without _total" % name)
    if kind != "counter" and name.endswith("_total"):
        p.append("%s: _total on a %s" % (name, kind))
    return p


# Zabbix item keys: key[param,"quoted, param",[array]]
ZBX_KEY = re.compile(r"^([0-9a-zA-Z_.-]+)(?:\[(.*)\])?$", re.S)


def zabbix_key(key):
    """(name, [params]) of an item key; raises ValueError on bad syntax."""
    m = ZBX_KEY.match(key)
    if not m:
        raise ValueError("bad item key %r" % key)
    if m.group(2) is None:
        return m.group(1), []
    s, params, i = m.group(2), [], 0
    while True:
        while i < len(s) and s[i] == " ":
            i += 1
        if i < len(s) and s[i] == '"':
            j, buf = i + 1, ""
            while j < len(s) and s[j] != '"':
                if s[j] == "\\" and j + 1 < len(s) and s[j + 1] == '"':
                    j += 1
                buf += s[j]
                j += 1
            if j >= len(s):
                raise ValueError("unterminated quote in %r" % key)
            params.append(buf)
            i = j + 1
            while i < len(s) and s[i] == " ":
                i += 1
        elif i < len(s) and s[i] == "[":
            j = s.index("]", i)
            params.append(s[i:j + 1])
            i = j + 1
        else:
            j = i
            while j < len(s) and s[j] != ",":
                if s[j] in '"[]':
                    raise ValueError("unquoted %r inside a parameter of %r" % (s[j], key))
                j += 1
            params.append(s[i:j])
            i = j
        if i >= len(s):
            return m.group(1), params
        if s[i] != ",":
            raise ValueError("expected , at %d of %r" % (i, key))
        i += 1


# The JSONPath Zabbix preprocessing and LLD macro paths use, as far as the
# templates need it: $, .name, ['name'], [N], [*], [?(@.name == 'v')], and
# the functions first(), length(), sum(), min(), max(), avg().
_TOKEN = re.compile(r"""\.(?P<fn>first|length|sum|min|max|avg)\(\)
                      |\.(?P<name>[A-Za-z_][A-Za-z0-9_]*)
                      |\[(?P<index>-?\d+)\]
                      |\[(?P<star>\*)\]
                      |\[\s*['"](?P<qname>[^'"]+)['"]\s*\]
                      |\[\?\((?P<filter>[^()]*)\)\]
                   """, re.X)
_COND = re.compile(r"""\s*@\.([A-Za-z_][A-Za-z0-9_]*)\s*==\s*(?:'([^']*)'|"([^"]*)"|(-?[\d.]+))\s*$""")


def _conditions(text):
    """[(name, value)] of a filter's @.name == value conditions joined by &&."""
    out = []
    for part in text.split("&&"):
        m = _COND.match(part)
        if not m:
            raise ValueError("filter condition %r" % part)
        out.append((m.group(1), m.group(2) if m.group(2) is not None else m.group(3) if m.group(3) is not None
                    else float(m.group(4))))
    return out


def _matches(x, name, want):
    if not isinstance(x, dict) or name not in x:
        return False
    if isinstance(want, float):
        return is_number(x[name]) and float(x[name]) == want
    return x[name] == want


def jsonpath(path, doc):
    """The value Zabbix would take from doc with path (a list is the
    result of a filter or [*]); raises ValueError on what this subset does
    not parse, KeyError/IndexError when nothing matches."""
    if not path.startswith("$"):
        raise ValueError("JSONPath %r does not start with $" % path)
    nodes, many, i = [doc], False, 1
    while i < len(path):
        m = _TOKEN.match(path, i)
        if not m:
            raise ValueError("JSONPath %r: cannot parse at %r" % (path, path[i:]))
        i = m.end()
        if m["fn"]:
            vals = nodes
            fn = m["fn"]
            if fn == "first":
                if not vals:
                    raise IndexError("first() of nothing")
                nodes, many = [vals[0]], False
            elif fn == "length":
                nodes, many = [len(vals[0]) if not many and isinstance(vals[0], list) else len(vals)], False
            else:
                nums = [float(v) for v in vals if v is not None]
                if not nums:
                    raise IndexError("%s() of nothing" % fn)
                nodes = [{"sum": sum, "min": min, "max": max, "avg": lambda x: sum(x) / len(x)}[fn](nums)]
                many = False
        elif m["name"] or m["qname"]:
            key = m["name"] or m["qname"]
            nodes = [n[key] for n in nodes if isinstance(n, dict) and key in n] if many else [nodes[0][key]]
        elif m["index"]:
            nodes = [nodes[0][int(m["index"])]]
        elif m["star"]:
            nodes, many = [x for n in nodes for x in n], True
        else:
            conds = _conditions(m["filter"])
            src = [x for n in nodes for x in (n if isinstance(n, list) else [n])]
            nodes = [x for x in src if all(_matches(x, c, w) for c, w in conds)]
            many = True
    if many:
        return nodes
    return nodes[0]


def zabbix_json(result):
    """The JSON text pgsql.custom.query returns for a result: an array of
    one object per row, column -> value (numbers as numbers)."""
    types = dict(result["columns"])
    out = []
    for r in result["rows"]:
        o = {}
        for c, v in r.items():
            if v is not None and types.get(c) in VALUE_TYPES:
                v = int(v) if types[c] in INTEGER_TYPES else float(v)
            o[c] = v
        out.append(o)
    return json.dumps(out)


def interval_seconds(v):
    """A Zabbix or pgwatch interval (300, '300', '5m', '1h') in seconds."""
    m = re.fullmatch(r"\s*(\d+)\s*([smhdw]?)\s*", str(v))
    if not m:
        raise ValueError("bad interval %r" % v)
    return int(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}[m.group(2)]
