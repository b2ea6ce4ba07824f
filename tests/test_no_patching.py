"""Issue 37, point 1: robodyn changes nothing outside itself. Each test runs in a fresh Python
process (what a reader's session is): importing robodyn -- every public module -- and using
it leaves every attribute of sympy, its parser and lambdify modules, numpy and scipy the very
same object, and sympy's own computations (lazy tables included) give the same results as in
a process that never imported robodyn."""
import json
import os
import subprocess
import sys

import pytest
import sympy as sp

LIB = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib")

SNAPSHOT = """
import sympy, numpy, scipy, importlib
mods = [sympy, importlib.import_module("sympy.parsing.sympy_parser"),
        importlib.import_module("sympy.utilities.lambdify"), numpy, scipy, numpy.linalg]
before = [dict(vars(m)) for m in mods]
"""

COMPUTE = """
from sympy import (S, Symbol, besselj, exp, integrate, lambdify, oo, parse_expr, sin, srepr,
                   sympify, symbols)
x = Symbol("x")
out = [srepr(integrate(besselj(0, x), (x, 0, oo))),       # Meijer-G tables, parsed lazily
       srepr(integrate(besselj(1, x) / x, (x, 0, oo))),
       srepr(integrate(sin(x) / x, (x, 0, oo))),
       srepr(S("3/2")), srepr(parse_expr("x**2 + 1")), srepr(sympify("sin(x) + 1")),
       repr(lambdify(x, "x**2 + 1")(3.0)), srepr(integrate(exp(-x) * x, (x, 0, oo)))]
"""


def _run(code):
    env = dict(os.environ, PYTHONPATH=LIB + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_import_and_use_leave_numpy_scipy_and_sympy_the_same_objects():
    changed = _run(SNAPSHOT + """
import json, pkgutil, robodyn
for m in pkgutil.walk_packages(robodyn.__path__, "robodyn."):
    if m.name != "robodyn.grading.__main__":
        importlib.import_module(m.name)
from robodyn import models
try:
    robodyn.fk_space(models.planar_rr(), ["3/2", 0.0])
except robodyn.RobodynError:
    pass
robodyn.exp_so3([0.0, 0.0, 0.1])
print(json.dumps([f"{m.__name__}.{k}" for m, b in zip(mods, before)
                  for k, v in b.items() if vars(m).get(k) is not v]))
""")
    assert changed == [], f"robodyn replaced: {changed}"


def test_sympys_own_computations_are_unchanged_after_a_failing_robodyn_call():
    alone = _run(COMPUTE + "import json; print(json.dumps(out))")
    with_robodyn = _run("""
import robodyn
from robodyn import models
from sympy import Symbol, sin, symbols
x = Symbol("x")
for bad in (lambda: robodyn.fk_space(models.planar_rr(), ["3/2", 0.0]),
            lambda: robodyn.is_holonomic([sin(x) / x, "1/2", 0], list(symbols("x y z"))),
            lambda: robodyn.exp_so3(["__import__('os')", 0, 0])):
    try:
        bad()
    except robodyn.RobodynError:
        pass
""" + COMPUTE + "import json; print(json.dumps(out))")
    assert with_robodyn == alone
    x = sp.Symbol("x")                              # and they are the known closed forms
    assert alone[0] == sp.srepr(sp.Integer(1)) and alone[3] == sp.srepr(sp.Rational(3, 2))
    assert alone[2] == sp.srepr(sp.pi / 2) and alone[6] == "10.0"
    assert alone[4] == sp.srepr(x**2 + 1)


def test_is_holonomic_gives_sympys_answer_in_a_fresh_process():
    """The issue's case: sympy parses '3/2' inside its own Meijer-G tables while robodyn runs;
    robodyn must not stand in the way. The integral is checked by differentiation."""
    got = _run("""
import json, robodyn
from sympy import sin, srepr, symbols
x, y, z = symbols("x y z")
from sympy import diff, simplify
r = robodyn.is_holonomic([sin(x) / x, 1, 0], [x, y, z])
phi = r.integral
print(json.dumps([r.holonomic, simplify(diff(phi, x) - sin(x) / x) == 0,
                  diff(phi, y) == 1, diff(phi, z) == 0]))
""")
    assert got == [True, True, True, True]


def test_the_library_never_hands_text_to_sympify_or_lambdify():
    """Text is refused by robodyn's own checks before any parser: every ``sympify`` of the
    library is ``strict=True`` (strings refused) and no ``parse_expr`` or ``S("...")`` of
    data exists (grep over lib/robodyn; the answer checker reads text with its own ast-based
    parser, robodyn.text_parser)."""
    import re
    bad = []
    for root, _, files in os.walk(os.path.join(LIB, "robodyn")):
        for f in files:
            if not f.endswith(".py"):
                continue
            path = os.path.join(root, f)
            for n, line in enumerate(open(path, encoding="utf-8"), 1):
                code = line.split("#")[0]
                if re.search(r"\bsympify\(", code) and "strict=True" not in code \
                        and not code.lstrip().startswith(('"', "'", "``")):
                    bad.append(f"{path}:{n}: {line.strip()}")
                if re.search(r"\bparse_expr\(|\bsp\.S\(\s*['\"]", code):
                    bad.append(f"{path}:{n}: {line.strip()}")
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("payload", ["__import__('os').getcwd()", "3/2"])
def test_text_is_refused_before_any_parser(payload):
    import robodyn
    from robodyn import models
    with pytest.raises(robodyn.ArgumentTypeError, match=r"^fk_space: q\[0\]: expected"):
        robodyn.fk_space(models.planar_rr(), [payload, 0.0])
