"""Every argument of every public callable of robodyn.port_hamiltonian is checked (issue 28).

The API fuzzer (tests/test_fuzz_api.py) substitutes bad values into the arguments its valid
call binds, a sample of its catalog each. Here every callable of the module is called with
*every* parameter bound (defaults included: ``t``, ``pose``, ``w``, ``tau``, ``inputs``,
``tol`` ... ), and each parameter in turn gets *every* value of the fuzzer's catalog for it
(a must-refuse value refused naming ``method: parameter``, an overflow refused as ``result``,
a legal alternative giving the same result). About 10 s.

A new public method escapes neither: :func:`robodyn.port_hamiltonian._arguments.checked` refuses, when the class
is defined, a method with an argument that has no declared kind, and
``test_every_public_method_is_declared`` fails for a public method without the declaration
and for a public callable of the module missing from the table below.
"""
from __future__ import annotations

import functools
import inspect

import numpy as np
import pytest

import _fuzz_api_support as fz
import robodyn as rd
from robodyn import models
from robodyn.port_hamiltonian import _arguments as _ph_checks
from robodyn import port_hamiltonian as ph
from robodyn.port_hamiltonian import VehicleManipulator

H0 = rd.homogeneous(rd.rotation([0, 0, 1], 0.3), [0.1, 0.2, 0.0])
Q, QD, V = np.array([0.3, -0.2]), np.array([0.1, 0.4]), np.array([0.2, -0.1, 0.05])
W, TAU = np.array([0.1, -0.2, 0.3]), np.array([0.2, -0.1])
W6 = np.array([0.1, -0.2, 0.3, 0.5, 0.0, -0.4])
G6 = rd.spatial_inertia(2.0, [0.3, 0.4, 0.5])


@functools.lru_cache(None)
def _vms():
    return VehicleManipulator.from_chain(models.planar_rr(), rd.spatial_inertia(8.0, [0.3, 0.3, 0.5]),
                                         "planar")


def _form_calls(name, f):
    x = f.state(H0, V, Q, QD)
    nu = np.r_[V, QD]
    out = {
        "mass_matrix": ((Q,), {"t": 0.5}),
        "state": ((H0, V, Q, QD), {}),
        "rhs": ((0.5, x), {"inputs": (W, TAU)}),
        "supplied_power": ((0.5, x), {"inputs": (W, TAU)}),
        "accelerations": ((Q, nu), {"t": 0.5, "pose": H0, "w": W, "tau": TAU}),
        "matrices": ((Q, V, QD), {}),
        "coefficients": ((Q,), {}),
        "parts": ((Q,), {"p": V}),
        "locked_velocity": ((Q, V, QD), {}),
    }
    for m in ("velocities", "hamiltonian", "gradient", "interconnection", "input_matrix",
              "outputs", "energy", "momentum"):
        out[m] = ((x,), {})
    return {f"{name}.{m}": (getattr(f, m), a, k) for m, (a, k) in out.items() if hasattr(f, m)}


@functools.lru_cache(None)
def full_calls():
    """{label: (callable, args, kwargs)} with every parameter bound, for every public callable
    of robodyn.port_hamiltonian (methods under Class.method; forms with gravity as well)."""
    vms = _vms()
    calls = {}
    for cls in (ph.VMSForm, ph.DecoupledForm, ph.ReducedEulerLagrange, ph.BoltzmannHamel):
        kw = {"sign": 1} if cls is ph.ReducedEulerLagrange else {}
        calls[cls.__name__] = (cls, (vms,), {"gravity": (0.0, -9.81, 0.0), **kw})
        calls.update(_form_calls(cls.__name__, cls(vms)))
        calls.update({k + "[gravity]": v for k, v in _form_calls(
            cls.__name__, cls(vms, gravity=(0.0, -9.81, 0.0))).items()
            if k.rsplit(".", 1)[1] in ("rhs", "energy", "accelerations")})
    fb = ph.FixedBaseForm(models.planar_rr(), gravity=(0, -9.81, 0))
    X = fb.state(Q, QD)
    calls["FixedBaseForm"] = (ph.FixedBaseForm, (models.planar_rr(),), {"gravity": (0, -9.81, 0)})
    for m, a, k in [("mass_matrix", (Q,), {}), ("state", (Q, QD), {}), ("hamiltonian", (X,), {}),
                    ("gradient", (X,), {}), ("interconnection", (X,), {}),
                    ("input_matrix", (X,), {}), ("outputs", (X,), {}),
                    ("input_torque", (X,), {"tau_act": TAU, "wrench": W6}),
                    ("dynamics", (X, TAU, W6), {}), ("rhs", (0.5, X), {"inputs": (TAU, W6)}),
                    ("potential_energy", (Q,), {}), ("ports", (X, TAU, W6), {}),
                    ("numeric_form", (), {})]:
        calls[f"FixedBaseForm.{m}"] = (getattr(fb, m), a, k)
    nf = fb.numeric_form()
    for m in ("mass_matrix", "input_matrix"):
        calls[f"FixedBaseForm.numeric_form().{m}"] = (getattr(nf, m), (Q,), {"t": 0.5})
    for m in ("forcing", "kinematics", "kinematics_jacobian"):
        calls[f"FixedBaseForm.numeric_form().{m}"] = (getattr(nf, m), (Q, X[2:]), {"t": 0.5})
    body = ph.BaseForm(G6)
    xb = body.state(H0, W6)
    calls["BaseForm"] = (ph.BaseForm, (G6,), {"base_joint": "floating"})
    for m, a, k in [("state", (H0, W6), {}), ("hamiltonian", (xb,), {}),
                    ("interconnection", (xb,), {}), ("rhs", (0.5, xb), {"inputs": W6}),
                    ("momentum", (xb,), {})]:
        calls[f"BaseForm.{m}"] = (getattr(body, m), a, k)
    f = ph.VMSForm(vms)
    x = f.state(H0, V, Q, QD)
    calls["canonical_matrix"] = (ph.canonical_matrix, (3,), {})
    calls["cayley_motion"] = (ph.cayley_motion, ([0.1, -0.2, 0.3, 1.0, 2.0, 3.0],), {})
    calls["energy_momentum_step"] = (ph.energy_momentum_step, (f, x, 0.05), {
        "inputs": (W, TAU), "t": 0.5, "tol": 1e-12, "max_iter": 50})
    calls["simulate"] = (ph.simulate, (f, x, (0.0, 0.2)), {
        "method": "energy-momentum", "dt": 0.05, "inputs": (W, TAU), "rtol": 1e-8,
        "atol": 1e-10, "n_out": 5, "momentum": True})
    calls["simulate[RK45]"] = (ph.simulate, (ph.DecoupledForm(vms), ph.DecoupledForm(vms).state(
        H0, V, Q, QD), [0, 0.1]), {"method": "RK45", "dt": None, "inputs": (W, TAU),
                                   "rtol": 1e-6, "atol": 1e-8, "n_out": 3, "momentum": True})
    return calls


def _public_names():
    """Public callables of the port-Hamiltonian forms (the rooms ``_forms`` and ``_vms_forms``
    of robodyn.port_hamiltonian), as the fuzzer counts them (Class.method, function)."""
    api = fz.public_callables()
    pre = "robodyn.port_hamiltonian."
    rooms = ("robodyn.port_hamiltonian._forms", "robodyn.port_hamiltonian._vms_forms")
    return {k[len(pre):] for k, v in api.items()
            if k.startswith(pre) and v[1].__module__ in rooms} - {"ConvergenceWarning",
                                                                  "PHTrajectory"}


def test_every_public_method_is_declared():
    missing = sorted(_public_names() - {k.split("[")[0] for k in full_calls()})
    assert not missing, f"public callables of port_hamiltonian without a full call here: {missing}"
    for name in _public_names():
        cls, _, meth = name.partition(".")
        if meth:
            f = getattr(getattr(ph, cls), meth)
            kinds = getattr(f, "argument_kinds", None)
            assert kinds is not None, f"{name}: not declared with _ph_checks.checked"
            params = list(inspect.signature(f).parameters)[1:]
            assert sorted(params) == sorted(kinds), name
    with pytest.raises(TypeError, match="expected a kind for each argument"):
        _ph_checks.checked(x=_ph_checks.state)(lambda self, x, y: None)


def _judge(label, f, ba, short, arg):
    """The failures of one parameter's substitutions (the fuzzer's rules)."""
    base = f(*ba.args, **ba.kwargs)
    fails = []
    for lb, value, verdict in fz.substitutions(ba.arguments[arg]):
        b2 = ba.signature.bind(*ba.args, **ba.kwargs)
        b2.arguments[arg] = value
        what = f"{label}({arg}={lb})"

        def names_ok(msg, verdict=verdict):
            return fz.names_argument(msg, short, arg) or (
                verdict == fz.MAYBE and fz.names_argument(msg, short, "result"))
        fails += fz.judge(f, b2.args, b2.kwargs, verdict, what, base, names_ok)
    return fails


@pytest.mark.parametrize("label", sorted(full_calls()))
def test_every_argument_is_checked(label):
    f, args, kwargs = full_calls()[label]
    sig = inspect.signature(f)
    ba = sig.bind(*args, **kwargs)
    assert set(ba.arguments) == set(sig.parameters), f"{label}: bind every parameter"
    short = label.split("[")[0].rsplit(".", 1)[-1].replace("()", "")
    if inspect.isclass(f):
        short = f.__name__
    fails = [e for arg in ba.arguments for e in _judge(label, f, ba, short, arg)]
    assert not fails, "\n".join(fails)


def test_callable_inputs_are_checked_where_they_are_called():
    f = ph.VMSForm(_vms())
    x = f.state(H0, V, Q, QD)
    for bad in (lambda t, x: "w", lambda t, x: (W, "tau"), lambda t, x: (W, TAU, 1)):
        with pytest.raises(TypeError, match=r"rhs: inputs"):
            f.rhs(0.0, x, bad)
        with pytest.raises(TypeError, match=r"^simulate: inputs"):
            ph.simulate(f, x, (0, 0.1), inputs=bad)
        with pytest.raises(TypeError, match=r"^energy_momentum_step: inputs"):
            ph.energy_momentum_step(f, x, 0.05, inputs=bad)
    with pytest.raises(ValueError, match=r"simulate: inputs\(t, x\): w"):
        ph.simulate(f, x, (0, 0.1), inputs=lambda t, x: (np.full(3, np.nan), TAU))


def test_cayley_motion_is_cay_of_ad_and_rigid_for_any_angle():
    """The closed form against its definition (1 - ad/2)^-1 (1 + ad/2) (an independent route:
    a 6x6 solve), and a rotation to rounding for angles whose matrix a is near singular in
    float64 (there the 3x3 solve of the former formula failed or lost rigidity)."""
    from robodyn.port_hamiltonian import pose_error
    rng = np.random.default_rng(7)
    for _ in range(50):
        xi = rng.normal(size=6) * 10 ** rng.uniform(-6, 2)
        A = rd.ad(xi)
        cay = np.linalg.solve(np.eye(6) - A / 2, np.eye(6) + A / 2)
        assert np.abs(rd.adjoint(ph.cayley_motion(xi)) - cay).max() < 1e-12 * max(1, np.abs(cay).max())
    for s in (1e8, 1e20, 1e200, 1e308):
        F = ph.cayley_motion([s, -s, s / 3, 1.0, 2.0, 3.0])
        assert pose_error(F) < 1e-14
    with pytest.raises(ValueError, match="cayley_motion: result"), np.errstate(over="ignore"):
        ph.cayley_motion([0, 0, 0.5, 1.7e308, 1.7e308, 0])


def test_integers_beyond_float64_are_refused_not_overflowed():
    f = ph.VMSForm(_vms())
    x = f.state(H0, V, Q, QD)
    with pytest.raises(ValueError, match=r"rhs: t: expected finite numbers"):
        f.rhs(10**400, x)
    with pytest.raises(ValueError, match=r"simulate: n_out: expected at most"):
        ph.simulate(f, x, (0, 1), n_out=10**400)
    with pytest.raises(ValueError, match=r"simulate: t_span: expected finite"):
        ph.simulate(f, x, (0, 10**400))


def test_calls_that_do_not_bind_name_the_method():
    f = ph.VMSForm(_vms())
    q, nu = Q, np.r_[V, QD]
    for call, what in [(lambda: f.accelerations(q), "accelerations: nu: missing"),
                       (lambda: f.accelerations(q, nu, foo=1), "accelerations: foo: not an arg"),
                       (lambda: f.accelerations(q, nu, q=q), "accelerations: q: given twice"),
                       (lambda: f.accelerations(q, nu, 0.0, None, None, None, 1),
                        "accelerations: expected at most 6 arguments")]:
        with pytest.raises(TypeError, match=what):
            call()
    arm = ph.FixedBaseForm(models.ur5_like())      # a pair as a 2-row array is a pair
    x = arm.state(np.zeros(6), np.ones(6))
    assert np.array_equal(arm.rhs(0, x, (np.ones(6), np.arange(6.0))),
                          arm.rhs(0, x, np.array([np.ones(6), np.arange(6.0)], dtype=">f8")))
