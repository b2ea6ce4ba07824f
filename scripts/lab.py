"""Start JupyterLab for a reader of the book (``make lab``): headless, on this machine only.

The command it runs: ``jupyter lab --no-browser --ip=127.0.0.1 --port=PORT`` in the repository,
``--allow-root`` only when run as root (a container, a lab machine, CI), and the reader's lab
configuration ``scripts/lab/`` first on ``JUPYTER_CONFIG_PATH`` (and on ``PYTHONPATH``, for its
contents manager ``book_refs``, which serves the chapters with their references to other
chapters, their equation numbers and their citations resolved as in the book): nbgrader's lab
and server extensions are off there (they are the instructor's; ``make lab``'s venv, from
``requirements-reader.txt``, does not even install nbgrader, but the full ``.venv`` of
``make test`` does). JupyterLab prints the address to open, with its token.
tests/browser/test_lab.py starts the lab through :func:`lab_command` and :func:`lab_env`.

>>> cmd = lab_command("python3", port=8899, root=False)
>>> cmd[:4], "--allow-root" in cmd, "--no-browser" in cmd, "--ip=127.0.0.1" in cmd
(['python3', '-m', 'jupyter', 'lab'], False, True, True)
>>> "--allow-root" in lab_command("python3", root=True)
True
>>> lab_env({"JUPYTER_CONFIG_PATH": "/x"})["JUPYTER_CONFIG_PATH"] == f"{CONFIG}{os.pathsep}/x"
True
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "scripts" / "lab"
"""The reader's Jupyter configuration: nbgrader's extensions off."""


def is_root() -> bool:
    """True when this process runs as root (where Jupyter refuses to start without
    ``--allow-root``)."""
    return hasattr(os, "geteuid") and os.geteuid() == 0


def lab_command(python=sys.executable, port=8888, root=None, extra=(), root_dir=ROOT):
    """The ``jupyter lab`` command line: headless, bound to 127.0.0.1, ``--allow-root`` only
    when ``root`` (default: when this process runs as root), serving ``root_dir`` (default: the
    repository)."""
    root = is_root() if root is None else root
    extra = list(extra)
    cmd = [str(python), "-m", "jupyter", "lab", "--no-browser", "--ip=127.0.0.1",
           f"--ServerApp.root_dir={root_dir}"]
    if not any(a.startswith(("--port", "--ServerApp.port")) for a in extra):
        cmd.append(f"--port={int(port)}")
    if root:
        cmd.append("--allow-root")
    return cmd + extra


def lab_env(environ=None):
    """``environ`` (default: this process's) with the reader's configuration first on
    ``JUPYTER_CONFIG_PATH``."""
    env = dict(os.environ if environ is None else environ)
    for var in ("JUPYTER_CONFIG_PATH", "PYTHONPATH"):       # PYTHONPATH: book_refs, the
        paths = [str(CONFIG)] + [p for p in env.get(var, "").split(os.pathsep) if p]
        env[var] = os.pathsep.join(paths)                   # server's contents manager
    return env


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    port = int(os.environ.get("PORT", "8888"))
    cmd = lab_command(sys.executable, port=port, extra=argv)
    print("make lab: starting JupyterLab (no browser is opened): open the http://127.0.0.1 "
          "address with its token that it prints below; Ctrl+C stops it.", flush=True)
    os.chdir(ROOT)
    os.execvpe(cmd[0], cmd, lab_env())


if __name__ == "__main__":
    main()
