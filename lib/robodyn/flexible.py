r"""A flexible link on a rotating hub by the assumed-modes method (handbook §6.5.3).

A uniform Euler--Bernoulli beam (length L, bending stiffness EI, mass per length
:math:`\rho`) is clamped to a hub of inertia :math:`J_h` that turns by :math:`\theta` in a
horizontal plane under a hub torque :math:`\tau`. Its deflection, measured in the rotating
frame, is expanded in N clamped--free beam modes,

.. math:: w(x, t) = \sum_{i=1}^N \phi_i(x)\,\eta_i(t),\qquad
          \phi_i(x) = \cosh\beta_ix - \cos\beta_ix - \sigma_i(\sinh\beta_ix - \sin\beta_ix),

with :math:`\cos\beta_iL\cosh\beta_iL + 1 = 0` and
:math:`\sigma_i = (\cosh\beta_iL + \cos\beta_iL)/(\sinh\beta_iL + \sin\beta_iL)`. The roots
and every integral (:math:`\int\rho x\phi_i`, :math:`\int\rho\phi_i\phi_j`,
:math:`\int EI\phi_i''\phi_j''`, ...) are computed here (Brent's method, Gauss--Legendre
quadrature), not typed in. Kane's method with the speeds :math:`u_0 = \dot\theta`,
:math:`u_i = \dot\eta_i`: a point of the beam at x has, in the rotating axes, velocity
:math:`v = (-w\dot\theta,\ x\dot\theta + \dot w)` (small deflections, no axial shortening),
partial velocities :math:`v_0 = (-w, x)`, :math:`v_i = (0, \phi_i)` and acceleration
:math:`a = (-x\dot\theta^2 - w\ddot\theta - 2\dot w\dot\theta,\ x\ddot\theta + \ddot w -
w\dot\theta^2)`; the elastic forces contribute :math:`-\int EI\,w''\phi_i''\,dx` to
:math:`F_i`. The equations are a :class:`~robodyn.equations.MassMatrixForm`.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import sympy as sp
from scipy.optimize import brentq

from . import _checks
from .equations import TIME
from .equations import FieldsForm

__all__ = ["clamped_free_roots", "pinned_free_roots", "mode_shape", "FlexibleLink",
           "flexible_link", "natural_frequencies"]

MAX_MODES = 12
"""Largest number of assumed modes (the hyperbolic functions lose accuracy beyond)."""


def _count(n, fname, what="n"):
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)) or \
            not 1 <= n <= MAX_MODES:
        raise ValueError(f"{fname}: {what}: expected a whole number 1..{MAX_MODES}, got {n!r}")
    return int(n)


def _roots(fn, n, lo, hi):
    """n roots of fn, the k-th in (lo(k), hi(k)) (brackets where fn changes sign)."""
    return np.array([brentq(fn, lo(k), hi(k), xtol=1e-14) for k in range(1, n + 1)])


def clamped_free_roots(n):
    r"""The first n roots :math:`\beta L` of :math:`\cos\beta L\cosh\beta L + 1 = 0`
    (clamped--free beam; written :math:`\cos x + 1/\cosh x = 0` to keep it bounded).

    >>> np.round(clamped_free_roots(3), 4)
    array([1.8751, 4.6941, 7.8548])
    """
    n = _count(n, "clamped_free_roots")
    return _roots(lambda x: np.cos(x) + 1 / np.cosh(x), n, lambda k: (k - 1) * np.pi + 1e-9,
                  lambda k: k * np.pi)


def pinned_free_roots(n):
    r"""The first n nonzero roots :math:`\beta L` of :math:`\tan\beta L = \tanh\beta L`
    (pinned--free beam, the free hub's limit; written :math:`\sin x\cosh x - \cos x\sinh x = 0`
    divided by :math:`\cosh x`).

    >>> np.round(pinned_free_roots(3), 4)
    array([ 3.9266,  7.0686, 10.2102])
    """
    n = _count(n, "pinned_free_roots")
    return _roots(lambda x: np.sin(x) - np.cos(x) * np.tanh(x), n, lambda k: k * np.pi + 1e-9,
                  lambda k: (k + 0.5) * np.pi)


def mode_shape(beta, L, x, derivative=0):
    r"""The clamped--free mode :math:`\phi(x)` of root :math:`\beta L` = ``beta`` (or its
    ``derivative``-th derivative, 0..2), with the usual normalization :math:`\int_0^L\phi^2dx = L`,
    :math:`\phi(L) = \pm 2`; written stably with :math:`e^{-\beta x}` for large :math:`\beta x`; ``x`` in m (array).

    >>> round(float(mode_shape(clamped_free_roots(1)[0], 1.0, 1.0)), 6)
    2.0
    """
    b = beta / L
    x = np.asarray(x, dtype=float)
    bl = beta
    sig = (np.cosh(bl) + np.cos(bl)) / (np.sinh(bl) + np.sin(bl))
    ep, em = np.exp(b * x - bl), np.exp(-b * x)      # e^{bx} scaled by e^{-bL}
    c, s = np.cos(b * x), np.sin(b * x)
    # cosh - sigma sinh = ((1 - sigma) e^{bx} + (1 + sigma) e^{-bx}) / 2
    a1 = (1 - sig) / 2 * np.exp(bl)
    if derivative == 0:
        return a1 * ep + (1 + sig) / 2 * em - c + sig * s
    if derivative == 1:
        return b * (a1 * ep - (1 + sig) / 2 * em + s + sig * c)
    if derivative == 2:
        return b * b * (a1 * ep + (1 + sig) / 2 * em + c - sig * s)
    raise ValueError(f"mode_shape: derivative: expected 0, 1 or 2, got {derivative!r}")


@dataclass(frozen=True, eq=False)
class FlexibleLink(FieldsForm):
    r"""The hub--beam equations :math:`M\dot u = f + B\tau` (module docstring), made by
    :func:`flexible_link`. Fields: the physical data (``hub_inertia``, ``length``, ``EI``,
    ``rho``, ``tip_mass``), ``betas`` (the roots :math:`\beta_iL`), ``integrals`` (name ->
    array, computed by quadrature), ``q`` = (theta, eta_1..eta_N), ``u``, ``udot``,
    ``partial_velocities`` (symbolic, in x and :math:`\phi_i`), ``acceleration``,
    ``active_forces``, ``inertia_forces``, ``M``, ``f``, ``B``."""
    hub_inertia: float
    length: float
    EI: float
    rho: float
    tip_mass: float
    betas: np.ndarray
    integrals: dict
    q: sp.Matrix
    u: sp.Matrix
    udot: sp.Matrix
    partial_velocities: list
    acceleration: sp.Matrix
    active_forces: sp.Matrix
    inertia_forces: sp.Matrix
    M: sp.Matrix
    f: sp.Matrix
    B: sp.Matrix
    t: sp.Symbol = TIME
    name: str = "flexible link"
    _numeric_forms: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def n_modes(self):
        return len(self.betas)

    @property
    def qd(self):
        return self.u

    def deflection(self, eta, x):
        """w(x) = sum phi_i(x) eta_i (m) for modal coordinates eta (N,), x array."""
        eta = _checks.vector(eta, self.n_modes, "FlexibleLink.deflection: eta")
        return sum(e * mode_shape(b, self.length, x) for e, b in zip(eta, self.betas))


def _positive(x, what, fname, allow_zero=False, allow_inf=False):
    v = _checks.scalar(x, f"{fname}: {what}")
    if isinstance(v, sp.Basic) or not (v >= 0 if allow_zero else v > 0):
        raise ValueError(f"{fname}: {what}: expected a {'non-negative' if allow_zero else 'positive'}"
                         f" number, got {x!r}")
    return float(v)


def flexible_link(n_modes, hub_inertia=0.0, length=1.0, EI=1.0, rho=1.0, tip_mass=0.0,
                  n_quad=200):
    r"""Kane's equations of a hub carrying a flexible link (N assumed modes).

    Parameters
    ----------
    n_modes : int, 1..12
    hub_inertia : kg m^2 (0: a free hub, the pinned--free limit)
    length : m; EI : N m^2; rho : kg/m; tip_mass : kg (a point mass at x = L)
    n_quad : Gauss--Legendre points of the integrals

    Returns
    -------
    FlexibleLink (q = (theta, eta_1..N), one input: the hub torque)

    Raises
    ------
    ValueError for a number of modes outside 1..12 or non-positive physical data.

    Examples
    --------
    >>> link = flexible_link(2, hub_inertia=1e9)
    >>> np.round(np.sqrt(natural_frequencies(link)), 4)     # sqrt(omega) = beta L here
    array([1.8751, 4.6941])
    """
    fname = "flexible_link"
    N = _count(n_modes, fname, "n_modes")
    Jh = _positive(hub_inertia, "hub_inertia", fname, allow_zero=True)
    L = _positive(length, "length", fname)
    EI_ = _positive(EI, "EI", fname)
    rho_ = _positive(rho, "rho", fname)
    mt = _positive(tip_mass, "tip_mass", fname, allow_zero=True)
    betas = clamped_free_roots(N)
    # quadrature tables
    xg, wg = np.polynomial.legendre.leggauss(int(n_quad))
    x = (xg + 1) * L / 2
    w = wg * L / 2
    phi = np.array([mode_shape(b, L, x) for b in betas])
    phi2 = np.array([mode_shape(b, L, x, 2) for b in betas])
    phiL = np.array([mode_shape(b, L, L) for b in betas])

    # symbolic Kane derivation with x and phi_i as symbols, then integrals by quadrature
    th = sp.Symbol("theta")
    eta = sp.symbols(f"eta1:{N + 1}")
    q = sp.Matrix([th, *eta])
    u = sp.Matrix(sp.symbols(f"u0:{N + 1}"))
    udot = sp.Matrix([sp.Symbol(f"{s.name}_dot") for s in u])
    xs = sp.Symbol("x")
    ph = sp.symbols(f"phi1:{N + 1}")
    wdef = sum(p * e for p, e in zip(ph, eta))
    wdot = sum(p * s for p, s in zip(ph, u[1:]))
    wdd = sum(p * s for p, s in zip(ph, udot[1:]))
    v = sp.Matrix([-wdef * u[0], xs * u[0] + wdot])
    partials = [v.diff(s) for s in u]
    a = sp.Matrix([-xs * u[0] ** 2 - wdef * udot[0] - 2 * wdot * u[0],
                   xs * udot[0] + wdd - wdef * u[0] ** 2])
    # F_r^* = -int rho v_r . a dx - m_tip v_r . a |_{x=L} - J_h theta_dd (r = 0)
    dens = [sp.expand(-(pv.T * a)[0]) for pv in partials]

    def integrate(expr, weight, tip):
        """int weight(x) expr dx (+ tip * expr at x = L) for expr polynomial in x and phi."""
        poly = sp.Poly(expr, xs, *ph)
        out = 0
        for mono, c in poly.terms():
            dx, dph = mono[0], mono[1:]
            fx = x ** dx * np.prod([phi[i] ** d for i, d in enumerate(dph) if d], axis=0) \
                if any(dph) else x ** dx
            val = weight * float(np.sum(w * fx))
            if tip:
                val += tip * float(L ** dx * np.prod([phiL[i] ** d for i, d in enumerate(dph)]))
            if abs(val) > 1e-11:           # quadrature residue of orthogonal modes
                out += sp.Float(val) * c
        return out

    Fs = sp.Matrix([integrate(d, rho_, mt) for d in dens])
    Fs[0] -= Jh * udot[0]
    Kel = np.array([[float(np.sum(w * EI_ * phi2[i] * phi2[j])) for j in range(N)]
                    for i in range(N)])
    tau = sp.Symbol("tau")
    Kel[np.abs(Kel) < 1e-9 * np.max(np.abs(Kel))] = 0.0
    Fr = sp.Matrix([tau] + [-sum(sp.Float(Kel[i, j]) * eta[j] for j in range(N))
                            for i in range(N)])
    Fs = Fs.applyfunc(sp.expand)
    M = -Fs.jacobian(udot)
    M = (M + M.T) / 2
    f = (Fr + Fs).xreplace({s: 0 for s in udot}).xreplace({tau: 0}).applyfunc(sp.expand)
    B = sp.Matrix([1] + [0] * N)
    integrals = {
        "rho x^2": rho_ * float(np.sum(w * x ** 2)),
        "rho x phi": rho_ * phi @ (w * x),
        "rho phi phi": rho_ * (phi * w) @ phi.T,
        "EI phi'' phi''": Kel,
        "phi(L)": phiL,
    }
    return FlexibleLink(Jh, L, EI_, rho_, mt, betas, integrals, q, u, udot, partials, a,
                        Fr, Fs, M.applyfunc(sp.expand), f, B)


def natural_frequencies(link, n=None):
    r"""The flexible natural frequencies (rad/s, ascending) of the link linearized about rest:
    the square roots of the positive eigenvalues of :math:`M^{-1}K`, :math:`K = -\partial
    f/\partial q` (the hub's rigid rotation, a zero eigenvalue, is left out).

    >>> link = flexible_link(1, hub_inertia=1e9)
    >>> round(float(natural_frequencies(link)[0]), 4)      # (1.8751)^2 sqrt(EI / rho L^4)
    3.516
    """
    if not isinstance(link, FlexibleLink):
        raise TypeError(f"natural_frequencies: link: expected a FlexibleLink, got "
                        f"{_checks._describe(link)}")
    zero = {s: 0 for s in list(link.q) + list(link.u)}
    K = -link.f.jacobian(link.q).xreplace(zero)
    M = link.M.xreplace(zero)
    Mn = np.array(M.evalf(), dtype=float)
    Kn = np.array(K.evalf(), dtype=float)
    from scipy.linalg import eigh
    ev = eigh(Kn, Mn, eigvals_only=True)
    ev = np.sort(ev[ev > 1e-9 * max(1.0, np.max(np.abs(ev)))])
    return np.sqrt(ev)[:n] if n else np.sqrt(ev)
