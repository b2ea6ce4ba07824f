"""Run chosen code cells of a book notebook in a plain namespace, so that a test can break a
chapter's claim on purpose and watch its check cell fail (without a kernel, without the
figures: IPython magics and `display` are stubbed, matplotlib draws with Agg)."""
import os
import re
from pathlib import Path

import nbformat
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
MAGIC = re.compile(r"^(\s*)[%!].*$", re.M)


def code_cells(notebook):
    """The notebook's code cells as a list of (id, tags, source)."""
    nb = nbformat.read(ROOT / "book" / notebook, as_version=4)
    return [(c.get("id"), c.metadata.get("tags", []), c.source)
            for c in nb.cells if c.cell_type == "code"]


def check_source(notebook):
    """The source of the notebook's last cell tagged `check` (the chapter's own check; a section
    may have its own before it)."""
    checks = [src for _, tags, src in code_cells(notebook) if "check" in tags]
    assert checks, f"{notebook}: no check cell"
    return checks[-1]


def run_cells(notebook, until_check=True, skip=()):
    """Execute the notebook's code cells in order, up to (not including) its check cell,
    leaving out the cells whose ids start with one of `skip` (figures, widgets); return the
    namespace."""
    os.environ.setdefault("MPLBACKEND", "Agg")
    os.environ["ROBODYN_QUICK"] = "1"
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    ns = {"__name__": "__notebook__", "display": lambda *a, **k: None}
    with np.printoptions():             # a chapter's np.set_printoptions stays in the chapter
        cells = code_cells(notebook)
        last = max((i for i, (_, tags, _) in enumerate(cells) if "check" in tags), default=None)
        for i, (cid, tags, src) in enumerate(cells):
            if until_check and i == last:
                break
            if "remove-cell" in tags and "google.colab" in src:
                continue
            if any(cid.startswith(s) for s in skip):
                continue
            exec(compile(MAGIC.sub(r"\1pass", src), f"{notebook}:{cid}", "exec"), ns)
            plt.close("all")
    return ns


def run_check(notebook, ns, **changes):
    """Run the notebook's check cell on a copy of `ns` with `changes` applied."""
    env = dict(ns)
    env.update(changes)
    with np.printoptions():
        exec(compile(check_source(notebook), f"{notebook}:check", "exec"), env)
    return env
