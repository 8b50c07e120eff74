"""monitoring/datadog's custom queries through the Datadog Agent's own
QueryManager (PyPI's datadog-checks-base) against the test server, as a
pg_monitor role: what the Agent would submit, checked against the server
(TAP). Runs in the venv scripts/lib.sh's ensure_datadog_venv makes:

    .cache/datadog-venv/bin/python test/monitoring/datadog.py
"""
import logging
import os
import sys

import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "py"))
from tap import ok, skip, section, done, execute, drop_role, value, meminfo

REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
ROLE = "procmem_datadog"
PLANNED = 8


class Errors(logging.Handler):
    """What the check and its QueryManager log at WARNING and above."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.records = []

    def emit(self, record):
        self.records.append(record.getMessage())


def conf(name):
    with open(os.path.join(REPO, "monitoring", "datadog", name)) as f:
        return yaml.safe_load(f)


def make_check(custom_queries, psycopg, AgentCheck, QueryManager):
    instance = dict(conf("conf.yaml")["instances"][0], custom_queries=custom_queries,
                    tags=["test:procmem"])

    class Postgres(AgentCheck):
        """The postgres check's custom-query path: a QueryManager over the
        instance's custom_queries, on one connection."""

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.conn = psycopg.connect(host=os.environ["PGHOST"], port=os.environ["PGPORT"], user=ROLE,
                                        dbname=os.environ.get("PGDATABASE", "postgres"), autocommit=True,
                                        options="-c search_path=pg_catalog")
            self.qm = QueryManager(self, self.execute, tags=self.instance.get("tags", []))
            self.check_initializations.append(self.qm.compile_queries)

        def execute(self, query):
            with self.conn.cursor() as cur:
                cur.execute(query)
                return cur.fetchall()

        def check(self, _):
            self.qm.execute()

    return Postgres("postgres", {}, [instance])


def expected(custom_queries):
    """{metric name: (submission type, tag names)} the queries declare."""
    out = {}
    for q in custom_queries:
        tags = [c["name"] for c in q["columns"] if c["type"] == "tag"]
        for c in q["columns"]:
            if c["type"] != "tag":
                out["%s.%s" % (q["metric_prefix"].rstrip("."), c["name"])] = (c["type"], tags)
    return out


def main():
    try:
        import psycopg
        from datadog_checks.base import AgentCheck
        from datadog_checks.base.utils.db import QueryManager
        from datadog_checks.base.stubs import aggregator
    except ImportError as e:
        skip(PLANNED, "datadog-checks-base or psycopg missing (PyPI could not be reached): %s" % e)
        done()
    execute("DROP ROLE IF EXISTS %s; CREATE ROLE %s LOGIN IN ROLE pg_monitor" % (ROLE, ROLE))
    errors = Errors()
    logging.getLogger().addHandler(errors)
    try:
        with section(PLANNED, "datadog"):
            check(psycopg, AgentCheck, QueryManager, aggregator, errors)
    finally:
        drop_role(ROLE)
    done()


def check(psycopg, AgentCheck, QueryManager, aggregator, errors):
    kinds = {"gauge": aggregator.GAUGE, "monotonic_count": aggregator.MONOTONIC_COUNT}
    cqs = conf("conf.yaml")["instances"][0]["custom_queries"]
    want = expected(cqs)
    c = make_check(cqs, psycopg, AgentCheck, QueryManager)
    aggregator.reset()
    result = c.run()
    ok(result == "" and not errors.records, "the check ran the custom queries without an error logged",
       (result, errors.records))

    got = {m: aggregator.metrics(m) for m in aggregator.metric_names}
    # the Agent submits nothing for a NULL (no cgroup limit, no idle backend)
    null = set()
    for q in cqs:
        try:
            rows = c.execute(q["query"])
        except Exception:  # a failing query: the first test says so
            continue
        for i, col in enumerate(q["columns"]):
            if col["type"] != "tag" and all(r[i] is None for r in rows) and rows:
                null.add("%s.%s" % (q["metric_prefix"], col["name"]))
    ok(set(got) <= set(want) and set(want) - set(got) <= null,
       "one metric per declared value column (but those NULL now), no other",
       (sorted(set(want) - set(got) - null), sorted(set(got) - set(want))))
    ok(all(s.type == kinds[want[m][0]] for m, ss in got.items() if m in want for s in ss),
       "gauge columns submitted as gauges, monotonic_count columns as monotonic counts",
       [(m, s.type, want[m][0]) for m, ss in got.items() if m in want for s in ss
        if s.type != kinds[want[m][0]]][:10])
    bad = []
    for m, ss in got.items():
        for s in ss:
            names = sorted(t.split(":", 1)[0] for t in s.tags)
            if names != sorted(want.get(m, (None, []))[1] + ["test"]):
                bad.append((m, s.tags))
    ok(not bad, "each sample carries the instance's tags and one name:value tag per tag column", bad[:10])

    ckpt = [s.value for s in got.get("pg_procmem.backend_type.overhead", [])
            if "backend_type:checkpointer" in s.tags]
    ok(len(ckpt) == 1 and ckpt[0] > 0,
       "pg_procmem.backend_type.overhead tagged backend_type:checkpointer is positive", ckpt)
    total = [s.value for s in got.get("pg_procmem.system.mem_total", [])]
    ok(total == [meminfo("MemTotal")], "pg_procmem.system.mem_total is /proc/meminfo's MemTotal",
       (total, meminfo("MemTotal")))

    # a second run at once: the slow queries wait for their collection_interval
    slow = {"%s.%s" % (q["metric_prefix"], col["name"]) for q in cqs if q.get("collection_interval")
            for col in q["columns"] if col["type"] != "tag"}
    aggregator.reset()
    c.run()
    again = set(aggregator.metric_names)
    ok(slow and not (again & slow) and again == set(got) - slow,
       "run again at once: the slow queries wait for their collection_interval, the others run",
       (sorted(again & slow), sorted(set(got) - slow - again)))

    # the opt-in file: one series per process, tagged by pid
    per = conf("custom_queries_per_process.yaml")["custom_queries"]
    aggregator.reset()
    errors.records.clear()
    r = make_check(per, psycopg, AgentCheck, QueryManager).run()
    pm = value("SELECT pid FROM pg_procmem_backends WHERE backend_type = 'postmaster'")
    v = [s.value for s in aggregator.metrics("pg_procmem.process.overhead") if "pid:%s" % pm in s.tags]
    ok(r == "" and not errors.records and len(v) == 1 and v[0] > 0,
       "custom_queries_per_process.yaml: the postmaster's overhead, tagged by its pid",
       (r, errors.records, v))


if __name__ == "__main__":
    main()
