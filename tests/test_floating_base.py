"""Part VI, the compiled O(n) floating- and planar-base dynamics (``_engine.c``, ``vms_*``).

Checked against Pinocchio with a ``JointModelFreeFlyer`` / ``JointModelPlanar`` root
(``aba``, ``rnea``, ``crba``, generalized gravity; Pinocchio's base velocity is the body
twist in the base frame, ordered (v, omega)) and against the numpy forms of today
(``ROBODYN_ENGINE=numpy``), to 1e-12 relative to the size of the numbers compared.
"""
import numpy as np
import pinocchio as pin
import pytest
from scipy.spatial.transform import Rotation

import robodyn as rd
from robodyn import dynamics
from robodyn import port_hamiltonian as ph
from robodyn.port_hamiltonian import StandardForm, VehicleManipulator

import reference as ref

TOL = 1e-12          # relative: |ours - reference| <= TOL * max(1, |reference|)


def _box(m, dims):
    a, b, c = np.asarray(dims) ** 2
    return rd.spatial_inertia(m, m / 12 * np.array([b + c, a + c, a + b]))


def _base_inertia(rng):
    G = _box(rng.uniform(4, 40), rng.uniform(0.3, 1.0, 3))
    X = rd.adjoint(rd.inverse_homogeneous(rd.exp_se3(rng.normal(size=6) * 0.3)))
    return X.T @ G @ X


def _planar_inertia(rng):
    """Centre of mass in the base's plane of motion, principal axis along z."""
    G = _box(rng.uniform(4, 20), rng.uniform(0.3, 1.0, 3))
    X = rd.adjoint(rd.homogeneous(rd.rotation([0, 0, 1], rng.normal()),
                                  [*rng.normal(size=2) * 0.2, 0.0]))
    return X.T @ G @ X


ARMS = {"planar_rr": rd.models.planar_rr, "spatial_rrr": rd.models.spatial_rrr,
        "ur5_like": rd.models.ur5_like,
        "random_7": lambda: rd.models.random_chain(7, np.random.default_rng(7))}


def model(arm, base="floating", seed=0):
    rng = np.random.default_rng(seed)
    if base == "floating":
        return VehicleManipulator.from_chain(ARMS[arm](), _base_inertia(rng), "floating",
                                             mount=rd.exp_se3(rng.normal(size=6) * 0.4)), rng
    mount = rd.homogeneous(rd.rotation([0, 0, 1], 0.3), [0.4, 0.1, 0])
    return VehicleManipulator.from_chain(ARMS[arm](), _planar_inertia(rng), "planar",
                                         mount=mount), rng


def space_robot():
    """The book's space robot (Part VI, ch. 2): the UR5-like arm on a 40 kg box."""
    m = 40.0
    Ib = rd.spatial_inertia(m, m / 12 * np.array([0.52, 0.52, 0.72]))
    return VehicleManipulator.from_chain(rd.models.ur5_like(), Ib, "floating",
                                         mount=rd.homogeneous(np.eye(3), [0, 0, 0.2]))


def random_pose(vms, rng):
    if vms.nb == 6:
        return rd.exp_se3(rng.normal(size=6))
    return vms.base_joint.configuration(rng.normal(size=3))


def pin_config(vms, H, q):
    if vms.nb == 6:
        return np.concatenate([H[:3, 3], Rotation.from_matrix(H[:3, :3]).as_quat(), q])
    return np.concatenate([H[:2, 3], [H[0, 0], H[1, 0]], q])


def base_order(vms):
    """Indices of Pinocchio's velocity vector in our order (omega, v) / (omega_z, v_x, v_y)."""
    return np.r_[3, 4, 5, 0, 1, 2] if vms.nb == 6 else np.r_[2, 0, 1]


def to_pin(vms, x):
    """Our (base, joints) vector in Pinocchio's order."""
    P = np.r_[base_order(vms), vms.nb:vms.dof]
    out = np.empty(vms.dof)
    out[P] = x
    return out


def from_pin(vms, x):
    return np.asarray(x)[np.r_[base_order(vms), vms.nb:vms.dof]]


def err(a, b):
    return float(np.abs(np.asarray(a) - b).max() / max(1.0, np.abs(b).max()))


CASES = [(arm, base) for arm in ARMS for base in ("floating", "planar")
         if base == "floating" or arm == "planar_rr"]


@pytest.mark.equation("ph-21")
@pytest.mark.parametrize("engine", ["auto", "numpy"])
@pytest.mark.parametrize("arm,base", CASES)
def test_dynamics_equal_pinocchio(arm, base, engine, monkeypatch):
    """Both routes (compiled, and numpy alone) against Pinocchio."""
    monkeypatch.setattr(dynamics._recursions, "ENGINE", engine)
    vms, rng = model(arm, base)
    compiled = vms._compiled("vms_crba", np.zeros(vms.n)) is not None
    assert compiled == (engine == "auto"), "the compiled engine did not build on this machine"
    g = np.array([0.0, 0.0, -9.81]) if base == "floating" else np.array([0.0, -9.81, 0.0])
    mdl = ref.to_pinocchio_vms(vms, gravity=g)
    data = mdl.createData()
    std, stdg = StandardForm(vms), StandardForm(vms, gravity=g)
    nb, n = vms.nb, vms.n
    for _ in range(5):
        H = random_pose(vms, rng)
        q, v, qd = rng.normal(size=n), rng.normal(size=nb), rng.normal(size=n)
        w, tau = rng.normal(size=nb), rng.normal(size=n)
        vd, qdd = rng.normal(size=nb), rng.normal(size=n)
        qp, vp = pin_config(vms, H, q), to_pin(vms, np.r_[v, qd])
        # mass matrix (crba fills the upper triangle)
        Mp = pin.crba(mdl, data, qp)
        Mp = np.triu(Mp) + np.triu(Mp, 1).T
        P = np.r_[base_order(vms), nb:vms.dof]
        assert err(vms.mass_matrix(q), Mp[np.ix_(P, P)]) < TOL
        # forward dynamics, with and without gravity
        a = from_pin(vms, pin.aba(mdl, data, qp, vp, to_pin(vms, np.r_[w, tau])))
        assert err(stdg.accelerations(q, np.r_[v, qd], pose=H, w=w, tau=tau), a) < TOL
        mdl.gravity = pin.Motion.Zero()
        a0 = from_pin(vms, pin.aba(mdl, data, qp, vp, to_pin(vms, np.r_[w, tau])))
        assert err(std.accelerations(q, np.r_[v, qd], w=w, tau=tau), a0) < TOL
        # inverse dynamics and the bias (Coriolis and centrifugal) terms
        ap = to_pin(vms, np.r_[vd, qdd])
        assert err(vms.inverse_dynamics(q, v, qd, vd, qdd),
                   from_pin(vms, pin.rnea(mdl, data, qp, vp, ap))) < TOL
        assert err(vms.bias(q, v, qd),
                   from_pin(vms, pin.rnea(mdl, data, qp, vp, np.zeros(vms.dof)))) < TOL
        mdl.gravity = pin.Motion(g, np.zeros(3))
        assert err(vms.inverse_dynamics(q, v, qd, vd, qdd, base_pose=H, gravity=g),
                   from_pin(vms, pin.rnea(mdl, data, qp, vp, ap))) < TOL
        assert err(-vms.gravity_forces(q, H, g),
                   from_pin(vms, pin.computeGeneralizedGravity(mdl, data, qp))) < TOL


def _forms(vms, g):
    return [StandardForm(vms, g), ph.VMSForm(vms, g), ph.DecoupledForm(vms, g)]


@pytest.mark.equation("ph-21", "ph-47", "ph-49")
@pytest.mark.parametrize("arm,base", CASES)
def test_compiled_forms_equal_numpy_forms(arm, base, monkeypatch):
    """Every number the forms compute through the engine equals the numpy route's."""
    monkeypatch.setattr(dynamics._recursions, "ENGINE", "auto")
    vms, rng = model(arm, base, seed=3)
    g = (0.0, 0.0, -9.81)
    nb, n = vms.nb, vms.n
    H = random_pose(vms, rng)
    q, nu = rng.normal(size=n), rng.normal(size=vms.dof)
    u = (rng.normal(size=nb), rng.normal(size=n))

    def compute():
        out = [vms.mass_matrix(q), vms.bias(q, nu[:nb], nu[nb:]), vms.gravity_forces(q, H, g),
               vms.total_momentum(H, q, nu[:nb], nu[nb:]),
               vms.inverse_dynamics(q, nu[:nb], nu[nb:], u[0], u[1]),
               vms.inverse_dynamics(q, nu[:nb], nu[nb:], u[0], u[1], base_pose=H, gravity=g)]
        for gravity in (None, g):
            for f in _forms(vms, gravity):
                make = f.initial_state if isinstance(f, StandardForm) else f.state
                x = make(H, nu[:nb], q, nu[nb:])
                out += [f.rhs(0.0, x), f.rhs(0.0, x, u), f.energy(x),
                        f.accelerations(q, nu, pose=H, w=u[0], tau=u[1])]
                if isinstance(f, ph.VMSForm):
                    out += [f.hamiltonian(x), f.gradient(x)]
        out.append(StandardForm(vms, g).forcing(q, nu, pose=H))
        return out

    fast = compute()
    monkeypatch.setattr(dynamics._recursions, "ENGINE", "numpy")
    slow = compute()
    worst = max(err(a, b) for a, b in zip(fast, slow))
    assert worst < TOL, worst


@pytest.mark.equation("ph-49", "ph-62")
def test_compiled_coenergy_gradient_equals_mass_matrix_derivatives(monkeypatch):
    """dH/dq = -1/2 nu^T dM/dq nu (exact Lie-bracket derivatives) equals the engine's
    O(n) h_k^T ad_{t_k} s_k, for the book's space robot."""
    monkeypatch.setattr(dynamics._recursions, "ENGINE", "auto")
    vms = space_robot()
    f = ph.VMSForm(vms)
    rng = np.random.default_rng(4)
    for _ in range(5):
        x = f.state(np.eye(4), rng.normal(size=6), rng.normal(size=6), rng.normal(size=6))
        y = x[12:]
        E, g = f._energy_gradient(y)
        E0, g0, _, _ = f._reduced(y)
        assert abs(E - E0) < TOL * max(1.0, abs(E0)) and err(g, g0) < TOL


def test_compiled_path_declines_and_the_checks_still_refuse():
    """Input the engine does not take (lists, wrong sizes, non-finite numbers) goes to the
    checked path: the same numbers, or the same errors."""
    vms = space_robot()
    std = StandardForm(vms)
    q, nu = np.linspace(-1, 1, 6), np.linspace(-0.5, 0.5, 12)
    a = std.accelerations(q, nu)
    assert err(std.accelerations(list(q), list(nu)), a) < TOL
    assert err(std.accelerations(q.astype(">f8"), nu[::-1][::-1].astype(">f8")), a) < TOL
    assert err(std.accelerations(q, nu.reshape(-1, 1)), a) < TOL       # a column: checked path
    bad = nu.copy()
    bad[3] = np.nan
    with pytest.raises(ValueError, match="nu"):
        std.accelerations(q, bad)
    with pytest.raises(ValueError, match="nu"):
        std.accelerations(q, nu[:-1])
    x = std.initial_state(q=q, qd=nu[6:])
    with pytest.raises(ValueError, match="x"):
        std.rhs(0.0, x[:-1])
    with pytest.raises(ValueError, match="gravity"):
        vms.inverse_dynamics(q, nu[:6], nu[6:], nu[:6], nu[6:], gravity=(0, 0, -9.81))
    with pytest.raises(ValueError, match="qdd"):
        vms.inverse_dynamics(q, nu[:6], nu[6:], nu[:6], nu[:5])
    with pytest.raises(ValueError, match="base_pose"):
        vms.inverse_dynamics(q, nu[:6], nu[6:], nu[:6], nu[6:], base_pose=np.diag([1, 1, 2, 1]),
                             gravity=(0, 0, -9.81))
    with pytest.raises(TypeError, match="vd"):
        vms.inverse_dynamics(q, nu[:6], nu[6:], ["a"] * 6, nu[6:])
    with pytest.raises(ValueError, match="v "):
        vms.inverse_dynamics(q, nu[:5], nu[6:], nu[:6], nu[6:])


def test_space_robot_simulation_equals_numpy_route(monkeypatch):
    """1 s of the book's space robot (RK45 and the energy-momentum scheme): the compiled
    route follows the numpy route's trajectory."""
    vms = space_robot()
    std = StandardForm(vms)
    x_std = std.initial_state(v=[0.1, 0.0, -0.1, 0.05, 0.0, 0.0], qd=np.full(6, 0.5))
    f = ph.VMSForm(vms)
    x0 = f.state(np.eye(4), [0.04, -0.02, 0.06, 0.0, 0.1, 0.0], np.zeros(6), np.full(6, 0.5))
    runs = {}
    for engine in ("auto", "numpy"):
        monkeypatch.setattr(dynamics._recursions, "ENGINE", engine)
        runs[engine] = (ph.simulate(std, x_std, (0, 1.0), n_out=5),
                        ph.simulate(f, x0, (0, 0.3), method="energy-momentum", dt=0.05))
    for fast, slow in zip(runs["auto"], runs["numpy"]):
        assert np.abs(fast.x - slow.x).max() < 1e-9       # the integrators' own rounding
        assert fast.energy_error < 1e-8 and fast.momentum_error < 1e-8
