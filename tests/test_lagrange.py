"""Tests of robodyn.lagrange: symbolic M, C, G against sympy.physics.mechanics built by hand,
the handbook's properties (5.13)-(5.15), the numeric twins against robodyn.dynamics and
Pinocchio, and every bad-input path."""
import os

import numpy as np
import pytest
import sympy as sp
from sympy.physics import mechanics as me

import robodyn as rd
from robodyn import lagrange as lg
from robodyn import models

HERE = os.path.dirname(__file__)
l1, l2, l3, m1, m2, m3, g = sp.symbols("l1 l2 l3 m1 m2 m3 g", positive=True)


def _rand_eval(expr_matrix, syms, rng, k=3):
    """Max |entry| of a sympy matrix at k random points of its symbols."""
    f = sp.lambdify(syms, expr_matrix, "numpy")
    return max(np.abs(np.array(f(*rng.uniform(0.3, 1.7, len(syms))), float)).max()
               for _ in range(k))


# --------------------------------------------------------------------------
# independent reference: sympy.physics.mechanics, written by hand
# --------------------------------------------------------------------------

def _mechanics_planar(kinds, lengths, masses):
    """LagrangesMethod for a planar chain of rods in the xy plane, gravity -g y.
    kinds: 'R' (rotation about z at the link's start) or 'P' (slide along the previous link's
    x axis; the sliding rod's centre is at q + l/2 from the previous joint, as models.planar_rp)."""
    n = len(kinds)
    q = me.dynamicsymbols(f"q1:{n + 1}")
    qd = [qi.diff() for qi in q]
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    frame, joint, last_start, bodies = N, O, O, []
    for i, (kind, l, m) in enumerate(zip(kinds, lengths, masses)):
        if kind == "R":
            B = frame.orientnew(f"B{i}", "Axis", [q[i], frame.z])
            B.set_ang_vel(N, sum((qd[k] for k in range(i + 1) if kinds[k] == "R"), 0) * N.z)
            start = joint
            c = start.locatenew(f"C{i}", l / 2 * B.x)
            nxt = start.locatenew(f"E{i}", l * B.x)
        else:                    # slides from the previous joint's axis (as models.planar_rp)
            B = frame
            start = last_start
            c = start.locatenew(f"C{i}", (q[i] + l / 2) * B.x)
            nxt = start.locatenew(f"E{i}", (q[i] + l) * B.x)
        c.set_vel(N, c.pos_from(O).dt(N))
        last_start = start
        I = me.inertia(B, 0, m * l**2 / 12, m * l**2 / 12)
        bodies.append(me.RigidBody(f"R{i}", c, B, m, (I, c)))
        frame = B
        joint = start.locatenew(f"J{i}", l * B.x) if kind == "R" else joint
    for b in bodies:
        b.potential_energy = b.mass * g * b.masscenter.pos_from(O).dot(N.y)
    L = me.Lagrangian(N, *bodies)
    LM = me.LagrangesMethod(L, q)
    LM.form_lagranges_equations()
    qs, us, uds = sp.symbols(f"q1:{n + 1}"), sp.symbols(f"qd1:{n + 1}"), sp.symbols(f"a1:{n + 1}")
    sub = {**{x.diff().diff(): a for x, a in zip(q, uds)}, **{x.diff(): u for x, u in zip(q, us)}}
    sub2 = dict(zip(q, qs))
    Mm = LM.mass_matrix.subs(sub).subs(sub2)
    rest = (LM.forcing.subs(sub).subs(sub2))          # M qdd = forcing = -(C qd + G)
    return list(qs), list(us), Mm, -rest


@pytest.mark.parametrize("kinds", ["RR", "RP", "RRR"])
@pytest.mark.equation("hb-5-14")
def test_symbolic_eom_equals_lagranges_method(kinds):
    n = len(kinds)
    L, Ms = [l1, l2, l3][:n], [m1, m2, m3][:n]
    if kinds == "RR":
        chain = models.planar_rr(l1, l2, m1, m2)
    elif kinds == "RP":
        chain = models.planar_rp(l1, l2, m1, m2)
    else:
        chain = models.planar_chain(3, length=l1, mass=m1)
        L, Ms = [l1] * 3, [m1] * 3
    q, qd, Mref, Cqd_G = _mechanics_planar(kinds, L, Ms)
    eom = lg.equations_of_motion(chain, gravity=(0, -g, 0), q=q, qd=qd)
    dM = eom.M - Mref
    dR = eom.C * eom.qd + eom.G - Cqd_G
    syms = q + qd + [l1, l2, l3, m1, m2, m3, g]
    rng = np.random.default_rng(1)
    if n == 2:
        assert sp.simplify(dM) == sp.zeros(2, 2)
        assert sp.simplify(dR) == sp.zeros(2, 1)
    assert _rand_eval(dM, syms, rng) < 1e-12
    assert _rand_eval(dR, syms, rng) < 1e-12


def test_textbook_rr_mass_matrix():
    q1, q2 = sp.symbols("q1 q2")
    c2 = sp.cos(q2)
    M11 = m1 * l1**2 / 3 + m2 * (l1**2 + l2**2 / 3 + l1 * l2 * c2)
    M12 = m2 * (l2**2 / 3 + l1 * l2 * c2 / 2)
    M22 = m2 * l2**2 / 3
    M = lg.mass_matrix(models.planar_rr(l1, l2, m1, m2), [q1, q2])
    assert sp.expand(M - sp.Matrix([[M11, M12], [M12, M22]])) == sp.zeros(2, 2)


def test_skew_symmetry_symbolic_rr():
    eom = lg.equations_of_motion(models.planar_rr(l1, l2, m1, m2))
    Md = sp.Matrix(2, 2, lambda i, j: sum(sp.diff(eom.M[i, j], qk) * uk
                                          for qk, uk in zip(eom.q, eom.qd)))
    N = Md - 2 * eom.C
    assert sp.simplify(N + N.T) == sp.zeros(2, 2)
    assert sp.simplify(eom.C - lg.coriolis_matrix(eom.M, list(eom.q), list(eom.qd))) == \
        sp.zeros(2, 2)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.equation("hb-5-14")
def test_numeric_properties_random_chains(seed):
    rng = np.random.default_rng(seed)
    chain = models.random_chain(12 if seed == 0 else 5, rng)
    q, qd = rng.normal(size=chain.n), rng.normal(size=chain.n)
    M = lg.mass_matrix(chain, q)
    assert np.allclose(M, M.T) and np.linalg.eigvalsh(M).min() > 0
    from robodyn import dynamics
    assert np.allclose(M, dynamics.crba(chain, q), atol=1e-10)
    gvec = np.array([0.3, -1.0, -9.81])
    assert np.allclose(lg.gravity_vector(chain, q, gvec),
                       dynamics.gravity_torques(chain, q, gravity=gvec), atol=1e-9)
    # G = dV/dq by central differences
    h = 1e-6
    Gfd = [(lg.potential_energy(chain, q + h * e, gvec) - lg.potential_energy(chain, q - h * e, gvec))
           / (2 * h) for e in np.eye(chain.n)]
    assert np.allclose(Gfd, lg.gravity_vector(chain, q, gvec), atol=1e-6)
    # M-dot - 2C skew (C from the delegation to robodyn.dynamics), M-dot by differences
    C = lg.coriolis_matrix(chain, q, qd)
    Md = (lg.mass_matrix(chain, q + h * qd) - lg.mass_matrix(chain, q - h * qd)) / (2 * h)
    N = Md - 2 * C
    assert np.abs(N + N.T).max() < 1e-6
    assert np.isclose(lg.kinetic_energy(chain, q, qd), qd @ M @ qd / 2)


def test_symbolic_random_chain_equals_numeric():
    """The exact engine on a spatial chain with prismatic and helical joints vs the numeric
    Jacobian sum and robodyn.dynamics (C, G)."""
    rng = np.random.default_rng(5)
    chain = models.random_chain(3, rng, prismatic=0.34, helical=0.33)
    eom = lg.equations_of_motion(chain, gravity=(0.1, 0.2, -9.81))
    num = eom.numeric()
    from robodyn import dynamics
    for _ in range(3):
        q, qd = rng.normal(size=3), rng.normal(size=3)
        assert np.allclose(num.M(q), lg.mass_matrix(chain, q), atol=1e-10)
        assert np.allclose(num.C(q, qd), dynamics.coriolis_matrix(chain, q, qd), atol=1e-10)
        assert np.allclose(num.G(q), lg.gravity_vector(chain, q, (0.1, 0.2, -9.81)), atol=1e-10)
        subs = dict(zip(eom.q, q)) | dict(zip(eom.qd, qd))
        assert np.allclose(np.array(eom.M.subs(subs), float), num.M(q), atol=1e-12)
        assert np.allclose(np.array(eom.C.subs(subs), float), num.C(q, qd), atol=1e-12)


@pytest.mark.equation("hb-5-13", "hb-5-14", "hb-5-16")
def test_christoffel_kinds_and_convention():
    chain = models.planar_rr(l1, l2, m1, m2)
    eom = lg.equations_of_motion(chain)
    q = list(eom.q)
    G1 = lg.christoffel_symbols(eom.M, q)
    G2 = lg.christoffel_symbols(eom.M, q, kind=2)
    assert G1.shape == (2, 2, 2)
    for i in range(2):
        for j in range(2):
            # C_ij = sum_k Gamma_ijk qd_k (5.14); symmetry in (j, k)
            assert sp.expand(sum(G1[i, j, k] * eom.qd[k] for k in range(2)) - eom.C[i, j]) == 0
            for k in range(2):
                assert sp.expand(G1[i, j, k] - G1[i, k, j]) == 0
                back = sum(eom.M[i, l] * G2[l, j, k] for l in range(2))
                assert sp.simplify(back - G1[i, j, k]) == 0
    # handbook: Gamma_{1,2,2} = -m2 l1 (l2/2) sin q2 for the RR arm
    assert sp.simplify(G1[0, 1, 1] + m2 * l1 * l2 / 2 * sp.sin(q[1])) == 0


@pytest.mark.equation("hb-5-10")
def test_euler_lagrange_pendulum_and_spring():
    th, thd, thdd, m, l, k = sp.symbols("theta thetad thetadd m l k")
    E = lg.euler_lagrange(m * l**2 * thd**2 / 2 + m * g * l * sp.cos(th), [th], [thd], [thdd])
    assert sp.expand(E[0] - (m * l**2 * thdd + m * g * l * sp.sin(th))) == 0
    x, xd, xdd = sp.symbols("x xd xdd")
    E = lg.euler_lagrange(m * xd**2 / 2 - k * x**2 / 2, [x], [xd], [xdd])
    assert sp.expand(E[0] - (m * xdd + k * x)) == 0
    Mm, rest = lg.euler_lagrange(m * xd**2 / 2 - k * x**2 / 2, [x], [xd], split=True)
    assert Mm == sp.Matrix([[m]]) and sp.expand(rest[0] - k * x) == 0


@pytest.mark.equation("hb-5-10", "hb-5-12", "hb-5-14")
def test_euler_lagrange_of_rr_energy_equals_eom():
    chain = models.planar_rr(l1, l2, m1, m2)
    q, qd, qdd = sp.symbols("q1:3"), sp.symbols("qd1:3"), sp.symbols("a1:3")
    T = lg.kinetic_energy(chain, q, qd)
    V = lg.potential_energy(chain, q, (0, -g, 0))
    Mm, rest = lg.euler_lagrange(T - V, q, qd, qdd, split=True)
    eom = lg.equations_of_motion(chain, (0, -g, 0), q, qd)
    assert sp.simplify(Mm - eom.M) == sp.zeros(2, 2)
    assert sp.simplify(rest - eom.C * eom.qd - eom.G) == sp.zeros(2, 1)
    assert sp.expand(eom.tau(qdd) - (Mm * sp.Matrix(qdd) + rest)) == sp.zeros(2, 1)


def test_numeric_twins_and_forward_dynamics():
    chain = models.planar_chain(4)
    eom = lg.equations_of_motion(chain, gravity=(0, -9.81, 0))
    num = eom.numeric()
    assert eom.numeric() is num                       # cached
    rng = np.random.default_rng(3)
    from robodyn import dynamics
    q, qd, tau = rng.normal(size=(3, 4))
    qdd = num.forward_dynamics(q, qd, tau)
    assert np.allclose(num.tau(q, qd, qdd), tau)
    assert np.allclose(qdd, dynamics.forward_dynamics(chain, q, qd, tau, gravity=(0, -9.81, 0)))
    assert np.allclose(num.tau(q, qd, qdd),
                       dynamics.inverse_dynamics(chain, q, qd, qdd, gravity=(0, -9.81, 0)))


@pytest.mark.equation("hb-5-14")
def test_against_pinocchio():
    ref = pytest.importorskip("reference")
    import pinocchio as pin
    chain = models.ur5_like()
    eom = lg.equations_of_motion(chain)
    num = eom.numeric()
    model = ref.to_pinocchio(chain, gravity=lg.DEFAULT_GRAVITY)
    data = model.createData()
    rng = np.random.default_rng(4)
    for _ in range(3):
        q, qd = rng.normal(size=6), rng.normal(size=6)
        Mp = pin.crba(model, data, q)
        Mp = np.triu(Mp) + np.triu(Mp, 1).T
        assert np.allclose(num.M(q), Mp, atol=1e-10)
        assert np.allclose(num.G(q), pin.computeGeneralizedGravity(model, data, q), atol=1e-10)
        bias = pin.rnea(model, data, q, qd, np.zeros(6))
        assert np.allclose(num.C(q, qd) @ qd + num.G(q), bias, atol=1e-10)
        # Pinocchio's C is also a Christoffel-consistent factorization: compare the matrix
        Cp = pin.computeCoriolisMatrix(model, data, q, qd)
        assert np.allclose(Cp @ qd, num.C(q, qd) @ qd, atol=1e-10)
        assert np.allclose(Cp, num.C(q, qd), atol=1e-9)


# --------------------------------------------------------------------------
# generalized forces (5.15)
# --------------------------------------------------------------------------

@pytest.mark.equation("hb-5-15")
def test_joint_torque_gives_delta():
    rng = np.random.default_rng(7)
    chain = models.random_chain(5, rng, prismatic=0.0)
    q = rng.normal(size=5)
    P = rd.link_poses(chain, q)
    Js = [rd.jacobian_space(chain, q, link=i) for i in range(5)]
    for i in range(5):
        tau = 1.7
        s = Js[i][:, i]                               # joint i's axis at q (space frame)
        # a pure couple tau about joint i's axis (the same about every point): (m, f) = (tau w, 0)
        sigma_space = np.concatenate([s[:3], np.zeros(3)])
        W = np.zeros((5, 6))
        W[i] = tau * sigma_space
        if i > 0:
            W[i - 1] = -tau * sigma_space
        Y = lg.generalized_forces(chain, q, W, frame="space")
        assert np.allclose(Y, tau * np.eye(5)[i], atol=1e-12)
        # the same wrenches written in the CoM frames give the same Y
        Wb = np.array([rd.transform_wrench(rd.inverse_homogeneous(P[l]), W[l]) for l in range(5)])
        assert np.allclose(lg.generalized_forces(chain, q, Wb), Y, atol=1e-12)


@pytest.mark.equation("hb-5-15")
def test_end_effector_wrench_and_power():
    rng = np.random.default_rng(8)
    chain = models.random_chain(4, rng)
    q, qd, We = rng.normal(size=(3, 4)), None, rng.normal(size=6)
    q, qd = rng.normal(size=4), rng.normal(size=4)
    # a wrench on the last link given at the end-effector frame -> its CoM frame
    P = rd.link_poses(chain, q)
    T = rd.fk_space(chain, q)
    H_c_e = rd.inverse_homogeneous(P[-1]) @ T
    W = np.zeros((4, 6))
    W[-1] = rd.transform_wrench(H_c_e, We)
    Y = lg.generalized_forces(chain, q, W)
    assert np.allclose(Y, rd.jacobian_body(chain, q).T @ We, atol=1e-12)
    # power: sum_l W_l^T V_l = Y^T qd
    Wall = rng.normal(size=(4, 6))
    power = sum(Wall[l] @ (rd.jacobian_body(chain, q, link=l) @ qd) for l in range(4))
    assert np.isclose(power, lg.generalized_forces(chain, q, Wall) @ qd)


@pytest.mark.equation("hb-5-15")
def test_generalized_forces_symbolic():
    q1, q2, f = sp.symbols("q1 q2 f")
    chain = models.planar_rr(l1, l2, m1, m2)
    W = sp.zeros(2, 6)
    W[1, 4] = f                                       # force f along link 1's CoM-frame y
    Y = lg.generalized_forces(chain, [q1, q2], W)
    assert sp.simplify(Y - sp.Matrix([f * (l1 * sp.cos(q2) + l2 / 2), f * l2 / 2])) == \
        sp.zeros(2, 1)


# --------------------------------------------------------------------------
# bad input
# --------------------------------------------------------------------------

def test_bad_input():
    kin_only = rd.SerialChain.from_screws(models.planar_rr().screws, models.planar_rr().home)
    with pytest.raises(ValueError, match="no link inertias"):
        lg.mass_matrix(kin_only, [0, 0])
    with pytest.raises(ValueError, match="no link inertias"):
        lg.equations_of_motion(kin_only)
    with pytest.raises(TypeError, match="expected a SerialChain"):
        lg.mass_matrix("arm", [0, 0])
    with pytest.raises(ValueError, match="expected a vector of length 2"):
        lg.mass_matrix(models.planar_rr(), [0, 0, 0])
    with pytest.raises(ValueError, match="finite"):
        lg.gravity_vector(models.planar_rr(), [np.nan, 0])
    with pytest.raises(ValueError, match="finite"):
        lg.kinetic_energy(models.planar_rr(), [0, 0], [np.inf, 0])
    with pytest.raises(ValueError, match="gravity"):
        lg.gravity_vector(models.planar_rr(), [0, 0], gravity=(0, 1))
    x, y, t = sp.symbols("x y t")
    xt = sp.Function("x")(t)
    with pytest.raises(TypeError, match="expected sympy Symbols"):
        lg.euler_lagrange(xt.diff(t) ** 2, [xt], [xt.diff(t)])
    with pytest.raises(TypeError, match="expected sympy Symbols"):
        lg.euler_lagrange(x**2, [1.0], [y])
    with pytest.raises(ValueError, match="as many velocities"):
        lg.euler_lagrange(x**2, [x], [y, t])
    with pytest.raises(TypeError, match="sympy expression"):
        lg.euler_lagrange("x**2", [x], [y])
    with pytest.raises(ValueError, match="square 2x2"):
        lg.christoffel_symbols(sp.Matrix([[1, x, 0], [x, 1, 0]]), [x, y])
    with pytest.raises(ValueError, match="symmetric"):
        lg.christoffel_symbols(sp.Matrix([[1, x], [0, 1]]), [x, y])
    with pytest.raises(TypeError, match="numeric array"):
        lg.christoffel_symbols(np.eye(2), [x, y])
    with pytest.raises(ValueError, match="kind"):
        lg.christoffel_symbols(sp.eye(2), [x, y], kind=3)
    with pytest.raises(ValueError, match="joint velocities"):
        lg.coriolis_matrix(sp.eye(2), [x, y], [x])
    with pytest.raises(ValueError, match="frame"):
        lg.generalized_forces(models.planar_rr(), [0, 0], np.zeros((2, 6)), frame="world")
    with pytest.raises(ValueError, match="2x6"):
        lg.generalized_forces(models.planar_rr(), [0, 0], np.zeros(6))
    with pytest.raises(ValueError, match="expected 2 symbols"):
        lg.equations_of_motion(models.planar_rr(), q=sp.symbols("a b c"))
    eom = lg.equations_of_motion(models.planar_rr(l1, l2, m1, m2))
    with pytest.raises(ValueError, match="no value"):
        eom.numeric({"l1": 1.0})
    with pytest.raises(ValueError, match="accelerations"):
        eom.tau([x])


def test_numeric_values_by_name_match_symbols_with_assumptions():
    import sympy as sp
    from robodyn import lagrange, models
    l1, l2, m1, m2 = sp.symbols("l1 l2 m1 m2", positive=True)
    eom = lagrange.equations_of_motion(models.planar_rr(l1, l2, m1, m2), gravity=(0, -9.81, 0))
    num = eom.numeric({"l1": 1.0, "l2": 1.0, "m1": 1.0, "m2": 1.0})
    ref = lagrange.equations_of_motion(models.planar_rr(1, 1, 1, 1), gravity=(0, -9.81, 0)).numeric()
    q = [0.3, -0.4]
    assert np.allclose(num.M(q), ref.M(q))


def test_irrational_constants_use_the_generic_domain():
    """A mass of sqrt(2) cannot be a Gaussian rational: the derivation restarts in sympy's
    generic domain and still gives M and G equal to the numeric algorithms."""
    eom = lg.equations_of_motion(models.planar_rr(1, 1, sp.sqrt(2), 1), gravity=(0, -9.81, 0))
    assert eom.M.has(sp.sqrt(2)) and eom.G.has(sp.sqrt(2))
    num, chain = eom.numeric(), models.planar_rr(1, 1, 2 ** 0.5, 1)
    for q in ([0.3, 0.5], [-1.0, 2.0]):
        np.testing.assert_allclose(num.M(q), rd.crba(chain, q), atol=1e-12)
        np.testing.assert_allclose(num.G(q), rd.gravity_torques(chain, q, (0, -9.81, 0)),
                                   atol=1e-12)


def test_compiled_cache_is_keyed_on_the_symbolic_input(tmp_path, monkeypatch):
    """A warm start (new process: nothing loaded, the module on disk) finds the module from
    M, C, G, q, qd alone, without generating the C source again."""
    from robodyn import codegen
    monkeypatch.setenv("ROBODYN_CACHE", str(tmp_path))
    eom = lg.equations_of_motion(models.planar_rr(), gravity=(0, -9.81, 0))
    q, qd = list(eom.q), list(eom.qd)
    monkeypatch.setattr(codegen, "_LOADED", {})
    first = codegen.compile_equations(eom.M, eom.C, eom.G, q, qd)
    monkeypatch.setattr(codegen, "_LOADED", {})                 # as in a new process

    def no_source(*args):
        raise AssertionError("the C source was generated again")
    monkeypatch.setattr(codegen, "_source", no_source)
    again = codegen.compile_equations(eom.M, eom.C, eom.G, q, qd)
    assert again.__name__ == first.__name__
    np.testing.assert_allclose(again.M([0.3, 0.4]), first.M([0.3, 0.4]))
    # other equations (a different float) do not share the key
    with pytest.raises(AssertionError, match="generated again"):
        codegen.compile_equations(eom.M * (1 + sp.Float(1e-16)), eom.C, eom.G, q, qd)
