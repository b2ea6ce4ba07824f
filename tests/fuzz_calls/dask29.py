"""Valid calls of the public callables added by dask29 (robodyn.grading.gradebook)."""
import tempfile
from pathlib import Path

import nbformat

from robodyn.grading import gradebook, markup


def _release():
    text = nbformat.v4.new_markdown_cell("YOUR ANSWER HERE")
    text.metadata["nbgrader"] = markup.nbgrader_metadata("m", grade=True, solution=True,
                                                         points=2)
    return nbformat.v4.new_notebook(cells=[text])


def _records():
    d = Path(tempfile.mkdtemp(prefix="fuzz-records-"))
    rec = gradebook.Records(d / "gradebook.db", "set", "set", _release(), d / "scores.csv")
    rec.define([("p1", 1.0)])
    return rec


_ROW = {"file": "a.ipynb", "student": "a", "total": 1.0, "p1": 1.0, "p1 feedback": "✔",
        "notes": "", "seconds": 0.1, "manual": {"m": "Because."}}

CALLS = {
    "robodyn.grading.gradebook.manual_cells": lambda: ((_release(),), {}),
    "robodyn.grading.gradebook.manual_answers": lambda: (({"cells": []}, _release()), {}),
    "robodyn.grading.gradebook.console_text": lambda: (("a\x1bb",), {"limit": 10}),
    "robodyn.grading.gradebook.gradebook_url": lambda: (("/tmp/gradebook.db",), {}),
    "robodyn.grading.gradebook.write_atomic":
        lambda: ((Path(tempfile.mkdtemp()) / "x.txt", "text"), {}),
    "robodyn.grading.gradebook.open_gradebook":
        lambda: ((Path(tempfile.mkdtemp()) / "gradebook.db",), {}),
    "robodyn.grading.gradebook.Records":
        lambda: ((Path(tempfile.mkdtemp()) / "g.db", "set", "set", _release(),
                  Path(tempfile.mkdtemp()) / "s.csv"), {}),
    "robodyn.grading.gradebook.Records.define": lambda: ((_records(), [("p1", 1.0)]), {}),
    "robodyn.grading.gradebook.Records.seed": lambda: ((_records(), 3), {}),
    "robodyn.grading.gradebook.Records.graded": lambda: ((_records(),), {}),
    "robodyn.grading.gradebook.Records.columns": lambda: ((_records(),), {}),
    "robodyn.grading.gradebook.Records.table_row": lambda: ((_records(), dict(_ROW)), {}),
    "robodyn.grading.gradebook.Records.add": lambda: ((_records(), dict(_ROW)), {"record": True}),
    "robodyn.grading.gradebook.Records.flush": lambda: ((_records(),), {"force": True}),
    "robodyn.grading.gradebook.Records.close": lambda: ((_records(),), {}),
}
