r"""Is a gait stable? The step-to-step (Poincaré) map of a walker, its fixed points, their
Floquet multipliers, period doubling and basins of attraction (Part IV, walking stability).

A gait is a fixed point :math:`z^* = P(z^*)` of the map P that takes the state just after one
heel strike to the state just after the next (the *section* is the set of post-impact states).
Near it :math:`\delta z_{k+1} \approx DP\,\delta z_k`: the gait is (locally, exponentially)
stable when every eigenvalue of :math:`DP` -- the Floquet multipliers -- lies inside the unit
circle. The Jacobian :math:`DP` is computed here two independent ways:

* **central differences** of P (:func:`jacobian_fd`);
* **the variational equations carried through the impact** (:func:`variational_stride`): along
  the stride :math:`\dot\Phi = A(x)\Phi`, :math:`\Phi(0) = I` with
  :math:`A = \partial f/\partial x`; at the impact the perturbation jumps by the **saltation
  matrix** (eq. iv-saltation, :func:`saltation_matrix`)

  .. math:: S = D\Delta + \frac{(f^+ - D\Delta\,f^-)\,\nabla g^T}{\nabla g^T f^-}

  (:math:`\Delta` the reset map, g the guard, :math:`f^\mp` the vector field just before and
  after); the monodromy matrix :math:`S\Phi(T)` has the eigenvalue 1 along the flow and the
  multipliers of P as its other eigenvalues; projected along the flow onto the section it is
  :math:`DP` (eq. iv-poincare-jacobian).

The rimless wheel's map is known in closed form (:func:`rimless_wheel_multiplier`: its slope at
the fixed point is :math:`\cos^2 2\alpha`). The compass gait's is not; its strides run in C
(:func:`walk`: the equations of :class:`robodyn.walking.CompassGait` printed by sympy, a
Dormand--Prince integrator, the guard located by the Illinois method, the impact by Gaussian
elimination), about 40 microseconds a stride, checked against
:func:`robodyn.impacts.simulate_hybrid`. Sweeps over slopes and grids of initial states
(:func:`bifurcation_diagram`, :func:`basin_of_attraction`) run on
:func:`robodyn.parallel.map_tasks` (local processes or Dask, resumable).
"""
from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass

import numpy as np
import sympy as sp
from scipy.integrate import solve_ivp

from ..kinds import Tolerance
from .. import _value_checks
from ..impacts._hybrid import fixed_point as _newton_fixed_point
from ._walkers import CompassGait, RimlessWheel, _compass_equations

__all__ = ["saltation_matrix", "floquet_multipliers", "jacobian_fd",
           "variational_stride", "rimless_wheel_multiplier", "rimless_wheel_jacobian",
           "rimless_wheel_basin",
           "walk", "compass_gait_step", "compass_gait_variational", "compass_gait_jacobian",
           "compass_gait_gait",
           "sweep", "bifurcation_diagram", "basin_of_attraction"]

MAX_STRIDES = 100_000
"""At most this many strides per initial state in one call of :func:`walk`."""


def _walker(x, name, cls=CompassGait):
    if not isinstance(x, cls):
        raise _value_checks.error(name, f"a robodyn.walking.{cls.__name__}", x, exc=TypeError)
    return x


def _wheel_gait(w, what):
    """The rimless wheel's rolling-gait speed, a failure (the hub would leave the ground)
    refused under ``what`` (the argument the user passed); also whether it rolls."""
    try:
        speed = w.closed_form_fixed_point()
    except ValueError as exc:
        raise _value_checks.error(what, "a wheel whose gait keeps its spokes on the ground", repr(w),
                            str(exc).split("got ", 1)[-1][:200]) from exc
    return speed, w._rolls(speed)


def _unit(v):
    """``v / |v|`` computed without overflow (scaled by its largest entry first); 0 for 0."""
    big = float(np.abs(v).max(initial=0.0))
    if big == 0.0:
        return np.zeros_like(v)
    w = v / big
    return w / float(np.linalg.norm(w))


MAX_EVALUATIONS = 20_000
"""At most this many evaluations of the vector field in one :func:`variational_stride` (a
stride of the compass gait takes a few hundred to a few thousand): the cap on its work."""

MAX_SECTION_RATE = 1e3
"""Largest leg rate (rad/s) of a compass-gait section point z."""


# --------------------------------------------------------------------------
# linear algebra of the section
# --------------------------------------------------------------------------

def saltation_matrix(reset_jacobian, f_minus, f_plus, guard_gradient):
    r"""The jump of a perturbation at an impact, eq. (iv-saltation):

    .. math:: S = D\Delta + \frac{(f^+ - D\Delta f^-)\,\nabla g^T}{\nabla g^T f^-}

    A perturbation :math:`\delta x^-` of the state just before the nominal impact becomes
    :math:`S\,\delta x^-` just after it (both compared at the same time): the perturbed motion
    hits the guard :math:`\delta t = -\nabla g^T\delta x^-/\nabla g^Tf^-` earlier or later and
    spends that time on the other side of the impact.

    Parameters
    ----------
    reset_jacobian : (N, N) :math:`D\Delta`, the Jacobian of the reset map at :math:`x^-`
    f_minus, f_plus : (N,) the vector field just before and just after the impact
    guard_gradient : (N,) :math:`\nabla g` at :math:`x^-` (transversal: :math:`\nabla g^Tf^-
        \ne 0`)

    >>> saltation_matrix(np.eye(2), [1.0, 0.0], [1.0, 0.0], [1.0, 0.0])   # no jump: I
    array([[1., 0.],
           [0., 1.]])

    A ball (state height y, speed v) hits the floor g = y at v = -2 m/s, e = 0.5, gravity
    10 m/s^2: :math:`S = [[-e, 0], [(1+e)g/V, -e]]`.

    >>> saltation_matrix([[1.0, 0.0], [0.0, -0.5]], [-2.0, -10.0], [1.0, -10.0], [1.0, 0.0])
    array([[-0.5,  0. ],
           [ 7.5, -0.5]])
    """
    fname = "saltation_matrix"
    D = _value_checks.real_array(reset_jacobian, f"{fname}: reset_jacobian")
    if D.ndim != 2 or D.shape[0] != D.shape[1] or D.size == 0:
        raise _value_checks.error(f"{fname}: reset_jacobian", "a square matrix (N, N)",
                            f"shape {D.shape}")
    vecs = {}
    for name, v in (("f_minus", f_minus), ("f_plus", f_plus), ("guard_gradient", guard_gradient)):
        vecs[name] = _value_checks.real_array(v, f"{fname}: {name}")
        if vecs[name].ndim != 1:
            raise _value_checks.error(f"{fname}: {name}", "a vector (N,)", f"shape {vecs[name].shape}")
    sizes = [D.shape[0]] + [v.size for v in vecs.values()]
    N = max(set(sizes), key=sizes.count)             # the size most arguments agree on
    if D.shape[0] != N:
        raise _value_checks.error(f"{fname}: reset_jacobian", f"shape ({N}, {N}) like the vectors",
                            f"shape {D.shape}")
    for name, v in vecs.items():
        if v.size != N:
            raise _value_checks.error(f"{fname}: {name}", f"shape ({N},) like the other arguments",
                                f"shape {v.shape}")
    fm, fp, dg = vecs["f_minus"], vecs["f_plus"], vecs["guard_gradient"]
    return _value_checks.finite_result(_saltation(D, fm, fp, dg, f"{fname}: guard_gradient, f_minus"),
                                 fname)


def _saltation(D, fm, fp, dg, name):
    """Eq. (iv-saltation) on checked arrays; the transversality is tested on unit vectors
    (scale-free, no overflow) and the division is done with the guard's gradient scaled."""
    if abs(float(_unit(dg) @ _unit(fm))) <= 1e-12:
        raise _value_checks.error(name, "a guard crossed "
                            "transversally (grad g . f_minus != 0)",
                            f"grad g . f_minus = {float(dg @ fm):.3g}",
                            "a grazing impact has no saltation matrix")
    dgs = dg / float(np.abs(dg).max())          # S is invariant under scaling grad g
    return D + np.outer(fp - D @ fm, dgs / float(dgs @ fm))


def floquet_multipliers(jacobian):
    r"""The eigenvalues of a return map's Jacobian, largest modulus first (real when all are).

    The gait is stable when all have modulus < 1; a multiplier leaving the unit circle
    through -1 announces a period doubling, through +1 a fold (saddle-node).

    >>> floquet_multipliers([[0.5, 1.0], [0.0, -0.9]])
    array([-0.9,  0.5])
    """
    J = _value_checks.real_array(jacobian, "floquet_multipliers: jacobian")
    if J.ndim != 2 or J.shape[0] != J.shape[1] or J.size == 0:
        raise _value_checks.error("floquet_multipliers: jacobian", "a square matrix",
                            f"shape {J.shape}")
    scale = float(np.abs(J).max())                # eig(J) = scale eig(J / scale): no overflow
    ev = np.linalg.eigvals(J / scale) * scale if scale > 0 else np.zeros(J.shape[0])
    _value_checks.finite_result(ev, "floquet_multipliers")
    ev = ev[np.lexsort((-ev.imag, -np.abs(ev)))]
    return ev.real if np.all(np.abs(ev.imag) <= 1e-12 * max(1.0, np.abs(ev).max())) else ev


def jacobian_fd(step, z, *, h=1e-6):
    r"""Central differences of a map: :math:`DP_{:,j} \approx (P(z + h_je_j) - P(z -
    h_je_j))/2h_j`, :math:`h_j = h\max(1, |z_j|)`; error :math:`O(h^2)` plus the map's own
    error over h.

    >>> jacobian_fd(lambda z: np.array([z[0] ** 2, z[0] * z[1]]), [1.0, 2.0]).round(8)
    array([[2., 0.],
           [2., 1.]])
    """
    if not callable(step):
        raise _value_checks.error("jacobian_fd: step", "a function P(z)", step, exc=TypeError)
    z = _value_checks.real_array(z, "jacobian_fd: z")
    if z.ndim != 1 or z.size == 0:
        raise _value_checks.error("jacobian_fd: z", "a point (k,)", f"shape {z.shape}")
    h = _value_checks.tolerance(h, "jacobian_fd: h", upper=0.1)
    k = z.size
    cols = []
    for j in range(k):
        hj = h * max(1.0, abs(z[j]))
        e = np.zeros(k)
        e[j] = hj
        a = np.asarray(step(z + e), dtype=float).reshape(-1)
        b = np.asarray(step(z - e), dtype=float).reshape(-1)
        if a.shape != b.shape or not np.all(np.isfinite(a - b)):
            raise _value_checks.error("jacobian_fd: step, z", "a map with finite values of one "
                                "shape near z", f"non-finite or ragged values near z = "
                                f"{np.round(z, 6).tolist()}"[:160])
        cols.append((a - b) / (2 * hj))
    return _value_checks.finite_result(np.array(cols).T, "jacobian_fd")


# --------------------------------------------------------------------------
# the variational equations through the impact
# --------------------------------------------------------------------------

@dataclass(frozen=True)
class VariationalStride:
    """One stride and its linearization (:func:`variational_stride`).

    ``x_minus``, ``x_plus``: the states just before and after the impact; ``duration`` (s);
    ``flow`` :math:`\\Phi(T)`; ``saltation`` S; ``monodromy`` :math:`S\\Phi(T)`;
    ``jacobian``: the Jacobian of the return map in the section's coordinates."""
    x_minus: np.ndarray
    x_plus: np.ndarray
    duration: float
    flow: np.ndarray
    saltation: np.ndarray
    monodromy: np.ndarray
    jacobian: np.ndarray


def variational_stride(field, field_jacobian, guard, guard_gradient, reset, reset_jacobian,
                       x0, section_normal, basis, *, t_max=10.0, tol: Tolerance = 1e-12):
    r"""Integrate :math:`\dot x = f(x)` with :math:`\dot\Phi = \partial f/\partial x\,\Phi`
    from ``x0`` to the guard :math:`g(x) = 0` (crossed downward), then jump through the reset
    with the saltation matrix, eq. (iv-poincare-jacobian):

    .. math:: DP = C\Big(I - \frac{f^+n^T}{n^Tf^+}\Big) S\,\Phi(T)\,E

    where n is the normal of the post-impact section, E (N, k) a basis of its tangent space
    (the section's coordinates z map to :math:`\delta x = E\delta z`) and :math:`C = E^+`.

    ``field(x)``, ``field_jacobian(x)``, ``guard(x)``, ``guard_gradient(x)``, ``reset(x)``,
    ``reset_jacobian(x)`` are plain functions of the (N,) state. RuntimeError when no crossing
    comes within ``t_max``.

    >>> w = RimlessWheel(slope=0.1)            # a pendulum stride, see rimless_wheel_jacobian
    >>> round(float(rimless_wheel_jacobian(w, method="saltation")[0, 0]), 9)
    0.5
    """
    fname = "variational_stride"
    pieces = {}
    for name, f in (("field", field), ("field_jacobian", field_jacobian), ("guard", guard),
                    ("guard_gradient", guard_gradient), ("reset", reset),
                    ("reset_jacobian", reset_jacobian)):
        if not callable(f):
            raise _value_checks.error(f"{fname}: {name}", "a function of the state", f, exc=TypeError)
        pieces[name] = f
    x0 = _value_checks.real_array(x0, f"{fname}: x0")
    n = _value_checks.real_array(section_normal, f"{fname}: section_normal")
    E = _value_checks.real_array(basis, f"{fname}: basis")
    N = _state_size(x0, n, E, fname)
    t_max = _value_checks.real_number(t_max, f"{fname}: t_max", low=0, strict_low=True, high=1e6)
    tol = _value_checks.tolerance(tol, f"{fname}: tol", upper=1e-3)
    if np.abs(x0).max() > 1e6:
        raise _value_checks.error(f"{fname}: x0", "a state with entries within 1e6",
                            f"{np.abs(x0).max():.3g}")
    if _unit(n) @ _unit(n) < 0.5:
        raise _value_checks.error(f"{fname}: section_normal", "a non-zero vector", n)
    if np.linalg.matrix_rank(E / max(float(np.abs(E).max()), 1e-300)) < E.shape[1]:
        raise _value_checks.error(f"{fname}: basis", f"{E.shape[1]} independent columns",
                            f"rank {np.linalg.matrix_rank(E)}")
    _probe(pieces, x0, fname)
    return _stride(pieces, x0, n, E, t_max, tol, fname, f"{fname}: x0",
                   f"{fname}: section_normal")


def _probe(pieces, x0, fname):
    """Each user function evaluated once at x0: the shape and finiteness it must give."""
    N = x0.size
    want = {"field": (N,), "field_jacobian": (N, N), "guard": (), "guard_gradient": (N,),
            "reset": (N,), "reset_jacobian": (N, N)}
    for name, shape in want.items():
        try:
            v = np.asarray(pieces[name](x0.copy()), dtype=float)
        except (TypeError, ValueError, ArithmeticError, IndexError) as exc:
            raise _value_checks.error(f"{fname}: {name}", "a function of the state (N,) returning "
                                "numbers", f"{type(exc).__name__} at x0: {exc}"[:160],
                                exc=TypeError) from exc
        if v.shape != shape and not (shape == () and v.size == 1):
            raise _value_checks.error(f"{fname}: {name}", f"a function returning shape {shape} at "
                                f"x0", f"shape {v.shape}")
        if not np.all(np.isfinite(v)):
            raise _value_checks.error(f"{fname}: {name}", "finite values at x0", "NaN or infinity")


def _state_size(x0, n, E, fname):
    """N, the state's length: x0 (N,), section_normal (N,), basis (N, k) with 0 < k < N;
    when they disagree the one the others outvote is named."""
    if x0.ndim != 1 or x0.size < 2:
        raise _value_checks.error(f"{fname}: x0", "a state (N,) with N >= 2 (a section of dimension "
                            "N - 1 >= 1)", f"shape {x0.shape}")
    if n.ndim != 1:
        raise _value_checks.error(f"{fname}: section_normal", "a vector (N,)", f"shape {n.shape}")
    if E.ndim != 2 or not 0 < E.shape[1] < E.shape[0]:
        raise _value_checks.error(f"{fname}: basis", "a (N, k) basis of the section, 0 < k < N",
                            f"shape {E.shape}")
    sizes = {"x0": x0.size, "section_normal": n.size, "basis": E.shape[0]}
    votes = list(sizes.values())
    N = max(set(votes), key=lambda v: (votes.count(v), v == x0.size))
    for name, v in sizes.items():
        if v != N:
            others = ", ".join(k for k in sizes if k != name)
            raise _value_checks.error(f"{fname}: {name}", f"a length N = {N} like {others}",
                                f"length {v}")
    return N


def _stride(pieces, x0, n, E, t_max, tol, fname, xname, nname=None):
    """:func:`variational_stride` on checked arguments; a start from which the guard is not
    crossed (within ``t_max`` and :data:`MAX_EVALUATIONS` evaluations) is refused under
    ``xname``, a non-finite linearization under ``fname: result``."""
    N = x0.size
    field, field_jacobian = pieces["field"], pieces["field_jacobian"]
    count = [0]

    class _Cap(Exception):
        pass

    def rhs(t, y):
        count[0] += 1
        if count[0] > MAX_EVALUATIONS:
            raise _Cap()
        x, Phi = y[:N], y[N:].reshape(N, N)
        return np.concatenate([field(x), (field_jacobian(x) @ Phi).ravel()])

    def event(t, y):
        return pieces["guard"](y[:N])
    event.terminal, event.direction = True, -1
    y0 = np.concatenate([x0, np.eye(N).ravel()])
    why = None
    try:
        sol = solve_ivp(rhs, (0.0, t_max), y0, method="DOP853", rtol=tol, atol=tol,
                        events=event)
        if not sol.t_events[0].size:
            why = f"no crossing of the guard within t_max = {t_max:g} s ({sol.message})"
    except _Cap:
        why = f"no crossing of the guard within {MAX_EVALUATIONS} evaluations of the field"
    if why is not None:
        raise _value_checks.error(xname, "a state from which the motion reaches the guard", why,
                            "a start that falls, stalls or never returns has no stride")
    ye = sol.y_events[0][0]
    xm, Phi = ye[:N], ye[N:].reshape(N, N)
    xp = np.asarray(pieces["reset"](xm), dtype=float)
    S = _saltation(np.asarray(pieces["reset_jacobian"](xm), dtype=float), field(xm), field(xp),
                   np.asarray(pieces["guard_gradient"](xm), dtype=float), xname)
    Mono = S @ Phi
    fp = field(xp)
    un = _unit(n)
    rate = float(un @ _unit(fp))
    if abs(rate) <= 1e-12:
        raise _value_checks.error(nname or xname, "a section crossed transversally by "
                            "the flow after the impact (n . f+ != 0)", f"n . f+ = {rate:.3g}")
    Proj = np.eye(N) - np.outer(fp, un) / float(un @ fp)
    DP = np.linalg.pinv(E) @ Proj @ Mono @ E
    out = VariationalStride(xm, xp, float(sol.t_events[0][0]), Phi, S, Mono, DP)
    _value_checks.finite_result((xm, xp, Phi, S, Mono, DP), fname)
    return out


# --------------------------------------------------------------------------
# the rimless wheel
# --------------------------------------------------------------------------

def rimless_wheel_multiplier(wheel):
    r"""The slope of the rimless wheel's return map at its rolling gait, in closed form.

    With :math:`c = 4(g/l)\sin\alpha\sin\gamma`, the map of post-impact speeds is
    :math:`P(\omega) = \cos 2\alpha\sqrt{\omega^2 + c}` (energy from impact to impact, then the
    impact keeps :math:`\cos 2\alpha` of the speed); :math:`P'(\omega) = \cos 2\alpha\,
    \omega/\sqrt{\omega^2 + c}`, and at the fixed point :math:`\sqrt{\omega^{*2}+c} =
    \omega^*/\cos 2\alpha`, so (eq. iv-rimless-multiplier)

    .. math:: P'(\omega^*) = \cos^2 2\alpha

    independent of the slope, the length and gravity: the gait is stable whenever it exists.

    >>> round(rimless_wheel_multiplier(RimlessWheel(spokes=8)), 12)     # cos^2(pi/4)
    0.5
    """
    w = _walker(wheel, "rimless_wheel_multiplier: wheel", RimlessWheel)
    if not _wheel_gait(w, "rimless_wheel_multiplier: wheel")[1]:
        raise _value_checks.error("rimless_wheel_multiplier: wheel", "a wheel whose gait rolls over "
                            "the top", f"slope {w.slope:.4g} rad, {w.spokes} spokes",
                            "on a gentler slope the wheel comes to rest: no rolling gait")
    return float(np.cos(2 * w.alpha) ** 2)


def _wheel_pieces(w):
    a, gam, k = w.alpha, w.slope, w.g / w.length
    return dict(
        field=lambda x: np.array([x[1], k * np.sin(x[0])]),
        field_jacobian=lambda x: np.array([[0.0, 1.0], [k * np.cos(x[0]), 0.0]]),
        guard=lambda x: gam + a - x[0],
        guard_gradient=lambda x: np.array([-1.0, 0.0]),
        reset=lambda x: np.array([x[0] - 2 * a, np.cos(2 * a) * x[1]]),
        reset_jacobian=lambda x: np.diag([1.0, np.cos(2 * a)]),
        section_normal=np.array([1.0, 0.0]), basis=np.array([[0.0], [1.0]]))


def rimless_wheel_jacobian(wheel, omega=None, *, method="saltation"):
    r"""The slope :math:`dP/d\omega` (1 x 1) of the rimless wheel's map of post-impact speeds at
    ``omega`` (default the fixed point), by the variational equations and the saltation matrix
    (``"saltation"``) or by central differences of :func:`robodyn.impacts.return_map`
    (``"fd"``). Compare with :func:`rimless_wheel_multiplier`.

    >>> w = RimlessWheel(spokes=10, slope=0.1)
    >>> round(float(rimless_wheel_jacobian(w, method="fd")[0, 0]), 7)       # cos^2(36 deg)
    0.6545085
    """
    from ..impacts._hybrid import return_map
    fname = "rimless_wheel_jacobian"
    w = _walker(wheel, f"{fname}: wheel", RimlessWheel)
    method = _value_checks.choice(method, f"{fname}: method", ("saltation", "fd"))
    if omega is None:
        omega = _wheel_gait(w, f"{fname}: wheel")[0]
    omega = _value_checks.real_number(omega, f"{fname}: omega", low=0, strict_low=True, high=1e3,
                                hint="a post-impact speed, rad/s")
    th0 = w.slope - w.alpha
    if method == "saltation":
        p = _wheel_pieces(w)
        pieces = {k: v for k, v in p.items() if k not in ("section_normal", "basis")}
        return _stride(pieces, np.array([th0, omega]), p["section_normal"], p["basis"], 10.0,
                       1e-12, fname, f"{fname}: omega").jacobian
    system = w.hybrid_system()

    def P(z):
        try:
            x = return_map(system, [th0, z[0]], surface="front spoke", rtol=1e-12,
                           atol=1e-12).x
        except RuntimeError as exc:
            raise _value_checks.error(f"{fname}: omega", "a speed from which the wheel reaches its "
                                "next front impact", f"{omega:g} rad/s ({exc})"[:200]) from exc
        return x[1:]
    return jacobian_fd(P, [omega], h=1e-5)


def _wheel_rolls_on(w, th, om, cap=1000):
    """Closed form (energy between impacts, cos(2 alpha) at each): does the wheel started at
    (th, om) between its impacts reach the rolling gait? Rocking reverses om at the same
    energy; a forward impact followed by a pass over the top means yes (the map is increasing
    and its fixed point lies above the passing speed); ``cap`` impacts without it mean rest."""
    k, lo, hi, c = w.g / w.length, w.slope - w.alpha, w.slope + w.alpha, np.cos(2 * w.alpha)
    top = np.sqrt(2 * k * (1 - np.cos(lo)))           # speed at lo that just passes the top
    for _ in range(cap):
        E = 0.5 * om * om + k * np.cos(th)
        if om >= 0 and th < 0 and E <= k or om < 0 and th > 0 and E <= k:
            om = -om                                  # swings back through th, same energy
            if abs(om) < 1e-12:
                return False
            continue
        if om >= 0:                                   # forward impact at hi
            om, th = c * np.sqrt(max(2 * (E - k * np.cos(hi)), 0.0)), lo
            if om > top:
                return True
        else:                                         # backward impact at lo
            om, th = -c * np.sqrt(max(2 * (E - k * np.cos(lo)), 0.0)), hi
        if abs(om) < 1e-9:
            return False
    return False


def _wheel_row(args):
    """Top-level (picklable): one row of the rimless wheel's basin by simulation."""
    from ..impacts._hybrid import simulate_hybrid
    spokes, length, mass, slope, g, th, rates, events = args
    w = RimlessWheel(spokes, length, mass, slope, g)
    target, system = w.closed_form_fixed_point(), w.hybrid_system()
    out = []
    for om in rates:
        tr = simulate_hybrid(system, [th], [om], 60.0, max_events=events, rtol=1e-10,
                             atol=1e-10, after_zeno="stop")
        last = [e for e in tr.events[-3:] if e.surface == "front spoke"]
        out.append(len(last) == 3 and abs(float(last[-1].qd_after[0]) - target) < 1e-3)
    return np.array(out, dtype=float)


def rimless_wheel_basin(wheel, theta, rate, *, method="closed form", events=40, **options):
    r"""Which states :math:`(\theta, \dot\theta)` between two impacts (:math:`\gamma - \alpha
    \le \theta \le \gamma + \alpha`) reach the rolling gait: (len(theta), len(rate)) bool.

    ``"closed form"``: energy is conserved between impacts and each impact keeps
    :math:`\cos 2\alpha` of the speed, so the fate follows from a few square roots
    (rocking back and forth until the wheel either rests or passes the top after a forward
    impact, from where it converges to the gait since the map is increasing).
    ``"simulation"``: :func:`robodyn.impacts.simulate_hybrid`, ``events`` impacts, the last
    three on the front spoke at the gait's speed (1e-3 rad/s); rows run by :func:`sweep`.

    >>> w = RimlessWheel(spokes=10, slope=0.2)
    >>> rimless_wheel_basin(w, [0.0], [-0.5, 0.5]).tolist()
    [[True, True]]
    >>> rimless_wheel_basin(w, [-0.1], [0.1, 0.5]).tolist()          # too slow: it rests
    [[False, True]]
    """
    fname = "rimless_wheel_basin"
    _sweep_options(fname, options)
    w = _walker(wheel, f"{fname}: wheel", RimlessWheel)
    if not _wheel_gait(w, f"{fname}: wheel")[1]:
        raise _value_checks.error(f"{fname}: wheel", "a wheel with a rolling gait", repr(w),
                            "a steeper slope or more spokes")
    th = _value_checks.real_array(theta, f"{fname}: theta")
    rt = _value_checks.real_array(rate, f"{fname}: rate")
    lo, hi = w.slope - w.alpha, w.slope + w.alpha
    if th.ndim != 1 or th.size == 0 or th.min() < lo or th.max() > hi:
        raise _value_checks.error(f"{fname}: theta", f"angles between the impacts, in [{lo:.4g}, "
                            f"{hi:.4g}] rad", f"{th!r}"[:80])
    if rt.ndim != 1 or rt.size == 0 or np.abs(rt).max() > 100:
        raise _value_checks.error(f"{fname}: rate", "a 1-D grid of rates within +-100 rad/s",
                            f"{rt!r}"[:80])
    method = _value_checks.choice(method, f"{fname}: method", ("closed form", "simulation"))
    events = _value_checks.size(events, f"{fname}: events", low=3, high=10_000)
    if method == "closed form":
        return np.array([[_wheel_rolls_on(w, t, r) for r in rt] for t in th])
    items = [(w.spokes, w.length, w.mass, w.slope, w.g, float(t), tuple(map(float, rt)),
              events) for t in th]
    keys = [_key("wheel", it[5], it[:5], it[6:]) for it in items]
    return _sweep(fname, _wheel_row, items, keys, options).astype(bool)


# --------------------------------------------------------------------------
# the compass gait: strides in C
# --------------------------------------------------------------------------

def _params(walker, tol, t_max):
    return np.array([walker.m, walker.m_h, walker.a, walker.b, walker.g, walker.slope, tol,
                     t_max], dtype=float)


def walk(walker, z0, strides, *, tol: Tolerance = 1e-11, t_max=5.0):
    r"""Strides of the compass gait from points of its section, in compiled code.

    A point of the section (just after a heel strike, :math:`\theta_s + \theta_w = 2\gamma`)
    is :math:`z = (\theta_s, \dot\theta_s, \dot\theta_w)`, as in
    :meth:`robodyn.walking.CompassGait.step_map`, whose equations, guard and impact are the
    ones run here (:mod:`robodyn.walking._gait_kernel`).

    Parameters
    ----------
    walker : CompassGait
    z0 : (3,) or (B, 3) section points (rad, rad/s)
    strides : number of strides (0 to MAX_STRIDES)
    tol : relative and absolute tolerance of the Dormand--Prince integration
    t_max : s, a stride longer than this counts as a failure

    Returns
    -------
    (z, status, durations): z (B, strides + 1, 3) the section points, status (B,) int (0
    still walking, 1 fell, 2 no heel strike within t_max, 3 trailing foot pushed into the
    slope, 4 integrator stalled), durations (B, strides) in s. After a failure the points
    repeat the last one reached and the durations are 0 (every number stays finite): the
    strides walked are ``(durations > 0).sum(-1)``. For a single z0 the B axis is dropped.

    >>> cg = CompassGait()
    >>> z, status, T = walk(cg, [-0.2186688, 1.0923836, 0.3773740], 2)
    >>> z.shape, int(status), bool(np.all(T > 0.7))
    ((3, 3), 0, True)
    """
    from . import _gait_kernel as _gait_kernel
    fname = "walk"
    cg = _walker(walker, f"{fname}: walker")
    single, Z = _value_checks.batch(z0, 3, f"{fname}: z0")
    strides = _value_checks.size(strides, f"{fname}: strides", low=0, high=MAX_STRIDES)
    tol = _value_checks.tolerance(tol, f"{fname}: tol", upper=1e-3)
    if tol < 1e-14:
        raise _value_checks.error(f"{fname}: tol", "a tolerance >= 1e-14 (double precision)", tol)
    t_max = _value_checks.real_number(t_max, f"{fname}: t_max", low=0, strict_low=True, high=1e3,
                                hint="seconds: a longer stride counts as a failure")
    B = Z.shape[0]
    _value_checks.size(B * (strides + 1) * 3, f"{fname}: z0 and strides", item_bytes=8,
                 hint="fewer points or strides per call")
    Z = np.ascontiguousarray(Z, dtype=float)
    out = np.empty((B, strides + 1, 3))
    status = np.empty(B)
    dur = np.empty((B, strides))
    _gait_kernel.kernel().walk(_params(cg, tol, t_max), Z, strides, out, status, dur)
    _value_checks.finite_result((out, dur), fname)
    status = status.astype(int)
    if single:
        return out[0], status[0], dur[0]
    return out, status, dur


def compass_gait_step(walker, z, *, tol: Tolerance = 1e-12):
    """One stride (the Poincaré map P) from the section point z, compiled; ValueError naming
    z when the walker fails before the next heel strike (it falls, ...).

    >>> z = compass_gait_step(CompassGait(), [-0.2186688, 1.0923836, 0.3773740])
    >>> bool(np.allclose(z, [-0.2186688, 1.0923836, 0.3773740], atol=1e-6))
    True
    >>> compass_gait_step(CompassGait(), [0.0, 0.0, 0.0])
    Traceback (most recent call last):
    ...
    robodyn.errors.ArgumentError: compass_gait_step: z: expected a state from which the walker takes a step, got [0.0, 0.0, 0.0] (it falls)
    """
    fname = "compass_gait_step"
    cg = _walker(walker, f"{fname}: walker")
    z = _section_point(cg, z, f"{fname}: z")
    tol = _value_checks.tolerance(tol, f"{fname}: tol", upper=1e-3)
    if tol < 1e-14:
        raise _value_checks.error(f"{fname}: tol", "a tolerance >= 1e-14 (double precision)", tol)
    return _step(cg, z, tol, f"{fname}: z")


_FAILURE = {1: "it falls", 2: "no heel strike within 5 s", 3: "the trailing foot would be "
            "pushed into the slope", 4: "the integrator stalled"}


def _section_point(cg, z, what):
    """A section point z = (theta_s, thetad_s, thetad_w) of a standing walker (the stance leg
    above the fall line cos(theta_s - slope) > 0.2 of :meth:`CompassGait.hybrid_system`),
    rates within :data:`MAX_SECTION_RATE`."""
    z = _value_checks.real_array(z, what, shape=(3,))
    if np.abs(z[1:]).max() > MAX_SECTION_RATE or not np.cos(z[0] - cg.slope) > 0.2:
        raise _value_checks.error(what, "a section point of a standing walker: cos(theta_s - slope) "
                            f"> 0.2 and leg rates within {MAX_SECTION_RATE:g} rad/s",
                            str(np.round(z, 7).tolist()), "it has fallen already")
    return z


def _step(cg, z, tol, what):
    """One compiled stride from the checked point z; a failure is refused under ``what``."""
    zz, status, _ = walk(cg, z, 1, tol=tol)
    if status:
        raise _value_checks.error(what, "a state from which the walker takes a step",
                            str(np.round(z, 7).tolist()), _FAILURE.get(int(status), "it fails"))
    return zz[1]


@functools.lru_cache(maxsize=32)
def _compass_derivatives(values):
    """Lambdified pieces of the variational equations and the impact's Jacobian."""
    form, Me, Js, _, _, (ts, tw, us, uw, x, y), syms = _compass_equations()
    sub = dict(zip(syms, values))
    q, u = [ts, tw], [us, uw]
    M, f = form.M.subs(sub), form.f.subs(sub)
    Me, Js = Me.subs(sub).subs({x: 0, y: 0}), Js.subs(sub).subs({x: 0, y: 0})
    args = [ts, tw, us, uw]

    def lam(e):
        return sp.lambdify(args, e, "numpy")
    return dict(M=lam(M), f=lam(f), dM=[lam(M.diff(v)) for v in q], dfq=lam(f.jacobian(q)),
                dfu=lam(f.jacobian(u)), Me=lam(Me), J=lam(Js), dMe=[lam(Me.diff(v)) for v in q],
                dJ=[lam(Js.diff(v)) for v in q])


def _compass_pieces(cg):
    d = _compass_derivatives((cg.m, cg.m_h, cg.a, cg.b, cg.g))
    gam = cg.slope

    def arr(fn, x):
        return np.array(fn(*x), dtype=float)

    def field(x):
        qdd = np.linalg.solve(arr(d["M"], x), arr(d["f"], x).reshape(2))
        return np.concatenate([x[2:], qdd])

    def field_jacobian(x):
        M = arr(d["M"], x)
        qdd = np.linalg.solve(M, arr(d["f"], x).reshape(2))
        dq = arr(d["dfq"], x) - np.column_stack([arr(dM, x) @ qdd for dM in d["dM"]])
        A = np.zeros((4, 4))
        A[:2, 2:] = np.eye(2)
        A[2:, :2] = np.linalg.solve(M, dq)
        A[2:, 2:] = np.linalg.solve(M, arr(d["dfu"], x))
        return A

    def impact(x):
        """(v+ of the free-foot model, X = Me^-1 J^T, W, lam, Me, J) at x."""
        Me, J = arr(d["Me"], x), arr(d["J"], x)
        v = np.array([0.0, 0.0, x[2], x[3]])
        X = np.linalg.solve(Me, J.T)
        W = J @ X
        lam = np.linalg.solve(W, J @ v)
        return v - X @ lam, X, W, lam, Me, J, v

    def reset(x):
        vp = impact(x)[0]
        return np.array([x[1], x[0], vp[3], vp[2]])

    def reset_jacobian(x):
        vp, X, W, lam, Me, J, v = impact(x)
        dv = np.zeros((4, 4))                          # d v+ / d(ts, tw, us, uw)
        for k in range(2):
            dMe, dJ = arr(d["dMe"][k], x), arr(d["dJ"][k], x)
            dX = np.linalg.solve(Me, dJ.T - dMe @ X)
            dlam = np.linalg.solve(W, dJ @ v - (dJ @ X + J @ dX) @ lam)
            dv[:, k] = -dX @ lam - X @ dlam
        Pm = np.eye(4) - X @ np.linalg.solve(W, J)
        dv[:, 2:] = Pm[:, 2:]
        D = np.zeros((4, 4))
        D[0, 1] = D[1, 0] = 1.0
        D[2], D[3] = dv[3], dv[2]
        return D

    def guard(x):
        return max(np.sin(gam - 0.5 * (x[0] + x[1])), np.sin(0.5 * (x[1] - x[0])))

    def guard_gradient(x):
        c = -0.5 * np.cos(gam - 0.5 * (x[0] + x[1]))
        return np.array([c, c, 0.0, 0.0])

    basis = np.array([[1.0, 0, 0], [-1.0, 0, 0], [0, 1.0, 0], [0, 0, 1.0]])
    return dict(field=field, field_jacobian=field_jacobian, guard=guard,
                guard_gradient=guard_gradient, reset=reset, reset_jacobian=reset_jacobian,
                section_normal=np.array([1.0, 1.0, 0.0, 0.0]), basis=basis)


def compass_gait_variational(walker, z, *, tol: Tolerance = 1e-12):
    r"""One stride of the compass gait from the section point z with its linearization
    (:func:`variational_stride` on the walker's symbolic equations and their derivatives):
    the states before and after the heel strike, :math:`\Phi(T)`, the saltation matrix S,
    the monodromy :math:`S\Phi(T)` (eigenvalue 1 along the flow, the multipliers besides)
    and the step map's Jacobian (3 x 3).

    >>> vs = compass_gait_variational(CompassGait(), [-0.2186688, 1.0923836, 0.3773740])
    >>> ev = np.linalg.eigvals(vs.monodromy)            # z is the 3-degree gait to 7 digits
    >>> round(vs.duration, 4), bool(np.min(np.abs(ev - 1)) < 1e-5)
    (0.7343, True)
    """
    fname = "compass_gait_variational"
    cg = _walker(walker, f"{fname}: walker")
    z = _section_point(cg, z, f"{fname}: z")
    tol = _value_checks.tolerance(tol, f"{fname}: tol", upper=1e-3)
    return _compass_stride(cg, z, tol, fname, f"{fname}: z")


def _compass_stride(cg, z, tol, fname, what):
    """The variational stride from a checked z that first takes a compiled step (a fall, which
    the variational equations do not see, is refused under ``what``)."""
    _step(cg, z, max(tol, 1e-13), what)
    p = _compass_pieces(cg)
    pieces = {k: v for k, v in p.items() if k not in ("section_normal", "basis")}
    return _stride(pieces, cg.section_state(z), p["section_normal"], p["basis"], 10.0, tol,
                   fname, what)


def compass_gait_jacobian(walker, z, *, method="saltation", tol: Tolerance = 1e-12):
    r"""The Jacobian (3 x 3) of the compass gait's step map at the section point z:
    ``"saltation"`` by the variational equations through the impact (:func:`variational_stride`,
    scipy's DOP853 on the symbolic equations' derivatives), ``"fd"`` by central differences of
    the compiled :func:`compass_gait_step` (an independent integrator).

    >>> z = [-0.2186688, 1.0923836, 0.3773740]
    >>> J1 = compass_gait_jacobian(CompassGait(), z)
    >>> J2 = compass_gait_jacobian(CompassGait(), z, method="fd")
    >>> bool(np.max(np.abs(J1 - J2)) < 1e-6)
    True
    """
    fname = "compass_gait_jacobian"
    cg = _walker(walker, f"{fname}: walker")
    z = _section_point(cg, z, f"{fname}: z")
    method = _value_checks.choice(method, f"{fname}: method", ("saltation", "fd"))
    tol = _value_checks.tolerance(tol, f"{fname}: tol", upper=1e-3)
    return _compass_jacobian(cg, z, method, tol, fname, f"{fname}: z")


def _compass_jacobian(cg, z, method, tol, fname, what):
    if method == "fd":
        return jacobian_fd(lambda x: _step(cg, x, max(tol, 1e-14), what), z, h=1e-6)
    return _compass_stride(cg, z, tol, fname, what).jacobian


@dataclass(frozen=True)
class Gait:
    """A periodic gait of the compass gait (:func:`compass_gait_gait`): ``points`` (period, 3)
    its section points, ``jacobian`` of the period-fold map at ``points[0]``,
    ``multipliers`` its eigenvalues (largest modulus first), ``period`` in strides,
    ``residual`` and ``iterations`` of Newton's method."""
    points: np.ndarray
    jacobian: np.ndarray
    multipliers: np.ndarray
    period: int
    residual: float
    iterations: int

    @property
    def stable(self):
        return bool(np.all(np.abs(self.multipliers) < 1.0))


def compass_gait_gait(walker, z0=(-0.2186688, 1.0923836, 0.3773740), *, period=1,
                      tol: Tolerance = 1e-10,
                      max_iter=30):
    r"""A periodic gait: a fixed point of :math:`P^k` (k = ``period``) by Newton's method
    (:func:`robodyn.impacts.fixed_point`, at most ``max_iter`` iterations, RuntimeError then),
    the map run by :func:`compass_gait_step`; the multipliers are those of the Jacobian of
    :math:`P^k`, the product of the saltation-route Jacobians at the k points (chain rule).

    >>> g = compass_gait_gait(CompassGait())
    >>> g.points.round(4).tolist(), g.stable
    ([[-0.2187, 1.0924, 0.3774]], True)
    """
    fname = "compass_gait_gait"
    cg = _walker(walker, f"{fname}: walker")
    z0 = _section_point(cg, z0, f"{fname}: z0")
    period = _value_checks.size(period, f"{fname}: period", low=1, high=64)
    tol = _value_checks.tolerance(tol, f"{fname}: tol", upper=1e-3)
    max_iter = _value_checks.size(max_iter, f"{fname}: max_iter", low=1, high=200)

    what = f"{fname}: z0"

    def Pk(z):
        for _ in range(period):
            z = _step(cg, z, 1e-13, what)
        return z
    try:
        fp = _newton_fixed_point(Pk, z0, tol=tol, max_iter=max_iter, fd_step=1e-6)
    except RuntimeError as exc:                     # Newton did not converge from z0
        raise _value_checks.error(f"{fname}: z0, max_iter", f"a start from which Newton's method "
                            f"finds a period-{period} gait", str(np.round(z0, 7).tolist()),
                            str(exc)[:200]) from exc
    pts, J = [fp.x], np.eye(3)
    for _ in range(period):
        J = _compass_jacobian(cg, pts[-1], "saltation", 1e-12, fname, what) @ J
        pts.append(_step(cg, pts[-1], 1e-13, what))
    return Gait(np.array(pts[:-1]), J, floquet_multipliers(J), period, fp.residual,
                fp.iterations)


# --------------------------------------------------------------------------
# sweeps on robodyn.parallel.map_tasks
# --------------------------------------------------------------------------

def sweep(func, items, *, keys=None, **options):
    """``np.array([func(item) for item in items])``, computed by
    :func:`robodyn.parallel.map_tasks` (options: ``scheduler``, ``workers``, ``cache_dir``,
    ``progress``, ``retries``, ``description``); ``func`` must be a top-level function. The
    results are stacked in the order of the items whatever the workers.

    >>> sweep(abs, [-1.0, 2.0, -3.0], workers=1)
    array([1., 2., 3.])
    """
    return _sweep("sweep", func, items, keys, options)


_SWEEP_OPTIONS = ("scheduler", "workers", "cache_dir", "progress", "retries", "description",
                  "on_result")


def _sweep_options(fname, options):
    """Refuse a keyword that is not an option of the sweep (a misspelt ``worker=2``)."""
    bad = sorted(set(options) - set(_SWEEP_OPTIONS))
    if bad:
        raise _value_checks.error(f"{fname}: {bad[0]}", "an option of robodyn.parallel.map_tasks (" +
                            ", ".join(_SWEEP_OPTIONS) + ")", repr(bad[0])[:60], exc=TypeError)
    return options


def _sweep(fname, func, items, keys, options):
    """:func:`sweep` for a caller named ``fname``: items are opaque (func's domain), and
    func's refusal of one (ValueError, TypeError) is a refusal of ``items`` under ``fname``."""
    from ..parallel import _map
    _sweep_options(fname, options)
    if not callable(func):
        raise _value_checks.error(f"{fname}: func", "a top-level function func(item)", func,
                            exc=TypeError)
    if isinstance(items, (str, bytes)) or not isinstance(items, (list, tuple, range,
                                                                 np.ndarray)):
        raise _value_checks.error(f"{fname}: items", "a list of items", items, exc=TypeError)
    out = _map(fname, func, items, keys, **options)
    try:
        return np.array(out)
    except ValueError as exc:                      # ragged results: numpy cannot stack them
        raise _value_checks.error(f"{fname}: func", "results of one shape for every item (they are "
                            "stacked)", str(exc).split("\n")[0][:120]) from exc


def _key(kind, x, *rest):
    """A short cache key naming the cell (x) and a digest of everything else it depends on."""
    digest = hashlib.sha256(repr((kind, float(x)) + rest).encode()).hexdigest()[:20]
    return f"{kind}:{float(x):.12g}:{digest}"


def _bifurcation_cell(args):
    """Top-level (picklable): the last ``keep`` stance angles after ``transient`` strides."""
    slope, params, z0, transient, keep, tol = args
    cg = CompassGait(*params, slope=slope)
    z, status, _ = walk(cg, z0, transient + keep, tol=tol)
    return np.concatenate([z[transient + 1:, 0], [status]])


def bifurcation_diagram(walker, slopes, *, z0=(-0.2186688, 1.0923836, 0.3773740),
                        transient=300, keep=64, tol: Tolerance = 1e-10, **options):
    r"""The stance angle just after heel strike, :math:`\theta_s`, of the last ``keep``
    strides after ``transient`` strides, for each slope (the walker's other parameters kept):
    one point per slope for a period-one gait, two for period two, a smear for chaos.

    ``z0``: the starting section point, (3,) for every slope or (len(slopes), 3), e.g. the
    (perhaps unstable) period-one gait of each slope, found by continuation.
    Returns (angles (len(slopes), keep), status (len(slopes),)); where the walker fell
    (status != 0) the angles repeat the last one reached.
    ``options`` go to :func:`sweep` (workers, scheduler, cache_dir, progress).

    >>> th, st = bifurcation_diagram(CompassGait(), [0.05], transient=20, keep=4, workers=1)
    >>> th.shape, int(st[0]), bool(np.ptp(th) < 1e-6)
    ((1, 4), 0, True)
    """
    fname = "bifurcation_diagram"
    _sweep_options(fname, options)
    cg = _walker(walker, f"{fname}: walker")
    s = _value_checks.real_array(slopes, f"{fname}: slopes")
    if s.ndim != 1 or s.size == 0 or s.min() <= 0 or s.max() >= np.pi / 4:
        raise _value_checks.error(f"{fname}: slopes", "a list of slopes in (0, pi/4) rad",
                            f"{s!r}"[:80])
    single, Z = _value_checks.batch(z0, 3, f"{fname}: z0")
    if single:
        Z = np.repeat(Z, s.size, axis=0)
    elif Z.shape[0] != s.size:
        raise _value_checks.error(f"{fname}: z0", f"one point (3,) or one per slope ({s.size}, 3)",
                            f"shape {Z.shape}")
    transient = _value_checks.size(transient, f"{fname}: transient", low=0, high=MAX_STRIDES)
    keep = _value_checks.size(keep, f"{fname}: keep", low=1, high=MAX_STRIDES - transient)
    tol = _value_checks.tolerance(tol, f"{fname}: tol", upper=1e-3)
    params = (cg.m, cg.m_h, cg.a, cg.b)
    items = [(float(x), params, tuple(map(float, z)), transient, keep, tol)
             for x, z in zip(s, Z)]
    keys = [_key("bif", it[0], it[1:]) for it in items]
    out = _sweep(fname, _bifurcation_cell, items, keys, options)
    return out[:, :-1], out[:, -1].astype(int)


def _basin_row(args):
    """Top-level (picklable): strides survived and convergence for one row of the grid."""
    params, slope, theta, rates, w, target, strides, tol, radius = args
    cg = CompassGait(*params, slope=slope)
    z0 = np.column_stack([np.full(len(rates), theta), rates, np.full(len(rates), w)])
    z, status, dur = walk(cg, z0, strides, tol=tol)
    alive = np.sum(dur > 0, axis=1)
    tail = z[:, -len(target):, :]
    dist = np.full(len(rates), np.inf)
    for shift in range(len(target)):            # any phase of a period-k gait
        tgt = np.roll(np.asarray(target), shift, axis=0)
        dist = np.minimum(dist, np.max(np.abs(tail - tgt[None]), axis=(1, 2)))
    return np.column_stack([alive, (dist < radius) & (status == 0)]).astype(float)


def basin_of_attraction(walker, theta, rate, *, swing_rate=None, gait=None, strides=40,
                        tol: Tolerance = 1e-9, radius=1e-3, **options):
    r"""The basin of attraction of a gait on a plane of the section: the grid of
    :math:`(\theta_s, \dot\theta_s)` with :math:`\dot\theta_w` = ``swing_rate`` (default the
    gait's), each point walked ``strides`` strides (:func:`walk`).

    Returns (alive, reached), each (len(theta), len(rate)): the strides walked before a failure
    (``strides`` when none) and whether the last ``period`` section points are within
    ``radius`` (max norm) of the gait's. One row of the grid is one task of :func:`sweep`
    (``options``: workers, scheduler, cache_dir, progress).

    >>> cg = CompassGait()
    >>> alive, hit = basin_of_attraction(cg, [-0.2186688], [1.0923836, 3.0], strides=10,
    ...                                  workers=1)
    >>> hit.tolist(), int(alive[0, 0])
    ([[True, False]], 10)
    """
    fname = "basin_of_attraction"
    _sweep_options(fname, options)
    cg = _walker(walker, f"{fname}: walker")
    th = _value_checks.real_array(theta, f"{fname}: theta")
    rt = _value_checks.real_array(rate, f"{fname}: rate")
    for name, a in (("theta", th), ("rate", rt)):
        if a.ndim != 1 or a.size == 0:
            raise _value_checks.error(f"{fname}: {name}", "a 1-D grid of values", f"shape {a.shape}")
    if gait is None:
        try:
            gait = compass_gait_gait(cg)
        except ValueError as exc:
            raise _value_checks.error(f"{fname}: gait", "a Gait, or None when the period-one gait is "
                                "found from the default start", "None", str(exc)[:200]) from exc
    if not isinstance(gait, Gait):
        raise _value_checks.error(f"{fname}: gait", "a Gait (compass_gait_gait) or None", gait,
                            exc=TypeError)
    w = gait.points[0, 2] if swing_rate is None else _value_checks.real_number(
        swing_rate, f"{fname}: swing_rate", low=-MAX_SECTION_RATE, high=MAX_SECTION_RATE)
    strides = _value_checks.size(strides, f"{fname}: strides", low=gait.period, high=10_000)
    tol = _value_checks.tolerance(tol, f"{fname}: tol", upper=1e-3)
    radius = _value_checks.tolerance(radius, f"{fname}: radius", upper=10.0)
    items, keys = _basin_tasks(cg, th, rt, float(w), gait, strides, tol, radius)
    return _basin_arrays(_sweep(fname, _basin_row, items, keys, options))


def _basin_tasks(cg, th, rt, w, gait, strides, tol, radius):
    """The items (one per row of the grid) and their cache keys."""
    params = (cg.m, cg.m_h, cg.a, cg.b)
    target = tuple(map(tuple, gait.points))
    items = [(params, cg.slope, float(t), tuple(map(float, rt)), w, target, strides, tol,
              radius) for t in th]
    keys = [_key("basin", it[2], it[:2], it[3:]) for it in items]
    return items, keys


def _basin_arrays(out):
    return out[:, :, 0].astype(int), out[:, :, 1].astype(bool)

from .._boundary import seal as _seal  # noqa: E402 -- the one boundary (issue 28): last, over the finished module
_seal(globals())
