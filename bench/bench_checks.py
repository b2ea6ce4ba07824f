"""The cost of robodyn's checks of a reader's call (issue 37): per call of ``exp_so3`` and
``fk_space`` (a 6-joint arm), the sealed public function against the bare function it wraps
(``__wrapped__``: the same work without the boundary's scan of the arguments, declared kinds
and scan of the result), and against the same call inside ``with robodyn.checks(False)``.
Target: at most 2 us over the bare function. One BLAS thread.

How it is measured: the bare and the checked call are timed in alternation, ``ROUNDS`` rounds of
``NUMBER`` calls each (the order swapped every round), so both see the same load. Two figures
of the overhead: the difference of the two calls' best rounds (the timeit convention: a best
round is one no other process interrupted; the verdict uses it) and the median of the rounds'
differences (which, on a loaded machine, also holds the interruptions a longer call meets
more often). The calibration line times ``np.isfinite(w).all()`` of a 3-vector in the same
way: about 1 µs on an idle machine; scale the figures by it on a loaded one.

    .venv/bin/python bench/bench_checks.py [--summary] [--rounds N]

``--summary`` prints only ``ROW | task | ours | reference | ratio`` lines (bench/summary.py),
with "ours" the overhead over the bare call. To compare two versions of the library under the
same load, run this file twice in a row with ``PYTHONPATH`` pointing at each copy's ``lib``.
"""
from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import gc  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import robodyn  # noqa: E402
from robodyn import models  # noqa: E402
from robodyn.errors import CALL, Call  # noqa: E402

TARGET_US = 2.0
"""The overhead allowed per call (microseconds)."""

ROUNDS = 1000
"""Rounds of alternating bare and checked runs."""

NUMBER = 5
"""Calls per run (short: a run fits in one time slice of a loaded machine)."""


UNDER_WAY = Call("bench_checks", ())
"""The reader's call under way while a bare function runs: its inner calls of robodyn's public
functions then pass straight through, as they do inside a checked call (with the slot empty
they would be checked as calls of their own, and the bare figure would hold checks)."""


def _run(fn, number, under_way=False):
    token = CALL.set(UNDER_WAY if under_way else None)
    try:
        t = time.perf_counter()
        for _ in range(number):
            fn()
        return (time.perf_counter() - t) / number
    finally:
        CALL.reset(token)


def paired(a, b, rounds=ROUNDS, number=NUMBER, bare=False):
    """``(best a, best b, best b - best a, median a, median b, median of b - a)`` in seconds
    per call, ``a`` and ``b`` timed in alternation (the order swapped every round). With
    ``bare``, ``a`` is a bare function: it runs as inside a reader's call (``UNDER_WAY``)."""
    _run(a, 1, bare), b()                               # warm up
    ta, tb, diff = [], [], []
    gc_was = gc.isenabled()
    gc.disable()
    try:
        for r in range(rounds):
            if r % 2:
                y, x = _run(b, number), _run(a, number, bare)
            else:
                x, y = _run(a, number, bare), _run(b, number)
            ta.append(x)
            tb.append(y)
            diff.append(y - x)
    finally:
        if gc_was:
            gc.enable()
    return (min(ta), min(tb), min(tb) - min(ta), statistics.median(ta), statistics.median(tb),
            statistics.median(diff))


def cases():
    w = np.array([0.1, -0.2, 0.3])
    chain = models.ur5_like()
    q = np.linspace(0.1, 0.6, chain.n)
    exp_bare = robodyn.exp_so3.__wrapped__
    fk_bare = robodyn.fk_space.__wrapped__
    return [("exp_so3, one 3-vector", lambda: robodyn.exp_so3(w), lambda: exp_bare(w)),
            (f"fk_space, {chain.n}-joint chain", lambda: robodyn.fk_space(chain, q),
             lambda: fk_bare(chain, q))]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--summary", action="store_true",
                    help="print only the rows 'ROW | task | ours | reference | ratio'")
    ap.add_argument("--rounds", type=int, default=ROUNDS, help="rounds of alternating runs")
    args = ap.parse_args(argv)
    w = np.array([0.1, -0.2, 0.3])
    unit = paired(lambda: None, lambda: np.isfinite(w).all(), args.rounds)[2]
    if not args.summary:
        print(f"calibration: np.isfinite(w).all() of a 3-vector takes {unit * 1e6:.2f} µs here "
              "(about 1 µs on an idle machine: scale the figures below by it)\n")
        print("| call | bare (best / median) | checked (best / median) | overhead (best / "
              "median) | ratio | overhead / isfinite call | with checks(False), overhead | "
              "target |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    us = 1e6
    for label, checked, bare in cases():
        b, c, over, b_med, c_med, over_med = paired(bare, checked, args.rounds, bare=True)
        with robodyn.checks(False):
            over_off = paired(bare, checked, args.rounds, bare=True)[2]
        ratio = c / b
        if args.summary:
            print(f"ROW | checks of a reader's call, {label} | {over * us:.2f} µs over the bare "
                  f"call | bare {b * us:.2f} µs | {ratio:.2f}")
        else:
            print(f"| {label} | {b * us:.2f} / {b_med * us:.2f} µs | {c * us:.2f} / "
                  f"{c_med * us:.2f} µs | {over * us:.2f} / {over_med * us:.2f} µs | "
                  f"{ratio:.3f} | {over / unit:.2f} | {over_off * us:.2f} µs | "
                  f"<= {TARGET_US:g} µs {'met' if over * us <= TARGET_US else 'NOT met'} |")


if __name__ == "__main__":
    main()
