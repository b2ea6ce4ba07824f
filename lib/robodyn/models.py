r"""The book's robots, as :class:`~robodyn.rigid_motion.SerialChain` values with masses and inertias.

Every factory accepts numbers or sympy symbols for its lengths and masses, so a chapter can
derive with symbols and simulate with numbers from one model. Links are uniform slender
rods unless said otherwise: a rod of mass m and length l along its x axis has
:math:`I_c = \mathrm{diag}(0,\ ml^2/12,\ ml^2/12)`.

One model is not a chain: :func:`rolling_disk` (Part V), the thin disk rolling without slipping
on a plane, handed out as its Kane's equations (:class:`~robodyn.kane.KaneEquations`); so are
the Chaplygin sleigh and :func:`four_bar_kane`. The constrained systems of Part III
(:func:`particle_pendulum`, :func:`four_bar`, :func:`rr_on_line`, :func:`knife_edge`,
:func:`vertical_rolling_disk`) are :class:`~robodyn.constraints.ConstrainedSystem` values; they
lived in ``robodyn.constraints``, where their old names still work (the vertical disk was
``constraints.rolling_disk``, a different system from the leaning :func:`rolling_disk`).
"""
from __future__ import annotations

import functools

import numpy as np
import sympy as sp

from . import _value_checks
from ._value_checks import is_symbolic
from ._value_checks import to_sympy as _S
from .constraints._systems import ConstrainedSystem, Constraints, lagrangian_equations
from .rigid_motion._kinematics import SerialChain, homogeneous, revolute_screw, spatial_inertia
from .kinds import Mass, Tolerance

MAX_JOINTS = 1000
"""The most joints :func:`planar_chain` and :func:`random_chain` build."""

__all__ = ["rod_inertia", "planar_rr", "planar_rp", "spatial_rrr", "ur5_like",
           "planar_chain", "random_chain", "rolling_disk", "chaplygin_sleigh", "four_bar_kane",
           "four_bar_dependent_speeds", "four_bar_closure", "four_bar_close",
           "particle_pendulum", "four_bar", "rr_on_line", "knife_edge", "vertical_rolling_disk"]


def _parameters(fname, lengths, masses):
    """Check a factory's lengths (real, finite, >= 0) and masses (> 0), numbers or sympy."""
    for name, v in lengths.items():
        _value_checks.nonnegative(v, f"{fname}: {name}", hint="a length in m")
    for name, v in masses.items():
        _value_checks.positive(v, f"{fname}: {name}", hint="a mass in kg")


def _translation(p):
    sym = is_symbolic(p)
    return homogeneous(sp.eye(3) if sym else np.eye(3), p)


def rod_inertia(mass: Mass, length, radius=0):
    r"""Spatial inertia of a uniform rod (a solid cylinder of ``radius``) along x, at its centre.

    :math:`I_c = \mathrm{diag}(mr^2/2,\ m(3r^2+l^2)/12,\ m(3r^2+l^2)/12)`; ``radius=0`` is the
    slender rod.

    >>> rod_inertia(12.0, 1.0).diagonal()
    array([ 0.,  1.,  1., 12., 12., 12.])
    """
    m = _value_checks.positive(mass, "rod_inertia: mass", hint="a mass in kg")
    l = _value_checks.nonnegative(length, "rod_inertia: length")
    r = _value_checks.nonnegative(radius, "rod_inertia: radius")
    if any(is_symbolic(x) for x in (mass, length, radius)):
        m, l, r = (_value_checks._exact(x) for x in (mass, length, radius))   # keep 1/12 exact
    with _value_checks.overflow_guard("rod_inertia"):
        side = m * (3 * r**2 + l**2) / 12
        out = spatial_inertia(m, [m * r**2 / 2, side, side])
    return out if is_symbolic(out) else _value_checks.finite_result(out, "rod_inertia")


def planar_rr(l1=1.0, l2=1.0, m1=1.0, m2=1.0):
    r"""The planar RR arm of handbook §6.3: two revolute joints about z, rods of lengths
    ``l1``, ``l2`` and masses ``m1``, ``m2`` along x at q = 0; the end effector at the tip.

    >>> planar_rr()
    SerialChain('planar RR', 2 joints RR, with inertias)
    """
    _parameters("planar_rr", dict(l1=l1, l2=l2), dict(m1=m1, m2=m2))
    z, o = [0, 0, 1], [0, 0, 0]
    S = [revolute_screw(z, o), revolute_screw(z, [l1, 0, 0])]
    return SerialChain.from_screws(
        _columns(S), _translation([l1 + l2, 0, 0]),
        link_homes=[_translation([l1 / 2, 0, 0]), _translation([l1 + l2 / 2, 0, 0])],
        link_inertias=[rod_inertia(m1, l1), rod_inertia(m2, l2)], name="planar RR")


def planar_rp(l1=1.0, l2=1.0, m1=1.0, m2=1.0):
    r"""The planar RP arm of handbook §6.4: a revolute joint about z carries a guide rod (length
    ``l1``, mass ``m1``) along x; a second rod (length ``l2``, mass ``m2``) slides along the guide
    by the prismatic coordinate q2. At q = 0 the sliding rod starts at the revolute axis, so its
    centre is at (l2/2 + q2, 0, 0) in the rotating frame; the end effector is its tip.

    >>> planar_rp().joint_types
    ('revolute', 'prismatic')
    """
    _parameters("planar_rp", dict(l1=l1, l2=l2), dict(m1=m1, m2=m2))
    sym = any(is_symbolic(x) for x in (l1, l2, m1, m2))
    S = [revolute_screw([0, 0, 1], [0, 0, 0]),
         sp.Matrix([0, 0, 0, 1, 0, 0]) if sym else np.array([0, 0, 0, 1.0, 0, 0])]
    return SerialChain.from_screws(
        _columns(S), _translation([l2, 0, 0]),
        link_homes=[_translation([l1 / 2, 0, 0]), _translation([l2 / 2, 0, 0])],
        link_inertias=[rod_inertia(m1, l1), rod_inertia(m2, l2)], name="planar RP")


def spatial_rrr(d1=0.4, a2=0.5, a3=0.4, m1=3.0, m2=2.0, m3=1.0):
    r"""A spatial 3-DoF anthropomorphic (elbow) arm: a waist joint about z at the base, a shoulder
    about y at height ``d1``, an elbow about y at the end of the upper arm (length ``a2``); the
    forearm (length ``a3``) carries the end effector. At q = 0 both arm links lie along x.
    Link 1 is a vertical column of height d1; links 2 and 3 are rods.

    >>> np.round(spatial_rrr().home[:3, 3], 12)
    array([0.9, 0. , 0.4])
    """
    _parameters("spatial_rrr", dict(d1=d1, a2=a2, a3=a3), dict(m1=m1, m2=m2, m3=m3))
    sym = any(is_symbolic(x) for x in (d1, a2, a3, m1, m2, m3))
    S = [revolute_screw([0, 0, 1], [0, 0, 0]),
         revolute_screw([0, 1, 0], [0, 0, d1]),
         revolute_screw([0, 1, 0], [a2, 0, d1])]
    vertical = sp.Matrix([[0, 0, 1], [0, 1, 0], [-1, 0, 0]]) if sym else \
        np.array([[0, 0, 1.0], [0, 1, 0], [-1, 0, 0]])        # rod x axis along world z
    column = homogeneous(vertical, [0, 0, d1 / 2])
    return SerialChain.from_screws(
        _columns(S), _translation([a2 + a3, 0, d1]),
        link_homes=[column, _translation([a2 / 2, 0, d1]), _translation([a2 + a3 / 2, 0, d1])],
        link_inertias=[rod_inertia(m1, d1, radius=d1 / 8), rod_inertia(m2, a2, radius=a2 / 20),
                       rod_inertia(m3, a3, radius=a3 / 20)],
        name="spatial RRR")


# UR5 geometry (m) and link masses (kg), as published by the manufacturer and used in
# Lynch & Park, Modern Robotics, Example 4.5 and its dynamics code.
_UR5 = dict(W1=0.109, W2=0.082, L1=0.425, L2=0.392, H1=0.089, H2=0.095,
            masses=(3.7, 8.393, 2.275, 1.219, 1.219, 0.1879))


def ur5_like():
    r"""A 6-DoF arm with the UR5's geometry and link masses, in product-of-exponentials form
    (home pose with the arm stretched along x). Link centres of mass are placed along the links,
    each link a cylinder of the published mass; a model for the book, not a calibrated UR5.

    >>> ur5_like().joint_types
    ('revolute', 'revolute', 'revolute', 'revolute', 'revolute', 'revolute')
    """
    W1, W2, L1, L2, H1, H2 = (_UR5[k] for k in ("W1", "W2", "L1", "L2", "H1", "H2"))
    z, y, mz = [0, 0, 1], [0, 1, 0], [0, 0, -1]
    S = [revolute_screw(z, [0, 0, 0]), revolute_screw(y, [0, 0, H1]),
         revolute_screw(y, [L1, 0, H1]), revolute_screw(y, [L1 + L2, 0, H1]),
         revolute_screw(mz, [L1 + L2, W1, 0]), revolute_screw(y, [L1 + L2, 0, H1 - H2])]
    home = np.array([[-1, 0, 0, L1 + L2], [0, 0, 1, W1 + W2], [0, 1, 0, H1 - H2], [0, 0, 0, 1.0]])
    # centre-of-mass positions (world, at q = 0) and the cylinder each link is modelled as
    up = np.array([[0, 0, 1.0], [0, 1, 0], [-1, 0, 0]])         # cylinder x axis along world z
    across = np.array([[0, 1.0, 0], [-1, 0, 0], [0, 0, 1]])     # cylinder x axis along world y
    along = np.eye(3)
    coms = [([0, 0, H1 / 2], up, H1, 0.06), ([L1 / 2, W1 / 2, H1], along, L1, 0.05),
            ([L1 + L2 / 2, W1 / 2, H1], along, L2, 0.04),
            ([L1 + L2, W1, H1 - H2 / 2], up, H2, 0.04),
            ([L1 + L2, W1 + W2 / 2, H1 - H2], across, W2, 0.04),
            ([L1 + L2, W1 + W2, H1 - H2], across, 0.02, 0.03)]
    homes = [homogeneous(R, p) for p, R, _, _ in coms]
    inertias = [rod_inertia(m, l, r) for m, (_, _, l, r) in zip(_UR5["masses"], coms)]
    return SerialChain.from_screws(np.column_stack(S), home, homes, inertias, name="UR5-like")


def planar_chain(n, length=1.0, mass: Mass = 1.0):
    r"""An n-link planar chain of identical uniform rods (revolute joints about z), the
    benchmark chain of the book's performance measurements.

    >>> planar_chain(4).n
    4
    """
    n = _value_checks.size(n, "planar_chain: n", high=MAX_JOINTS)
    l = _value_checks.positive(length, "planar_chain: length")
    _value_checks.positive(mass, "planar_chain: mass")
    S = [revolute_screw([0, 0, 1], [i * l, 0, 0]) for i in range(n)]
    return SerialChain.from_screws(
        _columns(S), _translation([n * l, 0, 0]),
        link_homes=[_translation([(i + 0.5) * l, 0, 0]) for i in range(n)],
        link_inertias=[rod_inertia(mass, l) for _ in range(n)], name=f"planar {n}-link")


def random_chain(n, rng=None, prismatic=0.3, helical=0.0):
    r"""A random spatial chain of n joints with random link frames and inertias, for tests.

    Each joint is prismatic with probability ``prismatic``, helical with probability
    ``helical``, otherwise revolute; axes, points, link poses, masses and inertias are random
    but physically valid. ``rng``: a ``numpy.random.Generator`` (advanced by the call), a seed
    (a whole number >= 0: the same chain every time) or None (a fresh random chain).

    >>> random_chain(7, np.random.default_rng(0)).n
    7
    >>> np.array_equal(random_chain(3, 5).screws, random_chain(3, 5).screws)   # a seed
    True
    """
    n = _value_checks.size(n, "random_chain: n", high=MAX_JOINTS)
    if rng is not None and not isinstance(rng, np.random.Generator):
        rng = np.random.default_rng(_value_checks.size(
            rng, "random_chain: rng", low=0, high=2**63 - 1,
            hint="a numpy.random.Generator, a seed (a whole number >= 0) or None"))
    prismatic = _value_checks.real_number(prismatic, "random_chain: prismatic", low=0, high=1,
                                    hint="a probability")
    helical = _value_checks.real_number(helical, "random_chain: helical", low=0, high=1,
                                  hint="a probability")
    if not 0 <= prismatic + helical <= 1:
        raise _value_checks.refusal(
            ValueError, f"random_chain: prismatic, helical: expected 0 <= prismatic + "
                        f"helical <= 1, got {prismatic} + {helical}")
    rng = np.random.default_rng() if rng is None else rng
    from .rigid_motion._kinematics import exp_so3, prismatic_screw
    S, homes, inertias = [], [], []
    point = np.zeros(3)
    for _ in range(n):
        point = point + rng.normal(scale=0.3, size=3)
        axis = rng.normal(size=3)
        u = rng.random()
        if u < prismatic:
            S.append(prismatic_screw(axis))
        elif u < prismatic + helical:
            S.append(revolute_screw(axis, point, pitch=rng.normal(scale=0.1)))
        else:
            S.append(revolute_screw(axis, point))
        homes.append(homogeneous(exp_so3(rng.normal(size=3)),
                                 point + rng.normal(scale=0.1, size=3)))
        principal = rng.uniform(0.6, 1.2, size=3)
        Rc = exp_so3(rng.normal(size=3))
        I = Rc @ np.diag(principal * 0.05) @ Rc.T
        inertias.append(spatial_inertia(rng.uniform(0.5, 3.0), (I + I.T) / 2))
    home = homogeneous(exp_so3(rng.normal(size=3)), point + rng.normal(scale=0.2, size=3))
    return SerialChain.from_screws(np.column_stack(S), home, homes, inertias,
                                   name=f"random {n}-joint")


def _columns(cols):
    if any(is_symbolic(c) for c in cols):
        return np.array(sp.Matrix.hstack(*[_S(c) for c in cols]).tolist(), dtype=object)
    return np.column_stack(cols)


def _rot(axis, a):
    c, s = sp.cos(a), sp.sin(a)
    i, j = [(1, 2), (2, 0), (0, 1)][axis]
    R = sp.eye(3)
    R[i, i], R[i, j], R[j, i], R[j, j] = c, -s, s, c
    return R


def rolling_disk(radius=None, mass=None, gravity=None, inertia_factors=(sp.Rational(1, 4),
                                                                    sp.Rational(1, 2))):
    r"""A thin uniform disk rolling without slipping on the horizontal plane z = 0, as Kane's
    equations with the two rolling constraints in the speeds (Part V, §6.5.2).

    Coordinates :math:`q = (x, y, \psi, \theta, \varphi)`: the contact point P on the plane,
    yaw :math:`\psi` about the vertical, lean :math:`\theta` about the heading, spin
    :math:`\varphi` about the disk's axis; the disk's axes are
    :math:`R = R_z(\psi)R_x(\theta)R_y(\varphi)` (axis of symmetry: body y), the lean frame
    :math:`L = R_z(\psi)R_x(\theta)`, the centre :math:`C = P + rL_z`. Speeds
    :math:`u = (\dot\theta, \dot\varphi, \dot\psi, \dot x, \dot y)`. Rolling means the
    disk's material point at P has zero velocity, :math:`v^C + \omega\times(P - C) = 0`; its
    vertical component vanishes identically, the horizontal ones are the nonholonomic
    constraints (kane-rolling)

    .. math:: \dot x - r\dot\varphi\cos\psi = 0, \qquad \dot y - r\dot\varphi\sin\psi = 0,

    with :math:`u_4 = \dot x`, :math:`u_5 = \dot y` the dependent speeds: the reduced equations
    are 3 x 3 in :math:`(u_1, u_2, u_3)`. Central inertia :math:`\mathrm{diag}(mr^2/4,\ mr^2/2,\
    mr^2/4)` (other wheels rolling on a sharp rim through ``inertia_factors``), gravity
    :math:`-mg` along z at C; the contact force does no work and never appears.

    Parameters
    ----------
    radius : r (m), mass : m (kg), gravity : g (m/s^2); numbers or sympy expressions;
        default (None) the positive Symbols ``r``, ``m``, ``g``.
    inertia_factors : (a, b), central inertia :math:`mr^2\,\mathrm{diag}(a, b, a)`: a about a
        diameter, b about the axis; numbers or sympy expressions, :math:`0 < b \le 2a` (a flat
        wheel has b = 2a). Default (1/4, 1/2), the uniform disk; (1/2, 1) is a thin hoop.

    Returns
    -------
    KaneEquations (name ``'rolling disk'``); ``dependent_speeds`` holds the solved constraints.

    Raises
    ------
    ValueError for a radius or mass that is not positive, a negative gravity, or inertia
    factors that are not two positive numbers with b <= 2a (no rigid body has them);
    TypeError for values that are neither numbers nor sympy expressions.

    Examples
    --------
    >>> d = rolling_disk()
    >>> d.dependent_speeds
    {u4: r*u2*cos(psi), u5: r*u2*sin(psi)}
    >>> d.M.diagonal()
    Matrix([[5*m*r**2/4, 3*m*r**2/2, m*r**2*(7 - 5*cos(2*theta))/8]])
    """
    fname = "rolling_disk"
    r = sp.Symbol("r", positive=True) if radius is None else _value_checks._exact(
        _value_checks.positive(radius, f"{fname}: radius", hint="the disk's radius in m"))
    m = sp.Symbol("m", positive=True) if mass is None else _value_checks._exact(
        _value_checks.positive(mass, f"{fname}: mass", hint="a mass in kg"))
    g = sp.Symbol("g", positive=True) if gravity is None else _value_checks._exact(
        _value_checks.nonnegative(gravity, f"{fname}: gravity", hint="m/s^2, pointing down"))
    if not isinstance(inertia_factors, (tuple, list)) or len(inertia_factors) != 2:
        raise _value_checks.refusal(
            ValueError, f"{fname}: inertia_factors: expected two numbers (a, b), got "
                        f"{_value_checks._describe(inertia_factors)}")
    a, b = (_value_checks._exact(_value_checks.positive(v, f"{fname}: inertia_factors[{k}]"))
            for k, v in enumerate(inertia_factors))
    if (b - 2 * a).is_positive:
        raise _value_checks.refusal(
            ValueError, f"{fname}: inertia_factors: expected b <= 2a (the axial moment of a rigid "
                        f"wheel is at most twice the diametral one), got a = {a}, b = {b}")
    return _rolling_disk(r, m, g, a, b)


@functools.lru_cache(maxsize=8)
def _rolling_disk(r, m, g, a, b):
    from .kane import _method as kane
    x, y, psi, theta, phi = q = list(sp.symbols("x y psi theta phi"))
    u = list(sp.symbols("u1:6"))
    L = _rot(2, psi) * _rot(0, theta)
    R = L * _rot(1, phi)
    C = sp.Matrix([x, y, 0]) + r * L[:, 2]
    rates = [u[3], u[4], u[2], u[0], u[1]]          # qd in the speeds (u = W qd, W a permutation)
    W = sp.Matrix(5, 5, lambda i, j: 1 if q[j] == [theta, phi, psi, x, y][i] else 0)
    vC = C.jacobian(q) * sp.Matrix(rates)
    # omega = omega of L (from dL/dt L^T) + spin rate about L_y; the slip velocity of the
    # disk's material point at P is v_C + omega x (P - C)
    Om = sum((L.diff(a) * b for a, b in zip(q, rates)), sp.zeros(3, 3)) * L.T
    w = sp.Matrix([Om[2, 1], Om[0, 2], Om[1, 0]]) + u[1] * L[:, 1]
    slip = (vC + w.cross(-r * L[:, 2])).applyfunc(lambda e: sp.trigsimp(sp.expand(e)))
    disk = kane.RigidBody("disk", m, C, R, m * r**2 * sp.diag(a, b, a))
    return kane.kanes_equations(q, u, [disk], [kane.Force(C, [0, 0, -m * g])], speeds=W,
                                constraints=list(slip[:2]), dependent=u[3:],
                                name="rolling disk")


# --------------------------------------------------------------------------
# Part V in depth: a genuinely nonholonomic system and a closed loop by Kane's method
# --------------------------------------------------------------------------

_MODEL_SYMBOLS = {"chaplygin_sleigh": {"x", "y", "theta", "u1", "u2", "u3"},
                  "four_bar_kane": {"th1", "th2", "th3", "u1", "u2", "u3"}}
"""The coordinate and speed names of the Kane models: a parameter may not hold them."""


def _given(value, symbol, check, name, hint):
    """``symbol`` when ``value`` is None, else ``value`` checked by ``check`` and made exact.
    A symbolic parameter may not hold time (a Symbol named ``t``), a rate (``*_dot``) or one
    of the model's coordinates and speeds: they would be taken as constants."""
    if value is None:
        return symbol
    v = check(value, name, hint=hint)
    if isinstance(v, sp.Basic):
        reserved = _MODEL_SYMBOLS.get(name.split(":")[0], set())
        bad = sorted(str(x) for x in v.free_symbols
                     if x.name == "t" or x.name.endswith("_dot") or x.name in reserved)
        if bad:
            raise _value_checks.error(name, "a constant parameter (a number or an expression in "
                                "parameter symbols)", f"{v} (holding {', '.join(bad)})",
                                "time, rates, coordinates and speeds are not parameters")
    return _value_checks._exact(v)


def chaplygin_sleigh(offset=None, mass=None, length=None, width=None):
    r"""The Chaplygin sleigh: a uniform rectangular plate (``length`` x ``width``, ``mass``)
    sliding on a horizontal plane on a knife edge at the contact point P, a distance
    ``offset`` = a behind its mass centre G along the body axis, as Kane's equations with a
    dependent speed (Part V, eq. (kane-sleigh)).

    Coordinates :math:`q = (x, y, \theta)` of P and the heading; speeds (u = W(q) qd)
    :math:`u_1 = \cos\theta\,\dot x + \sin\theta\,\dot y` (P's forward speed),
    :math:`u_2 = \dot\theta`, :math:`u_3 = -\sin\theta\,\dot x + \cos\theta\,\dot y` (P's
    lateral speed). The blade forbids sideways slip, :math:`u_3 = 0`: the dependent speed.
    With :math:`I = m(\ell^2 + b^2)/12` the reduced equations are

    .. math:: m\dot u_1 = m a u_2^2, \qquad (I + ma^2)\dot u_2 = -m a u_1u_2,

    whose energy :math:`\tfrac12mu_1^2 + \tfrac12(I + ma^2)u_2^2` is conserved while
    :math:`u_2 \to 0` and :math:`u_1 \to +\sqrt{2E/m}` for a > 0 (the sleigh aligns, moving
    with G ahead of the blade); a = 0 is the knife edge, which does not align.

    Parameters
    ----------
    offset : a (m), -length/2 <= a <= length/2 (the blade under the plate); mass : m (kg);
        length, width : of the plate (m). Numbers or sympy expressions; default (None) the
        Symbols ``a`` (real), ``m``, ``l``, ``b`` (positive).

    Returns
    -------
    KaneEquations (name ``'Chaplygin sleigh'``), independent speeds (u1, u2), dependent u3.

    Raises
    ------
    ValueError for a mass, length or width that is not positive, or a numeric offset off
    the plate (|a| > length / 2: the blade would not be under the body).

    Examples
    --------
    >>> s = chaplygin_sleigh()
    >>> s.dependent_speeds
    {u3: 0}
    >>> s.f.T
    Matrix([[a*m*u2**2, -a*m*u1*u2]])
    """
    fname = "chaplygin_sleigh"
    a = _given(offset, sp.Symbol("a", real=True), _value_checks.scalar, f"{fname}: offset",
               "m, from the blade to the mass centre")
    m = _given(mass, sp.Symbol("m", positive=True), _value_checks.positive, f"{fname}: mass",
               "a mass in kg")
    l = _given(length, sp.Symbol("l", positive=True), _value_checks.positive, f"{fname}: length",
               "the plate's length in m")
    b = _given(width, sp.Symbol("b", positive=True), _value_checks.positive, f"{fname}: width",
               "the plate's width in m")
    if (abs(a) - l / 2).is_positive:
        raise _value_checks.refusal(
            ValueError, f"{fname}: offset: expected |offset| <= length / 2 = {l / 2} (the "
                        f"blade under the plate), got {offset!r}")
    return _chaplygin_sleigh(a, m, l, b)


@functools.lru_cache(maxsize=8)
def _chaplygin_sleigh(a, m, l, b):
    from .kane import _method as kane
    x, y, th = q = list(sp.symbols("x y theta"))
    u = list(sp.symbols("u1:4"))
    c, s = sp.cos(th), sp.sin(th)
    W = sp.Matrix([[c, s, 0], [0, 0, 1], [-s, c, 0]])
    G = sp.Matrix([x + a * c, y + a * s, 0])
    plate = kane.RigidBody("plate", m, G, _rot(2, th),
                           sp.diag(m * b**2 / 12, m * l**2 / 12, m * (l**2 + b**2) / 12))
    return kane.kanes_equations(q, u, [plate], speeds=W, constraints=[u[2]], dependent=[u[2]],
                                name="Chaplygin sleigh")


def four_bar_kane(a=None, b=None, c=None, d=None, masses=None, gravity=None):
    r"""The four-bar linkage of Part III (:func:`four_bar`: crank a from
    O = (0, 0), coupler b, rocker c to D = (d, 0), uniform rods, gravity g along -y) by
    Kane's method with dependent coordinates and speeds (Part V, eq. (kane-fourbar)).

    Coordinates :math:`q = (\theta_1, \theta_2, \theta_3)`, the rods' absolute angles, tied
    by the loop closure :math:`\sum_il_i(\cos\theta_i, \sin\theta_i) = (d, 0)`; speeds
    :math:`u_i = \dot\theta_i`. The closure's time derivative gives two velocity constraints,

    .. math:: -\sum_il_i\sin\theta_i\,u_i = 0, \qquad \sum_il_i\cos\theta_i\,u_i = 0,

    solved for the dependent speeds :math:`u_2, u_3` in terms of the crank's :math:`u_1`
    (possible while :math:`bc\sin(\theta_3 - \theta_2) \ne 0`: not at the toggle positions,
    where coupler and rocker align; :func:`four_bar_dependent_speeds` refuses those).
    The Kane equation is one scalar equation :math:`M(q)\dot u_1 = f(q, u_1)`; the
    coordinates are all integrated and drift off the closure, which
    :func:`four_bar_close` corrects.

    Parameters
    ----------
    a, b, c, d : lengths (m); masses : (m1, m2, m3) (kg); gravity : g (m/s^2); numbers or
        sympy expressions; default (None) the positive Symbols of Part III's model.

    Returns
    -------
    KaneEquations (name ``'four-bar (Kane)'``), independent speed u1, dependent (u2, u3).

    Examples
    --------
    >>> fb = four_bar_kane(1, 2, 2, 2, (1, 1, 1), 0)
    >>> fb.u.T, list(fb.dependent_speeds)
    (Matrix([[u1]]), [u2, u3])
    """
    fname = "four_bar_kane"
    sym = dict(zip("abcd", sp.symbols("a b c d", positive=True)))
    ls = [_given(v, sym[k], _value_checks.positive, f"{fname}: {k}", "a length in m")
          for k, v in zip("abcd", (a, b, c, d))]
    _closable(ls, f"{fname}: a, b, c, d")
    if masses is None:
        ms = sp.symbols("m1:4", positive=True)
    else:
        if isinstance(masses, np.ndarray):
            masses = list(_value_checks.real_array(masses, f"{fname}: masses", shape=(3,),
                                             hint="three masses (m1, m2, m3) in kg"))
        if not isinstance(masses, (tuple, list)) or len(masses) != 3:
            raise _value_checks.refusal(
                ValueError, f"{fname}: masses: expected three masses (m1, m2, m3), got "
                            f"{_value_checks._describe(masses)}")
        ms = tuple(_given(_value_checks.positive(v, f"{fname}: masses[{k}]"), None, _value_checks.positive,
                          f"{fname}: masses[{k}]", "a mass in kg")
                   for k, v in enumerate(masses))
    g = _given(gravity, sp.Symbol("g", positive=True), _value_checks.nonnegative, f"{fname}: gravity",
               "m/s^2, pointing down")
    with _value_checks.overflow_guard(fname):
        return _four_bar_kane(*ls, tuple(ms), g)


@functools.lru_cache(maxsize=8)
def _four_bar_kane(a, b, c, d, ms, g):
    from .kane import _method as kane
    th = list(sp.symbols("th1:4", real=True))
    u = list(sp.symbols("u1:4"))
    bodies, loads = [], []
    x0 = y0 = sp.Integer(0)
    for k, (l, m) in enumerate(zip((a, b, c), ms)):
        ck, sk = sp.cos(th[k]), sp.sin(th[k])
        G = sp.Matrix([x0 + l / 2 * ck, y0 + l / 2 * sk, 0])
        bodies.append(kane.RigidBody(f"rod{k + 1}", m, G, _rot(2, th[k]),
                                     sp.diag(0, m * l**2 / 12, m * l**2 / 12)))
        loads.append(kane.Force(G, [0, -m * g, 0]))
        x0, y0 = x0 + l * ck, y0 + l * sk
    loop = sp.Matrix([x0 - d, y0])
    cons = list(loop.jacobian(th) * sp.Matrix(u))
    return kane.kanes_equations(th, u, bodies, loads, constraints=cons, dependent=u[1:],
                                name="four-bar (Kane)")


def _four_bar_numbers(lengths, fname):
    """Four positive finite lengths (a, b, c, d) in m: a tuple, list or array of numbers."""
    if isinstance(lengths, np.ndarray):
        lengths = list(_value_checks.real_array(lengths, f"{fname}: lengths", shape=(4,),
                                          hint="four lengths (a, b, c, d) in m"))
    if not isinstance(lengths, (tuple, list)) or len(lengths) != 4:
        raise _value_checks.refusal(ValueError, f"{fname}: lengths: expected four lengths (a, b, c, d), got "
                         f"{_value_checks._describe(lengths)}")
    ls = [_value_checks.real_number(v, f"{fname}: lengths[{k}]", low=0, strict_low=True, hint="m")
          for k, v in enumerate(lengths)]
    _closable(ls, f"{fname}: lengths")
    return ls


def _closable(ls, name):
    """Refuse four lengths (a, b, c, d) whose loop cannot close: one longer than the sum of the
    other three (numbers, or sympy expressions whose difference is provably positive)."""
    total = sum(ls)
    for k, l in enumerate(ls):
        gap = l - (total - l)
        gap = gap if isinstance(gap, sp.Basic) else sp.Float(gap)
        if gap.is_positive or (gap.is_number and float(gap) > 1e-12 * float(total)):
            raise _value_checks.error(name, "four lengths that can close a loop (each at most the sum "
                                "of the other three)", f"{'abcd'[k]} = {l} > {total - l}",
                                "no configuration satisfies the loop closure")


def _toggle(q, s, tol, fname):
    if abs(s) < tol:
        th = ", ".join(f"th{k + 1} = {v:.6g}" for k, v in enumerate(q))
        raise _value_checks.refusal(
            ValueError, f"{fname}: q: the loop is singular at ({th}): coupler and rocker are "
                        f"aligned (sin(th3 - th2) = {s:.3g}), a toggle position; the dependent "
                        f"speeds u2, u3 cannot be solved for from the crank's u1 -- choose "
                        f"another independent speed or stay away from the toggle")


def four_bar_dependent_speeds(q, u1, lengths, tol: Tolerance = 1e-9):
    r"""The dependent speeds :math:`(u_2, u_3)` of :func:`four_bar_kane` at a configuration
    q (3,) rad for the crank rate ``u1`` (rad/s), ``lengths`` (a, b, c, d) in m:

    .. math:: \begin{pmatrix}-b\sin\theta_2 & -c\sin\theta_3\\ b\cos\theta_2 &
              c\cos\theta_3\end{pmatrix}\begin{pmatrix}u_2\\u_3\end{pmatrix} =
              -\begin{pmatrix}-a\sin\theta_1\\ a\cos\theta_1\end{pmatrix}u_1,

    determinant :math:`bc\sin(\theta_3 - \theta_2)`.

    Raises ValueError naming the configuration when :math:`|\sin(\theta_3 - \theta_2)| <`
    ``tol`` (a toggle position).

    >>> np.round(four_bar_dependent_speeds([np.pi / 2, 0.0, -np.pi / 2], 1.0, (1, 2, 1, 2)), 6) + 0
    array([0., 1.])
    """
    fname = "four_bar_dependent_speeds"
    q = _value_checks.real_array(q, f"{fname}: q", shape=(3,), hint="(th1, th2, th3) in rad")
    u1 = _value_checks.real_number(u1, f"{fname}: u1", hint="rad/s")
    a, b, c, _ = _four_bar_numbers(lengths, fname)
    tol = _value_checks.tolerance(tol, f"{fname}: tol")
    _toggle(q, np.sin(q[2] - q[1]), tol, fname)
    Ad = np.array([[-b * np.sin(q[1]), -c * np.sin(q[2])], [b * np.cos(q[1]), c * np.cos(q[2])]])
    with _value_checks.overflow_guard(fname):
        out = np.linalg.solve(Ad, -np.array([-a * np.sin(q[0]), a * np.cos(q[0])]) * u1)
    return _value_checks.finite_result(out, fname)


def four_bar_closure(q, lengths):
    r"""The loop-closure residual :math:`\sum_il_i(\cos\theta_i, \sin\theta_i) - (d, 0)`
    (2,) m at q (3,) rad, ``lengths`` (a, b, c, d).

    >>> np.round(four_bar_closure([np.pi / 2, 0.0, -np.pi / 2], (1, 2, 1, 2)), 12)
    array([0., 0.])
    """
    fname = "four_bar_closure"
    q = _value_checks.real_array(q, f"{fname}: q", shape=(3,), hint="(th1, th2, th3) in rad")
    a, b, c, d = _four_bar_numbers(lengths, fname)
    return _value_checks.finite_result(
        np.array([a * np.cos(q[0]) + b * np.cos(q[1]) + c * np.cos(q[2]) - d,
                  a * np.sin(q[0]) + b * np.sin(q[1]) + c * np.sin(q[2])]), fname)


def four_bar_close(q, lengths, tol: Tolerance = 1e-12, max_iter=50):
    r"""Correct the drift: Newton's method on the closure for the dependent coordinates
    :math:`(\theta_2, \theta_3)` with the crank's :math:`\theta_1` held, from q (3,) rad.
    Returns the corrected q. Raises ValueError naming the configuration at a toggle
    position, or when the closure has no solution nearby (no convergence in ``max_iter``).

    >>> q = four_bar_close([np.pi / 2, 0.01, -np.pi / 2 + 0.02], (1, 2, 1, 2))
    >>> np.round(q, 9).tolist()
    [1.570796327, 0.0, -1.570796327]
    """
    fname = "four_bar_close"
    q = _value_checks.real_array(q, f"{fname}: q", shape=(3,), hint="(th1, th2, th3) in rad").copy()
    a, b, c, d = _four_bar_numbers(lengths, fname)
    tol = _value_checks.tolerance(tol, f"{fname}: tol")
    max_iter = _value_checks.size(max_iter, f"{fname}: max_iter", low=1, high=1000)
    for _ in range(max_iter):
        with _value_checks.overflow_guard(fname):
            r = four_bar_closure(q, (a, b, c, d))
        if np.max(np.abs(r)) < tol:
            return q
        _toggle(q, np.sin(q[2] - q[1]), 1e-9, fname)
        J = np.array([[-b * np.sin(q[1]), -c * np.sin(q[2])], [b * np.cos(q[1]), c * np.cos(q[2])]])
        q[1:] -= np.linalg.solve(J, r)
    raise _value_checks.refusal(
        ValueError, f"{fname}: q: the closure has no solution near the given configuration "
                    f"(residual {np.max(np.abs(r)):.3g} m after {max_iter} Newton steps); "
                    f"expected a q close to the loop")


# --------------------------------------------------------------------------
# constrained systems of Part III (multipliers, embedding, projection, Udwadia-Kalaba)
# --------------------------------------------------------------------------

_G = sp.Symbol("g", nonnegative=True)
"""Gravity's magnitude in the book's constrained models: non-negative, so that a page may switch
it off (``values={"g": 0}``: free drift) and a negative value is refused."""


def particle_pendulum():
    r"""A particle of mass m in the vertical plane (x, y), y up, on a circle of radius l about
    the origin: :math:`M = mI`, :math:`F = (0, -mg)` (review eq. (2)), :math:`\varphi = x^2 + y^2
    - l^2`. Parameters ``m``, ``l``, ``g``."""
    x, y, xd, yd = sp.symbols("x y x_dot y_dot", real=True)
    m, l = sp.symbols("m l", positive=True)
    eq = lagrangian_equations(m / 2 * (xd**2 + yd**2), m * _G * y, [x, y], [xd, yd],
                              name="particle")
    return ConstrainedSystem(eq, Constraints([x, y], holonomic=[x**2 + y**2 - l**2]),
                             name="particle pendulum")


def _rod(m, l, xc, yc, th, xs, xds):
    """Kinetic and potential energy of a uniform rod, centre (xc, yc), angle th."""
    v2 = sum((sp.Matrix([e]).jacobian(xs) * xds)[0] ** 2 for e in (xc, yc))
    w = (sp.Matrix([th]).jacobian(xs) * xds)[0]
    return v2 * m / 2 + m * l**2 / 24 * w**2, m * _G * yc


def four_bar():
    r"""A four-bar linkage: crank (length a, from the ground pivot O at the origin), coupler (b),
    rocker (c, ending at the ground pivot D = (d, 0)), uniform rods of masses m1, m2, m3, in the
    vertical plane (gravity g along -y). Coordinates: the absolute angles th1, th2, th3 of the
    three rods; two loop-closure constraints :math:`\sum_i l_i(\cos\theta_i, \sin\theta_i) =
    (d, 0)`. Mobility 3 - 2 = 1 (Grübler: 3(4 - 1) - 2 * 4)."""
    th = sp.symbols("th1:4", real=True)
    thd = sp.symbols("th1:4_dot", real=True)
    a, b, c, d = sp.symbols("a b c d", positive=True)
    ms = sp.symbols("m1:4", positive=True)
    ls = (a, b, c)
    T = V = 0
    x0 = y0 = sp.Integer(0)
    for k in range(3):
        ck, sk = sp.cos(th[k]), sp.sin(th[k])
        Tk, Vk = _rod(ms[k], ls[k], x0 + ls[k] / 2 * ck, y0 + ls[k] / 2 * sk, th[k],
                        sp.Matrix(th), sp.Matrix(thd))
        T, V = T + Tk, V + Vk
        x0, y0 = x0 + ls[k] * ck, y0 + ls[k] * sk
    eq = lagrangian_equations(T, V, th, thd, name="three rods")
    return ConstrainedSystem(eq, Constraints(th, holonomic=[x0 - d, y0]), name="four-bar")


def rr_on_line(chain=None):
    r"""The planar RR arm (``models.planar_rr`` with symbols l1, l2, m1, m2, or ``chain``) whose
    end effector must stay on the horizontal line y = h: :math:`\varphi = l_1\sin q_1 +
    l_2\sin(q_1 + q_2) - h`. Gravity g along -y."""
    from .lagrange import _euler_lagrange as lagrange
    l1, l2, m1, m2 = sp.symbols("l1 l2 m1 m2", positive=True)
    h = sp.Symbol("h", real=True)
    chain = planar_rr(l1, l2, m1, m2) if chain is None else chain
    eq = lagrange.equations_of_motion(chain, gravity=(0, -_G, 0))
    q1, q2 = eq.q
    tip_y = l1 * sp.sin(q1) + l2 * sp.sin(q1 + q2)
    return ConstrainedSystem(eq, Constraints(list(eq.q), holonomic=[tip_y - h]),
                             name="RR arm on a line")


def knife_edge():
    r"""A knife edge (skate, Chaplygin sleigh with the contact at the centre of mass) on a
    horizontal plane: q = (x, y, th), mass m, inertia J about the vertical, no sideways
    slip :math:`-\sin\theta\,\dot x + \cos\theta\,\dot y = 0` (nonholonomic)."""
    x, y, th = sp.symbols("x y theta", real=True)
    xd, yd, thd = sp.symbols("x_dot y_dot theta_dot", real=True)
    m, J = sp.symbols("m J", positive=True)
    eq = lagrangian_equations(m / 2 * (xd**2 + yd**2) + J / 2 * thd**2, 0, [x, y, th],
                              [xd, yd, thd], name="skate")
    return ConstrainedSystem(eq, Constraints([x, y, th], pfaffian=[[-sp.sin(th), sp.cos(th), 0]]),
                             name="knife edge")


def vertical_rolling_disk():
    r"""A vertical disk of radius r rolling without slipping on a plane: q = (x, y, th, ph)
    (contact point, heading, rolling angle), mass m, inertias Iz (about the vertical) and Ir
    (about the axle); :math:`\dot x = r\cos\theta\,\dot\phi`, :math:`\dot y =
    r\sin\theta\,\dot\phi` (two nonholonomic constraints)."""
    x, y, th, ph = sp.symbols("x y theta phi", real=True)
    xd, yd, thd, phd = sp.symbols("x_dot y_dot theta_dot phi_dot", real=True)
    m, Iz, Ir, r = sp.symbols("m I_z I_r r", positive=True)
    T = m / 2 * (xd**2 + yd**2) + Iz / 2 * thd**2 + Ir / 2 * phd**2
    eq = lagrangian_equations(T, 0, [x, y, th, ph], [xd, yd, thd, phd], name="disk")
    A = [[1, 0, 0, -r * sp.cos(th)], [0, 1, 0, -r * sp.sin(th)]]
    return ConstrainedSystem(eq, Constraints([x, y, th, ph], pfaffian=A), name="rolling disk")

from ._boundary import seal as _seal  # noqa: E402 -- the one boundary (issue 28): last, over the finished module
_seal(globals())
