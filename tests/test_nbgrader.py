"""The real nbgrader round trip on every problem set: generate_assignment, autograde, and
generate_feedback, in a temporary course.

Two submissions per set: the instructor notebook itself (all answers right) and the blank
release. The first scores every autograded point, the second none; the hidden tests are back in
the autograded notebooks; each written argument waits for a manual grade; both students get a
feedback page. nbgrader is a test dependency (requirements.txt): nothing here skips.
"""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from robodyn.grading import markup

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted((ROOT / "book" / "assignments" / "source").glob("*.ipynb"))
SHIPPED = ROOT / "book" / "assignments" / "nbgrader_config.py"
CONFIG = SHIPPED.read_text() + '\nc.CourseDirectory.course_id = "robodyn"\n'
"""The course's configuration: the one the book ships for instructors, with a course id."""
NBGRADER = os.path.join(os.path.dirname(sys.executable), "nbgrader")
"""The environment's own ``nbgrader`` program, run as an instructor would run ``.venv/bin/nbgrader``."""


def _env():
    """The environment of an instructor who did not activate the venv: its bin folder is not
    on the PATH (so nbgrader's ``alembic`` is found only through the shipped config)."""
    env = dict(os.environ)
    here = os.path.dirname(sys.executable)
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "/usr/bin:/bin").split(os.pathsep)
                                  if p and os.path.realpath(p) != os.path.realpath(here))
    env["PYTHONPATH"] = str(ROOT / "lib") + os.pathsep + env.get("PYTHONPATH", "")
    env.update(ROBODYN_QUICK="1", MPLBACKEND="Agg")
    return env


def _nbgrader(course, *args):
    r = subprocess.run([NBGRADER, *args, "--force"], cwd=course, env=_env(),
                       capture_output=True, text=True, timeout=1800)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-3000:]
    errors = [line for line in r.stderr.splitlines() if "ERROR" in line]
    # a known race of the kernel's teardown (pyzmq/tornado), logged after the notebook ran and
    # with exit status 0: "Uncaught exception in ZMQStream callback ... Socket operation on
    # non-socket". Anything else logged as ERROR fails.
    teardown = ("Uncaught exception in ZMQStream callback" in r.stderr
                and "Socket operation on non-socket" in r.stderr)
    errors = [e for e in errors if not (teardown and "ZMQStream callback" in e)]
    assert not errors, r.stderr[-3000:]
    return r


def _no_secret_in_release(release, instructor, name):
    """nbgrader's release holds no solution line (but where the statement quotes it), no model
    answer and no hidden test."""
    text = release.read_text()
    statements = "\n".join(c.source for c in instructor.cells if c.cell_type == "markdown")
    for secret in markup.solution_lines(instructor):
        assert secret not in text or secret in statements, (name, secret)
    assert "*Model answer:*" not in text and "BEGIN HIDDEN TESTS" not in text


def _hidden_tests_are_back(autograded, instructor):
    """``autograde`` put the instructor's hidden tests back into the graded notebook."""
    graded = {c.metadata["nbgrader"]["grade_id"]: c for c in nbformat.read(
        autograded, as_version=4).cells if "nbgrader" in c.metadata}
    hidden = [c for c in instructor.cells if markup.BEGIN_HIDDEN in c.source]
    assert hidden
    for c in hidden:
        assert graded[c.metadata["nbgrader"]["grade_id"]].source == c.source


@pytest.mark.slow
@pytest.mark.parametrize("src", SOURCES[1:], ids=lambda p: p.stem)
def test_nbgrader_round_trip(src, tmp_path):
    """The round trip of every set but set I (whose release, autograde and feedback
    test_nbgrader_releases_the_book_notebook_and_marks_as_the_grader runs, with these checks)."""
    from nbgrader.api import Gradebook
    course, name = tmp_path / "course", src.stem
    (course / "source" / "ps").mkdir(parents=True)
    shutil.copy(src, course / "source" / "ps" / src.name)
    (course / "nbgrader_config.py").write_text(CONFIG)

    _nbgrader(course, "generate_assignment", "ps")
    release = course / "release" / "ps" / src.name
    instructor = nbformat.read(src, as_version=4)
    _no_secret_in_release(release, instructor, name)

    for student, notebook in (("solved", src), ("blank", release)):
        folder = course / "submitted" / student / "ps"
        folder.mkdir(parents=True)
        shutil.copy(notebook, folder / src.name)
    _nbgrader(course, "autograde", "ps")
    _nbgrader(course, "generate_feedback", "ps")

    _hidden_tests_are_back(course / "autograded" / "blank" / "ps" / src.name, instructor)
    manual = {c.metadata["nbgrader"]["grade_id"] for c in instructor.cells
              if c.cell_type == "markdown" and (markup.meta(c) or {}).get("grade")}
    points = sum(c.metadata["nbgrader"]["points"] for c in instructor.cells
                 if c.cell_type == "code" and (markup.meta(c) or {}).get("grade"))
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        solved = gb.find_submission_notebook(name, "ps", "solved")
        blank = gb.find_submission_notebook(name, "ps", "blank")
        assert solved.max_code_score == points
        assert solved.code_score == points, [(g.name, g.score) for g in solved.grades]
        assert blank.code_score == 0, [(g.name, g.score) for g in blank.grades]
        waiting = {g.name for g in solved.grades if g.needs_manual_grade}
        assert waiting == manual and solved.max_written_score == sum(
            c.metadata["nbgrader"]["points"] for c in instructor.cells
            if c.metadata.get("nbgrader", {}).get("grade_id") in manual)
    for student in ("solved", "blank"):
        page = course / "feedback" / student / "ps" / f"{name}.html"
        assert page.exists() and "Score" in page.read_text()


@pytest.mark.slow
def test_validate_tells_the_truth(tmp_path):
    """nbgrader's Validate on a student notebook of set I with 1 of 8 answers right and one
    transposed: it fails on the 7 other check cells (blank or wrong) and on the blank written
    argument (the notebook carries nbgrader's checksums, so Validate sees it is unchanged, as
    in nbgrader's own release), names the transpose,
    and does not fail on the right one (the check cells' ``problems.test``)."""
    release = ROOT / "book" / "assignments" / SOURCES[0].name
    nb = nbformat.read(release, as_version=4)
    src = nbformat.read(SOURCES[0], as_version=4)
    solutions = {c.metadata["nbgrader"]["grade_id"]: c.source for c in src.cells
                 if markup.meta(c) and markup.meta(c)["solution"]}
    for c in nb.cells:
        gid = (markup.meta(c) or {}).get("grade_id")
        if gid == "p1_answer":
            c.source = solutions[gid]
        elif gid == "p5_answer":
            c.source = solutions[gid] + "\nJ_p = J_p.T"
    path = tmp_path / SOURCES[0].name
    nbformat.write(nb, path)
    env = dict(os.environ, ROBODYN_QUICK="1", MPLBACKEND="Agg")
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    env["PYTHONPATH"] = str(ROOT / "lib") + os.pathsep + env.get("PYTHONPATH", "")
    r = subprocess.run([sys.executable, "-m", "nbgrader", "validate", str(path)], cwd=tmp_path,
                       env=env, capture_output=True, text=True, timeout=600)
    out = r.stdout
    assert "Success" not in out and "VALIDATION FAILED ON 8 CELL(S)" in out, out[-3000:]
    assert out.count("You did not provide a response") == 1          # the written argument
    assert 'problems.test("p1", R)' not in out and 'problems.test("p5", J_p)' in out
    flat = " ".join(out.split())
    assert "it is the transpose of the answer" in flat and "not answered yet" in out


def _filled(student_nb, instructor, problems, argument):
    """The book's student notebook with the instructor's solutions of ``problems`` (keys
    'p1'...) in its answer cells, and ``argument`` (or nothing) in its hand-graded cells."""
    import copy
    solution = {c.metadata["nbgrader"]["grade_id"]: c.source for c in instructor.cells
                if (markup.meta(c) or {}).get("solution")}
    nb = copy.deepcopy(student_nb)
    for c in nb.cells:
        gid = (markup.meta(c) or {}).get("grade_id", "")
        if gid.endswith("_answer") and gid[:-len("_answer")] in problems:
            c.source = solution[gid]
        elif gid.endswith("_argument") and argument:
            c.source = argument
    return nb


@pytest.mark.slow
def test_nbgrader_releases_the_book_notebook_and_marks_as_the_grader(tmp_path):
    """Issue 39 item 4, on problem set I: nbgrader's own ``generate_assignment`` (run as
    ``.venv/bin/nbgrader``, the venv not activated, with the configuration the book ships)
    releases exactly the book's student notebook, cell by cell (sources, ids, metadata with
    nbgrader's checksums, the self-test); submissions made from the book's notebook -- all
    right, half right, blank, and all right with the written argument, which is then graded
    by hand -- get from ``autograde`` the same points, problem by problem, as from
    ``python -m robodyn.grading grade``; the written argument waits for its grade by hand in
    both (where the cell still holds the release's text, nbgrader scores it 0 at once and the
    grader says it holds no answer), and nbgrader's total after the hand grading is the
    grader's total plus that grade."""
    import csv
    from nbgrader.api import Gradebook
    src = SOURCES[0]
    name = src.stem
    book_nb = nbformat.read(ROOT / "book" / "assignments" / src.name, as_version=4)
    instructor = nbformat.read(src, as_version=4)
    course = tmp_path / "course"
    (course / "source" / "ps").mkdir(parents=True)
    shutil.copy(src, course / "source" / "ps" / src.name)
    (course / "nbgrader_config.py").write_text(CONFIG)
    _nbgrader(course, "generate_assignment", "ps")
    _no_secret_in_release(course / "release" / "ps" / src.name, instructor, name)
    release = nbformat.read(course / "release" / "ps" / src.name, as_version=4)
    assert len(release.cells) == len(book_nb.cells)
    for mine, theirs in zip(book_nb.cells, release.cells):
        assert (mine.cell_type, mine.get("id"), mine.source, mine.metadata) == \
               (theirs.cell_type, theirs.get("id"), theirs.source, theirs.metadata)

    keys = [c.metadata["nbgrader"]["grade_id"][:-len("_answer")] for c in instructor.cells
            if (markup.meta(c) or {}).get("grade_id", "").endswith("_answer")]
    subs = {"right": _filled(book_nb, instructor, keys, None),
            "half": _filled(book_nb, instructor, keys[::2], None),
            "blank": book_nb,
            "argued": _filled(book_nb, instructor, keys, "Because det J = l1 l2 sin q2.")}
    folder = tmp_path / "handed_in"
    folder.mkdir()
    for student, nb in subs.items():
        nbformat.write(nb, folder / f"{student}.ipynb")
        (course / "submitted" / student / "ps").mkdir(parents=True)
        nbformat.write(nb, course / "submitted" / student / "ps" / src.name)
    _nbgrader(course, "autograde", "ps")
    for student in subs:
        _hidden_tests_are_back(course / "autograded" / student / "ps" / src.name, instructor)

    out = tmp_path / "scores.csv"
    r = subprocess.run([sys.executable, "-m", "robodyn.grading", "grade", str(src), str(folder),
                        "--csv", str(out), "--seed", "3", "--jobs", "2"], env=_env(),
                       capture_output=True, text=True, timeout=1800)
    assert r.returncode == 0, r.stderr[-3000:]
    with open(out, newline="", encoding="utf-8") as fh:
        ours = {row["student"]: row for row in csv.DictReader(fh)}
    manual = [c.metadata["nbgrader"] for c in instructor.cells
              if c.cell_type == "markdown" and (markup.meta(c) or {}).get("grade")]
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        for student in subs:
            nb = gb.find_submission_notebook(name, "ps", student)
            theirs = {g.name: g.score for g in nb.grades}
            for k in keys:
                assert theirs[f"{k}_check"] == float(ours[student][k]), (student, k)
            assert nb.code_score == float(ours[student]["total"])
            waiting = {g.name for g in nb.grades if g.needs_manual_grade}
            assert float(ours[student]["awaiting"]) == sum(m["points"] for m in manual)
            if student == "argued":              # an argument to grade by hand, in both
                assert waiting == {m["grade_id"] for m in manual}
                assert all(not ours[student][f"{m['grade_id']} feedback"].endswith(
                    "holds no answer") for m in manual)
            else:                                # the release's text: nothing to grade
                assert not waiting and all(theirs[m["grade_id"]] == 0 for m in manual)
                assert all(ours[student][f"{m['grade_id']} feedback"].endswith(
                    "the cell holds no answer") for m in manual)
        assert ours["right"]["total"] == ours["argued"]["total"] == "13.0"
        assert ours["blank"]["total"] == "0.0" and 0 < float(ours["half"]["total"]) < 13
        grade = gb.find_grade(manual[0]["grade_id"], name, "ps", "argued")   # the formgrader's
        grade.manual_score = 1.5
        gb.db.commit()
        assert gb.find_submission_notebook(name, "ps", "argued").score == 13 + 1.5
    _nbgrader(course, "generate_feedback", "ps")
    page = course / "feedback" / "argued" / "ps" / f"{name}.html"
    assert page.exists() and "14.5" in page.read_text()
