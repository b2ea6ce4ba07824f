r"""Rigid motion and serial chains (Part I of the book).

Conventions, used everywhere in :mod:`robodyn`:

* A twist is a 6-vector ``V = (omega, v)``: angular part first. A wrench is a
  6-vector ``W = (m, f)``: moment first, so that the power pairing is
  :math:`\langle W | V \rangle = W^T V`.
* ``H_ab`` is the pose of frame *b* in frame *a*, a 4x4 homogeneous matrix
  :math:`H = [R\ \xi;\ 0\ 1]`.
* A screw axis ``S`` has a unit angular part (revolute or helical joint), or a zero
  angular part and a unit linear part (prismatic joint).

Every function accepts numeric input (``ndarray`` of floats in, ``ndarray`` out)
and symbolic input (anything holding sympy expressions in, ``sympy.Matrix`` out)
through one code path; the tests prove the two equal.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np
import sympy as sp

from .. import _value_checks
from .. import _meaning_checks
from .._value_checks import is_symbolic
from .._value_checks import to_sympy as _S
from ._inertia import _check_rotational_inertia, _check_spatial_inertia, _numbers  # noqa: F401
from ..kinds import (Direction, Mass, RigidPose, Rotation, RotationalInertia,  # noqa: F401
                    ScrewAxes, ScrewAxis, SpatialInertia, Tolerance, Twist, Wrench)

__all__ = [
    "hat", "vee", "exp_so3", "log_so3", "exp_se3", "log_se3", "rotation",
    "homogeneous", "inverse_homogeneous", "adjoint", "ad", "transform_twist",
    "transform_wrench", "revolute_screw", "prismatic_screw", "spatial_inertia",
    "is_rotation", "SerialChain", "fk_space", "fk_body", "link_poses",
    "jacobian_space", "jacobian_body", "LongComputationWarning", "SYMBOLIC_MAX_JOINTS",
    "SYMBOLIC_WARN_JOINTS",
]

# --------------------------------------------------------------------------
# backend helpers: one code path for numpy arrays and sympy matrices
# --------------------------------------------------------------------------


def _zeros(r, c, sym):
    return sp.zeros(r, c) if sym else np.zeros((r, c))


def _eye(n, sym):
    return sp.eye(n) if sym else np.eye(n)


def _seg(v, a, b, sym):
    """Entries a..b-1 of a vector (column Matrix or 1-D array)."""
    return v[a:b, 0] if sym else v[a:b]


def _stack(parts, sym):
    """Concatenate vectors."""
    if sym:
        return sp.Matrix.vstack(*parts)
    return np.concatenate(parts)


def _trig(sym):
    return (sp.sin, sp.cos) if sym else (np.sin, np.cos)


def _sympy_if(x, sym, name):
    """A checked numeric array as a sympy Matrix when the computation is symbolic."""
    return _S(x, name) if sym and not isinstance(x, sp.MatrixBase) else x


def _one_minus_cos(theta, sym):
    """1 - cos(theta), as 2 sin^2(theta/2) numerically (no cancellation for small theta)."""
    return 1 - sp.cos(theta) if sym else 2 * np.sin(theta / 2) ** 2


# --------------------------------------------------------------------------
# so(3), se(3): hat and vee
# --------------------------------------------------------------------------


def hat(x):
    r"""The matrix of a 3-vector in so(3), or of a twist in se(3).

    A 3-vector ``w`` gives the skew matrix :math:`\hat w` with :math:`\hat w p = w \times p`;
    a 6-vector ``V = (omega, v)`` gives the 4x4 matrix :math:`[\hat\omega\ v;\ 0\ 0]`.

    Parameters
    ----------
    x : array_like (3,) or (6,), numeric or sympy

    Returns
    -------
    ndarray(3,3) or ndarray(4,4) (``sympy.Matrix`` for symbolic input)

    Raises
    ------
    ValueError
        if ``x`` is not of length 3 or 6.

    Examples
    --------
    >>> hat([1, 2, 3])
    array([[ 0., -3.,  2.],
           [ 3.,  0., -1.],
           [-2.,  1.,  0.]])
    """
    sym, given = is_symbolic(x), x
    if sym:
        n = _value_checks.to_sympy(x, "hat: x").shape
        n = n[0] * n[1] if 1 in n else None
    else:
        x = _value_checks.real_array(x, "hat: x", allow_nonfinite=True)
        n = x.size if x.ndim == 1 or (x.ndim == 2 and 1 in x.shape) else None
    if n == 3:
        w = _value_checks.vector(x, 3, "hat: x")
        W = _zeros(3, 3, sym)
        W[0, 1], W[0, 2] = -w[2], w[1]
        W[1, 0], W[1, 2] = w[2], -w[0]
        W[2, 0], W[2, 1] = -w[1], w[0]
        return W
    if n == 6:
        V = _value_checks.vector(x, 6, "hat: x")
        X = _zeros(4, 4, sym)
        X[:3, :3] = hat(_seg(V, 0, 3, sym))
        for i in range(3):
            X[i, 3] = V[3 + i]
        return X
    raise _value_checks.refusal(
        ValueError, f"hat: x: expected a 3-vector (so(3)) or a 6-vector (omega, v) (se(3)), "
                    f"got {_value_checks._describe(given)}")


def vee(X):
    r"""Inverse of :func:`hat`: a 3x3 skew matrix to its 3-vector, a 4x4 se(3) matrix to (omega, v).

    Raises ``ValueError`` when the matrix is not skew (3x3) or its last row is not zero (4x4).

    >>> vee(hat([1, 2, 3]))
    array([1., 2., 3.])
    """
    sym = is_symbolic(X)
    if sym:
        X = _value_checks.to_sympy(X, "vee: X")
    else:
        X = _value_checks.real_array(X, "vee: X", allow_nonfinite=True)
    shape = X.shape
    if tuple(shape) == (3, 3):
        W = _value_checks.matrix(X, (3, 3), "vee: X")
        if sym:
            rest = (W + W.T).applyfunc(sp.simplify)
            if rest != sp.zeros(3, 3):
                raise _value_checks.refusal(
                    ValueError, f"vee: X: expected a skew-symmetric 3x3 matrix, got one with "
                                f"W + W^T = {rest.tolist()}")
        elif not np.allclose(W, -W.T, atol=1e-9):
            raise _value_checks.refusal(
                ValueError, f"vee: X: expected a skew-symmetric 3x3 matrix, got one with "
                            f"|W + W^T| = {np.abs(W + W.T).max():.3g}")
        w = [W[2, 1], W[0, 2], W[1, 0]]
        return sp.Matrix(w) if sym else np.array(w)
    if tuple(shape) == (4, 4):
        M = _value_checks.matrix(X, (4, 4), "vee: X")
        if sym and M[3, :].applyfunc(sp.simplify) != sp.zeros(1, 4) or \
                not sym and np.abs(M[3]).max() > 1e-9:
            raise _value_checks.refusal(
                ValueError, f"vee: X: expected an se(3) matrix with last row 0, got "
                            f"{list(M[3, :]) if sym else M[3]}")
        w = vee(M[:3, :3])
        v = M[:3, 3]
        return _stack([w, v], sym)
    raise _value_checks.refusal(ValueError, f"vee: X: expected a 3x3 so(3) or a 4x4 se(3) matrix, got "
                     f"{_value_checks._describe(X)}")


# --------------------------------------------------------------------------
# exponential coordinates
# --------------------------------------------------------------------------


_SERIES_TERMS = 10      # enough for (t - sin t)/t^3 to full double precision on t < 1


_SERIES = {first: [(-1) ** k / math.factorial(first + 2 * k)
                   for k in reversed(range(_SERIES_TERMS))] for first in (1, 2, 3)}


def _series(t2, first):
    """sum_k (-1)^k t^(2k) / (first + 2k)!, by Horner's rule (t2 = t^2)."""
    acc = 0.0
    for c in _SERIES[first]:
        acc = acc * t2 + c
    return acc


def _rodrigues_coefficients(theta):
    """sin(t)/t, (1-cos t)/t^2, (t-sin t)/t^3 for a numeric angle, to full double precision.

    Below t = 1 all three come from their Taylor series (ten terms: the first omitted one is
    below 1e-22 of the sum); above, from the closed forms, with 1 - cos t = 2 sin^2(t/2). The
    closed forms lose digits to cancellation as t -> 0 (near 1e-4, (1 - cos t)/t^2 keeps only
    about 8), so the cut-off must not be small."""
    if theta < 1.0:
        t2 = theta * theta
        return _series(t2, 1), _series(t2, 2), _series(t2, 3)
    s, h = np.sin(theta), np.sin(theta / 2)
    return s / theta, 2 * h * h / (theta * theta), (theta - s) / theta**3


def exp_so3(w, theta=None):
    r"""Rotation matrix of exponential coordinates, by Rodrigues' formula.

    With one argument, ``w`` is the vector :math:`\omega\theta` (axis times angle) and
    :math:`R = I + \frac{\sin\theta}{\theta}\hat w + \frac{1-\cos\theta}{\theta^2}\hat w^2`.
    With ``theta``, ``w`` is a unit axis and the angle is given apart, which keeps a
    symbolic angle readable: :math:`R = I + \sin\theta\,\hat\omega + (1-\cos\theta)\hat\omega^2`.

    Parameters
    ----------
    w : array_like (3,), rad (or unit axis when ``theta`` is given)
    theta : float or sympy expression, optional, rad

    Returns
    -------
    ndarray(3,3) (``sympy.Matrix`` for symbolic input)

    Examples
    --------
    >>> import numpy as np
    >>> np.round(exp_so3([0, 0, np.pi / 2]), 12)
    array([[ 0., -1.,  0.],
           [ 1.,  0.,  0.],
           [ 0.,  0.,  1.]])
    """
    sym = is_symbolic(w) or is_symbolic(theta)
    w = _sympy_if(_value_checks.vector(w, 3, "exp_so3: w"), sym, "exp_so3: w")
    W = hat(w)
    if theta is not None:
        theta = _angle(theta, "exp_so3: theta")
        _check_unit(w, "exp_so3: w (with theta given, w must be a unit axis)", sym)
        sin, _ = _trig(sym)
        return _eye(3, sym) + sin(theta) * W + _one_minus_cos(theta, sym) * (W @ W)
    if sym:
        t = sp.sqrt(w.dot(w))
        if t == 0:
            return sp.eye(3)
        return sp.eye(3) + sp.sin(t) / t * W + (1 - sp.cos(t)) / t**2 * (W @ W)
    with np.errstate(all="ignore"):
        a, b, _ = _rodrigues_coefficients(float(np.linalg.norm(w)))
        out = np.eye(3) + a * W + b * (W @ W)
    return _value_checks.finite_result(out, "exp_so3")


def _check_unit(w, name, sym, tol=1e-9):
    """A unit vector, numeric or sympy alike (:func:`robodyn._meaning_checks.unit_vector`: symbols
    sampled under their assumptions)."""
    _meaning_checks.unit_vector(w, 3, name, tol=tol)


def is_rotation(R, tol: Tolerance = 1e-9) -> bool:
    r"""True if ``R`` is a numeric 3x3 matrix with :math:`R^TR = I` and :math:`\det R = 1`.

    >>> is_rotation(exp_so3([0.1, 0.2, 0.3])), is_rotation(2 * exp_so3([0.1, 0.2, 0.3]))
    (True, False)
    """
    tol = _value_checks.tolerance(tol, "is_rotation: tol")
    if is_symbolic(R):
        R = _numbers(R)
        if R is None:
            return False
    R = _value_checks.real_array(R, "is_rotation: R")      # NaN or infinity: refused, not "False"
    with np.errstate(all="ignore"):
        return bool(R.shape == (3, 3) and np.allclose(R.T @ R, np.eye(3), atol=tol)
                    and abs(np.linalg.det(R) - 1) < tol)


def _rotation_arg(R, name, tol=1e-6):
    """Check a rotation matrix, numeric or sympy alike (the meaning of :class:`Rotation`)."""
    R = _value_checks.matrix(R, (3, 3), name)
    _meaning_checks.rotation_matrix(R, name, tol=tol)
    return R


def log_so3(R: Rotation, tol: Tolerance = 1e-6):
    r"""Exponential coordinates :math:`\omega\theta` of a rotation, with :math:`\theta\in[0,\pi]`.

    Inverse of :func:`exp_so3`. The angle is :math:`\theta = \operatorname{atan2}(\|r\|,
    (\operatorname{tr}R-1)/2)` with :math:`r = \operatorname{vee}(R-R^T)/2 = \omega\sin\theta`,
    accurate near 0; near :math:`\pi` the axis comes from the symmetric part
    :math:`(R+R^T)/2 - \cos\theta\, I = (1-\cos\theta)\,\omega\omega^T`, its sign from ``r``.
    At exactly :math:`\theta = \pi` both :math:`\pm\omega\pi` are logarithms; one is returned.

    Parameters
    ----------
    R : array_like (3,3), a rotation matrix
    tol : float, how far ``R`` may be from orthonormal before it is refused

    Returns
    -------
    ndarray(3,), rad (``sympy.Matrix`` for symbolic input, generic branch
    :math:`0<\theta<\pi` only)

    Raises
    ------
    ValueError
        if ``R`` is not a rotation matrix.

    Examples
    --------
    >>> import numpy as np
    >>> np.round(log_so3(exp_so3([0.3, -0.2, 0.1])), 12)
    array([ 0.3, -0.2,  0.1])
    """
    tol = _value_checks.tolerance(tol, "log_so3: tol")
    R = _rotation_arg(R, "log_so3: R", tol)
    if is_symbolic(R):
        t = sp.acos((R.trace() - 1) / 2)
        if not R.free_symbols:
            t = sp.nsimplify(sp.simplify(t)) if sp.simplify(t).is_number else t
            if t == 0:
                return sp.zeros(3, 1)
            if sp.simplify(sp.sin(t)) == 0:         # theta = pi: the axis from R + R^T
                B = (R + R.T) / 2 + sp.eye(3)       # = 2 w w^T
                k = max(range(3), key=lambda i: float(B[i, i]))
                w = (B[:, k] / sp.sqrt(2 * B[k, k])).applyfunc(sp.simplify)
                return w * sp.pi
        return vee((R - R.T) / 2) * t / sp.sin(t)
    r = 0.5 * np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])
    s = np.linalg.norm(r)
    c = (np.trace(R) - 1) / 2
    theta = np.arctan2(s, c)
    if theta < np.pi - 1e-2:
        factor = 1 + theta**2 / 6 if theta < 1e-4 else theta / s
        return r * factor
    B = 0.5 * (R + R.T) - c * np.eye(3)        # (1 - cos t) w w^T
    k = int(np.argmax(np.diag(B)))
    w = B[:, k] / np.sqrt(B[k, k])
    w = w / np.linalg.norm(w)
    if w @ r < 0:
        w = -w
    return w * theta


def exp_se3(V: Twist, theta=None):
    r"""Homogeneous matrix of exponential coordinates :math:`\mathcal S\theta` (a screw motion).

    With one argument, ``V = (omega, v)`` holds the coordinates :math:`\mathcal S\theta`;
    with ``theta``, ``V`` is a screw axis (unit :math:`\omega`, or :math:`\omega = 0` and
    unit :math:`v`) and the angle (or distance) is given apart:

    .. math:: e^{[\mathcal S]\theta} = \begin{bmatrix} e^{[\omega]\theta} &
              (I\theta + (1-\cos\theta)[\omega] + (\theta-\sin\theta)[\omega]^2)\,v\\
              0 & 1\end{bmatrix}

    Parameters
    ----------
    V : array_like (6,), twist coordinates (omega, v)
    theta : float or sympy expression, optional

    Returns
    -------
    ndarray(4,4) (``sympy.Matrix`` for symbolic input)

    Examples
    --------
    >>> import numpy as np
    >>> np.round(exp_se3([0, 0, 1, 0, -1, 0], np.pi / 2), 12)   # about the z axis through (1, 0, 0)
    array([[ 0., -1.,  0.,  1.],
           [ 1.,  0.,  0., -1.],
           [ 0.,  0.,  1.,  0.],
           [ 0.,  0.,  0.,  1.]])
    """
    sym = is_symbolic(V) or is_symbolic(theta)
    V = _sympy_if(_meaning_checks.real_vector(V, 6, "exp_se3: V"), sym, "exp_se3: V")
    w, v = _seg(V, 0, 3, sym), _seg(V, 3, 6, sym)
    W = hat(w)
    H = _eye(4, sym)
    if theta is not None:
        theta = _angle(theta, "exp_se3: theta")
        _check_screw(V, "exp_se3: V (with theta given, V must be a screw axis)", sym)
        sin, _ = _trig(sym)
        omc = _one_minus_cos(theta, sym)
        R = _eye(3, sym) + sin(theta) * W + omc * (W @ W)
        G = _eye(3, sym) * theta + omc * W + (theta - sin(theta)) * (W @ W)
    elif sym:
        t = sp.sqrt(w.dot(w))
        if t == 0:
            R, G = sp.eye(3), sp.eye(3)
        else:
            R = sp.eye(3) + sp.sin(t) / t * W + (1 - sp.cos(t)) / t**2 * (W @ W)
            G = sp.eye(3) + (1 - sp.cos(t)) / t**2 * W + (t - sp.sin(t)) / t**3 * (W @ W)
    else:
        with np.errstate(all="ignore"):
            a, b, c = _rodrigues_coefficients(float(np.linalg.norm(w)))
            R = np.eye(3) + a * W + b * (W @ W)
            G = np.eye(3) + b * W + c * (W @ W)
    H[:3, :3] = R
    with np.errstate(all="ignore"):
        p = G @ v
    for i in range(3):
        H[i, 3] = p[i]
    return H if sym else _value_checks.finite_result(H, "exp_se3")


def _check_screw(S, name, sym, tol=1e-9):
    """A screw axis: unit omega, or omega = 0 and unit v, numeric or sympy alike (the meaning
    of :class:`ScrewAxis`)."""
    _meaning_checks.screw_axis(S, name, tol=tol)


def _homogeneous_arg(H, name, tol=1e-6):
    """A rigid pose, numeric or sympy alike (the meaning of :class:`RigidPose`)."""
    H = _value_checks.matrix(H, (4, 4), name)
    _meaning_checks.pose_matrix(H, name, tol=tol)
    return H


def log_se3(H: RigidPose, tol: Tolerance = 1e-6):
    r"""Exponential coordinates :math:`\mathcal S\theta = (\omega\theta, v\theta)` of a rigid motion.

    Inverse of :func:`exp_se3`: :math:`\omega\theta` = ``log_so3(R)`` and, with
    :math:`\Phi = [\omega\theta]`,
    :math:`v\theta = (I - \tfrac12\Phi + \frac{1-(\theta/2)\cot(\theta/2)}{\theta^2}\Phi^2)\,\xi`,
    which tends to :math:`\xi` for a pure translation.

    Returns
    -------
    ndarray(6,) (``sympy.Matrix`` for symbolic input)

    Raises
    ------
    ValueError
        if ``H`` is not a homogeneous matrix with a rotation block.

    Examples
    --------
    >>> import numpy as np
    >>> np.round(log_se3(exp_se3([0.1, 0.2, 0.3, 1.0, 2.0, 3.0])), 12)
    array([0.1, 0.2, 0.3, 1. , 2. , 3. ])
    """
    tol = _value_checks.tolerance(tol, "log_se3: tol")
    H = _homogeneous_arg(H, "log_se3: H", tol)
    sym = is_symbolic(H)
    phi = log_so3(H[:3, :3], tol)
    P = hat(phi)
    if sym:
        t = sp.sqrt(phi.dot(phi))
        c = (1 - t / 2 * sp.cot(t / 2)) / t**2
        rho = (sp.eye(3) - P / 2 + c * P @ P) @ H[:3, 3]
        return sp.Matrix.vstack(phi, rho)
    t = float(np.linalg.norm(phi))
    if t < 0.1:         # series of (1 - x cot x) / t^2, x = t/2: no cancellation
        x2 = t * t / 4
        c = 1 / 12 + x2 * (1 / 180 + x2 * (1 / 1890 + x2 * (1 / 18900 + x2 / 187110)))
    else:
        c = (1 - t / 2 / np.tan(t / 2)) / t**2
    rho = (np.eye(3) - P / 2 + c * P @ P) @ H[:3, 3]
    return np.concatenate([phi, rho])


# --------------------------------------------------------------------------
# rigid motions, adjoints, twists and wrenches
# --------------------------------------------------------------------------


def rotation(axis, angle):
    r"""Rotation by ``angle`` about ``axis``: ``'x'``, ``'y'``, ``'z'`` or a 3-vector (normalized).

    >>> import numpy as np
    >>> np.round(rotation('x', np.pi / 2), 12)
    array([[ 1.,  0.,  0.],
           [ 0.,  0., -1.],
           [ 0.,  1.,  0.]])
    """
    if isinstance(axis, str):
        if axis not in ("x", "y", "z"):
            raise _value_checks.refusal(
                ValueError, f"rotation: axis: expected 'x', 'y', 'z' or a 3-vector, got "
                            f"{axis[:40]!r}")
        axis = np.eye(3)["xyz".index(axis)]
    angle = _angle(angle, "rotation: angle")
    sym = is_symbolic(axis)
    a = _value_checks.vector(axis, 3, "rotation: axis")
    if not sym:
        n = np.linalg.norm(a)
        if n == 0:
            raise _value_checks.refusal(
                ValueError, "rotation: axis: expected a nonzero axis, got the zero vector")
        a = a / n
    return exp_so3(a, angle)


def _angle(x, name):
    """A checked angle: a float, or a sympy expression; an inexact sympy number (``Float``)
    is read as the float it stands for, so it gives the numeric result a float gives."""
    x = _value_checks.scalar(x, name)
    return float(x) if isinstance(x, sp.Float) else x


def homogeneous(R: Rotation, p):
    r"""The 4x4 homogeneous matrix :math:`H = [R\ p;\ 0\ 1]` of a rotation and a translation.

    >>> homogeneous(np.eye(3), [1, 2, 3])[:3, 3]
    array([1., 2., 3.])
    """
    sym = is_symbolic(R) or is_symbolic(p)
    R = _sympy_if(_rotation_arg(R, "homogeneous: R"), sym, "homogeneous: R")
    p = _sympy_if(_value_checks.vector(p, 3, "homogeneous: p"), sym, "homogeneous: p")
    H = _eye(4, sym)
    H[:3, :3] = R
    for i in range(3):
        H[i, 3] = p[i]
    return H


def inverse_homogeneous(H: RigidPose):
    r""":math:`H^{-1} = [R^T\ -R^T\xi;\ 0\ 1]`, without a general matrix inverse.

    >>> H = exp_se3([0.1, 0.2, 0.3, 1.0, 2.0, 3.0])
    >>> np.allclose(inverse_homogeneous(H) @ H, np.eye(4))
    True
    """
    H = _homogeneous_arg(H, "inverse_homogeneous: H")
    return _inverse_homogeneous(H, is_symbolic(H))


def _inverse_homogeneous(H, sym):
    R, p = H[:3, :3], H[:3, 3]
    Hi = _eye(4, sym)
    Hi[:3, :3] = R.T
    q = -(R.T @ p)
    for i in range(3):
        Hi[i, 3] = q[i]
    return Hi


def adjoint(H: RigidPose):
    r"""The 6x6 adjoint :math:`\mathrm{Ad}_H = [R\ 0;\ [\xi]R\ R]` of a rigid motion.

    For ``H = H_ab``, :math:`V_a = \mathrm{Ad}_{H_{ab}} V_b` maps a twist written in *b* to
    the same twist written in *a* (twists ordered (omega, v)); :math:`\mathrm{Ad}_{AB} =
    \mathrm{Ad}_A\mathrm{Ad}_B`.

    >>> A = adjoint(exp_se3([0.1, 0.2, 0.3, 1.0, 2.0, 3.0]))
    >>> A.shape
    (6, 6)
    """
    H = _homogeneous_arg(H, "adjoint: H")
    return _adjoint(H, is_symbolic(H))


def _adjoint(H, sym):
    R, p = H[:3, :3], H[:3, 3]
    A = _zeros(6, 6, sym)
    A[:3, :3] = R
    A[3:, 3:] = R
    A[3:, :3] = hat(p) @ R
    return A


def ad(V: Twist):
    r"""The 6x6 matrix :math:`\mathrm{ad}_V = [[\omega]\ 0;\ [v]\ [\omega]]` of a twist (its Lie bracket).

    :math:`\mathrm{ad}_{V_1} V_2 = [V_1, V_2]`, and :math:`-\mathrm{ad}_V^T` acts on wrenches.

    >>> ad([0, 0, 1, 0, 0, 0]) @ np.array([0, 0, 0, 1, 0, 0])
    array([0., 0., 0., 0., 1., 0.])
    """
    sym = is_symbolic(V)
    V = _meaning_checks.real_vector(V, 6, "ad: V")
    A = _zeros(6, 6, sym)
    Wh = hat(_seg(V, 0, 3, sym))
    A[:3, :3] = Wh
    A[3:, 3:] = Wh
    A[3:, :3] = hat(_seg(V, 3, 6, sym))
    return A


def transform_twist(H_ab: RigidPose, V_b: Twist):
    r"""A twist written in frame *b*, rewritten in frame *a*: :math:`V_a = \mathrm{Ad}_{H_{ab}} V_b`.

    >>> np.round(transform_twist(homogeneous(np.eye(3), [1, 0, 0]), [0, 0, 1, 0, 0, 0]), 12)
    array([ 0.,  0.,  1.,  0., -1.,  0.])
    """
    sym = is_symbolic(H_ab) or is_symbolic(V_b)
    H_ab = _sympy_if(_homogeneous_arg(H_ab, "transform_twist: H_ab"), sym,
                     "transform_twist: H_ab")
    V_b = _sympy_if(_meaning_checks.real_vector(V_b, 6, "transform_twist: V_b"), sym,
                    "transform_twist: V_b")
    with np.errstate(all="ignore"):
        out = adjoint(H_ab) @ V_b
    return out if sym else _value_checks.finite_result(out, "transform_twist")


def transform_wrench(H_ab: RigidPose, W_b: Wrench):
    r"""A wrench written in frame *b*, rewritten in *a*: :math:`W_a = \mathrm{Ad}_{H_{ab}}^{-T} W_b
    = \mathrm{Ad}_{H_{ba}}^T W_b`.

    It keeps the power :math:`W^T V` the same in both frames. Wrenches are ordered (m, f).

    >>> np.round(transform_wrench(homogeneous(np.eye(3), [1, 0, 0]), [0, 0, 0, 0, 1, 0]), 12)
    array([0., 0., 1., 0., 1., 0.])
    """
    sym = is_symbolic(H_ab) or is_symbolic(W_b)
    H_ab = _sympy_if(_homogeneous_arg(H_ab, "transform_wrench: H_ab"), sym,
                     "transform_wrench: H_ab")
    W_b = _sympy_if(_meaning_checks.real_vector(W_b, 6, "transform_wrench: W_b"), sym,
                    "transform_wrench: W_b")
    with np.errstate(all="ignore"):
        out = adjoint(inverse_homogeneous(H_ab)).T @ W_b
    return out if sym else _value_checks.finite_result(out, "transform_wrench")


def revolute_screw(axis: Direction, point, pitch=0.0):
    r"""Screw axis :math:`\mathcal S = (\omega,\ -\omega\times p + h\omega)` of a revolute
    (``pitch`` 0) or helical joint about ``axis`` through ``point``; the axis is normalised
    (numbers and sympy alike), so only its direction counts.

    >>> revolute_screw([0, 0, 1], [1, 0, 0])
    array([ 0.,  0.,  1.,  0., -1.,  0.])
    """
    sym = is_symbolic(axis) or is_symbolic(point) or is_symbolic(pitch)
    w = _meaning_checks.nonzero_vector(axis, 3, "revolute_screw: axis", "axis")
    p = _value_checks.vector(point, 3, "revolute_screw: point")
    if sym:
        w, p = _normalised(_S(w)), _S(p)
    else:
        w = w / np.linalg.norm(w)
    v = -(hat(w) @ p) + _value_checks.scalar(pitch, "revolute_screw: pitch") * w
    return _stack([w, v], sym)


def _normalised(w):
    """A sympy direction divided by its norm, as the numeric path does (the norm simplified
    first, so that a unit axis such as (cos a, sin a, 0) is kept as written)."""
    n2 = sp.simplify(w.dot(w))
    return w if n2 == 1 else (w / sp.sqrt(n2)).applyfunc(sp.simplify)


def prismatic_screw(direction: Direction):
    r"""Screw axis :math:`\mathcal S = (0, v)` of a prismatic joint along the unit ``direction``.

    >>> prismatic_screw([2, 0, 0])
    array([0., 0., 0., 1., 0., 0.])
    """
    sym = is_symbolic(direction)
    v = _meaning_checks.nonzero_vector(direction, 3, "prismatic_screw: direction")
    v = _normalised(_S(v)) if sym else v / np.linalg.norm(v)
    return _stack([_zeros(3, 1, True) if sym else np.zeros(3), v], sym)


def spatial_inertia(mass: Mass, inertia: RotationalInertia):
    r"""The 6x6 spatial inertia :math:`\mathcal I = \mathrm{diag}(I_c,\ m\mathbf 1_3)` in a frame at the
    centre of mass, ordered (omega, v) like twists.

    Parameters
    ----------
    mass : float > 0 (kg) or sympy expression
    inertia : array_like (3,3) rotational inertia about the centre of mass (kg m^2), or (3,) its
        diagonal

    Raises
    ------
    ValueError
        for a non-positive mass, a non-symmetric or indefinite inertia, or one that breaks the
        triangle inequality of principal moments.

    >>> spatial_inertia(2.0, [0.1, 0.2, 0.3]).diagonal()
    array([0.1, 0.2, 0.3, 2. , 2. , 2. ])
    """
    sym = is_symbolic(mass) or is_symbolic(inertia)
    if sym:                         # the meaning, decided under the symbols' assumptions
        Mass.check(mass, "spatial_inertia: mass")
        RotationalInertia.check(inertia, "spatial_inertia: inertia")
    m = _value_checks.scalar(mass, "spatial_inertia: mass")
    if isinstance(m, sp.Basic) and m.is_number and not float(m) > 0:
        raise _value_checks.refusal(
            ValueError, f"spatial_inertia: mass: expected a positive mass, got {m}")
    if is_symbolic(inertia):
        shape = _value_checks.to_sympy(inertia, "spatial_inertia: inertia").shape
    else:
        inertia = _value_checks.real_array(inertia, "spatial_inertia: inertia", allow_nonfinite=True)
        shape = inertia.shape
    if tuple(shape) in ((3,), (3, 1), (1, 3)):
        d = _value_checks.vector(inertia, 3, "spatial_inertia: inertia")
        I = sp.diag(*list(_S(d))) if sym else np.diag(d)
    else:
        I = _value_checks.matrix(inertia, (3, 3), "spatial_inertia: inertia")
    In = _numbers(I)                # sympy numbers are checked like floats
    if In is not None:
        mn = _numbers(m)
        _check_rotational_inertia(None if mn is None else float(mn.reshape(-1)[0]), In,
                                  "spatial_inertia", ("mass", "inertia"))
    G = _zeros(6, 6, sym)
    G[:3, :3] = I
    G[3:, 3:] = m * _eye(3, sym)
    return G


# --------------------------------------------------------------------------
# serial chains
# --------------------------------------------------------------------------

_JOINT_KINDS = ("revolute", "prismatic", "helical")


def _freeze(a):
    if isinstance(a, np.ndarray):
        a = a.copy()
        a.setflags(write=False)
    return a


def _as_object_or_float(x, shape, name):
    """Array of floats, or of sympy objects when symbolic (kept as ndarray for immutability)."""
    if is_symbolic(x):
        m = _value_checks.matrix(_S(x), shape, name)
        return np.array(m.tolist(), dtype=object)
    return _value_checks.matrix(x, shape, name)


_CHECKED = []          # non-empty while from_screws builds a chain from checked data


@dataclass(frozen=True, eq=False)
class SerialChain:
    r"""A serial chain in product-of-exponentials form, an immutable value (eq. 5.5--5.7).

    Build it with :meth:`from_screws` or :meth:`from_joints`; algorithms are functions of it
    (:func:`fk_space`, :func:`jacobian_space`, ...) and never modify it.

    Attributes
    ----------
    screws : ndarray(6, n)
        space-frame screw axes (omega, v) of the joints at q = 0, as columns.
    home : ndarray(4, 4)
        end-effector pose at q = 0, :math:`M = H_{s,ee}(0)`.
    link_homes : tuple of n ndarray(4, 4) or None
        home pose of each link's centre-of-mass frame.
    link_inertias : tuple of n ndarray(6, 6) or None
        spatial inertia of each link in its centre-of-mass frame, diag(I_c, m 1_3).
    joint_types : tuple of str
        ``'revolute'``, ``'prismatic'`` or ``'helical'``, read off the screws.
    name : str

    Entries may be sympy expressions (symbolic lengths and masses); arrays are read-only.

    Examples
    --------
    >>> chain = SerialChain.from_screws([[0, 0], [0, 0], [1, 1], [0, 0], [0, -1], [0, 0]],
    ...                                 homogeneous(np.eye(3), [2, 0, 0]))
    >>> chain.n, chain.joint_types
    (2, ('revolute', 'revolute'))
    """

    screws: ScrewAxes
    home: RigidPose
    link_homes: tuple | None = None
    link_inertias: tuple | None = None
    joint_types: tuple = ()
    name: str = "chain"
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    def __getstate__(self):
        """Pickled without its caches (the compiled engine's handle, derived arrays): they are
        rebuilt on use, so the copy gives the same numbers."""
        state = dict(self.__dict__)
        state["_cache"] = {}
        return state

    @classmethod
    def from_screws(cls, screws: ScrewAxes, home: RigidPose, link_homes=None, link_inertias=None,
                    name="chain"):
        """A chain from its space-frame screw axes (6 x n, columns (omega, v)) and home pose.

        Raises ``ValueError`` for a wrong shape, a screw that is neither unit-angular nor
        (zero-angular and unit-linear), a home pose that is not a rigid motion, link lists of the
        wrong length, or an inertia that no rigid body has; ``TypeError`` for non-numeric input.
        """
        S = screws
        if not isinstance(S, (np.ndarray, sp.MatrixBase)):
            S = (np.array(S, dtype=object) if is_symbolic(S)
                 else _value_checks._to_array(S, "SerialChain.from_screws: screws"))
        shape = S.shape
        if len(shape) != 2 or shape[0] != 6 or shape[1] < 1:
            raise _value_checks.refusal(
                ValueError, f"SerialChain.from_screws: screws: expected a 6 x n array (one "
                            f"column (omega, v) per joint, n >= 1), got shape {tuple(shape)}"
                            + (" (did you pass n x 6? transpose it)" if len(shape) == 2
                               and shape[1] == 6 else ""))
        n = shape[1]
        S = _as_object_or_float(S, (6, n), "SerialChain.from_screws: screws")
        types = []
        for i in range(n):
            col = S[:, i]
            if is_symbolic(col):
                _check_screw(col, f"SerialChain.from_screws: screws (joint {i})", True, tol=1e-6)
                w = _S(col[:3])
                types.append("prismatic" if w == sp.zeros(3, 1) else "revolute")
                continue
            _check_screw(col, f"SerialChain.from_screws: screws (joint {i})", False, tol=1e-6)
            if np.linalg.norm(col[:3]) == 0:
                types.append("prismatic")
            else:
                pitch = col[:3] @ col[3:]
                types.append("helical" if abs(pitch) > 1e-12 else "revolute")
        M = _as_object_or_float(home, (4, 4), "SerialChain.from_screws: home")
        _homogeneous_arg(M, "SerialChain.from_screws: home")
        homes = cls._link_list(link_homes, n, "link_homes", (4, 4))
        inertias = cls._link_list(link_inertias, n, "link_inertias", (6, 6))
        if homes is not None:
            for i, L in enumerate(homes):
                _homogeneous_arg(L, f"SerialChain.from_screws: link_homes[{i}]")
        if inertias is not None:
            for i, G in enumerate(inertias):
                _check_spatial_inertia(G, f"SerialChain.from_screws: link_inertias[{i}]")
        if not isinstance(name, str):
            raise _value_checks.error("SerialChain: name", "a string", name, exc=TypeError)
        _CHECKED.append(True)
        try:
            return cls(_freeze(S), _freeze(M), homes, inertias, tuple(types), name)
        finally:
            _CHECKED.pop()

    def __post_init__(self):
        """A chain made by calling the class directly goes through :meth:`from_screws`'s
        checks (one boundary: no unchecked chain reaches an algorithm)."""
        if _CHECKED:
            return
        ref = SerialChain.from_screws(self.screws, self.home, self.link_homes,
                                      self.link_inertias, self.name)
        if self.joint_types and tuple(self.joint_types) != ref.joint_types:
            raise _value_checks.error("SerialChain: joint_types", f"{ref.joint_types} (what the "
                                "screws are)", repr(self.joint_types))
        for f in ("screws", "home", "link_homes", "link_inertias", "joint_types"):
            object.__setattr__(self, f, getattr(ref, f))

    @staticmethod
    def _link_list(items, n, what, shape):
        if items is None:
            return None
        if isinstance(items, np.ndarray) and items.ndim == 3:
            items = list(items)
        if not isinstance(items, (list, tuple)):
            raise _value_checks.refusal(
                TypeError, f"SerialChain: {what}: expected a list of {n} {shape[0]}x{shape[1]} "
                           f"matrices, got {_value_checks._describe(items)}")
        if len(items) != n:
            raise _value_checks.refusal(
                ValueError, f"SerialChain: {what}: expected {n} entries (one per joint), got "
                            f"{len(items)}")
        return tuple(_freeze(_as_object_or_float(x, shape, f"SerialChain: {what}[{i}]"))
                     for i, x in enumerate(items))

    @classmethod
    def from_joints(cls, joints, home: RigidPose, link_homes=None, link_inertias=None,
                    name="chain"):
        """A chain from joint descriptions at q = 0, each one of
        ``('revolute', axis, point)``, ``('prismatic', direction)`` or
        ``('helical', axis, point, pitch)``.

        >>> SerialChain.from_joints([('revolute', [0, 0, 1], [0, 0, 0]),
        ...                          ('prismatic', [1, 0, 0])], np.eye(4)).joint_types
        ('revolute', 'prismatic')
        """
        if not isinstance(joints, (list, tuple)) or not joints:
            raise _value_checks.refusal(
                TypeError, f"SerialChain.from_joints: joints: expected a non-empty list of "
                           f"joint tuples, got {_value_checks._describe(joints)}")
        cols = []
        for i, j in enumerate(joints):
            if not isinstance(j, (list, tuple)) or not j or not isinstance(j[0], str):
                raise _value_checks.refusal(
                    TypeError, f"SerialChain.from_joints: joint {i}: expected a tuple "
                               f"(kind, ...), got {_value_checks._describe(j)}")
            kind, args = j[0], j[1:]
            want = {"revolute": 2, "prismatic": 1, "helical": 3}.get(kind)
            if want is None:
                raise _value_checks.refusal(
                    ValueError, f"SerialChain.from_joints: joint {i}: unknown joint kind "
                                f"{kind!r}; expected one of {_JOINT_KINDS}")
            if len(args) != want:
                raise _value_checks.refusal(
                    ValueError, f"SerialChain.from_joints: joint {i} ({kind}): expected "
                                f"{want} parameters after the kind, got {len(args)}")
            cols.append(prismatic_screw(*args) if kind == "prismatic" else revolute_screw(*args))
        sym = any(is_symbolic(c) for c in cols)
        S = (np.array(sp.Matrix.hstack(*[_S(c) for c in cols]).tolist(), dtype=object)
             if sym else np.column_stack(cols))
        return cls.from_screws(S, home, link_homes, link_inertias, name)

    @property
    def n(self) -> int:
        """Number of joints."""
        return self.screws.shape[1]

    @property
    def symbolic(self) -> bool:
        """True when any parameter of the chain is a sympy expression."""
        if "symbolic" not in self._cache:
            parts = [self.screws, self.home] + list(self.link_homes or ()) + \
                list(self.link_inertias or ())
            self._cache["symbolic"] = any(is_symbolic(p) for p in parts)
        return self._cache["symbolic"]

    @property
    def body_screws(self):
        r"""Body-frame screw axes :math:`\mathcal B_i = \mathrm{Ad}_{M^{-1}}\mathcal S_i`, 6 x n."""
        if "body" not in self._cache:
            if self.symbolic:
                B = _adjoint(_inverse_homogeneous(_S(self.home), True), True) @ \
                    _S(self.screws)
                self._cache["body"] = _freeze(np.array(B.tolist(), dtype=object))
            else:
                self._cache["body"] = _freeze(
                    _adjoint(_inverse_homogeneous(self.home, False), False) @ self.screws)
        return self._cache["body"]

    def _hats(self, which):
        """Precomputed [w], [w]^2 and v of each screw, for the vectorized numeric exponential."""
        key = ("hats", which)
        if key not in self._cache:
            S = self.screws if which == "space" else self.body_screws
            w, v = S[:3].T, S[3:].T
            W = np.zeros((self.n, 3, 3))
            W[:, 0, 1], W[:, 0, 2], W[:, 1, 2] = -w[:, 2], w[:, 1], -w[:, 0]
            W = W - W.transpose(0, 2, 1)
            self._cache[key] = (W, W @ W, v)
        return self._cache[key]

    def __repr__(self):
        kinds = "".join({"revolute": "R", "prismatic": "P", "helical": "H"}[t]
                        for t in self.joint_types)
        dyn = "with inertias" if self.link_inertias is not None else "kinematic only"
        return f"SerialChain({self.name!r}, {self.n} joints {kinds}, {dyn})"


def _chain_arg(chain, fname):
    if not isinstance(chain, SerialChain):
        _value_checks.chain(chain, f"{fname}: chain", SerialChain)
    return chain


def _joint_arg(chain, q, fname):
    _chain_arg(chain, fname)
    return _value_checks.vector(q, chain.n, f"{fname}: q (one value per joint of the "
                                      f"{chain.n}-joint chain)")


def _exps(chain, q, which, sym):
    """The n matrices exp([S_i] q_i) (space screws) or exp([B_i] q_i) (body screws)."""
    if sym:
        S = _S(chain.screws if which == "space" else chain.body_screws)
        return [exp_se3(S[:, i], q[i]) for i in range(chain.n)]
    W, W2, v = chain._hats(which)
    s, c = np.sin(q)[:, None, None], np.cos(q)[:, None, None]
    E = np.zeros((chain.n, 4, 4))
    E[:, :3, :3] = np.eye(3) + s * W + (1 - c) * W2
    G = q[:, None, None] * np.eye(3) + (1 - c) * W + (q[:, None, None] - s) * W2
    E[:, :3, 3] = np.einsum("nij,nj->ni", G, v)
    E[:, 3, 3] = 1.0
    return E


SYMBOLIC_WARN_JOINTS = 12
"""Symbolic kinematics of chains with more joints than this warns, as the expressions grow about
twentyfold every four joints (measured: 245 operations in one entry of fk at 4 joints, 4505 at
8, 88715 at 12), and everything built on them (Jacobians, dynamics) with them."""

SYMBOLIC_MAX_JOINTS = 40
"""Symbolic kinematics of chains with more joints than this is refused (substitute numbers,
or work with the numeric chain)."""


class LongComputationWarning(RuntimeWarning):
    """A computation will take long (a large symbolic derivation, many simulation steps)."""


def _symbolic_size_guard(chain, fname):
    n = chain.n
    if n > SYMBOLIC_MAX_JOINTS:
        raise _value_checks.refusal(
            ValueError, f"{fname}: chain: expected at most {SYMBOLIC_MAX_JOINTS} joints for "
                        f"symbolic kinematics, got {n} (the expressions grow about twentyfold "
                        f"every four joints; substitute numbers for q and the parameters)")
    if n > SYMBOLIC_WARN_JOINTS:
        warnings.warn(f"{fname}: symbolic kinematics of a {n}-joint chain: expect expressions "
                      f"of roughly 10^{1.1 + 0.32 * n:.0f} operations per entry and a long "
                      f"computation (more than {SYMBOLIC_WARN_JOINTS} joints)",
                      LongComputationWarning, stacklevel=3)


def _q_and_mode(chain, q, fname):
    q = _joint_arg(chain, q, fname)
    sym = is_symbolic(q) or chain.symbolic
    if sym:
        _symbolic_size_guard(chain, fname)
        if not isinstance(q, sp.MatrixBase):
            q = _S(q)
    return q, sym


def _mat(chain_value, sym):
    return _S(chain_value) if sym else chain_value


def fk_space(chain, q):
    r"""End-effector pose by the product of exponentials, space form (eq. 5.5):
    :math:`H_{s,ee}(q) = e^{[\mathcal S_1]q_1}\cdots e^{[\mathcal S_n]q_n} M`.

    Parameters
    ----------
    chain : SerialChain
    q : array_like (n,), rad for revolute and m for prismatic joints

    Returns
    -------
    ndarray(4,4) (``sympy.Matrix`` when ``q`` or the chain is symbolic)

    Examples
    --------
    >>> from robodyn.models import planar_rr
    >>> np.round(fk_space(planar_rr(), [np.pi / 2, 0])[:3, 3], 12)
    array([0., 2., 0.])
    """
    q, sym = _q_and_mode(chain, q, "fk_space")
    T = _eye(4, sym)
    for E in _exps(chain, q, "space", sym):
        T = T @ E
    return T @ _mat(chain.home, sym)


def fk_body(chain, q):
    r"""End-effector pose, body form: :math:`H_{s,ee}(q) = M e^{[\mathcal B_1]q_1}\cdots
    e^{[\mathcal B_n]q_n}`, equal to :func:`fk_space`.

    >>> from robodyn.models import planar_rr
    >>> q = [0.3, -0.7]
    >>> np.allclose(fk_body(planar_rr(), q), fk_space(planar_rr(), q))
    True
    """
    q, sym = _q_and_mode(chain, q, "fk_body")
    T = _mat(chain.home, sym)
    for E in _exps(chain, q, "body", sym):
        T = T @ E
    return T


def _prefix_products(chain, q, sym):
    """T_0 = I, T_i = exp([S_1]q_1)...exp([S_i]q_i) for i = 1..n."""
    Ts = [_eye(4, sym)]
    for E in _exps(chain, q, "space", sym):
        Ts.append(Ts[-1] @ E)
    return Ts


def link_poses(chain, q):
    r"""The extended forward kinematics :math:`\kappa(q)`: the pose of every link's
    centre-of-mass frame, :math:`H_{s,i}(q) = e^{[\mathcal S_1]q_1}\cdots e^{[\mathcal S_i]q_i} L_i`
    with :math:`L_i` = ``chain.link_homes[i]``.

    Returns
    -------
    ndarray(n,4,4) (a list of n ``sympy.Matrix`` when symbolic)

    Raises
    ------
    ValueError
        if the chain has no ``link_homes``.

    >>> from robodyn.models import planar_rr
    >>> np.round(link_poses(planar_rr(), [0, 0])[:, :3, 3], 12)
    array([[0.5, 0. , 0. ],
           [1.5, 0. , 0. ]])
    """
    q, sym = _q_and_mode(chain, q, "link_poses")
    if chain.link_homes is None:
        raise _value_checks.refusal(ValueError, f"link_poses: {chain!r} has no link_homes; build it with "
                         f"SerialChain.from_screws(..., link_homes=[...])")
    Ts = _prefix_products(chain, q, sym)
    poses = [Ts[i + 1] @ _mat(chain.link_homes[i], sym) for i in range(chain.n)]
    return poses if sym else np.array(poses)


def _link_index(chain, link, fname):
    if link is None:
        return None
    if isinstance(link, (bool, np.bool_)) or not isinstance(link, (int, np.integer)):
        raise _value_checks.refusal(
            TypeError, f"{fname}: link: expected a link index 0..{chain.n - 1}, got "
                       f"{_value_checks._describe(link)}")
    if not 0 <= link < chain.n:
        raise _value_checks.refusal(
            ValueError, f"{fname}: link: expected an index 0..{chain.n - 1}, got {link}")
    return int(link)


def jacobian_space(chain, q, link=None):
    r"""Space Jacobian :math:`J_s(q)`, 6 x n: column *i* is the screw axis of joint *i* at *q*,
    :math:`J_{s,i} = \mathrm{Ad}_{e^{[\mathcal S_1]q_1}\cdots e^{[\mathcal S_{i-1}]q_{i-1}}}\mathcal S_i`,
    so that the spatial twist of the end effector is :math:`V_s = J_s(q)\dot q`.

    With ``link=k``, the Jacobian of link *k*: columns after *k* are zero.

    >>> from robodyn.models import planar_rr
    >>> np.round(jacobian_space(planar_rr(), [0, 0]), 12)[[2, 3, 4]]
    array([[ 1.,  1.],
           [ 0.,  0.],
           [ 0., -1.]])
    """
    q, sym = _q_and_mode(chain, q, "jacobian_space")
    k = _link_index(chain, link, "jacobian_space")
    Ts = _prefix_products(chain, q, sym)
    last = chain.n if k is None else k + 1
    if sym:
        S = _S(chain.screws)
        J = sp.zeros(6, chain.n)
        for i in range(last):
            J[:, i] = _adjoint(Ts[i], True) @ S[:, i]
        return J
    T = np.array(Ts[:last])
    R, p = T[:, :3, :3], T[:, :3, 3]
    w = np.einsum("nij,jn->ni", R, chain.screws[:3, :last])
    v = np.einsum("nij,jn->ni", R, chain.screws[3:, :last])
    v += p[:, [1, 2, 0]] * w[:, [2, 0, 1]] - p[:, [2, 0, 1]] * w[:, [1, 2, 0]]   # p x w, no np.cross
    #    (np.cross costs ~1/3 of the whole call for these tiny arrays)
    J = np.zeros((6, chain.n))
    J[:3, :last], J[3:, :last] = w.T, v.T
    return J


def jacobian_body(chain, q, link=None):
    r"""Body Jacobian :math:`J_b(q) = \mathrm{Ad}_{H_{s,ee}(q)^{-1}} J_s(q)`, 6 x n, so that the body
    twist of the end effector is :math:`V_b = J_b(q)\dot q`.

    With ``link=k``, the body Jacobian of link *k*'s centre-of-mass frame (columns after *k* zero),
    the :math:`J_i` of :math:`M(q) = \sum_i J_i^T\mathcal I_i J_i`.

    >>> from robodyn.models import planar_rr
    >>> np.round(jacobian_body(planar_rr(), [0, 0]), 12)[[2, 4]]
    array([[1., 1.],
           [2., 1.]])
    """
    q, sym = _q_and_mode(chain, q, "jacobian_body")
    k = _link_index(chain, link, "jacobian_body")
    Js = jacobian_space(chain, q, link=k)
    if k is None:
        T = fk_space(chain, q)
    else:
        if chain.link_homes is None:
            raise _value_checks.refusal(
                ValueError, f"jacobian_body: link={k} needs link_homes, and {chain!r} has none")
        T = _prefix_products(chain, q, sym)[k + 1] @ _mat(chain.link_homes[k], sym)
    return _adjoint(_inverse_homogeneous(T, sym), sym) @ Js

from .._boundary import seal as _seal  # noqa: E402 -- the one boundary (issue 28): last, over the finished module
_seal(globals())
