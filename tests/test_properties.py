"""Property tests (hypothesis) on random chains of 1-12 joints with mixed joint types
(revolute, prismatic, helical) and centre-of-mass offsets (issue 8).

A chain is drawn as (number of joints, seed, offsets on/off): the seed drives
:func:`robodyn.models.random_chain`, and with offsets each link frame is moved away from the
link's centre of mass by a random rigid motion, its spatial inertia transformed to match
(:math:`\\mathcal I_F = \\mathrm{Ad}_{H_{cF}}^T\\mathcal I_c\\mathrm{Ad}_{H_{cF}}`): the same
physical chain, so every dynamic quantity must be unchanged.

Example counts are kept moderate (``derandomize=True``: the same examples in every run, so CI
is reproducible); the whole file runs in well under a minute.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import robodyn as rd
from robodyn import dynamics, lagrange, models

EXAMPLES = dict(dynamics=40, engine=30, lagrange_numeric=25, lagrange_symbolic=6,
                simulation=6, exp_log=200, reference=30)


def _settings(n, shrink=True):
    """Moderate, reproducible runs; ``shrink=False`` for the known failures (xfail), where
    hypothesis would otherwise spend its time minimising an expected counterexample."""
    phases = list(Phase) if shrink else [Phase.explicit, Phase.generate]
    return settings(max_examples=n, deadline=None, derandomize=True, database=None,
                    phases=phases,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def offset_chain(chain, rng):
    """The same physical chain with every link frame moved off its centre of mass."""
    homes, inertias = [], []
    for L, G in zip(chain.link_homes, chain.link_inertias):
        H_Fc = rd.exp_se3(np.concatenate([rng.normal(scale=0.5, size=3),
                                          rng.normal(scale=0.3, size=3)]))
        H_cF = rd.inverse_homogeneous(H_Fc)
        A = rd.adjoint(H_cF)
        inertias.append(A.T @ G @ A)
        homes.append(L @ H_cF)
    return rd.SerialChain.from_screws(chain.screws, chain.home, homes, inertias,
                                      name=chain.name + " (offset)")


@st.composite
def chains(draw, max_joints=12, offsets=None):
    n = draw(st.integers(1, max_joints))
    seed = draw(st.integers(0, 2**32 - 1))
    offsets = draw(st.booleans()) if offsets is None else offsets
    rng = np.random.default_rng(seed)
    chain = models.random_chain(n, rng, prismatic=0.3, helical=0.15)
    if offsets:
        chain = offset_chain(chain, rng)
    q = rng.uniform(-np.pi, np.pi, n)
    qd = rng.normal(size=n)
    qdd = rng.normal(size=n)
    return chain, q, qd, qdd, offsets, seed


G3 = np.array([0.0, 0.0, -9.81])


@_settings(EXAMPLES["dynamics"])
@given(chains())
def test_mass_matrix_is_symmetric_positive_definite(case):
    chain, q, *_ = case
    M = rd.crba(chain, q)
    np.testing.assert_allclose(M, M.T, atol=1e-12 * max(1, np.abs(M).max()))
    assert np.linalg.eigvalsh(M).min() > 0


@_settings(EXAMPLES["dynamics"])
@given(chains())
def test_inverse_and_forward_dynamics_are_inverse(case):
    chain, q, qd, qdd, *_ = case
    tau = rd.inverse_dynamics(chain, q, qd, qdd, gravity=G3)
    back = rd.forward_dynamics(chain, q, qd, tau, gravity=G3)
    scale = 1 + np.abs(qdd).max()
    cond = np.linalg.cond(rd.crba(chain, q))
    np.testing.assert_allclose(back, qdd, atol=1e-12 * cond * scale)
    back_crba = rd.forward_dynamics(chain, q, qd, tau, gravity=G3, method="crba")
    np.testing.assert_allclose(back_crba, qdd, atol=1e-12 * cond * scale)


@_settings(EXAMPLES["dynamics"])
@given(chains())
def test_mdot_minus_two_c_is_skew(case):
    """Passivity: N = dM/dt - 2C is skew-symmetric (dM/dt by central differences)."""
    chain, q, qd, *_ = case
    h = 1e-6
    Mdot = (rd.crba(chain, q + h * qd) - rd.crba(chain, q - h * qd)) / (2 * h)
    C = dynamics.coriolis_matrix(chain, q, qd)
    N = Mdot - 2 * C
    scale = 1 + np.abs(Mdot).max() + np.abs(C).max()
    np.testing.assert_allclose(N + N.T, 0, atol=1e-6 * scale)
    # and C qd is the velocity part of the inverse dynamics
    bias = rd.inverse_dynamics(chain, q, qd, np.zeros_like(q), gravity=np.zeros(3))
    np.testing.assert_allclose(C @ qd, bias, atol=1e-10 * scale * (1 + np.abs(qd).max()) ** 2)


@_settings(EXAMPLES["dynamics"])
@given(chains())
def test_centre_of_mass_offsets_change_nothing(case):
    """Moving link frames off the centres of mass (with the inertias transformed) leaves M,
    the inverse dynamics and the energy unchanged."""
    chain, q, qd, qdd, offsets, seed = case
    if offsets:
        return
    moved = offset_chain(chain, np.random.default_rng(seed + 1))
    np.testing.assert_allclose(rd.crba(moved, q), rd.crba(chain, q), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(rd.inverse_dynamics(moved, q, qd, qdd, gravity=G3),
                               rd.inverse_dynamics(chain, q, qd, qdd, gravity=G3),
                               rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(rd.mechanical_energy(moved, q, qd, gravity=G3),
                               rd.mechanical_energy(chain, q, qd, gravity=G3), rtol=1e-10,
                               atol=1e-10)


@_settings(EXAMPLES["engine"])
@given(chains(), st.integers(1, 5))
def test_compiled_and_numpy_engines_agree(monkeypatch_case, batch):
    chain, q, qd, qdd, *_ = monkeypatch_case
    rng = np.random.default_rng(batch)
    Q = np.vstack([q, rng.uniform(-3, 3, (batch - 1, chain.n))]) if batch > 1 else q
    QD = np.vstack([qd, rng.normal(size=(batch - 1, chain.n))]) if batch > 1 else qd
    out = {}
    for engine in ("auto", "numpy"):
        old, dynamics._recursions.ENGINE = dynamics._recursions.ENGINE, engine
        try:
            out[engine] = (rd.crba(chain, Q), rd.inverse_dynamics(chain, Q, QD, QD, gravity=G3),
                           rd.forward_dynamics(chain, Q, QD, QD, gravity=G3),
                           dynamics.coriolis_matrix(chain, Q, QD))
        finally:
            dynamics._recursions.ENGINE = old
    for a, b in zip(out["auto"], out["numpy"]):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-9 * (1 + np.abs(b).max()))


@_settings(EXAMPLES["lagrange_numeric"])
@given(chains())
def test_lagrange_mass_matrix_equals_dynamics(case):
    chain, q, *_ = case
    np.testing.assert_allclose(lagrange.mass_matrix(chain, q), rd.crba(chain, q),
                               rtol=1e-10, atol=1e-10)


def _lagrange_gravity_check(case):
    chain, q, qd, *_ = case
    np.testing.assert_allclose(lagrange.gravity_vector(chain, q, gravity=G3),
                               rd.gravity_torques(chain, q, gravity=G3), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(lagrange.kinetic_energy(chain, q, qd),
                               0.5 * qd @ rd.crba(chain, q) @ qd, rtol=1e-10, atol=1e-12)


@_settings(EXAMPLES["lagrange_numeric"])
@given(chains(offsets=False))
def test_lagrange_gravity_equals_dynamics(case):
    _lagrange_gravity_check(case)


@_settings(EXAMPLES["lagrange_numeric"], shrink=True)
@given(chains(offsets=True))
def test_lagrange_gravity_equals_dynamics_with_offsets(case):
    _lagrange_gravity_check(case)


def _symbolic_check(case):
    """M, C and G of the symbolic derivation, evaluated, equal the O(n) algorithms."""
    chain, q, qd, *_ = case
    num = rd.equations_of_motion(chain, gravity=G3).numeric(backend="lambdify")
    np.testing.assert_allclose(num.M(q), rd.crba(chain, q), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(num.C(q, qd), dynamics.coriolis_matrix(chain, q, qd),
                               rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(num.G(q), rd.gravity_torques(chain, q, gravity=G3),
                               rtol=1e-9, atol=1e-9)


@_settings(EXAMPLES["lagrange_symbolic"])
@given(chains(max_joints=2, offsets=False))
def test_symbolic_lagrange_equals_dynamics(case):
    _symbolic_check(case)


@_settings(EXAMPLES["lagrange_symbolic"] // 2)
@given(chains(max_joints=2, offsets=True))
def test_symbolic_lagrange_equals_dynamics_with_offsets(case):
    _symbolic_check(case)


@_settings(EXAMPLES["simulation"])
@given(chains(max_joints=3))
def test_simulation_conserves_energy_within_its_tolerance(case):
    """Free motion (no torque): the energy drift of RK45 at rtol = atol = 1e-10 over 0.5 s
    stays below 1e-6 of the energy scale (the bound the simulation chapter states is 1e-7 for
    its 2 s swing at the same tolerances)."""
    chain, q, qd, *_ = case
    traj = rd.simulate(chain, q, 0.5 * qd, 0.5, gravity=G3, rtol=1e-10, atol=1e-10)
    E = traj.energy
    scale = np.abs(E).max() + 0.5 * (0.5 * qd) @ rd.crba(chain, q) @ (0.5 * qd) + 1.0
    assert np.ptp(E) / scale < 1e-6, np.ptp(E) / scale


angles = st.floats(0.0, 1.0, allow_nan=False)
axes = st.tuples(*[st.floats(-1, 1, allow_nan=False)] * 3).filter(
    lambda a: np.linalg.norm(a) > 1e-3)


@_settings(EXAMPLES["exp_log"])
@given(axes, st.sampled_from([0.0, 1e-12, 1e-8, 1e-5, 1e-4, 1.0001e-4, 1e-3, 0.1, 1.0,
                              np.pi - 1e-3, np.pi - 1e-6, np.pi - 1e-9]), angles,
       st.tuples(*[st.floats(-3, 3, allow_nan=False)] * 3))
def test_exp_log_round_trips_near_zero_and_pi(axis, base, frac, v):
    w = np.array(axis) / np.linalg.norm(axis)
    theta = min(base * (1 + 1e-3 * frac), np.pi - 1e-12) if base else 1e-9 * frac
    phi = w * theta
    R = rd.exp_so3(phi)
    assert rd.is_rotation(R, 1e-12)
    back = rd.log_so3(R)
    if theta < np.pi - 1e-6:
        np.testing.assert_allclose(back, phi, atol=2e-15 + 1e-15 * theta)
    else:                                  # near pi only R is well determined
        np.testing.assert_allclose(rd.exp_so3(back), R, atol=1e-12)
    V = np.concatenate([phi, v])
    H = rd.exp_se3(V)
    if theta < np.pi - 1e-6:
        np.testing.assert_allclose(rd.log_se3(H), V, atol=1e-13 * (1 + np.abs(v).max()))
    np.testing.assert_allclose(rd.exp_se3(rd.log_se3(H)), H, atol=1e-12 * (1 + np.abs(v).max()))


@_settings(EXAMPLES["reference"])
@given(axes, st.floats(1e-7, 1e-2), st.tuples(*[st.floats(-3, 3, allow_nan=False)] * 3))
def test_exp_se3_is_accurate_around_the_series_cut_off(axis, theta, v):
    """Against a matrix-exponential reference in extended precision (mpmath): the issue found
    errors up to 7e-13 just above theta = 1e-4 (the old series cut-off)."""
    import mpmath as mp
    w, v = np.array(axis) / np.linalg.norm(axis), np.array(v)
    V = np.concatenate([w * theta, v])
    with mp.workdps(30):
        X = mp.matrix(rd.hat(V).tolist())
        ref = np.array(mp.expm(X).tolist(), dtype=float)
    np.testing.assert_allclose(rd.exp_se3(V), ref, atol=2e-15 * (1 + np.abs(v).max()))
    np.testing.assert_allclose(rd.exp_se3(np.concatenate([w, v / theta]), theta), ref,
                               atol=1e-14 * (1 + np.abs(v).max()))
