"""Speed of the compass gait's step map and of the walking sweeps, against a hand-written
``scipy.integrate.solve_ivp`` loop, measured in the same run.

    PYTHONPATH=lib .venv/bin/python bench/bench_walking.py [--repeat R] [--grid N] [--summary]

``--summary`` prints only the rows ``ROW | task | ours | reference | ratio`` (ratio = ours /
reference; seconds per run, or seconds per cell for the sweeps).

Rows (compass gait, slope 3 degrees, m = 5, m_h = 10, a = b = 0.5, from its period-one gait):

* one step (one stride to the next heel strike): ``stability.compass_gait_step`` (compiled
  Dormand-Prince, tol 1e-10) and ``impacts.return_map`` (simulate_hybrid, DOP853, rtol = atol =
  1e-10), each against a hand-written ``solve_ivp(..., events=heel_strike)`` step (DOP853,
  rtol = atol = 1e-10, the walker's NumericForm and ``np.linalg.solve``, the walker's impact);
* 20 steps: ``stability.walk`` and ``impacts.simulate_hybrid`` against the same hand loop (the
  issue-31 target is simulate_hybrid <= 1.0x the loop); the loop is also timed with a
  hand-optimized right-hand side (2 x 2 Cramer's rule on the flat lambdified functions) so that
  the gain of the simulator's own fast path is visible;
* sweep throughput: the basin of attraction on an N x N grid (40 strides a cell) on 1 and 2
  local worker processes (``robodyn.parallel.map_tasks``), cells per second, and the extrapolated
  time of the 200 x 200 basin.

Every pair is timed alternately, best of R, so that a shared machine's load hits both sides.
The final states of all routes are compared (agreement printed). Speed is measured here only,
never asserted in tests.
"""
from __future__ import annotations

import argparse
import time

import numpy as np
from scipy.integrate import solve_ivp

from bench_impacts import paired          # best times of two functions run alternately
from robodyn import walking
from robodyn.impacts import return_map, simulate_hybrid
from robodyn.walking import CompassGait

TOL = 1e-10


def hand_loop(cg, x0, steps, rhs):
    heel = cg.hybrid_system().surfaces[0]

    def ev(t, y):
        return heel.phi(y[:2])
    ev.terminal, ev.direction = True, -1
    y, t = np.array(x0, dtype=float), 0.0
    for _ in range(steps):
        sol = solve_ivp(rhs, (t, t + 10.0), y, events=ev, method="DOP853", rtol=TOL, atol=TOL)
        t, ye = sol.t_events[0][0], sol.y_events[0][0]
        q, qd, _ = cg.heel_strike(ye[:2], ye[2:])
        y = np.concatenate([q, qd])
    return y


def right_hand_sides(cg):
    num = cg.numeric

    def plain(t, y):
        return np.concatenate([y[2:], np.linalg.solve(num.mass_matrix(y[:2]),
                                                      num.forcing(y[:2], y[2:]))])
    fM, ff = num.flat

    def cramer(t, y):
        a, b, c, d = y.tolist()
        m00, m01, m10, m11 = fM(a, b, t)
        f0, f1 = ff(a, b, c, d, t)
        det = m00 * m11 - m01 * m10
        return np.array((c, d, (m11 * f0 - m01 * f1) / det, (m00 * f1 - m10 * f0) / det))
    return plain, cramer


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--grid", type=int, default=60)
    ap.add_argument("--summary", action="store_true")
    a = ap.parse_args(argv)
    cg = CompassGait()
    z = walking.compass_gait_gait(cg).points[0]
    x0 = cg.section_state(z)
    system = cg.hybrid_system()
    plain, cramer = right_hand_sides(cg)
    walking.walk(cg, z, 1)                            # build/load the kernel first
    rows, notes = [], []

    t_c, t_h1 = paired(lambda: walking.compass_gait_step(cg, z, tol=TOL),
                       lambda: hand_loop(cg, x0, 1, plain), a.repeat)
    rows.append(("compass gait, one step: compiled step map (s)", t_c, t_h1))
    t_r, t_h1b = paired(lambda: return_map(system, x0, rtol=TOL, atol=TOL),
                        lambda: hand_loop(cg, x0, 1, plain), a.repeat)
    rows.append(("compass gait, one step: return_map / simulate_hybrid (s)", t_r, t_h1b))

    N = 20
    t_w, t_h = paired(lambda: walking.walk(cg, z, N, tol=TOL),
                      lambda: hand_loop(cg, x0, N, plain), a.repeat)
    rows.append((f"compass gait, {N} steps: compiled walk (s)", t_w, t_h))
    t_s, t_h2 = paired(lambda: simulate_hybrid(system, x0[:2], x0[2:], 1e3, max_events=N,
                                               method="DOP853", rtol=TOL, atol=TOL),
                       lambda: hand_loop(cg, x0, N, plain), a.repeat)
    rows.append((f"compass gait, {N} steps: simulate_hybrid (s)", t_s, t_h2))
    t_s2, t_hc = paired(lambda: simulate_hybrid(system, x0[:2], x0[2:], 1e3, max_events=N,
                                                method="DOP853", rtol=TOL, atol=TOL),
                        lambda: hand_loop(cg, x0, N, cramer), a.repeat)
    rows.append((f"compass gait, {N} steps: simulate_hybrid vs a Cramer-rule hand loop (s)",
                 t_s2, t_hc))

    tr = simulate_hybrid(system, x0[:2], x0[2:], 1e3, max_events=N, method="DOP853",
                         rtol=TOL, atol=TOL)
    ends = {"simulate_hybrid": np.concatenate([tr.events[-1].q_after,
                                               tr.events[-1].qd_after]),
            "hand loop": hand_loop(cg, x0, N, plain),
            "compiled walk": cg.section_state(walking.walk(cg, z, N, tol=TOL)[0][-1])}
    ref = ends["hand loop"]
    for k, v in ends.items():
        notes.append(f"after {N} steps, {k} - hand loop: {np.max(np.abs(v - ref)):.1e}")

    gait = walking.compass_gait_gait(cg)
    th = np.linspace(-0.40, -0.05, a.grid)
    rt = np.linspace(0.6, 1.8, a.grid)
    times = {}
    for w in (1, 2):
        t0 = time.perf_counter()
        out = walking.basin_of_attraction(cg, th, rt, gait=gait, strides=40, workers=w)
        times[w] = time.perf_counter() - t0
        if w == 1:
            first = out
        else:
            assert all(np.array_equal(p, q) for p, q in zip(first, out))
    cells = a.grid * a.grid
    rows.append((f"basin sweep, {a.grid}x{a.grid} cells, 2 workers vs 1 (s per cell)",
                 times[2] / cells, times[1] / cells))
    notes.append(f"basin: {cells / times[1]:.0f} cells/s on 1 worker, {cells / times[2]:.0f} "
                 f"on 2 (speed-up {times[1] / times[2]:.2f}); a 200 x 200 basin ~ "
                 f"{40000 * times[2] / cells:.0f} s on 2 workers")
    for task, ours, refv in rows:
        print(f"ROW | {task} | {ours:.4g} | {refv:.4g} | {ours / refv:.2f}")
    if not a.summary:
        for n in notes:
            print(n)


if __name__ == "__main__":
    main()
