r"""The meaning checks of :mod:`robodyn`'s arguments: what a value *is* beyond its type and shape
-- a rotation, a pose, a unit axis, a screw axis, a rotational or spatial inertia, a symmetric
positive definite metric, a coefficient of restitution, a surface with its Jacobian, a time
symbol, a bounded number of steps -- decided for numbers and for symbols alike.

A symbolic argument is decided under its symbols' assumptions (:func:`decide`): proved where
sympy can, tested at random values of its symbols where it cannot (a positive symbol sampled
positive, an integer one as an integer), refused when it fails at every value, warned about
(:class:`UndecidedWarning`) when it holds at some values and fails at others.

This module is on the ground floor, beside the value checks it stands on
(:mod:`robodyn._value_checks`: numbers, arrays, text, symbols, finiteness, the error helper);
it knows nothing of the rooms above. :mod:`robodyn.kinds` makes each meaning an annotation.

Public API (one line each; see each docstring)
----------------------------------------------
``spd(A, name, *, tol=DEFAULT_TOL, symbols=False)`` -- symmetric positive definite matrix
``decide(M, name, expected, test, *, prove=None, hint=None, trials=3, identity=True)`` --
a property of a matrix, numeric or symbolic, decided or refused
``rotation_matrix``, ``pose_matrix``, ``unit_vector``, ``real_vector``, ``nonzero_vector``,
``screw_axis``, ``inertia_matrix``, ``spatial_inertia_matrix`` -- the rigid-motion meanings
``surface_geometry``, ``restitution``, ``time_symbol``, ``independent_of``, ``steps`` -- the
meanings of Parts III-VI (a contact surface, an impact law, time, bounded work)
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from ._value_checks import (DEFAULT_TOL, MAX_BYTES, MAX_SIZE, _real_expression, _to_sympy,
                            describe, error, is_symbolic, matrix, real_array, scalar, sym_matrix,
                            vector)

__all__ = ["spd", "decide", "UndecidedWarning", "rotation_matrix", "pose_matrix", "unit_vector",
           "real_vector", "nonzero_vector", "screw_axis", "inertia_matrix",
           "spatial_inertia_matrix", "surface_geometry", "restitution", "time_symbol",
           "independent_of", "steps"]


def spd(A, name: str, *, tol: float = DEFAULT_TOL, symbols: bool = False):
    """A symmetric positive definite matrix (e.g. a mass matrix), returned as given.

    Numeric: symmetric to ``tol`` relative to its largest entry, and a Cholesky factorisation
    exists. Symbolic: exactly symmetric; when all entries are numbers, positive definite by
    its leading principal minors. With free symbols: ``symbols=True`` (a metric given by the
    reader, :class:`robodyn.kinds.Metric`) decides it under their assumptions (:func:`decide`);
    else (a matrix whose symbols may be intermediates or later parameters) only a diagonal entry
    that is <= 0 is refused.

    >>> spd([[2.0, 0.0], [0.0, 1.0]], "f: M").shape
    (2, 2)
    >>> spd([[1.0, 2.0], [2.0, 1.0]], "f: M")
    Traceback (most recent call last):
    ...
    robodyn.errors.ArgumentError: f: M: expected a symmetric positive definite matrix, got a matrix with eigenvalues [-1.0, 3.0] (a mass matrix must be positive definite)
    """
    hint = "a mass matrix must be positive definite"
    if is_symbolic(A):
        M = _to_sympy(A, name)
        if M.rows != M.cols:
            raise error(name, "a square matrix", f"shape {M.shape}")
        if (M - M.T).applyfunc(sp.simplify) != sp.zeros(*M.shape):
            raise error(name, "a symmetric matrix", "a matrix with M != M.T")
        if M.free_symbols:          # decided under the symbols' assumptions
            for k in range(M.rows):
                if M[k, k].is_nonpositive:
                    raise error(name, "a symmetric positive definite matrix",
                                f"the diagonal entry M[{k}, {k}] = {M[k, k]} <= 0", hint)
            if symbols:
                decide(M, name, "a symmetric positive definite matrix", _spd_test,
                       prove=lambda m: _minors_proof(m, strict=True), hint=hint)
        else:
            for k in range(1, M.rows + 1):
                if not sp.simplify(M[:k, :k].det()) > 0:
                    raise error(name, "a symmetric positive definite matrix",
                                f"leading minor {k} = {sp.simplify(M[:k, :k].det())}", hint)
        return M
    a = real_array(A, name)
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise error(name, "a square matrix", f"shape {a.shape}")
    scale = float(np.abs(a).max(initial=0.0))         # relative: a tiny M is tested too
    asym = float(np.abs(a - a.T).max(initial=0.0))
    if asym > tol * scale:
        raise error(name, "a symmetric matrix", f"|M - M^T| up to {asym:.3g}")
    b = a / scale if scale > 0 else a       # scaled: a huge M must not overflow to inf
    try:
        np.linalg.cholesky(0.5 * (b + b.T))
    except np.linalg.LinAlgError as exc:
        with np.errstate(over="ignore"):
            ev = np.linalg.eigvalsh(0.5 * (b + b.T)) * (scale if scale > 0 else 1.0)
        raise error(name, "a symmetric positive definite matrix",
                    f"a matrix with eigenvalues {np.round(ev, 12).tolist()[:6]}", hint) from exc
    return a


def _spd_test(a):
    scale = float(np.abs(a).max(initial=0.0)) or 1.0
    try:
        np.linalg.cholesky(0.5 * (a + a.T) / scale)
    except np.linalg.LinAlgError:
        ev = np.linalg.eigvalsh(0.5 * (a + a.T))
        return f"a matrix with eigenvalues {np.round(ev, 6).tolist()[:6]}"
    return None


def _sample_values(exprs, rng):
    """A substitution of random numbers in [0.3, 1.3] for every free symbol and every
    undefined function of the expressions (to test a structure numerically)."""
    from sympy.core.function import AppliedUndef
    atoms = set()
    for e in exprs:
        if isinstance(e, sp.Basic):
            atoms |= e.atoms(AppliedUndef) | e.free_symbols
    funcs = sorted((a for a in atoms if isinstance(a, AppliedUndef)), key=str)
    syms = sorted((a for a in atoms if isinstance(a, sp.Symbol)), key=str)
    sub = {a: sp.Float(v) for a, v in zip(funcs, rng.uniform(0.3, 1.3, len(funcs)))}
    sub.update({a: sp.Float(v) for a, v in zip(syms, rng.uniform(0.3, 1.3, len(syms)))})
    return funcs, sub


def _numbers(M, sub):
    """A sympy matrix as floats after ``sub`` (None when something stays symbolic)."""
    try:
        v = M.xreplace(sub) if sub else M
        return np.array(v.evalf(), dtype=float).reshape(M.shape)
    except (TypeError, ValueError):
        return None


class UndecidedWarning(UserWarning):
    """A symbolic argument whose meaning could not be decided: it holds at some values of its
    symbols and fails at others (the message names ``function: argument`` and one failing
    value). Re-exported as :class:`robodyn.kinds.UndecidedWarning`."""


UndecidedWarning.__module__ = "robodyn.kinds"


def _assumed_number(s, rng, spread=False):
    """A random value of the symbol ``s`` under its assumptions: positive (in [0.3, 1.3], or
    with ``spread`` log-uniform in [0.1, 10]: the symbols then differ in scale, as the sides of
    a flat box do) unless it is declared negative or non-positive; a small integer when
    declared integer. Symbols of unknown sign are sampled as the physical parameters they
    usually are (positive)."""
    if s.is_integer:
        u = float(rng.integers(1, 10 if spread else 4))
    else:
        u = float(10 ** rng.uniform(-1, 1)) if spread else float(rng.uniform(0.3, 1.3))
    return -u if (s.is_negative or s.is_nonpositive) else u


def _assumed_substitution(M, rng, spread=False):
    """A substitution of numbers for every symbol, undefined function and derivative of ``M``
    (derivatives replaced whole, before the functions inside them); ``spread``: symbols drawn
    over two decades (:func:`_assumed_number`)."""
    from sympy.core.function import AppliedUndef
    atoms = M.atoms(sp.Derivative) | M.atoms(AppliedUndef) | M.free_symbols
    sub = {}
    for a in sorted(atoms, key=str):
        if isinstance(a, sp.Symbol):
            sub[a] = sp.Float(_assumed_number(a, rng, spread))
        else:
            sub[a] = sp.Float(float(rng.uniform(0.3, 1.3)))
    return sub


def decide(M, name: str, expected: str, test, *, prove=None, hint: str | None = None,
           trials: int = 3, identity: bool = True):
    """Decide a property of a matrix, numeric or sympy, and refuse it when it fails.

    ``test(a)`` takes a float array and returns None (the property holds) or the "got ..."
    text of the failure. A numeric matrix, or a sympy one without symbols, is tested once. A
    sympy matrix with symbols is tested at ``trials`` values of its symbols drawn under their
    assumptions (:func:`_assumed_number`; the first near 1, the others over two decades):
    holding at all, it passes; failing at some value,
    ``prove(M)`` (simplification, the symbols' assumptions) may prove the failure for every
    value (its text, or None): proven, it is refused. Not proven: with ``identity`` (a property
    that must hold for every value of the symbols, as R(q) is a rotation at every q) a
    failure at every sampled value is refused too; otherwise (a vector whose parameter may
    take the one value that makes it unit: (x, x, 0) at x = 1/sqrt(2)) and for a failure at
    some values only, it passes with an :class:`UndecidedWarning` naming the argument and a
    failing value.

    >>> a = sp.Symbol('a', positive=True)
    >>> decide(sp.Matrix([[a, 0], [0, -a]]), "f: M", "a positive matrix",
    ...        lambda v: None if (v > -1e-12).all() else "a negative entry",
    ...        prove=lambda m: "-a < 0" if m[1, 1].is_negative else None)
    Traceback (most recent call last):
    ...
    robodyn.errors.ArgumentError: f: M: expected a positive matrix, got -a < 0
    """
    if not isinstance(M, sp.MatrixBase):
        bad = test(np.asarray(M, dtype=float))
        if bad:
            raise error(name, expected, bad, hint)
        return
    rng = np.random.default_rng(12345)
    symbolic = bool(M.free_symbols) or bool(M.atoms(sp.core.function.AppliedUndef))
    fails, tried = [], 0
    for i in range(trials if symbolic else 1):
        sub = _assumed_substitution(M, rng, spread=i > 0) if symbolic else {}
        a = _numbers(M, sub)
        if a is None:
            continue
        tried += 1
        bad = test(a)
        if bad:
            fails.append((sub, bad))
    if not fails:
        return
    sub, bad = fails[0]
    if not symbolic:
        raise error(name, expected, bad, hint)
    why = prove(M) if prove is not None else None
    if why:
        raise error(name, expected, why, hint)
    at = ", ".join(f"{k} = {float(v):.2g}" for k, v in list(sub.items())[:4])
    if identity and len(fails) == tried:
        raise error(name, expected, f"{bad} at every sampled value of its symbols (e.g. {at})",
                    hint)
    where = "at every sampled value of its symbols" if len(fails) == tried else \
        "but not at other values of its symbols"
    import warnings
    warnings.warn(f"{name}: could not decide whether it is {expected}: {bad} at {at}, {where} "
                  "(give the symbols assumptions, e.g. positive=True, or numbers)",
                  UndecidedWarning, stacklevel=3)


def _constant(e):
    """``e`` simplified when that makes it a number, else None."""
    if e.is_number:
        return e
    e = sp.simplify(e)
    return e if e.is_number else None


def _rotation_test(tol):
    def test(a):
        err = float(np.abs(a.T @ a - np.eye(3)).max())
        if err > max(tol, 1e-7):
            return f"|R^T R - I| = {err:.3g}"
        if np.linalg.det(a) < 0:
            return "det R = -1 (a reflection)"
        return None
    return test


def _rotation_proof(M):
    d = _constant(M.det())
    if d is not None and d != 1:
        return (f"det R = {d} for every value of its symbols"
                + (" (a reflection)" if d == -1 else ""))
    G = M.T * M - sp.eye(3)
    for e in G:
        c = _constant(e)
        if c is not None and c != 0:
            return f"R^T R - I with the entry {c} for every value of its symbols"
    return None


def rotation_matrix(R, name: str, *, tol: float = 1e-9):
    """A 3x3 rotation (R^T R = I, det R = +1), numeric or sympy; returned as given.

    Sympy input with symbols (angles, functions of time) is decided by :func:`decide`: tested
    at three values of its symbols under their assumptions, a failure proven by simplifying
    det R; a reflection for every angle is refused.

    >>> rotation_matrix(sp.diag(1, 1, 2), "f: R")
    Traceback (most recent call last):
    ...
    robodyn.errors.ArgumentError: f: R: expected a rotation matrix (R^T R = I, det R = +1), got |R^T R - I| = 3 (orthonormal columns, no scaling or reflection)
    >>> th = sp.Symbol('theta', real=True)
    >>> rotation_matrix(sp.diag(1, 1, -1) * sp.rot_axis3(th), "homogeneous: R")
    Traceback (most recent call last):
    ...
    robodyn.errors.ArgumentError: homogeneous: R: expected a rotation matrix (R^T R = I, det R = +1), got det R = -1 for every value of its symbols (a reflection) (orthonormal columns, no scaling or reflection)
    """
    want = "a rotation matrix (R^T R = I, det R = +1)"
    hint = "orthonormal columns, no scaling or reflection"
    M = sym_matrix(R, name, (3, 3)) if is_symbolic(R) else matrix(R, (3, 3), name)
    decide(M, name, want, _rotation_test(tol), prove=_rotation_proof, hint=hint)
    return M


def _rotation_numbers(a, name, want, hint, tol):
    bad = _rotation_test(tol)(a)
    if bad:
        raise error(name, want, bad, hint)


def pose_matrix(H, name: str, *, tol: float = 1e-9):
    """A 4x4 homogeneous transform [R p; 0 1] with R a proper rotation (numeric or sympy);
    returned as given.

    >>> pose_matrix(np.diag([1.0, 1.0, -1.0, 1.0]), "adjoint: H")
    Traceback (most recent call last):
    ...
    robodyn.errors.ArgumentError: adjoint: H (rotation block): expected a rotation matrix (R^T R = I, det R = +1), got det R = -1 (a reflection) (orthonormal columns, no scaling or reflection)
    """
    M = sym_matrix(H, name, (4, 4)) if is_symbolic(H) else matrix(H, (4, 4), name)
    last = [M[3, k] for k in range(4)]
    if isinstance(M, sp.MatrixBase):
        ok = all(_constant(sp.sympify(e, strict=True) - w) == 0 for e, w in zip(last, (0, 0, 0, 1)))
    else:
        ok = float(np.abs(np.asarray(last) - [0, 0, 0, 1]).max()) <= max(tol, 1e-7)
    rotation_matrix(M[:3, :3], f"{name} (rotation block)", tol=tol)
    if not ok:
        raise error(name, "last row [0, 0, 0, 1]", f"{np.asarray(last).tolist()}"
                    if not isinstance(M, sp.MatrixBase) else f"{last}",
                    "a homogeneous transform [R p; 0 1]")
    return M


def _norm_proof(target):
    def prove(M):
        n2 = _constant(sp.expand(sum(e * e for e in M)))
        if n2 is not None and n2 != target:
            return f"|v|^2 = {n2} for every value of its symbols"
        return None
    return prove


def unit_vector(v, n: int, name: str, *, tol: float = 1e-9):
    """A vector of length ``n`` and norm 1 (numeric or sympy, decided like a rotation).

    >>> a = sp.Symbol('a', positive=True)
    >>> unit_vector([2 * sp.cos(a), 2 * sp.sin(a), 0], 3, "exp_so3: w")
    Traceback (most recent call last):
    ...
    robodyn.errors.ArgumentError: exp_so3: w: expected a unit vector (norm 1), got |v|^2 = 4 for every value of its symbols (an axis is a direction: normalise it)
    """
    M = vector(v, n, name)

    def test(a):
        nv = float(np.linalg.norm(a))
        return None if abs(nv - 1) <= max(tol, 1e-9) else f"norm {nv:.3g}"
    decide(M, name, "a unit vector (norm 1)", test, prove=_norm_proof(1),
           hint="an axis is a direction: normalise it", identity=False)
    return M


def real_vector(v, n: int, name: str):
    """:func:`vector`, sympy entries also refused when they hold the imaginary unit.

    >>> real_vector([0, 0, sp.I * sp.Symbol('a')], 3, "ad: V")
    Traceback (most recent call last):
    ...
    robodyn.errors.ArgumentTypeError: ad: V: expected real expressions, got I*a (holding the imaginary unit I) (robodyn works with real quantities)
    """
    M = vector(v, n, name)
    if isinstance(M, sp.MatrixBase):
        for e in M:
            _real_expression(e, name)
    return M


def nonzero_vector(v, n: int, name: str, what: str = "direction"):
    """A vector of length ``n`` that is not zero (a ``what`` to be normalised).

    >>> nonzero_vector([0, 0, 0], 3, "prismatic_screw: direction")
    Traceback (most recent call last):
    ...
    robodyn.errors.ArgumentError: prismatic_screw: direction: expected a nonzero direction, got the zero vector (a direction has a length to divide by)
    """
    M = vector(v, n, name)

    def test(a):
        return "the zero vector" if float(np.abs(a).max()) <= 1e-12 else None

    def prove(m):
        zero = _constant(sp.expand(sum(e * e for e in m))) == 0
        return "the zero vector for every value of its symbols" if zero else None
    decide(M, name, f"a nonzero {what}", test, prove=prove,
           hint=f"a {what} has a length to divide by", identity=False)
    return M


def screw_axis(S, name: str, *, tol: float = 1e-9):
    """A screw axis (omega, v): unit omega, or omega = 0 and unit v; numeric or sympy.

    >>> screw_axis([0, 0, 2, 0, 0, 0], "exp_se3: V")
    Traceback (most recent call last):
    ...
    robodyn.errors.ArgumentError: exp_se3: V: expected a screw axis (|omega| = 1, or omega = 0 and |v| = 1), got |omega| = 2 (normalise the axis; a prismatic axis has a unit v)
    """
    M = vector(S, 6, name)

    def test(a):
        nw = float(np.linalg.norm(a[:3]))
        if nw > 0:
            return None if abs(nw - 1) <= max(tol, 1e-9) else f"|omega| = {nw:.3g}"
        nv = float(np.linalg.norm(a[3:]))
        return None if abs(nv - 1) <= max(tol, 1e-9) else f"omega = 0 and |v| = {nv:.3g}"

    def prove(m):
        w2 = _constant(sp.expand(sum(e * e for e in m[:3])))
        if w2 is not None and w2 not in (0, 1):
            return f"|omega|^2 = {w2} for every value of its symbols"
        return None
    decide(M, name, "a screw axis (|omega| = 1, or omega = 0 and |v| = 1)", test, prove=prove,
           hint="normalise the axis; a prismatic axis has a unit v", identity=False)
    return M


def _minors_proof(M, strict):
    """Text proving a symmetric matrix not positive (semi)definite: a principal minor that is
    negative (or, for definiteness, non-positive) for every value of the symbols."""
    import itertools
    n = M.rows
    for k in range(1, min(n, 3) + 1):          # small minors of small entries: bounded work
        for idx in itertools.combinations(range(n), k):
            sub = M.extract(list(idx), list(idx))
            if k > 1 and (n > 6 or sum(sp.count_ops(e) for e in sub) > 60):
                return None
            d = sub.det()
            d = d if d.is_number or k == 1 else sp.factor(sp.expand(d))
            if d.is_negative or (strict and d.is_nonpositive):
                rows = ", ".join(str(i) for i in idx)
                return f"the principal minor of rows {rows} = {d} (negative for every value of " \
                       "its symbols)" if d.is_negative else \
                       f"the principal minor of rows {rows} = {d} <= 0 for every value of its " \
                       "symbols"
    return None


def _inertia_test(tol):
    def test(a):
        try:
            _inertia_numbers(a, "x", tol)
        except ValueError as exc:
            return str(exc).split("got ", 1)[1]
        return None
    return test


def _inertia_proof(M):
    why = _minors_proof(M, strict=False)
    if why or not M.is_diagonal():
        return why
    d = [M[k, k] for k in range(3)]
    for k in range(3):
        gap = sp.factor(d[k] - d[(k + 1) % 3] - d[(k + 2) % 3])
        if gap.is_positive:
            return (f"moments {d} with I{k + 1} - I{(k + 1) % 3 + 1} - I{(k + 2) % 3 + 1} = {gap} "
                    "> 0 for every value of its symbols (the triangle inequality fails)")
    return None


def inertia_matrix(I, name: str, *, tol: float = 1e-9):
    """A 3x3 central inertia matrix: symmetric, positive semi-definite, principal moments
    obeying the triangle inequality (each at most the sum of the other two). Numeric or sympy:
    with symbols it is decided by :func:`decide` under their assumptions (a principal minor
    negative for every value proves it indefinite). Returned as given.

    >>> inertia_matrix(np.diag([1.0, 1.0, 5.0]), "f: inertia")
    Traceback (most recent call last):
    ...
    robodyn.errors.ArgumentError: f: inertia: expected principal moments obeying the triangle inequality (I1 <= I2 + I3 ...), got moments [1.0, 1.0, 5.0] (no rigid body has one moment above the sum of the other two)
    >>> a = sp.Symbol('a', positive=True)
    >>> inertia_matrix(sp.Matrix([[a, 0, 0], [0, 1, 2], [0, 2, 1]]), "RigidBody: inertia")
    Traceback (most recent call last):
    ...
    robodyn.errors.ArgumentError: RigidBody: inertia: expected a rotational inertia (symmetric, positive semi-definite, triangle inequality), got the principal minor of rows 1, 2 = -3 (negative for every value of its symbols)
    """
    if is_symbolic(I):
        M = sym_matrix(I, name, (3, 3))
        if not (M - M.T).applyfunc(sp.expand).is_zero_matrix:
            raise error(name, "a symmetric 3x3 matrix",
                        f"M - M^T = {(M - M.T).applyfunc(sp.expand).tolist()}")
        if M.free_symbols or M.atoms(sp.core.function.AppliedUndef):
            decide(M, name, "a rotational inertia (symmetric, positive semi-definite, triangle "
                   "inequality)", _inertia_test(tol), prove=_inertia_proof)
            return M
        _inertia_numbers(np.array(M.evalf(), dtype=float), name, tol)
        return M
    a = matrix(I, (3, 3), name)
    if float(np.abs(a - a.T).max()) > tol * float(np.abs(a).max()):
        raise error(name, "a symmetric 3x3 matrix",
                    f"asymmetry {float(np.abs(a - a.T).max()):.3g}")
    _inertia_numbers(a, name, tol)
    return a


def _inertia_numbers(a, name, tol):
    es = np.linalg.eigvalsh(0.5 * (a / (s := float(np.abs(a).max()) or 1.0) + a.T / s))
    scale = max(1.0 / s, float(np.abs(es).max()))      # es in units of |a|max: no overflow
    if es[0] < -tol * scale:
        raise error(name, "a positive semi-definite inertia matrix",
                    f"principal moments {np.round(es * s, 12).tolist()}",
                    "moments of inertia are never negative")
    if es[2] > es[0] + es[1] + tol * scale:
        raise error(name, "principal moments obeying the triangle inequality (I1 <= I2 + I3 "
                    "...)", f"moments {np.round(es * s, 12).tolist()}",
                    "no rigid body has one moment above the sum of the other two")


def _spatial_test(tol):
    def test(G):
        m = G[3, 3]
        scale = max(1.0, float(np.abs(G).max()))
        if float(np.abs(G - G.T).max()) > 1e-9 * scale:
            return f"asymmetry {np.abs(G - G.T).max():.3g}"
        if not m > 0:
            return f"the mass G[3, 3] = {m:.3g}"
        if float(np.abs(G[3:, 3:] - m * np.eye(3)).max()) > 1e-9 * scale:
            return "a lower-right block that is not m 1_3"
        C = G[:3, 3:] / m
        if float(np.abs(C + C.T).max()) > 1e-9 * max(1.0, float(np.abs(C).max())):
            return "an upper-right block m[c] that is not skew-symmetric"
        return _inertia_test(tol)(G[:3, :3] + m * (C @ C))
    return test


def spatial_inertia_matrix(G, name: str, *, tol: float = 1e-9):
    """A 6x6 spatial inertia [I_c - m[c]^2, m[c]; m[c]^T, m 1] ordered (omega, v): symmetric,
    positive mass, and a central inertia that is one (:func:`inertia_matrix`); numeric or
    sympy (decided under the symbols' assumptions). Returned as given.

    >>> spatial_inertia_matrix(np.diag([1.0, 1.0, -5.0, 1.0, 1.0, 1.0]), "f: G")
    Traceback (most recent call last):
    ...
    robodyn.errors.ArgumentError: f: G: expected a spatial inertia of a rigid body, got principal moments [-5.0, 1.0, 1.0] (moments of inertia are never negative)
    """
    M = sym_matrix(G, name, (6, 6)) if is_symbolic(G) else matrix(G, (6, 6), name)

    def prove(m):
        if not m[:3, 3:].is_zero_matrix:
            return None
        return _inertia_proof(m[:3, :3]) or (
            f"the mass {m[3, 3]} (negative for every value of its symbols)"
            if m[3, 3].is_negative else None)
    decide(M, name, "a spatial inertia of a rigid body", _spatial_test(tol), prove=prove)
    return M


def surface_geometry(phi, jacobian, tangent, q, name: str, *, rtol: float = 1e-4):
    """A contact surface consistent with itself at the state ``q`` (numbers): its normal row
    ``jacobian(q)`` is not zero and is the gradient of its gap ``phi`` (checked against central
    differences of phi), and its ``tangent(q)`` row, when given, is not parallel to the normal
    (it would count the normal impulse twice). ``name`` is ``"fname: system: surface 'floor'"``.

    >>> surface_geometry(lambda q: q[1], lambda q: [1.0, 0.0], None, [0.0, 1.0], "f: surface 'floor'")
    Traceback (most recent call last):
    ...
    robodyn.errors.ArgumentError: f: surface 'floor': jacobian: expected dphi/dq at the state (the gradient of phi), got jacobian(q) = [1.0, 0.0] where central differences of phi give [0.0, 1.0] at q = [0.0, 1.0] (the normal row must be the derivative of the gap)
    """
    q = np.asarray(q, dtype=float).reshape(-1)
    J = np.asarray(jacobian(q), dtype=float).reshape(-1)
    if J.shape != q.shape or not np.isfinite(J).all():
        return                              # shapes and NaN: refused where the row is read
    nJ = float(np.linalg.norm(J))
    if nJ == 0.0:
        raise error(f"{name}: jacobian", "a nonzero normal row dphi/dq",
                    f"the zero row at q = {np.round(q, 9).tolist()}",
                    "a contact without a normal direction lets the body pass through")
    g = np.empty_like(q)
    for i in range(q.size):
        h = 1e-6 * max(1.0, abs(q[i]))
        e = np.zeros_like(q)
        e[i] = h
        g[i] = (float(phi(q + e)) - float(phi(q - e))) / (2 * h)
    if float(np.linalg.norm(J - g)) > rtol * max(nJ, float(np.linalg.norm(g)), 1e-12) + 1e-7:
        raise error(f"{name}: jacobian", "dphi/dq at the state (the gradient of phi)",
                    f"jacobian(q) = {np.round(J, 9).tolist()} where central differences of phi "
                    f"give {np.round(g, 6).tolist()} at q = {np.round(q, 9).tolist()}",
                    "the normal row must be the derivative of the gap")
    if tangent is None:
        return
    T = np.asarray(tangent(q), dtype=float).reshape(-1)
    if T.shape != q.shape or not np.isfinite(T).all():
        return
    nT = float(np.linalg.norm(T))
    if nT > 0 and abs(float(T @ J)) > (1 - 1e-9) * nT * nJ:
        raise error(f"{name}: tangent", "a tangent row independent of the normal row",
                    f"tangent(q) = {np.round(T, 9).tolist()}, parallel to the normal "
                    f"{np.round(J, 9).tolist()} at q = {np.round(q, 9).tolist()}",
                    "the sliding velocity is not a normal velocity; the impulse would count twice")


def restitution(e, name: str):
    """A coefficient of restitution in [0, 1] (number, or sympy number; a symbol passes).

    >>> restitution(1.5, "f: restitution")
    Traceback (most recent call last):
    ...
    robodyn.errors.ArgumentError: f: restitution: expected a coefficient of restitution in [0, 1], got 1.5 (0: plastic, 1: elastic; above 1 an impact would create energy)
    """
    v = scalar(e, name)
    if isinstance(v, sp.Basic) and not v.is_number:
        if v.is_negative:
            raise error(name, "a coefficient of restitution in [0, 1]", str(v))
        return v
    if not 0 <= float(v) <= 1:
        raise error(name, "a coefficient of restitution in [0, 1]", str(v),
                    "0: plastic, 1: elastic; above 1 an impact would create energy")
    return v


def time_symbol(t, name: str, *, coordinates=(), exprs=()):
    """Check the time Symbol of a derivation: a ``sympy.Symbol``, not one of the
    ``coordinates`` (coordinates and speeds), and no *other* symbol named like it in
    ``exprs`` (a plain ``Symbol('t')`` is not the library's ``Symbol('t', real=True)``: it
    would be treated as a constant). Returns ``t``.

    >>> t1, t2 = sp.Symbol('t'), sp.Symbol('t', real=True)
    >>> time_symbol(t2, "f: t", exprs=[t1 ** 2])
    Traceback (most recent call last):
    ...
    robodyn.errors.ArgumentError: f: t: expected one time symbol, got another Symbol named 't' (assumptions {'commutative': True}) in the expressions (it would be treated as a constant: use the same Symbol object for time everywhere, e.g. robodyn.equations.TIME)
    """
    if not isinstance(t, sp.Symbol):
        raise error(name, "a sympy Symbol for time", describe(t), exc=TypeError)
    coords = list(coordinates)
    if t in coords:
        raise error(name, "a time symbol that is not a coordinate or a speed", f"{t}",
                    "time must have its own symbol")
    for e in exprs:
        if not isinstance(e, (sp.Basic, sp.MatrixBase)):
            continue
        for s in e.free_symbols:
            if s != t and isinstance(s, sp.Symbol) and s.name == t.name:
                raise error(name, "one time symbol",
                            f"another Symbol named {s.name!r} (assumptions "
                            f"{dict(sorted(s.assumptions0.items()))}) in the expressions",
                            "it would be treated as a constant: use the same Symbol object "
                            "for time everywhere, e.g. robodyn.equations.TIME")
    return t


def independent_of(expr, symbols, name: str, why: str):
    """Refuse an expression (or matrix) that contains any of ``symbols``, naming the first.

    >>> u = sp.Symbol('u')
    >>> independent_of(sp.Matrix([[u]]), [u], "f: speeds", "W(q) may not depend on the speeds")
    Traceback (most recent call last):
    ...
    robodyn.errors.ArgumentError: f: speeds: expected expressions free of u, got one containing u (W(q) may not depend on the speeds)
    """
    syms = list(symbols)
    hit = [s for s in syms if isinstance(expr, (sp.Basic, sp.MatrixBase)) and expr.has(s)]
    if hit:
        raise error(name, "expressions free of " + ", ".join(map(str, syms[:6])),
                    f"one containing {hit[0]}", why)
    return expr


def steps(t_final, dt, name: str, *, high: int = MAX_SIZE, item_bytes: int | None = None):
    """The number of steps ``ceil(t_final / dt)``, refused above ``high`` with the figure.

    >>> steps(1.0, 1e-9, "simulate: dt")
    Traceback (most recent call last):
    ...
    robodyn.errors.ArgumentError: simulate: dt: expected at most 10000000 steps, got t_final / dt = 1e+09 steps (raise dt or shorten t_final)
    """
    k = float(t_final) / float(dt)
    if not np.isfinite(k) or k > high:
        raise error(name, f"at most {high} steps", f"t_final / dt = {k:.3g} steps",
                    "raise dt or shorten t_final")
    k = max(1, int(np.ceil(k - 1e-9)))
    if item_bytes is not None and k * item_bytes > MAX_BYTES:
        raise error(name, f"a run whose memory stays below {MAX_BYTES / 1024**3:g} GiB",
                    f"{k} steps", f"it would allocate about {k * item_bytes / 1024**3:.3g} GiB")
    return k
