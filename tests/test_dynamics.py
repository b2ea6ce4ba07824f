"""Tests of robodyn.dynamics: against Pinocchio and Modern Robotics on random and book chains,
against each other (RNEA = CRBA = ABA, Christoffel symbols by finite differences of M), batch =
single state, and every bad-input path. Every test runs with the compiled engine and with numpy
alone (the `engine` fixture).
"""
import re
import warnings

import modern_robotics as mr
import numpy as np
import pinocchio as pin
import pytest

import robodyn as rd
from robodyn import dynamics as dy
from robodyn import models

from reference import to_pinocchio

TOL = 1e-9


@pytest.fixture(autouse=True, params=["auto", "numpy"])
def engine(request, monkeypatch):
    """Every test runs twice: with the compiled engine (float arrays take it) and numpy only."""
    monkeypatch.setattr(dy._recursions, "ENGINE", request.param)
    if request.param == "auto":
        assert dy._recursions._engine() is not None, "the compiled engine did not build on this machine"
    return request.param


G_SPACE = np.array([0.4, -9.81, 1.3])      # a gravity direction that is not along an axis


def random_cases():
    """24 random chains, 1..12 joints, revolute, prismatic and helical mixed."""
    rng = np.random.default_rng(20261201)
    cases = []
    for k, n in enumerate([1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11,
                           11, 12, 12]):
        helical = 0.2 if k % 3 == 2 else 0.0
        chain = models.random_chain(n, rng, prismatic=0.3, helical=helical)
        state = [rng.normal(size=n) for _ in range(4)]
        cases.append(pytest.param(chain, state, id=f"n{n}-{k}"))
    return cases


CASES = random_cases()


def test_cases_mix_joint_kinds():
    kinds = {t for c in CASES for t in c.values[0].joint_types}
    assert kinds == {"revolute", "prismatic", "helical"}
    assert max(c.values[0].n for c in CASES) == 12


def _pin(chain, gravity=(0, 0, 0)):
    model = to_pinocchio(chain, gravity=gravity)
    return model, model.createData()


def _scale(x):
    return max(1.0, float(np.abs(x).max()))


@pytest.mark.parametrize("chain, state", CASES)
@pytest.mark.equation("hb-5-14")
def test_against_pinocchio(chain, state):
    q, qd, qdd, tau = state
    model, data = _pin(chain, G_SPACE)
    M_ref = pin.crba(model, data, q)
    M_ref = np.triu(M_ref) + np.triu(M_ref, 1).T           # Pinocchio fills the upper triangle
    assert np.allclose(dy.crba(chain, q), M_ref, rtol=0, atol=TOL * _scale(M_ref))
    tau_ref = pin.rnea(model, data, q, qd, qdd)
    assert np.allclose(dy.inverse_dynamics(chain, q, qd, qdd, gravity=G_SPACE), tau_ref,
                       rtol=0, atol=TOL * _scale(tau_ref))
    qdd_ref = pin.aba(model, data, q, qd, tau)
    for method in ("aba", "crba"):
        assert np.allclose(dy.forward_dynamics(chain, q, qd, tau, gravity=G_SPACE,
                                               method=method),
                           qdd_ref, rtol=0, atol=TOL * _scale(qdd_ref))
    g_ref = pin.computeGeneralizedGravity(model, data, q)
    assert np.allclose(dy.gravity_torques(chain, q, gravity=G_SPACE), g_ref, rtol=0,
                       atol=TOL * _scale(g_ref))


@pytest.mark.parametrize("chain, state", CASES)
@pytest.mark.equation("hb-5-14")
def test_coriolis_against_pinocchio(chain, state):
    """C qd = rnea(q, qd, 0) without gravity; Pinocchio's C satisfies Mdot = C + C^T like ours;
    and (found so, and asserted) Pinocchio's computeCoriolisMatrix IS the Christoffel matrix."""
    q, qd, _, _ = state
    model, data = _pin(chain)
    C = dy.coriolis_matrix(chain, q, qd)
    Cqd_ref = pin.rnea(model, data, q, qd, np.zeros_like(q))
    assert np.allclose(C @ qd, Cqd_ref, rtol=0, atol=TOL * _scale(Cqd_ref))
    C_pin = pin.computeCoriolisMatrix(model, data, q, qd).copy()
    assert np.allclose(C_pin @ qd, C @ qd, rtol=0, atol=TOL * _scale(Cqd_ref))
    Mdot = _mdot_fd(chain, q, qd)
    assert np.allclose(C_pin + C_pin.T, Mdot, rtol=0, atol=1e-6 * _scale(Mdot))
    assert np.allclose(C, C_pin, rtol=0, atol=TOL * _scale(C_pin))


def _mdot_fd(chain, q, qd, h=1e-5):
    """dM/dt along qd by a central difference (error O(h^2) ~ 1e-10 relative)."""
    return (dy.crba(chain, q + h * qd) - dy.crba(chain, q - h * qd)) / (2 * h)


def _christoffel_fd(chain, q, h=1e-5):
    """Gamma_ijk of eq. (5.13) from central differences of M: an independent route."""
    n = chain.n
    dM = np.array([(dy.crba(chain, q + h * e) - dy.crba(chain, q - h * e)) / (2 * h)
                   for e in np.eye(n)])                       # dM[k, i, j] = dM_ij / dq_k
    return 0.5 * (dM.transpose(1, 2, 0) + dM.transpose(1, 0, 2) - dM)   # [i, j, k]


@pytest.mark.parametrize("chain, state", CASES[::3])
@pytest.mark.equation("hb-5-13", "hb-5-14")
def test_coriolis_is_christoffel(chain, state):
    q, qd, _, _ = state
    Gamma = _christoffel_fd(chain, q)
    C_fd = np.einsum("ijk,k->ij", Gamma, qd)
    C = dy.coriolis_matrix(chain, q, qd)
    assert np.allclose(C, C_fd, rtol=0, atol=1e-6 * _scale(C))
    N = _mdot_fd(chain, q, qd) - 2 * C                         # Mdot - 2C is skew
    assert np.allclose(N, -N.T, rtol=0, atol=1e-6 * _scale(C))


@pytest.mark.parametrize("chain, state", CASES[::2])
@pytest.mark.equation("hb-5-11", "hb-5-14")
def test_internal_consistency(chain, state):
    q, qd, qdd, _ = state
    n = chain.n
    tau = dy.inverse_dynamics(chain, q, qd, qdd, gravity=G_SPACE)
    for method in ("aba", "crba"):
        assert np.allclose(dy.forward_dynamics(chain, q, qd, tau, gravity=G_SPACE,
                                               method=method), qdd, rtol=0, atol=1e-8)
    M = dy.crba(chain, q)
    cols = np.array([dy.inverse_dynamics(chain, q, np.zeros(n), e, gravity=np.zeros(3))
                     for e in np.eye(n)]).T                   # M e_i = ID(q, 0, e_i), g = 0
    assert np.allclose(M, cols, rtol=0, atol=TOL * _scale(M))
    assert np.allclose(M, M.T, rtol=0, atol=1e-12 * _scale(M))
    assert np.linalg.eigvalsh(M).min() > 0
    J = [rd.jacobian_body(chain, q, link=i) for i in range(n)]   # M = sum J_i^T I_i J_i
    M_sum = sum(Ji.T @ Gi @ Ji for Ji, Gi in zip(J, chain.link_inertias))
    assert np.allclose(M, M_sum, rtol=0, atol=TOL * _scale(M))
    # decomposition tau = M qdd + C qd + G
    C, G = dy.coriolis_matrix(chain, q, qd), dy.gravity_torques(chain, q, gravity=G_SPACE)
    assert np.allclose(tau, M @ qdd + C @ qd + G, rtol=0, atol=TOL * _scale(tau))
    # kinetic energy 1/2 qd^T M qd and potential energy by the CoM positions
    T = 0.5 * qd @ M @ qd
    coms = rd.link_poses(chain, q)[:, :3, 3]
    masses = np.array([Gi[3, 3] for Gi in chain.link_inertias])
    V = -np.sum(masses * (coms @ G_SPACE))
    assert np.isclose(dy.mechanical_energy(chain, q, qd, gravity=G_SPACE), T + V, rtol=1e-12,
                      atol=1e-12)


@pytest.mark.parametrize("chain, state", CASES[1::4])
@pytest.mark.equation("hb-5-14")
def test_gravity_is_gradient_of_potential(chain, state):
    """G = dV/dq, by central differences of the potential energy."""
    q = state[0]
    h = 1e-6
    V = lambda x: dy.mechanical_energy(chain, x, np.zeros(chain.n), gravity=G_SPACE)
    grad = np.array([(V(q + h * e) - V(q - h * e)) / (2 * h) for e in np.eye(chain.n)])
    assert np.allclose(dy.gravity_torques(chain, q, gravity=G_SPACE), grad, rtol=0, atol=1e-6)


def test_batch_equals_single_states():
    rng = np.random.default_rng(7)
    chain = models.random_chain(7, rng, prismatic=0.3, helical=0.2)
    B, n = 5, chain.n
    Q, QD, QDD, TAU = (rng.normal(size=(B, n)) for _ in range(4))
    W = rng.normal(size=(B, 6))
    batch = {
        "crba": dy.crba(chain, Q),
        "id": dy.inverse_dynamics(chain, Q, QD, QDD, gravity=G_SPACE, wrench_ee=W),
        "aba": dy.forward_dynamics(chain, Q, QD, TAU, gravity=G_SPACE, wrench_ee=W),
        "fd_crba": dy.forward_dynamics(chain, Q, QD, TAU, gravity=G_SPACE, wrench_ee=W,
                                       method="crba"),
        "C": dy.coriolis_matrix(chain, Q, QD),
        "G": dy.gravity_torques(chain, Q, gravity=G_SPACE),
        "E": dy.mechanical_energy(chain, Q, QD, gravity=G_SPACE),
    }
    assert batch["crba"].shape == (B, n, n) and batch["id"].shape == (B, n)
    assert batch["E"].shape == (B,)
    for b in range(B):
        single = {
            "crba": dy.crba(chain, Q[b]),
            "id": dy.inverse_dynamics(chain, Q[b], QD[b], QDD[b], gravity=G_SPACE,
                                      wrench_ee=W[b]),
            "aba": dy.forward_dynamics(chain, Q[b], QD[b], TAU[b], gravity=G_SPACE,
                                       wrench_ee=W[b]),
            "fd_crba": dy.forward_dynamics(chain, Q[b], QD[b], TAU[b], gravity=G_SPACE,
                                           wrench_ee=W[b], method="crba"),
            "C": dy.coriolis_matrix(chain, Q[b], QD[b]),
            "G": dy.gravity_torques(chain, Q[b], gravity=G_SPACE),
            "E": dy.mechanical_energy(chain, Q[b], QD[b], gravity=G_SPACE),
        }
        for key, value in single.items():
            assert np.allclose(batch[key][b], value, rtol=0, atol=1e-12), key
    # one wrench for the whole batch
    tau1 = dy.inverse_dynamics(chain, Q, QD, QDD, wrench_ee=W[0])
    assert np.allclose(tau1[3], dy.inverse_dynamics(chain, Q[3], QD[3], QDD[3], wrench_ee=W[0]))


def _mr_lists(chain):
    """Modern Robotics' Mlist (CoM frame i-1 -> i at q = 0, then last CoM -> end effector),
    Glist (inertias in the CoM frames) and Slist."""
    L = [np.eye(4)] + [np.asarray(x, float) for x in chain.link_homes] + \
        [np.asarray(chain.home, float)]
    Mlist = [np.linalg.inv(L[i]) @ L[i + 1] for i in range(chain.n + 1)]
    return Mlist, [np.asarray(G, float) for G in chain.link_inertias], np.asarray(chain.screws)


@pytest.mark.parametrize("make", [lambda: models.planar_rr(0.7, 1.3, 2.0, 0.5),
                                  lambda: models.planar_rp(0.8, 0.6, 1.0, 2.0),
                                  models.spatial_rrr, models.ur5_like],
                         ids=["planar_rr", "planar_rp", "spatial_rrr", "ur5_like"])
@pytest.mark.equation("hb-5-14")
def test_against_modern_robotics(make):
    chain = make()
    Mlist, Glist, Slist = _mr_lists(chain)
    rng = np.random.default_rng(3)
    n = chain.n
    g = np.array([0, -9.81, 0]) if chain.name.startswith("planar") else dy.DEFAULT_GRAVITY
    for _ in range(3):
        q, qd, qdd, tau = (rng.normal(size=n) for _ in range(4))
        F = rng.normal(size=6)
        assert np.allclose(dy.crba(chain, q), mr.MassMatrix(q, Mlist, Glist, Slist), atol=TOL)
        assert np.allclose(dy.inverse_dynamics(chain, q, qd, qdd, gravity=g, wrench_ee=F),
                           mr.InverseDynamics(q, qd, qdd, g, F, Mlist, Glist, Slist), atol=TOL)
        assert np.allclose(dy.forward_dynamics(chain, q, qd, tau, gravity=g, wrench_ee=F),
                           mr.ForwardDynamics(q, qd, tau, g, F, Mlist, Glist, Slist),
                           atol=1e-8)   # MR inverts M explicitly
        assert np.allclose(dy.gravity_torques(chain, q, gravity=g),
                           mr.GravityForces(q, g, Mlist, Glist, Slist), atol=TOL)


@pytest.mark.equation("hb-5-15")
def test_wrench_ee_is_jacobian_transpose():
    """tau(W) - tau(0) = J_b^T W for a wrench the end effector exerts, in its own frame."""
    rng = np.random.default_rng(11)
    chain = models.random_chain(6, rng, prismatic=0.3)
    q, qd, qdd = (rng.normal(size=6) for _ in range(3))
    W = rng.normal(size=6)
    d_tau = dy.inverse_dynamics(chain, q, qd, qdd, wrench_ee=W) - \
        dy.inverse_dynamics(chain, q, qd, qdd)
    assert np.allclose(d_tau, rd.jacobian_body(chain, q).T @ W, atol=1e-12)


@pytest.mark.equation("hb-5-14")
def test_planar_rr_closed_form():
    """The handbook §6.3 RR arm in closed form (uniform rods): M, C, G."""
    l1, l2, m1, m2 = 0.7, 1.3, 2.0, 0.5
    chain = models.planar_rr(l1, l2, m1, m2)
    q, qd = np.array([0.4, -1.1]), np.array([0.9, -0.3])
    c1, c2, s2 = np.cos(q[0]), np.cos(q[1]), np.sin(q[1])
    I1, I2, r1, r2 = m1 * l1**2 / 12, m2 * l2**2 / 12, l1 / 2, l2 / 2
    M = np.array([[I1 + I2 + m1 * r1**2 + m2 * (l1**2 + r2**2 + 2 * l1 * r2 * c2),
                   I2 + m2 * (r2**2 + l1 * r2 * c2)],
                  [I2 + m2 * (r2**2 + l1 * r2 * c2), I2 + m2 * r2**2]])
    h = m2 * l1 * r2 * s2
    C = np.array([[-h * qd[1], -h * (qd[0] + qd[1])], [h * qd[0], 0]])
    g = 9.81
    G = np.array([(m1 * r1 + m2 * l1) * g * c1 + m2 * r2 * g * np.cos(q[0] + q[1]),
                  m2 * r2 * g * np.cos(q[0] + q[1])])
    assert np.allclose(dy.crba(chain, q), M, atol=1e-13)
    assert np.allclose(dy.coriolis_matrix(chain, q, qd), C, atol=1e-13)
    assert np.allclose(dy.gravity_torques(chain, q, gravity=[0, -g, 0]), G, atol=1e-12)


def test_near_singular_mass_matrix_warns():
    chain = models.planar_rr(1.0, 1.0, 1.0, 1e-13)      # an almost massless second link
    with pytest.warns(dy.IllConditionedWarning, match=r"condition number \d"):
        dy.forward_dynamics(chain, [0.1, 0.2], [0, 0], [0, 0])
    cond = np.linalg.cond(dy.crba(chain, [0.1, 0.2]))
    assert cond > 1e12
    with pytest.warns(dy.IllConditionedWarning,
                      match=re.escape(f"nearly singular at state 0: condition number {cond:.3g}")):
        dy.forward_dynamics(chain, [[0.1, 0.2]], [[0, 0]], [[0, 0]], method="crba",
                            cond_warn=1e12)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dy.forward_dynamics(models.planar_rr(), [0.1, 0.2], [0, 0], [0, 0])   # no warning


def test_singular_mass_matrix_is_refused():
    # a slender rod (no inertia about its axis) on a joint about that axis, centre on the axis
    chain = rd.SerialChain.from_screws(
        np.array([[1.0, 0, 0, 0, 0, 0]]).T, np.eye(4), [np.eye(4)], [models.rod_inertia(1, 1)])
    for method in ("aba", "crba"):
        with pytest.raises(ValueError, match="mass matrix .* is singular"):
            dy.forward_dynamics(chain, [0.0], [0.0], [1.0], method=method)


# --------------------------------------------------------------------------
# bad input
# --------------------------------------------------------------------------

RR = models.planar_rr()


@pytest.mark.parametrize("call, exc, match", [
    (lambda: dy.crba(RR, [0, 0, 0]), ValueError, r"q .*expected a vector of length 2"),
    (lambda: dy.crba(RR, np.zeros((3, 2, 2))), ValueError, r"expected shape \(2,\) for one"),
    (lambda: dy.crba(RR, np.zeros((4, 3))), ValueError, r"expected shape \(n,\) or \(B, n\)"),
    (lambda: dy.inverse_dynamics(RR, np.zeros((4, 2)), np.zeros((3, 2)), np.zeros((4, 2))),
     ValueError, r"qd: expected shape \(4, 2\) like q.*batch size 3 != 4"),
    (lambda: dy.inverse_dynamics(RR, np.zeros((4, 2)), [0, 0], np.zeros((4, 2))),
     ValueError, r"qd: expected shape \(4, 2\) like q, got shape \(2,\)"),
    (lambda: dy.inverse_dynamics(RR, [0, 0], np.zeros((1, 2)), [0, 0]),
     ValueError, r"qd: expected shape \(2,\) like q"),
    (lambda: dy.inverse_dynamics(RR, [0, np.nan], [0, 0], [0, 0]), ValueError,
     "expected finite numbers"),
    (lambda: dy.forward_dynamics(RR, np.zeros((2, 2)), np.zeros((2, 2)),
                                 [[0, np.inf], [0, 0]]), ValueError, "tau: expected finite"),
    (lambda: dy.inverse_dynamics(RR, [0, 0], [0, 0], [0, 0], gravity=[0, -9.81]), ValueError,
     "gravity .*expected a vector of length 3"),
    (lambda: dy.inverse_dynamics(RR, [0, 0], [0, 0], [0, 0], wrench_ee=[1, 2, 3]), ValueError,
     "wrench_ee .*expected a vector of length 6"),
    (lambda: dy.inverse_dynamics(RR, [0, 0], [0, 0], [0, 0], wrench_ee=np.zeros((2, 6))),
     ValueError, r"wrench_ee: expected shape \(6,\), got shape \(2, 6\)"),
    (lambda: dy.forward_dynamics(RR, [0, 0], [0, 0], [0, 0], method="lu"), ValueError,
     "method: expected 'aba' or 'crba', got 'lu'"),
    (lambda: dy.forward_dynamics(RR, [0, 0], [0, 0], [0, 0], cond_warn=-1), ValueError,
     "cond_warn: expected a positive number"),
    (lambda: dy.crba("RR", [0, 0]), TypeError, "expected a SerialChain"),
    (lambda: dy.crba(RR, "00"), TypeError, "expected an array of numbers"),
    (lambda: dy.crba(RR, [0, __import__("sympy").Symbol("q")]), TypeError,
     "numeric algorithm"),
])
def test_bad_input(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_chain_without_inertias_is_refused():
    bare = rd.SerialChain.from_screws(RR.screws, RR.home)
    with pytest.raises(ValueError, match="has no link_homes and link_inertias"):
        dy.crba(bare, [0, 0])
    half = rd.SerialChain.from_screws(RR.screws, RR.home, link_homes=RR.link_homes)
    with pytest.raises(ValueError, match="has no link_inertias; dynamics needs"):
        dy.inverse_dynamics(half, [0, 0], [0, 0], [0, 0])


def test_symbolic_chain_is_refused():
    import sympy as sp
    chain = models.planar_rr(*sp.symbols("l1 l2 m1 m2", positive=True))
    with pytest.raises(TypeError, match="symbolic parameters.*robodyn.lagrange"):
        dy.coriolis_matrix(chain, [0, 0], [0, 0])


def test_large_batch_in_chunks_equals_single_states():
    """Batches larger than dynamics.CHUNK are processed in chunks; the seams must not show."""
    rng = np.random.default_rng(5)
    chain = models.random_chain(4, rng, prismatic=0.3, helical=0.2)
    B = 2 * dy._recursions.CHUNK + 17
    Q, QD, TAU = (rng.normal(size=(B, 4)) for _ in range(3))
    W = rng.normal(size=6)                                      # one wrench for all states
    qdd = dy.forward_dynamics(chain, Q, QD, TAU, wrench_ee=W)
    qdd_crba = dy.forward_dynamics(chain, Q, QD, TAU, wrench_ee=W, method="crba")
    tau = dy.inverse_dynamics(chain, Q, QD, qdd, wrench_ee=W)
    M, C = dy.crba(chain, Q), dy.coriolis_matrix(chain, Q, QD)
    E, G = dy.mechanical_energy(chain, Q, QD), dy.gravity_torques(chain, Q)
    assert np.allclose(tau, TAU, atol=1e-9) and np.allclose(qdd, qdd_crba, atol=1e-9)
    for b in (0, dy._recursions.CHUNK - 1, dy._recursions.CHUNK, 2 * dy._recursions.CHUNK, B - 1):
        assert np.allclose(qdd[b], dy.forward_dynamics(chain, Q[b], QD[b], TAU[b], wrench_ee=W),
                           atol=1e-12)
        assert np.allclose(M[b], dy.crba(chain, Q[b]), atol=1e-12)
        assert np.allclose(C[b], dy.coriolis_matrix(chain, Q[b], QD[b]), atol=1e-12)
        assert np.isclose(E[b], dy.mechanical_energy(chain, Q[b], QD[b]), atol=1e-12)
        assert np.allclose(G[b], dy.gravity_torques(chain, Q[b]), atol=1e-12)
