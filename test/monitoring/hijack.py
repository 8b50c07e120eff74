"""The shipped tool queries against a hostile database owner (TAP).

The attack (issue 13): a non-superuser owns the database the tools connect
to. He creates a schema named after the monitoring role ("$user", first on
its default search_path) and fills it with decoys: a view for every view the
tools read, a function, aggregate or operator with the exact signature of
every one the tools call, a domain for every type they cast to; then
ALTER DATABASE ... SET search_path = "$user", public, pg_catalog, which puts
his schema before pg_catalog. Every decoy counts its calls (a sequence:
nextval survives a failed query). Then every postgres_exporter query, every
Grafana panel and scripts/report run as the pg_monitor role: each must
succeed with zero decoy calls. The control: the same queries with their
schema qualifications stripped (what 1.1.0 shipped) do call a decoy.

    python3 test/monitoring/hijack.py EXPORTER_BINARY   ('' skips the exporter run)
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "py"))
sys.path.insert(0, HERE)
from tap import ok, section, skip_rest, done, rows, value, execute
import grafana

REPO = os.path.join(HERE, "..", "..")
OWNER = "procmem_db_owner"
MONITOR = "procmem_monitor"
DB = "procmem_hijacked"
AS_OWNER = "user=%s dbname=%s" % (OWNER, DB)
AS_MONITOR = "user=%s dbname=%s" % (MONITOR, DB)
AS_SUPERUSER = "dbname=%s" % DB


def exporter_queries():
    """(name, sql) of every query in every monitoring tool's files (scripts/monitoring
    makes them all; each tool's wrapping of a group's query included)."""
    out = subprocess.run([sys.executable, os.path.join(REPO, "scripts", "monitoring"), "--tool-queries"],
                         check=True, capture_output=True, text=True).stdout
    return [("%s %s" % (q["tool"], q["group"]), q["query"]) for q in json.loads(out)]


def panel_queries():
    """The Grafana panels' SQL, its time range macros expanded (grafana.py)."""
    return grafana.panel_queries()


def run_report(tmp, log=None):
    """scripts/report as the monitoring role; with log, psql is a wrapper
    that writes down every query. Returns (exit code, stderr)."""
    env = dict(os.environ)
    if log:
        wrapper = os.path.join(tmp, "psql")
        with open(wrapper, "w") as f:
            f.write('#!/bin/bash\nprintf "%%s\\0" "$@" >>%s\nprintf "\\1\\0" >>%s\nexec %s "$@"\n'
                    % (log, log, os.environ.get("PSQL", "psql")))
        os.chmod(wrapper, 0o755)
        env["PSQL"] = wrapper
    res = subprocess.run([os.path.join(REPO, "scripts", "report"), AS_MONITOR,
                          "-o", os.path.join(tmp, "report.html")],
                         env=env, capture_output=True, text=True, timeout=300)
    return res.returncode, res.stderr


def report_queries(tmp):
    log = os.path.join(tmp, "psql.log")
    rc, err = run_report(tmp, log)
    if rc != 0:
        raise RuntimeError("scripts/report failed before any decoy existed: " + err)
    found = []
    for call in open(log).read().split("\1\0"):
        args = call.split("\0")
        found += [("report query %d" % (len(found) + 1), args[i + 1])
                  for i, a in enumerate(args[:-1])
                  if a == "-c" and not args[i + 1].startswith("SET ")]
    return found


def q(name):
    return '"%s"' % name.replace('"', '""')


# In the stored query tree: what a name resolved to (pg_depend leaves out
# pg_catalog's pinned objects, so it cannot tell).
NODE_FIELDS = {"funcid": "pg_proc", "aggfnoid": "pg_proc", "winfnoid": "pg_proc",
               "opno": "pg_operator", "relid": "pg_class",
               "resulttype": "pg_type", "consttype": "pg_type"}


def dependencies(queries):
    """What the queries resolve to on a clean search_path: the oids in the
    stored tree of a temporary view over each."""
    deps = {}
    for _, sql in queries:
        tree = value("CREATE TEMP VIEW probe AS " + sql + ";\n"
                     "SELECT ev_action::text FROM pg_rewrite WHERE ev_class = 'pg_temp.probe'::regclass",
                     AS_SUPERUSER)
        for field, oid in re.findall(r":(%s) (\d+)" % "|".join(NODE_FIELDS), tree):
            if int(oid):
                deps.setdefault(NODE_FIELDS[field], set()).add(oid)
    return deps


def decoy_sql(deps):
    """One statement per decoy, each to run as the database's owner."""
    out = []
    hit = "PERFORM hijack.hit();"
    ids = lambda key: ",".join(sorted(deps.get(key, ()))) or "0"
    for r in rows("""SELECT c.oid, n.nspname, c.relname FROM pg_class AS c
                     JOIN pg_namespace AS n ON n.oid = c.relnamespace
                     WHERE c.oid IN (%s) AND n.nspname !~ '^pg_temp'""" % ids("pg_class"), AS_SUPERUSER):
        rel = "%s.%s" % (q(r["nspname"]), q(r["relname"]))
        out.append("CREATE FUNCTION hijack.rel_%s() RETURNS SETOF %s LANGUAGE plpgsql AS "
                   "$$BEGIN %s RETURN QUERY SELECT * FROM %s; END$$;\n"
                   "CREATE VIEW %s.%s AS SELECT * FROM hijack.rel_%s();"
                   % (r["oid"], rel, hit, rel, q(MONITOR), q(r["relname"]), r["oid"]))
    for r in rows("""SELECT p.oid, p.proname, p.prokind, p.proretset, p.prorettype::regtype AS rettype,
                            p.proallargtypes IS NOT NULL AS has_out,
                            pg_get_function_arguments(p.oid) AS args,
                            pg_get_function_identity_arguments(p.oid) AS identity,
                            pg_get_function_result(p.oid) AS result,
                            array_to_string(p.proargtypes::regtype[], ', ') AS argtypes
                     FROM pg_proc AS p WHERE p.oid IN (%s)""" % ids("pg_proc"), AS_SUPERUSER):
        name = "%s.%s" % (q(MONITOR), q(r["proname"]))
        if r["prokind"] in ("a", "w"):
            # a window function gets a parameterless aggregate: an unqualified
            # call then resolves to it (and fails), which the control counts
            state = r["rettype"] if r["prokind"] == "a" else "bigint"
            argtypes = r["argtypes"] if r["prokind"] == "a" else ""
            out.append("CREATE FUNCTION hijack.step_%s(%s) RETURNS %s LANGUAGE plpgsql AS "
                       "$$BEGIN %s RETURN $1; END$$;\n"
                       "CREATE AGGREGATE %s(%s) (SFUNC = hijack.step_%s, STYPE = %s);"
                       % (r["oid"], ", ".join([state] + ([argtypes] if argtypes else [])), state, hit,
                          name, argtypes or "*", r["oid"], state))
        else:
            empty = r["proretset"] == "t" or r["has_out"] == "t" or r["rettype"] == "void"
            out.append("CREATE FUNCTION %s(%s) RETURNS %s LANGUAGE plpgsql AS $$BEGIN %s RETURN%s; END$$;"
                       % (name, r["args"], r["result"], hit, "" if empty else " NULL"))
    for r in rows("""SELECT o.oid, o.oprname, o.oprleft::regtype AS l, o.oprright::regtype AS r,
                            o.oprresult::regtype AS res, o.oprleft <> 0 AS binary
                     FROM pg_operator AS o WHERE o.oid IN (%s)""" % ids("pg_operator"), AS_SUPERUSER):
        args = ([r["l"]] if r["binary"] == "t" else []) + [r["r"]]
        out.append("CREATE FUNCTION hijack.op_%s(%s) RETURNS %s LANGUAGE plpgsql AS $$BEGIN %s RETURN NULL; END$$;\n"
                   "CREATE OPERATOR %s.%s (%sRIGHTARG = %s, FUNCTION = hijack.op_%s);"
                   % (r["oid"], ", ".join(args), r["res"], hit, q(MONITOR), r["oprname"],
                      "LEFTARG = %s, " % r["l"] if r["binary"] == "t" else "", r["r"], r["oid"]))
    for r in rows("""SELECT t.oid, t.typname, t.oid::regtype AS type FROM pg_type AS t
                     WHERE t.oid IN (%s) AND t.typrelid = 0 AND t.typtype <> 'p'""" % ids("pg_type"),
                  AS_SUPERUSER):
        out.append("CREATE DOMAIN %s.%s AS %s CHECK (hijack.hit() IS NOT NULL);"
                   % (q(MONITOR), q(r["typname"]), r["type"]))
    return out


def calls():
    return int(value("SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM hijack.calls",
                     AS_SUPERUSER))


def attempt(sql):
    """Runs sql as the monitoring role: (rows or None, error text)."""
    try:
        return rows(sql, AS_MONITOR), ""
    except subprocess.CalledProcessError as e:
        return None, e.stderr.strip()


def decoy_failed(err):
    """The query resolved a window function to the owner's parameterless
    aggregate (SQL cannot define a window function) and failed on it."""
    return "must be used to call a parameterless aggregate" in err


def unqualified_calls(sql):
    sql = re.sub(r"OPERATOR\(pg_catalog\.([^)]+)\)", r"\1", sql)
    return re.sub(r"\bpg_catalog\.(?!pg_)", "", sql)


def unqualified(sql):
    sql = re.sub(r"OPERATOR\(pg_catalog\.([^)]+)\)", r"\1", sql)
    sql = re.sub(r'"public"\.|"pg_catalog"\.', "", sql)
    return re.sub(r"\b(?:public|pg_catalog)\.", "", sql)


def setup():
    execute("DROP DATABASE IF EXISTS %s" % DB)
    execute("DROP ROLE IF EXISTS %s; DROP ROLE IF EXISTS %s" % (OWNER, MONITOR))
    execute("CREATE ROLE %s LOGIN; CREATE ROLE %s LOGIN IN ROLE pg_monitor" % (OWNER, MONITOR))
    execute("CREATE DATABASE %s OWNER %s" % (DB, OWNER))
    # installed by a superuser, where DBAs put it: public (owned by the
    # database's owner since PostgreSQL 15)
    rows("CREATE EXTENSION pg_procmem", AS_SUPERUSER)


def plant(deps):
    """The owner's schemas, counter and decoys; returns the statements that
    could not be made (a type with no domain, a "any" argument)."""
    rows("""CREATE SCHEMA hijack; CREATE SEQUENCE hijack.calls;
            GRANT USAGE ON SCHEMA hijack TO PUBLIC;
            CREATE FUNCTION hijack.hit() RETURNS bigint LANGUAGE sql SECURITY DEFINER
                SET search_path = pg_catalog AS 'SELECT nextval(''hijack.calls'')';
            CREATE SCHEMA %s; GRANT USAGE ON SCHEMA %s TO PUBLIC""" % (q(MONITOR), q(MONITOR)), AS_OWNER)
    failed = []
    for stmt in decoy_sql(deps):
        try:
            rows(stmt, AS_OWNER)
        except subprocess.CalledProcessError as e:
            failed.append("%s\n  %s" % (stmt.splitlines()[-1], e.stderr.strip()))
    # his views are readable by anyone: the role's own rights do the rest
    rows("GRANT SELECT ON ALL TABLES IN SCHEMA %s TO PUBLIC" % q(MONITOR), AS_OWNER)
    rows("ALTER DATABASE %s SET search_path = \"$user\", public, pg_catalog" % DB, AS_OWNER)
    return failed


def check(binary, tmp):
    report = report_queries(tmp)
    tools = exporter_queries() + panel_queries()
    deps = dependencies(tools + report)
    failed = plant(deps)
    wanted = sum(len(v) for v in deps.values())
    ok(wanted >= 20 and not failed,
       "the owner planted a decoy for each of the %d objects the tools use" % wanted,
       "\n".join(failed))
    ok(value("SHOW search_path", AS_MONITOR) == '"$user", public, pg_catalog',
       "the monitoring role's search_path is the owner's: his schema first, pg_catalog last")

    # the control: what 1.1.0 shipped (no qualification) runs the owner's code
    missed = []
    for name, sql in tools + report:
        before = calls()
        got, err = attempt(unqualified(sql))
        if calls() == before and not decoy_failed(err):
            missed.append("%s %s" % (name, err))
    ok(not missed, "control: every query with its qualifications stripped calls a decoy",
       "\n".join(missed))
    # ... and with only its functions, operators and types unqualified
    caught, tried = [], 0
    for name, sql in tools + report:
        bare = unqualified_calls(sql)
        if bare == sql or name.startswith("panel ") and not grafana.events_seen(name):
            continue        # nothing to call a decoy for: a panel over events there were none of
        tried += 1
        before = calls()
        got, err = attempt(bare)
        if calls() == before and not decoy_failed(err):
            caught.append("%s %s" % (name, err))
    ok(tried >= 5 and not caught,
       "control: the %d queries that call a function, operator or cast call a decoy "
       "once those are unqualified" % tried, "not caught: %s" % caught)

    check_bindings(tools)

    for name, sql in tools:
        before = calls()
        got, err = attempt(sql)
        ok(got is not None and (len(got) >= 1 or name.startswith("panel ") and grafana.may_be_empty(name))
           and calls() == before,
           "%s: runs as %s, returns rows, calls no decoy" % (name, MONITOR),
           err or "%d decoy calls" % (calls() - before))
    before = calls()
    rc, err = run_report(tmp)
    ok(rc == 0 and calls() == before,
       "scripts/report: writes the page as %s, calls no decoy" % MONITOR,
       err or "%d decoy calls" % (calls() - before))

    with section(3, "postgres_exporter"):
        if not binary:
            skip_rest("postgres_exporter could not be built here")
        import exporter
        execute("GRANT CONNECT ON DATABASE %s TO %s" % (DB, MONITOR))
        before = calls()
        m, log = exporter.scrape(binary, os.path.join(REPO, "monitoring", "postgres_exporter", "pg_procmem.yaml"),
                                 exporter.dsn(MONITOR, DB))
        ok(exporter.one(m, "pg_up") == 1 and m.get("pg_procmem_backend_type_processes"),
           "postgres_exporter with docs/monitoring.md's connection string: connected, pg_procmem series scraped",
           log[-2000:])
        ok("level=ERROR" not in log, "no query failed in the exporter's log",
           "\n".join(l for l in log.splitlines() if "level=ERROR" in l)[-2000:])
        ok(calls() == before, "postgres_exporter (its own queries too) called no decoy",
           "%d decoy calls" % (calls() - before))


# The objects a view depends on that belong to the database's owner (in a
# schema he owns, and not pg_procmem's own): run as the monitoring role.
BOUND = """
SELECT pg_catalog.format('%s %s', c.relname, d.refobjid) AS object
FROM pg_catalog.pg_depend AS d
     JOIN pg_catalog.pg_rewrite AS r ON r.oid OPERATOR(pg_catalog.=) d.objid
     JOIN pg_catalog.pg_class AS c ON c.oid OPERATOR(pg_catalog.=) d.refclassid
WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_rewrite'::pg_catalog.regclass
  AND r.ev_class OPERATOR(pg_catalog.=) 'pg_temp.hijack_static'::pg_catalog.regclass
  AND COALESCE((SELECT p.pronamespace FROM pg_catalog.pg_proc AS p WHERE p.oid OPERATOR(pg_catalog.=) d.refobjid
                AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass),
               (SELECT o.oprnamespace FROM pg_catalog.pg_operator AS o WHERE o.oid OPERATOR(pg_catalog.=) d.refobjid
                AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_operator'::pg_catalog.regclass),
               (SELECT t.typnamespace FROM pg_catalog.pg_type AS t WHERE t.oid OPERATOR(pg_catalog.=) d.refobjid
                AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_type'::pg_catalog.regclass),
               (SELECT k.relnamespace FROM pg_catalog.pg_class AS k WHERE k.oid OPERATOR(pg_catalog.=) d.refobjid
                AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass))
      OPERATOR(pg_catalog.=) ANY (SELECT n.oid FROM pg_catalog.pg_namespace AS n
                                  JOIN pg_catalog.pg_roles AS o ON o.oid OPERATOR(pg_catalog.=) n.nspowner
                                  WHERE o.rolname OPERATOR(pg_catalog.=) 'OWNER')
  AND NOT EXISTS (SELECT FROM pg_catalog.pg_depend AS e
                  WHERE e.classid OPERATOR(pg_catalog.=) d.refclassid
                    AND e.objid OPERATOR(pg_catalog.=) d.refobjid
                    AND e.deptype OPERATOR(pg_catalog.=) 'e')
""".replace("'OWNER'", "'%s'" % OWNER)


def bindings(sql):
    """What sql binds to among the owner's objects, as the monitoring role under
    his search_path, whether or not it would return rows (a view of it); or
    the error."""
    view = "CREATE TEMP VIEW hijack_static AS " + sql.strip().rstrip(";")
    try:
        return [r["object"] for r in rows(BOUND, AS_MONITOR, setup=(view,))]
    except subprocess.CalledProcessError as e:
        return ["error: " + e.stderr.strip()[:300]]


def check_bindings(tools):
    """The calls counted above only show what ran: an expression over rows
    that do not exist (no crash yet, no guard action) runs nothing. What a
    query binds to is fixed before it runs."""
    bound = ["%s: %s" % (name, b) for name, sql in tools for b in bindings(sql)]
    ok(not bound, "every query binds to none of the owner's objects, rows or none (a view of each, "
       "as %s)" % MONITOR, "\n".join(bound[:20]))
    stripped = [name for name, sql in tools if unqualified_calls(sql) != sql]
    missed = [name for name, sql in tools if unqualified_calls(sql) != sql
              and not any(b.startswith(("pg_proc", "pg_operator", "pg_type")) or decoy_failed(b)
                          for b in bindings(unqualified_calls(sql)))]
    ok(len(stripped) >= 5 and not missed,
       "control: the %d queries with functions, operators or casts bind to his once those are unqualified"
       % len(stripped), "not bound: %s" % missed)


def check_rename(tools):
    """The owner owns public (PostgreSQL 15+) and may rename it: a new public
    of his then holds views named like ours, and the files that name public
    run them. docs/monitoring.md's remedy: a schema a superuser owns."""
    used = set(re.findall(r"public\.(pg_procmem_\w+)(\(?)", "\n".join(sql for _, sql in tools)))
    views = sorted(n for n, call in used if not call)
    stmts = ["ALTER SCHEMA public RENAME TO public_real; CREATE SCHEMA public; "
             "GRANT USAGE ON SCHEMA public TO PUBLIC"]
    # a function the files call (the history's, with missing_ok): one of the
    # same signature in the new public
    for r in rows("SELECT p.proname, pg_get_function_arguments(p.oid) AS args, "
                  "pg_get_function_result(p.oid) AS result FROM pg_proc AS p "
                  "WHERE p.pronamespace = 'public'::regnamespace AND p.proname IN (%s)"
                  % ",".join("'%s'" % n for n, call in used if call) or "''", AS_SUPERUSER):
        stmts.append("CREATE FUNCTION public.%s(%s) RETURNS %s LANGUAGE plpgsql AS "
                     "$$BEGIN PERFORM hijack.hit(); RETURN QUERY SELECT * FROM public_real.%s($1); END$$"
                     % (r["proname"], r["args"], r["result"], r["proname"]))
    for v in views:
        stmts.append("CREATE FUNCTION hijack.renamed_%s() RETURNS SETOF public_real.%s LANGUAGE plpgsql AS "
                     "$$BEGIN PERFORM hijack.hit(); RETURN QUERY SELECT * FROM public_real.%s; END$$; "
                     "CREATE VIEW public.%s AS SELECT * FROM hijack.renamed_%s(); "
                     "GRANT SELECT ON public.%s TO PUBLIC" % (v, v, v, v, v, v))
    if int(value("SHOW server_version_num")) < 150000:
        # before 15 public belongs to the bootstrap superuser
        try:
            rows(stmts[0], AS_OWNER)
            refused = False
        except subprocess.CalledProcessError:
            refused = True
        ok(refused, "before PostgreSQL 15 the database's owner cannot rename public (not his)")
    else:
        rows("; ".join(stmts), AS_OWNER)
        before = calls()
        for _, sql in tools:
            attempt(sql)
        ok(calls() > before, "control: once the owner renames public, the files that name public run his "
           "views (%d calls): a schema he owns is no place for them" % (calls() - before))

    other = DB + "_own_schema"
    execute("DROP DATABASE IF EXISTS %s" % other)
    execute("CREATE DATABASE %s OWNER %s" % (other, OWNER))
    try:
        rows("CREATE SCHEMA procmem; GRANT USAGE ON SCHEMA procmem TO pg_read_all_stats; "
             "CREATE EXTENSION pg_procmem SCHEMA procmem", "dbname=" + other)
        refused = []
        for stmt in ("ALTER SCHEMA procmem RENAME TO mine",
                     "CREATE VIEW procmem.decoy AS SELECT 1",
                     "DROP VIEW procmem.pg_procmem_summary"):
            try:
                rows(stmt, "user=%s dbname=%s" % (OWNER, other))
            except subprocess.CalledProcessError:
                refused.append(stmt)
        ok(len(refused) == 3, "in a schema a superuser owns (docs/monitoring.md's remedy) the database's owner "
           "can neither rename, add to nor drop from it", refused)
        failed = []
        for name, sql in tools:
            try:
                rows(sql.replace("public.", "procmem."), "user=%s dbname=%s" % (MONITOR, other))
            except subprocess.CalledProcessError as e:
                failed.append("%s: %s" % (name, e.stderr.strip()))
        ok(not failed, "every tool query, its schema changed with docs/monitoring.md's sed, runs there", failed)
    finally:
        execute("DROP DATABASE IF EXISTS %s" % other)


def main():
    tmp = tempfile.mkdtemp(prefix="pg_procmem_hijack.")
    os.chmod(tmp, 0o755)
    setup()
    try:
        check(sys.argv[1] if len(sys.argv) > 1 else "", tmp)
        check_rename(exporter_queries() + panel_queries())
    except Exception as e:
        ok(False, "the hijack checks ran", "%s: %s" % (type(e).__name__, getattr(e, "stderr", None) or e))
    finally:
        execute("DROP DATABASE IF EXISTS %s" % DB)
        execute("DROP ROLE IF EXISTS %s; DROP ROLE IF EXISTS %s" % (OWNER, MONITOR))
        shutil.rmtree(tmp, ignore_errors=True)
    done()


if __name__ == "__main__":
    main()
