r"""Integrability of Pfaffian forms (Part III, ch. 1): is a constraint :math:`a(x)\cdot dx = 0`
holonomic? The Frobenius test (UK eq. (11) for three coordinates, and its general form), with the
potential of an integrable form.

(This lived in :mod:`robodyn.constraints`, where ``is_holonomic`` and ``Integrability`` still
work.)"""
from __future__ import annotations

import itertools
from dataclasses import dataclass

import sympy as sp

from .. import _value_checks
from .. import _meaning_checks
from ._systems import _symbol_column

__all__ = ["Integrability", "is_holonomic"]


@dataclass(frozen=True)
class Integrability:
    r"""The verdict of :func:`is_holonomic`.

    Attributes
    ----------
    holonomic : bool -- integrable (review Lemma 1, eq. (11); Frobenius in general)
    rheonomic : bool -- the constraint depends explicitly on time
    condition : tuple of sympy expressions, all zero exactly when the form is integrable
    integral : sympy expression or None -- :math:`\varphi` with :math:`d\varphi` proportional to
        the form (the constraint is :math:`\varphi = L`, a constant), when one was found
    """
    holonomic: bool
    rheonomic: bool
    condition: tuple
    integral: object = None

    @property
    def kind(self):
        """'holonomic, scleronomic', 'nonholonomic, rheonomic', ..."""
        return (("holonomic" if self.holonomic else "nonholonomic") + ", "
                + ("rheonomic" if self.rheonomic else "scleronomic"))


def _potential(a, xs):
    """phi with grad phi = a (a exact), or None."""
    for i in range(len(xs)):
        for j in range(i + 1, len(xs)):
            if sp.simplify(a[i].diff(xs[j]) - a[j].diff(xs[i])) != 0:
                return None
    phi = sp.Integer(0)
    for k, x in enumerate(xs):
        rest = sp.simplify(a[k] - phi.diff(x))
        phi += sp.integrate(rest, x)
    return sp.simplify(phi)


def is_holonomic(form, coords, t=None):
    r"""Integrability of a Pfaffian constraint :math:`\sum_i a_i(q, t)\,dq_i + a_t\,dt = 0`.

    One form in three coordinates x, y, z: holonomic iff (review eq. (11))
    :math:`\alpha(\beta_z - \gamma_y) + \beta(\gamma_x - \alpha_z) + \gamma(\alpha_y - \beta_x)
    = 0`; one form in any number of variables: the same expression for every triple
    (:math:`\omega\wedge d\omega = 0`, Frobenius). Several forms (a list of rows): Frobenius as
    involutivity, every Lie bracket of two vector fields of :math:`D = \ker A` lies in D. With
    ``t`` given, time counts as one more variable (the last coefficient multiplies dt).

    Parameters
    ----------
    form : list of coefficients (n, or n + 1 with ``t``), or a list of such rows
    coords : list of n sympy Symbols
    t : time Symbol, optional

    Returns
    -------
    Integrability

    Raises
    ------
    ValueError for a form with the wrong number of coefficients or the zero form (it constrains
    nothing); TypeError for non-symbols.

    Examples
    --------
    >>> import sympy as sp
    >>> x, y, z, t = sp.symbols('x y z t')
    >>> is_holonomic([1, 2 * y, 1], [x, y, z]).integral
    x + y**2 + z
    >>> is_holonomic([1, 2 * y, 1, -1], [x, y, z], t=t).kind
    'holonomic, rheonomic'
    >>> is_holonomic([1, 2 * z, 1], [x, y, z]).kind
    'nonholonomic, scleronomic'
    """
    fname = "is_holonomic"
    xs = list(_symbol_column(coords, "coords", fname))
    n_coords = len(xs)
    if t is not None:
        if not isinstance(t, sp.Symbol) or t in xs:
            raise _value_checks.refusal(
                TypeError, f"{fname}: t: expected a time Symbol distinct from the coordinates, "
                           f"got {t!r}")
        xs = xs + [t]
    n = len(xs)
    what = (f"{n} coefficients (one per coordinate {xs[:n_coords]}"
            + (", then dt)" if t is not None else ")"))
    if not isinstance(form, (list, tuple, sp.MatrixBase)):
        raise _value_checks.refusal(
            TypeError, f"{fname}: form: expected a list of {what}, got {_value_checks._describe(form)}")
    _value_checks.no_text(form, f"{fname}: form")
    if t is not None:
        _meaning_checks.time_symbol(t, f"{fname}: t", exprs=[e for e in sp.flatten(form)
                                                      if isinstance(e, sp.Basic)])
    rows = form.tolist() if isinstance(form, sp.MatrixBase) else list(form)
    several = bool(rows) and all(isinstance(r, (list, tuple)) for r in rows)
    rows = [list(r) for r in rows] if several else [rows]
    for r in rows:
        if len(r) != n:
            raise _value_checks.refusal(
                ValueError, f"{fname}: form, coords: expected {what}, got {len(r)}")
    A = sp.Matrix([[_value_checks._exact(e) for e in r] for r in rows])
    for i in range(A.rows):                 # the zero form constrains nothing
        _meaning_checks.nonzero_vector(A.row(i).T, n, f"{fname}: form" + (
            f" (row {i})" if A.rows > 1 else ""), what="Pfaffian form")
    depends_t = t is not None and (A.has(t) or any(A[i, n - 1] != 0 for i in range(A.rows)))
    if A.rows == 1:
        a = list(A)
        cond = tuple(sp.simplify(a[i] * (a[j].diff(xs[k]) - a[k].diff(xs[j]))
                                 + a[j] * (a[k].diff(xs[i]) - a[i].diff(xs[k]))
                                 + a[k] * (a[i].diff(xs[j]) - a[j].diff(xs[i])))
                     for i, j, k in itertools.combinations(range(n), 3))
    else:
        S = A.nullspace(simplify=True)
        cond = []
        X = sp.Matrix(xs)
        for Si, Sj in itertools.combinations(S, 2):
            bracket = Sj.jacobian(X) * Si - Si.jacobian(X) * Sj
            cond.extend(sp.simplify(e) for e in A * bracket)
        cond = tuple(cond)
    holonomic = all(c == 0 for c in cond)
    integral = None
    if holonomic and A.rows == 1:
        a = list(A)
        integral = _potential(a, xs)
        # integrating factors tried: a common denominator, then 1/a_i for each coefficient
        den = sp.lcm([sp.fraction(sp.together(e))[1] for e in a])
        for mu in [den] + [1 / ai for ai in a if ai != 0]:
            if integral is not None:
                break
            integral = _potential([sp.simplify(e * mu) for e in a], xs)
    rheonomic = depends_t if integral is None else (t is not None and integral.has(t))
    return Integrability(bool(holonomic), bool(rheonomic), cond, integral)

from .._boundary import seal as _seal  # noqa: E402 -- the one boundary (issue 28): last, over the finished module
_seal(globals())
