"""Valid calls for the API fuzzer added by answers34 (issue 28): calls that pass every
argument of robodyn.answers' callables (the doctests leave most keyword arguments out), and a
seed for the random points of ``Problem.sample_points`` (a Generator argument is advanced by
the fuzzer's first call, then copied, so a legal alternative of ``n`` would be compared at
other points)."""
import numpy as np
import sympy as sp

from robodyn.answers import Problem, ProblemSet, fingerprint, parse_expression  # noqa: F401

_q = sp.Symbol("q", real=True)


def _p():
    return Problem("p1", "y", "a title", "book/part1/x", 2.0, {"q": (-1.0, 1.0)}, ("q",),
                   rtol=1e-6, atol=1e-9)


def _pf():
    return Problem("f1", "f", inputs=((2,),), input_range=(-1.0, 1.0))


def _set():
    ps = ProblemSet("demo", [_p()])
    ps.load_key(__import__("json").dumps({"p1": fingerprint(sp.sin(2 * _q), _p())}))
    return ps


_INPUTS = [(np.array([0.1, 0.2]),), (np.array([-0.3, 0.4]),)]

CALLS = {
    "robodyn.answers.Problem": lambda: (("p1", "y", "a title", "book/part1/x", 2.0,
                                         {"q": (-1.0, 1.0)}, ("q",), None, (-2.0, 2.0),
                                         1e-6, 1e-9), {}),
    "robodyn.answers.Problem.sample_points": lambda: ((_p(), 3, 7), {}),
    "robodyn.answers.compare": lambda: ((sp.cos(_q) ** 2, 1 - sp.sin(_q) ** 2, _p()),
                                        {"n_points": 8, "rng": 3,
                                         "points": {"q": np.array([0.1, -0.2, 0.3])}}),
    "robodyn.answers.equivalent": lambda: ((2 * sp.sin(_q) * sp.cos(_q), sp.sin(2 * _q), _p()),
                                           {"points": {"q": np.array([0.1, 0.2, 0.3])},
                                            "n_points": 5, "rng": 2}),
    "robodyn.answers.encode": lambda: ((lambda v: 2 * v, _pf(), _INPUTS), {}),
    "robodyn.answers.decode": lambda: (({"type": "samples", "shape": [2, 2],
                                         "real": [1.0, 2.0, 3.0, 4.0]}, _pf(), _INPUTS), {}),
    "robodyn.answers.fingerprint": lambda: ((sp.sin(2 * _q), _p()), {"seed": 5}),
    "robodyn.answers.ProblemSet.check": lambda: ((_set(), "p1", 2 * sp.sin(_q) * sp.cos(_q)),
                                                 {}),
    "robodyn.answers.ProblemSet": lambda: (("demo", [_p(), _pf()]), {}),
    "robodyn.answers.ProblemSet.in_key": lambda: ((_set(), "p1"), {}),
    "robodyn.answers.ProblemSet.load_key": lambda: (
        (ProblemSet("demo", [_p()]), '{"p1": {"points": {"q": [0.5]}, "shape": []}}'), {}),
    "robodyn.answers.parse_expression": lambda: (("l1*cos(q1) + l2", ("l1", "l2", "q1")), {}),
}
