"""What an argument *is*: the library's own kinds, declared in the signatures (issue 37).

A public function says what each argument means by annotating it with a kind of this module::

    def log_so3(R: Rotation, tol: Tolerance = 1e-9): ...

and the one mechanism of :mod:`robodyn._boundary` checks every annotated argument at the call,
before any work, for sympy and numeric values alike: ``Kind.check(value, "log_so3: R")``.
A kind checks the *meaning* (a rotation is proper orthogonal, an inertia positive
semidefinite), not only the type, and refuses with the house message
``function: argument: expected ..., got ...`` through :func:`robodyn._value_checks.error`.

A symbolic value is decided by :func:`robodyn._meaning_checks.decide`: tested at values of its
symbols drawn under their assumptions (``Symbol('m', positive=True)`` is sampled positive), refused when
simplification proves it wrong (a determinant that simplifies to -1, a principal minor negative
for every value), or, for a property that must hold at every value of the symbols (R(q) is a
rotation at every q; an inertia, a metric), when it fails at every sampled value; otherwise
passed with an :class:`UndecidedWarning` naming the argument and a failing value (an axis
(x, x, 0) may be meant at x = 1/sqrt(2)).

Contract (shared by the kinds and the boundary):

* a kind is a subclass of :class:`Kind`; its class method ``check(value, name)`` returns
  nothing useful (the boundary ignores the return value) and raises on a wrong value;
* ``expected`` is the short phrase of the house message ("a proper rotation matrix");
* this module is on the ground floor: it imports only :mod:`robodyn._value_checks` and
  :mod:`robodyn._meaning_checks` (and numpy/sympy).

The kinds (each a thin class over one meaning function of :mod:`robodyn._meaning_checks`):

============================  ==========================================================
:class:`Rotation`             3x3, R^T R = I, det R = +1
:class:`RigidPose`            4x4 [R p; 0 1], R a :class:`Rotation`
:class:`Direction`            non-zero 3-vector (normalised by the function)
:class:`ScrewAxis`            6-vector (omega, v): unit omega, or omega = 0 and unit v
:class:`ScrewAxes`            6 x n, each column a :class:`ScrewAxis`
:class:`Twist`                6-vector (omega, v) of finite numbers or expressions
:class:`Wrench`               6-vector (m, f) of finite numbers or expressions
:class:`RotationalInertia`    3x3 symmetric, positive semi-definite, triangle inequality
:class:`SpatialInertia`       6x6 [I_c + m[c][c]^T, m[c]; m[c]^T, m 1] of a rigid body
:class:`Mass`                 a number or expression > 0
:class:`Metric`               square, symmetric positive definite (mass matrix, metric)
:class:`TimeStep`             a number > 0, seconds
:class:`Tolerance`            a number in (0, 1]
:class:`FrictionCoefficient`  a number >= 0
:class:`Restitution`          a number in [0, 1]
============================  ==========================================================
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from . import _value_checks
from . import _meaning_checks
from ._meaning_checks import UndecidedWarning

__all__ = ["Kind", "UndecidedWarning", "Rotation", "RigidPose", "Direction",
           "ScrewAxis", "ScrewAxes", "Twist", "Wrench", "RotationalInertia", "SpatialInertia",
           "Mass", "Metric", "TimeStep", "Tolerance", "FrictionCoefficient", "Restitution",
           "KINDS"]


class Kind:
    """Base class of the library's argument kinds (see the module docstring)."""

    expected = "a value"

    @classmethod
    def check(cls, value, name: str) -> None:
        """Refuse ``value`` (raise) when it is not of this kind; ``name`` is ``"fname: arg"``."""
        return None


class Rotation(Kind):
    """A rotation matrix: 3x3, R^T R = I, det R = +1 (a reflection is refused).

    >>> Rotation.check(np.diag([1.0, 1.0, -1.0]), "log_so3: R")
    Traceback (most recent call last):
    ...
    robodyn.errors.ArgumentError: log_so3: R: expected a rotation matrix (R^T R = I, det R = +1), got det R = -1 (a reflection) (orthonormal columns, no scaling or reflection)
    """

    expected = "a rotation matrix (R^T R = I, det R = +1)"

    @classmethod
    def check(cls, value, name: str, tol: float = 1e-6) -> None:
        _meaning_checks.rotation_matrix(value, name, tol=tol)


class RigidPose(Kind):
    """A homogeneous transform [R p; 0 1] with R a proper rotation."""

    expected = "a homogeneous transform [R p; 0 1] with R a rotation"

    @classmethod
    def check(cls, value, name: str, tol: float = 1e-6) -> None:
        _meaning_checks.pose_matrix(value, name, tol=tol)


class Direction(Kind):
    """A non-zero 3-vector, normalised by the function it is given to (on both paths)."""

    expected = "a nonzero direction"

    @classmethod
    def check(cls, value, name: str) -> None:
        _meaning_checks.nonzero_vector(value, 3, name)


class ScrewAxis(Kind):
    """A screw axis (omega, v): unit omega, or omega = 0 and unit v."""

    expected = "a screw axis (|omega| = 1, or omega = 0 and |v| = 1)"

    @classmethod
    def check(cls, value, name: str) -> None:
        _meaning_checks.screw_axis(value, name)


class ScrewAxes(Kind):
    """A 6 x n array whose columns are screw axes."""

    expected = "a 6 x n array of screw axes"

    @classmethod
    def check(cls, value, name: str) -> None:
        S = _value_checks.sym_matrix(value, name) if _value_checks.is_symbolic(value) else \
            _value_checks.real_array(value, name)
        shape = tuple(S.shape)
        if len(shape) != 2 or shape[0] != 6 or shape[1] < 1:
            raise _value_checks.error(name, "a 6 x n array (one column (omega, v) per joint, n >= 1)",
                                f"shape {shape}", "did you pass n x 6? transpose it"
                                if len(shape) == 2 and shape[1] == 6 else None)
        for j in range(shape[1]):
            _meaning_checks.screw_axis(S[:, j], f"{name} (joint {j})", tol=1e-6)


class Twist(Kind):
    """A twist (omega, v): a 6-vector of finite real numbers or real expressions."""

    expected = "a 6-vector (omega, v)"

    @classmethod
    def check(cls, value, name: str) -> None:
        _meaning_checks.real_vector(value, 6, name)


class Wrench(Kind):
    """A wrench (m, f): a 6-vector of finite real numbers or real expressions."""

    expected = "a 6-vector (m, f)"

    @classmethod
    def check(cls, value, name: str) -> None:
        _meaning_checks.real_vector(value, 6, name)


class RotationalInertia(Kind):
    """A central rotational inertia: 3x3 symmetric, positive semi-definite, principal moments
    obeying the triangle inequality; a 3-vector is read as its diagonal.

    >>> a = sp.Symbol('a', positive=True)
    >>> RotationalInertia.check(sp.diag(a, a, -5 * a), "RigidBody: inertia")
    Traceback (most recent call last):
    ...
    robodyn.errors.ArgumentError: RigidBody: inertia: expected a rotational inertia (symmetric, positive semi-definite, triangle inequality), got the principal minor of rows 2 = -5*a (negative for every value of its symbols)
    """

    expected = "a rotational inertia (symmetric, positive semi-definite, triangle inequality)"

    @classmethod
    def check(cls, value, name: str) -> None:
        I = value
        if not isinstance(value, sp.MatrixBase):
            a = np.asarray(value, dtype=object)
            if a.ndim == 1 or (a.ndim == 2 and 1 in a.shape and a.size == 3):
                d = _value_checks.vector(value, 3, name)
                I = sp.diag(*list(d)) if isinstance(d, sp.MatrixBase) else np.diag(d)
        elif value.shape in ((3, 1), (1, 3)):
            I = sp.diag(*list(value))
        _meaning_checks.inertia_matrix(I, name)


class SpatialInertia(Kind):
    """A 6x6 spatial inertia of a rigid body, ordered (omega, v)."""

    expected = "a spatial inertia of a rigid body"

    @classmethod
    def check(cls, value, name: str) -> None:
        _meaning_checks.spatial_inertia_matrix(value, name)


class Mass(Kind):
    """A mass: a number > 0, or an expression not negative under its symbols' assumptions.

    >>> Mass.check(-sp.Symbol('m', positive=True), "spatial_inertia: mass")
    Traceback (most recent call last):
    ...
    robodyn.errors.ArgumentError: spatial_inertia: mass: expected a positive quantity, got -m (not positive under its symbols' assumptions) (a mass)
    """

    expected = "a positive mass"

    @classmethod
    def check(cls, value, name: str) -> None:
        _value_checks.positive(value, name, hint="a mass")


class Metric(Kind):
    """A square symmetric positive definite matrix (a mass matrix, a Riemannian metric)."""

    expected = "a symmetric positive definite matrix"

    @classmethod
    def check(cls, value, name: str) -> None:
        _meaning_checks.spd(value, name, symbols=True)


class TimeStep(Kind):
    """A time step: a finite number > 0 (s)."""

    expected = "a positive time step"

    @classmethod
    def check(cls, value, name: str) -> None:
        _value_checks.real_number(value, name, low=0, strict_low=True, hint="a time step, s")


class Tolerance(Kind):
    """A tolerance: a number in (0, 1]."""

    expected = "a tolerance in (0, 1]"

    @classmethod
    def check(cls, value, name: str) -> None:
        _value_checks.tolerance(value, name)


class FrictionCoefficient(Kind):
    """A Coulomb friction coefficient: a number >= 0, or one per contact (a list or 1-D array of
    them, as :func:`robodyn.impacts.contact_impulse` takes)."""

    expected = "a friction coefficient >= 0 (or one per contact)"

    @classmethod
    def check(cls, value, name: str) -> None:
        for k, v in _per_contact(value):
            _value_checks.nonnegative(v, name + k, hint="a Coulomb friction coefficient")


class Restitution(Kind):
    """A coefficient of restitution in [0, 1], or one per contact (a list or 1-D array)."""

    expected = "a coefficient of restitution in [0, 1] (or one per contact)"

    @classmethod
    def check(cls, value, name: str) -> None:
        for k, v in _per_contact(value):
            _meaning_checks.restitution(v, name + k)


def _per_contact(value):
    """``("", value)`` for a scalar; ``("[k]", entry)`` for each entry of a list, tuple or 1-D
    array of coefficients (one per contact)."""
    if isinstance(value, (list, tuple)) or (isinstance(value, np.ndarray) and value.ndim == 1):
        return [(f"[{k}]", v) for k, v in enumerate(value)]
    return [("", value)]


KINDS = tuple(k for k in list(globals().values())
              if isinstance(k, type) and issubclass(k, Kind) and k is not Kind)
"""Every kind of this module."""


from ._boundary import seal as _seal  # noqa: E402 -- the one boundary: last, over the finished module
_seal(globals())
