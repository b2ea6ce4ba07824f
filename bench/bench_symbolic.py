"""Benchmark of robodyn.lagrange: symbolic derivation time vs sympy.physics.mechanics, and the
per-call time of the generated numeric functions vs Pinocchio. All ratios measured in this run.

    .venv/bin/python bench/bench_symbolic.py [--quick]
"""
import sys
import time
import timeit

import numpy as np
import sympy as sp
from sympy.physics import mechanics as me

from robodyn import lagrange as lg
from robodyn import models


def mechanics_planar(n, method):
    """The n-rod planar chain (rods of length 1, mass 1) in sympy.physics.mechanics."""
    q = me.dynamicsymbols(f"q1:{n + 1}")
    u = me.dynamicsymbols(f"u1:{n + 1}")
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    frame, joint, bodies, forces = N, O, [], []
    angle = 0
    for i in range(n):
        B = N.orientnew(f"B{i}", "Axis", [sum(q[:i + 1]), N.z])
        rate = sum(u[:i + 1]) if method == "kane" else sum(qi.diff() for qi in q[:i + 1])
        B.set_ang_vel(N, rate * N.z)
        c = joint.locatenew(f"C{i}", B.x / 2)
        c.v2pt_theory(joint, N, B)
        nxt = joint.locatenew(f"J{i}", B.x)
        nxt.v2pt_theory(joint, N, B)
        body = me.RigidBody(f"R{i}", c, B, 1, (me.inertia(B, 0, sp.Rational(1, 12),
                                                         sp.Rational(1, 12)), c))
        bodies.append(body)
        forces.append((c, -sp.Float(9.81) * N.y))
        joint = nxt
    # note: the mechanics chain uses absolute-sum angles, equivalent to relative joint angles
    if method == "kane":
        KM = me.KanesMethod(N, q_ind=q, u_ind=u, kd_eqs=[qi.diff() - ui for qi, ui in zip(q, u)])
        KM.kanes_equations(bodies, forces)
        return KM.mass_matrix, KM.forcing
    L = me.Lagrangian(N, *bodies)
    LM = me.LagrangesMethod(L, q, forcelist=forces, frame=N)
    LM.form_lagranges_equations()
    return LM.mass_matrix, LM.forcing


def timed(f, *a):
    t = time.perf_counter()
    f(*a)
    return time.perf_counter() - t


def main(quick=False):
    print("Symbolic derivation of M, C, G (s); ratios = reference / ours, same run")
    print(f"{'chain':>12} {'ours':>8} {'Kane':>8} {'Kane/ours':>10} {'Lagrange':>9} {'Lag/ours':>9}")
    ns = range(2, 7) if quick else range(2, 9)
    for n in ns:
        ours = timed(lg.equations_of_motion, models.planar_chain(n), (0, -9.81, 0))
        kane = timed(mechanics_planar, n, "kane")
        lag = timed(mechanics_planar, n, "lagrange") if n <= (4 if quick else 5) else None
        print(f"{'planar ' + str(n):>12} {ours:8.3f} {kane:8.3f} {kane / ours:10.1f} "
              + (f"{lag:9.3f} {lag / ours:9.1f}" if lag else f"{'-':>9} {'-':>9}"))
    t = timed(lg.equations_of_motion, models.ur5_like())
    print(f"{'UR5-like':>12} {t:8.3f}")

    import pinocchio as pin
    sys.path.insert(0, "tests")           # bench only: the test helper that builds Pinocchio models
    from reference import to_pinocchio
    print("\nNumeric per call (us); ratio = ours / Pinocchio")
    rng = np.random.default_rng(0)
    for name, chain in [("planar 2", models.planar_chain(2)), ("planar 6", models.planar_chain(6)),
                        ("UR5-like", models.ur5_like())]:
        g = (0, -9.81, 0) if name.startswith("planar") else (0, 0, -9.81)
        eom = lg.equations_of_motion(chain, gravity=g)
        t0 = time.perf_counter()
        num = eom.numeric(backend="c")
        tgen = time.perf_counter() - t0
        slow = eom.numeric(backend="lambdify")
        model = to_pinocchio(chain, gravity=g)
        data = model.createData()
        n = chain.n
        q, qd, tau = rng.normal(size=(3, n))
        np.testing.assert_allclose(num.M(q), pin.crba(model, data, q), atol=1e-9)   # same answer
        np.testing.assert_allclose(num.forward_dynamics(q, qd, tau),
                                   pin.aba(model, data, q, qd, tau), atol=1e-7)
        reps = 2000

        def per(f):
            return min(timeit.repeat(f, number=reps, repeat=5)) / reps * 1e6
        rows = [("M", "M", (q,), lambda: pin.crba(model, data, q)),
                ("C", "C", (q, qd), lambda: pin.computeCoriolisMatrix(model, data, q, qd)),
                ("G", "G", (q,), lambda: pin.computeGeneralizedGravity(model, data, q)),
                ("tau", "tau", (q, qd, tau), lambda: pin.rnea(model, data, q, qd, tau)),
                ("qdd", "forward_dynamics", (q, qd, tau), lambda: pin.aba(model, data, q, qd, tau))]
        print(f"{name} (C code generated and compiled in {tgen:.2f} s; cached afterwards)")
        print(f"   {'':>4} {'C':>8} {'lambdify':>9} {'pinocchio':>9} {'C/pin':>6} {'lamb/pin':>8}")
        for what, attr, args, ref_call in rows:
            fast, lam = getattr(num, attr), getattr(slow, attr)
            ours, py, ref = per(lambda: fast(*args)), per(lambda: lam(*args)), per(ref_call)
            print(f"   {what:>4} {ours:8.2f} {py:9.2f} {ref:9.2f} {ours / ref:6.2f} {py / ref:8.1f}")

if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
