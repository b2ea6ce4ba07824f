r"""Numeric rigid-body dynamics of serial chains: O(n) recursive algorithms (Part II of the book).

The terms of the equations of motion, handbook eq. (5.14),

.. math:: M(q)\ddot q + C(q,\dot q)\dot q + G(q) = \tau,

computed numerically for any :class:`~robodyn.rigid_motion.SerialChain` with inertias
(revolute, prismatic and helical joints), for one state or a batch of states:

* :func:`inverse_dynamics` -- recursive Newton--Euler (RNEA), :math:`\tau` from
  :math:`(q, \dot q, \ddot q)`;
* :func:`forward_dynamics` -- the articulated-body algorithm (ABA), or CRBA + Cholesky;
* :func:`crba` -- the mass matrix by the composite-rigid-body algorithm;
* :func:`coriolis_matrix` -- the Christoffel Coriolis matrix of eq. (5.13)--(5.14), exactly;
* :func:`gravity_torques`, :func:`mechanical_energy`.

Formulation
-----------
Everything is written in the space (ground) frame, on the chain's product-of-exponentials
data. With :math:`P_i(q) = e^{[\mathcal S_1]q_1}\cdots e^{[\mathcal S_i]q_i}`:

* joint *i*'s screw axis at *q* is :math:`s_i = \mathrm{Ad}_{P_i}\mathcal S_i` (a column of
  the space Jacobian), link *i*'s twist is :math:`v_i = \sum_{k\le i} s_k\dot q_k`;
* link *i*'s spatial inertia in the space frame is
  :math:`\mathcal I^s_i = \mathrm{Ad}_{T_i^{-1}}^T\mathcal I_i\mathrm{Ad}_{T_i^{-1}}`, with
  :math:`T_i = P_i L_i` the pose of its centre-of-mass frame (``link_homes[i]`` is
  :math:`L_i`, ``link_inertias[i]`` is :math:`\mathcal I_i`);
* :math:`\dot s_i = \mathrm{ad}_{v_i} s_i`, and the rate of a spatial inertia is
  :math:`\dot{\mathcal I}^s = -\mathrm{ad}_v^T\mathcal I^s - \mathcal I^s\mathrm{ad}_v`.

In one frame no transform is needed between neighbouring links, so the velocity,
acceleration and force recursions of the RNEA become cumulative sums over the joints, and
the batch of states is one more array axis. Gravity enters as the fictitious base
acceleration :math:`(0, -g)`. Twists are (omega, v), wrenches (m, f), as everywhere in
:mod:`robodyn`.

Two implementations compute the same formulas. The numpy one vectorizes a batch (a leading
axis of B states), processed in chunks of ``CHUNK`` states, and loops over the joints in
Python; it checks and converts any input. The C one (``_engine.c``, compiled and cached by
:mod:`robodyn.codegen` on first use) loops over states and joints in C; it takes float64,
C-contiguous, finite arrays and leaves everything else to the numpy path; the chain's constant
data are checked and copied into it once (a handle cached on the chain), so a call costs one
look-up (:func:`_fast`), the engine's checks of its own arrays and the algorithm. ``ENGINE``
chooses: ``"auto"`` (C where it applies, the default) or ``"numpy"``. ``bench/bench_dynamics.py``
measures the speed against Pinocchio and Modern Robotics.

References: R. Featherstone, *Rigid Body Dynamics Algorithms* (2008), ch. 5--7 (RNEA,
CRBA, ABA; the ground-frame form); K. M. Lynch and F. C. Park, *Modern Robotics* (2017), §8.3.
"""
from __future__ import annotations

import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .. import _value_checks
from .. import _meaning_checks
from .._value_checks import is_symbolic
from ..rigid_motion._kinematics import SerialChain
from ..kinds import Mass, RotationalInertia

__all__ = ["DEFAULT_GRAVITY", "IllConditionedWarning", "inverse_dynamics", "forward_dynamics",
           "crba", "coriolis_matrix", "gravity_torques", "mechanical_energy",
           "newton_euler_about_point"]

DEFAULT_GRAVITY = np.array([0.0, 0.0, -9.81])
"""Gravitational acceleration in the space frame, m/s^2 (the planar models need (0, -9.81, 0))."""
DEFAULT_GRAVITY.setflags(write=False)

COND_WARN = 1e10
"""Default condition number of M above which :func:`forward_dynamics` warns."""


ENGINE = os.environ.get("ROBODYN_ENGINE", "auto")
"""``"auto"``: the compiled engine where it applies, else numpy; ``"numpy"``: numpy only.
Read from ``$ROBODYN_ENGINE`` at import; assign ``robodyn.dynamics._recursions.ENGINE`` to change it."""

_ENGINE_MODULE = []          # [the compiled module, or None if it cannot be built here]


def _load_compiled(cache, c_file, module_name, what, fallback):
    """The C extension built from ``lib/robodyn/<c_file>`` (by :func:`robodyn.codegen.
    compiled_module`, cached on disk), kept in ``cache`` (a one-slot list) after the first
    call; None if no C compiler works here -- then a RuntimeWarning, once, says why and that
    ``fallback`` runs instead. The one loader of the package's compiled modules (the dynamics
    engine here, the contact solver's Gauss--Seidel in :mod:`robodyn.impacts`)."""
    if not cache:
        from .. import codegen
        try:
            source = (Path(__file__).parents[1] / c_file).read_text()   # robodyn/: all C sources
            cache.append(codegen.compiled_module(source, module_name))
        except (codegen.CompileError, OSError) as err:
            warnings.warn(f"{what} is unavailable ({err}); {fallback} instead",
                          RuntimeWarning, stacklevel=4)
            cache.append(None)
    return cache[0]


def _engine():
    """The compiled engine, built on first use; None under ``ENGINE = "numpy"`` or if no C
    compiler works here (then a RuntimeWarning, once, says why)."""
    if ENGINE == "numpy":
        return None
    return _load_compiled(_ENGINE_MODULE, "_engine.c", "robodyn_engine",
                          "robodyn.dynamics: the compiled engine",
                          "the numpy algorithms run")


def _bound(d):
    """The compiled engine and the handle of this chain's data in it (a private copy, checked
    once when it is made), or None under ``ENGINE = "numpy"`` or without a compiler."""
    eng = _ENGINE_MODULE[0] if _ENGINE_MODULE and ENGINE != "numpy" else _engine()
    if eng is None:
        return None
    b = d.bound
    if not b or b[0] is not eng:
        b[:] = [eng, eng.chain(d.basis, d.K, d.mass, d.home)]
    return b


def _fast(chain, fname):
    """``(data, [engine, handle])`` of a chain (:func:`_chain_data`, :func:`_bound`) in one
    cached look-up, or ``(data, None)`` when the compiled engine is off or unavailable: the
    per-call cost of the public functions' fast path."""
    if isinstance(chain, SerialChain):
        f = chain._cache.get("dyn:fast")
        if f is not None and ENGINE != "numpy" and _ENGINE_MODULE and f[1][0] is _ENGINE_MODULE[0]:
            return f
    d = _chain_data(chain, fname)
    b = _bound(d)
    if b is None:
        return d, None
    f = chain._cache["dyn:fast"] = (d, b)
    return f


def _compiled(name, d, *args):
    """The compiled engine's result for these arrays, or None: no engine, or inputs that are
    not float64, C-contiguous, finite arrays of the right shapes (the numpy path handles
    those, and raises the errors)."""
    b = _bound(d)
    return None if b is None else getattr(b[0], name)(b[1], *args)


class IllConditionedWarning(RuntimeWarning):
    """A computation met a nearly singular matrix (e.g. a mass matrix with a tiny pivot)."""


# --------------------------------------------------------------------------
# input checks
# --------------------------------------------------------------------------


def _chain_data(chain, fname):
    """Check a numeric chain with inertias; return its constant data (cached on the chain)."""
    if not isinstance(chain, SerialChain):
        _value_checks.chain(chain, f"{fname}: chain", SerialChain)
    data = chain._cache.get("dyn:data")
    if data is not None:
        return data
    if chain.link_inertias is None or chain.link_homes is None:
        missing = " and ".join(w for w, x in (("link_homes", chain.link_homes),
                                               ("link_inertias", chain.link_inertias))
                               if x is None)
        raise _value_checks.refusal(
            ValueError, f"{fname}: {chain!r} has no {missing}; dynamics needs the home pose of "
                        f"every link's centre-of-mass frame and its spatial inertia: build it "
                        f"with SerialChain.from_screws(..., link_homes=[...], "
                        f"link_inertias=[...])")
    if chain.symbolic:
        raise _value_checks.refusal(
            TypeError, f"{fname}: {chain!r} has symbolic parameters; this is a numeric "
                       f"algorithm. Substitute numbers, or use robodyn.lagrange for symbolic "
                       f"equations of motion")
    data = _ChainData.of(chain)
    chain._cache["dyn:data"] = data
    return data


@dataclass(frozen=True)
class _ChainData:
    """Constant arrays of a chain, computed once: screws, exponential helpers, mass data."""
    n: int
    W: np.ndarray        # (n,3,3) [omega_i]
    W2: np.ndarray       # (n,3,3) [omega_i]^2
    v: np.ndarray        # (n,3) linear parts of the screws
    Wv: np.ndarray       # (n,3) [omega_i] v_i
    W2v: np.ndarray      # (n,3) [omega_i]^2 v_i
    w0: np.ndarray       # (n,3) angular parts of the screws
    mass: np.ndarray     # (n,)
    com0: np.ndarray     # (n,3) centres of mass at q = 0, space frame
    Ibar0: np.ndarray    # (n,3,3) rotational inertias about the CoM at q = 0, space axes
    A0: np.ndarray       # (n,3,3) 1 + [omega_i]^2
    vW2v: np.ndarray     # (n,3) v_i + [omega_i]^2 v_i
    basis: np.ndarray    # (n,4,16) exp([S_i] q) = (1, sin q, cos q, q) @ basis_i, flattened 4x4
    K: np.ndarray        # (n,4,6) columns (omega_i, 0), (v_i, 0), (c0_i, 1), (sqrt(lam_k) e_k, 0)
    upper: np.ndarray    # (n,n) bool, i <= j
    strict: np.ndarray   # (n,n) bool, i < j
    home: np.ndarray     # (4,4) end-effector pose at q = 0
    bound: list = field(default_factory=list, compare=False)   # [engine, handle] (_bound)

    @classmethod
    def of(cls, chain):
        n = chain.n
        W, W2, v = chain._hats("space")
        mass, com0, Ibar0 = np.zeros(n), np.zeros((n, 3)), np.zeros((n, 3, 3))
        for i, (L, G) in enumerate(zip(chain.link_homes, chain.link_inertias)):
            m = G[3, 3]
            Cx = G[:3, 3:] / m                        # [c], c = CoM in the link frame
            c = np.array([Cx[2, 1], Cx[0, 2], Cx[1, 0]])
            I_c = G[:3, :3] + m * (Cx @ Cx)           # about the CoM, link axes
            R = L[:3, :3]
            mass[i], com0[i], Ibar0[i] = m, R @ c + L[:3, 3], R @ I_c @ R.T
        idx = np.arange(n)
        w0 = np.array(chain.screws[:3].T)
        K = np.zeros((n, 4, 6))
        K[:, :3, 0], K[:, :3, 1], K[:, :3, 2], K[:, 3, 2] = w0, v, com0, 1.0
        lam, vec = np.linalg.eigh(Ibar0)
        K[:, :3, 3:] = vec * np.sqrt(np.clip(lam, 0, None))[:, None, :]
        W2v = np.einsum("nij,nj->ni", W2, v)
        Wv = np.einsum("nij,nj->ni", W, v)
        basis = np.zeros((n, 4, 4, 4))
        basis[:, 0, :3, :3], basis[:, 0, :3, 3], basis[:, 0, 3, 3] = np.eye(3) + W2, Wv, 1.0
        basis[:, 1, :3, :3], basis[:, 1, :3, 3] = W, -W2v
        basis[:, 2, :3, :3], basis[:, 2, :3, 3] = -W2, -Wv
        basis[:, 3, :3, 3] = v + W2v
        return cls(n, W, W2, v, Wv, W2v, w0, mass, com0, Ibar0,
                   np.eye(3) + W2, v + W2v, basis.reshape(n, 4, 16), K,
                   idx[:, None] <= idx[None, :], idx[:, None] < idx[None, :],
                   np.ascontiguousarray(chain.home, dtype=float))


def _states(fname, n, **arrays):
    """Joint-space arrays of shape (n,) or (B, n), all alike. Returns (single, dict of (B, n)),
    every array made safe by :func:`robodyn._value_checks.real_array` (native float64, contiguous,
    finite; complex, masked, string, object and symbolic input refused)."""
    out, B, first = {}, None, None
    for name, x in arrays.items():
        label = f"{fname}: {name}"
        if is_symbolic(x):
            raise _value_checks.refusal(
                TypeError, f"{label}: expected numbers, got sympy expressions; this is a "
                           f"numeric algorithm (robodyn.lagrange derives symbolically)")
        a = _value_checks.real_array(x, label, allow_nonfinite=True)
        if a.ndim == 1 and a.shape[0] == n:
            b = None
        elif a.ndim == 2 and a.shape[1] == n and a.shape[0] >= 1:
            b = a.shape[0]
        elif a.ndim <= 1:
            _value_checks.vector(a, n, f"{label} (one value per joint of the {n}-joint chain)")
        elif a.ndim == 2:
            raise _value_checks.refusal(
                ValueError, f"{label}: expected shape (n,) or (B, n) with n = {n} joints, "
                            f"got shape {a.shape}")
        else:
            raise _value_checks.refusal(
                ValueError, f"{label}: expected shape ({n},) for one state or (B, {n}) for a "
                            f"batch of B states, got shape {a.shape}")
        _value_checks.finite(a, label)
        if first is None:
            first, B = name, b
        elif b != B:
            want = f"({n},)" if B is None else f"({B}, {n})"
            raise _value_checks.refusal(
                ValueError, f"{label}: expected shape {want} like {first}, got shape "
                            f"{(n,) if b is None else (b, n)}"
                            + ("" if B is None or b is None else
                               f" (batch size {b} != {B})"))
        out[name] = a[None] if b is None else a
    return B is None, out


def _gravity(gravity, fname):
    if gravity is DEFAULT_GRAVITY:
        return DEFAULT_GRAVITY
    return _value_checks.vector(gravity, 3, f"{fname}: gravity (space-frame acceleration, m/s^2)")


def _wrench(wrench, single, B, fname):
    label = f"{fname}: wrench_ee"
    a = _value_checks.real_array(wrench, label, allow_nonfinite=True)
    if a.ndim == 1:
        return _value_checks.vector(a, 6, f"{label} (moment, force) in the end-effector frame")[None]
    if single or a.shape != (B, 6):
        raise _value_checks.refusal(
            ValueError, f"{label}: expected shape (6,)" + ("" if single else f" or ({B}, 6)")
                        + f", got shape {a.shape}")
    return _value_checks.finite(a, label)


# --------------------------------------------------------------------------
# vectorized spatial algebra on arrays (..., 6) and (..., 3)
# --------------------------------------------------------------------------

def _structure(dim):
    """Rows: the flattened hat (dim 3) or ad (dim 6) matrix of each unit vector, so that the
    matrix of x is one product ``x @ rows``."""
    rows = np.zeros((dim, dim * dim))
    for j in range(dim):
        e = np.eye(dim)[j]
        W = _hat_np(e[:3])
        if dim == 3:
            rows[j] = W.ravel()
            continue
        A = np.zeros((6, 6))
        A[:3, :3], A[3:, 3:], A[3:, :3] = W, W, _hat_np(e[3:])
        rows[j] = A.ravel()
    return rows


def _hat_np(w):
    return np.array([[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]])


_HAT_ROWS, _AD_ROWS = _structure(3), _structure(6)


def _hat3(c):
    """[c] as (..., 3, 3)."""
    return (c @ _HAT_ROWS).reshape(c.shape[:-1] + (3, 3))


def _ad6(V):
    """ad_V as (..., 6, 6)."""
    return (V @ _AD_ROWS).reshape(V.shape[:-1] + (6, 6))


def _cross(a, b):
    return _mv(_hat3(a), b)


def _bracket(V, X, adV=None):
    r"""Lie bracket :math:`\mathrm{ad}_V X` of twists (omega, v)."""
    return _mv(_ad6(V) if adV is None else adV, X)


def _cross_force(V, H, adV=None):
    r""":math:`-\mathrm{ad}_V^T H` for a twist V = (omega, v) and a wrench H = (m, f)."""
    return -np.einsum("...ji,...j->...i", _ad6(V) if adV is None else adV, H)


def _mv(A, x):
    """Batched matrix-vector product."""
    return np.einsum("...ij,...j->...i", A, x)


def _prefix_sum(X):
    """X_i -> sum_{l <= i} X_l along axis 1 (a loop of adds: faster than cumsum here)."""
    if X.shape[0] <= 4:                   # few states: one cumsum call is cheaper
        return np.cumsum(X, axis=1)
    out = np.empty_like(X)
    out[:, 0] = X[:, 0]
    for i in range(1, X.shape[1]):
        np.add(out[:, i - 1], X[:, i], out=out[:, i])
    return out


def _suffix_sum(X):
    """X_i -> sum_{l >= i} X_l along axis 1."""
    if X.shape[0] <= 4:
        return np.cumsum(X[:, ::-1], axis=1)[:, ::-1]
    out = np.empty_like(X)
    out[:, -1] = X[:, -1]
    for i in range(X.shape[1] - 2, -1, -1):
        np.add(out[:, i + 1], X[:, i], out=out[:, i])
    return out


@dataclass
class _Kin:
    """Configuration-dependent quantities of a batch: screws, CoMs, space-frame inertias."""
    s: np.ndarray        # (B,n,6) joint screws at q
    com: np.ndarray      # (B,n,3)
    I: np.ndarray        # (B,n,6,6) link spatial inertias in the space frame
    R: np.ndarray        # (B,n,3,3) rotations of P_i
    p: np.ndarray        # (B,n,3) translations of P_i


def _kinematics(d, q, need_inertia=True):
    B, n = q.shape
    # exp([S_i] q_i) = [R p; 0 1] with R = (1 + W^2) + sin W - cos W^2 and
    # p = q (v + W^2 v) + W v - cos W v - sin W^2 v: linear in (1, sin, cos, q), so one matrix
    # product per joint (joint-first layout (n, B, ...) keeps each joint's block contiguous)
    qT = np.ascontiguousarray(q.T)
    coef = np.empty((n, B, 4))
    coef[..., 0] = 1.0
    np.sin(qT, out=coef[..., 1])
    np.cos(qT, out=coef[..., 2])
    coef[..., 3] = qT
    E = (coef @ d.basis).reshape(n, B, 4, 4)
    P = np.empty((n, B, 4, 4))
    P[0] = E[0]
    for i in range(1, n):
        np.matmul(P[i - 1], E[i], out=P[i])
    # s_i = Ad_{P_i} S_i (= Ad_{P_{i-1}} S_i: exp([S_i] q_i) leaves S_i fixed); CoM c_i = P_i c0_i;
    # principal axes sqrt(lambda_k) e_k of the rotational inertia: Ibar = A A^T
    X = (P.reshape(n, B * 4, 4) @ d.K).reshape(n, B, 4, 6).transpose(1, 0, 2, 3)
    P = P.transpose(1, 0, 2, 3)
    w, com = X[..., :3, 0], X[..., :3, 2]
    R, p = P[..., :3, :3], P[..., :3, 3]
    s = np.concatenate([w, X[..., :3, 1] + _cross(p, w)], axis=-1)
    I = None
    if need_inertia:
        Ax = X[..., :3, 3:6]
        Ibar = Ax @ np.ascontiguousarray(np.swapaxes(Ax, -1, -2))
        mc = d.mass[:, None] * com
        I = np.zeros((B, n, 6, 6))
        # I_o = Ibar + m (|c|^2 1 - c c^T), about the space-frame origin; m [c] couples
        I[..., :3, :3] = Ibar - mc[..., :, None] * com[..., None, :]
        diag = np.einsum("...k,...k->...", mc, com)
        for k in range(3):
            I[..., k, k] += diag
            I[..., 3 + k, 3 + k] = d.mass
        Ch = _hat3(mc)
        I[..., :3, 3:] = Ch
        I[..., 3:, :3] = -Ch
    return _Kin(s, com, I, R, p)


def _base_acceleration(gravity, B):
    a0 = np.zeros((B, 6))
    a0[:, 3:] = -gravity
    return a0


def _ee_wrench_space(chain, kin, wrench):
    r"""The end-effector wrench (end-effector frame) written in the space frame:
    :math:`W_s = \mathrm{Ad}_{T_{ee}^{-1}}^T W_b`, with :math:`T_{ee} = P_n M`."""
    Rn, pn = kin.R[:, -1], kin.p[:, -1]
    R = Rn @ chain.home[:3, :3]
    pe = _mv(Rn, np.broadcast_to(chain.home[:3, 3], pn.shape)) + pn
    f = _mv(R, wrench[..., 3:])
    m = _mv(R, wrench[..., :3]) + _cross(pe, f)
    return np.concatenate([m, f], axis=-1)


def _velocities(kin, qd):
    """Link twists v_i, the screw rates sdot_i = ad_{v_i} s_i (B,n,6) and ad_{v_i} (B,n,6,6)."""
    V = _prefix_sum(kin.s * qd[..., None])
    adV = _ad6(V)
    return V, _bracket(V, kin.s, adV), adV


def _rnea(chain, kin, qd, qdd, gravity, wrench):
    V, sd, adV = _velocities(kin, qd)
    A = _prefix_sum(kin.s * qdd[..., None] + sd * qd[..., None]) \
        + _base_acceleration(gravity, qd.shape[0])[:, None]
    f = _mv(kin.I, A) + _cross_force(V, _mv(kin.I, V), adV)
    F = _suffix_sum(f)
    if wrench is not None:
        F = F + _ee_wrench_space(chain, kin, wrench)[:, None]
    return np.einsum("bnk,bnk->bn", kin.s, F)


def _out(x, single, fname=None):
    """The result (one state or the batch); with ``fname``, refused when an overflow made it
    non-finite (results already checked by :func:`_finite_result` come without it)."""
    x = x[0] if single else x
    return x if fname is None else _value_checks.finite_result(x, fname)


def _finite_result(x, fname, names):
    """``x``, or ValueError when finite input gave a non-finite result (an overflow: the
    compiled engine declines such results, so both paths end here)."""
    if np.isfinite(x).all():
        return x
    raise _value_checks.refusal(_value_checks.ResultError,
        f"{fname}: result: expected values of {names} small enough for a finite result, got an "
        f"overflow ({int(np.size(x) - np.isfinite(x).sum())} result entries inf or NaN from "
        f"finite input); scale the inputs down")


CHUNK = 200
"""Batches are processed in chunks of this many states, so that the working arrays stay in
the processor's cache (measured: about 1.5x faster than one pass over 1000 states)."""


def _chunked(f, *arrays):
    """f over slices of at most CHUNK states of the (B, ...) arrays (None passes through);
    outputs (an array or a tuple of arrays) are concatenated along the batch axis."""
    B = arrays[0].shape[0]
    if B <= CHUNK:
        return f(*arrays)
    parts = [f(*(None if a is None else a[i:i + CHUNK] for a in arrays))
             for i in range(0, B, CHUNK)]
    if isinstance(parts[0], tuple):
        return tuple(np.concatenate(p) for p in zip(*parts))
    return np.concatenate(parts)


# --------------------------------------------------------------------------
# public algorithms
# --------------------------------------------------------------------------


def inverse_dynamics(chain, q, qd, qdd, gravity=DEFAULT_GRAVITY, wrench_ee=None):
    r"""Joint forces for a motion, by the recursive Newton--Euler algorithm (RNEA):
    :math:`\tau = M(q)\ddot q + C(q,\dot q)\dot q + G(q) + J_b(q)^T W_{ee}` (eq. (5.14)).

    In the space frame (see the module notes) the link twists and accelerations are running
    sums, :math:`v_i = \sum_{k\le i} s_k\dot q_k`,
    :math:`a_i = (0,-g) + \sum_{k\le i}(s_k\ddot q_k + \mathrm{ad}_{v_k}s_k\,\dot q_k)`, each link
    needs the wrench :math:`f_i = \mathcal I^s_i a_i - \mathrm{ad}_{v_i}^T\mathcal I^s_i v_i`, and
    joint *i* carries everything outboard: :math:`\tau_i = s_i^T\sum_{l\ge i} f_l`. O(n).

    Parameters
    ----------
    chain : SerialChain with ``link_homes`` and ``link_inertias`` (numeric)
    q, qd, qdd : array_like (n,) or (B, n)
        joint positions (rad or m), velocities and accelerations; a leading axis is a batch.
    gravity : array_like (3,), space frame, m/s^2, default (0, 0, -9.81)
    wrench_ee : array_like (6,) or (B, 6), optional
        wrench (moment, force) that the end effector *exerts on its environment*, in the
        end-effector frame (N m, N) -- the ``Ftip`` of Modern Robotics.

    Returns
    -------
    ndarray (n,) or (B, n): joint torques (N m) and forces (N).

    Raises
    ------
    ValueError
        for wrong shapes, mismatched batch sizes, NaN, or a chain without inertias.
    TypeError
        for symbolic input (use :mod:`robodyn.lagrange`).

    Examples
    --------
    Holding the planar RR arm still, stretched horizontally, against gravity -y:

    >>> from robodyn.models import planar_rr
    >>> tau = inverse_dynamics(planar_rr(), [0, 0], [0, 0], [0, 0], gravity=[0, -9.81, 0])
    >>> np.round(tau, 6)      # (m1 l1/2 + m2 (l1 + l2/2)) g, m2 l2/2 g
    array([19.62 ,  4.905])
    """
    fname = "inverse_dynamics"
    d, b = _fast(chain, fname)
    if b is not None:
        tau = b[0].rnea(b[1], q, qd, qdd, gravity, wrench_ee)
        if tau is not None:
            return tau
    g = _gravity(gravity, fname)
    single, x = _states(fname, d.n, q=q, qd=qd, qdd=qdd)
    W = None if wrench_ee is None else np.ascontiguousarray(np.broadcast_to(
        _wrench(wrench_ee, single, x["q"].shape[0], fname), x["q"].shape[:1] + (6,)))
    tau = _compiled("rnea", d, x["q"], x["qd"], x["qdd"], g, W)
    if tau is None:
        tau = _chunked(lambda q, qd, qdd, W: _rnea(chain, _kinematics(d, q), qd, qdd, g, W),
                       x["q"], x["qd"], x["qdd"], W)
    return _out(_finite_result(tau, fname, "q, qd, qdd, gravity, wrench_ee"), single)


def gravity_torques(chain, q, gravity=DEFAULT_GRAVITY):
    r"""The gravity term :math:`G(q) = \partial V/\partial q` of eq. (5.14), the joint forces
    that hold the chain still: ``inverse_dynamics(chain, q, 0, 0, gravity)``.

    Parameters
    ----------
    q : array_like (n,) or (B, n)
    gravity : array_like (3,), space frame, m/s^2

    Returns
    -------
    ndarray (n,) or (B, n)

    >>> from robodyn.models import planar_rr
    >>> np.round(gravity_torques(planar_rr(), [np.pi / 2, 0], gravity=[0, -9.81, 0]), 12)
    array([0., 0.])
    """
    fname = "gravity_torques"
    d = _chain_data(chain, fname)
    if isinstance(q, np.ndarray) and q.dtype == np.float64:
        z = np.zeros(q.shape)
        out = _compiled("rnea", d, q, z, z, gravity, None)
        if out is not None:
            return _value_checks.finite_result(out, fname)
    g = _gravity(gravity, fname)
    single, x = _states(fname, d.n, q=q)
    z = np.zeros_like(x["q"])
    out = _compiled("rnea", d, x["q"], z, z, g, None)
    if out is None:
        out = _chunked(lambda q, z: _rnea(chain, _kinematics(d, q), z, z, g, None), x["q"], z)
    return _out(_finite_result(out, fname, "q, gravity"), single)


def _crba(kin, d):
    Ic = _suffix_sum(kin.I)                               # composite inertias
    F = _mv(Ic, kin.s)                                    # Ic_j s_j
    Mf = kin.s @ np.swapaxes(F, -1, -2)                   # s_i . Ic_j s_j, valid for i <= j
    return np.where(d.upper, Mf, np.swapaxes(Mf, -1, -2)), Ic


def crba(chain, q):
    r"""The mass matrix :math:`M(q)` by the composite-rigid-body algorithm.

    :math:`M(q) = \sum_i J_i^T\mathcal I_i J_i` (the metric of the Lagrangian (5.11)) is, in the
    space frame, :math:`M_{ij} = s_i^T\,\mathcal I^c_{\max(i,j)}\,s_j` with the composite inertia
    :math:`\mathcal I^c_k = \sum_{l\ge k}\mathcal I^s_l` of the links outboard of joint *k*. O(n^2).

    Parameters
    ----------
    chain : SerialChain with inertias (numeric)
    q : array_like (n,) or (B, n)

    Returns
    -------
    ndarray (n, n) or (B, n, n), symmetric positive definite (kg m^2, kg m, kg).

    Examples
    --------
    >>> from robodyn.models import planar_rr
    >>> np.round(crba(planar_rr(), [0, 0]), 6)   # m1 l1^2/3 + m2 (l1^2 + l1 l2 + l2^2/3) ...
    array([[2.666667, 0.833333],
           [0.833333, 0.333333]])
    """
    fname = "crba"
    d, b = _fast(chain, fname)
    if b is not None:
        M = b[0].crba(b[1], q)
        if M is not None:
            return M
    single, x = _states(fname, d.n, q=q)
    M = _compiled("crba", d, x["q"])
    if M is None:
        M = _chunked(lambda q: _crba(_kinematics(d, q), d)[0], x["q"])
    return _out(_finite_result(M, fname, "q"), single)


def coriolis_matrix(chain, q, qd):
    r"""The Coriolis matrix :math:`C(q,\dot q)` of eq. (5.14) from the Christoffel symbols
    (5.13): :math:`C_{ij} = \sum_k\Gamma_{ijk}\dot q_k`,
    :math:`\Gamma_{ijk} = \tfrac12(\partial M_{ij}/\partial q_k + \partial M_{ik}/\partial q_j
    - \partial M_{jk}/\partial q_i)`, exactly (no finite differences).

    Summing over *k* gives :math:`C = \tfrac12(\dot M + N - N^T)` with
    :math:`N_{ij} = \partial(M\dot q)_i/\partial q_j`. From :math:`M_{ij} = s_i^T\mathcal I^c_m s_j`
    (:math:`m = \max(i,j)`), :math:`\partial s_i/\partial q_k = \mathrm{ad}_{s_k}s_i` (k < i)
    and :math:`M\dot q = (s_i^T p_i)_i` with the outboard momentum
    :math:`p_i = \sum_{l\ge i}\mathcal I^s_l v_l`, this is

    .. math:: C = Q + \tfrac12(K - Z + Z^T),\quad Q_{ij} = s_i^T\mathcal I^c_m\dot s_j,\quad
              K_{ij} = s_i^T\dot{\mathcal I}^c_m s_j,\quad
              Z_{ij} = [j>i]\,(\mathrm{ad}_{s_j}s_i)^T p_j,

    so that :math:`C + C^T = Q + Q^T + K = \dot M` (Ṁ − 2C is skew) and
    :math:`C\dot q` = ``inverse_dynamics(q, qd, 0, gravity=0)``. O(n^2).

    Parameters
    ----------
    q, qd : array_like (n,) or (B, n)

    Returns
    -------
    ndarray (n, n) or (B, n, n)

    Examples
    --------
    The planar RR arm: :math:`C = h\begin{bmatrix}-\dot q_2 & -\dot q_1-\dot q_2\\ \dot q_1 &
    0\end{bmatrix}` with :math:`h = m_2 l_1 (l_2/2)\sin q_2`:

    >>> from robodyn.models import planar_rr
    >>> np.round(coriolis_matrix(planar_rr(), [0, np.pi / 2], [1.0, 2.0]), 12)
    array([[-1. , -1.5],
           [ 0.5,  0. ]])
    """
    fname = "coriolis_matrix"
    d = _chain_data(chain, fname)
    C = _compiled("coriolis", d, q, qd)
    if C is not None:
        return _value_checks.finite_result(C, fname)
    single, x = _states(fname, d.n, q=q, qd=qd)
    C = _compiled("coriolis", d, x["q"], x["qd"])
    if C is None:
        C = _chunked(lambda q, qd: _coriolis(_kinematics(d, q), d, qd), x["q"], x["qd"])
    return _out(_finite_result(C, fname, "q, qd"), single)


def _coriolis(kin, d, qd):
    s = kin.s
    V, sd, adV = _velocities(kin, qd)
    Ic = _suffix_sum(kin.I)
    X = kin.I @ adV
    Icd = -_suffix_sum(X + np.swapaxes(X, -1, -2))        # d/dt of the composite inertias
    Ics, Icsd = _mv(Ic, s), _mv(Ic, sd)
    T = np.swapaxes
    A1 = s @ T(Icsd, -1, -2)                              # s_i . Ic_j sdot_j   (i <= j)
    A2 = Ics @ T(sd, -1, -2)                              # Ic_i s_i . sdot_j   (i > j)
    Q = np.where(d.upper, A1, A2)
    Kf = s @ T(_mv(Icd, s), -1, -2)
    K = np.where(d.upper, Kf, T(Kf, -1, -2))
    P = _suffix_sum(_mv(kin.I, V))                        # outboard momenta p_j
    w = -_cross_force(s, P)                               # ad_{s_j}^T p_j
    Z = np.where(d.strict, s @ T(w, -1, -2), 0.0)
    return Q + 0.5 * (K - Z + T(Z, -1, -2))


def forward_dynamics(chain, q, qd, tau, gravity=DEFAULT_GRAVITY, wrench_ee=None, method="aba",
                     cond_warn=COND_WARN):
    r"""Joint accelerations :math:`\ddot q = M^{-1}(\tau - C\dot q - G - J_b^T W_{ee})`
    (eq. (5.14) solved for :math:`\ddot q`).

    ``method='aba'`` (default): the articulated-body algorithm, O(n), without forming M. In
    the space frame, inward from the tip: :math:`U_i = \mathcal I^A_i s_i`,
    :math:`D_i = s_i^TU_i`, :math:`u_i = \tau_i - s_i^Tp^A_i`, and the parent receives
    :math:`\mathcal I^A_i - U_iU_i^T/D_i` and :math:`p^A_i + (\mathcal I^A_i - U_iU_i^T/D_i)c_i +
    U_iu_i/D_i` (:math:`c_i = \dot s_i\dot q_i`); outward from the base
    :math:`\ddot q_i = (u_i - U_i^T(a_{i-1} + c_i))/D_i`.
    ``method='crba'``: :func:`crba`, the bias from the RNEA, and a Cholesky solve, O(n^3).

    Parameters
    ----------
    q, qd, tau : array_like (n,) or (B, n)
    gravity : array_like (3,), space frame, m/s^2
    wrench_ee : array_like (6,) or (B, 6), optional, as in :func:`inverse_dynamics`
    method : ``'aba'`` or ``'crba'``
    cond_warn : float
        warn (:class:`IllConditionedWarning`) when the condition number of M exceeds it.
        The test uses the pivots :math:`D_i` (those of the factorization
        :math:`M = L^TDL`; :math:`\max D/\min D \le \mathrm{cond}\,M`), and the message
        reports the exact condition number.

    Returns
    -------
    ndarray (n,) or (B, n), rad/s^2 or m/s^2.

    Raises
    ------
    ValueError
        for bad shapes or values, an unknown method, or a singular mass matrix.

    Examples
    --------
    >>> from robodyn.models import planar_rr
    >>> chain, q, qd = planar_rr(), [0.3, -0.5], [1.0, 0.2]
    >>> qdd = forward_dynamics(chain, q, qd, [0.5, -0.1], gravity=[0, -9.81, 0])
    >>> np.allclose(inverse_dynamics(chain, q, qd, qdd, gravity=[0, -9.81, 0]), [0.5, -0.1])
    True
    """
    fname = "forward_dynamics"
    if method not in ("aba", "crba"):
        raise _value_checks.refusal(
            ValueError, f"{fname}: method: expected 'aba' or 'crba', got {method!r}")
    d, b = _fast(chain, fname)
    if cond_warn is not COND_WARN:
        cond_warn = float(_value_checks.positive(cond_warn, f"{fname}: cond_warn"))
    if b is not None and method == "aba":
        out = b[0].aba(b[1], q, qd, tau, gravity, wrench_ee, cond_warn)
        if out is not None:
            if type(out) is not tuple:
                return out
            _check_pivots(out[1], chain, d, np.atleast_2d(q), cond_warn, fname)
            return out[0]
    g = _gravity(gravity, fname)
    single, x = _states(fname, d.n, q=q, qd=qd, tau=tau)
    B = x["q"].shape[0]
    W = None if wrench_ee is None else _wrench(wrench_ee, single, B, fname)
    if W is not None:
        W = np.ascontiguousarray(np.broadcast_to(W, (B, 6)))
    if method == "aba":
        out = _compiled("aba", d, x["q"], x["qd"], x["tau"], g, W, cond_warn)
        if out is not None:
            if type(out) is tuple:
                _check_pivots(out[1], chain, d, x["q"], cond_warn, fname)
                out = out[0]
            return _out(_finite_result(out, fname, "q, qd, tau, gravity, wrench_ee"), single)

    def crba_solve(q, qd, tau, W):
        kin = _kinematics(d, q)
        M, _ = _crba(kin, d)
        b = _rnea(chain, kin, qd, np.zeros_like(qd), g, W)
        try:
            L = np.linalg.cholesky(M)
        except np.linalg.LinAlgError:            # not positive definite: refused below
            return np.full_like(q, np.nan), np.zeros_like(q)
        y = np.linalg.solve(L, (tau - b)[..., None])
        qdd = np.linalg.solve(np.swapaxes(L, -1, -2), y)[..., 0]
        return qdd, np.diagonal(L, axis1=-2, axis2=-1) ** 2

    def aba(q, qd, tau, W):
        return _aba(chain, _kinematics(d, q), d, qd, tau, g, W)

    qdd, D = _chunked(crba_solve if method == "crba" else aba, x["q"], x["qd"], x["tau"], W)
    _check_pivots(D, chain, d, x["q"], cond_warn, fname)
    return _out(_finite_result(qdd, fname, "q, qd, tau, gravity, wrench_ee"), single)


def _aba(chain, kin, d, qd, tau, gravity, wrench):
    n, B = d.n, qd.shape[0]
    s = kin.s
    V, sd, adV = _velocities(kin, qd)
    c = sd * qd[..., None]
    IA = kin.I.copy()
    pA = _cross_force(V, _mv(kin.I, V), adV)
    if wrench is not None:
        pA[:, -1] += _ee_wrench_space(chain, kin, wrench)
    if B == 1:                  # one state: the same recursion on plain 6-vectors (less overhead)
        return _aba_one(s[0], IA[0], pA[0], c[0], tau[0], gravity, n)
    U, D, u = np.empty((B, n, 6)), np.empty((B, n)), np.empty((B, n))
    qdd = np.empty((B, n))
    with np.errstate(divide="ignore", invalid="ignore"):     # D = 0 is refused afterwards
        for i in range(n - 1, -1, -1):
            Ui = _mv(IA[:, i], s[:, i])
            Di = np.einsum("bk,bk->b", s[:, i], Ui)
            ui = tau[:, i] - np.einsum("bk,bk->b", s[:, i], pA[:, i])
            U[:, i], D[:, i], u[:, i] = Ui, Di, ui
            if i > 0:
                Ia = IA[:, i] - np.einsum("bi,bj->bij", Ui, Ui / Di[:, None])
                IA[:, i - 1] += Ia
                pA[:, i - 1] += pA[:, i] + _mv(Ia, c[:, i]) + Ui * (ui / Di)[:, None]
        a = _base_acceleration(gravity, B)
        for i in range(n):
            a += c[:, i]
            qdd[:, i] = (u[:, i] - np.einsum("bk,bk->b", U[:, i], a)) / D[:, i]
            a += s[:, i] * qdd[:, i, None]
    return qdd, D


def _aba_one(s, IA, pA, c, tau, gravity, n):
    """The recursions of :func:`_aba` for a single state (arrays without the batch axis)."""
    U, D, u = [None] * n, np.empty(n), np.empty(n)
    for i in range(n - 1, -1, -1):
        Ui = IA[i] @ s[i]
        Di = float(s[i] @ Ui)
        ui = float(tau[i] - s[i] @ pA[i])
        U[i], D[i], u[i] = Ui, Di, ui
        if i > 0 and Di > 0:
            Ia = IA[i] - np.outer(Ui, Ui / Di)
            IA[i - 1] += Ia
            pA[i - 1] += pA[i] + Ia @ c[i] + Ui * (ui / Di)
    a = np.zeros(6)
    a[3:] = -gravity
    qdd = np.empty(n)
    for i in range(n):
        a += c[i]
        qdd[i] = (u[i] - U[i] @ a) / D[i] if D[i] > 0 else np.nan
        a += s[i] * qdd[i]
    return qdd[None], D[None]


def _check_pivots(D, chain, d, q, cond_warn, fname):
    """Refuse a singular mass matrix; warn for an ill-conditioned one (pivots of M = L^T D L)."""
    Dmax = D.max(axis=1)
    bad = ~(D.min(axis=1) > 1e-14 * Dmax)                    # also catches NaN
    if bad.any():
        k = int(np.argmax(bad))
        joints = np.flatnonzero(~(D[k] > 1e-14 * Dmax[k])).tolist()
        raise _value_checks.refusal(
            ValueError, f"{fname}: the mass matrix of {chain!r} is singular at state {k} "
                        f"(q = {np.round(q[k], 6).tolist()}); pivots of joints {joints} "
                        f"vanish; check the link inertias (a slender rod spinning about its "
                        f"own axis has none)")
    ratio = Dmax / D.min(axis=1)
    if ratio.max() > cond_warn:
        k = int(np.argmax(ratio))
        M, _ = _crba(_kinematics(d, q[k:k + 1]), d)
        cond = np.linalg.cond(M[0])
        warnings.warn(f"{fname}: the mass matrix of {chain!r} is nearly singular at state {k}: "
                      f"condition number {cond:.3g} > cond_warn = {cond_warn:.3g}; the "
                      f"accelerations may be inaccurate (a link with almost no inertia?)",
                      IllConditionedWarning, stacklevel=3)


def mechanical_energy(chain, q, qd, gravity=DEFAULT_GRAVITY):
    r"""Total mechanical energy :math:`E = T + V` with :math:`T = \tfrac12\dot q^TM(q)\dot q =
    \tfrac12\sum_i v_i^T\mathcal I^s_i v_i` (the Lagrangian (5.11) is T - V) and
    :math:`V = -\sum_i m_i\,g^Tc_i(q)` (:math:`c_i` the centre of mass of link *i*, space frame;
    zero at the space-frame origin).

    Parameters
    ----------
    q, qd : array_like (n,) or (B, n)
    gravity : array_like (3,), space frame, m/s^2

    Returns
    -------
    float, or ndarray (B,), joules.

    >>> from robodyn.models import planar_rr
    >>> float(round(mechanical_energy(planar_rr(), [0, 0], [1.0, 0], gravity=[0, -9.81, 0]), 12))
    1.333333333333
    """
    fname = "mechanical_energy"
    d = _chain_data(chain, fname)
    single, x = _states(fname, d.n, q=q, qd=qd)
    g = _gravity(gravity, fname)

    def energy(q, qd):
        kin = _kinematics(d, q)
        V = _prefix_sum(kin.s * qd[..., None])
        T = 0.5 * np.einsum("bnk,bnk->b", V, _mv(kin.I, V))
        return T - np.einsum("n,bnk,k->b", d.mass, kin.com, g)

    E = _chunked(energy, x["q"], x["qd"])
    return float(_value_checks.finite_result(E, fname)[0]) if single else _value_checks.finite_result(E, fname)


def _skew(v):
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def newton_euler_about_point(m: Mass, I_cm: RotationalInertia, c, omega):
    r"""The Newton--Euler equations of a rigid body about a point P that is not its centre of
    mass (review eq. (37), corrected): :math:`\mathcal M\,(a_P, \alpha) + h = (F, \tau_P)` with

    .. math:: \mathcal M = \begin{bmatrix} mI & -m[c]^\times\\ m[c]^\times &
              I_{cm} - m[c]^\times[c]^\times\end{bmatrix},\qquad
              h = \begin{bmatrix} m[\omega]^\times[\omega]^\times c\\
              [\omega]^\times(I_{cm} - m[c]^\times[c]^\times)\omega\end{bmatrix},

    c the position of the centre of mass relative to P, :math:`[\cdot]^\times` the cross-product
    matrices of eq. (38)--(39), all vectors in one frame; :math:`a_P` is the acceleration of P,
    F the total force and :math:`\tau_P` the total moment about P. (The review prints the lower
    left block as :math:`-m[c]^\times` and the upper bias as :math:`m[c]^\times[c]^\times c`,
    which is zero.)

    Returns ``(M6, h)``: ndarray (6, 6) and (6,).

    >>> M6, h = newton_euler_about_point(2.0, np.eye(3), [1.0, 0, 0], [0, 0, 3.0])
    >>> h[:3].tolist()                        # centripetal: -m w^2 c
    [-18.0, 0.0, 0.0]
    """
    fname = "newton_euler_about_point"
    for k, x in (("m", m), ("I_cm", I_cm), ("c", c), ("omega", omega)):
        _value_checks.no_text(x, f"{fname}: {k}")
        if _value_checks.is_symbolic(x) and not (k == "m" and getattr(x, "is_number", False)):
            raise _value_checks.error(f"{fname}: {k}", "numbers", "sympy expressions",
                                "a numeric function: substitute numbers first", exc=TypeError)
    m = _value_checks.real_number(m, f"{fname}: m")
    if not m > 0:
        raise _value_checks.refusal(ValueError, f"{fname}: m: expected a positive mass, got {m}")
    I_cm = _value_checks.matrix(I_cm, (3, 3), f"{fname}: I_cm (inertia about the centre of mass)")
    _meaning_checks.inertia_matrix(I_cm, f"{fname}: I_cm")
    c = _value_checks.vector(c, 3, f"{fname}: c (centre of mass relative to P)")
    w = _value_checks.vector(omega, 3, f"{fname}: omega (angular velocity)")
    C, W = _skew(c), _skew(w)
    I_P = I_cm - m * C @ C
    M6 = np.block([[m * np.eye(3), -m * C], [m * C, I_P]])
    h = np.concatenate([m * W @ W @ c, W @ I_P @ w])
    return _value_checks.finite_result((M6, h), fname)

from .._boundary import seal as _seal  # noqa: E402 -- the one boundary (issue 28): last, over the finished module
_seal(globals(), {f: {"self_checked": True} for f in (
    "inverse_dynamics", "forward_dynamics", "crba", "gravity_torques")})
