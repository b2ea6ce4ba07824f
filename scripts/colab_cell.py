"""The hidden first code cell of every notebook of the book: in Google Colab only, it installs
the book's own version of ``robodyn`` (the git tag ``repository.release`` of ``_config.yml``, read
through scripts/site_address.py; while that tag does not exist, as before the first release, the
book's branch ``repository.branch``) from the book's repository, with the extras the notebook
needs (``viz``; ``reference`` where a check cell compares with Modern Robotics or Pinocchio), and
stops with an error that names the cause (git's or pip's error line) and the fix when the install
fails, instead of leaving the reader a ``ModuleNotFoundError`` one cell later. Binder and a local setup already have the library, so
there the cell does nothing.

The cell's text is made here, from the one place the book's address is written; every notebook
carries exactly this text (tests/test_reader_install.py), and ::

    python scripts/colab_cell.py           # writes it into every notebook under book/

puts it there (a new notebook copied from book/template.ipynb has it already).

>>> from site_address import SiteAddress
>>> src = cell_source(SiteAddress("https://o.github.io/r/", "https://github.com/o/r", "main",
...                               "v9.9"))
>>> 'ROBODYN_REPO = "https://github.com/o/r"' in src and 'ROBODYN_REF = "v9.9"' in src
True
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from site_address import site_address  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TAG = "remove-cell"
"""The cell's tag: the rendered book hides it."""
MARKER = '"google.colab" in sys.modules'
"""Text by which an older form of the cell is recognised (it is replaced, never added twice)."""

TEMPLATE = """\
# In Google Colab only: install the book's own version of its library (Binder and a local
# setup already have it): the release tag, or the book's branch while no release is tagged.
# If that fails, stop here and say why, and what to do.
import importlib.util
import subprocess
import sys

ROBODYN_REPO = "{repository_url}"
ROBODYN_REF = "{release}"
ROBODYN_BRANCH = "{branch}"
ROBODYN_EXTRAS = "{extras}"
if "google.colab" in sys.modules and importlib.util.find_spec("robodyn") is None:
    def _said(run):
        lines = [l.strip() for l in (run.stderr or run.stdout).splitlines() if l.strip()]
        errors = [l for l in lines if l.lower().startswith(("error:", "fatal:"))
                  and "subprocess-exited-with-error" not in l]
        said = errors or lines or ["(no message)"]
        return said[-1]
    tags = subprocess.run(["git", "ls-remote", ROBODYN_REPO, f"refs/tags/{{ROBODYN_REF}}"],
                          capture_output=True, text=True)
    if tags.returncode:
        raise RuntimeError(f"Could not reach {{ROBODYN_REPO}}: git said: {{_said(tags)}}\\n"
                           "Fix: connect this notebook to the internet (Colab: Runtime > "
                           "Disconnect and delete runtime, then run this cell again).")
    ref = ROBODYN_REF if tags.stdout.strip() else ROBODYN_BRANCH
    if ref != ROBODYN_REF:
        print(f"robodyn: release {{ROBODYN_REF}} is not tagged yet: installing the book's "
              f"branch {{ref}}.")
    url = f"robodyn[{{ROBODYN_EXTRAS}}] @ git+{{ROBODYN_REPO}}@{{ref}}#subdirectory=lib"
    pip = subprocess.run([sys.executable, "-m", "pip", "install", "-q", url],
                         capture_output=True, text=True)
    if pip.returncode:
        offline = any(w in pip.stderr for w in ("Could not resolve", "Temporary failure",
                                                "Network is unreachable", "timed out"))
        fix = ("connect this notebook to the internet and run this cell again" if offline else
               f"run this cell again; if pip says the same, report it at {{ROBODYN_REPO}}/issues "
               f"with pip's output (below)")
        raise RuntimeError(f"Could not install robodyn from {{url}}: pip said: {{_said(pip)}}\\n"
                           f"Fix: {{fix}}.\\npip's output:\\n{{pip.stderr[-2000:]}}")
    importlib.invalidate_caches()"""

REFERENCE_MODULES = {"modern_robotics", "pinocchio"}
"""Reference libraries some check cells compare with: a notebook that imports one installs
robodyn's ``reference`` extra too (README, "Running the notebooks yourself")."""


ROBOT_MODULES = {"example_robot_data", "yourdfpy", "trimesh"}
"""What real robots need (robodyn.urdf): a notebook that loads a URDF installs robodyn's
``robots`` extra too."""


def extras_for(nb) -> str:
    """The extras of robodyn a notebook needs on Colab: ``viz``, plus ``reference`` when its code
    imports a reference library, plus ``robots`` when it reads a robot's URDF.

    >>> extras_for({"cells": [{"cell_type": "code", "source": ["import pinocchio as pin"]}]})
    'viz,reference'
    >>> extras_for({"cells": [{"cell_type": "code", "source": "panda = urdf.load_urdf('panda')"}]})
    'viz,robots'
    >>> extras_for({"cells": [{"cell_type": "code", "source": "import numpy"}]})
    'viz'
    >>> extras_for({"cells": [{"cell_type": "code", "source":
    ...     "### BEGIN HIDDEN TESTS\\nimport pinocchio\\n### END HIDDEN TESTS"}]})
    'viz'
    """
    code = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
    # an instructor notebook's hidden tests are not in the student's copy (nbgrader strips
    # them, and the grader runs them in its own venv): both copies get the student's extras
    code = re.sub(r"### BEGIN HIDDEN TESTS.*?### END HIDDEN TESTS", "", code, flags=re.S)
    imported = set(re.findall(r"^\s*(?:import|from)\s+(\w+)", code, re.M))
    extras = ["viz"]
    if imported & REFERENCE_MODULES:
        extras.append("reference")
    if imported & ROBOT_MODULES or re.search(r"\burdf\b", code):
        extras.append("robots")
    return ",".join(extras)


def cell_source(address=None, extras="viz") -> str:
    """The cell's text for the book's address (default: ``_config.yml``'s) and the extras of
    robodyn the notebook needs (:func:`extras_for`)."""
    address = site_address() if address is None else address
    return TEMPLATE.format(repository_url=address.repository_url, release=address.release,
                           branch=address.branch, extras=extras)


def notebooks(root=ROOT):
    """Every notebook of the book (chapters, problem sets and their sources, the template)."""
    return sorted(p for p in (Path(root) / "book").rglob("*.ipynb")
                  if ".ipynb_checkpoints" not in p.parts and "_build" not in p.parts)


def first_code_cell(nb):
    return next((c for c in nb["cells"] if c["cell_type"] == "code"), None)


def write_cell(path, source) -> bool:
    """Put ``source`` into the notebook's first code cell (which must be an install cell, old or
    new form), hidden and without outputs; True if the file changed. The notebook's JSON keeps
    its layout (nbformat's: one-space indent, unicode as is)."""
    raw = Path(path).read_text(encoding="utf-8")
    nb = json.loads(raw)
    cell = first_code_cell(nb)
    if cell is None or MARKER not in "".join(cell["source"]):
        raise SystemExit(f"colab_cell: {path}: the first code cell is not the Colab install "
                         f"cell; copy it from book/template.ipynb")
    cell["source"] = source.splitlines(keepends=True)
    tags = cell.setdefault("metadata", {}).setdefault("tags", [])
    if TAG not in tags:
        tags.append(TAG)
    cell["outputs"], cell["execution_count"] = [], None
    out = json.dumps(nb, indent=1, ensure_ascii=False) + "\n"
    if out != raw:
        Path(path).write_text(out, encoding="utf-8")
    return out != raw


def main():
    changed = [p for p in notebooks()
               if write_cell(p, cell_source(extras=extras_for(json.loads(p.read_text(
                   encoding="utf-8")))))]
    print(f"colab_cell: {len(changed)} notebooks changed")


if __name__ == "__main__":
    main()
