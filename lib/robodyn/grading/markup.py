"""nbgrader's markup, read and written without nbgrader: student versions and format checks.

The instructor notebooks mark their cells the way nbgrader (schema version 3, nbgrader 0.9)
does, in ``cell.metadata["nbgrader"]``:

* *solution* cells (``solution: true``) hold the answer between ``### BEGIN SOLUTION`` and
  ``### END SOLUTION``; the student version keeps everything outside those lines and puts
  ``# YOUR CODE HERE`` in their place (nbgrader's ``ClearSolutions`` with
  ``code_stub = {"python": "# YOUR CODE HERE"}``). A solution cell first sets its answer
  variable to ``None``, so the blank student notebook runs;
* *test* cells (``grade: true``, ``locked: true``, with ``points``) run the self-check
  (``problems.test(key, answer)``, which fails for an answer the key knows to be wrong or a
  blank one, so nbgrader's *Validate* tells the truth; tagged ``raises-exception`` in the
  student version, so Run All goes on) and hold hidden tests between
  ``### BEGIN HIDDEN TESTS`` and ``### END HIDDEN TESTS``, removed in the student version
  (nbgrader's ``ClearHiddenTests``);
* *locked* cells (setup, answer key, problem statements) must not be edited; the grader
  runs its own copy of them, not the submitted one.

The student version also gets a *self-test* (:func:`self_test_source`): a locked code cell
tagged ``check``, after the last test cell, whose assertions the book's tests (nbval) run on
the blank notebook -- every blank answer is reported as not answered yet, the key holds every
problem, and an answer of a wrong shape is refused with its reason. It uses only what the
(one-way) answer key holds; the grader does not run it.

Every nbgrader cell has a unique ``grade_id``.
"""
from __future__ import annotations

import copy
import json
import re

import nbformat

from .. import _value_checks
from . import _args
from ..errors import RobodynError

BEGIN_SOLUTION = "### BEGIN SOLUTION"
END_SOLUTION = "### END SOLUTION"
BEGIN_HIDDEN = "### BEGIN HIDDEN TESTS"
END_HIDDEN = "### END HIDDEN TESTS"
CODE_STUB = "# YOUR CODE HERE"
TEXT_STUB = "YOUR ANSWER HERE"
KEY_ID = "answer_key"
"""grade_id of the locked cell that loads the answer key."""
SELF_TEST_ID = "self_test"
"""grade_id of the student notebook's self-test (a locked cell tagged ``check``), which
:func:`student_version` adds; reserved."""
SCHEMA_VERSION = 3
RAISES = "raises-exception"
BOOK_REMOVED = "remove-output"
"""The tag also on the student version's check cells, as the rendered book shows the blank problem set,
whose every check fails ("not answered yet"); the page leaves those tracebacks out (Jupyter
Book's tag), the notebook itself keeps them."""
"""The tag of the student notebooks' test cells: their visible check (``problems.test``)
fails for a wrong answer, so that nbgrader's Validate tells the truth; with this tag Jupyter's
Run All, nbclient and nbval go on past the failure."""

# nbgrader's cell-metadata schema, version 3 (the keys, their types and which are required)
_KEYS = {"schema_version": int, "grade": bool, "solution": bool, "locked": bool, "task": bool,
         "grade_id": str, "points": (int, float), "checksum": str, "cell_type": str}
_REQUIRED = ("schema_version", "grade", "locked", "solution")
_GRADE_ID = re.compile(r"[a-zA-Z0-9_\-]*\Z")


class MarkupError(RobodynError, ValueError):
    """A notebook that breaks nbgrader's format or the book's conventions for problem sets."""


def meta(cell):
    """The cell's nbgrader metadata, or None.

    >>> meta(nbformat.v4.new_markdown_cell("x")) is None
    True
    """
    return _args.cell(cell, "meta: cell").get("metadata", {}).get("nbgrader")


def _meta(cell):
    """:func:`meta` of a cell already checked."""
    return cell.get("metadata", {}).get("nbgrader")


def nbgrader_metadata(grade_id, *, grade=False, solution=False, locked=False, points=None):
    """A schema-3 ``nbgrader`` metadata dict.

    >>> nbgrader_metadata("p1_check", grade=True, locked=True, points=2)["points"]
    2
    """
    f = "nbgrader_metadata"
    if not isinstance(grade_id, str) or not _GRADE_ID.match(grade_id) or \
            not 0 < len(grade_id) <= 200:
        raise _value_checks.error(f"{f}: grade_id", "1 to 200 letters, digits, _ and -",
                            _value_checks.describe(grade_id),
                            exc=TypeError if not isinstance(grade_id, str) else ValueError)
    grade, solution, locked = (_value_checks.flag(v, f"{f}: {n}") for n, v in (
        ("grade", grade), ("solution", solution), ("locked", locked)))
    if points is not None:
        points = _value_checks.real_number(points, f"{f}: points", low=0, high=1e9)
        points = int(points) if points.is_integer() else points
    if grade and points is None:
        raise _value_checks.error(f"{f}: points", "points >= 0 for a grade cell", "None")
    m = {"schema_version": SCHEMA_VERSION, "grade": grade, "solution": solution,
         "locked": locked, "grade_id": grade_id}
    if grade:
        m["points"] = points
    return m


def validate(nb):
    """Check a notebook against nbformat's JSON schema and nbgrader's (v3) metadata rules;
    raise MarkupError naming the cell.

    The rules are nbgrader's: the metadata keys and types of its schema (no others); a
    ``grade_id`` (letters, digits, ``_``, ``-``; unique) on every grade, solution or locked
    cell; ``points`` >= 0 on grade cells; markdown cells are either both grade and solution or
    neither (unless a task); task cells are markdown; solution delimiters only in solution
    cells and hidden-test delimiters only in grade cells, each opened and closed in order.
    """
    return _validate(nb, "validate")


def _validate(nb, fname):
    nb = _args.notebook(nb, f"{fname}: nb")
    try:
        nbformat.validate(nb)
    except nbformat.ValidationError as exc:
        raise MarkupError(f"{fname}: nb: not a valid notebook (nbformat): "
                          f"{exc.message}") from exc
    ids = set()
    for i, cell in enumerate(nb.cells):
        m = _meta(cell)
        where = f"{fname}: nb: cell {i}"
        src = cell.source
        if m is None:
            for d in (BEGIN_SOLUTION, BEGIN_HIDDEN):
                if d in src:
                    raise MarkupError(f"{where}: {d!r} in a cell without nbgrader metadata")
            continue
        missing = [k for k in _REQUIRED if k not in m]
        if missing:
            raise MarkupError(f"{where}: nbgrader metadata lacks {missing}")
        extra = set(m) - set(_KEYS)
        if extra:
            raise MarkupError(f"{where}: nbgrader metadata has unknown keys {sorted(extra)}")
        for k, v in m.items():
            if not isinstance(v, _KEYS[k]) or (_KEYS[k] is int and isinstance(v, bool)):
                raise MarkupError(f"{where}: nbgrader {k!r} has the wrong type {type(v).__name__}")
        if m["schema_version"] != SCHEMA_VERSION:
            raise MarkupError(f"{where}: schema_version {m['schema_version']}, expected "
                              f"{SCHEMA_VERSION}")
        grade, solution, locked, task = m["grade"], m["solution"], m["locked"], m.get("task", False)
        if grade or solution or locked:
            gid = m.get("grade_id", "")
            if not gid or not _GRADE_ID.match(gid):
                raise MarkupError(f"{where}: a grade_id of letters, digits, _ and - is needed, "
                                  f"got {gid!r}")
            if gid in ids:
                raise MarkupError(f"{where}: duplicate grade_id {gid!r}")
            ids.add(gid)
        if grade and not (isinstance(m.get("points"), (int, float)) and m["points"] >= 0):
            raise MarkupError(f"{where}: grade cell {m.get('grade_id')!r} needs points >= 0")
        if "cell_type" in m and m["cell_type"] != cell.cell_type:
            raise MarkupError(f"{where}: cell type changed from {m['cell_type']}")
        if task and cell.cell_type != "markdown":
            raise MarkupError(f"{where}: task cells must be markdown")
        if not task and cell.cell_type == "markdown" and grade != solution:
            raise MarkupError(f"{where}: a markdown cell must be both grade and solution, "
                              f"or neither")
        _check_delimiters(src, BEGIN_SOLUTION, END_SOLUTION, solution, where)
        _check_delimiters(src, BEGIN_HIDDEN, END_HIDDEN, grade, where)
    return nb


def _check_delimiters(src, begin, end, allowed, where):
    depth = 0
    for line in src.splitlines():
        if begin in line:
            if not allowed:
                raise MarkupError(f"{where}: {begin!r} is not allowed in this kind of cell")
            if depth:
                raise MarkupError(f"{where}: {begin!r} inside another")
            depth = 1
        elif end in line:
            if not depth:
                raise MarkupError(f"{where}: {end!r} without {begin!r}")
            depth = 0
    if depth:
        raise MarkupError(f"{where}: {begin!r} is never closed")


def _strip(src, begin, end, stub):
    """Remove the begin..end regions of a cell's source, a stub in their place."""
    out, inside = [], False
    for line in src.splitlines():
        if begin in line:
            inside = True
            if stub is not None:
                indent = line[:len(line) - len(line.lstrip())]
                out.extend(indent + s for s in stub.splitlines())
        elif end in line:
            inside = False
        elif not inside:
            out.append(line)
    return "\n".join(out)


def solution_lines(nb):
    """The non-trivial lines inside solution regions and hidden tests (what a student version
    must not contain)."""
    nb = _args.notebook(nb, "solution_lines: nb")
    lines = []
    for cell in nb.cells:
        inside = False
        for line in cell.source.splitlines():
            if BEGIN_SOLUTION in line or BEGIN_HIDDEN in line:
                inside = True
            elif END_SOLUTION in line or END_HIDDEN in line:
                inside = False
            elif inside and len(line.strip()) > 3 and not line.strip().startswith("#"):
                lines.append(line.strip())
    return lines


def answer_key_json(nb):
    """The JSON text of the answer key in the notebook's key cell, or None (no key cell, or
    ``problems.load_key(None)`` before generation)."""
    return _key_json(_args.notebook(nb, "answer_key_json: nb"))


def _key_json(nb):
    for cell in nb.cells:
        if (_meta(cell) or {}).get("grade_id") == KEY_ID:
            found = re.search(r"load_key\(r'''(.*)'''\)", cell.source, re.DOTALL)
            return found.group(1) if found else None
    return None


_SELF_TEST = """\
# Self-test of this notebook, run by the book's tests; it uses only what the answer key
# holds (one digest of each whole answer: no answer, and no entry of one, can be read or
# searched from it). Written by `python -m robodyn.grading generate`: do not edit.
import numpy as np

for p in problems:
    assert problems.in_key(p.key), f"the answer key lacks problem {p.key}"
    answer = globals().get(p.answer)
    verdict = problems.check(p.key, answer)
    if answer is None:     # a blank answer is reported as not answered yet
        assert verdict.status == "unanswered", verdict
        assert "not answered yet" in str(verdict), verdict
    else:                  # a given answer gets the key's verdict
        assert verdict.status != "unanswered", verdict
    # an answer of the wrong shape is never right, and the check says why
    wrong = problems.check(p.key, np.full((7, 9), 0.5))
    assert not wrong.correct and wrong.mistake in ("shape", "type"), wrong
"""


def self_test_source(key_json):
    """The code of a student notebook's self-test cell, for the answer key ``key_json``.

    It asserts that every problem is in the key; that each blank answer (the notebook's answer
    variable still None) is reported as *not answered yet* and each given one gets a verdict;
    and that an answer of a wrong shape is refused, with the reason named. Nothing in it
    reveals an answer (the key is one-way, :func:`robodyn.answers.fingerprint`).

    >>> src = self_test_source('{"p2": {"points": {}, "shape": []}}')
    >>> "not answered yet" in src and "key_value" not in src
    True
    """
    _key_text(key_json, "self_test_source: key_json")
    return _SELF_TEST + \
        'print(f"self-test passed: the checks of all {len(problems)} problems work")'


def _key_text(key_json, name):
    """An answer key's JSON text: a JSON object, and nothing that could end the raw string
    it is written into (``'''``) or hold a NUL."""
    _args.text(key_json, name, high=64 * 2**20)
    if "'''" in key_json or "\0" in key_json or key_json.endswith("\\"):
        raise _value_checks.error(name, "an answer key's JSON text", "text holding ''', a NUL or "
                            "ending in a backslash (it is written into a raw string)")
    try:
        key = json.loads(key_json)
    except (ValueError, RecursionError) as exc:
        raise _value_checks.error(name, "an answer key's JSON text (an object)",
                            f"text that is not JSON ({str(exc)[:80]})") from exc
    if not isinstance(key, dict):
        raise _value_checks.error(name, "an answer key's JSON text (an object)",
                            _value_checks.describe(key), exc=TypeError)
    return key_json


def student_version(nb):
    r"""The student notebook of an instructor notebook: solution regions replaced by
    ``# YOUR CODE HERE`` (markdown solution cells by ``YOUR ANSWER HERE``), hidden tests
    removed, outputs cleared; the nbgrader metadata stays, so nbgrader and this package both
    recognise the cells. When the notebook holds an answer key, the self-test cell
    (:func:`self_test_source`, grade_id ``self_test``, tag ``check``) follows its last test
    cell (its source refreshed where the instructor notebook has it already). The cells'
    metadata is what nbgrader's own release gives them: ``deletable``/``editable`` (its
    ``LockCells``), nbgrader's checksum and cell type (its ``ComputeChecksums``). Raises
    MarkupError (from :func:`validate`) for broken markup, or when the reserved grade_id
    ``self_test`` is taken by a cell that is not the self-test.

    >>> cell = nbformat.v4.new_code_cell("x = None\n### BEGIN SOLUTION\nx = 42\n### END SOLUTION")
    >>> cell.metadata["nbgrader"] = nbgrader_metadata("p1_answer", solution=True)
    >>> print(student_version(nbformat.v4.new_notebook(cells=[cell])).cells[0].source)
    x = None
    # YOUR CODE HERE
    """
    nb = _validate(nb, "student_version")
    out = copy.deepcopy(nb)
    for cell in out.cells:
        m = _meta(cell)
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
        for k in ("collapsed", "scrolled"):           # nbgrader's ClearOutput
            cell.metadata.pop(k, None)
        if m is None:
            continue
        if m["solution"]:
            if cell.cell_type == "markdown":
                cell.source = TEXT_STUB
            else:
                cell.source = _strip(cell.source, BEGIN_SOLUTION, END_SOLUTION, CODE_STUB)
        if m["grade"]:
            cell.source = _strip(cell.source, BEGIN_HIDDEN, END_HIDDEN, None).rstrip()
        _tag(cell)
    key_json = _key_json(out)
    if key_json is not None:
        _put_self_test(out, key_json, "student_version")
    for cell in out.cells:                           # nbgrader's LockCells, ComputeChecksums
        _lock_and_sum(cell)
    return out


def _tag(cell):
    """The tags of a test cell: its assert fails for a wrong answer; Run All goes on past it,
    and the book's page leaves the traceback out."""
    m = _meta(cell)
    if m and m["grade"] and cell.cell_type == "code":
        tags = cell.metadata.setdefault("tags", [])
        tags.extend(t for t in (RAISES, BOOK_REMOVED) if t not in tags)


def _is_self_test(cell):
    m = _meta(cell) or {}
    return (m.get("grade_id") == SELF_TEST_ID and cell.cell_type == "code"
            and m.get("locked") and not m.get("grade") and not m.get("solution")
            and "check" in cell.metadata.get("tags", [])
            and cell.source.startswith(_SELF_TEST.splitlines()[0]))


def _put_self_test(nb, key_json, fname):
    """Write the self-test of ``key_json`` into its cell (inserted after the last test cell
    when there is none); a cell of another kind holding its grade_id is refused. True when
    the notebook changed."""
    src = self_test_source(key_json)
    taken = [c for c in nb.cells if (_meta(c) or {}).get("grade_id") == SELF_TEST_ID]
    if taken and not _is_self_test(taken[0]):
        raise MarkupError(f"{fname}: nb: the grade_id {SELF_TEST_ID!r} is reserved for the "
                          f"self-test cell")
    if taken:
        changed = taken[0].source != src
        taken[0].source = src
        return changed
    test = nbformat.v4.new_code_cell(src)
    test.id = "self-test"
    test.metadata = {"nbgrader": nbgrader_metadata(SELF_TEST_ID, locked=True),
                     "tags": ["check"]}
    graded = [i for i, c in enumerate(nb.cells) if (_meta(c) or {}).get("grade")]
    nb.cells.insert(graded[-1] + 1 if graded else len(nb.cells), test)
    return True


def _lock_and_sum(cell):
    """What nbgrader's release does to a cell's metadata (its ``LockCells`` with the default
    settings, its ``ComputeChecksums``): answer cells cannot be deleted, tests and locked
    cells neither deleted nor edited; graded, answer and locked cells carry nbgrader's
    checksum (:func:`nbgrader_checksum`) and their cell type."""
    m = _meta(cell)
    if m is None:
        return
    grade, solution = bool(m.get("grade")), bool(m.get("solution"))
    locked = not solution and (grade or bool(m.get("locked")))      # nbgrader's is_locked
    if solution:
        cell.metadata["deletable"] = False
    elif grade or locked:
        cell.metadata["deletable"] = False
        cell.metadata["editable"] = False
    if grade or solution or locked:
        m["checksum"] = nbgrader_checksum(cell)
        m["cell_type"] = cell.cell_type


def nbgrader_checksum(cell):
    """nbgrader's checksum of a cell (``nbgrader.utils.compute_checksum``: MD5 of the source,
    the cell type, whether it is graded, an answer, locked, its grade_id and points), which
    its autograder compares with the released cell's.

    >>> c = nbformat.v4.new_code_cell("x = 1")
    >>> c.metadata["nbgrader"] = nbgrader_metadata("t", grade=True, locked=True, points=1)
    >>> len(nbgrader_checksum(c))
    32
    """
    import hashlib
    _args.cell(cell, "nbgrader_checksum: cell")
    m = _meta(cell)
    if not m or not isinstance(m.get("grade_id"), str):
        raise _value_checks.error("nbgrader_checksum: cell", "a cell with nbgrader metadata and a "
                            "grade_id", "a cell without", exc=TypeError)
    grade, solution = bool(m.get("grade")), bool(m.get("solution"))
    locked = not solution and (grade or bool(m.get("locked")))
    src = cell.source if isinstance(cell.source, str) else "".join(cell.source)
    h = hashlib.md5()
    for part in (src, cell.cell_type, str(grade), str(solution), str(locked), m["grade_id"]):
        h.update(part.encode("utf-8"))
    if grade:
        h.update(str(float(m["points"])).encode("utf-8"))
    return h.hexdigest()


def set_self_test(nb, key_json):
    """Write the self-test of the answer key ``key_json`` (:func:`self_test_source`) into the
    instructor notebook ``nb`` (in place; inserted after its last test cell when it has none)
    and tag its test cells as the student version does, so that the notebook nbgrader's own
    ``generate_assignment`` releases is the book's student notebook. True when it changed."""
    nb = _args.notebook(nb, "set_self_test: nb", node=False)
    _key_text(key_json, "set_self_test: key_json")
    before = json.dumps([[c.get("source"), c.get("metadata")] for c in nb["cells"]],
                        sort_keys=True, default=str)
    node = nbformat.from_dict(nb) if not isinstance(nb, nbformat.NotebookNode) else nb
    for cell in node.cells:
        _tag(cell)
    _put_self_test(node, key_json, "set_self_test")
    if node is not nb:
        nb["cells"] = node["cells"]
    after = json.dumps([[c.get("source"), c.get("metadata")] for c in nb["cells"]],
                       sort_keys=True, default=str)
    return before != after


def set_answer_key(nb, key_json):
    """Write ``problems.load_key(...)`` into the locked answer-key cell (``key_json`` None:
    ``load_key(None)``, no key); return True when its source changed."""
    nb = _args.notebook(nb, "set_answer_key: nb", node=False)   # changed in place
    if key_json is not None:
        _key_text(key_json, "set_answer_key: key_json")
    cells = [c for c in nb["cells"] if (_meta(c) or {}).get("grade_id") == KEY_ID]
    if len(cells) != 1:
        raise MarkupError(f"set_answer_key: nb: expected one cell with grade_id {KEY_ID!r}, "
                          f"found {len(cells)}")
    if key_json is None:                             # no key: the instructor's run
        src = "problems.load_key(None)"
    else:
        src = ("# The answer key: one-way (one salted hash of each whole answer's values at\n"
               "# test points, rounded on a grid; no values, formulas or entries), written\n"
               "# by `python -m robodyn.grading generate`. Do not edit.\n"
               f"problems.load_key(r'''{key_json}''')")
    changed = cells[0]["source"] != src
    cells[0]["source"] = src
    return changed

from .._boundary import seal as _seal  # noqa: E402 -- the one boundary (issue 28): last, over the finished module
_seal(globals(), {"*": {"text": "all"}})
