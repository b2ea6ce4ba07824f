r"""Impacts and hybrid simulation (Part IV of the book, handbook §5.5).

An impact on the surfaces :math:`\phi(q) = 0` (p of them at once, :math:`J = \partial\phi/\partial
q`, p x n of full row rank) changes the momentum only along :math:`d\phi` (5.30), so the velocity
jumps along :math:`\mathrm{grad}\,\phi = M^{-1}J^T` (5.31):

.. math:: M(\dot q^+ - \dot q^-) = J^T\Lambda, \qquad J\dot q^+ = -e\,J\dot q^-
          \;\Longrightarrow\; \dot q^+ = \dot q^- - (1+e)\,M^{-1}J^T(JM^{-1}J^T)^{-1}J\dot q^-,

with restitution :math:`0 \le e \le 1`. For e = 0 the map is the M-orthogonal projection onto
the tangent space :math:`\{J\dot q = 0\}` (plastic); for e = 1 kinetic energy is conserved. The
kinetic energy lost is :math:`\tfrac12(1-e^2)\,v^T(JM^{-1}J^T)^{-1}v`, :math:`v = J\dot q^-`:
:math:`1-e^2` times the energy of the normal part of the motion.

* :func:`impact_map` -- the jump, numeric or symbolic, as an :class:`ImpactResult`.
* :class:`Surface`, :class:`HybridSystem`, :func:`simulate_hybrid` -- continuous motion of a
  :class:`~robodyn.equations.NumericForm` between impacts, events located on the sign and
  direction of :math:`\phi` to a stated tolerance, the impact (and a model's reset map), an
  event log, and a clean stop at accumulating impacts (Zeno).
* :func:`return_map`, :func:`fixed_point` -- the step-to-step (Poincaré) map of a hybrid system
  and its fixed point by Newton's method, with the eigenvalues of the map there.

The models of the chapters (bouncing ball, pendulum and RR arm against a wall, rimless wheel,
compass-gait walker) are in :mod:`robodyn.walkers`.
"""
from __future__ import annotations

import time as _time
import warnings
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import sympy as sp
from scipy.integrate import solve_ivp

from . import _checks
from .equations import MassMatrixForm, NumericForm

__all__ = ["ImpactResult", "impact_map", "Surface", "HybridSystem", "ImpactEvent",
           "HybridTrajectory", "simulate_hybrid", "StepResult", "return_map", "FixedPoint",
           "fixed_point"]


# --------------------------------------------------------------------------
# the impact map
# --------------------------------------------------------------------------

@dataclass(frozen=True)
class ImpactResult:
    """The outcome of :func:`impact_map`.

    ``qd_plus`` (n,) the velocity after the impact; ``impulse`` (p,) the multipliers
    :math:`\\Lambda` of the generalized impulse :math:`J^T\\Lambda` (N s for a point contact with a
    unit-normal row); ``energy_lost`` the kinetic energy lost (J), :math:`\\ge 0`;
    ``normal_before`` and ``normal_after`` the normal velocities :math:`J\\dot q^\\mp` (p,);
    ``restitution`` e. Arrays for numeric input, sympy matrices for symbolic input."""
    qd_plus: object
    impulse: object
    energy_lost: object
    normal_before: object
    normal_after: object
    restitution: object


def _restitution(e, fname):
    e = _checks.scalar(e, f"{fname}: restitution")
    if isinstance(e, sp.Basic) and not e.is_number:
        return e
    if isinstance(e, sp.Basic):
        e = float(e)
    if not 0.0 <= e <= 1.0:
        raise ValueError(f"{fname}: restitution: expected a coefficient e in [0, 1] (0 plastic, "
                         f"1 elastic), got {e!r}")
    return e


def _jacobian_rows(J, n, fname, symbolic):
    if symbolic:
        Jm = _checks.to_sympy(J, f"{fname}: J")
        if Jm.shape[1] == 1 and Jm.shape[0] == n and n > 1:
            Jm = Jm.T
        if Jm.shape[1] != n:
            raise ValueError(f"{fname}: J: expected p x {n} (one row dphi_i/dq per surface), "
                             f"got shape {Jm.shape}")
        return Jm
    Ja = _checks._to_array(J, f"{fname}: J")
    if Ja.ndim == 1:
        Ja = Ja.reshape(1, -1)
    if Ja.ndim != 2 or Ja.shape[1] != n:
        raise ValueError(f"{fname}: J: expected p x {n} (one row dphi_i/dq per surface), got "
                         f"shape {Ja.shape}")
    _checks.finite(Ja, f"{fname}: J")
    return Ja


def impact_map(M, J, qd_minus, restitution, *, normal_rows=None, tol=1e-9):
    r"""The velocity after an impact on the surfaces :math:`\phi(q) = 0`, eq. (hb-5-31).

    .. math:: \dot q^+ = \dot q^- - (1+e)\,M^{-1}J^T(JM^{-1}J^T)^{-1}J\dot q^-

    The momentum jumps along the rows of J only (5.30): :math:`M(\dot q^+ - \dot q^-) =
    J^T\Lambda`, and the normal velocities reverse, scaled by e: :math:`J\dot q^+ = -eJ\dot q^-`.

    Parameters
    ----------
    M : (n, n) mass matrix at the impact configuration (symmetric positive definite), kg, kg m^2
    J : (p, n) or (n,) -- :math:`\partial\phi/\partial q`, p surfaces hit at once, full row rank
    qd_minus : (n,) velocity just before the impact
    restitution : e in [0, 1] (0 plastic, 1 elastic); a sympy Symbol is allowed
    normal_rows : sequence of row indices whose velocity must approach the surface
        (:math:`(J\dot q^-)_i \le 0`); default all rows. Pass ``()`` for rows that are not
        unilateral contacts (a no-slip foot's tangential row, a walker's heel strike).
    tol : relative tolerance of the approach and rank tests

    Returns
    -------
    ImpactResult
        ``qd_plus``, ``impulse`` :math:`\Lambda`, ``energy_lost`` :math:`\tfrac12(1-e^2)v^T
        (JM^{-1}J^T)^{-1}v` with :math:`v = J\dot q^-`, ``normal_before``, ``normal_after``.

    Raises
    ------
    ValueError
        M not square, symmetric and positive definite; J of the wrong shape or not of full row
        rank; e outside [0, 1]; a velocity moving away from a surface (no impact).
    TypeError
        non-numeric input.

    Examples
    --------
    A ball of 2 kg falling at 3 m/s onto the floor y = 0 while moving right at 1 m/s:

    >>> r = impact_map(2 * np.eye(2), [0.0, 1.0], [1.0, -3.0], 0.5)
    >>> r.qd_plus, r.impulse, round(r.energy_lost, 12)
    (array([1. , 1.5]), array([9.]), 6.75)
    """
    fname = "impact_map"
    symbolic = any(_checks.is_symbolic(x) for x in (M, J, qd_minus, restitution))
    e = _restitution(restitution, fname)
    tol = _checks.tolerance(tol, f"{fname}: tol")
    if symbolic:
        Ms = _checks.to_sympy(M, f"{fname}: M")
        n = Ms.shape[0]
        if Ms.shape != (n, n):
            raise ValueError(f"{fname}: M: expected a square mass matrix, got shape {Ms.shape}")
        if not (Ms - Ms.T).is_zero_matrix:
            raise ValueError(f"{fname}: M: expected a symmetric mass matrix, got {Ms}")
        Js = _jacobian_rows(J, n, fname, True)
        p = Js.shape[0]
        if p > n or Js.rank(simplify=True) < p:
            raise ValueError(f"{fname}: J: expected full row rank ({p} independent rows of "
                             f"length {n}), got rank {Js.rank(simplify=True)}: the surfaces' "
                             f"normals are dependent")
        v = _checks.vector(qd_minus, n, f"{fname}: qd_minus")
        v = sp.Matrix(v) if not isinstance(v, sp.MatrixBase) else v
        e = sp.sympify(e)
        Minv = Ms.inv()
        W = (Js * Minv * Js.T).applyfunc(sp.simplify)
        Lam = W.inv()
        vn = Js * v
        P = (-(1 + e) * Lam * vn).applyfunc(sp.simplify)
        qd_plus = (v + Minv * Js.T * P).applyfunc(sp.simplify)
        lost = sp.simplify((1 - e**2) / 2 * (vn.T * Lam * vn)[0, 0])
        return ImpactResult(qd_plus, P, lost, vn, (Js * qd_plus).applyfunc(sp.simplify), e)

    Ma = _checks._to_array(M, f"{fname}: M")
    if Ma.ndim == 0:
        Ma = Ma.reshape(1, 1)
    if Ma.ndim != 2 or Ma.shape[0] != Ma.shape[1]:
        raise ValueError(f"{fname}: M: expected a square mass matrix, got shape {Ma.shape}")
    _checks.finite(Ma, f"{fname}: M")
    n = Ma.shape[0]
    scale = max(1.0, float(np.max(np.abs(Ma))))
    if np.max(np.abs(Ma - Ma.T)) > tol * scale:
        raise ValueError(f"{fname}: M: expected a symmetric mass matrix, got one with "
                         f"|M - M^T| = {np.max(np.abs(Ma - Ma.T)):.3g}")
    try:
        L = np.linalg.cholesky(Ma)
    except np.linalg.LinAlgError:
        raise ValueError(f"{fname}: M: expected a positive definite mass matrix, got "
                         f"eigenvalues {np.linalg.eigvalsh(Ma)}") from None
    Ja = _jacobian_rows(J, n, fname, False)
    p = Ja.shape[0]
    s = np.linalg.svd(Ja, compute_uv=False) if p else np.zeros(0)
    if p == 0 or p > n or s[-1] <= 1e-10 * max(s[0], 1e-300):
        raise ValueError(f"{fname}: J: expected full row rank ({p} independent rows of length "
                         f"{n}), got singular values {s}: the surfaces' normals are dependent "
                         f"(or zero)")
    v = _checks.vector(qd_minus, n, f"{fname}: qd_minus")
    vn = Ja @ v
    rows = range(p) if normal_rows is None else list(normal_rows)
    for i in rows:
        if not 0 <= int(i) < p:
            raise ValueError(f"{fname}: normal_rows: expected indices in [0, {p}), got {i!r}")
        limit = tol * max(1.0, np.linalg.norm(Ja[i]) * np.linalg.norm(v))
        if vn[i] > limit:
            raise ValueError(f"{fname}: qd_minus: expected a velocity approaching surface {i} "
                             f"((J qd)_{i} <= 0), got (J qd)_{i} = {vn[i]:.6g} > 0: the motion "
                             f"moves away from it, there is no impact")
    MinvJT = np.linalg.solve(L.T, np.linalg.solve(L, Ja.T))          # M^-1 J^T, (n, p)
    W = Ja @ MinvJT                                                   # J M^-1 J^T
    if np.linalg.cond(W) > 1e10:
        warnings.warn(f"{fname}: J M^-1 J^T is nearly singular (condition number "
                      f"{np.linalg.cond(W):.3g}): the impulse is ill-determined", stacklevel=2)
    P = -(1.0 + e) * np.linalg.solve(W, vn)
    qd_plus = v + MinvJT @ P
    lost = 0.5 * (1.0 - e * e) * float(vn @ np.linalg.solve(W, vn))
    return ImpactResult(qd_plus, P, lost, vn, Ja @ qd_plus, e)


def _tangential_projection(M, J, qd):
    """qd with its normal part removed (the M-orthogonal projection onto J qd = 0), any sign."""
    J = np.atleast_2d(J)
    MinvJT = np.linalg.solve(M, J.T)
    return qd - MinvJT @ np.linalg.solve(J @ MinvJT, J @ qd)


# --------------------------------------------------------------------------
# hybrid systems
# --------------------------------------------------------------------------

@dataclass(frozen=True)
class Surface:
    r"""An impact surface :math:`\phi(q) = 0` of a hybrid system; :math:`\phi > 0` is free motion.

    Parameters
    ----------
    name : str, used in the event log
    phi : callable ``phi(q) -> float``
    jacobian : callable ``jacobian(q) -> (n,)``, :math:`\partial\phi/\partial q`
    restitution : e in [0, 1] for the default impact, :func:`impact_map`
    impact : optional callable ``impact(t, q, qd) -> (q_plus, qd_plus, ImpactResult)`` that
        replaces the default (a model's impact and reset map: a walker's leg exchange)
    terminal : True for a surface that ends the motion instead of an impact (a fall)
    """
    name: str
    phi: Callable
    jacobian: Callable
    restitution: float = 1.0
    impact: Callable | None = None
    terminal: bool = False

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name:
            raise TypeError(f"Surface: name: expected a non-empty str, got "
                            f"{_checks._describe(self.name)}")
        for what in ("phi", "jacobian"):
            if not callable(getattr(self, what)):
                raise TypeError(f"Surface {self.name!r}: {what}: expected a function of q, got "
                                f"{_checks._describe(getattr(self, what))}")
        if self.impact is not None and not callable(self.impact):
            raise TypeError(f"Surface {self.name!r}: impact: expected a function "
                            f"impact(t, q, qd) or None, got {_checks._describe(self.impact)}")
        object.__setattr__(self, "restitution",
                           _restitution(self.restitution, f"Surface {self.name!r}"))


@dataclass(frozen=True)
class HybridSystem:
    """Continuous dynamics (a :class:`~robodyn.equations.NumericForm` with speeds = qd, or a
    :class:`~robodyn.equations.MassMatrixForm` with ``values``) and its impact surfaces.

    ``energy(q, qd)``: optional mechanical energy for plots; ``name`` for messages."""
    form: NumericForm
    surfaces: tuple
    energy: Callable | None = None
    name: str = "system"

    def __post_init__(self):
        form = self.form
        if isinstance(form, MassMatrixForm):
            form = form.numeric()
            object.__setattr__(self, "form", form)
        if not isinstance(form, NumericForm):
            raise TypeError(f"HybridSystem: form: expected a NumericForm or MassMatrixForm, got "
                            f"{_checks._describe(form)}")
        if form.n != form.m:
            raise ValueError(f"HybridSystem: form: expected speeds = qd (n = m), got "
                             f"n = {form.n}, m = {form.m}")
        surfaces = tuple(self.surfaces) if isinstance(self.surfaces, (list, tuple)) \
            else (self.surfaces,)
        if not surfaces or not all(isinstance(s, Surface) for s in surfaces):
            raise TypeError(f"HybridSystem: surfaces: expected one or more Surface, got "
                            f"{_checks._describe(self.surfaces)}")
        names = [s.name for s in surfaces]
        if len(set(names)) != len(names):
            raise ValueError(f"HybridSystem: surfaces: expected distinct names, got {names}")
        object.__setattr__(self, "surfaces", surfaces)

    @property
    def n(self):
        return self.form.n

    def kinetic_energy(self, q, qd):
        """:math:`\\tfrac12\\dot q^TM(q)\\dot q`."""
        qd = np.asarray(qd, dtype=float)
        return 0.5 * float(qd @ self.form.mass_matrix(np.asarray(q, dtype=float), 0.0) @ qd)

    def accelerations(self, t, q, qd):
        """:math:`\\ddot q = M^{-1}f` (no inputs), without argument checks (the hot path)."""
        return np.linalg.solve(self.form.mass_matrix(q, t), self.form.forcing(q, qd, t))


@dataclass(frozen=True)
class ImpactEvent:
    """One entry of the event log: ``time`` (s), ``surface`` (names, joined by '+' for
    simultaneous contacts), ``q_before``, ``qd_before``, ``q_after``, ``qd_after``,
    ``energy_lost`` (J), ``impulse``, ``phi`` (the residual :math:`\\phi(q)` at the located
    time)."""
    time: float
    surface: str
    q_before: np.ndarray
    qd_before: np.ndarray
    q_after: np.ndarray
    qd_after: np.ndarray
    energy_lost: float
    impulse: np.ndarray
    phi: float


@dataclass(frozen=True)
class HybridTrajectory:
    """The result of :func:`simulate_hybrid`.

    ``t`` (N,), ``q``, ``qd`` (N, n): the motion (both sides of every impact are samples, at the
    same time); ``events``: tuple of :class:`ImpactEvent`; ``stop_reason``: why the motion ended
    (``"t_final"``, ``"zeno"``, ``"resting contact"``, ``"max_events"``, ``"terminal surface
    <name>"``); ``message``: the same in a sentence; ``t_end``: the time reached (for Zeno the
    accumulation point); ``zeno_time``: that point, else None; ``nfev``, ``n_steps``: work of the
    integrator; ``segments``: index of the first sample of each continuous segment."""
    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    events: tuple
    stop_reason: str
    message: str
    t_end: float
    zeno_time: float | None
    nfev: int
    n_steps: int
    segments: tuple
    energy: np.ndarray | None = field(default=None, repr=False)

    @property
    def event_times(self):
        return np.array([ev.time for ev in self.events])

    @property
    def energy_lost(self):
        """The energy lost at each impact, (number of events,)."""
        return np.array([ev.energy_lost for ev in self.events])


def _positive(x, name):
    """A positive finite float (rates, speeds, time steps: no upper bound)."""
    v = _checks.scalar(x, name)
    if isinstance(v, sp.Basic) or not v > 0:
        raise ValueError(f"{name}: expected a positive number, got {x!r}")
    return float(v)


def _positive_int(x, name, fname):
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)):
        raise TypeError(f"{fname}: {name}: expected a positive int, got {_checks._describe(x)}")
    if x < 1:
        raise ValueError(f"{fname}: {name}: expected a positive int, got {x}")
    return int(x)


def _jac(surface, q, n):
    Jr = np.asarray(surface.jacobian(q), dtype=float).reshape(-1)
    if Jr.shape != (n,):
        raise ValueError(f"simulate_hybrid: surface {surface.name!r}: jacobian(q) must return "
                         f"{n} numbers, returned shape {Jr.shape}")
    return Jr


def _first_step(system, t, q, qd, event_tol, span):
    """A first step short enough that a motion leaving a surface is clearly off it after one
    step: events are seen as sign changes between steps, and a short flight that starts on the
    surface and ends below it within one step would otherwise go unseen."""
    n, h = system.n, None
    for s in system.surfaces:
        if abs(float(s.phi(q))) > 10 * event_tol:
            continue
        Jr = _jac(s, q, n)
        rate = float(Jr @ qd)
        if rate <= 0.0:
            continue
        eps = 1e-7 / max(1.0, float(np.linalg.norm(qd)))
        Jdot_qd = float((_jac(s, q + eps * qd, n) - Jr) @ qd / eps)
        acc = float(Jr @ system.accelerations(t, q, qd)) + Jdot_qd
        if acc < 0.0:
            cand = 0.25 * rate / -acc                 # an eighth of the flight
            h = cand if h is None else min(h, cand)
    if h is None:
        return None
    return float(min(max(h, 1e-14 * max(1.0, abs(t))), span))


def simulate_hybrid(system, q0, qd0, t_final, *, t0=0.0, method="DOP853", rtol=1e-10,
                    atol=1e-10, event_tol=1e-10, max_events=1000, max_event_rate=1e4,
                    rest_speed=1e-9, max_step=np.inf, dt_out=None):
    r"""Simulate a :class:`HybridSystem`: free motion, impacts (5.31), continuation.

    Between impacts the state :math:`(q, \dot q)` follows :math:`M\ddot q = f` with
    ``scipy.integrate.solve_ivp``. Each surface's :math:`\phi(q)` is watched for a crossing from
    positive to negative; the crossing time is located on the integrator's dense output and then
    refined by Newton steps on :math:`\phi` (re-integrating from the located point) until
    :math:`|\phi| \le` ``event_tol`` (the crossing watched is that of :math:`\phi = -` ``event_tol``/2,
    so that a motion leaving a surface is not stopped at its start). Surfaces within ``event_tol`` of contact and approaching
    at that time are hit together (one :func:`impact_map` with their stacked Jacobians). Events
    are seen as sign changes between the integrator's steps; after an impact the first step is
    limited to an eighth of the estimated next flight, so short flights are not stepped over.

    **Zeno guard.** When two impacts on the same surface come closer than ``1 /
    max_event_rate`` seconds, or the rebound speed :math:`|J\dot q^+|` falls below
    ``rest_speed``, the bounces accumulate: the motion ends at the accumulation point,
    extrapolated from the last two intervals as a geometric series (exact for a ball), with the
    normal velocity removed (resting contact, which needs the constraint forces of Part III
    and is not integrated further). ``max_events`` bounds the total number of impacts. Nothing
    runs unbounded.

    Parameters
    ----------
    system : HybridSystem
    q0, qd0 : (n,) initial state; :math:`\phi(q_0) \ge -` ``event_tol`` for every surface
    t_final : float, end time (s), > t0
    t0 : start time
    method, rtol, atol, max_step : passed to ``solve_ivp`` (method 'DOP853', 'RK45', 'Radau', ...)
    event_tol : tolerance on :math:`|\phi|` at a located event (units of :math:`\phi`)
    max_events : maximum number of impacts
    max_event_rate : bound on impacts per second on one surface (Zeno guard)
    rest_speed : rebound speed below which contact is resting
    dt_out : optional spacing of output samples (dense output); default the solver's steps

    Returns
    -------
    HybridTrajectory

    Raises
    ------
    TypeError, ValueError
        bad system, state, times or options; an initial state penetrating a surface.

    Examples
    --------
    A ball dropped from 1 m, e = 0.5: the bounces accumulate at
    :math:`t_\infty = \sqrt{2h/g}\,(1+e)/(1-e)`.

    >>> from robodyn import walkers
    >>> tr = simulate_hybrid(walkers.bouncing_ball(0.5), [0.0, 1.0], [0.0, 0.0], 5.0)
    >>> tr.stop_reason, round(tr.zeno_time, 6), round(float(3 * np.sqrt(2 / 9.81)), 6)
    ('zeno', 1.354571, 1.354571)
    """
    fname = "simulate_hybrid"
    if not isinstance(system, HybridSystem):
        raise TypeError(f"{fname}: system: expected a HybridSystem, got {_checks._describe(system)}")
    n = system.n
    q0 = _checks.vector(q0, n, f"{fname}: q0")
    qd0 = _checks.vector(qd0, n, f"{fname}: qd0")
    if isinstance(q0, sp.MatrixBase) or isinstance(qd0, sp.MatrixBase):
        raise TypeError(f"{fname}: q0, qd0: expected numbers, got sympy expressions")
    t0 = float(_checks.scalar(t0, f"{fname}: t0"))
    t_final = _checks.scalar(t_final, f"{fname}: t_final")
    if isinstance(t_final, sp.Basic) or not t_final > t0:
        raise ValueError(f"{fname}: t_final: expected a time > t0 = {t0}, got {t_final!r}")
    event_tol = _checks.tolerance(event_tol, f"{fname}: event_tol")
    rtol = _checks.tolerance(rtol, f"{fname}: rtol")
    atol = _checks.tolerance(atol, f"{fname}: atol")
    rest_speed = _positive(rest_speed, f"{fname}: rest_speed")
    max_event_rate = _positive(max_event_rate, f"{fname}: max_event_rate")
    max_events = _positive_int(max_events, "max_events", fname)
    if dt_out is not None:
        dt_out = _positive(dt_out, f"{fname}: dt_out")
    for s in system.surfaces:
        ph = float(s.phi(q0))
        if ph < -event_tol:
            raise ValueError(f"{fname}: q0: expected a state outside every surface (phi >= 0), "
                             f"got phi = {ph:.6g} < 0 for surface {s.name!r}: the initial "
                             f"state penetrates it")

    def rhs(t, y):
        return np.concatenate([y[n:], system.accelerations(t, y[:n], y[n:])])

    def make_event(s):
        def ev(t, y):           # offset: a segment that starts on the surface (phi = 0 exactly)
            return s.phi(y[:n]) + 0.5 * event_tol     # would give a root at its start
        ev.terminal, ev.direction = True, -1
        return ev

    events_fns = [make_event(s) for s in system.surfaces]
    ts, qs, qds, log, segments = [], [], [], [], []
    last_times = {s.name: [] for s in system.surfaces}
    nfev = n_steps = 0
    t, q, qd = t0, q0.astype(float), qd0.astype(float)
    reason, message, zeno_time = "t_final", "", None

    def record(sol_t, sol_y):
        segments.append(sum(len(x) for x in ts))
        ts.append(sol_t)
        qs.append(sol_y[:n].T)
        qds.append(sol_y[n:].T)

    def approaching(tq, q, qd):
        hit = []
        for k, s in enumerate(system.surfaces):
            if abs(float(s.phi(q))) <= event_tol:
                Jr = _jac(s, q, n)
                if Jr @ qd < -rest_speed:
                    hit.append(k)
        return hit

    while True:
        hit = approaching(t, q, qd) if not log else []
        if not hit:
            if t >= t_final:
                message = f"reached t_final = {t_final} s"
                break
            first = _first_step(system, t, q, qd, event_tol, t_final - t)
            sol = solve_ivp(rhs, (t, t_final), np.concatenate([q, qd]), method=method,
                            rtol=rtol, atol=atol, max_step=max_step, events=events_fns,
                            dense_output=dt_out is not None, first_step=first)
            nfev += sol.nfev
            n_steps += len(sol.t) - 1
            if sol.status == -1:
                raise RuntimeError(f"{fname}: the integrator failed at t = {sol.t[-1]:.6g}: "
                                   f"{sol.message}")
            fired = [k for k, te in enumerate(sol.t_events) if len(te)]
            if dt_out is not None:
                grid = np.arange(t, sol.t[-1], dt_out)
                grid = np.append(grid, sol.t[-1])
                record(grid, sol.sol(grid))
            else:
                record(sol.t, sol.y)
            if not fired:
                t, q, qd = float(sol.t[-1]), sol.y[:n, -1], sol.y[n:, -1]
                message = f"reached t_final = {t_final} s"
                break
            k = min(fired, key=lambda j: sol.t_events[j][0])
            te, ye = float(sol.t_events[k][0]), sol.y_events[k][0]
            # refine the located time by Newton steps on phi (bounded)
            s = system.surfaces[k]
            for _ in range(8):
                ph = float(s.phi(ye[:n]))
                if abs(ph) <= event_tol:
                    break
                rate = float(_jac(s, ye[:n], n) @ ye[n:])
                if rate == 0.0:
                    break
                dt = -ph / rate
                sub = solve_ivp(rhs, (te, te + dt), ye, method=method, rtol=rtol, atol=atol)
                nfev += sub.nfev
                te, ye = float(sub.t[-1]), sub.y[:, -1]
            ts[-1][-1], qs[-1][-1], qds[-1][-1] = te, ye[:n], ye[n:]
            t, q, qd = te, ye[:n].copy(), ye[n:].copy()
            if s.terminal:
                reason = f"terminal surface {s.name}"
                message = f"surface {s.name!r} reached at t = {te:.6g} s"
                break
            hit = [k] + [j for j in approaching(t, q, qd) if j != k]
        # the impact (one or several surfaces at once)
        surfs = [system.surfaces[j] for j in hit]
        ph = max(abs(float(s.phi(q))) for s in surfs)
        if len(surfs) == 1 and surfs[0].impact is not None:
            q1, qd1, res = surfs[0].impact(t, q, qd)
            q1, qd1 = np.asarray(q1, dtype=float), np.asarray(qd1, dtype=float)
        else:
            custom = [s.name for s in surfs if s.impact is not None]
            if custom:
                raise RuntimeError(f"{fname}: surfaces {[s.name for s in surfs]} are hit at "
                                   f"once at t = {t:.6g}, and {custom} have their own impact "
                                   f"map: simultaneous custom impacts are not supported")
            es = {s.restitution for s in surfs}
            if len(es) > 1:
                raise RuntimeError(f"{fname}: surfaces {[s.name for s in surfs]} are hit at once "
                                   f"at t = {t:.6g} with different restitutions {sorted(es)}")
            Jm = np.vstack([_jac(s, q, n) for s in surfs])
            res = impact_map(system.form.mass_matrix(q, t), Jm, qd, surfs[0].restitution)
            q1, qd1 = q.copy(), res.qd_plus
        name = "+".join(s.name for s in surfs)
        log.append(ImpactEvent(t, name, q.copy(), qd.copy(), q1, qd1, float(res.energy_lost),
                               np.asarray(res.impulse, dtype=float), ph))
        record(np.array([t]), np.concatenate([q1, qd1])[:, None])
        q, qd = q1, qd1
        # Zeno guard
        rebound = np.abs(np.asarray(res.normal_after, dtype=float))
        zeno = None
        for s in surfs:
            last_times[s.name].append(t)
        times = last_times[surfs[0].name]
        if surfs[0].impact is None and rebound.max() <= rest_speed:
            zeno = ("resting contact", t,
                    f"the rebound speed {rebound.max():.3g} at t = {t:.6g} s is below rest_speed "
                    f"= {rest_speed:g}: resting contact on {name}")
        elif len(times) >= 2 and times[-1] - times[-2] < 1.0 / max_event_rate:
            gap = times[-1] - times[-2]
            t_acc = t
            if len(times) >= 3:
                r = gap / (times[-2] - times[-3])
                if 0.0 < r < 1.0:
                    t_acc = t + gap * r / (1.0 - r)
            zeno = ("zeno", t_acc,
                    f"impacts on {name} accumulate (Zeno): {len(times)} impacts, the last two "
                    f"{gap:.3g} s apart (< 1/max_event_rate = {1 / max_event_rate:.3g} s); "
                    f"the accumulation point t = {t_acc:.10g} s is extrapolated as a geometric "
                    f"series; the motion continues as resting contact, which needs the "
                    f"constraint forces of Part III (not integrated here)")
        if zeno is not None:
            reason, zeno_time, message = zeno
            if surfs[0].impact is None:
                Jm = np.vstack([_jac(s, q, n) for s in surfs])
                qd = _tangential_projection(system.form.mass_matrix(q, t), Jm, qd)
            t = zeno_time
            record(np.array([t]), np.concatenate([q, qd])[:, None])
            break
        if len(log) >= max_events:
            reason = "max_events"
            message = (f"stopped after max_events = {max_events} impacts at t = {t:.6g} s")
            break
        if t >= t_final:
            message = f"reached t_final = {t_final} s"
            break
    T = np.concatenate(ts) if ts else np.array([t0])
    Q = np.concatenate(qs) if qs else q0[None, :]
    QD = np.concatenate(qds) if qds else qd0[None, :]
    energy = None
    if system.energy is not None:
        energy = np.array([system.energy(a, b) for a, b in zip(Q, QD)])
    return HybridTrajectory(T, Q, QD, tuple(log), reason, message, float(t), zeno_time, nfev,
                            n_steps, tuple(segments), energy)


# --------------------------------------------------------------------------
# the step-to-step map and its fixed point
# --------------------------------------------------------------------------

@dataclass(frozen=True)
class StepResult:
    """One application of :func:`return_map`: ``x`` (2n,) the state just after the impact,
    ``duration`` (s), ``event`` the :class:`ImpactEvent`."""
    x: np.ndarray
    duration: float
    event: ImpactEvent


def return_map(system, x, *, surface=None, t_max=10.0, **options):
    r"""The step-to-step (Poincaré) map: from the state ``x`` = (q, qd), the state just after the
    next impact (on ``surface``, a name, or any).

    Options are those of :func:`simulate_hybrid`. Raises RuntimeError when no impact comes
    within ``t_max`` seconds or the motion ends otherwise (a fall).

    >>> from robodyn import walkers
    >>> ball = walkers.bouncing_ball(0.5)
    >>> round(float(return_map(ball, [0, 0, 0, 2.0]).x[3]), 6)       # rebound speed e v
    1.0
    """
    fname = "return_map"
    if not isinstance(system, HybridSystem):
        raise TypeError(f"{fname}: system: expected a HybridSystem, got {_checks._describe(system)}")
    n = system.n
    x = _checks.vector(x, 2 * n, f"{fname}: x (q then qd)")
    options.setdefault("max_event_rate", 1e12)
    options.setdefault("rest_speed", 1e-300)
    tr = simulate_hybrid(system, x[:n], x[n:], t_max, max_events=1, **options)
    if not tr.events:
        raise RuntimeError(f"{fname}: no impact within t_max = {t_max} s ({tr.message})")
    ev = tr.events[0]
    if surface is not None and ev.surface != surface:
        raise RuntimeError(f"{fname}: the motion hit {ev.surface!r} at t = {ev.time:.6g} s, "
                           f"not {surface!r}")
    return StepResult(np.concatenate([ev.q_after, ev.qd_after]), ev.time - tr.t[0], ev)


@dataclass(frozen=True)
class FixedPoint:
    """The result of :func:`fixed_point`: ``x`` the fixed point, ``jacobian`` the map's Jacobian
    there (finite differences), ``eigenvalues`` of it (sorted by decreasing modulus),
    ``residual`` :math:`|P(x) - x|`, ``iterations`` of Newton's method, ``stable``: all
    eigenvalues inside the unit circle."""
    x: np.ndarray
    jacobian: np.ndarray
    eigenvalues: np.ndarray
    residual: float
    iterations: int

    @property
    def stable(self):
        return bool(np.all(np.abs(self.eigenvalues) < 1.0))


def fixed_point(step, x0, *, tol=1e-9, max_iter=20, fd_step=1e-7):
    r"""A fixed point :math:`x^* = P(x^*)` of a map by Newton's method with a finite-difference
    Jacobian: :math:`x \leftarrow x - (DP - I)^{-1}(P(x) - x)`.

    Parameters
    ----------
    step : callable ``P(x) -> (k,)`` (e.g. ``lambda x: return_map(sys, x).x``)
    x0 : (k,) initial guess
    tol : stop when :math:`|P(x) - x|_\infty \le` tol
    max_iter : bound on the Newton iterations (RuntimeError when reached)
    fd_step : relative step of the central differences

    Returns
    -------
    FixedPoint (with the Jacobian and eigenvalues of P at :math:`x^*`)

    >>> fp = fixed_point(lambda x: np.array([0.5 * x[0] + 1.0]), [0.0])
    >>> fp.x, fp.eigenvalues, fp.stable
    (array([2.]), array([0.5]), True)
    """
    fname = "fixed_point"
    if not callable(step):
        raise TypeError(f"{fname}: step: expected a function P(x), got {_checks._describe(step)}")
    x = np.array(_checks._to_array(x0, f"{fname}: x0"), dtype=float).reshape(-1)
    _checks.finite(x, f"{fname}: x0")
    tol = _checks.tolerance(tol, f"{fname}: tol")
    fd_step = _checks.tolerance(fd_step, f"{fname}: fd_step")
    max_iter = _positive_int(max_iter, "max_iter", fname)
    k = x.size

    def P(z):
        out = np.asarray(step(z), dtype=float).reshape(-1)
        if out.shape != (k,):
            raise ValueError(f"{fname}: step: expected it to return {k} numbers, got shape "
                             f"{out.shape}")
        return out

    def jacobian(z):
        D = np.empty((k, k))
        for j in range(k):
            h = fd_step * max(1.0, abs(z[j]))
            e = np.zeros(k)
            e[j] = h
            D[:, j] = (P(z + e) - P(z - e)) / (2 * h)
        return D

    Px = P(x)
    updates = 0
    while np.max(np.abs(Px - x)) > tol:
        if updates == max_iter:
            raise RuntimeError(f"{fname}: no fixed point within max_iter = {max_iter} Newton "
                               f"iterations: |P(x) - x| = {np.max(np.abs(Px - x)):.3g} > "
                               f"tol = {tol:g}")
        D = jacobian(x)
        x = x - np.linalg.lstsq(D - np.eye(k), Px - x, rcond=None)[0]
        Px = P(x)
        updates += 1
    D = jacobian(x)
    ev = np.linalg.eigvals(D)
    ev = ev[np.argsort(-np.abs(ev))]
    if np.all(np.abs(ev.imag) < 1e-12):
        ev = ev.real
    return FixedPoint(x, D, ev, float(np.max(np.abs(Px - x))), updates)
