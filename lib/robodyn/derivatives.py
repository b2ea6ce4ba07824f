r"""Analytic derivatives of the rigid-body dynamics at a state (Part II, Part V, Part VI).

The partial derivatives of inverse dynamics (RNEA) and forward dynamics (ABA) of a serial chain
(:mod:`robodyn.dynamics`) and of a vehicle--manipulator system (:mod:`robodyn.port_hamiltonian`,
floating or planar base), computed exactly -- no finite differences, no symbols -- by the
recursive algorithms of Carpentier & Mansard (2018) written in the space frame:

* :func:`rnea_derivatives`: :math:`\partial\tau/\partial q`, :math:`\partial\tau/\partial\dot q`
  of :math:`\tau = \mathrm{ID}(q, \dot q, \ddot q)` (eq. (5.14));
* :func:`aba_derivatives`: :math:`\partial\ddot q/\partial q`, :math:`\partial\ddot q/\partial
  \dot q` and :math:`\partial\ddot q/\partial\tau = M^{-1}` of
  :math:`\ddot q = \mathrm{FD}(q, \dot q, \tau)`;
* :func:`linearized_dynamics`: the state matrices
  :math:`A = \begin{bmatrix}0 & 1\\ \partial\ddot q/\partial q & \partial\ddot q/\partial\dot q
  \end{bmatrix}`, :math:`B = \begin{bmatrix}0\\ M^{-1}\end{bmatrix}` of
  :math:`\delta\dot x = A\,\delta x + B\,\delta\tau` at a state (the numeric twin of
  :func:`robodyn.kane.linearize`, and the variational equation of a trajectory);
* :func:`vms_rnea_derivatives`, :func:`vms_aba_derivatives`: the same for a
  :class:`~robodyn.port_hamiltonian.VehicleManipulator`, the base pose perturbed along its local tangent,
  :math:`H \to H\,e^{[S_b\delta]}`, the base twist :math:`v` in {b} as everywhere in
  :mod:`robodyn.port_hamiltonian` (Pinocchio's free-flyer convention, with (omega, v) order).

How (see ``_engine.c`` for the recursions): turning joint *j* carries every body outboard of
it rigidly about its screw :math:`s_j`; wrenches that are carried along change by
:math:`-\mathrm{ad}_{s_j}^T`, and the torques :math:`\tau_i = s_i^TF_i` of the joints
outboard of *j* only feel what is *not* carried: the inboard twist and acceleration seen from
the moved bodies, :math:`\nu_j = \mathrm{ad}_{v_{j-1}}s_j` and
:math:`\psi_j = \mathrm{ad}_{a_{j-1}}s_j + \mathrm{ad}_{v_{j-1}}\nu_j`. With the composite
inertias :math:`\mathcal I^c_i` and the composite
:math:`\mathcal B^c_i = \sum_{l\ge i}(\dot{\mathcal I}_l + H(\mathcal I_lv_l))`,
:math:`H(h)x = -\mathrm{ad}_x^Th`:

.. math:: \frac{\partial\tau_i}{\partial q_j} = \begin{cases}
          s_i^T(-\mathrm{ad}_{s_j}^TF_j + \mathcal I^c_j\psi_j + \mathcal B^c_j\nu_j) & i\le j\\
          s_i^T(\mathcal I^c_i\psi_j + \mathcal B^c_i\nu_j) & i>j\end{cases},\qquad
          \frac{\partial\tau_i}{\partial\dot q_j} = s_i^T(2\mathcal I^c_m\nu_j
          + \mathcal B^c_ms_j),\ m = \max(i,j).

O(n^2), like Pinocchio's. Forward dynamics follows from :math:`\mathrm{ID}(q,\dot q,
\mathrm{FD}(q,\dot q,\tau)) = \tau`: :math:`\partial\ddot q/\partial(q,\dot q) =
-M^{-1}\,\partial\tau/\partial(q,\dot q)` at :math:`\ddot q = \mathrm{FD}`.

The compiled engine computes them (one state per call); without a C compiler, or under
``robodyn.dynamics._recursions.ENGINE = "numpy"``, the same recursions run in numpy.

Reference: J. Carpentier and N. Mansard, "Analytical derivatives of rigid body dynamics
algorithms", Robotics: Science and Systems (2018).
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from . import _value_checks
from .dynamics import _recursions as _dy
from .dynamics._recursions import DEFAULT_GRAVITY, _ad6, _hat_np
from .port_hamiltonian._vehicle import VehicleManipulator
from .port_hamiltonian._rigid_body import _check_pose  # unsealed: errors carry our name

__all__ = ["rnea_derivatives", "aba_derivatives", "linearized_dynamics",
           "vms_rnea_derivatives", "vms_aba_derivatives"]


# --------------------------------------------------------------------------
# checks
# --------------------------------------------------------------------------

def _vector(x, n, label):
    """A finite float vector of length n (symbolic input refused: these are numeric)."""
    if _value_checks.is_symbolic(x):
        raise _value_checks.error(label, "numbers", "sympy expressions",
                            "a numeric algorithm: substitute numbers first", exc=TypeError)
    return _value_checks.vector(x, n, label)


def _chain_call(fname, name, chain, q, qd, x, xname, gravity):
    """``(result, None)`` from the compiled engine's ``name`` (it takes clean arrays as they
    are), else ``(None, (data, q, qd, x, g))`` with every argument checked, for the numpy
    recursions."""
    d, b = _dy._fast(chain, fname)
    if b is not None:
        out = getattr(b[0], name)(b[1], q, qd, x, gravity)
        if out is not None:
            return out, None
    n = d.n
    q, qd, x = (_vector(a, n, f"{fname}: {k} (one value per joint of the {n}-joint chain)")
                for k, a in (("q", q), ("qd", qd), (xname, x)))
    g = np.ascontiguousarray(_gravity(gravity, fname), dtype=float)
    if b is not None:
        out = getattr(b[0], name)(b[1], q, qd, x, g)
        if out is not None:
            return out, None
    return None, (d, q, qd, x, g)


def _gravity(gravity, fname):
    if gravity is DEFAULT_GRAVITY:
        return DEFAULT_GRAVITY
    return _vector(gravity, 3, f"{fname}: gravity (space-frame acceleration, m/s^2)")


def _vms(vms, fname):
    if not isinstance(vms, VehicleManipulator):
        raise _value_checks.refusal(TypeError, f"{fname}: vms: expected a VehicleManipulator, got "
                        f"{_value_checks._describe(vms)}")
    return vms


_POSE_TOL = 1e-6          # as robodyn.port_hamiltonian.check_pose


def _fast_vms(vms, name, q, v, qd, x, y, base_pose, gravity):
    """The compiled engine's result on arguments it takes as they are (clean float arrays, a
    pose within check_pose's tolerance), or None: then the checked path runs."""
    eng = _dy._engine()
    if eng is None or not isinstance(vms, VehicleManipulator):
        return None
    gb = None
    if gravity is None and base_pose is not None:
        return None                         # a pose without gravity: checked, then unused
    if gravity is not None:
        if base_pose is None:
            return None
        gb = eng.pose_gravity(base_pose, gravity, _POSE_TOL)
        if gb is None:
            return None
    return vms._compiled(name, q, v, qd, x, y, gb)


def _vms_call(fname, vms, q, v, qd, x, y, names, base_pose, gravity):
    """``(result, None)`` from the compiled engine's ``fname`` (``vms_rnea_derivatives``,
    ``vms_aba_derivatives``), else ``(None, (vms, q, v, qd, x, y, gravity in {b}))`` with every
    argument checked: x is a base vector (nb) and y a joint vector (n), named ``names``."""
    out = _fast_vms(vms, fname, q, v, qd, x, y, base_pose, gravity)
    if out is not None:
        return out, None
    vms = _vms(vms, fname)
    nb, n = vms.nb, vms.n
    q, qd, y = (_vector(a, n, f"{fname}: {k} ({n} joint values)")
                for k, a in (("q", q), ("qd", qd), (names[1], y)))
    v, x = (_vector(a, nb, f"{fname}: {k} ({nb} base numbers, (omega, v) or (m, f))")
            for k, a in (("v", v), (names[0], x)))
    gb = _base_gravity(vms, base_pose, gravity, fname)
    out = vms._compiled(fname, q, v, qd, x, y, gb)
    return (out, None) if out is not None else (None, (vms, q, v, qd, x, y, gb))


def _base_gravity(vms, base_pose, gravity, fname):
    """Gravity in {b}, R^T g, or None without gravity (a pose given then is checked all the
    same: without gravity the derivatives do not depend on it, but a NaN or a matrix that is no
    pose is still the reader's mistake)."""
    if gravity is None:
        if base_pose is not None:
            _check_pose(base_pose, f"{fname}: base_pose")
        return None
    g = _vector(gravity, 3, f"{fname}: gravity")
    if base_pose is None:
        raise _value_checks.refusal(
            ValueError, f"{fname}: base_pose: needed when there is gravity (it acts along "
                        f"R^T g in the base frame), got None")
    H = _check_pose(base_pose, f"{fname}: base_pose")
    return np.ascontiguousarray(H[:3, :3].T @ g)


# --------------------------------------------------------------------------
# the recursions in numpy (the engine's twin, for machines without a C compiler)
# --------------------------------------------------------------------------

def _finite(results, fname, names):
    """The tuple of results, each checked finite (finite input must not give inf or NaN)."""
    return tuple(_dy._finite_result(x, fname, names) for x in results)


def _hmat(h):
    """H(h) with H(h) x = -ad_x^T h, for a wrench h = (m, f)."""
    Hm, Hf = -_hat_np(h[:3]), -_hat_np(h[3:])
    return np.block([[Hm, Hf], [Hf, np.zeros((3, 3))]])


def _rnea_derivatives_np(s, I, qd, qdd, g, base=None):
    """(dtau/dq, dtau/dqd) from the screws s (n, 6) and inertias I (n, 6, 6) at q; base =
    (Sb (6, nb), Ib (6, 6), v, vd) puts a base first (rows and columns nb + n). An overflow
    gives inf or NaN silently here; the callers refuse it (_finite)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return _rnea_derivatives_recursion(s, I, qd, qdd, g, base)


def _rnea_derivatives_recursion(s, I, qd, qdd, g, base):
    n = len(s)
    nb = 0 if base is None else base[0].shape[1]
    ag = np.r_[0.0, 0.0, 0.0, -np.asarray(g, dtype=float)]
    t0 = np.zeros(6) if base is None else base[0] @ base[2]
    Ap = ag if base is None else base[0] @ base[3] + ag
    Vp = t0.copy()
    nu, psi, F = np.zeros((n, 6)), np.zeros((n, 6)), np.zeros((n, 6))
    Bc = np.zeros((n, 6, 6))
    for i in range(n):
        adVp = _ad6(Vp)
        nu[i] = adVp @ s[i]
        psi[i] = _ad6(Ap) @ s[i] + adVp @ nu[i]
        Vp = Vp + s[i] * qd[i]
        Ap = Ap + s[i] * qdd[i] + nu[i] * qd[i]
        h, X = I[i] @ Vp, I[i] @ _ad6(Vp)
        F[i] = I[i] @ Ap - _ad6(Vp).T @ h
        Bc[i] = -(X + X.T) + _hmat(h)
    Ic = np.cumsum(I[::-1], axis=0)[::-1]
    Bc = np.cumsum(Bc[::-1], axis=0)[::-1]
    F = np.cumsum(F[::-1], axis=0)[::-1]
    Ps, Qs = np.einsum("nij,nj->ni", Ic, s), np.einsum("nji,nj->ni", Bc, s)
    w = (-np.einsum("nji,nj->ni", _ad6(s), F) + np.einsum("nij,nj->ni", Ic, psi)
         + np.einsum("nij,nj->ni", Bc, nu))
    z = 2 * np.einsum("nij,nj->ni", Ic, nu) + np.einsum("nij,nj->ni", Bc, s)
    upper = np.arange(n)[:, None] <= np.arange(n)[None, :]
    m = nb + n
    dq, dqd = np.zeros((m, m)), np.zeros((m, m))
    dq[nb:, nb:] = np.where(upper, s @ w.T, Ps @ psi.T + Qs @ nu.T)
    dqd[nb:, nb:] = np.where(upper, s @ z.T, 2 * Ps @ nu.T + Qs @ s.T)
    if base is not None:
        Sb, Ib = base[0], base[1]
        Xb = Ib @ _ad6(t0)
        Icb = Ib + Ic[0]
        Bcb = -(Xb + Xb.T) + _hmat(Ib @ t0) + Bc[0]
        dq[:nb, nb:], dqd[:nb, nb:] = Sb.T @ w.T, Sb.T @ z.T
        alpha, nup = _ad6(ag) @ Sb, _ad6(t0) @ Sb             # (6, nb) columns
        dq[nb:, :nb] = Ps @ alpha
        dqd[nb:, :nb] = Ps @ nup + Qs @ Sb
        dq[:nb, :nb] = Sb.T @ Icb @ alpha
        dqd[:nb, :nb] = Sb.T @ (Icb @ nup + Bcb @ Sb)
    return dq, dqd


def _chain_kinematics(d, q):
    kin = _dy._kinematics(d, q[None])
    return kin.s[0], kin.I[0]


def _vms_kinematics(vms, q):
    """Screws and inertias of the arm in {b} (the engine's mounted chain), the base's S_b, I_b."""
    basis, K, mass, _, Sb, Ib = vms._engine_data()
    s, I = _chain_kinematics(SimpleNamespace(basis=basis, K=K, mass=mass), q)
    return s, I, np.asarray(Sb, dtype=float), np.asarray(Ib, dtype=float)


def _spd_inverse(M, fname):
    try:
        L = np.linalg.cholesky(M)
    except np.linalg.LinAlgError as exc:
        raise _value_checks.refusal(
            ValueError, f"{fname}: the mass matrix is not positive definite at this state "
                        f"(check the link inertias)") from exc
    Li = np.linalg.solve(L, np.eye(len(M)))
    return Li.T @ Li


# --------------------------------------------------------------------------
# public functions
# --------------------------------------------------------------------------

def rnea_derivatives(chain, q, qd, qdd, gravity=DEFAULT_GRAVITY):
    r"""The partial derivatives :math:`\partial\tau/\partial q` and
    :math:`\partial\tau/\partial\dot q` of inverse dynamics,
    :math:`\tau = M(q)\ddot q + C(q,\dot q)\dot q + G(q)` (eq. (5.14)), at one state, exactly
    (the recursions of the module notes; :math:`\partial\tau/\partial\ddot q = M`, see
    :func:`robodyn.dynamics.crba`).

    Parameters
    ----------
    chain : SerialChain with inertias (numeric)
    q, qd, qdd : array_like (n,), one state
    gravity : array_like (3,), space frame, m/s^2

    Returns
    -------
    (dtau_dq, dtau_dqd) : ndarray (n, n) each; entry (i, j) is the derivative of
    :math:`\tau_i` with respect to :math:`q_j` (:math:`\dot q_j`).

    Raises
    ------
    TypeError, ValueError
        for a chain without inertias, symbolic input, wrong shapes or non-finite numbers.

    Examples
    --------
    The planar RR arm stretched out along x, gravity -y: the gravity torques
    :math:`G_1 = g(m_1l_1/2 + m_2l_1)\cos q_1 + gm_2(l_2/2)\cos(q_1+q_2)`,
    :math:`G_2 = gm_2(l_2/2)\cos(q_1+q_2)` have zero slope there:

    >>> from robodyn.models import planar_rr
    >>> dq, dqd = rnea_derivatives(planar_rr(), [0, 0], [0, 0], [0, 0], gravity=[0, -9.81, 0])
    >>> bool(np.abs(dq).max() < 1e-12), bool(np.abs(dqd).max() < 1e-12)
    (True, True)
    >>> dq, _ = rnea_derivatives(planar_rr(), [np.pi / 2, 0], [0, 0], [0, 0],
    ...                          gravity=[0, -9.81, 0])
    >>> np.round(dq, 6)           # -(m1 l1/2 + m2 l1 + m2 l2/2) g, -m2 l2/2 g, ...
    array([[-19.62 ,  -4.905],
           [ -4.905,  -4.905]])
    """
    out, checked = _chain_call("rnea_derivatives", "rnea_derivatives", chain, q, qd, qdd, "qdd",
                               gravity)
    if out is not None:
        return out
    d, q, qd, qdd, g = checked
    s, I = _chain_kinematics(d, q)
    return _finite(_rnea_derivatives_np(s, I, qd, qdd, g), "rnea_derivatives", "q, qd, qdd")


def aba_derivatives(chain, q, qd, tau, gravity=DEFAULT_GRAVITY):
    r"""The partial derivatives of forward dynamics
    :math:`\ddot q = \mathrm{FD}(q,\dot q,\tau) = M^{-1}(\tau - C\dot q - G)` (eq. (5.14))
    at one state: :math:`\partial\ddot q/\partial q = -M^{-1}\partial\tau/\partial q`,
    :math:`\partial\ddot q/\partial\dot q = -M^{-1}\partial\tau/\partial\dot q` (the
    :func:`rnea_derivatives` at :math:`\ddot q = \mathrm{FD}(q,\dot q,\tau)`) and
    :math:`\partial\ddot q/\partial\tau = M^{-1}`.

    Parameters
    ----------
    chain : SerialChain with inertias (numeric)
    q, qd, tau : array_like (n,), one state and the joint forces
    gravity : array_like (3,), space frame, m/s^2

    Returns
    -------
    (dqdd_dq, dqdd_dqd, Minv) : ndarray (n, n) each.

    Raises
    ------
    TypeError, ValueError
        as :func:`rnea_derivatives`; ValueError for a singular mass matrix.

    Examples
    --------
    A pendulum hanging straight down has :math:`\partial\ddot q/\partial q = -(g/l_c)\,m l_c^2/J`:
    for the RR arm's first link alone, held at q = -pi/2 (down), the linearization of its
    swing. The last output is the inverse mass matrix:

    >>> from robodyn.models import planar_rr
    >>> from robodyn.dynamics import crba
    >>> chain, q = planar_rr(), np.array([-np.pi / 2, 0.0])
    >>> A, Bv, Minv = aba_derivatives(chain, q, [0, 0], [0, 0], gravity=[0, -9.81, 0])
    >>> np.allclose(Minv @ crba(chain, q), np.eye(2))
    True
    >>> bool(np.all(np.linalg.eigvals(A).real < 0))     # hanging: stable, both modes
    True
    """
    return _aba_derivatives("aba_derivatives", chain, q, qd, tau, gravity)


def _aba_derivatives(fname, chain, q, qd, tau, gravity):
    """:func:`aba_derivatives`, its errors named after the public function ``fname``."""
    out, checked = _chain_call(fname, "aba_derivatives", chain, q, qd, tau, "tau", gravity)
    if out is not None:
        return out
    d, q, qd, tau, g = checked
    try:
        qdd = _dy.forward_dynamics(chain, q, qd, tau, gravity=g)
    except _value_checks.ResultError as err:       # an overflow: this function's result
        raise _value_checks.refusal(_value_checks.ResultError, f"{fname}: result: expected values of q, qd, tau, gravity "
                                     f"small enough for a finite result, got an overflow "
                                     f"({err})") from err
    except ValueError as err:                   # a singular M
        raise _value_checks.refusal(ValueError, f"{fname}: q, qd, tau: {err}") from err
    s, I = _chain_kinematics(d, q)
    dq, dqd = _rnea_derivatives_np(s, I, qd, qdd, g)
    Minv = _spd_inverse(_dy.crba(chain, q), fname)
    return _finite((-Minv @ dq, -Minv @ dqd, Minv), fname, "q, qd, tau, gravity")


def linearized_dynamics(chain, q, qd, tau, gravity=DEFAULT_GRAVITY):
    r"""The linearization :math:`\delta\dot x = A\,\delta x + B\,\delta\tau` of
    :math:`\dot x = (\dot q, \mathrm{FD}(q,\dot q,\tau))` at the state
    :math:`x = (q, \dot q)` and input :math:`\tau`:

    .. math:: A = \begin{bmatrix}0 & 1\\ \partial\ddot q/\partial q &
              \partial\ddot q/\partial\dot q\end{bmatrix},\qquad
              B = \begin{bmatrix}0\\ M^{-1}\end{bmatrix}

    (:func:`aba_derivatives`). At an equilibrium this is the numeric twin of
    :func:`robodyn.kane.linearize`; along a trajectory it is the matrix of the variational
    equation :math:`\dot\Phi = A(t)\Phi`.

    Parameters
    ----------
    chain : SerialChain with inertias; q, qd, tau : array_like (n,); gravity : array_like (3,)

    Returns
    -------
    (A, B) : ndarray (2n, 2n) and (2n, n)

    >>> from robodyn.models import planar_rr
    >>> from robodyn.dynamics import gravity_torques
    >>> chain, g = planar_rr(), [0, -9.81, 0]
    >>> q0 = np.array([np.pi / 2, 0.0])                       # balanced upright
    >>> A, B = linearized_dynamics(chain, q0, [0, 0], gravity_torques(chain, q0, g), g)
    >>> A.shape, B.shape, bool(np.linalg.eigvals(A).real.max() > 0)   # upright: unstable
    ((4, 4), (4, 2), True)
    """
    dq, dqd, Minv = _aba_derivatives("linearized_dynamics", chain, q, qd, tau, gravity)
    n = len(Minv)
    A = np.zeros((2 * n, 2 * n))
    A[:n, n:] = np.eye(n)
    A[n:, :n], A[n:, n:] = dq, dqd
    B = np.zeros((2 * n, n))
    B[n:] = Minv
    return A, B


def vms_rnea_derivatives(vms, q, v, qd, vd, qdd, base_pose=None, gravity=None):
    r"""The partial derivatives of a vehicle--manipulator system's inverse dynamics
    :math:`(\mathrm w, \tau) = \mathcal M(q)(\dot v, \ddot q) + \mathcal C(v, q, \dot q)(v,
    \dot q) - (\text{gravity})` (eq. (ph-21), :meth:`~robodyn.port_hamiltonian.VehicleManipulator.inverse_dynamics`)
    with respect to the configuration (base pose along its local tangent,
    :math:`H\to He^{[S_b\delta]}`, then q) and to the velocity :math:`(v, \dot q)`, exactly.

    Parameters
    ----------
    vms : VehicleManipulator
    q, qd, qdd : array_like (n,); v, vd : array_like (nb,), base body twist and its rate
    base_pose : array_like (4, 4), needed with gravity
    gravity : array_like (3,), space frame, optional

    Returns
    -------
    (d_dconfig, d_dvelocity) : ndarray (nb + n, nb + n) each, rows (w, tau), columns
    (delta, q) and (v, qd).

    >>> from robodyn.models import planar_rr
    >>> from robodyn import spatial_inertia
    >>> vms = VehicleManipulator.from_chain(planar_rr(), spatial_inertia(5.0, [1, 1, 1]))
    >>> dX, dV = vms_rnea_derivatives(vms, [0.3, 0.2], np.zeros(6), [0, 0], np.zeros(6), [0, 0])
    >>> dX.shape, float(np.abs(dX).max()), float(np.abs(dV).max())   # at rest, no gravity
    ((8, 8), 0.0, 0.0)
    """
    out, checked = _vms_call("vms_rnea_derivatives", vms, q, v, qd, vd, qdd, ("vd", "qdd"),
                             base_pose, gravity)
    if out is not None:
        return out
    vms, q, v, qd, vd, qdd, gb = checked
    s, I, Sb, Ib = _vms_kinematics(vms, q)
    return _finite(_rnea_derivatives_np(s, I, qd, qdd, np.zeros(3) if gb is None else gb,
                                        base=(Sb, Ib, v, vd)), "vms_rnea_derivatives",
                   "q, v, qd, vd, qdd, gravity")


def vms_aba_derivatives(vms, q, v, qd, w, tau, base_pose=None, gravity=None):
    r"""The partial derivatives of a vehicle--manipulator system's forward dynamics
    :math:`(\dot v, \ddot q) = \mathcal M^{-1}((\mathrm w, \tau) - \mathcal C\nu + \text{gravity})`
    with respect to the configuration (base pose along its local tangent, then q), to the
    velocity :math:`\nu = (v, \dot q)`, and to the forces (:math:`\mathcal M^{-1}`): minus
    :math:`\mathcal M^{-1}` times :func:`vms_rnea_derivatives` at the accelerations.

    Parameters
    ----------
    vms : VehicleManipulator
    q, qd, tau : array_like (n,); v, w : array_like (nb,), base twist and base wrench
    base_pose : array_like (4, 4), needed with gravity; gravity : array_like (3,), optional

    Returns
    -------
    (dacc_dconfig, dacc_dvelocity, Minv) : ndarray (nb + n, nb + n) each.

    >>> from robodyn.models import planar_rr
    >>> from robodyn import spatial_inertia
    >>> vms = VehicleManipulator.from_chain(planar_rr(), spatial_inertia(5.0, [1, 1, 1]))
    >>> _, _, Minv = vms_aba_derivatives(vms, [0.3, 0.2], np.zeros(6), [0, 0], np.zeros(6), [0, 0])
    >>> np.allclose(Minv @ vms.mass_matrix([0.3, 0.2]), np.eye(8))
    True
    """
    fname = "vms_aba_derivatives"
    out, checked = _vms_call(fname, vms, q, v, qd, w, tau, ("w", "tau"), base_pose, gravity)
    if out is not None:
        return out
    vms, q, v, qd, w, tau, gb = checked
    nb, n = vms.nb, vms.n
    M = vms.mass_matrix(q)
    Minv = _spd_inverse(M, fname)
    H = None if gb is None else _check_pose(base_pose, f"{fname}: base_pose")
    with _value_checks.overflow_guard(fname):
        b = vms.inverse_dynamics(q, v, qd, np.zeros(nb), np.zeros(n), base_pose=H,
                                 gravity=gravity)
    acc = Minv @ (np.r_[w, tau] - b)
    s, I, Sb, Ib = _vms_kinematics(vms, q)
    dX, dV = _rnea_derivatives_np(s, I, qd, acc[nb:], np.zeros(3) if gb is None else gb,
                                  base=(Sb, Ib, v, acc[:nb]))
    return _finite((-Minv @ dX, -Minv @ dV, Minv), fname, "q, v, qd, w, tau, gravity")

from ._boundary import seal as _seal  # noqa: E402 -- the one boundary (issue 28): last, over the finished module
_seal(globals(), {f: {"self_checked": True} for f in (
    "rnea_derivatives", "aba_derivatives", "vms_rnea_derivatives", "vms_aba_derivatives")})
