"""The value checks shared by every public function of :mod:`robodyn`: numbers, arrays, text,
symbols, finiteness, bounded sizes, the overflow guard and the error helper. What a value
*means* (a rotation, an inertia, a metric, ...) is checked by :mod:`robodyn._meaning_checks`,
which stands on this module.

All refusals of bad input live here and in :mod:`robodyn._meaning_checks`, so that every error
message has one form::

    fname: arg: expected X, got Y (hint)

``name`` below is always the ``"fname: arg"`` part (e.g. ``"crba: q"``); a longer label such
as ``"crba: q (one value per joint of the 3-joint chain)"`` is fine too.

What the layer guarantees
-------------------------
* Numeric input becomes a **real float64 ndarray in native byte order**: integers are
  converted, big-endian or non-contiguous arrays are copied, read-only arrays stay read-only
  (nothing here writes). Complex, boolean, object (non-number), string and masked arrays are
  refused with a ``TypeError``; NaN and infinity with a ``ValueError``. Only arrays that came
  through :func:`real_array` (or :func:`vector`, :func:`matrix`, :func:`batch`) may be handed
  to compiled code.
* Input holding any sympy expression becomes a ``sympy.Matrix`` (vectors as n x 1 columns)
  with exact numbers; its *number* entries (no free symbols) are checked like floats: complex,
  infinite and NaN numbers are refused. Both kinds then flow through one code path.
* Scalars, tolerances, sizes and choices have their own checks with sane bounds, so that an
  absurd size is refused with the memory it would take instead of being allocated.

Public API (one line each; see each docstring)
----------------------------------------------
``error(name, expected, got, hint=None, exc=ValueError)`` -- the exception, in the house format
``refusal(exc, message)`` -- the same for a message written out (raise sites not using error)
``describe(x)`` -- a short description of a value for "got ..."
``is_symbolic(x)`` -- whether ``x`` holds sympy expressions
``real_array(x, name, *, shape=None, hint=None, allow_nonfinite=False)`` -- safe float64 array
``vector(x, n, name, hint=None)`` -- a length-n vector (numeric or sympy)
``matrix(x, shape, name, hint=None)`` -- a matrix of a given shape (numeric or sympy)
``batch(x, n, name, hint=None)`` -- shape (n,) or (B, n): returns (single, array (B, n))
``finite(a, name)`` -- refuse NaN/inf in an array
``scalar(x, name, *, low=None, high=None, strict_low=False, hint=None)`` -- real number/sympy
``positive(x, name, *, high=None, hint=None)`` -- a number > 0 (sympy numbers checked too)
``nonnegative(x, name, *, high=None, hint=None)`` -- a number >= 0
``tolerance(tol, name="tol", *, upper=1.0)`` -- 0 < tol <= upper, a float
``size(x, name, *, low=1, high=MAX_SIZE, item_bytes=None, hint=None)`` -- a bounded int
``choice(x, name, options)`` -- one string of a fixed set
``flag(x, name)`` -- a bool
``symbol_list(xs, name, n=None)`` -- distinct sympy symbols (or functions of t)
``distinct_symbols(groups, fname)`` -- no symbol shared between/within named groups
``to_sympy(x, name="value")`` -- a sympy Matrix with exact numbers
"""
from __future__ import annotations

import contextlib
import numbers
import sys

import numpy as np
import sympy as sp

from .errors import CALL, ArgumentError, Call, ArgumentTypeError, ResultError, house_message  # noqa: F401

__all__ = ["refusal", "DEFAULT_TOL", "MAX_SIZE", "MAX_BYTES", "error", "describe", "is_symbolic",
           "real_array", "vector", "matrix", "batch", "finite", "scalar", "positive",
           "nonnegative", "tolerance", "size", "choice", "flag", "symbol_list",
           "distinct_symbols", "own_symbols", "to_sympy", "no_text", "expression", "sym_matrix"]

DEFAULT_TOL = 1e-9
"""Default absolute tolerance for numeric tests of structure (rotation, unit axis)."""

MAX_SIZE = 10**7
"""Default upper bound of a count (steps, samples, points) checked by :func:`size`."""

MAX_BYTES = 2 * 1024**3
"""Refuse a requested allocation above this many bytes (2 GiB) in :func:`size`."""


# --------------------------------------------------------------------------
# messages
# --------------------------------------------------------------------------

def describe(x) -> str:
    """A short description of ``x`` for the "got ..." part of a message.

    >>> describe(np.zeros((2, 3)))
    'an array of shape (2, 3) and dtype float64'
    >>> describe([1, 2])
    'a list of length 2'
    """
    if isinstance(x, np.ma.MaskedArray):
        return f"a masked array of shape {x.shape} and dtype {x.dtype}"
    if isinstance(x, np.ndarray):
        return f"an array of shape {x.shape} and dtype {x.dtype}"
    if isinstance(x, sp.MatrixBase):
        return f"a sympy Matrix of shape {x.shape}"
    if isinstance(x, (list, tuple)):
        return f"a {type(x).__name__} of length {len(x)}"
    return f"{type(x).__name__} {x!r}"[:120]


_describe = describe          # the historical private name, used by every module


def error(name: str, expected: str, got, hint: str | None = None, exc=ValueError):
    """The exception for a refused argument, in the house format (``raise error(...)``).

    ``got`` is a string, or any value (then :func:`describe` describes it).

    >>> raise error("crba: q", "a vector of length 2", [1, 2, 3], "one value per joint")
    Traceback (most recent call last):
    ...
    robodyn.errors.ArgumentError: crba: q: expected a vector of length 2, got a list of length 3 (one value per joint)
    """
    got = got if isinstance(got, str) else describe(got)
    return refusal(exc, f"{name}: expected {expected}, got {got}" + (f" ({hint})" if hint else ""))


def refusal(exc, message: str):
    """The exception for a refusal whose house-format ``message`` is written out, e.g.
    ``raise refusal(ValueError, f"{fname}: q: expected ..., got ...")``.

    ``ValueError`` gives :class:`robodyn.errors.ArgumentError`, ``TypeError``
    :class:`~robodyn.errors.ArgumentTypeError` (other classes are kept), and the message names
    the function the reader called when an inner function refused the reader's argument of the
    same name (:func:`robodyn.errors.house_message`; decided here, where the error is raised).

    >>> raise refusal(TypeError, "f: x: expected a number, got str 'a'")
    Traceback (most recent call last):
    ...
    robodyn.errors.ArgumentTypeError: f: x: expected a number, got str 'a'
    """
    msg, cls = house_message(message, exc)
    return cls(msg)


def _hinted(name, hint):
    return name if not hint else f"{name} ({hint})"


# --------------------------------------------------------------------------
# symbolic input
# --------------------------------------------------------------------------

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


def _exact(e):
    """sympify, turning floats into exact rationals (0.5 -> 1/2) so symbolic results stay clean,
    also inside expressions (l1 + 0.5 -> l1 + 1/2)."""
    if isinstance(e, (float, np.floating)):
        if not np.isfinite(e):
            return sp.nan if np.isnan(e) else (sp.oo if e > 0 else -sp.oo)
        return sp.Rational(repr(float(e)))
    if isinstance(e, (bool, np.bool_, str, bytes)):
        raise refusal(TypeError, f"a {type(e).__name__} is not a number")
    e = sp.sympify(e, strict=True)
    if isinstance(e, sp.Basic) and e.has(sp.Float):
        e = e.xreplace({f: sp.Rational(repr(float(f))) for f in e.atoms(sp.Float)})
    return e


def _check_sym_number(e, name):
    """Refuse a sympy entry that is a number but not a finite real one (I, zoo, oo, nan)."""
    if not isinstance(e, sp.Basic):
        raise error(name, "numbers or sympy expressions", describe(e), exc=TypeError)
    if e.has(sp.zoo, sp.oo, -sp.oo, sp.nan):
        raise error(name, "finite numbers or expressions", f"{e}")
    if e.is_number:
        if e.is_real is False or (e.is_real is None and sp.im(sp.N(e)) != 0):
            raise error(name, "real numbers", f"the complex number {e}",
                        "robodyn works with real quantities", exc=TypeError)
    return e


def _to_sympy(x, name: str) -> sp.Matrix:
    try:
        if isinstance(x, sp.MatrixBase):
            m = sp.Matrix(x).applyfunc(_exact)
        else:
            a = np.asarray(x, dtype=object)
            if a.ndim == 0:
                m = sp.Matrix([[_exact(a.item())]])
            elif a.ndim == 1:
                m = sp.Matrix([_exact(e) for e in a])
            elif a.ndim == 2:
                m = sp.Matrix([[_exact(e) for e in row] for row in a])
            else:
                raise error(name, "a vector or a matrix", f"{a.ndim} dimensions")
    except (sp.SympifyError, TypeError, ValueError) as exc:
        if str(exc).startswith(name):
            raise
        raise error(name, "numbers or sympy expressions", x, str(exc), exc=TypeError) from exc
    for e in m:
        _check_sym_number(e, name)
    return m


def to_sympy(x, name: str = "value") -> sp.Matrix:
    """Any vector or matrix as a ``sympy.Matrix`` with exact numbers (floats become rationals).

    >>> to_sympy([0.5, 1.0])
    Matrix([
    [1/2],
    [  1]])
    >>> to_sympy([sp.I, 1], "v")
    Traceback (most recent call last):
    ...
    robodyn.errors.ArgumentTypeError: v: expected real numbers, got the complex number I (robodyn works with real quantities)
    """
    return _to_sympy(x, name)


# --------------------------------------------------------------------------
# numeric arrays
# --------------------------------------------------------------------------

def _refuse_kind(a, x, name, hint):
    kind = a.dtype.kind
    if kind in "iuf":
        return
    what = {"c": "a complex", "b": "a boolean", "U": "a string", "S": "a bytes",
            "O": "an object", "M": "a datetime", "m": "a timedelta", "V": "a structured"
            }.get(kind, "a non-numeric")
    raise error(name, "an array of numbers (real: float or integer)",
                f"{what} array of dtype {a.dtype}" if isinstance(x, np.ndarray)
                else f"{describe(x)} holding {what[2:] if what.startswith('a ') else what[3:]} "
                     f"values (dtype {a.dtype})",
                hint or ("robodyn works with real quantities; take .real explicitly if the "
                         "imaginary part is meant to be dropped" if kind == "c" else None),
                exc=TypeError)


def _as_numeric(x, name, hint=None) -> np.ndarray:
    """Any numeric input as an ndarray (not yet float), refusing what is not real numbers."""
    if x is None or isinstance(x, (str, bytes, dict, set, frozenset)):
        raise error(name, "an array of numbers", describe(x), hint, exc=TypeError)
    if isinstance(x, np.ma.MaskedArray) or isinstance(x, (list, tuple)) and any(
            isinstance(e, np.ma.MaskedArray) for e in x):
        raise error(name, "a plain array of real numbers", x,
                    "masked arrays are refused: fill or drop the masked values first "
                    "(x.filled(...) or x.compressed())", exc=TypeError)
    if is_symbolic(x):
        x = _sympy_numbers(x)
        if x is None:
            raise error(name, "numbers", "sympy expressions", hint or
                        "this is a numeric function: substitute numbers first", exc=TypeError)
    try:
        a = np.asarray(x)
    except (TypeError, ValueError) as exc:     # ragged lists and the like
        raise error(name, "an array of real numbers", x, str(exc).split("\n")[0],
                    exc=TypeError if not isinstance(exc, ValueError) else ValueError) from exc
    if a.dtype.kind == "O":
        flat = list(a.flat)
        if all(isinstance(e, numbers.Real) and not isinstance(e, (bool, np.bool_))
               for e in flat):
            a = np.array([float(e) for e in flat], dtype=np.float64).reshape(a.shape)
        elif flat and all(isinstance(e, (list, tuple, np.ndarray)) for e in flat):
            raise error(name, "a rectangular array of real numbers", x,
                        "rows of different lengths", exc=ValueError)
    _refuse_kind(a, x, name, hint)
    return a


def _sympy_numbers(x):
    """Input holding sympy *numbers* only (``Integer``, ``Rational``, ``Float``, ``pi``) as an
    object array of floats, for numeric code; None when a symbol or a non-real number is in it.
    """
    try:
        a = np.array(x.tolist() if isinstance(x, sp.MatrixBase) else x, dtype=object)
    except (TypeError, ValueError):
        return None
    out = np.empty(a.shape, dtype=object)
    for i, e in enumerate(a.flat):
        if isinstance(e, sp.Basic):
            if not (e.is_number and e.is_real) or e.has(sp.zoo, sp.nan, sp.oo, -sp.oo):
                return None
            e = float(e)
        out.flat[i] = e
    return out


F64 = np.dtype(np.float64)
SHORT_SIZE = 48
"""The largest array that :func:`short_finite` reads (and the boundary's short path scans);
a larger one goes to numpy's ``isfinite``."""

TOP = 7 if sys.byteorder == "little" else 0
"""Where the byte holding a native float64's sign and its seven highest exponent bits sits in
its eight."""


def short_finite(v, top=TOP):
    """Whether a native float64 array of at most :data:`SHORT_SIZE` entries is plainly finite,
    read from the bytes of its numbers: a double is NaN or infinite only when all 11 bits of
    its exponent are ones, so its byte of sign and seven highest exponent bits is then 0x7F or
    0xFF. No entry has such a byte: all are finite. One has: it is NaN, infinite, or of
    magnitude at least 2**1009 (about 5e303), and the caller decides by the exact test. Two
    byte searches over one byte per entry (``tobytes`` copies in C order, whatever the shape or
    strides): a fifth of ``np.isfinite(v).all()``; the boundary's short path does the same
    inline.

    >>> short_finite(np.array([[0.0, -0.0], [5e-324, -1e303]]))
    True
    >>> [short_finite(np.array([1.0, x])) for x in (np.inf, -np.inf, np.nan, -np.nan, 1e308)]
    [False, False, False, False, False]
    """
    s = v.tobytes()[top::8]
    return 127 not in s and 255 not in s


def _fast(x):
    """``x`` as an ndarray when it plainly is real numbers (a plain real ndarray, or a list or
    tuple that numpy reads as one), else None: the cheap path of every check. Sympy objects,
    strings and None make object or string arrays, so they never take it."""
    if type(x) is np.ndarray:
        a = x
    elif type(x) in (list, tuple):
        if any(isinstance(e, np.ma.MaskedArray) for e in x):
            return None                     # numpy would drop the masks: the slow path refuses
        try:
            a = np.asarray(x)
        except (TypeError, ValueError):
            return None
    else:
        return None
    return a if a.dtype.kind in "iuf" else None


def real_array(x, name: str, *, shape=None, hint: str | None = None,
               allow_nonfinite: bool = False) -> np.ndarray:
    """``x`` as a real float64 ndarray, native byte order, C-contiguous: safe for compiled code.

    Parameters
    ----------
    x : array_like of real numbers (float, integer; any byte order or memory layout)
    name : str, ``"fname: arg"`` for messages
    shape : tuple, optional
        the required shape; ``None`` entries match any length (e.g. ``(None, 3)``).
    hint : str, optional, appended to messages in parentheses
    allow_nonfinite : bool, accept NaN and infinity (default: refuse them)

    Returns
    -------
    ndarray of float64. The input array itself when it already qualifies (never modified);
    otherwise a converted copy.

    Raises
    ------
    TypeError
        complex, boolean, string, object (non-number) or masked input; sympy expressions.
    ValueError
        wrong shape, ragged lists, NaN or infinity.

    Examples
    --------
    >>> real_array(np.array([1, 2], dtype='>f8'), "f: x").dtype.byteorder in "=<|"
    True
    >>> real_array([1 + 2j, 0], "f: x")
    Traceback (most recent call last):
    ...
    robodyn.errors.ArgumentTypeError: f: x: expected an array of numbers (real: float or integer), got a list of length 2 holding complex values (dtype complex128) (robodyn works with real quantities; take .real explicitly if the imaginary part is meant to be dropped)
    >>> real_array(np.ma.masked_array([1.0, 2.0], mask=[0, 1]), "f: x")
    Traceback (most recent call last):
    ...
    robodyn.errors.ArgumentTypeError: f: x: expected a plain array of real numbers, got a masked array of shape (2,) and dtype float64 (masked arrays are refused: fill or drop the masked values first (x.filled(...) or x.compressed()))
    >>> real_array([[1, 2]], "f: x", shape=(None, 3))
    Traceback (most recent call last):
    ...
    robodyn.errors.ArgumentError: f: x: expected shape (*, 3), got shape (1, 2)
    """
    a = _fast(x)
    if a is None:
        a = _as_numeric(x, name, hint)
    if not (type(a) is np.ndarray and a.dtype == np.float64 and a.dtype.isnative
            and a.flags.c_contiguous and a.flags.aligned):
        a = np.ascontiguousarray(a, dtype=np.float64).reshape(np.shape(a))   # 0-d stays 0-d
    if shape is not None:
        shape = tuple(shape)
        if a.ndim != len(shape) or any(s is not None and s != d for s, d in zip(shape, a.shape)):
            want = "(" + ", ".join("*" if s is None else str(s) for s in shape) + \
                   ("," if len(shape) == 1 else "") + ")"
            raise error(name, f"shape {want}", f"shape {a.shape}", hint)
    if not allow_nonfinite:
        finite(a, _hinted(name, hint) if hint and False else name)
    return a


# kept for the modules that call it: numeric input to a float array, or TypeError
def _to_array(x, name: str) -> np.ndarray:
    return real_array(x, name, allow_nonfinite=True)


def finite(a: np.ndarray, name: str) -> np.ndarray:
    """Refuse NaN and infinity in a numeric array (``a`` must already be a real array).

    >>> finite(np.array([1.0, np.inf]), "f: x")
    Traceback (most recent call last):
    ...
    robodyn.errors.ArgumentError: f: x: expected finite numbers, got NaN or infinity at positions [[1]]
    """
    a = np.asarray(a)
    if a.dtype is F64 and a.size <= SHORT_SIZE and short_finite(a):
        return a
    if a.dtype.kind not in "iuf":
        _refuse_kind(a, a, name, None)
    if not np.isfinite(a).all():
        raise refusal(ValueError, f"{name}: expected finite numbers, got NaN or infinity "
                         f"at positions {np.argwhere(~np.isfinite(a)).tolist()[:5]}")
    return a


def vector(x, n: int, name: str, hint: str | None = None):
    """Check that ``x`` is a vector of length ``n``.

    Returns ``ndarray(n,)`` of float64 (native byte order, contiguous), or an ``n x 1``
    ``sympy.Matrix`` when ``x`` holds sympy expressions (number entries checked like floats).
    A row or column matrix of length n is accepted as a vector.

    >>> vector([1, 2, 3], 3, 'w')
    array([1., 2., 3.])
    >>> vector([1, 2], 3, 'w')
    Traceback (most recent call last):
    ...
    robodyn.errors.ArgumentError: w: expected a vector of length 3, got shape (2,)
    >>> vector(['1', '2', '3'], 3, 'f: w')
    Traceback (most recent call last):
    ...
    robodyn.errors.ArgumentTypeError: f: w: expected an array of numbers (real: float or integer), got a list of length 3 holding string values (dtype <U1)
    """
    a = _fast(x)
    if a is None and is_symbolic(x):
        m = _to_sympy(x, name)
        if m.shape not in ((n, 1), (1, n)):
            raise error(name, f"a vector of length {n}", f"shape {m.shape}", hint)
        return m.reshape(n, 1)
    a = real_array(x if a is None else a, name, hint=hint, allow_nonfinite=True)
    if a.ndim == 2 and 1 in a.shape:
        a = a.reshape(-1)
    if a.shape != (n,):
        raise error(name, f"a vector of length {n}", f"shape {a.shape}", hint)
    finite(a, name)
    return a


def matrix(x, shape: tuple[int, int], name: str, hint: str | None = None):
    """Check that ``x`` is a matrix of the given shape; numeric or sympy as for :func:`vector`.

    >>> matrix([[1, 0], [0, 1]], (3, 3), 'R')
    Traceback (most recent call last):
    ...
    robodyn.errors.ArgumentError: R: expected a 3x3 matrix, got shape (2, 2)
    """
    want = f"a {shape[0]}x{shape[1]} matrix"
    a = _fast(x)
    if a is None and is_symbolic(x):
        m = _to_sympy(x, name)
        if m.shape != tuple(shape):
            raise error(name, want, f"shape {m.shape}", hint)
        return m
    a = real_array(x if a is None else a, name, hint=hint, allow_nonfinite=True)
    if a.shape != tuple(shape):
        raise error(name, want, f"shape {a.shape}", hint)
    finite(a, name)
    return a


def batch(x, n: int, name: str, hint: str | None = None):
    """A state of shape ``(n,)`` or a batch of shape ``(B, n)``.

    Returns ``(single, a)`` with ``a`` a safe float64 array of shape ``(B, n)`` (``B = 1`` for a
    single state).

    >>> batch([[0, 1], [2, 3]], 2, "f: q")[1].shape
    (2, 2)
    >>> batch(np.zeros((2, 2, 2)), 2, "f: q")
    Traceback (most recent call last):
    ...
    robodyn.errors.ArgumentError: f: q: expected shape (2,) for one state or (B, 2) for a batch of B states, got shape (2, 2, 2)
    """
    a = real_array(x, name, hint=hint, allow_nonfinite=True)
    if a.shape == (n,):
        single, a = True, a[None]
    elif a.ndim == 2 and a.shape[1] == n:
        single = False
    else:
        raise error(name, f"shape ({n},) for one state or (B, {n}) for a batch of B states",
                    f"shape {a.shape}", hint)
    finite(a, name)
    return single, a


# --------------------------------------------------------------------------
# scalars, sizes, choices
# --------------------------------------------------------------------------

def scalar(x, name: str, *, low=None, high=None, strict_low: bool = False,
           hint: str | None = None):
    """A real number (returned as float) or a sympy expression (returned as is).

    A sympy *number* (no free symbols) is checked like a float: it must be real and finite
    and within the bounds; an expression with free symbols cannot be checked and passes.
    ``low``/``high`` are inclusive bounds (``strict_low=True`` makes ``low`` exclusive).

    >>> scalar(2, "f: x")
    2.0
    >>> scalar(sp.Integer(-1), "f: mass", low=0, strict_low=True)
    Traceback (most recent call last):
    ...
    robodyn.errors.ArgumentError: f: mass: expected a positive number, got -1
    >>> scalar("1", "f: x")
    Traceback (most recent call last):
    ...
    robodyn.errors.ArgumentTypeError: f: x: expected a real number or a sympy expression, got str '1'
    """
    if isinstance(x, sp.Basic):
        if isinstance(x, (sp.Float, sp.Rational)) or x.is_number:
            _check_sym_number(x, name)
            v = x
            if x.is_number and x.is_real is not False:
                try:
                    _bounds(float(x), name, low, high, strict_low, hint, shown=x)
                except TypeError:
                    pass
            return x if not isinstance(x, sp.Float) else x
        if isinstance(x, (sp.Expr,)) or isinstance(x, sp.Symbol):
            return _symbolic_bounds(x, name, low, strict_low, hint)
        raise error(name, "a real number or a sympy expression", describe(x), hint, exc=TypeError)
    if isinstance(x, np.ndarray) and x.shape == () and x.dtype.kind in "iuf":
        x = x.item()
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Real):
        if isinstance(x, (complex, np.complexfloating)):
            raise error(name, "a real number", describe(x), hint or "robodyn works with real quantities",
                        exc=TypeError)
        if isinstance(x, (np.ndarray, list, tuple)):
            raise error(name, "a real number (a scalar)", describe(x), hint, exc=TypeError)
        raise error(name, "a real number or a sympy expression", describe(x), hint, exc=TypeError)
    try:
        v = float(x)
    except OverflowError as exc:        # an int or Fraction beyond float64 (10**400)
        raise error(name, "finite numbers", "a number beyond the float64 range", hint) from exc
    if not np.isfinite(v):
        raise error(name, "finite numbers", repr(v), hint)
    _bounds(v, name, low, high, strict_low, hint)
    return v


def _symbolic_bounds(x, name, low, strict_low, hint):
    """A symbolic scalar refused when its symbols' assumptions *prove* it out of range: not
    real (``I*l``), or negative where a positive or non-negative quantity goes (``-m`` with
    ``m`` positive). Undecided signs (plain symbols) pass."""
    if x.is_real is False or x.has(sp.I):
        raise error(name, "a real expression", f"{x} (not real under its symbols' assumptions)",
                    hint or "robodyn works with real quantities", exc=TypeError)
    if low == 0 and strict_low and x.is_positive is False:
        raise error(name, "a positive quantity", f"{x} (not positive under its symbols' "
                    "assumptions)", hint)
    if low == 0 and not strict_low and x.is_nonnegative is False:
        raise error(name, "a non-negative quantity", f"{x} (negative under its symbols' "
                    "assumptions)", hint)
    return x


def _bounds(v, name, low, high, strict_low, hint, shown=None):
    shown = repr(v) if shown is None else str(shown)
    if low is not None and (v <= low if strict_low else v < low):
        want = ("a positive number" if strict_low else "a non-negative number") if low == 0 \
            else f"a number {'>' if strict_low else '>='} {low:g}"
        raise error(name, want, shown, hint)
    if high is not None and v > high:
        raise error(name, f"a number <= {high:g}", shown, hint)


def positive(x, name: str, *, high=None, hint: str | None = None):
    """A number > 0 (float, or a sympy expression; sympy numbers are checked too).

    >>> positive(0.0, "f: mass")
    Traceback (most recent call last):
    ...
    robodyn.errors.ArgumentError: f: mass: expected a positive number, got 0.0
    """
    return scalar(x, name, low=0, strict_low=True, high=high, hint=hint)


def nonnegative(x, name: str, *, high=None, hint: str | None = None):
    """A number >= 0 (float, or a sympy expression; sympy numbers are checked too).

    >>> nonnegative(-1, "f: damping")
    Traceback (most recent call last):
    ...
    robodyn.errors.ArgumentError: f: damping: expected a non-negative number, got -1.0
    """
    return scalar(x, name, low=0, high=high, hint=hint)


def tolerance(tol, name: str = "tol", *, upper: float | None = 1.0) -> float:
    """A positive finite tolerance, a float, at most ``upper`` (``None``: no upper bound).

    >>> tolerance(1e-8, "f: tol")
    1e-08
    >>> tolerance(-1e-6, "log_so3: tol")
    Traceback (most recent call last):
    ...
    robodyn.errors.ArgumentError: log_so3: tol: expected a positive number, got -1e-06 (a tolerance: a small positive number)
    >>> tolerance(5, "f: tol")
    Traceback (most recent call last):
    ...
    robodyn.errors.ArgumentError: f: tol: expected a number <= 1, got 5.0 (a tolerance: a small positive number)
    """
    if isinstance(tol, sp.Basic) and not tol.is_number:
        raise error(name, "a number", tol, "a tolerance cannot be symbolic", exc=TypeError)
    return float(scalar(tol, name, low=0, strict_low=True, high=upper,
                        hint="a tolerance: a small positive number"))


def size(x, name: str, *, low: int = 1, high: int | None = MAX_SIZE,
         item_bytes: int | None = None, hint: str | None = None) -> int:
    """A count (steps, samples, points): an integer in ``[low, high]``.

    ``item_bytes`` (bytes that each unit will allocate) also refuses a count whose memory
    would exceed :data:`MAX_BYTES`, naming that memory. Python and numpy integers (and sympy
    Integers) are accepted; floats (even ``3.0``), booleans and non-numbers are not.

    >>> size(100, "f: n_points")
    100
    >>> size(10**9, "geodesic: n_points", item_bytes=8 * 24)
    Traceback (most recent call last):
    ...
    robodyn.errors.ArgumentError: geodesic: n_points: expected at most 10000000, got 1000000000 (it would allocate about 179 GiB)
    >>> size(2.5, "f: steps")
    Traceback (most recent call last):
    ...
    robodyn.errors.ArgumentTypeError: f: steps: expected an integer, got float 2.5
    """
    if isinstance(x, numbers.Rational) and not isinstance(x, (numbers.Integral, sp.Basic)) \
            and x.denominator == 1:
        x = int(x)                             # Fraction(4, 1) is the integer 4
    if isinstance(x, (bool, np.bool_)) or not (isinstance(x, numbers.Integral) or
                                               isinstance(x, sp.Basic) and x.is_Integer):
        raise error(name, "an integer", describe(x), hint, exc=TypeError)
    v = int(x)
    if v < low:
        raise error(name, f"an integer >= {low}", str(v), hint)
    if high is not None and v > high:
        mem = "" if item_bytes is None else \
            f"it would allocate about {min(v, 10**300) * item_bytes / 1024**3:.3g} GiB"
        raise error(name, f"at most {high}", str(v) if v < 10**100 else
                    "an integer of more than 100 digits", hint or mem or None)
    if item_bytes is not None and v * item_bytes > MAX_BYTES:
        raise error(name, f"a size whose memory stays below {MAX_BYTES / 1024**3:g} GiB",
                    str(v), f"it would allocate about {v * item_bytes / 1024**3:.3g} GiB")
    return v


def choice(x, name: str, options):
    """One of a fixed set of strings.

    >>> choice("rk45", "simulate: method", ("rk4", "rk45"))
    'rk45'
    >>> choice("euler", "simulate: method", ("rk4", "rk45"))
    Traceback (most recent call last):
    ...
    robodyn.errors.ArgumentError: simulate: method: expected one of 'rk4', 'rk45', got 'euler'
    """
    opts = ", ".join(repr(o) for o in options)
    if not isinstance(x, str):
        raise error(name, f"one of {opts}", describe(x), exc=TypeError)
    if x not in options:
        raise error(name, f"one of {opts}", repr(x))
    return x


def flag(x, name: str) -> bool:
    """A boolean (Python or numpy bool; 0/1 are refused: say True or False).

    >>> flag("yes", "f: split")
    Traceback (most recent call last):
    ...
    robodyn.errors.ArgumentTypeError: f: split: expected True or False, got str 'yes'
    """
    if not isinstance(x, (bool, np.bool_)):
        raise error(name, "True or False", describe(x), exc=TypeError)
    return bool(x)


# --------------------------------------------------------------------------
# symbols of a derivation
# --------------------------------------------------------------------------


def _is_coordinate(s) -> bool:
    return isinstance(s, sp.Symbol) or (isinstance(s, sp.core.function.AppliedUndef)
                                        and all(isinstance(a, sp.Symbol) for a in s.args))


def symbol_list(xs, name: str, n: int | None = None) -> list:
    """Distinct sympy symbols (or functions of time such as ``q(t)``), as a list.

    >>> a, b = sp.symbols("a b")
    >>> symbol_list([a, b], "f: q")
    [a, b]
    >>> symbol_list([a, a], "f: q")
    Traceback (most recent call last):
    ...
    robodyn.errors.ArgumentError: f: q: expected distinct symbols, got a repeated: [a, a] (each coordinate needs its own symbol)
    """
    if isinstance(xs, sp.MatrixBase):
        xs = list(xs)
    elif isinstance(xs, (sp.Symbol, sp.core.function.AppliedUndef)):
        xs = [xs]
    if not isinstance(xs, (list, tuple)):
        raise error(name, "a list of sympy symbols", describe(xs), exc=TypeError)
    xs = list(xs)
    if n is not None and len(xs) != n:
        raise error(name, f"{n} symbols", f"{len(xs)}")
    for s in xs:
        if not _is_coordinate(s):
            raise error(name, "sympy symbols (or functions of time like q(t))", describe(s),
                        exc=TypeError)
    seen = set()
    for s in xs:
        if s in seen:
            raise error(name, "distinct symbols", f"{s} repeated: {xs}",
                        "each coordinate needs its own symbol")
        seen.add(s)
    return xs


def distinct_symbols(groups: dict, fname: str) -> dict:
    """Check several symbol lists (e.g. ``{"q": q, "qd": qd}``): each distinct, none shared.

    >>> q1, q2 = sp.symbols("q1 q2")
    >>> distinct_symbols({"q": [q1, q2], "qd": [q2, q1]}, "compile_equations")
    Traceback (most recent call last):
    ...
    robodyn.errors.ArgumentError: compile_equations: qd: expected symbols different from those of q, got q2, q1 in both (a velocity needs its own symbol, or the code reads the wrong variable)
    """
    out, owner = {}, {}
    for key, xs in groups.items():
        out[key] = symbol_list(xs, f"{fname}: {key}")
        shared = [s for s in out[key] if s in owner]
        if shared:
            raise error(f"{fname}: {key}", f"symbols different from those of {owner[shared[0]]}",
                        ", ".join(map(str, shared)) + " in both",
                        "a velocity needs its own symbol, or the code reads the wrong variable")
        owner.update({s: key for s in out[key]})
    return out


def own_symbols(groups: dict, fname: str) -> None:
    """No symbol shared between the groups of coordinates, speeds and accelerations
    (``{"q": q, "qd": qd}``): :func:`distinct_symbols` on the plain symbols of each group (an
    entry that is a number or an expression, or one repeated within its group, is left to the
    function: C(q, qd) may be evaluated at qd = (u, u)). Every function of
    :mod:`robodyn.lagrange` and :mod:`robodyn.constraints` taking q and qd (or u) calls it.

    >>> q1, q2 = sp.symbols('q1 q2')
    >>> own_symbols({"q": [q1, q2], "qd": [q1, 0]}, "f")
    Traceback (most recent call last):
    ...
    robodyn.errors.ArgumentError: f: qd: expected symbols different from those of q, got q1 in both (a velocity needs its own symbol, or the code reads the wrong variable)
    """
    plain = {}
    for key, xs in groups.items():
        xs = list(xs) if isinstance(xs, (list, tuple, sp.MatrixBase, np.ndarray)) else [xs]
        plain[key] = list(dict.fromkeys(e for e in xs if isinstance(e, sp.Basic)
                                        and _is_coordinate(e)))
    distinct_symbols(plain, fname)


# --------------------------------------------------------------------------
# text and expressions (Parts III-VI, issue 19)
# --------------------------------------------------------------------------

_CONTAINERS = (list, tuple, set, frozenset)


def no_text(x, name: str, _depth: int = 0):
    """Refuse ``x`` when it is, or holds at any depth, a ``str`` or ``bytes`` (returns ``x``).

    Walks lists, tuples, sets, dict values and keys, object ndarrays and sympy matrices:
    ``sympy.Matrix``, ``sympify`` and ``sp.S`` *evaluate* strings as Python code, so no string
    may reach them. Expressions are made with sympy (``sp.Symbol``, ``sp.sin`` ...); text is
    read only by :func:`robodyn.answers.parse_expression`.

    >>> no_text([1, [sp.Symbol('x'), 2]], "f: M")
    [1, [x, 2]]
    >>> no_text([[1, "__import__('os')"]], "f: M")
    Traceback (most recent call last):
    ...
    robodyn.errors.ArgumentTypeError: f: M: expected sympy expressions or numbers, got the string "__import__('os')" (strings are never evaluated: build expressions with sympy, or read text with answers.parse_expression)
    """
    hint = ("strings are never evaluated: build expressions with sympy, or read text with "
            "answers.parse_expression")
    if isinstance(x, (str, bytes, np.str_, np.bytes_)):
        raise error(name, "sympy expressions or numbers", f"the string {str(x)[:60]!r}"
                    if isinstance(x, str) else f"the bytes {x[:60]!r}", hint, exc=TypeError)
    if _depth > 32:
        raise error(name, "a vector or matrix nested at most 32 levels deep",
                    "a deeper nesting", exc=ValueError)
    if isinstance(x, np.ndarray):
        if x.dtype.kind in "USO":
            for e in x.flat:
                no_text(e, name, _depth + 1)
    elif isinstance(x, sp.MatrixBase):
        pass                                  # sympy matrices hold sympy objects only
    elif isinstance(x, dict):
        for k, v in x.items():
            no_text(k, name, _depth + 1)
            no_text(v, name, _depth + 1)
    elif isinstance(x, _CONTAINERS):
        for e in x:
            no_text(e, name, _depth + 1)
    return x


def expression(x, name: str):
    """One sympy expression (a number or an ``sp.Expr``), never from a string.

    >>> expression(2, "f: T")
    2
    >>> expression("x", "f: T")
    Traceback (most recent call last):
    ...
    robodyn.errors.ArgumentTypeError: f: T: expected sympy expressions or numbers, got the string 'x' (strings are never evaluated: build expressions with sympy, or read text with answers.parse_expression)
    """
    no_text(x, name)
    if isinstance(x, (bool, np.bool_)) or x is None or isinstance(
            x, (list, tuple, dict, set, np.ndarray, sp.MatrixBase)):
        raise error(name, "a sympy expression or a number", describe(x), exc=TypeError)
    try:
        e = sp.sympify(x, strict=True)
    except sp.SympifyError as exc:
        raise error(name, "a sympy expression or a number", describe(x), exc=TypeError) from exc
    if not isinstance(e, sp.Expr):
        raise error(name, "a sympy expression or a number", describe(x), exc=TypeError)
    return _real_expression(_check_sym_number(e, name), name)


def _real_expression(e, name):
    """Refuse an expression holding the imaginary unit (robodyn works with real quantities)."""
    if isinstance(e, sp.Basic) and e.has(sp.I):
        raise error(name, "real expressions", f"{e} (holding the imaginary unit I)",
                    "robodyn works with real quantities", exc=TypeError)
    return e


def sym_matrix(x, name: str, shape=None, *, column: bool = False) -> sp.Matrix:
    """A ``sympy.Matrix`` of expressions, strings refused (:func:`no_text`), numbers checked
    (finite, real); floats are kept as they are. ``column``: any vector becomes k x 1.

    >>> sym_matrix([[1, 0], [0, 2]], "f: M", (2, 2)).shape
    (2, 2)
    >>> sym_matrix([[1, sp.nan]], "f: M")
    Traceback (most recent call last):
    ...
    robodyn.errors.ArgumentError: f: M: expected finite numbers or expressions, got nan
    """
    no_text(x, name)
    if x is None or isinstance(x, (dict, set, frozenset, bool, np.bool_)):
        raise error(name, "a matrix of sympy expressions or numbers", describe(x), exc=TypeError)
    try:
        if isinstance(x, (sp.Basic, numbers.Number)) and not isinstance(x, sp.MatrixBase):
            m = sp.Matrix([[sp.sympify(x, strict=True)]])
        else:
            m = sp.Matrix(x)
        if m.has(sp.Float):             # numpy floats arrive as Floats; keep them
            pass
    except (TypeError, ValueError, sp.SympifyError, IndexError) as exc:
        raise error(name, "a matrix of sympy expressions or numbers", describe(x),
                    str(exc).split("\n")[0][:100], exc=TypeError) from exc
    for e in m:
        if isinstance(e, sp.Basic) and not isinstance(e, sp.Expr):
            raise error(name, "sympy expressions or numbers", describe(e), exc=TypeError)
        _real_expression(_check_sym_number(e, name), name)
    if column and 1 in m.shape:
        m = m.reshape(len(m), 1)
    if shape is not None and m.shape != tuple(shape):
        raise error(name, f"a {shape[0]}x{shape[1]} matrix", f"shape {m.shape}")
    return m


# --------------------------------------------------------------------------
# numbers for numeric code, dicts of parameter values, results (issue 28)
# --------------------------------------------------------------------------

def real_number(x, name: str, *, low=None, high=None, strict_low: bool = False,
                hint: str | None = None) -> float:
    """A finite real number for numeric code, as a float. Python and numpy numbers,
    ``Fraction`` and sympy *numbers* (``Integer``, ``Rational``, ``Float``, ``pi``) are accepted
    alike; a symbolic expression is refused (a numeric argument cannot hold a symbol).

    >>> real_number(sp.Rational(1, 2), "f: mass", low=0, strict_low=True)
    0.5
    >>> real_number(sp.Symbol('t'), "f: t")
    Traceback (most recent call last):
    ...
    robodyn.errors.ArgumentTypeError: f: t: expected a number, got the symbolic expression t (a numeric argument: substitute numbers first)
    """
    if isinstance(x, sp.Basic) and not x.is_number:
        raise error(name, "a number", f"the symbolic expression {str(x)[:60]}",
                    hint or "a numeric argument: substitute numbers first", exc=TypeError)
    v = scalar(x, name, low=low, high=high, strict_low=strict_low, hint=hint)
    try:
        v = float(v)
    except (TypeError, ValueError) as exc:
        raise error(name, "a real number", describe(x), hint, exc=TypeError) from exc
    if not np.isfinite(v):
        raise error(name, "a finite number", repr(v), hint)
    return v


def values_dict(values, name: str, *, names: dict | None = None, exact: bool = True) -> dict:
    """A dict of parameter values ``{Symbol or name: number}`` as ``{Symbol: number}``.

    Keys are sympy Symbols, or strings read as *names* (looked up in ``names``, else a plain
    ``Symbol`` of that name): a key is never parsed, so no text runs. Values are finite real
    numbers (sympy numbers and ``Fraction`` included), returned exact (``0.5 -> 1/2``) when
    ``exact``, else as floats. ``None`` is an empty dict.

    >>> values_dict({"m": 2.0}, "f: values")
    {m: 2}
    >>> values_dict({("m",): 1.0}, "f: values")
    Traceback (most recent call last):
    ...
    robodyn.errors.ArgumentTypeError: f: values: expected keys that are sympy Symbols or names, got a tuple of length 1
    """
    if values is None:
        return {}
    if not isinstance(values, dict):
        raise error(name, "a dict {symbol or name: number}", describe(values), exc=TypeError)
    names = names or {}
    out = {}
    for k, v in values.items():
        if isinstance(k, str):
            key = names.get(k, sp.Symbol(k))
        elif isinstance(k, sp.Symbol) or isinstance(k, sp.core.function.AppliedUndef):
            key = k
        else:
            raise error(name, "keys that are sympy Symbols or names", describe(k),
                        exc=TypeError)
        no_text(v, f"{name}[{k!s}]")
        f = real_number(v, f"{name}[{k!s}]")
        e = assumed_value(key, _exact(f), f"{name}[{k!s}]")
        out[key] = e if exact else f
    return out


_STATED = ("positive", "negative", "nonnegative", "nonpositive", "nonzero", "zero", "integer",
           "even", "odd", "prime", "rational", "irrational", "real")
"""The assumptions a reader declares, in the order a refusal names them."""


def assumed_value(symbol, value, name: str):
    """``value`` (an exact sympy number) when it has every property ``symbol`` is declared
    with: a length ``Symbol('l', positive=True)`` takes no -1, since every result derived
    under that assumption (a square root, a sign, a simplification) would be false for it.

    >>> assumed_value(sp.Symbol("g", positive=True), sp.Rational(981, 100), "f: values[g]")
    981/100
    >>> assumed_value(sp.Symbol("g", positive=True), sp.Rational(-981, 100), "f: values[g]")
    Traceback (most recent call last):
    ...
    robodyn.errors.ArgumentError: f: values[g]: expected a positive number (g is declared so), got float -9.81
    """
    facts = getattr(symbol, "assumptions0", {})
    broken = [f for f, want in facts.items()
              if getattr(value, "is_" + f, None) not in (None, want)]
    if broken:
        said = [f for f in _STATED if f in broken]
        f = next((f for f in said if facts[f]), said[0] if said else broken[0])
        what = f if facts[f] else "not " + f
        got = int(value) if value.is_Integer else float(value)      # as the reader wrote it
        raise error(name, f"a {what} number ({symbol} is declared so)", got)
    return value


def _nonfinite(x, depth=0):
    if isinstance(x, np.ndarray):
        return x.dtype.kind in "fc" and not np.isfinite(x).all()
    if isinstance(x, (float, np.floating)):
        return not np.isfinite(x)
    if depth < 2 and isinstance(x, (tuple, list)):
        return any(_nonfinite(e, depth + 1) for e in x)
    return False


def finite_result(out, fname: str, what: str = "result"):
    """Postcondition of numeric code: the result holds no NaN or infinity (returned as is).

    Every argument was checked finite before the work, so a non-finite result means an
    overflow of float64 (inputs too large for the arithmetic): refused with a
    :class:`~robodyn.errors.ResultError`, never handed back. Arrays, floats and tuples/lists of
    them are checked (O(size) numpy, no Python loop over entries).

    >>> finite_result(np.array([1.0, np.inf]), "crba")
    Traceback (most recent call last):
    ...
    robodyn.errors.ResultError: crba: result: expected finite numbers for finite input, got NaN or infinity (an overflow: the inputs are too large for float64 arithmetic)
    """
    if _nonfinite(out):
        raise result_error(fname, "finite numbers for finite input", "NaN or infinity (an "
                           "overflow: the inputs are too large for float64 arithmetic)", what)
    return out


def result_error(fname: str, expected: str, got: str, what: str = "result"):
    """The :class:`~robodyn.errors.ResultError` ``fname: result: expected ..., got ...``,
    named after the reader's function when ``fname`` is an inner one.

    >>> result_error("f", "a finite state", "inf")
    ResultError('f: result: expected a finite state, got inf')
    """
    msg = f"{fname}: {what}: expected {expected}, got {got}"
    call = CALL.get()
    if call is not None and not call.owns(fname):
        msg = (f"{call.name}: result: expected finite numbers for finite input, got an "
               f"overflow inside ({msg[:200]})")
    return ResultError(msg)


ResultOverflow = ResultError
"""The former private name of :class:`robodyn.errors.ResultError` (the same class)."""


def _arithmetic(exc) -> str | None:
    """What an arithmetic failure means: "too large" (an overflow), "singular", or None for a
    floating-point signal the reader asked numpy for (``np.seterr(all="raise")``: underflow,
    invalid) that says nothing about the size of the input."""
    if isinstance(exc, OverflowError) or (isinstance(exc, FloatingPointError)
                                          and "overflow" in str(exc)):
        return "too large"
    if isinstance(exc, (ZeroDivisionError, np.linalg.LinAlgError)) or (
            isinstance(exc, FloatingPointError) and "divide" in str(exc)):
        return "singular"
    return None


def arithmetic_error(fname: str, exc):
    """The :class:`~robodyn.errors.ResultError` for an arithmetic failure ``exc`` (an
    overflow, a singular matrix, a division by zero) met while computing ``fname``'s result,
    or None when ``exc`` is not one (an underflow signalled under ``np.seterr``)."""
    kind = _arithmetic(exc)
    if kind is None:
        return None
    why = ("the input is too large for float64" if kind == "too large" else
           "the input makes the problem singular")
    return result_error(fname, "a finite result for finite input",
                        f"{type(exc).__name__}: {str(exc)[:160]} ({why})")


@contextlib.contextmanager
def overflow_guard(fname: str):
    """An overflow, a singular matrix or a division by zero met inside (``OverflowError``,
    ``FloatingPointError`` of an overflow, ``ZeroDivisionError``, ``LinAlgError``) ->
    :class:`~robodyn.errors.ResultError` naming ``fname: result`` (its cause is the original
    exception, frames included). An underflow signalled under ``np.seterr(all="raise")``
    passes unchanged: it says nothing about the input being too large.

    >>> with overflow_guard("rod_inertia"):
    ...     1e308 ** 2
    Traceback (most recent call last):
    ...
    robodyn.errors.ResultError: rod_inertia: result: expected a finite result for finite input, got OverflowError: (34, 'Numerical result out of range') (the input is too large for float64)
    """
    token = CALL.set(Call(fname, ())) if CALL.get() is None else None
    try:
        yield       # an inner result_error is named after fname where it is raised
    except (OverflowError, FloatingPointError, ZeroDivisionError,
            np.linalg.LinAlgError) as exc:
        new = arithmetic_error(fname, exc)
        if new is None:
            raise
        raise new from exc
    finally:
        if token is not None:
            CALL.reset(token)


def chain(x, name: str, cls: type):
    """``x`` when it is an instance of the chain class ``cls`` (the caller's
    :class:`robodyn.rigid_motion.SerialChain`: this ground floor knows no class above it).

    >>> class SerialChain: pass
    >>> chain("planar_rr", "crba: chain", SerialChain)
    Traceback (most recent call last):
    ...
    robodyn.errors.ArgumentTypeError: crba: chain: expected a SerialChain, got str 'planar_rr' (build one with robodyn.models, e.g. models.planar_rr())
    """
    if not isinstance(x, cls):
        raise error(name, f"a {cls.__name__}", describe(x),
                    "build one with robodyn.models, e.g. models.planar_rr()", exc=TypeError)
    return x


__all__ += ["real_number", "values_dict", "assumed_value", "finite_result", "result_error",
            "arithmetic_error", "chain", "overflow_guard"]
