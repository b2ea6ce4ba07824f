"""The 3D scenes of the built book (robodyn.viz.Scene) in Debian's chromium: how long one step of
a scene's time slider takes (the book's budget for a widget step: 100 ms), per page.

    .venv/bin/python bench/bench_scenes.py [--summary]

Needs the built book (``make book``). Each scene is moved through eight steps (last, first,
...) with plotly's ``animate`` (what the slider calls), and the fastest and the median are
reported: WebGL is drawn in software here (SwiftShader), so a reader's GPU is faster still.
Run it on a quiet machine: other work on the two cores only adds to the times.
"""
from __future__ import annotations

import functools
import http.server
import pathlib
import statistics
import sys
import threading

ROOT = pathlib.Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "html"
BUDGET_MS = 100.0

STEPS = """async (el) => {
    const names = el.layout.sliders[0].steps.map(s => s.args[0][0]);
    const out = [];
    for (const j of [names.length - 1, 0, names.length - 2, 1, names.length - 1, 0,
                     names.length - 2, 1]) {
        const t0 = performance.now();
        await Plotly.animate(el, [names[j]], {mode: 'immediate', frame: {duration: 0,
                             redraw: true}, transition: {duration: 0}});
        await new Promise(r => requestAnimationFrame(() => r()));
        out.push(performance.now() - t0);
    }
    return out;
}"""


def scene_pages():
    return sorted(p for p in HTML.rglob("*.html") if "robodyn-scene-plot" in p.read_text())


def main():
    from playwright.sync_api import sync_playwright
    pages = scene_pages()
    if not pages:
        sys.exit(f"bench_scenes: no page with a 3D scene under {HTML}: run `make book` first")

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass
    httpd = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Quiet, directory=str(HTML)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{httpd.server_address[1]}"
    rows = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True,
                                    args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        for path in pages:
            rel = path.relative_to(HTML).as_posix()
            page.goto(f"{base}/{rel}")
            n = page.locator("div.robodyn-scene").count()
            page.wait_for_function(f"() => document.querySelectorAll('div.robodyn-scene-plot"
                                   f"[data-robodyn-drawn]').length >= {n}", timeout=60000)
            plots = page.locator("div.robodyn-scene-plot")
            for i in range(n):
                plots.nth(i).scroll_into_view_if_needed()
                if plots.nth(i).evaluate("el => (el.layout.sliders || []).length") == 0:
                    continue
                ms = plots.nth(i).evaluate(STEPS)
                rows.append((f"{rel} scene {i}", min(ms), statistics.median(ms)))
        browser.close()
    httpd.shutdown()
    for name, best, med in rows:
        print(f"ROW | 3D scene time step, {name} | {best:.0f} ms (median {med:.0f}) | "
              f"budget {BUDGET_MS:.0f} ms | {best / BUDGET_MS:.2f}")


if __name__ == "__main__":
    main()
