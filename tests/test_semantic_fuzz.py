"""The semantic fuzzer (issue 37): right-typed, physically wrong values for every declared kind.

Every public callable of robodyn (found by introspection, as in tests/test_fuzz_api.py) is
read for parameters annotated with a kind of :mod:`robodyn.kinds`. Each such parameter of a
callable with a valid call (tests/fuzz_calls/ or its doctests) gets, in turn, every value of
its kind's catalogue of wrong physics below -- a reflection for a rotation, a non-unit screw
axis, an indefinite inertia, a negative mass, an indefinite metric, a restitution above one
... -- each given numerically and symbolically (with free symbols under assumptions, so that
only the symbols' meaning makes the value wrong). Every one must be refused with a
``ValueError``/``TypeError`` naming ``function: argument`` (or, where the value is
undecidable, warned with an :class:`~robodyn.kinds.UndecidedWarning` naming it). A newly
annotated function is fuzzed without any change here.

The completeness test holds the other end: a public parameter whose *name* says what it is
(``R``, ``H``, ``inertia``, ``mass``, ``restitution``, ``tol`` ... see :data:`ROLE_KINDS`)
must carry that kind's annotation, so a new function that takes a rotation without declaring
it fails here.
"""
from __future__ import annotations

import inspect
import sys
import warnings

import numpy as np
import pytest
import sympy as sp

import _fuzz_api_support as fz
from robodyn import kinds
from robodyn.kinds import (Direction, FrictionCoefficient, Mass, Metric, Restitution,
                           RigidPose, Rotation, RotationalInertia, ScrewAxes, ScrewAxis,
                           SpatialInertia, TimeStep, Tolerance, Twist, UndecidedWarning, Wrench)

TH = sp.Symbol("theta", real=True)
A = sp.Symbol("a", positive=True)
MU = sp.Symbol("mu", positive=True)


def _rz(c):
    return np.array([[np.cos(c), -np.sin(c), 0], [np.sin(c), np.cos(c), 0], [0, 0, 1.0]])


def _pose(R):
    H = sp.eye(4) if isinstance(R, sp.MatrixBase) else np.eye(4)
    H[:3, :3] = R
    return H


REFLECTION = np.diag([1.0, 1.0, -1.0]) @ _rz(0.3)
REFLECTION_SYM = sp.diag(1, 1, -1) * sp.rot_axis3(TH)


def _metric_bad(base):
    """Wrong metrics made from the valid one (its size): negative definite, indefinite,
    not symmetric; numerically and with a positive symbol."""
    Ms = sp.Matrix(base)
    M = np.array(Ms.evalf(), dtype=float) if not Ms.free_symbols else np.eye(Ms.rows)
    n = M.shape[0]
    indef = np.eye(n)
    indef[-1, -1] = -1.0
    skew = np.zeros((n, n))
    if n > 1:
        skew[0, 1] = 0.5
    out = [("negative definite", -M), ("negative definite, symbolic", -A * sp.Matrix(M)),
           ("indefinite", indef), ("indefinite, symbolic", A * sp.Matrix(indef))]
    if n > 1:
        out.append(("not symmetric", M + skew))
    return out


def _first_column(base, col):
    """The valid screws ``base`` (6 x n) with the first column replaced by ``col``."""
    S = sp.Matrix(np.asarray(base, dtype=object).tolist() if not isinstance(base, sp.MatrixBase)
                  else base)
    S[:, 0] = sp.Matrix(col)
    return S


CATALOGUE = {
    Rotation: lambda base: [
        ("reflection", REFLECTION), ("reflection for every theta", REFLECTION_SYM),
        ("scaled by 2", 2 * _rz(0.3)), ("scaled by 2, symbolic", 2 * sp.rot_axis3(TH))],
    RigidPose: lambda base: [
        ("reflection block", _pose(REFLECTION)),
        ("reflection block for every theta", _pose(REFLECTION_SYM)),
        ("last row [0, 0, 1, 1]", np.vstack([np.eye(4)[:3], [0, 0, 1, 1]]))],
    ScrewAxis: lambda base: [
        ("|omega| = 2", np.array([0, 0, 2.0, 0, 0, 0])),
        ("|omega| = a + 1", sp.Matrix([0, 0, A + 1, 0, 0, 0])),
        ("omega = 0, |v| = 3", np.array([0, 0, 0, 0, 3.0, 0]))],
    ScrewAxes: lambda base: [
        ("first column with |omega| = 2", _first_column(base, [0, 0, 2, 0, 0, 0])),
        ("first column with |omega| = 2 cos(theta)**2 + 2 sin(theta)**2",
         _first_column(base, [0, 0, 2 * sp.cos(TH) ** 2 + 2 * sp.sin(TH) ** 2, 0, 0, 0])),
        ("first column with |omega| = a + 1", _first_column(base, [0, 0, A + 1, 0, 0, 0]))],
    Direction: lambda base: [
        ("the zero vector", np.zeros(3)),
        ("zero for every theta", sp.Matrix([0, sp.sin(TH) ** 2 + sp.cos(TH) ** 2 - 1, 0]))],
    Twist: lambda base: [("an imaginary entry", sp.Matrix([0, 0, sp.I * A, 0, 0, 0])),
                         ("five entries", np.zeros(5))],
    Wrench: lambda base: [("an imaginary entry", sp.Matrix([0, 0, sp.I * A, 0, 0, 0])),
                          ("five entries", np.zeros(5))],
    RotationalInertia: lambda base: [
        ("a negative moment", np.diag([1.0, 1.0, -5.0])),
        ("a negative moment for every a", sp.diag(A, A, -5 * A)),
        ("indefinite for every a", sp.Matrix([[A, 0, 0], [0, 1, 2], [0, 2, 1]])),
        ("triangle inequality broken", np.diag([1.0, 1.0, 5.0])),
        ("triangle inequality broken for every a", sp.diag(A, A, 3 * A)),
        ("not symmetric", np.array([[1.0, 0.2, 0], [0, 1, 0], [0, 0, 1]]))],
    SpatialInertia: lambda base: [
        ("a negative moment", np.diag([1.0, 1.0, -5.0, 1, 1, 1])),
        ("a negative mass for every a", sp.diag(A, A, A, -A, -A, -A))],
    Mass: lambda base: [("negative", -1.0), ("zero", 0.0), ("-a, a positive", -A)],
    Metric: _metric_bad,
    TimeStep: lambda base: [("negative", -0.01), ("zero", 0.0)],
    Tolerance: lambda base: [("negative", -1e-9), ("zero", 0.0), ("above 1", 5.0)],
    FrictionCoefficient: lambda base: [("negative", -0.3), ("-mu, mu positive", -MU)],
    Restitution: lambda base: [("above 1", 1.5), ("negative", -0.2), ("-a, a positive", -A)],
}
"""Per kind: ``base value -> [(label, wrong value)]`` (numeric and symbolic wrong physics)."""

ROLE_KINDS = {
    "R": Rotation, "orientation": Rotation,
    "H": RigidPose, "H_ab": RigidPose, "home": RigidPose,
    "screws": ScrewAxes, "axis": Direction, "direction": Direction,
    "V_b": Twist, "W_b": Wrench,
    "inertia": (RotationalInertia, SpatialInertia), "I_cm": RotationalInertia,
    "mass": Mass,
    "metric": Metric,
    "restitution": Restitution,
    "friction": FrictionCoefficient, "mu": FrictionCoefficient,
    "tol": Tolerance,
    "dt": TimeStep,
}
"""Parameter names that say what the argument is: such a parameter must be declared with the
kind (or one of the kinds) unless its default is None (an optional value) or it is in
:data:`NOT_THE_ROLE`. ``M`` is left out (a mass matrix in most places, but a matrix to be
tested or a metric only in some)."""

NOT_THE_ROLE = {
    ("robodyn.rigid_motion.is_rotation", "R"): "a predicate: a reflection is answered False",
    ("robodyn.port_hamiltonian.Subgroup.contains", "H"): "a predicate: a non-member is answered False",
    ("robodyn.port_hamiltonian.pose_error", "H"): "measures how far H is from a rigid pose",
    ("robodyn.rigid_motion.rotation", "axis"): "'x', 'y', 'z' or a direction",
    ("robodyn.viz.draw_chain", "screws"): "a flag: draw the screw axes",
    ("robodyn.impacts.ContactResult", "restitution"): "a result, built by the library",
    ("robodyn.impacts.ImpactResult", "restitution"): "a result, built by the library",
    **{("robodyn.symbolic." + f, arg): "the book pages' pure-sympy module (no numpy, so no "
       "kinds): it checks the same meaning itself (tests/test_symbolic.py)"
       for f, arg in (("homogeneous", "R"), ("adjoint", "H"), ("inverse_homogeneous", "H"),
                      ("revolute_screw", "axis"), ("rotation", "axis"))},
}
"""Parameters whose name matches a role but which are not that kind, with the reason."""

API = fz.public_callables()
REGISTRY, SKIP, _PENDING, _GAPS, _TEXT, _TESTS = fz.load_registry()


def _function_of(name):
    kind, obj, owner = API[name]
    if kind == "class":
        f = obj
    elif kind == "function":
        f = obj
    else:
        raw = vars(owner)[name.rpartition(".")[2]]
        f = raw.__func__ if isinstance(raw, (staticmethod, classmethod)) else raw
    return f


def _module_namespace(f):
    g = getattr(inspect.unwrap(f), "__globals__", None)
    if g is None:
        g = vars(sys.modules[getattr(f, "__module__", "robodyn")])
    return g


def declared_kinds(name):
    """{parameter: Kind} declared in the signature of the public callable ``name``."""
    f = _function_of(name)
    try:
        sig = inspect.signature(f)
    except (TypeError, ValueError):
        return {}
    ns = _module_namespace(f if not inspect.isclass(f) else (
        getattr(f, "__init__", f)))
    if inspect.isclass(f):
        ns = {**vars(sys.modules[f.__module__]), **ns}
    out = {}
    for p in sig.parameters.values():
        ann = p.annotation
        if isinstance(ann, str):
            try:
                ann = eval(ann, dict(ns))        # the module's own names: trusted source
            except Exception:                    # noqa: BLE001 -- not a kind
                continue
        if isinstance(ann, type) and issubclass(ann, kinds.Kind) and ann is not kinds.Kind:
            out[p.name] = ann
    return out


DECLARED = {n: d for n in sorted(API) if not n.startswith("robodyn.kinds")
            for d in [declared_kinds(n)] if d}


@pytest.fixture(scope="module")
def recorded():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fz.record_doctest_calls({n: API[n] for n in DECLARED})


def _valid_call(name, recorded):
    if name in REGISTRY:
        return REGISTRY[name]()
    return recorded.get(name)


def _target(name, args, kwargs):
    kind, obj, _ = API[name]
    short = name.rpartition(".")[2]
    if kind == "method":
        return getattr(args[0], short), args[1:], kwargs, short
    if kind in ("staticmethod", "classmethod"):
        return getattr(obj, short), args, kwargs, short
    return obj, args, kwargs, short


def refusal_failures(f, call, arg, value, fname, owner):
    """The failure (a string) of one wrong value, or None when it was refused (or warned)
    naming the function (or its class) and the argument."""
    ba = inspect.signature(f).bind(*call[0], **call[1])
    ba.arguments[arg] = value
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        try:
            fz.call(f, ba.args, ba.kwargs, 60.0)
        except fz.Hang:
            return "still running after 60 s"
        except (ValueError, TypeError) as exc:
            msg = str(exc)
            if fz.names_argument(msg, fname, arg) or fz.names_argument(msg, owner, arg):
                return None
            return f"refused without naming {fname}: {arg}: {msg[:200]}"
    for w in seen:
        if issubclass(w.category, UndecidedWarning) and (
                fz.names_argument(str(w.message), fname, arg) or
                fz.names_argument(str(w.message), owner, arg)):
            return None
    return "accepted"


CASES = [(n, arg, kind) for n, d in DECLARED.items() for arg, kind in sorted(d.items())]


def test_the_fuzzer_sees_the_declared_kinds():
    """The introspection finds the annotations (a regression here would empty the fuzzer)."""
    assert "robodyn.rigid_motion.log_so3" in DECLARED
    assert DECLARED["robodyn.rigid_motion.log_so3"] == {"R": Rotation, "tol": Tolerance}
    assert DECLARED["robodyn.kane.RigidBody"]["inertia"] is RotationalInertia
    assert len(CASES) >= 30


@pytest.mark.slow
@pytest.mark.parametrize("name, arg, kind", CASES, ids=[f"{n}:{a}" for n, a, _ in CASES])
def test_wrong_physics_is_refused(name, arg, kind, recorded):
    if name in SKIP:
        pytest.skip(SKIP[name])
    call = _valid_call(name, recorded)
    if call is None:
        pytest.skip("no valid call (tests/test_fuzz_api.py holds the coverage)")
    args, kwargs = call
    f, args, kwargs, short = _target(name, tuple(args), dict(kwargs))
    owner = name.rsplit(".", 2)[-2] if API[name][0] != "function" else short
    ba = inspect.signature(f).bind(*args, **kwargs)
    if arg not in ba.arguments:
        ba.apply_defaults()
    base = ba.arguments.get(arg)
    failures = []
    for label, value in CATALOGUE[kind](base):
        why = refusal_failures(f, (args, kwargs), arg, value, short, owner)
        if why:
            failures.append(f"{name}({arg}={label}): {why}")
    assert not failures, "\n".join(failures)


def _public_parameters():
    for name in sorted(API):
        if name.startswith("robodyn.kinds"):
            continue
        f = _function_of(name)
        try:
            sig = inspect.signature(f)
        except (TypeError, ValueError):
            continue
        for p in sig.parameters.values():
            yield name, p


def test_every_parameter_with_a_role_declares_its_kind():
    """A parameter named like one of the kinds (ROLE_KINDS) carries that kind's annotation."""
    missing = []
    for name, p in _public_parameters():
        want = ROLE_KINDS.get(p.name)
        if want is None or p.default is None or (name, p.name) in NOT_THE_ROLE:
            continue
        want = want if isinstance(want, tuple) else (want,)
        got = DECLARED.get(name, {}).get(p.name)
        if got not in want:
            missing.append(f"{name}: {p.name} (expected {' or '.join(k.__name__ for k in want)}"
                           f", got {getattr(got, '__name__', 'no kind')})")
    assert not missing, (f"{len(missing)} parameters do not declare their kind:\n"
                         + "\n".join(missing))


@pytest.mark.parametrize("kind", sorted(CATALOGUE, key=lambda k: k.__name__))
def test_each_kind_refuses_its_catalogue_directly(kind):
    """Each kind's own check refuses its whole catalogue, naming the argument given."""
    base = {Metric: np.eye(3), ScrewAxes: np.array([[0, 0, 1.0, 0, 0, 0]]).T}.get(kind)
    for label, value in CATALOGUE[kind](base):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            try:
                kind.check(value, "f: x")
            except (ValueError, TypeError) as exc:
                assert str(exc).startswith("f: x"), (label, str(exc))
                continue
        assert any(issubclass(w.category, UndecidedWarning) for w in seen), \
            f"{kind.__name__}.check accepted {label}"


def test_every_kind_has_a_catalogue():
    assert set(kinds.KINDS) == set(CATALOGUE)
