"""Everything public pickles (issue 37, point 4): every public function of robodyn, and a real
instance of every public class, survive ``pickle.dumps``/``pickle.loads`` and give equal
numbers afterwards.

The classes are enumerated from the public API (every public module's ``__all__``, incl.
``robodyn.viz`` and ``robodyn.grading``: tests/_fuzz_api_support.py, the fuzzer's own
enumeration); each needs an instance factory here, so a new public class that escapes fails
:func:`test_every_public_class_has_an_instance_factory`. A factory is either a callable or the
name of a doctest of the library whose examples make an instance (run once, its namespace
searched).
"""
from __future__ import annotations

import dataclasses
import doctest
import functools
import importlib
import inspect
import pickle
import warnings

import numpy as np
import pytest
import sympy as sp

import _fuzz_api_support as api_support

API = api_support.public_callables()
CLASSES = {q: obj for q, (kind, obj, _) in API.items()
           if kind == "class" and not issubclass(obj, BaseException)}
FUNCTIONS = {q: obj for q, (kind, obj, owner) in API.items() if kind == "function"}


@functools.lru_cache(maxsize=None)
def _doctest_namespace(name):
    """The namespace left by the examples of the doctest ``name`` (a qualified name)."""
    modname = name
    while modname not in api_support.public_modules() and "." in modname:
        modname = modname.rpartition(".")[0]
    module = importlib.import_module(modname)
    obj = module                   # the object by its public name; its examples live in its home
    for part in name[len(modname):].strip(".").split(".") if name != modname else []:
        obj = getattr(obj, part)   # module (a package's room), where the finder looks for them
    home = inspect.getmodule(obj) or module
    tests = [t for t in doctest.DocTestFinder(recurse=False).find(obj, name, module=home,
                                                                 globs=vars(home).copy())
             if t.name == name]
    assert tests, f"no doctest named {name}"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS, verbose=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        runner.run(tests[0], out=lambda s: None, clear_globs=False)
    return dict(tests[0].globs)


def _from_doctest(name, cls):
    for v in _doctest_namespace(name).values():
        for x in [v] + (list(v) if isinstance(v, (list, tuple)) else []):
            if isinstance(x, cls):
                return x
    raise AssertionError(f"the doctest {name} makes no {cls.__name__}")


def _planar_vms():
    from robodyn.rigid_motion import spatial_inertia
    from robodyn.models import planar_rr
    from robodyn.port_hamiltonian import VehicleManipulator
    return VehicleManipulator.from_chain(planar_rr(), spatial_inertia(5.0, [1, 1, 1]), "planar")


def _ball_events():
    from robodyn import impacts
    return impacts.simulate_hybrid(impacts.ball(), [0.0, 0.5, 0.0], [0.0, 0.0, 0.0],
                                   1.0).events


def _pinned_body():
    from robodyn import constraints as C
    xp, yp, th, xpd, ypd, thd = sp.symbols("xp yp th xpd ypd thd")
    body = C.lagrangian_equations(thd**2 / 2 + (xpd**2 + ypd**2) / 2, yp, [xp, yp, th],
                                  [xpd, ypd, thd])
    return C.ConstrainedSystem(body, C.Constraints([xp, yp, th], holonomic=[xp, yp]))


def _page(row):
    """A feedback page of the records (module level: it pickles)."""
    return str(row["student"])


def _records():
    import tempfile
    from pathlib import Path

    from robodyn.grading import gradebook, markup
    from test_grading_dask import _instructor
    root = Path(tempfile.mkdtemp(prefix="robodyn-pickle-"))
    rec = gradebook.Records(root / "gradebook.db", "tiny", "tiny",
                            markup.student_version(_instructor()), root / "scores.csv",
                            feedback_dir=root / "pages", page=_page)
    rec.define([("p1", 1.0), ("p2", 2.0)])
    return rec


def _unit():
    from robodyn.grading import jail
    return jail.Unit(64, 4)


def _launch():
    from robodyn.grading import jail
    exe = jail.bwrap_path()
    if exe is None:
        pytest.skip("no bwrap here: a Launch needs it")
    return jail.Launch(exe, [jail.interpreter(), "-c", "pass"],
                       rlimits=jail.preexec(memory_mb=256, cpu_seconds=5, file_mb=8))


def _draw(fig, a):
    """A reader's draw function of an interactive figure (module level: it pickles)."""
    ax = fig.add_subplot()
    ax.plot([0, 1], [0, a])


def _interactive():
    from robodyn import viz
    return viz.interactive_figure(_draw, {"a": viz.Slider(0.5, 2.0, steps=2)})


def _symbols(names):
    return sp.symbols(names)


FACTORIES = {
    "robodyn.answers.Feedback": lambda: __import__("robodyn").answers.Feedback("correct", "ok"),
    "robodyn.answers.Problem": "robodyn.answers.Problem.from_dict",
    "robodyn.answers.ProblemSet": "robodyn.answers.ProblemSet",
    "robodyn.constraints.ConstrainedTrajectory":
        "robodyn.constraints.simulate_constrained",
    "robodyn.constraints.ConstrainedMotion": lambda: __import__("robodyn").constraints
        .ConstrainedMotion(np.array([0.0, -9.81]), np.array([0.0, 1.0])),
    "robodyn.constraints.ConstrainedSystem": _pinned_body,
    "robodyn.constraints.Constraints": lambda: __import__("robodyn").constraints.Constraints(
        list(_symbols("x y")), holonomic=[_symbols("x y")[0] ** 2 + _symbols("x y")[1] ** 2 - 1]),
    "robodyn.constraints.Integrability": lambda: __import__("robodyn").constraints
        .Integrability(True, False, (sp.Integer(0),)),
    "robodyn.constraints.MultiplierSolution": lambda: __import__("robodyn").constraints
        .MultiplierSolution(np.array([0.0, 1.0]), np.array([2.0])),
    "robodyn.impacts.ContactResult": "robodyn.impacts.contact_impulse",
    "robodyn.equations.MassMatrixForm": "robodyn.equations.mass_matrix_form",
    "robodyn.equations.NumericForm": "robodyn.equations.mass_matrix_form",
    "robodyn.kane.FlexibleLink": "robodyn.kane.flexible_link",
    "robodyn.kane.HubRun": "robodyn.kane.simulate_hub",
    "robodyn.lagrange.Geodesic": "robodyn.lagrange.geodesic",
    "robodyn.lagrange.JointPath": "robodyn.lagrange.energy_integral",
    "robodyn.grading.gradebook.Records": _records,
    "robodyn.grading.grader.Limits": lambda: __import__("robodyn.grading.grader").grading
        .grader.Limits(),
    "robodyn.grading.grader.Reference": lambda: __import__("robodyn.grading.grader").grading
        .grader.Reference([], {}, {}),
    "robodyn.grading.jail.Launch": _launch,
    "robodyn.grading.jail.Unit": _unit,
    "robodyn.impacts.FixedPoint": "robodyn.impacts.fixed_point",
    "robodyn.impacts.HybridSystem": lambda: __import__("robodyn").impacts.ball(),
    "robodyn.impacts.HybridTrajectory": "robodyn.impacts.simulate_hybrid",
    "robodyn.impacts.ImpactEvent": lambda: _ball_events()[0],
    "robodyn.impacts.ImpactResult": "robodyn.impacts.impact_map",
    "robodyn.impacts.StepResult": lambda: __import__("robodyn").impacts.return_map(
        _doctest_namespace("robodyn.impacts.return_map")["ball"], [0, 0, 0, 2.0]),
    "robodyn.impacts.Surface": lambda: __import__("robodyn").impacts.ball().surfaces[0],
    "robodyn.kane.ChainEquations": "robodyn.kane.equations_of_motion",
    "robodyn.kane.TreeEquations": "robodyn.kane.equations_of_motion",
    "robodyn.kane.Force": lambda: __import__("robodyn").kane.Force(
        sp.Matrix([0, 0, 0]), sp.Matrix([0, -9.81, 0])),
    "robodyn.kane.KaneEquations": "robodyn.kane.kanes_equations",
    "robodyn.kane.Linearization": lambda: __import__("robodyn").kane.Linearization(
        sp.Matrix([[0, 1], [-1, 0]]), sp.Matrix([0, 1]), tuple(_symbols("q u")), (0, 0)),
    "robodyn.kane.Particle": "robodyn.kane.kanes_equations",
    "robodyn.kane.RigidBody": "robodyn.kane.RigidBody",
    "robodyn.kane.Torque": lambda: __import__("robodyn").kane.Torque("body", sp.Matrix([0, 0, 1])),
    "robodyn.rigid_motion.SerialChain": lambda: __import__("robodyn").models.ur5_like(),
    "robodyn.lagrange.EquationsOfMotion": "robodyn.lagrange.equations_of_motion",
    "robodyn.lagrange.NumericEquations": "robodyn.lagrange.equations_of_motion",
    "robodyn.port_hamiltonian.BaseForm": "robodyn.port_hamiltonian.BaseForm",
    "robodyn.port_hamiltonian.BoltzmannHamel":
        lambda: __import__("robodyn").port_hamiltonian.BoltzmannHamel(_planar_vms()),
    "robodyn.port_hamiltonian.DecoupledForm":
        lambda: __import__("robodyn").port_hamiltonian.DecoupledForm(_planar_vms()),
    "robodyn.port_hamiltonian.FixedBaseForm": "robodyn.port_hamiltonian.FixedBaseForm",
    "robodyn.port_hamiltonian.PHTrajectory": "robodyn.port_hamiltonian.simulate",
    "robodyn.port_hamiltonian.ReducedEulerLagrange":
        lambda: __import__("robodyn").port_hamiltonian.ReducedEulerLagrange(_planar_vms()),
    "robodyn.port_hamiltonian.VMSForm": "robodyn.port_hamiltonian.simulate",
    "robodyn.dynamics.Trajectory": "robodyn.dynamics.Trajectory.summary",
    "robodyn.impacts.TimeSteppingResult": "robodyn.impacts.moreau_jean",
    "robodyn.urdf.RobotModel": "robodyn.trees.aba",
    "robodyn.port_hamiltonian.PlanarCoordinates":
        lambda: __import__("robodyn").port_hamiltonian.PlanarCoordinates(_planar_vms()),
    "robodyn.port_hamiltonian.StandardForm": "robodyn.port_hamiltonian.StandardForm",
    "robodyn.port_hamiltonian.Subgroup": lambda: _planar_vms().base_joint,
    "robodyn.port_hamiltonian.VehicleManipulator": _planar_vms,
    "robodyn.viz.Animation": "robodyn.viz.animation.animation",
    "robodyn.viz.InteractiveFigure": _interactive,
    "robodyn.viz.Scene": "robodyn.viz.scene.Scene",
    "robodyn.viz.Slider": "robodyn.viz.sliders.Slider",
    "robodyn.viz.meshes.TriangleMesh": "robodyn.viz.meshes.TriangleMesh",
    "robodyn.walking.CompassGait": lambda: __import__("robodyn").walking.CompassGait(),
    "robodyn.walking.RimlessWheel": lambda: __import__("robodyn").walking.RimlessWheel(),
}


MAKES = {"robodyn.port_hamiltonian.PlanarCoordinates": "robodyn.equations.NumericForm"}
"""Classes that are makers of another class's objects (``__new__`` returns a NumericForm)."""

REMADE = {"robodyn.grading.jail.Unit", "robodyn.grading.jail.Launch"}
"""Operating-system resources (a control group, descriptors): a copy is a new one made from the
same arguments (compared by :func:`probe`), not the same resource."""


def instance(q):
    cls, f = CLASSES[q], FACTORIES[q]
    out = _from_doctest(f, cls) if isinstance(f, str) else f()
    assert isinstance(out, CLASSES[MAKES.get(q, q)]), (q, type(out))
    return out


def same(a, b, depth=0):
    """Whether ``a`` and ``b`` hold equal numbers (arrays, sympy objects, and the containers,
    dataclasses and objects holding them); functions by their qualified name."""
    if depth > 8:
        return True
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.asarray(a).shape == np.asarray(b).shape and (
            np.array_equal(a, b, equal_nan=np.asarray(a).dtype.kind in "fc")
            if np.asarray(a).dtype != object else all(
                same(x, y, depth + 1) for x, y in zip(np.ravel(a), np.ravel(b))))
    if isinstance(a, (sp.Basic, sp.MatrixBase)):
        return a == b
    if isinstance(a, float) and isinstance(b, float) and a != a:
        return b != b
    if isinstance(a, (int, float, str, bytes, bool, type(None), complex)):
        return a == b
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(
            same(x, y, depth + 1) for x, y in zip(a, b))
    if isinstance(a, dict):
        return sorted(map(str, a)) == sorted(map(str, b)) and all(
            same(a[k], b[k], depth + 1) for k in a if k in b)
    if callable(a) and not hasattr(a, "__dict__") or isinstance(a, functools.partial):
        return getattr(a, "__qualname__", repr(type(a))) == getattr(b, "__qualname__",
                                                                      repr(type(b)))
    if dataclasses.is_dataclass(a):
        return type(a) is type(b) and all(
            same(getattr(a, f.name), getattr(b, f.name), depth + 1)
            for f in dataclasses.fields(a) if not f.name.startswith("_"))
    if hasattr(a, "__dict__") and not isinstance(a, type):
        if callable(a) and type(a).__name__ == "function":
            return a.__qualname__ == b.__qualname__
        if not type(a).__module__.startswith("robodyn"):
            return type(a) is type(b)       # another library's handle (a database session)
        keys = [k for k in vars(a) if not k.startswith("_") and not callable(vars(a)[k])]
        return type(a).__name__ == type(b).__name__ and all(
            same(vars(a)[k], vars(b).get(k), depth + 1) for k in keys)
    return True


def probe(obj):
    """Numbers that a copy must reproduce: a numeric form's accelerations at a state, a
    chain's pose, a hybrid system's gap; else None (the fields are compared)."""
    from robodyn import equations, impacts
    from robodyn import rigid_motion as kinematics
    from robodyn.grading import jail
    if isinstance(obj, jail.Unit):
        return [obj.memory, obj.n]
    if isinstance(obj, jail.Launch):
        return [len(obj._made_with[0][1])]
    if isinstance(obj, equations.NumericForm):
        return obj.accelerations(np.full(obj.n, 0.1), np.full(obj.m, 0.2))
    if isinstance(obj, kinematics.SerialChain):
        from robodyn import dynamics
        q = np.linspace(0.1, 0.6, obj.n)
        return np.concatenate([kinematics.fk_space(obj, q).ravel(),
                               dynamics.crba(obj, q).ravel()])
    if isinstance(obj, impacts.HybridSystem):
        return [s.phi(np.full(obj.n, 0.3)) for s in obj.surfaces]
    if hasattr(obj, "accelerations") and hasattr(obj, "vms"):
        q = np.full(obj.vms.chain.n, 0.3)
        nu = np.full(obj.vms.dof, 0.2)
        return obj.accelerations(q, nu)
    return None


def test_every_public_class_has_an_instance_factory():
    missing = sorted(set(CLASSES) - set(FACTORIES))
    assert not missing, f"public classes without an instance factory here: {missing}"
    assert not set(FACTORIES) - set(CLASSES), sorted(set(FACTORIES) - set(CLASSES))


@pytest.mark.parametrize("q", sorted(CLASSES))
def test_a_public_object_pickles_and_gives_equal_numbers(q):
    if q not in FACTORIES:
        pytest.skip("no factory (test_every_public_class_has_an_instance_factory fails)")
    obj = instance(q)
    a = probe(obj)                      # used first: its caches (compiled handles) filled
    copy = pickle.loads(pickle.dumps(obj))
    assert type(copy).__qualname__ == type(obj).__qualname__
    if dataclasses.is_dataclass(copy):          # every field there, caches too (emptied)
        missing = [f.name for f in dataclasses.fields(copy) if not hasattr(copy, f.name)]
        assert not missing, (q, missing)
    assert q in REMADE or same(obj, copy), q
    if a is not None:
        assert np.array_equal(np.asarray(a, dtype=float), np.asarray(probe(copy), dtype=float))


@pytest.mark.parametrize("q", sorted(FUNCTIONS))
def test_a_public_function_pickles_as_itself(q):
    f = FUNCTIONS[q]
    assert pickle.loads(pickle.dumps(f)) is f


LOADER = """
import pickle, sys
blobs, failed = pickle.load(sys.stdin.buffer), []
for q, blob in blobs.items():
    try:
        pickle.loads(blob)
    except Exception as err:
        failed.append(f"{q}: {type(err).__name__}: {err}"[:300])
print("\\n".join(failed))
"""


def test_public_objects_load_in_a_fresh_process():
    """A pickle is read where it was not written: every instance, its caches filled (compiled
    handles included), loads in a new interpreter that has imported nothing of robodyn."""
    import os
    import subprocess
    import sys
    blobs = {}
    for q in sorted(set(CLASSES) & set(FACTORIES)):
        obj = instance(q)
        probe(obj)
        blobs[q] = pickle.dumps(obj)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    out = subprocess.run([sys.executable, "-c", LOADER], input=pickle.dumps(blobs),
                         capture_output=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr.decode()[-2000:]
    assert not out.stdout.decode().strip(), out.stdout.decode()
