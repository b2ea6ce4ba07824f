"""The hidden first code cell of every notebook of the book: in Google Colab only, it installs
the book's own version of ``robodyn`` (the git tag ``repository.release`` of ``_config.yml``, read
through scripts/site_address.py) from the book's repository, and stops with a clear error when
the install fails (no network, a missing tag) instead of leaving the reader a
``ModuleNotFoundError`` one cell later. Binder and a local setup already have the library, so
there the cell does nothing.

The cell's text is made here, from the one place the book's address is written; every notebook
carries exactly this text (tests/test_reader_install.py), and ::

    python scripts/colab_cell.py           # writes it into every notebook under book/

puts it there (a new notebook copied from book/template.ipynb has it already).

>>> from site_address import SiteAddress
>>> src = cell_source(SiteAddress("https://o.github.io/r/", "https://github.com/o/r", "main",
...                               "v9.9"))
>>> 'ROBODYN_GIT = "git+https://github.com/o/r"' in src and 'ROBODYN_REF = "v9.9"' in src
True
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from site_address import site_address  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TAG = "remove-cell"
"""The cell's tag: the rendered book hides it."""
MARKER = '"google.colab" in sys.modules'
"""Text by which an older form of the cell is recognised (it is replaced, never added twice)."""

TEMPLATE = '''\
# In Google Colab only: install the book's own version of its library (Binder and a local
# setup already have it); if that fails, stop here and say why.
import importlib.util
import subprocess
import sys

ROBODYN_GIT = "git+{repository_url}"
ROBODYN_REF = "{release}"
if "google.colab" in sys.modules and importlib.util.find_spec("robodyn") is None:
    url = f"robodyn[viz] @ {{ROBODYN_GIT}}@{{ROBODYN_REF}}#subdirectory=lib"
    pip = subprocess.run([sys.executable, "-m", "pip", "install", "-q", url],
                         capture_output=True, text=True)
    if pip.returncode:
        raise RuntimeError(f"Could not install robodyn from {{url}}: check the network and "
                           f"run this cell again. pip said:\\n{{pip.stderr[-2000:]}}")
    importlib.invalidate_caches()'''


def cell_source(address=None) -> str:
    """The cell's text for the book's address (default: ``_config.yml``'s)."""
    address = site_address() if address is None else address
    return TEMPLATE.format(repository_url=address.repository_url, release=address.release)


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
    source = cell_source()
    changed = [p for p in notebooks() if write_cell(p, source)]
    print(f"colab_cell: {len(changed)} notebooks changed")


if __name__ == "__main__":
    main()
