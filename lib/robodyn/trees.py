r"""Kinematic trees: forward kinematics, Jacobians and Featherstone's O(n) dynamics on a
:class:`~robodyn.urdf.RobotModel` (a parent array, fixed or floating base).

Body :math:`i` hangs from body :math:`\lambda(i)` (``model.parents[i]``, :math:`-1` the base).
Its pose in its parent is :math:`X_i(q_i) = P_i\,e^{[\mathcal A_i]q_i}`, :math:`P_i` the URDF
joint origin and :math:`\mathcal A_i` the joint's screw in the body frame, :math:`(a_i, 0)`
revolute or :math:`(0, a_i)` prismatic. Everything is written in body coordinates, twists
:math:`(\omega, v)` and wrenches :math:`(m, f)` as everywhere in :mod:`robodyn`, with
:math:`\mathrm{Ad}_i = \mathrm{Ad}_{X_i^{-1}}` carrying a twist from the parent's frame to the
child's. The recursive Newton--Euler algorithm (Featherstone 2008, §5.3; Lynch & Park 2017,
§8.3),

.. math:: V_i = \mathrm{Ad}_i V_{\lambda(i)} + \mathcal A_i\dot q_i,\quad
   \dot V_i = \mathrm{Ad}_i\dot V_{\lambda(i)} + \mathcal A_i\ddot q_i
   + \mathrm{ad}_{V_i}\mathcal A_i\dot q_i,\quad
   F_i = \mathcal I_i\dot V_i - \mathrm{ad}_{V_i}^T\mathcal I_iV_i
   + \sum_{\lambda(k)=i}\mathrm{Ad}_k^TF_k,\quad \tau_i = \mathcal A_i^TF_i,

becomes a tree algorithm by summing over the children :math:`\lambda(k) = i` instead of the
one next link; the composite-rigid-body algorithm (§6.2) and the articulated-body algorithm
(§7.3) likewise. Gravity enters as the fictitious base acceleration :math:`(0, -R_b^Tg)`.

With a floating base the velocities are :math:`\nu = (V_b, \dot q)`, :math:`V_b` the base's twist
in its own frame (its body twist, :math:`(\omega, v)`), and the pose of the base
:math:`H_b` is given separately (``base_pose``, a 4x4 matrix; it sets only the direction of
gravity in the base frame); the generalized forces are :math:`(F_b, \tau)`, :math:`F_b` the
wrench on the base in its frame. With a fixed base the base body is the ground and
:math:`\nu = \dot q`.

The symbolic equations of a tree (:func:`equations`, Lagrange's method; Kane's method on the
same tree is :func:`robodyn.kane.equations_of_motion`) take the same velocities and forces:
with a floating base the base pose drops out of them except through gravity, given in the base
frame.

Every function here is checked against Pinocchio on the same URDF (``tests/test_urdf.py``,
``tests/test_tree_equations.py``).
"""
from __future__ import annotations

import numpy as np

from . import _value_checks
from .urdf import RobotModel, _adjoint, _skew

__all__ = ["body_poses", "frame_pose", "frame_jacobian", "rnea", "crba", "aba",
           "rnea_derivatives", "aba_derivatives", "equations", "DEFAULT_GRAVITY"]

DEFAULT_GRAVITY = np.array([0.0, 0.0, -9.81])
DEFAULT_GRAVITY.setflags(write=False)

_EYE4 = np.eye(4)
_EYE4.setflags(write=False)
_TREE_ENGINE = []          # [the compiled module, or None if it cannot be built here]


def _engine_handle(model):
    """``(engine, handle)`` of the model in the compiled tree engine (``_tree_engine.c``,
    built on first use and cached on the model), or None under ``dynamics.ENGINE = "numpy"``
    or without a C compiler (then the numpy algorithms run)."""
    from .dynamics import _recursions as dynamics
    if dynamics.ENGINE == "numpy":
        return None
    h = model._cache.get("trees:engine")
    if h is not None:
        return h
    eng = dynamics._load_compiled(_TREE_ENGINE, "_tree_engine.c", "robodyn_tree_engine",
                                  "robodyn.trees: the compiled tree engine",
                                  "the numpy algorithms run")
    if eng is None:
        return None
    kinds = np.array([0.0 if t == "revolute" else 1.0 for t in model.joint_types])
    h = model._cache["trees:engine"] = (eng, eng.tree(
        np.array(model.parents, dtype=float), kinds, np.ascontiguousarray(model.axes),
        np.ascontiguousarray(model.placements), np.ascontiguousarray(_inertias(model)),
        model.floating))
    return h


def _fast_state(name, model, q, x, y, base_pose, gravity):
    """:func:`_fast` for the algorithms of a state (q, x, y): a fixed-base model takes only
    ``base_pose=None`` on the fast path (the checked path refuses any other pose)."""
    if base_pose is not None and not (type(model) is RobotModel and model.floating):
        return None
    return _fast(name, model, q, x, y, _EYE4 if base_pose is None else base_pose, gravity)


def _state_call(fname, impl, model, q, x, y, base_pose, gravity, names):
    """A state algorithm's call: the compiled engine when it takes the arguments, else the
    checked numpy ``impl`` (every argument checked; an overflow refused)."""
    r = _fast_state(fname, model, q, x, y, base_pose, gravity)
    if r is not None:
        return r
    _model(model, fname)
    q = _q(model, q, fname)
    x, y = _nu(model, x, fname, names[0]), _nu(model, y, fname, names[1])
    Hb, g = _pose(model, base_pose, fname), _gravity(gravity, fname)
    with np.errstate(all="ignore"):
        out = impl(model, q, x, y, Hb, g)
    return _value_checks.finite_result(out, fname)


def _fast(name, model, *args):
    """The compiled engine's result, or None (no engine; arguments it declines: lists, other
    dtypes, wrong sizes, non-finite numbers, a base pose that is not a rigid motion -- the
    checked numpy path then raises or converts)."""
    h = model._cache.get("trees:engine") if type(model) is RobotModel else None
    if h is None and type(model) is RobotModel:
        h = _engine_handle(model)
    if h is None:
        return None
    return getattr(h[0], name)(h[1], *args)


# --------------------------------------------------------------------------
# arguments
# --------------------------------------------------------------------------


def _model(model, fname):
    if not isinstance(model, RobotModel):
        raise _value_checks.error(f"{fname}: model", "a RobotModel (robodyn.urdf.load_urdf)", model,
                            exc=TypeError)
    return model


def _vec(x, n, name, what):
    return np.asarray(_value_checks.vector(x, n, f"{name} ({what})"), dtype=float)


def _q(model, q, fname):
    return _vec(q, model.n, f"{fname}: q", f"one position per joint of the {model.n}-joint "
                f"{model.name!r}")


def _nu(model, x, fname, name):
    what = (f"6 base velocities (omega, v) then one per joint: {model.nv} values"
            if model.floating else f"one per joint of the {model.n}-joint {model.name!r}")
    return _vec(x, model.nv, f"{fname}: {name}", what)


def _pose(model, base_pose, fname):
    if base_pose is None:
        return np.eye(4)
    from .rigid_motion._kinematics import _homogeneous_arg
    H = np.asarray(_homogeneous_arg(base_pose, f"{fname}: base_pose"), dtype=float)
    if not model.floating and not np.allclose(H, np.eye(4), atol=1e-12):
        raise _value_checks.refusal(ValueError, f"{fname}: base_pose: expected None for the fixed-base "
                         f"{model.name!r} (its base is the ground frame), got a pose")
    return H


def _gravity(g, fname):
    return _vec(g, 3, f"{fname}: gravity", "a 3-vector, m/s^2, world frame")


# --------------------------------------------------------------------------
# kinematics
# --------------------------------------------------------------------------


def _joint_transforms(model, q):
    """X_i = P_i exp([A_i] q_i), (n, 4, 4)."""
    X = np.array(model.placements)
    a = model.axes
    for i in range(model.n):
        if model.joint_types[i] == "prismatic":
            X[i, :3, 3] += X[i, :3, :3] @ (a[i] * q[i])
        else:
            K = _skew(a[i])
            X[i, :3, :3] = X[i, :3, :3] @ (np.eye(3) + np.sin(q[i]) * K
                                           + (1 - np.cos(q[i])) * (K @ K))
    return X


def _world(model, X, Hb):
    """World poses (n+1, 4, 4): entry 0 the base, entry i+1 body i."""
    W = np.empty((model.n + 1, 4, 4))
    W[0] = Hb
    for i, p in enumerate(model.parents):
        W[i + 1] = W[p + 1] @ X[i]
    return W


def body_poses(model, q, base_pose=None):
    r"""World poses of the base and of every body, ``(n+1, 4, 4)``: entry 0 the base
    (``base_pose``, the identity for a fixed base), entry ``i+1`` body ``i``,
    :math:`H_i = H_{\lambda(i)}X_i(q_i)`.

    >>> from robodyn.urdf import load_urdf
    >>> body_poses(load_urdf("ur5"), [0.0] * 6).shape
    (7, 4, 4)
    """
    fname = "body_poses"
    _model(model, fname)
    q = _q(model, q, fname)
    return _world(model, _joint_transforms(model, q), _pose(model, base_pose, fname))


def _frame(model, frame, fname):
    if not isinstance(frame, str) or frame not in model.frames:
        raise _value_checks.refusal(ValueError, f"{fname}: frame: expected a link name of {model.name!r} (one of "
                         f"{sorted(model.frames)[:12]}...), got {_value_checks.describe(frame)}")
    return model.frames[frame]


def frame_pose(model, q, frame, base_pose=None):
    """World pose (4x4) of a URDF link's frame.

    >>> from robodyn.urdf import load_urdf
    >>> frame_pose(load_urdf("ur5"), [0.0] * 6, "tool0")[:3, 3].round(4)
    array([ 0.8173,  0.1914, -0.0055])
    """
    fname = "frame_pose"
    _model(model, fname)
    b, H = _frame(model, frame, fname)
    return body_poses(model, q, base_pose)[b + 1] @ H


def frame_jacobian(model, q, frame, base_pose=None):
    r"""Space Jacobian of a URDF link's frame, ``6 x nv``: the twist :math:`(\omega, v)` of the
    frame's body in world coordinates (at the world origin) is :math:`J\nu`. Column of joint
    :math:`j` on the path to the frame: :math:`\mathrm{Ad}_{H_j}\mathcal A_j` (Lynch & Park
    2017, §5.1.1); of the
    floating base: :math:`\mathrm{Ad}_{H_b}`; other columns zero.

    >>> from robodyn.urdf import load_urdf
    >>> frame_jacobian(load_urdf("ur5"), [0.0] * 6, "tool0").shape
    (6, 6)
    """
    fname = "frame_jacobian"
    _model(model, fname)
    b, _ = _frame(model, frame, fname)
    q = _q(model, q, fname)
    W = _world(model, _joint_transforms(model, q), _pose(model, base_pose, fname))
    J = np.zeros((6, model.nv))
    off = 6 if model.floating else 0
    j = b
    while j >= 0:
        A = np.zeros(6)
        A[:3 if model.joint_types[j] == "revolute" else 6][-3:] = model.axes[j]
        J[:, off + j] = _adjoint(W[j + 1]) @ A
        j = model.parents[j]
    if model.floating:
        J[:, :6] = _adjoint(W[0])
    return J


# --------------------------------------------------------------------------
# dynamics (numpy reference implementation)
# --------------------------------------------------------------------------


def _screws(model):
    """The joint screws in their body frames, (n, 6), cached on the model."""
    S = model._cache.get("trees:S")
    if S is None:
        S = np.zeros((model.n, 6))
        for i, t in enumerate(model.joint_types):
            S[i, :3 if t == "revolute" else 6][-3:] = model.axes[i]
        S.setflags(write=False)
        model._cache["trees:S"] = S
    return S


def _ad(V):
    """ad_V, (omega, v) order."""
    A = np.zeros((6, 6))
    A[:3, :3] = A[3:, 3:] = _skew(V[:3])
    A[3:, :3] = _skew(V[3:])
    return A


def _transforms(model, q):
    """Ad_i = Ad_{X_i^{-1}} (n, 6, 6): parent-frame twists to body i's frame."""
    X = _joint_transforms(model, q)
    R = X[:, :3, :3].transpose(0, 2, 1)
    p = -np.einsum("nij,nj->ni", R, X[:, :3, 3])
    A = np.zeros((model.n, 6, 6))
    A[:, :3, :3] = A[:, 3:, 3:] = R
    for i in range(model.n):
        A[i, 3:, :3] = _skew(p[i]) @ R[i]
    return A


def _velocities(model, A, S, Vb, qd):
    """Body twists (n+1, 6) and the bias accelerations ad_{V_i} A_i qd_i (n, 6)."""
    V = np.empty((model.n + 1, 6))
    V[0] = Vb
    c = np.empty((model.n, 6))
    for i, p in enumerate(model.parents):
        V[i + 1] = A[i] @ V[p + 1] + S[i] * qd[i]
        c[i] = _ad(V[i + 1]) @ S[i] * qd[i]
    return V, c


def _base_gravity(Hb, g):
    """The fictitious base acceleration (0, -R_b^T g) that stands for gravity."""
    return np.r_[np.zeros(3), -Hb[:3, :3].T @ g]


def _inertias(model):
    return np.concatenate([model.base_inertia[None], model.inertias])


def _rnea(model, q, qd, qdd, Hb, g):
    S, A, I = _screws(model), _transforms(model, q), _inertias(model)
    Vb, dq = (qd[:6], qd[6:]) if model.floating else (np.zeros(6), qd)
    ab, ddq = (qdd[:6], qdd[6:]) if model.floating else (np.zeros(6), qdd)
    V, c = _velocities(model, A, S, Vb, dq)
    a = np.empty((model.n + 1, 6))
    a[0] = ab + _base_gravity(Hb, g)
    F = np.empty((model.n + 1, 6))
    F[0] = I[0] @ a[0] - _ad(V[0]).T @ I[0] @ V[0]
    for i, p in enumerate(model.parents):
        a[i + 1] = A[i] @ a[p + 1] + S[i] * ddq[i] + c[i]
        F[i + 1] = I[i + 1] @ a[i + 1] - _ad(V[i + 1]).T @ I[i + 1] @ V[i + 1]
    tau = np.empty(model.n)
    for i in range(model.n - 1, -1, -1):
        tau[i] = S[i] @ F[i + 1]
        F[model.parents[i] + 1] += A[i].T @ F[i + 1]
    return np.r_[F[0], tau] if model.floating else tau


def rnea(model, q, qd, qdd, base_pose=None, gravity=DEFAULT_GRAVITY):
    r"""Inverse dynamics of a tree by the recursive Newton--Euler algorithm (Featherstone 2008,
    §5.3):
    the generalized forces :math:`M(q)\dot\nu + C(q,\nu)\nu + G(q)`, length ``nv``
    (a floating base: the base wrench :math:`(m, f)` in the base frame first).

    >>> from robodyn.urdf import load_urdf
    >>> rnea(load_urdf("ur5"), [0.0] * 6, [0.0] * 6, [0.0] * 6).round(3)
    array([  0.   , -59.171, -15.684,  -0.   ,   0.   ,   0.   ])
    """
    return _state_call("rnea", _rnea, model, q, qd, qdd, base_pose, gravity, ("qd", "qdd"))


def _crba(model, q):
    S, A, Ic = _screws(model), _transforms(model, q), _inertias(model).copy()
    n, off = model.n, (6 if model.floating else 0)
    for i in range(n - 1, -1, -1):
        Ic[model.parents[i] + 1] += A[i].T @ Ic[i + 1] @ A[i]
    M = np.zeros((model.nv, model.nv))
    for i in range(n):
        F = Ic[i + 1] @ S[i]
        M[off + i, off + i] = S[i] @ F
        j = i
        while model.parents[j] >= 0:
            F = A[j].T @ F
            j = model.parents[j]
            M[off + i, off + j] = M[off + j, off + i] = S[j] @ F
        if model.floating:
            M[:6, off + i] = M[off + i, :6] = A[j].T @ F
    if model.floating:
        M[:6, :6] = Ic[0]
    return M


def crba(model, q):
    r"""The mass matrix :math:`M(q)` of a tree, ``nv x nv``, by the composite-rigid-body
    algorithm (Featherstone 2008, §6.2): composite inertias
    :math:`\mathcal I^c_{\lambda(i)} \mathrel{+}=
    \mathrm{Ad}_i^T\mathcal I^c_i\mathrm{Ad}_i`, then :math:`M_{ij} = \mathcal A_j^T
    (\mathrm{Ad}\cdots)^T\mathcal I^c_i\mathcal A_i` along the path from body *i* to the base.

    >>> from robodyn.urdf import load_urdf
    >>> M = crba(load_urdf("solo12", floating_base=True), [0.0] * 12)
    >>> M.shape, round(float(M[5, 5]), 4)
    ((18, 18), 2.5)
    """
    r = _fast("crba", model, q)
    if r is not None:
        return r
    fname = "crba"
    _model(model, fname)
    with np.errstate(all="ignore"):
        return _value_checks.finite_result(_crba(model, _q(model, q, fname)), fname)


def _singular(D, model, q, fname):
    """Refuse a singular mass matrix from the pivots D_i of the articulated-body algorithm
    (those of M = L^T D L, the compiled engine's test too), as
    :func:`robodyn.dynamics.forward_dynamics` refuses a serial chain's."""
    from .dynamics._recursions import _check_pivots
    _check_pivots(D[None], model, None, q[None], np.inf, fname)


def _base_solve(IA, p, model, q, fname):
    """The floating base's acceleration from its articulated inertia, refused when that is
    singular (a Cholesky pivot at most 6 eps max IA_jj, the compiled engine's test)."""
    try:
        L = np.linalg.cholesky(IA)
    except np.linalg.LinAlgError:
        L = np.zeros((6, 6))
    if not (np.diag(L) ** 2).min() > 6 * np.finfo(float).eps * IA.diagonal().max():
        raise _value_checks.refusal(ValueError, f"{fname}: the mass matrix of {model!r} is "
                                    f"singular at q = {np.round(q, 6).tolist()}: the floating "
                                    f"base's articulated inertia is not positive definite "
                                    f"(check the link inertias)")
    return np.linalg.solve(L.T, np.linalg.solve(L, p))


def _aba(model, q, qd, tau, Hb, g, fname="aba"):
    S, A, I = _screws(model), _transforms(model, q), _inertias(model)
    n = model.n
    Vb, dq = (qd[:6], qd[6:]) if model.floating else (np.zeros(6), qd)
    Fb, tq = (tau[:6], tau[6:]) if model.floating else (np.zeros(6), tau)
    V, c = _velocities(model, A, S, Vb, dq)
    IA = I.copy()
    pA = np.array([-_ad(V[k]).T @ I[k] @ V[k] for k in range(n + 1)])
    pA[0] -= Fb
    U, D, u = np.empty((n, 6)), np.empty(n), np.empty(n)
    for i in range(n - 1, -1, -1):
        U[i] = IA[i + 1] @ S[i]
        D[i] = S[i] @ U[i]
        u[i] = tq[i] - S[i] @ pA[i + 1]
        w = 1.0 / D[i] if D[i] > 0 else 0.0     # D_i = 0: refused below, naming joint i only
        Ia = IA[i + 1] - np.outer(U[i], U[i]) * w
        pa = pA[i + 1] + Ia @ c[i] + U[i] * (u[i] * w)
        p = model.parents[i] + 1
        IA[p] += A[i].T @ Ia @ A[i]
        pA[p] += A[i].T @ pa
    _singular(D, model, q, fname)
    a = np.empty((n + 1, 6))
    a[0] = _base_solve(IA[0], -pA[0], model, q, fname) if model.floating else \
        _base_gravity(Hb, g)
    qdd = np.empty(n)
    for i, p in enumerate(model.parents):
        a[i + 1] = A[i] @ a[p + 1] + c[i]
        qdd[i] = (u[i] - U[i] @ a[i + 1]) / D[i]
        a[i + 1] += S[i] * qdd[i]
    if not model.floating:
        return qdd
    return np.r_[a[0] - _base_gravity(Hb, g), qdd]


def aba(model, q, qd, tau, base_pose=None, gravity=DEFAULT_GRAVITY):
    r"""Forward dynamics of a tree by the articulated-body algorithm (Featherstone 2008, §7.3):
    :math:`\dot\nu = M^{-1}(\tau - C\nu - G)`, length ``nv``. With a floating base ``tau``
    starts with the wrench :math:`(m, f)` applied to the base (in its frame; zero for a robot
    in flight) and the result with the base's acceleration :math:`\dot V_b`.

    >>> from robodyn.urdf import load_urdf
    >>> ur5 = load_urdf("ur5")
    >>> G = rnea(ur5, [0.1] * 6, [0.0] * 6, [0.0] * 6)
    >>> bool(abs(aba(ur5, [0.1] * 6, [0.0] * 6, G)).max() < 1e-12)
    True

    Raises ``ValueError`` when the mass matrix is singular at ``q`` (a pivot :math:`D_i` of the
    algorithm at most 1e-14 of the largest: a joint that moves no inertia there).
    """
    return _state_call("aba", _aba, model, q, qd, tau, base_pose, gravity, ("qd", "tau"))


# --------------------------------------------------------------------------
# analytic derivatives
# --------------------------------------------------------------------------


def _hmat(h):
    """H(h) with H(h) x = -ad_x^T h, for a wrench h = (m, f)."""
    Hm, Hf = -_skew(h[:3]), -_skew(h[3:])
    return np.block([[Hm, Hf], [Hf, np.zeros((3, 3))]])


def _base_frame_data(model, q):
    """Joint screws s (n, 6) and spatial inertias (n, 6, 6) in the base frame at q."""
    W = _world(model, _joint_transforms(model, q), np.eye(4))
    S = _screws(model)
    s = np.einsum("nij,nj->ni", np.array([_adjoint(H) for H in W[1:]]), S)
    Ainv = np.array([_adjoint(np.linalg.inv(H)) for H in W[1:]])
    I = np.einsum("nji,njk,nkl->nil", Ainv, model.inertias, Ainv)
    return s, I


def _ancestry(model):
    """anc[i, j]: body i is body j or one of its ancestors (cached)."""
    A = model._cache.get("trees:anc")
    if A is None:
        n = model.n
        A = np.eye(n, dtype=bool)
        for j in range(n):
            i = model.parents[j]
            if i >= 0:
                A[:, j] |= A[:, i]
        A.setflags(write=False)
        model._cache["trees:anc"] = A
    return A


def _rnea_derivatives(model, q, nu, dnu, Hb, g):
    """(dtau/dq, dtau/dnu): the chain recursion of robodyn.derivatives (Carpentier & Mansard
    2018, in the space frame of the base) on a parent array: prefix sums become sums along the
    path from the base, suffix sums sums over subtrees; entries of two bodies on different
    branches vanish."""
    n, nb = model.n, (6 if model.floating else 0)
    s, I = _base_frame_data(model, q)
    ag = np.r_[0.0, 0.0, 0.0, -Hb[:3, :3].T @ g]
    t0 = nu[:6] if nb else np.zeros(6)
    qd, qdd = nu[nb:], dnu[nb:]
    V, A = np.zeros((n + 1, 6)), np.zeros((n + 1, 6))
    V[0], A[0] = t0, (dnu[:6] + ag if nb else ag)
    vnu, psi, F = np.zeros((n, 6)), np.zeros((n, 6)), np.zeros((n, 6))
    Ic, Bc = I.copy(), np.zeros((n, 6, 6))
    for i, p in enumerate(model.parents):
        adVp = _ad(V[p + 1])
        vnu[i] = adVp @ s[i]
        psi[i] = _ad(A[p + 1]) @ s[i] + adVp @ vnu[i]
        V[i + 1] = V[p + 1] + s[i] * qd[i]
        A[i + 1] = A[p + 1] + s[i] * qdd[i] + vnu[i] * qd[i]
        adV = _ad(V[i + 1])
        h, X = I[i] @ V[i + 1], I[i] @ adV
        F[i] = I[i] @ A[i + 1] - adV.T @ h
        Bc[i] = -(X + X.T) + _hmat(h)
    for i in range(n - 1, -1, -1):
        p = model.parents[i]
        if p >= 0:
            Ic[p] += Ic[i]
            Bc[p] += Bc[i]
            F[p] += F[i]
    Ps, Qs = np.einsum("nij,nj->ni", Ic, s), np.einsum("nji,nj->ni", Bc, s)
    adS = np.array([_ad(x) for x in s])
    w = (-np.einsum("nji,nj->ni", adS, F) + np.einsum("nij,nj->ni", Ic, psi)
         + np.einsum("nij,nj->ni", Bc, vnu))
    z = 2 * np.einsum("nij,nj->ni", Ic, vnu) + np.einsum("nij,nj->ni", Bc, s)
    anc = _ancestry(model)
    below = anc.T & ~np.eye(n, dtype=bool)            # j a strict ancestor of i
    m = nb + n
    dq, dqd = np.zeros((m, m)), np.zeros((m, m))
    dq[nb:, nb:] = np.where(anc, s @ w.T, np.where(below, Ps @ psi.T + Qs @ vnu.T, 0.0))
    dqd[nb:, nb:] = np.where(anc, s @ z.T, np.where(below, 2 * Ps @ vnu.T + Qs @ s.T, 0.0))
    if nb:
        roots = [i for i, p in enumerate(model.parents) if p < 0]
        Ib = model.base_inertia
        Xb = Ib @ _ad(t0)
        Icb = Ib + Ic[roots].sum(axis=0)
        Bcb = -(Xb + Xb.T) + _hmat(Ib @ t0) + Bc[roots].sum(axis=0)
        dq[:6, 6:], dqd[:6, 6:] = w.T, z.T
        alpha, nup = _ad(ag), _ad(t0)
        dq[6:, :6] = Ps @ alpha
        dqd[6:, :6] = Ps @ nup + Qs
        dq[:6, :6] = Icb @ alpha
        dqd[:6, :6] = Icb @ nup + Bcb
    return dq, dqd


def rnea_derivatives(model, q, qd, qdd, base_pose=None, gravity=DEFAULT_GRAVITY):
    r"""The partial derivatives of :func:`rnea`, :math:`(\partial\tau/\partial q,
    \partial\tau/\partial\nu)`, each ``nv x nv`` (Carpentier & Mansard 2018: the RNEA
    differentiated;
    :math:`\partial\tau/\partial\dot\nu = M`, :func:`crba`). A floating base's columns
    are derivatives along :math:`H_b \mapsto H_b e^{[\delta]}`, :math:`\delta = (\omega, v)`
    in the base frame; rows in the order of :func:`rnea`'s result.

    >>> from robodyn.urdf import load_urdf
    >>> dq, dqd = rnea_derivatives(load_urdf("ur5"), [0.1] * 6, [0.0] * 6, [0.0] * 6)
    >>> dq.shape, bool(abs(dqd).max() == 0)
    ((6, 6), True)
    """
    return _state_call("rnea_derivatives", _rnea_derivatives, model, q, qd, qdd, base_pose,
                       gravity, ("qd", "qdd"))


def _aba_derivatives(model, q, qd, tau, Hb, g):
    acc = _aba(model, q, qd, tau, Hb, g, "aba_derivatives")
    dq, dqd = _rnea_derivatives(model, q, qd, acc, Hb, g)
    Minv = np.linalg.inv(_crba(model, q))
    Minv = (Minv + Minv.T) / 2
    return -Minv @ dq, -Minv @ dqd, Minv


def aba_derivatives(model, q, qd, tau, base_pose=None, gravity=DEFAULT_GRAVITY):
    r"""The partial derivatives of :func:`aba`: :math:`(\partial\dot\nu/\partial q,
    \partial\dot\nu/\partial\nu, M^{-1})`, from
    :math:`\partial\dot\nu/\partial x = -M^{-1}\,\partial\tau/\partial x` at
    :math:`\dot\nu` = :func:`aba` (the derivative of the identity
    :math:`\mathrm{rnea}(q, \nu, \mathrm{aba}(q, \nu, \tau)) = \tau`).

    >>> from robodyn.urdf import load_urdf
    >>> da, dv, Minv = aba_derivatives(load_urdf("ur5"), [0.1] * 6, [0.0] * 6, [0.0] * 6)
    >>> Minv.shape
    (6, 6)
    """
    return _state_call("aba_derivatives", _aba_derivatives, model, q, qd, tau, base_pose,
                       gravity, ("qd", "tau"))


# --------------------------------------------------------------------------
# symbolic equations of a tree
# --------------------------------------------------------------------------


def _sym_rotation(axis, q):
    import sympy as sp
    K = sp.Matrix(_skew(axis))
    return sp.eye(3) + sp.sin(q) * K + (1 - sp.cos(q)) * K * K


def _sym_transforms(model, q):
    """(R_i, p_i) of X_i(q_i) as sympy matrices (numbers of the URDF, symbols q)."""
    import sympy as sp
    out = []
    for i in range(model.n):
        P = model.placements[i]
        R0, p0 = sp.Matrix(P[:3, :3]), sp.Matrix(P[:3, 3])
        a = model.axes[i]
        if model.joint_types[i] == "revolute":
            out.append((R0 * _sym_rotation(a, q[i]), p0))
        else:
            out.append((R0, p0 + R0 * sp.Matrix(a) * q[i]))
    return out


def _sym_adjoint_inverse(R, p):
    """Ad_{X^{-1}} of X = (R, p) as a sympy 6x6 (twists of the parent frame into the child's)."""
    import sympy as sp
    Rt = R.T
    A = sp.zeros(6, 6)
    A[:3, :3] = A[3:, 3:] = Rt
    A[3:, :3] = -Rt * sp.Matrix([[0, -p[2], p[1]], [p[2], 0, -p[0]], [-p[1], p[0], 0]])
    return A


def _sym_bodies(model, q):
    r"""The tree's bodies in the base frame, symbolically: a list of ``(J_i, R_i, p_i, I_i)``,
    :math:`J_i` the body Jacobian (6 x nv; :math:`\mathcal V_i = J_i\nu`), :math:`(R_i, p_i)`
    the pose of body i in the base frame and :math:`\mathcal I_i` its spatial inertia. The
    recursion :math:`J_i = \mathrm{Ad}_{X_i^{-1}}J_{\lambda(i)} + \mathcal A_ie_i^T` starts from
    the base's Jacobian, :math:`[\,1_6\;0\,]` with a floating base (its twist is the first six
    speeds) and zero with a fixed one; a floating base is itself the first entry."""
    import sympy as sp
    n, nv, off = model.n, model.nv, (6 if model.floating else 0)
    Jb = sp.zeros(6, nv)
    if model.floating:
        Jb[:, :6] = sp.eye(6)
    base = (Jb, sp.eye(3), sp.zeros(3, 1), sp.Matrix(model.base_inertia))
    S = _screws(model)
    out = []
    for i, (R, p) in enumerate(_sym_transforms(model, q)):
        par = model.parents[i]
        Jp, Rp, pp, _ = base if par < 0 else out[par]
        Ji = _sym_adjoint_inverse(R, p) * Jp
        Ji[:, off + i] += sp.Matrix(S[i])
        out.append((Ji, Rp * R, pp + Rp * p, sp.Matrix(model.inertias[i])))
    return ([base] if model.floating else []) + out


def _sym_gravity(gravity, fname):
    """The gravity 3-vector as a sympy column: numbers (checked finite) or expressions."""
    import sympy as sp
    g = _value_checks.vector(gravity, 3, f"{fname}: gravity", "a 3-vector, m/s^2 (world frame; the "
                       "base frame for a floating base), numbers or sympy symbols")
    if isinstance(g, sp.MatrixBase):
        return sp.Matrix(g)
    return sp.Matrix([sp.Float(float(x)) for x in g])


def _sym_speeds(model, q, qd, fname, name="qd"):
    """Symbols q (n) and the speeds (nv): given ones checked, or the defaults ``q1..qn`` and
    ``qd1..qdn`` (``name``; a floating base: ``wx wy wz vx vy vz`` first, its body twist)."""
    import sympy as sp
    n, nv = model.n, model.nv
    base = list(sp.symbols("wx wy wz vx vy vz")) if model.floating else []
    q = sp.Matrix(sp.symbols(f"q1:{n + 1}")) if q is None else sp.Matrix(
        _value_checks.symbol_list(q, f"{fname}: q", n))
    qd = sp.Matrix(base + list(sp.symbols(f"{name}1:{n + 1}"))) if qd is None else sp.Matrix(
        _value_checks.symbol_list(qd, f"{fname}: {name}", nv))
    if set(q) & set(qd):
        raise _value_checks.refusal(ValueError, f"{fname}: q and {name} share symbols "
                              f"{set(q) & set(qd)}")
    return q, qd


def _sym_ad(V):
    """ad_V (omega, v order) of a sympy 6-vector."""
    import sympy as sp
    w, v = [sp.Matrix([[0, -x[2], x[1]], [x[2], 0, -x[0]], [-x[1], x[0], 0]])
            for x in (V[:3], V[3:])]
    A = sp.zeros(6, 6)
    A[:3, :3] = A[3:, 3:] = w
    A[3:, :3] = v
    return A


def _hamel_forcing(model, M, bodies, g, q, nu):
    r"""The forcing of a floating tree from Lagrange's function in the quasi-velocities
    :math:`\nu = (V_b, \dot q)` (the Boltzmann--Hamel equations; for the base, the
    Euler--Poincaré equations on SE(3)): with :math:`p = M(q)\nu`,

    .. math:: \tfrac{d}{dt}p_b - \mathrm{ad}_{V_b}^Tp_b = Q_b,\qquad
       \tfrac{d}{dt}p_q - \tfrac12\nu^T\tfrac{\partial M}{\partial q}\nu = Q_q,

    so :math:`f = -\dot M\nu + (\mathrm{ad}_{V_b}^Tp_b,\ \tfrac12\nu^T\partial_qM\nu) + Q`. The
    potential :math:`V = -\sum_i m_i(g\cdot p_b + g_b\cdot c_i(q))`, :math:`g_b = R_b^Tg`,
    gives :math:`Q_q = -\partial V/\partial q` and, varied along
    :math:`H_b\mapsto H_be^{[\delta]}`, the base's :math:`Q_b = \sum_im_i(c_i\times g_b, g_b)`."""
    import sympy as sp
    n = model.n
    p = M * nu
    qd = nu[6:, 0]
    dM = [M.diff(x) for x in q]
    Mdot = sp.zeros(model.nv, model.nv)
    for k in range(n):
        Mdot += dM[k] * qd[k]
    f = -(Mdot * nu)
    f[:6, 0] += _sym_ad(nu[:6, 0]).T * p[:6, 0]
    for k in range(n):
        f[6 + k] += (nu.T * dM[k] * nu)[0] / 2
    Vg = sp.Integer(0)
    for _, R, pos, I in bodies:
        m = I[3, 3]
        if m == 0:
            continue
        c = pos + R * sp.Matrix([I[2, 4], I[0, 5], I[1, 3]]) / m
        f[:3, 0] += m * c.cross(g)
        f[3:6, 0] += m * g
        Vg -= m * (g.T * c)[0]
    for k in range(n):
        f[6 + k] -= sp.diff(Vg, q[k])
    return f


def equations(model, gravity=DEFAULT_GRAVITY, q=None, qd=None):
    r"""The symbolic equations of motion of a tree by Lagrange's method, as a
    :class:`robodyn.equations.MassMatrixForm` (the one shape every method's equations take).

    **Fixed base**: :math:`M(q)\ddot q = -C(q,\dot q)\dot q - G(q) + \tau`. The body Jacobians
    follow the tree, :math:`J_i = \mathrm{Ad}_{X_i^{-1}}J_{\lambda(i)} + \mathcal A_ie_i^T`
    (columns only on the path from the base), :math:`M = \sum_i J_i^T\mathcal I_iJ_i` with the
    URDF's numeric body inertias, :math:`C` from the Christoffel symbols of :math:`M` (eq.
    5.13--5.14, :func:`robodyn.lagrange.coriolis_matrix`) and :math:`G = \partial V/\partial q`,
    :math:`V = -\sum_i m_i\,g\cdot c_i(q)`.

    **Floating base**: the speeds are :math:`\nu = (V_b, \dot q)`, the base's twist in its own
    frame first (the order of :func:`crba` and :func:`aba`); the coordinates are the joint
    angles only: the base pose is cyclic (:math:`M(q)`, n+6 square, depends on the joint
    angles alone) except through gravity, which enters as ``gravity`` *in the base frame*,
    :math:`g_b = R_b^Tg` (pass Symbols to keep the equations for every orientation). The
    equations are Lagrange's in quasi-velocities (Boltzmann--Hamel, Euler--Poincaré for the
    base: :func:`_hamel_forcing`), :math:`\dot q = K\nu` picks the joint
    speeds, and the inputs are :func:`aba`'s: the base wrench in the base frame, then the
    joint torques (B the identity).

    The expressions grow with the depth of the tree: meant for small trees (a few joints per
    branch); chains go faster through :func:`robodyn.urdf.serial_chain` and
    :mod:`robodyn.lagrange`. Kane's method on the same tree:
    :func:`robodyn.kane.equations_of_motion`.

    >>> from robodyn.urdf import load_urdf
    >>> eom = equations(load_urdf("double_pendulum"))
    >>> num = eom.numeric()
    >>> bool(abs(num.accelerations([0.3, -0.2], [0.0, 0.0])
    ...          - aba(load_urdf("double_pendulum"), [0.3, -0.2], [0.0, 0.0], [0.0, 0.0])).max()
    ...      < 1e-9)
    True
    >>> free = equations(load_urdf("double_pendulum", floating_base=True), gravity=[0, 0, 0])
    >>> free.mass_matrix.shape, free.kinematics.T
    ((8, 8), Matrix([[qd1, qd2]]))
    """
    import sympy as sp

    from . import equations as eqs
    from .lagrange import _euler_lagrange as lagrange
    fname = "equations"
    _model(model, fname)
    g = _sym_gravity(gravity, fname)
    q, qd = _sym_speeds(model, q, qd, fname)
    n, nv = model.n, model.nv
    bodies = _sym_bodies(model, q)
    M = sp.zeros(nv, nv)
    for J, _, _, I in bodies:
        M += J.T * I * J
    for r in range(nv):                 # exactly symmetric (float products in either order)
        for c in range(r + 1, nv):
            M[c, r] = M[r, c]
    if model.floating:
        f = _hamel_forcing(model, M, bodies, g, q, qd)
        return eqs.mass_matrix_form(list(q), list(qd), M, f, kinematics=qd[6:, 0],
                                    name=model.name)
    V = sp.Integer(0)
    for _, R, p, I in bodies:
        m = I[3, 3]
        if m != 0:
            V -= (g.T * (m * p + R * sp.Matrix([I[2, 4], I[0, 5], I[1, 3]])))[0]
    Gv = sp.Matrix([sp.diff(V, x) for x in q])
    Cm = lagrange.coriolis_matrix(M, list(q), list(qd))
    return eqs.mass_matrix_form(list(q), list(qd), M, -(Cm * qd) - Gv, name=model.name)


from ._boundary import seal as _seal  # noqa: E402 -- the one boundary (issue 28): last, over the finished module
_seal(globals(), {"frame_pose": {"text": ["frame"]}, "frame_jacobian": {"text": ["frame"]},
                  "rnea": {"self_checked": True}, "crba": {"self_checked": True},
                  "aba": {"self_checked": True}, "rnea_derivatives": {"self_checked": True},
                  "aba_derivatives": {"self_checked": True}})    # hot paths (compiled engine)
