"""Speed of robodyn.dynamics against Pinocchio and Modern Robotics, measured in one run.

For planar_chain(6) and ur5_like(): crba (mass matrix), inverse_dynamics (RNEA),
forward_dynamics (ABA) and coriolis_matrix, as

* robodyn, one state per call, and a batch of 1000 states per call (time per state), with the
  compiled engine (the default where a C compiler works) and with numpy alone;
* Pinocchio (C++), one state per call from Python (crba, rnea, aba, computeCoriolisMatrix);
* Modern Robotics (pure Python): MassMatrix, InverseDynamics, ForwardDynamics, and for the
  Coriolis row VelQuadraticForces (it has no C matrix; it returns C qd).

Then one state of the UR5-like arm and of the book's space robot (the arm on a free-floating
box): floating-base forward dynamics and the analytic RNEA / ABA derivatives
(robodyn.derivatives) against Pinocchio's aba, computeRNEADerivatives and
computeABADerivatives.

Each time is the best of several repeats of a timed loop (timeit). Ratios > 1 mean robodyn is
faster. Usage: ``python bench/bench_dynamics.py [--quick]`` (about a minute; --quick: seconds).
``--summary`` prints only the rows of bench/summary.py, ``ROW | task | ours | reference |
ratio`` (ratio = ours / reference): the compiled engine's M, inverse and forward dynamics of the
UR5-like arm on one state against Pinocchio's crba, rnea and aba, then the rows of
bench_derivatives (ours and Pinocchio's measured in alternating rounds).
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


def paired_time(ours, ref, budget, rounds=21):
    """Best times per call (s) of two functions measured in many short alternating rounds, so
    that a change of the machine's load hits both alike (the ratio is what is reported) and a
    quiet moment is found for each."""
    t1 = max(timeit.timeit(ours, number=20), timeit.timeit(ref, number=20), 1e-9) / 20
    number = max(1, int(budget / (2 * rounds) / t1))
    best = [np.inf, np.inf]
    for _ in range(rounds):
        for k, f in enumerate((ours, ref)):
            best[k] = min(best[k], timeit.timeit(f, number=number) / number)
    return best


def bench_derivatives(budget):
    """One state of the UR5-like arm (fixed base) and of the book's space robot (the arm on a
    free-floating box, Pinocchio's free-flyer root): forward dynamics and the RNEA / ABA
    derivatives, ours against Pinocchio's. Returns rows (task, ours s, Pinocchio s, what)."""
    import sys
    sys.path.insert(0, str(ROOT / "tests"))
    from scipy.spatial.transform import Rotation

    from robodyn import derivatives as dv
    from robodyn.port_hamiltonian import StandardForm
    ref = _reference()
    from test_floating_base import base_order, space_robot
    rng = np.random.default_rng(0)
    chain, g = models.ur5_like(), dy.DEFAULT_GRAVITY
    n = chain.n
    q, qd, qdd, tau = rng.normal(size=(4, n))
    model = ref.to_pinocchio(chain, gravity=g)
    data = model.createData()
    # the same numbers first
    assert np.allclose(dv.rnea_derivatives(chain, q, qd, qdd, g)[0],
                       pin.computeRNEADerivatives(model, data, q, qd, qdd)[0], atol=1e-9)
    rows = [("rnea derivatives (dtau/dq, dtau/dqd), UR5-like",
             lambda: dv.rnea_derivatives(chain, q, qd, qdd, g),
             lambda: pin.computeRNEADerivatives(model, data, q, qd, qdd),
             "pin.computeRNEADerivatives"),
            ("aba derivatives (dqdd/dq, dqdd/dqd, Minv), UR5-like",
             lambda: dv.aba_derivatives(chain, q, qd, tau, g),
             lambda: pin.computeABADerivatives(model, data, q, qd, tau),
             "pin.computeABADerivatives")]
    vms = space_robot()
    nb = vms.nb
    H = rd_exp(rng)
    v, w = rng.normal(size=(2, nb))
    gv = np.array([0.0, 0.0, -9.81])
    mdl = ref.to_pinocchio_vms(vms, gravity=gv)
    dat = mdl.createData()
    qp = np.concatenate([H[:3, 3], Rotation.from_matrix(H[:3, :3]).as_quat(), q])
    P = np.r_[base_order(vms), nb:vms.dof]
    vp, up = np.empty(vms.dof), np.empty(vms.dof)
    vp[P], up[P] = np.r_[v, qd], np.r_[w, tau]
    form = StandardForm(vms, gravity=gv)
    nu = np.r_[v, qd]
    assert np.allclose(form.accelerations(q, nu, pose=H, w=w, tau=tau),
                       pin.aba(mdl, dat, qp, vp, up)[P], atol=1e-9)
    rows += [("floating-base forward dynamics, space robot (UR5-like on a box)",
              lambda: form.accelerations(q, nu, pose=H, w=w, tau=tau),
              lambda: pin.aba(mdl, dat, qp, vp, up), "pin.aba free flyer"),
             ("floating-base rnea derivatives, space robot",
              lambda: dv.vms_rnea_derivatives(vms, q, v, qd, w, tau, base_pose=H, gravity=gv),
              lambda: pin.computeRNEADerivatives(mdl, dat, qp, vp, up),
              "pin.computeRNEADerivatives free flyer"),
             ("floating-base aba derivatives, space robot",
              lambda: dv.vms_aba_derivatives(vms, q, v, qd, w, tau, base_pose=H, gravity=gv),
              lambda: pin.computeABADerivatives(mdl, dat, qp, vp, up),
              "pin.computeABADerivatives free flyer")]
    return [(name, *paired_time(ours, theirs, budget), what)
            for name, ours, theirs, what in rows]


def rd_exp(rng):
    from robodyn import exp_se3
    return exp_se3(rng.normal(size=6) * 0.5)


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
        t_one, t_pin = paired_time(single, pinocchio, 2 * budget)
        t_batch = best_time(many, budget) / batch
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
        engine = "compiled engine" if dy._recursions._engine() is not None else "numpy (no compiler)"
        results = bench_chain(chain, dy.DEFAULT_GRAVITY, args.batch, 0.3)
        refs = {"crba": "pin.crba", "inverse_dynamics": "pin.rnea", "forward_dynamics": "pin.aba"}
        for name, t_one, _, t_pin, _ in results:
            if name in refs:
                print(f"ROW | {name} ({engine}), UR5-like, one state | {t_one * 1e6:.2f} us | "
                      f"{t_pin * 1e6:.2f} us ({refs[name]}) | {t_one / t_pin:.2f}", flush=True)
        for name, t_one, t_pin, what in bench_derivatives(0.3):
            print(f"ROW | {name}, one state | {t_one * 1e6:.2f} us | {t_pin * 1e6:.2f} us "
                  f"({what}) | {t_one / t_pin:.2f}", flush=True)
        return
    chains = [(models.planar_chain(6), np.array([0, -9.81, 0])),
              (models.ur5_like(), dy.DEFAULT_GRAVITY)]
    us = 1e6
    print(f"times in microseconds per state; batch = {args.batch} states per call")
    head = (f"{'algorithm':17} {'ours 1':>9} {'ours batch':>10} {'Pinocchio':>9} "
            f"{'MR':>9} | {'batch/Pin':>9} {'MR/ours 1':>9} {'Pin/ours 1':>10}")
    for chain, gravity in chains:
        for engine in ("auto", "numpy"):
            dy._recursions.ENGINE = engine
            if engine == "numpy":
                label = "numpy algorithms (ENGINE = 'numpy')"
            else:
                label = "compiled engine" if dy._recursions._engine() is not None else "no compiler: numpy"
            print(f"\n{chain.name} (n = {chain.n}), {label}")
            print(head)
            print("-" * len(head))
            for name, t_one, t_batch, t_pin, t_mr in bench_chain(chain, gravity, args.batch,
                                                                 budget):
                print(f"{name:17} {t_one * us:9.1f} {t_batch * us:10.2f} {t_pin * us:9.2f} "
                      f"{t_mr * us:9.0f} | {t_batch / t_pin:9.2f} {t_mr / t_one:9.1f} "
                      f"{t_pin / t_one:10.3f}")
    dy._recursions.ENGINE = "auto"
    print("\none state, side by side with Pinocchio (ratio ours / Pinocchio; target: derivatives "
          "<= 2, forward dynamics <= 1)")
    for name, t_one, t_pin, what in bench_derivatives(budget):
        print(f"{name:64} {t_one * us:8.2f} us {t_pin * us:8.2f} us ({what})  "
              f"{t_one / t_pin:5.2f}")
    print("\nbatch/Pin: robodyn's batched time per state over Pinocchio's (target <= 5); "
          "MR/ours 1: speed-up over Modern Robotics on one state.\n"
          "Coriolis row: Modern Robotics has no C matrix; its VelQuadraticForces (C qd) is "
          "timed.")


if __name__ == "__main__":
    main()
