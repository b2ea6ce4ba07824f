"""Every notebook runs clean in the reader's set (issue 39, item 1).

The claim: every chapter (and problem set) of the book runs without an error output in a venv
made from ``requirements-reader.txt`` alone, what ``make lab`` gives a reader.

How it is proven without running the book twice. ``make test`` already executes every notebook
under nbval (about half of its ten minutes); running them all again in a second venv would
push it past its budget. So nbval's one pass runs *in the reader's venv*: ``make test`` makes
``.venv-reader`` first (``make reader``, the install of ``make lab``) and passes
``--nbval-kernel-name robodyn-reader``, a kernelspec kept inside that venv whose Python is the
venv's (``JUPYTER_PATH`` points nbval at it). pytest and nbval stay in ``.venv``; every cell
runs in the reader's Python, so an import of anything outside the reader's set (a reference
library, a test tool) fails the notebook there, with its traceback, as it would in JupyterLab.

The tests here hold that arrangement in place, and check what the execution alone would not:

- the Makefile's test recipe runs nbval in that kernel, over ``book/`` (every page of the toc);
- the kernel starts and is the reader's venv's Python;
- the venv holds the reader's set *alone*: its record of the set's hash is the current one (the
  Makefile makes it again from nothing when ``requirements-reader.txt`` or
  ``lib/pyproject.toml`` changes), and every installed distribution is required, directly or
  through its dependencies, by the set (no pytest, nbval, nbgrader, jupyter-book...);
- a fast static check, useful where a single notebook is run with ``--nbval-current-env``:
  every module any notebook imports is found in the reader's venv.
"""
from __future__ import annotations

import ast
import hashlib
import json
import os
import pathlib
import re
import subprocess
import textwrap

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
MAKEFILE = (ROOT / "Makefile").read_text()


def _variable(name):
    m = re.search(rf"^{name}\s*:?\??=\s*(.+)$", MAKEFILE, re.M)
    assert m, f"Makefile: no {name}"
    return m.group(1).strip()


READER_VENV = ROOT / _variable("READER_VENV")
READER_PYTHON = READER_VENV / "bin" / "python"
KERNEL = _variable("READER_KERNEL")
KERNELS = READER_VENV / "test-kernels"


def _need_venv():
    if not READER_PYTHON.exists():
        pytest.fail(f"no reader's venv at {READER_VENV}: `make reader` makes it (make test "
                    "does so before running the tests)")


def _recipe(target):
    m = re.search(rf"^{target}:.*\n((?:\t.*\n)+)", MAKEFILE, re.M)
    assert m, f"Makefile: no {target} target"
    return m.group(0)


def test_make_test_runs_the_notebooks_in_the_readers_kernel():
    """make test depends on the reader's venv and runs nbval in its kernel, over book/."""
    recipe = _recipe("test")
    assert "$(READER_INSTALLED)" in recipe.splitlines()[0], recipe
    assert "--nbval-kernel-name $(READER_KERNEL)" in recipe, recipe
    assert "JUPYTER_PATH=$(READER_KERNELS)" in recipe, recipe
    assert "--nbval-current-env" not in recipe, "nbval would run in .venv, not the reader's set"
    assert re.search(r"\sbook\s", recipe), "make test must collect book/ (every chapter)"
    assert _variable("READER_KERNELS") == "$(abspath $(READER_VENV))/test-kernels"


def _toc_notebooks():
    from sphinx_external_toc.parsing import parse_toc_yaml
    pages = parse_toc_yaml(ROOT / "_toc.yml")
    return sorted(ROOT / f"{doc}.ipynb" for doc in pages if (ROOT / f"{doc}.ipynb").exists())


def test_every_notebook_of_the_toc_is_collected_by_nbval():
    """Every notebook of the toc lies under book/ (which make test hands nbval) and has code."""
    notebooks = _toc_notebooks()
    assert len(notebooks) >= 40, len(notebooks)
    for nb in notebooks:
        assert nb.is_relative_to(ROOT / "book"), nb


def test_the_kernel_is_the_readers_python():
    """The kernelspec make test names starts, and its Python is the reader's venv's."""
    _need_venv()
    from jupyter_client.manager import start_new_kernel
    spec = json.loads((KERNELS / "kernels" / KERNEL / "kernel.json").read_text())
    assert spec["argv"][0] == str(READER_PYTHON.absolute()), spec
    old = os.environ.get("JUPYTER_PATH")
    os.environ["JUPYTER_PATH"] = str(KERNELS)
    try:
        km, kc = start_new_kernel(kernel_name=KERNEL, startup_timeout=120)
    finally:
        os.environ.pop("JUPYTER_PATH") if old is None else os.environ.update(JUPYTER_PATH=old)
    try:
        out = []
        kc.execute_interactive("import sys; print(sys.prefix)", timeout=60,
                               output_hook=lambda m: out.append(m["content"].get("text", "")))
        assert pathlib.Path("".join(out).strip()) == READER_VENV.absolute(), out
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def _set_hash():
    data = b"".join((ROOT / f).read_bytes() for f in ("requirements-reader.txt",
                                                      "lib/pyproject.toml"))
    return hashlib.sha256(data).hexdigest()[:16]


CLOSURE = textwrap.dedent(r"""
    import json, re, sys
    from importlib import metadata
    from packaging.requirements import Requirement
    def norm(n): return re.sub(r"[-_.]+", "-", n).lower()
    dists = {norm(d.metadata["Name"]): d for d in metadata.distributions()}
    todo = []
    for line in open(sys.argv[1]):
        line = line.split("#")[0].strip()
        if line.startswith("-e"):
            todo.append(("robodyn", frozenset()))
        elif line:
            r = Requirement(line); todo.append((norm(r.name), frozenset(r.extras)))
    needed = set()
    while todo:
        name, extras = todo.pop()
        if (name, extras) in needed: continue
        needed.add((name, extras))
        d = dists.get(name)
        if d is None: continue
        for text in d.requires or []:
            r = Requirement(text)
            if r.marker is None or any(r.marker.evaluate({"extra": e}) for e in extras or {""}):
                todo.append((norm(r.name), frozenset(r.extras)))
    names = {n for n, _ in needed}
    print(json.dumps({"installed": sorted(dists), "missing": sorted(names - set(dists)),
                      "extra": sorted(set(dists) - names - {"pip", "setuptools", "wheel"})}))
""")


def test_the_venv_holds_the_readers_set_alone():
    """Made from the current set (hash), and nothing installed that the set does not require."""
    _need_venv()
    recorded = (READER_VENV / ".installed").read_text().strip()
    assert recorded == _set_hash(), (
        f"{READER_VENV} was made from another reader's set ({recorded}, now {_set_hash()}): "
        f"rm -rf {READER_VENV.name} && make reader makes it again")
    out = subprocess.run([str(READER_PYTHON), "-c", CLOSURE, str(ROOT / "requirements-reader.txt")],
                         capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-3000:]
    report = json.loads(out.stdout)
    assert not report["missing"], f"required but not installed: {report['missing']}"
    assert not report["extra"], (f"installed beyond the reader's set: {report['extra']} "
                                 f"(rm -rf {READER_VENV.name} && make reader makes it afresh)")
    for tool in ("pytest", "nbval", "nbgrader", "jupyter-book"):
        assert tool not in report["installed"], tool


def _imports(notebook):
    """Top-level module names imported by the notebook's code cells (IPython magics skipped)."""
    names = set()
    for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]:
        if cell["cell_type"] != "code":
            continue
        src = "".join(cell["source"])
        src = "\n".join("" if line.lstrip().startswith(("%", "!")) else line
                        for line in src.splitlines())
        for node in ast.walk(ast.parse(src)):
            if isinstance(node, ast.Import):
                names.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names.add(node.module.split(".")[0])
    return names


def _collected_notebooks():
    """Every notebook nbval runs in make test: all of book/ (the toc's chapters and problem
    sets, the instructor notebooks of book/assignments/source, the template)."""
    return sorted(p for p in (ROOT / "book").rglob("*.ipynb")
                  if ".ipynb_checkpoints" not in p.parts and "_build" not in p.parts)


def test_every_import_of_the_notebooks_is_in_the_readers_set():
    """Every module a notebook nbval runs imports is found in the reader's venv (google.colab
    aside: the Colab cell imports nothing of it, it only looks in sys.modules)."""
    _need_venv()
    wanted = {}
    notebooks = _collected_notebooks()
    assert set(_toc_notebooks()) <= set(notebooks)
    for nb in notebooks:
        for name in _imports(nb):
            wanted.setdefault(name, []).append(str(nb.relative_to(ROOT)))
    assert {"robodyn", "numpy", "modern_robotics", "pinocchio"} <= set(wanted), sorted(wanted)
    probe = ("import importlib.util, json, sys\n"
             "print(json.dumps([n for n in sys.argv[1:] "
             "if importlib.util.find_spec(n) is None]))")
    out = subprocess.run([str(READER_PYTHON), "-c", probe, *sorted(wanted)], capture_output=True,
                         text=True, timeout=120, cwd="/")
    assert out.returncode == 0, out.stderr[-2000:]
    missing = json.loads(out.stdout)
    assert not missing, "not in the reader's set: " + "; ".join(
        f"{m} (imported by {', '.join(wanted[m][:3])})" for m in missing)
