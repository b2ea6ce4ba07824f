"""The solvers of the many-contact problem (issue #31): Lemke's method and projected
Gauss-Seidel against the mode enumeration (the reference, wherever it runs), against an
independent check of Newton's and Coulomb's laws, against closed forms (Newton's cradle) and
against scipy (a bound-constrained QP for LCPs with a positive definite matrix)."""
import math

import numpy as np
import pytest
from scipy.optimize import minimize

from robodyn import impacts
from robodyn.impacts._contact import contact_impulse, solve_modes
from robodyn.impacts import cradle_simultaneous

RNG_CASES = 120


def admissible(M, Jn, Jt, v, e, mu, res, tol=1e-7):
    """Newton's law and Coulomb's planar cone checked on the result, from M, J and the
    impulses only (not from the solver's own tests), with the restitutions it used (lower
    than e where Newton's law would create energy)."""
    assert np.all(res.restitution <= e + 1e-15)
    e = res.restitution
    Ln, Lt = res.normal_impulse, res.tangential_impulse
    vp = v + np.linalg.solve(M, Jn.T @ Ln + Jt.T @ Lt)
    s = max(1.0, np.abs(v).max(), np.abs(Ln).max(initial=0.0))
    ok = np.allclose(vp, res.qd_plus, atol=tol * s)
    wn = Jn @ vp + e * np.minimum(Jn @ v, 0.0)
    wt = Jt @ vp
    ok &= bool(np.all(Ln >= -tol * s) and np.all(wn >= -tol * s))
    ok &= bool(np.all(np.abs(Ln * wn) <= tol * s * s))
    ok &= bool(np.all(np.abs(Lt) <= mu * Ln + tol * s))
    for i in range(len(Ln)):
        if abs(wt[i]) > tol * s:                         # sliding: on the cone's edge, against
            ok &= bool(abs(Lt[i] + mu[i] * Ln[i] * np.sign(wt[i])) <= 10 * tol * s)
    return ok


def random_case(rng, p, frictional):
    n = int(rng.integers(max(2, p), 3 * p + 3))
    A = rng.normal(size=(n, n))
    M = A @ A.T + 0.5 * np.eye(n)
    Jn, Jt = rng.normal(size=(p, n)), rng.normal(size=(p, n))
    v = rng.normal(size=n)
    # every contact approaching (an impact), like tests/test_contact.py
    v -= Jn.T @ np.linalg.lstsq(Jn.T, v, rcond=None)[0] + 0.5 * Jn.T @ np.ones(p)
    v += 0.3 * rng.normal(size=n)                       # ... but some may separate
    e = rng.uniform(0, 1, p)
    mu = np.zeros(p)
    if frictional:
        k = min(p, 3)                                   # <= 4**3 * 2**3 modes to enumerate
        mu[:k] = rng.uniform(0.05, 1.5, k)
    return M, Jn, Jt, v, e, mu


def test_frictionless_solvers_agree_with_the_enumeration():
    """The velocity after a frictionless impact is unique: every solver gives the same."""
    rng = np.random.default_rng(31)
    modes_seen = set()
    for case in range(RNG_CASES):
        p = 1 + case % 6
        M, Jn, Jt, v, e, mu = random_case(rng, p, False)
        ref = contact_impulse(M, Jn, v, e, method="enumerate")
        modes_seen.update(ref.modes)
        for method in ("lemke", "pgs"):
            r = contact_impulse(M, Jn, v, e, method=method, max_iter=10**6)
            s = max(1.0, np.abs(v).max())
            assert r.qd_plus == pytest.approx(ref.qd_plus, abs=1e-6 * s), (case, method)
            assert admissible(M, Jn, Jt, v, e, mu, r, 1e-6), (case, method)
    assert modes_seen == {"open", "closed"}


def test_frictional_solvers_agree_with_the_enumeration():
    """With friction, Newton's law may admit several solutions: Lemke's must be admissible,
    and equal to the enumeration's wherever the enumeration's two orders of the modes
    (closed first, open first) agree on one; it is, in all but a few cases."""
    rng = np.random.default_rng(7)
    same = unique = 0
    modes_seen = set()
    for case in range(RNG_CASES // 2):
        p = 1 + case % 6
        M, Jn, Jt, v, e, mu = random_case(rng, p, True)
        ref = contact_impulse(M, Jn, v, e, friction=mu, Jt=Jt, method="enumerate")
        modes_seen.update(ref.modes)
        r = contact_impulse(M, Jn, v, e, friction=mu, Jt=Jt, method="lemke")
        if ref.restitution_scaled or r.restitution_scaled:
            continue                                   # energy-capped: both scale e down
        assert admissible(M, Jn, Jt, v, e * 1.0, mu, r), case
        assert admissible(M, Jn, Jt, v, e * 1.0, mu, ref), case
        cn = e * np.minimum(Jn @ v, 0.0)
        other = solve_modes(np.linalg.inv(M), Jn, Jt, mu, v, cn, np.zeros(p), np.zeros(p),
                            1e-9, "test", open_first=True)
        if other is not None and np.allclose(other[0], ref.qd_plus, atol=1e-8):
            unique += 1
            same += bool(np.allclose(r.qd_plus, ref.qd_plus, atol=1e-7))
    assert modes_seen >= {"open", "stick", "slide"}
    assert unique >= RNG_CASES // 4 and same >= 0.9 * unique, (same, unique)


def test_projected_gauss_seidel_with_friction_is_admissible():
    rng = np.random.default_rng(5)
    for case in range(40):
        p = 1 + case % 6
        M, Jn, Jt, v, e, mu = random_case(rng, p, True)
        try:
            r = contact_impulse(M, Jn, v, 0.0, friction=mu, Jt=Jt, method="pgs",
                                max_iter=20000, tol=1e-11)
        except ValueError as err:                      # Gauss-Seidel may stall with friction
            assert "expected projected Gauss-Seidel to converge within 20000" in str(err)
            continue
        assert admissible(M, Jn, Jt, v, np.zeros(p), mu, r, 1e-6), case


@pytest.mark.parametrize("method", ["auto", "lemke", "pgs"])
def test_newtons_cradle_of_21_balls_against_its_closed_form(method):
    """20 simultaneous contacts, enumeration refused (2**20 modes); the simultaneous Newton
    law: v1 = -(N - 2) / N, every other ball 2 / N (momentum and energy kept)."""
    N = 21
    Jn = np.zeros((N - 1, N))
    for i in range(N - 1):
        Jn[i, i], Jn[i, i + 1] = -1.0, 1.0
    v = np.zeros(N)
    v[0] = 1.0
    r = contact_impulse(np.eye(N), Jn, v, 1.0, method=method)
    want = np.full(N, 2 / N)
    want[0] = -(N - 2) / N
    assert r.qd_plus == pytest.approx(want, abs=1e-7)
    assert r.method == ("lemke" if method == "auto" else method)
    assert r.qd_plus == pytest.approx(cradle_simultaneous(N, 1.0)[0], abs=1e-7)
    assert r.qd_plus.sum() == pytest.approx(1.0, abs=1e-9)           # momentum
    assert r.qd_plus @ r.qd_plus == pytest.approx(1.0, abs=1e-6)     # energy (e = 1)
    with pytest.raises(ValueError, match=r"at most 4096 contact modes to enumerate, got "
                                         r"1048576 \(20 contacts"):
        contact_impulse(np.eye(N), Jn, v, 1.0, method="enumerate")


def test_enumeration_guard_cannot_overflow():
    """4**40 modes overflow int64 (np.prod wraps to 0): the guard compares log2 instead."""
    p, n = 40, 80
    Jn = np.zeros((p, n))
    Jt = np.zeros((p, n))
    for i in range(p):
        Jn[i, 2 * i + 1] = Jt[i, 2 * i] = 1.0
    assert int(np.prod([4] * p)) == 0                      # what the old guard computed
    with pytest.raises(ValueError, match=f"got {4 ** 40} "):
        contact_impulse(np.eye(n), Jn, -Jn.sum(0), 0.5, friction=0.5, Jt=Jt,
                        method="enumerate")
    assert impacts._contact.mode_bits([("a", "b", "c", "d")] * p) == 80 > math.log2(impacts.MAX_MODES)


def test_large_frictional_sets_lemke_and_pgs_agree():
    """40 frictional contacts of 20 boxes landing flat (unique: decoupled boxes, full rank)."""
    bc = _bench()
    M, Jn, Jt, v, e, mu = bc.box_stacks(20, 1)
    a = contact_impulse(M, Jn, v, e, friction=mu, Jt=Jt, method="lemke")
    b = contact_impulse(M, Jn, v, e, friction=mu, Jt=Jt, method="pgs")
    assert impacts._contact.choose_method(len(Jn), mu, Jt) == "lemke"
    assert a.qd_plus == pytest.approx(b.qd_plus, abs=1e-7)
    assert admissible(M, Jn, Jt, v, e, mu, a) and admissible(M, Jn, Jt, v, e, mu, b)
    assert b.qd_plus == pytest.approx(bc.reference_pgs(M, Jn, Jt, v, e, mu), abs=1e-7)
    M, Jn, Jt, v, e, mu = bc.box_stacks(50, 1)
    assert impacts._contact.choose_method(len(Jn), mu, Jt) == "pgs"


def test_lemke_against_a_bound_constrained_qp():
    """For positive definite A, LCP(A, b) is the optimality condition of min 1/2 z'Az + b'z,
    z >= 0 (scipy's L-BFGS-B, an independent route)."""
    rng = np.random.default_rng(2)
    for k in (1, 3, 8, 20):
        B = rng.normal(size=(k, k))
        A = B @ B.T + 0.1 * np.eye(k)
        b = rng.normal(size=k)
        z = impacts.lemke(A, b)
        qp = minimize(lambda x: 0.5 * x @ A @ x + b @ x, np.zeros(k), jac=lambda x: A @ x + b,
                      bounds=[(0, None)] * k, method="L-BFGS-B",
                      options=dict(ftol=1e-15, gtol=1e-12, maxiter=10000))
        assert z == pytest.approx(qp.x, abs=1e-5)
        w = A @ z + b
        assert np.all(z >= 0) and np.all(w >= -1e-12) and abs(z @ w) < 1e-10


def test_bad_input_and_caps():
    with pytest.raises(ValueError, match="contact_impulse: method: expected one of"):
        contact_impulse(np.eye(2), [0, 1], [0, -1], 0.5, method="simplex")
    with pytest.raises(ValueError, match=r"contact_impulse: max_iter: expected at most"):
        contact_impulse(np.eye(2), [0, 1], [0, -1], 0.5, max_iter=10**12)
    with pytest.raises(TypeError, match=r"contact_impulse: max_iter: expected an integer"):
        contact_impulse(np.eye(2), [0, 1], [0, -1], 0.5, max_iter=2.5)
    N = 21
    Jn = np.diff(np.eye(N), axis=0)
    v = np.r_[1.0, np.zeros(N - 1)]
    with pytest.raises(ValueError, match=r"max_iter: expected projected Gauss-Seidel to "
                                         r"converge within 3 sweeps"):
        contact_impulse(np.eye(N), Jn, v, 1.0, method="pgs", max_iter=3)
    with pytest.raises(ValueError, match=r"max_iter: expected Lemke's method to end within "
                                         r"2 pivots"):
        contact_impulse(np.eye(N), Jn, v, 1.0, method="lemke", max_iter=2)
    with pytest.raises(ValueError, match=r"lemke: b: expected shape \(3,\)"):
        impacts.lemke(np.eye(3), [1.0, 2.0])
    with pytest.raises(ValueError, match="lemke: max_pivots: expected at most"):
        impacts.lemke(np.eye(2), [-1.0, 2.0], max_pivots=10**9)
    with pytest.raises(ValueError, match=r"lemke: b(\[1\])?: expected finite"):
        impacts.lemke(np.eye(2), [-1.0, np.nan])
    with pytest.raises(ValueError, match="secondary ray"):
        impacts.lemke(-np.eye(2), [-1.0, -1.0])                # no solution


def test_moreau_jean_takes_a_cradle_of_ten_balls():
    """Nine touching contacts (512 modes: Lemke): the first step is the simultaneous Newton
    law, eq. (iv-cradle-simultaneous), with its closed form."""
    import sympy as sp
    from robodyn.equations import mass_matrix_form
    from robodyn.impacts import HybridSystem, Surface
    from robodyn.impacts import moreau_jean
    N = 10
    xs, vs = sp.symbols(f"x0:{N}"), sp.symbols(f"v0:{N}")
    form = mass_matrix_form(list(xs), list(vs), sp.eye(N), [0] * N, name="balls").numeric()

    def gap(i):
        row = np.zeros(N)
        row[i], row[i + 1] = -1.0, 1.0
        return Surface(f"gap {i}", lambda q, i=i: float(q[i + 1] - q[i] - 0.125),
                       lambda q, row=row: row, 1.0)

    system = HybridSystem(form, tuple(gap(i) for i in range(N - 1)))
    q0 = 0.125 * np.arange(N)                          # exactly touching (binary fractions)
    v0 = np.r_[1.0, np.zeros(N - 1)]
    r = moreau_jean(system, q0, v0, 0.002, 1e-3)
    want = np.full(N, 2 / N)
    want[0] = 2 / N - 1
    assert r.qd[1] == pytest.approx(want, abs=1e-9)
    assert r.active[1].all()


def test_the_numpy_gauss_seidel_equals_the_compiled_one():
    """The fallback where no C compiler works: the same iteration, the same answer."""
    M, Jn, Jt, v, e, mu = _bench().box_stacks(6, 2)
    p = len(Jn)
    G = np.vstack([Jn, Jt])
    W = G @ np.linalg.solve(M, G.T)
    vn = Jn @ v
    b = np.concatenate([vn + e * np.minimum(vn, 0.0), Jt @ v])
    fr = np.ones(p, bool)
    Ln, Lt, used = impacts._lcp.contact_pgs(W, b, mu, fr, 10**5, 1e-12)
    lam = np.zeros(2 * p)
    assert impacts._lcp._pgs_numpy(W, b, mu, fr, lam, 10**5, 1e-12) == used > 1
    assert lam == pytest.approx(np.concatenate([Ln, Lt]), abs=1e-12)


def _bench():
    from importlib import util
    from pathlib import Path
    spec = util.spec_from_file_location("bc", Path(__file__).parents[1] / "bench" /
                                        "bench_contact.py")
    bc = util.module_from_spec(spec)
    spec.loader.exec_module(bc)
    return bc


def test_one_loader_for_the_compiled_modules(monkeypatch):
    """The package's C sources are loaded by one function, dynamics._recursions._load_compiled:
    no other module reads a ``.c`` file of the package, and the Gauss-Seidel falls back to numpy through
    it (a warning once, the same impulses)."""
    import pathlib
    import re
    import warnings

    from robodyn import codegen, dynamics
    here = pathlib.Path(dynamics.__file__).parents[1]
    readers = sorted(str(p.relative_to(here)) for p in here.rglob("*.py")
                     if re.search(r"Path\(__file__\)[^\n]*(with_name\(|c_file)", p.read_text()))
    assert readers == ["dynamics/_recursions.py"], readers    # the package's files: one reader
    N = 12
    Jn = np.diff(np.eye(N), axis=0)
    v = np.r_[1.0, np.zeros(N - 1)]
    ref = contact_impulse(np.eye(N), Jn, v, 1.0, method="pgs", tol=1e-12).qd_plus
    monkeypatch.setattr(impacts._lcp, "_PGS_MODULE", [])

    def fail(source, prefix):
        raise codegen.CompileError("codegen: no C compiler found")
    monkeypatch.setattr(codegen, "compiled_module", fail)
    with pytest.warns(RuntimeWarning, match="compiled Gauss-Seidel is unavailable.*no C"):
        out = contact_impulse(np.eye(N), Jn, v, 1.0, method="pgs", tol=1e-12).qd_plus
    np.testing.assert_allclose(out, ref, atol=1e-9)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        contact_impulse(np.eye(N), Jn, v, 1.0, method="pgs", tol=1e-12)     # warned once
    assert dynamics._recursions._load_compiled is not None
