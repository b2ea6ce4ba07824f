"""Part VI: rigid bodies on SE(3), vehicle-manipulator systems and their port-Hamiltonian forms.

Every form's accelerations are compared with every other's and with Pinocchio's free-flyer
model; energy and momentum are checked along simulations; bad input is refused.
"""
import warnings

import numpy as np
import pinocchio as pin
import pytest
from scipy.spatial.transform import Rotation

import robodyn as rd
from robodyn import port_hamiltonian as ph
from robodyn.port_hamiltonian import _vms_forms as _ph_forms
from robodyn.port_hamiltonian import (SUBGROUPS, PlanarCoordinates, StandardForm, VehicleManipulator,
                             check_pose, coadjoint, planar_virtual_chain, euler_poincare, pose_error, rigid_body_step)

import reference as ref


# --------------------------------------------------------------------------- models

def _base_inertia(rng, offset=True):
    G = rd.spatial_inertia(rng.uniform(4, 9), rng.uniform(0.4, 0.9, 3))
    if offset:       # centre of mass away from the base frame, axes turned
        X = rd.adjoint(rd.inverse_homogeneous(rd.exp_se3(rng.normal(size=6) * 0.3)))
        G = X.T @ G @ X
    return G


def floating(n=4, seed=0):
    rng = np.random.default_rng(seed)
    chain = rd.models.random_chain(n, rng)
    return VehicleManipulator.from_chain(chain, _base_inertia(rng),
                                         mount=rd.exp_se3(rng.normal(size=6) * 0.4)), rng


def planar(seed=0):
    rng = np.random.default_rng(seed)
    mount = rd.homogeneous(rd.rotation([0, 0, 1], 0.3), [0.4, 0.1, 0])
    G = rd.spatial_inertia(8.0, [0.3, 0.3, 0.5])
    X = rd.adjoint(rd.homogeneous(np.eye(3), [-0.1, 0.05, 0]))
    return VehicleManipulator.from_chain(rd.models.planar_rr(), X.T @ G @ X, "planar",
                                         mount=mount), rng


def to_pinocchio_free_flyer(vms):
    """The VMS in Pinocchio: a free-flyer root carrying the base inertia, the arm's joints
    attached to it at mount @ (the reference joint frames)."""
    return ref.to_pinocchio_vms(vms)


def _pin_config(H, q):
    return np.concatenate([H[:3, 3], Rotation.from_matrix(H[:3, :3]).as_quat(), q])


def _perm(n):
    """Our (omega, v, q) order from Pinocchio's (v, omega, q)."""
    return np.r_[3, 4, 5, 0, 1, 2, 6:6 + n]


def _swap(x):
    return np.concatenate([x[3:6], x[:3], x[6:]])


# --------------------------------------------------------------------------- Pinocchio

@pytest.mark.equation("ph-21")
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_locked_mass_matrix_and_accelerations_equal_pinocchio_free_flyer(seed):
    vms, rng = floating(n=3 + seed, seed=seed)
    model = to_pinocchio_free_flyer(vms)
    data = model.createData()
    n = vms.n
    for _ in range(3):
        H = rd.exp_se3(rng.normal(size=6))
        q, v, qd = rng.normal(size=n), rng.normal(size=6), rng.normal(size=n)
        w, tau = rng.normal(size=6), rng.normal(size=n)
        qp = _pin_config(H, q)
        Mp = pin.crba(model, data, qp)
        Mp = np.triu(Mp) + np.triu(Mp, 1).T
        P = _perm(n)
        assert np.abs(vms.mass_matrix(q) - Mp[np.ix_(P, P)]).max() < 1e-11
        a = pin.aba(model, data, qp, _swap(np.r_[v, qd]), _swap(np.r_[w, tau]))
        ours = StandardForm(vms).accelerations(q, np.r_[v, qd], w=w, tau=tau)
        assert np.abs(ours - a[P]).max() < 1e-10
        # the blocks, in their places
        Mb, Mbm, Mm = vms.mass_blocks(q)
        assert np.allclose(Mm, rd.crba(vms.chain, q), atol=1e-12)
        assert Mb.shape == (6, 6) and Mbm.shape == (6, n)


def test_gravity_forces_equal_pinocchio():
    vms, rng = floating(n=3, seed=5)
    model = to_pinocchio_free_flyer(vms)
    model.gravity = pin.Motion(np.array([0, 0, -9.81]), np.zeros(3))
    data = model.createData()
    H, q = rd.exp_se3(rng.normal(size=6)), rng.normal(size=3)
    g = pin.computeGeneralizedGravity(model, data, _pin_config(H, q))
    assert np.abs(-vms.gravity_forces(q, H, (0, 0, -9.81)) - g[_perm(3)]).max() < 1e-10


# --------------------------------------------------------------------------- kinematics

def test_mass_matrix_is_the_kinetic_energy_of_the_bodies():
    vms, rng = floating(n=4, seed=3)
    q, v, qd = rng.normal(size=4), rng.normal(size=6), rng.normal(size=4)
    nu = np.r_[v, qd]
    assert abs(0.5 * nu @ vms.mass_matrix(q) @ nu - vms.kinetic_energy(q, v, qd)) < 1e-11
    M = vms.mass_matrix(q)
    assert np.allclose(M, M.T) and np.linalg.eigvalsh(M).min() > 0


def test_mass_matrix_derivatives_exact():
    vms, rng = floating(n=4, seed=4)
    q = rng.normal(size=4)
    dM = vms.mass_matrix_derivatives(q)
    assert np.abs(dM - _ph_forms._complex_step_dM(vms, q)).max() < 1e-11


def test_end_effector_and_link_poses_follow_the_base():
    vms, rng = floating(n=3, seed=6)
    q, H = rng.normal(size=3), rd.exp_se3(rng.normal(size=6))
    E = vms.end_effector_pose(q, H)
    assert np.allclose(E, H @ vms.mount @ rd.fk_space(vms.chain, q), atol=1e-12)
    L = vms.link_poses(q, H)
    assert np.allclose(L, H @ vms.mount @ rd.link_poses(vms.chain, q), atol=1e-12)
    # end-effector Jacobian by a finite difference of the pose along the motion
    v, qd = rng.normal(size=6), rng.normal(size=3)
    h = 1e-6
    E2 = vms.end_effector_pose(q + h * qd, H @ rd.exp_se3(h * v))
    E1 = vms.end_effector_pose(q - h * qd, H @ rd.exp_se3(-h * v))
    Vb = rd.vee(np.linalg.inv(E) @ (E2 - E1) / (2 * h))
    assert np.abs(Vb - vms.end_effector_jacobian(q) @ np.r_[v, qd]).max() < 1e-6


def test_total_momentum_is_the_sum_of_body_momenta():
    vms, rng = floating(n=3, seed=7)
    H, q, v, qd = rd.exp_se3(rng.normal(size=6)), *rng.normal(size=(1, 3)), rng.normal(size=6), rng.normal(size=3)
    V = vms.link_twists(q, v, qd)
    T = vms.link_poses(q, H)
    mu = rd.transform_wrench(H, vms.base_inertia @ v)
    for i in range(3):
        mu = mu + rd.transform_wrench(T[i], vms.chain.link_inertias[i] @ V[i])
    assert np.abs(vms.total_momentum(H, q, v, qd) - mu).max() < 1e-11


# --------------------------------------------------------------------------- rigid body

def test_euler_poincare_is_euler_and_newton():
    rng = np.random.default_rng(0)
    I = rd.spatial_inertia(2.0, [0.2, 0.3, 0.4])
    V = rng.normal(size=6)
    a = euler_poincare(I, V)
    w, v = V[:3], V[3:]
    J = np.diag([0.2, 0.3, 0.4])
    assert np.allclose(a[:3], np.linalg.solve(J, np.cross(J @ w, w)))
    assert np.allclose(a[3:], np.cross(v, w))


def test_rigid_body_on_se3_stays_a_rigid_motion_and_conserves():
    I = rd.spatial_inertia(3.0, [0.1, 0.25, 0.3])
    H, V = np.eye(4), np.array([0.3, 2.0, 0.1, 0.5, 0.0, -0.2])  # near the unstable axis
    E0 = 0.5 * V @ I @ V
    mu0 = rd.transform_wrench(H, I @ V)
    worst = 0.0
    for _ in range(5000):
        H, V = rigid_body_step(H, V, 0.005, lambda H, V: euler_poincare(I, V))
        worst = max(worst, pose_error(H))
    assert worst < 1e-12
    assert abs(0.5 * V @ I @ V - E0) < 1e-6
    assert np.abs(rd.transform_wrench(H, I @ V) - mu0).max() < 1e-6


@pytest.mark.equation("ph-36", "ph-37")
def test_lie_poisson_base_form():
    I = rd.spatial_inertia(3.0, [0.1, 0.25, 0.3])
    body = ph.BaseForm(I)
    rng = np.random.default_rng(1)
    x = body.state(rd.exp_se3(rng.normal(size=6)), rng.normal(size=6))
    J = body.interconnection(x)
    assert np.allclose(J, -J.T)
    xd = body.rhs(0.0, x)
    v = np.linalg.solve(I, x[12:])
    assert np.allclose(xd[12:], I @ euler_poincare(I, v))
    assert abs(np.linalg.solve(I, x[12:]) @ xd[12:]) < 1e-12          # H constant
    from scipy.integrate import solve_ivp
    sol = solve_ivp(body.rhs, (0, 2), x, rtol=1e-11, atol=1e-12)
    assert np.abs(body.momentum(sol.y[:, -1]) - body.momentum(x)).max() < 1e-8


def test_subgroups():
    rng = np.random.default_rng(2)
    for name, G in SUBGROUPS.items():
        p = rng.normal(size=G.dim)
        P = G.coadjoint(p)
        assert np.allclose(P, -P.T)
        x = rng.normal(size=G.dim) if name != "floating" else rd.exp_se3(rng.normal(size=6))
        assert G.contains(G.configuration(x))
    assert not SUBGROUPS["planar"].contains(rd.exp_se3([0.3, 0, 0, 0, 0, 0]))
    assert not SUBGROUPS["revolute"].contains(rd.exp_se3([0, 0, 0.3, 0.1, 0, 0]))
    assert np.allclose(coadjoint([1, 2, 3, 4, 5, 6]) @ np.arange(6.0),
                       rd.ad(np.arange(6.0)).T @ np.arange(1, 7.0))


def test_cayley_motion_is_the_cayley_of_ad():
    rng = np.random.default_rng(3)
    for _ in range(20):
        xi = rng.normal(size=6) * rng.uniform(0.01, 3)
        A = rd.ad(xi)
        F = ph.cayley_motion(xi)
        assert pose_error(F) < 1e-13
        assert np.allclose(rd.adjoint(F), np.linalg.solve(np.eye(6) - A / 2, np.eye(6) + A / 2))


# --------------------------------------------------------------------------- equivalence

def _forms(vms, gravity=None):
    return [StandardForm(vms, gravity), ph.VMSForm(vms, gravity), ph.DecoupledForm(vms, gravity),
            ph.ReducedEulerLagrange(vms, gravity), ph.BoltzmannHamel(vms, gravity)]


@pytest.mark.equation("ph-21", "ph-47", "ph-49", "ph-59", "ph-60", "ph-62", "ph-68", "ph-85",
                      "ph-87", "ph-89")
@pytest.mark.parametrize("kind", ["floating", "planar", "floating-gravity"])
def test_all_forms_give_the_same_accelerations(kind):
    vms, rng = planar() if kind == "planar" else floating(n=4, seed=8)
    gravity = (0, 0, -9.81) if "gravity" in kind else None
    forms = _forms(vms, gravity)
    for _ in range(4):
        q, nu = rng.normal(size=vms.n), rng.normal(size=vms.dof)
        w, tau = rng.normal(size=vms.nb), rng.normal(size=vms.n)
        H = vms.base_joint.configuration(rng.normal(size=3)) if vms.nb == 3 else rd.exp_se3(rng.normal(size=6))
        acc = [f.accelerations(q, nu, pose=H, w=w, tau=tau) for f in forms]
        for a in acc[1:]:
            assert np.abs(a - acc[0]).max() < 1e-10


@pytest.mark.equation("ph-87")
def test_the_sign_of_reference_28_changes_the_motion_and_makes_energy():
    vms, rng = floating(n=3, seed=9)
    good, bad = ph.ReducedEulerLagrange(vms), ph.ReducedEulerLagrange(vms, sign=1)
    q, nu = rng.normal(size=3), rng.normal(size=9)
    assert np.abs(good.accelerations(q, nu) - bad.accelerations(q, nu)).max() > 1e-3
    x = bad.state(np.eye(4), nu[:6], q, nu[6:])
    # dE/dt along the wrong equations, without inputs: -2 qd^T E_b^T vhat, not zero
    h = 1e-6
    xp, xm = x + h * bad.rhs(0, x), x - h * bad.rhs(0, x)
    rate = (bad.energy(xp) - bad.energy(xm)) / (2 * h)
    m = bad.matrices(q, x[12:18], nu[6:])
    assert abs(rate - (-2 * nu[6:] @ m["E_b"].T @ x[12:18])) < 1e-5
    assert abs(rate) > 1e-3
    xg = good.state(np.eye(4), nu[:6], q, nu[6:])
    rate_good = (good.energy(xg + h * good.rhs(0, xg)) - good.energy(xg - h * good.rhs(0, xg))) / (2 * h)
    assert abs(rate_good) < 1e-6


@pytest.mark.equation("ph-21", "ph-47", "ph-59", "ph-85")
def test_all_forms_give_the_same_trajectory():
    vms, rng = floating(n=3, seed=10)
    H0, v0, q0, qd0 = rd.exp_se3(rng.normal(size=6)), rng.normal(size=6), rng.normal(size=3), rng.normal(size=3)
    tau = lambda t, x: (np.zeros(6), np.sin(3 * t) * np.ones(3))
    ends = []
    for f in _forms(vms)[:4]:
        x0 = f.initial_state(H0, v0, q0, qd0) if isinstance(f, StandardForm) else f.state(H0, v0, q0, qd0)
        tr = ph.simulate(f, x0, (0, 1.0), inputs=tau, rtol=1e-11, atol=1e-12, n_out=3,
                         momentum=False)
        vel = f.velocities(tr.x[-1])
        ends.append(np.concatenate([tr.x[-1][:12], vel, tr.x[-1][12 + 6:12 + 9]]))
    for e in ends[1:]:
        assert np.abs(e - ends[0]).max() < 1e-7


@pytest.mark.equation("ph-23", "ph-24")
def test_fixed_base_form_equals_lagrange():
    chain = rd.models.planar_rr()
    form = ph.FixedBaseForm(chain, gravity=(0, -9.81, 0))
    eom = rd.equations_of_motion(chain, gravity=(0, -9.81, 0)).numeric()
    assert rd.max_difference(form.numeric_form(), eom) < 1e-10
    J = form.interconnection()
    assert np.allclose(J, -J.T)


@pytest.mark.equation("ph-31", "ph-33")
def test_fixed_base_ports_balance():
    chain = rd.models.spatial_rrr()
    form = ph.FixedBaseForm(chain, gravity=(0, 0, -9.81))
    rng = np.random.default_rng(11)
    x = form.state(rng.normal(size=3), rng.normal(size=3))
    tau_act, W = rng.normal(size=3), rng.normal(size=6)
    P = form.ports(x, tau_act, W)
    assert abs(P["residual"]) < 1e-11 and abs(P["interconnection"]) < 1e-12
    # gravity port = -dV/dt by a finite difference of the potential
    q, qd = x[:3], form.outputs(x)
    h = 1e-6
    dV = (form.potential_energy(q + h * qd) - form.potential_energy(q - h * qd)) / (2 * h)
    assert abs(P["gravity"] + dV) < 1e-6
    assert abs(P["kinetic"] - P["actuators"] - P["interaction"] - P["gravity"]) < 1e-11


@pytest.mark.equation("ph-28", "ph-29")
def test_fixed_base_kinetic_power_and_the_ports_of_tau():
    """(28): dH_kin/dt = qdot^T tau along (23), with H_kin = 1/2 qdot^T M qdot from Part II's
    CRBA and its rate by a central difference along the flow; (29): the power of tau splits
    into the motors', the wrench's <W|J_e qdot> and -dH_pot/dt (a central difference of the
    potential along qdot)."""
    chain = rd.models.spatial_rrr()
    form = ph.FixedBaseForm(chain, gravity=(0, 0, -9.81))
    rng = np.random.default_rng(28)
    kinetic = lambda x: 0.5 * form.outputs(x) @ rd.crba(chain, x[:3]) @ form.outputs(x)
    h = 1e-6
    for _ in range(3):
        x = form.state(rng.normal(size=3), rng.normal(size=3))
        tau_act, W = rng.normal(size=3), rng.normal(size=6)
        xd = form.rhs(0.0, x, (tau_act, W))
        tau, qd, q = form.input_torque(x, tau_act, W), form.outputs(x), x[:3]
        rate = (kinetic(x + h * xd) - kinetic(x - h * xd)) / (2 * h)
        assert abs(rate - qd @ tau) < 1e-6 * (1 + abs(rate))                       # (28)
        dV = (form.potential_energy(q + h * qd) - form.potential_energy(q - h * qd)) / (2 * h)
        V_e = rd.jacobian_body(chain, q) @ qd
        assert abs(tau @ qd - (tau_act @ qd + W @ V_e - dV)) < 1e-6 * (1 + abs(dV))  # (29)


@pytest.mark.equation("ph-45", "ph-46")
def test_power_balance_against_pinocchio_kinetic_energy():
    """(45)/(46): the rate of the kinetic energy along the VMS dynamics is the supplied power
    <w|v> + <tau|qdot>, with the energy computed by Pinocchio (free-flyer model) and its rate
    by a central difference along the flow of (47)."""
    vms, rng = floating(n=4, seed=45)
    form = ph.VMSForm(vms)
    model = to_pinocchio_free_flyer(vms)
    data = model.createData()

    def energy(x):                       # the pose does not enter the kinetic energy
        nu = form.velocities(x)
        return pin.computeKineticEnergy(model, data, _pin_config(np.eye(4), x[18:22]),
                                        _swap(nu))
    h = 1e-6
    for _ in range(3):
        x = form.state(rd.exp_se3(rng.normal(size=6)), rng.normal(size=6), rng.normal(size=4),
                       rng.normal(size=4))
        u = (rng.normal(size=6), rng.normal(size=4))
        xd = form.rhs(0, x, u)
        rate = (energy(x + h * xd) - energy(x - h * xd)) / (2 * h)
        w, tau = u
        nu = form.velocities(x)
        assert abs(energy(x) - form.hamiltonian(x)) < 1e-10 * (1 + energy(x))
        assert abs(rate - (w @ nu[:6] + tau @ nu[6:])) < 1e-6 * (1 + abs(rate))


@pytest.mark.equation("ph-21")
def test_planar_vms_equals_lagrange_with_virtual_base_joints():
    vms, rng = planar()
    eom = rd.equations_of_motion(planar_virtual_chain(vms), gravity=(0, 0, -9.81)).numeric()
    form = PlanarCoordinates(vms, gravity=(0, 0, -9.81))
    assert rd.max_difference(form, eom, tau=False) < 1e-7     # the virtual links' 1e-9 masses
    # with inputs: world forces (f_x, f_y, m_z) are the body wrench (m_z, R^T (f_x, f_y))
    for _ in range(3):
        qc, qdc, tau = rng.normal(size=5), rng.normal(size=5), rng.normal(size=5)
        th = qc[2]
        R = np.array([[np.cos(th), -np.sin(th)], [np.sin(th), np.cos(th)]])
        ours = form.coordinate_accelerations(qc, qdc, tau=np.r_[tau[2], R.T @ tau[:2], tau[3:]])
        assert np.abs(ours - eom.coordinate_accelerations(qc, qdc, tau=tau)).max() < 1e-7


# --------------------------------------------------------------------------- energy and momentum

@pytest.mark.equation("ph-45", "ph-46", "ph-47", "ph-49", "ph-50")
def test_power_balance_at_states():
    vms, rng = floating(n=4, seed=12)
    form = ph.VMSForm(vms)
    for _ in range(3):
        x = form.state(rd.exp_se3(rng.normal(size=6)), rng.normal(size=6), rng.normal(size=4),
                       rng.normal(size=4))
        u = (rng.normal(size=6), rng.normal(size=4))
        e = form.gradient(x)
        xd = form.rhs(0, x, u)[12:]
        assert abs(e @ xd - form.supplied_power(0, x, u)) < 1e-10
        assert abs(e @ form.interconnection(x) @ e) < 1e-10
        assert np.allclose(form.outputs(x), form.velocities(x))
    dform = ph.DecoupledForm(vms)
    x = dform.state(np.eye(4), rng.normal(size=6), rng.normal(size=4), rng.normal(size=4))
    e = dform.gradient(x)
    assert abs(e @ dform.rhs(0, x, u)[12:] - dform.supplied_power(0, x, u)) < 1e-10
    J = dform.interconnection(x)
    assert np.allclose(J, -J.T)


@pytest.mark.equation("ph-55", "ph-59", "ph-60", "ph-68")
def test_decoupled_change_of_coordinates():
    vms, rng = floating(n=3, seed=13)
    f47, f59 = ph.VMSForm(vms), ph.DecoupledForm(vms)
    H, v, q, qd = np.eye(4), rng.normal(size=6), rng.normal(size=3), rng.normal(size=3)
    x, xh = f47.state(H, v, q, qd), f59.state(H, v, q, qd)
    P = f59.parts(q, x[12:18])
    A = P["A"]
    assert np.allclose(xh[12:18], x[12:18])                      # p_hat = p
    assert np.allclose(xh[21:], x[21:] - A.T @ x[12:18])         # pi_hat = pi - A^T p
    assert abs(f47.hamiltonian(x) - f59.hamiltonian(xh)) < 1e-12
    Phi = P["Phi"]
    assert np.allclose(f59.interconnection(xh), Phi @ f47.interconnection(x) @ Phi.T, atol=1e-11)
    assert np.allclose(f59.input_matrix(xh), Phi @ f47.input_matrix(), atol=1e-12)
    # Phi is the derivative of (p, q, pi) -> (p, q, pi - A(q)^T p), by central differences
    y = x[12:]
    J = np.zeros((12, 12))
    for k in range(12):
        e = np.zeros(12)
        e[k] = 1e-7
        J[:, k] = (_to_hat(vms, y + e) - _to_hat(vms, y - e)) / 2e-7
    assert np.abs(J - Phi).max() < 1e-6
    # the reduced inertia is the Schur complement, and the locked velocity vanishes with p
    Mb, Mbm, Mm = vms.mass_blocks(q)
    assert np.allclose(P["M_hat"], Mm - Mbm.T @ np.linalg.solve(Mb, Mbm))
    assert np.allclose(f59.locked_velocity(q, -A @ qd, qd), 0)


def _to_hat(vms, y):
    b, n = vms.nb, vms.n
    Mb, Mbm, _ = vms.mass_blocks(y[b:b + n])
    A = np.linalg.solve(Mb, Mbm)
    return np.concatenate([y[:b], y[b:b + n], y[b + n:] - A.T @ y[:b]])


@pytest.mark.equation("ph-50")
def test_energy_momentum_scheme_conserves_and_balances():
    vms, rng = floating(n=3, seed=14)
    form = ph.VMSForm(vms)
    x0 = form.state(rd.exp_se3(rng.normal(size=6)), rng.normal(size=6) * 0.3, rng.normal(size=3),
                    rng.normal(size=3))
    em = ph.simulate(form, x0, (0, 2.0), method="energy-momentum", dt=0.05)
    assert em.energy_error < 1e-11
    assert em.momentum_error < 1e-11
    assert em.pose_error.max() < 1e-12
    rk = ph.simulate(form, x0, (0, 2.0), rtol=1e-6, atol=1e-8, n_out=20)
    assert rk.energy_error > 100 * em.energy_error       # RK45 drifts, the scheme does not
    # with inputs: E(t) - E(0) = the supplied energy, to rounding
    u = lambda t, x: (0.3 * np.cos(t) * np.ones(6), np.sin(2 * t) * np.ones(3))
    em = ph.simulate(form, x0, (0, 1.0), method="energy-momentum", dt=0.05, inputs=u)
    assert em.energy_error < 1e-11
    assert abs(em.supplied[-1]) > 1e-2
    rk = ph.simulate(form, x0, (0, 1.0), inputs=u, rtol=1e-10, atol=1e-12, n_out=400)
    assert rk.energy_error < 1e-7
    assert np.abs(rk.x[-1][12:] - em.x[-1][12:]).max() < 0.05       # same motion (2nd order, h = 0.05)


def test_planar_one_link_zero_momentum_base_turn_closed_form():
    # base: mass m0, inertia I0 about its centre (the base origin); link: joint at distance d,
    # centre of mass at c along the link, mass m1, inertia I1
    m0, I0, m1, I1, d, c = 6.0, 0.8, 1.5, 0.05, 0.4, 0.35
    arm = rd.SerialChain.from_screws(
        np.array([rd.revolute_screw([0, 0, 1], [0, 0, 0])]).T, rd.homogeneous(np.eye(3), [2 * c, 0, 0]),
        [rd.homogeneous(np.eye(3), [c, 0, 0])], [rd.spatial_inertia(m1, [I1, I1, I1])])
    vms = VehicleManipulator.from_chain(arm, rd.spatial_inertia(m0, [I0, I0, I0]), "planar",
                                        mount=rd.homogeneous(np.eye(3), [d, 0, 0]))
    form = ph.VMSForm(vms)
    # zero momentum: v = -A qd
    q0, qd0 = 0.0, 0.8
    Mb, Mbm, _ = vms.mass_blocks([q0])
    x0 = form.state(np.eye(4), -np.linalg.solve(Mb, Mbm @ [qd0]), [q0], [qd0])
    tr = ph.simulate(form, x0, (0, 2.0), method="energy-momentum", dt=0.01)
    q1 = tr.x[-1][15]
    R = tr.x[-1][:9].reshape(3, 3)
    theta = np.arctan2(R[1, 0], R[0, 0])
    mu = m0 * m1 / (m0 + m1)
    a, bb = I1 + mu * c ** 2, mu * d * c
    al, be = I0 + I1 + mu * (d ** 2 + c ** 2), 2 * mu * d * c

    def F(q):  # integral of (a + bb cos q) / (al + be cos q)
        k = np.sqrt(al ** 2 - be ** 2)
        return (bb / be) * q + (a - bb * al / be) * 2 / k * np.arctan(np.sqrt((al - be) / (al + be)) * np.tan(q / 2))

    assert abs(q1) < np.pi - 0.1           # one branch of tan(q/2)
    assert abs(theta - (-(F(q1) - F(q0)))) < 1e-5
    assert np.abs(tr.momentum).max() < 1e-12


# --------------------------------------------------------------------------- bad input

def test_bad_input():
    chain = rd.models.planar_rr()
    G = rd.spatial_inertia(5.0, [1, 1, 1])
    with pytest.raises(ValueError, match="mount: expected a 4x4 pose"):
        VehicleManipulator.from_chain(chain, G, mount=np.eye(3))
    with pytest.raises(ValueError, match="mount: expected a rigid motion"):
        VehicleManipulator.from_chain(chain, G, mount=2 * np.eye(4))
    with pytest.raises(ValueError, match="base_inertia: expected a symmetric"):
        bad = G.copy()
        bad[0, 1] = 0.3
        VehicleManipulator.from_chain(chain, bad)
    with pytest.raises(ValueError, match="base_inertia: expected a positive mass"):
        VehicleManipulator.from_chain(chain, -G)
    with pytest.raises(ValueError, match="triangle inequality"):
        VehicleManipulator.from_chain(chain, np.diag([1.0, 1.0, 5.0, 2, 2, 2]))
    with pytest.raises(ValueError, match="base_inertia: expected a 6x6"):
        VehicleManipulator.from_chain(chain, np.eye(3))
    with pytest.raises(ValueError, match="base_joint: expected 'floating' or 'planar'"):
        VehicleManipulator.from_chain(chain, G, base_joint="wheeled")
    with pytest.raises(TypeError, match="base_joint"):
        VehicleManipulator.from_chain(chain, G, base_joint=3)
    with pytest.raises(TypeError, match="chain: expected a SerialChain"):
        VehicleManipulator.from_chain("arm", G)
    vms = VehicleManipulator.from_chain(chain, G)
    f = StandardForm(vms)
    with pytest.raises(ValueError, match="(pose: expected a rigid motion|pose.*expected a rotation matrix)"):
        f.initial_state(pose=np.diag([1, 1, 2, 1.0]))
    with pytest.raises(ValueError, match="(pose: expected a rigid motion|pose.*expected a rotation matrix)"):
        check_pose(np.diag([1, 1, -1, 1.0]), "f: pose")
    with pytest.raises(ValueError, match="q \\(2 joint values\\): expected a vector of length 2"):
        vms.mass_matrix([0.1])
    form = ph.VMSForm(vms)
    with pytest.raises(ValueError, match="x \\(pose 12"):
        form.hamiltonian(np.zeros(5))
    with pytest.raises(ValueError, match="sign: expected -1"):
        ph.ReducedEulerLagrange(vms, sign=2)
    x0 = form.state(np.eye(4), np.zeros(6), [0, 0], [0, 0])
    with pytest.raises(ValueError, match="method: expected 'RK45' or 'energy-momentum'"):
        ph.simulate(form, x0, (0, 1), method="euler")
    with pytest.raises(ValueError, match="dt: needed"):
        ph.simulate(form, x0, (0, 1), method="energy-momentum")
    with pytest.raises(ValueError, match="gravity makes the potential"):
        ph.energy_momentum_step(ph.VMSForm(vms, (0, 0, -9.81)), x0, 0.1)
    with pytest.raises(ValueError, match="t_span: expected t1 > t0"):
        ph.simulate(form, x0, (1, 0))
    bad = x0.copy()
    bad[0] = 3.0
    with pytest.raises(ValueError, match="base pose.*rigid motion"):
        ph.simulate(form, bad, (0, 1))
    with pytest.raises(ValueError, match="pose: needed when there is gravity"):
        StandardForm(vms, (0, 0, -9.81)).forcing([0, 0], np.zeros(8))
    with pytest.raises(TypeError, match="PlanarCoordinates"):
        PlanarCoordinates(vms)
    with pytest.raises(ValueError, match="base_joint"):
        ph.BaseForm(G, "revolute")


def test_convergence_warning_for_a_huge_step():
    vms, rng = floating(n=3, seed=15)
    form = ph.VMSForm(vms)
    x0 = form.state(np.eye(4), rng.normal(size=6) * 3, rng.normal(size=3), rng.normal(size=3) * 5)
    with pytest.warns(ph.ConvergenceWarning, match="no convergence"):
        ph.energy_momentum_step(form, x0, 0.2, max_iter=2)


@pytest.mark.equation("ph-74", "ph-75", "ph-76", "ph-77")
def test_lemma_identities_of_the_reduced_mass_matrices():
    vms, rng = floating(n=4, seed=16)
    f85 = ph.ReducedEulerLagrange(vms)
    q, vh, qd = rng.normal(size=4), rng.normal(size=6), rng.normal(size=4)
    m = f85.matrices(q, vh, qd)
    P = ph.DecoupledForm(vms).parts(q)
    Mhd = np.einsum("kij,k->ij", P["dM_hat"], qd)
    Mbd = np.einsum("kij,k->ij", P["dM_b"], qd)
    assert np.allclose(Mhd @ qd, (m["C_m"] + m["C_m"].T) @ qd, atol=1e-11)              # (74)
    assert np.allclose(np.einsum("kij,i,j->k", P["dM_hat"], qd, qd), 2 * m["C_m"].T @ qd, atol=1e-11)
    assert np.allclose(Mbd @ vh, m["E_b"] @ qd + m["P_b"] @ vh, atol=1e-11)              # (76)
    assert np.allclose(np.einsum("kij,i,j->k", P["dM_b"], vh, vh), 2 * m["E_b"].T @ vh, atol=1e-11)
    C2 = m["C2"]
    assert np.allclose(C2, -C2.T)
    # the quadratic form of C1 is that of (1/2) dM_hat/dt: no work by the skew pair
    nu = np.r_[vh, qd]
    Mdot = np.block([[Mbd, np.zeros((6, 4))], [np.zeros((4, 6)), Mhd]])
    assert abs(nu @ (0.5 * Mdot - m["C1"]) @ nu) < 1e-10
    bad = ph.ReducedEulerLagrange(vms, sign=1).matrices(q, vh, qd)
    assert abs(nu @ (0.5 * Mdot - bad["C1"]) @ nu + 2 * qd @ m["E_b"].T @ vh) < 1e-10


def test_divergence_of_the_implicit_step_is_an_error():
    vms, rng = floating(n=3, seed=17)
    form = ph.VMSForm(vms)
    x0 = form.state(np.eye(4), np.zeros(6), rng.normal(size=3), np.zeros(3))
    stiff = lambda t, x: (np.zeros(6), -1e5 * form.velocities(x)[6:])
    with pytest.raises(RuntimeError, match="diverged.*take a smaller step"):
        ph.energy_momentum_step(form, x0 + np.r_[np.zeros(12), np.ones(12)], 0.5, inputs=stiff)


@pytest.mark.equation("ph-47")
@pytest.mark.parametrize("kind", ["floating", "planar"])
def test_ph47_accelerations_fast_path_equal_the_standard_form_and_dM(kind):
    """(ph-47) accelerations on clean arrays (the compiled route: dM/dt = C + C^T of the
    virtual chain) against the standard form's ABA, against the exact dM/dq of
    mass_matrix_derivatives, on lists (the checked route) and with the engine off."""
    from robodyn import dynamics
    vms, rng = planar() if kind == "planar" else floating(n=4, seed=3)
    f47, std = ph.VMSForm(vms), StandardForm(vms)
    for _ in range(3):
        q, nu = rng.normal(size=vms.n), rng.normal(size=vms.dof)
        w, tau = rng.normal(size=vms.nb), rng.normal(size=vms.n)
        Md = np.einsum("kij,k->ij", vms.mass_matrix_derivatives(q), nu[vms.nb:])
        assert np.abs(vms._mass_rate(q, nu[vms.nb:]) - Md).max() < 1e-12
        a = f47.accelerations(q, nu, w=w, tau=tau)
        assert np.abs(a - std.accelerations(q, nu, w=w, tau=tau)).max() < 1e-10
        assert np.abs(a - f47.accelerations(list(q), list(nu), w=list(w), tau=list(tau))
                      ).max() < 1e-12
        old = dynamics._recursions.ENGINE
        dynamics._recursions.ENGINE = "numpy"
        try:
            assert np.abs(a - f47.accelerations(q, nu, w=w, tau=tau)).max() < 1e-10
        finally:
            dynamics._recursions.ENGINE = old
    bad = nu.copy()
    bad[0] = np.nan
    with pytest.raises(ValueError, match=r"accelerations: nu"):
        f47.accelerations(q, bad)
    with pytest.raises(ValueError, match=r"accelerations: tau"):
        f47.accelerations(q, nu, tau=np.full(vms.n, np.inf))


# --------------------------------------------------------------------------- a base carrying a tree

def _tree_vms(name):
    from robodyn import urdf
    model = urdf.load_urdf(name, floating_base=True)
    return model, VehicleManipulator.from_tree(model)


def _pin_tree(model):
    """Pinocchio's free-flyer model of the same URDF and the map of its velocities to ours."""
    pm = pin.buildModelFromUrdf(model.source, pin.JointModelFreeFlyer())
    joints = [pm.joints[pm.getJointId(nm)] for nm in model.joint_names]
    assert all(j.nq == 1 for j in joints)
    P = np.array([3, 4, 5, 0, 1, 2] + [j.idx_v for j in joints])
    return pm, joints, P


def _rel(a, b):
    return float(np.abs(np.asarray(a) - b).max() / np.abs(b).max())


@pytest.mark.equation("ph-47")
@pytest.mark.parametrize("name", ["solo12", "go1"])
def test_tree_vms_equals_tree_aba_and_pinocchio_free_flyer(name):
    """A floating base carrying a tree (a quadruped from its URDF): the mass matrix and the
    accelerations of every VMS form equal robodyn.trees' CRBA/ABA and Pinocchio's on the same
    file, with base wrenches and joint torques, at random states (relative 1e-9)."""
    from robodyn import trees
    model, vms = _tree_vms(name)
    pm, joints, P = _pin_tree(model)
    d = pm.createData()
    rng = np.random.default_rng(38)
    forms = [ph.VMSForm(vms), ph.DecoupledForm(vms), StandardForm(vms)]
    for _ in range(3):
        q, nu, u = rng.uniform(-1.2, 1.2, vms.n), rng.normal(size=vms.dof), rng.normal(size=vms.dof)
        H = rd.exp_se3(rng.normal(size=6))
        qp = pin.neutral(pm)
        qp[:3], qp[3:7] = H[:3, 3], Rotation.from_matrix(H[:3, :3]).as_quat()
        for qi, j in zip(q, joints):
            qp[j.idx_q] = qi
        vp, up = np.zeros(pm.nv), np.zeros(pm.nv)
        vp[P], up[P] = nu, u
        pm.gravity.linear[:] = 0.0
        Mp = pin.crba(pm, d, qp)
        Mp = np.triu(Mp) + np.triu(Mp, 1).T
        assert _rel(vms.mass_matrix(q), Mp[np.ix_(P, P)]) < 1e-9
        a_pin = pin.aba(pm, d, qp, vp, up)[P]
        a_tree = trees.aba(model, q, nu, u, gravity=np.zeros(3))
        for f in forms:
            a = f.accelerations(q, nu, w=u[:6], tau=u[6:])
            assert _rel(a, a_pin) < 1e-9, (name, f)
            assert _rel(a, a_tree) < 1e-9, (name, f)
        # with gravity: the base pose sets its direction in {b}
        g = np.array([0.0, 0.0, -9.81])
        pm.gravity.linear[:] = g
        a_pin = pin.aba(pm, d, qp, vp, up)[P]
        a = ph.VMSForm(vms, gravity=g).accelerations(q, nu, pose=H, w=u[:6], tau=u[6:])
        assert _rel(a, a_pin) < 1e-9
        assert _rel(StandardForm(vms, g).accelerations(q, nu, pose=H, w=u[:6], tau=u[6:]),
                    a_pin) < 1e-9


@pytest.mark.equation("ph-49")
def test_tree_mass_matrix_derivatives_and_coenergy_gradient_are_exact():
    """dM/dq of the tree against complex steps of its mass matrix (no Lie brackets); the
    co-energy gradient three ways: the compiled RNEA derivatives, the O(n) subtree momenta
    h_k^T ad_{t_k} s_k, and -1/2 nu^T dM nu."""
    from robodyn.port_hamiltonian import _vehicle_tree as vt
    model, vms = _tree_vms("solo12")
    rng = np.random.default_rng(5)
    q, nu = rng.normal(size=vms.n), rng.normal(size=vms.dof)
    dM = vms.mass_matrix_derivatives(q)
    cs = np.array([vms._mass6(vms._frames(q + 1e-30j * e)).imag / 1e-30 for e in np.eye(vms.n)])
    assert np.abs(dM - cs).max() < 1e-12 * np.abs(dM).max()
    f = ph.VMSForm(vms)
    x = f.state(np.eye(4), nu[:6], q, nu[6:])
    g = f.gradient(x)
    assert np.allclose(g[:6], nu[:6], atol=1e-12) and np.allclose(g[18:], nu[6:], atol=1e-12)
    dT = vt.cotangent(model, vms._frames(q), nu[:6], nu[6:])
    assert np.abs(g[6:18] + dT).max() < 1e-10
    assert np.abs(g[6:18] + 0.5 * np.einsum("i,kij,j->k", nu, dM, nu)).max() < 1e-10
    assert abs(f.hamiltonian(x) - vms.kinetic_energy(q, nu[:6], nu[6:])) < 1e-12


@pytest.mark.equation("ph-50")
def test_tree_energy_momentum_scheme_conserves_energy_and_momentum():
    """Solo 12 thrown in free flight: the energy-momentum scheme keeps the energy (summed body
    by body, not from M) and the spatial momentum to 1e-10, the pose on SE(3), and the centre
    of mass moves on a straight line; RK45 at the same length drifts more."""
    from robodyn import trees
    model, vms = _tree_vms("solo12")
    rng = np.random.default_rng(12)
    f = ph.VMSForm(vms)
    x0 = f.state(np.eye(4), 0.5 * rng.normal(size=6), np.zeros(12), 2.0 * rng.normal(size=12))
    em = ph.simulate(f, x0, (0, 0.3), method="energy-momentum", dt=0.02)
    assert em.energy_error < 1e-10 and em.momentum_error < 1e-10
    assert em.pose_error.max() < 1e-12
    E = [vms.kinetic_energy(x[18:30], *np.split(f.velocities(x), [6])) for x in em.x]
    assert np.ptp(E) < 1e-10

    def off_line(tr):
        """How far the centre of mass (from the bodies' poses and masses) leaves the line."""
        com = []
        for x in tr.x:
            H = np.eye(4)
            H[:3, :3], H[:3, 3] = x[:9].reshape(3, 3), x[9:12]
            W = trees.body_poses(model, x[18:30], H)
            G = np.concatenate([model.base_inertia[None], model.inertias])
            mc = np.einsum("kij,kj->ki", W[:, :3, :3], np.stack([G[:, 2, 4], G[:, 0, 5],
                                                                 G[:, 1, 3]], 1))
            com.append((mc + G[:, 3, 3][:, None] * W[:, :3, 3]).sum(0) / model.total_mass)
        com = np.array(com)
        return np.abs(com - com[0] - np.outer(tr.t / tr.t[-1], com[-1] - com[0])).max()

    # the momentum is kept exactly, the positions to second order: the centre of mass leaves
    # its line by O(h^2) (a quarter at half the step), and RK45 at a tight tolerance keeps it
    fine = ph.simulate(f, x0, (0, 0.3), method="energy-momentum", dt=0.01)
    assert off_line(em) < 1e-5 and 3.5 < off_line(em) / off_line(fine) < 4.5
    assert off_line(ph.simulate(f, x0, (0, 0.3), rtol=1e-11, atol=1e-13, n_out=16)) < 1e-9
    rk = ph.simulate(f, x0, (0, 0.3), rtol=1e-6, atol=1e-8, n_out=16)
    assert rk.energy_error > 100 * em.energy_error


def test_a_chain_given_as_a_tree_equals_the_chain_vehicle():
    """The UR5 read from its URDF twice: as a floating-base tree (parents -1, 0, 1, ...) and as
    a serial chain on the same base body. Mass matrix, its derivatives, every form's
    accelerations, gravity, energy and a scheme trajectory agree."""
    from robodyn import urdf
    model, vt_ = _tree_vms("ur5")
    vc = VehicleManipulator.from_chain(urdf.serial_chain(urdf.load_urdf("ur5")), model.base_inertia)
    rng = np.random.default_rng(3)
    q, nu = rng.normal(size=6), rng.normal(size=12)
    scale = np.abs(vc.mass_matrix(q)).max()
    assert np.abs(vt_.mass_matrix(q) - vc.mass_matrix(q)).max() < 1e-13 * scale
    assert np.abs(vt_.mass_matrix_derivatives(q) - vc.mass_matrix_derivatives(q)).max() < 1e-13 * scale
    assert np.abs(vt_.bias(q, nu[:6], nu[6:]) - vc.bias(q, nu[:6], nu[6:])).max() < 1e-12 * scale
    for F in (ph.VMSForm, ph.DecoupledForm, ph.ReducedEulerLagrange, ph.BoltzmannHamel, StandardForm):
        a = F(vc).accelerations(q, nu)
        assert _rel(F(vt_).accelerations(q, nu), a) < 1e-10, F
    H = rd.exp_se3(rng.normal(size=6))
    g = np.array([0.0, 0.0, -9.81])
    assert np.allclose(vt_.gravity_forces(q, H, g), vc.gravity_forces(q, H, g), atol=1e-12)
    assert abs(vt_.potential_energy(q, H, g) - vc.potential_energy(q, H, g)) < 1e-12
    acc = rng.normal(size=12)
    assert np.allclose(vt_.inverse_dynamics(q, nu[:6], nu[6:], acc[:6], acc[6:], H, g),
                       vc.inverse_dynamics(q, nu[:6], nu[6:], acc[:6], acc[6:], H, g),
                       atol=1e-11 * scale)
    assert vt_.link_twists(q, nu[:6], nu[6:]).shape == (6, 6)
    assert abs(vt_.kinetic_energy(q, nu[:6], nu[6:]) - vc.kinetic_energy(q, nu[:6], nu[6:])) < 1e-12
    assert np.allclose(vt_.total_momentum(H, q, nu[:6], nu[6:]),
                       vc.total_momentum(H, q, nu[:6], nu[6:]), atol=1e-12)
    x0 = ph.VMSForm(vc).state(H, nu[:6], q, nu[6:])
    a = ph.simulate(ph.VMSForm(vc), x0, (0, 0.1), method="energy-momentum", dt=0.02)
    b = ph.simulate(ph.VMSForm(vt_), x0, (0, 0.1), method="energy-momentum", dt=0.02)
    assert np.abs(a.x - b.x).max() < 1e-9


def test_tree_vehicle_bad_input_and_pickling():
    import pickle
    from robodyn import urdf
    with pytest.raises(TypeError, match="from_tree: model: expected a RobotModel"):
        VehicleManipulator.from_tree(rd.models.planar_rr())
    with pytest.raises(ValueError, match="from_tree: model: expected a model with a floating base"):
        VehicleManipulator.from_tree(urdf.load_urdf("ur5"))
    _, vms = _tree_vms("solo12")
    with pytest.raises(ValueError, match="end_effector_pose: self: expected a vehicle carrying a chain"):
        vms.end_effector_pose(np.zeros(12))
    with pytest.raises(ValueError, match=r"mass_matrix: q \(12 joint values\)"):
        vms.mass_matrix(np.zeros(3))
    q = np.linspace(-1, 1, 12)
    assert np.array_equal(pickle.loads(pickle.dumps(vms)).mass_matrix(q), vms.mass_matrix(q))
