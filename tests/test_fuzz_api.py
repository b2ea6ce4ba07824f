"""The API fuzzer (issue 28): every public callable of robodyn, found by introspection, is
called once validly and then with each of its arguments in turn replaced by values of a
catalog of bad kinds and of legal alternatives (tests/_fuzz_api_support.py says which
callables count as public, where valid calls come from, and what the catalog holds).

For each substitution:

* a *must refuse* value (a string payload that would create a file, also nested in lists,
  object arrays and dict keys; NaN, infinity, complex, booleans where numbers go, non-rigid
  poses, ...) must raise a ``ValueError``/``TypeError`` raised inside robodyn whose message
  names ``function: argument``;
* a *may refuse* value (zero, negative, 1e308, wrong shape, a time or rate symbol where a
  parameter goes, None) must either be refused that way or give a result without NaN/inf;
* a *legal* alternative (numpy scalars, Fraction, sympy Integer/Float, lists for arrays,
  big-endian or Fortran-ordered arrays) must give the valid call's result;
* nothing may hang (10 s per call), raise another exception, or create the sentinel file;
  tests/conftest.py makes sympy's string parser raise inside robodyn.

The sample per argument is deterministic (seeded by the callable's name; the payload always
in it), so the whole file stays within about a minute and a half on 2 cores.
"""
from __future__ import annotations

import copy
import inspect
import random
import warnings

import pytest

import _fuzz_api_support as fz

pytestmark = pytest.mark.usefixtures("no_text_evaluated")  # sympy's parser raises inside robodyn

API = fz.public_callables()
REGISTRY, SKIP, PENDING, GAPS, TEXT, TESTS = fz.load_registry()
SAMPLE_PER_ARGUMENT = 7
"""Substitutions per argument besides the payload (a deterministic sample of the catalog)."""
COSTLY = {"robodyn.models.four_bar_kane", "robodyn.walking.CompassGait.hybrid_system",
          "robodyn.viz.animation", "robodyn.viz.interactive_figure"}
"""Callables whose one valid call takes about a second: two substitutions per argument."""


@pytest.fixture(autouse=True)
def _in_a_scratch_folder(tmp_path, monkeypatch):
    """Callables that take a path write where they are told: a payload string used as a file
    name must land in a scratch folder, never in the repository."""
    monkeypatch.chdir(tmp_path)


@pytest.fixture(scope="module")
def recorded():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fz.record_doctest_calls(API)


def valid_call(name, recorded):
    if name in REGISTRY:
        return REGISTRY[name]()
    kind, obj, _ = API[name]
    if kind == "class" and issubclass(obj, BaseException):
        return ("message",), {}
    return recorded.get(name)


def test_every_public_callable_has_a_valid_call(recorded):
    missing = [n for n in API if valid_call(n, recorded) is None and n not in PENDING]
    assert not missing, (f"{len(missing)} public callables have no valid call: add one to "
                         f"tests/fuzz_calls/<helper>.py (CALLS) or a doctest:\n" +
                         "\n".join(missing))


def test_every_public_callable_is_sealed():
    """The one boundary (robodyn._boundary): every public callable -- functions, constructors,
    methods -- goes through ``seal``; a module that forgets ``_seal(globals())`` at its end, or a
    callable added where the seal cannot see it, fails here."""
    from robodyn._boundary import is_sealed
    loose = []
    for name, (kind, obj, owner) in API.items():
        if kind == "class":
            ok = issubclass(obj, BaseException) or is_sealed(obj)
        elif kind == "function":
            ok = is_sealed(obj)
        else:
            ok = is_sealed(vars(owner)[name.rpartition(".")[2]])
        if not ok:
            loose.append(name)
    assert not loose, f"{len(loose)} public callables bypass the boundary: {loose}"


def test_registry_names_exist(recorded):
    stale = [n for n in list(REGISTRY) + list(SKIP) + list(GAPS) if n not in API]
    assert not stale, f"registered names that are not public callables: {stale}"


def _fresh(call):
    """A deep copy of (args, kwargs): stateful arguments (random generators, caches) start
    equal in every call, so a legal alternative is compared with the same starting state."""
    try:
        return copy.deepcopy(call)
    except Exception:  # noqa: BLE001 -- objects that cannot be copied are shared
        return call


def _target(name, args, kwargs):
    """(callable, args, kwargs, short function name) for one call."""
    kind, obj, _ = API[name]
    short = name.rpartition(".")[2]
    if kind == "method":
        return getattr(args[0], short), args[1:], kwargs, short
    if kind in ("staticmethod", "classmethod"):
        return getattr(obj, short), args, kwargs, short
    return obj, args, kwargs, short


def _arguments(f, args, kwargs):
    try:
        sig = inspect.signature(f)
        ba = sig.bind(*args, **kwargs)
    except (TypeError, ValueError):
        return None, None
    names = [p.name for p in sig.parameters.values()
             if p.name in ba.arguments and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    return ba, names


def fuzz_one(name, recorded):
    call = valid_call(name, recorded)
    if call is None:
        pytest.skip("no valid call (test_every_public_callable_has_a_valid_call fails)")
    args, kwargs = _fresh(call)
    f, args, kwargs, short = _target(name, tuple(args), dict(kwargs))
    owner = name.rsplit(".", 2)[-2] if API[name][0] != "function" else short
    ba, names = _arguments(f, args, kwargs)
    base = fz.call(f, *_fresh((args, kwargs)), 60.0)   # a copy: random generators stay unspent
    if not names:
        return [], 0
    rng = random.Random(name)
    budget = SAMPLE_PER_ARGUMENT if name not in COSTLY else 2   # deterministic, not timed
    failures, n = [], 0
    for arg in names:
        subs = fz.substitutions(ba.arguments[arg])
        if arg in TEXT.get(name, ()):
            subs = [(lb, v, fz.MAYBE if isinstance(v, str) else vd) for lb, v, vd in subs]
        if arg in TESTS.get(name, ()):         # what the predicate tests: False is an answer
            subs = [(lb, v, fz.MAYBE if lb in fz.STRUCTURE_LABELS else vd) for lb, v, vd in subs]
        first, rest = subs[:1], subs[1:]
        rng.shuffle(rest)
        for label, value, verdict in first + rest[:budget]:
            a2, k2 = _fresh((ba.args, ba.kwargs))
            b2 = ba.signature.bind(*a2, **k2)
            b2.arguments[arg] = value
            n += 1
            what = f"{name}({arg}={label})"

            def names_ok(msg, arg=arg, verdict=verdict):
                return (fz.names_argument(msg, short, arg) or
                        fz.names_argument(msg, owner, arg) or
                        # an overflow names the function's result (a postcondition)
                        verdict == fz.MAYBE and fz.names_argument(msg, short, "result") or
                        # text read by the safe parser: its refusals name the function
                        arg in TEXT.get(name, ()) and fz.names_argument(msg, short, None))
            failures += fz.judge(f, b2.args, b2.kwargs, verdict, what, base, names_ok)
    return failures, n


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(API))
def test_fuzz(name, recorded, request):
    if name in SKIP:
        pytest.skip(SKIP[name])
    if name in GAPS:        # known gaps: listed, not hidden (a fix shows as XPASS)
        request.applymarker(pytest.mark.xfail(reason=GAPS[name], strict=False))
    kind, obj, _ = API[name]
    if kind == "class" and issubclass(obj, BaseException):
        pytest.skip("an exception or warning class: raising it is its API")
    failures, n = fuzz_one(name, recorded)
    assert not failures, f"{len(failures)} of {n} substitutions failed:\n" + "\n".join(failures)
