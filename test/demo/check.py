"""scripts/demo as a newcomer runs it, and README's sample of its output (TAP).

Runs scripts/demo (as root, for PG_MAJOR with PG_TREES, on a cluster of its
own at PGPORT + 1) with stdout and stderr apart, and checks: it succeeds;
it leaves no test-only module installed (PROCMEM_TEST_MODULE unset, as a
newcomer has it); every line of stdout and stderr fits 80 columns; every
heading of the demo is on stdout (progress only on stderr); the HTML report is written outside the checkout,
where the demo says at its start and its end; nothing new in the checkout;
the note on max_connections names the value the advice flags. Then
pg_temp.wrap() (scripts/demo-wrap.sql) on the server in the libpq
environment: texts the demo wraps break at spaces only. Last, README's
sample of pg_procmem_top against the demo's: the same columns, in the same
places, aligned the same way, laid out as psql does (values masked: pids and
sizes change from run to run)."""
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "py"))
from tap import ok, done, rows, width, PSQL

REPO = os.path.realpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
DEMO = os.path.join(REPO, "scripts", "demo")
WRAP_SQL = os.path.join(REPO, "scripts", "demo-wrap.sql")


# the types psql right-aligns (print.c, column_type_alignment)
NUMERIC = {"smallint", "integer", "bigint", "real", "double precision", "numeric", "oid", "xid", "xid8",
           "cid", "money"}


def checkout_files():
    """Every file git sees in the checkout, tracked or not, ignored or not,
    with its status: a file the demo adds or changes shows up here."""
    out = subprocess.run(["git", "-C", REPO, "status", "--porcelain", "--ignored", "--untracked-files=all"],
                         check=True, capture_output=True, text=True).stdout
    return set(out.splitlines())


# --- the demo, run as a newcomer does -------------------------------------

env = dict(os.environ, PGPORT=str(int(os.environ.get("PGPORT", "5499")) + 1))
env.pop("REPORT", None)
env.pop("REPORT_PNG", None)
env.pop("PROCMEM_TEST_MODULE", None)   # scripts/test's: a newcomer has none
before = checkout_files()
start = time.time()
demo = subprocess.run([DEMO], cwd=REPO, env=env, capture_output=True, text=True)
took = time.time() - start
after = checkout_files()
out, err = demo.stdout.splitlines(), demo.stderr.splitlines()
print("# scripts/demo took %.0f s" % took)
ok(demo.returncode == 0, "scripts/demo succeeds", "\n".join(err[-30:]))

pkglib = subprocess.run([os.environ["PG_CONFIG"], "--pkglibdir"],
                        capture_output=True, text=True).stdout.strip()
ok(pkglib and os.path.isfile(os.path.join(pkglib, "pg_procmem.so"))
   and not os.path.exists(os.path.join(pkglib, "procmem_test.so")),
   "the demo leaves pg_procmem.so installed and no test-only module (procmem_test.so) beside it", pkglib)

wide = [l for l in out if width(l) > 80]
ok(out and not wide, "every line of the demo's stdout fits 80 columns (%d lines)" % len(out), wide)

# its headings: each heading "..." of the source, $variables matching anything
with open(DEMO) as f:
    source = f.read()
calls = re.findall(r'^heading "(.*)"$', source, re.M)
patterns = [re.compile("== " + re.sub(r"\\\$\\\(\\\(.*?\\\)\\\)|\\\$\\\{\w+\\\}|\\\$\w+", ".+", re.escape(c)) + "$")
            for c in calls]
said = [l for l in out if l.startswith("== ")]
missing = [p.pattern for p in patterns if not any(p.match(l) for l in said)]
on_stderr = [l for l in err if any(p.match(l) for p in patterns)]
ok(len(calls) >= 12 and len(said) == len(calls) and not missing and not on_stderr,
   "the demo's %d headings are on stdout, each once, none on stderr" % len(calls),
   {"missing": missing, "on stderr": on_stderr, "stdout's headings": said})

# the report: announced at the start (progress) and at the end (stdout)
first = [err[i + 1] for i, l in enumerate(err[:-1]) if l == "== the HTML report will be written to:"]
last = [m.group(1) for m in map(re.compile(r"^== the HTML report: (.+)$").match, out) if m]
report = first[0] if first else None
ok(report and last == [report] and out[-1] == "wrote %s" % report,
   "the report's path is said at the start and at the end: %s" % report, {"start": first, "end": last})
wide_err = [l for l in err if width(l) > 80 and l not in first]
ok(err and not wide_err, "every line of the demo's stderr fits 80 columns too, but the report's path on "
   "its own line (%d lines)" % len(err), wide_err)

inside = report is None or os.path.realpath(report).startswith(REPO + os.sep)
ok(report and not inside and os.path.isfile(report) and os.path.getsize(report) > 10000
   and "<html" in open(report).read(4096).lower(),
   "the report is an HTML page outside the checkout (%s)" % REPO)
if report and not inside and re.match(r"^/tmp/pg_procmem-demo\.\w+/pg_procmem-report\.html$", report):
    shutil.rmtree(os.path.dirname(report))
ok(before == after, "the demo writes nothing new into the checkout",
   {"new or changed": sorted(after - before), "gone": sorted(before - after)})

# the note before the advice names the max_connections the advice flags
flagged = re.findall(r"\| max_connections (\d+) is ", demo.stdout)
noted = re.findall(r"max_connections\s+=\s+(\d+)\s+is\s+what\s+it\s+set", demo.stdout)
ok(noted and set(flagged) <= set(noted),
   "the note says the max_connections the advice flags (%s) is the demo's own (%s)" % (flagged, noted))

# --- pg_temp.wrap() -------------------------------------------------------

ISSUE_TEXTS = [
    # cut as "set vm.nr_hugepages >= 15+" / "5 and huge_pages = on" before
    "optional: the page tables of the server's processes would shrink only from 12 MB to about 3028 kB "
    "now (less than 1% of RAM); with a larger shared_buffers, set vm.nr_hugepages >= 155 and huge_pages = on",
    # cut as "idle_session_timeou+" / "t"
    "a transaction pooler (PgBouncer, pool_mode = transaction) serves them with a few server connections; "
    "idle_session_timeout closes the forgotten ones",
]
ODD_TEXTS = [
    "", "word", "x" * 60, "x" * 61, "a " + "y" * 70 + " b", "y" * 70 + " " + "z" * 59 + " c",
    "two  spaces  between  words " * 4, " a leading and a trailing space ", "9" * 59 + " 12345678",
]
live = rows("SELECT t FROM (SELECT evidence FROM pg_procmem_advice UNION ALL SELECT recommendation FROM pg_procmem_advice"
            " UNION ALL SELECT recommendation FROM pg_procmem_hugepages) AS a(t) WHERE t IS NOT NULL")
texts = ISSUE_TEXTS + ODD_TEXTS + [r["t"] for r in live]
cmd = [PSQL, "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-f", WRAP_SQL,
       "-c", "SELECT pg_temp.wrap(NULL) IS NULL"]
for t in texts:
    # one row per text, ended by a NUL (wrapped texts hold line breaks)
    cmd += ["-c", "SELECT pg_temp.wrap($q$%s$q$) || chr(1)" % t]
r = subprocess.run(cmd, capture_output=True, text=True)
results = r.stdout.split("\x01\n")
ok(r.returncode == 0 and results[0].startswith("t\n") and len(results) == len(texts) + 1,
   "pg_temp.wrap() runs on %d texts (%d of this server's advice), NULL gives NULL" % (len(texts), len(live)),
   r.stderr)
results[0] = results[0][2:]
bad = []
for t, w in zip(texts, results):
    lines = w.split("\n")
    why = []
    if w.replace("\n", " ") != t:
        why.append("breaks not at spaces: rejoined, it is not the text")
    if any(len(l) > 60 and " " in l for l in lines):
        why.append("a line over 60 characters has a space to break at")
    if any(len(a) + 1 + len(b.split(" ")[0]) <= 60 for a, b in zip(lines, lines[1:])):
        why.append("a line broken before a word that fits on it")
    if why:
        bad.append({"text": t, "wrapped": lines, "why": why})
ok(len(results) == len(texts) + 1 and not bad,
   "pg_temp.wrap(): every break at a space, lines of 60 at most but a longer word alone, each line full", bad)
issue_lines = [l for w in results[:2] for l in w.split("\n")]
ok(any(re.search(r"(^| )155( |$)", l) for l in issue_lines)
   and any(re.search(r"(^| )idle_session_timeout( |$)", l) for l in issue_lines),
   "the issue's two texts keep 155 and idle_session_timeout whole", issue_lines)

# --- README's sample of pg_procmem_top against the demo's output ----------


def table(lines):
    """(names, bars, rows) of a psql aligned table: its header names, the
    columns of its separator's '+', its data rows padded to full width."""
    header, sep = lines[0], lines[1]
    bars = [i for i, c in enumerate(sep) if c == "+"]
    bounds = list(zip([-1] + bars, bars + [len(sep)]))
    names = [header[a + 1:b].strip() for a, b in bounds]
    return names, bars, bounds, [l.ljust(len(sep)) for l in lines[2:]]


def cells(line, bounds):
    return [line[a + 1:b] for a, b in bounds]


def alignment(cell):
    """'right', 'left' or None (the value fills its column) of ' value '."""
    inner = cell[1:-1]
    v = inner.strip()
    if len(v) == len(inner):
        return None
    return "right" if inner.endswith(v) else "left"


def kind(value):
    """A cell's value with its figures masked: pids and sizes change."""
    m = re.sub(r"\d+(\.\d+)?", "N", value.strip())
    return "size" if re.fullmatch(r"N (bytes|kB|MB|GB|TB)", m) else m


def psql_layout(names, bars, bounds, rows_, aligns):
    """What psql prints for these cells in these columns (border 1): names
    centered (the odd space after), values padded to their alignment."""
    problems = []
    for n, (a, b) in zip(names, bounds):
        w = b - a - 3
        if len(n) > w:
            problems.append("header %r wider than its column" % n)
    head = "|".join(" %s%s%s " % (" " * ((b - a - 3 - len(n)) // 2), n, " " * ((b - a - 3 - len(n) + 1) // 2))
                    for n, (a, b) in zip(names, bounds))
    out = [head]
    for r in rows_:
        vals = [c.strip() for c in cells(r, bounds)]
        out.append("|".join(" %s " % (v.rjust(b - a - 3) if al == "right" else v.ljust(b - a - 3))
                            for v, al, (a, b) in zip(vals, aligns, bounds)))
    return out, problems


# the demo's: after its heading, up to the "(N rows)" line
top_at = next((i for i, l in enumerate(out) if l.startswith("== pg_procmem_top:")), None)
demo_block = []
for l in out[top_at + 1:] if top_at is not None else []:
    if not l or re.match(r"^\(\d+ rows?\)$", l):
        break
    demo_block.append(l)
# README's: the code block that starts with the query
with open(os.path.join(REPO, "README.md")) as f:
    readme = f.read()
m = re.search(r"^```\n(SELECT \* FROM pg_procmem_top;\n.*?)^```$", readme, re.M | re.S)
sample = m.group(1).splitlines()[1:] if m else []
if sample and sample[-1].strip() == "...":
    sample = sample[:-1]
ok(len(demo_block) >= 5 and len(sample) >= 3,
   "the demo's pg_procmem_top (%d lines) and README's sample of it (%d lines) are there"
   % (len(demo_block), len(sample)), {"demo": demo_block, "README": sample})
if len(demo_block) >= 3 and len(sample) >= 3:
    d_names, d_bars, d_bounds, d_rows = table(demo_block)
    s_names, s_bars, s_bounds, s_rows = table(sample)
    ok(s_names == d_names and sample[1].rstrip() == re.sub(r"[^+]", "-", sample[1].rstrip()),
       "README's sample has the demo's columns: %s" % ", ".join(d_names), {"demo": d_names, "README": s_names})
    # alignment per column: psql's by the view's column types (numbers
    # right, the rest left), and what the demo printed where a value is
    # shorter than its column
    types = {r["attname"]: r["typname"] for r in rows(
        "SELECT attname, atttypid::regtype::text AS typname FROM pg_attribute"
        " WHERE attrelid = 'pg_procmem_top'::regclass AND attnum > 0 AND NOT attisdropped")}
    d_align = ["right" if types.get(n) in NUMERIC else "left" for n in d_names]
    shown = [{alignment(cells(r, d_bounds)[i]) for r in d_rows} - {None} for i in range(len(d_names))]
    ok(set(types) == set(d_names) and d_align[0] == "right"
       and all(s <= {a} for s, a in zip(shown, d_align)),
       "the demo's columns are aligned as psql aligns their types (%s): %s"
       % (", ".join("%s %s" % (n, types.get(n)) for n in d_names), d_align),
       {"printed": shown})
    # psql's layout reproduced: the test's model of psql against the demo
    layout, _ = psql_layout(d_names, d_bars, d_bounds, d_rows, d_align)
    ok([l.rstrip() for l in layout] == [l.rstrip() for l in [demo_block[0]] + d_rows],
       "the test's model of psql's layout gives the demo's table back", {"model": layout})
    # README's sample: psql's layout in its own columns, the demo's alignment
    layout, problems = psql_layout(s_names, s_bars, s_bounds, s_rows, d_align)
    got = [l.rstrip() for l in [sample[0]] + s_rows]
    ok(not problems and [l.rstrip() for l in layout] == got,
       "README's sample is laid out as psql does, aligned as the demo's (pid right, the rest left)",
       {"problems": problems, "psql would print": layout, "README": got})
    # the same boundaries, but where only the digits of a number set them
    d_kinds = [{kind(cells(r, d_bounds)[i]) for r in d_rows} for i in range(len(d_names))]
    s_kinds = [{kind(cells(r, s_bounds)[i]) for r in s_rows} for i in range(len(s_names))]
    moved = [n for i, n in enumerate(d_names)
             if d_bounds[i][1] - d_bounds[i][0] != s_bounds[i][1] - s_bounds[i][0]
             and not (d_kinds[i] == {"N"} and s_kinds[i] == {"N"})]
    ok(len(s_bounds) == len(d_bounds) and not moved,
       "README's columns have the demo's widths (a pid's digits aside)",
       {"columns that differ": moved, "demo": d_bars, "README": s_bars})
    foreign = {n: sorted(s - d) for n, s, d in zip(d_names, s_kinds, d_kinds) if s - d}
    ok(not foreign, "README's values, masked, are of the kinds the demo prints in each column",
       {"README only": foreign, "demo": dict(zip(d_names, map(sorted, d_kinds)))})

if demo.returncode != 0 or wide:
    print("# the demo's stdout:")
    for l in out:
        print("#   " + l)
done()
