"""The one boundary (robodyn._boundary, issue 28): what the seal does for every public callable,
shown on real ones. tests/test_fuzz_api.py checks that every public callable is sealed and holds
each to its catalog; these tests pin the mechanism itself."""
import numpy as np
import pytest
import sympy as sp

import robodyn
from robodyn import _boundary, kinematics, models, viz  # noqa: F401 -- viz is sealed too


def test_text_nested_anywhere_is_refused_with_its_place():
    chain = models.planar_rr()
    with pytest.raises(TypeError, match=r"fk_space: q\[1\]: expected numbers.*never evaluates"):
        robodyn.fk_space(chain, [0.0, "__import__('os')"])
    eom = robodyn.equations_of_motion(models.planar_rr(*sp.symbols("l1 l2 m1 m2")),
                                      gravity=(0, -9.81, 0))
    with pytest.raises(TypeError, match=r"numeric: values\[m1\]: expected .*text"):
        eom.numeric({"l1": 1, "l2": 1, "m1": "open('x')", "m2": 1})


def test_nan_infinity_complex_and_boolean_arrays_are_refused():
    chain = models.planar_rr()
    for bad, exc, what in [([np.nan, 0.0], ValueError, "NaN"),
                           (np.array([0.0, np.inf]), ValueError, "infinity"),
                           (np.array([1j, 0]), TypeError, "complex"),
                           (np.array([True, False]), TypeError, "boolean"),
                           ([0.0, sp.nan], ValueError, "nan")]:
        with pytest.raises(exc, match=f"fk_space: q.*{what}"):
            robodyn.fk_space(chain, bad)


def test_an_inner_refusal_is_named_after_the_function_called():
    chain = models.planar_rr()
    with pytest.raises(ValueError) as info:
        viz.arm_figure(chain, [0.0, 0.0, 0.0])     # checked inside by draw_chain
    assert str(info.value).startswith("arm_figure: q"), str(info.value)


def test_overflow_is_an_error_naming_the_result():
    with pytest.raises(ValueError, match=r"exp_so3: result: expected finite .*overflow"):
        robodyn.exp_so3(np.array([1e308, 1e308, 1e308]))


def test_calls_inside_robodyn_pass_straight_through():
    seen, chain = [], models.planar_rr()
    orig = _boundary._check_arguments

    def counting(*a, **k):
        seen.append(a[1])
        return orig(*a, **k)
    _boundary._check_arguments = counting
    try:
        robodyn.simulate(chain, [0.1, 0.0], [0.0, 0.0], 0.05)
    finally:
        _boundary._check_arguments = orig
    assert seen == ["simulate"], seen        # one check for the reader's call, none inside


def test_text_never_reaches_sympys_parser_inside_a_call(monkeypatch):
    """The production guard (not only the tests' conftest): robodyn code that would hand text
    to sympify/Matrix/lambdify while a public call is under way gets a TypeError; the reader's
    own sympy calls are unchanged."""
    import importlib
    # the tests' own guard (conftest.py) is stacked on top: take it off to see the library's
    monkeypatch.setattr(importlib.import_module("sympy.parsing.sympy_parser"), "parse_expr",
                        _boundary._GUARDED_PARSE)
    monkeypatch.setattr(sp, "lambdify", _boundary._GUARDED_LAMBDIFY)
    code = compile("import sympy as sp\ndef f(s):\n    return sp.Matrix([s])\n",
                   _boundary._ROOT + "/_fake_module.py", "exec")
    ns = {}
    exec(code, ns)
    token = _boundary._ACTIVE.set("some_function")
    try:
        with pytest.raises(TypeError, match="some_function: .*sympy's parser"):
            ns["f"]("__import__('os').getcwd()")
        with pytest.raises(TypeError, match="sympy's parser"):
            exec(compile("import sympy as sp\nsp.lambdify([], 'x')\n",
                         _boundary._ROOT + "/_fake_module.py", "exec"), {})
    finally:
        _boundary._ACTIVE.reset(token)
    assert sp.sympify("x + 1") == sp.Symbol("x") + 1      # outside robodyn: sympy as usual
    assert ns["f"]("x")[0] == sp.Symbol("x")


def test_a_constructor_is_named_after_the_class_built():
    class Sub(kinematics.SerialChain):
        pass
    with pytest.raises(ValueError, match=r"^Sub: "):
        Sub(np.full((6, 1), np.nan), np.eye(4))


def test_robodyns_own_code_is_not_scanned_twice():
    """A call whose caller is robodyn's own code (a self-checked hot path calling a checker
    with its own name) passes straight; the same call from the reader's code is scanned."""
    code = compile("def f(fk, chain):\n    return fk(chain, [0.0, float('nan')])\n",
                   _boundary._ROOT + "/_fake_module.py", "exec")
    ns = {}
    exec(code, ns)
    chain = models.planar_rr()
    with pytest.raises(ValueError) as inside:
        ns["f"](robodyn.fk_space, chain)
    with pytest.raises(ValueError) as outside:
        robodyn.fk_space(chain, [0.0, float("nan")])
    assert "q[1]" in str(outside.value)           # the boundary's scan, with the place
    assert "q[1]" not in str(inside.value)        # fk_space's own check
