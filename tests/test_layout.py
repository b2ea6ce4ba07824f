"""The house by concept (issue 37, point 8): robodyn's packages read like the book's contents.

Each package has one public face (its ``__init__`` with ``__all__``) and rooms named by concept;
no module is named for its size; no import circle (each module imports alone, in a fresh
process); the ground floor imports nothing of the rooms above it; no ``importlib.import_module``
outside ``grading``.
"""
import ast
import os
import pathlib
import subprocess
import sys

import pytest

import robodyn

ROOT = pathlib.Path(robodyn.__file__).parent
PACKAGES = ("rigid_motion", "lagrange", "dynamics", "constraints", "impacts", "walking", "kane",
            "port_hamiltonian", "answers")
GROUND = ("errors", "_boundary", "_value_checks", "_meaning_checks", "kinds", "text_parser",
          "_trig_ring", "_files")
"""The ground floor: what every room stands on, knowing none of them."""
SIZE_WORDS = ("more", "extra", "rest", "part2", "continued", "helpers", "misc", "utils", "split")
"""Words that name a module by how much it holds, not by what it is about."""


def _modules():
    out = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if parts[-1] == "__main__":
            continue
        out.append((".".join(parts), path))
    return out


def _imports(path, modname):
    """The robodyn modules ``path`` imports (top level and inside functions), absolute."""
    tree = ast.parse(path.read_text())
    pkg = modname if path.name == "__init__.py" else modname.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg.split(".")[:len(pkg.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "robodyn":
                continue
            found.add(target)
            for a in node.names:
                found.add(f"{target}.{a.name}")
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "robodyn")
    return found


def test_each_package_has_one_face_with_all():
    for name in PACKAGES + ("grading", "viz"):
        mod = __import__(f"robodyn.{name}", fromlist=["_"])
        assert (ROOT / name / "__init__.py").exists(), name
        if name in PACKAGES:
            assert isinstance(getattr(mod, "__all__", None), list), name
            for n in mod.__all__:
                assert hasattr(mod, n), f"robodyn.{name}.{n}"
            rooms = [p.stem for p in (ROOT / name).glob("*.py") if p.stem != "__init__"]
            assert all(r.startswith("_") for r in rooms), (name, rooms)


def test_no_module_named_for_its_size():
    for modname, _ in _modules():
        words = modname.rpartition(".")[2].strip("_").split("_")
        assert not set(words) & set(SIZE_WORDS), modname
    top = {p.stem for p in ROOT.glob("*.py")}
    for old in ("_inertia", "_kane_nested", "_numeric_constraints", "_ph_forms", "_ph_checks",
                "_answer_values", "_hybrid_segments", "_rigid_body", "_gait_kernel",
                "_problem_checks", "_key_hash", "_derivation", "geometry", "simulation"):
        assert old not in top, f"robodyn.{old} lives in the package of its concept"


def test_ground_floor_knows_nothing_above():
    for name in GROUND:
        path = ROOT / f"{name}.py"
        above = {m for m in _imports(path, f"robodyn.{name}")
                 if m.split(".")[1:2] and m.split(".")[1] not in GROUND}
        assert not above, (name, sorted(above))


def test_no_import_module_in_the_library_outside_grading():
    for modname, path in _modules():
        if modname.startswith("robodyn.grading"):
            continue
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr == "import_module":
                pytest.fail(f"{modname}: importlib.import_module")
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "__import__":
                arg = node.args[0] if node.args else None
                if not (isinstance(arg, ast.Constant) and not arg.value.startswith("robodyn")):
                    pytest.fail(f"{modname}: __import__ of a module named at run time")


@pytest.mark.slow
def test_each_module_imports_alone_without_a_circle():
    """Every module imported first, alone (robodyn forgotten before each one, in one fresh
    process: numpy and sympy stay loaded), so a circle shows as the ImportError of a partly
    initialised module."""
    names = [m for m, _ in _modules() if m != "robodyn"]
    code = ("import importlib, sys, traceback\n"
            "import numpy, sympy, scipy.integrate, scipy.optimize, scipy.linalg\n"
            "bad = []\n"
            "for m in sys.argv[1:]:\n"
            "    for k in [k for k in sys.modules if k == 'robodyn' or k.startswith('robodyn.')]:\n"
            "        del sys.modules[k]\n"
            "    try:\n"
            "        importlib.import_module(m)\n"
            "    except Exception as e:\n"
            "        bad.append((m, repr(e)))\n"
            "print(bad)\n"
            "sys.exit(1 if bad else 0)\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT.parent) + os.pathsep
               + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-c", code, *names], capture_output=True, text=True,
                       env=env, timeout=900)
    assert r.returncode == 0, r.stdout + r.stderr


def test_the_package_graph_has_no_circle():
    """Between packages (a room of a package counted as the package), the imports at module
    level form no circle."""
    def unit(m):
        parts = m.split(".")
        return parts[1] if len(parts) > 1 and parts[1] in PACKAGES else m
    graph = {}
    for modname, path in _modules():
        if not modname.startswith("robodyn.") or modname.split(".")[1] in ("grading", "viz"):
            continue
        tree = ast.parse(path.read_text())
        pkg = modname if path.name == "__init__.py" else modname.rpartition(".")[0]
        for node in tree.body:          # module level only: lazy imports inside functions may
            if not isinstance(node, ast.ImportFrom) or not node.level:   # reach up
                continue
            base = pkg.split(".")[:len(pkg.split(".")) - node.level + 1]
            target = ".".join(base + ([node.module] if node.module else []))
            targets = [target] if node.module else [f"{target}.{a.name}" for a in node.names]
            for t in targets:
                if t == "robodyn" or t.split(".")[1] in ("_boundary",):
                    continue
                a, b = unit(modname), unit(t)
                if a != b:
                    graph.setdefault(a, set()).add(b)

    def reach(a, seen):
        for b in graph.get(a, ()):
            if b not in seen:
                seen.add(b)
                reach(b, seen)
        return seen
    for a in graph:
        assert a not in reach(a, set()), f"import circle through {a}"


def test_the_value_checks_know_nothing_of_the_meaning_checks():
    """What a value is (``_value_checks``) is checked before what it means
    (``_meaning_checks``, which stands on it): never the reverse."""
    assert not {m for m in _imports(ROOT / "_value_checks.py", "robodyn._value_checks")
                if m.startswith("robodyn._meaning_checks")}
    assert "robodyn._value_checks" in _imports(ROOT / "_meaning_checks.py",
                                               "robodyn._meaning_checks")


def test_the_symbolic_and_numeric_coriolis_matrices_keep_their_names():
    """Part II is two packages: the symbolic equations (``robodyn.lagrange``) and the numeric
    O(n) algorithms (``robodyn.dynamics``); ``robodyn.coriolis_matrix`` is the symbolic one."""
    assert robodyn.coriolis_matrix is robodyn.lagrange.coriolis_matrix
    assert robodyn.dynamics.coriolis_matrix is not robodyn.lagrange.coriolis_matrix
    assert robodyn.lagrange.coriolis_matrix.__module__ == "robodyn.lagrange._euler_lagrange"
    assert robodyn.dynamics.coriolis_matrix.__module__ == "robodyn.dynamics._recursions"
