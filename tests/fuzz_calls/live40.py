"""Valid calls of robodyn.symbolic that bind the arguments its doctests leave at their defaults
(helper live40, issue 40)."""
import sympy as sp

_q1, _q2, _h = sp.symbols("q1 q2 h")
_M = sp.Matrix([[3 + 2 * _h * sp.cos(_q2), 1 + _h * sp.cos(_q2)], [1 + _h * sp.cos(_q2), 1]])

CALLS = {
    "robodyn.symbolic.christoffel_symbols": lambda: ((_M, [_q1, _q2]), {"kind": 2}),
    "robodyn.symbolic.revolute_screw": lambda: (([0, 0, 1], [_h, 0, 0]), {"pitch": _h}),
}
