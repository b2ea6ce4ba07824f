"""Speed of robodyn.trees (kinematic trees read from URDF) against Pinocchio on the same file,
and of the Panda's symbolic equations (issue 38), measured in one run.

* RNEA, CRBA and ABA of a 12-joint quadruped (Solo 12) and a 29-joint humanoid (Unitree G1;
  ``--full`` adds Talos, 32 joints), floating base, one state per call: ``robodyn.trees.rnea``
  / ``crba`` / ``aba`` (the compiled tree engine, ``_tree_engine.c``) against ``pin.rnea`` /
  ``pin.crba`` / ``pin.aba`` with a free-flyer root, both from Python, measured in alternating
  rounds (a change of the machine's load hits both alike). Target: ratio <= 1.
* The analytic derivatives (``trees.rnea_derivatives``, ``trees.aba_derivatives``) against
  ``pin.computeRNEADerivatives`` and ``pin.computeABADerivatives``. Target: ratio <= 1.5.
* The Franka Panda (fingers locked, ``urdf.serial_chain``): the time to derive M, C
  (Christoffel) and G symbolically with ``lagrange.equations_of_motion`` (target <= 5 s), and
  the generated C forward dynamics that ``eom.numeric()`` compiles (the articulated-body
  algorithm written out for the arm, ``robodyn.recursive_codegen``) against ``pin.aba`` on the
  same reduced model (target <= 1): one state per call from Python (both), and a batch of
  1000 states (one call, against a Python loop of ``pin.aba`` and ``pin.abaInParallel`` with
  one thread); the closed-form C it replaces, and the UR5, for reference.

Every pair is checked to give the same numbers before it is timed. One BLAS thread (set
below, before numpy loads). Usage from the repository root::

    .venv/bin/python bench/bench_trees.py [--full]
    .venv/bin/python bench/bench_trees.py --summary     # the rows of bench/summary.py

``--summary`` prints ``ROW | task | ours | reference | ratio`` lines (ratio = ours / reference).
"""
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")   # a shared 2-core machine
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import pinocchio as pin  # noqa: E402

from bench_dynamics import paired_time  # noqa: E402 -- alternating rounds, one definition
from robodyn import dynamics, lagrange, trees, urdf  # noqa: E402


def pair(name):
    """The floating-base model of a robot in robodyn and in Pinocchio, a random state in both
    coordinate systems (Pinocchio: its joint order, (v, omega) base velocity, quaternion)."""
    m = urdf.load_urdf(name, floating_base=True)
    pm = pin.buildModelFromUrdf(m.source, pin.JointModelFreeFlyer())
    P = np.array([3, 4, 5, 0, 1, 2] + [pm.joints[pm.getJointId(j)].idx_v
                                       for j in m.joint_names])
    rng = np.random.default_rng(0)
    q = rng.uniform(-1, 1, m.n)
    nu, dnu, tau = rng.normal(size=(3, m.nv))
    H = pin.SE3.Random().homogeneous
    qp = pin.neutral(pm)
    for qi, j in zip(q, m.joint_names):
        jm = pm.joints[pm.getJointId(j)]
        qp[jm.idx_q:jm.idx_q + jm.nq] = [np.cos(qi), np.sin(qi)] if jm.nq == 2 else [qi]
    qp[:3], qp[3:7] = H[:3, 3], pin.Quaternion(H[:3, :3]).coeffs()
    vp, ap, tp = (np.empty(pm.nv) for _ in range(3))
    vp[P], ap[P], tp[P] = nu, dnu, tau
    return m, pm, pm.createData(), P, (q, nu, dnu, tau, H), (qp, vp, ap, tp)


def tree_rows(name, budget):
    m, pm, d, P, (q, nu, dnu, tau, H), (qp, vp, ap, tp) = pair(name)
    Mp = pin.crba(pm, d, qp)
    Mp = np.triu(Mp) + np.triu(Mp, 1).T
    assert np.allclose(trees.crba(m, q), Mp[np.ix_(P, P)], rtol=1e-9, atol=1e-9)
    assert np.allclose(trees.rnea(m, q, nu, dnu, H), pin.rnea(pm, d, qp, vp, ap)[P], atol=1e-8)
    assert np.allclose(trees.aba(m, q, nu, tau, H), pin.aba(pm, d, qp, vp, tp)[P], atol=1e-8)
    rows = [("rnea", lambda: trees.rnea(m, q, nu, dnu, H), lambda: pin.rnea(pm, d, qp, vp, ap),
             "pin.rnea"),
            ("crba", lambda: trees.crba(m, q), lambda: pin.crba(pm, d, qp), "pin.crba"),
            ("aba", lambda: trees.aba(m, q, nu, tau, H), lambda: pin.aba(pm, d, qp, vp, tp),
             "pin.aba")]
    dq, dv = trees.rnea_derivatives(m, q, nu, dnu, H)
    pin.computeRNEADerivatives(pm, d, qp, vp, ap)
    assert np.allclose(dq, d.dtau_dq[np.ix_(P, P)], atol=1e-8)
    da, dav, _ = trees.aba_derivatives(m, q, nu, tau, H)
    pin.computeABADerivatives(pm, d, qp, vp, tp)
    assert np.allclose(da, d.ddq_dq[np.ix_(P, P)], rtol=1e-8, atol=1e-6)
    rows += [("rnea derivatives", lambda: trees.rnea_derivatives(m, q, nu, dnu, H),
              lambda: pin.computeRNEADerivatives(pm, d, qp, vp, ap), "pin.computeRNEADerivatives"),
             ("aba derivatives", lambda: trees.aba_derivatives(m, q, nu, tau, H),
              lambda: pin.computeABADerivatives(pm, d, qp, vp, tp), "pin.computeABADerivatives")]
    label = f"{name} ({m.n} joints, floating base)"
    return [(f"tree {alg}, {label}, one state", *paired_time(f, g, budget, rounds=41), what)
            for alg, f, g, what in rows]


def panda_rows(budget):
    """The Panda's symbolic M, C, G: derivation time; the generated C forward dynamics that
    ``eom.numeric()`` compiles (the articulated-body algorithm written out for the arm,
    :mod:`robodyn.recursive_codegen`) on one state and on a batch, against Pinocchio on the
    same reduced model; for reference the C of the closed-form M, C, G (nested form, Cholesky
    solve) it replaces. Returns (derivation s, rows (task, ours s, reference s, what))."""
    from robodyn import lagrange as lg
    m = urdf.load_urdf("panda")
    fingers = ["panda_finger_joint1", "panda_finger_joint2"]
    chain = urdf.serial_chain(urdf.lock_joints(m, fingers), tip="panda_hand")
    t = time.perf_counter()
    eom = lagrange.equations_of_motion(chain, gravity=dynamics.DEFAULT_GRAVITY)
    t_derive = time.perf_counter() - t
    fd = eom.numeric(backend="c").forward_dynamics
    closed = lg._euler_lagrange._compiled(eom.M, eom.C, eom.G, list(eom.q), list(eom.qd),
                          eom.intermediates).forward_dynamics
    pm = pin.buildModelFromUrdf(m.source)
    pr = pin.buildReducedModel(pm, [pm.getJointId(f) for f in fingers], pin.neutral(pm))
    d = pr.createData()
    rng = np.random.default_rng(1)
    q, qd, tau = rng.normal(size=(3, 7))
    B = 1000
    Q, QD, T = rng.normal(size=(3, B, 7))
    Qt, QDt, Tt = (np.asfortranarray(X.T) for X in (Q, QD, T))   # Pinocchio's (n, B)
    ref = np.array([pin.aba(pr, d, *x) for x in zip(Q, QD, T)])
    for f in (fd, closed):
        assert np.allclose(f(q, qd, tau), pin.aba(pr, d, q, qd, tau), rtol=1e-10, atol=1e-9)
        assert np.allclose(f(Q, QD, T), ref, rtol=1e-10, atol=1e-8)
    rows = [("Panda generated C forward dynamics (recursive), one state",
             *paired_time(lambda: fd(q, qd, tau), lambda: pin.aba(pr, d, q, qd, tau),
                          budget, rounds=41), "pin.aba"),
            ("Panda generated C forward dynamics (recursive), batch of 1000 states in one "
             "call, per state",
             *(t / B for t in paired_time(lambda: fd(Q, QD, T), lambda: [
                 pin.aba(pr, d, *x) for x in zip(Q, QD, T)], budget, rounds=11)),
             "a Python loop of pin.aba")]
    if hasattr(pin, "abaInParallel"):
        pool = pin.ModelPool(pr, 1)
        assert np.allclose(pin.abaInParallel(1, pool, Qt, QDt, Tt).T, ref, rtol=1e-10, atol=1e-8)
        rows.append(("Panda generated C forward dynamics (recursive), batch of 1000 states, "
                     "per state",
                     *(t / B for t in paired_time(lambda: fd(Q, QD, T), lambda: pin.abaInParallel(
                         1, pool, Qt, QDt, Tt), budget, rounds=11)),
                     "pin.abaInParallel, 1 thread"))
    rows.append(("Panda closed-form C forward dynamics (nested M, C, G, Cholesky), one state "
                 "(what the recursion replaces)",
                 *paired_time(lambda: closed(q, qd, tau), lambda: pin.aba(pr, d, q, qd, tau),
                              budget / 2, rounds=21), "pin.aba"))
    return t_derive, rows


def ur5_rows(budget):
    """The UR5 of example-robot-data: recursive_codegen's forward dynamics against pin.aba."""
    from robodyn import recursive_codegen
    m = urdf.load_urdf("ur5")
    fd = recursive_codegen.compile_recursive(m).forward_dynamics
    pm = pin.buildModelFromUrdf(m.source)
    d = pm.createData()
    q, qd, tau = np.random.default_rng(2).normal(size=(3, 6))
    assert np.allclose(fd(q, qd, tau), pin.aba(pm, d, q, qd, tau), rtol=1e-10, atol=1e-9)
    return [("UR5 generated C forward dynamics (recursive), one state",
             *paired_time(lambda: fd(q, qd, tau), lambda: pin.aba(pm, d, q, qd, tau), budget,
                          rounds=41), "pin.aba")]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--summary", action="store_true", help="only the rows of summary.py")
    parser.add_argument("--full", action="store_true", help="add Talos (32 joints)")
    args = parser.parse_args(argv)
    budget = 0.8 if args.summary else 2.0
    robots = ["solo12", "g1_29dof_rev_1_0"] + (["talos_reduced"] if args.full else [])
    for name in robots:
        for task, ours, ref, what in tree_rows(name, budget):
            print(f"ROW | {task} | {ours * 1e6:.2f} us | {ref * 1e6:.2f} us ({what}) | "
                  f"{ours / ref:.2f}", flush=True)
    t_derive, rows = panda_rows(budget)
    print(f"ROW | Panda symbolic M, C, G (lagrange, real inertias), derivation | "
          f"{t_derive:.2f} s | 5.00 s (the issue's target) | {t_derive / 5:.2f}", flush=True)
    for task, ours, ref, what in rows + ur5_rows(budget / 2):
        print(f"ROW | {task} | {ours * 1e6:.3f} us | {ref * 1e6:.3f} us ({what}) | "
              f"{ours / ref:.2f}", flush=True)


if __name__ == "__main__":
    main()
