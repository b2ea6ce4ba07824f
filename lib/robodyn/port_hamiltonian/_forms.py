r"""Port-Hamiltonian dynamics of manipulators, moving bases and vehicle--manipulator systems
(Part VI of the book).

Every form is data you can inspect: its state, Hamiltonian, interconnection matrix J, input
matrix G and outputs :math:`y = G^T\partial H/\partial x`, with
:math:`\dot x = J(x)\,\partial H/\partial x + G u` and the power balance
:math:`\dot H = y^T u` (J is skew, so the first term does no work):

* :class:`FixedBaseForm` -- a fixed-base arm, state (q, pi), eq. (ph-23); its ports
  (actuators, end-effector interaction wrench, gravity) by :meth:`FixedBaseForm.ports`;
  :meth:`FixedBaseForm.numeric_form` is the shared :class:`~robodyn.equations.NumericForm`
  (speeds u = pi), so :func:`~robodyn.equations.max_difference` compares it with Lagrange's equations.
* :class:`BaseForm` -- one body on a Lie group, Lie--Poisson: :math:`\dot p = \widetilde{ad}_p
  \partial H/\partial p + w` (ph-37).
* :class:`VMSForm` -- the vehicle--manipulator form (ph-47) with the Hamiltonian (ph-49); the
  vehicle carries a chain or, built by ``VehicleManipulator.from_tree``, a kinematic tree
  read from a URDF (a quadruped in free flight).
* :class:`DecoupledForm` -- the inertially-decoupled form (ph-59): locked velocity, reduced
  inertia, the change of coordinates :math:`\Phi(p, q)`.
* :class:`ReducedEulerLagrange` -- the Lagrangian counterpart (ph-85) with (ph-87), its
  derivatives taken by complex steps (an independent route), and the sign of [28] on request;
  :class:`BoltzmannHamel` -- eq. (ph-89) with its structure coefficients.
* :func:`simulate` -- RK45 (scipy) or the energy--momentum scheme :func:`energy_momentum_step`
  (a discrete gradient with a Cayley step on the base), with energy, momentum, pose and power
  reports in a :class:`PHTrajectory`.

The VMS forms share one numeric interface with :class:`~robodyn.port_hamiltonian.StandardForm`:
``mass_matrix(q)``, ``accelerations(q, nu, pose=None, w=None, tau=None)`` (:math:`(\dot v,
\ddot q)` at the velocities ``nu = (v, qd)``), ``state(pose, v, q, qd)`` and
``velocities(x)`` (their own state from and to velocities), ``rhs(t, x, inputs=None)``,
``energy(x)``, ``momentum(x)`` (total momentum in the space frame). Their **state** is the
base pose as 12 numbers (R row by row, then p) followed by the form's own variables.

Every argument of every public function and method is checked before any work (the forms'
methods by the declarations of :mod:`robodyn.port_hamiltonian._arguments`), refusals name the function or
method called and its argument, and a result that overflows float64 is refused, never returned.
The VMS forms live in the private module ``robodyn.port_hamiltonian._vms_forms``; import them from here.
"""
from __future__ import annotations

import time
import warnings
from dataclasses import dataclass

import numpy as np

from ..kinds import SpatialInertia, TimeStep, Tolerance
from .. import _value_checks
from .. import _meaning_checks
from . import _arguments as ck
from ._arguments import checked
from ._vms_forms import (BoltzmannHamel, DecoupledForm, ReducedEulerLagrange, VMSForm, _VMSBase,
                        base_momentum6)
from ..dynamics._recursions import _ad6, gravity_torques
from ..rigid_motion._kinematics import SerialChain, _check_spatial_inertia, jacobian_body
from ._vehicle import (SUBGROUPS, StandardForm, VehicleManipulator, _adj_inv, _coadjoint,
                      _pose_of, _pose_rate)

__all__ = ["canonical_matrix", "FixedBaseForm", "BaseForm", "VMSForm", "DecoupledForm",
           "ReducedEulerLagrange", "BoltzmannHamel", "cayley_motion", "energy_momentum_step",
           "simulate", "PHTrajectory", "ConvergenceWarning"]


class ConvergenceWarning(RuntimeWarning):
    """The implicit energy--momentum step stopped at its iteration limit."""


MAX_CANONICAL = 4096
"""The largest n of :func:`canonical_matrix` (a 2n x 2n float matrix: 512 MiB at 4096)."""


def canonical_matrix(n):
    r"""The canonical symplectic matrix :math:`J_{sym} = \begin{pmatrix}0 & 1_n\\ -1_n & 0
    \end{pmatrix}` of (ph-23), 2n x 2n.

    >>> canonical_matrix(1).tolist()
    [[0.0, 1.0], [-1.0, 0.0]]
    """
    n = _value_checks.size(n, "canonical_matrix: n", low=1, high=MAX_CANONICAL,
                     hint="the number of joints")
    J = np.zeros((2 * n, 2 * n))
    J[:n, n:] = np.eye(n)
    J[n:, :n] = -np.eye(n)
    return J


def _dummy_base():
    return np.diag([1.0, 1.0, 1.0, 1.0, 1.0, 1.0])


# --------------------------------------------------------------------------
# the fixed-base manipulator (23)
# --------------------------------------------------------------------------


def _arm_inputs(form, inputs, name):
    """None, a callable inputs(t, x) -> (tau_act, wrench), or that pair (entries may be None)."""
    return ck.pair(form, inputs, name, (("tau_act", ck.optional_torques),
                                        ("wrench", ck.end_effector_wrench)))


class FixedBaseForm:
    r"""A fixed-base arm in port-Hamiltonian form, eq. (ph-23):

    .. math:: \begin{pmatrix}\dot q\\ \dot\pi\end{pmatrix} = J_{sym}
       \begin{pmatrix}\partial H/\partial q\\ \partial H/\partial\pi\end{pmatrix} + G\tau,
       \qquad \dot q = G^T\,\partial H/\partial x,

    state :math:`x = (q, \pi)`, :math:`\pi = M_m(q)\dot q` (ph-24), kinetic co-energy
    :math:`H = \tfrac12\pi^TM_m^{-1}(q)\pi`, :math:`G = (0, 1_n)`. The input
    :math:`\tau = \tau_{act} + J_e^T\mathcal W^e_{int} - g(q)` (ph-31) gathers three ports.

    >>> from robodyn.models import planar_rr
    >>> ph = FixedBaseForm(planar_rr(), gravity=(0, -9.81, 0))
    >>> x = ph.state([0.3, 0.2], [1.0, -1.0])
    >>> bool(abs(ph.hamiltonian(x) - 0.5 * np.array([1, -1]) @ ph.mass_matrix([0.3, 0.2]) @ [1, -1]) < 1e-12)
    True
    """

    def __init__(self, chain, gravity=None):
        self.chain = _value_checks.chain(chain, "FixedBaseForm: chain", SerialChain)
        self.gravity = None if gravity is None else ck.vec(gravity, 3, "FixedBaseForm: gravity")
        self.vms = VehicleManipulator.from_chain(chain, _dummy_base(), "floating")
        self.n = chain.n
        self.name = f"FixedBaseForm({chain.name})"

    def __repr__(self):
        return self.name

    def _state_arg(self, x, name, tol):
        return ck.vec(x, 2 * self.n, f"{name} (q then pi, {2 * self.n} numbers)")

    def _mass(self, q):
        return self.vms.mass_blocks(q)[2]

    @checked(q=ck.joints)
    def mass_matrix(self, q):
        """:math:`M_m(q)`, n x n."""
        return self._mass(q)

    @checked(q=ck.joints, qd=ck.joint_rates)
    def state(self, q, qd):
        """:math:`x = (q, M_m(q)\\dot q)`."""
        return np.concatenate([q, self._mass(q) @ qd])

    @checked(x=ck.state)
    def hamiltonian(self, x):
        r"""Kinetic co-energy :math:`H_{kin} = \tfrac12\pi^TM_m^{-1}\pi` (J)."""
        q, pi = x[:self.n], x[self.n:]
        return float(0.5 * pi @ np.linalg.solve(self._mass(q), pi))

    @checked(x=ck.state)
    def gradient(self, x):
        r""":math:`\partial H/\partial x = (-\tfrac12\dot q^T\partial_kM_m\dot q,\ \dot q)`."""
        return self._gradient(x)

    def _gradient(self, x):
        q, pi = x[:self.n], x[self.n:]
        F = self.vms._frames(q)
        qd = np.linalg.solve(self.vms._mass6(F)[6:, 6:], pi)
        dM = self.vms._dmass(F)[:, 6:, 6:]
        return np.concatenate([-0.5 * np.einsum("i,kij,j->k", qd, dM, qd), qd])

    @checked(x=ck.optional_state)
    def interconnection(self, x=None):
        """:math:`J_{sym}`, 2n x 2n (constant: ``x`` may be left out)."""
        return canonical_matrix(self.n)

    @checked(x=ck.optional_state)
    def input_matrix(self, x=None):
        """G = (0; 1_n), 2n x n (constant: ``x`` may be left out)."""
        return self._input_matrix()

    def _input_matrix(self):
        return np.vstack([np.zeros((self.n, self.n)), np.eye(self.n)])

    @checked(x=ck.state)
    def outputs(self, x):
        r"""The output :math:`y = G^T\partial H/\partial x = \dot q`."""
        return self._input_matrix().T @ self._gradient(x)

    @checked(x=ck.state, tau_act=ck.optional_torques, wrench=ck.end_effector_wrench)
    def input_torque(self, x, tau_act=None, wrench=None):
        r"""The port sum (ph-31): :math:`\tau = \tau_{act} + J_e^T\mathcal W^e_{int} - g(q)`
        (wrench: body wrench on the end effector, (m, f); g from the form's gravity)."""
        return self._input_torque(x[:self.n], tau_act, wrench)

    def _input_torque(self, q, tau_act, W):
        tau = np.zeros(self.n) if tau_act is None else tau_act
        if W is not None:
            tau = tau + jacobian_body(self.chain, q).T @ W
        if self.gravity is not None:
            tau = tau - gravity_torques(self.chain, q, self.gravity)
        return tau

    @checked(x=ck.state, tau_act=ck.optional_torques, wrench=ck.end_effector_wrench)
    def dynamics(self, x, tau_act=None, wrench=None):
        r""":math:`\dot x = J_{sym}\partial H/\partial x + G\tau` with the port sum as :math:`\tau`."""
        return self._dynamics(x, tau_act, wrench)

    def _dynamics(self, x, tau_act, W):
        return (canonical_matrix(self.n) @ self._gradient(x)
                + self._input_matrix() @ self._input_torque(x[:self.n], tau_act, W))

    @checked(t=ck.time, x=ck.state, inputs=_arm_inputs)
    def rhs(self, t, x, inputs=None):
        """dx/dt for ``solve_ivp``; ``inputs`` a pair (tau_act, wrench) or a callable of (t, x)."""
        tau, W = ck.call_inputs(self, inputs, t, x, f"{self.name}.rhs", kind=_arm_inputs)
        return self._dynamics(x, tau, W)

    @checked(q=ck.joints)
    def potential_energy(self, q):
        """Gravitational potential of the links (J), zero without gravity."""
        if self.gravity is None:
            return 0.0
        from ..dynamics._recursions import mechanical_energy
        return float(mechanical_energy(self.chain, q, np.zeros(self.n), self.gravity))

    @checked(x=ck.state, tau_act=ck.optional_torques, wrench=ck.end_effector_wrench)
    def ports(self, x, tau_act=None, wrench=None):
        r"""The power of every port at a state (W), eqs. (ph-31), (ph-33): a dict with
        ``kinetic`` (:math:`\dot H_{kin}`), ``actuators`` (:math:`\langle\tau_{act}|\dot q\rangle`),
        ``interaction`` (:math:`\langle\mathcal W^e_{int}|\mathcal V^e\rangle`), ``gravity``
        (:math:`-\dot H_{pot} = -\langle g|\dot q\rangle`), ``interconnection``
        (:math:`\langle\partial H|J\partial H\rangle`, zero) and ``residual``
        (kinetic - actuators - interaction - gravity, zero up to rounding)."""
        q = x[:self.n]
        e = self._gradient(x)
        qd = e[self.n:]
        xdot = self._dynamics(x, tau_act, wrench)
        out = {"kinetic": float(e @ xdot),
               "actuators": 0.0 if tau_act is None else float(tau_act @ qd),
               "interaction": 0.0, "gravity": 0.0,
               "interconnection": float(e @ canonical_matrix(self.n) @ e)}
        if wrench is not None:
            out["interaction"] = float(wrench @ (jacobian_body(self.chain, q) @ qd))
        if self.gravity is not None:
            out["gravity"] = -float(gravity_torques(self.chain, q, self.gravity) @ qd)
        out["residual"] = out["kinetic"] - out["actuators"] - out["interaction"] - out["gravity"]
        return out

    @checked()
    def numeric_form(self):
        r"""The form as a :class:`~robodyn.equations.NumericForm`: coordinates q, speeds
        :math:`u = \pi`, kinematics :math:`\dot q = M_m^{-1}\pi`, mass matrix 1, forcing
        :math:`-\partial H/\partial q - g(q)`; so ``max_difference`` compares it with Lagrange.
        Its functions check their arguments as the form's methods do."""
        from ..equations import NumericForm
        ph = self
        n = self.n

        class _Form(NumericForm):
            def _args(self, fname, t, q, *u):
                """(q, u) checked, named after this function (u: none or one); the time too."""
                _value_checks.real_number(t, f"{self.name}.{fname}: t", hint="a time in s")
                q = ck.vec(q, n, f"{self.name}.{fname}: q ({n} joint values)")
                return (q,) + tuple(ck.vec(e, n, f"{self.name}.{fname}: u (pi)") for e in u)

            def mass_matrix(self, q, t=0.0):
                self._args("mass_matrix", t, q)
                return np.eye(n)

            def forcing(self, q, u, t=0.0):
                q, u = self._args("forcing", t, q, u)
                out = -ph._gradient(np.concatenate([q, u]))[:n] + ph._input_torque(q, None, None)
                return ck.finite(out, f"{self.name}.forcing")

            def kinematics(self, q, u, t=0.0):
                q, u = self._args("kinematics", t, q, u)
                return ck.finite(np.linalg.solve(ph._mass(q), u), f"{self.name}.kinematics")

            def input_matrix(self, q, t=0.0):
                self._args("input_matrix", t, q)
                return np.eye(n)

            def kinematics_jacobian(self, q, u, t=0.0):
                q, u = self._args("kinematics_jacobian", t, q, u)
                M = ph._mass(q)
                qd = np.linalg.solve(M, u)
                dM = ph.vms.mass_matrix_derivatives(q)[:, 6:, 6:]
                J = np.zeros((n, n + 1))
                for k in range(n):
                    J[:, k] = -np.linalg.solve(M, dM[k] @ qd)
                return ck.finite(J, f"{self.name}.kinematics_jacobian")

        out = _Form(n, n, n, self.name)
        out._made_from = (_numeric_form_of, (self,))    # pickled as what it was made of
        return out


# --------------------------------------------------------------------------
# the moving base, Lie-Poisson (37)
# --------------------------------------------------------------------------


def _body_inputs(form, w, name):
    """None, a callable inputs(t, x) -> w, or a base wrench w."""
    return w if w is None or ck.is_callable(w) else ck.base_wrench(form, w, name)


class BaseForm:
    r"""One rigid body (a vehicle) on its Lie group, eq. (ph-37):
    :math:`\dot p = \widetilde{ad}_p\,\partial H/\partial p + \mathrm w`,
    :math:`\mathrm v = \partial H/\partial p`, :math:`\dot h = \chi_h(\mathrm v)`, with
    :math:`H = \tfrac12 p^TI^{-1}p` (ph-36).

    State: the pose (12 numbers) then the body momentum p (nb).

    >>> from robodyn import spatial_inertia
    >>> body = BaseForm(spatial_inertia(2.0, [0.1, 0.2, 0.3]))
    >>> x = body.state(np.eye(4), [0, 0, 1, 1, 0, 0])
    >>> round(body.hamiltonian(x), 6)
    1.15
    """

    def __init__(self, inertia: SpatialInertia, base_joint="floating"):
        if not isinstance(base_joint, str) or base_joint not in ("floating", "planar"):
            raise _value_checks.error("BaseForm: base_joint", "'floating' or 'planar'", base_joint,
                                exc=ValueError if isinstance(base_joint, str) else TypeError)
        G = _check_spatial_inertia(_value_checks.real_array(inertia, "BaseForm: inertia",
                                                      allow_nonfinite=True), "BaseForm: inertia")
        self.group = SUBGROUPS[base_joint]
        S = self.group.basis
        self.inertia = S.T @ G @ S
        self.nb = self.group.dim
        self.size = 12 + self.nb
        self.name = "BaseForm"

    def _state_arg(self, x, name, tol):
        x = ck.vec(x, self.size, f"{name} (pose 12, then {self.nb} momentum numbers)")
        return ck.pose_part(x, name, tol)

    @checked(pose=ck.base_pose, v=ck.base_twist)
    def state(self, pose, v):
        """The state (pose, p = I v) of a pose and a body twist v."""
        return np.concatenate([pose[:3, :3].ravel(), pose[:3, 3], self.inertia @ v])

    @checked(x=ck.state)
    def hamiltonian(self, x):
        """(ph-36), the kinetic co-energy (J)."""
        p = x[12:]
        return float(0.5 * p @ np.linalg.solve(self.inertia, p))

    @checked(x=ck.state)
    def interconnection(self, x):
        r""":math:`\widetilde{ad}_p` (nb x nb), skew."""
        S = self.group.basis
        return S.T @ _coadjoint(S @ x[12:]) @ S

    @checked(t=ck.time, x=ck.state, inputs=_body_inputs)
    def rhs(self, t, x, inputs=None):
        """dx/dt of (ph-37); ``inputs`` a base wrench w or a callable ``inputs(t, x) -> w``."""
        p = x[12:]
        v = np.linalg.solve(self.inertia, p)
        w = np.zeros(self.nb) if inputs is None else inputs
        if ck.is_callable(inputs):
            w = ck.base_wrench(self, inputs(t, x), f"{self.name}.rhs: inputs(t, x)")
        S = self.group.basis
        return np.concatenate([_pose_rate(_pose_of(x), S @ v), S.T @ _coadjoint(S @ p) @ S @ v + w])

    @checked(x=ck.rigid_state)
    def momentum(self, x):
        """Momentum in the space frame, :math:`Ad_{H^{-1}}^T S p` (6,)."""
        return _adj_inv(_pose_of(x)).T @ (self.group.basis @ x[12:])


# --------------------------------------------------------------------------
# energy-momentum integration
# --------------------------------------------------------------------------


def cayley_motion(xi):
    r"""The rigid motion F with :math:`Ad_F = \mathrm{cay}(ad_\xi) = (1 - \tfrac12ad_\xi)^{-1}
    (1 + \tfrac12ad_\xi)`, in closed form: with :math:`a = 1 - \tfrac12[\omega]`,
    :math:`R = a^{-1}a^T` and :math:`p = a^Tv/\det a` (because the lower-left block of
    cay(ad) is :math:`a^{-1}[v]a^{-T} = [p]R`).

    >>> F = cayley_motion([0.1, -0.2, 0.3, 1.0, 2.0, 3.0])
    >>> from robodyn import adjoint, ad
    >>> A = ad([0.1, -0.2, 0.3, 1.0, 2.0, 3.0])
    >>> bool(np.allclose(adjoint(F), np.linalg.solve(np.eye(6) - A / 2, np.eye(6) + A / 2)))
    True
    """
    return _value_checks.finite_result(_cayley(ck.vec(xi, 6, "cayley_motion: xi")), "cayley_motion")


def _cayley(xi):
    r"""cay of a checked twist, in the closed form :math:`R = 1 + c_1[n] + c_2[n]^2`,
    :math:`p = (v + s\,n\times v)/(1 + s^2)` with :math:`u = \omega/2 = s\,n` (|n| = 1),
    :math:`c_1 = 2s/(1 + s^2)`, :math:`c_2 = 2s^2/(1 + s^2)` (that is :math:`a^{-1}a^T` and
    :math:`a^Tv/\det a`, :math:`\det a = 1 + s^2`), evaluated without overflow for any finite
    :math:`\omega`: R stays a rotation to rounding however large the angle."""
    u, v = 0.5 * xi[:3], xi[3:]
    m = float(np.abs(u).max())
    F = np.eye(4)
    if m == 0.0:
        F[:3, 3] = v
        return F
    s = m * float(np.sqrt((u / m) @ (u / m)))
    n = u / s
    if s < 1.0:
        c1, c2, d = 2 * s / (1 + s * s), 2 * s * s / (1 + s * s), 1 / (1 + s * s)
    else:
        r = 1 / s
        c1, c2, d = 2 / (s + r), 2 / (1 + r * r), r * r / (1 + r * r)
    N = np.array([[0, -n[2], n[1]], [n[2], 0, -n[0]], [-n[1], n[0], 0]])
    F[:3, :3] = np.eye(3) + c1 * N + c2 * (N @ N)
    F[:3, 3] = d * v + 0.5 * c1 * np.cross(n, v)
    return F


def energy_momentum_step(form, x, dt: TimeStep, inputs=None, t=0.0, tol: Tolerance = 1e-13,
                         max_iter=60):
    r"""One step of the energy--momentum scheme for the VMS form (ph-47).

    A discrete gradient (Gonzalez) :math:`\bar\nabla H` of the reduced state y = (p, q, pi)
    replaces :math:`\partial H/\partial x`, with the interconnection at the midpoint:

    .. math:: p' = p + \tfrac h2\,ad^T_{\bar v}(p + p') + h\bar{\mathrm w},\quad
       q' = q + h\bar\nabla_\pi H,\quad \pi' = \pi - h\bar\nabla_qH + h\bar\tau,
       \quad H' = H\,F,\ Ad_F = \mathrm{cay}(h\,ad_{\bar v}),

    :math:`\bar v = \bar\nabla_pH`. Then :math:`H(y') - H(y) = h(\langle\bar{\mathrm w}|\bar v
    \rangle + \langle\bar\tau|\bar\nabla_\pi H\rangle)` exactly (J skew), the pose stays a rigid
    motion, and without inputs :math:`p' = Ad_F^Tp`, so the total momentum
    :math:`Ad_{H^{-1}}^Tp` is conserved exactly. Inputs are evaluated at time t + h/2 and at
    the state whose momenta and joints (p, q, pi) are the step's midpoint and whose base pose
    is the step's start pose H (the pose moves only after the step, by F). The implicit equations are solved by fixed-point
    iteration while it contracts fast, and by Newton's method with a finite-difference Jacobian
    otherwise (stiff state-dependent inputs, light links), to ``tol``; at most ``max_iter``
    iterations (ConvergenceWarning beyond), RuntimeError when the iteration diverges.

    Returns
    -------
    (x_next, info) with ``info`` a dict: ``iterations``, ``sweeps`` (evaluations of the step's
    right-hand side, Jacobian columns included), ``power`` (the discrete supplied power).
    """
    fname = "energy_momentum_step"
    _scheme_form(form, fname)
    x = ck.vms_state(x, form.nb, form.n, f"{fname}: x", ck.POSE_TOL)
    dt = _step_size(dt, fname)
    t = ck.time(form, t, f"{fname}: t")
    tol = _value_checks.tolerance(tol, f"{fname}: tol")
    max_iter = _value_checks.size(max_iter, f"{fname}: max_iter", low=1, high=10**4)
    inputs = ck.vms_inputs(form, inputs, f"{fname}: inputs")
    x1, info = _em_step(form, x, dt, inputs, t, tol, max_iter, fname)
    _value_checks.finite_result([x1, info["power"]], fname)
    return x1, info


def _scheme_form(form, fname):
    """The energy--momentum scheme's form: a VMSForm without gravity."""
    if not isinstance(form, VMSForm):
        raise _value_checks.refusal(
            TypeError, f"{fname}: form: expected a VMSForm (the energy-momentum scheme), got "
                       f"{_value_checks.describe(form)}")
    if form.gravity is not None:
        raise _value_checks.refusal(
            ValueError, f"{fname}: form: gravity makes the potential depend on the base pose; "
                        "the scheme handles inputs and kinetic energy only (pass gravity forces "
                        "as inputs or use simulate(method='RK45'))")


def _em_step(form, x, dt, inputs, t, tol, max_iter, fname):
    """The step of :func:`energy_momentum_step` at checked arguments."""
    H0 = _pose_of(x)
    b, n = form.nb, form.n
    y0 = x[12:]
    E0, g0 = form._energy_gradient(y0)
    _value_checks.finite_result([E0, g0], fname)
    S = form.vms.base_joint.basis
    y1 = y0 + dt * _vms_ydot(form, y0, g0, inputs, t, x, fname)

    count = [0]

    def sweep(y1):
        """The step's right-hand side at the guess y1: (new y1, vbar, w, tau, gbar)."""
        count[0] += 1
        ym = 0.5 * (y0 + y1)
        E1 = form._energy_gradient(y1)[0]
        gm = form._energy_gradient(ym)[1]
        d = y1 - y0
        dd = d @ d
        gbar = gm + ((E1 - E0 - gm @ d) / dd) * d if dd > 1e-300 else gm
        xm = np.concatenate([x[:12], ym])
        w, tau = ck.call_inputs(form, inputs, t + 0.5 * dt, xm, fname)
        vbar = gbar[:b]
        adT = (S.T @ _ad6(S @ vbar) @ S).T
        p1 = np.linalg.solve(np.eye(b) - 0.5 * dt * adT, (np.eye(b) + 0.5 * dt * adT) @ y0[:b] + dt * w)
        q1 = y0[b:b + n] + dt * gbar[b + n:]
        pi1 = y0[b + n:] - dt * gbar[b:b + n] + dt * tau
        return np.concatenate([p1, q1, pi1]), vbar, w, tau, gbar

    # fixed-point sweeps while they contract fast; otherwise Newton on r(y) = y - sweep(y) with a
    # finite-difference Jacobian (built once, rebuilt when Newton slows down)
    it, last, jac = 0, np.inf, None
    scale = 1.0 + np.abs(y0).max()
    for it in range(1, max_iter + 1):
        new, vbar, w, tau, gbar = sweep(y1)
        r = y1 - new
        change = np.abs(r).max()
        if not np.isfinite(change) or change > 1e6 * scale:
            raise RuntimeError(f"{fname}: the iteration diverged at sweep {it} (change "
                               f"{change:.3g}): the step h = {dt:g} s is too large for the inputs' "
                               f"stiffness or the speeds; take a smaller step")
        if change <= tol * max(1.0, np.abs(new).max()):
            y1 = new
            break
        if jac is None and change < 0.3 * last:
            y1 = new                                      # contracting: keep sweeping
        else:
            if jac is None or change > 0.3 * last:
                m = y1.size
                jac = np.eye(m)
                for k in range(m):
                    e = np.zeros(m)
                    e[k] = 1e-7 * (1.0 + abs(y1[k]))
                    jac[:, k] = (e - (sweep(y1 + e)[0] - new)) / e[k]
            y1 = y1 - np.linalg.solve(jac, r)
        last = change
    else:
        warnings.warn(f"{fname}: no convergence in {max_iter} iterations (last change "
                      f"{change:.2g}); take a smaller step", ConvergenceWarning, stacklevel=3)
    H1 = H0 @ _cayley(dt * (S @ vbar))
    power = float(w @ vbar + tau @ gbar[b + n:])
    return (np.concatenate([H1[:3, :3].ravel(), H1[:3, 3], y1]),
            {"iterations": it, "sweeps": count[0], "power": power})


def _step_size(dt, fname):
    """A fixed time step: a positive number of seconds, at most 10 s (sympy numbers read as
    numbers, symbols refused)."""
    return _value_checks.real_number(dt, f"{fname}: dt", low=0, strict_low=True, high=10.0,
                               hint="a time step in seconds")


MAX_RK45_EVALUATIONS = 5_000_000
"""Budget of right-hand-side evaluations of one ``simulate(method='RK45')`` run."""


def _vms_ydot(form, y, g, inputs, t, x, fname):
    b, n = form.nb, form.n
    w, tau = ck.call_inputs(form, inputs, t, x, fname)
    pd = form._coadjoint(y[:b]) @ g[:b] + w
    return np.concatenate([pd, g[b + n:], -g[b:b + n] + tau])


@dataclass(frozen=True)
class PHTrajectory:
    r"""A simulation with its reports. ``t`` (N,), ``x`` (N, size) states of ``form``;
    ``energy`` (N,) kinetic (+ potential); ``supplied`` (N,) the supplied energy
    :math:`\int_0^t\langle\mathrm w|\mathrm v\rangle + \langle\tau|\dot q\rangle` (integrated
    with the state by RK45; the scheme's own discrete power for the energy--momentum method);
    ``momentum`` (N, 6) in the space frame; ``pose_error`` (N,); ``method``; ``evaluations``
    (right-hand sides, or sweeps of the implicit step); ``wall_time`` (s), the run's duration:
    a measurement of the run, not a field of the result (two runs with equal results compare
    equal)."""

    t: np.ndarray
    x: np.ndarray
    energy: np.ndarray
    supplied: np.ndarray
    momentum: np.ndarray
    pose_error: np.ndarray
    method: str
    evaluations: int

    @property
    def wall_time(self) -> float:
        """The run's duration (s); NaN for a trajectory not made by :func:`simulate`."""
        return self.__dict__.get("_wall_time", float("nan"))

    @property
    def energy_error(self) -> float:
        """max ``|E(t) - E(0) - supplied(t)|`` (J)."""
        return float(np.abs(self.energy - self.energy[0] - self.supplied).max())

    @property
    def momentum_error(self) -> float:
        """max ``|momentum(t) - momentum(0)|`` (N s, N m s)."""
        return float(np.abs(self.momentum - self.momentum[0]).max())


def simulate(form, x0, t_span, method="RK45", dt=None, inputs=None, rtol=1e-9, atol=1e-11,
             n_out=200, momentum=True):
    r"""Simulate a VMS form from the state ``x0`` over ``t_span`` = (t0, t1) (s).

    ``method``: ``"RK45"`` (scipy's ``solve_ivp``, tolerances ``rtol``, ``atol``; the pose is
    12 numbers and drifts off SE(3) by the integration error) or ``"energy-momentum"``
    (:func:`energy_momentum_step`, fixed step ``dt``, :class:`VMSForm` only). ``inputs``:
    a pair (w, tau) or a callable ``inputs(t, x) -> (w, tau)``. Output on ``n_out`` points
    (RK45) or every step (energy-momentum). The right-hand sides of :class:`~robodyn.port_hamiltonian.StandardForm` and
    :class:`VMSForm` and the scheme's co-energy gradient run in O(n) in the compiled engine
    (see :mod:`robodyn.port_hamiltonian`); the reports are computed for all output states at once.
    The energy (with gravity) and momentum reports need the output poses within 1e-6 of rigid
    motions: a run that drifts further is refused (tighten ``rtol``, ``atol``).

    Returns
    -------
    PHTrajectory

    >>> from robodyn.models import planar_rr
    >>> from robodyn import spatial_inertia
    >>> vms = VehicleManipulator.from_chain(planar_rr(), spatial_inertia(5.0, [1, 1, 1]), "planar")
    >>> f = VMSForm(vms)
    >>> x0 = f.state(np.eye(4), [0.2, 0.1, 0.0], [0.4, 0.5], [1.0, -1.0])
    >>> tr = simulate(f, x0, (0, 1.0), method="energy-momentum", dt=0.05)
    >>> bool(tr.energy_error < 1e-12 and tr.momentum_error < 1e-12)
    True
    """
    if not isinstance(form, (_VMSBase, StandardForm)):
        raise _value_checks.refusal(
            TypeError, f"simulate: form: expected a VMS form (StandardForm, VMSForm, "
                       f"DecoupledForm, ReducedEulerLagrange), got {_value_checks.describe(form)}")
    x0 = ck.vms_state(x0, form.nb, form.n, "simulate: x0", ck.POSE_TOL)
    if not isinstance(method, str) or method not in ("RK45", "energy-momentum"):
        raise _value_checks.error("simulate: method", "'RK45' or 'energy-momentum'", method,
                            exc=ValueError if isinstance(method, str) else TypeError)
    t0, t1 = _time_span(t_span)
    inputs = ck.vms_inputs(form, inputs, "simulate: inputs")
    rtol, atol = (_value_checks.tolerance(v, f"simulate: {k}") for k, v in (("rtol", rtol),
                                                                     ("atol", atol)))
    n_out = _value_checks.size(n_out, "simulate: n_out", low=2, high=10**6,
                         item_bytes=8 * (form.size + 10))
    momentum = _value_checks.flag(momentum, "simulate: momentum")
    if dt is not None:
        dt = _step_size(dt, "simulate")
        _meaning_checks.steps(t1 - t0, dt, "simulate: dt", high=10**6, item_bytes=8 * (form.size + 10))
    if method == "energy-momentum":
        if dt is None:
            raise _value_checks.refusal(
                ValueError, "simulate: dt: needed for method='energy-momentum' (fixed step, s)")
        _scheme_form(form, "simulate")
    E0 = _energy(form, x0)
    if not np.isfinite(E0):
        raise _value_checks.refusal(
            ValueError, f"simulate: x0: expected a state of finite energy, got {E0} (an "
                        "overflow: the velocities are too large for float64 arithmetic)")
    start = time.perf_counter()
    if method == "RK45":
        ts, xs, supplied, evals = _run_rk45(form, x0, t0, t1, inputs, rtol, atol, n_out)
    else:
        ts, xs, supplied, evals = _run_scheme(form, x0, t0, t1, dt, inputs)
    wall = time.perf_counter() - start
    perr = _pose_errors(xs)
    if (momentum or form.gravity is not None) and perr.max() > ck.POSE_TOL:
        k = int(np.argmax(perr))
        raise _value_checks.refusal(
            ValueError, f"simulate: result: expected base poses within {ck.POSE_TOL:g} of rigid "
                        f"motions (the energy and momentum reports need them), got a drift of "
                        f"{perr[k]:.3g} at t = {ts[k]:.6g} s (tighten rtol and atol, or use "
                        f"method='energy-momentum')")
    energy = np.array([_energy(form, x) for x in xs])
    mom = _momenta(form, xs) if momentum else np.zeros((len(xs), 6))
    _value_checks.finite_result([xs, energy, supplied, mom], "simulate")
    out = PHTrajectory(ts, xs, energy, supplied, mom, perr, method, evals)
    object.__setattr__(out, "_wall_time", wall)
    return out


def _time_span(t_span):
    """(t0, t1) of a checked ``t_span``: two finite times, t1 > t0, at most 1e6 s apart."""
    if not isinstance(t_span, (list, tuple, np.ndarray)) or np.ndim(t_span) != 1 \
            or len(t_span) != 2:
        _value_checks.no_text(t_span, "simulate: t_span")
        raise _value_checks.error("simulate: t_span", "a pair (t0, t1) of times in seconds", t_span,
                            exc=TypeError)
    t0, t1 = (_value_checks.real_number(s, "simulate: t_span", hint="times in s") for s in t_span)
    if not t1 > t0:
        raise _value_checks.refusal(ValueError, f"simulate: t_span: expected t1 > t0, got {t_span!r}")
    if t1 - t0 > 1e6:
        raise _value_checks.error("simulate: t_span", "a duration of at most 1e6 s", f"{t1 - t0:.3g} s")
    return t0, t1


def _run_rk45(form, x0, t0, t1, inputs, rtol, atol, n_out):
    """(ts, xs, supplied energy, evaluations) by scipy's RK45 at checked arguments."""
    from scipy.integrate import solve_ivp
    count = [0]
    m = form.size

    def f(t, z):                       # the supplied energy rides along as z[-1]
        count[0] += 1
        if count[0] > MAX_RK45_EVALUATIONS:
            raise RuntimeError(f"simulate: RK45 needed more than {MAX_RK45_EVALUATIONS} "
                               f"evaluations before t = {t:.6g} s of {t1:g} s: the motion is "
                               f"stiff or singular; shorten t_span or loosen rtol/atol")
        x = z[:m]
        u = ck.call_inputs(form, inputs, t, x, "simulate")
        out = np.empty(m + 1)
        out[:m] = form.rhs(t, x, u)
        out[m] = float(np.concatenate(u) @ _velocities(form, x))
        return out

    def f_free(t, x):                  # no inputs: nothing supplied
        count[0] += 1
        return form.rhs(t, x)

    z0 = x0 if inputs is None else np.append(x0, 0.0)
    sol = solve_ivp(f if inputs is not None else f_free, (t0, t1), z0, rtol=rtol,
                    atol=atol, t_eval=np.linspace(t0, t1, int(n_out)))
    if not sol.success:
        raise RuntimeError(f"simulate: solve_ivp failed: {sol.message}")
    supplied = np.zeros(len(sol.t)) if inputs is None else sol.y[m]
    return sol.t, np.ascontiguousarray(sol.y[:m].T), supplied, count[0]


def _run_scheme(form, x0, t0, t1, dt, inputs):
    """(ts, xs, supplied energy, sweeps) by the energy--momentum scheme, steps of at most dt."""
    steps = int(np.ceil((t1 - t0) / dt - 1e-9))
    h = (t1 - t0) / steps
    xs, ts, sup = [x0], [t0], [0.0]
    evals = 0
    x = x0
    for k in range(steps):
        x, info = _em_step(form, x, h, inputs, t0 + k * h, 1e-13, 60, "simulate")
        evals += info["sweeps"]
        xs.append(x)
        ts.append(t0 + (k + 1) * h)
        sup.append(sup[-1] + h * info["power"])
    return np.array(ts), np.array(xs), np.array(sup), evals


def _velocities(form, x):
    """(v, qd) of a state of any VMS form (no checks)."""
    if isinstance(form, StandardForm):
        b, n = form.nb, form.n
        return np.concatenate([x[12:12 + b], x[12 + b + n:]])
    return form._velocities(x)


def _energy(form, x):
    """Kinetic (+ potential) energy of a checked state (poses within 1e-6 of rigid motions)."""
    return form.energy(x) if isinstance(form, StandardForm) else form._energy(x)


def _pose_errors(xs):
    """:func:`~robodyn.port_hamiltonian.pose_error` of every state's pose (rows of xs), at once."""
    R = xs[:, :9].reshape(-1, 3, 3)
    err = np.abs(np.swapaxes(R, 1, 2) @ R - np.eye(3)).max(axis=(1, 2))
    return np.maximum(err, np.abs(np.linalg.det(R) - 1.0))


def _momenta(form, xs):
    """The total momentum in the space frame of every state, :math:`Ad_{H^{-1}}^T S_b p` as
    in :meth:`~robodyn.port_hamiltonian.VehicleManipulator.total_momentum`, the frame changes done at
    once (the poses: within 1e-6 of rigid motions)."""
    p6 = np.array([base_momentum6(form.vms, x[12 + form.nb:12 + form.nb + form.n],
                                  _velocities(form, x)) for x in xs])
    R = xs[:, :9].reshape(-1, 3, 3)
    f = np.einsum("kij,kj->ki", R, p6[:, 3:])
    return np.hstack([np.einsum("kij,kj->ki", R, p6[:, :3]) + np.cross(xs[:, 9:12], f), f])

def _numeric_form_of(form):
    """``form.numeric_form()`` (how its numeric twin is made again when unpickled)."""
    return form.numeric_form()


from .._boundary import seal as _seal  # noqa: E402 -- the one boundary (issue 28): last, over the finished module
_seal(globals(), {"VMSForm.accelerations": {"self_checked": True}})  # per-call hot path (ph-47)
