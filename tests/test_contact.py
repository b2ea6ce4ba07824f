"""Contact that is never missed (issue #20): grazing events, many contacts at once, resting and
sliding contact, Coulomb friction at impacts, Moreau–Jean time-stepping; closed forms and the
two simulators against each other. Tolerances are stated in each assert."""
import numpy as np
import pytest
import sympy as sp

from robodyn import impacts
from robodyn import walking
from robodyn.impacts import contact_impulse
from robodyn.impacts import HybridSystem, Surface, impact_map, simulate_hybrid
from robodyn.impacts import moreau_jean

G = 9.81


def ceiling_ball(e=0.8, height=0.25):
    ball = walking.bouncing_ball(e)
    ceil = Surface("ceiling", lambda q: height - q[1], lambda q: np.array([0.0, -1.0]), e)
    return HybridSystem(ball.form, (ball.surfaces[0], ceil), ball.energy)


# --------------------------------------------------------------------------
# the misses of the issue, one test each
# --------------------------------------------------------------------------

@pytest.mark.parametrize("d", [3e-4, 1e-4, 1e-6, 1e-9])
def test_grazing_pendulum_is_never_missed(d):
    """Released at -0.3 rad, the pendulum's swing peaks at +0.3: a wall at 0.3 - d is hit."""
    wall = 0.3 - d
    tr = simulate_hybrid(walking.pendulum_against_wall(wall, 0.7), [-0.3], [0.0], 1.5,
                         dt_out=1e-3)
    assert tr.events and tr.events[0].surface == "wall"
    assert abs(tr.events[0].phi) <= 1e-10                    # the documented event_tol
    assert np.max(tr.q[:, 0]) <= wall + 1e-10                # never through the wall
    # the closed-form crossing time of the undisturbed swing: energy conservation
    th = tr.events[0].q_before[0]
    w = tr.events[0].qd_before[0]
    assert 0.5 * w * w == pytest.approx(G * (np.cos(th) - np.cos(0.3)), abs=1e-9)


@pytest.mark.parametrize("height", [0.25, 0.29, 2.4 ** 2 / (2 * G) - 1e-7])
def test_ball_thrown_into_a_ceiling_is_stopped_by_it(height):
    sysm = ceiling_ball(height=height)
    tr = simulate_hybrid(sysm, [0.0, 0.0], [0.0, 2.4], 0.3, dt_out=1e-4, max_events=1)
    assert tr.events and tr.events[0].surface == "ceiling"
    assert np.max(tr.q[:, 1]) <= height + 1e-10                      # event_tol
    t_hit = (2.4 - np.sqrt(2.4 ** 2 - 2 * G * height)) / G          # closed form
    assert tr.events[0].time == pytest.approx(t_hit, abs=1e-9 + 1e-4 * (height > 0.29))


def test_tilted_rod_is_not_zeno_and_lands_like_the_flat_one():
    flat = simulate_hybrid(impacts.rod(0.5), [0.0, 1.0, 0.0], [0.0, 0.0, 0.0], 2.0)
    tilt = simulate_hybrid(impacts.rod(0.5), [0.0, 1.0, 1e-9], [0.0, 0.0, 0.0], 2.0)
    for tr in (flat, tilt):
        assert tr.stop_reason == "t_final" and tr.t[-1] == 2.0
        ev = tr.events[0]
        assert ev.surface == "left end+right end"                 # one simultaneous impact
        vx, vy, w = impacts.rod_flat_impact(0.0, ev.qd_before[1], 0.5)
        assert ev.qd_after == pytest.approx([vx, vy, w], abs=1e-8)
        assert abs(tr.q[-1, 1]) < 1e-8 and abs(tr.q[-1, 2]) < 1e-8  # at rest, flat
    assert flat.zeno_time == pytest.approx(walking.ball_zeno_time(1.0, 0.5), abs=1e-8)


def test_ball_at_rest_stays_at_rest_and_sliding_ball_slides():
    for v in (0.0, 1.5):
        tr = simulate_hybrid(walking.bouncing_ball(0.8), [0.0, 0.0], [v, 0.0], 2.0)
        assert tr.stop_reason == "t_final" and not tr.events and tr.t[-1] == 2.0
        assert tr.q[-1] == pytest.approx([2 * v, 0.0], abs=1e-9)
        assert tr.qd[-1] == pytest.approx([v, 0.0], abs=1e-9)


def test_elastic_ball_from_1e_8_m_keeps_its_energy():
    tr = simulate_hybrid(walking.bouncing_ball(1.0), [0.0, 1e-8], [0.0, 0.0], 0.02,
                         max_events=10 ** 4)
    assert tr.zeno_time is None and tr.stop_reason == "t_final"
    assert len(tr.events) > 200
    E0 = G * 1e-8
    assert np.max(np.abs(tr.energy - E0)) < 1e-6 * E0


def test_corner_with_a_restitution_per_contact():
    """A ball moving diagonally into the corner of a floor (e = 0.3) and a wall (e = 0.9)."""
    ball = walking.bouncing_ball(0.3)
    wall = Surface("wall", lambda q: float(1.0 - q[0]), lambda q: np.array([-1.0, 0.0]), 0.9)
    corner = HybridSystem(ball.form, (ball.surfaces[0], wall))
    t1 = np.sqrt(2 / G)
    tr = simulate_hybrid(corner, [0.0, 1.0], [1.0 / t1, 0.0], 1.0, max_events=1)
    ev = tr.events[0]
    assert ev.surface == "ground+wall"
    assert ev.qd_after == pytest.approx([-0.9 * ev.qd_before[0], -0.3 * ev.qd_before[1]],
                                        rel=1e-12)
    r = contact_impulse(np.eye(2), [[0, 1], [-1, 0]], [2.0, -3.0], [0.3, 0.9])
    assert r.qd_plus == pytest.approx([-1.8, 0.9], abs=1e-12)
    assert np.all(r.normal_impulse >= 0)


def test_three_collinear_contacts_are_handled():
    m, L = 1.0, 1.0
    M = np.diag([m, m, m * L * L / 12])
    Jn = [[0, 1, -0.5], [0, 1, 0.0], [0, 1, 0.5]]                   # rank 2
    r = contact_impulse(M, Jn, [0.0, -2.0, 0.0], 0.5)
    assert r.qd_plus == pytest.approx([0.0, 1.0, 0.0], abs=1e-12)
    assert np.all(r.normal_impulse >= -1e-12) and r.normal_impulse.sum() == pytest.approx(3.0)
    # a spinning rod: only the end that approaches is pushed
    r = contact_impulse(M, Jn, [0.0, -1.0, 4.0], 0.0)
    assert np.all(r.normal_impulse >= -1e-12)
    assert np.all(np.array(Jn) @ r.qd_plus >= -1e-12)


# --------------------------------------------------------------------------
# friction at impacts: closed forms
# --------------------------------------------------------------------------

@pytest.mark.parametrize("mu", [1.0, 0.05])
@pytest.mark.parametrize("vx, w", [(1.0, 30.0), (2.0, -10.0), (0.5, 0.0)])
def test_spinning_ball_against_closed_forms(mu, vx, w):
    b = impacts.ball(0.5, mu)
    tr = simulate_hybrid(b, [0.0, 0.3, 0.0], [vx, -2.0, w], 0.5, max_events=1)
    ev = tr.events[0]
    vx1, vy1, w1, mode = impacts.ball_impact_closed_form(vx, ev.qd_before[1], w, 0.5, mu)
    assert ev.qd_after == pytest.approx([vx1, vy1, w1], abs=1e-10)
    r = contact_impulse(b.form.mass_matrix(ev.q_before), [[0, 1, 0]], ev.qd_before, 0.5,
                        friction=mu, Jt=[[1, 0, 0.1]])
    assert r.modes == (mode,)
    assert r.energy_lost >= 0
    if mode == "stick":
        assert r.tangential_after[0] == pytest.approx(0.0, abs=1e-12)
        assert abs(r.tangential_impulse[0]) <= mu * r.normal_impulse[0] + 1e-12
    else:
        assert abs(r.tangential_impulse[0]) == pytest.approx(mu * r.normal_impulse[0],
                                                             rel=1e-12)


def test_spin_reversal_condition():
    """Backspin sends a sticking ball back when r omega > (1/kappa) vx = 2.5 vx."""
    for rw, back in ((2.4, False), (2.6, True)):
        vx1, _, _, mode = impacts.ball_impact_closed_form(1.0, -3.0, rw / 0.1, 0.5, 1.0)
        assert mode == "stick" and (vx1 < 0) == back
        r = contact_impulse(np.diag([1, 1, 0.004]), [0, 1, 0], [1.0, -3.0, rw / 0.1], 0.5,
                            friction=1.0, Jt=[1, 0, 0.1])
        assert r.qd_plus[0] == pytest.approx(vx1, abs=1e-12)


def test_frictional_impacts_never_create_energy():
    rng = np.random.default_rng(3)
    for _ in range(60):
        A = rng.normal(size=(3, 3))
        M = A @ A.T + 0.5 * np.eye(3)
        Jn, Jt = rng.normal(size=(2, 3)), rng.normal(size=(2, 3))
        v = rng.normal(size=3)
        v -= Jn.T @ np.linalg.lstsq(Jn.T, v, rcond=None)[0] + 0.5 * Jn.T @ [1.0, 1.0]
        mu = rng.uniform(0, 2, 2)
        r = contact_impulse(M, Jn, v, rng.uniform(0, 1, 2), friction=mu, Jt=Jt)
        assert r.energy_lost >= -1e-12
        assert 0.5 * r.qd_plus @ M @ r.qd_plus <= 0.5 * v @ M @ v * (1 + 1e-10)
        assert np.all(r.normal_impulse >= -1e-9)
        assert np.all(np.abs(r.tangential_impulse) <= mu * r.normal_impulse + 1e-9)


# --------------------------------------------------------------------------
# resting and sliding contact: closed forms
# --------------------------------------------------------------------------

@pytest.mark.parametrize("v, mu", [(2.0, 0.5), (1.0, 0.2)])
def test_block_stopping_distance_and_time(v, mu):
    tr = simulate_hybrid(impacts.block(mu), [0.0, 0.0], [v, 0.0], 1.5)
    d, t_stop = impacts.block_stopping(v, mu)
    assert tr.q[-1, 0] == pytest.approx(d, abs=1e-8)
    assert abs(tr.qd[-1, 0]) < 1e-9 and abs(tr.q[-1, 1]) < 1e-9
    k = np.flatnonzero(np.abs(tr.qd[:, 0]) < 1e-9)[0]
    assert tr.t[k] == pytest.approx(t_stop, abs=1e-8)


def test_bouncing_ball_rest_time_then_rest_and_rolling():
    tr = simulate_hybrid(walking.bouncing_ball(0.8), [0.0, 1.0], [0.3, 0.0], 15.0)
    assert tr.zeno_time == pytest.approx(walking.ball_zeno_time(1.0, 0.8), abs=1e-8)
    after = tr.t > tr.zeno_time
    assert np.all(np.abs(tr.q[after, 1]) < 1e-9) and tr.t[-1] == 15.0
    assert tr.q[-1, 0] == pytest.approx(0.3 * 15.0, abs=1e-8)      # slides on, frictionless
    # a rough ground: the ball comes to rest vertically and rolls at 5/7 of its speed
    b = impacts.ball(0.6, 0.3)
    tr = simulate_hybrid(b, [0.0, 1.0, 0.0], [1.0, 0.0, 0.0], 5.0)
    assert tr.zeno_time == pytest.approx(walking.ball_zeno_time(0.9, 0.6), abs=1e-8)
    assert tr.qd[-1] == pytest.approx([5 / 7, 0.0, -50 / 7], abs=1e-8)


def test_zeno_stop_carries_the_position_at_the_accumulation_time():
    b = 0.3
    ball = walking.bouncing_ball(0.7, slope=b)
    tr = simulate_hybrid(ball, [0.0, 0.6], [0.5, 0.0], 10.0, after_zeno="stop")
    assert tr.stop_reason == "zeno" and tr.t[-1] == tr.zeno_time
    # closed form along the slope: tangential speed grows with g sin(b) for all of the time
    t_dir = np.array([np.cos(b), -np.sin(b)])
    s = 0.5 * np.cos(b) * tr.zeno_time + 0.5 * G * np.sin(b) * tr.zeno_time ** 2
    assert (tr.q[-1] - tr.q[0]) @ t_dir == pytest.approx(s, abs=1e-8)
    assert tr.zeno_time == pytest.approx(walking.ball_zeno_time(0.6 * np.cos(b), 0.7,
                                                                0.5 * np.sin(b), b), abs=1e-8)


def test_lift_off_when_the_normal_force_turns_negative():
    """A block on a floor that is pulled up by a force growing in time lifts off at m g."""
    x, y, vx, vy, m, t = sp.symbols("x y vx vy m t")
    from robodyn.equations import mass_matrix_form
    form = mass_matrix_form([x, y], [vx, vy], sp.diag(1, 1), [0, -G + 20 * t], t=t).numeric()
    floor = impacts.block(0.0).surfaces[0]
    tr = simulate_hybrid(HybridSystem(form, (floor,)), [0.0, 0.0], [0.0, 0.0], 1.0)
    k = np.flatnonzero(tr.q[:, 1] > 1e-12)[0]
    assert tr.t[k - 1] == pytest.approx(G / 20, abs=1e-6)
    assert tr.q[-1, 1] == pytest.approx(20 * (1 - G / 20) ** 3 / 6, abs=1e-8)


# --------------------------------------------------------------------------
# the two simulators on the same systems
# --------------------------------------------------------------------------

def test_moreau_jean_agrees_with_the_event_driven_simulator():
    h = 1e-3
    # accumulation time of a ball: the time-stepper rests within a few steps of it
    mj = moreau_jean(walking.bouncing_ball(0.5), [0.0, 1.0], [0.0, 0.0], 2.0, h)
    moving = np.flatnonzero(np.abs(mj.qd[:, 1]) > 1e-9)
    assert mj.t[moving[-1] + 1] == pytest.approx(walking.ball_zeno_time(1.0, 0.5), abs=20 * h)
    assert abs(mj.q[-1, 1]) < 1e-6
    # a block sliding to a stop: distance within O(h)
    mj = moreau_jean(impacts.block(0.5), [0.0, 0.0], [2.0, 0.0], 1.0, h)
    ed = simulate_hybrid(impacts.block(0.5), [0.0, 0.0], [2.0, 0.0], 1.0)
    assert mj.q[-1, 0] == pytest.approx(ed.q[-1, 0], abs=2 * h)
    # the rod landing flat: the same rebound (within the first step's error)
    mj = moreau_jean(impacts.rod(0.5), [0.0, 1.0, 0.0], [0.0, 0.0, 0.0], 0.5, h)
    ed = simulate_hybrid(impacts.rod(0.5), [0.0, 1.0, 0.0], [0.0, 0.0, 0.0], 0.5, max_events=1)
    k = np.flatnonzero(mj.active.any(axis=1))[0]
    assert mj.qd[k] == pytest.approx(ed.events[0].qd_after, abs=2 * G * h)
    # the rough ball: rolls on at the same speed (5/7 of the initial one)
    mj = moreau_jean(impacts.ball(0.6, 0.3), [0.0, 1.0, 0.0], [1.0, 0.0, 0.0], 5.0, h)
    assert mj.qd[-1, 0] == pytest.approx(5 / 7, abs=1e-9)


# --------------------------------------------------------------------------
# bad input
# --------------------------------------------------------------------------

def test_bad_input_is_refused():
    with pytest.raises(ValueError, match=r"Surface.*: friction: expected .*non-negative"
                                         r".*Coulomb"):
        Surface("s", lambda q: q[0], lambda q: [1.0], 0.5, friction=-0.1,
                tangent=lambda q: [0.0])
    with pytest.raises(ValueError, match="Surface 's': tangent: expected a tangent row"):
        Surface("s", lambda q: q[0], lambda q: [1.0], 0.5, friction=0.3)
    with pytest.raises(ValueError, match="restitution: expected a coefficient (e|of restitution) in"):
        Surface("s", lambda q: q[0], lambda q: [1.0], 1.5)
    with pytest.raises(ValueError, match=r"contact_impulse: restitution(\[1\])?: expected (restitutions|a coefficient of restitution)"):
        contact_impulse(np.eye(2), [[0, 1], [1, 0]], [-1, -1], [0.5, 1.2])
    with pytest.raises(ValueError, match=r"contact_impulse: friction: expected (friction|a non-negative number)"):
        contact_impulse(np.eye(2), [0, 1], [0, -1], 0.5, friction=-1, Jt=[1, 0])
    with pytest.raises(ValueError, match="gradient vanishes at the contact"):
        contact_impulse(np.eye(2), [0, 0], [0, -1], 0.5)
    with pytest.raises(ValueError, match="Jt: expected tangent rows"):
        contact_impulse(np.eye(2), [0, 1], [0, -1], 0.5, friction=0.5)
    # Painleve's rod: one end sliding on rough ground (mu = 2 > 4/3) at 45 degrees, sliding
    # towards the rod: no contact force is admissible (inconsistency)
    th = np.pi / 4
    with pytest.raises(RuntimeError, match="no admissible contact mode"):
        simulate_hybrid(impacts.rod(0.0, 2.0), [0.0, 0.5 * np.sin(th), th], [-1.0, 0.0, 0.0], 0.2)
    flat = Surface("flat", lambda q: float(q[1] ** 3), lambda q: np.array([0.0, 3 * q[1] ** 2]),
                   0.5)
    with pytest.raises(ValueError, match="expected a non-zero gradient at the contact"):
        simulate_hybrid(HybridSystem(walking.bouncing_ball().form, (flat,)), [0.0, 1.0],
                        [0.0, 0.0], 2.0)
    ball = walking.bouncing_ball()
    with pytest.raises(ValueError, match=r"max_events: expected at most 10\*\*7"):
        simulate_hybrid(ball, [0.0, 1.0], [0.0, 0.0], 1.0, max_events=10 ** 12)
    with pytest.raises(ValueError, match="t_final: expected finite"):
        simulate_hybrid(ball, [0.0, 1.0], [0.0, 0.0], np.inf)
    with pytest.raises(ValueError, match="after_zeno"):
        simulate_hybrid(ball, [0.0, 1.0], [0.0, 0.0], 1.0, after_zeno="maybe")
    with pytest.raises(ValueError, match="moreau_jean: t_final, h: expected at most max_steps"):
        moreau_jean(ball, [0.0, 1.0], [0.0, 0.0], 1e3, 1e-6)
    with pytest.raises(ValueError, match="custom impact map"):
        moreau_jean(walking.CompassGait().hybrid_system(), [0.1, -0.1], [0, 0], 1.0, 1e-3)
    tr = simulate_hybrid(ball, [0.0, 1.0], [0.0, 0.0], 1.0, max_steps=3)
    assert tr.stop_reason == "max_steps"


def test_impact_map_exact_numbers_run_the_numeric_checks():
    with pytest.raises(ValueError, match="expected a velocity approaching surface 0"):
        impact_map(sp.eye(2), [0, 1], [sp.Integer(1), sp.Integer(3)], sp.Rational(1, 2))
    with pytest.raises(ValueError, match="positive definite"):
        impact_map(sp.diag(1, -1), [0, 1], [sp.Integer(1), sp.Integer(-3)], sp.Rational(1, 2))
    with pytest.raises(ValueError, match="restitution: expected a coefficient (e|of restitution) in"):
        impact_map(sp.eye(2), [0, 1], [1, -3], -sp.Symbol("e", positive=True))
    r = impact_map(sp.eye(2), [0, 1], [1, -3], sp.Symbol("e", positive=True))
    assert sp.simplify(r.qd_plus[1] - 3 * sp.Symbol("e", positive=True)) == 0
