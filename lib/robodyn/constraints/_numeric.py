"""The numeric twin of a set of constraints (a room of :mod:`robodyn.constraints`): values,
Jacobians and rates of :class:`robodyn.constraints.Constraints` at a numeric state, the
projection onto the constraint manifold, and the pseudo-inverse the numeric solvers share."""
from __future__ import annotations

import numpy as np
import sympy as sp

from .. import _value_checks
from .. import _meaning_checks
from ..equations import _check_values, _finite_constants


def _pinv(W, rcond=None):
    if W.size == 0:
        return np.zeros(W.T.shape)
    scale = float(np.abs(W).max())
    if scale == 0.0:
        return np.zeros(W.T.shape)
    if not 1e-150 < scale < 1e150:                 # the SVD would over- or underflow
        return _pinv(W / scale, rcond) / scale
    U, s, Vt = np.linalg.svd(W, full_matrices=False)
    rcond = max(W.shape) * np.finfo(float).eps if rcond is None else rcond
    keep = s > rcond * s[0]
    return (Vt[keep].T / s[keep]) @ U[:, keep].T


class NumericConstraints:
    r"""Numeric twins of a :class:`Constraints` value (made by its ``numeric`` method).

    ``phi(q, t)`` (h,), ``A(q, t)`` (m, n), ``c(q, t)`` (m,), ``b(q, qd, t)`` (m,),
    ``residuals(q, qd, t)`` -> (phi, A qd - c), and :meth:`project` onto the constraints."""

    def __init__(self, constraints, qd, b, values=None, fname="Constraints.numeric"):
        """``qd``: the velocity symbols and ``b`` the right-hand side of the second-order form
        (made by :meth:`Constraints.numeric`, which calls this)."""
        self.n, self.m, self.h = constraints.n, constraints.m, constraints.holonomic.shape[0]
        A, c = constraints.velocity_form()
        exprs = [constraints.holonomic, A, c, b]
        sub = {}
        names = {str(s): s for e in exprs for s in e.free_symbols}
        for k, v in _check_values(values, fname).items():
            key = names.get(k, sp.Symbol(k)) if isinstance(k, str) else k
            sub[key] = _value_checks.assumed_value(key, _value_checks._exact(v),
                                                   f"{fname}: values[{k!s}]")
        exprs = [e.xreplace(sub) for e in exprs]
        _finite_constants(exprs, f"{fname}: values")
        known = set(constraints.q) | set(qd) | {constraints.t}
        free = set().union(*(e.free_symbols for e in exprs)) - known
        if free:
            raise _value_checks.refusal(
                ValueError, f"{fname}: values: expected a number for each parameter, got "
                            f"none: symbols {sorted(map(str, free))} have no value (give "
                            f"values={{symbol: number, ...}} for each of them)")
        q, t = list(constraints.q), constraints.t

        def make(args, expr):
            f = sp.lambdify(args, list(expr), modules="math", cse=True)
            shape = expr.shape if expr.shape[1] > 1 else (expr.shape[0],)
            return lambda *a: np.array(f(*a), dtype=float).reshape(shape)

        self._phi = make(q + [t], exprs[0])
        self._A = make(q + [t], exprs[1])
        self._c = make(q + [t], exprs[2])
        self._b = make(q + list(qd) + [t], exprs[3])
        # the simulator's inner loop: phi, A, c, b in one call, sharing subexpressions (CSE);
        # generated on first use (by _A_b)
        self._all = None
        self._all_source = (q + list(qd) + [t], [e for expr in exprs for e in expr])
        h, m, n = self.h, self.m, self.n
        self._cuts = (h, h + m * n, h + m * n + m)

    def _args(self, fname, q, t, *qd):
        name = f"NumericConstraints.{fname}"
        q = _value_checks.vector(q, self.n, f"{name}: q ({self.n} coordinates)")
        t = _value_checks.scalar(t, f"{name}: t")
        if _value_checks.is_symbolic(t):
            raise _value_checks.error(f"{name}: t", "a number (s)", t, exc=TypeError)
        t = float(t)
        if not qd:
            return q, t
        qd = qd[0]
        return q, t, _value_checks.vector(qd, self.n, f"{name}: qd ({self.n} velocities)")

    def phi(self, q, t=0.0):
        q, t = self._args("phi", q, t)
        return self._phi(*q, t)

    def A(self, q, t=0.0):
        q, t = self._args("A", q, t)
        return self._A(*q, t)

    def c(self, q, t=0.0):
        q, t = self._args("c", q, t)
        return self._c(*q, t)

    def b(self, q, qd, t=0.0):
        q, t, qd = self._args("b", q, t, qd)
        return self._b(*q, *qd, t)

    def _A_b(self, q, qd, t, baumgarte=None):
        """(A, b) at one state in one call of the generated code, b with the Baumgarte terms
        :math:`-2\\alpha(A\\dot q - c) - \\beta^2\\varphi` when ``baumgarte = (alpha, beta)``;
        q and qd float ndarrays (unchecked: the simulator's inner loop)."""
        if self._all is None:
            args, flat = self._all_source
            self._all = sp.lambdify(args, flat, modules="math", cse=True)
        v = np.array(self._all(*q.tolist(), *qd.tolist(), float(t)), dtype=float)
        i, j, k = self._cuts
        A = v[i:j].reshape(self.m, self.n)
        b = v[k:]
        if baumgarte is not None:
            alpha, beta = baumgarte
            b = b - 2.0 * alpha * (A @ qd - v[j:k])
            b[:i] -= beta * beta * v[:i]
        return A, b

    def residuals(self, q, qd, t=0.0):
        """(phi(q, t), A(q, t) qd - c(q, t)): position and velocity residuals."""
        q, t, qd = self._args("residuals", q, t, qd)
        return self.phi(q, t), self.A(q, t) @ qd - self.c(q, t)

    def project(self, q, qd, t=0.0, M=None, tol=1e-12, max_iter=50):
        r"""The admissible state nearest (q, qd): Gauss--Newton on :math:`\varphi(q, t) = 0`
        (minimum-norm steps), then :math:`\dot q` projected onto :math:`A\dot q = c`
        (M-orthogonally when M is given: the kinetic-energy-nearest velocity).

        Raises ValueError when the position iteration does not converge in ``max_iter`` steps."""
        fname = "NumericConstraints.project"
        q, t, qd = self._args("project", q, t, qd)
        tol = _value_checks.tolerance(tol, f"{fname}: tol")
        max_iter = _value_checks.size(max_iter, f"{fname}: max_iter", low=1, high=10**5)
        if M is not None:
            M = _meaning_checks.spd(_value_checks.matrix(M, (self.n, self.n), f"{fname}: M"), f"{fname}: M")
        return self._project(q, qd, t, M, tol, max_iter, fname)

    def _project(self, q, qd, t, M, tol, max_iter, fname, names=("q", "qd")):
        """:meth:`project` of checked arguments; messages name ``fname: names[0]`` (position
        failures) or ``fname: names[1]`` (velocity overflow)."""
        q, qd = np.array(q, dtype=float), np.array(qd, dtype=float)
        r = np.zeros(0)
        h = self.h
        bad = (f"{fname}: {names[0]}: expected a state near the constraint manifold, got one "
               f"where the position iteration")
        with np.errstate(all="ignore"):
            if h:
                for _ in range(int(max_iter)):
                    r = self.phi(q, t)
                    if not np.isfinite(r).all():
                        raise _value_checks.refusal(
                            ValueError, f"{bad} overflows (|phi| not finite); scale the "
                                        f"input down")
                    if np.linalg.norm(r) <= tol:
                        break
                    Ah = self.A(q, t)[:h]
                    if not np.isfinite(Ah).all():
                        raise _value_checks.refusal(
                            ValueError, f"{bad} overflows (A not finite); scale the input down")
                    q = q - np.linalg.lstsq(Ah, r, rcond=None)[0]
                else:
                    raise _value_checks.refusal(
                        ValueError, f"{bad} did not reach |phi| <= {tol:g} in {max_iter} steps "
                                    f"(|phi| = {np.linalg.norm(r):.3g}): start nearer the "
                                    f"constraint manifold")
            A = self.A(q, t)
            r = A @ qd - self.c(q, t)
            W = np.eye(self.n) if M is None else np.linalg.inv(M)
            qd = qd - W @ A.T @ _pinv(A @ W @ A.T) @ r if np.isfinite(r).all() else r
        if not (np.isfinite(q).all() and np.isfinite(qd).all()):
            raise _value_checks.refusal(
                ValueError, f"{fname}: {names[1]}: expected values small enough for float64 "
                            f"arithmetic, got an overflow in the velocity projection (NaN or "
                            f"infinity); scale the input down")
        return q, qd
