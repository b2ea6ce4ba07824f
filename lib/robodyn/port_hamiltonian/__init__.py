r"""Port-Hamiltonian dynamics (Part VI of the book): rigid bodies on SE(3), joints as
subgroups, vehicle--manipulator systems and their port-Hamiltonian and reduced forms.

Its rooms (private modules, named by concept; import from here):

* ``_vehicle`` -- rigid bodies on SE(3), joints as subgroups, vehicle--manipulator systems
* ``_rigid_body`` -- one rigid body on SE(3): its pose, twist and step
* ``_forms`` -- port-Hamiltonian forms of fixed-base and moving-base systems, their simulation
* ``_vms_forms`` -- the vehicle--manipulator forms: decoupled, reduced Euler--Lagrange, Boltzmann--Hamel
* ``_arguments`` -- the arguments the forms share (poses, velocities, signs), checked once
"""

from ._vehicle import (Subgroup, SUBGROUPS, coadjoint, euler_poincare, dexp_inverse,
                       rigid_body_step, check_pose, pose_error, VehicleManipulator,
                       StandardForm, PlanarCoordinates, planar_virtual_chain, mechanical_energy)
from ._forms import (canonical_matrix, FixedBaseForm, BaseForm, VMSForm, DecoupledForm,
                     ReducedEulerLagrange, BoltzmannHamel, cayley_motion, energy_momentum_step,
                     simulate, PHTrajectory, ConvergenceWarning)

__all__ = ["Subgroup", "SUBGROUPS", "coadjoint", "euler_poincare", "dexp_inverse",
           "rigid_body_step", "check_pose", "pose_error", "VehicleManipulator", "StandardForm",
           "PlanarCoordinates", "planar_virtual_chain", "mechanical_energy", "canonical_matrix",
           "FixedBaseForm", "BaseForm", "VMSForm", "DecoupledForm", "ReducedEulerLagrange",
           "BoltzmannHamel", "cayley_motion", "energy_momentum_step", "simulate",
           "PHTrajectory", "ConvergenceWarning"]

from .._boundary import seal as _seal  # noqa: E402 -- the one boundary: last, over the finished module
_seal(globals())
