r"""Rigid bodies on SE(3), joints as Lie subgroups, and vehicle--manipulator systems (Part VI).

The model of R. Rashad, *The port-Hamiltonian structure of vehicle manipulator systems* (2026),
made concrete: a base body whose pose :math:`H = H^s_b` lives in a subgroup :math:`G_b` of
SE(3) (the whole group for a floating base, SE(2) for a planar one), carrying a
:class:`~robodyn.rigid_motion.SerialChain` whose space frame sits at ``mount`` in the base frame.

Conventions (those of :mod:`robodyn.rigid_motion`): twists (omega, v), wrenches (m, f); the base
velocity ``v`` is the base's **body** twist :math:`\mathcal V^{b,s}_b` written in the base's
subalgebra coordinates (6 numbers for a floating base, (omega_z, v_x, v_y) for a planar one),
the base wrench ``w`` is the matching body wrench. Everything else is a 1-D float array.

* :class:`Subgroup` -- a joint as a Lie subgroup: its subalgebra basis S (6 x k), the
  configuration map (the exponential), the coadjoint operator :math:`\widetilde{ad}_p`.
* :func:`euler_poincare`, :func:`rigid_body_step` -- one rigid body:
  :math:`\mathcal I\dot{\mathcal V} = ad_{\mathcal V}^T\mathcal I\mathcal V + \mathcal W` (paper §2.1),
  integrated on SE(3) with exponential-map (Munthe-Kaas) steps.
* :class:`VehicleManipulator` -- the model value; ``mass_matrix(q)`` the locked mass matrix
  :math:`\mathcal M(q)` of (ph-21) and its blocks, ``bias``/``forcing`` by Newton--Euler,
  ``link_poses``, ``mass_matrix_derivatives`` (the exact :math:`\partial\mathcal M/\partial q_k`).
* :meth:`VehicleManipulator.from_tree` -- the same model for a floating base carrying a
  kinematic **tree** read from a URDF (a quadruped, a humanoid): the chain's formulas with the
  path from the base in place of "the joints before" (private ``robodyn.port_hamiltonian._vehicle_tree``), the
  compiled tree engine of :mod:`robodyn.trees` in place of ``_engine.c``.
* :class:`~robodyn.port_hamiltonian.StandardForm` -- the numeric equations (ph-21) in the shared interface of
  :mod:`robodyn.equations`.

Speed: the mass matrix, the velocity and gravity terms, inverse dynamics, the accelerations and
``StandardForm.rhs`` run in O(n) in the compiled engine of :mod:`robodyn.dynamics`
(``_engine.c``: the articulated-body algorithm with the base as the root body, Newton--Euler
and composite bodies in {b}) when a C compiler works and the arrays are clean float64; the
numpy code below is the reference and the fallback (``ROBODYN_ENGINE=numpy``), and checks
and converts every other input. ``bench/bench_port_hamiltonian.py`` measures both against
Pinocchio's free-flyer model. Every public callable checks all its arguments at its top under
its own name and returns finite numbers or raises ``name: result``; on the integrator's hot
path (``StandardForm.rhs`` and ``accelerations`` with clean float64 arrays) those checks are
done in plain floats, a microsecond or two, instead of by the general checks.

:class:`Subgroup`, ``SUBGROUPS``, :func:`coadjoint`, :func:`euler_poincare`,
:func:`dexp_inverse`, :func:`rigid_body_step`, :func:`check_pose` and :func:`pose_error` are
written in the private ``robodyn.port_hamiltonian._rigid_body`` (this module stays under 1200 lines) and are
this module's names.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import partial

import numpy as np

from .. import _value_checks
from ..dynamics import _recursions as _dynamics
from ..dynamics._recursions import _ad6, _engine, _hat_np, coriolis_matrix
from ..rigid_motion._kinematics import SerialChain, _check_spatial_inertia
# a base carrying a kinematic tree (VehicleManipulator.from_tree): its numbers, its engine
from . import _vehicle_tree as _tree
from ..trees import _fast as _tree_engine
from ..urdf import RobotModel
# the first half (rigid bodies, subgroups) lives in _rigid_body; its public names are this
# module's, and port_hamiltonian takes the shared helpers from here
from ._rigid_body import (  # noqa: F401
    SUBGROUPS, Subgroup, check_pose, coadjoint, dexp_inverse, euler_poincare, pose_error,
    rigid_body_step, _check_pose, _coadjoint, _coadjoint_apply, _dposv, _finite, _hat_c, _plain,
    _vec)

__all__ = ["Subgroup", "SUBGROUPS", "coadjoint", "euler_poincare", "dexp_inverse",
           "rigid_body_step", "check_pose", "pose_error", "VehicleManipulator", "StandardForm",
           "PlanarCoordinates", "planar_virtual_chain", "mechanical_energy"]


# --------------------------------------------------------------------------
# the vehicle-manipulator model
# --------------------------------------------------------------------------


_I3, _I4, _EYE6 = np.eye(3), np.eye(4), np.eye(6)


def _exp_screw(S, th, W=None):
    """exp([S] th) for a unit-angular or prismatic screw S (float) and a float or complex th;
    ``W`` = [omega] and its square may be passed precomputed as a pair."""
    w, v = S[:3], S[3:]
    E = _I4.astype(complex) if np.iscomplexobj(th) else _I4.copy()
    if w @ w < 0.5:
        E[:3, 3] = v * th
        return E
    W, W2 = (_hat_np(w), None) if W is None else W
    W2 = W @ W if W2 is None else W2
    s, c = np.sin(th), np.cos(th)
    E[:3, :3] = _I3 + s * W + (1 - c) * W2
    E[:3, 3] = th * v + ((1 - c) * W + (th - s) * W2) @ v
    return E


def _adj(T):
    """Ad_T, float or complex."""
    R, p = T[:3, :3], T[:3, 3]
    A = np.zeros((6, 6), dtype=T.dtype)
    A[:3, :3] = R
    A[3:, 3:] = R
    A[3:, :3] = _hat_c(p) @ R
    return A


def _adj_inv(T):
    """Ad_{T^{-1}}, float or complex (plain transposes: complex-step safe)."""
    R, p = T[:3, :3], T[:3, 3]
    A = np.zeros((6, 6), dtype=T.dtype)
    A[:3, :3] = R.T
    A[3:, 3:] = R.T
    A[3:, :3] = -R.T @ _hat_c(p)
    return A


@dataclass(frozen=True)
class _Frames:
    """Kinematic quantities at one arm configuration, all in the base frame {b}."""
    P: np.ndarray      # (n+1, 4, 4) H^b of joint i's parent frame (P[0] = mount) and last link
    s: np.ndarray      # (n, 6) joint screw axes
    T: np.ndarray      # (n, 4, 4) link centre-of-mass poses
    I: np.ndarray      # (n, 6, 6) link spatial inertias
    Ic: np.ndarray     # (n, 6, 6) composite inertias sum_{i >= k} I_i


_CHECKED = []          # non-empty while from_chain builds a system from checked data


@dataclass(frozen=True, eq=False)
class VehicleManipulator:
    r"""A vehicle--manipulator system: a base body in a subgroup of SE(3) carrying a serial arm,
    an immutable value (paper §2.3).

    Build it with :meth:`from_chain`, or with :meth:`from_tree` for a floating base carrying a
    kinematic tree read from a URDF (then ``chain`` is None and ``tree`` the
    :class:`~robodyn.urdf.RobotModel`; the end-effector methods, a chain's, are refused).
    Attributes: ``chain`` (the arm, a
    :class:`~robodyn.rigid_motion.SerialChain` with inertias), ``base_inertia`` (6x6 spatial
    inertia of the base in its own frame {b}, (omega, v) order), ``base_joint`` (a
    :class:`Subgroup`: floating or planar), ``mount`` (4x4 pose of the arm's space frame in
    {b}), ``name``; ``nb`` (3 or 6), ``n`` (arm joints), ``dof`` = nb + n.

    Examples
    --------
    >>> from robodyn.models import planar_rr
    >>> from robodyn import spatial_inertia
    >>> vms = VehicleManipulator.from_chain(planar_rr(), spatial_inertia(10.0, [1, 1, 1]),
    ...                                     base_joint="planar")
    >>> vms.dof, vms.mass_matrix([0.1, 0.2]).shape
    (5, (5, 5))
    """

    chain: SerialChain
    base_inertia: np.ndarray
    base_joint: Subgroup
    mount: np.ndarray
    name: str = "VMS"
    _cache: dict = field(default_factory=dict, repr=False, compare=False)
    tree: object = None

    @classmethod
    def from_tree(cls, model, name=None):
        r"""A VMS whose floating base carries a kinematic **tree**: a
        :class:`~robodyn.urdf.RobotModel` loaded with ``floating_base=True`` (a quadruped, a
        humanoid). The base is the model's base body (its inertia ``model.base_inertia``, its
        frame {b} the URDF root link's), on SE(3); the joints are the tree's, in its order; a
        serial chain is the tree with ``parents = (-1, 0, 1, ...)``. The mass matrix, its
        derivatives, the velocity terms and the forms of :mod:`robodyn.port_hamiltonian` are
        those of the chain with the path from the base in place of "the joints before"
        (private ``robodyn.port_hamiltonian._vehicle_tree``); the compiled tree engine of
        :mod:`robodyn.trees` runs the composite bodies, Newton--Euler, the articulated bodies
        and the co-energy gradient (:math:`\partial T/\partial q_k = \tfrac12\nu^T
        \partial_k(\mathcal M\nu)`, from the derivatives of the RNEA) when it is built.

        Raises TypeError for a model that is not a RobotModel, ValueError for a fixed-base one.

        >>> from robodyn.urdf import load_urdf
        >>> solo = VehicleManipulator.from_tree(load_urdf("solo12", floating_base=True))
        >>> solo.nb, solo.n, solo.mass_matrix(np.zeros(12)).shape
        (6, 12, (18, 18))
        """
        fname = "VehicleManipulator.from_tree"
        if not isinstance(model, RobotModel):
            raise _value_checks.error(f"{fname}: model", "a RobotModel (robodyn.urdf.load_urdf)",
                                model, exc=TypeError)
        if not model.floating:
            raise _value_checks.refusal(
                ValueError, f"{fname}: model: expected a model with a floating base, got the "
                            f"fixed-base {model.name!r}; load it with "
                            f"load_urdf(..., floating_base=True)")
        name = name or f"floating base + {model.name}"
        if not isinstance(name, str):
            raise _value_checks.error(f"{fname}: name", "a string", name, exc=TypeError)
        _check_spatial_inertia(model.base_inertia, f"{fname}: model.base_inertia")
        G = np.array(model.base_inertia, dtype=float)
        G.setflags(write=False)
        mount = np.eye(4)
        mount.setflags(write=False)
        _CHECKED.append(True)
        try:
            return cls(None, G, SUBGROUPS["floating"], mount, name, tree=model)
        finally:
            _CHECKED.pop()

    def __getstate__(self):
        """Pickled without its caches (the compiled engine's handles): rebuilt on use, so the
        copy gives the same numbers."""
        state = dict(self.__dict__)
        state["_cache"] = {}
        return state

    @classmethod
    def from_chain(cls, chain, base_inertia, base_joint="floating", mount=None, name=None):
        """A VMS from an arm, the base's spatial inertia (6x6 in {b}), the base joint
        (``"floating"`` or ``"planar"``) and the arm's mount pose in {b} (identity by default).

        Raises TypeError for a chain that is not a numeric SerialChain with inertias, or a
        base_joint that is not a string; ValueError for an unknown base joint, a base inertia
        that no rigid body has (wrong shape, asymmetric, non-positive mass, centre-of-mass
        block not skew, principal moments breaking the triangle inequality), or a mount that
        is not a 4x4 rigid motion.
        """
        fname = "VehicleManipulator.from_chain"
        if not isinstance(chain, SerialChain):
            raise _value_checks.refusal(
                TypeError, f"{fname}: chain: expected a SerialChain, got {_value_checks._describe(chain)}")
        if chain.symbolic:
            raise _value_checks.refusal(
                TypeError, f"{fname}: chain: expected a numeric SerialChain, got a symbolic one")
        if chain.link_inertias is None or chain.link_homes is None:
            raise _value_checks.refusal(
                ValueError, f"{fname}: chain: {chain!r} has no link inertias; build it with "
                            f"link_homes=... and link_inertias=...")
        if not isinstance(base_joint, str):
            raise _value_checks.refusal(
                TypeError, f"{fname}: base_joint: expected 'floating' or 'planar', got "
                           f"{_value_checks._describe(base_joint)}")
        if base_joint not in ("floating", "planar"):
            raise _value_checks.refusal(
                ValueError, f"{fname}: base_joint: expected 'floating' or 'planar', got "
                            f"{base_joint!r}")
        G = _check_spatial_inertia(base_inertia, f"{fname}: base_inertia")
        if _value_checks.is_symbolic(G):
            raise _value_checks.refusal(
                TypeError, f"{fname}: base_inertia: expected numbers, got sympy expressions")
        G = np.array(G, dtype=float)
        G.setflags(write=False)
        if mount is None:
            mount = np.eye(4)
        elif np.shape(mount) != (4, 4):
            raise _value_checks.refusal(
                ValueError, f"{fname}: mount: expected a 4x4 pose of the arm's space frame in "
                            f"the base frame, got shape {np.shape(mount)}")
        mount = np.array(_check_pose(mount, f"{fname}: mount"), dtype=float)
        mount.setflags(write=False)
        name = name or f"{base_joint} base + {chain.name}"
        if not isinstance(name, str):
            raise _value_checks.error(f"{fname}: name", "a string", name, exc=TypeError)
        _CHECKED.append(True)
        try:
            return cls(chain, G, SUBGROUPS[base_joint], mount, name)
        finally:
            _CHECKED.pop()

    def __post_init__(self):
        """Calling the class directly runs :meth:`from_chain`'s checks (one boundary)."""
        if _CHECKED:
            return
        if self.tree is not None:
            ref = VehicleManipulator.from_tree(self.tree, self.name)
            for f in ("base_inertia", "base_joint", "mount"):
                object.__setattr__(self, f, getattr(ref, f))
            return
        joint = self.base_joint
        if isinstance(joint, Subgroup):
            joint = joint.name
        ref = VehicleManipulator.from_chain(self.chain, self.base_inertia, joint, self.mount,
                                            self.name)
        for f in ("base_inertia", "base_joint", "mount"):
            object.__setattr__(self, f, getattr(ref, f))

    # -- sizes ---------------------------------------------------------------
    @property
    def nb(self) -> int:
        return self.base_joint.dim

    @property
    def n(self) -> int:
        return self.chain.n if self.tree is None else self.tree.n

    @property
    def dof(self) -> int:
        return self.nb + self.n

    def __repr__(self):
        tree = "" if self.tree is None else f", tree={self.tree.name!r}"
        return f"VehicleManipulator({self.name!r}, nb={self.nb}, n={self.n}{tree})"

    # -- argument checks -------------------------------------------------------
    # (``fname`` is the method the user called: every message names it and the argument)
    def _q(self, q, fname, what="q"):
        return _vec(q, self.n, f"{self.name}.{fname}: {what} ({self.n} joint values)")

    def _v(self, v, fname, what="v"):
        return _vec(v, self.nb, f"{self.name}.{fname}: {what} ({self.nb} base velocity "
                                f"numbers, (omega, v) body twist)")

    def _g(self, g, fname):
        return _vec(g, 3, f"{self.name}.{fname}: gravity (3 numbers, space frame, m/s^2)")

    def _fin(self, out, fname):
        return _finite(out, f"{self.name}.{fname}")

    def _data(self):
        c = self._cache
        if "S" not in c:
            ch = self.chain
            c["S"] = np.asarray(ch.screws, dtype=float).T.copy()
            c["L"] = np.array(ch.link_homes, dtype=float)
            c["G"] = np.array(ch.link_inertias, dtype=float)
            c["home"] = np.asarray(ch.home, dtype=float)
        return c["S"], c["L"], c["G"]

    def _engine_data(self, full=False):
        """The compiled engine's model: the arm's *mounted* chain (screws and homes carried
        into {b} by the mount, so the engine's space frame is {b}) as (basis, K, mass, home),
        then the base basis S_b (6 x nb; the identity with ``full``) and inertia. Cached."""
        c = self._cache
        key = "engine:full" if full else "engine"
        if key not in c:
            if "engine:chain" not in c:
                from ..dynamics._recursions import _ChainData
                from ..rigid_motion._kinematics import adjoint
                ch, M = self.chain, self.mount
                mounted = SerialChain.from_screws(
                    adjoint(M) @ np.asarray(ch.screws, dtype=float),
                    M @ np.asarray(ch.home, dtype=float),
                    [M @ np.asarray(L, dtype=float) for L in ch.link_homes],
                    [np.asarray(G, dtype=float) for G in ch.link_inertias], name=ch.name)
                d = _ChainData.of(mounted)
                c["engine:chain"] = (d.basis, d.K, d.mass, d.home)
            S = np.eye(6) if full else np.ascontiguousarray(self.base_joint.basis, dtype=float)
            c[key] = c["engine:chain"] + (S, np.ascontiguousarray(self.base_inertia))
        return c[key]

    def _compiled(self, name, *args, full=False):
        """The compiled engine's ``name`` (``vms_crba``, ``vms_rnea``, ``vms_aba``, ``vms_rhs``,
        ``vms_hamiltonian``; O(n), see ``_engine.c``) on this model, or None: no engine, or
        arrays that are not clean float64 vectors of the right sizes, or a mass matrix that is
        not positive definite (the numpy path then checks, converts, computes or raises).

        The engine takes an array only when the checks of the numpy path (``_value_checks.vector``:
        a plain 1-D float64 array of the right length, finite numbers) would pass it unchanged,
        so a caller may try it before those checks, as :mod:`robodyn.dynamics` does: it
        refuses nothing they accept and accepts nothing they refuse."""
        if self.tree is not None:
            return self._tree_compiled(name, *args)
        eng = _engine()
        if eng is None:
            return None
        f = self._cache.get((name, full))
        if f is None or f.func.__self__ is not eng:
            data = self._engine_data(full)      # the chain enters once, as the engine's handle
            f = self._cache[(name, full)] = partial(getattr(eng, name), eng.chain(*data[:4]),
                                                    *data[4:])
        return f(*args)

    def _tree_compiled(self, name, *args):
        """:meth:`_compiled` for a tree: the compiled tree engine of :mod:`robodyn.trees` on
        clean float64 arrays (the co-energy gradient by numpy in O(n) without the engine), or
        None."""
        m, n = self.tree, self.n
        z3 = np.zeros(3)
        if name == "vms_rhs":
            x, w, tau, g = args
            if not (_plain(x, 18 + 2 * n) and _plain(w, 6) and _plain(tau, n)
                    and (g is None or _plain(g, 3))):
                return None
            H = _pose_of(x)
            gb = z3 if g is None else H[:3, :3].T @ g
            acc = _tree_engine("aba", m, x[18:18 + n], np.concatenate([x[12:18], x[18 + n:]]),
                        np.concatenate([w, tau]), _I4, gb)
            return None if acc is None else np.concatenate(
                [_pose_rate(H, x[12:18]), acc[:6], x[18 + n:], acc[6:]])
        q = args[0]
        if not _plain(q, n):
            return None
        if name == "vms_crba":
            return _tree_engine("crba", m, q)
        if name == "vms_hamiltonian":
            return self._tree_hamiltonian(q, args[1])
        v, qd, a1, a2, gb = args[1:]
        if not (_plain(v, 6) and _plain(qd, n) and all(
                e is None or _plain(e, k) for e, k in ((a1, 6), (a2, n), (gb, 3)))):
            return None
        nu = np.concatenate([v, qd])
        u = np.concatenate([np.zeros(6) if a1 is None else a1, np.zeros(n) if a2 is None else a2])
        # vms_aba: (q, v, qd, w, tau, gb); vms_rnea: (q, v, qd, vd, qdd, gb)
        return _tree_engine("aba" if name == "vms_aba" else "rnea", m, q, nu, u, _I4,
                     z3 if gb is None else gb)

    def _tree_hamiltonian(self, q, mom):
        r"""(H, dH/dy) of (ph-49) at a clean q and momenta (p, pi) of a tree: nu by Cholesky
        of the composite-body M; :math:`\partial H/\partial q = -\partial T/\partial q`
        with :math:`\partial T/\partial q_k = \tfrac12\nu^T\partial_k(\mathcal M\nu)`, the
        RNEA's q-derivative at zero velocity and acceleration nu (compiled), or in numpy
        :math:`h_k^Tad_{t_k}s_k` (``_vehicle_tree.cotangent``); None where M is singular."""
        m, n = self.tree, self.n
        if not _plain(mom, 6 + n):
            return None
        M = _tree_engine("crba", m, q)
        F = None
        if M is None:                   # no engine: numpy, O(n) after M
            F = _tree.frames(m, q)
            M = _tree.mass6(m, self.base_inertia, F)
        _, nu, info = _dposv(M, mom)
        if info != 0:
            return None
        d = None if F is not None else _tree_engine("rnea_derivatives", m, q, np.zeros(6 + n),
                                                    nu, _I4, np.zeros(3))
        if d is not None:
            dT = 0.5 * (nu @ d[0][:, 6:])
        else:
            dT = _tree.cotangent(m, _tree.frames(m, q) if F is None else F, nu[:6], nu[6:])
        return 0.5 * float(mom @ nu), np.concatenate([nu[:6], -dT, nu[6:]])

    def _mass6_at(self, q):
        """The unprojected (6 + n) mass matrix at a checked q."""
        M = self._compiled("vms_crba", q, full=True)
        return self._mass6(self._frames(q)) if M is None else M

    def _frames(self, q):
        """Kinematics at q (float or complex array of length n), in the base frame."""
        if self.tree is not None:
            return _tree.frames(self.tree, q)
        S, L, G = self._data()
        hats = self._cache.setdefault("hats", [(_hat_np(Si[:3]), _hat_np(Si[:3]) @ _hat_np(Si[:3]))
                                               for Si in S])
        n = self.n
        dt = complex if np.iscomplexobj(q) else float
        P = np.empty((n + 1, 4, 4), dtype=dt)
        s = np.empty((n, 6), dtype=dt)
        P[0] = self.mount
        for i in range(n):
            R, p = P[i, :3, :3], P[i, :3, 3]
            w = R @ S[i, :3]
            s[i, :3] = w
            s[i, 3:] = R @ S[i, 3:] + np.array([p[1] * w[2] - p[2] * w[1], p[2] * w[0] - p[0] * w[2],
                                                 p[0] * w[1] - p[1] * w[0]])
            P[i + 1] = P[i] @ _exp_screw(S[i], q[i], hats[i])
        T = P[1:] @ L
        # I^b_i = Ad_{T^-1}^T G_i Ad_{T^-1}, for all links at once
        R, p = T[:, :3, :3], T[:, :3, 3]
        X = np.zeros((n, 6, 6), dtype=dt)
        Rt = np.transpose(R, (0, 2, 1))
        X[:, :3, :3] = Rt
        X[:, 3:, 3:] = Rt
        ph_ = np.zeros((n, 3, 3), dtype=dt)
        ph_[:, 0, 1], ph_[:, 0, 2], ph_[:, 1, 2] = -p[:, 2], p[:, 1], -p[:, 0]
        ph_ = ph_ - np.transpose(ph_, (0, 2, 1))
        X[:, 3:, :3] = -Rt @ ph_
        I = np.transpose(X, (0, 2, 1)) @ G @ X
        Ic = np.cumsum(I[::-1], axis=0)[::-1]
        return _Frames(P, s, T, I, Ic)

    # -- kinematics (paper §2.3.1-2.3.2) ------------------------------------
    def link_poses(self, q, base_pose=None):
        r"""Poses of the link centres of mass, :math:`H^s_i = H^s_b H^b_i(q)` (paper §2.3.1),
        ndarray(n, 4, 4); in the base frame when ``base_pose`` is None. For a tree
        (:meth:`from_tree`): the bodies' URDF frames, whose inertias the model gives."""
        q = self._q(q, "link_poses")
        T = self._frames(q).T
        if base_pose is None:
            return T
        H = _check_pose(base_pose, f"{self.name}.link_poses: base_pose")
        return self._fin(H @ T, "link_poses")

    def _chain_only(self, fname):
        """Refuse a chain's own question (its end effector) for a tree."""
        if self.tree is not None:
            raise _value_checks.refusal(
                ValueError, f"{self.name}.{fname}: self: expected a vehicle carrying a chain (one "
                            f"end effector), got one carrying the tree {self.tree.name!r}; use "
                            f"robodyn.trees.frame_pose or frame_jacobian with a link name")

    def end_effector_pose(self, q, base_pose=None):
        """Pose of the end-effector frame (the chain's home frame carried along), 4x4."""
        self._chain_only("end_effector_pose")
        q = self._q(q, "end_effector_pose")
        F = self._frames(q)
        E = F.P[-1] @ self._cache["home"]
        if base_pose is None:
            return E
        return self._fin(_check_pose(base_pose, f"{self.name}.end_effector_pose: base_pose")
                         @ E, "end_effector_pose")

    def joint_points(self, q, base_pose=None):
        """Points to draw the robot: base origin, mount, each joint-frame origin and the end
        effector, ndarray(n + 3, 3), in the space frame when ``base_pose`` is given."""
        self._chain_only("joint_points")
        q = self._q(q, "joint_points")
        F = self._frames(q)
        pts = [np.zeros(3), F.P[0][:3, 3]]
        S, L, _ = self._data()
        for i in range(self.n):
            w, v = F.s[i][:3], F.s[i][3:]
            # the point of joint i's axis nearest the parent frame origin
            o = F.P[i][:3, 3]
            if w @ w > 0.5:
                p0 = np.cross(w, v)                       # nearest the base origin
                o = p0 + w * (w @ (o - p0))
            pts.append(o)
        pts.append((F.P[-1] @ self._cache["home"])[:3, 3])
        pts = np.array(pts)
        if base_pose is not None:
            H = _check_pose(base_pose, f"{self.name}.joint_points: base_pose")
            pts = self._fin(pts @ H[:3, :3].T + H[:3, 3], "joint_points")
        return pts

    def link_twists(self, q, v, qd):
        r"""Body twists of the link centre-of-mass frames (paper §2.3.2),
        :math:`\mathcal V^{i,s}_i = Ad_{H^i_b}\,S_b v + J^{i,b}_i(q)\dot q`, ndarray(n, 6)."""
        fname = "link_twists"
        q, v, qd = self._q(q, fname), self._v(v, fname), self._q(qd, fname, "qd")
        return self._fin(self._link_twists(q, v, qd), fname)

    def _link_twists(self, q, v, qd):
        F = self._frames(q)
        if self.tree is not None:       # summed along each body's path from the base
            t = _tree.twists(self.tree, F, self.base_joint.basis @ v, qd)[1:]
        else:
            t = self.base_joint.basis @ v + np.cumsum(F.s * qd[:, None], axis=0)
        return np.array([_adj_inv(F.T[i]) @ t[i] for i in range(self.n)])

    def kinetic_energy(self, q, v, qd):
        r"""Kinetic energy (paper §2.3.3): the base's plus every link's
        :math:`\tfrac12\mathcal V_i^T\mathcal I_i\mathcal V_i` (J), summed body by body."""
        fname = "kinetic_energy"
        q, v, qd = self._q(q, fname), self._v(v, fname), self._q(qd, fname, "qd")
        V = self._link_twists(q, v, qd)
        G = self._data()[2] if self.tree is None else self.tree.inertias
        vb = self.base_joint.basis @ v
        return self._fin(float(0.5 * vb @ self.base_inertia @ vb
                               + 0.5 * np.einsum("ni,nij,nj->", V, G, V)), fname)

    # -- the locked mass matrix (ph-21) -------------------------------------
    def _mass6(self, F):
        if self.tree is not None:
            return _tree.mass6(self.tree, self.base_inertia, F)
        n = self.n
        M = np.zeros((6 + n, 6 + n), dtype=F.s.dtype)
        M[:6, :6] = self.base_inertia + F.Ic[0]
        B = np.einsum("kij,kj->ki", F.Ic, F.s)          # B_k = I^c_k s_k
        M[:6, 6:] = B.T
        Gm = F.s @ B.T                                   # Gm[j, k] = s_j . I^c_k s_k, right for j <= k
        M[6:, 6:] = np.triu(Gm) + np.triu(Gm, 1).T
        M[6:, :6] = B
        return M

    def _project(self, M6):
        S = self.base_joint.basis
        if self.nb == 6:
            return M6
        B = np.zeros((6 + self.n, self.dof))
        B[:6, :self.nb] = S
        B[6:, self.nb:] = np.eye(self.n)
        return B.T @ M6 @ B

    def mass_matrix(self, q):
        r"""The locked mass matrix :math:`\mathcal M(q)` of (ph-21), (nb + n) x (nb + n),
        ordered (base body twist v, :math:`\dot q`):
        :math:`E_{kin} = \tfrac12(v,\dot q)^T\mathcal M(q)(v,\dot q)`.

        Built by composite rigid bodies in the base frame: :math:`M_b = \mathcal I_b +
        \sum_i\mathcal I^b_i`, :math:`M_{bm}[:,k] = \mathcal I^c_k s_k`,
        :math:`[M_m]_{jk} = s_j^T\mathcal I^c_{\max(j,k)}s_k` (:math:`s_k` the joint axes and
        :math:`\mathcal I^c_k = \sum_{i\ge k}\mathcal I^b_i` the composite inertias, all in {b}).
        """
        M = self._compiled("vms_crba", q)       # clean float64 q: the engine's own checks
        return self._mass_matrix(self._q(q, "mass_matrix")) if M is None else M

    def _mass_matrix(self, q):
        """:meth:`mass_matrix` at a checked q."""
        M = self._compiled("vms_crba", q)
        return self._project(self._mass6(self._frames(q))) if M is None else M

    def mass_blocks(self, q):
        r"""The blocks :math:`(M_b, M_{bm}, M_m)` of :math:`\mathcal M(q)` (ph-21), shapes
        (nb, nb), (nb, n), (n, n).

        >>> from robodyn.models import planar_rr
        >>> from robodyn import spatial_inertia
        >>> vms = VehicleManipulator.from_chain(planar_rr(), spatial_inertia(5.0, [1, 1, 1]), "planar")
        >>> [B.shape for B in vms.mass_blocks([0.1, 0.2])]
        [(3, 3), (3, 2), (2, 2)]
        """
        M = self._mass_matrix(self._q(q, "mass_blocks"))
        b = self.nb
        return M[:b, :b], M[:b, b:], M[b:, b:]

    def mass_matrix_derivatives(self, q):
        r""":math:`\partial\mathcal M/\partial q_k` for k = 1..n, ndarray(n, nb + n, nb + n),
        exactly: with :math:`W_k = [\mathbf 1_6, s_1,\dots,s_k, 0]` and
        :math:`Y_k = \sum_{i\ge k}X_i^T\mathcal I^b_i`,
        :math:`\partial_k\mathcal M = -Y_k\,ad_{s_k}W_k - (Y_k\,ad_{s_k}W_k)^T`
        (because :math:`\partial_k s_j = ad_{s_k}s_j` for j > k and
        :math:`\partial_k\mathcal I^b_i = -ad_{s_k}^T\mathcal I^b_i - \mathcal I^b_i ad_{s_k}`
        for i >= k)."""
        q = self._q(q, "mass_matrix_derivatives")
        return self._dmass(self._frames(q))

    def _virtual_chain(self):
        r"""The arm's mounted chain behind six virtual joints (three revolute, three prismatic,
        screws the unit twists (omega, v) of {b}): at zero virtual joints its mass matrix has
        the same dependence on q as :math:`\mathcal M(q)` (the virtual links' inertias are
        constant in q). Cached."""
        c = self._cache
        if "virtual" not in c:
            from ..rigid_motion._kinematics import adjoint
            ch, H = self.chain, self.mount
            screws = np.hstack([np.eye(6), adjoint(H) @ np.asarray(ch.screws, dtype=float)])
            homes = [np.eye(4)] * 6 + [H @ np.asarray(L, dtype=float) for L in ch.link_homes]
            inert = [np.asarray(self.base_inertia, dtype=float)] * 6 + \
                [np.asarray(G, dtype=float) for G in ch.link_inertias]
            c["virtual"] = SerialChain.from_screws(screws, H @ np.asarray(ch.home, dtype=float),
                                                   homes, inert, name=f"{self.name} (virtual)")
            c["virtual:q"], c["virtual:qd"] = np.zeros(6 + self.n), np.zeros(6 + self.n)
        return c["virtual"]

    def _mass_rate(self, q, qd, half=False):
        r""":math:`\dot{\mathcal M} = \sum_k \partial_k\mathcal M\,\dot q_k` at checked
        (q, qd) as :math:`C + C^T` of the virtual chain's Christoffel Coriolis matrix
        (:func:`~robodyn.dynamics.coriolis_matrix`, compiled) at zero virtual joints and
        virtual velocities, projected on the base's subgroup; O(n^2). ``half``: C alone
        (for a tree: :math:`\sum_k\partial_k\mathcal M\dot q_k`, halved)."""
        if self.tree is not None:
            Md = np.einsum("kij,k->ij", self._dmass(self._frames(q)), qd)
            return 0.5 * Md if half else Md
        ch = self._virtual_chain()
        qq, vv = self._cache["virtual:q"], self._cache["virtual:qd"]
        qq[6:], vv[6:] = q, qd                    # zero virtual joints and velocities
        try:                                      # the engine's kernel without the checks
            C = _dynamics._compiled("coriolis", _dynamics._chain_data(ch, "coriolis_matrix"),
                                    qq, vv)
        except (AttributeError, TypeError):       # (an engine whose internals changed)
            C = None
        if C is None:                             # no engine, or an unclean q: checked path
            C = coriolis_matrix(ch, qq.copy(), vv.copy())
        if self.nb < 6:
            C = self._project(C)
        return C if half else C + C.T

    def _dmass(self, F):
        if self.tree is not None:
            return _tree.dmass(self.tree, F)
        n = self.n
        out = np.empty((n, self.dof, self.dof))
        for k in range(n):
            Y = np.zeros((6 + n, 6))
            Y[:6] = F.Ic[k]
            for j in range(n):
                Y[6 + j] = F.s[j] @ F.Ic[max(j, k)]
            W = np.zeros((6, 6 + n))
            W[:, :6] = _EYE6
            W[:, 6:7 + k] = F.s[:k + 1].T
            Z = Y @ _ad6(F.s[k]) @ W
            out[k] = self._project(-(Z + Z.T))
        return out

    # -- Newton-Euler: the velocity terms and gravity of (ph-21) --------------
    def bias(self, q, v, qd):
        r"""The velocity terms :math:`\mathcal C(v, q, \dot q)(v, \dot q)` of (ph-21), by the
        Newton--Euler recursion in the frame momentarily fixed at {b}: link twists
        :math:`t_i = t_{i-1} + s_i\dot q_i` (:math:`t_0 = S_b v`), accelerations
        :math:`a_i = a_{i-1} + ad_{t_{i-1}}s_i\dot q_i`, forces
        :math:`f_i = \mathcal I_i a_i - ad_{t_i}^T\mathcal I_i t_i`, base
        :math:`f_b = -ad_{t_0}^T\mathcal I_b t_0`; rows :math:`S_b^T(f_b + \sum f_i)` and
        :math:`s_k^T\sum_{i\ge k}f_i`. Shape (nb + n,)."""
        q, v, qd = self._q(q, "bias"), self._v(v, "bias"), self._q(qd, "bias", "qd")
        b = self._compiled("vms_rnea", q, v, qd, None, None, None)
        return self._fin(self._bias(self._frames(q), v, qd) if b is None else b, "bias")

    def _bias(self, F, v, qd):
        if self.tree is not None:
            return _tree.bias(self.tree, self.base_inertia, F, self.base_joint.basis @ v, qd)
        n = self.n
        t = self.base_joint.basis @ v
        tb = t
        a = np.zeros(6)
        f = np.empty((n, 6))
        for i in range(n):
            sq = F.s[i] * qd[i]
            a = a + _ad6(t) @ sq
            t = t + sq
            f[i] = F.I[i] @ a - _ad6(t).T @ (F.I[i] @ t)
        fc = np.cumsum(f[::-1], axis=0)[::-1]
        fb = -_ad6(tb).T @ (self.base_inertia @ tb) + fc[0]
        return np.concatenate([self.base_joint.basis.T @ fb, np.einsum("ki,ki->k", F.s, fc)])

    def inverse_dynamics(self, q, v, qd, vd, qdd, base_pose=None, gravity=None):
        r"""The base wrench and joint torques :math:`(\mathrm w, \tau)` that give the
        accelerations :math:`(\dot v, \ddot q)`: the left side of (ph-21),
        :math:`\mathcal M(q)(\dot v, \ddot q) + \mathcal C(v, q, \dot q)(v, \dot q)`, minus the
        gravity forces when ``gravity`` (3-vector, space frame, m/s^2; needs ``base_pose``) is
        given. By Newton--Euler in {b} (:meth:`bias` with accelerations), O(n).

        Parameters
        ----------
        q, qd, qdd : array_like (n,); v, vd : array_like (nb,), base body twist and its rate
        base_pose : array_like (4, 4), needed with gravity
        gravity : array_like (3,), optional

        Returns
        -------
        ndarray(nb + n,), (w, tau) (N m, N for the base; N m or N for the joints)

        >>> from robodyn.models import planar_rr
        >>> from robodyn import spatial_inertia
        >>> vms = VehicleManipulator.from_chain(planar_rr(), spatial_inertia(5.0, [1, 1, 1]))
        >>> f = StandardForm(vms)
        >>> q, nu = [0.3, 0.2], np.linspace(-1, 1, 8)
        >>> acc = f.accelerations(q, nu, w=np.ones(6), tau=[0.5, -0.5])
        >>> np.round(vms.inverse_dynamics(q, nu[:6], nu[6:], acc[:6], acc[6:]), 12).tolist()
        [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.5, -0.5]
        """
        fname = "inverse_dynamics"
        q = self._q(q, fname)
        v = self._v(v, fname)
        qd = self._q(qd, fname, "qd")
        vd = self._v(vd, fname, "vd")
        qdd = self._q(qdd, fname, "qdd")
        H = g = gb = None
        if gravity is not None:
            g = self._g(gravity, fname)
            if base_pose is None:
                raise _value_checks.refusal(
                    ValueError, f"{self.name}.{fname}: base_pose: needed when there is gravity "
                                f"(gravity acts along R^T g in the base frame)")
            H = _check_pose(base_pose, f"{self.name}.{fname}: base_pose")
            gb = H[:3, :3].T @ g
        out = self._compiled("vms_rnea", q, v, qd, vd, qdd, gb)
        if out is not None:
            return self._fin(out, fname)
        F = self._frames(q)
        out = self._project(self._mass6(F)) @ np.concatenate([vd, qdd]) + self._bias(F, v, qd)
        return self._fin(out if g is None else out - self._gravity(F, H, g), fname)

    def gravity_forces(self, q, base_pose, gravity=(0.0, 0.0, -9.81)):
        r"""Generalized gravity forces :math:`(\mathrm w_g, \tau_g)` (the negative gradient of the
        potential, mapped by :math:`\chi_h^*` on the base): gravity acts on every body like the
        acceleration :math:`(0, g_b)`, :math:`g_b = R^T g`, so the forces are the first six
        columns of the unprojected :math:`\mathcal M` applied to it. Shape (nb + n,)."""
        q = self._q(q, "gravity_forces")
        H = _check_pose(base_pose, f"{self.name}.gravity_forces: base_pose")
        g = self._g(gravity, "gravity_forces")
        f = self._compiled("vms_rnea", q, np.zeros(self.nb), np.zeros(self.n), None, None,
                           H[:3, :3].T @ g)
        return self._fin(self._gravity(self._frames(q), H, g) if f is None else -f,
                         "gravity_forces")

    def _gravity(self, F, H, g):
        gb = np.concatenate([np.zeros(3), H[:3, :3].T @ g])
        M6 = self._mass6(F)
        out = M6[:, :6] @ gb
        return np.concatenate([self.base_joint.basis.T @ out[:6], out[6:]])

    def potential_energy(self, q, base_pose, gravity=(0.0, 0.0, -9.81)):
        """Gravitational potential of all bodies, :math:`-\\sum m_i g\\cdot c_i` (J)."""
        fname = "potential_energy"
        q = self._q(q, fname)
        H = _check_pose(base_pose, f"{self.name}.{fname}: base_pose")
        return self._fin(self._potential_energy(q, H, self._g(gravity, fname)), fname)

    def _potential_energy(self, q, H, g):
        """:meth:`potential_energy` at checked q, pose and gravity."""
        mb = self.base_inertia[3, 3]
        C = self.base_inertia[:3, 3:] / mb
        cb = H[:3, :3] @ np.array([C[2, 1], C[0, 2], C[1, 0]]) + H[:3, 3]
        if self.tree is not None:       # sum of m_i c_i in {b}, then in space
            mc = _tree.first_moments(self.tree, self._frames(q).T).sum(axis=0)
            return float(-mb * g @ cb - g @ (H[:3, :3] @ mc + self.tree.inertias[:, 3, 3].sum()
                                             * H[:3, 3]))
        _, _, G = self._data()
        T = H @ self._frames(q).T
        return float(-mb * g @ cb - sum(G[i][3, 3] * g @ T[i][:3, 3] for i in range(self.n)))

    def total_momentum(self, base_pose, q, v, qd):
        r"""Total momentum of the system in the space frame (6,), (angular about the space
        origin, linear): :math:`Ad_{H^{-1}}^T S_b\,p` with the locked base momentum
        :math:`p = M_b v + M_{bm}\dot q` (the whole system's momentum, written in {b})."""
        fname = "total_momentum"
        H = _check_pose(base_pose, f"{self.name}.{fname}: base_pose")
        q, v, qd = self._q(q, fname), self._v(v, fname), self._q(qd, fname, "qd")
        M6 = self._mass6_at(q)
        p6 = M6[:6] @ np.concatenate([self.base_joint.basis @ v, qd])
        return self._fin(_adj_inv(H).T @ p6, fname)

    def end_effector_jacobian(self, q):
        r"""Body Jacobian of the end effector with respect to (v, :math:`\dot q`), 6 x (nb + n):
        :math:`\mathcal V_e = Ad_{H^e_b}(S_b v + \sum_k s_k\dot q_k)`."""
        self._chain_only("end_effector_jacobian")
        q = self._q(q, "end_effector_jacobian")
        F = self._frames(q)
        E = F.P[-1] @ self._cache["home"]
        X = np.hstack([self.base_joint.basis, F.s.T])
        return _adj_inv(E) @ X


# --------------------------------------------------------------------------
# the standard equations (21) in the shared numeric interface
# --------------------------------------------------------------------------


def _pose_of(x):
    H = np.eye(4)
    H[:3, :3] = np.reshape(x[:9], (3, 3))
    H[:3, 3] = x[9:12]
    return H


def mechanical_energy(vms, pose, v, q, qd, gravity=None):
    r"""Kinetic energy :math:`\tfrac12\nu^T\mathcal M(q)\nu` (ph-21) plus, with ``gravity``
    (3-vector, space frame, m/s^2), the potential energy of all bodies (J).

    Parameters
    ----------
    vms : VehicleManipulator; pose : array_like (4, 4), the base pose (within
    ``RHS_POSE_TOL`` of a rigid motion: a state's pose after integration);
    v : (nb,) base body twist; q, qd : (n,)

    >>> from robodyn.models import planar_rr
    >>> from robodyn import spatial_inertia
    >>> vms = VehicleManipulator.from_chain(planar_rr(), spatial_inertia(5.0, [1, 1, 1]), "planar")
    >>> E = mechanical_energy(vms, np.eye(4), [0.0, 1.0, 0.0], [0.1, 0.2], [0.0, 0.0])
    >>> round(E, 9) == round(vms.kinetic_energy([0.1, 0.2], [0.0, 1.0, 0.0], [0.0, 0.0]), 9)
    True
    """
    fname = "mechanical_energy"
    if not isinstance(vms, VehicleManipulator):
        raise _value_checks.error(f"{fname}: vms", "a VehicleManipulator", vms, exc=TypeError)
    H = _check_pose(pose, f"{fname}: pose", tol=RHS_POSE_TOL)
    v = _vec(v, vms.nb, f"{fname}: v ({vms.nb} base velocity numbers)")
    q = _vec(q, vms.n, f"{fname}: q ({vms.n} joint values)")
    qd = _vec(qd, vms.n, f"{fname}: qd ({vms.n} joint rates)")
    g = None if gravity is None else _vec(gravity, 3, f"{fname}: gravity (3 numbers, m/s^2)")
    return _value_checks.finite_result(_mechanical_energy(vms, H, v, q, qd, g), fname)


def _mechanical_energy(vms, H, v, q, qd, g):
    """:func:`mechanical_energy` at checked arguments (g None: no gravity)."""
    nu = np.concatenate([v, qd])
    E = 0.5 * nu @ vms._mass_matrix(q) @ nu
    if g is not None:
        E += vms._potential_energy(q, H, g)
    return float(E)


def _split_state(x, nb, n, name):
    """A VMS state (pose 12, base part nb, q n, joint part n) -> (4x4 pose, base, q, joint)."""
    x = _vec(x, 12 + nb + 2 * n, f"{name} (pose 12, then {nb} + {2 * n} numbers)")
    return _pose_of(x), x[12:12 + nb], x[12 + nb:12 + nb + n], x[12 + nb + n:]


def _time(t, name):
    """A finite time (s) as a float: plain floats at once, anything else by the checks."""
    if type(t) is float and math.isfinite(t):
        return t
    return _value_checks.real_number(t, name, hint="a time in s")


def _pose_error12(x):
    """:func:`pose_error` of the pose held by a state's first 12 numbers (R by rows, p; the
    bottom row (0, 0, 0, 1) is implied), in plain floats: a few microseconds, no arrays."""
    a, b, c, d, e, f, g, h, i = x[:9].tolist()
    err = max(abs(a * a + d * d + g * g - 1.0), abs(b * b + e * e + h * h - 1.0),
              abs(c * c + f * f + i * i - 1.0), abs(a * b + d * e + g * h),
              abs(a * c + d * f + g * i), abs(b * c + e * f + h * i))
    det = a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g)
    return max(err, abs(det - 1.0))


def _pose_rate(H, V6):
    """d/dt of (R, p) for Hdot = H [V6], as 12 numbers."""
    R = H[:3, :3]
    return np.concatenate([(R @ _hat_np(V6[:3])).ravel(), R @ V6[3:]])


def _inputs(inputs, t, x, nb, n, fname):
    if inputs is None:
        return np.zeros(nb), np.zeros(n)
    pair = inputs(t, x) if callable(inputs) else inputs
    if not isinstance(pair, (tuple, list)) or len(pair) != 2:
        raise _value_checks.error(f"{fname}: inputs", "a pair (w, tau), or a callable returning one",
                            pair, exc=TypeError)
    w, tau = pair
    return (_vec(w, nb, f"{fname}: inputs: w ({nb} base wrench numbers)"),
            _vec(tau, n, f"{fname}: inputs: tau ({n} joint torques)"))


RHS_POSE_TOL = 0.1
"""How far from a rigid motion the pose in a state handed to ``StandardForm.rhs`` may be: an
integrator's trial stages drift off SE(3) a little (refused: a rotation block scaled, zeroed
or reflected, whose gravity and kinematics would be silently wrong)."""


class StandardForm:
    r"""The standard VMS equations (ph-21),
    :math:`\mathcal M(q)(\dot v, \ddot q) + \mathcal C(v, q, \dot q)(v, \dot q) = (\mathrm w, \tau)`,
    numerically, in the shared interface of :mod:`robodyn.equations`.

    **State** ``x`` (length 12 + nb + 2n): the base pose as 12 numbers (R row by row, then p),
    the base body twist v (nb), the joint values q (n), the joint rates :math:`\dot q` (n).

    ``mass_matrix(q)``, ``forcing(q, nu, pose=None)`` (:math:`-\mathcal C\nu` plus gravity when
    the form has one; ``nu = (v, qd)``), ``accelerations(q, nu, pose=None, w=None, tau=None)``
    :math:`(\dot v, \ddot q)`, ``rhs(t, x, inputs=None)`` with ``inputs`` a pair (w, tau) or a
    callable ``inputs(t, x) -> (w, tau)``; ``energy(x)`` (kinetic + potential).

    >>> from robodyn.models import planar_rr
    >>> from robodyn import spatial_inertia
    >>> vms = VehicleManipulator.from_chain(planar_rr(), spatial_inertia(5.0, [1, 1, 1]))
    >>> f = StandardForm(vms)
    >>> f.rhs(0.0, f.initial_state(q=[0.3, 0.2])).shape
    (22,)
    """

    def __init__(self, vms, gravity=None):
        if not isinstance(vms, VehicleManipulator):
            raise _value_checks.refusal(
                TypeError, f"StandardForm: vms: expected a VehicleManipulator, got "
                           f"{_value_checks._describe(vms)}")
        self.vms = vms
        self.gravity = None if gravity is None else _vec(gravity, 3, "StandardForm: gravity")
        self.nb, self.n = vms.nb, vms.n
        self.size = 12 + vms.nb + 2 * vms.n
        self.name = f"StandardForm({vms.name})"
        self._zw, self._zt = np.zeros(vms.nb), np.zeros(vms.n)

    def __repr__(self):
        return self.name

    def _arg(self, x, size, fname, what):
        """A finite float vector of ``size`` numbers, its message naming ``fname: what``."""
        return _vec(x, size, f"{self.name}.{fname}: {what}")

    def initial_state(self, pose=None, v=None, q=None, qd=None):
        """A state vector from its parts (defaults: identity pose, zeros)."""
        vms, fname = self.vms, "initial_state"
        H = np.eye(4) if pose is None else _check_pose(pose, f"{self.name}.{fname}: pose")
        if not vms.base_joint.contains(H, 1e-9):
            raise _value_checks.refusal(ValueError, f"{self.name}.{fname}: pose: expected a pose in the "
                             f"{vms.base_joint.name} base's subgroup")
        v = np.zeros(self.nb) if v is None else self._arg(v, self.nb, fname, "v (base twist)")
        q = np.zeros(self.n) if q is None else self._arg(q, self.n, fname, "q (joint values)")
        qd = np.zeros(self.n) if qd is None else self._arg(qd, self.n, fname, "qd (joint rates)")
        return np.concatenate([H[:3, :3].ravel(), H[:3, 3], v, q, qd])

    def split(self, x):
        """(pose 4x4, v, q, qd) of a state."""
        return _split_state(x, self.nb, self.n, f"{self.name}.split: x")

    def mass_matrix(self, q, t=0.0):
        r""":math:`\mathcal M(q)` (ph-21), as :meth:`VehicleManipulator.mass_matrix`."""
        _time(t, f"{self.name}.mass_matrix: t")
        M = self.vms._compiled("vms_crba", q)       # clean float64 q: the engine's own checks
        if M is not None:
            return M
        return self.vms._mass_matrix(self._arg(q, self.n, "mass_matrix", "q (joint values)"))

    def forcing(self, q, nu, t=0.0, pose=None):
        r""":math:`-\mathcal C(v, q, \dot q)\nu` plus the gravity forces (pose needed then)."""
        vms, fname = self.vms, "forcing"
        q = self._arg(q, self.n, fname, "q (joint values)")
        nu = self._arg(nu, vms.dof, fname, "nu (v then qd)")
        _time(t, f"{self.name}.{fname}: t")
        H = None if pose is None else _check_pose(pose, f"{self.name}.{fname}: pose")
        if self.gravity is not None and H is None:
            raise _value_checks.refusal(
                ValueError, f"{self.name}.{fname}: pose: needed when there is gravity")
        gb = None if self.gravity is None else H[:3, :3].T @ self.gravity
        f = vms._compiled("vms_rnea", q, nu[:self.nb], nu[self.nb:], None, None, gb)
        if f is not None:
            return _finite(-f, f"{self.name}.{fname}")
        F = vms._frames(q)
        f = -vms._bias(F, nu[:self.nb], nu[self.nb:])
        if self.gravity is not None:
            f = f + vms._gravity(F, H, self.gravity)
        return _finite(f, f"{self.name}.{fname}")

    def accelerations(self, q, nu, t=0.0, pose=None, w=None, tau=None):
        r""":math:`(\dot v, \ddot q) = \mathcal M^{-1}(f + (\mathrm w, \tau))`."""
        vms, fname = self.vms, "accelerations"
        if not (type(t) is float and math.isfinite(t)):    # (the hot path tests inline)
            _time(t, f"{self.name}.{fname}: t")
        acc = None
        if type(nu) is np.ndarray and (pose is None) is (self.gravity is None):
            # clean arrays: the engine's own checks, no conversion
            gb = None
            if pose is not None:        # None: not a clean pose, _check_pose below says why
                eng = _engine()
                gb = None if eng is None else eng.pose_gravity(pose, self.gravity, 0.05)
            if pose is None or gb is not None:
                acc = vms._compiled("vms_aba", q, nu[:self.nb], nu[self.nb:],
                                    self._zw if w is None else w,
                                    self._zt if tau is None else tau, gb)
        if acc is not None:
            if acc.ndim == 1 and math.isfinite(sum(acc.tolist())):
                return acc
            return _finite(acc, f"{self.name}.{fname}")
        if pose is not None:           # loose: an integrated pose drifts off SE(3) a little
            pose = _check_pose(pose, f"{self.name}.{fname}: pose", tol=0.05)
        q = self._arg(q, self.n, fname, "q (joint values)")
        nu = self._arg(nu, vms.dof, fname, "nu (v then qd)")
        w = np.zeros(self.nb) if w is None else self._arg(w, self.nb, fname, "w (base wrench)")
        tau = np.zeros(self.n) if tau is None else self._arg(tau, self.n, fname,
                                                             "tau (joint torques)")
        if self.gravity is not None and pose is None:
            raise _value_checks.refusal(
                ValueError, f"{self.name}.{fname}: pose: needed when there is gravity")
        return _finite(self._accelerations(q, nu, pose, w, tau), f"{self.name}.{fname}")

    def _accelerations(self, q, nu, pose, w, tau):
        """(v', q'') at checked q, nu (nb + n), w, tau; pose needed with gravity."""
        vms = self.vms
        gb = None if self.gravity is None else np.asarray(pose, dtype=float)[:3, :3].T @ self.gravity
        acc = vms._compiled("vms_aba", q, nu[:self.nb], nu[self.nb:], w, tau, gb)
        if acc is not None:
            return acc
        u = np.concatenate([w, tau])
        F = vms._frames(q)
        M = vms._project(vms._mass6(F))
        f = -vms._bias(F, nu[:self.nb], nu[self.nb:]) + u
        if self.gravity is not None:
            f = f + vms._gravity(F, np.asarray(pose, dtype=float), self.gravity)
        return np.linalg.solve(M, f)

    def rhs(self, t, x, inputs=None):
        """dx/dt of the state (class docstring), ready for ``scipy.integrate.solve_ivp``.

        Every call checks t (a finite number), x (``size`` finite numbers, its first 12 a
        rigid motion within ``RHS_POSE_TOL``), inputs, and the result (finite). For the
        integrator's own calls (a float t, a float64 state, no inputs) these checks run in
        :meth:`_rhs_clean` at a few microseconds; anything else takes the general path."""
        if inputs is None:
            xd = self._rhs_clean(t, x)
            if xd is not None:
                return xd
        fname = f"{self.name}.rhs"
        t = _time(t, f"{fname}: t")
        x = _vec(x, self.size, f"{fname}: x (pose 12, then {self.nb} + {2 * self.n} numbers)")
        _check_pose(_pose_of(x), f"{fname}: x[:12] (the base pose)", tol=RHS_POSE_TOL)
        if not (inputs is None or callable(inputs) or isinstance(inputs, (tuple, list))):
            raise _value_checks.error(f"{fname}: inputs", "None, a pair (w, tau) or a callable "
                                "inputs(t, x) -> (w, tau)", inputs, exc=TypeError)
        w, tau = _inputs(inputs, t, x, self.nb, self.n, fname)
        xd = self.vms._compiled("vms_rhs", x, w, tau, self.gravity)
        if xd is None:
            H, v, q, qd = _split_state(x, self.nb, self.n, f"{fname}: x")
            acc = self._accelerations(q, np.concatenate([v, qd]), H, w, tau)
            xd = np.concatenate([_pose_rate(H, self.vms.base_joint.basis @ v), acc[:self.nb],
                                 qd, acc[self.nb:]])
        return _finite(xd, fname)

    def _rhs_clean(self, t, x):
        """:meth:`rhs` without inputs when its checks pass on clean data, else None (then the
        general path checks again and says what is wrong): t a finite float, x a plain
        float64 vector of ``size`` numbers (the engine declines NaN/inf), the pose in x within
        ``RHS_POSE_TOL`` of a rigid motion (:func:`_pose_error12`, the measure of
        :func:`pose_error`), a finite result."""
        if not (isinstance(t, float) and _plain(x, self.size) and math.isfinite(t)
                and _pose_error12(x) <= RHS_POSE_TOL):
            return None
        xd = self.vms._compiled("vms_rhs", x, self._zw, self._zt, self.gravity)
        return None if xd is None else _finite(xd, f"{self.name}.rhs")

    def velocities(self, x):
        """(v, qd) of a state."""
        _, v, _, qd = _split_state(x, self.nb, self.n, f"{self.name}.velocities: x")
        return np.concatenate([v, qd])

    def energy(self, x):
        """Kinetic (+ potential when there is gravity) energy of a state (J)."""
        H, v, q, qd = _split_state(x, self.nb, self.n, f"{self.name}.energy: x")
        return _value_checks.finite_result(_mechanical_energy(self.vms, H, v, q, qd, self.gravity),
                                     f"{self.name}.energy")


class PlanarCoordinates:
    r"""A planar-base VMS in vector coordinates :math:`(x, y, \theta, q)` with speeds
    :math:`u = (\mathrm v, \dot q)` (the base body twist (omega_z, v_x, v_y)), as a
    :class:`~robodyn.equations.NumericForm`: kinematics :math:`(\dot x, \dot y) =
    R(\theta)(v_x, v_y)`, :math:`\dot\theta = \omega_z`, :math:`\dot q = \dot q`; mass matrix
    and forcing those of (ph-21), inputs the base body wrench (m_z, f_x, f_y) and the joint
    torques. The coordinates are those of the same robot built as a chain with virtual joints
    (prismatic x, prismatic y, revolute z, then the arm), so :func:`~robodyn.equations.max_difference`
    (with ``tau=False``: the two forms' inputs differ) compares it with
    :func:`robodyn.lagrange.equations_of_motion` of that chain.
    """

    def __new__(cls, vms, gravity=None):
        from ..equations import NumericForm
        if not isinstance(vms, VehicleManipulator) or vms.base_joint.name != "planar":
            raise _value_checks.error("PlanarCoordinates: vms", "a VehicleManipulator with a planar "
                                "base", vms, exc=TypeError)
        g = None if gravity is None else _vec(gravity, 3, "PlanarCoordinates: gravity")
        std = StandardForm(vms, g)
        n = vms.dof

        def pose(qc):
            return vms.base_joint.configuration([qc[2], qc[0], qc[1]])

        class _Form(NumericForm):
            # each function checks its arguments (a user may call it) and names itself
            def _args(self, fname, qc, u=None, t=0.0):
                self._time(t, fname)
                qc = self._vec(qc, n, f"q ({n} coordinates x, y, theta, arm)", fname)
                return qc if u is None else (qc, self._vec(u, n, f"u ({n} speeds)", fname))

            def mass_matrix(self, qc, t=0.0):
                return vms._mass_matrix(self._args("mass_matrix", qc, t=t)[3:])

            def forcing(self, qc, u, t=0.0):
                qc, u = self._args("forcing", qc, u, t)
                return std.forcing(qc[3:], u, pose=pose(qc))

            def kinematics(self, qc, u, t=0.0):
                qc, u = self._args("kinematics", qc, u, t)
                c, s = np.cos(qc[2]), np.sin(qc[2])
                return _finite(np.concatenate([[c * u[1] - s * u[2], s * u[1] + c * u[2], u[0]],
                                               u[3:]]), f"{self.name}.kinematics")

            def input_matrix(self, qc, t=0.0):
                self._args("input_matrix", qc, t=t)
                return np.eye(n)

            def kinematics_jacobian(self, qc, u, t=0.0):
                qc, u = self._args("kinematics_jacobian", qc, u, t)
                J = np.zeros((n, n + 1))
                c, s = np.cos(qc[2]), np.sin(qc[2])
                J[0, 2] = -s * u[1] - c * u[2]
                J[1, 2] = c * u[1] - s * u[2]
                return _finite(J, f"{self.name}.kinematics_jacobian")

        out = _Form(n, n, n, f"PlanarCoordinates({vms.name})")
        out._made_from = (PlanarCoordinates, (vms, gravity))    # pickled as what it was made of
        return out


def planar_virtual_chain(vms, virtual_mass=1e-9):
    r"""The planar-base VMS as one serial chain: prismatic x, prismatic y, revolute z (the
    last carrying the base body), then the arm -- the classical "virtual joints" model, whose
    coordinates are those of :class:`PlanarCoordinates`. The two virtual links get the
    negligible inertia ``virtual_mass`` (kg, kg m^2; positive, at most 1e-3 of the base's
    mass), so the chain's mass matrix differs from the VMS's by that much.

    >>> from robodyn.models import planar_rr
    >>> from robodyn import spatial_inertia
    >>> vms = VehicleManipulator.from_chain(planar_rr(), spatial_inertia(5.0, [1, 1, 1]), "planar")
    >>> planar_virtual_chain(vms).joint_types[:3]
    ('prismatic', 'prismatic', 'revolute')
    """
    if not isinstance(vms, VehicleManipulator) or vms.base_joint.name != "planar":
        raise _value_checks.refusal(
            TypeError, f"planar_virtual_chain: vms: expected a VehicleManipulator with a planar "
                       f"base, got {_value_checks._describe(vms)}")
    eps = _value_checks.real_number(virtual_mass, "planar_virtual_chain: virtual_mass", low=0.0,
                              strict_low=True, high=1e-3 * float(vms.base_inertia[3, 3]),
                              hint="a negligible mass (kg) and inertia (kg m^2), at most 1e-3 "
                                   "of the base's mass")
    from ..rigid_motion._kinematics import adjoint, homogeneous, prismatic_screw, revolute_screw, spatial_inertia
    arm = vms.chain
    m = vms.base_inertia[3, 3]
    C = vms.base_inertia[:3, 3:] / m
    c = np.array([C[2, 1], C[0, 2], C[1, 0]])
    I_c = vms.base_inertia[:3, :3] + m * C @ C
    tiny = spatial_inertia(eps, [eps, eps, eps])
    S = np.column_stack([prismatic_screw([1, 0, 0]), prismatic_screw([0, 1, 0]),
                         revolute_screw([0, 0, 1], [0, 0, 0])]
                        + [adjoint(vms.mount) @ np.asarray(arm.screws[:, i], float) for i in range(arm.n)])
    homes = ([np.eye(4), np.eye(4), homogeneous(np.eye(3), c)]
             + [vms.mount @ np.asarray(L, float) for L in arm.link_homes])
    inertias = [tiny, tiny, spatial_inertia(m, I_c)] + [np.asarray(G, float) for G in arm.link_inertias]
    return SerialChain.from_screws(S, vms.mount @ np.asarray(arm.home, float), homes, inertias,
                                   name=f"{vms.name} (virtual joints)")

from .._boundary import seal as _seal  # noqa: E402 -- the one boundary (issue 28): last, over the finished module
_seal(globals(), {"StandardForm.accelerations": {"self_checked": True}})  # per-call hot path
