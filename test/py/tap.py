"""TAP output, psql access and /proc/meminfo for every Python test (each puts
test/py on sys.path; the live tests of a cluster they restart, load and
crash have cluster.py here too).

The server is the one in the libpq environment (PGHOST, PGPORT, PGUSER,
PGDATABASE), a superuser; queries go through psql, so nothing but the
standard library is needed."""
import contextlib
import csv
import io
import os
import re
import unicodedata
import subprocess
import sys
import time

PSQL = os.environ.get("PSQL", "psql")
_n = 0
_failed = 0
_skipped = 0
_skip_why = ""


def ok(cond, desc, diag=None):
    """One TAP test line; diag is printed as a comment when it fails."""
    global _n, _failed
    _n += 1
    print(("ok" if cond else "not ok") + " %d - %s" % (_n, desc), flush=True)
    if not cond:
        _failed += 1
        if diag is not None:
            # a list's items one to a line: a CI that cuts long lines still
            # shows each of them
            items = diag if isinstance(diag, (list, tuple)) else [diag]
            for item in items:
                for line in str(item).splitlines():
                    print("# " + line)
    return cond


def skip(count, why):
    """Says count tests could not run here, and why: scripts/test counts
    SKIPPED lines, not as passed; a file that ran nothing else plans 1..0."""
    global _skipped, _skip_why
    _skipped += count
    _skip_why = why
    print("SKIPPED %d tests: %s" % (count, why), flush=True)


class _SkipRest(Exception):
    def __init__(self, why):
        super().__init__(why)
        self.why = why


def skip_rest(why):
    """Skips what is left of the innermost section(), with the reason."""
    raise _SkipRest(why)


@contextlib.contextmanager
def section(planned, name):
    """A run of tests that may not be able to run here. planned is how many
    tests it holds: skip_rest() inside it skips those not yet run, and a
    section that runs (or skips) another number than planned fails, so a
    skip never stands for more or fewer tests than it replaces."""
    start = _n + _skipped
    try:
        yield
    except _SkipRest as e:
        left = planned - (_n + _skipped - start)
        if left >= 0:
            skip(left, e.why)
            return
    ran = _n + _skipped - start
    if ran != planned:
        ok(False, "%s: planned %d tests, ran or skipped %d (its planned count is wrong)" % (name, planned, ran))


def done():
    print("1..%d%s" % (_n, " # SKIP " + _skip_why if _skipped and not _n else ""))
    sys.exit(1 if _failed else 0)


def _stopped(kind, exc, tb):
    """A test file that raised (a query that failed or never answered, a
    process gone): one failing test that says why, the traceback as
    comments, and the plan, so that prove reports a failure, not "No plan
    found", and the suite goes on to its next file."""
    import traceback
    if issubclass(kind, KeyboardInterrupt):
        sys.__excepthook__(kind, exc, tb)
        return
    what = "%s: %s" % (kind.__name__, str(exc).splitlines()[0] if str(exc) else "")
    if isinstance(exc, subprocess.CalledProcessError) and str(exc.stderr or "").strip():
        what += " (%s)" % str(exc.stderr).strip().splitlines()[-1]
    ok(False, "the test file stopped after test %d: %s" % (_n, what),
       "".join(traceback.format_exception(kind, exc, tb)))
    sys.stdout.flush()
    done()


sys.excepthook = _stopped

# A query that never answers (a backend stuck, a timer never set again) is
# a failure that says so, not a suite that hangs: each psql call gets this
# long (seconds; PSQL_TIMEOUT)
PSQL_TIMEOUT = int(os.environ.get("PSQL_TIMEOUT", "600"))


def rows(sql, conninfo="", setup=()):
    """The rows of one query, as dicts of strings (NULL is None), run in one
    session after the setup statements (SET ...)."""
    cmd = [PSQL, "-X", "-q", "--csv", "-v", "ON_ERROR_STOP=1", "-P", "null=\\N",
           "-d", conninfo or os.environ.get("PGDATABASE", "postgres")]
    for s in setup:
        cmd += ["-c", s]
    out = subprocess.run(cmd + ["-c", sql], check=True, capture_output=True, text=True,
                         timeout=PSQL_TIMEOUT).stdout
    return [{k: (None if v == "\\N" else v) for k, v in r.items()}
            for r in csv.DictReader(io.StringIO(out))]


def value(sql, conninfo=""):
    """The first column of the first row of one query."""
    r = rows(sql, conninfo)
    return next(iter(r[0].values())) if r else None


def execute(sql):
    r = subprocess.run([PSQL, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-c", sql],
                       capture_output=True, text=True, timeout=PSQL_TIMEOUT)
    if r.returncode != 0:
        # psql's own words, not only a CalledProcessError
        sys.stderr.write("psql failed (%d) on: %s\n%s" % (r.returncode, sql, r.stderr))
        r.check_returncode()


def drop_role(role):
    """DROP ROLE once the role's sessions have gone: a backend still
    exiting (its temporary objects being dropped) made DROP ROLE fail with
    "cache lookup failed for relation" (PostgreSQL 16, and elsewhere)."""
    for attempt in range(50):
        if value("SELECT count(*) FROM pg_stat_activity WHERE usename = '%s'" % role) == "0":
            break
        time.sleep(0.1)
    for attempt in range(3):
        try:
            execute("DROP ROLE IF EXISTS %s" % role)
            return
        except subprocess.CalledProcessError:
            if attempt == 2:
                raise
            time.sleep(0.5)


def meminfo(field):
    """A /proc/meminfo field: bytes for "kB" fields, else the count."""
    with open("/proc/meminfo") as f:
        for line in f:
            k, v = line.split(":")
            if k == field:
                n = int(v.split()[0])
                return n * 1024 if v.strip().endswith("kB") else n
    return None


# README's question table: | question | `SELECT ...;` |, the query alone in
# its cell, one code span with no | or backtick inside
_QUESTION = re.compile(r"^\| (?P<question>[^|`]+?) \| `(?P<query>SELECT [^|`]*)` \|$")


def readme_questions():
    """README's one-query-per-question table: the (question, query) rows,
    and every row of the table that does not have that form."""
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "README.md")) as f:
        body = f.read().split("## One query per question", 1)[1].split("\n## ", 1)[0]
    lines = [l for l in body.splitlines() if l.startswith("|")][2:]
    found = [_QUESTION.match(l) for l in lines]
    return ([(m["question"], m["query"]) for m in found if m],
            [l for l, m in zip(lines, found) if not m])


def width(line):
    """Terminal columns psql's line takes: wide and full-width characters two."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in line)
