"""The "Run here" cells (book/_ext/live_cells.py, issue 40) in Debian's chromium: the page's
first paint and weight with and without the extension, and the time of a first and a later run.

    .venv/bin/python bench/bench_live_cells.py [HTML folder]

Needs the built book (``make book``; or a folder given, e.g. a small build of the live
chapters). For each page with live cells the same page is also written without the
extension's tag (live.js, which adds live.css) beside it, and both are loaded from a local server,
alternately, ``RUNS`` times in fresh browser contexts: the first contentful paint (fastest and
median), the load event (median) and the bytes the page loads before any click (every
resource's body) are reported side by side, with the ratios with / without (target: ≤ 1.05,
no slower within the noise; on a busy machine the fastest of the runs is the steadier figure). Then, on the first live page, the first run of a cell
(Python's start included) and a later run are timed (the budget of issue 40: a first run the
reader waits for once, a later run under 2 s). Run it on a quiet machine.
"""
from __future__ import annotations

import functools
import http.server
import pathlib
import re
import statistics
import sys
import threading
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
RUNS = 15
TAGS = re.compile(r'<script[^>]*src="[^"]*_static/live\.js[^"]*"[^>]*></script>\s*')
PAINT = """() => new Promise((resolve) => {
    const done = () => {
        const fcp = performance.getEntriesByName('first-contentful-paint')[0];
        const nav = performance.getEntriesByType('navigation')[0];
        const bytes = nav.encodedBodySize + performance.getEntriesByType('resource')
            .reduce((a, r) => a + r.encodedBodySize, 0);
        resolve({fcp: fcp ? fcp.startTime : null, load: nav.loadEventEnd, bytes,
                 live: performance.getEntriesByType('resource')
                     .filter(r => r.name.includes('/_static/live/')).length});
    };
    if (document.readyState === 'complete') setTimeout(done, 200);
    else addEventListener('load', () => setTimeout(done, 200));
})"""


def live_pages(html):
    return sorted(p for p in html.rglob("*.html")
                  if re.search(r'<script[^>]*src="[^"]*_static/live\.js', p.read_text()))


def measure(browser, url):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto(url, wait_until="load")
    out = page.evaluate(PAINT)
    context.close()
    return out


def run_times(browser, url):
    """Seconds of the first run of the first live cell (Python's start included) and of a
    later run of the same cell."""
    context = browser.new_context()
    page = context.new_page()
    page.goto(url, wait_until="load")
    status = "document.querySelector('.live-status').textContent"
    t0 = time.monotonic()
    page.locator("button.live-run").first.click()
    page.wait_for_function(f"() => /^(Done|Failed|Stopped)/.test({status})", timeout=300_000)
    first = time.monotonic() - t0
    t0 = time.monotonic()
    page.locator("button.live-run").first.click()
    page.wait_for_function(f"() => /^Done in/.test({status}) && "
                           f"document.querySelector('.live-output').childElementCount",
                           timeout=60_000)
    later = time.monotonic() - t0
    context.close()
    return first, later


def main():
    from playwright.sync_api import sync_playwright
    html = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "_build" / "html"
    pages = live_pages(html)
    if not pages:
        sys.exit(f"bench_live_cells: no page with live cells under {html}: run `make book`")
    plain = []
    for p in pages:
        twin = p.with_name(p.stem + ".no-live.html")
        twin.write_text(TAGS.sub("", p.read_text()))
        plain.append(twin)

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass
    httpd = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Quiet, directory=str(html)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{httpd.server_address[1]}"
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True,
                                        args=["--no-sandbox", "--disable-gpu"])
            print("| page | first paint, fastest, ms (with / without / ratio) | first paint, "
                  "median | load, median, ms | bytes before a click (with / without) | "
                  "runtime files loaded |")
            print("|---|---|---|---|---|---|")
            for page, twin in zip(pages, plain):
                rel, rel_twin = (x.relative_to(html).as_posix() for x in (page, twin))
                with_, without = [], []
                for _ in range(RUNS):
                    with_.append(measure(browser, f"{base}/{rel}"))
                    without.append(measure(browser, f"{base}/{rel_twin}"))
                fw, fo = (min(m["fcp"] for m in ms) for ms in (with_, without))
                mw, mo = (statistics.median(m["fcp"] for m in ms) for ms in (with_, without))
                lw, lo = (statistics.median(m["load"] for m in ms) for ms in (with_, without))
                print(f"| {rel} | {fw:.0f} / {fo:.0f} / {fw / fo:.2f} | {mw:.0f} / {mo:.0f} / "
                      f"{mw / mo:.2f} | {lw:.0f} / {lo:.0f} | "
                      f"{with_[0]['bytes']:,} / {without[0]['bytes']:,} | "
                      f"{max(m['live'] for m in with_)} |")
            first, later = run_times(browser, f"{base}/{pages[0].relative_to(html).as_posix()}")
            print(f"\nfirst run (Python's start included): {first:.1f} s; later run: "
                  f"{later:.2f} s ({pages[0].relative_to(html).as_posix()})")
            runtime = sum(f.stat().st_size for f in (html / "_static" / "live").iterdir())
            print(f"runtime loaded at the first click: {runtime / 1e6:.1f} MB of scripts")
            browser.close()
    finally:
        httpd.shutdown()
        for twin in plain:
            twin.unlink()


if __name__ == "__main__":
    main()
