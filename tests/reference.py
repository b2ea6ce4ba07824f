"""Shared test helpers: one robodyn :class:`~robodyn.SerialChain`, rebuilt in the reference tools.

* :func:`to_pinocchio` -- the same chain as a ``pinocchio.Model`` (kinematics *and* dynamics),
  with an end-effector frame ``"ee"`` and one frame ``"link_<i>"`` per link centre of mass.
* :func:`to_modern_robotics` -- the (M, Slist, Blist) triple of the Modern Robotics library,
  whose twists are ordered (omega, v) like ours.
* :func:`swap_vw` -- Pinocchio orders twists (v, omega); this swaps the two halves of a
  6-vector or of the rows of a 6 x n Jacobian (it is its own inverse).

Construction (used by the kinematics tests here and by the dynamics cross-checks):

* Joint *i*'s frame at q = 0 has world pose ``T_i = [I, p_i]`` (identity orientation), with
  ``p_i = omega_i x v_i`` the point of the (revolute or helical) axis nearest the origin; a
  prismatic joint keeps the previous point (the origin for the first joint).
* Its motion is ``JointModelRevoluteUnaligned(omega)``, ``JointModelPrismaticUnaligned(v)`` or
  ``JointModelHelicalUnaligned(omega, pitch)`` (pitch = omega . v, translation per radian, the
  same convention as ``revolute_screw(axis, point, pitch)``), with placement
  ``T_{i-1}^{-1} T_i`` relative to the parent joint, so that ``oMi(q) = e^{[S_1]q_1} ...
  e^{[S_i]q_i} T_i``.
* Body *i*'s inertia comes from ``chain.link_homes[i]`` (``L_i``, CoM frame at q = 0) and
  ``chain.link_inertias[i]`` (6x6 in that frame, ordered (omega, v)): mass m, centre of mass
  ``c`` and rotational inertia about it are read off the 6x6 (it need not be diagonal), then
  written in joint frame *i*: ``pinocchio.Inertia(m, lever, R I_c R^T)`` with
  ``[R, lever] = T_i^{-1} L_i`` applied to the CoM.
* Gravity is ZERO by default (``model.gravity``); pass ``gravity=[0, 0, -9.81]`` (world frame,
  m/s^2) when a caller wants it.
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin

import robodyn as rd

__all__ = ["to_pinocchio", "to_pinocchio_vms", "pinocchio_poses", "pinocchio_link_poses", "pinocchio_jacobian",
           "to_modern_robotics", "swap_vw", "joint_frames", "numeric_chain"]


def swap_vw(x):
    """Swap the two 3-blocks of a 6-vector, or the row blocks of a 6 x n matrix:
    (v, omega) <-> (omega, v). Its own inverse."""
    x = np.asarray(x, dtype=float)
    if x.shape[0] != 6:
        raise ValueError(f"swap_vw: expected a 6-vector or a 6 x n matrix, got shape {x.shape}")
    return np.concatenate([x[3:6], x[0:3]], axis=0)


def numeric_chain(chain):
    """Refuse symbolic chains (Pinocchio and Modern Robotics are numeric)."""
    if chain.symbolic:
        raise TypeError("reference: expected a numeric SerialChain, got a symbolic one")
    return chain


def joint_frames(chain):
    """World poses ``T_i`` (4x4, identity rotation) of the Pinocchio joint frames at q = 0."""
    numeric_chain(chain)
    frames, point = [], np.zeros(3)
    for i in range(chain.n):
        S = np.asarray(chain.screws[:, i], dtype=float)
        if chain.joint_types[i] != "prismatic":
            point = np.cross(S[:3], S[3:])
        T = np.eye(4)
        T[:3, 3] = point
        frames.append(T)
    return frames


def _joint_model(kind, S):
    w, v = S[:3], S[3:]
    if kind == "revolute":
        return pin.JointModelRevoluteUnaligned(w)
    if kind == "prismatic":
        return pin.JointModelPrismaticUnaligned(v)
    if kind == "helical":
        return pin.JointModelHelicalUnaligned(w, float(w @ v))
    raise ValueError(f"to_pinocchio: unknown joint kind {kind!r}")


def _mass_com_inertia(G):
    """m, CoM c and rotational inertia about the CoM of a 6x6 spatial inertia (omega, v) in
    some frame: G = [[I_c - m[c]^2, m[c]], [m[c]^T, m 1]]."""
    G = np.asarray(G, dtype=float)
    m = G[3, 3]
    C = G[:3, 3:] / m
    c = np.array([C[2, 1], C[0, 2], C[1, 0]])
    I_c = G[:3, :3] + m * (C @ C)
    return m, c, I_c


def to_pinocchio(chain, gravity=(0.0, 0.0, 0.0)):
    """The chain as a ``pinocchio.Model``, with frames ``"ee"`` and ``"link_0"`` ..
    ``"link_<n-1>"`` (OP_FRAME) at the end effector and the link centre-of-mass frames.

    Gravity is zero unless given (3-vector in the world frame, m/s^2). Links without inertia
    data get a unit point mass at the joint (kinematics only).
    """
    numeric_chain(chain)
    model = pin.Model()
    model.name = chain.name
    Ts = joint_frames(chain)
    parent, prev = 0, np.eye(4)
    for i in range(chain.n):
        S = np.asarray(chain.screws[:, i], dtype=float)
        placement = pin.SE3(np.linalg.inv(prev) @ Ts[i])
        jid = model.addJoint(parent, _joint_model(chain.joint_types[i], S), placement,
                             f"joint_{i}")
        if chain.link_inertias is not None and chain.link_homes is not None:
            m, c_L, I_c = _mass_com_inertia(chain.link_inertias[i])
            X = np.linalg.inv(Ts[i]) @ np.asarray(chain.link_homes[i], dtype=float)
            R, p = X[:3, :3], X[:3, 3]
            inertia = pin.Inertia(m, R @ c_L + p, R @ I_c @ R.T)
        else:
            inertia = pin.Inertia(1.0, np.zeros(3), np.zeros((3, 3)))
        model.appendBodyToJoint(jid, inertia, pin.SE3.Identity())
        parent, prev = jid, Ts[i]
    for i in range(chain.n):
        if chain.link_homes is not None:
            X = np.linalg.inv(Ts[i]) @ np.asarray(chain.link_homes[i], dtype=float)
            model.addFrame(pin.Frame(f"link_{i}", i + 1, pin.SE3(X), pin.FrameType.OP_FRAME))
    Xee = np.linalg.inv(Ts[-1]) @ np.asarray(chain.home, dtype=float)
    model.addFrame(pin.Frame("ee", chain.n, pin.SE3(Xee), pin.FrameType.OP_FRAME))
    model.gravity = pin.Motion(np.asarray(gravity, dtype=float), np.zeros(3))
    return model


def to_pinocchio_vms(vms, gravity=(0.0, 0.0, 0.0)):
    """A :class:`robodyn.port_hamiltonian.VehicleManipulator` in Pinocchio: a ``JointModelFreeFlyer``
    (floating base) or ``JointModelPlanar`` (planar base) root carrying the base inertia, the
    arm's joints attached to it at ``mount @`` (the joint frames of :func:`to_pinocchio`).
    Pinocchio's base velocity is the base's body twist ordered (v, omega) -- (v_x, v_y,
    omega_z) for the planar root; its configuration holds (p, quaternion xyzw) -- (x, y,
    cos theta, sin theta). Gravity is zero unless given."""
    chain = vms.chain
    model = pin.Model()
    root = pin.JointModelFreeFlyer() if vms.nb == 6 else pin.JointModelPlanar()
    jb = model.addJoint(0, root, pin.SE3.Identity(), "base")
    m, c, Ic = _mass_com_inertia(vms.base_inertia)
    model.appendBodyToJoint(jb, pin.Inertia(m, c, Ic), pin.SE3.Identity())
    Ts = [vms.mount @ T for T in joint_frames(chain)]
    parent, prev = jb, np.eye(4)
    for i in range(chain.n):
        S = np.asarray(chain.screws[:, i], float)
        jid = model.addJoint(parent, _joint_model(chain.joint_types[i], S),
                             pin.SE3(np.linalg.inv(prev) @ Ts[i]), f"joint_{i}")
        m, cL, Ic = _mass_com_inertia(chain.link_inertias[i])
        X = np.linalg.inv(Ts[i]) @ vms.mount @ np.asarray(chain.link_homes[i], float)
        R, p = X[:3, :3], X[:3, 3]
        model.appendBodyToJoint(jid, pin.Inertia(m, R @ cL + p, R @ Ic @ R.T),
                                pin.SE3.Identity())
        parent, prev = jid, Ts[i]
    model.gravity = pin.Motion(np.asarray(gravity, float), np.zeros(3))
    return model


def pinocchio_poses(model, q):
    """Run forwardKinematics + updateFramePlacements; return the data (oMf[...] holds poses)."""
    data = model.createData()
    pin.forwardKinematics(model, data, np.asarray(q, dtype=float))
    pin.updateFramePlacements(model, data)
    return data


def pinocchio_ee_pose(model, q):
    """End-effector pose (4x4) from Pinocchio."""
    data = pinocchio_poses(model, q)
    return data.oMf[model.getFrameId("ee")].homogeneous


def pinocchio_link_poses(model, q):
    """Pinocchio's poses of the link CoM frames, ndarray(n, 4, 4), to compare with
    :func:`robodyn.link_poses`."""
    data = pinocchio_poses(model, q)
    n = model.njoints - 1
    return np.array([data.oMf[model.getFrameId(f"link_{i}")].homogeneous for i in range(n)])


def pinocchio_jacobian(model, q, frame="ee", body=False):
    """Frame Jacobian, 6 x n in OUR ordering (omega, v): LOCAL (body) when ``body`` else WORLD
    (space; Pinocchio's WORLD Jacobian is the spatial one, twists at the world origin)."""
    q = np.asarray(q, dtype=float)
    data = model.createData()
    pin.computeJointJacobians(model, data, q)
    pin.updateFramePlacements(model, data)
    ref = pin.ReferenceFrame.LOCAL if body else pin.ReferenceFrame.WORLD
    J = pin.getFrameJacobian(model, data, model.getFrameId(frame), ref)
    return swap_vw(J)


def to_modern_robotics(chain):
    """(M, Slist, Blist) as float arrays for ``modern_robotics`` (twists (omega, v))."""
    numeric_chain(chain)
    return (np.asarray(chain.home, dtype=float), np.asarray(chain.screws, dtype=float),
            np.asarray(chain.body_screws, dtype=float))
