"""The rendered book in a real browser (Debian's chromium, driven by Playwright), offline.

Every page of the table of contents is opened from a server on 127.0.0.1 and must: make no
failed request and no request off this machine, log no console error, typeset its math (no raw
TeX left), show every widget area and animation player, and have static sliders that change
their figure.
"""
from __future__ import annotations

import functools
import http.server
import pathlib
import re
import threading

import pytest
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
HTML = ROOT / "_build" / "html"
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def toc_pages():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    pages = [toc["root"]]

    def walk(entries):
        for e in entries or []:
            if "file" in e:
                pages.append(e["file"])
            walk(e.get("sections"))
            walk(e.get("chapters"))
    for part in toc.get("parts", []):
        walk(part.get("chapters"))
    walk(toc.get("chapters"))
    return pages


PAGES = toc_pages()


@pytest.fixture(scope="module")
def server():
    if not (HTML / "index.html").exists():
        pytest.fail(f"no built book at {HTML}: run `make book` first")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(HTML))
    handler.log_message = lambda *a, **k: None
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        yield b
        b.close()


RAW_TEX = re.compile(r"(\$\$|\\\(|\\\[|\\begin\{|\\frac|\\mathrm|\\dot\{|\\sum_)")


def visible_text_outside_math_and_code(page):
    return page.evaluate("""() => {
        const skip = new Set(['SCRIPT', 'STYLE', 'PRE', 'CODE', 'MJX-CONTAINER', 'NOSCRIPT',
                              'TEXTAREA', 'MJX-ASSISTIVE-MML']);
        const out = [];
        const walk = (n) => {
            if (n.nodeType === 3) { out.push(n.textContent); return; }
            if (n.nodeType !== 1 || skip.has(n.tagName)) return;
            if (n.classList && (n.classList.contains('highlight') ||
                                n.classList.contains('cell_output'))) return;
            for (const c of n.childNodes) walk(c);
        };
        walk(document.querySelector('main') || document.body);
        return out.join(' ');
    }""")


@pytest.mark.parametrize("page_path", PAGES)
def test_page(server, browser, page_path):
    url = f"{server}/{page_path}.html"
    problems = []
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    page = context.new_page()
    page.on("console", lambda m: m.type == "error" and problems.append(f"console: {m.text}"))
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("requestfailed", lambda r: problems.append(f"failed request: {r.url} "
                                                       f"({r.failure})"))

    def on_response(r):
        if r.status >= 400:
            problems.append(f"HTTP {r.status}: {r.url}")
    page.on("response", on_response)

    def on_request(r):
        if not (r.url.startswith(server) or r.url.startswith("data:")
                or r.url.startswith("blob:") or r.url.startswith("about:")):
            problems.append(f"request off this machine: {r.url}")
    page.on("request", on_request)

    response = page.goto(url, wait_until="load")
    assert response is not None and response.ok, f"{url} did not load"
    page.wait_for_function("() => !window.MathJax || (window.MathJax.startup && "
                           "window.MathJax.startup.promise)", timeout=30000)
    page.evaluate("() => window.MathJax ? MathJax.startup.promise : null")
    page.wait_for_timeout(300)

    # math: typeset where the source has math, and no raw TeX left in the prose
    source = (ROOT / f"{page_path}.md")
    if not source.exists():
        source = ROOT / f"{page_path}.ipynb"
    has_math = "$" in source.read_text() or "\\begin{" in source.read_text()
    if has_math:
        assert page.locator("mjx-container").count() > 0, f"{page_path}: no typeset math"
    leftover = RAW_TEX.findall(visible_text_outside_math_and_code(page))
    assert not leftover, f"{page_path}: raw TeX left untypeset: {leftover[:5]}"

    # widget areas: every ipywidgets view placeholder must have been rendered
    empty_widgets = page.evaluate("""() => [...document.querySelectorAll(
        'script[type="application/vnd.jupyter.widget-view+json"]')].filter(
        s => !s.parentElement.querySelector('.jupyter-widgets, .widget-area, .lm-Widget')).length""")
    assert empty_widgets == 0, f"{page_path}: {empty_widgets} widget areas with no view"

    # static interactive figures: every slider changes the figure
    figures = page.locator("div.robodyn-interactive")
    for i in range(figures.count()):
        fig = figures.nth(i)
        img = fig.locator("img.robodyn-frame")
        assert img.count() == 1, f"{page_path}: interactive figure {i} has {img.count()} images"
        alt = img.get_attribute("alt") or ""
        assert alt.strip(), f"{page_path}: interactive figure {i} has no alt text"
        sliders = fig.locator("input.robodyn-slider")
        assert sliders.count() >= 1, f"{page_path}: interactive figure {i} has no slider"
        for j in range(sliders.count()):
            s = sliders.nth(j)
            before = img.get_attribute("src")
            lo, hi, value = (int(float(s.get_attribute(a) or 0)) for a in ("min", "max", "value"))
            if hi <= lo:
                continue
            new = hi if value != hi else lo
            s.evaluate("(el, v) => { el.value = v; el.dispatchEvent(new Event('input', "
                       "{bubbles: true})); }", str(new))
            after = img.get_attribute("src")
            assert after != before, (f"{page_path}: moving slider "
                                     f"{s.get_attribute('data-param')} of figure {i} did not "
                                     f"change the figure")

    # animations: the matplotlib player is there and plays
    players = page.locator("div.animation")
    for i in range(players.count()):
        player = players.nth(i)
        frame = player.locator("img").first
        assert frame.count() == 1, f"{page_path}: animation {i} has no frame image"
        buttons = player.locator("button")
        assert buttons.count() >= 3, f"{page_path}: animation {i} has no player buttons"
        before = frame.get_attribute("src")
        slider = player.locator("input[type=range]").first
        n = int(slider.get_attribute("max") or 0)
        if n > 0:
            slider.evaluate("(el) => { el.value = el.max; el.dispatchEvent(new Event('input', "
                            "{bubbles: true})); el.dispatchEvent(new Event('change', "
                            "{bubbles: true})); }")
            page.wait_for_timeout(200)
            assert frame.get_attribute("src") != before, f"{page_path}: animation {i} is stuck"

    page.wait_for_timeout(200)
    context.close()
    assert not problems, f"{page_path}:\n" + "\n".join(problems)


def test_no_cdn_assets():
    """Scripts and stylesheets of the built pages are all served locally (offline build)."""
    bad = []
    tag = re.compile(r"<(?:script|link)[^>]+(?:src|href)=\"(https?://[^\"]+)\"")
    for page_path in PAGES:
        html = (HTML / f"{page_path}.html").read_text()
        bad += [f"{page_path}: {u}" for u in tag.findall(html)]
    assert not bad, "\n".join(bad)


def test_every_toc_page_built():
    missing = [p for p in PAGES if not (HTML / f"{p}.html").exists()]
    assert not missing, f"pages in _toc.yml not built: {missing}"
