r"""Real robots: a URDF file read into robodyn's own model, a kinematic tree.

:func:`load_urdf` reads a URDF (a path, or a robot of ``example-robot-data`` by name, see
:func:`example_robots`) with the maintained parser ``yourdfpy`` and builds a
:class:`RobotModel`: one body per moving joint (revolute, continuous, prismatic), numbered
depth-first so that a parent comes before its children (``parents[i] < i``; ``-1`` is the base
body), every fixed joint merged into its parent body. Merging a link of mass :math:`m`, centre
of mass :math:`c` and rotational inertia :math:`\bar I` (about :math:`c`, link axes) that sits at
the pose :math:`(R, p)` in its parent body adds to the parent's spatial inertia (Lynch & Park
2017, §8.2.1; Featherstone 2008, §2.13)

.. math:: \mathcal I = \mathrm{Ad}_{T^{-1}}^T \begin{bmatrix}\bar I & 0\\ 0 & m\mathbb 1
   \end{bmatrix}\mathrm{Ad}_{T^{-1}},\qquad T = (R, p + R c),

which is the parallel-axis theorem :math:`R\bar IR^T + m([c']^T[c'])` about the parent's origin
with the rotated tensor, :math:`c' = p + Rc`. The numeric algorithms on the model
(forward kinematics, Jacobians, RNEA, CRBA, ABA, fixed or floating base) are in
:mod:`robodyn.trees`; :func:`serial_chain` turns a model that is a chain into a
:class:`~robodyn.rigid_motion.SerialChain`, which the symbolic machinery
(:mod:`robodyn.lagrange`, :mod:`robodyn.kane`, :mod:`robodyn.equations`) and the compiled
serial engine take.

Bad files raise ``ValueError`` naming the link or joint (a missing or non-physical inertial, a
loop, an unknown joint type, an unreadable mesh); a model is built only from a file that passes
every check.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import _meaning_checks, _value_checks
from .errors import RobodynError

__all__ = ["RobotModel", "load_urdf", "example_robots", "lock_joints", "serial_chain",
           "URDFError", "NO_LIMIT", "INERTIA_TOL"]

NO_LIMIT = float(np.finfo(float).max)
"""The bound of a joint limit the URDF does not set (numpy's largest float, as Pinocchio)."""

INERTIA_TOL = 1e-7
"""Principal moments of a link down to -INERTIA_TOL kg m^2 are rounding in the file (tiny links
written with few digits) and accepted; the merged bodies must be positive semi-definite."""

_TRIANGLE_TOL = 1e-2
"""A merged body's largest principal moment may exceed the sum of the other two by this share
of itself (plus :data:`INERTIA_TOL`): a plate's moments written with three digits. More is no
rigid body (a single link may break it when the links welded to it make up for it, as
vendors' files do)."""

_MOVES_NOTHING = 1e-12
"""A joint whose subtree's inertia about (revolute) or along (prismatic) its axis is at most
this share of the largest joint's, at q = 0 and at a random q, moves nothing: M is singular."""

_MOVING = {"revolute": "revolute", "continuous": "revolute", "prismatic": "prismatic"}


class URDFError(RobodynError, ValueError):
    """A URDF file that describes no robot robodyn can model (the message names the link or
    joint and says why)."""


# --------------------------------------------------------------------------
# the model
# --------------------------------------------------------------------------


def _ro(a):
    a = np.array(a, dtype=float)
    a.setflags(write=False)
    return a


@dataclass(frozen=True, eq=False)
class RobotModel:
    r"""A kinematic tree of rigid bodies read from a URDF, an immutable value.

    Body ``i`` (``0 <= i < n``) is the child of moving joint ``i``; its parent body is
    ``parents[i]`` (``-1``: the base body, the URDF's root link with everything welded to it).

    Attributes
    ----------
    name : str
    parents : tuple of int, ``parents[i] < i``
    joint_names, joint_types : tuple of str (``'revolute'`` -- continuous joints included --
        or ``'prismatic'``)
    axes : ndarray(n, 3), unit joint axes in the joint's (= its body's) frame
    placements : ndarray(n, 4, 4), the pose of body ``i``'s frame in its parent body's frame at
        :math:`q_i = 0` (the URDF joint origin)
    inertias : ndarray(n, 6, 6), spatial inertia of body ``i`` in its own frame, (omega, v)
    base_inertia : ndarray(6, 6), that of the base body (used when the base floats)
    floating : bool, a free base (6 more velocities, the base twist in the base frame first)
    lower, upper, velocity, effort : ndarray(n,), joint limits (:data:`NO_LIMIT`, the largest
        float, where the URDF sets none: continuous joints, missing attributes)
    frames : dict, URDF link name -> (body, 4x4 pose in that body's frame)
    meshes : tuple of (link, body, 4x4 pose in the body, mesh file path, scale (3,), kind)
        with kind ``'visual'`` or ``'collision'``; paths resolved (``package://`` included)
    base_link : str, the URDF's root link
    source : str, the file read

    Examples
    --------
    >>> ur5 = load_urdf("ur5")
    >>> ur5.n, ur5.parents
    (6, (-1, 0, 1, 2, 3, 4))
    """

    name: str
    parents: tuple
    joint_names: tuple
    joint_types: tuple
    axes: np.ndarray
    placements: np.ndarray
    inertias: np.ndarray
    base_inertia: np.ndarray
    floating: bool
    lower: np.ndarray
    upper: np.ndarray
    velocity: np.ndarray
    effort: np.ndarray
    frames: dict
    meshes: tuple
    base_link: str
    source: str
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self):
        """A model made by calling the class directly is checked field by field (the loader's
        models are checked as they are built): no unchecked model reaches an algorithm."""
        if _BUILDING:
            return
        _validate(self)

    def __getstate__(self):
        """Pickled without its caches (the compiled engine's handle is rebuilt on use)."""
        state = dict(self.__dict__)
        state["_cache"] = {}
        return state

    @property
    def n(self) -> int:
        """Number of moving joints (= of bodies besides the base)."""
        return len(self.parents)

    @property
    def nv(self) -> int:
        """The number of velocities, ``n``, plus 6 with a floating base."""
        return self.n + (6 if self.floating else 0)

    @property
    def total_mass(self) -> float:
        """Mass of all bodies (the base's included)."""
        return float(self.inertias[:, 3, 3].sum() + self.base_inertia[3, 3])

    def __repr__(self):
        base = "floating" if self.floating else "fixed"
        return f"RobotModel({self.name!r}, {self.n} joints, {base} base, {len(self.frames)} frames)"


_BUILDING = []       # non-empty while load_urdf / lock_joints build a model from checked data


def _build(**fields):
    _BUILDING.append(True)
    try:
        return RobotModel(**fields)
    finally:
        _BUILDING.pop()


def _field(model, name, shape):
    where = f"RobotModel: {name}"
    a = np.array(_value_checks.real_array(getattr(model, name), where), dtype=float)
    if a.shape != shape:
        raise _value_checks.error(where, f"an array of shape {shape}", a)
    a = np.ascontiguousarray(a)
    a.setflags(write=False)
    object.__setattr__(model, name, a)
    return a


def _validate(model):
    """The checks of a RobotModel built by hand (ValueError/TypeError naming the field)."""
    if not isinstance(model.name, str):
        raise _value_checks.error("RobotModel: name", "a string", model.name, exc=TypeError)
    par = model.parents
    try:
        ok = (not isinstance(par, (str, bytes, dict)) and len(par) > 0 and all(
            not isinstance(p, (bool, np.bool_)) and float(p) == int(p) for p in par))
    except (TypeError, ValueError, OverflowError):
        ok = False
    if not ok or not all(-1 <= int(p) < i for i, p in enumerate(par)):
        raise _value_checks.error("RobotModel: parents", "a non-empty sequence of integers with "
                            "-1 <= parents[i] < i", par)
    par = tuple(int(p) for p in par)
    object.__setattr__(model, "parents", par)
    n = len(par)
    for f, ok in (("joint_names", lambda x: isinstance(x, str)),
                  ("joint_types", lambda x: x in ("revolute", "prismatic"))):
        v = getattr(model, f)
        if not isinstance(v, tuple) or len(v) != n or not all(ok(x) for x in v):
            raise _value_checks.error(f"RobotModel: parents, {f}", f"a tuple of {n} "
                                + ("names" if f == "joint_names" else
                                   "'revolute' or 'prismatic'")
                                + " (one per entry of parents)", v)
    axes = _field(model, "axes", (n, 3))
    if not np.allclose(np.linalg.norm(axes, axis=1), 1.0, atol=1e-9):
        raise _value_checks.error("RobotModel: axes", "unit vectors", np.round(axes, 6).tolist())
    from .rigid_motion._kinematics import _homogeneous_arg
    for i, H in enumerate(_field(model, "placements", (n, 4, 4))):
        _homogeneous_arg(H, f"RobotModel: placements[{i}]")
    G = np.concatenate([_field(model, "base_inertia", (6, 6))[None],
                        _field(model, "inertias", (n, 6, 6))])
    for k, Gk in enumerate(G):
        m = Gk[3, 3]
        C = Gk[:3, 3:] / m if m > 0 else np.zeros((3, 3))
        ok = (m >= 0 and np.allclose(Gk, Gk.T, atol=1e-12) and np.allclose(Gk[3:, 3:],
              m * np.eye(3)) and np.allclose(C, -C.T, atol=1e-12)
              and np.linalg.eigvalsh(Gk[:3, :3] + m * (C @ C)).min() >= -INERTIA_TOL
              and (m > 0 or not Gk.any()))
        why = _triangle_fault(Gk[:3, :3] + m * (C @ C)) if ok and m > 0 else None
        if not ok or why:
            raise _value_checks.error(f"RobotModel: {'base_inertia' if k == 0 else f'inertias[{k-1}]'}",
                                "the spatial inertia of a rigid body (symmetric, lower block "
                                "m 1, mass >= 0, rotational inertia positive semi-definite, "
                                "triangle inequality)", why or np.round(Gk, 6).tolist())
    lo, hi = _field(model, "lower", (n,)), _field(model, "upper", (n,))
    if (lo > hi).any():
        raise _value_checks.error("RobotModel: lower, upper", "lower <= upper", lo.tolist())
    for f in ("velocity", "effort"):
        if (_field(model, f, (n,)) < 0).any():
            raise _value_checks.error(f"RobotModel: {f}", "limits >= 0", getattr(model, f).tolist())
    if not isinstance(model.floating, (bool, np.bool_)):
        raise _value_checks.error("RobotModel: floating", "True or False", model.floating, exc=TypeError)
    _validate_rest(model, n)


def _validate_rest(model, n):
    if not isinstance(model.frames, dict) or not all(
            isinstance(k, str) and isinstance(v, tuple) and len(v) == 2 and isinstance(v[0], int)
            and -1 <= v[0] < n for k, v in model.frames.items()):
        raise _value_checks.error("RobotModel: frames", "a dict link name -> (body, 4x4 pose)",
                            model.frames, exc=TypeError)
    from .rigid_motion._kinematics import _homogeneous_arg
    for k, (b, H) in model.frames.items():
        _homogeneous_arg(np.asarray(H, dtype=float), f"RobotModel: frames[{k!r}]")
    if not isinstance(model.meshes, tuple):
        raise _value_checks.error("RobotModel: meshes", "a tuple", model.meshes, exc=TypeError)
    for f in ("base_link", "source"):
        if not isinstance(getattr(model, f), str):
            raise _value_checks.error(f"RobotModel: {f}", "a string", getattr(model, f),
                                exc=TypeError)


# --------------------------------------------------------------------------
# spatial helpers (numpy, (omega, v) order)
# --------------------------------------------------------------------------


def _skew(c):
    return np.array([[0.0, -c[2], c[1]], [c[2], 0.0, -c[0]], [-c[1], c[0], 0.0]])


def _inertia_at(m, c, Ibar):
    """Spatial inertia of a body about a frame in which its CoM is at c, Ibar about the CoM."""
    C = _skew(c)
    G = np.zeros((6, 6))
    G[:3, :3] = Ibar + m * (C.T @ C)
    G[:3, 3:], G[3:, :3], G[3:, 3:] = m * C, m * C.T, m * np.eye(3)
    return G


def _adjoint(H):
    R, p = H[:3, :3], H[:3, 3]
    A = np.zeros((6, 6))
    A[:3, :3] = A[3:, 3:] = R
    A[3:, :3] = _skew(p) @ R
    return A


def _move_inertia(G, H):
    """The spatial inertia G of a body given in frame b, expressed in frame a, H = H_ab."""
    A = _adjoint(np.linalg.inv(H))
    return A.T @ G @ A


def _triangle_fault(Ic):
    """Why a body's central rotational inertia ``Ic`` breaks the triangle inequality beyond a
    URDF's rounding (:data:`_TRIANGLE_TOL`), or None: the library's rotational-inertia check
    (:func:`robodyn._meaning_checks.inertia_matrix`), its tolerance set to that rounding."""
    lmax = float(np.abs(np.linalg.eigvalsh(Ic)).max())
    tol = (_TRIANGLE_TOL * lmax + INERTIA_TOL) / max(1.0, lmax)   # it scales by max(1, lmax)
    return _meaning_checks._inertia_test(tol)(Ic)


def _moved_inertia(parents, kinds, axes, placements, inertias, q):
    """The inertia each joint moves at q, (n,): the composite spatial inertia of its subtree
    (in its body's frame) about its axis, revolute, or its mass, prismatic -- the diagonal
    of the mass matrix of a fixed base."""
    Ic = [np.array(G, dtype=float) for G in inertias]
    for i in range(len(parents) - 1, -1, -1):
        if parents[i] >= 0:
            H = placements[i] @ _joint_motion(kinds[i], axes[i], q[i])
            Ic[parents[i]] = Ic[parents[i]] + _move_inertia(Ic[i], H)
    return np.array([a @ G[:3, :3] @ a if k == "revolute" else G[3, 3]
                     for k, a, G in zip(kinds, axes, Ic)])


def _still_joint(parents, kinds, axes, placements, inertias):
    """The first joint that moves no inertia (:data:`_MOVES_NOTHING`) at q = 0 and at one
    random q, or None; its M is singular wherever its subtree stays as it is."""
    n = len(parents)
    q1 = np.random.default_rng(0).uniform(-np.pi, np.pi, n)
    still = np.ones(n, dtype=bool)
    for q in (np.zeros(n), q1):
        D = _moved_inertia(parents, kinds, axes, placements, inertias, q)
        still &= ~(D > _MOVES_NOTHING * D.max())
    return int(np.argmax(still)) if still.any() else None


# --------------------------------------------------------------------------
# finding files
# --------------------------------------------------------------------------


def _erd_root():
    """The folder of example-robot-data's ``robots``, or None when it is not installed."""
    from importlib import metadata
    try:
        dist = metadata.distribution("example-robot-data")
    except metadata.PackageNotFoundError:
        return None
    root = Path(dist.locate_file("cmeel.prefix/share/example-robot-data"))
    return root if (root / "robots").is_dir() else None


def example_robots():
    """The robots of ``example-robot-data``: a dict name -> URDF path, sorted by name.

    A name is the file's stem (``'panda'``, ``'ur5_robot'``, ``'solo12'``, ``'talos_reduced'``),
    with the short names ``'ur3'``, ``'ur5'``, ``'ur10'`` for the ``*_robot`` files; files of
    the same stem in two folders are told apart as ``folder/stem``.

    >>> robots = example_robots()
    >>> 'panda' in robots and 'solo12' in robots
    True
    """
    root = _erd_root()
    if root is None:
        raise ModuleNotFoundError("example_robots: the package example-robot-data is not "
                                  "installed (pip install example-robot-data==6.0.0)")
    paths = sorted((root / "robots").glob("*/*/*.urdf"))
    stems = [p.stem for p in paths]
    out = {}
    for p in paths:
        key = p.stem if stems.count(p.stem) == 1 else f"{p.parts[-3]}/{p.stem}"
        out[key] = str(p)
    for short in ("ur3", "ur5", "ur10"):        # the arms (ur3.urdf is a fragment)
        if f"{short}_robot" in out:
            out[short] = out[f"{short}_robot"]
    return dict(sorted(out.items()))


def _source_path(source, fname):
    if isinstance(source, os.PathLike):
        source = os.fspath(source)
    if not isinstance(source, str):
        raise _value_checks.error(f"{fname}: source", "a URDF path or a robot name of "
                            "example_robots()", source, exc=TypeError)
    robots = example_robots() if _erd_root() is not None else {}
    if source in robots:
        return Path(robots[source])
    p = Path(source)
    if p.is_file():
        return p
    if source.endswith(".urdf") or source.count(os.sep) > 1:
        raise _value_checks.refusal(ValueError, f"{fname}: source: expected a URDF file or a robot name of "
                         f"example_robots(), got {source!r} (no such file)")
    near = [k for k in robots if source.lower() in k.lower()][:8]
    raise _value_checks.refusal(ValueError, f"{fname}: source: expected a URDF path or one of the "
                     f"{len(robots)} robots of example_robots(), got {source!r}"
                     + (f" (did you mean {', '.join(near)}?)" if near else ""))


def _package_dirs(path, package_dirs):
    dirs = [Path(d) for d in (package_dirs or ())]
    dirs += [Path(d) for d in os.environ.get("ROS_PACKAGE_PATH", "").split(os.pathsep) if d]
    root = _erd_root()
    if root is not None:
        dirs.append(root.parent)
    dirs += list(path.resolve().parents)
    return dirs


def _resolve_mesh(filename, path, dirs, where):
    """A mesh file name of the URDF as a readable local path (``package://``, ``file://``,
    relative to the URDF's folder); URDFError naming ``where`` when it cannot be read."""
    if filename.startswith("package://"):
        pkg, _, rest = filename[len("package://"):].partition("/")
        cands = [d / pkg / rest for d in dirs] + [d / rest for d in dirs if d.name == pkg]
    elif filename.startswith("file://"):
        cands = [Path(filename[len("file://"):])]
    else:
        cands = [path.parent / filename]
    for c in cands:
        if c.is_file() and os.access(c, os.R_OK):
            return str(c.resolve())
    raise URDFError(f"load_urdf: {path.name}: {where}: mesh {filename!r} cannot be read "
                    f"(looked in {len(cands)} places; pass package_dirs=[...] or "
                    f"check_meshes=False)")


# --------------------------------------------------------------------------
# reading and checking
# --------------------------------------------------------------------------


def _parse(path, fname):
    import yourdfpy
    from lxml import etree
    try:                                    # well-formed XML first: yourdfpy would recover
        etree.parse(str(path), etree.XMLParser(recover=False, resolve_entities=False,
                                               no_network=True))
    except (etree.XMLSyntaxError, OSError) as err:
        raise URDFError(f"{fname}: {path.name}: the URDF cannot be parsed: {err}") from err
    try:
        return yourdfpy.URDF.load(str(path), build_scene_graph=False, load_meshes=False,
                                  load_collision_meshes=False,
                                  filename_handler=yourdfpy.filename_handler_null)
    except Exception as err:  # noqa: BLE001 -- any parser failure is the file's fault
        raise URDFError(f"{fname}: {path.name}: the URDF cannot be parsed: "
                        f"{type(err).__name__}: {err}") from err


def _tree(robot, path, fname):
    """(root link, children: link -> [joints in file order]); URDFError for a loop, a link
    with two parents, a joint naming an unknown link, several roots."""
    links = {lk.name for lk in robot.robot.links}
    parent_of, children = {}, {lk: [] for lk in links}
    for j in robot.robot.joints:
        for end in (j.parent, j.child):
            if end not in links:
                raise URDFError(f"{fname}: {path.name}: joint {j.name!r}: link {end!r} is not "
                                f"defined in the file")
        if j.child in parent_of:
            raise URDFError(f"{fname}: {path.name}: link {j.child!r} is the child of two "
                            f"joints ({parent_of[j.child].name!r} and {j.name!r}): a loop; "
                            f"URDF describes trees only")
        parent_of[j.child] = j
        children[j.parent].append(j)
    roots = sorted(links - set(parent_of))
    if len(roots) != 1:
        what = (f"a loop: every link has a parent" if not roots
                else f"{len(roots)} root links {roots[:6]}")
        raise URDFError(f"{fname}: {path.name}: expected one root link (a tree), got {what}")
    seen, stack = set(), [roots[0]]
    while stack:
        lk = stack.pop()
        seen.add(lk)
        stack += [j.child for j in children[lk]]
    if seen != links:
        cut = sorted(links - seen)[:6]
        raise URDFError(f"{fname}: {path.name}: links {cut} are not reachable from the root "
                        f"{roots[0]!r}: a loop of joints")
    return roots[0], children


def _link_inertia(link, path, fname):
    """Spatial inertia of a URDF link in its own frame (zero without <inertial>), checked."""
    ine = link.inertial
    if ine is None or ine.mass is None:
        return None
    m = float(ine.mass)
    I = np.zeros((3, 3)) if ine.inertia is None else np.array(ine.inertia, dtype=float)
    H = np.eye(4) if ine.origin is None else np.array(ine.origin, dtype=float)
    where = f"{fname}: {path.name}: link {link.name!r}: inertial"
    if not (np.isfinite(m) and m >= 0):
        raise URDFError(f"{where}: expected a mass >= 0, got {m!r}")
    if not np.all(np.isfinite(I)) or not np.all(np.isfinite(H)):
        raise URDFError(f"{where}: expected finite numbers, got inertia {I.tolist()}")
    ev = np.linalg.eigvalsh((I + I.T) / 2)
    tol = max(1e-9 * abs(ev).max(), INERTIA_TOL)
    if ev.min() < -tol:
        raise URDFError(f"{where}: expected a positive semi-definite inertia tensor, got "
                        f"principal moments {np.round(ev, 9).tolist()} (a non-positive inertia)")
    if m == 0 and ev.max() > tol:
        raise URDFError(f"{where}: mass 0 with a non-zero inertia tensor {np.round(ev, 9)}")
    R, c = H[:3, :3], H[:3, 3]
    return _inertia_at(m, c, R @ I @ R.T)


def _joint_data(j, path, fname):
    kind = j.type
    where = f"{fname}: {path.name}: joint {j.name!r}"
    if kind not in _MOVING and kind != "fixed":
        raise URDFError(f"{where}: unknown or unsupported joint type {kind!r}; expected "
                        f"revolute, continuous, prismatic or fixed (a floating or planar joint "
                        f"inside the tree is not modelled; the base floats with "
                        f"floating_base=True)")
    H = np.eye(4) if j.origin is None else np.array(j.origin, dtype=float)
    if not np.all(np.isfinite(H)):
        raise URDFError(f"{where}: origin: expected finite numbers, got {H.tolist()}")
    if kind == "fixed":
        return kind, H, None, (-NO_LIMIT, NO_LIMIT, NO_LIMIT, NO_LIMIT)
    axis = np.array([1.0, 0, 0] if j.axis is None else j.axis, dtype=float)
    nrm = np.linalg.norm(axis)
    if not (np.isfinite(nrm) and nrm > 1e-12):
        raise URDFError(f"{where}: axis: expected a non-zero direction, got {axis.tolist()}")
    lim = j.limit
    lo, hi = -NO_LIMIT, NO_LIMIT
    vel = eff = NO_LIMIT
    if lim is not None:
        vel = NO_LIMIT if lim.velocity is None else float(lim.velocity)
        eff = NO_LIMIT if lim.effort is None else float(lim.effort)
        if kind != "continuous":
            lo = -NO_LIMIT if lim.lower is None else float(lim.lower)
            hi = NO_LIMIT if lim.upper is None else float(lim.upper)
    if not all(np.isfinite([lo, hi, vel, eff])) or lo > hi or vel < 0 or eff < 0:
        raise URDFError(f"{where}: limit: expected finite lower <= upper and velocity, effort "
                        f">= 0, got {[lo, hi, vel, eff]}")
    return _MOVING[kind], H, axis / nrm, (lo, hi, vel, eff)


def _geometries(link, kind, path, dirs, check, fname):
    """(pose in the link, file, scale) of each mesh of a link's visual or collision list."""
    out = []
    for g in (link.visuals if kind == "visual" else link.collisions) or ():
        mesh = getattr(g.geometry, "mesh", None) if g.geometry is not None else None
        if mesh is None or not mesh.filename:
            continue
        where = f"link {link.name!r}: {kind} mesh"
        if check:
            file = _resolve_mesh(mesh.filename, path, dirs, where)
        else:
            try:
                file = _resolve_mesh(mesh.filename, path, dirs, where)
            except URDFError:
                file = mesh.filename
        scale = np.ones(3) if mesh.scale is None else np.broadcast_to(
            np.array(mesh.scale, dtype=float), (3,)).copy()
        H = np.eye(4) if g.origin is None else np.array(g.origin, dtype=float)
        out.append((H, file, scale))
    return out


class _Builder:
    """The depth-first walk that numbers the bodies and merges fixed joints."""

    def __init__(self, robot, path, children, fname, dirs, check_meshes):
        self.robot, self.path, self.children, self.fname = robot, path, children, fname
        self.dirs, self.check = dirs, check_meshes
        self.links = {lk.name: lk for lk in robot.robot.links}
        self.parents, self.joints, self.placements, self.bodies = [], [], [], [np.zeros((6, 6))]
        self.frames, self.meshes, self.massless = {}, [], {}

    def visit(self, link_name, body, H):
        link = self.links[link_name]
        G = _link_inertia(link, self.path, self.fname)
        if G is not None:
            self.bodies[body + 1] += _move_inertia(G, H)
        elif body >= 0:
            self.massless.setdefault(body, []).append(link_name)
        self.frames[link_name] = (body, _ro(H))
        for kind in ("visual", "collision"):
            for Hm, file, scale in _geometries(link, kind, self.path, self.dirs, self.check,
                                               self.fname):
                self.meshes.append((link_name, body, _ro(H @ Hm), file, _ro(scale), kind))
        for j in self.children[link_name]:
            kind, Hj, axis, lim = _joint_data(j, self.path, self.fname)
            if kind == "fixed":
                self.visit(j.child, body, H @ Hj)
                continue
            self.parents.append(body)
            self.joints.append((j.name, kind, axis, lim, j.child))
            self.placements.append(H @ Hj)
            self.bodies.append(np.zeros((6, 6)))
            self.visit(j.child, len(self.parents) - 1, np.eye(4))

    def check_bodies(self):
        """Each merged body's rotational inertia (about its centre of mass) is positive
        semi-definite, to rounding."""
        for k, G in enumerate(self.bodies):
            m = G[3, 3]
            if not m > 0:
                continue
            C = G[:3, 3:] / m
            ev = np.linalg.eigvalsh(G[:3, :3] + m * (C @ C))
            if ev.min() < -max(1e-9 * abs(ev).max(), INERTIA_TOL):
                links = [lk for lk, (b, _) in self.frames.items() if b == k - 1]
                raise URDFError(f"{self.fname}: {self.path.name}: links {links} welded into one "
                                f"body: expected a positive semi-definite inertia, got principal "
                                f"moments {np.round(ev, 9).tolist()} (a non-positive inertia)")
            why = _triangle_fault(G[:3, :3] + m * (C @ C))
            if why:
                links = [lk for lk, (b, _) in self.frames.items() if b == k - 1]
                what = f"link {links[0]!r}" if len(links) == 1 else \
                    f"links {links} welded into one body"
                raise URDFError(f"{self.fname}: {self.path.name}: {what}: inertial: expected "
                                f"principal moments obeying the triangle inequality (each at "
                                f"most the sum of the other two, to {_TRIANGLE_TOL:.0%} of the "
                                f"largest for rounding), got {why}")

    def check_motion(self):
        """Every moving joint must move inertia about (revolute) or along (prismatic) its
        axis: a point mass on a revolute joint's axis has mass, yet nothing to turn."""
        i = _still_joint(self.parents, [j[1] for j in self.joints], [j[2] for j in self.joints],
                         self.placements, self.bodies[1:])
        if i is not None:
            name, kind, _, _, child = self.joints[i]
            about = "about" if kind == "revolute" else "along"
            raise URDFError(f"{self.fname}: {self.path.name}: joint {name!r}: expected a joint "
                            f"that moves inertia, got link {child!r} and the links beyond it "
                            f"with no inertia {about} its axis (at q = 0 and at a random q): "
                            f"the joint moves no mass and the mass matrix would be singular")

    def check_masses(self):
        """Every moving joint must carry mass: its body or one beyond it."""
        n = len(self.parents)
        sub = np.array([G[3, 3] for G in self.bodies[1:]])
        for i in range(n - 1, -1, -1):
            if self.parents[i] >= 0:
                sub[self.parents[i]] += sub[i]
        for i in range(n):
            if not sub[i] > 0:
                name, _, _, _, child = self.joints[i]
                raise URDFError(f"{self.fname}: {self.path.name}: joint {name!r}: link "
                                f"{child!r} and every link beyond it have no <inertial> (or "
                                f"mass 0): a missing inertial; the joint would move no mass "
                                f"and the mass matrix would be singular")


def load_urdf(source, floating_base=False, package_dirs=None, check_meshes=True, name=None):
    r"""A robot's URDF read into a :class:`RobotModel` (a kinematic tree, fixed joints merged).

    Parameters
    ----------
    source : str or path
        a URDF file, or the name of a robot of ``example-robot-data`` (:func:`example_robots`:
        ``'panda'``, ``'ur5'``, ``'solo12'``, ``'go1'``, ``'talos_reduced'``, ...).
    floating_base : bool
        a free base (a legged robot, a humanoid, a flying robot) instead of the root link
        welded to the ground.
    package_dirs : list of folders, optional
        where ``package://name/...`` mesh paths are looked for (besides ``$ROS_PACKAGE_PATH``,
        example-robot-data and the URDF's own parent folders).
    check_meshes : bool
        raise when a mesh file cannot be read (else its name is kept unresolved).
    name : str, optional
        the model's name (default: the URDF's robot name).

    Raises
    ------
    URDFError (a ValueError)
        naming the link or joint: unparsable XML, a loop or a link with two parents, an unknown
        joint type, a zero axis, a negative mass or inertia tensor, a body whose principal
        moments break the triangle inequality (beyond rounding), a joint that moves no mass
        (a missing inertial; a point mass on a revolute joint's axis), an unreadable mesh.

    Examples
    --------
    >>> panda = load_urdf("panda")
    >>> panda.n, panda.joint_names[-2:]
    (9, ('panda_finger_joint1', 'panda_finger_joint2'))
    >>> round(panda.total_mass, 3)
    17.452
    """
    fname = "load_urdf"
    if not isinstance(floating_base, (bool, np.bool_)):
        raise _value_checks.error(f"{fname}: floating_base", "True or False", floating_base,
                            exc=TypeError)
    if not isinstance(check_meshes, (bool, np.bool_)):
        raise _value_checks.error(f"{fname}: check_meshes", "True or False", check_meshes,
                            exc=TypeError)
    if name is not None and not isinstance(name, str):
        raise _value_checks.error(f"{fname}: name", "a string or None", name, exc=TypeError)
    if package_dirs is not None and (isinstance(package_dirs, (str, bytes)) or not all(
            isinstance(d, (str, os.PathLike)) for d in package_dirs)):
        raise _value_checks.error(f"{fname}: package_dirs", "a list of folder paths", package_dirs,
                            exc=TypeError)
    path = _source_path(source, fname)
    robot = _parse(path, fname)
    root, children = _tree(robot, path, fname)
    b = _Builder(robot, path, children, fname, _package_dirs(path, package_dirs),
                 check_meshes)
    b.visit(root, -1, np.eye(4))
    if not b.parents:
        raise URDFError(f"{fname}: {path.name}: no moving joint (revolute, continuous or "
                        f"prismatic): nothing to model")
    b.check_masses()
    b.check_bodies()
    b.check_motion()
    if floating_base and not b.bodies[0][3, 3] > 0 and b.parents.count(-1) == 1:
        raise URDFError(f"{fname}: {path.name}: a floating base needs mass in the root link "
                        f"{root!r} (it has none, and carries a single joint: the body beyond it "
                        f"would have 7 velocities for 6 degrees of freedom, M singular)")
    lim = np.array([j[3] for j in b.joints])
    return _build(
        name=name or robot.robot.name or path.stem, parents=tuple(b.parents),
        joint_names=tuple(j[0] for j in b.joints), joint_types=tuple(j[1] for j in b.joints),
        axes=_ro([j[2] for j in b.joints]), placements=_ro(b.placements),
        inertias=_ro(b.bodies[1:]), base_inertia=_ro(b.bodies[0]), floating=bool(floating_base),
        lower=_ro(lim[:, 0]), upper=_ro(lim[:, 1]), velocity=_ro(lim[:, 2]),
        effort=_ro(lim[:, 3]), frames=b.frames, meshes=tuple(b.meshes), base_link=root,
        source=str(path))


# --------------------------------------------------------------------------
# reduced models, and chains for the symbolic machinery
# --------------------------------------------------------------------------


def _model_arg(model, fname):
    if not isinstance(model, RobotModel):
        raise _value_checks.error(f"{fname}: model", "a RobotModel (robodyn.urdf.load_urdf)", model,
                            exc=TypeError)
    return model


def _joint_motion(kind, axis, q):
    """The pose of a joint's body in its joint frame at displacement q."""
    H = np.eye(4)
    if kind == "prismatic":
        H[:3, 3] = axis * q
    else:
        K = _skew(axis)
        H[:3, :3] = np.eye(3) + np.sin(q) * K + (1 - np.cos(q)) * (K @ K)
    return H


def lock_joints(model, joints, q=None):
    r"""The model with some joints welded at given positions (their bodies merged into their
    parents, inertias moved as in the module docstring): Pinocchio's ``buildReducedModel``.

    Parameters
    ----------
    model : RobotModel
    joints : list of joint names (of ``model.joint_names``)
    q : ndarray(n,), optional, the configuration to lock them at (default zero)

    >>> arm = lock_joints(load_urdf("panda"), ["panda_finger_joint1", "panda_finger_joint2"])
    >>> arm.n, arm.parents
    (7, (-1, 0, 1, 2, 3, 4, 5))
    """
    fname = "lock_joints"
    _model_arg(model, fname)
    if isinstance(joints, str) or not isinstance(joints, (list, tuple)) or not all(
            isinstance(j, str) for j in joints):
        raise _value_checks.error(f"{fname}: joints", "a list of joint names", joints, exc=TypeError)
    bad = [j for j in joints if j not in model.joint_names]
    if bad:
        raise _value_checks.refusal(ValueError, f"{fname}: joints: {bad} are not joints of {model.name!r}; expected "
                         f"names among {list(model.joint_names)}")
    q = np.zeros(model.n) if q is None else _value_checks.vector(
        q, model.n, f"{fname}: q (one value per joint of the {model.n}-joint model)")
    q = np.asarray(q, dtype=float)
    locked = {model.joint_names.index(j) for j in joints}
    if len(locked) == model.n:
        raise _value_checks.refusal(ValueError, f"{fname}: joints: expected to keep at least one joint of "
                         f"{model.name!r}, got all {model.n}")
    # where[i] = (new body, pose of old body i in it)
    where, new_of, parents, keep, placements = {-1: (-1, np.eye(4))}, {}, [], [], []
    bodies = [model.base_inertia.copy()]
    for i in range(model.n):
        pb, Hp = where[model.parents[i]]
        Hi = Hp @ model.placements[i]
        if i in locked:
            where[i] = (pb, Hi @ _joint_motion(model.joint_types[i], model.axes[i], q[i]))
            bodies[pb + 1] = bodies[pb + 1] + _move_inertia(model.inertias[i], where[i][1])
            continue
        parents.append(pb)
        keep.append(i)
        placements.append(Hi)
        where[i] = (len(parents) - 1, np.eye(4))
        bodies.append(model.inertias[i].copy())
    frames = {k: (where[b][0], _ro(where[b][1] @ H)) for k, (b, H) in model.frames.items()}
    meshes = tuple((lk, where[b][0], _ro(where[b][1] @ H), f, s, kind)
                   for lk, b, H, f, s, kind in model.meshes)
    pick = lambda a: _ro(np.asarray(a)[keep])  # noqa: E731
    i = _still_joint(parents, [model.joint_types[k] for k in keep], pick(model.axes),
                     placements, bodies[1:])
    if i is not None:
        raise _value_checks.error(f"{fname}: joints, q", "locked joints after which every kept "
                                  "joint moves inertia", f"joint "
                                  f"{model.joint_names[keep[i]]!r} moving none about its axis",
                                  "the mass matrix would be singular")
    return _build(
        name=model.name, parents=tuple(parents),
        joint_names=tuple(model.joint_names[i] for i in keep),
        joint_types=tuple(model.joint_types[i] for i in keep), axes=pick(model.axes),
        placements=_ro(placements), inertias=_ro(bodies[1:]), base_inertia=_ro(bodies[0]),
        floating=model.floating, lower=pick(model.lower), upper=pick(model.upper),
        velocity=pick(model.velocity), effort=pick(model.effort), frames=frames, meshes=meshes,
        base_link=model.base_link, source=model.source)


def serial_chain(model, tip=None):
    r"""A fixed-base model that is a chain as a :class:`~robodyn.rigid_motion.SerialChain`.

    The space screws at q = 0 are :math:`\mathcal S_i = \mathrm{Ad}_{H_i(0)}(a_i, 0)` (revolute)
    or :math:`(0, R_i(0) a_i)` (prismatic), :math:`H_i(0)` body *i*'s home pose; each link's
    frame is its centre of mass with the body's axes, its inertia
    :math:`\mathrm{diag}(\bar I_i, m_i\mathbb 1)`; the end-effector home is the frame ``tip``
    (a URDF link name; default the last body's frame). The chain feeds
    :mod:`robodyn.dynamics`, :mod:`robodyn.lagrange`, :mod:`robodyn.kane` and
    :mod:`robodyn.equations` unchanged.

    Raises ``ValueError`` for a floating base, a branching tree (lock the branches first with
    :func:`lock_joints`), a massless body, or an unknown ``tip``.

    >>> ur5 = serial_chain(load_urdf("ur5"), tip="tool0")
    >>> ur5
    SerialChain('ur5', 6 joints RRRRRR, with inertias)
    """
    from .rigid_motion._kinematics import SerialChain
    fname = "serial_chain"
    _model_arg(model, fname)
    if model.floating:
        raise _value_checks.refusal(ValueError, f"{fname}: model: expected a fixed base, got {model!r} (a chain "
                         f"has its base welded to the ground)")
    if model.parents != tuple(range(-1, model.n - 1)):
        i = next(k for k, p in enumerate(model.parents) if p != k - 1)
        raise _value_checks.refusal(ValueError, f"{fname}: model: expected a chain (each body the child of the one "
                         f"before), got a tree: joint {model.joint_names[i]!r} hangs from body "
                         f"{model.parents[i]}; lock the branches you do not need with "
                         f"lock_joints(model, [...])")
    if tip is not None and (not isinstance(tip, str) or tip not in model.frames):
        raise _value_checks.refusal(ValueError, f"{fname}: tip: expected a link name of {model.name!r} (one of "
                         f"{sorted(model.frames)}), got {tip!r}")
    H, screws, homes, inertias = np.eye(4), [], [], []
    for i in range(model.n):
        H = H @ model.placements[i]
        a = H[:3, :3] @ model.axes[i]
        screws.append(np.r_[a, np.cross(H[:3, 3], a)] if model.joint_types[i] == "revolute"
                      else np.r_[np.zeros(3), a])
        G = model.inertias[i]
        m = G[3, 3]
        if not m > 0:
            raise _value_checks.refusal(ValueError, f"{fname}: model: body of joint {model.joint_names[i]!r} has no "
                             f"mass; a SerialChain needs a positive mass per link (lock the "
                             f"joint with lock_joints, or use robodyn.trees)")
        Cx = G[:3, 3:] / m
        c = np.array([Cx[2, 1], Cx[0, 2], Cx[1, 0]])
        L = H.copy()
        L[:3, 3] = H[:3, 3] + H[:3, :3] @ c
        homes.append(L)
        inertias.append(_inertia_at(m, np.zeros(3), G[:3, :3] + m * (Cx @ Cx)))
        if i == model.n - 1:
            Hlast = H
    if tip is None:
        home = Hlast
    else:
        b, Hf = model.frames[tip]
        home = (np.eye(4) if b < 0 else _fk_chain_home(model, b)) @ Hf
    return SerialChain.from_screws(np.array(screws).T, home, homes, inertias, name=model.name)


def _fk_chain_home(model, body):
    H = np.eye(4)
    for i in range(body + 1):
        H = H @ model.placements[i]
    return H

from ._boundary import seal as _seal  # noqa: E402 -- the one boundary (issue 28): last, over the finished module
_seal(globals(), {"RobotModel": {"text": ["name", "joint_names", "joint_types", "frames", "meshes",
                                         "base_link", "source"]},
                  "load_urdf": {"text": ["source", "package_dirs", "name"]},
                  "lock_joints": {"text": ["joints"]},
                  "serial_chain": {"text": ["tip"]}})
