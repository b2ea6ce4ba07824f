r"""Kane's method (Part V of the book; handbook ch. 6, Kane and Levinson 1985).

For a system with n generalized coordinates q and m generalized speeds u (any invertible
combination of the :math:`\dot q`, eq. (kane-speeds)), the velocity of every particle and the
angular velocity of every body are linear in the speeds,

.. math:: v^P = \sum_r v^P_r\,u_r + v^P_t, \qquad \omega^B = \sum_r \omega^B_r\,u_r + \omega^B_t,

which defines the **partial velocities** :math:`v_r` and **partial angular velocities**
:math:`\omega_r`. With the generalized active forces (kane-fr)
:math:`F_r = \sum_P v^P_r\cdot R^P + \sum_B \omega^B_r\cdot T^B` and the generalized inertia
forces (kane-frstar) :math:`F_r^* = \sum_P v^P_r\cdot(-m_Pa^P) + \sum_B \omega^B_r\cdot
(-I^B\alpha^B - \omega^B\times I^B\omega^B)` (for a rigid body, :math:`v_r` of its mass
centre), **Kane's equations** are (kane-eq)

.. math:: F_r + F_r^* = 0, \qquad r = 1, \dots, m .

:math:`F_r^*` is linear in :math:`\dot u`, so the equations are the mass-matrix form
:math:`M(q)\dot u = f(q, u, t) + B\tau` of :mod:`robodyn.equations`.

Public API

* :class:`Particle`, :class:`RigidBody`, :class:`Force`, :class:`Torque` -- a system described
  symbolically (positions and orientations as functions of q and t, in an inertial frame N);
* :func:`kanes_equations` -- every step of the method, each a field of the returned
  :class:`KaneEquations` (velocities, partial velocities, accelerations, :math:`F_r`,
  :math:`F_r^*`, M, f), with constraints in the speeds (dependent speeds, nonholonomic
  constraints: the reduced equations, no multipliers) and the constraint forces they carry
  (auxiliary speeds);
* :func:`equations_of_motion` -- a :class:`~robodyn.rigid_motion.SerialChain`'s equations by a
  recursive Kane derivation in the link frames (fast; same interface as
  :func:`robodyn.lagrange.equations_of_motion`);
* :func:`change_speeds` -- the same equations in other generalized speeds u = W(q) qd;
* :func:`linearize` -- state-space A, B about an operating point of any
  :class:`~robodyn.equations.MassMatrixForm` (Lagrange's too).

The flexible link (assumed modes) lives in :mod:`robodyn.kane`.
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import sympy as sp

from .. import _value_checks
from .. import _meaning_checks
from ..lagrange import _derivation
from .._value_checks import is_symbolic
from .._value_checks import to_sympy as _S
from ..lagrange._derivation import canonical as _canonical
from ._nested import _nested_terms
from ..equations import (TIME, FieldsForm, MassMatrixForm, _check_time, _check_values,
                        _numeric_vector, _result_errors, mass_matrix_form)
from ..rigid_motion._kinematics import SerialChain
from ..kinds import Mass, Rotation, RotationalInertia, Tolerance

__all__ = ["Particle", "RigidBody", "Force", "Torque", "KaneEquations", "kanes_equations",
           "ChainEquations", "TreeEquations", "equations_of_motion", "change_speeds",
           "Linearization", "linearize", "DEFAULT_GRAVITY"]

DEFAULT_GRAVITY = (0.0, 0.0, -9.81)
"""Gravitational acceleration in the space frame, m/s^2 (as in :mod:`robodyn.lagrange`)."""


def _at_most_2d(x, name):
    """Refuse arrays of more than 2 dimensions before sympy sees them (NotImplementedError)."""
    try:
        nd = np.ndim(x) if isinstance(x, (np.ndarray, list, tuple)) else 0
    except ValueError:                  # ragged lists: the shared check words the refusal
        nd = 0
    if nd > 2:
        raise _value_checks.error(name, "a vector or matrix (at most 2 dimensions)",
                            f"an array of {nd} dimensions, shape {np.shape(x)}")


def _vec3(x, what, fname):
    _at_most_2d(x, f"{fname}: {what}")
    v = _value_checks.sym_matrix(x, f"{fname}: {what}")
    if v.shape not in ((3, 1), (1, 3)):
        raise _value_checks.refusal(
            ValueError, f"{fname}: {what}: expected a 3-vector, got shape {v.shape}")
    return v.reshape(3, 1).applyfunc(_value_checks._exact)


def _mat3(x, what, fname):
    _at_most_2d(x, f"{fname}: {what}")
    R = _value_checks.sym_matrix(x, f"{fname}: {what}")
    if R.shape != (3, 3):
        raise _value_checks.refusal(
            ValueError, f"{fname}: {what}: expected a 3x3 matrix, got shape {R.shape}")
    return R.applyfunc(_value_checks._exact)


def _mass(x, fname):
    """A positive mass; a symbol passes unless sympy knows it is <= 0 (e.g. -m, m positive)."""
    m = _value_checks.positive(x, f"{fname}: mass", hint="a mass in kg")
    if isinstance(m, sp.Basic) and m.is_nonpositive:
        raise _value_checks.error(f"{fname}: mass", "a positive mass", str(m))
    return _value_checks._exact(m)


def _name(x, fname, what="name"):
    if not isinstance(x, str) or not x:
        raise _value_checks.error(f"{fname}: {what}", "a non-empty string (a label, never evaluated)",
                            x, exc=TypeError)


# --------------------------------------------------------------------------
# the system: particles, rigid bodies, loads
# --------------------------------------------------------------------------

@dataclass(frozen=True)
class Particle:
    """A particle: ``mass`` (kg) at ``position`` (3 expressions in q and t, inertial frame N, m).

    Refused: a mass that is not positive (numbers; symbols sympy knows to be <= 0), strings,
    NaN, complex entries. A symbolic mass ``m`` cannot be checked and passes.

    >>> q = sp.Symbol('q')
    >>> Particle('P', 2, [sp.cos(q), sp.sin(q), 0]).position.T
    Matrix([[cos(q), sin(q), 0]])
    """
    name: str
    mass: Mass
    position: object

    def __post_init__(self):
        _name(self.name, "Particle")
        object.__setattr__(self, "mass", _mass(self.mass, "Particle"))
        object.__setattr__(self, "position", _vec3(self.position, "position", "Particle"))


@dataclass(frozen=True)
class RigidBody:
    """A rigid body: ``mass`` at the mass centre ``position`` (N frame), ``orientation`` R
    (3x3, body axes in N, functions of q and t) and the central ``inertia`` (3x3 in body axes,
    kg m^2). Its angular velocity is read off :math:`\\dot RR^T`.

    Checked (:mod:`robodyn.kinds`): a positive :class:`~robodyn.kinds.Mass`; R a
    :class:`~robodyn.kinds.Rotation` (R^T R = I, det R = 1); the inertia a
    :class:`~robodyn.kinds.RotationalInertia` (symmetric, positive semi-definite, principal
    moments obeying the triangle inequality). With symbols, each is decided under their
    assumptions: refused when it fails for every value (a reflection, ``diag(a, a, -5 a)``),
    a :class:`~robodyn.kinds.UndecidedWarning` when it fails for some.

    >>> q = sp.Symbol('q')
    >>> b = RigidBody('B', 1, [0, 0, 0], [[sp.cos(q), -sp.sin(q), 0], [sp.sin(q), sp.cos(q), 0],
    ...                                   [0, 0, 1]], sp.diag(0, 1, 1))
    >>> b.inertia[2, 2]
    1
    """
    name: str
    mass: Mass
    position: object
    orientation: Rotation
    inertia: RotationalInertia

    def __post_init__(self):
        f = "RigidBody"
        _name(self.name, f)
        object.__setattr__(self, "mass", _mass(self.mass, f))
        object.__setattr__(self, "position", _vec3(self.position, "position", f))
        R = _mat3(self.orientation, "orientation", f)
        _meaning_checks.rotation_matrix(R, f"{f}: orientation")
        object.__setattr__(self, "orientation", R)
        I = _mat3(self.inertia, "inertia", f)
        if not (I - I.T).is_zero_matrix:
            raise _value_checks.refusal(
                ValueError, f"{f}: inertia: expected a symmetric 3x3 matrix, got {I.tolist()}")
        _meaning_checks.inertia_matrix(I, f"{f}: inertia")
        object.__setattr__(self, "inertia", I)


@dataclass(frozen=True)
class Force:
    """A force ``vector`` (N frame components, N) applied at ``point`` (3 expressions, m).

    >>> Force([1, 0, 0], [0, -9.81, 0]).vector.T
    Matrix([[0, -981/100, 0]])
    """
    point: object
    vector: object

    def __post_init__(self):
        object.__setattr__(self, "point", _vec3(self.point, "point", "Force"))
        object.__setattr__(self, "vector", _vec3(self.vector, "vector", "Force"))


@dataclass(frozen=True)
class Torque:
    """A couple of moment ``vector`` (N frame, N m) acting on the rigid body named ``body``.

    >>> Torque('B', [0, 0, 2]).vector.T
    Matrix([[0, 0, 2]])
    """
    body: str
    vector: object

    def __post_init__(self):
        _name(self.body, "Torque", "body")
        object.__setattr__(self, "vector", _vec3(self.vector, "vector", "Torque"))


# --------------------------------------------------------------------------
# Kane's equations of a system described symbolically
# --------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class KaneEquations(FieldsForm):
    r"""Every quantity of Kane's method for one system (made by :func:`kanes_equations`).

    Fields, in the order of the method (vectors are sympy 3 x 1 columns in the inertial
    frame N; dictionaries are keyed by body or particle name):

    ``q``, ``u`` (the independent speeds), ``udot`` (their derivatives); ``all_speeds``;
    ``kinematic_equations`` (list of ``Eq(qd_i, ...)``), ``qd`` (:math:`\dot q = K(q)u`, n x 1);
    ``dependent_speeds`` ({u_d: expression in u} from the constraints, empty without);
    ``velocities``, ``angular_velocities``; ``partial_velocities``,
    ``partial_angular_velocities`` (3 x m matrices, column r = :math:`v_r`);
    ``accelerations``, ``angular_accelerations``; ``active_forces`` :math:`F_r`,
    ``inertia_forces`` :math:`F_r^*` (m x 1, linear in ``udot``); ``M`` and ``f`` with
    :math:`F_r + F_r^* = 0 \Leftrightarrow M\dot u = f + B\tau`; ``B`` and ``inputs``;
    ``constraint_forces`` (the generalized constraint forces carried by the auxiliary speeds,
    one per constraint, in q, u, udot; empty without constraints).
    """
    q: sp.Matrix
    u: sp.Matrix
    udot: sp.Matrix
    all_speeds: sp.Matrix
    kinematic_equations: list
    qd: sp.Matrix
    dependent_speeds: dict
    velocities: dict
    angular_velocities: dict
    partial_velocities: dict
    partial_angular_velocities: dict
    accelerations: dict
    angular_accelerations: dict
    active_forces: sp.Matrix
    inertia_forces: sp.Matrix
    M: sp.Matrix
    f: sp.Matrix
    B: sp.Matrix
    inputs: sp.Matrix
    constraint_forces: sp.Matrix
    t: sp.Symbol = TIME
    name: str = "system"
    _numeric_forms: dict = field(default_factory=dict, repr=False, compare=False)


    def equations(self):
        r"""Kane's equations :math:`F_r + F_r^* = 0` as a list of ``sympy.Eq``."""
        return [sp.Eq(a + b, 0) for a, b in zip(self.active_forces, self.inertia_forces)]

    def constraint_force(self, q, u, values=None, tau=None, t=0.0):
        r"""The generalized constraint forces at a state (numbers), one per constraint: the
        force that keeps each constraint's auxiliary speed at zero (for a constraint
        :math:`n\cdot v^P = 0`, the component along n of the force on P)."""
        fname = "KaneEquations.constraint_force"
        if self.constraint_forces.shape[0] == 0:
            raise _value_checks.refusal(ValueError, f"{fname}: {self.name} has no constraints")
        k = len(self.inputs)
        tau = np.zeros(k) if tau is None else _numeric_vector(tau, k, f"{fname}: tau ({k} "
                                                                      f"inputs)")
        q = _numeric_vector(q, self.q.shape[0], f"{fname}: q")
        u = _numeric_vector(u, self.u.shape[0], f"{fname}: u ({self.u.shape[0]} independent "
                                                f"speeds)")
        t = _value_checks.real_number(t, f"{fname}: t", hint="a time in s")
        _check_values(values, fname)
        num = self._numeric(values, fname)
        with _result_errors(fname):             # arguments checked: errors here are results
            ud = num._accelerations(q, u, t, tau, "constraint_force")
        key = ("constraint", tuple(sorted((str(k), float(v)) for k, v in (values or {}).items())))
        cache = self.__dict__.setdefault("_numeric_forms", {})
        if key not in cache:
            expr = self.constraint_forces
            if values:
                names = {str(s): s for s in expr.free_symbols}
                expr = expr.xreplace(_value_checks.values_dict(values, "KaneEquations.constraint_force: values",
                                                         names=names))
            args = list(self.q) + list(self.u) + list(self.udot) + list(self.inputs) + [self.t]
            cache[key] = sp.lambdify(args, list(expr), modules="math", cse=True)
        with np.errstate(all="ignore"):
            out = np.array(cache[key](*np.concatenate([q, u, ud, tau, [t]])), dtype=float)
        return _value_checks.finite_result(out, fname)


def _rate_symbols(q):
    return sp.Matrix([sp.Symbol(f"{s.name}_dot") for s in q])


def _symbol_column(x, what, fname, allow_empty=False):
    if isinstance(x, sp.Symbol):
        x = [x]
    if isinstance(x, sp.MatrixBase):
        x = list(x)
    if not isinstance(x, (list, tuple)) or (not x and not allow_empty):
        raise _value_checks.refusal(TypeError, f"{fname}: {what}: expected a list of sympy Symbols, got "
                        f"{_value_checks._describe(x)}")
    bad = [e for e in x if not isinstance(e, sp.Symbol)]
    if bad:
        raise _value_checks.refusal(
            TypeError, f"{fname}: {what}: expected plain sympy Symbols, got {bad[0]!r}")
    if len(set(x)) != len(x):
        raise _value_checks.refusal(
            ValueError, f"{fname}: {what}: expected distinct Symbols, got {list(x)}")
    return sp.Matrix(x) if x else sp.zeros(0, 1)


def _simp(e, simplify, q=None):
    """expand; with ``simplify`` also simplify products of sines and cosines (canonical sums
    of cos/sin of coordinate combinations when possible, else ``trigsimp``)."""
    e = sp.expand(e)
    if not simplify or not e.has(sp.sin, sp.cos, sp.tan):
        return e
    if e.has(sp.tan):                                  # e.g. inverse speed matrices: sin / cos
        e = sp.expand(e.replace(sp.tan, lambda a: sp.sin(a) / sp.cos(a)))
    q = sorted({a for f in e.atoms(sp.sin, sp.cos) for a in f.free_symbols}, key=str) \
        if q is None else q
    out = _canonical([e], q)
    if out is not None:
        return sp.factor_terms(out[0]) if len(sp.Add.make_args(out[0])) < 4 else out[0]
    num, den = sp.fraction(sp.together(e))          # a ratio of trigonometric polynomials
    out = _canonical([num, den], q)
    if out is not None:
        return sp.factor_terms(out[0]) / sp.factor_terms(out[1])
    return e


def _no_rate_symbols(groups, coords, fname):
    """Refuse a symbol named like the library's rate symbols (``q1_dot``, ``u1_dot``) in the
    model's expressions: it would be read as a constant parameter, not as a rate."""
    reserved = {f"{s.name}_dot" for s in coords}
    for label, exprs in groups.items():
        for e in exprs:
            hit = sorted(s.name for s in getattr(e, "free_symbols", ()) if s.name in reserved)
            if hit:
                raise _value_checks.error(f"{fname}: {label}", "expressions in the coordinates, "
                                    "speeds, time and constant parameters",
                                    f"one holding the symbol {hit[0]}",
                                    "q_dot/u_dot names are the library's own rate symbols; a "
                                    "rate is written with the speeds u")


def _check_invertible(W, q, what, fname, rng=None):
    """A square W(q): ValueError when it is singular (symbolically or at a random point)."""
    if W.shape[0] != W.shape[1]:
        raise _value_checks.refusal(
            ValueError, f"{fname}: {what}: expected a square matrix, got shape {W.shape}")
    det = sp.expand(W.det(method="berkowitz"))
    if det == 0 or sp.simplify(det) == 0:
        raise _value_checks.refusal(
            ValueError, f"{fname}: {what}: expected a matrix invertible in the rates, got "
                        f"one not invertible in the rates, det = 0 (the speeds must be "
                        f"independent combinations; W = {W.tolist()})")
    rng = np.random.default_rng(0) if rng is None else rng
    free = sorted(det.free_symbols, key=str)
    val = det.xreplace({s: sp.Float(x) for s, x in zip(free, rng.uniform(0.1, 1.1, len(free)))})
    if val.is_number and abs(complex(val)) < 1e-12:
        raise _value_checks.refusal(
            ValueError, f"{fname}: {what}: expected a matrix invertible in the rates, got "
                        f"one not invertible at a generic configuration (det = {det})")
    return det


def _check_bodies_and_loads(bodies, loads, q, u, t, fname):
    """Check :func:`kanes_equations`' bodies and loads; their expressions (bodies first)."""
    if not isinstance(bodies, (list, tuple)) or not bodies:
        raise _value_checks.refusal(
            TypeError, f"{fname}: bodies: expected a non-empty list of Particle and RigidBody, "
                       f"got {_value_checks._describe(bodies)}")
    names = set()
    for b in bodies:
        if not isinstance(b, (Particle, RigidBody)):
            raise _value_checks.refusal(
                TypeError, f"{fname}: bodies: expected Particle or RigidBody, got "
                           f"{_value_checks._describe(b)}")
        if b.name in names:
            raise _value_checks.error(f"{fname}: bodies", "bodies with distinct names", f"two {b.name!r}")
        names.add(b.name)
    rigid = {b.name: b for b in bodies if isinstance(b, RigidBody)}
    if not isinstance(loads, (list, tuple)):
        raise _value_checks.error(f"{fname}: loads", "a list of Force and Torque (may be empty)", loads,
                            exc=TypeError)
    for ld in loads:
        if not isinstance(ld, (Force, Torque)):
            raise _value_checks.refusal(
                TypeError, f"{fname}: loads: expected Force or Torque, got {_value_checks._describe(ld)}")
        if isinstance(ld, Torque) and ld.body not in rigid:
            raise _value_checks.refusal(
                ValueError, f"{fname}: loads: Torque on {ld.body!r}, expected one of the rigid "
                            f"bodies {sorted(rigid)}")
    exprs = [e for b in bodies for e in (b.position, getattr(b, "orientation", sp.zeros(1)))]
    exprs += [e for ld in loads for e in (getattr(ld, "point", sp.zeros(1)), ld.vector)]
    _meaning_checks.time_symbol(t, f"{fname}: t", coordinates=list(q) + list(u), exprs=exprs)
    for e in exprs[:2 * len(bodies)]:
        _meaning_checks.independent_of(e, list(u), f"{fname}: bodies",
                               "positions and orientations are functions of q and t only")
    return exprs


def _dependent_speeds(constraints, dependent, q, u, t, exprs, n_bodies, simplify, fname):
    """Checked constraints; (constraints, p, u_d, u_i, {u_d: C u_i + c}, C, c, A_d^-1)."""
    m = u.shape[0]
    if isinstance(constraints, (sp.Basic, str, bytes)) or not isinstance(
            constraints, (list, tuple, sp.MatrixBase)):
        raise _value_checks.error(f"{fname}: constraints", "a list of expressions linear in the "
                            "speeds", constraints, exc=TypeError)
    constraints = [_value_checks.expression(c, f"{fname}: constraints") for c in constraints]
    _meaning_checks.time_symbol(t, f"{fname}: constraints", coordinates=list(q) + list(u),
                        exprs=constraints)
    _no_rate_symbols({"bodies": exprs[:2 * n_bodies], "loads": exprs[2 * n_bodies:],
                      "constraints": constraints}, list(q) + list(u), fname)
    p = len(constraints)
    if p >= m and p:
        raise _value_checks.refusal(
            ValueError, f"{fname}: constraints: {p} constraints on {m} speeds remove all "
                        f"freedom; expected fewer constraints than speeds")
    if dependent in ((), None, []):
        dep = list(u[m - p:]) if p else []
    else:
        dep = list(_symbol_column(dependent, "dependent", fname))
    if len(dep) != p or not set(dep) <= set(u):
        raise _value_checks.refusal(
            ValueError, f"{fname}: dependent: expected {p} of the speeds {list(u)} (one per "
                        f"constraint), got {dep}")
    ind = [s for s in u if s not in dep]
    sub_dep, Cmat, cvec, Adinv = {}, None, None, None
    if p:
        A = sp.Matrix([[sp.diff(c, s) for s in u] for c in constraints])
        if any(e.has(*u) for e in A):
            raise _value_checks.refusal(
                ValueError, f"{fname}: constraints: expected expressions linear in the speeds "
                            f"{list(u)}, got {constraints}")
        bvec = sp.Matrix([c.xreplace({s: 0 for s in u}) for c in constraints])
        Ad = A[:, [list(u).index(s) for s in dep]]
        Ai = A[:, [list(u).index(s) for s in ind]]
        _check_invertible(Ad, q, "the constraints' dependent speeds", fname)
        Adinv = Ad.inv()
        Cmat = (-Adinv * Ai).applyfunc(lambda e: _simp(e, simplify))
        cvec = (-Adinv * bvec).applyfunc(lambda e: _simp(e, simplify))
        sol = Cmat * sp.Matrix(ind) + cvec
        sub_dep = {d: _simp(e, simplify) for d, e in zip(dep, sol)}
    return constraints, p, dep, ind, sub_dep, Cmat, cvec, Adinv


def kanes_equations(q, u, bodies, loads=(), speeds=None, constraints=(), dependent=(),
                    inputs=(), t=TIME, simplify=True, name="system"):
    r"""Kane's method for particles and rigid bodies described symbolically (module docstring).

    Steps (each result a field of the returned :class:`KaneEquations`): the kinematic
    differential equations from the definition of the speeds, :math:`u = W(q)\dot q`;
    velocities :math:`v = \partial r/\partial q\,\dot q + \partial r/\partial t` and angular
    velocities :math:`\omega` from :math:`\dot R R^T`; with constraints
    :math:`A(q, t)u + b = 0`, the dependent speeds :math:`u_d = C u_i + c` substituted;
    partial velocities :math:`\partial v/\partial u_r`; accelerations :math:`dv/dt`;
    :math:`F_r` (kane-fr), :math:`F_r^*` (kane-frstar) and :math:`F_r + F_r^* = 0` (kane-eq).

    Parameters
    ----------
    q : list of n Symbols (generalized coordinates)
    u : list of m Symbols (generalized speeds, dependent ones included)
    bodies : list of :class:`Particle` and :class:`RigidBody` (distinct names)
    loads : list of :class:`Force` and :class:`Torque` (vectors in q, u, t and ``inputs``)
    speeds : m x n matrix W(q) with u = W qd (invertible; default u = qd, needs m = n)
    constraints : p expressions linear in u (each = 0): velocity constraints
    dependent : the p speeds the constraints determine (default the last p)
    inputs : Symbols of the inputs tau; F_r is linear in them and B = dF_r/dtau
    t : time Symbol
    simplify : expand and ``trigsimp`` every result (book-sized systems; False for speed)

    Returns
    -------
    KaneEquations

    Raises
    ------
    TypeError for symbols that are not Symbols, bodies or loads of the wrong kind;
    ValueError for speeds that are not invertible in qd, constraints that are not linear in u,
    that remove all freedom or whose dependent speeds cannot be solved for, a Torque on an
    unknown body, inputs that enter F_r nonlinearly.

    Examples
    --------
    A pendulum of length l: a particle at :math:`l(\sin q, -\cos q)`.

    >>> q, u, m, l, g = sp.symbols('q u m l g')
    >>> P = Particle('P', m, [l * sp.sin(q), -l * sp.cos(q), 0])
    >>> k = kanes_equations([q], [u], [P], [Force(P.position, [0, -m * g, 0])])
    >>> k.partial_velocities['P'].T
    Matrix([[l*cos(q), l*sin(q), 0]])
    >>> k.M, k.f
    (Matrix([[l**2*m]]), Matrix([[-g*l*m*sin(q)]]))
    """
    fname = "kanes_equations"
    q = _symbol_column(q, "q", fname)
    u = _symbol_column(u, "u", fname)
    inputs = _symbol_column(list(inputs), "inputs", fname, allow_empty=True)
    _check_time(q, u, t, fname)
    if set(inputs) & (set(q) | set(u) | {t}):
        raise _value_checks.error(f"{fname}: inputs", "symbols other than q, u and t",
                            [list(inputs)], "an input needs its own symbol")
    _value_checks.flag(simplify, f"{fname}: simplify")
    n, m = q.shape[0], u.shape[0]
    exprs = _check_bodies_and_loads(bodies, loads, q, u, t, fname)

    # -- generalized speeds and the kinematic differential equations ---------------------
    qdot = _rate_symbols(q)
    if speeds is None:
        if m != n:
            raise _value_checks.refusal(
                ValueError, f"{fname}: speeds: needed when there are {n} coordinates and {m} "
                            f"speeds (u = W(q) qd)")
        W = sp.eye(n)
    else:
        W = _value_checks.sym_matrix(speeds, f"{fname}: speeds").applyfunc(_value_checks._exact)
        if W.shape != (m, n):
            raise _value_checks.refusal(
                ValueError, f"{fname}: speeds: expected an {m} x {n} matrix W (u = W(q) qd), "
                            f"got shape {W.shape}")
        _meaning_checks.independent_of(W, list(u) + list(qdot) + [t], f"{fname}: speeds",
                               "u = W(q) qd: W depends on the coordinates only, not on the "
                               "speeds, the rates or time")
        _check_invertible(W, q, "speeds", fname)
    K = W.inv() if W != sp.eye(n) else sp.eye(n)
    K = K.applyfunc(lambda e: sp.factor(sp.simplify(e)) if simplify else e)
    qd_u = (K * u).applyfunc(sp.expand)             # qd as functions of all speeds
    kin = [sp.Eq(a, b) for a, b in zip(qdot, qd_u)]

    # -- constraints: dependent speeds ----------------------------------------------------
    constraints, p, dep, ind, sub_dep, Cmat, cvec, Adinv = _dependent_speeds(
        constraints, dependent, q, u, t, exprs, len(bodies), simplify, fname)
    ui = sp.Matrix(ind)
    udot = sp.Matrix([sp.Symbol(f"{s.name}_dot") for s in ind])
    qd_i = qd_u.xreplace(sub_dep).applyfunc(lambda e: _simp(e, simplify))
    rate_sub = dict(zip(qdot, qd_u))

    def ddt(expr, rates):
        """Time derivative of an expression in q, speeds, t (rates: qd in speeds)."""
        out = sp.diff(expr, t)
        for qi, r in zip(q, rates):
            out += sp.diff(expr, qi) * r
        return out

    # -- velocities (in all speeds) -------------------------------------------------------
    vel, angvel = {}, {}
    for b in bodies:
        vel[b.name] = b.position.applyfunc(lambda e: _simp(ddt(e, qd_u), simplify))
        if isinstance(b, RigidBody):
            R = b.orientation
            Rdot = R.applyfunc(lambda e: ddt(e, qd_u))
            Om = Rdot * R.T
            w = sp.Matrix([Om[2, 1], Om[0, 2], Om[1, 0]])
            angvel[b.name] = w.applyfunc(lambda e: _simp(e, True))
    # constrained velocities (independent speeds only)
    vel_c = {k: v.xreplace(sub_dep).applyfunc(lambda e: _simp(e, simplify)) for k, v in vel.items()}
    ang_c = {k: v.xreplace(sub_dep).applyfunc(lambda e: _simp(e, simplify))
             for k, v in angvel.items()}

    def partials(d, speeds_):
        return {k: v.jacobian(speeds_).applyfunc(lambda e: _simp(e, simplify)) if len(speeds_)
                else sp.zeros(3, 0) for k, v in d.items()}

    pv, pw = partials(vel_c, ui), partials(ang_c, ui)

    # -- accelerations -------------------------------------------------------------------
    def accel(v):
        out = sp.diff(v, t)
        for qi, r in zip(q, qd_i):
            out += sp.diff(v, qi) * r
        for s, sd in zip(ind, udot):
            out += sp.diff(v, s) * sd
        return out.applyfunc(lambda e: _simp(e, simplify))

    acc = {k: accel(v) for k, v in vel_c.items()}
    alpha = {k: accel(v) for k, v in ang_c.items()}

    # -- generalized active and inertia forces ---------------------------------------------
    def gen_forces(pv_of, pw_of, speeds_, vels, angs, accs, alphas):
        r = len(speeds_)
        Fr, Fs = sp.zeros(r, 1), sp.zeros(r, 1)
        for ld in loads:
            if isinstance(ld, Force):
                vP = ld.point.applyfunc(lambda e: ddt(e, qd_u)).xreplace(sub_dep)
                part = vP.jacobian(speeds_) if r else sp.zeros(3, 0)
                Fr += part.T * ld.vector.xreplace(sub_dep)
            else:
                Fr += pw_of[ld.body].T * ld.vector.xreplace(sub_dep)
        for b in bodies:
            Fs -= pv_of[b.name].T * (b.mass * accs[b.name])
            if isinstance(b, RigidBody):
                R = b.orientation
                IN = R * b.inertia * R.T
                w = angs[b.name]
                Fs -= pw_of[b.name].T * (IN * alphas[b.name] + w.cross(IN * w))
        return Fr, Fs

    Fr, Fs = gen_forces(pv, pw, ui, vel_c, ang_c, acc, alpha)
    Fr = Fr.applyfunc(lambda e: _simp(e, simplify))
    Fs = Fs.applyfunc(sp.expand)
    Mm = -Fs.jacobian(udot) if len(ind) else sp.zeros(0, 0)
    Mm = Mm.applyfunc(lambda e: _simp(e, simplify))
    Fs_rest = Fs.xreplace({s: 0 for s in udot}).applyfunc(lambda e: _simp(e, simplify))
    Fs = -Mm * udot + Fs_rest
    rest = Fr + Fs_rest
    Bm = Fr.jacobian(inputs) if inputs.shape[0] else sp.zeros(len(ind), 0)
    if any(e.has(*inputs) for e in Bm) if inputs.shape[0] else False:
        raise _value_checks.refusal(
            ValueError, f"{fname}: inputs: expected loads linear in the inputs {list(inputs)}")
    f = rest.xreplace({s: 0 for s in inputs}).applyfunc(sp.expand)

    # -- auxiliary speeds: the generalized constraint forces -------------------------------
    cforce = sp.zeros(0, 1)
    if p:
        # speeds (u_i, w) with w = A u + b: u_d = Ad^-1 (w - Ai u_i - b); partial
        # velocities with respect to w and the equations F_w + F_w* + R_w = 0 at w = 0
        wsym = sp.Matrix(sp.symbols(f"_w0:{p}"))
        Adinv_w = Adinv
        sub_w = {d: e for d, e in zip(dep, Cmat * ui + cvec + Adinv_w * wsym)}
        vel_w = {k: v.xreplace(sub_w) for k, v in vel.items()}
        ang_w = {k: v.xreplace(sub_w) for k, v in angvel.items()}
        pvw = {k: v.jacobian(wsym) for k, v in vel_w.items()}
        pww = {k: v.jacobian(wsym) for k, v in ang_w.items()}
        Fw, Fws = sp.zeros(p, 1), sp.zeros(p, 1)
        for ld in loads:
            if isinstance(ld, Force):
                vP = ld.point.applyfunc(lambda e: ddt(e, qd_u)).xreplace(sub_w)
                Fw += vP.jacobian(wsym).T * ld.vector.xreplace(sub_dep)
            else:
                Fw += pww[ld.body].T * ld.vector.xreplace(sub_dep)
        zero_w = {s: 0 for s in wsym}
        for b in bodies:
            Fws -= pvw[b.name].xreplace(zero_w).T * (b.mass * acc[b.name])
            if isinstance(b, RigidBody):
                R = b.orientation
                IN = R * b.inertia * R.T
                w = ang_c[b.name]
                Fws -= pww[b.name].xreplace(zero_w).T * (IN * alpha[b.name] + w.cross(IN * w))
        cforce = (-(Fw.xreplace(zero_w) + Fws)).applyfunc(lambda e: _simp(e, simplify))

    return KaneEquations(q, ui, udot, u, kin, qd_i, sub_dep, vel_c, ang_c, pv, pw, acc, alpha,
                         Fr, Fs, Mm, f, Bm, inputs, cforce, t, str(name))


# --------------------------------------------------------------------------
# serial chains: a recursive Kane derivation in the link frames
# --------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class ChainEquations(FieldsForm):
    r"""Kane's equations of a serial chain, made by :func:`equations_of_motion`.

    With speeds u = qd (the default): ``M`` (n x n), ``active_forces`` :math:`F_r` (gravity's
    generalized active forces, n x 1), ``f`` :math:`= F_r + F_r^*|_{\dot u = 0}`, so
    :math:`M\dot u = f + \tau`; made when first asked for: ``velocity_products`` (the part of
    :math:`-F_r^*` free of ``udot``) and ``inertia_forces`` :math:`F_r^* = -M\dot u -{}`
    velocity products (n x 1, linear in ``udot``).
    ``kinematics`` is :math:`\dot q = K u` (u itself by default) and ``input_matrix`` B
    (:math:`K^T` for joint torques). ``partial_velocities(link)`` gives the twist partial
    velocities of a link (its body Jacobian times K). In the nested form (long spatial
    chains) M, ``active_forces`` and f are written in named intermediate Symbols ``w1, w2,
    ...`` whose definitions ``intermediates`` lists in order, ``(Symbol, expression)``;
    :meth:`explicit` writes them in."""
    q: sp.Matrix
    u: sp.Matrix
    udot: sp.Matrix
    M: sp.Matrix
    f: sp.Matrix
    active_forces: sp.Matrix
    qd: sp.Matrix
    B: sp.Matrix
    gravity: tuple
    chain: SerialChain = field(repr=False, default=None)
    t: sp.Symbol = TIME
    name: str = "chain"
    intermediates: tuple = ()
    _numeric_forms: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def n(self):
        return self.q.shape[0]

    @cached_property
    def velocity_products(self):
        r"""The part of :math:`-F_r^*` free of :math:`\dot u`: :math:`F_r - f` (n x 1)."""
        return (self.active_forces - self.f).applyfunc(sp.expand)

    @cached_property
    def inertia_forces(self):
        r"""The generalized inertia forces :math:`F_r^* = -M\dot u -{}` (velocity products)."""
        return -(self.M * self.udot) - self.velocity_products

    def explicit(self):
        """The same equations with the intermediates written into M, ``active_forces`` and f
        (large for long spatial chains); itself when there are none."""
        if not self.intermediates:
            return self
        done = {}
        for w, e in self.intermediates:
            done[w] = e.xreplace(done)
        M, f, Fr = (X.xreplace(done) for X in (self.M, self.f, self.active_forces))
        return ChainEquations(self.q, self.u, self.udot, M, f, Fr, self.qd, self.B,
                              self.gravity, self.chain, self.t, self.name)

    def equations(self):
        r"""Kane's equations :math:`F_r + F_r^* + \tau_r = 0`... as ``sympy.Eq`` (u = qd)."""
        return [sp.Eq(a + b, 0) for a, b in zip(self.active_forces, self.inertia_forces)]

    def partial_velocities(self, link):
        r"""The partial twists :math:`(\omega_r, v_r)` of ``link``'s mass-centre frame, in that
        frame: the columns of its body Jacobian times K, 6 x n (sympy)."""
        from ..rigid_motion._kinematics import jacobian_body
        link = _value_checks.size(link, "ChainEquations.partial_velocities: link", low=0,
                            high=self.n - 1, hint="a link index")
        K = self.qd.jacobian(self.u)
        return (jacobian_body(self.chain, self.q, link=int(link)) * K).applyfunc(sp.expand)


@dataclass(frozen=True, eq=False)
class TreeEquations(ChainEquations):
    r"""Kane's equations of a kinematic tree, made by :func:`robodyn.kane.equations_of_motion`
    from a :class:`~robodyn.urdf.RobotModel` (a :class:`~robodyn.equations.MassMatrixForm`).

    The fields and terms of :class:`ChainEquations` (``chain`` is None): ``M`` (nv x nv),
    ``active_forces`` :math:`F_r` (gravity's), ``f`` :math:`= F_r + F_r^*|_{\dot u = 0}`, so
    :math:`M\dot u = f + \tau`; ``velocity_products``, ``inertia_forces`` :math:`F_r^*`,
    ``equations()``; ``qd`` the kinematics (the joint speeds; a floating base's first six
    speeds are its body twist); ``B`` the identity (joint torques; a floating base: its wrench
    in the base frame first). ``jacobians`` holds the bodies' Jacobians (a floating base's
    first), which :meth:`partial_velocities` hands out."""
    jacobians: tuple = field(repr=False, default=())

    def partial_velocities(self, body):
        r"""The partial twists :math:`(\omega_r, v_r)` of ``body`` (an index into the model's
        bodies; with a floating base, -1 is the base) in its own frame: its Jacobian, 6 x nv
        (eq. (kane-tree-partial))."""
        lo = -1 if self.u.shape[0] > self.n else 0            # a floating base: nv = n + 6
        body = _value_checks.size(body, "TreeEquations.partial_velocities: body", low=lo,
                            high=self.n - 1, hint="a body index (-1: a floating base)")
        return self.jacobians[int(body) - lo]


def _chain_terms(chain, g, q, u, form="auto"):
    """M, F_r, f and the intermediates (empty in the expanded form) of a chain: the nested
    form (:func:`_nested_terms`) when ``form`` says so or, under ``"auto"``, when Lagrange's
    derivation of the chain would be nested (:func:`robodyn.lagrange._derivation.choose`: many axis
    directions, or a product of the mass matrix's recursion beyond its budget); else the
    expanded recursion (:func:`_expanded_terms`)."""
    cache = chain._cache
    nested = form == "nested"
    if form == "auto":
        nested = ("lagrange", "too big") in cache or \
            _derivation._axis_directions(chain) >= _derivation.AXES_NESTED
        if not nested and ("kane", "derivation") not in cache:
            try:                 # M's products are the same with the speeds as generators
                d = _derivation.Derivation(chain, budget=_derivation.BUDGET, speeds=True)
            except _derivation._TooBig:
                cache["lagrange", "too big"] = nested = True
            else:
                d.ring.budget = None
                cache["kane", "derivation"] = d
    if nested:
        return _nested_terms(_derivation.choose(chain, "nested"), g, q, u)
    return _expanded_terms(chain, g, q, u) + ((),)


def _expanded_terms(chain, g, q, u):
    r"""Kane's recursion for a serial chain on the shared engine (:mod:`robodyn.lagrange._derivation`):
    M, the velocity-product part of :math:`-F_r^*` and the gravity forces :math:`F_r`, as sympy
    matrices in the Symbols q and u.

    Forward, in link frames (:math:`Y_i` the twist transform from link i-1 to link i,
    :math:`A_i` joint i's screw): :math:`\mathcal V_i = Y_i\mathcal V_{i-1} + A_iu_i`, and the
    acceleration at :math:`\dot u = 0`, :math:`a_i = Y_ia_{i-1} + \mathrm{ad}_{Y_i\mathcal
    V_{i-1}}A_iu_i`. Backward: the inertia wrench :math:`\mathcal I_ia_i -
    \mathrm{ad}^T_{\mathcal V_i}\mathcal I_i\mathcal V_i` summed towards the base,
    :math:`\mathcal W_i = \mathcal W^*_i + Y_{i+1}^T\mathcal W_{i+1}`, and projected on the
    partial twist, :math:`A_i^T\mathcal W_i`; the weights :math:`\mathcal I_i(0, g_i)` the same
    way. M is the engine's composite-inertia recursion (the coefficients of :math:`\dot u`)."""
    d = _derivation.derivation(chain, speeds=True)
    ring, n = d.ring, chain.n
    zero = ring.zero
    Y, I = d.Y, d.inertias
    A = [[d.A[i][r][0] for r in range(6)] for i in range(n)]
    npar = len(d.params)
    us = [ring.gen(npar + k) for k in range(n)]

    def lower(Yi, x):                  # R^T x: the lower right block of Y = Ad(H^-1)
        return [ring.sum([ring.mul(Yi[3 + r][3 + c], x[c]) for c in range(3)
                          if Yi[3 + r][3 + c] and x[c]]) for r in range(3)]

    axes = [k for k in range(3) if g[k] != 0]
    V, a, grav = [], [], []
    Vp, ap = [zero] * 6, [zero] * 6
    gp = {k: [ring.const(ring.one) if r == k else zero for r in range(3)] for k in axes}
    for i in range(n):
        Au = [ring.mul(x, us[i]) for x in A[i]]
        Vt = ring.matvec(Y[i], Vp)                     # the parent's twist in this link's frame
        w = Vt[:3]
        ad = ring.cross(w, Au[:3]) + [ring.add(x, y) for x, y in
                                      zip(ring.cross(w, Au[3:]), ring.cross(Vt[3:], Au[:3]))]
        Vi = [ring.add(x, y) for x, y in zip(Vt, Au)]
        ai = [ring.add(x, y) for x, y in zip(ring.matvec(Y[i], ap), ad)]
        gp = {k: lower(Y[i], gk) for k, gk in gp.items()}
        V.append(Vi), a.append(ai), grav.append(gp)
        Vp, ap = Vi, ai
    bias, active = [None] * n, {k: [None] * n for k in axes}
    W, Wg = None, {k: None for k in axes}
    for i in reversed(range(n)):
        h = ring.matvec(I[i], V[i])
        w, v = V[i][:3], V[i][3:]
        Fi = ring.matvec(I[i], a[i])
        # the linear momentum is h_v = m v + I_vw w (I's lower blocks: m 1 and m [c]^T), and
        # v x m v = 0: only v x I_vw w is formed (nothing at all when the frame is at the
        # mass centre), saving the largest product of the sweep
        hv = ring.matvec([row[:3] for row in I[i][3:]], w) if _mass_block(ring, I[i]) \
            else h[3:]
        extra = [ring.add(x, y) for x, y in zip(ring.cross(w, h[:3]), ring.cross(v, hv))] \
            + ring.cross(w, h[3:])
        Fi = [ring.add(x, y) for x, y in zip(Fi, extra)]
        if W is not None:
            Fi = [ring.add(x, y) for x, y in zip(Fi, ring.tmatvec(Y[i + 1], W))]
        W = Fi
        bias[i] = ring.dot(A[i], W)
        for k in axes:
            Gi = ring.matvec(I[i], [zero] * 3 + grav[i][k])
            if Wg[k] is not None:
                Gi = [ring.add(x, y) for x, y in zip(Gi, ring.tmatvec(Y[i + 1], Wg[k]))]
            Wg[k] = Gi
            active[k][i] = ring.dot(A[i], Gi)
    gens = d.params + list(u)
    conv = lambda p: ring.to_sympy(p, q, gens)         # noqa: E731
    M = d.mass_matrix(q)
    # gravity: numbers scale the unit-axis forces inside the engine, symbols outside it; the
    # velocity products are converted once, inside f (ChainEquations recovers them as Fr - f)
    scaled = {k: _ring_number(ring, g[k]) for k in axes}
    if all(c is not None for c in scaled.values()):
        Fr_p = [ring.sum([ring.scale(active[k][i], scaled[k]) for k in axes]) for i in range(n)]
        Fr = sp.Matrix([conv(p) for p in Fr_p])
        f = sp.Matrix([conv(ring.add(p, b, -1)) for p, b in zip(Fr_p, bias)])
    else:
        Fr = sp.Matrix([sp.expand(sp.Add(*[g[k] * conv(active[k][i]) for k in axes]))
                        for i in range(n)])
        f = Fr - sp.Matrix([conv(b) for b in bias])
    return M, Fr, f


def _mass_block(ring, G):
    """Whether the lower right block of a spatial inertia (polynomials) is m times the identity,
    as for every rigid body (then v x (m v) = 0 in the inertia forces)."""
    m = G[3][3]
    return all((G[3 + r][3 + c].c == m.c and G[3 + r][3 + c].s == m.s) if r == c
               else not G[3 + r][3 + c] for r in range(3) for c in range(3))


def _ring_number(ring, x):
    """x as a coefficient of the ring (mpq for an exact ring, float otherwise), or None when it
    is a symbol or has no short exact value."""
    if is_symbolic(x):
        return None
    x = float(x)
    if not ring.exact:
        return x
    fr = _derivation._nice(x)
    return None if fr is None else ring.num(fr.numerator) / fr.denominator


def equations_of_motion(chain, speeds=None, gravity=DEFAULT_GRAVITY, q=None, u=None,
                        form="auto"):
    r"""Kane's equations of a serial chain or a kinematic tree, :math:`M(q)\dot u = f(q, u) +
    B\tau`.

    A :class:`~robodyn.urdf.RobotModel` (a tree from a URDF, fixed or floating base) goes
    through Kane's method on the tree (:mod:`robodyn.kane._trees`, eq. (kane-tree-fr)): its
    partial twists are the columns of the bodies' Jacobians, and the result is a
    :class:`TreeEquations`; with a floating base the speeds are the base's body twist then the
    joint speeds, and ``gravity`` is read in the base frame (Symbols keep every orientation).

    The derivation is Kane's method done recursively in the link frames. With u = qd the
    partial twists of link i are the columns of its body Jacobian, :math:`\mathcal V_{i,r} =
    \mathrm{Ad}_{T_{ir}}A_r` (:math:`A_r` the joint screw in link r's frame), so

    .. math:: F_r^* = -\sum_{i\ge r}\mathcal V_{i,r}^T\big(\mathcal I_i\dot{\mathcal V}_i
              - \mathrm{ad}_{\mathcal V_i}^T\mathcal I_i\mathcal V_i\big)
              = -A_r^T\,\mathcal W_r,\qquad
              \mathcal W_r = \mathcal W^*_r + \mathrm{Ad}_{T_{r+1,r}}^T\mathcal W_{r+1},

    one backward sweep after one forward sweep of twists and accelerations (eq. (kane-frstar)
    summed link by link); :math:`F_r` of gravity is the same sweep of the weights. It runs on
    the symbolic engine Lagrange's equations use (:mod:`robodyn.lagrange._derivation`), with the speeds
    as extra generators: every quantity is a real trigonometric polynomial,
    :math:`\cos(q_1 + \dots + q_k)` one term, with no ``simplify``; the mass matrix is the
    engine's composite-inertia recursion. ``speeds`` other than qd go through
    :func:`change_speeds`.

    Parameters
    ----------
    chain : SerialChain with link inertias (numbers or sympy symbols), or a RobotModel
    speeds : n x n matrix W(q) in the symbols q, u = W qd (default the identity)
    gravity : 3-vector in the space frame, m/s^2 (planar models: ``(0, -g, 0)``)
    q, u : lists of n Symbols; default ``q1..qn``, ``u1..un``
    form : ``"expanded"`` (every entry a sum of cosines and sines of joint-angle
        combinations), ``"nested"`` (the recursion kept as named intermediates ``w1, w2,
        ...``, listed in ``ChainEquations.intermediates``) or ``"auto"`` (default): nested
        exactly when :func:`robodyn.lagrange.equations_of_motion` would be (long spatial
        chains, whose expanded equations grow like 5^n)

    Returns
    -------
    ChainEquations (a :class:`~robodyn.equations.MassMatrixForm`)

    Raises
    ------
    TypeError for a chain that is not a SerialChain; ValueError for a chain without inertias,
    symbol lists of the wrong length, speeds not invertible in qd.

    Examples
    --------
    >>> from robodyn.models import planar_rr
    >>> k = equations_of_motion(planar_rr(*sp.symbols('l1 l2 m1 m2')), gravity=(0, -9.81, 0))
    >>> k.M[0, 1]
    l1*l2*m2*cos(q2)/2 + l2**2*m2/3
    >>> k.f[1]
    -l1*l2*m2*u1**2*sin(q2)/2 - 981*l2*m2*cos(q1 + q2)/200

    A tree from a URDF, against the articulated-body algorithm:

    >>> from robodyn import trees, urdf
    >>> pend = urdf.load_urdf("double_pendulum")
    >>> kt = equations_of_motion(pend)
    >>> acc = kt.numeric().accelerations([0.3, -0.2], [1.0, 0.5], tau=[0.1, 0.0])
    >>> bool(abs(acc - trees.aba(pend, [0.3, -0.2], [1.0, 0.5], [0.1, 0.0])).max() < 1e-9)
    True
    """
    fname = "kane.equations_of_motion"
    from ..urdf import RobotModel
    if isinstance(chain, RobotModel):
        from ._trees import _tree_equations
        if form not in ("auto", "expanded"):
            raise _value_checks.refusal(ValueError, f"{fname}: form: expected 'auto' or 'expanded' "
                                  f"for a tree (no nested form), got {form!r}")
        q, u, udot, M, f, Fr, qd, gt, Js = _tree_equations(chain, gravity, q, u, fname)
        eom = TreeEquations(q, u, udot, M, f, Fr, qd, sp.eye(chain.nv), gt, None, TIME,
                            chain.name, jacobians=Js)
        return eom if speeds is None else change_speeds(eom, speeds)
    if not isinstance(chain, SerialChain):
        raise _value_checks.error(f"{fname}: chain", "a SerialChain or a RobotModel",
                            _value_checks.describe(chain), "build one with robodyn.models, e.g. "
                            "models.planar_rr(), or load a URDF with robodyn.urdf.load_urdf",
                            exc=TypeError)
    if chain.link_inertias is None or chain.link_homes is None:
        raise _value_checks.refusal(ValueError, f"{fname}: {chain!r} has no link inertias; build it with "
                         f"SerialChain.from_screws(..., link_homes=[...], link_inertias=[...])")
    n = chain.n
    q = _symbol_column(list(sp.symbols(f"q1:{n + 1}")) if q is None else q, "q", fname)
    u = _symbol_column(list(sp.symbols(f"u1:{n + 1}")) if u is None else u, "u", fname)
    for nm, v in (("q", q), ("u", u)):
        if v.shape[0] != n:
            raise _value_checks.refusal(
                ValueError, f"{fname}: {nm}: expected {n} symbols (one per joint), got "
                            f"{v.shape[0]}")
    if set(q) & set(u):
        raise _value_checks.refusal(ValueError, f"{fname}: q and u share symbols {set(q) & set(u)}")
    if form not in ("auto", "expanded", "nested"):
        raise _value_checks.refusal(
            ValueError, f"{fname}: form: expected 'auto', 'expanded' or 'nested', got {form!r}")
    g = _value_checks.vector(gravity, 3, f"{fname}: gravity (3-vector in the space frame, m/s^2)")
    key = ("kane", tuple(q), tuple(u), tuple(str(x) for x in (list(g))), form)
    if key not in chain._cache:
        chain._cache[key] = _chain_terms(chain, [_S(x) if is_symbolic(x) else x for x in g],
                                         list(q), list(u), form)
    M, Fr, f, inter = chain._cache[key]
    udot = sp.Matrix([sp.Symbol(f"{s.name}_dot") for s in u])
    gt = tuple(float(x) if not is_symbolic(x) else x for x in list(g))
    eom = ChainEquations(q, u, udot, M, f, Fr, u, sp.eye(n), gt, chain, TIME, chain.name,
                         tuple(inter))
    if speeds is None:
        return eom
    return change_speeds(eom, speeds)


def change_speeds(eom, speeds, u=None):
    r"""The same equations in the generalized speeds :math:`u' = W(q)u` (eq. (kane-speeds)).

    With :math:`\dot q = Ku` and :math:`u = W^{-1}u'` the partial velocities become those of
    u times :math:`W^{-1}`, so Kane's equations in the new speeds are

    .. math:: \underbrace{W^{-T}MW^{-1}}_{M'}\dot u' = W^{-T}\big(f - M\,\tfrac{d}{dt}(W^{-1})u'
              \big) + W^{-T}B\tau .

    Parameters
    ----------
    eom : a :class:`ChainEquations` or any MassMatrixForm with m speeds
    speeds : m x m matrix W in the coordinates q
    u : list of m new speed Symbols (default ``w1..wm``)

    Returns
    -------
    MassMatrixForm with ``q``, the new ``u``, ``mass_matrix``, ``forcing``, ``kinematics``,
    ``input_matrix``

    Raises
    ------
    ValueError if W is not square of the right size or not invertible.

    Examples
    --------
    >>> q, u, w = sp.symbols('q u w')
    >>> e = mass_matrix_form([q], [u], [[2]], [-sp.sin(q)])
    >>> e2 = change_speeds(e, [[2]], u=[w])
    >>> e2.mass_matrix, e2.kinematics
    (Matrix([[1/2]]), Matrix([[w/2]]))
    """
    fname = "change_speeds"
    if not isinstance(eom, MassMatrixForm):
        raise _value_checks.refusal(
            TypeError, f"{fname}: eom: expected a MassMatrixForm, got {_value_checks._describe(eom)}")
    m = eom.u.shape[0]
    W = _value_checks.sym_matrix(speeds, f"{fname}: speeds").applyfunc(_value_checks._exact)
    _meaning_checks.independent_of(W, list(eom.u) + [eom.t], f"{fname}: speeds",
                           "u' = W(q) u: W depends on the coordinates only")
    if W.shape != (m, m):
        raise _value_checks.refusal(
            ValueError, f"{fname}: speeds: expected an {m} x {m} matrix W (new u = W u), got "
                        f"shape {W.shape}")
    _check_invertible(W, eom.q, "speeds", fname)
    unew = _symbol_column(list(sp.symbols(f"w1:{m + 1}")) if u is None else u, "u", fname)
    if set(unew) & (set(eom.q) | {eom.t}):
        raise _value_checks.error(f"{fname}: u", "new speed symbols distinct from the coordinates "
                            "and time", [list(unew)], "a speed needs its own symbol")
    if unew.shape[0] != m:
        raise _value_checks.refusal(ValueError, f"{fname}: u: expected {m} symbols, got {unew.shape[0]}")
    Winv = W.inv().applyfunc(sp.simplify)
    old = Winv * unew
    sub = dict(zip(eom.u, old))
    inter = getattr(eom, "intermediates", ())
    clash = {w for w, _ in inter} & (set(unew) | set(eom.q))
    if clash:                               # a nested form's w1, w2... renamed out of the way
        taken = {str(x) for x in unew}
        fresh = {}
        for w, _ in inter:
            name = "_" + w.name
            while name in taken:
                name = "_" + name
            fresh[w] = sp.Symbol(name)
        sub.update(fresh)
        inter = tuple((fresh[w], e.xreplace(fresh)) for w, e in inter)
    K = eom.kinematics.xreplace(sub)
    qd = K
    Wdot = sp.zeros(m, m)
    for qi, r in zip(eom.q, qd):
        Wdot += sp.diff(Winv, qi) * r
    M = eom.mass_matrix.xreplace(sub)
    f = eom.forcing.xreplace(sub)
    Mn = (Winv.T * M * Winv).applyfunc(sp.expand)
    fn = (Winv.T * (f - M * (Wdot * unew))).applyfunc(sp.expand)
    Bn = (Winv.T * eom.input_matrix).applyfunc(sp.expand)
    out = mass_matrix_form(eom.q, unew, Mn, fn, kinematics=qd.applyfunc(sp.expand),
                           input_matrix=Bn, t=eom.t, name=getattr(eom, "name", "system"))
    if inter:                               # a nested form: its intermediates hold u too
        from dataclasses import replace
        out = replace(out, intermediates=tuple((w, e.xreplace(sub)) for w, e in inter))
    return out


# --------------------------------------------------------------------------
# linearization about an operating point
# --------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class Linearization:
    r"""State-space form :math:`\delta\dot x = A\,\delta x + B\,\delta\tau` about an operating
    point, :math:`x = (q, u)`: ``A`` ((n+m) x (n+m)) and ``B`` ((n+m) x k) as sympy matrices
    (exact, or in the symbols left free), ``state`` (the symbols of x), ``point`` (their values).
    :meth:`numeric` gives float arrays, :meth:`eigenvalues` the eigenvalues of A."""
    A: sp.Matrix
    B: sp.Matrix
    state: tuple
    point: tuple

    def numeric(self):
        """(A, B) as float arrays; ValueError if a symbol is left free."""
        free = self.A.free_symbols | self.B.free_symbols
        if free:
            raise _value_checks.refusal(
                ValueError, f"Linearization.numeric: symbols {sorted(map(str, free))} have no "
                            f"value; pass values=... to linearize")
        return (np.array(self.A.evalf(), dtype=float).reshape(self.A.shape),
                np.array(self.B.evalf(), dtype=float).reshape(self.B.shape))

    def eigenvalues(self):
        """Eigenvalues of the numeric A (complex array)."""
        return np.linalg.eigvals(self.numeric()[0])


def linearize(eom, q0, u0=None, tau0=None, values=None, t0=0, equilibrium=True,
              tol: Tolerance = 1e-9):
    r"""Linearized equations of motion of any :class:`~robodyn.equations.MassMatrixForm`.

    With :math:`\dot q = K(q)u` and :math:`\dot u = M^{-1}(f + B\tau)`, the Jacobians at the
    operating point :math:`(q_0, u_0, \tau_0)` are (§6.5.1)

    .. math:: A = \begin{bmatrix} \partial(Ku)/\partial q & K \\
              M^{-1}\big(\partial(f + B\tau)/\partial q - \partial M/\partial q\,\dot u_0\big)
              & M^{-1}\,\partial f/\partial u\end{bmatrix},\qquad
              B_x = \begin{bmatrix}0\\ M^{-1}B\end{bmatrix},

    where :math:`\dot u_0 = M^{-1}(f + B\tau_0)` vanishes at an equilibrium. Exact symbolic
    derivatives; numbers come from :meth:`Linearization.numeric`.

    Parameters
    ----------
    eom : MassMatrixForm (Kane's, Lagrange's, any method's)
    q0 : n numbers or sympy expressions (the operating configuration)
    u0 : m speeds (default zeros); tau0 : k inputs (default zeros)
    values : dict of parameter values (symbol or name -> number), optional
    t0 : time of the operating point
    equilibrium : if True (default), refuse an operating point where :math:`\dot x \ne 0`
    tol : tolerance of that test for numeric points

    Returns
    -------
    Linearization

    Raises
    ------
    TypeError for an eom that is not a MassMatrixForm; ValueError for wrong lengths, or an
    operating point that is not an equilibrium (with ``equilibrium=True``).

    Examples
    --------
    A pendulum hanging down, :math:`\ddot q = -(g/l)\sin q`: eigenvalues :math:`\pm i\sqrt{g/l}`.

    >>> q, u = sp.symbols('q u')
    >>> pend = mass_matrix_form([q], [u], [[1]], [-4 * sp.sin(q)])
    >>> linearize(pend, [0]).A
    Matrix([
    [ 0, 1],
    [-4, 0]])
    """
    fname = "linearize"
    if not isinstance(eom, MassMatrixForm):
        raise _value_checks.refusal(
            TypeError, f"{fname}: eom: expected a MassMatrixForm (equations of any method), "
                       f"got {_value_checks._describe(eom)}")
    q, u, t = list(eom.q), list(eom.u), eom.t
    n, m = len(q), len(u)
    Bm = eom.input_matrix
    k = Bm.shape[1]

    def point(x, size, what):
        if x is None:
            return [sp.S.Zero] * size
        v = _value_checks.vector(x, size, f"{fname}: {what}")
        return [_value_checks._exact(e) for e in (list(v) if isinstance(v, sp.MatrixBase) else v)]

    qv, uv, tv = point(q0, n, f"q0 ({n} coordinates)"), point(u0, m, f"u0 ({m} speeds)"), \
        point(tau0, k, f"tau0 ({k} inputs)")
    sub = {}
    if values:
        if not isinstance(values, dict):
            raise _value_checks.refusal(
                TypeError, f"{fname}: values: expected a dict, got {_value_checks._describe(values)}")
        names = {str(s): s for s in eom.parameters()}
        for key, v in values.items():
            if not isinstance(key, (str, sp.Symbol)):
                raise _value_checks.error(f"{fname}: values", "keys that are Symbols or names",
                                    key, exc=TypeError)
            sym = names.get(key, sp.Symbol(key)) if isinstance(key, str) else key
            if sym in set(q) | set(u) | {t}:
                raise _value_checks.error(f"{fname}: values[{key}]", "a parameter (not a coordinate, "
                                    "speed or time: those are q0, u0, t0)", str(sym))
            sub[sym] = _value_checks.assumed_value(sym, _value_checks._exact(
                _value_checks.scalar(v, f"{fname}: values[{key}]")), f"{fname}: values[{key}]")
    at = dict(zip(q, qv))
    at.update(zip(u, uv))
    _value_checks.flag(equilibrium, f"{fname}: equilibrium")
    tol = _value_checks.tolerance(tol, f"{fname}: tol")
    t0 = _value_checks.scalar(t0, f"{fname}: t0")
    at[t] = _value_checks._exact(t0)
    tau = sp.Matrix(sp.symbols(f"_tau0:{k}")) if k else sp.zeros(0, 1)
    done = {}                               # a nested form's intermediates, written in
    for w, e in getattr(eom, "intermediates", ()):
        done[w] = e.xreplace(done)
    M = eom.mass_matrix.xreplace(done).xreplace(sub)
    rhs = (eom.forcing + Bm * tau).xreplace(done).xreplace(sub)
    qd = eom.kinematics.xreplace(done).xreplace(sub)
    tv = [e.xreplace(sub) if isinstance(e, sp.Basic) else e for e in tv]
    ev = {**at, **dict(zip(tau, tv))}

    def val(X):
        return X.xreplace(ev).applyfunc(lambda e: sp.nsimplify(e) if e.has(sp.Float) else e)

    M0 = val(M)
    det = sp.simplify(M0.det())
    if det == 0 or (det.is_number and abs(complex(det.evalf())) < 1e-300):
        raise _value_checks.error(f"{fname}: values", "parameters that make the mass matrix "
                            "invertible at the operating point", f"M = {M0.tolist()}, det M = 0",
                            "a zero mass or length? the equations have no unique solution")
    if not M0.free_symbols:
        _meaning_checks.spd(M0, f"{fname}: mass matrix at q0 (with values)")
    Minv = M0.inv()
    ud0 = (Minv * val(rhs)).applyfunc(sp.simplify)
    qd0 = val(qd)
    if equilibrium:
        xdot = list(qd0) + list(ud0)
        bad = []
        for e in xdot:
            e = sp.simplify(e)
            if e.free_symbols:
                if e != 0:
                    bad.append(e)
            elif abs(complex(e)) > tol:
                bad.append(e)
        if bad:
            raise _value_checks.refusal(
                ValueError, f"{fname}: the operating point q0={qv}, u0={uv}, tau0={tv} is not an "
                            f"equilibrium: xdot has nonzero entries {bad[:4]}; pass "
                            f"equilibrium=False to linearize about a moving state")
    qs = sp.Matrix(q)
    dM = sp.zeros(m, n)
    for j in range(n):
        dM[:, j] = val(sp.diff(M, q[j])) * ud0
    Aqq = val(qd.jacobian(qs))
    Aqu = val(qd.jacobian(sp.Matrix(u)))
    Auq = Minv * (val(rhs.jacobian(qs)) - dM)
    Auu = Minv * val(rhs.jacobian(sp.Matrix(u)))
    A = sp.Matrix.vstack(sp.Matrix.hstack(Aqq, Aqu), sp.Matrix.hstack(Auq, Auu))
    Bx = sp.Matrix.vstack(sp.zeros(n, k), Minv * val(Bm.xreplace(sub)))
    simp = (lambda e: sp.simplify(e)) if A.free_symbols else sp.nsimplify
    return Linearization(A.applyfunc(simp), Bx.applyfunc(simp), tuple(q + u), tuple(qv + uv))

from .._boundary import seal as _seal  # noqa: E402 -- the one boundary (issue 28): last, over the finished module
_seal(globals())
