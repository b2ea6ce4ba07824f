"""Speed of robodyn's hybrid simulator on the compass-gait walker, against a plain
``scipy.integrate.solve_ivp`` loop with events on the same equations, measured in the same run.

    .venv/bin/python bench/bench_impacts.py [--steps N] [--repeat R]

Three timings of N walking steps from the period-one gait (slope 3 degrees, m = 5, m_h = 10,
a = b = 0.5), all with DOP853 at rtol = atol = 1e-10, best of R runs:

* ``simulate_hybrid``: robodyn's simulator (event location refined to |phi| <= 1e-10, impact map,
  leg exchange, event log, Zeno guard);
* ``plain solve_ivp``: a bare loop of ``solve_ivp(..., events=heel_strike)`` and the same impact,
  the same right-hand side (M^-1 f of the same NumericForm), no refinement and no log;
* ``no events``: the same segments integrated from each start to its (known) end time without
  any event function: the difference to ``simulate_hybrid`` is the cost of locating events,
  reported as a share of the time per step.

Prints steps per second of each and the ratio simulate_hybrid / plain (1 = as fast). Speed is
measured here only, never asserted in tests.
"""
from __future__ import annotations

import argparse
import time

import numpy as np
from scipy.integrate import solve_ivp

from robodyn import walkers
from robodyn.impacts import simulate_hybrid

OPTS = dict(method="DOP853", rtol=1e-10, atol=1e-10)


def best(fn, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    N = args.steps
    cg = walkers.CompassGait()
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

    t_h, tr = best(hybrid, args.repeat)
    t_p, (y_plain, ends) = best(plain, args.repeat)
    starts = [0.0] + [ev.time for ev in tr.events[:-1]]
    states = [x0] + [np.concatenate([ev.q_after, ev.qd_after]) for ev in tr.events[:-1]]

    def no_events():
        for t0, t1, y in zip(starts, [ev.time for ev in tr.events], states):
            solve_ivp(rhs, (t0, t1), y, **OPTS)

    t_n, _ = best(no_events, args.repeat)
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


if __name__ == "__main__":
    main()
