"""A refusal raised because a foreign exception was met keeps that exception as its cause
(issue 37, point 3: ``raise ... from exc``, never ``from None``): the frames where the error
happened stay in the traceback."""
import numpy as np
import pytest
import sympy as sp

import robodyn
from robodyn import equations, impacts


def test_a_domain_error_of_the_generated_code_keeps_its_cause():
    q, u = sp.symbols("q u")
    form = equations.mass_matrix_form([q], [u], [[1]], [sp.sqrt(q)])
    with pytest.raises(ValueError, match="finite values") as info:
        form.numeric().forcing([-1.0], [0.0])
    assert isinstance(info.value.__cause__, ValueError)          # math's domain error
    assert "math domain error" in str(info.value.__cause__)
    assert not info.value.__suppress_context__ or info.value.__cause__ is not None


def test_a_mass_matrix_that_is_not_positive_definite_keeps_the_cholesky_error():
    q, u = sp.symbols("q u")
    num = equations.mass_matrix_form([q], [u], [[sp.cos(q)]], [0]).numeric()
    with pytest.raises(np.linalg.LinAlgError, match="not positive definite") as info:
        num.accelerations([np.pi], [0.0])
    assert isinstance(info.value.__cause__, np.linalg.LinAlgError)


def test_impact_map_keeps_the_cholesky_error():
    with pytest.raises(robodyn.ArgumentError, match="positive definite") as info:
        impacts.impact_map(np.diag([1.0, -1.0]), np.array([[0.0, 1.0]]), [0.0, -1.0], 0.5)
    assert isinstance(info.value.__cause__, np.linalg.LinAlgError)


def test_a_surface_whose_phi_returns_text_keeps_the_conversion_error():
    s = impacts.Surface("floor", lambda q: "high", lambda q: np.array([0.0, 1.0]))
    with pytest.raises(TypeError, match="phi: expected phi\\(q\\) to return a real number") \
            as info:
        s.phi(np.array([0.0, 1.0]))
    assert isinstance(info.value.__cause__, ValueError)


def ragged(x):
    """A sweep's function whose results have different shapes (module level: it pickles)."""
    return np.zeros(int(x) + 1)


def test_a_sweep_of_ragged_results_keeps_numpy_s_error():
    from robodyn import walking as stability
    with pytest.raises(robodyn.ArgumentError, match="sweep: func: expected results of one "
                                                    "shape") as info:
        stability.sweep(ragged, [0, 1, 2])
    assert isinstance(info.value.__cause__, ValueError)
    assert not isinstance(info.value.__cause__, robodyn.RobodynError)   # numpy's own
