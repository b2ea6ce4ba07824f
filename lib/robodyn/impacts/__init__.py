r"""Impacts and contact (Part IV of the book): the impact map, hybrid simulation with event
location, return maps and their fixed points; impacts at many contacts with restitution and
Coulomb friction, the LCP solvers, Moreau--Jean time stepping and the contact models.

Its rooms (private modules, named by concept; import from here):

* ``_hybrid`` -- the impact map, hybrid systems, their simulation and return maps
* ``_segments`` -- one smooth segment of a hybrid motion: integration to the next event, contact modes
* ``_contact`` -- impacts at many contacts with restitution and Coulomb friction
* ``_lcp`` -- linear complementarity: Lemke and projected Gauss--Seidel
* ``_timestepping`` -- Moreau--Jean time stepping
* ``_contact_models`` -- the book's contact models: rod, spinning ball, block
"""

from ._hybrid import (ImpactResult, impact_map, Surface, HybridSystem, ImpactEvent,
                      HybridTrajectory, simulate_hybrid, StepResult, return_map, FixedPoint,
                      fixed_point)
from ._contact import (ContactResult, contact_impulse, MAX_MODES, LimitReached)
from ._lcp import (lemke, MAX_PIVOTS, MAX_SWEEPS)
from ._timestepping import (TimeSteppingResult, moreau_jean)
from ._contact_models import (rod, ball, block, ball_impact_closed_form, block_stopping,
                              rod_flat_impact, cradle_simultaneous, cradle_sequential,
                              cradle_hertz, hertz_damping, MAX_BALLS)

__all__ = ["ImpactResult", "impact_map", "Surface", "HybridSystem", "ImpactEvent",
           "HybridTrajectory", "simulate_hybrid", "StepResult", "return_map", "FixedPoint",
           "fixed_point", "ContactResult", "contact_impulse", "MAX_MODES", "LimitReached",
           "lemke", "MAX_PIVOTS", "MAX_SWEEPS", "TimeSteppingResult", "moreau_jean", "rod",
           "ball", "block", "ball_impact_closed_form", "block_stopping", "rod_flat_impact",
           "cradle_simultaneous", "cradle_sequential", "cradle_hertz", "hertz_damping",
           "MAX_BALLS"]

from .._boundary import seal as _seal  # noqa: E402 -- the one boundary: last, over the finished module
_seal(globals())
