r"""Simulating constrained systems (Part III): :func:`simulate_constrained` by any of the four
methods of :mod:`robodyn.constraints`, with Baumgarte stabilization of the drift, and
:func:`constraint_controller`, trajectory tracking by a desired path taken as a constraint.

(These lived in a private ``_constraint_systems`` module re-imported by
:mod:`robodyn.constraints`; ``robodyn.constraints.simulate_constrained`` and the other old names
still work.)"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import sympy as sp

from ..kinds import TimeStep
from .. import _value_checks
from .. import _meaning_checks
from ..equations import _check_values, _result_errors
from ._systems import (METHODS, ConstrainedMotion, ConstrainedSystem, ConstraintWarning,
                          Constraints, NumericConstrained, lagrangian_equations)

__all__ = ["ConstrainedTrajectory", "simulate_constrained", "constraint_controller"]

# --------------------------------------------------------------------------
# simulation
# --------------------------------------------------------------------------

@dataclass(frozen=True)
class ConstrainedTrajectory:
    r"""The result of :func:`simulate_constrained`, an immutable value.

    Attributes
    ----------
    t : (N,) s; q, qd : (N, n); constraint_force : (N, n) -- :math:`F^C` at each sample
    residual : (N,) -- :math:`\|\varphi(q, t)\|` (position residual of the holonomic rows)
    velocity_residual : (N,) -- :math:`\|A\dot q - c\|`
    kinetic_energy : (N,) -- :math:`\tfrac12\dot q^TM\dot q`
    nfev : int -- evaluations of the constrained dynamics
    stabilization : str
    """
    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    constraint_force: np.ndarray
    residual: np.ndarray
    velocity_residual: np.ndarray
    kinetic_energy: np.ndarray
    nfev: int
    stabilization: str

    @property
    def max_residual(self):
        """The largest position and velocity residuals along the run."""
        return float(np.max(self.residual, initial=0.0)), float(np.max(self.velocity_residual))


def _system(system, fname):
    """The ConstrainedSystem argument, checked once at the boundary."""
    if not isinstance(system, ConstrainedSystem):
        raise _value_checks.error(f"{fname}: system", "a ConstrainedSystem", _value_checks.describe(system),
                            exc=TypeError)
    return system


MAX_GAIN = 1e4
"""Largest Baumgarte gain accepted (1/s): above it the equations are so stiff that an
explicit integrator would take billions of steps."""

MAX_RHS_CALLS = 2_000_000
"""Budget of right-hand-side evaluations of one :func:`simulate_constrained` run."""


def _gains(alpha, beta, fname):
    """Baumgarte gains: real numbers in [0, MAX_GAIN] (1/s)."""
    for k, v in (("alpha", alpha), ("beta", beta)):
        if _value_checks.is_symbolic(v):
            raise _value_checks.error(f"{fname}: {k}", "a number (1/s)", v, exc=TypeError)
        g = _value_checks.scalar(v, f"{fname}: {k}")
        if g < 0:
            raise _value_checks.error(f"{fname}: {k}", "a gain >= 0 (1/s)", repr(v))
        if g > MAX_GAIN:
            raise _value_checks.error(f"{fname}: {k}", f"a gain <= {MAX_GAIN:g} (1/s)", repr(v),
                                "gains far above the motion's own frequencies make the "
                                "equations stiff: the run would take millions of steps")


def simulate_constrained(system, q0, qd0, t_final, *, values=None, method="udwadia_kalaba",
                         tau=None, stabilization=None, alpha=None, beta=None, dt: TimeStep = 0.01,
                         integrator="DOP853", rtol=1e-9, atol=1e-9, project_initial=True):
    r"""Integrate a constrained system, recording the constraint residual along the motion.

    Integrating :math:`A\ddot q = b` keeps the constraints only up to integration error: the
    residual :math:`\varphi` drifts (it obeys :math:`\ddot\varphi = 0` plus errors, so it can grow
    like :math:`t^2`). Two remedies:

    * ``stabilization='baumgarte'``: replace b by :math:`b - 2\alpha\dot\varphi - \beta^2\varphi`
      (holonomic rows; :math:`b - 2\alpha(A\dot q - c)` for Pfaffian rows), so that the residual
      obeys the damped oscillator :math:`\ddot\varphi + 2\alpha\dot\varphi + \beta^2\varphi = 0`:
      natural frequency :math:`\beta` (1/s), damping ratio :math:`\alpha/\beta`, critically
      damped at :math:`\alpha = \beta`; errors decay like :math:`e^{-\alpha t}`. Gains far above
      the motion's own frequencies make the equations stiff.
    * ``stabilization='projection'``: after every output interval ``dt`` put (q, q̇) back onto
      the constraint manifold (``NumericConstraints.project``; velocities M-orthogonally).

    Parameters
    ----------
    system : ConstrainedSystem
    q0, qd0 : (n,) initial state (made admissible first by projection)
    t_final : float > 0, s
    values : parameter values of a symbolic model
    method : one of ``METHODS``
    tau : None or callable ``tau(t, q, qd) -> (n,)``, forces along the coordinates
    stabilization : None, ``'baumgarte'`` or ``'projection'``
    alpha, beta : Baumgarte gains, 1/s (needed for ``'baumgarte'``)
    dt : output interval (and projection interval), s
    integrator : ``'DOP853'``, ``'RK45'`` or ``'Radau'`` (scipy)
    rtol, atol : tolerances of the integrator
    project_initial : if True (default) start from the admissible state nearest (q0, qd0); if
        False start exactly at (q0, qd0) (to watch a residual decay)

    Returns
    -------
    ConstrainedTrajectory

    Raises
    ------
    ValueError for bad shapes, t_final or dt <= 0, rtol or atol outside (0, 1], an unknown
    method, stabilization or integrator, missing or negative gains; TypeError for a system that
    is not a ConstrainedSystem or a tau that is not callable; a :class:`ConstraintWarning`
    when the residual at the end exceeds 1e-3.

    Examples
    --------
    >>> from robodyn.models import particle_pendulum
    >>> run = simulate_constrained(particle_pendulum(), [1.0, 0.0], [0.0, 0.0], 1.0,
    ...                            values={'m': 1, 'l': 1, 'g': 9.81})
    >>> bool(run.max_residual[0] < 1e-6)
    True
    """
    from scipy.integrate import solve_ivp
    fname = "simulate_constrained"
    n = _system(system, fname).n
    q0, qd0 = (_value_checks.vector(x, n, f"{fname}: {k} (one value per coordinate)")
               for k, x in (("q0", q0), ("qd0", qd0)))
    t_final = _value_checks.real_number(t_final, f"{fname}: t_final", low=0, strict_low=True,
                                  hint="a duration in seconds")
    dt = _value_checks.real_number(dt, f"{fname}: dt", low=0, strict_low=True,
                             hint="an output interval in seconds")
    _meaning_checks.steps(t_final, dt, f"{fname}: t_final, dt", high=10**6, item_bytes=8 * (4 * n + 4))
    _value_checks.flag(project_initial, f"{fname}: project_initial")
    _check_values(values, fname)
    rtol, atol = (_value_checks.tolerance(x, f"{fname}: {k}") for k, x in (("rtol", rtol),
                                                                      ("atol", atol)))
    if stabilization not in (None, "baumgarte", "projection"):
        raise _value_checks.error(f"{fname}: stabilization", "None, 'baumgarte' or 'projection'",
                            repr(stabilization))
    integrator = _value_checks.choice(integrator, f"{fname}: integrator", ("DOP853", "RK45", "Radau"))
    _value_checks.choice(method, f"{fname}: method", METHODS)
    if tau is not None and not callable(tau):
        raise _value_checks.error(f"{fname}: tau", "a callable tau(t, q, qd)", tau, exc=TypeError)
    if stabilization == "baumgarte":
        if alpha is None or beta is None:
            raise _value_checks.error(f"{fname}: alpha, beta", "both Baumgarte gains (1/s) with "
                                "stabilization='baumgarte'", f"alpha={alpha}, beta={beta}",
                                "e.g. alpha = beta = 10")
        _gains(alpha, beta, fname)
    num = NumericConstrained(system, values, method, fname)  # its own copy: gains are set on it
    num.baumgarte = (float(alpha), float(beta)) if stabilization == "baumgarte" else None
    cn = num.constraints
    with _result_errors(fname):     # every argument is checked: errors below are results
        _meaning_checks.spd(num.mass_matrix(q0, 0.0), f"{fname}: values (the mass matrix at q0)")
        if project_initial:
            q0, qd0 = cn._project(q0, qd0, 0.0, num.mass_matrix(q0, 0.0), 1e-12, 50, fname,
                                  ("q0", "qd0"))
        force = (lambda t, q, qd: None) if tau is None else (
            lambda t, q, qd: _value_checks.vector(tau(t, q, qd), n, f"{fname}: tau(t, q, qd)"))
        count = [0]
        qdd = num._qdd

        def rhs(t, y):                    # the inner loop: no checks beyond those of tau's output
            count[0] += 1
            if count[0] > MAX_RHS_CALLS:
                raise _value_checks.refusal(
                    ValueError, f"{fname}: the integrator needed more than {MAX_RHS_CALLS} "
                                f"evaluations before t = {t:.6g} s of {t_final:g} s: the "
                                f"equations are stiff (large gains?) or the motion singular; "
                                f"try integrator='Radau', smaller gains or a shorter t_final")
            q, qd = y[:n], y[n:]
            out = np.concatenate((qd, qdd(q, qd, t, force(t, q, qd))))
            if not np.isfinite(out).all():
                raise _value_checks.refusal(
                    ValueError, f"{fname}: result: expected finite numbers for finite input, got "
                                f"NaN or infinity at t = {t:.6g} s (an overflow: q0, qd0 or the "
                                f"parameters too large for float64 arithmetic)")
            return out

        steps = max(1, int(np.ceil(t_final / dt - 1e-9)))
        T = np.linspace(0.0, t_final, steps + 1)
        Y = [np.concatenate([q0, qd0])]
        if stabilization == "projection":
            for k in range(steps):
                sol = solve_ivp(rhs, (T[k], T[k + 1]), Y[-1], method=integrator, rtol=rtol,
                                atol=atol)
                if not sol.success:
                    raise _value_checks.refusal(
                        ValueError, f"{fname}: the {integrator} solver failed at t = {T[k]:g} s: "
                                    f"{sol.message}")
                y = sol.y[:, -1]
                q, qd = cn._project(y[:n], y[n:], T[k + 1], num.mass_matrix(y[:n], T[k + 1]),
                                    1e-12, 50, fname, ("q0", "qd0"))
                Y.append(np.concatenate([q, qd]))
        else:
            sol = solve_ivp(rhs, (0.0, t_final), Y[0], method=integrator, rtol=rtol, atol=atol,
                            t_eval=T)
            if not sol.success:
                raise _value_checks.refusal(
                    ValueError, f"{fname}: the {integrator} solver failed: {sol.message}")
            Y = list(sol.y.T)
        Y = np.array(Y)
        q, qd = Y[:, :n], Y[:, n:]
        res, vres, Fc, ke = [], [], [], []
        for t, a, v in zip(T, q, qd):
            phi, psi = cn.residuals(a, v, t)
            res.append(np.linalg.norm(phi))
            vres.append(np.linalg.norm(psi))
            Fc.append(num.solve(a, v, t, force(t, a, v)).constraint_force)
            ke.append(0.5 * v @ num.mass_matrix(a, t) @ v)
        res, vres = np.array(res), np.array(vres)
        if res[-1] > 1e-3:
            warnings.warn(f"{fname}: the constraints drifted: residual |phi| = {res[-1]:.3g} at "
                          f"t = {t_final:g} s; use stabilization='baumgarte' or 'projection'",
                          ConstraintWarning, stacklevel=2)
        if vres[-1] > 1e-3 * max(1.0, float(np.abs(qd).max(initial=0.0))):
            warnings.warn(f"{fname}: the velocity constraints do not hold: residual "
                          f"|A qd - c| = {vres[-1]:.3g} at t = {t_final:g} s (from "
                          f"{vres[0]:.3g} at the start)", ConstraintWarning, stacklevel=2)
        return ConstrainedTrajectory(T, q, qd, np.array(Fc), res, vres, np.array(ke),
                                     count[0], stabilization or "none")


def constraint_controller(system, values=None, alpha=10.0, beta=10.0):
    r"""Tracking control by constraints (the review's "new approach to control design"): the
    desired motion is written as constraints :math:`\varphi(q, t) = 0` (rheonomic) on the
    *unconstrained* model, and the Udwadia--Kalaba constraint force (eq. (36)) that would
    enforce them, with Baumgarte terms so that errors decay, is applied as the joint forces.

    Returns a callable ``tau(t, q, qd) -> (n,)`` for :func:`robodyn.dynamics.simulate` (a
    chain model) or :func:`simulate_constrained`.

    >>> import sympy as sp
    >>> from robodyn import models
    >>> q1, q2, t = sp.symbols('q1 q2 t')
    >>> hold = Constraints([q1, q2], holonomic=[q1 - 0.5, q2], t=t)
    >>> ctrl = constraint_controller(ConstrainedSystem(models.planar_rr(), hold,
    ...                                                gravity=[0, -9.81, 0]))
    >>> ctrl(0.0, np.array([0.5, 0.0]), np.zeros(2)).round(3).tolist()
    [17.218, 4.305]
    """
    fname = "constraint_controller"
    _system(system, fname)
    _gains(alpha, beta, fname)
    _check_values(values, fname)
    num = NumericConstrained(system, values, "udwadia_kalaba", fname)
    num.baumgarte = (float(alpha), float(beta))

    def tau(t, q, qd):
        return num.solve(np.asarray(q, float), np.asarray(qd, float), t).constraint_force
    return tau

from .._boundary import seal as _seal  # noqa: E402 -- the one boundary (issue 28): last, over the finished module
_seal(globals())
