"""Speed of robodyn.dynamics against Pinocchio and Modern Robotics, measured in one run.

For planar_chain(6) and ur5_like(): crba (mass matrix), inverse_dynamics (RNEA),
forward_dynamics (ABA) and coriolis_matrix, as

* robodyn, one state per call, and a batch of 1000 states per call (time per state), with the
  compiled engine (the default where a C compiler works) and with numpy alone;
* Pinocchio (C++), one state per call from Python (crba, rnea, aba, computeCoriolisMatrix);
* Modern Robotics (pure Python): MassMatrix, InverseDynamics, ForwardDynamics, and for the
  Coriolis row VelQuadraticForces (it has no C matrix; it returns C qd).

Each time is the best of several repeats of a timed loop (timeit). Ratios > 1 mean robodyn is
faster. Usage: ``python bench/bench_dynamics.py [--quick]`` (about a minute; --quick: seconds).
``--summary`` prints only the rows of bench/summary.py, ``ROW | task | ours | reference |
ratio`` (ratio = ours / reference): the compiled engine's M, inverse and forward dynamics of the
UR5-like arm on one state against Pinocchio's crba, rnea and aba.
"""
from __future__ import annotations

import argparse
import importlib.util
import pathlib
import timeit

import modern_robotics as mr
import numpy as np
import pinocchio as pin

from robodyn import dynamics as dy
from robodyn import models

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _reference():
    """tests/reference.py (the shared robodyn -> Pinocchio converter), loaded by file path."""
    spec = importlib.util.spec_from_file_location("reference", ROOT / "tests" / "reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def mr_lists(chain):
    """Modern Robotics' Mlist (CoM frame i-1 -> i at q = 0, then last CoM -> end effector),
    Glist (spatial inertias in the CoM frames, (omega, v) like ours) and Slist."""
    L = [np.eye(4)] + [np.asarray(x, float) for x in chain.link_homes] + \
        [np.asarray(chain.home, float)]
    Mlist = [np.linalg.inv(L[i]) @ L[i + 1] for i in range(chain.n + 1)]
    return Mlist, [np.asarray(G, float) for G in chain.link_inertias], np.asarray(chain.screws)


def best_time(f, budget):
    """Best time per call (s): loops long enough to take ~budget/3 s, best of 3."""
    t1 = timeit.timeit(f, number=1)
    number = max(1, int(budget / 3 / max(t1, 1e-9)))
    return min(timeit.repeat(f, number=number, repeat=3)) / number


def bench_chain(chain, gravity, batch, budget):
    rng = np.random.default_rng(0)
    n = chain.n
    q, qd, qdd = (rng.normal(size=n) for _ in range(3))
    Q, QD, QDD = (rng.normal(size=(batch, n)) for _ in range(3))
    model = _reference().to_pinocchio(chain, gravity=gravity)
    data = model.createData()
    Mlist, Glist, Slist = mr_lists(chain)
    F0 = np.zeros(6)
    # the same numbers first: a benchmark of wrong results is worthless
    assert np.allclose(dy.crba(chain, q), mr.MassMatrix(q, Mlist, Glist, Slist), atol=1e-9)
    assert np.allclose(dy.forward_dynamics(chain, q, qd, qdd, gravity),
                       pin.aba(model, data, q, qd, qdd), atol=1e-9)
    rows = [
        ("crba", lambda: dy.crba(chain, q), lambda: dy.crba(chain, Q),
         lambda: pin.crba(model, data, q), lambda: mr.MassMatrix(q, Mlist, Glist, Slist)),
        ("inverse_dynamics", lambda: dy.inverse_dynamics(chain, q, qd, qdd, gravity),
         lambda: dy.inverse_dynamics(chain, Q, QD, QDD, gravity),
         lambda: pin.rnea(model, data, q, qd, qdd),
         lambda: mr.InverseDynamics(q, qd, qdd, gravity, F0, Mlist, Glist, Slist)),
        ("forward_dynamics", lambda: dy.forward_dynamics(chain, q, qd, qdd, gravity),
         lambda: dy.forward_dynamics(chain, Q, QD, QDD, gravity),
         lambda: pin.aba(model, data, q, qd, qdd),
         lambda: mr.ForwardDynamics(q, qd, qdd, gravity, F0, Mlist, Glist, Slist)),
        ("coriolis_matrix", lambda: dy.coriolis_matrix(chain, q, qd),
         lambda: dy.coriolis_matrix(chain, Q, QD),
         lambda: pin.computeCoriolisMatrix(model, data, q, qd),
         lambda: mr.VelQuadraticForces(q, qd, Mlist, Glist, Slist)),
    ]
    results = []
    for name, single, many, pinocchio, modern in rows:
        t_one = best_time(single, budget)
        t_batch = best_time(many, budget) / batch
        t_pin = best_time(pinocchio, budget)
        t_mr = best_time(modern, budget)
        results.append((name, t_one, t_batch, t_pin, t_mr))
    return results


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="short loops (numbers are noisy)")
    parser.add_argument("--batch", type=int, default=1000, help="states per batch call")
    parser.add_argument("--summary", action="store_true", help="only the rows of summary.py")
    args = parser.parse_args(argv)
    budget = 0.15 if args.quick else 1.0
    if args.summary:
        chain = models.ur5_like()
        engine = "compiled engine" if dy._engine() is not None else "numpy (no compiler)"
        results = bench_chain(chain, dy.DEFAULT_GRAVITY, args.batch, 0.3)
        refs = {"crba": "pin.crba", "inverse_dynamics": "pin.rnea", "forward_dynamics": "pin.aba"}
        for name, t_one, _, t_pin, _ in results:
            if name in refs:
                print(f"ROW | {name} ({engine}), UR5-like, one state | {t_one * 1e6:.2f} us | "
                      f"{t_pin * 1e6:.2f} us ({refs[name]}) | {t_one / t_pin:.2f}", flush=True)
        return
    chains = [(models.planar_chain(6), np.array([0, -9.81, 0])),
              (models.ur5_like(), dy.DEFAULT_GRAVITY)]
    us = 1e6
    print(f"times in microseconds per state; batch = {args.batch} states per call")
    head = (f"{'algorithm':17} {'ours 1':>9} {'ours batch':>10} {'Pinocchio':>9} "
            f"{'MR':>9} | {'batch/Pin':>9} {'MR/ours 1':>9} {'Pin/ours 1':>10}")
    for chain, gravity in chains:
        for engine in ("auto", "numpy"):
            dy.ENGINE = engine
            if engine == "numpy":
                label = "numpy algorithms (ENGINE = 'numpy')"
            else:
                label = "compiled engine" if dy._engine() is not None else "no compiler: numpy"
            print(f"\n{chain.name} (n = {chain.n}), {label}")
            print(head)
            print("-" * len(head))
            for name, t_one, t_batch, t_pin, t_mr in bench_chain(chain, gravity, args.batch,
                                                                 budget):
                print(f"{name:17} {t_one * us:9.1f} {t_batch * us:10.2f} {t_pin * us:9.2f} "
                      f"{t_mr * us:9.0f} | {t_batch / t_pin:9.2f} {t_mr / t_one:9.1f} "
                      f"{t_pin / t_one:10.3f}")
    print("\nbatch/Pin: robodyn's batched time per state over Pinocchio's (target <= 5); "
          "MR/ours 1: speed-up over Modern Robotics on one state.\n"
          "Coriolis row: Modern Robotics has no C matrix; its VelQuadraticForces (C qd) is "
          "timed.")


if __name__ == "__main__":
    main()
