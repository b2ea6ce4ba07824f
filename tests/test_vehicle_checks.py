"""robodyn.port_hamiltonian's boundary where the API fuzzer cannot reach (issue 28): the integrator's
fast path of StandardForm.rhs checks what the general path checks, Subgroup's basis is checked
against its name, and the energies agree by independent routes."""
import numpy as np
import pytest
import sympy as sp

import robodyn as rd
from robodyn import port_hamiltonian
from robodyn.models import planar_rr, ur5_like


@pytest.fixture(scope="module")
def space():
    G = rd.spatial_inertia(40.0, [3.0, 3.0, 4.0])
    vms = port_hamiltonian.VehicleManipulator.from_chain(ur5_like(), G, "floating",
                                           mount=rd.homogeneous(np.eye(3), [0, 0, 0.2]))
    std = port_hamiltonian.StandardForm(vms, gravity=(0.0, 0.0, -9.81))
    H = rd.exp_se3([0.3, -0.2, 0.5, 0.1, 0.2, 0.3])
    x = std.initial_state(H, np.linspace(-0.3, 0.3, 6), np.linspace(-1, 1, 6),
                          np.linspace(0.5, -0.5, 6))
    return std, x


def test_pose_error12_is_pose_error():
    """The plain-float pose measure of the fast path against numpy's pose_error (det by LAPACK,
    R^T R by matmul), on poses perturbed from 1e-12 to 1."""
    rng = np.random.default_rng(3)
    for _ in range(300):
        x = np.r_[rd.exp_se3(rng.normal(size=6))[:3, :3].ravel(), rng.normal(size=3)]
        x[:9] += rng.normal(size=9) * 10.0 ** rng.uniform(-12, 0)
        assert abs(port_hamiltonian._vehicle._pose_error12(x) - port_hamiltonian.pose_error(port_hamiltonian._vehicle._pose_of(x))) < 1e-12


def test_rhs_fast_path_equals_general_path_and_refuses_alike(space):
    std, x = space
    fast = std.rhs(0.0, x)
    assert std._rhs_clean(0.0, x) is not None                  # the fast path ran
    for slow in (std.rhs(0, list(x)), std.rhs(sp.Integer(0), x.astype(">f8")),
                 std.rhs(0.0, x, inputs=(np.zeros(6), np.zeros(6)))):
        assert np.abs(slow - fast).max() < 1e-12
    bad = x.copy()
    bad[:9] *= 1.2                                             # rotation block scaled
    with pytest.raises(ValueError, match=r"rhs: x\[:12\]"):
        std.rhs(0.0, bad)
    bad = x.copy()
    bad[-1] = np.nan
    with pytest.raises(ValueError, match="rhs: x"):
        std.rhs(0.0, bad)
    with pytest.raises(ValueError, match="rhs: t"):
        std.rhs(float("inf"), x)
    with pytest.raises(TypeError, match="rhs: t"):
        std.rhs(sp.Symbol("t"), x)
    huge = x.copy()
    huge[12:18] = 1e154                                        # finite, squares overflow
    with pytest.raises(ValueError, match="rhs: result"):
        std.rhs(0.0, huge)
    with pytest.raises(TypeError, match="rhs: inputs"):
        std.rhs(0.0, x, inputs="w")


def test_subgroup_basis_is_checked_against_its_name():
    S = port_hamiltonian.Subgroup("revolute", np.r_[0, 0, 0.6, 0.8, 0, 0][:, None])   # axis off the origin
    H = rd.exp_se3(1.3 * S.basis[:, 0])
    assert S.contains(H) and not S.contains(rd.exp_se3([0, 0, 0, 0, 0, 0.1]))
    with pytest.raises(ValueError, match="Subgroup: basis"):
        port_hamiltonian.Subgroup("revolute", np.r_[0, 0, 0.6, 0, 0, 0.8][:, None])   # a screw, pitch != 0
    with pytest.raises(ValueError, match="Subgroup: basis"):
        port_hamiltonian.Subgroup("prismatic", np.r_[0, 0, 1.0, 0, 0, 0][:, None])    # a rotation
    with pytest.raises(ValueError, match="Subgroup: basis"):
        port_hamiltonian.Subgroup("planar", np.eye(6)[:, 3:6])                      # not the xy algebra
    with pytest.raises(ValueError, match="Subgroup: name"):
        port_hamiltonian.Subgroup("spherical", np.eye(6)[:, :3])
    with pytest.raises(TypeError, match="contains: tol"):
        port_hamiltonian.SUBGROUPS["planar"].contains(np.eye(4), tol=sp.Symbol("t"))


def test_energies_agree_by_two_routes(space):
    """mechanical_energy (mass matrix, ph-21) = kinetic_energy (body by body) + potential."""
    std, x = space
    vms = std.vms
    H, v, q, qd = std.split(x)
    E = port_hamiltonian.mechanical_energy(vms, H, v, q, qd, std.gravity)
    E2 = vms.kinetic_energy(q, v, qd) + vms.potential_energy(q, H, std.gravity)
    assert abs(E - E2) < 1e-10 * abs(E) and abs(std.energy(x) - E) < 1e-12 * abs(E)
    with pytest.raises(ValueError, match="kinetic_energy: qd"):
        vms.kinetic_energy(q, v, qd[:-1])
    with pytest.raises(TypeError, match="mechanical_energy: vms"):
        port_hamiltonian.mechanical_energy(planar_rr(), H, v, q, qd)
