"""Tests of robodyn.lagrange._derivation, the engine behind lagrange.equations_of_motion: its results
against sympy.physics.mechanics (KanesMethod, written by hand), against the numeric algorithms
of robodyn.dynamics on random spatial chains with prismatic and helical joints, a centre of
mass off the link frame, the choice of exact or float coefficients, and the canonical sympy
form of what it hands out."""
import numpy as np
import pytest
import sympy as sp
from sympy.physics import mechanics as me

from robodyn import dynamics
from robodyn.lagrange import _derivation
from robodyn import lagrange as lg
from robodyn import models
from robodyn.rigid_motion import SerialChain, hat, homogeneous, revolute_screw


def planar_symbolic(n):
    """The n-rod planar chain with symbolic lengths l_i and masses m_i (gravity -g y)."""
    L, m = sp.symbols(f"l1:{n + 1}"), sp.symbols(f"m1:{n + 1}")
    S, homes, inertias, x = [], [], [], 0
    for i in range(n):
        S.append(sp.Matrix(revolute_screw([0, 0, 1], [x, 0, 0])))
        homes.append(homogeneous(sp.eye(3), [x + L[i] / 2, 0, 0]))
        inertias.append(models.rod_inertia(m[i], L[i]))
        x = x + L[i]
    screws = np.array(sp.Matrix.hstack(*S).tolist(), dtype=object)
    return SerialChain.from_screws(screws, homogeneous(sp.eye(3), [x, 0, 0]), homes, inertias,
                                   name=f"planar {n} symbolic"), L, m


def kane_planar(n, L, m, g):
    """KanesMethod for the same chain (absolute angles as sums of joint angles)."""
    q, u = me.dynamicsymbols(f"q1:{n + 1}"), me.dynamicsymbols(f"u1:{n + 1}")
    N, O = me.ReferenceFrame("N"), me.Point("O")
    O.set_vel(N, 0)
    joint, bodies, loads = O, [], []
    for i in range(n):
        B = N.orientnew(f"B{i}", "Axis", [sum(q[:i + 1]), N.z])
        B.set_ang_vel(N, sum(u[:i + 1]) * N.z)
        c = joint.locatenew(f"C{i}", L[i] / 2 * B.x)
        c.v2pt_theory(joint, N, B)
        nxt = joint.locatenew(f"J{i}", L[i] * B.x)
        nxt.v2pt_theory(joint, N, B)
        inertia = me.inertia(B, 0, m[i] * L[i] ** 2 / 12, m[i] * L[i] ** 2 / 12)
        bodies.append(me.RigidBody(f"R{i}", c, B, m[i], (inertia, c)))
        loads.append((c, -m[i] * g * N.y))
        joint = nxt
    KM = me.KanesMethod(N, q_ind=q, u_ind=u, kd_eqs=[a.diff() - b for a, b in zip(q, u)])
    KM.kanes_equations(bodies, loads)
    qs, us = sp.symbols(f"q1:{n + 1}"), sp.symbols(f"qd1:{n + 1}")
    sub = dict(zip(u, us)) | dict(zip(q, qs))
    return KM.mass_matrix.xreplace(sub), KM.forcing.xreplace(sub)


def kane_equations(chain, gravity):
    """KanesMethod of a SerialChain: link frames oriented by Axis rotations about the joint
    axes (constant frames between), velocities by the one- and two-point theorems, the weight
    of each link at its centre of mass. Returns (mass_matrix, forcing) in plain Symbols q, qd."""
    from robodyn.lagrange._derivation import _ad_of, _constants, _inv_h, _negligible
    n = chain.n
    data, _ = _constants(chain)
    q, u = me.dynamicsymbols(f"q1:{n + 1}"), me.dynamicsymbols(f"u1:{n + 1}")
    N, O = me.ReferenceFrame("N"), me.Point("O")
    O.set_vel(N, 0)
    prev_frame, prev_origin, prev_home = N, O, sp.eye(4)
    g = sp.Matrix(gravity)
    bodies, loads = [], []
    for i in range(n):
        L = data["link_homes"][i]
        A = (_ad_of(_inv_h(L)) * data["screws"][:, i]).applyfunc(sp.expand)
        Crel = _inv_h(prev_home) * L
        F = prev_frame.orientnew(f"F{i}", "DCM", Crel[:3, :3])   # columns: F axes
        OF = prev_origin.locatenew(f"OF{i}", sum((Crel[r, 3] * [prev_frame.x, prev_frame.y,
                                                                prev_frame.z][r]
                                                  for r in range(3)), me.Vector(0)))
        OF.v2pt_theory(prev_origin, N, prev_frame)
        w, v = A[:3, 0], A[3:, 0]
        fx = [F.x, F.y, F.z]
        if any(not _negligible(x) for x in w):
            axis = sum((w[r] * fx[r] for r in range(3)), me.Vector(0))
            p = w.cross(v)                               # a point of the axis (|w| = 1)
            pitch = (w.T * v)[0]
            B = F.orientnew(f"B{i}", "Axis", [q[i], axis])
            B.set_ang_vel(F, u[i] * axis)
            J = OF.locatenew(f"J{i}", sum((p[r] * fx[r] for r in range(3)), me.Vector(0)))
            J.v2pt_theory(OF, N, F)
            K = J.locatenew(f"K{i}", pitch * q[i] * axis) if not _negligible(pitch) else J
            if K is not J:
                K.set_vel(F, pitch * u[i] * axis)
                K.v1pt_theory(J, N, F)
            bx = [B.x, B.y, B.z]
            origin = K.locatenew(f"O{i}", -sum((p[r] * bx[r] for r in range(3)), me.Vector(0)))
            origin.v2pt_theory(K, N, B)
        else:
            B = F
            slide = sum((v[r] * fx[r] for r in range(3)), me.Vector(0))
            origin = OF.locatenew(f"O{i}", q[i] * slide)
            origin.set_vel(F, u[i] * slide)
            origin.v1pt_theory(OF, N, F)
        G = data["link_inertias"][i]
        m = G[3, 3]
        hx = G[:3, 3:] / m
        c = [hx[2, 1], hx[0, 2], hx[1, 0]]
        bx = [B.x, B.y, B.z]
        com = origin.locatenew(f"C{i}", sum((c[r] * bx[r] for r in range(3)), me.Vector(0)))
        com.v2pt_theory(origin, N, B)
        Cx = sp.Matrix([[0, -c[2], c[1]], [c[2], 0, -c[0]], [-c[1], c[0], 0]])
        Ic = (G[:3, :3] - m * Cx.T * Cx).applyfunc(sp.expand)
        dyad = me.inertia(B, Ic[0, 0], Ic[1, 1], Ic[2, 2], Ic[0, 1], Ic[1, 2], Ic[0, 2])
        bodies.append(me.RigidBody(f"R{i}", com, B, m, (dyad, com)))
        loads.append((com, m * (g[0] * N.x + g[1] * N.y + g[2] * N.z)))
        prev_frame, prev_origin, prev_home = B, origin, L
    KM = me.KanesMethod(N, q_ind=q, u_ind=u, kd_eqs=[a.diff() - b for a, b in zip(q, u)])
    KM.kanes_equations(bodies, loads)
    qs, us = sp.symbols(f"q1:{n + 1}"), sp.symbols(f"qd1:{n + 1}")
    sub = dict(zip(u, us)) | dict(zip(q, qs))
    return KM.mass_matrix.xreplace(sub), KM.forcing.xreplace(sub)


def _max_at_random_points(X, syms, rng, k=3):
    f = sp.lambdify(syms, X, "numpy")
    return max(np.abs(np.array(f(*rng.uniform(0.3, 1.7, len(syms))), float)).max()
               for _ in range(k))


@pytest.mark.equation("hb-5-14")
def test_symbolic_planar_chain_equals_kanes_method():
    n, g = 4, sp.Symbol("g", positive=True)
    chain, L, m = planar_symbolic(n)
    eom = lg.equations_of_motion(chain, gravity=(0, -g, 0))
    Mk, fk = kane_planar(n, L, m, g)
    syms = list(eom.q) + list(eom.qd) + list(L) + list(m) + [g]
    rng = np.random.default_rng(0)
    assert _max_at_random_points(eom.M - Mk, syms, rng) < 1e-12
    assert _max_at_random_points(eom.forcing - fk, syms, rng) < 1e-12
    # exact: the two-link part simplifies to zero
    assert sp.simplify(sp.expand_trig(eom.M[2, 3] - Mk[2, 3])) == 0


@pytest.mark.equation("hb-5-14")
def test_spatial_chain_with_prismatic_and_helical_joints_equals_kanes_method():
    """A random R/P/H chain: M and forcing equal KanesMethod's at random states (both forms)."""
    chain = models.random_chain(3, np.random.default_rng(11), prismatic=0.3, helical=0.4)
    assert len(set(chain.joint_types)) > 1
    gvec = (0.5, 0.0, -9.81)
    Mk, fk = kane_equations(chain, gvec)
    rng = np.random.default_rng(2)
    for form in ("expanded", "nested"):
        eom = lg.equations_of_motion(chain, gravity=gvec, form=form)
        for _ in range(2):
            env = dict(zip(eom.q, rng.normal(size=3))) | dict(zip(eom.qd, rng.normal(size=3)))
            for w, e in eom.intermediates:
                env[w] = e.xreplace(env)
            assert np.abs(np.array((eom.M - Mk).xreplace(env), float)).max() < 1e-12
            assert np.abs(np.array((eom.forcing - fk).xreplace(env), float)).max() < 1e-11


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.equation("hb-5-13", "hb-5-14")
def test_random_spatial_chains_equal_the_numeric_algorithms(seed):
    """Revolute, prismatic and helical joints: M, C (Christoffel, 5.13) and G of the derivation,
    evaluated at random states, equal CRBA, the numeric Coriolis matrix and RNEA gravity."""
    rng = np.random.default_rng(seed)
    chain = models.random_chain(4, rng, prismatic=0.3, helical=0.3)
    gvec = (0.3, -1.0, -9.81)
    eom = lg.equations_of_motion(chain, gravity=gvec)
    f = sp.lambdify(list(eom.q) + list(eom.qd), [eom.M, eom.C, eom.G], "numpy")
    for _ in range(3):
        q, qd = rng.normal(size=4), rng.normal(size=4)
        M, C, G = (np.array(x, float) for x in f(*q, *qd))
        np.testing.assert_allclose(M, dynamics.crba(chain, q), atol=1e-12)
        np.testing.assert_allclose(C, dynamics.coriolis_matrix(chain, q, qd), atol=1e-11)
        np.testing.assert_allclose(G.ravel(), dynamics.gravity_torques(chain, q, gvec), atol=1e-11)


def offset_pendulum(c=(0.5, 0.0, 0.0), m=1.0):
    """One revolute joint about z, a link of mass m whose centre of mass is c off its frame."""
    c = np.asarray(c, float)
    Ic = np.diag([0.01, 0.02, 0.02])
    G = np.block([[Ic + m * hat(c).T @ hat(c), m * hat(c)], [m * hat(c).T, m * np.eye(3)]])
    S = np.array(revolute_screw([0, 0, 1], [0, 0, 0]), float).reshape(6, 1)
    return SerialChain.from_screws(S, np.eye(4), [np.eye(4)], [G], name="offset pendulum")


def test_centre_of_mass_off_the_link_frame():
    """Issue #8: G = m g 0.5 cos q (4.905 N m at q = 0), not 0; V and M count the offset."""
    chain, gvec = offset_pendulum(), (0, -9.81, 0)
    eom = lg.equations_of_motion(chain, gravity=gvec)
    q1 = eom.q[0]
    assert sp.simplify(eom.G[0] - sp.Rational(981, 200) * sp.cos(q1)) == 0
    assert eom.M[0, 0] == sp.Rational(27, 100)                     # 0.02 + 1 * 0.5^2
    assert np.isclose(lg.gravity_vector(chain, [0.0], gvec)[0], 4.905)
    assert np.isclose(dynamics.gravity_torques(chain, [0.0], gvec)[0], 4.905)
    for q in (0.3, -1.2):
        assert np.isclose(lg.potential_energy(chain, [q], gvec), 4.905 * np.sin(q))
        assert np.isclose(float(lg.potential_energy(chain, [q1], gvec).subs(q1, q)),
                          4.905 * np.sin(q))


def test_offsets_on_a_random_chain():
    """Every link inertia moved off its frame (the same body, re-expressed about a point 0.2 m
    away): symbolic and numeric M, G equal CRBA and RNEA."""
    rng = np.random.default_rng(3)
    base = models.random_chain(3, rng)
    inertias = []
    for G in base.link_inertias:
        T = homogeneous(np.eye(3), rng.normal(scale=0.2, size=3))      # frame moved by -p
        from robodyn.rigid_motion import adjoint
        X = adjoint(T)
        inertias.append(X.T @ np.asarray(G, float) @ X)
    chain = SerialChain.from_screws(base.screws, base.home, base.link_homes, inertias)
    gvec = (0.0, 0.0, -9.81)
    eom = lg.equations_of_motion(chain, gravity=gvec)
    f = sp.lambdify(list(eom.q), [eom.M, eom.G], "numpy")
    for _ in range(3):
        q = rng.normal(size=3)
        M, G = (np.array(x, float) for x in f(*q))
        np.testing.assert_allclose(M, dynamics.crba(chain, q), atol=1e-12)
        np.testing.assert_allclose(G.ravel(), dynamics.gravity_torques(chain, q, gvec), atol=1e-11)
        np.testing.assert_allclose(lg.gravity_vector(chain, q, gvec),
                                   dynamics.gravity_torques(chain, q, gvec), atol=1e-11)
        np.testing.assert_allclose(lg.mass_matrix(chain, q), dynamics.crba(chain, q), atol=1e-12)


def test_symbolic_gravity_with_numeric_chain():
    """A symbol in gravity (0, -g, 0) on a numeric chain: no internal exception leaks."""
    g = sp.Symbol("g")
    eom = lg.equations_of_motion(models.planar_rr(), gravity=(0, -g, 0))
    q1, q2 = eom.q
    assert sp.expand(eom.G[1] - g * sp.cos(q1 + q2) / 2) == 0
    assert sp.expand(lg.potential_energy(models.planar_rr(), [q1, q2], (0, -g, 0))
                     - g * (3 * sp.sin(q1) / 2 + sp.sin(q1 + q2) / 2)) == 0


def test_exact_or_float_coefficients():
    """Short decimals and small fractions stay exact (the chapters' arms print as a person
    writes them); random float data is computed in floats."""
    rr = _derivation.derivation(models.planar_rr())
    assert rr.ring.exact
    M = rr.mass_matrix(sp.symbols("q1 q2"))
    assert M[0, 0] == sp.cos(sp.Symbol("q2")) + sp.Rational(5, 3)
    assert _derivation.derivation(models.spatial_rrr()).ring.exact        # 3997/19200 ...
    assert not _derivation.derivation(models.random_chain(2, np.random.default_rng(0))).ring.exact


def test_results_are_canonical_sympy():
    """What the engine builds without sympy's flattening equals what sympy builds itself."""
    for chain in (models.planar_rr(*sp.symbols("l1 l2 m1 m2")), models.spatial_rrr(),
                  models.random_chain(3, np.random.default_rng(1), helical=0.3)):
        eom = lg.equations_of_motion(chain)
        for e in list(eom.M) + list(eom.G):
            rebuilt = sp.Add(*[sp.Mul(*t.args) if t.is_Mul else t
                               for t in (e.args if e.is_Add else [e])])
            assert e == rebuilt and hash(e) == hash(rebuilt)
            assert sp.srepr(e) == sp.srepr(rebuilt)


def test_op_count():
    x = sp.Symbol("x")
    assert _derivation.op_count(sp.Matrix([x + 1, 2 * x])) == 2
    assert _derivation.op_count(sp.cos(x) + x) == 2


def test_parameter_power_limit():
    with pytest.raises(ValueError, match="limit 255"):
        _derivation._Converter([sp.Symbol("a") ** 300]).terms(sp.Symbol("a") ** 300, 0, True)


# --------------------------------------------------------------------------
# the nested form
# --------------------------------------------------------------------------

def _evaluate(eom, q, qd):
    """M, C, G of an EquationsOfMotion (nested or not) at numbers, intermediates in order."""
    env = dict(zip(eom.q, q)) | dict(zip(eom.qd, qd))
    for w, e in eom.intermediates:
        env[w] = float(e.xreplace(env))
    return [np.array(X.xreplace(env), float) for X in (eom.M, eom.C, eom.G)]


@pytest.mark.parametrize("seed", [0, 1])
def test_nested_equals_expanded_and_numeric(seed):
    rng = np.random.default_rng(seed)
    chain = models.random_chain(4, rng, prismatic=0.3, helical=0.2)
    gvec = (0.2, 0.0, -9.81)
    nested = lg.equations_of_motion(chain, gravity=gvec, form="nested")
    expanded = lg.equations_of_motion(chain, gravity=gvec, form="expanded")
    assert nested.intermediates and not expanded.intermediates
    for _ in range(3):
        q, qd = rng.normal(size=4), rng.normal(size=4)
        a, b = _evaluate(nested, q, qd), _evaluate(expanded, q, qd)
        for x, y in zip(a, b):
            np.testing.assert_allclose(x, y, atol=1e-12)
        np.testing.assert_allclose(a[0], dynamics.crba(chain, q), atol=1e-12)
        np.testing.assert_allclose(a[1], dynamics.coriolis_matrix(chain, q, qd), atol=1e-12)


def test_nested_symbolic_parameters_simplify_to_the_expanded_form():
    chain = models.planar_rr(*sp.symbols("l1 l2 m1 m2"))
    g = sp.Symbol("g")
    nested = lg.equations_of_motion(chain, gravity=(0, -g, 0), form="nested")
    expanded = lg.equations_of_motion(chain, gravity=(0, -g, 0))
    full = nested.explicit()
    assert not full.intermediates
    for X, Y in ((full.M, expanded.M), (full.C, expanded.C), (full.G, expanded.G)):
        assert sp.simplify(sp.expand(X - Y)) == sp.zeros(*X.shape)
    assert [str(s) for s in nested.parameters()] == ["g", "l1", "l2", "m1", "m2"]


def test_nested_numeric_twins():
    """C code written from the intermediates, and lambdify with them as the common
    subexpressions, equal the numeric algorithms; values substitute into the definitions."""
    rng = np.random.default_rng(4)
    chain = models.random_chain(3, rng)
    eom = lg.equations_of_motion(chain, form="nested")
    q, qd, tau = rng.normal(size=(3, 3))
    for backend in ("c", "lambdify"):
        num = eom.numeric(backend=backend)
        np.testing.assert_allclose(num.M(q), dynamics.crba(chain, q), atol=1e-12)
        np.testing.assert_allclose(num.C(q, qd), dynamics.coriolis_matrix(chain, q, qd),
                                   atol=1e-12)
        np.testing.assert_allclose(num.G(q), dynamics.gravity_torques(chain, q), atol=1e-11)
        np.testing.assert_allclose(num.tau(q, qd, tau),
                                   dynamics.inverse_dynamics(chain, q, qd, tau), atol=1e-10)
    sym = lg.equations_of_motion(models.planar_rr(*sp.symbols("l1 l2 m1 m2")), form="nested")
    with pytest.raises(ValueError, match="no value"):
        sym.numeric({"l1": 1.0})
    num = sym.numeric({"l1": 1.0, "l2": 1.0, "m1": 1.0, "m2": 1.0})
    np.testing.assert_allclose(num.M([0.3, 0.4]), dynamics.crba(models.planar_rr(), [0.3, 0.4]),
                               atol=1e-12)


def test_auto_form_chooses_by_size():
    assert not lg.equations_of_motion(models.ur5_like()).intermediates           # the book's arm
    assert not lg.equations_of_motion(models.planar_chain(6)).intermediates
    big = models.random_chain(7, np.random.default_rng(2))     # PRRRRRR: ~400 000 terms expanded
    eom = lg.equations_of_motion(big)
    assert eom.intermediates
    assert max(_derivation.op_count(x) for x in eom.M) < 500          # no entry explodes
    with pytest.raises(ValueError, match="form: expected 'auto', 'expanded' or 'nested'"):
        lg.equations_of_motion(models.planar_rr(), form="tree")


def test_intermediate_names_avoid_the_chains_symbols():
    w1 = sp.Symbol("w1")
    chain = models.planar_rr(w1, 1, 1, 1)
    eom = lg.equations_of_motion(chain, form="nested")
    assert all(str(w).startswith("_w") for w, _ in eom.intermediates)
    assert w1 in set(eom.parameters())


def _rebuilt(e):
    """e rebuilt by sympy's own Add and Mul from its terms and factors."""
    return sp.Add(*[sp.Mul(*sp.Mul.make_args(t)) for t in sp.Add.make_args(e)])


@pytest.mark.parametrize("make", [
    lambda: models.planar_chain(4, sp.Symbol("l"), sp.Symbol("m")),
    lambda: models.planar_rp(*sp.symbols("l1 l2 m1 m2")),
    lambda: models.ur5_like(),
    lambda: models.random_chain(3, np.random.default_rng(4), prismatic=0.3, helical=0.3),
])
def test_terms_are_assembled_exactly_as_sympy_assembles_them(make):
    """to_sympy orders products and sums by precomputed ranks instead of sympy's flattening:
    the result must be the very same tree (args in the same order), not just an equal value,
    or equality and hashing against sympy-built expressions would break."""
    from robodyn import kane
    chain = make()
    k = kane.equations_of_motion(chain, gravity=(0, sp.Symbol("g"), -9.81))
    n = chain.n
    exprs = list(k.M) + list(k.f) + list(k.active_forces) + list(
        lg.mass_matrix(chain, sp.symbols(f"q1:{n + 1}")))
    for e in exprs:
        r = _rebuilt(e)
        assert e.args == r.args and e == r and hash(e) == hash(r)


@pytest.mark.parametrize("make", [
    lambda: models.planar_rr(*sp.symbols("l1 l2 m1 m2")),
    lambda: models.planar_rp(0.7, 0.4, 1.5, 0.25),
    lambda: models.ur5_like(),
    lambda: models.random_chain(4, np.random.default_rng(8), prismatic=0.3, helical=0.3),
])
def test_both_routes_to_the_constants_agree(make, monkeypatch):
    """The fast route computes the chain's constants in the ring; the general one with sympy
    matrices (it takes irrational numbers too). Both give the same derivation."""
    fast = _derivation.Derivation(make(), speeds=True)
    monkeypatch.setattr(_derivation, "_ring_constants", lambda *a: None)
    slow = _derivation.Derivation(make(), speeds=True)
    assert fast.ring.trig == slow.ring.trig and fast.ring.lin == slow.ring.lin
    n = fast.ring.n
    q = sp.symbols(f"q1:{n + 1}")
    tol = 0 if fast.ring.exact else 1e-12

    def small(d):                      # exactly zero, or round-off in every coefficient
        d = sp.expand(d)
        return d == 0 if not tol else all(abs(t.as_coeff_Mul()[0]) <= tol
                                          for t in sp.Add.make_args(d))

    assert all(small(e) for e in fast.mass_matrix(q) - slow.mass_matrix(q))
    assert all(small(fast.ring.to_sympy(a, q) - slow.ring.to_sympy(b, q))
               for a, b in zip(fast.P, slow.P))


def test_irrational_constants_take_the_general_route():
    chain = models.planar_rr(1, 1, sp.sqrt(2), 1)
    assert _derivation._ring_constants(chain, [], None) is None
    M = _derivation.derivation(chain).mass_matrix(sp.symbols("q1 q2"))
    assert M[1, 1] == sp.Rational(1, 3)


def test_sines_whose_argument_sympy_negates_are_assembled_canonically():
    """sympy writes sin(q1 - q2 - q3) as -sin(-q1 + q2 + q3): the engine must put that sign in
    the coefficient, not nest a product inside a product."""
    q1, q2, q3, q4, a = sp.symbols("q1:5 a")
    exprs = [sp.sin(q1 - q2 - q3) * a + sp.cos(q1) * sp.sin(q2 + q3) * sp.cos(q4),
             sp.sin(q1) * sp.cos(q2) * sp.cos(q3), sp.cos(2 * q1 - q2 - q3 - 2 * q4) ** 2]
    out = _derivation.canonical(exprs, [q1, q2, q3, q4])
    for e, x in zip(exprs, out):
        r = _rebuilt(x)
        assert x.args == r.args and x == r
        f = sp.lambdify([q1, q2, q3, q4, a], x - e)
        assert abs(f(0.3, -1.1, 0.7, 2.0, 1.3)) < 1e-13
