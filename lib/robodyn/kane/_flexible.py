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

That is the classical linear model (``geometric_stiffening=False``), which softens under spin
and diverges above its first bending frequency. By default :func:`flexible_link` keeps the
foreshortening of the bent beam, eq. (kane-foreshortening), and with it the centrifugal
stiffness, eq. (kane-stiffening) (Kane, Ryan and Banerjee 1987). :func:`spin_eigenvalues` and
:func:`natural_frequencies` (``spin=``) give the in-plane bending frequencies with the hub rate
prescribed; :func:`simulate_hub` drives the hub along a prescribed motion (e.g.
:func:`spin_up_profile`, eq. (kane-spinup)) or by a stiff servo.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace

import numpy as np
import sympy as sp
from scipy.optimize import brentq

from .. import _value_checks
from ..equations import TIME
from ..equations import FieldsForm

__all__ = ["clamped_free_roots", "pinned_free_roots", "mode_shape", "FlexibleLink",
           "flexible_link", "natural_frequencies", "spin_eigenvalues", "spin_up_profile",
           "HubRun", "simulate_hub"]

MAX_MODES = 12
"""Largest number of assumed modes (the hyperbolic functions lose accuracy beyond)."""


def _count(n, fname, what="n"):
    """A number of modes 1..MAX_MODES (Python/numpy ints, Fraction(3, 1), sympy Integer)."""
    return _value_checks.size(n, f"{fname}: {what}", low=1, high=MAX_MODES,
                        hint=f"a whole number of modes 1..{MAX_MODES}")


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
    derivative = _value_checks.size(derivative, "mode_shape: derivative", low=0, high=2,
                              hint="the order of the derivative: 0, 1 or 2")
    beta = _value_checks.real_number(beta, "mode_shape: beta", low=0, strict_low=True)
    L = _value_checks.real_number(L, "mode_shape: L", low=0, strict_low=True, hint="a length in m")
    _clamped_free_root(beta, "mode_shape: beta")
    x = _value_checks.real_array(x, "mode_shape: x")
    _on_the_beam(x, L, "mode_shape: x")
    x = float(x) if x.ndim == 0 else x
    b = beta / L
    x = np.asarray(x, dtype=float)
    bl = beta
    sig = (np.cosh(bl) + np.cos(bl)) / (np.sinh(bl) + np.sin(bl))
    ep, em = np.exp(b * x - bl), np.exp(-b * x)      # e^{bx} scaled by e^{-bL}
    c, s = np.cos(b * x), np.sin(b * x)
    # cosh - sigma sinh = ((1 - sigma) e^{bx} + (1 + sigma) e^{-bx}) / 2
    a1 = (1 - sig) / 2 * np.exp(bl)
    if derivative == 0:
        out = a1 * ep + (1 + sig) / 2 * em - c + sig * s
    elif derivative == 1:
        out = b * (a1 * ep - (1 + sig) / 2 * em + s + sig * c)
    else:
        out = b * b * (a1 * ep + (1 + sig) / 2 * em + c - sig * s)
    return _value_checks.finite_result(out, "mode_shape")


def _clamped_free_root(beta, name, tol=1e-3):
    r"""Refuse a ``beta`` that is not a root of the clamped--free frequency equation
    :math:`1 + \cos\beta\cosh\beta = 0` (read as :math:`\cos\beta + 1/\cosh\beta = 0`,
    bounded): the formula of :func:`mode_shape` is a mode only there."""
    r = abs(np.cos(beta) + 1.0 / np.cosh(min(beta, 700.0)))
    if r > tol:
        k = int(np.clip(round(beta / np.pi + 0.5), 1, 10**6))
        near = clamped_free_roots(min(k, 50))[-1] if k <= 50 else (k - 0.5) * np.pi
        raise _value_checks.error(name, "a root beta*L of 1 + cos(bL) cosh(bL) = 0 (clamped-free: "
                            "1.8751, 4.6941, 7.8548, ...)", f"{beta:.6g} (the nearest root is "
                            f"{near:.6g})", "a mode shape exists only at a natural frequency: "
                            "take the roots from clamped_free_roots(n)")


def _on_the_beam(x, L, name):
    """Refuse positions outside the beam [0, L]."""
    lo, hi = float(np.min(x, initial=0.0)), float(np.max(x, initial=0.0))
    if lo < -1e-12 * L or hi > L * (1 + 1e-12):
        raise _value_checks.error(name, f"positions along the beam, in [0, L] = [0, {L:g}] m",
                            f"values from {lo:.6g} to {hi:.6g}",
                            "the assumed modes describe the beam only")


@dataclass(frozen=True, eq=False)
class FlexibleLink(FieldsForm):
    r"""The hub--beam equations :math:`M\dot u = f + B\tau` (module docstring), made by
    :func:`flexible_link`. Fields: the physical data (``hub_inertia``, ``length``, ``EI``,
    ``rho``, ``tip_mass``), ``betas`` (the roots :math:`\beta_iL`), ``integrals`` (name ->
    array, computed by quadrature), ``q`` = (theta, eta_1..eta_N), ``u``, ``udot``,
    ``partial_velocities`` (symbolic, in x, :math:`\phi_i` and :math:`G_{ij}`), ``acceleration``,
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
    geometric_stiffening: bool = True
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
        fname = "FlexibleLink.deflection"
        eta = _value_checks.vector(eta, self.n_modes, f"{fname}: eta")
        if _value_checks.is_symbolic(eta):
            raise _value_checks.error(f"{fname}: eta", "numbers", "sympy expressions",
                                "this is a numeric function: substitute numbers first",
                                exc=TypeError)
        x = _value_checks.real_array(x, f"{fname}: x", hint="positions along the link in m")
        _on_the_beam(x, self.length, f"{fname}: x")
        x = float(x) if x.ndim == 0 else x
        with _value_checks.overflow_guard(fname):
            w = sum(e * mode_shape(b, self.length, x) for e, b in zip(eta, self.betas))
        return _value_checks.finite_result(w, fname)


def _positive(x, what, fname, allow_zero=False):
    """A positive (or, with ``allow_zero``, non-negative) finite number, as a float."""
    return _value_checks.real_number(x, f"{fname}: {what}", low=0, strict_low=not allow_zero)


MAX_QUAD = 2000
"""Most Gauss--Legendre points of the mode integrals (200 already integrate 12 modes to
rounding; the foreshortening tables cost ``n_quad * 64 * n_modes`` mode evaluations)."""

_INNER = 64          # Gauss points of the inner integral G_ij(x) = int_0^x phi_i' phi_j'


def _truncated(a, b, eps, deg):
    """sum_k a_k eps^k * sum_l b_l eps^l with only the powers k + l <= deg kept (a, b are
    expressions polynomial in eps); the product is never formed in full."""
    def by_degree(e):
        terms = {}
        for t in sp.Add.make_args(sp.expand(e)):
            c, k = t.as_coeff_exponent(eps)
            terms.setdefault(int(k), []).append(c)
        return {k: sp.Add(*v) for k, v in terms.items()}

    ca, cb = by_degree(a), by_degree(b)
    return sp.expand(sp.Add(*[ca[k] * cb[l] * eps ** (k + l) for k in ca for l in cb
                              if k + l <= deg]))


def _quadrature_tables(betas, L, n_quad, stiff):
    """Gauss--Legendre nodes x and weights w on [0, L]; the modes phi, phi'' at the nodes and
    phi(L); the index pairs (i <= j) and the foreshortening integrals G_ij at the nodes and at
    L (zeros without geometric stiffening)."""
    N = len(betas)
    xg, wg = np.polynomial.legendre.leggauss(n_quad)
    x = (xg + 1) * L / 2
    w = wg * L / 2
    phi = np.array([mode_shape(b, L, x) for b in betas])
    phi2 = np.array([mode_shape(b, L, x, 2) for b in betas])
    phiL = np.array([mode_shape(b, L, L) for b in betas])
    pairs = [(i, j) for i in range(N) for j in range(i, N)]
    if stiff:                               # G_ij(x) = int_0^x phi_i' phi_j' at every node
        ti, wi = np.polynomial.legendre.leggauss(_INNER)
        nodes = np.concatenate([x, [L]])
        inner = nodes[:, None] * (ti + 1) / 2
        d1 = np.array([mode_shape(b, L, inner, 1) for b in betas])
        G = np.array([(d1[i] * d1[j]) @ wi * nodes / 2 for i, j in pairs])
        G, GL = G[:, :-1], G[:, -1]
    else:
        G = np.zeros((len(pairs), n_quad))
        GL = np.zeros(len(pairs))
    return x, w, phi, phi2, phiL, pairs, G, GL


def _integrate(expr, weight, tip, t):
    """int weight(x) expr dx (+ tip * expr at x = L) for expr polynomial in x, phi_i, G_ij
    (``t.gens``), by the quadrature ``t.x``, ``t.w`` with the tables ``t.along`` (values at
    the nodes) and ``t.at_tip`` (values at L)."""
    poly = sp.Poly(expr, *t.gens)
    out = 0
    for mono, c in poly.terms():
        fx = t.x ** mono[0]
        atL = t.L ** mono[0]
        for gen, d in zip(t.gens[1:], mono[1:]):
            if d:
                fx = fx * t.along[gen] ** d
                atL *= float(t.at_tip[gen]) ** d
        val = weight * float(np.sum(t.w * fx))
        if tip:
            val += tip * atL
        if abs(val) > 1e-11:           # quadrature residue of orthogonal modes
            out += sp.Float(val) * c
    return out


def flexible_link(n_modes, hub_inertia=0.0, length=1.0, EI=1.0, rho=1.0, tip_mass=0.0,
                  n_quad=200, geometric_stiffening=True):
    r"""Kane's equations of a hub carrying a flexible link (N assumed modes), eq. (kane-flexible).

    With ``geometric_stiffening=True`` (the default) a point of the beam at x sits, in the
    rotating axes, at :math:`(x - s(x, t),\ w(x, t))` with the **foreshortening**
    :math:`s = \tfrac12\int_0^x w'^2\,d\xi = \tfrac12\eta^TG(x)\eta`,
    :math:`G_{ij}(x) = \int_0^x\phi_i'\phi_j'\,d\xi` (an inextensible beam), eq.
    (kane-foreshortening). The partial velocity of :math:`u_i = \dot\eta_i` then has the axial
    component :math:`-\sum_jG_{ij}\eta_j`; dotted with the centripetal acceleration
    :math:`-x\dot\theta^2` it gives the centrifugal stiffness (kane-stiffening)

    .. math:: K^G_{ij} = \int_0^L\rho\,x\,G_{ij}(x)\,dx + m_tLG_{ij}(L)
              = \int_0^L\phi_i'\phi_j'\,\Big(\tfrac{\rho}{2}(L^2 - \xi^2) + m_tL\Big)d\xi,

    so the beam rows read :math:`M_{\eta\eta}\ddot\eta + M_{\eta\theta}\ddot\theta +
    (K + \dot\theta^2(K^G - M_{\eta\eta}))\eta = 0`. Kane, Ryan and Banerjee's consistent
    linearization: the beam rows keep the terms of degree <= 1 in the deformation
    :math:`(\eta, \dot\eta, \ddot\eta)`, the hub row those of degree <= 2; it is taken *after*
    the partial velocities are formed (linearizing the velocity first loses :math:`K^G`).
    ``geometric_stiffening=False`` is the classical linear model, :math:`s = 0`: its
    frequencies fall with the spin, :math:`\omega^2 = \omega_0^2 - \Omega^2`, and it is
    unstable above the first bending frequency -- kept as the counterexample.

    The bending is **in the plane of rotation** (the beam turns about the hub's vertical
    axis and bends in the horizontal plane).

    Parameters
    ----------
    n_modes : int, 1..12
    hub_inertia : kg m^2 (0: a free hub, the pinned--free limit)
    length : m; EI : N m^2; rho : kg/m; tip_mass : kg (a point mass at x = L)
    n_quad : Gauss--Legendre points of the integrals, 2..2000
    geometric_stiffening : bool, keep the foreshortening (True) or not (the linear model)

    Returns
    -------
    FlexibleLink (q = (theta, eta_1..N), one input: the hub torque)

    Raises
    ------
    ValueError for a number of modes outside 1..12, a number of quadrature points outside
    2..2000 (refused before any table is built) or non-positive physical data.

    Examples
    --------
    >>> link = flexible_link(2, hub_inertia=1e9)
    >>> np.round(np.sqrt(natural_frequencies(link)), 4)     # sqrt(omega) = beta L here
    array([1.8751, 4.6941])
    >>> np.round(natural_frequencies(link, spin=2.0), 3)    # in-plane, hub rate 2 rad/s
    array([ 3.622, 22.527])
    """
    fname = "flexible_link"
    N = _count(n_modes, fname, "n_modes")
    n_quad = _value_checks.size(n_quad, f"{fname}: n_quad", low=2, high=MAX_QUAD,
                          hint=f"Gauss points; {MAX_QUAD} would already cost "
                               f"{MAX_QUAD * _INNER * N:,} mode evaluations")
    Jh = _positive(hub_inertia, "hub_inertia", fname, allow_zero=True)
    L = _positive(length, "length", fname)
    EI_ = _positive(EI, "EI", fname)
    rho_ = _positive(rho, "rho", fname)
    mt = _positive(tip_mass, "tip_mass", fname, allow_zero=True)
    stiff = _value_checks.flag(geometric_stiffening, f"{fname}: geometric_stiffening")
    betas = clamped_free_roots(N)
    x, w, phi, phi2, phiL, pairs, G, GL = _quadrature_tables(betas, L, n_quad, stiff)

    # symbolic Kane derivation with x, phi_i and G_ij as symbols, integrals by quadrature
    th = sp.Symbol("theta")
    eta = sp.symbols(f"eta1:{N + 1}")
    q = sp.Matrix([th, *eta])
    u = sp.Matrix(sp.symbols(f"u0:{N + 1}"))
    udot = sp.Matrix([sp.Symbol(f"{s.name}_dot") for s in u])
    xs = sp.Symbol("x")
    ph = sp.symbols(f"phi1:{N + 1}")
    gs = sp.symbols([f"G{i + 1}_{j + 1}" for i, j in pairs])
    Gm = sp.zeros(N, N)
    for (i, j), g in zip(pairs, gs):
        Gm[i, j] = Gm[j, i] = g if stiff else 0
    E = sp.Matrix(eta)
    wdef = sum(p * e for p, e in zip(ph, eta))
    wdot = sum(p * s for p, s in zip(ph, u[1:]))
    wdd = sum(p * s for p, s in zip(ph, udot[1:]))
    ud, udd = sp.Matrix(u[1:]), sp.Matrix(udot[1:])
    s_ = (E.T * Gm * E)[0] / 2                                   # foreshortening
    sd = (E.T * Gm * ud)[0]
    sdd = (ud.T * Gm * ud)[0] + (E.T * Gm * udd)[0]
    X = xs - s_
    v = sp.Matrix([-sd - wdef * u[0], X * u[0] + wdot])          # rotating axes
    partials = [v.diff(s) for s in u]
    a = sp.Matrix([-sdd - 2 * wdot * u[0] - wdef * udot[0] - X * u[0] ** 2,
                   wdd - 2 * sd * u[0] + X * udot[0] - wdef * u[0] ** 2])
    # F_r^* = -int rho v_r . a dx - m_tip v_r . a |_{x=L} - J_h theta_dd (r = 0), truncated
    # at degree 2 (hub row) and 1 (beam rows) in the deformation: eps counts its degree
    eps = sp.Symbol("epsilon")
    book = {s: eps * s for s in list(eta) + list(u[1:]) + list(udot[1:])}
    aE = a.xreplace(book)
    dens = []
    for r, pv in enumerate(partials):
        deg = 2 if r == 0 else 1
        pvE = pv.xreplace(book)
        d = sum((_truncated(pvE[k], aE[k], eps, deg) for k in range(2)), sp.Integer(0))
        dens.append(sp.expand(-d.xreplace({eps: 1})))
    tables = SimpleNamespace(gens=[xs, *ph, *gs], x=x, w=w, L=L,
                             along={**dict(zip(ph, phi)), **dict(zip(gs, G))},
                             at_tip={**dict(zip(ph, phiL)), **dict(zip(gs, GL))})
    Fs = sp.Matrix([_integrate(d, rho_, mt, tables) for d in dens])
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
    KG = np.zeros((N, N))
    for (i, j), gx, gl in zip(pairs, G, GL):
        KG[i, j] = KG[j, i] = rho_ * float(np.sum(w * x * gx)) + mt * L * gl
    integrals = {
        "rho x^2": rho_ * float(np.sum(w * x ** 2)),
        "rho x phi": rho_ * phi @ (w * x),
        "rho phi phi": rho_ * (phi * w) @ phi.T,
        "EI phi'' phi''": Kel,
        "phi(L)": phiL,
        "rho x G": KG,
    }
    return FlexibleLink(Jh, L, EI_, rho_, mt, betas, integrals, q, u, udot, partials, a,
                        Fr, Fs, M.applyfunc(sp.expand), f, B, geometric_stiffening=stiff)


def _link(link, fname):
    if not isinstance(link, FlexibleLink):
        raise _value_checks.refusal(TypeError, f"{fname}: link: expected a FlexibleLink, got "
                        f"{_value_checks._describe(link)}")
    return link


MAX_SPIN = 10.0
"""The largest hub rate, in units of :math:`\\sqrt{EI/\\rho L^4}`, at which the steady-spin
frequencies are offered: up to it the N-mode frequencies are tested against the rotating
beam's (the clamped--free modes are then still a good basis; far beyond, the beam is a
string and needs many more modes)."""


def _spin(link, spin, fname):
    scale = np.sqrt(link.EI / (link.rho * link.length ** 4))
    lim = MAX_SPIN * scale
    return _value_checks.real_number(spin, f"{fname}: spin", low=-lim, high=lim,
                               hint=f"a hub rate in rad/s, |spin| <= {MAX_SPIN:g} sqrt(EI / rho "
                                    f"L^4) = {lim:.4g} rad/s, the range where the modes are "
                                    f"tested")


def spin_eigenvalues(link, spin):
    r"""The squared bending frequencies :math:`\omega^2` (ascending, rad²/s²) of the link
    whose hub turns at the prescribed constant rate ``spin`` :math:`=\Omega` (rad/s): the
    generalized eigenvalues of :math:`(K + \Omega^2(K^G - M_{\eta\eta}),\ M_{\eta\eta})`,
    eq. (kane-stiffening), read off the beam rows of M and f at :math:`\eta = \dot\eta = 0`,
    :math:`\dot\theta = \Omega`, :math:`\ddot\theta = 0`. In-plane bending. A negative value
    means the steady spin is unstable (the linear model above its first frequency).

    >>> lin = flexible_link(1, geometric_stiffening=False)
    >>> round(float(spin_eigenvalues(lin, 2.0)[0]), 4)      # 1.8751**4 - 2**2
    8.3624
    """
    fname = "spin_eigenvalues"
    link = _link(link, fname)
    W = _spin(link, spin, fname)
    N = link.n_modes
    zero = {s: 0 for s in list(link.q[1:]) + list(link.u[1:])}
    zero[link.u[0]] = W
    fb = link.f[1:, :]
    K = -fb.jacobian(link.q[1:]).xreplace(zero)
    M = link.M[1:, 1:].xreplace(zero)
    Kn = np.array(K.evalf(), dtype=float).reshape(N, N)
    Mn = np.array(M.evalf(), dtype=float).reshape(N, N)
    from scipy.linalg import eigh
    return np.sort(eigh((Kn + Kn.T) / 2, Mn, eigvals_only=True))


def natural_frequencies(link, n=None, spin=None):
    r"""The flexible natural frequencies (rad/s, ascending) of the link linearized about rest:
    the square roots of the positive eigenvalues of :math:`M^{-1}K`, :math:`K = -\partial
    f/\partial q` (the hub's rigid rotation, a zero eigenvalue, is left out). With ``spin``
    :math:`=\Omega` (rad/s): the bending frequencies with the hub's rate prescribed at
    :math:`\Omega` (:func:`spin_eigenvalues`, in-plane bending).

    Raises ValueError when the link is unstable at that spin (the linear model above its
    first bending frequency), naming the spin.

    >>> link = flexible_link(1, hub_inertia=1e9)
    >>> round(float(natural_frequencies(link)[0]), 4)      # (1.8751)^2 sqrt(EI / rho L^4)
    3.516
    """
    fname = "natural_frequencies"
    link = _link(link, fname)
    if n is not None:
        n = _value_checks.size(n, f"{fname}: n", low=1, high=link.n_modes + 1)
    if spin is not None:
        ev = spin_eigenvalues(link, spin)
        if ev[0] <= 0:
            kind = "linear (geometric_stiffening=False)" if not link.geometric_stiffening \
                else "stiffened"
            raise _value_checks.refusal(
                ValueError, f"{fname}: spin: the {kind} link is unstable at the hub rate "
                            f"{float(spin):g} rad/s (omega^2 = {ev[0]:.4g}); the linear model "
                            f"loses its bending stiffness above its first frequency -- use "
                            f"spin_eigenvalues to see the negative values")
        return np.sqrt(ev)[:n] if n else np.sqrt(ev)
    zero = {s: 0 for s in list(link.q) + list(link.u)}
    K = -link.f.jacobian(link.q).xreplace(zero)
    M = link.M.xreplace(zero)
    Mn = np.array(M.evalf(), dtype=float)
    Kn = np.array(K.evalf(), dtype=float)
    from scipy.linalg import eigh
    ev = eigh(Kn, Mn, eigvals_only=True)
    ev = np.sort(ev[ev > 1e-9 * max(1.0, np.max(np.abs(ev)))])
    return np.sqrt(ev)[:n] if n else np.sqrt(ev)


# --------------------------------------------------------------------------
# a prescribed (driven) hub, or a stiff hub servo
# --------------------------------------------------------------------------

def spin_up_profile(t, final_rate=6.0, duration=15.0):
    r"""Kane, Ryan and Banerjee's (1987) spin-up: the hub angle, rate and acceleration at
    time(s) t (s), eq. (kane-spinup),

    .. math:: \theta = \frac{\Omega_s}{T_s}\Big(\frac{t^2}{2} + \big(\tfrac{T_s}{2\pi}\big)^2
              \big(\cos\tfrac{2\pi t}{T_s} - 1\big)\Big)\ (t < T_s), \qquad
              \theta = \Omega_s\big(t - \tfrac{T_s}{2}\big)\ (t \ge T_s),

    a smooth ramp of the rate from 0 to :math:`\Omega_s` = ``final_rate`` (rad/s) in
    :math:`T_s` = ``duration`` (s).

    >>> [round(float(v), 4) for v in spin_up_profile(15.0)]
    [45.0, 6.0, 0.0]
    >>> spin_up_profile(-1.0)
    Traceback (most recent call last):
    ...
    robodyn.errors.ArgumentError: spin_up_profile: t: expected times >= 0 (the profile starts from rest at t = 0), got -1.0
    """
    fname = "spin_up_profile"
    Ws = _value_checks.real_number(final_rate, f"{fname}: final_rate", hint="rad/s")
    Ts = _value_checks.real_number(duration, f"{fname}: duration", low=0, strict_low=True, hint="s")
    t = np.asarray(_value_checks.real_array(t, f"{fname}: t"), dtype=float)
    if (t < 0).any():
        raise _value_checks.error(f"{fname}: t", "times >= 0 (the profile starts from rest at "
                                  "t = 0)", f"{float(t.min())!r}")
    c = 2 * np.pi / Ts
    tt = np.minimum(t, Ts)
    th = Ws / Ts * (tt ** 2 / 2 + (np.cos(c * tt) - 1) / c ** 2) + Ws * np.maximum(t - Ts, 0)
    thd = Ws / Ts * (tt - np.sin(c * tt) / c) + 0 * t
    thdd = np.where(t < Ts, Ws / Ts * (1 - np.cos(c * tt)), 0.0)
    return _value_checks.finite_result((th, thd, thdd), fname)


@dataclass(frozen=True)
class HubRun:
    """The result of :func:`simulate_hub`: ``t`` (K,) s; ``theta``, ``theta_dot`` (K,) the hub's
    angle and rate; ``eta``, ``eta_dot`` (K, N) modal coordinates; ``tip_deflection`` (K,) m,
    :math:`w(L)` in the rotating axes; ``torque`` (K,) N m, the hub torque that produces the
    motion (for a prescribed hub: the torque the drive must supply); ``diverged_at`` (s or None):
    the time the tip deflection reached the link's length, where the run stopped (the samples
    after it are NaN) -- the linear model's divergence."""
    t: np.ndarray
    theta: np.ndarray
    theta_dot: np.ndarray
    eta: np.ndarray
    eta_dot: np.ndarray
    tip_deflection: np.ndarray
    torque: np.ndarray
    diverged_at: float | None = None


MAX_STEPS = 2_000_000
"""Most integration steps :func:`simulate_hub` will start (estimated from the stiffest mode)."""


def simulate_hub(link, hub, t_final, servo=None, n_samples=500, rtol=1e-8):
    r"""Simulate the link with its hub **driven**: ``hub(t)`` returns the desired
    :math:`(\theta, \dot\theta, \ddot\theta)` (e.g. :func:`spin_up_profile`).

    ``servo=None``: the hub angle is a prescribed (driven) coordinate; only the beam rows
    :math:`M_{\eta\eta}\ddot\eta = f_\eta - M_{\eta\theta}\ddot\theta` are integrated, and the
    torque the drive must supply is read off the hub row. ``servo=(kp, kd)`` (N m/rad,
    N m s/rad): the hub is free and a stiff servo applies
    :math:`\tau = M_{\theta\theta}\ddot\theta_d + k_p(\theta_d - \theta) + k_d(\dot\theta_d -
    \dot\theta)`; for large gains it approaches the prescribed hub.

    Parameters
    ----------
    link : FlexibleLink; hub : callable t -> (theta, theta_dot, theta_ddot); t_final : s (> 0)
    servo : None or (kp, kd), two positive gains
    n_samples : samples of the result, 2..100000; rtol : the integrator's tolerance

    Raises
    ------
    TypeError for a hub that is not callable; ValueError for a hub that does not return
    three finite numbers, non-positive gains, or a run whose estimated number of steps
    (stiffest mode's frequency x t_final) exceeds MAX_STEPS (refused before it starts).

    >>> link = flexible_link(1, length=10.0, EI=14000.0, rho=1.2)
    >>> run = simulate_hub(link, lambda t: spin_up_profile(t), 1.0, n_samples=3)
    >>> run.theta_dot.round(3)
    array([0.   , 0.001, 0.012])
    """
    fname = "simulate_hub"
    link = _link(link, fname)
    if not callable(hub):
        raise _value_checks.refusal(
            TypeError, f"{fname}: hub: expected a callable t -> (theta, theta_dot, "
                       f"theta_ddot), got {_value_checks._describe(hub)}")
    T = _value_checks.real_number(t_final, f"{fname}: t_final", low=0, strict_low=True, hint="s")
    K = _value_checks.size(n_samples, f"{fname}: n_samples", low=2, high=100_000)
    rtol = _value_checks.tolerance(rtol, f"{fname}: rtol")
    h0 = np.asarray(hub(0.0), dtype=float).ravel()
    if h0.shape != (3,) or not np.all(np.isfinite(h0)):
        raise _value_checks.refusal(
            ValueError, f"{fname}: hub: expected hub(t) to return 3 finite numbers (theta, "
                        f"theta_dot, theta_ddot), got {hub(0.0)!r} at t = 0")
    if servo is not None:
        if not isinstance(servo, (tuple, list)) or len(servo) != 2:
            raise _value_checks.refusal(
                ValueError, f"{fname}: servo: expected None or two gains (kp, kd), got "
                            f"{_value_checks._describe(servo)}")
        kp, kd = (_value_checks.positive(g, f"{fname}: servo[{k}]") for k, g in enumerate(servo))
    N = link.n_modes
    wmax = float(np.sqrt(link.EI / (link.rho * link.length ** 4))) * link.betas[-1] ** 2
    if servo is not None:
        wmax = max(wmax, float(np.sqrt(kp / max(link.hub_inertia, 1e-12))))
    steps = wmax * T / (2 * np.pi) * 60
    if steps > MAX_STEPS:
        raise _value_checks.refusal(
            ValueError, f"{fname}: t_final: expected a run of at most {MAX_STEPS:,} steps, got "
                        f"t_final = {T:g} s, about {steps:,.0f} steps at the stiffest mode "
                        f"({wmax:.4g} rad/s); use fewer modes, softer gains or a shorter run")
    from scipy.integrate import solve_ivp
    args = list(link.q) + list(link.u)
    key = ("hub", "M f")
    if key not in link._numeric_forms:
        link._numeric_forms[key] = sp.lambdify(args, [link.M, link.f], modules="numpy",
                                               cse=True)
    MF = link._numeric_forms[key]

    def Mf(q, u):
        Mq, fq = MF(*q, *u)
        return np.asarray(Mq, dtype=float), np.asarray(fq, dtype=float).ravel()

    def rhs(t, y):
        if servo is None:
            th, thd, thdd = hub(t)
            eta, etad = y[:N], y[N:]
            q = np.concatenate([[th], eta])
            u = np.concatenate([[thd], etad])
            Mq, fq = Mf(q, u)
            etadd = np.linalg.solve(Mq[1:, 1:], fq[1:] - Mq[1:, 0] * thdd)
            return np.concatenate([etad, etadd])
        q, u = y[:N + 1], y[N + 1:]
        th, thd, thdd = hub(t)
        Mq, fq = Mf(q, u)
        fq[0] += Mq[0, 0] * thdd + kp * (th - q[0]) + kd * (thd - u[0])
        return np.concatenate([u, np.linalg.solve(Mq, fq)])

    phiL = link.integrals["phi(L)"]

    def broken(t, y):                  # the deflection has left the model's small-w domain
        eta = y[:N] if servo is None else y[1:N + 1]
        return link.length - abs(eta @ phiL)

    broken.terminal = True

    ts = np.linspace(0.0, T, K)
    if servo is None:
        y0 = np.zeros(2 * N)
    else:
        y0 = np.concatenate([[h0[0]], np.zeros(N), [h0[1]], np.zeros(N)])
    sol = solve_ivp(rhs, (0.0, T), y0, method="DOP853", t_eval=ts, rtol=rtol,
                    atol=rtol * 1e-2, events=broken)
    if sol.status < 0:
        raise RuntimeError(f"{fname}: the integration failed: {sol.message}")
    diverged = float(sol.t_events[0][0]) if len(sol.t_events[0]) else None
    Y = np.full((K, y0.size), np.nan)
    Y[:sol.y.shape[1]] = sol.y.T
    if servo is None:
        H = np.array([hub(t) for t in ts], dtype=float)
        theta, thd, thdd = H.T
        eta, etad = Y[:, :N], Y[:, N:]
    else:
        theta, eta, thd, etad = Y[:, 0], Y[:, 1:N + 1], Y[:, N + 1], Y[:, N + 2:]
        thdd = None
    tip = eta @ link.integrals["phi(L)"]
    torque = np.full(K, np.nan)
    for k in range(sol.y.shape[1]):
        q = np.concatenate([[theta[k]], eta[k]])
        u = np.concatenate([[thd[k]], etad[k]])
        Mq, fq = Mf(q, u)
        if servo is None:
            ud = np.concatenate([[thdd[k]], np.linalg.solve(
                Mq[1:, 1:], fq[1:] - Mq[1:, 0] * thdd[k])])
            torque[k] = (Mq @ ud - fq)[0]
        else:
            th_d, thd_d, thdd_d = hub(ts[k])
            torque[k] = Mq[0, 0] * thdd_d + kp * (th_d - theta[k]) + kd * (thd_d - thd[k])
    return HubRun(ts, np.asarray(theta, float), np.asarray(thd, float), eta, etad, tip, torque,
                  diverged)

from .._boundary import seal as _seal  # noqa: E402 -- the one boundary (issue 28): last, over the finished module
_seal(globals(), {"simulate_hub": {"nonfinite_result": True}})  # NaN after diverged_at
