r"""Port-Hamiltonian dynamics of manipulators, moving bases and vehicle--manipulator systems
(Part VI of the book).

Every form is data you can inspect: its state, Hamiltonian, interconnection matrix J, input
matrix G and outputs :math:`y = G^T\partial H/\partial x`, with
:math:`\dot x = J(x)\,\partial H/\partial x + G u` and the power balance
:math:`\dot H = y^T u` (J is skew, so the first term does no work):

* :class:`FixedBaseForm` -- a fixed-base arm, state (q, pi), eq. (ph-23); its ports
  (actuators, end-effector interaction wrench, gravity) by :meth:`FixedBaseForm.ports`;
  :meth:`FixedBaseForm.numeric_form` is the shared :class:`~robodyn.equations.NumericForm`
  (speeds u = pi), so :func:`robodyn.max_difference` compares it with Lagrange's equations.
* :class:`BaseForm` -- one body on a Lie group, Lie--Poisson: :math:`\dot p = \widetilde{ad}_p
  \partial H/\partial p + w` (ph-37).
* :class:`VMSForm` -- the vehicle--manipulator form (ph-47) with the Hamiltonian (ph-49).
* :class:`DecoupledForm` -- the inertially-decoupled form (ph-59): locked velocity, reduced
  inertia, the change of coordinates :math:`\Phi(p, q)`.
* :class:`ReducedEulerLagrange` -- the Lagrangian counterpart (ph-85) with (ph-87), its
  derivatives taken by complex steps (an independent route), and the sign of [28] on request;
  :class:`BoltzmannHamel` -- eq. (ph-89) with its structure coefficients.
* :func:`simulate` -- RK45 (scipy) or the energy--momentum scheme :func:`energy_momentum_step`
  (a discrete gradient with a Cayley step on the base), with energy, momentum, pose and power
  reports in a :class:`PHTrajectory`.

The VMS forms share one numeric interface with :class:`~robodyn.vehicle.StandardForm`:
``mass_matrix(q)``, ``accelerations(q, nu, pose=None, w=None, tau=None)`` (:math:`(\dot v,
\ddot q)` at the velocities ``nu = (v, qd)``), ``state(pose, v, q, qd)`` and
``velocities(x)`` (their own state from and to velocities), ``rhs(t, x, inputs=None)``,
``energy(x)``, ``momentum(x)`` (total momentum in the space frame). Their **state** is the
base pose as 12 numbers (R row by row, then p) followed by the form's own variables.
"""
from __future__ import annotations

import time
import warnings
from dataclasses import dataclass

import numpy as np

from . import _checks
from .dynamics import _ad6, gravity_torques
from .kinematics import SerialChain, _check_spatial_inertia, jacobian_body
from .vehicle import (SUBGROUPS, StandardForm, mechanical_energy, VehicleManipulator, _adj_inv, _coadjoint,
                      _coadjoint_apply, _dposv, _plain,
                      _inputs, _pose_of, _pose_rate, _split_state, check_pose, pose_error)

__all__ = ["canonical_matrix", "FixedBaseForm", "BaseForm", "VMSForm", "DecoupledForm",
           "ReducedEulerLagrange", "BoltzmannHamel", "cayley_motion", "energy_momentum_step",
           "simulate", "PHTrajectory", "ConvergenceWarning"]


class ConvergenceWarning(RuntimeWarning):
    """The implicit energy--momentum step stopped at its iteration limit."""


def canonical_matrix(n):
    r"""The canonical symplectic matrix :math:`J_{sym} = \begin{pmatrix}0 & 1_n\\ -1_n & 0
    \end{pmatrix}` of (ph-23), 2n x 2n.

    >>> canonical_matrix(1).tolist()
    [[0.0, 1.0], [-1.0, 0.0]]
    """
    J = np.zeros((2 * n, 2 * n))
    J[:n, n:] = np.eye(n)
    J[n:, :n] = -np.eye(n)
    return J


def _dummy_base():
    return np.diag([1.0, 1.0, 1.0, 1.0, 1.0, 1.0])


# --------------------------------------------------------------------------
# the fixed-base manipulator (23)
# --------------------------------------------------------------------------


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
        if not isinstance(chain, SerialChain):
            raise TypeError(f"FixedBaseForm: chain: expected a SerialChain, got "
                            f"{_checks._describe(chain)}")
        self.chain = chain
        self.vms = VehicleManipulator.from_chain(chain, _dummy_base(), "floating")
        self.gravity = None if gravity is None else _checks.vector(gravity, 3, "FixedBaseForm: gravity")
        self.n = chain.n
        self.name = f"FixedBaseForm({chain.name})"

    def __repr__(self):
        return self.name

    def mass_matrix(self, q):
        """:math:`M_m(q)`, n x n."""
        return self.vms.mass_blocks(q)[2]

    def state(self, q, qd):
        """:math:`x = (q, M_m(q)\\dot q)`."""
        q = self.vms._q(q, "state")
        qd = _checks.vector(qd, self.n, f"{self.name}.state: qd")
        return np.concatenate([q, self.mass_matrix(q) @ qd])

    def _split(self, x, fname):
        x = _checks.vector(x, 2 * self.n, f"{self.name}.{fname}: x (q then pi)")
        return x[:self.n], x[self.n:]

    def hamiltonian(self, x):
        r"""Kinetic co-energy :math:`H_{kin} = \tfrac12\pi^TM_m^{-1}\pi` (J)."""
        q, pi = self._split(x, "hamiltonian")
        return float(0.5 * pi @ np.linalg.solve(self.mass_matrix(q), pi))

    def gradient(self, x):
        r""":math:`\partial H/\partial x = (-\tfrac12\dot q^T\partial_kM_m\dot q,\ \dot q)`."""
        q, pi = self._split(x, "gradient")
        F = self.vms._frames(q)
        qd = np.linalg.solve(self.vms._mass6(F)[6:, 6:], pi)
        dM = self.vms._dmass(F)[:, 6:, 6:]
        return np.concatenate([-0.5 * np.einsum("i,kij,j->k", qd, dM, qd), qd])

    def interconnection(self, x=None):
        """:math:`J_{sym}`, 2n x 2n (constant)."""
        return canonical_matrix(self.n)

    def input_matrix(self, x=None):
        """G = (0; 1_n), 2n x n."""
        return np.vstack([np.zeros((self.n, self.n)), np.eye(self.n)])

    def outputs(self, x):
        r"""The output :math:`y = G^T\partial H/\partial x = \dot q`."""
        return self.input_matrix().T @ self.gradient(x)

    def input_torque(self, x, tau_act=None, wrench=None):
        r"""The port sum (ph-31): :math:`\tau = \tau_{act} + J_e^T\mathcal W^e_{int} - g(q)`
        (wrench: body wrench on the end effector, (m, f); g from the form's gravity)."""
        q, _ = self._split(x, "input_torque")
        tau = np.zeros(self.n) if tau_act is None else _checks.vector(tau_act, self.n, f"{self.name}: tau_act")
        if wrench is not None:
            W = _checks.vector(wrench, 6, f"{self.name}.input_torque: wrench")
            tau = tau + jacobian_body(self.chain, q).T @ W
        if self.gravity is not None:
            tau = tau - gravity_torques(self.chain, q, self.gravity)
        return tau

    def dynamics(self, x, tau_act=None, wrench=None):
        r""":math:`\dot x = J_{sym}\partial H/\partial x + G\tau` with the port sum as :math:`\tau`."""
        return (self.interconnection() @ self.gradient(x)
                + self.input_matrix() @ self.input_torque(x, tau_act, wrench))

    def rhs(self, t, x, inputs=None):
        """dx/dt for ``solve_ivp``; ``inputs`` a pair (tau_act, wrench) or a callable of (t, x)."""
        _checks.real_number(t, f"{self.name}.rhs: t", hint="a time in s")
        if inputs is None:
            return self.dynamics(x)
        tau, W = inputs(t, x) if callable(inputs) else inputs
        return self.dynamics(x, tau, W)

    def potential_energy(self, q):
        """Gravitational potential of the links (J), zero without gravity."""
        if self.gravity is None:
            return 0.0
        from .dynamics import mechanical_energy
        return float(mechanical_energy(self.chain, q, np.zeros(self.n), self.gravity))

    def ports(self, x, tau_act=None, wrench=None):
        r"""The power of every port at a state (W), eqs. (ph-31), (ph-33): a dict with
        ``kinetic`` (:math:`\dot H_{kin}`), ``actuators`` (:math:`\langle\tau_{act}|\dot q\rangle`),
        ``interaction`` (:math:`\langle\mathcal W^e_{int}|\mathcal V^e\rangle`), ``gravity``
        (:math:`-\dot H_{pot} = -\langle g|\dot q\rangle`), ``interconnection``
        (:math:`\langle\partial H|J\partial H\rangle`, zero) and ``residual``
        (kinetic - actuators - interaction - gravity, zero up to rounding)."""
        q, _ = self._split(x, "ports")
        e = self.gradient(x)
        qd = e[self.n:]
        xdot = self.dynamics(x, tau_act, wrench)
        out = {"kinetic": float(e @ xdot),
               "actuators": 0.0 if tau_act is None else float(np.asarray(tau_act, float) @ qd),
               "interaction": 0.0, "gravity": 0.0,
               "interconnection": float(e @ self.interconnection() @ e)}
        if wrench is not None:
            out["interaction"] = float(np.asarray(wrench, float) @ (jacobian_body(self.chain, q) @ qd))
        if self.gravity is not None:
            out["gravity"] = -float(gravity_torques(self.chain, q, self.gravity) @ qd)
        out["residual"] = out["kinetic"] - out["actuators"] - out["interaction"] - out["gravity"]
        return out

    def numeric_form(self):
        r"""The form as a :class:`~robodyn.equations.NumericForm`: coordinates q, speeds
        :math:`u = \pi`, kinematics :math:`\dot q = M_m^{-1}\pi`, mass matrix 1, forcing
        :math:`-\partial H/\partial q - g(q)`; so ``max_difference`` compares it with Lagrange."""
        from .equations import NumericForm
        ph = self
        n = self.n

        class _Form(NumericForm):
            def mass_matrix(self, q, t=0.0):
                return np.eye(n)

            def forcing(self, q, u, t=0.0):
                x = np.concatenate([q, u])
                return -ph.gradient(x)[:n] + ph.input_torque(x)

            def kinematics(self, q, u, t=0.0):
                return np.linalg.solve(ph.mass_matrix(q), u)

            def input_matrix(self, q, t=0.0):
                return np.eye(n)

            def kinematics_jacobian(self, q, u, t=0.0):
                M = ph.mass_matrix(q)
                qd = np.linalg.solve(M, u)
                dM = ph.vms.mass_matrix_derivatives(q)[:, 6:, 6:]
                J = np.zeros((n, n + 1))
                for k in range(n):
                    J[:, k] = -np.linalg.solve(M, dM[k] @ qd)
                return J

        return _Form(n, n, n, self.name)


# --------------------------------------------------------------------------
# the moving base, Lie-Poisson (37)
# --------------------------------------------------------------------------


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

    def __init__(self, inertia, base_joint="floating"):
        if base_joint not in SUBGROUPS or base_joint in ("revolute", "prismatic"):
            raise ValueError(f"BaseForm: base_joint: expected 'floating' or 'planar', got {base_joint!r}")
        G = np.array(_check_spatial_inertia(inertia, "BaseForm: inertia"), dtype=float)
        self.group = SUBGROUPS[base_joint]
        S = self.group.basis
        self.inertia = S.T @ G @ S
        self.nb = self.group.dim
        self.size = 12 + self.nb

    def state(self, pose, v):
        H = check_pose(pose, "BaseForm.state: pose")
        v = _checks.vector(v, self.nb, "BaseForm.state: v")
        return np.concatenate([H[:3, :3].ravel(), H[:3, 3], self.inertia @ v])

    def hamiltonian(self, x):
        p = _checks.vector(x, self.size, "BaseForm.hamiltonian: x")[12:]
        return float(0.5 * p @ np.linalg.solve(self.inertia, p))

    def interconnection(self, x):
        r""":math:`\widetilde{ad}_p` (nb x nb), skew."""
        p = _checks.vector(x, self.size, "BaseForm.interconnection: x")[12:]
        return self.group.coadjoint(p)

    def rhs(self, t, x, inputs=None):
        _checks.real_number(t, "BaseForm.rhs: t", hint="a time in s")
        x = _checks.vector(x, self.size, "BaseForm.rhs: x")
        p = x[12:]
        v = np.linalg.solve(self.inertia, p)
        w = np.zeros(self.nb) if inputs is None else _checks.vector(
            inputs(t, x) if callable(inputs) else inputs, self.nb, "BaseForm.rhs: w")
        return np.concatenate([_pose_rate(_pose_of(x), self.group.basis @ v),
                               self.group.coadjoint(p) @ v + w])

    def momentum(self, x):
        """Momentum in the space frame, :math:`Ad_{H^{-1}}^T S p` (6,)."""
        x = _checks.vector(x, self.size, "BaseForm.momentum: x")
        return _adj_inv(_pose_of(x)).T @ (self.group.basis @ x[12:])


# --------------------------------------------------------------------------
# the VMS forms
# --------------------------------------------------------------------------


class _VMSBase:
    """What the VMS forms share: the model, sizes, state layout, inputs, gravity."""

    label = ""

    def __init__(self, vms, gravity=None):
        if not isinstance(vms, VehicleManipulator):
            raise TypeError(f"{type(self).__name__}: vms: expected a VehicleManipulator, got "
                            f"{_checks._describe(vms)}")
        self.vms = vms
        self.gravity = None if gravity is None else _checks.vector(
            gravity, 3, f"{type(self).__name__}: gravity")
        self.nb, self.n = vms.nb, vms.n
        self.size = 12 + vms.nb + 2 * vms.n
        self.name = f"{type(self).__name__}({vms.name})"
        self._std = StandardForm(vms, gravity)

    def __repr__(self):
        return self.name

    def _split(self, x, fname):
        return _split_state(x, self.nb, self.n, f"{self.name}.{fname}: x")

    def mass_matrix(self, q, t=0.0):
        """The locked mass matrix :math:`\\mathcal M(q)` of (ph-21)."""
        return self.vms.mass_matrix(q)

    def _generalized(self, H, q, w, tau):
        """(w, tau) plus gravity's generalized forces."""
        if self.gravity is None:
            return w, tau
        g = self.vms.gravity_forces(q, H, self.gravity)
        return w + g[:self.nb], tau + g[self.nb:]

    def energy(self, x):
        """Kinetic + potential energy of a state (J)."""
        return mechanical_energy(self.vms, *self._as_standard(x), self.gravity)

    def _as_standard(self, x):
        H, _, q, _ = self._split(x, "energy")
        nu = self.velocities(x)
        return H, nu[:self.nb], q, nu[self.nb:]

    def momentum(self, x):
        """Total momentum in the space frame (6,), (angular about the origin, linear)."""
        H, v, q, qd = self._as_standard(x)
        return self.vms.total_momentum(H, q, v, qd)

    def supplied_power(self, t, x, inputs=None):
        r"""The power of the inputs, :math:`\langle\mathrm w|\mathrm v\rangle +
        \langle\tau|\dot q\rangle` (W) (gravity excluded: it is in the energy)."""
        _checks.real_number(t, f"{self.name}.supplied_power: t", hint="a time in s")
        w, tau = _inputs(inputs, t, x, self.nb, self.n, f"{self.name}.supplied_power")
        nu = self.velocities(x)
        return float(w @ nu[:self.nb] + tau @ nu[self.nb:])


class VMSForm(_VMSBase):
    r"""The port-Hamiltonian VMS dynamics (ph-47) with the Hamiltonian (ph-49):

    .. math:: \begin{pmatrix}\dot p\\ \dot q\\ \dot\pi\end{pmatrix} = \mathcal J(p)
       \frac{\partial H}{\partial x} + \mathcal G\begin{pmatrix}\mathrm w\\ \tau\end{pmatrix},
       \quad \mathcal J(p) = \begin{pmatrix}\widetilde{ad}_p & 0 & 0\\ 0 & 0 & 1_n\\
       0 & -1_n & 0\end{pmatrix},\quad \mathcal G = \begin{pmatrix}1_b & 0\\ 0 & 0\\ 0 & 1_n
       \end{pmatrix},

    :math:`H = \tfrac12(p, \pi)^T\mathcal M^{-1}(q)(p, \pi)`, outputs
    :math:`(\mathrm v, \dot q) = \mathcal G^T\partial H/\partial x`.

    **State**: pose (12), p (nb), q (n), :math:`\pi` (n).

    >>> from robodyn.models import planar_rr
    >>> from robodyn import spatial_inertia
    >>> vms = VehicleManipulator.from_chain(planar_rr(), spatial_inertia(5.0, [1, 1, 1]))
    >>> ph = VMSForm(vms)
    >>> x = ph.state(np.eye(4), np.ones(6), [0.1, 0.2], [0.3, -0.4])
    >>> bool(np.allclose(ph.velocities(x), np.r_[np.ones(6), 0.3, -0.4]))
    True
    """

    def state(self, pose, v, q, qd):
        """The state from the pose and velocities: :math:`(p, \\pi) = \\mathcal M(v, \\dot q)` (ph-45, ph-46)."""
        H = check_pose(pose, f"{self.name}.state: pose")
        q = self.vms._q(q, "state")
        nu = np.concatenate([self.vms._v(v, "state"), _checks.vector(qd, self.n, f"{self.name}.state: qd")])
        m = self.vms.mass_matrix(q) @ nu
        return np.concatenate([H[:3, :3].ravel(), H[:3, 3], m[:self.nb], q, m[self.nb:]])

    def velocities(self, x):
        """:math:`(\\mathrm v, \\dot q) = \\mathcal M^{-1}(p, \\pi)`."""
        _, p, q, pi = self._split(x, "velocities")
        return np.linalg.solve(self.vms.mass_matrix(q), np.concatenate([p, pi]))

    def _reduced(self, y):
        """(p, q, pi) -> hamiltonian, gradient, M, dM at that point."""
        b, n = self.nb, self.n
        p, q, pi = y[:b], y[b:b + n], y[b + n:]
        vms = self.vms
        F = vms._frames(q)
        M = vms._project(vms._mass6(F))
        m = np.concatenate([p, pi])
        nu = np.linalg.solve(M, m)
        dM = vms._dmass(F)
        dq = -0.5 * np.einsum("i,kij,j->k", nu, dM, nu)
        return 0.5 * m @ nu, np.concatenate([nu[:b], dq, nu[b:]]), M, dM

    def _energy_gradient(self, y):
        r"""(H, dH/dy) at y = (p, q, pi): the compiled engine's O(n) route (zero-velocity
        articulated bodies for nu, :math:`\partial T/\partial q_k = h_k^T ad_{t_k}s_k`) when it
        applies, else :meth:`_reduced`."""
        b, n = self.nb, self.n
        out = self.vms._compiled("vms_hamiltonian", y[b:b + n],
                                 np.concatenate([y[:b], y[b + n:]]))
        if out is None:
            return self._reduced(y)[:2]
        return out

    def hamiltonian(self, x):
        """(ph-49), the kinetic co-energy (J)."""
        _, p, q, pi = self._split(x, "hamiltonian")
        return float(self._energy_gradient(np.concatenate([p, q, pi]))[0])

    def gradient(self, x):
        r""":math:`(\partial H/\partial p, \partial H/\partial q, \partial H/\partial\pi) =
        (\mathrm v, -\tfrac12\nu^T\partial_k\mathcal M\nu, \dot q)` (ph-62 for the decoupled twin)."""
        _, p, q, pi = self._split(x, "gradient")
        return self._energy_gradient(np.concatenate([p, q, pi]))[1]

    def interconnection(self, x):
        r""":math:`\mathcal J(p)`, (nb + 2n) square, skew."""
        _, p, _, _ = self._split(x, "interconnection")
        b, n = self.nb, self.n
        J = np.zeros((b + 2 * n, b + 2 * n))
        J[:b, :b] = self.vms.base_joint.coadjoint(p)
        J[b:, b:] = canonical_matrix(n)
        return J

    def input_matrix(self, x=None):
        r""":math:`\mathcal G`, (nb + 2n) x (nb + n)."""
        b, n = self.nb, self.n
        G = np.zeros((b + 2 * n, b + n))
        G[:b, :b] = np.eye(b)
        G[b + n:, b:] = np.eye(n)
        return G

    def outputs(self, x):
        return self.input_matrix().T @ self.gradient(x)

    def rhs(self, t, x, inputs=None):
        """dx/dt: the pose moves by :math:`\\dot H = H[S\\mathrm v]`, the rest by (ph-47)."""
        _checks.real_number(t, f"{self.name}.rhs: t", hint="a time in s")
        H, p, q, pi = self._split(x, "rhs")
        w, tau = _inputs(inputs, t, x, self.nb, self.n, f"{self.name}.rhs")
        w, tau = self._generalized(H, q, w, tau)
        b, n = self.nb, self.n
        e, pd, pid = self._momentum_rates(p, q, pi, w, tau)
        S = self.vms.base_joint.basis
        return np.concatenate([_pose_rate(H, S @ e[:b]), pd, e[b + n:], pid])

    def _momentum_rates(self, p, q, pi, w, tau):
        r"""(dH/dx, :math:`\dot p`, :math:`\dot\pi`) of (ph-47): :math:`\dot p =
        \widetilde{ad}_p\,\partial H/\partial p + \mathrm w`, :math:`\dot\pi = \tau -
        \partial H/\partial q` (checked arguments, generalized inputs)."""
        b, n = self.nb, self.n
        e = self._energy_gradient(np.concatenate([p, q, pi]))[1]
        S = self.vms.base_joint.basis
        pd = (S.T @ _coadjoint(S @ p) @ S) @ e[:b] + w        # (ph-47): J(p) dH/dx + G u
        return e, pd, tau - e[b:b + n]

    def accelerations(self, q, nu, t=0.0, pose=None, w=None, tau=None):
        r""":math:`(\dot v, \ddot q)` from (ph-47): :math:`\mathcal M^{-1}((\dot p, \dot\pi) -
        \dot{\mathcal M}\nu)`, since :math:`(p, \pi) = \mathcal M(q)\nu`.

        :math:`\mathcal M` once (composite bodies, compiled) and one factorization of it; the
        momentum rates by (ph-47) itself (the compiled co-energy gradient and the coadjoint
        term); :math:`\dot{\mathcal M} = C + C^T` from the Christoffel Coriolis matrix of the
        arm behind six virtual base joints (compiled, O(n^2); equal to
        :math:`\sum_k\partial_k\mathcal M\dot q_k` of :meth:`mass_matrix_derivatives`).

        >>> from robodyn.models import planar_rr
        >>> from robodyn import spatial_inertia
        >>> from robodyn.vehicle import StandardForm
        >>> vms = VehicleManipulator.from_chain(planar_rr(), spatial_inertia(5.0, [1, 1, 1]))
        >>> nu = np.r_[0.1, -0.2, 0.3, 0.0, 0.5, -0.1, 1.0, -2.0]
        >>> a = VMSForm(vms).accelerations([0.3, 0.4], nu, tau=[0.5, -0.5])
        >>> bool(np.allclose(a, StandardForm(vms).accelerations([0.3, 0.4], nu, tau=[0.5, -0.5])))
        True
        """
        vms, b, n = self.vms, self.nb, self.n
        if (pose is None and self.gravity is None and type(t) in (float, int)
                and np.isfinite(t) and _plain(q, n) and _plain(nu, b + n)
                and (w is None or _plain(w, b)) and (tau is None or _plain(tau, n))):
            out = self._accelerations(q, nu, np.zeros(b) if w is None else w,
                                      np.zeros(n) if tau is None else tau)
            if out is not None and np.isfinite(out).all():
                return out                 # clean arrays: the compiled pieces checked q, nu
        fname = f"{self.name}.accelerations"       # the checked path: converts or raises
        _checks.scalar(t, f"{fname}: t")
        q = vms._q(q, "accelerations")
        nu = _checks.vector(nu, vms.dof, f"{fname}: nu")
        w = np.zeros(b) if w is None else _checks.vector(w, b, f"{fname}: w")
        tau = np.zeros(n) if tau is None else _checks.vector(tau, n, f"{fname}: tau")
        H = np.eye(4) if pose is None else check_pose(pose, f"{fname}: pose")
        w, tau = self._generalized(H, q, w, tau)            # + gravity's forces, if any
        out = self._accelerations(q, nu, w, tau, checked=True)
        if out is None or not np.isfinite(out).all():
            raise ValueError(f"{fname}: q: expected a configuration whose mass matrix is "
                             f"positive definite, got a singular or ill-conditioned one")
        return out

    def _accelerations(self, q, nu, w, tau, checked=False):
        """(ph-47)'s accelerations at clean arrays, or None where the compiled pieces decline
        (unless ``checked``: then the numpy route) or M is not positive definite."""
        vms, b, n = self.vms, self.nb, self.n
        M = vms._compiled("vms_crba", q)
        if M is None:
            if not checked:
                return None
            M = vms.mass_matrix(q)
        m = M @ nu
        out = vms._compiled("vms_hamiltonian", q, m)
        if out is None:
            if not checked:
                return None
            out = self._reduced(np.concatenate([m[:b], q, m[b:]]))
        e = out[1]
        rhs = np.empty(b + n)                                 # (p', pi') by (ph-47)
        S = vms.base_joint.basis
        rhs[:b] = w + (_coadjoint_apply(m[:b], e[:b]) if b == 6 else
                       S.T @ _coadjoint_apply(S @ m[:b], S @ e[:b]))
        rhs[b:] = tau - e[b:b + n]
        C = vms._mass_rate(q, nu[b:], half=True)             # M' = C + C^T
        rhs -= C @ nu + nu @ C
        _, x, info = _dposv(M, rhs)                           # Cholesky of M, then two solves
        return x if info == 0 else None


class DecoupledForm(_VMSBase):
    r"""The inertially-decoupled port-Hamiltonian form (ph-59):

    .. math:: \dot{\hat x} = \hat{\mathcal J}(\hat p, \hat q)\frac{\partial\hat H}{\partial\hat x}
       + \hat{\mathcal G}(\hat q)\begin{pmatrix}\mathrm w\\ \tau\end{pmatrix},\quad
       \hat{\mathcal J} = \Phi\mathcal J\Phi^T,\quad \hat{\mathcal G} = \Phi\mathcal G,

    in the coordinates :math:`\hat p = p`, :math:`\hat q = q`, :math:`\hat\pi = \pi - A^Tp`
    (ph-55) with :math:`A = M_b^{-1}M_{bm}`, the Hamiltonian
    :math:`\hat H = \tfrac12\hat p^TM_b^{-1}\hat p + \tfrac12\hat\pi^T\hat M_m^{-1}\hat\pi`
    (ph-60), the reduced inertia :math:`\hat M_m = M_m - M_{bm}^TM_b^{-1}M_{bm}` and

    .. math:: \Phi(p, q) = \begin{pmatrix}1 & 0 & 0\\ 0 & 1 & 0\\ -A^T & -L & 1\end{pmatrix},
       \qquad L(p, q) = \frac{\partial(A^T(q)p)}{\partial q}.

    **State**: pose (12), :math:`\hat p` (nb), q (n), :math:`\hat\pi` (n).

    >>> from robodyn.models import planar_rr
    >>> from robodyn import spatial_inertia
    >>> vms = VehicleManipulator.from_chain(planar_rr(), spatial_inertia(5.0, [1, 1, 1]), "planar")
    >>> f = DecoupledForm(vms)
    >>> x = f.state(np.eye(4), [0.1, 0.2, 0.3], [0.4, 0.5], [1.0, -1.0])
    >>> bool(abs(f.hamiltonian(x) - VMSForm(vms).hamiltonian(VMSForm(vms).state(
    ...     np.eye(4), [0.1, 0.2, 0.3], [0.4, 0.5], [1.0, -1.0]))) < 1e-12)
    True
    """

    def parts(self, q, p=None):
        r"""A dict of the pieces at q (and p): ``A`` (nb x n), ``M_b``, ``M_hat`` (reduced
        inertia), ``dA`` (:math:`\partial_kA`, n x nb x n), ``dM_b``, ``dM_hat``, and with p:
        ``L`` (n x n), ``Phi``."""
        q = self.vms._q(q, "parts")
        b, n = self.nb, self.n
        vms = self.vms
        F = vms._frames(q)
        M = vms._project(vms._mass6(F))
        dM = vms._dmass(F)
        Mb, Mbm, Mm = M[:b, :b], M[:b, b:], M[b:, b:]
        A = np.linalg.solve(Mb, Mbm)
        dA = np.array([np.linalg.solve(Mb, dM[k, :b, b:] - dM[k, :b, :b] @ A) for k in range(n)])
        dMhat = np.array([dM[k, b:, b:] - dM[k, :b, b:].T @ A - A.T @ dM[k, :b, b:]
                          + A.T @ dM[k, :b, :b] @ A for k in range(n)])
        out = dict(A=A, M_b=Mb, M_hat=Mm - Mbm.T @ A, dA=dA, dM_b=dM[:, :b, :b], dM_hat=dMhat)
        if p is not None:
            p = self.vms._v(p, "parts", "p")
            L = np.einsum("kij,i->jk", dA, p)
            Phi = np.eye(b + 2 * n)
            Phi[b + n:, :b] = -A.T
            Phi[b + n:, b:b + n] = -L
            out.update(L=L, Phi=Phi)
        return out

    def locked_velocity(self, q, v, qd):
        r"""The locked velocity :math:`\hat{\mathrm v} = \mathrm v + A(q)\dot q` (paper §5.2)."""
        A = self.parts(q)["A"]
        return self.vms._v(v, "locked_velocity") + A @ _checks.vector(qd, self.n, f"{self.name}: qd")

    def state(self, pose, v, q, qd):
        r""":math:`(\hat p, \hat\pi) = (M_b\hat{\mathrm v}, \hat M_m\dot q)`."""
        H = check_pose(pose, f"{self.name}.state: pose")
        q = self.vms._q(q, "state")
        v = self.vms._v(v, "state")
        qd = _checks.vector(qd, self.n, f"{self.name}.state: qd")
        P = self.parts(q)
        return np.concatenate([H[:3, :3].ravel(), H[:3, 3], P["M_b"] @ (v + P["A"] @ qd), q,
                               P["M_hat"] @ qd])

    def velocities(self, x):
        _, p, q, pi = self._split(x, "velocities")
        P = self.parts(q)
        qd = np.linalg.solve(P["M_hat"], pi)
        return np.concatenate([np.linalg.solve(P["M_b"], p) - P["A"] @ qd, qd])

    def hamiltonian(self, x):
        """(ph-60): the base part plus the arm part (J)."""
        _, p, q, pi = self._split(x, "hamiltonian")
        P = self.parts(q)
        return float(0.5 * p @ np.linalg.solve(P["M_b"], p) + 0.5 * pi @ np.linalg.solve(P["M_hat"], pi))

    def gradient(self, x, _parts=None):
        r""":math:`(\hat{\mathrm v}, -\tfrac12\hat{\mathrm v}^T\partial_kM_b\hat{\mathrm v}
        - \tfrac12\dot q^T\partial_k\hat M_m\dot q, \dot q)` (ph-62)."""
        _, p, q, pi = self._split(x, "gradient")
        P = self.parts(q) if _parts is None else _parts
        vh = np.linalg.solve(P["M_b"], p)
        qd = np.linalg.solve(P["M_hat"], pi)
        dq = (-0.5 * np.einsum("i,kij,j->k", vh, P["dM_b"], vh)
              - 0.5 * np.einsum("i,kij,j->k", qd, P["dM_hat"], qd))
        return np.concatenate([vh, dq, qd])

    def interconnection(self, x, _parts=None):
        r""":math:`\hat{\mathcal J} = \Phi\mathcal J\Phi^T` (ph-68), in closed form
        :math:`\begin{pmatrix}\widetilde{ad}_p & 0 & -\widetilde{ad}_pA\\ 0 & 0 & 1\\
        -A^T\widetilde{ad}_p & -1 & A^T\widetilde{ad}_pA + L^T - L\end{pmatrix}`."""
        _, p, q, _ = self._split(x, "interconnection")
        P = self.parts(q, p) if _parts is None else _parts
        b, n = self.nb, self.n
        adp = self.vms.base_joint.coadjoint(p)
        A, L = P["A"], P["L"]
        J = np.zeros((b + 2 * n, b + 2 * n))
        J[:b, :b] = adp
        J[:b, b + n:] = -adp @ A
        J[b:b + n, b + n:] = np.eye(n)
        J[b + n:, :b] = -A.T @ adp
        J[b + n:, b:b + n] = -np.eye(n)
        J[b + n:, b + n:] = A.T @ adp @ A + L.T - L
        return J

    def input_matrix(self, x, _parts=None):
        r""":math:`\hat{\mathcal G} = \Phi\mathcal G = \begin{pmatrix}1 & 0\\ 0 & 0\\ -A^T & 1
        \end{pmatrix}`."""
        _, _, q, _ = self._split(x, "input_matrix")
        A = (self.parts(q) if _parts is None else _parts)["A"]
        b, n = self.nb, self.n
        G = np.zeros((b + 2 * n, b + n))
        G[:b, :b] = np.eye(b)
        G[b + n:, :b] = -A.T
        G[b + n:, b:] = np.eye(n)
        return G

    def outputs(self, x):
        return self.input_matrix(x).T @ self.gradient(x)

    def rhs(self, t, x, inputs=None):
        _checks.real_number(t, f"{self.name}.rhs: t", hint="a time in s")
        H, p, q, pi = self._split(x, "rhs")
        w, tau = _inputs(inputs, t, x, self.nb, self.n, f"{self.name}.rhs")
        w, tau = self._generalized(H, q, w, tau)
        P = self.parts(q, p)
        e = self.gradient(x, P)
        xd = self.interconnection(x, P) @ e + self.input_matrix(x, P) @ np.concatenate([w, tau])
        v = e[:self.nb] - P["A"] @ e[self.nb + self.n:]          # v = v_hat - A qdot
        return np.concatenate([_pose_rate(H, self.vms.base_joint.basis @ v), xd])

    def accelerations(self, q, nu, t=0.0, pose=None, w=None, tau=None):
        r""":math:`(\dot v, \ddot q)` from (ph-59): :math:`\ddot q = \hat M_m^{-1}(\dot{\hat\pi} -
        \dot{\hat M}_m\dot q)`, :math:`\dot{\hat v} = M_b^{-1}(\dot{\hat p} - \dot M_b\hat v)`,
        :math:`\dot v = \dot{\hat v} - \dot A\dot q - A\ddot q`."""
        q = self.vms._q(q, "accelerations")
        nu = _checks.vector(nu, self.vms.dof, f"{self.name}.accelerations: nu")
        b, n = self.nb, self.n
        H = np.eye(4) if pose is None else check_pose(pose, f"{self.name}.accelerations: pose")
        x = self.state(H, nu[:b], q, nu[b:])
        xd = self.rhs(0.0, x, (np.zeros(b) if w is None else w, np.zeros(n) if tau is None else tau))[12:]
        P = self.parts(q)
        qd = nu[b:]
        vh = nu[:b] + P["A"] @ qd
        qdd = np.linalg.solve(P["M_hat"], xd[b + n:] - np.einsum("kij,k,j->i", P["dM_hat"], qd, qd))
        vhd = np.linalg.solve(P["M_b"], xd[:b] - np.einsum("kij,k,j->i", P["dM_b"], qd, vh))
        Ad = np.einsum("kij,k->ij", P["dA"], qd)
        return np.concatenate([vhd - Ad @ qd - P["A"] @ qdd, qdd])


# --------------------------------------------------------------------------
# the Lagrangian counterparts (85), (87), (89), by complex-step derivatives
# --------------------------------------------------------------------------


def _complex_step_dM(vms, q, h=1e-30):
    """:math:`\\partial\\mathcal M/\\partial q_k` by complex steps (no Lie brackets used)."""
    n = vms.n
    out = np.empty((n, vms.dof, vms.dof))
    for k in range(n):
        qc = np.asarray(q, dtype=complex).copy()
        qc[k] += 1j * h
        out[k] = vms._project(vms._mass6(vms._frames(qc))).imag / h
    return out


class ReducedEulerLagrange(_VMSBase):
    r"""The reduced Euler--Lagrange equations (ph-85) in the locked velocity:

    .. math:: \hat{\mathcal M}(q)\begin{pmatrix}\dot{\hat v}\\ \ddot q\end{pmatrix}
       + \hat{\mathcal C}_1\begin{pmatrix}\hat v\\ \dot q\end{pmatrix}
       + \hat{\mathcal C}_2\begin{pmatrix}\hat v\\ \dot q\end{pmatrix}
       = \begin{pmatrix}\hat{\mathrm w}\\ \hat\tau\end{pmatrix},

    :math:`\hat{\mathcal M} = \mathrm{diag}(M_b, \hat M_m)`, (ph-87)
    :math:`\hat{\mathcal C}_1 = \begin{pmatrix}P_b & E_b\\ -E_b^T & \hat C_m\end{pmatrix}`,
    :math:`\hat{\mathcal C}_2 = \begin{pmatrix}-\widetilde{ad}_p & \widetilde{ad}_pA\\
    A^T\widetilde{ad}_p & -A^T\widetilde{ad}_pA + L - L^T\end{pmatrix}` with
    :math:`p = M_b\hat v`, :math:`\hat{\mathrm w} = \mathrm w`, :math:`\hat\tau = \tau - A^T\mathrm w`.
    ``sign=+1`` puts :math:`+E_b^T` in the (2,1) block, the sign printed in [28].

    Derivatives of :math:`\mathcal M` are complex steps, not the Lie-bracket formula of
    :meth:`VehicleManipulator.mass_matrix_derivatives`: an independent route.

    **State**: pose (12), :math:`\hat v` (nb), q (n), :math:`\dot q` (n).

    >>> from robodyn.models import planar_rr
    >>> from robodyn import spatial_inertia
    >>> from robodyn.vehicle import StandardForm
    >>> vms = VehicleManipulator.from_chain(planar_rr(), spatial_inertia(5.0, [1, 1, 1]), "planar")
    >>> nu = [0.1, 0.2, 0.3, 1.0, -1.0]
    >>> a = ReducedEulerLagrange(vms).accelerations([0.4, 0.5], nu)
    >>> bool(np.allclose(a, StandardForm(vms).accelerations([0.4, 0.5], nu)))
    True
    """

    def __init__(self, vms, gravity=None, sign=-1):
        super().__init__(vms, gravity)
        if sign not in (-1, 1):
            raise ValueError(f"ReducedEulerLagrange: sign: expected -1 (the correct (87)) or +1 "
                             f"(the sign of [28]), got {sign!r}")
        self.sign = sign

    def matrices(self, q, vh, qd):
        r"""The dict ``M_hat`` (ph-85), ``C1``, ``C2`` (ph-87), ``A``, ``E_b``, ``P_b``,
        ``C_m``, ``L`` at (q, v̂, q̇)."""
        b, n = self.nb, self.n
        M = self.vms.mass_matrix(q)
        dM = _complex_step_dM(self.vms, q)
        Mb, Mbm, Mm = M[:b, :b], M[:b, b:], M[b:, b:]
        A = np.linalg.solve(Mb, Mbm)
        dMb = dM[:, :b, :b]
        dA = np.array([np.linalg.solve(Mb, dM[k, :b, b:] - dMb[k] @ A) for k in range(n)])
        Mhat = Mm - Mbm.T @ A
        dMhat = np.array([dM[k, b:, b:] - dM[k, :b, b:].T @ A - A.T @ dM[k, :b, b:]
                          + A.T @ dMb[k] @ A for k in range(n)])
        E = 0.5 * np.einsum("kij,j->ik", dMb, vh)                 # [E_b]_Ik = 1/2 d_k M_IJ v^J
        P = 0.5 * np.einsum("kij,k->ij", dMb, qd)                 # P_b = 1/2 dM_b/dt
        Cm = 0.5 * (np.einsum("kij,k->ij", dMhat, qd) + np.einsum("jik,k->ij", dMhat, qd)
                    - np.einsum("ijk,k->ij", dMhat, qd))
        p = Mb @ vh
        adp = self.vms.base_joint.coadjoint(p)
        L = np.einsum("kij,i->jk", dA, p)
        C1 = np.block([[P, E], [self.sign * E.T, Cm]])
        C2 = np.block([[-adp, adp @ A], [A.T @ adp, -A.T @ adp @ A + L - L.T]])
        return dict(M_hat=np.block([[Mb, np.zeros((b, n))], [np.zeros((n, b)), Mhat]]),
                    C1=C1, C2=C2, A=A, E_b=E, P_b=P, C_m=Cm, L=L, dA=dA)

    def state(self, pose, v, q, qd):
        H = check_pose(pose, f"{self.name}.state: pose")
        q = self.vms._q(q, "state")
        qd = _checks.vector(qd, self.n, f"{self.name}.state: qd")
        M = self.vms.mass_matrix(q)
        b = self.nb
        vh = self.vms._v(v, "state") + np.linalg.solve(M[:b, :b], M[:b, b:] @ qd)
        return np.concatenate([H[:3, :3].ravel(), H[:3, 3], vh, q, qd])

    def velocities(self, x):
        _, vh, q, qd = self._split(x, "velocities")
        M = self.vms.mass_matrix(q)
        b = self.nb
        return np.concatenate([vh - np.linalg.solve(M[:b, :b], M[:b, b:] @ qd), qd])

    def _xdot(self, H, vh, q, qd, w, tau):
        w, tau = self._generalized(H, q, w, tau)
        m = self.matrices(q, vh, qd)
        nu = np.concatenate([vh, qd])
        rhs = np.concatenate([w, tau - m["A"].T @ w]) - (m["C1"] + m["C2"]) @ nu
        acc = np.linalg.solve(m["M_hat"], rhs)
        return acc, m

    def rhs(self, t, x, inputs=None):
        _checks.real_number(t, f"{self.name}.rhs: t", hint="a time in s")
        H, vh, q, qd = self._split(x, "rhs")
        w, tau = _inputs(inputs, t, x, self.nb, self.n, f"{self.name}.rhs")
        acc, m = self._xdot(H, vh, q, qd, w, tau)
        v = vh - m["A"] @ qd
        return np.concatenate([_pose_rate(H, self.vms.base_joint.basis @ v), acc[:self.nb], qd,
                               acc[self.nb:]])

    def accelerations(self, q, nu, t=0.0, pose=None, w=None, tau=None):
        """:math:`(\\dot v, \\ddot q)` with :math:`\\dot v = \\dot{\\hat v} - \\dot A\\dot q - A\\ddot q`."""
        q = self.vms._q(q, "accelerations")
        nu = _checks.vector(nu, self.vms.dof, f"{self.name}.accelerations: nu")
        if pose is not None:
            pose = check_pose(pose, f"{self.name}.accelerations: pose")
        b, n = self.nb, self.n
        qd = nu[b:]
        M = self.vms.mass_matrix(q)
        vh = nu[:b] + np.linalg.solve(M[:b, :b], M[:b, b:] @ qd)
        acc, m = self._xdot(np.eye(4) if pose is None else pose, vh, q, qd,
                            np.zeros(b) if w is None else w, np.zeros(n) if tau is None else tau)
        Ad = np.einsum("kij,k->ij", m["dA"], qd)
        return np.concatenate([acc[:b] - Ad @ qd - m["A"] @ acc[b:], acc[b:]])


class BoltzmannHamel(ReducedEulerLagrange):
    r"""The Boltzmann--Hamel equations (ph-89) of the reduced Lagrangian
    :math:`\hat l = \tfrac12\hat v^TM_b\hat v + \tfrac12\dot q^T\hat M_m\dot q`, with the
    coefficients (derived in the book, ch. 6; :math:`c_{IJ}^K` the structure constants
    of the base algebra, :math:`[e_I, e_J] = c_{IJ}^Ke_K`):
    :math:`\gamma_{IJ}^K = c_{IJ}^K`, :math:`\gamma_{Ij}^K = c_{JI}^KA^J_j`,
    :math:`\gamma_{iJ}^K = A^L_ic_{JL}^K`, :math:`\gamma_{ij}^K = \partial_jA^K_i -
    \partial_iA^K_j - c_{JL}^KA^J_jA^L_i`.

    ``coefficients(q)`` returns them; the accelerations come from the equations in index
    form (einsum), not from the matrices of :class:`ReducedEulerLagrange`.

    >>> from robodyn.models import planar_rr
    >>> from robodyn import spatial_inertia
    >>> vms = VehicleManipulator.from_chain(planar_rr(), spatial_inertia(5.0, [1, 1, 1]), "planar")
    >>> BoltzmannHamel(vms).structure[0, 1].tolist()          # [e_omega, e_x] = e_y in se(2)
    [0.0, 0.0, 1.0]
    """

    def __init__(self, vms, gravity=None):
        super().__init__(vms, gravity, sign=-1)
        S = vms.base_joint.basis
        b = vms.nb
        # c[I, J, K]: [e_I, e_J] = c_IJ^K e_K, read off ad on the subalgebra basis
        self.structure = np.array([[S.T @ _ad6(S[:, I]) @ S[:, J] for J in range(b)]
                                   for I in range(b)])

    def coefficients(self, q):
        """Dict of the four gamma arrays, indexed [I, J, K], [I, j, K], [i, J, K], [i, j, K]."""
        q = self.vms._q(q, "coefficients")
        m = self.matrices(q, np.zeros(self.nb), np.zeros(self.n))
        c, A, dA = self.structure, m["A"], m["dA"]            # dA[k, K, i] = d_k A^K_i
        return {"IJ": c,
                "Ij": np.einsum("JIK,Jj->IjK", c, A),
                "iJ": np.einsum("Li,JLK->iJK", A, c),
                "ij": (np.einsum("jKi->ijK", dA) - np.einsum("iKj->ijK", dA)
                       - np.einsum("JLK,Jj,Li->ijK", c, A, A))}

    def _xdot(self, H, vh, q, qd, w, tau):
        w, tau = self._generalized(H, q, w, tau)
        m = self.matrices(q, vh, qd)
        g = self.coefficients(q)
        b, n = self.nb, self.n
        Mb, Mhat = m["M_hat"][:b, :b], m["M_hat"][b:, b:]
        p = Mb @ vh
        # d/dt dl/dvh = Mb vh' + dMb/dt vh;  d/dt dl/dqd - dl/dq = Mhat q'' + Mhat' qd - dl/dq
        dMb_dt = 2 * m["P_b"]
        base_rhs = (w - dMb_dt @ vh - np.einsum("IJK,J,K->I", g["IJ"], vh, p)
                    - np.einsum("IjK,j,K->I", g["Ij"], qd, p))
        dl_dq = m["E_b"].T @ vh + m["C_m"].T @ qd       # (ph-62) with the sign of (75)-(78)
        arm_rhs = (tau - m["A"].T @ w - (m["C_m"] + m["C_m"].T) @ qd + dl_dq
                   - np.einsum("iJK,J,K->i", g["iJ"], vh, p) - np.einsum("ijK,j,K->i", g["ij"], qd, p))
        acc = np.concatenate([np.linalg.solve(Mb, base_rhs), np.linalg.solve(Mhat, arm_rhs)])
        return acc, m


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
    xi = _checks.vector(xi, 6, "cayley_motion: xi")
    w, v = xi[:3], xi[3:]
    a = np.eye(3) - 0.5 * np.array([[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]])
    F = np.eye(4)
    F[:3, :3] = np.linalg.solve(a, a.T)
    F[:3, 3] = a.T @ v / np.linalg.det(a)
    return F


def energy_momentum_step(form, x, dt, inputs=None, t=0.0, tol=1e-13, max_iter=60):
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
    if not isinstance(form, VMSForm):
        raise TypeError(f"energy_momentum_step: form: expected a VMSForm, got {_checks._describe(form)}")
    if form.gravity is not None:
        raise ValueError("energy_momentum_step: form: gravity makes the potential depend on the "
                         "base pose; the scheme handles inputs and kinetic energy only (pass "
                         "gravity forces as inputs or use simulate(method='RK45'))")
    fname = "energy_momentum_step"
    x = _checks.vector(x, form.size, f"{fname}: x ({form.size} numbers: pose 12, then p, q, pi)")
    check_pose(_pose_of(x), f"{fname}: x[:12] (the base pose)")
    dt = _step_size(dt, fname)
    t = _checks.scalar(t, f"{fname}: t")
    if _checks.is_symbolic(t):
        raise _checks.error(f"{fname}: t", "a number (s)", t, exc=TypeError)
    tol = _checks.tolerance(tol, f"{fname}: tol")
    max_iter = _checks.size(max_iter, f"{fname}: max_iter", low=1, high=10**4)
    _check_inputs(inputs, fname)
    H0 = _pose_of(x)
    b, n = form.nb, form.n
    y0 = x[12:]
    E0, g0 = form._energy_gradient(y0)
    S = form.vms.base_joint.basis
    y1 = y0 + dt * _vms_ydot(form, y0, g0, inputs, t, x)

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
        w, tau = _inputs(inputs, t + 0.5 * dt, xm, b, n, "energy_momentum_step")
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
            raise RuntimeError(f"energy_momentum_step: the iteration diverged at sweep {it} (change "
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
        warnings.warn(f"energy_momentum_step: no convergence in {max_iter} iterations (last change "
                      f"{change:.2g}); take a smaller step", ConvergenceWarning, stacklevel=2)
    H1 = H0 @ cayley_motion(dt * (S @ vbar))
    power = float(w @ vbar + tau @ gbar[b + n:])
    return (np.concatenate([H1[:3, :3].ravel(), H1[:3, 3], y1]),
            {"iterations": it, "sweeps": count[0], "power": power})


def _step_size(dt, fname):
    """A fixed time step: a positive number of seconds, at most 10 s."""
    if _checks.is_symbolic(dt):
        raise _checks.error(f"{fname}: dt", "a number (s)", dt, exc=TypeError)
    return float(_checks.positive(dt, f"{fname}: dt", high=10.0, hint="a time step in seconds"))


def _check_inputs(inputs, fname):
    """None, a callable inputs(t, x) -> (w, tau), or a pair (w, tau)."""
    if inputs is None or callable(inputs):
        return
    _checks.no_text(inputs, f"{fname}: inputs")
    if not isinstance(inputs, (list, tuple)) or len(inputs) != 2:
        raise _checks.error(f"{fname}: inputs", "None, a pair (w, tau) or a callable "
                            "inputs(t, x) -> (w, tau)", inputs, exc=TypeError)


MAX_RK45_EVALUATIONS = 5_000_000
"""Budget of right-hand-side evaluations of one ``simulate(method='RK45')`` run."""


def _vms_ydot(form, y, g, inputs, t, x):
    b, n = form.nb, form.n
    w, tau = _inputs(inputs, t, x, b, n, "energy_momentum_step")
    S = form.vms.base_joint.basis
    pd = (S.T @ _coadjoint(S @ y[:b]) @ S) @ g[:b] + w
    return np.concatenate([pd, g[b + n:], -g[b:b + n] + tau])


@dataclass(frozen=True)
class PHTrajectory:
    r"""A simulation with its reports. ``t`` (N,), ``x`` (N, size) states of ``form``;
    ``energy`` (N,) kinetic (+ potential); ``supplied`` (N,) the supplied energy
    :math:`\int_0^t\langle\mathrm w|\mathrm v\rangle + \langle\tau|\dot q\rangle` (integrated
    with the state by RK45; the scheme's own discrete power for the energy--momentum method);
    ``momentum`` (N, 6) in the space frame; ``pose_error`` (N,); ``method``; ``wall_time``
    (s); ``evaluations`` (right-hand sides, or sweeps of the implicit step)."""

    t: np.ndarray
    x: np.ndarray
    energy: np.ndarray
    supplied: np.ndarray
    momentum: np.ndarray
    pose_error: np.ndarray
    method: str
    wall_time: float
    evaluations: int

    @property
    def energy_error(self) -> float:
        """max |E(t) - E(0) - supplied(t)| (J)."""
        return float(np.abs(self.energy - self.energy[0] - self.supplied).max())

    @property
    def momentum_error(self) -> float:
        """max |momentum(t) - momentum(0)| (N s, N m s)."""
        return float(np.abs(self.momentum - self.momentum[0]).max())


def simulate(form, x0, t_span, method="RK45", dt=None, inputs=None, rtol=1e-9, atol=1e-11,
             n_out=200, momentum=True):
    r"""Simulate a VMS form from the state ``x0`` over ``t_span`` = (t0, t1) (s).

    ``method``: ``"RK45"`` (scipy's ``solve_ivp``, tolerances ``rtol``, ``atol``; the pose is
    12 numbers and drifts off SE(3) by the integration error) or ``"energy-momentum"``
    (:func:`energy_momentum_step`, fixed step ``dt``, :class:`VMSForm` only). ``inputs``:
    a pair (w, tau) or a callable ``inputs(t, x) -> (w, tau)``. Output on ``n_out`` points
    (RK45) or every step (energy-momentum). The right-hand sides of :class:`StandardForm` and
    :class:`VMSForm` and the scheme's co-energy gradient run in O(n) in the compiled engine
    (see :mod:`robodyn.vehicle`); the reports are computed for all output states at once.

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
    from scipy.integrate import solve_ivp
    if not isinstance(form, (_VMSBase, StandardForm)):
        raise TypeError(f"simulate: form: expected a VMS form (StandardForm, VMSForm, "
                        f"DecoupledForm, ReducedEulerLagrange), got {_checks._describe(form)}")
    x0 = _checks.vector(x0, form.size, f"simulate: x0 ({form.size} numbers)")
    check_pose(_pose_of(x0), "simulate: x0[:12] (the base pose)")
    if not isinstance(method, str) or method not in ("RK45", "energy-momentum"):
        raise _checks.error("simulate: method", "'RK45' or 'energy-momentum'", method,
                            exc=ValueError if isinstance(method, str) else TypeError)
    if not isinstance(t_span, (list, tuple, np.ndarray)) or len(t_span) != 2:
        raise _checks.error("simulate: t_span", "a pair (t0, t1) of times in seconds", t_span,
                            exc=TypeError)
    t0, t1 = (_checks.scalar(s, "simulate: t_span") for s in t_span)
    if _checks.is_symbolic([t0, t1]):
        raise _checks.error("simulate: t_span", "numbers (s)", "sympy expressions",
                            exc=TypeError)
    t0, t1 = float(t0), float(t1)
    if not t1 > t0:
        raise ValueError(f"simulate: t_span: expected t1 > t0, got {t_span!r}")
    if t1 - t0 > 1e6:
        raise _checks.error("simulate: t_span", "a duration of at most 1e6 s", f"{t1 - t0:.3g} s")
    _check_inputs(inputs, "simulate")
    _checks.flag(momentum, "simulate: momentum")
    n_out = _checks.size(n_out, "simulate: n_out", low=2, high=10**6,
                         item_bytes=8 * (form.size + 10))
    if method == "RK45":
        rtol, atol = (_checks.tolerance(v, f"simulate: {k}") for k, v in (("rtol", rtol),
                                                                         ("atol", atol)))
    if dt is not None:
        dt = _step_size(dt, "simulate")
        _checks.steps(t1 - t0, dt, "simulate: dt", high=10**6, item_bytes=8 * (form.size + 10))
    start = time.perf_counter()
    if method == "RK45":
        count = [0]
        m = form.size

        def f(t, z):                       # the supplied energy rides along as z[-1]
            count[0] += 1
            if count[0] > MAX_RK45_EVALUATIONS:
                raise RuntimeError(f"simulate: RK45 needed more than {MAX_RK45_EVALUATIONS} "
                                   f"evaluations before t = {t:.6g} s of {t1:g} s: the motion is "
                                   f"stiff or singular; shorten t_span or loosen rtol/atol")
            x = z[:m]
            out = np.empty(m + 1)
            out[:m] = form.rhs(t, x, inputs)
            out[m] = _power(form, t, x, inputs)
            return out

        def f_free(t, x):                  # no inputs: nothing supplied
            count[0] += 1
            return form.rhs(t, x)

        z0 = x0 if inputs is None else np.append(x0, 0.0)
        sol = solve_ivp(f if inputs is not None else f_free, (t0, t1), z0, rtol=rtol,
                        atol=atol, t_eval=np.linspace(t0, t1, int(n_out)))
        if not sol.success:
            raise RuntimeError(f"simulate: solve_ivp failed: {sol.message}")
        ts, xs, evals = sol.t, np.ascontiguousarray(sol.y[:m].T), count[0]
        supplied = np.zeros(len(ts)) if inputs is None else sol.y[m]
        wall = time.perf_counter() - start
    elif method == "energy-momentum":
        if dt is None:
            raise ValueError("simulate: dt: needed for method='energy-momentum' (fixed step, s)")
        dt = _checks.tolerance(dt, "simulate: dt")
        steps = int(np.ceil((t1 - t0) / dt - 1e-9))
        h = (t1 - t0) / steps
        xs, ts, sup = [x0], [t0], [0.0]
        evals = 0
        x = x0
        for k in range(steps):
            x, info = energy_momentum_step(form, x, h, inputs, t0 + k * h)
            evals += info["sweeps"]
            xs.append(x)
            ts.append(t0 + (k + 1) * h)
            sup.append(sup[-1] + h * info["power"])
        wall = time.perf_counter() - start
        ts, xs, supplied = np.array(ts), np.array(xs), np.array(sup)
    else:
        raise ValueError(f"simulate: method: expected 'RK45' or 'energy-momentum', got {method!r}")
    energy = np.array([form.energy(x) for x in xs])
    perr = _pose_errors(xs)
    mom = _momenta(form, xs, perr) if momentum else np.zeros((len(xs), 6))
    return PHTrajectory(ts, xs, energy, supplied, mom, perr, method, wall, evals)


def _power(form, t, x, inputs):
    if isinstance(form, StandardForm):
        w, tau = _inputs(inputs, t, x, form.nb, form.n, "simulate")
        return float(np.concatenate([w, tau]) @ form.velocities(x))
    return form.supplied_power(t, x, inputs)


def _pose_errors(xs):
    """:func:`~robodyn.vehicle.pose_error` of every state's pose (rows of xs), at once."""
    R = xs[:, :9].reshape(-1, 3, 3)
    err = np.abs(np.swapaxes(R, 1, 2) @ R - np.eye(3)).max(axis=(1, 2))
    return np.maximum(err, np.abs(np.linalg.det(R) - 1.0))


def _momenta(form, xs, perr):
    """The total momentum in the space frame of every state, :math:`Ad_{H^{-1}}^T S_b p` as
    in :meth:`~robodyn.vehicle.VehicleManipulator.total_momentum` (which also refuses a pose
    that is no rigid motion: so does this, with its message), the frame changes done at once."""
    vms = form.vms
    bad = np.flatnonzero(perr > 1e-6)
    if bad.size:
        check_pose(_pose_of(xs[bad[0]]), f"{vms.name}.total_momentum: base_pose")
    b, n = vms.nb, vms.n
    S = vms.base_joint.basis
    p6 = np.empty((len(xs), 6))
    for k, x in enumerate(xs):
        if isinstance(form, StandardForm):
            q, nu = x[12 + b:12 + b + n], np.concatenate([x[12:12 + b], x[12 + b + n:]])
        else:
            q, nu = x[12 + b:12 + b + n], form.velocities(x)
        M6 = vms._mass6_at(q)
        p6[k] = M6[:6] @ np.concatenate([S @ nu[:b], nu[b:]])
    R = xs[:, :9].reshape(-1, 3, 3)
    f = np.einsum("kij,kj->ki", R, p6[:, 3:])
    return np.hstack([np.einsum("kij,kj->ki", R, p6[:, :3]) + np.cross(xs[:, 9:12], f), f])

from ._boundary import seal as _seal  # noqa: E402 -- the one boundary (issue 28): last, over the finished module
_seal(globals())
