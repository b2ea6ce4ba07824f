"""The boundary of robodyn's public API: what happens when the reader calls a public callable.

Design note (issue 37)
----------------------
Each public module ends with ``_seal(globals())``. ``seal`` wraps every callable the module
exports (its ``__all__``, else its own public callables) and every public method and
constructor of its public classes. It patches nothing outside robodyn: sympy, numpy and scipy
are never touched (text is refused by the scan below and by :mod:`robodyn._value_checks`, whose
``sympify`` calls are all ``strict=True``, before it could reach a parser).

**Whose call is checked.** A call made while no call is under way in its thread (the slot
below is empty) is checked: the reader's script or notebook, a thread, a Dask worker, and
robodyn's own code running outside any reader's call (a finalizer, a worker's task, an
unpickled object made again). A call made while a reader's call is under way is the reader's
when its caller's code is not robodyn's (one frame look-up, made only then): the reader's
callback called back by robodyn (a controller given to ``simulate``, the function of
``stability.sweep``) is checked; calls robodyn makes to itself pass straight through, and so
do calls made by numpy/scipy (an integrator calling a right-hand side) on behalf of the
reader's call. The common call, the reader's own, thus costs no frame look-up. Callables
that run the reader's code (``map_tasks``) are declared *open*: the robodyn functions they call
(the reader's ``func``) are the reader's calls too.

**What a reader's call does.**

1. Before any work, every argument is scanned (lists, tuples, dicts -- keys too --, object
   arrays, nested up to :data:`MAX_DEPTH`): text that is not a plain name, NaN, infinity
   (unless the argument's default is infinite or it is declared), complex numbers, boolean and
   masked arrays are refused with ``function: argument: expected ..., got ...``.
2. Every argument annotated with a kind (a subclass of :class:`robodyn.kinds.Kind`, resolved
   once, when the module is sealed) is checked: ``Kind.check(value, "function: argument")``.
3. The reader's call is recorded (name and parameter names) in the per-thread slot
   :data:`robodyn.errors.CALL` while the function runs: a refusal raised inside by an inner
   function (:func:`robodyn._value_checks.error`) names the reader's function when it is about the
   reader's argument of the same name. Errors are built there, where they are found, and never
   renamed afterwards. An overflow, singular matrix or division by zero met by robodyn's
   arithmetic for finite input becomes a :class:`~robodyn.errors.ResultError` naming
   ``function: result`` (caused by the original exception, frames kept); any other exception
   -- numpy's, scipy's, sympy's, the reader's callback's -- keeps its class and traceback and
   gets a note naming the robodyn call it went through.
4. The result is scanned: NaN or infinity in a numeric result for finite input is a
   :class:`~robodyn.errors.ResultError` naming ``function: result``.

A plain function called with positional arguments that are plainly finite numbers (float
arrays of up to 48 entries, floats, short lists of numbers) or objects the scan passes (chains,
forms) takes a short path that makes the same checks without the scan's dispatch: the
per-call cost of the boundary on ``exp_so3`` and ``fk_space`` (``bench/bench_checks.py``).
There, a native float64 array, argument or result, is cleared by one byte of each number
(:func:`robodyn._value_checks.short_finite`: no NaN or infinity has a byte of sign and high
exponent bits other than 0x7F or 0xFF); an array it cannot clear goes to the exact tests. The
slot is read once per call (a thread-local one-item list), then set and restored in place.

``with robodyn.checks(False): ...`` skips steps 1, 2 and 4 in a hot loop (a context variable,
like ``np.errstate``; threads and workers start with the checks on). Constructors and methods
are named after the class actually used (``DecoupledForm.rhs``, not the base's name). A sealed
function re-exported from a private module is also put back in that module, so that it
pickles. ``tests/test_fuzz_api.py`` fails when a public callable is not sealed.

>>> def double(x, label="x"):
...     return 2 * x
>>> ns = {"__name__": double.__module__, "__all__": ["double"], "double": double}
>>> seal(ns)
>>> ns["double"](2.0)
4.0
>>> ns["double"]("__import__('os')")
Traceback (most recent call last):
...
robodyn.errors.ArgumentTypeError: double: x: expected numbers, arrays or sympy expressions, got the text "__import__('os')" (robodyn never evaluates text)
>>> ns["double"](1e308)
Traceback (most recent call last):
...
robodyn.errors.ResultError: double: result: expected finite numbers for finite input, got inf (an overflow: the input is too large for floating point)
>>> with checks(False):
...     ns["double"](1e308)
inf
"""
from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import decimal
import functools
import inspect
import math
import re
import sys
import sysconfig
import types

import numpy as np
import sympy as sp

from . import _value_checks
from .errors import CALL as _CALL, OPEN as _OPEN, ArgumentError, ArgumentTypeError, Call, \
    ResultError, RobodynError

__all__ = ["seal", "is_sealed", "checks", "checks_enabled", "nonfinite"]

MAX_DEPTH = 64
"""Arguments nested deeper than this are refused (a cyclic or absurd structure)."""

MAX_ITEMS = 10**7
"""At most this many entries of Python containers are scanned in one call; more is refused."""

TEXT_NAMES = frozenset({
    "text", "source", "path", "paths", "directory", "folder", "root", "name", "names", "label",
    "labels", "title", "xlabel", "ylabel", "zlabel", "units", "unit", "statement", "hint",
    "description", "key_json", "json_text", "html", "markdown", "url", "color", "colors",
    "fmt", "prefix", "suffix", "filename", "file", "csv_path", "out_dir", "output_dir",
    "message", "caption", "alt", "style", "linestyle", "marker", "cmap", "template",
    "scheduler", "address", "cache_dir", "url", "where", "release", "submission", "key",
    "keys"})
"""Parameters that take free text by their name (exempt from the identifier rule only)."""

_ENABLED = contextvars.ContextVar("robodyn_checks", default=True)
_PLAIN = re.compile(r"[\w .,:\-]{0,200}\Z")
"""Text that may pass the scan in any argument: words, numbers, names (the function's own
checks then decide). Brackets, quotes, operators and calls -- code -- are refused."""
_SYMPY_BAD = (sp.nan, sp.zoo)
_SYMPY_INF = (sp.oo, -sp.oo)
_ARITHMETIC = (OverflowError, FloatingPointError, ZeroDivisionError, np.linalg.LinAlgError)
_PACKAGE = __name__.rpartition(".")[0]
_ROOT = __file__.rpartition("/")[0]
_INSIDE = _ROOT + "/"
_LIBRARIES = tuple(sorted({p + "/" for p in (sysconfig.get_paths()[k] for k in (
    "stdlib", "platstdlib", "purelib", "platlib")) if p}))
"""Where numpy, scipy and the standard library live: their calls of a sealed callable made on
behalf of a reader's call under way (an integrator calling a right-hand side) pass through."""
_getframe = sys._getframe


# --------------------------------------------------------------------------
# switching the checks off in a hot loop
# --------------------------------------------------------------------------

@contextlib.contextmanager
def checks(enabled: bool = True):
    """Turn the boundary's checks of robodyn's public calls on or off inside a ``with`` block
    (like ``np.errstate``): ``with robodyn.checks(False): ...`` skips the scan of the
    arguments, their declared kinds and the scan of the result in a hot loop whose input is
    known to be good. Each function's own structural checks (shapes, sizes) still run. The
    setting belongs to the current thread or task (a context variable): threads and worker
    processes start with the checks on.

    >>> import robodyn
    >>> with robodyn.checks(False):
    ...     R = robodyn.exp_so3([0.0, 0.0, 0.1])
    >>> robodyn.checks_enabled()
    True
    """
    if not isinstance(enabled, (bool, np.bool_)):
        raise ArgumentTypeError(f"checks: enabled: expected True or False, got "
                                f"{_value_checks.describe(enabled)}")
    token = _ENABLED.set(bool(enabled))
    try:
        yield
    finally:
        _ENABLED.reset(token)


def checks_enabled() -> bool:
    """Whether the boundary checks public calls here (see :func:`checks`).

    >>> checks_enabled()
    True
    """
    return _ENABLED.get()


class _Refusal(Exception):
    """Internal: what the scan found (turned into the public error with names)."""

    def __init__(self, exc, expected, got):
        super().__init__(expected)
        self.exc, self.expected, self.got = exc, expected, got
        self.path = ""                 # where inside the argument: [2], [m], [0][1]


# --------------------------------------------------------------------------
# the scan of one argument
# --------------------------------------------------------------------------

def _scan(v, text, infinite, depth, budget):
    """Raise _Refusal for the first bad entry of ``v``; return whether it held infinity."""
    h = _HANDLERS.get(type(v))
    if h is None:
        h = _HANDLERS[type(v)] = _handler(type(v))
        if h is _scan_nothing:
            _OPAQUE.add(type(v))
    return h(v, text, infinite, depth, budget)


def _scan_float(v, text, infinite, depth, budget):
    if v != v:
        raise _Refusal(ValueError, "finite numbers", "NaN")
    if v in (math.inf, -math.inf):
        if not infinite:
            raise _Refusal(ValueError, "finite numbers", repr(float(v)))
        return True
    return False


def _scan_nothing(v, text, infinite, depth, budget):
    return False                      # ints, None, and objects (chains, forms, callables)


def _scan_str(v, text, infinite, depth, budget):
    if not text and not _PLAIN.match(v):
        raise _Refusal(TypeError, "numbers, arrays or sympy expressions",
                       f"the text {_short(v)} (robodyn never evaluates text)")
    return False


def _scan_bytes(v, text, infinite, depth, budget):
    if not text:
        raise _Refusal(TypeError, "numbers, arrays or sympy expressions",
                       f"bytes of length {len(v)}")
    return False


def _scan_masked(v, text, infinite, depth, budget):
    raise _Refusal(TypeError, "a plain array of real numbers", f"a masked array of shape "
                   f"{v.shape} (its masked entries would be used as numbers; pass "
                   "a.filled(value) or a.compressed())")


def _scan_complex(v, text, infinite, depth, budget):
    raise _Refusal(TypeError, "real numbers", f"the complex number {v!r} (robodyn works with "
                   "real quantities; take .real explicitly)")


def _scan_sequence(v, text, infinite, depth, budget, labels=None):
    if depth >= MAX_DEPTH:
        raise _Refusal(ValueError, f"data nested at most {MAX_DEPTH} levels deep",
                       "a deeper (or cyclic) structure")
    return _scan_items(v, text, infinite, depth, budget, labels)


def _scan_dict(v, text, infinite, depth, budget):
    keys = list(v.keys())
    try:
        found = _scan_sequence(keys, text, infinite, depth, budget)
    except _Refusal as r:
        r.path = " (a key)"
        raise
    return found | _scan_sequence(list(v.values()), text, infinite, depth, budget, keys)


def _handler(t):
    if t is float or issubclass(t, np.floating):
        return _scan_float
    if issubclass(t, (bool, int, np.integer, np.bool_, type(None))):
        return _scan_nothing
    if issubclass(t, str):
        return _scan_str
    if issubclass(t, np.ma.MaskedArray):
        return _scan_masked
    if issubclass(t, np.ndarray):
        return _scan_array
    if issubclass(t, (complex, np.complexfloating)):
        return _scan_complex
    if issubclass(t, (sp.Basic, sp.MatrixBase)):
        return lambda v, text, infinite, depth, budget: _scan_sympy(v, infinite)
    if issubclass(t, (list, tuple, set, frozenset)):
        return _scan_sequence
    if issubclass(t, dict):
        return _scan_dict
    if issubclass(t, (bytes, bytearray)):
        return _scan_bytes
    if issubclass(t, decimal.Decimal):
        return lambda v, text, infinite, depth, budget: _scan_float(
            float(v) if v.is_finite() else (math.nan if v.is_nan() else float(v)),
            text, infinite, depth, budget)
    if issubclass(t, float):
        return _scan_float
    return _scan_nothing


_HANDLERS = {}
_OPAQUE = {int, type(None)}
"""The types the scan passes as they are (ints, None, and objects: chains, forms, callables),
as met: the short path of a call tests membership here."""


def _scan_items(items, text, infinite, depth, budget, labels=None):
    budget[0] -= len(items)
    if budget[0] < 0:
        raise _Refusal(ValueError, f"at most {MAX_ITEMS} entries in all arguments",
                       "more (nothing runs unbounded)")
    found = False
    depth += 1
    for i, e in enumerate(items):
        try:
            found |= _scan(e, text, infinite, depth, budget)
        except _Refusal as r:
            k = i if labels is None else labels[i]
            if not r.path.startswith(" "):
                r.path = f"[{k if isinstance(k, (int, str)) else repr(k)}]" + r.path
            raise
    return found


def _all_finite(a, _isfinite=math.isfinite):
    """Whether every entry of a float array is finite (small arrays in plain Python: a third of
    numpy's per-call cost, which is what a reader's call of a few small arrays pays)."""
    if a.size <= _value_checks.SHORT_SIZE:
        if a.dtype is _value_checks.F64 and _value_checks.short_finite(a):
            return True
        xs = (a if a.ndim == 1 else a.ravel()).tolist()
        return _isfinite(sum(xs)) or all(map(_isfinite, xs))   # a finite sum: all finite
    return bool(np.isfinite(a).all())


def _scan_array(a, text, infinite, depth, budget):
    kind = a.dtype.kind
    if kind == "f":
        if a.size and not _all_finite(a):
            if np.isnan(a).any() or not infinite:
                raise _Refusal(ValueError, "finite numbers", "NaN or infinity at positions "
                               f"{np.argwhere(~np.isfinite(a)).tolist()[:5]}")
            return True
        return False
    if kind in "iu":
        return False
    if kind == "c":
        raise _Refusal(TypeError, "real numbers", f"a complex array of dtype {a.dtype} (robodyn "
                       "works with real quantities; take .real explicitly)")
    if kind == "b":
        raise _Refusal(TypeError, "numbers", "a boolean array (True/False are not numbers)")
    if kind in "US":
        if text:
            return False
        bad = [s for s in a.ravel().tolist() if not _PLAIN.match(str(s))]
        if bad:
            raise _Refusal(TypeError, "numbers, arrays or sympy expressions",
                           f"an array holding the text {_short(bad[0])} (robodyn never "
                           "evaluates text)")
        return False
    if kind == "O":
        return _scan_items(a.ravel().tolist(), text, infinite, depth, budget)
    raise _Refusal(TypeError, "an array of real numbers", f"an array of dtype {a.dtype}")


def _scan_sympy(v, infinite):
    if v.has(*_SYMPY_BAD):
        raise _Refusal(ValueError, "real finite numbers or expressions", "nan or zoo (an "
                       "undefined value)")
    if v.has(*_SYMPY_INF):
        if not infinite:
            raise _Refusal(ValueError, "real finite numbers or expressions", "infinity (oo)")
        return True
    return False


def _short(s):
    s = str(s)
    return '"' + s[:60] + ("..." if len(s) > 60 else "") + '"'


# --------------------------------------------------------------------------
# the scan of a result
# --------------------------------------------------------------------------

def _nonfinite(x, depth=0):
    """A description of the first NaN/inf in a numeric result, or None."""
    t = type(x)
    if t is np.ndarray:                 # first: the common result
        if x.dtype.kind == "f" and x.size and not _all_finite(x):
            return f"NaN or infinity at positions {np.argwhere(~np.isfinite(x)).tolist()[:5]}"
        if x.dtype.kind == "O" and x.size <= 10000 and depth <= 6:
            return _nonfinite(x.ravel().tolist(), depth + 1)
        return None
    if depth > 6:
        return None
    if t is float or isinstance(x, np.floating):
        return None if math.isfinite(x) else repr(float(x))
    if t in (list, tuple) or isinstance(x, tuple):
        if len(x) > 10000:                      # a long list of numbers: checked as an array
            try:
                return _nonfinite(np.asarray(x, dtype=float), depth + 1)
            except (TypeError, ValueError):
                x = x[:10000]
        for e in x:
            r = _nonfinite(e, depth + 1)
            if r:
                return r
        return None
    if t is dict:
        for k, e in list(x.items())[:10000]:
            r = _nonfinite(e, depth + 1)
            if r:
                return f"{k}: {r}"
        return None
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        for f in dataclasses.fields(x):
            r = _nonfinite(getattr(x, f.name, None), depth + 1)
            if r:
                return f"{f.name}: {r}"
    return None




def nonfinite(x):
    """A description of the first NaN/inf in a numeric result (numbers, arrays, and the lists,
    tuples, dicts and dataclasses holding them), or None.

    >>> nonfinite([1.0, (2.0, float("nan"))])
    'nan'
    """
    return _nonfinite(x)


# --------------------------------------------------------------------------
# the wrapper
# --------------------------------------------------------------------------

def _refuse(name, arg, r):
    cls = ArgumentTypeError if r.exc is TypeError else ArgumentError
    return cls(f"{name}: {arg}{r.path}: expected {r.expected}, got {r.got}")


def _check_arguments(spec, name, args, kwargs):
    """Scan every argument; return whether any held infinity (allowed by declaration)."""
    budget = [MAX_ITEMS]
    found = False
    names = spec.names
    for i, v in enumerate(args):
        if type(v) is np.ndarray and v.dtype.kind == "f" and 0 < v.size <= 48 \
                and _all_finite(v):
            continue                    # the common case, without the dispatch
        arg = names[i] if i < len(names) else f"argument {i + 1}"
        if arg in spec.raw:
            continue
        try:
            found |= _scan(v, arg in spec.text, arg in spec.infinite, 0, budget)
        except _Refusal as r:
            # from None: _Refusal is the scan's private signal; private classes never reach users
            raise _refuse(name, arg, r) from None
    for arg, v in kwargs.items():
        if arg in spec.raw or (arg not in names and "**" in spec.raw):
            continue
        text = arg in spec.text or (arg not in names and (
            "**" in spec.text or arg in TEXT_NAMES))     # options passed on by name
        try:
            found |= _scan(v, text, arg in spec.infinite, 0, budget)
        except _Refusal as r:
            # from None: the scan's private signal, as above
            raise _refuse(name, arg, r) from None
    return found


def _check_kinds(spec, name, args, kwargs):
    """``Kind.check(value, "name: arg")`` for every argument passed whose parameter has a kind
    (an optional kind, ``Kind | None``, lets None pass)."""
    n = len(args)
    for i, arg, kind, check, optional, tol in spec.kinds:
        if i < n:
            v = args[i]
        elif arg in kwargs:
            v = kwargs[arg]
        else:
            continue                    # the default: the function's own
        if v is None and optional:
            continue
        if tol is None:
            check(kind, v, f"{name}: {arg}")
            continue
        t = args[tol[0]] if tol[0] < n else kwargs.get("tol", tol[1])
        ok = isinstance(t, (int, float)) and not isinstance(t, bool) and 0 < t < 1
        check(kind, v, f"{name}: {arg}", **({"tol": float(t)} if ok else {}))


def _raised_by_robodyn(exc):
    """Whether the innermost frame of ``exc`` is robodyn's, or a numeric library's called by
    robodyn (not the reader's callback)."""
    tb, files = exc.__traceback__, []
    while tb is not None:
        files.append(tb.tb_frame.f_code.co_filename)
        tb = tb.tb_next
    for f in reversed(files):
        if f.startswith(_INSIDE):
            return True
        if not f.startswith(_LIBRARIES):
            return False                # the reader's own code (a callback)
    return False


def _innermost(exc):
    """The file of the innermost frame of ``exc``'s traceback."""
    tb, last = exc.__traceback__, ""
    while tb is not None:
        last, tb = tb.tb_frame.f_code.co_filename, tb.tb_next
    return last


def _note(exc, name):
    """A note on a foreign exception: which robodyn call it went through (added once)."""
    note = f"(raised inside the call of robodyn's {name})"
    if note not in getattr(exc, "__notes__", ()):
        exc.add_note(note)


def _call_name(spec, args):
    """The public name of this call: methods and constructors are named after the class the
    reader used (a subclass's own name, not its base's)."""
    if spec.member is None or not args:
        return spec.name
    cls = args[0] if spec.member == "classmethod" else type(args[0])
    cls_name = getattr(cls, "__name__", spec.name)
    if spec.member == "__init__":
        return cls_name
    if spec.member == "__call__":
        return f"{cls_name}()"
    return f"{cls_name}.{spec.short}"


def _failed(exc, name, infinite):
    """What the boundary raises for ``exc``, raised inside the reader's call ``name``: a
    :class:`ResultError` for an overflow, singular matrix or division by zero met by robodyn's
    arithmetic for finite input (to be raised ``from exc``), else None: ``exc`` itself goes on
    (a foreign exception with a note naming the call; robodyn's own unchanged)."""
    if isinstance(exc, _ARITHMETIC):
        new = None
        if not infinite and _raised_by_robodyn(exc) and not (
                isinstance(exc, np.linalg.LinAlgError) and _innermost(exc).startswith(_INSIDE)):
            new = _value_checks.arithmetic_error(name, exc)   # (robodyn's own LinAlgError: as is)
        if new is None:
            _note(exc, name)
        return new
    if not isinstance(exc, RobodynError) and not _raised_by_robodyn(exc):
        _note(exc, name)            # foreign: its class and traceback are kept
    return None


def _bad_result(name, out):
    return ResultError(f"{name}: result: expected finite numbers for finite input, got "
                       f"{_nonfinite(out)} (an overflow: the input is too large for floating "
                       "point)")


def _reader_call(f, spec, args, kwargs):
    __tracebackhide__ = True        # plumbing: IPython and pytest leave it out of tracebacks
    name = spec.name if spec.member is None else _call_name(spec, args)
    pos = args[1:] if spec.method else args
    infinite = _check_arguments(spec, name, pos, kwargs)
    if spec.kinds:
        _check_kinds(spec, name, pos, kwargs)
    if spec.open:
        call = _OPEN
    elif kwargs or infinite or spec.member is not None:
        call = Call(name, spec.names + tuple(kwargs), not infinite)  # options passed on too
    else:
        call = spec.call                # the common case: one immutable record per callable
    cell = _CALL.cell
    outer, cell[0] = cell[0], call
    try:
        out = f(*args, **kwargs)
    except Exception as exc:
        new = _failed(exc, name, infinite)
        if new is None:
            raise
        raise new from exc          # the original, with its frames, is the cause
    finally:
        cell[0] = outer
    if not (infinite or spec.nonfinite_result) and _nonfinite(out):
        raise _bad_result(name, out)
    return out


def _plain(v, _isfinite=math.isfinite):
    """Whether the scan of one argument ``v`` would find nothing, decided cheaply for the common
    ones: finite real arrays, Python and numpy floats, short lists of finite Python numbers
    (the objects the scan passes are in ``_OPAQUE``). False means "scan it": never a refusal."""
    t = type(v)
    if t is np.ndarray:
        k = v.dtype.kind
        if k == "f":
            if v.size > _value_checks.SHORT_SIZE:
                return bool(np.isfinite(v).all())
            return _isfinite(sum(v.ravel().tolist()))   # NaN, inf or an overflowing sum: scan
        return k in "iu"
    if t is float or t is np.float64:
        return _isfinite(v)
    if t is list or t is tuple:
        if len(v) > 48 or not _NUMBERS.issuperset(map(type, v)):
            return False
        try:
            return _isfinite(sum(v))
        except OverflowError:
            return False                        # an int too large for a float
    return False


SHORT_PATH = True
"""Whether a plain function's common call takes the short path of :func:`_wrap` (tests turn it
off to watch every reader's call go through :func:`_check_arguments`)."""

_NUMBERS = frozenset({float, int})


def _wrap(f, spec):
    # The common case -- a plain function called with positional arguments that are plainly
    # finite numbers or opaque objects -- takes the short path below: the same checks, in the
    # same order, as _reader_call, decided without the generic scan's dispatch (a native
    # float64 array of up to SHORT_SIZE entries: the byte test of _value_checks.short_finite,
    # inline; an array it cannot clear goes to the exact tests).
    fast = spec.member is None and not spec.open and not spec.method
    checked = not spec.nonfinite_result
    name, call, kinds = spec.name, spec.call, bool(spec.kinds)
    nd, F64, plain, slot, opaque = np.ndarray, _value_checks.F64, _plain, _CALL, _OPAQUE
    short, top = _value_checks.SHORT_SIZE, _value_checks.TOP
    enabled = _ENABLED.get

    @functools.wraps(f)
    def sealed(*args, **kwargs):
        __tracebackhide__ = True    # plumbing: IPython and pytest leave it out of tracebacks
        cell = slot.cell                        # this thread's: one thread-local look-up
        outer = cell[0]
        if outer is not None:                   # a reader's call under way: who calls?
            caller = _getframe(1).f_code.co_filename
            if caller.startswith(_INSIDE):
                if outer is not _OPEN:
                    return f(*args, **kwargs)   # robodyn calling itself
            elif caller.startswith(_LIBRARIES):
                return f(*args, **kwargs)       # numpy/scipy inside the reader's call
        if not enabled():
            return f(*args, **kwargs)           # with checks(False)
        if kwargs or not fast or not SHORT_PATH:
            return _reader_call(f, spec, args, kwargs)
        for v in args:
            t = type(v)
            if t is nd:
                if v.dtype is F64 and v.size <= short:
                    s = v.tobytes()[top::8]
                    if 127 not in s and 255 not in s:
                        continue                # finite: see short_finite
            elif t in opaque:
                continue                        # a chain, a form, None, an int
            if not plain(v):
                return _reader_call(f, spec, args, kwargs)
        if kinds:
            _check_kinds(spec, name, args, kwargs)
        cell[0] = call
        try:
            out = f(*args)
        except Exception as exc:
            new = _failed(exc, name, False)
            if new is None:
                raise
            raise new from exc      # the original, with its frames, is the cause
        finally:
            cell[0] = outer
        if checked:
            if type(out) is nd and out.dtype is F64 and out.size <= short:
                s = out.tobytes()[top::8]
                if 127 not in s and 255 not in s:
                    return out
            if _nonfinite(out):
                raise _bad_result(name, out)
        return out

    sealed.__robodyn_sealed__ = spec
    return sealed


def is_sealed(obj) -> bool:
    """Whether a function (or a class's constructor) goes through the boundary."""
    if isinstance(obj, (staticmethod, classmethod)):
        obj = obj.__func__
    if inspect.isclass(obj):
        return obj.__init__ is object.__init__ or is_sealed(obj.__init__)
    return getattr(obj, "__robodyn_sealed__", None) is not None


# --------------------------------------------------------------------------
# the declaration of one callable
# --------------------------------------------------------------------------

def _kind_base():
    """:class:`robodyn.kinds.Kind`, when that module is loaded (an annotation can only resolve
    to a kind then; looked up, not imported, so that ``kinds`` may itself be sealed)."""
    kinds = sys.modules.get(_PACKAGE + ".kinds")
    return getattr(kinds, "Kind", None)


def _kind_of(annotation):
    """``(Kind subclass, optional)`` of a resolved annotation, or None."""
    Kind = _kind_base()
    if Kind is None:
        return None
    if isinstance(annotation, type) and issubclass(annotation, Kind):
        return annotation, False
    args = getattr(annotation, "__args__", None)
    if isinstance(annotation, types.UnionType) or getattr(annotation, "__origin__", None) \
            is getattr(__import__("typing"), "Union"):
        kinds = [a for a in args if a is not type(None)]
        if len(kinds) == 1 and len(args) == 2 and isinstance(kinds[0], type) \
                and issubclass(kinds[0], Kind):
            return kinds[0], True
    return None


def _annotations(f):
    """The parameters' annotations of ``f``, evaluated (strings under ``from __future__
    import annotations``); an annotation that does not evaluate is left out."""
    try:
        return inspect.get_annotations(f, eval_str=True)
    except Exception:  # noqa: BLE001 -- one unresolvable annotation: resolve the others alone
        pass
    out, glb = {}, getattr(f, "__globals__", {})
    for k, a in getattr(f, "__annotations__", {}).items():
        if isinstance(a, str):
            try:
                a = eval(a, glb)  # noqa: S307 -- the library's own annotation source, not data
            except Exception:  # noqa: BLE001 -- not a kind (a type only for the reader)
                continue
        out[k] = a
    return out


def _kinds(f, params):
    """``((index, name, Kind, check, optional, tol), ...)`` of the parameters annotated with a kind
    (``check(Kind, value, name)`` is the kind's own check function, not its sealed twin)."""
    if _kind_base() is None or not getattr(f, "__annotations__", None):
        return ()
    ann = _annotations(f)
    out = []
    tol = next(((i if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) else 10**9,
                 p.default) for i, p in enumerate(params) if p.name == "tol"), None)
    for i, p in enumerate(params):
        k = _kind_of(ann.get(p.name))
        if k is not None:
            index = i if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) else 10**9
            fn = getattr(k[0].check.__func__, "__wrapped__", k[0].check.__func__)
            # a kind whose check takes a tolerance gets the function's own ``tol`` (log_so3's
            # tol decides what it calls a rotation), not the kind's default
            own_tol = tol if "tol" in inspect.signature(fn).parameters and p.name != "tol" \
                else None
            out.append((index, p.name, k[0], fn, k[1], own_tol))
    return tuple(out)


@dataclasses.dataclass(frozen=True)
class _Spec:
    """How one callable's arguments are scanned."""
    name: str                       # the name the reader called: f, Class.method or Class
    short: str                      # the last part of it
    names: tuple                    # parameter names in order (self dropped for methods)
    text: frozenset                 # parameters that take free text
    infinite: frozenset             # parameters where infinity is allowed
    raw: frozenset                  # parameters not scanned at all (opaque by design)
    nonfinite_result: bool          # the result may hold NaN/inf by design
    method: bool
    kinds: tuple = ()               # (index, name, Kind, check, optional, tol): declared kinds
    member: str | None = None       # "method", "classmethod", "__init__", "__call__": named
    #                                 after the class used at the call
    open: bool = False              # runs the reader's code (tasks): robodyn calls made from
    #                                 it are the reader's own, checked at the boundary
    call: Call | None = None        # the record of a plain call (positional, finite)


def _spec(f, name, method, decl, member=None):
    try:
        sig = inspect.signature(f)
    except (TypeError, ValueError):
        sig = None
    params = list(sig.parameters.values()) if sig else []
    if method and params:
        params = params[1:]
    names = tuple(p.name for p in params if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD))
    text, infinite = set(decl.get("text", ())), set(decl.get("infinite", ()))
    text |= {n for n in names if n in TEXT_NAMES}
    if decl.get("text") == "all":               # a module about files and notebooks
        text = set(names) | {"**"}
    raw = set(names) | {"**"} if decl.get("raw") == "all" else set(decl.get("raw", ()))
    for p in params:
        ann = p.annotation if isinstance(p.annotation, str) else getattr(
            p.annotation, "__name__", str(p.annotation))
        d = p.default
        if isinstance(d, str) or re.search(r"\b(str|Path|PathLike)\b", str(ann)):
            text.add(p.name)
        if isinstance(d, float) and math.isinf(d):
            infinite.add(p.name)
    return _Spec(name=name, short=name.rpartition(".")[2], names=names,
                 text=frozenset(text), infinite=frozenset(infinite),
                 raw=frozenset(raw),
                 nonfinite_result=bool(decl.get("nonfinite_result", False)), method=method,
                 kinds=_kinds(f, params), member=member, open=bool(decl.get("open", False)),
                 call=Call(name, names, True))


def _seal_function(f, name, method, decl, member=None):
    if getattr(f, "__robodyn_sealed__", None) is not None:
        return f
    spec = _spec(f, name, method, decl, member)
    if decl.get("self_checked"):
        # a per-call hot path (compiled engine, the floating-base forms' accelerations) that
        # checks every argument and its result itself under its own name: not wrapped (no
        # cost); the API fuzzer holds it to the same rules as every sealed callable
        f.__robodyn_sealed__ = spec
        return f
    return _wrap(f, spec)


def _seal_class(cls, declare):
    for klass in cls.__mro__:
        if not klass.__module__.startswith(_PACKAGE) or klass is object:
            continue
        if klass is not cls and not klass.__name__.startswith("_"):
            continue                  # a public base class is sealed in its own module
        for k, v in list(vars(klass).items()):
            if k.startswith("_") and k not in ("__init__", "__call__"):
                continue
            name = {"__init__": cls.__name__, "__call__": f"{cls.__name__}()"}.get(
                k, f"{cls.__name__}.{k}")
            decl = declare.get(name, {})
            if decl.get("skip"):
                continue
            member = k if k in ("__init__", "__call__") else "method"
            if isinstance(v, staticmethod):
                setattr(klass, k, staticmethod(_seal_function(v.__func__, name, False, decl)))
            elif isinstance(v, classmethod):
                setattr(klass, k, classmethod(_seal_function(v.__func__, name, True, decl,
                                                             "classmethod")))
            elif inspect.isfunction(v):
                setattr(klass, k, _seal_function(v, name, True, decl, member))


def _defined_here(obj, modname):
    """Whether ``modname`` is the public home of ``obj``: defined there, or in a private module
    (``robodyn._rigid_body``) whose names ``modname`` exports."""
    home = obj.__module__
    return home == modname or any(p.startswith("_") for p in home.split(".")[1:])


def _put_home(obj, sealed):
    """The sealed twin of a function defined in a private module, put back there under its
    name: pickle finds a function by its module and name, and must find this very object."""
    home = sys.modules.get(obj.__module__)
    if home is not None and home.__dict__.get(obj.__name__) is obj:
        setattr(home, obj.__name__, sealed)


class _Declared(dict):
    """Declarations by name, each over the module's default (the ``"*"`` entry)."""

    def __init__(self, default, by_name):
        super().__init__(by_name)
        self.default = default

    def get(self, name, fallback=None):
        return {**self.default, **super().get(name, {})}


def seal(namespace: dict, declare: dict | None = None) -> None:
    """Seal every public callable of the module whose globals are ``namespace``.

    ``declare`` maps a callable's name (``"f"``, ``"Class.method"``, ``"Class"`` for the
    constructor) to ``{"text": [...], "infinite": [...], "raw": [...],
    "nonfinite_result": True, "open": True, "self_checked": True}``: arguments that take free
    text (``"**"``: the keyword arguments passed on), arguments where infinity is meaningful,
    arguments that are opaque by design (never scanned), results that may hold NaN/inf by
    design, callables that run the reader's own code (tasks), whose robodyn calls are the
    reader's, and compiled hot paths that check everything themselves (left unwrapped; the
    fuzzer holds them to the same rules). ``"*"`` is the module's default for every callable
    (``{"*": {"text": "all"}}``: a module about files and notebooks). Everything else gets the
    full scan. Parameters annotated with a :class:`robodyn.kinds.Kind` are checked by it.
    """
    declare = dict(declare or {})
    default = declare.pop("*", {})
    declare = _Declared(default, declare)
    modname = namespace.get("__name__", "")
    names = namespace.get("__all__")
    if names is None:
        names = [n for n, o in namespace.items() if not n.startswith("_") and callable(o)
                 and getattr(o, "__module__", None) == modname]
    for n in names:
        obj = namespace.get(n)
        if inspect.isclass(obj):
            if issubclass(obj, BaseException) or not obj.__module__.startswith(_PACKAGE):
                continue
            if _defined_here(obj, modname):
                _seal_class(obj, declare)
        elif inspect.isfunction(obj) and getattr(obj, "__module__", "").startswith(_PACKAGE):
            if _defined_here(obj, modname) or getattr(obj, "__robodyn_sealed__", None):
                namespace[n] = _seal_function(obj, n, False, declare.get(n, {}))
                if obj.__module__ != modname and namespace[n] is not obj:
                    _put_home(obj, namespace[n])
            else:
                owner = sys.modules.get(obj.__module__)
                namespace[n] = getattr(owner, obj.__name__, obj) if owner else obj
