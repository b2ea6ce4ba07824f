"""Generate student notebooks and grade a folder of submissions.

Grading one set:

1. The instructor notebook runs once, in a process of its own (trusted): it yields the
   problems (``problems``, a :class:`robodyn.answers.ProblemSet`) and the reference answers,
   encoded as JSON; the random inputs of function answers are drawn here.
2. Each submission runs in a sandbox of its own (:mod:`robodyn.grading.jail`: bubblewrap,
   its own user, PID, network, IPC and mount namespaces, a read-only Python, a private
   working folder holding only its notebook, limits, every process killed at its end), with
   the code of :mod:`robodyn.grading.sandbox`: its solution cells and any cells the student
   added, with the locked cells (setup) taken from the generated student notebook and the test
   cells left out. It gets the names of the answer variables and the inputs of function
   answers -- never the references -- and sends back the student's answers as JSON. Where no
   sandbox can start, the grader refuses, unless told ``unsafe`` (``UNSAFE_NOTE``).
3. The answers are compared with the references in a limited process of its own
   (:mod:`robodyn.grading.judge`: memory limit, a time budget per problem; text only through
   the restricted parser), at fresh random points; the score table (CSV) gets the points --
   partial credit for partly right matrices -- and the feedback of every problem, the notes
   name failed cells by their number in the submitted notebook, and with ``feedback_dir``
   each student gets an HTML page. The run always writes every row.
4. Each submission is one task of :func:`robodyn.parallel.map_tasks` (local processes, or a
   Dask cluster's workers); its row is written as it arrives (:mod:`robodyn.grading.gradebook`:
   nbgrader's gradebook, the CSV, the page), and a rerun grades only what is missing.
"""
from __future__ import annotations

import csv
import errno
import functools
import hashlib
import io
import json
import os
import re
import shutil
import signal
import stat
import socket
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from dataclasses import dataclass
from pathlib import Path

import nbformat
import numpy as np

from .. import _value_checks, answers, parallel
from ..answers import _problems
from . import _args, _exposure, _identity, gradebook, jail, markup
from ..errors import RobodynError

MAX_NOTEBOOK_BYTES = _args.MAX_NOTEBOOK
MAX_RESULT_BYTES = 8 * 2**20
_KEEP_ENV = ("PATH", "LANG", "LC_ALL", "PYTHONHASHSEED", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")


@dataclass(frozen=True)
class Limits:
    """Limits of one submission, as a unit (see :class:`robodyn.grading.jail.Unit`).

    cell_timeout : s of CPU time per cell (a wall-clock backstop of :data:`WALL_FACTOR`
    times that for a cell that sleeps); total_timeout : s of CPU time of the whole submission,
    all its processes together (backstop: :data:`WALL_FACTOR` times that + 30 s of wall
    clock); memory_mb : memory of the whole submission, MiB (its processes and its tmpfs
    files, with a cgroup; else per process and summed by the grader); file_mb : largest file
    it may write, MiB (never below the notebook cap, so its own notebook fits).
    """
    cell_timeout: float = 30.0
    total_timeout: float = 300.0
    memory_mb: int = 3072
    file_mb: int = 16

    def __post_init__(self):
        for name, high in (("cell_timeout", 86400.0), ("total_timeout", 7 * 86400.0)):
            v = _value_checks.real_number(getattr(self, name), f"Limits: {name}", low=0,
                                    strict_low=True, high=high, hint="seconds of CPU time")
            object.__setattr__(self, name, v)
        for name, low, high in (("memory_mb", 64, 2**20), ("file_mb", 1, 2**20)):
            object.__setattr__(self, name, _value_checks.size(getattr(self, name), f"Limits: {name}",
                                                        low=low, high=high, hint="MiB"))


# --------------------------------------------------------------------------
# running a notebook's code in a process
# --------------------------------------------------------------------------

def _python_path():
    """The folders the child needs on its path: the one holding this robodyn first."""
    here = str(Path(answers.__file__).resolve().parents[2])
    rest = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and p != here]
    return os.pathsep.join([here] + rest)


class SandboxUnavailable(RobodynError, RuntimeError):
    """No namespace sandbox here (no bwrap, or the kernel refuses user namespaces): the grader
    refuses to run submissions unless told ``unsafe``."""


UNSAFE_NOTE = ("--unsafe: submissions run WITHOUT the namespace sandbox, as your user, limited "
               "only by resource limits and a Python audit hook (a tripwire that C-level code "
               "gets round): they can read every file your user can (other submissions, the "
               "instructor notebooks, your repository), reach the network, and leave processes "
               "behind. Use it only for trusted notebooks.")


def sandbox_status():
    """``(True, '')`` when submissions can run in the bubblewrap sandbox here, else ``(False,
    reason)`` (see :mod:`robodyn.grading.jail`)."""
    return jail.available()


def _environment(inside):
    """The whole environment of a notebook's process (nothing else of the grader's)."""
    home = jail.HOME if inside else None
    env = {k: os.environ[k] for k in _KEEP_ENV if k in os.environ and not inside}
    env.update({"LANG": "C.UTF-8", "MPLBACKEND": "Agg", "PYTHONDONTWRITEBYTECODE": "1",
                "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
                "ROBODYN_ENGINE": "numpy", "ROBODYN_QUICK": "1", "PYTHONWARNINGS": "ignore"})
    if inside:
        env.update({"PATH": "/usr/bin:/bin", "HOME": home, "TMPDIR": "/tmp",
                    "MPLCONFIGDIR": "/tmp/matplotlib", "IPYTHONDIR": "/tmp/ipython",
                    "ROBODYN_CACHE": "/tmp/robodyn-cache", "PYTHONPATH": jail.PACKAGE_ROOT})
    return env


def run_cells(cells, problems, *, inputs=None, limits=Limits(), sandboxed=True,
              spec_from=None, seed=0, unsafe=False, notebook=None):
    """Run code cells in a new process and return its report: ``{'cells': [...], 'answers':
    {key: encoded}, 'seconds', 'cpu_seconds', 'returncode', 'sandbox'}``, or with
    ``'failure': reason`` (and ``'sandbox_failed': bool``) when the process died, was killed
    or sent nothing usable. Only what :func:`parse_result` accepts comes back from the
    process; the failure texts are the grader's own.

    ``problems`` are Problem specs (dicts) whose answers to take out; with ``spec_from`` (the
    instructor's run) they come from that notebook variable instead. ``sandboxed`` (student
    code): in the bubblewrap sandbox (:mod:`robodyn.grading.jail`) with the limits of
    ``limits`` for the submission as a unit, and with ``notebook`` (the submission's bytes, or
    a path read by :func:`read_submission_bytes`) copied into its working folder; raises
    SandboxUnavailable where there is none, unless ``unsafe`` (then: the limits and an audit
    hook only, see ``UNSAFE_NOTE``). Not ``sandboxed`` (the instructor's trusted
    notebook): a plain process in a temporary folder.
    """
    cells, problems, inputs, notebook = _args.run_cells_args(
        cells, problems, inputs, sandboxed, spec_from, seed, unsafe, notebook)
    _limits_arg(limits, "run_cells")
    sandboxed, unsafe = bool(sandboxed), bool(unsafe)
    inside = sandboxed and not unsafe
    if inside:
        ok, why = sandbox_status()
        if not ok:
            raise SandboxUnavailable(f"run_cells: no sandbox here: {why}")
    if inside and notebook is not None and not isinstance(notebook, (bytes, bytearray)):
        notebook = _read_bytes(notebook, "run_cells: notebook")
    private = jail.scratch("grade")
    work = os.path.join(private, "work")
    os.mkdir(work, 0o700)
    env = _environment(inside)
    if not inside:
        env.update({"HOME": work, "TMPDIR": work, "MPLCONFIGDIR": work,
                    "IPYTHONDIR": os.path.join(work, ".ipython"), "PYTHONPATH": _python_path(),
                    "ROBODYN_CACHE": os.path.join(work, "cache")})
    cpu_total = min(limits.total_timeout, 20.0 + limits.cell_timeout * max(1, len(cells)))
    wall_total = WALL_FACTOR * cpu_total + 30.0
    read_fd, write_fd = os.pipe()
    job = {"cells": cells, "answers": list(problems), "inputs": inputs or {},
           "cell_timeout": limits.cell_timeout, "cell_wall": WALL_FACTOR * limits.cell_timeout,
           "guard": sandboxed and not inside, "result_fd": write_fd, "spec_from": spec_from,
           "seed": seed}
    python = jail.interpreter() if inside else sys.executable
    argv = [python, "-X", "utf8", "-m", "robodyn.grading.sandbox"]
    unit = jail.Unit(limits.memory_mb) if sandboxed else None
    launch = None
    stderr_path = os.path.join(private, "stderr")
    started = time.monotonic()
    proc, reason, chunks, size = None, None, [], [0]
    try:
        rlimits = jail.preexec(memory_mb=limits.memory_mb, cpu_seconds=cpu_total + 5,
                               file_mb=max(limits.file_mb, MAX_NOTEBOOK_BYTES // 2**20 + 1)) \
            if sandboxed else None
        with os.fdopen(os.open(stderr_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600),
                       "wb") as err:
            kw = dict(stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=err, env=env,
                      pass_fds=(write_fd,))
            if inside:
                launch = jail.Launch(jail.bwrap_path(), argv, env=env, unit=unit,
                                     rlimits=rlimits, files={"submission.ipynb": bytes(
                                         notebook)} if notebook is not None else None)
                proc = launch.popen(cwd=work, **kw)
            else:
                def pre():                  # the group first: RLIMIT_NOFILE is low
                    unit and unit.enter()
                    rlimits and rlimits()
                proc = subprocess.Popen(argv, cwd=work, start_new_session=True,
                                        preexec_fn=pre if sandboxed else None, **kw)
        os.close(write_fd)
        write_fd = None
        if unit is not None:
            unit.watch(proc.pid)

        def reader(fd):                    # drain the pipe; keep at most MAX_RESULT_BYTES + 1
            with os.fdopen(fd, "rb") as f:
                for block in iter(lambda: f.read(65536), b""):
                    if size[0] <= MAX_RESULT_BYTES:
                        chunks.append(block)
                    size[0] += len(block)
        # the descriptor is handed over as an argument, bound now: the thread may start to run
        # only after read_fd below is set to None (a loaded machine), and a closure would then
        # read None and drop every answer
        t = threading.Thread(target=reader, args=(read_fd,), daemon=True)
        t.start()
        read_fd = None
        feeder = threading.Thread(target=_feed, args=(proc.stdin, json.dumps(job).encode()),
                                  daemon=True)
        feeder.start()
        reason = _watch(proc, unit, cpu_total, wall_total, limits.memory_mb) if sandboxed \
            else _wait(proc, wall_total)
        _kill_group(proc)
        if unit is not None:
            oom = unit.oom_kills()
            if oom and reason is None:
                reason = (f"ran out of memory: {oom} process(es) killed at the limit of "
                          f"{limits.memory_mb} MiB for the whole submission (processes and "
                          f"files together)")
        t.join(timeout=5)
        feeder.join(timeout=5)
        cpu = unit.cpu_seconds() if unit is not None and unit.kind else None
    finally:
        for fd in (write_fd, read_fd):
            if fd is not None:
                os.close(fd)
        if proc is not None and proc.poll() is None:
            _kill_group(proc)
        if unit is not None:
            unit.close()
        if launch is not None:
            launch.close()
        stderr_tail = _tail(stderr_path)
        shutil.rmtree(private, ignore_errors=True)
    base = {"seconds": round(time.monotonic() - started, 2), "returncode": proc.returncode,
            "sandbox": "bwrap" if inside else ("unsafe" if sandboxed else "none")}
    if cpu is not None:
        base["cpu_seconds"] = round(cpu, 2)
    data = b"".join(chunks)
    started_ok = data.startswith(STARTED.encode() + b"\n") or not inside
    if reason is not None:
        return {**base, "failure": reason}
    if size[0] > MAX_RESULT_BYTES:
        return {**base, "failure": f"the answers are larger than "
                                   f"{MAX_RESULT_BYTES // 2**20} MiB"}
    keys = None if spec_from else [p["key"] for p in problems]
    msg = parse_result(data, keys, len(cells))
    if msg is not None:
        return {**base, **msg}
    why = "the notebook's process ended without answers"
    if proc.returncode and proc.returncode < 0:
        why += f" (signal {-proc.returncode})"
    if not started_ok:
        why = "the sandbox failed to start: " + _clean(stderr_tail.strip()[-300:])
    return {**base, "failure": why, "stderr": _clean(stderr_tail),
            "sandbox_failed": not started_ok}


WALL_FACTOR = 3.0
"""The wall-clock backstop of a cell or a submission, in multiples of its CPU-time limit (a
submission that sleeps uses no CPU; one starved by its neighbours still gets its CPU time)."""


def _feed(stdin, data):
    try:
        stdin.write(data)
        stdin.close()
    except (BrokenPipeError, OSError, ValueError):
        pass


def _wait(proc, wall):
    try:
        proc.wait(timeout=wall)
    except subprocess.TimeoutExpired:
        return f"stopped after the notebook's time limit of {wall:g} s"
    return None


def _watch(proc, unit, cpu_total, wall_total, memory_mb):
    """Wait for the sandbox to end; stop it when the submission as a whole has used its CPU
    time, its memory (the fallback's measure: the kernel enforces a group's), or the
    wall-clock backstop. Returns the reason it was stopped, or None."""
    deadline = time.monotonic() + wall_total
    while True:
        try:
            proc.wait(timeout=0.25)
            return None
        except subprocess.TimeoutExpired:
            pass
        if unit.cpu_seconds() > cpu_total:
            reason = (f"stopped: the submission used its {cpu_total:g} s of CPU time (all "
                      f"its processes together)")
        elif unit.memory_bytes() > memory_mb * 2**20:
            reason = (f"stopped: the submission's processes held more than {memory_mb} MiB "
                      f"of memory together")
        elif time.monotonic() > deadline:
            reason = f"stopped after the wall-clock limit of {wall_total:g} s"
        else:
            continue
        unit.kill()
        return reason


def _kill_group(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()


STARTED = '{"started": true}'
"""What the notebook's process writes first on the result pipe, before any student code (so
a process that never got that far is a sandbox that failed, not a submission that did; see
:data:`robodyn.grading.sandbox.STARTED`)."""


def _head(path, n=200):
    try:
        with open(path, "rb") as f:
            return f.read(n).decode("utf-8", "replace")
    except OSError:
        return ""


def _tail(path, n=600):
    try:
        with open(path, "rb") as f:
            f.seek(0, 2)
            f.seek(max(0, f.tell() - n))
            return f.read().decode("utf-8", "replace")
    except OSError:
        return ""


# --------------------------------------------------------------------------
# the instructor's run: problems and references
# --------------------------------------------------------------------------

def _code_cells(nb):
    """The instructor notebook's code, without its self-test (which needs the key the run
    is making)."""
    return [c.source for c in nb.cells if c.cell_type == "code" and
            (markup.meta(c) or {}).get("grade_id") != markup.SELF_TEST_ID]


@dataclass
class Reference:
    """What the instructor notebook yields: its problems, encoded references, function inputs."""
    problems: list
    answers: dict
    inputs: dict

    def __post_init__(self):
        _args.reference_fields(self, "Reference")


def _reference_arg(ref, fname, arg="ref", complete=True):
    if not isinstance(ref, Reference):
        raise _value_checks.error(f"{fname}: {arg}", "a grader.Reference (from grader.reference)",
                            _value_checks.describe(ref), exc=TypeError)
    _args.reference_fields(ref, fname, arg, complete)
    return ref


def _limits_arg(limits, fname):
    if not isinstance(limits, Limits):
        raise _value_checks.error(f"{fname}: limits", "a grader.Limits",
                            _value_checks.describe(limits), exc=TypeError)
    return limits


def reference(instructor_nb, *, seed=0, limits=Limits(cell_timeout=600, total_timeout=1800)):
    """Run the instructor notebook (trusted) and collect its problems and reference answers.

    Raises RuntimeError when it fails, a cell raises, or an answer is missing.
    """
    instructor_nb = _args.notebook(instructor_nb, "reference: instructor_nb")
    seed = _value_checks.size(seed, "reference: seed", low=0, high=2**63 - 1)
    _limits_arg(limits, "reference")
    report = run_cells(_code_cells(instructor_nb), [], limits=limits, sandboxed=False,
                       spec_from="problems", seed=seed)
    if "failure" in report:
        raise RuntimeError(f"reference: the instructor notebook failed: {report['failure']}\n"
                           f"{report.get('stderr', '')}")
    bad = [c for c in report["cells"] if c["status"] != "ok"]
    if bad:
        raise RuntimeError(f"reference: the instructor notebook's cell {bad[0]['index']} "
                           f"failed: {bad[0]['error']}")
    if "spec_error" in report:
        raise RuntimeError(f"reference: the instructor notebook has {report['spec_error']}")
    problems = [answers.Problem.from_dict(p) for p in report["spec"]]
    missing = [k for k, v in report["answers"].items() if v["type"] in ("none", "invalid")]
    if missing:
        raise RuntimeError(f"reference: no usable reference answer for {missing}")
    return Reference(problems, report["answers"], report["inputs"])


def _inputs_of(ref, key):
    if key not in ref.inputs:
        return None
    return [tuple(np.asarray(a, dtype=float) for a in args) for args in ref.inputs[key]]


# --------------------------------------------------------------------------
# generating the student notebooks and their answer keys
# --------------------------------------------------------------------------

def answer_key(ref):
    """The JSON answer key of a set: a fingerprint of every reference."""
    _reference_arg(ref, "answer_key")
    key = {}
    for p in ref.problems:
        try:
            value = answers.decode(ref.answers[p.key], p, _inputs_of(ref, p.key))
        except ValueError as exc:
            raise _value_checks.refusal(ValueError, f"answer_key: ref: the reference of {p.key!r} cannot be read "
                             f"({str(exc)[:200]})") from exc
        key[p.key] = _guarded(answers.fingerprint(value, p, seed=_seed(p.key)), value, p)
    return json.dumps(key, separators=(",", ":"), sort_keys=True)


def _searchable(ref):
    """``{problem key: candidates}`` of a set's symbolic answers: how many candidate answers
    of the problem's own symbols an attacker must try to find each reference from its key's
    digest (:mod:`robodyn.grading._exposure`; ``inf``: not in that grammar). A problem at
    most :data:`robodyn.grading._exposure.BUDGET` gets a key of form only."""
    _reference_arg(ref, "_searchable")
    out = {}
    for p in ref.problems:
        value = answers.decode(ref.answers[p.key], p, _inputs_of(ref, p.key))
        fp = answers.fingerprint(value, p, seed=_seed(p.key))
        if "hash" in fp and isinstance(fp["points"], dict):
            out[p.key] = _box(fp, value, p)
    return out


def _box(fp, value, p):
    pts = {k: np.asarray(v, dtype=float) for k, v in fp["points"].items()}
    kind, val = _problems._value_arg(value, p, "answer_key: ref", reference=True)
    R = _problems._reference_values(kind, val, p, tuple(fp["shape"]), pts, "answer_key: ref")
    return _exposure.box(R, p, pts, fp["tol"])


def _guarded(fp, value, p):
    """A key entry, or its form only when its answer can be found by trying at most
    :data:`robodyn.grading._exposure.BUDGET` candidates (:func:`_searchable`)."""
    if "hash" not in fp or not isinstance(fp["points"], dict):
        return fp                                  # a constant's, or a function's samples
    if _box(fp, value, p) <= _exposure.BUDGET:
        return {"points": fp["points"], "shape": fp["shape"]}
    return fp


def _seed(text):
    return int.from_bytes(text.encode()[:8].ljust(8, b"\0"), "little") % 2**32


def generate(instructor_path, out_dir, *, progress=None):
    """Refresh the instructor notebook's answer key and write its student version to
    ``out_dir`` (same file name). Returns the student notebook's path."""
    _args.existing(instructor_path, "generate: instructor_path")
    _args.path(out_dir, "generate: out_dir")
    _args.callable_arg(progress, "generate: progress")
    instructor_path, out_dir = Path(instructor_path), Path(out_dir)
    nb = _read_instructor(instructor_path, "generate: instructor_path")
    markup.validate(nb)
    say = progress or (lambda *_: None)
    say(f"running {instructor_path} for its reference answers …")
    t0 = time.monotonic()
    import copy
    keyless = copy.deepcopy(nb)          # run without the old key: its checks pass, so a
    markup.set_answer_key(keyless, None)  # changed reference never fails on the old key
    ref = reference(keyless)
    key = answer_key(ref)
    changed = markup.set_answer_key(nb, key)
    changed = markup.set_self_test(nb, key) or changed     # what nbgrader releases: the same
    if changed:
        nbformat.write(nb, instructor_path)
        say(f"  answer key and self-test updated in {instructor_path}")
    student = markup.student_version(nb)
    out = out_dir / instructor_path.name
    out_dir.mkdir(parents=True, exist_ok=True)
    nbformat.write(student, out)
    say(f"  wrote {out} ({len(ref.problems)} problems, {time.monotonic() - t0:.1f} s)")
    return out


def _read_instructor(path, name):
    """The instructor notebook at ``path``, or an error naming the argument."""
    try:
        return nbformat.read(path, as_version=4)
    except (OSError, ValueError, TypeError, AttributeError, KeyError, RecursionError) as exc:
        raise _value_checks.refusal(
            ValueError, f"{name}: expected an instructor notebook (nbformat JSON), got a file "
                        f"that is not one ({type(exc).__name__}: {str(exc)[:160]})") from exc


# --------------------------------------------------------------------------
# grading
# --------------------------------------------------------------------------

_NOT_RUN = (markup.KEY_ID, markup.SELF_TEST_ID)
"""Locked cells a submission's process never runs (the key; the self-test, which needs it)."""


def submission_plan(submission, release):
    """What a submission's process runs, cell by cell: ``(source, number, grade_id)`` with
    ``number`` the cell's place in the submitted notebook (1 = its first cell, markdown
    counted, as Jupyter shows them; None for a locked cell the student deleted and the
    release puts back). The student's code cells in their order, except that locked cells are
    the release's own, and test cells, the answer key and the self-test are left out.

    ``submission``: the submitted notebook as read (a dict with a list of cells: only its
    outline is checked, a cell that is not one is passed over); ``release``: the student
    version (an nbformat notebook, checked whole)."""
    return _plan(*_plan_args(submission, release, "submission_plan"))


def _plan_args(submission, release, fname):
    return (_args.notebook(submission, f"{fname}: submission", submission=True, node=False),
            _args.notebook(release, f"{fname}: release"))


def _plan(submission, release):
    by_id = {}
    for c in release.cells:
        m = markup.meta(c)
        if m and m.get("grade_id"):
            by_id[m["grade_id"]] = (c, m)
    out, seen = [], set()
    for number, c in enumerate(submission.get("cells", []), 1):
        if not isinstance(c, dict) or c.get("cell_type") != "code":
            continue
        src = c.get("source", "")
        src = "".join(map(str, src)) if isinstance(src, list) else str(src)
        md = c.get("metadata") if isinstance(c.get("metadata"), dict) else {}
        m = md.get("nbgrader") if isinstance(md.get("nbgrader"), dict) else {}
        gid = m.get("grade_id") if isinstance(m.get("grade_id"), str) else None
        if gid in by_id:
            rc, rm = by_id[gid]
            if rm["grade"] or gid in _NOT_RUN:
                continue                                   # tests: run here, not there
            if gid in seen:
                gid = None                                 # a copied cell: the student's
            else:
                seen.add(gid)
                if rm["locked"]:
                    src = rc.source                        # the release's copy, not theirs
        out.append((src, number, gid))
    for gid, (rc, rm) in by_id.items():                  # deleted locked setup cells
        if rc.cell_type == "code" and rm["locked"] and not rm["grade"] and \
                gid not in _NOT_RUN and gid not in seen:
            out.insert(0, (rc.source, None, gid))
    return out


def submission_cells(submission, release):
    """The code a submission's process runs (:func:`submission_plan`'s sources).

    >>> setup = nbformat.v4.new_code_cell("import robodyn")
    >>> setup.metadata["nbgrader"] = markup.nbgrader_metadata("setup", locked=True)
    >>> release = nbformat.v4.new_notebook(cells=[setup])
    >>> submission_cells({"cells": [{"cell_type": "code", "source": "import os",
    ...     "metadata": {"nbgrader": {"grade_id": "setup"}}}, {"cell_type": "code",
    ...     "source": "x = 1", "metadata": {}}]}, release)
    ['import robodyn', 'x = 1']
    """
    return [src for src, _, _ in _plan(*_plan_args(submission, release, "submission_cells"))]


MAX_JSON_DEPTH = 100
"""Deepest nesting of a submitted notebook's JSON (nbformat needs about 8)."""
MAX_RESULT_DEPTH = 64
"""Deepest nesting of what comes back from a sandbox."""
_DEPTH_CHUNK = 2**18
"""Bytes :func:`json_depth` reads at a time (its memory: a few tens of times this)."""


def json_depth(data):
    """The deepest nesting of brackets in the JSON text ``data`` (bytes), strings skipped;
    linear time, no recursion, and memory bounded by ``_DEPTH_CHUNK`` whatever the size
    of ``data`` (it is read a chunk at a time; the state carried between chunks: inside a
    string or not, the run of backslashes before the chunk, the depth).

    >>> json_depth(b'{"a": [1, [2, "[[["]]}')
    3
    >>> json_depth(b'["[[[[", {"a": [[]]}]')
    4
    """
    _need_bytes("json_depth", "data", data)
    view = memoryview(data).cast("B")
    inside, run, depth, deepest = False, 0, 0, 0
    for start in range(0, len(view), _DEPTH_CHUNK):
        b = np.frombuffer(view[start:start + _DEPTH_CHUNK], dtype=np.uint8)
        inside, run, depth, deepest = _depth_chunk(b, inside, run, depth, deepest)
    return deepest


def _depth_chunk(b, inside, run, depth, deepest):
    """One chunk of :func:`json_depth`: ``(inside, run, depth, deepest)`` after it."""
    n = len(b)
    pos = np.arange(n)
    slash = b == 92
    last_plain = np.maximum.accumulate(np.where(slash, -1, pos))   # last non-backslash <= i
    before = np.empty(n, dtype=np.int64)                  # backslashes just before i
    before[0] = run
    before[1:] = pos[1:] - 1 - last_plain[:-1]
    carried = np.zeros(n, dtype=bool)
    carried[1:] = last_plain[:-1] < 0                     # a run from the previous chunk
    before[carried] += run
    quote = (b == 34) & (before % 2 == 0)                 # an unescaped quote
    toggles = np.cumsum(quote) % 2 == 1                   # odd count so far: state flipped
    in_str = toggles ^ inside                             # inside a string after position i
    outside = ~(in_str | quote)                           # neither in a string nor its quote
    step = np.where(outside & ((b == 91) | (b == 123)), 1, 0) - \
        np.where(outside & ((b == 93) | (b == 125)), 1, 0)
    level = depth + np.cumsum(step)
    deepest = max(deepest, int(level.max(initial=depth)))
    tail = n - 1 - int(last_plain[-1])
    run = run + n if last_plain[-1] < 0 else tail
    return bool(in_str[-1]), run, int(level[-1]), deepest


def load_json(data, *, max_bytes, max_depth):
    """``json.loads`` of ``data`` (bytes) after a size and a depth check: ValueError for
    anything too large, too deep or not JSON (never RecursionError or MemoryError)."""
    _need_bytes("load_json", "data", data)
    max_bytes = _value_checks.size(max_bytes, "load_json: max_bytes", high=2**40)
    max_depth = _value_checks.size(max_depth, "load_json: max_depth", high=10**6)
    if len(data) > max_bytes:
        raise _value_checks.refusal(ValueError, f"load_json: data: larger than {max_bytes // 2**20} MiB "
                         f"({len(data)} bytes, at most {max_bytes})")
    if json_depth(data) > max_depth:
        raise _value_checks.refusal(ValueError, f"load_json: data: nested deeper than {max_depth} levels")
    try:
        return json.loads(data.decode("utf-8", "replace"))
    except (ValueError, RecursionError, MemoryError) as exc:
        raise _value_checks.refusal(
            ValueError, f"load_json: data: not valid JSON ({type(exc).__name__})") from exc


def read_submission_bytes(path):
    """The bytes of a submitted file, read safely: opened without following a symlink and
    without blocking (a FIFO), refused unless a regular file (no symlink -- to the instructor
    notebook, a classmate's file or /dev/zero --, FIFO, device, folder), at most
    ``MAX_NOTEBOOK_BYTES`` read whatever ``stat`` says. ValueError with the reason."""
    return _read_bytes(path, "read_submission_bytes: path")


def _read_bytes(path, name):
    if not isinstance(path, bytes):
        _args.path(path, name)
    elif not path or len(path) > _args.MAX_PATH or b"\0" in path:
        raise _value_checks.error(name, "a file path", repr(path[:80]))
    try:
        return _read_file(path)
    except ValueError as exc:
        raise _value_checks.refusal(ValueError, f"{name}: {exc}") from exc


def _read_file(path):
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY |
                     os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _value_checks.refusal(
                ValueError, "it is a symbolic link (only regular files are graded)") from exc
        raise _value_checks.refusal(ValueError, f"it could not be opened ({exc.strerror})") from exc
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _value_checks.refusal(
                ValueError, "it is not a regular file (only regular files are graded)")
        if st.st_size > MAX_NOTEBOOK_BYTES:
            raise _value_checks.refusal(
                ValueError, f"the file is larger than {MAX_NOTEBOOK_BYTES // 2**20} MiB")
        parts, n = [], 0
        while n <= MAX_NOTEBOOK_BYTES:
            block = os.read(fd, min(2**20, MAX_NOTEBOOK_BYTES + 1 - n))
            if not block:
                break
            parts.append(block)
            n += len(block)
        if n > MAX_NOTEBOOK_BYTES:
            raise _value_checks.refusal(
                ValueError, f"the file is larger than {MAX_NOTEBOOK_BYTES // 2**20} MiB")
        return b"".join(parts)
    except OSError as exc:
        raise _value_checks.refusal(ValueError, f"it could not be read ({exc.strerror})") from exc
    finally:
        os.close(fd)


def _read_submission(path):
    """``(notebook dict, its bytes)`` of a submission, or ValueError with the reason."""
    raw = _read_file(path)
    try:
        data = load_json(raw, max_bytes=MAX_NOTEBOOK_BYTES, max_depth=MAX_JSON_DEPTH)
    except ValueError as exc:
        raise _value_checks.refusal(ValueError, f"not a notebook: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        raise _value_checks.refusal(ValueError, "not a notebook (no list of cells)")
    return data, raw


_STATUSES = ("ok", "error", "timeout")
_PROBLEM_KEY = re.compile(r"[A-Za-z0-9_\-]{1,100}\Z")
MAX_LINES_TRIED = 16
"""Result lines :func:`parse_result` tries, from the last one back."""


def _result_schema(msg, keys, n_cells):
    """The sandbox's message reduced to its schema, or None: ``cells`` (one entry per cell:
    index, status, error text), ``answers`` (only the expected keys, each a dict with a
    ``type`` text); for the instructor's run (``keys`` None) also ``spec``, ``inputs``,
    ``spec_error``. Unknown keys are dropped."""
    if not isinstance(msg, dict) or not isinstance(msg.get("cells"), list) or \
            not isinstance(msg.get("answers"), dict) or len(msg["cells"]) > n_cells:
        return None
    cells = []
    for c in msg["cells"]:
        if not isinstance(c, dict):
            return None
        i, status, error = c.get("index"), c.get("status"), c.get("error")
        if type(i) is not int or not 0 <= i < n_cells or status not in _STATUSES or \
                not (error is None or isinstance(error, str)):
            return None
        cells.append({"index": i, "status": status,
                      "error": None if error is None else error[:400]})
    got = {}
    for k, v in msg["answers"].items():
        if (keys is None or k in keys) and isinstance(v, dict) and \
                isinstance(v.get("type"), str):
            got[k] = v
    out = {"cells": cells, "answers": got}
    if keys is None:                              # the instructor's own (trusted) run
        for k, kind in (("spec", list), ("inputs", dict), ("spec_error", str)):
            if isinstance(msg.get(k), kind):
                out[k] = msg[k]
    return out


def parse_result(data, keys, n_cells):
    """What came back on a sandbox's result pipe (bytes): the last of its last
    :data:`MAX_LINES_TRIED` lines that is JSON within :data:`MAX_RESULT_DEPTH` levels and fits
    :func:`_result_schema`, reduced to that schema; None when there is none.

    >>> parse_result(b'{"cells": [], "answers": {"p1": {"type": "none"}, "x": 1}, "seconds": '
    ...              b'"GA"}\\n' + b'[' * 100000, ["p1"], 0)
    {'cells': [], 'answers': {'p1': {'type': 'none'}}}
    """
    _need_bytes("parse_result", "data", data)
    if keys is not None and (not isinstance(keys, (list, tuple, set)) or
                             not all(isinstance(k, str) for k in keys)):
        raise _value_checks.refusal(
            TypeError, f"parse_result: keys: expected None or a list of str, got {keys!r:.80}")
    if keys is not None and not all(_PROBLEM_KEY.match(k) for k in keys):
        raise _value_checks.error("parse_result: keys", "problem keys (1 to 100 letters, digits, _ "
                            "and -)", repr(list(keys))[:120])
    n_cells = _value_checks.size(n_cells, "parse_result: n_cells", low=0, high=10**6)
    lines = bytes(data[:MAX_RESULT_BYTES]).split(b"\n")
    for line in reversed(lines[-MAX_LINES_TRIED:]):
        if not line.strip():
            continue
        try:
            msg = load_json(line, max_bytes=MAX_RESULT_BYTES, max_depth=MAX_RESULT_DEPTH)
        except ValueError:
            continue
        out = _result_schema(msg, keys, n_cells)
        if out is not None:
            return out
    return None


def _need_bytes(fn, name, v):
    if not isinstance(v, (bytes, bytearray, memoryview)):
        raise _value_checks.refusal(TypeError, f"{fn}: {name}: expected bytes, got {type(v).__name__}")


def _clean(text, limit=2000):
    """Text from a submission fit for a CSV cell and a feedback page
    (:func:`robodyn.grading.gradebook.console_text` without escapes)."""
    return gradebook.console_text(text, limit, escape=False)


JUDGE_BUDGET = 20.0
"""Seconds the grader's comparison of one answer may take."""
JUDGE_MEMORY_MB = 2048


def judge(ref, got, seed, *, budget=JUDGE_BUDGET):
    """Compare one submission's encoded answers ``got`` with the references, in a process of
    its own with a memory limit and a time budget per problem (:mod:`robodyn.grading.judge`):
    ``{key: (score, text, mistake)}`` for every problem -- one the process did not report (it
    was killed, or died) scores 0 with a message.

    ``got``: ``{problem key: encoded answer}`` (:func:`robodyn.answers.encode`'s records, as
    the sandbox sent them; a record the judge cannot read scores 0 with the reason); ``seed``:
    of the random test points; ``budget``: s per problem.
    """
    _reference_arg(ref, "judge")
    if not isinstance(got, dict) or not all(isinstance(k, str) and isinstance(v, dict)
                                            for k, v in got.items()):
        raise _value_checks.error("judge: got", "a dict {problem key: encoded answer (a dict)}",
                            _value_checks.describe(got),
                            exc=TypeError)
    known = {p.key for p in ref.problems}
    try:
        json.dumps(got)                       # NaN passes: a number the judge refuses
    except (TypeError, ValueError, RecursionError) as exc:
        raise _value_checks.error("judge: got", "records of JSON data (as the sandbox sends them)",
                            "a record that is not JSON data", exc=TypeError) from exc
    if not set(got) <= known:
        raise _value_checks.error("judge: got", "answers to the reference's problems",
                            f"unknown keys {sorted(set(got) - known)[:5]}")
    seed = _value_checks.size(seed, "judge: seed", low=0, high=2**63 - 1)
    budget = _value_checks.real_number(budget, "judge: budget", low=0, strict_low=True, high=3600)
    if not ref.problems:
        return {}
    job = {"problems": [p.to_dict() for p in ref.problems], "references": ref.answers,
           "inputs": ref.inputs, "answers": got, "seed": int(seed), "budget": float(budget)}
    total = budget * max(1, len(ref.problems)) + 30     # CPU seconds (the judge's timer)
    wall = WALL_FACTOR * total                           # its backstop, for a loaded machine
    env = {"PYTHONPATH": _python_path(), "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
           "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore",
           "HOME": tempfile.gettempdir()}
    pre = jail.preexec(memory_mb=JUDGE_MEMORY_MB, cpu_seconds=total + 5, file_mb=1)
    out = {}
    why = "the comparison process failed"
    try:
        r = subprocess.run([sys.executable, "-X", "utf8", "-m", "robodyn.grading.judge"],
                           input=json.dumps(job).encode(), capture_output=True, env=env,
                           timeout=wall, preexec_fn=pre, cwd=tempfile.gettempdir())
        stdout = r.stdout
        if r.returncode:
            why += f" (exit {r.returncode}: {r.stderr.decode(errors='replace')[-200:]})"
    except subprocess.TimeoutExpired as exc:
        stdout = exc.stdout or b""
        why = f"the comparison exceeded its {wall:g} s budget of wall-clock time"
    for line in stdout.decode("utf-8", "replace").splitlines():
        try:
            d = json.loads(line)
            score = float(d["score"])
            if np.isfinite(score):             # a score that is not a number: not reported
                out[d["key"]] = (score, str(d["text"]), d.get("mistake"))
        except (ValueError, KeyError, TypeError):
            continue
    for p in ref.problems:
        out.setdefault(p.key, (0.0, f"✘ not checked: {why}", "budget"))
    return out


def _quoted(text, limit=200):
    """Text from a submission inside a note: cleaned, without the notes' separator, in
    quotes (so it cannot pass for the grader's own words)."""
    return '"' + _clean(str(text), limit).replace("|", "/").replace('"', "'") + '"'


def _cell_note(c, plan):
    """A failed cell, named by its number in the submitted notebook."""
    i = c.get("index") if isinstance(c, dict) else None
    number = plan[i][1] if isinstance(i, int) and 0 <= i < len(plan) else None
    where = f"cell {number}" if number else "a locked cell (restored)"
    what = "timed out" if c.get("status") == "timeout" else "crashed"
    return f"{where} {what}: {_quoted(c.get('error'))}"


def grade_notebook(path, release, ref, *, limits=Limits(), seed=0, unsafe=False,
                   student=None):
    """Grade one submission: a dict with the student's id, points per problem, feedback per
    problem, the total, the notes (failed cells by their number in the notebook, limits hit)
    and the seconds it took; ``sandbox_failed`` is True when its sandbox did not start.

    Never raises for anything a submission does: a file that cannot be graded (a symlink, a
    FIFO, a device, too large, too deep, not a notebook), a sandbox that fails or is killed,
    anything it sends back -- each is this row, with the reason in its notes. Every text of
    the row is cleaned for the console (:func:`robodyn.grading.gradebook.console_text`).
    The arguments themselves are checked first (``path``: a file path; ``release``: the
    student version; ``ref``: a :class:`Reference`; ``student``: None or a name).
    """
    f = "grade_notebook"
    _args.read_path(path, f"{f}: path")
    release = _args.notebook(release, f"{f}: release")
    _reference_arg(ref, f)
    _limits_arg(limits, f)
    seed = _value_checks.size(seed, f"{f}: seed", low=0, high=2**63 - 1)
    unsafe = _value_checks.flag(unsafe, f"{f}: unsafe")
    if student is not None:
        _args.text(student, f"{f}: student", low=1, high=1000)
    name = _clean(str(student) if student is not None else _stem(path), 200)
    row = {"student": name, "file": _clean(_name(path), 300), "notes": "",
           "seconds": 0.0, "sandbox_failed": False}
    try:
        row.update(_grade_row(path, release, ref, limits=limits, seed=seed, unsafe=unsafe))
    except SandboxUnavailable as exc:
        row.update(_zero_row(ref, f"not graded: {exc}"), sandbox_failed=True)
    except Exception as exc:                      # noqa: BLE001 -- one row, never the run
        row.update(_zero_row(ref, f"not graded: the grader failed on this submission "
                                  f"({type(exc).__name__}: {_quoted(exc, 200)})"))
    return {k: _clean(v) if isinstance(v, str) else v for k, v in row.items()}


def _stem(path):
    return os.fsdecode(os.path.basename(os.fspath(path))).rsplit(".ipynb", 1)[0] or "?"


def _name(path):
    return os.fsdecode(os.path.basename(os.fspath(path)))


def _zero_row(ref, note):
    row = {p.key: 0.0 for p in ref.problems}
    row.update({f"{p.key} feedback": f"✘ {note}" for p in ref.problems})
    row.update(total=0.0, notes=note)
    return row


def _grade_row(path, release, ref, *, limits, seed, unsafe):
    plan = []
    try:
        sub, raw = _read_submission(path)
    except ValueError as exc:
        report = {"failure": f"the notebook could not be read: {exc}", "seconds": 0.0}
    else:
        plan = _plan(sub, release)                # both checked: by _read_submission, above
        spec = [p.to_dict() for p in ref.problems]
        report = run_cells([src for src, _, _ in plan], spec, inputs=ref.inputs,
                           limits=limits, sandboxed=True, unsafe=unsafe, notebook=raw)
    got = report.get("answers", {}) if isinstance(report.get("answers"), dict) else {}
    cells = report.get("cells", []) if isinstance(report.get("cells"), list) else []
    notes = [report["failure"]] if "failure" in report else []
    crashed = {}                                  # grade_id of an answer cell -> its note
    for c in cells:
        if isinstance(c, dict) and c.get("status") != "ok":
            note = _cell_note(c, plan)
            notes.append(note)
            i = c.get("index")
            if isinstance(i, int) and 0 <= i < len(plan) and plan[i][2]:
                crashed[plan[i][2]] = note
    verdicts = judge(ref, got, seed) if got else {}
    row, total = {}, 0.0
    for p in ref.problems:
        crash = crashed.get(f"{p.key}_answer")
        if "failure" in report and p.key not in got:
            score, text = 0.0, f"✘ not graded: {report['failure']}"
        else:
            score, text, _ = verdicts.get(p.key, (0.0, "✘ not graded", None))
            if crash and text.startswith("…"):                 # None, because it crashed
                text = f"✘ the answer cell crashed ({crash})"
            elif crash:
                text += f" (its answer cell crashed: {crash})"
        row[p.key] = score
        row[f"{p.key} feedback"] = text
        total += score
    row["total"] = round(total, 2)
    row["notes"] = " | ".join(notes)[:2000]
    row["seconds"] = float(report.get("seconds", 0.0))
    row["sandbox_failed"] = bool(report.get("sandbox_failed"))
    return row


def _cell_text(value):
    """A CSV field that a spreadsheet will not read as a formula (names and messages come
    from submissions)."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value


def read_roster(path):
    """A roster CSV: columns ``file`` (the notebook's exact file name, with or without
    ``.ipynb``) and ``student`` (the student's id: NFKC-normalised, case-folded and checked,
    :data:`robodyn.grading._identity.RULE`); returns ``{file name with .ipynb: id}``. A roster
    whose id is not one, or that lists one file twice, is refused naming the row."""
    return _read_roster(path, "read_roster: path")


def _read_roster(path, name):
    _args.existing(path, name)
    try:
        with open(path, newline="", encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise _value_checks.refusal(
            ValueError, f"{name}: expected a roster CSV (UTF-8) that can be read, got "
                        f"{str(path)[:200]!r} ({type(exc).__name__})") from exc
    if not rows or not {"file", "student"} <= set(rows[0]) or any(
            not isinstance(r.get("file"), str) or not isinstance(r.get("student"), str)
            for r in rows):
        raise _value_checks.refusal(ValueError, f"{name}: expected the columns 'file' and 'student' (both in every "
                         f"row) in {str(path)[:200]!r}")
    out = {}
    for i, r in enumerate(rows, 2):
        f = r["file"].strip()
        f = f if f.endswith(_identity.SUFFIX) else f + _identity.SUFFIX
        try:
            sid = _identity.student_id(r["student"].strip())
        except ValueError as exc:
            raise _value_checks.refusal(ValueError, f"{name}: line {i}: expected a student id ({_identity.RULE}), "
                             f"got {gradebook.console_text(r['student'], 80)!r}: {exc}") from exc
        if f in out:
            raise _value_checks.refusal(ValueError, f"{name}: line {i}: the file {gradebook.console_text(f, 80)!r} "
                             f"is listed twice")
        out[f] = sid
    return out


def feedback_html(row, ref, title, *, manual=()):
    """One student's feedback page (HTML): every problem with its points, what was right or
    wrong and the named mistake, the notes, and the answers graded by hand (``manual``:
    :func:`robodyn.grading.gradebook.manual_cells`) with the student's text, awaiting a grade."""
    _args.row(row, "feedback_html: row", keys=("student",))
    _reference_arg(ref, "feedback_html", complete=False)
    _args.text(title, "feedback_html: title", high=1000)
    if isinstance(manual, (str, bytes, dict)) or not isinstance(manual, (list, tuple)) or \
            not all(isinstance(m, tuple) and len(m) == 3 and isinstance(m[0], str) and
                    isinstance(m[2], str) for m in manual):
        raise _value_checks.error("feedback_html: manual", "a list of (grade_id, points, cell_type) "
                            "(gradebook.manual_cells)", _value_checks.describe(manual), exc=TypeError)
    for m in manual:
        _value_checks.real_number(m[1], "feedback_html: manual", low=0)
    for k in [p.key for p in ref.problems] + ["total"]:
        _value_checks.real_number(row.get(k, 0), f"feedback_html: row ({k!r})")
    import html
    e = html.escape
    max_points = sum(p.points for p in ref.problems)
    items = []
    for p in ref.problems:
        text = str(row.get(f"{p.key} feedback", ""))
        mark = "ok" if row.get(p.key, 0) == p.points else ("part" if row.get(p.key) else "no")
        items.append(f'<tr class="{mark}"><td>{e(p.key)}</td><td>{e(p.title)}</td>'
                     f'<td>{row.get(p.key, 0):g} / {p.points:g}</td><td>{e(text)}</td></tr>')
    notes = "".join(f"<li>{e(n)}</li>" for n in str(row.get("notes", "")).split(" | ") if n)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{e(title)}: {e(row['student'])}</title>
<style>body{{font-family:sans-serif;max-width:60em;margin:2em auto}}
td,th{{border-bottom:1px solid #ccc;padding:.3em .6em;vertical-align:top;text-align:left}}
tr.ok td:nth-child(3){{color:#060}} tr.no td:nth-child(3){{color:#a00}}
tr.part td:nth-child(3){{color:#a60}}</style></head><body>
<h1>{e(title)}</h1><p>Student: <b>{e(row['student'])}</b> ({e(row.get('file', ''))}) &mdash;
<b>{row['total']:g} of {max_points:g} points</b></p>
<table><tr><th>problem</th><th></th><th>points</th><th>feedback</th></tr>{''.join(items)}
</table>{gradebook.manual_html(row, manual)}
{'<h2>Notes</h2><ul>' + notes + '</ul>' if notes else ''}</body></html>
"""


_SCHEDULER = re.compile(r"([a-z][a-z0-9+]*://)?[A-Za-z0-9._\-\[\]:]{1,255}\Z")
MAX_SUBMISSIONS = 1_000_000
"""At most this many submissions in one folder."""
MAX_ROUNDS = 10
"""At most this many rounds of :func:`robodyn.parallel.map_tasks` in one run (a round ends
early only when a task's worker died past its retries)."""


@dataclass(frozen=True)
class _Job:
    """What every grading task needs (pickled once per task; small: the release, the
    references, the limits)."""
    release: dict
    ref: Reference
    limits: Limits
    seed: int
    unsafe: bool
    log: str | None = None


def _seed_of(seed, name):
    """A submission's seed: the run's, shifted by its file name (the same on every rerun)."""
    return (int(seed) + zlib.crc32(name.encode("utf-8", "replace"))) % 2**31


def _failed_row(job, path, student, why):
    """The row of a submission whose grading itself failed: every problem 0, the reason."""
    name = _file_id(Path(path).name)
    row = {"student": gradebook.console_text(_file_id(student or Path(path).stem), 128),
           "id": name,
           "file": gradebook.console_text(name, 300), "notes": why,
           "seconds": 0.0, "total": 0.0, "sandbox_failed": False, "manual": {}}
    for p in job.ref.problems:
        row[p.key] = 0.0
        row[f"{p.key} feedback"] = f"✘ not graded: {why}"
    return row


def _grade_task(job, item):
    """One submission, as a task of :func:`robodyn.parallel.map_tasks` (in a local process or
    on a Dask worker): its row, whatever happens -- an error of the grading itself becomes
    the row's note, never the run's. ``item``: ``(file path, student id or None)``."""
    path, student = item
    if job.log:                                # an audit line per attempt (tests count them)
        with open(job.log, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"file": Path(path).name, "pid": os.getpid()}) + "\n")
    try:
        row = grade_notebook(path, job.release, job.ref, limits=job.limits,
                             seed=_seed_of(job.seed, Path(path).name), unsafe=job.unsafe,
                             student=student)
        try:
            sub = _read_submission(path)
            if isinstance(sub, tuple):               # (notebook, its bytes)
                sub = sub[0]
            row["manual"] = gradebook.manual_answers(sub, job.release)
        except (OSError, ValueError, TypeError, RecursionError, MemoryError):
            row["manual"] = {}
    except SandboxUnavailable as exc:           # this worker has none: not a grade
        row = _failed_row(job, path, student, f"the sandbox failed: {exc}")
        row["sandbox_failed"] = True
    except (Exception, RecursionError, MemoryError) as exc:     # noqa: BLE001 -- its row
        row = _failed_row(job, path, student,
                          f"the grading failed: {type(exc).__name__}: {str(exc)[:300]}")
    row["worker"] = f"{socket.gethostname()}:{os.getpid()}"
    return row


def _file_id(name):
    """A file name as valid text (bytes that are not UTF-8 shown as ``\\xNN``): the name of a
    submission in the table and the gradebook.

    >>> _file_id("caf" + chr(0xdce9) + ".ipynb")
    'caf\\\\xe9.ipynb'
    """
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _submission_files(folder):
    """The folder's ``*.ipynb`` entries, sorted, as they are (symlinks, FIFOs and the like
    too: the grader refuses each in its own row, without opening it here)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise _value_checks.refusal(
            ValueError, f"grade: submissions: expected a folder, got {str(folder)!r}")
    files = []
    with os.scandir(folder) as it:
        for entry in it:
            if entry.name.endswith(".ipynb"):
                files.append(Path(entry.path))
                if len(files) > MAX_SUBMISSIONS:
                    raise _value_checks.refusal(ValueError, f"grade: submissions: expected at most "
                                     f"{MAX_SUBMISSIONS} notebooks, got more")
    return sorted(files)


def _run_tasks(job, todo, records, *, scheduler, jobs, say, total, already):
    """Grade ``todo`` (``{file name: (path, student)}``) with map_tasks, each row written by
    ``records`` as it arrives. A task whose worker kept dying gets a row saying so (not
    recorded in the gradebook: a rerun tries it again); the others go on in a new round."""
    counted = [already]
    max_points = sum(p.points for p in job.ref.problems)
    name_of = {hashlib.sha256(name.encode("utf-8", "surrogateescape")).hexdigest()[:32]: name
               for name in todo}                     # short keys, whatever the file names

    def arrived(key, row):
        name = name_of[key]
        if name not in todo:                          # delivered twice: the first counts
            return
        path, student = todo.pop(name)
        if not isinstance(row, dict):                 # never the run's failure
            row = _failed_row(job, path, student, "the grading returned no row")
        row["id"] = name                              # the file's name, as valid text
        row["file"] = gradebook.console_text(name, 300, escape=False)   # shown: never raw
        name_shown = gradebook.console_text(name, 300)
        row["student"] = student                      # decided once, never the task's word
        if not records.add(row, record=not row.get("sandbox_failed")):
            return                                          # in the gradebook already
        counted[0] += 1
        note = f"; {gradebook.console_text(row.get('notes', ''), 90)}" if row.get("notes") \
            else ""
        say(f"[{counted[0]}/{total}] {gradebook.console_text(name_shown, 80)}: "
            f"{row.get('total', 0):g}/{max_points:g} points ({row.get('seconds', 0):.1f} s)"
            f"{note}")

    func = functools.partial(_grade_task, job)
    for _ in range(MAX_ROUNDS):
        if not todo:
            return
        keys = sorted(k for k, name in name_of.items() if name in todo)
        before = len(todo)
        try:
            parallel.map_tasks(func, [todo[name_of[k]] for k in keys], keys=keys,
                               scheduler=scheduler,
                               workers=max(1, int(jobs)), on_result=arrived, retries=2,
                               description="grading")
            return
        except parallel.TaskError as exc:                # its worker died past the retries
            if name_of.get(exc.key) in todo:
                path, student = todo.pop(name_of[exc.key])
                records.add(_failed_row(job, path, student, f"not graded: the grading task "
                                        f"died ({str(exc.__cause__ or exc)[:200]}); a rerun "
                                        f"tries it again"), record=False)
            say(f"WARNING: {gradebook.console_text(str(exc), 300)}")
        except RuntimeError as exc:                      # local workers kept dying
            say(f"WARNING: {gradebook.console_text(str(exc), 300)}")
            if len(todo) == before:
                break
    for key in sorted(todo):
        path, student = todo.pop(key)
        records.add(_failed_row(job, path, student, "not graded: the grading processes kept "
                                "dying; a rerun tries it again"), record=False)


def _who(files, roster, records, out_csv, say):
    """The files to grade now, ``{file key: (path, student id)}``, each id decided once
    (:mod:`robodyn.grading._identity`: the roster's, else the file's name, checked and
    normalised, unique); the rows of files graded by an earlier run are added to ``records``.
    The files held back are listed on the console and in ``<csv stem>.held-back.csv`` beside
    the table (removed when none is)."""
    graded = records.graded()
    taken = {row.get("student"): key for key, row in graded.items()}
    who = _identity.assign([(f.name, str(f)) for f in files], roster, key=_file_id,
                           taken=taken)
    held = list(who.held)
    for key, (_, sid) in sorted(who.accepted.items()):
        if key in graded:
            if graded[key].get("student") == sid:
                records.add(graded[key], record=False)
            else:
                held.append((key, f"graded earlier as the student "
                                  f"{graded[key].get('student')!r}, now {sid!r}: held back"))
    held_keys = {k for k, _ in held}
    report = out_csv.with_name(out_csv.stem + ".held-back.csv")
    if held:
        buf = io.StringIO()
        w = csv.writer(buf)
        w.writerow(["file", "reason"])
        for key, why in sorted(held):
            shown = gradebook.console_text(key, 300)
            w.writerow([_cell_text(shown), _cell_text(why)])
            say(f"  HELD BACK {gradebook.console_text(shown, 120)}: "
                f"{gradebook.console_text(why, 300)}")
        gradebook.write_atomic(report, buf.getvalue())
        say(f"  {len(held)} file(s) held back, not graded: listed in {report}")
    elif report.exists():
        report.unlink()
    return {k: v for k, v in who.accepted.items()
            if k not in records.rows and k not in held_keys}


def grade(instructor_path, submissions, out_csv, *, limits=Limits(), seed=None,
          progress=None, jobs=1, unsafe=False, roster=None, feedback_dir=None, scheduler=None,
          gradebook_db=None, assignment=None):
    """Grade every ``*.ipynb`` in the folder ``submissions`` against the instructor notebook
    and write the score table ``out_csv``, nbgrader's gradebook, and with ``feedback_dir`` one
    HTML feedback page per student -- each as its submission finishes
    (:mod:`robodyn.grading.gradebook`). Returns the rows (dicts) in the order of the file
    names; each row's ``sandbox_failed`` says whether its sandbox failed to start.

    Each submission is one task of :func:`robodyn.parallel.map_tasks`: ``jobs`` local
    processes (1: in this process), or with ``scheduler`` (a Dask scheduler's address, or a
    ``distributed.Client``) on the cluster's workers, which must see ``submissions`` at the
    same path and import the same robodyn; a worker killed mid-run has its submissions run
    again elsewhere. ``gradebook_db``: nbgrader's database (a URL or a SQLite file; default
    ``gradebook.db`` beside ``out_csv``); ``assignment``: its name there (default: the
    instructor notebook's name). A rerun grades only the files not in the gradebook yet, with
    the seed of the first run unless ``seed`` is given. ``roster``: a CSV
    (:func:`read_roster`) naming the students; else the file names do. Each student id is
    decided once, before any grading (:mod:`robodyn.grading._identity`: normalised, checked,
    unique); a file with no id, not in the roster, or sharing its id with another file is held
    back -- not graded, not written -- and listed in ``<out_csv stem>.held-back.csv``.

    Raises SandboxUnavailable when there is no sandbox here and ``unsafe`` is False.
    """
    _args.existing(instructor_path, "grade: instructor_path")
    _args.existing(submissions, "grade: submissions", folder=True)
    _args.existing(roster, "grade: roster", none=True)
    _args.path(out_csv, "grade: out_csv")
    _args.path(feedback_dir, "grade: feedback_dir", none=True)
    _limits_arg(limits, "grade")
    if seed is not None:
        seed = _value_checks.size(seed, "grade: seed", low=0, high=2**62)
    _args.callable_arg(progress, "grade: progress")
    unsafe = _value_checks.flag(unsafe, "grade: unsafe")
    say = progress or (lambda *_: None)
    jobs = _value_checks.size(jobs, "grade: jobs", low=1, high=1024)
    if isinstance(scheduler, str) and not _SCHEDULER.match(scheduler):
        raise _value_checks.error("grade: scheduler", "a Dask scheduler's address (tcp://host:port)",
                            repr(scheduler[:80]))
    if scheduler is not None and not isinstance(scheduler, str) and \
            not hasattr(scheduler, "submit"):
        raise _value_checks.error("grade: scheduler", "None (local processes), a Dask scheduler's "
                            "address or a distributed.Client",
                            _value_checks.describe(scheduler), exc=TypeError)
    if assignment is not None:
        _args.label(assignment, "grade: assignment")
    if gradebook_db is not None:
        gradebook._url(gradebook_db, "grade: gradebook_db")
    instructor_path = Path(instructor_path)
    files = _submission_files(submissions)
    if not files:
        raise _value_checks.refusal(ValueError, f"grade: no *.ipynb files in {submissions}")
    ok, why = sandbox_status()
    if not ok and not unsafe and scheduler is None:
        raise SandboxUnavailable(f"grade: refusing to run submissions without a sandbox: {why}")
    names = _read_roster(roster, "grade: roster") if roster is not None else None
    nb = _read_instructor(instructor_path, "grade: instructor_path")
    markup.validate(nb)
    release = markup.student_version(nb)
    out_csv = Path(out_csv)
    out_csv.parent.mkdir(parents=True, exist_ok=True)
    db = gradebook_db if gradebook_db is not None else out_csv.parent / "gradebook.db"
    t0 = time.monotonic()
    say(f"reference answers from {instructor_path} …")
    records = None
    try:
        try:
            records = gradebook.Records(db, assignment or instructor_path.stem,
                                        instructor_path.stem, release, out_csv,
                                        feedback_dir=feedback_dir, field=_cell_text)
        except ValueError as exc:              # named by the argument the user gave
            arg = "gradebook_db" if gradebook_db is not None else "out_csv"
            raise _value_checks.refusal(
                ValueError, str(exc).replace("Records: url", f"grade: {arg}", 1)) from exc
        seed = records.seed(seed)
        ref = reference(nb, seed=seed)
        records.define([(p.key, p.points) for p in ref.problems])
        records.page = lambda row: feedback_html(row, ref, instructor_path.stem,
                                                 manual=records.manual)
        max_points = sum(p.points for p in ref.problems)
        say(f"  {len(ref.problems)} problems, {max_points:g} points"
            f"{f', {len(records.manual)} graded by hand' if records.manual else ''} "
            f"({time.monotonic() - t0:.1f} s)")
        if unsafe:
            say("  WARNING " + UNSAFE_NOTE)
        else:
            say(f"  each submission in its own bubblewrap sandbox; process limit: "
                f"{jail.ProcessLimit.describe()}")
        todo = _who(files, names, records, out_csv, say)
        where = f"the Dask cluster at {scheduler}" if isinstance(scheduler, str) else \
            ("a Dask cluster" if scheduler is not None else f"{max(1, int(jobs))} local process(es)")
        say(f"  {len(records.rows)} graded already (in the gradebook), {len(todo)} to grade "
            f"on {where}")
        job = _Job(release, ref, limits, seed, bool(unsafe),
                   os.environ.get("ROBODYN_GRADING_LOG") or None)
        _run_tasks(job, todo, records, scheduler=scheduler, jobs=jobs, say=say,
                   total=len(files), already=len(records.rows))
    finally:
        if records is not None:
            records.close()
    rows = [records.rows[_file_id(f.name)] for f in files if _file_id(f.name) in records.rows]
    say(f"wrote {out_csv} and the gradebook {gradebook.console_text(str(db), 200)}: "
        f"{len(rows)} submissions in {time.monotonic() - t0:.1f} s")
    failed = sum(bool(r.get("sandbox_failed")) for r in rows)
    if rows and failed == len(rows):
        say(f"WARNING: the sandbox failed for every submission "
            f"({gradebook.console_text(rows[0]['notes'], 300)}): the scores are not grades")
    elif failed:
        say(f"WARNING: the sandbox failed for {failed} of {len(rows)} submissions")
    return rows

from .._boundary import seal as _seal  # noqa: E402 -- the one boundary (issue 28): last, over the finished module
_seal(globals(), {"*": {"text": "all"}})
