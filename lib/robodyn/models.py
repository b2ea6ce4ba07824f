r"""The book's robots, as :class:`~robodyn.kinematics.SerialChain` values with masses and inertias.

Every factory accepts numbers or sympy symbols for its lengths and masses, so a chapter can
derive with symbols and simulate with numbers from one model. Links are uniform slender
rods unless said otherwise: a rod of mass m and length l along its x axis has
:math:`I_c = \mathrm{diag}(0,\ ml^2/12,\ ml^2/12)`.

One model is not a chain: :func:`rolling_disk` (Part V), the thin disk rolling without slipping
on a plane, handed out as its Kane's equations (:class:`~robodyn.kane.KaneEquations`).
"""
from __future__ import annotations

import functools

import numpy as np
import sympy as sp

from . import _checks
from ._checks import is_symbolic
from ._checks import to_sympy as _S
from .kinematics import SerialChain, homogeneous, revolute_screw, spatial_inertia

MAX_JOINTS = 1000
"""The most joints :func:`planar_chain` and :func:`random_chain` build."""

__all__ = ["rod_inertia", "planar_rr", "planar_rp", "spatial_rrr", "ur5_like",
           "planar_chain", "random_chain", "rolling_disk"]


def _parameters(fname, lengths, masses):
    """Check a factory's lengths (real, finite, >= 0) and masses (> 0), numbers or sympy."""
    for name, v in lengths.items():
        _checks.nonnegative(v, f"{fname}: {name}", hint="a length in m")
    for name, v in masses.items():
        _checks.positive(v, f"{fname}: {name}", hint="a mass in kg")


def _translation(p):
    sym = is_symbolic(p)
    return homogeneous(sp.eye(3) if sym else np.eye(3), p)


def rod_inertia(mass, length, radius=0):
    r"""Spatial inertia of a uniform rod (a solid cylinder of ``radius``) along x, at its centre.

    :math:`I_c = \mathrm{diag}(mr^2/2,\ m(3r^2+l^2)/12,\ m(3r^2+l^2)/12)`; ``radius=0`` is the
    slender rod.

    >>> rod_inertia(12.0, 1.0).diagonal()
    array([ 0.,  1.,  1., 12., 12., 12.])
    """
    m = _checks.positive(mass, "rod_inertia: mass", hint="a mass in kg")
    l = _checks.nonnegative(length, "rod_inertia: length")
    r = _checks.nonnegative(radius, "rod_inertia: radius")
    if any(is_symbolic(x) for x in (mass, length, radius)):
        m, l, r = (_checks._exact(x) for x in (mass, length, radius))   # keep 1/12 exact
    side = m * (3 * r**2 + l**2) / 12
    return spatial_inertia(m, [m * r**2 / 2, side, side])


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


def planar_chain(n, length=1.0, mass=1.0):
    r"""An n-link planar chain of identical uniform rods (revolute joints about z), the
    benchmark chain of the book's performance measurements.

    >>> planar_chain(4).n
    4
    """
    n = _checks.size(n, "planar_chain: n", high=MAX_JOINTS)
    l = _checks.positive(length, "planar_chain: length")
    _checks.positive(mass, "planar_chain: mass")
    S = [revolute_screw([0, 0, 1], [i * l, 0, 0]) for i in range(n)]
    return SerialChain.from_screws(
        _columns(S), _translation([n * l, 0, 0]),
        link_homes=[_translation([(i + 0.5) * l, 0, 0]) for i in range(n)],
        link_inertias=[rod_inertia(mass, l) for _ in range(n)], name=f"planar {n}-link")


def random_chain(n, rng=None, prismatic=0.3, helical=0.0):
    r"""A random spatial chain of n joints with random link frames and inertias, for tests.

    Each joint is prismatic with probability ``prismatic``, helical with probability
    ``helical``, otherwise revolute; axes, points, link poses, masses and inertias are random
    but physically valid.

    >>> random_chain(7, np.random.default_rng(0)).n
    7
    """
    n = _checks.size(n, "random_chain: n", high=MAX_JOINTS)
    prismatic = _checks.scalar(prismatic, "random_chain: prismatic", low=0, high=1)
    helical = _checks.scalar(helical, "random_chain: helical", low=0, high=1)
    if isinstance(prismatic, sp.Basic) or isinstance(helical, sp.Basic):
        raise TypeError("random_chain: prismatic, helical: expected probabilities (floats), "
                        "got sympy expressions")
    if rng is not None and not isinstance(rng, np.random.Generator):
        raise TypeError(f"random_chain: rng: expected a numpy.random.Generator "
                        f"(np.random.default_rng(seed)), got {_checks.describe(rng)}")
    if not 0 <= prismatic + helical <= 1:
        raise ValueError(f"random_chain: expected 0 <= prismatic + helical <= 1, got "
                         f"{prismatic} + {helical}")
    rng = np.random.default_rng() if rng is None else rng
    from .kinematics import exp_so3, prismatic_screw
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
    r = sp.Symbol("r", positive=True) if radius is None else _checks._exact(
        _checks.positive(radius, f"{fname}: radius", hint="the disk's radius in m"))
    m = sp.Symbol("m", positive=True) if mass is None else _checks._exact(
        _checks.positive(mass, f"{fname}: mass", hint="a mass in kg"))
    g = sp.Symbol("g", positive=True) if gravity is None else _checks._exact(
        _checks.nonnegative(gravity, f"{fname}: gravity", hint="m/s^2, pointing down"))
    if not isinstance(inertia_factors, (tuple, list)) or len(inertia_factors) != 2:
        raise ValueError(f"{fname}: inertia_factors: expected two numbers (a, b), got "
                         f"{_checks._describe(inertia_factors)}")
    a, b = (_checks._exact(_checks.positive(v, f"{fname}: inertia_factors[{k}]"))
            for k, v in enumerate(inertia_factors))
    if (b - 2 * a).is_positive:
        raise ValueError(f"{fname}: inertia_factors: expected b <= 2a (the axial moment of a rigid "
                         f"wheel is at most twice the diametral one), got a = {a}, b = {b}")
    return _rolling_disk(r, m, g, a, b)


@functools.lru_cache(maxsize=8)
def _rolling_disk(r, m, g, a, b):
    from . import kane
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
