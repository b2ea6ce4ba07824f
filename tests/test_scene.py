"""robodyn.viz.Scene: the 3D scene's data (fixed and moving parts, frames that hold exactly the
moving parts at each instant), its two renderings (static page: the site's plotly.js, nothing
off the site; live: the library embedded), the still for the PDF, and bad input refused.
The browser half (WebGL drawn, dragging turns the camera, the slider moves the parts) is in
tests/browser/test_pages.py::check_scenes."""
import base64
import re

import numpy as np
import pytest

from robodyn.kinematics import exp_se3, homogeneous, revolute_screw
from robodyn.viz import Scene
from robodyn.viz import scene as scene_module


def _spin(n=7):
    t = np.linspace(0.0, 1.0, n)
    S = revolute_screw([0, 0, 1], [0, 0, 0], pitch=0.1)
    H0 = homogeneous(np.eye(3), [0.5, 0.0, 0.0])
    poses = np.array([exp_se3(S, 2 * th) @ H0 for th in t])
    s = Scene(t, title="spin", alt="A frame on a screw path.")
    s.screw_axis([0, 0, 0], [0, 0, 1], 0.1, name="axis")
    s.triad(poses, length=0.2, name="frame")
    s.line(poses[:, :3, 3], name="path")
    s.box(poses, [0.2, 0.1, 0.05], name="body")
    return s, t, poses


def test_frames_hold_the_moving_parts_at_each_instant(monkeypatch):
    monkeypatch.delenv("ROBODYN_QUICK", raising=False)
    s, t, poses = _spin()
    fig = s.to_plotly()
    # traces: axis line, pitch helix, 3 triad axes, path, box
    assert [tr["type"] for tr in fig["data"]] == ["scatter3d"] * 6 + ["mesh3d"]
    assert len(fig["frames"]) == len(t)
    for frame, H in zip(fig["frames"], poses):
        assert frame["traces"] == [2, 3, 4, 6]              # triad axes and the box move
        x_axis = frame["data"][0]
        # the frame's x axis: from the origin of the pose along its first column
        np.testing.assert_allclose([x_axis["x"][1], x_axis["y"][1], x_axis["z"][1]],
                                   H[:3, 3] + 0.2 * H[:3, 0], atol=1e-4)
        box = frame["data"][3]
        centre = np.mean([box["x"], box["y"], box["z"]], axis=1)
        np.testing.assert_allclose(centre, H[:3, 3], atol=1e-4)
    # the pitch mark: one turn of the helix rises 2 pi h
    helix = fig["data"][1]
    assert helix["z"][-1] - helix["z"][0] == pytest.approx(2 * np.pi * 0.1, abs=1e-4)
    # the axes' ranges hold every instant (the view does not rescale while playing)
    lo = [fig["layout"]["scene"][a]["range"][0] for a in ("xaxis", "yaxis", "zaxis")]
    hi = [fig["layout"]["scene"][a]["range"][1] for a in ("xaxis", "yaxis", "zaxis")]
    assert np.all(poses[:, :3, 3] >= np.array(lo)) and np.all(poses[:, :3, 3] <= np.array(hi))
    # camera and motion independent: the frames never carry a layout (no camera in them)
    assert all("layout" not in f for f in fig["frames"])
    assert fig["layout"]["uirevision"] == fig["layout"]["scene"]["uirevision"]
    assert len(fig["layout"]["sliders"][0]["steps"]) == len(t)


def test_quick_mode_keeps_few_instants(monkeypatch):
    monkeypatch.setenv("ROBODYN_QUICK", "1")
    s, t, _ = _spin(50)
    fig = s.to_plotly()
    assert len(fig["frames"]) == scene_module.QUICK_INSTANTS
    assert fig["frames"][0]["name"] == "0" and fig["frames"][-1]["name"] == "49"


def test_static_page_loads_the_site_copy_and_nothing_else():
    s, _, _ = _spin()
    page = s.html(static=True)
    assert scene_module.PLOTLY_ASSET in page and "window.Plotly" in page
    assert not re.search(r"https?://", page), "the static scene names an address off the site"
    assert len(page) < 60_000                       # the library is not embedded
    data = re.search(r'<script type="application/json" class="robodyn-scene-data">(.*?)'
                     r"</script>", page, re.S).group(1)
    assert "</" not in data.replace("<\\/", "")


def test_live_output_embeds_the_library(tmp_path, monkeypatch):
    fake = tmp_path / "plotly.js"
    fake.write_text("window.Plotly = {fake: true};")
    monkeypatch.setenv("ROBODYN_PLOTLY_JS", str(fake))
    s, _, _ = _spin()
    page = s.html(static=False)
    assert "window.Plotly = {fake: true};" in page
    assert scene_module.plotly_js_path() == fake


def test_live_output_without_the_library_shows_the_still(monkeypatch):
    monkeypatch.setattr(scene_module, "plotly_js_path", lambda: None)
    s, _, _ = _spin()
    page = s.html(static=False)
    assert "data:image/png;base64," in page and "make lab" in page


def test_still_picture_for_the_pdf():
    s, _, _ = _spin()
    png = base64.b64decode(s.still_png(dpi=60))
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    bundle = s._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "text/html", "image/png"}


@pytest.mark.parametrize("call, exc, message", [
    (lambda: Scene([0, 1, 0.5], alt="x"), ValueError, "Scene: times: expected increasing"),
    (lambda: Scene([0, np.nan], alt="x"), ValueError, "Scene: times"),
    (lambda: Scene([0, 1], alt=""), ValueError, "Scene: alt"),
    (lambda: Scene([0, 1], alt=3), TypeError, "Scene: alt"),
    (lambda: Scene([0, 1], alt="x", still=5), ValueError, "Scene: still"),
    (lambda: Scene(np.arange(5000.0), alt="x"), ValueError, "Scene: times"),
    (lambda: Scene([0, 1], alt="x").triad(np.zeros((4, 4))), ValueError,
     "Scene.triad: poses"),
    (lambda: Scene([0, 1], alt="x").triad(np.tile(np.eye(4), (3, 1, 1))), ValueError,
     "Scene.triad: poses: expected shape"),
    (lambda: Scene([0, 1], alt="x").line(np.zeros((4, 2))), ValueError,
     "Scene.line: points"),
    (lambda: Scene([0, 1], alt="x").line(np.zeros((2, 3)), color="red; x"), ValueError,
     "Scene.line: color"),
    (lambda: Scene([0, 1], alt="x").line(np.zeros((2, 3)), name="a\nb"), ValueError,
     "Scene.line: name"),
    (lambda: Scene([0, 1], alt="x").box(np.eye(4), [1, 0, 1]), ValueError,
     "Scene.box: size"),
    (lambda: Scene([0, 1], alt="x").screw_axis([0, 0, 0], [0, 0, 0], 0.1), ValueError,
     "Scene.screw_axis: direction"),
    (lambda: Scene([0, 1], alt="x").plane([0, 0, 0], [0, 0, 1], -1), ValueError,
     "Scene.plane: size"),
    (lambda: Scene([0, 1], alt="x").to_plotly(), ValueError, "Scene: the scene has no parts"),
])
def test_bad_input_is_refused(call, exc, message):
    with pytest.raises(exc, match=re.escape(message)):
        call()
