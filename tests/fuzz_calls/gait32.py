"""One valid call of each public callable of robodyn.stability (issue 32), for the API fuzzer."""
import functools

import numpy as np

from robodyn.walkers import CompassGait, RimlessWheel, rr_points

Z = [-0.2186688, 1.0923836, 0.3773740]
WHEEL = RimlessWheel(spokes=10, slope=0.2)


@functools.lru_cache(maxsize=1)       # a Gait is immutable: found once per session
def _gait():
    from robodyn.stability import compass_gait_gait
    return compass_gait_gait(CompassGait())


def _stride_pieces():
    from robodyn.stability import _wheel_pieces
    return _wheel_pieces(WHEEL)


CALLS = {
    "robodyn.stability.saltation_matrix": lambda: (
        ([[1.0, 0.0], [0.0, -0.5]], [-2.0, -10.0], [1.0, -10.0], [1.0, 0.0]), {}),
    "robodyn.stability.floquet_multipliers": lambda: (([[0.5, 1.0], [0.0, -0.9]],), {}),
    "robodyn.stability.jacobian_fd": lambda: ((np.sin, [0.3, 0.4]), {"h": 1e-6}),
    "robodyn.stability.variational_stride": lambda: (
        (), dict(x0=[WHEEL.slope - WHEEL.alpha, WHEEL.closed_form_fixed_point()],
                 t_max=5.0, tol=1e-10, **_stride_pieces())),
    "robodyn.stability.rimless_wheel_multiplier": lambda: ((WHEEL,), {}),
    "robodyn.stability.rimless_wheel_jacobian": lambda: ((WHEEL, 2.5), {"method": "saltation"}),
    "robodyn.stability.rimless_wheel_basin": lambda: ((WHEEL, [0.0, 0.1], [0.5, 1.0]),
                                                      {"method": "closed form", "events": 40}),
    "robodyn.stability.walk": lambda: ((CompassGait(), Z, 2), {"tol": 1e-10, "t_max": 5.0}),
    "robodyn.stability.compass_gait_step": lambda: ((CompassGait(), Z), {"tol": 1e-11}),
    "robodyn.stability.compass_gait_variational": lambda: ((CompassGait(), Z), {"tol": 1e-10}),
    "robodyn.stability.compass_gait_jacobian": lambda: ((CompassGait(), Z),
                                                        {"method": "fd", "tol": 1e-11}),
    "robodyn.stability.compass_gait_gait": lambda: ((CompassGait(), Z),
                                                    {"period": 1, "tol": 1e-10, "max_iter": 10}),
    "robodyn.stability.sweep": lambda: ((rr_points, [[0.1, 0.2], [0.3, -0.4]]),
                                        {"keys": ["a", "b"], "workers": 1}),  # func's domain
    "robodyn.stability.bifurcation_diagram": lambda: (
        (CompassGait(), [0.05]), {"z0": Z, "transient": 5, "keep": 2, "tol": 1e-10,
                                  "workers": 1}),
    "robodyn.stability.basin_of_attraction": lambda: (
        (CompassGait(), [-0.22], [1.0, 1.1]), {"swing_rate": 0.38, "strides": 5, "gait": _gait(),
                                               "tol": 1e-9, "radius": 1e-3, "workers": 1}),
}
