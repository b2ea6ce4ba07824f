"""The cost of robodyn's checks of a reader's call (issue 37): per call of ``exp_so3`` and
``fk_space`` (a 6-joint arm), the sealed public function against the bare function it wraps
(``__wrapped__``: the same work without the boundary's scan of the arguments, declared kinds
and scan of the result), and against the same call inside ``with robodyn.checks(False)``.
Target: at most 2 us over the bare function. One BLAS thread; best of several repeats.

    .venv/bin/python bench/bench_checks.py [--summary]

``--summary`` prints only ``ROW | task | ours | reference | ratio`` lines (bench/summary.py),
with "ours" the overhead over the bare call.
"""
from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import timeit  # noqa: E402

import numpy as np  # noqa: E402

import robodyn  # noqa: E402
from robodyn import models  # noqa: E402

TARGET_US = 2.0
"""The overhead allowed per call (microseconds)."""


def per_call(fn, repeat=300, number=20):
    """Best seconds per call of ``fn()`` over ``repeat`` short runs of ``number`` calls (short:
    each run fits in one time slice of a loaded machine, so the best is an unloaded one)."""
    return min(timeit.repeat(fn, repeat=repeat, number=number)) / number


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
    args = ap.parse_args(argv)
    w = np.array([0.1, -0.2, 0.3])
    unit = per_call(lambda: np.isfinite(w).all())
    if not args.summary:
        print(f"calibration: np.isfinite(w).all() of a 3-vector takes {unit * 1e6:.2f} µs here "
              "(about 1 µs on an idle machine: scale the figures below by it)\n")
        print("| call | bare | checked | overhead | ratio | overhead / isfinite call | "
              "with checks(False) | target |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for label, checked, bare in cases():
        t_bare, t_checked = per_call(bare), per_call(checked)
        with robodyn.checks(False):
            t_off = per_call(checked)
        over = (t_checked - t_bare) * 1e6
        ratio = t_checked / t_bare
        if args.summary:
            print(f"ROW | checks of a reader's call, {label} | {over:.2f} µs over the bare "
                  f"call | bare {t_bare * 1e6:.2f} µs | {ratio:.2f}")
        else:
            print(f"| {label} | {t_bare * 1e6:.2f} µs | {t_checked * 1e6:.2f} µs | "
                  f"{over:.2f} µs | {ratio:.2f} | {over / (unit * 1e6):.2f} | "
                  f"{t_off * 1e6:.2f} µs | <= {TARGET_US:g} µs "
                  f"{'met' if over <= TARGET_US else 'NOT met'} |")


if __name__ == "__main__":
    main()
