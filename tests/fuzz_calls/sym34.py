"""Valid calls of the constraint and equation methods that no doctest makes directly (helper
sym34, issue 28)."""
import sympy as sp

from robodyn.constraints import Constraints
from robodyn.equations import mass_matrix_form

_x, _y, _l, _m, _q, _u = sp.symbols("x y l m q u")


def _pendulum():
    return mass_matrix_form([_q], [_u], [[_m * _l**2]], [-_m * 9.81 * _l * sp.sin(_q)]) \
        .numeric({"m": 2.0, "l": 0.5})


CALLS = {
    "robodyn.constraints.Constraints.numeric":
        lambda: ((Constraints([_x, _y], holonomic=[_x**2 + _y**2 - _l**2]),),
                 {"values": {"l": 1.0}}),
    "robodyn.equations.NumericForm.speeds": lambda: ((_pendulum(), [0.3], [0.5]), {"t": 0.0}),
}
