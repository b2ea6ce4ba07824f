"""Speed of robodyn's contact solver (``contact.contact_impulse``) on many simultaneous
contacts, against a 30-line projected Gauss--Seidel written here in numpy, measured in one run.

    .venv/bin/python bench/bench_contact.py [--repeat R] [--summary]

``--summary`` prints one line per task, ``ROW | task | ours | reference | ratio`` (ratio =
ours / reference, time), and nothing else.

Two problems, both impacts (Newton's law at every contact, eq. iv-contact-lcp):

* Newton's cradle of 21 touching unit balls on a line, the first hitting the rest at 1 m/s:
  20 frictionless contacts (``method="auto"`` picks Lemke's pivoting method, exact);
* fifty boxes landing flat on the ground, e = 0.2, mu = 0.5, each on its two bottom
  corners: 100 frictional contacts, coupled in pairs through each box's rotation (the
  issue's target: 10 ms);
* (without ``--summary``) ten stacks of five such boxes, each touching the one below at its
  two corners: 100 frictional contacts coupled through the stacks, where Gauss--Seidel needs
  about as many sweeps as the Delassus matrix's condition number (~100) times ten (``method="auto"`` picks the compiled projected Gauss--Seidel); the
  issue's target is 10 ms for this one.

The reference is the same Gauss--Seidel iteration as a plain numpy loop (``reference_pgs``)
on the same Delassus matrix, to the same tolerance; the two answers are compared (printed).
Speed is measured here only, never asserted in tests.
"""
from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")   # a shared 2-core machine: threaded BLAS
os.environ.setdefault("OMP_NUM_THREADS", "1")        # on 200 x 200 products only waits
import numpy as np  # noqa: E402

from robodyn.impacts._contact import choose_method, contact_impulse  # noqa: E402


def reference_pgs(M, Jn, Jt, v, e, mu, tol=1e-9, sweeps=100000):
    """The reference: projected Gauss-Seidel on the Delassus matrix, numpy, 30 lines."""
    p = Jn.shape[0]
    G = np.vstack([Jn, Jt])
    MG = np.linalg.solve(M, G.T)
    W = G @ MG
    vn = Jn @ v
    b = np.concatenate([vn + e * np.minimum(vn, 0.0), Jt @ v])
    lam = np.zeros(2 * p)
    fr = (mu > 0) & np.any(Jt != 0, axis=1)
    for _ in range(sweeps):
        change, big = 0.0, 1.0
        for i in range(p):
            x = max(0.0, lam[i] - (b[i] + W[i] @ lam) / W[i, i])
            change, lam[i], big = max(change, abs(x - lam[i])), x, max(big, x)
            if fr[i]:
                j = p + i
                y = lam[j] - (b[j] + W[j] @ lam) / W[j, j]
                y = min(max(y, -mu[i] * x), mu[i] * x)
                change, lam[j], big = max(change, abs(y - lam[j])), y, max(big, abs(y))
        if change <= tol * big:
            break
    return v + MG @ lam


def cradle(balls=21):
    """(M, Jn, Jt, v, e, mu): a line of touching unit balls, the first at 1 m/s."""
    M = np.eye(balls)
    Jn = np.zeros((balls - 1, balls))
    for i in range(balls - 1):
        Jn[i, i], Jn[i, i + 1] = -1.0, 1.0             # gap rate x_{i+1}' - x_i'
    v = np.zeros(balls)
    v[0] = 1.0
    return M, Jn, np.zeros_like(Jn), v, np.ones(balls - 1), np.zeros(balls - 1)


def box_stacks(stacks=10, height=5, w=0.2, h=0.1, e=0.2, mu=0.5, seed=0):
    """(M, Jn, Jt, v, e, mu): ``stacks`` columns of ``height`` boxes (x, y, theta each,
    m = 1, J = m (w^2 + h^2) / 12) landing on the ground at about 1 m/s, each box touching
    the one below (or the ground) at its two bottom corners: 2 stacks height contacts."""
    nb = stacks * height
    M = np.diag(np.tile([1.0, 1.0, (w * w + h * h) / 12], nb))
    Jn, Jt = [], []
    for s in range(stacks):
        for k in range(height):
            j = s * height + k                          # the box; the one below is j - 1
            for cx in (-w / 2, w / 2):
                a, b = np.zeros(3 * nb), np.zeros(3 * nb)
                a[3 * j + 1], a[3 * j + 2] = 1.0, cx     # normal: vy + omega r_x
                b[3 * j], b[3 * j + 2] = 1.0, h / 2      # tangent: vx - omega r_y
                if k:
                    a[3 * j - 2], a[3 * j - 1] = -1.0, -cx
                    b[3 * j - 3], b[3 * j - 1] = -1.0, h / 2
                Jn.append(a)
                Jt.append(b)
    Jn, Jt = np.array(Jn), np.array(Jt)
    rng = np.random.default_rng(seed)
    v = np.zeros(3 * nb)
    v[0::3] = rng.normal(0.0, 0.2, nb)
    v[1::3] = -1.0
    v[1::3][np.arange(nb) % height == 0] = -1.5          # the bottom boxes land first
    v[2::3] = rng.normal(0.0, 0.5, nb)
    return M, Jn, Jt, v, np.full(len(Jn), e), np.full(len(Jn), mu)


def timed(f, repeat):
    best, out = np.inf, None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = f()
        best = min(best, time.perf_counter() - t0)
    return best, out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--summary", action="store_true",
                    help="print only the rows 'ROW | task | ours | reference | ratio'")
    a = ap.parse_args(argv)
    rows = []
    problems = [("20 simultaneous frictionless contacts (Newton's cradle of 21 balls)", cradle()),
                ("100 simultaneous frictional contacts (50 boxes landing flat)",
                 box_stacks(50, 1))]
    if not a.summary:
        problems.append(("100 simultaneous frictional contacts (10 stacks of 5 boxes)",
                         box_stacks(10, 5)))
    for label, (M, Jn, Jt, v, e, mu) in problems:
        kw = dict(friction=mu, Jt=Jt) if np.any(mu > 0) else {}
        method = choose_method(len(Jn), mu, Jt)
        contact_impulse(M, Jn, v, e, **kw)                  # warm up (the compiled solver)
        t_ours, res = timed(lambda: contact_impulse(M, Jn, v, e, **kw), a.repeat)
        t_ref, v_ref = timed(lambda: reference_pgs(M, Jn, Jt, v, e, mu), max(1, a.repeat // 2))
        diff = float(np.max(np.abs(res.qd_plus - v_ref)))
        rows.append((label, method, t_ours, t_ref, diff, res))
    if a.summary:
        for label, method, t_ours, t_ref, diff, _ in rows:
            goal = " (target 10 ms)" if label.startswith("100") else ""
            print(f"ROW | contact_impulse, {label}{goal} | {method} "
                  f"{t_ours * 1e3:.2f} ms | numpy projected Gauss-Seidel {t_ref * 1e3:.2f} ms "
                  f"| {t_ours / t_ref:.3f}")
        return
    print("| problem | method | ours (ms) | numpy PGS (ms) | ours / PGS | max |v+ - v+_ref| |")
    print("|---|---|---:|---:|---:|---:|")
    for label, method, t_ours, t_ref, diff, res in rows:
        print(f"| {label} | {method} | {t_ours * 1e3:.2f} | {t_ref * 1e3:.2f} | "
              f"{t_ours / t_ref:.3f} | {diff:.1e} |")
    res = rows[0][5]
    print(f"\ncradle, simultaneous Newton law: v+ = {np.round(res.qd_plus, 4).tolist()}")


if __name__ == "__main__":
    main()
