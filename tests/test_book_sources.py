"""Every folder a command of the README creates stays out of the book (issue 39, item 6).

After ``make lab``, ``make book`` read the Markdown and reST files inside ``.venv-reader`` and
``-W`` failed the build on them: ``only_build_toc_files`` drops the pages outside ``_toc.yml``,
but its search for them (sphinx-external-toc's ``glob('**')``) skips hidden folders, while
Sphinx's own discovery walks into them. A full build is too slow for a test, so this runs what
decides it: the book build's source discovery, with Jupyter Book's own configuration of
``_config.yml`` (``jupyter_book.config.get_final_config``, as ``jupyter-book build`` calls it)
and Sphinx's ``env.find_files`` (what ``make book`` reads before anything is executed), in a
subprocess, on

- a tree holding what the README's commands leave, in a reader's order: ``make lab``'s install
  (the reader's venv, named as in the Makefile, with ``.md``/``.rst``/``.ipynb`` files in its
  site-packages like the real one's), ``make book``'s and ``make test``'s folders,
  ``pip install ./lib``'s build folders, the grader's submissions, CSV, gradebook and feedback
  pages, JupyterLab's checkpoints;
- and the repository itself, with whatever ``make lab`` made there (``make test`` installs the
  reader's venv first).

Both must find exactly the pages of ``_toc.yml``. Without ``.venv-reader``/hidden folders in
``exclude_patterns`` the first finds ``.venv-reader/.../README`` and fails.
"""
from __future__ import annotations

import json
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]

DISCOVER = r"""
import json, sys
from pathlib import Path
from jupyter_book.config import get_final_config
from sphinx.application import Sphinx
from sphinx.util.docutils import docutils_namespace, patch_docutils
src, out = Path(sys.argv[1]).resolve(), Path(sys.argv[2])
config, _ = get_final_config(
    user_yaml=src / "_config.yml", sourcedir=src, use_external_toc=True,
    cli_config={"external_toc_path": (src / "_toc.yml").as_posix(),
                "latex_individualpages": False})
with patch_docutils(None), docutils_namespace():
    app = Sphinx(srcdir=src, confdir=None, outdir=out / "html", doctreedir=out / "doctrees",
                 buildername="html", confoverrides=config, status=None, warning=None,
                 freshenv=True)
    app.env.find_files(app.config, app.builder)
    print(json.dumps(sorted(app.env.found_docs)))
"""


def _makefile_variable(name):
    m = re.search(rf"^{name}\s*\?=\s*(\S+)", (ROOT / "Makefile").read_text(), re.M)
    assert m, f"Makefile: no {name} ?= ..."
    return m.group(1)


def _toc_pages():
    from sphinx_external_toc.parsing import parse_toc_yaml
    return sorted(parse_toc_yaml(ROOT / "_toc.yml"))


def _found_docs(src, tmp):
    out = subprocess.run([sys.executable, "-c", DISCOVER, str(src), str(tmp / "out")],
                         capture_output=True, text=True, timeout=300, cwd=tmp)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def _pages(folder, names=("README.md", "index.rst", "demo.ipynb")):
    """A folder with a page of each source kind, as a venv's site-packages has."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        if name.endswith(".ipynb"):
            text = json.dumps({"cells": [{"cell_type": "markdown", "metadata": {},
                                          "source": "# stray"}], "metadata": {},
                               "nbformat": 4, "nbformat_minor": 5})
        elif name.endswith(".rst"):
            text = "Stray\n=====\n\n.. unknown-directive::\n"
        else:
            text = "# Stray\n\n{unknown-role}`x`\n"
        (folder / name).write_text(text)


def _reader_tree(tmp):
    """The book's sources plus what a reader's commands leave, in the order a reader runs them."""
    tree = tmp / "clone"
    tree.mkdir()
    for name in ("_config.yml", "_toc.yml"):
        (tree / name).write_text((ROOT / name).read_text())
    (tree / "book").symlink_to(ROOT / "book", target_is_directory=True)
    # make lab: the reader's venv (its site-packages hold README.md / .rst / notebooks)
    reader = _makefile_variable("READER_VENV")
    for sub in ("lib/python3.11/site-packages/somepkg", "lib64/python3.11/site-packages/docs",
                "share/jupyter/lab/static", "test-kernels/kernels/robodyn-reader"):
        _pages(tree / reader / sub)
    _pages(tree / "_assets" / "plotly")
    # JupyterLab's Run All / save: checkpoints beside the notebooks
    _pages(tree / "notes" / ".ipynb_checkpoints", ("x-checkpoint.ipynb",))
    # make book, make test, make pdf
    for folder in (_makefile_variable("VENV") + "/lib/python3.11/site-packages/pkg", "_build/html",
                   "_build/.doctrees", ".jupyter_cache", "_test_assets/axe", ".pytest_cache"):
        _pages(tree / folder)
    # pip install "./lib[viz]" (lib/setup.py builds elsewhere; an older setuptools would not)
    _pages(tree / "lib" / "build" / "lib" / "robodyn")
    _pages(tree / "lib" / "robodyn.egg-info")
    # the grader (README, "Problem sets for courses"): submissions, CSV, gradebook, feedback
    _pages(tree / "submissions" / "part1", ("alice.ipynb", "bob.ipynb"))
    (tree / "scores_part1.csv").write_text("student,score\n")
    (tree / "gradebook.db").write_bytes(b"")
    _pages(tree / "feedback", ("alice.html",))
    return tree


@pytest.mark.slow
def test_readers_folders_stay_out_of_the_book(tmp_path):
    """On a tree with every folder the README's commands create, the book's source discovery
    finds exactly the pages of _toc.yml."""
    tree = _reader_tree(tmp_path)
    found = _found_docs(tree, tmp_path)
    pages = _toc_pages()
    stray = [d for d in found if d not in pages]
    assert not stray, f"the book build would read these files (exclude_patterns): {stray[:20]}"
    assert found == pages, sorted(set(pages) - set(found))


def test_repository_after_make_lab(tmp_path):
    """The repository as it is (make test has made the reader's venv beside it first): the
    build reads the pages of _toc.yml and nothing else."""
    found = _found_docs(ROOT, tmp_path)
    stray = [d for d in found if d not in _toc_pages()]
    assert not stray, f"the book build would read: {stray[:20]}"
