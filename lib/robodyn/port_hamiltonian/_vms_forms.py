r"""The vehicle--manipulator forms of :mod:`robodyn.port_hamiltonian` (Part VI): the
port-Hamiltonian form (ph-47), the inertially-decoupled form (ph-59), and their Lagrangian
counterparts (ph-85), (ph-89). Import them from :mod:`robodyn.port_hamiltonian`; the module
docstring there describes the shared interface.

Every public method is declared with :func:`robodyn.port_hamiltonian._arguments.checked` (each argument's kind,
checked at the top of every call; the result checked finite); the bodies work on checked
arrays with the private helpers below.
"""
from __future__ import annotations

import numpy as np

from .. import _value_checks
from . import _arguments as ck
from ._arguments import checked
from ..dynamics._recursions import _ad6
from ._vehicle import (VehicleManipulator, _adj_inv, _coadjoint, _coadjoint_apply, _dposv, _plain,
                      _pose_of, _pose_rate, mechanical_energy)


def base_momentum6(vms, q, nu):
    """The whole system's momentum as a 6-vector in {b}, :math:`M_6[:6](S_b v, \\dot q)`, at a
    checked q and velocities nu = (v, qd)."""
    b = vms.nb
    return vms._mass6_at(q)[:6] @ np.concatenate([vms.base_joint.basis @ nu[:b], nu[b:]])


class _VMSBase:
    """What the VMS forms share: the model, sizes, state layout, inputs, gravity."""

    def __init__(self, vms, gravity=None):
        cls = type(self).__name__
        if not isinstance(vms, VehicleManipulator):
            raise _value_checks.refusal(TypeError, f"{cls}: vms: expected a VehicleManipulator, got "
                            f"{_value_checks.describe(vms)}")
        self.vms = vms
        self.gravity = None if gravity is None else ck.vec(gravity, 3, f"{cls}: gravity")
        self.nb, self.n = vms.nb, vms.n
        self.size = 12 + vms.nb + 2 * vms.n
        self.name = f"{cls}({vms.name})"
        self.group = vms.base_joint

    def __repr__(self):
        return self.name

    def _state_arg(self, x, name, tol):
        return ck.vms_state(x, self.nb, self.n, name, tol)

    def _split(self, x):
        """A checked state -> (4x4 pose, base part, q, joint part)."""
        b, n = self.nb, self.n
        return _pose_of(x), x[12:12 + b], x[12 + b:12 + b + n], x[12 + b + n:]

    def _coadjoint(self, p):
        r""":math:`\widetilde{ad}_p` on the base's subalgebra (nb x nb), no checks."""
        S = self.vms.base_joint.basis
        return S.T @ _coadjoint(S @ p) @ S

    @checked(q=ck.joints, t=ck.time)
    def mass_matrix(self, q, t=0.0):
        """The locked mass matrix :math:`\\mathcal M(q)` of (ph-21)."""
        return self.vms.mass_matrix(q)

    def _generalized(self, H, q, w, tau):
        """(w, tau) plus gravity's generalized forces (the pose H: a state's, within
        RHS_POSE_TOL of a rigid motion, as ``StandardForm.rhs`` takes it)."""
        if self.gravity is None:
            return w, tau
        vms, b = self.vms, self.nb
        f = vms._compiled("vms_rnea", q, np.zeros(b), np.zeros(self.n), None, None,
                          H[:3, :3].T @ self.gravity)
        g = vms._gravity(vms._frames(q), H, self.gravity) if f is None else -f
        return w + g[:b], tau + g[b:]

    @checked(x=ck.rigid_state)
    def energy(self, x):
        """Kinetic + potential energy of a state (J)."""
        return self._energy(x)

    def _energy(self, x):
        H, _, q, _ = self._split(x)
        nu = self._velocities(x)
        return mechanical_energy(self.vms, H, nu[:self.nb], q, nu[self.nb:], self.gravity)

    @checked(x=ck.rigid_state)
    def momentum(self, x):
        """Total momentum in the space frame (6,), (angular about the origin, linear)."""
        H, _, q, _ = self._split(x)
        return _adj_inv(H).T @ base_momentum6(self.vms, q, self._velocities(x))

    @checked(t=ck.time, x=ck.state, inputs=ck.vms_inputs)
    def supplied_power(self, t, x, inputs=None):
        r"""The power of the inputs, :math:`\langle\mathrm w|\mathrm v\rangle +
        \langle\tau|\dot q\rangle` (W) (gravity excluded: it is in the energy)."""
        w, tau = ck.call_inputs(self, inputs, t, x, f"{self.name}.supplied_power")
        nu = self._velocities(x)
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

    @checked(pose=ck.base_pose, v=ck.base_twist, q=ck.joints, qd=ck.joint_rates)
    def state(self, pose, v, q, qd):
        """The state from the pose and velocities: :math:`(p, \\pi) = \\mathcal M(v, \\dot q)` (ph-45, ph-46)."""
        m = self.vms.mass_matrix(q) @ np.concatenate([v, qd])
        return np.concatenate([pose[:3, :3].ravel(), pose[:3, 3], m[:self.nb], q, m[self.nb:]])

    @checked(x=ck.state)
    def velocities(self, x):
        """:math:`(\\mathrm v, \\dot q) = \\mathcal M^{-1}(p, \\pi)`."""
        return self._velocities(x)

    def _velocities(self, x):
        _, p, q, pi = self._split(x)
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

    @checked(x=ck.state)
    def hamiltonian(self, x):
        """(ph-49), the kinetic co-energy (J)."""
        return float(self._energy_gradient(x[12:])[0])

    @checked(x=ck.state)
    def gradient(self, x):
        r""":math:`(\partial H/\partial p, \partial H/\partial q, \partial H/\partial\pi) =
        (\mathrm v, -\tfrac12\nu^T\partial_k\mathcal M\nu, \dot q)` (ph-62 for the decoupled twin)."""
        return self._energy_gradient(x[12:])[1]

    @checked(x=ck.state)
    def interconnection(self, x):
        r""":math:`\mathcal J(p)`, (nb + 2n) square, skew."""
        _, p, _, _ = self._split(x)
        b, n = self.nb, self.n
        J = np.zeros((b + 2 * n, b + 2 * n))
        J[:b, :b] = self._coadjoint(p)
        J[b:b + n, b + n:] = np.eye(n)
        J[b + n:, b:b + n] = -np.eye(n)
        return J

    @checked(x=ck.optional_state)
    def input_matrix(self, x=None):
        r""":math:`\mathcal G`, (nb + 2n) x (nb + n) (constant: ``x`` may be left out)."""
        b, n = self.nb, self.n
        G = np.zeros((b + 2 * n, b + n))
        G[:b, :b] = np.eye(b)
        G[b + n:, b:] = np.eye(n)
        return G

    @checked(x=ck.state)
    def outputs(self, x):
        r"""The outputs :math:`\mathcal G^T\partial H/\partial x = (\mathrm v, \dot q)`."""
        e = self._energy_gradient(x[12:])[1]
        return np.concatenate([e[:self.nb], e[self.nb + self.n:]])

    @checked(t=ck.time, x=ck.state, inputs=ck.vms_inputs)
    def rhs(self, t, x, inputs=None):
        """dx/dt: the pose moves by :math:`\\dot H = H[S\\mathrm v]`, the rest by (ph-47)."""
        H, p, q, pi = self._split(x)
        w, tau = ck.call_inputs(self, inputs, t, x, f"{self.name}.rhs")
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
        pd = self._coadjoint(p) @ e[:b] + w                  # (ph-47): J(p) dH/dx + G u
        return e, pd, tau - e[b:b + n]

    def _accelerations_fast(self, q, nu, t=0.0, pose=None, w=None, tau=None):
        """The accelerations for plain float64 arrays (the compiled pieces check q, nu), or
        None: then the checked route of :meth:`accelerations` checks, converts or refuses."""
        b, n = self.nb, self.n
        if not (pose is None and self.gravity is None and type(t) in (float, int)
                and -1e300 < t < 1e300 and _plain(q, n) and _plain(nu, b + n)
                and (w is None or _plain(w, b)) and (tau is None or _plain(tau, n))):
            return None
        out = self._accelerations(q, nu, np.zeros(b) if w is None else w,
                                  np.zeros(n) if tau is None else tau, fast=True)
        return out if out is not None and np.isfinite(out).all() else None

    @checked(fast="_accelerations_fast", q=ck.joints, nu=ck.velocities, t=ck.time,
             pose=ck.optional_pose, w=ck.base_wrench, tau=ck.torques)
    def accelerations(self, q, nu, t=0.0, pose=None, w=None, tau=None):
        r""":math:`(\dot v, \ddot q)` from (ph-47): :math:`\mathcal M^{-1}((\dot p, \dot\pi) -
        \dot{\mathcal M}\nu)`, since :math:`(p, \pi) = \mathcal M(q)\nu`.

        :math:`\mathcal M` once (composite bodies, compiled) and one factorization of it; the
        momentum rates by (ph-47) itself (the compiled co-energy gradient and the coadjoint
        term); :math:`\dot{\mathcal M} = C + C^T` from the Christoffel Coriolis matrix of the
        arm behind six virtual base joints (compiled, O(n^2); equal to
        :math:`\sum_k\partial_k\mathcal M\dot q_k` of ``mass_matrix_derivatives``, which
        the checked route for other arguments than plain float64 arrays uses).

        >>> from robodyn.models import planar_rr
        >>> from robodyn import spatial_inertia
        >>> from robodyn.port_hamiltonian import StandardForm
        >>> vms = VehicleManipulator.from_chain(planar_rr(), spatial_inertia(5.0, [1, 1, 1]))
        >>> nu = np.r_[0.1, -0.2, 0.3, 0.0, 0.5, -0.1, 1.0, -2.0]
        >>> a = VMSForm(vms).accelerations([0.3, 0.4], nu, tau=[0.5, -0.5])
        >>> bool(np.allclose(a, StandardForm(vms).accelerations([0.3, 0.4], nu, tau=[0.5, -0.5])))
        True
        """
        H = np.eye(4) if pose is None else pose
        w, tau = self._generalized(H, q, w, tau)            # + gravity's forces, if any
        out = self._accelerations(q, nu, w, tau)
        if out is None:
            raise _value_checks.refusal(
                ValueError, f"{self.name}.accelerations: q: expected a configuration whose mass "
                            f"matrix is positive definite, got a singular or ill-conditioned one")
        return out

    def _accelerations(self, q, nu, w, tau, fast=False):
        """(ph-47)'s accelerations at checked arrays, or None where M is not positive definite
        or, with ``fast``, where a compiled piece declines (the numpy route is then taken by
        the checked call)."""
        vms, b, n = self.vms, self.nb, self.n
        M = vms._compiled("vms_crba", q)
        if M is None:
            if fast:
                return None
            M = vms.mass_matrix(q)
        m = M @ nu
        out = vms._compiled("vms_hamiltonian", q, m)
        if out is None:
            if fast:
                return None
            out = self._reduced(np.concatenate([m[:b], q, m[b:]]))
        e = out[1]
        rhs = np.empty(b + n)                                 # (p', pi') by (ph-47)
        S = vms.base_joint.basis
        rhs[:b] = w + (_coadjoint_apply(m[:b], e[:b]) if b == 6 else
                       S.T @ _coadjoint_apply(S @ m[:b], S @ e[:b]))
        rhs[b:] = tau - e[b:b + n]
        if fast:
            try:
                C = vms._mass_rate(q, nu[b:], half=True)     # M' = C + C^T
            except ValueError:          # the Coriolis kernel refused an overflow: checked route
                return None
            rhs -= C @ nu + nu @ C
        else:                           # M' = sum_k dM/dq_k qd_k, exactly, by numpy
            rhs -= np.einsum("kij,k->ij", vms._dmass(vms._frames(q)), nu[b:]) @ nu
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

    @checked(q=ck.joints, p=ck.optional_base_momentum)
    def parts(self, q, p=None):
        r"""A dict of the pieces at q (and p): ``A`` (nb x n), ``M_b``, ``M_hat`` (reduced
        inertia), ``dA`` (:math:`\partial_kA`, n x nb x n), ``dM_b``, ``dM_hat``, and with p:
        ``L`` (n x n), ``Phi``."""
        return self._parts(q, p)

    def _parts(self, q, p=None):
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
            out.update(self._momentum_parts(out, p))
        return out

    def _momentum_parts(self, P, p):
        """L and Phi of (ph-55) at the base momentum p, from the parts at q."""
        b, n = self.nb, self.n
        L = np.einsum("kij,i->jk", P["dA"], p)
        Phi = np.eye(b + 2 * n)
        Phi[b + n:, :b] = -P["A"].T
        Phi[b + n:, b:b + n] = -L
        return dict(L=L, Phi=Phi)

    @checked(q=ck.joints, v=ck.base_twist, qd=ck.joint_rates)
    def locked_velocity(self, q, v, qd):
        r"""The locked velocity :math:`\hat{\mathrm v} = \mathrm v + A(q)\dot q` (paper §5.2)."""
        Mb, Mbm, _ = self.vms.mass_blocks(q)
        return v + np.linalg.solve(Mb, Mbm) @ qd

    @checked(pose=ck.base_pose, v=ck.base_twist, q=ck.joints, qd=ck.joint_rates)
    def state(self, pose, v, q, qd):
        r""":math:`(\hat p, \hat\pi) = (M_b\hat{\mathrm v}, \hat M_m\dot q)`."""
        P = self._parts(q)
        return np.concatenate([pose[:3, :3].ravel(), pose[:3, 3], P["M_b"] @ (v + P["A"] @ qd),
                               q, P["M_hat"] @ qd])

    @checked(x=ck.state)
    def velocities(self, x):
        """(v, qd) of a state: :math:`\\dot q = \\hat M_m^{-1}\\hat\\pi`, :math:`v = M_b^{-1}\\hat p - A\\dot q`."""
        return self._velocities(x)

    def _velocities(self, x):
        _, p, q, pi = self._split(x)
        P = self._parts(q)
        qd = np.linalg.solve(P["M_hat"], pi)
        return np.concatenate([np.linalg.solve(P["M_b"], p) - P["A"] @ qd, qd])

    @checked(x=ck.state)
    def hamiltonian(self, x):
        """(ph-60): the base part plus the arm part (J)."""
        _, p, q, pi = self._split(x)
        P = self._parts(q)
        return float(0.5 * p @ np.linalg.solve(P["M_b"], p) + 0.5 * pi @ np.linalg.solve(P["M_hat"], pi))

    @checked(x=ck.state)
    def gradient(self, x):
        r""":math:`(\hat{\mathrm v}, -\tfrac12\hat{\mathrm v}^T\partial_kM_b\hat{\mathrm v}
        - \tfrac12\dot q^T\partial_k\hat M_m\dot q, \dot q)` (ph-62)."""
        _, p, q, pi = self._split(x)
        return self._gradient(p, pi, self._parts(q))

    def _gradient(self, p, pi, P):
        vh = np.linalg.solve(P["M_b"], p)
        qd = np.linalg.solve(P["M_hat"], pi)
        dq = (-0.5 * np.einsum("i,kij,j->k", vh, P["dM_b"], vh)
              - 0.5 * np.einsum("i,kij,j->k", qd, P["dM_hat"], qd))
        return np.concatenate([vh, dq, qd])

    @checked(x=ck.state)
    def interconnection(self, x):
        r""":math:`\hat{\mathcal J} = \Phi\mathcal J\Phi^T` (ph-68), in closed form
        :math:`\begin{pmatrix}\widetilde{ad}_p & 0 & -\widetilde{ad}_pA\\ 0 & 0 & 1\\
        -A^T\widetilde{ad}_p & -1 & A^T\widetilde{ad}_pA + L^T - L\end{pmatrix}`."""
        _, p, q, _ = self._split(x)
        return self._interconnection(p, self._parts(q, p))

    def _interconnection(self, p, P):
        b, n = self.nb, self.n
        adp = self._coadjoint(p)
        A, L = P["A"], P["L"]
        J = np.zeros((b + 2 * n, b + 2 * n))
        J[:b, :b] = adp
        J[:b, b + n:] = -adp @ A
        J[b:b + n, b + n:] = np.eye(n)
        J[b + n:, :b] = -A.T @ adp
        J[b + n:, b:b + n] = -np.eye(n)
        J[b + n:, b + n:] = A.T @ adp @ A + L.T - L
        return J

    @checked(x=ck.state)
    def input_matrix(self, x):
        r""":math:`\hat{\mathcal G} = \Phi\mathcal G = \begin{pmatrix}1 & 0\\ 0 & 0\\ -A^T & 1
        \end{pmatrix}`."""
        _, _, q, _ = self._split(x)
        return self._input_matrix(self._parts(q))

    def _input_matrix(self, P):
        b, n = self.nb, self.n
        G = np.zeros((b + 2 * n, b + n))
        G[:b, :b] = np.eye(b)
        G[b + n:, :b] = -P["A"].T
        G[b + n:, b:] = np.eye(n)
        return G

    @checked(x=ck.state)
    def outputs(self, x):
        r"""The outputs :math:`\hat{\mathcal G}^T\partial\hat H/\partial\hat x`."""
        _, p, q, pi = self._split(x)
        P = self._parts(q)
        return self._input_matrix(P).T @ self._gradient(p, pi, P)

    @checked(t=ck.time, x=ck.state, inputs=ck.vms_inputs)
    def rhs(self, t, x, inputs=None):
        """dx/dt by (ph-59); the pose moves with :math:`v = \\hat v - A\\dot q`."""
        H, p, q, pi = self._split(x)
        w, tau = ck.call_inputs(self, inputs, t, x, f"{self.name}.rhs")
        return self._xdot(H, p, q, pi, w, tau, self._parts(q, p))

    def _xdot(self, H, p, q, pi, w, tau, P):
        """dx/dt at checked parts; P: the parts at (q, p)."""
        w, tau = self._generalized(H, q, w, tau)
        e = self._gradient(p, pi, P)
        xd = self._interconnection(p, P) @ e + self._input_matrix(P) @ np.concatenate([w, tau])
        v = e[:self.nb] - P["A"] @ e[self.nb + self.n:]          # v = v_hat - A qdot
        return np.concatenate([_pose_rate(H, self.vms.base_joint.basis @ v), xd])

    @checked(q=ck.joints, nu=ck.velocities, t=ck.time, pose=ck.optional_pose,
             w=ck.base_wrench, tau=ck.torques)
    def accelerations(self, q, nu, t=0.0, pose=None, w=None, tau=None):
        r""":math:`(\dot v, \ddot q)` from (ph-59): :math:`\ddot q = \hat M_m^{-1}(\dot{\hat\pi} -
        \dot{\hat M}_m\dot q)`, :math:`\dot{\hat v} = M_b^{-1}(\dot{\hat p} - \dot M_b\hat v)`,
        :math:`\dot v = \dot{\hat v} - \dot A\dot q - A\ddot q`."""
        b, n = self.nb, self.n
        H = np.eye(4) if pose is None else pose
        P = self._parts(q)
        qd = nu[b:]
        vh = nu[:b] + P["A"] @ qd
        p = P["M_b"] @ vh
        P.update(self._momentum_parts(P, p))
        xd = self._xdot(H, p, q, P["M_hat"] @ qd, w, tau, P)[12:]
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
    :meth:`~robodyn.port_hamiltonian.VehicleManipulator.mass_matrix_derivatives`: an independent route.

    **State**: pose (12), :math:`\hat v` (nb), q (n), :math:`\dot q` (n).

    >>> from robodyn.models import planar_rr
    >>> from robodyn import spatial_inertia
    >>> from robodyn.port_hamiltonian import StandardForm
    >>> vms = VehicleManipulator.from_chain(planar_rr(), spatial_inertia(5.0, [1, 1, 1]), "planar")
    >>> nu = [0.1, 0.2, 0.3, 1.0, -1.0]
    >>> a = ReducedEulerLagrange(vms).accelerations([0.4, 0.5], nu)
    >>> bool(np.allclose(a, StandardForm(vms).accelerations([0.4, 0.5], nu)))
    True
    """

    def __init__(self, vms, gravity=None, sign=-1):
        super().__init__(vms, gravity)
        self.sign = ck.sign(self, sign, f"{type(self).__name__}: sign")

    @checked(q=ck.joints, vh=ck.base_twist, qd=ck.joint_rates)
    def matrices(self, q, vh, qd):
        r"""The dict ``M_hat`` (ph-85), ``C1``, ``C2`` (ph-87), ``A``, ``E_b``, ``P_b``,
        ``C_m``, ``L`` at (q, v̂, q̇)."""
        return self._matrices(q, vh, qd)

    def _matrices(self, q, vh, qd):
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
        adp = self._coadjoint(p)
        L = np.einsum("kij,i->jk", dA, p)
        C1 = np.block([[P, E], [self.sign * E.T, Cm]])
        C2 = np.block([[-adp, adp @ A], [A.T @ adp, -A.T @ adp @ A + L - L.T]])
        return dict(M_hat=np.block([[Mb, np.zeros((b, n))], [np.zeros((n, b)), Mhat]]),
                    C1=C1, C2=C2, A=A, E_b=E, P_b=P, C_m=Cm, L=L, dA=dA)

    @checked(pose=ck.base_pose, v=ck.base_twist, q=ck.joints, qd=ck.joint_rates)
    def state(self, pose, v, q, qd):
        """The state (pose, :math:`\\hat v = v + A\\dot q`, q, :math:`\\dot q`)."""
        M = self.vms.mass_matrix(q)
        b = self.nb
        vh = v + np.linalg.solve(M[:b, :b], M[:b, b:] @ qd)
        return np.concatenate([pose[:3, :3].ravel(), pose[:3, 3], vh, q, qd])

    @checked(x=ck.state)
    def velocities(self, x):
        """(v, qd) of a state, :math:`v = \\hat v - A\\dot q`."""
        return self._velocities(x)

    def _velocities(self, x):
        _, vh, q, qd = self._split(x)
        M = self.vms.mass_matrix(q)
        b = self.nb
        return np.concatenate([vh - np.linalg.solve(M[:b, :b], M[:b, b:] @ qd), qd])

    def _xdot(self, H, vh, q, qd, w, tau):
        w, tau = self._generalized(H, q, w, tau)
        m = self._matrices(q, vh, qd)
        nu = np.concatenate([vh, qd])
        rhs = np.concatenate([w, tau - m["A"].T @ w]) - (m["C1"] + m["C2"]) @ nu
        acc = np.linalg.solve(m["M_hat"], rhs)
        return acc, m

    @checked(t=ck.time, x=ck.state, inputs=ck.vms_inputs)
    def rhs(self, t, x, inputs=None):
        """dx/dt: the pose by :math:`v = \\hat v - A\\dot q`, the rest by (ph-85)."""
        H, vh, q, qd = self._split(x)
        w, tau = ck.call_inputs(self, inputs, t, x, f"{self.name}.rhs")
        acc, m = self._xdot(H, vh, q, qd, w, tau)
        v = vh - m["A"] @ qd
        return np.concatenate([_pose_rate(H, self.vms.base_joint.basis @ v), acc[:self.nb], qd,
                               acc[self.nb:]])

    @checked(q=ck.joints, nu=ck.velocities, t=ck.time, pose=ck.optional_pose,
             w=ck.base_wrench, tau=ck.torques)
    def accelerations(self, q, nu, t=0.0, pose=None, w=None, tau=None):
        """:math:`(\\dot v, \\ddot q)` with :math:`\\dot v = \\dot{\\hat v} - \\dot A\\dot q - A\\ddot q`."""
        b = self.nb
        qd = nu[b:]
        M = self.vms.mass_matrix(q)
        vh = nu[:b] + np.linalg.solve(M[:b, :b], M[:b, b:] @ qd)
        acc, m = self._xdot(np.eye(4) if pose is None else pose, vh, q, qd, w, tau)
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

    @checked(q=ck.joints)
    def coefficients(self, q):
        """Dict of the four gamma arrays, indexed [I, J, K], [I, j, K], [i, J, K], [i, j, K]."""
        return self._coefficients(self._matrices(q, np.zeros(self.nb), np.zeros(self.n)))

    def _coefficients(self, m):
        """The gammas from the matrices at q (their A and dA do not depend on the velocities)."""
        c, A, dA = self.structure, m["A"], m["dA"]            # dA[k, K, i] = d_k A^K_i
        return {"IJ": c,
                "Ij": np.einsum("JIK,Jj->IjK", c, A),
                "iJ": np.einsum("Li,JLK->iJK", A, c),
                "ij": (np.einsum("jKi->ijK", dA) - np.einsum("iKj->ijK", dA)
                       - np.einsum("JLK,Jj,Li->ijK", c, A, A))}

    def _xdot(self, H, vh, q, qd, w, tau):
        w, tau = self._generalized(H, q, w, tau)
        m = self._matrices(q, vh, qd)
        g = self._coefficients(m)
        b = self.nb
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
