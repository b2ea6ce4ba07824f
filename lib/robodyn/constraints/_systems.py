r"""Constrained systems: describing constraints and the four classic ways to solve them (Part III).

A mechanical system :math:`M(q, t)\ddot q = F(q, \dot q, t)` (review eq. (1)) with n coordinates
is subject to m constraints of two kinds, both held by a :class:`Constraints` value:

* **holonomic** :math:`\varphi(q, t) = 0` (configuration constraints), and
* **Pfaffian** (nonholonomic when not integrable) :math:`A(q, t)\dot q = c(q, t)`
  (handbook eq. (5.18) has c = 0).

Differentiating every constraint until an acceleration appears gives the *second-order form*
(review eq. (18), derived in (22)--(29)) :math:`A(q, t)\ddot q = b(q, \dot q, t)`:
:func:`second_order_form`. The constrained motion then follows from any of

* **Lagrange multipliers** (eq. (5.19)--(5.20)): :math:`M\ddot q = F + A^T\lambda`, solved with
  the constraints as one linear (KKT) system -- :func:`lagrange_multipliers`;
* **embedding** (eq. (5.21)--(5.22)): :math:`\dot q = S(q)\eta` with the columns of S a basis of
  ker A, reduced equations in the pseudo-velocities :math:`\eta` -- :func:`embedded_equations`;
* **projection** (eq. (5.23)--(5.27)): the M-orthogonal projector P onto ker A and the constraint
  connection :math:`\tilde\nabla_XY = P(\nabla_XY)` -- :func:`constraint_projector`,
  :func:`constraint_connection`, :func:`projected_equations`;
* **Udwadia--Kalaba** (review eq. (36)):
  :math:`F^C = M^{1/2}(AM^{-1/2})^+(b - AM^{-1}F)` with the Moore--Penrose inverse
  (:func:`moore_penrose`, :func:`penrose_conditions`) -- :func:`udwadia_kalaba`.

A :class:`ConstrainedSystem` (equations of the unconstrained system, as a
:class:`~robodyn.equations.MassMatrixForm` or a numeric :class:`~robodyn.rigid_motion.SerialChain`,
plus constraints) offers every method through the shared interface of
:mod:`robodyn.equations`: :func:`multiplier_equations`, :func:`embedded_equations` and
:func:`projected_equations` are :class:`~robodyn.equations.MassMatrixForm`\ s and
:meth:`ConstrainedSystem.numeric` gives a :class:`~robodyn.equations.NumericForm` for each of the
four methods, so ``max_difference(a, b, states)`` compares two of them in one line.

Elsewhere, by concept (their old names here still work): :mod:`robodyn.constraints`
(``simulate_constrained`` with Baumgarte stabilization or projection, ``constraint_controller``:
tracking by a desired motion written as constraints); :mod:`robodyn.constraints`
(``is_holonomic``: a Pfaffian form's integrability, review eq. (11), Frobenius in general);
the example systems of Part III in :mod:`robodyn.models` (``particle_pendulum``, ``four_bar``,
``rr_on_line``, ``knife_edge``, ``vertical_rolling_disk``, once ``rolling_disk`` here).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
import sympy as sp
from sympy.core.function import AppliedUndef
from scipy.linalg.lapack import dposv as _posv, dpotrf as _potrf, dpotrs as _potrs

from .. import _value_checks
from .. import _meaning_checks
from ..kinds import Metric, Tolerance
from ._numeric import NumericConstraints, _pinv
from ..equations import (TIME, MassMatrixForm, NumericForm, _check_values, _spd_where_possible,
                        _values_key, mass_matrix_form)

__all__ = ["ConstraintWarning", "Constraints", "second_order_form", "MultiplierSolution",
           "ConstrainedMotion", "lagrange_multipliers",
           "udwadia_kalaba", "moore_penrose", "penrose_conditions", "constraint_projector",
           "constraint_connection", "lagrangian_equations", "ConstrainedSystem",
           "multiplier_equations", "embedded_equations", "projected_equations", "METHODS"]

METHODS = ("multipliers", "embedded", "projection", "udwadia_kalaba")
"""The four ways of :meth:`ConstrainedSystem.numeric` to solve for the constrained motion."""


class ConstraintWarning(UserWarning):
    """Legal but dangerous constraints: inconsistent (b not in the range of A), drifting."""


# --------------------------------------------------------------------------
# small private checks (the shared ones live in _value_checks)
# --------------------------------------------------------------------------

def _symbol_column(x, name, fname, allow_empty=False):
    """Distinct plain sympy Symbols (the shared check, then: no q(t) functions, not empty)."""
    xs = _value_checks.symbol_list(x, f"{fname}: {name}")
    bad = [e for e in xs if not isinstance(e, sp.Symbol)]
    if bad:
        raise _value_checks.error(f"{fname}: {name}", "plain sympy Symbols (lambdify needs them)",
                            repr(bad[0]), exc=TypeError)
    if not xs and not allow_empty:
        raise _value_checks.error(f"{fname}: {name}", "at least one Symbol", "none")
    return sp.Matrix(xs) if xs else sp.zeros(0, 1)


def _expr_column(x, name, fname):
    if x is None:
        return sp.zeros(0, 1)
    if isinstance(x, sp.MatrixBase):
        return _value_checks.sym_matrix(x, f"{fname}: {name}").reshape(len(x), 1)
    if isinstance(x, (sp.Basic, int, float)):
        x = [x]
    if not isinstance(x, (list, tuple)):
        raise _value_checks.refusal(
            TypeError, f"{fname}: {name}: expected a list of sympy expressions, got "
                       f"{_value_checks._describe(x)}")
    _value_checks.no_text(x, f"{fname}: {name}")
    return sp.Matrix([_value_checks._exact(_value_checks.expression(e, f"{fname}: {name}")) for e in x]) \
        if x else sp.zeros(0, 1)


def _num_matrix(x, name, fname):
    a = _value_checks._to_array(x, f"{fname}: {name}")
    _value_checks.finite(a, f"{fname}: {name}")
    return a


def _spd(M, fname, name="M"):
    """A numeric symmetric positive definite matrix (the shared check); returns (M, Cholesky L).
    A matrix too large for float64 arithmetic (its factor overflows) is refused by name."""
    M = _num_matrix(M, name, fname)
    with np.errstate(all="ignore"):
        big = M.ndim == 2 and M.size and not np.isfinite(M.T @ M).all()
    if big:
        raise _value_checks.error(f"{fname}: {name}", "entries small enough for float64 arithmetic",
                            "entries whose products overflow to infinity", "scale the units")
    M = _meaning_checks.spd(M, f"{fname}: {name}")
    return M, np.linalg.cholesky(M)


def _system(M, F, A, b, fname):
    """Numeric (M, L, F, A, b) with consistent shapes; A may be 1-D (one constraint)."""
    M, L = _spd(M, fname)
    n = M.shape[0]
    F = _value_checks.vector(F, n, f"{fname}: F (generalized forces, one per coordinate)")
    A = _num_matrix(A, "A", fname)
    if A.ndim == 1:
        A = A.reshape(1, -1)
    if A.ndim != 2 or A.shape[1] != n:
        raise _value_checks.refusal(
            ValueError, f"{fname}: A: expected an m x {n} constraint matrix (one column per "
                        f"coordinate), got shape {A.shape}")
    m = A.shape[0]
    if m == 0:
        raise _value_checks.error(f"{fname}: A", f"at least one constraint row of {n} entries",
                            "an empty matrix", "without constraints, qdd = M^-1 F")
    b = _value_checks.vector(np.atleast_1d(_num_matrix(b, "b", fname)), m,
                       f"{fname}: b (one value per constraint row of A)")
    return M, L, F, A, b


def _symbolic_system(M, F, A, b, fname):
    M = _value_checks.to_sympy(M, f"{fname}: M")
    n = M.shape[0]
    if M.shape != (n, n):
        raise _value_checks.refusal(
            ValueError, f"{fname}: M: expected a square mass matrix, got shape {M.shape}")
    if not (M - M.T).applyfunc(sp.simplify).is_zero_matrix:
        raise _value_checks.refusal(
            ValueError, f"{fname}: M: expected a symmetric positive definite mass matrix, got "
                        f"an unsymmetric one")
    _meaning_checks.spd(M, f"{fname}: M")
    F = _value_checks.vector(F, n, f"{fname}: F (generalized forces, one per coordinate)")
    A = _value_checks.to_sympy(A, f"{fname}: A")
    if A.shape[1] != n and A.shape == (n, 1):
        A = A.T
    if A.shape[1] != n:
        raise _value_checks.refusal(
            ValueError, f"{fname}: A: expected an m x {n} constraint matrix, got shape {A.shape}")
    if A.shape[0] == 0:
        raise _value_checks.error(f"{fname}: A", "at least one constraint row", "none")
    b = _value_checks.vector(b if _value_checks.is_symbolic(b) else list(np.atleast_1d(b)), A.shape[0],
                       f"{fname}: b (one value per constraint row of A)")
    return M, sp.Matrix(F), A, sp.Matrix(b)


_REDUNDANT = ("redundant or conflicting constraints make the multiplier (KKT) system singular; "
              "udwadia_kalaba and embedded_equations handle redundant ones")


def _full_row_rank(A, fname, name):
    """Refuse constraint rows that are not independent: A (m x n) of rank below m. Numeric A:
    its numeric rank. Sympy A: its rank at three states drawn under the symbols' assumptions
    (coordinates and parameters, :func:`robodyn._meaning_checks._assumed_substitution`),
    refused only when it is below m at every one of them (the generic rank: a state where
    independent rows happen to align passes). Bounded work: no symbolic elimination."""
    m = A.shape[0]
    if not isinstance(A, sp.MatrixBase):
        r = int(np.linalg.matrix_rank(A))
        if r < m:
            raise _value_checks.error(f"{fname}: {name}", f"constraints of full row rank {m}",
                                      f"rank {r}", _REDUNDANT)
        return A
    rng, low = np.random.default_rng(12345), []
    for _ in range(3):
        sub = _meaning_checks._assumed_substitution(A, rng)
        a = _meaning_checks._numbers(A, sub)
        if a is None or not np.isfinite(a).all():
            continue
        r = int(np.linalg.matrix_rank(a))
        if r == m:
            return A
        low.append((r, sub))
    if low:
        r, sub = low[0]
        at = ", ".join(f"{k} = {float(v):.2g}" for k, v in list(sub.items())[:4])
        raise _value_checks.error(f"{fname}: {name}", f"constraints of full row rank {m} (rows "
                                  "of A independent at a generic state)",
                                  f"rank {r} at every sampled state" + (f" (e.g. {at})" if at
                                                                        else ""), _REDUNDANT)
    return A


# --------------------------------------------------------------------------
# describing constraints
# --------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class Constraints:
    r"""Constraints on coordinates q: holonomic :math:`\varphi(q, t) = 0` and Pfaffian
    :math:`A_p(q, t)\dot q = c(q, t)` (eq. (5.18) has c = 0), an immutable value.

    Parameters
    ----------
    q : list of n sympy Symbols, the coordinates
    holonomic : list of h expressions :math:`\varphi_i(q, t)` (each = 0)
    pfaffian : p x n matrix :math:`A_p(q, t)` (a list of rows), optional
    rate : p expressions :math:`c(q, t)`, default zeros
    t : the time Symbol (default ``robodyn.equations.TIME``)

    Raises
    ------
    TypeError, ValueError
        for q not distinct Symbols, a Pfaffian matrix whose rows do not have n entries, a rate of
        the wrong length, or no constraint at all.

    Examples
    --------
    >>> import sympy as sp
    >>> x, y = sp.symbols('x y')
    >>> circle = Constraints([x, y], holonomic=[x**2 + y**2 - 1])
    >>> circle.m, circle.velocity_form()[0]
    (1, Matrix([[2*x, 2*y]]))
    """

    q: object
    holonomic: object = ()
    pfaffian: object = None
    rate: object = None
    t: sp.Symbol = TIME
    _numeric: dict = field(default_factory=dict, repr=False, compare=False)

    def __getstate__(self):
        """Pickled without its cache of numeric twins (generated code, made again on use)."""
        state = dict(self.__dict__)
        state["_numeric"] = {}
        return state

    def __post_init__(self):
        fname = "Constraints"
        q = _symbol_column(self.q, "q", fname)
        n = q.shape[0]
        if not isinstance(self.t, sp.Symbol):
            raise _value_checks.refusal(
                TypeError, f"{fname}: t: expected a sympy Symbol, got {_value_checks._describe(self.t)}")
        if self.t in set(q):
            raise _value_checks.refusal(
                ValueError, f"{fname}: t: expected a time Symbol that is not a coordinate, got {self.t}")
        _named_like_time(q, self.t, fname, "q")
        phi = _expr_column(self.holonomic, "holonomic", fname)
        if self.pfaffian is None:
            Ap = sp.zeros(0, n)
        else:
            Ap = _value_checks.to_sympy(self.pfaffian, f"{fname}: pfaffian")
            if Ap.shape[1] != n and Ap.shape == (n, 1):
                Ap = Ap.T
            if Ap.shape[1] != n:
                raise _value_checks.refusal(
                    ValueError, f"{fname}: pfaffian: expected rows of {n} coefficients (one per "
                                f"coordinate {list(q)}), got shape {Ap.shape}")
        p = Ap.shape[0]
        c = sp.zeros(p, 1) if self.rate is None else _expr_column(self.rate, "rate", fname)
        if c.shape != (p, 1):
            raise _value_checks.refusal(
                ValueError, f"{fname}: rate: expected {p} expressions (one per Pfaffian row), got "
                            f"{c.shape[0]}")
        if phi.shape[0] + p == 0:
            raise _value_checks.refusal(
                ValueError, f"{fname}: holonomic, pfaffian: expected at least one holonomic "
                            f"or Pfaffian constraint, got none")
        _meaning_checks.time_symbol(self.t, f"{fname}: t", coordinates=list(q))
        for k, e in (("holonomic", phi), ("pfaffian", Ap), ("rate", c)):
            _meaning_checks.time_symbol(self.t, f"{fname}: {k} (or t)", exprs=[e])
        _satisfiable(phi, Ap, c, list(q), self.t, fname)
        for k, v in (("q", q), ("holonomic", phi), ("pfaffian", Ap), ("rate", c)):
            object.__setattr__(self, k, v)

    @property
    def n(self):
        """Number of coordinates."""
        return self.q.shape[0]

    @property
    def m(self):
        """Number of constraint rows (holonomic first, then Pfaffian)."""
        return self.holonomic.shape[0] + self.pfaffian.shape[0]

    def parameters(self):
        """Free symbols other than q and t (lengths...), sorted by name."""
        exprs = (self.holonomic, self.pfaffian, self.rate)
        return sorted(set().union(*(e.free_symbols for e in exprs)) - set(self.q) - {self.t},
                      key=str)

    def velocity_form(self):
        r"""(A, c) with :math:`A(q, t)\dot q = c(q, t)`: the holonomic rows differentiated once
        (:math:`A = \partial\varphi/\partial q`, :math:`c = -\partial\varphi/\partial t`, review
        eq. (28)) above the Pfaffian rows."""
        phi = self.holonomic
        A = sp.Matrix.vstack(phi.jacobian(self.q), self.pfaffian) if phi.shape[0] else self.pfaffian
        c = sp.Matrix.vstack(-phi.diff(self.t), self.rate) if phi.shape[0] else self.rate
        return A, c

    def numeric(self, values=None, qd=None):
        """``NumericConstraints`` with ``values`` (symbol or name -> number) substituted."""
        return self._numeric_for(values, "Constraints.numeric")

    def _numeric_for(self, values, fname):
        """:meth:`numeric`, its messages naming ``fname`` (the function the user called)."""
        key = _values_key(values, fname)
        if key not in self._numeric:
            qd = _speed_symbols(self.q, None, fname)
            self._numeric[key] = NumericConstraints(self, qd, _second_order(self, qd)[1], values,
                                                    fname)
        return self._numeric[key]


def _satisfiable(phi, Ap, c, q, t, fname):
    """Refuse constraints that cannot hold at any state: a holonomic row free of q and t that
    is not zero (``holonomic=[1]``: 1 = 0), or non-zero under its symbols' assumptions, the
    coordinates and time being real (``x**2 + 1``, with or without ``real=True``); a Pfaffian
    row of zeros with a rate that is not zero (0 = c). Jointly, where that is exact and cheap
    (:func:`_consistent`): the holonomic rows affine in q with number coefficients, and the
    Pfaffian rows and rates that are numbers. A row that could be non-zero but is not provably
    so passes; nonlinear sets are not solved."""
    variables = list(q) + [t]
    real = {v: sp.Dummy(v.name, real=True) for v in variables
            if isinstance(v, sp.Symbol) and v.is_real is None}
    for i, e in enumerate(phi):
        fixed = not (e.free_symbols & set(variables)) and not e.atoms(AppliedUndef)
        if (fixed and e.is_number and sp.simplify(e) != 0) or e.is_zero is False \
                or e.xreplace(real).is_zero is False:
            raise _value_checks.error(f"{fname}: holonomic", "constraints phi(q, t) = 0 that some "
                                "state satisfies", f"row {i}: {e} = 0, which no q or t "
                                "satisfies", "a constraint that cannot hold has no motion")
    for i in range(Ap.shape[0]):
        if all(sp.expand(x) == 0 for x in Ap.row(i)) and (
                c[i].is_zero is False or (c[i].is_number and c[i] != 0)):
            raise _value_checks.error(f"{fname}: rate", "a rate c_i = 0 where the Pfaffian row is zero "
                                "(0 q' = c_i)", f"row {i}: 0 = {c[i]}",
                                "a constraint that cannot hold has no motion")
    _consistent(phi, Ap, c, list(q), fname)


def _number_rows(rows):
    """Indices and [a | r] of the rows ``(a, r)`` whose entries are all numbers."""
    keep = [(i, list(a) + [r]) for i, (a, r) in enumerate(rows)
            if all(sp.sympify(x, strict=True).is_number for x in list(a) + [r])]
    return [i for i, _ in keep], sp.Matrix([row for _, row in keep])


def _contradiction(aug, n):
    """Whether the linear system [A | r] (numbers) has no solution: rank [A | r] > rank A."""
    return aug.rows > 0 and aug.rank() > aug[:, :n].rank()


def _consistent(phi, Ap, c, q, fname):
    """Joint consistency where it is decided exactly: the holonomic rows affine in q with
    number coefficients (a linear system A q = r), and the Pfaffian rows with number
    coefficients and rates together with the velocity form of those affine rows (A q' = c);
    refused when rank [A | r] > rank A. Rows with parameters, time or nonlinear in q are
    left out (a parameter may make them agree: x - a, x - b at a = b)."""
    n, rows = len(q), []
    for e in phi:
        poly = sp.Poly(sp.expand(e), *q) if e.is_polynomial(*q) else None
        if poly is not None and poly.total_degree() <= 1 and \
                all(x.is_number for x in poly.coeffs()):
            a = [poly.coeff_monomial(v) for v in q]
            rows.append((a, -poly.coeff_monomial(1)))
        else:
            rows.append(None)
    idx, aug = _number_rows([r for r in rows if r is not None])
    pos = [i for i, r in enumerate(rows) if r is not None]
    if _contradiction(aug, n):
        shown = "; ".join(f"{phi[pos[i]]} = 0" for i in idx[:6])
        raise _value_checks.error(f"{fname}: holonomic", "constraints phi(q, t) = 0 that some "
                                  "state satisfies", f"rows {[pos[i] for i in idx]}: {shown}, "
                                  "which no q satisfies together (rank [A | b] > rank A)",
                                  "a constraint that cannot hold has no motion")
    vel = [(r[0], 0) for r in rows if r is not None] + \
        [(list(Ap.row(i)), c[i]) for i in range(Ap.shape[0])]
    idx, aug = _number_rows(vel)
    h = sum(r is not None for r in rows)
    if _contradiction(aug, n) and any(i >= h for i in idx):
        shown = "; ".join(f"{list(Ap.row(i - h))} q' = {c[i - h]}" for i in idx if i >= h)
        raise _value_checks.error(f"{fname}: pfaffian, rate", "Pfaffian constraints A_p q' = c "
                                  "that some velocity satisfies", f"Pfaffian rows "
                                  f"{[i - h for i in idx if i >= h]}: {shown}, which no q' "
                                  "satisfies together (rank [A | c] > rank A)",
                                  "a constraint that cannot hold has no motion")


def _named_like_time(xs, t, fname, what):
    same = [s for s in xs if s == t or s.name == t.name]
    if same:
        raise _value_checks.error(f"{fname}: {what}", f"symbols other than the time symbol {t}",
                            f"{same[0]}", "time is not a coordinate or a velocity; a symbol "
                            "named like it would be confused with it")


def _speed_symbols(q, qd, fname, t=TIME):
    if qd is None:
        return sp.Matrix([sp.Symbol(f"{s}_dot", real=True) for s in q])
    qd = _symbol_column(qd, "qd", fname)
    _named_like_time(qd, t, fname, "qd")
    if qd.shape[0] != q.shape[0]:
        raise _value_checks.refusal(
            ValueError, f"{fname}: qd: expected {q.shape[0]} velocity symbols (one per "
                        f"coordinate), got {qd.shape[0]}")
    _value_checks.own_symbols({"q": q, "qd": qd}, fname)
    return qd


def second_order_form(constraints, qd=None):
    r"""The constraints as :math:`A(q, t)\ddot q = b(q, \dot q, t)` (review eq. (18)).

    Holonomic rows are differentiated twice, Pfaffian rows once. With the velocity form
    :math:`A\dot q = c` (eq. (40)),
    :math:`b = -\dot A\dot q + \dot c`, :math:`\dot A = \sum_k \partial A/\partial q_k\,\dot q_k
    + \partial A/\partial t` (eq. (23)--(26); note the sign: the review's eq. (22) puts c on the
    left, its eq. (40) on the right, as here).

    Parameters
    ----------
    constraints : Constraints
    qd : list of n Symbols for the velocities, default ``<q>_dot``

    Returns
    -------
    (A, b) : sympy Matrices (m x n) and (m x 1)

    Examples
    --------
    The review's example 2, :math:`dx + 2y\,dy + dz = 0` (eq. (19)):

    >>> import sympy as sp
    >>> x, y, z, xd, yd, zd = sp.symbols('x y z xd yd zd')
    >>> A, b = second_order_form(Constraints([x, y, z], holonomic=[x + y**2 + z]), [xd, yd, zd])
    >>> A, b
    (Matrix([[1, 2*y, 1]]), Matrix([[-2*yd**2]]))
    """
    fname = "second_order_form"
    if not isinstance(constraints, Constraints):
        raise _value_checks.refusal(TypeError, f"{fname}: constraints: expected a Constraints value, got "
                        f"{_value_checks._describe(constraints)}")
    qd = _speed_symbols(constraints.q, qd, fname, constraints.t)
    A, b = _second_order(constraints, qd)
    return A, sp.expand(b)


def _second_order(constraints, qd):
    A, c = constraints.velocity_form()
    t = constraints.t
    Adot = sp.zeros(*A.shape)
    for k, qk in enumerate(constraints.q):
        Adot += A.diff(qk) * qd[k]
    Adot += A.diff(t)
    cdot = c.diff(t) + c.jacobian(constraints.q) * qd
    return A, -Adot * qd + cdot


# --------------------------------------------------------------------------
# the four solutions at one state
# --------------------------------------------------------------------------

class MultiplierSolution(NamedTuple):
    r"""Result of :func:`lagrange_multipliers`: accelerations and multipliers, unpackable as
    ``qdd, lam = ...``; the constraint force is :math:`A^T\lambda`."""
    qdd: object
    lam: object


class ConstrainedMotion(NamedTuple):
    r"""Result of :func:`udwadia_kalaba`: ``qdd`` and ``constraint_force``
    (:math:`F^C`), unpackable as ``qdd, F_c = ...``."""
    qdd: object
    constraint_force: object


def lagrange_multipliers(M: Metric, F, A, b):
    r"""Constrained accelerations and multipliers from :math:`M\ddot q = F + A^T\lambda`
    (eq. (5.19)--(5.20)) and :math:`A\ddot q = b` (eq. (18)), one linear (KKT) system:

    .. math:: \begin{bmatrix} M & -A^T \\ A & 0\end{bmatrix}
              \begin{bmatrix}\ddot q\\ \lambda\end{bmatrix} = \begin{bmatrix} F\\ b\end{bmatrix}.

    Parameters
    ----------
    M : (n, n) symmetric positive definite mass matrix
    F : (n,) generalized forces (everything but the constraint forces)
    A : (m, n) constraint matrix of full row rank (1-D for one constraint)
    b : (m,) right-hand side

    Numeric input gives ndarrays; sympy input gives sympy Matrices (then M is only checked
    for symmetry).

    Returns
    -------
    MultiplierSolution(qdd, lam)

    Raises
    ------
    ValueError for M not symmetric positive definite, shapes that do not fit, or redundant
    constraints (rank-deficient A: the KKT matrix is singular -- :func:`udwadia_kalaba`
    handles them).

    Examples
    --------
    A unit mass on the line x + y = 0 under gravity:

    >>> qdd, lam = lagrange_multipliers(np.eye(2), [0, -9.81], [[1, 1]], [0])
    >>> qdd.round(3).tolist(), lam.round(3).tolist()
    ([4.905, -4.905], [4.905])
    """
    fname = "lagrange_multipliers"
    if any(_value_checks.is_symbolic(x) for x in (M, F, A, b)):
        M, F, A, b = _symbolic_system(M, F, A, b, fname)
        _full_row_rank(A, fname, "A")
        n, m = A.shape[1], A.shape[0]
        K = sp.Matrix(sp.BlockMatrix([[M, -A.T], [A, sp.zeros(m, m)]]))
        sol = K.LUsolve(sp.Matrix.vstack(F, b))
        return MultiplierSolution(sol[:n, :], sol[n:, :])
    M, _, F, A, b = _system(M, F, A, b, fname)
    n, m = A.shape[1], A.shape[0]
    K = np.block([[M, -A.T], [A, np.zeros((m, m))]])
    _full_row_rank(A, fname, "A")
    with np.errstate(all="ignore"):
        try:
            sol = np.linalg.solve(K, np.concatenate([F, b]))
        except np.linalg.LinAlgError as exc:
            raise _value_checks.error(f"{fname}: A", f"constraints of full row rank {m}",
                                "a singular multiplier (KKT) system", "entries too small for "
                                "float64 arithmetic? udwadia_kalaba handles rank deficiency") \
                from exc
    _value_checks.finite_result(sol, fname)
    return MultiplierSolution(sol[:n], sol[n:])


def moore_penrose(W, rcond=None):
    r"""The Moore--Penrose inverse :math:`W^+` (review §4), by the singular value decomposition:
    :math:`W = U\Sigma V^T \Rightarrow W^+ = V\Sigma^+U^T`, singular values below
    ``rcond * max(sigma)`` counted as zero (default ``max(shape) * eps``). Sympy input: sympy's
    exact ``pinv``.

    It is the unique matrix with the four Penrose conditions (:func:`penrose_conditions`).

    >>> moore_penrose([[1, 1], [1, 1]]).round(12).tolist()
    [[0.25, 0.25], [0.25, 0.25]]
    """
    fname = "moore_penrose"
    if _value_checks.is_symbolic(W):
        if rcond is not None:
            raise _value_checks.error(f"{fname}: rcond", "None for sympy input (exact pinv)",
                                rcond, exc=TypeError)
        return _value_checks.to_sympy(W, f"{fname}: W").pinv()
    W = _num_matrix(W, "W", fname)
    if W.ndim != 2:
        raise _value_checks.refusal(ValueError, f"{fname}: W: expected a matrix, got shape {W.shape}")
    if rcond is not None:
        rcond = _value_checks.scalar(rcond, f"{fname}: rcond", low=0, strict_low=True, high=0.5,
                               hint="a relative cut-off of the singular values: at 1 or above "
                                    "every singular value would count as zero")
        rcond = _value_checks.tolerance(rcond, f"{fname}: rcond")
    return _pinv(W, rcond)


def penrose_conditions(W, W_plus):
    r"""The residuals of the four Penrose conditions (the review's (32)--(35)):
    :math:`WW^+W = W`, :math:`W^+WW^+ = W^+`, :math:`(WW^+)^T = WW^+`, :math:`(W^+W)^T = W^+W`.

    Returns a tuple of four largest absolute entries (numeric) or four sympy matrices that
    simplify to zero (symbolic).

    >>> W = np.array([[1.0, 2.0], [2.0, 4.0]])
    >>> max(penrose_conditions(W, moore_penrose(W))) < 1e-14
    True
    """
    fname = "penrose_conditions"
    if _value_checks.is_symbolic(W) or _value_checks.is_symbolic(W_plus):
        W = _value_checks.to_sympy(W, f"{fname}: W")
        P = _value_checks.to_sympy(W_plus, f"{fname}: W_plus")
        if P.shape != W.T.shape:
            raise _value_checks.refusal(
                ValueError, f"{fname}: W_plus: expected shape {W.T.shape}, got {P.shape}")
        res = (W * P * W - W, P * W * P - P, (W * P).T - W * P, (P * W).T - P * W)
        return tuple(r.applyfunc(sp.simplify) for r in res)
    W = _num_matrix(W, "W", fname)
    P = _num_matrix(W_plus, "W_plus", fname)
    if W.ndim != 2 or P.shape != W.T.shape:
        raise _value_checks.refusal(
            ValueError, f"{fname}: W_plus: expected shape {W.T.shape} (W transposed), got "
                        f"{P.shape}")
    with np.errstate(all="ignore"):
        res = (W @ P @ W - W, P @ W @ P - P, (W @ P).T - W @ P, (P @ W).T - P @ W)
        out = tuple(float(np.max(np.abs(r), initial=0.0)) for r in res)
    return _value_checks.finite_result(out, fname)


def udwadia_kalaba(M: Metric, F, A, b, tol: Tolerance = 1e-9):
    r"""The Udwadia--Kalaba equation (review eq. (36)): :math:`M\ddot q = F + F^C` with

    .. math:: F^C = M^{1/2}\,(A M^{-1/2})^+\,(b - A M^{-1} F).

    Any factor :math:`M = LL^T` may stand for :math:`M^{1/2}` (then :math:`L^{-T}` for
    :math:`M^{-1/2}`): :math:`L(AL^{-T})^+ = A^T(AM^{-1}A^T)^+` for every factor, so F^C does not
    depend on the choice. Computed without any square root: :math:`\ddot q = a +
    M^{-1}A^T(AM^{-1}A^T)^{-1}(b - Aa)`, :math:`a = M^{-1}F`, by Cholesky factors of M and of
    :math:`AM^{-1}A^T`; the SVD pseudo-inverse of :math:`AL^{-T}` only when that matrix is
    rank deficient (or nearly). Redundant constraints (rank-deficient A) are fine. Inconsistent
    constraints (b not in the range of A) have no solution: a :class:`ConstraintWarning` states
    the residual :math:`|A\ddot q - b|` of the answer returned, the least-squares one (it
    minimizes :math:`|A\ddot q - b|`, and among those Gauss's function
    :math:`(\ddot q - a)^TM(\ddot q - a)`, :math:`a = M^{-1}F`).

    Parameters
    ----------
    M : (n, n) symmetric positive definite; F : (n,); A : (m, n) (1-D for one row); b : (m,)
    tol : relative tolerance of the consistency test

    Sympy input: :math:`F^C = A^T(AM^{-1}A^T)^+(b - AM^{-1}F)` with sympy's ``pinv``.

    Returns
    -------
    ConstrainedMotion(qdd, constraint_force)

    Raises
    ------
    ValueError for M not symmetric positive definite or shapes that do not fit.

    Examples
    --------
    >>> qdd, F_c = udwadia_kalaba(np.eye(2), [0, -9.81], [[1, 1], [2, 2]], [0, 0])
    >>> qdd.round(3).tolist(), F_c.round(3).tolist()
    ([4.905, -4.905], [4.905, 4.905])
    """
    fname = "udwadia_kalaba"
    if any(_value_checks.is_symbolic(x) for x in (M, F, A, b)):
        M, F, A, b = _symbolic_system(M, F, A, b, fname)
        Minv = M.inv()
        Fc = A.T * (A * Minv * A.T).pinv() * (b - A * Minv * F)
        qdd = Minv * (F + Fc)
        _warn_inconsistent_symbolic(A, qdd, b, _value_checks.tolerance(tol, f"{fname}: tol"), fname)
        return ConstrainedMotion(qdd, Fc)
    M, L, F, A, b = _system(M, F, A, b, fname)
    tol = _value_checks.tolerance(tol, f"{fname}: tol")
    with np.errstate(all="ignore"):
        out = _uk_fast(M, F, A, b, fname, tol, stacklevel=4)
    return ConstrainedMotion(*_value_checks.finite_result(tuple(out), fname))


def _uk(M, L, F, A, b, tol=1e-9, fname="udwadia_kalaba", stacklevel=3):
    """Eq. (36) as printed, with M = L L^T: the SVD pseudo-inverse of A L^{-T} (any rank)."""
    a = np.linalg.solve(M, F)                                   # unconstrained acceleration
    B = np.linalg.solve(L, A.T).T                               # A L^{-T}
    Fc = L @ (_pinv(B) @ (b - A @ a))
    qdd = a + np.linalg.solve(M, Fc)
    _warn_inconsistent(A, qdd, b, tol, fname, stacklevel)
    return ConstrainedMotion(qdd, Fc)


# a Cholesky factor whose smallest pivot is below this fraction of its largest counts as
# rank deficient (condition number of A M^-1 A^T above ~1e12): then the SVD route above
_PIVOT_RATIO = 1e-6


def _uk_fast(M, F, A, b, fname, tol=1e-9, stacklevel=3, force=True):
    r"""Eq. (36) without M^{1/2}: with :math:`a = M^{-1}F`, :math:`Y = M^{-1}A^T` and
    :math:`W = AY` (by Cholesky factors of M and W, LAPACK ``posv``/``potrf``/``potrs``),

    .. math:: \lambda = W^{-1}(b - Aa),\qquad \ddot q = a + Y\lambda,\qquad F^C = A^T\lambda,

    the same as eq. (36) for SPD M and A of full row rank (:math:`L(AL^{-T})^+ = A^TW^{-1}`);
    then b is always in the range of A, so no consistency test is needed. Rank-deficient or
    ill-conditioned W (a small Cholesky pivot) goes to :func:`_uk` (SVD, warning when
    inconsistent). No input checks: the simulator's inner loop. ``force=False``: the
    constraint force is left out (None), for the integrator's right-hand side."""
    L, X, info = _posv(M, np.vstack((F, A)).T, lower=1)      # M^-1 [F, A^T], one call
    if info != 0:
        return udwadia_kalaba(M, F, A, b, tol)                 # raises the clear error
    a, Y = X[:, 0], X[:, 1:]
    AX = A @ X                                                 # [A a, W]
    if AX.shape[0] == 1:                                       # one row: W is a number
        w = float(AX[0, 1])
        if not w > 0.0:
            return _uk(M, np.tril(L), F, A, b, tol, fname, stacklevel + 1)
        lam = (float(b[0]) - float(AX[0, 0])) / w
        return ConstrainedMotion(a + lam * X[:, 1], lam * A[0] if force else None)
    else:
        r = b - AX[:, 0]
        Lw, info = _potrf(AX[:, 1:], lower=1)
        d = Lw.diagonal().tolist()
        if info != 0 or not min(d) > _PIVOT_RATIO * max(d):
            return _uk(M, np.tril(L), F, A, b, tol, fname, stacklevel + 1)
        lam = _potrs(Lw, r, lower=1)[0]
    return ConstrainedMotion(a + Y @ lam, A.T @ lam if force else None)


def _warn_inconsistent(A, qdd, b, tol, fname, stacklevel=3):
    r = float(np.linalg.norm(A @ qdd - b))
    scale = max(float(np.linalg.norm(b)), float(np.linalg.norm(A) * np.linalg.norm(qdd)),
                1e-300)                     # relative, as documented: small units too
    if r > tol * scale:
        warnings.warn(f"{fname}: the constraints are inconsistent (b is not in the range of A): "
                      f"no acceleration satisfies them; returning the least-squares one, residual "
                      f"|A qdd - b| = {r:.3g}", ConstraintWarning, stacklevel=stacklevel)
    return r


def _warn_inconsistent_symbolic(A, qdd, b, tol, fname, stacklevel=4):
    """The sympy twin of :func:`_warn_inconsistent`: the residual A qdd - b at values of the
    symbols drawn under their assumptions (zero after simplification when the constraints are
    consistent); the same :class:`ConstraintWarning` when it is not zero."""
    R = A * qdd - b
    rng = np.random.default_rng(12345)
    for _ in range(2):
        sub = _meaning_checks._assumed_substitution(R, rng)
        r = _meaning_checks._numbers(R, sub)
        if r is None:
            return
        scale = max(1.0, float(np.abs(_meaning_checks._numbers(b, sub) if b.free_symbols else
                                      np.array(b.evalf(), dtype=float)).max(initial=0.0)))
        if float(np.linalg.norm(r)) > max(tol, 1e-9) * scale:
            if R.applyfunc(sp.simplify).is_zero_matrix:
                return
            warnings.warn(f"{fname}: the constraints are inconsistent (b is not in the range of "
                          f"A): no acceleration satisfies them; returning the least-squares one, "
                          f"residual |A qdd - b| = {float(np.linalg.norm(r)):.3g} at "
                          + ", ".join(f"{k} = {float(v):.2g}" for k, v in list(sub.items())[:4]),
                          ConstraintWarning, stacklevel=stacklevel)
            return


def constraint_projector(M: Metric, A):
    r"""The M-orthogonal projector onto :math:`D = \ker A` (handbook §5.4.1):

    .. math:: P = I - M^{-1}A^T(AM^{-1}A^T)^+A,\qquad P^\perp = I - P.

    P is idempotent, :math:`AP = 0`, and self-adjoint in the kinetic-energy metric
    (:math:`MP = P^TM`). Numeric or sympy (then :math:`(AM^{-1}A^T)^{-1}`, A of full rank).

    >>> P = constraint_projector(np.diag([1.0, 2.0]), [[1.0, 1.0]])
    >>> (P @ [1.0, 0.0]).round(6).tolist()
    [0.333333, -0.333333]
    """
    fname = "constraint_projector"
    if _value_checks.is_symbolic(M) or _value_checks.is_symbolic(A):
        M = _meaning_checks.spd(_value_checks.to_sympy(M, f"{fname}: M"), f"{fname}: M")
        A = _value_checks.to_sympy(A, f"{fname}: A")
        if A.shape[1] != M.shape[0]:
            raise _value_checks.refusal(
                ValueError, f"{fname}: A: expected {M.shape[0]} columns, got shape {A.shape}")
        if A.shape[0] == 0:
            raise _value_checks.error(f"{fname}: A", "at least one constraint row", "none")
        _full_row_rank(A, fname, "A")               # (A M^-1 A^T)^-1 exists
        Minv = M.inv()
        return sp.eye(M.shape[0]) - Minv * A.T * (A * Minv * A.T).inv() * A
    M, L = _spd(M, fname)
    n = M.shape[0]
    A = _num_matrix(A, "A", fname)
    A = A.reshape(1, -1) if A.ndim == 1 else A
    if A.ndim != 2 or A.shape[1] != n:
        raise _value_checks.refusal(
            ValueError, f"{fname}: A: expected an m x {n} constraint matrix, got shape {A.shape}")
    with np.errstate(all="ignore"):
        MiAt = np.linalg.solve(L.T, np.linalg.solve(L, A.T))
        AMA = A @ MiAt
        if not np.isfinite(AMA).all():
            raise _value_checks.error(f"{fname}: A", "entries small enough for float64 arithmetic",
                                "entries whose products overflow to infinity", "scale the units")
        out = np.eye(n) - MiAt @ _pinv(AMA) @ A
    return _value_checks.finite_result(out, fname)


def constraint_connection(M: Metric, A, q):
    r"""Christoffel symbols :math:`\tilde\Gamma^k_{ij}` of the constraint connection
    (eq. (5.26)): :math:`\tilde\nabla_XY = \nabla_XY + (\nabla_XP^\perp)Y`, in coordinates

    .. math:: \tilde\Gamma^k_{ij} = \Gamma^k_{ij} + \partial_iP^{\perp k}{}_j
              + \Gamma^k_{il}P^{\perp l}{}_j - P^{\perp k}{}_l\Gamma^l_{ij},

    so that for Y in D, :math:`\tilde\nabla_XY = P(\nabla_XY)` (eq. (5.27)) and constrained
    motion is :math:`\ddot q^k + \tilde\Gamma^k_{ij}\dot q^i\dot q^j = (PM^{-1}Y)^k` (eq. (5.25)).

    Parameters
    ----------
    M : sympy n x n mass matrix in q; A : sympy m x n constraint matrix in q; q : n Symbols

    Returns
    -------
    sympy.ImmutableDenseNDimArray (n, n, n), indexed ``[k, i, j]``

    Examples
    --------
    A particle on the unit circle: along the circle the constrained connection turns velocity.

    >>> import sympy as sp
    >>> x, y = sp.symbols('x y')
    >>> G = constraint_connection(sp.eye(2), sp.Matrix([[x, y]]), [x, y])
    >>> sp.simplify(G[0, 1, 1].subs({x: 1, y: 0}))
    1
    """
    from ..lagrange._euler_lagrange import christoffel_symbols
    fname = "constraint_connection"
    q = list(_symbol_column(q, "q", fname))
    n = len(q)
    M = _value_checks.sym_matrix(M, f"{fname}: M")
    A = _value_checks.sym_matrix(A, f"{fname}: A")
    if M.shape[0] != M.shape[1]:
        raise _value_checks.error(f"{fname}: M", "a square mass matrix", f"shape {M.shape}")
    if M.shape != (n, n):
        raise _value_checks.error(f"{fname}: M, q", f"M of shape ({n}, {n}) (one row per coordinate "
                            f"of q)", f"M of shape {M.shape} and {n} coordinates in q")
    if A.shape[1] != n:
        raise _value_checks.error(f"{fname}: A", f"{n} columns (one per coordinate of q)",
                            f"shape {A.shape}")
    _meaning_checks.spd(M, f"{fname}: M")
    G = christoffel_symbols(M, q, kind=2)
    Pp = sp.eye(n) - constraint_projector(M, A)
    out = [[[G[k, i, j] + Pp[k, j].diff(q[i])
             + sum(G[k, i, l] * Pp[l, j] - Pp[k, l] * G[l, i, j] for l in range(n))
             for j in range(n)] for i in range(n)] for k in range(n)]
    return sp.ImmutableDenseNDimArray(out, (n, n, n))


# --------------------------------------------------------------------------
# equations of an unconstrained system from its energies
# --------------------------------------------------------------------------

def lagrangian_equations(T, V, q, qd, Q=None, t=TIME, name="system"):
    r"""The :class:`~robodyn.equations.MassMatrixForm` :math:`M\ddot q = F` of a Lagrangian
    system from its kinetic energy :math:`T(q, \dot q, t) = \tfrac12\dot q^TM\dot q + N\dot q +
    P` (review eq. (47)) and potential V: :math:`M = \partial^2T/\partial\dot q^2` and
    (eq. (48)--(49), with :math:`-\partial V/\partial q` added to Q)

    .. math:: F = Q - \frac{\partial V}{\partial q} + \frac{\partial T}{\partial q}
              - \Bigl(\frac{\partial}{\partial q}\frac{\partial T}{\partial\dot q}\Bigr)\dot q
              - \frac{\partial}{\partial t}\frac{\partial T}{\partial\dot q}.

    Parameters
    ----------
    T, V : sympy expressions; q, qd : lists of n Symbols; Q : n generalized forces (default 0)

    >>> import sympy as sp
    >>> r, th, rd, thd, m, g = sp.symbols('r theta r_dot theta_dot m g')
    >>> T = m / 2 * (rd**2 + r**2 * thd**2)
    >>> eq = lagrangian_equations(T, m * g * r * sp.sin(th), [r, th], [rd, thd])
    >>> eq.mass_matrix, eq.forcing.T
    (Matrix([
    [m,      0],
    [0, m*r**2]]), Matrix([[-g*m*sin(theta) + m*r*theta_dot**2, -g*m*r*cos(theta) - 2*m*r*r_dot*theta_dot]]))
    """
    fname = "lagrangian_equations"
    q = _symbol_column(q, "q", fname)
    if not isinstance(t, sp.Symbol):
        raise _value_checks.error(f"{fname}: t", "a sympy Symbol for time", t, exc=TypeError)
    _named_like_time(q, t, fname, "q")
    qd = _speed_symbols(q, qd, fname, t)
    T, V = _value_checks.expression(T, f"{fname}: T"), _value_checks.expression(V, f"{fname}: V")
    p = sp.Matrix([T]).jacobian(qd).T
    M = p.jacobian(qd)
    Qv = sp.zeros(q.shape[0], 1) if Q is None else _expr_column(Q, "Q", fname)
    if Qv.shape != (q.shape[0], 1):
        raise _value_checks.error(f"{fname}: Q", f"{q.shape[0]} generalized forces (one per "
                            "coordinate)", f"{Qv.shape[0]}")
    _meaning_checks.time_symbol(t, f"{fname}: t", exprs=[T, V, Qv])
    _meaning_checks.independent_of(M, list(qd), f"{fname}: T", "a kinetic energy is at most quadratic "
                           "in the velocities: M = d2T/dqd2 may not depend on them")
    _meaning_checks.independent_of(V, list(qd), f"{fname}: V", "a potential depends on q and t only")
    _spd_where_possible(M, list(q), list(qd), t, f"{fname}: T (its mass matrix d2T/dqd2)")
    F = (Qv - sp.Matrix([V]).jacobian(q).T + sp.Matrix([T]).jacobian(q).T
         - p.jacobian(q) * qd - p.diff(t))
    return mass_matrix_form(q, qd, M.applyfunc(sp.expand), F.applyfunc(sp.expand), t=t, name=name)


# --------------------------------------------------------------------------
# a constrained system and its four sets of equations
# --------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class ConstrainedSystem:
    r"""An unconstrained system plus constraints, an immutable value.

    Parameters
    ----------
    model : :class:`~robodyn.equations.MassMatrixForm` with speeds :math:`u = \dot q` (e.g.
        ``lagrange.equations_of_motion(chain)`` or :func:`lagrangian_equations`), or a numeric
        :class:`~robodyn.rigid_motion.SerialChain` (then only :meth:`numeric` works, through
        :mod:`robodyn.dynamics`)
    constraints : :class:`Constraints` on the same coordinate symbols (for a chain: any n symbols)
    gravity : 3-vector, for a chain model only
    name : str
    """
    model: object
    constraints: Constraints
    gravity: object = None
    name: str = "constrained system"
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self):
        fname = "ConstrainedSystem"
        if not isinstance(self.constraints, Constraints):
            raise _value_checks.refusal(
                TypeError, f"{fname}: constraints: expected a Constraints value, got "
                           f"{_value_checks._describe(self.constraints)}")
        from ..rigid_motion._kinematics import SerialChain
        if not isinstance(self.name, str):
            raise _value_checks.error(f"{fname}: name", "a string (a label)", self.name, exc=TypeError)
        if isinstance(self.model, MassMatrixForm) and self.gravity is not None:
            raise _value_checks.error(f"{fname}: gravity", "None for a symbolic model (its forcing "
                                "holds gravity already)", self.gravity)
        if isinstance(self.model, MassMatrixForm):
            if list(self.model.q) != list(self.constraints.q):
                raise _value_checks.refusal(
                    ValueError, f"{fname}: constraints: expected the model's coordinates "
                                f"{list(self.model.q)}, got {list(self.constraints.q)}")
            if list(self.model.kinematics) != list(self.model.u):
                raise _value_checks.refusal(
                    ValueError, f"{fname}: model: expected speeds u = qd (kinematics qd = u), "
                                f"got qd = {list(self.model.kinematics)}")
        elif isinstance(self.model, SerialChain):
            if self.model.n != self.constraints.n:
                raise _value_checks.refusal(
                    ValueError, f"{fname}: constraints: expected {self.model.n} coordinates "
                                f"(one per joint), got {self.constraints.n}")
            g = (0.0, 0.0, -9.81) if self.gravity is None else self.gravity
            object.__setattr__(self, "gravity", _value_checks.vector(g, 3, f"{fname}: gravity"))
        else:
            raise _value_checks.refusal(
                TypeError, f"{fname}: model: expected a MassMatrixForm or a SerialChain, got "
                           f"{_value_checks._describe(self.model)}")

    @property
    def n(self):
        return self.constraints.n

    def _symbolic(self, fname, independent=False):
        """(model, A, b) of the symbolic route; ``independent``: the rows of A must be
        independent (multipliers and projection invert A M^-1 A^T; embedding does not)."""
        if not isinstance(self.model, MassMatrixForm):
            raise _value_checks.refusal(
                TypeError, f"{fname}: expected a system whose model is a MassMatrixForm "
                           f"(symbolic); a SerialChain model has only numeric equations "
                           f"(ConstrainedSystem.numeric)")
        eq = self.model
        if eq.t != self.constraints.t:
            raise _value_checks.refusal(
                ValueError, f"{fname}: the model's time symbol {eq.t} differs from the "
                            f"constraints' {self.constraints.t}")
        A, b = second_order_form(self.constraints, eq.u)
        if independent:
            _full_row_rank(A, fname, "system")
        return eq, A, b

    def numeric(self, values=None, method="udwadia_kalaba"):
        """A :class:`~robodyn.equations.NumericForm` of the constrained motion solved by
        ``method`` (one of ``METHODS``), with k = n inputs (joint forces); cached."""
        _value_checks.choice(method, "ConstrainedSystem.numeric: method", METHODS)
        key = (method, _values_key(values, "ConstrainedSystem.numeric"))
        if key not in self._cache:
            self._cache[key] = NumericConstrained(self, values, method)
        return self._cache[key]


def _check_system(system, fname):
    if not isinstance(system, ConstrainedSystem):
        raise _value_checks.error(f"{fname}: system", "a ConstrainedSystem", system, exc=TypeError)


def multiplier_equations(system):
    r"""The constrained motion with Lagrange multipliers eliminated symbolically, as a
    :class:`~robodyn.equations.MassMatrixForm` (eq. (5.19)--(5.20)): speeds :math:`\dot q`,
    mass matrix M, forcing :math:`F + A^T\lambda(q, \dot q, t)` with
    :math:`(AM^{-1}A^T)\lambda = b - AM^{-1}F`, and input matrix :math:`P^T` (inputs :math:`\tau`
    change :math:`\lambda` too: :math:`\tau + A^T\lambda(\tau) = P^T\tau + \dots`).

    >>> import sympy as sp
    >>> from robodyn.models import particle_pendulum
    >>> eq = multiplier_equations(particle_pendulum())
    >>> eq.mass_matrix
    Matrix([
    [m, 0],
    [0, m]])
    """
    _check_system(system, "multiplier_equations")
    eq, A, b = system._symbolic("multiplier_equations", independent=True)
    M, F = eq.mass_matrix, eq.forcing
    W = M.LUsolve(A.T)                                    # M^-1 A^T
    lam = (A * W).LUsolve(b - A * M.LUsolve(F))
    P_T = sp.eye(M.shape[0]) - A.T * (A * W).LUsolve(W.T)  # (I - M^-1 A^T (A M^-1 A^T)^-1 A)^T
    return mass_matrix_form(eq.q, eq.u, M, F + A.T * lam, input_matrix=P_T * eq.input_matrix,
                            t=eq.t, name=f"{system.name} (multipliers)")


def embedded_equations(system, S=None, eta=None):
    r"""The constrained motion in pseudo-velocities :math:`\eta` (eq. (5.21)--(5.22)):
    :math:`\dot q = S(q, t)\eta + s_0(q, t)`, S an n x (n - m) basis of ker A and :math:`s_0`
    the minimum-norm solution of :math:`As_0 = c` (zero for eq. (5.18)), and

    .. math:: S^TMS\,\dot\eta = S^T\bigl(F(q, S\eta + s_0, t) - M(\dot S\eta + \dot s_0)\bigr),
              \qquad \dot S = \sum_k\frac{\partial S}{\partial q_k}\dot q_k
              + \frac{\partial S}{\partial t},

    which is (5.22) with the forcing :math:`F = -C\dot q - G + Y` (the constraint force
    :math:`A^T\lambda` drops out since :math:`S^TA^T = 0`). A
    :class:`~robodyn.equations.MassMatrixForm` with kinematics :math:`S\eta + s_0` and input
    matrix :math:`S^T`.

    Parameters
    ----------
    system : ConstrainedSystem (symbolic model)
    S : n x (n - m) sympy Matrix, optional; default sympy's null-space basis of A
    eta : list of n - m Symbols, default ``eta1, eta2, ...``

    Raises
    ------
    ValueError when S has the wrong shape or A S is not zero.

    >>> from robodyn.models import particle_pendulum

    >>> eq = embedded_equations(particle_pendulum())
    >>> eq.kinematics.T
    Matrix([[-eta1*y/x, eta1]])
    """
    fname = "embedded_equations"
    _check_system(system, fname)
    eq, A, b = system._symbolic(fname)
    Av, c = system.constraints.velocity_form()
    n, m = A.shape[1], A.rank(simplify=True)
    if S is None:
        basis = Av.nullspace(simplify=True)
        S = sp.Matrix.hstack(*basis) if basis else sp.zeros(n, 0)
    S = _value_checks.sym_matrix(S, f"{fname}: S")
    if S.shape != (n, n - m):
        raise _value_checks.refusal(
            ValueError, f"{fname}: S: expected an {n} x {n - m} null-space basis of A, got shape "
                        f"{S.shape}")
    if not (Av * S).applyfunc(sp.simplify).is_zero_matrix:
        raise _value_checks.refusal(
            ValueError, f"{fname}: S: expected A S = 0 (columns in the null space of A), got "
                        f"A S = {(Av * S).applyfunc(sp.simplify)}")
    eta = _symbol_column(eta or sp.symbols(f"eta1:{n - m + 1}"), "eta", fname)
    if eta.shape[0] != n - m:
        raise _value_checks.refusal(
            ValueError, f"{fname}: eta: expected {n - m} symbols, got {eta.shape[0]}")
    _value_checks.own_symbols({"q": eq.q, "u": eq.u, "eta": eta}, fname)
    s0 = sp.zeros(n, 1) if c.is_zero_matrix else Av.T * (Av * Av.T).LUsolve(c)
    q, t = eq.q, eq.t
    qd_expr = S * eta + s0
    sub = dict(zip(eq.u, qd_expr))
    Sdot = S.diff(t) + sum((S.diff(q[k]) * qd_expr[k] for k in range(n)), sp.zeros(*S.shape))
    s0dot = s0.diff(t) + s0.jacobian(q) * qd_expr
    M = eq.mass_matrix
    F = eq.forcing.xreplace(sub)
    B = eq.input_matrix
    return mass_matrix_form(q, eta, S.T * M * S, S.T * (F - M * (Sdot * eta + s0dot)),
                            kinematics=qd_expr, input_matrix=S.T * B, t=t,
                            name=f"{system.name} (embedded)")


def projected_equations(system):
    r"""The constrained motion through the constraint connection (eq. (5.23)--(5.27)):
    :math:`\ddot q^k + \tilde\Gamma^k_{ij}\dot q^i\dot q^j = (PM^{-1}Y)^k`, with
    :math:`Y = F + M\Gamma(\dot q, \dot q)` the forces other than the inertial ones (gravity,
    inputs) and :math:`\tilde\Gamma` from :func:`constraint_connection`. As a
    :class:`~robodyn.equations.MassMatrixForm` with unit mass matrix and input matrix
    :math:`PM^{-1}`. Needs scleronomic constraints :math:`A(q)\dot q = 0` and M(q) (as §5.4).

    >>> from robodyn.models import particle_pendulum

    >>> eq = projected_equations(particle_pendulum())
    >>> eq.mass_matrix
    Matrix([
    [1, 0],
    [0, 1]])
    """
    from ..lagrange._euler_lagrange import christoffel_symbols
    fname = "projected_equations"
    _check_system(system, fname)
    eq, _, _ = system._symbolic(fname, independent=True)
    A, c = system.constraints.velocity_form()
    t = eq.t
    if not c.is_zero_matrix or A.has(t) or eq.mass_matrix.has(t):
        raise _value_checks.refusal(
            ValueError, f"{fname}: expected scleronomic constraints A(q) qd = 0 and M(q) "
                        f"(handbook §5.4.1), got c = {list(c)} or a time dependence")
    q, qd = list(eq.q), list(eq.u)
    n = len(q)
    M = eq.mass_matrix
    G = christoffel_symbols(M, q, kind=2)
    Gt = constraint_connection(M, A, q)
    quad = lambda Gam: sp.Matrix([sum(Gam[k, i, j] * qd[i] * qd[j] for i in range(n)
                                      for j in range(n)) for k in range(n)])
    Y = eq.forcing + M * quad(G)
    P = constraint_projector(M, A)
    PMi = P * M.inv()
    return mass_matrix_form(eq.q, eq.u, sp.eye(n), PMi * Y - quad(Gt),
                            input_matrix=PMi * eq.input_matrix, t=t,
                            name=f"{system.name} (projection)")


class NumericConstrained(NumericForm):
    r"""Numeric constrained equations, a :class:`~robodyn.equations.NumericForm` with state
    :math:`(q, \dot q)`, n speeds and n inputs (forces along the coordinates); made by
    :meth:`ConstrainedSystem.numeric`. ``accelerations`` solves the constrained motion by
    ``method``; ``solve(q, qd, t, tau)`` returns :class:`ConstrainedMotion` (q̈ and the
    constraint force); ``residuals`` the constraint residuals."""

    def __init__(self, system, values, method, fname="ConstrainedSystem.numeric"):
        n = system.n
        _check_values(values, fname)
        super().__init__(n, n, n, f"{system.name} ({method})")
        self.method = method
        self.system = system
        self.constraints = system.constraints._numeric_for(values, fname)
        self.baumgarte = None           # (alpha, beta) set by simulate_constrained
        model = system.model
        self._zero = np.zeros(n)
        self._fname = f"NumericConstrained ({method})"
        if isinstance(model, MassMatrixForm):
            num = model._numeric(values, fname)
            self._M = lambda q, t: num.mass_matrix(q, t)
            self._F = lambda q, qd, t, tau: (num.forcing(q, qd, t) + num.input_matrix(q, t) @ tau
                                             if tau.any() else num.forcing(q, qd, t))
        else:
            from ..dynamics import _recursions as dynamics
            g = np.ascontiguousarray(system.gravity, dtype=float)   # the compiled engine's path
            zero = self._zero
            self._M = lambda q, t: dynamics.crba(model, q)
            self._F = lambda q, qd, t, tau: tau - dynamics.inverse_dynamics(
                model, q, qd, zero, gravity=g)
        self._solve = {"multipliers": _by_multipliers, "embedded": _by_embedding,
                       "projection": _by_projection, "udwadia_kalaba": _by_uk}[method]

    def mass_matrix(self, q, t=0.0):
        return self._M(q, t)

    def forcing(self, q, u, t=0.0):
        return self._F(q, u, t, np.zeros(self.n)) + self.solve(q, u, t).constraint_force

    def kinematics(self, q, u, t=0.0):
        return np.array(u, dtype=float)

    def input_matrix(self, q, t=0.0):
        M = self._M(q, t)
        return constraint_projector(M, self.constraints.A(q, t)).T

    def kinematics_jacobian(self, q, u, t=0.0):
        return np.zeros((self.n, self.n + 1))

    def b(self, q, qd, t=0.0):
        """b of :math:`A\\ddot q = b`, with the Baumgarte terms when they are switched on."""
        return self.constraints._A_b(np.asarray(q, dtype=float), np.asarray(qd, dtype=float),
                                     t, self.baumgarte)[1].copy()

    def solve(self, q, qd, t=0.0, tau=None):
        """:class:`ConstrainedMotion` (q̈, constraint force) at (q, qd, t) by this method.

        The simulator's inner loop: q, qd float ndarrays, no input checks (the public
        :meth:`accelerations` checks them)."""
        return self._motion(q, qd, t, tau, True)

    def _motion(self, q, qd, t, tau, force):
        tau = self._zero if tau is None else np.asarray(tau, dtype=float)
        q, qd = np.asarray(q, dtype=float), np.asarray(qd, dtype=float)
        M = self._M(q, t)
        F = self._F(q, qd, t, tau)
        A, b = self.constraints._A_b(q, qd, t, self.baumgarte)
        if self.method == "udwadia_kalaba":
            return _uk_fast(M, F, A, b, self._fname, force=force)
        qdd = self._solve(M, F, A, b)
        return ConstrainedMotion(qdd, M @ qdd - F)

    def _qdd(self, q, qd, t=0.0, tau=None):
        """q̈ alone (the integrator's right-hand side): :meth:`solve` without the force."""
        return self._motion(q, qd, t, tau, False).qdd

    def multipliers(self, q, qd, t=0.0, tau=None):
        r"""The Lagrange multipliers :math:`\lambda` with :math:`A^T\lambda = F^C` (eq. (5.19);
        least squares, unique when A has full row rank)."""
        Fc = self.solve(q, qd, t, tau).constraint_force
        return np.linalg.lstsq(self.constraints.A(q, t).T, Fc, rcond=None)[0]

    def accelerations(self, q, u, t=0.0, tau=None):
        fname = "accelerations"
        q = self._vec(q, self.n, f"q ({self.n} coordinates)", fname)
        u = self._vec(u, self.n, f"u ({self.n} speeds)", fname)
        return self._qdd(q, u, self._time(t, fname), self._tau(tau, fname))


def _by_multipliers(M, F, A, b):
    n, m = A.shape[1], A.shape[0]
    K = np.block([[M, -A.T], [A, np.zeros((m, m))]])
    try:
        return np.linalg.solve(K, np.concatenate([F, b]))[:n]
    except np.linalg.LinAlgError:
        return lagrange_multipliers(M, F, A, b).qdd           # raises the clear error


def _by_uk(M, F, A, b):
    return _uk_fast(M, F, A, b, "NumericConstrained (udwadia_kalaba)").qdd


def _by_embedding(M, F, A, b):
    # q̈ = w + S η̇ with A w = b (minimum norm) and S an orthonormal basis of ker A (SVD)
    _, s, Vt = np.linalg.svd(A)
    r = int(np.sum(s > max(A.shape) * np.finfo(float).eps * (s[0] if s.size else 1.0)))
    S = Vt[r:].T
    w = np.linalg.lstsq(A, b, rcond=None)[0]
    if S.shape[1] == 0:
        return w
    return w + S @ np.linalg.solve(S.T @ M @ S, S.T @ (F - M @ w))


def _by_projection(M, F, A, b):
    # q̈ = P M^-1 F + M^-1 A^T (A M^-1 A^T)^+ b: the part in D from the forces, the rest from b
    P = constraint_projector(M, A)
    MiAt = np.linalg.solve(M, A.T)
    return P @ np.linalg.solve(M, F) + MiAt @ moore_penrose(A @ MiAt) @ b


from .._boundary import seal as _seal  # noqa: E402 -- the one boundary (issue 28): last, over the finished module
_seal(globals())
