"""The rendered book in a real browser (Debian's chromium, driven by Playwright), offline.

Every page of the table of contents is opened from a server on 127.0.0.1 and must: make no
failed request and no request off this machine, log no console error, typeset its math (no raw
TeX left), give every image real alt text, show every widget area and animation player, have
static sliders that change their figure, fit every code block and display equation into its
column in a 1280-px window, and pass the axe-core accessibility checker (WCAG 2
A/AA rules). Notebook pages carry Binder and Colab launch links for their own notebook. The
offline bundle (a zip of the whole site) is linked from the intro page, holds every page and
asset, and works opened from disk.
"""
from __future__ import annotations

import functools
import html.parser
import importlib.util
import http.server
import json
import pathlib
import re
import subprocess
import threading
import urllib.request
import zipfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
HTML = ROOT / "_build" / "html"
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
AXE = ROOT / "_test_assets" / "axe-core" / "axe.min.js"   # scripts/fetch_test_assets.sh
BUNDLE_NAME = "robot-dynamics-interactively-html"
BUNDLE = HTML / "_downloads" / f"{BUNDLE_NAME}.zip"        # scripts/bundle_html.py


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ADDRESS = _load("site_address", ROOT / "scripts" / "site_address.py").site_address()
REPO, BRANCH = ADDRESS.repository, ADDRESS.branch                 # _config.yml repository


def toc_pages():
    """The pages of _toc.yml, by the book's one reader of it (scripts/book_toc.py)."""
    spec = importlib.util.spec_from_file_location("book_toc", ROOT / "scripts" / "book_toc.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.toc_files(ROOT / "_toc.yml")


PAGES = toc_pages()
NOTEBOOK_PAGES = [p for p in PAGES if (ROOT / f"{p}.ipynb").exists()]


def source_of(page_path):
    md = ROOT / f"{page_path}.md"
    return md if md.exists() else ROOT / f"{page_path}.ipynb"


@pytest.fixture(scope="module")
def server():
    if not (HTML / "index.html").exists():
        pytest.fail(f"no built book at {HTML}: run `make book` first")
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass
    handler = functools.partial(Quiet, directory=str(HTML))
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


def watch(page, origin, problems):
    """Record on ``problems`` every console error, page error, failed request, HTTP error and
    request to anything but ``origin`` (a URL prefix) or an in-page data:/blob:/about: URL."""
    page.on("console", lambda m: m.type == "error" and problems.append(f"console: {m.text}"))
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("requestfailed", lambda r: problems.append(f"failed request: {r.url} "
                                                       f"({r.failure})"))

    def on_response(r):
        if r.status >= 400:
            problems.append(f"HTTP {r.status}: {r.url}")
    page.on("response", on_response)

    def on_request(r):
        if not (r.url.startswith(origin) or r.url.startswith("data:")
                or r.url.startswith("blob:") or r.url.startswith("about:")):
            problems.append(f"request off this machine: {r.url}")
    page.on("request", on_request)


def open_page(page, url):
    """Load ``url`` and wait until MathJax (if the page has it) has typeset."""
    response = page.goto(url, wait_until="load")
    assert url.startswith("file:") or (response is not None and response.ok), \
        f"{url} did not load"
    page.wait_for_function("() => !window.MathJax || (window.MathJax.startup && "
                           "window.MathJax.startup.promise)", timeout=30000)
    # read MathJax again: a page that redirects (the bundle's index.html) may have moved on to a
    # page whose MathJax has not started yet when the wait above returned
    page.evaluate("() => (window.MathJax && MathJax.startup && MathJax.startup.promise) || null")
    page.wait_for_timeout(300)


WIDTH = 1280
"""The window width of the page test: a common laptop's browser window (issue 30, erratum 8)."""

TOO_WIDE = """() => {
    const out = [], art = document.querySelector('article.bd-article');
    if (!art) return out;
    const right = art.getBoundingClientRect().right + 1;
    for (const pre of art.querySelectorAll('div.highlight pre')) {
        if (pre.closest('.cell_output')) continue;      // the code, not what it prints
        const line = pre.textContent.split('\\n').reduce((a, l) => l.length > a.length ? l : a, '');
        if (pre.scrollWidth > pre.clientWidth + 1 || pre.getBoundingClientRect().right > right)
            out.push(`code block (${pre.scrollWidth} px in ${pre.clientWidth} px): ${line.trim().slice(0, 70)}`);
    }
    for (const m of art.querySelectorAll('mjx-container[display="true"]')) {
        if (m.closest('.cell_output')) continue;        // a display of the text, not an output
        const r = m.getBoundingClientRect();
        const inner = [...m.querySelectorAll('mjx-math')].reduce((a, e) =>
            Math.max(a, e.getBoundingClientRect().right), 0);
        if (m.scrollWidth > m.clientWidth + 1 || r.right > right || inner > right) {
            const tex = m.closest('div.math') ? m.closest('div.math').id || '' : '';
            const a = m.querySelector('mjx-assistive-mml');
            out.push(`display ${tex} (${m.scrollWidth} px in ${m.clientWidth} px): `
                     + (a ? a.textContent.slice(0, 70) : ''));
        }
    }
    return out;
}"""


def too_wide(page):
    """Code blocks (the code, not its printed output) and display equations of the text that
    are wider than the article's column: they scroll or are cut at the right edge."""
    return page.evaluate(TOO_WIDE)


# Images whose "alt" is a file name or path: Sphinx's default when a figure has no alt text.
FILE_NAME_ALT = re.compile(r"(^|/)[^/\s]+\.(png|jpe?g|gif|svg|webp)$", re.IGNORECASE)


@pytest.mark.parametrize("page_path", PAGES)
def test_page(server, browser, axe_script, page_path):
    """One load of the page (each load typesets its math again: the costly part), then every
    check of it: accessibility (axe-core, on the page as it first shows), the launch links of a
    notebook page, math, figures, widgets, sliders, animations, and no error or off-machine
    request all along."""
    url = f"{server}/{page_path}.html"
    problems = []
    context = browser.new_context(viewport={"width": WIDTH, "height": 900})
    page = context.new_page()
    watch(page, server, problems)
    open_page(page, url)
    wait_for_scenes(page, page_path)
    wide = too_wide(page)
    assert not wide, (f"{page_path}: wider than its column in a {WIDTH}-px window:\n"
                      + "\n".join(wide))
    axe_report = accessibility_violations(page, axe_script)
    assert not axe_report, f"{page_path}: axe-core violations:\n" + "\n".join(axe_report)
    if page_path in NOTEBOOK_PAGES:
        check_launch_buttons(page, page_path)

    # math: typeset where the source has math, and no raw TeX left in the prose
    source = source_of(page_path)
    has_math = "$" in source.read_text() or "\\begin{" in source.read_text()
    if has_math:
        assert page.locator("mjx-container").count() > 0, f"{page_path}: no typeset math"
    leftover = RAW_TEX.findall(visible_text_outside_math_and_code(page))
    assert not leftover, f"{page_path}: raw TeX left untypeset: {leftover[:5]}"
    live = [tuple(d) for d in page.evaluate(LIVE_NUMBERS)]
    assert live == built_numbers(page_path)[0], (
        f"{page_path}: the browser shows other equation numbers than the built page: "
        f"{sorted(set(live) ^ set(built_numbers(page_path)[0]))[:5]}")

    # figures: every image of the article has alt text that is not a file name
    alts = page.evaluate("() => [...document.querySelectorAll('article.bd-article img')]"
                         ".map(i => [i.getAttribute('alt'), (i.getAttribute('src') || '')"
                         ".slice(0, 60)])")
    bad_alt = [src for alt, src in alts if not (alt or "").strip() or FILE_NAME_ALT.search(alt)]
    assert not bad_alt, (f"{page_path}: {len(bad_alt)} of {len(alts)} images have no alt text "
                         f"(or a file name as alt): {bad_alt}. A matplotlib figure gets it from "
                         f"its cell's metadata: \"mystnb\": {{\"image\": {{\"alt\": \"...\"}}}}")
    # no cell shows an error: a traceback in the page (e.g. a matplotlib label that mathtext
    # cannot parse fails only when the inline backend draws it, after the cell has run)
    errors = page.locator("article.bd-article .output.traceback").count()
    assert errors == 0, f"{page_path}: {errors} cell outputs show a traceback"
    if source.suffix == ".ipynb":
        plots = sum("plt.show()" in "".join(c["source"]) for c in
                    json.loads(source.read_text())["cells"] if c["cell_type"] == "code")
        shown = page.locator("article.bd-article .cell_output img[src*=\"_images/\"]").count()
        assert shown >= plots, (f"{page_path}: {plots} cells call plt.show() but the page shows "
                                f"{shown} output images (was the book built with MPLBACKEND=Agg?)")

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

    # 3D scenes: drawn in WebGL, turned by dragging, moved by their time slider
    check_scenes(page, page_path)

    page.wait_for_timeout(200)
    context.close()
    assert not problems, f"{page_path}:\n" + "\n".join(problems)


STEP_SCRIPT = """async (el) => {
    const moving = el._transitionData._frames[0].traces;
    const snap = () => JSON.stringify(moving.map(k => [el.data[k].x, el.data[k].y,
                                                      el.data[k].z]));
    const names = el.layout.sliders[0].steps.map(s => s.args[0][0]);
    const a = snap();
    await Plotly.animate(el, [names[names.length - 1]], {mode: 'immediate',
                         frame: {duration: 0, redraw: true}, transition: {duration: 0}});
    return snap() !== a;
}"""
"""Moves a scene to its last instant; true when the moving parts moved. (The time a step takes
is measured by bench/bench_scenes.py on a quiet machine: in the test run two workers and
software WebGL share two cores, so a time here would measure the load.)"""


def wait_for_scenes(page, page_path):
    """Wait until every 3D scene of the page (robodyn.viz.Scene) is drawn with its frames."""
    n = page.locator("div.robodyn-scene").count()
    if n:
        page.wait_for_function(f"() => document.querySelectorAll("
                               f"'div.robodyn-scene-plot[data-robodyn-drawn]').length >= {n}",
                               timeout=30000)


def _picture(locator):
    """The element's pixels now (greyscale), as a numpy array."""
    import io

    import numpy as np
    from PIL import Image
    return np.asarray(Image.open(io.BytesIO(locator.screenshot())).convert("L"), dtype=float)


def check_scenes(page, page_path):
    """Every 3D scene: a WebGL canvas with a picture that is not blank; dragging turns the
    camera (the picture and the camera change, the time does not); a step of the time slider
    moves the moving parts (their data change, the camera does not)."""
    import numpy as np
    scenes = page.locator("div.robodyn-scene-plot")
    for i in range(scenes.count()):
        where = f"{page_path}: 3D scene {i}"
        plot = scenes.nth(i)
        plot.scroll_into_view_if_needed()
        assert plot.locator("canvas").count() >= 1, f"{where}: no WebGL canvas"
        assert (plot.get_attribute("aria-label") or "").strip(), f"{where}: no alt text"
        before = _picture(plot)
        assert before.std() > 5, f"{where}: the picture is blank"
        camera = "(el) => JSON.stringify(el._fullLayout.scene.camera.eye)"
        eye0 = plot.evaluate(camera)
        box = plot.bounding_box()
        x, y = box["x"] + box["width"] * 0.5, box["y"] + box["height"] * 0.45
        page.mouse.move(x, y)
        page.mouse.down()
        page.mouse.move(x + 120, y + 30, steps=8)
        page.mouse.up()
        page.wait_for_timeout(300)
        eye1 = plot.evaluate(camera)
        assert eye1 != eye0, f"{where}: dragging did not turn the camera"
        assert np.abs(_picture(plot) - before).mean() > 0.5, \
            f"{where}: dragging did not change the picture"
        steps = plot.evaluate("(el) => ((el.layout.sliders || [])[0] || {steps: []})"
                              ".steps.length")
        if steps < 2:
            continue
        # the slider itself: a click on its rail moves the scene to that instant
        rail = plot.locator("g.slider-container rect.slider-rail-touch-rect, "
                            "g.slider-container rect.slider-rail-rect").first
        rb = rail.bounding_box()
        page.mouse.click(rb["x"] + rb["width"] * 0.3, rb["y"] + rb["height"] / 2)
        page.wait_for_timeout(200)
        active = plot.evaluate("(el) => el._fullLayout.sliders[0].active")
        assert 0 < active < steps - 1, f"{where}: a click on the time slider did not move it"
        changed = plot.evaluate(STEP_SCRIPT)
        assert changed, f"{where}: the time slider's last step moved nothing"
        assert plot.evaluate(camera) == eye1, f"{where}: a time step turned the camera"


def test_no_cdn_assets():
    """Scripts and stylesheets of the built pages are all served locally (offline build)."""
    bad = []
    # (a <link rel="canonical"> names the page's public address: nothing is loaded from it)
    tag = re.compile(r"<(?:script|link)\b(?![^>]*\brel=\"canonical\")[^>]+(?:src|href)="
                     r"\"(https?://[^\"]+)\"")
    for page_path in PAGES:
        html = (HTML / f"{page_path}.html").read_text()
        bad += [f"{page_path}: {u}" for u in tag.findall(html)]
    assert not bad, "\n".join(bad)


def test_every_toc_page_built():
    missing = [p for p in PAGES if not (HTML / f"{p}.html").exists()]
    assert not missing, f"pages in _toc.yml not built: {missing}"


# --------------------------------------------------------------------------
# accessibility: axe-core, WCAG 2.0/2.1/2.2 levels A and AA
# --------------------------------------------------------------------------

AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]
# Violations that come from the theme and cannot be fixed in our configuration. Each entry is
# ONE rule on ONE selector, with the reason; anything else fails the test.
AXE_EXCLUDE = {
    # pydata-sphinx-theme 0.17.1, components/theme-switcher.html: the light/dark button is
    # labelled "Color mode" but its three icons carry the titles "Light", "Dark" and "System
    # Settings", which axe reads as visible text missing from the label (WCAG 2.5.3). The
    # template has no option for the label.
    ("label-content-name-mismatch", ".theme-switch-button"),
    # docutils 0.21's HTML5 writer, used by Sphinx for the sphinxcontrib-bibtex reference list
    # (book/intro.md): <div role="list" class="citation-list"> around <div class="citation"
    # role="doc-biblioentry">. DPUB-ARIA 1.1 deprecated doc-biblioentry, so axe flags the role
    # and then sees the list's children as no list items. No option changes these roles (the
    # bibliography's :list: bullet breaks the {cite} links).
    ("aria-deprecated-role", ".citation"),
    ("aria-required-children", ".citation-list"),
}


@pytest.fixture(scope="module")
def axe_script():
    if not AXE.exists():
        subprocess.run(["bash", str(ROOT / "scripts" / "fetch_test_assets.sh")], check=False)
    if not AXE.exists():
        pytest.fail(f"no axe-core at {AXE}: run `bash scripts/fetch_test_assets.sh` (needs npm "
                    f"and the npm registry) or `make test`")
    return AXE


def accessibility_violations(page, axe_script):
    """axe-core's WCAG 2 A/AA violations on the page (but the documented exclusions), one line
    each; the page's own test asserts there are none."""
    page.add_script_tag(path=str(axe_script))       # injected inline: no request, not served
    violations = page.evaluate("""([tags, exclude]) => axe.run(document, {
            runOnly: {type: 'tag', values: tags}, elementRef: true, resultTypes: ['violations']})
        .then(r => r.violations.map(v => ({
            id: v.id, impact: v.impact, help: v.help,
            nodes: v.nodes.filter(n => !exclude.some(([rule, sel]) =>
                                        rule === v.id && n.element && n.element.matches(sel)))
                          .map(n => n.target.join(' '))}))
            .filter(v => v.nodes.length))""", [AXE_TAGS, sorted(AXE_EXCLUDE)])
    return [f"{v['id']} ({v['impact']}): {v['help']}; {len(v['nodes'])} elements: "
            + ", ".join(v["nodes"][:8]) + (" ..." if len(v["nodes"]) > 8 else "")
            for v in violations]


# --------------------------------------------------------------------------
# launch buttons (links only: nothing is requested from Binder or Colab)
# --------------------------------------------------------------------------

def check_launch_buttons(page, page_path):
    """The notebook page's launch dropdown links Binder and Colab to the page's own notebook
    (links only: nothing is requested from Binder or Colab)."""
    dropdown = page.locator(".dropdown-launch-buttons")
    assert dropdown.count() == 1, f"{page_path}: no launch dropdown"
    hrefs = dropdown.locator("a").evaluate_all("as => as.map(a => a.href)")
    binder = (f"https://mybinder.org/v2/gh/{REPO}/{BRANCH}"
              f"?urlpath=lab/tree/{page_path}.ipynb")
    colab = f"https://colab.research.google.com/github/{REPO}/blob/{BRANCH}/{page_path}.ipynb"
    assert binder in hrefs, f"{page_path}: no Binder link {binder} among {hrefs}"
    assert colab in hrefs, f"{page_path}: no Colab link {colab} among {hrefs}"


def test_no_launch_buttons_on_text_pages():
    """Pages written in Markdown have no notebook to launch, so no launch dropdown."""
    text_pages = [p for p in PAGES if p not in NOTEBOOK_PAGES]
    assert text_pages, "no Markdown page in _toc.yml to check"
    with_buttons = [p for p in text_pages
                    if "dropdown-launch-buttons" in (HTML / f"{p}.html").read_text()]
    assert not with_buttons, f"launch buttons on Markdown pages: {with_buttons}"


# The Colab install cell of every notebook: tests/test_reader_install.py.


# --------------------------------------------------------------------------
# the offline bundle
# --------------------------------------------------------------------------

def test_download_link(server, browser):
    """The intro page links to the bundle and the link resolves (HTTP 200, the zip's size)."""
    problems = []
    context = browser.new_context()
    page = context.new_page()
    watch(page, server, problems)
    open_page(page, f"{server}/{PAGES[0]}.html")
    link = page.locator(f'article a[href$="{BUNDLE_NAME}.zip"]')
    assert link.count() == 1, f"{PAGES[0]}: {link.count()} links to the offline bundle"
    href = link.evaluate("a => a.href")
    context.close()
    assert href == f"{server}/_downloads/{BUNDLE_NAME}.zip", href
    with urllib.request.urlopen(urllib.request.Request(href, method="HEAD"), timeout=10) as r:
        assert r.status == 200, f"{href}: HTTP {r.status}"
        assert int(r.headers["Content-Length"]) == BUNDLE.stat().st_size
    assert not problems, "\n".join(problems)


# <script src=...>, <link href=...> (stylesheets, fonts, icons; not rel="canonical", which names
# the page's public address and loads nothing), @import and url() in CSS
REMOTE_ASSET = re.compile(r"<(?:script|link)\b(?![^>]*\brel=[\"']?canonical)[^>]*\b(?:src|href)"
                          r"\s*=\s*[\"']?(https?://[^\"'\s>]+)"
                          r"|@import\s+(?:url\()?[\"']?(https?://[^\"')\s]+)"
                          r"|url\(\s*[\"']?(https?://[^\"')\s]+)", re.IGNORECASE)


def test_offline_bundle():
    """The zip holds the whole site (every book page, index.html, MathJax), not itself, and no
    page or stylesheet in it loads a script, style or font from the network."""
    assert BUNDLE.exists(), f"no offline bundle at {BUNDLE}: `make book` makes it"
    with zipfile.ZipFile(BUNDLE) as zf:
        names = zf.namelist()
        assert zf.testzip() is None, "corrupt member in the bundle"
        prefix = f"{BUNDLE_NAME}/"
        assert all(n.startswith(prefix) for n in names), "members outside the top folder"
        inside = {n[len(prefix):] for n in names}
        # the bundle's own README.txt (what the folder is, the one line that serves it)
        assert "README.txt" in inside, "the bundle has no README.txt"
        assert "python3 -m http.server" in zf.read(f"{prefix}README.txt").decode()
        inside.discard("README.txt")
        site = {p.relative_to(HTML).as_posix() for p in HTML.rglob("*") if p.is_file()}
        # not in the bundle: itself, the Makefile's stamp, the online site's 404 page and the
        # PDF (make site copies it into the site after the bundle is made)
        site -= {f"_downloads/{BUNDLE.name}", ".built", "404.html",
                 "_downloads/robot-dynamics-interactively.pdf"}
        assert inside == site, (f"bundle differs from the site: missing {sorted(site - inside)[:10]}"
                                f", extra {sorted(inside - site)[:10]}")
        need = ["index.html", "_static/mathjax/es5/tex-chtml.js"] + [f"{p}.html" for p in PAGES]
        assert not [n for n in need if n not in inside], [n for n in need if n not in inside]
        remote = []
        for n in names:
            if n.endswith((".html", ".css")):
                text = zf.read(n).decode("utf-8", errors="replace")
                remote += [f"{n}: {''.join(m)}" for m in REMOTE_ASSET.findall(text)]
        assert not remote, "assets from the network in the bundle:\n" + "\n".join(remote[:20])


def test_offline_bundle_opens_from_disk(browser, tmp_path):
    """Unzipped and opened from file:// (no server), index.html leads to the intro page and a
    chapter typesets its math, with every request a local file and no error."""
    with zipfile.ZipFile(BUNDLE) as zf:
        zf.extractall(tmp_path)
    site = tmp_path / BUNDLE_NAME
    chapter = NOTEBOOK_PAGES[0]
    for start, expect in [("index.html", f"{PAGES[0]}.html"), (f"{chapter}.html", None)]:
        problems = []
        context = browser.new_context()
        page = context.new_page()
        watch(page, site.as_uri(), problems)
        open_page(page, (site / start).as_uri())
        if expect:
            page.wait_for_url(f"**/{expect}", timeout=10000)
            open_page(page, page.url)
        assert page.locator("mjx-container").count() > 0, f"{start}: no typeset math from disk"
        context.close()
        assert not problems, f"{start} from disk:\n" + "\n".join(problems)


class _Numbers(html.parser.HTMLParser):
    """The equation numbers of one built page: each labelled display's number (the text of
    its ``.eqno`` without the header link's) and each {eq} link's text."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.displays, self.links = [], []
        self._display = self._eqno = self._link = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        cls = (a.get("class") or "").split()
        if tag == "div" and "math" in cls and (a.get("id") or "").startswith("equation-"):
            self._display = [a["id"][9:], ""]
        elif tag == "span" and "eqno" in cls and self._display is not None:
            self._eqno = True
        elif tag == "a" and self._eqno:
            self._eqno = False                      # the header link: not the number
        elif tag == "a" and "reference" in cls and "internal" in cls and \
                "headerlink" not in cls and "#equation-" in (a.get("href") or ""):
            self._link = [a["href"].split("#equation-")[1], ""]

    def handle_data(self, data):
        if self._eqno:
            self._display[1] += data
        if self._link is not None:
            self._link[1] += data

    def handle_endtag(self, tag):
        if tag == "span" and self._eqno is not None:
            self._eqno = None
        elif tag == "div" and self._display is not None and self._eqno is None:
            self.displays.append(tuple(self._display))
            self._display = None
        elif tag == "a" and self._link is not None:
            self.links.append(tuple(self._link))
            self._link = None


@functools.lru_cache(maxsize=None)
def built_numbers(page_path):
    """``(displays, links)`` of a built page: ``[(label, number text)]`` and ``[(label, link
    text)]``, read from its HTML as the build wrote it (test_page checks that the page in the
    browser, after MathJax, shows the same numbers)."""
    parser = _Numbers()
    parser.feed((HTML / f"{page_path}.html").read_text(encoding="utf-8"))
    return ([(label, text.strip()) for label, text in parser.displays],
            [(label, text.strip()) for label, text in parser.links])


LIVE_NUMBERS = """() => Array.from(document.querySelectorAll("div.math[id^='equation-']"), e => {
    const n = e.querySelector('.eqno');
    return [e.id.slice(9), n ? Array.from(n.childNodes).filter(c => c.nodeType === 3)
        .map(c => c.textContent).join('').trim() : ''];
})"""
"""The displays' numbers as the browser shows them (without the header link's text)."""


def test_equation_numbers():
    """Every labelled display shows the number its label gives (book/_ext/seed_numbers.py):
    a seed's own number -- (5.13), (UK 36), (PH 59) -- or, on a chapter page, the book's
    part-chapter number (II.1.3); every {eq} link to it shows the same text, across pages.
    Read from the built pages; test_page checks that the browser shows the same numbers after
    MathJax. The handbook's (5.13) is checked by name."""
    seed_numbers = _load("seed_numbers", ROOT / "book" / "_ext" / "seed_numbers.py")
    shown, links, problems = {}, [], []
    for page_path in PAGES:
        displays, page_links = built_numbers(page_path)
        expected = seed_numbers.display_numbers(page_path, [label for label, _ in displays])
        for label, text in displays:
            shown[label] = text
            want = expected.get(label)
            if want is not None and text != f"({want})":
                problems.append(f"{page_path}: display {label} shows {text!r}, expected ({want})")
            if want is None and seed_numbers.seed_number(label) is None and \
                    re.fullmatch(r"\(\d+\.\d+\)", text):
                problems.append(f"{page_path}: display {label} shows {text!r}, which reads like "
                                f"a handbook number")
        links += [(page_path, label, text) for label, text in page_links]
    assert shown.get("hb-5-13") == "(5.13)", shown.get("hb-5-13")
    assert len(shown) > 100 and len(links) > 100, (len(shown), len(links))
    for page_path, label, text in links:
        if label in shown and text != shown[label]:
            problems.append(f"{page_path}: a link to {label} reads {text!r}, the display "
                            f"shows {shown[label]!r}")
    assert any(label == "hb-5-13" for _, label, _ in links)
    assert not problems, "\n".join(problems)


def test_offline_bundle_does_not_link_to_itself():
    """Inside the zip no page links to the zip or the PDF in the zip (they are not there): the
    intro page says it is the offline copy of the online book instead, and the download menus
    link the online book's copies (scripts/bundle_html.py); the served site keeps its links."""
    with zipfile.ZipFile(BUNDLE) as zf:
        pages = {n: zf.read(n).decode("utf-8", errors="replace") for n in zf.namelist()
                 if n.endswith(".html")}
    online = f"{ADDRESS.site_url}_downloads/"
    whole = re.compile(r'href="([^"]*(?:' + BUNDLE_NAME + r'\.zip|robot-dynamics-interactively'
                       r'\.pdf))"')
    linking = [(n, h) for n, text in pages.items() for h in whole.findall(text)
               if not h.startswith(online)]
    assert not linking, f"pages in the bundle that link into it for the whole book: {linking[:5]}"
    intro = pages[f"{BUNDLE_NAME}/{PAGES[0]}.html"]
    assert "This is the offline copy" in intro and f'<a href="{ADDRESS.site_url}">' in intro
    assert f'href="{online}robot-dynamics-interactively.pdf"' in intro
    assert f'{BUNDLE_NAME}.zip"' in (HTML / f"{PAGES[0]}.html").read_text(encoding="utf-8")
