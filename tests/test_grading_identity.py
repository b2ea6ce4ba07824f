"""Every mark lands on the right student (issue 41 point 1): a student's id is decided once --
the roster's, else the file's name -- NFKC-normalised and case-folded before anything is
compared, held to a safe set of characters; two files of one id are both held back; a file not
in the roster is refused. The CSV, nbgrader's gradebook, the feedback pages and nbgrader's own
``nbgrader export`` get only checked ids; honest students keep full marks, locally and on Dask.

The grading runs use the tiny set of ``test_grading_dask`` (two automatic problems, 3 points,
and an argument graded by hand), in the real sandbox where there is one.
"""
import csv
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from _dask_support import local_cluster
from robodyn.grading import _identity, grader, gradebook, markup

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("tiny_set", ROOT / "tests" / "test_grading_dask.py")
tiny = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tiny)

NBSP, ZWSP, CYRILLIC_A = "\u00a0", "\u200b", "\u0430"
HOSTILE = {                     # file stem: what must become of it (None: refused)
    f"v{NBSP}victim3": "v victim3",          # normalised: the twin of the real one
    "forge,x,y,z,13.0,13.0,13.0": None,
    "=formula+1": None,
    "+cmd|' /C calc'!A0": None,
    "..": None,
    ".": None,
    "..\\..\\x": None,
    "a/b": None,                              # (not a file name: checked as an id only)
    f"vi{ZWSP}ctim3": None,
    f"v vi{CYRILLIC_A}tim3": None,            # a Cyrillic look-alike
    "ｖ　ｖｉｃｔｉｍ３": "v victim3",          # full width: NFKC makes it the real id
    "V Victim3": "v victim3",                 # ids are case-insensitive
    "\u212a1001": "k1001",                    # the Kelvin sign is a K
    "-rf": None,
    "a\x1b[2J\nb": None,
    "": None,
}


def test_student_id_normalises_then_checks():
    for text, want in HOSTILE.items():
        if want is None:
            with pytest.raises(ValueError, match="not a student id"):
                _identity.student_id(text)
        else:
            assert _identity.student_id(text) == want, text
    assert _identity.student_id("Alice.Smith-2") == "alice.smith-2"
    assert _identity.student_id("s" * _identity.MAX_ID) == "s" * _identity.MAX_ID
    for bad in ("s" * (_identity.MAX_ID + 1), "a..b", "a  b", "a.", "a ", "x,y", "x\"y"):
        with pytest.raises(ValueError, match="not a student id"):
            _identity.student_id(bad)
    with pytest.raises(ValueError, match="U\\+200B ZERO WIDTH SPACE"):
        _identity.student_id(f"vi{ZWSP}ctim3")
    assert _identity.is_student_id("alice") and not _identity.is_student_id("Alice")


def test_assign_holds_back_both_of_one_id_and_refuses_files_not_in_the_roster():
    files = [(f"{s}.ipynb", f"/x/{s}.ipynb") for s in
             ("v victim3", f"v{NBSP}victim3", "good", "Good", "=formula+1", "s1001")]
    who = _identity.assign(files)
    held = dict(who.held)
    assert set(who.accepted) == {"s1001.ipynb"}
    for name in ("v victim3.ipynb", f"v{NBSP}victim3.ipynb", "good.ipynb", "Good.ipynb"):
        assert "both held back" in held[name], held
    assert "gives no student id" in held["=formula+1.ipynb"]
    roster = {"v victim3.ipynb": "victim3", "good.ipynb": "s1001"}
    who = _identity.assign(files, roster)
    assert who.accepted == {"v victim3.ipynb": ("/x/v victim3.ipynb", "victim3"),
                            "good.ipynb": ("/x/good.ipynb", "s1001")}
    held = dict(who.held)
    assert set(held) == {f"v{NBSP}victim3.ipynb", "Good.ipynb", "=formula+1.ipynb",
                         "s1001.ipynb"} and all("not in the roster" in v for v in held.values())
    # a rerun: an id already graded from another file takes no second file
    who = _identity.assign([("s1001.ipynb", "p")], taken={"s1001": "old.ipynb"})
    assert not who.accepted and "already has a graded submission" in who.held[0][1]


def test_a_roster_is_checked_once(tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text("file,student\nalice.ipynb,S1234567\nbob,ｓ7654321\n", encoding="utf-8")
    assert grader.read_roster(roster) == {"alice.ipynb": "s1234567", "bob.ipynb": "s7654321"}
    for body, match in (("file,student\na,=1+1\n", "line 2: expected a student id"),
                        ("file,student\na,x\na.ipynb,y\n", "listed twice"),
                        ("file,student\na,..\n", "line 2")):
        roster.write_text(body, encoding="utf-8")
        with pytest.raises(ValueError, match=match):
            grader.read_roster(roster)


def test_records_write_only_checked_ids_one_file_each(tmp_path):
    rec = tiny._records(tmp_path)
    try:
        with pytest.raises(ValueError, match="checked student id"):
            rec.add(tiny._row("x", student="Ann"))
        with pytest.raises(ValueError, match="checked student id"):
            rec.add(tiny._row("x", student="=1+1"))
        assert rec.add(tiny._row("ann"))
        with pytest.raises(ValueError, match="a second file for 'ann'"):
            rec.add(tiny._row("ann2", student="ann"))
    finally:
        rec.close()
    assert (tmp_path / "pages" / "ann.html").read_text() == "ann"


def _submission(release, good):
    nb = nbformat.from_dict(json.loads(nbformat.writes(release)))
    if good:
        a, b, text = tiny.ANSWERS["good"]
        for c in nb.cells:
            gid = c.metadata["nbgrader"]["grade_id"]
            c.source = {"p1_answer": a, "p2_answer": b, "p2_argument": text}.get(gid, c.source)
    return nb


def _folder(root, names):
    """The tiny set's instructor notebook and a folder: ``names`` {stem: good?}."""
    nbformat.write(tiny._instructor(), root / "tiny.ipynb")
    release = markup.student_version(tiny._instructor())
    subs = root / "submitted"
    subs.mkdir()
    for stem, good in names.items():
        nbformat.write(_submission(release, good), subs / f"{stem}.ipynb")
    return subs


def _check_written(out, want):
    """The CSV, nbgrader's gradebook and the pages hold exactly ``want`` {id: total}."""
    table = tiny._csv(out / "scores.csv")
    assert {s: float(r["total"]) for s, r in table.items()} == want, table
    book = tiny._gradebook(out / "gradebook.db")
    assert {s: sum(v for k, v in g.items() if k != "p2_argument")
            for s, (g, _) in book.items()} == want
    pages = {p.stem: p.read_text(encoding="utf-8") for p in (out / "pages").glob("*.html")}
    assert set(pages) == set(want)
    for s, total in want.items():
        assert f"<b>{total:g} of 3 points</b>" in pages[s] and f"<b>{s}</b>" in pages[s]


def _grade(root, subs, out, **kw):
    return grader.grade(root / "tiny.ipynb", subs, out / "scores.csv", limits=tiny.LIMITS,
                        unsafe=tiny.UNSAFE, feedback_dir=out / "pages", seed=3, jobs=2,
                        **kw)


@pytest.fixture(scope="module")
def twins(tmp_path_factory):
    root = tmp_path_factory.mktemp("twins")
    subs = _folder(root, {"v victim3": True, f"v{NBSP}victim3": False, "good": True,
                          "s1001": False, "=formula+1": False, "..": False})
    roster = root / "roster.csv"
    roster.write_text("file,student\nv victim3.ipynb,victim3\ngood.ipynb,S1001\n",
                      encoding="utf-8")
    return root, subs, roster


@pytest.mark.slow
def test_twins_are_held_back_without_a_roster(twins, tmp_path):
    root, subs, _ = twins
    said = []
    rows = _grade(root, subs, tmp_path, progress=said.append)
    assert {r["student"]: r["total"] for r in rows} == {"good": 3.0, "s1001": 0.0}
    _check_written(tmp_path, {"good": 3.0, "s1001": 0.0})
    with open(tmp_path / "scores.held-back.csv", newline="", encoding="utf-8") as fh:
        held = {r["file"]: r["reason"] for r in csv.DictReader(fh)}
    assert set(held) == {"v victim3.ipynb", "v\\xa0victim3.ipynb", "'=formula+1.ipynb",
                         "...ipynb"}, held
    assert "both held back" in held["v victim3.ipynb"]
    assert "both held back" in held["v\\xa0victim3.ipynb"]
    assert sum("HELD BACK" in line for line in said) == 4


@pytest.mark.slow
def test_a_roster_keeps_every_mark_on_its_student_locally(twins, tmp_path):
    root, subs, roster = twins
    rows = _grade(root, subs, tmp_path, roster=roster)
    assert {r["student"]: r["total"] for r in rows} == {"victim3": 3.0, "s1001": 3.0}
    _check_written(tmp_path, {"victim3": 3.0, "s1001": 3.0})
    text = (tmp_path / "scores.held-back.csv").read_text(encoding="utf-8")
    assert text.count("not in the roster") == 4 and "s1001.ipynb" in text


@pytest.mark.slow
def test_a_roster_keeps_every_mark_on_its_student_on_dask(twins, tmp_path):
    root, subs, roster = twins
    with local_cluster() as (_, client):
        rows = _grade(root, subs, tmp_path, roster=roster, scheduler=client)
    assert {r["student"]: r["total"] for r in rows} == {"victim3": 3.0, "s1001": 3.0}, \
        [(r["student"], r["notes"], r["p1 feedback"]) for r in rows]
    _check_written(tmp_path, {"victim3": 3.0, "s1001": 3.0})


CONFIG = """\
c = get_config()
c.CourseDirectory.course_id = "robodyn"
"""


@pytest.mark.slow
def test_nbgraders_own_export_reads_back_only_checked_ids(tmp_path):
    """Blank files with hostile names beside two honest ones, graded into a course's
    gradebook; nbgrader's own ``nbgrader export`` (which does not quote ids) then writes a CSV
    that reads back with the honest marks, one row per checked id, and no formula or
    forged field."""
    stems = {s: False for s in HOSTILE if s and "/" not in s}
    stems.update({"alice": True, "bob": True})
    course = tmp_path / "course"
    course.mkdir()
    subs = _folder(course, stems)
    _grade(course, subs, course, assignment="ps")
    (course / "nbgrader_config.py").write_text(CONFIG)
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    r = subprocess.run([sys.executable, "-m", "nbgrader", "export", "--to", "grades.csv"],
                       cwd=course, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    with open(course / "grades.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert {r["student_id"]: float(r["score"]) for r in rows} == {
        "alice": 3.0, "bob": 3.0, "k1001": 0.0}, rows
    for r in rows:
        assert _identity.is_student_id(r["student_id"]) and None not in r, r
        assert float(r["max_score"]) == 5.0
        assert not any(str(v).startswith(("=", "+", "-", "@")) for v in r.values()), r
