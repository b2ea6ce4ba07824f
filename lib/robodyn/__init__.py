"""robodyn: the library behind the textbook *Robot Dynamics, Interactively*.

One package per part of the book, each with one public face (its ``__all__``; the modules
inside it whose names start with ``_`` are its rooms, named by concept); the names below are
the public API.

* :mod:`robodyn.rigid_motion` -- rotations, screws, twists and wrenches, serial chains,
  spatial inertias (Part I)
* :mod:`robodyn.models` -- the book's robots and example systems, one home for each
* :mod:`robodyn.equations` -- the one interface of every method's equations of motion
  (mass matrix, forcing, numeric right-hand side) and :func:`~robodyn.equations.max_difference` to compare them
* :mod:`robodyn.lagrange` -- symbolic Lagrangian dynamics: M, C, G, Christoffel symbols,
  generalized forces; the kinetic-energy metric, Levi-Civita connection, geodesics (Part II)
* :mod:`robodyn.codegen` -- compiled (C) numeric twins of symbolic equations of motion;
  :mod:`robodyn.recursive_codegen` -- a robot's forward and inverse dynamics as generated C
  (the articulated-body and Newton--Euler recursions written out for it)
* :mod:`robodyn.dynamics` -- numeric O(n) algorithms: RNEA, ABA, CRBA, Coriolis matrix;
  simulation with energy and step-size reports (Part II);
  :mod:`robodyn.derivatives` -- their analytic derivatives and the linearization at a state
* :mod:`robodyn.constraints` -- constrained systems: holonomic and Pfaffian constraints, their
  second-order form, integrability, Lagrange multipliers, embedding, the constraint projector
  and connection, the Udwadia--Kalaba equation, their simulation with drift stabilization and
  tracking by a path as a constraint (Part III)
* :mod:`robodyn.impacts` -- the impact map (5.28)-(5.31), hybrid simulation with event
  location and a Zeno guard, return maps and their fixed points; impacts at many contacts with
  restitution and Coulomb friction per contact, the LCP solvers, Moreau--Jean time stepping,
  the contact models: rod, spinning ball, block (Part IV)
* :mod:`robodyn.walking` -- the walkers: bouncing ball, pendulum and RR arm against a wall,
  rimless wheel, compass-gait walker; their gaits' stability and basins (Part IV)
* :mod:`robodyn.kane` -- Kane's method: partial velocities, generalized active and inertia
  forces, constraints in the speeds, linearization of any method's equations, a flexible link
  by assumed modes (Part V)
* :mod:`robodyn.port_hamiltonian` -- rigid bodies on SE(3), joints as subgroups,
  vehicle--manipulator systems and their port-Hamiltonian forms (Part VI)
* :mod:`robodyn.urdf`, :mod:`robodyn.trees` -- real robots from URDF (example-robot-data):
  kinematic trees, their O(n) dynamics and derivatives, fixed or floating base
* :mod:`robodyn.viz` -- figures, interactive figures and animations (the only module that
  imports matplotlib and ipywidgets; import it explicitly)
* :mod:`robodyn.parallel` -- one function over many independent items (sweeps, grading): local
  processes or a Dask cluster, with resume from a cache and retries of dead workers
* :mod:`robodyn.errors` -- the errors every function raises: catch :class:`~robodyn.errors.RobodynError`
  (:class:`~robodyn.errors.ArgumentError`, :class:`~robodyn.errors.ResultError` are also ``ValueError``,
  :class:`~robodyn.errors.ArgumentTypeError` a ``TypeError``); ``with robodyn.checks(False): ...`` skips the
  checks of each public call in a hot loop
* :mod:`robodyn.answers` -- forgiving answer checking for the problem sets (Assignments);
  :mod:`robodyn.grading` generates their student notebooks and grades submissions (import it
  explicitly; it needs nbformat and IPython)

Beside the packages, a few modules stay whole at the top, each one concept that several parts
share: :mod:`~robodyn.equations` (the one interface), :mod:`~robodyn.symbolic` (the pure-Python
operators of the browser pages), :mod:`~robodyn.models`, :mod:`~robodyn.derivatives` (it
differentiates the serial chain's recursions of :mod:`robodyn.dynamics` and the
vehicle--manipulator's of :mod:`robodyn.port_hamiltonian`, which stands on
:mod:`robodyn.dynamics`: inside that package it would close a circle), :mod:`~robodyn.urdf`
(reading a robot description) and :mod:`~robodyn.trees` (the algorithms on the tree it
gives), :mod:`~robodyn.codegen` and :mod:`~robodyn.recursive_codegen` (C from symbolic
equations; C from a robot's recursions). The C sources of the compiled engines (``_engine.c``,
``_tree_engine.c``, ``_pgs.c``) sit together in this folder, read by the one loader of
:mod:`robodyn.dynamics`. The ground floor -- :mod:`~robodyn.errors`, ``_value_checks`` (what a
value is: numbers, arrays, text, symbols, finiteness), ``_meaning_checks`` (what it means:
rotations, axes, inertias, metrics, decided under the symbols' assumptions), :mod:`~robodyn.kinds`,
``_boundary`` -- imports nothing of the rooms above it.
"""
import os as _os

from .errors import ArgumentError, ArgumentTypeError, ResultError, RobodynError
from ._boundary import checks, checks_enabled

from .rigid_motion import (SerialChain, ad, adjoint, exp_se3, exp_so3, fk_body, fk_space, hat,
                           homogeneous, inverse_homogeneous, is_rotation, jacobian_body,
                           jacobian_space, link_poses, log_se3, log_so3, prismatic_screw,
                           revolute_screw, rotation, spatial_inertia, transform_twist,
                           transform_wrench, vee)
from . import models
from . import codegen, dynamics, equations, lagrange
from . import answers
from .equations import MassMatrixForm, NumericForm, mass_matrix_form, max_difference
from .dynamics import (crba, forward_dynamics, gravity_torques, inverse_dynamics,
                       mechanical_energy)
from .lagrange import (DEFAULT_GRAVITY, christoffel_symbols, coriolis_matrix,
                       equations_of_motion, euler_lagrange,
                       NumericEquations, generalized_forces, gravity_vector,
                       kinetic_energy, mass_matrix, potential_energy)
from .dynamics import Trajectory, simulate
from . import impacts, walking
from .impacts import impact_map
from . import constraints
from .constraints import (ConstrainedSystem, Constraints, ConstraintWarning, constraint_connection,
                          constraint_projector, embedded_equations, is_holonomic,
                          lagrange_multipliers, moore_penrose, multiplier_equations,
                          penrose_conditions, projected_equations, second_order_form,
                          simulate_constrained, udwadia_kalaba)
from . import port_hamiltonian
from . import derivatives
from . import trees, urdf
from .port_hamiltonian import VehicleManipulator
from . import kane
from . import parallel
from .kane import linearize

__version__ = "0.1.0"


def quick_mode() -> bool:
    """True when notebooks run as tests (``ROBODYN_QUICK=1``): long demos shorten themselves.

    >>> isinstance(quick_mode(), bool)
    True
    """
    return _os.environ.get("ROBODYN_QUICK", "") not in ("", "0")
