r"""The numbers of a vehicle--manipulator system whose base carries a kinematic **tree** (a
:class:`~robodyn.urdf.RobotModel` with a floating base: a quadruped, a humanoid), for
:class:`robodyn.port_hamiltonian.VehicleManipulator` (``from_tree``). Private: the vehicle is the
public face.

Everything is written in the base frame {b}, as for a chain (:mod:`robodyn.port_hamiltonian`): body
:math:`i` hangs from :math:`\lambda(i)` (``model.parents``), its frame sits at
:math:`W_i = W_{\lambda(i)}P_ie^{[\mathcal A_i]q_i}` in {b}, its joint screw in {b} is
:math:`s_i = Ad_{W_i}\mathcal A_i` and its spatial inertia in {b}
:math:`\mathcal I_i = Ad_{W_i^{-1}}^T G_i Ad_{W_i^{-1}}`. The serial chain is the special case
``parents = (-1, 0, 1, ...)``; every formula below reduces to the chain's of
:class:`~robodyn.port_hamiltonian.VehicleManipulator` there (``anc`` upper triangular).

* :func:`frames` -- the kinematics above at q (float or complex: complex steps go through);
* :func:`mass6` -- the locked mass matrix (ph-21) by composite bodies,
  :math:`[M_m]_{jk} = s_j^T\mathcal I^c_ks_k` for j an ancestor of k (or k itself), zero for
  bodies on different branches;
* :func:`dmass` -- :math:`\partial\mathcal M/\partial q_k = -Y_k\,ad_{s_k}W_k - (\cdot)^T`,
  exact (the chain's formula with the path to the base in place of "j <= k");
* :func:`bias` -- Newton--Euler in {b} summed over subtrees;
* :func:`cotangent` -- :math:`\partial T/\partial q_k = h_k^T ad_{t_k}s_k` at fixed velocities,
  :math:`h_k` the momentum of the subtree of body k, in O(n).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..dynamics._recursions import _ad6

_EYE6 = np.eye(6)


@dataclass(frozen=True)
class TreeFrames:
    """Kinematic quantities of a tree at one configuration, all in the base frame {b}."""
    T: np.ndarray      # (n, 4, 4) body frame poses W_i
    s: np.ndarray      # (n, 6) joint screws
    I: np.ndarray      # (n, 6, 6) body spatial inertias
    Ic: np.ndarray     # (n, 6, 6) composite inertias of the subtrees


def _hat_batch(p):
    """[p] for a stack of 3-vectors (k, 3), float or complex."""
    out = np.zeros(p.shape[:-1] + (3, 3), dtype=p.dtype)
    out[..., 0, 1], out[..., 0, 2], out[..., 1, 2] = -p[..., 2], p[..., 1], -p[..., 0]
    return out - np.swapaxes(out, -1, -2)


def ancestry(model):
    """anc[i, j]: body i is body j or an ancestor of it (cached on the model)."""
    from ..trees import _ancestry
    return _ancestry(model)


def frames(model, q):
    """:class:`TreeFrames` at q (a float or complex array of ``model.n`` numbers).

    >>> from robodyn.urdf import load_urdf
    >>> solo = load_urdf("solo12", floating_base=True)
    >>> F = frames(solo, np.zeros(12))
    >>> F.s.shape, bool(np.allclose(F.Ic[0], F.I[0] + F.I[1] + F.I[2]))   # leg 1: bodies 0-2
    ((12, 6), True)
    """
    n = model.n
    dt = complex if np.iscomplexobj(q) else float
    W = np.empty((n, 4, 4), dtype=dt)
    s = np.empty((n, 6), dtype=dt)
    for i, p in enumerate(model.parents):
        a = model.axes[i]
        E = np.eye(4, dtype=dt)
        if model.joint_types[i] == "prismatic":
            E[:3, 3] = a * q[i]
        else:
            K = np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])
            E[:3, :3] = np.eye(3) + np.sin(q[i]) * K + (1 - np.cos(q[i])) * (K @ K)
        W[i] = (model.placements[i] if p < 0 else W[p] @ model.placements[i]) @ E
        w = W[i, :3, :3] @ a
        if model.joint_types[i] == "prismatic":
            s[i, :3], s[i, 3:] = 0.0, w
        else:
            s[i, :3], s[i, 3:] = w, np.cross(W[i, :3, 3], w)
    # I_i = Ad_{W^-1}^T G Ad_{W^-1}, all bodies at once
    Rt = np.swapaxes(W[:, :3, :3], 1, 2)
    X = np.zeros((n, 6, 6), dtype=dt)
    X[:, :3, :3] = X[:, 3:, 3:] = Rt
    X[:, 3:, :3] = -Rt @ _hat_batch(W[:, :3, 3])
    I = np.swapaxes(X, 1, 2) @ model.inertias @ X
    Ic = I.copy()
    for i in range(n - 1, -1, -1):
        if model.parents[i] >= 0:
            Ic[model.parents[i]] += Ic[i]
    return TreeFrames(W, s, I, Ic)


def mass6(model, base_inertia, F):
    """The unprojected (6 + n) locked mass matrix (ph-21) of the tree at the frames F."""
    n = model.n
    anc = ancestry(model)
    M = np.zeros((6 + n, 6 + n), dtype=F.s.dtype)
    M[:6, :6] = base_inertia + F.I.sum(axis=0)
    B = np.einsum("kij,kj->ki", F.Ic, F.s)             # B_k = I^c_k s_k
    M[:6, 6:] = B.T
    M[6:, :6] = B
    Gm = F.s @ B.T                                       # s_j . I^c_k s_k: right for j anc k
    M[6:, 6:] = np.where(anc, Gm, np.where(anc.T, Gm.T, 0.0))
    return M


def dmass(model, F):
    r""":math:`\partial\mathcal M/\partial q_k`, ndarray(n, 6 + n, 6 + n), exactly: with
    :math:`Y_k = \sum_{i\in\mathrm{sub}(k)}J_i^T\mathcal I_i` (rows: :math:`\mathcal I^c_k`
    for the base, :math:`s_j^T\mathcal I^c_k` for j on the path from the base to k,
    :math:`s_j^T\mathcal I^c_j` for j below k, zero elsewhere) and :math:`W_k = [1_6, s_j
    (j\text{ on the path to }k), 0]`, :math:`\partial_k\mathcal M = -Y_k ad_{s_k}W_k -
    (\cdot)^T`, because :math:`\partial_kJ_i - ad_{s_k}J_i = -ad_{s_k}W_k` for every body i of
    the subtree of k and :math:`\partial_k\mathcal I_i = -ad_{s_k}^T\mathcal I_i -
    \mathcal I_i ad_{s_k}`."""
    n = model.n
    anc = ancestry(model)
    out = np.empty((n, 6 + n, 6 + n))
    for k in range(n):
        up = anc[:, k]                                   # the path from the base to k
        down = anc[k] & ~up                              # strictly below k
        Y = np.zeros((6 + n, 6))
        Y[:6] = F.Ic[k]
        Y[6:][up] = F.s[up] @ F.Ic[k]
        Y[6:][down] = np.einsum("ji,jil->jl", F.s[down], F.Ic[down])
        Wk = np.zeros((6, 6 + n))
        Wk[:, :6] = _EYE6
        Wk[:, 6:][:, up] = F.s[up].T
        Z = Y @ _ad6(F.s[k]) @ Wk
        out[k] = -(Z + Z.T)
    return out


def twists(model, F, V0, qd):
    """Body twists in {b}, (n + 1, 6): entry 0 the base's V0, entry i + 1 body i's."""
    t = np.empty((model.n + 1, 6), dtype=np.result_type(F.s, V0, qd))
    t[0] = V0
    for i, p in enumerate(model.parents):
        t[i + 1] = t[p + 1] + F.s[i] * qd[i]
    return t


def subtree_sums(model, x):
    """Sums of x (n, ...) over each body's subtree."""
    x = x.copy()
    for i in range(model.n - 1, -1, -1):
        if model.parents[i] >= 0:
            x[model.parents[i]] += x[i]
    return x


def bias(model, base_inertia, F, V0, qd):
    r"""The velocity terms :math:`\mathcal C\nu` of (ph-21), unprojected (6 + n), by
    Newton--Euler in {b}: :math:`t_i = t_{\lambda(i)} + s_i\dot q_i`,
    :math:`a_i = a_{\lambda(i)} + ad_{t_{\lambda(i)}}s_i\dot q_i`,
    :math:`f_i = \mathcal I_ia_i - ad_{t_i}^T\mathcal I_it_i`, summed over subtrees."""
    n = model.n
    t = twists(model, F, V0, qd)
    a = np.zeros((n + 1, 6))
    f = np.empty((n, 6))
    for i, p in enumerate(model.parents):
        a[i + 1] = a[p + 1] + _ad6(t[p + 1]) @ (F.s[i] * qd[i])
        f[i] = F.I[i] @ a[i + 1] - _ad6(t[i + 1]).T @ (F.I[i] @ t[i + 1])
    fc = subtree_sums(model, f)
    roots = [i for i, p in enumerate(model.parents) if p < 0]
    fb = -_ad6(V0).T @ (base_inertia @ V0) + fc[roots].sum(axis=0)
    return np.concatenate([fb, np.einsum("ki,ki->k", F.s, fc)])


def cotangent(model, F, V0, qd):
    r""":math:`\partial T/\partial q_k` at fixed velocities (V0, qd), (n,):
    :math:`h_k^Tad_{t_k}s_k`, :math:`h_k = \sum_{i\in\mathrm{sub}(k)}\mathcal I_it_i` (the
    derivative of :math:`T = \tfrac12\sum_i t_i^T\mathcal I_it_i` by
    :math:`\partial_kt_i = ad_{s_k}(t_i - t_{\lambda(k)})` and the rule for
    :math:`\partial_k\mathcal I_i` of :func:`dmass`). O(n)."""
    t = twists(model, F, V0, qd)[1:]
    h = subtree_sums(model, np.einsum("kij,kj->ki", F.I, t))
    ads = np.cross(t[:, :3], F.s[:, :3])                # ad_t s = (w x ws, w x vs + v x ws)
    adv = np.cross(t[:, :3], F.s[:, 3:]) + np.cross(t[:, 3:], F.s[:, :3])
    return np.einsum("ki,ki->k", h[:, :3], ads) + np.einsum("ki,ki->k", h[:, 3:], adv)


def first_moments(model, T):
    """m c of every body in {b} (n, 3), from the bodies' poses T (n, 4, 4) in {b} and the
    first moments m [c] in the upper-right blocks of their inertias."""
    G = model.inertias
    mc = np.stack([G[:, 2, 4], G[:, 0, 5], G[:, 1, 3]], axis=1)
    return np.einsum("kij,kj->ki", T[:, :3, :3], mc) + G[:, 3, 3][:, None] * T[:, :3, 3]
