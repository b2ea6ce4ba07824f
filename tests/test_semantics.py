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


# ---------------------------------------------------------------- a second hostile probe ----

def _kane_pendulum():
    q, u = sp.symbols("q u")
    m, l, g = sp.symbols("m l g", positive=True)
    P = kane.Particle("P", m, [l * sp.sin(q), -l * sp.cos(q), 0])
    return kane.kanes_equations([q], [u], [P], [kane.Force(P.position, [0, -m * g, 0])])


VALUES_ROUTES = {
    "MassMatrixForm.numeric": lambda v: models.particle_pendulum().model.numeric(v),
    "MassMatrixForm.rhs": lambda v: models.particle_pendulum().model.rhs(v),
    "robodyn.constraints.simulate_constrained": lambda v: constraints.simulate_constrained(
        models.particle_pendulum(), [1.0, 0], [0, 0], 0.1, values=v),
    "robodyn.constraints.constraint_controller": lambda v: constraints.constraint_controller(
        models.particle_pendulum(), values=v),
    "robodyn.equations.max_difference": lambda v: rd.equations.max_difference(
        models.particle_pendulum().model, models.particle_pendulum().model, values=v),
    "robodyn.kane.linearize": lambda v: kane.linearize(_kane_pendulum(), [0.0], [0.0],
                                                         values=v),
}
"""Every route that takes a ``values`` dict for a model's parameters, called with values that
contradict the parameters' assumptions (each is declared positive)."""


@pytest.mark.parametrize("route", sorted(VALUES_ROUTES))
@pytest.mark.parametrize("name, values", [
    ("g", {"m": 1.0, "l": 1.0, "g": -9.81}), ("m", {"m": -1.0, "l": 1.0, "g": 9.81}),
    ("l", {"m": 1.0, "l": -1.0, "g": 9.81})])
def test_a_value_against_its_symbols_assumption_is_refused(route, name, values):
    """A pendulum whose g is declared positive given g = -9.81 falls upwards: the value is
    refused where it is substituted, naming it, whatever route carries it."""
    if route.startswith(("MassMatrixForm", "robodyn.equations")):
        if name == "l":
            pytest.skip("the unconstrained particle has no length")
        values = {k: v for k, v in values.items() if k != "l"}
    with pytest.raises(rd.ArgumentError, match=rf"values\[{name}\]: expected a (non)?"
                                               rf"(positive|negative) number "
                                               rf"\({name} is declared so\), got (float|int) -"):
        VALUES_ROUTES[route](values)


def test_the_values_routes_are_all_tested():
    """A public callable with a ``values`` parameter that is not in VALUES_ROUTES fails here."""
    import inspect
    import _fuzz_api_support as fz
    found = set()
    for name, (_, f, _) in fz.public_callables().items():
        try:
            if "values" in inspect.signature(f).parameters:
                found.add(name)
        except (TypeError, ValueError):
            continue
    assert found <= set(VALUES_ROUTES), sorted(found - set(VALUES_ROUTES))


def test_legal_values_still_give_the_pendulums_motion():
    """The same routes with values that meet the assumptions: the pendulum falls (y < 0)."""
    run = constraints.simulate_constrained(models.particle_pendulum(), [1.0, 0], [0, 0], 0.3,
                                           values={"l": 1.0, "m": 1.0, "g": 9.81})
    assert run.q[-1][1] < -0.3
    drift = constraints.simulate_constrained(models.particle_pendulum(), [1.0, 0], [0, 0], 0.3,
                                             values={"l": 1.0, "m": 1.0, "g": 0})
    assert np.allclose(drift.q[-1], [1.0, 0])           # gravity off: it stays


def test_an_inertia_that_fails_for_large_values_of_its_symbol_is_warned():
    """diag(1, 1, x) breaks the triangle inequality for x > 2: the samples span two decades,
    so the check sees it and warns, naming the argument."""
    q, x = sp.Symbol("q"), sp.Symbol("x", positive=True)
    with pytest.warns(UndecidedWarning, match=r"^RigidBody: inertia: could not decide"):
        kane.RigidBody("B", 1, [0, 0, 0], sp.rot_axis3(-q), sp.diag(1, 1, x))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        kane.RigidBody("B", 1, [0, 0, 0], sp.rot_axis3(-q), sp.diag(x, x, x))


def test_the_spin_up_profile_refuses_times_before_it_starts():
    with pytest.raises(rd.ArgumentError, match=r"^spin_up_profile: t: expected times >= 0"):
        kane.spin_up_profile([-15.0, 0.0, 1.0])
    assert np.allclose(kane.spin_up_profile(0.0), 0.0)


def test_a_reference_below_the_absolute_tolerance_is_refused():
    """A reference of size 1e-10 under atol = 1e-9 would take any small answer (twice it):
    refused, naming the reference; with a smaller atol the factor 2 is found; a symbolic zero
    that rounds to 1e-16 still compares."""
    from robodyn import answers
    with pytest.raises(rd.ArgumentError, match=r"^compare: reference: expected an answer "
                                               r"larger than 10 times the absolute tolerance"):
        answers.compare("1e-10*x", "2e-10*x")
    tiny = answers.Problem("p1", "J", variables={"x": (1e-6, 1e-5)}, atol=1e-30)
    assert answers.compare("x**2", "2*x**2", tiny).status == "incorrect"
    assert answers.compare("2*x**2", "2*x**2", tiny).status == "correct"
    assert answers.compare("0", "sin(x)**2 + cos(x)**2 - 1").status == "correct"
    with pytest.raises(rd.ArgumentError, match=r"^fingerprint: reference: expected an answer"):
        answers.fingerprint(sp.Symbol("x") * sp.Rational(1, 10**10),
                            answers.Problem("p1", "J", variables={"x": (0.5, 1)}))


# ---------------------------------------------------------------- a third hostile probe -----

@pytest.mark.parametrize("Jt, got", [([[0, 1]], r"row 0: \[0\.0, 1\.0\], parallel to Jn\[0\]"),
                                     ([[0, 0]], "row 0: the zero row")])
def test_a_tangent_row_along_the_normal_or_zero_is_refused_with_friction(Jt, got):
    """contact_impulse splits the impulse into a normal and a friction part: with a tangent row
    parallel to the normal, 'friction' acted along the normal (18 and -9 N s for the true 9);
    with a zero row friction silently vanished. Without friction a zero row is unused."""
    from robodyn import impacts
    M = 2 * np.eye(2)
    with pytest.raises(rd.ArgumentError, match=rf"^contact_impulse: Jt: expected a tangent row "
                                               rf"independent .* got {got}"):
        impacts.contact_impulse(M, [[0, 1]], [1, -3], 0.5, friction=0.5, Jt=Jt)
    res = impacts.contact_impulse(M, [[0, 1]], [1, -3], 0.5, friction=0.0, Jt=[[0, 0]])
    assert np.allclose(M @ (res.qd_plus - [1, -3]), [0, 9])         # 2 * (1 + 0.5) * 3
    ok = impacts.contact_impulse(M, [[0, 1]], [1, -3], 0.5, friction=0.5, Jt=[[1, 0]])
    assert np.allclose(M @ (ok.qd_plus - [1, -3]), [-2, 9])         # sticks: 2 * 1 sideways


def test_dexp_inverse_refuses_a_rotation_beyond_its_truncated_series():
    """At |omega| = 6 the truncated series gave -2 where dexp^-1 is 3 cot 3 = -21.05."""
    from robodyn import port_hamiltonian
    with pytest.raises(rd.ArgumentError, match=r"^dexp_inverse: u: expected a step's twist"):
        port_hamiltonian.dexp_inverse([0, 0, 6.0, 0, 0, 0], np.ones(6))
    w = 0.5                                     # within: close to the closed form
    exact = (w / 2) / np.tan(w / 2)
    assert abs(port_hamiltonian.dexp_inverse([0, 0, w, 0, 0, 0], [1.0, 0, 0, 0, 0, 0])[0]
               - exact) < 1e-4


def test_a_base_pose_is_checked_without_gravity_too():
    from robodyn import derivatives, port_hamiltonian
    vms = port_hamiltonian.VehicleManipulator.from_chain(
        models.planar_rr(), rigid_motion.spatial_inertia(5.0, [1, 1, 1]), "planar")
    args = ([.1, .2], [.1, .2, .3], [.1, .1], [0, 0, 0], [0, 0])
    for bad in (np.full((3, 3), np.nan), np.full((4, 4), np.nan)):
        with pytest.raises(rd.ArgumentError, match=r"^vms_(rnea|aba)_derivatives: base_pose"):
            derivatives.vms_rnea_derivatives(vms, *args, base_pose=bad)
        with pytest.raises(rd.ArgumentError, match=r"^vms_(rnea|aba)_derivatives: base_pose"):
            derivatives.vms_aba_derivatives(vms, *args, base_pose=bad)
    a = derivatives.vms_rnea_derivatives(vms, *args, base_pose=np.eye(4))
    b = derivatives.vms_rnea_derivatives(vms, *args)
    assert all(np.allclose(x, y) for x, y in zip(a, b))     # no gravity: the pose is unused


def test_robodyns_own_failures_are_robodyn_errors():
    """A negative seed, a mass matrix made indefinite by a value, a map with no fixed point:
    each is a RobodynError naming the function, no bare numpy or Python error."""
    from robodyn import codegen, impacts
    q, u, ms = sp.symbols("q u ms")
    a = rd.equations.mass_matrix_form([q], [u], [[2]], [-sp.sin(q)])
    b = rd.equations.mass_matrix_form([q], [u], [[ms]], [-sp.sin(q)])
    with pytest.raises(rd.ArgumentError, match=r"^max_difference: seed: expected an integer"):
        rd.equations.max_difference(a, a, seed=-1)
    with pytest.raises(codegen.SingularMassMatrix, match="not positive definite"):
        rd.equations.max_difference(b, a, values={ms: -2.0})
    with pytest.raises(impacts.LimitReached, match=r"^fixed_point: no fixed point"):
        impacts.fixed_point(lambda x: x + 1, [0.0])


def test_an_overflow_from_gravity_names_gravity():
    from robodyn import dynamics
    with pytest.raises(rd.ResultError, match=r"^inverse_dynamics: result: expected values of "
                                             r"q, qd, qdd, gravity, wrench_ee small enough"):
        dynamics.inverse_dynamics(models.planar_rr(), [.1, .2], [0, 0], [0, 0],
                                  gravity=[0, -1e308, 0])
