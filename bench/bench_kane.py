"""Benchmark of robodyn.kane: time to derive Kane's equations (mass matrix and forcing) of the RR,
RP and n-link planar chains (n = 2..12) and of a 6-DoF spatial arm, with numeric and with symbolic
lengths and masses, against sympy.physics.mechanics.KanesMethod in the same run. Every time is the
best of 3 runs, each in a fresh child process forked after a common warm-up (bench/_common.py),
with a timeout (reported as "> T s"). Ours is the call of `kane.equations_of_motion` on a
SerialChain built beforehand (the description of the arm, as data); KanesMethod's includes
building its frames, points and bodies, where sympy.physics.mechanics computes the velocities. That the two derivations agree is
shown by tests/test_kane.py (RR, RP, random chains), not here.

    .venv/bin/python bench/bench_kane.py [--quick] [--timeout 60]
    .venv/bin/python bench/bench_kane.py --summary   # the issue table's rows (bench/summary.py)

--summary times Kane's equations of the symbolic spatial chains of 8 and 12 joints (the nested
form) against the library's own Lagrange equations of the same chain, in the same run, and
prints rows ``ROW | task | ours | reference | ratio`` (ratio = ours / reference).
"""
import argparse

import numpy as np
import sympy as sp
from sympy.physics import mechanics as me

import robodyn as rd
from robodyn import kane, models

from _common import best_time


def mechanics_chain(kind, n, symbolic):
    """KanesMethod for a planar chain of rods in the xy plane (gravity -y): 'R' revolute joints,
    'P' a prismatic joint along the previous link (as robodyn.models.planar_rp); or the
    spatial 3R/6R arm ('spatial', links along x, axes z, y, y, x, y, x)."""
    if kind == "spatial" and n > 6:
        raise ValueError("mechanics_chain: the spatial arm has at most 6 joints")
    q = me.dynamicsymbols(f"q1:{n + 1}")
    u = me.dynamicsymbols(f"u1:{n + 1}")
    ls = sp.symbols(f"l1:{n + 1}") if symbolic else [1] * n
    ms = sp.symbols(f"m1:{n + 1}") if symbolic else [1] * n
    g = sp.Symbol("g") if symbolic else sp.Float(9.81)
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    frame, joint, bodies, loads = N, O, [], []
    axes = ["z", "y", "y", "x", "y", "x"]
    for i in range(n):
        if kind == "spatial":
            F = frame.orientnew(f"F{i}", "Axis", [q[i], getattr(frame, axes[i])])
            F.set_ang_vel(frame, u[i] * getattr(frame, axes[i]))
            c = joint.locatenew(f"C{i}", ls[i] / 2 * F.x)
            nxt = joint.locatenew(f"J{i}", ls[i] * F.x)
            c.v2pt_theory(joint, N, F)
            nxt.v2pt_theory(joint, N, F)
        elif kind[i] == "R":
            F = frame.orientnew(f"F{i}", "Axis", [q[i], frame.z])
            F.set_ang_vel(frame, u[i] * frame.z)
            c = joint.locatenew(f"C{i}", ls[i] / 2 * F.x)
            nxt = joint.locatenew(f"J{i}", ls[i] * F.x)
            c.v2pt_theory(joint, N, F)
            nxt.v2pt_theory(joint, N, F)
        else:                                        # prismatic along the previous link
            F = frame.orientnew(f"F{i}", "Axis", [0, frame.z])
            F.set_ang_vel(frame, 0)
            c = O.locatenew(f"C{i}", (q[i] + ls[i] / 2) * frame.x)
            c.set_vel(N, c.pos_from(O).dt(N).subs({qq.diff(): uu for qq, uu in zip(q, u)}))
            nxt = c
        bodies.append(me.RigidBody(f"B{i}", c, F, ms[i],
                                   (me.inertia(F, 0, ms[i] * ls[i] ** 2 / 12,
                                               ms[i] * ls[i] ** 2 / 12), c)))
        loads.append((c, -ms[i] * g * (N.z if kind == "spatial" else N.y)))
        frame, joint = F, nxt
    km = me.KanesMethod(N, q_ind=q, u_ind=u, kd_eqs=[qi.diff() - ui for qi, ui in zip(q, u)])
    km.kanes_equations(bodies, loads)
    return km.mass_matrix, km.forcing


def robodyn_chain(kind, n, symbolic):
    """The same chain as a SerialChain (numbers or symbols)."""
    ls = sp.symbols(f"l1:{n + 1}") if symbolic else [1.0] * n
    ms = sp.symbols(f"m1:{n + 1}") if symbolic else [1.0] * n
    if kind == "RP":
        return models.planar_rp(ls[0], ls[1], ms[0], ms[1]), (0, -9.81, 0)
    z = sp.Integer(0) if symbolic else 0.0
    one = sp.Integer(1) if symbolic else 1.0
    if kind == "spatial":
        axes = {"z": [0, 0, 1], "y": [0, 1, 0], "x": [1, 0, 0]}
        names = ["z", "y", "y", "x", "y", "x"]
        gravity = (0, 0, -9.81)
    else:
        names = ["z"] * n
        gravity = (0, -9.81, 0)
    S, homes, inertias, x = [], [], [], z
    for i in range(n):
        S.append(rd.revolute_screw([one * a for a in axes[names[i % 6]]] if kind == "spatial"
                                   else [z, z, one], [x, z, z]))
        homes.append(rd.homogeneous(sp.eye(3) if symbolic else np.eye(3), [x + ls[i] / 2, z, z]))
        inertias.append(models.rod_inertia(ms[i], ls[i]))
        x = x + ls[i]
    cols = (np.array(sp.Matrix.hstack(*[sp.Matrix(s) for s in S]).tolist(), dtype=object)
            if symbolic else np.column_stack(S))
    home = rd.homogeneous(sp.eye(3) if symbolic else np.eye(3), [x, z, z])
    return rd.SerialChain.from_screws(cols, home, homes, inertias, name=f"{kind} {n}"), gravity


def reference_run(kind, n, symbolic):
    mechanics_chain(kind, n, symbolic)


def ours_run(chain_and_gravity):
    chain, g = chain_and_gravity                        # a new chain: nothing cached on it
    eom = kane.equations_of_motion(chain, gravity=g)
    return eom.M, eom.f


def lagrange_run(chain_and_gravity):
    chain, g = chain_and_gravity
    eom = rd.lagrange.equations_of_motion(chain, gravity=g)
    return eom.M, eom.forcing


def summary(timeout=60.0):
    """The issue table's rows: Kane's symbolic spatial 8- and 12-joint chains (links along x,
    axes z, y, y, x, y, x repeated; the nested form) against our Lagrange, same run."""
    for symbolic in (False, True):                       # warm-up: imports and first calls
        ours_run(robodyn_chain("R", 1, symbolic)), lagrange_run(robodyn_chain("R", 1, symbolic))
    for n in (8, 12):
        ours = best_time(ours_run, ("spatial", n, True), timeout, setup=robodyn_chain)
        ref = best_time(lagrange_run, ("spatial", n, True), timeout, setup=robodyn_chain)
        task = f"kane.equations_of_motion, symbolic spatial {n} joints (target <= 2x Lagrange" \
            + (", < 5 s)" if n == 12 else ")")
        ot = f"{ours:.2f} s" if ours else f"> {timeout:.0f} s"
        rt = f"lagrange.equations_of_motion {ref:.2f} s" if ref else "lagrange: timed out"
        ratio = f"{ours / ref:.2f}" if ours and ref else "-"
        print(f"ROW | {task} | {ot} | {rt} | {ratio}", flush=True)


def main(quick=False, timeout=60.0):
    rows = [("RR", 2), ("RP", 2)] + [("R" * n, n) for n in range(3, 7 if quick else 13)] \
        + [("spatial", 6)]
    for symbolic in (False, True):                       # warm-up: imports and first calls
        ours_run(robodyn_chain("R", 1, symbolic)), reference_run("R", 1, symbolic)
    print(f"Derivation of M and f (s): robodyn.kane vs KanesMethod, same run; each time the "
          f"best of 3 in fresh child processes (1 run above 5 s; timeout {timeout:.0f} s)")
    print(f"{'chain':>14} {'params':>8} {'ours':>8} {'KanesMethod':>12} {'ratio':>8}")
    for kind, n in rows:
        label = {"RR": "RR (planar 2)", "RP": "RP", "spatial": "spatial 6R"}.get(kind, f"planar {n}")
        for symbolic in (False, True):
            ours = best_time(ours_run, (kind, n, symbolic), timeout, setup=robodyn_chain)
            ref = best_time(reference_run, (kind, n, symbolic), timeout)
            ratio = f"{ref / ours:8.1f}" if ref else f"> {timeout / ours:6.0f}"
            reft = f"{ref:12.3f}" if ref else f"{'> ' + str(int(timeout)):>12}"
            print(f"{label:>14} {'symbols' if symbolic else 'numbers':>8} {ours:8.3f} {reft} "
                  f"{ratio}", flush=True)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--summary", action="store_true", help="only the rows of bench/summary.py")
    a = ap.parse_args()
    if a.summary:
        summary(a.timeout)
    else:
        main(a.quick, a.timeout)
