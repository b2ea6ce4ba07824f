r"""The models of Part IV's chapter on many contacts, friction and rest: a rod landing on the
ground, a spinning ball on rough ground, a block sliding on a floor, with their closed forms.

Conventions: planar, x horizontal, y up, ground y = 0, g = 9.81 m/s^2 downward; angles
counter-clockwise. Each model is a :class:`~robodyn.impacts.HybridSystem` whose surfaces carry a
restitution, a Coulomb coefficient and a tangent row :math:`J_t` (the sliding velocity of the
contact point is :math:`J_t\dot q`), for :func:`~robodyn.impacts.simulate_hybrid` and
:func:`~robodyn.impacts.moreau_jean`.
"""
from __future__ import annotations

import functools

import numpy as np
import sympy as sp

from ..kinds import FrictionCoefficient, Mass, Restitution
from .. import _value_checks
from .. import _meaning_checks
from ._contact import LimitReached
from ..equations import mass_matrix_form
from ._hybrid import HybridSystem, Surface

__all__ = ["rod", "ball", "block", "ball_impact_closed_form", "block_stopping",
           "rod_flat_impact", "cradle_simultaneous", "cradle_sequential", "cradle_hertz",
           "hertz_damping", "MAX_BALLS"]

MAX_BALLS = 200
"""The largest Newton's cradle the cradle functions accept."""

G = 9.81


def _num(x, name, fname, lo=0.0, hi=np.inf, strict=True):
    v = _value_checks.real_number(x, f"{fname}: {name}")
    ok = (lo < v if strict else lo <= v) and v <= hi
    if not ok:
        rng = f"({lo:g}, {hi:g}]" if strict else f"[{lo:g}, {hi:g}]"
        raise _value_checks.refusal(ValueError, f"{fname}: {name}: expected a number in {rng}, got {x!r}")
    return float(v)


@functools.lru_cache(maxsize=None)
def _body_form():
    x, y, th, vx, vy, w, m, J, g = sp.symbols("x y theta vx vy omega m J g")
    return mass_matrix_form([x, y, th], [vx, vy, w], sp.diag(m, m, J), [0, -m * g, 0],
                            name="planar body")


def _energy(m, J, g):
    return functools.partial(_body_energy, m, J, g)


# The models' functions are module functions bound to their numbers (functools.partial), not
# closures: a model's surfaces and energy pickle (everything public pickles).

def _body_energy(m, J, g, q, qd):
    return 0.5 * (m * (qd[0] ** 2 + qd[1] ** 2) + J * qd[2] ** 2) + m * g * float(q[1])


def _point_energy(m, g, q, qd):
    return 0.5 * m * float(qd[0] ** 2 + qd[1] ** 2) + m * g * float(q[1])


def _height(r, q):
    """phi = y - r"""
    return float(q[1] - r)


def _constant(row, q):
    return np.array(row)


def _end_gap(a, q):
    """phi = y + a sin(theta) (a rod's end at signed half-length a)"""
    return float(q[1] + a * np.sin(q[2]))


def _end_normal(a, q):
    return np.array([0.0, 1.0, a * np.cos(q[2])])


def _end_tangent(a, q):
    return np.array([1.0, 0.0, -a * np.sin(q[2])])


def rod(restitution: Restitution = 0.5, friction: FrictionCoefficient = 0.0, length=1.0,
        mass: Mass = 1.0, g=G):
    r"""A uniform rod, q = (x, y, θ) of its centre, over the ground y = 0; two contacts, its
    ends, :math:`\phi_\pm = y \pm \tfrac L2\sin\theta`, with tangent rows :math:`J_{t\pm} = (1,
    0, \mp\tfrac L2\sin\theta)`; inertia :math:`mL^2/12`.

    >>> r = rod()
    >>> [s.name for s in r.surfaces], r.surfaces[0].phi([0.0, 0.5, 0.1]) > 0
    (['left end', 'right end'], True)
    """
    fname = "rod"
    L, m = _num(length, "length", fname), _num(mass, "mass", fname)
    g = _num(g, "g", fname)
    J = m * L * L / 12
    h = L / 2

    def end(sign, name):
        a = sign * h
        return Surface(name, functools.partial(_end_gap, a), functools.partial(_end_normal, a),
                       restitution, friction=friction,
                       tangent=functools.partial(_end_tangent, a))

    form = _body_form().numeric({"m": m, "J": J, "g": g})
    return HybridSystem(form, (end(-1.0, "left end"), end(1.0, "right end")), _energy(m, J, g),
                        "rod")


def ball(restitution: Restitution = 0.5, friction: FrictionCoefficient = 0.3, radius=0.1,
         mass: Mass = 1.0, g=G, inertia_ratio=0.4):
    r"""A ball of radius r, q = (x, y, θ), over the ground: :math:`\phi = y - r`; the contact
    point slides at :math:`\dot x + r\dot\theta` (:math:`J_t = (1, 0, r)`); inertia
    :math:`\kappa m r^2` with ``inertia_ratio`` :math:`\kappa` (2/5 a solid sphere).

    >>> b = ball()
    >>> b.surfaces[0].tangent([0.0, 0.1, 0.0]).tolist()
    [1.0, 0.0, 0.1]
    """
    fname = "ball"
    r, m = _num(radius, "radius", fname), _num(mass, "mass", fname)
    g = _num(g, "g", fname)
    k = _num(inertia_ratio, "inertia_ratio", fname, 0.0, 1.0)
    J = k * m * r * r
    ground = Surface("ground", functools.partial(_height, r),
                     functools.partial(_constant, (0.0, 1.0, 0.0)), restitution,
                     friction=friction, tangent=functools.partial(_constant, (1.0, 0.0, r)))
    form = _body_form().numeric({"m": m, "J": J, "g": g})
    return HybridSystem(form, (ground,), _energy(m, J, g), "ball")


@functools.lru_cache(maxsize=None)
def _block_form():
    x, y, vx, vy, m, g = sp.symbols("x y vx vy m g")
    return mass_matrix_form([x, y], [vx, vy], sp.diag(m, m), [0, -m * g], name="block")


def block(friction: FrictionCoefficient = 0.5, restitution: Restitution = 0.0, mass: Mass = 1.0,
          g=G):
    r"""A block (a point mass) on the floor y = 0 with Coulomb friction :math:`\mu`.

    >>> block(0.3).surfaces[0].friction
    0.3
    """
    fname = "block"
    mu = _num(friction, "friction", fname, 0.0, np.inf, strict=False)
    e = _num(restitution, "restitution", fname, 0.0, 1.0, strict=False)
    m, g = _num(mass, "mass", fname), _num(g, "g", fname)
    floor = Surface("floor", functools.partial(_height, 0.0),
                    functools.partial(_constant, (0.0, 1.0)), e, friction=mu,
                    tangent=functools.partial(_constant, (1.0, 0.0)))
    energy = functools.partial(_point_energy, m, g)

    return HybridSystem(_block_form().numeric({"m": m, "g": g}), (floor,), energy, "block")


def ball_impact_closed_form(vx, vy, omega, restitution: Restitution,
                            friction: FrictionCoefficient, radius=0.1,
                            inertia_ratio=0.4):
    r"""Closed form of a ball's impact on rough ground, eq. (iv-ball-friction).

    The normal and tangential problems decouple (:math:`J_nM^{-1}J_t^T = 0`): the normal
    impulse is :math:`\Lambda_n = m(1+e)|v_y|`; the contact point's velocity :math:`u = v_x +
    r\omega` is stopped (sticking) when :math:`|u| \le \mu(1+\kappa^{-1})(1+e)|v_y|`,
    :math:`v_x^+ = v_x - u/(1+1/\kappa)`, :math:`r\omega^+ = r\omega - u/(1+\kappa)`; else it
    slides, :math:`v_x^+ = v_x - \mathrm{sgn}(u)\mu(1+e)|v_y|`, :math:`r\omega^+ = r\omega -
    \mathrm{sgn}(u)\mu(1+e)|v_y|/\kappa`. Returns ``(vx+, vy+, omega+, "stick" | "slide")``.

    >>> ball_impact_closed_form(1.0, -2.0, 30.0, 0.5, 1.0)[3]
    'stick'
    """
    fname = "ball_impact_closed_form"
    e = _num(restitution, "restitution", fname, 0.0, 1.0, strict=False)
    mu = _num(friction, "friction", fname, 0.0, np.inf, strict=False)
    r = _num(radius, "radius", fname)
    k = _num(inertia_ratio, "inertia_ratio", fname, 0.0, 1.0)
    vx, vy, w = (_value_checks.real_number(v, f"{fname}: {nm}")
                 for v, nm in ((vx, "vx"), (vy, "vy"), (omega, "omega")))
    if vy >= 0:
        raise _value_checks.refusal(
            ValueError, f"{fname}: vy: expected a ball moving down (vy < 0), got {vy!r}")
    u = vx + r * w
    P = (1 + e) * abs(vy)                               # normal impulse per unit mass
    if abs(u) <= mu * P * (1 + 1 / k):
        return vx - u / (1 + 1 / k), -e * vy, w - u / (1 + k) / r, "stick"
    s = np.sign(u)
    return vx - s * mu * P, -e * vy, w - s * mu * P / k / r, "slide"


def block_stopping(speed, friction: FrictionCoefficient, g=G):
    r"""Distance and time for a block sliding at ``speed`` to stop under Coulomb friction:
    :math:`d = v^2/(2\mu g)`, :math:`t = v/(\mu g)`, eq. (iv-block-stop).

    >>> [round(x, 6) for x in block_stopping(2.0, 0.5)]
    [0.407747, 0.407747]
    """
    fname = "block_stopping"
    v = abs(_value_checks.real_number(speed, f"{fname}: speed"))
    mu = _num(friction, "friction", fname)
    g = _num(g, "g", fname)
    return _value_checks.finite_result((v * v / (2 * mu * g), v / (mu * g)), fname)


def rod_flat_impact(vx, vy, restitution: Restitution, friction: FrictionCoefficient = 0.0):
    r"""A flat rod landing on both ends at once with no spin: by symmetry the two impulses are
    equal and the rod does not turn, :math:`v_y^+ = -ev_y`, :math:`\omega^+ = 0`; the tangential
    velocity drops by :math:`\mu(1+e)|v_y|` or stops (sticking). Returns (vx+, vy+, ω+).

    >>> rod_flat_impact(0.0, -2.0, 0.5)
    (0.0, 1.0, 0.0)
    """
    fname = "rod_flat_impact"
    e = _num(restitution, "restitution", fname, 0.0, 1.0, strict=False)
    mu = _num(friction, "friction", fname, 0.0, np.inf, strict=False)
    vx, vy = _value_checks.real_number(vx, f"{fname}: vx"), _value_checks.real_number(vy, f"{fname}: vy")
    if vy > 0:
        raise _value_checks.error(f"{fname}: vy", "a landing rod (vy <= 0: moving towards the "
                            "floor)", f"vy = {vy:g} > 0", "a rising rod does not hit the floor")
    dv = mu * (1 + e) * abs(vy)
    vx1 = 0.0 if abs(vx) <= dv else vx - np.sign(vx) * dv
    return vx1, -e * vy, 0.0


# --------------------------------------------------------------------------
# Newton's cradle: N equal balls on a line, touching, the first ones moving in
# --------------------------------------------------------------------------

def _cradle_args(balls, restitution, speed, moving, fname):
    N = _value_checks.size(balls, f"{fname}: balls", low=2, high=MAX_BALLS)
    e = _num(restitution, "restitution", fname, 0.0, 1.0, strict=False)
    v = _num(speed, "speed", fname, 0.0, 1e6)
    k = _value_checks.size(moving, f"{fname}: moving", low=1, high=N - 1)
    v0 = np.zeros(N)
    v0[:k] = v
    return N, e, v0


def cradle_simultaneous(balls=5, restitution: Restitution = 1.0, speed=1.0, moving=1,
                        method="auto"):
    r"""Newton's cradle by the simultaneous Newton impact law: the first ``moving`` balls
    (unit masses) hit the others, at rest and touching, at ``speed``; every contact takes
    its impulse at once, eq. (iv-contact-lcp) with :math:`J_n` rows :math:`x_{i+1}' - x_i'`.
    Returns ``(v_after (N,), ContactResult)``.

    Closed form for one ball (eq. iv-cradle-simultaneous): every contact closes, the first
    ball rebounds at :math:`v_1^+ = ((1 + e)/N - e)v` and all the others move together at
    :math:`(1 + e)v/N` -- not the cradle's one ball out.

    >>> v, _ = cradle_simultaneous(5, 1.0)
    >>> np.round(v, 12).tolist()
    [-0.6, 0.4, 0.4, 0.4, 0.4]
    """
    fname = "cradle_simultaneous"
    N, e, v0 = _cradle_args(balls, restitution, speed, moving, fname)
    from ._contact import METHODS, contact_impulse
    method = _value_checks.choice(method, f"{fname}: method", METHODS)
    Jn = np.diff(np.eye(N), axis=0)                    # gap rates x_{i+1}' - x_i'
    res = contact_impulse(np.eye(N), Jn, v0, e, method=method)
    return res.qd_plus, res


def cradle_sequential(balls=5, restitution: Restitution = 1.0, speed=1.0, moving=1,
                      max_impacts=None):
    r"""Newton's cradle by sequential two-ball impacts: while two neighbours approach, the
    first approaching pair from the left collides alone (Newton's law for two equal masses,
    :math:`v_a^+ = \tfrac12((1-e)v_a + (1+e)v_b)`, :math:`v_b^+ = \tfrac12((1+e)v_a +
    (1-e)v_b)`), eq. (iv-cradle-pair). Returns ``(v_after (N,), impacts)``.

    With e = 1 the velocities are exchanged pair after pair: one ball out (k balls in, k out).
    With a small e the impacts go on and on (an inelastic collapse: the velocities approach a
    common one geometrically); they are followed until no approach speed exceeds 1e-10 v.

    Raises :class:`~robodyn.impacts.LimitReached` (a ValueError) after ``max_impacts``
    impacts (default 10**5; at most 10**7).

    >>> v, k = cradle_sequential(5, 1.0)
    >>> v.tolist(), k
    ([0.0, 0.0, 0.0, 0.0, 1.0], 4)
    """
    fname = "cradle_sequential"
    N, e, v = _cradle_args(balls, restitution, speed, moving, fname)
    cap = 10**5 if max_impacts is None else _value_checks.size(
        max_impacts, f"{fname}: max_impacts", high=10**7)
    eps = 1e-10 * max(1.0, float(v.max()))
    for count in range(cap + 1):
        rel = v[:-1] - v[1:]                           # approach speed of each pair
        i = int(np.argmax(rel > eps)) if np.any(rel > eps) else -1
        if i < 0:
            return v, count
        a, b = v[i], v[i + 1]
        v[i], v[i + 1] = 0.5 * ((1 - e) * a + (1 + e) * b), 0.5 * ((1 + e) * a + (1 - e) * b)
    raise LimitReached(f"{fname}: max_impacts, restitution: expected the impacts to end "
                       f"within max_impacts = {cap}, got more (e = {e:g}: an inelastic "
                       f"collapse; a larger cap)")


def cradle_hertz(balls=5, speed=1.0, moving=1, *, stiffness=1.0, damping=0.0, t_final=None,
                 rtol=1e-10, n_out=400):
    r"""Newton's cradle as a compliant chain: unit masses, touching at t = 0, the first
    ``moving`` balls at ``speed``; neighbours push each other by Hertz's law for spheres,
    :math:`F = k\delta^{3/2} + c\,\delta^{3/2}\dot\delta` while they overlap by
    :math:`\delta = x_i - x_{i+1} > 0` (Hunt and Crossley's damping c), and not at all when
    apart, eq. (iv-cradle-hertz); integrated through the impact by DOP853 until ``t_final``
    (default 6 N + 20 time units; a contact lasts about 3 (m^2 / (k^2 v))^{1/5}).

    Returns ``(t (K,), x (K, N), v (K, N))``: positions relative to the start.

    >>> t, x, v = cradle_hertz(3)
    >>> bool(v[-1, -1] > 0.9 and abs(v[-1].sum() - 1.0) < 1e-8)
    True
    """
    from scipy.integrate import solve_ivp
    fname = "cradle_hertz"
    N, _, v0 = _cradle_args(balls, 1.0, speed, moving, fname)
    k = _num(stiffness, "stiffness", fname, 0.0, 1e12)
    c = _num(damping, "damping", fname, 0.0, 1e12, strict=False)
    T = 6.0 * N + 20.0 if t_final is None else _num(t_final, "t_final", fname, 0.0, 1e6)
    rtol = _value_checks.tolerance(rtol, f"{fname}: rtol")
    K = _value_checks.size(n_out, f"{fname}: n_out", low=2, high=10**6)

    def rhs(t, y):
        x, v = y[:N], y[N:]
        d = np.maximum(x[:-1] - x[1:], 0.0)            # overlaps
        F = k * d ** 1.5 + c * d ** 1.5 * (v[:-1] - v[1:])
        F = np.maximum(F, 0.0)                         # contacts push, never pull
        a = np.zeros(N)
        a[:-1] -= F
        a[1:] += F
        return np.concatenate([v, a])

    te = np.linspace(0.0, T, K)
    sol = solve_ivp(rhs, (0.0, T), np.concatenate([np.zeros(N), v0]), method="DOP853",
                    rtol=rtol, atol=rtol * 1e-2 * max(1.0, float(v0.max())), t_eval=te)
    if not sol.success or not np.all(np.isfinite(sol.y)):
        raise RuntimeError(f"{fname}: the integration failed: {sol.message}")
    return sol.t, sol.y[:N].T, sol.y[N:].T


def _hertz_restitution(chi):
    """The restitution of the scaled two-ball Hertz collision with damping ``chi = c v / k``."""
    from scipy.integrate import solve_ivp

    def rhs(t, y):
        s, u = y
        return [u, -max(max(s, 0.0) ** 1.5 * (1.0 + chi * u), 0.0)]

    def apart(t, y):
        return y[0]
    apart.terminal, apart.direction = True, -1
    sol = solve_ivp(rhs, (0.0, 1e3), [0.0, 1.0], method="DOP853", rtol=1e-12, atol=1e-14,
                    events=apart, first_step=1e-6)
    return -float(sol.y_events[0][0][1])


def hertz_damping(restitution: Restitution, speed=1.0, stiffness=1.0):
    r"""Hunt and Crossley's damping :math:`c` of eq. (iv-cradle-hertz) that gives the coefficient
    of restitution ``restitution`` in a two-ball collision at the approach speed ``speed``.

    With :math:`F = k\delta^{3/2}(1 + (c/k)\dot\delta)`, scaling the overlap by
    :math:`(m^* v^2/k)^{2/5}` and time by that over :math:`v` leaves
    :math:`s'' = -s^{3/2}(1 + \chi s')`, :math:`s(0) = 0`, :math:`s'(0) = 1`, with the one
    parameter :math:`\chi = c v / k`: the restitution :math:`e = -s'` at separation depends on
    :math:`\chi` alone (not on the masses, :math:`k` or :math:`v`). It is found here by
    bisection on the integrated collision. Hunt and Crossley's
    :math:`\chi = \tfrac32(1 - e)` is its limit for :math:`e \to 1` only: it gives
    :math:`e = 0.712` where 0.6 is asked. Returns :math:`c = \chi k / v`.

    >>> round(hertz_damping(0.6), 4), round(hertz_damping(0.99), 5)
    (0.9749, 0.01515)
    """
    from scipy.optimize import brentq
    fname = "hertz_damping"
    e = float(_meaning_checks.restitution(_value_checks.real_number(restitution, f"{fname}: restitution"),
                                  f"{fname}: restitution"))
    if e == 0.0:
        raise _value_checks.refusal(ValueError, f"{fname}: restitution: expected a coefficient of restitution in (0, 1], "
                         "got 0 (a plastic collision needs infinite Hunt-Crossley damping)")
    v = _num(speed, "speed", fname, 0.0, 1e6)
    k = _num(stiffness, "stiffness", fname, 0.0, 1e12)
    if e == 1.0:
        return 0.0
    chi = brentq(lambda x: _hertz_restitution(x) - e, 0.0, 2.0 / e + 1.0, xtol=1e-12)
    return chi * k / v

from .._boundary import seal as _seal  # noqa: E402 -- the one boundary (issue 28): last, over the finished module
_seal(globals())
