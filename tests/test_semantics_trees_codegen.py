"""What a tree's or a compiled model's numbers mean: inertias that are rigid bodies (the triangle
inequality), joints that move inertia, mass matrices that are singular at a state (refused,
never a huge or an "overflow" answer), and equations whose M and G read q only."""
import dataclasses
import re

import numpy as np
import pytest
import sympy as sp

import robodyn as rd
from robodyn import codegen, trees, urdf
from robodyn import recursive_codegen as rc
from robodyn.dynamics import _recursions

LIMIT = '<limit lower="-3" upper="3" effort="10" velocity="1"/>'


def _link(name, mass, xyz="0 0 0", I=(0.0, 0.0, 0.0)):
    return (f'<link name="{name}"><inertial><mass value="{mass}"/><origin xyz="{xyz}"/>'
            f'<inertia ixx="{I[0]}" iyy="{I[1]}" izz="{I[2]}" ixy="0" ixz="0" iyz="0"/>'
            f'</inertial></link>')


def _joint(name, parent, child, xyz="0 0 0", axis="0 0 1", kind="revolute"):
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/>'
            f'<child link="{child}"/><origin xyz="{xyz}"/><axis xyz="{axis}"/>{LIMIT}</joint>')


def _urdf(tmp_path, name, *parts):
    path = tmp_path / f"{name}.urdf"
    path.write_text(f'<?xml version="1.0"?>\n<robot name="{name}">\n' + "\n".join(parts)
                    + "\n</robot>\n")
    return path


def _two_links(tmp_path, name, I1, child=None):
    """base -j1-> l1 -j2-> l2, revolute about z; l1 with the moments I1."""
    return _urdf(tmp_path, name, _link("base", 1, I=(0.1, 0.1, 0.1)),
                 _link("l1", 1, "0.5 0 0", I1),
                 child or _link("l2", 1, "0.5 0 0", (0.01, 0.01, 0.01)),
                 _joint("j1", "base", "l1"), _joint("j2", "l1", "l2", "1 0 0"))


def _hand_built(model, **change):
    fields = {f.name: getattr(model, f.name) for f in dataclasses.fields(model)
              if f.name != "_cache"}
    fields.update(change)
    return urdf.RobotModel(**fields)


@pytest.fixture(params=["c", "numpy"])
def engine(request, monkeypatch):
    """Each tree algorithm on the compiled engine (which declines, the numpy path reporting)
    and on the numpy algorithms alone."""
    if request.param == "numpy":
        monkeypatch.setattr(_recursions, "ENGINE", "numpy")
    return request.param


# --------------------------------------------------------------------------
# D10: an inertia that is no rigid body (the triangle inequality)
# --------------------------------------------------------------------------

def test_inertia_breaking_the_triangle_inequality_is_refused_naming_file_and_link(tmp_path):
    path = _two_links(tmp_path, "triangle", (0.01, 0.01, 0.1))
    with pytest.raises(urdf.URDFError) as err:
        urdf.load_urdf(path, check_meshes=False)
    msg = str(err.value)
    for words in ("load_urdf", "triangle.urdf", "link 'l1'", "triangle inequality",
                  "[0.01, 0.01, 0.1]"):
        assert words in msg, (words, msg)


def test_links_welded_into_one_body_are_checked_together(tmp_path):
    # a flat link welded to a compensating one is a rigid body (vendors' files do this) ...
    bad, fat = (0.001, 0.001, 0.01), (0.05, 0.05, 0.01)
    for extra, ok in ((fat, True), (bad, False)):
        path = _urdf(tmp_path, f"welded_{ok}", _link("base", 1, I=(0.1, 0.1, 0.1)),
                     _link("l1", 0.05, "0 0 0", bad), _link("cap", 1, "0 0 0", extra),
                     _joint("j1", "base", "l1"),
                     '<joint name="weld" type="fixed"><parent link="l1"/><child link="cap"/>'
                     '</joint>')
        if ok:
            assert urdf.load_urdf(path, check_meshes=False).n == 1
        else:                                   # ... two flat ones are not
            with pytest.raises(urdf.URDFError, match=r"links \['l1', 'cap'\] welded into one "
                                                     r"body: inertial: .*triangle inequality"):
                urdf.load_urdf(path, check_meshes=False)


def test_plates_and_rounding_still_load(tmp_path):
    for I1 in ((0.01, 0.01, 0.02), (0.0083, 0.0083, 0.0167), (1e-9, 1e-9, 3e-9)):
        m = urdf.load_urdf(_two_links(tmp_path, "plate", I1), check_meshes=False)
        assert m.n == 2


def test_hand_built_model_with_such_an_inertia_is_refused(tmp_path):
    m = urdf.load_urdf(_two_links(tmp_path, "fine", (0.01, 0.01, 0.01)), check_meshes=False)
    G = np.array(m.inertias)
    G[0, 2, 2] = 0.3 + G[0, 0, 0] - 0.01           # the central Izz above Ixx + Iyy
    with pytest.raises(ValueError, match=r"RobotModel: inertias\[0\]: .*triangle inequality"):
        _hand_built(m, inertias=G)


@pytest.mark.parametrize("name", ["ur5", "panda", "solo12", "go1", "pr2", "allegro_right_hand",
                                  "anymal_c_simple_description/anymal"])
def test_robots_of_example_robot_data_still_load(name):
    assert urdf.load_urdf(name, check_meshes=False).n > 0


# --------------------------------------------------------------------------
# D11 / E3: a joint that moves no inertia
# --------------------------------------------------------------------------

def _point_on_axis(tmp_path):
    """j2 turns a point mass sitting on its own axis: mass, but nothing to turn."""
    return _two_links(tmp_path, "still", (0.01, 0.01, 0.01), _link("l2", 1, "0 0 0"))


def test_joint_that_moves_no_inertia_is_refused_at_load(tmp_path):
    with pytest.raises(urdf.URDFError) as err:
        urdf.load_urdf(_point_on_axis(tmp_path), check_meshes=False)
    for words in ("still.urdf", "joint 'j2'", "no inertia about its axis", "singular"):
        assert words in str(err.value), (words, str(err.value))


def test_prismatic_joint_that_moves_no_mass_is_refused(tmp_path):
    path = _urdf(tmp_path, "slide", _link("base", 1, I=(0.1, 0.1, 0.1)), _link("l1", 1, "0 0 0",
                 (0.01, 0.01, 0.01)), _link("l2", 0), _joint("j1", "base", "l1"),
                 _joint("j2", "l1", "l2", axis="1 0 0", kind="prismatic"))
    with pytest.raises(urdf.URDFError, match="joint 'j2'"):
        urdf.load_urdf(path, check_meshes=False)


def _singular_at_zero(tmp_path):
    """j3 (about x) carries a point mass that sits on j2's axis (z) at q3 = 0 only: the model
    is legal, its mass matrix singular where q3 = 0."""
    return _urdf(tmp_path, "fold", _link("base", 1, I=(0.1, 0.1, 0.1)),
                 _link("l1", 1, "0.5 0 0", (0.01, 0.01, 0.01)), _link("l2", 0),
                 _link("l3", 1, "0 0 0.5"), _joint("j1", "base", "l1"),
                 _joint("j2", "l1", "l2", "1 0 0"), _joint("j3", "l2", "l3", axis="1 0 0"))


def test_singular_state_of_a_legal_model_is_reported_as_singular(tmp_path, engine):
    m = urdf.load_urdf(_singular_at_zero(tmp_path), check_meshes=False)
    zero, tau = np.zeros(3), np.array([0.0, 1.0, 0.0])
    assert np.linalg.matrix_rank(trees.crba(m, [0.3, 0.2, 0.0])) == 2
    for q3 in (0.0, 1e-9):             # a pivot of exactly 0, and one that is rounding (1e-19)
        for f in (trees.aba, trees.aba_derivatives):
            with pytest.raises(ValueError, match=rf"^{f.__name__}: the mass matrix of .* is "
                                                 r"singular") as err:
                f(m, np.array([0.3, 0.2, q3]), zero, tau)
            assert "overflow" not in str(err.value)
    q = np.array([0.3, 0.2, 0.4])                     # elsewhere: the same answers as M^-1
    acc = np.linalg.solve(trees.crba(m, q), tau - trees.rnea(m, q, zero, zero))
    np.testing.assert_allclose(trees.aba(m, q, zero, tau), acc, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(trees.aba_derivatives(m, q, zero, tau)[2],
                               np.linalg.inv(trees.crba(m, q)), rtol=1e-9, atol=1e-9)


def test_locking_a_joint_where_its_mass_lands_on_an_axis_is_refused(tmp_path):
    m = urdf.load_urdf(_singular_at_zero(tmp_path), check_meshes=False)
    with pytest.raises(ValueError, match=r"lock_joints: joints, q: .*joint 'j2' moving none"):
        urdf.lock_joints(m, ["j3"])
    assert urdf.lock_joints(m, ["j3"], q=[0.0, 0.0, 0.5]).n == 2


def test_hand_built_models_that_move_nothing_are_reported_as_singular(tmp_path, engine):
    m = urdf.load_urdf(_two_links(tmp_path, "ok", (0.01, 0.01, 0.01)), check_meshes=False)
    G = np.array(m.inertias)
    G[1] = np.diag([0.0, 0.0, 0.0, 1.0, 1.0, 1.0])     # a point mass on j2's axis
    still = _hand_built(m, inertias=G)
    args = ([0.3, 0.2], [0.0, 0.0], [0.0, 1.0])
    for f in (trees.aba, trees.aba_derivatives):
        with pytest.raises(ValueError, match=rf"^{f.__name__}: the mass matrix .* singular "
                                             r".*pivots of joints \[1\] vanish"):
            f(still, *args)
    # a floating base without mass that carries one joint: 7 velocities, 6 freedoms
    one = urdf.lock_joints(m, ["j2"])
    for base in (0.0, 1e-20):                  # no mass, and a mass that is rounding
        free = _hand_built(one, floating=True, base_inertia=base * np.eye(6))
        with pytest.raises(ValueError, match=r"^aba: the mass matrix of .* is singular"):
            trees.aba(free, [0.3], np.zeros(7), np.zeros(7))


# --------------------------------------------------------------------------
# D13: compiled forward dynamics at a state where M is singular
# --------------------------------------------------------------------------

def test_compiled_forward_dynamics_refuses_a_singular_mass_matrix():
    q1, q2, u1, u2 = sp.symbols("q1 q2 qd1 qd2")
    M = sp.Matrix([[2, 2 * sp.cos(q2)], [2 * sp.cos(q2), 2]])      # singular where q2 = 0
    mod = codegen.compile_equations(M, sp.zeros(2, 2), sp.zeros(2, 1), [q1, q2], [u1, u2])
    with pytest.raises(codegen.SingularMassMatrix, match=r"^forward_dynamics: M\(q\): expected "
                                                       r"a positive definite .* singular") as err:
        mod.forward_dynamics([0.0, 0.0], [0.0, 0.0], [1.0, 0.0])
    assert isinstance(err.value, rd.RobodynError) and isinstance(err.value, rd.ResultError)
    assert isinstance(err.value, np.linalg.LinAlgError)     # what callers of a solve catch
    with pytest.raises(np.linalg.LinAlgError, match="state 1 of the batch"):
        mod.forward_dynamics([[0.0, 0.5], [0.0, 0.0]], np.zeros((2, 2)), [[1.0, 0.0]] * 2)
    x = np.array([0.0, 0.5])
    Mx = np.array([[2, 2 * np.cos(0.5)], [2 * np.cos(0.5), 2]])
    np.testing.assert_allclose(mod.forward_dynamics(x, [0.0, 0.0], [1.0, 0.0]),
                               np.linalg.solve(Mx, [1.0, 0.0]), rtol=1e-12)


def test_generated_articulated_body_algorithm_refuses_a_singular_state(tmp_path):
    model = urdf.load_urdf(_singular_at_zero(tmp_path), check_meshes=False)
    mod = rc.compile_recursive(model)
    zero, tau = np.zeros(3), np.array([0.0, 1.0, 0.0])
    for q3 in (0.0, 1e-9):
        with pytest.raises(codegen.SingularMassMatrix, match=r"^forward_dynamics: M\(q\): .* "
                                                             r"singular"):
            mod.forward_dynamics([0.3, 0.2, q3], zero, tau)
    q = np.array([0.3, 0.2, 0.4])
    np.testing.assert_allclose(mod.forward_dynamics(q, zero, tau), trees.aba(model, q, zero, tau),
                               rtol=1e-10, atol=1e-10)


# --------------------------------------------------------------------------
# E4 / E5: M and G read q only
# --------------------------------------------------------------------------

def test_velocities_in_M_or_G_are_refused_before_compiling(monkeypatch):
    q1, u1 = sp.symbols("q1 qd1")

    def no_compiler(*args, **kwargs):
        raise AssertionError("reached the C compiler")
    monkeypatch.setattr(codegen, "compiled_module", no_compiler)
    cases = {"G": (sp.Matrix([[2]]), sp.Matrix([[0]]), sp.Matrix([u1])),
             "M": (sp.Matrix([[2 + u1 ** 2]]), sp.Matrix([[0]]), sp.Matrix([0])),
             "M, qd a function": (sp.Matrix([[2 + sp.Function("v")(sp.Symbol("t"))]]),
                                  sp.Matrix([[0]]), sp.Matrix([0]))}
    for what, (M, C, G) in cases.items():
        qd = [sp.Function("v")(sp.Symbol("t"))] if "function" in what else [u1]
        with pytest.raises(ValueError, match=rf"^compile_equations: {what[0]}: expected "
                                             rf"expressions free of {re.escape(str(qd[0]))}, "
                                             r"got one containing"):
            codegen.compile_equations(M, C, G, [q1], qd)


def test_velocities_in_C_still_compile():
    q1, u1 = sp.symbols("q1 qd1")
    mod = codegen.compile_equations(sp.Matrix([[2]]), sp.Matrix([[0.5 * u1]]),
                                    sp.Matrix([9.81 * sp.sin(q1)]), [q1], [u1])
    np.testing.assert_allclose(mod.forward_dynamics([0.5], [2.0], [0.0]),
                               [(-0.5 * 2.0 * 2.0 - 9.81 * np.sin(0.5)) / 2], rtol=1e-12)
