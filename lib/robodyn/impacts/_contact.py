r"""Many contacts at once: the complementarity impact problem with a restitution and a Coulomb
friction coefficient per contact (Part IV, "many contacts, friction and rest").

For p contacts with normal rows :math:`J_n` (p x n, :math:`\partial\phi_i/\partial q`) and planar
tangent rows :math:`J_t` (p x n, the sliding velocity of each contact point is
:math:`J_t\dot q`), the impulses :math:`\Lambda_n, \Lambda_t` and the velocity after the impact
satisfy, eq. (iv-contact-lcp),

.. math:: M(\dot q^+ - \dot q^-) = J_n^T\Lambda_n + J_t^T\Lambda_t, \qquad
          0 \le \Lambda_{n,i} \perp J_{n,i}\dot q^+ + e_i J_{n,i}\dot q^- \ge 0,

and for each contact with friction coefficient :math:`\mu_i`, either *sticking*,
:math:`J_{t,i}\dot q^+ = 0` with :math:`|\Lambda_{t,i}| \le \mu_i\Lambda_{n,i}`, or *sliding*,
:math:`\Lambda_{t,i} = -\mu_i\,\sigma_i\Lambda_{n,i}` with :math:`\sigma_i J_{t,i}\dot q^+ \ge 0`
(Newton's restitution per contact, Coulomb's cone, which is exact in the plane: two edges).
Newton's law is kept rather than Poisson's (a ratio of restitution to compression impulses):
the two agree whenever the contacts' normal and tangential problems decouple (a ball, a flat
rod, frictionless contacts with the plastic or the elastic law), Newton's is the one the
earlier chapters use, and where friction couples the contacts the energy cap below keeps it
physical. Friction is planar: one tangent row per contact (a spatial contact would need a
polyhedral cone, not built here).
The same problem at the acceleration level (``level="acceleration"``) gives the contact forces
of resting and sliding contact, with the same solver.

**Which solver.** ``contact_impulse(..., method=...)`` chooses among three solvers of the
same problem; ``method="auto"`` (the default) picks the first that fits
(``choose_method``): the mode enumeration below for small contact sets (at most
``AUTO_ENUMERATE`` modes: four frictional or eight frictionless contacts), Lemke's
pivoting method (:func:`robodyn.impacts.lemke`; exact) on the Delassus LCP of the frictionless
problem or on Stewart and Trinkle's (1996) form of the frictional one with the planar cone's
two edges (unknowns :math:`\Lambda_n, \beta^+, \beta^-, \gamma`, with :math:`\Lambda_t =
\beta^+ - \beta^-` and :math:`\gamma` the sliding speed) up to ``AUTO_LEMKE`` unknowns,
and else projected Gauss--Seidel on the Delassus matrix (iterative, to ``tol``; compiled), the
one that solves a hundred frictional contacts in milliseconds. The enumeration is kept as the
reference the others are tested against (tests/test_contact_solvers.py). Where friction
admits several solutions (Coulomb's law is not monotone), the solvers may return different
ones, each admissible.

The enumeration goes through the modes of the contacts (open, closed or sticking, sliding one
way or the other), solves each mode's linear equations by least squares (so that dependent
contact sets, three collinear supports, have their minimum-norm impulses) and returns the first
mode whose impulses lie in the cone and whose velocities are admissible. The normal-only problem
is a linear complementarity problem with a positive semidefinite matrix: the velocity after the
impact is unique. When friction couples the contacts, Newton's law can create energy (Kane and
Levinson's paradox) or have no admissible solution at all: the restitutions are then scaled down
together (bisection) to the largest factor whose problem is solvable without a gain of kinetic
energy, and the result says so (``restitution_scaled``); the plastic problem (e = 0) always has
a solution when the contact set is consistent.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from ..kinds import FrictionCoefficient, Restitution, Tolerance
from .. import _value_checks
from .. import _meaning_checks
from ._lcp import MAX_SWEEPS, _lemke, contact_pgs
from ..errors import RobodynError

__all__ = ["ContactResult", "contact_impulse", "MAX_MODES", "LimitReached"]


class LimitReached(RobodynError, ValueError, RuntimeError):
    """A computation whose arguments allow no finite answer within its cap (an inelastic
    collapse of impacts, a motion that never reaches the surface asked for). A ValueError that
    names the arguments responsible; also a RuntimeError, as these were before."""

MAX_MODES = 4096
"""Bound on the number of contact modes enumerated (4**6, six frictional contacts at once)."""

_LOG2_MAX_MODES = math.log2(MAX_MODES)

METHODS = ("auto", "enumerate", "lemke", "pgs")
"""The solvers of :func:`contact_impulse`'s complementarity problem."""

AUTO_ENUMERATE = 256
"""``method="auto"`` enumerates up to this many contact modes (four frictional contacts)."""

AUTO_LEMKE = 160
"""``method="auto"`` uses Lemke up to this many LCP unknowns (p frictionless contacts, or
p + 3 p_f with p_f frictional ones: 40 frictional contacts), then projected Gauss--Seidel."""


def mode_bits(lists):
    """log2 of the number of mode combinations of these per-contact mode lists."""
    return sum(math.log2(len(m)) for m in lists)


@dataclass(frozen=True)
class ContactResult:
    """The outcome of :func:`contact_impulse`.

    ``qd_plus`` (n,) velocity after the impact (or, at the acceleration level, the
    acceleration); ``normal_impulse``, ``tangential_impulse`` (p,) :math:`\\Lambda_n,
    \\Lambda_t` (N s; N at the acceleration level); ``normal_before``, ``normal_after``,
    ``tangential_before``, ``tangential_after`` (p,) the contact velocities; ``modes`` one of
    'open', 'closed', 'stick', 'slide' per contact; ``energy_lost`` (J, >= 0 at the impulse
    level); ``restitution`` (p,) the coefficients used; ``restitution_scaled`` True when they
    were lowered to keep the energy from increasing; ``method`` the solver that gave it
    ('closed form' for one frictionless contact, 'enumerate', 'lemke' or 'pgs')."""
    qd_plus: np.ndarray
    normal_impulse: np.ndarray
    tangential_impulse: np.ndarray
    normal_before: np.ndarray
    normal_after: np.ndarray
    tangential_before: np.ndarray
    tangential_after: np.ndarray
    modes: tuple
    energy_lost: float
    restitution: np.ndarray
    restitution_scaled: bool = False
    method: str = "closed form"

    @property
    def impulse(self):
        """:math:`\\Lambda_n` (the same name as :class:`~robodyn.impacts.ImpactResult`)."""
        return self.normal_impulse


def _per_contact(x, p, name, lo, hi, what):
    a = np.array(_value_checks.real_array(x, name), dtype=float).reshape(-1)
    if a.size == 1:
        a = np.full(p, float(a[0]))
    if a.shape != (p,):
        raise _value_checks.refusal(
            ValueError, f"{name}: expected one {what} or one per contact ({p}), got "
                        f"{a.size} values")
    bad = (a < lo) | (a > hi)
    if bad.any():
        raise _value_checks.refusal(
            ValueError, f"{name}: expected {what}s in [{lo:g}, {hi:g}], got {a[bad][0]!r} "
                        f"(contact {int(np.flatnonzero(bad)[0])})")
    return a


def _rows(J, n, p, name):
    a = np.array(_value_checks.real_array(J, name), dtype=float)
    if a.ndim == 1:
        a = a.reshape(1, -1)
    if a.ndim != 2 or a.shape[1] != n or (p is not None and a.shape[0] != p):
        want = f"{p} x {n}" if p is not None else f"p x {n}"
        raise _value_checks.refusal(
            ValueError, f"{name}: expected {want} (one row per contact), got shape {a.shape}")
    return a


def _mode_lists(mu, has_t, fixed):
    out = []
    for i in range(len(mu)):
        if mu[i] == 0.0 or not has_t[i]:
            out.append(("closed", "open"))
        elif fixed[i] != 0:
            out.append(("slide" + ("+" if fixed[i] > 0 else "-"), "open"))
        else:
            out.append(("stick", "slide+", "slide-", "open"))
    return out


def solve_modes(Minv, Jn, Jt, mu, v0, cn, ct, fixed, tol, fname, open_first=False):
    """Enumerate contact modes: the first admissible one, ``(v, Ln, Lt, modes)``, or None.

    ``v = v0 + Minv (Jn^T Ln + Jt^T Lt)``; normal: ``Jn v + cn >= 0 ⊥ Ln >= 0``; tangent:
    stick ``Jt v + ct = 0, |Lt| <= mu Ln`` or slide ``Lt = -mu s Ln, s (Jt v + ct) >= 0``;
    ``fixed[i] = ±1`` forces sliding with that sign (a contact already sliding).
    ``open_first``: where several modes are admissible (a force exactly 0, at a mode change),
    prefer opening, then sliding, then sticking; else closing and sticking first."""
    p, n = Jn.shape
    has_t = np.any(Jt != 0.0, axis=1)
    lists = _mode_lists(mu, has_t, fixed)
    if open_first:
        lists = [tuple(reversed(m)) for m in lists]
    if mode_bits(lists) > _LOG2_MAX_MODES:                  # a sum of logs: cannot overflow
        count = math.prod(len(m) for m in lists)           # exact (Python integers)
        raise _value_checks.refusal(
            ValueError, f"{fname}: contacts: expected at most {MAX_MODES} contact modes to "
                        f"enumerate, got {count} ({p} contacts at once; hint: "
                        f"method='lemke' or 'pgs' solves large contact sets)")
    wn0, wt0 = Jn @ v0 + cn, Jt @ v0 + ct
    scale = max(1.0, float(np.max(np.abs(wn0), initial=0.0)),
                float(np.max(np.abs(wt0), initial=0.0)))
    eps = tol * scale
    MJn, MJt = Minv @ Jn.T, Minv @ Jt.T                    # (n, p)
    for combo in itertools.product(*lists):
        closed = [i for i, m in enumerate(combo) if m != "open"]
        stick = [i for i, m in enumerate(combo) if m == "stick"]
        sign = np.array([1.0 if m == "slide+" else -1.0 if m == "slide-" else 0.0
                         for m in combo])
        k = len(closed) + len(stick)
        if k:
            cols = np.empty((n, k))
            for j, i in enumerate(closed):
                cols[:, j] = MJn[:, i] - mu[i] * sign[i] * MJt[:, i]
            for j, i in enumerate(stick):
                cols[:, len(closed) + j] = MJt[:, i]
            R = np.vstack([Jn[closed], Jt[stick]])
            b = -np.concatenate([wn0[closed], wt0[stick]])
            A = R @ cols
            x = np.linalg.lstsq(A, b, rcond=1e-12)[0]
            if np.max(np.abs(A @ x - b), initial=0.0) > 100 * eps:
                continue
            dv = cols @ x
        else:
            x, dv = np.zeros(0), np.zeros(n)
        Ln, Lt = np.zeros(p), np.zeros(p)
        Ln[closed] = x[:len(closed)]
        Lt[stick] = x[len(closed):]
        for i in closed:
            if sign[i] != 0.0:
                Lt[i] = -mu[i] * sign[i] * Ln[i]
        v = v0 + dv
        wn, wt = Jn @ v + cn, Jt @ v + ct
        lam_scale = max(1.0, float(np.max(np.abs(x), initial=0.0)))
        ok = all(Ln[i] >= -tol * lam_scale for i in closed)
        ok = ok and all(wn[i] >= -eps for i, m in enumerate(combo) if m == "open")
        ok = ok and all(abs(Lt[i]) <= mu[i] * Ln[i] + tol * lam_scale for i in stick)
        ok = ok and all(sign[i] * wt[i] >= -eps for i in closed
                        if sign[i] != 0.0 and fixed[i] == 0)   # already sliding: any wt
        if ok:
            return v, Ln, Lt, combo
    return None


def _modes_of(Ln, Lt, mu, fr, eps):
    """'open' | 'closed' | 'stick' | 'slide' of each contact from its impulses."""
    out = []
    for i in range(Ln.size):
        if Ln[i] <= eps:
            out.append("open")
        elif not fr[i]:
            out.append("closed")
        else:
            out.append("slide" if abs(Lt[i]) >= mu[i] * Ln[i] * (1 - 1e-9) else "stick")
    return tuple(out)


def solve_lcp(Minv, Jn, Jt, mu, v0, cn, method, tol, max_iter, fname):
    """The impulse problem of :func:`solve_modes` (no ``fixed`` signs, ct = 0) by Lemke's
    method (frictionless: the Delassus LCP; frictional: Stewart and Trinkle's planar cone) or
    projected Gauss--Seidel: ``(v, Ln, Lt, modes)``, or None when Lemke ends on a ray.
    Raises ValueError when the iteration cap is reached or the answer is not finite."""
    p = Jn.shape[0]
    fr = (mu > 0) & np.any(Jt != 0.0, axis=1)
    f = np.flatnonzero(fr)
    G = np.vstack([Jn, Jt])
    MG = Minv @ G.T
    W = G @ MG                                                # Delassus matrix (2p x 2p)
    bn, bt = Jn @ v0 + cn, Jt @ v0
    scale = max(1.0, float(np.max(np.abs(bn), initial=0.0)), float(np.max(np.abs(bt),
                                                                           initial=0.0)))
    Ln, Lt = np.zeros(p), np.zeros(p)
    if method == "lemke":
        k = f.size
        Wnn, Wnt, Wtt = W[:p, :p], W[:p, p + f], W[np.ix_(p + f, p + f)]
        I, Z = np.eye(k), np.zeros((k, k))
        Mu = np.zeros((k, p))
        Mu[np.arange(k), f] = mu[f]
        A = np.block([[Wnn, Wnt, -Wnt, np.zeros((p, k))],
                      [Wnt.T, Wtt, -Wtt, I],
                      [-Wnt.T, -Wtt, Wtt, I],
                      [Mu, -I, -I, Z]])
        b = np.concatenate([bn, bt[f], -bt[f], np.zeros(k)])
        cap = max_iter if max_iter is not None else 50 * (b.size + 1)
        try:
            z, _ = _lemke(A, b, cap, 1e-12)
        except RuntimeError as exc:
            raise _value_checks.refusal(
                ValueError, f"{fname}: max_iter: expected Lemke's method to end within "
                            f"{cap} pivots, got no end ({p} contacts; a larger cap, or "
                            f"method='pgs')") from exc
        if z is None:
            return None
        Ln = z[:p]
        Lt[f] = z[p:p + k] - z[p + k:p + 2 * k]
    else:
        cap = max_iter if max_iter is not None else min(MAX_SWEEPS, 2000 + 50 * p)
        Ln, Lt, used = contact_pgs(W, np.concatenate([bn, bt]), mu, fr, cap, tol)
        if used < 0:
            raise _value_checks.refusal(
                ValueError, f"{fname}: max_iter: expected projected Gauss-Seidel to converge "
                            f"within {cap} sweeps (tol = {tol:g}), got no convergence ({p} "
                            f"contacts; a larger max_iter or tol, or method='lemke')")
    lam = np.concatenate([Ln, Lt])
    v = v0 + MG @ lam
    if not (np.all(np.isfinite(v)) and np.all(np.isfinite(lam))):
        raise _value_checks.refusal(
            ValueError, f"{fname}: M: expected a finite impulse, got a non-finite one "
                        f"(an ill-conditioned contact problem)")
    eps = 1e-9 * max(1.0, float(np.max(np.abs(lam))))
    return v, Ln, Lt, _modes_of(Ln, Lt, mu, fr, eps)


def choose_method(p, mu, Jt, method="auto"):
    """The solver ``method="auto"`` picks for p contacts: enumeration up to
    ``AUTO_ENUMERATE`` modes, Lemke up to ``AUTO_LEMKE`` unknowns, else 'pgs'."""
    if method != "auto":
        return method
    fr = (np.asarray(mu) > 0) & np.any(np.asarray(Jt) != 0.0, axis=1)
    bits = mode_bits(_mode_lists(mu, np.any(np.asarray(Jt) != 0.0, axis=1), np.zeros(p)))
    if bits <= math.log2(AUTO_ENUMERATE):
        return "enumerate"
    return "lemke" if p + 3 * int(fr.sum()) <= AUTO_LEMKE else "pgs"


def contact_impulse(M, Jn, qd_minus, restitution: Restitution, *,
                    friction: FrictionCoefficient = 0.0, Jt=None, tol: Tolerance = 1e-9,
                    method="auto", max_iter=None):
    r"""The velocity after an impact at p contacts at once: eq. (iv-contact-lcp).

    Each contact has its own Newton restitution :math:`e_i` (the normal velocity after is at
    least :math:`-e_i` times the one before, with equality where the impulse is positive) and
    its own Coulomb coefficient :math:`\mu_i` (planar: one tangent row per contact). Contacts
    that separate get no impulse (complementarity), impulses are never negative, and dependent
    contact sets (three supports on a line) get the minimum-norm impulses of the unique
    velocity. With one contact and no friction this is :func:`~robodyn.impacts.impact_map`.

    Parameters
    ----------
    M : (n, n) mass matrix, symmetric positive definite
    Jn : (p, n) normal rows :math:`\partial\phi_i/\partial q` (non-zero)
    qd_minus : (n,) velocity before the impact
    restitution : e in [0, 1], one or one per contact
    friction : :math:`\mu \ge 0`, one or one per contact (contacts without ``Jt`` ignore it)
    Jt : (p, n) tangent rows (sliding velocity of each contact), needed when friction > 0
    tol : relative tolerance of the complementarity tests (and of the Gauss--Seidel sweeps)
    method : the solver: ``"enumerate"`` (every mode, at most ``robodyn.impacts.MAX_MODES``: the
        reference), ``"lemke"`` (Lemke's pivoting on the Delassus LCP, or on Stewart and
        Trinkle's planar cone with friction: exact), ``"pgs"`` (projected Gauss--Seidel:
        iterative, to ``tol``, the fastest for hundreds of contacts) or ``"auto"``:
        enumeration up to ``AUTO_ENUMERATE`` modes, Lemke up to ``AUTO_LEMKE``
        unknowns, else projected Gauss--Seidel (see ``choose_method``)
    max_iter : cap on Lemke's pivots or on the Gauss--Seidel sweeps (default 50 (k + 1) for k
        LCP unknowns, 2000 + 50 p sweeps); at most ``robodyn.impacts.MAX_SWEEPS``

    Returns
    -------
    ContactResult

    Raises
    ------
    ValueError
        shapes; M not SPD; e outside [0, 1] or :math:`\mu < 0`; a vanishing normal row;
        friction without tangent rows; no admissible mode (an infeasible contact set); more
        than ``robodyn.impacts.MAX_MODES`` modes to enumerate; the iteration cap reached; a non-finite
        result.

    Examples
    --------
    A ball (m = 1, radius r = 0.1, I = 2/5 m r^2) spinning backwards lands on rough ground
    (mu = 1): the contact point sticks, and the spin reverses to rolling:

    >>> m, r = 1.0, 0.1
    >>> M = np.diag([m, m, 0.4 * m * r**2])
    >>> res = contact_impulse(M, [0, 1, 0], [1.0, -2.0, 30.0], 0.5, friction=1.0,
    ...                       Jt=[1, 0, r])
    >>> res.modes, np.round(res.qd_plus, 6).tolist()
    (('stick',), [-0.142857, 1.0, 1.428571])
    """
    fname = "contact_impulse"
    M = _meaning_checks.spd(M, f"{fname}: M")
    M = np.asarray(M, dtype=float)
    n = M.shape[0]
    Jn = _rows(Jn, n, None, f"{fname}: Jn")
    p = Jn.shape[0]
    norms = np.linalg.norm(Jn, axis=1)
    if np.any(norms <= 1e-12 * max(1.0, float(np.max(np.abs(M))))):
        i = int(np.argmin(norms))
        raise _value_checks.refusal(
            ValueError, f"{fname}: Jn: expected non-zero normal rows, got row {i} = "
                        f"{Jn[i].tolist()} (the surface's gradient vanishes at the contact: "
                        f"no normal direction)")
    v = np.asarray(_value_checks.vector(qd_minus, n, f"{fname}: qd_minus"), dtype=float)
    e = _per_contact(restitution, p, f"{fname}: restitution", 0.0, 1.0, "restitution")
    mu = _per_contact(friction, p, f"{fname}: friction", 0.0, np.inf, "friction coefficient")
    if Jt is None:
        if np.any(mu > 0):
            raise _value_checks.refusal(
                ValueError, f"{fname}: Jt: expected tangent rows for friction > 0, got None "
                            f"(hint: Jt[i] q_dot is the sliding velocity of contact i)")
        Jt = np.zeros((p, n))
    else:
        Jt = _rows(Jt, n, p, f"{fname}: Jt")
        _tangents_apart(Jn, Jt, mu, fname)
    tol = _value_checks.tolerance(tol, f"{fname}: tol")
    method = _value_checks.choice(method, f"{fname}: method", METHODS)
    if max_iter is not None:
        max_iter = _value_checks.size(max_iter, f"{fname}: max_iter", high=MAX_SWEEPS)
    return _impulse(M, Jn, Jt, v, e, mu, tol, fname, method, max_iter)


def _tangents_apart(Jn, Jt, mu, fname):
    """Refuse, at a contact with friction, a tangent row that is zero or parallel to the
    contact's normal row: friction would vanish, or act along the normal (the impulse split
    into normal and tangential parts would mean nothing)."""
    for i in np.flatnonzero(mu > 0):
        t, nrm = Jt[i], Jn[i]
        off = t - nrm * (t @ nrm) / (nrm @ nrm)         # the part of t across the normal
        if not np.linalg.norm(off) > 1e-9 * max(np.linalg.norm(t), np.linalg.norm(nrm)):
            got = "the zero row" if not np.any(t) else f"{t.tolist()}, parallel to Jn[{i}]"
            raise _value_checks.error(
                f"{fname}: Jt", "a tangent row independent of its contact's normal row where "
                "friction > 0", f"row {i}: {got}", "friction acts across the normal: the "
                "sliding velocity's row")


def _impulse(M, Jn, Jt, v, e, mu, tol, fname, method="auto", max_iter=None):
    p = Jn.shape[0]
    vn, vt = Jn @ v, Jt @ v
    if p == 1 and (mu[0] == 0.0 or not np.any(Jt)) and vn[0] <= 0.0:   # eq. (hb-5-31)
        MinvJ = np.linalg.solve(M, Jn[0])
        w = float(Jn[0] @ MinvJ)
        L = -(1.0 + e[0]) * vn[0] / w
        v1 = v + MinvJ * L
        lost = 0.5 * (1.0 - e[0] ** 2) * vn[0] ** 2 / w
        return ContactResult(v1, np.array([L]), np.zeros(1), vn, Jn @ v1, vt, Jt @ v1,
                             ("closed",), lost, e.copy(), False)
    Minv = np.linalg.inv(M)
    T0 = 0.5 * float(v @ M @ v)

    auto = method == "auto"
    method = choose_method(p, mu, Jt, method)
    used = [method]

    def solve(scale):
        cn = scale * e * np.minimum(vn, 0.0)
        if method == "enumerate":
            return solve_modes(Minv, Jn, Jt, mu, v, cn, np.zeros(p), np.zeros(p), tol, fname)
        try:
            return solve_lcp(Minv, Jn, Jt, mu, v, cn, method, tol, max_iter, fname)
        except ValueError:
            if not (auto and method == "pgs"):
                raise
        # auto: an ill-conditioned set on which Gauss-Seidel stalls goes to Lemke (exact)
        used.append("lemke")
        return solve_lcp(Minv, Jn, Jt, mu, v, cn, "lemke", tol, None, fname)

    slack = 1e-12 if method != "pgs" else 10 * tol           # an iteration is good to tol

    def fine(out):
        return out is not None and 0.5 * float(out[0] @ M @ out[0]) <= T0 * (1 + slack) + 1e-15

    scale, scaled = 1.0, False
    out = solve(1.0)
    if not fine(out):
        if not fine(solve(0.0)):
            raise _value_checks.refusal(
                ValueError, f"{fname}: contacts: expected a contact set with an admissible "
                            f"impulse, got none among the modes of {p} contacts (the "
                            f"constraints are infeasible: inconsistent Jn or friction)")
        lo, hi = 0.0, 1.0                    # bisection on a common factor of the e_i
        for _ in range(50):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if fine(solve(mid)) else (lo, mid)
        scale, scaled = lo, True
        out = solve(lo)
    v1, Ln, Lt, modes = out
    lost = T0 - 0.5 * float(v1 @ M @ v1)
    _value_checks.finite_result((v1, Ln, Lt, lost), fname, "result (qd_plus, impulses, energy_lost)")
    modes = tuple("slide" if m.startswith("slide") else m for m in modes)
    return ContactResult(v1, Ln, Lt, vn, Jn @ v1, vt, Jt @ v1, modes, max(lost, 0.0),
                         scale * e, scaled, used[-1])

from .._boundary import seal as _seal  # noqa: E402 -- the one boundary (issue 28): last, over the finished module
_seal(globals())
