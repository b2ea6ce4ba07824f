"""Unit tests of robodyn.rigid_motion: every public function, its properties on random input,
its symbolic path against the numeric one, and every refusal of bad input."""
import numpy as np
import pytest
import sympy as sp

import robodyn as rd
from robodyn import models

TOL = 1e-10


def rng_of(seed):
    return np.random.default_rng(seed)


def random_rotation(rng):
    return rd.exp_so3(rng.normal(size=3))


def random_pose(rng):
    return rd.homogeneous(random_rotation(rng), rng.normal(size=3))


def unit(rng, n=3):
    x = rng.normal(size=n)
    return x / np.linalg.norm(x)


def close(a, b, tol=TOL):
    a = np.array(a.tolist() if isinstance(a, sp.MatrixBase) else a, dtype=float)
    b = np.array(b.tolist() if isinstance(b, sp.MatrixBase) else b, dtype=float)
    if 1 in (a.ndim, b.ndim) and a.size == b.size:       # column Matrix vs 1-D array
        a, b = a.ravel(), b.ravel()
    return a.shape == b.shape and np.allclose(a, b, atol=tol, rtol=0)


# --------------------------------------------------------------------------
# hat / vee
# --------------------------------------------------------------------------


def test_hat_is_cross_product():
    rng = rng_of(1)
    for _ in range(20):
        w, p = rng.normal(size=3), rng.normal(size=3)
        assert np.allclose(rd.hat(w) @ p, np.cross(w, p), atol=TOL)
        assert np.allclose(rd.hat(w), -rd.hat(w).T)


def test_hat_of_twist_acts_on_homogeneous_points():
    rng = rng_of(2)
    V = rng.normal(size=6)
    X = rd.hat(V)
    assert X.shape == (4, 4)
    assert np.all(X[3] == 0)
    p = rng.normal(size=3)
    # [V] (p, 1) = (omega x p + v, 0): the velocity of the point p
    assert np.allclose(X @ np.append(p, 1), np.append(np.cross(V[:3], p) + V[3:], 0))


def test_hat_vee_inverse():
    rng = rng_of(3)
    for n in (3, 6):
        for _ in range(10):
            x = rng.normal(size=n)
            assert np.allclose(rd.vee(rd.hat(x)), x, atol=0)
            X = rd.hat(x)
            assert np.allclose(rd.hat(rd.vee(X)), X, atol=0)


def test_hat_symbolic_equals_numeric():
    a, b, c, d, e, f = sp.symbols("a b c d e f", real=True)
    X = rd.hat([a, b, c])
    assert isinstance(X, sp.MatrixBase) and X.shape == (3, 3)
    vals = {a: 0.3, b: -1.2, c: 2.0}
    assert close(X.subs(vals), rd.hat([0.3, -1.2, 2.0]))
    Y = rd.hat(sp.Matrix([a, b, c, d, e, f]))
    vals.update({d: 1.0, e: 0.5, f: -0.25})
    assert close(Y.subs(vals), rd.hat([0.3, -1.2, 2.0, 1.0, 0.5, -0.25]))
    assert sp.simplify(rd.vee(Y) - sp.Matrix([a, b, c, d, e, f])) == sp.zeros(6, 1)


@pytest.mark.parametrize("bad, exc, msg", [
    ([1, 2], ValueError, r"expected a 3-vector .*6-vector.*got a list of length 2"),
    (np.zeros(5), ValueError, r"got an array of shape \(5,\)"),
    (3.0, ValueError, r"expected a 3-vector"),
    ("abc", TypeError, r"hat: x: expected an array of numbers, got str"),
    (["a", "b", "c"], TypeError, r"hat: x: expected an array of numbers"),
    ([1.0, np.nan, 0.0], ValueError, r"hat: x(\[\d+\])?: expected finite numbers, got NaN"),
    ([1.0, 0.0, np.inf, 0, 0, 0], ValueError, r"expected finite numbers"),
])
def test_hat_refuses(bad, exc, msg):
    with pytest.raises(exc, match=msg):
        rd.hat(bad)


@pytest.mark.parametrize("bad, msg", [
    (np.eye(3), r"vee: X: expected a skew-symmetric 3x3 matrix, got one with \|W \+ W\^T\| = 2"),
    (np.ones((4, 4)), r"vee: X: expected an se\(3\) matrix with last row 0"),
    (np.zeros((3, 4)), r"vee: X: expected a 3x3 so\(3\) or a 4x4 se\(3\) matrix, got an array of "
                       r"shape \(3, 4\)"),
    (np.zeros(6), r"expected a 3x3 so\(3\) or a 4x4 se\(3\) matrix"),
])
def test_vee_refuses(bad, msg):
    with pytest.raises(ValueError, match=msg):
        rd.vee(bad)


def test_vee_refuses_nan():
    W = rd.hat([1.0, 2.0, 3.0])
    W[0, 1] = np.nan
    with pytest.raises(ValueError, match="vee: X: expected finite numbers"):
        rd.vee(W)


# --------------------------------------------------------------------------
# exp / log on SO(3)
# --------------------------------------------------------------------------


def test_exp_so3_is_rotation_and_rodrigues():
    rng = rng_of(4)
    for _ in range(20):
        w = rng.normal(size=3) * 2
        R = rd.exp_so3(w)
        assert rd.is_rotation(R)
        assert np.allclose(R @ w, w, atol=TOL)          # the axis is fixed
        t = np.linalg.norm(w)
        assert np.isclose(np.trace(R), 1 + 2 * np.cos(t), atol=TOL)
        # one-argument and two-argument forms agree
        assert np.allclose(rd.exp_so3(w / t, t), R, atol=TOL)


def test_exp_so3_against_series():
    """Independent route: the matrix exponential by its truncated power series."""
    rng = rng_of(5)
    for _ in range(5):
        W = rd.hat(rng.normal(size=3))
        E, term = np.eye(3), np.eye(3)
        for k in range(1, 40):
            term = term @ W / k
            E = E + term
        assert np.allclose(rd.exp_so3(rd.vee(W)), E, atol=1e-12)


def test_exp_so3_small_and_zero_angle():
    assert np.array_equal(rd.exp_so3([0, 0, 0]), np.eye(3))
    for t in (1e-8, 1e-5, 0.99e-4, 1.01e-4, 1e-3):
        w = np.array([0.6, 0.0, 0.8]) * t
        R = rd.exp_so3(w)
        assert rd.is_rotation(R, 1e-14)
        assert np.allclose(R, np.eye(3) + rd.hat(w) + rd.hat(w) @ rd.hat(w) / 2, atol=1e-12)


def test_log_exp_identities_generic():
    rng = rng_of(6)
    for _ in range(50):
        axis, theta = unit(rng), rng.uniform(1e-3, np.pi - 1e-3)
        w = axis * theta
        assert np.allclose(rd.log_so3(rd.exp_so3(w)), w, atol=1e-10)
        R = random_rotation(rng)
        assert np.allclose(rd.exp_so3(rd.log_so3(R)), R, atol=1e-12)
        assert 0 <= np.linalg.norm(rd.log_so3(R)) <= np.pi + 1e-12


@pytest.mark.parametrize("theta", [0.0, 1e-12, 1e-8, 1e-5, 1e-4, 0.5, np.pi - 1e-2,
                                   np.pi - 1e-4, np.pi - 1e-8])
def test_log_exp_special_angles(theta):
    rng = rng_of(7)
    for _ in range(10):
        w = unit(rng) * theta
        got = rd.log_so3(rd.exp_so3(w))
        # near pi, the angle is determined only to ~sqrt(eps) by the matrix entries
        tol = 1e-10 if theta < 3 else 1e-7
        assert np.allclose(got, w, atol=tol), (theta, got, w)
        assert np.allclose(rd.exp_so3(got), rd.exp_so3(w), atol=1e-12)


def test_log_at_pi_returns_one_of_both_logs():
    rng = rng_of(8)
    for axis in [np.array([1.0, 0, 0]), np.array([0, 0, 1.0]), unit(rng), -unit(rng)]:
        R = rd.exp_so3(axis * np.pi)
        w = rd.log_so3(R)
        assert np.isclose(np.linalg.norm(w), np.pi, atol=1e-12)
        assert np.allclose(w, axis * np.pi, atol=1e-7) or np.allclose(w, -axis * np.pi, atol=1e-7)
        assert np.allclose(rd.exp_so3(w), R, atol=1e-12)


def test_exp_so3_symbolic_theta_equals_numeric():
    t = sp.Symbol("theta", real=True)
    axis = unit(rng_of(9))
    R = rd.exp_so3(axis, t)
    assert isinstance(R, sp.MatrixBase)
    for val in (0.0, 0.7, -2.1, 3.0):
        assert close(R.subs(t, val), rd.exp_so3(axis, val))
    # about z with an exact axis: the familiar matrix
    Rz = rd.exp_so3([0, 0, 1], t)
    assert sp.simplify(Rz - sp.Matrix([[sp.cos(t), -sp.sin(t), 0], [sp.sin(t), sp.cos(t), 0],
                                       [0, 0, 1]])) == sp.zeros(3, 3)


def test_exp_so3_symbolic_vector_and_log_symbolic():
    a, b, c = sp.symbols("a b c", real=True)
    R = rd.exp_so3(sp.Matrix([a, b, c]))
    vals = {a: 0.2, b: -0.4, c: 0.9}
    assert close(R.subs(vals).evalf(), rd.exp_so3([0.2, -0.4, 0.9]))
    w = rd.log_so3(rd.exp_so3([0, 0, 1], sp.Rational(1, 2)))
    assert close(w.evalf(), [0, 0, 0.5])


def test_exp_so3_symbolic_zero_vector():
    """exp of the zero rotation vector, given as a sympy Matrix, is the identity (exp_se3
    handles it; exp_so3 divides 0 by 0)."""
    assert rd.exp_so3(sp.Matrix([0, 0, 0])) == sp.eye(3)


@pytest.mark.parametrize("args, exc, msg", [
    (([1, 2],), ValueError, r"exp_so3: w: expected a vector of length 3, got shape \(2,\)"),
    (([1, 0, 0], "x"), TypeError, r"exp_so3: theta: expected a real number or a sympy "
                                   r"expression, got str"),
    (([1, 1, 0], 0.3), ValueError, r"w must be a unit axis\): expected a unit vector \(norm 1\), got norm 1.41"),
    (([1, 0, 0], np.nan), ValueError, r"exp_so3: theta: expected finite numbers"),
    (([np.nan, 0, 0],), ValueError, r"exp_so3: w(\[\d+\])?: expected finite numbers"),
    (("abc",), TypeError, r"exp_so3: w: expected an array of numbers, got str"),
    (([1, 0, 0], True), TypeError, r"expected a real number .*got bool"),
])
def test_exp_so3_refuses(args, exc, msg):
    with pytest.raises(exc, match=msg):
        rd.exp_so3(*args)


@pytest.mark.parametrize("bad, msg", [
    (2 * np.eye(3), r"log_so3: R: expected a rotation matrix \(R\^T R = I, det R = \+1\), got "
                    r"\|R\^T R - I\| = 3"),
    (np.diag([1.0, 1.0, -1.0]), r"det R = -1"),
    (np.eye(4), r"log_so3: R: expected a 3x3 matrix, got shape \(4, 4\)"),
])
def test_log_so3_refuses(bad, msg):
    with pytest.raises(ValueError, match=msg):
        rd.log_so3(bad)


def test_log_so3_tolerance_keyword():
    R = rd.exp_so3([0.1, 0.2, 0.3]) * (1 + 1e-5)
    with pytest.raises(ValueError, match="expected a rotation matrix"):
        rd.log_so3(R)
    assert np.allclose(rd.log_so3(R, tol=1e-3), [0.1, 0.2, 0.3], atol=1e-4)


def test_is_rotation():
    rng = rng_of(10)
    R = random_rotation(rng)
    assert rd.is_rotation(R)
    assert not rd.is_rotation(-R)                     # det -1
    assert not rd.is_rotation(R * 1.01)
    assert not rd.is_rotation(np.eye(4))
    assert not rd.is_rotation(R + 1e-7, tol=1e-9)
    assert rd.is_rotation(R + 1e-10, tol=1e-9)


def test_rotation_about_named_and_free_axes():
    for name, e in zip("xyz", np.eye(3)):
        R = rd.rotation(name, 0.4)
        assert np.allclose(R, rd.exp_so3(e * 0.4))
    assert np.allclose(rd.rotation([0, 0, 5], np.pi / 2), rd.rotation("z", np.pi / 2))
    t = sp.Symbol("t")
    assert close(rd.rotation("x", t).subs(t, 0.3), rd.rotation("x", 0.3))


@pytest.mark.parametrize("args, exc, msg", [
    (("w", 0.1), ValueError, r"rotation: axis: expected 'x', 'y', 'z' or a 3-vector, got 'w'"),
    (([0, 0, 0], 0.1), ValueError, r"rotation: axis: expected a nonzero axis, got the zero vector"),
    (([1, 0], 0.1), ValueError, r"rotation: axis: expected a vector of length 3, got shape"),
    (("x", "a"), TypeError, r"rotation: angle: expected a real number"),
])
def test_rotation_refuses(args, exc, msg):
    with pytest.raises(exc, match=msg):
        rd.rotation(*args)


# --------------------------------------------------------------------------
# exp / log on SE(3)
# --------------------------------------------------------------------------


def matrix_exp_series(X, terms=40):
    E, term = np.eye(len(X)), np.eye(len(X))
    for k in range(1, terms):
        term = term @ X / k
        E = E + term
    return E


def test_exp_se3_against_series():
    rng = rng_of(11)
    for _ in range(10):
        V = rng.normal(size=6)
        assert np.allclose(rd.exp_se3(V), matrix_exp_series(rd.hat(V)), atol=1e-11)


def test_exp_se3_screw_and_theta_forms_agree():
    rng = rng_of(12)
    for _ in range(10):
        S = rd.revolute_screw(rng.normal(size=3), rng.normal(size=3), pitch=rng.normal())
        t = rng.uniform(-3, 3)
        assert np.allclose(rd.exp_se3(S, t), rd.exp_se3(S * t), atol=1e-12)
    P = rd.prismatic_screw(rng.normal(size=3))
    assert np.allclose(rd.exp_se3(P, 0.7), rd.homogeneous(np.eye(3), 0.7 * P[3:]))
    assert np.allclose(rd.exp_se3(P * 0.7), rd.exp_se3(P, 0.7))


def test_exp_se3_rotation_about_an_axis_fixes_its_points():
    rng = rng_of(13)
    axis, point = unit(rng), rng.normal(size=3)
    H = rd.exp_se3(rd.revolute_screw(axis, point), 1.1)
    for s in (-1.0, 0.0, 2.0):
        x = point + s * axis
        assert np.allclose(H @ np.append(x, 1), np.append(x, 1), atol=1e-12)


def test_log_exp_se3_identities():
    rng = rng_of(14)
    for _ in range(40):
        w = unit(rng) * rng.uniform(1e-3, np.pi - 1e-3)
        V = np.concatenate([w, rng.normal(size=3)])
        assert np.allclose(rd.log_se3(rd.exp_se3(V)), V, atol=1e-9)
        H = random_pose(rng)
        assert np.allclose(rd.exp_se3(rd.log_se3(H)), H, atol=1e-11)


@pytest.mark.parametrize("theta", [0.0, 1e-8, 1e-4, 1e-3, 2.0, np.pi - 1e-8])
def test_log_exp_se3_special_angles(theta):
    rng = rng_of(15)
    for _ in range(5):
        V = np.concatenate([unit(rng) * theta, rng.normal(size=3)])
        H = rd.exp_se3(V)
        got = rd.log_se3(H)
        tol = 1e-9 if theta < 3 else 1e-6
        assert np.allclose(got, V, atol=tol), (theta, got, V)
        assert np.allclose(rd.exp_se3(got), H, atol=1e-10)


def test_log_se3_pure_translation_and_pi():
    assert np.allclose(rd.log_se3(rd.homogeneous(np.eye(3), [1, 2, 3])), [0, 0, 0, 1, 2, 3])
    H = rd.exp_se3(rd.revolute_screw([0, 0, 1], [1, 0, 0], 0.2), np.pi)
    assert np.allclose(rd.exp_se3(rd.log_se3(H)), H, atol=1e-12)


def test_exp_se3_symbolic_theta_equals_numeric():
    t = sp.Symbol("t", real=True)
    rng = rng_of(16)
    S = rd.revolute_screw(rng.normal(size=3), rng.normal(size=3), pitch=0.3)
    H = rd.exp_se3(S, t)
    assert isinstance(H, sp.MatrixBase) and H.shape == (4, 4)
    for val in (-1.3, 0.0, 0.4, 2.9):
        assert close(H.subs(t, val), rd.exp_se3(S, val))
    P = rd.exp_se3([0, 0, 0, 1, 0, 0], t)
    assert P[0, 3] == t
    # symbolic twist coordinates, no theta
    a, b = sp.symbols("a b", real=True)
    H2 = rd.exp_se3(sp.Matrix([0, 0, a, b, 0, 0]))
    assert close(H2.subs({a: 0.5, b: 2.0}).evalf(), rd.exp_se3([0, 0, 0.5, 2.0, 0, 0]))
    H3 = rd.exp_se3(sp.Matrix([0, 0, 0, a, b, 0]))
    assert H3[:3, 3] == sp.Matrix([a, b, 0])


def test_log_se3_symbolic_generic_branch():
    t = sp.Rational(7, 10)
    H = rd.exp_se3(sp.Matrix([0, 0, 1, 0, -1, 0]), t)
    V = rd.log_se3(H)
    assert close(V.evalf(), [0, 0, 0.7, 0, -0.7, 0])


@pytest.mark.parametrize("args, exc, msg", [
    (([1, 2, 3],), ValueError, r"exp_se3: V: expected a vector of length 6, got shape \(3,\)"),
    (([0, 0, 2, 0, 0, 0], 1.0), ValueError,
     r"V must be a screw axis\): expected a screw axis \(\|omega\| = 1, or omega = 0 and \|v\| = 1\), "
     r"got \|omega\| = 2"),
    (([0, 0, 0, 0, 3, 4], 1.0), ValueError,
     r"V must be a screw axis\): expected a screw axis .*got omega = 0 and \|v\| = 5"),
    (([0, 0, 1, 0, 0, 0], "t"), TypeError, r"exp_se3: theta: expected a real number"),
    (([0, 0, np.nan, 0, 0, 0],), ValueError, r"exp_se3: V(\[\d+\])?: expected finite numbers"),
    ((np.zeros((6, 2)),), ValueError, r"exp_se3: V: expected a vector of length 6"),
])
def test_exp_se3_refuses(args, exc, msg):
    with pytest.raises(exc, match=msg):
        rd.exp_se3(*args)


@pytest.mark.parametrize("bad, msg", [
    (np.diag([2.0, 2, 2, 1]), r"log_se3: H \(rotation block\): expected a rotation matrix"),
    (np.vstack([np.eye(4)[:3], [[1, 0, 0, 1]]]), r"log_se3: H: expected last row \[0, 0, 0, 1\], "
                                                 r"got \[1.0, 0.0, 0.0, 1.0\]"),
    (np.eye(3), r"log_se3: H: expected a 4x4 matrix, got shape \(3, 3\)"),
])
def test_log_se3_refuses(bad, msg):
    with pytest.raises(ValueError, match=msg):
        rd.log_se3(bad)


# --------------------------------------------------------------------------
# homogeneous, inverse, adjoints, twists and wrenches
# --------------------------------------------------------------------------


def test_homogeneous_and_inverse():
    rng = rng_of(17)
    for _ in range(10):
        R, p = random_rotation(rng), rng.normal(size=3)
        H = rd.homogeneous(R, p)
        assert np.array_equal(H[:3, :3], R) and np.array_equal(H[:3, 3], p)
        assert np.array_equal(H[3], [0, 0, 0, 1])
        assert np.allclose(rd.inverse_homogeneous(H), np.linalg.inv(H), atol=1e-12)
    x = sp.Symbol("x")
    Hs = rd.homogeneous(sp.eye(3), [x, 0, 1])
    assert isinstance(Hs, sp.MatrixBase) and Hs[0, 3] == x
    assert rd.inverse_homogeneous(Hs)[0, 3] == -x


@pytest.mark.parametrize("R, p, exc, msg", [
    (np.eye(3) * 2, [0, 0, 0], ValueError, r"homogeneous: R: expected a rotation matrix"),
    (np.eye(3), [0, 0], ValueError, r"homogeneous: p: expected a vector of length 3, got shape"),
    (np.eye(2), [0, 0, 0], ValueError, r"homogeneous: R: expected a 3x3 matrix, got shape"),
    (np.eye(3), "abc", TypeError, r"homogeneous: p: expected an array of numbers, got str"),
    (np.eye(3), [0, np.nan, 0], ValueError, r"homogeneous: p(\[\d+\])?: expected finite numbers"),
])
def test_homogeneous_refuses(R, p, exc, msg):
    with pytest.raises(exc, match=msg):
        rd.homogeneous(R, p)


def test_inverse_homogeneous_refuses():
    with pytest.raises(ValueError, match=r"inverse_homogeneous: H \(rotation block\): expected a "
                                         r"rotation matrix"):
        rd.inverse_homogeneous(np.diag([1.0, 2, 1, 1]))
    with pytest.raises(ValueError, match=r"inverse_homogeneous: H: expected a 4x4 matrix"):
        rd.inverse_homogeneous(np.eye(3))


def test_adjoint_homomorphism_and_inverse():
    rng = rng_of(18)
    for _ in range(20):
        A, B = random_pose(rng), random_pose(rng)
        assert np.allclose(rd.adjoint(A @ B), rd.adjoint(A) @ rd.adjoint(B), atol=1e-12)
        assert np.allclose(rd.adjoint(rd.inverse_homogeneous(A)), np.linalg.inv(rd.adjoint(A)),
                           atol=1e-11)


def test_adjoint_is_conjugation():
    """[Ad_H V] = H [V] H^{-1}, the definition, checked through hat."""
    rng = rng_of(19)
    for _ in range(10):
        H, V = random_pose(rng), rng.normal(size=6)
        assert np.allclose(rd.hat(rd.adjoint(H) @ V), H @ rd.hat(V) @ np.linalg.inv(H),
                           atol=1e-12)


def test_ad_is_the_bracket():
    rng = rng_of(20)
    for _ in range(20):
        V, W = rng.normal(size=6), rng.normal(size=6)
        bracket = rd.hat(V) @ rd.hat(W) - rd.hat(W) @ rd.hat(V)
        assert np.allclose(rd.hat(rd.ad(V) @ W), bracket, atol=1e-12)
        assert np.allclose(rd.ad(V) @ W, -rd.ad(W) @ V, atol=1e-12)


def test_ad_is_derivative_of_adjoint():
    """d/dt Ad_{exp([V] t)} at t = 0 equals ad_V (central finite difference)."""
    rng = rng_of(21)
    V, h = rng.normal(size=6), 1e-5
    D = (rd.adjoint(rd.exp_se3(V * h)) - rd.adjoint(rd.exp_se3(-V * h))) / (2 * h)
    assert np.allclose(D, rd.ad(V), atol=1e-8)


def test_transform_twist_and_wrench_keep_power():
    rng = rng_of(22)
    for _ in range(20):
        H, V, W = random_pose(rng), rng.normal(size=6), rng.normal(size=6)
        Va, Wa = rd.transform_twist(H, V), rd.transform_wrench(H, W)
        assert np.allclose(Va, rd.adjoint(H) @ V, atol=1e-12)
        assert np.isclose(Wa @ Va, W @ V, atol=1e-10)
        assert np.allclose(rd.transform_wrench(rd.inverse_homogeneous(H), Wa), W, atol=1e-11)


def test_transform_wrench_of_a_force_gives_its_moment():
    """A force f at the point r (frame b at r, no rotation) has moment r x f about a's origin."""
    r, f = np.array([1.0, 2.0, 0.5]), np.array([0.3, -1.0, 2.0])
    W = rd.transform_wrench(rd.homogeneous(np.eye(3), r), np.concatenate([np.zeros(3), f]))
    assert np.allclose(W, np.concatenate([np.cross(r, f), f]))


def test_twists_and_wrenches_symbolic():
    x, t = sp.symbols("x t", real=True)
    H = rd.homogeneous(rd.exp_so3([0, 0, 1], t), [x, 0, 0])
    V = [0, 0, 1, 0, 0, 0]
    Va = rd.transform_twist(H, V)
    assert isinstance(Va, sp.MatrixBase)
    Hn = rd.homogeneous(rd.exp_so3([0, 0, 1], 0.3), [2.0, 0, 0])
    assert close(Va.subs({x: 2.0, t: 0.3}), rd.transform_twist(Hn, V))
    Wa = rd.transform_wrench(H, [0, 0, 0, 0, 1, 0])
    assert close(Wa.subs({x: 2.0, t: 0.3}), rd.transform_wrench(Hn, [0, 0, 0, 0, 1, 0]))
    assert close(rd.ad(sp.Matrix([x, 0, 0, 0, 0, 0])).subs(x, 2.0), rd.ad([2.0, 0, 0, 0, 0, 0]))
    assert close(rd.adjoint(H).subs({x: 2.0, t: 0.3}), rd.adjoint(Hn))


@pytest.mark.parametrize("f, args, exc, msg", [
    (rd.adjoint, (np.eye(3),), ValueError, r"adjoint: H: expected a 4x4 matrix, got shape"),
    (rd.adjoint, (np.diag([1, 1, 3, 1.0]),), ValueError, r"adjoint: H \(rotation block\)"),
    (rd.ad, ([1, 2, 3],), ValueError, r"ad: V: expected a vector of length 6, got shape \(3,\)"),
    (rd.ad, ("abcdef",), TypeError, r"ad: V: expected an array of numbers, got str"),
    (rd.transform_twist, (np.eye(4), [1, 2, 3]), ValueError,
     r"transform_twist: V_b: expected a vector of length 6"),
    (rd.transform_twist, (np.eye(3), np.zeros(6)), ValueError, r"transform_twist: H_ab: expected a 4x4"),
    (rd.transform_wrench, (np.eye(4), np.zeros(5)), ValueError,
     r"transform_wrench: W_b: expected a vector of length 6, got shape \(5,\)"),
    (rd.transform_wrench, (2 * np.eye(4), np.zeros(6)), ValueError, r"rotation block"),
    (rd.transform_wrench, (np.eye(4), [0, 0, 0, 0, 0, np.nan]), ValueError, r"finite numbers"),
])
def test_adjoint_family_refuses(f, args, exc, msg):
    with pytest.raises(exc, match=msg):
        f(*args)


# --------------------------------------------------------------------------
# screws and inertias
# --------------------------------------------------------------------------


def test_revolute_and_prismatic_screws():
    rng = rng_of(23)
    a, p, h = rng.normal(size=3), rng.normal(size=3), 0.25
    S = rd.revolute_screw(a, p, pitch=h)
    w = a / np.linalg.norm(a)
    assert np.allclose(S[:3], w) and np.allclose(S[3:], -np.cross(w, p) + h * w)
    # the velocity of a point on the axis is along the axis, h per radian
    assert np.allclose(np.cross(S[:3], p) + S[3:], h * w)
    P = rd.prismatic_screw([0, 3, 4])
    assert np.allclose(P, [0, 0, 0, 0, 0.6, 0.8])
    l = sp.Symbol("l")
    Ss = rd.revolute_screw([0, 0, 1], [l, 0, 0])
    assert Ss == sp.Matrix([0, 0, 1, 0, -l, 0])
    # one behaviour on both paths (issue 37): the direction is normalised, sympy too
    assert rd.prismatic_screw(sp.Matrix([l, 0, 0]))[3] == l / sp.sqrt(l**2)
    lp = sp.Symbol("l", positive=True)
    assert list(rd.prismatic_screw(sp.Matrix([lp, 0, 0]))) == [0, 0, 0, 1, 0, 0]
    assert list(rd.revolute_screw([0, 0, 2 * lp], [1, 0, 0])) == [0, 0, 1, 0, -1, 0]
    num = rd.revolute_screw([0, 0, 2.0], [1, 0, 0])
    assert np.allclose(num, np.array(rd.revolute_screw([0, 0, 2 * lp], [1, 0, 0]).subs(
        lp, 0.7), dtype=float).ravel())


@pytest.mark.parametrize("f, args, exc, msg", [
    (rd.revolute_screw, ([0, 0, 0], [0, 0, 0]), ValueError,
     r"revolute_screw: axis: expected a nonzero direction, got the zero vector"),
    (rd.revolute_screw, ([0, 0, 1], [0, 0]), ValueError,
     r"revolute_screw: point: expected a vector of length 3, got shape \(2,\)"),
    (rd.revolute_screw, ([0, 0, 1], [0, 0, 0], "h"), TypeError,
     r"revolute_screw: pitch: expected a real number"),
    (rd.revolute_screw, ([0, 0, np.nan], [0, 0, 0]), ValueError, r"axis(\[\d+\])?: expected finite"),
    (rd.prismatic_screw, ([0, 0, 0],), ValueError,
     r"prismatic_screw: direction: expected a nonzero direction, got the zero vector"),
    (rd.prismatic_screw, ([1, 0],), ValueError, r"prismatic_screw: direction: expected a vector"),
    (rd.prismatic_screw, ("xyz",), TypeError, r"direction: expected an array of numbers"),
])
def test_screws_refuse(f, args, exc, msg):
    with pytest.raises(exc, match=msg):
        f(*args)


def test_spatial_inertia_values_and_kinetic_energy():
    G = rd.spatial_inertia(2.0, [0.1, 0.2, 0.3])
    assert np.array_equal(G, np.diag([0.1, 0.2, 0.3, 2, 2, 2]))
    rng = rng_of(24)
    Rc = random_rotation(rng)
    I = Rc @ np.diag([0.2, 0.3, 0.4]) @ Rc.T
    G = rd.spatial_inertia(1.5, I)
    assert np.allclose(G[:3, :3], I) and np.allclose(G[3:, 3:], 1.5 * np.eye(3))
    assert np.all(G[:3, 3:] == 0)
    V = rng.normal(size=6)
    assert np.isclose(V @ G @ V, V[:3] @ I @ V[:3] + 1.5 * V[3:] @ V[3:])
    m = sp.Symbol("m", positive=True)
    Gs = rd.spatial_inertia(m, [m / 12, 0, m / 12])
    assert isinstance(Gs, sp.MatrixBase) and Gs[3, 3] == m and Gs[0, 0] == m / 12


def test_spatial_inertia_transforms_like_a_tensor():
    """Kinetic energy is frame independent: G_a = Ad_{H_ba}^T G_b Ad_{H_ba}, and then
    V_a^T G_a V_a = V_b^T G_b V_b."""
    rng = rng_of(25)
    G = rd.spatial_inertia(2.0, [0.1, 0.2, 0.25])
    H_ab = random_pose(rng)
    Ad_ba = rd.adjoint(rd.inverse_homogeneous(H_ab))
    Ga = Ad_ba.T @ G @ Ad_ba
    V_b = rng.normal(size=6)
    V_a = rd.transform_twist(H_ab, V_b)
    assert np.isclose(V_a @ Ga @ V_a, V_b @ G @ V_b)


@pytest.mark.parametrize("mass, I, exc, msg", [
    (-1.0, [1, 1, 1], ValueError, r"spatial_inertia: mass: expected a positive number, got -1.0"),
    (0.0, [1, 1, 1], ValueError, r"spatial_inertia: mass: expected a positive number, got 0.0"),
    (1.0, [[1, 0.5, 0], [0, 1, 0], [0, 0, 1]], ValueError,
     r"expected a symmetric 3x3 matrix, got asymmetry 0.5"),
    (1.0, [-1, 1, 1], ValueError, r"expected a positive semi-definite inertia matrix, got "
                                  r"principal moments \[-1.0, 1.0, 1.0\]"),
    (1.0, [1, 1, 3], ValueError, r"obeying the triangle inequality .*got moments "
                                 r"\[1.0, 1.0, 3.0\]"),
    (1.0, [1, 2], ValueError, r"spatial_inertia: inertia: expected a vector of length 3, got shape"),
    (1.0, np.eye(4), ValueError, r"expected a 3x3 matrix, got shape \(4, 4\)"),
    ("1", [1, 1, 1], TypeError, r"spatial_inertia: mass: expected a real number"),
    (np.nan, [1, 1, 1], ValueError, r"spatial_inertia: mass: expected finite numbers"),
    (1.0, [1, np.nan, 1], ValueError, r"spatial_inertia: inertia(\[1\])?: expected finite numbers"),
])
def test_spatial_inertia_refuses(mass, I, exc, msg):
    with pytest.raises(exc, match=msg):
        rd.spatial_inertia(mass, I)


# --------------------------------------------------------------------------
# serial chains
# --------------------------------------------------------------------------


def two_link_screws():
    return np.array([[0, 0], [0, 0], [1, 1], [0, 0], [0, -1], [0, 0]], dtype=float)


def test_chain_from_screws_and_from_joints_agree():
    a = rd.SerialChain.from_screws(two_link_screws(), rd.homogeneous(np.eye(3), [2, 0, 0]))
    b = rd.SerialChain.from_joints([("revolute", [0, 0, 1], [0, 0, 0]),
                                    ("revolute", [0, 0, 1], [1, 0, 0])],
                                   rd.homogeneous(np.eye(3), [2, 0, 0]))
    assert np.array_equal(a.screws, b.screws) and np.array_equal(a.home, b.home)
    assert a.n == 2 and a.joint_types == ("revolute", "revolute") and not a.symbolic
    c = rd.SerialChain.from_joints([("revolute", [0, 0, 1], [0, 0, 0]), ("prismatic", [1, 0, 0]),
                                    ("helical", [1, 0, 0], [0, 1, 0], 0.1)], np.eye(4))
    assert c.joint_types == ("revolute", "prismatic", "helical")
    assert "3 joints RPH" in repr(c) and "kinematic only" in repr(c)


def test_chain_is_immutable():
    chain = models.planar_rr()
    with pytest.raises(ValueError, match="read-only"):
        chain.screws[0, 0] = 5.0
    with pytest.raises(ValueError, match="read-only"):
        chain.home[0, 3] = 5.0
    with pytest.raises(ValueError, match="read-only"):
        chain.link_inertias[0][0, 0] = 5.0
    with pytest.raises(ValueError, match="read-only"):
        chain.body_screws[0, 0] = 5.0
    with pytest.raises(AttributeError):
        chain.name = "other"
    # the chain does not alias the caller's arrays
    S = two_link_screws()
    ch = rd.SerialChain.from_screws(S, np.eye(4))
    S[2, 0] = 0.0
    assert ch.screws[2, 0] == 1.0


def test_body_screws_are_adjoint_of_space_screws():
    rng = rng_of(26)
    chain = models.random_chain(6, rng)
    Minv = rd.inverse_homogeneous(chain.home)
    assert np.allclose(chain.body_screws, rd.adjoint(Minv) @ chain.screws, atol=1e-12)


BAD_HOME = np.diag([1.0, 1.0, 2.0, 1.0])


@pytest.mark.parametrize("kwargs, exc, msg", [
    (dict(screws=two_link_screws().T), ValueError,
     r"screws: expected a 6 x n array .*got shape \(2, 6\) \(did you pass n x 6\? transpose it\)"),
    (dict(screws=np.zeros((5, 2))), ValueError, r"expected a 6 x n array .*got shape \(5, 2\)$"),
    (dict(screws=np.zeros((6, 0))), ValueError, r"n >= 1\), got shape \(6, 0\)"),
    (dict(screws=np.zeros(6)), ValueError, r"got shape \(6,\)"),
    (dict(screws=[[0, 0], [0, 0], [2, 1], [0, 0], [0, -1], [0, 0]]), ValueError,
     r"screws \(joint 0\): expected a screw axis .*got \|omega\| = 2"),
    (dict(screws=np.zeros((6, 1))), ValueError,
     r"screws \(joint 0\): expected a screw axis .*got omega = 0 and \|v\| = 0"),
    (dict(screws=[["a"] * 2] * 6), TypeError,
     r"SerialChain.from_screws: screws: expected an array of numbers.*, got a list of length 6"),
    (dict(home=BAD_HOME), ValueError, r"from_screws: home \(rotation block\): expected a rotation"),
    (dict(home=np.eye(3)), ValueError, r"from_screws: home: expected a 4x4 matrix, got shape"),
    (dict(home=np.full((4, 4), np.nan)), ValueError, r"home: expected finite numbers"),
    (dict(link_homes=[np.eye(4)]), ValueError,
     r"SerialChain(\.from_screws)?: link_homes: expected 2 entries \(one per joint\), got 1"),
    (dict(link_homes=np.eye(4)), TypeError,
     r"link_homes: expected a list of 2 4x4 matrices, got an array of shape \(4, 4\)"),
    (dict(link_homes=[np.eye(4), np.eye(3)]), ValueError,
     r"SerialChain(\.from_screws)?: link_homes\[1\]: expected a 4x4 matrix, got shape \(3, 3\)"),
    (dict(link_homes=[np.eye(4), BAD_HOME]), ValueError, r"link_homes\[1\] \(rotation block\)"),
    (dict(link_inertias=[np.eye(6)] * 3), ValueError,
     r"link_inertias: expected 2 entries \(one per joint\), got 3"),
    (dict(link_inertias=[np.eye(6), np.eye(5)]), ValueError,
     r"link_inertias\[1\]: expected a 6x6 matrix, got shape \(5, 5\)"),
    (dict(link_inertias=[np.eye(6), np.diag([1, 1, 1, 1, 2, 1.0])]), ValueError,
     r"link_inertias\[1\]: expected the lower-right block m\*1_3"),
    (dict(link_inertias=[np.eye(6), -np.eye(6)]), ValueError,
     r"link_inertias\[1\]: expected a positive mass"),
    (dict(link_inertias=[np.eye(6), np.diag([1, 1, 3, 1, 1, 1.0])]), ValueError,
     r"link_inertias\[1\]: principal moments .* break the triangle inequality"),
    (dict(link_inertias=[np.eye(6), np.diag([-1, 1, 1, 1, 1, 1.0])]), ValueError,
     r"link_inertias\[1\]: expected a positive semi-definite"),
])
def test_from_screws_refuses(kwargs, exc, msg):
    args = dict(screws=two_link_screws(), home=np.eye(4))
    args.update(kwargs)
    with pytest.raises(exc, match=msg):
        rd.SerialChain.from_screws(args.pop("screws"), args.pop("home"), **args)


def test_from_screws_refuses_asymmetric_inertia():
    G = np.eye(6)
    G[0, 1] = 0.5
    with pytest.raises(ValueError, match=r"link_inertias\[0\]: expected a symmetric spatial "
                                         r"inertia, got asymmetry 0.5"):
        rd.SerialChain.from_screws(two_link_screws()[:, :1], np.eye(4), [np.eye(4)], [G])


def test_from_screws_accepts_offset_inertia():
    """An inertia written in a frame away from the CoM (coupling block m[c]) is legal."""
    G0 = rd.spatial_inertia(2.0, [0.1, 0.2, 0.25])
    Ad = rd.adjoint(rd.homogeneous(np.eye(3), [0.3, -0.1, 0.2]))
    G = Ad.T @ G0 @ Ad
    ch = rd.SerialChain.from_screws(two_link_screws()[:, :1], np.eye(4), [np.eye(4)], [G])
    assert np.allclose(ch.link_inertias[0], G)


def test_from_screws_refuses_non_skew_coupling():
    """The coupling block of a spatial inertia is m[c], skew-symmetric; a symmetric 6x6 with
    lower-right m 1_3 and a symmetric coupling block is no rigid body's inertia."""
    G = np.diag([0.1, 0.1, 0.1, 1.0, 1.0, 1.0])
    G[:3, 3:] = G[3:, :3] = 0.05 * np.eye(3)
    with pytest.raises(ValueError, match=r"link_inertias\[0\].*skew"):
        rd.SerialChain.from_screws(two_link_screws()[:, :1], np.eye(4), [np.eye(4)], [G])


def test_from_screws_refuses_tiny_nonzero_omega():
    """|omega| = 1e-7 passes the 'zero angular part' test (tol 1e-6) but the joint is then
    typed by an exact zero test as helical, with a non-unit axis. It must be refused (or be
    prismatic with omega = 0)."""
    S = np.array([[1e-7, 0, 0, 1.0, 0, 0]]).T
    try:
        ch = rd.SerialChain.from_screws(S, np.eye(4))
    except ValueError as exc:
        assert "joint 0" in str(exc)
    else:
        assert ch.joint_types == ("prismatic",) and np.all(ch.screws[:3, 0] == 0)


@pytest.mark.parametrize("joints, exc, msg", [
    ([], TypeError, r"from_joints: joints: expected a non-empty list of joint tuples, got a list "
                    r"of length 0"),
    ("revolute", TypeError, r"expected a non-empty list of joint tuples, got str"),
    ([("spherical", [0, 0, 1], [0, 0, 0])], ValueError,
     r"joint 0: unknown joint kind 'spherical'; expected one of \('revolute', 'prismatic', "
     r"'helical'\)"),
    ([("revolute", [0, 0, 1])], ValueError,
     r"joint 0 \(revolute\): expected 2 parameters after the kind, got 1"),
    ([("prismatic", [1, 0, 0]), ("helical", [1, 0, 0], [0, 0, 0])], ValueError,
     r"joint 1 \(helical\): expected 3 parameters after the kind, got 2"),
    ([("revolute", [0, 0, 1], [0, 0, 0]), 5], TypeError,
     r"joint 1: expected a tuple \(kind, \.\.\.\), got int 5"),
    ([(3, [0, 0, 1], [0, 0, 0])], TypeError, r"joint 0: expected a tuple \(kind, \.\.\.\)"),
    ([("prismatic", [0, 0, 0])], ValueError, r"prismatic_screw: direction: expected a nonzero direction"),
])
def test_from_joints_refuses(joints, exc, msg):
    with pytest.raises(exc, match=msg):
        rd.SerialChain.from_joints(joints, np.eye(4))


# --------------------------------------------------------------------------
# forward kinematics and Jacobians
# --------------------------------------------------------------------------

CHAINS = {
    "planar_rr": lambda: models.planar_rr(0.7, 1.3, 2.0, 0.5),
    "planar_rp": lambda: models.planar_rp(0.8, 0.6, 1.0, 2.0),
    "spatial_rrr": models.spatial_rrr,
    "ur5_like": models.ur5_like,
    "planar_5": lambda: models.planar_chain(5),
    "random_7": lambda: models.random_chain(7, rng_of(27), prismatic=0.3),
    "random_helical_8": lambda: models.random_chain(8, rng_of(28), prismatic=0.25, helical=0.3),
}


def fk_by_matrix_exponentials(chain, q):
    """Independent route: the product of exponentials with the series matrix exponential."""
    T = np.eye(4)
    for i in range(chain.n):
        T = T @ matrix_exp_series(rd.hat(np.asarray(chain.screws[:, i]) * q[i]), 60)
    return T @ chain.home


@pytest.mark.parametrize("name", list(CHAINS))
def test_fk_space_equals_fk_body_and_series(name):
    chain = CHAINS[name]()
    rng = rng_of(29)
    for _ in range(10):
        q = rng.uniform(-np.pi, np.pi, size=chain.n)
        T = rd.fk_space(chain, q)
        assert np.allclose(rd.fk_body(chain, q), T, atol=1e-12)
        assert np.allclose(fk_by_matrix_exponentials(chain, q), T, atol=1e-10)
    assert np.allclose(rd.fk_space(chain, np.zeros(chain.n)), chain.home, atol=0)


def test_fk_planar_rr_closed_form():
    l1, l2 = 0.7, 1.3
    chain = models.planar_rr(l1, l2)
    for q1, q2 in [(0.3, -1.1), (2.0, 0.5), (-3.0, 3.0)]:
        T = rd.fk_space(chain, [q1, q2])
        assert np.allclose(T[:3, 3], [l1 * np.cos(q1) + l2 * np.cos(q1 + q2),
                                      l1 * np.sin(q1) + l2 * np.sin(q1 + q2), 0])
        assert np.allclose(T[:3, :3], rd.rotation("z", q1 + q2))


def test_fk_planar_rp_closed_form():
    chain = models.planar_rp(0.8, 0.6)
    q1, q2 = 0.9, 0.25
    T = rd.fk_space(chain, [q1, q2])
    assert np.allclose(T[:3, 3], (0.6 + q2) * np.array([np.cos(q1), np.sin(q1), 0]))
    P = rd.link_poses(chain, [q1, q2])
    assert np.allclose(P[1, :3, 3], (0.3 + q2) * np.array([np.cos(q1), np.sin(q1), 0]))
    assert np.allclose(P[0, :3, 3], 0.4 * np.array([np.cos(q1), np.sin(q1), 0]))


def space_twist_by_fd(f, q, qd, h=1e-6):
    """Spatial twist from dH/dt H^{-1} by a central difference along q + t qd."""
    Hp, Hm, H = f(q + h * qd), f(q - h * qd), f(q)
    dH = (Hp - Hm) / (2 * h)
    return rd.vee(dH @ np.linalg.inv(H)), rd.vee(np.linalg.inv(H) @ dH)


@pytest.mark.parametrize("name", list(CHAINS))
@pytest.mark.equation("hb-5-6")
def test_jacobians_equal_finite_differences(name):
    chain = CHAINS[name]()
    rng = rng_of(30)
    for _ in range(5):
        q, qd = rng.uniform(-2, 2, size=chain.n), rng.normal(size=chain.n)
        Vs, Vb = space_twist_by_fd(lambda x: rd.fk_space(chain, x), q, qd)
        Js, Jb = rd.jacobian_space(chain, q), rd.jacobian_body(chain, q)
        assert Js.shape == Jb.shape == (6, chain.n)
        assert np.allclose(Js @ qd, Vs, atol=1e-7)
        assert np.allclose(Jb @ qd, Vb, atol=1e-7)
        T = rd.fk_space(chain, q)
        assert np.allclose(rd.adjoint(T) @ Jb, Js, atol=1e-12)


@pytest.mark.parametrize("name", list(CHAINS))
@pytest.mark.equation("hb-5-5", "hb-5-7")
def test_link_poses_and_link_jacobians(name):
    chain = CHAINS[name]()
    rng = rng_of(31)
    n = chain.n
    for _ in range(3):
        q, qd = rng.uniform(-2, 2, size=n), rng.normal(size=n)
        P = rd.link_poses(chain, q)
        assert P.shape == (n, 4, 4)
        Js_full = rd.jacobian_space(chain, q)
        for k in range(n):
            # link k's pose by the product of its first k + 1 exponentials
            T = np.eye(4)
            for i in range(k + 1):
                T = T @ rd.exp_se3(chain.screws[:, i], q[i])
            assert np.allclose(P[k], T @ chain.link_homes[k], atol=1e-12)
            Jsk, Jbk = rd.jacobian_space(chain, q, link=k), rd.jacobian_body(chain, q, link=k)
            assert np.all(Jsk[:, k + 1:] == 0) and np.all(Jbk[:, k + 1:] == 0)
            assert np.allclose(Jsk[:, :k + 1], Js_full[:, :k + 1], atol=0)
            f = (lambda x, k=k: rd.link_poses(chain, x)[k])
            Vs, Vb = space_twist_by_fd(f, q, qd)
            assert np.allclose(Jsk @ qd, Vs, atol=1e-7)
            assert np.allclose(Jbk @ qd, Vb, atol=1e-7)
    assert np.allclose(rd.link_poses(chain, np.zeros(n)), np.array(chain.link_homes), atol=0)


def test_link_jacobians_give_planar_rr_mass_matrix():
    """M = sum J_i^T G_i J_i with the body Jacobians of the link CoM frames equals the textbook
    two-link mass matrix (written out by hand)."""
    l1, l2, m1, m2 = 0.7, 1.3, 2.0, 0.5
    chain = models.planar_rr(l1, l2, m1, m2)
    for q2 in (-2.0, 0.0, 0.7, 3.0):
        q = np.array([0.4, q2])
        M = sum(rd.jacobian_body(chain, q, link=i).T @ chain.link_inertias[i]
                @ rd.jacobian_body(chain, q, link=i) for i in range(2))
        c2 = np.cos(q2)
        M11 = m1 * l1**2 / 3 + m2 * (l1**2 + l2**2 / 3 + l1 * l2 * c2)
        M12 = m2 * (l2**2 / 3 + l1 * l2 * c2 / 2)
        M22 = m2 * l2**2 / 3
        assert np.allclose(M, [[M11, M12], [M12, M22]], atol=1e-12)


@pytest.mark.parametrize("f", [rd.fk_space, rd.fk_body, rd.link_poses, rd.jacobian_space,
                               rd.jacobian_body])
def test_chain_functions_refuse_bad_q(f):
    name = f.__name__
    chain = models.planar_rr()
    with pytest.raises(ValueError, match=rf"{name}: q \(one value per joint of the 2-joint "
                                         rf"chain\): expected a vector of length 2, got shape "
                                         rf"\(3,\)"):
        f(chain, [0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match=rf"{name}: q\b.*expected finite numbers, got NaN"):
        f(chain, [0.1, np.nan])
    with pytest.raises(TypeError, match=rf"{name}: q .*expected an array of numbers, got str"):
        f(chain, "ab")
    with pytest.raises(ValueError, match=rf"{name}: q .*expected a vector of length 2, got "
                                         rf"shape \(2, 2\)"):
        f(chain, np.zeros((2, 2)))
    with pytest.raises(TypeError, match=rf"{name}: chain: expected a SerialChain, got an array of "
                                        rf"shape \(4, 4\)"):
        f(np.eye(4), [0.1, 0.2])


@pytest.mark.parametrize("f", [rd.jacobian_space, rd.jacobian_body])
def test_jacobians_refuse_bad_link(f):
    name = f.__name__
    chain = models.planar_rr()
    with pytest.raises(ValueError, match=rf"{name}: link: expected an index 0..1, got 2"):
        f(chain, [0, 0], link=2)
    with pytest.raises(ValueError, match=rf"{name}: link: expected an index 0..1, got -1"):
        f(chain, [0, 0], link=-1)
    with pytest.raises(TypeError, match=rf"{name}: link: expected a link index 0..1, got float"):
        f(chain, [0, 0], link=1.0)
    with pytest.raises(TypeError, match=rf"{name}: link: expected a link index 0..1, got bool"):
        f(chain, [0, 0], link=True)
    assert f(chain, [0, 0], link=np.int64(1)).shape == (6, 2)


def test_link_quantities_need_link_homes():
    chain = rd.SerialChain.from_screws(two_link_screws(), rd.homogeneous(np.eye(3), [2, 0, 0]))
    with pytest.raises(ValueError, match=r"link_poses: SerialChain\('chain', 2 joints RR, "
                                         r"kinematic only\) has no link_homes; build it with"):
        rd.link_poses(chain, [0, 0])
    with pytest.raises(ValueError, match=r"jacobian_body: link=1 needs link_homes, and "
                                         r"SerialChain\('chain'.*has none"):
        rd.jacobian_body(chain, [0, 0], link=1)
    # the space Jacobian of a link needs no CoM frame
    assert rd.jacobian_space(chain, [0, 0], link=0)[:, 1].tolist() == [0] * 6


# --------------------------------------------------------------------------
# symbolic chains: subs at random points equals the numeric result
# --------------------------------------------------------------------------


def tofloat(x):
    return np.array(sp.Matrix(x).evalf().tolist(), dtype=float)


SYM_CASES = {
    "planar_rr": (lambda l: models.planar_rr(l[0], l[1], l[2], l[3]), 4, 2),
    "planar_rp": (lambda l: models.planar_rp(l[0], l[1], l[2], l[3]), 4, 2),
    "spatial_rrr": (lambda l: models.spatial_rrr(*l), 6, 3),
}


@pytest.mark.parametrize("name", list(SYM_CASES))
def test_symbolic_chain_equals_numeric(name):
    make, nparam, n = SYM_CASES[name]
    p = sp.symbols(f"p0:{nparam}", positive=True)
    q = sp.symbols(f"q0:{n}", real=True)
    chain = make(p)
    assert chain.symbolic
    exprs = {
        "fk_space": rd.fk_space(chain, q),
        "fk_body": rd.fk_body(chain, q),
        "jacobian_space": rd.jacobian_space(chain, q),
        "jacobian_body": rd.jacobian_body(chain, q),
        "link_poses": rd.link_poses(chain, q),
        "jacobian_body_link0": rd.jacobian_body(chain, q, link=0),
    }
    assert isinstance(exprs["fk_space"], sp.MatrixBase)
    assert isinstance(exprs["link_poses"], list) and len(exprs["link_poses"]) == n
    rng = rng_of(32)
    for _ in range(3):
        pv = rng.uniform(0.3, 2.0, size=nparam)
        qv = rng.uniform(-2, 2, size=n)
        vals = dict(zip(p, pv)) | dict(zip(q, qv))
        num = make(list(pv))
        ref = {
            "fk_space": rd.fk_space(num, qv), "fk_body": rd.fk_body(num, qv),
            "jacobian_space": rd.jacobian_space(num, qv),
            "jacobian_body": rd.jacobian_body(num, qv),
            "link_poses": rd.link_poses(num, qv),
            "jacobian_body_link0": rd.jacobian_body(num, qv, link=0),
        }
        for key, e in exprs.items():
            if key == "link_poses":
                got = np.array([tofloat(P.subs(vals)) for P in e])
            else:
                got = tofloat(e.subs(vals))
            assert np.allclose(got, ref[key], atol=1e-10), key


def test_symbolic_planar_rr_fk_simplifies_to_the_textbook_form():
    l1, l2 = sp.symbols("l1 l2", positive=True)
    q1, q2 = sp.symbols("q1 q2", real=True)
    T = rd.fk_space(models.planar_rr(l1, l2), [q1, q2])
    want = sp.Matrix([l1 * sp.cos(q1) + l2 * sp.cos(q1 + q2),
                      l1 * sp.sin(q1) + l2 * sp.sin(q1 + q2), 0])
    assert sp.simplify(sp.expand_trig(T[:3, 3] - want)) == sp.zeros(3, 1)


def test_numeric_chain_symbolic_q():
    """A numeric chain with symbolic q gives a sympy result with exact numbers."""
    q = sp.symbols("q0:2", real=True)
    T = rd.fk_space(models.planar_rr(), q)
    assert isinstance(T, sp.MatrixBase)
    assert not T.atoms(sp.Float)
    assert close(T.subs({q[0]: 0.3, q[1]: -0.4}).evalf(), rd.fk_space(models.planar_rr(), [0.3, -0.4]))
