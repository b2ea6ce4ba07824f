"""Support of the API fuzzer (tests/test_fuzz_api.py): the public API by introspection, the
valid calls (registry files and doctests), the catalog of bad and legal values, the judge.

Public API, by introspection
----------------------------
* every module and subpackage of ``robodyn`` whose name has no leading underscore (``__main__``
  is a script, not an API);
* in a module with ``__all__``: every callable named there; in a module without it (the
  ``grading`` and ``viz`` submodules): every callable *defined in that module* whose name has no
  leading underscore (the strict reading: what a reader can import without an underscore);
* for each public class: the class itself (its constructor) and every public method
  (functions, classmethods and staticmethods in the class body; properties are data).
  Exception classes are covered as classes only (raising them is their API).
The plotting package ``robodyn.viz`` is included (its functions take numbers too).

Valid calls
-----------
Each public callable needs one valid call: from a file ``tests/fuzz_calls/*.py`` (``CALLS``
dict: qualified name -> ``lambda: (args, kwargs)``; methods take the instance as first
positional argument), or else recorded from the first call of it made by its module's
doctests. ``SKIP`` dicts in those files (qualified name -> reason) take a callable out of
the substitution runs (never out of the completeness count).
"""
from __future__ import annotations

import doctest
import glob
import importlib
import inspect
import os
import pkgutil
import runpy
import sys
import types

import robodyn

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT_MODULES = {"robodyn.grading.__main__"}
CHECK_MODULES = {"robodyn.kinds"}
"""Modules of checks, not of computations: the declared kinds (issue 37) are what the
boundary runs on arguments; their ``check(value, name)`` takes the caller's label as ``name``.
tests/test_semantic_fuzz.py fuzzes each kind (directly and through every annotated argument)."""


def public_modules():
    out = []
    for m in pkgutil.walk_packages(robodyn.__path__, "robodyn."):
        if any(p.startswith("_") for p in m.name.split(".")[1:]):
            continue
        out.append(m.name)
    return ["robodyn"] + sorted(out)


def rooms(mod):
    """The private modules of a package whose names its public face exports (where those
    names' docstrings and doctests live), in order."""
    names = getattr(mod, "__all__", None)
    if not hasattr(mod, "__path__") or not names:
        return []
    homes = {getattr(getattr(mod, n, None), "__module__", None) for n in names}
    return [sys.modules[h] for h in sorted(h for h in homes if h and h.startswith(mod.__name__ + "._"))]


def _own(obj, modname):
    return getattr(obj, "__module__", None) == modname


def public_callables():
    """{qualified name: (kind, object, owner class or None)} over the whole public API, each
    object under the first (shortest) name it is reachable by."""
    seen, out = {}, {}
    for modname in public_modules():
        if modname == "robodyn" or modname in CHECK_MODULES:
            continue
        mod = importlib.import_module(modname)
        names = getattr(mod, "__all__", None)
        if names is None:
            names = [n for n, o in vars(mod).items()
                     if not n.startswith("_") and callable(o) and _own(o, modname)]
        for n in names:
            obj = getattr(mod, n)
            if not callable(obj) or isinstance(obj, types.ModuleType):
                continue
            if id(obj) in seen:
                continue
            seen[id(obj)] = True
            q = f"{modname}.{n}"
            if inspect.isclass(obj):
                out[q] = ("class", obj, None)
                if issubclass(obj, BaseException) or not obj.__module__.startswith("robodyn"):
                    continue
                taken = set()
                for klass in obj.__mro__:
                    if not klass.__module__.startswith("robodyn"):
                        continue
                    own = klass is obj or klass.__name__.startswith("_")
                    for k, v in vars(klass).items():
                        if k.startswith("_") or k in taken:
                            continue
                        if isinstance(v, (staticmethod, classmethod)) or inspect.isfunction(v):
                            taken.add(k)
                            if own:     # a method of a public base class is covered there
                                kind = type(v).__name__ if not inspect.isfunction(v) \
                                    else "method"
                                out[f"{q}.{k}"] = (kind, obj, klass)
            else:
                out[q] = ("function", obj, None)
    return out


def load_registry():
    """(CALLS, SKIP, PENDING, GAPS, TEXT, TESTS) merged over tests/fuzz_calls/*.py. TEXT: name
    -> arguments that take text by design (answers read by the safe parser): a string there may
    be accepted, but it must never run. TESTS: name -> arguments a predicate tests (``is_rotation``'s
    R): a non-rigid pose or a reflection there may be answered (False) instead of refused."""
    calls, skip, pending, gaps, text, tests = {}, {}, {}, {}, {}, {}
    for path in sorted(glob.glob(os.path.join(HERE, "fuzz_calls", "*.py"))):
        ns = runpy.run_path(path)
        for k, v in ns.get("CALLS", {}).items():
            calls.setdefault(k, v)
        skip.update(ns.get("SKIP", {}))
        pending.update(ns.get("PENDING", {}))
        gaps.update(ns.get("GAPS", {}))
        text.update(ns.get("TEXT", {}))
        tests.update(ns.get("TESTS", {}))
    return calls, skip, pending, gaps, text, tests


class _Recorder:
    """Wraps public callables so that their first call made *directly from a doctest* is kept."""

    def __init__(self):
        self.calls = {}         # first call made from a doctest
        self.inner = {}         # else the first call made anywhere (results built inside)
        self.undo = []
        self.patched = set()
        self.methods = []

    def keep(self, q, args, kwargs, frame):
        if q not in self.calls and _from_doctest(frame):
            self.calls[q] = (args, dict(kwargs))
        elif q not in self.inner:
            self.inner[q] = (args, dict(kwargs))

    def _wrap(self, q, f, drop_self=False):
        rec = self

        def wrapper(*args, **kwargs):
            frame = sys._getframe(1)
            if drop_self:
                frame = frame.f_back if frame.f_code.co_filename.startswith("<") is False \
                    and frame.f_back is not None else frame
            frame = sys._getframe(1)
            if _from_doctest(frame):
                out = f(*args, **kwargs)      # a call that raised is not a valid call
            else:       # robodyn calling itself through this wrapper: as if directly (the
                with robodyn.checks(False):   # boundary sees the wrapper's frame, not robodyn's)
                    out = f(*args, **kwargs)
            rec.keep(q, tuple(args[1:] if drop_self else args), kwargs, frame)
            return out
        wrapper.__wrapped__ = f
        return wrapper

    def install(self, api):
        for q, (kind, obj, owner) in api.items():
            if kind == "function":
                modname, _, n = q.rpartition(".")
                for m in list(sys.modules.values()):
                    if m is not None and getattr(m, "__name__", "").startswith("robodyn") \
                            and getattr(m, n, None) is obj:
                        self.undo.append((m, n, obj))
                        setattr(m, n, self._wrap(q, obj))
            elif kind == "class":
                for special in ("__init__", "__new__"):
                    init = obj.__dict__.get(special)
                    if isinstance(init, staticmethod):
                        init = init.__func__
                    if init is not None and inspect.isfunction(init) \
                            and not issubclass(obj, BaseException):
                        self.undo.append((obj, special, obj.__dict__[special]))
                        w = self._wrap(q, init, drop_self=True)
                        setattr(obj, special, staticmethod(w) if special == "__new__" else w)
                        break
            else:
                name = q.rpartition(".")[2]
                raw = vars(owner)[name]
                if kind == "method":
                    if (owner, name) not in self.patched:
                        self.patched.add((owner, name))
                        self.undo.append((owner, name, raw))
                        setattr(owner, name, self._wrap_method(name, raw))
                    self.methods.append((q, obj, name))
                elif (owner, name) not in self.patched:
                    self.patched.add((owner, name))
                    self.undo.append((owner, name, raw))
                    w = self._wrap(q, raw.__func__, drop_self=kind == "classmethod")
                    setattr(owner, name, type(raw)(w))

    def _wrap_method(self, name, f):
        rec = self

        def wrapper(*args, **kwargs):
            frame = sys._getframe(1)
            if _from_doctest(frame):
                out = f(*args, **kwargs)
            else:
                with robodyn.checks(False):
                    out = f(*args, **kwargs)
            for q, cls, n in rec.methods:
                if n == name and args and isinstance(args[0], cls):
                    rec.keep(q, tuple(args), kwargs, frame)
            return out
        wrapper.__wrapped__ = f
        return wrapper

    def uninstall(self):
        for owner, name, old in reversed(self.undo):
            if old is _MISSING:
                delattr(owner, name)
            else:
                setattr(owner, name, old)
        self.undo = []


_MISSING = object()


def _from_doctest(frame):
    return frame is not None and frame.f_code.co_filename.startswith("<doctest")


def record_doctest_calls(api):
    """Run every public module's doctests (output ignored) and keep the first direct call of
    each public callable."""
    finder = doctest.DocTestFinder()
    tests = []
    for modname in public_modules():
        mod = importlib.import_module(modname)
        tests += finder.find(mod, modname)
        for room in rooms(mod):
            tests += finder.find(room, room.__name__)
    rec = _Recorder()
    rec.install(api)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS, verbose=False)
    try:
        for test in tests:
            mod = sys.modules[test.name.split(".")[0]] if False else None
            test.globs = dict(test.globs)
            for k, v in list(test.globs.items()):       # the module's own names, wrapped
                m = sys.modules.get(test.globs.get("__name__", ""))
                if m is not None and k in vars(m):
                    test.globs[k] = vars(m)[k]
            runner.run(test, out=lambda s: None, clear_globs=False)
    finally:
        rec.uninstall()
    return {**rec.inner, **rec.calls}


# --------------------------------------------------------------------------
# the catalog of substitutions
# --------------------------------------------------------------------------
import fractions
import numbers
import signal
import tempfile

import numpy as np
import sympy as sp

SENTINEL = os.path.join(tempfile.gettempdir(), f"robodyn_fuzz_sentinel_{os.getpid()}")
PAYLOAD = f"__import__('pathlib').Path({SENTINEL!r}).touch() or 1"
T = sp.Symbol("t", real=True)
RATES = (sp.Symbol("q1_dot"), sp.Symbol("u1_dot"))

MUST, MAYBE, LEGAL = "must refuse", "may refuse", "legal"
STRUCTURE_LABELS = {"pose with rotation block scaled by 2", "pose with rotation block 0",
                    "rotation scaled by 2", "reflection"}
"""Substitutions that break a structure (rigidity) rather than a kind: a predicate that tests
that structure answers them."""


def _is_number(v):
    return isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_))


def _numeric_array(v):
    if isinstance(v, np.ndarray):
        return v.dtype.kind in "iuf" and v.size > 0
    if isinstance(v, (list, tuple)) and v:
        try:
            a = np.asarray(v)
        except (ValueError, TypeError):
            return False
        return a.dtype.kind in "iuf" and a.size > 1
    return False


def _rigid(a):
    return a.shape == (4, 4) and np.allclose(a[3], [0, 0, 0, 1]) and \
        np.allclose(a[:3, :3].T @ a[:3, :3], np.eye(3)) and not np.allclose(a, np.eye(4))


def _rotation(a):
    return a.shape == (3, 3) and np.allclose(a.T @ a, np.eye(3)) and \
        np.linalg.det(a) > 0 and not np.allclose(a, np.eye(3))


def substitutions(v):
    """[(label, value, MUST/MAYBE/LEGAL)] for an argument whose valid value is ``v``."""
    out = [("payload string", PAYLOAD, MUST if not isinstance(v, str) else MAYBE)]
    if isinstance(v, (bool, np.bool_)):
        return out + [("None for a flag", None, MAYBE), ("the number 2", 2, MAYBE)]
    if _is_number(v):
        x = float(v)
        out += [("[payload]", [PAYLOAD], MUST), ("NaN", float("nan"), MUST),
                ("+inf", float("inf"), MUST), ("-inf", -float("inf"), MUST),
                ("complex", complex(x, 1.0), MUST), ("sympy nan", sp.nan, MUST),
                ("an array", np.ones(3), MUST), ("1e308", 1e308, MAYBE), ("zero", 0, MAYBE),
                ("negative", -abs(x) - 1.0, MAYBE), ("True", True, MAYBE),
                ("time symbol t", T, MAYBE), ("rate symbol", RATES[0], MAYBE)]
        out += [("numpy scalar", np.float64(x) if isinstance(v, float) else np.int64(v), LEGAL)]
        if float(x).is_integer() and abs(x) < 2**53:
            out += [("sympy Integer", sp.Integer(int(x)), LEGAL),
                    ("Fraction", fractions.Fraction(int(x)), LEGAL)]
        else:
            out += [("sympy Float", sp.Float(x), LEGAL),
                    ("Fraction", fractions.Fraction(x), LEGAL)]
        return out
    if _numeric_array(v):
        a = np.asarray(v, dtype=float)
        obj = a.astype(object)
        obj.flat[0] = PAYLOAD
        nan = a.copy()
        nan.flat[0] = np.nan
        inf = a.copy()
        inf.flat[-1] = np.inf
        lst = a.tolist()
        nested = lst
        while isinstance(nested, list) and nested and isinstance(nested[0], list):
            nested = nested[0]
        nested_l = a.tolist()
        tgt = nested_l
        while isinstance(tgt[0], list):
            tgt = tgt[0]
        tgt[0] = PAYLOAD
        out += [("object array holding payload", obj, MUST),
                ("list holding payload", nested_l, MUST), ("NaN entry", nan, MUST),
                ("inf entry", inf, MUST), ("complex array", a + 1j, MUST),
                ("boolean array", a > 0, MUST), ("None", None, MAYBE),
                ("wrong shape", np.append(a.ravel(), 1.0), MAYBE),
                ("one dimension more", a[None, None], MAYBE),
                ("zeros", np.zeros_like(a), MAYBE), ("negated", -a - 1.0, MAYBE),
                ("huge", np.full_like(a, 1e308), MAYBE)]
        if _rigid(a):
            bad = a.copy()
            bad[:3, :3] *= 2.0
            zero = a.copy()
            zero[:3, :3] = 0.0
            out += [("pose with rotation block scaled by 2", bad, MUST),
                    ("pose with rotation block 0", zero, MUST)]
        if _rotation(a):
            out += [("rotation scaled by 2", 2 * a, MUST), ("reflection", -a, MUST)]
        out += [("big-endian copy", np.asarray(a, dtype=">f8"), LEGAL),
                ("Fortran-ordered copy", np.asfortranarray(a), LEGAL)]
        if not isinstance(v, list):
            out += [("as nested lists", a.tolist(), LEGAL)]
        return out
    if isinstance(v, (sp.Basic, sp.MatrixBase)) or (
            isinstance(v, (list, tuple)) and v and all(isinstance(e, (sp.Basic, numbers.Number))
                                                       for e in v)):
        out += [("[payload]", [PAYLOAD], MUST), ("object array holding payload",
                                                 np.array([PAYLOAD, 1], dtype=object), MUST),
                ("{payload: 1}", {PAYLOAD: 1}, MUST), ("sympy nan", sp.nan, MAYBE),
                ("imaginary unit", sp.I, MAYBE), ("time symbol t", T, MAYBE),
                ("rate symbol q1_dot", RATES[0], MAYBE), ("rate symbol u1_dot", RATES[1], MAYBE),
                ("negative symbol", sp.Symbol("m", negative=True), MAYBE), ("None", None, MAYBE)]
        if isinstance(v, sp.Symbol):
            out += [("same-named symbol, other assumptions",
                     sp.Symbol(v.name, **({} if v.assumptions0 else {"real": True})), MAYBE)]
        return out
    if isinstance(v, dict):
        out += [("{payload: 1}", {PAYLOAD: 1.0}, MUST), ("{(payload,): 1}", {(PAYLOAD,): 1.0}, MUST)]
        if v:
            k0 = next(iter(v))
            out += [("value payload", {**v, k0: PAYLOAD}, MUST),
                    ("value NaN", {**v, k0: float("nan")}, MAYBE)]
        return out
    if isinstance(v, (list, tuple)):
        out += [("[payload]", [PAYLOAD], MUST), ("None", None, MAYBE)]
        return out
    if isinstance(v, str):
        return out + [("an integer", 123, MAYBE), ("None", None, MAYBE)]
    if v is None:
        return out + [("NaN", float("nan"), MAYBE)]
    return out + [("None", None, MAYBE), ("a number", 1.5, MAYBE)]


# --------------------------------------------------------------------------
# judging one call
# --------------------------------------------------------------------------
class Hang(BaseException):
    pass


def _alarm(signum, frame):
    raise Hang()


def call(f, args, kwargs, seconds=10.0):
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return f(*args, **kwargs)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def nonfinite(x, depth=0):
    """A description of the first NaN/inf in a result, or None."""
    if depth > 4:
        return None
    if isinstance(x, (float, np.floating)) and not np.isfinite(x):
        return repr(x)
    if isinstance(x, np.ndarray) and x.dtype.kind == "f" and not np.isfinite(x).all():
        return "an array holding NaN or inf"
    if isinstance(x, (list, tuple)):
        for e in x[:50]:
            r = nonfinite(e, depth + 1)
            if r:
                return r
    if isinstance(x, dict):
        for e in list(x.values())[:50]:
            r = nonfinite(e, depth + 1)
            if r:
                return r
    if hasattr(x, "__dataclass_fields__"):
        for k in x.__dataclass_fields__:
            r = nonfinite(getattr(x, k, None), depth + 1)
            if r:
                return f"{k}: {r}"
    return None


def same(a, b, depth=0):
    """Whether two results agree (numbers to 1e-9 relative; sympy exactly or after simplify;
    objects without their own ``__eq__`` are not compared)."""
    if depth > 4:
        return True
    if isinstance(a, (sp.Basic, sp.MatrixBase)) or isinstance(b, (sp.Basic, sp.MatrixBase)):
        try:
            if a == b:
                return True
            d = sp.simplify(sp.Matrix(a) - sp.Matrix(b)) if isinstance(a, sp.MatrixBase) \
                else sp.simplify(a - b)
            return bool(d == 0 or getattr(d, "is_zero_matrix", False))
        except Exception:
            return False
    if isinstance(a, np.ndarray) and a.dtype == object:     # sympy entries: exact equality
        return isinstance(b, np.ndarray) and a.shape == b.shape and all(
            same(x, y, depth + 1) for x, y in zip(a.ravel().tolist(), b.ravel().tolist()))
    if isinstance(a, (numbers.Number, np.ndarray, np.generic)):
        try:
            return bool(np.allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float),
                                    rtol=1e-9, atol=1e-12, equal_nan=True))
        except (TypeError, ValueError):
            return False
    if isinstance(a, (list, tuple)):
        return isinstance(b, (list, tuple)) and len(a) == len(b) and all(
            same(x, y, depth + 1) for x, y in zip(a, b))
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(
            same(a[k], b[k], depth + 1) for k in a)
    if hasattr(a, "__dataclass_fields__"):
        return type(a) is type(b) and all(
            same(getattr(a, k, None), getattr(b, k, None), depth + 1)
            for k in a.__dataclass_fields__)
    return True


def from_robodyn(exc):
    tb = exc.__traceback__
    last = None
    while tb is not None:
        last = tb.tb_frame.f_code.co_filename
        tb = tb.tb_next
    return last is not None and (os.sep + "robodyn" + os.sep) in last


def names_argument(msg, fname, argname):
    head = msg.split(": expected")[0] if ": expected" in msg else msg[:160]
    parts = [p.strip() for p in head.split(":")]
    return len(parts) >= 2 and any(fname in p for p in parts[:-1] + [parts[0]]) and (
        argname is None or argname in head)


def judge(f, args, kwargs, verdict, what, base, names_ok):
    """The failures (strings) of one substitution, by the fuzzer's rules: ``f(*args,
    **kwargs)`` with one argument replaced; ``verdict`` MUST/MAYBE/LEGAL; ``base`` the valid
    call's result; ``names_ok(message)`` whether a refusal names the function and argument.
    A payload that ran (the sentinel file exists) is a failure whatever else happened."""
    fails = _judge_call(f, args, kwargs, verdict, what, base, names_ok)
    if os.path.exists(SENTINEL):
        os.remove(SENTINEL)
        fails = [f"{what}: THE PAYLOAD RAN (sentinel file created)"] + fails
    return fails


def _judge_call(f, args, kwargs, verdict, what, base, names_ok):
    import warnings
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = call(f, args, kwargs)
    except Hang:
        return [f"{what}: still running after 10 s"]
    except (ValueError, TypeError) as exc:
        msg = str(exc)
        if verdict == LEGAL:
            return [f"{what}: legal value refused: {type(exc).__name__}: {msg[:160]}"]
        if not from_robodyn(exc):
            return [f"{what}: {type(exc).__name__} escaped from outside robodyn: {msg[:160]}"]
        if not names_ok(msg):
            return [f"{what}: message does not name the function and argument: {msg[:160]}"]
        return []
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # noqa: BLE001 -- any other exception is the finding
        return [f"{what}: {type(exc).__name__}: {str(exc)[:160]}"]
    if verdict == MUST:
        return [f"{what}: accepted (returned {type(out).__name__})"]
    if verdict == MAYBE:
        bad = nonfinite(out)
        return [f"{what}: accepted, result not finite: {bad}"] if bad else []
    return [] if same(out, base) else [f"{what}: legal value gave another result"]
