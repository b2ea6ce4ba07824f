"""The API fuzzer substitutes bad values only into the arguments its valid call binds: a
parameter left to its default is never fuzzed. For the modules of helper viz34 (robodyn.viz,
walkers, stability, parallel) every parameter of every public callable must be bound by its
registry call (tests/fuzz_calls/*.py), so a new parameter or a new callable cannot escape the
fuzzer unnoticed."""
import inspect

import pytest

import _fuzz_api_support as fz

MODULES = ("robodyn.viz", "robodyn.walking", "robodyn.walking", "robodyn.parallel")

UNFUZZED = {
    ("robodyn.parallel.map_tasks", "cache_dir"):
        "a folder path by design: fuzzing it would create folders named after the fuzzer's "
        "values; tests/test_parallel.py checks it",
}
"""(callable, parameter) pairs deliberately left to their defaults, with the reason."""

API = fz.public_callables()
CALLS, SKIP, *_ = fz.load_registry()
NAMES = sorted(n for n in API if n.startswith(MODULES) and n not in SKIP and not (
    API[n][0] == "class" and issubclass(API[n][1], BaseException)))


def _signature_target(name, args, kwargs):
    kind, obj, _ = API[name]
    short = name.rpartition(".")[2]
    if kind == "method":
        return getattr(args[0], short), args[1:], kwargs
    if kind in ("staticmethod", "classmethod"):
        return getattr(obj, short), args, kwargs
    return obj, args, kwargs


@pytest.mark.parametrize("name", NAMES)
def test_every_parameter_is_fuzzed(name):
    assert name in CALLS, f"{name}: add a valid call binding every argument to " \
                          f"tests/fuzz_calls/viz34.py"
    args, kwargs = CALLS[name]()
    f, args, kwargs = _signature_target(name, tuple(args), dict(kwargs))
    bound = inspect.signature(f).bind(*args, **kwargs).arguments
    missing = [p.name for p in inspect.signature(f).parameters.values()
               if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and p.name not in bound
               and (name, p.name) not in UNFUZZED]
    assert not missing, f"{name}: its registry call leaves {missing} to their defaults, so " \
                        f"the fuzzer never substitutes them: bind them"
