r"""Constrained systems (Part III of the book): holonomic and Pfaffian constraints, their
second-order form, integrability, Lagrange multipliers, embedding, the constraint projector
and connection, the Udwadia--Kalaba equation, and their simulation.

Its rooms (private modules, named by concept; import from here):

* ``_systems`` -- constraints, constrained systems and the four classic ways to solve them
* ``_numeric`` -- the numeric twin of a set of constraints (values, Jacobians, rates at a state)
* ``_simulation`` -- simulation with drift stabilization, tracking by a path as a constraint
* ``_integrability`` -- Frobenius' test: which Pfaffian constraints are holonomic
"""

from ._systems import (ConstraintWarning, Constraints, second_order_form, MultiplierSolution,
                       ConstrainedMotion, lagrange_multipliers, udwadia_kalaba, moore_penrose,
                       penrose_conditions, constraint_projector, constraint_connection,
                       lagrangian_equations, ConstrainedSystem, multiplier_equations,
                       embedded_equations, projected_equations, METHODS)
from ._simulation import (ConstrainedTrajectory, simulate_constrained, constraint_controller)
from ._integrability import (Integrability, is_holonomic)

__all__ = ["ConstraintWarning", "Constraints", "second_order_form", "MultiplierSolution",
           "ConstrainedMotion", "lagrange_multipliers", "udwadia_kalaba", "moore_penrose",
           "penrose_conditions", "constraint_projector", "constraint_connection",
           "lagrangian_equations", "ConstrainedSystem", "multiplier_equations",
           "embedded_equations", "projected_equations", "METHODS", "ConstrainedTrajectory",
           "simulate_constrained", "constraint_controller", "Integrability", "is_holonomic"]

from .._boundary import seal as _seal  # noqa: E402 -- the one boundary: last, over the finished module
_seal(globals())
