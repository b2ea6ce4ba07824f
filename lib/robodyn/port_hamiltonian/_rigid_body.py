"""Rigid bodies on SE(3) and joints as Lie subgroups: the first half of
:mod:`robodyn.port_hamiltonian` (Part VI), which imports and re-exports every public name here
(``Subgroup``, ``SUBGROUPS``, ``coadjoint``, ``euler_poincare``, ``dexp_inverse``,
``rigid_body_step``, ``check_pose``, ``pose_error``): use them from there. Also the shared
private helpers of vehicle and port_hamiltonian (numeric argument checks, the coadjoint
product, the LAPACK solve)."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..kinds import RigidPose, SpatialInertia, TimeStep, Tolerance
from .. import _value_checks
from ..dynamics._recursions import _ad6, _hat_np
from ..rigid_motion._kinematics import _check_spatial_inertia, exp_se3

# --------------------------------------------------------------------------
# Lie-algebra helpers (float and complex arrays; complex for complex-step derivatives)
# --------------------------------------------------------------------------


def _hat_c(w):
    return np.array([[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]])


def coadjoint(p):
    r"""The matrix :math:`\widetilde{ad}_p` with :math:`\widetilde{ad}_p\,V = ad_V^T p` (ph-37).

    For a momentum :math:`p = (h, f)` (angular, linear) it is
    :math:`\begin{pmatrix}[h] & [f]\\ [f] & 0\end{pmatrix}`, skew-symmetric: the reason the
    Lie--Poisson term of (ph-37) does no work.

    Parameters
    ----------
    p : array_like (6,), a momentum (body frame, (angular, linear))

    Returns
    -------
    ndarray(6, 6)

    >>> P = coadjoint([1, 2, 3, 4, 5, 6])
    >>> bool(np.allclose(P, -P.T))
    True
    """
    p = _vec(p, 6, "coadjoint: p")
    return _coadjoint(p)


def _coadjoint(p):
    h, f = _hat_np(p[:3]), _hat_np(p[3:])
    P = np.zeros((6, 6))
    P[:3, :3] = h
    P[:3, 3:] = f
    P[3:, :3] = f
    return P


def _dposv(A, b):
    """LAPACK's dposv: (factor, x, info) of A x = b for symmetric positive definite A."""
    if not _LAPACK:
        from scipy.linalg.lapack import dposv
        _LAPACK.append(dposv)
    return _LAPACK[0](A, b)


_LAPACK = []


def _coadjoint_apply(p, v):
    r""":math:`\widetilde{ad}_p v` for 6-vectors (the product of :func:`_coadjoint`'s matrix with
    v), written out: :math:`(p_\omega\times v_\omega + p_v\times v_v,\ p_v\times v_\omega)`."""
    a0, a1, a2, b0, b1, b2 = p.tolist()
    w0, w1, w2, u0, u1, u2 = v.tolist()
    return np.array([a1 * w2 - a2 * w1 + b1 * u2 - b2 * u1,
                     a2 * w0 - a0 * w2 + b2 * u0 - b0 * u2,
                     a0 * w1 - a1 * w0 + b0 * u1 - b1 * u0,
                     b1 * w2 - b2 * w1, b2 * w0 - b0 * w2, b0 * w1 - b1 * w0])


def _num(a, name):
    """A checked array that must hold numbers (``_value_checks.vector``/``matrix`` pass sympy
    expressions through as a Matrix): TypeError for symbols."""
    if not isinstance(a, np.ndarray):
        raise _value_checks.error(name, "numbers", "sympy expressions (substitute numbers first)",
                            exc=TypeError)
    return a


def _vec(x, n, name):
    """A finite float vector of length n (numbers only), or the checks' error naming ``name``."""
    return _num(_value_checks.vector(x, n, name), name)


_SUM = np.add.reduce


def _finite(out, fname):
    """``_value_checks.finite_result`` with a sum as its fast test (a NaN/inf entry shows in the sum;
    a sum that overflows on finite entries goes on to the full test). A short vector is summed
    as Python floats (0.5 us against 2 us for numpy's reduction: the integrator's hot path)."""
    if type(out) is np.ndarray and math.isfinite(
            sum(out.tolist()) if out.ndim == 1 and out.size <= 64 else _SUM(out, None)):
        return out
    return _value_checks.finite_result(out, fname)


def _plain(x, size):
    """x is a plain float64 vector of this size (the compiled engine checks finiteness)."""
    return type(x) is np.ndarray and x.dtype == np.float64 and x.shape == (size,)


def euler_poincare(inertia: SpatialInertia, V, W=None):
    r"""Body acceleration of one rigid body (paper §2.1, Euler--Poincaré):
    :math:`\mathcal I\dot{\mathcal V} = ad_{\mathcal V}^T\mathcal I\mathcal V + \mathcal W`.

    Parameters
    ----------
    inertia : array_like (6, 6), spatial inertia in the body frame, (omega, v) order
    V : array_like (6,), body twist (rad/s, m/s)
    W : array_like (6,), body wrench (N m, N), default zero

    Returns
    -------
    ndarray(6,), :math:`\dot{\mathcal V}`

    >>> from robodyn import spatial_inertia
    >>> I = spatial_inertia(1.0, [1.0, 2.0, 3.0])
    >>> np.round(3 * euler_poincare(I, [1, 1, 0, 0, 0, 0]), 12)    # I3 w3' = (I1 - I2) w1 w2
    array([ 0.,  0., -1.,  0.,  0.,  0.])
    """
    G = _check_spatial_inertia(inertia, "euler_poincare: inertia")
    V = _vec(V, 6, "euler_poincare: V")
    W = np.zeros(6) if W is None else _vec(W, 6, "euler_poincare: W")
    return _value_checks.finite_result(np.linalg.solve(G, _ad6(V).T @ (G @ V) + W), "euler_poincare")


DEXP_ROTATION = 1.0
"""The largest rotation :math:`|\omega|` (rad) of ``u`` that :func:`dexp_inverse` takes: there
the first term left out, :math:`\tfrac1{720}\mathrm{ad}_u^4`, is at most 0.14 % of x (a step's
rotation; the full series diverges at :math:`2\pi`)."""


def dexp_inverse(u, x, order=4):
    r"""The inverse derivative of the exponential on se(3), truncated:
    :math:`\mathrm{dexp}^{-1}_u x = x - \tfrac12[u, x] + \tfrac1{12}[u,[u,x]] + \dots`
    (terms of order below ``order`` in u; 4 is what a fourth-order Munthe-Kaas step needs),
    for a step's small u: a rotation :math:`|\omega|` above 1 rad is refused
    (the truncated series would be far from the function it stands for).

    >>> dexp_inverse(np.zeros(6), np.ones(6)).tolist()
    [1.0, 1.0, 1.0, 1.0, 1.0, 1.0]
    >>> dexp_inverse([0, 0, 6.0, 0, 0, 0], np.ones(6))
    Traceback (most recent call last):
    ...
    robodyn.errors.ArgumentError: dexp_inverse: u: expected a step's twist, rotation |omega| <= 1 rad (the truncated series' domain), got |omega| = 6 (take smaller steps)
    """
    fname = "dexp_inverse"
    u = _value_checks.vector(u, 6, f"{fname}: u")
    x = _value_checks.vector(x, 6, f"{fname}: x")
    order = _value_checks.size(order, f"{fname}: order", low=2, high=4,
                         hint="the series is implemented through order 4 (its order-3 term "
                              "vanishes); a higher order would be silently truncated")
    if _value_checks.is_symbolic(u) or _value_checks.is_symbolic(x):
        raise _value_checks.error(f"{fname}: u", "numbers", "sympy expressions", exc=TypeError)
    w = float(np.linalg.norm(u[:3]))
    if w > DEXP_ROTATION:
        raise _value_checks.error(f"{fname}: u", f"a step's twist, rotation |omega| <= "
                                  f"{DEXP_ROTATION:g} rad (the truncated series' domain)",
                                  f"|omega| = {w:.3g}", "take smaller steps")
    return _value_checks.finite_result(_dexp_inverse(u, x, order), fname)


def _dexp_inverse(u, x, order):
    """:func:`dexp_inverse` at checked float u, x."""
    A = _ad6(u)
    ax = A @ x
    out = x - 0.5 * ax
    if order > 2:
        out = out + (A @ ax) / 12.0
    return out


def rigid_body_step(H: RigidPose, V, dt: TimeStep, accel):
    r"""One fourth-order Runge--Kutta--Munthe-Kaas step of :math:`\dot H = H[\mathcal V]`,
    :math:`\dot{\mathcal V} = a(H, \mathcal V)` (body twist): the pose moves by one exponential,
    :math:`H_{k+1} = H_k\exp([\Theta])`, so it stays a rigid motion to rounding error.

    Parameters
    ----------
    H : ndarray(4, 4) pose; V : ndarray(6,) body twist; dt : step (s)
    accel : callable ``accel(H, V) -> ndarray(6,)``

    Returns
    -------
    (H_next, V_next)

    >>> from robodyn import spatial_inertia
    >>> I = spatial_inertia(2.0, [0.1, 0.2, 0.3])
    >>> H, V = np.eye(4), np.array([0.0, 0, 1, 1, 0, 0])
    >>> for _ in range(100):
    ...     H, V = rigid_body_step(H, V, 0.0314159265, lambda H, V: euler_poincare(I, V))
    >>> bool(pose_error(H) < 1e-13)
    True
    """
    fname = "rigid_body_step"
    H = _check_pose(H, f"{fname}: H")
    V = _vec(V, 6, f"{fname}: V")
    dt = _value_checks.real_number(dt, f"{fname}: dt", low=0, strict_low=True, hint="a time step in s")
    if not callable(accel):
        raise _value_checks.error(f"{fname}: accel", "a callable accel(H, V) -> 6 numbers", accel,
                            exc=TypeError)
    ks, accs = [], []
    for c in (0.0, 0.5, 0.5, 1.0):
        theta = c * dt * ks[-1] if ks else np.zeros(6)
        Vi = V + c * dt * accs[-1] if accs else V
        Hi = H @ _exp_finite(theta, fname) if c else H
        accs.append(_accel_value(_call_accel(accel, Hi, Vi, fname), fname))
        ks.append(_dexp_inverse(-theta, Vi, 4))  # H = H0 exp(theta): V = dexp_{-theta} theta'
    theta = dt / 6 * (ks[0] + 2 * ks[1] + 2 * ks[2] + ks[3])
    V_next = V + dt / 6 * (accs[0] + 2 * accs[1] + 2 * accs[2] + accs[3])
    H_next = _reorthonormalize(H @ _exp_finite(theta, fname))
    return _finite(H_next, fname), _finite(V_next, fname)


def _call_accel(accel, H, V, fname):
    """The user's ``accel(H, V)``; an overflow it reports (robodyn's ``...: result:`` error, as
    :func:`euler_poincare` raises at too large a twist) is the step's: ``fname: result``."""
    try:
        return accel(H, V)
    except ValueError as err:
        if ": result:" not in str(err):
            raise
        raise _value_checks.refusal(
            ValueError, f"{fname}: result: expected finite numbers, got an overflow in "
                        f"accel(H, V) at a stage of the step ({err})") from err


def _accel_value(a, fname):
    """The value of the user's ``accel`` at a stage: 6 finite numbers. NaN/inf from numbers is
    the step's overflow (``fname: result``: the state is too large for float64, or accel
    fails there); anything else is refused as accel's value."""
    if isinstance(a, (np.ndarray, list, tuple)) and np.asarray(a).dtype.kind == "f" \
            and not np.isfinite(np.asarray(a)).all():
        raise _value_checks.refusal(
            ValueError, f"{fname}: result: expected finite numbers from accel(H, V) at a stage "
                        f"of the step, got NaN or infinity (an overflow: the state is too "
                        f"large for float64 arithmetic, or accel fails there)")
    return _vec(a, 6, f"{fname}: accel (its value, 6 numbers)")


def _exp_finite(theta, fname):
    """exp_se3 of an intermediate twist, or ``fname: result`` when it overflowed."""
    return exp_se3(_finite(theta, fname))


def _reorthonormalize(H):
    """Identity on exact rigid motions; removes the last rounding error of a product of two
    (one polar step), so that long runs keep :func:`pose_error` at rounding level."""
    R = H[:3, :3]
    R = 1.5 * R - 0.5 * R @ R.T @ R
    out = H.copy()
    out[:3, :3] = R
    out[3] = (0.0, 0.0, 0.0, 1.0)
    return out


def pose_error(H):
    r"""How far a 4x4 matrix is from a rigid motion: :math:`\max(|R^TR - 1|, |\det R - 1|,
    |\text{bottom row} - (0,0,0,1)|)`.

    >>> pose_error(np.eye(4))
    0.0
    >>> pose_error(np.diag([1.0, 1.0, 2.0, 1.0]))
    3.0
    """
    H = _num(_value_checks.matrix(H, (4, 4), "pose_error: H"), "pose_error: H")
    return _value_checks.finite_result(_pose_error(H), "pose_error")


def _pose_error(H):
    """:func:`pose_error` of a checked float 4x4 matrix."""
    R = H[:3, :3]
    return float(max(np.abs(R.T @ R - np.eye(3)).max(), abs(np.linalg.det(R) - 1.0),
                     np.abs(H[3] - (0, 0, 0, 1)).max()))


def check_pose(H: RigidPose, name="check_pose: H", tol: Tolerance = 1e-6):
    """A 4x4 rigid motion as a float array, or ValueError saying how far it is from one.
    ``name`` (text) labels H in the messages, e.g. ``"my_function: pose"``.

    >>> check_pose(np.diag([1.0, 1.0, 2.0, 1.0]), "f: pose")
    Traceback (most recent call last):
    ...
    robodyn.errors.ArgumentError: check_pose: H (rotation block): expected a rotation matrix (R^T R = I, det R = +1), got |R^T R - I| = 3 (orthonormal columns, no scaling or reflection)
    """
    if not isinstance(name, str):
        raise _value_checks.error("check_pose: name", "a string naming the argument", name,
                            exc=TypeError)
    tol = _value_checks.tolerance(tol, "check_pose: tol", upper=0.1)
    return _check_pose(H, name, tol)


def _check_pose(H, name, tol=1e-6):
    """:func:`check_pose` with a trusted name and tolerance (robodyn's own callers)."""
    H = _value_checks.matrix(H, (4, 4), name)
    if _value_checks.is_symbolic(H):
        raise _value_checks.refusal(
            TypeError, f"{name}: expected a numeric 4x4 pose, got a symbolic matrix")
    err = _pose_error(H)
    if err > tol:
        raise _value_checks.refusal(
            ValueError, f"{name}: expected a rigid motion [R p; 0 0 0 1] with R a rotation, "
                        f"got a matrix {err:.3g} away from one (tolerance {tol:g})")
    return H


# --------------------------------------------------------------------------
# joints as Lie subgroups
# --------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Subgroup:
    r"""A joint as a Lie subgroup of SE(3) (paper §2.2 and appendix A).

    Attributes
    ----------
    name : ``"revolute"``, ``"prismatic"``, ``"planar"`` or ``"floating"``
    basis : ndarray(6, k), orthonormal basis S of the subalgebra (columns, (omega, v)):
        a subalgebra velocity ``v`` (k numbers) is the twist ``S v``.

    The configuration map is :math:`\varphi(x) = \exp([S x])` for the one-parameter groups
    and coordinates :math:`(\theta, x, y)\mapsto` (rotation about z by theta, translation
    (x, y, 0)) for the planar group; the velocity map :math:`\chi_h` is :math:`\dot H = H[Sv]`.
    ``coadjoint(p)`` is :math:`S^T\widetilde{ad}_{Sp}S`, the Lie--Poisson operator of the
    subalgebra (:math:`ad^{G}_v = S^T ad_{Sv} S` because S spans a subalgebra).

    >>> SUBGROUPS["planar"].dim
    3
    >>> SUBGROUPS["planar"].coadjoint([1.0, 2.0, 3.0]).tolist()
    [[0.0, -3.0, 2.0], [3.0, 0.0, 0.0], [-2.0, 0.0, 0.0]]

    Built directly, the basis is checked against the name: revolute a unit twist with
    nonzero angular part and zero pitch, prismatic a unit translation, planar an orthonormal
    basis of the xy-plane algebra (its configuration map is the xy one), floating 6 x 6
    orthonormal.

    >>> Subgroup("prismatic", [[0], [0], [0], [0], [0], [2.0]])
    Traceback (most recent call last):
    ...
    robodyn.errors.ArgumentError: Subgroup: basis: expected a unit twist (|S| = 1), got |S| = 2
    """

    name: str
    basis: np.ndarray

    def __post_init__(self):
        name = _value_checks.choice(self.name, "Subgroup: name", _SUBGROUP_DIMS)
        k = _SUBGROUP_DIMS[name]
        what = "Subgroup: basis"
        S = np.array(_num(_value_checks.matrix(self.basis, (6, k), what), what), dtype=float)
        tol = 1e-9
        if k == 1:
            w, v, norm = S[:3, 0], S[3:, 0], float(np.linalg.norm(S))
            if abs(norm - 1.0) > tol:
                raise _value_checks.error(what, "a unit twist (|S| = 1)", f"|S| = {norm:.6g}")
            if name == "revolute" and not (w @ w > tol and abs(w @ v) < tol):
                raise _value_checks.error(what, "a rotation: omega != 0 and omega . v = 0 (pitch 0)",
                                    f"omega = {w.tolist()}, v = {v.tolist()}")
            if name == "prismatic" and w @ w > tol:
                raise _value_checks.error(what, "a translation (omega = 0)", f"omega = {w.tolist()}")
        else:
            err = float(np.abs(S.T @ S - np.eye(k)).max())
            if err > tol:
                raise _value_checks.error(what, "orthonormal columns", f"|S^T S - 1| = {err:.3g}")
            if name == "planar":
                P = np.zeros(6)
                P[2:5] = 1.0
                off = float(np.abs(S @ S.T - np.diag(P)).max())
                if off > tol:
                    raise _value_checks.error(what, "a basis of the planar algebra span(e_omega_z, "
                                        "e_vx, e_vy)", f"a basis {off:.3g} away from it")
        S.setflags(write=False)
        object.__setattr__(self, "basis", S)

    @property
    def dim(self) -> int:
        return self.basis.shape[1]

    def twist(self, v):
        """The 6-vector twist :math:`S v` of subalgebra coordinates v (k,)."""
        return self.basis @ _vec(v, self.dim, f"Subgroup({self.name}).twist: v")

    def coadjoint(self, p):
        """:math:`\\widetilde{ad}_p` on the subalgebra's dual, k x k."""
        p = _vec(p, self.dim, f"Subgroup({self.name}).coadjoint: p")
        S = self.basis
        return _finite(S.T @ _coadjoint(S @ p) @ S, f"Subgroup({self.name}).coadjoint")

    def contains(self, H, tol: Tolerance = 1e-9) -> bool:
        """True when the pose H (a 4x4 rigid motion, refused if it is farther than
        max(tol, 1e-6) from one) lies in the subgroup, within ``tol`` (a positive number, at
        most 0.1)."""
        fname = f"Subgroup({self.name}).contains"
        tol = _value_checks.tolerance(tol, f"{fname}: tol", upper=0.1)
        H = _check_pose(H, f"{fname}: H", tol=max(tol, 1e-6))     # a pose, else refused
        if _pose_error(H) > tol:
            return False
        if self.name == "floating":
            return True
        if self.name == "planar":
            R = H[:3, :3]
            return bool(abs(H[2, 3]) < tol and np.abs(R[2] - (0, 0, 1)).max() < tol
                        and np.abs(R[:, 2] - (0, 0, 1)).max() < tol)
        from ..rigid_motion._kinematics import log_se3
        xi = log_se3(H)
        S = self.basis
        return bool(np.linalg.norm(xi - S @ (S.T @ xi)) < tol)

    def configuration(self, x):
        r"""The pose :math:`\varphi(x)` of coordinates x (1 number, or (theta, x, y) for planar,
        or a 4x4 pose for floating, returned as is after a check)."""
        if self.name == "floating":
            return _check_pose(x, "Subgroup(floating).configuration: x")
        x = _vec(x, self.dim, f"Subgroup({self.name}).configuration: x")
        if self.name == "planar":
            c, s = np.cos(x[0]), np.sin(x[0])
            return np.array([[c, -s, 0, x[1]], [s, c, 0, x[2]], [0, 0, 1, 0], [0, 0, 0, 1.0]])
        return exp_se3(self.basis @ x)


_SUBGROUP_DIMS = {"revolute": 1, "prismatic": 1, "planar": 3, "floating": 6}


def _basis(*idx):
    B = np.zeros((6, len(idx)))
    for j, i in enumerate(idx):
        B[i, j] = 1.0
    B.setflags(write=False)
    return B


SUBGROUPS = {
    "revolute": Subgroup("revolute", _basis(2)),
    "prismatic": Subgroup("prismatic", _basis(3)),
    "planar": Subgroup("planar", _basis(2, 3, 4)),
    "floating": Subgroup("floating", _basis(0, 1, 2, 3, 4, 5)),
}
"""The joints of the paper's appendix A (revolute about z, prismatic along x, planar in the
xy plane, floating), as subgroups with orthonormal subalgebra bases."""
