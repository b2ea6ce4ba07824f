"""Kane's method on a genuinely nonholonomic system (the Chaplygin sleigh) and on a closed
loop (the four-bar linkage) -- Part V, issue #23.

Independent routes: sympy.physics.mechanics.KanesMethod (``u_dependent``, and for the
four-bar ``q_dependent`` with configuration constraints); Part III's constrained systems
solved with multipliers (and its other methods); the sleigh's closed-form first integrals
(energy) and its asymptotic alignment; the closure residual computed from the coordinates.
"""
import numpy as np
import pytest
import sympy as sp
import sympy.physics.mechanics as me
from scipy.integrate import solve_ivp

from robodyn import constraints, models
from robodyn.constraints import Constraints, ConstrainedSystem, lagrangian_equations

SLEIGH = dict(offset=0.3, mass=2.0, length=1.0, width=0.4)
FOURBAR = dict(a=0.5, b=2.0, c=1.5, d=2.0, masses=(1.0, 2.0, 1.5), gravity=9.81)
LENGTHS = (0.5, 2.0, 1.5, 2.0)


# --------------------------------------------------------------------------
# the Chaplygin sleigh
# --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def sleigh():
    return models.chaplygin_sleigh(**SLEIGH)


def sleigh_kanesmethod():
    """The same sleigh in sympy.physics.mechanics: speeds u1 (forward), u2 (yaw), u3 (lateral,
    dependent, = 0); numeric udot of (q, u1, u2)."""
    x, y, th = qs = me.dynamicsymbols("x y theta")
    u1, u2, u3 = us = me.dynamicsymbols("u1:4")
    a, m, l, b = (SLEIGH[k] for k in ("offset", "mass", "length", "width"))
    N = me.ReferenceFrame("N")
    B = N.orientnew("B", "Axis", (th, N.z))
    O = me.Point("O")
    O.set_vel(N, 0)
    P = O.locatenew("P", x * N.x + y * N.y)
    G = P.locatenew("G", a * B.x)
    kd = [u1 - (sp.cos(th) * x.diff() + sp.sin(th) * y.diff()), u2 - th.diff(),
          u3 - (-sp.sin(th) * x.diff() + sp.cos(th) * y.diff())]
    km = me.KanesMethod(N, q_ind=qs, u_ind=[u1, u2], u_dependent=[u3], kd_eqs=kd,
                        velocity_constraints=[u3])
    plate = me.RigidBody("plate", G, B, m, (me.inertia(B, 0, 0, m * (l**2 + b**2) / 12), G))
    P.set_vel(B, 0)
    G.set_vel(B, 0)
    km.kanes_equations([plate], [])
    plain = sp.symbols("x y theta u1 u2 u3")
    sub = dict(zip(list(qs) + list(us), plain))
    fM = sp.lambdify([plain], km.mass_matrix.xreplace(sub))
    ff = sp.lambdify([plain], km.forcing.xreplace(sub))

    def udot(q, ui):
        z = [*q, *ui, 0.0]
        return np.linalg.solve(np.array(fM(z), float), np.array(ff(z), float).ravel())
    return udot


def sleigh_multipliers():
    """Part III's form: the plate's Lagrangian in q = (x, y, theta) of P, the Pfaffian
    constraint of no lateral slip at P, solved with Lagrange multipliers."""
    x, y, th = sp.symbols("x y theta", real=True)
    xd, yd, thd = sp.symbols("x_dot y_dot theta_dot", real=True)
    a, m, l, b = (SLEIGH[k] for k in ("offset", "mass", "length", "width"))
    vGx = xd - a * sp.sin(th) * thd
    vGy = yd + a * sp.cos(th) * thd
    T = m / 2 * (vGx**2 + vGy**2) + m * (l**2 + b**2) / 24 * thd**2
    eq = lagrangian_equations(T, 0, [x, y, th], [xd, yd, thd], name="plate")
    return ConstrainedSystem(eq, Constraints([x, y, th], pfaffian=[[-sp.sin(th), sp.cos(th), 0]]),
                             name="Chaplygin sleigh").numeric(method="multipliers")


def test_sleigh_equals_kanesmethod_and_multipliers(sleigh):
    num = sleigh.numeric()
    ref = sleigh_kanesmethod()
    mult = sleigh_multipliers()
    rng = np.random.default_rng(23)
    for _ in range(10):
        q = rng.uniform(-2, 2, 3)
        ui = rng.uniform(-2, 2, 2)
        ours = num.accelerations(q, ui)
        assert np.allclose(ours, ref(q, ui)[:2], rtol=0, atol=1e-12)
        c, s = np.cos(q[2]), np.sin(q[2])
        qd = np.array([ui[0] * c, ui[0] * s, ui[1]])
        assert np.allclose(num.kinematics(q, ui), qd, atol=1e-14)
        qdd = mult.accelerations(q, qd)
        # u1 = c xd + s yd: u1_dot = c xdd + s ydd + theta_dot (-s xd + c yd) (last term 0)
        assert np.allclose([c * qdd[0] + s * qdd[1], qdd[2]], ours, rtol=0, atol=1e-12)


def test_sleigh_closed_form(sleigh):
    a, m, l, b = (SLEIGH[k] for k in ("offset", "mass", "length", "width"))
    u1, u2 = sleigh.u
    I = m * (l**2 + b**2) / 12
    M = np.array(sleigh.M, float)
    assert np.allclose(M, np.diag([m, I + m * a**2]))
    assert sp.simplify(sleigh.f[0] - m * a * u2**2) == 0
    assert sp.simplify(sleigh.f[1] + m * a * u1 * u2) == 0


def test_sleigh_energy_and_alignment(sleigh):
    a, m, l, b = (SLEIGH[k] for k in ("offset", "mass", "length", "width"))
    I = m * (l**2 + b**2) / 12 + m * a**2
    rhs = sleigh.numeric().rhs
    x0 = np.array([0.0, 0.0, 0.0, -0.5, 2.0])          # backwards and spinning
    sol = solve_ivp(rhs, (0, 40), x0, rtol=1e-11, atol=1e-12, dense_output=True)
    u1, u2 = sol.y[3], sol.y[4]
    E = 0.5 * m * u1**2 + 0.5 * I * u2**2
    assert np.max(np.abs(E - E[0])) < 1e-8 * E[0]
    assert abs(u2[-1]) < 1e-3 and np.isclose(u1[-1], np.sqrt(2 * E[0] / m), rtol=1e-6)
    # lateral slip of the blade from the coordinates: -sin(th) xd + cos(th) yd = 0
    for t in np.linspace(0, 40, 9):
        y = sol.sol(t)
        qd = sleigh.numeric().kinematics(y[:3], y[3:])
        assert abs(-np.sin(y[2]) * qd[0] + np.cos(y[2]) * qd[1]) < 1e-12
    # the knife edge (a = 0) does not align: the yaw rate is constant
    knife = models.chaplygin_sleigh(0.0, 2.0, 1.0, 0.4).numeric().rhs
    assert np.allclose(knife(0.0, x0)[3:], 0.0)


def test_sleigh_bad_input():
    with pytest.raises(ValueError, match="offset.*length / 2"):
        models.chaplygin_sleigh(0.8, 1.0, 1.0, 0.4)
    with pytest.raises(ValueError, match="offset"):
        models.chaplygin_sleigh(float("inf"), 1.0, 1.0, 0.4)
    with pytest.raises(TypeError, match="offset"):
        models.chaplygin_sleigh("0.1", 1.0, 1.0, 0.4)
    with pytest.raises(ValueError, match="mass"):
        models.chaplygin_sleigh(0.1, -1.0, 1.0, 0.4)


# --------------------------------------------------------------------------
# the four-bar linkage
# --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def fourbar():
    return models.four_bar_kane(**FOURBAR)


def consistent_state(th1, u1):
    """A configuration on the loop near the open crank--rocker assembly, and its speeds."""
    q = models.four_bar_close([th1, 0.6, 1.6], LENGTHS)
    return q, np.concatenate([[u1], models.four_bar_dependent_speeds(q, u1, LENGTHS)])


def part3_values():
    a, b, c, d = LENGTHS
    names = dict(a=a, b=b, c=c, d=d, m1=1.0, m2=2.0, m3=1.5)
    return names


@pytest.mark.parametrize("method", constraints.METHODS)
def test_fourbar_equals_part3(fourbar, method):
    num = fourbar.numeric()
    sys3 = models.four_bar()
    vals = part3_values()
    vals.update({p.name: 9.81 for p in sys3.model.parameters() if p.name == "g"})
    ref = sys3.numeric(vals, method=method)
    for th1, u1 in ((0.3, 1.0), (1.7, -2.0), (3.5, 0.5), (5.0, 3.0)):
        q, u = consistent_state(th1, u1)
        ours = num.accelerations(q, [u1])[0]
        qdd = ref.accelerations(q, u)
        assert np.isclose(ours, qdd[0], rtol=1e-9, atol=1e-9)
        assert np.allclose(num.kinematics(q, [u1]), u, atol=1e-12)


def fourbar_kanesmethod():
    """KanesMethod with q_dependent and configuration constraints (the loop), u_dependent."""
    q1, q2, q3 = qs = me.dynamicsymbols("th1:4")
    u1, u2, u3 = us = me.dynamicsymbols("u1:4")
    a, b, c, d = LENGTHS
    ms, g = FOURBAR["masses"], FOURBAR["gravity"]
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    frames = [N.orientnew(f"R{k}", "Axis", (qk, N.z)) for k, qk in enumerate(qs)]
    bodies, loads, P = [], [], O
    for k, (R, l, m) in enumerate(zip(frames, (a, b, c), ms)):
        G = P.locatenew(f"G{k}", l / 2 * R.x)
        G.v2pt_theory(P, N, R)
        R.set_ang_vel(N, us[k] * N.z)
        bodies.append(me.RigidBody(f"rod{k}", G, R, m, (me.inertia(R, 0, 0, m * l**2 / 12), G)))
        loads.append((G, -m * g * N.y))
        P = P.locatenew(f"P{k}", l * R.x)
        P.v2pt_theory(O if k == 0 else P, N, R)
    loop = [a * sp.cos(q1) + b * sp.cos(q2) + c * sp.cos(q3) - d,
            a * sp.sin(q1) + b * sp.sin(q2) + c * sp.sin(q3)]
    vel = [sp.diff(e, me.dynamicsymbols._t).xreplace({qk.diff(): uk for qk, uk in zip(qs, us)})
           for e in loop]
    # velocities of the mass centres from the kinematics, with qd = u
    for k, B in enumerate(bodies):
        r = B.masscenter.pos_from(O).to_matrix(N)
        v = r.diff(me.dynamicsymbols._t).xreplace({qk.diff(): uk for qk, uk in zip(qs, us)})
        B.masscenter.set_vel(N, v[0] * N.x + v[1] * N.y)
    km = me.KanesMethod(N, q_ind=[q1], q_dependent=[q2, q3], configuration_constraints=loop,
                        u_ind=[u1], u_dependent=[u2, u3], velocity_constraints=vel,
                        kd_eqs=[qk.diff() - uk for qk, uk in zip(qs, us)])
    km.kanes_equations(bodies, loads)
    plain = sp.symbols("th1:4 u1:4")
    sub = dict(zip(list(qs) + list(us), plain))
    fM = sp.lambdify([plain], km.mass_matrix.xreplace(sub))
    ff = sp.lambdify([plain], km.forcing.xreplace(sub))
    return lambda z: np.linalg.solve(np.array(fM(z), float), np.array(ff(z), float).ravel())


def test_fourbar_equals_kanesmethod(fourbar):
    num = fourbar.numeric()
    ref = fourbar_kanesmethod()
    for th1, u1 in ((0.3, 1.0), (2.2, -1.5), (4.4, 2.5)):
        q, u = consistent_state(th1, u1)
        assert np.isclose(num.accelerations(q, [u1])[0], ref([*q, *u])[0], rtol=1e-9, atol=1e-9)


def test_fourbar_drift_and_its_correction(fourbar):
    """Integrating all three angles with the Kane equation lets the closure drift at the
    integrator's tolerance; closing the loop after each step removes it, and the crank's
    motion agrees with the multiplier solution of Part III."""
    rhs = fourbar.numeric().rhs
    q0, _ = consistent_state(0.3, 2.0)
    x0 = np.concatenate([q0, [2.0]])
    loose = solve_ivp(rhs, (0, 5), x0, rtol=1e-6, atol=1e-8, dense_output=True)
    drift = max(np.max(np.abs(models.four_bar_closure(loose.sol(t)[:3], LENGTHS)))
                for t in np.linspace(0, 5, 51))
    assert 1e-8 < drift < 1e-2
    x, t, worst = x0.copy(), 0.0, 0.0
    for t1 in np.linspace(0.1, 5, 50):
        x = solve_ivp(rhs, (t, t1), x, rtol=1e-6, atol=1e-8).y[:, -1]
        x[:3] = models.four_bar_close(x[:3], LENGTHS)
        worst, t = max(worst, np.max(np.abs(models.four_bar_closure(x[:3], LENGTHS)))), t1
    assert worst < 1e-12
    tight = solve_ivp(rhs, (0, 5), x0, rtol=1e-11, atol=1e-12).y[:, -1]
    assert abs(x[0] - tight[0]) < 1e-4


def test_fourbar_singular_loop_named():
    toggle = [np.pi, 0.0, 0.0]                     # coupler and rocker aligned
    with pytest.raises(ValueError, match=r"singular at \(th1 = 3.14159, th2 = 0, th3 = 0\)"):
        models.four_bar_dependent_speeds(toggle, 1.0, LENGTHS)
    with pytest.raises(ValueError, match="toggle"):
        models.four_bar_close(toggle, LENGTHS)
    with pytest.raises(ValueError, match="lengths"):
        models.four_bar_closure([0, 0, 0], (1, 2, 3))
    with pytest.raises(ValueError, match="masses"):
        models.four_bar_kane(1, 2, 2, 2, (1, 1), 0)
