"""The one boundary of robodyn's public API (issue 28): every public callable is *sealed*.

Each public module ends with ``_boundary.seal(globals())``. That wraps every callable the
module exports (its ``__all__``, else its own public callables) and every public method and
constructor of its public classes, so that a call made **from outside robodyn** goes through
three steps, whatever the function's own checks are:

1. **Before any work, every argument is scanned** (lists, tuples, dicts -- keys too --, object
   arrays, nested to any depth up to :data:`MAX_DEPTH`):

   * text that is not a plain identifier (a name such as ``"m"`` or ``"auto"``) is refused:
     robodyn never evaluates text, and a string where numbers or expressions go is a mistake
     (arguments that take free text by design -- paths, labels, answers -- are declared, or
     inferred from a ``str`` default or annotation);
   * NaN, and infinity unless the argument's default is infinite or it is declared, are
     refused (Python floats, numpy arrays and scalars, sympy ``nan``/``zoo``/``oo``);
   * complex numbers and boolean arrays are refused (robodyn works with real quantities).

   The refusal is a ``TypeError``/``ValueError`` naming ``function: argument``.
2. **The function runs.** A ``ValueError``/``TypeError`` raised inside robodyn by a check of an
   *inner* function (``"draw_chain: q: expected ..."`` when the reader called ``arm_figure``)
   is renamed to the function the reader called when its argument is the reader's argument of
   the same name; an error about non-finite numbers that no argument explains is reported as
   an overflow of the ``result``. An overflow, a singular matrix or a division by zero met by
   numpy or Python on the way (``OverflowError``, ``FloatingPointError``,
   ``ZeroDivisionError``, ``LinAlgError``) is turned into a ``ValueError`` naming the
   ``result``.
3. **The result is scanned**: NaN or infinity in a numeric result (numbers, arrays, and the
   lists, tuples, dicts and dataclasses holding them) for finite input is an error naming
   ``function: result`` -- no wrong number is returned silently.

Calls that robodyn makes to itself pass straight through (a context variable records that a
public call is under way; a call whose caller is robodyn's own code -- a self-checked hot path,
module set-up -- passes too), so the boundary costs one check per reader's call, not per inner
call. ``tests/test_fuzz_api.py`` fails when a public callable is not sealed.

>>> def double(x, label="x"):
...     return 2 * x
>>> ns = {"__name__": double.__module__, "__all__": ["double"], "double": double}
>>> seal(ns)
>>> ns["double"](2.0)
4.0
>>> ns["double"]("__import__('os')")
Traceback (most recent call last):
...
TypeError: double: x: expected numbers, arrays or sympy expressions, got the text "__import__('os')" (robodyn never evaluates text)
>>> ns["double"](1e308)
Traceback (most recent call last):
...
ValueError: double: result: expected finite numbers for finite input, got inf (an overflow: the input is too large for floating point)
"""
from __future__ import annotations

import contextvars
import dataclasses
import decimal
import functools
import inspect
import math
import re
import sys
import types

import numpy as np
import sympy as sp

__all__ = ["seal", "is_sealed"]

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
    "scheduler", "address", "cache_dir", "url", "where", "release", "submission"})
"""Parameters that take free text by their name (exempt from the identifier rule only)."""

_ACTIVE = contextvars.ContextVar("robodyn_public_call", default=None)
_PLAIN = re.compile(r"[\w .,:\-]{0,200}\Z")
"""Text that may pass the scan in any argument: words, numbers, names (the function's own
checks then decide). Brackets, quotes, operators and calls -- code -- are refused."""
_SYMPY_BAD = (sp.nan, sp.zoo)
_SYMPY_INF = (sp.oo, -sp.oo)
_FOREIGN_NUMERIC = (OverflowError, FloatingPointError, ZeroDivisionError,
                    np.linalg.LinAlgError)
_PACKAGE = __name__.rpartition(".")[0]
_ROOT = __file__.rpartition("/")[0]
_INSIDE = _ROOT + "/"
_getframe = sys._getframe


class _Refusal(Exception):
    """Internal: what the scan found (turned into the public error with names)."""

    def __init__(self, exc, expected, got):
        super().__init__(expected)
        self.exc, self.expected, self.got = exc, expected, got
        self.path = ""                 # where inside the argument: [2], [m], [0][1]


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
    init: bool = False              # a constructor: named after the class actually built
    open: bool = False              # runs the reader's code (cells, tasks): robodyn calls made
    #                                 from it are the reader's own, checked at the boundary


# --------------------------------------------------------------------------
# the scan of one argument
# --------------------------------------------------------------------------

def _scan(v, text, infinite, depth, budget):
    """Raise _Refusal for the first bad entry of ``v``; return whether it held infinity."""
    h = _HANDLERS.get(type(v))
    if h is None:
        h = _HANDLERS[type(v)] = _handler(type(v))
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
    if a.size <= 48:
        return all(map(_isfinite, a.ravel().tolist()))
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
    if depth > 6:
        return None
    t = type(x)
    if t is float or isinstance(x, np.floating):
        return None if math.isfinite(x) else repr(float(x))
    if t is np.ndarray:
        if x.dtype.kind == "f" and x.size and not _all_finite(x):
            return f"NaN or infinity at positions {np.argwhere(~np.isfinite(x)).tolist()[:5]}"
        if x.dtype.kind == "O" and x.size <= 10000:
            return _nonfinite(x.ravel().tolist(), depth + 1)
        return None
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


# --------------------------------------------------------------------------
# renaming an inner function's refusal
# --------------------------------------------------------------------------

def _from_robodyn(exc):
    tb, last = exc.__traceback__, None
    while tb is not None:
        last = tb.tb_frame.f_code.co_filename
        tb = tb.tb_next
    return last is not None and last.startswith(_ROOT)


def _arithmetic_failure(exc):
    """An overflow, singular matrix or division by zero met by robodyn's arithmetic or by the
    numeric libraries -- not one raised on purpose by robodyn (a LinAlgError with its own
    message) nor by the reader's own code (a callback)."""
    tb, last = exc.__traceback__, ""
    while tb is not None:
        last = tb.tb_frame.f_code.co_filename
        tb = tb.tb_next
    if last.startswith(_ROOT):
        return not isinstance(exc, np.linalg.LinAlgError)
    return "site-packages" in last or "dist-packages" in last


def _head_parts(msg):
    head = msg.split(": expected", 1)[0] if ": expected" in msg else msg[:200]
    return [p.strip() for p in head.split(": ")]


def _own(spec, name, parts):
    if len(parts) < 2:
        return False
    first = parts[0].split(" ")[0].split("(")[0]      # "Surface 'floor'", "VMSForm(...)"
    return first in (name, spec.name, spec.short) or first.endswith("." + spec.short)


_OVERFLOW = re.compile(r"\bfinite\b|overflow|\bnan\b|\binf\b", re.I)


def _renamed(spec, name, exc, finite_input):
    """The exception to raise instead of ``exc`` (or None: keep it)."""
    if isinstance(exc, _FOREIGN_NUMERIC) and finite_input and _arithmetic_failure(exc):
        what = type(exc).__name__
        return ValueError(f"{name}: result: expected a finite result for finite input, "
                          f"got {what}: {str(exc)[:160]} (the input is too large for floating "
                          "point, or makes the problem singular)")
    if not isinstance(exc, (ValueError, TypeError)) or not (
            type(exc).__module__ in ("builtins", "numpy.linalg")
            or type(exc).__module__.startswith(_PACKAGE)):
        return None
    msg = str(exc)
    if not _from_robodyn(exc):
        return None
    parts = _head_parts(msg)
    if _own(spec, name, parts) or len(parts) < 2:
        return None
    m = re.match(r"[A-Za-z_][A-Za-z0-9_]*", parts[1])
    inner_arg = m.group(0) if m else ""
    rest = msg[len(parts[0]) + 2:]
    if inner_arg in spec.names:
        return _same_kind(exc, f"{name}: {rest}")
    if finite_input and _OVERFLOW.search(msg):
        return _same_kind(exc, f"{name}: result: expected finite numbers for finite input, "
                          f"got an overflow inside ({msg[:200]})", ValueError)
    return None


def _same_kind(exc, msg, base=None):
    """An exception of ``exc``'s class (robodyn's own classes included) with the new message."""
    try:
        new = type(exc)(msg)
        if str(new) == msg:
            return new
    except Exception:  # noqa: BLE001 -- a class whose constructor wants more: the base class
        pass
    return (base or (TypeError if isinstance(exc, TypeError) else ValueError))(msg)


# --------------------------------------------------------------------------
# the wrapper
# --------------------------------------------------------------------------

def _refuse(name, arg, r):
    return r.exc(f"{name}: {arg}{r.path}: expected {r.expected}, got {r.got}")


def _check_arguments(spec, name, args, kwargs):
    """Scan every argument; return whether any held infinity (allowed by declaration)."""
    budget = [MAX_ITEMS]
    found = False
    names = spec.names
    for i, v in enumerate(args):
        arg = names[i] if i < len(names) else f"argument {i + 1}"
        if arg in spec.raw:
            continue
        try:
            found |= _scan(v, arg in spec.text, arg in spec.infinite, 0, budget)
        except _Refusal as r:
            raise _refuse(name, arg, r) from None
    for arg, v in kwargs.items():
        if arg in spec.raw or (arg not in names and "**" in spec.raw):
            continue
        text = arg in spec.text or (arg not in names and (
            "**" in spec.text or arg in TEXT_NAMES))     # options passed on by name
        try:
            found |= _scan(v, text, arg in spec.infinite, 0, budget)
        except _Refusal as r:
            raise _refuse(name, arg, r) from None
    return found


def _wrap(f, spec):
    method = spec.method

    @functools.wraps(f)
    def sealed(*args, **kwargs):
        if _ACTIVE.get() is not None or _getframe(1).f_code.co_filename.startswith(_INSIDE):
            return f(*args, **kwargs)       # robodyn calling itself (or a self-checked path)
        name = type(args[0]).__name__ if spec.init and args else spec.name
        token = _ACTIVE.set(None if spec.open else name)
        try:
            infinite = _check_arguments(spec, name, args[1:] if method else args, kwargs)
            try:
                out = f(*args, **kwargs)
            except (ValueError, TypeError) + _FOREIGN_NUMERIC as exc:
                new = _renamed(spec, name, exc, not infinite)
                if new is None:
                    raise
                raise new from None     # one clear message, raised at the reader's call
        finally:
            _ACTIVE.reset(token)
        if not (infinite or spec.nonfinite_result):
            bad = _nonfinite(out)
            if bad:
                raise ValueError(f"{name}: result: expected finite numbers for finite "
                                 f"input, got {bad} (an overflow: the input is too large for "
                                 "floating point)")
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


def _spec(f, name, method, decl):
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
                 open=bool(decl.get("open", False)), init=f.__name__ == "__init__")


def _seal_function(f, name, method, decl):
    if getattr(f, "__robodyn_sealed__", None) is not None:
        return f
    spec = _spec(f, name, method, decl)
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
            if isinstance(v, staticmethod):
                setattr(klass, k, staticmethod(_seal_function(v.__func__, name, False, decl)))
            elif isinstance(v, classmethod):
                setattr(klass, k, classmethod(_seal_function(v.__func__, name, True, decl)))
            elif inspect.isfunction(v):
                setattr(klass, k, _seal_function(v, name, True, decl))


def _defined_here(obj, modname):
    """Whether ``modname`` is the public home of ``obj``: defined there, or in a private module
    (``robodyn._rigid_body``) whose names ``modname`` exports."""
    home = obj.__module__
    return home == modname or any(p.startswith("_") for p in home.split(".")[1:])


class _Declared(dict):
    """Declarations by name, each over the module's default (the ``"*"`` entry)."""

    def __init__(self, default, by_name):
        super().__init__(by_name)
        self.default = default

    def get(self, name, fallback=None):
        return {**self.default, **super().get(name, {})}


# --------------------------------------------------------------------------
# text never reaches sympy's parser from inside a public call
# --------------------------------------------------------------------------

_SYMPY_DIR = sp.__file__.rpartition("/")[0].rpartition("/")[0] + "/sympy/"
_SYMPY_OWN_TEXT = {"nsimplify"}       # sympy parsing strings it printed itself


def _robodyn_caller():
    """Whether the first frame outside sympy that called into it is robodyn's."""
    f, inside = sys._getframe(2), set()
    while f is not None and f.f_code.co_filename.startswith(_SYMPY_DIR):
        inside.add(f.f_code.co_name)
        f = f.f_back
    return not (inside & _SYMPY_OWN_TEXT) and f is not None and \
        f.f_code.co_filename.startswith(_ROOT)


def _holds_text(x, depth=0):
    if isinstance(x, (str, bytes)):
        return True
    return depth < 8 and isinstance(x, (list, tuple)) and any(
        _holds_text(e, depth + 1) for e in x)


def _text_refused(active, s):
    return TypeError(f"{active}: expected numbers or sympy expressions, got the text "
                     f"{_short(s)} on its way to sympy's parser (robodyn never evaluates text)")


def _install_text_guard():
    """Wrap sympy's string parser (which ``sympify``, ``S`` and ``Matrix`` of a string go
    through) and ``lambdify`` so that, while a public robodyn call is under way, text handed
    to them by robodyn's code is refused. Outside robodyn calls sympy is unchanged."""
    import importlib
    sympy_parser = importlib.import_module("sympy.parsing.sympy_parser")
    lambdify_module = importlib.import_module("sympy.utilities.lambdify")
    parse, lamb = sympy_parser.parse_expr, lambdify_module.lambdify
    if getattr(lamb, "__robodyn_guard__", False):        # a second import (a reload)
        return lamb, lamb.__wrapped__

    @functools.wraps(parse)
    def parse_expr(s, *args, **kwargs):
        active = _ACTIVE.get()
        if active is not None and _robodyn_caller():
            raise _text_refused(active, s)
        return parse(s, *args, **kwargs)

    @functools.wraps(lamb)
    def lambdify(args, expr, *a, **k):
        active = _ACTIVE.get()
        if active is not None and (_holds_text(expr) or _holds_text(args)) \
                and _robodyn_caller():
            raise _text_refused(active, expr if _holds_text(expr) else args)
        return lamb(args, expr, *a, **k)

    parse_expr.__robodyn_guard__ = lambdify.__robodyn_guard__ = True
    global _GUARDED_PARSE
    _GUARDED_PARSE = parse_expr
    sympy_parser.parse_expr = parse_expr
    lambdify_module.lambdify = sp.lambdify = lambdify
    return lambdify, lamb


_GUARDED_PARSE = None
_GUARDED_LAMBDIFY, _SYMPY_LAMBDIFY = _install_text_guard()


def seal(namespace: dict, declare: dict | None = None) -> None:
    """Seal every public callable of the module whose globals are ``namespace``.

    ``declare`` maps a callable's name (``"f"``, ``"Class.method"``, ``"Class"`` for the
    constructor) to ``{"text": [...], "infinite": [...], "raw": [...],
    "nonfinite_result": True, "open": True, "self_checked": True}``: arguments that take free text (``"**"``: the
    keyword arguments passed on), arguments where infinity is meaningful, arguments that are
    opaque by design (never scanned), results that may hold NaN/inf by design, and callables
    that run the reader's own code (cells, tasks), whose robodyn calls get their own
    boundary, and compiled hot paths that check everything themselves (left unwrapped; the
    fuzzer holds them to the same rules). ``"*"`` is the module's default for every callable
    (``{"*": {"text": "all"}}``: a module about files and notebooks). Everything else gets the
    full scan.
    """
    if namespace.get("lambdify") is _SYMPY_LAMBDIFY:     # imported by name before the guard
        namespace["lambdify"] = _GUARDED_LAMBDIFY
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
            else:
                owner = sys.modules.get(obj.__module__)
                namespace[n] = getattr(owner, obj.__name__, obj) if owner else obj


del types
