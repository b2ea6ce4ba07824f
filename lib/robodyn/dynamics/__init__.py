r"""Numeric rigid-body dynamics of serial chains (Part II of the book): the O(n) recursive
algorithms -- RNEA, ABA, CRBA, the numeric Coriolis matrix, gravity torques and energy -- in
numpy and in the compiled engine, and the simulation of a chain with its energy balance.

Its rooms (private modules, named by concept; import from here):

* ``_recursions`` -- the Newton--Euler, articulated-body and composite-rigid-body recursions
  in the ground frame, for one state or a batch; the loader of the compiled engine
  (``_engine.c``; the C sources of all engines stay together in ``robodyn/``, listed as the
  package data of ``lib/pyproject.toml``). ``robodyn.dynamics._recursions.ENGINE`` chooses C or
  numpy
* ``_simulation`` -- integrating the equations of motion with the work of the joint forces, the
  energy balance as the measure of the integration error

This package is numeric; the symbolic equations of the same chains are
:mod:`robodyn.lagrange` (``robodyn.dynamics.coriolis_matrix`` is the numeric O(n) Coriolis
matrix, ``robodyn.lagrange.coriolis_matrix`` the symbolic one). The analytic derivatives of
these recursions, :mod:`robodyn.derivatives`, stay a module of their own above this package and
:mod:`robodyn.port_hamiltonian`: they differentiate the serial chain's recursions and the
vehicle--manipulator's alike, and the port-Hamiltonian package stands on this one.
"""

from ._recursions import (DEFAULT_GRAVITY, IllConditionedWarning, coriolis_matrix, crba,
                          forward_dynamics, gravity_torques, inverse_dynamics, mechanical_energy,
                          newton_euler_about_point)
from ._simulation import Trajectory, simulate

__all__ = ["DEFAULT_GRAVITY", "IllConditionedWarning", "coriolis_matrix", "crba",
           "forward_dynamics", "gravity_torques", "inverse_dynamics", "mechanical_energy",
           "newton_euler_about_point", "Trajectory", "simulate"]

from .._boundary import seal as _seal  # noqa: E402 -- the one boundary: last, over the finished module
_seal(globals())
