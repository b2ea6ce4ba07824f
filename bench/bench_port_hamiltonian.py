"""Speed of robodyn's vehicle-manipulator dynamics against Pinocchio, measured in one run.

1. Forward dynamics of the UR5-like arm on a floating base (6 + 6 DoF): accelerations
   (v', q'') from (q, v, qd, w, tau) by

   * robodyn ``StandardForm.accelerations`` (eq. ph-21: composite inertias + Newton-Euler
     velocity terms + a dense solve, numpy), one state per call, and a batch of states
     (a Python loop over the states: there is no vectorized floating-base path);
   * robodyn ``VMSForm.accelerations`` (eq. ph-47, with the exact dM/dq), one state per call;
   * Pinocchio's ``aba`` with a ``JointModelFreeFlyer`` root, one state per call from Python.

2. Integrators on the same floating-base UR5-like motion without inputs, 2 s: the
   energy-momentum scheme (``simulate(method="energy-momentum")``) against scipy's RK45 on
   (ph-47), at equal energy error: RK45's tolerance is tightened until its energy error is
   at most the scheme's, and the wall times are compared.

Each time is the best of several repeats (timeit). Ratios > 1 mean robodyn is faster.
Usage: ``python bench/bench_port_hamiltonian.py [--quick]``.
"""
from __future__ import annotations

import argparse
import importlib.util
import pathlib
import sys
import timeit

import numpy as np
import pinocchio as pin
from scipy.spatial.transform import Rotation

import robodyn as rd
from robodyn import port_hamiltonian as ph
from robodyn.vehicle import StandardForm, VehicleManipulator

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _tests_module(name):
    sys.path.insert(0, str(ROOT / "tests"))
    spec = importlib.util.spec_from_file_location(name, ROOT / "tests" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def best_time(f, budget):
    t1 = timeit.timeit(f, number=1)
    number = max(1, int(budget / 3 / max(t1, 1e-9)))
    return min(timeit.repeat(f, number=number, repeat=3)) / number


def space_robot():
    """The UR5-like arm on a 40 kg free-floating base (a box 0.6 x 0.6 x 0.4 m)."""
    m = 40.0
    Ib = rd.spatial_inertia(m, m / 12 * np.array([0.6**2 + 0.4**2, 0.6**2 + 0.4**2, 2 * 0.6**2]))
    return VehicleManipulator.from_chain(rd.models.ur5_like(), Ib, "floating",
                                         mount=rd.homogeneous(np.eye(3), [0, 0, 0.2]))


def main(quick=False):
    budget = 0.3 if quick else 1.5
    vms = space_robot()
    tp = _tests_module("test_port_hamiltonian")
    model = tp.to_pinocchio_free_flyer(vms)
    data = model.createData()
    rng = np.random.default_rng(0)
    n = vms.n
    H = rd.exp_se3(rng.normal(size=6))
    q, v, qd, w, tau = (rng.normal(size=k) for k in (n, 6, n, 6, n))
    qp = np.concatenate([H[:3, 3], Rotation.from_matrix(H[:3, :3]).as_quat(), q])
    vp = np.concatenate([v[3:], v[:3], qd])
    up = np.concatenate([w[3:], w[:3], tau])
    std, f47 = StandardForm(vms), ph.VMSForm(vms)
    nu = np.r_[v, qd]
    a_pin = pin.aba(model, data, qp, vp, up)
    a_ours = std.accelerations(q, nu, w=w, tau=tau)
    perm = np.r_[3, 4, 5, 0, 1, 2, 6:6 + n]
    err = np.abs(a_ours - a_pin[perm]).max()
    t_pin = best_time(lambda: pin.aba(model, data, qp, vp, up), budget)
    t_std = best_time(lambda: std.accelerations(q, nu, w=w, tau=tau), budget)
    t_47 = best_time(lambda: f47.accelerations(q, nu, w=w, tau=tau), budget)
    B = 20 if quick else 200
    Q, NU = rng.normal(size=(B, n)), rng.normal(size=(B, 6 + n))
    QP = [np.concatenate([H[:3, 3], Rotation.from_matrix(H[:3, :3]).as_quat(), x]) for x in Q]
    VP = [np.concatenate([x[3:6], x[:3], x[6:]]) for x in NU]
    t_std_b = best_time(lambda: [std.accelerations(a, b) for a, b in zip(Q, NU)], budget) / B
    t_pin_b = best_time(lambda: [pin.aba(model, data, a, b, np.zeros(12)) for a, b in zip(QP, VP)],
                        budget) / B
    print(f"# Floating-base UR5-like forward dynamics (6 + 6 DoF), max |difference| to Pinocchio "
          f"{err:.1e}")
    print("| method | time per state (us) | Pinocchio aba / this |")
    print("| --- | ---: | ---: |")
    for name, t in [("Pinocchio aba (free flyer), one call", t_pin),
                    ("robodyn StandardForm (ph-21), one call", t_std),
                    ("robodyn VMSForm (ph-47), one call", t_47),
                    (f"Pinocchio aba, batch of {B} (loop)", t_pin_b),
                    (f"robodyn StandardForm, batch of {B} (loop)", t_std_b)]:
        ref = t_pin_b if "batch" in name else t_pin
        print(f"| {name} | {t * 1e6:.1f} | {ref / t:.3f} |")

    # integrators at equal energy error
    T = 0.5 if quick else 2.0
    x0 = f47.state(np.eye(4), rng.normal(size=6) * 0.2, rng.normal(size=n) * 0.5,
                   rng.normal(size=n) * 0.5)
    dt = 0.05
    em = ph.simulate(f47, x0, (0, T), method="energy-momentum", dt=dt)
    print(f"\n# Integrators, floating UR5-like, no inputs, {T} s")
    print("| integrator | wall time (s) | energy error (J) | momentum error | pose error |")
    print("| --- | ---: | ---: | ---: | ---: |")
    print(f"| energy-momentum, h = {dt} | {em.wall_time:.2f} | {em.energy_error:.1e} | "
          f"{em.momentum_error:.1e} | {em.pose_error.max():.1e} |")
    rows = []
    for rtol in ([1e-6, 1e-9] if quick else [1e-6, 1e-9, 1e-12, 1e-13]):
        rk = ph.simulate(f47, x0, (0, T), rtol=rtol, atol=rtol * 1e-2, n_out=5)
        rows.append(rk)
        print(f"| RK45, rtol = {rtol:g} | {rk.wall_time:.2f} | {rk.energy_error:.1e} | "
              f"{rk.momentum_error:.1e} | {rk.pose_error.max():.1e} |")
    equal = [r for r in rows if r.energy_error <= max(em.energy_error, 1e-13) * 10]
    if equal:
        r = equal[0]
        print(f"\nAt equal energy error (within 10x): RK45 takes {r.wall_time:.2f} s, the "
              f"energy-momentum scheme {em.wall_time:.2f} s: ratio {r.wall_time / em.wall_time:.2f}")
    else:
        best = min(rows, key=lambda r: r.energy_error)
        print(f"\nRK45 never reached the scheme's energy error {em.energy_error:.1e} J (best "
              f"{best.energy_error:.1e} J in {best.wall_time:.2f} s, "
              f"{best.wall_time / em.wall_time:.2f} x the scheme's time)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    main(parser.parse_args().quick)
