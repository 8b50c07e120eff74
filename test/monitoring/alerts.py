"""The alert rules made from monitoring/alerts.toml, with Prometheus's own
promtool (TAP): the rule files are valid, the PrometheusRules' spec.groups
are the rules, every case passes (promtool test rules), and each case set
fails when any threshold is doubled or halved; every series the rules name
is one the postgres_exporter file exports.

    python3 test/monitoring/alerts.py PROMETHEUS_BIN_DIR   (its promtool)
    python3 test/monitoring/alerts.py ''                   (none: skipped)
"""
import importlib.machinery
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile

import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "py"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import toolrules as R  # noqa: E402
from tap import ok, skip, done

REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
RULES = os.path.join(REPO, "monitoring", "prometheus")


def generator():
    """scripts/monitoring as a module (it has no .py)."""
    path = os.path.join(REPO, "scripts", "monitoring")
    loader = importlib.machinery.SourceFileLoader("monitoring_files", path)
    spec = importlib.util.spec_from_loader("monitoring_files", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


def promtool(*args):
    r = subprocess.run([PROMTOOL] + list(args), capture_output=True, text=True, timeout=120)
    return r.returncode, (r.stdout + r.stderr).strip()


def run_tests(tmp, rules_text, tests_text, rules_name="rules.yml"):
    """promtool test rules on tests_text, its rule_files the given rules."""
    with open(os.path.join(tmp, rules_name), "w") as f:
        f.write(rules_text)
    tests_text = re.sub(r"(?m)^rule_files:\n  - .*$", "rule_files:\n  - " + rules_name, tests_text)
    with open(os.path.join(tmp, "tests.yml"), "w") as f:
        f.write(tests_text)
    return promtool("test", "rules", os.path.join(tmp, "tests.yml"))


def changed(v, up):
    if v == 0:
        return 1 if up else -1
    return v * 2 if up else v / 2


def mutations(a):
    """(what, old, new) changes of one alert's rule that its cases must
    notice: old None drops its for; else the first old in its expression
    becomes new. A comparison is taken one at a time."""
    out = []
    if "for" in a:
        out.append(("no for (it was %s)" % a["for"], None, None))
    expr = a["expr_made"]
    for op in (" > ", " < "):
        for i in range(expr.count(op)):
            # the i-th comparison of that kind takes its bound
            out.append(("the %s%s taking its bound" % ("second " if i else "", op.strip()), op, bound(op, i)))
    if "increase(" in expr:
        out.append(("delta() for increase()", "increase(", "delta("))
    # a rule whose lower side cannot be seen (a count is 1 or more where it exists): no >=
    return [m for m in out if a.get("down", True) or m[1] != " > "]


def bound(op, i):
    """Makes the i-th op of an expression op= (a function of the rule)."""
    def make(rule):
        parts = rule["expr_made"].split(op)
        return op.join(parts[:i + 1]) + op.rstrip() + "= " + op.join(parts[i + 1:])
    return make


def main():
    global PROMTOOL
    if not sys.argv[1:] or not sys.argv[1]:
        skip(1, "no promtool (Debian's prometheus package could not be had)")
        return done()
    PROMTOOL = os.path.join(sys.argv[1], "promtool")
    gen = generator()
    alerts = gen.load_alerts()
    with open(os.path.join(RULES, "pg_procmem.rules.yml")) as f:
        rules_text = f.read()
    with open(os.path.join(RULES, "pg_procmem.rules.test.yml")) as f:
        tests_text = f.read()

    rc, out = promtool("check", "rules", os.path.join(RULES, "pg_procmem.rules.yml"))
    ok(rc == 0 and "SUCCESS: %d rules found" % len(alerts) in out,
       "promtool check rules: pg_procmem.rules.yml's %d rules are valid" % len(alerts), out)
    rc, out = promtool("test", "rules", os.path.join(RULES, "pg_procmem.rules.test.yml"))
    cases = sum(len(a["cases"]) for a in alerts)
    ok(rc == 0 and "SUCCESS" in out, "promtool test rules: the %d cases pass, as shipped" % cases, out)
    ok(all(any(c["fires"] for c in a["cases"]) and any(not c["fires"] for c in a["cases"]) for a in alerts),
       "every alert has a case where it fires and one where it must not",
       [a["name"] for a in alerts if len({c["fires"] for c in a["cases"]}) < 2])

    names = set(R.exporter_file_series())
    used = {n for a in alerts for n in re.findall(r"pg_procmem_\w+", a["expr_made"])}
    ok(used and used <= names, "the %d series the rules name are all names the postgres_exporter file "
       "exports (so the OpenTelemetry files' too)" % len(used), sorted(used - names))

    tmp = tempfile.mkdtemp(prefix="pg_procmem-alerts-")
    try:
        for rel, prefix in (("prometheus/pg_procmem-prometheusrule.yaml", ""),
                            ("cloudnative-pg/pg-procmem-prometheusrule.yaml", "cnpg_")):
            with open(os.path.join(REPO, "monitoring", rel)) as f:
                doc = yaml.safe_load(f)
            spec = {"groups": doc["spec"]["groups"]}
            text = yaml.safe_dump(spec, sort_keys=False)
            same = yaml.safe_load(rules_text)
            for rule in same["groups"][0]["rules"]:
                rule["expr"] = rule["expr"].replace("pg_procmem_", prefix + "pg_procmem_")
            path = os.path.join(tmp, "spec.yml")
            with open(path, "w") as f:
                f.write(text)
            rc, out = promtool("check", "rules", path)
            # a PrometheusRule's spec.groups is a rule file: the same rules, CloudNativePG's names
            ok(doc["apiVersion"] == "monitoring.coreos.com/v1" and doc["kind"] == "PrometheusRule"
               and spec == same and rc == 0,
               "%s: a PrometheusRule whose spec.groups are the rules%s (promtool check rules)"
               % (rel, " with cnpg_ names" if prefix else ""), out)
            series = re.sub(r'(series: ")pg_procmem_', r"\1" + prefix + "pg_procmem_", tests_text)
            rc, out = run_tests(tmp, text, series)
            ok(rc == 0 and prefix in series, "%s: the cases pass against its spec.groups" % rel, out)

        # each threshold changed, up and down: some case must fail
        for a in alerts:
            for key, v in a["thresholds"].items():
                for up in (True, False) if a.get("down", True) else (True,):
                    w = changed(v, up)
                    mutated = gen.alert_rules(gen.load_alerts({(a["name"], key): w}), 0)
                    rc, out = run_tests(tmp, mutated, tests_text)
                    ok(rc != 0 and a["name"] in out,
                       "%s: with %s %s instead of %s, promtool test rules fails (on its cases)"
                       % (a["name"], key, gen.number(w), gen.number(v)), out[-1500:])
        # and each comparison taking its bound, each for dropped, increase() made delta()
        for a in alerts:
            for what, old, new in mutations(a):
                mutated = [dict(b) for b in alerts]
                m = next(b for b in mutated if b["name"] == a["name"])
                if old is None:
                    del m["for"]
                else:
                    m["expr_made"] = new.join(m["expr_made"].split(old, 1)) if isinstance(new, str) else new(m)
                rc, out = run_tests(tmp, gen.alert_rules(mutated, 0), tests_text)
                ok(rc != 0 and a["name"] in out, "%s: with %s, promtool test rules fails (on its cases)"
                   % (a["name"], what), out[-1500:])
        # and the cases are the shipped rules': unchanged, they pass from the temporary folder too
        rc, out = run_tests(tmp, gen.alert_rules(gen.load_alerts(), 0), tests_text)
        ok(rc == 0, "the rules made again pass the cases (the changed ones failed for their threshold)", out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return done()


if __name__ == "__main__":
    sys.exit(main())
