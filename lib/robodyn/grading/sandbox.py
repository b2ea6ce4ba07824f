"""The process that runs one notebook's code: ``python -m robodyn.grading.sandbox``.

It reads a job (JSON) on standard input: the code cells, the answers to take out (problem
specs, and the inputs at which function answers are evaluated), the per-cell limits, and
whether to guard. It first writes the line :data:`STARTED` to the file descriptor the grader
gave it (before any student code, so a submission cannot pretend its sandbox never started),
runs the cells one by one in an IPython shell (so ``%magics`` work), each under two timers --
its CPU time (``ITIMER_PROF``, ``cell_timeout``) and a wall-clock backstop for a cell that
sleeps (``cell_wall``); a cell that runs out is interrupted and the next cell runs --, then
encodes the named answer variables with :func:`robodyn.answers.encode` and writes one JSON
line to that descriptor. The grader reads what comes back against a strict schema
(:func:`robodyn.grading.grader.parse_result`): nothing a cell writes there can do more than
supply answers. Reference answers never come here: the comparison is made
by the grader, in its own process.

For a submission it runs inside the bubblewrap sandbox (:mod:`robodyn.grading.jail`), which
is the boundary. With ``guard`` set (only with the grader's ``--unsafe``, where there is no
sandbox), after the heavy modules are imported and before the first cell, an audit hook (:func:`sys.addaudithook`, which cannot be
removed) refuses network use, new processes, signals to other processes, ``ctypes`` calls,
raising resource limits, links, and file access outside the working directory (reading is also
allowed in Python's library, the installed packages and the robodyn package:
:func:`library_roots`). The grader adds what the operating system enforces (see
:mod:`robodyn.grading.grader`).
"""
import json
import os
import signal
import sys


class CellTimeout(BaseException):
    """Raised in a cell that exceeds its time limit (a BaseException, like KeyboardInterrupt,
    so ``except Exception`` in student code does not swallow it)."""


def _on_alarm(signum, frame):
    raise CellTimeout("the cell exceeded its time limit")


STARTED = '{"started": true}'
"""The first line on the result descriptor (written before any student code runs)."""


def _timers(cpu, wall):
    signal.setitimer(signal.ITIMER_PROF, cpu)
    signal.setitimer(signal.ITIMER_REAL, wall)


_BLOCKED = {
    "socket.__new__", "socket.connect", "socket.bind", "socket.sendto", "socket.sendmsg",
    "socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyaddr",
    "subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork",
    "os.forkpty", "os.startfile", "pty.spawn", "os.kill", "os.killpg", "signal.pthread_kill",
    "ctypes.dlopen", "ctypes.dlsym", "ctypes.call_function", "ctypes.cdata",
    "ctypes.addressof", "ctypes.string_at", "ctypes.wstring_at", "ctypes.PyObj_FromPtr",
    "resource.setrlimit", "resource.prlimit", "os.symlink", "os.link", "os.chown",
    "os.chmod", "os.chroot", "os.setuid", "sys.addaudithook", "webbrowser.open",
    "urllib.Request", "http.client.connect", "ftplib.connect", "smtplib.connect",
    "mmap.__new__", "os.putenv", "os.unsetenv",
}
_WRITE_EVENTS = {"os.remove", "os.rename", "os.rmdir", "os.mkdir", "os.truncate", "os.utime",
                 "shutil.rmtree", "shutil.move", "shutil.copyfile", "os.chdir"}
_LIST_EVENTS = {"os.listdir", "os.scandir", "glob.glob", "os.walk"}
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


def _inside(path, roots):
    return any(path == r or path.startswith(r + os.sep) for r in roots)


def install_guard(workdir, read_roots):
    """Install the audit hook: refuse the events above; allow writing only below
    ``workdir`` and reading only below ``workdir`` and ``read_roots`` (plus /dev/null and
    random devices). Installed for good: only a process that will run a notebook's code
    calls it (``workdir`` and ``read_roots`` are checked first: folder paths)."""
    from . import _args
    _args.path(workdir, "install_guard: workdir")
    if not os.path.isdir(workdir):
        from .. import _value_checks
        raise _value_checks.error("install_guard: workdir", "an existing folder", repr(workdir)[:200])
    if isinstance(read_roots, (str, bytes, dict)) or not isinstance(read_roots, (list, tuple)):
        from .. import _value_checks
        raise _value_checks.error("install_guard: read_roots", "a list of folder paths",
                            _value_checks.describe(read_roots),
                            exc=TypeError)
    for r in read_roots:
        _args.path(r, "install_guard: read_roots")
        if not os.path.isdir(r):
            from .. import _value_checks
            raise _value_checks.error("install_guard: read_roots", "existing folders",
                                repr(os.fspath(r))[:200])
    work = (os.path.realpath(workdir),)
    readable = work + tuple(os.path.realpath(r) for r in read_roots) + (
        "/dev/null", "/dev/urandom", "/dev/random", f"/proc/{os.getpid()}",
        "/usr/share/zoneinfo", "/etc/localtime")
    realpath, fspath = os.path.realpath, os.fspath

    def path_of(p):
        p = fspath(p)
        if isinstance(p, bytes):
            p = p.decode("utf-8", "replace")
        return realpath(p)

    def hook(event, args):
        if event in _BLOCKED:
            raise PermissionError(f"sandbox: {event} is not allowed when grading")
        if event == "open":
            path, mode, flags = args
            if path is None or isinstance(path, int):
                return
            p = path_of(path)
            writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or \
                (isinstance(flags, int) and flags & _WRITE_FLAGS)
            if not _inside(p, work if writing else readable):
                raise PermissionError(f"sandbox: opening {p} is not allowed when grading")
        elif event in _WRITE_EVENTS or event in _LIST_EVENTS:
            for a in args:
                if isinstance(a, (str, bytes, os.PathLike)):
                    p = path_of(a)
                    if not _inside(p, work if event in _WRITE_EVENTS else readable):
                        raise PermissionError(f"sandbox: {event} on {p} is not allowed")

    sys.addaudithook(hook)


def library_roots():
    """The folders a graded notebook may read: Python's own library and installed packages,
    and the robodyn package -- not the folders on ``sys.path`` in general (the current folder
    or a repository root there would expose the instructor notebooks)."""
    import sysconfig

    import robodyn
    paths = sysconfig.get_paths()
    roots = {paths[k] for k in ("stdlib", "platstdlib", "purelib", "platlib") if k in paths}
    roots |= {os.path.join(p, "lib") for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    roots.add(os.path.dirname(os.path.abspath(robodyn.__file__)))
    return sorted(r for r in roots if os.path.isdir(r))


def _shell():
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config
    c = Config()
    c.HistoryManager.enabled = False
    c.InteractiveShell.colors = "NoColor"
    c.InteractiveShell.xmode = "Plain"
    return InteractiveShell.instance(config=c)


def _message(exc):
    text = f"{type(exc).__name__}: {exc}"
    return text if len(text) < 300 else text[:300] + "…"


def main():
    sys.stderr.write("sandbox: started\n")
    sys.stderr.flush()
    job = json.loads(sys.stdin.read())
    out = os.fdopen(job["result_fd"], "w")
    out.write(STARTED + "\n")
    out.flush()
    # heavy imports first, so that the guard does not see (and refuse) their start-up
    import numpy as np  # noqa: F401
    import sympy  # noqa: F401

    import robodyn  # noqa: F401
    from robodyn import answers
    encode, Problem = answers.encode, answers.Problem     # before student code can patch them
    shell = _shell()
    problems = [Problem.from_dict(p) for p in job["answers"]]
    inputs = job.get("inputs") or {}
    roots = library_roots() if job.get("guard") else ()
    if job.get("guard"):
        install_guard(os.getcwd(), roots)
    signal.signal(signal.SIGALRM, _on_alarm)
    signal.signal(signal.SIGPROF, _on_alarm)
    limit = float(job["cell_timeout"])
    wall = float(job.get("cell_wall") or 3 * limit)
    report = []
    for i, src in enumerate(job["cells"]):
        status, error = "ok", None
        try:
            _timers(limit, wall)
            result = shell.run_cell(src, store_history=False)
        except CellTimeout as exc:         # the timer fired outside the cell's own code
            result, status, error = None, "timeout", _message(exc)
        finally:
            _timers(0, 0)
        if result is not None:
            err = result.error_before_exec or result.error_in_exec
            if isinstance(err, CellTimeout):
                status, error = "timeout", (f"the cell exceeded its {limit:g} s time limit "
                                            f"(CPU time; {wall:g} s of wall clock)")
            elif err is not None:
                status, error = "error", _message(err)
        report.append({"index": i, "status": status, "error": error})
    message = {"cells": report, "answers": {}}
    if job.get("spec_from"):                            # the instructor's notebook only
        spec = shell.user_ns.get(job["spec_from"])
        if not isinstance(spec, answers.ProblemSet):
            message["spec_error"] = f"no ProblemSet named {job['spec_from']!r}"
            out.write(json.dumps(message) + "\n")
            return
        problems = list(spec)
        rng = np.random.default_rng(job.get("seed", 0))
        inputs = {p.key: [[np.asarray(a).tolist() for a in args]
                          for args in p.sample_points(job.get("n_inputs", 24), rng)]
                  for p in problems if p.is_function}
        message["spec"] = [p.to_dict() for p in problems]
        message["inputs"] = inputs
    for p in problems:
        try:
            _timers(limit, wall)
            args = None
            if p.key in inputs:
                args = [tuple(np.asarray(a, dtype=float) for a in t) for t in inputs[p.key]]
            enc = encode(shell.user_ns.get(p.answer), p, args)
        except BaseException as exc:                    # noqa: BLE001 -- student objects
            enc = {"type": "invalid", "message": f"the answer could not be read: "
                   f"{_message(exc)}"}
        finally:
            _timers(0, 0)
        message["answers"][p.key] = enc
    out.write(json.dumps(message) + "\n")
    out.flush()


if __name__ == "__main__":
    main()

from .._boundary import seal as _seal  # noqa: E402 -- the one boundary (issue 28): last, over the finished module
_seal(globals(), {"*": {"text": "all"}, "main": {"open": True}})
