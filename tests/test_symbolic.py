"""robodyn.symbolic, the pure-sympy part that the book's pages run (issue 40).

Each operator is checked by an independent route (scipy's matrix exponential and rotation
vectors, the defining identities of the adjoint and the Lie bracket, the Euler--Lagrange
velocity terms); the module imports without numpy; every cell tagged ``live`` gives the same
result with the page's robodyn (this module) as with the full library; every page setup of a
live cell (``robodyn_live.setup``) makes the state the chapter's cells make with the library.
"""
from __future__ import annotations

import ast
import contextlib
import io
import json
import pathlib
import pickle
import os
import subprocess
import sys
import types

import numpy as np
import pytest
import sympy as sp
from scipy.linalg import expm
from scipy.spatial.transform import Rotation

import robodyn as rd
from robodyn import lagrange, models, symbolic

ROOT = pathlib.Path(__file__).resolve().parents[1]
a, b, c, t, h = sp.symbols("a b c t h", real=True)


def _num(M, values):
    return np.array(sp.Matrix(M).subs(values).evalf(), dtype=float)


def test_imports_with_sympy_alone(tmp_path):
    """No numpy, scipy or other part of robodyn: the page has none of them. The page's package
    is what book/_ext/live_cells.py ships: ``symbolic.py`` and ``errors.py`` (its error
    classes) under an ``__init__`` of its own."""
    pkg = tmp_path / "robodyn"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    for name in ("symbolic.py", "errors.py"):
        (pkg / name).write_text((ROOT / "lib" / "robodyn" / name).read_text())
    code = ("import sys\n"
            "for m in ('numpy', 'scipy', 'matplotlib'): sys.modules[m] = None\n"
            f"sys.path.insert(0, {str(tmp_path)!r})\n"
            "from robodyn import symbolic as m\n"
            "import sympy as sp; print(m.exp_se3([0, 0, 1, 0, 0, 0], sp.pi)[0, 0])\n"
            "print(sorted({k.split('.')[0] for k in sys.modules if k.split('.')[0] in "
            "('numpy', 'scipy') and sys.modules[k] is not None}))\n"
            "print(sorted(k for k in sys.modules if k.startswith('robodyn.')))\n"
            "try:\n    m.hat([1, 2])\nexcept Exception as e:\n"
            "    print(type(e).__name__, isinstance(e, ValueError))\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env=env).stdout.split("\n")
    assert out[:4] == ["-1", "[]", "['robodyn.errors', 'robodyn.symbolic']", "ArgumentError True"]


def test_exponentials_against_scipy():
    rng = np.random.default_rng(4)
    for _ in range(5):
        w = rng.normal(size=3)
        w /= np.linalg.norm(w)
        p, pitch, angle = rng.normal(size=3), rng.normal(), rng.uniform(-3, 3)
        S = symbolic.revolute_screw(w.tolist(), p.tolist(), pitch)
        S_num = _num(S, {}).ravel()
        H = _num(symbolic.exp_se3(S, t), {t: angle})
        assert np.allclose(H, expm(_num(symbolic.hat(S), {}) * angle), atol=1e-12)
        R = _num(symbolic.exp_so3(w.tolist(), t), {t: angle})
        assert np.allclose(R, Rotation.from_rotvec(w * angle).as_matrix(), atol=1e-12)
        # the screw's axis passes through p: a point of the axis only slides, by pitch * angle
        moved = H @ np.r_[p, 1.0]
        assert np.allclose(moved[:3], p + pitch * angle * w, atol=1e-12)
        assert np.allclose(S_num[:3], w)


def test_rigid_motion_identities():
    R = symbolic.rotation("z", t) @ symbolic.rotation("x", a)
    H = symbolic.homogeneous(R, [a, b, c])
    V = sp.Matrix(sp.symbols("w1:4 v1:4", real=True))
    W = sp.Matrix(sp.symbols("x1:7", real=True))
    assert sp.simplify(H @ symbolic.inverse_homogeneous(H)) == sp.eye(4)
    # Ad_H V is the twist of H [V] H^-1
    lhs = symbolic.adjoint(H) @ V
    rhs = symbolic.vee(sp.simplify(H @ symbolic.hat(V) @ symbolic.inverse_homogeneous(H)))
    assert sp.simplify(lhs - rhs) == sp.zeros(6, 1)
    # ad_V W is the Lie bracket [V, W]
    bracket = symbolic.vee(symbolic.hat(V) @ symbolic.hat(W) - symbolic.hat(W) @ symbolic.hat(V))
    assert sp.expand(symbolic.ad(V) @ W - bracket) == sp.zeros(6, 1)
    assert symbolic.vee(symbolic.hat([a, b, c])) == sp.Matrix([a, b, c])
    assert symbolic.hat([a, b, c]) @ sp.Matrix([1, 2, 3]) == sp.Matrix([a, b, c]).cross(
        sp.Matrix([1, 2, 3]))


def test_christoffel_and_coriolis_against_euler_lagrange():
    """C qd (5.14) equals the velocity terms of the Euler--Lagrange equations of
    T = qd^T M qd / 2, Mdot qd - dT/dq; the second kind is M^-1 times the first."""
    l1, l2, m1, m2 = sp.symbols("l1 l2 m1 m2", positive=True)
    q1, q2, u1, u2 = sp.symbols("q1 q2 u1 u2", real=True)
    q, u = [q1, q2], sp.Matrix([u1, u2])
    M = lagrange.mass_matrix(models.planar_rr(l1, l2, m1, m2), q)
    T = (u.T * M * u)[0] / 2
    Md = sum((M.diff(qk) * uk for qk, uk in zip(q, u)), sp.zeros(2))
    terms = Md * u - sp.Matrix([T.diff(qk) for qk in q])
    C = symbolic.coriolis_matrix(M, q, u)
    assert sp.simplify(C * u - terms) == sp.zeros(2, 1)
    assert sp.simplify(Md - 2 * C + (Md - 2 * C).T) == sp.zeros(2)
    G1 = symbolic.christoffel_symbols(M, q)
    G2 = symbolic.christoffel_symbols(M, q, kind=2)
    for j in range(2):
        for k in range(2):
            first = sp.Matrix([G1[i, j, k] for i in range(2)])
            second = sp.Matrix([G2[i, j, k] for i in range(2)])
            assert sp.simplify(M * second - first) == sp.zeros(2, 1)


@pytest.mark.parametrize("call, match", [
    (lambda: symbolic.hat([a, b]), "hat: x: expected a 3-vector or a 6-vector"),
    (lambda: symbolic.hat(["a", b, c]), "hat: x"),
    (lambda: symbolic.exp_se3([0, 0, 1, 0, 0], t), "exp_se3: S: expected shape 6x1"),
    (lambda: symbolic.exp_so3([0, 0, 1], sp.oo), "exp_so3: theta: expected .*finite"),
    (lambda: symbolic.rotation("w", t), "rotation: axis: expected 'x', 'y', 'z'"),
    (lambda: symbolic.homogeneous(sp.eye(3), [a, b]), "homogeneous: p: expected shape 3x1"),
    (lambda: symbolic.vee(sp.eye(2)), "vee: X: expected a 3x3 so"),
    (lambda: symbolic.coriolis_matrix(sp.eye(2), [a], [b]), "coriolis_matrix: M"),
    (lambda: symbolic.coriolis_matrix(sp.eye(2), [a, b], [c]), "coriolis_matrix: qd"),
    (lambda: symbolic.christoffel_symbols(sp.eye(2), [a, 1]), "christoffel_symbols: q"),
    (lambda: symbolic.christoffel_symbols(sp.eye(2), [a, b], kind=3), "kind: expected 1"),
    (lambda: symbolic.christoffel_symbols(sp.zeros(2), [a, b], kind=2), "invertible"),
])
def test_bad_input_is_refused_by_name(call, match):
    with pytest.raises((TypeError, ValueError), match=match):
        call()


def test_pickles():
    assert pickle.loads(pickle.dumps(symbolic.exp_se3)) is symbolic.exp_se3


# --------------------------------------------------------------------------
# the book's live cells: the page's robodyn gives the library's results
# --------------------------------------------------------------------------

def _live_cells():
    out = []
    for nb in sorted((ROOT / "book").rglob("*.ipynb")):
        if ".ipynb_checkpoints" in nb.parts:
            continue
        cells = json.loads(nb.read_text())["cells"]
        live = [c for c in cells if c["cell_type"] == "code"
                and "live" in c.get("metadata", {}).get("tags", [])]
        if live:
            out.append((nb.relative_to(ROOT).as_posix(), live))
    return out


LIVE = _live_cells()
PAGE_RD = types.SimpleNamespace(**{k: getattr(symbolic, k) for k in symbolic.__all__})


def _run(cells, rd_module, setups):
    """Run the cells like the page does (the last expression is the result, display() shows)
    in a namespace with sympy and ``rd``; each cell's printed text, result and displays."""
    shown = []
    ns = {"sp": sp, "rd": rd_module, "display": lambda *x: shown.extend(x)}
    results = []
    for src, setup in zip(cells, setups):
        if setup:
            exec(setup, ns)
        shown.clear()
        tree = ast.parse(src)
        last = tree.body.pop() if isinstance(tree.body[-1], ast.Expr) else None
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            exec(compile(tree, "<cell>", "exec"), ns)
            value = (eval(compile(ast.Expression(last.value), "<cell>", "eval"), ns)
                     if last else None)
        results.append((printed.getvalue(), sp.srepr((list(shown), value))))
    return results


def test_at_least_twelve_live_cells_in_four_chapters():
    assert sum(len(cells) for _, cells in LIVE) >= 12 and len(LIVE) >= 4, \
        [(nb, len(c)) for nb, c in LIVE]


@pytest.mark.parametrize("notebook, cells", LIVE, ids=[nb for nb, _ in LIVE])
def test_live_cells_give_the_books_results_in_the_page(notebook, cells):
    """With the page's robodyn (robodyn.symbolic alone) each live cell gives what it gives
    with the full library. Cells without a setup are run in the library with their
    chapter's state made by the library itself (the setup's names, by their own route)."""
    sources = ["".join(c["source"]) for c in cells]
    setups = ["".join(c["metadata"].get("robodyn_live", {}).get("setup", [])) or None
              for c in cells]
    library_setups = [LIBRARY_STATE.get(notebook) if s else None for s in setups]
    page = _run(sources, PAGE_RD, setups)
    library = _run(sources, rd, library_setups)
    assert page == library


LIBRARY_STATE = {
    # what the cells above the live cell compute in the chapter, with the full library
    "book/part2/02_properties.ipynb": (
        'from robodyn import lagrange, models\n'
        'l1, l2, m1, m2 = sp.symbols("l1 l2 m1 m2", positive=True)\n'
        'q1, q2, qd1, qd2 = sp.symbols("q1 q2 qd1 qd2", real=True)\n'
        'q, qd = [q1, q2], [qd1, qd2]\n'
        'M = lagrange.mass_matrix(models.planar_rr(l1, l2, m1, m2), q)\n'
        'Md = sum((M.diff(q[k]) * qd[k] for k in range(2)), sp.zeros(2))\n'
        'C = lagrange.coriolis_matrix(M, q, qd)\n'),
    "book/part2/04_geometry.ipynb": (
        'from robodyn import lagrange, models\n'
        'l1, l2, m1, m2 = sp.symbols("l1 l2 m1 m2", positive=True)\n'
        'q1, q2 = sp.symbols("q1 q2", real=True)\n'
        'qs = [q1, q2]\n'
        'M_sym = sp.simplify(lagrange.kinetic_energy_metric(models.planar_rr(l1, l2, m1, m2), '
        'qs))\n'
        'Gam = lagrange.levi_civita(M_sym, qs)\n'),
    "book/part3/02_coordinates.ipynb": (
        'r, th, rd_, thd = sp.symbols("r theta rdot thetadot", real=True)\n'),
    "book/part5/03_special_issues.ipynb": (
        'from robodyn import rotation\n'
        'def rot_z(a):\n'
        '    return rotation("z", a)\n'),
}


@pytest.mark.parametrize("notebook", sorted(LIBRARY_STATE))
def test_page_setups_make_the_chapters_state(notebook):
    """A page setup (pure sympy) makes the names the chapter's cells make with the library,
    equal as expressions."""
    cells = dict(LIVE)[notebook]
    setup = "".join(next(c for c in cells if "robodyn_live" in c["metadata"])
                    ["metadata"]["robodyn_live"]["setup"])
    page, lib = {"sp": sp, "rd": PAGE_RD}, {"sp": sp}
    exec(setup, page)
    exec(LIBRARY_STATE[notebook], lib)
    names = [n for n in page if not n.startswith("__") and n not in ("sp", "rd")]
    assert names and set(names) <= set(lib), names
    for n in names:
        x, y = page[n], lib[n]
        if callable(x) and not isinstance(x, sp.Basic):     # a function: equal on a symbol
            a = sp.Symbol("a", real=True)
            x, y = x(a), y(a)
        if isinstance(x, (sp.MatrixBase, sp.NDimArray)):
            assert all(sp.simplify(e) == 0 for e in sp.flatten(sp.Array(x) - sp.Array(y))), n
        else:
            assert x == y, n


def test_the_meaning_is_checked_in_pure_sympy():
    """The page's module checks what its arguments mean, as robodyn.kinds does in the library:
    a reflection is no rotation (for every value of its symbol), a non-pose is no pose, the zero
    vector no axis."""
    th = sp.Symbol("theta", real=True)
    reflection = sp.diag(1, 1, -1) * sp.rot_axis3(th)
    for call, where in ((lambda: symbolic.homogeneous(reflection, [0, 0, 0]), "homogeneous: R"),
                        (lambda: symbolic.adjoint(sp.diag(1, 1, 1, 2)), "adjoint: H"),
                        (lambda: symbolic.inverse_homogeneous(sp.diag(2, 1, 1, 1)),
                         "inverse_homogeneous: H"),
                        (lambda: symbolic.revolute_screw([0, 0, 0], [1, 0, 0]),
                         "revolute_screw: axis"),
                        (lambda: symbolic.rotation([0, 0, 0], th), "rotation: axis")):
        with pytest.raises(ValueError, match=where):
            call()
    assert symbolic.homogeneous(sp.rot_axis3(th), [1, 0, 0])[3, 3] == 1
