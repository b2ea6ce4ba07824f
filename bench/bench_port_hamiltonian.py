"""Speed of robodyn's vehicle-manipulator dynamics against Pinocchio, measured in one run.

1. Forward dynamics of the UR5-like arm on a floating base (6 + 6 DoF): accelerations
   (v', q'') from (q, v, qd, w, tau) by

   * robodyn ``StandardForm.accelerations`` (eq. ph-21; the compiled O(n) articulated-body
     algorithm with the base as root, ``_engine.c``), one state per call, and a batch of
     states (a Python loop over the states); the same under ``ROBODYN_ENGINE=numpy``;
   * robodyn ``VMSForm.accelerations`` (eq. ph-47: M once, one Cholesky solve, the momentum
     rates by the compiled co-energy gradient, dM/dt = C + C^T by the compiled Christoffel
     Coriolis matrix), one state per call, against ``aba`` in the same rounds (target <= 10x);
   * Pinocchio's ``aba`` with a ``JointModelFreeFlyer`` root, one state per call from Python.

2. Integrators on the same floating-base UR5-like motion without inputs, 2 s: the
   energy-momentum scheme (``simulate(method="energy-momentum")``) against scipy's RK45 on
   (ph-47), at equal energy error: RK45's tolerance is tightened until its energy error is
   at most the scheme's, and the wall times are compared.

3. A whole 10 s RK45 run of the book's space robot (the UR5-like arm on a 40 kg box, no
   inputs, rtol 1e-9, atol 1e-11, 200 output points): ``port_hamiltonian.simulate`` with
   ``StandardForm`` (energy, momentum and pose reports included) against ``solve_ivp`` on the
   same 30-number state with Pinocchio's ``aba`` (free-flyer root) as the right-hand side.

Each time is the best of several repeats (timeit), the two sides of a comparison measured
alternately so that the machine's load hits both alike. In the tables, ratios > 1 mean
robodyn is faster; in ``--summary`` rows the ratio is ours / reference (time), the issue's
target being <= 1.5.
Usage: ``python bench/bench_port_hamiltonian.py [--quick] [--summary]``.
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
from robodyn import dynamics
from robodyn import port_hamiltonian as ph
from robodyn.port_hamiltonian import StandardForm, VehicleManipulator

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


def best_pair(f, g, budget, rounds=5):
    """Best times of f and g (s per call), measured alternately in ``rounds`` rounds."""
    t1 = max(timeit.timeit(f, number=1), timeit.timeit(g, number=1), 1e-9)
    number = max(1, int(budget / (2 * rounds) / t1))
    tf, tg = [], []
    for _ in range(rounds):
        tf.append(timeit.timeit(f, number=number) / number)
        tg.append(timeit.timeit(g, number=number) / number)
    return min(tf), min(tg)


def pinocchio_rhs(model, n):
    """dx/dt of the StandardForm state (R 9, p 3, v 6, q n, qd n) with Pinocchio's aba."""
    data = model.createData()
    qp, vp, zero = np.zeros(7 + n), np.zeros(6 + n), np.zeros(6 + n)

    def rhs(t, x):
        R = x[:9].reshape(3, 3)
        qp[:3] = x[9:12]
        qp[3:7] = pin.Quaternion(R).coeffs()
        qp[7:] = x[18:18 + n]
        vp[:3], vp[3:6], vp[6:] = x[15:18], x[12:15], x[18 + n:]
        a = pin.aba(model, data, qp, vp, zero)
        out = np.empty_like(x)
        out[:9] = (R @ pin.skew(x[12:15])).ravel()
        out[9:12] = R @ x[15:18]
        out[12:15], out[15:18] = a[3:6], a[:3]
        out[18:18 + n], out[18 + n:] = x[18 + n:], a[6:]
        return out

    return rhs


def simulation_rows(quick, budget):
    """10 s of the book's space robot by RK45: simulate(StandardForm) vs solve_ivp + aba."""
    from scipy.integrate import solve_ivp
    vms = space_robot()
    n = vms.n
    tp = _tests_module("test_port_hamiltonian")
    model = tp.to_pinocchio_free_flyer(vms)
    std = StandardForm(vms)
    x0 = std.initial_state(v=[0.05, -0.1, 0.2, 0.1, 0.0, -0.05], q=[0.3, -0.9, 1.4, -0.5, 0.6, 0.0],
                           qd=[0.5, -0.4, 0.6, 0.8, -0.7, 1.0])
    T = 2.0 if quick else 10.0
    t_eval = np.linspace(0, T, 200)
    rhs = pinocchio_rhs(model, n)
    runs = {}

    def ours():
        runs["ours"] = ph.simulate(std, x0, (0, T), rtol=1e-9, atol=1e-11, n_out=200)

    def reference():
        runs["ref"] = solve_ivp(rhs, (0, T), x0, rtol=1e-9, atol=1e-11, t_eval=t_eval)

    t_ours, t_ref = best_pair(ours, reference, budget * 4, rounds=2 if quick else 3)
    diff = np.abs(runs["ours"].x - runs["ref"].y.T).max()
    return T, t_ours, t_ref, diff, runs["ours"].evaluations, runs["ref"].nfev


def space_robot():
    """The book's space robot (Part VI, ch. 2): the UR5-like arm on a 40 kg free-floating
    base (a box 0.6 x 0.6 x 0.4 m), mounted 0.2 m above the box's centre."""
    m = 40.0
    Ib = rd.spatial_inertia(m, m / 12 * np.array([0.6**2 + 0.4**2, 0.6**2 + 0.4**2, 2 * 0.6**2]))
    return VehicleManipulator.from_chain(rd.models.ur5_like(), Ib, "floating",
                                         mount=rd.homogeneous(np.eye(3), [0, 0, 0.2]))


def main(quick=False, summary=False):
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
    t_std, t_pin = best_pair(lambda: std.accelerations(q, nu, w=w, tau=tau),
                             lambda: pin.aba(model, data, qp, vp, up), budget)
    t_47, t_pin47 = best_pair(lambda: f47.accelerations(q, nu, w=w, tau=tau),
                              lambda: pin.aba(model, data, qp, vp, up), budget)
    err47 = np.abs(f47.accelerations(q, nu, w=w, tau=tau) - a_pin[perm]).max()
    dynamics._recursions.ENGINE = "numpy"
    t_np = best_time(lambda: std.accelerations(q, nu, w=w, tau=tau), budget / 2)
    dynamics._recursions.ENGINE = "auto"
    B = 20 if quick else 200
    Q, NU = rng.normal(size=(B, n)), rng.normal(size=(B, 6 + n))
    QP = [np.concatenate([H[:3, 3], Rotation.from_matrix(H[:3, :3]).as_quat(), x]) for x in Q]
    VP = [np.concatenate([x[3:6], x[:3], x[6:]]) for x in NU]
    zero = np.zeros(12)
    t_std_b, t_pin_b = best_pair(lambda: [std.accelerations(a, b) for a, b in zip(Q, NU)],
                                 lambda: [pin.aba(model, data, a, b, zero) for a, b in zip(QP, VP)],
                                 budget)
    t_std_b, t_pin_b = t_std_b / B, t_pin_b / B
    T, t_sim, t_ref, sim_diff, ev_ours, ev_ref = simulation_rows(quick, budget)
    if summary:
        print("ROW | task | ours | reference | ratio")
        print(f"ROW | floating-base FD, UR5-like on a free base, per call | StandardForm "
              f"{t_std * 1e6:.2f} us | pin.aba free flyer {t_pin * 1e6:.2f} us | "
              f"{t_std / t_pin:.2f}")
        print(f"ROW | (47) VMSForm.accelerations, floating base, per call (target 10) | "
              f"{t_47 * 1e6:.2f} us | pin.aba free flyer {t_pin47 * 1e6:.2f} us | "
              f"{t_47 / t_pin47:.2f}")
        print(f"ROW | {T:g} s of the book's space robot, RK45 | simulate {t_sim:.3f} s | "
              f"solve_ivp + pin.aba {t_ref:.3f} s | {t_sim / t_ref:.2f}")
        return
    print(f"# Floating-base UR5-like forward dynamics (6 + 6 DoF), max |difference| to Pinocchio "
          f"{err:.1e} (StandardForm), {err47:.1e} (VMSForm, ph-47)")
    print("| method | time per state (us) | Pinocchio aba / this |")
    print("| --- | ---: | ---: |")
    for name, t in [("Pinocchio aba (free flyer), one call", t_pin),
                    ("robodyn StandardForm (ph-21, compiled), one call", t_std),
                    ("robodyn StandardForm (ph-21, ROBODYN_ENGINE=numpy), one call", t_np),
                    ("robodyn VMSForm (ph-47), one call", t_47),
                    (f"Pinocchio aba, batch of {B} (loop)", t_pin_b),
                    (f"robodyn StandardForm, batch of {B} (loop)", t_std_b)]:
        ref = t_pin_b if "batch" in name else t_pin
        print(f"| {name} | {t * 1e6:.1f} | {ref / t:.3f} |")
    print(f"\n# {T:g} s of the book's space robot, RK45 (rtol 1e-9), max |difference| of the "
          f"states {sim_diff:.1e}")
    print("| run | wall time (s) | right-hand sides | solve_ivp + aba / this |")
    print("| --- | ---: | ---: | ---: |")
    print(f"| solve_ivp + Pinocchio aba | {t_ref:.3f} | {ev_ref} | 1.000 |")
    print(f"| robodyn simulate(StandardForm), reports included | {t_sim:.3f} | {ev_ours} | "
          f"{t_ref / t_sim:.3f} |")

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
    parser.add_argument("--summary", action="store_true",
                        help="print only the rows 'ROW | task | ours | reference | ratio'")
    args = parser.parse_args()
    main(args.quick, args.summary)
