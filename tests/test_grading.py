"""robodyn.grading: nbgrader markup, student notebooks, and grading untrusted submissions.

The folder tests/fixtures/assignments/part1 holds submissions of problem set I (written by its
make_submissions.py): correct, partially correct, crashing, an infinite loop, a memory hog, a
hostile one, and a file that is not a notebook. They are graded once, by the command line, and
each is checked against the score it deserves.
"""
import copy
import csv
import importlib.util
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

import nbformat
import numpy as np
import pytest

from robodyn.grading import __main__ as cli
from robodyn.grading import grader, markup

ROOT = Path(__file__).resolve().parents[1]
SETS = ROOT / "book" / "assignments"
SOURCES = sorted((SETS / "source").glob("*.ipynb"))
FIXTURES = ROOT / "tests" / "fixtures" / "assignments" / "part1"
SENTINELS = [Path("/tmp/robodyn-pwned"), FIXTURES.parent / "PWNED"]
LIMITS = grader.Limits(cell_timeout=4.0, total_timeout=60.0, memory_mb=3072)


def read(path):
    return nbformat.read(path, as_version=4)


# --------------------------------------------------------------------------
# the markup and the student notebooks
# --------------------------------------------------------------------------

def test_sets_exist_with_enough_problems():
    names = [p.name for p in SOURCES]
    assert {"part1_rigid_motion.ipynb", "part2_lagrangian_dynamics.ipynb"} <= set(names)
    assert sorted(names) == sorted(p.name for p in SETS.glob("*.ipynb"))   # each generated
    for src in SOURCES:
        nb = read(src)
        answers = [c for c in nb.cells if (markup.meta(c) or {}).get("solution")
                   and c.cell_type == "code"]
        tests = [c for c in nb.cells if (markup.meta(c) or {}).get("grade")
                 and c.cell_type == "code"]
        assert len(answers) >= 6 and len(tests) == len(answers), src.name
        manual = [c for c in nb.cells if c.cell_type == "markdown"
                  and (markup.meta(c) or {}).get("grade")]
        asked = [c for c in nb.cells if "the argument is yours" in c.source or
                 "proof checked by a computation" in c.source]
        assert len(manual) >= 1 and len(manual) >= len(asked) // 2, src.name
        for c in manual:                      # a manually graded answer, with its rubric
            assert markup.meta(c)["solution"] and markup.meta(c)["points"] > 0
            assert "*Rubric:*" in c.source and "*Model answer:*" in c.source
        chapters = [c.source for c in nb.cells if "*Practises [" in c.source]
        assert len(chapters) == len(answers), f"{src.name}: a problem without its chapter"


@pytest.mark.parametrize("src", SOURCES, ids=lambda p: p.stem)
def test_notebooks_valid_for_nbgrader(src):
    for nb in (read(src), read(SETS / src.name)):
        markup.validate(nb)                           # nbformat's schema + nbgrader's v3 rules
        for cell in nb.cells:
            m = markup.meta(cell)
            if m:
                assert m["schema_version"] == 3
                assert set(m) <= {"schema_version", "grade", "solution", "locked", "task",
                                  "grade_id", "points", "checksum", "cell_type"}


@pytest.mark.parametrize("src", SOURCES, ids=lambda p: p.stem)
def test_notebooks_valid_for_nbgraders_own_reader(src):
    from nbgrader.nbgraderformat import MetadataValidator
    for nb in (read(src), read(SETS / src.name)):
        MetadataValidator().validate_nb(nb)


@pytest.mark.parametrize("src", SOURCES, ids=lambda p: p.stem)
def test_student_notebooks_hold_no_solution_text(src):
    student = (SETS / src.name).read_text()
    instructor = read(src)
    secrets = markup.solution_lines(instructor)
    assert len(secrets) >= 8
    statements = "\n".join(c.source for c in instructor.cells if c.cell_type == "markdown")
    leaked = [s for s in secrets if s in student and s not in statements]
    assert not leaked, f"{src.name}: solution text in the student notebook: {leaked[:3]}"
    for marker in (markup.BEGIN_SOLUTION, markup.END_SOLUTION, markup.BEGIN_HIDDEN,
                   markup.END_HIDDEN):
        assert marker not in student
    nb = read(SETS / src.name)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code")


@pytest.mark.parametrize("src", SOURCES, ids=lambda p: p.stem)
def test_student_notebooks_are_generated_from_the_sources(src):
    """The committed student notebook is exactly the student version of the committed
    instructor notebook (``python -m robodyn.grading generate`` was run)."""
    made = markup.student_version(read(src))
    committed = read(SETS / src.name)
    assert [c.source for c in made.cells] == [c.source for c in committed.cells]
    assert [c.metadata for c in made.cells] == [c.metadata for c in committed.cells]


@pytest.mark.parametrize("src", SOURCES, ids=lambda p: p.stem)
def test_student_notebooks_have_a_self_test(src):
    """Every student notebook ends its problems with a check cell (tag ``check``) of asserts,
    written by the generator from the answer key alone."""
    nb = read(SETS / src.name)
    checks = [i for i, c in enumerate(nb.cells) if "check" in c.metadata.get("tags", [])]
    assert len(checks) == 1, src.name
    cell = nb.cells[checks[0]]
    assert cell.cell_type == "code" and cell.source.count("assert ") >= 4
    assert markup.meta(cell)["grade_id"] == markup.SELF_TEST_ID and markup.meta(cell)["locked"]
    assert cell.source == markup.self_test_source(markup.answer_key_json(read(src)))
    assert "key_value" not in cell.source and "real" not in markup.answer_key_json(nb)
    graded = [i for i, c in enumerate(nb.cells) if (markup.meta(c) or {}).get("grade")]
    assert checks[0] == graded[-1] + 1


@pytest.mark.parametrize("src", SOURCES, ids=lambda p: p.stem)
def test_check_cells_fail_for_wrong_answers(src):
    """Every check cell runs ``problems.test`` on its answer (an AssertionError for a wrong
    or blank answer, so nbgrader's Validate reports it), and in the student notebook it is
    tagged ``raises-exception`` (Run All and nbval go on past it)."""
    for student, nb in enumerate((read(src), read(SETS / src.name))):
        tests = [c for c in nb.cells
                 if c.cell_type == "code" and (markup.meta(c) or {}).get("grade")]
        for c in tests:
            gid = markup.meta(c)["grade_id"]
            assert f'problems.test("{gid.split("_")[0]}", ' in c.source, (src.name, gid)
            assert "problems.check(" not in c.source, (src.name, gid)
            assert markup.RAISES in c.metadata.get("tags", []), (src.name, gid)
            if student:                             # the book's page leaves the traceback out
                assert markup.BOOK_REMOVED in c.metadata.get("tags", []), (src.name, gid)
    intro = " ".join(read(SETS / src.name).cells[0].source.split())
    for said in ("What the check tells you, and what it does not", "Validate",
                 "only checked when graded", "graded by hand", "cannot be searched entry by"):
        assert said in intro, (src.name, said)


def _self_test_report(cells):
    return grader.run_cells(cells, [], sandboxed=False,
                            limits=grader.Limits(cell_timeout=120, total_timeout=300))


def test_self_test_passes_blank_and_answered_and_fails_without_its_key():
    src = SOURCES[0]
    student = [c.source for c in read(SETS / src.name).cells if c.cell_type == "code"]
    self_test = student[-1]
    assert "Self-test" in self_test
    blank = _self_test_report(student)                       # the notebook as handed out
    checks = ["problems.test(" in c for c in student]        # they fail: not answered yet
    assert [c["status"] for c in blank["cells"]] == ["error" if k else "ok" for k in checks]
    assert all("not answered yet" in c["error"] for c, k in zip(blank["cells"], checks) if k)
    answered = _self_test_report(grader._code_cells(read(src)) + [self_test])
    assert answered["cells"][-1]["status"] == "ok", answered["cells"][-1]
    keyless = _self_test_report([c for c in student if "load_key(" not in c])
    assert keyless["cells"][-1]["status"] == "error"
    assert "the answer key lacks problem p1" in keyless["cells"][-1]["error"]
    wrong = self_test.replace('in ("shape", "type")', 'in ("sign",)')   # the asserts can fail
    assert wrong != self_test
    assert _self_test_report(student[:-1] + [wrong])["cells"][-1]["status"] == "error"


def test_self_test_source_without_a_constant_answer():
    src = markup.self_test_source('{"p1": {"points": {"x": [1.0]}, "shape": [], "real": [2.0]}}')
    assert "not answered yet" in src and "key_value" not in src
    compile(src, "self-test", "exec")


def test_student_version_refuses_a_taken_self_test_id():
    def take(nb):                 # the instructor notebook's own self-test cell, elsewhere
        nb.cells = [c for c in nb.cells if (markup.meta(c) or {}).get("grade_id")
                    != markup.SELF_TEST_ID]
        nb.cells[0].metadata["nbgrader"].update(grade_id="self_test")
    nb = _broken(take)
    with pytest.raises(markup.MarkupError, match="'self_test' is reserved"):
        markup.student_version(nb)
    twice = _broken(lambda nb: nb.cells[0].metadata["nbgrader"].update(grade_id="self_test"))
    with pytest.raises(markup.MarkupError, match="duplicate grade_id 'self_test'"):
        markup.student_version(twice)
    def keyless(nb):              # as before the first `generate`: no key, no self-test
        nb.cells = [c for c in nb.cells if (markup.meta(c) or {}).get("grade_id")
                    != markup.SELF_TEST_ID]
        _cell(nb, markup.KEY_ID).source = "problems.load_key(None)"
    no_key = _broken(keyless)
    assert markup.answer_key_json(no_key) is None
    assert not any(markup.meta(c) and markup.meta(c)["grade_id"] == markup.SELF_TEST_ID
                   for c in markup.student_version(no_key).cells)


def test_student_version_of_a_small_notebook():
    nb = nbformat.v4.new_notebook()
    sol = nbformat.v4.new_code_cell("x = None\n    ### BEGIN SOLUTION\nx = 42\n    ### END SOLUTION")
    sol.metadata["nbgrader"] = markup.nbgrader_metadata("a", solution=True)
    test = nbformat.v4.new_code_cell("print(x)\n### BEGIN HIDDEN TESTS\nassert x == 42\n"
                                     "### END HIDDEN TESTS")
    test.metadata["nbgrader"] = markup.nbgrader_metadata("t", grade=True, locked=True, points=2)
    text = nbformat.v4.new_markdown_cell("An argument.")
    text.metadata["nbgrader"] = markup.nbgrader_metadata("m", grade=True, solution=True,
                                                         points=1)
    nb.cells = [sol, test, text]
    out = markup.student_version(nb)
    assert out.cells[0].source == "x = None\n    # YOUR CODE HERE"
    assert out.cells[1].source == "print(x)"
    assert out.cells[2].source == "YOUR ANSWER HERE"
    assert nb.cells[0].source.endswith("END SOLUTION")        # the source is untouched


def _broken(change):
    nb = copy.deepcopy(read(SOURCES[0]))
    change(nb)
    return nb


def _cell(nb, grade_id):
    return next(c for c in nb.cells if (markup.meta(c) or {}).get("grade_id") == grade_id)


@pytest.mark.parametrize("change, match", [
    (lambda nb: nb.cells[3].metadata["nbgrader"].pop("grade_id"), "grade_id"),
    (lambda nb: nb.cells[3].metadata["nbgrader"].update(grade_id="has space"), "grade_id"),
    (lambda nb: nb.cells[3].metadata["nbgrader"].update(grade_id="intro"), "duplicate"),
    (lambda nb: nb.cells[3].metadata["nbgrader"].pop("locked"), "lacks"),
    (lambda nb: nb.cells[3].metadata["nbgrader"].update(extra=1), "unknown keys"),
    (lambda nb: nb.cells[3].metadata["nbgrader"].update(schema_version=1), "schema_version"),
    (lambda nb: nb.cells[3].metadata["nbgrader"].update(grade="yes"), "wrong type"),
    (lambda nb: [c.metadata["nbgrader"].pop("points") for c in nb.cells
                 if (markup.meta(c) or {}).get("grade")], "needs points"),
    (lambda nb: nb.cells[0].metadata["nbgrader"].update(grade=True, points=1),
     "both grade and solution"),
    (lambda nb: setattr(nb.cells[3], "source", "### BEGIN SOLUTION\nx = 1\n### END SOLUTION"),
     "not allowed in this kind of cell"),
    (lambda nb: setattr(_cell(nb, "p1_answer"), "source", "### BEGIN SOLUTION\nx = 1"),
     "never closed"),
    (lambda nb: setattr(nb.cells[1], "source", "### BEGIN HIDDEN TESTS"), "without nbgrader"),
    (lambda nb: nb.cells[0].pop("source"), "nbformat"),
])
def test_validate_refuses_broken_markup(change, match):
    with pytest.raises(markup.MarkupError, match=match):
        markup.validate(_broken(change))


def test_set_answer_key_needs_one_key_cell():
    nb = _broken(lambda nb: nb.cells.remove(_cell(nb, markup.KEY_ID)))
    with pytest.raises(markup.MarkupError, match="expected one cell with grade_id 'answer_key'"):
        markup.set_answer_key(nb, "{}")


# --------------------------------------------------------------------------
# which code a submission's process runs
# --------------------------------------------------------------------------

def test_submission_cells_use_the_locked_cells_of_the_release():
    release = markup.student_version(read(SOURCES[0]))
    sub = json.loads((FIXTURES / "correct.ipynb").read_text())
    setup = next(c for c in sub["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id")
                 == "setup")
    setup["source"] = "problems = 'tampered'"
    sub["cells"].append({"cell_type": "code", "metadata": {}, "source": "extra = 1",
                         "outputs": [], "execution_count": None})
    cells = grader.submission_cells(sub, release)
    assert any(markup.meta(c) and markup.meta(c)["grade_id"] == markup.SELF_TEST_ID
               for c in release.cells)
    assert not any("Self-test of this notebook" in c for c in cells)   # it needs the key
    assert "problems = 'tampered'" not in cells
    assert any("ProblemSet(" in c for c in cells) and "extra = 1" in cells
    assert not any("problems.check(" in c or "problems.test(" in c or "load_key" in c
                   for c in cells)
    without_setup = dict(sub, cells=[c for c in sub["cells"] if c is not setup])
    assert "ProblemSet(" in grader.submission_cells(without_setup, release)[0]


# --------------------------------------------------------------------------
# grading the folder of test submissions
# --------------------------------------------------------------------------

EXPECTED = {            # student: (total of 13 points, problems right)
    "correct": (13, {"p1", "p2", "p3", "p4", "p5", "p6", "p7", "p8"}),
    "partial": (6.38, {"p3", "p6", "p8"}),   # and 3/8 of p1: 3 of its 8 varying entries
    "crashing": (8, {"p1", "p5", "p7", "p8"}),
    "infinite_loop": (10, {"p1", "p3", "p4", "p5", "p7", "p8"}),
    "memory_hog": (10, {"p1", "p2", "p4", "p5", "p7", "p8"}),
    "hostile": (0, set()),
    "not_a_notebook": (0, set()),
}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    for s in SENTINELS:
        s.unlink(missing_ok=True)
    out = tmp_path_factory.mktemp("grades") / "scores.csv"
    started = time.monotonic()
    status = cli.main(["grade", str(SOURCES[0]), str(FIXTURES), "--csv", str(out),
                       "--cell-timeout", str(LIMITS.cell_timeout), "--total-timeout",
                       str(LIMITS.total_timeout), "--seed", "7", "--jobs", "2"])
    seconds = time.monotonic() - started
    with open(out, newline="", encoding="utf-8") as fh:
        rows = {r["student"]: r for r in csv.DictReader(fh)}
    print(f"graded {len(rows)} submissions in {seconds:.1f} s")
    return status, rows


def test_every_submission_scored_as_it_deserves(graded):
    status, rows = graded
    assert status == 0 and set(rows) == set(EXPECTED)
    for student, (total, right) in EXPECTED.items():
        r = rows[student]
        assert float(r["total"]) == pytest.approx(total, abs=0.01), (student, r)
        assert float(r["max"]) == 13
        got = {k for k in ("p1", "p2", "p3", "p4", "p5", "p6", "p7", "p8")
               if r[f"{k} feedback"].startswith("✔")}
        assert got == right, (student, {k: r[f"{k} feedback"] for k in sorted(right ^ got)})


def test_feedback_names_the_mistakes(graded):
    r = graded[1]["partial"]
    assert "rotations are multiplied in the reverse order" in r["p1 feedback"]
    assert "angular and linear parts in the wrong order" in r["p2 feedback"]
    assert "degrees" in r["p4 feedback"]
    assert "transpose" in r["p5 feedback"]
    assert "not answered yet" in r["p7 feedback"]
    assert "correct" in r["p3 feedback"]


def test_broken_submissions_fail_alone(graded):
    rows = graded[1]
    assert "ZeroDivisionError" in rows["crashing"]["notes"]
    assert "SyntaxError" in rows["crashing"]["notes"]
    assert "exceeded its 4 s time limit" in rows["infinite_loop"]["notes"]
    assert "MemoryError" in rows["memory_hog"]["notes"]
    assert rows["correct"]["notes"] == ""          # its self-test cell was not run there
    assert "could not be read" in rows["not_a_notebook"]["notes"]
    for student in ("crashing", "infinite_loop", "memory_hog"):
        assert float(rows[student]["seconds"]) < LIMITS.total_timeout


def test_hostile_submission_gains_nothing(graded):
    r = graded[1]["hostile"]
    assert float(r["total"]) == 0
    # had reading the instructor notebook worked, its solutions would answer p4..p7
    for k in ("p4", "p5", "p6", "p7"):
        assert "not answered yet" in r[f"{k} feedback"]
    assert "attribute access" in r["p1 feedback"]          # its text answers were refused
    assert r["p8"] == "0.0"                                 # it wrote only its own /tmp
    assert not any(s.exists() for s in SENTINELS)           # no file written outside
    assert float(graded[1]["correct"]["total"]) == 13       # the others are unharmed


def test_answers_arrive_when_the_pipe_reader_starts_late(monkeypatch):
    """On a loaded machine the thread that drains the answers' pipe may begin to run only after
    run_cells has moved on (seen once: a slow, honest submission graded 0 through a killed Dask
    worker, "invalid fd type NoneType" in the reader). Every thread run_cells starts here runs
    its target 0.3 s late: the answers must all arrive."""
    import threading

    class Late(threading.Thread):
        def run(self):
            time.sleep(0.3)
            super().run()

    monkeypatch.setattr(grader.threading, "Thread", Late)
    report = grader.run_cells(["x = 6 * 7"], [{"key": "p", "answer": "x"}], sandboxed=False,
                              limits=grader.Limits(cell_timeout=60, total_timeout=120))
    assert "failure" not in report, report
    assert report["answers"]["p"]["real"] == [42.0], report


def test_a_runaway_process_is_killed():
    """A notebook that ignores the per-cell timers is stopped at its CPU-time limit."""
    cells = ["import signal\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\n"
             "signal.signal(signal.SIGPROF, signal.SIG_IGN)\nwhile True:\n    pass", "x = 1"]
    limits = grader.Limits(cell_timeout=1.0, total_timeout=4.0)
    report = grader.run_cells(cells, [{"key": "p", "answer": "x"}], limits=limits)
    assert "used its 4 s of CPU time" in report["failure"], report
    assert report["seconds"] < 3 * 4 + 30 + 10


def test_guard_refuses_network_processes_and_files_outside():
    cells = ["""
import os, socket, subprocess
found = []
for attempt in (lambda: socket.socket(), lambda: subprocess.run(['true']),
                lambda: os.system('true'), lambda: open('/etc/hostname').read(),
                lambda: os.listdir('/'), lambda: os.kill(os.getppid(), 0),
                lambda: open('/tmp/robodyn-pwned', 'w')):
    try:
        attempt()
        found.append('allowed')
    except PermissionError:
        found.append('refused')
own = open('mine.txt', 'w').write('ok')   # its own working folder is fine
n = found.count('refused')
"""]
    report = grader.run_cells(cells, [{"key": "p", "answer": "n"}, {"key": "q", "answer": "found"}],
                              limits=LIMITS, unsafe=True)   # the hook: only with --unsafe
    assert report["cells"][0]["status"] == "ok", report
    assert report["answers"]["p"] == {"type": "numeric", "shape": [], "real": [7.0]}
    assert report["answers"]["q"]["type"] == "invalid"       # a list of str is no answer


def test_score_table_fields_are_not_formulas():
    assert grader._cell_text("=HYPERLINK(1)") == "'=HYPERLINK(1)"
    assert grader._cell_text("alice") == "alice" and grader._cell_text(3.0) == 3.0


def test_grade_errors(tmp_path):
    with pytest.raises(ValueError, match="no \\*.ipynb files"):
        grader.grade(SOURCES[0], tmp_path, tmp_path / "x.csv")
    nb = read(SOURCES[0])
    bad = copy.deepcopy(nb)
    _cell(bad, "setup").source = "raise RuntimeError('broken setup')"
    with pytest.raises(RuntimeError, match="broken setup"):
        grader.reference(bad, limits=grader.Limits(cell_timeout=60, total_timeout=120))


@pytest.fixture(scope="module")
def references():
    """Each set's reference answers, from its instructor notebook (run once here)."""
    return {src.name: grader.reference(read(src)) for src in SOURCES}


def _stored_key(nb):
    return json.loads(markup.answer_key_json(nb))


def _problem_set(ref, key):
    from robodyn.answers import ProblemSet
    ps = ProblemSet("set", ref.problems)
    ps.load_key(json.dumps(key))
    return ps


@pytest.mark.slow
def test_answer_keys_are_current(references):
    """The answer key in each instructor notebook accepts its own reference answers."""
    from robodyn import answers
    for src in SOURCES:
        ref = references[src.name]
        stored = _stored_key(read(src))
        assert set(stored) == {p.key for p in ref.problems}
        ps = _problem_set(ref, stored)
        for p in ref.problems:
            value = answers.decode(ref.answers[p.key], p, grader._inputs_of(ref, p.key))
            if isinstance(value, answers._problems._Samples):       # a function: its fresh outputs
                continue
            verdict = ps.check(p.key, value)
            assert verdict.status in ("correct", "form"), (src.name, p.key, verdict)


@pytest.mark.slow
def test_no_answer_can_be_recovered_from_a_student_notebook(references):
    """The attack of issue #21 on every published student notebook: read the numbers of its
    answer key and self-test (the points excepted: they are public), and look for any value
    of any reference answer at the key's points among them; look for values, formulas or
    anything but a salted hash in the key. Nothing is found."""
    import re

    from robodyn import answers
    for src in SOURCES:
        ref = references[src.name]
        student = read(SETS / src.name)
        key = _stored_key(student)
        cells = [c.source for c in student.cells if (markup.meta(c) or {}).get("grade_id")
                 in (markup.KEY_ID, markup.SELF_TEST_ID)]
        text = "\n".join(cells)
        for entry in key.values():
            text = text.replace(json.dumps(entry["points"], separators=(",", ":")), "")
            assert set(entry) in ({"points", "shape"},      # nothing per value or entry
                                  {"version", "points", "shape", "grid", "tol", "salt", "hash"})
        numbers = [float(x) for x in re.findall(r"-?\d+\.\d+(?:e-?\d+)?", text)]
        ps = _problem_set(ref, key)
        for p in ref.problems:
            k = ps._key[p.key]
            value = answers.decode(ref.answers[p.key], p, grader._inputs_of(ref, p.key))
            kind, val = answers._problems._as_value(value, p)
            if kind == "samples":
                R = val.values
            else:
                R = answers._problems._evaluator(kind, val, p, answers._problems._shape_of(kind, val))(k.points)
            R = np.concatenate([R.real.ravel(), R.imag.ravel()])
            R = R[(np.abs(R) > 1e-6) & (np.abs(R - np.round(R)) > 1e-9)]   # not 0, 1, -1 …
            leaked = [x for x in numbers if np.isclose(R, x, rtol=1e-6, atol=0).any()]
            assert not leaked, f"{src.name} {p.key}: the key shows {leaked[:3]}"
            assert not hasattr(k, "values")


# --------------------------------------------------------------------------
# problem set V: its hidden tests and the grader reject wrong answers
# --------------------------------------------------------------------------

SET_V = SETS / "source" / "part5_kane.ipynb"
WRONG_V = {        # a common mistake for each problem of set V
    "p1": "V_B = sp.Matrix(B.position).jacobian(q).T                       # transposed",
    "p2": ("W = sp.Matrix([[1, 0], [1, 1]])\n"
           "M_abs = W.T * rd.lagrange.equations_of_motion(models.planar_rr(l1, l2, m1, m2)).M * W"
           "   # W^T M W, not W^-T M W^-1"),
    "p3": "Fstar_B = -kane.kanes_equations([q1, q2], [u1, u2], [B]).inertia_forces   # sign",
    "p4": ("e = sp.Matrix([sp.cos(q1), sp.sin(q1), 0])\n"
           "AA = kane.RigidBody('A', m1, l1 / 2 * e, rot_z(q1), sp.diag(0, 1, 1) * m1 * l1**2 / 12)\n"
           "BB = kane.RigidBody('B', m2, (q2 + l2 / 2) * e, rot_z(q1), sp.diag(0, 1, 1) * m2 * l2**2 / 12)\n"
           "loads = [kane.Force(AA.position, [0, -m1 * g, 0]), kane.Force(BB.position, [0, -m2 * g, 0]),\n"
           "         kane.Torque('A', [0, 0, T1]), kane.Force(BB.position, F2 * e),\n"
           "         kane.Force(q2 * e, -F2 * e)]          # the reaction on a sliding point\n"
           "F_rp = kane.kanes_equations([q1, q2], [u1, u2], [AA, BB], loads).active_forces"),
    "p5": ("lag = rd.lagrange.equations_of_motion(models.planar_rp(l1, l2, m1, m2))\n"
           "Fstar_rp = -(lag.M * udot + lag.C.xreplace(dict(zip(lag.u, u))) * u / 2)   # half C"),
    "p6": ("A_dp = sp.Matrix([[0, 0, 1, 0], [0, 0, 0, 1], [-g / l1, g * m2 / (l1 * m1), 0, 0],"
           " [g / l1, -g * (m1 + m2) / (l1 * m1), 0, 0]])   # l2 forgotten"),
    "p7": "u2_slot = (l1 * sp.cos(q1) + l2 * sp.cos(q1 + q2)) / (l2 * sp.cos(q1 + q2)) * u1   # sign",
    "p8": "M_slot = rd.lagrange.equations_of_motion(models.planar_rr(l1, l2, m1, m2)).M[0, 0]",
    "p9": "omega_tip = float(kane.clamped_free_roots(1)[0]**2 * np.sqrt(10 / 0.5))  # no tip mass",
    "p10": ("V_twist_B = sp.Matrix([[l1 * sp.sin(q2), 0], [l1 * sp.cos(q2) + l2 / 2, l2 / 2],"
            " [0, 0], [0, 0], [0, 0], [1, 1]])   # (v, omega)"),
    "p11": "omega_spin = float(np.sqrt(kane.clamped_free_roots(1)[0]**4 - 9.0))  # linear",
}


def _by_id(nb):
    return {markup.meta(c)["grade_id"]: c.source for c in nb.cells
            if c.cell_type == "code" and markup.meta(c)}


@pytest.mark.slow
def test_set_v_hidden_tests_fail_for_wrong_answers():
    cells = _by_id(read(SET_V))
    assert set(WRONG_V) == {k[:-len("_answer")] for k in cells if k.endswith("_answer")}
    run = [cells["setup"], cells[markup.KEY_ID]]
    for k, wrong in WRONG_V.items():
        run += [wrong, cells[f"{k}_check"]]
    report = grader.run_cells(run, [], sandboxed=False,
                              limits=grader.Limits(cell_timeout=120, total_timeout=600))
    status = [c["status"] for c in report["cells"]]
    assert status[:2] == ["ok", "ok"] and status[2::2] == ["ok"] * len(WRONG_V), report["cells"]
    for k, c in zip(WRONG_V, report["cells"][3::2]):
        assert c["status"] == "error" and c["error"].startswith("AssertionError"), (k, c)


@pytest.mark.slow
def test_set_v_graded(tmp_path):
    """The instructor's own notebook, handed in, scores full marks; the blank student notebook
    nothing; one with a common mistake in every answer nothing, with feedback naming them."""
    student = read(SETS / SET_V.name)
    mistakes = copy.deepcopy(student)
    for c in mistakes.cells:
        gid = (markup.meta(c) or {}).get("grade_id", "")
        if gid.endswith("_answer"):
            c.source = WRONG_V[gid[:-len("_answer")]]
    folder = tmp_path / "subs"
    folder.mkdir()
    shutil.copy(SET_V, folder / "solutions.ipynb")
    nbformat.write(student, folder / "blank.ipynb")
    nbformat.write(mistakes, folder / "mistakes.ipynb")
    rows = {r["student"]: r for r in grader.grade(SET_V, folder, tmp_path / "v.csv", seed=11,
                                                  jobs=2, limits=grader.Limits(60, 300))}
    assert rows["solutions"]["total"] == 22 and rows["solutions"]["notes"] == ""
    assert rows["blank"]["total"] == 0
    assert all("not answered yet" in rows["blank"][f"{k} feedback"] for k in WRONG_V)
    fb = {k: rows["mistakes"][f"{k} feedback"] for k in WRONG_V}
    for k in WRONG_V:       # nothing for a named mistake; partial credit for right entries
        if "some entries are right" in fb[k] or "a term of the answer" in fb[k]:
            assert rows["mistakes"][k] > 0 and fb[k].startswith("✘"), fb[k]
        else:
            assert rows["mistakes"][k] == 0, (k, fb[k])
    assert 0 < rows["mistakes"]["total"] < 10
    assert "transpose" in fb["p1"] and "sign" in fb["p3"] and "sign" in fb["p7"]
    assert "(2, 1)" in fb["p4"] and "wrong order" in fb["p10"]


# --------------------------------------------------------------------------
# the built-in grader's table and feedback pages
# --------------------------------------------------------------------------

def test_roster_names_the_students(tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text("file,student\nalice.ipynb,s1234567\nbob,S7654321\n")
    assert grader.read_roster(roster) == {"alice.ipynb": "s1234567", "bob.ipynb": "s7654321"}
    bad = tmp_path / "bad.csv"
    bad.write_text("name,id\nalice,1\n")
    with pytest.raises(ValueError, match="expected the columns 'file' and 'student'"):
        grader.read_roster(bad)


def test_feedback_page_escapes_what_submissions_wrote():
    from robodyn.answers import Problem
    ref = grader.Reference([Problem("p1", "x", "a <b>number</b>", points=2)], {}, {})
    row = {"student": "<script>alert(1)</script>", "file": "x.ipynb", "total": 1.0,
           "p1": 1.0, "p1 feedback": "✘ some entries are right <img src=x>",
           "notes": "cell 4 crashed: <b>boom</b>"}
    page = grader.feedback_html(row, ref, "set")
    assert "<script>" not in page and "<img" not in page and "&lt;b&gt;boom" in page
    assert "1 of 2 points" in page and 'class="part"' in page


def test_notes_name_the_notebooks_own_cells():
    """A failed cell is named by its place in the submitted notebook (markdown counted), and
    an answer cell that crashed by that name, not as 'not answered yet'."""
    release = markup.student_version(read(SOURCES[0]))
    sub = json.loads(nbformat.writes(release))
    plan = grader.submission_plan(sub, release)
    answer = next(i for i, (_, n, gid) in enumerate(plan) if gid == "p2_answer")
    number = plan[answer][1]
    assert sub["cells"][number - 1]["metadata"]["nbgrader"]["grade_id"] == "p2_answer"
    note = grader._cell_note({"index": answer, "status": "error", "error": "ZeroDivisionError"},
                             plan)
    assert note == f'cell {number} crashed: "ZeroDivisionError"'


def test_the_instructor_page_lists_every_problem_of_every_set():
    """The table of book/assignments/index.md numbers, for each set, exactly the problems
    1..n that `generate` reports (n: the set's answer cells, one per Problem)."""
    import re
    page = (SETS / "index.md").read_text(encoding="utf-8")
    rows = {m.group(1): m.group(2) for m in re.finditer(
        r"^\| \[[IVX]+: [^\]]*\]\(([^)]+)\.ipynb\) \| (.*) \|$", page, re.M)}
    assert sorted(rows) == sorted(p.stem for p in SOURCES)
    for src in SOURCES:
        n = sum(1 for c in read(src).cells if c.cell_type == "code"
                and (markup.meta(c) or {}).get("grade_id", "").endswith("_answer"))
        listed = [int(k) for k in re.findall(r"(?:^|· |, | and )(\d+) (?=\S)", rows[src.stem])]
        assert listed == list(range(1, n + 1)), (src.stem, listed, n)
