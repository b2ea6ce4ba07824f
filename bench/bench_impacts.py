"""Speed of robodyn's hybrid simulator on the compass-gait walker, against a plain
``scipy.integrate.solve_ivp`` loop with events on the same equations, measured in the same run.

    .venv/bin/python bench/bench_impacts.py [--steps N] [--repeat R] [--summary]

``--summary`` prints one line per task, ``ROW | task | ours | reference | ratio`` (seconds per
run, ratio = ours / reference), and nothing else.

Three timings of N walking steps from the period-one gait (slope 3 degrees, m = 5, m_h = 10,
a = b = 0.5), all with DOP853 at rtol = atol = 1e-10, best of R runs:

* ``simulate_hybrid``: robodyn's simulator (event location refined to |phi| <= 1e-10, impact map,
  leg exchange, event log, Zeno guard);
* ``plain solve_ivp``: a bare loop of ``solve_ivp(..., events=heel_strike)`` and the same impact,
  the same right-hand side (M^-1 f of the same NumericForm), no refinement and no log;
* ``no events``: the same segments integrated from each start to its (known) end time without
  any event function: the difference to ``simulate_hybrid`` is the cost of locating events,
  reported as a share of the time per step.

Prints steps per second of each and the ratio simulate_hybrid / plain (1 = as fast). A second
task, a ball (e = 0.9) dropped from 1 m for 20 impacts, compares the same two routes on a system
whose surface function is cheap (the check for grazing crossings is then the largest share).
Neither run grazes a surface: the plain loop would miss a grazing crossing, the simulator does
not (tests/test_contact.py). Speed is measured here only, never asserted in tests.
"""
from __future__ import annotations

import argparse
import time

import numpy as np
from scipy.integrate import solve_ivp

from robodyn import walking
from robodyn.impacts import simulate_hybrid

OPTS = dict(method="DOP853", rtol=1e-10, atol=1e-10)


def best(fn, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def paired(fa, fb, repeat):
    """Best times of two functions run alternately (a shared machine's load hits both)."""
    ta, tb = [], []
    for _ in range(repeat):
        for f, out in ((fa, ta), (fb, tb)):
            t0 = time.perf_counter()
            f()
            out.append(time.perf_counter() - t0)
    return min(ta), min(tb)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--summary", action="store_true",
                    help="print only the rows 'ROW | task | ours | reference | ratio'")
    args = ap.parse_args(argv)
    N = args.steps
    cg = walking.CompassGait()
    system = cg.hybrid_system()
    fp = cg.fixed_point()
    x0 = cg.section_state(fp.x)
    num = cg.numeric
    heel = system.surfaces[0]

    def rhs(t, y):
        return np.concatenate([y[2:], np.linalg.solve(num.mass_matrix(y[:2]),
                                                      num.forcing(y[:2], y[2:]))])

    def hybrid():
        return simulate_hybrid(system, x0[:2], x0[2:], 1e3, max_events=N, **OPTS)

    def plain():
        def ev(t, y):
            return heel.phi(y[:2])
        ev.terminal, ev.direction = True, -1
        y, t, ends = x0.copy(), 0.0, []
        for _ in range(N):
            sol = solve_ivp(rhs, (t, t + 10.0), y, events=ev, **OPTS)
            t, ye = sol.t_events[0][0], sol.y_events[0][0]
            q, qd, _ = cg.heel_strike(ye[:2], ye[2:])
            y = np.concatenate([q, qd])
            ends.append(t)
        return y, ends

    t_h, t_p = paired(hybrid, plain, args.repeat)
    tr, (y_plain, ends) = hybrid(), plain()
    starts = [0.0] + [ev.time for ev in tr.events[:-1]]
    states = [x0] + [np.concatenate([ev.q_after, ev.qd_after]) for ev in tr.events[:-1]]

    def no_events():
        for t0, t1, y in zip(starts, [ev.time for ev in tr.events], states):
            solve_ivp(rhs, (t0, t1), y, **OPTS)

    t_n, _ = best(no_events, args.repeat)
    t_bh, t_bp = ball_rows(args.repeat)
    if args.summary:
        print(f"ROW | compass gait, {N} steps (s) | {t_h:.4f} | {t_p:.4f} | {t_h / t_p:.2f}")
        print(f"ROW | bouncing ball, 20 impacts (s) | {t_bh:.4f} | {t_bp:.4f} | "
              f"{t_bh / t_bp:.2f}")
        return
    last = tr.events[-1]
    agree = np.max(np.abs(np.concatenate([last.q_after, last.qd_after]) - y_plain))
    print(f"compass gait, {N} steps from the period-one gait, DOP853 rtol = atol = 1e-10, "
          f"best of {args.repeat}")
    print(f"{'':22s}{'s per run':>12s}{'steps/s':>10s}")
    for name, t in (("simulate_hybrid", t_h), ("plain solve_ivp", t_p), ("no events", t_n)):
        print(f"{name:22s}{t:12.4f}{N / t:10.1f}")
    print(f"ratio simulate_hybrid / plain solve_ivp: {t_h / t_p:.2f} (time per step)")
    print(f"event location share of a step: {(t_h - t_n) / t_h:.0%} "
          f"({(t_h - t_n) / N * 1e3:.2f} ms of {t_h / N * 1e3:.2f} ms)")
    print(f"final states agree to {agree:.1e}; heel-strike times agree to "
          f"{np.max(np.abs(np.array(ends) - tr.event_times)):.1e} s")
    print(f"bouncing ball, 20 impacts: simulate_hybrid {t_bh:.4f} s, plain solve_ivp "
          f"{t_bp:.4f} s, ratio {t_bh / t_bp:.2f}")


def ball_rows(repeat, K=20):
    """Seconds per run of simulate_hybrid and of a plain solve_ivp loop, K ball impacts."""
    ball = walking.bouncing_ball(0.9)
    ground = ball.surfaces[0]
    num = ball.form

    def rhs(t, y):
        return np.concatenate([y[2:], np.linalg.solve(num.mass_matrix(y[:2]),
                                                      num.forcing(y[:2], y[2:]))])

    def ev(t, y):
        return ground.phi(y[:2])
    ev.terminal, ev.direction = True, -1

    def plain():
        y, t = np.array([0.0, 1.0, 0.0, 0.0]), 0.0
        for _ in range(K):
            sol = solve_ivp(rhs, (t, t + 10.0), y, events=ev, **OPTS)
            t, y = sol.t_events[0][0], sol.y_events[0][0].copy()
            y[3] = -0.9 * y[3]
        return y

    def ours():
        return simulate_hybrid(ball, [0.0, 1.0], [0.0, 0.0], 1e3, max_events=K, **OPTS)

    return paired(ours, plain, repeat)


if __name__ == "__main__":
    main()
