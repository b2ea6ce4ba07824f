r"""Simulation of serial chains: integrating :math:`\ddot q = M(q)^{-1}(\tau - C\dot q - G)`
(handbook eq. (5.14)), with the energy balance recorded (Part II of the book).

:func:`simulate` integrates the first-order system :math:`y = (q, \dot q, w)`,

.. math:: \dot q = \dot q,\qquad \ddot q = \mathrm{FD}(q, \dot q, \tau),\qquad
          \dot w = \tau^T\dot q,

where FD is :func:`robodyn.dynamics.forward_dynamics` (the articulated-body algorithm) and
:math:`w(t) = \int_0^t \tau^T\dot q\,dt` is the work done by the joint forces, integrated to
the solver's accuracy. The energy balance :math:`E(t) - E(0) = w(t)` (with
:math:`E = T + V`, :func:`robodyn.dynamics.mechanical_energy`) then measures the integration
error; with no joint forces it is energy conservation.
"""
from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass

import numpy as np
from scipy import integrate

from .. import _value_checks
from ._recursions import DEFAULT_GRAVITY, _chain_data, forward_dynamics, mechanical_energy
from ..rigid_motion._kinematics import LongComputationWarning

__all__ = ["Trajectory", "simulate"]

_ADAPTIVE = {"RK45": integrate.RK45, "DOP853": integrate.DOP853, "Radau": integrate.Radau}
_FIXED = ("rk4", "semi_implicit_euler")
METHODS = tuple(_ADAPTIVE) + _FIXED

MAX_STEPS = 100_000
"""Default step limit of :func:`simulate` (its ``max_steps``): a fixed-step run needing more is
refused before it starts, with an estimate of its time and memory; an adaptive run that reaches
it stops with a ValueError saying where it was and why its steps shrank."""

LONG_RUN_SECONDS = 60.0
"""A fixed-step run estimated to take longer than this warns (LongComputationWarning)."""
"""The integrators :func:`simulate` accepts."""


@dataclass(frozen=True)
class Trajectory:
    r"""The result of :func:`simulate`, an immutable value.

    Attributes
    ----------
    t : ndarray (N,), s -- output times
    q, qd : ndarray (N, n) -- joint positions and velocities at ``t``
    tau : ndarray (N, n) -- the joint forces applied at ``t``
    energy : ndarray (N,), J -- mechanical energy T + V
    power_in : ndarray (N,), W -- power of the joint forces :math:`\tau^T\dot q`
    work : ndarray (N,), J -- :math:`\int_0^t\tau^T\dot q\,dt`, integrated with the motion
    step_sizes : ndarray -- the integrator's accepted step sizes, s
    nfev : int -- number of evaluations of the dynamics
    method : str
    gravity : ndarray (3,)
    """
    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    tau: np.ndarray
    energy: np.ndarray
    power_in: np.ndarray
    work: np.ndarray
    step_sizes: np.ndarray
    nfev: int
    method: str
    gravity: np.ndarray

    @property
    def energy_error(self) -> np.ndarray:
        r"""The energy-balance residual :math:`E(t) - E(0) - \int_0^t\tau^T\dot q\,dt` (N,), J;
        zero for an exact solution."""
        return self.energy - self.energy[0] - self.work

    @property
    def relative_energy_drift(self) -> float:
        r"""The energy-balance error relative to the energy's size, a dimensionless accuracy
        measure: :math:`\max_t|E(t) - E(0) - w(t)|` divided by the energy scale
        :math:`s = \max(|E(0)|,\ \max E - \min E,\ \max|w|)`.

        The scale is what the trajectory records of the energy's size: its start value, its
        range (the energy exchanged with the motors, or lost), the work put in. It does not
        depend on where the potential's zero is as long as one of them is well above the error;
        so a motion that starts at :math:`E(0) \approx 0` is still measured against the range
        of its energy. Only when :math:`|E(0)|` and :math:`\max|w|` are both no larger than the
        error itself (e.g. a free motion started at rest where :math:`V = 0`: the energy stays
        0 up to the error, and its range is the error) is there no recorded scale; then a
        ``RuntimeWarning`` says so, and the absolute figure
        ``np.abs(traj.energy_error).max()`` (J) is the one to report. Returns 0.0 for an exact
        balance.
        """
        import warnings
        err = float(np.abs(self.energy_error).max())
        if err == 0.0:
            return 0.0
        start, work = abs(float(self.energy[0])), float(np.abs(self.work).max())
        scale = max(start, float(np.ptp(self.energy)), work, 1e-300)
        if max(start, work) <= err:
            warnings.warn(f"Trajectory.relative_energy_drift: |E(0)| = {start:.3g} J and "
                          f"max |work| = {work:.3g} J are no larger than the energy error "
                          f"{err:.3g} J, so the energy's range is the error itself and the "
                          f"relative figure means nothing; report the absolute error "
                          f"np.abs(traj.energy_error).max() = {err:.3g} J instead",
                          RuntimeWarning, stacklevel=2)
        return err / scale

    def summary(self) -> str:
        """A short report: method, steps and their sizes, evaluations, energy drift.

        >>> from robodyn.models import planar_rr
        >>> traj = simulate(planar_rr(), [0.5, 0], [0, 0], 1.0, gravity=[0, -9.81, 0])
        >>> traj.summary().startswith("RK45 on 2 joints, t = 0 .. 1 s")
        True
        """
        h = self.step_sizes
        lines = [f"{self.method} on {self.q.shape[1]} joints, t = {self.t[0]:g} .. "
                 f"{self.t[-1]:g} s, output at {len(self.t)} times",
                 f"steps: {len(h)} (size min {h.min():.3g}, median {np.median(h):.3g}, "
                 f"max {h.max():.3g} s), {self.nfev} evaluations of the dynamics",
                 f"energy: E(0) = {self.energy[0]:.6g} J; max |E - E(0) - work| = "
                 f"{np.abs(self.energy_error).max():.3g} J "
                 f"(relative drift {self.relative_energy_drift:.3g})"]
        return "\n".join(lines)


def _torque_function(tau, n):
    if tau is None:
        zero = np.zeros(n)
        return lambda t, q, qd: zero
    if callable(tau):
        def f(t, q, qd):
            u = _value_checks._to_array(tau(t, q, qd), "simulate: tau(t, q, qd)")
            if u.shape != (n,):
                raise _value_checks.refusal(
                    ValueError, f"simulate: tau(t, q, qd): expected a vector of {n} joint "
                                f"forces, got shape {u.shape} at t = {t:g}")
            return _value_checks.finite(u, f"simulate: tau(t, q, qd) at t = {t:g}")
        return f
    u = _value_checks.vector(tau, n, f"simulate: tau (constant, one value per joint, or a callable "
                               f"tau(t, q, qd))")
    return lambda t, q, qd: u


def simulate(chain, q0, qd0, t_final, *, tau=None, gravity=DEFAULT_GRAVITY, dt=None,
             method="RK45", rtol=1e-9, atol=1e-9, t_eval=None, on_step=None,
             max_steps=MAX_STEPS):
    r"""Integrate the motion of a chain under joint forces and gravity (eq. (5.14)).

    Parameters
    ----------
    chain : SerialChain with inertias (numeric)
    q0, qd0 : array_like (n,) -- initial joint positions and velocities
    t_final : float > 0, s
    tau : None, array_like (n,) or callable ``tau(t, q, qd) -> (n,)``
        joint forces: none (free motion), constant, or a feedback law.
    gravity : array_like (3,), space frame, m/s^2
    dt : float, s -- the step of the fixed-step methods (rounded down so that a whole number
        of equal steps ends at ``t_final``); for the adaptive methods, the largest step allowed.
    method : ``'RK45'``, ``'DOP853'``, ``'Radau'`` (adaptive, scipy), ``'rk4'`` (classical
        fixed-step Runge--Kutta, order 4) or ``'semi_implicit_euler'``
        (:math:`\dot q_{k+1} = \dot q_k + h\ddot q_k`, :math:`q_{k+1} = q_k + h\dot q_{k+1}`;
        order 1, symplectic when M is constant)
    rtol, atol : float -- tolerances of the adaptive methods
    t_eval : array_like, optional -- output times in [0, t_final] (adaptive methods: from the
        solver's dense output); default: every accepted step
    on_step : callable ``on_step(t)``, optional -- called after every accepted step (progress)
    max_steps : int, default ``MAX_STEPS`` -- the most steps the run may take (at most
        1e8). A fixed-step run needing more is refused before it starts, with the time and
        memory it would take; an adaptive run stops there with a ValueError (an initial speed
        of 1e6 rad/s or a stiff system makes the steps tiny).

    Returns
    -------
    Trajectory

    Raises
    ------
    ValueError
        for bad shapes or values, a non-positive ``t_final``, an unknown method, ``dt``
        missing for a fixed-step method, ``t_eval`` outside [0, t_final], a failed solver, or
        more than ``max_steps`` steps.

    Warns
    -----
    LongComputationWarning
        when a fixed-step run is estimated (from a timed evaluation) to take more than
        ``LONG_RUN_SECONDS``.

    Examples
    --------
    A free swing of the RR arm conserves energy:

    >>> from robodyn.models import planar_rr
    >>> traj = simulate(planar_rr(), [0.5, 0], [0, 0], 2.0, gravity=[0, -9.81, 0], rtol=1e-10,
    ...                 atol=1e-10)
    >>> bool(traj.relative_energy_drift < 1e-7)
    True
    """
    fname = "simulate"
    d = _chain_data(chain, fname)
    n = d.n
    per_joint = f"one value per joint of the {n}-joint chain"
    q0 = _value_checks.real_array(q0, f"{fname}: q0", shape=(n,), hint=per_joint)
    qd0 = _value_checks.real_array(qd0, f"{fname}: qd0", shape=(n,), hint=per_joint)
    t_final = _value_checks.real_number(t_final, f"{fname}: t_final", low=0, strict_low=True,
                                  hint="a duration in s")
    g = _value_checks.real_array(gravity, f"{fname}: gravity", shape=(3,),
                           hint="space-frame acceleration, m/s^2")
    method = _value_checks.choice(method, f"{fname}: method", METHODS)
    max_steps = _value_checks.size(max_steps, f"{fname}: max_steps", high=10**8)
    if dt is not None:
        dt = float(_value_checks.positive(dt, f"{fname}: dt", hint="a time step in seconds"))
    elif method in _FIXED:
        raise _value_checks.refusal(
            ValueError, f"{fname}: dt: expected a time step (s) for the fixed-step method "
                        f"{method!r}, got None")
    rtol = _value_checks.tolerance(rtol, f"{fname}: rtol")
    atol = _value_checks.tolerance(atol, f"{fname}: atol")
    if t_eval is not None:
        if method in _FIXED:
            raise _value_checks.refusal(
                ValueError, f"{fname}: t_eval is for the adaptive methods; {method!r} outputs "
                            f"every step (choose dt)")
        t_eval = _value_checks._to_array(t_eval, f"{fname}: t_eval")
        if t_eval.ndim != 1 or t_eval.size == 0:
            raise _value_checks.refusal(
                ValueError, f"{fname}: t_eval: expected a 1-D array of times, got shape "
                            f"{t_eval.shape}")
        _value_checks.finite(t_eval, f"{fname}: t_eval")
        if t_eval.min() < 0 or t_eval.max() > t_final or np.any(np.diff(t_eval) < 0):
            raise _value_checks.refusal(
                ValueError, f"{fname}: t_eval: expected increasing times in [0, {t_final:g}], "
                            f"got [{t_eval.min():g}, {t_eval.max():g}]")
    if on_step is not None and not callable(on_step):
        raise _value_checks.refusal(TypeError, f"{fname}: on_step: expected a callable on_step(t), got "
                        f"{_value_checks._describe(on_step)}")
    torque = _torque_function(tau, n)
    nfev = [0]

    def accel(t, q, qd):
        nfev[0] += 1
        u = torque(t, q, qd)
        return forward_dynamics(chain, q, qd, u, gravity=g), u

    def rhs(t, y):
        if not np.isfinite(y).all():               # the state overflowed inside a step
            raise _value_checks.refusal(_value_checks.ResultError, f"{fname}: result: expected a finite state, got NaN "
                                         f"or inf at t = {t:g} s (an overflow: the state or "
                                         f"the forces are too large for float64)")
        q, qd = y[:n], y[n:2 * n]
        qdd, u = accel(t, q, qd)
        return np.concatenate([qd, qdd, [u @ qd]])

    y0 = np.concatenate([q0, qd0, [0.0]])
    with _value_checks.overflow_guard(fname):
        if method in _ADAPTIVE:
            T, Y, steps = _adaptive(_ADAPTIVE[method], rhs, y0, t_final, rtol, atol, dt,
                                    t_eval, on_step, max_steps)
        else:
            _fixed_budget(method, rhs, y0, t_final, dt, max_steps)
            T, Y, steps = _fixed(method, rhs, accel, y0, n, t_final, dt, on_step)
        q, qd, work = Y[:, :n], Y[:, n:2 * n], Y[:, 2 * n]
        taus = np.array([torque(t, a, b) for t, a, b in zip(T, q, qd)])
        energy = mechanical_energy(chain, q, qd, gravity=g)
    out = Trajectory(t=T, q=q, qd=qd, tau=taus, energy=np.atleast_1d(energy),
                     power_in=np.einsum("ij,ij->i", taus, qd), work=work,
                     step_sizes=np.asarray(steps), nfev=nfev[0], method=method, gravity=g)
    _value_checks.finite_result((out.t, out.q, out.qd, out.tau, out.energy, out.power_in, out.work),
                          fname)
    return out


def _fixed_steps(t_final, dt):
    return max(1, math.ceil(t_final / dt - 1e-9))


def _fixed_budget(method, rhs, y0, t_final, dt, max_steps):
    """Refuse a fixed-step run of more than ``max_steps`` steps, warn for a long one; both
    with an estimate from one timed evaluation of the right-hand side."""
    if not np.isfinite(t_final / dt):                # 1e308 / 0.01: an overflow to inf
        raise _value_checks.refusal(
            ValueError, f"simulate: dt, t_final: expected at most max_steps = {max_steps} "
                        f"steps, got t_final / dt = inf steps; take a larger dt, a shorter "
                        f"t_final, an adaptive method, or raise max_steps")
    N = _fixed_steps(t_final, dt)
    evals = 4 if method == "rk4" else 1
    start = time.perf_counter()
    rhs(0.0, y0)
    per_eval = time.perf_counter() - start
    seconds = N * evals * per_eval
    memory = (N + 1) * len(y0) * 8 * 3          # states, plus the outputs derived from them
    if N > max_steps:
        raise _value_checks.refusal(
            ValueError, f"simulate: dt, t_final: expected at most max_steps = {max_steps} "
                        f"steps, got "
                        f"dt = {dt:g} s for t_final = {t_final:g} s, i.e. {N} steps (about "
                        f"{seconds:.3g} s and {memory / 1e6:.3g} MB here); take a larger dt, an "
                        f"adaptive method, or raise max_steps")
    if seconds > LONG_RUN_SECONDS:
        warnings.warn(f"simulate: {N} {method} steps will take about {seconds:.0f} s here "
                      f"(pass on_step to see progress)", LongComputationWarning, stacklevel=3)


def _adaptive(solver_class, rhs, y0, t_final, rtol, atol, max_step, t_eval, on_step,
              max_steps=MAX_STEPS):
    solver = solver_class(rhs, 0.0, y0, t_final, rtol=rtol, atol=atol,
                          max_step=np.inf if max_step is None else max_step)
    ts, ys, steps = [0.0], [y0], []
    if t_eval is not None:
        ts, ys = [], []
        k = 0
        while k < len(t_eval) and t_eval[k] <= 0.0:
            ts.append(t_eval[k])
            ys.append(y0)
            k += 1
    while solver.status == "running":
        t_old = solver.t
        msg = solver.step()
        if solver.status == "failed":
            raise _value_checks.refusal(
                ValueError, f"simulate: result: expected the {solver_class.__name__} solver "
                            f"to advance, got a failure at t = {solver.t:g} s: {msg}")
        steps.append(solver.t - t_old)
        _projected_steps(steps, solver, t_final, max_steps)
        if len(steps) >= max_steps and solver.status == "running":
            recent = float(np.mean(steps[-100:]))
            left = (t_final - solver.t) / recent
            raise _value_checks.refusal(
                ValueError, f"simulate: max_steps: expected the run to end within "
                            f"{max_steps} steps, got to t = {solver.t:.6g} s of "
                            f"{t_final:g} s with recent steps of {recent:.3g} s (about "
                            f"{left:.3g} more steps at that size); the motion is very fast "
                            f"or stiff (huge initial speeds?), or raise max_steps / rtol")
        if t_eval is None:
            ts.append(solver.t)
            ys.append(solver.y.copy())
        else:
            j = k
            while j < len(t_eval) and t_eval[j] <= solver.t:
                j += 1
            if j > k:
                dense = solver.dense_output()
                for t in t_eval[k:j]:
                    ts.append(t)
                    ys.append(dense(t))
                k = j
        if on_step is not None:
            on_step(solver.t)
    return np.array(ts), np.array(ys), steps


PROJECTION_MARGIN = 100.0
"""An adaptive run is refused early when, even with steps this many times the largest taken so
far, the rest of the span would need more than ``max_steps`` steps."""


def _projected_steps(steps, solver, t_final, max_steps):
    """Refuse, every 100 steps, a run that cannot end within ``max_steps`` steps (a t_final of
    1e308 s): its steps would have to grow by more than :data:`PROJECTION_MARGIN`."""
    if len(steps) % 100 or solver.status != "running":
        return
    largest = max(max(steps[-100:]), getattr(solver, "_robodyn_largest", 0.0))
    solver._robodyn_largest = largest               # a running maximum: O(100) per check
    left = (t_final - solver.t) / (PROJECTION_MARGIN * largest) if largest > 0 else np.inf
    if len(steps) + left > max_steps:
        raise _value_checks.refusal(
            ValueError, f"simulate: t_final, max_steps: expected a run that ends within "
                        f"max_steps = {max_steps} steps, got t_final = {t_final:g} s with "
                        f"steps of at most {largest:.3g} s so far (at t = {solver.t:.6g} s): "
                        f"even {PROJECTION_MARGIN:g} times larger steps would need "
                        f"{left:.3g} more; a shorter t_final or a larger max_steps")


def _fixed(method, rhs, accel, y0, n, t_final, dt, on_step):
    N = _fixed_steps(t_final, dt)
    h = t_final / N
    Y = np.empty((N + 1, len(y0)))
    Y[0] = y0
    y = y0
    for k in range(N):
        t = k * h
        if method == "rk4":
            k1 = rhs(t, y)
            k2 = rhs(t + h / 2, y + h / 2 * k1)
            k3 = rhs(t + h / 2, y + h / 2 * k2)
            k4 = rhs(t + h, y + h * k3)
            y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        else:
            q, qd, w = y[:n], y[n:2 * n], y[2 * n]
            qdd, u = accel(t, q, qd)
            qd_new = qd + h * qdd
            # work: the power at the new velocity with the step's force (first order, like q)
            y = np.concatenate([q + h * qd_new, qd_new, [w + h * (u @ qd_new)]])
        Y[k + 1] = y
        if on_step is not None:
            on_step((k + 1) * h)
    return np.linspace(0.0, t_final, N + 1), Y, np.full(N, h)

from .._boundary import seal as _seal  # noqa: E402 -- the one boundary (issue 28): last, over the finished module
_seal(globals())
