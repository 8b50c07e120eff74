"""TAP test of scripts/report (stdlib only).

Runs against the server in PGHOST/PGPORT/PGUSER/PGDATABASE (a superuser,
pg_procmem installed): writes the report once, then opens a dozen idle
connections alike and writes it again. Checks the page is self-contained;
leads with the findings, then the totals, then the processes; shows the
dozen as one row with their count and lists no process twice; leaves out
the report's own connection; prints totals that agree with each other and
with SQL; prints every size it computes in a unit that keeps it between 1
and 1023, with at most four significant digits (size() and ticks() are
also tested alone), gives the time charts' y axes round marks, and labels
the machine, huge pages and OOM tables in words, not column names.
Renders both pages in headless Chromium (skipped if /usr/bin/chromium is
missing): the chart colors are in the screenshot, the dozen connections
did not make the page longer, and at 800 and 600 px wide nothing is cut
(a wide table scrolls in its own box, a chart shrinks, no legend key leaves
its chart's box); at 800 px no table scrolls and every chart's text is
10.5 px or more. The machine's chart has a legend key only for a line it
draws (the test server has no cgroup limit). Then, with the
extension in a schema of its own in another database, real roles get the
error that names what they lack: USAGE on that schema, pg_read_all_stats,
or both; a database without the extension says so.
$REPORT_SCREENSHOT, if set, receives a copy of the screenshot.
"""
import html
import importlib.machinery
import importlib.util
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "py"))
from tap import ok, section, skip_rest, done, rows, value, execute, PSQL

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
REPORT = os.path.join(REPO, "scripts", "report")
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                  "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--hide-scrollbars",
                  "--window-size=1200,1800"]
TALL = "--window-size=1200,9000"  # taller than the page: its height can be measured
COLORS = {"private": (0xd6, 0x27, 0x28), "page tables": (0xff, 0x7f, 0x0e),
          "shared": (0x9e, 0xca, 0xe1)}
# the legends hold 10x10 swatches: the bars must add more
MIN_PIXELS = {"private": 500, "page tables": 150, "shared": 500}
NOBODY = "procmem_report_nobody"
CHROMIUM_TESTS = 12
REFLOW_WIDTHS = (800, 600)
IDLE = 12             # idle connections alike, opened between the two reports
IDLE_APP = "procmem_report_idle"
# what the page says a size is: a figure (a sign, no thousands separators)
# and a unit; size_ok() adds: at most four significant digits, under 1024
SIZE_RE = re.compile(r"^-?(\d+(?:\.\d+)?) (bytes|kB|MB|GB|TB|PB)$")
UNITS = ["bytes", "kB", "MB", "GB", "TB", "PB"]
SNAKE_RE = re.compile(r"\b[a-z][a-z0-9]*_[a-z0-9_]+\b")


def load_report():
    """scripts/report as a module (it has no .py suffix), for its size()
    and ticks()."""
    loader = importlib.machinery.SourceFileLoader("pg_procmem_report", REPORT)
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader(loader.name, loader))
    loader.exec_module(module)
    return module


R = load_report()
size = R.size


def size_ok(text):
    """A size as the page must print it: at most four significant digits,
    from 1 to 1023 in its unit (bytes aside, 0 bytes included)."""
    m = SIZE_RE.match(text)
    if not m:
        return False
    digits = m.group(1).replace(".", "").lstrip("0")
    return len(digits) <= 4 and (m.group(2) == "bytes" or 1 <= float(m.group(1)) < 1024)


def run(cmd, timeout=120, **kw):
    """subprocess.run, killing the whole process group on timeout."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True, **kw)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        err += "\n(timed out after %d s)" % timeout
        p.returncode = -9
    return p.returncode, out, err


def chart(doc, chart_id):
    """The text of <svg id=chart_id>...</svg> in a page or a DOM dump."""
    m = re.search(r'<svg[^>]*id="%s".*?</svg>' % re.escape(chart_id), doc, re.S)
    return m.group(0) if m else ""


def attrs(text):
    return {k: html.unescape(v) for k, v in re.findall(r'([\w-]+)="([^"]*)"', text)}


def listed_pids(doc):
    """The pids of the processes listed one by one."""
    return [int(p) for p in re.findall(r'<tr class="proc" data-pid="(\d+)"', doc)]


def groups(doc):
    """The grouped rows: their attributes, their total's bytes, their text."""
    out = []
    for m in re.finditer(r'<tr class="group" ([^>]*)>(.*?)</tr>', doc, re.S):
        g = attrs(m.group(1))
        total = re.search(r'class="num group-total" data-bytes="(\d+)"[^>]*>([^<]*)<', m.group(2))
        g["bytes"], g["text"] = (int(total.group(1)), total.group(2)) if total else (None, None)
        g["html"] = m.group(2)
        out.append(g)
    return out


def total_row(doc, row_id):
    """(bytes, text) of a row of the totals table."""
    m = re.search(r'<tr [^>]*id="%s"[^>]*>(.*?)</tr>' % row_id, doc, re.S)
    b = m and re.search(r'data-bytes="(-?\d*)"[^>]*>([^<]*)<', m.group(1))
    return (int(b.group(1)) if b.group(1) else None, b.group(2)) if b else (None, None)


def section_at(doc, name):
    return doc.find('<section id="%s"' % name)


def visible_text(doc):
    """The page's text, less what it quotes from the views as they print
    it and the note that says what the unit is."""
    doc = re.sub(r'<(\w+) class="quoted">[^<]*</\1>', " ", doc)
    doc = re.sub(r'<p class="note" id="units">.*?</p>', " ", doc, flags=re.S)
    doc = re.sub(r"<style>.*?</style>|<title>.*?</title>", " ", doc, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", " ", doc))


def open_idle(n, app):
    """n idle sessions (psql waiting on its input); returns them once the
    server shows them idle."""
    env = dict(os.environ, PGAPPNAME=app)
    procs = []
    for _ in range(n):
        p = subprocess.Popen([PSQL, "-X", "-q"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, text=True, env=env, start_new_session=True)
        p.stdin.write("SELECT 1;\n")
        p.stdin.flush()
        procs.append(p)
    for _ in range(300):
        if int(value("SELECT count(*) FROM pg_stat_activity WHERE application_name = '%s' "
                     "AND state = 'idle'" % app)) >= n:
            break
        time.sleep(0.1)
    return procs


def close_idle(procs):
    for p in procs:
        try:
            p.stdin.close()
            p.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    return a if pa <= pb and pa <= pc else (b if pb <= pc else c)


def read_png(path):
    """(width, height, channels, rows): 8-bit RGB/RGBA, non-interlaced."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, ihdr = 8, [], None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
        pos += 12 + length
    width, height, depth, ctype, _, _, interlace = ihdr
    if depth != 8 or ctype not in (2, 6) or interlace:
        raise ValueError("unsupported PNG: depth %d, color type %d, interlace %d"
                         % (depth, ctype, interlace))
    bpp = 3 if ctype == 2 else 4
    raw, stride = zlib.decompress(b"".join(idat)), width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if f == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 255
        elif f == 2:
            for i in range(stride):
                line[i] = (line[i] + prev[i]) & 255
        elif f == 3:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 255
        elif f == 4:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                upleft = prev[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + paeth(left, prev[i], upleft)) & 255
        elif f != 0:
            raise ValueError("bad filter type %d in row %d" % (f, y))
        rows.append(line)
        prev = line
    return width, height, bpp, rows


def color_counts(rows, bpp):
    """How many pixels have each RGB color."""
    counts = {}
    for line in rows:
        for i in range(0, len(line), bpp):
            key = bytes(line[i:i + 3])
            counts[key] = counts.get(key, 0) + 1
    return counts


def near(counts, rgb, tolerance=6):
    return sum(c for k, c in counts.items() if all(abs(k[j] - rgb[j]) <= tolerance for j in range(3)))


def page_height(png):
    """The last row of the screenshot with anything drawn on it."""
    width, height, bpp, lines = read_png(png)
    for y in range(height - 1, -1, -1):
        if any(b < 245 for b in lines[y]):
            return y + 1
    return 0


def screenshot(tmp, page, png, size_flag=None):
    flags = [f for f in CHROMIUM_FLAGS if not (size_flag and f.startswith("--window-size"))]
    rc, out, err = run([CHROMIUM] + flags + ([size_flag] if size_flag else []) + [
        "--user-data-dir=" + tempfile.mkdtemp(dir=tmp), "--screenshot=" + png, "file://" + page])
    return rc, err


# Run in a copy of the page (the page itself has no script), every list
# unfolded: what is cut at the window's width. The page must be no wider
# than the window; every table, chart and text block must lie within it,
# or within a box that scrolls it; nothing may be clipped by an
# overflow of hidden; no chart may draw outside its own box.
REFLOW_PROBE = """(function () {
  var W = window.innerWidth, bad = [];
  function name(el) {
    return el.tagName.toLowerCase() + (el.id ? "#" + el.id : "");
  }
  function scroller(el) {
    for (var a = el.parentElement; a; a = a.parentElement) {
      var o = getComputedStyle(a).overflowX;
      if (o == "auto" || o == "scroll") return a;
    }
    return null;
  }
  var de = document.documentElement;
  if (de.scrollWidth > W) bad.push("the page is " + de.scrollWidth + " px wide");
  document.querySelectorAll("table, svg, p, h1, h2, h3, summary, .box, .figure").forEach(function (el) {
    var box = scroller(el), r = (box || el).getBoundingClientRect();
    if (r.width && (r.left < -0.5 || r.right > W + 0.5))
      bad.push(name(el) + (box ? " (its scroll box)" : "") + " spans " + Math.round(r.left)
               + " to " + Math.round(r.right) + " px");
  });
  document.querySelectorAll("body *").forEach(function (el) {
    var o = getComputedStyle(el).overflowX;
    if ((o == "hidden" || o == "clip") && !(el instanceof SVGElement)
        && el.scrollWidth > el.clientWidth + 1)
      bad.push(name(el) + " clips " + el.scrollWidth + " px to " + el.clientWidth);
  });
  document.querySelectorAll("svg").forEach(function (svg) {
    var vb = svg.viewBox.baseVal, w = vb && vb.width ? vb.width : svg.width.baseVal.value;
    svg.querySelectorAll("text, rect, line, polygon, polyline").forEach(function (t) {
      var b = t.getBBox();
      if (b.x < -0.5 || b.x + b.width > w + 0.5)
        bad.push(name(svg) + ": " + t.tagName + " '" + (t.textContent || "").slice(0, 30)
                 + "' spans " + Math.round(b.x) + " to " + Math.round(b.x + b.width) + " of " + w);
    });
  });
  // the tables that need their box to scroll; a chart's text as it is
  // drawn (its font size times the chart's scale); legend keys out of
  // their chart's box
  var scrolling = [], small = [], legends = [];
  document.querySelectorAll(".scroll").forEach(function (el) {
    if (el.scrollWidth > el.clientWidth + 1) {
      var sec = el.closest("section, details, div[id]");
      scrolling.push((sec ? name(sec) : "?") + " " + el.scrollWidth + " px in " + el.clientWidth);
    }
  });
  document.querySelectorAll(".figure").forEach(function (fig) {
    var box = fig.getBoundingClientRect();
    fig.querySelectorAll("svg.chart text, .legend .key").forEach(function (t) {
      var svg = t.closest("svg"), scale = 1;
      if (svg) scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
      var px = parseFloat(getComputedStyle(t).fontSize) * scale;
      var label = (svg ? name(svg) : "legend") + " '" + (t.textContent || "").slice(0, 30) + "'";
      if (px < 10.5) small.push(label + " " + px.toFixed(1) + " px");
      if (!svg) {
        var r = t.getBoundingClientRect();
        if (r.left < box.left - 0.5 || r.right > box.right + 0.5 || r.bottom > box.bottom + 0.5
            || t.scrollWidth > Math.ceil(r.width) + 1)
          legends.push(label + " spans " + Math.round(r.left) + " to " + Math.round(r.right)
                       + " px of " + Math.round(box.left) + " to " + Math.round(box.right));
      }
    });
  });
  // words of 4 letters or more that a line break cuts in two (a file
  // name split mid-word), and table cells of short words (the OOM table's
  // "If killed") taller than two lines
  // (a break after a hyphen is no cut; an application name, any string,
  // may break anywhere: overflow-wrap: anywhere says so)
  var split = [], tall = [];
  document.querySelectorAll("td, p, li, .box").forEach(function (el) {
    var walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT), node;
    while ((node = walker.nextNode())) {
      if (node.parentElement.closest("svg, pre")) continue;
      if (getComputedStyle(node.parentElement).overflowWrap == "anywhere") continue;
      var re = /[^\s-]{4,}/g, m;
      while ((m = re.exec(node.data))) {
        var range = document.createRange();
        range.setStart(node, m.index);
        range.setEnd(node, m.index + m[0].length);
        var lines = {};
        Array.prototype.forEach.call(range.getClientRects(), function (r) {
          if (r.width > 0) lines[Math.round(r.top)] = 1;
        });
        if (Object.keys(lines).length > 1) split.push(name(el.closest("[id]") || el) + " '" + m[0].slice(0, 40) + "'");
      }
    }
  });
  document.querySelectorAll('td[data-column="if_killed"]').forEach(function (td) {
    var lh = parseFloat(getComputedStyle(td).lineHeight) || 1.2 * parseFloat(getComputedStyle(td).fontSize);
    var range = document.createRange();
    range.selectNodeContents(td);
    var lines = {};
    Array.prototype.forEach.call(range.getClientRects(), function (r) { lines[Math.round(r.top)] = 1; });
    if (Object.keys(lines).length > 2) tall.push("'" + td.textContent + "' on " + Object.keys(lines).length + " lines");
  });
  var out = document.createElement("pre");
  out.id = "reflow-result";
  out.textContent = JSON.stringify({width: W, scrolling: scrolling, small: small,
                                    legends: legends, bad: bad, split: split.slice(0, 20),
                                    tall: tall.slice(0, 20)});
  document.body.appendChild(out);
})();"""


def reflow(tmp, page, width):
    """What REFLOW_PROBE finds in the page at width px: a dict, or None."""
    doc = open(page, encoding="utf-8").read().replace("<details", "<details open")
    probe = os.path.join(tmp, "reflow-%d.html" % width)
    with open(probe, "w", encoding="utf-8") as f:
        f.write(doc.replace("</body>", "<script>%s</script></body>" % REFLOW_PROBE))
    flags = [f for f in CHROMIUM_FLAGS if not f.startswith("--window-size")]
    rc, dom, err = run([CHROMIUM] + flags + ["--window-size=%d,2000" % width,
                                             "--user-data-dir=" + tempfile.mkdtemp(dir=tmp),
                                             "--dump-dom", "file://" + probe])
    m = re.search(r'<pre id="reflow-result">(.*?)</pre>', dom, re.S)
    return json.loads(html.unescape(m.group(1))) if rc == 0 and m else None


def check_chromium(tmp, page, before, doc):
    if not os.path.exists(CHROMIUM):
        skip_rest("chromium is not installed")
    png = os.path.join(tmp, "report.png")
    rc, err = screenshot(tmp, page, png)
    ok(rc == 0 and os.path.exists(png), "chromium renders the report to a PNG",
        "exit %s\n%s" % (rc, err[-2000:]))
    rc, dom, err = run([CHROMIUM] + CHROMIUM_FLAGS + [
        "--user-data-dir=" + tempfile.mkdtemp(dir=tmp), "--dump-dom", "file://" + page])
    want = len(groups(doc))
    got = len(groups(dom))
    ok(rc == 0 and got == want and chart(dom, "chart-totals") and chart(dom, "chart-hugepages")
       and "<details" in dom and "<details open" not in dom,
       "the rendered DOM has the totals and huge pages charts, the %d grouped rows, and the "
       "one-by-one list folded" % want, "exit %s, %d grouped rows\n%s" % (rc, got, err[-2000:]))
    # the page with a dozen more idle connections alike is no longer than
    # the one without but for a few rows (a group that was not there, an
    # advice finding that more idle connections bring, a cell's text
    # wrapping anew: 137 px seen on 14); one row per process would add 12
    # rows of 44 px, 528
    heights = []
    for name, path in (("before", before), ("after", page)):
        tall = os.path.join(tmp, "tall-%s.png" % name)
        screenshot(tmp, path, tall, TALL)
        try:
            heights.append(page_height(tall))
        except (OSError, ValueError, TypeError, zlib.error):
            heights.append(None)
    ok(None not in heights and heights[1] - heights[0] <= 250 and heights[1] < 4000,
       "%d more idle connections alike add at most 250 px to the page: %s px before, %s px after, "
       "under 4,000 (one row per process added 44 px a connection; the cgroup's chart, a row of its own, "
       "about 250)" % (IDLE, heights[0], heights[1]))
    for w in REFLOW_WIDTHS:
        got = reflow(tmp, page, w)
        ok(got and got["width"] == w and not got["bad"] and not got["legends"],
           "at %d px wide nothing is cut: the page is no wider, a wide table scrolls in its own "
           "box (%s do here), the charts shrink, no legend key leaves its chart's box"
           % (w, got and len(got["scrolling"])), json.dumps(got, indent=1)[:4000])
        if w == 800:
            ok(got and not got["scrolling"] and not got["small"],
               "at 800 px wide no table needs its box to scroll (the processes' bars shrink, "
               "their text wraps), and every chart's text and legend is drawn at 10.5 px or more",
               json.dumps(got, indent=1)[:4000])
            ok(got and not got["split"] and not got["tall"],
               "at 800 px wide no word (a file name) is cut across two lines, and no \"If killed\" "
               "cell takes more than two", json.dumps(got and {"split": got["split"], "tall": got["tall"]},
                                                     indent=1))
    try:
        width, height, bpp, lines = read_png(png)
    except (OSError, ValueError, TypeError, zlib.error) as e:
        for desc in ("screenshot is 1200 px wide", "private color present",
                     "page tables color present", "shared color present", "screenshot not blank"):
            ok(False, desc, "cannot read %s: %s" % (png, e))
        return
    if os.environ.get("REPORT_SCREENSHOT"):
        shutil.copyfile(png, os.environ["REPORT_SCREENSHOT"])
    ok(width == 1200, "screenshot is 1200 px wide", "width %d" % width)
    counts = color_counts(lines, bpp)
    for name, rgb in COLORS.items():
        got = near(counts, rgb)
        ok(got >= MIN_PIXELS[name], "%s segments visible: %d pixels of #%02x%02x%02x (>= %d)"
            % (name, got, rgb[0], rgb[1], rgb[2], MIN_PIXELS[name]))
    total = width * height
    blank = near(counts, (255, 255, 255), 3)
    ok(total - blank > total * 0.02, "screenshot is not blank: %.1f%% non-white pixels"
        % (100.0 * (total - blank) / total))


def write_report(page):
    rc, out, err = run([REPORT, "-o", page])
    doc = open(page, encoding="utf-8").read() if rc == 0 and os.path.exists(page) else ""
    return rc, err, doc


IDLE_KEY_SQL = """SELECT count(*) FROM pg_procmem_backends
WHERE backend_type = 'client backend' AND usename = current_user
  AND datname = current_database() AND state = 'idle'"""


def guard_action():
    """A statement over its own pg_procmem.max_backend_memory (where
    preloaded): an action of the guard's for the page to show."""
    subprocess.run([os.environ.get("PSQL", "psql"), "-X", "-q", "-c", "SET pg_procmem.max_backend_memory = '64MB'",
                    "-c", "SET work_mem = '1GB'", "-c",
                    "SELECT count(*) FROM (SELECT g, md5(g::text) FROM generate_series(1, 3000000) g ORDER BY 2) s"],
                   capture_output=True, text=True)


def check_report(tmp):
    guard_action()
    before = os.path.join(tmp, "before.html")
    rc_before, err_before, _ = write_report(before)
    advice_before = {r["check_name"] for r in rows("SELECT check_name FROM pg_procmem_advice")}
    idle = open_idle(IDLE, IDLE_APP)
    try:
        idle_pids = {int(r["pid"]) for r in rows(
            "SELECT pid FROM pg_stat_activity WHERE application_name = '%s'" % IDLE_APP)}
        alike_before = int(value(IDLE_KEY_SQL))
        page = os.path.join(tmp, "report.html")
        rc, err, doc = write_report(page)
        alike_after = int(value(IDLE_KEY_SQL))
        direct = rows("SELECT sum(overhead) AS overhead, count(*) AS processes "
                      "FROM pg_procmem_backends WHERE pid <> pg_backend_pid()")[0]
        advice_after = {r["check_name"] for r in rows("SELECT check_name FROM pg_procmem_advice")}
        check_page(tmp, page, before, rc or rc_before, err + err_before, doc, idle_pids, (alike_before, alike_after), direct,
                   (advice_before, advice_after))
    finally:
        close_idle(idle)


def check_page(tmp, page, before, rc, err, doc, idle_pids, alike, direct, advice):
    ok(rc == 0 and doc, "scripts/report exits 0 and writes the page (twice)",
       "exit %s\n%s" % (rc, err))
    external = [s for s in ("http://", "https://", "<script", "<link", "@import", "url(")
                if s in doc.lower()]
    ok(doc.startswith("<!DOCTYPE html>") and not external,
        "the page is self-contained (no scripts, links, imports or URLs)",
        "found: %s" % ", ".join(external))

    # findings first, then totals, then processes, then the rest
    order = [(s, section_at(doc, s)) for s in ("findings", "totals", "processes", "hugepages",
                                               "system", "oom")]
    at = [a for _, a in order]
    ok(-1 not in at and at == sorted(at),
       "sections in order: findings, totals, processes, then huge pages, system, OOM", order)
    findings = doc[at[0]:at[1]] if -1 not in at else ""
    checks = re.findall(r'<tr class="finding" data-check="([^"]*)"><td><span class="sev sev-(\w+)"',
                        findings)
    names = {c for c, _ in checks}
    rank = {"critical": 0, "warning": 1, "info": 2}
    sev = [rank.get(s, 3) for _, s in checks]
    # oom_auxiliary_first weighs the auxiliary processes against every client
    # backend, the asking session included: the report's session, larger
    # than the test's, can tip it either way
    asker = {"oom_auxiliary_first"}
    ok((advice[0] & advice[1]) - asker <= names <= advice[0] | advice[1] and len(names) == len(checks)
       and sev == sorted(sev),
       "the findings are pg_procmem_advice's rows, each once, the most severe first",
       "page: %s\nview before: %s, after: %s" % (checks, sorted(advice[0]), sorted(advice[1])))

    # identical processes: one row with their count
    gs = groups(doc)
    keys = [(g["data-type"], g["data-user"], g["data-db"], g["data-state"]) for g in gs]
    mine = [g for g in gs if (g["data-type"], g["data-state"]) == ("client backend", "idle")
            and g["data-user"] == value("SELECT current_user")
            and g["data-db"] == value("SELECT current_database()")]
    count = int(mine[0]["data-count"]) if len(mine) == 1 else None
    exact = alike[0] == alike[1]
    ok(len(set(keys)) == len(keys) and len(mine) == 1 and count >= IDLE
       and (count == alike[1] if exact else min(alike) <= count <= max(alike)),
       "the %d idle connections alike are one grouped row counting them all: %s (the view "
       "counts %d before the report, %d after)" % (IDLE, count, alike[0], alike[1]),
       "groups: %s" % keys)
    listed = listed_pids(doc)
    twice = sorted({p for p in listed if listed.count(p) > 1})
    all_pids = [int(p) for p in re.findall(r'data-pid="(\d+)"', doc)]
    ok(not twice and idle_pids <= set(listed) and all(all_pids.count(p) == 1 for p in idle_pids)
       and re.search(r'<details id="all-processes">', doc),
       "no process listed twice: one by one only in the folded list (%d there)" % len(listed),
       "twice: %s; idle missing: %s" % (twice, sorted(idle_pids - set(listed))))

    # the report's own connection: left out, and named
    # (its application_name is scripts/report's "pg_procmem report")
    own = re.search(r'<span id="report-pid" data-pid="(\d+)">', doc)
    own_pid = int(own.group(1)) if own else None
    in_groups = [g["html"] for g in gs if "pg_procmem report" in g["html"]]
    ok(own_pid and all_pids.count(own_pid) == 1 and own_pid not in listed and not in_groups
       and doc.count(">pid %d<" % own_pid) == 1,
       "the report's own connection (pid %s) is named once, and is in no group and not in the "
       "list" % own_pid, "groups with it: %s" % in_groups)

    # the totals: once each, agreeing with each other and with SQL
    total, text = total_row(doc, "total-overhead")
    client, _ = total_row(doc, "total-client")
    background, _ = total_row(doc, "total-background")
    others = re.findall(r'class="num total-overhead" data-bytes="(\d+)"[^>]*>([^<]*)<', doc)
    group_sum = sum(g["bytes"] or 0 for g in gs)
    list_sum = sum(int(b) for b in re.findall(
        r'<tr class="proc" data-pid="\d+">(?:<td[^>]*>[^<]*</td>){6}<td class="num" data-bytes="(\d*)"',
        doc) if b)
    n = re.search(r"(\d+) process(?:es)? of this server", doc)
    n = int(n.group(1)) if n else None
    group_n = sum(int(g["data-count"]) for g in gs)
    ok(total is not None and text == size(total) and others and
       all(int(b) == total and t == text for b, t in others) and group_sum == total
       and client + background == total and (list_sum == total or len(listed) < n)
       and n == group_n == len(listed),
       "one processes' total, %s, everywhere: the groups, the list, client backends plus the "
       "rest add up to it (%s processes)" % (text, n),
       "total %s (%s), elsewhere %s, groups %s, list %s, client %s + rest %s; counts: %s, "
       "groups %s, list %d" % (total, text, others, group_sum, list_sum, client, background, n,
                               group_n, len(listed)))
    sql_total, sql_n = int(direct["overhead"] or 0), int(direct["processes"])
    ok(total is not None and abs(total - sql_total) <= max(1048576, sql_total * 0.01)
       and abs(n - sql_n) <= 1,
       "the total agrees with SQL's sum over pg_procmem_backends less the asking session: "
       "%s and %s; %s and %d processes" % (size(total or 0), size(sql_total), n, sql_n))
    shared, _ = total_row(doc, "total-shared")
    cow, _ = total_row(doc, "total-cow")
    held, held_text = total_row(doc, "total-held")
    ok(None not in (shared, cow, held) and held == total + shared + cow
       and ">%s<" % held_text in chart(doc, "chart-totals"),
       "what the server holds is the processes' total, shared memory and copy-on-write pages: "
       "%s, also on the chart" % held_text)

    # every size the page works out: readable, and each cell's text is its bytes
    # (an axis's marks are a scale in one unit, 0.5 GB among them: tested below)
    text = visible_text(re.sub(r'<text class="num tick"[^>]*>[^<]*</text>', "", doc))
    other_units = [u for u in re.findall(r"\d\s*(?:bytes|[kKMGTP]i?B)\b", text)
                   if not re.search(r"\d (bytes|kB|MB|GB|TB|PB)$", u)]
    sizes = re.findall(r"-?[\d,.]+ (?:bytes|kB|MB|GB|TB|PB)\b", text)
    bad = [s for s in sizes if not size_ok(s)]
    cells = re.findall(r'data-bytes="(-?\d*)"[^>]*>([^<]*)<', doc)
    bad += ["%s for %s bytes" % (t, b) for b, t in cells
            if t != (size(int(b)) if b else "\u2014") or (b and not size_ok(t))]
    ok(not other_units and not bad and len(sizes) >= 20 and len(cells) >= 20,
       "every size the page works out has at most four significant digits, 1 to 1023 of its "
       "unit, and says its cell's bytes (%d sizes, %d cells)" % (len(sizes), len(cells)),
       "other units: %s\nbadly formatted: %s" % (other_units[:10], bad[:10]))

    # the time charts' y axes: 0 and round marks of one unit, evenly spaced,
    # the last at or above the highest point drawn
    for chart_id in ("chart-history-overhead", "chart-history-pagetables", "chart-history-system") + \
            (("chart-history-cgroup",) if chart(doc, "chart-history-cgroup") else ()):
        svg = chart(doc, chart_id)
        labels = [(float(y), t) for y, t in re.findall(
            r'<text class="num tick"[^>]* y="([\d.]+)"[^>]*>([^<]*)<', svg)]
        got = [t for _, t in labels]
        marks = [re.match(r"^(\d+(?:\.\d+)?) (bytes|kB|MB|GB|TB|PB)$", t) for t in got[1:]]
        ys = [y for y, _ in labels]
        even = len(ys) >= 3 and max(ys[i] - ys[i + 1] for i in range(len(ys) - 1)) - \
            min(ys[i] - ys[i + 1] for i in range(len(ys) - 1)) < 0.5
        values = [float(m.group(1)) for m in marks if m]
        steps = {round(b - a, 6) for a, b in zip([0.0] + values, values)}
        round_step = len(steps) == 1 and ("%.6f" % steps.pop()).replace(".", "").strip("0") in (
            "1", "2", "25", "5")
        ok(3 <= len(got) <= 5 and got[0] == "0" and all(marks) and len({m.group(2) for m in marks}) == 1
           and even and round_step,
           "%s: a y axis of round, evenly spaced marks: %s" % (chart_id, ", ".join(got)),
           svg[:3000])

    # the machine, huge pages and OOM tables: words, not the views' column names
    labels = []
    for name in ("system", "hugepages", "oom"):
        at = section_at(doc, name)
        part = doc[at:doc.index("</section>", at)] if at >= 0 else ""
        labels += [html.unescape(re.sub(r"<[^>]+>", "", t))
                   for t in re.findall(r"<th[^>]*>(.*?)</th>", part, re.S)]
        labels += [re.sub(r"<[^>]+>", "", t) for t in re.findall(r"<h3>(.*?)</h3>", re.sub(
            r'<span class="view">[^<]*</span>', "", part))]
    snake = [t for t in labels if SNAKE_RE.search(t)]
    ok(len(labels) >= 30 and not snake,
       "the machine, huge pages and OOM tables label their %d rows and columns in words "
       "(Memory available, Huge pages total), no snake_case column name" % len(labels),
       "snake_case labels: %s" % snake)

    rec = value("SELECT recommendation FROM pg_procmem_hugepages")
    # the text quotes page tables measured at each read: compare it with the
    # figures masked ("1508 kB" and "10 MB" both read "#")
    mask = lambda t: re.sub(r"[0-9]+(\.[0-9]+)?( (bytes|kB|MB|GB|TB))?", "#", t)
    ok(rec and mask(html.escape(rec, quote=True)) in mask(doc),
       "the huge pages recommendation is in the page (figures aside)", "recommendation: %s" % rec)
    missing = [c for c in ("mem_total", "work_mem_exposure_ratio", "if_killed") if c not in doc]
    ok(not missing, "the system, headroom and OOM tables are there", "missing: %s" % missing)
    # the test server is preloaded: its memory history is charted
    samples = int(value("SELECT count(*) FROM pg_procmem_history_system"))
    over = chart(doc, "chart-history-overhead")
    shown = re.search(r"(\d+) samples of the memory history", doc)
    ok(samples >= 1 and 'id="history"' in doc and shown and abs(int(shown.group(1)) - samples) <= 2
       and "checkpointer" in over and "<polygon" in over and chart(doc, "chart-history-system"),
       "memory over time: overhead stacked by backend type, the machine beside it (%d samples)" % samples)
    # a legend key only for a line drawn: the test server has no cgroup limit
    # (a cgroup of its own, if any, unlimited), so no limit line and no key.
    # MemAvailable on a chart of its own, the cgroup on another, each scaled
    # to its figures
    limits = int(value("SELECT count(cgroup_limit) FROM pg_procmem_history_system_samples(true)"))
    keyed = {}
    for chart_id in ("chart-history-system", "chart-history-cgroup"):
        m = re.search(r'<div class="figure"><svg[^>]*id="%s".*?</svg>'
                      r'<div class="legend">(.*?)</div></div>' % chart_id, doc, re.S)
        keys = re.findall(r'<span class="key"><i [^>]*></i>([^<]*)</span>', m.group(1)) if m else []
        lines = list(dict.fromkeys(re.findall(r'<polyline [^>]*><title>([^<]*)</title>', m.group(0) if m else "")))
        keyed[chart_id] = (keys, lines)
    ok(keyed["chart-history-system"][0] == keyed["chart-history-system"][1] == ["MemAvailable"]
       and keyed["chart-history-cgroup"][0] == keyed["chart-history-cgroup"][1]
       and ("cgroup limit" in keyed["chart-history-cgroup"][0]) == (limits > 0)
       and ('id="no-cgroup-limit"' in doc) == (limits == 0),
       "the machine's chart draws MemAvailable alone, the cgroup's its usage and limit, each with a "
       "legend key for each line it draws and only those (%d samples with a cgroup limit)" % limits, keyed)
    crashes = int(value("SELECT count(*) FROM pg_procmem_crashes"))
    ok(('id="crashes"' in doc) == (crashes > 0),
       "a crash section exactly when pg_procmem_crashes has rows (%d here)" % crashes)
    guard = rows("SELECT action_number, pid FROM pg_procmem_guard_actions ORDER BY acted_at DESC LIMIT 1")
    ok(('id="guard"' in doc) == bool(guard) and
       (not guard or ("#%s" % guard[0]["action_number"]) in doc and ("PID %s" % guard[0]["pid"]) in doc),
       "a memory guard section exactly when pg_procmem_guard_actions has rows (%s), naming the newest"
       % ("pid %s" % guard[0]["pid"] if guard else "none here"))
    with section(CHROMIUM_TESTS, "chromium"):
        check_chromium(tmp, page, before, doc)


def check_history_charts(tmp):
    """The history's charts from made-up samples: a sample without a cgroup
    limit breaks its line (drawn as 0 it read as a limit of nothing), and a
    1.5 GB cgroup is charted to its own scale, not MemAvailable's 20 GB."""
    GiB = 1 << 30
    system = [{"t": str(1000 + i), "mem_available": str(20 * GiB), "page_tables": str(1 << 20),
               "cgroup_usage": str(int((0.5 + i / 10) * GiB)), "cgroup_limit": None if i in (3, 4) else str(int(1.5 * GiB))}
              for i in range(10)]
    doc = R.history_section([], system, [])
    cg = chart(doc, "chart-history-cgroup")
    limit_lines = re.findall(r'<polyline points="([^"]*)"[^>]*><title>cgroup limit</title>', cg)
    # the plot's bottom, where 0 is: time_chart's x axis line
    zero = float(re.search(r'<line x1="\d+" y1="(\d+)" x2="\d+" y2="\1" stroke="#999"/>', cg).group(1))
    bottom = [p for l in limit_lines for p in l.split() if abs(float(p.split(",")[1]) - zero) < 0.5]
    ok(len(limit_lines) == 2 and not bottom,
       "the cgroup limit's line is broken where 2 samples have none (2 lines), no point drawn at 0",
       limit_lines)
    ticks_ = re.findall(r'<text class="num tick"[^>]*>([^<]*)<', cg)
    ok(ticks_ and ticks_[-1] == "1.5 GB" and "MemAvailable" not in cg and "MemAvailable" in chart(doc, "chart-history-system"),
       "a 1.5 GB cgroup's chart tops at 1.5 GB (%s), MemAvailable (20 GB) on the machine's chart" % ", ".join(ticks_))


def check_units(tmp):
    """size() and ticks() alone: the figures the page prints."""
    MiB, GiB = 1 << 20, 1 << 30
    cases = [(None, "\u2014"), (0, "0 bytes"), (512, "512 bytes"), (1023, "1023 bytes"),
             (1024, "1.00 kB"), (1536, "1.50 kB"), (24105.6 * MiB, "23.5 GB"),
             (512 * MiB, "512 MB"), (1023.4 * MiB, "1023 MB"), (1023.7 * MiB, "1.00 GB"),
             (9.996 * MiB, "10.0 MB"), (99.96 * MiB, "100 MB"), (3.52 * MiB, "3.52 MB"),
             (-1.5 * MiB, "-1.50 MB"), (-0.2, "0 bytes"), (20 * GiB * 1024, "20.0 TB"),
             ("25276063744", "23.5 GB")]
    wrong = [(v, size(v), want) for v, want in cases if size(v) != want]
    ok(not wrong, "size(): %s" % ", ".join(w for _, w in cases[1:9]),
       "\n".join("size(%r) = %r, not %r" % w for w in wrong))
    # every figure from a byte to a petabyte, 41 a decade: readable and close
    bad = []
    for e in range(0, 16 * 41):
        v = 10 ** (e / 41.0)
        t = size(v)
        n, unit = t.split()
        back = float(n) * 1024 ** UNITS.index(unit)
        if not size_ok(t) or abs(back - v) > max(0.005 * v, 0.5):
            bad.append("%g -> %s" % (v, t))
    ok(not bad, "size() of 656 figures from 1 byte to 1 PB: four significant digits at most, "
       "1 to 1023 of the unit, within 0.5%", bad[:10])

    cases = [(15.3 * GiB, ["0", "5 GB", "10 GB", "15 GB", "20 GB"]),
             (3.52 * MiB, ["0", "1 MB", "2 MB", "3 MB", "4 MB"]),
             (800 * MiB, ["0", "200 MB", "400 MB", "600 MB", "800 MB"]),
             (1.2 * GiB, ["0", "0.5 GB", "1 GB", "1.5 GB"]),
             (1000 * MiB, ["0", "250 MB", "500 MB", "750 MB", "1000 MB"]),
             (0, ["0", "1 bytes"]), (7, ["0", "2 bytes", "4 bytes", "6 bytes", "8 bytes"])]
    wrong = [(v, [t for _, t in R.ticks(v)[1]], want) for v, want in cases
             if [t for _, t in R.ticks(v)[1]] != want]
    ok(not wrong, "ticks(): %s" % "; ".join(", ".join(w) for _, w in cases[:3]),
       "\n".join("ticks(%r) = %r, not %r" % w for w in wrong))
    bad = []
    for e in range(0, 16 * 41):
        v = 10 ** (e / 41.0)
        top, marks = R.ticks(v)
        step = marks[1][0] - marks[0][0]
        mantissa = ("%.6e" % (step / 1024 ** UNITS.index(marks[-1][1].split()[1]))).split("e")[0]
        if not (top >= v and 2 <= len(marks) <= 5 and top == marks[-1][0]
                and (top - step < v or len(marks) == 2)
                and mantissa.rstrip("0").rstrip(".") in ("1", "2", "2.5", "5")
                and len({t.split()[1] for _, t in marks[1:]}) == 1):
            bad.append("%g -> %s" % (v, [t for _, t in marks]))
    ok(not bad, "ticks() of 656 peaks from 1 byte to 1 PB: 0 and up to 4 steps of 1, 2, 2.5 or 5 "
       "in one unit, the last mark the first at or above the peak", bad[:10])


ELSEWHERE_DB = "procmem_report_elsewhere"
ELSEWHERE_SCHEMA = "procmem_mon"
ROLES = {"stats": "procmem_report_stats",     # pg_read_all_stats, no USAGE
         "usage": "procmem_report_usage",     # USAGE, not pg_read_all_stats
         "none": "procmem_report_none",       # neither
         "both": "procmem_report_both"}       # pg_monitor and USAGE


def psql_in(db, sql):
    subprocess.run([PSQL, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", db, "-c", sql],
                   check=True, capture_output=True, text=True)


def drop_elsewhere():
    execute("DROP DATABASE IF EXISTS %s WITH (FORCE)" % ELSEWHERE_DB)
    for r in ROLES.values():
        execute("DROP ROLE IF EXISTS %s" % r)


def check_access(tmp):
    """Real roles against the extension in a schema of its own (not on
    anyone's search_path), in a database of its own: each error names what
    the role lacks, and the GRANT."""
    drop_elsewhere()
    execute("CREATE DATABASE %s" % ELSEWHERE_DB)
    try:
        psql_in(ELSEWHERE_DB, "CREATE SCHEMA {s}; CREATE EXTENSION pg_procmem SCHEMA {s};"
                "CREATE ROLE {stats} LOGIN IN ROLE pg_read_all_stats; CREATE ROLE {usage} LOGIN;"
                "CREATE ROLE {none} LOGIN; CREATE ROLE {both} LOGIN IN ROLE pg_monitor;"
                "GRANT USAGE ON SCHEMA {s} TO {usage}, {both};".format(s=ELSEWHERE_SCHEMA, **ROLES))
        page = os.path.join(tmp, "access.html")

        def report(role, db=ELSEWHERE_DB):
            if os.path.exists(page):
                os.unlink(page)
            rc, out, err = run([REPORT, "dbname=%s user=%s" % (db, role), "-o", page])
            return rc, err, os.path.exists(page)

        usage_hint = 'GRANT USAGE ON SCHEMA "%s" TO "%%s"' % ELSEWHERE_SCHEMA
        stats_hint = 'GRANT pg_monitor TO "%s"'
        rc, err, wrote = report(ROLES["stats"])
        ok(rc != 0 and not wrote and "permission denied for schema" in err
           and usage_hint % ROLES["stats"] in err and "pg_monitor" not in err
           and "neither superuser" not in err,
           "pg_read_all_stats without USAGE on the extension's schema: the hint is the GRANT USAGE, "
           "not pg_read_all_stats", err)
        rc, err, wrote = report(ROLES["usage"])
        ok(rc != 0 and not wrote and "permission denied" in err and stats_hint % ROLES["usage"] in err
           and "GRANT USAGE" not in err,
           "USAGE without pg_read_all_stats: the hint is GRANT pg_monitor, not USAGE", err)
        rc, err, wrote = report(ROLES["none"])
        ok(rc != 0 and not wrote and usage_hint % ROLES["none"] in err
           and stats_hint % ROLES["none"] in err,
           "neither: both hints", err)
        rc, err, wrote = report(ROLES["both"])
        ok(rc == 0 and wrote and not err.strip(),
           "pg_monitor and USAGE: the report is written, the schema on no search_path", err)
        rc, err, wrote = report(ROLES["both"], "template1")
        ok(rc != 0 and not wrote and "not installed in database template1" in err
           and "permission" not in err and "HINT" not in err,
           "a database without the extension: says so, no privilege hint", err)
        # the extension where the test server has it (public), a role with nothing
        execute("DROP ROLE IF EXISTS %s; CREATE ROLE %s LOGIN" % (NOBODY, NOBODY))
        rc, err, wrote = report(NOBODY, value("SELECT current_database()"))
        ok(rc != 0 and not wrote and "permission denied" in err and stats_hint % NOBODY in err
           and "GRANT USAGE" not in err,
           "a role without privileges, the extension in public: fails, the hint is "
           "GRANT pg_monitor, and no page", err)
    finally:
        execute("DROP ROLE IF EXISTS %s" % NOBODY)
        drop_elsewhere()


def main():
    tmp = tempfile.mkdtemp(prefix="pg_procmem_report.")
    os.chmod(tmp, 0o755)
    try:
        for part in (check_units, check_history_charts, check_report, check_access):
            try:
                part(tmp)
            except Exception as e:  # report it as a failure, go on with the rest
                ok(False, "%s ran to the end" % part.__name__, "%s: %s" % (type(e).__name__, e))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    done()


if __name__ == "__main__":
    main()
