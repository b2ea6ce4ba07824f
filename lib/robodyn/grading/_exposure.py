"""How many guesses find an answer key (private): the measure that decides whether a problem's
key may hold a digest (issue 41 point 5).

A key's digest is one-way, but a key is only as strong as the number of answers an attacker
must try. Short answers built from the problem's own symbols -- ``[0, 0, w, 0, -a*w, 0]``,
``l1*l2*sin(q2)`` -- are few: trying them all against the digest (offline, a PBKDF2 each)
recovers the answer from the student notebook. So before a key is shipped, its answer is
placed in the smallest *box* of candidates that holds it, and the box is counted:

* the **factors** of the problem: each variable, the sine and cosine of each angle and of the
  sum and difference of each pair of angles;
* an **entry** at level 0 is ``0``; at level ``d`` (1 to 5) a coefficient (``±1, ±2, ±½``)
  times a product of at most ``d`` factors; at level 6 the sum of two terms of level 3;
  ``S_d`` counts the entries of level at most ``d``;
* an entry of the answer is matched (within 10 times the key's tolerance at every key point)
  against the levels in order; the box of the answer is the product of ``S_d`` of its
  entries' levels -- the candidates an attacker who knew each entry's level would try, a lower
  bound of any attacker's work in this grammar (and the mistake transforms the self-check
  tries -- sign, ½, 2 -- are among the coefficients);
* an answer with an entry beyond level 6 is not in the grammar: its box is infinite.

A key whose box holds at most :data:`BUDGET` candidates is shipped as form only (its shape;
the self-check says the value is checked when graded), like a constant's.
"""
from __future__ import annotations

import itertools
import math

import numpy as np

BUDGET = 10**6
"""The most candidate answers (digests) a searchable key's box may hold: at most this, and the
key holds the answer's form only."""
COEFFICIENTS = (1.0, -1.0, 2.0, -2.0, 0.5, -0.5)
MAX_DEGREE = 5
"""Monomials of up to this many factors are levels 1 to MAX_DEGREE."""
PAIR_DEGREE = 3
"""The last level: the sum of two terms of up to this many factors each."""


def factors(problem, points):
    """The factors of the problem's answers at the key's points: ``(F, N)`` values."""
    n = len(next(iter(points.values()))) if points else 1
    out = []
    for name in problem.variables:
        out.append(np.asarray(points[name], dtype=float))
    angles = [np.asarray(points[a], dtype=float) for a in problem.angles if a in points]
    for a in angles:
        out += [np.sin(a), np.cos(a)]
    for a, b in itertools.combinations(angles, 2):
        out += [np.sin(a + b), np.cos(a + b), np.sin(a - b), np.cos(a - b)]
    return np.array(out).reshape(len(out), n)


def _monomials(F, degree):
    """Values of the products of exactly ``degree`` factors (with repetition): ``(M, N)``."""
    if degree == 0:
        return np.ones((1, F.shape[1]))
    return np.array([np.prod(F[list(c)], axis=0) for c in
                     itertools.combinations_with_replacement(range(len(F)), degree)])


def _count(f, degree):
    """Monomials of exactly ``degree`` of ``f`` factors."""
    return math.comb(f + degree - 1, degree)


def level_sizes(f):
    """``S_0 .. S_{MAX_DEGREE + 1}``: the entries of level at most d, for ``f`` factors
    (level 1 holds the constants too).

    >>> level_sizes(2)[:3]
    [1, 19, 37]
    """
    c = len(COEFFICIENTS)
    sizes = [1]
    for d in range(1, MAX_DEGREE + 1):
        sizes.append(1 + c * sum(_count(f, k) for k in range(d + 1)))
    terms = c * sum(_count(f, k) for k in range(PAIR_DEGREE + 1))
    sizes.append(sizes[-1] + terms * (terms - 1) // 2)
    return sizes


def _pair(T, r, tol):
    """Is ``r`` the sum of two distinct rows of ``T`` (within ``tol`` at every point)?
    Sorted on the first point, so the cost is O(T log T), not O(T^2)."""
    order = np.argsort(T[:, 0])
    first = T[order, 0]
    lo = np.searchsorted(first, r[0] - T[:, 0] - tol, side="left")
    hi = np.searchsorted(first, r[0] - T[:, 0] + tol, side="right")
    for i in np.nonzero(hi > lo)[0]:
        js = order[lo[i]:hi[i]]
        js = js[js != i]
        if len(js) and np.any(np.all(np.abs(T[i] + T[js] - r) <= tol, axis=1)):
            return True
    return False


def _entry_level(r, terms_by_level, tol):
    """The level of one entry's values ``r`` (N,), or None beyond the last level."""
    if np.all(np.abs(r) <= tol):
        return 0
    for level, T in enumerate(terms_by_level, 1):
        if np.any(np.all(np.abs(T - r) <= tol, axis=1)):
            return level
    if _pair(terms_by_level[PAIR_DEGREE - 1], r, tol):
        return MAX_DEGREE + 1
    return None


def box(R, problem, points, tol):
    """The number of candidates in the smallest box holding the answer whose values at the
    key's ``points`` are ``R`` (N, *shape), or ``math.inf`` when it is not in the grammar.

    >>> from robodyn.answers import Problem
    >>> p = Problem("p", "x", variables={"a": (0.3, 2.0), "w": (-3.0, 3.0)})
    >>> pts = {"a": np.array([0.5, 1.5, 1.0]), "w": np.array([1.0, -2.0, 0.5])}
    >>> box(np.stack([0 * pts["a"], pts["w"], -pts["a"] * pts["w"]], axis=1), p, pts, 1e-9)
    703
    """
    F = factors(problem, points)
    N = F.shape[1]
    R = np.real(np.asarray(R)).astype(float).reshape(N, -1)
    tol = 10.0 * float(tol)
    c = np.array(COEFFICIENTS)[:, None, None]
    terms, upto = [], np.zeros((0, N))
    for d in range(MAX_DEGREE + 1):
        upto = np.concatenate([upto, (c * _monomials(F, d)[None]).reshape(-1, N)])
        if d >= 1:
            terms.append(upto)
    sizes = level_sizes(len(F))
    total = 1
    for e in range(R.shape[1]):
        level = _entry_level(R[:, e], terms, tol)
        if level is None:
            return math.inf
        total *= sizes[level]
        if total > 10**30:
            return math.inf
    return total
