"""The library as a reader installs it, outside this repository.

- The wheel built from lib/ carries every file of the package (the compiled engine's C source
  among them: lib/pyproject.toml's package data), and installed into a fresh venv outside the
  repository it compiles ``_engine.c`` on first use and runs it: no fallback warning, the same
  numbers as the numpy algorithms.
- The Colab install cell of every notebook (scripts/colab_cell.py) installs the book's own version
  (the tag ``repository.release`` of _config.yml, "v" + robodyn's version; the branch while that
  tag does not exist) when it runs under a stand-in ``google.colab`` module, from a local git
  repository in place of GitHub, and raises an error naming the cause and the fix when the
  install fails; outside Colab it does nothing.
- ``pip install ./lib`` leaves no ``lib/build/`` (nor egg-info) behind.

Offline and quick: the fresh venv sees the shared venv's packages (numpy, scipy, sympy, pip,
setuptools...) through a ``.pth`` file that points to a folder of links to them, robodyn's own
files left out, so only robodyn is installed into it (``--no-index --no-deps``).
"""
from __future__ import annotations

import importlib.util
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _load(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(name, module)
    spec.loader.exec_module(module)
    return module


site_address = _load("site_address")
colab_cell = _load("colab_cell")
ADDRESS = site_address.site_address()


def _run(cmd, cwd, env=None, timeout=120):
    out = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True,
                         text=True, timeout=timeout)
    assert out.returncode == 0, f"{cmd} failed:\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
    return out


def _package_files():
    """The package's files as git sees them (tracked, or new and not ignored), relative to lib/."""
    out = _run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "lib/robodyn"],
               cwd=ROOT).stdout.split()
    return sorted(str(pathlib.Path(f).relative_to("lib")) for f in out if (ROOT / f).exists())


def _clean_env(**extra):
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PIP_REQUIRE_VIRTUALENV")}
    env.update(PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1", **extra)
    return env


@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    """A fresh venv outside the repository (no robodyn in it) that sees the shared venv's other
    packages, and a copy of lib/ (the package's files only) to build from."""
    tmp = tmp_path_factory.mktemp("reader")
    assert ROOT not in tmp.parents
    src = tmp / "src"
    for rel in _package_files() + ["pyproject.toml", "setup.py"]:
        (src / "lib" / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / "lib" / rel, src / "lib" / rel)
    venv = tmp / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", venv], cwd=tmp)
    python = venv / "bin" / "python"
    purelib = pathlib.Path(_run([python, "-c", "import sysconfig; print(sysconfig.get_path("
                                 "'purelib'))"], cwd=tmp).stdout.strip())
    links = tmp / "shared"
    links.mkdir()
    shared = pathlib.Path(sysconfig.get_path("purelib"))
    for entry in shared.iterdir():
        if not re.match(r"(?i)(__editable__)?_*robodyn", entry.name) and entry.suffix != ".pth":
            (links / entry.name).symlink_to(entry)
    (purelib / "shared_packages.pth").write_text(f"{links}\n")
    return {"tmp": tmp, "src": src / "lib", "python": python, "purelib": purelib}


@pytest.mark.slow
def test_wheel_carries_the_package_and_its_engine_compiles(fresh):
    """Build the wheel (offline), check it holds every file of the package, install it into the
    fresh venv and run the dynamics there from a folder outside the repository: the engine is
    compiled from the installed _engine.c into a new cache, no warning, numbers equal to the
    numpy algorithms'."""
    tmp, python = fresh["tmp"], fresh["python"]
    dist = tmp / "dist"
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
          "--no-index", "-q", "-w", dist, fresh["src"]], cwd=tmp, env=_clean_env())
    wheel, = dist.glob("robodyn-*.whl")
    left = sorted(p.name for p in fresh["src"].iterdir() if p.name not in ("robodyn",
                  "pyproject.toml", "setup.py"))
    assert not left, f"the build left {left} in lib/ (lib/setup.py builds in a temporary folder)"
    with zipfile.ZipFile(wheel) as zf:
        inside = set(zf.namelist())
    missing = [f for f in _package_files() if f not in inside and "__pycache__" not in f]
    assert not missing, f"files of the package missing from the wheel: {missing}"
    _run([python, "-m", "pip", "install", "-q", "--no-deps", "--no-index", wheel], cwd=tmp,
         env=_clean_env())
    check = """
import warnings
warnings.simplefilter("error")          # the engine's fallback warning would fail here
import numpy as np
import robodyn
from robodyn import dynamics
from robodyn.models import planar_rr
assert robodyn.__file__.startswith(PURELIB), robodyn.__file__
assert dynamics._recursions._engine() is not None, "no compiled engine"
rng = np.random.default_rng(1)
chain, g = planar_rr(), [0, -9.81, 0]
q, qd, tau = (rng.normal(size=(50, 2)) for _ in range(3))
fast = dynamics.forward_dynamics(chain, q, qd, tau, gravity=g)
dynamics._recursions.ENGINE = "numpy"
slow = dynamics.forward_dynamics(chain, q, qd, tau, gravity=g)
assert np.allclose(fast, slow, rtol=1e-10, atol=1e-10), abs(fast - slow).max()
print("compiled", len(list(CACHE.iterdir())))
""".replace("PURELIB", repr(str(fresh["purelib"]))).replace(
        "CACHE", f"__import__('pathlib').Path({str(tmp / 'cache')!r})")
    out = _run([python, "-c", check], cwd=tmp, env=_clean_env(ROBODYN_CACHE=str(tmp / "cache")))
    assert out.stdout.split()[0] == "compiled" and int(out.stdout.split()[1]) >= 1, out.stdout


def test_package_data_lists_every_non_python_file():
    """A file of the package that is not Python must be package data, or the wheel lacks it
    (the class of the missing _engine.c)."""
    import tomllib
    data = tomllib.loads((ROOT / "lib" / "pyproject.toml").read_text())
    listed = data["tool"]["setuptools"]["package-data"]["robodyn"]
    other = [f for f in _package_files() if not f.endswith(".py")]
    assert other, "expected _engine.c among the package's files"
    unlisted = [f for f in other if not any(pathlib.PurePath(f).relative_to("robodyn")
                                            .match(pattern) for pattern in listed)]
    assert not unlisted, f"not in lib/pyproject.toml's package-data: {unlisted}"


# --------------------------------------------------------------------------
# the Colab install cell
# --------------------------------------------------------------------------

def test_every_notebook_has_the_one_colab_cell():
    """Every notebook's first code cell is exactly scripts/colab_cell.py's cell (run it to fix):
    hidden, no outputs, installing the tag _config.yml names, which is the book's version."""
    import robodyn
    assert ADDRESS.release == f"v{robodyn.__version__}", (
        f"_config.yml repository.release is {ADDRESS.release!r} but robodyn is "
        f"{robodyn.__version__}: the Colab cell must install the book's own version")
    source = colab_cell.cell_source()
    assert f'ROBODYN_REF = "{ADDRESS.release}"' in source
    assert f'ROBODYN_REPO = "{ADDRESS.repository_url}"' in source
    assert f'ROBODYN_BRANCH = "{ADDRESS.branch}"' in source
    notebooks = colab_cell.notebooks()
    assert len(notebooks) > 40
    bad, reference = [], []
    for path in notebooks:
        nb = json.loads(path.read_text(encoding="utf-8"))
        cell = colab_cell.first_code_cell(nb)
        extras = colab_cell.extras_for(nb)
        if extras != "viz":
            reference.append(path.name)
        if cell is None or "".join(cell["source"]) != colab_cell.cell_source(extras=extras):
            bad.append(f"{path.relative_to(ROOT)}: first code cell differs")
        elif colab_cell.TAG not in cell["metadata"].get("tags", []) or cell["outputs"] \
                or cell["execution_count"] is not None:
            bad.append(f"{path.relative_to(ROOT)}: not hidden, or has outputs")
    assert not bad, "\n".join(bad) + "\n(python scripts/colab_cell.py writes the cell)"
    # the chapters whose check cells compare with Modern Robotics or Pinocchio install them
    assert {"03_exponential_coordinates.ipynb", "01_rigid_bodies.ipynb"} <= set(reference)


def _git_repo_with_lib(tmp, src, tag=None, name="origin"):
    """A local git repository with lib/ at its top on the book's branch, tagged ``tag`` if
    given: the stand-in of GitHub."""
    repo = tmp / name
    shutil.copytree(src, repo / "lib")
    env = _clean_env(GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
                     GIT_COMMITTER_EMAIL="t@t")
    cmds = [["init", "-q", "-b", ADDRESS.branch], ["add", "-A"], ["commit", "-q", "-m", "lib"]]
    for cmd in cmds + ([["tag", tag]] if tag else []):
        _run(["git", *cmd], cwd=repo, env=env)
    return repo


def _run_cell(python, source, cwd, colab=True):
    """Run the cell's text (plain Python: no magics) in ``python``, with or without a stand-in
    ``google.colab`` module; then try to import robodyn. Returns the completed process."""
    stand_in = ("import sys, types\n"
                "sys.modules['google'] = types.ModuleType('google')\n"
                "sys.modules['google.colab'] = types.ModuleType('google.colab')\n") if colab else ""
    after = ("\nimport robodyn, sys\nprint('robodyn', robodyn.__version__, robodyn.__file__)")
    return subprocess.run([str(python), "-c", stand_in + source + after], cwd=cwd,
                          env=_clean_env(), capture_output=True, text=True, timeout=120)


def _local(source, repo):
    """The cell's text with a local repository in place of GitHub."""
    local = source.replace(f'ROBODYN_REPO = "{ADDRESS.repository_url}"',
                           f'ROBODYN_REPO = "{repo.as_uri()}"')
    assert local != source
    # PIP_NO_BUILD_ISOLATION=0 turns build isolation off (offline: setuptools from the venv)
    return "import os\nos.environ['PIP_NO_BUILD_ISOLATION'] = '0'\n" + local


def _uninstall(purelib):
    for leftover in purelib.glob("robodyn*"):          # another test may have installed it
        shutil.rmtree(leftover) if leftover.is_dir() else leftover.unlink()


def _installed(done, purelib):
    assert done.returncode == 0, done.stderr[-3000:]
    _, version, where = done.stdout.split()[-3:]
    assert where.startswith(str(purelib)), done.stdout
    return version


@pytest.mark.slow
def test_colab_cell_installs_the_release_or_the_branch(fresh, tmp_path):
    """Under a stand-in google.colab, with the reference extra of a Part VI chapter: from a
    repository that has the release tag, the cell installs the tagged commit (silently); from
    one that has no tag yet (before the first release) it says so and installs the book's
    branch. Outside Colab it installs nothing."""
    python, purelib = fresh["python"], fresh["purelib"]
    _uninstall(purelib)
    source = colab_cell.cell_source(extras="viz,reference")
    tagged = _git_repo_with_lib(tmp_path, fresh["src"], ADDRESS.release, "tagged")
    # the branch moves on after the tag: its version differs from the release's
    env = _clean_env(GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
                     GIT_COMMITTER_EMAIL="t@t")
    toml = tagged / "lib" / "pyproject.toml"
    toml.write_text(re.sub(r'(?m)^version = ".*"$', 'version = "99.0.dev0"', toml.read_text()))
    _run(["git", "commit", "-qam", "after the release"], cwd=tagged, env=env)

    outside = _run_cell(python, _local(source, tagged), tmp_path, colab=False)
    assert outside.returncode != 0 and "No module named 'robodyn'" in outside.stderr, \
        outside.stderr[-2000:]

    done = _run_cell(python, _local(source, tagged), tmp_path)
    assert _installed(done, purelib) == ADDRESS.release.lstrip("v"), done.stdout
    assert "not tagged" not in done.stdout

    _uninstall(purelib)
    untagged = _git_repo_with_lib(tmp_path, fresh["src"], None, "untagged")
    done = _run_cell(python, _local(source, untagged), tmp_path)
    assert _installed(done, purelib) == ADDRESS.release.lstrip("v"), done.stdout
    assert (f"robodyn: release {ADDRESS.release} is not tagged yet: installing the book's "
            f"branch {ADDRESS.branch}.") in done.stdout, done.stdout
    _uninstall(purelib)


def test_colab_cell_names_the_cause_and_the_fix(fresh, tmp_path):
    """When the install fails the cell stops with a RuntimeError naming the cause (git's or
    pip's error line, not pip's closing note) and the fix: an unreachable repository; a tagged
    commit that pip cannot build."""
    python, purelib = fresh["python"], fresh["purelib"]
    _uninstall(purelib)
    source = colab_cell.cell_source()
    gone = _run_cell(python, _local(source, tmp_path / "no-such-repository"), tmp_path)
    assert gone.returncode != 0 and "No module named 'robodyn'" not in gone.stderr
    assert "RuntimeError: Could not reach file://" in gone.stderr, gone.stderr[-3000:]
    assert "git said: fatal: " in gone.stderr and "Fix: connect this notebook to the internet" \
        in gone.stderr, gone.stderr[-3000:]

    broken = tmp_path / "broken-src"
    shutil.copytree(fresh["src"], broken)
    (broken / "pyproject.toml").write_text("[project]\nname = 'robodyn'\nversion = \n")
    repo = _git_repo_with_lib(tmp_path, broken, ADDRESS.release, "broken")
    failed = _run_cell(python, _local(source, repo), tmp_path)
    assert failed.returncode != 0 and "No module named 'robodyn'" not in failed.stderr
    line = next(l for l in failed.stderr.splitlines() if "RuntimeError:" in l)
    assert line.startswith("RuntimeError: Could not install robodyn from robodyn[viz] @ git+file:"), \
        line
    cause = line.split("pip said: ", 1)[1]
    assert "note: This error originates" not in cause and "See above" not in cause, cause
    assert cause.lower().startswith("error:"), cause
    assert "Fix: run this cell again; if pip says the same, report it at" in failed.stderr
