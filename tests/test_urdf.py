"""robodyn.urdf and robodyn.trees against Pinocchio on the same files (issue 38).

Every URDF of example-robot-data that Pinocchio loads is loaded by robodyn or refused with a
URDFError saying why (both counted and printed); on every loaded robot the frame placements,
and on a representative set (chain, tree arm, quadrupeds, humanoids, hand) the mass matrix
(CRBA), RNEA and ABA, equal Pinocchio's at random states to 1e-9 relative, fixed and floating
base. The remaining robots' dynamics run in a test marked slow (still in CI).
"""
from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pytest

pin = pytest.importorskip("pinocchio")
pytest.importorskip("yourdfpy")

from robodyn import dynamics, rigid_motion, trees, urdf  # noqa: E402

FIX = Path(__file__).parent / "fixtures" / "urdf"
TOL = 1e-9
DYNAMICS_SET = ["ur5_robot", "panda", "solo12", "go1", "talos_reduced", "g1_29dof_rev_1_0",
                "allegro_right_hand", "double_pendulum_continuous", "tiago"]


def _paths():
    """Each URDF file of example-robot-data once, (name, path)."""
    names = {p: n for n, p in urdf.example_robots().items()}
    files = sorted((urdf._erd_root() / "robots").glob("*/*/*.urdf"))
    return [(names.get(str(p), p.stem), str(p)) for p in files]


def _pin(path, floating):
    return (pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer()) if floating
            else pin.buildModelFromUrdf(path))


class _Pair:
    """A robodyn model and the Pinocchio model of the same file, with the map between their
    coordinates: Pinocchio orders joints its own way, keeps continuous joints as (cos, sin),
    and orders the free-flyer's velocity (v, omega) where robodyn has (omega, v)."""

    def __init__(self, path, floating):
        self.m = urdf.load_urdf(path, floating_base=floating)
        self.pm = _pin(path, floating)
        self.d = self.pm.createData()
        perm = [3, 4, 5, 0, 1, 2] if floating else []
        self.joints = [self.pm.joints[self.pm.getJointId(nm)] for nm in self.m.joint_names]
        self.P = np.array(perm + [j.idx_v for j in self.joints])
        assert sorted(self.P) == list(range(self.pm.nv)), "every Pinocchio velocity mapped"

    def q(self, q, Hb):
        qp = pin.neutral(self.pm)
        for qi, j in zip(q, self.joints):
            if j.nq == 2:
                qp[j.idx_q:j.idx_q + 2] = np.cos(qi), np.sin(qi)
            else:
                qp[j.idx_q] = qi
        if self.m.floating:
            qp[:3], qp[3:7] = Hb[:3, 3], pin.Quaternion(Hb[:3, :3]).coeffs()
        return qp

    def v(self, nu):
        out = np.zeros(self.pm.nv)
        out[self.P] = nu
        return out

    def state(self, rng):
        q = rng.uniform(-1.5, 1.5, self.m.n)
        Hb = pin.SE3.Random().homogeneous if self.m.floating else None
        return q, Hb, self.q(q, Hb if Hb is not None else np.eye(4))


def _rel(a, b):
    return float(np.abs(np.asarray(a) - b).max() / max(np.abs(b).max(), 1e-300))


def _frames_error(pair, q, Hb, qp):
    pin.framesForwardKinematics(pair.pm, pair.d, qp)
    W = trees.body_poses(pair.m, q, Hb)
    err, count = 0.0, 0
    for link, (b, H) in pair.m.frames.items():
        if pair.pm.existFrame(link, pin.BODY):
            ref = pair.d.oMf[pair.pm.getFrameId(link, pin.BODY)].homogeneous
            err, count = max(err, _rel(W[b + 1] @ H, ref)), count + 1
    assert count == len(pair.m.frames), "Pinocchio has a body frame for every URDF link"
    return err


def _dynamics_errors(pair, rng):
    m, pm, d = pair.m, pair.pm, pair.d
    q, Hb, qp = pair.state(rng)
    nu, dnu, tau = rng.normal(size=(3, m.nv))
    Mp = pin.crba(pm, d, qp)
    Mp = np.triu(Mp) + np.triu(Mp, 1).T
    P = pair.P
    return {"M": _rel(trees.crba(m, q), Mp[np.ix_(P, P)]),
            "RNEA": _rel(trees.rnea(m, q, nu, dnu, Hb),
                         pin.rnea(pm, d, qp, pair.v(nu), pair.v(dnu))[P]),
            "ABA": _rel(trees.aba(m, q, nu, tau, Hb),
                        pin.aba(pm, d, qp, pair.v(nu), pair.v(tau))[P]),
            "frames": _frames_error(pair, q, Hb, qp)}


def test_every_example_robot_loads_or_is_refused_with_a_reason(capsys):
    rng = np.random.default_rng(38)
    loaded, refused, worst, not_pin = [], [], 0.0, []
    for name, path in _paths():
        try:
            _pin(path, False)
        except ValueError:                     # ur3.urdf: a fragment, no robot name
            not_pin.append(name)
            continue
        try:
            pair = _Pair(path, False)
        except urdf.URDFError as err:
            assert Path(path).name in str(err)
            refused.append((name, str(err)))
            continue
        loaded.append(name)
        for floating in (False, True):
            pair = pair if not floating else _Pair(path, True)
            q, Hb, qp = pair.state(rng)
            e = _frames_error(pair, q, Hb, qp)
            assert e < TOL, (name, floating, e)
            worst = max(worst, e)
    with capsys.disabled():
        print(f"\nexample-robot-data: of {len(loaded) + len(refused)} URDFs Pinocchio loads "
              f"(not: {not_pin}), robodyn loads {len(loaded)}, refuses {len(refused)}; frame "
              f"placements max rel. error {worst:.1e}")
        for name, why in refused:
            print(f"  refused {name}: {why}")
    assert len(loaded) >= 60 and len(loaded) + len(refused) + len(not_pin) == len(_paths())


def _check_dynamics(names, capsys):
    rng = np.random.default_rng(7)
    worst = {}
    paths = dict(_paths())
    for name in names:
        for floating in (False, True):
            pair = _Pair(paths[name], floating)
            for _ in range(2):
                for k, e in _dynamics_errors(pair, rng).items():
                    assert e < TOL, (name, floating, k, e)
                    worst[k] = max(worst.get(k, 0.0), e)
    with capsys.disabled():
        print(f"\n{len(names)} robots, fixed and floating base, max rel. error vs Pinocchio: "
              + ", ".join(f"{k} {v:.1e}" for k, v in worst.items()))


def test_dynamics_equal_pinocchio_on_a_representative_set(capsys):
    _check_dynamics(DYNAMICS_SET, capsys)


def test_numpy_algorithms_equal_pinocchio_too(capsys, monkeypatch):
    """The numpy path (lists, other dtypes, no compiler) is the same algorithm written again:
    it is held to Pinocchio as well, on a chain, a quadruped and a humanoid."""
    monkeypatch.setattr(dynamics._recursions, "ENGINE", "numpy")
    _check_dynamics(["ur5_robot", "solo12", "talos_reduced"], capsys)


@pytest.mark.slow
def test_dynamics_equal_pinocchio_on_every_loaded_robot(capsys):
    names = []
    for name, path in _paths():
        if name in DYNAMICS_SET:
            continue
        try:
            urdf.load_urdf(path)
        except urdf.URDFError:
            continue
        names.append(name)
    _check_dynamics(names, capsys)


def test_frame_jacobian_equals_pinocchio_world_jacobian():
    rng = np.random.default_rng(3)
    for name, floating in (("panda", False), ("solo12", True), ("talos_reduced", True)):
        pair = _Pair(urdf.example_robots()[name], floating)
        q, Hb, qp = pair.state(rng)
        pin.computeJointJacobians(pair.pm, pair.d, qp)
        pin.framesForwardKinematics(pair.pm, pair.d, qp)
        for link in list(pair.m.frames)[-3:]:
            Jp = pin.getFrameJacobian(pair.pm, pair.d, pair.pm.getFrameId(link, pin.BODY),
                                      pin.WORLD)[[3, 4, 5, 0, 1, 2]]
            J = trees.frame_jacobian(pair.m, q, link, Hb)
            assert _rel(J, Jp[:, pair.P]) < TOL, (name, link)
            assert _rel(trees.frame_pose(pair.m, q, link, Hb),
                        pair.d.oMf[pair.pm.getFrameId(link, pin.BODY)].homogeneous) < TOL


def test_panda_and_ur5_as_serial_chains_equal_pinocchio():
    """The serial engine and the chain's kinematics on the real arms (the fingers locked,
    checked against Pinocchio's buildReducedModel)."""
    rng = np.random.default_rng(5)
    path = urdf.example_robots()["panda"]
    fingers = ["panda_finger_joint1", "panda_finger_joint2"]
    lock_at = np.r_[np.zeros(7), 0.02, 0.03]
    arm = urdf.lock_joints(urdf.load_urdf(path), fingers, lock_at)
    chain = urdf.serial_chain(arm, tip="panda_hand")
    pm = pin.buildModelFromUrdf(path)
    qlock = pin.neutral(pm)
    qlock[pm.joints[pm.getJointId(fingers[0])].idx_q] = 0.02
    qlock[pm.joints[pm.getJointId(fingers[1])].idx_q] = 0.03
    pr = pin.buildReducedModel(pm, [pm.getJointId(f) for f in fingers], qlock)
    ur5p = urdf.example_robots()["ur5_robot"]
    ur5 = urdf.serial_chain(urdf.load_urdf(ur5p), tip="tool0")
    for c, pmod, tip in ((chain, pr, "panda_hand"), (ur5, pin.buildModelFromUrdf(ur5p), "tool0")):
        d = pmod.createData()
        q, qd, qdd = rng.uniform(-1, 1, (3, c.n))
        M = pin.crba(pmod, d, q)
        assert _rel(dynamics.crba(c, q), np.triu(M) + np.triu(M, 1).T) < TOL
        assert _rel(dynamics.inverse_dynamics(c, q, qd, qdd), pin.rnea(pmod, d, q, qd, qdd)) < TOL
        pin.framesForwardKinematics(pmod, d, q)
        assert _rel(rigid_motion.fk_space(c, q),
                    d.oMf[pmod.getFrameId(tip, pin.BODY)].homogeneous) < TOL


def test_fixed_joint_merging_by_the_parallel_axis_theorem():
    """welded.urdf: the body of 'hinge' is 'upper' and 'plate' (fixed joint, rotated inertial
    frames); its inertia about its origin, summed link by link with Steiner's theorem
    I_O = sum R I R^T + m (|c|^2 1 - c c^T), equals the model's; and Pinocchio agrees."""
    m = urdf.load_urdf(FIX / "welded.urdf")
    assert m.n == 2 and m.joint_types == ("revolute", "prismatic") and m.parents == (-1, 0)

    def rpy(r, p, y):
        return (rigid_motion.rotation([0, 0, 1], y) @ rigid_motion.rotation([0, 1, 0], p)
                @ rigid_motion.rotation([1, 0, 0], r))
    weld = rpy(0, 0, 1.2)
    parts = [(2.0, np.array([0.1, 0.2, 0.3]), rpy(0.3, -0.2, 0.5),
              np.array([[0.04, 0.001, 0], [0.001, 0.05, 0.002], [0, 0.002, 0.03]])),
             (0.5, np.array([0.3, 0, 0]) + weld @ [0, 0, -0.05], weld @ rpy(1.0, 0, 0),
              np.diag([0.002, 0.003, 0.004]))]
    mass = sum(p[0] for p in parts)
    com = sum(p[0] * p[1] for p in parts) / mass
    I_O = sum(R @ I @ R.T + mk * (c @ c * np.eye(3) - np.outer(c, c)) for mk, c, R, I in parts)
    G = m.inertias[0]
    assert np.isclose(G[3, 3], mass)
    assert np.allclose(G[:3, :3], I_O, atol=1e-14)
    assert np.allclose(G[:3, 3:], mass * rigid_motion.hat(com), atol=1e-14)
    pair = _Pair(str(FIX / "welded.urdf"), True)
    for e in _dynamics_errors(pair, np.random.default_rng(1)).values():
        assert e < TOL
    assert m.lower[1] == -0.2 and m.upper[1] == 0.3 and m.lower[0] == -urdf.NO_LIMIT


@pytest.mark.parametrize("file, words", [
    ("missing_inertial.urdf", ["joint 'shoulder'", "'arm'", "no <inertial>"]),
    ("loop.urdf", ["link 'b'", "two joints", "loop"]),
    ("negative_inertia.urdf", ["link 'arm'", "non-positive inertia"]),
    ("unknown_joint.urdf", ["joint 'slider'", "'planar'"]),
    ("unreadable_mesh.urdf", ["link 'arm'", "no_such_package", "cannot be read"]),
    ("not_xml.urdf", ["not_xml.urdf", "cannot be parsed"]),
])
def test_bad_files_are_refused_naming_the_culprit(file, words):
    with pytest.raises(urdf.URDFError) as err:
        urdf.load_urdf(FIX / file)
    for w in words:
        assert w in str(err.value), (w, str(err.value))


def test_unreadable_mesh_can_be_ignored_and_meshes_resolve():
    m = urdf.load_urdf(FIX / "unreadable_mesh.urdf", check_meshes=False)
    assert m.meshes[0][3].startswith("package://")
    panda = urdf.load_urdf("panda")
    assert panda.meshes and all(Path(f).is_file() for _, _, _, f, _, _ in panda.meshes)
    assert {k for *_, k in panda.meshes} == {"visual", "collision"}


def test_arguments_are_checked_and_models_pickle():
    ur5 = urdf.load_urdf("ur5")
    with pytest.raises(ValueError, match="did you mean"):
        urdf.load_urdf("ur")
    with pytest.raises(TypeError, match="floating_base"):
        urdf.load_urdf("ur5", floating_base="yes")
    with pytest.raises(ValueError, match="q .*6"):
        trees.crba(ur5, [0.0] * 5)
    with pytest.raises(ValueError, match="frame"):
        trees.frame_pose(ur5, [0.0] * 6, "no_link")
    with pytest.raises(ValueError, match="a tree"):
        urdf.serial_chain(urdf.load_urdf("panda"))
    with pytest.raises(ValueError, match="fixed base"):
        urdf.serial_chain(urdf.load_urdf("ur5", floating_base=True))
    back = pickle.loads(pickle.dumps(ur5))
    q = np.linspace(-1, 1, 6)
    assert np.array_equal(trees.crba(back, q), trees.crba(ur5, q))


@pytest.mark.parametrize("engine", ["auto", "numpy"])
def test_derivatives_equal_pinocchio(capsys, monkeypatch, engine):
    """trees.rnea_derivatives / aba_derivatives against computeRNEADerivatives /
    computeABADerivatives on the same files, fixed and floating base, compiled and numpy."""
    monkeypatch.setattr(dynamics._recursions, "ENGINE", engine)
    rng = np.random.default_rng(2)
    worst = 0.0
    for name in ("ur5_robot", "panda", "solo12", "talos_reduced"):
        for floating in (False, True):
            pair = _Pair(urdf.example_robots()[name], floating)
            m, pm, d, P = pair.m, pair.pm, pair.d, np.ix_(pair.P, pair.P)
            q, Hb, qp = pair.state(rng)
            nu, dnu, tau = rng.normal(size=(3, m.nv))
            dq, dqd = trees.rnea_derivatives(m, q, nu, dnu, Hb)
            pin.computeRNEADerivatives(pm, d, qp, pair.v(nu), pair.v(dnu))
            errs = [_rel(dq, d.dtau_dq[P]), _rel(dqd, d.dtau_dv[P])]
            da, dv, Minv = trees.aba_derivatives(m, q, nu, tau, Hb)
            pin.computeABADerivatives(pm, d, qp, pair.v(nu), pair.v(tau))
            Mp = np.triu(d.Minv) + np.triu(d.Minv, 1).T
            errs += [_rel(da, d.ddq_dq[P]), _rel(dv, d.ddq_dv[P]), _rel(Minv, Mp[P])]
            assert max(errs) < TOL, (name, floating, errs)
            worst = max(worst, *errs)
    with capsys.disabled():
        print(f"\nRNEA/ABA derivatives ({engine}) vs Pinocchio: max rel. error {worst:.1e}")


def test_symbolic_equations_of_a_tree_equal_pinocchio():
    """trees.equations (M from the tree's body Jacobians, C from its Christoffel symbols, G from
    the potential) of Solo (8 joints, four legs: a tree) and of welded.urdf (a fixed joint, a
    prismatic one), evaluated at random states, against pin.aba on the same files."""
    rng = np.random.default_rng(11)
    for path in (urdf.example_robots()["solo"], str(FIX / "welded.urdf")):
        pair = _Pair(path, False)
        eom = trees.equations(pair.m)
        num = eom.numeric()
        for _ in range(3):
            q, _, qp = pair.state(rng)
            qd, tau = rng.normal(size=(2, pair.m.n))
            ref = pin.aba(pair.pm, pair.d, qp, pair.v(qd), pair.v(tau))[pair.P]
            assert _rel(num.accelerations(q, qd, tau=tau), ref) < TOL
    # a floating base: tests/test_tree_equations.py (Lagrange by Boltzmann--Hamel, and Kane)
