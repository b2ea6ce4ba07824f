r"""The symbolic derivation engine behind :mod:`robodyn.lagrange` (private; no chapter imports it).

It derives the mass matrix M(q), its derivatives, the Christoffel symbols and the first moments
of mass of a serial chain as *real trigonometric polynomials*

.. math:: \sum c\,\cos(e\cdot q)\,q^{d}\,p^{a} \;+\; \sum c\,\sin(e\cdot q)\,q^{d}\,p^{a},

with integer frequency vectors e (revolute and helical joints), degrees d (prismatic and
helical joints), monomials :math:`p^a` in the chain's symbolic parameters (lengths, masses,
and any irrational constant such as :math:`\sqrt2`, kept as a generator) and coefficients c
that are exact rationals (gmpy2 ``mpq``) when every number of the chain is a short decimal or
a small fraction, and floats otherwise (random chains: exact rationals of their float data
grow to hundreds of digits). ``cos(q1 + ... + q7)`` stays one term.

The ring. The polynomials live in :class:`Ring` (:mod:`robodyn._trig_ring`), where a
product of two terms is integer arithmetic on packed keys; no sympy object is built until
the end.


The nested form. Expanded, the mass matrix of a chain with many non-parallel revolute joints
has a number of terms that grows like 5^n. :class:`NestedDerivation` runs the same recursion on
a :class:`Tape`, a straight-line program of small steps (linear combinations and products of
earlier steps, cosines and sines of single joints, parameters) in which identical steps are
shared, differentiates it forward for the Christoffel symbols, and hands out every quantity
used more than once as a named intermediate Symbol ``w1, w2, ...`` with its definition.
:func:`choose` picks the form (``"auto"``: expanded unless a product outgrows
:data:`BUDGET` terms).

Entry points (for :mod:`robodyn.lagrange` now, and for Kane's method and the later parts):

* :func:`derivation` ``(chain)`` -- the cached expanded :class:`Derivation` of a chain:
  ``.mass_matrix(q)``, ``.coriolis(q, qd)``, ``.christoffel(q)`` (first kind, eq. 5.13),
  ``.potential(q, g)``, ``.gravity(q, g)``, each returning sympy objects in the Symbols you
  pass; ``.M``, ``.P`` (first moment of mass), ``.Hrel`` (link poses relative to the previous
  link), ``.A`` (joint screws in the link frames) as raw polynomials with ``.ring``
  (:class:`Ring`: ``add``, ``mul``, ``diff``, ``matmul``, ``to_sympy``) for quantities of your
  own, e.g. partial velocities.
* :func:`choose` ``(chain, form)`` -- the expanded or the :class:`NestedDerivation`
  (``.equations(q, qd, g)`` gives M, C, G and the intermediates; ``.tape`` with ``dot``,
  ``mul``, ``diff`` and ``to_sympy`` for new quantities on the same program).
* :func:`compile_nested` / :func:`nested_source` -- compiled numeric twins of a nested form
  (the intermediates are the common subexpressions; no sympy ``cse``).
* :func:`op_count` ``(matrix)`` and :func:`code_op_count` ``(source)`` -- the sizes the
  benchmark reports.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import sympy as sp
from mpmath.libmp import from_float as _from_float
from sympy.core.mul import _mulsort

from .. import _value_checks
from .._value_checks import _exact
from .._trig_ring import (_FB, _FIELD, Ring, TrigPoly, _add, _mpq, _nice, _nice_expr, _times,
                         _TooBig, canonical)


__all__ = ["Ring", "TrigPoly", "Derivation", "derivation", "canonical", "Tape", "NestedDerivation",
           "choose", "compile_nested", "nested_source", "op_count", "code_op_count", "BUDGET"]

# --------------------------------------------------------------------------
# constants of the chain as polynomials in its parameters
# --------------------------------------------------------------------------

def _constants(chain):
    """The chain's sympy data (screws, home, link homes and inertias), every float-born rational
    made short where possible; and whether all of them are short (exact arithmetic)."""
    from .._value_checks import to_sympy as _S
    nice = True

    def conv(X):
        nonlocal nice
        M = _S(X)
        out = M.copy()
        for i in range(M.rows):
            for j in range(M.cols):
                out[i, j], ok = _nice_expr(M[i, j])
                nice = nice and ok
        return out

    data = dict(screws=conv(chain.screws), home=conv(chain.home),
                link_homes=[conv(L) for L in chain.link_homes],
                link_inertias=[conv(G) for G in chain.link_inertias])
    return data, nice


def _negligible(x):
    """x is zero, or a number below 1e-12 (round-off of a float chain's unit axes)."""
    x = sp.expand(x)
    if x == 0:
        return True
    return not x.free_symbols and abs(float(x)) < 1e-12


def _inv_h(H):
    R, p = H[:3, :3], H[:3, 3]
    Hi = sp.eye(4)
    Hi[:3, :3] = R.T
    Hi[:3, 3] = -(R.T * p)
    return Hi


def _ad_of(H):
    R, p = H[:3, :3], H[:3, 3]
    P = sp.Matrix([[0, -p[2], p[1]], [p[2], 0, -p[0]], [-p[1], p[0], 0]])
    A = sp.zeros(6, 6)
    A[:3, :3] = R
    A[3:, 3:] = R
    A[3:, :3] = P * R
    return A


class _Converter:
    """sympy constants -> TrigPoly constants of a ring (generators found once for all of them)."""

    def __init__(self, exprs):
        exprs = [sp.expand(e) for e in exprs]
        nonzero = [e for e in exprs if e != 0]
        self.gens = []
        if any(e.free_symbols or not e.is_Rational for e in nonzero):
            _, info = sp.parallel_poly_from_expr(nonzero, domain=sp.QQ) if nonzero else (None, {})
            self.gens = list(info["gens"]) if nonzero else []
        self.index = {g: i for i, g in enumerate(self.gens)}
        self._memo = {}

    def terms(self, e, lin_count, exact):
        key = (e, lin_count, exact)
        out = self._memo.get(key)
        if out is None:
            out = self._memo[key] = self._terms(e, lin_count, exact)
        return out

    def _terms(self, e, lin_count, exact):
        if e == 0:
            return {}
        e = sp.expand(e)
        if e == 0:
            return {}
        num = _mpq if exact else float
        if not self.gens:
            r = sp.Rational(e)
            return {0: num(int(r.p)) / int(r.q) if exact else float(r)}
        out = {}
        for mon, c in sp.Poly(e, *self.gens, domain=sp.QQ).terms():
            m = 0
            for i, d in enumerate(mon):
                if d >= _FIELD:
                    raise _value_checks.refusal(
                        ValueError, "robodyn: a parameter's power exceeds the engine's limit 255")
                m |= d << (_FB * (lin_count + i))
            out[m] = _mpq(int(c.numerator), int(c.denominator)) if exact else \
                float(Fraction(int(c.numerator), int(c.denominator)))
        return out


def _sympy_constants(chain, speeds, budget):
    """The constants of a chain for :class:`Derivation`, computed with sympy matrices: the
    general route (any sympy constants, e.g. irrational numbers, which become generators of
    the ring). Returns (ring, parameters, C, A, pieces, inertias): the relative home poses C_i,
    the joint screws A_i in the link frames (6 x 1), the pieces of the joint exponentials (see
    ``Derivation._joint_exp``) and the spatial inertias, as polynomials of the ring."""
    n = chain.n
    data, exact = _constants(chain)
    screws = data["screws"]
    # joint kinds: rotation part nonzero -> cos/sin; translation along the axis -> powers
    trig, lin = [], []
    Ai_list, consts = [], []
    prev = sp.eye(4)
    for i in range(n):
        L = data["link_homes"][i]
        Ai = (_ad_of(_inv_h(L)) * screws[:, i]).applyfunc(sp.expand)
        w, v = Ai[:3, :], Ai[3:, :]
        rotating = any(not _negligible(x) for x in w)
        if rotating:
            trig.append(i)
            if not _negligible((w.T * v)[0]):         # helical: a pitch along the axis
                lin.append(i)
        else:
            lin.append(i)
        Ai_list.append(Ai)
        consts.append(_inv_h(prev) * L)
        prev = L
    # the joint exponentials need W, W^2, W v, W^2 v of each screw (all polynomial)
    pieces = []
    for Ai in Ai_list:
        w, v = Ai[:3, 0], Ai[3:, 0]
        W = sp.Matrix([[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]])
        W2v = (W * W * v).applyfunc(sp.expand)
        pieces.append((W, (W * W).applyfunc(sp.expand), (W * v).applyfunc(sp.expand), W2v,
                       (v + W2v).applyfunc(sp.expand), v))
    everything = []
    for C in consts:
        everything += list(C)
    for G in data["link_inertias"]:
        everything += list(G)
    for Ai, piece in zip(Ai_list, pieces):
        everything += list(Ai)
        for X in piece:
            everything += list(X)
    conv = _Converter(everything)
    ring = Ring(n, trig, lin, conv.gens + speeds, exact, budget)
    nl = len(lin)

    def cmat(X):
        return [[ring.from_terms(conv.terms(X[i, j], nl, exact)) for j in range(X.cols)]
                for i in range(X.rows)]

    def cvec(X):
        return [row[0] for row in cmat(X)]

    return (ring, list(conv.gens), [cmat(C) for C in consts], [cmat(A) for A in Ai_list],
            [(cmat(W), cmat(W2), cvec(Wv), cvec(W2v), cvec(vW2v), cvec(v))
             for W, W2, Wv, W2v, vW2v, v in pieces],
            [cmat(G) for G in data["link_inertias"]])


class _NotPlain(Exception):
    """A chain constant that the fast route does not take (an irrational number, a function)."""


def _plain_terms(e, gidx, num):
    """{packed monomial: coefficient} of an expanded polynomial e with rational coefficients
    in the Symbols of ``gidx`` (their positions); _NotPlain for anything else."""
    out = {}
    for term in sp.Add.make_args(e):
        c, rest = term.as_coeff_Mul()
        if not c.is_Rational:
            raise _NotPlain
        m = 0
        for f in sp.Mul.make_args(rest):
            base, d = f.as_base_exp()
            if base not in gidx or not d.is_Integer or d < 1:
                raise _NotPlain
            if d >= _FIELD:
                raise _value_checks.refusal(
                    ValueError, "robodyn: a parameter's power exceeds the engine's limit 255")
            m += int(d) << (_FB * gidx[base])
        out[m] = out.get(m, 0) + num(Fraction(int(c.p), int(c.q)))
    return out


def _ring_constants(chain, speeds, budget):
    """The constants of a chain for :class:`Derivation` computed in the ring itself (fast: no
    sympy matrices), when every number is a float or a rational and every symbol a plain Symbol
    entering polynomially; None otherwise (then :func:`_sympy_constants` is used). Same
    results as :func:`_sympy_constants`."""
    n = chain.n
    mats = [np.asarray(chain.screws)] + [np.asarray(L) for L in chain.link_homes] + \
        [np.asarray(G) for G in chain.link_inertias]
    memo, gens, nice = {}, set(), True
    for X in mats:                                   # pass 1: symbols, and are numbers short
        for x in X.flat:
            if x in memo:
                continue
            if isinstance(x, sp.Basic):
                e = _exact(x) if x.has(sp.Float) else x
                e, ok = _nice_expr(e)
                free = e.free_symbols
                if not all(type(s) is sp.Symbol for s in free):
                    return None
                if not free and not e.is_Rational:
                    return None                      # sqrt(2), pi: the general route
                gens |= free
                memo[x] = e
            else:
                xf = float(x)
                if not np.isfinite(xf):
                    return None
                fr = _nice(xf) if xf else Fraction(0)
                ok = fr is not None
                memo[x] = fr if ok else xf
            nice = nice and ok
    exact = nice
    gens = sorted(gens, key=str)
    gidx = {g: i for i, g in enumerate(gens)}
    num = (lambda fr: _mpq(fr.numerator, fr.denominator)) if exact else float
    pre = Ring(n, [], [], gens, exact)
    terms = {}

    def P(x):
        p = terms.get(x)
        if p is None:
            e = memo[x]
            if isinstance(e, sp.Basic):
                out = {}
                if e.free_symbols:
                    try:
                        out = _plain_terms(e, gidx, num)
                    except _NotPlain:                  # not expanded, or not polynomial
                        out = _plain_terms(sp.expand(e), gidx, num)
                elif e != 0:
                    out[0] = num(Fraction(int(e.p), int(e.q)))
                p = pre.from_terms(out)
            else:
                p = pre.const(num(e) if exact else e)
            terms[x] = p
        return p

    try:
        S = [[P(x) for x in row] for row in mats[0]]
        Ls = [[[P(x) for x in row] for row in L] for L in mats[1:1 + n]]
        Gs = [[[P(x) for x in row] for row in G] for G in mats[1 + n:]]
    except _NotPlain:
        return None

    def negligible(p):
        return not p or (not p.s and list(p.c) == [0] and abs(float(p.c[0])) < 1e-12)

    trig, lin, As, Cs = [], [], [], []
    prev = None
    for i in range(n):
        A = pre.matvec(_ad_poly(pre, _inv_poly(pre, Ls[i])), [S[r][i] for r in range(6)])
        w, v = A[:3], A[3:]
        if any(not negligible(x) for x in w):
            trig.append(i)
            if not negligible(pre.dot(w, v)):          # helical: a pitch along the axis
                lin.append(i)
        else:
            lin.append(i)
        As.append(A)
        Cs.append(Ls[i] if prev is None else pre.matmul(_inv_poly(pre, prev), Ls[i]))
        prev = Ls[i]
    ring = Ring(n, trig, lin, gens + speeds, exact, budget)
    shift = _FB * len(lin)                             # the constants' keys, moved past lin

    def re(p):
        return TrigPoly({k << shift: c for k, c in p.c.items()}) if shift else p

    def rm(X):
        return [[re(p) for p in row] for row in X]

    pieces = []
    for A in As:
        w, v = A[:3], A[3:]
        z = pre.zero
        W = [[z, pre.neg(w[2]), w[1]], [w[2], z, pre.neg(w[0])], [pre.neg(w[1]), w[0], z]]
        W2 = pre.matmul(W, W)
        W2v = pre.matvec(W2, v)
        pieces.append((rm(W), rm(W2), [re(x) for x in pre.matvec(W, v)], [re(x) for x in W2v],
                       [re(pre.add(x, y)) for x, y in zip(v, W2v)], [re(x) for x in v]))
    return (ring, gens, [rm(C) for C in Cs], [[[re(x)] for x in A] for A in As], pieces,
            [rm(G) for G in Gs])


class Derivation:
    """M, dM/dq and the first moments of mass of a chain as :class:`TrigPoly`, by the
    composite-rigid-body recursion in the link frames (each relative pose a function of one
    joint). Made by :func:`derivation`; attributes ``ring``, ``M`` (n x n lists), ``P`` (the
    three space-frame components of :math:`\\sum_i m_i c_i`, the first moment of mass),
    ``Hrel`` (pose of link i in link i-1 as 4 x 4 lists), ``A`` (joint screws in the link
    frames)."""

    def __init__(self, chain, budget=None, speeds=False):
        n = chain.n
        # with ``speeds`` the ring has n more generators after the parameters, placeholders of
        # the generalized speeds u_1..u_n (Kane's method: velocities are linear in them)
        self.speeds = [sp.Dummy(f"u{k + 1}") for k in range(n)] if speeds else []
        consts = _ring_constants(chain, self.speeds, budget) or \
            _sympy_constants(chain, self.speeds, budget)
        ring, self.params, C, A, pieces, inertias = consts
        self.ring, self.A, self.inertias = ring, A, inertias
        Y, Hrel = [], []
        for i in range(n):
            H = ring.matmul(C[i], self._joint_exp(ring, pieces[i], i))
            Hrel.append(H)
            Y.append(_ad_poly(ring, _inv_poly(ring, H)))
        self.Y, self.Hrel = Y, Hrel
        M = [[ring.zero] * n for _ in range(n)]
        acc = None
        for i in reversed(range(n)):
            Ic = inertias[i] if acc is None else ring.matadd(inertias[i], acc)
            F = ring.matmul(Ic, A[i])
            M[i][i] = ring.matmul(ring.T(A[i]), F)[0][0]
            for j in reversed(range(i)):
                F = ring.matmul(ring.T(Y[j + 1]), F)
                M[j][i] = M[i][j] = ring.matmul(ring.T(A[j]), F)[0][0]
            if i > 0:
                acc = ring.matmul(ring.T(Y[i]), ring.matmul(Ic, Y[i]))
        self.M = M
        # first moment of mass sum_i (m_i p_i + R_i h_i), h_i = m_i c_i the link's first moment
        # in its own frame, read off its spatial inertia: G[:3, 3:] = m [c] in the (omega, v)
        # ordering, so h = (G[2, 4], G[0, 5], G[1, 3]) and m = G[3, 3]
        T, self.P = None, [ring.zero] * 3
        for i in range(n):
            T = Hrel[i] if T is None else ring.matmul(T, Hrel[i])
            G = inertias[i]
            local = [G[2][4], G[0][5], G[1][3], G[3][3]]
            self.P = [ring.sum([self.P[r]] + [ring.mul(T[r][c], local[c]) for c in range(4)])
                      for r in range(3)]
        self._dM = None

    @staticmethod
    def _joint_exp(ring, piece, k):
        """exp([A] q_k) of a screw A as a 4 x 4 matrix of polynomials (Rodrigues); ``piece`` holds
        W = [w], W^2, W v, W^2 v and v + W^2 v of the screw A = (w, v) as polynomials."""
        W, W2, Wv, W2v, vW2v, v = piece
        one = ring.const(ring.one)
        H = [[ring.zero] * 4 for _ in range(4)]
        H[3][3] = one
        if k in ring._trig_digit:
            cos, sin = ring.cos_q(k), ring.sin_q(k)
            omc = ring.add(one, cos, -1)
            qk = ring.q_lin(k) if k in ring._lin_shift else None
            for r in range(3):
                for c in range(3):
                    e = ring.add(ring.mul(W[r][c], sin), ring.mul(W2[r][c], omc))
                    H[r][c] = ring.add(one, e) if r == c else e
            # translation: (I q + (1 - cos) W + (q - sin) W^2) v; the q terms only for a pitch
            for r in range(3):
                e = ring.add(ring.mul(Wv[r], omc), ring.mul(W2v[r], sin), -1)
                if qk is not None:
                    e = ring.add(e, ring.mul(vW2v[r], qk))
                H[r][3] = e
        else:
            qk = ring.q_lin(k)
            for r in range(3):
                H[r][r] = one
                H[r][3] = ring.mul(v[r], qk)
        return H

    # ---- results as sympy ------------------------------------------------------
    def mass_matrix(self, q):
        n, ring = self.ring.n, self.ring
        out = sp.zeros(n, n)
        for i in range(n):
            for j in range(i + 1):
                out[i, j] = out[j, i] = ring.to_sympy(self.M[i][j], q)
        return out

    def dM(self):
        """dM[i][j][k] = d M_ij / d q_k as polynomials (computed once)."""
        if self._dM is None:
            n, ring = self.ring.n, self.ring
            d = [[None] * n for _ in range(n)]
            for i in range(n):
                for j in range(i + 1):
                    d[i][j] = d[j][i] = [ring.diff(self.M[i][j], k) for k in range(n)]
            self._dM = d
        return self._dM

    def christoffel_polys(self):
        """{(i, j, k) with j <= k: Gamma_ijk} of the first kind (5.13), as polynomials."""
        ring, n, dM = self.ring, self.ring.n, self.dM()
        out = {}
        for i in range(n):
            for j in range(n):
                for k in range(j, n):
                    g = ring.add(ring.add(dM[i][j][k], dM[i][k][j]), dM[j][k][i], -1)
                    out[i, j, k] = ring.scale(g, ring.half)
        return out

    def christoffel(self, q):
        """The Christoffel symbols of the first kind (5.13), an (n, n, n) sympy Array."""
        n, ring = self.ring.n, self.ring
        polys = self.christoffel_polys()
        sym = {key: ring.to_sympy(p, q) for key, p in polys.items()}
        return sp.ImmutableDenseNDimArray(
            [[[sym[i, min(j, k), max(j, k)] for k in range(n)] for j in range(n)]
             for i in range(n)], (n, n, n))

    def coriolis(self, q, qd):
        """C_ij = sum_k Gamma_ijk qd_k, eq. (5.13)-(5.14)."""
        n, ring = self.ring.n, self.ring
        polys = self.christoffel_polys()
        sym = {}
        C = sp.zeros(n, n)
        for i in range(n):
            for j in range(n):
                terms = []
                for k in range(n):
                    key = (i, min(j, k), max(j, k))
                    if key not in sym:
                        sym[key] = ring.to_sympy(polys[key], q) if polys[key] else sp.S.Zero
                    if sym[key] != 0:
                        terms.append(sym[key] * qd[k])
                C[i, j] = sp.Add(*terms)
        return C

    def potential(self, q, g):
        ring = self.ring
        return sp.expand(-sp.Add(*[g[r] * ring.to_sympy(self.P[r], q)
                                   for r in range(3) if g[r] != 0]))

    def gravity(self, q, g):
        ring = self.ring
        return sp.Matrix([sp.expand(-sp.Add(*[g[r] * ring.to_sympy(ring.diff(self.P[r], k), q)
                                              for r in range(3) if g[r] != 0]))
                          for k in range(ring.n)])


def _ad_poly(ring, H):
    """Ad of a 4x4 polynomial pose."""
    R = [row[:3] for row in H[:3]]
    p = [H[r][3] for r in range(3)]
    P = [[ring.zero, ring.neg(p[2]), p[1]], [p[2], ring.zero, ring.neg(p[0])],
         [ring.neg(p[1]), p[0], ring.zero]]
    PR = ring.matmul(P, R)
    A = [[ring.zero] * 6 for _ in range(6)]
    for r in range(3):
        for c in range(3):
            A[r][c] = R[r][c]
            A[r + 3][c + 3] = R[r][c]
            A[r + 3][c] = PR[r][c]
    return A


def _inv_poly(ring, H):
    Rt = ring.T([row[:3] for row in H[:3]])
    p = [[H[r][3]] for r in range(3)]
    mp = ring.matmul(Rt, p)
    Hi = [[ring.zero] * 4 for _ in range(4)]
    for r in range(3):
        for c in range(3):
            Hi[r][c] = Rt[r][c]
        Hi[r][3] = ring.neg(mp[r][0])
    Hi[3][3] = ring.const(ring.one)
    return Hi


def derivation(chain, speeds=False):
    """The :class:`Derivation` of a chain, made once and cached on the (immutable) chain; with
    ``speeds`` its ring also has the generalized speeds as generators (``.speeds``, for Kane's
    method).

    >>> import sympy as sp
    >>> from robodyn.models import planar_rr
    >>> derivation(planar_rr()).mass_matrix(sp.symbols('q1 q2'))[0, 1]
    cos(q2)/2 + 1/3
    """
    key = ("lagrange", "derivation") if not speeds else ("kane", "derivation")
    if key not in chain._cache:
        chain._cache[key] = Derivation(chain, speeds=bool(speeds))
    return chain._cache[key]


def op_count(X):
    """Operation count of a sympy expression or matrix (``count_ops`` summed over entries)."""
    if isinstance(X, sp.MatrixBase) or isinstance(X, sp.NDimArray):
        return int(sum(sp.count_ops(e) for e in X))
    return int(sp.count_ops(X))


# --------------------------------------------------------------------------
# the nested form: a straight-line program with named intermediate quantities
# --------------------------------------------------------------------------
#
# Expanded into cosines and sines, the mass matrix of a chain with many non-parallel revolute
# joints has a number of terms that grows like 5^n (every entry of R^T I R doubles the
# frequencies); a random 7-joint chain gives hundreds of thousands. The recursion itself is
# small: each step combines a 6 x 6 matrix with a one-joint transform. The tape records that
# recursion as a program of small steps (linear combinations and products), with identical
# steps shared (hash-consed), and differentiates it forward for the Christoffel symbols. It
# hands out each quantity used more than once as a named intermediate Symbol with its
# definition.

def _float(v):
    """``sp.Float(v)`` of a Python number, built directly from its binary value (53 bits, the
    same object sympy makes, without its general parsing: the nested form makes thousands)."""
    return sp.Float._new(_from_float(float(v), 53, "n"), 53, zero=False)


def _product(a, b):
    """``sp.Mul(a, b)`` of two factors, built as sympy builds it when nothing combines (no
    numbers, powers or repeated factors: the intermediates, cosines and sums of the nested
    form), without its general flattening; else ``sp.Mul``."""
    factors = sp.Mul.make_args(a) + sp.Mul.make_args(b)
    if any(f.is_Number or f.is_Pow or not f.is_commutative for f in factors) or \
            len(set(factors)) < len(factors):
        return sp.Mul(a, b)
    factors = list(factors)
    _mulsort(factors)
    return sp.Mul._from_args(tuple(factors), True)


class Tape:
    """A straight-line program. Operands are numbers (exact ``mpq`` or float) or node
    references ``("w", i)``; node ``i`` is ``defs[i]``: ``("cos", k)``, ``("sin", k)``,
    ``("q", k)`` (joint k), ``("p", expr)`` (a parameter), ``("lin", c0, ((c, i), ...))``
    (c0 + sum c node_i) or ``("mul", i, j)``."""

    def __init__(self, exact):
        self.exact = exact
        self.num = _mpq if exact else float
        self.defs, self.index, self.deps = [], {}, []
        self._d = {}

    def node(self, d, deps):
        i = self.index.get(d)
        if i is None:
            i = self.index[d] = len(self.defs)
            self.defs.append(d)
            self.deps.append(deps)
        return ("w", i)

    def leaf(self, kind, k):
        return self.node((kind, k), (1 << k) if kind in ("cos", "sin", "q") else 0)

    def dot(self, pairs, c0=0):
        """c0 + sum a * b over pairs of operands, as one operand."""
        terms = {}
        for a, b in pairs:
            ta, tb = type(a) is tuple, type(b) is tuple
            if not ta and not tb:
                c0 = c0 + a * b
            elif not ta:
                if a:
                    terms[b[1]] = terms.get(b[1], 0) + a
            elif not tb:
                if b:
                    terms[a[1]] = terms.get(a[1], 0) + b
            else:
                i, j = min(a[1], b[1]), max(a[1], b[1])
                m = self.node(("mul", i, j), self.deps[i] | self.deps[j])[1]
                terms[m] = terms.get(m, 0) + 1
        return self.lin(terms, c0)

    def lin(self, terms, c0=0):
        items = tuple(sorted((i, c) for i, c in terms.items() if c))
        if not items:
            return c0
        if len(items) == 1 and not c0 and items[0][1] == 1:
            return ("w", items[0][0])
        deps = 0
        for i, _ in items:
            deps |= self.deps[i]
        return self.node(("lin", c0, items), deps)

    def add(self, a, b, sign=1):
        return self.dot([(a, 1), (b, sign)])

    def mul(self, a, b):
        return self.dot([(a, b)])

    # ---- forward derivative ----------------------------------------------------
    def diff(self, a, k):
        """d a / d q_k as an operand."""
        if type(a) is not tuple:
            return 0
        i = a[1]
        if not (self.deps[i] >> k) & 1:
            return 0
        key = (i, k)
        r = self._d.get(key)
        if r is not None:
            return r
        d = self.defs[i]
        kind = d[0]
        if kind == "cos":
            r = self.dot([(self.leaf("sin", k), -1)])
        elif kind == "sin":
            r = self.leaf("cos", k)
        elif kind == "q":
            r = 1
        elif kind == "lin":
            r = self.dot([(self.diff(("w", j), k), c) for j, c in d[2]])
        else:                                       # mul
            x, y = ("w", d[1]), ("w", d[2])
            r = self.dot([(self.diff(x, k), y), (x, self.diff(y, k))])
        self._d[key] = r
        return r

    # ---- constants ---------------------------------------------------------------
    def from_sympy(self, e):
        """A constant sympy expression (numbers, parameters) as an operand."""
        e = sp.sympify(e, strict=True)
        if e.is_Rational:
            return self.num(int(e.p)) / int(e.q) if self.exact else float(e)
        if e.is_Add:
            return self.dot([(self.from_sympy(a), 1) for a in e.args])
        if e.is_Mul:
            out = 1
            for a in e.args:
                out = self.mul(out, self.from_sympy(a))
            return out
        if e.is_Pow and e.exp.is_Integer and e.exp > 0:
            base, out = self.from_sympy(e.base), 1
            for _ in range(int(e.exp)):
                out = self.mul(out, base)
            return out
        return self.node(("p", e), 0)

    # ---- matrices ------------------------------------------------------------------
    def matmul(self, A, B):
        return [[self.dot([(A[i][k], B[k][j]) for k in range(len(B))])
                 for j in range(len(B[0]))] for i in range(len(A))]

    def matadd(self, A, B):
        return [[self.add(a, b) for a, b in zip(ra, rb)] for ra, rb in zip(A, B)]

    # ---- to sympy ------------------------------------------------------------------
    def to_sympy(self, outputs, q, prefix="w"):
        """sympy expressions of the operands ``outputs`` (a flat list), and the intermediates
        they need: ``(exprs, [(Symbol, definition), ...])`` in dependency order. A node used
        once is written into its user; joints' cosines and sines and parameters always are."""
        uses = {}
        stack = [o[1] for o in outputs if type(o) is tuple]
        seen = set()
        for o in outputs:
            if type(o) is tuple:
                uses[o[1]] = uses.get(o[1], 0) + 1
        while stack:
            i = stack.pop()
            if i in seen:
                continue
            seen.add(i)
            d = self.defs[i]
            kids = [j for j, _ in d[2]] if d[0] == "lin" else [d[1], d[2]] if d[0] == "mul" \
                else []
            for j in kids:
                uses[j] = uses.get(j, 0) + 1
                stack.append(j)
        num = (lambda v: sp.Rational(int(v.numerator), int(v.denominator))) if self.exact \
            else _float
        expr, inter, count = {}, [], 0
        pairs = {}                # inlined linear combinations: node -> (c0, {expr: coef})
        for i in sorted(seen):                      # children before parents
            d = self.defs[i]
            kind = d[0]
            if kind == "cos":
                e = sp.cos(q[d[1]])
            elif kind == "sin":
                e = sp.sin(q[d[1]])
            elif kind == "q":
                e = q[d[1]]
            elif kind == "p":
                e = d[1]
            elif kind == "mul":
                e = _product(expr[d[1]], expr[d[2]])
            else:                                   # flatten inlined sums into this one
                c0, acc = d[1], {}
                for j, c in d[2]:
                    if j in pairs:
                        k0, kids = pairs[j]
                        c0 = c0 + c * k0
                        for x, cx in kids.items():
                            acc[x] = acc.get(x, 0) + c * cx
                    else:
                        k, x = expr[j].as_coeff_Mul()
                        c = c * (_mpq(int(k.p), int(k.q)) if self.exact else float(k))
                        acc[x] = acc.get(x, 0) + c
                terms = [_times(num(c), x) for x, c in acc.items() if c]
                e = _add(([num(c0)] if c0 else []) + terms)
                if uses.get(i, 0) <= 1:
                    pairs[i] = (c0, acc)
            if kind in ("lin", "mul") and uses.get(i, 0) > 1:
                count += 1
                s = sp.Symbol(f"{prefix}{count}")
                inter.append((s, e))
                e = s
                pairs.pop(i, None)
            expr[i] = e
        out = [expr[o[1]] if type(o) is tuple else num(o) if o else sp.S.Zero for o in outputs]
        return out, inter


class NestedDerivation:
    """M, the Christoffel symbols and the first moment of mass of a chain on a :class:`Tape`
    (the same composite-rigid-body recursion as :class:`Derivation`, nothing expanded)."""

    def __init__(self, chain, exact=None):
        n = self.n = chain.n
        data, nice = _constants(chain)
        tape = self.tape = Tape(nice if exact is None else exact)
        screws = data["screws"]
        C = tape.from_sympy

        def cmat(A):
            return [[C(A[i, j]) for j in range(A.cols)] for i in range(A.rows)]

        A, Y, prev = [], [], sp.eye(4)
        Hrel = []
        for i in range(n):
            L = data["link_homes"][i]
            Ai = (_ad_of(_inv_h(L)) * screws[:, i]).applyfunc(sp.expand)
            H = tape.matmul(cmat(_inv_h(prev) * L), self._joint_exp(tape, Ai, i))
            A.append(cmat(Ai))
            Hrel.append(H)
            Y.append(self._ad_inv(tape, H))
            prev = L
        inertias = [cmat(G) for G in data["link_inertias"]]
        # kept for Kane's recursion on the same tape (robodyn.kane): joint screws in the link
        # frames (6 x 1), twist transforms Y_i = Ad(H_i^-1) and spatial inertias (6 x 6)
        self.A, self.Y, self.inertias = A, Y, inertias
        M = [[0] * n for _ in range(n)]
        acc = None
        for i in reversed(range(n)):
            Ic = inertias[i]
            if acc is not None:
                Ic = tape.matadd(Ic, acc)
            F = tape.matmul(Ic, A[i])
            M[i][i] = tape.matmul(list(map(list, zip(*A[i]))), F)[0][0]
            for j in reversed(range(i)):
                F = tape.matmul(list(map(list, zip(*Y[j + 1]))), F)
                M[j][i] = M[i][j] = tape.matmul(list(map(list, zip(*A[j]))), F)[0][0]
            if i > 0:
                acc = tape.matmul(list(map(list, zip(*Y[i]))), tape.matmul(Ic, Y[i]))
        self.M = M
        T, P = None, [0, 0, 0]
        for i in range(n):
            T = Hrel[i] if T is None else tape.matmul(T, Hrel[i])
            G = data["link_inertias"][i]
            hx = G[:3, 3:]
            local = [C(hx[2, 1]), C(hx[0, 2]), C(hx[1, 0]), C(G[3, 3])]
            P = [tape.dot([(P[r], 1)] + [(T[r][c], local[c]) for c in range(4)])
                 for r in range(3)]
        self.P = P

    @staticmethod
    def _joint_exp(tape, Ai, k):
        w, v = Ai[:3, 0], Ai[3:, 0]
        C = tape.from_sympy
        H = [[0] * 4 for _ in range(4)]
        H[3][3] = 1
        if any(not _negligible(x) for x in w):
            W = sp.Matrix([[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]])
            W2 = (W * W).applyfunc(sp.expand)
            cos, sin = tape.leaf("cos", k), tape.leaf("sin", k)
            omc = tape.add(1, cos, -1)
            for r in range(3):
                for c in range(3):
                    H[r][c] = tape.dot([(C(W[r, c]), sin), (C(W2[r, c]), omc)],
                                       1 if r == c else 0)
            Wv, W2v = (W * v).applyfunc(sp.expand), (W2 * v).applyfunc(sp.expand)
            pitch = not _negligible((w.T * v)[0])
            qk = tape.leaf("q", k)
            for r in range(3):
                pairs = [(C(Wv[r]), omc), (C(-W2v[r]), sin)]
                if pitch:
                    pairs.append((C(sp.expand(v[r] + W2v[r])), qk))
                H[r][3] = tape.dot(pairs)
        else:
            qk = tape.leaf("q", k)
            for r in range(3):
                H[r][r] = 1
                H[r][3] = tape.mul(C(v[r]), qk)
        return H

    @staticmethod
    def _ad_inv(tape, H):
        """Ad of the inverse of a pose H = (R, p): [[R^T, 0], [-R^T [p], R^T]]."""
        Rt = [[H[c][r] for c in range(3)] for r in range(3)]
        p = [H[r][3] for r in range(3)]
        neg = lambda x: tape.dot([(x, -1)])          # noqa: E731
        P = [[0, neg(p[2]), p[1]], [p[2], 0, neg(p[0])], [neg(p[1]), p[0], 0]]
        RtP = tape.matmul(Rt, P)
        A = [[0] * 6 for _ in range(6)]
        for r in range(3):
            for c in range(3):
                A[r][c] = Rt[r][c]
                A[r + 3][c + 3] = Rt[r][c]
                A[r + 3][c] = neg(RtP[r][c])
        return A

    def prefix(self, symbols, g=()):
        """The name prefix of the intermediates (``w``, or ``_w``, ``__w``... when a Symbol of
        the equations, a parameter or a component of ``g`` is already named ``w<digits>``)."""
        taken = {str(x) for x in symbols} | {
            str(x) for d in self.tape.defs if d[0] == "p" for x in d[1].free_symbols} | {
            str(x) for v in g for x in sp.sympify(v, strict=True).free_symbols}
        prefix = "w"
        while any(t.startswith(prefix) and t[len(prefix):].isdigit() for t in taken):
            prefix = "_" + prefix
        return prefix

    def to_sympy(self, outputs, q, symbols, g=()):
        """(M, the expressions of the tape operands ``outputs``, intermediates) as sympy, in
        the joint Symbols q, the intermediates named clear of ``symbols`` and ``g``."""
        n = self.n
        flat = [self.M[i][j] for i in range(n) for j in range(i + 1)] + list(outputs)
        exprs, inter = self.tape.to_sympy(flat, list(q), self.prefix(symbols, g))
        it = iter(exprs)
        M = sp.zeros(n, n)
        for i in range(n):
            for j in range(i + 1):
                M[i, j] = M[j, i] = next(it)
        return M, list(it), inter

    def christoffel(self):
        """{(i, j, k), j <= k: Gamma_ijk} of the first kind (5.13), as tape operands."""
        tape, n, M = self.tape, self.n, self.M
        half = tape.num(1) / 2 if tape.exact else 0.5
        out = {}
        for i in range(n):
            for j in range(n):
                for k in range(j, n):
                    out[i, j, k] = tape.dot([(tape.diff(M[i][j], k), half),
                                             (tape.diff(M[i][k], j), half),
                                             (tape.diff(M[j][k], i), -half)])
        return out

    def equations(self, q, qd, g):
        """(M, C, G, intermediates) as sympy: M, C, G in q, qd, g and the intermediate Symbols
        ``w1, w2, ...`` whose definitions (in order) ``intermediates`` lists."""
        n, tape = self.n, self.tape
        gam = self.christoffel()
        dP = [[tape.diff(self.P[r], k) for k in range(n)] for r in range(3)]
        keys = sorted(gam)
        rows = [r for r in range(3) if g[r] != 0]
        flat = [gam[k] for k in keys] + [dP[r][k] for r in rows for k in range(n)]
        Mm, exprs, inter = self.to_sympy(flat, q, list(q) + list(qd), g)
        it = iter(exprs)
        G3 = {k: next(it) for k in keys}
        C = sp.zeros(n, n)
        for i in range(n):
            for j in range(n):
                C[i, j] = sp.Add(*[G3[i, min(j, k), max(j, k)] * qd[k] for k in range(n)])
        Gv = sp.zeros(n, 1)
        for r in rows:
            for k in range(n):
                Gv[k] -= g[r] * next(it)
        return Mm, C, Gv, inter


# --------------------------------------------------------------------------
# choosing the form, and the compiled twin of the nested form
# --------------------------------------------------------------------------

BUDGET = 1000
"""Largest product (in terms) the expanded form may build under ``form="auto"``; beyond it the
nested form is derived instead."""


AXES_NESTED = 4
"""Chains whose rotating joints have this many different axis directions go straight to the
nested form under ``form="auto"`` (their expanded form grows like 5^n)."""


def _axis_directions(chain):
    """The number of different directions (up to sign) of the rotating joints' axes at home."""
    dirs = []
    for i in range(chain.n):
        try:
            w = np.array([float(x) for x in list(chain.screws[:3, i])])
        except TypeError:                        # a symbolic axis: count it as new
            dirs.append(None)
            continue
        if np.linalg.norm(w) < 1e-12:
            continue
        w = w / np.linalg.norm(w)
        if not any(d is not None and abs(abs(d @ w) - 1) < 1e-9 for d in dirs):
            dirs.append(w)
    return len(dirs)


def choose(chain, form="auto"):
    """The derivation :func:`robodyn.lagrange.equations_of_motion` uses: ``"expanded"`` (a
    :class:`Derivation`), ``"nested"`` (a :class:`NestedDerivation`) or ``"auto"``: the expanded
    form unless the rotating joints have :data:`AXES_NESTED` or more axis directions or one of its
    products outgrows :data:`BUDGET` terms. Cached on the chain.

    >>> import numpy as np
    >>> from robodyn.models import random_chain, ur5_like
    >>> type(choose(ur5_like())).__name__, type(choose(random_chain(7, np.random.default_rng(2)))).__name__
    ('Derivation', 'NestedDerivation')
    """
    cache = chain._cache
    if form == "expanded":
        return derivation(chain)
    if form == "auto" and _axis_directions(chain) >= AXES_NESTED:
        cache["lagrange", "too big"] = True
    if form == "auto" and ("lagrange", "too big") not in cache:
        if ("lagrange", "derivation") in cache:
            return cache["lagrange", "derivation"]
        try:
            d = Derivation(chain, budget=BUDGET)
        except _TooBig:
            cache["lagrange", "too big"] = True
        else:
            d.ring.budget = None
            cache["lagrange", "derivation"] = d
            return d
    if ("lagrange", "nested") not in cache:
        cache["lagrange", "nested"] = NestedDerivation(chain)
    return cache["lagrange", "nested"]


class _FastC:
    """C for the expressions of the nested form (sums, products, integer powers, numbers,
    Symbols, cos, sin), printed in one pass without sympy's term ordering; anything else goes to
    the printer of :mod:`robodyn.codegen`."""

    def __init__(self, names):
        self.names = names                       # Symbol -> C name
        self._other = None

    def __call__(self, e):
        if e.is_Symbol:
            return self.names.get(e, e.name)
        if e.is_Number:
            return repr(float(e)) if e.is_Rational or e.is_Float else self.other(e)
        if e.is_Add:
            return "(" + " + ".join(self(a) for a in e.args) + ")"
        if e.is_Mul:
            return "(" + "*".join(self(a) for a in e.args) + ")"
        if e.is_Pow and e.exp.is_Integer and 0 < int(e.exp) <= 4:
            b = self(e.base)
            return "(" + "*".join([b] * int(e.exp)) + ")"
        if isinstance(e, (sp.cos, sp.sin)):
            return f"{type(e).__name__}({self(e.args[0])})"
        return self.other(e)

    def other(self, e):
        if self._other is None:
            try:
                from ..codegen import _Printer
                self._other = _Printer()
            except ImportError:                                 # pragma: no cover
                from sympy.printing.c import C99CodePrinter
                self._other = C99CodePrinter()
        return self._other.doprint(e.xreplace({s: sp.Symbol(c) for s, c in self.names.items()}))


_NESTED_TEMPLATE = """
{pragma}
static void k_all(const double *q, const double *qd, double *M, double *C, double *G)
{{
{body}
}}

static void k_M(const double *q, double *M)
{{
    double qd[N] = {{0}}, C[N * N], G[N];
    k_all(q, qd, M, C, G);
}}

static void k_C(const double *q, const double *qd, double *C)
{{
    double M[N * N], G[N];
    k_all(q, qd, M, C, G);
}}

static void k_G(const double *q, double *G)
{{
    double qd[N] = {{0}}, M[N * N], C[N * N];
    k_all(q, qd, M, C, G);
}}

static void k_MH(const double *q, const double *qd, double *M, double *h)
{{
    double C[N * N], G[N];
    k_all(q, qd, M, C, G);
    for (int i = 0; i < N; i++) {{
        double s = G[i];
        for (int j = 0; j < N; j++) s += C[i * N + j] * qd[j];
        h[i] = s;
    }}
}}
"""


_OPTIMIZE_UP_TO = 1500          # statements


def nested_source(M, C, G, q, qd, intermediates):
    """The C source (module name ``MODNAME``) of equations in nested form, for
    :func:`robodyn.codegen.compiled_module`: one kernel computes the intermediates once, in
    order, then M, C and G."""
    from .. import codegen
    n = len(q)
    names = {s: f"q[{k}]" for k, s in enumerate(q)}
    names.update({s: f"qd[{k}]" for k, s in enumerate(qd)})
    names.update({w: f"w_{k}" for k, (w, _) in enumerate(intermediates)})
    pr = _FastC(names)
    lines = [f"    const double {names[w]} = {pr(e)};" for w, e in intermediates]
    for arg, X in (("M", M), ("C", C), ("G", G)):
        lines += [f"    {arg}[{k}] = {pr(x)};" for k, x in enumerate(X)]
    # gcc's optimizer is superlinear in the length of one function: long programs compile
    # unoptimized (seconds instead of minutes; the calls stay in microseconds)
    pragma = '#pragma GCC optimize ("O0")' if len(lines) > _OPTIMIZE_UP_TO else ""
    kernels = _NESTED_TEMPLATE.format(body="\n".join(lines), pragma=pragma)
    return codegen._TEMPLATE.format(n=n, kernels=kernels, modname="MODNAME")


def compile_nested(M, C, G, q, qd, intermediates):
    """The compiled module (``M``, ``C``, ``G``, ``tau``, ``forward_dynamics``, as
    :func:`robodyn.codegen.compile_equations` makes) of equations in nested form."""
    from .. import codegen
    return codegen.compiled_module(nested_source(M, C, G, q, qd, intermediates), "robodyn_nested")


def code_op_count(source):
    """Arithmetic operations (+ - * /) in generated C kernels (the lines that compute)."""
    count = 0
    for line in source.splitlines():
        line = line.strip()
        if line.startswith("const double") or ("[" in line and "] = " in line and
                                               line.endswith(";")):
            rhs = line.split("=", 1)[1]
            count += sum(rhs.count(c) for c in "+*/") + rhs.count(" - ") + rhs.count("(-")
    return count
