"""The symbolic equations of kinematic trees (issue 38, point 2): Kane's method on a tree
(:func:`robodyn.kane.equations_of_motion` of a RobotModel) and Lagrange's
(:func:`robodyn.trees.equations`), fixed and floating base, against the numeric O(n)
algorithms (:mod:`robodyn.trees`) and Pinocchio on the same URDF, at random states, to 1e-9
relative.

Fixtures: double_pendulum of example-robot-data (a chain), ``two_legs.urdf`` (a body with two
branches, tilted axes, a prismatic joint, rotated off-centre inertias), Solo (8 joints, four
legs) for Kane on a fixed base. A floating base's gravity is left as Symbols (its direction in
the base frame) and given at each random base orientation.
"""
from __future__ import annotations

import pickle

import numpy as np
import pytest
import sympy as sp

pin = pytest.importorskip("pinocchio")
pytest.importorskip("yourdfpy")

from robodyn import kane, trees, urdf  # noqa: E402
from robodyn.errors import RobodynError  # noqa: E402
from test_urdf import FIX, TOL, _Pair, _rel  # noqa: E402

GB = sp.symbols("gbx gby gbz")
TWO_LEGS = str(FIX / "two_legs.urdf")


def _methods(model, gravity):
    return {"kane": kane.equations_of_motion(model, gravity=gravity),
            "lagrange": trees.equations(model, gravity=gravity)}


def _pin_aba(pair, qp, nu, tau):
    return pin.aba(pair.pm, pair.d, qp, pair.v(nu), pair.v(tau))[pair.P]


def _pin_crba(pair, qp):
    M = pin.crba(pair.pm, pair.d, qp)
    return (np.triu(M) + np.triu(M, 1).T)[np.ix_(pair.P, pair.P)]


@pytest.mark.parametrize("path", ["double_pendulum", "two_legs", "solo"])
def test_fixed_base_kane_equals_lagrange_aba_and_pinocchio(path):
    """Kane = Lagrange = trees.aba = pin.aba (accelerations), M = pin.crba, on a chain, a
    two-branch tree and Solo's four legs (Kane only there: Lagrange's symbolic Solo is
    test_urdf's)."""
    file = TWO_LEGS if path == "two_legs" else urdf.example_robots()[path]
    pair = _Pair(file, False)
    forms = ({"kane": kane.equations_of_motion(pair.m)} if path == "solo"
             else _methods(pair.m, trees.DEFAULT_GRAVITY))
    rng = np.random.default_rng(5)
    for _ in range(3):
        q, _, qp = pair.state(rng)
        nu, tau = rng.normal(size=(2, pair.m.nv))
        ref = _pin_aba(pair, qp, nu, tau)
        assert _rel(trees.aba(pair.m, q, nu, tau), ref) < TOL
        for name, eom in forms.items():
            num = eom.numeric()
            assert _rel(num.accelerations(q, nu, tau=tau), ref) < TOL, (path, name)
            assert _rel(num.mass_matrix(q), _pin_crba(pair, qp)) < TOL, (path, name)


@pytest.mark.parametrize("path", ["double_pendulum", "two_legs"])
def test_floating_base_symbolic_equals_crba_aba_and_pinocchio(path):
    """A floating tree's symbolic equations (Kane; Lagrange by Boltzmann--Hamel): M(q) holds
    the joint angles only and equals trees.crba and pin.crba (free-flyer); the accelerations
    equal trees.aba and pin.aba at random base poses (gravity given in the base frame; each
    pose's numeric form is made anew, so the larger tree takes one pose per method)."""
    file = TWO_LEGS if path == "two_legs" else urdf.example_robots()[path]
    pair = _Pair(file, True)
    m = pair.m
    rng = np.random.default_rng(8)
    for name, eom in _methods(m, GB).items():
        assert eom.mass_matrix.shape == (m.n + 6, m.n + 6)
        assert eom.mass_matrix.free_symbols <= set(eom.q), name
        assert list(eom.kinematics) == list(eom.u[6:]), name
        assert set(eom.parameters()) == set(GB), name
        for _ in range(1 if path == "two_legs" else 3):
            Hb = pair.state(rng)[1]
            gb = Hb[:3, :3].T @ trees.DEFAULT_GRAVITY
            num = eom.numeric(dict(zip(map(str, GB), gb)))
            for _ in range(2):
                q = rng.uniform(-1.5, 1.5, m.n)
                qp = pair.q(q, Hb)
                nu, tau = rng.normal(size=(2, m.nv))
                ref = _pin_aba(pair, qp, nu, tau)
                assert _rel(trees.aba(m, q, nu, tau, base_pose=Hb), ref) < TOL
                assert _rel(num.accelerations(q, nu, tau=tau), ref) < TOL, (path, name)
                M = num.mass_matrix(q)
                assert _rel(M, trees.crba(m, q)) < TOL and _rel(M, _pin_crba(pair, qp)) < TOL


def test_kane_terms_of_a_tree():
    """Kane's terms: the partial twists of each body are its body Jacobian (the space Jacobian
    of trees.frame_jacobian carried into the body's frame); F_r + F_r^* = 0 with the inputs is
    M udot = f + tau; Kane's gravity forces are Lagrange's G (rnea at rest)."""
    m = urdf.load_urdf(TWO_LEGS)
    eom = kane.equations_of_motion(m)
    assert isinstance(eom, kane.TreeEquations)
    q = np.array([0.3, -0.7, 1.1, 0.05])
    sub = dict(zip(eom.q, q))
    poses = trees.body_poses(m, q)
    links = {b: name for name, (b, H) in m.frames.items() if np.allclose(H, np.eye(4))}
    for i in range(m.n):
        Jb = np.array(eom.partial_velocities(i).xreplace(sub), dtype=float)
        H = np.linalg.inv(poses[i + 1])
        R, p = H[:3, :3], H[:3, 3]
        Ad = np.block([[R, np.zeros((3, 3))], [urdf._skew(p) @ R, R]])
        assert np.abs(Jb - Ad @ trees.frame_jacobian(m, q, links[i])).max() < 1e-12
    Fr = np.array(eom.active_forces.xreplace(sub), dtype=float).ravel()
    assert np.abs(-Fr - trees.rnea(m, q, np.zeros(4), np.zeros(4))).max() < 1e-12
    udot = dict(zip(eom.udot, [0.4, -0.2, 0.1, 0.3]))
    lhs = sp.Matrix([e.lhs for e in eom.equations()])     # F_r + F_r^*, no inputs
    diff = lhs - (eom.f - eom.M * eom.udot)
    vals = {**sub, **dict(zip(eom.u, [0.5, 0.1, -0.3, 0.2])), **udot}
    assert max(abs(float(x)) for x in diff.xreplace(vals)) < 1e-12


def test_tree_equations_pickle_and_refuse_bad_input():
    """TreeEquations pickles; a loop in the URDF, a non-tree, a nested form, wrong symbols and
    a bad gravity are refused with the house message."""
    m = urdf.load_urdf(urdf.example_robots()["double_pendulum"], floating_base=True)
    eom = kane.equations_of_motion(m, gravity=GB)
    back = pickle.loads(pickle.dumps(eom))
    x = (np.array([0.2, -0.1]), np.linspace(-1, 1, 8))
    vals = {"gbx": 0.0, "gby": 0.0, "gbz": -9.81}
    assert np.allclose(back.numeric(vals).accelerations(*x), eom.numeric(vals).accelerations(*x))
    with pytest.raises(RobodynError, match="loop|cycle|tree"):
        urdf.load_urdf(FIX / "loop.urdf")
    with pytest.raises(TypeError, match="kane.equations_of_motion: chain: expected a "
                                        "SerialChain or a RobotModel, got dict"):
        kane.equations_of_motion({"parents": [-1, 0, 0]})
    with pytest.raises(TypeError, match="equations: model: expected a RobotModel"):
        trees.equations([(-1, 0), (0, 1)])
    with pytest.raises(ValueError, match="form: expected 'auto' or 'expanded'"):
        kane.equations_of_motion(m, form="nested")
    with pytest.raises(ValueError, match="kane.equations_of_motion: u: expected 8 symbols"):
        kane.equations_of_motion(m, u=sp.symbols("a b"))
    with pytest.raises(ValueError, match="q and qd share"):
        trees.equations(m, q=sp.symbols("a b"), qd=sp.symbols("a c d e f g h i"))
    with pytest.raises(ValueError, match="equations: gravity: expected a vector of length 3"):
        trees.equations(m, gravity=[0, -9.81])


def test_partial_velocities_of_a_floating_tree():
    """A floating base is body -1, its partial twists the first six speeds' unit columns;
    a body index outside the tree is refused."""
    m = urdf.load_urdf(TWO_LEGS, floating_base=True)
    eom = kane.equations_of_motion(m, gravity=GB)
    assert isinstance(eom, kane.ChainEquations) and eom.explicit() is eom
    assert eom.partial_velocities(-1) == sp.Matrix.hstack(sp.eye(6), sp.zeros(6, 4))
    J = eom.partial_velocities(3)
    assert J[:, 6:8].is_zero_matrix and not J[:, 8:].is_zero_matrix   # the other leg's joints
    for bad in (4, -2):
        with pytest.raises(ValueError, match="TreeEquations.partial_velocities: body"):
            eom.partial_velocities(bad)
