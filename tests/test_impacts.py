"""Tests of robodyn.impacts and robodyn.walking: the impact map (5.28)-(5.31) against its
defining properties and closed forms, the hybrid simulator (event location, Zeno guard, event
log), the rimless wheel and the compass-gait walker (Goswami, Thuilot and Espiau 1996), and
every bad-input path."""
import numpy as np
import pytest
import sympy as sp

import robodyn
from robodyn import impacts, walking
from robodyn.impacts import (HybridSystem, Surface, fixed_point, impact_map, return_map,
                             simulate_hybrid)

RNG = np.random.default_rng(11)


def random_spd(n, rng=RNG):
    A = rng.normal(size=(n, n))
    return A @ A.T + n * np.eye(n)


def approaching_case(n, p, rng=RNG):
    M, J = random_spd(n, rng), rng.normal(size=(p, n))
    qd = rng.normal(size=n)
    v = J @ qd
    # flip the normal part so that every row approaches: qd -> qd - J^+ (v + |v|)
    qd = qd - np.linalg.pinv(J) @ (v + np.abs(v) + 0.1)
    assert np.all(J @ qd < 0)
    return M, J, qd


def kinetic(M, qd):
    return 0.5 * qd @ M @ qd


# --------------------------------------------------------------------------
# the impact map
# --------------------------------------------------------------------------

def test_top_level_name():
    assert robodyn.impact_map is impact_map


@pytest.mark.equation("hb-5-30", "hb-5-31")
@pytest.mark.parametrize("n,p", [(2, 1), (3, 1), (4, 2), (6, 3)])
@pytest.mark.parametrize("e", [0.0, 0.3, 0.8, 1.0])
def test_impact_map_properties(n, p, e):
    """J qd+ = -e J qd-; M(qd+ - qd-) lies in the row space of J (momentum jumps along dphi);
    the velocity jump is M-orthogonal to the tangent space; energy lost = (1 - e^2) x the
    normal part; tangential momentum (M qd paired with tangent vectors) unchanged."""
    M, J, qd = approaching_case(n, p)
    r = impact_map(M, J, qd, e)
    assert np.allclose(J @ r.qd_plus, -e * (J @ qd), atol=1e-12)
    jump = M @ (r.qd_plus - qd)
    assert np.allclose(jump, J.T @ r.impulse, atol=1e-12)
    # tangent vectors w (J w = 0): momentum along them unchanged, jump M-orthogonal to them
    W = np.linalg.svd(J)[2][p:].T
    assert np.allclose(W.T @ M @ r.qd_plus, W.T @ M @ qd, atol=1e-11)
    assert np.allclose(W.T @ jump, 0, atol=1e-11)
    v = J @ qd
    normal_energy = 0.5 * v @ np.linalg.solve(J @ np.linalg.solve(M, J.T), v)
    lost = kinetic(M, qd) - kinetic(M, r.qd_plus)
    assert lost == pytest.approx((1 - e ** 2) * normal_energy, rel=1e-11, abs=1e-13)
    assert r.energy_lost == pytest.approx(lost, rel=1e-10, abs=1e-12)
    assert np.all(r.impulse >= -1e-12) or p > 1         # a single contact pushes, never pulls


@pytest.mark.equation("hb-5-31")
def test_elastic_conserves_energy_to_1e12():
    for n, p in [(2, 1), (5, 2), (7, 3)]:
        M, J, qd = approaching_case(n, p)
        r = impact_map(M, J, qd, 1.0)
        assert abs(kinetic(M, r.qd_plus) - kinetic(M, qd)) <= 1e-12 * kinetic(M, qd)
        assert r.energy_lost == 0.0


@pytest.mark.equation("hb-5-31")
def test_plastic_is_the_M_orthogonal_projection():
    """e = 0: qd+ minimises the kinetic metric distance |qd - qd-|_M over J qd = 0 (solved as a
    KKT system), and applying it twice changes nothing (a projection)."""
    M, J, qd = approaching_case(4, 2)
    r = impact_map(M, J, qd, 0.0)
    K = np.block([[M, J.T], [J, np.zeros((2, 2))]])
    sol = np.linalg.solve(K, np.concatenate([M @ qd, np.zeros(2)]))
    assert np.allclose(r.qd_plus, sol[:4], atol=1e-12)
    again = impact_map(M, J, r.qd_plus, 0.0)
    assert np.allclose(again.qd_plus, r.qd_plus, atol=1e-12)


def test_two_body_collision_closed_form():
    """Two masses on a line, phi = x2 - x1: the textbook formulas
    v1+ = (m1 v1 + m2 v2 + m2 e (v2 - v1)) / (m1 + m2), and momentum conserved."""
    m1, m2, v1, v2 = 2.0, 3.0, 4.0, -1.0
    for e in (0.0, 0.5, 1.0):
        r = impact_map(np.diag([m1, m2]), [-1.0, 1.0], [v1, v2], e)
        P = m1 * v1 + m2 * v2
        assert r.qd_plus[0] == pytest.approx((P + m2 * e * (v2 - v1)) / (m1 + m2), rel=1e-14)
        assert r.qd_plus[1] == pytest.approx((P + m1 * e * (v1 - v2)) / (m1 + m2), rel=1e-14)
        assert m1 * r.qd_plus[0] + m2 * r.qd_plus[1] == pytest.approx(P, rel=1e-14)
        mu = m1 * m2 / (m1 + m2)
        assert r.energy_lost == pytest.approx(0.5 * mu * (1 - e ** 2) * (v1 - v2) ** 2, rel=1e-13)


def test_ball_on_ground_and_slope_closed_form():
    r = impact_map(2 * np.eye(2), [0.0, 1.0], [1.0, -3.0], 0.5)
    assert np.allclose(r.qd_plus, [1.0, 1.5]) and np.allclose(r.impulse, [9.0])
    b = 0.3
    n, t = np.array([np.sin(b), np.cos(b)]), np.array([np.cos(b), -np.sin(b)])
    v = 2.0 * t - 5.0 * n
    r = impact_map(np.eye(2), n, v, 0.7)
    assert np.allclose(r.qd_plus, 2.0 * t + 3.5 * n, atol=1e-14)


@pytest.mark.equation("hb-5-29", "hb-5-30", "hb-5-31")
def test_symbolic_matches_numeric_and_closed_form():
    m1, m2, v1, v2, e = sp.symbols("m1 m2 v1 v2 e", positive=True)
    r = impact_map(sp.diag(m1, m2), [[-1, 1]], [v1, v2], e)
    expected = (m1 * v1 + m2 * v2 + m2 * e * (v2 - v1)) / (m1 + m2)
    assert sp.simplify(r.qd_plus[0] - expected) == 0
    assert sp.simplify(r.energy_lost - m1 * m2 * (1 - e ** 2) * (v1 - v2) ** 2
                       / (2 * (m1 + m2))) == 0
    # momentum pairing (5.29): (p+ - p-) . dq = 0 for every admissible variation dq = (1, 1)
    jump = sp.diag(m1, m2) * (r.qd_plus - sp.Matrix([v1, v2]))
    assert sp.simplify(jump[0] + jump[1]) == 0
    num = impact_map(np.diag([2.0, 3.0]), [-1.0, 1.0], [4.0, -1.0], 0.5)
    sub = {m1: 2, m2: 3, v1: 4, v2: -1, e: sp.Rational(1, 2)}
    assert np.allclose([float(x.subs(sub)) for x in r.qd_plus], num.qd_plus, atol=1e-14)


@pytest.mark.equation("hb-5-28", "hb-5-29")
def test_impact_as_limit_of_a_stiff_contact():
    """The Lagrange-d'Alembert route: a very stiff, lossless penalty spring on the wall is a
    force Y in (5.28); integrating through the contact gives the elastic impact map in the
    limit k -> infinity (RR arm tip against a wall, independent of impact_map)."""
    from scipy.integrate import solve_ivp
    arm = walking.rr_arm_against_wall(1.6, 1.0, g=0.0)
    num, tip = arm.form, arm.surfaces[0]
    q0, qd0 = np.array([-1.2, 0.9]), np.array([1.5, 0.4])
    assert tip.phi(q0) > 0
    hit = simulate_hybrid(impacts.HybridSystem(num, (Surface("tip", tip.phi, tip.jacobian,
                                                             1.0, terminal=True),)),
                          q0, qd0, 5.0)
    qc, qdc = hit.q[-1], hit.qd[-1]
    r = impact_map(num.mass_matrix(qc), tip.jacobian(qc), qdc, 1.0)
    errors = []
    for k in (1e6, 1e8):
        def rhs(t, y):
            q, qd = y[:2], y[2:]
            Y = tip.jacobian(q) * (k * max(-tip.phi(q), 0.0))
            return np.concatenate([qd, np.linalg.solve(num.mass_matrix(q),
                                                       num.forcing(q, qd) + Y)])

        def leave(t, y):
            return tip.phi(y[:2]) - 1e-12
        leave.terminal, leave.direction = True, 1
        sol = solve_ivp(rhs, (0, 1e-1), np.concatenate([qc, qdc]), method="LSODA",
                        rtol=1e-11, atol=1e-13, events=leave, first_step=1e-9)
        errors.append(np.max(np.abs(sol.y_events[0][0][2:] - r.qd_plus)))
    assert errors[1] < 5e-3 and errors[1] < errors[0] / 5      # converges as k grows


# --------------------------------------------------------------------------
# bad input of impact_map
# --------------------------------------------------------------------------

def test_impact_map_bad_input():
    M, J, qd = np.eye(2), [0.0, 1.0], [0.0, -1.0]
    with pytest.raises(ValueError, match=r"impact_map: J: expected full row rank"):
        impact_map(np.eye(3), [[1, 0, 0], [2, 0, 0]], [-1, 0, 0], 0.5)
    with pytest.raises(ValueError, match=r"impact_map: J: expected full row rank"):
        impact_map(M, [0.0, 0.0], qd, 0.5)
    with pytest.raises(ValueError, match=r"impact_map: J: expected full row rank"):
        impact_map(M, np.eye(3)[:, :2], qd, 0.5)
    with pytest.raises(ValueError, match=r"restitution: expected a coefficient (e|of restitution) in \[0, 1\]"):
        impact_map(M, J, qd, 1.2)
    with pytest.raises(ValueError, match=r"restitution: expected a coefficient (e|of restitution) in \[0, 1\]"):
        impact_map(M, J, qd, -0.1)
    with pytest.raises(ValueError, match=r"moves away from it, there is no impact"):
        impact_map(M, J, [0.0, 1.0], 0.5)
    with pytest.raises(ValueError, match=r"M: expected a positive definite"):
        impact_map(np.diag([1.0, -1.0]), J, qd, 0.5)
    with pytest.raises(ValueError, match=r"M: expected a symmetric"):
        impact_map([[1.0, 0.5], [0.0, 1.0]], J, qd, 0.5)
    with pytest.raises(ValueError, match=r"M: expected a square"):
        impact_map(np.ones((2, 3)), J, qd, 0.5)
    with pytest.raises(ValueError, match=r"J: expected p x 2"):
        impact_map(M, [1.0, 0.0, 0.0], qd, 0.5)
    with pytest.raises(ValueError, match=r"qd_minus: expected a vector of length 2"):
        impact_map(M, J, [1.0], 0.5)
    with pytest.raises(TypeError, match=r"impact_map: restitution: expected a real number"):
        impact_map(M, J, qd, "half")
    with pytest.raises(TypeError, match=r"impact_map: J: expected an array of numbers"):
        impact_map(M, "J", qd, 0.5)
    with pytest.raises(ValueError, match=r"impact_map: normal_rows: expected at most 0, got 3 "
                                         r"\(row indices in \[0, 1\)"):
        impact_map(M, J, qd, 0.5, normal_rows=[3])
    with pytest.raises(ValueError, match=r"impact_map: J: expected full row rank"):
        impact_map(sp.eye(2), [[sp.Symbol("a"), 0], [2 * sp.Symbol("a"), 0]], [0, -1], 0)
    # a tangential row (not unilateral) may have any sign when excluded from the check
    r = impact_map(M, [[1.0, 0.0], [0.0, 1.0]], [0.5, -1.0], 0.0, normal_rows=[1])
    assert np.allclose(r.qd_plus, 0.0)


# --------------------------------------------------------------------------
# the hybrid simulator
# --------------------------------------------------------------------------

@pytest.mark.parametrize("e", [0.3, 0.5, 0.8])
def test_bouncing_ball_zeno_time_matches_closed_form(e):
    tr = simulate_hybrid(walking.bouncing_ball(e), [0.0, 1.0], [0.0, 0.0], 10.0,
                         after_zeno="stop")
    assert tr.stop_reason == "zeno" and "accumulate" in tr.message
    assert tr.zeno_time == pytest.approx(walking.ball_zeno_time(1.0, e), abs=1e-8)
    assert tr.t_end == tr.zeno_time and tr.t[-1] == tr.zeno_time
    # the final state rests on the ground: no normal velocity
    assert abs(tr.qd[-1, 1]) < 1e-12 and abs(tr.q[-1, 1]) < 1e-9
    # the log: each bounce loses (1 - e^2) of the normal kinetic energy, the rebound is e v
    for ev in tr.events:
        assert ev.energy_lost == pytest.approx((1 - e ** 2) * 0.5 * ev.qd_before[1] ** 2,
                                               rel=1e-12)
        assert ev.qd_after[1] == pytest.approx(-e * ev.qd_before[1], rel=1e-12)
        assert abs(ev.phi) <= 1e-10 and ev.surface == "ground"
    # energy staircase: constant between bounces, drops by the logged amounts
    E0, E_end = tr.energy[0], tr.energy[-1]
    assert E0 - E_end == pytest.approx(tr.energy_lost.sum(), rel=1e-8)


def test_ball_on_slope_keeps_tangential_momentum_and_zeno_time():
    b, e = 0.2, 0.6
    ball = walking.bouncing_ball(e, slope=b)
    t_dir = np.array([np.cos(b), -np.sin(b)])
    tr = simulate_hybrid(ball, [0.0, 1.0], [1.0, 0.0], 10.0)
    for ev in tr.events:
        assert ev.qd_after @ t_dir == pytest.approx(ev.qd_before @ t_dir, rel=1e-13)
    h = 1.0 * np.cos(b)
    v0 = np.array([1.0, 0.0]) @ np.array([np.sin(b), np.cos(b)])
    assert tr.zeno_time == pytest.approx(walking.ball_zeno_time(h, e, v0, b), abs=1e-8)


def test_elastic_ball_bounces_forever_within_max_events():
    tr = simulate_hybrid(walking.bouncing_ball(1.0), [0.0, 1.0], [0.0, 0.0], 1e6,
                         max_events=25)
    assert tr.stop_reason == "max_events" and len(tr.events) == 25
    assert np.allclose(tr.energy, tr.energy[0], rtol=1e-8)
    gaps = np.diff(tr.event_times)
    assert np.allclose(gaps, 2 * np.sqrt(2 / 9.81), rtol=1e-8)


def test_event_rate_bound_and_rest_speed():
    tr = simulate_hybrid(walking.bouncing_ball(0.9), [0, 1.0], [0, 0], 100.0, max_event_rate=10.0,
                         after_zeno="stop")
    assert tr.stop_reason == "zeno" and np.diff(tr.event_times)[-1] < 0.1
    assert tr.zeno_time == pytest.approx(walking.ball_zeno_time(1.0, 0.9), abs=1e-7)
    # a plastic landing: no rebound, the ball slides on along the ground to t_final
    tr = simulate_hybrid(walking.bouncing_ball(0.0), [0, 1.0], [0.5, 0], 100.0)
    assert tr.stop_reason == "t_final" and len(tr.events) == 1
    assert tr.events[0].time == pytest.approx(np.sqrt(2 / 9.81), abs=1e-10)
    assert tr.qd[-1] == pytest.approx([0.5, 0.0], abs=1e-9)
    assert tr.q[-1] == pytest.approx([50.0, 0.0], abs=1e-8)


def test_pendulum_leaning_on_wall_is_zeno():
    tr = simulate_hybrid(walking.pendulum_against_wall(-0.3, 0.5), [-1.0], [0.0], 50.0,
                         after_zeno="stop")
    assert tr.stop_reason == "zeno" and tr.zeno_time < 50.0
    assert tr.q[-1, 0] == pytest.approx(-0.3, abs=1e-9) and abs(tr.qd[-1, 0]) < 1e-12
    # continued: it leans on the wall (resting contact) until t_final
    tr = simulate_hybrid(walking.pendulum_against_wall(-0.3, 0.5), [-1.0], [0.0], 50.0)
    assert tr.stop_reason == "t_final" and tr.t[-1] == 50.0
    assert tr.q[-1, 0] == pytest.approx(-0.3, abs=1e-9) and abs(tr.qd[-1, 0]) < 1e-9


def test_rr_arm_several_contacts_at_once():
    """Elbow and tip against the wall at once: the stacked Jacobian of the two surfaces gives
    J qd+ = -e J qd- for both rows; in simulation the tip hits first and the log's energy
    agrees with the model's energy function."""
    arm = walking.rr_arm_against_wall(1.6, 0.5)
    q = np.array([0.3, -0.2])
    qd = np.array([-1.0, 2.0])
    J = np.vstack([s.jacobian(q) for s in arm.surfaces])
    r = impact_map(arm.form.mass_matrix(q), J, np.linalg.solve(J, [-1.0, -0.5]), 0.5)
    assert np.allclose(J @ r.qd_plus, [0.5, 0.25], atol=1e-12)
    # in simulation: one event on the tip, logged with the energy lost
    tr = simulate_hybrid(arm, [-1.2, 0.3], [3.0, 0.0], 1.0)
    assert tr.events and tr.events[0].surface == "tip"
    ev = tr.events[0]
    E = arm.energy
    assert E(ev.q_before, ev.qd_before) - E(ev.q_after, ev.qd_after) == pytest.approx(
        ev.energy_lost, rel=1e-10)
    assert abs(arm.surfaces[0].phi(ev.q_before)) <= 1e-10


def test_simultaneous_contacts_in_simulation():
    """A ball falling straight into a corner hits the floor and a 45-degree wall at once."""
    ball = walking.bouncing_ball(0.5)
    n2 = np.array([-1.0, 1.0]) / np.sqrt(2)
    wall = Surface("wall", lambda q: float(n2 @ q), lambda q: n2, 0.5)
    corner = HybridSystem(ball.form, (ball.surfaces[0], wall))
    tr = simulate_hybrid(corner, [0.0, 1.0], [0.0, 0.0], 1.0, max_events=1)
    ev = tr.events[0]
    assert ev.surface == "ground+wall"
    assert np.allclose(ev.qd_after, -0.5 * ev.qd_before, atol=1e-12)


def test_event_location_tolerance():
    for tol in (1e-6, 1e-12):
        tr = simulate_hybrid(walking.bouncing_ball(0.8), [0, 1.0], [0, 0], 2.0,
                             event_tol=tol, rtol=1e-6, atol=1e-8, max_events=3)
        assert all(abs(ev.phi) <= tol for ev in tr.events)
        assert tr.events[0].time == pytest.approx(np.sqrt(2 / 9.81), abs=10 * tol + 1e-9)


def test_dt_out_and_segments():
    tr = simulate_hybrid(walking.bouncing_ball(0.8), [0, 1.0], [0, 0], 1.0, dt_out=0.01)
    assert tr.stop_reason == "t_final" and tr.t[-1] == pytest.approx(1.0)
    assert len(tr.segments) == 2 * len(tr.events) + 1
    assert np.all(np.diff(tr.t) >= 0)


def test_terminal_surface_and_no_impact_return_map():
    cg = walking.CompassGait()
    s = cg.hybrid_system()
    x = cg.section_state([-0.2187, 0.3772, -1.0918])          # falls backwards
    tr = simulate_hybrid(s, x[:2], x[2:], 5.0)
    assert tr.stop_reason == "terminal surface fall"
    with pytest.raises(RuntimeError, match="return_map: x, t_max: expected a motion that "
                                           "reaches an impact"):
        return_map(s, x)
    with pytest.raises(RuntimeError, match="return_map: x, t_max: expected a motion that "
                                           "reaches an impact"):
        return_map(walking.bouncing_ball(), [0, 1.0, 0, 0], t_max=0.1)


def test_simulate_hybrid_bad_input():
    ball = walking.bouncing_ball(0.5)
    with pytest.raises(ValueError, match=r"q0: expected a state outside every surface.*penetrates"):
        simulate_hybrid(ball, [0.0, -0.1], [0.0, 0.0], 1.0)
    with pytest.raises(ValueError, match=r"t_final: expected a finite time > t0"):
        simulate_hybrid(ball, [0.0, 1.0], [0.0, 0.0], 0.0)
    with pytest.raises(TypeError, match=r"system: expected a HybridSystem"):
        simulate_hybrid("ball", [0.0, 1.0], [0.0, 0.0], 1.0)
    with pytest.raises(ValueError, match=r"qd0: expected a vector of length 2"):
        simulate_hybrid(ball, [0.0, 1.0], [0.0], 1.0)
    with pytest.raises(TypeError, match=r"simulate_hybrid: max_events: expected an integer"):
        simulate_hybrid(ball, [0.0, 1.0], [0.0, 0.0], 1.0, max_events=2.5)
    with pytest.raises(ValueError, match=r"simulate_hybrid: max_events: expected an integer "
                                         r">= 1"):
        simulate_hybrid(ball, [0.0, 1.0], [0.0, 0.0], 1.0, max_events=0)
    from fractions import Fraction                  # whole numbers of any type, same run
    tr = simulate_hybrid(ball, [0.0, 1.0], [0.0, 0.0], 5.0, max_events=Fraction(3, 1),
                         max_event_rate=sp.Float(1e4))
    assert len(tr.events) == 3 and tr.stop_reason == "max_events"
    with pytest.raises(ValueError, match=r"max_event_rate: expected a positive number"):
        simulate_hybrid(ball, [0.0, 1.0], [0.0, 0.0], 1.0, max_event_rate=-1)
    with pytest.raises(ValueError, match=r"event_tol: expected a positive number"):
        simulate_hybrid(ball, [0.0, 1.0], [0.0, 0.0], 1.0, event_tol=0)
    with pytest.raises(TypeError, match=r"Surface: name: expected a non-empty str"):
        Surface("", lambda q: 0, lambda q: 0)
    with pytest.raises(TypeError, match=r"Surface 'a': phi: expected a function of q"):
        Surface("a", 1.0, lambda q: 0)
    with pytest.raises(ValueError, match=r"Surface.*: restitution: expected a coefficient"):
        Surface("a", lambda q: 0, lambda q: 0, 2.0)
    with pytest.raises(TypeError, match=r"HybridSystem: surfaces: expected one or more Surface"):
        HybridSystem(ball.form, ())
    with pytest.raises(ValueError, match=r"HybridSystem: surfaces: expected distinct names"):
        HybridSystem(ball.form, (ball.surfaces[0], ball.surfaces[0]))
    with pytest.raises(TypeError, match=r"HybridSystem: form: expected a NumericForm"):
        HybridSystem("form", ball.surfaces)
    bad = HybridSystem(ball.form, (Surface("g", lambda q: q[1], lambda q: [0, 1, 0]),))
    with pytest.raises(ValueError, match=r"jacobian\(q\) must return 2 numbers"):
        simulate_hybrid(bad, [0.0, 1.0], [0.0, 0.0], 1.0)


def test_fixed_point_generic_and_bad_input():
    fp = fixed_point(lambda x: np.array([np.cos(x[0])]), [1.0])
    assert fp.x[0] == pytest.approx(0.7390851332151607, abs=1e-9)
    assert fp.eigenvalues[0] == pytest.approx(-np.sin(fp.x[0]), abs=1e-7)
    with pytest.raises(RuntimeError, match=r"no fixed point within max_iter = 3"):
        fixed_point(lambda x: x + 1.0, [0.0], max_iter=3)
    with pytest.raises(TypeError, match=r"fixed_point: step: expected a function"):
        fixed_point(3, [0.0])
    with pytest.raises(ValueError, match=r"step: expected it to return 1 numbers"):
        fixed_point(lambda x: np.zeros(2), [0.0])


# --------------------------------------------------------------------------
# walkers
# --------------------------------------------------------------------------

@pytest.mark.parametrize("spokes,slope", [(8, 0.08), (6, 0.2), (10, 0.05)])
def test_rimless_wheel_fixed_point_matches_closed_form(spokes, slope):
    w = walking.RimlessWheel(spokes=spokes, slope=slope)
    assert w.rolls()
    s = w.hybrid_system()
    x0 = w.slope - w.alpha

    def P(z):
        return return_map(s, [x0, z[0]], surface="front spoke").x[1:]

    fp = fixed_point(P, [1.05 * w.closed_form_fixed_point()])
    assert fp.x[0] == pytest.approx(w.closed_form_fixed_point(), rel=1e-8)
    assert fp.eigenvalues[0] == pytest.approx(np.cos(2 * w.alpha) ** 2, abs=1e-6)
    # the closed-form map agrees with one simulated step from anywhere
    assert P([1.3])[0] == pytest.approx(w.closed_form_map(1.3), rel=1e-9)
    # simulation converges to it
    tr = simulate_hybrid(s, [x0], [1.3], 30.0, max_events=60)
    assert tr.events[-1].qd_after[0] == pytest.approx(w.closed_form_fixed_point(), rel=1e-4)
    # energy lost per step equals the potential energy gained: 2 l sin(alpha) sin(gamma) m g
    E = tr.events[-1].energy_lost
    assert E == pytest.approx(2 * np.sin(w.alpha) * np.sin(w.slope) * w.g, rel=1e-3)


def test_rimless_wheel_bad_input():
    with pytest.raises(ValueError, match=r"RimlessWheel: spokes: expected an integer >= 3"):
        walking.RimlessWheel(spokes=2)
    with pytest.raises(ValueError, match=r"RimlessWheel: slope: expected an angle"):
        walking.RimlessWheel(slope=-0.1)
    with pytest.raises(ValueError, match=r"RimlessWheel: length: expected a positive"):
        walking.RimlessWheel(length=0)


GOSWAMI_3DEG = np.array([-0.3234, 0.2187, -0.3772, -1.0918])
"""Goswami, Thuilot and Espiau (1996), period-one gait at 3 degrees, (theta_ns, theta_s,
thetad_ns, thetad_s) just after heel strike, in their convention (angles counter-clockwise,
walking towards -x): ours are the negatives, with (stance, swing) = (theta_s, theta_ns)."""


@pytest.mark.slow
def test_compass_gait_reproduces_goswami():
    cg = walking.CompassGait(g=9.8)
    fp = cg.fixed_point()
    x = cg.section_state(fp.x)
    ours_in_theirs = -np.array([x[1], x[0], x[3], x[2]])
    assert np.allclose(ours_in_theirs, GOSWAMI_3DEG, atol=6e-4)       # three digits
    assert np.allclose(np.round(ours_in_theirs, 3), np.round(GOSWAMI_3DEG, 3), atol=1.1e-3)
    assert fp.stable and fp.residual < 1e-9
    # the simulated limit cycle equals the Newton fixed point (computed separately)
    s = cg.hybrid_system()
    start = cg.section_state(fp.x + np.array([0.002, -0.005, 0.005]))
    tr = simulate_hybrid(s, start[:2], start[2:], 60.0, max_events=40)
    assert tr.stop_reason == "max_events" and all(ev.surface == "heel strike" for ev in tr.events)
    last = tr.events[-1]
    assert np.allclose(np.concatenate([last.q_after, last.qd_after]), x, atol=1e-7)
    # the per-step contraction matches the leading eigenvalue modulus
    dev = [np.linalg.norm(np.concatenate([e.q_after, e.qd_after]) - x) for e in tr.events]
    ratio = (dev[20] / dev[10]) ** (1 / 10)
    assert ratio == pytest.approx(np.abs(fp.eigenvalues[0]), rel=0.1)


def test_compass_gait_equations_and_impact():
    """M against the closed form of Goswami et al.; heel strike: legs exchanged, energy lost,
    angular momentum about the new contact point conserved (an independent impact law)."""
    cg = walking.CompassGait()
    m, mh, a, b = cg.m, cg.m_h, cg.a, cg.b
    l = a + b
    q = np.array([0.25, -0.15])
    M = cg.numeric.mass_matrix(q)
    M_ref = np.array([[(mh + m) * l ** 2 + m * a ** 2, -m * l * b * np.cos(q[0] - q[1])],
                      [-m * l * b * np.cos(q[0] - q[1]), m * b ** 2]])
    assert np.allclose(M, M_ref, atol=1e-13)
    qd = np.array([1.2, -0.5])
    qp, qdp, r = cg.heel_strike(q, qd)
    assert np.allclose(qp, q[::-1])
    assert r.energy_lost > 0
    # angular momentum of the whole walker about the new contact point (the swing foot) is
    # conserved by the impact (the only impulse acts there)

    def ang_mom(q_, qd_, pivot):
        pts, H, eps = cg.points(q_), 0.0, 1e-7
        for name, mass in (("stance mass", m), ("hip", mh), ("swing mass", m)):
            v = (cg.points(q_ + eps * qd_)[name] - cg.points(q_ - eps * qd_)[name]) / (2 * eps)
            rr = pts[name] - pivot
            H += mass * (rr[0] * v[1] - rr[1] * v[0])
        return H

    before = ang_mom(q, qd, cg.points(q)["swing foot"])
    after = ang_mom(qp, qdp, cg.points(qp)["stance foot"])
    assert after == pytest.approx(before, rel=1e-7)


def test_compass_gait_bad_input():
    with pytest.raises(ValueError, match=r"CompassGait: m_h: expected a positive number"):
        walking.CompassGait(m_h=-1)
    with pytest.raises(ValueError, match=r"CompassGait: slope: expected an angle"):
        walking.CompassGait(slope=1.0)
    with pytest.raises(ValueError, match=r"section_state: z: expected a vector of length 3"):
        walking.CompassGait().section_state([0.0, 1.0])


def test_walker_models_bad_input():
    with pytest.raises(ValueError, match=r"bouncing_ball: mass: expected a positive number"):
        walking.bouncing_ball(0.5, mass=0)
    with pytest.raises(ValueError, match=r"bouncing_ball: restitution: expected a coefficient|"
                                         r"Surface 'ground': restitution"):
        walking.bouncing_ball(1.5)
    with pytest.raises(ValueError, match=r"ball_zeno_time: restitution: expected e in \[0, 1\)"):
        walking.ball_zeno_time(1.0, 1.0)
    with pytest.raises(ValueError, match=r"ball_zeno_time: height: expected a height >= 0"):
        walking.ball_zeno_time(-1.0, 0.5)
    with pytest.raises(ValueError, match=r"rr_arm_against_wall: l1: expected a positive"):
        walking.rr_arm_against_wall(l1=0)
    with pytest.raises(ValueError, match=r"pendulum_against_wall: wall_angle: expected an angle"):
        walking.pendulum_against_wall(5.0)


def test_forms_are_mass_matrix_forms():
    """The models' continuous dynamics are MassMatrixForms comparable with other methods: the
    compass gait's form against its equations rebuilt by hand with euler_lagrange."""
    from robodyn import lagrange
    from robodyn.equations import MassMatrixForm, max_difference, mass_matrix_form
    cg = walking.CompassGait()
    assert isinstance(cg.form, MassMatrixForm)
    ts, tw, us, uw = cg.form.q[0], cg.form.q[1], cg.form.u[0], cg.form.u[1]
    m, mh, a, b, g = sp.symbols("m m_h a b g", positive=True)
    l = a + b
    # kinetic energy from the hip velocity and the two legs' point masses, written anew
    vh = sp.Matrix([l * sp.cos(ts) * us, -l * sp.sin(ts) * us])
    vs = vh * a / l
    vw = vh - b * sp.Matrix([sp.cos(tw) * uw, -sp.sin(tw) * uw])
    T = (m * vs.dot(vs) + mh * vh.dot(vh) + m * vw.dot(vw)) / 2
    V = g * (m * a * sp.cos(ts) + mh * l * sp.cos(ts) + m * (l * sp.cos(ts) - b * sp.cos(tw)))
    Mh, rest = lagrange.euler_lagrange(T - V, [ts, tw], [us, uw], split=True)
    other = mass_matrix_form([ts, tw], [us, uw], Mh, -rest)
    assert max_difference(cg.form, other, values=cg.values, tau=False) < 1e-12
