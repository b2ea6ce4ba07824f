"""The sympy-parser guard (issue 28): no text is ever run as code by robodyn.

A test guard, not the library's (robodyn patches nothing: tests/test_no_patching.py). Only in
the tests that ask for it (``pytestmark = pytest.mark.usefixtures("no_text_evaluated")``: the
API fuzzer and the bad-input tests), sympy's string parser (``sympy.parsing.sympy_parser.parse_expr``, which
``sympify``/``sp.S``/``sp.Matrix`` of a string go through) and ``lambdify`` of a string raise
:class:`TextEvaluated` when the call comes from inside ``lib/robodyn``. Tests themselves may
still parse text directly (the guard looks at who called). A ``TextEvaluated`` is a
``BaseException``, so no ``except Exception`` in the library can swallow it.
"""
import os
import sys

import pytest

_LIB = os.sep + os.path.join("lib", "robodyn") + os.sep


class TextEvaluated(BaseException):
    """A string reached sympy's parser or lambdify from inside robodyn."""


_SYMPY = os.sep + "sympy" + os.sep
_SYMPY_OWN_TEXT = {"nsimplify"}
"""sympy functions that parse strings they print themselves (never the caller's text)."""


def _from_robodyn():
    """Where robodyn handed text to sympy: the first caller outside sympy, when it is in
    lib/robodyn (sympy parsing its own strings while a module is imported lazily is fine)."""
    f, inside = sys._getframe(2), set()
    while f is not None and _SYMPY in f.f_code.co_filename:
        inside.add(f.f_code.co_name)
        f = f.f_back
    if inside & _SYMPY_OWN_TEXT:
        return None
    if f is not None and _LIB in f.f_code.co_filename:
        return f.f_code.co_filename + f":{f.f_lineno}"
    return None


def _holds_text(x, depth=0):
    if isinstance(x, (str, bytes)):
        return True
    if depth < 4 and isinstance(x, (list, tuple)):
        return any(_holds_text(e, depth + 1) for e in x)
    return False


@pytest.fixture
def no_text_evaluated(monkeypatch):
    import importlib
    sp_parser = importlib.import_module("sympy.parsing.sympy_parser")
    sp_lambdify = importlib.import_module("sympy.utilities.lambdify")
    parse, lamb = sp_parser.parse_expr, sp_lambdify.lambdify

    def guarded_parse(s, *args, **kwargs):
        where = _from_robodyn()
        if where:
            raise TextEvaluated(f"robodyn handed the string {str(s)[:80]!r} to sympy's parser "
                                f"(from {where})")
        return parse(s, *args, **kwargs)

    def guarded_lambdify(args, expr, *a, **k):
        where = _from_robodyn()
        if where and (_holds_text(expr) or _holds_text(args)):
            raise TextEvaluated(f"robodyn handed text to lambdify (from {where})")
        return lamb(args, expr, *a, **k)

    monkeypatch.setattr(sp_parser, "parse_expr", guarded_parse)
    monkeypatch.setattr(sp_lambdify, "lambdify", guarded_lambdify)
    import sympy
    monkeypatch.setattr(sympy, "lambdify", guarded_lambdify)
    for name, mod in list(sys.modules.items()):
        if name.startswith("robodyn") and getattr(mod, "lambdify", None) is lamb:
            monkeypatch.setattr(mod, "lambdify", guarded_lambdify)
    yield
