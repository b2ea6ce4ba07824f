"""The silent wrong answers of issue 37, one test each, with the refusal expected.

Classes: one free symbol turning the checks off; constraints that cannot hold; contact
geometry that contradicts itself; input outside a formula's domain; codegen of a mass matrix
that is not one. Each test gives the wrong input and checks the refusal names
``function: argument`` and says why; where the right answer exists (a normalised axis, the
explicit-time term of a Lagrangian) it is checked by an independent route.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import sympy as sp

import robodyn as rd
from robodyn import codegen, constraints, lagrange, kane, models, rigid_motion
from robodyn.impacts import HybridSystem, Surface, simulate_hybrid
from robodyn.kinds import UndecidedWarning
from robodyn.impacts import moreau_jean
from robodyn.walking import bouncing_ball

TH = sp.Symbol("theta", real=True)
M_ = sp.Symbol("m", positive=True)
A_ = sp.Symbol("a", positive=True)
REFLECTION = sp.diag(1, 1, -1) * sp.rot_axis3(TH)
FOR_EVERY = r"det R = -1 for every value of its symbols \(a reflection\)"


def _pose(R):
    H = sp.eye(4)
    H[:3, :3] = R
    return H


# ---------------------------------------------------------------- one free symbol ----------

@pytest.mark.parametrize("call, head", [
    (lambda: rigid_motion.homogeneous(REFLECTION, [0, 0, 0]), "homogeneous: R"),
    (lambda: rigid_motion.log_so3(REFLECTION), "log_so3: R"),
    (lambda: rigid_motion.adjoint(_pose(REFLECTION)), r"adjoint: H \(rotation block\)"),
    (lambda: rigid_motion.SerialChain.from_screws([[0], [0], [1], [0], [0], [0]],
                                                _pose(REFLECTION)),
     r"SerialChain.from_screws: home \(rotation block\)"),
    (lambda: rigid_motion.inverse_homogeneous(_pose(REFLECTION)),
     r"inverse_homogeneous: H \(rotation block\)"),
])
def test_a_reflection_for_every_angle_is_refused(call, head):
    with pytest.raises(ValueError, match=head + r": expected a rotation matrix .*" + FOR_EVERY):
        call()


def test_a_rotation_with_symbols_passes_without_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        H = rigid_motion.homogeneous(sp.rot_axis3(TH), [1, 0, 0])
    assert H[:3, :3] == sp.rot_axis3(TH)


def test_screw_axes_are_normalised_on_both_paths():
    """The doctest's behaviour (prismatic_screw([2, 0, 0]) -> unit) holds for sympy too,
    checked against the numeric path at a value of the symbol."""
    num = rigid_motion.revolute_screw([0, 0, 3.0], [1.0, 2.0, 0.0])
    sym = rigid_motion.revolute_screw([0, 0, 3 * A_], [1, 2, 0])
    assert list(sym) == [0, 0, 1, 2, -1, 0]          # -omega x p, omega = z, p = (1, 2, 0)
    assert np.allclose(np.array(sym.subs(A_, 0.4), dtype=float).ravel(), num)
    assert list(rigid_motion.prismatic_screw(sp.Matrix([0, 2 * A_, 0]))) == [0, 0, 0, 0, 1, 0]
    with pytest.raises(ValueError, match=r"prismatic_screw: direction: expected a nonzero "
                                         r"direction, got the zero vector for every value"):
        rigid_motion.prismatic_screw(sp.Matrix([0, sp.sin(TH) ** 2 + sp.cos(TH) ** 2 - 1, 0]))


def test_a_non_unit_screw_axis_is_refused_with_a_symbolic_angle():
    with pytest.raises(ValueError, match=r"exp_se3: V .*expected a screw axis .*got \|omega\| = 2"):
        rigid_motion.exp_se3([0, 0, 2, 0, 0, 0], TH)
    with pytest.raises(ValueError, match=r"exp_se3: V .*\|omega\|\^2 = 4 for every value"):
        rigid_motion.exp_se3(sp.Matrix([0, 0, 2 * sp.cos(TH) ** 2 + 2 * sp.sin(TH) ** 2, 0, 0, 0]),
                           TH)


def test_an_undecidable_axis_is_warned_naming_the_argument():
    x = sp.Symbol("x")
    with pytest.warns(UndecidedWarning, match=r"^exp_so3: w .*could not decide"):
        rigid_motion.exp_so3(sp.Matrix([x, x, 0]), sp.Integer(1))


def test_a_negative_symbolic_mass_is_refused():
    with pytest.raises(ValueError, match=r"spatial_inertia: mass: expected a positive quantity, "
                                         r"got -m \(not positive under its symbols' assumptions"):
        rigid_motion.spatial_inertia(-M_, [1, 1, 1])


@pytest.mark.parametrize("inertia, why", [
    (sp.diag(1, 1, -5), r"principal moments \[-5.0, 1.0, 1.0\]"),
    (sp.Matrix([[A_, 0, 0], [0, 1, 2], [0, 2, 1]]),
     r"the principal minor of rows 1, 2 = -3 \(negative for every value"),
    (sp.diag(A_, A_, 3 * A_), r"I3 - I1 - I2 = a > 0 for every value of its symbols"),
])
def test_inertias_that_no_body_has_are_refused(inertia, why):
    with pytest.raises(ValueError, match=r"RigidBody: inertia: expected .*" + why):
        kane.RigidBody("B", M_, [0, 0, 0], sp.rot_axis3(TH), inertia)
    with pytest.raises(ValueError, match=r"spatial_inertia: inertia: expected .*" + why):
        rigid_motion.spatial_inertia(M_, inertia)


def test_a_link_inertia_indefinite_for_every_value_is_refused():
    G = sp.diag(A_, A_, -5 * A_, M_, M_, M_)
    with pytest.raises(ValueError, match=r"link_inertias\[0\]: expected a spatial inertia .*"
                                         r"negative for every value"):
        rigid_motion.SerialChain.from_screws([[0], [0], [1], [0], [0], [0]], sp.eye(4),
                                           [sp.eye(4)], [G])


def test_an_indefinite_metric_is_refused_by_levi_civita():
    q1, q2 = sp.symbols("q1 q2", real=True)
    with pytest.raises(ValueError, match=r"levi_civita: M: expected a symmetric positive "
                                         r"definite matrix, got the diagonal entry M\[1, 1\] = "
                                         r"-q1\*\*2 - 1 <= 0"):
        lagrange.levi_civita(sp.Matrix([[1, 0], [0, -1 - q1 ** 2]]), [q1, q2])


# ---------------------------------------------------------- constraints that cannot hold ---

def test_constraints_that_cannot_hold_are_refused():
    x, y = sp.symbols("x y", real=True)
    with pytest.raises(ValueError, match=r"Constraints: holonomic: expected constraints .* got "
                                         r"row 0: 1 = 0, which no q or t satisfies"):
        constraints.Constraints([x, y], holonomic=[1])
    with pytest.raises(ValueError, match=r"Constraints: holonomic: .*row 0: x\*\*2 \+ 1 = 0"):
        constraints.Constraints([x, y], holonomic=[x ** 2 + 1])
    with pytest.raises(ValueError, match=r"Constraints: rate: expected a rate c_i = 0 where the "
                                         r"Pfaffian row is zero .*got row 0: 0 = 1"):
        constraints.Constraints([x, y], pfaffian=[[0, 0]], rate=[1])


def test_udwadia_kalaba_warns_on_both_paths():
    """Inconsistent constraints (x'' + y'' = 0 and = 1): the numeric twin warns, and now the
    sympy path too, with the same warning."""
    with pytest.warns(constraints.ConstraintWarning, match="udwadia_kalaba: the constraints are "
                                                           "inconsistent"):
        constraints.udwadia_kalaba(np.eye(2), [0.0, -9.81], [[1, 1], [1, 1]], [0.0, 1.0])
    with pytest.warns(constraints.ConstraintWarning, match="udwadia_kalaba: the constraints are "
                                                           "inconsistent"):
        constraints.udwadia_kalaba(sp.eye(2), [0, -M_], [[1, 1], [1, 1]], [0, 1])
    with warnings.catch_warnings():
        warnings.simplefilter("error")            # consistent: no warning
        qdd, _ = constraints.udwadia_kalaba(sp.eye(2), [0, -M_], [[1, 1]], [0])
    assert sp.simplify(qdd[0] + qdd[1]) == 0


# --------------------------------------------------------- contact geometry -----------------

def _ball_with(jacobian, tangent=None, friction=0.0):
    good = bouncing_ball(0.5)
    s = Surface("floor", lambda q: float(q[1]), jacobian, 0.5, friction=friction,
                tangent=tangent)
    return HybridSystem(good.form, (s,))


def test_a_surface_whose_jacobian_is_not_the_gradient_is_refused():
    sysm = _ball_with(lambda q: np.array([0.6, 0.8]))
    with pytest.raises(ValueError, match=r"simulate_hybrid: system: surface 'floor': jacobian: "
                                         r"expected dphi/dq at the state .*central differences "
                                         r"of phi give \[0.0, 1.0\]"):
        simulate_hybrid(sysm, [0.0, 1.0], [0.0, 0.0], 1.0)
    with pytest.raises(ValueError, match=r"moreau_jean: system: surface 'floor': jacobian"):
        moreau_jean(sysm, [0.0, 1.0], [0.0, 0.0], 0.1, 0.01)


def test_a_zero_normal_is_refused():
    sysm = _ball_with(lambda q: np.zeros(2))
    with pytest.raises(ValueError, match=r"moreau_jean: system: surface 'floor': jacobian: "
                                         r"expected a nonzero normal row"):
        moreau_jean(sysm, [0.0, 1.0], [0.0, 0.0], 0.1, 0.01)


def test_a_tangent_along_the_normal_is_refused():
    sysm = _ball_with(lambda q: np.array([0.0, 1.0]), tangent=lambda q: np.array([0.0, 2.0]),
                      friction=0.5)
    with pytest.raises(ValueError, match=r"moreau_jean: system: surface 'floor': tangent: "
                                         r"expected a tangent row independent of the normal"):
        moreau_jean(sysm, [0.0, 1.0], [0.0, 0.0], 0.1, 0.01)


def test_a_consistent_surface_still_runs():
    sysm = _ball_with(lambda q: np.array([0.0, 1.0]), tangent=lambda q: np.array([1.0, 0.0]),
                      friction=0.5)
    run = moreau_jean(sysm, [0.0, 1.0], [0.0, 0.0], 0.1, 0.01)
    assert run.q.shape[1] == 2


# --------------------------------------------------------- outside a formula's domain ------

def test_a_time_dependent_lagrangian_keeps_its_time_term():
    """E = d/dt dL/dxd - dL/dx, the time derivative taken directly on x(t) (an independent
    route): the explicit-time term m w cos(w t) is there."""
    x, xd, xdd, t, m, w = sp.symbols("x xd xdd t m w")
    L = m * (xd + sp.sin(w * t)) ** 2 / 2 - m * x ** 2 / 2
    E = lagrange.euler_lagrange(L, [x], [xd], [xdd])[0]
    X = sp.Function("X")(t)
    Lt = L.subs({xd: X.diff(t), x: X})
    direct = sp.diff(Lt.diff(X.diff(t)), t) - Lt.diff(X)
    direct = direct.subs(X.diff(t, 2), xdd).subs(X.diff(t), xd).subs(X, x)
    assert sp.simplify(E - direct) == 0
    assert sp.simplify(E - (m * xdd + m * w * sp.cos(w * t) + m * x)) == 0


def test_a_lagrangian_in_functions_of_time_is_refused():
    t = sp.Symbol("t")
    q = sp.Function("q")(t)
    qs, qds = sp.symbols("q qd")
    with pytest.raises(ValueError, match=r"euler_lagrange: L: expected an expression in the "
                                         r"Symbols q, qd"):
        lagrange.euler_lagrange(qds ** 2 / 2 + q, [qs], [qds])


def test_a_mode_shape_off_a_root_is_refused():
    with pytest.raises(ValueError, match=r"mode_shape: beta: expected a root beta\*L of "
                                         r"1 \+ cos\(bL\) cosh\(bL\) = 0 .*got 2 \(the nearest "
                                         r"root is 1.8751"):
        kane.mode_shape(2.0, 1.0, 0.5)
    beta = kane.clamped_free_roots(2)[1]
    assert abs(np.cos(beta) * np.cosh(beta) + 1) < 1e-9      # the roots pass
    kane.mode_shape(beta, 1.0, 0.5)


def test_a_deflection_outside_the_beam_is_refused():
    link = kane.flexible_link(1)
    with pytest.raises(ValueError, match=r"FlexibleLink.deflection: x: expected positions along "
                                         r"the beam, in \[0, L\]"):
        link.deflection([0.1], [0.5, 1.5])
    with pytest.raises(ValueError, match=r"mode_shape: x: expected positions along the beam"):
        kane.mode_shape(kane.clamped_free_roots(1)[0], 1.0, -0.1)


def test_a_four_bar_that_cannot_close_is_refused():
    with pytest.raises(ValueError, match=r"four_bar_close: lengths: expected four lengths that "
                                         r"can close a loop .*got d = 5.0 > 3.0"):
        models.four_bar_close([0.0, 0.0, 0.0], (1, 1, 1, 5))
    with pytest.raises(ValueError, match=r"four_bar_kane: a, b, c, d: expected four lengths"):
        models.four_bar_kane(1, 1, 1, 5, (1, 1, 1), 0)


# --------------------------------------------------------- codegen --------------------------

def test_codegen_refuses_a_mass_matrix_that_is_not_one():
    q1, q2, qd1, qd2 = sp.symbols("q1 q2 qd1 qd2", real=True)
    C, G = sp.zeros(2, 2), sp.zeros(2, 1)
    with pytest.raises(ValueError, match=r"compile_equations: M: expected a symmetric matrix"):
        codegen.compile_equations(sp.Matrix([[2, 1], [0, 1]]), C, G, [q1, q2], [qd1, qd2])
    with pytest.raises(ValueError, match=r"compile_equations: M: expected a symmetric positive "
                                         r"definite matrix"):
        codegen.compile_equations(-sp.Matrix([[2 + sp.cos(q2), 0], [0, 1]]), C, G, [q1, q2],
                                  [qd1, qd2])
