"""The Grafana dashboard (monitoring/grafana/pg_procmem.json): every panel's
SQL, its time range macros expanded as Grafana expands them, runs against
the test server as a pg_monitor role and returns rows of the shape its
panel type needs; the History row's panels honor the time range (TAP)."""
import datetime
import json
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "py"))
from tap import ok, done, rows, value, execute, drop_role

REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
ROLE = "procmem_grafana"
AS_ROLE = "user=%s dbname=%s" % (ROLE, os.environ.get("PGDATABASE", "postgres"))
NUMERIC = {"smallint", "integer", "bigint", "numeric", "real", "double precision"}
TIME = "timestamp with time zone"
SLEEPER = "procmem_grafana_sleeper"
# the History row's panels, in the dashboard's order
HISTORY = ["Overhead by backend type over time", "The machine and the cgroup over time", "Memory pressure",
           "The sampler's cost", "Crash restarts in the range", "Crash restarts",
           "Guard actions in the range", "Guard actions", "Top statements by memory"]
# panels of events, and the view they come from: a table shows none, and
# evaluates nothing per row, on a server that has had none
EVENTS = {"Crash restarts": "pg_procmem_crashes", "Crash restarts in the range": "pg_procmem_crashes",
          "Guard actions": "pg_procmem_guard_actions", "Guard actions in the range": "pg_procmem_guard_actions",
          "Top statements by memory": "pg_procmem_query_memory"}


def dashboard():
    with open(os.path.join(REPO, "monitoring", "grafana", "pg_procmem.json")) as f:
        return json.load(f)


def grafana_time(t):
    """A time as the PostgreSQL data source writes $__timeFrom(): quoted
    RFC 3339 in UTC (Go's RFC3339Nano: no trailing zeros)."""
    s = t.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f").rstrip("0").rstrip(".")
    return "'%sZ'" % s


def expand(sql, start, end):
    """The SQL Grafana sends for the range start..end. $__timeFilter is not
    used: it expands to an unqualified BETWEEN, which a hostile search_path
    can resolve to its own operator (test/monitoring/hijack.py)."""
    sql = sql.replace("$__timeFrom()", grafana_time(start)).replace("$__timeTo()", grafana_time(end))
    unknown = re.findall(r"\$\w+", sql)
    if unknown:
        raise ValueError("macros the test does not expand: %s" % unknown)
    return sql


def last_day():
    now = datetime.datetime.now(datetime.timezone.utc)
    return now - datetime.timedelta(days=1), now


def panel_queries(start=None, end=None):
    """("panel TITLE", SQL) of every query of the dashboard, for the range
    start..end (the last day by default)."""
    if start is None:
        start, end = last_day()
    return [("panel " + p["title"], expand(t["rawSql"], start, end))
            for p in dashboard()["panels"] for t in p.get("targets", [])]


def may_be_empty(name):
    """Whether the query named by panel_queries() may return no rows."""
    title = name[len("panel "):]
    return title in EVENTS and not title.endswith(" in the range")


def events_seen(name):
    """Whether the server has any of the events the query named by
    panel_queries() reads (True when it reads none)."""
    view = EVENTS.get(name[len("panel "):])
    return view is None or value("SELECT count(*) FROM public.%s" % view) != "0"


def columns(sql):
    """(name, type) of each column the panel's query returns."""
    return [(r["attname"], r["type"]) for r in rows(
        "CREATE TEMP VIEW panel AS " + sql + ";"
        "SELECT attname, pg_catalog.format_type(atttypid, atttypmod) AS type"
        " FROM pg_catalog.pg_attribute WHERE attrelid = 'pg_temp.panel'::regclass AND attnum > 0"
        " ORDER BY attnum", AS_ROLE)]


def overlaps(a, b):
    return (a["x"] < b["x"] + b["w"] and b["x"] < a["x"] + a["w"]
            and a["y"] < b["y"] + b["h"] and b["y"] < a["y"] + a["h"])


def check_panel(p, start, end):
    """The panel's checks; returns its rows for the range start..end."""
    t = p["targets"][0]
    raw = t["rawSql"]
    name = "panel %r" % p["title"]
    ok(p["datasource"]["type"] == "grafana-postgresql-datasource"
       and t["format"] == ("time_series" if p["type"] == "timeseries" else "table")
       and "$__timeFilter" not in raw,
       name + ": PostgreSQL data source, the format its type needs, no $__timeFilter")
    sql = expand(raw, start, end)
    got = rows(sql, AS_ROLE)
    ok(len(got) >= 1 or may_be_empty("panel " + p["title"]), name + ": its SQL returns rows as a pg_monitor role", len(got))
    cols = columns(sql)
    types = dict(cols)
    rest = cols[1:]
    if p["type"] == "barchart":
        x = p["options"]["xField"]
        ok(types.get(x) == "text" and len(cols) >= 2
           and all(ty in NUMERIC for c, ty in cols if c != x),
           name + ": a text %s column and numeric bars" % x, cols)
    elif p["type"] == "stat":
        ok(all(ty in NUMERIC for _, ty in cols), name + ": every column numeric (one stat each)", cols)
    elif p["type"] == "timeseries":
        if rest and rest[0] == ("metric", "text"):
            rest = rest[1:]         # long: a series per metric
        ok(cols[0] == ("time", TIME) and rest and all(ty in NUMERIC for _, ty in rest),
           name + ": a time column, then numeric series (a metric column names them)", cols)
        stamps = [datetime.datetime.fromisoformat(r["time"]) for r in got]
        ok(stamps == sorted(stamps), name + ": its rows in time order, as Grafana needs them")
    elif p["type"] == "state-timeline":
        ok(cols[0] == ("time", TIME) and rest and all(ty == "text" for _, ty in rest),
           name + ": a time column, then a text state per row", cols)
    else:
        ok(p["type"] == "table" and len(cols) >= 3, name + ": a table of several columns", cols)
    named = [o["matcher"]["options"] for o in p["fieldConfig"]["overrides"]
             if o["matcher"]["id"] == "byName"]
    ok(set(named) <= set(types), name + ": every field override names a column it returns",
       set(named) - set(types))
    return got


def guard_action():
    """A statement over its session's pg_procmem.max_backend_memory: an
    action of the guard's. Returns the backend's pid."""
    r = subprocess.run([os.environ.get("PSQL", "psql"), "-X", "-q", "-At",
                        "-c", "SELECT pg_backend_pid()", "-c", "SET pg_procmem.max_backend_memory = '64MB'",
                        "-c", "SET work_mem = '1GB'",
                        "-c", "SELECT count(*) FROM (SELECT g, md5(g::text) FROM generate_series(1, 3000000) g "
                              "ORDER BY 2) s"], capture_output=True, text=True)
    return int(r.stdout.split()[0])


def sampled_sleeper():
    """A statement that ran while the sampler took a sample (at most 25 s):
    its query_id, or None."""
    env = dict(os.environ, PGAPPNAME=SLEEPER)
    sleeper = subprocess.Popen([os.environ.get("PSQL", "psql"), "-X", "-q", "-c", "SELECT pg_sleep(30)"],
                               env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(50):
            time.sleep(0.5)
            sampled = value("SELECT count(*) FROM pg_procmem_history_system s, pg_stat_activity a"
                            " WHERE a.application_name = '%s' AND a.state = 'active'"
                            " AND s.sampled_at > a.query_start + interval '100 ms'" % SLEEPER)
            if sampled not in (None, "0"):
                return value("SELECT max(query_id) FROM pg_procmem_history"
                             " WHERE application_name = '%s' AND state = 'active'" % SLEEPER)
        return None
    finally:
        execute("SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = '%s'" % SLEEPER)
        sleeper.wait(timeout=30)


def check_history(got, start, end, guard_pid, query_id):
    """What the History row's panels show, against the views read as the
    superuser over the same range."""
    cond = "BETWEEN %s AND %s" % (grafana_time(start), grafana_time(end))
    newest = value("SELECT max(sample) FROM pg_procmem_history_system WHERE sampled_at " + cond)
    summed = {r["metric"]: int(float(r["overhead"])) for r in got["Overhead by backend type over time"]
              if r["time"] == got["Overhead by backend type over time"][-1]["time"]}
    truth = {r["backend_type"]: int(r["sum"]) for r in rows(
        "SELECT backend_type, sum(overhead) FROM pg_procmem_history WHERE sample = %s GROUP BY 1" % newest)}
    ok(summed and summed == truth, "overhead over time: its newest sample is pg_procmem_history's, summed per backend type",
       (summed, truth))
    samples = int(value("SELECT count(*) FROM pg_procmem_history_system WHERE sampled_at " + cond))
    ok(all(len(got[t]) == samples for t in ("The machine and the cgroup over time", "Memory pressure",
                                              "The sampler's cost")),
       "machine, pressure and sampler's cost: one point per sample in the range (%d)" % samples,
       {t: len(got[t]) for t in got})
    crashes = int(value("SELECT count(*) FROM pg_procmem_crashes WHERE crashed_at " + cond))
    ok(int(got["Crash restarts in the range"][0]["crash restarts"]) == crashes
       and len(got["Crash restarts"]) == crashes,
       "crash restarts: the stat and the table count pg_procmem_crashes' rows in the range (%d)" % crashes)
    actions = got["Guard actions"]
    canceled = int(value("SELECT count(*) FROM pg_procmem_guard_actions WHERE action = 'cancel' AND acted_at " + cond))
    ok(actions and int(actions[0]["pid"]) == guard_pid and actions[0]["reason"] == "backend limit"
       and int(got["Guard actions in the range"][0]["statements canceled"]) == canceled >= 1,
       "guard actions: the newest is the statement canceled over its max_backend_memory, counted in the stat",
       (guard_pid, actions[:1], canceled))
    top = [r for r in got["Top statements by memory"] if r["query_id"] == query_id]
    ok(query_id is not None and len(top) == 1 and int(top[0]["samples"]) >= int(top[0]["backends"]) >= 1
       and "pg_sleep" in (top[0]["query"] or ""),
       "top statements: the statement sampled while it ran, with its text", (query_id, top))


def main():
    dash = dashboard()
    panels = dash["panels"]
    queried = [p for p in panels if p["type"] != "row"]
    ok(len(queried) >= 8 and len({p["id"] for p in panels}) == len(panels),
       "the dashboard has its panels, with distinct ids")
    ok(not any(overlaps(a["gridPos"], b["gridPos"]) for i, a in enumerate(panels) for b in panels[i + 1:]),
       "no two panels overlap on the grid")
    ok(any(i["name"] == "DS_POSTGRES" for i in dash["__inputs"])
       and all(p["datasource"]["uid"] == "${DS_POSTGRES}" for p in queried),
       "every panel uses the data source chosen at import (DS_POSTGRES)")
    row = [p for p in panels if p["type"] == "row" and p["title"] == "History"]
    below = sorted((p for p in queried if row and p["gridPos"]["y"] > row[0]["gridPos"]["y"]),
                   key=lambda p: (p["gridPos"]["y"], p["gridPos"]["x"]))
    ok(len(row) == 1 and [p["title"] for p in below] == HISTORY and len(below) < len(queried)
       and not row[0]["collapsed"],
       "a History row, open, after the panels of now, holds the history's panels", [p["title"] for p in below])
    ok(all("$__timeFrom()" in p["targets"][0]["rawSql"] and "$__timeTo()" in p["targets"][0]["rawSql"]
           for p in below), "every History panel reads Grafana's time range")

    guard_pid = guard_action()
    query_id = sampled_sleeper()
    execute("DROP ROLE IF EXISTS %s; CREATE ROLE %s LOGIN IN ROLE pg_monitor" % (ROLE, ROLE))
    try:
        start, end = last_day()
        got = {}
        for p in queried:
            try:
                got[p["title"]] = check_panel(p, start, end)
            except Exception as e:      # a failure; go on with the other panels
                ok(False, "panel %r: its checks ran" % p["title"], "%s: %s" % (type(e).__name__, e))
        if all(t in got for t in HISTORY):
            check_history(got, start, end, guard_pid, query_id)
        # a range the history cannot hold: no points, no rows, zero counts
        old = datetime.datetime(2000, 1, 1, tzinfo=datetime.timezone.utc)
        seen = {}
        for p in below:
            r = rows(expand(p["targets"][0]["rawSql"], old, old + datetime.timedelta(days=1)), AS_ROLE)
            seen[p["title"]] = r if p["type"] != "stat" else [set(r[0].values())]
        ok(all(r == [] or r == [{"0"}] for r in seen.values()),
           "in a range of 2000, the History panels show nothing (stats: 0)", seen)
    finally:
        drop_role(ROLE)
    done()


if __name__ == "__main__":
    main()
