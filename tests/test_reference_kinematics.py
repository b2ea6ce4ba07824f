"""Cross-checks of robodyn.rigid_motion against two independent libraries, Modern Robotics and
Pinocchio, on the book's models and on random chains (revolute, prismatic, helical, 7+ joints);
and checks of the helper tests/reference.py itself (the inertia mapping the dynamics tests use).
"""
import modern_robotics as mr
import numpy as np
import pinocchio as pin
import pytest

import robodyn as rd
from robodyn import models

from reference import (joint_frames, pinocchio_ee_pose, pinocchio_jacobian, pinocchio_link_poses,
                       swap_vw, to_modern_robotics, to_pinocchio)

TOL = 1e-10

BOOK = {
    "planar_rr": lambda: models.planar_rr(0.7, 1.3, 2.0, 0.5),
    "planar_rp": lambda: models.planar_rp(0.8, 0.6, 1.0, 2.0),
    "spatial_rrr": models.spatial_rrr,
    "ur5_like": models.ur5_like,
}
# 24 random chains: 4..11 joints, with prismatic joints; the last 6 also helical
RANDOM = {f"random_{s}": (lambda s=s: models.random_chain(
    4 + s % 8, np.random.default_rng(100 + s), prismatic=0.3, helical=0.3 if s >= 18 else 0.0))
    for s in range(24)}
CHAINS = BOOK | RANDOM


def configurations(chain, seed, k=4):
    rng = np.random.default_rng(seed)
    return [rng.uniform(-np.pi, np.pi, size=chain.n) for _ in range(k)]


def test_random_set_covers_the_joint_kinds():
    kinds = [t for make in RANDOM.values() for t in make().joint_types]
    assert {"revolute", "prismatic", "helical"} <= set(kinds)
    assert max(make().n for make in RANDOM.values()) >= 11
    assert sum(make().n >= 7 for make in RANDOM.values()) >= 10


# --------------------------------------------------------------------------
# Modern Robotics
# --------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(CHAINS))
@pytest.mark.equation("hb-5-6")
def test_against_modern_robotics(name):
    chain = CHAINS[name]()
    M, S, B = to_modern_robotics(chain)
    for q in configurations(chain, 1):
        assert np.allclose(rd.fk_space(chain, q), mr.FKinSpace(M, S, q), atol=TOL)
        assert np.allclose(rd.fk_body(chain, q), mr.FKinBody(M, B, q), atol=TOL)
        assert np.allclose(rd.jacobian_space(chain, q), mr.JacobianSpace(S, q), atol=TOL)
        assert np.allclose(rd.jacobian_body(chain, q), mr.JacobianBody(B, q), atol=TOL)


def test_exp_log_se3_against_modern_robotics():
    rng = np.random.default_rng(2)
    for _ in range(50):
        V = np.concatenate([rng.normal(size=3), rng.normal(size=3)])
        V[:3] *= rng.uniform(0.01, np.pi - 0.01) / np.linalg.norm(V[:3])
        H = rd.exp_se3(V)
        assert np.allclose(H, mr.MatrixExp6(mr.VecTose3(V)), atol=TOL)
        assert np.allclose(rd.log_se3(H), mr.se3ToVec(mr.MatrixLog6(H)), atol=1e-9)
        # screw-and-angle form against MR's (S, theta) convention
        S = rd.revolute_screw(rng.normal(size=3), rng.normal(size=3), pitch=rng.normal())
        t = rng.uniform(-3, 3)
        assert np.allclose(rd.exp_se3(S, t), mr.MatrixExp6(mr.VecTose3(S * t)), atol=TOL)
        assert np.allclose(rd.hat(V), mr.VecTose3(V), atol=0)
        assert np.allclose(rd.adjoint(H), mr.Adjoint(H), atol=TOL)
        assert np.allclose(rd.ad(V), mr.ad(V), atol=0)
    for _ in range(10):
        w = rng.normal(size=3)
        w *= rng.uniform(0.01, np.pi - 0.01) / np.linalg.norm(w)
        R = rd.exp_so3(w)
        assert np.allclose(R, mr.MatrixExp3(mr.VecToso3(w)), atol=TOL)
        assert np.allclose(rd.log_so3(R), mr.so3ToVec(mr.MatrixLog3(R)), atol=1e-9)
    # pure translation
    H = rd.homogeneous(np.eye(3), [1.0, -2.0, 0.5])
    assert np.allclose(rd.log_se3(H), mr.se3ToVec(mr.MatrixLog6(H)), atol=TOL)


# --------------------------------------------------------------------------
# Pinocchio
# --------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(CHAINS))
@pytest.mark.equation("hb-5-5", "hb-5-6", "hb-5-7")
def test_against_pinocchio(name):
    chain = CHAINS[name]()
    model = to_pinocchio(chain)
    assert model.nq == model.nv == chain.n
    for q in configurations(chain, 3):
        assert np.allclose(rd.fk_space(chain, q), pinocchio_ee_pose(model, q), atol=TOL)
        assert np.allclose(rd.fk_body(chain, q), pinocchio_ee_pose(model, q), atol=TOL)
        assert np.allclose(rd.link_poses(chain, q), pinocchio_link_poses(model, q), atol=TOL)
        assert np.allclose(rd.jacobian_space(chain, q), pinocchio_jacobian(model, q), atol=TOL)
        assert np.allclose(rd.jacobian_body(chain, q), pinocchio_jacobian(model, q, body=True),
                           atol=TOL)
        for k in range(chain.n):
            frame = f"link_{k}"
            assert np.allclose(rd.jacobian_space(chain, q, link=k),
                               pinocchio_jacobian(model, q, frame), atol=TOL)
            assert np.allclose(rd.jacobian_body(chain, q, link=k),
                               pinocchio_jacobian(model, q, frame, body=True), atol=TOL)


def test_pinocchio_compute_frame_jacobian_directly():
    """The same through computeFrameJacobian (the helper uses computeJointJacobians)."""
    chain = models.ur5_like()
    model = to_pinocchio(chain)
    data = model.createData()
    fid = model.getFrameId("ee")
    for q in configurations(chain, 4):
        pin.forwardKinematics(model, data, q)
        pin.updateFramePlacements(model, data)
        Jl = pin.computeFrameJacobian(model, data, q, fid, pin.ReferenceFrame.LOCAL)
        Jw = pin.computeFrameJacobian(model, data, q, fid, pin.ReferenceFrame.WORLD)
        assert np.allclose(swap_vw(Jl), rd.jacobian_body(chain, q), atol=TOL)
        assert np.allclose(swap_vw(Jw), rd.jacobian_space(chain, q), atol=TOL)


def test_swap_vw():
    x = np.arange(6.0)
    assert np.array_equal(swap_vw(x), [3, 4, 5, 0, 1, 2])
    J = np.arange(18.0).reshape(6, 3)
    assert np.array_equal(swap_vw(swap_vw(J)), J)
    assert np.array_equal(swap_vw(J)[:3], J[3:])
    with pytest.raises(ValueError, match=r"swap_vw: expected a 6-vector or a 6 x n matrix, got "
                                         r"shape \(3, 6\)"):
        swap_vw(np.zeros((3, 6)))
    # a pinocchio Motion (v, omega) becomes our twist (omega, v)
    m = pin.Motion(np.array([1.0, 2, 3]), np.array([4.0, 5, 6]))
    assert np.array_equal(swap_vw(m.vector), [4, 5, 6, 1, 2, 3])


def test_joint_frames_lie_on_the_axes():
    chain = models.random_chain(8, np.random.default_rng(5), prismatic=0.3, helical=0.3)
    for T, S, kind in zip(joint_frames(chain), chain.screws.T, chain.joint_types):
        p = T[:3, 3]
        assert np.allclose(T[:3, :3], np.eye(3))
        if kind != "prismatic":
            # a point on the axis moves only along it: omega x p + v = h omega
            h = S[:3] @ S[3:]
            assert np.allclose(np.cross(S[:3], p) + S[3:], h * S[:3], atol=1e-12)


def test_to_pinocchio_refuses_symbolic_chains():
    import sympy as sp
    with pytest.raises(TypeError, match="expected a numeric SerialChain, got a symbolic one"):
        to_pinocchio(models.planar_rr(sp.Symbol("l"), 1.0))


# --------------------------------------------------------------------------
# the inertia mapping of tests/reference.py (for the dynamics cross-checks)
# --------------------------------------------------------------------------


def crba(model, q):
    data = model.createData()
    M = pin.crba(model, data, np.asarray(q, dtype=float))
    return np.triu(M) + np.triu(M, 1).T


def test_pinocchio_mass_matrix_of_planar_rr_is_the_textbook_one():
    """Independent route: the two-link mass matrix written out by hand."""
    l1, l2, m1, m2 = 0.7, 1.3, 2.0, 0.5
    model = to_pinocchio(models.planar_rr(l1, l2, m1, m2))
    for q in ([0.0, 0.0], [0.4, -2.0], [1.0, 0.7], [-2.0, 3.0]):
        c2 = np.cos(q[1])
        M11 = m1 * l1**2 / 3 + m2 * (l1**2 + l2**2 / 3 + l1 * l2 * c2)
        M12 = m2 * (l2**2 / 3 + l1 * l2 * c2 / 2)
        M22 = m2 * l2**2 / 3
        assert np.allclose(crba(model, q), [[M11, M12], [M12, M22]], atol=1e-12)


def test_pinocchio_mass_matrix_of_planar_rp_is_the_textbook_one():
    """RP arm: guide rod (l1, m1) about the revolute axis, sliding rod (l2, m2) whose CoM is
    at distance r = l2/2 + q2: M = [[m1 l1^2/3 + m2 (r^2 + l2^2/12), 0], [0, m2]]."""
    l1, l2, m1, m2 = 0.8, 0.6, 1.0, 2.0
    model = to_pinocchio(models.planar_rp(l1, l2, m1, m2))
    for q in ([0.0, 0.0], [0.5, 0.3], [-1.0, -0.2]):
        r = l2 / 2 + q[1]
        want = [[m1 * l1**2 / 3 + m2 * (r**2 + l2**2 / 12), 0], [0, m2]]
        assert np.allclose(crba(model, q), want, atol=1e-12)


@pytest.mark.parametrize("name", list(CHAINS))
def test_pinocchio_mass_matrix_equals_sum_over_links(name):
    """M = sum J_i^T G_i J_i (robodyn's link body Jacobians, link inertias in the CoM frames)
    equals Pinocchio's CRBA on the mapped model."""
    chain = CHAINS[name]()
    model = to_pinocchio(chain)
    for q in configurations(chain, 6, k=2):
        M = sum(rd.jacobian_body(chain, q, link=i).T @ chain.link_inertias[i]
                @ rd.jacobian_body(chain, q, link=i) for i in range(chain.n))
        assert np.allclose(crba(model, q), M, atol=1e-10 * max(1, np.abs(M).max()))


def test_pinocchio_inertias_at_the_com():
    """Each mapped body inertia, moved to the link CoM frame, is diag(I_c, m 1_3) again (after
    the (v, omega) -> (omega, v) reordering)."""
    chain = models.random_chain(7, np.random.default_rng(8), prismatic=0.3)
    model = to_pinocchio(chain)
    Ts = joint_frames(chain)
    for i in range(chain.n):
        X = pin.SE3(np.linalg.inv(Ts[i]) @ chain.link_homes[i])   # CoM frame in joint frame
        G = model.inertias[i + 1].se3Action(X.inverse()).matrix()    # expressed in the CoM frame
        P = np.block([[np.zeros((3, 3)), np.eye(3)], [np.eye(3), np.zeros((3, 3))]])
        assert np.allclose(P @ G @ P, chain.link_inertias[i], atol=1e-12)


def test_pinocchio_gravity_default_and_set():
    chain = models.planar_rr()
    assert np.allclose(to_pinocchio(chain).gravity.linear, 0)
    model = to_pinocchio(chain, gravity=[0, -9.81, 0])
    data = model.createData()
    g = pin.computeGeneralizedGravity(model, data, np.zeros(2))
    # rods along x, gravity along -y: torques m1 g l1/2 + m2 g (l1 + l2/2), m2 g l2/2
    assert np.allclose(g, [9.81 * (0.5 + 1.5), 9.81 * 0.5], atol=1e-12)


def test_to_pinocchio_reads_inertias_written_away_from_the_com():
    """A link frame offset from the CoM (L' = L X, G' = Ad_X^T G Ad_X: the same body) gives the
    same Pinocchio model dynamics: to_pinocchio extracts m, c and I_c from any spatial inertia."""
    chain = models.random_chain(6, np.random.default_rng(9), prismatic=0.3)
    rng = np.random.default_rng(10)
    Xs = [rd.homogeneous(rd.exp_so3(rng.normal(size=3)), rng.normal(scale=0.2, size=3))
          for _ in range(chain.n)]
    moved = rd.SerialChain.from_screws(
        chain.screws, chain.home, [L @ X for L, X in zip(chain.link_homes, Xs)],
        [rd.adjoint(X).T @ G @ rd.adjoint(X) for G, X in zip(chain.link_inertias, Xs)])
    for q in configurations(chain, 11, k=3):
        assert np.allclose(crba(to_pinocchio(moved), q), crba(to_pinocchio(chain), q), atol=1e-10)
