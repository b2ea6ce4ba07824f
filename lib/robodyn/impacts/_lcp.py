r"""Solvers of linear complementarity problems for many contacts at once (Part IV): Lemke's
pivoting method, exact, and a projected Gauss--Seidel iteration on the Delassus matrix, fast.

A linear complementarity problem LCP(A, b) asks for z with, eq. (iv-lcp),

.. math:: w = Az + b, \qquad z \ge 0, \quad w \ge 0, \quad z^Tw = 0.

**Lemke** (Cottle, Pang & Stone 1992, §4.4) adds an artificial variable :math:`z_0` with the
covering vector :math:`d = (1, \dots, 1)`, starts from the basis of the :math:`w`, and pivots
complementary pairs in and out until :math:`z_0` leaves the basis: a solution, exact up to
round-off. It ends on a ray (no solution found) only for matrices that are not copositive-plus
or problems that have no solution; the contact problems of :mod:`robodyn.impacts` -- the
frictionless one (A the Delassus matrix, positive semidefinite) and Stewart and Trinkle's
(1996) polyhedral-cone form of the frictional one -- are of the kinds it solves. Each pivot
costs O(k^2) for k unknowns and there are typically a few times k of them.

**Projected Gauss--Seidel** on a contact problem (Jean 1999; Erleben 2013) updates each contact's
normal impulse, projected on :math:`\Lambda_n \ge 0`, then its tangential impulse, projected on
Coulomb's interval :math:`|\Lambda_t| \le \mu\Lambda_n`, one contact after the other, until no
impulse moves by more than ``tol`` (relative) in a sweep: O(p^2) per sweep, compiled
(``_pgs.c``; the numpy loop below is the same algorithm when no C compiler works). It converges
for the frictionless problem (positive semidefinite A) and in practice for the frictional one;
it is iterative, so its answer is as good as ``tol``, and it is refused (an error) when it does
not converge within its cap of sweeps.
"""
from __future__ import annotations

import math

import numpy as np

from ..kinds import Tolerance
from .. import _value_checks

__all__ = ["lemke", "MAX_PIVOTS", "MAX_SWEEPS"]

MAX_PIVOTS = 10**6
"""The largest cap on Lemke's pivots that may be asked for."""

MAX_SWEEPS = 10**7
"""The largest cap on projected Gauss--Seidel sweeps that may be asked for."""

_PGS_MODULE = []


def _pgs_engine():
    """The compiled projected Gauss--Seidel (``_pgs.c``), or None where no compiler works
    (the package's one loader, :func:`robodyn.dynamics._recursions._load_compiled`)."""
    from ..dynamics._recursions import _load_compiled
    return _load_compiled(_PGS_MODULE, "_pgs.c", "robodyn_pgs",
                          "robodyn.impacts: the compiled Gauss-Seidel", "the numpy loop runs")


def _pivot(T, r, c):
    T[r] /= T[r, c]
    col = T[:, c].copy()
    col[r] = 0.0
    T -= np.outer(col, T[r])


def _lemke(A, b, max_pivots, tol):
    """z solving LCP(A, b) by Lemke's method, or None (a ray: no solution found); raises
    RuntimeError past ``max_pivots`` pivots."""
    k = b.size
    if k == 0 or b.min() >= 0.0:
        return np.zeros(k), 0
    T = np.zeros((k, 2 * k + 2))
    T[:, :k] = np.eye(k)
    T[:, k:2 * k] = -A
    T[:, 2 * k] = -1.0
    T[:, -1] = b
    basis = np.arange(k)
    eps = tol * max(1.0, float(np.max(np.abs(A), initial=0.0)))
    r = int(np.argmin(b))
    _pivot(T, r, 2 * k)
    leaving, basis[r] = int(basis[r]), 2 * k
    for count in range(1, max_pivots + 1):
        entering = leaving + k if leaving < k else leaving - k       # the complement
        col = T[:, entering]
        pos = np.flatnonzero(col > eps)
        if pos.size == 0:
            return None, count
        ratios = T[pos, -1] / col[pos]
        best = ratios.min()
        ties = pos[ratios <= best + 1e-12 * max(1.0, abs(best))]
        z0 = ties[basis[ties] == 2 * k]
        r = int(z0[0]) if z0.size else int(ties[np.argmax(col[ties])])
        _pivot(T, r, entering)
        leaving, basis[r] = int(basis[r]), entering
        if leaving == 2 * k:
            z = np.zeros(k)
            zrows = basis >= k
            z[basis[zrows] - k] = T[zrows, -1]
            return np.maximum(z, 0.0), count
    raise RuntimeError(f"lemke: max_pivots: expected a solution within {max_pivots} pivots, "
                       f"got none (cycling on a degenerate problem; a larger cap or a "
                       f"perturbed problem)")


def lemke(A, b, *, max_pivots=None, tol: Tolerance = 1e-12):
    r"""Solve LCP(A, b), eq. (iv-lcp), by Lemke's complementary pivoting method.

    Parameters
    ----------
    A : (k, k) real matrix (copositive-plus, e.g. positive semidefinite, for a guaranteed end)
    b : (k,) real vector
    max_pivots : cap on the pivots (default 50 (k + 1); at most ``robodyn.impacts.MAX_PIVOTS``)
    tol : relative pivot tolerance

    Returns
    -------
    z : (k,) with :math:`z \ge 0`, :math:`Az + b \ge 0`, :math:`z^T(Az + b) = 0`

    Raises
    ------
    ValueError
        shapes, non-finite numbers, a cap above ``robodyn.impacts.MAX_PIVOTS``; no solution found (a
        secondary ray) or one that fails the complementarity test.
    RuntimeError
        more pivots than ``max_pivots``.

    Examples
    --------
    Two unit masses on a line, the second touching a wall, the first hitting the second at
    speed 1 (plastic): both contacts close, impulses 1 and 1:

    >>> A = np.array([[2.0, -1.0], [-1.0, 1.0]])     # Delassus matrix of (x2 - x1, -x2)
    >>> lemke(A, [-1.0, 0.0]).round(12).tolist()
    [1.0, 1.0]
    """
    fname = "lemke"
    A = np.asarray(_value_checks.real_array(A, f"{fname}: A"), dtype=float)
    if A.ndim != 2 or A.shape[0] != A.shape[1] or A.shape[0] == 0:
        raise _value_checks.error(f"{fname}: A", "a square matrix (k, k), k >= 1", f"shape {A.shape}")
    k = A.shape[0]
    b = np.asarray(_value_checks.real_array(b, f"{fname}: b", shape=(k,),
                                      hint=f"one entry per row of the {k} x {k} matrix A"),
                   dtype=float)
    cap = 50 * (k + 1) if max_pivots is None else _value_checks.size(
        max_pivots, f"{fname}: max_pivots", high=MAX_PIVOTS)
    tol = _value_checks.tolerance(tol, f"{fname}: tol")
    z, _ = _lemke(A, b, min(cap, MAX_PIVOTS), tol)
    if z is None:
        raise _value_checks.refusal(
            ValueError, f"{fname}: A: expected an LCP that Lemke's method solves, got a "
                        f"secondary ray (no solution, or A is not copositive-plus)")
    _verified(A, b, z, fname)
    return z


def _verified(A, b, z, fname, rtol=1e-8):
    """Raise unless z solves LCP(A, b) to rtol (relative to the problem's scale)."""
    w = A @ z + b
    scale = max(1.0, float(np.max(np.abs(b), initial=0.0)), float(np.max(np.abs(A), initial=0.0)) *
                float(np.max(z, initial=0.0)))
    bad = not (np.all(np.isfinite(z)) and np.min(w, initial=0.0) >= -rtol * scale
               and abs(float(z @ w)) <= rtol * scale * max(1.0, float(np.sum(z))))
    if bad:
        raise _value_checks.refusal(
            ValueError, f"{fname}: A: expected a solvable LCP, got an answer that fails "
                        f"the complementarity test (min w = {np.min(w, initial=0.0):.3g}, "
                        f"z.w = {float(z @ w):.3g}; an ill-conditioned or infeasible problem)")
    return w


def _pgs_numpy(W, b, mu, fric, lam, sweeps, tol):
    p = mu.size
    for s in range(1, sweeps + 1):
        change, big = 0.0, 1.0
        for i in range(p):
            x = max(0.0, lam[i] - (b[i] + W[i] @ lam) / W[i, i])
            change, lam[i] = max(change, abs(x - lam[i])), x
            big = max(big, x)
            if fric[i]:
                j = p + i
                y = lam[j] - (b[j] + W[j] @ lam) / W[j, j]
                y = min(max(y, -mu[i] * x), mu[i] * x)
                change, lam[j] = max(change, abs(y - lam[j])), y
                big = max(big, abs(y))
        if not math.isfinite(change):
            return -1
        if change <= tol * big:
            return s
    return -1


def contact_pgs(W, b, mu, fric, sweeps, tol):
    """(Ln, Lt, sweeps used) by projected Gauss--Seidel on the Delassus matrix ``W`` (2p x 2p)
    of the rows (Jn; Jt) with free velocities ``b`` (2p), or (None, None, -1) when it did not
    converge within ``sweeps``. Internal: the caller checks its arguments."""
    p = mu.size
    W = np.ascontiguousarray(W, dtype=float)
    b = np.ascontiguousarray(b, dtype=float)
    lam = np.zeros(2 * p)
    eng = _pgs_engine()
    if eng is None:
        used = _pgs_numpy(W, b, mu, fric, lam, sweeps, tol)
    else:
        used = eng.pgs(W, b, np.ascontiguousarray(mu, dtype=float),
                       np.ascontiguousarray(fric, dtype=np.int32), lam, int(sweeps), float(tol),
                       1.0)
    if used < 0 or not np.all(np.isfinite(lam)):
        return None, None, -1
    return lam[:p], lam[p:], used

from .._boundary import seal as _seal  # noqa: E402 -- the one boundary (issue 28): last, over the finished module
_seal(globals())
