"""A reader's JupyterLab in a real browser (Debian's chromium, driven by Playwright).

JupyterLab is started the way ``make lab`` starts it (scripts/lab.py: headless, on 127.0.0.1,
``--allow-root`` when root, the reader's configuration with nbgrader's extensions off), on a free
port with a token, serving a temporary folder that holds copies of two chapters (so nothing is
saved into the repository), with its own settings (no autosave, no news, every cell in the page).
For each chapter: Run All ends with no error output; an exercise's solution is rendered by
jupyterlab-myst as a collapsed box whose text shows only when clicked; moving a live slider
changes the figure. nbgrader's menu and server pages are not there.
"""
from __future__ import annotations

import importlib.util
import json
import os
import pathlib
import re
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
CHAPTERS = ["book/part1/01_rotations.ipynb", "book/part4/02_bouncing_ball.ipynb"]
"""Two quick chapters, each with exercises, solutions and a live interactive figure."""

REFERENCE_CHAPTERS = ["book/part4/06_walking.ipynb", "book/part3/05_udwadia_kalaba.ipynb",
                      "book/part4/05_newtons_cradle.ipynb"]
"""Chapters with references to other chapters, seed and chapter equation numbers and
citations (scripts/lab/book_refs.py resolves them for the lab); the cradle's also has
``{ref}`` roles, to another chapter's label and to one of its own exercises."""

SCENE_NOTEBOOK = "scene.ipynb"
"""A one-cell notebook with a 3D scene (robodyn.viz.Scene), as a chapter builds one."""

SCENE_CODE = """import numpy as np
from robodyn import viz
t = np.linspace(0, 1, 12)
poses = np.array([[[np.cos(a), -np.sin(a), 0, 0.2 * a], [np.sin(a), np.cos(a), 0, 0],
                   [0, 0, 1, 0.1 * a], [0, 0, 0, 1]] for a in 3 * t])
scene = viz.Scene(t, title="A turning frame", alt="A frame turning about z and rising.")
scene.triad(poses, length=0.3, name="frame")
scene.box(poses, [0.2, 0.1, 0.05], name="body")
scene.line(poses[:, :3, 3], name="path")
scene"""


def _scene_notebook():
    return {"cells": [{"cell_type": "code", "execution_count": None, "id": "scene0",
                       "metadata": {}, "outputs": [], "source": SCENE_CODE}],
            "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python",
                                        "name": "python3"},
                         "language_info": {"name": "python"}},
            "nbformat": 4, "nbformat_minor": 5}


SETTINGS = {       # JupyterLab user settings of the test's lab (JUPYTERLAB_SETTINGS_DIR)
    "@jupyterlab/notebook-extension/tracker": {"windowingMode": "none"},   # every cell in the DOM
    "@jupyterlab/docmanager-extension/plugin": {"autosave": False},
    "@jupyterlab/apputils-extension/notification": {"fetchNews": "false",
                                                    "checkForUpdates": False},
}


def _lab_module():
    spec = importlib.util.spec_from_file_location("lab", ROOT / "scripts" / "lab.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """(base URL, token) of a running JupyterLab on a copy of CHAPTERS."""
    tmp = tmp_path_factory.mktemp("lab")
    served = tmp / "root"
    for chapter in CHAPTERS + REFERENCE_CHAPTERS:
        (served / chapter).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / chapter, served / chapter)
    (served / SCENE_NOTEBOOK).write_text(json.dumps(_scene_notebook()))
    settings = tmp / "settings"
    for name, values in SETTINGS.items():
        path = settings / f"{name}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))
    lab_script = _lab_module()
    port, token = _free_port(), secrets.token_hex(16)
    env = lab_script.lab_env()
    env.pop("MPLBACKEND", None)                 # a reader's kernel: matplotlib inline
    env.update(ROBODYN_QUICK="1", JUPYTERLAB_SETTINGS_DIR=str(settings),
               JUPYTERLAB_WORKSPACES_DIR=str(tmp / "workspaces"),
               JUPYTER_RUNTIME_DIR=str(tmp / "runtime"))
    cmd = lab_script.lab_command(sys.executable, port=port, root_dir=served,
                                 extra=[f"--IdentityProvider.token={token}"])
    log = open(tmp / "lab.log", "w")
    proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=tmp)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"JupyterLab did not start:\n{(tmp / 'lab.log').read_text()}")
                time.sleep(0.3)
        yield base, token, tmp / "lab.log"
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
        log.close()


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        yield b
        b.close()


def test_lab_is_the_readers(lab):
    """Started as make lab starts it: on 127.0.0.1 (as root here, --allow-root), nbgrader's
    server extensions off (its formgrader page is not served), jupyterlab-myst on."""
    base, token, log = lab
    for path in ("formgrader", "assignments"):
        try:
            urllib.request.urlopen(f"{base}/{path}?token={token}", timeout=10).close()
            pytest.fail(f"nbgrader's /{path} is served to the reader")
        except urllib.error.HTTPError as e:
            assert e.code == 404, (path, e.code)
    text = log.read_text()
    assert "jupyterlab_myst | extension was successfully loaded" in text, text[-3000:]
    assert "nbgrader" not in text, [line for line in text.splitlines() if "nbgrader" in line]


def _run_all(page):
    page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
    page.locator(".lm-Menu-itemLabel", has_text="Run All Cells").first.click()


def _all_cells_ran(page):
    return page.evaluate("""() => {
        const panels = [...document.querySelectorAll('.jp-NotebookPanel')]
            .filter(p => p.offsetParent !== null);
        if (panels.length !== 1) return false;
        const prompts = [...panels[0].querySelectorAll('.jp-CodeCell .jp-InputPrompt')]
            .map(p => p.textContent.trim());
        return prompts.length > 0 && prompts.every(t => /^\\[\\d+\\]:?$/.test(t));
    }""")


@pytest.mark.slow
@pytest.mark.parametrize("chapter", CHAPTERS)
def test_chapter_in_lab(lab, browser, chapter):
    """Run All with no error output; nbgrader's menu absent; a solution collapsed until its
    title is clicked; a live slider changes its figure."""
    base, token, _ = lab
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto(f"{base}/lab/tree/{chapter}?reset&token={token}")   # reset: no other tab
    page.wait_for_selector(".jp-Notebook .jp-CodeCell", timeout=60000)
    nb = page.locator(".jp-NotebookPanel:visible")
    assert nb.count() == 1, f"{chapter}: {nb.count()} notebooks shown"
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle'], "
                           ".jp-Toolbar-kernelStatus", timeout=60000)
    menus = page.locator(".lm-MenuBar-itemLabel").all_inner_texts()
    assert "Run" in menus and not [m for m in menus if "grader" in m.lower()], menus

    # the exercises, rendered by jupyterlab-myst: solutions are collapsed <details>
    try:
        page.wait_for_selector(".jp-MarkdownCell details.myst-exercise", state="attached",
                               timeout=30000)
    except Exception:
        pass                                    # the assertion below says what is missing
    solutions = nb.locator(".jp-MarkdownCell details.myst-exercise")
    assert solutions.count() >= 1, f"{chapter}: no collapsed solution (is jupyterlab-myst on?)"
    raw = nb.locator(".jp-MarkdownCell .jp-RenderedMarkdown, .jp-MarkdownCell .myst",
                       has_text=":class: dropdown").count()
    assert raw == 0, f"{chapter}: {raw} cells show the MyST markup raw"
    solution = solutions.first
    body = solution.locator(":scope > :not(summary)").first
    assert solution.get_attribute("open") is None and not body.is_visible(), \
        f"{chapter}: the first solution is shown before it is clicked"
    summary = solution.locator("summary")
    solution.locator("summary").click(timeout=60000)
    assert solution.get_attribute("open") is not None and body.is_visible(), \
        f"{chapter}: clicking the solution's title does not show it"
    assert body.inner_text().strip(), f"{chapter}: the solution is empty"

    _run_all(page)
    deadline = time.monotonic() + 150
    while not _all_cells_ran(page):
        assert time.monotonic() < deadline, f"{chapter}: Run All did not finish in 150 s"
        page.wait_for_timeout(500)
    errors = nb.locator(".jp-OutputArea-output[data-mime-type="
                          "'application/vnd.jupyter.error']")
    assert errors.count() == 0, f"{chapter}: error output:\n" + "\n".join(
        errors.all_inner_texts())[:3000]

    # a live slider of the interactive figure changes its image
    widget = nb.locator(".jp-OutputArea-output .widget-vbox, .jp-OutputArea-output "
                          ".widget-hbox", has=page.locator(".widget-image")).first
    widget.scroll_into_view_if_needed()
    image = widget.locator("img.widget-image, .widget-image").first
    before = image.get_attribute("src")
    handle = widget.locator(".widget-slider .noUi-handle").first
    handle.focus()
    for _ in range(3):
        handle.press("ArrowRight")
    deadline = time.monotonic() + 30
    while image.get_attribute("src") == before:
        assert time.monotonic() < deadline, f"{chapter}: moving the slider changed no figure"
        page.wait_for_timeout(300)
    context.close()


@pytest.mark.slow
def test_scene_in_lab(lab, browser):
    """A 3D scene run live in JupyterLab: drawn in WebGL from the output alone (the library
    embedded, no request for it), turned by dragging, moved by its time slider."""
    base, token, _ = lab
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    requests = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto(f"{base}/lab/tree/{SCENE_NOTEBOOK}?reset&token={token}")
    page.wait_for_selector(".jp-Notebook .jp-CodeCell", timeout=60000)
    page.wait_for_timeout(1000)
    dialog = page.locator(".jp-Dialog button.jp-mod-accept")
    if dialog.count():                          # "Select Kernel": the notebook's own kernel
        dialog.first.click()
    _run_all(page)
    plot = page.locator(".jp-OutputArea-output div.robodyn-scene-plot")
    page.wait_for_selector(".jp-OutputArea-output div.robodyn-scene-plot[data-robodyn-drawn]",
                           timeout=120000)
    assert plot.locator("canvas").count() >= 1, "the scene has no WebGL canvas"
    plot.scroll_into_view_if_needed()
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
    assert eye1 != eye0, "dragging did not turn the camera"
    moved = plot.evaluate("""async (el) => {
        const k = el._transitionData._frames[0].traces[0];
        const a = JSON.stringify(el.data[k].x);
        const names = el.layout.sliders[0].steps.map(s => s.args[0][0]);
        await Plotly.animate(el, [names[names.length - 1]], {mode: 'immediate',
                             frame: {duration: 0, redraw: true}, transition: {duration: 0}});
        return JSON.stringify(el.data[k].x) !== a;
    }""")
    assert moved, "the time slider's last step moved nothing"
    assert plot.evaluate(camera) == eye1, "a time step turned the camera"
    assert not [u for u in requests if "plotly" in u], "the live scene fetched plotly.js"
    context.close()


def _markdown_sources(path):
    return [c["source"] if isinstance(c["source"], str) else "".join(c["source"])
            for c in json.loads(path.read_text(encoding="utf-8"))["cells"]
            if c["cell_type"] == "markdown"]


def _resolved_refs(chapter):
    """[(text, href), ...] of the chapter's ``{ref}``/``{numref}`` roles as book_refs serves
    them."""
    spec = importlib.util.spec_from_file_location("book_refs",
                                                  ROOT / "scripts" / "lab" / "book_refs.py")
    book_refs = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(book_refs)
    nb = book_refs.rewrite(json.loads((ROOT / chapter).read_text(encoding="utf-8")),
                           chapter[:-len(".ipynb")])
    return [re.fullmatch(r"\[(.*)\]\((.*)\)", shown).groups()
            for c in nb["cells"] for shown, original in
            c.get("metadata", {}).get(book_refs.KEY, {}).get("pairs", []) if "ref}`" in original]


@pytest.mark.slow
@pytest.mark.parametrize("chapter", REFERENCE_CHAPTERS)
def test_references_resolve_in_lab(lab, browser, chapter):
    """As in the book: no "⚠" of an unresolved reference or citation anywhere in the chapter,
    its displays numbered by part and chapter (or the seed's number), references to other
    chapters as links to them; and saving writes the book's own text back, unchanged."""
    base, token, _ = lab
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto(f"{base}/lab/tree/{chapter}?reset&token={token}")
    page.wait_for_selector(".jp-Notebook .jp-MarkdownCell", timeout=60000)
    nb = page.locator(".jp-NotebookPanel:visible")
    cells = len(_markdown_sources(ROOT / chapter))
    deadline = time.monotonic() + 60
    while nb.locator(".jp-MarkdownCell .jp-RenderedMarkdown, .jp-MarkdownCell .myst").count() \
            < cells:
        assert time.monotonic() < deadline, f"{chapter}: the markdown cells were not rendered"
        page.wait_for_timeout(300)
    page.wait_for_timeout(1500)
    text = nb.locator(".jp-Notebook").first.inner_text()
    warned = [line for line in text.splitlines() if "⚠" in line]
    assert not warned, f"{chapter}: unresolved: {warned[:5]}"
    part, number = re.match(r"book/part(\d)/0?(\d+)_", chapter).groups()
    roman = ["", "I", "II", "III", "IV", "V", "VI"][int(part)]
    assert f"({roman}.{number}.1)" in text, f"{chapter}: no display numbered ({roman}.{number}.1)"
    links = nb.locator(".jp-MarkdownCell a").evaluate_all(
        "as => as.map(a => a.getAttribute('href') + ' ' + a.textContent)")
    assert any(".ipynb" in h for h in links), f"{chapter}: no link to another chapter: {links}"
    for words, href in _resolved_refs(chapter):    # {ref}: the book's words, linking the notebook
        assert any(href.rsplit("/", 1)[-1] in h.split(" ", 1)[0] and
                   h.split(" ", 1)[1].strip() == words for h in links), \
            f"{chapter}: no link {words!r} to {href}: {links}"
    prose = "\n".join(nb.locator(".jp-MarkdownCell").all_inner_texts())
    assert "{ref}" not in prose and "{numref}" not in prose, chapter
    # save (Ctrl+S): the file holds the book's text again
    nb.locator(".jp-Notebook").first.click(position={"x": 5, "y": 5})
    page.keyboard.press("Control+s")
    served = lab_file = lab[2].parent / "root" / chapter       # the lab serves tmp/root
    deadline = time.monotonic() + 30
    while served.stat().st_mtime <= (ROOT / chapter).stat().st_mtime + 0.001 and \
            time.monotonic() < deadline:
        page.wait_for_timeout(300)
    assert served.stat().st_mtime > (ROOT / chapter).stat().st_mtime + 0.001, \
        f"{chapter}: Ctrl+S saved nothing"
    assert _markdown_sources(lab_file) == _markdown_sources(ROOT / chapter), \
        f"{chapter}: saving changed the chapter's text"
    assert "robodyn_lab" not in lab_file.read_text(encoding="utf-8")
    context.close()
