r"""Moreau–Jean time-stepping: nonsmooth mechanics without event location (Part IV).

Each step of length h works at the velocity level, eq. (iv-moreau-jean):

.. math:: q_m = q_k + \tfrac h2 v_k, \qquad
          M(q_m)(v_{k+1} - v_k) = h f(q_m, v_k) + J_n^T\Lambda_n + J_t^T\Lambda_t, \qquad
          q_{k+1} = q_m + \tfrac h2 v_{k+1},

where the contacts with :math:`\phi_i(q_m) \le 0` are active and the impulses
:math:`\Lambda` (which hold the contact forces times h as well as the impacts) solve the same
complementarity problem as an impact (:func:`~robodyn.impacts.contact_impulse`): Newton's law
:math:`0 \le \Lambda_{n,i} \perp J_{n,i}v_{k+1} + e_iJ_{n,i}v_k \ge 0` and Coulomb's planar
cone. Impacts, resting, sliding and sticking need no special treatment; the price is first
order accuracy and a penetration of order h times the speed. Compare with the event-driven
:func:`~robodyn.impacts.simulate_hybrid` on the same :class:`~robodyn.impacts.HybridSystem`.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..kinds import Tolerance
from .. import _value_checks
from ._contact import choose_method, solve_lcp, solve_modes
from ._segments import _jac, _tangent_row
from ._hybrid import HybridSystem, _surfaces_consistent

__all__ = ["TimeSteppingResult", "moreau_jean"]


@dataclass(frozen=True)
class TimeSteppingResult:
    """The result of :func:`moreau_jean`: ``t`` (N,), ``q``, ``qd`` (N, n), ``impulse_n``
    (N, p) the normal impulses of each step (N s; the contact force times h when resting),
    ``active`` (N, p) which contacts were active, ``energy`` (N,) or None."""
    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    impulse_n: np.ndarray
    active: np.ndarray
    energy: np.ndarray | None = field(default=None, repr=False)


def _solve(Minv, Jn, Jt, mu, v, cn, tol, fname):
    """One step's contact problem: the enumeration for a few contacts, else Lemke or
    projected Gauss--Seidel (``choose_method``)."""
    p = len(mu)
    method = choose_method(p, mu, Jt)
    if method == "enumerate":
        return solve_modes(Minv, Jn, Jt, mu, v, cn, np.zeros(p), np.zeros(p), tol, fname)
    return solve_lcp(Minv, Jn, Jt, mu, v, cn, method, tol, None, fname)


def moreau_jean(system, q0, qd0, t_final, h, *, t0=0.0, max_steps=10**6, tol: Tolerance = 1e-9):
    r"""Simulate a :class:`~robodyn.impacts.HybridSystem` with the Moreau–Jean midpoint scheme,
    eq. (iv-moreau-jean); each step's contact problem is solved by mode enumeration (exact) for
    a few active contacts, by Lemke's method or projected Gauss--Seidel for many
    (``choose_method``).

    Parameters
    ----------
    system : HybridSystem whose surfaces have no custom ``impact`` map (restitution, friction
        and ``tangent`` rows are used)
    q0, qd0 : (n,) initial state
    t_final : end time (s), > t0
    h : time step (s)
    max_steps : bound on the number of steps; ``(t_final - t0) / h`` above it is refused
    tol : tolerance of the complementarity tests

    Returns
    -------
    TimeSteppingResult

    Raises
    ------
    ValueError
        bad times or step, too many steps, a surface with a custom impact map.

    Examples
    --------
    A ball dropped from 1 m with e = 0.5 comes to rest near
    :math:`t_\infty = \sqrt{2/g}\,(1+e)/(1-e) = 1.3546` s:

    >>> from robodyn import walking
    >>> r = moreau_jean(walking.bouncing_ball(0.5), [0.0, 1.0], [0.0, 0.0], 2.0, 1e-3)
    >>> bool(abs(r.q[-1, 1]) < 1e-4), bool(abs(r.qd[-1, 1]) < 1e-9)
    (True, True)
    """
    fname = "moreau_jean"
    if not isinstance(system, HybridSystem):
        raise _value_checks.refusal(TypeError, f"{fname}: system: expected a HybridSystem, got "
                        f"{_value_checks.describe(system)}")
    custom = [s.name for s in system.surfaces if s.impact is not None or s.terminal]
    if custom:
        raise _value_checks.refusal(
            ValueError, f"{fname}: system: expected surfaces with the contact law only, got "
                        f"{custom} with a custom impact map or terminal (hint: a walker's "
                        f"leg exchange is a reset map; use simulate_hybrid)")
    n = system.n
    q = np.array(_value_checks.real_array(q0, f"{fname}: q0", shape=(n,)), dtype=float)
    v = np.array(_value_checks.real_array(qd0, f"{fname}: qd0", shape=(n,)), dtype=float)
    t0 = _value_checks.real_number(t0, f"{fname}: t0")
    t_final = _value_checks.real_number(t_final, f"{fname}: t_final")
    if not (np.isfinite(t_final) and t_final > t0):
        raise _value_checks.refusal(
            ValueError, f"{fname}: t_final: expected a finite time > t0 = {t0}, got {t_final}")
    h = _value_checks.real_number(h, f"{fname}: h", low=0, strict_low=True)
    if h > t_final - t0:
        raise _value_checks.error(f"{fname}: h", f"a step at most the span t_final - t0 = "
                            f"{t_final - t0:g} s", f"h = {h:g} s",
                            "a step longer than the run would take no step at all")
    max_steps = _value_checks.size(max_steps, f"{fname}: max_steps", high=10**8)
    ratio = (t_final - t0) / h                  # inf when the span overflows: refused too
    if not ratio - 1e-9 <= max_steps:
        raise _value_checks.refusal(
            ValueError, f"{fname}: t_final, h: expected at most max_steps = {max_steps} steps, "
                        f"got (t_final - t0) / h = {ratio:.6g} (a larger h or a shorter run)")
    steps = int(np.ceil(ratio - 1e-9))
    tol = _value_checks.tolerance(tol, f"{fname}: tol")
    surfs = system.surfaces
    for s in surfs:
        gap = float(s.phi(q))
        if gap < -max(tol, 1e-9) * max(1.0, float(np.abs(q).max(initial=0.0))):
            raise _value_checks.error(f"{fname}: q0", f"a state on or outside every surface (phi >= 0)",
                                f"phi = {gap:.3g} for surface {s.name!r}",
                                "the run would start inside the obstacle")
    _surfaces_consistent(system, q, fname)
    p = len(surfs)
    mu_all = np.array([s.friction for s in surfs])
    e_all = np.array([s.restitution for s in surfs])
    T = t0 + h * np.arange(steps + 1)
    T[-1] = t_final
    Q, V = np.empty((steps + 1, n)), np.empty((steps + 1, n))
    L, A = np.zeros((steps + 1, p)), np.zeros((steps + 1, p), dtype=bool)
    Q[0], V[0] = q, v
    with _value_checks.overflow_guard(fname):
        _steps(system, fname, T, Q, V, L, A, mu_all, e_all, tol)
    energy = None
    if system.energy is not None:
        energy = np.array([system.energy(a, b) for a, b in zip(Q, V)])
    _value_checks.finite_result((Q, V, L, energy), fname)
    return TimeSteppingResult(T, Q, V, L, A, energy)


def _steps(system, fname, T, Q, V, L, A, mu_all, e_all, tol):
    """The Moreau--Jean steps from (Q[0], V[0]), filling Q, V, L (normal impulses) and A
    (active contacts); a state that overflows is refused at the step where it does."""
    surfs, n = system.surfaces, system.n
    q, v = Q[0].copy(), V[0].copy()
    for k in range(len(T) - 1):
        hk = T[k + 1] - T[k]
        qm = q + 0.5 * hk * v
        M = system.form.mass_matrix(qm, T[k])
        Minv = np.linalg.inv(M)
        v_free = v + hk * (Minv @ system.form.forcing(qm, v, T[k]))
        act = [i for i, s in enumerate(surfs) if float(s.phi(qm)) <= 0.0]
        if act:
            Jn = np.array([_jac(surfs[i], qm, n) for i in act])
            Jt = np.array([_tangent_row(surfs[i], qm, n) for i in act])
            cn = e_all[act] * np.minimum(Jn @ v, 0.0)
            out = _solve(Minv, Jn, Jt, mu_all[act], v_free, cn, tol, fname)
            if out is None:
                raise RuntimeError(f"{fname}: no admissible contact impulse at t = {T[k]:.6g} "
                                   f"s (an infeasible contact set)")
            v, Ln = out[0], out[1]
            L[k + 1, act], A[k + 1, act] = Ln, True
        else:
            v = v_free
        q = qm + 0.5 * hk * v
        if not (np.isfinite(q).all() and np.isfinite(v).all()):
            raise _value_checks.refusal(_value_checks.ResultError, f"{fname}: result: expected finite numbers for finite "
                                         f"input, got NaN or inf at t = {T[k + 1]:.6g} s (an "
                                         f"overflow: the state is too large for float64)")
        Q[k + 1], V[k + 1] = q, v

from .._boundary import seal as _seal  # noqa: E402 -- the one boundary (issue 28): last, over the finished module
_seal(globals())
