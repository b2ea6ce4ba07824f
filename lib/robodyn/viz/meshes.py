"""Triangle meshes of a robot's links, read from their files and made light enough for a page.

A URDF names a mesh file for each link, twice: a *visual* mesh (a CAD export, often tens of
thousands of triangles: a megabyte per link in a page) and a *collision* mesh (a coarse hull of a
few hundred). :func:`read_mesh` reads either (STL, OBJ, DAE; trimesh reads them, pycollada the
DAE) into a :class:`TriangleMesh` in the file's own frame and units, welds duplicated vertices,
and simplifies it by quadric edge collapse (Garland and Heckbert; fast-simplification) toward
``max_faces`` triangles; where edge collapse stops early (a CAD export whose pieces meet at
seams that are not shared edges), vertex clustering on a grid (Rossignac and Borrel) brings it
down to at most ``max_faces``. The simplified mesh is cached in ``$ROBODYN_CACHE/meshes`` (or
``~/.cache/robodyn/meshes``), keyed by the file's bytes and the settings, so a notebook that draws
the Panda reads its 10 MB of visual meshes once.

:class:`~robodyn.viz.scene.Scene` places a mesh with :meth:`~robodyn.viz.scene.Scene.mesh` (a pose, or one per
instant) and a whole loaded robot with :meth:`~robodyn.viz.scene.Scene.robot`.
"""
from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .. import _value_checks
from .._files import replace_atomic

__all__ = ["TriangleMesh", "read_mesh", "MESH_SUFFIXES", "MAX_FACES"]

MESH_SUFFIXES = (".stl", ".obj", ".dae")
"""The mesh files :func:`read_mesh` reads."""

MAX_FACES = 200_000
"""At most this many triangles in one mesh (a page, not a CAD model)."""

MAX_FILE_BYTES = 200 * 2**20
"""Mesh files larger than this (200 MiB) are refused before they are read."""

_CACHE_VERSION = "2"

SLACK = 1.25
"""Edge collapse may stop a little above ``max_faces``; beyond this factor of it, grid
clustering takes over."""


@dataclass(frozen=True, eq=False)
class TriangleMesh:
    """A triangle mesh: ``vertices`` (V, 3) float in metres, in the mesh's own frame, and
    ``faces`` (F, 3) int, the vertex indices of each triangle (counter-clockwise seen from
    outside; whole numbers stored as floats are taken as indices).

    >>> m = TriangleMesh(np.eye(3), np.array([[0, 1, 2]]))
    >>> m.n_faces, m.bounds().tolist()
    (1, [[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]])
    """

    vertices: np.ndarray
    faces: np.ndarray

    def __post_init__(self):
        v = _value_checks.real_array(self.vertices, "TriangleMesh: vertices")
        if v.ndim != 2 or v.shape[1] != 3 or v.shape[0] < 3:
            raise _value_checks.error("TriangleMesh: vertices", "an array (V, 3) of at least 3 points",
                                f"shape {v.shape}")
        f = np.asarray(self.faces)
        if f.dtype.kind == "f" and f.size and np.all(np.isfinite(f)) and np.all(f == np.round(f)):
            f = f.astype(np.int64)               # whole numbers stored as floats: indices
        if f.ndim != 2 or f.shape[1] != 3 or not 1 <= f.shape[0] <= MAX_FACES \
                or f.dtype.kind not in "iu":
            raise _value_checks.error("TriangleMesh: faces", f"an integer array (F, 3), 1 <= F <= "
                                f"{MAX_FACES}", f"{f.dtype} array of shape {f.shape}")
        if f.min() < 0 or f.max() >= v.shape[0]:
            raise _value_checks.error("TriangleMesh: faces", f"vertex indices 0 to {v.shape[0] - 1}",
                                f"indices {f.min()} to {f.max()}")
        v = np.array(v, dtype=float)
        f = np.array(f, dtype=np.int64)
        v.flags.writeable = False
        f.flags.writeable = False
        object.__setattr__(self, "vertices", v)
        object.__setattr__(self, "faces", f)

    @property
    def n_faces(self):
        """The number of triangles."""
        return int(self.faces.shape[0])

    def bounds(self):
        """The corners (2, 3) of the mesh's axis-aligned bounding box."""
        return np.array([self.vertices.min(axis=0), self.vertices.max(axis=0)])

    def __repr__(self):
        return f"TriangleMesh({self.vertices.shape[0]} vertices, {self.n_faces} faces)"


def _cache_dir():
    root = os.environ.get("ROBODYN_CACHE") or os.path.join(Path.home(), ".cache", "robodyn")
    return Path(root) / "meshes"


def _mesh_path(path, what):
    if not isinstance(path, (str, os.PathLike)):
        raise _value_checks.error(what, "a path to an STL, OBJ or DAE file", path, exc=TypeError)
    p = Path(path)
    if p.suffix.lower() not in MESH_SUFFIXES:
        raise _value_checks.error(what, f"a mesh file ending in {', '.join(MESH_SUFFIXES)}", str(p))
    if not p.is_file():
        raise _value_checks.error(what, "an existing mesh file", str(p),
                            hint="a URDF's package:// paths are resolved by the loader")
    if p.stat().st_size > MAX_FILE_BYTES:
        raise _value_checks.error(what, f"a mesh file of at most {MAX_FILE_BYTES // 2**20} MiB",
                            f"{p.stat().st_size // 2**20} MiB")
    return p


def _scale(scale, what):
    if scale is None:
        return np.ones(3)
    s = _value_checks.real_array(scale, what)
    if s.shape == ():
        s = np.full(3, float(s))
    if s.shape != (3,) or not np.all(s > 0) or s.max() > 1e6:
        raise _value_checks.error(what, "a positive scale factor or three of them (at most 1e6)", s)
    return s


def read_mesh(path, *, scale=None, max_faces=None):
    """Read a mesh file (STL, OBJ, DAE) into a :class:`TriangleMesh`, simplified and cached.

    Parameters
    ----------
    path : str or Path
        The mesh file (a URDF's ``<mesh filename>``, resolved).
    scale : float or array (3,), optional
        The URDF's ``<mesh scale>``: the file's coordinates are multiplied by it.
    max_faces : int, optional
        Simplify the mesh toward this many triangles: quadric edge collapse, which may keep
        up to ``SLACK`` times as many (it does not tear open borders), else grid clustering to
        at most this many. Without it the mesh is kept whole (at most ``MAX_FACES``
        triangles).

    Returns
    -------
    TriangleMesh
        In the file's own frame (a URDF's ``<visual><origin>`` places it in the link's frame).

    Raises
    ------
    ValueError
        ``read_mesh: path: ...`` when the file is missing, of another kind, too large, or holds
        no triangles that can be read.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "tet.obj"
    >>> _ = p.write_text("v 0 0 0\\nv 1 0 0\\nv 0 1 0\\nv 0 0 1\\nf 1 3 2\\nf 1 2 4\\nf 1 4 3\\nf 2 3 4\\n")
    >>> read_mesh(p, scale=0.5).bounds().tolist()
    [[0.0, 0.0, 0.0], [0.5, 0.5, 0.5]]
    """
    p = _mesh_path(path, "read_mesh: path")
    s = _scale(scale, "read_mesh: scale")
    target = None if max_faces is None else _value_checks.size(max_faces, "read_mesh: max_faces",
                                                         low=4, high=MAX_FACES)
    data = p.read_bytes()
    key = hashlib.sha256(b"|".join([data, p.suffix.lower().encode(), repr(
        (_CACHE_VERSION, np.round(s, 12).tolist(), target)).encode()])).hexdigest()[:32]
    cached = _cache_dir() / f"{key}.npz"
    if cached.is_file():
        try:
            with np.load(cached, allow_pickle=False) as z:
                return TriangleMesh(z["vertices"], z["faces"])
        except (OSError, ValueError, KeyError):
            pass                                 # a damaged cache file: read the mesh again
    mesh = _read(p, s, target)
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        import io
        buf = io.BytesIO()
        np.savez_compressed(buf, vertices=mesh.vertices, faces=mesh.faces)
        replace_atomic(cached, buf.getvalue())
    except OSError:
        pass                                     # a read-only cache: the mesh is still right
    return mesh


def _cluster_once(v, f, k):
    """Vertex clustering on a grid of k cells along the mesh's longest side: one vertex per
    occupied cell (the mean of its vertices), the triangles that collapse or repeat dropped."""
    lo = v.min(axis=0)
    cell = max(float((v.max(axis=0) - lo).max()), 1e-12) / k
    keys = np.floor((v - lo) / cell).astype(np.int64)
    _, inv = np.unique(keys, axis=0, return_inverse=True)
    inv = inv.ravel()
    count = np.bincount(inv)
    pos = np.stack([np.bincount(inv, weights=v[:, d]) for d in range(3)], axis=1) / count[:, None]
    ff = inv[f]
    ff = ff[(ff[:, 0] != ff[:, 1]) & (ff[:, 1] != ff[:, 2]) & (ff[:, 0] != ff[:, 2])]
    _, first = np.unique(np.sort(ff, axis=1), axis=0, return_index=True)
    ff = ff[np.sort(first)]
    used = np.unique(ff)
    remap = np.full(pos.shape[0], -1, dtype=np.int64)
    remap[used] = np.arange(used.size)
    return pos[used], remap[ff]


def _cluster(v, f, target):
    """The finest grid clustering (Rossignac and Borrel) whose mesh has at most ``target``
    triangles (bisection on the grid; the count grows with the grid, nearly monotonically)."""
    lo, hi, best = 2, 1024, None
    while lo <= hi:
        k = (lo + hi) // 2
        vk, fk = _cluster_once(v, f, k)
        if 1 <= len(fk) <= target:
            best, lo = (vk, fk), k + 1
        else:
            hi = k - 1
    if best is None:
        best = _cluster_once(v, f, 2)
    return best


def _read(p, scale, target):
    """Read, weld, scale and simplify (not cached)."""
    import trimesh
    try:
        loaded = trimesh.load(str(p), force="mesh", process=False)
    except Exception as e:   # noqa: BLE001 -- any reader failure is the file's: say which
        raise _value_checks.error("read_mesh: path", "a mesh file trimesh can read", str(p),
                            hint=f"{type(e).__name__}: {e}") from e
    v = np.asarray(getattr(loaded, "vertices", np.zeros((0, 3))), dtype=float)
    f = np.asarray(getattr(loaded, "faces", np.zeros((0, 3))), dtype=np.int64)
    if v.ndim != 2 or v.shape[0] < 3 or f.ndim != 2 or f.shape[0] < 1 \
            or not np.all(np.isfinite(v)):
        raise _value_checks.error("read_mesh: path", "a mesh file with triangles", str(p),
                            hint="the file holds no readable triangle")
    m = trimesh.Trimesh(v * scale, f, process=True)      # welds duplicated vertices
    if target is not None and len(m.faces) > target:
        import fast_simplification
        v, f = fast_simplification.simplify(np.asarray(m.vertices), np.asarray(m.faces),
                                            target_count=target, agg=10)
        v, f = np.asarray(v, dtype=float), np.asarray(f, dtype=np.int64)
        if len(f) > SLACK * target:          # edge collapse stuck on a CAD export's seams
            v, f = _cluster(v, f, target)
        return TriangleMesh(v, f)
    if len(m.faces) > MAX_FACES:
        raise _value_checks.error("read_mesh: max_faces", f"a number of triangles to keep (at most "
                            f"{MAX_FACES})", "none", hint=f"{p.name} has {len(m.faces)}")
    return TriangleMesh(np.asarray(m.vertices, dtype=float), np.asarray(m.faces, dtype=np.int64))


from .._boundary import seal as _seal  # noqa: E402 -- the one boundary (issue 28): last, over the finished module
_seal(globals())
