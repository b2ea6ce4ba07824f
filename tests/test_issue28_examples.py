"""The examples of issue 28, one table case each (the classes they stand for are closed in
robodyn._value_checks and robodyn._meaning_checks and fuzzed by tests/test_fuzz_api.py): every
case must raise the error named, or (for legal input) give the right result."""
from __future__ import annotations

import json

import numpy as np
import pytest
import sympy as sp

import robodyn as rd
from robodyn import answers, constraints, impacts, kane, lagrange, models, port_hamiltonian, walking

m, l = sp.Symbol("m", positive=True), sp.Symbol("l", positive=True)
q1, q2, u1, u2 = sp.symbols("q1 q2 u1 u2")
PAYLOAD = "__import__('os').system('touch /tmp/issue28')"


def _vms_form():
    G = rd.spatial_inertia(8.0, [0.3, 0.3, 0.5])
    return port_hamiltonian.StandardForm(port_hamiltonian.VehicleManipulator.from_chain(models.planar_rr(), G))


def _bad_pose_state(scale):
    f = _vms_form()
    x = f.initial_state(q=[0.3, 0.2]).copy()
    x[:9] = (scale * np.eye(3)).ravel()
    return f, x


def _kane(load=None, constraint=None):
    pos = sp.Matrix([q1, q2, 0])
    loads = [kane.Force(pos, sp.Matrix([load * m, 0, 0]))] if load is not None else []
    return kane.kanes_equations([q1, q2], [u1, u2], [kane.Particle("P", m, pos)], loads,
                                constraints=[] if constraint is None else [constraint])


def _contacts(p):
    # the enumeration's guard (method="auto" hands large sets to the pivoting solver)
    Jn, Jt = np.tile([0.0, 1.0, 0.0], (p, 1)), np.tile([1.0, 0.0, 0.0], (p, 1))
    return impacts.contact_impulse(np.eye(3), Jn, np.array([0.0, -1.0, 0.0]),
                                   restitution=np.full(p, 0.5), Jt=Jt,
                                   friction=np.full(p, 0.5), method="enumerate")


def _key(points):
    p = answers.Problem("p1", "x", variables={"x": (1, 2)})
    ps = answers.ProblemSet("s", [p])
    fp = answers.fingerprint(answers.parse_expression("x**2", ["x"]), p)
    fp["points"] = points
    ps.load_key(json.dumps({"p1": fp}))


NAN_SURFACE = impacts.Surface("nan", lambda q: float("nan"), lambda q: np.array([0.0, 1.0]))

CASES = [
    # text run as code
    ("christoffel_symbols: M holds a string", lambda: lagrange.christoffel_symbols(
        [[1, PAYLOAD], [PAYLOAD, 1]], [q1, q2]), TypeError, "christoffel_symbols: M"),
    ("compile_equations: M holds a string", lambda: rd.codegen.compile_equations(
        [[PAYLOAD]], [[0]], [[0]], [q1], [u1]), TypeError, "compile_equations: M"),
    ("numeric: a tuple key holding a string", lambda: lagrange.equations_of_motion(
        models.planar_rr(l1=l)).numeric({(PAYLOAD,): 1.0}), TypeError, "numeric: values"),
    ("euler_lagrange: L is a string", lambda: lagrange.euler_lagrange(PAYLOAD, [q1], [u1],
                                                                      [u2]),
     TypeError, "euler_lagrange: L"),
    # physically impossible data
    ("StandardForm.rhs: rotation block 0", lambda: (lambda f, x: f.rhs(0.0, x))(
        *_bad_pose_state(0.0)), ValueError, r"rhs: x\[:12\]"),
    ("StandardForm.rhs: rotation block 2I", lambda: (lambda f, x: f.rhs(0.0, x))(
        *_bad_pose_state(2.0)), ValueError, r"rhs: x\[:12\]"),
    ("planar_rr: negative symbolic mass", lambda: models.planar_rr(m1=-m), ValueError,
     "planar_rr: m1"),
    ("planar_rr: imaginary length", lambda: models.planar_rr(l1=sp.I * l), TypeError,
     "planar_rr: l1"),
    ("rod_flat_impact: rising rod", lambda: impacts.rod_flat_impact(0.0, 2.0, 0.5),
     ValueError, "rod_flat_impact: vy"),
    ("moreau_jean: start 5 m inside the floor", lambda: impacts.moreau_jean(
        walking.bouncing_ball(0.5), [0.0, -5.0], [0.0, 0.0], 1.0, 1e-3), ValueError,
     "moreau_jean: q0"),
    ("moreau_jean: step longer than the run", lambda: impacts.moreau_jean(
        walking.bouncing_ball(0.5), [0.0, 1.0], [0.0, 0.0], 1.0, 5.0), ValueError,
     "moreau_jean: h"),
    # symbols that mean something else
    ("kanes_equations: plain t in a load", lambda: _kane(load=sp.Symbol("t")), ValueError,
     "kanes_equations: t"),
    ("kanes_equations: q1_dot in a load", lambda: _kane(load=sp.Symbol("q1_dot")), ValueError,
     "kanes_equations: loads"),
    ("kanes_equations: u1_dot in a constraint", lambda: _kane(
        constraint=u1 - sp.Symbol("u1_dot") * u2), ValueError, "kanes_equations: constraints"),
    ("kanes_equations: plain t in a constraint", lambda: _kane(
        constraint=u1 - sp.Symbol("t") * u2), ValueError, "kanes_equations: constraints"),
    # numbers that are not numbers
    ("forward_dynamics at 1e200", lambda: rd.forward_dynamics(
        models.planar_rr(), [0.1, 0.2], [1e200, 1e200], [0.0, 0.0]), ValueError,
     "forward_dynamics: .*overflow"),
    ("a surface whose phi is NaN", lambda: impacts.simulate_hybrid(impacts.HybridSystem(
        walking.bouncing_ball(0.5).form, [NAN_SURFACE]), [0.0, 1.0], [0.0, 0.0], 1.0),
     ValueError, "Surface 'nan': phi"),
    ("spd: a tiny non-symmetric M", lambda: rd._meaning_checks.spd(
        np.array([[1e-12, 1e-13], [0.0, 1e-12]]), "f: M"), ValueError, "f: M"),
    # silent truncation
    ("dexp_inverse(order=6)", lambda: port_hamiltonian.dexp_inverse(np.full(6, 0.1), np.ones(6), 6),
     ValueError, "dexp_inverse: order"),
    ("dexp_inverse(order=-1)", lambda: port_hamiltonian.dexp_inverse(np.full(6, 0.1), np.ones(6), -1),
     ValueError, "dexp_inverse: order"),
    # legal input refused or misread
    ("log(x, 0)", lambda: answers.parse_expression("log(x, 0)"), ValueError,
     "parse_expression"),
    ("an empty answer key", lambda: _key({}), ValueError, "load_key: text"),
    ("Problem.inputs unchecked", lambda: answers.Problem("p", "f", inputs=(("a",),)),
     TypeError, "Problem: inputs"),
    ("Problem.input_range unchecked", lambda: answers.Problem("p", "f", inputs=((2,),),
                                                              input_range=(1, 0)),
     ValueError, "Problem: input_range"),
    # errors that escape
    ("decode: a record without its shape", lambda: answers.decode({"type": "numeric"}),
     ValueError, "decode: data"),
    # unbounded
    ("fixed_point: max_iter = 10**9", lambda: impacts.fixed_point(
        lambda x: x + 1.0, [0.0], max_iter=10**9), ValueError, "fixed_point: max_iter"),
    ("fixed_point: a vanishing Newton step", lambda: impacts.fixed_point(
        lambda x: x + 0.5, [0.0], max_iter=10_000, fd_step=0.5), RuntimeError,
     "Newton step vanished"),
    ("contact modes: 64 contacts", lambda: _contacts(64), ValueError,
     "contact_impulse: contacts"),
    ("contact modes: 100 contacts", lambda: _contacts(100), ValueError,
     "contact_impulse: contacts"),
]


@pytest.mark.parametrize("label, f, exc, match", CASES, ids=[c[0] for c in CASES])
def test_issue28_example_refused(label, f, exc, match):
    with pytest.raises(exc, match=match):
        f()


def test_legal_inputs_of_issue28():
    """Legal input gives the right result: sympy Rational masses, a variable named E, a
    moore_penrose at 1e308 (the exact pseudo-inverse), a tiny symmetric M."""
    half = models.planar_rr(m1=sp.Rational(1, 2))
    assert half.link_inertias[0][3, 3] == sp.Rational(1, 2)
    p = answers.Problem("p1", "x", variables={"E": (1, 2), "x": (1, 2)})
    assert answers.compare("E*x", "E*x", p).correct
    assert not answers.compare(f"{float(np.e)!r}*x", "E*x", p).correct
    W = np.full((2, 3), 1e308)
    assert np.allclose(constraints.moore_penrose(W) * 1e308, np.full((3, 2), 1 / 6))
    assert rd._meaning_checks.spd(np.diag([1e-12, 2e-12]), "f: M").shape == (2, 2)
    assert np.allclose(impacts.rod_flat_impact(0.0, -2.0, 0.5), (0.0, 1.0, 0.0))
