"""robodyn.viz.Scene: the 3D scene's data (fixed and moving parts, frames that hold exactly the
moving parts at each instant), its two renderings (static page: the site's plotly.js, nothing
off the site; live: the library embedded), the still for the PDF, and bad input refused.
The browser half (WebGL drawn, dragging turns the camera, the slider moves the parts) is in
tests/browser/test_pages.py::check_scenes."""
import base64
import re

import numpy as np
import pytest

from robodyn.rigid_motion import exp_se3, homogeneous, revolute_screw
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


# ----------------------------------------------------------------------------- meshes (issue 38)

from robodyn.viz import meshes as meshes_module  # noqa: E402
from robodyn.viz.meshes import TriangleMesh, read_mesh  # noqa: E402

_TET_V = np.array([[0.0, 0, 0], [0.1, 0, 0], [0, 0.1, 0], [0, 0, 0.1]])
_TET_F = np.array([[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])


def _expand_compact(fig):
    """What the page's loader does with a compact figure (robodynLocal, robodynPose), written
    again here from its definition: world = R local + p, P the rows of the 3x4 pose."""
    local = {t: np.array(tr["robodynLocal"]) for t, tr in enumerate(fig["data"])
             if "robodynLocal" in tr}

    def place(t, P):
        P = np.array(P).reshape(3, 4)
        return P[:, :3] @ local[t] + P[:, 3:]
    data = [place(t, tr["robodynPose"]) if t in local else None
            for t, tr in enumerate(fig["data"])]
    frames = [[place(t, d["robodynPose"]) if "robodynPose" in d else None
               for t, d in zip(fr["traces"], fr["data"])] for fr in fig["frames"]]
    return data, frames


def test_moving_mesh_page_carries_vertices_once_and_poses(monkeypatch):
    monkeypatch.delenv("ROBODYN_QUICK", raising=False)
    t = np.linspace(0, 1, 30)
    S = revolute_screw([0, 0, 1], [0.2, 0, 0])
    poses = np.array([exp_se3(S, 3 * a) for a in t])
    dense = TriangleMesh(*_sphere(3))
    s = Scene(t, alt="a mesh on a circle")
    s.mesh(poses, dense, name="ball")
    full, compact = s.to_plotly(), s.to_plotly(compact=True)
    # the full figure: each frame holds the mesh's vertices moved by that instant's pose
    for fr, H in zip(full["frames"], poses):
        xyz = np.array([fr["data"][0][c] for c in "xyz"])
        np.testing.assert_allclose(xyz.T, dense.vertices @ H[:3, :3].T + H[:3, 3], atol=1e-4)
    # the compact figure places the same points; only the first instant carries vertices
    data, frames = _expand_compact(compact)
    np.testing.assert_allclose(data[0], np.array([full["data"][0][c] for c in "xyz"]),
                               atol=2e-4)
    for f_full, f_comp in zip(full["frames"], frames):
        np.testing.assert_allclose(f_comp[0], [f_full["data"][0][c] for c in "xyz"], atol=2e-4)
    assert all(set(fr["data"][0]) == {"type", "robodynPose"} for fr in compact["frames"])
    assert compact["data"][0]["i"] == full["data"][0]["i"]
    # bytes: the page weighs the mesh once plus 12 numbers per instant
    import json
    n_full, n_page = len(json.dumps(full)), len(s.html(static=True))
    assert n_page < n_full / 10, (n_page, n_full)


def _sphere(subdivisions):
    import trimesh
    m = trimesh.creation.icosphere(subdivisions=subdivisions, radius=0.05)
    return np.asarray(m.vertices), np.asarray(m.faces)


def test_read_mesh_simplifies_caches_and_scales(tmp_path, monkeypatch):
    import trimesh
    monkeypatch.setenv("ROBODYN_CACHE", str(tmp_path / "cache"))
    v, f = _sphere(4)                                     # 5120 triangles
    path = tmp_path / "ball.stl"
    trimesh.Trimesh(v, f).export(path)
    whole = read_mesh(path)
    assert whole.n_faces == 5120
    small = read_mesh(path, max_faces=200, scale=2.0)
    assert 150 <= small.n_faces <= 220
    # still the ball (radius 0.05 scaled by 2): every kept vertex within 8 mm (8 %) of the
    # sphere (quadric collapse moves a kept vertex to the best fit of its merged faces)
    r = np.linalg.norm(small.vertices, axis=1)
    assert np.abs(r - 0.1).max() < 8e-3, np.abs(r - 0.1).max()
    assert np.abs(r.mean() - 0.1) < 3e-3
    cached = list((tmp_path / "cache" / "meshes").glob("*.npz"))
    assert len(cached) == 2
    # the second read comes from the cache: same arrays (even with trimesh out of reach)
    monkeypatch.setattr(meshes_module, "_read", lambda *a: pytest.fail("not cached"))
    again = read_mesh(path, max_faces=200, scale=2.0)
    np.testing.assert_array_equal(again.vertices, small.vertices)
    np.testing.assert_array_equal(again.faces, small.faces)


def test_read_mesh_of_a_dae_file(tmp_path):
    pytest.importorskip("collada")
    import trimesh
    v, f = _sphere(2)
    path = tmp_path / "ball.dae"
    trimesh.Trimesh(v, f).export(path)
    m = read_mesh(path, max_faces=100)
    assert 60 <= m.n_faces <= 110
    np.testing.assert_allclose(m.bounds(), [[-0.05] * 3, [0.05] * 3], atol=4e-3)


def _panda_arm():
    urdf = pytest.importorskip("robodyn.urdf")
    try:
        model = urdf.load_urdf("panda")
    except ModuleNotFoundError:
        pytest.skip("example-robot-data is not installed")
    return urdf.lock_joints(model, ["panda_finger_joint1", "panda_finger_joint2"]), model


def test_robot_meshes_sit_where_pinocchio_puts_the_links(monkeypatch):
    """Each mesh of the Panda at each instant = Pinocchio's placement of its joint frame (same
    URDF, fingers locked by buildReducedModel) @ the URDF's pose of the mesh in that link @ the
    mesh file's vertices, read by trimesh."""
    pin = pytest.importorskip("pinocchio")
    import trimesh
    monkeypatch.delenv("ROBODYN_QUICK", raising=False)
    arm, full_model = _panda_arm()
    rng = np.random.default_rng(38)
    t = np.linspace(0, 1, 4)
    qs = rng.uniform(-1.5, 1.5, (4, 7))
    s = Scene(t, alt="the Panda").robot(arm, qs, meshes="collision")
    fig = s.to_plotly()
    pm = pin.buildModelFromUrdf(full_model.source)
    fingers = [pm.getJointId(n) for n in ("panda_finger_joint1", "panda_finger_joint2")]
    red = pin.buildReducedModel(pm, fingers, pin.neutral(pm))
    data = red.createData()
    entries = [m for m in arm.meshes if m[5] == "collision"]
    assert [tr["name"] for tr in fig["data"]] == [e[0] for e in entries]
    for frame, q in zip(fig["frames"], qs):
        pin.framesForwardKinematics(red, data, q)
        moved = dict(zip(frame["traces"], frame["data"]))
        assert sorted(moved) == list(range(1, len(entries)))      # link0, on the base, stays
        for t, (link, _, _, path, scale, _) in enumerate(entries):
            tr = moved.get(t, fig["data"][t])
            oMf = data.oMf[red.getFrameId(link)].homogeneous
            raw = trimesh.load(path, force="mesh")
            want = (np.asarray(raw.vertices) * scale) @ oMf[:3, :3].T + oMf[:3, 3]
            got = np.array([tr[c] for c in "xyz"]).T
            # the same point set (read_mesh welds duplicates): compare both ways
            d = np.linalg.norm(got[:, None] - want[None], axis=2)
            assert d.min(axis=1).max() < 2e-4 and d.min(axis=0).max() < 2e-4, link


def test_robot_page_weight_and_still(monkeypatch):
    monkeypatch.delenv("ROBODYN_QUICK", raising=False)
    arm, _ = _panda_arm()
    t = np.linspace(0, 2, 41)
    qs = np.array([0.0, -0.3, 0.0, -2.0, 0.0, 1.8, 0.8]) + 0.4 * np.sin(t)[:, None]
    s = Scene(t, alt="the Panda").robot(arm, qs, max_faces=300)
    page = s.html(static=True)
    assert len(page) < 250_000, len(page)             # 11 visual meshes, 41 instants
    assert not re.search(r"https?://", page)
    faces = [len(tr["i"]) for tr in s.to_plotly(compact=True)["data"]]
    assert len(faces) == 11 and max(faces) < 600
    png = base64.b64decode(s.still_png(dpi=50))
    assert png[:8] == b"\x89PNG\r\n\x1a\n"


def test_two_link_urdf_robot_moves_its_mesh(tmp_path, monkeypatch):
    """A robot made here: its arm's mesh turns with joint 1 about x, 0.1 m above the base."""
    monkeypatch.delenv("ROBODYN_QUICK", raising=False)
    pytest.importorskip("yourdfpy")
    import runpy
    from pathlib import Path
    from robodyn.urdf import load_urdf
    helper = runpy.run_path(str(Path(__file__).parent / "fuzz_calls" / "mesh38.py"))
    model = load_urdf(str(helper["write_two_links"](tmp_path)))
    t = np.linspace(0, 1, 3)
    q = np.array([[0.0], [np.pi / 2], [np.pi]])
    fig = Scene(t, alt="two links").robot(model, q, meshes="visual").to_plotly()
    base, arm = fig["data"]
    assert base["name"] == "base" and arm["name"] == "arm"
    tip = np.array([0, 0, 0.1])                           # the tetrahedron's top vertex
    for fr, a in zip(fig["frames"], q[:, 0]):
        xyz = np.array([fr["data"][0][c] for c in "xyz"]).T     # only the arm moves
        Rx = np.array([[1, 0, 0], [0, np.cos(a), -np.sin(a)], [0, np.sin(a), np.cos(a)]])
        want = np.array([0, 0, 0.1]) + Rx @ (np.array([0, 0, 0.2]) + tip)
        assert np.min(np.linalg.norm(xyz - want, axis=1)) < 1e-4
    assert fig["frames"][0]["traces"] == [1]


@pytest.mark.parametrize("call, exc, message", [
    (lambda p: read_mesh(p / "none.stl"), ValueError, "read_mesh: path: expected an existing"),
    (lambda p: read_mesh(p / "x.ply"), ValueError, "read_mesh: path: expected a mesh file "
                                                    "ending in"),
    (lambda p: read_mesh(3), TypeError, "read_mesh: path: expected a path"),
    (lambda p: read_mesh(_write(p / "bad.stl", b"solid x\nnot a mesh\n")), ValueError,
     "read_mesh: path: expected a mesh file with triangles"),
    (lambda p: read_mesh(_write(p / "t.obj", b"v 0 0 0\n")), ValueError, "read_mesh: path"),
    (lambda p: read_mesh(_write(p / "t.obj", b"v 0 0 0\n"), scale=[1, -1, 1]), ValueError,
     "read_mesh: scale"),
    (lambda p: read_mesh(_write(p / "t.obj", b"v 0 0 0\n"), max_faces=2), ValueError,
     "read_mesh: max_faces"),
    (lambda p: TriangleMesh(_TET_V, _TET_F + 1), ValueError, "TriangleMesh: faces: expected "
                                                             "vertex indices 0 to 3"),
    (lambda p: TriangleMesh(_TET_V[:, :2], _TET_F), ValueError, "TriangleMesh: vertices"),
    (lambda p: TriangleMesh(_TET_V, _TET_F * 0.5), ValueError, "TriangleMesh: faces"),
    (lambda p: Scene(alt="x").mesh(np.eye(4), "ball.stl"), TypeError, "Scene.mesh: mesh"),
    (lambda p: Scene(alt="x").mesh(np.eye(4), (_TET_V * 1e8, _TET_F)), ValueError,
     "Scene.mesh: mesh: expected coordinates within"),
    (lambda p: Scene(alt="x").robot("panda", np.zeros(7)), TypeError, "Scene.robot: model"),
])
def test_bad_mesh_input_is_refused(tmp_path, call, exc, message):
    with pytest.raises(exc, match=re.escape(message)):
        call(tmp_path)


def test_bad_robot_input_is_refused():
    arm, _ = _panda_arm()
    s = Scene(np.linspace(0, 1, 3), alt="x")
    with pytest.raises(ValueError, match=re.escape("Scene.robot: q: expected shape (7,) (still) "
                                                   "or (3, 7)")):
        s.robot(arm, np.zeros(6))
    with pytest.raises(ValueError, match=re.escape("Scene.robot: meshes")):
        s.robot(arm, np.zeros(7), meshes="cad")
    with pytest.raises(ValueError, match=re.escape("Scene.robot: color")):
        s.robot(arm, np.zeros(7), color=[])


def _write(path, data):
    path.write_bytes(data)
    return path


def test_read_mesh_clusters_where_edge_collapse_stops():
    """The UR5's upper arm (a CAD export of 29,436 triangles in pieces whose seams are not
    shared edges): quadric edge collapse stops near 8,000; grid clustering takes it to at most
    the 300 asked, and the simplified arm keeps the whole arm's extent (to 2 cm)."""
    urdf = pytest.importorskip("robodyn.urdf")
    try:
        model = urdf.load_urdf("ur5")
    except ModuleNotFoundError:
        pytest.skip("example-robot-data is not installed")
    link, _, _, path, scale, _ = next(m for m in model.meshes
                                      if m[0] == "upper_arm_link" and m[5] == "visual")
    whole = read_mesh(path, scale=scale)
    small = read_mesh(path, scale=scale, max_faces=300)
    assert whole.n_faces > 20_000 and 100 <= small.n_faces <= 300
    np.testing.assert_allclose(small.bounds(), whole.bounds(), atol=0.02)
    # every simplified vertex lies near the original surface's vertices (within 3 cm)
    d = np.linalg.norm(small.vertices[:, None] - whole.vertices[None], axis=2).min(axis=1)
    assert d.max() < 0.03, d.max()
