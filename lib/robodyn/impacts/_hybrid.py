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
  :class:`~robodyn.equations.NumericForm` between impacts, events located to a stated
  tolerance even where :math:`\phi` dips below zero inside one integrator step, impacts at
  many contacts at once with a restitution and a Coulomb coefficient per surface
  (:mod:`robodyn.impacts`), a model's own reset map, an event log, an accumulation of impacts
  (Zeno) extrapolated, and resting and sliding contact as constrained modes after it.
  :mod:`robodyn.impacts` steps through the same systems (Moreau--Jean).
* :func:`return_map`, :func:`fixed_point` -- the step-to-step (Poincaré) map of a hybrid system
  and its fixed point by Newton's method, with the eigenvalues of the map there.

The models of the chapters (bouncing ball, pendulum and RR arm against a wall, rimless wheel,
compass-gait walker) are in :mod:`robodyn.walking`.
"""
from __future__ import annotations

import inspect
import math
import warnings
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Callable

import numpy as np
import sympy as sp

from ..kinds import FrictionCoefficient, Restitution, Tolerance
from .. import _value_checks
from .. import _meaning_checks
from ._segments import (_SOLVERS, _choose_mode, _Contacts, _free_rhs, _jac, _segment,
                               _tangent_row, _watchers)
from ._contact import LimitReached, _impulse
from ..equations import MassMatrixForm, NumericForm

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
    e = _value_checks.scalar(e, f"{fname}: restitution")
    if isinstance(e, sp.Basic) and not e.is_number:
        if e.is_negative or (e - 1).is_positive:
            raise _value_checks.refusal(
                ValueError, f"{fname}: restitution: expected a coefficient e in [0, 1] (0 "
                            f"plastic, 1 elastic), got {e} (its assumptions put it outside)")
        return e
    if isinstance(e, sp.Basic):
        e = float(e)
    if not 0.0 <= e <= 1.0:
        raise _value_checks.refusal(
            ValueError, f"{fname}: restitution: expected a coefficient e in [0, 1] (0 plastic, "
                        f"1 elastic), got {e!r}")
    return e


def _jacobian_rows(J, n, fname, symbolic):
    if symbolic:
        Jm = _value_checks.to_sympy(J, f"{fname}: J")
        if Jm.shape[1] == 1 and Jm.shape[0] == n and n > 1:
            Jm = Jm.T
        if Jm.shape[1] != n:
            raise _value_checks.refusal(
                ValueError, f"{fname}: J: expected p x {n} (one row dphi_i/dq per surface), "
                            f"got shape {Jm.shape}")
        return Jm
    Ja = _value_checks._to_array(J, f"{fname}: J")
    if Ja.ndim == 1:
        Ja = Ja.reshape(1, -1)
    if Ja.ndim != 2 or Ja.shape[1] != n:
        raise _value_checks.refusal(
            ValueError, f"{fname}: J: expected p x {n} (one row dphi_i/dq per surface), got "
                        f"shape {Ja.shape}")
    _value_checks.finite(Ja, f"{fname}: J")
    return Ja


def _normal_rows(rows, p, fname):
    """The row indices (whole numbers in [0, p)) whose velocity must approach the surface."""
    if rows is None:
        return list(range(p))
    if isinstance(rows, (str, bytes, dict)) or not hasattr(rows, "__iter__"):
        raise _value_checks.error(f"{fname}: normal_rows", f"None or a sequence of row indices in "
                            f"[0, {p})", _value_checks.describe(rows), exc=TypeError)
    return [_value_checks.size(i, f"{fname}: normal_rows", low=0, high=p - 1,
                         hint=f"row indices in [0, {p}): one per row of J") for i in list(rows)]


def impact_map(M, J, qd_minus, restitution: Restitution, *, normal_rows=None,
               tol: Tolerance = 1e-9):
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
    symbolic = any(_value_checks.is_symbolic(x) for x in (M, J, qd_minus)) or (
        isinstance(restitution, sp.Basic) and bool(restitution.free_symbols))
    e = _restitution(restitution, fname)
    tol = _value_checks.tolerance(tol, f"{fname}: tol")
    if symbolic:
        Ms = _value_checks.to_sympy(M, f"{fname}: M")
        n = Ms.shape[0]
        if Ms.shape != (n, n):
            raise _value_checks.refusal(
                ValueError, f"{fname}: M: expected a square mass matrix, got shape {Ms.shape}")
        if not (Ms - Ms.T).is_zero_matrix:
            raise _value_checks.refusal(
                ValueError, f"{fname}: M: expected a symmetric mass matrix, got {Ms}")
        _meaning_checks.spd(Ms, f"{fname}: M")             # exact numbers: positive definite too
        Js = _jacobian_rows(J, n, fname, True)
        p = Js.shape[0]
        if p > n or Js.rank(simplify=True) < p:
            raise _value_checks.refusal(
                ValueError, f"{fname}: J: expected full row rank ({p} independent rows of "
                            f"length {n}), got rank {Js.rank(simplify=True)}: the surfaces' "
                            f"normals are dependent")
        rows = _normal_rows(normal_rows, p, fname)
        v = _value_checks.vector(qd_minus, n, f"{fname}: qd_minus")
        v = sp.Matrix(v) if not isinstance(v, sp.MatrixBase) else v
        e = sp.sympify(e, strict=True)
        Minv = Ms.inv()
        W = (Js * Minv * Js.T).applyfunc(sp.simplify)
        Lam = W.inv()
        vn = Js * v
        for i in rows:
            vi = sp.simplify(vn[i])
            if vi.is_positive:
                raise _value_checks.refusal(
                    ValueError, f"{fname}: J, qd_minus: expected a velocity approaching surface "
                                f"{i} ((J qd)_{i} <= 0), got (J qd)_{i} = {vi} > 0: the "
                                f"motion moves away from it, there is no impact")
        P = (-(1 + e) * Lam * vn).applyfunc(sp.simplify)
        qd_plus = (v + Minv * Js.T * P).applyfunc(sp.simplify)
        lost = sp.simplify((1 - e**2) / 2 * (vn.T * Lam * vn)[0, 0])
        return ImpactResult(qd_plus, P, lost, vn, (Js * qd_plus).applyfunc(sp.simplify), e)

    Ma = _value_checks._to_array(M, f"{fname}: M")
    if Ma.ndim == 0:
        Ma = Ma.reshape(1, 1)
    if Ma.ndim != 2 or Ma.shape[0] != Ma.shape[1]:
        raise _value_checks.refusal(
            ValueError, f"{fname}: M: expected a square mass matrix, got shape {Ma.shape}")
    _value_checks.finite(Ma, f"{fname}: M")
    n = Ma.shape[0]
    scale = float(np.max(np.abs(Ma))) or 1.0     # relative, as documented: small units too
    if np.max(np.abs(Ma - Ma.T)) > tol * scale:
        raise _value_checks.refusal(
            ValueError, f"{fname}: M: expected a symmetric mass matrix, got one with "
                        f"|M - M^T| = {np.max(np.abs(Ma - Ma.T)):.3g}")
    try:                                    # scaled: a huge M must not overflow to inf
        L = np.linalg.cholesky(Ma / scale) * np.sqrt(scale)
    except np.linalg.LinAlgError as exc:
        raise _value_checks.refusal(
            ValueError, f"{fname}: M: expected a positive definite mass matrix, got "
                        f"eigenvalues {np.linalg.eigvalsh(Ma)}") from exc
    Ja = _jacobian_rows(J, n, fname, False)
    p = Ja.shape[0]
    s = np.linalg.svd(Ja, compute_uv=False) if p else np.zeros(0)
    if p == 0 or p > n or s[-1] <= 1e-10 * max(s[0], 1e-300):
        raise _value_checks.refusal(
            ValueError, f"{fname}: J: expected full row rank ({p} independent rows of length "
                        f"{n}), got singular values {s}: the surfaces' normals are dependent "
                        f"(or zero)")
    rows = _normal_rows(normal_rows, p, fname)
    v = _value_checks.vector(qd_minus, n, f"{fname}: qd_minus")
    vn = Ja @ v
    for i in rows:
        limit = tol * np.linalg.norm(Ja[i]) * np.linalg.norm(v)      # relative, as documented
        if vn[i] > limit:
            raise _value_checks.refusal(
                ValueError, f"{fname}: J, qd_minus: expected a velocity approaching surface {i} "
                            f"((J qd)_{i} <= 0), got (J qd)_{i} = {vn[i]:.6g} > 0: the motion "
                            f"moves away from it, there is no impact")
    MinvJT = np.linalg.solve(L.T, np.linalg.solve(L, Ja.T))          # M^-1 J^T, (n, p)
    W = Ja @ MinvJT                                                   # J M^-1 J^T
    if np.linalg.cond(W) > 1e10:
        warnings.warn(f"{fname}: J M^-1 J^T is nearly singular (condition number "
                      f"{np.linalg.cond(W):.3g}): the impulse is ill-determined", stacklevel=2)
    with _value_checks.overflow_guard(fname):
        P = -(1.0 + e) * np.linalg.solve(W, vn)
        qd_plus = v + MinvJT @ P
        lost = 0.5 * (1.0 - e * e) * float(vn @ np.linalg.solve(W, vn))
        after = Ja @ qd_plus
    _value_checks.finite_result((qd_plus, P, lost, vn, after), fname)
    return ImpactResult(qd_plus, P, lost, vn, after, e)


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
    friction : Coulomb coefficient :math:`\mu \ge 0` at this contact (needs ``tangent``)
    tangent : optional callable ``tangent(q) -> (n,)``, the row :math:`J_t` whose product with
        :math:`\dot q` is the sliding velocity of the contact point (planar friction)
    """
    name: str
    phi: Callable
    jacobian: Callable
    restitution: Restitution = 1.0
    impact: Callable | None = None
    terminal: bool = False
    friction: FrictionCoefficient = 0.0
    tangent: Callable | None = None

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name:
            raise _value_checks.refusal(TypeError, f"Surface: name: expected a non-empty str, got "
                            f"{_value_checks._describe(self.name)}")
        for what in ("phi", "jacobian"):
            if not callable(getattr(self, what)):
                raise _value_checks.refusal(
                    TypeError, f"Surface {self.name!r}: {what}: expected a function of q, got "
                               f"{_value_checks._describe(getattr(self, what))}")
        if self.impact is not None and not callable(self.impact):
            raise _value_checks.refusal(TypeError, f"Surface {self.name!r}: impact: expected a function "
                            f"impact(t, q, qd) or None, got {_value_checks._describe(self.impact)}")
        object.__setattr__(self, "restitution",
                           _restitution(self.restitution, f"Surface {self.name!r}"))
        if isinstance(self.restitution, sp.Basic):
            raise _value_checks.refusal(
                TypeError, f"Surface {self.name!r}: restitution: expected a number in [0, 1], "
                           f"got the symbolic {self.restitution}")
        if self.tangent is not None and not callable(self.tangent):
            raise _value_checks.refusal(
                TypeError, f"Surface {self.name!r}: tangent: expected a function of q or None, "
                           f"got {_value_checks._describe(self.tangent)}")
        mu = _value_checks.real_number(self.friction, f"Surface {self.name!r}: friction", low=0,
                                 hint="a Coulomb coefficient mu >= 0")
        if mu > 0 and self.tangent is None:
            raise _value_checks.refusal(
                ValueError, f"Surface {self.name!r}: tangent: expected a tangent row function "
                            f"for the friction mu = {mu:g} > 0, got None (hint: tangent(q) @ "
                            f"qd is the sliding velocity of the contact point)")
        object.__setattr__(self, "friction", float(mu))
        object.__setattr__(self, "phi", _checked_phi(self.phi, self.name))


def _checked_phi(phi, name):
    """``phi`` whose every value is checked: a real finite number (a NaN gap would let the
    motion pass through the surface with no event; refused instead)."""
    if getattr(phi, "_robodyn_checked", False):
        return phi
    return _CheckedPhi(phi, name)


class _CheckedPhi:
    """What :func:`_checked_phi` makes: a callable object (not a closure: it pickles when the
    reader's ``phi`` does)."""

    _robodyn_checked = True

    def __init__(self, phi, name):
        self.__wrapped__, self.name = phi, name

    def __call__(self, q, *args):
        name = self.name
        if isinstance(q, np.ndarray) and q.dtype.kind == "f" and not np.isfinite(q).all():
            # the simulators' float states: an overflow of the motion, not a bad surface
            raise _value_checks.refusal(_value_checks.ResultError, f"Surface {name!r}: phi: expected a finite state q, "
                                  f"got {np.asarray(q).tolist()} (an overflow)")
        v = self.__wrapped__(q, *args)
        try:
            f = float(v)
        except (TypeError, ValueError) as exc:
            raise _value_checks.refusal(
                TypeError, f"Surface {name!r}: phi: expected phi(q) to return a real number, "
                           f"got {_value_checks.describe(v)}") from exc
        if not math.isfinite(f):
            raise _value_checks.refusal(
                ValueError, f"Surface {name!r}: phi: expected a finite gap phi(q), got {f!r} "
                            f"at q = {np.asarray(q).tolist()} (a NaN gap would hide the "
                            f"impact)")
        return v


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
            raise _value_checks.refusal(
                TypeError, f"HybridSystem: form: expected a NumericForm or MassMatrixForm, got "
                           f"{_value_checks._describe(form)}")
        if form.n != form.m:
            raise _value_checks.refusal(
                ValueError, f"HybridSystem: form: expected speeds = qd (n = m), got "
                            f"n = {form.n}, m = {form.m}")
        surfaces = tuple(self.surfaces) if isinstance(self.surfaces, (list, tuple)) \
            else (self.surfaces,)
        if not surfaces or not all(isinstance(s, Surface) for s in surfaces):
            raise _value_checks.refusal(
                TypeError, f"HybridSystem: surfaces: expected one or more Surface, got "
                           f"{_value_checks._describe(self.surfaces)}")
        names = [s.name for s in surfaces]
        if len(set(names)) != len(names):
            raise _value_checks.refusal(
                ValueError, f"HybridSystem: surfaces: expected distinct names, got {names}")
        if self.energy is not None and not callable(self.energy):
            raise _value_checks.refusal(
                TypeError, f"HybridSystem: energy: expected a function energy(q, qd) or None, "
                           f"got {_value_checks._describe(self.energy)}")
        if not isinstance(self.name, str) or not self.name:
            raise _value_checks.refusal(TypeError, f"HybridSystem: name: expected a non-empty str, got "
                            f"{_value_checks._describe(self.name)}")
        object.__setattr__(self, "surfaces", surfaces)

    @property
    def n(self):
        return self.form.n

    def kinetic_energy(self, q, qd):
        """:math:`\\tfrac12\\dot q^TM(q)\\dot q`."""
        q = _value_checks.vector(q, self.n, "HybridSystem.kinetic_energy: q")
        qd = _value_checks.vector(qd, self.n, "HybridSystem.kinetic_energy: qd")
        if _value_checks.is_symbolic(q) or _value_checks.is_symbolic(qd):
            raise _value_checks.error("HybridSystem.kinetic_energy: q", "numbers", "sympy expressions",
                                exc=TypeError)
        return _value_checks.finite_result(0.5 * float(qd @ self.form.mass_matrix(q, 0.0) @ qd),
                                     "HybridSystem.kinetic_energy")

    def accelerations(self, t, q, qd):
        """:math:`\\ddot q = M^{-1}f` (no inputs); arguments checked (the simulator's hot path
        calls the form directly)."""
        t = _value_checks.real_number(t, "HybridSystem.accelerations: t")
        q = _value_checks.vector(q, self.n, "HybridSystem.accelerations: q")
        qd = _value_checks.vector(qd, self.n, "HybridSystem.accelerations: qd")
        return _value_checks.finite_result(
            np.linalg.solve(self.form.mass_matrix(q, t), self.form.forcing(q, qd, t)),
            "HybridSystem.accelerations")


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
    (``"t_final"``, ``"zeno"`` with ``after_zeno="stop"``, ``"max_events"``, ``"max_steps"``,
    ``"terminal surface <name>"``); ``message``: the same in a sentence; ``t_end``: the time
    reached; ``zeno_time``: the accumulation point of the last Zeno sequence, else None; ``nfev``, ``n_steps``: work of the
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
    """A positive finite float (rates, speeds, time steps: no upper bound); Python, numpy,
    Fraction and sympy numbers alike."""
    return _value_checks.real_number(x, name, low=0, strict_low=True)


def _positive_int(x, name, fname):
    """A count >= 1 (Python or numpy int, Fraction(3, 1), sympy Integer)."""
    return _value_checks.size(x, f"{fname}: {name}", low=1, high=None)


def _hybrid_options(fname, system, q0, qd0, t_final, t0, method, rtol, atol, event_tol,
                    max_events, max_event_rate, rest_speed, max_step, dt_out, simultaneity,
                    after_zeno, max_steps, slide_speed, baumgarte):
    """Every argument of :func:`simulate_hybrid` checked (named after ``fname``): the initial
    state as float arrays and the options as a namespace (solver class and its options, output
    grid, bounds)."""
    if not isinstance(system, HybridSystem):
        raise _value_checks.refusal(
            TypeError, f"{fname}: system: expected a HybridSystem, got {_value_checks._describe(system)}")
    n = system.n
    q0 = _value_checks.vector(q0, n, f"{fname}: q0")
    qd0 = _value_checks.vector(qd0, n, f"{fname}: qd0")
    if isinstance(q0, sp.MatrixBase) or isinstance(qd0, sp.MatrixBase):
        raise _value_checks.refusal(
            TypeError, f"{fname}: q0, qd0: expected numbers, got sympy expressions")
    t0 = _value_checks.real_number(t0, f"{fname}: t0")
    t_final = _value_checks.real_number(t_final, f"{fname}: t_final")
    if not t_final > t0:
        raise _value_checks.refusal(
            ValueError, f"{fname}: t_final: expected a finite time > t0 = {t0}, got "
                        f"{t_final!r}")
    o = SimpleNamespace(t0=t0, t_final=t_final)
    o.event_tol = _value_checks.tolerance(event_tol, f"{fname}: event_tol")
    rtol = _value_checks.tolerance(rtol, f"{fname}: rtol")
    atol = _value_checks.tolerance(atol, f"{fname}: atol")
    o.rest_speed = _positive(rest_speed, f"{fname}: rest_speed")
    o.slide_speed = _positive(slide_speed, f"{fname}: slide_speed")
    o.max_event_rate = _positive(max_event_rate, f"{fname}: max_event_rate")
    o.simultaneity = _positive(simultaneity, f"{fname}: simultaneity")
    o.baumgarte = _positive(baumgarte, f"{fname}: baumgarte")
    o.max_events = _positive_int(max_events, "max_events", fname)
    o.max_steps = _positive_int(max_steps, "max_steps", fname)
    if o.max_events > 10**7:
        raise _value_checks.refusal(
            ValueError, f"{fname}: max_events: expected at most 10**7 impacts, got "
                        f"{o.max_events} (a run that long is unbounded in practice: shorten "
                        f"t_final)")
    if o.max_steps > 10**8:
        raise _value_checks.refusal(
            ValueError, f"{fname}: max_steps: expected at most 10**8 steps, got {o.max_steps}")
    o.after_zeno = _value_checks.choice(after_zeno, f"{fname}: after_zeno", ("continue", "stop"))
    o.cls = _SOLVERS[_value_checks.choice(method, f"{fname}: method", tuple(_SOLVERS))]
    if max_step is not np.inf:
        max_step = _positive(max_step, f"{fname}: max_step")
    o.solver_options = dict(rtol=rtol, atol=atol, max_step=max_step)
    o.grid = None
    if dt_out is not None:
        dt_out = _positive(dt_out, f"{fname}: dt_out")
        count = (t_final - t0) / dt_out
        if count > _value_checks.MAX_SIZE:
            raise _value_checks.refusal(
                ValueError, f"{fname}: dt_out: expected at most {_value_checks.MAX_SIZE} samples, "
                            f"got (t_final - t0) / dt_out = {count:.3g}")
        o.grid = t0 + dt_out * np.arange(1, int(count) + 1)
    _outside_surfaces(system, q0, o.event_tol, f"{fname}: q0")
    _surfaces_consistent(system, q0, fname)
    return np.array(q0, dtype=float), np.array(qd0, dtype=float), o


def _surfaces_consistent(system, q0, fname):
    """Refuse surfaces that contradict themselves at the initial state (issue 37): a normal row
    that is zero or is not dphi/dq, a tangent row parallel to the normal
    (:func:`robodyn._meaning_checks.surface_geometry`)."""
    q0 = np.asarray(q0, dtype=float)
    for s in system.surfaces:
        _meaning_checks.surface_geometry(s.phi, s.jacobian, s.tangent, q0,
                                 f"{fname}: system: surface {s.name!r}")


def _outside_surfaces(system, q, event_tol, name):
    """Refuse a configuration that penetrates a surface (phi < -event_tol)."""
    for s in system.surfaces:
        ph = float(s.phi(q))
        if ph < -event_tol:
            raise _value_checks.refusal(
                ValueError, f"{name}: expected a state outside every surface (phi >= 0), "
                            f"got phi = {ph:.6g} < 0 for surface {s.name!r}: the initial "
                            f"state penetrates it")


class _HybridRun:
    """One run of :func:`simulate_hybrid`: its state (t, q, qd, the contact status, a pending
    impact, a Zeno stop time), its records, and its steps as methods -- ``start`` (the
    initial contact set), :meth:`apply_impact`, :meth:`integrate` (one segment of motion in
    one contact mode), :meth:`after_segment` (what the segment ended with), :meth:`trajectory`."""

    def __init__(self, system, q0, qd0, o, fname):
        self.system, self.o, self.fname = system, o, fname
        self.n, self.surfaces = system.n, system.surfaces
        self.q0, self.qd0 = q0, qd0
        self.grad0 = [max(float(np.linalg.norm(_jac(s, q0, self.n))), 1e-6)
                      for s in self.surfaces]
        self.ts, self.qs, self.qds, self.log, self.segments = [], [], [], [], []
        self.impact_times = {s.name: [] for s in self.surfaces}
        self.nfev = self.n_steps = self.changes = 0
        self.t, self.q, self.qd = o.t0, q0.copy(), qd0.copy()
        self.reason, self.message = "t_final", f"reached t_final = {o.t_final} s"
        self.zeno_time = self.stop_at = self.pending = None
        self.status = {}

    def record(self, sol_t, Y):
        n = self.n
        self.segments.append(sum(len(x) for x in self.ts))
        self.ts.append(np.asarray(sol_t, dtype=float))
        self.qs.append(Y[:, :n])
        self.qds.append(Y[:, n:])

    def gap_rate(self, q, qd):
        return [(float(s.phi(q)), float(_jac(s, q, self.n) @ qd)) for s in self.surfaces]

    def resting(self, q, qd, status):
        """Surfaces touched with a normal speed below rest_speed (plus the closed ones)."""
        out, o = set(status), self.o
        for i, (ph, r) in enumerate(self.gap_rate(q, qd)):
            s = self.surfaces[i]
            if s.impact is None and not s.terminal and abs(ph) <= 10 * o.event_tol \
                    and abs(r) <= o.rest_speed:
                out.add(i)
        return out

    def impact(self, hit, status, t, q, qd):
        """One impact of the surfaces ``hit`` (and the closed ones), as one problem."""
        fname, n = self.fname, self.n
        idx = sorted(set(hit) | set(status))
        surfs = [self.surfaces[j] for j in idx]
        ph = max(abs(float(s.phi(q))) for s in surfs)
        if len(idx) == 1 and surfs[0].impact is not None:
            q1, qd1, res = surfs[0].impact(t, q, qd)
            return (np.asarray(q1, dtype=float), np.asarray(qd1, dtype=float), res,
                    float(res.energy_lost), np.asarray(res.impulse, dtype=float), ph)
        custom = [s.name for s in surfs if s.impact is not None]
        if custom:
            raise RuntimeError(f"{fname}: surfaces {[s.name for s in surfs]} are hit at once "
                               f"at t = {t:.6g}, and {custom} have their own impact map: "
                               f"simultaneous custom impacts are not supported")
        M = self.system.form.mass_matrix(q, t)
        Jn = np.array([_jac(s, q, n) for s in surfs])
        Jt = np.array([_tangent_row(s, q, n) for s in surfs])
        for j, s, row in zip(idx, surfs, Jn):
            if np.linalg.norm(row) <= 1e-6 * self.grad0[j]:
                raise _value_checks.refusal(
                    ValueError, f"{fname}: surface {s.name!r}: expected a non-zero gradient "
                                f"at the contact, got jacobian = {row.tolist()} at t = "
                                f"{t:.6g} s, below 1e-6 of its size at the start (the "
                                f"gradient vanishes: no normal direction)")
        e = np.array([s.restitution for s in surfs])
        mu = np.array([s.friction for s in surfs])
        res = _impulse(np.asarray(M, dtype=float), Jn, Jt, qd, e, mu, 1e-9, fname)
        return q.copy(), res.qd_plus, res, res.energy_lost, res.normal_impulse, ph

    def start(self):
        """The initial contact set: surfaces touched at rest, or an impact right at the start."""
        o = self.o
        approach = [i for i, (ph, r) in enumerate(self.gap_rate(self.q, self.qd))
                    if abs(ph) <= o.event_tol and r < -o.rest_speed
                    and not self.surfaces[i].terminal]
        self.pending = approach or None
        if not approach:
            self.status = _choose_mode(self.system, self.t, self.q, self.qd,
                                       self.resting(self.q, self.qd, {}), o.slide_speed)

    def zeno(self, hit, t):
        """The accumulation time when the impacts on a surface of ``hit`` accumulate, else
        None (at least four impacts, the last three intervals shrinking geometrically)."""
        zeno = None
        for j in hit:
            times = self.impact_times[self.surfaces[j].name]
            times.append(t)
            if len(times) >= 4:
                d = np.diff(times[-4:])
                r1, r2 = d[1] / d[0], d[2] / d[1]
                if d[2] < 1.0 / self.o.max_event_rate and 0 < r2 < 0.999 and 0 < r1 < 0.999 \
                        and abs(r2 - r1) < 0.05:
                    zeno = float(t + d[2] * r2 / (1.0 - r2))
        return zeno

    def apply_impact(self):
        """The pending impact, logged; then the new contact set (resting contact after a
        Zeno accumulation). True when the run must stop (``max_events``)."""
        o, surfaces, n, t, status = self.o, self.surfaces, self.n, self.t, self.status
        hit, self.pending = self.pending, None
        q, qd = self.q, self.qd
        q1, qd1, res, lost, imp, ph = self.impact(hit, status, t, q, qd)
        idx = sorted(set(hit) | set(status))
        name = "+".join(surfaces[j].name for j in idx)
        self.log.append(ImpactEvent(t, name, q.copy(), qd.copy(), q1, qd1, float(lost),
                                    np.asarray(imp, dtype=float), ph))
        self.record([t], np.concatenate([q1, qd1])[None, :])
        q, qd = q1, qd1
        custom = surfaces[hit[0]].impact is not None
        zeno = self.zeno(hit, t)
        if zeno is not None and not custom:
            self.zeno_time = zeno
            rest = [j for j in idx if surfaces[j].impact is None]
            Jm = np.array([_jac(surfaces[j], q, n) for j in rest])
            qd = _tangential_projection(self.system.form.mass_matrix(q, t), Jm, qd)
            self.record([t], np.concatenate([q, qd])[None, :])
            status = _choose_mode(self.system, t, q, qd, set(rest) | set(status),
                                  o.slide_speed)
            self.stop_at = zeno
        elif not custom:
            status = _choose_mode(self.system, t, q, qd, self.resting(q, qd, status),
                                  o.slide_speed)
        else:
            status = {}
        self.q, self.qd, self.status = q, qd, status
        return self._event_budget_spent()

    def _event_budget_spent(self):
        if len(self.log) + self.changes >= self.o.max_events:
            self.reason = "max_events"
            self.message = (f"stopped after max_events = {self.o.max_events} impacts and mode "
                            f"changes at t = {self.t:.6g} s")
            return True
        return False

    def integrate(self):
        """One segment of motion in the current contact mode, to t_final (or the Zeno time)
        or to the first event. Returns (indices of the free surfaces, the watcher that fired:
        an index, None, or "max_steps")."""
        o, n, surfaces = self.o, self.n, self.surfaces
        modes = _Contacts(self.system, self.status, o.baumgarte)
        free = [i for i in range(len(surfaces)) if i not in self.status]
        closed = modes.idx
        if closed:
            def rhs(tt, y, modes=modes):
                return np.concatenate([y[n:], modes.solve(tt, y[:n], y[n:])[0]])
        else:                                             # free flight: the hot path
            rhs = _free_rhs(self.system.form, n)
        free_s = [surfaces[i] for i in free]
        for s in free_s:
            _jac(s, self.q, n)                            # shape checked once per segment
        watch, value = _watchers(modes, free_s, closed, surfaces, n)
        t, y0 = self.t, np.concatenate([self.q, self.qd])
        t_end = o.t_final if self.stop_at is None else min(o.t_final, self.stop_at)
        span = t_end - t
        first = None if span <= 0 else min(span, 1e-3 * max(span, 1e-12)) if closed else None
        if span <= 0:
            sol_t, sol_y, k, steps, fe = [t], [y0], None, 0, 0
        else:
            sol_t, sol_y, k, steps, fe = _segment(rhs, t, y0, t_end, watch, o.cls,
                                                  o.solver_options, first, o.grid,
                                                  o.max_steps - self.n_steps, value)
        self.nfev += fe
        self.n_steps += steps
        self.record(sol_t, np.array(sol_y))
        self.t, y = float(sol_t[-1]), np.asarray(sol_y[-1], dtype=float)
        self.q, self.qd = y[:n].copy(), y[n:].copy()
        return free, k

    def after_segment(self, free, k):
        """What the segment ended with: the end time, the Zeno time, a surface reached (an
        impact pending, or a terminal surface), a lift-off, stick or slip (a new contact mode).
        True when the run stops."""
        o, surfaces, n, t, q, qd = self.o, self.surfaces, self.n, self.t, self.q, self.qd
        if k == "max_steps":
            self.reason = "max_steps"
            self.message = (f"stopped after max_steps = {o.max_steps} integrator steps at "
                            f"t = {t:.6g} s")
            return True
        if k is None:
            if self.stop_at is not None and t >= self.stop_at and t < o.t_final:
                if o.after_zeno == "stop":
                    self.reason = "zeno"
                    self.message = (f"impacts accumulate (Zeno) at t = {self.stop_at:.10g} s, "
                                    f"the limit of the geometric series of the last intervals; "
                                    f"stopped there")
                    return True
                self.stop_at = None
                return False
            if self.stop_at is not None and o.after_zeno == "stop":
                self.reason = "zeno"
                self.message = (f"impacts accumulate (Zeno) at t = {self.stop_at:.10g} s; "
                                f"stopped there")
            return True
        if k < len(free):                                 # a free surface reached
            s = surfaces[free[k]]
            if s.terminal:
                self.reason = f"terminal surface {s.name}"
                self.message = f"surface {s.name!r} reached at t = {t:.6g} s"
                return True
            hit = [free[k]]
            for i in free:
                if i == free[k] or surfaces[i].terminal:
                    continue
                ph, r = float(surfaces[i].phi(q)), float(_jac(surfaces[i], q, n) @ qd)
                if r < 0 and ph <= max(o.event_tol, -r * o.simultaneity):
                    hit.append(i)
            self.pending = hit
            self.stop_at = None
            return False
        self.changes += 1                                 # lift-off, stick or slip
        self.status = _choose_mode(self.system, t, q, qd,
                                   set(self.status) | self.resting(q, qd, {}), o.slide_speed)
        return self._event_budget_spent()

    def run(self):
        self.start()
        while True:
            if self.pending and self.apply_impact():
                break
            if self.t >= self.o.t_final:
                break
            if self.after_segment(*self.integrate()):
                break
        return self.trajectory()

    def trajectory(self):
        if self.zeno_time is not None and self.reason != "zeno":
            self.message += (f"; impacts accumulated (Zeno) at t = {self.zeno_time:.10g} s, "
                             f"resting contact after it")
        T = np.concatenate(self.ts) if self.ts else np.array([self.o.t0])
        Q = np.concatenate(self.qs) if self.qs else self.q0[None, :]
        QD = np.concatenate(self.qds) if self.qds else self.qd0[None, :]
        energy = None
        if self.system.energy is not None:
            energy = np.array([self.system.energy(a, b) for a, b in zip(Q, QD)])
        _value_checks.finite_result((T, Q, QD, energy), self.fname)
        return HybridTrajectory(T, Q, QD, tuple(self.log), self.reason, self.message,
                                float(self.t), self.zeno_time, self.nfev, self.n_steps,
                                tuple(self.segments), energy)


def simulate_hybrid(system, q0, qd0, t_final, *, t0=0.0, method="DOP853", rtol=1e-10,
                    atol=1e-10, event_tol=1e-10, max_events=1000, max_event_rate=1e4,
                    rest_speed=1e-9, max_step=np.inf, dt_out=None, simultaneity=1e-8,
                    after_zeno="continue", max_steps=10**6, slide_speed=1e-9, baumgarte=20.0):
    r"""Simulate a :class:`HybridSystem`: free motion, impacts, resting and sliding contact.

    **Free motion** :math:`M\ddot q = f` is integrated step by step (``scipy.integrate``'s
    solver classes). Each surface's :math:`\phi(q)` and its rate :math:`J\dot q` are checked at
    every step's ends; a crossing is located on the step's dense output, and it is found even
    when :math:`\phi > 0` at both ends (a grazing approach within one step): where the rate
    changes sign inside the step, the extremum of :math:`\phi` is located and tested. The
    located state penetrates by at most ``event_tol`` (units of :math:`\phi`).

    **Impacts** (eq. iv-contact-lcp, :func:`~robodyn.impacts.contact_impulse`): the surface hit,
    every other surface that would close within ``simultaneity`` seconds, and the closed
    contacts form one complementarity problem, each with its own restitution and friction
    coefficient (planar Coulomb friction with the surface's ``tangent`` row). A surface with its
    own ``impact`` map (a walker's heel strike) uses that map.

    **Resting and sliding contact** (eq. iv-contact-modes): after an impact whose rebound is
    below ``rest_speed``, after an accumulation of impacts (Zeno), or from rest on a surface,
    the motion continues on the surface as a constrained system, :math:`M\ddot q = f + J^T
    \lambda`, with the normal force watched (lift-off when it reaches 0), a sliding contact's
    velocity watched (it sticks or reverses when it reaches 0) and a sticking contact's force
    watched (it slips when it leaves the friction cone). ``baumgarte`` (1/s) damps the drift off
    the surface.

    **Zeno guard.** Only a true accumulation fires it: at least four impacts on one surface
    whose last three intervals shrink, the last shorter than ``1 / max_event_rate``; the
    accumulation time is the geometric series' limit (exact for a ball). With
    ``after_zeno="continue"`` the motion goes on in contact from there; with ``"stop"`` the
    run ends at the accumulation time, its last sample the state at that time. Every run is
    bounded: ``max_events`` impacts and mode changes, ``max_steps`` integrator steps.

    Parameters
    ----------
    system : HybridSystem
    q0, qd0 : (n,) initial state; :math:`\phi(q_0) \ge -\varepsilon` (``event_tol``) on every surface
    t_final : float, end time (s), > t0
    t0 : start time
    method : 'DOP853', 'RK45', 'RK23', 'Radau', 'BDF' or 'LSODA'; rtol, atol, max_step as in
        ``solve_ivp``
    event_tol : bound on the penetration :math:`-\phi` at a located event (units of phi)
    max_events : bound on impacts and contact-mode changes (at most 10**7)
    max_event_rate : impacts per second above which shrinking intervals count as Zeno
    rest_speed : rebound speed below which a contact becomes resting contact
    dt_out : optional spacing of output samples (dense output); default the solver's steps
    simultaneity : s, impacts closer in time than this are one impact
    after_zeno : "continue" or "stop"
    max_steps : bound on the integrator's steps (at most 10**8)
    slide_speed : sliding speed below which a contact may stick
    baumgarte : stabilisation rate of the contact constraints (1/s)

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
    :math:`t_\infty = \sqrt{2h/g}\,(1+e)/(1-e)`, and the ball then rests on the ground.

    >>> from robodyn import walking
    >>> tr = simulate_hybrid(walking.bouncing_ball(0.5), [0.0, 1.0], [0.0, 0.0], 5.0)
    >>> tr.stop_reason, round(tr.zeno_time, 6), round(float(3 * np.sqrt(2 / 9.81)), 6)
    ('t_final', 1.354571, 1.354571)
    >>> bool(abs(tr.q[-1, 1]) < 1e-9), float(tr.t[-1])
    (True, 5.0)
    """
    fname = "simulate_hybrid"
    q0, qd0, o = _hybrid_options(fname, system, q0, qd0, t_final, t0, method, rtol, atol,
                                 event_tol, max_events, max_event_rate, rest_speed, max_step,
                                 dt_out, simultaneity, after_zeno, max_steps, slide_speed,
                                 baumgarte)
    with _value_checks.overflow_guard(fname):
        return _HybridRun(system, q0, qd0, o, fname).run()



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

    Options are those of :func:`simulate_hybrid`. Raises
    :class:`~robodyn.impacts.LimitReached` (a ValueError) when no impact comes
    within ``t_max`` seconds or the motion ends otherwise (a fall).

    >>> from robodyn import walking
    >>> ball = walking.bouncing_ball(0.5)
    >>> round(float(return_map(ball, [0, 0, 0, 2.0]).x[3]), 6)       # rebound speed e v
    1.0
    """
    fname = "return_map"
    if not isinstance(system, HybridSystem):
        raise _value_checks.refusal(
            TypeError, f"{fname}: system: expected a HybridSystem, got {_value_checks._describe(system)}")
    n = system.n
    x = _value_checks.real_array(x, f"{fname}: x", shape=(2 * n,), hint="q then qd")
    names = [s.name for s in system.surfaces]
    if surface is not None and (not isinstance(surface, str) or surface not in names):
        raise _value_checks.error(f"{fname}: surface", f"None or one of {names}",
                            _value_checks.describe(surface))
    t_max = _value_checks.real_number(t_max, f"{fname}: t_max", low=0, strict_low=True, hint="s")
    allowed = [k for k, prm in inspect.signature(simulate_hybrid).parameters.items()
               if prm.kind is prm.KEYWORD_ONLY and k not in ("max_events", "t0")]
    unknown = [k for k in options if k not in allowed]
    if unknown:
        raise _value_checks.error(f"{fname}: options", f"options of simulate_hybrid ({', '.join(allowed)})",
                            repr(unknown[0]), "max_events is 1 here: one step", exc=TypeError)
    _outside_surfaces(system, x[:n], _value_checks.tolerance(options.get("event_tol", 1e-10),
                                                       f"{fname}: event_tol"), f"{fname}: x")
    options.setdefault("max_event_rate", 1e12)
    options.setdefault("rest_speed", 1e-300)
    if system.energy is not None:           # only the event is used: no energy per sample
        system = HybridSystem(system.form, system.surfaces, None, system.name)
    try:
        with _value_checks.overflow_guard(fname):
            tr = simulate_hybrid(system, x[:n], x[n:], t_max, max_events=1, **options)
    except (ValueError, TypeError) as exc:          # an option refused: named as passed here
        if type(exc) in (ValueError, TypeError) and str(exc).startswith("simulate_hybrid: "):
            raise type(exc)(fname + str(exc)[len("simulate_hybrid"):]) from exc
        raise
    if not tr.events:
        raise LimitReached(f"{fname}: x, t_max: expected a motion that reaches an impact "
                           f"within t_max = {t_max} s, got none ({tr.message})")
    ev = tr.events[0]
    if surface is not None and ev.surface != surface:
        raise LimitReached(f"{fname}: x, surface: expected the next impact on {surface!r}, got "
                           f"one on {ev.surface!r} at t = {ev.time:.6g} s")
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


MAX_NEWTON = 10_000
"""Largest ``max_iter`` that :func:`fixed_point` accepts."""


def fixed_point(step, x0, *, tol: Tolerance = 1e-9, max_iter=20, fd_step=1e-7):
    r"""A fixed point :math:`x^* = P(x^*)` of a map by Newton's method with a finite-difference
    Jacobian: :math:`x \leftarrow x - (DP - I)^{-1}(P(x) - x)`.

    Parameters
    ----------
    step : callable ``P(x) -> (k,)`` (e.g. ``lambda x: return_map(sys, x).x``)
    x0 : (k,) initial guess
    tol : stop when :math:`|P(x) - x|_\infty \le` tol
    max_iter : bound on the Newton iterations (:class:`LimitReached`, also a RuntimeError, when
        reached or when the Newton step vanishes away from a fixed point)
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
        raise _value_checks.refusal(
            TypeError, f"{fname}: step: expected a function P(x), got {_value_checks._describe(step)}")
    x = np.array(_value_checks._to_array(x0, f"{fname}: x0"), dtype=float).reshape(-1)
    _value_checks.finite(x, f"{fname}: x0")
    tol = _value_checks.tolerance(tol, f"{fname}: tol")
    fd_step = _value_checks.tolerance(fd_step, f"{fname}: fd_step")
    max_iter = _value_checks.size(max_iter, f"{fname}: max_iter", high=MAX_NEWTON,
                            hint="each iteration costs 2k + 1 evaluations of the map")
    k = x.size
    if k == 0:
        raise _value_checks.error(f"{fname}: x0", "at least one number", "an empty array")

    def P(z):
        out = np.asarray(step(z), dtype=float).reshape(-1)
        if out.shape != (k,):
            raise _value_checks.refusal(
                ValueError, f"{fname}: step: expected it to return {k} numbers, got shape "
                            f"{out.shape}")
        return _value_checks.finite_result(out, f"{fname}: step", "P(x)")

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
            raise LimitReached(f"{fname}: no fixed point within max_iter = {max_iter} Newton "
                               f"iterations: |P(x) - x| = {np.max(np.abs(Px - x)):.3g} > "
                               f"tol = {tol:g}")
        D = jacobian(x)
        dx = np.linalg.lstsq(D - np.eye(k), Px - x, rcond=None)[0]
        if not np.any(np.abs(dx) > 1e-15 * np.maximum(1.0, np.abs(x))):
            raise LimitReached(f"{fname}: the Newton step vanished with |P(x) - x| = "
                               f"{np.max(np.abs(Px - x)):.3g} > tol = {tol:g} (DP - I is "
                               f"singular along the residual: no fixed point near x)")
        x = x - dx
        Px = P(x)
        updates += 1
    D = jacobian(x)
    ev = np.linalg.eigvals(D)
    ev = ev[np.argsort(-np.abs(ev))]
    if np.all(np.abs(ev.imag) < 1e-12):
        ev = ev.real
    return FixedPoint(x, D, ev, float(np.max(np.abs(Px - x))), updates)

from .._boundary import seal as _seal  # noqa: E402 -- the one boundary (issue 28): last, over the finished module
_seal(globals())
