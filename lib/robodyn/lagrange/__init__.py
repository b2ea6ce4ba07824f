r"""Lagrangian dynamics (Part II of the book): the equations of motion of a serial chain derived
symbolically from its Lagrangian -- mass matrix, Christoffel symbols, Coriolis matrix, gravity,
generalized forces -- and the geometric view of them: the kinetic-energy metric, its
Levi-Civita connection, geodesics.

Its rooms (private modules, named by concept; import from here):

* ``_euler_lagrange`` -- M, C, G, the Christoffel symbols and the generalized forces of a chain,
  the Euler--Lagrange equations (5.10)-(5.14) and their numeric twins
* ``_derivation`` -- the symbolic derivation engine behind them: the composite-rigid-body
  recursion on trigonometric polynomials, plain or nested, and its C source. Kane's method
  (:mod:`robodyn.kane`) derives its equations on the same engine and imports this room; it
  lives here, not on the ground floor, because it writes its intermediates through
  :mod:`robodyn.codegen`, a room above the ground floor
* ``_geometry`` -- the kinetic-energy metric, the Levi-Civita connection (5.16)-(5.17),
  geodesics and the energy integral

The numeric O(n) algorithms (RNEA, ABA, CRBA, the numeric Coriolis matrix) are a package of
their own, :mod:`robodyn.dynamics`: ``robodyn.lagrange.coriolis_matrix`` is the symbolic
Christoffel Coriolis matrix, ``robodyn.dynamics.coriolis_matrix`` its numeric O(n) twin, and the
top-level ``robodyn.coriolis_matrix`` is this package's.
"""

from ._euler_lagrange import (DEFAULT_GRAVITY, EquationsOfMotion, NumericEquations,
                              christoffel_symbols, coriolis_matrix, equations_of_motion,
                              euler_lagrange, generalized_forces, gravity_vector, kinetic_energy,
                              mass_matrix, potential_energy)
from ._geometry import (Geodesic, JointPath, covariant_acceleration, energy_integral, geodesic,
                        geodesic_acceleration, gradient, kinetic_energy_metric, levi_civita,
                        metric_inner_product, perturbed_path, potential_gradient, straight_line)

__all__ = ["DEFAULT_GRAVITY", "EquationsOfMotion", "NumericEquations", "christoffel_symbols",
           "coriolis_matrix", "equations_of_motion", "euler_lagrange", "generalized_forces",
           "gravity_vector", "kinetic_energy", "mass_matrix", "potential_energy",
           "Geodesic", "JointPath", "covariant_acceleration", "energy_integral", "geodesic",
           "geodesic_acceleration", "gradient", "kinetic_energy_metric", "levi_civita",
           "metric_inner_product", "perturbed_path", "potential_gradient", "straight_line"]

from .._boundary import seal as _seal  # noqa: E402 -- the one boundary: last, over the finished module
_seal(globals())
