"""Unit tests of robodyn.models: the book's robots have the geometry and inertia they claim."""
import numpy as np
import pytest
import sympy as sp

import robodyn as rd
from robodyn import models


def test_rod_inertia():
    G = models.rod_inertia(12.0, 1.0)
    assert np.array_equal(G, np.diag([0, 1, 1, 12, 12, 12.0]))
    G = models.rod_inertia(2.0, 0.6, radius=0.1)
    assert np.allclose(np.diag(G), [0.01, 2 * (0.03 + 0.36) / 12, 2 * (0.03 + 0.36) / 12, 2, 2, 2])
    m, l = sp.symbols("m l", positive=True)
    Gs = models.rod_inertia(m, l)
    assert Gs[1, 1] == m * l**2 / 12 and Gs[0, 0] == 0 and Gs[5, 5] == m


def test_rod_inertia_by_integration():
    """Independent route: integrate r^2 dm over a discretized solid cylinder."""
    m, l, r = 3.0, 0.8, 0.05
    n = 400
    x = (np.arange(n) + 0.5) / n * l - l / 2
    Iyy_rod = m / n * np.sum(x**2)            # midpoint rule, slender part
    G = models.rod_inertia(m, l, r)
    assert np.isclose(G[1, 1] - m * r**2 / 4, Iyy_rod, rtol=1e-5)
    assert np.isclose(G[0, 0], m * r**2 / 2)


@pytest.mark.parametrize("args, exc, msg", [
    ((-1.0, 1.0), ValueError, r"rod_inertia: mass: expected a positive number, got -1.0"),
    (("m", 1.0), TypeError, r"rod_inertia: mass: expected a real number"),
    ((1.0, [1.0]), TypeError, r"rod_inertia: length: expected a real number"),
    ((1.0, 1.0, np.nan), ValueError, r"rod_inertia: radius: expected finite numbers"),
])
def test_rod_inertia_refuses(args, exc, msg):
    with pytest.raises(exc, match=msg):
        models.rod_inertia(*args)


def test_planar_rr():
    chain = models.planar_rr(0.7, 1.3, 2.0, 0.5)
    assert chain.n == 2 and chain.joint_types == ("revolute", "revolute")
    assert chain.name == "planar RR" and not chain.symbolic
    assert np.allclose(chain.home[:3, 3], [2.0, 0, 0]) and np.allclose(chain.home[:3, :3], np.eye(3))
    assert np.allclose(chain.screws[:, 1], [0, 0, 1, 0, -0.7, 0])
    assert np.allclose([L[0, 3] for L in chain.link_homes], [0.35, 0.7 + 0.65])
    assert np.allclose(np.diag(chain.link_inertias[1]), [0, 0.5 * 1.69 / 12, 0.5 * 1.69 / 12,
                                                         0.5, 0.5, 0.5])
    assert np.allclose(rd.fk_space(chain, [np.pi / 2, 0])[:3, 3], [0, 2.0, 0])


def test_planar_rp():
    chain = models.planar_rp(0.8, 0.6, 1.0, 2.0)
    assert chain.joint_types == ("revolute", "prismatic")
    assert np.allclose(chain.screws[:, 1], [0, 0, 0, 1, 0, 0])
    assert np.allclose(rd.fk_space(chain, [0, 0.3])[:3, 3], [0.9, 0, 0])
    assert np.allclose(rd.link_poses(chain, [0, 0.3])[1, :3, 3], [0.6, 0, 0])


def test_spatial_rrr():
    d1, a2, a3 = 0.4, 0.5, 0.4
    chain = models.spatial_rrr(d1, a2, a3)
    assert chain.joint_types == ("revolute",) * 3
    assert np.allclose(chain.home[:3, 3], [a2 + a3, 0, d1])
    # closed form of the elbow arm: shoulder about y lifts the arm (rotation about y by q2
    # turns x towards -z), waist about z
    q1, q2, q3 = 0.3, -0.5, 0.8
    r = a2 * np.cos(q2) + a3 * np.cos(q2 + q3)
    z = d1 - a2 * np.sin(q2) - a3 * np.sin(q2 + q3)
    p = rd.fk_space(chain, [q1, q2, q3])[:3, 3]
    assert np.allclose(p, [r * np.cos(q1), r * np.sin(q1), z], atol=1e-12)
    # link 1 is a vertical column: its CoM frame x axis (the rod axis) is vertical, at d1/2
    assert np.allclose(np.abs(chain.link_homes[0][:3, 0]), [0, 0, 1])
    assert np.allclose(chain.link_homes[0][:3, 3], [0, 0, d1 / 2])
    assert np.isclose(chain.link_inertias[0][3, 3], 3.0)


def test_ur5_like():
    chain = models.ur5_like()
    assert chain.n == 6 and chain.name == "UR5-like"
    assert np.allclose([G[3, 3] for G in chain.link_inertias], [3.7, 8.393, 2.275, 1.219, 1.219,
                                                                 0.1879])
    # Modern Robotics Example 4.5: M and the screw axes (W1 = .109, W2 = .082, L1 = .425,
    # L2 = .392, H1 = .089, H2 = .095)
    W1, W2, L1, L2, H1, H2 = 0.109, 0.082, 0.425, 0.392, 0.089, 0.095
    M = np.array([[-1, 0, 0, L1 + L2], [0, 0, 1, W1 + W2], [0, 1, 0, H1 - H2], [0, 0, 0, 1]])
    S = np.array([[0, 0, 1, 0, 0, 0], [0, 1, 0, -H1, 0, 0], [0, 1, 0, -H1, 0, L1],
                  [0, 1, 0, -H1, 0, L1 + L2], [0, 0, -1, -W1, L1 + L2, 0],
                  [0, 1, 0, H2 - H1, 0, L1 + L2]]).T
    assert np.allclose(chain.home, M) and np.allclose(chain.screws, S)
    # Example 4.5's answer at q = (0, -pi/2, 0, 0, pi/2, 0)
    T = rd.fk_space(chain, [0, -np.pi / 2, 0, 0, np.pi / 2, 0])
    want = np.array([[0, -1, 0, 0.095], [1, 0, 0, 0.109], [0, 0, 1, 0.988], [0, 0, 0, 1]])
    assert np.allclose(T, want, atol=1e-3)


def test_planar_chain():
    chain = models.planar_chain(4, length=0.5, mass=2.0)
    assert chain.n == 4 and chain.name == "planar 4-link"
    assert np.allclose(chain.home[:3, 3], [2.0, 0, 0])
    q = np.full(4, 0.2)
    x = sum(0.5 * np.cos(0.2 * (k + 1)) for k in range(4))
    y = sum(0.5 * np.sin(0.2 * (k + 1)) for k in range(4))
    assert np.allclose(rd.fk_space(chain, q)[:2, 3], [x, y])
    assert all(np.isclose(G[3, 3], 2.0) for G in chain.link_inertias)


@pytest.mark.parametrize("n, exc, msg", [
    (0, ValueError, "expected an integer >= 1, got 0"),
    (-1, ValueError, "expected an integer >= 1, got -1"),
    (2.0, TypeError, "expected an integer, got float 2.0"),
    (True, TypeError, "expected an integer, got bool True"),
    ("3", TypeError, "expected an integer, got str '3'"),
    (None, TypeError, "expected an integer, got NoneType None"),
    (10**6, ValueError, "expected at most 1000"),
])
def test_planar_chain_refuses(n, exc, msg):
    with pytest.raises(exc, match=r"planar_chain: n: " + msg):
        models.planar_chain(n)


def test_random_chain_is_valid_and_reproducible():
    for seed in range(10):
        a = models.random_chain(9, np.random.default_rng(seed), prismatic=0.3, helical=0.2)
        b = models.random_chain(9, np.random.default_rng(seed), prismatic=0.3, helical=0.2)
        assert np.array_equal(a.screws, b.screws) and np.array_equal(a.home, b.home)
        assert a.n == 9 and len(a.link_homes) == 9 and len(a.link_inertias) == 9
        assert rd.is_rotation(a.home[:3, :3])
        for G in a.link_inertias:
            assert np.all(np.linalg.eigvalsh(G) > 0)
    kinds = set()
    for seed in range(20):
        kinds |= set(models.random_chain(8, np.random.default_rng(seed), 0.3, 0.3).joint_types)
    assert kinds == {"revolute", "prismatic", "helical"}
    assert set(models.random_chain(12, np.random.default_rng(0), prismatic=0.0).joint_types) == \
        {"revolute"}
    assert set(models.random_chain(5, np.random.default_rng(0), prismatic=1.0).joint_types) == \
        {"prismatic"}


@pytest.mark.parametrize("kwargs, msg", [
    (dict(n=0), r"random_chain: n: expected an integer >= 1, got 0"),
    (dict(n=3, prismatic=0.8, helical=0.5), r"expected 0 <= prismatic \+ helical <= 1, got "
                                            r"0.8 \+ 0.5"),
    (dict(n=3, prismatic=-0.5), r"random_chain: prismatic: expected a non-negative number"),
])
def test_random_chain_refuses(kwargs, msg):
    with pytest.raises(ValueError, match=msg):
        models.random_chain(**kwargs)


@pytest.mark.parametrize("kwargs, msg", [
    (dict(n=3.0), r"random_chain: n: expected an integer, got float 3.0"),
    (dict(n=3, rng=0.5), r"random_chain: rng: expected an integer, got float 0.5 \(a numpy"),
    (dict(n=3, rng="0"), r"random_chain: rng: expected an integer"),
    (dict(n=3, prismatic="0.5"), r"random_chain: prismatic: expected a real number"),
])
def test_random_chain_refuses_types(kwargs, msg):
    with pytest.raises(TypeError, match=msg):
        models.random_chain(**kwargs)


def test_models_symbolic():
    l1, l2, m1, m2 = sp.symbols("l1 l2 m1 m2", positive=True)
    for make in (models.planar_rr, models.planar_rp):
        chain = make(l1, l2, m1, m2)
        assert chain.symbolic and chain.n == 2
        num = make(0.7, 1.3, 2.0, 0.5)
        vals = {l1: 0.7, l2: 1.3, m1: 2.0, m2: 0.5}
        assert np.allclose(np.array(sp.Matrix(chain.home).subs(vals), dtype=float), num.home)
        for Gs, G in zip(chain.link_inertias, num.link_inertias):
            assert np.allclose(np.array(sp.Matrix(Gs).subs(vals), dtype=float), G)
    d1, a2, a3 = sp.symbols("d1 a2 a3", positive=True)
    chain = models.spatial_rrr(d1, a2, a3)
    assert chain.symbolic
    vals = {d1: 0.4, a2: 0.5, a3: 0.4}
    assert np.allclose(np.array(sp.Matrix(chain.screws).subs(vals), dtype=float),
                       models.spatial_rrr().screws)


def test_symbolic_models_keep_numbers_exact():
    """CONTEXT convention: floats entering symbolic results become exact rationals. A float
    length next to a symbolic one (l1 + 0.5) must not leave a Float in the model."""
    l1 = sp.Symbol("l1", positive=True)
    chain = models.planar_rr(l1, 0.5)
    floats = sp.Matrix(chain.home).atoms(sp.Float) | sp.Matrix(chain.screws).atoms(sp.Float)
    assert not floats, f"Floats left in a symbolic model: {floats}"


def test_models_mass_matrices_are_positive_definite():
    """M = sum J_i^T G_i J_i is symmetric positive definite for every model (a consequence of
    positive link inertias and independent joint screws)."""
    rng = np.random.default_rng(40)
    for chain in (models.planar_rr(), models.planar_rp(), models.spatial_rrr(), models.ur5_like(),
                  models.planar_chain(6), models.random_chain(7, rng)):
        q = rng.uniform(-1, 1, size=chain.n) + 0.3
        M = sum(rd.jacobian_body(chain, q, link=i).T @ chain.link_inertias[i]
                @ rd.jacobian_body(chain, q, link=i) for i in range(chain.n))
        assert np.allclose(M, M.T)
        assert np.linalg.eigvalsh(M).min() > 0


def test_symbolic_models_keep_exact_numbers():
    import sympy as sp
    from robodyn.models import planar_rr, rod_inertia
    m = sp.Symbol("m", positive=True)
    G = rod_inertia(m, 1)
    assert G[2, 2] == m / 12
    chain = planar_rr(sp.S(1), 1, 1, 1)
    assert sp.Matrix(chain.link_inertias[0])[2, 2] == sp.Rational(1, 12)


def test_spatial_inertia_symbolic_mass_numeric_diagonal():
    import sympy as sp
    import robodyn as rd
    m = sp.Symbol("m", positive=True)
    G = rd.spatial_inertia(m, [0, 0, 0])
    assert G[3, 3] == m and G[0, 0] == 0
