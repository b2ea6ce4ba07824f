"""Precompute the sweeps of the walking-stability chapter (Part IV) into
book/_data/walking_stability.npz.

    PYTHONPATH=lib .venv/bin/python scripts/walking_sweeps.py [--workers 2] [--scheduler ADDR]
        [--cache DIR] [--quick]

What it computes (each sweep on robodyn.parallel.map_tasks through robodyn.walking.sweep;
with --cache a killed run resumes where it stopped):

* the compass gait's period-one gait from 3 degrees upwards by continuation (Newton), its
  Floquet multipliers by the saltation route, and the slope where the leading one crosses -1
  (bisection);
* the bifurcation diagram: for each slope, 128 stance angles after 600 strides started next to
  that slope's period-one gait;
* the period-two and period-four gaits at chosen slopes, with their multipliers;
* the onsets of period 2, 4, 8 and 16 by continuation and Newton: each period-k gait (a fixed
  point of the k-fold map) followed in the slope until its leading multiplier passes -1, the
  crossing bisected, the period-2k gait started there along the flip eigenvector (never read off
  the bifurcation diagram's grid, whose spacing and "distinct strides" threshold bias them);
* the basin of attraction of the 3-degree gait on a 200 x 200 grid of the plane
  (theta_s, thetad_s) of the section (thetad_w at the gait's value), 40 strides a cell;
* the rimless wheel's basin, in closed form on a 200 x 200 grid and by simulate_hybrid on a
  coarser one.

The file records every sweep's size and wall time, which the chapter quotes.
"""
from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
from scipy.optimize import brentq

from robodyn import walking
from robodyn.walking import CompassGait, RimlessWheel

OUT = Path(__file__).resolve().parents[1] / "book" / "_data" / "walking_stability.npz"
Z3 = (-0.2186688, 1.0923836, 0.3773740)        # the 3-degree gait (Goswami et al.)
BASIN = dict(theta=(-0.40, -0.05), rate=(0.6, 1.8))
WHEEL = dict(spokes=10, slope=0.2)


def continuation(slopes_deg):
    """Period-one gaits and multipliers along the slopes (each Newton starts at the last)."""
    z, pts, mult = np.array(Z3), [], []
    for d in slopes_deg:
        g = walking.compass_gait_gait(CompassGait(slope=np.deg2rad(d)), z)
        z = g.points[0]
        pts.append(z)
        mult.append(g.multipliers)
    return np.array(pts), np.array(mult, dtype=complex)


def leading_real(deg, z):
    g = walking.compass_gait_gait(CompassGait(slope=np.deg2rad(deg)), z)
    m = g.multipliers[np.argmin(g.multipliers.real)]
    return float(m.real) + 1.0


def _lead(deg, z, k):
    g = walking.compass_gait_gait(CompassGait(slope=np.deg2rad(deg)), z, period=k)
    return g, float(g.multipliers.real.min())


def _next_gait(on, g, k, dslope):
    """The period-2k gait a little past the onset ``on`` of the period-k gait ``g``."""
    w, V = np.linalg.eig(g.jacobian)
    v = np.real(V[:, np.argmin(w.real)])
    past = on + dslope
    base = _lead(past, g.points[0], k)[0].points[0]
    for eps in (1e-3, 3e-3, 1e-2, 3e-2):
        try:
            g2 = walking.compass_gait_gait(CompassGait(slope=np.deg2rad(past)), base + eps * v,
                                      period=2 * k)
        except ValueError:
            continue
        if len(np.unique(np.round(g2.points[:, 0], 7))) == 2 * k:
            return past, g2
    raise RuntimeError(f"no period-{2 * k} gait found {dslope:g} deg past {on:.6f} deg")


def doubling_onsets(z1, slope=3.0, periods=(1, 2, 4, 8), step=0.05):
    """The slopes (deg) where the period-k gaits (k in ``periods``) lose stability by a period
    doubling, and each period-k gait's section points there: continuation in the slope with
    Newton on the k-fold map at each slope, the crossing of -1 by bisection (brentq)."""
    onsets, points, g = [], [], None
    z, deg = np.asarray(z1, dtype=float), slope
    for k in periods:
        g, m = _lead(deg, z, k)
        d = deg
        while True:
            g2, m2 = _lead(d + step, g.points[0], k)
            if m2 < -1.0:
                break
            d, g = d + step, g2
        zk = g.points[0]
        on = brentq(lambda s: _lead(s, zk, k)[1] + 1.0, d, d + step, xtol=1e-10)
        g = _lead(on, zk, k)[0]
        onsets.append(on)
        points.append(g.points)
        deg, g2k = _next_gait(on, g, k, step / 5)
        z, step = g2k.points[0], step / 4.5
    return np.array(onsets), points


def _onsets_data(z1):
    onsets, points = doubling_onsets(z1)
    data = {"pd_onsets": onsets}
    for k, pts in zip((1, 2, 4, 8), points):
        data[f"pd_points_{k}"] = pts
    return data


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--scheduler", default=None)
    ap.add_argument("--cache", default=None)
    ap.add_argument("--quick", action="store_true", help="small grids (a smoke test)")
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--only-onsets", action="store_true",
                    help="recompute only the onsets of the cascade into the existing file")
    a = ap.parse_args(argv)
    if a.only_onsets:
        old = dict(np.load(a.out))
        t = time.perf_counter()
        old.update(_onsets_data(old["cont_points"][0]))
        np.savez_compressed(a.out, **old)
        print(f"onsets {np.round(old['pd_onsets'], 6)} in {time.perf_counter() - t:.0f} s")
        return
    computed = {}

    def counter(name):
        computed[name] = 0

        def seen(key, result):
            computed[name] += 1
        return seen
    opts = dict(workers=a.workers, scheduler=a.scheduler, cache_dir=a.cache, progress=True)
    n_bif, n_basin, n_wheel = (60, 40, 8) if a.quick else (521, 200, 25)
    data, cost = {}, {}

    t = time.perf_counter()
    cont = np.round(np.arange(3.0, 5.5001, 0.025), 4)
    pts, mult = continuation(cont)
    i = int(np.argmax(mult.real.min(axis=1) < -1))
    pd = brentq(lambda d: leading_real(d, pts[i - 1]), cont[i - 1], cont[i], xtol=1e-9)
    data.update(cont_slopes=cont, cont_points=pts, cont_multipliers=mult, pd_slope=pd)
    cost["continuation"] = (len(cont), time.perf_counter() - t)

    t = time.perf_counter()
    slopes = np.linspace(3.0, 5.6, n_bif)
    starts = np.array([pts[min(np.searchsorted(cont, d), len(cont) - 1)] for d in slopes])
    starts = starts + np.array([1e-4, 0.0, 0.0])
    th, status = walking.bifurcation_diagram(CompassGait(), np.deg2rad(slopes), z0=starts,
                                        transient=600, keep=128, description="bifurcation",
                                        on_result=counter("bifurcation"), **opts)
    data.update(bif_slopes=slopes, bif_theta=th, bif_status=status)
    cost["bifurcation"] = (len(slopes) * 728, time.perf_counter() - t)

    t = time.perf_counter()
    for k, deg in ((2, 4.6), (4, 4.96)):
        cg = CompassGait(slope=np.deg2rad(deg))
        z, s, _ = walking.walk(cg, pts[np.searchsorted(cont, deg)] + [1e-4, 0, 0], 3000)
        g = walking.compass_gait_gait(cg, z[-1], period=k)
        distinct = len(np.unique(np.round(g.points[:, 0], 6)))
        assert s == 0 and distinct == k and g.stable, (deg, k, distinct)
        data[f"p{k}_slope"], data[f"p{k}_points"] = deg, g.points
        data[f"p{k}_multipliers"] = g.multipliers
    cost["period-k gaits"] = (2, time.perf_counter() - t)

    t = time.perf_counter()
    data.update(_onsets_data(pts[0]))
    cost["cascade onsets"] = (4, time.perf_counter() - t)

    t = time.perf_counter()
    cg = CompassGait()
    gait = walking.compass_gait_gait(cg)
    thb = np.linspace(*BASIN["theta"], n_basin)
    rtb = np.linspace(*BASIN["rate"], n_basin)
    alive, hit = walking.basin_of_attraction(cg, thb, rtb, gait=gait, strides=40,
                                        description="basin", on_result=counter("basin"),
                                        **opts)
    data.update(basin_theta=thb, basin_rate=rtb, basin_alive=alive.astype(np.int8),
                basin_hit=hit, basin_gait=gait.points[0], basin_strides=40)
    cost["basin"] = (alive.size, time.perf_counter() - t)

    t = time.perf_counter()
    w = RimlessWheel(**WHEEL)
    thw = np.linspace(w.slope - w.alpha, w.slope + w.alpha, 200)
    rtw = np.linspace(-2.0, 2.5, 200)
    data.update(wheel_theta=thw, wheel_rate=rtw,
                wheel_closed=walking.rimless_wheel_basin(w, thw, rtw))
    cost["wheel closed form"] = (thw.size * rtw.size, time.perf_counter() - t)
    t = time.perf_counter()
    ths = np.linspace(w.slope - w.alpha, w.slope + w.alpha, n_wheel)
    rts = np.linspace(-2.0, 2.5, n_wheel)
    data.update(wheel_sim_theta=ths, wheel_sim_rate=rts,
                wheel_sim=walking.rimless_wheel_basin(w, ths, rts, method="simulation",
                                                 description="rimless wheel",
                                                 on_result=counter("wheel simulation"),
                                                 **opts))
    cost["wheel simulation"] = (ths.size * rts.size, time.perf_counter() - t)

    previous = {}
    if Path(a.out).exists():                  # sweeps served from the cache keep their cost
        old = np.load(a.out)
        previous = dict(zip(old["cost_names"], zip(old["cost_cells"], old["cost_seconds"])))
    tasks = {"bifurcation": n_bif, "basin": n_basin, "wheel simulation": n_wheel}
    for name, (c, s) in list(cost.items()):     # a partly cached sweep: the last full cost
        if computed.get(name, tasks.get(name)) < tasks.get(name, 0) and name in previous \
                and previous[name][0] == c:
            cost[name] = previous[name]
    data["cost_names"] = np.array(list(cost))
    data["cost_cells"] = np.array([c for c, _ in cost.values()])
    data["cost_seconds"] = np.array([s for _, s in cost.values()])
    data["workers"] = a.workers if a.scheduler is None else -1
    data["quick"] = a.quick
    np.savez_compressed(a.out, **data)
    for name, (c, s) in cost.items():
        print(f"{name:20s} {c:8d} cells {s:8.1f} s")
    print(f"period doubling at {pd:.6f} deg; saved {a.out}")


if __name__ == "__main__":
    main()
