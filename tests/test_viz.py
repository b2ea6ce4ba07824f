"""Tests of robodyn.viz: the static-HTML contract of interactive figures, the widget view, the
page-weight budget, the timing file, animations, and the drawing primitives on the book's robots.
"""
import base64
import html.parser
import io
import json
import math
import re

import numpy as np
import pytest
import sympy as sp
from matplotlib.figure import Figure

import robodyn as rd
from robodyn import models, viz


# ---------------------------------------------------------------- helpers

class _Contract(html.parser.HTMLParser):
    """Collect the interactive-figure elements of a static HTML string."""

    def __init__(self):
        super().__init__()
        self.roots, self.sliders, self.imgs, self.scripts, self.data = [], [], [], [], []
        self._in_data = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        classes = (a.get("class") or "").split()
        if tag == "div" and "robodyn-interactive" in classes:
            self.roots.append(a)
        if tag == "input" and "robodyn-slider" in classes:
            self.sliders.append(a)
        if tag == "img" and "robodyn-frame" in classes:
            self.imgs.append(a)
        if tag == "script":
            self.scripts.append(a)
            self._in_data = "robodyn-data" in classes

    def handle_endtag(self, tag):
        if tag == "script":
            self._in_data = False

    def handle_data(self, data):
        if self._in_data:
            self.data.append(json.loads(data.replace("<\\/", "</")))


def parse(s):
    p = _Contract()
    p.feed(s)
    p.close()
    return p


def draw_sine(fig, a, b=0.0):
    ax = fig.add_subplot()
    x = np.linspace(0, 2 * np.pi, 60)
    ax.plot(x, np.sin(a * x + b))
    ax.set_xlabel("x (rad)")
    ax.set_ylabel("sin")


def _png_size(uri):
    from PIL import Image
    raw = base64.b64decode(uri.split(",", 1)[1])
    return Image.open(io.BytesIO(raw)).size


@pytest.fixture
def static(monkeypatch):
    monkeypatch.setenv("ROBODYN_STATIC", "1")
    monkeypatch.delenv("ROBODYN_QUICK", raising=False)


@pytest.fixture
def quick(monkeypatch):
    monkeypatch.delenv("ROBODYN_STATIC", raising=False)
    monkeypatch.setenv("ROBODYN_QUICK", "1")


@pytest.fixture
def live(monkeypatch):
    monkeypatch.delenv("ROBODYN_STATIC", raising=False)
    monkeypatch.delenv("ROBODYN_QUICK", raising=False)


# ---------------------------------------------------------------- the static HTML contract

def test_static_html_contract(static):
    f = viz.interactive_figure(draw_sine, {"a": viz.Slider(0.5, 2.0, steps=4, label="frequency"),
                                           "b": (0.0, 1.0, 3)}, title="A sine", figsize=(4, 3))
    p = parse(f.html)
    assert len(p.roots) == 1
    assert [s["data-param"] for s in p.sliders] == ["a", "b"]
    assert [s["type"] for s in p.sliders] == ["range", "range"]
    assert [int(s["max"]) + 1 for s in p.sliders] == [4, 3]
    assert len(p.imgs) == 1 and p.imgs[0]["alt"].startswith("A sine")
    (data,) = p.data
    assert f.frames == len(data["frames"]) == 4 * 3 and f.mode == "static"
    assert len(set(data["frames"])) == 12              # distinct values, distinct frames
    assert all(u.startswith("data:image/png;base64,") for u in data["frames"])
    assert data["values"][0] == ["0.5", "1", "1.5", "2"]
    # the shown frame is the one of the sliders' start positions (row-major index)
    i, j = (int(s["value"]) for s in p.sliders)
    assert p.imgs[0]["src"] == data["frames"][i * 3 + j]
    assert f.frame_bytes == sum(len(u) for u in data["frames"]) <= viz.FRAME_BUDGET_BYTES
    # offline: nothing is fetched (no src/href other than data URIs)
    assert "http://" not in f.html and "https://" not in f.html
    assert all("src" not in s for s in p.scripts)


def test_identical_values_give_identical_frames(static):
    f = viz.interactive_figure(lambda fig, a: draw_sine(fig, 1.0), {"a": (0, 1, 3)})
    frames = parse(f.html).data[0]["frames"]
    assert len(set(frames)) == 1                   # the test above can fail: frames are real


def test_default_and_alt(static):
    f = viz.interactive_figure(draw_sine, {"a": viz.Slider(0, 2, steps=5, default=1.4)})
    p = parse(f.html)
    assert p.sliders[0]["value"] == "3"            # 1.4 snaps to the grid value 1.5
    assert p.imgs[0]["alt"].startswith("Interactive figure with sliders for a")
    g = viz.interactive_figure(draw_sine, {"a": (0, 2, 2)}, title="T", alt="A sine wave")
    assert parse(g.html).imgs[0]["alt"].startswith("A sine wave")


def test_two_figures_on_a_page_have_no_ids(static):
    f = viz.interactive_figure(draw_sine, {"a": (0, 1, 2)})
    g = viz.interactive_figure(draw_sine, {"a": (0, 1, 2)})
    page = f.html + g.html
    assert ' id="' not in page                     # no global ids to clash
    assert len(parse(page).roots) == 2
    assert "DOMContentLoaded" in f.html and "data-robodyn-ready" in f.html


def test_quick_mode_uses_a_small_grid(quick):
    f = viz.interactive_figure(draw_sine, {"a": (0, 2, 9), "b": (0, 1, 2)})
    p = parse(f.html)
    assert f.mode == "quick" and f.frames == 3 * 2 == len(p.data[0]["frames"])
    assert [int(s["max"]) + 1 for s in p.sliders] == [3, 2]
    assert "disabled" not in p.sliders[0]


def test_live_mode_carries_only_the_default_frame(live):
    f = viz.interactive_figure(draw_sine, {"a": (0, 2, 9)})
    p = parse(f.html)
    assert f.mode == "live" and f.frames == 1 == len(p.data[0]["frames"])
    assert "disabled" in p.sliders[0]


def test_mimebundle_has_widget_html_and_text(quick):
    f = viz.interactive_figure(draw_sine, {"a": (0, 2, 3)}, title="A sine")
    b = f._repr_mimebundle_()
    assert {"application/vnd.jupyter.widget-view+json", "text/html", "text/plain"} <= set(b)
    assert b["text/html"] == f.html
    assert b["application/vnd.jupyter.widget-view+json"]["model_id"]
    # the start frame as a still for builders without HTML (the PDF)
    assert base64.b64decode(b["image/png"])[:4] == b"\x89PNG"
    assert f"data:image/png;base64,{b['image/png']}" in f.html


def test_widget_callback_redraws(quick):
    import ipywidgets
    f = viz.interactive_figure(draw_sine, {"a": (0, 2, 3), "b": (0, 1, 2)})
    box = f.widget()
    image, s_a, s_b = box.children
    assert isinstance(image, ipywidgets.Image) and isinstance(s_a, ipywidgets.FloatSlider)
    assert (s_a.min, s_a.max, s_a.step, s_a.value) == (0.0, 2.0, 1.0, 1.0)
    before = image.value
    s_a.value = 2.0
    assert image.value != before and image.value == f.render_png(a=2.0, b=s_b.value)


def test_budget_is_respected_and_warned(static):
    def heavy(fig, a, b):                          # noise makes PNGs incompressible
        ax = fig.add_subplot()
        ax.imshow(np.random.default_rng(int(10 * a + b)).random((300, 450)), cmap="viridis",
                  interpolation="nearest")
    with pytest.warns(viz.BudgetWarning, match="reduced"):
        f = viz.interactive_figure(heavy, {"a": (0, 1, 10), "b": (0, 1, 10)}, figsize=(6, 4))
    d = parse(f.html).data[0]
    assert f.frame_bytes == sum(len(u) for u in d["frames"]) <= viz.FRAME_BUDGET_BYTES
    assert f.dpi < 100 or f.frames < 100
    assert len(d["frames"]) == math.prod(d["steps"]) == f.frames


def test_dpi_is_honoured(quick):
    f = viz.interactive_figure(draw_sine, {"a": (0, 1, 2)}, figsize=(4, 3), dpi=50)
    assert _png_size(parse(f.html).data[0]["frames"][0]) == (200, 150)


def test_timing_file(quick, tmp_path, monkeypatch):
    path = tmp_path / "timings.jsonl"
    monkeypatch.setenv("ROBODYN_WIDGET_TIMINGS", str(path))
    viz.interactive_figure(draw_sine, {"a": (0, 1, 3)}, title="one")
    viz.interactive_figure(draw_sine, {"a": (0, 1, 2), "b": (0, 1, 2)}, title="two")
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    assert [r["title"] for r in lines] == ["one", "two"]
    assert lines[1]["params"] == ["a", "b"] and lines[1]["frames"] == 4
    for r in lines:
        assert {"title", "params", "frames", "median_ms", "max_ms", "bytes"} <= set(r)
        assert 0 < r["median_ms"] <= r["max_ms"] and r["bytes"] > 0
        assert 0 <= r["median_cpu_ms"] <= r["max_cpu_ms"]


# ---------------------------------------------------------------- bad input

@pytest.mark.parametrize("params, exc, match", [
    ({"a": (1, 0, 3)}, ValueError, "expected lo < hi, got lo=1.0, hi=0.0"),
    ({"a": (0, 1, 1)}, ValueError, "steps: expected an integer >= 2, got 1"),
    ({"a": (0, 1, 2.5)}, TypeError, "steps: expected an integer, got float"),
    ({"a": (0, 1, 10**12)}, ValueError, "steps: expected at most 1001"),
    ({"a": (0, 1)}, TypeError, r"expected viz.Slider\(lo, hi, steps=..., default=...\) or a "
                               r"tuple"),
    ({"a": ("x", 1, 3)}, TypeError, "lo: expected a real number.*, got str"),
    ({"a": (0, np.inf, 3)}, ValueError, r"(hi|params\[a\]\[1\]): expected finite numbers"),
    ({"1a": (0, 1, 3)}, ValueError, "Python identifiers .* got '1a'"),
    ({}, ValueError, "expected 1 or 2 parameters, got none"),
    ({"a": (0, 1, 2), "b": (0, 1, 2), "c": (0, 1, 2)}, ValueError,
     "at most 2 parameters, got 3 .*fix the others as default arguments of draw"),
    ([("a", (0, 1, 2))], TypeError, "params: expected a dict"),
])
def test_bad_params(quick, params, exc, match):
    with pytest.raises(exc, match=match):
        viz.interactive_figure(draw_sine, params)


def test_bad_slider_default_and_label():
    with pytest.raises(ValueError, match=r"default: expected a value in \[lo, hi\] = \[0.0, 1.0\], "
                                         r"got 2.0"):
        viz.Slider(0, 1, steps=3, default=2)
    with pytest.raises(TypeError, match="label: expected a str"):
        viz.Slider(0, 1, steps=3, label=5)
    with pytest.raises(TypeError, match="steps: expected an integer, got bool"):
        viz.Slider(0, 1, steps=True)


def test_bad_other_arguments(quick):
    with pytest.raises(TypeError, match=r"draw: expected a function draw\(fig, \*\*values\), "
                                        r"got str"):
        viz.interactive_figure("draw", {"a": (0, 1, 2)})
    with pytest.raises(TypeError, match=r"figsize: expected \(width, height\) in inches"):
        viz.interactive_figure(draw_sine, {"a": (0, 1, 2)}, figsize=6)
    with pytest.raises(ValueError, match="figsize: expected a positive number.*positive inches"):
        viz.interactive_figure(draw_sine, {"a": (0, 1, 2)}, figsize=(0, 4))
    with pytest.raises(TypeError, match="title: expected a str or None, got int"):
        viz.interactive_figure(draw_sine, {"a": (0, 1, 2)}, title=3)
    with pytest.raises(ValueError, match=r"dpi: expected a value in \[10, 600\], got 5"):
        viz.interactive_figure(draw_sine, {"a": (0, 1, 2)}, dpi=5)


def test_slider_names_must_be_keywords_of_draw(quick):
    with pytest.raises(ValueError, match=r"draw has no parameter c; expected draw\(fig, a, c\), "
                                         r"got draw\(fig, a, b=0.0\)"):
        viz.interactive_figure(draw_sine, {"a": (0, 1, 2), "c": (0, 1, 2)})
    f = viz.interactive_figure(lambda fig, **v: draw_sine(fig, v["c"]), {"c": (0, 1, 2)})
    assert f.frames == 2


def test_draw_that_uses_pyplot_is_refused(quick):
    def via_pyplot(fig, a):                          # draws somewhere else, not into fig
        pass
    with pytest.raises(ValueError, match=r"draw\(fig, a=0.5\) drew nothing into fig; make the "
                                         r"axes from fig"):
        viz.interactive_figure(via_pyplot, {"a": (0, 1, 3)})
    with pytest.raises(TypeError, match="continuous_update: expected True or False"):
        viz.interactive_figure(draw_sine, {"a": (0, 1, 2)}, continuous_update="yes")


def test_continuous_update_follows_the_draw_time(quick):
    import time as _time

    def slow(fig, a):
        _time.sleep(0.12)
        draw_sine(fig, a)
    assert viz.interactive_figure(slow, {"a": (0, 1, 2)}).widget().children[1]\
        .continuous_update is False
    assert viz.interactive_figure(slow, {"a": (0, 1, 2)}, continuous_update=True).widget()\
        .children[1].continuous_update is True


def test_errors_in_draw_surface_at_construction(quick):
    def broken(fig, a):
        raise ZeroDivisionError("inside draw")
    with pytest.raises(ZeroDivisionError, match="inside draw"):
        viz.interactive_figure(broken, {"a": (0, 1, 2)})


# ---------------------------------------------------------------- animation

def _turning_rod(fig, i):
    fig.clear()
    ax = fig.add_subplot()
    ax.plot([0, np.cos(0.2 * i)], [0, np.sin(0.2 * i)], lw=3)
    ax.set_xlim(-1, 1)
    ax.set_ylim(-1, 1)


def test_animation_player(quick):
    a = viz.animation(_turning_rod, 40, title="A turning rod")
    assert a.frames == 5                            # quick mode keeps at most 5
    assert a.html.count('"data:image/png;base64,') == 5
    assert 'class="robodyn-animation"' in a.html and 'aria-label="A turning rod"' in a.html
    assert "anim-slider" in a.html and "play_animation" in a.html   # matplotlib's player
    assert "https://" not in a.html and "font-awesome" not in a.html
    imgs = re.findall(r"<img[^>]*>", a.html)
    assert len(imgs) == 1 and 'alt="A turning rod"' in imgs[0]
    assert a._repr_html_() == a.html and a.frame_bytes <= viz.FRAME_BUDGET_BYTES
    sliders = re.findall(r'<input[^>]*type="range"[^>]*>', a.html)
    assert len(sliders) == 1 and 'aria-label="Animation frame"' in sliders[0]
    b = a._repr_mimebundle_()
    assert b["text/html"] == a.html and base64.b64decode(b["image/png"])[:4] == b"\x89PNG"


def test_animation_sequence_and_errors(live):
    seen = []
    a = viz.animation(lambda fig, i: (seen.append(i), _turning_rod(fig, i)), [0.0, 2.0, 4.0])
    assert a.frames == 3 and {0.0, 2.0, 4.0} <= set(seen)
    with pytest.raises(ValueError, match="frames: expected an integer >= 1, got 0"):
        viz.animation(_turning_rod, 0)
    with pytest.raises(TypeError, match="frames: expected an integer, got float"):
        viz.animation(_turning_rod, 2.5)
    with pytest.raises(TypeError, match=r"draw: expected a function draw\(fig, i\)"):
        viz.animation(None, 3)
    with pytest.raises(ValueError, match="interval: expected a positive number.*milliseconds"):
        viz.animation(_turning_rod, 3, interval=0)
    with pytest.raises(ValueError, match=r"draw\(fig, 0\) drew nothing into fig"):
        viz.animation(lambda fig, i: None, 3)
    with pytest.raises(ValueError, match=r"dpi: expected a value in \[10, 600\], got 1000"):
        viz.animation(_turning_rod, 3, dpi=1000)


def test_animation_budget(live):
    def heavy(fig, i):
        fig.clear()
        ax = fig.add_subplot()
        ax.imshow(np.random.default_rng(i).random((200, 300)), interpolation="nearest")
    with pytest.warns(viz.BudgetWarning, match="reduced dpi 100 -> "):
        a = viz.animation(heavy, 30)
    assert a.dpi < 100 and a.frame_bytes <= viz.FRAME_BUDGET_BYTES
    assert a.html.count('"data:image/png;base64,') == a.frames


# ---------------------------------------------------------------- drawing primitives

CHAINS = {
    "planar_rr": (models.planar_rr(1.0, 0.7), [0.4, -1.1]),
    "planar_rp": (models.planar_rp(), [0.7, 0.35]),
    "spatial_rrr": (models.spatial_rrr(), [0.3, -0.6, 1.1]),
    "ur5_like": (models.ur5_like(), [0.1, -0.5, 0.9, -0.3, 0.6, 0.2]),
    "random_chain": (models.random_chain(6, np.random.default_rng(3), prismatic=0.4,
                                         helical=0.2), [0.3, -0.2, 0.5, 0.1, -0.4, 0.25]),
}


@pytest.mark.parametrize("name", list(CHAINS))
@pytest.mark.parametrize("dim", ["2d", "3d"])
def test_draw_chain_endpoints(name, dim):
    chain, q = CHAINS[name]
    fig = Figure()
    ax = fig.add_subplot(projection="3d") if dim == "3d" else fig.add_subplot()
    arts = viz.draw_chain(ax, chain, q, frames=True, screws=True, link_frames=True)
    line = arts[0]
    pts = np.column_stack(line.get_data_3d()) if dim == "3d" else line.get_xydata()
    k = pts.shape[1]
    ee = rd.fk_space(chain, q)[:3, 3]
    assert np.allclose(pts[0], 0) and np.allclose(pts[-1], ee[:k])
    n_points = sum(t != "prismatic" for t in chain.joint_types) + 2
    assert len(pts) == n_points
    # every interior point lies on its joint's current axis (the Jacobian column)
    J = rd.jacobian_space(chain, q)
    full = viz.chain_points(chain, q)
    revolute = [i for i, t in enumerate(chain.joint_types) if t != "prismatic"]
    for prev, p, i in zip(full[:-2], full[1:-1], revolute):
        w, v = J[:3, i], J[3:, i]
        assert np.allclose(v + np.cross(w, p) - (w @ v) * w, 0, atol=1e-9)   # v = -w x p + h w
        assert abs((p - prev) @ w) < 1e-9           # and it is the axis point nearest prev
    if dim == "3d":
        spans = [b - a for a, b in (ax.get_xlim(), ax.get_ylim(), ax.get_zlim())]
        assert np.allclose(spans, spans[0])
    else:
        assert ax.get_aspect() == 1.0
    fig.canvas.draw() if fig.canvas else None


def test_chain_points_nearest_point_rule():
    # planar RR at q = (pi/2, 0): base, joint 1 at the origin, joint 2 at (0, 1), tip at (0, 2)
    pts = viz.chain_points(models.planar_rr(), [np.pi / 2, 0.0])
    assert np.allclose(pts, [[0, 0, 0], [0, 0, 0], [0, 1, 0], [0, 2, 0]])
    # planar RP: the prismatic joint adds no point
    pts = viz.chain_points(models.planar_rp(), [0.0, 0.5])
    assert np.allclose(pts, [[0, 0, 0], [0, 0, 0], [1.5, 0, 0]])


def test_draw_frame_and_screw_axis():
    fig = Figure()
    ax3 = fig.add_subplot(1, 2, 1, projection="3d")
    ax2 = fig.add_subplot(1, 2, 2)
    H = rd.homogeneous(rd.rotation("z", np.pi / 2), [1, 2, 3])
    a3 = viz.draw_frame(ax3, H, length=0.5, label="{b}")
    assert len(a3) == 4
    x_end = np.column_stack(a3[0].get_data_3d())[-1]
    assert np.allclose(x_end, [1, 2.5, 3])                      # x_b = y_s after Rot(z, 90 deg)
    assert [l.get_color() for l in a3[:3]] == ["tab:red", "tab:green", "tab:blue"]
    a2 = viz.draw_frame(ax2, H, length=0.5)
    assert len(a2) == 2 and np.allclose(a2[1].get_xydata()[-1], [0.5, 2])
    # a revolute axis along x through (0, 1, 0), given in the frame of H
    S_b = rd.revolute_screw([1, 0, 0], [0, 1, 0])
    arts = viz.draw_screw_axis(ax3, S_b, H=H, length=2.0)
    seg = np.column_stack(arts[0].get_data_3d())
    S_s = rd.adjoint(H) @ S_b
    for p in seg:                                                # on the axis, along omega
        assert np.allclose(S_s[3:] + np.cross(S_s[:3], p), 0, atol=1e-9)
    assert np.isclose(np.linalg.norm(seg[1] - seg[0]), 2.0)
    arts = viz.draw_screw_axis(ax2, [0, 0, 0, 0, 1, 0], length=0.3)  # prismatic: arrow along v
    assert np.allclose(arts[0].get_xydata(), [[0, 0], [0, 0.3]])


def test_arm_figure_chooses_2d_or_3d():
    assert viz.arm_figure(models.planar_rr(), [0.1, 0.2]).axes[0].name == "rectilinear"
    assert viz.arm_figure(models.ur5_like(), np.zeros(6)).axes[0].name == "3d"


def test_drawing_bad_input():
    fig = Figure()
    ax = fig.add_subplot()
    with pytest.raises(TypeError, match="expected a matplotlib Axes"):
        viz.draw_chain(fig, models.planar_rr(), [0, 0])
    with pytest.raises(TypeError, match="expected a SerialChain, got a list"):
        viz.draw_chain(ax, [1, 2], [0, 0])
    with pytest.raises(ValueError, match="one value per joint of the 2-joint chain"):
        viz.draw_chain(ax, models.planar_rr(), [0, 0, 0])
    l1 = sp.Symbol("l1")
    with pytest.raises(TypeError, match="chain: expected a chain with numeric parameters.*build it with numbers"):
        viz.draw_chain(ax, models.planar_rr(l1), [0, 0])
    with pytest.raises(ValueError, match="draw_frame: H"):
        viz.draw_frame(ax, np.eye(3))
    with pytest.raises(ValueError, match=r"got \|omega\| = 0, \|v\| = 0"):
        viz.draw_screw_axis(ax, np.zeros(6))
    no_links = rd.SerialChain.from_screws(models.planar_rr().screws, models.planar_rr().home)
    with pytest.raises(ValueError, match="link_frames: expected False for .* no link frames"):
        viz.draw_chain(ax, no_links, [0, 0], link_frames=True)


def test_import_does_not_touch_pyplot():
    import subprocess
    import sys
    code = ("import sys, robodyn.viz as v; "
            "print('matplotlib.pyplot' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_radius_fixes_the_limits():
    fig = Figure()
    ax = fig.add_subplot()
    viz.draw_chain(ax, models.planar_rr(), [0.3, 0.2], radius=2.5)
    assert ax.get_xlim() == (-2.5, 2.5) and ax.get_ylim() == (-2.5, 2.5)
    with pytest.raises(ValueError, match=r"radius: expected a positive number, got -1.0 \(a length in metres\)"):
        viz.set_equal_aspect(ax, radius=-1)


# ---------------------------------------------------------------- in a real browser

def test_static_html_in_chromium(static, tmp_path):
    """Two figures on a page, one parsed with the page and one inserted after load the way
    JupyterLab does (innerHTML, then the scripts re-created): sliders swap frames in both."""
    sync_api = pytest.importorskip("playwright.sync_api")
    import shutil
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    f = viz.interactive_figure(draw_sine, {"a": (0.5, 2, 3), "b": (0, 1, 2)}, title="first")
    g = viz.interactive_figure(draw_sine, {"a": (0.5, 2, 4)}, title="second")
    page_html = ("<!doctype html><html><head><meta charset='utf-8'><title>t</title></head><body>"
                 + f.html + "<div id='later'></div><script>window.LATE = "
                 + json.dumps(g.html).replace("</", "<\\/") + ";</script></body></html>")
    path = tmp_path / "page.html"
    path.write_text(page_html, encoding="utf-8")
    insert = """() => {
        const box = document.getElementById('later');
        box.innerHTML = window.LATE;
        for (const old of box.querySelectorAll('script')) {
            const s = document.createElement('script');
            if (old.type) { s.type = old.type; }
            s.className = old.className;
            s.textContent = old.textContent;
            old.replaceWith(s);
        }
    }"""
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium,
                                    args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page()
        problems = []
        page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: problems.append(str(e)))
        page.on("request", lambda r: problems.append(r.url)
                if not r.url.startswith(("data:", "file:")) else None)
        page.goto(path.as_uri())
        page.evaluate(insert)
        roots = page.locator("div.robodyn-interactive")
        assert roots.count() == 2
        for k, expected in ((0, (f, 2)), (1, (g, 1))):
            fig, n = expected
            root = roots.nth(k)
            img = root.locator("img.robodyn-frame")
            sliders = root.locator("input.robodyn-slider")
            assert sliders.count() == n
            seen = {img.get_attribute("src")}
            for j in range(n):
                sliders.nth(j).fill("0")                 # fires input and change events
                seen.add(img.get_attribute("src"))
            data = parse(fig.html).data[0]
            assert seen <= set(data["frames"]) and len(seen) >= 2
            assert img.get_attribute("src") == data["frames"][0]    # all sliders at index 0
            assert root.locator("output.robodyn-value").first.text_content() == "0.5"
            assert "= 0.5" in img.get_attribute("alt")
        browser.close()
    assert problems == []


def test_layout_is_frozen_after_the_first_frame(quick):

    def draw(fig, a):
        ax = fig.add_subplot()
        ax.plot([0, 1], [0, 10 ** (6 * a)])         # tick labels of very different widths
        ax.set_ylabel("y")

    f = viz.interactive_figure(draw, {"a": (0, 1, 3)})
    pos = f._layout["positions"]
    assert len(pos) == 1
    assert f.render_png(a=1.0)[:8] == b"\x89PNG\r\n\x1a\n"

    def varying(fig, a):                             # a different number of axes: laid out anew
        for k in range(1 + int(a > 0.5)):
            fig.add_subplot(1, 2, k + 1).plot([0, a])
    g = viz.interactive_figure(varying, {"a": (0, 1, 2)})
    assert g.frames == 2 and len(set(parse(g.html).data[0]["frames"])) == 2


# ---------------------------------------------------------------- speed paths and grid nits

def _pixels(png):
    from PIL import Image
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(int)


@pytest.mark.parametrize("steps", range(2, 16))
def test_quick_grid_is_a_subset_of_the_full_grid(steps):
    s = viz.Slider(-1.0, 2.0, steps=steps, default=0.3)
    q = viz._quick_grid(s)
    assert 2 <= q.steps <= min(3, steps)
    full = s.values
    assert all(np.isclose(full, v).any() for v in q.values), (full, q.values)
    assert (q.lo, q.hi) == (s.lo, s.hi)


def test_quick_mode_frames_are_full_grid_frames(quick, monkeypatch):
    seen = []

    def draw(fig, a):
        seen.append(a)
        fig.add_subplot().plot([0, a])

    f = viz.interactive_figure(draw, {"a": viz.Slider(0.0, 1.0, steps=4, default=1 / 3)})
    full = viz.Slider(0.0, 1.0, steps=4).values
    assert f.frames == 2                              # 4 values: the quick grid is the two ends
    assert all(np.isclose(full, float(v)).any() for v in parse(f.html).data[0]["values"][0])
    assert all(np.isclose(full, v).any() for v in seen)


def test_colorbar_with_ax_in_the_frozen_layout(quick):
    """fig.colorbar(mappable, ax=ax) makes a colorbar axes; later frames (frozen layout) must
    draw, keep the positions of the first frame, and not fall back to a failing layout."""

    def draw(fig, a):
        ax = fig.add_subplot()
        im = ax.imshow(np.outer(np.arange(4), np.arange(4)) * a, vmin=0, vmax=20)
        fig.colorbar(im, ax=ax, label="value")
        ax.set_title(f"a = {a:.1f}")

    layout = {}
    frames = [viz._render(draw, {"a": a}, (4, 3), 60, "t", palette=False, layout=layout)[0]
              for a in (0.5, 1.0, 2.0)]
    assert len(layout["positions"]) == 2
    assert all(p[:8] == b"\x89PNG\r\n\x1a\n" for p in frames)
    f = viz.interactive_figure(draw, {"a": (0.5, 2.0, 3)})
    assert f.frames == 3 and f.render_png(a=1.25)[:4] == b"\x89PNG"
    # the colorbar is drawn at the same place in every frame: its pixel columns right of the
    # image axes are identical (only the image and the title change)
    px = [_pixels(p) for p in frames]
    right = slice(int(px[0].shape[1] * 0.85), None)
    assert all(np.array_equal(px[0][:, right], p[:, right]) for p in px[1:])


X_CURVE = np.linspace(0, 2 * np.pi, 120)


def _plain_curve(fig, a):
    ax = fig.add_subplot()
    ax.plot(X_CURVE, np.sin(a * X_CURVE) * 0.9, color="tab:red")
    ax.set_xlim(-0.5, 7); ax.set_ylim(-1.2, 1.2)
    ax.set_xlabel("$q_1$ (rad)"); ax.set_ylabel(r"$\tau$ (N m)")
    ax.set_title("a curve")


def _reused_curve(calls):
    def draw(fig, a):
        calls.append(fig)
        if not fig.axes:
            ax = fig.add_subplot()
            ax.plot(X_CURVE, np.sin(a * X_CURVE) * 0.9, color="tab:red", animated=True)
            ax.set_xlim(-0.5, 7); ax.set_ylim(-1.2, 1.2)
            ax.set_xlabel("$q_1$ (rad)"); ax.set_ylabel(r"$\tau$ (N m)")
            ax.set_title("a curve")
        fig.axes[0].lines[0].set_ydata(np.sin(a * X_CURVE) * 0.9)
    return draw


def test_reused_figure_blits_the_same_pixels_as_a_fresh_draw(quick):
    calls = []
    reused = _reused_curve(calls)
    state, plain_layout = {}, {}
    for a in (1.0, 2.0, 1.5, 3.0, 1.0):
        png_r, _ = viz._render(reused, {"a": a}, (4, 3), 80, "T", palette=False, layout=state,
                               reuse=True)
        png_p, _ = viz._render(_plain_curve, {"a": a}, (4, 3), 80, "T", palette=False,
                               layout=plain_layout)
        assert np.array_equal(_pixels(png_r), _pixels(png_p)), a
    assert len({id(f) for f in calls}) == 1             # one figure, handed back every time
    fig = calls[0]
    assert len(fig.axes) == 1 and len(fig.axes[0].lines) == 1 and len(fig.texts) == 1  # suptitle
    assert state[("reuse", 80)]["background"] is not None
    # the static frames and the live callback of interactive_figure use the same path
    f = viz.interactive_figure(_reused_curve([]), {"a": (1.0, 3.0, 3)}, reuse_figure=True,
                               title="T", figsize=(4, 3), dpi=80)
    g = viz.interactive_figure(_plain_curve, {"a": (1.0, 3.0, 3)}, title="T", figsize=(4, 3),
                               dpi=80)
    assert np.array_equal(_pixels(f.render_png(a=1.5)), _pixels(g.render_png(a=1.5)))


def test_reused_figure_without_animated_artists_redraws_fully(quick):
    def draw(fig, a):
        if not fig.axes:
            ax = fig.add_subplot()
            ax.plot([0, 1], [0, 1])
            ax.set_ylim(0, 3)
        fig.axes[0].lines[0].set_ydata([0, a])

    state = {}
    one = viz._render(draw, {"a": 1.0}, (3, 2), 60, None, palette=False, layout=state,
                      reuse=True)[0]
    two = viz._render(draw, {"a": 2.5}, (3, 2), 60, None, palette=False, layout=state,
                      reuse=True)[0]
    assert state[("reuse", 60)]["background"] is None
    assert not np.array_equal(_pixels(one), _pixels(two))


def test_reused_figure_errors(quick):
    def grows(fig, a):                                   # adds axes on every call
        fig.add_subplot().plot([0, a])

    with pytest.raises(ValueError, match="reuse_figure=True added axes to a figure"):
        viz.interactive_figure(grows, {"a": (0, 1, 3)}, reuse_figure=True)
    with pytest.raises(TypeError, match="reuse_figure: expected True or False, got"):
        viz.interactive_figure(_plain_curve, {"a": (0, 1, 3)}, reuse_figure=1)

    def nothing(fig, a):
        pass

    with pytest.raises(ValueError, match="drew nothing into fig"):
        viz.interactive_figure(nothing, {"a": (0, 1, 3)}, reuse_figure=True)


def test_animated_and_clear_animated():
    fig = Figure()
    ax, bx = fig.subplots(1, 2)
    bars = ax.bar([0, 1], [1, 2])
    marked = viz.animated([bars, ax.plot([0, 1]), [ax.text(0, 0, "t")]])
    assert len(marked) == 4 and all(a.get_animated() for a in marked)
    kept = bx.plot([0, 1])[0]
    viz.animated(bx.plot([1, 0]))
    viz.clear_animated(ax)                       # one axes: bx keeps its animated line
    assert len(ax.patches) == len(ax.lines) == len(ax.texts) == 0 and len(bx.lines) == 2
    viz.clear_animated(fig)
    assert list(bx.lines) == [kept]
    with pytest.raises(TypeError, match="animated: artists: expected a matplotlib artist or an iterable"):
        viz.animated(3)
    with pytest.raises(TypeError, match="animated: artists: expected a matplotlib artist or an iterable of artists .*, got"):
        viz.animated([ax.plot([0, 1])[0], 3])
    with pytest.raises(TypeError, match="clear_animated: where: expected a matplotlib Axes"):
        viz.clear_animated("figure")


def test_reused_3d_chain_blits_the_same_pixels_as_a_fresh_draw(quick):
    rrr = models.spatial_rrr()

    def plain(fig, q2):
        ax = fig.add_subplot(projection="3d")
        viz.draw_chain(ax, rrr, [0.5, q2, 1.0], frames=True, screws=True, length=0.25)
        viz.set_equal_aspect(ax, radius=0.8)
        ax.set_title(f"q2 = {q2:.2f}", fontsize=9)

    def reused(fig, q2):
        if not fig.axes:
            ax = fig.add_subplot(projection="3d")
            viz.set_equal_aspect(ax, radius=0.8)
            ax.set_title(" ", fontsize=9)
            viz.animated(ax.title)
        ax, = fig.axes
        viz.clear_animated(ax)
        viz.animated(viz.draw_chain(ax, rrr, [0.5, q2, 1.0], frames=True, screws=True,
                                    length=0.25))
        ax.title.set_text(f"q2 = {q2:.2f}")

    st, pl = {}, {}
    for q2 in (-0.5, 0.7, 1.4):
        a = viz._render(plain, {"q2": q2}, (3, 3), 60, None, palette=False, layout=pl)[0]
        b = viz._render(reused, {"q2": q2}, (3, 3), 60, None, palette=False, layout=st,
                        reuse=True)[0]
        # a full 3D draw orders the arrows (collections) by depth, the blit by zorder: a pixel
        # or two where an arrow head meets a line may differ
        differ = np.abs(_pixels(a) - _pixels(b)).max(axis=2) > 0
        assert differ.mean() < 1e-3, (q2, differ.sum())


def test_pdf_dpi_still_pictures(quick, monkeypatch):
    def draw(fig, a):
        fig.add_subplot().plot([0, a])

    f = viz.interactive_figure(draw, {"a": (0.0, 1.0, 3)}, figsize=(2, 1.5), dpi=50)
    monkeypatch.setenv("ROBODYN_PDF_DPI", "200")
    g = viz.interactive_figure(draw, {"a": (0.0, 1.0, 3)}, figsize=(2, 1.5), dpi=50)
    size = lambda b64: _pixels(base64.b64decode(b64)).shape[:2]
    assert size(f.still_png) == (75, 100) and size(g.still_png) == (300, 400)
    assert g.html.count("data:image/png") == f.html.count("data:image/png")   # HTML unchanged
    a = viz.animation(lambda fig, i: fig.add_subplot().plot([0, i]), [0, 1], figsize=(2, 1.5),
                      dpi=50)
    assert size(a.still_png) == (300, 400)
    for bad, msg in (("x", "expected a number of dots per inch"),
                     ("5", r"expected a value in \[50, 600\]")):
        monkeypatch.setenv("ROBODYN_PDF_DPI", bad)
        with pytest.raises(ValueError, match=f"ROBODYN_PDF_DPI: {msg}"):
            viz.interactive_figure(draw, {"a": (0.0, 1.0, 3)})
