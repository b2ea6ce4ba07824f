r"""Kane's method (Part V of the book): partial velocities, generalized active and inertia
forces, constraints in the speeds, linearization of any method's equations, and a flexible
link by assumed modes.

Its rooms (private modules, named by concept; import from here):

* ``_method`` -- Kane's method: partial velocities, Fr, Fr*, equations of motion
* ``_nested`` -- the nested (recursive) form of Kane's terms for long chains
* ``_trees`` -- Kane's method on a kinematic tree (a robot from a URDF, fixed or floating base)
* ``_flexible`` -- a flexible link by assumed modes
"""

from ._method import (Particle, RigidBody, Force, Torque, KaneEquations, kanes_equations,
                      ChainEquations, TreeEquations, equations_of_motion, change_speeds,
                      Linearization, linearize, DEFAULT_GRAVITY)
from ._flexible import (clamped_free_roots, pinned_free_roots, mode_shape, FlexibleLink,
                        flexible_link, natural_frequencies, spin_eigenvalues, spin_up_profile,
                        HubRun, simulate_hub)

__all__ = ["Particle", "RigidBody", "Force", "Torque", "KaneEquations", "kanes_equations",
           "ChainEquations", "TreeEquations", "equations_of_motion", "change_speeds",
           "Linearization", "linearize", "DEFAULT_GRAVITY", "clamped_free_roots",
           "pinned_free_roots", "mode_shape", "FlexibleLink", "flexible_link",
           "natural_frequencies", "spin_eigenvalues", "spin_up_profile", "HubRun",
           "simulate_hub"]

from .._boundary import seal as _seal  # noqa: E402 -- the one boundary: last, over the finished module
_seal(globals())
