"""robodyn.walking: the Jacobian of the step map by two independent routes, the rimless
wheel's closed-form multiplier, the compiled stride against the Python hybrid simulator, the
first period doubling where a multiplier crosses -1, and the walking sweep on a Dask cluster
(equal to the serial sweep; a killed worker loses nothing and counts nothing twice)."""
import os
import signal
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import brentq

from robodyn import walking
from robodyn.walking import CompassGait, RimlessWheel

Z3 = np.array([-0.2186688, 1.0923836, 0.3773740])


@pytest.fixture(scope="module")
def gait3():
    return walking.compass_gait_gait(CompassGait())


def test_fd_and_saltation_jacobians_agree(gait3):
    cg = CompassGait()
    for z in (gait3.points[0], gait3.points[0] + [0.01, -0.04, 0.03]):   # on and off the gait
        J_salt = walking.compass_gait_jacobian(cg, z)
        J_fd = walking.compass_gait_jacobian(cg, z, method="fd")
        assert np.max(np.abs(J_salt - J_fd)) < 1e-6
    # the check has teeth: without the saltation term (D Delta alone) the Jacobians differ
    pieces = walking._stability._compass_pieces(cg)
    vs = walking.variational_stride(x0=cg.section_state(gait3.points[0]), **pieces)
    E = pieces["basis"]
    naive = np.linalg.pinv(E) @ pieces["reset_jacobian"](vs.x_minus) @ vs.flow @ E
    assert np.max(np.abs(naive - vs.jacobian)) > 1e-2


def test_monodromy_has_eigenvalue_one_and_the_multipliers(gait3):
    cg = CompassGait()
    vs = walking.compass_gait_variational(cg, gait3.points[0])
    ev = np.linalg.eigvals(vs.monodromy)
    k = np.argmin(np.abs(ev - 1))
    assert abs(ev[k] - 1) < 1e-8
    assert np.allclose(np.sort_complex(np.delete(ev, k)), np.sort_complex(gait3.multipliers),
                       atol=1e-8)
    assert gait3.stable and abs(abs(gait3.multipliers[0]) - 0.5807) < 1e-3


def test_reset_jacobian_matches_differences_of_heel_strike():
    cg = CompassGait()
    x = np.array([0.25, 2 * cg.slope - 0.25, 1.2, -0.4])
    D = walking._stability._compass_pieces(cg)["reset_jacobian"](x)

    def reset(y):
        q, qd, _ = cg.heel_strike(y[:2], y[2:])
        return np.concatenate([q, qd])
    assert np.max(np.abs(D - walking.jacobian_fd(reset, x, h=1e-6))) < 1e-7


@pytest.mark.parametrize("spokes, slope", [(10, 0.2), (8, 0.1), (16, 0.05)])
def test_rimless_wheel_multiplier_is_cos2_2alpha(spokes, slope):
    w = RimlessWheel(spokes=spokes, slope=slope)
    exact = np.cos(2 * np.pi / spokes) ** 2
    assert walking.rimless_wheel_multiplier(w) == pytest.approx(exact, abs=1e-14)
    assert walking.rimless_wheel_jacobian(w)[0, 0] == pytest.approx(exact, abs=1e-9)
    assert walking.rimless_wheel_jacobian(w, method="fd")[0, 0] == pytest.approx(exact, abs=1e-6)
    # off the fixed point the slope is cos(2a) w / sqrt(w^2 + c), not cos^2(2a)
    om = 1.5 * w.closed_form_fixed_point()
    c = 4 * w.g / w.length * np.sin(w.alpha) * np.sin(w.slope)
    assert walking.rimless_wheel_jacobian(w, om)[0, 0] == pytest.approx(
        np.cos(2 * w.alpha) * om / np.sqrt(om * om + c), abs=1e-9)


def test_compiled_stride_equals_python_simulator():
    cg = CompassGait(slope=np.deg2rad(4.0), m=4.0, m_h=12.0, a=0.45, b=0.55)
    rng = np.random.default_rng(0)
    z = walking.compass_gait_gait(cg, Z3).points[0]
    for dz in rng.normal(scale=[0.01, 0.04, 0.04], size=(3, 3)):
        assert np.max(np.abs(walking.compass_gait_step(cg, z + dz) - cg.step_map(z + dz))) < 1e-7
    bad = [-0.3, 0.2, 0.0]                                # too slow: falls back
    _, status, _ = walking.walk(cg, bad, 3)
    assert status != 0
    with pytest.raises(ValueError, match="step_map: z: expected a state from which the "
                                         "walker takes a step"):
        cg.step_map(bad)
    with pytest.raises(ValueError, match=r"compass_gait_step: z: .*\(it falls\)"):
        walking.compass_gait_step(cg, bad)


def _leading(deg, z):
    g = walking.compass_gait_gait(CompassGait(slope=np.deg2rad(deg)), z)
    return g, float(np.min(g.multipliers.real)) + 1.0


@pytest.mark.slow
def test_first_period_doubling_where_the_multiplier_crosses_minus_one():
    z = Z3
    for d in np.arange(3.25, 4.35, 0.25):                # continuation up to 4.25 deg
        z = _leading(d, z)[0].points[0]
    pd = brentq(lambda d: _leading(d, z)[1], 4.25, 4.6, xtol=1e-6)
    assert 4.3 < pd < 4.5

    def spread(deg):
        cg = CompassGait(slope=np.deg2rad(deg))
        zz, status, _ = walking.walk(cg, _leading(deg, z)[0].points[0] + [1e-4, 0, 0], 3000)
        assert status == 0
        return abs(zz[-1, 0] - zz[-2, 0])
    assert spread(pd - 0.03) < 1e-7                      # one stride below
    below_2 = walking.compass_gait_gait(CompassGait(slope=np.deg2rad(pd - 0.03)), z, period=2)
    assert np.ptp(below_2.points[:, 0]) < 1e-7          # P^2's fixed point is P's
    s1, s2 = spread(pd + 0.03), spread(pd + 0.12)
    assert s1 > 1e-3 and 1.6 < s2 / s1 < 2.4             # two strides, ~ sqrt(slope - pd)
    g2 = walking.compass_gait_gait(CompassGait(slope=np.deg2rad(pd + 0.12)), z, period=2)
    assert g2.stable and np.ptp(g2.points[:, 0]) > 1e-3


def _grid():
    cg = CompassGait()
    th = np.linspace(-0.3, -0.15, 6)
    rt = np.linspace(0.9, 1.35, 12)
    return cg, th, rt


def _dies_once(item):
    """A basin row that kills its own worker process the first time row 2 runs."""
    folder = os.environ["ROBODYN_TEST_KILL_DIR"]
    marker = Path(folder, "died")
    if abs(item[2] - _grid()[1][2]) < 1e-12 and not marker.exists():
        marker.touch()
        os.kill(os.getpid(), signal.SIGKILL)
    return walking._stability._basin_row(item)


@pytest.mark.slow
def test_walking_sweep_on_dask_equals_serial_and_survives_a_killed_worker(tmp_path,
                                                                           monkeypatch, gait3):
    distributed = pytest.importorskip("distributed")
    cg, th, rt = _grid()
    serial = walking.basin_of_attraction(cg, th, rt, gait=gait3, strides=30, workers=1)
    assert serial[1].any() and not serial[1].all()       # the grid crosses the boundary
    monkeypatch.setenv("ROBODYN_TEST_KILL_DIR", str(tmp_path))
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        # by address (map_tasks opens its own client), then with a Client
        dask = walking.basin_of_attraction(cg, th, rt, gait=gait3, strides=30,
                                      scheduler=cluster.scheduler_address)
        assert all(np.array_equal(a, b) for a, b in zip(dask, serial))      # cell for cell
        items, keys = walking._stability._basin_tasks(cg, th, rt, float(gait3.points[0, 2]), gait3, 30,
                                      1e-9, 1e-3)
        seen = []
        with distributed.Client(cluster) as client:
            out = walking.sweep(_dies_once, items, keys=keys, scheduler=client,
                           on_result=lambda k, r: seen.append(k), retries=2)
    assert (tmp_path / "died").exists()                  # a worker did die mid-run
    assert sorted(seen) == sorted(keys)                  # each row delivered exactly once
    alive, hit = walking._stability._basin_arrays(out)
    assert np.array_equal(alive, serial[0]) and np.array_equal(hit, serial[1])


def test_a_killed_local_sweep_resumes_from_its_cache(tmp_path, gait3):
    cg, th, rt = _grid()
    serial = walking.basin_of_attraction(cg, th[:3], rt, gait=gait3, strides=20, workers=1)
    cache = tmp_path / "cache"
    first = walking.basin_of_attraction(cg, th[:2], rt, gait=gait3, strides=20, workers=1,
                                   cache_dir=cache)      # "killed" after two rows
    assert len(list(cache.iterdir())) >= 2
    seen = []
    from robodyn.parallel import map_tasks
    items, keys = walking._stability._basin_tasks(cg, th[:3], rt, float(gait3.points[0, 2]), gait3, 20,
                                  1e-9, 1e-3)
    out = map_tasks(walking._stability._basin_row, items, keys=keys, workers=1, cache_dir=cache,
                    on_result=lambda k, r: seen.append(k))
    assert seen == [keys[2]]                              # only the missing row computed
    alive, hit = walking._stability._basin_arrays(np.array(out))
    assert np.array_equal(alive, serial[0]) and np.array_equal(hit, serial[1])
    assert np.array_equal(first[0], serial[0][:2])


def test_rimless_wheel_basin_closed_form_equals_simulation():
    w = RimlessWheel(spokes=10, slope=0.2)
    th = np.linspace(w.slope - w.alpha, w.slope + w.alpha, 3)
    rt = np.array([-1.2, -0.3, 0.1, 0.6])
    closed = walking.rimless_wheel_basin(w, th, rt)
    assert closed.any() and not closed.all()
    assert np.array_equal(closed, walking.rimless_wheel_basin(w, th, rt, method="simulation",
                                                         workers=1))


@pytest.mark.parametrize("call, message", [
    (lambda: walking.walk("walker", Z3, 1), "walk: walker: expected a robodyn.walking.CompassGait"),
    (lambda: walking.walk(CompassGait(), [1.0, 2.0], 1), "walk: z0"),
    (lambda: walking.walk(CompassGait(), Z3, -1), "walk: strides"),
    (lambda: walking.walk(CompassGait(), Z3, 10**9), "walk: strides"),
    (lambda: walking.walk(CompassGait(), Z3, 1, tol=1e-16), "walk: tol"),
    (lambda: walking.walk(CompassGait(), [np.nan, 1, 1], 1), "walk: z0"),
    (lambda: walking.saltation_matrix(np.eye(2), [1.0, 0], [1.0, 0], [0, 1.0]),
     "saltation_matrix: guard_gradient"),
    (lambda: walking.floquet_multipliers(np.ones((2, 3))), "floquet_multipliers: jacobian"),
    (lambda: walking.rimless_wheel_multiplier(RimlessWheel(slope=0.01)),
     "rimless_wheel_multiplier: wheel"),
    (lambda: walking.compass_gait_gait(CompassGait(), period=0), "compass_gait_gait: period"),
    (lambda: walking.bifurcation_diagram(CompassGait(), [1.0]), "bifurcation_diagram: slopes"),
    (lambda: walking.basin_of_attraction(CompassGait(), [[0.1]], [1.0]),
     "basin_of_attraction: theta"),
    (lambda: walking.rimless_wheel_basin(RimlessWheel(spokes=10, slope=0.2), [1.0], [0.0]),
     "rimless_wheel_basin: theta"),
])
def test_bad_input_is_refused(call, message):
    with pytest.raises((TypeError, ValueError), match=message):
        call()


def test_overflow_safe_linear_algebra_by_scaling_laws():
    # S is invariant under scaling the guard's gradient, and eig(cJ) = c eig(J): huge
    # scalings that overflow the textbook formulas give the same numbers
    D, fm, fp, dg = np.diag([1.0, -0.5]), [-2.0, -10.0], [1.0, -10.0], np.array([1.0, 0.3])
    S = walking.saltation_matrix(D, fm, fp, dg)
    assert np.allclose(walking.saltation_matrix(D, fm, fp, 1e308 * dg), S, rtol=1e-14)
    J = np.array([[0.5, 1.0], [0.2, -0.9]])
    assert np.allclose(walking.floquet_multipliers(1e308 * J) / 1e308, walking.floquet_multipliers(J),
                       rtol=1e-13)
    with pytest.raises(ValueError, match="floquet_multipliers: result: expected finite"):
        walking.floquet_multipliers(np.full((2, 2), 1e308))


def test_variational_stride_work_is_capped():
    # a field that never reaches its guard within a long t_max is refused after
    # MAX_EVALUATIONS evaluations instead of integrating for minutes
    oscillator = dict(field=lambda x: np.array([x[1], -x[0]]),
                      field_jacobian=lambda x: np.array([[0.0, 1.0], [-1.0, 0.0]]),
                      guard=lambda x: 2.0 + 0.0 * x[0], guard_gradient=lambda x: np.zeros(2),
                      reset=lambda x: x, reset_jacobian=lambda x: np.eye(2),
                      section_normal=[1.0, 0.0], basis=[[0.0], [1.0]])
    with pytest.raises(ValueError, match=r"variational_stride: x0: expected a state from which "
                                         r"the motion reaches the guard, got no crossing of the "
                                         r"guard within 20000 evaluations"):
        walking.variational_stride(x0=[1.0, 0.0], t_max=1e6, tol=1e-10, **oscillator)
