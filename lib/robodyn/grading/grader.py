"""Generate student notebooks and grade a folder of submissions.

Grading one set:

1. The instructor notebook runs once, in a process of its own (trusted): it yields the
   problems (``problems``, a :class:`robodyn.answers.ProblemSet`) and the reference answers,
   encoded as JSON; the random inputs of function answers are drawn here.
2. Each submission runs in a fresh process (:mod:`robodyn.grading.sandbox`): its solution
   cells and any cells the student added, with the locked cells (setup) taken from the
   generated student notebook and the test cells left out. That process gets the names of the
   answer variables and the inputs of function answers -- never the references -- and sends
   back the student's answers as JSON.
3. Here, outside that process, each answer is decoded (text through the restricted parser)
   and compared with the reference by :func:`robodyn.answers.compare`, at fresh random
   points; the score table (CSV) gets the points and the feedback of every problem.

What the operating system enforces on a submission's process: a time limit per cell (a timer
in the process) and a wall-clock limit for the whole submission (the process group is killed),
a CPU-time limit, an address-space (memory) limit, a file-size limit, few open files, no core
files, a fresh empty working directory, an environment without proxies or credentials, and
its own session. When the grader runs as root (and a process can change its user here:
:func:`can_drop_privileges`), the process becomes the unprivileged user ``nobody`` (uid and
gid 65534, no supplementary groups; irreversibly) after importing the modules notebooks need
and before the first cell: it then cannot read root's private files, cannot signal the
grader or read its memory (where the references are), can write only its own working folder
(owned by ``nobody``, mode 700, inside a folder of the grader's that holds its standard error),
and may start only a few processes. When the instructor notebook is readable by every user and
the kernel allows it (:func:`can_hide_paths`), the process first covers the notebook's folder
with an empty mount in a mount namespace of its own (:func:`paths_to_hide`), so the
instructor's solutions are out of its reach too. What a Python
audit hook adds (a tripwire, not a boundary: code that reaches C directly could get round it):
no sockets, no new processes, no ``ctypes`` calls, no signals to other processes, no file
access outside the working directory and the Python path. Not enforced: reading other files
that every user may read and a network-free environment, for code that bypasses the hook; and,
with ``jobs`` > 1, signals between submissions running at the same time (the same user).
"""
from __future__ import annotations

import csv
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import nbformat
import numpy as np

from .. import answers
from . import markup

MAX_NOTEBOOK_BYTES = 20 * 2**20
MAX_RESULT_BYTES = 8 * 2**20
_KEEP_ENV = ("PATH", "LANG", "LC_ALL", "PYTHONHASHSEED", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")


@dataclass(frozen=True)
class Limits:
    """Limits of one submission's process.

    cell_timeout : s per cell; total_timeout : s of wall clock for the whole notebook;
    memory_mb : address-space limit, MiB; file_mb : largest file it may write, MiB.
    """
    cell_timeout: float = 30.0
    total_timeout: float = 300.0
    memory_mb: int = 3072
    file_mb: int = 16


# --------------------------------------------------------------------------
# running a notebook's code in a process
# --------------------------------------------------------------------------

def _python_path():
    """The folders the child needs on its path: the one holding this robodyn first."""
    here = str(Path(answers.__file__).resolve().parents[1])
    rest = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and p != here]
    return os.pathsep.join([here] + rest)


NOBODY = (65534, 65534)
"""The user and group a submission runs as when the grader is root (``nobody``, ``nogroup``)."""
_PROBES = {}


def _root_probe(name, code):
    """As root: whether ``code`` runs without error in a fresh process of this Python (probed
    once per name); False when not root."""
    if os.geteuid() != 0:
        return False
    if name not in _PROBES:
        try:
            r = subprocess.run([sys.executable, "-c", code], cwd="/", capture_output=True,
                               env={"PYTHONPATH": _python_path(), "HOME": "/"}, timeout=120)
            _PROBES[name] = r.returncode == 0
        except (OSError, subprocess.SubprocessError):
            _PROBES[name] = False
    return _PROBES[name]


def can_drop_privileges():
    """True when the grader runs as root and a child process can become ``nobody`` for good
    (probed once: :func:`robodyn.grading.sandbox.drop_privileges` in a fresh process)."""
    return _root_probe("drop", "from robodyn.grading.sandbox import drop_privileges\n"
                               f"drop_privileges{NOBODY}")


def can_hide_paths():
    """True when the grader runs as root and a child process can hide paths in a mount
    namespace of its own (probed once: :func:`robodyn.grading.sandbox.hide_paths` on an empty
    temporary folder)."""
    if os.geteuid() != 0 or "hide" in _PROBES:
        return _root_probe("hide", "")
    folder = tempfile.mkdtemp(prefix="robodyn-probe-")
    try:
        return _root_probe("hide", "from robodyn.grading.sandbox import hide_paths\n"
                                   f"hide_paths([{folder!r}])")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def paths_to_hide(instructor_path):
    """What a submission must not see of the instructor's files: the instructor notebook's
    folder, or the notebook alone when that folder holds what the child needs (Python, the
    robodyn package, the temporary folder)."""
    nb = Path(instructor_path).resolve()
    folder = nb.parent
    needed = [Path(answers.__file__).resolve().parent, Path(sys.prefix).resolve(),
              Path(sys.base_prefix).resolve(), Path(sys.executable).resolve(),
              Path(tempfile.gettempdir()).resolve()]
    if any(n == folder or folder in n.parents for n in needed):
        return [str(nb)]
    return [str(folder)]


def readable_by_others(path):
    """True when a user other than the owner (and outside its group) may read ``path``: the
    file is readable by others and every folder above it is searchable by others."""
    import stat
    p = Path(path).resolve()
    if not p.stat().st_mode & stat.S_IROTH:
        return False
    return all(d.stat().st_mode & stat.S_IXOTH for d in p.parents)


def _limit(limits, cpu_seconds, drop):
    def preexec():
        mem = limits.memory_mb * 2**20
        resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
        resource.setrlimit(resource.RLIMIT_CPU, (int(cpu_seconds), int(cpu_seconds) + 2))
        fsize = limits.file_mb * 2**20
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)   # a too-large write fails, not the run
        if drop:                    # counts the processes of nobody, once the child is nobody
            resource.setrlimit(resource.RLIMIT_NPROC, (8, 8))
    return preexec


def run_cells(cells, problems, *, inputs=None, limits=Limits(), sandboxed=True,
              spec_from=None, seed=0, audit_hook=True, hide=()):
    """Run code cells in a new process and return its report: ``{'cells': [...], 'answers':
    {key: encoded}, ...}``, or ``{'failure': reason, ...}`` when the process died, was killed
    or sent nothing usable.

    ``problems`` are Problem specs (dicts) whose answers to take out; with ``spec_from`` (the
    instructor's run) they come from that notebook variable instead. ``sandboxed`` (student
    code): the limits, the audit hook (unless ``audit_hook`` is False: the operating system's
    protection alone, for tests) and, as root, the drop to ``nobody`` and the ``hide`` paths
    covered (:func:`paths_to_hide`; ignored unless both the drop and the covering work here).
    """
    sandboxed = bool(sandboxed)
    drop = sandboxed and can_drop_privileges()
    # a private folder of the grader (others may only pass through it) holding the child's
    # working folder, which only the child may write (as nobody: it owns it), and the child's
    # standard error, which the child cannot replace
    private = tempfile.mkdtemp(prefix="robodyn-grade-")
    work = os.path.join(private, "work")
    os.mkdir(work, 0o700)
    if drop:
        os.chmod(private, 0o711)
        os.chown(work, *NOBODY)
    env = {k: os.environ[k] for k in _KEEP_ENV if k in os.environ}
    env.update({"HOME": work, "TMPDIR": work, "MPLBACKEND": "Agg", "MPLCONFIGDIR": work,
                "IPYTHONDIR": os.path.join(work, ".ipython"), "PYTHONPATH": _python_path(),
                "PYTHONDONTWRITEBYTECODE": "1", "OPENBLAS_NUM_THREADS": "1",
                "OMP_NUM_THREADS": "1", "ROBODYN_ENGINE": "numpy", "ROBODYN_QUICK": "1",
                "ROBODYN_CACHE": os.path.join(work, "cache"), "PYTHONWARNINGS": "ignore"})
    total = min(limits.total_timeout, 20.0 + limits.cell_timeout * max(1, len(cells)))
    read_fd, write_fd = os.pipe()
    job = {"cells": list(cells), "answers": list(problems), "inputs": inputs or {},
           "cell_timeout": limits.cell_timeout, "guard": sandboxed and bool(audit_hook),
           "result_fd": write_fd, "spec_from": spec_from, "seed": seed,
           "drop": list(NOBODY) if drop else None,
           "hide": [str(p) for p in hide] if drop and hide and can_hide_paths() else []}
    stderr_path = os.path.join(private, "stderr")
    started = time.monotonic()
    try:
        with os.fdopen(os.open(stderr_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600),
                       "wb") as err:
            proc = subprocess.Popen(
                [sys.executable, "-X", "utf8", "-m", "robodyn.grading.sandbox"],
                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=err, cwd=work,
                env=env, pass_fds=(write_fd,), start_new_session=True,
                preexec_fn=_limit(limits, total + 5, drop) if sandboxed else None)
        os.close(write_fd)
        chunks, size = [], [0]

        def reader():                      # drain the pipe; keep at most MAX_RESULT_BYTES
            with os.fdopen(read_fd, "rb") as f:
                for block in iter(lambda: f.read(65536), b""):
                    if size[0] < MAX_RESULT_BYTES:
                        chunks.append(block)
                    size[0] += len(block)
        t = threading.Thread(target=reader, daemon=True)
        t.start()
        try:
            proc.stdin.write(json.dumps(job).encode())
            proc.stdin.close()
        except BrokenPipeError:
            pass
        killed = False
        try:
            proc.wait(timeout=total)
        except subprocess.TimeoutExpired:
            killed = True
        _kill_group(proc)
        t.join(timeout=5)
        elapsed = time.monotonic() - started
        stderr_tail = _tail(stderr_path)
    finally:
        shutil.rmtree(private, ignore_errors=True)
    base = {"seconds": round(elapsed, 2), "returncode": proc.returncode}
    if killed:
        return {**base, "failure": f"stopped after the notebook's time limit of {total:g} s"}
    if size[0] > MAX_RESULT_BYTES:
        return {**base, "failure": "the answers are too large"}
    for line in reversed(b"".join(chunks).decode("utf-8", "replace").splitlines()):
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if isinstance(msg, dict) and isinstance(msg.get("answers"), dict):
            return {**base, **msg}
    why = "the notebook's process ended without answers"
    if proc.returncode and proc.returncode < 0:
        why += f" (signal {signal.Signals(-proc.returncode).name})"
    return {**base, "failure": why, "stderr": stderr_tail}


def _kill_group(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()


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
    return [c.source for c in nb.cells if c.cell_type == "code"]


@dataclass
class Reference:
    """What the instructor notebook yields: its problems, encoded references, function inputs."""
    problems: list
    answers: dict
    inputs: dict


def reference(instructor_nb, *, seed=0, limits=Limits(cell_timeout=600, total_timeout=1800)):
    """Run the instructor notebook (trusted) and collect its problems and reference answers.

    Raises RuntimeError when it fails, a cell raises, or an answer is missing.
    """
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
    key = {}
    for p in ref.problems:
        value = answers.decode(ref.answers[p.key], p, _inputs_of(ref, p.key))
        key[p.key] = answers.fingerprint(value, p, seed=_seed(p.key))
    return json.dumps(key, separators=(",", ":"), sort_keys=True)


def _seed(text):
    return int.from_bytes(text.encode()[:8].ljust(8, b"\0"), "little") % 2**32


def generate(instructor_path, out_dir, *, progress=None):
    """Refresh the instructor notebook's answer key and write its student version to
    ``out_dir`` (same file name). Returns the student notebook's path."""
    instructor_path, out_dir = Path(instructor_path), Path(out_dir)
    nb = nbformat.read(instructor_path, as_version=4)
    markup.validate(nb)
    say = progress or (lambda *_: None)
    say(f"running {instructor_path} for its reference answers …")
    t0 = time.monotonic()
    ref = reference(nb)
    key = answer_key(ref)
    if markup.set_answer_key(nb, key):
        nbformat.write(nb, instructor_path)
        say(f"  answer key updated in {instructor_path}")
    student = markup.student_version(nb)
    out = out_dir / instructor_path.name
    out_dir.mkdir(parents=True, exist_ok=True)
    nbformat.write(student, out)
    say(f"  wrote {out} ({len(ref.problems)} problems, {time.monotonic() - t0:.1f} s)")
    return out


# --------------------------------------------------------------------------
# grading
# --------------------------------------------------------------------------

_NOT_RUN = (markup.KEY_ID, markup.SELF_TEST_ID)
"""Locked cells a submission's process never runs (the key; the self-test, which needs it)."""


def submission_cells(submission, release):
    """The code a submission's process runs: the student's cells in their order, except that
    locked cells are the release's own, test cells, the answer key and the self-test are left
    out, and a missing locked cell comes back (first).

    >>> setup = nbformat.v4.new_code_cell("import robodyn")
    >>> setup.metadata["nbgrader"] = markup.nbgrader_metadata("setup", locked=True)
    >>> release = nbformat.v4.new_notebook(cells=[setup])
    >>> submission_cells({"cells": [{"cell_type": "code", "source": "import os",
    ...     "metadata": {"nbgrader": {"grade_id": "setup"}}}, {"cell_type": "code",
    ...     "source": "x = 1", "metadata": {}}]}, release)
    ['import robodyn', 'x = 1']
    """
    by_id = {}
    for c in release.cells:
        m = markup.meta(c)
        if m and m.get("grade_id"):
            by_id[m["grade_id"]] = (c, m)
    out, seen = [], set()
    for c in submission.get("cells", []):
        if not isinstance(c, dict) or c.get("cell_type") != "code":
            continue
        src = c.get("source", "")
        src = "".join(src) if isinstance(src, list) else str(src)
        md = c.get("metadata") if isinstance(c.get("metadata"), dict) else {}
        m = md.get("nbgrader") if isinstance(md.get("nbgrader"), dict) else {}
        gid = m.get("grade_id")
        if gid in by_id:
            rc, rm = by_id[gid]
            seen.add(gid)
            if rm["grade"] or gid in _NOT_RUN:
                continue                                   # tests: run here, not there
            if rm["locked"]:
                src = rc.source                            # the release's copy, not theirs
        out.append(src)
    for gid, (rc, rm) in by_id.items():                  # deleted locked setup cells
        if rc.cell_type == "code" and rm["locked"] and not rm["grade"] and \
                gid not in _NOT_RUN and gid not in seen:
            out.insert(0, rc.source)
    return out


def _read_submission(path):
    path = Path(path)
    if path.stat().st_size > MAX_NOTEBOOK_BYTES:
        raise ValueError(f"the file is larger than {MAX_NOTEBOOK_BYTES // 2**20} MiB")
    data = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        raise ValueError("not a notebook (no list of cells)")
    return data


def _judge(p, ref, student_enc, rng):
    """Score and feedback of one answer, compared here (never in the student's process)."""
    inputs = _inputs_of(ref, p.key)
    try:
        expected = answers.decode(ref.answers[p.key], p, inputs)
    except ValueError as exc:
        return 0.0, f"(grader) the reference could not be read: {exc}"
    try:
        given = answers.decode(student_enc, p, inputs) if isinstance(student_enc, dict) \
            else None
    except (ValueError, TypeError) as exc:
        return 0.0, f"✘ {str(exc)[:300]}"
    try:
        fb = answers.compare(given, expected, p, rng=rng, n_points=24)
    except Exception as exc:                         # noqa: BLE001 -- never stop the others
        return 0.0, f"✘ could not be checked: {type(exc).__name__}: {str(exc)[:200]}"
    return (float(p.points) if fb.correct else 0.0), str(fb)


def grade_notebook(path, release, ref, *, limits=Limits(), seed=0, hide=()):
    """Grade one submission: a dict with the student's name, points per problem, feedback per
    problem, the total, the notes (failed cells, limits hit) and the seconds it took."""
    name = Path(path).stem
    row = {"student": name, "notes": "", "seconds": 0.0}
    try:
        sub = _read_submission(path)
    except (OSError, ValueError) as exc:
        report = {"failure": f"the notebook could not be read: {exc}", "seconds": 0.0}
    else:
        spec = [p.to_dict() for p in ref.problems]
        report = run_cells(submission_cells(sub, release), spec, inputs=ref.inputs,
                           limits=limits, sandboxed=True, hide=hide)
    got = report.get("answers", {}) if isinstance(report.get("answers"), dict) else {}
    rng = np.random.default_rng(seed)
    notes = []
    if "failure" in report:
        notes.append(report["failure"])
    for c in report.get("cells", []) if isinstance(report.get("cells"), list) else []:
        if isinstance(c, dict) and c.get("status") != "ok":
            notes.append(f"cell {c.get('index')}: {str(c.get('error'))[:200]}")
    total = 0.0
    for p in ref.problems:
        if "failure" in report and p.key not in got:
            score, text = 0.0, f"✘ not graded: {report['failure']}"
        else:
            score, text = _judge(p, ref, got.get(p.key, {"type": "none"}), rng)
        row[p.key] = score
        row[f"{p.key} feedback"] = text
        total += score
    row["total"] = total
    row["notes"] = " | ".join(notes)[:2000]
    row["seconds"] = report.get("seconds", 0.0)
    return row


def _cell_text(value):
    """A CSV field that a spreadsheet will not read as a formula (names and messages come
    from submissions)."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value


def grade(instructor_path, submissions, out_csv, *, limits=Limits(), seed=None,
          progress=None, jobs=1):
    """Grade every ``*.ipynb`` in the folder ``submissions`` against the instructor notebook
    and write the score table ``out_csv`` (``jobs`` submissions at a time, each in its own
    process). Returns the rows (dicts), in the order of the file names."""
    say = progress or (lambda *_: None)
    instructor_path = Path(instructor_path)
    files = sorted(Path(submissions).glob("*.ipynb"))
    if not files:
        raise ValueError(f"grade: no *.ipynb files in {submissions}")
    seed = int(np.random.default_rng().integers(2**31)) if seed is None else seed
    nb = nbformat.read(instructor_path, as_version=4)
    markup.validate(nb)
    t0 = time.monotonic()
    say(f"reference answers from {instructor_path} …")
    ref = reference(nb, seed=seed)
    release = markup.student_version(nb)
    max_points = sum(p.points for p in ref.problems)
    say(f"  {len(ref.problems)} problems, {max_points:g} points ({time.monotonic() - t0:.1f} s)")
    hide = []
    if os.geteuid() == 0:
        if not can_drop_privileges():
            say("  note: running as root, but a process cannot become 'nobody' here: submissions "
                "run as root, limited by rlimits and the audit hook only (see the instructor page)")
        else:
            say(f"  submissions run as the user nobody (uid {NOBODY[0]})")
            if readable_by_others(instructor_path):
                if can_hide_paths():
                    hide = paths_to_hide(instructor_path)
                    say(f"  hidden from the submissions (each in a mount namespace of its own): "
                        f"{', '.join(hide)}")
                else:
                    say(f"  note: {instructor_path} is readable by every user, so also by "
                        f"nobody (only the audit hook refuses it): keep the instructor notebooks "
                        f"in a folder other users cannot enter (chmod o-rwx)")
    done = [0]
    lock = threading.Lock()

    def one(i, f):
        row = grade_notebook(f, release, ref, limits=limits, seed=seed + i, hide=hide)
        with lock:
            done[0] += 1
            note = f"; {row['notes'][:90]}" if row["notes"] else ""
            say(f"[{done[0]}/{len(files)}] {f.name}: {row['total']:g}/{max_points:g} points "
                f"({row['seconds']:.1f} s){note}")
        return row
    with ThreadPoolExecutor(max_workers=max(1, int(jobs))) as pool:
        rows = list(pool.map(one, range(1, len(files) + 1), files))
    columns = ["student", "total", "max"] + [p.key for p in ref.problems] + \
        [f"{p.key} feedback" for p in ref.problems] + ["notes", "seconds"]
    out_csv = Path(out_csv)
    out_csv.parent.mkdir(parents=True, exist_ok=True)
    with open(out_csv, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=columns)
        w.writeheader()
        for r in rows:
            w.writerow({k: _cell_text(v) for k, v in {**r, "max": max_points}.items()})
    say(f"wrote {out_csv}: {len(rows)} submissions in {time.monotonic() - t0:.1f} s")
    return rows
