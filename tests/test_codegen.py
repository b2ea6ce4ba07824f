"""Tests of robodyn.codegen and the compiled backend of EquationsOfMotion.numeric: the compiled
M, C, G, tau and forward dynamics equal the O(n) algorithms of robodyn.dynamics (an independent
route: no symbolic algebra) and the lambdify backend on random chains; the cache; every
bad-input path and the fallback without a compiler."""
import warnings

import numpy as np
import pytest
import sympy as sp

import robodyn as rd
from robodyn import codegen, dynamics, models
from robodyn import lagrange as lg

G_PLANAR = (0.0, -9.81, 0.0)


@pytest.fixture(scope="module")
def eoms():
    """Symbolic equations of a few chains (derived once for the module)."""
    rng = np.random.default_rng(7)
    chains = {"planar_rp": models.planar_rp(1.0, 1.0, 1.0, 1.0),
              "planar_3": models.planar_chain(3), "ur5_like": models.ur5_like()}
    chains.update({f"random_{n}": models.random_chain(n, rng) for n in (1, 2, 4)})
    return {name: (chain, lg.equations_of_motion(chain, gravity=G_PLANAR))
            for name, chain in chains.items()}


@pytest.mark.equation("hb-5-14")
@pytest.mark.parametrize("name", ["planar_rp", "planar_3", "ur5_like",
                                  "random_1", "random_2", "random_4"])
def test_compiled_equals_recursive_algorithms(eoms, name):
    chain, eom = eoms[name]
    num = eom.numeric(backend="c")
    assert num.backend == "c"
    rng = np.random.default_rng(hash(name) % 2**32)
    for _ in range(5):
        q, qd, qdd = rng.uniform(-1.5, 1.5, size=(3, chain.n))
        np.testing.assert_allclose(num.M(q), dynamics.crba(chain, q), atol=1e-10, rtol=1e-10)
        np.testing.assert_allclose(num.C(q, qd), dynamics.coriolis_matrix(chain, q, qd),
                                   atol=1e-10, rtol=1e-10)
        np.testing.assert_allclose(num.G(q), dynamics.gravity_torques(chain, q, G_PLANAR),
                                   atol=1e-10, rtol=1e-10)
        tau = dynamics.inverse_dynamics(chain, q, qd, qdd, G_PLANAR)
        np.testing.assert_allclose(num.tau(q, qd, qdd), tau, atol=1e-9, rtol=1e-10)
        np.testing.assert_allclose(num.forward_dynamics(q, qd, tau), qdd, atol=1e-7, rtol=1e-7)


def test_compiled_equals_lambdify(eoms):
    chain, eom = eoms["random_4"]
    c, py = eom.numeric(backend="c"), eom.numeric(backend="lambdify")
    assert (c.backend, py.backend) == ("c", "lambdify")
    q, qd, u = np.random.default_rng(3).normal(size=(3, chain.n))
    for f in ("M", "G"):
        np.testing.assert_allclose(getattr(c, f)(q), getattr(py, f)(q), atol=1e-12)
    np.testing.assert_allclose(c.C(q, qd), py.C(q, qd), atol=1e-12)
    np.testing.assert_allclose(c.tau(q, qd, u), py.tau(q, qd, u), atol=1e-11)
    np.testing.assert_allclose(c.forward_dynamics(q, qd, u), py.forward_dynamics(q, qd, u),
                               rtol=1e-9, atol=1e-9)


def test_inputs_may_be_lists_tuples_and_int_arrays(eoms):
    _, eom = eoms["planar_3"]
    num = eom.numeric()
    ref = num.M(np.array([0.0, 1.0, 2.0]))
    for q in ([0, 1, 2], (0.0, 1.0, 2.0), np.arange(3)):
        np.testing.assert_array_equal(num.M(q), ref)
    strided = np.array([0.0, 9.0, 1.0, 9.0, 2.0])[::2]     # a non-contiguous view
    np.testing.assert_array_equal(num.M(strided), ref)


def test_results_are_fresh_arrays(eoms):
    _, eom = eoms["planar_3"]
    num = eom.numeric()
    a = num.G([0.1, 0.2, 0.3])
    a[:] = 0.0
    assert np.abs(num.G([0.1, 0.2, 0.3])).max() > 1.0


def test_numeric_is_cached_per_backend_and_values():
    eom = lg.equations_of_motion(models.planar_rr(*sp.symbols("l1 l2 m1 m2")), gravity=G_PLANAR)
    vals = {"l1": 1, "l2": 1, "m1": 1, "m2": 2}
    a = eom.numeric(vals)
    assert eom.numeric(vals) is a
    assert eom.numeric(vals, backend="lambdify") is not a
    assert eom.numeric({**vals, "m2": 3}) is not a
    assert "backend='c'" in repr(a)


# --------------------------------------------------------------------------
# bad input
# --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def rr():
    return lg.equations_of_motion(models.planar_rr(1, 1, 1, 1), gravity=G_PLANAR)


@pytest.mark.parametrize("backend", ["c", "lambdify"])
@pytest.mark.parametrize("call, match", [
    (lambda n: n.M([0.0]), r"M: q: expected shape \(2,\) for one state or \(B, 2\) for a "
     r"batch of B states, got shape \(1,\)"),
    (lambda n: n.M([[0.0, 1.0, 2.0]]), r"M: q: expected shape \(2,\) .* got shape \(1, 3\)"),
    (lambda n: n.M(np.zeros((2, 2, 2))), r"M: q: expected shape .* got shape \(2, 2, 2\)"),
    (lambda n: n.C(np.zeros((3, 2)), np.zeros((2, 2))),
     r"C: qd: expected the shape of q .* got shape \(2, 2\)"),
    (lambda n: n.C(np.zeros((3, 2)), np.zeros(2)), r"C: qd: expected the shape of q"),
    (lambda n: n.G(np.array([[0.0, 0.0], [np.nan, 0.0]])), r"G: q: expected finite numbers"),
    (lambda n: n.C([0.0, 0.0], [1.0, np.nan]), r"C: qd: expected finite numbers"),
    (lambda n: n.G([np.inf, 0.0]), r"G: q: expected finite numbers"),
    (lambda n: n.tau([0, 0], [0, 0], [0, 0, 0]), r"tau: qdd: expected shape \(2,\)"),
])
def test_bad_vectors_raise_value_error(rr, backend, call, match):
    with pytest.raises(ValueError, match=match):
        call(rr.numeric(backend=backend))


@pytest.mark.parametrize("bad", [
    [1, "a"], ["1", "2"], np.array([1 + 1j, 0]), np.ma.masked_array([1.0, 2.0], mask=[0, 1]),
    [True, False], [None, 1.0],
])
def test_compiled_functions_refuse_non_real_input(rr, bad):
    """No silent cast in generated code: strings are not parsed, complex parts not dropped,
    masked values not used."""
    with pytest.raises((TypeError, ValueError), match=r"forward_dynamics: tau: expected"):
        rr.numeric(backend="c").forward_dynamics([0, 0], [0, 0], bad)


def test_compiled_functions_accept_unusual_real_layouts(rr):
    num = rr.numeric(backend="c")
    q = np.array([0.3, -0.2])
    want = num.M(q)
    ro = q.copy()
    ro.setflags(write=False)
    for same in (q.astype(">f8"), ro, [0.3, -0.2], np.array([[0.3, 0.0], [-0.2, 0.0]])[:, 0]):
        np.testing.assert_array_equal(num.M(same), want)
    np.testing.assert_array_equal(num.M(np.array([1, 2])), num.M(np.array([1.0, 2.0])))


def test_wrong_argument_count_raises_type_error(rr):
    num = rr.numeric(backend="c")
    with pytest.raises(TypeError, match=r"tau: expected 3 argument\(s\) \(q, qd, qdd\), got 2"):
        num.tau([0, 0], [0, 0])
    with pytest.raises(TypeError, match=r"M: expected 1 argument\(s\) \(q\), got 0"):
        num.M()


def test_indefinite_mass_matrix_raises_linalg_error():
    q1, q2, u1, u2 = sp.symbols("q1 q2 u1 u2")
    M = sp.Matrix([[1, 0], [0, sp.cos(q1)]])          # not positive definite for |q1| > pi/2
    mod = codegen.compile_equations(M, sp.zeros(2, 2), sp.zeros(2, 1), [q1, q2], [u1, u2])
    np.testing.assert_allclose(mod.forward_dynamics([0, 0], [0, 0], [1, 2]), [1, 2])
    with pytest.raises(np.linalg.LinAlgError, match="not positive definite"):
        mod.forward_dynamics([3.0, 0.0], [0, 0], [1, 2])


def test_compile_equations_rejects_free_symbols_and_shapes():
    q1, u1, k = sp.symbols("q1 u1 k")
    with pytest.raises(ValueError, match=r"compile_equations: M: .*symbols \['k'\], which have no value"):
        codegen.compile_equations(sp.Matrix([[k]]), sp.zeros(1, 1), sp.zeros(1, 1), [q1], [u1])
    with pytest.raises(ValueError, match=r"expected M, C n x n.*got M \(2, 2\)"):
        codegen.compile_equations(sp.eye(2), sp.zeros(1, 1), sp.zeros(1, 1), [q1], [u1])


def test_unknown_backend(rr):
    with pytest.raises(ValueError, match=r"backend: expected 'auto', 'c' or 'lambdify', got 'f'"):
        rr.numeric(backend="f")


# --------------------------------------------------------------------------
# cache and compiler failures
# --------------------------------------------------------------------------

def _fresh_equations(tag):
    """A one-coordinate system nobody else compiles (a distinct constant per test)."""
    q1, u1 = sp.symbols("q1 u1")
    return sp.Matrix([[2 + tag]]), sp.zeros(1, 1), sp.Matrix([tag * sp.sin(q1)]), [q1], [u1]


def test_modules_are_cached_on_disk(tmp_path, monkeypatch):
    monkeypatch.setenv("ROBODYN_CACHE", str(tmp_path))
    args = _fresh_equations(np.random.default_rng().integers(10**9) + 0.5)
    mod = codegen.compile_equations(*args)
    built = list((tmp_path / "codegen").glob("robodyn_eom_*.so"))
    assert len(built) == 1 and built[0].stat().st_size > 0
    assert codegen._verified(built[0])                          # size and hash recorded
    assert codegen.compile_equations(*args) is mod              # loaded once per process
    assert not list((tmp_path / "codegen").glob("tmp*"))        # no build leftovers


def test_compiler_failure_is_a_compile_error(tmp_path, monkeypatch):
    dynamics._recursions._engine()                  # loaded from the normal cache before CC is broken
    monkeypatch.setenv("ROBODYN_CACHE", str(tmp_path))
    monkeypatch.setenv("CC", "false")                           # a "compiler" that always fails
    with pytest.raises(codegen.CompileError, match=r"the C compiler failed \(exit 1\)"):
        codegen.compile_equations(*_fresh_equations(0.25))
    left = [p.name for p in (tmp_path / "codegen").iterdir()]
    assert all(name.endswith(".lock") for name in left), left  # nothing half-written is left


def test_named_compiler_that_does_not_exist_is_reported(tmp_path, monkeypatch):
    monkeypatch.setenv("ROBODYN_CACHE", str(tmp_path))
    monkeypatch.setenv("CC", "/nonexistent/cc")
    with pytest.raises(codegen.CompileError, match=r"\$CC = '/nonexistent/cc' is not an "):
        codegen.compile_equations(*_fresh_equations(0.375))


def test_no_compiler_falls_back_to_lambdify_with_a_warning(tmp_path, monkeypatch):
    dynamics._recursions._engine()                  # loaded from the normal cache before the compiler goes
    monkeypatch.setenv("ROBODYN_CACHE", str(tmp_path))

    def no_compiler():
        raise codegen.CompileError("compile_equations: no C compiler found")
    monkeypatch.setattr(codegen, "_compiler", no_compiler)
    eom = lg.equations_of_motion(models.planar_rr(1.25, 2, 3, 4.5), gravity=G_PLANAR)
    with pytest.warns(RuntimeWarning, match="no C compiler found.*using lambdify"):
        num = eom.numeric()
    assert num.backend == "lambdify"
    np.testing.assert_allclose(num.M([0.3, 0.4]),
                               dynamics.crba(models.planar_rr(1.25, 2, 3, 4.5), [0.3, 0.4]))
    with pytest.raises(codegen.CompileError):
        eom.numeric(backend="c")


def test_package_exports():
    assert rd.NumericEquations is lg.NumericEquations


# --------------------------------------------------------------------------
# the compiled engine of robodyn.dynamics (its results are tested against Pinocchio in
# test_dynamics.py, which runs every test with and without it)
# --------------------------------------------------------------------------

@pytest.fixture
def ur5():
    chain = models.ur5_like()
    return chain, dynamics._recursions._chain_data(chain, "test")


def test_engine_takes_clean_float_arrays(ur5, monkeypatch):
    monkeypatch.setattr(dynamics._recursions, "ENGINE", "auto")
    chain, d = ur5
    q, qd, qdd = np.random.default_rng(0).normal(size=(3, 6))
    g = dynamics.DEFAULT_GRAVITY
    assert dynamics._recursions._compiled("rnea", d, q, qd, qdd, g, None).shape == (6,)
    assert dynamics._recursions._compiled("crba", d, np.stack([q, qd])).shape == (2, 6, 6)
    qdd2 = dynamics._recursions._compiled("aba", d, q, qd, qdd, g, None, 1e10)
    assert isinstance(qdd2, np.ndarray) and qdd2.shape == (6,)    # no pivot flagged


@pytest.mark.parametrize("bad", [
    lambda q: list(q),                              # not an array: numpy path converts
    lambda q: q.astype(np.float32),                 # another dtype
    lambda q: np.repeat(q, 2)[::2],                 # not contiguous
    lambda q: np.where(np.arange(6) == 2, np.nan, q),  # not finite: numpy path raises
    lambda q: q[:5],                                # wrong length
    lambda q: q[None, None],                        # 3-D
    lambda q: np.stack([q, q]),                     # batch where the others are one state
])
def test_engine_leaves_other_inputs_to_numpy(ur5, monkeypatch, bad):
    monkeypatch.setattr(dynamics._recursions, "ENGINE", "auto")
    chain, d = ur5
    q, qd, qdd = np.random.default_rng(1).normal(size=(3, 6))
    assert dynamics._recursions._compiled("rnea", d, bad(q), qd, qdd, dynamics.DEFAULT_GRAVITY, None) is None
    assert dynamics._recursions._compiled("rnea", d, q, qd, qdd, dynamics.DEFAULT_GRAVITY,
                              np.zeros((2, 6))) is None      # wrench batch of another size


def test_engine_pivot_flag_reaches_the_checks(monkeypatch):
    monkeypatch.setattr(dynamics._recursions, "ENGINE", "auto")
    chain = models.planar_rr(1.0, 1.0, 1.0, 1.0)
    q = np.array([0.3, 0.2])
    with pytest.warns(dynamics.IllConditionedWarning, match="condition number"):
        dynamics.forward_dynamics(chain, q, np.zeros(2), np.zeros(2), cond_warn=1.5)
    out = dynamics._recursions._compiled("aba", dynamics._recursions._chain_data(chain, "t"), q, np.zeros(2),
                             np.zeros(2), dynamics.DEFAULT_GRAVITY, None, 1.5)
    assert isinstance(out, tuple) and out[1].shape == (1, 2)     # (qdd, pivots): flagged


def test_engine_unavailable_warns_once_and_numpy_runs(monkeypatch):
    monkeypatch.setattr(dynamics._recursions, "ENGINE", "auto")
    monkeypatch.setattr(dynamics._recursions, "_ENGINE_MODULE", [])

    def fail(source, prefix):
        raise codegen.CompileError("codegen: no C compiler found")
    monkeypatch.setattr(codegen, "compiled_module", fail)
    chain, q = models.planar_rr(1.0, 1.0, 1.0, 1.0), np.array([0.3, 0.2])
    with pytest.warns(RuntimeWarning, match="compiled engine is unavailable.*no C compiler"):
        M = dynamics.crba(chain, q)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_allclose(dynamics.crba(chain, q), M)      # no second warning
    monkeypatch.setattr(dynamics._recursions, "ENGINE", "numpy")
    np.testing.assert_allclose(dynamics.crba(chain, q), M)


@pytest.mark.parametrize("constant", [sp.I, sp.oo, -sp.oo, sp.zoo, sp.nan, sp.Float("inf"),
                                      2 + 3 * sp.I])
def test_printer_refuses_what_c_cannot_hold(constant):
    """The last line of defence behind compile_equations' checks: C would read I as 0."""
    with pytest.raises(ValueError, match="codegen: expected real finite constants"):
        codegen._Printer().doprint(constant * sp.Symbol("q"))


def test_printer_keeps_real_constants_exact():
    assert codegen._Printer().doprint(sp.Float(0.1) * sp.Symbol("q")) == "0.1*q"


# --------------------------------------------------------------------------
# batches: (B, n) states in one call, the same numbers as a loop over single states
# --------------------------------------------------------------------------

@pytest.mark.parametrize("backend", ["c", "lambdify"])
@pytest.mark.parametrize("name", ["ur5_like", "random_4"])
def test_batch_equals_loop(eoms, name, backend):
    chain, eom = eoms[name]
    num = eom.numeric(backend=backend)
    n, B = chain.n, 7
    Q, QD, T = np.random.default_rng(5).uniform(-1.5, 1.5, (3, B, n))
    for f, args, shape in (("M", (Q,), (B, n, n)), ("C", (Q, QD), (B, n, n)), ("G", (Q,), (B, n)),
                           ("tau", (Q, QD, T), (B, n)), ("forward_dynamics", (Q, QD, T), (B, n))):
        fn = getattr(num, f)
        got = fn(*args)
        assert got.shape == shape
        loop = np.array([fn(*[a[b] for a in args]) for b in range(B)])
        np.testing.assert_allclose(got, loop, rtol=1e-14, atol=1e-14 * np.abs(loop).max())
    # the shared numeric interface: accelerations and rhs of a batch
    acc = num.accelerations(Q, QD, 0.0, T)
    np.testing.assert_allclose(acc, num.forward_dynamics(Q, QD, T), rtol=1e-14, atol=1e-12)
    X = np.hstack([Q, QD])
    np.testing.assert_allclose(num.rhs(0.0, X), np.array([num.rhs(0.0, x) for x in X]),
                               rtol=1e-14, atol=1e-12)
    assert num.M(Q[:0]).shape == (0, n, n)              # an empty batch is a batch


@pytest.mark.parametrize("backend", ["c", "lambdify"])
def test_batch_refuses_a_bad_row(rr, backend):
    num = rr.numeric(backend=backend)
    Q = np.zeros((4, 2))
    Q[2, 1] = np.inf
    with pytest.raises(ValueError, match="forward_dynamics: q: expected finite numbers"):
        num.forward_dynamics(Q, np.zeros((4, 2)), np.zeros((4, 2)))


def test_batch_of_a_lambdified_mass_matrix_form():
    """The shared NumericForm of any MassMatrixForm (here Kane's) takes batches too."""
    from robodyn import kane
    form = kane.equations_of_motion(models.planar_rr(), gravity=G_PLANAR)
    num = form.numeric()
    assert num.vectorized
    Q, U, T = np.random.default_rng(2).uniform(-1, 1, (3, 5, 2))
    loop = np.array([num.accelerations(q, u, 0.0, t) for q, u, t in zip(Q, U, T)])
    np.testing.assert_allclose(num.accelerations(Q, U, 0.0, T), loop, rtol=1e-14, atol=1e-13)
    X = np.hstack([Q, U])
    np.testing.assert_allclose(num.rhs(0.0, X), np.array([num.rhs(0.0, x) for x in X]),
                               rtol=1e-14, atol=1e-13)
    with pytest.raises(ValueError, match="u: expected a batch of 5 states like the others"):
        num.accelerations(Q, U[:3])
