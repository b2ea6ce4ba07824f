"""The flexible link under spin (Part V, issue #23): geometric stiffening by the foreshortening.

Independent routes:

* the rotating Euler--Bernoulli beam, in-plane bending with the hub rate prescribed,
  :math:`EIw'''' - (Tw')' - \\rho(\\Omega^2 + \\omega^2)w = 0`, :math:`T = \\rho\\Omega^2(L^2 -
  x^2)/2`, clamped at the axis and free at L, solved by its power series (Frobenius: the
  coefficients are polynomials, the series is entire) and a root search of the 2 x 2
  boundary determinant -- no mode shapes, no Kane;
* the hub--beam characteristic equation (free hub of inertia J_h carrying a clamped beam),
  derived here from the beam ODE and the hub's equation J_h theta'' = EI y''(0);
* a chain of rigid segments with torsional springs (EI / h), nonlinear, hub angle prescribed:
  it stiffens by itself (its inextensible links foreshorten), so it is an independent
  stiffened model of the Kane--Ryan--Banerjee spin-up.
"""
import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.optimize import brentq

from robodyn import kane


# --------------------------------------------------------------------------
# independent solutions
# --------------------------------------------------------------------------

def rotating_beam_determinant(om2, W, nterms=160):
    """The free-end determinant of the power-series solutions (EI = rho = L = 1) with
    w(0) = w'(0) = 0: w''(1) = 0 and EI w'''(1) - T(1) w'(1) = w'''(1) = 0 (T(1) = 0)."""
    cols = []
    for start in (2, 3):
        a = np.zeros(nterms + 4)
        a[start] = 1.0
        for k in range(nterms):
            a[k + 4] = (W**2 / 2 * ((k + 2) * (k + 1) * a[k + 2] - k * (k - 1) * a[k])
                        - W**2 * k * a[k] + (W**2 + om2) * a[k]) / \
                ((k + 4) * (k + 3) * (k + 2) * (k + 1))
        n = np.arange(a.size)
        cols.append((np.sum(n * (n - 1) * a), np.sum(n * (n - 1) * (n - 2) * a)))
    return cols[0][0] * cols[1][1] - cols[0][1] * cols[1][0]


def rotating_beam_frequencies(W, n=2, top=60.0):
    """The first n in-plane bending frequencies of the rotating beam (rad/s, unit data)."""
    grid = np.linspace(0.3, top, 400) ** 2
    vals = [rotating_beam_determinant(g, W) for g in grid]
    out = []
    for k in range(grid.size - 1):
        if np.sign(vals[k]) != np.sign(vals[k + 1]):
            out.append(brentq(rotating_beam_determinant, grid[k], grid[k + 1], args=(W,),
                              xtol=1e-13))
        if len(out) == n:
            break
    return np.sqrt(out)


def hub_beam_determinant(beta, J):
    """y = A(cosh bx - cos bx) + B sinh bx + D sin bx (y(0) = 0), EI = rho = L = 1;
    hub: J theta'' = EI y''(0), theta = y'(0): -J w^2 b (B + D) = 2 b^2 A, w = b^2;
    free end y''(1) = y'''(1) = 0. Zero at the roots beta; the frequency is beta^2."""
    k = -J * beta**3 / 2                       # A = k (B + D)
    ch, sh, c, s = np.cosh(beta), np.sinh(beta), np.cos(beta), np.sin(beta)
    m = np.array([[k * (ch + c) + sh, k * (ch + c) - s],
                  [k * (sh - s) + ch, k * (sh - s) - c]])
    return np.linalg.det(m) / ch**2


def hub_beam_frequency(J):
    grid = np.linspace(1.0, 3.93, 300)
    vals = [hub_beam_determinant(b, J) for b in grid]
    for k in range(grid.size - 1):
        if np.sign(vals[k]) != np.sign(vals[k + 1]):
            return brentq(hub_beam_determinant, grid[k], grid[k + 1], args=(J,), xtol=1e-13)**2
    raise AssertionError("no root")


def segment_chain_spin_up(n, L=10.0, EI=14000.0, rho=1.2, t_final=20.0, samples=201):
    """n rigid massless segments of length h with point masses (rho h, the last rho h / 2)
    at their ends, torsional springs EI / h between segments and 2 EI / h between the hub
    and segment 1 (a segment's angle is the slope at its middle, h / 2 from the clamp),
    absolute angles a_i; the hub angle follows fl.spin_up_profile. Returns the tip's
    deflection in the hub's rotating axes at the sample times."""
    h = L / n
    m = np.full(n, rho * h)
    m[-1] /= 2
    mu = np.cumsum(m[::-1])[::-1]                  # mass outboard of joint i
    MU = mu[np.maximum.outer(np.arange(n), np.arange(n))] * h * h
    k = EI / h

    def rhs(t, y):
        a, ad = y[:n], y[n:]
        th = kane.spin_up_profile(t)[0]
        d = a[:, None] - a[None, :]
        H = MU * np.cos(d)
        c = (MU * np.sin(d)) @ (ad**2)
        rel = np.diff(np.concatenate([[th], a]))
        dV = k * rel
        dV[0] += k * rel[0]                        # the clamp: 2 EI / h
        dV[:-1] -= k * rel[1:]
        return np.concatenate([ad, np.linalg.solve(H, -c - dV)])

    ts = np.linspace(0, t_final, samples)
    sol = solve_ivp(rhs, (0, t_final), np.zeros(2 * n), t_eval=ts, rtol=1e-7, atol=1e-9,
                    method="LSODA")
    a = sol.y[:n].T
    th = kane.spin_up_profile(ts)[0]
    tip = h * np.stack([np.cos(a).sum(1), np.sin(a).sum(1)])
    return -np.sin(th) * tip[0] + np.cos(th) * tip[1]


# --------------------------------------------------------------------------
# steady spin
# --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def links():
    return {"stiff": kane.flexible_link(6), "linear": kane.flexible_link(6, geometric_stiffening=False)}


@pytest.mark.parametrize("W, rtol", [(0.0, 1e-12), (1.0, 1e-7), (2.0, 2e-6), (3.5, 2e-5),
                                     (5.0, 1e-4), (10.0, 1e-3)])
def test_spin_frequencies_equal_the_rotating_beam(links, W, rtol):
    ref = rotating_beam_frequencies(W, 2)
    model = kane.natural_frequencies(links["stiff"], spin=W)[:2]
    assert np.all(model >= ref * (1 - 1e-12))                 # Rayleigh-Ritz: from above
    assert np.allclose(model, ref, rtol=rtol)


def test_frequencies_rise_with_spin_and_the_linear_model_falls(links):
    spins = np.linspace(0, 3.5, 8)
    stiff = [kane.natural_frequencies(links["stiff"], spin=W)[0] for W in spins]
    assert np.all(np.diff(stiff) > 0)
    lin = np.array([kane.spin_eigenvalues(links["linear"], W)[0] for W in spins])
    w0 = kane.clamped_free_roots(1)[0] ** 2
    assert np.allclose(lin, w0**2 - spins**2, rtol=1e-9)       # omega^2 = omega_0^2 - Omega^2
    with pytest.raises(ValueError, match="unstable at the hub rate 4"):
        kane.natural_frequencies(links["linear"], spin=4.0)


def test_in_plane_not_out_of_plane(links):
    """Southwell: out-of-plane omega^2 = omega_0^2 + alpha Omega^2, in-plane the same minus
    Omega^2. The model's omega^2 - omega_0^2 is (alpha - 1) Omega^2 with alpha of the
    out-of-plane beam (its series has no -Omega^2 w term: rerun it with that term removed)."""
    W = 1.0
    w_model = kane.natural_frequencies(links["stiff"], spin=W)[0]
    out_of_plane = np.sqrt(rotating_beam_frequencies(W, 1)[0] ** 2 + W**2)
    assert np.isclose(w_model**2 + W**2, out_of_plane**2, rtol=1e-6)
    assert not np.isclose(w_model, out_of_plane, rtol=1e-3)


def test_stiffness_integral_by_the_tension_form(links):
    """K^G = int phi_i' phi_j' rho (L^2 - xi^2) / 2 dxi (the centrifugal tension form)."""
    link = links["stiff"]
    xg, wg = np.polynomial.legendre.leggauss(200)
    x, w = (xg + 1) / 2, wg / 2
    d1 = np.array([kane.mode_shape(b, 1.0, x, 1) for b in link.betas])
    KG = (d1 * w * (1 - x**2) / 2) @ d1.T
    assert np.allclose(link.integrals["rho x G"], KG, rtol=1e-10, atol=1e-10)
    assert np.allclose(kane.flexible_link(2, geometric_stiffening=False).integrals["rho x G"], 0)


# --------------------------------------------------------------------------
# the hub--beam frequency at intermediate hub inertia (#24)
# --------------------------------------------------------------------------

@pytest.mark.parametrize("J, omega", [(0.01, 13.2535), (0.1, 6.9639), (1.0, 4.0401)])
def test_hub_beam_frequency_against_the_characteristic_equation(J, omega):
    exact = hub_beam_frequency(J)                  # omega = (beta L)^2 with unit data
    assert abs(exact - omega) < 5e-4
    model = kane.natural_frequencies(kane.flexible_link(6, hub_inertia=J))[0]
    assert exact <= model < exact * (1 + 1e-6)             # Rayleigh-Ritz: from above


# --------------------------------------------------------------------------
# the Kane--Ryan--Banerjee spin-up
# --------------------------------------------------------------------------

KRB = dict(length=10.0, EI=14000.0, rho=1.2)


@pytest.mark.slow
def test_spin_up_stiffened_bounded_linear_diverges():
    stiff = kane.simulate_hub(kane.flexible_link(3, **KRB), kane.spin_up_profile, 20.0,
                            n_samples=201)
    assert stiff.diverged_at is None
    assert -0.58 < stiff.tip_deflection.min() < -0.57
    assert 6.5 < stiff.t[np.argmin(stiff.tip_deflection)] < 7.0
    assert np.max(np.abs(stiff.tip_deflection[stiff.t >= 15])) < 5e-3
    lin = kane.simulate_hub(kane.flexible_link(3, geometric_stiffening=False, **KRB),
                          kane.spin_up_profile, 20.0, n_samples=201)
    assert lin.diverged_at is not None and 8.5 < lin.diverged_at < 10.0
    # an independent stiffened model: the segment chain, converging as 1/n^2 (measured: max
    # differences 0.069, 0.017, 0.0039 m for n = 4, 8, 16); Richardson's extrapolation of
    # n = 4 and 8 removes the 1/n^2 term
    c4, c8 = segment_chain_spin_up(4), segment_chain_spin_up(8)
    assert np.max(np.abs(c8 - stiff.tip_deflection)) < 0.02
    during = stiff.t <= 15.0            # the spin-up; afterwards a few mm of ringing whose
    rich = (4 * c8 - c4) / 3            # phase the coarse chains do not extrapolate
    assert np.max(np.abs(rich - stiff.tip_deflection)[during]) < 0.008   # 1.4 % of the peak
    assert np.max(np.abs(c8[~during])) < 0.01


def test_servo_approaches_the_prescribed_hub():
    link = kane.flexible_link(1, hub_inertia=10.0, **KRB)
    driven = kane.simulate_hub(link, kane.spin_up_profile, 4.0, n_samples=41)
    servo = kane.simulate_hub(link, kane.spin_up_profile, 4.0, servo=(1e4, 400.0), n_samples=41)
    assert np.max(np.abs(servo.theta - driven.theta)) < 1e-3
    scale = np.max(np.abs(driven.tip_deflection))
    assert np.max(np.abs(servo.tip_deflection - driven.tip_deflection)) < 0.03 * scale


# --------------------------------------------------------------------------
# bad input
# --------------------------------------------------------------------------

def test_bounds_refused_before_starting(links):
    with pytest.raises(ValueError, match="n_quad.*at most 2000"):
        kane.flexible_link(2, n_quad=10**8)
    with pytest.raises(TypeError, match="n_quad"):
        kane.flexible_link(2, n_quad=20.0)
    with pytest.raises(ValueError, match="n_modes"):
        kane.flexible_link(13)
    with pytest.raises(ValueError, match="spin"):
        kane.natural_frequencies(links["stiff"], spin=11.0)
    with pytest.raises(ValueError, match="spin"):
        kane.spin_eigenvalues(links["stiff"], float("nan"))
    with pytest.raises(TypeError, match="geometric_stiffening"):
        kane.flexible_link(2, geometric_stiffening=1)
    link = kane.flexible_link(1)
    with pytest.raises(TypeError, match="hub"):
        kane.simulate_hub(link, 3.0, 1.0)
    with pytest.raises(ValueError, match="3 finite numbers"):
        kane.simulate_hub(link, lambda t: (0.0, 1.0), 1.0)
    with pytest.raises(ValueError, match="steps"):
        kane.simulate_hub(link, kane.spin_up_profile, 1e9)
    with pytest.raises(ValueError, match="servo"):
        kane.simulate_hub(link, kane.spin_up_profile, 1.0, servo=(1.0, -1.0))
