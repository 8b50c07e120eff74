"""The Grafana dashboard (monitoring/grafana/pg_procmem.json): every panel's
SQL runs against the test server as a pg_monitor role and returns rows of
the shape its panel type needs (TAP)."""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "py"))
from tap import ok, done, rows, execute, drop_role

REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
ROLE = "procmem_grafana"
AS_ROLE = "user=%s dbname=%s" % (ROLE, os.environ.get("PGDATABASE", "postgres"))
NUMERIC = {"smallint", "integer", "bigint", "numeric", "real", "double precision"}


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


def check_panel(p):
    t = p["targets"][0]
    sql = t["rawSql"]
    name = "panel %r" % p["title"]
    ok(p["datasource"]["type"] == "grafana-postgresql-datasource" and t["format"] == "table"
       and "$" not in sql, name + ": PostgreSQL data source, table format, no macros to expand")
    got = rows(sql, AS_ROLE)
    ok(len(got) >= 1, name + ": its SQL returns rows as a pg_monitor role", len(got))
    cols = columns(sql)
    types = dict(cols)
    if p["type"] == "barchart":
        x = p["options"]["xField"]
        ok(types.get(x) == "text" and len(cols) >= 2
           and all(ty in NUMERIC for c, ty in cols if c != x),
           name + ": a text %s column and numeric bars" % x, cols)
    elif p["type"] == "stat":
        ok(all(ty in NUMERIC for _, ty in cols), name + ": every column numeric (one stat each)", cols)
    else:
        ok(p["type"] == "table" and len(cols) >= 3, name + ": a table of several columns", cols)
    named = [o["matcher"]["options"] for o in p["fieldConfig"]["overrides"]
             if o["matcher"]["id"] == "byName"]
    ok(set(named) <= set(types), name + ": every field override names a column it returns",
       set(named) - set(types))


def main():
    with open(os.path.join(REPO, "monitoring", "grafana", "pg_procmem.json")) as f:
        dash = json.load(f)
    panels = dash["panels"]
    ok(len(panels) >= 8 and len({p["id"] for p in panels}) == len(panels),
       "the dashboard has its panels, with distinct ids")
    ok(not any(overlaps(a["gridPos"], b["gridPos"]) for i, a in enumerate(panels) for b in panels[i + 1:]),
       "no two panels overlap on the grid")
    ok(any(i["name"] == "DS_POSTGRES" for i in dash["__inputs"])
       and all(p["datasource"]["uid"] == "${DS_POSTGRES}" for p in panels),
       "every panel uses the data source chosen at import (DS_POSTGRES)")
    execute("DROP ROLE IF EXISTS %s; CREATE ROLE %s LOGIN IN ROLE pg_monitor" % (ROLE, ROLE))
    try:
        for p in panels:
            try:
                check_panel(p)
            except Exception as e:      # a failure; go on with the other panels
                ok(False, "panel %r: its checks ran" % p["title"], "%s: %s" % (type(e).__name__, e))
    finally:
        drop_role(ROLE)
    done()


if __name__ == "__main__":
    main()
