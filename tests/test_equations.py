"""The shared interface of every method's equations of motion (robodyn.equations)."""
import numpy as np
import pytest
import sympy as sp
from scipy.integrate import solve_ivp

import robodyn as rd
from robodyn.models import planar_rr

VALUES = {"l1": 1.0, "l2": 0.7, "m1": 1.2, "m2": 0.8}


@pytest.fixture(scope="module")
def rr():
    return rd.equations_of_motion(planar_rr(*sp.symbols("l1 l2 m1 m2")), gravity=(0, -9.81, 0))


def absolute_angle_form(eom):
    """The RR arm in speeds u = (q1', q1' + q2') (absolute link rates), built by hand."""
    u = sp.Matrix(sp.symbols("u1 u2"))
    W = sp.Matrix([[1, 0], [-1, 1]])                  # qd = W u
    qd = W * u
    forcing = (W.T * eom.forcing).xreplace(dict(zip(eom.qd, qd)))
    return rd.mass_matrix_form(eom.q, u, W.T * eom.M * W, forcing, kinematics=qd,
                               input_matrix=W.T, name="absolute angles")


def test_lagrange_is_a_mass_matrix_form(rr):
    assert isinstance(rr, rd.MassMatrixForm)
    assert rr.mass_matrix == rr.M and rr.u == rr.qd
    assert sp.simplify(rr.forcing + rr.C * rr.qd + rr.G) == sp.zeros(2, 1)
    f = rr.numeric(VALUES)
    assert isinstance(f, rd.NumericForm)
    q, qd, tau = np.array([0.3, -0.4]), np.array([0.5, 0.2]), np.array([1.0, -2.0])
    expected = np.linalg.solve(f.M(q), tau - f.C(q, qd) @ qd - f.G(q))
    assert np.allclose(f.accelerations(q, qd, tau=tau), expected, atol=1e-12)
    assert np.allclose(f.rhs(0.0, np.r_[q, qd], tau), np.r_[qd, expected], atol=1e-12)


def test_generic_form_equals_lagrange(rr):
    g = rd.mass_matrix_form(rr.q, rr.u, rr.mass_matrix, rr.forcing)
    assert g.parameters() == sorted(sp.symbols("l1 l2 m1 m2"), key=str)
    assert rd.max_difference(rr, g, values=VALUES) < 1e-12


def test_other_speeds_same_motion(rr):
    k = absolute_angle_form(rr)
    assert rd.max_difference(rr, k, values=VALUES, n_states=12) < 1e-12


def test_max_difference_can_fail(rr):
    k = absolute_angle_form(rr)
    wrong = rd.mass_matrix_form(k.q, k.u, k.mass_matrix, 1.001 * k.forcing,
                                kinematics=k.kinematics, input_matrix=k.input_matrix)
    assert rd.max_difference(rr, wrong, values=VALUES) > 1e-4


def test_rhs_integrates_with_scipy(rr):
    """A free swing conserves energy when integrated through the shared rhs."""
    f = rr.rhs(VALUES)
    sol = solve_ivp(f, (0, 2), [0.5, 0.0, 0.0, 0.0], rtol=1e-10, atol=1e-10)
    chain = planar_rr(*(VALUES[k] for k in ("l1", "l2", "m1", "m2")))
    E = rd.mechanical_energy(chain, sol.y[:2].T, sol.y[2:].T, gravity=(0, -9.81, 0))
    assert sol.success and np.ptp(E) < 1e-7


def test_nonholonomic_form_and_admissible_states():
    """A unicycle: 3 coordinates, 2 speeds; qd must be admissible."""
    x, y, th, v, w, m, J = sp.symbols("x y theta v omega m J")
    uni = rd.mass_matrix_form([x, y, th], [v, w], sp.diag(m, J), [0, 0],
                              kinematics=[v * sp.cos(th), v * sp.sin(th), w])
    f = uni.numeric({m: 2.0, J: 0.5})
    q = np.array([0.0, 0.0, 0.3])
    qd = np.array([np.cos(0.3), np.sin(0.3), 0.7])              # v = 1, omega = 0.7
    assert np.allclose(f.speeds(q, qd), [1.0, 0.7])
    # the turning unicycle: x'' = -v w sin(theta), y'' = v w cos(theta)
    qdd = f.coordinate_accelerations(q, qd, tau=[0.0, 0.0])
    assert np.allclose(qdd, [-0.7 * np.sin(0.3), 0.7 * np.cos(0.3), 0.0])
    with pytest.raises(ValueError, match="admit"):
        f.speeds(q, [0.0, 1.0, 0.0])                             # sideways: not admissible
    with pytest.raises(ValueError, match="states: needed"):
        rd.max_difference(uni, uni, values={m: 2.0, J: 0.5})
    assert rd.max_difference(uni, uni, states=[(q, qd)], values={m: 2.0, J: 0.5}) == 0.0


@pytest.mark.parametrize("kwargs, exc, match", [
    (dict(q=["q"], u=["u"], mass_matrix=[[1]], forcing=[0]), TypeError, "q: expected plain"),
    (dict(q=sp.symbols("a b"), u=sp.symbols("a c"), mass_matrix=sp.eye(2), forcing=[0, 0]),
     ValueError, "distinct"),
    (dict(q=sp.symbols("a b"), u=sp.symbols("c d"), mass_matrix=sp.eye(3), forcing=[0, 0]),
     ValueError, r"mass_matrix: expected shape \(2, 2\)"),
    (dict(q=sp.symbols("a b"), u=sp.symbols("c d"), mass_matrix=[[1, 1], [0, 1]],
          forcing=[0, 0]), ValueError, "symmetric"),
    (dict(q=sp.symbols("a b"), u=sp.symbols("c d"), mass_matrix=sp.eye(2), forcing=[0]),
     ValueError, "forcing: expected 2"),
    (dict(q=sp.symbols("a b"), u=[sp.Symbol("c")], mass_matrix=sp.eye(1), forcing=[0]),
     ValueError, "kinematics: needed"),
    (dict(q=sp.symbols("a b"), u=sp.symbols("c d"), mass_matrix=sp.eye(2), forcing=[0, 0],
          input_matrix=sp.eye(3)), ValueError, "input_matrix: expected 2 rows"),
    (dict(q=sp.symbols("a b"), u=sp.symbols("c d"), mass_matrix=sp.eye(2), forcing="x"),
     TypeError, "forcing: expected a sympy Matrix"),
])
def test_mass_matrix_form_refuses_bad_input(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        rd.mass_matrix_form(**kwargs)


def test_numeric_refuses_bad_input():
    q, u, m = sp.symbols("q u m")
    form = rd.mass_matrix_form([q], [u], [[m]], [-sp.sin(q)])
    with pytest.raises(ValueError, match=r"\['m'\] have no value"):
        form.numeric()
    with pytest.raises(TypeError, match="values: expected a dict"):
        form.numeric([1.0])
    f = form.numeric({"m": 1.0})
    with pytest.raises(ValueError, match="accelerations: q"):
        f.accelerations([0.0, 1.0], [0.0])
    with pytest.raises(ValueError, match="rhs: x"):
        f.rhs(0.0, [0.0])
    with pytest.raises(ValueError, match="tau"):
        f.accelerations([0.0], [0.0], tau=[1.0, 2.0])
    neg = form.numeric({"m": -1.0})
    with pytest.raises(np.linalg.LinAlgError, match="not positive definite"):
        neg.accelerations([0.0], [0.0])
    with pytest.raises(ValueError, match="same"):
        rd.max_difference(form, rd.mass_matrix_form(sp.symbols("a b"), sp.symbols("c d"),
                                                     sp.eye(2), [0, 0]), values={"m": 1.0})


def test_numeric_twin_of_a_sum_of_thousands_of_terms():
    """A forcing of 4000 terms (a random 6-joint chain's Kane equations have 4000-16000) once
    made lambdify's code nest 4000 deep and Python's compiler raise RecursionError."""
    x, y = sp.symbols("x y")
    big = sp.Add(*[sp.Rational(k + 1, 4000) * x ** k * y for k in range(4000)])
    form = rd.mass_matrix_form([x], [y], [[1 + x ** 2]], [big])
    value = form.numeric().forcing(np.array([0.3]), np.array([0.2]))[0]
    assert value == pytest.approx(sum((k + 1) / 4000 * 0.3 ** k * 0.2 for k in range(4000)),
                                  rel=1e-12)
