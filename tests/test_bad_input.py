"""Table-driven bad-input suite (issue 8): every public function of every module refuses bad
input with a TypeError or ValueError whose message names the function and the argument; and
unusual but valid input (big-endian, Fortran-ordered, integer, read-only, batched, lists) gives
the same numbers as plain float64.

The table is built from two parts:

* *generic corruptions* applied to every array argument of every function (None, a string,
  strings of digits, complex, masked, boolean, object arrays holding None, NaN, infinity, a
  wrong length, a ragged list, a dict, sympy symbols where numbers are needed);
* *specific cases*: out-of-range values (negative masses, tolerances, sizes), structure
  (rotations, skew matrices, unit axes, inertias), symbolic numbers checked like floats,
  choices, absurd sizes, and the generated-code inputs.

``test_table_size`` keeps the table at least 250 cases, as the issue asks.
"""
from __future__ import annotations

import re

import numpy as np
import pytest
import sympy as sp

import robodyn as rd
from robodyn import _value_checks, codegen, dynamics, lagrange, models, rigid_motion
from robodyn import _meaning_checks

pytestmark = pytest.mark.usefixtures("no_text_evaluated")  # sympy's parser raises inside robodyn

RR = models.planar_rr()
RRR = models.spatial_rrr()
Q2 = np.array([0.3, -0.4])
Q3 = np.array([0.1, 0.2, 0.3])
H = rd.exp_se3([0.1, 0.2, 0.3, 1.0, 2.0, 3.0])
R = rd.exp_so3([0.3, -0.2, 0.1])
PATH = lagrange.straight_line([0.0, 0.0], [1.0, 0.5], np.linspace(0, 1, 5))
x = sp.Symbol("x")

# (function name, callable taking keyword arguments, good arguments, array arguments)
FUNCTIONS = [
    ("hat", lambda x: rd.hat(x), dict(x=np.array([1.0, 2.0, 3.0])), ["x"]),
    ("vee", lambda X: rd.vee(X), dict(X=rd.hat([1.0, 2.0, 3.0])), ["X"]),
    ("exp_so3", lambda w: rd.exp_so3(w), dict(w=np.array([0.1, 0.2, 0.3])), ["w"]),
    ("log_so3", lambda R: rd.log_so3(R), dict(R=R), ["R"]),
    ("exp_se3", lambda V: rd.exp_se3(V), dict(V=np.array([0.1, 0.2, 0.3, 1, 2, 3.0])), ["V"]),
    ("log_se3", lambda H: rd.log_se3(H), dict(H=H), ["H"]),
    ("rotation", lambda axis: rd.rotation(axis, 0.3), dict(axis=np.array([0.0, 0, 1])),
     ["axis"]),
    ("homogeneous", lambda R, p: rd.homogeneous(R, p), dict(R=R, p=np.array([1.0, 2, 3])),
     ["R", "p"]),
    ("inverse_homogeneous", lambda H: rd.inverse_homogeneous(H), dict(H=H), ["H"]),
    ("adjoint", lambda H: rd.adjoint(H), dict(H=H), ["H"]),
    ("ad", lambda V: rd.ad(V), dict(V=np.array([0.1, 0.2, 0.3, 1, 2, 3.0])), ["V"]),
    ("transform_twist", lambda H_ab, V_b: rd.transform_twist(H_ab, V_b),
     dict(H_ab=H, V_b=np.arange(6.0)), ["H_ab", "V_b"]),
    ("transform_wrench", lambda H_ab, W_b: rd.transform_wrench(H_ab, W_b),
     dict(H_ab=H, W_b=np.arange(6.0)), ["H_ab", "W_b"]),
    ("revolute_screw", lambda axis, point: rd.revolute_screw(axis, point),
     dict(axis=np.array([0.0, 0, 1]), point=np.array([1.0, 0, 0])), ["axis", "point"]),
    ("prismatic_screw", lambda direction: rd.prismatic_screw(direction),
     dict(direction=np.array([1.0, 0, 0])), ["direction"]),
    ("spatial_inertia", lambda inertia: rd.spatial_inertia(2.0, inertia),
     dict(inertia=np.array([0.1, 0.2, 0.25])), ["inertia"]),
    ("fk_space", lambda q: rd.fk_space(RR, q), dict(q=Q2), ["q"]),
    ("fk_body", lambda q: rd.fk_body(RR, q), dict(q=Q2), ["q"]),
    ("link_poses", lambda q: rd.link_poses(RR, q), dict(q=Q2), ["q"]),
    ("jacobian_space", lambda q: rd.jacobian_space(RR, q), dict(q=Q2), ["q"]),
    ("jacobian_body", lambda q: rd.jacobian_body(RR, q), dict(q=Q2), ["q"]),
    ("inverse_dynamics", lambda q, qd, qdd, gravity: rd.inverse_dynamics(RR, q, qd, qdd, gravity),
     dict(q=Q2, qd=Q2, qdd=Q2, gravity=np.array([0, -9.81, 0])), ["q", "qd", "qdd", "gravity"]),
    ("forward_dynamics", lambda q, qd, tau: rd.forward_dynamics(RR, q, qd, tau),
     dict(q=Q2, qd=Q2, tau=Q2), ["q", "qd", "tau"]),
    ("crba", lambda q: rd.crba(RR, q), dict(q=Q2), ["q"]),
    ("coriolis_matrix", lambda q, qd: dynamics.coriolis_matrix(RR, q, qd), dict(q=Q2, qd=Q2),
     ["q", "qd"]),
    ("gravity_torques", lambda q: rd.gravity_torques(RR, q), dict(q=Q2), ["q"]),
    ("mechanical_energy", lambda q, qd: rd.mechanical_energy(RR, q, qd), dict(q=Q2, qd=Q2),
     ["q", "qd"]),
    ("kinetic_energy_metric", lambda q: lagrange.kinetic_energy_metric(RR, q), dict(q=Q2),
     ["q"]),
    ("metric_inner_product", lambda q, v1, v2: lagrange.metric_inner_product(RR, q, v1, v2),
     dict(q=Q2, v1=Q2, v2=Q2), ["q", "v1", "v2"]),
    ("levi_civita", lambda q: lagrange.levi_civita(RR, q), dict(q=Q2), ["q"]),
    ("geodesic_acceleration", lambda q, qd: lagrange.geodesic_acceleration(RR, q, qd),
     dict(q=Q2, qd=Q2), ["q", "qd"]),
    ("covariant_acceleration",
     lambda q, qd, qdd: lagrange.covariant_acceleration(RR, q, qd, qdd),
     dict(q=Q2, qd=Q2, qdd=Q2), ["q", "qd", "qdd"]),
    ("gradient", lambda q, dV: lagrange.gradient(RR, q, dV), dict(q=Q2, dV=Q2), ["q", "dV"]),
    ("potential_gradient", lambda q: lagrange.potential_gradient(RR, q), dict(q=Q2), ["q"]),
    ("straight_line", lambda q_start, q_end: lagrange.straight_line(q_start, q_end, [0, 1]),
     dict(q_start=Q2, q_end=Q2), ["q_start", "q_end"]),
    ("geodesic", lambda q_start, q_end: lagrange.geodesic(RR, q_start, q_end, n_points=11),
     dict(q_start=Q2, q_end=Q2), ["q_start", "q_end"]),
    ("simulate", lambda q0, qd0, gravity: rd.simulate(RR, q0, qd0, 0.01, gravity=gravity),
     dict(q0=Q2, qd0=Q2, gravity=np.array([0, -9.81, 0])), ["q0", "qd0", "gravity"]),
]

_SPECS = {name: (f, good) for name, f, good, _ in FUNCTIONS}


def _corruptions(good):
    """(label, bad value, exception type) for an array argument whose good value is ``good``."""
    g = np.asarray(good, dtype=float)
    longer = np.concatenate([g.reshape(-1), [1.0]]) if g.ndim == 1 else np.ones((g.shape[0] + 1,
                                                                               g.shape[1]))
    nan, inf = g.copy(), g.copy()
    nan.flat[0], inf.flat[-1] = np.nan, np.inf
    obj = g.astype(object)
    obj.flat[0] = None
    ragged = [[1.0, 2.0], [3.0]] if g.ndim == 1 else [list(g[0]), list(g[1][:-1])]
    return [
        ("none", None, TypeError),
        ("text", "abc", TypeError),
        ("digit-strings", g.astype(str).tolist(), TypeError),
        ("complex", g + 1j, TypeError),
        ("complex-list", (g + 0j).tolist(), TypeError),
        ("masked", np.ma.masked_array(g, mask=np.ones(g.shape, bool)), TypeError),
        ("boolean", g > 0, TypeError),
        ("object-none", obj, TypeError),
        ("nan", nan, ValueError),
        ("inf", inf, ValueError),
        ("wrong-length", longer, ValueError),
        ("ragged", ragged, (TypeError, ValueError)),
        ("dict", {"a": 1}, TypeError),
    ]


OVERRIDES = {("rotation", "axis", "text"): ValueError}   # a string names an axis: 'x', 'y', 'z'


def _generic_cases():
    cases = []
    for name, f, good, args in FUNCTIONS:
        for arg in args:
            for label, bad, exc in _corruptions(good[arg]):
                exc = OVERRIDES.get((name, arg, label), exc)
                kwargs = dict(good, **{arg: bad})
                cases.append(pytest.param(lambda f=f, kw=kwargs: f(**kw), exc,
                                          rf"{re.escape(name)}\b.*\b{re.escape(arg)}\b",
                                          id=f"{name}-{arg}-{label}"))
    return cases


def _symbolic_where_numbers(name, f, good, arg):
    kwargs = dict(good, **{arg: [x] * len(good[arg])})
    return pytest.param(lambda: f(**kwargs), TypeError,
                        rf"{re.escape(name)}\b.*\b{re.escape(arg)}\b.*(numeric|numbers)",
                        id=f"{name}-{arg}-sympy")


NUMERIC_ONLY = ["inverse_dynamics", "forward_dynamics", "crba", "coriolis_matrix",
                "gravity_torques", "mechanical_energy", "straight_line", "geodesic"]

SYMBOLIC_CASES = [
    _symbolic_where_numbers(name, *_SPECS[name], arg)
    for name in NUMERIC_ONLY for arg in ("q", "q_start") if arg in _SPECS[name][1]
]


def case(call, exc, pattern, id):
    return pytest.param(call, exc, pattern, id=id)


SPECIFIC_CASES = [
    # --- values out of range
    case(lambda: rd.spatial_inertia(-1.0, [1, 1, 1]), ValueError, "spatial_inertia.*mass",
         "spatial_inertia-negative-mass"),
    case(lambda: rd.spatial_inertia(0.0, [1, 1, 1]), ValueError, "spatial_inertia.*mass",
         "spatial_inertia-zero-mass"),
    case(lambda: rd.spatial_inertia(sp.Integer(-2), [1, 1, 1]), ValueError,
         "spatial_inertia.*mass", "spatial_inertia-negative-sympy-mass"),
    case(lambda: rd.spatial_inertia(sp.Rational(-1, 2), [x, x, x]), ValueError,
         "spatial_inertia.*mass", "spatial_inertia-negative-sympy-mass-symbolic-inertia"),
    case(lambda: rd.spatial_inertia(1.0, [sp.Integer(-1), 1, 1]), ValueError,
         "spatial_inertia.*(moments|semi-definite)", "spatial_inertia-negative-sympy-moment"),
    case(lambda: rd.spatial_inertia(x, [-1, 1, 1]), ValueError,
         "spatial_inertia.*(moments|semi-definite)", "spatial_inertia-negative-moment-sym-mass"),
    case(lambda: rd.spatial_inertia(1.0, [1, 1, 3]), ValueError, "spatial_inertia.*triangle",
         "spatial_inertia-triangle"),
    case(lambda: rd.spatial_inertia(1.0 + 1j, [1, 1, 1]), TypeError, "spatial_inertia: mass",
         "spatial_inertia-complex-mass"),
    case(lambda: rd.spatial_inertia(sp.I, [1, 1, 1]), TypeError, "spatial_inertia: mass",
         "spatial_inertia-sympy-I-mass"),
    case(lambda: rd.spatial_inertia(sp.zoo, [1, 1, 1]), ValueError, "spatial_inertia: mass",
         "spatial_inertia-zoo-mass"),
    case(lambda: rd.spatial_inertia("1", [1, 1, 1]), TypeError, "spatial_inertia: mass",
         "spatial_inertia-string-mass"),
    case(lambda: rd.spatial_inertia(1.0, [[1, 0, 0], [1, 1, 0], [0, 0, 1]]), ValueError,
         "spatial_inertia.*symmetric", "spatial_inertia-asymmetric"),
    case(lambda: models.rod_inertia(1.0, -1.0), ValueError, "rod_inertia: length",
         "rod_inertia-negative-length"),
    case(lambda: models.rod_inertia(1.0, 1.0, -0.1), ValueError, "rod_inertia: radius",
         "rod_inertia-negative-radius"),
    case(lambda: models.rod_inertia(1.0, 1.0 + 2j), TypeError, "rod_inertia: length",
         "rod_inertia-complex-length"),
    case(lambda: models.rod_inertia(np.nan, 1.0), ValueError, "rod_inertia: mass",
         "rod_inertia-nan-mass"),
    case(lambda: models.planar_rr(m1=-1.0), ValueError, "mass", "planar_rr-negative-mass"),
    case(lambda: models.planar_rr(l1="1"), TypeError, "planar_rr: l1",
         "planar_rr-string-length"),
    case(lambda: models.planar_rr(l2=-1.0), ValueError, "planar_rr: l2",
         "planar_rr-negative-length"),
    case(lambda: models.planar_rr(m1=sp.Integer(-1)), ValueError, "planar_rr: m1",
         "planar_rr-negative-sympy-mass"),
    case(lambda: models.planar_rp(m2=0.0), ValueError, "mass", "planar_rp-zero-mass"),
    case(lambda: models.spatial_rrr(m3=-3.0), ValueError, "mass", "spatial_rrr-negative-mass"),
    case(lambda: models.spatial_rrr(a2=np.inf), ValueError, "finite", "spatial_rrr-inf-length"),
    case(lambda: models.planar_chain(0), ValueError, "planar_chain: n", "planar_chain-zero"),
    case(lambda: models.planar_chain(10**9), ValueError, "planar_chain: n",
         "planar_chain-huge"),
    case(lambda: models.planar_chain(3, length=-1), ValueError, "planar_chain: length",
         "planar_chain-negative-length"),
    case(lambda: models.planar_chain(3, mass=0), ValueError, "planar_chain: mass",
         "planar_chain-zero-mass"),
    case(lambda: models.planar_chain(2.5), TypeError, "planar_chain: n", "planar_chain-float"),
    case(lambda: models.random_chain(-3), ValueError, "random_chain: n", "random_chain-neg"),
    case(lambda: models.random_chain(3, prismatic=2.0), ValueError, "random_chain: prismatic",
         "random_chain-probability"),
    case(lambda: models.random_chain(3, helical=np.nan), ValueError, "random_chain: helical",
         "random_chain-nan-probability"),
    case(lambda: models.random_chain(3, rng=4.2), TypeError, "random_chain: rng",
         "random_chain-int-rng"),
    # --- tolerances
    case(lambda: rd.log_so3(R, tol=-1e-6), ValueError, "log_so3: tol", "log_so3-negative-tol"),
    case(lambda: rd.log_so3(R, tol=0), ValueError, "log_so3: tol", "log_so3-zero-tol"),
    case(lambda: rd.log_so3(R, tol=np.nan), ValueError, "log_so3: tol", "log_so3-nan-tol"),
    case(lambda: rd.log_so3(R, tol=10.0), ValueError, "log_so3: tol", "log_so3-huge-tol"),
    case(lambda: rd.log_so3(R, tol="1e-6"), TypeError, "log_so3: tol", "log_so3-string-tol"),
    case(lambda: rd.log_se3(H, tol=-1.0), ValueError, "log_se3: tol", "log_se3-negative-tol"),
    case(lambda: rd.log_se3(H, tol=x), TypeError, "log_se3: tol", "log_se3-symbolic-tol"),
    case(lambda: rd.is_rotation(R, tol=-1), ValueError, "is_rotation: tol",
         "is_rotation-negative-tol"),
    case(lambda: rd.is_rotation("abc"), TypeError, "is_rotation: R", "is_rotation-string"),
    case(lambda: rd.forward_dynamics(RR, Q2, Q2, Q2, cond_warn=-1), ValueError,
         "forward_dynamics: cond_warn", "forward_dynamics-negative-cond_warn"),
    case(lambda: rd.forward_dynamics(RR, Q2, Q2, Q2, cond_warn="big"), TypeError,
         "forward_dynamics: cond_warn", "forward_dynamics-string-cond_warn"),
    case(lambda: rd.forward_dynamics(RR, Q2, Q2, Q2, method="lu"), ValueError,
         "forward_dynamics: method", "forward_dynamics-method"),
    case(lambda: lagrange.geodesic(RR, Q2, Q2 + 0.1, tol=-1), ValueError, "geodesic: tol",
         "geodesic-negative-tol"),
    case(lambda: lagrange.geodesic(RR, Q2, Q2 + 0.1, rtol=0), ValueError, "geodesic: rtol",
         "geodesic-zero-rtol"),
    case(lambda: lagrange.geodesic(RR, Q2, Q2 + 0.1, atol=np.inf), ValueError,
         "geodesic: atol", "geodesic-inf-atol"),
    case(lambda: rd.simulate(RR, Q2, Q2, 1.0, rtol=-1e-9), ValueError, "simulate: rtol",
         "simulate-negative-rtol"),
    case(lambda: rd.simulate(RR, Q2, Q2, 1.0, atol=2.0), ValueError, "simulate: atol",
         "simulate-huge-atol"),
    # --- sizes
    case(lambda: lagrange.geodesic(RR, Q2, Q2 + 0.1, n_points=10**9), ValueError,
         "geodesic: n_points.*GiB", "geodesic-huge-n_points"),
    case(lambda: lagrange.geodesic(RR, Q2, Q2 + 0.1, n_points=2), ValueError,
         "geodesic: n_points", "geodesic-two-points"),
    case(lambda: lagrange.geodesic(RR, Q2, Q2 + 0.1, n_points=5.5), TypeError,
         "geodesic: n_points", "geodesic-float-points"),
    case(lambda: lagrange.geodesic(RR, Q2, Q2 + 0.1, n_points=True), TypeError,
         "geodesic: n_points", "geodesic-bool-points"),
    case(lambda: lagrange.geodesic(RR, Q2, Q2 + 0.1, max_iterations=0), ValueError,
         "geodesic: max_iterations", "geodesic-zero-iterations"),
    case(lambda: lagrange.geodesic(RR, Q2, Q2 + 0.1, max_iterations=10**12), ValueError,
         "geodesic: max_iterations", "geodesic-huge-iterations"),
    case(lambda: lagrange.geodesic(RR, Q2, Q2 + 0.1, method="newton"), ValueError,
         "geodesic: method", "geodesic-method"),
    case(lambda: lagrange.geodesic(RR, Q2, Q2 + 0.1, method=1), TypeError,
         "geodesic: method", "geodesic-method-type"),
    case(lambda: lagrange.geodesic(RR, Q2, Q2 + 0.1, strict="yes"), TypeError,
         "geodesic: strict", "geodesic-strict-type"),
    case(lambda: lagrange.geodesic(RR, Q2, Q2 + 0.1, duration=-1.0), ValueError,
         "geodesic: duration", "geodesic-negative-duration"),
    case(lambda: lagrange.geodesic(RR, Q2, Q2 + 0.1, duration=1j), TypeError,
         "geodesic: duration", "geodesic-complex-duration"),
    case(lambda: rd.simulate(RR, Q2, Q2, 1.0, method="rk4", dt=1e-15), ValueError,
         "simulate: dt.*steps", "simulate-rk4-tiny-dt"),
    case(lambda: rd.simulate(RR, Q2, Q2, 1.0, method="rk4", dt=1e-7), ValueError,
         "simulate: dt.*steps", "simulate-rk4-ten-million-steps"),
    case(lambda: rd.simulate(RR, Q2, Q2, 1.0, method="semi_implicit_euler", dt=1e-9),
         ValueError, "simulate: dt.*steps", "simulate-euler-tiny-dt"),
    case(lambda: rd.simulate(RR, Q2, Q2, 1.0, method="rk4", dt=-0.1), ValueError,
         "simulate: dt", "simulate-negative-dt"),
    case(lambda: rd.simulate(RR, Q2, Q2, 1.0, method="rk4", dt="0.1"), TypeError,
         "simulate: dt", "simulate-string-dt"),
    case(lambda: rd.simulate(RR, Q2, Q2, 1.0, method="rk4"), ValueError, "simulate: dt",
         "simulate-rk4-without-dt"),
    case(lambda: rd.simulate(RR, Q2, Q2, 1.0, max_steps=0), ValueError,
         "simulate: max_steps", "simulate-zero-max_steps"),
    case(lambda: rd.simulate(RR, Q2, Q2, 1.0, max_steps=1.5), TypeError,
         "simulate: max_steps", "simulate-float-max_steps"),
    case(lambda: rd.simulate(RR, Q2, Q2, 10.0, max_steps=5), ValueError,
         "simulate: max_steps.*t = ", "simulate-adaptive-hits-max_steps"),
    case(lambda: rd.simulate(RR, Q2, Q2, -1.0), ValueError, "simulate: t_final",
         "simulate-negative-t_final"),
    case(lambda: rd.simulate(RR, Q2, Q2, np.inf), ValueError, "simulate: t_final",
         "simulate-inf-t_final"),
    case(lambda: rd.simulate(RR, Q2, Q2, 1.0, method="euler"), ValueError,
         "simulate: method", "simulate-method"),
    case(lambda: rd.simulate(RR, Q2, Q2, 1.0, tau=[1.0 + 1j, 0]), TypeError, "simulate: tau",
         "simulate-complex-tau"),
    case(lambda: rd.simulate(RR, Q2, Q2, 1.0, tau=lambda t, q, qd: [1.0]), ValueError,
         "simulate: tau", "simulate-tau-callable-shape"),
    case(lambda: rd.simulate(RR, Q2, Q2, 1.0, tau=lambda t, q, qd: ["a", "b"]), TypeError,
         "simulate: tau", "simulate-tau-callable-strings"),
    case(lambda: rd.simulate(RR, Q2, Q2, 1.0, t_eval=[0.5, 2.0]), ValueError,
         "simulate: t_eval", "simulate-t_eval-range"),
    case(lambda: rd.simulate(RR, Q2, Q2, 1.0, t_eval=["a"]), TypeError, "simulate: t_eval",
         "simulate-t_eval-strings"),
    case(lambda: rd.simulate(RR, Q2, Q2, 1.0, on_step=3), TypeError, "simulate: on_step",
         "simulate-on_step"),
    case(lambda: rd.simulate("RR", Q2, Q2, 1.0), TypeError, "simulate.*SerialChain",
         "simulate-not-a-chain"),
    case(lambda: lagrange.perturbed_path(PATH, 0.1, mode=0), ValueError,
         "perturbed_path: mode", "perturbed_path-zero-mode"),
    case(lambda: lagrange.perturbed_path(PATH, 0.1, mode=1.5), TypeError,
         "perturbed_path: mode", "perturbed_path-float-mode"),
    case(lambda: lagrange.perturbed_path(PATH, [1j, 0]), TypeError,
         "perturbed_path: amplitude", "perturbed_path-complex-amplitude"),
    case(lambda: lagrange.perturbed_path(PATH, [0.1, 0.2, 0.3]), ValueError,
         "perturbed_path: amplitude", "perturbed_path-amplitude-length"),
    case(lambda: lagrange.perturbed_path("path", 0.1), TypeError, "perturbed_path: path",
         "perturbed_path-not-a-path"),
    case(lambda: lagrange.straight_line(Q2, Q2, [0.0]), ValueError, "straight_line: t",
         "straight_line-one-time"),
    case(lambda: lagrange.straight_line(Q2, Q2, [1.0, 0.0]), ValueError, "straight_line: t",
         "straight_line-decreasing-times"),
    case(lambda: lagrange.energy_integral(RR, PATH, rule="midpoint"), ValueError,
         "energy_integral: rule", "energy_integral-rule"),
    case(lambda: lagrange.energy_integral(RR, [0, 1], [[0, 0]], [[0, 0]]), ValueError,
         "energy_integral: q", "energy_integral-samples"),
    case(lambda: lagrange.energy_integral(RR, [0, 1], [[0, 0], [1j, 0]], [[0, 0], [0, 0]]),
         TypeError, "energy_integral: q", "energy_integral-complex-q"),
    case(lambda: lagrange.levi_civita(sp.Matrix([[1, 0], [0, 1]]), [x]), ValueError,
         "levi_civita", "levi_civita-M-q-mismatch"),
    case(lambda: lagrange.levi_civita(sp.Matrix([[1, 1], [1, 1]]), [x, sp.Symbol("y")]),
         ValueError, "levi_civita: M.*invertible", "levi_civita-singular-metric"),
    case(lambda: lagrange.levi_civita(sp.Matrix([[1, x], [0, 1]]), [x, sp.Symbol("y")]),
         ValueError, "levi_civita: M.*symmetric", "levi_civita-asymmetric-metric"),
    case(lambda: lagrange.levi_civita(sp.Matrix([[1, sp.I], [sp.I, 1]]), [x, sp.Symbol("y")]),
         TypeError, "levi_civita: M", "levi_civita-complex-metric"),
    case(lambda: lagrange.potential_gradient(RR, Q2, gravity=[0, 1j, 0]), TypeError,
         "potential_gradient: gravity", "potential_gradient-complex-gravity"),
    case(lambda: lagrange.potential_gradient(RR, Q2, gravity=[0, 1]), ValueError,
         "potential_gradient: gravity", "potential_gradient-gravity-length"),
    # --- structure
    case(lambda: rd.vee(np.eye(3)), ValueError, "vee: X.*skew", "vee-not-skew"),
    case(lambda: rd.vee(sp.Matrix([[0, -x, 0], [2 * x, 0, 0], [0, 0, 0]])), ValueError,
         "vee: X.*skew", "vee-sympy-not-skew"),
    case(lambda: rd.vee(sp.eye(3)), ValueError, "vee: X.*skew", "vee-sympy-identity"),
    case(lambda: rd.vee(sp.ones(4, 4)), ValueError, "vee: X", "vee-sympy-bad-last-row"),
    case(lambda: rd.vee(np.ones((2, 2))), ValueError, "vee", "vee-2x2"),
    case(lambda: rd.exp_so3([1.0, 1.0, 0.0], 0.5), ValueError, "exp_so3: w.*unit",
         "exp_so3-non-unit-axis"),
    case(lambda: rd.exp_so3([1, 1, 0], x), ValueError, "exp_so3: w.*norm",
         "exp_so3-non-unit-axis-symbolic-angle"),
    case(lambda: rd.exp_so3(sp.Matrix([x, x, 0]), sp.Integer(1)), None, None,
         "exp_so3-symbolic-axis-passes"),
    case(lambda: rd.exp_so3([0, 0, 1], 1j), TypeError, "exp_so3: theta",
         "exp_so3-complex-angle"),
    case(lambda: rd.exp_so3([0, 0, 1], sp.I), TypeError, "exp_so3: theta",
         "exp_so3-sympy-I-angle"),
    case(lambda: rd.exp_so3([0, 0, 1], sp.oo), ValueError, "exp_so3: theta",
         "exp_so3-sympy-oo-angle"),
    case(lambda: rd.exp_so3([0, 0, 1], [0.1, 0.2]), TypeError, "exp_so3: theta",
         "exp_so3-vector-angle"),
    case(lambda: rd.exp_se3([1, 1, 0, 0, 0, 0], x), ValueError, "exp_se3: V",
         "exp_se3-non-unit-screw-symbolic-angle"),
    case(lambda: rd.exp_se3([0, 0, 0, 2, 0, 0], 0.3), ValueError, "exp_se3: V",
         "exp_se3-non-unit-prismatic"),
    case(lambda: rd.exp_se3([0, 0, 1, 0, 0, 0], "1"), TypeError, "exp_se3: theta",
         "exp_se3-string-angle"),
    case(lambda: rd.exp_se3([sp.I, 0, 0, 0, 0, 0]), TypeError, "exp_se3: V",
         "exp_se3-sympy-I"),
    case(lambda: rd.hat([1, 2, sp.zoo]), ValueError, "hat: x", "hat-sympy-zoo"),
    case(lambda: rd.hat([1, 2, sp.I]), TypeError, "hat: x", "hat-sympy-I"),
    case(lambda: rd.hat([1, 2]), ValueError, "hat", "hat-length-2"),
    case(lambda: rd.log_so3(2 * np.eye(3)), ValueError, "log_so3: R.*rotation",
         "log_so3-scaled-identity"),
    case(lambda: rd.log_so3(np.diag([1.0, 1.0, -1.0])), ValueError, "log_so3: R.*rotation",
         "log_so3-reflection"),
    case(lambda: rd.log_so3(sp.diag(1, 1, -1)), ValueError, "log_so3: R.*rotation",
         "log_so3-sympy-reflection"),
    case(lambda: rd.log_so3(2 * sp.eye(3)), ValueError, "log_so3: R.*rotation",
         "log_so3-sympy-scaled"),
    case(lambda: rd.log_se3(np.ones((4, 4))), ValueError, "log_se3: H", "log_se3-ones"),
    case(lambda: rd.homogeneous(2 * np.eye(3), [0, 0, 0]), ValueError, "homogeneous: R",
         "homogeneous-not-rotation"),
    case(lambda: rd.homogeneous(sp.diag(2, 1, 1), [x, 0, 0]), ValueError, "homogeneous: R",
         "homogeneous-sympy-not-rotation"),
    case(lambda: rd.inverse_homogeneous(np.diag([1.0, 1, 1, 2])), ValueError,
         "inverse_homogeneous: H", "inverse_homogeneous-last-row"),
    case(lambda: rd.adjoint(sp.diag(1, 1, -1, 1)), ValueError, "adjoint: H",
         "adjoint-sympy-reflection"),
    case(lambda: rd.rotation("w", 0.1), ValueError, "rotation: .*axis", "rotation-axis-name"),
    case(lambda: rd.rotation([0, 0, 0], 0.1), ValueError, "rotation: .*axis",
         "rotation-zero-axis"),
    case(lambda: rd.rotation("x", "0.1"), TypeError, "rotation|exp_so3: theta",
         "rotation-string-angle"),
    case(lambda: rd.revolute_screw([0, 0, 0], [0, 0, 0]), ValueError, "revolute_screw.*axis",
         "revolute_screw-zero-axis"),
    case(lambda: rd.revolute_screw([0, 0, 1], [0, 0, 0], pitch=1j), TypeError,
         "revolute_screw: pitch", "revolute_screw-complex-pitch"),
    case(lambda: rd.revolute_screw([0, 0, 1], [0, 0, 0], pitch=np.nan), ValueError,
         "revolute_screw: pitch", "revolute_screw-nan-pitch"),
    case(lambda: rd.prismatic_screw([0, 0, 0]), ValueError, "prismatic_screw.*direction",
         "prismatic_screw-zero"),
    case(lambda: rd.SerialChain.from_screws([[0], [0], [2], [0], [0], [0]], np.eye(4)),
         ValueError, r"from_screws: screws \(joint 0\)", "from_screws-non-unit"),
    case(lambda: rd.SerialChain.from_screws(np.zeros((6, 1)), np.eye(4)), ValueError,
         r"from_screws: screws \(joint 0\)", "from_screws-zero-screw"),
    case(lambda: rd.SerialChain.from_screws(np.zeros((1, 6)), np.eye(4)), ValueError,
         "from_screws: screws.*transpose", "from_screws-transposed"),
    case(lambda: rd.SerialChain.from_screws([[0], [0], [1j], [0], [0], [0]], np.eye(4)),
         TypeError, "from_screws: screws", "from_screws-complex"),
    case(lambda: rd.SerialChain.from_screws(np.ma.masked_array(np.eye(6)[:, :1]), np.eye(4)),
         TypeError, "from_screws: screws", "from_screws-masked"),
    case(lambda: rd.SerialChain.from_screws([[0], [0], [1], [0], [0], [0]], 2 * np.eye(4)),
         ValueError, "from_screws: home", "from_screws-bad-home"),
    case(lambda: rd.SerialChain.from_screws([[0], [0], [1], [0], [0], [0]], np.eye(4),
                                            [np.eye(4)], [np.diag([1, 1, 1, -1, -1, -1.0])]),
         ValueError, r"link_inertias\[0\].*mass", "from_screws-negative-mass"),
    case(lambda: rd.SerialChain.from_screws([[0], [0], [1], [0], [0], [0]], np.eye(4),
                                            [np.eye(4)], [sp.diag(1, 1, 1, -1, -1, -1)]),
         ValueError, r"link_inertias\[0\].*mass", "from_screws-negative-sympy-mass"),
    case(lambda: rd.SerialChain.from_screws([[0], [0], [1], [0], [0], [0]], np.eye(4),
                                            [np.eye(4)], [sp.diag(1, 1, 1, x, x, x)]),
         None, None, "from_screws-symbolic-mass-passes"),
    # a negative moment is wrong whatever the symbolic mass (issue 37: no longer silent)
    case(lambda: rd.SerialChain.from_screws([[0], [0], [1], [0], [0], [0]], np.eye(4),
                                            [np.eye(4)], [sp.diag(-1, 1, 1, x, x, x)]),
         ValueError, r"link_inertias\[0\].*minor of rows 0 = -1 \(negative for every value",
         "from_screws-negative-moment-symbolic-mass"),
    case(lambda: rd.SerialChain.from_screws([[0], [0], [1], [0], [0], [0]], np.eye(4),
                                            [np.eye(4)], [sp.diag(-1, 1, 1, 1, 1, 1)]),
         ValueError, r"link_inertias\[0\]", "from_screws-negative-sympy-moment"),
    case(lambda: rd.SerialChain.from_screws([[0], [0], [1], [0], [0], [0]], np.eye(4),
                                            [np.eye(4)] * 2, None),
         ValueError, "link_homes", "from_screws-link_homes-count"),
    case(lambda: rd.SerialChain.from_screws([[0], [0], [1], [0], [0], [0]], np.eye(4),
                                            "homes", None),
         TypeError, "link_homes", "from_screws-link_homes-type"),
    case(lambda: rd.SerialChain.from_joints([("spherical", [0, 0, 1])], np.eye(4)), ValueError,
         "from_joints: joint 0", "from_joints-kind"),
    case(lambda: rd.SerialChain.from_joints([], np.eye(4)), TypeError, "from_joints: joints",
         "from_joints-empty"),
    case(lambda: rd.SerialChain.from_joints([("revolute", [0, 0, 1])], np.eye(4)), ValueError,
         "from_joints: joint 0", "from_joints-missing-point"),
    case(lambda: rd.SerialChain.from_joints([("revolute", [0, 0, 1j], [0, 0, 0])], np.eye(4)),
         TypeError, "from_joints: joints.*real numbers", "from_joints-complex-axis"),
    case(lambda: rd.jacobian_space(RR, Q2, link=5), ValueError, "jacobian_space: link",
         "jacobian_space-link-range"),
    case(lambda: rd.jacobian_body(RR, Q2, link=1.0), TypeError, "jacobian_body: link",
         "jacobian_body-link-float"),
    case(lambda: rd.fk_space("RR", Q2), TypeError, "fk_space.*SerialChain",
         "fk_space-not-a-chain"),
    case(lambda: rd.crba(RR, np.zeros((2, 2, 2))), ValueError, "crba: q", "crba-3d-batch"),
    case(lambda: rd.crba(RR, np.zeros((0, 2))), ValueError, "crba: q", "crba-empty-batch"),
    case(lambda: rd.inverse_dynamics(RR, np.zeros((3, 2)), np.zeros((2, 2)), np.zeros((3, 2))),
         ValueError, "inverse_dynamics: qd", "inverse_dynamics-batch-mismatch"),
    case(lambda: rd.inverse_dynamics(RR, Q2, Q2, Q2, wrench_ee=[1, 2, 3]), ValueError,
         "inverse_dynamics: wrench_ee", "inverse_dynamics-wrench-length"),
    case(lambda: rd.inverse_dynamics(RR, Q2, Q2, Q2, wrench_ee=np.zeros(6) + 1j), TypeError,
         "inverse_dynamics: wrench_ee", "inverse_dynamics-complex-wrench"),
    case(lambda: rd.inverse_dynamics(RR, Q2, Q2, Q2, wrench_ee=np.ma.masked_array(np.zeros(6))),
         TypeError, "inverse_dynamics: wrench_ee", "inverse_dynamics-masked-wrench"),
    case(lambda: rd.forward_dynamics(RR, Q2, Q2, Q2, wrench_ee=["a"] * 6), TypeError,
         "forward_dynamics: wrench_ee", "forward_dynamics-string-wrench"),
    case(lambda: rd.crba(models.planar_rr(x, 1, 1, 1), Q2), TypeError, "crba.*symbolic",
         "crba-symbolic-chain"),
    case(lambda: rd.crba(rd.SerialChain.from_screws(np.eye(6)[:, 2:3], np.eye(4)), [0.0]),
         ValueError, "crba.*link_inertias", "crba-chain-without-inertias"),
    # --- symbolic kinematics of huge chains
    case(lambda: rd.fk_space(models.planar_chain(50), sp.symbols("q1:51")), ValueError,
         "fk_space: chain.*at most", "fk_space-symbolic-50-joints"),
    case(lambda: rd.jacobian_space(models.planar_chain(41), sp.symbols("q1:42")), ValueError,
         "jacobian_space: chain.*at most", "jacobian_space-symbolic-41-joints"),
    # --- the shared checks themselves
    case(lambda: _meaning_checks.spd([[1.0, 2.0], [2.0, 1.0]], "f: M"), ValueError, "f: M",
         "checks-spd-indefinite"),
    case(lambda: _meaning_checks.spd([[1.0, 2.0], [0.0, 1.0]], "f: M"), ValueError, "f: M.*symmetric",
         "checks-spd-asymmetric"),
    case(lambda: _meaning_checks.spd(sp.Matrix([[1, 2], [2, 1]]), "f: M"), ValueError, "f: M",
         "checks-spd-sympy-indefinite"),
    case(lambda: _value_checks.size(-1, "f: n"), ValueError, "f: n", "checks-size-negative"),
    case(lambda: _value_checks.size(10**12, "f: n", item_bytes=8), ValueError, "f: n.*GiB",
         "checks-size-memory"),
    case(lambda: _value_checks.choice(None, "f: rule", ("a",)), TypeError, "f: rule",
         "checks-choice-none"),
    case(lambda: _value_checks.flag(1, "f: strict"), TypeError, "f: strict", "checks-flag-int"),
    case(lambda: _value_checks.tolerance(2.0, "f: tol"), ValueError, "f: tol", "checks-tol-upper"),
    case(lambda: _value_checks.scalar(np.array([1.0, 2.0]), "f: x"), TypeError, "f: x",
         "checks-scalar-array"),
    case(lambda: _value_checks.real_array(np.array(["a"]), "f: x"), TypeError, "f: x",
         "checks-real-array-strings"),
    case(lambda: _value_checks.real_array(np.zeros(2, dtype="datetime64[s]"), "f: x"), TypeError,
         "f: x", "checks-real-array-datetime"),
    case(lambda: _value_checks.batch(np.zeros((2, 3)), 2, "f: q"), ValueError, "f: q",
         "checks-batch-shape"),
    case(lambda: _value_checks.symbol_list([x, 1], "f: q"), TypeError, "f: q",
         "checks-symbol-list-number"),
    case(lambda: _value_checks.to_sympy([sp.zoo], "f: v"), ValueError, "f: v", "checks-to-sympy-zoo"),
    case(lambda: rd.crba(RR, [np.ma.masked_array(Q2, mask=[0, 1])]), TypeError, "crba: q",
         "crba-list-of-masked-arrays"),
    case(lambda: _value_checks.vector([np.ma.masked_array([1.0]), 2.0], 2, "f: v"), TypeError,
         "f: v", "checks-vector-list-with-masked"),
]


def _codegen_cases():
    q1, q2, u1, u2 = sp.symbols("q1 q2 u1 u2")
    Z2, z2 = sp.zeros(2, 2), sp.zeros(2, 1)
    M = sp.eye(2)
    ce = codegen.compile_equations
    return [
        case(lambda: ce(M, Z2, z2, [q1, q1], [u1, u2]), ValueError, "compile_equations: q",
             "compile_equations-duplicate-q"),
        case(lambda: ce(M, Z2, z2, [q1, q2], [u1, u1]), ValueError, "compile_equations: qd",
             "compile_equations-duplicate-qd"),
        case(lambda: ce(M, Z2, z2, [q1, q2], [q2, u1]), ValueError, "compile_equations: qd",
             "compile_equations-shared-symbol"),
        case(lambda: ce(M, Z2, z2, [q1, 2], [u1, u2]), TypeError, "compile_equations: q",
             "compile_equations-number-as-symbol"),
        case(lambda: ce(M + sp.I * sp.eye(2), Z2, z2, [q1, q2], [u1, u2]), TypeError,
             "compile_equations: M.*real", "compile_equations-complex-constant"),
        case(lambda: ce(M, Z2, sp.Matrix([sp.oo, 0]), [q1, q2], [u1, u2]), ValueError,
             "compile_equations: G.*real finite", "compile_equations-infinite-constant"),
        case(lambda: ce(M, Z2, sp.Matrix([sp.zoo * q1, 0]), [q1, q2], [u1, u2]), ValueError,
             "compile_equations: G", "compile_equations-zoo"),
        case(lambda: ce(M, Z2 + sp.Matrix([[sp.nan, 0], [0, 0]]), z2, [q1, q2], [u1, u2]),
             ValueError, "compile_equations: C", "compile_equations-nan"),
        case(lambda: ce(M, Z2, sp.Matrix([sp.Function("f")(q1), 0]), [q1, q2], [u1, u2]),
             ValueError, "compile_equations: G.*functions", "compile_equations-unknown-function"),
        case(lambda: ce(M, Z2, z2, [q1, q2], [u1]), ValueError, "compile_equations",
             "compile_equations-velocity-count"),
        case(lambda: ce("M", Z2, z2, [q1, q2], [u1, u2]), (TypeError, ValueError),
             "compile_equations: M", "compile_equations-string-M"),
        case(lambda: codegen.compiled_module("/* MODNAME */", "../escape"), ValueError,
             "compiled_module: prefix", "compiled_module-dotdot-prefix"),
        case(lambda: codegen.compiled_module("/* MODNAME */", "a/b"), ValueError,
             "compiled_module: prefix", "compiled_module-slash-prefix"),
        case(lambda: codegen.compiled_module("/* MODNAME */", ""), ValueError,
             "compiled_module: prefix", "compiled_module-empty-prefix"),
        case(lambda: codegen.compiled_module("/* MODNAME */", "x" * 65), ValueError,
             "compiled_module: prefix", "compiled_module-long-prefix"),
        case(lambda: codegen.compiled_module("/* MODNAME */", 3), ValueError,
             "compiled_module: prefix", "compiled_module-int-prefix"),
        case(lambda: codegen.compiled_module("int x;", "ok"), ValueError,
             "compiled_module: source", "compiled_module-no-MODNAME"),
        case(lambda: codegen.compiled_module(b"MODNAME", "ok"), TypeError,
             "compiled_module: source", "compiled_module-bytes-source"),
    ]


def _lagrange_cases():
    """robodyn.lagrange belongs to the symbolic-speed branch; its boundary uses the same checks."""
    from robodyn import lagrange as lg
    a, b, c = sp.symbols("a b c")
    return [
        case(lambda: lg.mass_matrix(RR, Q2 + 1j), TypeError, "mass_matrix: q",
             "lagrange-mass_matrix-complex"),
        case(lambda: lg.mass_matrix(RR, ["1", "2"]), TypeError, "mass_matrix: q",
             "lagrange-mass_matrix-strings"),
        case(lambda: lg.mass_matrix(RR, np.ma.masked_array(Q2)), TypeError, "mass_matrix: q",
             "lagrange-mass_matrix-masked"),
        case(lambda: lg.mass_matrix(RR, [1, 2, 3]), ValueError, "mass_matrix: q",
             "lagrange-mass_matrix-length"),
        case(lambda: lg.kinetic_energy(RR, Q2, [np.nan, 0]), ValueError, "kinetic_energy: qd",
             "lagrange-kinetic_energy-nan"),
        case(lambda: lg.potential_energy(RR, Q2, gravity=[0, 1j, 0]), TypeError,
             "potential_energy: gravity", "lagrange-potential_energy-complex-gravity"),
        case(lambda: lg.gravity_vector(RR, ["a", "b"]), TypeError, "gravity_vector: q",
             "lagrange-gravity_vector-strings"),
        case(lambda: lg.christoffel_symbols(sp.eye(1), [x], kind=3), ValueError,
             "christoffel_symbols: kind", "lagrange-christoffel-kind"),
        case(lambda: lg.christoffel_symbols("M", [x]), TypeError, "christoffel_symbols: M",
             "lagrange-christoffel-M"),
        case(lambda: lg.coriolis_matrix(sp.eye(1), [x], [1, 2]), ValueError,
             "coriolis_matrix: qd", "lagrange-coriolis-qd"),
        case(lambda: lg.euler_lagrange("L", [x], [x]), TypeError, "euler_lagrange: L",
             "lagrange-euler_lagrange-L"),
        case(lambda: lg.equations_of_motion(RR, q=[x, x]), ValueError,
             "equations_of_motion: q", "lagrange-eom-duplicate-q"),
        case(lambda: lg.equations_of_motion(RR, gravity=[0, 1j, 0]), TypeError,
             "equations_of_motion: gravity", "lagrange-eom-complex-gravity"),
        case(lambda: lg.generalized_forces(RR, Q2, [1, 2, 3]), ValueError,
             "generalized_forces: wrenches", "lagrange-generalized_forces-wrenches"),
        case(lambda: lg.equations_of_motion(RR, q=[a, b], qd=[b, c]), ValueError,
             "equations_of_motion: qd", "lagrange-eom-shared-symbol"),
        case(lambda: lg.christoffel_symbols(sp.Matrix([[1, sp.cos(b)], [sp.cos(b), sp.cos(b)**2]]),
                                            [a, b], kind=2), ValueError,
             "christoffel_symbols: M", "lagrange-christoffel-singular-M"),
        case(lambda: lg.equations_of_motion(models.planar_rr(*sp.symbols("l1 l2 m1 m2")))
             .numeric({"l1": 1, "l2": 1, "m1": -1, "m2": -1}, backend="lambdify")
             .forward_dynamics([0.0, 0.0], [0.0, 0.0], [0.0, 0.0]), np.linalg.LinAlgError,
             "forward_dynamics: M", "lagrange-lambdify-indefinite-M"),
    ]


ALL_CASES = (_generic_cases() + SYMBOLIC_CASES + SPECIFIC_CASES + _codegen_cases()
             + _lagrange_cases())


def test_table_size():
    """The issue asks for at least 250 cases."""
    assert len(ALL_CASES) >= 250, len(ALL_CASES)


@pytest.mark.parametrize("call, exc, pattern", ALL_CASES)
def test_bad_input_is_refused_clearly(call, exc, pattern):
    if exc is None:                     # a symbolic case that cannot be checked must pass
        call()
        return
    with pytest.raises(exc) as info:
        call()
    msg = str(info.value)
    assert re.search(pattern, msg, flags=re.S), msg
    assert "expected" in msg or "SerialChain" in msg or "no " in msg, msg


# --------------------------------------------------------------------------
# unusual but valid input: the same numbers as plain float64
# --------------------------------------------------------------------------

def _variants(a):
    """Unusual layouts of the float64 array ``a`` holding the same numbers."""
    ro = a.copy()
    ro.setflags(write=False)
    wide = np.zeros(a.shape + (2,))
    wide[..., 0] = a
    out = [("big-endian", a.astype(">f8")), ("fortran", np.asfortranarray(a)),
           ("read-only", ro), ("strided", wide[..., 0]), ("list", a.tolist()),
           ("float32-exact", a.astype(np.float32)) if np.all(a == a.astype(np.float32))
           else ("copy", a.copy())]
    if np.all(a == np.round(a)):
        out.append(("integer", a.astype(np.int64)))
        out.append(("big-endian-integer", a.astype(">i4")))
    return out


Qb = np.array([[0.5, -1.0], [2.0, 0.25], [-0.75, 1.5]])     # exact in float32 too
Qi = np.array([1.0, -2.0])

NUMERIC_FUNCTIONS = [
    ("crba", lambda q: rd.crba(RR, q), [Qb, Qi]),
    ("inverse_dynamics", lambda q: rd.inverse_dynamics(RR, q, q, q, gravity=[0, -9.81, 0]),
     [Qb, Qi]),
    ("forward_dynamics", lambda q: rd.forward_dynamics(RR, q, q, q), [Qb, Qi]),
    ("forward_dynamics-crba", lambda q: rd.forward_dynamics(RR, q, q, q, method="crba"),
     [Qb, Qi]),
    ("coriolis_matrix", lambda q: dynamics.coriolis_matrix(RR, q, q), [Qb, Qi]),
    ("gravity_torques", lambda q: rd.gravity_torques(RR, q), [Qb, Qi]),
    ("mechanical_energy", lambda q: rd.mechanical_energy(RR, q, q), [Qb, Qi]),
    ("fk_space", lambda q: rd.fk_space(RR, q), [Qi]),
    ("jacobian_body", lambda q: rd.jacobian_body(RR, q), [Qi]),
    ("kinetic_energy_metric", lambda q: lagrange.kinetic_energy_metric(RR, q), [Qi]),
    ("geodesic_acceleration", lambda q: lagrange.geodesic_acceleration(RR, q, q), [Qi]),
    ("hat", lambda v: rd.hat(np.concatenate([v, v, v])), [Qi]),
    ("exp_se3", lambda v: rd.exp_se3(np.concatenate([v, v, v]) / 4), [Qi]),
]


@pytest.mark.parametrize("engine", ["auto", "numpy"])
@pytest.mark.parametrize("name, f, inputs", NUMERIC_FUNCTIONS, ids=[c[0] for c in NUMERIC_FUNCTIONS])
def test_unusual_valid_inputs_give_the_same_numbers(engine, name, f, inputs, monkeypatch):
    monkeypatch.setattr(dynamics._recursions, "ENGINE", engine)
    for a in inputs:
        want = f(a)
        for label, v in _variants(a):
            np.testing.assert_array_equal(f(v), want, err_msg=f"{name} with {label} input")


def test_batched_equals_one_by_one():
    q = Qb
    for f in (lambda q: rd.crba(RR, q), lambda q: rd.inverse_dynamics(RR, q, q, q),
              lambda q: rd.forward_dynamics(RR, q, q, q), lambda q: rd.gravity_torques(RR, q)):
        batch = f(q)
        np.testing.assert_allclose(batch, np.array([f(r) for r in q]), rtol=1e-13, atol=1e-13)
        np.testing.assert_allclose(f(q.astype(">f8")), batch, rtol=0, atol=0)


def test_big_endian_never_reaches_the_engine_as_native(monkeypatch):
    """The issue's first example: a big-endian q gave values like 7e-319."""
    monkeypatch.setattr(dynamics._recursions, "ENGINE", "auto")
    q = np.array([0.3, 0.2])
    M = rd.crba(RR, q.astype(">f8"))
    assert np.all(np.abs(M) > 1e-3)
    np.testing.assert_array_equal(M, rd.crba(RR, q))
    d = dynamics._recursions._chain_data(RR, "t")
    if dynamics._recursions._engine() is not None:
        assert dynamics._recursions._compiled("crba", d, q.astype(">f8")) is None
        assert dynamics._recursions._compiled("crba", d, np.ma.masked_array(q)) is None


def test_inputs_are_not_modified():
    q = np.array([0.3, 0.2])
    q.setflags(write=False)
    for f in (rd.crba, rd.gravity_torques, rd.fk_space, rd.jacobian_space):
        f(RR, q)
    assert q.tolist() == [0.3, 0.2]


def test_symbolic_number_checks_leave_symbols_alone():
    m, a = sp.symbols("m a", positive=True)
    G = rd.spatial_inertia(m, [a, a, a])
    assert G[3, 3] == m
    R_pi = rd.log_so3(sp.Matrix([[1, 0, 0], [0, -1, 0], [0, 0, -1]]))
    assert sp.simplify(R_pi - sp.Matrix([sp.pi, 0, 0])) == sp.zeros(3, 1) or \
        sp.simplify(R_pi + sp.Matrix([sp.pi, 0, 0])) == sp.zeros(3, 1)


def test_symbolic_huge_chain_warns_between_limits():
    chain = models.planar_chain(rigid_motion.SYMBOLIC_WARN_JOINTS + 1)
    with pytest.warns(rigid_motion.LongComputationWarning, match="fk_space: symbolic kinematics"):
        rd.fk_space(chain, sp.symbols(f"q1:{chain.n + 1}"))


def test_long_fixed_step_simulation_warns(monkeypatch):
    monkeypatch.setattr(dynamics._simulation, "LONG_RUN_SECONDS", 0.0)
    with pytest.warns(rigid_motion.LongComputationWarning, match="rk4 steps will take about"):
        rd.simulate(RR, Q2, Q2, 0.01, method="rk4", dt=0.005)
