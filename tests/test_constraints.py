"""Tests of robodyn.constraints: the four methods agree, the review's examples, closed forms,
the Moore--Penrose inverse, simulation with residual bounds, and every bad-input path."""
import warnings

import numpy as np
import pytest
import sympy as sp
from scipy.linalg import null_space, sqrtm

import robodyn as rd
from robodyn import constraints as C
from robodyn import dynamics, models
from robodyn.equations import max_difference

PEND = {"m": 2.0, "l": 1.5, "g": 9.81}
RR = {"l1": 1.0, "l2": 0.8, "m1": 1.0, "m2": 0.7, "g": 9.81, "h": 0.5}
FOUR = {"a": 0.3, "b": 1.0, "c": 0.8, "d": 1.0, "m1": 1.0, "m2": 2.0, "m3": 1.5, "g": 9.81}
KNIFE = {"m": 2.0, "J": 0.3}
DISK = {"m": 2.0, "I_z": 0.3, "I_r": 0.5, "r": 0.4}
EXAMPLES = {"pendulum": (models.particle_pendulum, PEND, [1.0, -0.5]),
            "rr_on_line": (models.rr_on_line, RR, [0.3, 0.6]),
            "four_bar": (models.four_bar, FOUR, [0.5, 0.8, -1.5]),
            "knife_edge": (models.knife_edge, KNIFE, [0.1, 0.2, 0.3]),
            "rolling_disk": (models.vertical_rolling_disk, DISK, [0.1, 0.2, 0.3, 0.4])}
_SYSTEMS = {}


def example(name):
    if name not in _SYSTEMS:
        _SYSTEMS[name] = EXAMPLES[name][0]()
    return _SYSTEMS[name]


def admissible_states(system, values, q_guess, k=5, seed=0):
    rng = np.random.default_rng(seed)
    cn = system.constraints.numeric(values)
    return [cn.project(np.asarray(q_guess) + 0.1 * rng.standard_normal(system.n),
                       rng.standard_normal(system.n)) for _ in range(k)]


def random_spd(rng, n):
    X = rng.standard_normal((n, n))
    return X @ X.T + n * np.eye(n)


# --------------------------------------------------------------------------
# the four methods give the same accelerations
# --------------------------------------------------------------------------

@pytest.mark.equation("hb-5-19", "hb-5-20", "hb-5-21", "hb-5-22", "hb-5-25", "uk-36")
@pytest.mark.parametrize("name", list(EXAMPLES))
def test_four_numeric_methods_agree_on_examples(name):
    _, values, guess = EXAMPLES[name]
    system = example(name)
    states = admissible_states(system, values, guess)
    ref = system.numeric(values, "udwadia_kalaba")
    for method in C.METHODS:
        assert max_difference(ref, system.numeric(values, method), states=states) < 1e-10, method


@pytest.mark.equation("hb-5-20", "hb-5-22", "hb-5-23", "hb-5-25", "hb-5-26", "hb-5-27", "uk-36")
@pytest.mark.parametrize("name", ["pendulum", "rr_on_line", "knife_edge", "rolling_disk"])
def test_symbolic_forms_agree_with_udwadia_kalaba(name):
    _, values, guess = EXAMPLES[name]
    system = example(name)
    states = admissible_states(system, values, guess)
    ref = system.numeric(values, "udwadia_kalaba")
    for build in (C.multiplier_equations, C.embedded_equations, C.projected_equations):
        form = build(system)
        assert isinstance(form, rd.MassMatrixForm)
        assert max_difference(ref, form, states=states, values=values) < 1e-10, build.__name__


@pytest.mark.slow
@pytest.mark.equation("hb-5-22")
def test_four_bar_symbolic_multipliers_and_embedding():
    system = example("four_bar")
    states = admissible_states(system, FOUR, EXAMPLES["four_bar"][2], k=3)
    ref = system.numeric(FOUR)
    for build in (C.multiplier_equations, C.embedded_equations):
        assert max_difference(ref, build(system), states=states, values=FOUR) < 1e-10


@pytest.mark.equation("hb-5-19", "hb-5-20", "uk-36")
@pytest.mark.parametrize("seed", range(6))
def test_four_methods_agree_on_random_systems(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 9))
    m = int(rng.integers(1, n))
    M, F = random_spd(rng, n), rng.standard_normal(n)
    A, b = rng.standard_normal((m, n)), rng.standard_normal(m)
    qdd_l, lam = C.lagrange_multipliers(M, F, A, b)
    qdd_u, Fc = C.udwadia_kalaba(M, F, A, b)
    # eq. (36) literally, with the symmetric square root of M
    R = np.real(sqrtm(M))
    Fc_literal = R @ np.linalg.pinv(A @ np.linalg.inv(R)) @ (b - A @ np.linalg.solve(M, F))
    for qdd in (qdd_u, C._systems._by_embedding(M, F, A, b), C._systems._by_projection(M, F, A, b)):
        assert np.allclose(qdd, qdd_l, rtol=0, atol=1e-10)
    assert np.allclose(Fc, A.T @ lam, atol=1e-10)            # F^C = A^T lambda (5.19)
    assert np.allclose(Fc, Fc_literal, atol=1e-10)
    assert np.allclose(A @ qdd_u, b, atol=1e-10)


@pytest.mark.equation("hb-5-19", "uk-36", "uk-40", "uk-41", "uk-45", "uk-46", "uk-48")
@pytest.mark.parametrize("seed", range(4))
def test_constraint_force_does_no_work(seed):
    rng = np.random.default_rng(seed)
    n, m = 6, int(rng.integers(1, 5))
    M, F, A = random_spd(rng, n), rng.standard_normal(n), rng.standard_normal((m, n))
    _, Fc = C.udwadia_kalaba(M, F, A, rng.standard_normal(m))
    S = null_space(A)                                        # every admissible velocity
    assert np.max(np.abs(S.T @ Fc)) < 1e-10 * max(1, np.linalg.norm(Fc))


def test_constraint_force_workless_along_example_motion():
    system = example("knife_edge")
    run = C.simulate_constrained(system, [0, 0, 0], [1.0, 0.0, 2.0], 2.0, values=KNIFE,
                                 dt=0.05, rtol=1e-10, atol=1e-10)
    power = np.einsum("ij,ij->i", run.constraint_force, run.qd)
    assert np.max(np.abs(power)) < 1e-8
    assert np.ptp(run.kinetic_energy) < 1e-8                # no work: energy constant


def test_symbolic_lagrange_multipliers_and_uk_match_numeric():
    x, y, m, g = sp.symbols("x y m g")
    M, F, A, b = sp.eye(2) * m, [0, -m * g], sp.Matrix([[x, y]]), [-(x**2 + y**2)]
    qdd_l, lam = C.lagrange_multipliers(M, F, A, b)
    qdd_u, Fc = C.udwadia_kalaba(M, F, A, b)
    assert (qdd_l - qdd_u).applyfunc(sp.simplify).is_zero_matrix
    vals = {x: 0.6, y: -0.8, m: 2.0, g: 9.81}
    num = C.udwadia_kalaba(np.eye(2) * 2.0, [0, -19.62], [[0.6, -0.8]], [-1.0])
    assert np.allclose([float(e.subs(vals)) for e in qdd_u], num.qdd)
    assert np.allclose([float(e.subs(vals)) for e in Fc], num.constraint_force)


# --------------------------------------------------------------------------
# Moore--Penrose, redundant and inconsistent constraints
# --------------------------------------------------------------------------

@pytest.mark.equation("uk-32", "uk-33", "uk-34", "uk-35")
@pytest.mark.parametrize("shape,rank", [((3, 5), 3), ((4, 4), 2), ((6, 3), 1), ((2, 2), 0)])
def test_penrose_conditions(shape, rank):
    rng = np.random.default_rng(rank)
    W = rng.standard_normal((shape[0], rank)) @ rng.standard_normal((rank, shape[1]))
    Wp = C.moore_penrose(W)
    assert max(C.penrose_conditions(W, Wp)) < 1e-12
    assert np.allclose(Wp, np.linalg.pinv(W), atol=1e-12)
    bad = Wp + 1e-3                      # not the inverse: some condition fails
    assert max(C.penrose_conditions(W, bad)) > 1e-6


def test_penrose_conditions_symbolic():
    a = sp.Symbol("a", positive=True)
    W = sp.Matrix([[a, 2 * a], [1, 2]])
    for r in C.penrose_conditions(W, C.moore_penrose(W)):
        assert r.is_zero_matrix


def test_redundant_constraints():
    rng = np.random.default_rng(3)
    M, F = random_spd(rng, 4), rng.standard_normal(4)
    a = rng.standard_normal(4)
    once = C.udwadia_kalaba(M, F, [a], [0.7])
    twice = C.udwadia_kalaba(M, F, [a, 2 * a], [0.7, 1.4])
    assert np.allclose(once.qdd, twice.qdd, atol=1e-12)
    assert np.allclose(once.constraint_force, twice.constraint_force, atol=1e-12)
    with pytest.raises(ValueError, match="lagrange_multipliers: A: expected constraints of full "
                                         "row rank 2, got rank 1"):
        C.lagrange_multipliers(M, F, [a, 2 * a], [0.7, 1.4])


def test_inconsistent_constraints_warn_with_residual_and_give_least_squares():
    M, F = np.diag([1.0, 2.0]), np.array([1.0, -1.0])
    A, b = np.array([[1.0, 1.0], [1.0, 1.0]]), np.array([0.0, 1.0])
    with pytest.warns(C.ConstraintWarning, match=r"inconsistent.*residual \|A qdd - b\| = 0.707"):
        qdd, _ = C.udwadia_kalaba(M, F, A, b)
    # least squares by another route: the best A qdd is the mean 0.5; among those, Gauss
    # (closest to a = M^-1 F in the M metric) by a multiplier solve with the consistent b
    ref = C.lagrange_multipliers(M, F, [[1.0, 1.0]], [0.5]).qdd
    assert np.allclose(qdd, ref, atol=1e-12)


# --------------------------------------------------------------------------
# the review's classification and second-order forms
# --------------------------------------------------------------------------

X, Y, Z, T = sp.symbols("x y z t")


@pytest.mark.equation("uk-10", "uk-11", "uk-12", "uk-13")
def test_review_example_2_holonomic_scleronomic():
    r = C.is_holonomic([1, 2 * Y, 1], [X, Y, Z])
    assert r.holonomic and not r.rheonomic and r.condition == (0,)
    assert sp.simplify(r.integral - (X + Y**2 + Z)) == 0          # eq. (13), L = -constant
    assert r.kind == "holonomic, scleronomic"


@pytest.mark.equation("uk-11", "uk-14", "uk-15")
def test_review_example_3_holonomic_rheonomic():
    r = C.is_holonomic([1, 2 * Y, 1, -1], [X, Y, Z], t=T)
    assert r.holonomic and r.rheonomic
    assert sp.simplify(r.integral - (X + Y**2 + Z - T)) == 0      # eq. (15)


@pytest.mark.equation("uk-11", "uk-16")
def test_review_example_4_nonholonomic():
    r = C.is_holonomic([1, 2 * Z, 1], [X, Y, Z])
    assert not r.holonomic and not r.rheonomic and r.integral is None
    assert r.condition == (2,)        # eq. (11): 1*(2 - 0) + 2z*(0 - 0) + 1*(0 - 0)


def test_integrating_factor_and_general_frobenius():
    # y dx + x dy... times a factor: (2y) dx + (2x) dy + 0 dz is exact up to 2
    r = C.is_holonomic([Y * Z, X * Z, X * Y], [X, Y, Z])
    assert r.holonomic and sp.simplify(r.integral - X * Y * Z) == 0
    # a form that needs a factor: dx + (x/y) dy, x/y... (1/y)(y dx + x dy)
    r = C.is_holonomic([1, X / Y, 0], [X, Y, Z])
    assert r.holonomic and r.integral is not None
    # several forms: the knife edge's single form and the rolling disk's two
    th, ph, r_ = sp.symbols("theta phi r", positive=True)
    assert not C.is_holonomic([-sp.sin(th), sp.cos(th), 0], [X, Y, th]).holonomic
    disk = [[1, 0, 0, -r_ * sp.cos(th)], [0, 1, 0, -r_ * sp.sin(th)]]
    assert not C.is_holonomic(disk, [X, Y, th, ph]).holonomic
    assert C.is_holonomic([[1, 0, 0, 0], [0, 1, 0, -r_]], [X, Y, th, ph]).holonomic
    assert C.is_holonomic([X, Y], [X, Y]).holonomic               # two variables: always


@pytest.mark.equation("uk-18", "uk-19", "uk-20")
def test_second_order_forms_of_review_examples():
    qd = sp.symbols("xd yd zd")
    A, b = C.second_order_form(C.Constraints([X, Y, Z], holonomic=[X + Y**2 + Z - T], t=T), qd)
    assert A == sp.Matrix([[1, 2 * Y, 1]]) and b == sp.Matrix([-2 * qd[1]**2])   # (19)
    A, b = C.second_order_form(C.Constraints([X, Y, Z], pfaffian=[[1, 2 * Z, 1]]), qd)
    assert A == sp.Matrix([[1, 2 * Z, 1]]) and b == sp.Matrix([-2 * qd[1] * qd[2]])  # (20)


@pytest.mark.equation("hb-5-18", "uk-22", "uk-23", "uk-24", "uk-25", "uk-26", "uk-27", "uk-28", "uk-29")
def test_second_order_form_by_differentiating_along_a_curve():
    # an independent route: substitute q(t) functions and differentiate with sympy
    q = sp.symbols("q1:4")
    qd = sp.symbols("u1:4")
    f = [sp.Function(f"f{i}")(T) for i in range(3)]
    cons = C.Constraints(list(q), holonomic=[q[0] * sp.cos(q[1]) + T * q[2]**2],
                         pfaffian=[[q[1], sp.sin(T * q[0]), 1]], rate=[q[2] * T**2], t=T)
    A, b = C.second_order_form(cons, qd)
    Av, c = cons.velocity_form()
    on_curve = dict(zip(q, f))
    vel = sp.Matrix([fi.diff(T) for fi in f])
    lhs = (Av.xreplace(on_curve) * vel - c.xreplace(on_curve)).diff(T)   # d/dt (A qd - c)
    rates = {**on_curve, **dict(zip(qd, vel))}
    mine = A.xreplace(on_curve) * vel.diff(T) - b.xreplace(rates)
    assert (lhs - mine).applyfunc(sp.simplify).is_zero_matrix
    assert Av[0, :] == sp.Matrix([[sp.cos(q[1]), -q[0] * sp.sin(q[1]), 2 * T * q[2]]])  # (28)
    assert c[0] == -q[2]**2                                          # c = -df/dt


# --------------------------------------------------------------------------
# closed forms: projectile in polar coordinates, pendulum tension, four-bar, projector
# --------------------------------------------------------------------------

@pytest.mark.equation("uk-1", "uk-2", "uk-3", "uk-4", "uk-5", "uk-6", "uk-7", "uk-8", "uk-9")
def test_projectile_in_polar_coordinates():
    r, th, rd_, thd, m, g = sp.symbols("r theta r_dot theta_dot m g", positive=True)
    polar = C.lagrangian_equations(m / 2 * (rd_**2 + r**2 * thd**2), m * g * r * sp.sin(th),
                                   [r, th], [rd_, thd])
    acc = polar.mass_matrix.LUsolve(polar.forcing)
    assert sp.simplify(acc[0] - (r * thd**2 - g * sp.sin(th))) == 0              # (7)
    assert sp.simplify(acc[1] - (-2 * rd_ * thd - g * sp.cos(th)) / r) == 0     # (8)
    assert polar.mass_matrix == sp.diag(m, m * r**2)   # the printed (9) has diag(m, m): a note
    # (5): the polar accelerations give the Cartesian (0, -g) of (2)
    xdd = (acc[0] - r * thd**2) * sp.cos(th) - (r * acc[1] + 2 * rd_ * thd) * sp.sin(th)
    ydd = (acc[0] - r * thd**2) * sp.sin(th) + (r * acc[1] + 2 * rd_ * thd) * sp.cos(th)
    assert sp.simplify(xdd) == 0 and sp.simplify(ydd + g) == 0


@pytest.mark.equation("uk-3", "uk-4")
def test_polar_velocities_and_their_kinetic_energy():
    """(4) by differentiating (3) along functions of time; the kinetic energy it gives,
    1/2 m (rdot^2 + r^2 thetadot^2), has the mass matrix diag(m, m r^2) of the library's polar
    equations; and (4) equals finite differences of a sampled polar path."""
    r, th, rd_, thd, m = sp.symbols("r theta r_dot theta_dot m", positive=True)
    t = sp.Symbol("t")
    r_t, th_t = sp.Function("r")(t), sp.Function("theta")(t)
    names = [(r_t.diff(t), rd_), (th_t.diff(t), thd), (r_t, r), (th_t, th)]
    xd4 = rd_ * sp.cos(th) - r * thd * sp.sin(th)
    yd4 = rd_ * sp.sin(th) + r * thd * sp.cos(th)
    for coord, claimed in ((r_t * sp.cos(th_t), xd4), (r_t * sp.sin(th_t), yd4)):
        derived = coord.diff(t)
        for old, new in names:
            derived = derived.subs(old, new)
        assert sp.simplify(derived - claimed) == 0
    T = m / 2 * (xd4**2 + yd4**2)
    assert sp.simplify(T - m / 2 * (rd_**2 + r**2 * thd**2)) == 0
    polar = C.lagrangian_equations(T, 0, [r, th], [rd_, thd])
    assert (polar.mass_matrix - sp.diag(m, m * r**2)).applyfunc(sp.simplify).is_zero_matrix
    # numbers: a polar path r = 1 + s^2, theta = sin 2s, Cartesian velocity by differences
    s0, h = 0.7, 1e-6
    xy = lambda s: (1 + s**2) * np.array([np.cos(np.sin(2 * s)), np.sin(np.sin(2 * s))])
    v_fd = (xy(s0 + h) - xy(s0 - h)) / (2 * h)
    at = {r: 1 + s0**2, th: np.sin(2 * s0), rd_: 2 * s0, thd: 2 * np.cos(2 * s0)}
    assert np.allclose(v_fd, [float(xd4.subs(at)), float(yd4.subs(at))], atol=1e-8)


@pytest.mark.equation("uk-43", "uk-44")
def test_dalembert_in_lagranges_form():
    """(43)/(44): along the pendulum's constrained motion (a particle in Cartesian
    coordinates), the bracket d/dt dT/dqdot_j - dT/dq_j - Q_j, formed by sympy along functions
    of time, does no work on any admissible virtual displacement (A dq = 0): as the sum (43)
    and in matrix form (44) over a basis of them; on the constraint normal it does (tension)."""
    system = example("pendulum")
    num = system.numeric(PEND)
    m, g = PEND["m"], PEND["g"]
    t = sp.Symbol("t")
    fs = [sp.Function("x")(t), sp.Function("y")(t)]
    T = m / 2 * sum(f.diff(t) ** 2 for f in fs)
    Q = [0.0, -m * g]
    bracket = [sp.diff(T.diff(f.diff(t)), t) - T.diff(f) - Qj for f, Qj in zip(fs, Q)]
    for q, qd in admissible_states(system, PEND, [1.0, -0.5]):
        qdd = num.accelerations(q, qd)
        at = {}
        for f, a, v, p in zip(fs, qdd, qd, q):
            at.update({f.diff(t, 2): a, f.diff(t): v, f: p})
        E = np.array([float(b.subs(at)) for b in bracket])
        A = num.constraints.A(q)
        N = null_space(A)
        for dq in N.T:
            assert abs(sum(E[j] * dq[j] for j in range(2))) < 1e-10                # (43)
        assert np.allclose(E @ N, 0.0, atol=1e-10)                                   # (44)
        assert abs(E @ A[0]) > 1e-3 * np.linalg.norm(A[0])


@pytest.mark.equation("uk-42", "uk-47", "uk-49")
def test_lagrangian_equations_with_linear_kinetic_terms():
    # a particle seen from a frame turning at a rate w(t): T has N(q, t) qd and P(q, t) parts
    x, y, xd, yd, m, k = sp.symbols("x y x_dot y_dot m k")
    t = rd.equations.TIME
    w = sp.sin(t) + 2
    T = m / 2 * ((xd - w * y)**2 + (yd + w * x)**2)
    form = C.lagrangian_equations(T, k / 2 * (x**2 + y**2), [x, y], [xd, yd])
    # independent route: d/dt dT/dqd - dT/dq + dV/dq = 0 along functions of time
    fx, fy = sp.Function("fx")(t), sp.Function("fy")(t)
    on = {x: fx, y: fy, xd: fx.diff(t), yd: fy.diff(t)}
    L = (T - k / 2 * (x**2 + y**2))
    el = [sp.diff(L.diff(v).xreplace(on), t) - L.diff(c).xreplace(on) for c, v in ((x, xd), (y, yd))]
    acc = {fx.diff(t, 2): sp.Symbol("ax"), fy.diff(t, 2): sp.Symbol("ay")}
    mine = form.mass_matrix * sp.Matrix([sp.Symbol("ax"), sp.Symbol("ay")]) - form.forcing
    for e, f in zip(el, mine.xreplace(on)):
        assert sp.simplify(e.subs(acc) - f) == 0


@pytest.mark.equation("hb-5-19", "uk-36")
def test_pendulum_tension_closed_form():
    system = example("pendulum")
    num = system.numeric(PEND)
    m, l, g = PEND["m"], PEND["l"], PEND["g"]
    for theta, omega in [(0.0, 0.0), (0.4, 2.0), (2.5, -3.0), (np.pi / 2, 1.0)]:
        q = l * np.array([np.sin(theta), -np.cos(theta)])          # theta from straight down
        qd = l * omega * np.array([np.cos(theta), np.sin(theta)])
        Fc = num.solve(q, qd).constraint_force
        tension = m * l * omega**2 + m * g * np.cos(theta)          # m v^2 / l + m g cos(theta)
        assert np.allclose(Fc, -tension * q / l, atol=1e-10)


def freudenstein_coupler(th1, a, b, c, d, branch):
    """The coupler's far end B by intersecting circles (A, b) and (D, c): closed form."""
    A = np.array([a * np.cos(th1), a * np.sin(th1)])
    D = np.array([d, 0.0])
    e = D - A
    L = np.linalg.norm(e)
    x = (L**2 + b**2 - c**2) / (2 * L)
    h = np.sqrt(b**2 - x**2)
    n = np.array([-e[1], e[0]]) / L
    return A + x * e / L + branch * h * n


def test_four_bar_follows_closed_form_position_analysis():
    system = example("four_bar")
    a, b, c, d = (FOUR[k] for k in "abcd")
    cn = system.constraints.numeric(FOUR)
    q0, qd0 = cn.project([0.5, 0.8, -1.5], [3.0, 0.0, 0.0])
    A = cn.A(q0)
    assert np.linalg.matrix_rank(A) == 2 and system.n - 2 == 1       # mobility 1 (Grübler)
    run = C.simulate_constrained(system, q0, qd0, 2.0, values=FOUR, dt=0.02, rtol=1e-10,
                                 atol=1e-10)
    assert run.max_residual[0] < 1e-7
    B0 = np.array([a * np.cos(q0[0]) + b * np.cos(q0[1]), a * np.sin(q0[0]) + b * np.sin(q0[1])])
    branch = min((1, -1), key=lambda s: np.linalg.norm(freudenstein_coupler(q0[0], a, b, c, d, s)
                                                       - B0))
    for th1, th2 in run.q[:, :2]:
        B = np.array([a * np.cos(th1) + b * np.cos(th2), a * np.sin(th1) + b * np.sin(th2)])
        assert np.allclose(B, freudenstein_coupler(th1, a, b, c, d, branch), atol=1e-6)
    assert np.ptp(run.q[:, 0]) > 1.0                              # the crank really turned


@pytest.mark.equation("hb-5-24")
def test_projector_properties():
    rng = np.random.default_rng(8)
    M, A = random_spd(rng, 5), rng.standard_normal((2, 5))
    P = C.constraint_projector(M, A)
    assert np.allclose(P @ P, P) and np.allclose(A @ P, 0, atol=1e-12)
    assert np.allclose(M @ P, P.T @ M)                            # M-self-adjoint
    v = null_space(A) @ rng.standard_normal(3)
    assert np.allclose((np.eye(5) - P) @ v, 0, atol=1e-12)       # (5.24) for admissible qd
    Ps = C.constraint_projector(sp.diag(1, 2), sp.Matrix([[1, 1]]))
    assert np.allclose(np.array(Ps, dtype=float), C.constraint_projector(np.diag([1., 2.]),
                                                                         [[1., 1.]]))


@pytest.mark.equation("hb-5-26", "hb-5-27")
def test_constraint_connection_is_projected_levi_civita_on_D():
    system = example("rr_on_line")
    eq = system.model.numeric  # noqa: F841  (the numeric model is not needed)
    l1, l2, m1, m2 = sp.symbols("l1 l2 m1 m2", positive=True)
    vals = {l1: 1, l2: sp.Rational(4, 5), m1: 1, m2: sp.Rational(7, 10)}
    q = list(system.model.q)
    M = system.model.mass_matrix.xreplace(vals)
    A, _ = system.constraints.velocity_form()
    A = A.xreplace(vals)
    Gt = C.constraint_connection(M, A, q)
    G = rd.christoffel_symbols(M, q, kind=2)
    S = A.nullspace()[0]                       # a vector field Y in D
    Xf = sp.Matrix([sp.cos(q[0]), q[1]])       # any vector field X
    P = C.constraint_projector(M, A)

    def nabla(Gam, Xv, Yv):
        return sp.Matrix([sum(Xv[i] * Yv[k].diff(q[i]) for i in range(2))
                          + sum(Gam[k, i, j] * Xv[i] * Yv[j] for i in range(2) for j in range(2))
                          for k in range(2)])
    at = {q[0]: 0.3, q[1]: 0.9}
    lhs = nabla(Gt, Xf, S).xreplace(at).evalf()
    rhs = (P * nabla(G, Xf, S)).xreplace(at).evalf()
    assert np.allclose(np.array(lhs, dtype=float), np.array(rhs, dtype=float), atol=1e-10)


@pytest.mark.equation("uk-37", "uk-38", "uk-39")
def test_newton_euler_about_a_point_matches_centre_of_mass_equations():
    rng = np.random.default_rng(11)
    for _ in range(5):
        m = rng.uniform(0.5, 3)
        R, _ = np.linalg.qr(rng.standard_normal((3, 3)))
        I_cm = R @ np.diag(rng.uniform(1.0, 2.0, 3)) @ R.T   # a body's: triangle inequality
        c, w, alpha, a_P = (rng.standard_normal(3) for _ in range(4))
        # independent route: Newton and Euler at the centre of mass, moments moved to P
        a_c = a_P + np.cross(alpha, c) + np.cross(w, np.cross(w, c))
        F = m * a_c
        tau_P = I_cm @ alpha + np.cross(w, I_cm @ w) + np.cross(c, F)
        M6, h = dynamics.newton_euler_about_point(m, I_cm, c, w)
        assert np.allclose(M6 @ np.concatenate([a_P, alpha]) + h, np.concatenate([F, tau_P]))
        assert np.allclose(M6, M6.T)
        Cx = np.array([[0, -c[2], c[1]], [c[2], 0, -c[0]], [-c[1], c[0], 0]])
        printed = M6.copy()
        printed[3:, :3] = -m * Cx                       # the seed's lower-left block
        assert not np.allclose(printed @ np.concatenate([a_P, alpha]) + h, np.concatenate([F, tau_P]))
    with pytest.raises(ValueError, match="newton_euler_about_point: m: expected a positive (mass|number)"):
        dynamics.newton_euler_about_point(0.0, np.eye(3), [0, 0, 0], [0, 0, 0])
    with pytest.raises(ValueError, match=r"newton_euler_about_point: I_cm.*expected a 3x3 matrix"):
        dynamics.newton_euler_about_point(1.0, np.eye(2), [0, 0, 0], [0, 0, 0])


@pytest.mark.equation("uk-50")
def test_kane_equals_udwadia_kalaba_for_a_pivoted_body():
    # a plate pivoted at P off its centre: Kane with u = thetadot vs UK on (xP, yP, theta) pinned
    xp, yp, th, xpd, ypd, thd = sp.symbols("xp yp th xpd ypd thd")
    m, I, c1, c2, g = 1.5, 0.2, 0.4, 0.1, 9.81
    R = sp.Matrix([[sp.cos(th), -sp.sin(th)], [sp.sin(th), sp.cos(th)]])
    pc = sp.Matrix([xp, yp]) + R * sp.Matrix([c1, c2])
    vc = pc.jacobian([xp, yp, th]) * sp.Matrix([xpd, ypd, thd])
    T = m / 2 * (vc.T * vc)[0] + I / 2 * thd**2
    body = C.lagrangian_equations(T, m * g * pc[1], [xp, yp, th], [xpd, ypd, thd])
    pinned = C.ConstrainedSystem(body, C.Constraints([xp, yp, th], holonomic=[xp, yp]))
    num = pinned.numeric()
    for theta, omega in [(0.3, 1.0), (2.0, -3.0)]:
        # Kane: partial velocity of the centre dv_c/du = R' c, F_r + F_r* = 0
        Rn = np.array([[np.cos(theta), -np.sin(theta)], [np.sin(theta), np.cos(theta)]])
        dR = np.array([[-np.sin(theta), -np.cos(theta)], [np.cos(theta), -np.sin(theta)]])
        v_r = dR @ [c1, c2]
        acc_bias = -omega**2 * Rn @ [c1, c2]               # a_c = v_r thetaddot + bias
        thdd = (v_r @ np.array([0, -m * g]) - m * v_r @ acc_bias) / (I + m * v_r @ v_r)
        qdd = num.accelerations([0, 0, theta], [0, 0, omega])
        assert abs(qdd[2] - thdd) < 1e-12 and np.allclose(qdd[:2], 0, atol=1e-12)


# --------------------------------------------------------------------------
# simulation: residual bounds, drift, Baumgarte, projection, tracking
# --------------------------------------------------------------------------

def test_pendulum_residual_stays_below_bound_and_energy_is_kept():
    run = C.simulate_constrained(example("pendulum"), [1.5, 0.0], [0.0, 0.0], 5.0, values=PEND,
                                 dt=0.05, rtol=1e-11, atol=1e-11)
    assert run.max_residual[0] < 1e-7 and run.max_residual[1] < 1e-7
    y = run.q[:, 1]
    E = run.kinetic_energy + PEND["m"] * PEND["g"] * y
    assert np.ptp(E) < 1e-6


def test_drift_grows_without_stabilization_and_stabilization_bounds_it():
    kw = dict(values=PEND, dt=0.05, rtol=1e-5, atol=1e-5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", C.ConstraintWarning)
        free = C.simulate_constrained(example("pendulum"), [1.5, 0.0], [0.0, 3.0], 10.0, **kw)
    bg = C.simulate_constrained(example("pendulum"), [1.5, 0.0], [0.0, 3.0], 10.0,
                                stabilization="baumgarte", alpha=5.0, beta=5.0, **kw)
    pr = C.simulate_constrained(example("pendulum"), [1.5, 0.0], [0.0, 3.0], 10.0,
                                stabilization="projection", **kw)
    half = len(free.t) // 2
    assert free.residual[-1] > 2 * free.residual[half] > 0          # drift grows
    assert bg.residual[-1] < free.residual[-1] / 10 and bg.max_residual[0] < free.max_residual[0]
    assert pr.max_residual[0] < 1e-10


def test_baumgarte_residual_is_a_damped_oscillator():
    alpha, beta = 2.0, 5.0
    l = PEND["l"]
    q0 = np.array([0.0, -(l + 0.05)])                # off the circle, at rest
    phi0 = q0 @ q0 - l**2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", C.ConstraintWarning)     # still 2e-3 at the end
        run = C.simulate_constrained(example("pendulum"), q0, [0.0, 0.0], 2.0, values=PEND,
                                     stabilization="baumgarte", alpha=alpha, beta=beta, dt=0.01,
                                     rtol=1e-11, atol=1e-11, project_initial=False)
    wd = np.sqrt(beta**2 - alpha**2)
    exact = phi0 * np.exp(-alpha * run.t) * (np.cos(wd * run.t) + alpha / wd * np.sin(wd * run.t))
    assert np.allclose(run.residual, np.abs(exact), atol=1e-8)


def test_simulation_methods_give_the_same_trajectory():
    runs = [C.simulate_constrained(example("rr_on_line"), [0.3, 0.6], [1.0, 0.0], 1.0,
                                   values=RR, method=m, dt=0.1, rtol=1e-11, atol=1e-11)
            for m in C.METHODS]
    for r in runs[1:]:
        assert np.allclose(r.q, runs[0].q, atol=1e-8)
    l1, l2, h = RR["l1"], RR["l2"], RR["h"]
    tip_y = l1 * np.sin(runs[0].q[:, 0]) + l2 * np.sin(runs[0].q.sum(axis=1))
    assert np.allclose(tip_y, h, atol=1e-8)


def test_tracking_by_constraints():
    q1, q2, t = sp.symbols("q1 q2 t")
    l1 = l2 = 1.0
    # desired: the tip moves along x = 1.2 + 0.3 sin(t), y = 0.5
    tip = [l1 * sp.cos(q1) + l2 * sp.cos(q1 + q2) - 1.2 - 0.3 * sp.sin(t),
           l1 * sp.sin(q1) + l2 * sp.sin(q1 + q2) - 0.5]
    arm = models.planar_rr()
    ctrl = C.constraint_controller(C.ConstrainedSystem(arm, C.Constraints([q1, q2], tip, t=t),
                                                       gravity=[0, -9.81, 0]), alpha=8, beta=8)
    run = dynamics.simulate(arm, [0.2, 0.9], [0, 0], 4.0, tau=ctrl, gravity=[0, -9.81, 0],
                              t_eval=np.linspace(0, 4, 81), rtol=1e-9, atol=1e-9)
    x = l1 * np.cos(run.q[:, 0]) + l2 * np.cos(run.q.sum(axis=1))
    y = l1 * np.sin(run.q[:, 0]) + l2 * np.sin(run.q.sum(axis=1))
    err = np.hypot(x - 1.2 - 0.3 * np.sin(run.t), y - 0.5)
    assert err[0] > 0.05 and err[-1] < 1e-4                          # converges onto the path


def test_chain_model_numeric_matches_symbolic_model():
    q1, q2 = sp.symbols("q1 q2")
    cons = C.Constraints([q1, q2], holonomic=[sp.sin(q1) + 0.8 * sp.sin(q1 + q2) - 0.5])
    chain_sys = C.ConstrainedSystem(models.planar_rr(1.0, 0.8, 1.0, 0.7), cons,
                                    gravity=[0, -9.81, 0])
    sym = example("rr_on_line").numeric(RR)
    states = admissible_states(chain_sys, {}, [0.3, 0.6])
    assert max_difference(sym, chain_sys.numeric(), states=states) < 1e-10


# --------------------------------------------------------------------------
# bad input
# --------------------------------------------------------------------------

def test_bad_mass_matrix():
    with pytest.raises(ValueError, match=r"udwadia_kalaba: M: expected a symmetric matrix, "
                                         r"got \|M - M\^T\| up to 2"):
        C.udwadia_kalaba([[1, 2], [0, 1]], [0, 0], [[1, 0]], [0])
    with pytest.raises(ValueError, match=r"lagrange_multipliers: M: expected a symmetric "
                                         r"positive definite matrix, got a matrix with "
                                         r"eigenvalues \[-1.0, 1.0\]"):
        C.lagrange_multipliers([[1, 0], [0, -1]], [0, 0], [[1, 0]], [0])
    with pytest.raises(ValueError, match=r"constraint_projector: M: expected a square matrix, "
                                         r"got shape \(2, 3\)"):
        C.constraint_projector(np.ones((2, 3)), [[1, 0]])
    with pytest.raises(TypeError, match="udwadia_kalaba: M: expected an array of numbers"):
        C.udwadia_kalaba("M", [0, 0], [[1, 0]], [0])


def test_bad_shapes():
    with pytest.raises(ValueError, match=r"udwadia_kalaba: A: expected an m x 2 constraint "
                                         r"matrix .* got shape \(1, 3\)"):
        C.udwadia_kalaba(np.eye(2), [0, 0], [[1, 0, 0]], [0])
    with pytest.raises(ValueError, match="lagrange_multipliers: b .* expected a vector of length "
                                         "1, got shape"):
        C.lagrange_multipliers(np.eye(2), [0, 0], [[1, 0]], [0, 1])
    with pytest.raises(ValueError, match="udwadia_kalaba: F .* expected a vector of length 2"):
        C.udwadia_kalaba(np.eye(2), [0, 0, 0], [[1, 0]], [0])
    with pytest.raises(ValueError, match="penrose_conditions: W_plus: expected shape"):
        C.penrose_conditions(np.eye(2), np.eye(3))
    with pytest.raises(ValueError, match=r"lagrange_multipliers: F\b.*NaN"):
        C.lagrange_multipliers(np.eye(2), [np.nan, 0], [[1, 0]], [0])


def test_bad_pfaffian_forms():
    with pytest.raises(ValueError, match=r"is_holonomic: form, coords: expected 3 coefficients \(one per "
                                         r"coordinate \[x, y, z\]\), got 2"):
        C.is_holonomic([1, 2 * Y], [X, Y, Z])
    with pytest.raises(ValueError, match="expected 4 coefficients .* then dt.*got 3"):
        C.is_holonomic([1, 2 * Y, 1], [X, Y, Z], t=T)
    with pytest.raises(TypeError, match="is_holonomic: coords: expected sympy symbols"):
        C.is_holonomic([1, 1], ["x", "y"])
    with pytest.raises(TypeError, match="is_holonomic: coords: expected plain sympy Symbols"):
        C.is_holonomic([1, 1], [sp.Function("x")(T), Y])
    with pytest.raises(TypeError, match="is_holonomic: form: expected (a list|numbers.*never evaluates text)"):
        C.is_holonomic("dx + dy", [X, Y])
    with pytest.raises(TypeError, match="is_holonomic: t: expected a time Symbol"):
        C.is_holonomic([1, 1, 1], [X, Y], t=X)


def test_bad_constraints():
    with pytest.raises(ValueError, match=r"Constraints: pfaffian: expected rows of 3 "
                                         r"coefficients .* got shape \(1, 2\)"):
        C.Constraints([X, Y, Z], pfaffian=[[1, 2]])
    with pytest.raises(ValueError, match="Constraints: rate: expected 1 expressions"):
        C.Constraints([X, Y, Z], pfaffian=[[1, 2, 3]], rate=[1, 2])
    with pytest.raises(ValueError, match="Constraints: holonomic, pfaffian: expected at least one"):
        C.Constraints([X, Y])
    with pytest.raises(ValueError, match="Constraints: q: expected distinct symbols"):
        C.Constraints([X, X], holonomic=[X])
    with pytest.raises(TypeError, match="second_order_form: constraints: expected a Constraints"):
        C.second_order_form([X + Y])
    with pytest.raises(ValueError, match="second_order_form: qd: expected 2 velocity symbols"):
        C.second_order_form(C.Constraints([X, Y], holonomic=[X + Y]), [Z])
    with pytest.raises(ValueError, match=r"Constraints.numeric: values: .*symbols \['l'\] have no value"):
        example("pendulum").constraints.numeric({"m": 1})


def test_bad_systems_and_methods():
    pend = example("pendulum")
    with pytest.raises(ValueError, match="ConstrainedSystem: constraints: expected the model's "
                                         "coordinates"):
        C.ConstrainedSystem(pend.model, C.Constraints([X, Y], holonomic=[X]))
    with pytest.raises(TypeError, match="ConstrainedSystem: model: expected a MassMatrixForm or "
                                        "a SerialChain"):
        C.ConstrainedSystem(np.eye(2), pend.constraints)
    with pytest.raises(ValueError, match="ConstrainedSystem: constraints: expected 2 coordinates"):
        C.ConstrainedSystem(models.planar_rr(), C.Constraints([X, Y, Z], holonomic=[X]))
    with pytest.raises(ValueError, match="ConstrainedSystem.numeric: method: expected one of"):
        pend.numeric(PEND, "kane")
    with pytest.raises(ValueError, match=r"embedded_equations: S: expected an 2 x 1"):
        C.embedded_equations(pend, S=sp.eye(2))
    with pytest.raises(ValueError, match="embedded_equations: S: expected A S = 0"):
        C.embedded_equations(pend, S=sp.Matrix([1, 0]))
    rheo = C.ConstrainedSystem(pend.model, C.Constraints(list(pend.model.q),
                                                         holonomic=[pend.model.q[0] - rd.equations.TIME]))
    with pytest.raises(ValueError, match="projected_equations: expected scleronomic"):
        C.projected_equations(rheo)
    chain_sys = C.ConstrainedSystem(models.planar_rr(), C.Constraints([X, Y], holonomic=[X]))
    with pytest.raises(TypeError, match="multiplier_equations: expected a system whose model is "
                                        "a MassMatrixForm"):
        C.multiplier_equations(chain_sys)


def test_bad_simulation_input():
    pend = example("pendulum")
    sim = C.simulate_constrained
    with pytest.raises(ValueError, match="simulate_constrained: t_final: expected a positive"):
        sim(pend, [1, 0], [0, 0], 0.0, values=PEND)
    with pytest.raises(ValueError, match="simulate_constrained: stabilization: expected None"):
        sim(pend, [1, 0], [0, 0], 1.0, values=PEND, stabilization="magic")
    with pytest.raises(ValueError, match="simulate_constrained: alpha, beta: expected both Baumgarte gains"):
        sim(pend, [1, 0], [0, 0], 1.0, values=PEND, stabilization="baumgarte")
    with pytest.raises(ValueError, match="simulate_constrained: beta: expected a gain >= 0"):
        sim(pend, [1, 0], [0, 0], 1.0, values=PEND, stabilization="baumgarte", alpha=1, beta=-1)
    with pytest.raises(ValueError, match="simulate_constrained: integrator: expected"):
        sim(pend, [1, 0], [0, 0], 1.0, values=PEND, integrator="euler")
    with pytest.raises(TypeError, match="simulate_constrained: tau: expected a callable"):
        sim(pend, [1, 0], [0, 0], 1.0, values=PEND, tau=[0, 0])
    with pytest.raises(ValueError, match="simulate_constrained: q0 .* expected a vector of length 2"):
        sim(pend, [1, 0, 0], [0, 0], 1.0, values=PEND)
    with pytest.raises(TypeError, match="simulate_constrained: system: expected a "
                                        "ConstrainedSystem"):
        sim(pend.model, [1, 0], [0, 0], 1.0)
    with pytest.raises(ValueError, match="constraint_controller: alpha: expected a gain >= 0"):
        C.constraint_controller(pend, PEND, alpha=-1)
    with pytest.raises(ValueError, match="project: q: expected a state near the constraint manifold, got one where the position iteration did not reach"):
        pend.constraints.numeric(PEND).project([1e-9, 0.0], [0, 0], max_iter=2)


def test_drift_warning():
    with pytest.warns(C.ConstraintWarning, match="the constraints drifted: residual"):
        C.simulate_constrained(example("pendulum"), [0.0, -2.0], [0, 0], 0.5, values=PEND,
                               project_initial=False)


# --------------------------------------------------------------------------
# the fast Udwadia-Kalaba inner loop (c-perf)
# --------------------------------------------------------------------------

@pytest.mark.parametrize("m", [1, 2, 4])
def test_fast_uk_matches_svd_route_and_kkt(m):
    # the Cholesky form q'' = a + M^-1 A^T (A M^-1 A^T)^-1 (b - A a) against the SVD form of
    # eq. (36) and the KKT solve, and its force A^T lambda against M q'' - F
    rng = np.random.default_rng(10 + m)
    n = 7
    M, F = random_spd(rng, n), rng.standard_normal(n)
    A, b = rng.standard_normal((m, n)), rng.standard_normal(m)
    fast = C._systems._uk_fast(M, F, A, b, "test")
    svd = C._systems._uk(M, np.linalg.cholesky(M), F, A, b)
    kkt = C.lagrange_multipliers(M, F, A, b)
    assert np.max(np.abs(fast.qdd - svd.qdd)) < 1e-10
    assert np.max(np.abs(fast.qdd - kkt.qdd)) < 1e-10
    assert np.max(np.abs(fast.constraint_force - (M @ fast.qdd - F))) < 1e-10
    assert np.max(np.abs(A @ fast.qdd - b)) < 1e-10


def test_fast_uk_falls_back_on_redundant_and_inconsistent_rows():
    rng = np.random.default_rng(3)
    M, F = random_spd(rng, 4), rng.standard_normal(4)
    A = rng.standard_normal((2, 4))
    A = np.vstack([A, A[0] + 2 * A[1]])                      # rank 2 of 3 rows
    b = rng.standard_normal(2)
    b_ok = np.append(b, b[0] + 2 * b[1])
    fast = C._systems._uk_fast(M, F, A, b_ok, "test")
    ref = C.lagrange_multipliers(M, F, A[:2], b)
    assert np.max(np.abs(fast.qdd - ref.qdd)) < 1e-10
    with pytest.warns(C.ConstraintWarning, match="test: the constraints are inconsistent"):
        C._systems._uk_fast(M, F, A, b_ok + [0, 0, 1.0], "test")
    zero_row = C._systems._uk_fast(M, F, np.zeros((1, 4)), np.zeros(1), "test")  # W = 0: no force
    assert np.allclose(zero_row.qdd, np.linalg.solve(M, F))
    with pytest.raises(ValueError, match="udwadia_kalaba: M: expected a symmetric positive"):
        C._systems._uk_fast(-np.eye(4), F, A, b_ok, "test")


def test_numeric_solve_with_baumgarte_terms_and_forces():
    # the one-call (A, b) with Baumgarte terms against the separate numeric twins
    system = models.rr_on_line()
    values = {"l1": 1, "l2": 0.8, "m1": 1, "m2": 0.7, "g": 9.81, "h": 0.5}
    num = C._simulation.NumericConstrained(system, values, "udwadia_kalaba")
    num.baumgarte = (3.0, 4.0)
    cn = num.constraints
    q, qd, tau = np.array([0.3, 0.6]), np.array([0.2, -0.4]), np.array([0.5, -1.0])
    phi, psi = cn.residuals(q, qd)
    b_ref = cn.b(q, qd) - 2 * 3.0 * psi - 16.0 * phi
    assert np.allclose(num.b(q, qd), b_ref, atol=1e-13)
    M, F = num.mass_matrix(q), num._F(q, qd, 0.0, tau)
    ref = C.lagrange_multipliers(M, F, cn.A(q), b_ref)
    assert np.max(np.abs(num.solve(q, qd, 0.0, tau).qdd - ref.qdd)) < 1e-10


def test_simulate_constrained_tolerances_and_long_output_interval():
    system, values = models.particle_pendulum(), {"m": 1, "l": 1, "g": 9.81}
    with pytest.raises(ValueError, match="simulate_constrained: rtol: expected a positive"):
        C.simulate_constrained(system, [1, 0], [0, 0], 1.0, values=values, rtol=0)
    with pytest.raises(ValueError, match="simulate_constrained: dt: expected a positive"):
        C.simulate_constrained(system, [1, 0], [0, 0], 1.0, values=values, dt=-0.1)
    run = C.simulate_constrained(system, [1, 0], [0, 0], 3.0, values=values, dt=1.5)
    assert run.t.tolist() == [0.0, 1.5, 3.0] and run.max_residual[0] < 1e-6
