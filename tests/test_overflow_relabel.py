"""Issue 28 (num34): an overflow deep inside a public function is reported as that function's
``result`` (never as an inner function's argument, never as NaN/inf, never as a RuntimeError
or an OverflowError), and cross-argument refusals name the arguments the user passed. The
API fuzzer substitutes one argument at a time; these are the cases it cannot phrase."""
import numpy as np
import pytest
import sympy as sp

import robodyn
from robodyn import _value_checks, impacts, models, walking
from robodyn import _meaning_checks
from robodyn.impacts import return_map, simulate_hybrid
from robodyn.dynamics import simulate
from robodyn.impacts import moreau_jean

HUGE = [1e200, 1e200]


@pytest.mark.parametrize("call, match", [
    (lambda: simulate(models.planar_rr(), [0.5, 0.0], HUGE, 1.0), r"^simulate: result: "),
    (lambda: simulate(models.planar_rr(), [0.5, 0.0], [0, 0], 1e308),
     r"^simulate: t_final, max_steps: expected a run that ends within"),
    (lambda: simulate(models.planar_rr(), [0.5, 0.0], [0, 0], 1e308, method="rk4", dt=0.01),
     r"^simulate: dt, t_final: expected at most max_steps"),
    (lambda: simulate_hybrid(walking.bouncing_ball(0.5), [0.0, 1.0], [1e308, 1e308], 1.0),
     r"^simulate_hybrid: result: "),
    (lambda: return_map(walking.bouncing_ball(0.5), [0.0, 1.0, 1e308, 1e308]),
     r"^return_map: result: "),
    (lambda: return_map(walking.bouncing_ball(0.5), [0.0, -1.0, 0.0, 0.0]),
     r"^return_map: x: expected a state outside every surface"),
    (lambda: return_map(walking.bouncing_ball(0.5), [0.0, 1.0, 0.0, 0.0], surface="wall"),
     r"^return_map: surface: expected None or one of \['ground'\]"),
    (lambda: moreau_jean(walking.bouncing_ball(0.5), [0.0, 1.0], HUGE, 1.0, 1e-2),
     r"^moreau_jean: result: "),
    (lambda: moreau_jean(walking.bouncing_ball(0.5), [0.0, 1.0], [0, 0], 1e308, 1e-3),
     r"^moreau_jean: t_final, h: expected at most max_steps"),
    (lambda: models.rod_inertia(1.0, 1e308), r"^rod_inertia: result: "),
    (lambda: models.four_bar_kane(1, 2, sp.Symbol("t", real=True), 2, (1, 1, 1), 0),
     r"^four_bar_kane: c: expected a constant parameter"),
    (lambda: _meaning_checks.spd(np.full((3, 3), 1e308), "f: M"),
     r"^f: M: expected a symmetric positive definite matrix"),
])
def test_refused_naming_the_callers_argument_or_result(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_limits_are_value_errors_and_still_runtime_errors():
    """A cap reached because of the arguments: a ValueError naming them (the fuzzer's rule),
    still caught by the RuntimeError handlers written before."""
    from robodyn.impacts import cradle_sequential
    with pytest.raises(impacts.LimitReached, match=r"^cradle_sequential: max_impacts, "
                                                   r"restitution: expected the impacts to end"):
        cradle_sequential(5, 0.0, 1.0, 1, max_impacts=1000)
    assert issubclass(impacts.LimitReached, ValueError)
    assert issubclass(impacts.LimitReached, RuntimeError)


def test_overflow_guard_relabels_once():
    """An inner function's overflow gets the outer name once; the outer's own passes as is."""
    with pytest.raises(robodyn.ResultError, match=r"^outer: result: .*inside \(inner: "):
        with _value_checks.overflow_guard("outer"):
            _value_checks.finite_result(np.array([np.inf]), "inner")
    with pytest.raises(robodyn.ResultError, match=r"^outer: result: expected finite numbers "
                                                     r"for finite input, got NaN"):
        with _value_checks.overflow_guard("outer"):
            _value_checks.finite_result(np.array([np.nan]), "outer")


def test_return_map_names_its_own_options():
    """Options pass through to simulate_hybrid; a refusal names return_map, and an option that
    return_map sets itself (max_events) is refused by name, not by Python's TypeError."""
    ball = walking.bouncing_ball(0.5)
    with pytest.raises(ValueError, match=r"^return_map: rtol: expected a positive number"):
        return_map(ball, [0.0, 1.0, 0.0, 0.0], rtol=-1.0)
    with pytest.raises(TypeError, match=r"^return_map: options: .*got 'max_events'"):
        return_map(ball, [0.0, 1.0, 0.0, 0.0], max_events=3)
