"""Drawing primitives for 2D and 3D axes: frames, screw axes, serial chains."""
from __future__ import annotations

import numpy as np

from ..kinds import RigidPose
from .. import _value_checks
from .. import _meaning_checks
from ..rigid_motion import SerialChain, adjoint, fk_space, jacobian_space, link_poses
from ._common import _DEFAULT_DPI, _axes_arg, _color_arg, _figsize_arg, _real
from .frames import _fmt, _new_figure, _png_bytes


_AXIS_COLORS = ("tab:red", "tab:green", "tab:blue")


def _is3d(ax):
    return getattr(ax, "name", "") == "3d"


def _numeric(x, shape, what):
    a = _value_checks.real_array(x, what, hint="numbers: substitute values into sympy expressions "
                           "first (e.g. with .subs or lambdify)")
    if len(shape) == 1 and a.ndim == 2 and 1 in a.shape:
        a = a.reshape(-1)
    if a.shape != tuple(shape):
        want = f"a vector of length {shape[0]}" if len(shape) == 1 else \
            f"a {shape[0]}x{shape[1]} matrix"
        raise _value_checks.error(what, want, f"shape {a.shape}")
    return a


def _pose(H, what):
    """A 4x4 rigid pose [[R, p], [0, 0, 0, 1]] with R a rotation, as floats."""
    H = _numeric(H, (4, 4), what)
    if not np.allclose(H[3], [0.0, 0.0, 0.0, 1.0], atol=1e-9):
        raise _value_checks.error(what, "a pose with last row [0, 0, 0, 1]", H[3].tolist())
    _meaning_checks.rotation_matrix(H[:3, :3], what, tol=1e-6)
    if np.abs(H[:3, 3]).max() > 1e6:
        raise _value_checks.error(what, "a position within 1e6 m of the origin",
                            f"{np.abs(H[:3, 3]).max():.3g} m")
    return H


def _length_arg(x, what):
    return _real(x, what, low=0, strict_low=True, high=1e6, hint="a length in metres")


def _label_arg(x, what):
    if x is not None and not isinstance(x, str):
        raise _value_checks.error(what, "a str or None", x, exc=TypeError)
    if x is not None and len(x) > 200:
        raise _value_checks.error(what, "a label of at most 200 characters", f"{len(x)} characters")
    return x


def _line(ax, pts, **kw):
    pts = np.asarray(pts, dtype=float)
    if _is3d(ax):
        return ax.plot(pts[:, 0], pts[:, 1], pts[:, 2], **kw)[0]
    return ax.plot(pts[:, 0], pts[:, 1], **kw)[0]


def draw_frame(ax, H: RigidPose, length=0.2, label=None):
    """Draw the x, y, z axes of the pose ``H`` (4x4, in the axes' world frame) as red, green and
    blue segments of ``length`` from its origin. On 2D axes only x and y are drawn, projected on
    the xy plane.

    Returns
    -------
    list of artists: the axis lines (3 in 3D, 2 in 2D), then the label text if any.

    >>> from matplotlib.figure import Figure
    >>> fig = Figure(); ax = fig.add_subplot()
    >>> len(draw_frame(ax, np.eye(4), label='{s}'))
    3
    """
    _axes_arg(ax, "draw_frame")
    H = _pose(H, "draw_frame: H")
    length = _length_arg(length, "draw_frame: length")
    label = _label_arg(label, "draw_frame: label")
    return _frame_artists(ax, H, length, label)


def _frame_artists(ax, H, length, label=None):
    """The artists of :func:`~robodyn.viz.drawing.draw_frame` on checked arguments."""
    p, R = H[:3, 3], H[:3, :3]
    k = 3 if _is3d(ax) else 2
    arts = [_line(ax, [p, p + length * R[:, i]], color=_AXIS_COLORS[i], lw=1.8,
                  solid_capstyle="round") for i in range(k)]
    if label is not None:
        if _is3d(ax):
            arts.append(ax.text(*p, f" {label}", fontsize=9))
        else:
            arts.append(ax.text(p[0], p[1], f" {label}", fontsize=9, va="top"))
    return arts


def draw_screw_axis(ax, S, H=None, length=1.0, color="tab:purple", label=None):
    r"""Draw a screw axis ``S = (omega, v)``: for a unit omega (revolute, helical) a dashed line
    of ``length`` along omega through the point :math:`r = \omega\times v` nearest the origin,
    with an arrow along omega; for omega = 0 (prismatic) an arrow of ``length`` along v from the
    origin of ``H``. ``S`` is given in the frame of the pose ``H`` (default: the world frame) and
    drawn in the world frame, :math:`\mathcal S_{world} = \mathrm{Ad}_H\,\mathcal S`.

    On 2D axes the projection on the xy plane is drawn (an axis along z appears as a point).

    Returns
    -------
    list of artists.

    >>> from matplotlib.figure import Figure
    >>> fig = Figure(); ax = fig.add_subplot(projection='3d')
    >>> len(draw_screw_axis(ax, [0, 0, 1, 0, -1, 0])) >= 1
    True
    """
    fname = "draw_screw_axis"
    _axes_arg(ax, fname)
    S = _numeric(S, (6,), f"{fname}: S (a screw axis (omega, v))")
    _screw_arg(S, f"{fname}: S")
    if H is not None:
        H = _pose(H, f"{fname}: H")
    length = _length_arg(length, f"{fname}: length")
    color = _color_arg(color, f"{fname}: color")
    label = _label_arg(label, f"{fname}: label")
    origin = np.zeros(3)
    if H is not None:
        S = adjoint(H) @ S
        origin = H[:3, 3]
    return _screw_artists(ax, S, origin, length, color, label)


def _screw_arg(S, what):
    """A drawable screw axis: omega != 0 (its direction is drawn), or omega = 0 and v != 0;
    entries within 1e6."""
    nw, nv = np.linalg.norm(S[:3]), np.linalg.norm(S[3:])
    if not (nw > 1e-9 or nv > 1e-9) or np.abs(S).max() > 1e6:
        raise _value_checks.error(what, "a screw axis: a unit omega, or omega = 0 and a unit v "
                            "(entries within 1e6)", f"|omega| = {nw:.3g}, |v| = {nv:.3g}")
    return S


def _screw_artists(ax, S, centre, length, color, label=None):
    """Artists of the world-frame screw axis S, centred at the axis point nearest ``centre``."""
    w, v = S[:3], S[3:]
    nw = np.linalg.norm(w)
    if nw > 1e-9:
        u = w / nw
        r = np.cross(u, v / nw)
        c = r + u * (u @ (centre - r))
        if not _is3d(ax) and np.linalg.norm(u[:2]) < 1e-6:
            # an axis normal to the drawing plane: the usual dot / cross symbol
            sym = r"$\odot$" if u[2] > 0 else r"$\otimes$"
            return [ax.plot([c[0]], [c[1]], ls="none", marker=sym, ms=13, color=color,
                            label=label, zorder=4)[0]]
        tail, tip = c - u * length / 2, c + u * length / 2
        style = "dashed"
    else:
        nv = np.linalg.norm(v)
        if nv < 1e-9:
            raise _value_checks.refusal(
                ValueError, "draw_screw_axis: S: expected a unit omega, or omega = 0 and a "
                            "unit v, got S = 0")
        u = v / nv
        tail, tip = centre, centre + u * length
        style = "solid"
    arts = [_line(ax, [tail, tip], color=color, lw=1.2, ls=style, label=label)]
    arts.append(_arrow(ax, tip - 0.2 * length * u, tip, color))
    return arts


def _arrow(ax, tail, tip, color):
    if _is3d(ax):
        d = tip - tail
        return ax.quiver(*tail, *d, color=color, arrow_length_ratio=0.6, lw=1.2)
    return ax.annotate("", xy=tip[:2], xytext=tail[:2],
                       arrowprops=dict(arrowstyle="-|>", color=color, lw=1.2,
                                       shrinkA=0, shrinkB=0))


def chain_points(chain, q):
    """The points of the polyline :func:`~robodyn.viz.drawing.draw_chain` draws, (k, 3) in the world frame: the base
    origin, for each revolute or helical joint the point of its current axis nearest the previous
    point, and the end-effector position. Prismatic joints add no point.

    >>> from robodyn.models import planar_rr
    >>> np.round(chain_points(planar_rr(), [0.0, np.pi / 2]), 12)
    array([[0., 0., 0.],
           [0., 0., 0.],
           [1., 0., 0.],
           [1., 1., 0.]])
    """
    chain, q = _chain_q(chain, q, "chain_points")
    return _chain_points(chain, q, "chain_points")


def _chain_q(chain, q, fname):
    """The checked (numeric chain, joint values (n,)) of a drawing function ``fname``."""
    if not isinstance(chain, SerialChain):
        raise _value_checks.error(f"{fname}: chain", "a SerialChain", chain,
                            "build one with robodyn.models, e.g. models.planar_rr()",
                            exc=TypeError)
    if chain.symbolic:
        raise _value_checks.refusal(
            TypeError, f"{fname}: chain: expected a chain with numeric parameters, got "
                       f"{chain!r} (build it with numbers, e.g. planar_rr(1.0, 0.8), to draw "
                       f"it)")
    q = _numeric(q, (chain.n,), f"{fname}: q (one value per joint of the {chain.n}-joint "
                                f"chain)")
    if np.abs(q).max(initial=0.0) > 1e6:
        raise _value_checks.error(f"{fname}: q", "joint values within 1e6 (rad or m)",
                            f"{np.abs(q).max():.3g}")
    return chain, q


def _chain_points(chain, q, fname):
    J = jacobian_space(chain, q)
    pts = [np.zeros(3)]
    for i, kind in enumerate(chain.joint_types):
        if kind == "prismatic":
            continue
        w, v = J[:3, i], J[3:, i]
        w_unit = w / np.linalg.norm(w)
        r = np.cross(w_unit, v / np.linalg.norm(w))
        p = pts[-1]
        pts.append(r + w_unit * (w_unit @ (p - r)))
    pts.append(np.asarray(fk_space(chain, q), dtype=float)[:3, 3])
    return _value_checks.finite_result(np.array(pts), fname)


def draw_chain(ax, chain, q, frames=False, screws=False, link_frames=False, color="0.25",
               length=None, label=None, radius=None):
    """Draw a serial chain at ``q`` as a polyline of its links, with joints as markers.

    The polyline (:func:`chain_points`) starts at the base origin, visits, for each revolute or
    helical joint, the point of its current axis (column i of :func:`~robodyn.rigid_motion.jacobian_space`)
    nearest the previous point, and ends at the end-effector position of
    :func:`~robodyn.rigid_motion.fk_space`; prismatic joints add no point. On 2D axes the xy projection is
    drawn (planar robots), on 3D axes the chain itself; the aspect is made equal.

    Parameters
    ----------
    ax : matplotlib Axes, 2D or 3D
    chain : SerialChain (numeric)
    q : array_like (n,), rad / m
    frames : bool
        draw the end-effector frame.
    screws : bool
        draw each joint's current screw axis (:func:`~robodyn.viz.drawing.draw_screw_axis`).
    link_frames : bool
        draw the link centre-of-mass frames (:func:`~robodyn.rigid_motion.link_poses`).
    color : matplotlib colour of the links.
    length : float, optional
        length of frame axes and screw arrows; default 15% of the chain's extent.
    label : str, optional
        legend label of the links (default: the chain's name).
    radius : float, optional
        fix the axes to a square/cube of half-width ``radius`` (m) around the base, so that
        frames of an interactive figure or animation do not jump; default: fit the drawing.

    Returns
    -------
    list of artists; ``[0]`` is the link polyline (its data are the points above), ``[1]`` the
    joint markers, then the optional frames and screw axes.

    Raises
    ------
    TypeError
        for a symbolic chain, a non-Axes ``ax``; ``ValueError`` for a wrong-length ``q`` or
        ``link_frames=True`` on a chain without link frames.

    >>> from robodyn.models import planar_rr
    >>> from matplotlib.figure import Figure
    >>> fig = Figure(); ax = fig.add_subplot()
    >>> arts = draw_chain(ax, planar_rr(), [0.3, 0.5], frames=True)
    >>> np.allclose(arts[0].get_xydata()[-1], fk_space(planar_rr(), [0.3, 0.5])[:2, 3])
    True
    """
    fname = "draw_chain"
    _axes_arg(ax, fname)
    opts = _draw_chain_args(fname, chain, q, frames, screws, link_frames, color, length, label,
                            radius)
    return _draw_chain(ax, *opts, fname)


def _draw_chain_args(fname, chain, q, frames=False, screws=False, link_frames=False,
                     color="0.25", length=None, label=None, radius=None):
    """The checked arguments of :func:`~robodyn.viz.drawing.draw_chain`, named for ``fname`` (the function called)."""
    chain, q = _chain_q(chain, q, fname)
    frames = _value_checks.flag(frames, f"{fname}: frames")
    screws = _value_checks.flag(screws, f"{fname}: screws")
    link_frames = _value_checks.flag(link_frames, f"{fname}: link_frames")
    if link_frames and chain.link_homes is None:
        raise _value_checks.refusal(
            ValueError, f"{fname}: link_frames: expected False for {chain!r}, which has no "
                        f"link frames (link_homes), got True")
    color = _color_arg(color, f"{fname}: color")
    length = None if length is None else _length_arg(length, f"{fname}: length")
    label = _label_arg(label, f"{fname}: label")
    radius = None if radius is None else _length_arg(radius, f"{fname}: radius")
    return chain, q, frames, screws, link_frames, color, length, label, radius


def _draw_chain(ax, chain, q, frames, screws, link_frames, color, length, label, radius, fname):
    """:func:`~robodyn.viz.drawing.draw_chain` on checked arguments."""
    pts = _chain_points(chain, q, fname)
    extent = max(np.ptp(pts, axis=0).max(), np.linalg.norm(pts, axis=1).max(), 1e-3)
    L = 0.15 * extent if length is None else length
    arts = [_line(ax, pts, color=color, lw=2.5, solid_capstyle="round",
                  label=chain.name if label is None else label)]
    joints = pts[1:-1]
    base = pts[:1]
    jp = np.vstack([base, joints]) if len(joints) else base
    if _is3d(ax):
        arts.append(ax.plot(jp[:, 0], jp[:, 1], jp[:, 2], ls="none", marker="o", ms=6,
                            mfc="white", mec=color, mew=1.5)[0])
    else:
        arts.append(ax.plot(jp[:, 0], jp[:, 1], ls="none", marker="o", ms=6, mfc="white",
                            mec=color, mew=1.5, zorder=3)[0])
    if frames:
        arts += _frame_artists(ax, np.asarray(fk_space(chain, q), dtype=float), L)
    if link_frames:
        for H in link_poses(chain, q):
            arts += _frame_artists(ax, np.asarray(H, dtype=float), 0.6 * L)
    if screws:
        J = jacobian_space(chain, q)
        k = 1
        for i, kind in enumerate(chain.joint_types):
            S = J[:, i]
            if kind == "prismatic":                      # arrow along v from the last point
                arts += _screw_artists(ax, S, pts[k - 1], L, "tab:purple")
            else:
                arts += _screw_artists(ax, S, pts[k], 2 * L, "tab:purple")
                k += 1
    _equal_aspect(ax, radius, None)
    return arts


def set_equal_aspect(ax, radius=None, centre=None):
    """Give the axes equal scale on every axis: on 3D axes a cube around the current limits (or
    of half-width ``radius`` around ``centre``, default the origin), on 2D axes
    ``ax.set_aspect('equal')`` (with ``radius``, limits +-radius around ``centre``).
    Returns ``ax``.

    >>> from matplotlib.figure import Figure
    >>> fig = Figure(); ax = fig.add_subplot(projection='3d')
    >>> _ = ax.plot([0, 2], [0, 1], [0, 0.5])
    >>> _ = set_equal_aspect(ax)
    >>> spans = [b - a for a, b in (ax.get_xlim(), ax.get_ylim(), ax.get_zlim())]
    >>> bool(np.allclose(spans, spans[0]) and spans[0] >= 2)
    True
    >>> set_equal_aspect(ax, radius=1.5).get_zlim()
    (np.float64(-1.5), np.float64(1.5))
    """
    _axes_arg(ax, "set_equal_aspect")
    if radius is not None:
        radius = _length_arg(radius, "set_equal_aspect: radius")
        c = np.zeros(3) if centre is None else _numeric(centre, (3,), "set_equal_aspect: centre")
        if np.abs(c).max() > 1e6:
            raise _value_checks.error("set_equal_aspect: centre", "a point within 1e6 m of the origin",
                                f"{np.abs(c).max():.3g} m")
    elif centre is not None:
        raise _value_checks.error("set_equal_aspect: centre", "None without a radius (the centre of "
                            "the cube of half-width radius)", centre, exc=TypeError)
    return _equal_aspect(ax, radius, c if radius is not None else None)


def _equal_aspect(ax, radius, centre):
    """:func:`~robodyn.viz.drawing.set_equal_aspect` on checked arguments."""
    three = _is3d(ax)
    if radius is not None:
        c = np.zeros(3) if centre is None else centre
        half = radius
    elif three:
        ax.autoscale_view()
        lims = np.array([ax.get_xlim3d(), ax.get_ylim3d(), ax.get_zlim3d()])
        c = lims.mean(axis=1)
        half = max((lims[:, 1] - lims[:, 0]).max() / 2, 1e-6)
    if not three:
        if radius is not None:
            ax.set_xlim(c[0] - half, c[0] + half)
            ax.set_ylim(c[1] - half, c[1] + half)
        ax.set_aspect("equal", adjustable="box")
        return ax
    ax.set_xlim3d(c[0] - half, c[0] + half)
    ax.set_ylim3d(c[1] - half, c[1] + half)
    ax.set_zlim3d(c[2] - half, c[2] + half)
    ax.set_box_aspect((1, 1, 1))
    return ax


_DRAW_OPTIONS = {"frames", "screws", "link_frames", "color", "length", "label", "radius"}


def arm_figure(chain, q, *, planar=None, title=None, figsize=(5, 4), **draw_kw):
    """A new figure with the chain drawn at ``q`` (2D for a planar chain moving in the xy
    plane, else 3D), axes labelled in metres. Returns the ``Figure`` (not shown by pyplot; a
    notebook displays it as the cell's value).

    >>> from robodyn.models import spatial_rrr
    >>> fig = arm_figure(spatial_rrr(), [0.2, -0.4, 0.8], frames=True)
    >>> fig.axes[0].name
    '3d'
    >>> fig._repr_png_()[:4]        # a notebook shows it as a picture
    b'\\x89PNG'
    """
    fname = "arm_figure"
    bad = sorted(set(draw_kw) - _DRAW_OPTIONS)
    if bad:
        raise _value_checks.error(f"{fname}: {bad[0]}", "options of draw_chain (" +
                            ", ".join(sorted(_DRAW_OPTIONS)) + ")", repr(bad[0])[:60],
                            exc=TypeError)
    opts = _draw_chain_args(fname, chain, q, **draw_kw)
    chain, q = opts[0], opts[1]
    if planar is not None:
        planar = _value_checks.flag(planar, f"{fname}: planar")
    if title is not None:
        title = _label_arg(title, f"{fname}: title")
    figsize = _figsize_arg(figsize, fname)
    if planar is None:
        S = np.asarray(chain.screws, dtype=float)
        planar = bool(np.allclose(S[0:2], 0) and np.allclose(S[5], 0)
                      and np.allclose(np.asarray(chain.home, dtype=float)[2, 3], 0))
    fig = _new_figure(figsize, _DEFAULT_DPI)
    ax = fig.add_subplot() if planar else fig.add_subplot(projection="3d")
    _draw_chain(ax, *opts, fname)
    ax.set_xlabel("x (m)")
    ax.set_ylabel("y (m)")
    if not planar:
        ax.set_zlabel("z (m)")
    else:
        ax.grid(True, lw=0.3)
    ax.set_title(title if title is not None else f"{chain.name} at q = "
                 f"({', '.join(_fmt(x) for x in np.asarray(q, dtype=float))})")
    # a pyplot-free Figure is shown by IPython only through a rich repr (or matplotlib-inline,
    # which is registered only once pyplot has been imported): give it one
    fig._repr_png_ = lambda: _png_bytes(fig, palette=False)
    return fig

from .._boundary import seal as _seal  # noqa: E402 -- the one boundary (issue 28): last, over the finished module
_seal(globals())
