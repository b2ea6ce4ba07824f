"""Three-dimensional scenes the reader can turn: WebGL, a time slider, offline.

A :class:`~robodyn.viz.scene.Scene` collects parts -- frames as arrow triads, links and paths as lines, joints and
contact points as markers, bodies as boxes, screw axes, planes -- each either fixed or moving
(one value per instant of the scene's ``times``), from the poses and points the computing
modules produce. One object, two renderings, as :func:`~robodyn.viz.interactive.interactive_figure`:

* ``text/html``: a WebGL scene drawn by plotly.js (its ``gl3d`` bundle, fetched from npm at build
  time by ``scripts/fetch_assets.sh``, never from a CDN). Drag to turn, scroll to zoom, the
  camera button of the tool bar resets the view; play/pause and a time slider move the parts.
  The camera lives in the layout and the motion in animation frames, so turning the view does
  not restart the motion and moving the slider does not turn the view. In the built book
  (``ROBODYN_STATIC=1``) the page loads the library once from the site's ``_static/plotly/``;
  in JupyterLab (or Colab) the output carries the library itself, so it needs neither a server
  nor a network.
* ``image/png``: a matplotlib still of the scene at ``still`` (by default its first instant),
  with the moving parts' paths -- what the PDF shows.

The scene's numbers are stored rounded to 0.1 mm (``DIGITS``) and the frames hold only the
moving parts, so a scene of 100 instants weighs tens of kilobytes.
"""
from __future__ import annotations

import base64
import html as _html
import json
import os
from pathlib import Path

import numpy as np

from ..kinds import Direction
from .. import _value_checks
from .. import _meaning_checks
from ._common import _env_on, _pdf_dpi, _quick

__all__ = ["Scene", "plotly_js_path"]

DIGITS = 4
"""Decimals kept of every coordinate (metres: 0.1 mm)."""

MAX_INSTANTS = 2000
"""At most this many instants in one scene (the page's weight grows with them)."""

QUICK_INSTANTS = 6
"""Instants kept when the notebooks run as tests (``ROBODYN_QUICK=1``)."""

PLOTLY_ASSET = "plotly/plotly-gl3d.min.js"
"""Where ``scripts/fetch_assets.sh`` puts plotly.js's gl3d bundle, under ``_assets/`` (the
site's ``_static/``)."""

_AXIS_COLORS = ("#d62728", "#2ca02c", "#1f77b4")
_FNAME = "Scene"


def plotly_js_path():
    """The plotly.js file a live scene embeds, or None when there is none on this machine.

    Looked for in this order: ``$ROBODYN_PLOTLY_JS``; the repository's ``_assets/`` (``make
    book`` and ``make lab`` fetch it); the ``plotly`` Python package's bundled copy.

    >>> p = plotly_js_path(); p is None or p.name.endswith('.js')
    True
    """
    env = os.environ.get("ROBODYN_PLOTLY_JS", "").strip()
    candidates = [Path(env)] if env else []
    candidates.append(Path(__file__).resolve().parents[3] / "_assets" / PLOTLY_ASSET)
    try:
        import plotly
        candidates.append(Path(plotly.__file__).parent / "package_data" / "plotly.min.js")
    except ImportError:
        pass
    for c in candidates:
        if c.is_file():
            return c
    return None


# ----------------------------------------------------------------------------- checks

def _name(x, what):
    if not isinstance(x, str) or not 0 < len(x) <= 80 or any(ord(c) < 32 for c in x):
        raise _value_checks.error(what, "a one-line name of 1 to 80 characters", x, exc=TypeError
                            if not isinstance(x, str) else ValueError)
    return x


def _color(x, what):
    if not isinstance(x, str) or not (x.startswith("#") and len(x) in (4, 7)
                                      and all(c in "0123456789abcdefABCDEF" for c in x[1:])):
        raise _value_checks.error(what, "a colour '#rrggbb'", x,
                            exc=TypeError if not isinstance(x, str) else ValueError)
    return x


def _length(x, what, high=1e6):
    return _value_checks.real_number(x, what, low=0, strict_low=True, high=high)


def _point(x, what):
    return _within(_value_checks.real_array(x, what, shape=(3,)), what)


def _within(a, what, bound=1e6):
    """Coordinates of a scene stay within ``bound`` metres (a page, not an overflow)."""
    if a.size and np.abs(a).max() > bound:
        raise _value_checks.error(what, f"coordinates within {bound:g} m of the origin",
                            f"{np.abs(a).max():.3g} m")
    return a


def _opacity(x, what):
    return _value_checks.real_number(x, what, low=0, strict_low=True, high=1)


def _direction(x, what):
    """A non-zero 3-vector, returned as a unit vector (scaled first: no overflow)."""
    w = _value_checks.real_array(x, what, shape=(3,))
    big = float(np.abs(w).max())
    if not big > 1e-300:
        raise _value_checks.error(what, "a non-zero vector", w)
    w = w / big
    return w / float(np.linalg.norm(w))


# ----------------------------------------------------------------------------- the scene

class Scene:
    """A 3D scene over a time grid: fixed and moving parts, drawn in WebGL.

    Parameters
    ----------
    times : array (T,), optional
        The instants of the motion, increasing (s). Without it the scene is still.
    title : str
        Shown above the scene.
    alt : str
        What the scene shows, for readers who cannot see it (required, as for every figure).
    still : int
        The instant drawn in the still picture (``image/png``, the PDF's).
    height : int
        Height of the view in CSS pixels.
    time_label, unit : str
        What the slider shows (``"t = 0.5 s"`` by default; a path parameter or an angle
        may drive the motion instead of time).

    Every part takes either fixed data or moving data with a first axis of length T.

    Examples
    --------
    >>> import numpy as np
    >>> t = np.linspace(0, 1, 5)
    >>> s = Scene(t, title="A spinning frame", alt="A frame turning about z.")
    >>> poses = np.array([[[np.cos(a), -np.sin(a), 0, 0], [np.sin(a), np.cos(a), 0, 0],
    ...                    [0, 0, 1, 0], [0, 0, 0, 1]] for a in t])
    >>> s.triad(poses, name="{b}")
    Scene('A spinning frame': 5 instants, 1 parts)
    >>> fig = s.to_plotly(); len(fig["frames"]) <= 5, fig["layout"]["uirevision"]
    (True, 'robodyn')
    """

    def __init__(self, times=None, *, title="", alt, still=0, height=460, time_label="t",
                 unit="s"):
        if times is None:
            times = np.zeros(1)
        t = _value_checks.real_array(times, f"{_FNAME}: times")
        if t.ndim != 1 or not 1 <= t.size <= MAX_INSTANTS:
            raise _value_checks.error(f"{_FNAME}: times", f"a vector of 1 to {MAX_INSTANTS} instants",
                                t)
        if t.size > 1 and not np.all(np.diff(t) > 0):
            raise _value_checks.error(f"{_FNAME}: times", "increasing instants", "a vector that "
                                "does not increase")
        if np.abs(t).max() > 1e12 or t.size > 1 and not np.all(np.isfinite(np.diff(t))):
            raise _value_checks.error(f"{_FNAME}: times", "instants within 1e12", "larger ones")
        self._keep = self._kept_instants(t.size)
        self.times = t
        self.title = _text(title, f"{_FNAME}: title", 200, empty=True)
        self.alt = _text(alt, f"{_FNAME}: alt", 2000)
        self.still = _value_checks.size(still, f"{_FNAME}: still", low=0, high=None)
        if self.still >= t.size:
            raise _value_checks.error(f"{_FNAME}: still, times", f"still an index of times (0 to "
                                f"{t.size - 1}, {t.size} instants)", f"still = {self.still}")
        self.height = _value_checks.size(height, f"{_FNAME}: height", low=150, high=2000)
        self.time_label = _text(time_label, f"{_FNAME}: time_label", 20)
        self.unit = _text(unit, f"{_FNAME}: unit", 20, empty=True)
        self._parts = []

    @staticmethod
    def _kept_instants(n):
        if not _quick() or n <= QUICK_INSTANTS:
            return np.arange(n)
        return np.unique(np.linspace(0, n - 1, QUICK_INSTANTS).round().astype(int))

    def __repr__(self):
        return f"Scene({self.title!r}: {self.times.size} instants, {len(self._parts)} parts)"

    # ------------------------------------------------------------------ parts
    def _data(self, x, tail, what):
        """Fixed data of shape ``tail``, or moving data of shape (T, *tail): (moving, array)."""
        a = _value_checks.real_array(x, what)
        _within(a, what)
        T = self.times.size
        if a.shape == tuple(tail):
            return False, a
        if a.shape == (T, *tail):
            return True, a
        want = "x".join(str(d) for d in tail)
        raise _value_checks.error(what, f"shape ({want}) (fixed) or ({T}, {want}) (one per instant)",
                            f"shape {a.shape}")

    def _points_data(self, points, what):
        a = _value_checks.real_array(points, what)
        _within(a, what)
        T = self.times.size
        if a.ndim == 2 and a.shape[1] == 3 and a.shape[0] >= 1:
            return False, a
        if a.ndim == 3 and a.shape[0] == T and a.shape[2] == 3 and a.shape[1] >= 1:
            return True, a
        raise _value_checks.error(what, f"points of shape (k, 3) (fixed) or ({T}, k, 3) (one set per "
                            "instant)", f"shape {a.shape}")

    def _poses(self, poses, what):
        """Rigid poses: one (4, 4) fixed, or (T, 4, 4) one per instant: (moving, array)."""
        moving, H = self._data(poses, (4, 4), what)
        for h in (H[None] if not moving else H):
            if not np.allclose(h[3], [0.0, 0.0, 0.0, 1.0], atol=1e-9):
                raise _value_checks.error(what, "poses with last row [0, 0, 0, 1]", h[3].tolist())
            _meaning_checks.rotation_matrix(h[:3, :3], what, tol=1e-6)
        return moving, H

    def _add(self, kind, moving, **part):
        part.update(kind=kind, moving=moving)
        self._parts.append(part)
        return self

    def line(self, points, *, name="line", color="#444444", width=6, markers=False):
        """A polyline through ``points`` ((k, 3) fixed, or (T, k, 3) moving): links, paths."""
        moving, p = self._points_data(points, f"{_FNAME}.line: points")
        return self._add("line", moving, points=p, name=_name(name, f"{_FNAME}.line: name"),
                         color=_color(color, f"{_FNAME}.line: color"),
                         width=_length(width, f"{_FNAME}.line: width", 40),
                         markers=_value_checks.flag(markers, f"{_FNAME}.line: markers"))

    def points(self, points, *, name="points", color="#d62728", size=6):
        """Markers at ``points`` ((k, 3) or (T, k, 3)): joints, contact points, centres."""
        moving, p = self._points_data(points, f"{_FNAME}.points: points")
        return self._add("points", moving, points=p,
                         name=_name(name, f"{_FNAME}.points: name"),
                         color=_color(color, f"{_FNAME}.points: color"),
                         size=_length(size, f"{_FNAME}.points: size", 40))

    def triad(self, poses, *, length=0.2, name="frame"):
        """The x, y, z axes (red, green, blue) of a pose (4x4) or of one pose per instant."""
        moving, H = self._poses(poses, f"{_FNAME}.triad: poses")
        return self._add("triad", moving, poses=H, name=_name(name, f"{_FNAME}.triad: name"),
                         length=_length(length, f"{_FNAME}.triad: length"))

    def box(self, poses, size, *, name="body", color="#7f7f7f", opacity=0.5):
        """A box of edge lengths ``size`` (3,) centred at a pose (4x4) or one per instant."""
        moving, H = self._poses(poses, f"{_FNAME}.box: poses")
        s = _value_checks.real_array(size, f"{_FNAME}.box: size", shape=(3,))
        if not np.all(s > 0) or s.max() > 1e6:
            raise _value_checks.error(f"{_FNAME}.box: size", "three positive edge lengths (at most "
                                "1e6 m)", s)
        op = _opacity(opacity, f"{_FNAME}.box: opacity")
        return self._add("box", moving, poses=H, size=s, name=_name(name, f"{_FNAME}.box: name"),
                         color=_color(color, f"{_FNAME}.box: color"), opacity=op)

    def screw_axis(self, point, direction: Direction, pitch, *, length=1.0, name="screw axis",
                   color="#9467bd"):
        """A screw axis: the line through ``point`` along ``direction``, with a helix of one turn
        whose advance is the ``pitch`` (m per radian × 2π) -- the pitch made visible."""
        fn = f"{_FNAME}.screw_axis"
        q = _point(point, f"{fn}: point")
        w = _direction(direction, f"{fn}: direction")
        h = _value_checks.real_number(pitch, f"{fn}: pitch", low=-1e6, high=1e6)
        L = _length(length, f"{fn}: length")
        name = _name(name, f"{fn}: name")
        color = _color(color, f"{fn}: color")
        axis = np.array([q - 0.5 * L * w, q + 0.5 * L * w])
        u = np.cross(w, [1.0, 0, 0] if abs(w[0]) < 0.9 else [0, 1.0, 0])
        u /= np.linalg.norm(u)
        v = np.cross(w, u)
        a = np.linspace(0, 2 * np.pi, 49)
        r = 0.08 * L
        helix = q + r * (np.outer(np.cos(a), u) + np.outer(np.sin(a), v)) + np.outer(h * a, w)
        self.line(axis, name=name, color=color, width=5)
        return self.line(helix, name=f"{name}: pitch {h:.3g} m/rad", color=color, width=3)

    def plane(self, point, normal, size, *, name="plane", color="#bcbd22", opacity=0.25):
        """A square of side ``size`` through ``point`` with the given ``normal``: a floor, a wall."""
        fn = f"{_FNAME}.plane"
        p = _point(point, f"{fn}: point")
        n = _direction(normal, f"{fn}: normal")
        u = np.cross(n, [1.0, 0, 0] if abs(n[0]) < 0.9 else [0, 1.0, 0])
        u /= np.linalg.norm(u)
        v = np.cross(n, u)
        s = 0.5 * _length(size, f"{fn}: size")
        R = np.column_stack([u, v, n])
        H = np.eye(4)
        H[:3, :3], H[:3, 3] = R, p
        op = _opacity(opacity, f"{fn}: opacity")
        return self._add("box", False, poses=H, size=np.array([2 * s, 2 * s, 1e-4]),
                         name=_name(name, f"{fn}: name"), color=_color(color, f"{fn}: color"),
                         opacity=op)

    def mesh(self, poses, mesh, *, name="mesh", color="#a7b1bc", opacity=1.0):
        """A triangle mesh (a :class:`~robodyn.viz.meshes.TriangleMesh`, or a pair
        ``(vertices (V, 3), faces (F, 3))``) given in its own frame, placed at a pose (4x4) or
        at one pose per instant: a robot's link. In the page the mesh is stored once and each
        instant carries only its pose (12 numbers), so a moving robot weighs its meshes plus
        about 100 bytes per link and instant."""
        from .meshes import TriangleMesh
        fn = f"{_FNAME}.mesh"
        moving, H = self._poses(poses, f"{fn}: poses")
        if isinstance(mesh, tuple) and len(mesh) == 2:
            mesh = TriangleMesh(*mesh)
        if not isinstance(mesh, TriangleMesh):
            raise _value_checks.error(f"{fn}: mesh", "a TriangleMesh (robodyn.viz.meshes.read_mesh) "
                                "or a pair (vertices, faces)", mesh, exc=TypeError)
        _within(mesh.vertices, f"{fn}: mesh")
        return self._add("mesh", moving, poses=H, mesh=mesh, name=_name(name, f"{fn}: name"),
                         color=_color(color, f"{fn}: color"),
                         opacity=_opacity(opacity, f"{fn}: opacity"))

    def robot(self, model, q, *, base_poses=None, meshes="visual", max_faces=300,
              color=("#e8e8e8", "#5a5f66"), opacity=1.0):
        """A robot read from a URDF (:func:`robodyn.urdf.load_urdf`) drawn with its meshes, at
        joint values ``q`` ((n,) still, or (T, n) one per instant).

        Each mesh of the model (``model.meshes``) is read once (:func:`~robodyn.viz.meshes.read_mesh`,
        cached) and placed at (pose of its body) @ (its pose in the body), the
        bodies' poses from the model's forward kinematics. ``meshes``: ``'visual'`` (simplified
        toward ``max_faces`` triangles each) or ``'collision'`` (kept as they are, coarse
        already). ``base_poses``: the base body's pose (4x4) or one per instant (a floating
        base, or a fixed base placed in the scene); the identity by default. ``color``: one colour, or several used in turn over
        the links."""
        fn = f"{_FNAME}.robot"
        kinds = ("visual", "collision")
        kind = _value_checks.choice(meshes, f"{fn}: meshes", kinds)
        if not all(hasattr(model, a) for a in ("meshes", "parents", "placements", "axes")):
            raise _value_checks.error(f"{fn}: model", "a RobotModel (robodyn.urdf.load_urdf)", model,
                                exc=TypeError)
        n, T = model.n, self.times.size
        qa = _value_checks.real_array(q, f"{fn}: q")
        if qa.shape not in ((n,), (T, n)):
            raise _value_checks.error(f"{fn}: q", f"shape ({n},) (still) or ({T}, {n}) (one per "
                                "instant)", f"shape {qa.shape}", hint=f"{model.name} has {n} "
                                "joints")
        moving_q = qa.ndim == 2
        if base_poses is None:
            moving_b, B = False, np.eye(4)
        else:
            moving_b, B = self._poses(base_poses, f"{fn}: base_poses")
        if isinstance(color, str):
            colors = (color,)
        elif isinstance(color, (list, tuple)):
            colors = tuple(color)
        else:
            raise _value_checks.error(f"{fn}: color", "a colour '#rrggbb' or a list of them", color,
                                exc=TypeError)
        if not colors:
            raise _value_checks.error(f"{fn}: color", "a colour or a sequence of colours", color)
        colors = [_color(c, f"{fn}: color") for c in colors]
        target = _value_checks.size(max_faces, f"{fn}: max_faces", low=4, high=100_000)
        entries = [m for m in model.meshes if m[5] == kind]
        if not entries:
            raise _value_checks.error(f"{fn}: meshes", f"a kind of mesh {model.name} has "
                                f"({sorted({m[5] for m in model.meshes}) or 'none'})", kind)
        from .meshes import read_mesh
        qs = qa if moving_q else qa[None]
        Bs = B if moving_b else np.broadcast_to(B, (qs.shape[0], 4, 4))
        if moving_b and not moving_q:
            qs = np.broadcast_to(qs, (T, n))
        if moving_q and not moving_b:
            Bs = np.broadcast_to(B, (T, 4, 4))
        from ..trees import body_poses
        bodies = np.array([Bk @ body_poses(model, qk)[1:] for qk, Bk in zip(qs, Bs)])
        moving = moving_q or moving_b
        for k, (link, body, H, path, scale, _) in enumerate(entries):
            mesh = read_mesh(path, scale=scale, max_faces=target if kind == "visual" else None)
            world = (Bs if body < 0 else bodies[:, body]) @ np.asarray(H, dtype=float)
            moves = moving_b if body < 0 else moving          # the base moves only if it floats
            self.mesh(world if moves else world[0], mesh, name=_name(
                link[:80], f"{fn}: link name"), color=colors[k % len(colors)], opacity=opacity)
        return self

    # ------------------------------------------------------------------ geometry per instant
    def _segments(self, part, k):
        """The part at instant k as a list of (points (m, 3), colour) polylines and boxes."""
        kind = part["kind"]
        if kind in ("line", "points"):
            return part["points"][k] if part["moving"] else part["points"]
        H = part["poses"][k] if part["moving"] else part["poses"]
        if kind == "triad":
            o, R, L = H[:3, 3], H[:3, :3], part["length"]
            return [np.array([o, o + L * R[:, i]]) for i in range(3)]
        if kind == "mesh":
            return part["mesh"].vertices @ H[:3, :3].T + H[:3, 3]
        return _box_vertices(H, part["size"])

    def _bounds(self):
        lo, hi = np.full(3, np.inf), np.full(3, -np.inf)
        for part in self._parts:
            ks = range(self.times.size) if part["moving"] else [0]
            for k in ks:
                seg = self._segments(part, k)
                pts = np.vstack(seg) if isinstance(seg, list) else seg
                lo, hi = np.minimum(lo, pts.min(axis=0)), np.maximum(hi, pts.max(axis=0))
        if not np.all(np.isfinite(lo)):
            lo, hi = -np.ones(3), np.ones(3)
        centre, half = (lo + hi) / 2, max(float((hi - lo).max()) / 2, 1e-3) * 1.1
        return centre - half, centre + half

    # ------------------------------------------------------------------ plotly
    def _traces(self, k, compact=False, first=False):
        """The plotly traces of every part at instant k (a part may give several). ``compact``:
        a moving mesh is its pose only (and, in the ``first`` instant's traces, its vertices in
        its own frame), which the page's loader places (``_LOADER``: ``place``)."""
        out = []
        for part in self._parts:
            if compact and part["kind"] == "mesh" and part["moving"]:
                out.append(_compact_mesh_trace(part, part["poses"][k], first))
            else:
                out.extend(_part_traces(part, self._segments(part, k)))
        return out

    def to_plotly(self, *, compact=False):
        """The scene as a plotly figure (a dict: ``data``, ``layout``, ``frames``).

        ``compact=True`` -- what the page carries: a moving mesh's vertices once, in its own
        frame (``robodynLocal``), and its pose per instant (``robodynPose``, the top three rows
        of the 4x4 pose, row by row); the page's loader turns them into plotly's coordinates."""
        if not self._parts:
            raise _value_checks.refusal(
                ValueError, f"{_FNAME}: the scene has no parts (add a line, triad, box...)")
        compact = _value_checks.flag(compact, f"{_FNAME}.to_plotly: compact")
        keep = self._keep
        data = self._traces(keep[0], compact, first=True)
        moving = [i for i, tr in enumerate(_trace_owners(self._parts)) if tr]
        frames = []
        labels = []
        for k in keep:
            label = f"{self.times[k]:.3g}"
            labels.append(label)
            traces = self._traces(k, compact)
            frames.append({"name": str(int(k)), "data": [traces[i] for i in moving],
                           "traces": moving})
        lo, hi = self._bounds()
        layout = _layout(self, lo, hi, [str(int(k)) for k in keep], labels,
                         animated=len(keep) > 1 and bool(moving))
        return {"data": data, "layout": layout, "frames": frames if len(keep) > 1 else []}

    # ------------------------------------------------------------------ renderings
    def html(self, *, static=None):
        """The WebGL rendering: a div, the scene as JSON, and the loader.

        ``static`` (default: ``ROBODYN_STATIC``) -- True: the library comes from the site's
        ``_static/`` (the built book); False: it is embedded in the output (JupyterLab, Colab),
        or, where there is no copy of it, the still picture stands in with a note."""
        static = _env_on("ROBODYN_STATIC") if static is None else \
            _value_checks.flag(static, f"{_FNAME}.html: static")
        fig = self.to_plotly(compact=True)
        payload = json.dumps(fig, separators=(",", ":"), allow_nan=False).replace("</", "<\\/")
        library = ""
        if not static:
            path = plotly_js_path()
            if path is None:
                return (f'<div class="robodyn-scene-missing"><img alt="{_html.escape(self.alt)}"'
                        f' src="data:image/png;base64,{self.still_png()}"><p>This 3D view turns '
                        "with the mouse where plotly.js is at hand: run <code>make lab</code> "
                        "(it fetches it) or <code>pip install plotly</code>.</p></div>")
            src = path.read_text(encoding="utf-8").replace("</script", "<\\/script")
            library = f"<script>if (!window.Plotly) {{\n{src}\n}}</script>"
        title = (f'<div class="robodyn-scene-title" style="font-weight:600;margin:0.2em 0">'
                 f'{_html.escape(self.title)}</div>') if self.title else ""
        return (f'<div class="robodyn-scene" style="max-width:100%;margin:0.5em 0">{title}'
                f'<div class="robodyn-scene-plot" role="figure" aria-label="'
                f'{_html.escape(self.alt)}" style="width:100%;height:{self.height}px"></div>'
                f'<script type="application/json" class="robodyn-scene-data">{payload}</script>'
                f'{library}<script>{_LOADER % json.dumps(PLOTLY_ASSET)}</script></div>')

    def still_png(self, dpi=None):
        """The still picture (base64 PNG) at instant ``still``, with the moving parts' paths."""
        from ._common import _dpi_arg
        from .frames import _new_figure, _png_bytes
        dpi = _dpi_arg(dpi, f"{_FNAME}.still_png") or _pdf_dpi() or 100
        fig = _new_figure((6.4, 4.8), dpi)
        ax = fig.add_subplot(projection="3d")
        _draw_still(ax, self)
        return base64.b64encode(_png_bytes(fig, palette=False)).decode("ascii")

    def _repr_mimebundle_(self, include=None, exclude=None):
        return {"text/plain": repr(self), "text/html": self.html(),
                "image/png": self.still_png()}


# ----------------------------------------------------------------------------- helpers

def _text(x, what, n, empty=False):
    if not isinstance(x, str):
        raise _value_checks.error(what, "a string", x, exc=TypeError)
    if len(x) > n or (not empty and not x.strip()):
        raise _value_checks.error(what, f"{'a' if empty else 'a non-empty'} text of at most {n} "
                            "characters", f"{len(x)} characters")
    return x


def _box_vertices(H, size):
    corners = np.array([[i, j, k] for i in (-1, 1) for j in (-1, 1) for k in (-1, 1)]) * size / 2
    return corners @ H[:3, :3].T + H[:3, 3]


# the 12 triangles of a box whose vertices are ordered as in _box_vertices
_BOX_I = [0, 0, 4, 4, 0, 0, 2, 2, 0, 0, 1, 1]
_BOX_J = [1, 3, 5, 7, 1, 5, 3, 7, 2, 6, 3, 7]
_BOX_K = [3, 2, 7, 6, 5, 4, 7, 6, 6, 4, 7, 5]


def _r(a):
    return np.round(np.asarray(a, dtype=float), DIGITS).tolist()


def _part_traces(part, seg):
    kind = part["kind"]
    common = {"name": part["name"], "hoverinfo": "name", "showlegend": True}
    if kind == "line":
        mode = "lines+markers" if part["markers"] else "lines"
        return [dict(common, type="scatter3d", mode=mode, x=_r(seg[:, 0]), y=_r(seg[:, 1]),
                     z=_r(seg[:, 2]), line={"color": part["color"], "width": part["width"]},
                     marker={"size": 4, "color": part["color"]})]
    if kind == "points":
        return [dict(common, type="scatter3d", mode="markers", x=_r(seg[:, 0]),
                     y=_r(seg[:, 1]), z=_r(seg[:, 2]),
                     marker={"size": part["size"], "color": part["color"]})]
    if kind == "triad":
        out = []
        for i, s in enumerate(seg):
            out.append(dict(common, type="scatter3d", mode="lines", x=_r(s[:, 0]),
                            y=_r(s[:, 1]), z=_r(s[:, 2]), showlegend=(i == 0),
                            legendgroup=part["name"], line={"color": _AXIS_COLORS[i],
                                                            "width": 7}))
        return out
    if kind == "mesh":
        f = part["mesh"].faces
        return [dict(common, type="mesh3d", x=_r(seg[:, 0]), y=_r(seg[:, 1]), z=_r(seg[:, 2]),
                     i=f[:, 0].tolist(), j=f[:, 1].tolist(), k=f[:, 2].tolist(),
                     color=part["color"], opacity=part["opacity"], flatshading=True,
                     lighting=_MESH_LIGHT)]
    return [dict(common, type="mesh3d", x=_r(seg[:, 0]), y=_r(seg[:, 1]), z=_r(seg[:, 2]),
                 i=_BOX_I, j=_BOX_J, k=_BOX_K, color=part["color"], opacity=part["opacity"],
                 flatshading=True)]


_MESH_LIGHT = {"ambient": 0.55, "diffuse": 0.7, "specular": 0.15, "roughness": 0.6}


def _compact_mesh_trace(part, H, first):
    """A moving mesh at pose H as the page carries it: the pose (12 numbers); in the first
    instant's traces also the faces, the vertices in the mesh's own frame and the style."""
    pose = {"type": "mesh3d", "robodynPose": _r(H[:3, :4].ravel())}
    if not first:
        return pose
    v, f = part["mesh"].vertices, part["mesh"].faces
    return dict(pose, name=part["name"], hoverinfo="name", showlegend=True,
                robodynLocal=[_r(v[:, 0]), _r(v[:, 1]), _r(v[:, 2])],
                i=f[:, 0].tolist(), j=f[:, 1].tolist(), k=f[:, 2].tolist(),
                color=part["color"], opacity=part["opacity"], flatshading=True,
                lighting=_MESH_LIGHT)


def _trace_owners(parts):
    """For each trace, in order: whether the part it draws moves."""
    out = []
    for p in parts:
        n = 3 if p["kind"] == "triad" else 1
        out.extend([p["moving"]] * n)
    return out


def _layout(scene, lo, hi, names, labels, animated):
    axis = [{"range": [round(float(a), DIGITS), round(float(b), DIGITS)], "title": {"text": c},
             "backgroundcolor": "#fafafa", "showbackground": True}
            for a, b, c in zip(lo, hi, "xyz")]
    layout = {
        "uirevision": "robodyn",
        "margin": {"l": 0, "r": 0, "t": 10, "b": 10},
        "legend": {"x": 0, "y": 1, "bgcolor": "rgba(255,255,255,0.6)"},
        "scene": {"xaxis": axis[0], "yaxis": axis[1], "zaxis": axis[2],
                  "aspectmode": "cube", "uirevision": "robodyn",
                  "camera": {"eye": {"x": 1.5, "y": 1.3, "z": 0.9}}},
    }
    if animated:
        step_args = {"mode": "immediate", "frame": {"duration": 0, "redraw": True},
                     "transition": {"duration": 0}}
        dt = float(np.median(np.diff(scene.times))) if scene.times.size > 1 else 0.05
        play_ms = int(min(max(1000 * dt, 30), 200))
        layout["updatemenus"] = [{
            "type": "buttons", "direction": "left", "x": 0, "y": 0, "xanchor": "left",
            "yanchor": "top", "pad": {"t": 30, "r": 10}, "showactive": False,
            "buttons": [
                {"label": "Play", "method": "animate",
                 "args": [None, {"mode": "immediate", "fromcurrent": True,
                                 "frame": {"duration": play_ms, "redraw": True},
                                 "transition": {"duration": 0}}]},
                {"label": "Pause", "method": "animate",
                 "args": [[None], {"mode": "immediate", "frame": {"duration": 0,
                                                                  "redraw": False},
                                   "transition": {"duration": 0}}]}]}]
        layout["sliders"] = [{
            "active": 0, "x": 0.18, "len": 0.8, "y": 0, "yanchor": "top",
            "pad": {"t": 20}, "currentvalue": {"prefix": f"{scene.time_label} = ",
                                           "suffix": f" {scene.unit}" if scene.unit else "",
                                           "font": {"size": 13, "color": "#333333"}},
            "font": {"color": "rgba(0,0,0,0)", "size": 1}, "ticklen": 0, "minorticklen": 0,
            "steps": [{"label": lab, "method": "animate", "args": [[name], step_args]}
                      for name, lab in zip(names, labels)]}]
        layout["margin"]["b"] = 90
    return layout


def _draw_mesh(ax, world, part):
    """A mesh in the still: its triangles shaded by their angle to a light over the viewer."""
    from matplotlib.colors import to_rgb
    from mpl_toolkits.mplot3d.art3d import Poly3DCollection
    tri = world[part["mesh"].faces]                                   # (F, 3, 3)
    n = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    n /= np.maximum(np.linalg.norm(n, axis=1, keepdims=True), 1e-12)
    light = np.array([0.5, 0.4, 0.77])
    shade = 0.45 + 0.55 * np.abs(n @ light)
    rgb = np.clip(np.outer(shade, to_rgb(part["color"])), 0, 1)
    ax.add_collection3d(Poly3DCollection(tri, facecolors=rgb, alpha=part["opacity"],
                                         edgecolor="none"))


def _draw_still(ax, scene):
    k0 = scene.still
    for part in scene._parts:
        seg = scene._segments(part, k0)
        kind = part["kind"]
        if kind == "line":
            ax.plot(seg[:, 0], seg[:, 1], seg[:, 2], color=part["color"],
                    lw=part["width"] / 3, marker="o" if part["markers"] else None, ms=3)
        elif kind == "points":
            ax.scatter(seg[:, 0], seg[:, 1], seg[:, 2], color=part["color"], s=part["size"] * 4)
        elif kind == "triad":
            for i, s in enumerate(seg):
                ax.plot(s[:, 0], s[:, 1], s[:, 2], color=_AXIS_COLORS[i], lw=2)
        elif kind == "mesh":
            _draw_mesh(ax, seg, part)
        else:
            from mpl_toolkits.mplot3d.art3d import Poly3DCollection
            faces = [[seg[a], seg[b], seg[c]] for a, b, c in zip(_BOX_I, _BOX_J, _BOX_K)]
            ax.add_collection3d(Poly3DCollection(faces, facecolor=part["color"],
                                                 alpha=part["opacity"], edgecolor="none"))
        if part["moving"] and kind in ("line", "points", "triad", "box"):   # a mesh: no trail
            trail = np.array([np.mean(np.vstack(scene._segments(part, k))
                                      if kind == "triad" else scene._segments(part, k), axis=0)
                              for k in range(scene.times.size)])
            ax.plot(trail[:, 0], trail[:, 1], trail[:, 2], color=part.get("color", "#444444"),
                    lw=0.8, ls=":", alpha=0.8)
    lo, hi = scene._bounds()
    ax.set_xlim(lo[0], hi[0]), ax.set_ylim(lo[1], hi[1]), ax.set_zlim(lo[2], hi[2])
    ax.set_box_aspect((1, 1, 1))
    ax.set_xlabel("x"), ax.set_ylabel("y"), ax.set_zlabel("z")
    if scene.title:
        ax.set_title(scene.title, fontsize=10)


# The loader: finds (or loads once per page) plotly.js, then draws every scene not drawn yet.
# In the built book the library is the site's _static/plotly/...: the page's depth is read from
# Sphinx's data-content_root, or from a script already loaded from _static/.
_LOADER = r"""(function () {
  var asset = %s;
  function root() {
    var r = document.documentElement.getAttribute('data-content_root');
    if (r !== null) { return r; }
    var s = document.querySelectorAll('script[src*="_static/"]');
    for (var i = 0; i < s.length; i++) {
      var src = s[i].getAttribute('src');
      return src.slice(0, src.indexOf('_static/'));
    }
    return '';
  }
  function load() {
    if (window.Plotly) { return Promise.resolve(window.Plotly); }
    if (!window.__robodynPlotly) {
      window.__robodynPlotly = new Promise(function (ok, fail) {
        var saved = window.define; window.define = undefined;   /* not as an AMD module */
        var el = document.createElement('script');
        el.src = root() + '_static/' + asset;
        el.onload = function () { window.define = saved; ok(window.Plotly); };
        el.onerror = function () { window.define = saved; fail(new Error('no ' + el.src)); };
        document.head.appendChild(el);
      });
    }
    return window.__robodynPlotly;
  }
  /* a moving mesh comes as its vertices in its own frame (robodynLocal) and one pose per
     instant (robodynPose: the rows of the 3x4 top of the 4x4 pose): place it */
  function place(local, P) {
    var n = local[0].length, x = new Array(n), y = new Array(n), z = new Array(n);
    for (var i = 0; i < n; i++) {
      var a = local[0][i], b = local[1][i], c = local[2][i];
      x[i] = P[0] * a + P[1] * b + P[2] * c + P[3];
      y[i] = P[4] * a + P[5] * b + P[6] * c + P[7];
      z[i] = P[8] * a + P[9] * b + P[10] * c + P[11];
    }
    return {x: x, y: y, z: z};
  }
  function expand(fig) {
    var base = {};
    fig.data.forEach(function (tr, t) {
      if (!tr.robodynLocal) { return; }
      var w = place(tr.robodynLocal, tr.robodynPose);
      base[t] = {local: tr.robodynLocal, i: tr.i, j: tr.j, k: tr.k};
      tr.x = w.x; tr.y = w.y; tr.z = w.z;
      delete tr.robodynLocal; delete tr.robodynPose;
    });
    fig.frames.forEach(function (fr) {
      fr.data.forEach(function (d, m) {
        if (!d.robodynPose) { return; }
        var b = base[fr.traces[m]], w = place(b.local, d.robodynPose);
        fr.data[m] = {type: 'mesh3d', x: w.x, y: w.y, z: w.z, i: b.i, j: b.j, k: b.k};
      });
    });
    return fig;
  }
  function draw(Plotly) {
    var roots = document.querySelectorAll('div.robodyn-scene');
    for (var i = 0; i < roots.length; i++) {
      var box = roots[i];
      if (box.getAttribute('data-robodyn-ready')) { continue; }
      box.setAttribute('data-robodyn-ready', '1');
      var fig = expand(JSON.parse(box.querySelector('script.robodyn-scene-data').textContent));
      var div = box.querySelector('div.robodyn-scene-plot');
      var config = {displaylogo: false, responsive: true, scrollZoom: true,
                    modeBarButtonsToRemove: ['toImage']};
      (function (div, fig) {
        Plotly.newPlot(div, fig.data, fig.layout, config).then(function () {
          if (fig.frames.length) { return Plotly.addFrames(div, fig.frames); }
        }).then(function () { div.setAttribute('data-robodyn-drawn', '1'); });
      })(div, fig);
    }
  }
  load().then(draw);
})();"""

from .._boundary import seal as _seal  # noqa: E402 -- the one boundary (issue 28): last, over the finished module
_seal(globals())
