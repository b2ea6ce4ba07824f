"""Tests of robodyn.recursive_codegen: the generated C of a robot's articulated-body and
Newton-Euler recursions gives Pinocchio's aba and rnea on the same URDF (the Panda, the UR5 of
example-robot-data, a small tree with a general axis and a slide, the 9-joint Panda with its
fingers: a branching tree with prismatic joints), and on book chains the q'' that solves the
compiled symbolic M q'' + C q' + G = tau (an independent route: the closed-form equations);
the exported text is readable; bad robots are refused; EquationsOfMotion.numeric uses it."""
from pathlib import Path

import numpy as np
import pytest
import sympy as sp

from robodyn import codegen, lagrange, models, recursive_codegen as rc, urdf
from robodyn.rigid_motion import SerialChain

pin = pytest.importorskip("pinocchio")

FINGERS = ["panda_finger_joint1", "panda_finger_joint2"]
WELDED = str(Path(__file__).resolve().parent / "fixtures" / "urdf" / "welded.urdf")
GRAVITY = np.array([0.0, 0.0, -9.81])


def _close(a, b, rel=1e-10):
    return np.abs(a - b).max() <= rel * max(1.0, np.abs(b).max())


def _pinocchio(model, locked=()):
    pm = pin.buildModelFromUrdf(model.source)
    if locked:
        pm = pin.buildReducedModel(pm, [pm.getJointId(j) for j in locked], pin.neutral(pm))
    return pm, pm.createData()


def _pin_q(pm, model, q):
    """Pinocchio's configuration of robodyn's joint values (continuous joints: cos, sin)."""
    qp = pin.neutral(pm)
    for qi, name in zip(q, model.joint_names):
        jm = pm.joints[pm.getJointId(name)]
        qp[jm.idx_q:jm.idx_q + jm.nq] = [np.cos(qi), np.sin(qi)] if jm.nq == 2 else [qi]
    return qp


def _perm(pm, model):
    return np.array([pm.joints[pm.getJointId(j)].idx_v for j in model.joint_names])


CASES = {"panda": ("panda", FINGERS, "panda_hand"), "ur5": ("ur5", [], "tool0"),
         "welded": (WELDED, [], "slide"), "panda_tree": ("panda", [], None)}


@pytest.fixture(scope="module", params=sorted(CASES))
def robot(request):
    source, locked, tip = CASES[request.param]
    full = urdf.load_urdf(source)
    model = urdf.lock_joints(full, locked) if locked else full
    pm, pd = _pinocchio(full, locked)
    return request.param, model, tip, pm, pd


@pytest.mark.equation("hb-5-14")
def test_forward_and_inverse_dynamics_equal_pinocchio(robot):
    name, model, tip, pm, pd = robot
    robots = [model] + ([urdf.serial_chain(model, tip=tip)] if tip else [])
    P = _perm(pm, model)
    rng = np.random.default_rng(11)
    for r in robots:                     # the RobotModel, and the same robot as a SerialChain
        mod = rc.compile_recursive(r, GRAVITY)
        for _ in range(20):
            q = rng.uniform(-2.5, 2.5, model.n)
            q = np.clip(q, model.lower, model.upper)
            qd, tau = rng.normal(scale=2.0, size=model.n), rng.normal(scale=20.0, size=model.n)
            qp, vp, tp = _pin_q(pm, model, q), np.empty(pm.nv), np.empty(pm.nv)
            vp[P], tp[P] = qd, tau
            qdd = mod.forward_dynamics(q, qd, tau)
            ref = pin.aba(pm, pd, qp, vp, tp)[P]
            assert _close(qdd, ref), (name, r, np.abs(qdd - ref).max())
            ap = np.empty(pm.nv)
            ap[P] = qdd
            assert _close(mod.tau(q, qd, qdd), pin.rnea(pm, pd, qp, vp, ap)[P])
            assert _close(mod.tau(q, qd, qdd), tau)


def _book_chains():
    rng = np.random.default_rng(3)
    return {"planar_rp": models.planar_rp(1.0, 0.7, 1.5, 0.8), "ur5_like": models.ur5_like(),
            "spatial_rrr": models.spatial_rrr(),
            "random_5": models.random_chain(5, rng, prismatic=0.4)}


@pytest.mark.equation("hb-5-14")
@pytest.mark.parametrize("name", sorted(_book_chains()))
def test_book_chains_solve_the_symbolic_equations(name):
    chain = _book_chains()[name]
    g = (0.0, -9.81, 0.0)
    eom = lagrange.equations_of_motion(chain, gravity=g)
    ex = eom.explicit()
    closed = codegen.compile_equations(ex.M, ex.C, ex.G, list(ex.q), list(ex.qd))
    mod = rc.compile_recursive(chain, g)
    rng = np.random.default_rng(5)
    for _ in range(10):
        q, qd, tau = rng.uniform(-1.5, 1.5, (3, chain.n))
        qdd = mod.forward_dynamics(q, qd, tau)
        residual = closed.M(q) @ qdd + closed.C(q, qd) @ qd + closed.G(q) - tau
        assert np.abs(residual).max() <= 1e-10 * max(1.0, np.abs(tau).max())
        assert _close(qdd, closed.forward_dynamics(q, qd, tau), 1e-9)
        assert _close(mod.tau(q, qd, qdd), closed.tau(q, qd, qdd))


def test_equations_of_motion_numeric_compiles_the_recursion():
    chain = models.ur5_like()
    eom = lagrange.equations_of_motion(chain)
    num = eom.numeric()
    closed = codegen.compile_equations(eom.M, eom.C, eom.G, list(eom.q), list(eom.qd))
    assert num.forward_dynamics.__name__ == "forward_dynamics"
    assert num.forward_dynamics is not closed.forward_dynamics       # the recursion's
    assert num.forward_dynamics.__self__.__name__.startswith("robodyn_recursive")
    rng = np.random.default_rng(2)
    Q, QD, T = rng.uniform(-1.5, 1.5, (3, 9, chain.n))
    assert _close(num.forward_dynamics(Q, QD, T), closed.forward_dynamics(Q, QD, T), 1e-9)
    assert _close(num.tau(Q, QD, T), closed.tau(Q, QD, T))
    # symbolic parameters given values: the closed form, as before
    rr = lagrange.equations_of_motion(models.planar_rr(*sp.symbols("l1 l2 m1 m2")))
    sub = rr.numeric({"l1": 1, "l2": 1, "m1": 1, "m2": 1})
    assert sub.forward_dynamics.__self__.__name__.startswith("robodyn_eom")


def test_batch_equals_loop_and_checks_arguments():
    model = urdf.load_urdf(WELDED)
    mod = rc.compile_recursive(model)
    rng = np.random.default_rng(4)
    Q, QD, T = rng.normal(size=(3, 6, 2))
    got = mod.forward_dynamics(Q, QD, T)
    loop = np.array([mod.forward_dynamics(q, qd, t) for q, qd, t in zip(Q, QD, T)])
    np.testing.assert_array_equal(got, loop)
    np.testing.assert_array_equal(mod.tau(Q, QD, got), np.array(
        [mod.tau(q, qd, a) for q, qd, a in zip(Q, QD, got)]))
    with pytest.raises(ValueError, match=r"forward_dynamics: qd: expected finite numbers"):
        mod.forward_dynamics([0.0, 0.0], [np.nan, 0.0], [0.0, 0.0])
    with pytest.raises(ValueError, match=r"tau: q: expected shape \(2,\)"):
        mod.tau([0.0] * 3, [0.0] * 3, [0.0] * 3)
    with pytest.raises(TypeError, match=r"forward_dynamics: expected 3 argument"):
        mod.forward_dynamics([0.0, 0.0], [0.0, 0.0])


def test_exported_text_is_readable_c():
    arm = urdf.lock_joints(urdf.load_urdf("panda"), FINGERS)
    text = rc.recursive_source(arm)
    fd, rnea = text.split("static void k_id")
    for i in range(7):                   # each joint's cosine and sine once per function
        for part in (fd, rnea):
            assert part.count(f"cos(q[{i}])") == 1 and part.count(f"sin(q[{i}])") == 1
        assert f"joint panda_joint{i + 1} (revolute, axis (0, 0, 1))" in text
    assert "pow(" not in text and "Python.h" not in text
    assert "*0.0" not in text and "1.0*" not in text          # zeros and ones folded away
    assert max(len(line) for line in text.splitlines()) < 400


def test_non_positive_definite_robot_raises_linalg_error():
    # a point mass on the axis of the last joint: nothing resists its rotation, M is singular
    point = np.diag([0.0, 0.0, 0.0, 1.0, 1.0, 1.0])
    rod = np.diag([0.1, 0.1, 0.1, 1.0, 1.0, 1.0])
    H1, H2 = np.eye(4), np.eye(4)
    H1[0, 3], H2[0, 3] = 0.5, 1.0
    chain = SerialChain.from_screws([[0, 0], [0, 0], [1, 1], [0, 0], [0, -1], [0, 0]], H2,
                                    [H1, H2], [rod, point])
    mod = rc.compile_recursive(chain)
    with pytest.raises(np.linalg.LinAlgError, match="not positive definite"):
        mod.forward_dynamics([0.1, 0.2], [0.0, 0.0], [1.0, 1.0])


def test_bad_robots_are_refused():
    with pytest.raises(TypeError, match="recursive_source: robot: expected a RobotModel"):
        rc.recursive_source("panda")
    with pytest.raises(ValueError, match="compile_recursive: robot: expected a fixed base"):
        rc.compile_recursive(urdf.load_urdf(WELDED, floating_base=True))
    with pytest.raises(ValueError, match="recursive_source: robot: expected a numeric"):
        rc.recursive_source(models.planar_rr(*sp.symbols("l1 l2 m1 m2")))
    with pytest.raises(ValueError, match="recursive_source: robot: expected revolute and "
                                         "prismatic"):
        rc.recursive_source(models.random_chain(3, np.random.default_rng(0), prismatic=0.0,
                                                helical=1.0))
    with pytest.raises(ValueError, match="recursive_source: gravity"):
        rc.recursive_source(urdf.load_urdf(WELDED), gravity=[0.0, 9.81])
