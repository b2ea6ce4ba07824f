"""A robot drawn with its meshes (robodyn.viz.Scene.robot: the Franka Panda of
example-robot-data, its visual meshes simplified) in a real browser (Debian's chromium, driven
by Playwright), as a reader's JupyterLab output carries it: one self-contained page, the
library embedded, opened from disk.

It must pass the checks every 3D scene of the book's pages gets (tests/browser/test_pages.py::
check_scenes: a WebGL canvas with a picture that is not blank, a drag turns the camera and the
picture, a click on the time slider moves it, a time step moves the parts and not the camera),
put every moving mesh, at the last instant, where the Python side puts it (the page's loader
places the meshes from their vertices and one pose per instant; this compares its result with
the full figure of ``Scene.to_plotly()``), and ask for nothing outside the page: every request
is watched, and any that is not the page itself, data: or blob: fails the test.
"""
from __future__ import annotations

import importlib.util
import pathlib

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def _panda_scene(n=12):
    from robodyn import urdf
    from robodyn.viz import Scene
    arm = urdf.lock_joints(urdf.load_urdf("panda"), ["panda_finger_joint1",
                                                     "panda_finger_joint2"])
    t = np.linspace(0.0, 2.0, n)
    q = np.array([0.0, -0.3, 0.0, -2.0, 0.0, 1.8, 0.8]) + np.outer(np.sin(2 * t),
                                                                   [0.8, 0.4, 0, 0.5, 0, 0.6, 1])
    return Scene(t, title="Panda", alt="The Franka Panda arm moving its joints.").robot(arm, q)


def _pages():
    """tests/browser/test_pages.py as a module: its check_scenes, shared with the book's pages."""
    spec = importlib.util.spec_from_file_location("browser_test_pages",
                                                  pathlib.Path(__file__).with_name("test_pages.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        yield b
        b.close()


def test_robot_with_meshes_turns_moves_and_stays_offline(browser, tmp_path, monkeypatch):
    from robodyn.viz import scene as scene_module
    monkeypatch.delenv("ROBODYN_QUICK", raising=False)
    if scene_module.plotly_js_path() is None:
        pytest.fail("no plotly.js on this machine: run `bash scripts/fetch_assets.sh _assets`")
    scene = _panda_scene()
    page_file = tmp_path / "panda.html"
    page_file.write_text("<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
                         "<title>Panda</title></head><body style='width:900px'>"
                         + scene.html(static=False) + "</body></html>", encoding="utf-8")
    full = scene.to_plotly()

    page = browser.new_page(viewport={"width": 1000, "height": 800})
    problems, origin = [], page_file.as_uri()
    page.on("console", lambda m: m.type == "error" and problems.append(f"console: {m.text}"))
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))

    def on_request(r):
        if not (r.url == origin or r.url.startswith(("data:", "blob:", "about:"))):
            problems.append(f"request outside the page: {r.url}")
    page.on("request", on_request)
    page.goto(origin)
    page.wait_for_function("() => document.querySelector('div.robodyn-scene-plot"
                           "[data-robodyn-drawn]')", timeout=60000)
    # it draws, turns when dragged, moves with its slider: the checks every page's scenes get
    _pages().check_scenes(page, "the Panda's page")
    plot = page.locator("div.robodyn-scene-plot").first

    # the last instant: every moving mesh where the Python side puts it
    last = full["frames"][-1]
    got = plot.evaluate("""async (el) => {
        const names = el.layout.sliders[0].steps.map(s => s.args[0][0]);
        await Plotly.animate(el, [names[names.length - 1]], {mode: 'immediate',
                             frame: {duration: 0, redraw: true}, transition: {duration: 0}});
        return el.data.map(d => [Array.from(d.x), Array.from(d.y), Array.from(d.z),
                                 Array.from(d.i || [])]);
    }""")
    assert len(last["traces"]) == 10                  # the 11 links but link0, on the base
    for t, want in zip(last["traces"], last["data"]):
        for c, axis in enumerate("xyz"):
            np.testing.assert_allclose(got[t][c], want[axis], atol=3e-4,
                                       err_msg=f"trace {t} ({want['name']}), {axis}")
        assert got[t][3] == want["i"]
    assert not problems, "\n".join(problems)
    page.close()
