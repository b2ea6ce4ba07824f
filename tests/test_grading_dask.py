"""Grading a folder as Dask tasks: the same marks as local processes, a killed worker, a killed
grader and its resumed run, the gradebook nbgrader reads, hand-graded answers.

A tiny set (two automatic problems, one argument graded by hand) and a few tiny submissions,
graded in the real sandbox where there is one (else ``unsafe``: the run's logic is the same);
a local Dask cluster of 2 worker processes. Every run appends one line per grading attempt to
``ROBODYN_GRADING_LOG`` (the workers inherit it): that is how the sandbox runs are counted.
About 55 s on 2 cores at a load of 1-2 (6 min under a load of 20).
"""
import csv
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import nbformat
import pytest

from _dask_support import local_cluster
from robodyn.grading import grader, gradebook, markup

distributed = pytest.importorskip("distributed")

ROOT = Path(__file__).resolve().parents[1]
LIMITS = grader.Limits(cell_timeout=20.0, total_timeout=60.0, memory_mb=2048)
UNSAFE = not grader.sandbox_status()[0]
SEED = 5

SETUP = """import sympy as sp
from robodyn.answers import Problem, ProblemSet
x = sp.Symbol("x", real=True)
problems = ProblemSet("tiny", [Problem("p1", "A", "a number", points=1),
                               Problem("p2", "B", "a function of x", points=2,
                                       variables={"x": (-1.0, 1.0)})])"""

ANSWERS = {"good": ("A = 3", "B = 1 - sp.cos(x)**2", "Because sin^2 + cos^2 = 1."),
           "half": ("A = 1 / 0", "B = sp.cos(x)", None),
           "slow": ("import time\ntime.sleep(3)\nA = 3", "B = sp.sin(x)**2", "Slowly.")}
MARKS = {"good": (1, 2), "half": (0, 0), "slow": (1, 2)}


def _cell(kind, source, gid, **flags):
    c = (nbformat.v4.new_code_cell if kind == "code" else nbformat.v4.new_markdown_cell)(source)
    c.metadata["nbgrader"] = markup.nbgrader_metadata(gid, **flags)
    return c


def _instructor():
    sol = "{} = None\n### BEGIN SOLUTION\n{} = {}\n### END SOLUTION"
    return nbformat.v4.new_notebook(cells=[
        _cell("code", SETUP, "setup", locked=True),
        _cell("code", sol.format("A", "A", "3"), "p1_answer", solution=True),
        _cell("code", 'print(problems.check("p1", A))', "p1_check", grade=True, locked=True,
              points=1),
        _cell("code", sol.format("B", "B", "sp.sin(x)**2"), "p2_answer", solution=True),
        _cell("code", 'print(problems.check("p2", B))', "p2_check", grade=True, locked=True,
              points=2),
        _cell("markdown", "Why?", "p2_argument", grade=True, solution=True, points=2)])


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """The instructor notebook, a folder of submissions, and the marks of the local path."""
    root = tmp_path_factory.mktemp("course")
    nbformat.write(_instructor(), root / "tiny.ipynb")
    release = markup.student_version(_instructor())
    subs = root / "submitted"
    subs.mkdir()
    for name, (a, b, text) in ANSWERS.items():
        nb = nbformat.from_dict(json.loads(nbformat.writes(release)))
        for c in nb.cells:
            gid = c.metadata["nbgrader"]["grade_id"]
            if gid == "p1_answer" and a:
                c.source = a
            elif gid == "p2_answer" and b:
                c.source = b
            elif gid == "p2_argument" and text:
                c.source = text
        nbformat.write(nb, subs / f"{name}.ipynb")
    started = time.monotonic()
    local = _grade(root, "local", jobs=1)
    print(f"local path: {len(local)} submissions in {time.monotonic() - started:.1f} s")
    return root, local


@pytest.fixture(scope="module")
def client():
    with local_cluster() as (_, c):
        yield c


def _grade(root, name, log=None, **kw):
    old = os.environ.get("ROBODYN_GRADING_LOG")
    if log is not None:
        os.environ["ROBODYN_GRADING_LOG"] = str(log)
    try:
        rows = grader.grade(root / "tiny.ipynb", root / "submitted", root / name / "scores.csv",
                            limits=LIMITS, unsafe=UNSAFE, feedback_dir=root / name / "pages",
                            **{"seed": SEED, **kw})
    finally:
        if old is None:
            os.environ.pop("ROBODYN_GRADING_LOG", None)
        else:
            os.environ["ROBODYN_GRADING_LOG"] = old
    return {r["student"]: r for r in rows}


def _csv(path):
    with open(path, newline="", encoding="utf-8") as fh:
        return {r["student"]: r for r in csv.DictReader(fh)}


def _attempts(log):
    if not Path(log).exists():
        return []
    return [json.loads(line)["file"] for line in Path(log).read_text().splitlines()]


def _gradebook(path):
    """{student: ({grade cell: score}, {grade cell: needs manual grade})}, read with
    nbgrader's own API."""
    from nbgrader.api import Gradebook
    out = {}
    with Gradebook(f"sqlite:///{path}") as gb:
        for sub in gb.assignment_submissions("tiny"):
            nb = gb.find_submission_notebook("tiny", "tiny", sub.student.id)
            out[sub.student.id] = ({g.name: g.score for g in nb.grades},
                                   {g.name: g.needs_manual_grade for g in nb.grades})
    return out


def _marks(rows):
    """What must not depend on where a submission ran: points, the verdict of each problem
    (the judge words it by what it had time for: 'equal symbolically' or 'at random points'),
    the hand-graded texts."""
    return {s: (float(r["total"]), float(r["p1"]), float(r["p2"]), r["p1 feedback"][:1],
                r["p2 feedback"][:1], r.get("manual")) for s, r in rows.items()}


def _check_marks(rows):
    assert set(rows) == set(MARKS)
    for student, (p1, p2) in MARKS.items():
        r = rows[student]
        assert (float(r["p1"]), float(r["p2"])) == (p1, p2), (student, r)


@pytest.mark.slow
def test_local_path_marks_and_hand_graded_answers(course):
    root, local = course
    _check_marks(local)
    table = _csv(root / "local" / "scores.csv")
    _check_marks(table)
    assert table["good"]["p2_argument"] == "" and table["good"]["awaiting"] == "2.0"
    assert table["good"]["p2_argument feedback"].startswith(gradebook.AWAITING)
    assert "no answer" in table["half"]["p2_argument feedback"]
    assert "ZeroDivisionError" in table["half"]["notes"]
    page = (root / "local" / "pages" / "good.html").read_text()
    assert "Because sin^2 + cos^2 = 1." in page and gradebook.AWAITING in page
    book = _gradebook(root / "local" / "gradebook.db")
    for student, (p1, p2) in MARKS.items():             # nbgrader's reading of the rows
        scores, manual = book[student]
        assert (scores["p1_check"], scores["p2_check"]) == (p1, p2)
        assert manual == {"p1_check": False, "p2_check": False, "p2_argument": True}


@pytest.mark.slow
def test_dask_grades_as_the_local_path_through_a_killed_worker(course, client, tmp_path):
    root, local = course
    log = tmp_path / "attempts.log"
    killed = []

    def killer():                                 # kill the worker grading 'slow.ipynb'
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and not killed:
            for line in (log.read_text().splitlines() if log.exists() else []):
                d = json.loads(line)
                if d["file"] == "slow.ipynb":
                    time.sleep(0.5)
                    os.kill(d["pid"], signal.SIGKILL)
                    killed.append(d["pid"])
                    break
            time.sleep(0.05)
    t = threading.Thread(target=killer, daemon=True)
    t.start()
    started = time.monotonic()
    rows = _grade(root, "dask", log=log, scheduler=client)
    print(f"Dask path: {len(rows)} submissions in {time.monotonic() - started:.1f} s")
    t.join()
    assert _marks(rows) == _marks(local)
    assert killed, "the slow submission never started"
    tries = _attempts(log)
    assert tries.count("slow.ipynb") >= 2 and set(tries) == {f"{s}.ipynb" for s in MARKS}
    assert rows["slow"]["worker"].split(":")[1] != str(killed[0])
    table = _csv(root / "dask" / "scores.csv")
    assert len(table) == len(MARKS)                  # each once, in the table and the book
    _check_marks(table)
    book = _gradebook(root / "dask" / "gradebook.db")
    assert book == _gradebook(root / "local" / "gradebook.db")


@pytest.mark.slow
def test_a_killed_grader_resumes(course, client, tmp_path):
    root, local = course
    out = root / "resumed"
    first, second = tmp_path / "first.log", tmp_path / "second.log"
    env = dict(os.environ, ROBODYN_GRADING_LOG=str(first),
               PYTHONPATH=str(ROOT / "lib") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    cmd = [sys.executable, "-m", "robodyn.grading", "grade", str(root / "tiny.ipynb"),
           str(root / "submitted"), "--csv", str(out / "scores.csv"), "--seed", str(SEED),
           "--cell-timeout", str(LIMITS.cell_timeout), "--jobs", "1"] + \
        (["--unsafe"] if UNSAFE else [])
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:            # one submission graded, then kill
            if (out / "scores.csv").exists() and len(_csv(out / "scores.csv")) >= 1:
                break
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGKILL)
    finally:
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    kept = _csv(out / "scores.csv")
    in_book = set(_gradebook(out / "gradebook.db"))
    assert 1 <= len(kept) and set(kept) <= in_book and len(in_book) < len(MARKS)
    # the rerun: on the Dask cluster this time, with the seed the first run stored
    rows = _grade(root, "resumed", log=second, scheduler=client, seed=None)
    regraded = {Path(f).stem for f in _attempts(second)}
    assert not regraded & in_book                       # nothing graded twice
    assert regraded == set(MARKS) - in_book
    table = _csv(out / "scores.csv")
    _check_marks(table)
    assert _marks(rows) == _marks(local)
    assert _gradebook(out / "gradebook.db") == _gradebook(root / "local" / "gradebook.db")
    # and once more: all graded, nothing runs again
    again = _grade(root, "resumed", log=second, scheduler=client)
    assert {Path(f).stem for f in _attempts(second)} == regraded and set(again) == set(MARKS)


# --------------------------------------------------------------------------
# the records alone (no sandbox, fast)
# --------------------------------------------------------------------------

def _row(name, p1=1.0, p2=2.0, **kw):
    return {"file": f"{name}.ipynb", "student": name, "total": p1 + p2, "p1": p1, "p2": p2,
            "p1 feedback": "✔", "p2 feedback": "✔" if p2 else "✘", "notes": "",
            "seconds": 0.5, "manual": {"p2_argument": "Because."}, **kw}


def _records(root):
    rec = gradebook.Records(root / "gradebook.db", "tiny", "tiny",
                            markup.student_version(_instructor()), root / "scores.csv",
                            feedback_dir=root / "pages", page=lambda row: row["student"])
    rec.define([("p1", 1.0), ("p2", 2.0)])
    return rec


def test_records_write_each_submission_once_and_a_rerun_reads_them(tmp_path):
    rec = _records(tmp_path)
    assert rec.add(_row("ann")) and rec.add(_row("bob", p2=0.0))
    assert not rec.add(_row("ann", p1=0.0))              # a second delivery: ignored
    assert _csv(tmp_path / "scores.csv")["ann"]["p1"] == "1.0"   # on disk before close
    rec.close()
    book = _gradebook(tmp_path / "gradebook.db")
    assert book == {"ann": ({"p1_check": 1.0, "p2_check": 2.0, "p2_argument": 0.0},
                            {"p1_check": False, "p2_check": False, "p2_argument": True}),
                    "bob": ({"p1_check": 1.0, "p2_check": 0.0, "p2_argument": 0.0},
                            {"p1_check": False, "p2_check": False, "p2_argument": True})}
    again = _records(tmp_path)                            # the rerun's view
    assert set(again.graded()) == {"ann.ipynb", "bob.ipynb"}
    assert again.graded()["bob.ipynb"]["p2"] == 0.0
    assert not again.add(_row("bob"))
    again.close()
    assert _gradebook(tmp_path / "gradebook.db") == book
    table = _csv(tmp_path / "scores.csv")
    assert table["ann"]["awaiting"] == "2.0" and table["ann"]["p2_argument"] == ""
    assert not list(tmp_path.glob(".*.part"))            # no temporary file left behind


def test_a_failing_grading_is_its_submissions_row(tmp_path):
    nb = _instructor()
    path = tmp_path / "x.ipynb"
    nbformat.write(markup.student_version(nb), path)
    ref = grader.Reference([grader.answers.Problem("p1", "A", points=1)], {}, {})
    job = grader._Job(None, ref, LIMITS, 1, True)         # no release: grade_notebook refuses it
    row = grader._grade_task(job, (str(path), "x"))
    assert row["p1"] == 0.0 and "grade_notebook: release" in row["notes"]   # its row
    assert row["file"] == "x.ipynb" and row["total"] == 0.0


def test_console_text_and_file_ids():
    assert gradebook.console_text("a\nb\x1b[31m\u202e") == "a\\x0ab\\x1b[31m\\u202e"
    assert gradebook.console_text("x" * 10, 4) == "xxxx…"
    assert grader._file_id("a" + chr(0xDCFF) + ".ipynb") == "a\\xff.ipynb"


def test_a_hostile_file_name_is_shown_clean_and_kept_apart(tmp_path):
    rec = _records(tmp_path)
    for sid, raw in (("x1", "x\ny\x1b[2J.ipynb"), ("x2", "x\ry\x1b[2J.ipynb")):   # same once
        assert rec.add(_row(sid, id=raw, file=gradebook.console_text(raw, 300)))   # cleaned
    with pytest.raises(ValueError, match="a second file for 'x1'"):    # one file per id
        rec.add(_row("x1", id="x1-again.ipynb"))
    rec.close()
    text = (tmp_path / "scores.csv").read_text()
    assert "\x1b" not in text and text.count("\n") == 3            # header and two rows
    again = _records(tmp_path)
    assert set(again.graded()) == {"x\ny\x1b[2J.ipynb", "x\ry\x1b[2J.ipynb"}
    again.close()
