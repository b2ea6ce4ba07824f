"""The speed summary: every row of the performance tables (issues #22 and #31) as a same-run ratio
to its reference, with its target beside it, in one command that runs in under 5 minutes.

    .venv/bin/python bench/summary.py [--budget SECONDS] [--only FILE ...]
    make bench-summary

It runs each benchmark file of this folder that has a ``--summary`` flag, one after the other
(the machine's cores are shared: nothing runs in parallel), each as
``python bench/<file> --summary`` from the repository root, and collects the lines it prints
of the form ``ROW | task | ours | reference | ratio`` (ratio = ours / reference: below 1 we are
faster). A file without the flag, one that fails or runs out of the time left is reported, and
so is every row of the table that no file printed ("missing"), so a partial run says what it
lacks. A second table lists each row of the issues' tables with its target (``ISSUE_ROWS``) and
whether this run met it. The whole run stops at ``--budget`` seconds (default 290; each file's share of it is
fixed, see ``SHARE``).
"""
from __future__ import annotations

import argparse
import pathlib
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent

FILES = ["bench_kane.py", "bench_symbolic.py", "bench_dynamics.py", "bench_port_hamiltonian.py",
         "bench_impacts.py", "bench_contact.py", "bench_trees.py", "bench_checks.py"]
"""The files run, in this order."""

BUDGET = 290.0
"""Seconds for the whole run by default (a shared 2-core machine at a load of 1-3)."""

SHARE = {"bench_symbolic.py": 150, "bench_kane.py": 60, "bench_dynamics.py": 40,
         "bench_port_hamiltonian.py": 60, "bench_impacts.py": 40, "bench_contact.py": 30,
         "bench_trees.py": 60, "bench_checks.py": 20}
"""The largest share of the default budget each file may take (scaled with ``--budget``)."""

ISSUE_ROWS = [
    ("symbolic derivation, planar 6 / 10 / UR5 / random 7-joint, vs KanesMethod",
     "bench_symbolic.py", ["planar 6", "planar 10", "ur5", "random 7"], None),
    ("symbolic spatial 12-joint, lagrange, vs KanesMethod", "bench_symbolic.py",
     ["spatial 12"], None),
    ("compiled M / ID / FD, UR5, one state, vs Pinocchio (issue 31: at or below)",
     "bench_dynamics.py", ["crba", "inverse_dynamics", "forward_dynamics"], ("ratio", 1.0)),
    ("analytic derivatives of the dynamics, vs pin.computeABADerivatives (issue 31: within 2x)",
     "bench_dynamics.py", ["derivatives"], ("ratio", 2.0)),
    ("Part VI floating-base forward dynamics, per call, vs Pinocchio aba (free-flyer)",
     "bench_port_hamiltonian.py", ["floating-base fd"], ("ratio", 1.5)),
    ("the paper's (47), VMSForm.accelerations, vs pin.aba free flyer (issue 31: within 10x)",
     "bench_port_hamiltonian.py", ["(47)"], ("ratio", 10.0)),
    ("10 s of the book's space robot, RK45, vs solve_ivp + pin.aba",
     "bench_port_hamiltonian.py", ["space robot"], ("ratio", 1.5)),
    ("kane.equations_of_motion, symbolic spatial 8 / 12 joints, vs our lagrange",
     "bench_kane.py", ["spatial 8", "spatial 12"], None),
    ("generated C forward dynamics, batch of 1000, vs a loop (and Pinocchio)",
     "bench_symbolic.py", ["batch of"], None),
    ("hybrid simulation, compass gait 20 steps / bouncing ball, vs a solve_ivp loop "
     "(issue 31: at or below)", "bench_impacts.py", ["compass gait", "bouncing ball"],
     ("ratio", 1.0)),
    ("contact_impulse, 20 simultaneous frictionless contacts (Newton's cradle), vs a numpy "
     "projected Gauss-Seidel", "bench_contact.py", ["20 simultaneous frictionless"],
     ("ratio", 1.0)),
    ("contact_impulse, 100 simultaneous frictional contacts (issue 31: within 10 ms)",
     "bench_contact.py", ["100 simultaneous frictional"], ("ms", 10.0)),
    ("tree RNEA / CRBA / ABA from URDF, Solo 12 and G1 (29 joints), floating base, vs "
     "Pinocchio on the same file (issue 38: at or below)", "bench_trees.py",
     ["tree rnea, solo12", "tree crba, solo12", "tree aba, solo12", "tree rnea, g1",
      "tree crba, g1", "tree aba, g1"], ("ratio", 1.0)),
    ("tree RNEA / ABA derivatives, Solo 12 and G1, floating base, vs Pinocchio's "
     "(issue 38: within 1.5x)", "bench_trees.py",
     ["tree rnea derivatives, solo12", "tree aba derivatives, solo12",
      "tree rnea derivatives, g1", "tree aba derivatives, g1"], ("ratio", 1.5)),
    ("the Panda's symbolic M, C, G with its real inertias (issue 38: within 5 s)",
     "bench_trees.py", ["panda symbolic"], ("ms", 5000.0)),
    ("the Panda's generated C forward dynamics (the recursion eom.numeric() compiles), one "
     "state vs pin.aba, a batch vs a loop of pin.aba and vs pin.abaInParallel (issue 38: at or "
     "below)", "bench_trees.py", ["panda generated c"], ("ratio", 1.0)),
    ("the checks of a reader's call, exp_so3 / fk_space, over the bare function (issue 37: "
     "within 2 µs)", "bench_checks.py", ["exp_so3", "fk_space"], ("ms", 0.002)),
]
"""The issues' table: (row, the file that measures it, words its printed tasks contain, the
target or None): ``("ratio", x)``: ours / reference <= x; ``("ms", x)``: ours <= x ms."""

_UNITS = {"s": 1e3, "ms": 1.0, "us": 1e-3, "µs": 1e-3}


def milliseconds(cell):
    """The first 'number unit' of a table cell in ms ('pgs 8.04 ms' -> 8.04), or None."""
    words = cell.replace("(", " ").replace(")", " ").split()
    for a, b in zip(words, words[1:]):
        try:
            x = float(a)
        except ValueError:
            continue
        if b in _UNITS:
            return x * _UNITS[b]
    return None


def verdict(cells, target):
    """(shown target, 'met' | 'NOT met' | '?') of a printed row against its target."""
    if target is None:
        return "", ""
    kind, x = target
    if kind == "ratio":
        shown = f"ratio <= {x:g}"
        try:
            value = float(cells[3])
        except (IndexError, ValueError):
            return shown, "?"
    else:
        shown = f"<= {x:g} ms"
        value = milliseconds(cells[1]) if len(cells) > 1 else None
        if value is None:
            return shown, "?"
    return shown, "met" if value <= x else "NOT met"


def has_summary(path):
    return path.exists() and "--summary" in path.read_text()


def run(name, timeout):
    """(ROW lines, note) of ``bench/<name> --summary`` within ``timeout`` seconds."""
    cmd = [sys.executable, str(HERE / name), "--summary"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        out, err = proc.communicate(timeout=timeout)
        note = "" if proc.returncode == 0 else \
            f"failed (exit {proc.returncode}): {err.strip().splitlines()[-1:] or ''}"
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        note = f"stopped after {timeout:.0f} s (the rows printed before are kept)"
    rows = [line for line in out.splitlines() if line.startswith("ROW |")]
    return rows, note


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budget", type=float, default=BUDGET, help="seconds for the whole run "
                    "(a loaded machine needs more; each file's share grows with it)")
    ap.add_argument("--only", nargs="*", default=None, help="run only these files")
    a = ap.parse_args(argv)
    start = time.perf_counter()
    got, notes = {}, {}
    for name in FILES:
        if a.only is not None and name not in a.only:
            continue
        if not has_summary(HERE / name):
            notes[name] = "has no --summary flag (yet)"
            continue
        left = a.budget - (time.perf_counter() - start)
        if left < 5:
            notes[name] = "not run: the time budget is spent"
            continue
        t = time.perf_counter()
        rows, note = run(name, min(SHARE.get(name, 60) * a.budget / BUDGET, left))
        got[name] = rows
        notes[name] = note or f"{len(rows)} rows in {time.perf_counter() - t:.0f} s"
        print(f"# {name}: {notes[name]}", flush=True)
    print("\n| task | ours | reference | ours / reference | file |")
    print("|---|---|---|---|---|")
    for name, rows in got.items():
        for line in rows:
            cells = [c.strip() for c in line.split("|")[1:]]
            cells += [""] * (4 - len(cells))
            print(f"| {' | '.join(cells[:4])} | {name} |")
    missing = []
    print("\n| issue row | task | ours | reference | ours / reference | target | |")
    print("|---|---|---|---|---|---|---|")
    for row, name, words, target in ISSUE_ROWS:
        rows = got.get(name, [])
        lacking = []
        for w in words:
            hits = [line for line in rows if w in line.lower()]
            if not hits:
                lacking.append(w)
                continue
            for line in hits:
                cells = [c.strip() for c in line.split("|")[1:]]
                cells += [""] * (4 - len(cells))
                shown, met = verdict(cells, target)
                print(f"| {row} | {' | '.join(cells[:4])} | {shown} | {met} |")
        if lacking:
            why = notes.get(name, "not run")
            missing.append(f"- {row}: no row with {lacking} ({name}: {why})")
    print("\nMissing rows of the table:" if missing else "\nEvery row of the table was measured.")
    print("\n".join(missing))
    print(f"\nTotal {time.perf_counter() - start:.0f} s (budget {a.budget:.0f} s).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
