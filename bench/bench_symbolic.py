"""Benchmark of robodyn.lagrange: symbolic derivation time vs sympy.physics.mechanics
(KanesMethod, the same chain built in the same run), the size of what each gives (operation
counts of M, C, G and of the generated C code), the growth exponent of time with n, and the
per-call time of the generated numeric functions vs Pinocchio. Every ratio is measured here.

    .venv/bin/python bench/bench_symbolic.py [--quick] [--kane-timeout SECONDS]

KanesMethod runs in a child process with a time limit (default 120 s; 20 s with --quick);
where it does not finish, its time is reported as a lower bound (">").

    .venv/bin/python bench/bench_symbolic.py --summary   # the rows of bench/summary.py

--summary prints only the issue table's rows, ``ROW | task | ours | reference | ratio`` (ratio
= ours / reference): the derivation of planar 6 and 10 (numbers), the UR5-like arm and the
random 7-joint chain against KanesMethod (limit 60 s), the spatial 12-joint chain (Lagrange)
against KanesMethod (limit 20 s: a lower bound), and the generated forward dynamics of the
UR5-like arm on a batch of 1000 states against a Python loop over single states and against
Pinocchio's ``aba`` in a loop, for the C and the lambdify code.
"""
import sys
import time
import timeit

import numpy as np
import sympy as sp

from robodyn import codegen
from robodyn.lagrange import _derivation
from robodyn import lagrange as lg
from robodyn import models
from robodyn.rigid_motion import SerialChain, homogeneous, revolute_screw

sys.path.insert(0, "tests")    # bench only: the test module's chains and KanesMethod builder
from test_derivation import kane_equations as kane  # noqa: E402
from test_derivation import kane_planar, planar_symbolic  # noqa: E402

from _common import time_in_child  # noqa: E402


# --------------------------------------------------------------------------
# the chains
# --------------------------------------------------------------------------

def ur5_symbolic():
    """The UR5-like arm of robodyn.models with symbolic lengths and masses (slender rods)."""
    H1, L1, L2, W1, H2, W2 = sp.symbols("H1 L1 L2 W1 H2 W2", positive=True)
    ms = sp.symbols("m1:7", positive=True)
    z, y, mz = [0, 0, 1], [0, 1, 0], [0, 0, -1]
    S = [revolute_screw(z, [0, 0, 0]), revolute_screw(y, [0, 0, H1]),
         revolute_screw(y, [L1, 0, H1]), revolute_screw(y, [L1 + L2, 0, H1]),
         revolute_screw(mz, [L1 + L2, W1, 0]), revolute_screw(y, [L1 + L2, 0, H1 - H2])]
    up = sp.Matrix([[0, 0, 1], [0, 1, 0], [-1, 0, 0]])
    across = sp.Matrix([[0, 1, 0], [-1, 0, 0], [0, 0, 1]])
    along = sp.eye(3)
    coms = [([0, 0, H1 / 2], up, H1), ([L1 / 2, W1 / 2, H1], along, L1),
            ([L1 + L2 / 2, W1 / 2, H1], along, L2), ([L1 + L2, W1, H1 - H2 / 2], up, H2),
            ([L1 + L2, W1 + W2 / 2, H1 - H2], across, W2),
            ([L1 + L2, W1 + W2, H1 - H2], across, W2 / 4)]
    homes = [homogeneous(R, p) for p, R, _ in coms]
    inertias = [models.rod_inertia(m, l) for m, (_, _, l) in zip(ms, coms)]
    home = homogeneous(sp.Matrix([[-1, 0, 0], [0, 0, 1], [0, 1, 0]]),
                       [L1 + L2, W1 + W2, H1 - H2])
    screws = np.array(sp.Matrix.hstack(*[sp.Matrix(s) for s in S]).tolist(), dtype=object)
    return SerialChain.from_screws(screws, home, homes, inertias, name="UR5-like, symbols")


def rrpprrr():
    """The issue's random 7-joint chain with two prismatic joints (seed 0 is RRPPRRR)."""
    chain = models.random_chain(7, np.random.default_rng(0))
    assert "".join(t[0].upper() for t in chain.joint_types) == "RRPPRRR"
    return chain


# --------------------------------------------------------------------------
# the same chain in sympy.physics.mechanics
# --------------------------------------------------------------------------

def planar_kane(make, gravity):
    """KanesMethod of a planar chain of rods written by hand as the issue measured it (absolute
    angles q1 + ... + qi about N.z): the fastest way to pose it, not the generic builder."""
    chain = make()
    n = chain.n
    if chain.symbolic:
        L, m = sp.symbols(f"l1:{n + 1}"), sp.symbols(f"m1:{n + 1}")
    else:
        L, m = [sp.Integer(1)] * n, [sp.Integer(1)] * n
    return kane_planar(n, L, m, sp.Float(-gravity[1]))


def _kane_run(make, gravity, reference):
    if reference is None:
        kane(make(), gravity)
    else:
        reference(make, gravity)


def kane_time(make, gravity, timeout, reference=None):
    """Seconds KanesMethod takes in a child process, or (timeout, True) if it did not finish."""
    t = time_in_child(_kane_run, (make, gravity, reference), timeout)
    return (timeout, True) if t is None else (t, False)


# --------------------------------------------------------------------------
# measurements
# --------------------------------------------------------------------------

def derive(make, gravity):
    """Seconds to derive M, C, G of a fresh chain (median of 3 when under 2 s) and the result."""
    times = []
    for _ in range(3):
        chain = make()                     # a new chain: nothing cached
        t = time.perf_counter()
        eom = lg.equations_of_motion(chain, gravity=gravity)
        times.append(time.perf_counter() - t)
        if times[0] > 2:
            break
    return float(np.median(times)), eom


def sizes(eom, code=True):
    """Operation counts: M, C, G (plus the intermediates of the nested form) and the C code."""
    ops = [_derivation.op_count(X) for X in (eom.M, eom.C, eom.G)]
    inter = sum(sp.count_ops(e) for _, e in eom.intermediates)
    gen = None
    if code:
        values = {s: 1.0 for s in eom.parameters()}
        M, C, G = (X.xreplace(values) for X in (eom.M, eom.C, eom.G))
        inter_v = tuple((w, e.xreplace(values)) for w, e in eom.intermediates)
        q, qd = list(eom.q), list(eom.qd)
        if inter_v:
            src = _derivation.nested_source(M, C, G, q, qd, inter_v)
        else:
            src = codegen._source(M, C, G, q, qd, "MODNAME")
        gen = _derivation.code_op_count(src)
    return ops, inter, gen


CODE_LIMIT = 200000
"""Generated code is measured for equations below this many operations (sympy's cse of larger
ones takes minutes)."""


def ops_of(eom):
    return [_derivation.op_count(X) for X in (eom.M, eom.C, eom.G)]


def check_against_kane(eom, make, gravity, rng):
    """max |M - M_Kane|, |forcing - forcing_Kane| at a random state (small chains only)."""
    Mk, fk = kane(make(), gravity)
    q, qd = rng.uniform(-1, 1, size=(2, eom.n))
    env = dict(zip(eom.q, q)) | dict(zip(eom.qd, qd))
    env |= {s: 0.5 + rng.random() for s in eom.parameters()}
    for w, e in eom.intermediates:
        env[w] = e.xreplace(env)
    d1 = np.abs(np.array((eom.M - Mk).xreplace(env), float)).max()
    d2 = np.abs(np.array((eom.forcing - fk).xreplace(env), float)).max()
    return max(d1, d2)


def main(quick=False, kane_timeout=None):
    kane_timeout = kane_timeout or (20 if quick else 120)
    G_PLANAR, G_SPATIAL = (0, -9.81, 0), (0, 0, -9.81)
    rows = [(f"planar {n}-link", "numbers", (lambda n=n: models.planar_chain(n)), G_PLANAR)
            for n in ((4, 8) if quick else (4, 8, 10, 12))]
    rows += [(f"planar {n}-link", "symbols", (lambda n=n: planar_symbolic(n)[0]), G_PLANAR)
             for n in ((4, 8) if quick else (4, 8, 10))]
    rows += [("UR5-like 6-DoF", "numbers", models.ur5_like, G_SPATIAL),
             ("UR5-like 6-DoF", "symbols", ur5_symbolic, G_SPATIAL),
             ("random 7 RRPPRRR", "numbers", rrpprrr, G_SPATIAL)]
    print("Symbolic derivation of M, C, G; KanesMethod of the same chain in a child process "
          f"(limit {kane_timeout} s); ratio = Kane / ours")
    head = (f"| {'chain':<18} | {'parameters':<10} | {'ours (s)':>8} | {'Kane (s)':>9} | "
            f"{'ratio':>7} | {'form':<8} | {'ops M':>7} | {'ops C':>7} | {'ops G':>6} | "
            f"{'ops interm.':>11} | {'ops C code':>10} |")
    print(head)
    print("|" + "|".join("-" * (len(c)) for c in head.split("|")[1:-1]) + "|")
    lg.equations_of_motion(models.planar_rr(), gravity=G_PLANAR)       # warm up imports
    times = {}
    for name, kind, make, g in rows:
        t_ours, eom = derive(make, g)
        t_kane, cut = kane_time(make, g, kane_timeout,
                                planar_kane if name.startswith("planar") else None)
        ops, inter, gen = sizes(eom, code=not quick and sum(ops_of(eom)) < CODE_LIMIT)
        form = "nested" if eom.intermediates else "expanded"
        ratio = f"{'>' if cut else ''}{t_kane / t_ours:.0f}x"
        kt = f"{'>' if cut else ''}{t_kane:.2f}"
        print(f"| {name:<18} | {kind:<10} | {t_ours:8.3f} | {kt:>9} | {ratio:>7} | {form:<8} | "
              f"{ops[0]:>7} | {ops[1]:>7} | {ops[2]:>6} | {inter:>11} | "
              f"{gen if gen is not None else '-':>10} |", flush=True)
        times[name, kind] = (t_ours, t_kane, cut)

    print("\nGrowth of time with n (least-squares exponent p of t ~ n^p, planar chains)")
    for kind, ns in (("numbers", (4, 8) if quick else (4, 8, 10, 12)),
                     ("symbols", (4, 8) if quick else (4, 8, 10))):
        t = np.array([times[f"planar {n}-link", kind][0] for n in ns])
        tk = np.array([times[f"planar {n}-link", kind][1] for n in ns])
        p = np.polyfit(np.log(ns), np.log(t), 1)[0]
        pk = np.polyfit(np.log(ns), np.log(tk), 1)[0]
        print(f"  {kind:<8}: ours n^{p:.2f}, KanesMethod n^{pk:.2f} (n = {list(ns)})")

    print("\nRandom 7-joint spatial chains with mixed joints (prismatic 0.3, helical 0.1)")
    print(f"| {'seed':>4} | {'joints':<8} | {'ours (s)':>8} | {'form':<8} | {'ops M':>6} | "
          f"{'ops interm.':>11} | {'max |M - CRBA|':>14} |")
    print("|------|----------|----------|----------|--------|-------------|----------------|")
    from robodyn import dynamics
    for seed in range(5):
        chain = models.random_chain(7, np.random.default_rng(seed), prismatic=0.3, helical=0.1)
        t = time.perf_counter()
        eom = lg.equations_of_motion(chain)
        t = time.perf_counter() - t
        ops, inter, _ = sizes(eom, code=False)
        q = np.random.default_rng(99).normal(size=7)
        env = dict(zip(eom.q, q))
        for w, e in eom.intermediates:
            env[w] = e.xreplace(env)
        err = np.abs(np.array(eom.M.xreplace(env), float) - dynamics.crba(chain, q)).max()
        joints = "".join(j[0].upper() for j in chain.joint_types)
        form = "nested" if eom.intermediates else "expanded"
        print(f"| {seed:>4} | {joints:<8} | {t:8.2f} | {form:<8} | {ops[0]:>6} | {inter:>11} | "
              f"{err:14.1e} |", flush=True)

    print("\nSame equations as KanesMethod (max difference of M and forcing at a random state)")
    rng = np.random.default_rng(7)
    for name, make, g in (("planar 4, symbols", lambda: planar_symbolic(4)[0], G_PLANAR),
                          ("random 4-joint RPHR", lambda: models.random_chain(
                              4, np.random.default_rng(11), prismatic=0.3, helical=0.3),
                           G_SPATIAL)):
        eom = lg.equations_of_motion(make(), gravity=g)
        print(f"  {name}: {check_against_kane(eom, make, g, rng):.1e}")

    if quick:
        return
    import pinocchio as pin
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
                ("tau", "tau", (q, qd, tau), lambda: pin.rnea(model, data, q, qd, tau)),
                ("qdd", "forward_dynamics", (q, qd, tau), lambda: pin.aba(model, data, q, qd, tau))]
        print(f"{name} (C code ready in {tgen:.2f} s: built, or found in the cache)")
        for what, attr, args, ref_call in rows:
            fast = getattr(num, attr)
            ours, ref = per(lambda: fast(*args)), per(ref_call)
            print(f"   {what:>4} ours {ours:7.2f}  pinocchio {ref:7.2f}  ratio {ours / ref:5.2f}")


def _row(task, ours, ref, unit="s", scale=1.0, fmt=".3f", cut=False):
    o = f"{ours * scale:{fmt}} {unit}"
    r = f"{'> ' if cut else ''}{ref[1] * scale:{fmt}} {unit} ({ref[0]})"
    ratio = f"{'< ' if cut else ''}{ours / ref[1]:.3g}"
    print(f"ROW | {task} | {o} | {r} | {ratio}", flush=True)


def summary():
    """The issue table's rows (see the module docstring)."""
    from test_kane import spatial_rods
    G_PLANAR, G_SPATIAL = (0, -9.81, 0), (0, 0, -9.81)
    lg.equations_of_motion(models.planar_rr(), gravity=G_PLANAR)       # warm up imports
    rows = [("planar 6", lambda: models.planar_chain(6), G_PLANAR, planar_kane, 60),
            ("planar 10", lambda: models.planar_chain(10), G_PLANAR, planar_kane, 60),
            ("UR5-like", models.ur5_like, G_SPATIAL, None, 60),
            ("random 7-joint RRPPRRR", rrpprrr, G_SPATIAL, None, 60),
            ("spatial 12-joint, symbols", lambda: spatial_rods(12), G_SPATIAL, None, 20)]
    for name, make, g, reference, limit in rows:
        ours, _ = derive(make, g)
        t_kane, cut = kane_time(make, g, limit, reference)
        task = f"symbolic derivation (lagrange), {name}"
        _row(task, ours, ("KanesMethod", t_kane), cut=cut)
    # generated code on a batch of 1000 states: one call against a loop of single calls
    import pinocchio as pin
    from reference import to_pinocchio
    chain, B = models.ur5_like(), 1000
    eom = lg.equations_of_motion(chain, gravity=G_SPATIAL)
    model = to_pinocchio(chain, gravity=G_SPATIAL)
    data = model.createData()
    Q, QD, T = np.random.default_rng(0).normal(size=(3, B, chain.n))
    for backend in ("c", "lambdify"):
        fd = eom.numeric(backend=backend).forward_dynamics
        np.testing.assert_allclose(fd(Q, QD, T), [pin.aba(model, data, *x) for x in
                                                  zip(Q, QD, T)], rtol=1e-9, atol=1e-7)
        reps = 5 if backend == "c" else 1

        def per(f):
            return min(timeit.repeat(f, number=1, repeat=reps)) / B
        batch = per(lambda: fd(Q, QD, T))
        loop = per(lambda: [fd(q, qd, t) for q, qd, t in zip(Q, QD, T)])
        pin_loop = per(lambda: [pin.aba(model, data, q, qd, t) for q, qd, t in zip(Q, QD, T)])
        task = f"generated {'C' if backend == 'c' else 'lambdify'} forward dynamics, UR5-like, " \
            f"batch of {B} (per state; target <= 0.5x the loop)"
        _row(task, batch, ("a Python loop of single calls", loop), "us", 1e6, ".2f")
        _row(task + ", vs Pinocchio", batch, ("pin.aba in a Python loop", pin_loop), "us", 1e6,
             ".2f")


if __name__ == "__main__":
    if "--summary" in sys.argv:
        summary()
        sys.exit()
    limit = None
    if "--kane-timeout" in sys.argv:
        limit = float(sys.argv[sys.argv.index("--kane-timeout") + 1])
    main(quick="--quick" in sys.argv, kane_timeout=limit)
