r"""The symbolic engine behind :func:`robodyn.kane.equations_of_motion` (private).

A quantity of a serial chain is a finite sum of terms
:math:`c\,e^{i\,e\cdot q}\,q^{d}\,u^{k}\,p^{m}` (p: the chain's parameters, lengths and
masses). A term's exponent vector is packed into **one Python integer** in balanced base
:data:`_BASE` (one digit per generator, digits may be negative for the frequencies), so the
product of two monomials is an integer addition; a quantity is a ``dict`` {packed monomial:
coefficient}. Coefficients are Python ``complex`` numbers for a numeric chain (terms below
:data:`_EPS` in modulus are dropped: the cancellations of :math:`\cos^2 + \sin^2` leave
rounding residue) and exact Gaussian rationals (``QQ_I``) for a symbolic one. Products keep
:math:`\cos(q_1 + \dots + q_k)` two terms long, which is what makes the recursion cheap.
"""
from __future__ import annotations

import sympy as sp

_BASE = 1 << 8          # digits in [-128, 127]
_HALF = _BASE >> 1
_EPS = 1e-13


class Ring:
    """Arithmetic of packed trigonometric polynomials in n joints (module docstring).

    Generators, in digit order: the frequencies z_k of the rotating joints, the degrees of
    the translating coordinates q_k, the speeds u_k, and the parameters."""

    def __init__(self, n, rotating, translating, params, exact):
        self.n = n
        self.params = list(params)
        self.exact = exact
        gens = ([("z", k) for k in range(n) if rotating[k]]
                + [("q", k) for k in range(n) if translating[k]]
                + [("u", k) for k in range(n)] + [("p", j) for j in range(len(params))])
        self.gens = gens
        self.slot = {g: _BASE ** i for i, g in enumerate(gens)}
        if exact:
            from sympy.polys.domains import QQ_I
            self.dom = QQ_I
            self.one = QQ_I.one
            self.i = QQ_I.from_sympy(sp.I)
        else:
            self.dom = None
            self.one = 1.0 + 0j
            self.i = 1j

    # -- constants --------------------------------------------------------------------
    def number(self, x):
        """A domain element of a sympy number (exact) or float."""
        if self.exact:
            return self.dom.from_sympy(sp.nsimplify(x) if isinstance(x, sp.Float) else x)
        return complex(x)

    def const(self, expr):
        """A polynomial from a sympy expression: a polynomial in the parameters."""
        expr = sp.expand(sp.sympify(expr))
        if expr == 0:
            return {}
        if not self.params:
            return {0: self.number(expr)}
        poly = sp.Poly(expr, *self.params)
        out = {}
        for mono, c in poly.terms():
            key = sum(d * self.slot[("p", j)] for j, d in enumerate(mono))
            out[key] = self.number(c)
        return out

    def gen(self, kind, k, power=1):
        return {power * self.slot[(kind, k)]: self.one}

    # -- arithmetic -------------------------------------------------------------------
    def _clean(self, r):
        if self.exact:
            return {k: v for k, v in r.items() if v}
        return {k: v for k, v in r.items() if abs(v) > _EPS}

    def add(self, *terms):
        r = {}
        for a in terms:
            for k, v in a.items():
                r[k] = r[k] + v if k in r else v
        return self._clean(r)

    def neg(self, a):
        return {k: -v for k, v in a.items()}

    def sub(self, a, b):
        return self.add(a, self.neg(b))

    def mul(self, a, b):
        return self.dot((a,), (b,))

    def dot(self, xs, ys):
        """sum x_i y_i of two lists of polynomials, one clean-up."""
        r = {}
        get = r.get
        for a, b in zip(xs, ys):
            if not a or not b:
                continue
            for k1, v1 in a.items():
                for k2, v2 in b.items():
                    k = k1 + k2
                    w = get(k)
                    r[k] = v1 * v2 if w is None else w + v1 * v2
        return self._clean(r)

    # -- 3-vectors and 3x3 matrices (lists) -------------------------------------------
    def matvec(self, R, v):
        return [self.dot(row, v) for row in R]

    def tmatvec(self, R, v):
        return [self.dot([R[0][c], R[1][c], R[2][c]], v) for c in range(3)]

    def cross(self, a, b):
        m = self.mul
        return [self.sub(m(a[1], b[2]), m(a[2], b[1])), self.sub(m(a[2], b[0]), m(a[0], b[2])),
                self.sub(m(a[0], b[1]), m(a[1], b[0]))]

    # -- spatial algebra (twists (w, v), wrenches (m, f)) ------------------------------
    def twist_to_child(self, R, p, V):
        """Ad_{T^-1} V for the child pose T = (R, p) in the parent: (R^T w, R^T (v - p x w))."""
        w, v = V[:3], V[3:]
        return self.tmatvec(R, w) + self.tmatvec(R, [self.sub(a, b) for a, b in
                                                   zip(v, self.cross(p, w))])

    def wrench_to_parent(self, R, p, W):
        """Ad_{T^-1}^T W: (R m + p x (R f), R f)."""
        Rf = self.matvec(R, W[3:])
        return [self.add(a, b) for a, b in zip(self.matvec(R, W[:3]), self.cross(p, Rf))] + Rf

    def ad(self, V, W):
        """ad_V W = (w x w', w x v' + v x w')."""
        w, v = V[:3], V[3:]
        return self.cross(w, W[:3]) + [self.add(a, b) for a, b in
                                       zip(self.cross(w, W[3:]), self.cross(v, W[:3]))]

    def inertia_times(self, I, V):
        return [self.dot(row, V) for row in I]

    # -- back to sympy -----------------------------------------------------------------
    def digits(self, key):
        out = []
        for _ in self.gens:
            d = key % _BASE
            if d >= _HALF:
                d -= _BASE
            out.append(d)
            key = (key - d) // _BASE
        return out

    def to_sympy(self, a, q, u):
        """Sum of c cos(e.q) / c sin(e.q) times monomials, conjugate terms paired."""
        groups = {}
        for key, c in a.items():
            dg = self.digits(key)
            e, rest = [], []
            for (kind, k), d in zip(self.gens, dg):
                (e if kind == "z" else rest).append(d)
            e = tuple(e)
            sign = next((x for x in e if x), 0)
            canon = e if sign >= 0 else tuple(-x for x in e)
            slot = groups.setdefault((canon, tuple(rest)), [self.dom.zero if self.exact else 0j,
                                                           self.dom.zero if self.exact else 0j])
            slot[0 if sign >= 0 else 1] += c
        zs = [k for kind, k in self.gens if kind == "z"]
        others = [(kind, k) for kind, k in self.gens if kind != "z"]
        syms = [q[k] if kind == "q" else u[k] if kind == "u" else self.params[k]
                for kind, k in others]
        trig = {}
        terms = []
        for (e, rest), (cp, cm) in groups.items():
            mono = [s if d == 1 else sp.Pow(s, d) for s, d in zip(syms, rest) if d]
            if any(e):
                if e not in trig:
                    theta = sp.Add(*[d * q[k] for k, d in zip(zs, e) if d])
                    trig[e] = (sp.cos(theta), sp.sin(theta))
                pairs = ((cp + cm, trig[e][0]), (self.i * (cp - cm), trig[e][1]))
            else:
                pairs = ((cp, None),)
            for coef, fn in pairs:
                if not self.exact:
                    x = coef.real
                    if abs(x) <= 1e-12:
                        continue
                    rest = ([fn] if fn is not None else []) + mono
                    if not rest:
                        terms.append(sp.Float(x))
                    elif x == 1.0 or x == -1.0:
                        terms.append(sp.Mul(*rest) if x > 0 else -sp.Mul(*rest))
                    else:               # a Float times powers: nothing to combine
                        terms.append(sp.Mul(sp.Float(x), *rest, evaluate=False))
                    continue
                val = self._real(coef)
                if val != 0:
                    terms.append(sp.Mul(val, *(([fn] if fn is not None else []) + mono)))
        return sp.Add(*terms)

    def _real(self, c):
        if self.exact:
            return sp.re(self.dom.to_sympy(c)) if c else sp.S.Zero
        x = c.real
        return sp.Float(x) if abs(x) > 1e-12 else sp.S.Zero


class _NotTrigPolynomial(Exception):
    pass


def canonical(exprs, q):
    r"""Expressions that are polynomials in the symbols and in sines and cosines of integer
    combinations of the coordinates q, rewritten as sums of :math:`c\cos(e\cdot q)` and
    :math:`c\sin(e\cdot q)` times monomials: a fast, canonical ``trigsimp`` for them
    (:math:`\cos^2 + \sin^2 = 1`, products to sums). Returns None when an expression is not of
    that kind (the caller then falls back to ``trigsimp``)."""
    exprs = [sp.expand(e) for e in exprs]
    q = list(q)
    others = sorted(set().union(*(e.free_symbols for e in exprs)) - set(q), key=str)
    exact = not any(e.has(sp.Float) for e in exprs)
    n = len(q)
    ring = Ring(n, [True] * n, [True] * n, others, exact)
    qidx = {s: k for k, s in enumerate(q)}

    def trig(fn, arg):
        coeff = sp.Poly(arg, *q) if arg.free_symbols <= set(q) else None
        if coeff is None or coeff.total_degree() > 1 or coeff.coeff_monomial(1) != 0:
            raise _NotTrigPolynomial
        key = 0
        for k, s in enumerate(q):
            c = coeff.coeff_monomial(s)
            if not (c.is_Integer):
                raise _NotTrigPolynomial
            key += int(c) * ring.slot[("z", k)]
        half = ring.number(sp.Rational(1, 2))
        if fn is sp.cos:
            return {key: half, -key: half}
        return {key: half / ring.i, -key: -half / ring.i}

    def factor(x):
        if isinstance(x, sp.Pow) and x.exp.is_Integer and x.exp > 0:
            b = factor(x.base)
            out = b
            for _ in range(int(x.exp) - 1):
                out = ring.mul(out, b)
            return out
        if isinstance(x, (sp.sin, sp.cos)):
            return trig(type(x), x.args[0])
        if x in qidx:
            return ring.gen("q", qidx[x])
        if isinstance(x, sp.Symbol):
            return {ring.slot[("p", others.index(x))]: ring.one}
        if x.is_Number:
            return {0: ring.number(x)} if x != 0 else {}
        raise _NotTrigPolynomial

    out = []
    dummies = [sp.Dummy() for _ in range(n)]
    try:
        for e in exprs:
            acc = []
            for term in sp.Add.make_args(e):
                p = {0: ring.one}
                for x in sp.Mul.make_args(term):
                    p = ring.mul(p, factor(x))
                acc.append(p)
            out.append(ring.to_sympy(ring.add(*acc), q, dummies))
    except _NotTrigPolynomial:
        return None
    return out
