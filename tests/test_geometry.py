"""Tests of robodyn.lagrange: the kinetic-energy metric, its Levi-Civita connection and geodesics.

Independent routes: the hand-derived mass matrix and Christoffel symbols of the planar RR arm,
the numeric algorithms of robodyn.dynamics (crba, forward_dynamics, coriolis_matrix,
mechanical_energy), finite differences taken here in the test (never in the library), and the
symbolic derivation of robodyn.lagrange.
"""
import numpy as np
import pytest
import sympy as sp

import robodyn as rd
from robodyn import dynamics, lagrange, models

RNG = np.random.default_rng(20261201)
ZERO_G = np.zeros(3)


def hand_rr_metric(q, l1=1.0, l2=1.0, m1=1.0, m2=1.0):
    """M(q) of the planar RR arm of uniform rods, written out by hand (textbook 2-link arm)."""
    c2 = np.cos(q[1])
    M11 = m1 * l1**2 / 3 + m2 * (l1**2 + l2**2 / 3 + l1 * l2 * c2)
    M12 = m2 * (l2**2 / 3 + l1 * l2 * c2 / 2)
    M22 = m2 * l2**2 / 3
    return np.array([[M11, M12], [M12, M22]])


def hand_rr_christoffel(q2, l1, l2, m1, m2, sin=sp.sin, cos=sp.cos):
    """Gamma^i_jk of the planar RR arm by hand: with h = m2 l1 l2 / 2 the only nonzero first-kind
    symbols are Gamma_112 = Gamma_121 = Gamma_122 = -h s2 and Gamma_211 = h s2."""
    h = m2 * l1 * l2 / 2
    M11 = m1 * l1**2 / 3 + m2 * (l1**2 + l2**2 / 3 + l1 * l2 * cos(q2))
    M12 = m2 * (l2**2 / 3 + l1 * l2 * cos(q2) / 2)
    M22 = m2 * l2**2 / 3
    D = M11 * M22 - M12**2
    s = h * sin(q2)
    G = [[[-M12 * s / D, -M22 * s / D], [-M22 * s / D, -M22 * s / D]],
         [[M11 * s / D, M12 * s / D], [M12 * s / D, M12 * s / D]]]
    return G


def chains():
    return [models.planar_rr(1.0, 0.8, 2.0, 1.5), models.planar_rp(), models.spatial_rrr(),
            models.ur5_like(), models.random_chain(5, np.random.default_rng(3), prismatic=0.3,
                                                    helical=0.2)]


def fd_metric_derivative(chain, q, h=1e-6):
    """dM[i, j, k] = dM_ij/dq_k by central differences of dynamics.crba (test-only route)."""
    cols = [(dynamics.crba(chain, q + h * e) - dynamics.crba(chain, q - h * e)) / (2 * h)
            for e in np.eye(chain.n)]
    return np.stack(cols, axis=2)


# ---------------------------------------------------------------- the metric

def test_metric_equals_hand_formula_for_planar_rr():
    for q in RNG.uniform(-np.pi, np.pi, size=(5, 2)):
        M = lagrange.kinetic_energy_metric(models.planar_rr(1.0, 0.7, 2.0, 0.5), q)
        assert np.allclose(M, hand_rr_metric(q, 1.0, 0.7, 2.0, 0.5), atol=1e-13)


@pytest.mark.parametrize("chain", chains(), ids=lambda c: c.name)
def test_metric_symmetric_positive_definite_and_equal_to_crba(chain):
    for q in RNG.normal(size=(3, chain.n)):
        M = lagrange.kinetic_energy_metric(chain, q)
        assert np.allclose(M, M.T, atol=0)
        assert np.linalg.eigvalsh(M).min() > 0
        assert np.allclose(M, dynamics.crba(chain, q), atol=1e-12)


@pytest.mark.equation("hb-5-11")
def test_inner_product_is_twice_kinetic_energy():
    chain = models.spatial_rrr()
    q, v1, v2 = RNG.normal(size=(3, 3))
    T = dynamics.mechanical_energy(chain, q, v1, gravity=ZERO_G)
    assert np.isclose(lagrange.metric_inner_product(chain, q, v1, v1), 2 * T, rtol=1e-12)
    assert np.isclose(lagrange.metric_inner_product(chain, q, v1, v2),
                      lagrange.metric_inner_product(chain, q, v2, v1), rtol=1e-12)


# ---------------------------------------------------------------- the connection

@pytest.mark.parametrize("chain", chains(), ids=lambda c: c.name)
@pytest.mark.equation("hb-5-16")
def test_levi_civita_torsion_free_and_metric_compatible(chain):
    for q in RNG.normal(size=(2, chain.n)):
        G = lagrange.levi_civita(chain, q)
        assert G.shape == (chain.n,) * 3
        assert np.allclose(G, G.transpose(0, 2, 1), atol=1e-12)           # torsion free
        M = dynamics.crba(chain, q)
        dM = fd_metric_derivative(chain, q)
        # dM_ij/dq_k = sum_l (M_lj Gamma^l_ik + M_il Gamma^l_jk)
        rhs = np.einsum("lj,lik->ijk", M, G) + np.einsum("il,ljk->ijk", M, G)
        assert np.allclose(dM, rhs, atol=1e-7 * max(1.0, np.abs(dM).max()))
        assert np.abs(dM).max() > 1e-3 or chain.name == "planar RP"      # not vacuous


@pytest.mark.equation("hb-5-16")
def test_numeric_levi_civita_equals_hand_derived_planar_rr():
    p = dict(l1=1.2, l2=0.7, m1=2.0, m2=0.9)
    chain = models.planar_rr(**p)
    for q in RNG.uniform(-3, 3, size=(4, 2)):
        hand = np.array(hand_rr_christoffel(q[1], sin=np.sin, cos=np.cos, **p), dtype=float)
        assert np.allclose(lagrange.levi_civita(chain, q), hand, atol=1e-12)


@pytest.mark.equation("hb-5-16")
def test_symbolic_levi_civita_planar_rr_equals_hand_derivation():
    l1, l2, m1, m2 = sp.symbols("l1 l2 m1 m2", positive=True)
    q1, q2 = sp.symbols("q1 q2", real=True)
    G = lagrange.levi_civita(models.planar_rr(l1, l2, m1, m2), [q1, q2])
    hand = hand_rr_christoffel(q2, l1, l2, m1, m2)
    assert G.shape == (2, 2, 2)
    for i in range(2):
        for j in range(2):
            for k in range(2):
                assert sp.simplify(G[i, j, k] - hand[i][j][k]) == 0, (i, j, k)
    # Gamma^1_22 is the familiar -h s2 M22 / det M, nonzero: the test can fail
    assert sp.simplify(G[0, 1, 1]) != 0


def test_levi_civita_of_a_metric_matrix_and_numeric_equals_symbolic_route():
    q1, q2 = sp.symbols("q1 q2", real=True)
    M = sp.Matrix(lagrange.kinetic_energy_metric(models.planar_rr(sp.Rational(6, 5), sp.Rational(7, 10),
                                                             2, sp.Rational(9, 10)), [q1, q2]))
    G = lagrange.levi_civita(M, [q1, q2])
    f = sp.lambdify((q1, q2), sp.Array(G), "numpy")
    chain = models.planar_rr(1.2, 0.7, 2.0, 0.9)
    for q in RNG.uniform(-3, 3, size=(3, 2)):
        assert np.allclose(np.array(f(*q), dtype=float), lagrange.levi_civita(chain, q), atol=1e-12)
    # a symbolic chain at numeric q: the symbolic route evaluated there
    Gs = lagrange.levi_civita(models.planar_rr(sp.Rational(6, 5), sp.Rational(7, 10), 2,
                                          sp.Rational(9, 10)), [0.4, 1.1])
    assert np.allclose(np.array(Gs.tolist(), dtype=float), lagrange.levi_civita(chain, [0.4, 1.1]),
                       atol=1e-12)


@pytest.mark.parametrize("chain", chains(), ids=lambda c: c.name)
@pytest.mark.equation("hb-5-17")
def test_geodesic_acceleration_is_force_free_forward_dynamics(chain):
    for q, qd in RNG.normal(size=(3, 2, chain.n)):
        a = lagrange.geodesic_acceleration(chain, q, qd)
        fd = dynamics.forward_dynamics(chain, q, qd, np.zeros(chain.n), gravity=ZERO_G)
        assert np.allclose(a, fd, atol=1e-10 * max(1, np.abs(fd).max()))
        M, C = dynamics.crba(chain, q), dynamics.coriolis_matrix(chain, q, qd)
        assert np.allclose(a, -np.linalg.solve(M, C @ qd), atol=1e-10 * max(1, np.abs(a).max()))
        assert np.abs(a).max() > 1e-6                                    # not vacuous
        assert np.allclose(lagrange.covariant_acceleration(chain, q, qd, a), 0, atol=1e-9)


@pytest.mark.equation("hb-5-17")
def test_covariant_acceleration_is_raised_force_eq_5_17():
    chain = models.spatial_rrr()
    g = np.array([0.0, 0.0, -9.81])
    for q, qd, tau in RNG.normal(size=(3, 3, 3)):
        qdd = dynamics.forward_dynamics(chain, q, qd, tau, gravity=g)
        lhs = lagrange.covariant_acceleration(chain, q, qd, qdd)
        rhs = lagrange.gradient(chain, q, tau) - lagrange.potential_gradient(chain, q, gravity=g)
        assert np.allclose(lhs, rhs, atol=1e-10)


def test_potential_gradient_is_metric_gradient_of_potential_energy():
    chain, g, h = models.spatial_rrr(), np.array([0.0, 0.0, -9.81]), 1e-6
    q = RNG.normal(size=3)
    V = lambda x: dynamics.mechanical_energy(chain, x, np.zeros(3), gravity=g)  # noqa: E731
    dV = np.array([(V(q + h * e) - V(q - h * e)) / (2 * h) for e in np.eye(3)])
    grad = lagrange.potential_gradient(chain, q, gravity=g)
    assert np.allclose(dynamics.crba(chain, q) @ grad, dV, atol=1e-6)
    assert np.abs(grad).max() > 1e-2
    assert np.allclose(lagrange.potential_gradient(chain, q), grad)          # default gravity -z


def test_symbolic_geodesic_acceleration_and_gradient_planar_rr():
    q1, q2, u1, u2 = sp.symbols("q1 q2 u1 u2", real=True)
    chain = models.planar_rr()
    a = lagrange.geodesic_acceleration(chain, [q1, q2], [u1, u2])
    vals = {q1: 0.3, q2: 1.1, u1: 0.7, u2: -0.4}
    num = lagrange.geodesic_acceleration(chain, [0.3, 1.1], [0.7, -0.4])
    assert np.allclose(np.array(a.subs(vals), dtype=float).ravel(), num, atol=1e-12)
    gr = lagrange.gradient(chain, [q1, q2], [1, 0])
    assert np.allclose(np.array(gr.subs(vals), dtype=float).ravel(),
                       np.linalg.solve(hand_rr_metric([0.3, 1.1]), [1, 0]), atol=1e-12)
    g = [0.0, -9.81, 0.0]
    pg = lagrange.potential_gradient(chain, [q1, q2], gravity=g)
    assert np.allclose(np.array(pg.subs(vals), dtype=float).ravel(),
                       lagrange.potential_gradient(chain, [0.3, 1.1], gravity=g), atol=1e-10)


# ---------------------------------------------------------------- geodesics

Q_START, Q_END = np.array([0.0, 0.5]), np.array([1.0, 1.5])


@pytest.fixture(scope="module")
def rr_geodesic():
    return lagrange.geodesic(models.planar_rr(), Q_START, Q_END, duration=1.0, n_points=201)


def test_geodesic_reaches_end_at_constant_speed(rr_geodesic):
    g = rr_geodesic
    assert np.allclose(g.q[0], Q_START, atol=0) and g.residual < 1e-8
    assert np.abs(g.q[-1] - Q_END).max() < 1e-8
    T = g.kinetic_energy
    assert np.ptp(T) < 1e-8 * T.mean()                                  # constant speed
    assert np.isclose(g.energy, T.mean() * 1.0, rtol=1e-10)
    # independent: the same T from dynamics.mechanical_energy, and the ODE by forward dynamics
    Td = [dynamics.mechanical_energy(models.planar_rr(), q, qd, gravity=ZERO_G)
          for q, qd in zip(g.q[::50], g.qd[::50])]
    assert np.allclose(Td, T[::50], rtol=1e-12)


def test_geodesic_energy_lower_than_straight_line_and_perturbations(rr_geodesic):
    chain, g = models.planar_rr(), rr_geodesic
    line = lagrange.straight_line(Q_START, Q_END, g.t)
    E_line = lagrange.energy_integral(chain, line)
    assert np.abs(g.q - line.q).max() > 1e-2                            # they differ
    assert g.energy < E_line - 1e-3
    others = [lagrange.perturbed_path(g, a, k) for k in (1, 2, 3)
              for a in ([0.05, 0.0], [0.0, -0.05], [0.03, 0.03])]
    assert len(others) >= 5
    for p in others:
        assert np.allclose(p.q[[0, -1]], g.q[[0, -1]], atol=1e-14)      # same end points
        assert lagrange.energy_integral(chain, p) > g.energy + 1e-6


def test_shooting_and_collocation_agree(rr_geodesic):
    c = lagrange.geodesic(models.planar_rr(), Q_START, Q_END, n_points=201, method="collocation")
    assert c.residual < 1e-8
    assert np.abs(c.q - rr_geodesic.q).max() < 1e-6
    assert np.abs(c.qd0 - rr_geodesic.qd0).max() < 1e-5
    assert np.isclose(c.energy, rr_geodesic.energy, rtol=1e-7)


def test_geodesic_duration_reparametrizes(rr_geodesic):
    g2 = lagrange.geodesic(models.planar_rr(), Q_START, Q_END, duration=2.0, n_points=201)
    assert np.abs(g2.q - rr_geodesic.q).max() < 1e-7                    # same path
    assert np.allclose(g2.qd0, rr_geodesic.qd0 / 2, atol=1e-7)
    assert np.isclose(g2.energy, rr_geodesic.energy / 2, rtol=1e-8)


def test_geodesic_of_a_constant_metric_is_the_straight_line():
    box = rd.spatial_inertia(2.0, [0.1, 0.1, 0.1])
    chain = rd.SerialChain.from_joints([("prismatic", [1, 0, 0]), ("prismatic", [0, 1, 0])],
                                       np.eye(4), link_homes=[np.eye(4), np.eye(4)],
                                       link_inertias=[box, box])
    g = lagrange.geodesic(chain, [0.0, 0.0], [1.0, -2.0], duration=2.0, n_points=21)
    line = lagrange.straight_line([0.0, 0.0], [1.0, -2.0], g.t)
    assert np.allclose(g.q, line.q, atol=1e-10)
    assert np.isclose(g.energy, lagrange.energy_integral(chain, line), rtol=1e-12)


def test_zero_geodesic():
    g = lagrange.geodesic(models.planar_rr(), [0.3, 0.4], [0.3, 0.4], n_points=11)
    assert g.energy == 0.0 and g.residual == 0.0 and np.all(g.qd == 0) and np.all(g.qd0 == 0)
    assert np.all(g.q == [0.3, 0.4])


def test_paths_and_energy_integral():
    t = np.linspace(0.0, 2.0, 401)
    line = lagrange.straight_line([0.0, 1.0], [1.0, -1.0], t)
    p = lagrange.perturbed_path(line, [0.2, -0.1], mode=3)
    dq = np.gradient(p.q, t, axis=0)                                    # velocity is consistent
    assert np.allclose(p.qd[1:-1], dq[1:-1], atol=1e-3)
    chain = models.planar_rr()
    E_s = lagrange.energy_integral(chain, p.t, p.q, p.qd)
    E_t = lagrange.energy_integral(chain, p, rule="trapezoid")
    assert np.isclose(E_s, E_t, rtol=1e-4) and E_s > 0
    # a joint-1 rotation with the arm straight: T = M11/2 = 4/3 at 1 rad/s, for 2 s
    spin = lagrange.straight_line([0.0, 0.0], [2.0, 0.0], t)
    assert np.isclose(lagrange.energy_integral(chain, spin), 2 * hand_rr_metric([0, 0])[0, 0] / 2)


# ---------------------------------------------------------------- bad input

def test_bad_input_is_refused():
    rr = models.planar_rr()
    bare = rd.SerialChain.from_screws(rr.screws, rr.home)
    with pytest.raises(ValueError, match="no link inertias"):
        lagrange.kinetic_energy_metric(bare, [0, 0])
    with pytest.raises(ValueError, match="no link inertias"):
        lagrange.geodesic(bare, [0, 0], [1, 1])
    with pytest.raises(TypeError, match="expected a SerialChain"):
        lagrange.levi_civita("rr", [0, 0])
    with pytest.raises(ValueError, match="expected a vector of length 2"):
        lagrange.geodesic_acceleration(rr, [0, 0, 0], [1, 1])
    with pytest.raises(ValueError, match="q_end.*length 2"):
        lagrange.geodesic(rr, [0, 0], [1, 1, 1])
    with pytest.raises(ValueError, match="finite"):
        lagrange.geodesic(rr, [0, np.nan], [1, 1])
    with pytest.raises(ValueError, match="finite"):
        lagrange.covariant_acceleration(rr, [0, 0], [np.inf, 0], [0, 0])
    with pytest.raises(ValueError, match="duration: expected a positive time"):
        lagrange.geodesic(rr, [0, 0], [1, 1], duration=0.0)
    with pytest.raises(ValueError, match="duration: expected a positive time"):
        lagrange.geodesic(rr, [0, 0], [1, 1], duration=-1.0)
    with pytest.raises(ValueError, match="n_points"):
        lagrange.geodesic(rr, [0, 0], [1, 1], n_points=2)
    with pytest.raises(ValueError, match="method"):
        lagrange.geodesic(rr, [0, 0], [1, 1], method="euler")
    with pytest.raises(TypeError, match="symbolic"):
        lagrange.geodesic(models.planar_rr(sp.Symbol("l1")), [0, 0], [1, 1])
    with pytest.raises(TypeError, match="needs the sympy symbols"):
        lagrange.levi_civita(sp.Matrix([[1, 0], [0, 1]]), [0.0, 0.0])
    with pytest.raises(ValueError, match="symmetric"):
        lagrange.levi_civita(sp.Matrix([[1, sp.Symbol("x")], [0, 1]]), sp.symbols("x y"))
    t = np.linspace(0, 1, 5)
    with pytest.raises(ValueError, match="strictly increasing"):
        lagrange.straight_line([0, 0], [1, 1], t[::-1])
    with pytest.raises(ValueError, match=r"expected shape \(5, 2\)"):
        lagrange.energy_integral(rr, t, np.zeros((5, 3)), np.zeros((5, 3)))
    with pytest.raises(TypeError, match="energy_integral: t: expected .*\\(chain, t, q, qd\\)"):
        lagrange.energy_integral(rr, t)
    with pytest.raises(ValueError, match="rule"):
        lagrange.energy_integral(rr, lagrange.straight_line([0, 0], [1, 1], t), rule="gauss")
    with pytest.raises(ValueError, match="mode"):
        lagrange.perturbed_path(lagrange.straight_line([0, 0], [1, 1], t), 0.1, mode=0)
    with pytest.raises(TypeError, match="JointPath"):
        lagrange.perturbed_path(np.zeros((5, 2)), 0.1)


def test_shooting_failure_names_the_residual():
    rr = models.planar_rr()
    with pytest.raises(RuntimeError, match=r"did not converge: the end-point residual"):
        lagrange.geodesic(rr, [0.0, 0.5], [1.0, 1.5], n_points=11, max_iterations=1, tol=1e-18)
    with pytest.warns(RuntimeWarning, match="residual"):
        g = lagrange.geodesic(rr, [0.0, 0.5], [1.0, 1.5], n_points=11, max_iterations=1, tol=1e-18,
                         strict=False)
    assert g.residual > 1e-18 and np.isfinite(g.energy)


def test_far_end_points_need_the_fallback_and_still_beat_the_line():
    """Newton from the straight line's velocity fails here (the geodesic folds the elbow to
    q2 ~ 2.25 rad); the collocation restart finds the geodesic."""
    chain, q0, q1 = models.planar_rr(), [-0.5, 0.3], [1.0, 2.0]
    g = lagrange.geodesic(chain, q0, q1, n_points=101)
    assert g.residual < 1e-8 and np.ptp(g.kinetic_energy) < 1e-8 * g.kinetic_energy.mean()
    assert g.q[:, 1].max() > 2.2                                        # bends past q_end[1]
    E_line = lagrange.energy_integral(chain, lagrange.straight_line(q0, q1, g.t))
    assert g.energy < 0.8 * E_line
