"""One valid call of each public callable of robodyn.walking (issue 32), for the API fuzzer."""
import functools

import numpy as np

from robodyn.walking import CompassGait, RimlessWheel, rr_points

Z = [-0.2186688, 1.0923836, 0.3773740]
WHEEL = RimlessWheel(spokes=10, slope=0.2)


@functools.lru_cache(maxsize=1)       # a Gait is immutable: found once per session
def _gait():
    from robodyn.walking import compass_gait_gait
    return compass_gait_gait(CompassGait())


def _stride_pieces():
    from robodyn.walking._stability import _wheel_pieces
    return _wheel_pieces(WHEEL)


CALLS = {
    "robodyn.walking.saltation_matrix": lambda: (
        ([[1.0, 0.0], [0.0, -0.5]], [-2.0, -10.0], [1.0, -10.0], [1.0, 0.0]), {}),
    "robodyn.walking.floquet_multipliers": lambda: (([[0.5, 1.0], [0.0, -0.9]],), {}),
    "robodyn.walking.jacobian_fd": lambda: ((np.sin, [0.3, 0.4]), {"h": 1e-6}),
    "robodyn.walking.variational_stride": lambda: (
        (), dict(x0=[WHEEL.slope - WHEEL.alpha, WHEEL.closed_form_fixed_point()],
                 t_max=5.0, tol=1e-10, **_stride_pieces())),
    "robodyn.walking.rimless_wheel_multiplier": lambda: ((WHEEL,), {}),
    "robodyn.walking.rimless_wheel_jacobian": lambda: ((WHEEL, 2.5), {"method": "saltation"}),
    "robodyn.walking.rimless_wheel_basin": lambda: ((WHEEL, [0.0, 0.1], [0.5, 1.0]),
                                                      {"method": "closed form", "events": 40}),
    "robodyn.walking.walk": lambda: ((CompassGait(), Z, 2), {"tol": 1e-10, "t_max": 5.0}),
    "robodyn.walking.compass_gait_step": lambda: ((CompassGait(), Z), {"tol": 1e-11}),
    "robodyn.walking.compass_gait_variational": lambda: ((CompassGait(), Z), {"tol": 1e-10}),
    "robodyn.walking.compass_gait_jacobian": lambda: ((CompassGait(), Z),
                                                        {"method": "fd", "tol": 1e-11}),
    "robodyn.walking.compass_gait_gait": lambda: ((CompassGait(), Z),
                                                    {"period": 1, "tol": 1e-10, "max_iter": 10}),
    "robodyn.walking.sweep": lambda: ((rr_points, [[0.1, 0.2], [0.3, -0.4]]),
                                        {"keys": ["a", "b"], "workers": 1}),  # func's domain
    "robodyn.walking.bifurcation_diagram": lambda: (
        (CompassGait(), [0.05]), {"z0": Z, "transient": 5, "keep": 2, "tol": 1e-10,
                                  "workers": 1}),
    "robodyn.walking.basin_of_attraction": lambda: (
        (CompassGait(), [-0.22], [1.0, 1.1]), {"swing_rate": 0.38, "strides": 5, "gait": _gait(),
                                               "tol": 1e-9, "radius": 1e-3, "workers": 1}),
}
