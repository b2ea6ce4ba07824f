r"""The ring of real trigonometric polynomials in which :mod:`robodyn.lagrange._derivation` computes
(private).

A polynomial is

.. math:: \sum c\,\cos(e\cdot q)\,q^{d}\,p^{a} \;+\; \sum c\,\sin(e\cdot q)\,q^{d}\,p^{a},

with integer frequency vectors e, degrees d of the linear coordinates, monomials :math:`p^a`
in the generators (symbolic parameters) and exact (gmpy2 ``mpq``) or float coefficients:
:class:`TrigPoly` holds one, :class:`Ring` does its arithmetic, derivatives and the conversion
to sympy (the very tree sympy would build), and :func:`canonical` rewrites sympy expressions
of that kind in the ring's form (a fast ``trigsimp`` for Kane's general method).

How it is fast. A term's key is one Python integer ``(f << MB) + m``: ``f`` packs the
frequency vector as a signed base-256 number (so adding and subtracting frequencies is integer
arithmetic and ``f > 0`` is a canonical sign) and ``m`` packs the exponents of the monomial.
A product of two terms is two integer additions and two coefficient products,
:math:`\cos a\cos b = \tfrac12(\cos(a+b) + \cos(a-b))` and its three siblings; no sympy object
is built until the end. Products of polynomials with many terms go through the same loop.
"""
from __future__ import annotations

from fractions import Fraction

import sympy as sp
from sympy.core.basic import _args_sortkey, ordering_of_classes

try:                                  # sympy's own dependency; exact rationals in C
    from gmpy2 import mpq as _mpq
except ImportError:                   # pragma: no cover - sympy installs without gmpy2
    _mpq = Fraction

__all__ = ["Ring", "TrigPoly", "canonical"]

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
    e = sp.sympify(e, strict=True)
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

class _TooBig(Exception):
    """The expanded form outgrew its budget: derive the nested form instead."""


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

    def __init__(self, n, trig, lin, gens, exact, budget=None):
        self.budget = budget
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
        self._sympy_cache = {}
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

    def gen(self, j):
        """The polynomial of the ring's j-th generator ``gens[j]`` (a parameter or a speed)."""
        return TrigPoly({1 << (_FB * (len(self.lin) + j)): self.one})

    def matvec(self, A, x):
        """A x for a matrix A (lists of rows) and a vector x of polynomials; zeros skipped."""
        return [self.sum([self.mul(a, b) for a, b in zip(row, x) if a and b]) for row in A]

    def tmatvec(self, A, x):
        """A^T x (A as lists of rows)."""
        return [self.sum([self.mul(A[r][c], x[r]) for r in range(len(A)) if A[r][c] and x[r]])
                for c in range(len(A[0]))]

    def dot(self, x, y):
        return self.sum([self.mul(a, b) for a, b in zip(x, y) if a and b])

    def cross(self, a, b):
        m = self.mul
        return [self.add(m(a[1], b[2]), m(a[2], b[1]), -1),
                self.add(m(a[2], b[0]), m(a[0], b[2]), -1),
                self.add(m(a[0], b[1]), m(a[1], b[0]), -1)]

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
        polys = [p for p in polys if p]
        if len(polys) < 2:                       # polynomials are immutable: no copy needed
            return polys[0] if polys else self.zero
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
        # the four product rules written out: this loop is where the time goes, and a shared
        # helper with sign arguments costs a third more
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
        if self.budget and len(c) + len(s) > self.budget:
            raise _TooBig
        h = self.half
        return TrigPoly({k: v * h for k, v in c.items() if v}, {k: v * h for k, v in s.items() if v})

    # ---- matrices of polynomials ------------------------------------------
    def matmul(self, A, B):
        p, inner = len(B[0]), len(B)
        cols = [[(k, B[k][j]) for k in range(inner) if B[k][j]] for j in range(p)]
        return [[self.sum([self.mul(row[k], b) for k, b in col if row[k]]) for col in cols]
                for row in A]

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

    def to_sympy(self, a, q, gens=None):
        """The sympy expression of ``a`` in the Symbols ``q`` (one per joint): cosines and sines of
        joint-angle combinations, the first nonzero frequency positive, expanded. ``gens``
        replaces the ring's generators (e.g. placeholders of speeds by the caller's symbols).

        The result is the expression sympy's ``Add`` and ``Mul`` would build from the terms,
        but assembled directly: every distinct factor and coefficient is ranked once in sympy's
        canonical order, then each product and the sum are put in that order by plain tuple
        keys (:func:`_canonical_sum`), without sympy's general flattening."""
        if not a:
            return sp.S.Zero
        MB, mask = self.MB, self.mask
        qlin = [q[k] for k in self.lin]
        qtrig = [q[k] for k in self.trig]
        nl = len(self.lin)
        gens = self.gens if gens is None else list(gens)
        cache = self._sympy_cache.setdefault((tuple(q), tuple(gens)), {})
        tol = 0.0
        if not self.exact:                      # drop round-off: below 1e-14 of the total
            tol = 1e-14 * (sum(abs(v) for v in a.c.values()) + sum(abs(v) for v in a.s.values()))
        terms = {}

        def mono(m):
            x = cache.get(("m", m))
            if x is None:
                fac = []
                for i in range(nl + len(gens)):
                    d = (m >> (_FB * i)) & (_FIELD - 1)
                    if d:
                        base = qlin[i] if i < nl else gens[i - nl]
                        fac.append(base if d == 1 else sp.Pow(base, d))
                x = cache[("m", m)] = tuple(fac)
            return x

        for part, is_cos in ((a.c, True), (a.s, False)):
            for key, v in part.items():
                if tol and abs(v) <= tol:
                    continue
                f, m = key >> MB, key & mask
                if f == 0:
                    trig = None
                else:
                    e = self.freq(f)
                    first = next(x for x in e if x)
                    sign = 1 if first > 0 or is_cos else -1
                    if first < 0:
                        e = tuple(-x for x in e)
                    ck = (is_cos, e)
                    got = cache.get(ck)
                    if got is None:
                        got = cache[ck] = _trig_atom(is_cos, sp.Add(*[
                            ei * qi for ei, qi in zip(e, qtrig) if ei]))
                    trig, flip = got
                    if (sign < 0) != flip:
                        v = -v
                tm = (trig, m)
                terms[tm] = terms.get(tm, 0) + v
        out = []
        for (trig, m), v in terms.items():
            if v:
                fac = mono(m)
                out.append((self._number(v), fac + (trig,) if trig is not None else fac))
        return _canonical_sum(out)


def _trig_atom(is_cos, theta):
    """cos(theta) or sin(theta) as sympy's evaluation leaves it, without running that
    evaluation (slow, and nothing else of it applies to an integer combination of symbols):
    sympy takes the minus sign out of an argument that could lose one, cos(-x) = cos(x) and
    sin(-x) = -sin(x). Returns (atom, flip): the value is -atom when flip."""
    flip = theta.could_extract_minus_sign()
    if flip:
        theta = -theta
    return (sp.cos if is_cos else sp.sin)(theta, evaluate=False), flip and not is_cos


_UNKNOWN_CLASS = len(ordering_of_classes) + 1


def _class_key(cls):
    """The order of sympy's ``_cmp_name``: listed classes by position, others after, by name."""
    try:
        return (ordering_of_classes.index(cls.__name__), "")
    except ValueError:
        return (_UNKNOWN_CLASS, cls.__name__)


_CLASS_KEYS = {}
_MUL_KEY = _class_key(sp.Mul)


def _canonical_sum(terms):
    """The sympy sum of ``terms``, pairs (coefficient: a sympy Number, factors: a tuple of
    distinct non-numeric atoms with distinct bases), built as ``Add(*[Mul(c, *f)])`` builds it.

    sympy orders the arguments of a commutative Mul and of an Add by ``Basic.compare``. The
    distinct atoms (factors and coefficients) are few, so they are sorted once with sympy's own
    key; a product's arguments are then its coefficient (if not 1) and its factors by rank, and
    products compare as ``Basic.compare`` compares them: class, number of arguments, then the
    arguments in turn, i.e. the tuple of their ranks."""
    atoms = set()
    for c, fac in terms:
        atoms.update(fac)
        atoms.add(c)
    rank = {x: i for i, x in enumerate(sorted(atoms, key=_args_sortkey))}
    numbers, rest = [], []
    for c, fac in terms:
        fac = sorted(fac, key=rank.__getitem__)
        args = fac if c is sp.S.One else [c] + fac
        if not fac:
            numbers.append(c)
            continue
        if len(args) == 1:
            x = args[0]
            cls = type(x)
            ck = _CLASS_KEYS.get(cls) or _CLASS_KEYS.setdefault(cls, _class_key(cls))
            rest.append(((ck, rank[x]), x))
        else:
            x = sp.Mul._from_args(tuple(args), True)
            rest.append(((_MUL_KEY, len(args), tuple(rank[y] for y in args)), x))
    rest.sort(key=lambda kx: kx[0])
    args = [sp.Add(*numbers)] if numbers else []
    args += [x for _, x in rest]
    if len(args) == 1:
        return args[0]
    if args and args[0] is sp.S.Zero:
        args = args[1:]
    return sp.Add._from_args(tuple(args), True) if len(args) > 1 else args[0]


def _times(c, base):
    """c * base for a sympy Number c and a product base without a numeric factor, built as
    sympy's Mul would build it (the number first), without its general flattening."""
    comm = base.is_commutative              # a number commutes: the product's is the base's
    if base.is_Mul and base.args[0].is_Number:
        c, base = c * base.args[0], sp.Mul._from_args(base.args[1:], comm)
    if c == 1:
        return base
    if base is sp.S.One:
        return c
    if base.is_Mul:
        return sp.Mul._from_args((c,) + base.args, comm)
    return sp.Mul._from_args((c, base), comm)


def _commutative(args):
    """``fuzzy_and`` of the arguments' ``is_commutative`` (what ``_from_args`` computes when
    not told), in one pass over a set."""
    seen = {a.is_commutative for a in args}
    return True if seen == {True} else False if False in seen else None


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
    args = numbers + rest
    return sp.Add._from_args(args, _commutative(args))


class _NotTrigPolynomial(Exception):
    pass


def canonical(exprs, q):
    r"""Expressions that are polynomials in symbols and in sines and cosines of integer
    combinations of the coordinates q, rewritten in the ring's form: sums of
    :math:`c\cos(e\cdot q)` and :math:`c\sin(e\cdot q)` times monomials, the first nonzero
    frequency positive. A fast, canonical ``trigsimp`` for them (:math:`\cos^2 + \sin^2 = 1`,
    products to sums), used by Kane's general method. Returns None when an expression is not
    of that kind (the caller then falls back to ``trigsimp``).

    >>> a, b = sp.symbols('a b')
    >>> canonical([sp.cos(a)**2 + sp.sin(a)**2, 2*sp.sin(a)*sp.cos(b)], [a, b])
    [1, sin(a - b) + sin(a + b)]
    >>> canonical([sp.cos(a / 2)], [a]) is None
    True
    """
    exprs = [sp.expand(e) for e in exprs]
    q = list(q)
    n = len(q)
    others = sorted(set().union(*(e.free_symbols for e in exprs)) - set(q), key=str)
    exact = not any(e.has(sp.Float) for e in exprs)
    ring = Ring(n, range(n), range(n), others, exact)
    qidx = {s: k for k, s in enumerate(q)}
    gidx = {s: j for j, s in enumerate(others)}
    one = ring.const(ring.one)

    def number(x):
        if exact:
            return _mpq(int(x.p), int(x.q))
        return float(x)

    def power(p, d):
        out = one
        for _ in range(d):
            out = ring.mul(out, p)
        return out

    def trig(fn, arg):
        """cos or sin of an integer combination of q, by the angle-sum formulas."""
        c, s_ = one, ring.zero
        for term in sp.Add.make_args(arg):
            k, x = term.as_coeff_Mul()
            if x not in qidx or not k.is_Integer:
                raise _NotTrigPolynomial
            ck, sk = ring.cos_q(qidx[x]), ring.sin_q(qidx[x])
            if k < 0:
                sk = ring.neg(sk)
            for _ in range(abs(int(k))):
                c, s_ = ring.add(ring.mul(c, ck), ring.mul(s_, sk), -1), \
                    ring.add(ring.mul(s_, ck), ring.mul(c, sk))
        return c if fn is sp.cos else s_

    def factor(x):
        if x.is_Pow and x.exp.is_Integer and x.exp > 0:
            return power(factor(x.base), int(x.exp))
        if isinstance(x, (sp.sin, sp.cos)):
            return trig(type(x), x.args[0])
        if x in qidx:
            return ring.q_lin(qidx[x])
        if x in gidx:
            return ring.gen(gidx[x])
        if x.is_Rational or (x.is_Float and not exact):
            return ring.const(number(x)) if x != 0 else ring.zero
        raise _NotTrigPolynomial

    out = []
    try:
        for e in exprs:
            terms = []
            for term in sp.Add.make_args(e):
                p = one
                for x in sp.Mul.make_args(term):
                    p = ring.mul(p, factor(x))
                terms.append(p)
            out.append(ring.to_sympy(ring.sum(terms), q))
    except _NotTrigPolynomial:
        return None
    return out
