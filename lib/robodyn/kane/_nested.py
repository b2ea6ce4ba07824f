"""Kane's recursion on the nested form's straight-line program (a room of :mod:`robodyn.kane`):
the partial velocities and the generalized inertia forces of a long chain computed link by link
(``_nested_terms``), used by the chain equations."""
from __future__ import annotations

import sympy as sp

from ..lagrange import _derivation
from .._value_checks import is_symbolic


def _nested_terms(d, g, q, u):
    r"""Kane's recursion of :func:`_chain_terms` on the straight-line program of the nested
    form (:class:`robodyn.lagrange._derivation.NestedDerivation`, the one Lagrange's equations of long
    spatial chains use): the speeds and any symbolic gravity are leaves of the program,
    nothing is expanded. Returns M, :math:`F_r`, f (sympy, in q, u and the intermediates) and
    the intermediates ``[(Symbol, definition), ...]`` in order; M is the tape's
    composite-inertia mass matrix, the same nodes as Lagrange's."""
    tape, n = d.tape, d.n
    C = tape.from_sympy
    Y, I = d.Y, d.inertias
    A = [[row[0] for row in d.A[i]] for i in range(n)]
    us = [C(x) for x in u]
    gs = [C(x) if is_symbolic(x) else _tape_number(tape, x) for x in g]

    def mv(X, x):
        return [tape.dot([(a, b) for a, b in zip(row, x)]) for row in X]

    def tmv(X, x):
        return [tape.dot([(X[r][c], x[r]) for r in range(len(X))]) for c in range(len(X[0]))]

    def cross(a, b):
        return [tape.dot([(a[1], b[2]), (tape.mul(a[2], b[1]), -1)]),
                tape.dot([(a[2], b[0]), (tape.mul(a[0], b[2]), -1)]),
                tape.dot([(a[0], b[1]), (tape.mul(a[1], b[0]), -1)])]

    def add(x, y):
        return [tape.add(a, b) for a, b in zip(x, y)]

    V, a, grav = [], [], []
    Vp, ap, gp = [0] * 6, [0] * 6, gs
    for i in range(n):
        Au = [tape.mul(x, us[i]) for x in A[i]]
        Vt = mv(Y[i], Vp)
        w = Vt[:3]
        ad = cross(w, Au[:3]) + add(cross(w, Au[3:]), cross(Vt[3:], Au[:3]))
        Vp = add(Vt, Au)
        ap = add(mv(Y[i], ap), ad)
        gp = mv([row[3:] for row in Y[i][3:]], gp)          # R^T g: gravity in link i
        V.append(Vp), a.append(ap), grav.append(gp)
    bias, active = [None] * n, [None] * n
    W = Wg = None
    for i in reversed(range(n)):
        h = mv(I[i], V[i])
        w, v = V[i][:3], V[i][3:]
        hv = mv([row[:3] for row in I[i][3:]], w) if _tape_mass_block(I[i]) else h[3:]
        Fi = add(mv(I[i], a[i]), add(cross(w, h[:3]), cross(v, hv)) + cross(w, h[3:]))
        Gi = mv([row[3:] for row in I[i]], grav[i])            # the weight I (0, g)
        if W is not None:
            Fi, Gi = add(Fi, tmv(Y[i + 1], W)), add(Gi, tmv(Y[i + 1], Wg))
        W, Wg = Fi, Gi
        bias[i] = tape.dot(list(zip(A[i], W)))
        active[i] = tape.dot(list(zip(A[i], Wg)))
    f = [tape.add(x, b, -1) for x, b in zip(active, bias)]
    M, exprs, inter = d.to_sympy(active + f, q, list(q) + list(u), g)
    return M, sp.Matrix(exprs[:n]), sp.Matrix(exprs[n:]), inter


def _tape_number(tape, x):
    """A number as a tape constant: the short fraction of the float when there is one, else
    its exact value (an exact tape) or the float."""
    x = float(x)
    if not tape.exact:
        return x
    fr = _derivation._nice(x) or _derivation.Fraction(x)
    return tape.num(fr.numerator) / fr.denominator


def _tape_mass_block(G):
    """:func:`_mass_block` for a spatial inertia of tape operands."""
    m = G[3][3]
    return all(G[3 + r][3 + c] == m if r == c else G[3 + r][3 + c] == 0
               for r in range(3) for c in range(3))
