"""The rolling disk (Part V, §6.5.2): Kane's equations with nonholonomic constraints.

Independent routes: sympy.physics.mechanics.KanesMethod for the same disk with the same split
of dependent and independent speeds; the no-slip condition and the energy computed with
sympy.physics.mechanics' own kinematics along a simulation; the stability threshold of upright
rolling from the linearization against its closed form w^2 = g / (3 r).
"""
import numpy as np
import pytest
import sympy as sp
import sympy.physics.mechanics as me
from scipy.integrate import solve_ivp

import robodyn as rd
from robodyn import kane, models

VALUES = {"r": 0.3, "m": 2.0, "g": 9.81}


def param(eom, name):
    """The parameter Symbol of ``eom`` called ``name``."""
    return next(s for s in eom.parameters() if s.name == name)


@pytest.fixture(scope="module")
def disk():
    return models.rolling_disk()


@pytest.fixture(scope="module")
def reference():
    return sympy_reference()


def sympy_reference():
    """The same disk in sympy.physics.mechanics: same coordinates, same speeds, u4 and u5
    dependent; numeric functions of (q, qd) or (q, u) with plain arguments."""
    x, y, psi, th, ph = qs = me.dynamicsymbols("x y psi theta phi")
    us = me.dynamicsymbols("u1:6")
    r, m, g = sp.symbols("r m g", positive=True)
    N = me.ReferenceFrame("N")
    A = N.orientnew("A", "Axis", (psi, N.z))
    L = A.orientnew("L", "Axis", (th, A.x))
    B = L.orientnew("B", "Axis", (ph, L.y))
    O = me.Point("O")
    O.set_vel(N, 0)
    C = O.locatenew("C", x * N.x + y * N.y + r * L.z)
    C.set_vel(N, C.pos_from(O).dt(N))
    slip = C.vel(N) + B.ang_vel_in(N).cross(-r * L.z)        # material point at the contact
    qd = [q.diff() for q in qs]
    speeds_of = dict(zip([th.diff(), ph.diff(), psi.diff(), x.diff(), y.diff()], us))
    kd = [u - d for d, u in speeds_of.items()]
    cons = [slip.dot(N.x).xreplace(speeds_of), slip.dot(N.y).xreplace(speeds_of)]
    body = me.RigidBody("disk", C, B, m, (me.inertia(L, m * r**2 / 4, m * r**2 / 2,
                                                    m * r**2 / 4), C))
    km = me.KanesMethod(N, q_ind=qs, u_ind=us[:3], u_dependent=us[3:], kd_eqs=kd,
                        velocity_constraints=cons)
    km.kanes_equations([body], [(C, -m * g * N.z)])
    energy = body.kinetic_energy(N) + m * g * C.pos_from(O).dot(N.z)

    plain_q = sp.symbols("x y psi theta phi")
    plain_qd = sp.symbols("xd yd psid thetad phid")
    plain_u = sp.symbols("u1:6")
    sub = dict(zip(qd, plain_qd))
    sub.update(zip(qs, plain_q))
    sub.update(zip(us, plain_u))
    vals = {r: VALUES["r"], m: VALUES["m"], g: VALUES["g"]}

    def fn(args, expr):
        expr = sp.Matrix(expr).xreplace(sub).xreplace(vals) if isinstance(expr, (list, sp.MatrixBase)) \
            else expr.xreplace(sub).xreplace(vals)
        return sp.lambdify(args, expr, "numpy")

    M_full, f_full = km.mass_matrix, km.forcing
    cons_A = sp.Matrix(cons).jacobian(us)
    return {
        "M": fn([plain_q, plain_u], M_full), "f": fn([plain_q, plain_u], f_full),
        "cons_A": fn([plain_q], cons_A),
        "slip": fn([plain_q, plain_qd], [slip.dot(N.x), slip.dot(N.y), slip.dot(N.z)]),
        "energy": fn([plain_q, plain_qd], energy),
    }


def reference_udot(ref, q, ui):
    """KanesMethod's accelerations of all five speeds at (q, independent speeds)."""
    A = np.array(ref["cons_A"](q), float)                 # constraints A u = 0
    ud = np.linalg.solve(A[:, 3:], -A[:, :3] @ ui)         # the dependent speeds u4, u5
    u = np.concatenate([ui, ud])
    return np.linalg.solve(np.array(ref["M"](q, u), float),
                           np.array(ref["f"](q, u), float).ravel()), u


def test_equals_kanesmethod_at_random_states(disk, reference):
    num = disk.numeric(VALUES)
    rng = np.random.default_rng(12)
    worst = 0.0
    for _ in range(12):
        q = rng.uniform(-1.2, 1.2, 5)
        ui = rng.uniform(-3, 3, 3)
        ref_udot, u_all = reference_udot(reference, q, ui)
        ours = num.accelerations(q, ui)
        qd = num.kinematics(q, ui)
        assert np.allclose(qd, [u_all[3], u_all[4], ui[2], ui[0], ui[1]], rtol=0, atol=1e-12)
        worst = max(worst, np.max(np.abs(ours - ref_udot[:3])))
        # the dependent speeds' derivatives: d/dt of u4 = r u2 cos(psi), u5 = r u2 sin(psi)
        r = VALUES["r"]
        u4d = r * ours[1] * np.cos(q[2]) - r * ui[1] * np.sin(q[2]) * ui[2]
        u5d = r * ours[1] * np.sin(q[2]) + r * ui[1] * np.cos(q[2]) * ui[2]
        assert np.allclose([u4d, u5d], ref_udot[3:], rtol=0, atol=1e-12)
    assert worst < 1e-12


def test_dependent_speeds_and_reduced_size(disk):
    x, y, psi, theta, phi = disk.q
    u1, u2, u3, u4, u5 = disk.all_speeds
    r = param(disk, "r")
    assert disk.dependent_speeds == {u4: r * u2 * sp.cos(psi), u5: r * u2 * sp.sin(psi)}
    assert disk.M.shape == (3, 3) and list(disk.u) == [u1, u2, u3]
    assert not disk.M.has(x, y, psi, phi)          # symmetry: only the lean enters M
    assert not any(e.has(u4, u5) for e in list(disk.f) + list(disk.qd))


def test_upright_rolling_straight_is_a_solution(disk):
    x, y, psi, theta, phi = disk.q
    u1, u2, u3 = disk.u
    upright = {theta: 0, u1: 0, u3: 0}
    assert disk.f.xreplace(upright).applyfunc(sp.simplify).is_zero_matrix
    assert sp.simplify(disk.M.xreplace(upright).det()) != 0
    # the contact point moves along the heading at r * spin rate
    r = param(disk, "r")
    assert (disk.qd.xreplace(upright) - sp.Matrix([r * u2 * sp.cos(psi), r * u2 * sp.sin(psi),
                                                   0, 0, u2])).is_zero_matrix


def test_critical_speed_of_upright_rolling(disk):
    w = sp.Symbol("w", positive=True)
    r, g = sp.Rational(3, 10), sp.Rational(981, 100)
    lin = kane.linearize(disk, [0, 0, 0, 0, 0], u0=[0, w, 0], values={"r": r, "m": 2, "g": g},
                         equilibrium=False)
    lam = sp.Symbol("lam")
    cp = sp.factor(lin.A.charpoly(lam).as_expr())
    # six zero eigenvalues (x, y, psi, phi, the spin speed and one of the lean-yaw block) and a
    # pair lam^2 = k(w)
    k = sp.solve(sp.cancel(cp / lam**6), lam**2)
    assert len(k) == 1
    wc = sp.solve(sp.Eq(k[0], 0), w)
    assert wc == [sp.sqrt(g / (3 * r))]
    assert sp.simplify(k[0] - sp.Rational(4, 5) * (g / r - 3 * w**2)) == 0
    wc = float(wc[0])
    for factor, unstable in ((0.9, True), (0.99, True), (1.01, False), (2.0, False)):
        ev = np.linalg.eigvals(np.array(lin.A.xreplace({w: factor * wc}).evalf(), float))
        if unstable:
            assert ev.real.max() > 1e-3
        else:
            assert np.abs(ev.real).max() < 1e-9 and np.abs(ev.imag).max() > 1e-3


def test_critical_speed_symbolic(disk):
    """The same threshold with r, m, g left as symbols: w_c^2 = g / (3 r) for any disk."""
    w = sp.Symbol("w", positive=True)
    lin = kane.linearize(disk, [0, 0, 0, 0, 0], u0=[0, w, 0], equilibrium=False)
    lam = sp.Symbol("lam")
    k = sp.solve(sp.cancel(lin.A.charpoly(lam).as_expr() / lam**6), lam**2)
    r, g = param(disk, "r"), param(disk, "g")
    assert sp.solve(k[0], w) == [sp.sqrt(g / (3 * r))]


def simulate(disk, spin, T, lean=0.02):
    num = disk.numeric(VALUES)
    x0 = np.array([0, 0, 0, lean, 0, 0.0, spin, 0.0])
    return solve_ivp(num.rhs, (0, T), x0, method="DOP853", rtol=1e-11, atol=1e-12,
                     dense_output=True)


@pytest.mark.parametrize("factor", [0.8, 2.0])
def test_simulation_rolls_without_slipping_and_keeps_energy(disk, reference, factor):
    wc = np.sqrt(VALUES["g"] / (3 * VALUES["r"]))
    T = 1.0 if rd.quick_mode() else 3.0
    sol = simulate(disk, factor * wc, T)
    assert sol.success
    ts = np.linspace(0.05, T - 0.05, 40)
    h = 1e-4
    E0 = None
    for t in ts:
        q = sol.sol(t)[:5]
        # velocities from the trajectory alone: 4th-order central differences
        qd = (8 * (sol.sol(t + h) - sol.sol(t - h)) - sol.sol(t + 2 * h) + sol.sol(t - 2 * h))[:5] \
            / (12 * h)
        slip = np.array(reference["slip"](q, qd), float).ravel()
        assert np.abs(slip).max() < 1e-7
        E = float(reference["energy"](q, qd))
        E0 = E if E0 is None else E0
        assert abs(E - E0) < 1e-6 * abs(E0)
    # sharper: energy at the integrator's own states, with qd from the equations
    num = disk.numeric(VALUES)
    Es = [float(reference["energy"](x[:5], num.kinematics(x[:5], x[5:]))) for x in sol.y.T]
    assert np.ptp(Es) < 1e-9 * abs(Es[0])


def test_slow_disk_falls_fast_disk_stays_up(disk):
    wc = np.sqrt(VALUES["g"] / (3 * VALUES["r"]))
    T = 2.0 if rd.quick_mode() else 4.0
    slow = simulate(disk, 0.3 * wc, T).y[3]
    fast = simulate(disk, 3.0 * wc, T).y[3]
    assert np.abs(slow).max() > 0.3           # the lean grows far beyond the 0.02 rad push
    assert np.abs(fast).max() < 0.05          # the lean stays near the push


@pytest.mark.parametrize("kwargs, err, match", [
    (dict(radius=-0.1), ValueError, "rolling_disk: radius: expected a positive number"),
    (dict(radius=0), ValueError, "rolling_disk: radius"),
    (dict(mass=0.0), ValueError, "rolling_disk: mass: expected a positive number"),
    (dict(gravity=-9.81), ValueError, "rolling_disk: gravity: expected a non-negative number"),
    (dict(radius="0.1"), TypeError, "rolling_disk: radius: expected a real number"),
    (dict(mass=float("nan")), ValueError, "rolling_disk: mass"),
])
def test_bad_input(kwargs, err, match):
    with pytest.raises(err, match=match):
        models.rolling_disk(**kwargs)


def test_numeric_parameters_give_the_same_equations(disk):
    num_sym = disk.numeric(VALUES)
    num = models.rolling_disk(VALUES["r"], VALUES["m"], VALUES["g"]).numeric()
    rng = np.random.default_rng(3)
    for _ in range(4):
        q, u = rng.uniform(-1, 1, 5), rng.uniform(-2, 2, 3)
        assert np.allclose(num.accelerations(q, u), num_sym.accelerations(q, u), atol=1e-12)


def test_critical_speed_of_any_wheel_and_the_hoop():
    """A wheel of central inertia m r^2 diag(a, b, a): w_c^2 = (g / r) a / (b (1 + b)), so
    g / (3 r) for the disk (1/4, 1/2) and g / (4 r) for the hoop (1/2, 1) (exercise 4)."""
    w, lam = sp.Symbol("w", positive=True), sp.Symbol("lam")
    for a, b, expected in ((sp.Rational(1, 2), 1, sp.Rational(1, 4)),
                           (sp.Rational(3, 10), sp.Rational(1, 2), sp.Rational(2, 5))):
        wheel = models.rolling_disk(inertia_factors=(a, b))
        lin = kane.linearize(wheel, [0] * 5, u0=[0, w, 0], equilibrium=False)
        k = sp.solve(sp.cancel(lin.A.charpoly(lam).as_expr() / lam**6), lam**2)
        r, g = param(wheel, "r"), param(wheel, "g")
        assert sp.solve(k[0], w) == [sp.sqrt(expected * g / r)]
        assert expected == a / (b * (1 + b))


@pytest.mark.parametrize("factors, match", [
    ((0.25,), "inertia_factors: expected two numbers"),
    ((0.25, 0.6), "expected b <= 2a"),
    ((0, 0.5), r"inertia_factors\[0\]: expected a positive number"),
    ("disk", "inertia_factors: expected two numbers"),
])
def test_bad_inertia_factors(factors, match):
    with pytest.raises(ValueError, match=match):
        models.rolling_disk(inertia_factors=factors)
