"""Valid calls of robodyn.grading's public callables (jail, sandbox, judge, grader, markup), for
the API fuzzer (issue 28). Cheap by construction: temporary folders, tiny notebooks, a problem
set of one problem; no call starts a notebook's process. The callables that would start one
(or that change the calling process for good) are in SKIP with the reason -- their arguments
are fuzzed all the same by tests/test_grading_args.py, with process creation blocked (valid
calls for them are here too, for that test).
"""
import json
import subprocess
import tempfile
from pathlib import Path

import nbformat
import numpy as np

from robodyn import answers
from robodyn.grading import grader, jail, markup

_G, _J, _M = "robodyn.grading.grader", "robodyn.grading.jail", "robodyn.grading.markup"


def _tmp():
    return Path(tempfile.mkdtemp(prefix="fuzz-grade34-"))


def _problem():
    return answers.Problem("p1", "x", "a number", points=2)


def _ref():
    p = _problem()
    return grader.Reference([p], {"p1": answers.encode(2.0, p)}, {})


def _instructor():
    """A tiny instructor notebook: setup, key, answer (solution), check (grade) cells."""
    cells = [("setup", "from robodyn import answers\nproblems = answers.ProblemSet('s', "
                       "[answers.Problem('p1', 'x')])", dict(locked=True)),
             (markup.KEY_ID, "problems.load_key(None)", dict(locked=True)),
             ("p1_answer", "x = None\n### BEGIN SOLUTION\nx = 2.0\n### END SOLUTION",
              dict(solution=True)),
             ("p1_check", "problems.test('p1', x)", dict(grade=True, locked=True, points=1))]
    out = []
    for gid, src, kw in cells:
        c = nbformat.v4.new_code_cell(src)
        c.metadata["nbgrader"] = markup.nbgrader_metadata(gid, **kw)
        out.append(c)
    return nbformat.v4.new_notebook(cells=out)


def _keyed():
    nb = _instructor()
    markup.set_answer_key(nb, '{"p1": {"shape": []}}')
    return nb


def _submission():
    """A submission as read from its file: plain JSON, the answer cell filled in."""
    nb = markup.student_version(_instructor())
    nb.cells[2].source = "x = 2.0"
    return json.loads(nbformat.writes(nb))

def _file(name, data):
    p = _tmp() / name
    p.write_bytes(data)
    return p


def _roster():
    return _file("roster.csv", b"file,student\na.ipynb,Ada\n")


def _row():
    return {"file": "a.ipynb", "student": "a", "total": 1.0, "p1": 1.0, "p1 feedback": "ok",
            "notes": "", "seconds": 0.1}


def _launch():
    return jail.Launch(jail.bwrap_path(), ["/bin/true"])


def _child():
    """A child process of this one that lives a little (what Unit.watch follows)."""
    return subprocess.Popen(["sleep", "20"]).pid


CALLS = {
    "robodyn.grading.seccomp.decision": lambda: (("socket",), {}),
    f"{_G}.Limits": lambda: ((), {"cell_timeout": 5.0, "total_timeout": 20.0,
                                  "memory_mb": 512, "file_mb": 4}),
    f"{_G}.Reference": lambda: (([_problem()], {"p1": answers.encode(2.0, _problem())}, {}),
                                {}),
    f"{_G}.answer_key": lambda: ((_ref(),), {}),
    f"{_G}.feedback_html": lambda: ((_row(), _ref(), "Set I"),
                                    {"manual": [("m", 2.0, "markdown")]}),
    f"{_G}.grade_notebook": lambda: ((_file("a.ipynb", b"{}"), markup.student_version(
        _instructor()), _ref()), {"limits": grader.Limits(), "seed": 3, "unsafe": False,
                               "student": "Ada"}),
    f"{_G}.judge": lambda: ((grader.Reference([], {}, {}), {}, 3), {"budget": 5.0}),
    f"{_G}.read_roster": lambda: ((_roster(),), {}),
    f"{_G}.read_submission_bytes": lambda: ((_file("a.ipynb", b'{"cells": []}'),), {}),
    f"{_G}.sandbox_status": lambda: ((), {}),
    # these start the notebook's process: SKIP below, fuzzed by tests/test_grading_args.py
    f"{_G}.run_cells": lambda: ((["x = 1"], [_problem().to_dict()]),
                                {"sandboxed": False, "seed": 1}),
    f"{_G}.reference": lambda: ((_instructor(),), {"seed": 1}),
    f"{_G}.generate": lambda: ((_instructor_file(), _tmp()), {}),
    f"{_G}.grade": lambda: ((_instructor_file(), _submissions(), _tmp() / "s.csv"),
                            {"seed": 1, "jobs": 1}),
    f"{_J}.Launch": lambda: ((jail.bwrap_path(), ["/bin/true"]),
                             {"env": {"A": "1"}, "files": {"a.txt": b"x"},
                              "unit": jail.Unit(64), "rlimits": jail.preexec(
                                  memory_mb=256, cpu_seconds=10, file_mb=4)}),
    f"{_J}.Launch.close": lambda: ((_launch(),), {}),
    f"{_J}.Launch.popen": lambda: ((_launch(),), {"stdin": subprocess.DEVNULL,
                                                  "stdout": subprocess.DEVNULL,
                                                  "stderr": subprocess.DEVNULL}),
    f"{_J}.Unit": lambda: ((64,), {"processes": 8}),
    f"{_J}.Unit.close": lambda: ((jail.Unit(64),), {}),
    f"{_J}.Unit.cpu_seconds": lambda: ((jail.Unit(64),), {}),
    f"{_J}.Unit.describe": lambda: ((), {}),
    f"{_J}.Unit.kill": lambda: ((jail.Unit(64),), {}),
    f"{_J}.Unit.memory_bytes": lambda: ((jail.Unit(64),), {}),
    f"{_J}.Unit.oom_kills": lambda: ((jail.Unit(64),), {}),
    f"{_J}.Unit.watch": lambda: ((jail.Unit(64), _child()), {}),
    f"{_J}.available": lambda: ((), {}),
    f"{_J}.bwrap_path": lambda: ((), {}),
    f"{_J}.command": lambda: (("/usr/bin/bwrap", ["/bin/true"]),
                              {"env": {"A": "1"}, "files": [(3, "a.txt")],
                               "mounts": [("/usr", "/usr")], "seccomp_fd": 4}),
    f"{_J}.host_uid": lambda: ((), {}),
    f"{_J}.reclaim": lambda: ((), {"once": False}),
    f"{_J}.scratch": lambda: (("grade",), {"mode": 0o700}),
    f"{_J}.interpreter": lambda: ((), {}),
    f"{_J}.python_mounts": lambda: ((), {}),
    f"{_J}.preexec": lambda: ((), {"memory_mb": 256, "cpu_seconds": 10.0, "file_mb": 4,
                                   "processes": jail.Unit(64)}),
    "robodyn.grading.judge.judge_one": lambda: (
        (_problem(), answers.encode(2.0, _problem()), answers.encode(2.5, _problem()), None,
         np.random.default_rng(0)), {}),
    f"{_M}.set_answer_key": lambda: ((_instructor(), '{"p1": {"shape": []}}'), {}),
    f"{_M}.meta": lambda: ((_instructor().cells[2],), {}),
    f"{_M}.nbgrader_metadata": lambda: (("p1_check",), {"grade": True, "solution": False,
                                                        "locked": True, "points": 2}),
    f"{_M}.validate": lambda: ((_instructor(),), {}),
    f"{_M}.answer_key_json": lambda: ((_keyed(),), {}),
    f"{_M}.self_test_source": lambda: (('{"p1": {"shape": []}}',), {}),
    f"{_M}.student_version": lambda: ((_keyed(),), {}),
    f"{_G}.submission_plan": lambda: ((_submission(), markup.student_version(_instructor())),
                                      {}),
    f"{_G}.submission_cells": lambda: ((_submission(), markup.student_version(_instructor())),
                                       {}),
    f"{_M}.solution_lines": lambda: ((_instructor(),), {}),
    "robodyn.grading.sandbox.library_roots": lambda: ((), {}),
    # no arguments, never called here (SKIP): the completeness count only
    f"{_J}.Launch.preexec": lambda: ((_launch(),), {}),
    f"{_J}.Unit.enter": lambda: ((jail.Unit(64),), {}),
    "robodyn.grading.judge.main": lambda: ((), {}),
    "robodyn.grading.sandbox.main": lambda: ((), {}),
    "robodyn.grading.sandbox.install_guard": lambda: ((str(_tmp()), [str(_tmp())]), {}),
}


def _instructor_file():
    p = _tmp() / "set.ipynb"
    nbformat.write(_instructor(), p)
    return p


def _submissions():
    d = _tmp()
    (d / "a.ipynb").write_text('{"cells": []}')
    return d


_PROCESS = ("starts the notebook's process (seconds per call, a sandbox per call); its "
            "arguments are fuzzed by tests/test_grading_args.py with process creation blocked")
SKIP = {
    f"{_G}.run_cells": _PROCESS,
    f"{_G}.reference": _PROCESS,
    f"{_G}.generate": _PROCESS,
    f"{_G}.grade": _PROCESS,
    "robodyn.grading.sandbox.install_guard": (
        "installs an audit hook that cannot be removed (it would refuse file access to the "
        "rest of the test run); its arguments are fuzzed by tests/test_grading_args.py with "
        "sys.addaudithook blocked"),
    f"{_J}.Launch.preexec": (
        "runs in the child before exec: in the calling process, as root, it would drop this "
        "process to a fresh uid, set no_new_privs and resource limits for good; no arguments"),
    f"{_J}.Unit.enter": (
        "runs in the child before exec: it would move this process into the submission's "
        "cgroup (memory, 32 processes, 1 CPU) or set its RLIMIT_NPROC for good; no arguments"),
    "robodyn.grading.sandbox.main": (
        "the sandbox process's entry point: reads a job on stdin and runs its code cells in "
        "this process; no arguments (the job is checked by grader.run_cells, its answer by "
        "grader.parse_result)"),
    "robodyn.grading.judge.main": (
        "the judge process's entry point: reads a job on stdin; no arguments (the job is "
        "built and checked by grader.judge; each answer is checked by judge_one)"),
}

_PATHS = {
    "robodyn.grading.gradebook.Records": ("url", "csv_path", "feedback_dir"),
    "robodyn.grading.gradebook.open_gradebook": ("url",),
    "robodyn.grading.gradebook.gradebook_url": ("where",),
    "robodyn.grading.gradebook.write_atomic": ("path",),
    f"{_G}.read_roster": ("path",),
    f"{_G}.read_submission_bytes": ("path",),
    f"{_G}.grade_notebook": ("path",),
    f"{_G}.generate": ("instructor_path", "out_dir"),
    f"{_G}.grade": ("instructor_path", "submissions", "out_csv", "roster", "feedback_dir",
                    "gradebook_db"),
    "robodyn.grading.sandbox.install_guard": ("workdir",),
    f"{_G}.run_cells": ("notebook",),
}
TEXT = dict(_PATHS)
"""Paths and database URLs: text by design (checked: str or os.PathLike, no NUL, at most
4096 characters; a name that does not exist is refused where the file must exist)."""

CODE = {f"{_G}.run_cells": ("cells",)}
"""Arguments that are code by design (a notebook's cells, run only in the sandbox's process):
tests/test_grading_args.py lets them hold any text (strings and lists of strings)."""
