"""robodyn.derivatives: the analytic derivatives of inverse and forward dynamics.

Checked, for the compiled engine and for numpy alone, against two independent routes:
Pinocchio's computeRNEADerivatives / computeABADerivatives (fixed base, and a free-flyer or
planar root for the vehicle-manipulator systems) and central differences of robodyn's own
inverse and forward dynamics.
"""
import numpy as np
import pinocchio as pin
import pytest
import sympy as sp

import robodyn as rd
from robodyn import derivatives as dv
from robodyn import dynamics
from robodyn.port_hamiltonian import StandardForm

import reference as ref
from test_floating_base import base_order, model, pin_config, random_pose, to_pin

CHAINS = {"planar_rr": rd.models.planar_rr, "spatial_rrr": rd.models.spatial_rrr,
          "ur5_like": rd.models.ur5_like,
          "random_7": lambda: rd.models.random_chain(7, np.random.default_rng(7))}


def rel(a, b):
    return float(np.abs(np.asarray(a) - b).max() / max(1.0, np.abs(b).max()))


def sym(A):
    return np.triu(A) + np.triu(A, 1).T


@pytest.fixture(params=["auto", "numpy"])
def engine(request, monkeypatch):
    monkeypatch.setattr(dynamics._recursions, "ENGINE", request.param)
    return request.param


@pytest.mark.parametrize("name", CHAINS)
def test_fixed_base_equals_pinocchio(name, engine):
    chain = CHAINS[name]()
    rng = np.random.default_rng(1)
    n = chain.n
    g = np.array([0.4, -1.0, -9.81])
    mdl = ref.to_pinocchio(chain, gravity=g)
    data = mdl.createData()
    for _ in range(3):
        q, qd, x = rng.normal(size=(3, n))
        dq, dqd = dv.rnea_derivatives(chain, q, qd, x, gravity=g)
        pdq, pdqd, _ = pin.computeRNEADerivatives(mdl, data, q, qd, x)
        assert rel(dq, pdq) < 1e-12 and rel(dqd, pdqd) < 1e-12
        A, Bv, Minv = dv.aba_derivatives(chain, q, qd, x, gravity=g)
        pin.computeABADerivatives(mdl, data, q, qd, x)
        Mi = sym(data.Minv)
        scale = max(1.0, np.abs(Mi).max())           # Minv sets the size of everything here
        assert np.abs(Minv - Mi).max() < 1e-10 * scale
        assert np.abs(A - data.ddq_dq).max() < 1e-10 * scale * max(1, np.abs(pdq).max())
        assert np.abs(Bv - data.ddq_dv).max() < 1e-10 * scale * max(1, np.abs(pdqd).max())


@pytest.mark.parametrize("name", ["spatial_rrr", "random_7"])
def test_fixed_base_equals_central_differences(name, engine):
    """Independent of Pinocchio: the slopes of robodyn's own ID and FD."""
    chain = CHAINS[name]()
    rng = np.random.default_rng(2)
    n, h = chain.n, 1e-6
    q, qd, qdd, tau = rng.normal(size=(4, n))
    g = dynamics.DEFAULT_GRAVITY
    E = np.eye(n) * h

    def slope(f):
        return np.array([(f(E[k]) - f(-E[k])) / (2 * h) for k in range(n)]).T

    dq, dqd = dv.rnea_derivatives(chain, q, qd, qdd, g)
    assert rel(dq, slope(lambda e: rd.inverse_dynamics(chain, q + e, qd, qdd, g))) < 1e-6
    assert rel(dqd, slope(lambda e: rd.inverse_dynamics(chain, q, qd + e, qdd, g))) < 1e-6
    A, Bv, Minv = dv.aba_derivatives(chain, q, qd, tau, g)
    assert rel(A, slope(lambda e: rd.forward_dynamics(chain, q + e, qd, tau, g))) < 1e-5
    assert rel(Bv, slope(lambda e: rd.forward_dynamics(chain, q, qd + e, tau, g))) < 1e-5
    assert rel(Minv, slope(lambda e: rd.forward_dynamics(chain, q, qd, tau + e, g))) < 1e-5
    Aa, Ba = dv.linearized_dynamics(chain, q, qd, tau, g)
    assert np.array_equal(Aa[n:, :n], A) and np.array_equal(Aa[:n, n:], np.eye(n))
    assert np.array_equal(Ba[n:], Minv) and not Ba[:n].any()


@pytest.mark.parametrize("arm,base", [("ur5_like", "floating"), ("random_7", "floating"),
                                      ("planar_rr", "planar")])
def test_vms_equals_pinocchio(arm, base, engine):
    vms, rng = model(arm, base)
    nb, n = vms.nb, vms.n
    g = np.array([0.0, 0.0, -9.81]) if base == "floating" else np.array([0.0, -9.81, 0.0])
    mdl = ref.to_pinocchio_vms(vms, gravity=g)
    data = mdl.createData()
    P = np.r_[base_order(vms), nb:vms.dof]
    for _ in range(2):
        H = random_pose(vms, rng)
        q, qd, qdd, tau = rng.normal(size=(4, n))
        v, vd, w = rng.normal(size=(3, nb))
        qp, vp = pin_config(vms, H, q), to_pin(vms, np.r_[v, qd])
        dX, dV = dv.vms_rnea_derivatives(vms, q, v, qd, vd, qdd, base_pose=H, gravity=g)
        pdq, pdv, _ = pin.computeRNEADerivatives(mdl, data, qp, vp, to_pin(vms, np.r_[vd, qdd]))
        assert rel(dX, pdq[np.ix_(P, P)]) < 1e-12 and rel(dV, pdv[np.ix_(P, P)]) < 1e-12
        A, Bv, Minv = dv.vms_aba_derivatives(vms, q, v, qd, w, tau, base_pose=H, gravity=g)
        pin.computeABADerivatives(mdl, data, qp, vp, to_pin(vms, np.r_[w, tau]))
        Mi = sym(data.Minv)[np.ix_(P, P)]
        scale = max(1.0, np.abs(Mi).max())
        assert np.abs(Minv - Mi).max() < 1e-10 * scale
        assert rel(A, data.ddq_dq[np.ix_(P, P)]) < 1e-10 * scale
        assert rel(Bv, data.ddq_dv[np.ix_(P, P)]) < 1e-10 * scale


def test_vms_velocity_slope_equals_central_differences(engine):
    """The base-velocity and joint-rate columns, against StandardForm's own accelerations."""
    vms, rng = model("spatial_rrr", "floating", seed=4)
    f = StandardForm(vms)
    q, nu = rng.normal(size=vms.n), rng.normal(size=vms.dof)
    w, tau, h = rng.normal(size=vms.nb), rng.normal(size=vms.n), 1e-6
    _, Bv, Minv = dv.vms_aba_derivatives(vms, q, nu[:vms.nb], nu[vms.nb:], w, tau)
    E = np.eye(vms.dof) * h
    fd = np.array([(f.accelerations(q, nu + E[k], w=w, tau=tau)
                    - f.accelerations(q, nu - E[k], w=w, tau=tau)) / (2 * h)
                   for k in range(vms.dof)]).T
    assert rel(Bv, fd) < 1e-6
    assert np.allclose(Minv @ vms.mass_matrix(q), np.eye(vms.dof), atol=1e-10)


def test_bad_input_is_refused():
    chain = rd.models.planar_rr()
    z = np.zeros(2)
    with pytest.raises(TypeError, match="^rnea_derivatives: (chain: )?expected a SerialChain"):
        dv.rnea_derivatives("chain", z, z, z)
    with pytest.raises(ValueError, match="^rnea_derivatives: qd"):
        dv.rnea_derivatives(chain, z, np.zeros(3), z)
    with pytest.raises(ValueError, match="^aba_derivatives: tau"):
        dv.aba_derivatives(chain, z, z, [0.0, np.nan])
    with pytest.raises(TypeError, match="^aba_derivatives: q"):
        dv.aba_derivatives(chain, sp.symbols("a b"), z, z)
    with pytest.raises(ValueError, match="^aba_derivatives: gravity"):
        dv.aba_derivatives(chain, z, z, z, gravity=[0, np.inf, 0])
    with pytest.raises(ValueError, match="^linearized_dynamics: q"):
        dv.linearized_dynamics(chain, [0.0, 1.0, 2.0], z, z)
    vms, _ = model("planar_rr", "floating")
    with pytest.raises(ValueError, match="^vms_rnea_derivatives: base_pose"):
        dv.vms_rnea_derivatives(vms, z, np.zeros(6), z, np.zeros(6), z, gravity=[0, 0, -9.81])
    H = np.eye(4)
    H[0, 0] = 1.001                                   # not a rotation: refused, on every path
    with pytest.raises(ValueError, match="^vms_aba_derivatives: base_pose: expected a rigid"):
        dv.vms_aba_derivatives(vms, z, np.zeros(6), z, np.zeros(6), z, base_pose=H,
                               gravity=np.array([0, 0, -9.81]))
    with pytest.raises(TypeError, match="^vms_aba_derivatives: vms"):
        dv.vms_aba_derivatives(chain, z, np.zeros(6), z, np.zeros(6), z)


def test_singular_mass_matrix_is_refused(engine):
    """A slender rod on a joint about its own axis: M is singular, as forward_dynamics says."""
    chain = rd.SerialChain.from_screws(
        np.array([[1.0, 0, 0, 0, 0, 0]]).T, np.eye(4), [np.eye(4)], [rd.models.rod_inertia(1, 1)])
    with pytest.raises(ValueError, match="^aba_derivatives: q, qd, tau: .*mass matrix .* is singular"):
        dv.aba_derivatives(chain, np.zeros(1), np.zeros(1), np.ones(1))


def test_overflow_is_an_error_not_nan(engine):
    """Finite input whose result overflows: a ValueError on both paths, never NaN or inf."""
    chain, z = rd.models.planar_rr(), np.zeros(2)
    big = np.array([1e200, 0.0])
    for f, fname in ((lambda: rd.inverse_dynamics(chain, z, big, z), "inverse_dynamics"),
                     (lambda: rd.forward_dynamics(chain, z, big, z), "forward_dynamics"),
                     (lambda: dv.rnea_derivatives(chain, z, big, z), "rnea_derivatives"),
                     (lambda: dv.aba_derivatives(chain, z, big, z), "aba_derivatives")):
        with pytest.raises(ValueError, match=f"^{fname}: result: expected values of q, "):
            f()


BAD_ARRAYS = [
    lambda q: list(q),                              # not an array: the checked path converts
    lambda q: q.astype(np.float32),                 # another dtype
    lambda q: q.astype(">f8"),                      # another byte order
    lambda q: np.repeat(q, 2)[::2],                 # not contiguous
    lambda q: np.ma.masked_array(q),                # a subclass
    lambda q: np.where(np.arange(len(q)) == 1, np.nan, q),   # not finite
    lambda q: q[:-1],                               # wrong length
    lambda q: np.stack([q, q]),                     # a batch: these are one-state functions
]


@pytest.mark.parametrize("bad", BAD_ARRAYS)
@pytest.mark.parametrize("entry", ["rnea_derivatives", "aba_derivatives"])
def test_engine_declines_what_the_checks_would_change_or_refuse(entry, bad, monkeypatch):
    """The engine computes only on clean arrays; anything else goes to robodyn._value_checks."""
    monkeypatch.setattr(dynamics._recursions, "ENGINE", "auto")
    chain = rd.models.ur5_like()
    d, b = dynamics._recursions._fast(chain, "t")
    if b is None:
        pytest.skip("no C compiler here")
    q, qd, x = np.random.default_rng(3).normal(size=(3, 6))
    g = dynamics.DEFAULT_GRAVITY
    f = getattr(b[0], entry)
    assert isinstance(f(b[1], q, qd, x, g), tuple)
    for k in range(4):
        args = [q, qd, x, g]
        args[k] = bad(args[k])
        assert f(b[1], *args) is None, (entry, k)
    with pytest.raises(TypeError, match="chain handle"):
        f(d.basis, q, qd, x, g)                     # raw data: only the handle is taken


def test_coriolis_overflow_is_an_error(engine):
    with pytest.raises(ValueError, match="^coriolis_matrix: result: expected values of q, qd"):
        rd.coriolis_matrix(rd.models.planar_rr(), np.array([0.0, 1.0]), np.array([1e308, 1e308]))
