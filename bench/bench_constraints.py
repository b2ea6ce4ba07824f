"""Speed of robodyn.constraints: the Udwadia--Kalaba acceleration against a KKT (multiplier)
solve of the same system, and a constrained simulation step against an unconstrained one.

1. q̈ per call at one state, given M, F, A, b (the model's evaluation excluded), for the Part III
   examples and for a 12-joint planar chain (M from CRBA, F from RNEA) with 1 to 6 constraint
   rows: ``udwadia_kalaba`` (eq. 36: Cholesky, SVD pseudo-inverse, input checks) against
   ``lagrange_multipliers`` (one (n+m) x (n+m) KKT solve, input checks) and against a bare
   ``numpy.linalg.solve`` of the same KKT matrix (no checks: the floor of that route).
2. Simulation of the 12-joint chain whose tip must stay on the line y = 0: time per evaluation of
   the dynamics and per integrator step (DOP853, 12 evaluations per step), constrained
   (``simulate_constrained``, Udwadia--Kalaba) against unconstrained (``scipy`` DOP853 on
   ``dynamics.forward_dynamics``, the ABA, with gravity as a float array so that the compiled
   engine runs, as in ``dynamics.simulate``), in the same run; and the whole runs.

The machine's load average is printed first: on a shared machine absolute times inflate, the
ratios less so.

Each time is the best of 3 repeats of a timed loop (of 3 whole runs for the simulations;
``simulate_constrained``'s time includes its set-up and the recorded residuals and forces). Usage:
``python bench/bench_constraints.py [--quick]`` (about a minute; --quick: a few seconds).
"""
from __future__ import annotations

import argparse
import os
import time
import timeit

import numpy as np
import sympy as sp
from scipy.integrate import solve_ivp

from robodyn import constraints as C
from robodyn import dynamics, models

EXAMPLES = {
    "particle pendulum": (models.particle_pendulum, {"m": 2, "l": 1.5, "g": 9.81}, [1.0, -0.5]),
    "RR arm on a line": (models.rr_on_line, {"l1": 1, "l2": 0.8, "m1": 1, "m2": 0.7, "g": 9.81,
                                        "h": 0.5}, [0.3, 0.6]),
    "four-bar": (models.four_bar, {"a": 0.3, "b": 1.0, "c": 0.8, "d": 1.0, "m1": 1, "m2": 2,
                              "m3": 1.5, "g": 9.81}, [0.5, 0.8, -1.5]),
    "knife edge": (models.knife_edge, {"m": 2, "J": 0.3}, [0.1, 0.2, 0.3]),
    "rolling disk": (models.vertical_rolling_disk, {"m": 2, "I_z": 0.3, "I_r": 0.5, "r": 0.4},
                     [0.1, 0.2, 0.3, 0.4]),
}


def best_time(f, budget):
    t1 = timeit.timeit(f, number=1)
    number = max(1, int(budget / 3 / max(t1, 1e-9)))
    return min(timeit.repeat(f, number=number, repeat=3)) / number


def bare_kkt(M, F, A, b):
    n, m = A.shape[1], A.shape[0]
    K = np.block([[M, -A.T], [A, np.zeros((m, m))]])
    return np.linalg.solve(K, np.concatenate([F, b]))[:n]


def row(name, M, F, A, b, budget):
    t_uk = best_time(lambda: C.udwadia_kalaba(M, F, A, b), budget)
    t_kkt = best_time(lambda: C.lagrange_multipliers(M, F, A, b), budget)
    t_bare = best_time(lambda: bare_kkt(M, F, A, b), budget)
    err = np.max(np.abs(C.udwadia_kalaba(M, F, A, b).qdd - bare_kkt(M, F, A, b)))
    print(f"| {name} | {A.shape[1]} | {A.shape[0]} | {t_uk * 1e6:.1f} | {t_kkt * 1e6:.1f} | "
          f"{t_bare * 1e6:.1f} | {t_uk / t_kkt:.2f} | {t_uk / t_bare:.2f} | {err:.1e} |")


def per_call(budget):
    print("q̈ per call (µs); ratios > 1 mean Udwadia–Kalaba is slower\n")
    print("| system | n | m | UK | KKT (lagrange_multipliers) | bare numpy KKT | UK / KKT | "
          "UK / bare | max |Δq̈| |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, (build, values, guess) in EXAMPLES.items():
        system = build()
        num = system.numeric(values)
        cn = system.constraints.numeric(values)
        q, qd = cn.project(np.asarray(guess, float), np.linspace(0.3, -0.4, system.n))
        M = num.mass_matrix(q)
        F = num._F(q, qd, 0.0, np.zeros(system.n))
        row(name, M, F, cn.A(q), cn.b(q, qd), budget)
    chain = models.planar_chain(12)
    rng = np.random.default_rng(0)
    q, qd = rng.uniform(-1, 1, 12), rng.uniform(-1, 1, 12)
    M = dynamics.crba(chain, q)
    F = -dynamics.inverse_dynamics(chain, q, qd, np.zeros(12), gravity=[0, -9.81, 0])
    A_all, b_all = rng.standard_normal((6, 12)), rng.standard_normal(6)
    for m in range(1, 7):
        row("12-joint chain", M, F, A_all[:m], b_all[:m], budget)


def tip_on_line_system(n):
    q = sp.symbols(f"q1:{n + 1}")
    angles = [sum(q[:k + 1]) for k in range(n)]
    tip_y = sum(sp.sin(a) for a in angles)
    cons = C.Constraints(list(q), holonomic=[tip_y])
    return C.ConstrainedSystem(models.planar_chain(n), cons, gravity=[0, -9.81, 0])


def per_step(t_final):
    n = 12
    chain = models.planar_chain(n)
    g = np.array([0, -9.81, 0.0])          # an ndarray: the compiled engine's fast path
    zero = np.zeros(n)
    system = tip_on_line_system(n)
    q0 = np.zeros(n)
    q0[0], q0[1] = 0.3, -0.6                  # a small zig-zag, tip near the line
    qd0 = np.zeros(n)
    def rhs(t, y):
        return np.concatenate([y[n:], dynamics.forward_dynamics(chain, y[:n], y[n:], zero,
                                                                gravity=g)])
    y0 = np.concatenate(system.constraints.numeric().project(q0, qd0))
    t_free = t_con = np.inf
    for _ in range(3):                    # best of 3 whole runs (a shared machine is noisy)
        t0 = time.perf_counter()
        free = solve_ivp(rhs, (0, t_final), y0, method="DOP853", rtol=1e-8, atol=1e-8)
        t_free = min(t_free, time.perf_counter() - t0)
        t0 = time.perf_counter()
        run = C.simulate_constrained(system, y0[:n], y0[n:], t_final, dt=t_final / 20,
                                     rtol=1e-8, atol=1e-8)
        t_con = min(t_con, time.perf_counter() - t0)
    num = system.numeric()
    q, qd = y0[:n], y0[n:]
    e_free = best_time(lambda: rhs(0.0, y0), 0.5)
    e_con = best_time(lambda: num.solve(q, qd, 0.0), 0.5)
    qdd = getattr(num, "_qdd", lambda q, qd, t: num.solve(q, qd, t).qdd)  # older versions
    e_rhs = best_time(lambda: np.concatenate((qd, qdd(q, qd, 0.0))), 0.5)
    steps_free, steps_con = free.nfev / 12, run.nfev / 12
    print(f"\nSimulation of the 12-joint chain with its tip on y = 0 (DOP853, rtol 1e-8, "
          f"{t_final:g} s; largest residual {run.max_residual[0]:.1e}):\n")
    print("| | unconstrained (ABA) | constrained (UK) | ratio |")
    print("|---|---|---|---|")
    print(f"| one evaluation of the dynamics (µs): rhs (qd, qdd) / solve (qdd, F^C) | "
          f"{e_free * 1e6:.1f} | {e_con * 1e6:.1f} | {e_con / e_free:.2f} |")
    print(f"| one evaluation of the right-hand side (qd, qdd) (µs) | {e_free * 1e6:.1f} | "
          f"{e_rhs * 1e6:.1f} | {e_rhs / e_free:.2f} |")
    print(f"| one integrator step, whole run (µs) | {t_free / steps_free * 1e6:.0f} | "
          f"{t_con / steps_con * 1e6:.0f} | {(t_con / steps_con) / (t_free / steps_free):.2f} |")
    print(f"| evaluations in the run | {free.nfev} | {run.nfev} | |")
    print(f"| whole run (s) | {t_free:.3f} | {t_con:.3f} | {t_con / t_free:.2f} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="short timing loops")
    args = ap.parse_args()
    print("load average (1, 5, 15 min): " + ", ".join(f"{x:.1f}" for x in os.getloadavg())
          + f" on {os.cpu_count()} cores\n")
    per_call(0.05 if args.quick else 0.6)
    per_step(0.5 if args.quick else 2.0)


if __name__ == "__main__":
    main()
