r"""Walking (Part IV of the book): the walkers -- bouncing ball, pendulum and RR arm against a
wall, rimless wheel, compass-gait walker -- and their gaits' stability and basins.

Its rooms (private modules, named by concept; import from here):

* ``_walkers`` -- the walkers as hybrid systems
* ``_stability`` -- fixed points, Floquet multipliers, basins and sweeps of gaits
* ``_gait_kernel`` -- the compiled step map of the compass gait
"""

from ._walkers import (bouncing_ball, ball_zeno_time, pendulum_against_wall,
                       rr_arm_against_wall, rr_points, RimlessWheel, CompassGait)
from ._stability import (saltation_matrix, floquet_multipliers, jacobian_fd, variational_stride,
                         rimless_wheel_multiplier, rimless_wheel_jacobian, rimless_wheel_basin,
                         walk, compass_gait_step, compass_gait_variational,
                         compass_gait_jacobian, compass_gait_gait, sweep, bifurcation_diagram,
                         basin_of_attraction)

__all__ = ["bouncing_ball", "ball_zeno_time", "pendulum_against_wall", "rr_arm_against_wall",
           "rr_points", "RimlessWheel", "CompassGait", "saltation_matrix",
           "floquet_multipliers", "jacobian_fd", "variational_stride",
           "rimless_wheel_multiplier", "rimless_wheel_jacobian", "rimless_wheel_basin", "walk",
           "compass_gait_step", "compass_gait_variational", "compass_gait_jacobian",
           "compass_gait_gait", "sweep", "bifurcation_diagram", "basin_of_attraction"]

from .._boundary import seal as _seal  # noqa: E402 -- the one boundary: last, over the finished module
_seal(globals())
