"""The floor plan of src/ holds (TAP; run by make unit): every file lives in
a layer's folder, includes only its own layer's headers and those below,
no module includes its way back to itself, the plain-C layers include no
PostgreSQL header, and no .c file passes 1,000 lines.

The layers, bottom up (docs/architecture.md draws them):
  linux/    readers of /proc and /sys, plain C
  rules/    policy and formats on those figures, plain C
  server/   PostgreSQL glue every feature uses
  guard/    the memory guard
  history/  the memory history and its sampler
  sql/      the SQL-callable functions
  pg_procmem.c, the module: _PG_init alone
A module is a .c file with its .h; it includes what its .c and .h include."""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "py"))
import tap  # noqa: E402

SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "src")
LAYERS = ["linux", "rules", "server", "guard", "history", "sql", "."]
PLAIN = {"linux", "rules"}
# includes that run up a layer, each with why (at most one may stand)
UP_ALLOWED = {}
MAX_LINES = 1000
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
# every #include, however written (quotes, angle brackets, a macro)
ANY_INCLUDE = re.compile(r'^\s*#\s*include\s*(\S.*?)\s*(?:/[/*].*)?$', re.M)
# a macro naming a PostgreSQL header that moved between majors (compat.h)
MACRO_INCLUDES = {"PROCMEM_QUERYJUMBLE_H"}
ARCH = os.path.join(SRC, "..", "docs", "architecture.md")


def layer_of(rel):
    d = os.path.dirname(rel) or "."
    return d


def project_header(name):
    d = name.split("/")[0]
    return "/" in name and d in LAYERS


files = {}
for root, _, names in os.walk(SRC):
    for n in names:
        if n.endswith((".c", ".h")):
            rel = os.path.relpath(os.path.join(root, n), SRC)
            with open(os.path.join(root, n), encoding="utf-8") as f:
                files[rel] = f.read()

misplaced = [f for f in files if layer_of(f) not in LAYERS or (layer_of(f) == "." and f != "pg_procmem.c")]
tap.ok(not misplaced, "every file of src/ is in a layer's folder (or is the module file)", misplaced)

up, bad_target, plain_pg = [], [], []
for f, text in sorted(files.items()):
    rank = LAYERS.index(layer_of(f)) if layer_of(f) in LAYERS else -1
    for inc in INCLUDE.findall(text):
        if project_header(inc):
            if inc not in files:
                bad_target.append("%s: %s" % (f, inc))
            elif LAYERS.index(layer_of(inc)) > rank and (f, inc) not in UP_ALLOWED:
                up.append("%s includes %s" % (f, inc))
        elif layer_of(f) in PLAIN:
            plain_pg.append("%s: %s" % (f, inc))
tap.ok(not bad_target, "every project include names a file that exists", bad_target)

# A project header reached another way (<layer/x.h>, "../layer/x.h", a bare
# "x.h" beside the file, a macro) would slip past the checks above: every
# include of a file of src/ is written "layer/x.h", and no other macro.
odd = []
for f, text in sorted(files.items()):
    here = os.path.dirname(f)
    for spec in ANY_INCLUDE.findall(text):
        if spec[0] not in '<"':
            if spec not in MACRO_INCLUDES:
                odd.append("%s: #include %s" % (f, spec))
            continue
        name = spec[1:-1]
        mine = {os.path.normpath(os.path.join(here, name)), os.path.normpath(name)} & set(files)
        if mine and not (spec[0] == '"' and project_header(name) and name in files):
            odd.append("%s: #include %s" % (f, spec))
tap.ok(not odd, 'every include of a file of src/ is written "layer/file.h"', odd)
tap.ok(not up, "no file includes a header from a layer above its own", up)
tap.ok(len(UP_ALLOWED) <= 1, "at most one include runs up a layer, and says why", UP_ALLOWED)
tap.ok(not plain_pg, "linux/ and rules/ include no PostgreSQL header (nor any outside them)", plain_pg)

# the module graph: foo.c and foo.h are one module
graph = {}
for f, text in files.items():
    mod = os.path.splitext(f)[0]
    for inc in INCLUDE.findall(text):
        if project_header(inc) and inc in files:
            dep = os.path.splitext(inc)[0]
            if dep != mod:
                graph.setdefault(mod, set()).add(dep)


def find_cycle():
    state, stack = {}, []

    def visit(m):
        state[m] = 1
        stack.append(m)
        for d in sorted(graph.get(m, ())):
            if state.get(d) == 1:
                return stack[stack.index(d):] + [d]
            if d not in state:
                c = visit(d)
                if c:
                    return c
        stack.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state:
            c = visit(m)
            if c:
                return c
    return None


cycle = find_cycle()
tap.ok(cycle is None, "no module includes its way back to itself", " -> ".join(cycle or []))

long_files = ["%s: %d lines" % (f, t.count("\n")) for f, t in sorted(files.items())
              if f.endswith(".c") and t.count("\n") > MAX_LINES]
tap.ok(not long_files, "no .c file passes %d lines" % MAX_LINES, long_files)

# docs/architecture.md's Layout names every file of src/, and no other
with open(ARCH, encoding="utf-8") as f:
    arch = f.read()
layout = arch[arch.index("## Layout"):]
layout = layout[layout.index("```") + 3:]
layout = layout[:layout.index("```")]
named, folder = set(), None
for line in layout.splitlines():
    m = re.match(r"^src/([a-z_]+)/\s*$", line)
    if m:
        folder = m.group(1)
        continue
    m = re.match(r"^src/([a-z_]+\.[ch])\s", line)
    if m:
        named.add(m.group(1))
        continue
    m = re.match(r"^  ([a-z_]+)\.(\[ch\]|c|h)\s", line) if folder else None
    if m:
        for ext in ("c", "h") if m.group(2) == "[ch]" else (m.group(2),):
            named.add("%s/%s.%s" % (folder, m.group(1), ext))
    elif not line.startswith(" "):
        folder = None
tap.ok(named == set(files), "docs/architecture.md's Layout names every file of src/, and no other",
       "not named: %s; not in src/: %s" % (sorted(set(files) - named), sorted(named - set(files))))
tap.done()
