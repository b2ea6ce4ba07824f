r"""Equations of motion in one shape, whichever method derived them.

Every method of the book ends in the same *mass-matrix form*: Lagrange (Part II),
multipliers and Udwadia--Kalaba (Part III), Kane (Part V) and the port-Hamiltonian forms
(Part VI) all give

.. math:: \dot q = K(q, t)\,u, \qquad M(q, t)\,\dot u = f(q, u, t) + B(q, t)\,\tau,

with n coordinates :math:`q`, m generalized speeds :math:`u` (:math:`u = \dot q`, K = I for
Lagrange), the m x m **mass matrix** M, the m x 1 **forcing** f (everything but the inputs:
Coriolis and centrifugal terms, gravity, springs, constraint forces) and the m x k **input
matrix** B of the k inputs :math:`\tau` (B = I for joint torques in Lagrange's form;
:math:`B = K^T` for joint torques when Kane's speeds are not :math:`\dot q`).

The interface (the names of sympy.physics.mechanics, so a reader meets one vocabulary):

* :class:`MassMatrixForm` -- the symbolic side: attributes ``q`` (n x 1), ``u`` (m x 1),
  ``mass_matrix`` (m x m), ``forcing`` (m x 1), ``kinematics`` (n x 1, :math:`\dot q`),
  ``input_matrix`` (m x k), ``t`` (the time Symbol); :meth:`~MassMatrixForm.numeric` and
  :meth:`~MassMatrixForm.rhs`. Coordinates and speeds are plain ``sympy.Symbol``\ s (not
  functions of time). Subclass it (and provide those attributes), or build one from
  expressions with :func:`mass_matrix_form`.
* :class:`NumericForm` -- the numeric twin: ``mass_matrix(q, t)``, ``forcing(q, u, t)``,
  ``kinematics(q, u, t)``, ``input_matrix(q, t)``, ``accelerations(q, u, t, tau)`` (:math:`\dot
  u`), ``rhs(t, x, tau)`` for the state :math:`x = (q, u)` (ready for
  ``scipy.integrate.solve_ivp``) and ``coordinate_accelerations(q, qd, t, tau)``
  (:math:`\ddot q`, the quantity every method must agree on).
* :func:`~robodyn.equations.max_difference` -- the largest difference of :math:`\ddot q` between two forms at
  sample states: the one-line proof that two methods give the same motion.

A method whose state is not (q, u) (a floating base on SE(3), momenta) still offers a
:class:`NumericForm` with ``mass_matrix``, ``forcing`` and ``rhs`` on its own state, and says
in its docstring what its state is.
"""
from __future__ import annotations

import contextlib
import numbers
from dataclasses import dataclass, field

import numpy as np
import sympy as sp
from sympy.printing.pycode import PythonCodePrinter

from . import _value_checks
from . import _meaning_checks
from .errors import ResultError

__all__ = ["MassMatrixForm", "NumericForm", "mass_matrix_form", "max_difference",
           "SingularMassMatrix"]

class SingularMassMatrix(ResultError, np.linalg.LinAlgError):
    """Forward dynamics (compiled, its numpy twin, or a numeric form's accelerations) met a
    mass matrix that is singular or not positive definite at the state asked for
    (``forward_dynamics: M(q): expected a positive definite mass matrix, got ...``): no
    acceleration exists there, and solving anyway would return a huge wrong number. A
    :class:`~robodyn.errors.ResultError` (a ValueError), and numpy's ``LinAlgError``, which
    callers of a linear solve catch."""


TIME = sp.Symbol("t", real=True)
"""The default time symbol of every form."""


def _column(x, name, fname):
    """A sympy column (k x 1) from a Matrix, a list or a scalar expression."""
    if isinstance(x, sp.MatrixBase):
        return x.reshape(x.shape[0] * x.shape[1], 1) if 1 in x.shape else x
    if isinstance(x, (list, tuple)):
        _value_checks.no_text(x, f"{fname}: {name}")
        if not len(x):
            return sp.zeros(0, 1)
        if all(isinstance(e, sp.Basic) and not isinstance(e, sp.MatrixBase) or isinstance(
                e, numbers.Number) for e in x):
            return sp.Matrix([_value_checks.expression(e, f"{fname}: {name}") for e in x])
        return _value_checks.sym_matrix(x, f"{fname}: {name}", column=True)
    raise _value_checks.refusal(
        TypeError, f"{fname}: {name}: expected a sympy Matrix or a list of expressions, got "
                   f"{_value_checks._describe(x)}")


def _check_time(q, u, t, fname):
    """t a Symbol, and q, u and t distinct symbols (a form's variables)."""
    if not isinstance(t, sp.Symbol):
        raise _value_checks.refusal(
            TypeError, f"{fname}: t: expected a sympy Symbol, got {_value_checks._describe(t)}")
    if t in set(q) | set(u):
        raise _value_checks.error(f"{fname}: t", "a time symbol that is not a coordinate or a speed",
                            f"{t}, which is also in {'q' if t in set(q) else 'u'}",
                            "time must have its own symbol")
    if set(q) & set(u):
        raise _value_checks.refusal(
            ValueError, f"{fname}: u: expected symbols distinct from q (a speed needs its own "
                        f"symbol), got q={list(q)}, u={list(u)}")
    for what, xs in (("q", q), ("u", u)):
        same = [s for s in xs if s.name == t.name]
        if same:
            raise _value_checks.error(f"{fname}: {what}", f"symbols not named like the time symbol "
                                f"{t}", f"{same[0]}", "a coordinate or speed named like time "
                                "would be confused with it")


def _symbols(x, name, fname):
    if isinstance(x, (list, tuple)) and not all(isinstance(e, sp.Basic) for e in x):
        raise _value_checks.refusal(
            TypeError, f"{fname}: {name}: expected plain sympy Symbols, got {list(x)!r}")
    col = _column(x, name, fname)
    if col.shape[1] != 1:
        raise _value_checks.refusal(
            ValueError, f"{fname}: {name}: expected a column of Symbols, got shape {col.shape}")
    bad = [e for e in col if not isinstance(e, sp.Symbol)]
    if bad:
        raise _value_checks.refusal(
            TypeError, f"{fname}: {name}: expected plain sympy Symbols (not functions of t), "
                       f"got {bad[0]!r}")
    if len(set(col)) != len(col):
        raise _value_checks.refusal(
            ValueError, f"{fname}: {name}: expected distinct Symbols, got {list(col)}")
    return col


class MassMatrixForm:
    r"""Symbolic equations :math:`\dot q = K u`, :math:`M\dot u = f + B\tau` (module docstring).

    Subclasses provide the attributes ``q``, ``u``, ``mass_matrix``, ``forcing`` and may
    override ``kinematics`` (default ``u``: speeds are :math:`\dot q`), ``input_matrix``
    (default the m x m identity) and ``t`` (default ``TIME``)."""

    t = TIME

    @property
    def kinematics(self):
        """:math:`\\dot q` as an n x 1 expression in q, u, t (default: ``u``)."""
        return self.u

    @property
    def input_matrix(self):
        """The input matrix B (m x k; by default the identity, one input per speed)."""
        return sp.eye(self.u.shape[0])

    def parameters(self):
        """The free symbols other than q, u, t and the intermediates of a nested form
        (lengths, masses...), sorted by name."""
        inter = getattr(self, "intermediates", ())
        exprs = (self.mass_matrix, self.forcing, self.kinematics, self.input_matrix) + tuple(
            e for _, e in inter)
        known = set(self.q) | set(self.u) | {self.t} | {w for w, _ in inter}
        return sorted(set().union(*(e.free_symbols for e in exprs)) - known, key=str)

    def __getstate__(self):
        """Pickled (and copied) with its cache of numeric twins emptied: each is made again on
        use."""
        state = dict(self.__dict__)
        if "_numeric_forms" in state:
            state["_numeric_forms"] = {}
        return state

    def numeric(self, values=None):
        """The :class:`NumericForm` with ``values`` (symbol or name -> number) substituted for
        every parameter; made once per ``values`` and cached. Raises ValueError naming the
        parameters left without a value."""
        return self._numeric(values, "numeric")

    def _numeric(self, values, fname):
        """:meth:`numeric` with the messages naming ``fname`` (the method the user called)."""
        cache = self.__dict__.setdefault("_numeric_forms", {})
        key = _values_key(values, fname)
        if key not in cache:
            cache[key] = _lambdified(self, values, fname)
        return cache[key]

    def rhs(self, values=None):
        """The numeric right-hand side ``f(t, x, tau=None)`` of :math:`x = (q, u)`."""
        return self._numeric(values, "rhs").rhs


class FieldsForm(MassMatrixForm):
    """A :class:`MassMatrixForm` whose parts are stored as fields ``M``, ``f``, ``qd`` (the
    kinematics, n x 1) and ``B``: the base of the forms that Kane's method and
    :func:`mass_matrix_form` make."""

    @property
    def mass_matrix(self):
        return self.M

    @property
    def forcing(self):
        return self.f

    @property
    def kinematics(self):
        return self.qd

    @property
    def input_matrix(self):
        return self.B


@dataclass(frozen=True, eq=False)
class _Form(FieldsForm):
    q: sp.Matrix
    u: sp.Matrix
    M: sp.Matrix
    f: sp.Matrix
    qd: sp.Matrix
    B: sp.Matrix
    t: sp.Symbol = TIME
    name: str = "system"
    intermediates: tuple = ()          # a nested form's (Symbol, definition) pairs, in order
    _numeric_forms: dict = field(default_factory=dict, repr=False, compare=False)


def mass_matrix_form(q, u, mass_matrix, forcing, kinematics=None, input_matrix=None, t=TIME,
                     name="system"):
    r"""A :class:`MassMatrixForm` from expressions: :math:`\dot q = K u`, :math:`M\dot u = f + B\tau`.

    Parameters
    ----------
    q, u : lists or columns of distinct Symbols (n coordinates, m speeds)
    mass_matrix : m x m expressions in q (and t)
    forcing : m expressions in q, u (and t)
    kinematics : n expressions :math:`\dot q(q, u, t)`; default ``u`` (needs m = n)
    input_matrix : m x k, default the m x m identity
    t : the time Symbol

    Examples
    --------
    A pendulum of length l, mass m, angle q from the downward vertical:

    >>> import sympy as sp
    >>> q, u, m, l = sp.symbols('q u m l')
    >>> pend = mass_matrix_form([q], [u], [[m * l**2]], [-m * 9.81 * l * sp.sin(q)])
    >>> f = pend.numeric({'m': 2.0, 'l': 0.5})
    >>> round(float(f.accelerations([np.pi / 2], [0.0])[0]), 6)
    -19.62
    >>> f.rhs(0.0, [0.0, 1.0])
    array([1., 0.])
    """
    fname = "mass_matrix_form"
    q = _symbols(q, "q", fname)
    u = _symbols(u, "u", fname)
    _check_time(q, u, t, fname)
    n, m = q.shape[0], u.shape[0]
    M = _value_checks.sym_matrix(mass_matrix, f"{fname}: mass_matrix")
    if M.shape != (m, m):
        raise _value_checks.refusal(
            ValueError, f"{fname}: mass_matrix: expected shape ({m}, {m}) (one row and column "
                        f"per speed), got {M.shape}")
    if not (M - M.T).is_zero_matrix:
        raise _value_checks.refusal(
            ValueError, f"{fname}: mass_matrix: expected a symmetric matrix, got {M}")
    _spd_where_possible(M, q, u, t, f"{fname}: mass_matrix")
    _meaning_checks.independent_of(M, list(u), f"{fname}: mass_matrix",
                           "M(q, t) does not depend on the speeds")
    f = _column(forcing, "forcing", fname)
    if f.shape != (m, 1):
        raise _value_checks.refusal(
            ValueError, f"{fname}: forcing: expected {m} expressions (one per speed), got "
                        f"shape {f.shape}")
    if kinematics is None:
        if m != n:
            raise _value_checks.refusal(
                ValueError, f"{fname}: kinematics: needed when there are {n} coordinates and "
                            f"{m} speeds (qd = K(q, t) u)")
        K = u
    else:
        K = _column(kinematics, "kinematics", fname)
        if K.shape != (n, 1):
            raise _value_checks.refusal(
                ValueError, f"{fname}: kinematics: expected {n} expressions (one qd per "
                            f"coordinate), got shape {K.shape}")
    B = sp.eye(m) if input_matrix is None else _value_checks.sym_matrix(
        input_matrix, f"{fname}: input_matrix")
    if B.shape[0] != m:
        raise _value_checks.refusal(
            ValueError, f"{fname}: input_matrix: expected {m} rows (one per speed), got "
                        f"shape {B.shape}")
    for what, e in (("forcing", f), ("kinematics", K), ("input_matrix", B)):
        for x in e:
            _value_checks._check_sym_number(x, f"{fname}: {what}")
    _meaning_checks.time_symbol(t, f"{fname}: t", exprs=[M, f, K, B])
    if not isinstance(name, str):
        raise _value_checks.error(f"{fname}: name", "a string (a label)", name, exc=TypeError)
    return _Form(q, u, M, f, K, B, t, name)


def _spd_where_possible(M, q, u, t, name):
    """M symmetric positive definite: exactly when it holds numbers only; with symbols, no
    diagonal entry may be a number <= 0 and M must be positive definite at a sample of the
    coordinates when those are its only symbols (parameters such as masses cannot be checked:
    they may take any value later)."""
    _meaning_checks.spd(M, name)
    free = M.free_symbols
    if free and free <= set(q) | {t}:            # refused when indefinite at both samples
        rng, errors = np.random.default_rng(7), []
        for _ in range(2):
            sub = {s: sp.Float(v) for s, v in zip(sorted(free, key=str),
                                                  rng.uniform(-1.0, 1.0, len(free)))}
            a = _meaning_checks._numbers(M, sub)
            try:
                if a is not None and np.all(np.isfinite(a)):
                    _meaning_checks.spd(a, name)
            except ValueError as exc:
                errors.append(exc)
        if len(errors) == 2:
            raise errors[0]


# --------------------------------------------------------------------------
# the numeric twin
# --------------------------------------------------------------------------

class NumericForm:
    r"""Numeric twin of a :class:`MassMatrixForm` (made by its ``numeric`` method).

    ``n``, ``m``, ``k``: numbers of coordinates, speeds and inputs. Functions take 1-D arrays
    and a float time (default 0) and return new float arrays:
    ``mass_matrix(q, t)`` (m, m), ``forcing(q, u, t)`` (m,), ``kinematics(q, u, t)`` (n,),
    ``input_matrix(q, t)`` (m, k), ``accelerations(q, u, t, tau)`` (m,) solving
    :math:`M\dot u = f + B\tau`, ``rhs(t, x, tau)`` (n + m,) for :math:`x = (q, u)`, and
    ``coordinate_accelerations(q, qd, t, tau)`` (n,), :math:`\ddot q` at a state given by
    :math:`\dot q` (which must be admissible: :math:`\dot q = K u` for some u).

    Batches: ``accelerations`` and ``rhs`` also take states of shape (B, n), (B, m), (B, n + m)
    (``tau`` (k,) for all or (B, k)) and return (B, m), (B, n + m), every row checked as one
    state is; a form whose ``vectorized`` is True (the ``lambdify`` forms of
    :meth:`MassMatrixForm.numeric`) evaluates its functions once for the whole batch (then
    ``mass_matrix`` (B, m, m), ``forcing`` (B, m), ``kinematics`` (B, n), ``input_matrix``
    (B, m, k) take batches too), others state by state.

    Subclasses may replace any of the functions by faster ones (compiled code); the
    defaults build on ``mass_matrix``, ``forcing``, ``kinematics``, ``input_matrix`` and
    ``kinematics_jacobian`` (:math:`\partial(Ku)/\partial(q, t)` at (q, u, t), shape (n, n + 1))."""

    vectorized = False

    def __init__(self, n, m, k, name="system"):
        self.n, self.m, self.k, self.name = n, m, k, name

    def __reduce_ex__(self, protocol):
        """A twin made by :meth:`MassMatrixForm.numeric` (or by another function of the
        library: ``_made_from = (function, arguments)``) pickles as what it was made of -- the
        symbolic form and the values -- and is made again from them on loading (its functions
        are generated code or closures); any other pickles as its fields."""
        made = self.__dict__.get("_made_from")
        if made is None:
            return super().__reduce_ex__(protocol)
        return made

    def __repr__(self):
        return f"{type(self).__name__}({self.name!r}, n={self.n}, m={self.m}, k={self.k})"

    # -- argument checks ----------------------------------------------------
    def _vec(self, x, size, what, fname):
        return _numeric_vector(x, size, f"{self.name}.{fname}: {what}")

    def _time(self, t, fname):
        return _value_checks.real_number(t, f"{self.name}.{fname}: t", hint="a time in s")

    def _tau(self, tau, fname):
        if tau is None:
            return np.zeros(self.k)
        return self._vec(tau, self.k, f"tau ({self.k} inputs)", fname)

    def _batch(self, fname, t, tau, **states):
        """Checked batch arguments: {name: (B, size) array} (single states made rows of B
        equal batches), the time, and tau as (B, k)."""
        out, rows = {}, None
        for name, (x, size, what) in states.items():
            single, a = _value_checks.batch(x, size, f"{self.name}.{fname}: {what}")
            if not single:
                if rows is not None and a.shape[0] != rows:
                    raise _value_checks.refusal(
                        ValueError, f"{self.name}.{fname}: {name}: expected a batch of {rows} "
                                    f"states like the others, got {a.shape[0]}")
                rows = a.shape[0]
            out[name] = (single, a)
        out = {k: np.repeat(a, rows, axis=0) if single else a for k, (single, a) in out.items()}
        t = self._time(t, fname)
        if tau is None:
            T = np.zeros((rows, self.k))
        else:
            single, T = _value_checks.batch(tau, self.k, f"{self.name}.{fname}: tau ({self.k} inputs)")
            if single:
                T = np.repeat(T, rows, axis=0)
            elif T.shape[0] != rows:
                raise _value_checks.refusal(
                    ValueError, f"{self.name}.{fname}: tau: expected ({self.k},) or a batch of "
                                f"{rows}, got {T.shape[0]} rows")
        return out, t, T

    def _batch_accelerations(self, q, u, t, tau):
        """accelerations of (B, n), (B, m) states (see the class docstring)."""
        fname = "accelerations"
        x, t, T = self._batch(fname, t, tau, q=(q, self.n, f"q ({self.n} coordinates)"),
                              u=(u, self.m, f"u ({self.m} speeds)"))
        Q, U = x["q"], x["u"]
        if not self.vectorized:
            return np.array([self.accelerations(a, b, t, c) for a, b, c in zip(Q, U, T)])
        rhs = self.forcing(Q, U, t) + np.einsum("bij,bj->bi", self.input_matrix(Q, t), T)
        M = self.mass_matrix(Q, t)
        try:
            c = np.linalg.cholesky(M)
        except np.linalg.LinAlgError as exc:
            bad = next(i for i, m in enumerate(M) if np.any(np.linalg.eigvalsh(m) <= 0))
            raise SingularMassMatrix(
                f"{self.name}.accelerations: the mass matrix at q = {Q[bad].tolist()} (state "
                f"{bad} of the batch) is not positive definite (eigenvalues "
                f"{np.linalg.eigvalsh((M[bad] + M[bad].T) / 2)})") from exc
        y = np.linalg.solve(c, rhs[..., None])
        return np.linalg.solve(np.swapaxes(c, -1, -2), y)[..., 0]

    # -- derived functions --------------------------------------------------
    def accelerations(self, q, u, t=0.0, tau=None):
        """:math:`\\dot u = M^{-1}(f + B\\tau)`, shape (m,); states of shape (B, n), (B, m)
        give (B, m)."""
        fname = "accelerations"
        if _is_batch(q, self.n) or _is_batch(u, self.m):
            return _value_checks.finite_result(self._batch_accelerations(q, u, t, tau),
                                         f"{self.name}.{fname}")
        q = self._vec(q, self.n, f"q ({self.n} coordinates)", fname)
        u = self._vec(u, self.m, f"u ({self.m} speeds)", fname)
        t = self._time(t, fname)
        return self._accelerations(q, u, t, self._tau(tau, fname), fname)

    def _accelerations(self, q, u, t, tau, fname):
        """:meth:`accelerations` of checked arguments (float arrays, a float time); a subclass's
        own ``accelerations`` (given checked arguments, so its checks pass) when it has one."""
        if type(self).accelerations is not NumericForm.accelerations:
            with np.errstate(all="ignore"):
                out = self.accelerations(q, u, t, tau)
            return _value_checks.finite_result(out, f"{self.name}.{fname}")
        with np.errstate(all="ignore"):
            rhs = self.forcing(q, u, t) + self.input_matrix(q, t) @ tau
        _value_checks.finite_result(rhs, f"{self.name}.{fname}")
        M = self.mass_matrix(q, t)
        try:
            c = np.linalg.cholesky(M)
        except np.linalg.LinAlgError as exc:
            raise SingularMassMatrix(
                f"{self.name}.{fname}: the mass matrix at q = {q.tolist()} is not "
                f"positive definite (eigenvalues {np.linalg.eigvalsh((M + M.T) / 2)})") from exc
        with np.errstate(all="ignore"):
            out = np.linalg.solve(c.T, np.linalg.solve(c, rhs))
        return _value_checks.finite_result(out, f"{self.name}.{fname}")

    def rhs(self, t, x, tau=None):
        """:math:`\\dot x = (K u, \\dot u)` for the state :math:`x = (q, u)`, shape (n + m,);
        a batch of states (B, n + m) gives (B, n + m)."""
        fname = "rhs"
        if _is_batch(x, self.n + self.m):
            X, t, T = self._batch(fname, t, tau, x=(x, self.n + self.m,
                                                    f"x (q then u, {self.n + self.m} numbers)"))
            Q, U = X["x"][:, :self.n], X["x"][:, self.n:]
            K = self.kinematics(Q, U, t) if self.vectorized else \
                np.array([self.kinematics(a, b, t) for a, b in zip(Q, U)])
            out = np.concatenate([K, self.accelerations(Q, U, t, T)], axis=1)
            return _value_checks.finite_result(out, f"{self.name}.{fname}")
        t = self._time(t, fname)
        x = self._vec(x, self.n + self.m, f"x (q then u, {self.n + self.m} numbers)", fname)
        tau = self._tau(tau, fname)
        q, u = x[:self.n], x[self.n:]
        out = np.concatenate([self.kinematics(q, u, t), self._accelerations(q, u, t, tau, fname)])
        return _value_checks.finite_result(out, f"{self.name}.{fname}")

    def speeds(self, q, qd, t=0.0):
        """The speeds u with :math:`K(q, t)u = \\dot q` (least squares; ValueError when
        :math:`\\dot q` is not admissible)."""
        fname = "speeds"
        q = self._vec(q, self.n, f"q ({self.n} coordinates)", fname)
        qd = self._vec(qd, self.n, f"qd ({self.n} coordinate rates)", fname)
        t = self._time(t, fname)
        return self._speeds(q, qd, t, fname)

    def _speeds(self, q, qd, t, fname):
        """:meth:`speeds` of checked arguments."""
        u0 = np.zeros(self.m)
        K0 = self.kinematics(q, u0, t)
        K = np.column_stack([self.kinematics(q, e, t) - K0 for e in np.eye(self.m)])
        u, *_ = np.linalg.lstsq(K, qd - K0, rcond=None)
        res = np.linalg.norm(K @ u + K0 - qd)
        if res > 1e-9 * max(1.0, np.linalg.norm(qd)):
            raise _value_checks.refusal(
                ValueError, f"{self.name}.{fname}: qd: expected a velocity the constraints "
                            f"admit (qd = K(q) u), got one {res:.3g} away from it")
        return _value_checks.finite_result(u, f"{self.name}.{fname}")

    def coordinate_accelerations(self, q, qd, t=0.0, tau=None):
        r""":math:`\ddot q = K\dot u + \partial(Ku)/\partial q\,\dot q + \partial(Ku)/\partial t`."""
        fname = "coordinate_accelerations"
        q = self._vec(q, self.n, f"q ({self.n} coordinates)", fname)
        qd = self._vec(qd, self.n, f"qd ({self.n} coordinate rates)", fname)
        t = self._time(t, fname)
        tau = self._tau(tau, fname)
        u = self._speeds(q, qd, t, fname)
        ud = self._accelerations(q, u, t, tau, fname)
        with np.errstate(all="ignore"):
            qd = self.kinematics(q, u, t)
            K0 = self.kinematics(q, np.zeros(self.m), t)
            K = np.column_stack([self.kinematics(q, e, t) - K0 for e in np.eye(self.m)])
            Jx = self.kinematics_jacobian(q, u, t)
            out = K @ ud + Jx[:, :self.n] @ qd + Jx[:, self.n]
        return _value_checks.finite_result(out, f"{self.name}.{fname}")


def _numeric_vector(x, size, name):
    """A float vector of length ``size`` for numeric code: sympy *numbers* are fine, sympy
    expressions with symbols are refused (TypeError), as are NaN and infinity."""
    if _value_checks.is_symbolic(x):
        x = _value_checks.real_array(x, name, allow_nonfinite=True)
    return _value_checks.vector(x, size, name)


def _is_batch(x, size):
    """Whether x has the shape (B, size) of a batch of states (a column (size, 1) is a single
    state, as :func:`robodyn._value_checks.vector` reads it)."""
    shape = np.shape(x)
    return len(shape) == 2 and shape[1] == size and not (shape == (size, 1) and size > 1)


def _values_key(values, fname="numeric"):
    """The cache key of a checked ``values`` dict: sorted (name, float) pairs. Every message
    names ``fname: values`` (``fname`` is the function the user called)."""
    if values is None:
        return ()
    checked = _check_values(values, fname)
    return tuple(sorted((str(k), float(v)) for k, v in checked.items()))


def _check_values(values, fname):
    """``values`` as {Symbol or name: float}, refused (naming ``fname: values``) unless a dict
    of Symbol or name keys and finite real number values (sympy numbers, Fraction included)."""
    if values is None:
        return {}
    if not isinstance(values, dict):
        raise _value_checks.error(f"{fname}: values", "a dict {symbol or name: number}", values,
                            exc=TypeError)
    out = {}
    for k, v in values.items():
        if not isinstance(k, (str, sp.Symbol, sp.core.function.AppliedUndef)):
            raise _value_checks.error(f"{fname}: values", "keys that are sympy Symbols or names", k,
                                exc=TypeError)
        if isinstance(k, str) and not k.isidentifier():
            raise _value_checks.error(f"{fname}: values", "keys that are sympy Symbols or names",
                                f"the text {k[:40]!r}", exc=TypeError)
        _value_checks.no_text(v, f"{fname}: values[{k!s}]")
        out[k] = _value_checks.real_number(v, f"{fname}: values[{k!s}]")
    return out


def _substitute(form, values, fname):
    """[M, f, K, B] and the intermediates (a nested form's ``(Symbol, definition)`` pairs, in
    order; empty otherwise) with ``values`` substituted; ValueError for symbols left free."""
    exprs = [form.mass_matrix, form.forcing, form.kinematics, form.input_matrix]
    inter = list(getattr(form, "intermediates", ()))
    if values:
        names = {str(s): s for e in exprs + [e for _, e in inter] for s in e.free_symbols}
        sub = {}
        for k, v in _check_values(values, fname).items():
            key = names.get(k, sp.Symbol(k)) if isinstance(k, str) else k
            sub[key] = _value_checks.assumed_value(key, _value_checks._exact(v),
                                                   f"{fname}: values[{k!s}]")
        exprs = [e.xreplace(sub) for e in exprs]
        inter = [(w, e.xreplace(sub)) for w, e in inter]
        _finite_constants(exprs + [e for _, e in inter], f"{fname}: values")
    known = set(form.q) | set(form.u) | {form.t} | {w for w, _ in inter}
    free = set().union(*(e.free_symbols for e in exprs + [e for _, e in inter])) - known
    if free:
        raise _value_checks.refusal(
            ValueError, f"{fname}: values: expected a number for each parameter, got "
                        f"none: symbols {sorted(map(str, free))} have no value (give "
                        f"values={{symbol: number, ...}} for each of them)")
    return exprs, inter


def _finite_constants(exprs, name):
    """Refuse, naming ``name`` (the values argument), substituted equations that hold a
    constant beyond float64 (values so large that e.g. m * l**2 overflows): compiled or
    lambdified code would compute inf or NaN from them."""
    for e in exprs:
        for a in e.atoms(sp.Number):
            if a.is_finite is False or (a.is_real and not np.isfinite(float(a))):
                raise _value_checks.error(name, "values small enough for float64 arithmetic",
                                    f"equations holding the constant {str(a)[:30]} (an "
                                    f"overflow)", "scale the units")


@contextlib.contextmanager
def _result_errors(fname):
    """Inside it (numeric work after every argument was checked), an error of the evaluation
    (an overflow or a domain error of the equations, a singular matrix) becomes a ValueError
    ``fname: result: ...`` naming the function the user called."""
    try:
        yield
    except (ValueError, OverflowError, ZeroDivisionError) as exc:
        if str(exc).startswith(f"{fname}: "):
            raise
        raise _value_checks.refusal(
            ValueError, f"{fname}: result: expected finite numbers for finite input, got an "
                        f"error of the numeric evaluation ({type(exc).__name__}: "
                        f"{str(exc)[:300]})") from exc


class _FlatPrinter(PythonCodePrinter):
    """Python code with long sums printed flat, ``sum((a, b, ...))``: printed as
    ``a + b + ...`` a sum of thousands of terms nests as deep as it is long, and Python's
    compiler gives up (RecursionError)."""

    _LONG = 64

    def _print_Add(self, expr, order=None):
        if len(expr.args) <= self._LONG:
            return super()._print_Add(expr, order)
        return "sum((" + ", ".join(self._print(a) for a in expr.args) + "))"


def _lambdified(form, values, fname):
    """A :class:`NumericForm` by ``lambdify(cse=True)`` of the substituted expressions (long
    sums printed flat, :class:`_FlatPrinter`)."""
    (M, f, K, B), inter = _substitute(form, values, fname)
    q, u, t = list(form.q), list(form.u), form.t
    n, m, k = len(q), len(u), B.shape[1]
    names = {w for w, _ in inter}
    if K.free_symbols & names or B.free_symbols & names:   # written in: K's Jacobian needs it
        done = {}
        for w, e in inter:
            done[w] = e.xreplace(done)
        K, B = K.xreplace(done), B.xreplace(done)
    JK = K.jacobian(sp.Matrix(q + [t]))

    def make(args, expr, shape):
        cse = True
        need = set().union(*(e.free_symbols for e in expr)) & names
        if need:                            # the intermediates are the common subexpressions
            used = []
            for w, e in reversed(inter):    # those this function needs, in order
                if w in need:
                    used.append((w, e))
                    need |= e.free_symbols & names

            def cse(exprs):
                return used[::-1], exprs
        def lam(module):
            return sp.lambdify(args, list(expr), modules=module, cse=cse, printer=_FlatPrinter(
                {"fully_qualified_modules": False, "inline": True,
                 "allow_unknown_functions": True, "user_functions": {}}))
        fn, batch = lam("math"), []
        what = getattr(form, "name", type(form).__name__)

        def domain_error(exc, at):
            return _value_checks.error(f"{what}: the equations at {at}", "finite values",
                                 f"{type(exc).__name__}: {exc}", "a state outside the "
                                 "model's domain (log or sqrt of a negative number, a "
                                 "division by zero)")

        def call(*vectors, t):
            if np.ndim(vectors[0]) != 2:
                a = [x for v in vectors for x in v] + [t]
                try:
                    return np.array(fn(*a), dtype=float).reshape(shape)
                except (ValueError, ZeroDivisionError, OverflowError) as exc:
                    raise domain_error(exc, list(a)) from exc
            if not batch:                   # numpy code, made for the first batch
                batch.append(lam("numpy"))
            with np.errstate(all="ignore"):
                cols = batch[0](*[c for v in vectors for c in np.asarray(v, dtype=float).T], t)
            rows = len(vectors[0])
            out = np.empty((rows, len(cols)))
            for j, c in enumerate(cols):    # constants come back as scalars: broadcast
                out[:, j] = c
            if not np.all(np.isfinite(out)):
                bad = int(np.argmin(np.all(np.isfinite(out), axis=1)))
                raise domain_error(ValueError("a non-finite value"), f"batch row {bad}")
            return out.reshape((rows,) + shape)
        call.flat = fn                      # the plain function of flat floats (hot paths)
        return call

    fM = make(q + [t], M, (m, m))
    ff = make(q + u + [t], f, (m,))
    fK = make(q + u + [t], K, (n,))
    fB = make(q + [t], B, (m, k))
    fJ = make(q + u + [t], JK, (n, n + 1))
    out = NumericForm(n, m, k, getattr(form, "name", type(form).__name__))
    out.vectorized = True                   # every function below also takes (B, .) states
    out.mass_matrix = lambda q, t=0.0: fM(q, t=t)
    out.forcing = lambda q, u, t=0.0: ff(q, u, t=t)
    out.kinematics = lambda q, u, t=0.0: fK(q, u, t=t)
    out.input_matrix = lambda q, t=0.0: fB(q, t=t)
    out.kinematics_jacobian = lambda q, u, t=0.0: fJ(q, u, t=t)
    out.flat = (fM.flat, ff.flat)           # M(q..., t) and f(q..., u..., t) as float lists
    out._made_from = (_lambdified, (form, values, fname))   # what pickling keeps
    return out


# --------------------------------------------------------------------------
# comparing methods
# --------------------------------------------------------------------------

def max_difference(a, b, states=None, values=None, n_states=8, seed=0, tau=True):
    r"""The largest :math:`|\ddot q_a - \ddot q_b|` of two forms at sample states.

    Parameters
    ----------
    a, b : :class:`MassMatrixForm` or :class:`NumericForm` (same coordinates, same inputs)
    states : iterable of ``(q, qd)`` or ``(q, qd, t)``, optional -- admissible states;
        default ``n_states`` random states with q, qd uniform in [-1, 1] (needs m = n)
    values : dict for the symbolic forms' parameters
    tau : True for random inputs of size k at each state (both forms must have the same k),
        False for none

    Returns
    -------
    float

    Examples
    --------
    >>> import sympy as sp
    >>> q, u, v = sp.symbols('q u v')
    >>> a = mass_matrix_form([q], [u], [[2]], [-sp.sin(q)])
    >>> b = mass_matrix_form([q], [v], [[4]], [-2 * sp.sin(q)], kinematics=[v], input_matrix=[[2]])
    >>> max_difference(a, b) < 1e-15
    True
    """
    fname = "max_difference"
    n_states = _value_checks.size(n_states, f"{fname}: n_states", high=10**5,
                            hint="the number of random sample states")
    if values is not None and not isinstance(values, dict):
        raise _value_checks.error(f"{fname}: values", "a dict {symbol or name: number}", values,
                            exc=TypeError)
    forms = [f for f in (a, b) if isinstance(f, MassMatrixForm)]
    if values and len(forms) == 2:
        known = {str(s) for f in forms for s in f.parameters()}
        unknown = [k for k in values if str(k) not in known]
        if unknown:
            raise _value_checks.error(f"{fname}: values", "values of parameters of a or b "
                                f"({sorted(known)})", f"{str(unknown[0])[:60]!r}, which is "
                                "neither's parameter", "a misspelt name?")
    seed = _value_checks.size(seed, f"{fname}: seed", low=0, high=2**63 - 1)
    _value_checks.flag(tau, f"{fname}: tau")
    na, nb = (x.numeric(values) if isinstance(x, MassMatrixForm) else x for x in (a, b))
    for name, x in (("a", na), ("b", nb)):
        if not isinstance(x, NumericForm):
            raise _value_checks.refusal(
                TypeError, f"{fname}: {name}: expected a MassMatrixForm or NumericForm, got "
                           f"{_value_checks._describe(x)}")
    if na.n != nb.n:
        raise _value_checks.refusal(
            ValueError, f"{fname}: a has {na.n} coordinates and b has {nb.n}: expected the same")
    if tau and na.k != nb.k:
        raise _value_checks.refusal(
            ValueError, f"{fname}: a has {na.k} inputs and b has {nb.k}: pass tau=False to "
                        f"compare without inputs")
    rng = np.random.default_rng(seed)
    if states is None:
        if na.m != na.n:
            raise _value_checks.refusal(
                ValueError, f"{fname}: states: needed for a constrained system ({na.n} "
                            f"coordinates, {na.m} speeds)")
        states = [(rng.uniform(-1, 1, na.n), rng.uniform(-1, 1, na.n))
                  for _ in range(int(n_states))]
    if isinstance(states, (str, bytes, dict)) or not hasattr(states, "__iter__"):
        raise _value_checks.error(f"{fname}: states", "an iterable of (q, qd) or (q, qd, t)", states,
                            exc=TypeError)
    worst, count = 0.0, 0
    for i, s in enumerate(states):
        if i >= 10**5:
            raise _value_checks.error(f"{fname}: states", "at most 100000 states", "more")
        if not isinstance(s, (list, tuple)) or len(s) not in (2, 3):
            raise _value_checks.error(f"{fname}: states[{i}]", "a tuple (q, qd) or (q, qd, t)", s,
                                exc=TypeError)
        q, qd, t = (tuple(s) + (0.0,))[:3]
        t = _value_checks.scalar(t, f"{fname}: states[{i}] (t)")
        if _value_checks.is_symbolic(t):
            raise _value_checks.error(f"{fname}: states[{i}] (t)", "a number (s)", t, exc=TypeError)
        u = rng.uniform(-1, 1, na.k) if tau else None
        ra, rb = (_finite_accelerations(x, q, qd, t, u, f"{fname}: {name}")
                  for name, x in (("a", na), ("b", nb)))
        d = ra - rb
        worst = max(worst, float(np.max(np.abs(d))) if d.size else 0.0)
        count += 1
    if count == 0:
        raise _value_checks.error(f"{fname}: states", "at least one state", "none",
                            "a comparison over zero states proves nothing")
    if na.n == 0:
        raise _value_checks.error(f"{fname}: a", "a form with at least one coordinate", "none")
    return worst


def _finite_accelerations(form, q, qd, t, tau, name):
    """``form.coordinate_accelerations(q, qd, t, tau)``; its NaN or infinity (refused by it as
    a ``result`` error) refused naming ``name``, the form the user passed."""
    try:
        r = form.coordinate_accelerations(q, qd, t, tau)
    except ValueError as exc:
        if ": result: " not in str(exc):
            raise
        r = np.array([np.nan])
    if not np.all(np.isfinite(r)):
        raise _value_checks.error(name, "finite accelerations",
                            f"NaN or infinity at q = {np.asarray(q).tolist()}",
                            "a NaN never compares as equal")
    return r

from ._boundary import seal as _seal  # noqa: E402 -- the one boundary (issue 28): last, over the finished module
_seal(globals())
