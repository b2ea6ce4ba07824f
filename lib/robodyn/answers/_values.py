"""The values behind :mod:`robodyn.answers`: what an answer or a reference is (its kind and
value), how it is evaluated at points, and the budgeted symbolic equality test. Private: the
public names live in :mod:`robodyn.answers`."""
from __future__ import annotations

import math
import numbers

import numpy as np
import sympy as sp

from .. import _value_checks
from ..text_parser import parse_expression

SYMBOLIC_BUDGET = 3.0
"""Seconds the symbolic comparison may take (then the numeric one decides)."""
MAX_SYMBOLIC_OPS = 150
"""Largest difference (sympy operation count) the symbolic comparison simplifies."""
MAX_SYMBOLIC_DEGREE = 6
"""Largest product of nested exponents in a difference the symbolic comparison simplifies
(larger ones, e.g. ``(sin(q1) + l1)**12``, are left to the numeric comparison)."""


# --------------------------------------------------------------------------
# values: what a reference or an answer is, sampled at points
# --------------------------------------------------------------------------

class _Key:
    """Values known only at given points: a fingerprint of a reference (an answer key: its
    values at fixed points, not its formula)."""

    def __init__(self, points, values, shape):
        self.points, self.values, self.shape = points, values, tuple(shape)


class _Samples(_Key):
    """Outputs of a function answer at known inputs (what the grader gets back from the
    sandbox)."""

    def __init__(self, inputs, outputs):
        super().__init__(inputs, outputs, outputs.shape[1:])


def _is_vector_shape(s):
    return len(s) == 1 or (len(s) == 2 and 1 in s)


def _shape_str(s):
    return "a scalar" if s == () else "×".join(map(str, s))


def _as_value(x, problem):
    """Normalize an answer: ('symbolic', Matrix|Expr) | ('numeric', ndarray) | ('function', f) |
    ('samples', _Samples) | ('key', _Key); raises TypeError for what cannot be an answer."""
    if isinstance(x, _Samples):
        return "samples", x
    if isinstance(x, _Key):
        return "key", x
    if isinstance(x, str):
        names = None if problem is None else list(problem.variables)
        return _as_value(parse_expression(x, names), problem)
    if callable(x) and not isinstance(x, (sp.Basic, sp.MatrixBase, np.ndarray)):
        return "function", x
    if isinstance(x, sp.MatrixBase):
        return "symbolic", sp.Matrix(x)
    if isinstance(x, sp.Basic):
        if not isinstance(x, sp.Expr):
            raise _value_checks.refusal(
                TypeError, f"expected a number, an expression or a matrix, got a sympy "
                           f"{type(x).__name__}")
        return "symbolic", x
    if isinstance(x, (bool, np.bool_)):
        raise _value_checks.refusal(
            TypeError, "expected a number, an expression or a matrix, got True/False")
    x = _texts_parsed(x, problem)
    try:
        a = np.asarray(x, dtype=object)
    except (TypeError, ValueError) as exc:
        raise _value_checks.refusal(
            TypeError, f"expected numbers, an expression or a matrix ({exc})") from exc
    if a.dtype == object and a.size and any(isinstance(e, sp.Basic) for e in a.flat):
        if a.ndim > 2:
            raise _value_checks.refusal(TypeError, f"expected at most 2 dimensions, got {a.ndim}")
        if not all(isinstance(e, (sp.Basic, numbers.Number, np.number)) for e in a.flat):
            raise _value_checks.refusal(
                TypeError, "expected numbers or sympy expressions as entries, got "
                           f"{sorted({type(e).__name__ for e in a.flat})}")
        if not a.ndim:
            return _as_value(a.item(), problem)
        return "symbolic", sp.Matrix(a.shape[0], a.shape[1] if a.ndim == 2 else 1,
                                     [e if isinstance(e, sp.Basic) else _sympy_number(e)
                                      for e in a.flat])
    try:
        num = np.asarray(x, dtype=complex)
    except (TypeError, ValueError) as exc:
        raise _value_checks.refusal(TypeError, f"expected numbers, an expression or a matrix, got "
                        f"{type(x).__name__}") from exc
    if np.all(num.imag == 0):
        num = num.real
    return "numeric", num


def _sympy_number(e):
    """A plain number as a sympy number (never through sympify)."""
    if isinstance(e, (bool, np.bool_)):
        raise _value_checks.refusal(TypeError, "expected numbers, got True/False")
    z = complex(e)
    if z.imag == 0:
        return sp.Integer(int(z.real)) if isinstance(e, numbers.Integral) else sp.Float(z.real)
    return sp.Float(z.real) + sp.I * sp.Float(z.imag)


MAX_NESTED_ENTRIES = 100_000


def _texts_parsed(x, problem):
    """A (nested) list, tuple or object array with its text entries read by
    :func:`parse_expression` (the whitelist), so that no text reaches sympy or numpy; other
    values unchanged."""
    if not isinstance(x, (list, tuple, np.ndarray)) or (
            isinstance(x, np.ndarray) and x.dtype != object and x.dtype.kind not in "US"):
        return x
    names = None if problem is None else list(problem.variables)
    count = [0]

    def walk(v, depth):
        count[0] += 1
        if count[0] > MAX_NESTED_ENTRIES or depth > 8:
            raise _value_checks.refusal(TypeError, "expected at most 2 dimensions of a reasonable size")
        if isinstance(v, (str, np.str_)):
            e = parse_expression(str(v), names)
            if isinstance(e, sp.MatrixBase):
                raise _value_checks.refusal(TypeError, "a matrix given as text inside a list")
            return e
        if isinstance(v, bytes):
            raise _value_checks.refusal(TypeError, "expected numbers or expressions, got bytes")
        if isinstance(v, np.ndarray) and (v.dtype == object or v.dtype.kind in "US"):
            return [walk(e, depth + 1) for e in v] if v.ndim else walk(v.item(), depth + 1)
        if isinstance(v, (list, tuple)):
            return [walk(e, depth + 1) for e in v]
        return v
    return walk(x, 0)


def _shape_of(kind, v):
    if kind == "symbolic":
        return tuple(v.shape) if isinstance(v, sp.MatrixBase) else ()
    if kind == "numeric":
        return v.shape
    if kind in ("key", "samples"):
        return v.shape
    return None


def _canonical(expr, problem):
    """Free symbols by name onto the problem's symbols (so assumptions do not matter)."""
    if problem is None:
        return expr
    syms = problem.symbols()
    repl = {s: syms[s.name] for s in expr.free_symbols if s.name in syms}
    return expr.xreplace(repl)


def _evaluator(kind, v, problem, shape):
    """A function points -> array (N, *shape) of complex values."""
    if kind == "numeric":
        return lambda pts: np.broadcast_to(v, (_npoints(pts),) + v.shape).astype(complex)
    if kind in ("samples", "key"):
        def ev(pts):
            if pts is not v.points:
                raise LookupError("these values are known only at their own points")
            return v.values
        return ev
    if kind == "function":
        def ev(pts):
            out = []
            for args in pts:
                r = v(*args)
                k, val = _as_value(r, problem)
                if k != "numeric":
                    raise _value_checks.refusal(
                        TypeError, f"the function returned {type(r).__name__}, not numbers")
                out.append(val)
            shapes = {o.shape for o in out}
            if len(shapes) != 1:
                raise _value_checks.refusal(
                    ValueError, f"the function returned values of different shapes {shapes}")
            return np.array(out, dtype=complex)
        return ev
    # symbolic
    M = v if isinstance(v, sp.MatrixBase) else sp.Matrix([[v]])
    entries = list(M)
    syms = sorted(set().union(*[e.free_symbols for e in entries]), key=lambda s: s.name)
    f = sp.lambdify(syms, entries, modules="numpy", dummify=True)

    def ev(pts):
        n = _npoints(pts)
        args = [np.asarray(pts[s.name], dtype=float) for s in syms]
        with np.errstate(all="ignore"):
            vals = f(*args)
        out = np.empty((n, len(entries)), dtype=complex)
        for j, e in enumerate(vals):
            out[:, j] = np.broadcast_to(np.asarray(e, dtype=complex), (n,))
        return out.reshape((n,) + shape)
    return ev


def _npoints(pts):
    if isinstance(pts, dict):
        return len(next(iter(pts.values()))) if pts else 1
    return len(pts)


def _scaled(pts, problem, factor):
    """The same points with the angles (or a function's arguments) multiplied by factor."""
    if isinstance(pts, dict):
        return {k: (v * factor if k in problem.angles else v) for k, v in pts.items()}
    return [tuple(a * factor for a in args) for args in pts]



# --------------------------------------------------------------------------
# symbolic equality
# --------------------------------------------------------------------------

def _symbolic_equal(S, R, problem):
    """True when S - R simplifies to zero (only small differences are simplified)."""
    try:
        D = (sp.Matrix(S) - sp.Matrix(R)) if isinstance(R, sp.MatrixBase) else (S - R)
        entries = list(D) if isinstance(D, sp.MatrixBase) else [D]
        for d in entries:
            d = _canonical(d, problem)
            if d == 0:
                continue
            if sp.count_ops(d) > MAX_SYMBOLIC_OPS or _degree_bound(d) > MAX_SYMBOLIC_DEGREE:
                return False
            if _within_budget(lambda: sp.simplify(d), SYMBOLIC_BUDGET) != 0:
                return False
        return True
    except Exception:                     # noqa: BLE001 -- a shortcut: the numbers decide
        return False


class _OverBudget(Exception):
    """The symbolic comparison ran out of its time budget."""


def _degree_bound(expr):
    """An upper bound of the product of the exponents along any path of an expression (what
    expanding it could multiply out)."""
    best, stack = 1, [(expr, 1)]
    while stack:
        e, k = stack.pop()
        if isinstance(e, sp.Pow) and e.exp.is_number:
            try:
                k *= max(1, abs(int(math.ceil(abs(float(e.exp))))))
            except (TypeError, ValueError):
                return math.inf
        best = max(best, k)
        stack.extend((a, k) for a in e.args)
    return best


def _within_budget(work, seconds):
    """``work()``, stopped after ``seconds`` with _OverBudget (a SIGALRM timer; in a thread
    other than the main one, where no timer can be set, the work is not attempted)."""
    import signal
    import threading
    if threading.current_thread() is not threading.main_thread() or \
            not hasattr(signal, "setitimer"):
        raise _OverBudget("no timer outside the main thread")
    old_left = signal.getitimer(signal.ITIMER_REAL)[0]
    if old_left and old_left < seconds:              # an outer timer fires first: keep it
        seconds = old_left

    def fire(signum, frame):
        raise _OverBudget(f"the symbolic comparison took more than {seconds:g} s")
    import time
    previous = signal.signal(signal.SIGALRM, fire)
    started = time.monotonic()
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return work()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if old_left:                                 # the outer timer runs on
            left = old_left - (time.monotonic() - started)
            signal.setitimer(signal.ITIMER_REAL, max(1e-3, left))


# --------------------------------------------------------------------------
# closeness of values (N, *shape) at N points
# --------------------------------------------------------------------------

def _close(S, R, problem):
    """Elementwise closeness with a tolerance scaled by the reference's size; a value that is
    not finite (in either) is never close."""
    rtol = problem.rtol if problem else 1e-6
    atol = problem.atol if problem else 1e-9
    ok = np.isfinite(R)
    scale = np.max(np.abs(R[ok])) if ok.any() else 1.0
    tol = atol + rtol * np.maximum(np.abs(R), scale)
    with np.errstate(invalid="ignore"):
        good = np.abs(S - R) <= tol
    return good & ok & np.isfinite(S)                # NaN or infinity never compares equal


RESOLVED = 10
"""A reference must exceed this many times the absolute tolerance to be compared with
(:func:`_resolved`)."""


def _resolved(R, problem, name, symbolic=None):
    """Refuse a reference whose values ``R`` are all within :data:`RESOLVED` times the
    absolute tolerance ``atol`` but not zero: every answer that small -- twice it, its
    negative, zero -- would compare equal to it. A symbolic reference that simplifies to zero
    (``symbolic``; values of rounding size) is zero, and compares.

    >>> _resolved(np.array([[2e-10]]), None, "compare: reference")
    Traceback (most recent call last):
    ...
    robodyn.errors.ArgumentError: compare: reference: expected an answer larger than 10 times the absolute tolerance atol = 1e-09, got values of size at most 2e-10 (any answer that small would be marked correct: give the Problem a smaller atol)
    """
    atol = problem.atol if problem else 1e-9
    size = float(np.max(np.abs(R), initial=0.0))
    if 0 < size <= RESOLVED * atol and not (
            symbolic is not None and _symbolic_equal(symbolic, 0 * symbolic, problem)):
        raise _value_checks.error(
            name, f"an answer larger than {RESOLVED} times the absolute tolerance atol = "
                  f"{atol:g}", f"values of size at most {size:.2g}", "any answer that small "
                  "would be marked correct: give the Problem a smaller atol")


def _all_close(S, R, problem):
    return S.shape == R.shape and bool(np.all(_close(S, R, problem)))


def _swap_halves(A):
    """(ω, v) <-> (v, ω): rows of a 6-vector / 6×n; rows and columns of 6×6."""
    sh = A.shape[1:]
    if sh in ((6,), (6, 1)):
        return np.concatenate([A[:, 3:6], A[:, 0:3]], axis=1)
    if len(sh) == 2 and sh[0] == 6:
        B = np.concatenate([A[:, 3:6], A[:, 0:3]], axis=1)
        if sh[1] == 6:
            B = np.concatenate([B[:, :, 3:6], B[:, :, 0:3]], axis=2)
        return B
    return None


def _to_grid(A, shape):
    """Values (N, *s) reshaped to the reference's shape when only the vector orientation
    differs."""
    if A.shape[1:] == tuple(shape):
        return A
    if _is_vector_shape(A.shape[1:]) and _is_vector_shape(shape) and \
            int(np.prod(A.shape[1:])) == int(np.prod(shape)):
        return A.reshape((A.shape[0],) + tuple(shape))
    return None


def _negated(pts, problem):
    return {k: (-v if k in problem.angles else v) for k, v in pts.items()}
