r"""Lagrangian dynamics of serial chains, symbolic and numeric: the library of Part II.

Part II of the book, *Lagrangian dynamics*, is built on this module:

* Chapter 1, *The Euler--Lagrange equations of a linkage* -- :func:`mass_matrix`,
  :func:`christoffel_symbols`, :func:`coriolis_matrix`, :func:`gravity_vector`,
  :func:`euler_lagrange` and :func:`equations_of_motion` (the RR and RP arms, the UR5-like arm);
* Chapter 2, *Two properties: positive definite M and skew Mdot - 2C* -- :func:`mass_matrix`,
  :func:`coriolis_matrix`, :func:`kinetic_energy`;
* Chapter 3, *Generalized forces from wrenches* -- :func:`generalized_forces`,
  :func:`gravity_vector`, :func:`potential_energy`;
* Chapter 4, *The geometric view: metric, connection, geodesics* -- the Christoffel symbols of
  both kinds (:func:`christoffel_symbols`);
* Chapter 5, *Simulation: integrating the equations of motion* -- :func:`equations_of_motion`,
  :meth:`EquationsOfMotion.numeric` and :meth:`EquationsOfMotion.rhs`.

The Lagrangian of a linkage is :math:`L(q,\dot q) = \tfrac12\dot q^TM(q)\dot q - V(q)`; the
Euler--Lagrange equations (5.10) become, handbook eq. (5.14),

.. math:: M(q)\ddot q + C(q,\dot q)\dot q + G(q) = Y,

with the Christoffel symbols of the first kind (5.13)

.. math:: \Gamma_{ijk} = \tfrac12\Big(\frac{\partial M_{ij}}{\partial q_k}
          + \frac{\partial M_{ik}}{\partial q_j} - \frac{\partial M_{jk}}{\partial q_i}\Big),
          \qquad C_{ij} = \sum_k \Gamma_{ijk}\dot q_k,\qquad G_i = \frac{\partial V}{\partial q_i}.

Index convention (the handbook's): the *first* index of :math:`\Gamma_{ijk}` is the equation
(row) index, the last one is contracted with :math:`\dot q`. The second kind (5.16) is
:math:`\Gamma^i_{jk} = \sum_l (M^{-1})_{il}\Gamma_{ljk}`, so that :math:`\ddot q^i +
\Gamma^i_{jk}\dot q^j\dot q^k = (M^{-1}(Y - G))^i`. Both are returned as sympy ``Array`` of
shape (n, n, n) indexed ``[i, j, k]``.

Conventions: twists (omega, v), wrenches (m, f) as everywhere in :mod:`robodyn`; gravity is a
3-vector in the space frame, default :data:`DEFAULT_GRAVITY` = (0, 0, -9.81) m/s^2 (the planar
models lie in the xy plane: pass ``gravity=(0, -g, 0)``). A link's spatial inertia may have its
centre of mass off the link frame: M, G and V all count the offset.

Symbolic derivation (:mod:`robodyn.lagrange._derivation`, which Kane's method and the later parts can use
too). :func:`equations_of_motion` runs the composite-rigid-body recursion in the link frames
and gives M, C (from the Christoffel symbols of M) and G in one of two forms: *expanded*, each
entry a sum of cosines and sines of joint-angle combinations (``cos(q1 + ... + q7)`` stays one
term; what the chapters print, no ``simplify``), or, for chains whose expanded form would swell
(many non-parallel revolute joints), *nested*: the recursion's quantities kept as named
intermediate Symbols (:attr:`EquationsOfMotion.intermediates`). Numeric twins are compiled C
(:meth:`EquationsOfMotion.numeric`).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import sympy as sp
from sympy.core.function import AppliedUndef

from .. import _value_checks
from .._value_checks import is_symbolic
from .._value_checks import to_sympy as _S
from ..equations import MassMatrixForm, NumericForm, SingularMassMatrix, _finite_constants, \
    _is_batch
from ..kinds import Metric
from ..rigid_motion._kinematics import SerialChain, jacobian_body, jacobian_space, link_poses

__all__ = ["DEFAULT_GRAVITY", "mass_matrix", "christoffel_symbols", "coriolis_matrix",
           "potential_energy", "kinetic_energy", "gravity_vector", "euler_lagrange",
           "equations_of_motion", "EquationsOfMotion", "NumericEquations",
           "generalized_forces"]

DEFAULT_GRAVITY = (0.0, 0.0, -9.81)
"""Gravitational acceleration in the space frame, m/s^2 (same as :mod:`robodyn.dynamics`)."""


# --------------------------------------------------------------------------
# input checks
# --------------------------------------------------------------------------

def _dyn_chain(chain, fname):
    if not isinstance(chain, SerialChain):
        _value_checks.chain(chain, f"{fname}: chain", SerialChain)
    if chain.link_inertias is None or chain.link_homes is None:
        raise _value_checks.refusal(ValueError, f"{fname}: {chain!r} has no link inertias; build it with "
                         f"SerialChain.from_screws(..., link_homes=[...], link_inertias=[...])")
    return chain


def _joints(chain, x, name, fname):
    v = _value_checks.vector(x, chain.n, f"{fname}: {name} (one value per joint of the "
                                   f"{chain.n}-joint chain)")
    return v


def _mode(chain, *xs):
    return chain.symbolic or any(is_symbolic(x) for x in xs)


def _gravity(gravity, fname):
    g = _value_checks.vector(gravity, 3, f"{fname}: gravity (3-vector in the space frame, m/s^2)")
    return g


def _symbol_list(q, name, fname):
    """A list of distinct sympy Symbols (q, qd of euler_lagrange and christoffel_symbols)."""
    if isinstance(q, sp.MatrixBase):
        q = list(q)
    if isinstance(q, sp.Symbol):
        q = [q]
    if not isinstance(q, (list, tuple)) or not q:
        raise _value_checks.refusal(
            TypeError, f"{fname}: {name}: expected a non-empty list of sympy Symbols, got "
                       f"{_value_checks._describe(q)}")
    bad = [e for e in q if not isinstance(e, sp.Symbol)]
    if bad:
        raise _value_checks.refusal(TypeError, f"{fname}: {name}: expected sympy Symbols, got {bad[0]!r} "
                        f"({type(bad[0]).__name__}); hint: q = sympy.symbols('q1:3')")
    if len(set(q)) != len(q):
        raise _value_checks.refusal(
            ValueError, f"{fname}: {name}: expected distinct symbols, got {list(q)}")
    return list(q)


def _accelerations(L, q, qd, qdd, fname):
    """The acceleration symbols of an Euler--Lagrange derivation: ``qdd`` given (distinct, none
    shared with q, qd or another free symbol of L), or the default ``<q_i>_ddot``, refused when
    one is named like a symbol of L, q or qd (it would merge with it: pass ``qdd=``)."""
    n = len(q)
    if qdd is None:
        taken = {s.name: s for s in (L.free_symbols | set(q) | set(qd))}
        qdd = [sp.Symbol(f"{s.name}_ddot") for s in q]
        hit = [a for a in qdd if a.name in taken]
        if hit:
            raise _value_checks.error(
                f"{fname}: qdd", "default acceleration symbols <q_i>_ddot of their own",
                f"{hit[0]}, already a symbol of L, q or qd",
                "pass qdd=[...] with new symbols for the accelerations")
    qdd = _symbol_list(qdd, "qdd", fname)
    if len(qdd) != n:
        raise _value_checks.refusal(
            ValueError, f"{fname}: expected {n} accelerations, got len(qdd) = {len(qdd)}")
    _value_checks.own_symbols({"q": q, "qd": qd, "qdd": qdd}, fname)
    other = [a for a in qdd if a in L.free_symbols]
    if other:
        raise _value_checks.error(f"{fname}: qdd", "symbols that do not occur in L",
                                  f"{other[0]}, a parameter of L",
                                  "an acceleration needs its own symbol")
    return qdd


# --------------------------------------------------------------------------
# the symbolic engine lives in robodyn.lagrange._derivation (trigonometric polynomials)
# --------------------------------------------------------------------------

from ._derivation import NestedDerivation as _NestedDerivation  # noqa: E402
from ._derivation import choose as _choose  # noqa: E402
from ._derivation import derivation as _derivation  # noqa: E402


def _symbolic_mass_matrix(chain, q):
    return _derivation(chain).mass_matrix(list(q))


def _symbolic_potential(chain, q, g):
    return _derivation(chain).potential(list(q), list(g))


def _prepare(chain, q, fname):
    """q as a column of sympy expressions for a symbolic chain or q; symbols to differentiate."""
    qv = _joints(chain, q, "q", fname)
    if not isinstance(qv, sp.MatrixBase):
        qv = _S(qv)
    return qv


# --------------------------------------------------------------------------
# M, T, V, G
# --------------------------------------------------------------------------

def mass_matrix(chain, q):
    r"""The mass (inertia) matrix :math:`M(q) = \sum_i J_i^T\mathcal I_i J_i` (handbook §5.3.2),
    with :math:`J_i` the body Jacobian of link *i*'s centre-of-mass frame
    (``jacobian_body(chain, q, link=i)``) and :math:`\mathcal I_i` = ``chain.link_inertias[i]``.

    Numeric input uses that sum directly; symbolic input the equivalent composite-rigid-body
    recursion in the link frames, each entry a sum of cosines and sines of joint-angle
    combinations (no ``simplify``); the derivation is cached on the chain.

    Parameters
    ----------
    chain : SerialChain with link_homes and link_inertias
    q : array_like (n,), rad / m; numbers or sympy expressions

    Returns
    -------
    ndarray(n, n), kg m^2 / kg m / kg (``sympy.Matrix`` when q or the chain is symbolic)

    Raises
    ------
    ValueError
        if the chain has no inertias or q has the wrong length.

    Examples
    --------
    >>> import sympy as sp
    >>> from robodyn.models import planar_rr
    >>> q1, q2 = sp.symbols('q1 q2')
    >>> mass_matrix(planar_rr(*sp.symbols('l1 l2 m1 m2')), [q1, q2])[1, 1]
    l2**2*m2/3
    """
    fname = "mass_matrix"
    _dyn_chain(chain, fname)
    if _mode(chain, q):
        return _symbolic_mass_matrix(chain, _prepare(chain, q, fname))
    qv = _joints(chain, q, "q", fname)
    M = np.zeros((chain.n, chain.n))
    for i in range(chain.n):
        J = jacobian_body(chain, qv, link=i)
        M += J.T @ np.asarray(chain.link_inertias[i], dtype=float) @ J
    return 0.5 * (M + M.T)


def kinetic_energy(chain, q, qd):
    r"""Kinetic energy :math:`T = \tfrac12\dot q^TM(q)\dot q` (J).

    >>> from robodyn.models import planar_rr
    >>> round(kinetic_energy(planar_rr(), [0, 0], [1, 0]), 12)   # (1/3 + 1 + 1/3 + 1) / 2 * 1
    1.333333333333
    """
    fname = "kinetic_energy"
    _dyn_chain(chain, fname)
    q = _joints(chain, q, "q", fname)
    qdv = _joints(chain, qd, "qd", fname)
    _value_checks.own_symbols({"q": q, "qd": qdv}, fname)
    M = mass_matrix(chain, q)
    if isinstance(M, sp.MatrixBase):
        qdv = _S(qdv) if not isinstance(qdv, sp.MatrixBase) else qdv
        return sp.expand((qdv.T * M * qdv)[0] / 2)
    if is_symbolic(qdv):
        qdv = _S(qdv)
        return sp.expand((qdv.T * sp.Matrix(M) * qdv)[0] / 2)
    with np.errstate(all="ignore"):
        return _value_checks.finite_result(float(qdv @ M @ qdv / 2), fname)


def potential_energy(chain, q, gravity=DEFAULT_GRAVITY):
    r"""Gravitational potential energy :math:`V(q) = -\sum_i m_i\,g^Tp_i(q)` (J), with
    :math:`p_i` the centre of mass of link *i* in the space frame (the link frame's origin plus
    its rotated offset, read off the spatial inertia) and *g* in the space frame.

    >>> from robodyn.models import planar_rr
    >>> potential_energy(planar_rr(), [np.pi / 2, 0], gravity=(0, -9.81, 0))   # CoMs at y = 0.5, 1.5
    19.62
    """
    fname = "potential_energy"
    _dyn_chain(chain, fname)
    g = _gravity(gravity, fname)
    if _mode(chain, q, g):
        return _symbolic_potential(chain, _prepare(chain, q, fname), _S(g))
    qv = _joints(chain, q, "q", fname)
    P = link_poses(chain, qv)
    V = 0.0
    with np.errstate(all="ignore"):
        for i, Gi in enumerate(chain.link_inertias):
            m, h = _mass_and_first_moment(Gi)
            V -= float(g @ (m * P[i, :3, 3] + P[i, :3, :3] @ h))
    return _value_checks.finite_result(V, fname)


def _mass_and_first_moment(G):
    """Mass m and first moment h = m c (c the centre of mass in the link frame) of a numeric
    spatial inertia in the (omega, v) ordering, whose upper right block is m [c]."""
    G = np.asarray(G, dtype=float)
    return G[3, 3], np.array([G[2, 4], G[0, 5], G[1, 3]])


def gravity_vector(chain, q, gravity=DEFAULT_GRAVITY):
    r"""The gravity term :math:`G(q) = \partial V/\partial q` of eq. (5.14) (N m / N).

    Numeric: :math:`G = -\sum_i J_i^T\mathcal I_i(0,\ R_i^Tg)` (the link's body Jacobian and
    spatial inertia: the body wrench of its weight, about the link frame's origin, so a centre of
    mass off the frame counts). Symbolic: the derivative of :func:`potential_energy`.

    Parameters
    ----------
    gravity : 3-vector in the space frame, m/s^2

    >>> from robodyn.models import planar_rr
    >>> np.round(gravity_vector(planar_rr(), [0, 0], gravity=(0, -9.81, 0)), 6)
    array([19.62 ,  4.905])
    """
    fname = "gravity_vector"
    _dyn_chain(chain, fname)
    g = _gravity(gravity, fname)
    if _mode(chain, q, g):
        qv = _prepare(chain, q, fname)
        return _derivation(chain).gravity(list(qv), list(_S(g)))
    qv = _joints(chain, q, "q", fname)
    P = link_poses(chain, qv)
    G = np.zeros(chain.n)
    with np.errstate(all="ignore"):
        for i in range(chain.n):
            J = jacobian_body(chain, qv, link=i)
            weight = np.r_[np.zeros(3), P[i, :3, :3].T @ g]     # gravity as a body acceleration
            G -= J.T @ (np.asarray(chain.link_inertias[i], dtype=float) @ weight)
    return _value_checks.finite_result(G, fname)


# --------------------------------------------------------------------------
# Christoffel symbols and the Coriolis matrix
# --------------------------------------------------------------------------

# dM[k][i, j] = dM_ij / dq_k; the Christoffel symbols (5.13) and C (5.14) from them: the
# pure-sympy module robodyn.symbolic derives them, for the library and the book's pages alike
from .. import symbolic as _symbolic  # noqa: E402
from ..symbolic import _coriolis_from_dM, _dM  # noqa: E402


def _check_M(M, q, fname):
    if not isinstance(M, sp.MatrixBase):
        if isinstance(M, np.ndarray) and not is_symbolic(M):
            raise _value_checks.refusal(
                TypeError, f"{fname}: M: expected a sympy Matrix in the symbols q (Christoffel "
                           f"symbols need derivatives), got a numeric array; hint: numeric "
                           f"chains go through robodyn.dynamics.coriolis_matrix(chain, q, qd)")
        if not is_symbolic(M):
            raise _value_checks.refusal(
                TypeError, f"{fname}: M: expected a sympy Matrix, got {_value_checks._describe(M)}")
    M = _value_checks.sym_matrix(M, f"{fname}: M")        # strings refused, numbers checked
    q = _symbol_list(q, "q", fname)
    n = len(q)
    if M.shape[0] != M.shape[1]:
        raise _value_checks.refusal(
            ValueError, f"{fname}: M: expected a square {n}x{n} matrix (one row per "
                        f"coordinate in q), got shape {M.shape}")
    if M.shape != (n, n):
        raise _value_checks.refusal(
            ValueError, f"{fname}: M, q: expected a square {n}x{n} M (one row per coordinate "
                        f"in q), got M of shape {M.shape} and {n} coordinates in q")
    for i in range(n):
        for j in range(i):
            if M[i, j] != M[j, i] and sp.expand(M[i, j] - M[j, i]) != 0:
                raise _value_checks.refusal(ValueError, f"{fname}: M: expected a symmetric matrix, got "
                                 f"M[{i},{j}] - M[{j},{i}] = {sp.expand(M[i, j] - M[j, i])}")
    Metric.check(M, f"{fname}: M")           # positive definite under its symbols' assumptions
    return sp.Matrix(M), q


def christoffel_symbols(M, q, kind=1):
    r"""Christoffel symbols of a mass matrix M(q).

    ``kind=1``, eq. (5.13): :math:`\Gamma_{ijk} = \tfrac12(\partial M_{ij}/\partial q_k +
    \partial M_{ik}/\partial q_j - \partial M_{jk}/\partial q_i)`, so that
    :math:`C_{ij} = \sum_k\Gamma_{ijk}\dot q_k` (5.14). ``kind=2``, eq. (5.16):
    :math:`\Gamma^i_{jk} = \sum_l (M^{-1})_{il}\Gamma_{ljk}`. Both are symmetric in (j, k).

    Parameters
    ----------
    M : sympy.Matrix (n, n), symmetric, in the symbols q
    q : list of n sympy Symbols
    kind : 1 or 2

    Returns
    -------
    sympy.ImmutableDenseNDimArray of shape (n, n, n), indexed ``[i, j, k]``

    Raises
    ------
    TypeError for numeric M or q not symbols; ValueError for a non-square, non-symmetric or
    not positive definite M (:class:`robodyn.kinds.Metric`, decided under its symbols'
    assumptions) or an unknown kind.

    Examples
    --------
    >>> import sympy as sp
    >>> q1, q2, h = sp.symbols('q1 q2 h')
    >>> M = sp.Matrix([[3 + 2 * h * sp.cos(q2), 1 + h * sp.cos(q2)], [1 + h * sp.cos(q2), 1]])
    >>> christoffel_symbols(M, [q1, q2])[0, 1, 1]
    -h*sin(q2)
    """
    fname = "christoffel_symbols"
    if kind not in (1, 2) or isinstance(kind, bool):
        raise _value_checks.refusal(
            ValueError, f"{fname}: kind: expected 1 (first kind, eq. 5.13) or 2 (second kind, "
                        f"eq. 5.16), got {kind!r}")
    M, q = _check_M(M, q, fname)
    return _symbolic.christoffel_symbols(M, q, kind)      # the pure-sympy derivation


def coriolis_matrix(M, q, qd):
    r"""The Coriolis matrix :math:`C_{ij}(q,\dot q) = \sum_k\Gamma_{ijk}(q)\dot q_k` of eq. (5.14),
    from the Christoffel symbols of the first kind (5.13).

    ``M`` is a symbolic mass matrix in the symbols ``q``, or a :class:`~robodyn.rigid_motion.SerialChain`: a numeric
    chain with numeric q, qd goes to :func:`robodyn.dynamics.coriolis_matrix` (exact, O(n^2)); a
    symbolic one is derived here.

    Returns
    -------
    sympy.Matrix (n, n) (ndarray for a numeric chain)

    Examples
    --------
    >>> import sympy as sp
    >>> q1, q2, u1, u2, h = sp.symbols('q1 q2 u1 u2 h')
    >>> M = sp.Matrix([[3 + 2 * h * sp.cos(q2), 1 + h * sp.cos(q2)], [1 + h * sp.cos(q2), 1]])
    >>> coriolis_matrix(M, [q1, q2], [u1, u2])
    Matrix([
    [-h*u2*sin(q2), -h*u1*sin(q2) - h*u2*sin(q2)],
    [ h*u1*sin(q2),                            0]])
    """
    fname = "coriolis_matrix"
    if isinstance(M, SerialChain):
        chain = _dyn_chain(M, fname)
        if not _mode(chain, q, qd):
            from ..dynamics import _recursions as dynamics
            return dynamics.coriolis_matrix(chain, q, qd)
        qv = _prepare(chain, q, fname)
        qdv = _joints(chain, qd, "qd", fname)
        qdv = _S(qdv) if not isinstance(qdv, sp.MatrixBase) else qdv
        _value_checks.own_symbols({"q": qv, "qd": qdv}, fname)
        return _derivation(chain).coriolis(list(qv), list(qdv))
    M, q = _check_M(M, q, fname)
    n = len(q)
    if not isinstance(qd, (list, tuple, sp.MatrixBase, np.ndarray)) or len(qd) != n:
        raise _value_checks.refusal(ValueError, f"{fname}: qd: expected {n} joint velocities, got "
                         f"{_value_checks._describe(qd)}")
    qdv = _S(_value_checks.vector(qd, n, f"{fname}: qd"), f"{fname}: qd")
    _value_checks.own_symbols({"q": q, "qd": qdv}, fname)
    return _coriolis_from_dM(_dM(M, q), qdv, n)


# --------------------------------------------------------------------------
# the generic Euler-Lagrange operator
# --------------------------------------------------------------------------

def euler_lagrange(L, q, qd, qdd=None, split=False):
    r"""The Euler--Lagrange expressions (5.10) of any Lagrangian:
    :math:`E_i = \frac{d}{dt}\frac{\partial L}{\partial\dot q_i} - \frac{\partial L}{\partial q_i}`,
    with the time derivative by the chain rule,
    :math:`\frac{d}{dt}\frac{\partial L}{\partial\dot q_i} = \sum_j\frac{\partial^2L}{\partial\dot q_i
    \partial\dot q_j}\ddot q_j + \frac{\partial^2L}{\partial\dot q_i\partial q_j}\dot q_j`
    plus :math:`\partial^2L/\partial\dot q_i\partial t` when L depends explicitly on time (a
    Symbol named ``t``, e.g. ``robodyn.equations.TIME``: a driven system). Functions of
    time such as ``q(t)`` are refused (q and qd are plain Symbols here).
    The equations of motion are :math:`E = Y`.

    Parameters
    ----------
    L : sympy expression in the symbols q, qd
    q, qd : lists of n sympy Symbols (coordinates, velocities); not functions of t
    qdd : list of n Symbols for the accelerations, default ``<q_i>_ddot``
    split : if True return ``(M, rest)`` with :math:`E = M\ddot q + \mathrm{rest}`

    Returns
    -------
    sympy.Matrix (n, 1), linear in qdd (or the pair (M, rest))

    Raises
    ------
    TypeError if q, qd, qdd are not Symbols or L is not a sympy expression; ValueError for
    lists of different lengths, q, qd, qdd sharing a symbol, qdd holding a parameter of L, or
    default accelerations ``<q_i>_ddot`` named like a symbol of L (pass ``qdd=``).

    Examples
    --------
    A pendulum, :math:`L = \tfrac12ml^2\dot\theta^2 + mgl\cos\theta`:

    >>> import sympy as sp
    >>> th, thd, thdd, m, g, l = sp.symbols('theta thetad thetadd m g l')
    >>> euler_lagrange(m * l**2 * thd**2 / 2 + m * g * l * sp.cos(th), [th], [thd], [thdd])
    Matrix([[g*l*m*sin(theta) + l**2*m*thetadd]])
    """
    fname = "euler_lagrange"
    if not isinstance(L, sp.Basic):
        _value_checks.no_text(L, f"{fname}: L")
        try:
            L = sp.sympify(L, strict=True)
        except sp.SympifyError as exc:
            raise _value_checks.refusal(TypeError, f"{fname}: L: expected a sympy expression, got "
                            f"{_value_checks._describe(L)}") from exc
    q = _symbol_list(q, "q", fname)
    qd = _symbol_list(qd, "qd", fname)
    n = len(q)
    if len(qd) != n:
        raise _value_checks.refusal(
            ValueError, f"{fname}: expected as many velocities as coordinates, got "
                        f"len(q) = {n}, len(qd) = {len(qd)}")
    _value_checks.own_symbols({"q": q, "qd": qd}, fname)
    qdd = _accelerations(L, q, qd, qdd, fname)
    undef = L.atoms(AppliedUndef)
    if undef:
        raise _value_checks.error(f"{fname}: L", "an expression in the Symbols q, qd (and t)",
                            f"one holding the function {sorted(map(str, undef))[0]}",
                            "q and qd are Symbols here: write q1 for q1(t); the time derivative "
                            "is taken by the chain rule")
    times = [v for v in L.free_symbols if v.name == "t" and v not in set(q) | set(qd)]
    p = [sp.diff(L, v) for v in qd]
    Mm = sp.Matrix(n, n, lambda i, j: sp.diff(p[i], qd[j]))
    rest = sp.Matrix([sum(sp.diff(p[i], q[j]) * qd[j] for j in range(n))
                      + sum(sp.diff(p[i], t) for t in times) - sp.diff(L, q[i])
                      for i in range(n)])
    if split:
        return Mm, rest
    return (Mm * sp.Matrix(qdd) + rest).applyfunc(sp.expand)


# --------------------------------------------------------------------------
# equations of motion: symbolic result + numeric twins
# --------------------------------------------------------------------------

class NumericEquations(NumericForm):
    r"""Fast numeric twins of :class:`EquationsOfMotion`, made by
    :meth:`EquationsOfMotion.numeric`: ``M(q)``, ``C(q, qd)``, ``G(q)``, ``tau(q, qd, qdd)``
    :math:`= M\ddot q + C\dot q + G` and ``forward_dynamics(q, qd, tau)``
    :math:`= M^{-1}(\tau - C\dot q - G)` (eq. 5.14). Arguments are 1-D arrays of length n
    (one state), or all of shape (B, n) (a batch of B states, evaluated in one call); results
    are new numpy arrays, (n, n) and (n,) for one state, (B, n, n) and (B, n) for a batch.
    Every entry of a batch is checked as a single state is (shape, finite).

    It is also the shared :class:`~robodyn.equations.NumericForm` (speeds u = qd, forcing
    :math:`-C\dot q - G`, input matrix I), so ``rhs(t, x, tau)`` and ``accelerations`` work as
    for every other method of the book.

    ``backend`` says which code runs: ``"c"`` (compiled by :mod:`robodyn.codegen`) or
    ``"lambdify"`` (sympy ``lambdify(cse=True)`` into Python)."""

    def __init__(self, n, backend, M, C, G, tau, forward_dynamics):
        super().__init__(n, n, n, "EquationsOfMotion")
        self.backend = backend
        self.M, self.C, self.G = M, C, G
        self.tau, self.forward_dynamics = tau, forward_dynamics

    def __repr__(self):
        return f"NumericEquations(n={self.n}, backend={self.backend!r})"

    _recipe = None      # (equations, values, backend) when made by EquationsOfMotion.numeric

    def __reduce__(self):
        """Pickled as its recipe -- the symbolic equations, the values and the backend -- and
        made again on loading (from the disk cache of compiled code, so without compiling):
        its functions are compiled or generated code, which pickle cannot carry, and a
        compiled module is not importable by name in another process."""
        if self._recipe is None:
            return super().__reduce__()
        return _numeric_twin, self._recipe

    def _args(self, fname, t, **states):
        """The states (n,) or (B, n) checked (real, finite, one shape) and the time."""
        _value_checks.real_number(t, f"NumericEquations.{fname}: t", hint="a time in s")
        out = []
        for key, x in states.items():
            single, a = _value_checks.batch(x, self.n, f"NumericEquations.{fname}: {key}")
            out.append(a[0] if single else a)
        return out

    def mass_matrix(self, q, t=0.0):
        q, = self._args("mass_matrix", t, q=q)
        return self.M(q)

    vectorized = True

    def forcing(self, q, u, t=0.0):
        q, u = self._args("forcing", t, q=q, u=u)
        with np.errstate(all="ignore"):
            out = -np.einsum("...ij,...j->...i", self.C(q, u), u) - self.G(q)
        return _value_checks.finite_result(out, "NumericEquations.forcing")

    def kinematics(self, q, u, t=0.0):
        q, u = self._args("kinematics", t, q=q, u=u)
        return np.array(u, dtype=float)

    def input_matrix(self, q, t=0.0):
        q, = self._args("input_matrix", t, q=q)
        eye = np.eye(self.n)
        return np.broadcast_to(eye, np.shape(q)[:-1] + eye.shape).copy() if np.ndim(q) == 2 \
            else eye

    def kinematics_jacobian(self, q, u, t=0.0):
        self._args("kinematics_jacobian", t, q=q, u=u)
        return np.zeros((self.n, self.n + 1))

    def accelerations(self, q, u, t=0.0, tau=None):
        r""":math:`\ddot q = M^{-1}(\tau - C\dot q - G)` by the compiled forward dynamics; a
        batch of states (B, n) gives (B, n) (``tau`` (n,) for all, or (B, n))."""
        fname = "accelerations"
        if _is_batch(q, self.n) or _is_batch(u, self.n):
            x, _, T = self._batch(fname, t, tau, q=(q, self.n, "q"), u=(u, self.n, "u"))
            q, u, tau = x["q"], x["u"], T
        else:
            q, u = self._args(fname, t, q=q, u=u)
            tau = self._tau(tau, fname)
        try:
            with np.errstate(all="ignore"):
                out = self.forward_dynamics(q, u, tau)
        except _value_checks.ResultError as err:      # found by the compiled code: this result's
            raise _value_checks.result_error(f"NumericEquations.{fname}", "finite numbers for "
                                       "finite input", f"an overflow ({err})") from err
        return _value_checks.finite_result(out, f"NumericEquations.{fname}")


def _lambdified(M, C, G, q, qd, intermediates=()):
    """:class:`NumericEquations` from ``lambdify(cse=True)`` (the fallback without a compiler);
    ``intermediates`` (Symbol, definition) pairs are computed first, in order. Single states
    run through ``math`` functions; a batch (arguments of shape (B, n)) through numpy
    functions, each expression evaluated once for the whole batch."""
    n = len(q)
    cse = True
    if intermediates:
        def cse(exprs):                     # the intermediates are the common subexpressions
            return list(intermediates), exprs

    qdd = list(sp.symbols(f"_qdd0:{n}"))
    bias = C * sp.Matrix(qd) + G
    table = {"M": (q, list(M)), "C": (q + qd, list(C)), "G": (q, list(G)),
             "tau": (q + qd + qdd, list(M * sp.Matrix(qdd) + bias)),
             "MH": (q + qd, list(M) + list(bias))}
    made = {}

    def fn(name, batch):
        key = (name, batch)
        if key not in made:                 # made on first use: a batch needs numpy code
            syms, exprs = table[name]
            made[key] = sp.lambdify(syms, exprs, modules="numpy" if batch else "math", cse=cse)
        return made[key]

    def args(fname, **vectors):
        """The arguments as one list of floats (single state) or one (B, k) array (batch),
        checked: shape (n,) or (B, n), all alike, finite."""
        xs = []
        for name, v in vectors.items():
            x = _value_checks.real_array(v, f"{fname}: {name}")     # no text, booleans, masks
            if x.ndim not in (1, 2) or x.shape[-1] != n:
                raise _value_checks.refusal(
                    ValueError, f"{fname}: {name}: expected shape ({n},) for one state or "
                                f"(B, {n}) for a batch of B states, got shape {x.shape}")
            if xs and x.shape != xs[0].shape:
                first = next(iter(vectors))
                raise _value_checks.refusal(
                    ValueError, f"{fname}: {name}: expected the shape of {first} (all ({n},), "
                                f"or all (B, {n}) with the same B), got shape {x.shape}")
            if not np.all(np.isfinite(x)):
                raise _value_checks.refusal(
                    ValueError, f"{fname}: {name}: expected finite numbers, got {x!r}")
            xs.append(x)
        if xs[0].ndim == 1:
            return np.concatenate(xs).tolist(), None
        return None, np.concatenate(xs, axis=1)

    def call(name, fname, shape, **vectors):
        one, many = args(fname, **vectors)
        if many is None:
            with _value_checks.overflow_guard(fname):         # math's OverflowError: the result's
                out = np.array(fn(name, False)(*one), dtype=float).reshape(shape)
            return _value_checks.finite_result(out, fname)
        cols = fn(name, True)(*many.T)
        out = np.empty((many.shape[0], len(cols)))
        for k, c in enumerate(cols):        # constants come back as scalars: broadcast
            out[:, k] = c
        return _value_checks.finite_result(out.reshape((many.shape[0],) + shape), fname)

    def mass(q):
        return call("M", "M", (n, n), q=q)

    def coriolis(q, qd):
        return call("C", "C", (n, n), q=q, qd=qd)

    def gravity(q):
        return call("G", "G", (n,), q=q)

    def tau(q, qd, qdd):
        return call("tau", "tau", (n,), q=q, qd=qd, qdd=qdd)

    def forward_dynamics(q, qd, tau):
        fname = "forward_dynamics"
        args(fname, q=q, qd=qd, tau=tau)                    # checked before any work
        out = call("MH", fname, (n * n + n,), q=q, qd=qd)
        Mq = out[..., :n * n].reshape(out.shape[:-1] + (n, n))
        L = _factor(Mq)
        if L is None:
            bad = np.asarray(q, dtype=float)
            if Mq.ndim == 3:                                 # name the first bad state
                k = next(k for k, m in enumerate(Mq) if _factor(m) is None)
                bad, Mq = bad[k], Mq[k]
            raise SingularMassMatrix(
                f"forward_dynamics: M(q) at q = {bad.tolist()}: expected a positive definite "
                f"mass matrix, got one that is singular or not positive definite at this "
                f"state, eigenvalues {np.linalg.eigvalsh((Mq + Mq.T) / 2)} (a pivot of its "
                f"Cholesky factorization at most n eps max M_ii: check the masses and inertias)")
        rhs = (np.asarray(tau, dtype=float) - out[..., n * n:])[..., None]
        y = np.linalg.solve(L, rhs)
        return _value_checks.finite_result(np.linalg.solve(np.swapaxes(L, -1, -2), y)[..., 0], fname)

    return NumericEquations(n, "lambdify", mass, coriolis, gravity, tau, forward_dynamics)


def _factor(Mq):
    """The Cholesky factor of M (one state, or a batch), or None when a pivot is at most
    n eps max M_ii at some state: singular or not positive definite there (the test of the
    generated C, :class:`robodyn.equations.SingularMassMatrix`)."""
    try:
        L = np.linalg.cholesky(Mq)
    except np.linalg.LinAlgError:
        return None
    n = Mq.shape[-1]
    tiny = n * np.finfo(float).eps * np.diagonal(Mq, axis1=-2, axis2=-1).max(axis=-1)
    if np.any((np.diagonal(L, axis1=-2, axis2=-1) ** 2).min(axis=-1) <= tiny):
        return None
    return L


def _compiled(M, C, G, q, qd, intermediates=()):
    """:class:`NumericEquations` whose functions are C code (:func:`robodyn.codegen.compile_equations`,
    or for the nested form the intermediates written out as C by :mod:`robodyn.lagrange._derivation`)."""
    from .. import codegen
    if intermediates:
        from ._derivation import compile_nested
        mod = compile_nested(M, C, G, q, qd, intermediates)
    else:
        mod = codegen.compile_equations(M, C, G, q, qd)
    return NumericEquations(len(q), "c", mod.M, mod.C, mod.G, mod.tau, mod.forward_dynamics)


@dataclass(frozen=True, eq=False)
class EquationsOfMotion(MassMatrixForm):
    r"""The symbolic equations of motion :math:`M(q)\ddot q + C(q,\dot q)\dot q + G(q) = \tau`
    (eq. 5.14) of a chain, an immutable value made by :func:`equations_of_motion`.

    Fields ``q``, ``qd`` (n x 1 columns of Symbols), ``M``, ``C`` (n x n), ``G`` (n x 1),
    ``gravity``; :meth:`tau`, :meth:`numeric`. As every method's equations
    (:class:`~robodyn.equations.MassMatrixForm`), it also offers ``u`` (= ``qd``),
    ``mass_matrix`` (= ``M``), ``forcing`` :math:`= -C\dot q - G` and :meth:`rhs`."""

    q: sp.Matrix
    qd: sp.Matrix
    M: sp.Matrix
    C: sp.Matrix
    G: sp.Matrix
    gravity: tuple
    name: str = "chain"
    intermediates: tuple = ()
    _recursion: tuple = field(default=(), repr=False, compare=False)
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def n(self):
        return self.q.shape[0]

    @property
    def u(self):
        return self.qd

    @property
    def mass_matrix(self):
        return self.M

    @property
    def forcing(self):
        return -self.C * self.qd - self.G

    def parameters(self):
        """The free symbols other than q, qd, t and the intermediates (lengths, masses...)."""
        known = set(self.q) | set(self.qd) | {self.t} | {w for w, _ in self.intermediates}
        exprs = [self.M, self.C, self.G] + [e for _, e in self.intermediates]
        return sorted(set().union(*(e.free_symbols for e in exprs)) - known, key=str)

    def explicit(self):
        """The same equations with the intermediates written into M, C, G (an
        :class:`EquationsOfMotion` without intermediates; large for long spatial chains)."""
        if not self.intermediates:
            return self
        done = {}
        for w, e in self.intermediates:
            done[w] = e.xreplace(done)
        M, C, G = (X.xreplace(done) for X in (self.M, self.C, self.G))
        return EquationsOfMotion(self.q, self.qd, M, C, G, self.gravity, self.name, (),
                                 self._recursion)

    def rhs(self, values=None, backend="auto"):
        r"""The numeric right-hand side ``f(t, x, tau=None)`` of :math:`x = (q, \dot q)`."""
        return self._numeric(values, "EquationsOfMotion.rhs", backend).rhs

    def tau(self, qdd=None):
        r""":math:`\tau = M\ddot q + C\dot q + G` (sympy n x 1), with ``qdd`` symbols (default
        ``qdd1..qddn``)."""
        if qdd is None:
            qdd = sp.Matrix(sp.symbols(f"qdd1:{self.n + 1}"))
        qdd = _S(list(qdd)) if not isinstance(qdd, sp.MatrixBase) else qdd
        if qdd.shape != (self.n, 1):
            raise _value_checks.refusal(
                ValueError, f"EquationsOfMotion.tau: qdd: expected {self.n} accelerations, "
                            f"got shape {qdd.shape}")
        return self.M * qdd + self.C * self.qd + self.G

    def numeric(self, values=None, backend="auto"):
        r"""Numeric twins (:class:`NumericEquations`), generated once with common-subexpression
        elimination and cached on this object. ``values`` maps the chain's other symbols
        (lengths, masses) to numbers; every free symbol besides q, qd must get one.

        ``backend``: ``"c"`` compiles C code (:mod:`robodyn.codegen`; sub-microsecond calls,
        a second or two to build the first time, then cached on disk), ``"lambdify"`` makes
        Python functions, ``"auto"`` (default) tries C and falls back to lambdify with a
        :class:`RuntimeWarning` saying why.

        With C code, equations derived from a numeric chain (a robot read from its URDF, every
        length and mass a number) get their ``forward_dynamics`` and ``tau`` from the
        articulated-body and Newton--Euler recursions written out for that chain
        (:mod:`robodyn.recursive_codegen`): the same :math:`\ddot q` and :math:`\tau`, in
        O(n) operations per state instead of forming and factoring :math:`M`; ``M``, ``C``
        and ``G`` are always the compiled symbolic matrices.

        Raises ValueError naming the symbols left without a value, or an unknown backend."""
        return self._numeric(values, "EquationsOfMotion.numeric", backend)

    def _numeric(self, values, fname, backend="auto"):
        """:meth:`numeric`, its messages naming ``fname`` (the method the user called; the
        signature of :meth:`MassMatrixForm._numeric`, which callers of any form use)."""
        if not isinstance(backend, str) or backend not in ("auto", "c", "lambdify"):
            raise _value_checks.refusal(
                ValueError, f"{fname}: backend: expected 'auto', 'c' or 'lambdify', got "
                            f"{backend!r:.60}")
        names = {str(s): s for s in self.parameters()}
        sub = _value_checks.values_dict(values, f"{fname}: values", names=names)
        key = (backend, tuple(sorted((str(k), float(v)) for k, v in sub.items())))
        if key in self._cache:
            return self._cache[key]
        M, C, G = (X.xreplace(sub) if sub else X for X in (self.M, self.C, self.G))
        inter = tuple((w, e.xreplace(sub) if sub else e) for w, e in self.intermediates)
        if sub:
            _finite_constants([M, C, G] + [e for _, e in inter], f"{fname}: values")
        known = set(self.q) | set(self.qd) | {w for w, _ in inter}
        free = set().union(M.free_symbols, C.free_symbols, G.free_symbols,
                           *(e.free_symbols for _, e in inter)) - known
        if free:
            raise _value_checks.refusal(
                ValueError, f"{fname}: values: expected a number for each parameter, got none: "
                            f"symbols {sorted(map(str, free))} have no value; pass "
                            f"values={{symbol: number, ...}}")
        q, qd = list(self.q), list(self.qd)
        if backend == "lambdify":
            out = _lambdified(M, C, G, q, qd, inter)
        elif backend == "c":
            out = _compiled(M, C, G, q, qd, inter)
        else:
            from ..codegen import CompileError
            try:
                out = _compiled(M, C, G, q, qd, inter)
            except CompileError as err:
                warnings.warn(f"{fname}: no compiled code ({err}); using lambdify (slower)",
                              RuntimeWarning, stacklevel=3)
                out = _lambdified(M, C, G, q, qd, inter)
        if self._recursion and not sub and out.backend == "c":
            out = _recursive(out, self._recursion, self.gravity)
        out._recipe = (self, dict(key[1]) or None, backend)
        self._cache[key] = out
        return out

    def __getstate__(self):
        """Pickled (and copied) with its cache of numeric twins emptied: each is made again
        on use."""
        return {**self.__dict__, "_cache": {}}


def _numeric_twin(equations, values, backend):
    """``equations.numeric(values, backend)``: how a pickled :class:`NumericEquations` is made
    again."""
    return equations.numeric(values, backend)


def _recursive(out, robot, gravity):
    """``out`` with its ``forward_dynamics`` and ``tau`` the compiled articulated-body and
    Newton--Euler recursions of the chain (:mod:`robodyn.recursive_codegen`): the same
    equations, O(n) per state instead of forming and factoring M. ``out`` unchanged for a
    symbolic gravity or where the C compiler fails."""
    from ..codegen import CompileError
    from ..recursive_codegen import _compile
    if any(is_symbolic(g) for g in gravity):
        return out
    try:
        mod = _compile(robot, np.array(gravity, dtype=float))
    except CompileError:
        return out
    return NumericEquations(out.n, "c", out.M, out.C, out.G, mod.tau, mod.forward_dynamics)


def equations_of_motion(chain, gravity=DEFAULT_GRAVITY, q=None, qd=None, form="auto"):
    r"""Symbolic M, C, G of a chain (eq. 5.14): :math:`M(q)\ddot q + C(q,\dot q)\dot q + G(q) = \tau`,
    C the Christoffel Coriolis matrix of (5.13), :math:`G = \partial V/\partial q`.

    Parameters
    ----------
    chain : SerialChain with inertias (numbers or sympy symbols)
    gravity : 3-vector in the space frame, m/s^2 (planar models: ``(0, -g, 0)``)
    q, qd : lists of n Symbols; default ``q1..qn``, ``qd1..qdn``
    form : ``"expanded"``: every entry a sum of cosines and sines of joint-angle combinations
        (what the chapters print; its size grows like 5^n on chains of many non-parallel
        revolute joints); ``"nested"``: the composite-rigid-body recursion kept as named
        intermediate Symbols ``w1, w2, ...`` (``EquationsOfMotion.intermediates`` lists their
        definitions in order; :meth:`EquationsOfMotion.explicit` writes them in); ``"auto"``
        (default): expanded unless that form would outgrow 1000 terms in one product.

    Returns
    -------
    EquationsOfMotion

    Examples
    --------
    >>> import sympy as sp
    >>> from robodyn.models import planar_rr
    >>> eom = equations_of_motion(planar_rr(*sp.symbols('l1 l2 m1 m2')), gravity=(0, -9.81, 0))
    >>> eom.M[0, 1], eom.C[1, 1]
    (l1*l2*m2*cos(q2)/2 + l2**2*m2/3, 0)
    >>> eom1 = eom.numeric({'l1': 1, 'l2': 1, 'm1': 1, 'm2': 1})
    >>> np.round(eom1.G([0.0, 0.0]), 6)
    array([19.62 ,  4.905])
    """
    fname = "equations_of_motion"
    _dyn_chain(chain, fname)
    n = chain.n
    q = sp.symbols(f"q1:{n + 1}") if q is None else q
    qd = sp.symbols(f"qd1:{n + 1}") if qd is None else qd
    q = _symbol_list(q, "q", fname)
    qd = _symbol_list(qd, "qd", fname)
    _value_checks.distinct_symbols({"q": q, "qd": qd}, fname)
    for name, v in (("q", q), ("qd", qd)):
        if len(v) != n:
            raise _value_checks.refusal(
                ValueError, f"{fname}: {name}: expected {n} symbols (one per joint), got {len(v)}")
    if form not in ("auto", "expanded", "nested"):
        raise _value_checks.refusal(
            ValueError, f"{fname}: form: expected 'auto', 'expanded' or 'nested', got {form!r}")
    g = _gravity(gravity, fname)
    qv, qdv = sp.Matrix(q), sp.Matrix(qd)
    d = _choose(chain, form)
    gs = list(_S(g))
    if isinstance(d, _NestedDerivation):
        M, C, G, inter = d.equations(q, qd, gs)
    else:
        M, C, G, inter = d.mass_matrix(q), d.coriolis(q, qd), d.gravity(q, gs), ()
    gt = tuple(float(x) if not is_symbolic(x) else x for x in (list(g) if not
               isinstance(g, sp.MatrixBase) else list(g)))
    from ..recursive_codegen import _chain_data
    robot = _chain_data(chain) or ()
    return EquationsOfMotion(qv, qdv, M, C, G, gt, chain.name, tuple(inter), robot)


# --------------------------------------------------------------------------
# generalized forces, eq. (5.15)
# --------------------------------------------------------------------------

def generalized_forces(chain, q, wrenches, frame="body"):
    r"""Generalized forces of wrenches on the links, eq. (5.15):
    :math:`Y_i = \sum_l\langle W_l, \partial\kappa_l/\partial q_i\rangle`, i.e.
    :math:`Y = \sum_l J_l^TW_l` (the pull-back :math:`Y = \kappa^*(W)`).

    Parameters
    ----------
    chain : SerialChain with link_homes
    q : array_like (n,)
    wrenches : array_like (n, 6): row l is the wrench (m, f) on link l, in N m and N.
        ``frame='body'``: written in link l's centre-of-mass frame (about its CoM) and paired
        with the link's body Jacobian; ``frame='space'``: written in the space frame (moment
        about the space origin), paired with the link's space Jacobian.
    frame : 'body' or 'space'

    Returns
    -------
    ndarray(n,) (sympy n x 1 for symbolic input)

    Examples
    --------
    A torque of 2 N m on joint 2 of the RR arm, as +2 about z on link 1 and -2 on link 0:

    >>> from robodyn.models import planar_rr
    >>> W = np.zeros((2, 6)); W[1, 2], W[0, 2] = 2.0, -2.0
    >>> np.round(generalized_forces(planar_rr(), [0.3, 0.5], W), 12)
    array([0., 2.])
    """
    fname = "generalized_forces"
    if not isinstance(chain, SerialChain):
        _value_checks.chain(chain, f"{fname}: chain", SerialChain)
    if frame not in ("body", "space"):
        raise _value_checks.refusal(
            ValueError, f"{fname}: frame: expected 'body' or 'space', got {frame!r}")
    sym = _mode(chain, q, wrenches)
    W = _value_checks.matrix(wrenches, (chain.n, 6), f"{fname}: wrenches (one row (m, f) per link)")
    jac = jacobian_body if frame == "body" else jacobian_space
    if frame == "body" and chain.link_homes is None:
        raise _value_checks.refusal(
            ValueError, f"{fname}: body-frame wrenches need link_homes, and {chain!r} has none")
    qv = _joints(chain, q, "q", fname)
    if sym:
        qv = _S(qv) if not isinstance(qv, sp.MatrixBase) else qv
        W = _S(W) if not isinstance(W, sp.MatrixBase) else W
        Y = sp.zeros(chain.n, 1)
        for l in range(chain.n):
            Y += jac(chain, qv, link=l).T * W[l, :].T
        return Y.applyfunc(sp.expand)
    Y = np.zeros(chain.n)
    with np.errstate(all="ignore"):
        for l in range(chain.n):
            Y += jac(chain, qv, link=l).T @ W[l]
    return _value_checks.finite_result(Y, fname)

from .._boundary import seal as _seal  # noqa: E402 -- the one boundary (issue 28): last, over the finished module
_seal(globals())
