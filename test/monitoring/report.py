"""TAP test of scripts/report (stdlib only).

Runs against the server in PGHOST/PGPORT/PGUSER/PGDATABASE (a superuser,
pg_procmem installed): writes the report, checks it is self-contained and
complete, renders it in headless Chromium (skipped if /usr/bin/chromium is
missing) and looks for the chart colors in the screenshot, then checks that
a role without privileges gets a clear error. $REPORT_SCREENSHOT, if set,
receives a copy of the screenshot.
"""
import html
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "py"))
from tap import ok, skip, done, rows, value, execute

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
REPORT = os.path.join(REPO, "scripts", "report")
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                  "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--hide-scrollbars",
                  "--window-size=1200,1800"]
COLORS = {"private": (0xd6, 0x27, 0x28), "page tables": (0xff, 0x7f, 0x0e),
          "shared": (0x9e, 0xca, 0xe1)}
# the legends hold 10x10 swatches (private twice): the bars must add more
MIN_PIXELS = {"private": 500, "page tables": 150, "shared": 500}
NOBODY = "procmem_report_nobody"
CHROMIUM_TESTS = 7


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


def pids(svg):
    return [int(p) for p in re.findall(r'<g class="proc" data-pid="(\d+)"', svg)]


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


def check_chromium(tmp, page, expected):
    if not os.path.exists(CHROMIUM):
        skip(CHROMIUM_TESTS, "chromium is not installed")
        return
    png = os.path.join(tmp, "report.png")
    url = "file://" + page
    rc, out, err = run([CHROMIUM] + CHROMIUM_FLAGS + [
        "--user-data-dir=" + tempfile.mkdtemp(dir=tmp), "--screenshot=" + png, url])
    ok(rc == 0 and os.path.exists(png), "chromium renders the report to a PNG",
        "exit %s\n%s" % (rc, err[-2000:]))
    rc, dom, err = run([CHROMIUM] + CHROMIUM_FLAGS + [
        "--user-data-dir=" + tempfile.mkdtemp(dir=tmp), "--dump-dom", url])
    got = len(pids(chart(dom, "chart-overhead")))
    ok(rc == 0 and abs(got - expected) <= 1 and "chart-rss" in dom and "chart-hugepages" in dom,
        "the rendered DOM has the three SVG charts, %d process bars (expected %d)" % (got, expected),
        "exit %s\n%s" % (rc, err[-2000:]))
    try:
        width, height, bpp, rows = read_png(png)
    except (OSError, ValueError, TypeError, zlib.error) as e:
        for desc in ("screenshot is 1200 px wide", "private color present",
                     "page tables color present", "shared color present", "screenshot not blank"):
            ok(False, desc, "cannot read %s: %s" % (png, e))
        return
    if os.environ.get("REPORT_SCREENSHOT"):
        shutil.copyfile(png, os.environ["REPORT_SCREENSHOT"])
    ok(width == 1200, "screenshot is 1200 px wide", "width %d" % width)
    counts = color_counts(rows, bpp)
    for name, rgb in COLORS.items():
        got = near(counts, rgb)
        ok(got >= MIN_PIXELS[name], "%s segments visible: %d pixels of #%02x%02x%02x (>= %d)"
            % (name, got, rgb[0], rgb[1], rgb[2], MIN_PIXELS[name]))
    total = width * height
    blank = near(counts, (255, 255, 255), 3)
    ok(total - blank > total * 0.02, "screenshot is not blank: %.1f%% non-white pixels"
        % (100.0 * (total - blank) / total))


def check_report(tmp):
    page = os.path.join(tmp, "report.html")
    rc, out, err = run([REPORT, "-o", page])
    ok(rc == 0 and os.path.exists(page), "scripts/report exits 0 and writes the page",
        "exit %s\n%s" % (rc, err))
    doc = open(page, encoding="utf-8").read() if os.path.exists(page) else ""
    external = [s for s in ("http://", "https://", "<script", "<link", "@import", "url(")
                if s in doc.lower()]
    ok(doc.startswith("<!DOCTYPE html>") and not external,
        "the page is self-contained (no scripts, links, imports or URLs)",
        "found: %s" % ", ".join(external))

    expected = int(value("SELECT count(*) FROM pg_procmem_backends"))
    cost, rss = pids(chart(doc, "chart-overhead")), pids(chart(doc, "chart-rss"))
    ok(abs(len(cost) - expected) <= 1 and len(rss) == len(cost),
        "one bar per process in both charts: %d and %d, the view has %d now "
        "(a process may come or go in between: 1 off allowed)" % (len(cost), len(rss), expected))

    postmaster = int(value("SELECT pid FROM pg_procmem_backends WHERE backend_type = 'postmaster'"))
    live = {int(r["pid"]) for r in rows("SELECT pid FROM pg_procmem_backends")}
    gone = set(cost) - live
    # the report's own backend has ended since; allow one more to come and go
    ok(postmaster in cost and len(gone) <= 2,
        "the bars are the server's processes (postmaster %d among them, %d gone since)"
        % (postmaster, len(gone)), "gone: %s" % sorted(gone))

    rec = value("SELECT recommendation FROM pg_procmem_hugepages")
    # the text quotes page tables measured at each read: compare it with the
    # figures masked ("1508 kB" and "10 MB" both read "#")
    mask = lambda t: re.sub(r"[0-9]+(\.[0-9]+)?( (bytes|kB|MB|GB|TB))?", "#", t)
    ok(rec and mask(html.escape(rec, quote=True)) in mask(doc),
       "the huge pages recommendation is in the page (figures aside)", "recommendation: %s" % rec)
    missing = [s for s in ("processes", "rss", "hugepages", "system", "oom")
               if 'id="%s"' % s not in doc]
    missing += [c for c in ("mem_total", "processes_overhead", "work_mem_exposure_ratio",
                            "if_killed") if c not in doc]
    ok(not missing, "every section and table is there", "missing: %s" % missing)
    # the test server is preloaded: its memory history is charted
    samples = int(value("SELECT count(*) FROM pg_procmem_history_system"))
    over = chart(doc, "chart-history-overhead")
    shown = re.search(r"(\d+) samples of the memory history", doc)
    ok(samples >= 1 and 'id="history"' in doc and shown and abs(int(shown.group(1)) - samples) <= 2
       and "checkpointer" in over and "<polygon" in over and chart(doc, "chart-history-system"),
       "memory over time: overhead stacked by backend type, the machine beside it (%d samples)" % samples)
    crashes = int(value("SELECT count(*) FROM pg_procmem_crashes"))
    ok(('id="crashes"' in doc) == (crashes > 0),
       "a crash section exactly when pg_procmem_crashes has rows (%d here)" % crashes)
    check_chromium(tmp, page, expected)


def check_nobody(tmp):
    execute("DROP ROLE IF EXISTS %s; CREATE ROLE %s LOGIN" % (NOBODY, NOBODY))
    try:
        page = os.path.join(tmp, "nobody.html")
        rc, out, err = run([REPORT, "user=" + NOBODY, "-o", page])
        ok(rc != 0, "a role without privileges: scripts/report fails", "exit %s" % rc)
        ok("permission denied" in err, "... saying permission denied on stderr", err)
        ok(not os.path.exists(page), "... and writes no page")
    finally:
        execute("DROP ROLE IF EXISTS %s" % NOBODY)


def main():
    tmp = tempfile.mkdtemp(prefix="pg_procmem_report.")
    os.chmod(tmp, 0o755)
    try:
        for part in (check_report, check_nobody):
            try:
                part(tmp)
            except Exception as e:  # report it as a failure, go on with the rest
                ok(False, "%s ran to the end" % part.__name__, "%s: %s" % (type(e).__name__, e))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    done()


if __name__ == "__main__":
    main()
