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

How it is fast. A term's key is one Python integer ``(f << MB) + m``: ``f`` packs the
frequency vector as a signed base-256 number (so adding and subtracting frequencies is integer
arithmetic and ``f > 0`` is a canonical sign) and ``m`` packs the exponents of the monomial.
A product of two terms is two integer additions and two coefficient products,
:math:`\cos a\cos b = \tfrac12(\cos(a+b) + \cos(a-b))` and its three siblings; no sympy object
is built until the end. Products of polynomials with many terms go through the same loop.

Entry points (for :mod:`robodyn.lagrange` now, and for Kane's method and the later parts):

* :func:`derivation` ``(chain)`` -- the cached :class:`Derivation` of a chain (on
  ``chain._cache``): ``.mass_matrix(q)``, ``.coriolis(q, qd)``, ``.christoffel(q)`` (the
  symbols of the first kind, eq. 5.13), ``.potential(q, g)``, ``.gravity(q, g)``, each returning
  sympy objects in the Symbols you pass.
* :class:`Derivation` ``.M`` -- the raw polynomials (lists of :class:`TrigPoly`), with
  ``.ring`` (:class:`Ring`: ``add``, ``mul``, ``diff``, ``to_sympy``) for quantities of your own:
  e.g. Kane's partial velocities are ``ring.mul`` of the joint transforms ``.Hrel``.
* :func:`op_count` ``(matrix)`` -- the operation count the benchmark reports (sympy's
  ``count_ops`` on every entry, summed).
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import sympy as sp

try:                                  # sympy's own dependency; exact rationals in C
    from gmpy2 import mpq as _mpq
except ImportError:                   # pragma: no cover - sympy installs without gmpy2
    _mpq = Fraction

from ._checks import is_symbolic

__all__ = ["Ring", "TrigPoly", "Derivation", "derivation", "op_count"]

_FB = 8                               # bits per packed exponent field
_FIELD = 1 << _FB
_HALF_FIELD = _FIELD // 2
_NICE_DENOMINATOR = 10 ** 6           # floats that are fractions with smaller denominators stay exact


# --------------------------------------------------------------------------
# numbers: exact where the chain's numbers are "nice", floats otherwise
# --------------------------------------------------------------------------

def _nice(x):
    """The fraction p/q (q <= 10^6) within a few units in the last place of the float x (the
    round-off of computing it in floats), or None."""
    fr = Fraction(x).limit_denominator(_NICE_DENOMINATOR)
    return fr if abs(float(fr) - x) <= 1e-15 * abs(x) else None


def _nice_expr(e):
    """A sympy constant expression with every rational that came from a float (a long decimal
    such as 33333333333333333/10^17) replaced by the short fraction of the same double, if any.
    Returns (expression, all_nice)."""
    e = sp.sympify(e)
    ok = True
    rep = {}
    for r in e.atoms(sp.Rational):
        if r.q > _NICE_DENOMINATOR:
            f = _nice(float(r))
            if f is None or abs(Fraction(int(r.p), int(r.q)) - f) > abs(f) * 1e-15 + 1e-300:
                ok = False
            else:
                rep[r] = sp.Rational(f.numerator, f.denominator)
    for f in e.atoms(sp.Float):
        ok = False
    return (e.xreplace(rep) if rep else e), ok


# --------------------------------------------------------------------------
# the ring of trigonometric polynomials
# --------------------------------------------------------------------------

class TrigPoly:
    """A real trigonometric polynomial: ``c`` maps keys of cosine terms, ``s`` of sine terms, to
    coefficients (module docstring). Treat as immutable."""

    __slots__ = ("c", "s")

    def __init__(self, c=None, s=None):
        self.c = c if c is not None else {}
        self.s = s if s is not None else {}

    def __bool__(self):
        return bool(self.c) or bool(self.s)

    def __len__(self):
        return len(self.c) + len(self.s)


class Ring:
    """Arithmetic of :class:`TrigPoly` for one chain: n joints of which those in ``trig`` carry
    cosines and sines, those in ``lin`` carry powers of q, and parameters ``gens`` (sympy
    expressions: symbols, or irrational constants) with coefficients of type ``exact`` (mpq)
    or float."""

    def __init__(self, n, trig, lin, gens, exact):
        self.n, self.trig, self.lin, self.gens = n, list(trig), list(lin), list(gens)
        self.exact = exact
        nm = len(self.lin) + len(self.gens)
        self.MB = _FB * nm
        self.mask = (1 << self.MB) - 1
        self.num = _mpq if exact else float
        self.one = self.num(1)
        self.half = self.num(1) / 2 if exact else 0.5
        self.zero = TrigPoly()
        self._freq = {}               # packed f -> tuple of frequencies per trig joint
        self._lin_shift = {k: _FB * i for i, k in enumerate(self.lin)}
        self._trig_digit = {k: i for i, k in enumerate(self.trig)}

    # ---- construction ----------------------------------------------------
    def const(self, c):
        return TrigPoly({0: c}) if c else TrigPoly()

    def from_terms(self, terms):
        """A polynomial from {monomial key m: coefficient} (no trigonometric part)."""
        return TrigPoly({m: c for m, c in terms.items() if c})

    def cos_q(self, k):
        return TrigPoly({(1 << (_FB * self._trig_digit[k])) << self.MB: self.one})

    def sin_q(self, k):
        return TrigPoly({}, {(1 << (_FB * self._trig_digit[k])) << self.MB: self.one})

    def q_lin(self, k):
        return TrigPoly({1 << self._lin_shift[k]: self.one})

    # ---- arithmetic --------------------------------------------------------
    @staticmethod
    def _acc(into, src, sign=1):
        for k, v in src.items():
            w = into.get(k)
            w = (v if sign > 0 else -v) if w is None else (w + v if sign > 0 else w - v)
            if w:
                into[k] = w
            else:
                del into[k]

    def add(self, a, b, sign=1):
        if not b:
            return a
        if not a and sign > 0:
            return b
        c, s = dict(a.c), dict(a.s)
        self._acc(c, b.c, sign)
        self._acc(s, b.s, sign)
        return TrigPoly(c, s)

    def sum(self, polys):
        c, s = {}, {}
        for p in polys:
            self._acc(c, p.c)
            self._acc(s, p.s)
        return TrigPoly(c, s)

    def scale(self, a, x):
        if not x or not a:
            return self.zero
        return TrigPoly({k: v * x for k, v in a.c.items()}, {k: v * x for k, v in a.s.items()})

    def neg(self, a):
        return TrigPoly({k: -v for k, v in a.c.items()}, {k: -v for k, v in a.s.items()})

    def mul(self, a, b):
        r"""The product, by :math:`\cos a\cos b = \frac12(\cos(a+b) + \cos(a-b))` and siblings."""
        if not a or not b:
            return self.zero
        if len(a) < len(b):
            a, b = b, a
        mask = self.mask
        c, s = {}, {}
        # b's terms with 2*m precomputed: key1 - key2 + 2 m2 = ((f1 - f2) << MB) + m1 + m2
        bc = [(k, 2 * (k & mask), v) for k, v in b.c.items()]
        bs = [(k, 2 * (k & mask), v) for k, v in b.s.items()]
        cget, sget = c.get, s.get
        for k1, v1 in a.c.items():
            for k2, m2, v2 in bc:                       # cos cos: +cos(+) +cos(-)
                p = v1 * v2
                kp = k1 + k2
                c[kp] = cget(kp, 0) + p
                km = k1 - k2 + m2
                if km < 0:
                    km = 2 * (km & mask) - km
                c[km] = cget(km, 0) + p
            for k2, m2, v2 in bs:                       # cos sin: +sin(+) -sin(-)
                p = v1 * v2
                kp = k1 + k2
                s[kp] = sget(kp, 0) + p
                km = k1 - k2 + m2
                if km > mask:
                    s[km] = sget(km, 0) - p
                elif km < 0:
                    km = 2 * (km & mask) - km
                    s[km] = sget(km, 0) + p
        for k1, v1 in a.s.items():
            for k2, m2, v2 in bc:                       # sin cos: +sin(+) +sin(-)
                p = v1 * v2
                kp = k1 + k2
                s[kp] = sget(kp, 0) + p
                km = k1 - k2 + m2
                if km > mask:
                    s[km] = sget(km, 0) + p
                elif km < 0:
                    km = 2 * (km & mask) - km
                    s[km] = sget(km, 0) - p
            for k2, m2, v2 in bs:                       # sin sin: +cos(-) -cos(+)
                p = v1 * v2
                kp = k1 + k2
                c[kp] = cget(kp, 0) - p
                km = k1 - k2 + m2
                if km < 0:
                    km = 2 * (km & mask) - km
                c[km] = cget(km, 0) + p
        h = self.half
        return TrigPoly({k: v * h for k, v in c.items() if v}, {k: v * h for k, v in s.items() if v})

    # ---- matrices of polynomials ------------------------------------------
    def matmul(self, A, B):
        m, p, inner = len(A), len(B[0]), len(B)
        out = []
        for i in range(m):
            row = []
            for j in range(p):
                row.append(self.sum(self.mul(A[i][k], B[k][j]) for k in range(inner)
                                    if A[i][k] and B[k][j]))
            out.append(row)
        return out

    def matadd(self, A, B):
        return [[self.add(a, b) for a, b in zip(ra, rb)] for ra, rb in zip(A, B)]

    @staticmethod
    def T(A):
        return [list(r) for r in zip(*A)]

    # ---- calculus ----------------------------------------------------------
    def freq(self, f):
        """The frequency vector (one integer per trig joint) of a packed f."""
        e = self._freq.get(f)
        if e is None:
            out, x = [], f
            for _ in self.trig:
                d = x & (_FIELD - 1)
                if d >= _HALF_FIELD:
                    d -= _FIELD
                out.append(d)
                x = (x - d) >> _FB
            e = self._freq[f] = tuple(out)
        return e

    def diff(self, a, k):
        """d a / d q_k, term by term."""
        c, s = {}, {}
        MB, mask = self.MB, self.mask
        if k in self._trig_digit:
            dig = self._trig_digit[k]
            for key, v in a.c.items():              # d cos(f q) = -e_k sin(f q)
                e = self.freq(key >> MB)[dig]
                if e:
                    s[key] = s.get(key, 0) - v * e
            for key, v in a.s.items():              # d sin(f q) = e_k cos(f q)
                e = self.freq(key >> MB)[dig]
                if e:
                    c[key] = c.get(key, 0) + v * e
        if k in self._lin_shift:
            sh = self._lin_shift[k]
            unit = 1 << sh
            for src, dst in ((a.c, c), (a.s, s)):
                for key, v in src.items():
                    d = ((key & mask) >> sh) & (_FIELD - 1)
                    if d:
                        kk = key - unit
                        dst[kk] = dst.get(kk, 0) + v * d
        return TrigPoly({k_: v for k_, v in c.items() if v}, {k_: v for k_, v in s.items() if v})

    # ---- back to sympy -------------------------------------------------------
    def _number(self, v):
        if self.exact:
            return sp.Rational(int(v.numerator), int(v.denominator))
        return sp.Float(v)

    def to_sympy(self, a, q):
        """The sympy expression of ``a`` in the Symbols ``q`` (one per joint): cosines and sines of
        joint-angle combinations, the first nonzero frequency positive, expanded."""
        if not a:
            return sp.S.Zero
        MB, mask = self.MB, self.mask
        qlin = [q[k] for k in self.lin]
        qtrig = [q[k] for k in self.trig]
        nl = len(self.lin)
        cache = {}
        tol = 0.0
        if not self.exact:                      # drop round-off: below 1e-14 of the total
            tol = 1e-14 * (sum(abs(v) for v in a.c.values()) + sum(abs(v) for v in a.s.values()))
        terms = {}

        def mono(m):
            x = cache.get(("m", m))
            if x is None:
                fac = []
                for i in range(nl + len(self.gens)):
                    d = (m >> (_FB * i)) & (_FIELD - 1)
                    if d:
                        base = qlin[i] if i < nl else self.gens[i - nl]
                        fac.append(base ** d)
                x = cache[("m", m)] = sp.Mul(*fac)
            return x

        for part, is_cos in ((a.c, True), (a.s, False)):
            for key, v in part.items():
                if tol and abs(v) <= tol:
                    continue
                f, m = key >> MB, key & mask
                if f == 0:
                    trig = sp.S.One
                else:
                    e = self.freq(f)
                    first = next(x for x in e if x)
                    sign = 1 if first > 0 or is_cos else -1
                    if first < 0:
                        e = tuple(-x for x in e)
                    ck = (is_cos, e)
                    trig = cache.get(ck)
                    if trig is None:
                        theta = sp.Add(*[ei * qi for ei, qi in zip(e, qtrig) if ei])
                        trig = cache[ck] = sp.cos(theta) if is_cos else sp.sin(theta)
                    if sign < 0:
                        v = -v
                tm = (trig, m)
                terms[tm] = terms.get(tm, 0) + v
        out = []
        for (trig, m), v in terms.items():
            if not v:
                continue
            base = cache.get((trig, m))
            if base is None:
                base = cache[trig, m] = sp.Mul(mono(m), trig)
            out.append(_times(self._number(v), base))
        return _add(out)


def _times(c, base):
    """c * base for a sympy Number c and a product base without a numeric factor, built as
    sympy's Mul would build it (the number first), without its general flattening."""
    if c == 1:
        return base
    if base is sp.S.One:
        return c
    if base.is_Mul:
        return sp.Mul._from_args((c,) + base.args)
    return sp.Mul._from_args((c, base))


def _add(terms):
    """The sum of distinct canonical terms (no two alike), in sympy's canonical order."""
    if not terms:
        return sp.S.Zero
    if len(terms) == 1:
        return terms[0]
    from sympy.core.add import _addsort
    numbers = [t for t in terms if t.is_Number]
    rest = [t for t in terms if not t.is_Number]
    _addsort(rest)
    return sp.Add._from_args(numbers + rest)


# --------------------------------------------------------------------------
# constants of the chain as polynomials in its parameters
# --------------------------------------------------------------------------

def _constants(chain):
    """The chain's sympy data (screws, home, link homes and inertias), every float-born rational
    made short where possible; and whether all of them are short (exact arithmetic)."""
    from ._checks import to_sympy as _S
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

    def terms(self, e, lin_count, exact):
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
                    raise ValueError("robodyn: a parameter's power exceeds the engine's limit 255")
                m |= d << (_FB * (lin_count + i))
            out[m] = _mpq(int(c.numerator), int(c.denominator)) if exact else \
                float(Fraction(int(c.numerator), int(c.denominator)))
        return out


class Derivation:
    """M, dM/dq and the first moments of mass of a chain as :class:`TrigPoly`, by the
    composite-rigid-body recursion in the link frames (each relative pose a function of one
    joint). Made by :func:`derivation`; attributes ``ring``, ``M`` (n x n lists), ``P`` (the
    three space-frame components of :math:`\\sum_i m_i c_i`, the first moment of mass),
    ``Hrel`` (pose of link i in link i-1 as 4 x 4 lists), ``A`` (joint screws in the link
    frames)."""

    def __init__(self, chain):
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
            C = _inv_h(prev) * L
            Ai_list.append(Ai)
            consts.append(C)
            prev = L
        # the joint exponentials need W, W^2, W v, W^2 v of each screw (all polynomial)
        pieces = []
        for Ai in Ai_list:
            w, v = Ai[:3, 0], Ai[3:, 0]
            W = sp.Matrix([[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]])
            pieces.append((W, (W * W).applyfunc(sp.expand), (W * v).applyfunc(sp.expand),
                           (W * W * v).applyfunc(sp.expand), v, w))
        everything = []
        for C in consts:
            everything += list(C)
        for G in data["link_inertias"]:
            everything += list(G)
        for Ai, (W, W2, Wv, W2v, v, w) in zip(Ai_list, pieces):
            everything += list(Ai) + list(W2) + list(Wv) + list(W2v) + list(w.T * v)
        conv = _Converter(everything)
        ring = self.ring = Ring(n, trig, lin, conv.gens, exact)
        nl = len(lin)

        def P(e):
            return ring.from_terms(conv.terms(e, nl, exact))

        def cmat(A):
            return [[P(A[i, j]) for j in range(A.cols)] for i in range(A.rows)]

        A, Y, Hrel = [], [], []
        for i in range(n):
            H = ring.matmul(cmat(consts[i]), self._joint_exp(ring, P, pieces[i], i))
            A.append(cmat(Ai_list[i]))
            Hrel.append(H)
            Y.append(_ad_poly(ring, _inv_poly(ring, H)))
        self.A, self.Y, self.Hrel = A, Y, Hrel
        inertias = [cmat(G) for G in data["link_inertias"]]
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
        # in its own frame (read off its spatial inertia: G[3:, :3] = m [c]^T... as m [c])
        T, self.P = None, [ring.zero] * 3
        for i in range(n):
            T = Hrel[i] if T is None else ring.matmul(T, Hrel[i])
            G = data["link_inertias"][i]
            hx = G[:3, 3:]                   # = m [c] in the (omega, v) ordering
            local = [P(hx[2, 1]), P(hx[0, 2]), P(hx[1, 0]), P(G[3, 3])]
            self.P = [ring.sum([self.P[r]] + [ring.mul(T[r][c], local[c]) for c in range(4)])
                      for r in range(3)]
        self._dM = None

    @staticmethod
    def _joint_exp(ring, P, piece, k):
        """exp([A] q_k) of a screw A as a 4 x 4 matrix of polynomials (Rodrigues)."""
        W, W2, Wv, W2v, v, w = piece
        one = ring.const(ring.one)
        H = [[ring.zero] * 4 for _ in range(4)]
        H[3][3] = one
        if k in ring._trig_digit:
            cos, sin = ring.cos_q(k), ring.sin_q(k)
            omc = ring.add(one, cos, -1)
            qk = ring.q_lin(k) if k in ring._lin_shift else None
            for r in range(3):
                for c in range(3):
                    e = ring.add(ring.mul(P(W[r, c]), sin), ring.mul(P(W2[r, c]), omc))
                    H[r][c] = ring.add(one, e) if r == c else e
            # translation: (I q + (1 - cos) W + (q - sin) W^2) v; the q terms only for a pitch
            for r in range(3):
                e = ring.add(ring.mul(P(Wv[r]), omc), ring.mul(P(W2v[r]), sin), -1)
                if qk is not None:
                    e = ring.add(e, ring.mul(P(v[r] + W2v[r]), qk))
                H[r][3] = e
        else:
            qk = ring.q_lin(k)
            for r in range(3):
                H[r][r] = one
                H[r][3] = ring.mul(P(v[r]), qk)
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


def derivation(chain):
    """The :class:`Derivation` of a chain, made once and cached on the (immutable) chain."""
    key = ("lagrange", "derivation")
    if key not in chain._cache:
        chain._cache[key] = Derivation(chain)
    return chain._cache[key]


def op_count(X):
    """Operation count of a sympy expression or matrix (``count_ops`` summed over entries)."""
    if isinstance(X, sp.MatrixBase) or isinstance(X, sp.NDimArray):
        return int(sum(sp.count_ops(e) for e in X))
    return int(sp.count_ops(X))
