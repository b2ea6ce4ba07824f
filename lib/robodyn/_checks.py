"""Input checks shared by every public function of :mod:`robodyn`.

All refusals of bad input live here, so that every error message has the same
form: what was expected, what came, and where useful a hint.

Numeric input becomes a ``numpy.ndarray`` of floats; input holding any sympy
expression becomes a ``sympy.Matrix`` (vectors as n x 1 columns). Both kinds
then flow through one code path in the computing modules.
"""
from __future__ import annotations

import numbers

import numpy as np
import sympy as sp

DEFAULT_TOL = 1e-9
"""Default absolute tolerance for numeric tests of structure (rotation, unit axis)."""


def _describe(x) -> str:
    if isinstance(x, np.ndarray):
        return f"an array of shape {x.shape} and dtype {x.dtype}"
    if isinstance(x, sp.MatrixBase):
        return f"a sympy Matrix of shape {x.shape}"
    if isinstance(x, (list, tuple)):
        return f"a {type(x).__name__} of length {len(x)}"
    return f"{type(x).__name__} {x!r}"[:120]


def is_symbolic(x) -> bool:
    """True when ``x`` is, or holds, a sympy expression.

    >>> import sympy as sp
    >>> is_symbolic([1.0, 2.0]), is_symbolic([1.0, sp.Symbol('q')])
    (False, True)
    """
    if isinstance(x, (sp.Basic, sp.MatrixBase)):
        return True
    if isinstance(x, np.ndarray):
        return x.dtype == object and any(isinstance(e, sp.Basic) for e in x.flat)
    if isinstance(x, (list, tuple)):
        return any(is_symbolic(e) for e in x)
    return False


def _to_array(x, name: str) -> np.ndarray:
    """Numeric input to a float array, or TypeError naming what came."""
    if isinstance(x, (str, bytes, dict, set)) or x is None:
        raise TypeError(f"{name}: expected an array of numbers, got {_describe(x)}")
    try:
        a = np.asarray(x, dtype=float)
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"{name}: expected an array of numbers, got {_describe(x)} ({exc})") from None
    return a


def _exact(e):
    """sympify, turning floats into exact rationals (0.5 -> 1/2) so symbolic results stay clean,
    also inside expressions (l1 + 0.5 -> l1 + 1/2)."""
    if isinstance(e, (float, np.floating)):
        return sp.Rational(repr(float(e)))
    e = sp.sympify(e)
    if isinstance(e, sp.Basic) and e.has(sp.Float):
        e = e.xreplace({f: sp.Rational(repr(float(f))) for f in e.atoms(sp.Float)})
    return e


def _to_sympy(x, name: str) -> sp.Matrix:
    try:
        if isinstance(x, sp.MatrixBase):
            return sp.Matrix(x).applyfunc(_exact)
        a = np.asarray(x, dtype=object)
        if a.ndim == 0:
            return sp.Matrix([[_exact(a.item())]])
        if a.ndim == 1:
            return sp.Matrix([_exact(e) for e in a])
        if a.ndim == 2:
            return sp.Matrix([[_exact(e) for e in row] for row in a])
    except (sp.SympifyError, TypeError, ValueError) as exc:
        raise TypeError(f"{name}: expected numbers or sympy expressions, got "
                        f"{_describe(x)} ({exc})") from None
    raise ValueError(f"{name}: expected a vector or a matrix, got {a.ndim} dimensions")


def vector(x, n: int, name: str):
    """Check that ``x`` is a vector of length ``n``.

    Returns ``ndarray(n,)`` of floats, or an ``n x 1`` ``sympy.Matrix`` when ``x``
    holds sympy expressions.

    >>> vector([1, 2, 3], 3, 'w')
    array([1., 2., 3.])
    >>> vector([1, 2], 3, 'w')
    Traceback (most recent call last):
    ...
    ValueError: w: expected a vector of length 3, got shape (2,)
    """
    if is_symbolic(x):
        m = _to_sympy(x, name)
        if m.shape not in ((n, 1), (1, n)):
            raise ValueError(f"{name}: expected a vector of length {n}, got shape {m.shape}")
        return m.reshape(n, 1)
    a = _to_array(x, name)
    if a.ndim == 2 and 1 in a.shape:
        a = a.reshape(-1)
    if a.shape != (n,):
        raise ValueError(f"{name}: expected a vector of length {n}, got shape {a.shape}")
    finite(a, name)
    return a


def matrix(x, shape: tuple[int, int], name: str):
    """Check that ``x`` is a matrix of the given shape; numeric or sympy as for :func:`vector`.

    >>> matrix([[1, 0], [0, 1]], (3, 3), 'R')
    Traceback (most recent call last):
    ...
    ValueError: R: expected a 3x3 matrix, got shape (2, 2)
    """
    want = f"{shape[0]}x{shape[1]}"
    if is_symbolic(x):
        m = _to_sympy(x, name)
        if m.shape != tuple(shape):
            raise ValueError(f"{name}: expected a {want} matrix, got shape {m.shape}")
        return m
    a = _to_array(x, name)
    if a.shape != tuple(shape):
        raise ValueError(f"{name}: expected a {want} matrix, got shape {a.shape}")
    finite(a, name)
    return a


def finite(a: np.ndarray, name: str) -> np.ndarray:
    """Refuse NaN and infinity in a numeric array."""
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name}: expected finite numbers, got NaN or infinity "
                         f"at positions {np.argwhere(~np.isfinite(a)).tolist()[:5]}")
    return a


def scalar(x, name: str):
    """A real number (float) or a sympy expression."""
    if isinstance(x, sp.Basic):
        return x
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (numbers.Real, np.ndarray)):
        raise TypeError(f"{name}: expected a real number or a sympy expression, got {_describe(x)}")
    a = np.asarray(x, dtype=float)
    if a.shape != ():
        raise ValueError(f"{name}: expected a scalar, got shape {a.shape}")
    finite(a, name)
    return float(a)


def tolerance(tol, name: str = "tol") -> float:
    """A positive finite tolerance."""
    t = scalar(tol, name)
    if isinstance(t, sp.Basic) or not t > 0:
        raise ValueError(f"{name}: expected a positive number, got {tol!r}")
    return t


def to_sympy(x, name: str = "value") -> sp.Matrix:
    """Any vector or matrix as a ``sympy.Matrix`` with exact numbers (floats become rationals).

    >>> to_sympy([0.5, 1.0])
    Matrix([
    [1/2],
    [  1]])
    """
    return _to_sympy(x, name)
