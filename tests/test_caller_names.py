"""Issue 28, cases the API fuzzer cannot express: a check shared by several public methods
names the method the user called; a subclass's own accelerations are used by the shared
``rhs``/``coordinate_accelerations`` after their checks; legal alternatives of a duration."""
import numpy as np
import pytest
import sympy as sp

from robodyn import constraints
from robodyn.constraints import constraint_connection
from robodyn.equations import mass_matrix_form
from robodyn.models import particle_pendulum

Q, U, M_, L_ = sp.symbols("q u m l")
PEND = mass_matrix_form([Q], [U], [[M_ * L_**2]], [-M_ * 9.81 * L_ * sp.sin(Q)])
PPV = {"m": 1.0, "l": 1.0, "g": 9.81}


@pytest.mark.parametrize("call, name", [
    (lambda: PEND.rhs({"m": "1"}), r"^rhs: values\[m\]"),
    (lambda: PEND.numeric({"m": 1.0}), r"^numeric: values: .*\['l'\] have no value"),
    (lambda: PEND.rhs({"m": 1.0}), r"^rhs: values: .*\['l'\] have no value"),
    (lambda: PEND.numeric(PPV | {"l": 0.5}).coordinate_accelerations([0.1], ["x"]),
     r"\.coordinate_accelerations: qd"),
    (lambda: PEND.numeric(PPV).coordinate_accelerations([0.1], [0.2], tau=[[[1.0]]]),
     r"\.coordinate_accelerations: tau"),
    (lambda: PEND.numeric(PPV).rhs(float("nan"), [0.1, 0.2]), r"\.rhs: t"),
    (lambda: constraints.simulate_constrained(particle_pendulum(), [1, 0], [0, 0], 1.0,
                                     values={"m": 1.0}), r"^simulate_constrained: values"),
    (lambda: constraints.simulate_constrained(particle_pendulum(), [1e200, 0], [0, 0], 1.0, values=PPV),
     r"^simulate_constrained: q0"),
    (lambda: constraint_connection(sp.eye(2), sp.Matrix([[Q, U]]), [Q]),
     r"^constraint_connection: M, q"),
])
def test_the_called_function_and_argument_are_named(call, name):
    with pytest.raises((ValueError, TypeError), match=name):
        call()


def test_constrained_rhs_keeps_the_constraint():
    """The shared ``rhs`` and ``coordinate_accelerations`` (checks first, then the form's own
    functions) give a constrained form's accelerations, which keep the particle on its circle
    (an independent route: the constraint's second derivative)."""
    num = particle_pendulum().numeric(PPV)
    q, qd = np.array([0.6, -0.8]), np.array([0.8, 0.6])
    a = num.accelerations(q, qd)
    assert np.allclose(num.rhs(0.0, np.r_[q, qd])[2:], a)
    assert np.allclose(num.coordinate_accelerations(q, qd), a)
    assert abs(q @ a + qd @ qd) < 1e-9        # the circle's second derivative: q.a + |qd|^2 = 0


def test_duration_as_sympy_integer_is_a_number():
    runs = [constraints.simulate_constrained(particle_pendulum(), [1.0, 0.0], [0.0, 0.0], T, values=PPV,
                                    dt=0.1) for T in (1.0, sp.Integer(1))]
    assert np.array_equal(runs[0].q, runs[1].q)
