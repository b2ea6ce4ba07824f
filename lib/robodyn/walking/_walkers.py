r"""The impact models of Part IV: a bouncing ball, a pendulum and the RR arm against a wall, the
rimless wheel and the compass-gait walker on a slope.

Each model's continuous dynamics is a :class:`~robodyn.equations.MassMatrixForm` (so it can be
compared with any other method's equations), and each model offers a
:class:`~robodyn.impacts.HybridSystem` for :func:`~robodyn.impacts.simulate_hybrid`.

Conventions: planar, x horizontal, y up, g = 9.81 m/s^2 downward; a slope of angle
:math:`\gamma` descends towards +x, its outward normal is :math:`(\sin\gamma, \cos\gamma)`.
Walker angles are measured from the upward vertical to the direction *from a foot to the hip*,
positive clockwise (towards +x): a leg leaning downhill has a positive angle.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import sympy as sp

from ..kinds import Mass, Restitution
from .. import _value_checks, models
from .. import _meaning_checks
from ..lagrange import _euler_lagrange as lagrange
from ..equations import mass_matrix_form
from ..impacts._hybrid import HybridSystem, ImpactResult, Surface, fixed_point, impact_map, return_map

__all__ = ["bouncing_ball", "ball_zeno_time", "pendulum_against_wall", "rr_arm_against_wall",
           "rr_points", "RimlessWheel", "CompassGait"]

G = 9.81


MAX_PARAMETER = 1e6
"""Masses (kg), lengths (m), gravity (m/s^2) and speeds of the models are at most this."""


def _positive(x, name, fname):
    """A positive physical parameter (mass, length, gravity), at most :data:`MAX_PARAMETER`:
    a float (numpy, Fraction and sympy numbers too; symbols refused)."""
    return _value_checks.real_number(x, f"{fname}: {name}", low=0, strict_low=True,
                               high=MAX_PARAMETER)


def _angle(x, name, fname, lo, hi):
    v = _value_checks.real_number(x, f"{fname}: {name}")
    if not lo <= v < hi:
        raise _value_checks.refusal(
            ValueError, f"{fname}: {name}: expected an angle in [{lo:.4g}, {hi:.4g}) rad, got "
                        f"{x!r}")
    return v


def _coefficient(e, name, fname):
    """A coefficient of restitution in [0, 1] as a float (sympy numbers accepted)."""
    what = f"{fname}: {name}"
    return float(_meaning_checks.restitution(_value_checks.real_number(e, what), what))


def _state(x, n, what, bound=MAX_PARAMETER):
    """A state vector of length n with entries within ``bound`` (angles in rad, rates in
    rad/s): beyond it float64 trigonometry and energies lose every digit."""
    v = _value_checks.vector(x, n, what)
    if _value_checks.is_symbolic(v):
        raise _value_checks.error(what, "numbers", "sympy expressions",
                            "a numeric function: substitute numbers first", exc=TypeError)
    if np.abs(v).max() > bound:
        raise _value_checks.error(what, f"entries within {bound:g}", f"{np.abs(v).max():.3g}")
    return v


def _finite_impact(out, fname):
    """Refuse an impact result (q+, qd+, ImpactResult) holding NaN or infinity."""
    q, qd, r = out
    _value_checks.finite_result((q, qd, r.qd_plus, r.impulse, r.energy_lost, r.normal_before,
                           r.normal_after), fname)
    return out


# --------------------------------------------------------------------------
# bouncing ball
# --------------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def _ball_form():
    x, y, vx, vy, m, g = sp.symbols("x y vx vy m g")
    return mass_matrix_form([x, y], [vx, vy], sp.diag(m, m), [0, -m * g], name="ball")


def bouncing_ball(restitution: Restitution = 0.8, slope=0.0, mass: Mass = 1.0, g=G):
    r"""A point mass over the ground line through the origin at angle ``slope`` (rad).

    State q = (x, y) in metres; :math:`\phi(q) = x\sin\gamma + y\cos\gamma` (height above the
    ground along its normal); the impact is :func:`~robodyn.impacts.impact_map` with
    restitution e. Its form (``.form``) is :math:`m\ddot x = 0`, :math:`m\ddot y = -mg`.

    >>> ball = bouncing_ball(0.9)
    >>> ball.surfaces[0].phi([0.0, 2.0])
    2.0
    """
    fname = "bouncing_ball"
    restitution = _coefficient(restitution, "restitution", fname)
    slope = _angle(slope, "slope", fname, -np.pi / 2 + 1e-9, np.pi / 2)
    mass, g = _positive(mass, "mass", fname), _positive(g, "g", fname)
    n = np.array([np.sin(slope), np.cos(slope)])
    ground = Surface("ground", functools.partial(_slope_gap, n),
                     functools.partial(_slope_normal, n), restitution)
    form = _ball_form().numeric({"m": mass, "g": g})
    energy = functools.partial(_ball_energy, mass, g)     # module functions: the system pickles
    return HybridSystem(form, (ground,), energy, "bouncing ball")


def _slope_gap(n, q):
    """phi = n . q, the height above the slope of normal n"""
    return float(n[0] * q[0] + n[1] * q[1])


def _slope_normal(n, q):
    return n


def _ball_energy(mass, g, q, qd):
    return 0.5 * mass * float(qd[0] ** 2 + qd[1] ** 2) + mass * g * float(q[1])


def ball_zeno_time(height, restitution: Restitution, speed=0.0, slope=0.0, g=G):
    r"""Closed-form time at which a ball's bounces accumulate.

    With normal height :math:`h` and normal speed :math:`v_0` (positive away from the ground) and
    normal gravity :math:`g_n = g\cos\gamma`, the first impact is at :math:`t_1 = (v_0 + V)/g_n`
    with speed :math:`V = \sqrt{v_0^2 + 2g_nh}`; the k-th flight after it lasts :math:`2e^kV/g_n`,
    so :math:`t_\infty = t_1 + \frac{2V}{g_n}\frac{e}{1-e}`.

    >>> round(ball_zeno_time(1.0, 0.5), 6)
    1.354571
    """
    fname = "ball_zeno_time"
    h = _value_checks.real_number(height, f"{fname}: height", high=MAX_PARAMETER)
    if h < 0:
        raise _value_checks.refusal(
            ValueError, f"{fname}: height: expected a height >= 0 (m), got {height!r}")
    e = _value_checks.real_number(restitution, f"{fname}: restitution", low=0, high=1)
    if not e < 1:
        raise _value_checks.refusal(
            ValueError, f"{fname}: restitution: expected e in [0, 1) (e = 1 bounces forever), "
                        f"got {restitution!r}")
    v0 = _value_checks.real_number(speed, f"{fname}: speed", low=-MAX_PARAMETER, high=MAX_PARAMETER)
    slope = _angle(slope, "slope", fname, -np.pi / 2 + 1e-9, np.pi / 2)
    gn = _positive(g, "g", fname) * np.cos(slope)
    V = np.sqrt(v0 ** 2 + 2 * gn * h)
    return _value_checks.finite_result(float((v0 + V) / gn + 2 * V / gn * e / (1 - e)), fname)


# --------------------------------------------------------------------------
# pendulum and RR arm against a wall
# --------------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def _pendulum_form():
    th, w, m, l, g = sp.symbols("theta omega m l g")
    return mass_matrix_form([th], [w], [[m * l ** 2]], [-m * g * l * sp.sin(th)],
                            name="pendulum")


def pendulum_against_wall(wall_angle=0.3, restitution: Restitution = 0.7, length=1.0,
                          mass: Mass = 1.0, g=G):
    r"""A point-mass pendulum (angle :math:`\theta` from the downward vertical) and a wall at
    :math:`\theta = \theta_w` (``wall_angle``): :math:`\phi = \theta_w - \theta`; at the wall
    :math:`\dot\theta^+ = -e\dot\theta^-`.

    >>> p = pendulum_against_wall(0.2)
    >>> p.surfaces[0].phi([0.0])
    0.2
    """
    fname = "pendulum_against_wall"
    restitution = _coefficient(restitution, "restitution", fname)
    wall = _angle(wall_angle, "wall_angle", fname, -np.pi, np.pi)
    length, mass = _positive(length, "length", fname), _positive(mass, "mass", fname)
    g = _positive(g, "g", fname)
    s = Surface("wall", lambda q: float(wall - q[0]), lambda q: np.array([-1.0]), restitution)
    form = _pendulum_form().numeric({"m": mass, "l": length, "g": g})

    def energy(q, qd):
        return 0.5 * mass * length ** 2 * float(qd[0]) ** 2 - mass * g * length * np.cos(q[0])

    return HybridSystem(form, (s,), energy, "pendulum against a wall")


def rr_points(q, l1=1.0, l2=1.0):
    """Shoulder, elbow and tip of the planar RR arm (:func:`robodyn.models.planar_rr`), (3, 2).

    >>> rr_points([0.0, np.pi / 2]).round(12).tolist()
    [[0.0, 0.0], [1.0, 0.0], [1.0, 1.0]]
    """
    q1, q2 = _state(q, 2, "rr_points: q")
    l1, l2 = _positive(l1, "l1", "rr_points"), _positive(l2, "l2", "rr_points")
    e = np.array([l1 * np.cos(q1), l1 * np.sin(q1)])
    return _value_checks.finite_result(
        np.array([[0.0, 0.0], e, e + [l2 * np.cos(q1 + q2), l2 * np.sin(q1 + q2)]]), "rr_points")


@functools.lru_cache(maxsize=None)
def _rr_numeric(l1, l2, m1, m2, g):
    eom = lagrange.equations_of_motion(models.planar_rr(l1, l2, m1, m2), (0.0, -g, 0.0))
    return eom, eom.numeric()


def rr_arm_against_wall(wall_x=1.6, restitution: Restitution = 0.5, l1=1.0, l2=1.0, m1=1.0,
                        m2=1.0, g=G):
    r"""The planar RR arm (:func:`robodyn.models.planar_rr`, vertical plane) and a wall
    :math:`x = x_w`. Two surfaces: the tip, :math:`\phi_t = x_w - l_1\cos q_1 - l_2\cos(q_1+q_2)`,
    and the elbow, :math:`\phi_e = x_w - l_1\cos q_1`; both hit at once give one impact with
    the two rows stacked. The continuous dynamics are
    :func:`robodyn.lagrange.equations_of_motion` of the arm.

    >>> arm = rr_arm_against_wall(1.5)
    >>> [s.name for s in arm.surfaces]
    ['tip', 'elbow']
    """
    fname = "rr_arm_against_wall"
    restitution = _coefficient(restitution, "restitution", fname)
    wall_x = _value_checks.real_number(wall_x, f"{fname}: wall_x", hint="the wall's x, m")
    l1, l2 = _positive(l1, "l1", fname), _positive(l2, "l2", fname)
    m1, m2 = _positive(m1, "m1", fname), _positive(m2, "m2", fname)
    g = _value_checks.real_number(g, f"{fname}: g", low=0, high=MAX_PARAMETER,
                            hint="gravity's magnitude, m/s^2 (0 for none)")
    if not 0.0 < wall_x < l1 + l2:
        raise _value_checks.error(f"{fname}: wall_x", f"a wall within reach, 0 < wall_x < l1 + l2 = "
                            f"{l1 + l2:g} m", repr(wall_x), "the shoulder stands at x = 0 on the "
                            "free side; a wall beyond the reach is never hit")
    _, num = _rr_numeric(l1, l2, m1, m2, g)

    def tip_phi(q):
        return wall_x - l1 * np.cos(q[0]) - l2 * np.cos(q[0] + q[1])

    def tip_jac(q):
        s12 = l2 * np.sin(q[0] + q[1])
        return np.array([l1 * np.sin(q[0]) + s12, s12])

    tip = Surface("tip", tip_phi, tip_jac, restitution)
    elbow = Surface("elbow", lambda q: wall_x - l1 * np.cos(q[0]),
                    lambda q: np.array([l1 * np.sin(q[0]), 0.0]), restitution)

    def energy(q, qd):
        return (0.5 * float(qd @ num.M(q) @ qd)
                + g * (m1 * l1 / 2 * np.sin(q[0])
                       + m2 * (l1 * np.sin(q[0]) + l2 / 2 * np.sin(q[0] + q[1]))))

    return HybridSystem(num, (tip, elbow), energy, "RR arm against a wall")


# --------------------------------------------------------------------------
# rimless wheel
# --------------------------------------------------------------------------

@dataclass(frozen=True)
class RimlessWheel:
    r"""A rimless wheel: a point mass m at the hub, ``spokes`` massless spokes of length l,
    half the angle between spokes :math:`\alpha = \pi/\text{spokes}`, on a slope :math:`\gamma`.

    The stance spoke's angle :math:`\theta` (from the vertical, positive downhill) obeys
    :math:`ml^2\ddot\theta = mgl\sin\theta`. The next spoke lands at :math:`\theta = \gamma +
    \alpha`; the plastic impact of its foot keeps the hub velocity component perpendicular to
    the new spoke, :math:`\dot\theta^+ = \cos(2\alpha)\,\dot\theta^-`, and the reset is
    :math:`\theta \to \theta - 2\alpha` (rolling back: :math:`\theta = \gamma - \alpha`,
    :math:`\theta \to \theta + 2\alpha`).

    >>> w = RimlessWheel(spokes=8, slope=0.08)
    >>> round(w.closed_form_fixed_point(), 6)
    1.095463
    """
    spokes: int = 8
    length: float = 1.0
    mass: Mass = 1.0
    slope: float = 0.08
    g: float = G

    def __post_init__(self):
        fname = "RimlessWheel"
        spokes = _value_checks.size(self.spokes, f"{fname}: spokes", low=3, high=None)
        if spokes < 5 or spokes > 1000:
            raise _value_checks.error(f"{fname}: spokes", "5 to 1000 spokes", repr(spokes),
                                "with 3 or 4 spokes the angle between spokes is >= 90 deg: "
                                "cos(2 alpha) <= 0, the plastic impact stops the wheel or sends "
                                "it backwards" if spokes < 5 else "too many to draw")
        object.__setattr__(self, "spokes", spokes)
        for name in ("length", "mass", "g"):
            object.__setattr__(self, name, _positive(getattr(self, name), name, fname))
        object.__setattr__(self, "slope", _angle(self.slope, "slope", fname, 0.0, np.pi / 2))
        if self.slope + self.alpha >= np.pi / 2:
            raise _value_checks.error(f"{fname}: slope", f"a slope below pi/2 - alpha = "
                                f"{np.pi / 2 - self.alpha:.4g} rad", repr(self.slope),
                                "steeper, the next spoke would land above the hub")

    @property
    def alpha(self):
        return np.pi / self.spokes

    @property
    def form(self):
        """The continuous dynamics, a MassMatrixForm (parameters m, l, g)."""
        return _inverted_pendulum_form()

    @functools.cached_property
    def numeric(self):
        return _inverted(self.mass, self.length, self.g)

    def impact(self, t, q, qd, forward=True):
        """Plastic impact of the next spoke's foot, by :func:`~robodyn.impacts.impact_map` on the
        hub's (x, y) with the new spoke's direction as J, then the reset of the angle."""
        fname = "RimlessWheel.impact"
        _value_checks.real_number(t, f"{fname}: t", hint="the time of the impact, s")
        th, = _state(q, 1, f"{fname}: q")
        w, = _state(qd, 1, f"{fname}: qd")
        forward = _value_checks.flag(forward, f"{fname}: forward")
        a2 = 2 * self.alpha if forward else -2 * self.alpha
        new = th - a2
        v = self.length * w * np.array([np.cos(th), -np.sin(th)])       # hub velocity
        u = np.array([np.sin(new), np.cos(new)])                         # new foot -> hub
        r = impact_map(self.mass * np.eye(2), u, v, 0.0)
        w_plus = float(r.qd_plus @ np.array([np.cos(new), -np.sin(new)])) / self.length
        return _finite_impact((np.array([new]), np.array([w_plus]),
                               ImpactResult(np.array([w_plus]), r.impulse, r.energy_lost,
                                            r.normal_before, r.normal_after, 0.0)), fname)

    def hybrid_system(self):
        a, gam = self.alpha, self.slope
        front = Surface("front spoke", lambda q: float(gam + a - q[0]),
                        lambda q: np.array([-1.0]), 0.0,
                        impact=lambda t, q, qd: self.impact(t, q, qd, True))
        back = Surface("back spoke", lambda q: float(q[0] - gam + a),
                       lambda q: np.array([1.0]), 0.0,
                       impact=lambda t, q, qd: self.impact(t, q, qd, False))
        m, l, g = self.mass, self.length, self.g

        def energy(q, qd):
            return 0.5 * m * l * l * float(qd[0]) ** 2 + m * g * l * np.cos(q[0])

        return HybridSystem(self.numeric, (front, back), energy, "rimless wheel")

    def closed_form_map(self, omega):
        r"""Post-impact speed to the next one: :math:`\omega_{k+1} = \cos 2\alpha
        \sqrt{\omega_k^2 + 4(g/l)\sin\alpha\sin\gamma}` (valid when the hub passes the top;
        ValueError when the hub would leave the ground before the next impact)."""
        name = "RimlessWheel.closed_form_map: omega"
        scalar = np.ndim(omega) == 0 and not isinstance(omega, (str, bytes))
        if scalar:                                         # one speed: a number
            omega = np.asarray(_value_checks.real_number(omega, name))
        else:                                              # an array of speeds
            omega = _value_checks.real_array(omega, name)
        if omega.size and omega.min() < 0:
            raise _value_checks.error(name, "post-impact speeds >= 0 (rad/s, rolling downhill)",
                                f"{omega.min():.4g}")
        if omega.size:
            self._keeps_contact(float(omega.max()), "closed_form_map: omega")
        omega = float(omega) if scalar else omega
        return np.cos(2 * self.alpha) * np.sqrt(
            omega ** 2 + 4 * self.g / self.length * np.sin(self.alpha) * np.sin(self.slope))

    def closed_form_fixed_point(self):
        r""":math:`\omega^* = \cot(2\alpha)\sqrt{4(g/l)\sin\alpha\sin\gamma}` (rad/s); it is a
        rolling gait when :math:`\tfrac12\omega^{*2} > (g/l)(1 - \cos(\gamma - \alpha))`.
        ValueError when at that speed the hub would leave the ground (steep slopes)."""
        w = self._fixed_point_speed()
        if self._rolls(w):
            self._keeps_contact(w, "closed_form_fixed_point: slope")
        return w

    def _keeps_contact(self, w, what):
        r"""The spoke pushes (normal force >= 0) all the way from gamma - alpha to the next
        impact, starting at speed w: :math:`3g\cos(\gamma+\alpha) - 2g\cos(\gamma-\alpha)
        - l w^2 \ge 0` (the normal force is smallest just before the impact)."""
        g, l, a, gam = self.g, self.length, self.alpha, self.slope
        margin = 3 * g * np.cos(gam + a) - 2 * g * np.cos(gam - a) - l * w * w
        if margin < 0:
            raise _value_checks.error(f"RimlessWheel.{what}", "a gait on which the spokes keep "
                                "contact", f"a speed {w:.4g} rad/s at which the hub would leave "
                                f"the ground before the next impact (slope {gam:.4g} rad, "
                                f"{self.spokes} spokes)", "the rigid-contact model fails there: "
                                "a gentler slope or more spokes")

    def _fixed_point_speed(self):
        return float(np.sqrt(4 * self.g / self.length * np.sin(self.alpha) * np.sin(self.slope))
                     / np.tan(2 * self.alpha))

    def rolls(self):
        """True when the fixed point's speed carries the hub over the top."""
        return self._rolls(self.closed_form_fixed_point())

    def _rolls(self, w):
        return bool(0.5 * w * w > self.g / self.length * (1 - np.cos(self.slope - self.alpha)))


@functools.lru_cache(maxsize=None)
def _inverted_pendulum_form():
    th, w, m, l, g = sp.symbols("theta omega m l g")
    return mass_matrix_form([th], [w], [[m * l ** 2]], [m * g * l * sp.sin(th)],
                            name="rimless wheel")


@functools.lru_cache(maxsize=None)
def _inverted(m, l, g):
    return _inverted_pendulum_form().numeric({"m": m, "l": l, "g": g})


# --------------------------------------------------------------------------
# compass-gait walker
# --------------------------------------------------------------------------

def _trig(e):
    """Products of sin/cos of the two leg angles as sin/cos of their sum and difference
    (exact product-to-sum rules, no search)."""
    ts, tw = sp.symbols("theta_s theta_w")
    sm, df = sp.symbols("_sum _dif")
    rules = {sp.sin(ts) * sp.sin(tw): (sp.cos(df) - sp.cos(sm)) / 2,
             sp.cos(ts) * sp.cos(tw): (sp.cos(df) + sp.cos(sm)) / 2,
             sp.sin(ts) * sp.cos(tw): (sp.sin(sm) + sp.sin(df)) / 2,
             sp.cos(ts) * sp.sin(tw): (sp.sin(sm) - sp.sin(df)) / 2}
    e = sp.expand(sp.expand(e).subs(rules))
    e = sp.expand(e.subs({sp.sin(ts) ** 2: 1 - sp.cos(ts) ** 2,
                          sp.sin(tw) ** 2: 1 - sp.cos(tw) ** 2}))
    e = e.subs({sm: ts + tw, df: ts - tw})
    return sp.collect(e, [sp.sin(ts - tw), sp.cos(ts - tw), sp.sin(ts), sp.sin(tw)], sp.factor)


@functools.lru_cache(maxsize=None)
def _compass_equations():
    """Symbolic compass gait: the reduced form (stance foot fixed) and the extended mass
    matrix and swing-foot Jacobian (stance foot free) for the impact."""
    ts, tw, us, uw, x, y, vx, vy = sp.symbols("theta_s theta_w u_s u_w x y v_x v_y")
    m, mh, a, b, g = sp.symbols("m m_h a b g", positive=True)
    l = a + b
    ds, dw = sp.Matrix([sp.sin(ts), sp.cos(ts)]), sp.Matrix([sp.sin(tw), sp.cos(tw)])
    foot = sp.Matrix([x, y])
    hip = foot + l * ds
    p_stance, p_swing, swing_foot = foot + a * ds, hip - b * dw, hip - l * dw
    qe, ue = [x, y, ts, tw], [vx, vy, us, uw]

    def vel(p):
        return p.jacobian(qe) * sp.Matrix(ue)

    T = sum((mm * vel(p).dot(vel(p)) / 2 for mm, p in
             ((m, p_stance), (mh, hip), (m, p_swing))), sp.S(0))
    V = g * (m * p_stance[1] + mh * hip[1] + m * p_swing[1])
    Me = sp.Matrix(4, 4, lambda i, j: sp.diff(T, ue[i], ue[j]))
    red = {x: 0, y: 0, vx: 0, vy: 0}
    L = (T - V).subs(red)
    M, rest = lagrange.euler_lagrange(L, [ts, tw], [us, uw], split=True)
    form = mass_matrix_form([ts, tw], [us, uw], M.applyfunc(_trig), (-rest).applyfunc(_trig),
                            name="compass gait")
    Js = swing_foot.jacobian(qe)
    points = {"stance foot": foot, "stance mass": p_stance, "hip": hip, "swing mass": p_swing,
              "swing foot": swing_foot}
    energy = (T + V).subs(red)
    return form, Me, Js, points, energy, (ts, tw, us, uw, x, y), (m, mh, a, b, g)


@dataclass(frozen=True)
class CompassGait:
    r"""The compass-gait walker of Goswami, Thuilot and Espiau (1996): two straight legs of
    length :math:`l = a + b` with point masses m at distance a from the foot, a hip mass
    :math:`m_h`, on a slope :math:`\gamma` (rad), point feet, no torques.

    State q = (:math:`\theta_s`, :math:`\theta_w`): stance and swing leg angles (from the vertical
    to the foot-to-hip direction, positive downhill); qd their rates. During a step the stance
    foot is a hinge; :attr:`form` is the Lagrangian MassMatrixForm (parameters m, m_h, a, b, g).
    Heel strike: :math:`\theta_s + \theta_w = 2\gamma` with the swing foot ahead; the guard
    used is :math:`\phi = l\sin((\theta_s+\theta_w)/2 - \gamma)`, the factor of the swing foot's
    height :math:`h = -2l\sin(\tfrac{\theta_s+\theta_w}2-\gamma)\sin\tfrac{\theta_s-\theta_w}2`
    that vanishes at heel strike (the other factor vanishes when the legs pass each other, where
    the straight swing leg scuffs the ground; that is ignored, as in the source). The impact is
    plastic on the swing foot (:func:`~robodyn.impacts.impact_map` with two rows on the
    four-coordinate model with a free stance foot), then the legs exchange roles.

    >>> cg = CompassGait()
    >>> cg.leg_length
    1.0
    """
    m: float = 5.0
    m_h: float = 10.0
    a: float = 0.5
    b: float = 0.5
    slope: float = float(np.deg2rad(3.0))
    g: float = G

    def __post_init__(self):
        fname = "CompassGait"
        for name in ("m", "m_h", "a", "b", "g"):
            object.__setattr__(self, name, _positive(getattr(self, name), name, fname))
        object.__setattr__(self, "slope", _angle(self.slope, "slope", fname, 0.0, np.pi / 4))

    @property
    def leg_length(self):
        return self.a + self.b

    @property
    def values(self):
        return {"m": self.m, "m_h": self.m_h, "a": self.a, "b": self.b, "g": self.g}

    @property
    def form(self):
        """The symbolic continuous dynamics (a MassMatrixForm)."""
        return _compass_equations()[0]

    @functools.cached_property
    def numeric(self):
        return self.form.numeric(self.values)

    @functools.cached_property
    def _impact_functions(self):
        _, Me, Js, pts, energy, (ts, tw, us, uw, x, y), syms = _compass_equations()
        sub = dict(zip(syms, (self.m, self.m_h, self.a, self.b, self.g)))
        fM = sp.lambdify([ts, tw], Me.subs(sub).subs({x: 0, y: 0}), "numpy")
        fJ = sp.lambdify([ts, tw], Js.subs(sub).subs({x: 0, y: 0}), "numpy")
        fP = {k: sp.lambdify([ts, tw, x, y], v.subs(sub), "numpy") for k, v in pts.items()}
        fE = sp.lambdify([ts, tw, us, uw], energy.subs(sub), "numpy")
        return fM, fJ, fP, fE

    def energy(self, q, qd):
        """Kinetic plus potential energy (J), potential measured from the stance foot."""
        q = _state(q, 2, "CompassGait.energy: q")
        qd = _state(qd, 2, "CompassGait.energy: qd")
        return _value_checks.finite_result(float(self._impact_functions[3](q[0], q[1], qd[0], qd[1])),
                                     "CompassGait.energy")

    def points(self, q, foot=(0.0, 0.0)):
        """Positions (2,) of 'stance foot', 'stance mass', 'hip', 'swing mass', 'swing foot'."""
        fP = self._impact_functions[2]
        q = _state(q, 2, "CompassGait.points: q")
        foot = _state(foot, 2, "CompassGait.points: foot")
        return {k: np.array(f(q[0], q[1], foot[0], foot[1]), dtype=float).reshape(2)
                for k, f in fP.items()}

    def heel_strike(self, q, qd):
        r"""The impact and leg exchange: ``(q_plus, qd_plus, ImpactResult)``.

        The four-coordinate model (stance foot position free) before the impact has the stance
        foot at rest; :func:`~robodyn.impacts.impact_map` with e = 0 and J the swing foot's
        2 x 4 Jacobian stops the swing foot (it becomes the new stance foot) and leaves the old
        stance foot free; then q_plus = (theta_w, theta_s) with the new rates. The swing foot's
        normal velocity is not checked (``normal_rows=()``): the guard has found the impact. On
        the limit cycle the straight swing foot is below the slope only while it scuffs in
        mid-swing (ignored, as in the source) and comes down onto the slope from above at heel
        strike, where the plastic law stops it.
        Raises ValueError when the old stance foot would be pulled into the ground."""
        fname = "CompassGait.heel_strike"
        fM, fJ, _, _ = self._impact_functions
        q = _state(q, 2, f"{fname}: q")
        qd = _state(qd, 2, f"{fname}: qd")
        qde = np.array([0.0, 0.0, qd[0], qd[1]])
        Me = np.array(fM(q[0], q[1]), dtype=float)
        Je = np.array(fJ(q[0], q[1]), dtype=float)
        r = impact_map(Me, Je, qde, 0.0, normal_rows=())
        v = r.qd_plus
        lift = v[0] * np.sin(self.slope) + v[1] * np.cos(self.slope)
        if lift < -1e-9:
            raise _value_checks.error(f"{fname}: q, qd", "a state whose heel strike lifts the trailing "
                                "foot off the slope", f"a trailing foot that would move into "
                                f"the slope after the impact (normal speed {lift:.3g} m/s)",
                                "this state has no heel strike with lift-off")
        return _finite_impact((np.array([q[1], q[0]]), np.array([v[3], v[2]]),
                               ImpactResult(np.array([v[3], v[2]]), r.impulse, r.energy_lost,
                                            r.normal_before, r.normal_after, 0.0)), fname)

    def hybrid_system(self):
        l, gam = self.leg_length, self.slope

        def phi(q):
            return l * max(np.sin(gam - 0.5 * (q[0] + q[1])), np.sin(0.5 * (q[1] - q[0])))

        def jac(q):
            if np.sin(gam - 0.5 * (q[0] + q[1])) >= np.sin(0.5 * (q[1] - q[0])):
                c = -0.5 * l * np.cos(gam - 0.5 * (q[0] + q[1]))
                return np.array([c, c])
            c = 0.5 * l * np.cos(0.5 * (q[1] - q[0]))
            return np.array([-c, c])

        heel = Surface("heel strike", phi, jac, 0.0,
                       impact=lambda t, q, qd: self.heel_strike(q, qd))
        fall = Surface("fall", lambda q: float(np.cos(q[0] - gam) - 0.2),
                       lambda q: np.array([-np.sin(q[0] - gam), 0.0]), terminal=True)
        return HybridSystem(self.numeric, (heel, fall), self.energy, "compass gait")

    def section_state(self, z):
        """The full post-impact state (q, qd) of a point z = (theta_s, thetad_s, thetad_w) of the
        section :math:`\\theta_s + \\theta_w = 2\\gamma`."""
        z = _state(z, 3, "CompassGait.section_state: z")
        return np.array([z[0], 2 * self.slope - z[0], z[1], z[2]])

    def step_map(self, z, **options):
        """The step-to-step map on the section: z = (theta_s, thetad_s, thetad_w) just after a
        heel strike to the same just after the next one (RuntimeError on a fall)."""
        x0 = self._section(z, "CompassGait.step_map: z")
        return self._step(x0, "CompassGait.step_map: z", options)

    def _section(self, z, what):
        z = _state(z, 3, what, bound=1e3)
        return np.array([z[0], 2 * self.slope - z[0], z[1], z[2]])

    def _step(self, x0, what, options):
        if not hasattr(self, "_system"):
            object.__setattr__(self, "_system", self.hybrid_system())
        try:
            x = return_map(self._system, x0, surface="heel strike", **options).x
        except RuntimeError as exc:                   # a fall, or no heel strike
            raise _value_checks.error(what, "a state from which the walker takes a step",
                                str(np.round(x0[[0, 2, 3]], 7).tolist()), str(exc)[:200]) \
                from exc
        return np.array([x[0], x[2], x[3]])

    def fixed_point(self, z0=(-0.22, 1.09, 0.38), **options):
        """The period-one gait by :func:`~robodyn.impacts.fixed_point` on :meth:`step_map`."""
        what = "CompassGait.fixed_point: z0"
        z0 = _state(z0, 3, what, bound=1e3)
        try:
            return fixed_point(lambda z: self._step(self._section(z, what), what, options), z0)
        except RuntimeError as exc:                   # Newton did not converge from z0
            raise _value_checks.error(what, "a start from which Newton's method finds the gait",
                                str(np.round(z0, 7).tolist()), str(exc)[:200]) from exc


from .._boundary import seal as _seal  # noqa: E402 -- the one boundary (issue 28): last, over the finished module
_seal(globals())
