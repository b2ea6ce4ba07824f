"""Tests of robodyn.dynamics: energy conservation in free motion, the energy balance with
joint forces (E(t) - E(0) = integral of tau . qd), the order of the fixed-step RK4, and bad input.
"""
import dataclasses

import numpy as np
import pytest
from scipy.integrate import trapezoid

from robodyn import dynamics as dy
from robodyn import models
from robodyn.dynamics import Trajectory, simulate

G_PLANAR = [0, -9.81, 0]


def test_free_motion_conserves_energy_rk45():
    """planar_rr with gravity, 5 s of swinging: relative energy drift < 1e-6 with RK45 at
    rtol = atol = 1e-10."""
    traj = simulate(models.planar_rr(), [1.2, -0.4], [0.5, 2.0], 5.0, gravity=G_PLANAR,
                    rtol=1e-10, atol=1e-10)
    drift = np.abs(traj.energy - traj.energy[0]).max() / abs(traj.energy[0])
    assert drift < 1e-6
    assert np.all(traj.power_in == 0) and np.all(traj.work == 0)
    assert traj.relative_energy_drift < 1e-6
    assert np.ptp(traj.q[:, 0]) > 1.0                      # it did move
    assert len(traj.step_sizes) == len(traj.t) - 1
    assert np.isclose(traj.step_sizes.sum(), 5.0)
    assert traj.nfev > len(traj.step_sizes)


@pytest.mark.parametrize("method", ["DOP853", "Radau"])
def test_free_motion_other_adaptive_methods(method):
    traj = simulate(models.spatial_rrr(), [0.3, 0.8, -0.5], [1.0, 0.0, 0.5], 1.0,
                    method=method, rtol=1e-10, atol=1e-10)
    assert traj.relative_energy_drift < 1e-7
    assert traj.method == method


def test_energy_balance_with_torques():
    """With a feedback torque the energy changes by exactly the work done: E(t) - E(0) =
    integral of tau . qd dt, by the integrated work and by the trapezoid rule on a fine grid."""
    chain = models.planar_rp()

    def tau(t, q, qd):
        return np.array([2.0 * np.sin(3 * t) - 0.5 * qd[0], -3.0 * q[1] + 1.0])

    t_eval = np.linspace(0, 2.0, 4001)
    traj = simulate(chain, [0.2, 0.3], [0.0, 0.1], 2.0, tau=tau, gravity=G_PLANAR,
                    rtol=1e-11, atol=1e-11, t_eval=t_eval)
    assert np.array_equal(traj.t, t_eval)
    dE = traj.energy - traj.energy[0]
    assert np.abs(dE).max() > 0.1                          # the torques do real work
    assert np.allclose(dE, traj.work, atol=1e-7)
    trap = np.concatenate([[0], np.cumsum(0.5 * (traj.power_in[1:] + traj.power_in[:-1])
                                          * np.diff(traj.t))])
    assert np.allclose(dE, trap, atol=1e-5)                # trapezoid error ~ h^2
    assert np.isclose(trapezoid(traj.power_in, traj.t), dE[-1], atol=1e-5)
    assert np.allclose(traj.tau[10], tau(traj.t[10], traj.q[10], traj.qd[10]))


def test_constant_torque():
    chain = models.planar_rr()
    traj = simulate(chain, [0, 0], [0, 0], 0.5, tau=[1.0, -0.5], gravity=[0, 0, -9.81])
    assert np.all(traj.tau == [1.0, -0.5])
    # planar arm in the horizontal plane (gravity along -z): starts with qdd = M^-1 tau
    qdd0 = np.linalg.solve(dy.crba(chain, [0, 0]), [1.0, -0.5])
    h = traj.t[1]
    assert np.allclose((traj.qd[1] - traj.qd[0]) / h, qdd0, rtol=1e-2)
    assert abs(traj.energy_error).max() < 1e-7


def _rk4_error(dt):
    chain = models.planar_rr()
    q0 = [-1.2, 0.3]                     # a moderate swing about the hanging pose (q1 = -pi/2)
    ref = simulate(chain, q0, [0.0, 0.0], 1.0, gravity=G_PLANAR, method="DOP853",
                   rtol=1e-13, atol=1e-13, t_eval=[1.0])
    traj = simulate(chain, q0, [0.0, 0.0], 1.0, gravity=G_PLANAR, method="rk4", dt=dt)
    assert np.isclose(traj.t[-1], 1.0) and np.allclose(traj.step_sizes, dt)
    return np.abs(traj.q[-1] - ref.q[-1]).max()


def test_rk4_is_fourth_order():
    """Halving dt divides the error at t = 1 s by ~16 (measured 14.9 and 15.5)."""
    e1, e2, e3 = (_rk4_error(dt) for dt in (0.02, 0.01, 0.005))
    for ratio in (e1 / e2, e2 / e3):
        assert 12 < ratio < 20                             # 2^4 = 16


def test_semi_implicit_euler_is_first_order():
    chain = models.planar_rr()
    ref = simulate(chain, [1.0, 0.5], [0.0, 0.0], 1.0, gravity=G_PLANAR, method="DOP853",
                   rtol=1e-12, atol=1e-12, t_eval=[1.0])
    errs = [np.abs(simulate(chain, [1.0, 0.5], [0.0, 0.0], 1.0, gravity=G_PLANAR,
                            method="semi_implicit_euler", dt=dt).q[-1] - ref.q[-1]).max()
            for dt in (0.002, 0.001)]
    assert 1.6 < errs[0] / errs[1] < 2.4


def test_fixed_step_rounds_dt_to_whole_steps():
    traj = simulate(models.planar_rr(), [0, 0], [0, 0], 1.0, method="rk4", dt=0.3)
    assert len(traj.t) == 5 and np.allclose(traj.step_sizes, 0.25)


def test_on_step_and_summary():
    seen = []
    traj = simulate(models.planar_rr(), [0.5, 0], [0, 0], 1.0, gravity=G_PLANAR,
                    on_step=seen.append, dt=0.1)
    assert len(seen) == len(traj.step_sizes) and np.isclose(seen[-1], 1.0)
    assert traj.step_sizes.max() <= 0.1 + 1e-12             # dt caps the adaptive step
    text = traj.summary()
    assert "RK45 on 2 joints" in text and "relative drift" in text and "evaluations" in text
    with pytest.raises(dataclasses.FrozenInstanceError):
        traj.t = None
    assert isinstance(traj, Trajectory)


def test_t_eval_and_dense_output_agree_with_steps():
    chain = models.planar_rr()
    full = simulate(chain, [0.5, 0], [0, 0], 1.0, gravity=G_PLANAR, rtol=1e-11, atol=1e-11)
    part = simulate(chain, [0.5, 0], [0, 0], 1.0, gravity=G_PLANAR, rtol=1e-11, atol=1e-11,
                    t_eval=[0.0, 0.25, 1.0])
    assert np.allclose(part.q[0], [0.5, 0]) and np.allclose(part.q[-1], full.q[-1], atol=1e-9)


RR = models.planar_rr()


@pytest.mark.parametrize("kwargs, exc, match", [
    (dict(t_final=-1.0), ValueError, "simulate: t_final: expected a positive number"),
    (dict(t_final=0.0), ValueError, "simulate: t_final: expected a positive number"),
    (dict(method="euler"), ValueError, "method: expected one of"),
    (dict(method="rk4"), ValueError, "simulate: dt: expected a time step"),
    (dict(method="rk4", dt=-0.1), ValueError, "dt: expected a positive number"),
    (dict(method="rk4", dt=0.1, t_eval=[0.5]), ValueError, "t_eval is for the adaptive"),
    (dict(t_eval=[0.5, 2.0]), ValueError, r"t_eval: expected increasing times in \[0, 1\]"),
    (dict(t_eval=[0.5, 0.2]), ValueError, "t_eval: expected increasing times"),
    (dict(q0=[0, 0, 0]), ValueError, r"simulate: q0: expected shape \(2,\)"),
    (dict(qd0=[0, np.nan]), ValueError, r"simulate: qd0(\[1\])?: expected finite numbers"),
    (dict(tau=[1.0]), ValueError, "tau .*expected a vector of length 2"),
    (dict(tau=lambda t, q, qd: [1.0, 2.0, 3.0]), ValueError,
     r"tau\(t, q, qd\): expected a vector of 2 joint forces, got shape \(3,\)"),
    (dict(tau=lambda t, q, qd: [np.nan, 0.0]), ValueError, "expected finite numbers"),
    (dict(rtol=0), ValueError, "rtol: expected a positive number"),
    (dict(gravity=[0, 9.81]), ValueError, r"simulate: gravity: expected shape \(3,\)"),
    (dict(on_step=3), TypeError, "on_step: expected a callable"),
])
def test_bad_input(kwargs, exc, match):
    args = dict(chain=RR, q0=[0, 0], qd0=[0, 0], t_final=1.0)
    args.update(kwargs)
    chain, q0, qd0, t_final = (args.pop(k) for k in ("chain", "q0", "qd0", "t_final"))
    with pytest.raises(exc, match=match):
        simulate(chain, q0, qd0, t_final, **args)


def test_chain_without_inertias_is_refused():
    from robodyn import SerialChain
    with pytest.raises(ValueError, match="has no link_homes and link_inertias"):
        simulate(SerialChain.from_screws(RR.screws, RR.home), [0, 0], [0, 0], 1.0)


def test_relative_energy_drift_when_the_energy_starts_at_zero():
    """E(0) = 0 (arm horizontal, at rest, V = 0 there): with joint forces the energy's range is
    the scale; without them the energy stays 0 up to the error, the relative figure would be
    the error divided by itself, and a warning points to the absolute figure."""
    rr = models.planar_rr()
    g = [0.0, -9.81, 0.0]
    pushed = simulate(rr, [0.0, 0.0], [0.0, 0.0], 1.0, gravity=g,
                                 tau=lambda t, q, qd: np.array([1.0, 0.5]))
    assert abs(pushed.energy[0]) < 1e-12 and np.ptp(pushed.energy) > 0.1
    assert pushed.relative_energy_drift < 1e-7
    assert np.isclose(pushed.relative_energy_drift,
                      np.abs(pushed.energy_error).max() / np.ptp(pushed.energy))
    falling = simulate(rr, [0.0, 0.0], [0.0, 0.0], 1.0, gravity=g)
    assert abs(falling.energy[0]) < 1e-12 and np.abs(falling.energy_error).max() < 1e-6
    with pytest.warns(RuntimeWarning, match=r"relative_energy_drift: \|E\(0\)\| = 0 J .* "
                                            r"report the absolute error"):
        falling.relative_energy_drift
    still = simulate(rr, [0.0, 0.0], [0.0, 0.0], 0.5, gravity=[0.0, 0.0, 0.0])
    assert still.relative_energy_drift == 0.0
