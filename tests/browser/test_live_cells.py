"""The book's "Run here" cells (book/_ext/live_cells.py, issue 40) in chromium, offline.

A cell tagged ``live`` becomes editable and runs in the page: Python (Pyodide) with sympy in a
Web Worker, loaded from the book's own files at the first click. Checked here, with every
request off the machine aborted:

* from disk (``file://``, the offline zip unpacked): nothing of the runtime loads before the
  click; Run shows the cell's result as typeset mathematics; an edited cell runs again with
  the keyboard (Ctrl+Enter); a reader's mistake shows a readable traceback; a cell that needs
  numpy says where to run it; a cell that runs forever is stopped (Escape and the Stop button)
  and the next run starts Python again;
* from a local server: a cell whose page sets up the chapter's state (robodyn_live.setup) runs
  with the keyboard alone (stopped with Escape while Python starts, then run), and axe-core
  finds nothing on the live page;
* the offline zip carries the runtime, and only pages with live cells load live.js.

Pyodide's start costs seconds, so each origin starts it once. ``LIVE_HTML`` names another
built site (a small build of the live chapters); the default is the book's ``_build/html``.
"""
from __future__ import annotations

import functools
import http.server
import os
import pathlib
import re
import subprocess
import sys
import threading
import time
import zipfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
HTML = pathlib.Path(os.environ.get("LIVE_HTML", ROOT / "_build" / "html"))
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
AXE = ROOT / "_test_assets" / "axe-core" / "axe.min.js"
BUNDLE_NAME = "robot-dynamics-interactively-html"
ROTATIONS = "book/part1/01_rotations.html"       # seven live cells, no page setup
PROPERTIES = "book/part2/02_properties.html"     # one live cell with a page setup
START = 180_000                                  # ms: Pyodide's first start on a busy machine
STATUS = ".live-status"

from test_pages import AXE_EXCLUDE, AXE_TAGS  # noqa: E402  the book's one axe configuration


def _need(path):
    if not path.exists():
        pytest.fail(f"no {path}: build the book first (make book)")
    return path


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def bundle_site(tmp_path_factory):
    """The offline zip unpacked (scripts/bundle_html.py; made here when the build has none)."""
    _need(HTML / ROTATIONS)
    bundle = HTML / "_downloads" / f"{BUNDLE_NAME}.zip"
    if not bundle.exists():
        subprocess.run([sys.executable, str(ROOT / "scripts" / "bundle_html.py"), str(HTML)],
                       check=True)
    out = tmp_path_factory.mktemp("bundle")
    with zipfile.ZipFile(bundle) as zf:
        zf.extractall(out)
    return out / BUNDLE_NAME


@pytest.fixture(scope="module")
def server():
    _need(HTML / PROPERTIES)

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass
    httpd = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Quiet, directory=str(HTML)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


def offline_page(browser, local_prefix):
    """A page whose requests off ``local_prefix`` (and data:/blob:) are aborted and recorded,
    with its requests, console errors and page errors recorded too."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    log = {"requests": [], "outside": [], "errors": []}

    def route(r):
        url = r.request.url
        if url.startswith((local_prefix, "data:", "blob:")):
            r.continue_()
        else:
            log["outside"].append(url)
            r.abort()
    page.route("**/*", route)
    page.on("request", lambda r: log["requests"].append(r.url))
    page.on("pageerror", lambda e: log["errors"].append(f"page error: {e}"))
    page.on("console", lambda m: m.type == "error" and log["errors"].append(f"console: {m.text}"))
    return context, page, log


def wait_status(page, cell, pattern, timeout=60_000):
    """Wait until the status of live cell ``cell`` (0-based) matches ``pattern``; return it."""
    page.wait_for_function(
        "([i, p]) => new RegExp(p).test(document.querySelectorAll('.live-status')[i]"
        ".textContent)", arg=[cell, pattern], timeout=timeout)
    return page.locator(STATUS).nth(cell).inner_text()


def output(page, cell):
    return page.locator(".live-output").nth(cell)


def run_with_keyboard(page, cell, code):
    editor = page.locator(".live-editor").nth(cell)
    editor.fill(code)
    editor.press("Control+Enter")


def axe_violations(page):
    page.add_script_tag(path=str(_need(AXE)))
    return page.evaluate("""([tags, exclude]) => axe.run(document, {
            runOnly: {type: 'tag', values: tags}, resultTypes: ['violations']})
        .then(r => r.violations.map(v => ({id: v.id, nodes: v.nodes
            .filter(n => !exclude.some(([rule, sel]) => rule === v.id &&
                                       document.querySelector(n.target[0])?.matches(sel)))
            .map(n => n.target.join(' '))})).filter(v => v.nodes.length))""",
                         [AXE_TAGS, sorted(AXE_EXCLUDE)])


def test_live_cells_from_the_offline_zip_on_disk(browser, bundle_site):
    page_path = bundle_site / ROTATIONS
    context, page, log = offline_page(browser, "file://")
    page.goto(page_path.as_uri(), wait_until="load")
    page.wait_for_function("() => !window.MathJax || MathJax.startup?.promise", timeout=30_000)
    page.wait_for_timeout(300)
    before = list(log["requests"])
    assert not [u for u in before if "/_static/live/" in u], "runtime loaded before any click"
    assert page.locator("button.live-run").count() == 7, "the chapter's seven live cells"

    # first run: Python starts, the cell's rotation matrices appear as mathematics
    t0 = time.monotonic()
    page.locator("button.live-run").first.click()
    status = wait_status(page, 0, "^(Done|Failed|Stopped)", START)
    first = time.monotonic() - t0
    assert status.startswith("Done"), f"{status}: {output(page, 0).inner_text()[:2000]}"
    page.wait_for_function("() => document.querySelector('.live-output mjx-container')")
    assert "cos" in output(page, 0).locator("mjx-assistive-mml").first.inner_text().lower() \
        or output(page, 0).locator("mjx-container").count() == 1
    assert page.locator(".live-editor").count() == 1, "the cell became an editor"

    # an edited cell, run with the keyboard: a result only the edit gives
    t0 = time.monotonic()
    run_with_keyboard(page, 0, 'phi = sp.Symbol("phi")\nprint("trace:", '
                               'sp.simplify(rd.rotation("x", phi).trace()))')
    assert wait_status(page, 0, "^(Done|Failed)").startswith("Done")
    later = time.monotonic() - t0
    assert output(page, 0).inner_text().strip() == "trace: 2*cos(phi) + 1"

    # a reader's mistake: a readable traceback, the line of the cell, the error's name
    run_with_keyboard(page, 0, "R = rd.rotation('x', phi)\nR @ sp.eye(2)")
    assert wait_status(page, 0, "^(Done|Stopped with|Failed)").startswith("Stopped with")
    text = output(page, 0).inner_text()
    assert "Traceback" in text and 'File "<cell>", line 2' in text and "ShapeError" in text, text
    assert "_robodyn_live_run" not in text, "the runner's own frames are not the reader's"

    # a cell that needs numpy: said so, with where to run it
    run_with_keyboard(page, 0, "import numpy as np\nnp.eye(3)")
    wait_status(page, 0, "^(Done|Stopped with)")
    needs = output(page, 0).locator(".live-needs").inner_text()
    assert "numpy" in needs and "Colab" in needs and "make lab" in needs, needs
    for code, needed in [("rd.fk_space", "robodyn.fk_space"),
                         ("from robodyn import models", "robodyn.models")]:
        run_with_keyboard(page, 0, code)
        wait_status(page, 0, "^(Done|Stopped with)")
        assert needed in output(page, 0).locator(".live-needs").inner_text(), code

    # a cell that runs forever: Escape stops it, Python starts again at the next run
    run_with_keyboard(page, 0, 'phi = sp.Symbol("phi", real=True)\nR = rd.rotation("x", phi)')
    assert wait_status(page, 0, "^(Done|Stopped with)").startswith("Done")
    page.locator("button.live-run").nth(1).click()     # the second cell, as written
    assert wait_status(page, 1, "^(Done|Stopped with)").startswith("Done")
    run_with_keyboard(page, 1, "while True:\n    pass")
    wait_status(page, 1, "^Running")
    assert page.locator("button.live-stop").nth(1).is_visible()
    page.wait_for_timeout(500)
    page.locator(".live-editor").nth(1).press("Escape")
    assert wait_status(page, 1, "^Stopped", 10_000).startswith("Stopped.")
    # ... and the Stop button does the same
    run_with_keyboard(page, 1, "while True:\n    pass")
    wait_status(page, 1, "^Running")
    page.locator("button.live-stop").nth(1).click()
    assert wait_status(page, 1, "^Stopped", 10_000).startswith("Stopped.")
    # the next run restarts Python; the edited cell above runs first, as in a notebook
    run_with_keyboard(page, 1, "phi.is_real, R.shape")
    status = wait_status(page, 1, "^(Done|Failed|Stopped)", START)
    assert status.startswith("Done"), output(page, 1).inner_text()
    assert output(page, 1).inner_text().strip() == "(True, (3, 3))"

    assert not log["outside"], f"requests off the machine: {log['outside'][:5]}"
    assert not log["errors"], "\n".join(log["errors"])
    runtime = sum(f.stat().st_size for f in (bundle_site / "_static" / "live").iterdir())
    print(f"\nlive cells from disk: first run {first:.1f} s (runtime {runtime / 1e6:.1f} MB "
          f"of scripts), later run {later:.2f} s")
    context.close()


def test_live_cell_with_a_page_setup_from_a_server(browser, server):
    context, page, log = offline_page(browser, server)
    page.goto(f"{server}/{PROPERTIES}", wait_until="load")
    page.wait_for_function("() => !window.MathJax || MathJax.startup?.promise", timeout=30_000)
    assert not [u for u in log["requests"] if "/_static/live/" in u]
    assert page.locator("details.live-setup").count() == 1, "the page says what it sets up"
    run = page.locator("button.live-run").first
    run.focus()
    page.keyboard.press("Enter")                       # the keyboard alone
    wait_status(page, 0, "^Starting")
    page.keyboard.press("Escape")                      # stopped while Python starts
    assert wait_status(page, 0, "^(Stopped|Done|Failed)", 10_000).startswith("Stopped.")
    page.keyboard.press("Enter")                       # the focus stayed on Run
    status = wait_status(page, 0, "^(Done|Failed|Stopped)", START)
    assert status.startswith("Done"), output(page, 0).inner_text()[:2000]
    assert output(page, 0).locator("mjx-container").count() == 3, "three equations, typeset"
    assert page.evaluate("document.activeElement.className") == "live-run", "focus kept"
    assert not log["outside"], log["outside"][:5]
    assert not log["errors"], "\n".join(log["errors"])
    # axe-core on the live page: buttons, editor, status, output (served: from file:// axe
    # cannot read the stylesheets)
    page.locator("details.live-setup summary").press("Enter")      # opened with the keyboard
    assert page.locator("details.live-setup").get_attribute("open") is not None
    violations = axe_violations(page)
    assert not violations, violations
    context.close()


def test_offline_zip_carries_the_runtime():
    bundle = _need(HTML / "_downloads" / f"{BUNDLE_NAME}.zip")
    live = sorted(p.name for p in (HTML / "_static" / "live").iterdir())
    assert "pyodide.asm.wasm.js" in live and "packages.zip.js" in live, live
    with zipfile.ZipFile(bundle) as zf:
        names = set(zf.namelist())
    missing = [n for n in live if f"{BUNDLE_NAME}/_static/live/{n}" not in names]
    assert not missing, f"not in the offline zip: {missing}"
    assert max((HTML / "_static" / "live" / n).stat().st_size for n in live) < 100e6


def test_only_pages_with_live_cells_load_the_control():
    for page in HTML.rglob("*.html"):
        text = page.read_text(errors="replace")
        has_cell = re.search(r'<div class="cell\b[^"]*\btag_live\b', text) is not None
        loads = re.search(r'<script[^>]*src="[^"]*_static/live\.js', text) is not None
        assert has_cell == loads, f"{page.relative_to(HTML)}: live cell {has_cell}, " \
                                  f"live.js {loads}"
