r"""The geometric view of Lagrangian dynamics (Part II, chapter 4; handbook §5.3.4).

The kinetic energy :math:`T = \tfrac12\dot q^T M(q)\dot q` is a Riemannian metric on the
configuration space Q: the inner product of two joint velocities at q is

.. math:: \langle v_1, v_2\rangle_q = v_1^T M(q)\, v_2 .

Its Levi-Civita connection has the Christoffel symbols of the second kind (eq. 5.16)

.. math:: \Gamma^i_{jk} = \sum_l M^{il}\,\Gamma_{ljk},\qquad
   \Gamma_{ljk} = \tfrac12\Big(\frac{\partial M_{lj}}{\partial q_k}
   + \frac{\partial M_{lk}}{\partial q_j} - \frac{\partial M_{jk}}{\partial q_l}\Big),

and without potential forces the equations of motion (5.14) read (eq. 5.17)

.. math:: \nabla_{\dot q}\dot q = \ddot q + \Gamma(\dot q,\dot q) = M^{-1}(q)\,Y = F .

With Y = 0 this is the geodesic equation: force-free motion runs along geodesics, which keep
their speed (T constant) and minimise the energy integral :math:`E = \int_0^{t_f} T\,dt` among
curves with the same end points. A potential enters as :math:`F = -\operatorname{grad} V =
-M^{-1}dV`.

Numeric and symbolic input go through the same functions: a symbolic chain or symbolic q gives
``sympy`` results (derived by :mod:`robodyn.lagrange`); numbers give ``ndarray`` results computed
from the link Jacobians, with the exact derivative
:math:`\partial J_{i,j}/\partial q_k = \mathrm{ad}_{J_{i,j}} J_{i,k}` (k > j) of the body
Jacobian of each link's centre-of-mass frame, so no finite differences are taken.

Index convention: a numeric Christoffel array ``Gamma`` has ``Gamma[i, j, k]`` =
:math:`\Gamma^i_{jk}` (upper index first), shape (n, n, n).
"""
from __future__ import annotations

import numbers
import warnings
from dataclasses import dataclass

import numpy as np
import sympy as sp
from scipy import integrate, optimize

from .. import _value_checks
from ..dynamics import _recursions as dynamics
from .._value_checks import is_symbolic
from .._value_checks import to_sympy as _S
from ..rigid_motion._kinematics import SerialChain, _prefix_products
from ..kinds import Metric, Tolerance

__all__ = ["kinetic_energy_metric", "metric_inner_product", "levi_civita",
           "geodesic_acceleration", "covariant_acceleration", "gradient",
           "potential_gradient", "geodesic", "energy_integral", "straight_line",
           "perturbed_path", "JointPath", "Geodesic"]


# --------------------------------------------------------------------------
# input checks
# --------------------------------------------------------------------------

def _dynamic_chain(chain, fname, name="chain"):
    """A SerialChain with link frames and inertias, or a clear error naming ``fname: name``."""
    if not isinstance(chain, SerialChain):
        _value_checks.chain(chain, f"{fname}: {name}", SerialChain)
    if chain.link_inertias is None or chain.link_homes is None:
        raise _value_checks.refusal(
            ValueError, f"{fname}: {chain!r} has no link inertias, so it has no kinetic-energy "
                        f"metric; build it with SerialChain.from_screws(..., link_homes=[...], "
                        f"link_inertias=[...]) or use robodyn.models")
    return chain


def _joint_vector(chain, x, name, fname):
    return _value_checks.vector(x, chain.n, f"{fname}: {name} (one value per joint of the "
                                      f"{chain.n}-joint chain)")


def _numeric_only(chain, fname):
    if chain.symbolic:
        raise _value_checks.refusal(
            TypeError, f"{fname}: expected a chain with numeric lengths and masses, got the "
                       f"symbolic {chain!r}; substitute numbers first (e.g. "
                       f"robodyn.models.planar_rr(1.0, 1.0, 1.0, 1.0))")


def _symbolic_mode(chain, *xs):
    return chain.symbolic or any(is_symbolic(x) for x in xs)


# --------------------------------------------------------------------------
# numeric metric and its exact derivative, from the link Jacobians
# --------------------------------------------------------------------------

_EPS = np.zeros((3, 3, 3))
_EPS[0, 1, 2] = _EPS[1, 2, 0] = _EPS[2, 0, 1] = 1.0
_EPS[0, 2, 1] = _EPS[2, 1, 0] = _EPS[1, 0, 2] = -1.0
"""The permutation symbol: (a x b)_i = eps_ijk a_j b_k."""


def _metric_jet(chain, q, derivative=True):
    r"""M(q) = sum_i J_i^T I_i J_i and, if asked, dM[i, j, k] = dM_ij/dq_k (numeric, float q).

    J_i is the body Jacobian of link i's centre-of-mass frame. Its column j (j <= i) has the
    derivative d J_ij / dq_k = ad_{J_ij} J_ik = [J_ij, J_ik] for k > j and 0 for k <= j.
    """
    n = chain.n
    Ts = np.array(_prefix_products(chain, q, False))   # Ts[j] = e^[S_1]q_1 ... e^[S_j]q_j
    T = Ts[:n]                                          # the transport of screw j: Ts[j]
    S = chain.screws
    # space Jacobian: column j = Ad_{T_j} S_j
    w = np.einsum("jab,bj->aj", T[:, :3, :3], S[:3])
    v = np.einsum("jab,bj->aj", T[:, :3, :3], S[3:]) + np.einsum("abc,jb,cj->aj", _EPS,
                                                                  T[:, :3, 3], w)
    P = Ts[1:] @ np.array(chain.link_homes, dtype=float)       # kappa(q): link CoM poses
    R, p = P[:, :3, :3], P[:, :3, 3]
    # Ad_{P_l^{-1}} (w, v) = (R^T w, R^T (v - p x w)), one link per leading index
    pxw = np.einsum("abc,lb,ck->lak", _EPS, p, w)                   # p_l x w_k, (n, 3, n)
    Jw = np.einsum("lji,jk->lik", R, w)
    Jv = np.einsum("lji,ljk->lik", R, v[None] - pxw)
    later = np.triu(np.ones((n, n)), k=1).astype(bool)            # [l, k]: joint k after link l
    J = np.concatenate([Jw, Jv], axis=1)                            # (n links, 6, n joints)
    J[np.broadcast_to(later[:, None, :], J.shape)] = 0.0
    G = np.array(chain.link_inertias, dtype=float)                  # (n, 6, 6)
    GJ = G @ J
    M = np.einsum("lai,laj->ij", J, GJ)
    M = (M + M.T) / 2
    if not derivative:
        return M, None
    a, b = J[:, :3], J[:, 3:]
    # bracket [J_j, J_k] = (w_j x w_k, w_j x v_k + v_j x w_k), kept for k > j only
    bw = np.einsum("abc,lbj,lck->lajk", _EPS, a, a)
    bv = np.einsum("abc,lbj,lck->lajk", _EPS, a, b) + np.einsum("abc,lbj,lck->lajk", _EPS, b, a)
    dJ = np.concatenate([bw, bv], axis=1) * np.triu(np.ones((n, n)), k=1)  # (l, 6, j, k)
    X = np.einsum("laik,laj->ijk", dJ, GJ)
    return M, X + X.transpose(1, 0, 2)


def _first_kind(dM):
    """Gamma_ijk = 1/2 (dM_ij/dq_k + dM_ik/dq_j - dM_jk/dq_i), eq. (5.13)."""
    return 0.5 * (dM + dM.transpose(0, 2, 1) - dM.transpose(2, 0, 1))


def _solve(M, b, fname):
    try:
        c = np.linalg.cond(M)
    except np.linalg.LinAlgError:           # pragma: no cover - cond of a finite matrix
        c = np.inf
    if not np.isfinite(c) or c > 1e12:
        warnings.warn(f"{fname}: the kinetic-energy metric M(q) is nearly singular (condition "
                      f"number {c:.3g}); the result is unreliable", RuntimeWarning, stacklevel=3)
    with np.errstate(all="ignore"):
        return np.linalg.solve(M, b)


def _numeric_christoffel(chain, q, fname):
    M, dM = _metric_jet(chain, q)
    n = chain.n
    G2 = _solve(M, _first_kind(dM).reshape(n, n * n), fname).reshape(n, n, n)
    return M, G2


def _contract(Gamma, qd):
    """Gamma(qd, qd)^i = sum_jk Gamma^i_jk qd_j qd_k."""
    return np.einsum("ijk,j,k->i", Gamma, qd, qd)


def _numeric_geodesic_acceleration(chain, q, qd):
    """-M^{-1} Gamma_1(qd, qd), the inner loop of the geodesic ODE (checked input)."""
    M, dM = _metric_jet(chain, q)
    with np.errstate(all="ignore"):
        c = np.einsum("ijk,j,k->i", dM, qd, qd) - 0.5 * np.einsum("jki,j,k->i", dM, qd, qd)
        return -np.linalg.solve(M, c)


# --------------------------------------------------------------------------
# symbolic route (robodyn.lagrange)
# --------------------------------------------------------------------------

def _lagrange():
    from . import _euler_lagrange as lagrange
    return lagrange


def _symbols_for(q, n):
    """Symbols to differentiate by: q itself if it is a vector of distinct symbols, else dummies.

    Returns (qs, subs) with subs mapping the dummies to the given values (empty for symbols).
    """
    if is_symbolic(q):
        qv = _S(q)
        if all(isinstance(e, sp.Symbol) for e in qv) and len(set(qv)) == len(qv):
            return qv, {}
    else:
        qv = _S(np.asarray(q, dtype=float))
    qs = sp.Matrix(sp.symbols(f"_geo_q0:{n}", real=True))
    return qs, dict(zip(list(qs), list(qv)))


def _as_array3(G, n):
    """Any n x n x n nested/Array/list-of-matrices form to a sympy Array indexed [i, j, k]."""
    if isinstance(G, sp.NDimArray):
        A = sp.ImmutableDenseNDimArray(G)
    elif isinstance(G, (list, tuple)) and G and isinstance(G[0], sp.MatrixBase):
        A = sp.ImmutableDenseNDimArray([[list(G[i].row(j)) for j in range(n)] for i in range(n)])
    else:
        A = sp.ImmutableDenseNDimArray(G)
    if A.shape != (n, n, n):
        raise RuntimeError(f"levi_civita: robodyn.lagrange.christoffel_symbols returned shape "
                           f"{A.shape}, expected ({n}, {n}, {n})")
    return A


def _symbolic_christoffel(M, qs, n):
    return _as_array3(_lagrange().christoffel_symbols(M, qs, kind=2), n)


def _symbolic_metric(chain, q):
    qs, subs = _symbols_for(q, chain.n)
    M = _lagrange().mass_matrix(chain, qs)
    return sp.Matrix(M), qs, subs


def _sym_vector(x):
    return _S(x) if not isinstance(x, sp.MatrixBase) else sp.Matrix(x)


# --------------------------------------------------------------------------
# the metric
# --------------------------------------------------------------------------

def kinetic_energy_metric(chain, q):
    r"""The kinetic-energy metric M(q), the Riemannian metric of handbook §5.3.4:
    :math:`\langle v_1, v_2\rangle_q = v_1^T M(q)\, v_2`, with
    :math:`M(q) = \sum_i J_i^T\mathcal I_i J_i` (the mass matrix of the Lagrangian, eq. 5.11).

    Parameters
    ----------
    chain : SerialChain with link inertias
    q : array_like (n,), rad (revolute) / m (prismatic), or sympy symbols

    Returns
    -------
    ndarray(n, n), kg m^2 for revolute pairs (``sympy.Matrix`` for symbolic input, from
    :func:`robodyn.lagrange.mass_matrix`); symmetric positive definite.

    Raises
    ------
    TypeError, ValueError
        for a chain that is not a SerialChain, has no inertias, or a q of the wrong size.

    Examples
    --------
    >>> from robodyn.models import planar_rr
    >>> np.round(kinetic_energy_metric(planar_rr(), [0.0, 0.0]), 6)
    array([[2.666667, 0.833333],
           [0.833333, 0.333333]])
    """
    fname = "kinetic_energy_metric"
    chain = _dynamic_chain(chain, fname)
    q = _joint_vector(chain, q, "q", fname)
    if _symbolic_mode(chain, q):
        return sp.Matrix(_lagrange().mass_matrix(chain, q))
    return _metric_jet(chain, q, derivative=False)[0]


def metric_inner_product(chain, q, v1, v2):
    r"""The inner product :math:`\langle v_1, v_2\rangle_q = v_1^T M(q) v_2` of two joint
    velocities at q (handbook §5.3.4); :math:`\langle\dot q,\dot q\rangle_q = 2T`.

    Parameters
    ----------
    chain : SerialChain with link inertias
    q : array_like (n,)
    v1, v2 : array_like (n,), tangent vectors at q (rad/s or m/s)

    Returns
    -------
    float, J per (1/s^2 units of the velocities) (sympy expression for symbolic input)

    Examples
    --------
    >>> from robodyn.models import planar_rr
    >>> round(metric_inner_product(planar_rr(), [0, 0], [1, 0], [1, 0]), 6)
    2.666667
    """
    fname = "metric_inner_product"
    chain = _dynamic_chain(chain, fname)
    q = _joint_vector(chain, q, "q", fname)
    v1 = _joint_vector(chain, v1, "v1", fname)
    v2 = _joint_vector(chain, v2, "v2", fname)
    M = kinetic_energy_metric(chain, q)
    if isinstance(M, sp.MatrixBase):
        return sp.expand((_sym_vector(v1).T * M * _sym_vector(v2))[0, 0])
    with np.errstate(all="ignore"):
        return _value_checks.finite_result(float(v1 @ M @ v2), fname)


# --------------------------------------------------------------------------
# the Levi-Civita connection
# --------------------------------------------------------------------------

def levi_civita(chain_or_M, q):
    r"""Christoffel symbols of the second kind of the kinetic-energy metric, eq. (5.16):

    .. math:: \Gamma^i_{jk} = \sum_l \tfrac12 M^{il}\Big(\frac{\partial M_{lj}}{\partial q_k}
       + \frac{\partial M_{lk}}{\partial q_j} - \frac{\partial M_{jk}}{\partial q_l}\Big),

    the coefficients of the Levi-Civita connection :math:`(\nabla_X Y)^i = \sum_j X^j\partial_j
    Y^i + \sum_{jk}\Gamma^i_{jk}X^jY^k`. They are symmetric in j, k (the connection is torsion
    free) and :math:`\Gamma_{ijk} = \sum_l M_{il}\Gamma^l_{jk}`.

    Parameters
    ----------
    chain_or_M : SerialChain with link inertias, or a sympy Matrix M(q) (n x n)
    q : array_like (n,) of numbers (numeric chain), or a vector of sympy symbols (required
        when a Matrix is given: the coordinates M depends on)

    Returns
    -------
    ndarray(n, n, n) with ``[i, j, k]`` = :math:`\Gamma^i_{jk}` (1/rad for revolute joints) for
    a numeric chain and numeric q, computed from the exact derivative of the link Jacobians;
    otherwise a sympy ``ImmutableDenseNDimArray`` of the same indexing from
    :func:`robodyn.lagrange.christoffel_symbols` (``kind=2``), evaluated at q when q holds
    numbers; entries are not simplified (``sympy.simplify`` them for display).

    Raises
    ------
    TypeError, ValueError
        for a chain without inertias, a q of the wrong size, a non-square or asymmetric M, or
        numbers given as the coordinates of a Matrix M.

    Examples
    --------
    For the planar RR arm, with :math:`h = m_2 l_1 l_2/2`,
    :math:`\Gamma^1_{22} = -h\sin q_2\,M_{22}/\det M`; at q2 = pi/2 with unit rods that is
    -3/8:

    >>> from robodyn.models import planar_rr
    >>> G = levi_civita(planar_rr(), [0.0, np.pi / 2])
    >>> G.shape, bool(np.allclose(G, G.transpose(0, 2, 1))), round(float(G[0, 1, 1]), 12)
    ((2, 2, 2), True, -0.375)
    """
    fname = "levi_civita"
    if isinstance(chain_or_M, sp.MatrixBase):
        M = sp.Matrix(chain_or_M)
        n = M.shape[0]
        if M.shape != (n, n):
            raise _value_checks.refusal(
                ValueError, f"{fname}: M: expected a square matrix, got shape {M.shape}")
        if not is_symbolic(q):
            raise _value_checks.refusal(
                TypeError, f"{fname}: q: a Matrix M needs the sympy symbols it depends on as "
                           f"q, got {_value_checks._describe(q)}")
        qs = _value_checks.vector(q, n, f"{fname}: q (the {n} coordinates of M)")
        M = _value_checks.matrix(M, (n, n), f"{fname}: M")
        if (M - M.T).applyfunc(sp.expand) != sp.zeros(n, n):
            raise _value_checks.refusal(
                ValueError, f"{fname}: M: expected a symmetric metric, got M != M^T")
        det = sp.simplify(M.det())
        if det == 0:
            raise _value_checks.refusal(ValueError, f"{fname}: M: expected an invertible (positive definite) metric, "
                             f"got det M = 0")
        Metric.check(M, f"{fname}: M")          # positive definite, under the assumptions
        return _symbolic_christoffel(M, qs, n)
    chain = _dynamic_chain(chain_or_M, fname, "chain_or_M")
    q = _joint_vector(chain, q, "q", fname)
    if _symbolic_mode(chain, q):
        M, qs, subs = _symbolic_metric(chain, q)
        G = _symbolic_christoffel(M, qs, chain.n)
        return G.subs(subs) if subs else G
    return _numeric_christoffel(chain, q, fname)[1]


def _symbolic_connection_term(chain, q, qd):
    """Gamma(qd, qd) as an n x 1 sympy Matrix."""
    G = levi_civita(chain, q)
    qd = _sym_vector(qd)
    n = chain.n
    return sp.Matrix([sp.expand(sum(G[i, j, k] * qd[j] * qd[k]
                                    for j in range(n) for k in range(n))) for i in range(n)])


def geodesic_acceleration(chain, q, qd):
    r"""The acceleration of force-free motion, :math:`\ddot q^i = -\sum_{jk}\Gamma^i_{jk}(q)
    \dot q^j\dot q^k` (eq. 5.17 with F = 0, the geodesic equation); equal to
    :math:`-M^{-1}C(q,\dot q)\dot q` and to forward dynamics with zero torque and zero gravity.

    Parameters
    ----------
    chain : SerialChain with link inertias
    q : array_like (n,), rad / m
    qd : array_like (n,), rad/s / m/s

    Returns
    -------
    ndarray(n,), rad/s^2 / m/s^2 (``sympy.Matrix`` n x 1 for symbolic input)

    Examples
    --------
    Spinning joint 1 alone with the elbow bent is no geodesic: with h = m2 l1 l2/2,
    :math:`\ddot q = -\Gamma_{\cdot 11} = (M_{12}, -M_{11})\,h\sin q_2/\det M = (3/8, -15/8)`:

    >>> from robodyn.models import planar_rr
    >>> np.round(geodesic_acceleration(planar_rr(), [0.0, np.pi / 2], [1.0, 0.0]), 6)
    array([ 0.375, -1.875])
    """
    fname = "geodesic_acceleration"
    chain = _dynamic_chain(chain, fname)
    q = _joint_vector(chain, q, "q", fname)
    qd = _joint_vector(chain, qd, "qd", fname)
    if _symbolic_mode(chain, q, qd):
        _value_checks.own_symbols({"q": q, "qd": qd}, fname)
        return -_symbolic_connection_term(chain, q, qd)
    return _value_checks.finite_result(_numeric_geodesic_acceleration(chain, q, qd), fname)


def covariant_acceleration(chain, q, qd, qdd):
    r"""The covariant derivative of the velocity along the motion, eq. (5.17):
    :math:`\nabla_{\dot q}\dot q = \ddot q + \Gamma(\dot q,\dot q)`, which equals
    :math:`F = M^{-1}(q)Y` for the generalized force Y (without potential forces; with gravity
    Y includes :math:`-G(q)`). Zero along a geodesic.

    Parameters
    ----------
    chain : SerialChain with link inertias
    q, qd, qdd : array_like (n,) each (rad, rad/s, rad/s^2 for revolute joints)

    Returns
    -------
    ndarray(n,) (``sympy.Matrix`` n x 1 for symbolic input)

    Examples
    --------
    >>> from robodyn.models import planar_rr
    >>> q, qd = [0.2, 1.0], [0.5, -0.3]
    >>> qdd = geodesic_acceleration(planar_rr(), q, qd)
    >>> bool(np.allclose(covariant_acceleration(planar_rr(), q, qd, qdd), 0))
    True
    """
    fname = "covariant_acceleration"
    chain = _dynamic_chain(chain, fname)
    q = _joint_vector(chain, q, "q", fname)
    qd = _joint_vector(chain, qd, "qd", fname)
    qdd = _joint_vector(chain, qdd, "qdd", fname)
    if _symbolic_mode(chain, q, qd, qdd):
        _value_checks.own_symbols({"q": q, "qd": qd, "qdd": qdd}, fname)
        return sp.Matrix(_sym_vector(qdd) + _symbolic_connection_term(chain, q, qd))
    with np.errstate(all="ignore"):
        out = qdd - _numeric_geodesic_acceleration(chain, q, qd)
    return _value_checks.finite_result(out, fname)


def gradient(chain, q, dV):
    r"""The gradient of a function on Q for the kinetic-energy metric,
    :math:`\operatorname{grad} V = M^{-1}(q)\,dV` (handbook §5.3.4): the vector field F with
    :math:`\langle F, X\rangle_q = dV(X)` for every X. The same raising of the index turns any
    generalized force Y into the F = M^{-1}Y of eq. (5.17).

    Parameters
    ----------
    chain : SerialChain with link inertias
    q : array_like (n,)
    dV : array_like (n,), the differential :math:`\partial V/\partial q` (N m per rad / N)

    Returns
    -------
    ndarray(n,) (``sympy.Matrix`` for symbolic input)

    Examples
    --------
    >>> from robodyn.models import planar_rr
    >>> M = kinetic_energy_metric(planar_rr(), [0.0, 1.0])
    >>> bool(np.allclose(M @ gradient(planar_rr(), [0.0, 1.0], [1.0, 2.0]), [1.0, 2.0]))
    True
    """
    fname = "gradient"
    chain = _dynamic_chain(chain, fname)
    q = _joint_vector(chain, q, "q", fname)
    dV = _joint_vector(chain, dV, "dV", fname)
    M = kinetic_energy_metric(chain, q)
    if isinstance(M, sp.MatrixBase):
        return sp.simplify(M.LUsolve(_sym_vector(dV)))
    return _value_checks.finite_result(_solve(M, dV, fname), fname)


def potential_gradient(chain, q, gravity=None):
    r"""The gradient of the gravitational potential, :math:`\operatorname{grad} V = M^{-1}G(q)`
    with :math:`G = \partial V/\partial q` (eq. 5.14): the "geometric" gravity term, so that
    :math:`\nabla_{\dot q}\dot q = -\operatorname{grad} V + M^{-1}\tau`.

    Parameters
    ----------
    chain : SerialChain with link inertias
    q : array_like (n,)
    gravity : array_like (3,), m/s^2 in the space frame; default
        ``robodyn.dynamics.DEFAULT_GRAVITY`` (0, 0, -9.81)

    Returns
    -------
    ndarray(n,), rad/s^2 (``sympy.Matrix`` for symbolic input; G from
    :func:`robodyn.lagrange.gravity_vector`)

    Examples
    --------
    The arm stretched along x under gravity along -y: G = (2g, g/2) for unit rods, and
    :math:`M^{-1}G` is the acceleration gravity would cause from rest:

    >>> from robodyn.models import planar_rr
    >>> np.round(potential_gradient(planar_rr(), [0.0, 0.0], gravity=[0.0, -9.81, 0.0]), 6)
    array([ 12.612857, -16.817143])
    """
    fname = "potential_gradient"
    chain = _dynamic_chain(chain, fname)
    q = _joint_vector(chain, q, "q", fname)
    if gravity is None:
        from ..dynamics._recursions import DEFAULT_GRAVITY
        gravity = DEFAULT_GRAVITY
    if _symbolic_mode(chain, q, gravity):
        G = _lagrange().gravity_vector(chain, q, gravity)
    else:
        gravity = _value_checks.vector(gravity, 3, f"{fname}: gravity (m/s^2, space frame)")
        from ..dynamics._recursions import gravity_torques
        try:        # every argument is checked: an error here is an overflow of the torques
            G = gravity_torques(chain, q, gravity)
        except ValueError as exc:
            raise _value_checks.refusal(
                ValueError, f"{fname}: result: expected finite numbers for finite input, got "
                            f"an overflow of the gravity torques ({exc})") from exc
    M = kinetic_energy_metric(chain, q)
    if isinstance(M, sp.MatrixBase):
        return sp.simplify(M.LUsolve(_sym_vector(G)))
    return _value_checks.finite_result(_solve(M, G, fname), fname)


# --------------------------------------------------------------------------
# paths and the energy integral
# --------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class JointPath:
    """A sampled curve in joint space: times ``t`` (N,), s; positions ``q`` (N, n);
    velocities ``qd`` (N, n)."""

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray

    def __repr__(self):
        return (f"{type(self).__name__}(N={len(self.t)}, n={self.q.shape[1]}, "
                f"t=[{self.t[0]:g}, {self.t[-1]:g}])")


@dataclass(frozen=True, eq=False, repr=False)
class Geodesic(JointPath):
    r"""A geodesic of the kinetic-energy metric between two configurations (from
    :func:`geodesic`).

    Attributes
    ----------
    t, q, qd : the sampled geodesic, as in :class:`JointPath`
    qd0 : ndarray(n,), the initial velocity found (rad/s)
    residual : float, :math:`\max_i |q_i(t_f) - q_{\mathrm{end},i}|` (rad / m)
    energy : float, :math:`\int_0^{t_f} T\,dt` along the geodesic (J s)
    kinetic_energy : ndarray(N,), T(t) (J), constant along a geodesic
    method : str, ``'shooting'`` or ``'collocation'``
    nfev : int, number of ODE solves (shooting) or of collocation iterations
    """

    qd0: np.ndarray = None
    residual: float = 0.0
    energy: float = 0.0
    kinetic_energy: np.ndarray = None
    method: str = "shooting"
    nfev: int = 0


def _frozen(a):
    a = np.array(a, dtype=float)
    a.setflags(write=False)
    return a


def _times(t, fname, name="t"):
    t = _value_checks._to_array(t, f"{fname}: {name}")
    if t.ndim != 1 or t.size < 2:
        raise _value_checks.refusal(
            ValueError, f"{fname}: {name}: expected a 1-D array of at least 2 times, got shape "
                        f"{t.shape}")
    _value_checks.finite(t, f"{fname}: {name}")
    if not np.all(np.diff(t) > 0):
        raise _value_checks.refusal(ValueError, f"{fname}: {name}: expected strictly increasing times")
    return t


def _samples(x, N, n, name, fname):
    a = _value_checks._to_array(x, f"{fname}: {name}")
    if a.shape != (N, n):
        raise _value_checks.refusal(
            ValueError, f"{fname}: {name}: expected shape ({N}, {n}) (one row per time, one "
                        f"column per joint), got {a.shape}")
    return _value_checks.finite(a, f"{fname}: {name}")


def straight_line(q_start, q_end, t):
    r"""The straight line in joint space at constant speed,
    :math:`q(t) = q_s + (q_e - q_s)\,(t - t_0)/(t_f - t_0)`, the path a geodesic is compared with.

    Parameters
    ----------
    q_start, q_end : array_like (n,)
    t : array_like (N,), strictly increasing times (s), N >= 2

    Returns
    -------
    JointPath

    Examples
    --------
    >>> p = straight_line([0.0, 0.0], [1.0, 2.0], np.linspace(0, 2, 5))
    >>> p.q[2], p.qd[0]
    (array([0.5, 1. ]), array([0.5, 1. ]))
    """
    fname = "straight_line"
    a = _value_checks._to_array(q_start, f"{fname}: q_start")
    n = a.size
    if a.ndim != 1 or n < 1:
        raise _value_checks.refusal(
            ValueError, f"{fname}: q_start: expected a vector, got shape {a.shape}")
    q0 = _value_checks.vector(a, n, f"{fname}: q_start")
    q1 = _value_checks.vector(q_end, n, f"{fname}: q_end (same length as q_start)")
    t = _times(t, fname)
    s = (t - t[0]) / (t[-1] - t[0])
    v = (q1 - q0) / (t[-1] - t[0])
    return JointPath(_frozen(t), _frozen(q0 + s[:, None] * (q1 - q0)),
                     _frozen(np.broadcast_to(v, (t.size, n))))


def perturbed_path(path, amplitude, mode=1):
    r"""A path with the same end points plus a bump that vanishes at both ends:
    :math:`q(t) + a\,\sin(\pi k s)`, :math:`s = (t - t_0)/(t_f - t_0)`, with its exact velocity
    :math:`\dot q + a\,\frac{\pi k}{t_f - t_0}\cos(\pi k s)`.

    Parameters
    ----------
    path : JointPath (or Geodesic, or anything with ``t``, ``q``, ``qd``)
    amplitude : float or array_like (n,), rad / m per joint
    mode : int >= 1, the number k of half-waves

    Returns
    -------
    JointPath

    Examples
    --------
    >>> p = perturbed_path(straight_line([0, 0], [1, 1], np.linspace(0, 1, 5)), 0.1, mode=2)
    >>> p.q[[0, 1, -1], 0].round(6).tolist()
    [0.0, 0.35, 1.0]
    """
    fname = "perturbed_path"
    if not all(hasattr(path, k) for k in ("t", "q", "qd")):
        raise _value_checks.refusal(
            TypeError, f"{fname}: path: expected a JointPath (with t, q, qd), got "
                       f"{_value_checks._describe(path)}")
    t = _times(path.t, fname, "path.t")
    q = _value_checks.real_array(path.q, f"{fname}: path.q", allow_nonfinite=True)
    if q.ndim != 2:
        raise _value_checks.refusal(ValueError, f"{fname}: path.q: expected shape (N, n), got {q.shape}")
    N, n = q.shape
    q = _samples(q, t.size, n, "path.q", fname)
    qd = _samples(path.qd, t.size, n, "path.qd", fname)
    mode = _value_checks.size(mode, f"{fname}: mode", high=10**6)
    a = _value_checks._to_array(amplitude, f"{fname}: amplitude")
    if a.ndim == 0:
        a = np.full(n, float(a))
    a = _value_checks.vector(a, n, f"{fname}: amplitude (a number or one per joint)")
    T = t[-1] - t[0]
    s = (t - t[0]) / T
    k = int(mode)
    with np.errstate(all="ignore"):
        q_new = q + np.sin(np.pi * k * s)[:, None] * a
        qd_new = qd + (np.pi * k / T) * np.cos(np.pi * k * s)[:, None] * a
    _value_checks.finite_result((q_new, qd_new), fname)
    return JointPath(_frozen(t), _frozen(q_new), _frozen(qd_new))


def _kinetic_energies(chain, q, qd):
    T = np.empty(len(q))
    for i, (qi, vi) in enumerate(zip(q, qd)):
        M = _metric_jet(chain, qi, derivative=False)[0]
        T[i] = 0.5 * vi @ M @ vi
    return T


def energy_integral(chain, t, q=None, qd=None, *, rule="simpson"):
    r"""The energy integral of a curve, :math:`E(\gamma) = \int_{t_0}^{t_f}
    T(\gamma(t),\dot\gamma(t))\,dt` with :math:`T = \tfrac12\dot q^T M(q)\dot q` (handbook
    §5.3.4); geodesics minimise it among curves with the same end points and duration.

    Parameters
    ----------
    chain : SerialChain with link inertias and numeric parameters
    t : array_like (N,), strictly increasing times (s); or a JointPath / Geodesic, then q and qd
        are taken from it
    q, qd : array_like (N, n), positions and velocities at the times t
    rule : ``'simpson'`` (default) or ``'trapezoid'``

    Returns
    -------
    float, J s

    Examples
    --------
    A joint-1 rotation at 1 rad/s for 1 s with the arm stretched: T = M_11/2 = 4/3 J.

    >>> from robodyn.models import planar_rr
    >>> t = np.linspace(0, 1, 11)
    >>> path = straight_line([0.0, 0.0], [1.0, 0.0], t)
    >>> round(energy_integral(planar_rr(), path), 9)
    1.333333333
    """
    fname = "energy_integral"
    chain = _dynamic_chain(chain, fname)
    _numeric_only(chain, fname)
    if q is None and qd is None and all(hasattr(t, k) for k in ("t", "q", "qd")):
        t, q, qd = t.t, t.q, t.qd
    if q is None and qd is None:
        raise _value_checks.error(f"{fname}: t", "a JointPath as in (chain, path), or times as in "
                            "(chain, t, q, qd) with q and qd given", t, exc=TypeError)
    if q is None or qd is None:
        raise _value_checks.refusal(
            TypeError, f"{fname}: {'q' if q is None else 'qd'}: expected (chain, t, q, qd) "
                       f"or (chain, path), got q={q!r:.40}, qd={qd!r:.40}")
    t = _times(t, fname)
    q = _samples(q, t.size, chain.n, "q", fname)
    qd = _samples(qd, t.size, chain.n, "qd", fname)
    rule = _value_checks.choice(rule, f"{fname}: rule", ("simpson", "trapezoid"))
    with np.errstate(all="ignore"):
        T = _kinetic_energies(chain, q, qd)
        E = float(integrate.simpson(T, x=t) if rule == "simpson" else integrate.trapezoid(T, x=t))
    return _value_checks.finite_result(E, fname)


# --------------------------------------------------------------------------
# geodesics between two configurations
# --------------------------------------------------------------------------

def _geodesic_rhs(chain, n):
    """The geodesic ODE y = (q, qd) -> (qd, qdd). Its qdd is forward dynamics with zero torque and
    zero gravity, which equals :func:`geodesic_acceleration` (a test checks it) and runs in the
    compiled engine of :mod:`robodyn.dynamics`: geodesic shooting calls it ~10^5 times."""
    zero, no_gravity = np.zeros(n), np.zeros(3)

    def rhs(t, y):
        y = np.ascontiguousarray(y, dtype=float)
        if not np.isfinite(y).all():            # a diverging trial shot: let the solver fail
            return np.full(2 * n, np.nan)
        try:
            qdd = dynamics.forward_dynamics(chain, y[:n], y[n:], zero, gravity=no_gravity)
        except ValueError:                      # its overflow: a diverging trial shot too
            return np.full(2 * n, np.nan)
        return np.concatenate([y[n:], qdd])
    return rhs


def _collocate(rhs, q0, q1, tf, n, n_points, tol, max_iterations):
    """scipy.integrate.solve_bvp of the geodesic ODE from the straight line (ODE residual
    tolerance 1e-6, end points to tol)."""
    mesh = np.linspace(0.0, tf, min(n_points, 21))              # solve_bvp refines it
    s = mesh / tf
    y_guess = np.vstack([q0[:, None] + (q1 - q0)[:, None] * s,
                         np.broadcast_to(((q1 - q0) / tf)[:, None], (n, mesh.size))])

    def fun(_, Yc):
        return np.column_stack([rhs(0.0, Yc[:, m]) for m in range(Yc.shape[1])])

    def bc(ya, yb):
        return np.concatenate([ya[:n] - q0, yb[:n] - q1])

    return integrate.solve_bvp(fun, bc, mesh, y_guess, tol=1e-6, bc_tol=tol,
                               max_nodes=max(1000, 100 * max_iterations))


def _shoot(rhs, q0, q1, tf, n, tol, rtol, atol, max_iterations, count):
    """Initial velocity whose geodesic reaches q1 at tf: Newton (MINPACK hybr) on the end-point
    miss from the straight line's velocity; if that fails, Newton from the initial velocity of a
    collocation solution; then continuation in the end point q0 + s (q1 - q0),
    s = 1/m, 2/m, ..., 1, with m = 4, 8, 16, 32 and a linear predictor."""
    def miss(v0, target):
        count[0] += 1
        sol = integrate.solve_ivp(rhs, (0.0, tf), np.concatenate([q0, v0]), method="DOP853",
                                  rtol=rtol, atol=atol)
        if not sol.success or not np.all(np.isfinite(sol.y[:, -1])):
            return np.full(n, 1e6)
        return sol.y[:n, -1] - target

    def solve(target, guess, iterations=max_iterations):
        res = optimize.root(miss, guess, args=(target,), method="hybr",
                            options=dict(xtol=1e-13, maxfev=iterations * (n + 1)))
        return res.x, float(np.max(np.abs(miss(res.x, target))))

    v_line = (q1 - q0) / tf
    v0, err = solve(q1, v_line, min(max_iterations, 8))
    best = (err, v0)
    if err > tol:                           # seed Newton with the collocation solution
        col = _collocate(rhs, q0, q1, tf, n, 21, tol, max_iterations)
        if col.status in (0, 1, 2) and np.all(np.isfinite(col.y[n:, 0])):
            v0, err = solve(q1, col.y[n:, 0])
            best = min(best, (err, v0), key=lambda b: b[0])
    m = 4
    while err > tol and m <= 32:
        ss, vs, reached = [0.0], [np.zeros(n)], True
        for s in np.linspace(0.0, 1.0, m + 1)[1:]:
            guess = (v_line * s if len(vs) == 1 else
                     vs[-1] + (vs[-1] - vs[-2]) * (s - ss[-1]) / (ss[-1] - ss[-2]))
            v, e = solve(q0 + s * (q1 - q0), guess)
            if e > 1e-6 * (1 - s) + tol:     # intermediate targets need not be exact
                reached = False
                break
            ss.append(s)
            vs.append(v)
        if reached:
            v0, err = v, e
            best = min(best, (err, v0), key=lambda b: b[0])
        m *= 2
    return v0 if err <= tol else best[1]


GEODESIC_ENERGY_RTOL = 1e-6
"""A geodesic keeps its kinetic energy: :func:`geodesic` refuses a result whose kinetic energy
varies along it by more than this fraction of its mean (measured on the book's examples:
below 2e-8 for both methods)."""

MAX_GEODESIC_POINTS = 10**6
"""The most samples :func:`geodesic` returns (``n_points``)."""


def geodesic(chain, q_start, q_end, duration=1.0, *, n_points=201, method="shooting",
             tol: Tolerance = 1e-10, rtol=1e-10, atol=1e-12, max_iterations=50, strict=True):
    r"""The geodesic of the kinetic-energy metric from ``q_start`` to ``q_end`` in time
    ``duration``: the force-free motion (eq. 5.17 with F = 0,
    :math:`\ddot q + \Gamma(\dot q,\dot q) = 0`) that reaches ``q_end``, found as a two-point
    boundary-value problem.

    ``method='shooting'`` solves :math:`q(t_f; \dot q_0) = q_{\mathrm{end}}` for the initial
    velocity :math:`\dot q_0` with :func:`scipy.optimize.root` over
    :func:`scipy.integrate.solve_ivp` (DOP853), starting from the straight line's velocity
    :math:`(q_{\mathrm{end}} - q_{\mathrm{start}})/t_f`; when that Newton iteration fails (far
    end points) it restarts from the initial velocity of a collocation solution, then continues
    from q_start towards q_end in 4, 8, 16 or 32 steps. ``method='collocation'`` uses
    :func:`scipy.integrate.solve_bvp` from the straight line (ODE residual tolerance 1e-6, end
    points to ``tol``; it agrees with shooting to about 1e-8 rad). Between far-apart points
    several geodesics may exist; the solver returns the one it reaches, which need not be the
    shortest. Geodesics keep their kinetic energy, and the path does not depend on the
    duration: doubling it halves the speed and the energy integral.

    Parameters
    ----------
    chain : SerialChain with link inertias and numeric parameters
    q_start, q_end : array_like (n,), rad / m
    duration : float > 0, s
    n_points : int, 3 <= n_points <= MAX_GEODESIC_POINTS, samples returned (odd is best for
        Simpson's rule)
    method : ``'shooting'`` or ``'collocation'``
    tol : end-point tolerance (rad / m) the result must meet
    rtol, atol : integrator tolerances
    max_iterations : Newton iterations (shooting) or mesh nodes factor (collocation)
    strict : raise (True) or warn (False) when the end-point residual exceeds ``tol``

    Returns
    -------
    Geodesic, with ``t``, ``q``, ``qd``, ``qd0``, ``residual``, ``energy``, ``kinetic_energy``

    Raises
    ------
    ValueError, TypeError
        for bad input (sizes, non-finite numbers, duration <= 0, a chain without inertias).
    RuntimeError
        when the solver does not reach ``q_end`` to ``tol`` (the message gives the residual),
        when collocation stops without converging (``solve_bvp`` status 1, "maximum number of
        mesh nodes exceeded", or 2, a singular Jacobian), or when the kinetic energy along the
        result varies by more than ``GEODESIC_ENERGY_RTOL`` of its mean (then it is no
        geodesic); with ``strict=False`` a ``RuntimeWarning`` instead.

    Examples
    --------
    >>> from robodyn.models import planar_rr
    >>> g = geodesic(planar_rr(), [0.0, 0.5], [1.0, 1.5], n_points=51)
    >>> g.residual < 1e-8, bool(np.ptp(g.kinetic_energy) < 1e-8)
    (True, True)
    """
    fname = "geodesic"
    chain = _dynamic_chain(chain, fname)
    _numeric_only(chain, fname)
    n = chain.n
    for name, v in (("q_start", q_start), ("q_end", q_end)):
        if is_symbolic(v):
            raise _value_checks.refusal(
                TypeError, f"{fname}: {name}: expected numbers, got sympy expressions; a "
                           f"geodesic is computed numerically")
    q0 = _joint_vector(chain, q_start, "q_start", fname)
    q1 = _joint_vector(chain, q_end, "q_end", fname)
    tf = _value_checks.scalar(duration, f"{fname}: duration")
    if not tf > 0:
        raise _value_checks.refusal(
            ValueError, f"{fname}: duration: expected a positive time in s, got {duration!r}")
    n_points = _value_checks.size(n_points, f"{fname}: n_points", low=3, high=MAX_GEODESIC_POINTS,
                            item_bytes=8 * (3 * n + 2))
    tol = _value_checks.tolerance(tol, f"{fname}: tol")
    rtol = _value_checks.tolerance(rtol, f"{fname}: rtol")
    atol = _value_checks.tolerance(atol, f"{fname}: atol")
    max_iterations = _value_checks.size(max_iterations, f"{fname}: max_iterations", high=10**4)
    method = _value_checks.choice(method, f"{fname}: method", ("shooting", "collocation"))
    strict = _value_checks.flag(strict, f"{fname}: strict")
    t = np.linspace(0.0, tf, int(n_points))
    with np.errstate(all="ignore"):
        v_line = (q1 - q0) / tf
    start = _geodesic_rhs(chain, n)(0.0, np.concatenate([q0, v_line])) \
        if np.isfinite(v_line).all() else v_line
    if not np.isfinite(start).all():
        raise _value_checks.error(f"{fname}: q_start, q_end", "end points close enough for float64 "
                            "arithmetic", "an overflow of the straight line's speed or "
                            "acceleration (NaN or infinity)", "scale the input down")
    if np.array_equal(q0, q1):               # the constant curve: zero velocity, zero energy
        Z = np.zeros((t.size, n))
        return Geodesic(_frozen(t), _frozen(np.broadcast_to(q0, (t.size, n))), _frozen(Z),
                        _frozen(np.zeros(n)), 0.0, 0.0, _frozen(np.zeros(t.size)), method, 0)
    rhs = _geodesic_rhs(chain, n)
    if method == "shooting":
        count = [0]
        v0 = _shoot(rhs, q0, q1, tf, n, tol, rtol, atol, max_iterations, count)
        sol = integrate.solve_ivp(rhs, (0.0, tf), np.concatenate([q0, v0]), method="DOP853",
                                  rtol=rtol, atol=atol, t_eval=t)
        Y = sol.y if sol.success else np.full((2 * n, t.size), np.nan)
        nfev = count[0] + 1
    else:
        sol = _collocate(rhs, q0, q1, tf, n, int(n_points), tol, max_iterations)
        Y = sol.sol(t) if sol.status in (0, 1, 2) else np.full((2 * n, t.size), np.nan)
        v0 = Y[n:, 0]
        nfev = int(sol.niter)
    q, qd = Y[:n].T, Y[n:].T
    residual = float(np.max(np.abs(q[-1] - q1))) if np.all(np.isfinite(Y)) else np.inf
    if np.all(np.isfinite(Y)):
        T = _kinetic_energies(chain, q, qd)
        E = float(integrate.simpson(T, x=t))
    else:
        T, E = np.full(t.size, np.nan), np.nan
    problems = []
    if not residual <= tol:
        problems.append(f"the end-point residual max|q(t_f) - q_end| = {residual:.3g} exceeds "
                        f"tol = {tol:.3g}")
    if method == "collocation" and sol.status != 0:
        problems.append(f"solve_bvp stopped with status {sol.status} ({sol.message})")
    spread = float(np.ptp(T) / np.mean(T)) if np.all(np.isfinite(T)) and np.mean(T) > 0 \
        else np.inf
    if not spread <= GEODESIC_ENERGY_RTOL:
        problems.append(f"the kinetic energy varies along the path from {np.min(T):.4g} to "
                        f"{np.max(T):.4g} J (relative spread {spread:.3g} > "
                        f"{GEODESIC_ENERGY_RTOL:g}), so it is no geodesic")
    if problems:
        other = "collocation" if method == "shooting" else "shooting"
        msg = (f"{fname}: {method} did not converge: " + "; ".join(problems) +
               f" (from q_start = {np.round(q0, 6).tolist()} to q_end = "
               f"{np.round(q1, 6).tolist()}); try closer end points, method='{other}', or a "
               f"larger tol")
        if strict:
            raise RuntimeError(msg)
        warnings.warn(msg, RuntimeWarning, stacklevel=2)
    return Geodesic(_frozen(t), _frozen(q), _frozen(qd), _frozen(v0), residual, E, _frozen(T),
                    method, nfev)

from .._boundary import seal as _seal  # noqa: E402 -- the one boundary (issue 28): last, over the finished module
_seal(globals())
